//! How many sessions the token stores hold, at what memory cost, and how fast a namespace flush
//! is while the other namespace keeps being served.
//!
//! ```text
//! cargo run --release -p sessions --example store_capacity
//! TEST_REDIS_URL=redis://127.0.0.1:6379 cargo run --release -p sessions --example store_capacity
//! ```
//!
//! Every session carries the metadata a browser login records: an IPv6 address and a
//! `User-Agent` of a current desktop browser (111 bytes).
//!
//! 1. In-memory store: 1,000,000 live sessions; the process's resident set (`VmRSS` of
//!    `/proc/self/status`) before and after.
//! 2. Redis (only with `TEST_REDIS_URL`): 10,000 sessions; `MEMORY USAGE` of a sample of keys
//!    (each session's record and its identity's index), as logged in and again after one
//!    refresh (which adds the previous access UID), and the `used_memory` growth of
//!    `INFO memory` per session.
//! 3. Redis: `flush("team")` of 100,000 sessions while a concurrent task keeps reading one
//!    session of `default` and records each read's latency; every `default` session must
//!    survive.
//!
//! Every session belongs to an identity of its own (the most index per session: one index key
//! each) and is inserted under the default cap on sessions per identity, as a login does.
//!
//! The Redis parts work under a key prefix of their own, as long as production's `careers:`
//! (`cb<5 random hex digits>:`, so that key names cost what they cost in production), give every
//! record a one-hour TTL (leftovers of an interrupted run expire by themselves) and remove their
//! keys at the end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fred::prelude::*;
use fred::types::scan::Scanner;
use fred::types::{ClusterHash, CustomCommand, InfoKind};
use futures::StreamExt;
use futures::future::join_all;
use sessions::store::{MemoryStore, RedisStore, RedisStoreConfig, Rotation};
use sessions::{
    SessionId, SessionKey, SessionLimits, SessionMeta, SessionPolicy, SessionRecord, TokenStore,
};

/// The service's allocator: the resident set measured is the one the service would have.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MEMORY_SESSIONS: usize = 1_000_000;
const MEMORY_TARGET_BYTES: u64 = 600 * 1000 * 1000;
const REDIS_SESSIONS: usize = 10_000;
/// Every `REDIS_SAMPLE_EVERY`-th key of the Redis memory run is measured with `MEMORY USAGE`.
const REDIS_SAMPLE_EVERY: usize = 50;
/// Record and the identity's index together (one identity per session: the index's worst case).
const REDIS_TARGET_BYTES: f64 = 450.0;
const TEAM_SESSIONS: usize = 100_000;
const DEFAULT_SESSIONS: usize = 1_000;
const FLUSH_TARGET: Duration = Duration::from_secs(2);
/// Inserts issued at once during setup (the client pipelines them on its connection).
const INSERT_BATCH: usize = 2_000;
/// Life of the Redis records: long enough for the run, short enough for leftovers to go.
const REDIS_LIFE: i64 = 3600;

struct Row {
    what: String,
    value: String,
    target: String,
    met: Option<bool>,
}

impl Row {
    fn new(what: &str, value: String, target: &str, met: Option<bool>) -> Self {
        Self {
            what: what.to_owned(),
            value,
            target: target.to_owned(),
            met,
        }
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("operating system random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn record(subject: i64, now: i64, life: i64) -> SessionRecord {
    SessionRecord {
        subject,
        access_uid: SessionId::random(),
        access_iat: now,
        previous_uid: None,
        rotated_at: 0,
        created_at: now,
        last_seen_at: now,
        expires_at: now + life,
    }
}

/// A new session of identity `subject`.
fn key_of(subject: i64) -> SessionKey {
    SessionKey {
        subject,
        ruid: SessionId::random(),
    }
}

/// The cap on sessions per identity that logins insert under.
fn limit() -> usize {
    SessionPolicy::default().sessions_per_identity
}

/// A `kB` field of `/proc/self/status` (`VmRSS`, `VmHWM`), in bytes.
fn proc_status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn yes_no(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "yes",
        Some(false) => "**no**",
        None => "-",
    }
}

async fn memory_store(rows: &mut Vec<Row>) {
    println!("## In-memory store: {MEMORY_SESSIONS} sessions");
    let now = unix_now();
    let rss_before = proc_status_bytes("VmRSS");
    let store = MemoryStore::new();
    let start = Instant::now();
    for subject in 0..MEMORY_SESSIONS as i64 {
        store
            .insert(
                "default",
                &key_of(subject),
                &record(subject, now, 7 * 24 * 3600),
                &meta(),
                limit(),
                now,
            )
            .await
            .expect("in-memory insert");
    }
    let elapsed = start.elapsed();
    let rss_after = proc_status_bytes("VmRSS");
    let hwm = proc_status_bytes("VmHWM");
    assert_eq!(store.len("default"), MEMORY_SESSIONS);
    let delta = rss_after.saturating_sub(rss_before);
    let per_session = delta as f64 / MEMORY_SESSIONS as f64;
    println!(
        "size_of::<SessionRecord>() = {} bytes, map entry (u128 key + record) = {} bytes",
        std::mem::size_of::<SessionRecord>(),
        std::mem::size_of::<(u128, SessionRecord)>()
    );
    println!(
        "VmRSS before {:.1} MiB, after {:.1} MiB (delta {:.1} MiB), VmHWM {:.1} MiB",
        mib(rss_before),
        mib(rss_after),
        mib(delta),
        mib(hwm)
    );
    println!(
        "{per_session:.1} bytes per session; inserted in {:.2} s ({:.0} inserts/s, one thread, ids from the OS RNG)",
        elapsed.as_secs_f64(),
        MEMORY_SESSIONS as f64 / elapsed.as_secs_f64()
    );
    rows.push(Row::new(
        "memory: VmRSS with 1M sessions (total)",
        format!("{:.1} MiB", mib(rss_after)),
        "< 600 MB",
        Some(rss_after < MEMORY_TARGET_BYTES),
    ));
    rows.push(Row::new(
        "memory: VmRSS growth per session",
        format!("{per_session:.1} B ({:.1} MiB total)", mib(delta)),
        "-",
        None,
    ));
    rows.push(Row::new(
        "memory: insert rate (1 thread)",
        format!("{:.0} /s", MEMORY_SESSIONS as f64 / elapsed.as_secs_f64()),
        "-",
        None,
    ));
    drop(store);
}

/// What a login from a desktop browser records.
fn meta() -> SessionMeta {
    SessionMeta {
        ip: Some("2001:db8:85a3::8a2e:370:7334".parse().expect("address")),
        user_agent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36".into(),
    }
}

/// `n` fresh sessions of identities `0..n` in `namespace`, `INSERT_BATCH` inserts in flight at
/// a time; their keys and records.
async fn insert_many(
    store: &RedisStore,
    namespace: &str,
    n: usize,
    now: i64,
) -> Vec<(SessionKey, SessionRecord)> {
    let sessions: Vec<(SessionKey, SessionRecord)> = (0..n as i64)
        .map(|subject| (key_of(subject), record(subject, now, REDIS_LIFE)))
        .collect();
    for chunk in sessions.chunks(INSERT_BATCH) {
        let results = join_all(chunk.iter().map(|(key, record)| async move {
            store
                .insert(namespace, key, record, &meta(), limit(), now)
                .await
        }))
        .await;
        for result in results {
            result.expect("Redis insert");
        }
    }
    sessions
}

async fn info_field(client: &Client, kind: InfoKind, field: &str) -> String {
    let info: String = client.info(Some(kind)).await.expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| panic!("no {field} in INFO"))
}

async fn used_memory(client: &Client) -> i64 {
    info_field(client, InfoKind::Memory, "used_memory")
        .await
        .parse()
        .expect("used_memory is a number")
}

/// `MEMORY USAGE key SAMPLES 0`: the key, its value and their overheads, in bytes.
async fn memory_usage(client: &Client, key: &str) -> Option<i64> {
    client
        .custom(
            CustomCommand::new_static("MEMORY", ClusterHash::Offset(1), false),
            vec![
                Value::from("USAGE"),
                Value::from(key),
                Value::from("SAMPLES"),
                Value::from(0),
            ],
        )
        .await
        .expect("MEMORY USAGE")
}

/// Keys under `prefix` (to check that a run leaves nothing behind).
async fn count_keys(client: &Client, prefix: &str) -> usize {
    let mut pages = client.scan(format!("{prefix}*"), Some(1000), None);
    let mut count = 0;
    while let Some(page) = pages.next().await {
        let mut page = page.expect("SCAN");
        count += page.take_results().map_or(0, |keys| keys.len());
        page.next();
    }
    count
}

async fn redis_memory(store: &RedisStore, prefix: &str, rows: &mut Vec<Row>) {
    println!("\n## Redis: memory of {REDIS_SESSIONS} sessions");
    let client = store.client();
    let now = unix_now();
    let used_before = used_memory(client).await;
    let sessions = insert_many(store, "default", REDIS_SESSIONS, now).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let used_after = used_memory(client).await;

    // The store's key layout: the identity's index at `{prefix}{namespace}:{{subject}}`, the
    // record at the index's key + `:{ruid}` (a missing key would say None).
    let index_of = |key: &SessionKey| format!("{prefix}default:{{{}}}", key.subject);
    let record_of = |key: &SessionKey| format!("{}:{}", index_of(key), key.ruid);
    let sample: Vec<&(SessionKey, SessionRecord)> =
        sessions.iter().step_by(REDIS_SAMPLE_EVERY).collect();
    // (record + index, record alone) of every sampled session.
    let measure = async |sample: &[&(SessionKey, SessionRecord)]| {
        let mut sizes = Vec::new();
        for (key, _) in sample {
            let record = memory_usage(client, &record_of(key)).await;
            let index = memory_usage(client, &index_of(key)).await;
            let (Some(record), Some(index)) = (record, index) else {
                panic!("no key for {key:?}: the store's key layout changed?");
            };
            sizes.push((record + index, record));
        }
        sizes
    };
    let fresh = measure(&sample).await;
    // One refresh of each sampled session: the record then also keeps the previous UID.
    for (key, record) in &sample {
        let rotation = store
            .rotate(
                "default",
                key,
                &record.access_uid,
                &SessionId::random(),
                now,
                SessionLimits {
                    grace_seconds: 10,
                    idle_seconds: 0,
                },
            )
            .await
            .expect("Redis rotate");
        assert!(matches!(rotation, Rotation::Rotated(_)), "{rotation:?}");
    }
    let refreshed = measure(&sample).await;

    let (key, _) = &sessions[0];
    let (key_len, index_len) = (record_of(key).len(), index_of(key).len());
    for (label, sizes) in [("as logged in", &fresh), ("after a refresh", &refreshed)] {
        let average = sizes.iter().map(|s| s.0).sum::<i64>() as f64 / sizes.len() as f64;
        let record_average = sizes.iter().map(|s| s.1).sum::<i64>() as f64 / sizes.len() as f64;
        let min = sizes.iter().map(|s| s.0).min().unwrap_or(0);
        let max = sizes.iter().map(|s| s.0).max().unwrap_or(0);
        println!(
            "MEMORY USAGE {label} over {} sessions (record key {key_len} bytes, index key {index_len} bytes): record + index average {average:.1}, min {min}, max {max} bytes; record alone average {record_average:.1} bytes",
            sizes.len()
        );
        rows.push(Row::new(
            &format!("redis: MEMORY USAGE per session {label}, record + index (avg)"),
            format!(
                "{average:.1} B (min {min}, max {max}; {} sessions, key names {key_len} + {index_len} B)",
                sizes.len()
            ),
            "< 450 B",
            Some(average < REDIS_TARGET_BYTES),
        ));
        rows.push(Row::new(
            &format!("redis: MEMORY USAGE of the record alone {label} (avg)"),
            format!("{record_average:.1} B"),
            "-",
            None,
        ));
    }
    let per_session_info = (used_after - used_before) as f64 / REDIS_SESSIONS as f64;
    println!(
        "INFO used_memory: before {used_before}, after {used_after}, delta {} bytes = {per_session_info:.1} bytes per session",
        used_after - used_before
    );
    rows.push(Row::new(
        "redis: used_memory delta per session",
        format!("{per_session_info:.1} B"),
        "-",
        None,
    ));

    let removed = store.flush("default").await.expect("clean up");
    println!("flush(\"default\") after the memory run: {removed} removed");
    rows.push(Row::new(
        "redis: flush count after the memory run",
        removed.to_string(),
        "= 10,000 (sessions)",
        Some(removed == REDIS_SESSIONS as u64),
    ));
}

struct Probe {
    /// When the read started, relative to the probe's start.
    started: Duration,
    latency: Duration,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn latency_summary(probes: &[&Probe]) -> (usize, Duration, Duration, Duration) {
    let mut latencies: Vec<Duration> = probes.iter().map(|p| p.latency).collect();
    latencies.sort();
    (
        latencies.len(),
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
        latencies.last().copied().unwrap_or_default(),
    )
}

async fn redis_flush(store: Arc<RedisStore>, rows: &mut Vec<Row>) {
    println!(
        "\n## Redis: flush(\"team\") of {TEAM_SESSIONS} sessions beside {DEFAULT_SESSIONS} in \"default\""
    );
    let now = unix_now();
    let setup = Instant::now();
    let (_team, defaults) = futures::join!(
        insert_many(&store, "team", TEAM_SESSIONS, now),
        insert_many(&store, "default", DEFAULT_SESSIONS, now)
    );
    println!(
        "setup: {} inserts in {:.2} s",
        TEAM_SESSIONS + DEFAULT_SESSIONS,
        setup.elapsed().as_secs_f64()
    );

    // A user-context request loop: read one `default` session again and again.
    let stop = Arc::new(AtomicBool::new(false));
    let origin = Instant::now();
    let reader = {
        let store = store.clone();
        let stop = stop.clone();
        let probe = defaults[0].0;
        tokio::spawn(async move {
            let mut probes = Vec::with_capacity(100_000);
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                let found = store.get("default", &probe, now).await;
                let latency = started.elapsed();
                assert!(
                    matches!(found, Ok(Some(_))),
                    "default session readable during the flush: {found:?}"
                );
                probes.push(Probe {
                    started: started - origin,
                    latency,
                });
            }
            probes
        })
    };
    // Baseline reads before the flush, and some after it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let flush_start = origin.elapsed();
    let timer = Instant::now();
    let removed = store.flush("team").await.expect("flush team");
    let flush_time = timer.elapsed();
    let flush_end = origin.elapsed();
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let probes = reader.await.expect("reader task");

    let during: Vec<&Probe> = probes
        .iter()
        .filter(|p| p.started < flush_end && p.started + p.latency > flush_start)
        .collect();
    let before: Vec<&Probe> = probes
        .iter()
        .filter(|p| p.started + p.latency <= flush_start)
        .collect();
    let (n_during, p50_during, p99_during, max_during) = latency_summary(&during);
    let (n_before, p50_before, p99_before, max_before) = latency_summary(&before);

    let mut survivors = 0;
    for (key, _) in &defaults {
        if store
            .get("default", key, now)
            .await
            .expect("get default")
            .is_some()
        {
            survivors += 1;
        }
    }
    let team_left = store.flush("team").await.expect("flush team again");

    println!(
        "flush(\"team\"): removed {removed} in {:.1} ms; a second flush found {team_left}",
        ms(flush_time)
    );
    println!(
        "default-namespace gets before the flush: n={n_before}, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(p50_before),
        ms(p99_before),
        ms(max_before)
    );
    println!(
        "default-namespace gets during the flush: n={n_during}, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(p50_during),
        ms(p99_during),
        ms(max_during)
    );
    println!("default sessions alive after the flush: {survivors}/{DEFAULT_SESSIONS}");

    rows.push(Row::new(
        "redis: flush(\"team\") of 100,000 sessions",
        format!("{:.1} ms", ms(flush_time)),
        "< 2 s",
        Some(flush_time < FLUSH_TARGET),
    ));
    rows.push(Row::new(
        "redis: sessions removed by the flush (its count)",
        format!("{removed} (second flush: {team_left})"),
        "= 100,000",
        Some(removed == TEAM_SESSIONS as u64 && team_left == 0),
    ));
    rows.push(Row::new(
        "redis: default gets during flush (n / p50 / p99 / max)",
        format!(
            "{n_during} / {:.3} / {:.3} / {:.3} ms",
            ms(p50_during),
            ms(p99_during),
            ms(max_during)
        ),
        "not blocked",
        Some(n_during > 0 && max_during < flush_time),
    ));
    rows.push(Row::new(
        "redis: default gets before flush (n / p50 / p99 / max)",
        format!(
            "{n_before} / {:.3} / {:.3} / {:.3} ms",
            ms(p50_before),
            ms(p99_before),
            ms(max_before)
        ),
        "-",
        None,
    ));
    rows.push(Row::new(
        "redis: default sessions surviving",
        format!("{survivors} / {DEFAULT_SESSIONS}"),
        "all",
        Some(survivors == DEFAULT_SESSIONS),
    ));

    // The caller checks that no key is left; the count is the flush's own.
    let removed_defaults = store.flush("default").await.expect("clean up default");
    println!("flush(\"default\") at the end: {removed_defaults} removed");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut rows = Vec::new();
    memory_store(&mut rows).await;

    match std::env::var("TEST_REDIS_URL") {
        Ok(url) => {
            let prefix = format!("cb{}:", &random_hex()[..5]);
            let store = RedisStore::connect(RedisStoreConfig {
                url,
                key_prefix: prefix.clone(),
                command_timeout: Duration::from_secs(10),
                cache_sessions: true,
            })
            .await
            .expect("Redis store");
            store.ping().await.expect("Redis reachable");
            let version = info_field(store.client(), InfoKind::Server, "redis_version").await;
            println!("\nRedis {version}, key prefix {prefix}");
            redis_memory(&store, &prefix, &mut rows).await;
            let store = Arc::new(store);
            redis_flush(store.clone(), &mut rows).await;
            let left = count_keys(store.client(), &prefix).await;
            println!("keys left under {prefix}: {left}");
            assert_eq!(left, 0, "the run removes all its keys");
        }
        Err(_) => println!("\nTEST_REDIS_URL not set: Redis measurements skipped"),
    }

    println!("\n| measurement | result | target | met |");
    println!("| --- | --- | --- | --- |");
    for row in &rows {
        println!(
            "| {} | {} | {} | {} |",
            row.what,
            row.value,
            row.target,
            yes_no(row.met)
        );
    }
}
