//! A small HTTP/1.1 load generator for the benchmark: N keep-alive connections on one thread,
//! closed loop (each connection sends its next request when the last answered) or open loop
//! (`--rate`, requests spread evenly over time). Prints one JSON line of results.
//!
//! With `--sessions FILE` (lines `access_token csrf_token`), each connection uses its own
//! session and follows the `Set-Cookie`s it receives: that is how the refresh scenario rotates.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use clap::Parser;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Request, header};
use hyper_util::rt::TokioIo;

#[derive(Parser, Clone)]
struct Args {
    /// Server address, `127.0.0.1:3000`.
    #[arg(long)]
    addr: String,
    #[arg(long, default_value = "GET")]
    method: String,
    #[arg(long)]
    path: String,
    /// Extra request headers, `Name: value`.
    #[arg(long = "header")]
    headers: Vec<String>,
    #[arg(long)]
    body: Option<String>,
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Measured seconds.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Requests per second in total (open loop); closed loop when absent.
    #[arg(long)]
    rate: Option<f64>,
    /// One session per connection: lines `access_token csrf_token`.
    #[arg(long)]
    sessions: Option<String>,
    #[arg(long, default_value = "jwt_access")]
    access_cookie: String,
    #[arg(long, default_value = "CSRF_TOKEN")]
    csrf_cookie: String,
}

#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    statuses: BTreeMap<u16, u64>,
    errors: u64,
    /// 429 and 503 answers without `Retry-After`: every refusal must say when to come back.
    refusals_without_retry_after: u64,
}

fn set_cookie_value<'a>(value: &'a str, name: &str) -> Option<&'a str> {
    value
        .split(';')
        .next()?
        .trim()
        .strip_prefix(name)?
        .strip_prefix('=')
}

async fn connection(
    args: Args,
    session: Option<(String, String)>,
    index: usize,
    start: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let warm_until = start + Duration::from_secs_f64(args.warmup);
    let end = warm_until + Duration::from_secs_f64(args.duration);
    let mut session = session;
    let interval = args
        .rate
        .map(|rate| Duration::from_secs_f64(args.connections as f64 / rate));
    // Spread the open-loop connections' first sends over one interval.
    let mut next = start
        + interval.map_or(Duration::ZERO, |i| {
            i.mul_f64(index as f64 / args.connections as f64)
        });
    'reconnect: while Instant::now() < end {
        let Ok(stream) = tokio::net::TcpStream::connect(&args.addr).await else {
            tally.errors += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let Ok((mut sender, conn)) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
        else {
            tally.errors += 1;
            continue;
        };
        tokio::spawn(conn);
        loop {
            if let Some(interval) = interval {
                tokio::time::sleep_until(next.into()).await;
                next += interval;
            }
            let sent = Instant::now();
            if sent >= end {
                break 'reconnect;
            }
            let mut request = Request::builder()
                .method(args.method.as_str())
                .uri(args.path.as_str())
                .header(header::HOST, args.addr.as_str());
            for h in &args.headers {
                if let Some((name, value)) = h.split_once(':') {
                    request = request.header(name.trim(), value.trim());
                }
            }
            if let Some((access, csrf)) = &session {
                request = request
                    .header(header::COOKIE, format!("{}={access}", args.access_cookie))
                    .header("x-csrf-token", csrf.as_str());
            }
            let body = args.body.clone().unwrap_or_default();
            if args.body.is_some() {
                request = request.header(header::CONTENT_TYPE, "application/json");
            }
            let request = request.body(Full::new(Bytes::from(body))).unwrap();
            let response = match sender.send_request(request).await {
                Ok(response) => response,
                Err(_) => {
                    tally.errors += 1;
                    continue 'reconnect;
                }
            };
            let status = response.status().as_u16();
            let refused_silently = matches!(status, 429 | 503)
                && !response.headers().contains_key(header::RETRY_AFTER);
            if let Some((access, csrf)) = &mut session {
                for value in response.headers().get_all(header::SET_COOKIE) {
                    let Ok(value) = value.to_str() else { continue };
                    if let Some(v) = set_cookie_value(value, &args.access_cookie) {
                        *access = v.to_string();
                    } else if let Some(v) = set_cookie_value(value, &args.csrf_cookie) {
                        *csrf = v.to_string();
                    }
                }
            }
            if response.into_body().collect().await.is_err() {
                tally.errors += 1;
                continue 'reconnect;
            }
            if sent >= warm_until {
                tally
                    .latencies_us
                    .push(sent.elapsed().as_micros().min(u32::MAX as u128) as u32);
                *tally.statuses.entry(status).or_default() += 1;
                tally.refusals_without_retry_after += u64::from(refused_silently);
            }
        }
    }
    tally
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index] as f64 / 1000.0
}

fn main() {
    let args = Args::parse();
    let sessions: Vec<(String, String)> = match &args.sessions {
        Some(file) => std::fs::read_to_string(file)
            .expect("sessions file")
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(a, c)| (a.to_string(), c.to_string()))
            .collect(),
        None => Vec::new(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tallies = runtime.block_on(async {
        let start = Instant::now();
        let tasks: Vec<_> = (0..args.connections)
            .map(|i| {
                let session = sessions.get(i % sessions.len().max(1)).cloned();
                tokio::spawn(connection(args.clone(), session, i, start))
            })
            .collect();
        let mut tallies = Vec::new();
        for task in tasks {
            tallies.push(task.await.unwrap());
        }
        tallies
    });
    let mut all = Tally::default();
    for t in tallies {
        all.latencies_us.extend(t.latencies_us);
        all.errors += t.errors;
        all.refusals_without_retry_after += t.refusals_without_retry_after;
        for (s, n) in t.statuses {
            *all.statuses.entry(s).or_default() += n;
        }
    }
    all.latencies_us.sort_unstable();
    let requests = all.latencies_us.len();
    let result = serde_json::json!({
        "requests": requests,
        "errors": all.errors,
        "refusals_without_retry_after": all.refusals_without_retry_after,
        "statuses": all.statuses,
        "rps": requests as f64 / args.duration,
        "p50_ms": percentile(&all.latencies_us, 0.50),
        "p99_ms": percentile(&all.latencies_us, 0.99),
        "max_ms": percentile(&all.latencies_us, 1.0),
    });
    println!("{result}");
}
