//! The behaviour every `TokenStore` promises, checked against each backend with the same tests.
//!
//! `mod memory` always runs. `mod redis` runs when `TEST_REDIS_URL` is set; with
//! `REQUIRE_EXTERNAL_BACKENDS=1` a missing URL fails the Redis tests instead of skipping them.
//! Every Redis test works under its own random key prefix, so the tests run in parallel, and
//! removes its keys afterwards.

use std::sync::Arc;
use std::time::Duration;

use fred::prelude::*;
use fred::types::scan::Scanner;
use futures::StreamExt;
use sessions::store::{Ending, MemoryStore, RedisStore, RedisStoreConfig, Rotation};
use sessions::{LiveAccess, SessionId, SessionRecord, StoreError, TokenStore};

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
        expires_at: NOW + LIFE,
    }
}

fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("operating system random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Shorthands over any store (also reached through `Arc`).
trait StoreExt: TokenStore {
    /// Inserts a fresh session at `NOW` and returns its refresh UID and record.
    async fn insert_new(&self, namespace: &str, subject: i64) -> (SessionId, SessionRecord) {
        let ruid = SessionId::random();
        let record = new_record(subject);
        self.insert(namespace, &ruid, &record, NOW)
            .await
            .expect("insert");
        (ruid, record)
    }

    /// The record `get` returns; every read also checks that the narrow `access` read agrees.
    async fn read(&self, namespace: &str, ruid: &SessionId, now: i64) -> Option<SessionRecord> {
        let record = self.get(namespace, ruid, now).await.expect("get");
        let access = self.access(namespace, ruid, now).await.expect("access");
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
        ruid: &SessionId,
        presented: &SessionId,
        new_uid: &SessionId,
        now: i64,
    ) -> Rotation {
        self.rotate(namespace, ruid, presented, new_uid, now, GRACE)
            .await
            .expect("rotate")
    }

    async fn end_with(
        &self,
        namespace: &str,
        ruid: &SessionId,
        presented: &SessionId,
        now: i64,
    ) -> Ending {
        self.end(namespace, ruid, presented, now, GRACE)
            .await
            .expect("end")
    }
}

impl<S: TokenStore> StoreExt for S {}

/// A `RedisStore` under a fresh `careers-test:<hex>:` prefix, or `None` (skip) without
/// `TEST_REDIS_URL`, unless `REQUIRE_EXTERNAL_BACKENDS=1` demands it.
async fn redis_store() -> Option<(RedisStore, String)> {
    let Ok(url) = std::env::var("TEST_REDIS_URL") else {
        assert!(
            std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() != Ok("1"),
            "REQUIRE_EXTERNAL_BACKENDS=1 but TEST_REDIS_URL is not set"
        );
        eprintln!("skipped: the Redis store suite needs TEST_REDIS_URL");
        return None;
    };
    let key_prefix = format!("careers-test:{}:", random_hex());
    let store = RedisStore::connect(RedisStoreConfig {
        url,
        key_prefix: key_prefix.clone(),
        command_timeout: Duration::from_secs(2),
    })
    .await
    .expect("connect TEST_REDIS_URL");
    store.ping().await.expect("Redis at TEST_REDIS_URL answers");
    Some((store, key_prefix))
}

/// Deletes every key under the test's prefix (whatever the store's own `flush` does).
async fn delete_prefix(client: &Client, prefix: &str) {
    let mut keys = Vec::new();
    let mut pages = client.scan(format!("{prefix}*"), Some(1000), None);
    while let Some(page) = pages.next().await {
        let mut page = page.expect("scan test keys");
        keys.extend(page.take_results().unwrap_or_default());
        page.next();
    }
    for key in keys {
        let _: i64 = client.del(key).await.expect("delete test key");
    }
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
        // Rule 1.
        async fn insert_then_get_returns_identical_record(store) {
            let (ruid, record) = store.insert_new(DEFAULT, 42).await;
            assert_eq!(store.read(DEFAULT, &ruid, NOW).await, Some(record));
            // Unknown ruid.
            assert_eq!(store.read(DEFAULT, &SessionId::random(), NOW).await, None);
            // Namespaces are isolated: same ruid, other namespace.
            assert_eq!(store.read(TEAM, &ruid, NOW).await, None);
            // A record under the same ruid in "team" does not disturb the "default" one.
            let other = new_record(7);
            store.insert(TEAM, &ruid, &other, NOW).await.expect("insert");
            assert_eq!(store.read(TEAM, &ruid, NOW).await, Some(other));
            assert_eq!(store.read(DEFAULT, &ruid, NOW).await, Some(record));
        }

        // Rule 2.
        async fn get_returns_none_from_expires_at(store) {
            let (ruid, record) = store.insert_new(DEFAULT, 1).await;
            assert_eq!(store.read(DEFAULT, &ruid, record.expires_at - 1).await, Some(record));
            assert_eq!(store.read(DEFAULT, &ruid, record.expires_at).await, None);
            assert_eq!(store.read(DEFAULT, &ruid, record.expires_at + 1).await, None);
        }

        // Rule 3.
        async fn rotate_with_current_uid_rotates(store) {
            let (ruid, record) = store.insert_new(DEFAULT, 5).await;
            let new_uid = SessionId::random();
            let at = NOW + 60;
            let outcome = store.rotate_to(DEFAULT, &ruid, &record.access_uid, &new_uid, at).await;
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
                expires_at: record.expires_at,
            };
            assert_eq!(rotated, expected);
            assert_eq!(store.read(DEFAULT, &ruid, at).await, Some(expected));
            // The new uid is now the current one and rotates in turn.
            let third = SessionId::random();
            let again = store.rotate_to(DEFAULT, &ruid, &new_uid, &third, at + 1).await;
            let expected_again = SessionRecord {
                access_uid: third,
                access_iat: at + 1,
                previous_uid: Some(new_uid),
                rotated_at: at + 1,
                ..expected
            };
            assert_eq!(again, Rotation::Rotated(expected_again));
            assert_eq!(store.read(DEFAULT, &ruid, at + 1).await, Some(expected_again));
        }

        // Rule 4.
        async fn rotate_with_previous_uid_replays_within_grace_then_supersedes(store) {
            let (ruid, record) = store.insert_new(DEFAULT, 9).await;
            let first = SessionId::random();
            let at = NOW + 60;
            let Rotation::Rotated(rotated) =
                store.rotate_to(DEFAULT, &ruid, &record.access_uid, &first, at).await
            else {
                panic!("the current uid must rotate");
            };
            // Same second, and the last second of the window: the same result, no second rotation.
            for now in [at, at + GRACE - 1] {
                let outcome = store
                    .rotate_to(DEFAULT, &ruid, &record.access_uid, &SessionId::random(), now)
                    .await;
                assert_eq!(outcome, Rotation::Replayed(rotated), "at rotated_at + {}", now - at);
                assert_eq!(store.read(DEFAULT, &ruid, now).await, Some(rotated));
                assert_eq!(rotated.access_uid, first);
            }
            // Exactly `grace` seconds later the previous uid is stale: theft, session ended.
            let outcome = store
                .rotate_to(DEFAULT, &ruid, &record.access_uid, &SessionId::random(), at + GRACE)
                .await;
            assert_eq!(outcome, Rotation::Superseded);
            assert_eq!(store.read(DEFAULT, &ruid, at + GRACE).await, None);
            // And the legitimate current uid can no longer rotate it back.
            assert_eq!(
                store.rotate_to(DEFAULT, &ruid, &first, &SessionId::random(), at + GRACE).await,
                Rotation::Missing
            );
        }

        // Rule 5.
        async fn rotate_with_unrelated_uid_supersedes_and_deletes(store) {
            // Never rotated: an unknown uid.
            let (ruid, _) = store.insert_new(DEFAULT, 3).await;
            let outcome = store
                .rotate_to(DEFAULT, &ruid, &SessionId::random(), &SessionId::random(), NOW + 1)
                .await;
            assert_eq!(outcome, Rotation::Superseded);
            assert_eq!(store.read(DEFAULT, &ruid, NOW + 1).await, None);

            // Rotated twice: the uid of two rotations ago is neither current nor previous,
            // even inside the grace window.
            let (ruid, record) = store.insert_new(DEFAULT, 4).await;
            let second = SessionId::random();
            let third = SessionId::random();
            assert!(matches!(
                store.rotate_to(DEFAULT, &ruid, &record.access_uid, &second, NOW + 1).await,
                Rotation::Rotated(_)
            ));
            assert!(matches!(
                store.rotate_to(DEFAULT, &ruid, &second, &third, NOW + 2).await,
                Rotation::Rotated(_)
            ));
            let outcome = store
                .rotate_to(DEFAULT, &ruid, &record.access_uid, &SessionId::random(), NOW + 3)
                .await;
            assert_eq!(outcome, Rotation::Superseded);
            assert_eq!(store.read(DEFAULT, &ruid, NOW + 3).await, None);
        }

        // Rule 6.
        async fn rotate_on_missing_or_expired_record_is_missing(store) {
            let never = SessionId::random();
            let outcome = store
                .rotate_to(DEFAULT, &never, &SessionId::random(), &SessionId::random(), NOW)
                .await;
            assert_eq!(outcome, Rotation::Missing);
            assert_eq!(store.read(DEFAULT, &never, NOW).await, None);

            // Exists in another namespace only.
            let (ruid, record) = store.insert_new(TEAM, 2).await;
            let outcome = store
                .rotate_to(DEFAULT, &ruid, &record.access_uid, &SessionId::random(), NOW)
                .await;
            assert_eq!(outcome, Rotation::Missing);
            assert_eq!(store.read(DEFAULT, &ruid, NOW).await, None);
            assert_eq!(store.read(TEAM, &ruid, NOW).await, Some(record));

            // Expired: presenting the current uid at `expires_at` finds nothing.
            let (ruid, record) = store.insert_new(DEFAULT, 2).await;
            let outcome = store
                .rotate_to(
                    DEFAULT,
                    &ruid,
                    &record.access_uid,
                    &SessionId::random(),
                    record.expires_at,
                )
                .await;
            assert_eq!(outcome, Rotation::Missing);
            assert_eq!(store.read(DEFAULT, &ruid, record.expires_at).await, None);
        }

        // Rule 7.
        async fn end_ends_current_and_grace_uids_supersedes_stale_and_reports_missing(store) {
            // The current uid.
            let (ruid, record) = store.insert_new(DEFAULT, 1).await;
            assert_eq!(
                store.end_with(DEFAULT, &ruid, &record.access_uid, NOW + 1).await,
                Ending::Ended
            );
            assert_eq!(store.read(DEFAULT, &ruid, NOW + 1).await, None);
            // Ending twice finds nothing.
            assert_eq!(
                store.end_with(DEFAULT, &ruid, &record.access_uid, NOW + 1).await,
                Ending::Missing
            );

            // The previous uid inside the grace window (last second of it).
            let (ruid, record) = store.insert_new(DEFAULT, 2).await;
            let at = NOW + 60;
            assert!(matches!(
                store.rotate_to(DEFAULT, &ruid, &record.access_uid, &SessionId::random(), at).await,
                Rotation::Rotated(_)
            ));
            assert_eq!(
                store.end_with(DEFAULT, &ruid, &record.access_uid, at + GRACE - 1).await,
                Ending::Ended
            );
            assert_eq!(store.read(DEFAULT, &ruid, at + GRACE - 1).await, None);

            // The previous uid once the window has closed: superseded, ended all the same.
            let (ruid, record) = store.insert_new(DEFAULT, 3).await;
            assert!(matches!(
                store.rotate_to(DEFAULT, &ruid, &record.access_uid, &SessionId::random(), at).await,
                Rotation::Rotated(_)
            ));
            assert_eq!(
                store.end_with(DEFAULT, &ruid, &record.access_uid, at + GRACE).await,
                Ending::Superseded
            );
            assert_eq!(store.read(DEFAULT, &ruid, at + GRACE).await, None);

            // An unrelated uid: superseded, ended all the same.
            let (ruid, _) = store.insert_new(DEFAULT, 4).await;
            assert_eq!(
                store.end_with(DEFAULT, &ruid, &SessionId::random(), NOW).await,
                Ending::Superseded
            );
            assert_eq!(store.read(DEFAULT, &ruid, NOW).await, None);

            // Missing: never existed, or expired.
            assert_eq!(
                store.end_with(DEFAULT, &SessionId::random(), &SessionId::random(), NOW).await,
                Ending::Missing
            );
            let (ruid, record) = store.insert_new(DEFAULT, 5).await;
            assert_eq!(
                store.end_with(DEFAULT, &ruid, &record.access_uid, record.expires_at).await,
                Ending::Missing
            );
            assert_eq!(store.read(DEFAULT, &ruid, NOW).await, None);
        }

        // Rule 8.
        async fn concurrent_rotates_of_one_uid_rotate_exactly_once(store) {
            const RACERS: usize = 50;
            let (ruid, record) = store.insert_new(DEFAULT, 8).await;
            let at = NOW + 60;
            let new_uids: Vec<SessionId> = (0..RACERS).map(|_| SessionId::random()).collect();
            let barrier = Arc::new(tokio::sync::Barrier::new(RACERS));
            let tasks = new_uids.iter().map(|new_uid| {
                let (store, barrier, new_uid) = (store.clone(), barrier.clone(), *new_uid);
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.rotate_to(DEFAULT, &ruid, &record.access_uid, &new_uid, at).await
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
            assert_eq!(store.read(DEFAULT, &ruid, at).await, Some(winner));
        }

        // Rule 9.
        async fn end_racing_rotates_leaves_no_session(store) {
            const RACERS: usize = 50;
            for round in 0..5 {
                let (ruid, record) = store.insert_new(DEFAULT, round).await;
                let at = NOW + 60;
                let barrier = Arc::new(tokio::sync::Barrier::new(RACERS + 1));
                let rotations = futures::future::join_all((0..RACERS).map(|_| {
                    let (store, barrier) = (store.clone(), barrier.clone());
                    tokio::spawn(async move {
                        barrier.wait().await;
                        store
                            .rotate_to(DEFAULT, &ruid, &record.access_uid, &SessionId::random(), at)
                            .await
                    })
                }));
                let ending = {
                    let (store, barrier) = (store.clone(), barrier.clone());
                    tokio::spawn(async move {
                        barrier.wait().await;
                        store.end_with(DEFAULT, &ruid, &record.access_uid, at).await
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
                assert_eq!(store.read(DEFAULT, &ruid, at).await, None, "round {round}");
                // Nothing can bring it back: not the old uid, not whichever uid won.
                assert_eq!(
                    store
                        .rotate_to(DEFAULT, &ruid, &record.access_uid, &SessionId::random(), at)
                        .await,
                    Rotation::Missing
                );
                if let Some(Rotation::Rotated(won)) =
                    rotations.iter().find(|o| matches!(o, Rotation::Rotated(_)))
                {
                    assert_eq!(
                        store
                            .rotate_to(DEFAULT, &ruid, &won.access_uid, &SessionId::random(), at)
                            .await,
                        Rotation::Missing
                    );
                }
                assert_eq!(store.read(DEFAULT, &ruid, at).await, None, "round {round}");
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

            assert_eq!(store.flush(TEAM).await.expect("flush"), 3);
            for (ruid, _) in &team {
                assert_eq!(store.read(TEAM, ruid, NOW).await, None);
            }
            for (ruid, record) in &default {
                assert_eq!(store.read(DEFAULT, ruid, NOW).await, Some(*record));
            }
            assert_eq!(store.read("teamwork", &teamwork, NOW).await, Some(teamwork_record));

            // Nothing left, or never anything: zero.
            assert_eq!(store.flush(TEAM).await.expect("flush"), 0);
            assert_eq!(store.flush("nobody-here").await.expect("flush"), 0);
            // The survivors are still there.
            for (ruid, record) in &default {
                assert_eq!(store.read(DEFAULT, ruid, NOW).await, Some(*record));
            }
        }
    }

    memory_only {
        // Rule 12.
        async fn sweep_removes_expired_records_and_keeps_live_ones(store) {
            let (live, live_record) = store.insert_new(DEFAULT, 1).await;
            let short = SessionRecord { expires_at: NOW + 10, ..new_record(2) };
            let short_ruid = SessionId::random();
            store.insert(TEAM, &short_ruid, &short, NOW).await.expect("insert");
            let (team_live, team_live_record) = store.insert_new(TEAM, 3).await;

            // Nothing has reached its end yet.
            assert_eq!(store.sweep(NOW + 9), 0);
            assert_eq!((store.len(DEFAULT), store.len(TEAM)), (1, 2));

            // At `expires_at` the short record ends and is dropped; the others stay.
            assert_eq!(store.sweep(NOW + 10), 1);
            assert_eq!((store.len(DEFAULT), store.len(TEAM)), (1, 1));
            assert_eq!(store.read(TEAM, &short_ruid, NOW).await, None);
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
            let (ruid, record) = store.insert_new(TEAM, 11).await;
            let key = format!("{prefix}{TEAM}:{{{ruid}}}");
            assert!(key.ends_with(&format!(":{{{ruid}}}")), "hash tag braces around the ruid");
            let client = store.client();
            let exists: i64 = client.exists(key.as_str()).await.expect("EXISTS");
            assert_eq!(exists, 1, "record at {key}");
            let ttl: i64 = client.ttl(key.as_str()).await.expect("TTL");
            let remaining = record.expires_at - NOW;
            assert!(
                (remaining - 5..=remaining).contains(&ttl),
                "TTL {ttl} should be within 5 s of {remaining}"
            );

            // A record with one second to live disappears without anyone touching it.
            let short = SessionRecord { expires_at: NOW + 1, ..new_record(12) };
            let short_ruid = SessionId::random();
            store.insert(TEAM, &short_ruid, &short, NOW).await.expect("insert");
            let short_key = format!("{prefix}{TEAM}:{{{short_ruid}}}");
            let ttl: i64 = client.ttl(short_key.as_str()).await.expect("TTL");
            assert!((0..=1).contains(&ttl), "TTL {ttl} of a one-second session");
            let mut gone = false;
            for _ in 0..50 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let exists: i64 = client.exists(short_key.as_str()).await.expect("EXISTS");
                if exists == 0 {
                    gone = true;
                    break;
                }
            }
            assert!(gone, "{short_key} should have expired by itself");
            // The long one is untouched.
            assert_eq!(store.read(TEAM, &ruid, NOW).await, Some(record));
        }

        // A hash at a session's key that is not a record (foreign data, a half-written key) is
        // an error for both reads, never a session: callers fail closed.
        async fn foreign_data_at_a_session_key_is_corrupt_for_both_reads(store, prefix) {
            let client = store.client();
            for fields in [
                vec![("s", "7")],                                          // no access UID
                vec![("s", "seven"), ("u", "0123456789abcdef"), ("e", "1")], // no number
                vec![("s", "7"), ("u", "short"), ("e", "1900000000")],     // UID not 16 bytes
            ] {
                let ruid = SessionId::random();
                let key = format!("{prefix}{DEFAULT}:{{{ruid}}}");
                let _: i64 = client.hset(key.as_str(), fields.clone()).await.expect("HSET");
                let got = store.get(DEFAULT, &ruid, NOW).await;
                assert!(matches!(got, Err(StoreError::Corrupt)), "get of {fields:?}: {got:?}");
                let access = store.access(DEFAULT, &ruid, NOW).await;
                assert!(
                    matches!(access, Err(StoreError::Corrupt)),
                    "access of {fields:?}: {access:?}"
                );
            }
        }
    }
}
