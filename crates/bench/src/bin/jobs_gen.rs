//! The search benchmark's data (issue 45): N jobs over N/100 companies, with a realistic
//! vocabulary (titles of a level, a field and a role; descriptions of words drawn with a skewed,
//! Zipf-like frequency), places, types and salaries, reproducible by `--seed`. It writes through
//! SQL into a database the service has migrated (`careers-api migrate`), computing each job's
//! search text with the service's own folding, so the FTS5 table (by its triggers) and the
//! `tsvector` (generated) index it as the service would.
//!
//!     jobs_gen --database-url sqlite://data/bench.db --jobs 100000 --seed 7
//!
//! With the seed fixed, the same jobs come out in the same order, so a search's matches (a word
//! found in 5–15 % of the jobs, a rare one under 1 %) are the same in every run.

use careers_api::forms::fold_text;
use careers_api::models::careers::job::search_text;
use chrono::{Duration, Utc};
use clap::Parser;
use sqlx::SqlitePool;

#[derive(Parser)]
struct Args {
    #[arg(long)]
    database_url: String,
    /// PostgreSQL schema (search path).
    #[arg(long)]
    schema: Option<String>,
    #[arg(long)]
    jobs: u64,
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

/// SplitMix64: a small, fast generator whose sequence is fixed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const LEVELS: &[&str] = &[
    "Junior",
    "",
    "",
    "Senior",
    "Senior",
    "Lead",
    "Staff",
    "Principal",
];
const FIELDS: &[&str] = &[
    "Backend",
    "Frontend",
    "Data",
    "Platform",
    "Mobile",
    "Cloud",
    "Security",
    "Product",
    "Machine Learning",
    "Site Reliability",
    "Embedded",
    "QA",
    "Sales",
    "Marketing",
    "Finance",
];
const ROLES: &[&str] = &[
    "Engineer",
    "Developer",
    "Analyst",
    "Designer",
    "Manager",
    "Scientist",
    "Consultant",
    "Architect",
    "Specialist",
    "Administrator",
];
/// Description words, most common first (drawn Zipf-like).
const WORDS: &[&str] = &[
    "team",
    "work",
    "build",
    "customers",
    "product",
    "experience",
    "systems",
    "data",
    "services",
    "remote",
    "growth",
    "rust",
    "python",
    "cloud",
    "design",
    "code",
    "scale",
    "platform",
    "users",
    "quality",
    "java",
    "kubernetes",
    "typescript",
    "react",
    "postgres",
    "security",
    "mobile",
    "testing",
    "agile",
    "mentoring",
    "golang",
    "analytics",
    "infrastructure",
    "payments",
    "api",
    "linux",
    "aws",
    "docker",
    "terraform",
    "kafka",
    "redis",
    "graphql",
    "swift",
    "kotlin",
    "machine",
    "learning",
    "research",
    "compliance",
    "hiring",
    "marketplace",
    "logistics",
    "healthcare",
    "fintech",
    "energy",
    "climate",
    "education",
    "gaming",
    "robotics",
    "ocaml",
    "haskell",
    "elixir",
    "erlang",
    "scala",
    "clojure",
    "fortran",
    "cobol",
    "zig",
    "webassembly",
    "observability",
    "embedded",
    "firmware",
    "blockchain",
    "accessibility",
    "localisation",
];
const COUNTRIES: &[&str] = &[
    "DE", "DE", "DE", "FR", "NL", "GB", "GB", "US", "US", "US", "ES", "PL", "SE", "CH",
];
const WORKPLACES: &[&str] = &["on_site", "on_site", "hybrid", "hybrid", "remote"];
const EMPLOYMENT: &[&str] = &[
    "full_time",
    "full_time",
    "full_time",
    "full_time",
    "part_time",
    "contractor",
    "temporary",
    "intern",
];
const COMPANY_WORDS: &[&str] = &[
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark",
    "Wayne",
    "Tyrell",
    "Soylent",
    "Cyberdyne",
    "Wonka",
    "Aperture",
    "Vandelay",
    "Pied Piper",
    "Dunder",
    "Oscorp",
];

/// One generated job's columns.
struct Job {
    company: i64,
    company_name: String,
    title: String,
    description: String,
    department: String,
    status: &'static str,
    workplace: &'static str,
    employment: &'static str,
    country: Option<&'static str>,
    salary: Option<(i64, i64, &'static str)>,
    published_minutes_ago: i64,
}

/// The generator's skewed draws.
struct Draws {
    fields: Zipf,
    roles: Zipf,
    words: Zipf,
    vocabulary: Vec<String>,
}

fn job(rng: &mut Rng, draws: &Draws, companies: &[String]) -> Job {
    let company = rng.below(companies.len());
    let level = rng.pick(LEVELS);
    let field = FIELDS[draws.fields.draw(rng)];
    let role = ROLES[draws.roles.draw(rng)];
    let title = [level, field, role]
        .iter()
        .filter(|w| !w.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let length = 40 + rng.below(40);
    let description = (0..length)
        .map(|_| draws.vocabulary[draws.words.draw(rng)].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let workplace = rng.pick(WORKPLACES);
    let country = (workplace != "remote" || rng.below(2) == 0).then(|| rng.pick(COUNTRIES));
    let salary = (rng.below(4) != 0).then(|| {
        let min = 30_000 + 5_000 * rng.below(20) as i64;
        let currency = if country == Some("US") { "USD" } else { "EUR" };
        (min, min + 10_000 + 5_000 * rng.below(6) as i64, currency)
    });
    Job {
        company: company as i64,
        company_name: companies[company].clone(),
        title,
        description,
        department: field.to_owned(),
        status: if rng.below(10) == 0 { "closed" } else { "open" },
        workplace,
        employment: rng.pick(EMPLOYMENT),
        country,
        salary,
        published_minutes_ago: rng.below(90 * 24 * 60) as i64,
    }
}

/// Indexes drawn with Zipf-like weights 1/(k+1): the first are common, the last rare.
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: usize) -> Self {
        let mut total = 0.0;
        Self(
            (1..=n)
                .map(|k| {
                    total += 1.0 / k as f64;
                    total
                })
                .collect(),
        )
    }

    fn draw(&self, rng: &mut Rng) -> usize {
        let total = self.0.last().copied().unwrap_or(0.0);
        let x = (rng.next() as f64 / u64::MAX as f64) * total;
        self.0.partition_point(|&c| c < x).min(self.0.len() - 1)
    }
}

/// The description vocabulary: the real words, then a long tail of rarer made-up terms
/// (`term1`, `term2`...), so that a real word near the end of the list is in a few per cent of
/// the jobs and a tail term in well under one per cent.
fn vocabulary() -> Vec<String> {
    WORDS
        .iter()
        .map(|w| (*w).to_owned())
        .chain((1..=3000).map(|n| format!("term{n}")))
        .collect()
}

const BATCH: usize = 500;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    let mut rng = Rng(args.seed);
    let company_count = (args.jobs / 100).max(1) as usize;
    let companies: Vec<String> = (0..company_count)
        .map(|i| format!("{} {} {i}", rng.pick(COMPANY_WORDS), rng.pick(FIELDS)))
        .collect();
    let vocabulary = vocabulary();
    let draws = Draws {
        fields: Zipf::new(FIELDS.len()),
        roles: Zipf::new(ROLES.len()),
        words: Zipf::new(vocabulary.len()),
        vocabulary,
    };
    let now = Utc::now();
    let sqlite = args.database_url.starts_with("sqlite:");
    let (sqlite_pool, pg_pool) = if sqlite {
        (
            Some(
                SqlitePool::connect(&args.database_url)
                    .await
                    .expect("SQLite"),
            ),
            None,
        )
    } else {
        let pool = bench::postgres_pool(&args.database_url, args.schema.clone()).await;
        (None, Some(pool))
    };
    // Placeholders: `?` for SQLite, `$n` for PostgreSQL.
    let placeholders = |rows: usize, columns: usize| -> String {
        (0..rows)
            .map(|r| {
                let row: Vec<String> = (0..columns)
                    .map(|c| {
                        if sqlite {
                            "?".to_owned()
                        } else {
                            format!("${}", r * columns + c + 1)
                        }
                    })
                    .collect();
                format!("({})", row.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    macro_rules! run {
        ($sql:expr, |$q:ident| $bind:expr) => {{
            let sql = $sql;
            if let Some(pool) = &sqlite_pool {
                let $q = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()));
                $bind.execute(pool).await.expect("insert");
            } else if let Some(pool) = &pg_pool {
                let $q = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()));
                $bind.execute(pool).await.expect("insert");
            }
        }};
    }
    // Companies get ids after the ones already there; jobs name them by those ids.
    let first_id: i64 = if let Some(pool) = &sqlite_pool {
        sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM org_companies")
            .fetch_one(pool)
            .await
    } else {
        let pool = pg_pool.as_ref().expect("a pool");
        sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM org_companies")
            .fetch_one(pool)
            .await
    }
    .expect("companies");
    for chunk in companies.chunks(BATCH).enumerate() {
        let (n, names) = chunk;
        let sql = format!(
            "INSERT INTO org_companies (id, name, slug, website, suspended_at, created_at, updated_at) VALUES {}",
            placeholders(names.len(), 7)
        );
        run!(sql, |q| {
            let mut q = q;
            for (i, name) in names.iter().enumerate() {
                let id = first_id + (n * BATCH + i + 1) as i64;
                q = q
                    .bind(id)
                    .bind(name.clone())
                    .bind(format!("bench-{id}"))
                    .bind(None::<String>)
                    .bind(None::<chrono::DateTime<Utc>>)
                    .bind(now)
                    .bind(now);
            }
            q
        });
    }
    let mut done = 0u64;
    while done < args.jobs {
        let size = BATCH.min((args.jobs - done) as usize);
        let jobs: Vec<Job> = (0..size)
            .map(|_| job(&mut rng, &draws, &companies))
            .collect();
        let sql = format!(
            "INSERT INTO careers_jobs (company_id, title, description, status, department, \
             employment_type, workplace_type, country_code, salary_min, salary_max, \
             salary_currency, salary_interval, published_at, created_at, updated_at, \
             search_title, search_body, search_company) VALUES {}",
            placeholders(size, 18)
        );
        run!(sql, |q| {
            let mut q = q;
            for job in &jobs {
                let (title, body) =
                    search_text(&job.title, &job.description, Some(&job.department));
                let published = now - Duration::minutes(job.published_minutes_ago);
                q = q
                    .bind(first_id + 1 + job.company)
                    .bind(job.title.clone())
                    .bind(job.description.clone())
                    .bind(job.status)
                    .bind(job.department.clone())
                    .bind(job.employment)
                    .bind(job.workplace)
                    .bind(job.country)
                    .bind(job.salary.map(|s| s.0))
                    .bind(job.salary.map(|s| s.1))
                    .bind(job.salary.map(|s| s.2))
                    .bind(job.salary.map(|_| "year"))
                    .bind(published)
                    .bind(published)
                    .bind(published)
                    .bind(title)
                    .bind(body)
                    .bind(fold_text(&job.company_name));
            }
            q
        });
        done += size as u64;
    }
    if let Some(pool) = &pg_pool {
        // The identity's sequence past the ids given here.
        sqlx::query(
            "SELECT setval(pg_get_serial_sequence('org_companies', 'id'), \
             (SELECT MAX(id) FROM org_companies))",
        )
        .execute(pool)
        .await
        .expect("sequence");
        sqlx::query("VACUUM ANALYZE careers_jobs")
            .execute(pool)
            .await
            .expect("vacuum");
        sqlx::query("ANALYZE org_companies")
            .execute(pool)
            .await
            .expect("analyze");
    }
    if let Some(pool) = &sqlite_pool {
        sqlx::query("ANALYZE").execute(pool).await.expect("analyze");
    }
    println!(
        "{} jobs over {} companies (seed {})",
        args.jobs, company_count, args.seed
    );
}
