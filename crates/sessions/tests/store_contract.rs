//! The behaviour every `TokenStore` promises, checked against each backend with the same tests.
//!
//! `mod memory` always runs. `mod redis` runs when `TEST_REDIS_URL` is set; with
//! `REQUIRE_EXTERNAL_BACKENDS=1` a missing URL fails the Redis tests instead of skipping them.
//! Every Redis test works under its own random key prefix, so the tests run in parallel, and
//! removes its keys afterwards.

mod support;

use std::sync::Arc;
use std::time::Duration;

use fred::prelude::*;
use fred::types::scan::Scanner;
use fred::types::{ClusterHash, CustomCommand};
use futures::StreamExt;
use sessions::store::{Ending, MemoryStore, RedisStore, RedisStoreConfig, Rotation};
use sessions::{
    LiveAccess, SessionId, SessionKey, SessionLimits, SessionMeta, SessionRecord, StoreError,
    TokenStore,
};
use support::redis_url;

/// A fixed Unix time (2027): the stores take `now` as a parameter.
const NOW: i64 = 1_800_000_000;
/// Lifetime of a session; Redis TTLs are `expires_at - now`, so keep it modest.
const LIFE: i64 = 7 * 24 * 3600;
const GRACE: i64 = 30;
const DEFAULT: &str = "default";
const TEAM: &str = "team";

/// A fresh session of `subject` starting at `NOW`, never rotated.
fn new_record(subject: i64) -> SessionRecord {
    SessionRecord {
        subject,
        access_uid: SessionId::random(),
        access_iat: NOW,
        previous_uid: None,
        rotated_at: 0,
        created_at: NOW,
        last_seen_at: NOW,
        expires_at: NOW + LIFE,
    }
}

/// What a login records for listings.
fn meta() -> SessionMeta {
    SessionMeta {
        ip: Some("2001:db8::7".parse().unwrap()),
        user_agent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0".into(),
    }
}

const LIMITS: SessionLimits = SessionLimits {
    grace_seconds: GRACE,
    idle_seconds: 0,
};

/// A new address for a session of `subject`.
fn key_of(subject: i64) -> SessionKey {
    SessionKey {
        subject,
        ruid: SessionId::random(),
    }
}

fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("operating system random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Shorthands over any store (also reached through `Arc`).
trait StoreExt: TokenStore {
    /// Inserts a fresh session at `NOW` (no limit) and returns its key and record.
    async fn insert_new(&self, namespace: &str, subject: i64) -> (SessionKey, SessionRecord) {
        self.insert_seen(namespace, subject, NOW).await
    }

    /// Like [`insert_new`](Self::insert_new), last seen at `last_seen_at`.
    async fn insert_seen(
        &self,
        namespace: &str,
        subject: i64,
        last_seen_at: i64,
    ) -> (SessionKey, SessionRecord) {
        let key = key_of(subject);
        let record = SessionRecord {
            last_seen_at,
            ..new_record(subject)
        };
        let evicted = self
            .insert(namespace, &key, &record, &meta(), 0, NOW)
            .await
            .expect("insert");
        assert_eq!(evicted, 0, "no limit, no eviction");
        (key, record)
    }

    /// Inserts `record` under a new key of its subject with `limit`; returns the key and how
    /// many sessions the insert ended.
    async fn insert_limited(
        &self,
        namespace: &str,
        record: &SessionRecord,
        limit: usize,
        now: i64,
    ) -> (SessionKey, usize) {
        let key = key_of(record.subject);
        let evicted = self
            .insert(namespace, &key, record, &meta(), limit, now)
            .await
            .expect("insert");
        (key, evicted)
    }

    /// The record `get` returns; every read also checks that the narrow `access` read agrees.
    async fn read(&self, namespace: &str, key: &SessionKey, now: i64) -> Option<SessionRecord> {
        let record = self.get(namespace, key, now).await.expect("get");
        let access = self.access(namespace, key, now).await.expect("access");
        assert_eq!(
            access,
            record.as_ref().map(LiveAccess::from),
            "access agrees with get"
        );
        record
    }

    async fn rotate_to(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        new_uid: &SessionId,
        now: i64,
    ) -> Rotation {
        self.rotate(namespace, key, presented, new_uid, now, LIMITS)
            .await
            .expect("rotate")
    }

    async fn end_with(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        now: i64,
    ) -> Ending {
        self.end(namespace, key, presented, now, LIMITS)
            .await
            .expect("end")
    }

    async fn revoked(&self, namespace: &str, key: &SessionKey) -> bool {
        self.revoke(namespace, key).await.expect("revoke")
    }

    async fn touch_at(&self, namespace: &str, key: &SessionKey, now: i64) {
        self.touch(namespace, key, now).await.expect("touch");
    }

    async fn hit_at(&self, key: &str, window_seconds: i64, now: i64) -> (u64, i64) {
        let counter = self.hit(key, window_seconds, now).await.expect("hit");
        (counter.count, counter.retry_after)
    }

    async fn refund_at(&self, key: &str, now: i64) {
        self.refund(key, now).await.expect("refund");
    }
}

impl<S: TokenStore> StoreExt for S {}

/// A `RedisStore` under a fresh `careers-test:<hex>:` prefix, or `None` (skip) without
/// `TEST_REDIS_URL`, unless `REQUIRE_EXTERNAL_BACKENDS=1` demands it.
async fn redis_store() -> Option<(RedisStore, String)> {
    let url = redis_url("the Redis store suite")?;
    let key_prefix = format!("careers-test:{}:", random_hex());
    let store = connect_redis(&url, &key_prefix, true).await;
    Some((store, key_prefix))
}

/// Another `RedisStore` (another instance of the service) on `key_prefix`; with `cache`, once
/// its session cache is ready, so that the tests exercise the cached checks.
async fn connect_redis(url: &str, key_prefix: &str, cache: bool) -> RedisStore {
    let store = RedisStore::connect(RedisStoreConfig {
        url: url.to_owned(),
        key_prefix: key_prefix.to_owned(),
        command_timeout: Duration::from_secs(2),
        cache_sessions: cache,
    })
    .await
    .expect("connect TEST_REDIS_URL");
    store.ping().await.expect("Redis at TEST_REDIS_URL answers");
    if cache {
        cache_ready(&store).await;
    }
    store
}

/// Waits until `store`'s session cache serves copies (tracking is on).
async fn cache_ready(store: &RedisStore) {
    for _ in 0..200 {
        if store.cache_stats().expect("cache on").ready {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the session cache did not become ready within 2 s");
}

/// Checks `key` until `store` serves it from its session cache (the first check reads it; an
/// invalidation may drop a copy before it is served), so that the next check would take the
/// cached path.
async fn held(store: &RedisStore, key: &SessionKey) {
    held_in(store, DEFAULT, key).await;
}

/// [`held`], in `namespace`.
async fn held_in(store: &RedisStore, namespace: &str, key: &SessionKey) {
    let first = store.cache_stats().expect("cache on");
    for _ in 0..50 {
        assert!(
            store
                .access(namespace, key, NOW)
                .await
                .expect("access")
                .is_some()
        );
        if store.cache_stats().expect("cache on").hits > first.hits {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never served from the cache");
}

/// Every key matching `pattern`.
async fn keys_matching(client: &Client, pattern: String) -> Vec<String> {
    let mut keys = Vec::new();
    let mut pages = client.scan(pattern, Some(1000), None);
    while let Some(page) = pages.next().await {
        let mut page = page.expect("scan test keys");
        keys.extend(
            page.take_results()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|key| key.into_string()),
        );
        page.next();
    }
    keys.sort();
    keys
}

/// Deletes every key under the test's prefix (whatever the store's own `flush` does).
async fn delete_prefix(client: &Client, prefix: &str) {
    for key in keys_matching(client, format!("{prefix}*")).await {
        let _: i64 = client.del(key).await.expect("delete test key");
    }
}

/// The store's key layout: an identity's index, and one session's hash under it.
fn index_key(prefix: &str, namespace: &str, subject: i64) -> String {
    format!("{prefix}{namespace}:{{{subject}}}")
}

fn record_key(prefix: &str, namespace: &str, key: &SessionKey) -> String {
    format!("{}:{}", index_key(prefix, namespace, key.subject), key.ruid)
}

/// The members of an identity's index (refresh UIDs as text) with their scores, sorted by
/// member, read with the raw client (`ZRANGE … WITHSCORES`).
async fn index_members(
    client: &Client,
    prefix: &str,
    namespace: &str,
    subject: i64,
) -> Vec<(String, i64)> {
    let key = index_key(prefix, namespace, subject);
    let reply: Vec<Value> = client
        .custom(
            CustomCommand::new_static("ZRANGE", ClusterHash::FirstKey, false),
            vec![key, "0".into(), "-1".into(), "WITHSCORES".into()],
        )
        .await
        .expect("ZRANGE");
    // RESP2 answers member, score, member, ...; RESP3 (the cached store's) [member, score] pairs.
    let flat: Vec<Value> = reply
        .into_iter()
        .flat_map(|item| match item {
            Value::Array(pair) => pair,
            other => vec![other],
        })
        .collect();
    let mut scored: Vec<(String, i64)> = flat
        .chunks(2)
        .map(|pair| {
            let member = pair[0].as_string().expect("a member");
            let score = pair[1].as_f64().expect("a numeric score");
            (member, score as i64)
        })
        .collect();
    scored.sort();
    scored
}

/// What an index should hold: each key's ruid with its last-seen time, sorted by member.
fn expected_index(sessions: &[(&SessionKey, i64)]) -> Vec<(String, i64)> {
    let mut expected: Vec<(String, i64)> = sessions
        .iter()
        .map(|(key, seen)| (key.ruid.to_string(), *seen))
        .collect();
    expected.sort();
    expected
}

async fn ttl_of(client: &Client, key: &str) -> i64 {
    client.ttl(key).await.expect("TTL")
}

async fn exists(client: &Client, key: &str) -> bool {
    let found: i64 = client.exists(key).await.expect("EXISTS");
    found == 1
}

/// Generates `mod memory` and `mod redis`, each with one `#[tokio::test]` per shared body, plus
/// the tests that only concern one backend. In a body, `store` is an `Arc` of the backend
/// (`Arc<MemoryStore>` or `Arc<RedisStore>`); Redis-only tests may also name the key prefix.
macro_rules! store_tests {
    (
        shared { $($shared:tt)* }
        memory_only { $($memory:tt)* }
        redis_only { $($redis:tt)* }
    ) => {
        mod memory {
            #[allow(unused_imports)]
            use super::*;
            store_tests!(@memory $($shared)* $($memory)*);
        }
        mod redis {
            #[allow(unused_imports)]
            use super::*;
            store_tests!(@redis $($shared)* $($redis)*);
        }
    };
    (@memory $( $(#[$meta:meta])* async fn $name:ident($store:ident) $body:block )*) => {
        $(
            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let $store = ::std::sync::Arc::new(MemoryStore::new());
                $body
            }
        )*
    };
    (@redis $(
        $(#[$meta:meta])* async fn $name:ident($store:ident $(, $prefix:ident)?) $body:block
    )*) => {
        $(
            $(#[$meta])*
            #[cfg_attr(not(redis_backend), ignore = "needs TEST_REDIS_URL")]
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let Some((store, prefix)) = redis_store().await else {
                    return;
                };
                let store = ::std::sync::Arc::new(store);
                let $store = store.clone();
                $(let $prefix = prefix.clone();)?
                let outcome = ::futures::FutureExt::catch_unwind(
                    ::std::panic::AssertUnwindSafe(async move { $body }),
                )
                .await;
                delete_prefix(store.client(), &prefix).await;
                if let Err(panic) = outcome {
                    ::std::panic::resume_unwind(panic);
                }
            }
        )*
    };
}

store_tests! {
    shared {
        // Many session checks at once (Redis sends them in batches): each gets its own
        // session's answer, a missing session gets none, and an ended one none.
        async fn concurrent_access_reads_each_get_their_own_session(store) {
            let mut expected = Vec::new();
            for subject in 1..=40 {
                let (key, record) = store.insert_new(DEFAULT, subject).await;
                let live = if subject % 5 == 0 {
                    store.rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), NOW).await;
                    store.read(DEFAULT, &key, NOW).await.map(|r| LiveAccess::from(&r))
                } else if subject % 7 == 0 {
                    assert!(store.revoked(DEFAULT, &key).await);
                    None
                } else {
                    Some(LiveAccess::from(&record))
                };
                expected.push((key, live));
            }
            for subject in 41..=50 {
                expected.push((key_of(subject), None));
            }
            let expected = Arc::new(expected);
            let mut checks = Vec::new();
            for round in 0..8 {
                for index in 0..expected.len() {
                    let (store, expected) = (store.clone(), expected.clone());
                    let index = (index * 7 + round) % expected.len();
                    checks.push(tokio::spawn(async move {
                        let (key, live) = &expected[index];
                        let got = store.access(DEFAULT, key, NOW).await.expect("access");
                        assert_eq!(&got, live, "session {index}");
                    }));
                }
            }
            for check in futures::future::join_all(checks).await {
                check.expect("a check panicked");
            }
        }

        // Rule 1.
        async fn insert_then_get_returns_identical_record(store) {
            let (key, record) = store.insert_new(DEFAULT, 42).await;
            assert_eq!(store.read(DEFAULT, &key, NOW).await, Some(record));
            // Unknown ruid.
            assert_eq!(store.read(DEFAULT, &key_of(42), NOW).await, None);
            // Namespaces are isolated: same key, other namespace.
            assert_eq!(store.read(TEAM, &key, NOW).await, None);
            // A record under the same key in "team" does not disturb the "default" one.
            let other = SessionRecord { last_seen_at: NOW + 5, ..new_record(42) };
            assert_eq!(store.insert(TEAM, &key, &other, &meta(), 0, NOW).await.expect("insert"), 0);
            assert_eq!(store.read(TEAM, &key, NOW).await, Some(other));
            assert_eq!(store.read(DEFAULT, &key, NOW).await, Some(record));
        }

        // Rule 1, for the identity half of the key: a ruid is found only under its own
        // identity, and the same ruid under another identity is another session. (Identities
        // 64 apart share a shard of the in-memory store.)
        async fn a_key_of_another_identity_reaches_nothing(store) {
            let (key, record) = store.insert_new(DEFAULT, 2).await;
            let alias = SessionKey { subject: key.subject + 64, ruid: key.ruid };
            assert_eq!(store.read(DEFAULT, &alias, NOW).await, None);
            store.touch_at(DEFAULT, &alias, NOW + 5).await;
            assert_eq!(store.read(DEFAULT, &key, NOW).await, Some(record), "after touch");
            assert_eq!(
                store.rotate_to(DEFAULT, &alias, &record.access_uid, &SessionId::random(), NOW)
                    .await,
                Rotation::Missing
            );
            assert_eq!(store.read(DEFAULT, &key, NOW).await, Some(record), "after rotate");
            assert_eq!(
                store.end_with(DEFAULT, &alias, &record.access_uid, NOW).await,
                Ending::Missing
            );
            assert_eq!(store.read(DEFAULT, &key, NOW).await, Some(record), "after end");
            assert!(!store.revoked(DEFAULT, &alias).await, "revoke finds nothing");
            assert_eq!(store.read(DEFAULT, &key, NOW).await, Some(record), "after revoke");

            let other = new_record(alias.subject);
            store.insert(DEFAULT, &alias, &other, &meta(), 0, NOW).await.expect("insert");
            assert_eq!(store.read(DEFAULT, &alias, NOW).await, Some(other));
            assert_eq!(store.read(DEFAULT, &key, NOW).await, Some(record), "after insert");
        }

        // Rule 2.
        async fn get_returns_none_from_expires_at(store) {
            let (key, record) = store.insert_new(DEFAULT, 1).await;
            assert_eq!(store.read(DEFAULT, &key, record.expires_at - 1).await, Some(record));
            assert_eq!(store.read(DEFAULT, &key, record.expires_at).await, None);
            assert_eq!(store.read(DEFAULT, &key, record.expires_at + 1).await, None);
        }

        // Rule 3.
        async fn rotate_with_current_uid_rotates(store) {
            let (key, record) = store.insert_new(DEFAULT, 5).await;
            let new_uid = SessionId::random();
            let at = NOW + 60;
            let outcome = store.rotate_to(DEFAULT, &key, &record.access_uid, &new_uid, at).await;
            let rotated = match outcome {
                Rotation::Rotated(rotated) => rotated,
                other => panic!("expected Rotated, got {other:?}"),
            };
            let expected = SessionRecord {
                subject: record.subject,
                access_uid: new_uid,
                access_iat: at,
                previous_uid: Some(record.access_uid),
                rotated_at: at,
                created_at: record.created_at,
                last_seen_at: at,
                expires_at: record.expires_at,
            };
            assert_eq!(rotated, expected);
            assert_eq!(store.read(DEFAULT, &key, at).await, Some(expected));
            // The new uid is now the current one and rotates in turn.
            let third = SessionId::random();
            let again = store.rotate_to(DEFAULT, &key, &new_uid, &third, at + 1).await;
            let expected_again = SessionRecord {
                access_uid: third,
                access_iat: at + 1,
                previous_uid: Some(new_uid),
                rotated_at: at + 1,
                last_seen_at: at + 1,
                ..expected
            };
            assert_eq!(again, Rotation::Rotated(expected_again));
            assert_eq!(store.read(DEFAULT, &key, at + 1).await, Some(expected_again));
        }

        // Rule 4.
        async fn rotate_with_previous_uid_replays_within_grace_then_supersedes(store) {
            let (key, record) = store.insert_new(DEFAULT, 9).await;
            let first = SessionId::random();
            let at = NOW + 60;
            let Rotation::Rotated(rotated) =
                store.rotate_to(DEFAULT, &key, &record.access_uid, &first, at).await
            else {
                panic!("the current uid must rotate");
            };
            // Same second, and the last second of the window: the same result, no second rotation.
            for now in [at, at + GRACE - 1] {
                let outcome = store
                    .rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), now)
                    .await;
                assert_eq!(outcome, Rotation::Replayed(rotated), "at rotated_at + {}", now - at);
                assert_eq!(store.read(DEFAULT, &key, now).await, Some(rotated));
                assert_eq!(rotated.access_uid, first);
            }
            // Exactly `grace` seconds later the previous uid is stale: theft, session ended.
            let outcome = store
                .rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), at + GRACE)
                .await;
            assert_eq!(outcome, Rotation::Superseded);
            assert_eq!(store.read(DEFAULT, &key, at + GRACE).await, None);
            // And the legitimate current uid can no longer rotate it back.
            assert_eq!(
                store.rotate_to(DEFAULT, &key, &first, &SessionId::random(), at + GRACE).await,
                Rotation::Missing
            );
        }

        // Rule 5.
        async fn rotate_with_unrelated_uid_supersedes_and_deletes(store) {
            // Never rotated: an unknown uid.
            let (key, _) = store.insert_new(DEFAULT, 3).await;
            let outcome = store
                .rotate_to(DEFAULT, &key, &SessionId::random(), &SessionId::random(), NOW + 1)
                .await;
            assert_eq!(outcome, Rotation::Superseded);
            assert_eq!(store.read(DEFAULT, &key, NOW + 1).await, None);

            // Rotated twice: the uid of two rotations ago is neither current nor previous,
            // even inside the grace window.
            let (key, record) = store.insert_new(DEFAULT, 4).await;
            let second = SessionId::random();
            let third = SessionId::random();
            assert!(matches!(
                store.rotate_to(DEFAULT, &key, &record.access_uid, &second, NOW + 1).await,
                Rotation::Rotated(_)
            ));
            assert!(matches!(
                store.rotate_to(DEFAULT, &key, &second, &third, NOW + 2).await,
                Rotation::Rotated(_)
            ));
            let outcome = store
                .rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), NOW + 3)
                .await;
            assert_eq!(outcome, Rotation::Superseded);
            assert_eq!(store.read(DEFAULT, &key, NOW + 3).await, None);
        }

        // Rule 6.
        async fn rotate_on_missing_or_expired_record_is_missing(store) {
            let never = key_of(2);
            let outcome = store
                .rotate_to(DEFAULT, &never, &SessionId::random(), &SessionId::random(), NOW)
                .await;
            assert_eq!(outcome, Rotation::Missing);
            assert_eq!(store.read(DEFAULT, &never, NOW).await, None);

            // Exists in another namespace only.
            let (key, record) = store.insert_new(TEAM, 2).await;
            let outcome = store
                .rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), NOW)
                .await;
            assert_eq!(outcome, Rotation::Missing);
            assert_eq!(store.read(DEFAULT, &key, NOW).await, None);
            assert_eq!(store.read(TEAM, &key, NOW).await, Some(record));

            // Expired: presenting the current uid at `expires_at` finds nothing.
            let (key, record) = store.insert_new(DEFAULT, 2).await;
            let outcome = store
                .rotate_to(
                    DEFAULT,
                    &key,
                    &record.access_uid,
                    &SessionId::random(),
                    record.expires_at,
                )
                .await;
            assert_eq!(outcome, Rotation::Missing);
            assert_eq!(store.read(DEFAULT, &key, record.expires_at).await, None);
        }

        // Rule 7.
        async fn end_ends_current_and_grace_uids_supersedes_stale_and_reports_missing(store) {
            // The current uid.
            let (key, record) = store.insert_new(DEFAULT, 1).await;
            assert_eq!(
                store.end_with(DEFAULT, &key, &record.access_uid, NOW + 1).await,
                Ending::Ended
            );
            assert_eq!(store.read(DEFAULT, &key, NOW + 1).await, None);
            // Ending twice finds nothing.
            assert_eq!(
                store.end_with(DEFAULT, &key, &record.access_uid, NOW + 1).await,
                Ending::Missing
            );

            // The previous uid inside the grace window (last second of it).
            let (key, record) = store.insert_new(DEFAULT, 2).await;
            let at = NOW + 60;
            assert!(matches!(
                store.rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), at).await,
                Rotation::Rotated(_)
            ));
            assert_eq!(
                store.end_with(DEFAULT, &key, &record.access_uid, at + GRACE - 1).await,
                Ending::Ended
            );
            assert_eq!(store.read(DEFAULT, &key, at + GRACE - 1).await, None);

            // The previous uid once the window has closed: superseded, ended all the same.
            let (key, record) = store.insert_new(DEFAULT, 3).await;
            assert!(matches!(
                store.rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), at).await,
                Rotation::Rotated(_)
            ));
            assert_eq!(
                store.end_with(DEFAULT, &key, &record.access_uid, at + GRACE).await,
                Ending::Superseded
            );
            assert_eq!(store.read(DEFAULT, &key, at + GRACE).await, None);

            // An unrelated uid: superseded, ended all the same.
            let (key, _) = store.insert_new(DEFAULT, 4).await;
            assert_eq!(
                store.end_with(DEFAULT, &key, &SessionId::random(), NOW).await,
                Ending::Superseded
            );
            assert_eq!(store.read(DEFAULT, &key, NOW).await, None);

            // Missing: never existed, or expired.
            assert_eq!(
                store.end_with(DEFAULT, &key_of(4), &SessionId::random(), NOW).await,
                Ending::Missing
            );
            let (key, record) = store.insert_new(DEFAULT, 5).await;
            assert_eq!(
                store.end_with(DEFAULT, &key, &record.access_uid, record.expires_at).await,
                Ending::Missing
            );
            assert_eq!(store.read(DEFAULT, &key, NOW).await, None);
        }

        // Rule 8.
        async fn concurrent_rotates_of_one_uid_rotate_exactly_once(store) {
            const RACERS: usize = 50;
            let (key, record) = store.insert_new(DEFAULT, 8).await;
            let at = NOW + 60;
            let new_uids: Vec<SessionId> = (0..RACERS).map(|_| SessionId::random()).collect();
            let barrier = Arc::new(tokio::sync::Barrier::new(RACERS));
            let tasks = new_uids.iter().map(|new_uid| {
                let (store, barrier, new_uid) = (store.clone(), barrier.clone(), *new_uid);
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.rotate_to(DEFAULT, &key, &record.access_uid, &new_uid, at).await
                })
            });
            let outcomes: Vec<Rotation> = futures::future::join_all(tasks)
                .await
                .into_iter()
                .map(|joined| joined.expect("rotate task"))
                .collect();

            let rotated: Vec<SessionRecord> = outcomes
                .iter()
                .filter_map(|o| match o {
                    Rotation::Rotated(r) => Some(*r),
                    _ => None,
                })
                .collect();
            let replayed: Vec<SessionRecord> = outcomes
                .iter()
                .filter_map(|o| match o {
                    Rotation::Replayed(r) => Some(*r),
                    _ => None,
                })
                .collect();
            assert_eq!(rotated.len(), 1, "exactly one rotation: {outcomes:?}");
            assert_eq!(replayed.len(), RACERS - 1, "all others replayed: {outcomes:?}");
            let winner = rotated[0];
            assert!(new_uids.contains(&winner.access_uid));
            assert_eq!(winner.previous_uid, Some(record.access_uid));
            assert_eq!((winner.access_iat, winner.rotated_at), (at, at));
            assert!(
                replayed.iter().all(|r| *r == winner),
                "every replay returns the single rotation's record"
            );
            assert_eq!(store.read(DEFAULT, &key, at).await, Some(winner));
        }

        // Rule 9.
        async fn end_racing_rotates_leaves_no_session(store) {
            const RACERS: usize = 50;
            for round in 0..5 {
                let (key, record) = store.insert_new(DEFAULT, round).await;
                let at = NOW + 60;
                let barrier = Arc::new(tokio::sync::Barrier::new(RACERS + 1));
                let rotations = futures::future::join_all((0..RACERS).map(|_| {
                    let (store, barrier) = (store.clone(), barrier.clone());
                    tokio::spawn(async move {
                        barrier.wait().await;
                        store
                            .rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), at)
                            .await
                    })
                }));
                let ending = {
                    let (store, barrier) = (store.clone(), barrier.clone());
                    tokio::spawn(async move {
                        barrier.wait().await;
                        store.end_with(DEFAULT, &key, &record.access_uid, at).await
                    })
                };
                let (ending, rotations) = tokio::join!(ending, rotations);
                let ending = ending.expect("end task");
                let rotations: Vec<Rotation> = rotations
                    .into_iter()
                    .map(|joined| joined.expect("rotate task"))
                    .collect();

                // Before or after a rotation, the presented uid is current or in its grace.
                assert_eq!(ending, Ending::Ended, "round {round}");
                let rotated = rotations
                    .iter()
                    .filter(|o| matches!(o, Rotation::Rotated(_)))
                    .count();
                assert!(rotated <= 1, "round {round}: {rotations:?}");
                assert!(
                    rotations.iter().all(|o| matches!(
                        o,
                        Rotation::Rotated(_) | Rotation::Replayed(_) | Rotation::Missing
                    )),
                    "round {round}: {rotations:?}"
                );
                assert_eq!(store.read(DEFAULT, &key, at).await, None, "round {round}");
                // Nothing can bring it back: not the old uid, not whichever uid won.
                assert_eq!(
                    store
                        .rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), at)
                        .await,
                    Rotation::Missing
                );
                if let Some(Rotation::Rotated(won)) =
                    rotations.iter().find(|o| matches!(o, Rotation::Rotated(_)))
                {
                    assert_eq!(
                        store
                            .rotate_to(DEFAULT, &key, &won.access_uid, &SessionId::random(), at)
                            .await,
                        Rotation::Missing
                    );
                }
                assert_eq!(store.read(DEFAULT, &key, at).await, None, "round {round}");
            }
        }

        // Rule 10.
        async fn flush_removes_one_namespace_and_counts(store) {
            let mut team = Vec::new();
            for subject in 0..3 {
                team.push(store.insert_new(TEAM, subject).await);
            }
            let mut default = Vec::new();
            for subject in 0..2 {
                default.push(store.insert_new(DEFAULT, subject).await);
            }
            // A namespace whose name starts like "team" is another namespace.
            let (teamwork, teamwork_record) = store.insert_new("teamwork", 9).await;

            let removed = store.flush(TEAM).await.expect("flush");
            for (key, _) in &team {
                assert_eq!(store.read(TEAM, key, NOW).await, None);
            }
            for (key, record) in &default {
                assert_eq!(store.read(DEFAULT, key, NOW).await, Some(*record));
            }
            assert_eq!(store.read("teamwork", &teamwork, NOW).await, Some(teamwork_record));
            // The flushed sessions are gone from their identities' indexes too: a login under
            // a limit of one ends nothing.
            let (_, evicted) = store.insert_limited(TEAM, &new_record(0), 1, NOW).await;
            assert_eq!(evicted, 0, "flushed sessions still counted by the limit");
            let removed_new = store.flush(TEAM).await.expect("flush");

            // Nothing left, or never anything: zero.
            assert_eq!(store.flush(TEAM).await.expect("flush"), 0);
            assert_eq!(store.flush("nobody-here").await.expect("flush"), 0);
            // The survivors are still there.
            for (key, record) in &default {
                assert_eq!(store.read(DEFAULT, key, NOW).await, Some(*record));
            }
            // Last, so that the checks above run whatever the counts: one per session.
            assert_eq!((removed, removed_new), (3, 1), "flush counts the sessions it removed");
        }

        // Insert with a limit: the least recently used sessions of that identity end, no other.
        async fn insert_with_a_limit_evicts_the_least_recently_used_of_that_identity_only(store) {
            const ID: i64 = 100;
            const OTHER_ID: i64 = 200;
            let (first, first_record) = store.insert_seen(DEFAULT, ID, NOW).await;
            let (second, second_record) = store.insert_seen(DEFAULT, ID, NOW + 10).await;
            let (third, third_record) = store.insert_seen(DEFAULT, ID, NOW + 20).await;
            // Another identity's sessions, older than all of them, and the same identity's in
            // another namespace.
            let (other_a, other_a_record) = store.insert_seen(DEFAULT, OTHER_ID, NOW - 100).await;
            let (other_b, other_b_record) = store.insert_seen(DEFAULT, OTHER_ID, NOW - 50).await;
            let (team, team_record) = store.insert_seen(TEAM, ID, NOW - 100).await;

            // The oldest is used again: the second becomes the least recently used.
            store.touch_at(DEFAULT, &first, NOW + 30).await;
            let first_record = SessionRecord { last_seen_at: NOW + 30, ..first_record };

            let fourth_record = SessionRecord { last_seen_at: NOW + 40, ..new_record(ID) };
            let (fourth, evicted) =
                store.insert_limited(DEFAULT, &fourth_record, 3, NOW + 40).await;
            assert_eq!(evicted, 1, "one session made room");
            let at = NOW + 40;
            assert_eq!(store.read(DEFAULT, &second, at).await, None, "the LRU session ended");
            assert_ne!(second_record, first_record);
            assert_eq!(store.read(DEFAULT, &first, at).await, Some(first_record));
            assert_eq!(store.read(DEFAULT, &third, at).await, Some(third_record));
            assert_eq!(store.read(DEFAULT, &fourth, at).await, Some(fourth_record));
            assert_eq!(store.read(DEFAULT, &other_a, at).await, Some(other_a_record));
            assert_eq!(store.read(DEFAULT, &other_b, at).await, Some(other_b_record));
            assert_eq!(store.read(TEAM, &team, at).await, Some(team_record));

            // Under the limit, nothing ends.
            let fifth_record = SessionRecord { last_seen_at: NOW + 50, ..new_record(ID) };
            let (fifth, evicted) =
                store.insert_limited(DEFAULT, &fifth_record, 5, NOW + 50).await;
            assert_eq!(evicted, 0, "four sessions under a limit of five");

            // A lower limit ends as many as it takes, least recently used first: third
            // (NOW + 20), first (NOW + 30), fourth (NOW + 40).
            let sixth_record = SessionRecord { last_seen_at: NOW + 60, ..new_record(ID) };
            let (sixth, evicted) =
                store.insert_limited(DEFAULT, &sixth_record, 2, NOW + 60).await;
            assert_eq!(evicted, 3, "down to one, then the new one");
            let at = NOW + 60;
            for gone in [&first, &third, &fourth] {
                assert_eq!(store.read(DEFAULT, gone, at).await, None);
            }
            assert_eq!(store.read(DEFAULT, &fifth, at).await, Some(fifth_record));
            assert_eq!(store.read(DEFAULT, &sixth, at).await, Some(sixth_record));
            // The other identity and the other namespace are untouched.
            assert_eq!(store.read(DEFAULT, &other_a, at).await, Some(other_a_record));
            assert_eq!(store.read(DEFAULT, &other_b, at).await, Some(other_b_record));
            assert_eq!(store.read(TEAM, &team, at).await, Some(team_record));

            // Limit 0: no limit.
            let (_, evicted) = store.insert_limited(DEFAULT, &new_record(ID), 0, at).await;
            assert_eq!(evicted, 0);
        }

        // Sessions that ended (logout, revoke, theft, expiry) no longer count for the limit: a
        // later login does not end a live session on their account.
        async fn ended_sessions_leave_the_index_and_do_not_count_for_the_limit(store) {
            const ID: i64 = 300;
            let (ended, ended_record) = store.insert_seen(DEFAULT, ID, NOW + 1).await;
            let (ended_stale, _) = store.insert_seen(DEFAULT, ID, NOW + 2).await;
            let (revoked, _) = store.insert_seen(DEFAULT, ID, NOW + 3).await;
            let (stolen, stolen_record) = store.insert_seen(DEFAULT, ID, NOW + 4).await;
            // One second to live (a one-second TTL in Redis).
            let short = SessionRecord {
                last_seen_at: NOW + 5,
                expires_at: NOW + 1,
                ..new_record(ID)
            };
            let (expired, evicted) = store.insert_limited(DEFAULT, &short, 0, NOW).await;
            assert_eq!(evicted, 0);
            let (live, live_record) = store.insert_seen(DEFAULT, ID, NOW + 6).await;

            let at = NOW + 60;
            assert_eq!(store.end_with(DEFAULT, &ended, &ended_record.access_uid, at).await, Ending::Ended);
            assert_eq!(
                store.end_with(DEFAULT, &ended_stale, &SessionId::random(), at).await,
                Ending::Superseded
            );
            assert!(store.revoked(DEFAULT, &revoked).await);
            // A stolen token presented after the grace window ends the session.
            let Rotation::Rotated(_) = store
                .rotate_to(DEFAULT, &stolen, &stolen_record.access_uid, &SessionId::random(), NOW + 7)
                .await
            else {
                panic!("the current uid must rotate");
            };
            assert_eq!(
                store.rotate_to(DEFAULT, &stolen, &stolen_record.access_uid, &SessionId::random(), at)
                    .await,
                Rotation::Superseded
            );
            // Let Redis expire the short one by itself.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            assert_eq!(store.read(DEFAULT, &expired, at).await, None);

            // One live session: a limit of two leaves it alone.
            let newer = SessionRecord { last_seen_at: at, ..new_record(ID) };
            let (newer_key, evicted) = store.insert_limited(DEFAULT, &newer, 2, at).await;
            assert_eq!(evicted, 0, "an ended session was counted against the limit");
            assert_eq!(store.read(DEFAULT, &live, at).await, Some(live_record));
            assert_eq!(store.read(DEFAULT, &newer_key, at).await, Some(newer));
            for gone in [&ended, &ended_stale, &revoked, &stolen, &expired] {
                assert_eq!(store.read(DEFAULT, gone, at).await, None);
            }

            // With two live sessions the limit bites, and ends the older live one.
            let newest = SessionRecord { last_seen_at: at + 1, ..new_record(ID) };
            let (newest_key, evicted) = store.insert_limited(DEFAULT, &newest, 2, at + 1).await;
            assert_eq!(evicted, 1);
            assert_eq!(store.read(DEFAULT, &live, at + 1).await, None);
            assert_eq!(store.read(DEFAULT, &newer_key, at + 1).await, Some(newer));
            assert_eq!(store.read(DEFAULT, &newest_key, at + 1).await, Some(newest));
        }

        async fn touch_sets_last_seen_at_and_ignores_missing_sessions(store) {
            const ID: i64 = 600;
            let (key, record) = store.insert_new(DEFAULT, ID).await;
            store.touch_at(DEFAULT, &key, NOW + 45).await;
            let touched = SessionRecord { last_seen_at: NOW + 45, ..record };
            assert_eq!(store.read(DEFAULT, &key, NOW + 45).await, Some(touched));

            // Other namespace, unknown key: nothing happens, nothing appears.
            store.touch_at(TEAM, &key, NOW + 50).await;
            let unknown = key_of(ID);
            store.touch_at(DEFAULT, &unknown, NOW + 50).await;
            assert_eq!(store.read(TEAM, &key, NOW + 50).await, None);
            assert_eq!(store.read(DEFAULT, &unknown, NOW + 50).await, None);
            assert_eq!(store.read(DEFAULT, &key, NOW + 50).await, Some(touched));

            // An ended session stays ended.
            let (ended, _) = store.insert_new(DEFAULT, ID).await;
            assert!(store.revoked(DEFAULT, &ended).await);
            store.touch_at(DEFAULT, &ended, NOW + 60).await;
            assert_eq!(store.read(DEFAULT, &ended, NOW + 60).await, None);

            // At its end a session is not brought back by a touch.
            store.touch_at(DEFAULT, &key, record.expires_at).await;
            assert_eq!(store.read(DEFAULT, &key, record.expires_at).await, None);
        }

        async fn revoke_ends_a_session_whatever_its_uid_then_finds_nothing(store) {
            const ID: i64 = 700;
            let (key, record) = store.insert_new(DEFAULT, ID).await;
            let (other, other_record) = store.insert_new(DEFAULT, ID).await;
            let (team, team_record) = store.insert_new(TEAM, ID).await;
            // Rotated: revoke needs no access uid.
            assert!(matches!(
                store.rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), NOW + 1)
                    .await,
                Rotation::Rotated(_)
            ));
            assert!(store.revoked(DEFAULT, &key).await, "existed");
            assert_eq!(store.read(DEFAULT, &key, NOW + 1).await, None);
            assert!(!store.revoked(DEFAULT, &key).await, "already gone");
            assert!(!store.revoked(DEFAULT, &key_of(ID)).await, "never existed");
            assert!(!store.revoked(TEAM, &other).await, "not in that namespace");
            // Nothing brings it back.
            assert_eq!(
                store.rotate_to(DEFAULT, &key, &record.access_uid, &SessionId::random(), NOW + 2)
                    .await,
                Rotation::Missing
            );
            assert_eq!(
                store.end_with(DEFAULT, &key, &record.access_uid, NOW + 2).await,
                Ending::Missing
            );
            // The identity's other sessions are untouched.
            assert_eq!(store.read(DEFAULT, &other, NOW + 2).await, Some(other_record));
            assert_eq!(store.read(TEAM, &team, NOW + 2).await, Some(team_record));
        }

        async fn revoke_all_ends_every_session_of_one_identity_only(store) {
            const ID: i64 = 900;
            let (a, _) = store.insert_seen(DEFAULT, ID, NOW + 1).await;
            let (b, _) = store.insert_seen(DEFAULT, ID, NOW + 2).await;
            let (c, c_record) = store.insert_seen(DEFAULT, ID, NOW + 3).await;
            let (d, _) = store.insert_seen(DEFAULT, ID, NOW + 4).await;
            assert!(matches!(
                store.rotate_to(DEFAULT, &c, &c_record.access_uid, &SessionId::random(), NOW + 5)
                    .await,
                Rotation::Rotated(_)
            ));
            // Identities 64 apart share a shard of the in-memory store.
            let (neighbour, neighbour_record) = store.insert_new(DEFAULT, ID + 64).await;
            let (team, team_record) = store.insert_new(TEAM, ID).await;
            // One already ended: not counted.
            assert!(store.revoked(DEFAULT, &d).await);

            assert_eq!(store.revoke_all(DEFAULT, ID, None).await.expect("revoke_all"), 3);
            for gone in [&a, &b, &c, &d] {
                assert_eq!(store.read(DEFAULT, gone, NOW + 5).await, None);
            }
            assert_eq!(store.read(DEFAULT, &neighbour, NOW + 5).await, Some(neighbour_record));
            assert_eq!(store.read(TEAM, &team, NOW + 5).await, Some(team_record));
            assert_eq!(store.revoke_all(DEFAULT, ID, None).await.expect("revoke_all"), 0);
            assert_eq!(store.revoke_all(DEFAULT, 12_345, None).await.expect("revoke_all"), 0);

            // The identity starts over: its ended sessions do not count for the limit.
            let (fresh, evicted) = store.insert_limited(DEFAULT, &new_record(ID), 1, NOW + 6).await;
            assert_eq!(evicted, 0);
            assert_eq!(store.revoke_all(DEFAULT, ID, None).await.expect("revoke_all"), 1);
            assert_eq!(store.read(DEFAULT, &fresh, NOW + 6).await, None);
        }

        async fn revoke_all_but_one_keeps_exactly_that_session(store) {
            const ID: i64 = 910;
            let (a, _) = store.insert_seen(DEFAULT, ID, NOW + 1).await;
            let (b, b_record) = store.insert_seen(DEFAULT, ID, NOW + 2).await;
            let (c, _) = store.insert_seen(DEFAULT, ID, NOW + 3).await;
            let (team, team_record) = store.insert_new(TEAM, ID).await;
            let ended = store.revoke_all(DEFAULT, ID, Some(&b.ruid)).await.expect("revoke_all");
            assert_eq!(ended, 2);
            assert_eq!(store.read(DEFAULT, &a, NOW + 4).await, None);
            assert_eq!(store.read(DEFAULT, &c, NOW + 4).await, None);
            assert_eq!(store.read(DEFAULT, &b, NOW + 4).await, Some(b_record));
            assert_eq!(store.read(TEAM, &team, NOW + 4).await, Some(team_record));
            let listed = store.list(DEFAULT, ID, NOW + 4).await.expect("list");
            assert_eq!(listed.len(), 1, "the kept session stays in the index");
            assert_eq!(listed[0].ruid, b.ruid);
        }

        async fn list_returns_the_identitys_live_sessions_with_their_metadata(store) {
            const ID: i64 = 920;
            let (a, a_record) = store.insert_seen(DEFAULT, ID, NOW + 1).await;
            let (b, b_record) = store.insert_seen(DEFAULT, ID, NOW + 2).await;
            let short = SessionRecord { expires_at: NOW + 10, ..new_record(ID) };
            let (ending, _) = store.insert_limited(DEFAULT, &short, 0, NOW).await;
            let bare = SessionMeta { ip: None, user_agent: String::new() };
            let (other, _) = (key_of(ID), ());
            store.insert(DEFAULT, &other, &new_record(ID), &bare, 0, NOW).await.expect("insert");
            // Neighbours in the shard, other identities and the other namespace stay out.
            store.insert_new(DEFAULT, ID + 64).await;
            store.insert_new(TEAM, ID).await;

            let mut listed = store.list(DEFAULT, ID, NOW + 10).await.expect("list");
            listed.sort_by_key(|s| s.record.last_seen_at);
            let ruids: Vec<SessionId> = listed.iter().map(|s| s.ruid).collect();
            assert_eq!(ruids.len(), 3, "the ended session is not listed");
            assert!(!ruids.contains(&ending.ruid));
            assert!(ruids.contains(&a.ruid) && ruids.contains(&b.ruid) && ruids.contains(&other.ruid));
            let find = |key: &SessionKey| listed.iter().find(|s| s.ruid == key.ruid).unwrap();
            assert_eq!(find(&a).record, a_record);
            assert_eq!(find(&b).record, b_record);
            assert_eq!(find(&a).meta, meta());
            assert_eq!(find(&other).meta, bare);
            assert_ne!(find(&a).id(), a.ruid, "the public handle is not the refresh UID");
            assert!(store.list(DEFAULT, 12_345, NOW).await.expect("list").is_empty());
        }

        async fn a_user_agent_of_256_bytes_comes_back_whole(store) {
            // 250 bytes then a two-byte character at every position a piece of 64 could cut.
            let agent: String = "é".repeat(64) + &"x".repeat(128);
            assert_eq!(agent.len(), 256);
            let long = SessionMeta { ip: Some("192.0.2.44".parse().unwrap()), user_agent: agent };
            let key = key_of(940);
            store.insert(DEFAULT, &key, &new_record(940), &long, 0, NOW).await.expect("insert");
            let listed = store.list(DEFAULT, 940, NOW).await.expect("list");
            assert_eq!(listed.len(), 1);
            assert_eq!(listed[0].meta, long);
        }

        async fn rotate_ends_a_session_idle_for_the_limit(store) {
            let (key, record) = store.insert_seen(DEFAULT, 930, NOW).await;
            let limits = SessionLimits { grace_seconds: GRACE, idle_seconds: 600 };
            let fresh = store
                .rotate(DEFAULT, &key, &record.access_uid, &SessionId::random(), NOW + 599, limits)
                .await
                .expect("rotate");
            let Rotation::Rotated(rotated) = fresh else { panic!("{fresh:?}") };
            assert_eq!(rotated.last_seen_at, NOW + 599);
            let idle = store
                .rotate(DEFAULT, &key, &rotated.access_uid, &SessionId::random(), NOW + 1199, limits)
                .await
                .expect("rotate");
            assert_eq!(idle, Rotation::Missing, "600 s unseen: ended");
            assert_eq!(store.read(DEFAULT, &key, NOW + 1199).await, None, "and deleted");
            assert!(store.list(DEFAULT, 930, NOW + 1199).await.expect("list").is_empty());
        }

        async fn refund_takes_back_one_event_and_never_goes_below_zero(store) {
            const WINDOW: i64 = 600;
            for n in 1..=3 {
                let (count, retry_after) = store.hit_at("login:alice", WINDOW, NOW).await;
                assert_eq!(count, n);
                assert!((1..=WINDOW).contains(&retry_after), "{retry_after}");
            }
            store.refund_at("login:alice", NOW + 1).await;
            assert_eq!(store.hit_at("login:alice", WINDOW, NOW + 2).await.0, 3, "2 + 1");
            // Other counters are their own.
            assert_eq!(store.hit_at("login:bob", WINDOW, NOW + 2).await.0, 1);

            // Never below zero: five refunds of three events, then one event counts one.
            for _ in 0..5 {
                store.refund_at("login:alice", NOW + 3).await;
            }
            let (count, retry_after) = store.hit_at("login:alice", WINDOW, NOW + 4).await;
            assert_eq!(count, 1);
            assert!((1..=WINDOW).contains(&retry_after), "{retry_after}");
            assert_eq!(store.hit_at("login:bob", WINDOW, NOW + 4).await.0, 2, "untouched");

            // A counter never hit: a refund does nothing, the first event counts one.
            store.refund_at("login:carol", NOW).await;
            assert_eq!(store.hit_at("login:carol", WINDOW, NOW).await.0, 1);
        }

        // "The window stays": taking the count back to zero does not let the next event open
        // a new, full window.
        async fn refund_to_zero_keeps_the_window(store) {
            const WINDOW: i64 = 60;
            let (count, retry_after) = store.hit_at("login:dave", WINDOW, NOW).await;
            assert_eq!((count, retry_after), (1, WINDOW));
            // Redis counts the window in real time.
            tokio::time::sleep(Duration::from_millis(1100)).await;
            store.refund_at("login:dave", NOW + 2).await;
            let (count, retry_after) = store.hit_at("login:dave", WINDOW, NOW + 2).await;
            assert_eq!(count, 1);
            assert!(
                retry_after < WINDOW,
                "the window opened at the first event, not at the event after the refund: \
                 {retry_after} s left of {WINDOW}"
            );
        }

        async fn rotate_sets_last_seen_at_to_now_and_makes_the_session_most_recent(store) {
            const ID: i64 = 800;
            let (first, first_record) = store.insert_seen(DEFAULT, ID, NOW).await;
            let (second, second_record) = store.insert_seen(DEFAULT, ID, NOW + 10).await;
            let at = NOW + 20;
            let new_uid = SessionId::random();
            let Rotation::Rotated(rotated) =
                store.rotate_to(DEFAULT, &first, &first_record.access_uid, &new_uid, at).await
            else {
                panic!("the current uid must rotate");
            };
            assert_eq!(rotated.last_seen_at, at);
            assert_eq!(store.read(DEFAULT, &first, at).await, Some(rotated));
            // A grace-window replay is the same record: it does not move last_seen_at.
            assert_eq!(
                store.rotate_to(DEFAULT, &first, &first_record.access_uid, &SessionId::random(), at + 5)
                    .await,
                Rotation::Replayed(rotated)
            );
            assert_eq!(store.read(DEFAULT, &first, at + 5).await, Some(rotated));

            // The rotated session is now the most recently used: a limit of two ends the other.
            let third_record = SessionRecord { last_seen_at: at + 10, ..new_record(ID) };
            let (third, evicted) = store.insert_limited(DEFAULT, &third_record, 2, at + 10).await;
            assert_eq!(evicted, 1);
            assert_ne!(second_record.access_uid, rotated.access_uid);
            assert_eq!(store.read(DEFAULT, &second, at + 10).await, None);
            assert_eq!(store.read(DEFAULT, &first, at + 10).await, Some(rotated));
            assert_eq!(store.read(DEFAULT, &third, at + 10).await, Some(third_record));
        }
    }

    memory_only {
        // Rule 12.
        async fn sweep_removes_expired_records_and_keeps_live_ones(store) {
            let (live, live_record) = store.insert_new(DEFAULT, 1).await;
            let short = SessionRecord { expires_at: NOW + 10, ..new_record(2) };
            let short_key = key_of(2);
            store.insert(TEAM, &short_key, &short, &meta(), 0, NOW).await.expect("insert");
            let (team_live, team_live_record) = store.insert_new(TEAM, 3).await;

            // Nothing has reached its end yet.
            assert_eq!(store.sweep(NOW + 9), 0);
            assert_eq!((store.len(DEFAULT), store.len(TEAM)), (1, 2));

            // At `expires_at` the short record ends and is dropped; the others stay.
            assert_eq!(store.sweep(NOW + 10), 1);
            assert_eq!((store.len(DEFAULT), store.len(TEAM)), (1, 1));
            assert_eq!(store.read(TEAM, &short_key, NOW).await, None);
            assert_eq!(store.read(DEFAULT, &live, NOW + 10).await, Some(live_record));
            assert_eq!(store.read(TEAM, &team_live, NOW + 10).await, Some(team_live_record));

            // At the end of the long sessions, everything goes.
            assert_eq!(store.sweep(NOW + LIFE), 2);
            assert!(store.is_empty(DEFAULT) && store.is_empty(TEAM));
        }
    }

    redis_only {
        // Rule 11.
        async fn record_key_carries_hash_tag_and_expires_by_itself(store, prefix) {
            let (key, record) = store.insert_new(TEAM, 11).await;
            let record_at = record_key(&prefix, TEAM, &key);
            let index_at = index_key(&prefix, TEAM, 11);
            assert_eq!(
                record_at,
                format!("{prefix}{TEAM}:{{11}}:{}", key.ruid),
                "hash tag braces around the identity"
            );
            let client = store.client();
            assert!(exists(client, &record_at).await, "record at {record_at}");
            assert!(exists(client, &index_at).await, "index at {index_at}");
            let remaining = record.expires_at - NOW;
            for at in [&record_at, &index_at] {
                let ttl = ttl_of(client, at).await;
                assert!(
                    (remaining - 5..=remaining).contains(&ttl),
                    "TTL {ttl} of {at} should be within 5 s of {remaining}"
                );
            }
            // Both keys of one identity are in one Cluster slot.
            assert_eq!(
                fred::types::Key::from(record_at.as_str()).cluster_hash(),
                fred::types::Key::from(index_at.as_str()).cluster_hash()
            );

            // A record with one second to live disappears without anyone touching it, and so
            // does the index of an identity with nothing else.
            let short = SessionRecord { expires_at: NOW + 1, ..new_record(12) };
            let short_key = key_of(12);
            store.insert(TEAM, &short_key, &short, &meta(), 0, NOW).await.expect("insert");
            let short_at = record_key(&prefix, TEAM, &short_key);
            let short_index = index_key(&prefix, TEAM, 12);
            for at in [&short_at, &short_index] {
                let ttl = ttl_of(client, at).await;
                assert!((0..=1).contains(&ttl), "TTL {ttl} of {at}, a one-second session");
            }
            let mut gone = false;
            for _ in 0..50 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if !exists(client, &short_at).await && !exists(client, &short_index).await {
                    gone = true;
                    break;
                }
            }
            assert!(gone, "{short_at} and {short_index} should have expired by themselves");
            // The long one is untouched.
            assert_eq!(store.read(TEAM, &key, NOW).await, Some(record));
        }

        // A hash at a session's key that is not a record (foreign data, a half-written key) is
        // an error for both reads, never a session: callers fail closed.
        async fn foreign_data_at_a_session_key_is_corrupt_for_both_reads(store, prefix) {
            let client = store.client();
            let mut wrong = Vec::new();
            let full = |u: &'static str, e: &'static str| {
                vec![("u", u), ("i", "1"), ("c", "1"), ("l", "1"), ("e", e)]
            };
            for fields in [
                full("0123456789abcdef", "seven"),        // no number
                full("short", "1900000000"),              // UID neither 16 nor 32 bytes
                vec![("u", "0123456789abcdef"), ("i", "1"), ("e", "1900000000")], // no c, l
                vec![("e", "1900000000")],                // no access UID
                vec![("u", "0123456789abcdef")],          // no end
            ] {
                let key = key_of(7);
                let at = record_key(&prefix, DEFAULT, &key);
                let _: i64 = client.hset(at.as_str(), fields.clone()).await.expect("HSET");
                let got = store.get(DEFAULT, &key, NOW).await;
                if !matches!(got, Err(StoreError::Corrupt)) {
                    wrong.push(format!("get of {fields:?}: {got:?}"));
                }
                let access = store.access(DEFAULT, &key, NOW).await;
                if !matches!(access, Err(StoreError::Corrupt)) {
                    wrong.push(format!("access of {fields:?}: {access:?}"));
                }
            }
            assert!(wrong.is_empty(), "not Corrupt: {wrong:#?}");
        }

        // Records written by the earlier layout (subject `s`, previous UID `p`, rotation time
        // `r`, the address as text in `a`, the User-Agent in `g1`...) are read, listed, replayed
        // and rotated as they are; a rotation rewrites them in the current layout.
        async fn records_of_the_earlier_layout_keep_working(store, prefix) {
            const ID: i64 = 77;
            let client = store.client();
            let key = key_of(ID);
            let at = record_key(&prefix, DEFAULT, &key);
            let index = index_key(&prefix, DEFAULT, ID);
            let (current, previous) = (SessionId::random(), SessionId::random());
            let agent = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
            let fields: Vec<(&str, Value)> = vec![
                ("s", ID.into()),
                ("u", Value::Bytes(current.0.to_vec().into())),
                ("i", (NOW - 5).into()),
                ("p", Value::Bytes(previous.0.to_vec().into())),
                ("r", (NOW - 5).into()),
                ("c", (NOW - 100).into()),
                ("l", (NOW - 5).into()),
                ("e", (NOW + LIFE).into()),
                ("a", "2001:db8::7".into()),
                ("g1", agent[..64].into()),
                ("g2", agent[64..].into()),
            ];
            let _: i64 = client.hset(at.as_str(), fields).await.expect("HSET");
            let _: i64 = client
                .custom(
                    CustomCommand::new_static("ZADD", ClusterHash::FirstKey, false),
                    vec![index.clone(), (NOW - 5).to_string(), key.ruid.to_string()],
                )
                .await
                .expect("ZADD");
            let earlier = SessionRecord {
                subject: ID,
                access_uid: current,
                access_iat: NOW - 5,
                previous_uid: Some(previous),
                rotated_at: NOW - 5,
                created_at: NOW - 100,
                last_seen_at: NOW - 5,
                expires_at: NOW + LIFE,
            };
            assert_eq!(store.read(DEFAULT, &key, NOW).await, Some(earlier));
            let access = store.access(DEFAULT, &key, NOW).await.expect("access");
            assert_eq!(access.map(|a| a.access_uid), Some(current));
            let listed = store.list(DEFAULT, ID, NOW).await.expect("list");
            assert_eq!(listed.len(), 1);
            assert_eq!(listed[0].record, earlier);
            assert_eq!(listed[0].meta.ip, Some("2001:db8::7".parse().unwrap()));
            assert_eq!(listed[0].meta.user_agent, agent);

            // The earlier layout's previous UID replays inside the grace window.
            let replayed = store.rotate_to(DEFAULT, &key, &previous, &SessionId::random(), NOW).await;
            assert_eq!(replayed, Rotation::Replayed(earlier));
            // A refresh with the current UID rewrites the record in the current layout.
            let next = SessionId::random();
            let rotated = store.rotate_to(DEFAULT, &key, &current, &next, NOW).await;
            let expected = SessionRecord {
                access_uid: next,
                access_iat: NOW,
                previous_uid: Some(current),
                rotated_at: NOW,
                last_seen_at: NOW,
                ..earlier
            };
            assert_eq!(rotated, Rotation::Rotated(expected));
            let raw: std::collections::HashMap<String, Value> =
                client.hgetall(at.as_str()).await.expect("HGETALL");
            for gone in ["s", "p", "r"] {
                assert!(!raw.contains_key(gone), "{gone} left in {raw:?}");
            }
            assert_eq!(raw["u"].as_bytes().map(<[u8]>::len), Some(32));
            let listed = store.list(DEFAULT, ID, NOW).await.expect("list");
            assert_eq!(listed[0].record, expected);
            assert_eq!(listed[0].meta.user_agent, agent, "the metadata stays as it was");
            // The previous UID of the current layout replays too, and ending works.
            let replayed = store.rotate_to(DEFAULT, &key, &current, &SessionId::random(), NOW + 1).await;
            assert_eq!(replayed, Rotation::Replayed(expected));
            assert_eq!(store.end_with(DEFAULT, &key, &current, NOW + 1).await, Ending::Ended);
            assert!(!exists(client, &at).await);
        }

        // A session with an IPv6 address and a 256-byte User-Agent, refreshed, is still a
        // listpack: no value of the record is longer than 64 bytes.
        async fn a_record_stays_a_listpack_with_metadata_and_a_previous_uid(store, prefix) {
            let client = store.client();
            let key = key_of(91);
            let record = new_record(91);
            let long = SessionMeta {
                ip: Some("2001:db8:85a3::8a2e:370:7334".parse().unwrap()),
                user_agent: "x".repeat(256),
            };
            store.insert(DEFAULT, &key, &record, &long, 0, NOW).await.expect("insert");
            let next = SessionId::random();
            let rotated = store.rotate_to(DEFAULT, &key, &record.access_uid, &next, NOW).await;
            assert!(matches!(rotated, Rotation::Rotated(_)), "{rotated:?}");
            let at = record_key(&prefix, DEFAULT, &key);
            let encoding: String = client
                .custom(
                    CustomCommand::new_static("OBJECT", ClusterHash::Offset(1), false),
                    vec!["ENCODING".to_owned(), at],
                )
                .await
                .expect("OBJECT ENCODING");
            assert_eq!(encoding, "listpack");
            let listed = store.list(DEFAULT, 91, NOW).await.expect("list");
            assert_eq!(listed[0].meta, long);
        }

        // The index, read raw: exactly the live sessions, scored by last_seen_at, with a TTL;
        // every change of a session changes it in the same script.
        async fn index_holds_exactly_the_live_sessions_and_expires(store, prefix) {
            const ID: i64 = 400;
            let client = store.client();
            let index = index_key(&prefix, DEFAULT, ID);
            let (a, a_record) = store.insert_seen(DEFAULT, ID, NOW + 1).await;
            let (b, b_record) = store.insert_seen(DEFAULT, ID, NOW + 2).await;
            let (c, c_record) = store.insert_seen(DEFAULT, ID, NOW + 3).await;
            let (d, _) = store.insert_seen(DEFAULT, ID, NOW + 4).await;
            let (e, _) = store.insert_seen(DEFAULT, ID, NOW + 5).await;
            assert_eq!(
                index_members(client, &prefix, DEFAULT, ID).await,
                expected_index(&[(&a, NOW + 1), (&b, NOW + 2), (&c, NOW + 3), (&d, NOW + 4), (&e, NOW + 5)])
            );
            let ttl = ttl_of(client, &index).await;
            assert!((LIFE - 5..=LIFE).contains(&ttl), "index TTL {ttl}");

            // Touch and rotation move the score; the record's `l` field agrees.
            store.touch_at(DEFAULT, &a, NOW + 10).await;
            assert!(matches!(
                store.rotate_to(DEFAULT, &b, &b_record.access_uid, &SessionId::random(), NOW + 11)
                    .await,
                Rotation::Rotated(_)
            ));
            let seen: String = client
                .hget(record_key(&prefix, DEFAULT, &a).as_str(), "l")
                .await
                .expect("HGET");
            assert_eq!(seen, (NOW + 10).to_string());
            assert_eq!(
                index_members(client, &prefix, DEFAULT, ID).await,
                expected_index(&[(&a, NOW + 10), (&b, NOW + 11), (&c, NOW + 3), (&d, NOW + 4), (&e, NOW + 5)])
            );

            // Logout, stale logout, revoke and theft take the member out at once.
            assert_eq!(store.end_with(DEFAULT, &c, &c_record.access_uid, NOW + 12).await, Ending::Ended);
            assert_eq!(
                store.end_with(DEFAULT, &e, &SessionId::random(), NOW + 12).await,
                Ending::Superseded
            );
            assert!(store.revoked(DEFAULT, &d).await);
            assert_eq!(
                store.rotate_to(DEFAULT, &a, &SessionId::random(), &SessionId::random(), NOW + 12)
                    .await,
                Rotation::Superseded
            );
            assert_eq!(
                index_members(client, &prefix, DEFAULT, ID).await,
                expected_index(&[(&b, NOW + 11)])
            );
            let ttl = ttl_of(client, &index).await;
            assert!((LIFE - 5..=LIFE).contains(&ttl), "index TTL {ttl}");
            assert_eq!(a_record.subject, ID);

            // The last session's end leaves no key of the identity behind.
            assert!(store.revoked(DEFAULT, &b).await);
            assert!(!exists(client, &index).await, "empty index removed");
            assert_eq!(keys_matching(client, format!("{index}*")).await, Vec::<String>::new());

            // Eviction takes the evicted records and members away together.
            const CAPPED: i64 = 401;
            let (f, _) = store.insert_seen(DEFAULT, CAPPED, NOW + 1).await;
            let (g, _) = store.insert_seen(DEFAULT, CAPPED, NOW + 2).await;
            let (h, _) = store.insert_seen(DEFAULT, CAPPED, NOW + 3).await;
            let newest = SessionRecord { last_seen_at: NOW + 4, ..new_record(CAPPED) };
            let (i, evicted) = store.insert_limited(DEFAULT, &newest, 2, NOW + 4).await;
            assert_eq!(evicted, 2);
            assert_eq!(
                index_members(client, &prefix, DEFAULT, CAPPED).await,
                expected_index(&[(&h, NOW + 3), (&i, NOW + 4)])
            );
            for gone in [&f, &g] {
                assert!(!exists(client, &record_key(&prefix, DEFAULT, gone)).await);
            }

            // The index lives as long as the longest-lived session: a shorter one inserted
            // later does not shorten it, a longer one lengthens it.
            const MIXED: i64 = 402;
            let mixed_index = index_key(&prefix, DEFAULT, MIXED);
            let (_, evicted) = store
                .insert_limited(DEFAULT, &SessionRecord { expires_at: NOW + 100, ..new_record(MIXED) }, 0, NOW)
                .await;
            assert_eq!(evicted, 0);
            let ttl = ttl_of(client, &mixed_index).await;
            assert!((95..=100).contains(&ttl), "index TTL {ttl} of a 100 s session");
            store.insert_new(DEFAULT, MIXED).await;
            let ttl = ttl_of(client, &mixed_index).await;
            assert!((LIFE - 5..=LIFE).contains(&ttl), "index TTL {ttl} after a longer session");
            store
                .insert_limited(DEFAULT, &SessionRecord { expires_at: NOW + 50, ..new_record(MIXED) }, 0, NOW)
                .await;
            let ttl = ttl_of(client, &mixed_index).await;
            assert!((LIFE - 5..=LIFE).contains(&ttl), "index TTL {ttl} after a shorter session");

            // A member whose record expired by itself is dropped by the identity's next login.
            const EXPIRING: i64 = 403;
            let (gone, _) = store
                .insert_limited(DEFAULT, &SessionRecord { expires_at: NOW + 1, ..new_record(EXPIRING) }, 0, NOW)
                .await;
            let (stays, _) = store.insert_seen(DEFAULT, EXPIRING, NOW + 1).await;
            tokio::time::sleep(Duration::from_millis(1500)).await;
            assert!(!exists(client, &record_key(&prefix, DEFAULT, &gone)).await);
            let (next, evicted) = store.insert_limited(DEFAULT, &new_record(EXPIRING), 0, NOW).await;
            assert_eq!(evicted, 0);
            assert_eq!(
                index_members(client, &prefix, DEFAULT, EXPIRING).await,
                expected_index(&[(&stays, NOW + 1), (&next, NOW)])
            );
        }

        // A checked session is kept: the next checks make no round trip, and only what this
        // instance read is kept.
        async fn a_checked_session_is_served_from_the_cache(store) {
            let (key, record) = store.insert_new(DEFAULT, 610).await;
            // The insert's own invalidation message (Redis tracks a script's keys) may still
            // drop the first copy; then the copy stays.
            let first = store.cache_stats().expect("cache on");
            let mut before = first;
            for _ in 0..50 {
                assert_eq!(
                    store.access(DEFAULT, &key, NOW).await.expect("access"),
                    Some(LiveAccess::from(&record))
                );
                let now = store.cache_stats().expect("cache on");
                if now.hits > before.hits {
                    before = now;
                    break;
                }
                before = now;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert!(before.hits > first.hits, "never served from the cache: {before:?}");
            assert!(before.misses - first.misses <= 2, "{first:?} -> {before:?}");
            for _ in 0..4 {
                assert_eq!(
                    store.access(DEFAULT, &key, NOW).await.expect("access"),
                    Some(LiveAccess::from(&record))
                );
            }
            let after = store.cache_stats().expect("cache on");
            assert_eq!(after.misses, before.misses, "{before:?} -> {after:?}");
            assert_eq!(after.hits - before.hits, 4, "{before:?} -> {after:?}");
            // A missing session is read each time and never kept.
            let missing = key_of(611);
            for _ in 0..2 {
                assert_eq!(store.access(DEFAULT, &missing, NOW).await.expect("access"), None);
            }
            let last = store.cache_stats().expect("cache on");
            assert_eq!((last.hits, last.misses), (after.hits, after.misses + 2));
            // The session's end applies to a kept copy too.
            assert_eq!(store.access(DEFAULT, &key, record.expires_at).await.expect("access"), None);
        }

        // This instance's own changes apply to its next check at once: the sessions a change
        // names are dropped with its reply, the others by the invalidations a confirmation
        // waits for.
        async fn own_changes_apply_to_the_next_check_at_once(store) {
            let (key, record) = store.insert_new(DEFAULT, 620).await;
            let check = || store.access(DEFAULT, &key, NOW);
            assert_eq!(check().await.expect("access"), Some(LiveAccess::from(&record)));
            store.touch_at(DEFAULT, &key, NOW + 70).await;
            assert_eq!(check().await.expect("access").map(|a| a.last_seen_at), Some(NOW + 70));
            let new_uid = SessionId::random();
            store.rotate_to(DEFAULT, &key, &record.access_uid, &new_uid, NOW + 80).await;
            assert_eq!(check().await.expect("access").map(|a| a.access_uid), Some(new_uid));
            assert_eq!(store.end_with(DEFAULT, &key, &new_uid, NOW + 90).await, Ending::Ended);
            assert_eq!(check().await.expect("access"), None);

            let (key, _) = store.insert_new(DEFAULT, 621).await;
            held(&store, &key).await;
            assert!(store.revoked(DEFAULT, &key).await);
            assert_eq!(store.access(DEFAULT, &key, NOW).await.expect("access"), None);

            let (key, _) = store.insert_new(DEFAULT, 622).await;
            held(&store, &key).await;
            assert_eq!(store.revoke_all(DEFAULT, 622, None).await.expect("revoke_all"), 1);
            assert_eq!(store.access(DEFAULT, &key, NOW).await.expect("access"), None);

            // The per-identity cap ends the least recently used session to make room.
            let (oldest, _) = store.insert_new(DEFAULT, 623).await;
            held(&store, &oldest).await;
            let (_, evicted) = store.insert_limited(DEFAULT, &new_record(623), 1, NOW).await;
            assert_eq!(evicted, 1);
            assert_eq!(store.access(DEFAULT, &oldest, NOW).await.expect("access"), None);

            let (key, _) = store.insert_new(TEAM, 624).await;
            held_in(&store, TEAM, &key).await;
            store.flush(TEAM).await.expect("flush");
            assert_eq!(store.access(TEAM, &key, NOW).await.expect("access"), None);
        }

        // Another instance's changes apply to this one's next check at once (CONTRACT §3): a
        // kept copy is served only after a `PING` sent after the check began has come back,
        // and with it every invalidation message sent before.
        async fn changes_by_another_instance_apply_to_the_cached_copy_at_once(store, prefix) {
            let url = std::env::var("TEST_REDIS_URL").expect("TEST_REDIS_URL");
            let other = connect_redis(&url, &prefix, true).await;
            let (key, record) = store.insert_new(DEFAULT, 630).await;
            held(&store, &key).await;
            other.touch_at(DEFAULT, &key, NOW + 70).await;
            assert_eq!(store.access(DEFAULT, &key, NOW).await.expect("access").map(|a| a.last_seen_at), Some(NOW + 70));
            held(&store, &key).await;
            let new_uid = SessionId::random();
            other.rotate_to(DEFAULT, &key, &record.access_uid, &new_uid, NOW + 80).await;
            assert_eq!(store.access(DEFAULT, &key, NOW).await.expect("access").map(|a| a.access_uid), Some(new_uid));
            held(&store, &key).await;
            assert!(other.revoked(DEFAULT, &key).await);
            assert_eq!(store.access(DEFAULT, &key, NOW).await.expect("access"), None);
            // Again and again: the check right after the other's write never gets the copy.
            for subject in 1000..1200 {
                let (key, _) = store.insert_new(DEFAULT, subject).await;
                held(&store, &key).await;
                assert!(other.revoked(DEFAULT, &key).await);
                assert_eq!(store.access(DEFAULT, &key, NOW).await.expect("access"), None, "subject {subject}");
            }
            // A plain client's write (an operator's, a script's) applies at once too.
            let plain = connect_redis(&url, &prefix, false).await;
            let (key, _) = store.insert_new(DEFAULT, 631).await;
            held(&store, &key).await;
            let _: i64 = plain.client().del(record_key(&prefix, DEFAULT, &key)).await.expect("DEL");
            assert_eq!(store.access(DEFAULT, &key, NOW).await.expect("access"), None);
        }

        // After its connection drops, the cache serves nothing until tracking is on again on
        // the new connection (fred does not turn it on by itself), and then works as before.
        async fn after_a_reconnect_tracking_is_on_again(store, prefix) {
            let url = std::env::var("TEST_REDIS_URL").expect("TEST_REDIS_URL");
            let other = connect_redis(&url, &prefix, false).await;
            let (key, _) = store.insert_new(DEFAULT, 640).await;
            held(&store, &key).await;
            let before = store.cache_stats().expect("cache on");
            let id: i64 = store.client().client_id().await.expect("CLIENT ID");
            let killed: i64 = other
                .client()
                .custom(
                    CustomCommand::new_static("CLIENT", ClusterHash::FirstKey, false),
                    vec![Value::from("KILL"), Value::from("ID"), Value::from(id)],
                )
                .await
                .expect("CLIENT KILL");
            assert_eq!(killed, 1);
            // The check right after the drop is not served from the copy: its confirming
            // `PING` is answered on the new connection, whose announcement resets the cache
            // (or it fails, and the check fails closed).
            let read = store.access(DEFAULT, &key, NOW).await;
            assert!(matches!(read, Ok(Some(_)) | Err(StoreError::Unavailable(_))), "{read:?}");
            assert_eq!(store.cache_stats().expect("cache on").hits, before.hits);
            for _ in 0..200 {
                let now = store.cache_stats().expect("cache on");
                if now.resets > before.resets && now.ready {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let after = store.cache_stats().expect("cache on");
            assert!(after.resets > before.resets && after.ready, "{before:?} -> {after:?}");
            let new_id: i64 = store.client().client_id().await.expect("CLIENT ID");
            assert_ne!(new_id, id, "a new connection");
            // Kept again, and invalidated again: tracking is on for the new connection.
            assert!(store.access(DEFAULT, &key, NOW).await.expect("access").is_some());
            assert!(store.access(DEFAULT, &key, NOW).await.expect("access").is_some());
            assert!(store.cache_stats().expect("cache on").hits > after.hits);
            assert!(other.revoked(DEFAULT, &key).await);
            assert_eq!(store.access(DEFAULT, &key, NOW).await.expect("access"), None);
        }

        // With the cache off, every check reads Redis, and sees every change at once.
        async fn without_the_cache_every_check_reads_redis(store, prefix) {
            let url = std::env::var("TEST_REDIS_URL").expect("TEST_REDIS_URL");
            let plain = connect_redis(&url, &prefix, false).await;
            assert_eq!(plain.cache_stats(), None);
            let (key, record) = store.insert_new(DEFAULT, 650).await;
            assert_eq!(plain.access(DEFAULT, &key, NOW).await.expect("access"), Some(LiveAccess::from(&record)));
            assert!(store.revoked(DEFAULT, &key).await);
            assert_eq!(plain.access(DEFAULT, &key, NOW).await.expect("access"), None);
        }

        // revoke_all takes the records and the index of the identity, nothing else.
        async fn revoke_all_leaves_no_key_of_the_identity(store, prefix) {
            const ID: i64 = 901;
            let client = store.client();
            for _ in 0..3 {
                store.insert_new(DEFAULT, ID).await;
            }
            let (other, _) = store.insert_new(DEFAULT, ID + 1).await;
            let index = index_key(&prefix, DEFAULT, ID);
            assert_eq!(keys_matching(client, format!("{index}*")).await.len(), 4);
            assert_eq!(store.revoke_all(DEFAULT, ID, None).await.expect("revoke_all"), 3);
            assert_eq!(keys_matching(client, format!("{index}*")).await, Vec::<String>::new());
            assert!(exists(client, &record_key(&prefix, DEFAULT, &other)).await);
            assert_eq!(
                index_members(client, &prefix, DEFAULT, ID + 1).await,
                expected_index(&[(&other, NOW)])
            );
        }

        // Touch and refund change what exists; they never create a key.
        async fn touch_and_refund_of_missing_things_create_no_key(store, prefix) {
            const ID: i64 = 500;
            let client = store.client();
            let all = format!("{prefix}*");
            // An identity without sessions, an unknown session of one with a session.
            store.touch_at(DEFAULT, &key_of(ID), NOW).await;
            store.refund_at("login:nobody", NOW).await;
            assert_eq!(keys_matching(client, all.clone()).await, Vec::<String>::new());

            let (key, _) = store.insert_new(DEFAULT, ID + 1).await;
            let before = keys_matching(client, all.clone()).await;
            assert_eq!(before.len(), 2, "record and index: {before:?}");
            store.touch_at(DEFAULT, &key_of(ID + 1), NOW + 5).await;
            assert_eq!(keys_matching(client, all.clone()).await, before);
            assert_eq!(
                index_members(client, &prefix, DEFAULT, ID + 1).await,
                expected_index(&[(&key, NOW)]),
                "no member for the unknown session"
            );

            // After its end, a touch does not bring the session back.
            assert!(store.revoked(DEFAULT, &key).await);
            store.touch_at(DEFAULT, &key, NOW + 6).await;
            assert_eq!(keys_matching(client, all.clone()).await, Vec::<String>::new());
        }
    }
}

/// A Redis server of this test's own on a free port (killed when dropped), for a test that
/// stalls every client of its server. The port is free when chosen; another process taking it
/// in the moment before the server binds it would fail the test's start, not pass it.
struct PrivateRedis {
    port: u16,
    child: std::process::Child,
}

impl PrivateRedis {
    async fn start() -> PrivateRedis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start redis-server");
        let redis = PrivateRedis { port, child };
        for _ in 0..250 {
            if redis.cli(&["PING"]) == "PONG" {
                return redis;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the private redis-server did not answer within 5 s");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// `redis-cli` against this server: what it printed.
    fn cli(&self, args: &[&str]) -> String {
        let output = std::process::Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("run redis-cli");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// One batch of reads is out at a time (DECISIONS 119): the checks that arrive while it is out
// wait for it and then go together, so their copies are confirmed by one `PING`. The first
// check's `PING` is held by `CLIENT PAUSE`; twenty more checks come one by one meanwhile.
#[cfg_attr(not(redis_backend), ignore = "needs TEST_REDIS_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_that_arrive_while_a_batch_is_out_share_the_next_confirmation() {
    if redis_url("the private Redis server tests").is_none() {
        return;
    }
    let redis = PrivateRedis::start().await;
    let store = Arc::new(connect_redis(&redis.url(), "batching:", true).await);
    let (key, record) = store.insert_new(DEFAULT, 700).await;
    held(&store, &key).await;
    let before = store.cache_stats().expect("cache on");

    // Long enough for every check below to come while the first is held, and shorter than
    // the 2 s command timeout.
    assert_eq!(redis.cli(&["CLIENT", "PAUSE", "1500", "ALL"]), "OK");
    let check = || {
        let store = store.clone();
        tokio::spawn(async move { store.access(DEFAULT, &key, NOW).await })
    };
    let mut checks = vec![check()];
    tokio::time::sleep(Duration::from_millis(50)).await;
    for _ in 0..20 {
        checks.push(check());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for answer in futures::future::join_all(checks).await {
        let access = answer.expect("a check panicked").expect("access");
        assert_eq!(access, Some(LiveAccess::from(&record)));
    }
    let after = store.cache_stats().expect("cache on");
    assert_eq!(after.hits - before.hits, 21, "{before:?} -> {after:?}");
    assert_eq!(
        after.confirmations - before.confirmations,
        2,
        "the first check's PING, then one for the twenty that came while it was out"
    );
}

// A hung Redis fails every check closed within the command timeout, however many batches are
// queued behind the one that is out: 600 checks at once make three batches, which one after
// the other would take three timeouts.
#[cfg_attr(not(redis_backend), ignore = "needs TEST_REDIS_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_redis_fails_every_queued_check_within_the_command_timeout() {
    const TIMEOUT: Duration = Duration::from_millis(500);
    if redis_url("the private Redis server tests").is_none() {
        return;
    }
    let redis = PrivateRedis::start().await;
    let store = RedisStore::connect(RedisStoreConfig {
        url: redis.url(),
        key_prefix: "hung:".to_owned(),
        command_timeout: TIMEOUT,
        cache_sessions: false,
    })
    .await
    .expect("connect the private server");
    store.ping().await.expect("the private server answers");
    let store = Arc::new(store);

    assert_eq!(redis.cli(&["CLIENT", "PAUSE", "4000", "ALL"]), "OK");
    let started = std::time::Instant::now();
    let checks = (0..600).map(|subject| {
        let store = store.clone();
        tokio::spawn(async move { store.access(DEFAULT, &key_of(subject), NOW).await })
    });
    for answer in futures::future::join_all(checks).await {
        let read = answer.expect("a check panicked");
        assert!(matches!(read, Err(StoreError::Unavailable(_))), "{read:?}");
    }
    let took = started.elapsed();
    assert!(took < TIMEOUT * 2, "every check failed after {took:?}");
}
