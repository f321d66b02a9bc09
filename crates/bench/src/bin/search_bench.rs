//! The search benchmark's measuring side (issue 45): the same searches answered by the bare
//! engine in this process and by careers-api over HTTP, interleaved, one at a time, on a
//! database filled by `jobs_gen` that the service under `--addr` also reads. Prints one JSON
//! line: per search and for the mix, the median and p99 of each side, and the matches.
//!
//! The bare engine is a search done the way a careful engineer writes it on that engine, with
//! none of the service's code: SQLite's FTS5 `MATCH` ranked by `bm25` with the title weighted
//! ten to one, PostgreSQL's `websearch_to_tsquery` on the GIN-indexed `search_vector` ranked by
//! `ts_rank` (the title's weight `A`); the page of 25 jobs with their companies, then the count
//! and each facet by `GROUP BY` over the match set (each facet under every filter but its own).
//!
//!     search_bench --database-url sqlite://data/bench.db --addr 127.0.0.1:3000 --rounds 30

use std::time::Instant;

use chrono::Utc;
use clap::Parser;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::{Request, header};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    database_url: String,
    /// PostgreSQL schema (search path).
    #[arg(long)]
    schema: Option<String>,
    /// careers-api's address, `127.0.0.1:3000`.
    #[arg(long)]
    addr: String,
    /// Measured rounds (each runs every search once on each side).
    #[arg(long, default_value_t = 30)]
    rounds: usize,
    #[arg(long, default_value_t = 3)]
    warmup: usize,
}

/// One search: `q` as a user types it (words, `"a phrase"`), and 0–2 filters.
struct Case {
    name: &'static str,
    q: &'static str,
    filters: &'static [(&'static str, &'static str)],
    /// In the mix (else: the rare-word searches, reported apart).
    mix: bool,
}

/// The mix of issue 45: a word found in 5–15 % of the jobs, two words, a phrase, a level plus
/// a word, each with 0–2 filters; and a word found in under 1 % of them.
const CASES: &[Case] = &[
    Case {
        name: "word",
        q: "observability",
        filters: &[],
        mix: true,
    },
    Case {
        name: "word+country",
        q: "observability",
        filters: &[("country_code", "DE")],
        mix: true,
    },
    Case {
        name: "two words+remote",
        q: "rust postgres",
        filters: &[("workplace_type", "remote")],
        mix: true,
    },
    Case {
        name: "two words+US+full_time",
        q: "rust postgres",
        filters: &[("country_code", "US"), ("employment_type", "full_time")],
        mix: true,
    },
    Case {
        name: "phrase",
        q: "\"senior backend\"",
        filters: &[],
        mix: true,
    },
    Case {
        name: "phrase+hybrid+GB",
        q: "\"senior backend\"",
        filters: &[("workplace_type", "hybrid"), ("country_code", "GB")],
        mix: true,
    },
    Case {
        name: "level+word",
        q: "lead observability",
        filters: &[],
        mix: true,
    },
    Case {
        name: "level+word+full_time",
        q: "lead observability",
        filters: &[("employment_type", "full_time")],
        mix: true,
    },
    Case {
        name: "rare word",
        q: "term2500",
        filters: &[],
        mix: false,
    },
    Case {
        name: "rare word+country",
        q: "term2500",
        filters: &[("country_code", "DE")],
        mix: false,
    },
];

const FACETS: [&str; 3] = ["workplace_type", "employment_type", "country_code"];

enum Pool {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

/// `AND column IN ('v')` for each filter but `except`'s (the values are this file's constants).
fn filters(case: &Case, except: Option<&str>) -> String {
    case.filters
        .iter()
        .filter(|(column, _)| Some(*column) != except)
        .map(|(column, value)| format!(" AND j.{column} IN ('{value}')"))
        .collect()
}

/// The bare engine's five statements on `pool` (either driver's): the page, the count, each
/// facet. `from` and `kept` are the engine's; `$1`/`?1` is the query text, `$2`/`?2` the time.
macro_rules! bare_search {
    ($pool:expr, $case:expr, $from:expr, $kept:expr, $rank:expr) => {{
        let (case, now) = ($case, Utc::now());
        let (from, kept) = ($from, $kept);
        let page = format!(
            "SELECT j.*, c.name, c.slug FROM {from} WHERE {kept}{} ORDER BY {} LIMIT 25",
            filters(case, None),
            $rank
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(page))
            .bind(case.q)
            .bind(now)
            .fetch_all($pool)
            .await
            .expect("page");
        assert!(rows.len() <= 25);
        let count = format!(
            "SELECT COUNT(*) FROM {from} WHERE {kept}{}",
            filters(case, None)
        );
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(count))
            .bind(case.q)
            .bind(now)
            .fetch_one($pool)
            .await
            .expect("count");
        for facet in FACETS {
            let sql = format!(
                "SELECT j.{facet}, COUNT(*) FROM {from} WHERE {kept}{} GROUP BY j.{facet}",
                filters(case, Some(facet))
            );
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(case.q)
                .bind(now)
                .fetch_all($pool)
                .await
                .expect("facet");
        }
        total
    }};
}

impl Pool {
    /// The bare engine's search: the page, the count, the three facets. Answers the count.
    async fn search(&self, case: &Case) -> i64 {
        match self {
            Pool::Sqlite(pool) => bare_search!(
                pool,
                case,
                "careers_jobs_fts CROSS JOIN careers_jobs j ON j.id = careers_jobs_fts.rowid \
                 JOIN org_companies c ON c.id = j.company_id",
                "careers_jobs_fts MATCH ?1 AND j.status = 'open' AND c.suspended_at IS NULL \
                 AND (j.valid_through IS NULL OR j.valid_through > ?2)",
                "bm25(careers_jobs_fts, 10.0, 1.0, 1.0)"
            ),
            Pool::Postgres(pool) => bare_search!(
                pool,
                case,
                "careers_jobs j JOIN org_companies c ON c.id = j.company_id, \
                 websearch_to_tsquery('simple', $1) query",
                "j.search_vector @@ query AND j.status = 'open' AND c.suspended_at IS NULL \
                 AND (j.valid_through IS NULL OR j.valid_through > $2)",
                "ts_rank(j.search_vector, query) DESC"
            ),
        }
    }
}

/// The search's path on careers-api's marketplace (25 a page, as the bare engine's).
fn path(case: &Case) -> String {
    let mut query = url_encode(case.q);
    query.insert_str(0, "q=");
    for (column, value) in case.filters {
        query.push_str(&format!("&{column}={value}"));
    }
    format!("/marketplace/careers/jobs?{query}&per_page=25")
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

async fn connect(addr: &str) -> Sender {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("careers-api");
    stream.set_nodelay(true).unwrap();
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    sender
}

/// careers-api's answer to the search, read whole; answers `meta.total`.
async fn over_http(sender: &mut Sender, addr: &str, case: &Case) -> i64 {
    let request = Request::get(path(case))
        .header(header::HOST, addr)
        .header(header::ACCEPT, "application/json")
        .body(Empty::new())
        .unwrap();
    let response = sender.send_request(request).await.expect("request");
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    assert!(
        status.is_success(),
        "{status}: {}",
        String::from_utf8_lossy(&body)
    );
    let body: Value = serde_json::from_slice(&body).expect("JSON");
    body["meta"]["total"].as_i64().expect("total")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(mut ms: Vec<f64>) -> Value {
    ms.sort_by(f64::total_cmp);
    json!({"p50_ms": percentile(&ms, 0.5), "p99_ms": percentile(&ms, 0.99)})
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    let pool = if args.database_url.starts_with("sqlite:") {
        Pool::Sqlite(
            sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(1)
                .connect(&args.database_url)
                .await
                .expect("SQLite"),
        )
    } else {
        Pool::Postgres(bench::postgres_pool(&args.database_url, args.schema.clone()).await)
    };
    let mut sender = connect(&args.addr).await;
    let mut bare: Vec<Vec<f64>> = vec![Vec::new(); CASES.len()];
    let mut api: Vec<Vec<f64>> = vec![Vec::new(); CASES.len()];
    let mut totals = vec![(0i64, 0i64); CASES.len()];
    for round in 0..args.warmup + args.rounds {
        for (i, case) in CASES.iter().enumerate() {
            // Interleaved, each side first in every other round.
            for side in [round % 2, 1 - round % 2] {
                let start = Instant::now();
                if side == 0 {
                    totals[i].0 = pool.search(case).await;
                } else {
                    totals[i].1 = over_http(&mut sender, &args.addr, case).await;
                }
                let ms = start.elapsed().as_secs_f64() * 1000.0;
                if round >= args.warmup {
                    if side == 0 { &mut bare[i] } else { &mut api[i] }.push(ms);
                }
            }
        }
    }
    let mut searches = Vec::new();
    let (mut mix_bare, mut mix_api, mut rare_bare, mut rare_api) = (vec![], vec![], vec![], vec![]);
    for (i, case) in CASES.iter().enumerate() {
        searches.push(json!({
            "name": case.name,
            "path": path(case),
            "matches": totals[i].1,
            "bare_matches": totals[i].0,
            "bare": summary(bare[i].clone()),
            "api": summary(api[i].clone()),
        }));
        let (b, a) = if case.mix {
            (&mut mix_bare, &mut mix_api)
        } else {
            (&mut rare_bare, &mut rare_api)
        };
        b.extend(&bare[i]);
        a.extend(&api[i]);
    }
    let mix = json!({"bare": summary(mix_bare), "api": summary(mix_api)});
    let rare = json!({"bare": summary(rare_bare), "api": summary(rare_api)});
    println!(
        "{}",
        json!({"searches": searches, "mix": mix, "rare": rare})
    );
}
