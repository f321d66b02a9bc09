//! Micro-benchmarks of the per-request work of the session engine.
//!
//! ```text
//! cargo bench -p sessions --bench engine -- --warm-up-time 1 --measurement-time 2
//! cargo bench -p sessions --bench engine -- --test      # smoke mode: every benchmark once
//! ```
//!
//! The Redis benchmarks run only when `TEST_REDIS_URL` is set. They work under a key prefix of
//! their own (`careers-bench:<random>:`) and remove their keys afterwards.
//!
//! The in-memory store's futures never wait, so they are polled once (`now_or_never`): the
//! figures are the store's own cost, without an executor's.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use fred::types::scan::Scanner;
use futures::{FutureExt, StreamExt};
use sessions::store::{MemoryStore, RedisStore, RedisStoreConfig, Rotation};
use sessions::{
    AccessClaims, CookieDomain, CookiePolicy, SameSite, SessionContext, SessionId, SessionKey,
    SessionPolicy, SessionRecord, SigningSecret, TokenKeys, TokenStore,
};

const USER: SessionContext = SessionContext {
    name: "user",
    payload_key: "user_id",
    access_cookie: "jwt_access",
    csrf_cookie: "CSRF_TOKEN",
    namespace: "default",
};

/// A fixed Unix time (2027) for the in-memory store, which takes `now` as a parameter.
const NOW: i64 = 1_800_000_000;
const LIFE: i64 = 7 * 24 * 3600;
const GRACE: i64 = 10;
const LIMITS: sessions::SessionLimits = sessions::SessionLimits {
    grace_seconds: GRACE,
    idle_seconds: 0,
};
/// Records held by the store while `get` and `rotate` are measured.
const RESIDENT: usize = 100_000;
/// Fresh inserts go into stores of at most this many records (then a new store is taken), so
/// a long measurement never grows one map without bound.
const INSERT_CHUNK: u64 = 50_000;

/// Inserts run under the default cap on sessions per identity, as logins do.
fn limit() -> usize {
    SessionPolicy::default().sessions_per_identity
}

/// A fresh session of `subject`. Every benchmark session has an identity of its own, as in a
/// store of many users.
fn record(subject: i64, now: i64) -> SessionRecord {
    SessionRecord {
        subject,
        access_uid: SessionId::random(),
        access_iat: now,
        previous_uid: None,
        rotated_at: 0,
        created_at: now,
        last_seen_at: now,
        expires_at: now + LIFE,
    }
}

/// `n` distinct-looking ids from one OS-random seed (splitmix64): drawing millions of ids from
/// the OS would make the insert benchmark's unmeasured setup dominate its run time.
fn pseudo_random_ids(n: usize) -> Vec<SessionId> {
    let mut seed = [0u8; 8];
    getrandom::fill(&mut seed).expect("operating system random number generator");
    let mut state = u64::from_le_bytes(seed);
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..n)
        .map(|_| {
            let id = (u128::from(next()) << 64) | u128::from(next());
            SessionId(id.to_le_bytes())
        })
        .collect()
}

/// A cheap successor id for rotations (no system call inside the measured loop).
fn next_uid(uid: &SessionId) -> SessionId {
    SessionId(uid.as_u128().wrapping_add(1).to_le_bytes())
}

fn claims() -> AccessClaims {
    AccessClaims {
        subject: 42,
        uid: SessionId::random(),
        ruid: SessionId::random(),
        iat: NOW,
        exp: NOW + 3600,
        second_factor: false,
        key: TokenKeys::SIGNING,
    }
}

fn tokens(c: &mut Criterion) {
    let keys = TokenKeys::new(&SigningSecret::random());
    let other = TokenKeys::new(&SigningSecret::random());
    let claims = claims();
    let token = keys.sign(&USER, &claims);
    let forged = other.sign(&USER, &claims);
    assert_eq!(keys.verify(&USER, &token), Ok(claims));
    assert!(keys.verify(&USER, &forged).is_err());

    let mut group = c.benchmark_group("token");
    group.bench_function("sign", |b| b.iter(|| keys.sign(&USER, black_box(&claims))));
    group.bench_function("verify_valid", |b| {
        b.iter(|| keys.verify(&USER, black_box(&token)))
    });
    group.bench_function("verify_bad_signature", |b| {
        b.iter(|| keys.verify(&USER, black_box(&forged)))
    });
    group.finish();

    let uid = claims.uid;
    let csrf = keys.csrf_for(0, &uid);
    let wrong = keys.csrf_for(0, &SessionId::random());
    assert!(keys.csrf_matches(0, &uid, csrf.as_bytes()));
    assert!(!keys.csrf_matches(0, &uid, wrong.as_bytes()));

    let mut group = c.benchmark_group("csrf");
    group.bench_function("csrf_for", |b| b.iter(|| keys.csrf_for(0, black_box(&uid))));
    group.bench_function("matches_match", |b| {
        b.iter(|| keys.csrf_matches(0, black_box(&uid), black_box(csrf.as_bytes())))
    });
    group.bench_function("matches_mismatch", |b| {
        b.iter(|| keys.csrf_matches(0, black_box(&uid), black_box(wrong.as_bytes())))
    });
    group.finish();
}

fn cookies(c: &mut Criterion) {
    let policy = CookiePolicy {
        secure: true,
        same_site: SameSite::Lax,
        domain: CookieDomain::FromHost,
        partitioned: Vec::new(),
    };
    let keys = TokenKeys::new(&SigningSecret::random());
    let claims = claims();
    let token = keys.sign(&USER, &claims);
    let csrf = keys.csrf_for(0, &claims.uid);
    let host = Some("api.example.com");
    let issued = policy.issue(&USER, host, &token, &csrf, NOW + LIFE);
    for cookie in &issued {
        let text = cookie.to_str().expect("ASCII cookie");
        assert!(text.contains("; Domain=.example.com"), "{text}");
    }
    let cleared = policy.clear(&USER, host);
    assert!(
        cleared[0]
            .to_str()
            .expect("ASCII cookie")
            .contains("Max-Age=0")
    );

    let mut group = c.benchmark_group("cookies");
    group.bench_function("issue", |b| {
        b.iter(|| {
            policy.issue(
                &USER,
                black_box(host),
                black_box(&token),
                black_box(&csrf),
                NOW + LIFE,
            )
        })
    });
    group.bench_function("clear", |b| b.iter(|| policy.clear(&USER, black_box(host))));
    group.finish();
}

/// Polls a future of the in-memory store, which is always ready.
fn ready<T>(future: impl Future<Output = T>) -> T {
    future
        .now_or_never()
        .expect("the in-memory store never waits")
}

/// A store holding `n` live sessions of identities `0..n`; returns their keys and current
/// access UIDs.
fn filled_memory_store(n: usize) -> (MemoryStore, Vec<(SessionKey, SessionId)>) {
    let store = MemoryStore::new();
    let sessions = (0..n)
        .map(|subject| {
            let key = SessionKey {
                subject: subject as i64,
                ruid: SessionId::random(),
            };
            let record = record(key.subject, NOW);
            ready(store.insert(
                USER.namespace,
                &key,
                &record,
                &sessions::SessionMeta::default(),
                limit(),
                NOW,
            ))
            .expect("insert");
            (key, record.access_uid)
        })
        .collect();
    (store, sessions)
}

fn memory_store(c: &mut Criterion) {
    let mut group = c.benchmark_group("memory_store");

    // Fresh sessions of new identities into a store that grows from 10,000 records by up to
    // INSERT_CHUNK, under the per-identity cap; building each store and drawing the ids is not
    // measured.
    group.bench_function("insert", |b| {
        b.iter_custom(|iters| {
            let mut measured = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let n = left.min(INSERT_CHUNK);
                left -= n;
                let (store, _) = filled_memory_store(10_000);
                let fresh: Vec<SessionKey> = pseudo_random_ids(n as usize)
                    .into_iter()
                    .enumerate()
                    .map(|(k, ruid)| SessionKey {
                        subject: 10_000 + k as i64,
                        ruid,
                    })
                    .collect();
                let record = record(0, NOW);
                let limit = limit();
                let start = Instant::now();
                for key in &fresh {
                    let record = SessionRecord {
                        subject: key.subject,
                        ..record
                    };
                    ready(store.insert(
                        USER.namespace,
                        black_box(key),
                        &record,
                        &sessions::SessionMeta::default(),
                        limit,
                        NOW,
                    ))
                    .expect("insert");
                }
                measured += start.elapsed();
            }
            measured
        })
    });

    let (store, mut sessions) = filled_memory_store(RESIDENT);
    let mut i = 0usize;
    // The whole record, and the narrow read every authenticated request makes.
    for (name, narrow) in [("get", false), ("access", true)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % RESIDENT;
                let key = black_box(&sessions[i].0);
                let found = if narrow {
                    ready(store.access(USER.namespace, key, NOW)).map(|a| a.is_some())
                } else {
                    ready(store.get(USER.namespace, key, NOW)).map(|r| r.is_some())
                };
                assert!(matches!(found, Ok(true)));
                found
            })
        });
    }

    // What an authenticated request writes once `touch_seconds` have passed.
    let mut i = 0usize;
    let mut at = NOW;
    group.bench_function("touch", |b| {
        b.iter(|| {
            i = (i + 1) % RESIDENT;
            at += 1;
            ready(store.touch(USER.namespace, black_box(&sessions[i].0), at)).expect("touch")
        })
    });

    // Every iteration presents the session's current access UID, so every one is a real
    // rotation (compare-and-swap succeeds), never a grace-window replay.
    let mut i = 0usize;
    group.bench_function("rotate", |b| {
        b.iter(|| {
            i = (i + 1) % RESIDENT;
            let (key, current) = &mut sessions[i];
            let new_uid = next_uid(current);
            let outcome = ready(store.rotate(
                USER.namespace,
                black_box(key),
                black_box(current),
                &new_uid,
                NOW + 1,
                LIMITS,
            ));
            assert!(matches!(outcome, Ok(Rotation::Rotated(_))));
            *current = new_uid;
            outcome
        })
    });
    group.finish();
}

fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("operating system random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

fn redis_store(c: &mut Criterion) {
    let Ok(url) = std::env::var("TEST_REDIS_URL") else {
        eprintln!("TEST_REDIS_URL not set: skipping the Redis store benchmarks");
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let prefix = format!("careers-bench:{}:", random_hex());
    const N: usize = 1_000;
    // Real time: Redis keeps records for `expires_at - now`, and leftovers expire by themselves.
    let now = unix_now();
    let (store, sessions) = rt.block_on(async {
        let store = RedisStore::connect(RedisStoreConfig {
            url,
            key_prefix: prefix.clone(),
            command_timeout: Duration::from_secs(5),
            cache_sessions: true,
        })
        .await
        .expect("Redis store");
        store.ping().await.expect("Redis reachable");
        let mut sessions = Vec::with_capacity(N);
        for subject in 0..N as i64 {
            let key = SessionKey {
                subject,
                ruid: SessionId::random(),
            };
            let mut record = record(subject, now);
            record.expires_at = now + 3600;
            store
                .insert(
                    USER.namespace,
                    &key,
                    &record,
                    &sessions::SessionMeta::default(),
                    limit(),
                    now,
                )
                .await
                .expect("insert");
            sessions.push((key, record.access_uid));
        }
        (store, sessions)
    });

    // The measured loops run as a task on a runtime worker, as a request handler does (a
    // `block_on` from the bench thread instead adds a cross-thread wake-up to every command).
    let store = Arc::new(store);
    let mut parked = Some(sessions);
    let mut group = c.benchmark_group("redis_store");
    // The whole record, and the narrow read every authenticated request makes.
    for (name, narrow) in [("get", false), ("access", true)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let store = store.clone();
                let sessions = parked.take().expect("sessions between runs");
                let (elapsed, sessions) = rt
                    .block_on(rt.spawn(async move {
                        let start = Instant::now();
                        for k in 0..iters as usize {
                            let key = &sessions[k % N].0;
                            let found = if narrow {
                                store
                                    .access(USER.namespace, key, now)
                                    .await
                                    .map(|a| a.is_some())
                            } else {
                                store
                                    .get(USER.namespace, key, now)
                                    .await
                                    .map(|r| r.is_some())
                            };
                            assert!(matches!(found, Ok(true)));
                            black_box(found.ok());
                        }
                        (start.elapsed(), sessions)
                    }))
                    .expect("benchmark task");
                parked = Some(sessions);
                elapsed
            })
        });
    }
    // What an authenticated request writes once `touch_seconds` have passed: the record's
    // field and the identity's index, in one script.
    group.bench_function("touch", |b| {
        b.iter_custom(|iters| {
            let store = store.clone();
            let sessions = parked.take().expect("sessions between runs");
            let (elapsed, sessions) = rt
                .block_on(rt.spawn(async move {
                    let start = Instant::now();
                    for k in 0..iters as usize {
                        let touched = store
                            .touch(USER.namespace, &sessions[k % N].0, now + 1)
                            .await;
                        assert!(touched.is_ok());
                        black_box(touched.ok());
                    }
                    (start.elapsed(), sessions)
                }))
                .expect("benchmark task");
            parked = Some(sessions);
            elapsed
        })
    });
    // Every iteration presents the session's current access UID: a real rotation each time.
    group.bench_function("rotate", |b| {
        b.iter_custom(|iters| {
            let store = store.clone();
            let mut sessions = parked.take().expect("sessions between runs");
            let (elapsed, sessions) = rt
                .block_on(rt.spawn(async move {
                    let start = Instant::now();
                    for k in 0..iters as usize {
                        let (key, current) = &mut sessions[k % N];
                        let new_uid = next_uid(current);
                        let outcome = store
                            .rotate(USER.namespace, key, current, &new_uid, now, LIMITS)
                            .await;
                        assert!(matches!(outcome, Ok(Rotation::Rotated(_))));
                        *current = new_uid;
                        black_box(outcome.ok());
                    }
                    (start.elapsed(), sessions)
                }))
                .expect("benchmark task");
            parked = Some(sessions);
            elapsed
        })
    });
    group.finish();

    let left = rt.block_on(async {
        store
            .flush(USER.namespace)
            .await
            .expect("clean up the benchmark's keys");
        let mut left = 0;
        let mut pages = store.client().scan(format!("{prefix}*"), Some(1000), None);
        while let Some(page) = pages.next().await {
            let mut page = page.expect("SCAN");
            left += page.take_results().map_or(0, |keys| keys.len());
            page.next();
        }
        left
    });
    assert_eq!(left, 0, "every benchmark key removed (records and indexes)");
}

criterion_group!(benches, tokens, cookies, memory_store, redis_store);
criterion_main!(benches);
