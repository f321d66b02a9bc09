//! The engine over a store: security events are logged at warn, with the identity id and no
//! secrets; a stale token ends its session; a login ends the session its browser held.
//!
//! Every test runs on the in-memory store and, when `TEST_REDIS_URL` is set, again on Redis
//! (under a random key prefix of its own, removed afterwards); with
//! `REQUIRE_EXTERNAL_BACKENDS=1` a missing URL fails instead of skipping Redis.

use std::future::Future;
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fred::prelude::*;
use fred::types::scan::Scanner;
use futures::{FutureExt, StreamExt};
use http::{HeaderMap, HeaderValue, Method, header};
use sessions::store::{MemoryStore, RedisStore, RedisStoreConfig};
use sessions::{
    AnyStore, Clock, CookieDomain, CookiePolicy, IssuedAccess, ManualClock, OriginPolicy, SameSite,
    SessionContext, SessionEngine, SessionError, SessionKey, SessionPolicy, SessionRecord,
    SigningSecret, TokenKeys, TokenStore,
};

const USER: SessionContext = SessionContext {
    name: "user",
    payload_key: "user_id",
    access_cookie: "jwt_access",
    csrf_cookie: "CSRF_TOKEN",
    namespace: "default",
};

const ADMIN: SessionContext = SessionContext {
    name: "admin",
    payload_key: "admin_id",
    access_cookie: "admin_jwt_access",
    csrf_cookie: "ADMIN_CSRF_TOKEN",
    namespace: "team",
};

/// The default policy with a session life short enough for Redis leftovers to expire soon.
fn policy() -> SessionPolicy {
    SessionPolicy {
        session_seconds: 6 * 3600,
        ..SessionPolicy::default()
    }
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The access cookie of `context` and the CSRF header, as a browser sends them.
fn headers_for(context: &SessionContext, access: &str, csrf: &str) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert(
        header::COOKIE,
        HeaderValue::from_str(&format!("{}={access}", context.access_cookie)).unwrap(),
    );
    map.insert("x-csrf-token", HeaderValue::from_str(csrf).unwrap());
    map
}

fn headers(access: &str, csrf: &str) -> HeaderMap {
    headers_for(&USER, access, csrf)
}

/// A `Cookie` header carrying every `(name, value)` pair.
fn cookies<V: AsRef<str>>(pairs: &[(&str, V)]) -> HeaderMap {
    let line = pairs
        .iter()
        .map(|(name, value)| format!("{name}={}", value.as_ref()))
        .collect::<Vec<_>>()
        .join("; ");
    let mut map = HeaderMap::new();
    map.insert(header::COOKIE, HeaderValue::from_str(&line).unwrap());
    map
}

fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("operating system random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One engine over one backend, its clock, and what it logged.
struct Setup {
    backend: &'static str,
    engine: SessionEngine,
    clock: Arc<ManualClock>,
    log: Captured,
}

impl Setup {
    fn session_key(&self, context: &SessionContext, issued: &IssuedAccess) -> SessionKey {
        self.engine
            .keys()
            .verify(context, &issued.access_token)
            .expect("an issued token verifies")
            .session_key()
    }

    /// The stored session behind `issued`, if it is alive.
    async fn session(
        &self,
        context: &SessionContext,
        issued: &IssuedAccess,
    ) -> Option<SessionRecord> {
        self.engine
            .store()
            .get(
                context.namespace,
                &self.session_key(context, issued),
                self.clock.now(),
            )
            .await
            .expect("store get")
    }

    async fn open(&self, context: &SessionContext, subject: i64) -> IssuedAccess {
        self.engine
            .open(context, subject, &HeaderMap::new(), None, false)
            .await
            .expect("open")
    }

    async fn get(
        &self,
        context: &SessionContext,
        issued: &IssuedAccess,
    ) -> Result<sessions::Authenticated, SessionError> {
        self.engine
            .authenticate(
                context,
                &Method::GET,
                &headers_for(context, &issued.access_token, &issued.csrf),
            )
            .await
    }

    fn events(&self) -> Vec<serde_json::Value> {
        let log = self.log_text();
        log.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn log_text(&self) -> String {
        String::from_utf8(self.log.0.lock().unwrap().clone()).unwrap()
    }

    /// Whether an event at `level` for identity `subject` says `needle`. The identity is named
    /// as its context names it (`user_id`, `admin_id`), never under another key.
    fn logged(&self, level: &str, subject: i64, needle: &str) -> bool {
        self.events().iter().any(|e| {
            let fields = &e["fields"];
            let named = match fields["context"].as_str() {
                Some("admin") => fields["admin_id"] == subject && fields["user_id"].is_null(),
                _ => fields["user_id"] == subject && fields["admin_id"].is_null(),
            };
            e["level"] == level
                && named
                && e["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(needle))
        })
    }

    fn assert_no_secret_logged(&self, issued: &[&IssuedAccess]) {
        let log = self.log_text();
        for access in issued {
            assert!(
                !log.contains(access.access_token.as_str()) && !log.contains(access.csrf.as_str()),
                "a credential is in the log"
            );
        }
    }
}

/// The stores to run on: memory always, Redis under a fresh prefix with `TEST_REDIS_URL`.
async fn stores() -> Vec<(&'static str, AnyStore, Option<String>)> {
    let mut stores = vec![("memory", AnyStore::Memory(MemoryStore::new()), None)];
    match std::env::var("TEST_REDIS_URL") {
        Ok(url) => {
            let prefix = format!("careers-test:{}:", random_hex());
            let store = RedisStore::connect(RedisStoreConfig {
                url,
                key_prefix: prefix.clone(),
                command_timeout: Duration::from_secs(2),
                cache_sessions: true,
            })
            .await
            .expect("connect TEST_REDIS_URL");
            store.ping().await.expect("Redis at TEST_REDIS_URL answers");
            stores.push(("redis", AnyStore::Redis(store), Some(prefix)));
        }
        Err(_) => {
            assert!(
                std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() != Ok("1"),
                "REQUIRE_EXTERNAL_BACKENDS=1 but TEST_REDIS_URL is not set"
            );
            eprintln!("skipped on Redis: TEST_REDIS_URL is not set");
        }
    }
    stores
}

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

/// Runs `test` on an engine with `policy` over every store, each with its own clock and log
/// capture; a Redis run removes its keys however the test ends.
async fn on_every_store<F, Fut>(policy: SessionPolicy, test: F)
where
    F: Fn(Arc<Setup>) -> Fut,
    Fut: Future<Output = ()>,
{
    for (backend, store, prefix) in stores().await {
        let clock = Arc::new(ManualClock::new());
        let log = Captured::default();
        let engine = SessionEngine::new(
            TokenKeys::new(&SigningSecret::new(vec![7u8; 32]).unwrap()),
            store,
            clock.clone(),
            CookiePolicy {
                secure: true,
                same_site: SameSite::None,
                domain: CookieDomain::FromHost,
                partitioned: vec![],
            },
            OriginPolicy::new(None),
            policy,
        );
        let setup = Arc::new(Setup {
            backend,
            engine,
            clock,
            log: log.clone(),
        });
        let writer = log.clone();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_writer(move || writer.clone())
            .finish();
        let outcome = {
            let _guard = tracing::subscriber::set_default(subscriber);
            AssertUnwindSafe(test(setup.clone())).catch_unwind().await
        };
        if let (Some(prefix), AnyStore::Redis(redis)) = (prefix, setup.engine.store()) {
            delete_prefix(redis.client(), &prefix).await;
        }
        if let Err(panic) = outcome {
            eprintln!("failed on the {} store", setup.backend);
            std::panic::resume_unwind(panic);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_theft_and_csrf_failures_are_logged_at_warn_with_the_identity() {
    on_every_store(policy(), |s| async move {
        let engine = &s.engine;
        let first = s.open(&USER, 42).await;
        let old = headers(&first.access_token, &first.csrf);
        let wrong_csrf = headers(&first.access_token, "not-the-csrf-token");
        assert!(matches!(
            engine.refresh(&USER, &wrong_csrf).await,
            Err(SessionError::CsrfFailed)
        ));
        let second = engine.refresh(&USER, &old).await.unwrap();
        s.clock.advance(engine.policy().grace_seconds);
        assert!(matches!(
            engine.refresh(&USER, &old).await,
            Err(SessionError::SessionEnded)
        ));

        let log = s.log_text();
        assert!(s.logged("WARN", 42, "CSRF check failed"), "{log}");
        assert!(s.logged("WARN", 42, "possible theft"), "{log}");
        s.assert_no_secret_logged(&[&first, &second]);
    })
    .await;
}

/// A request that still carries the token a refresh replaced a moment ago is a concurrent
/// request of the same browser: refused, and the session lives on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn superseded_token_within_the_grace_window_is_refused_and_the_session_survives() {
    on_every_store(policy(), |s| async move {
        let engine = &s.engine;
        let grace = engine.policy().grace_seconds;
        let first = s.open(&USER, 42).await;
        s.clock.advance(5);
        let second = engine
            .refresh(&USER, &headers(&first.access_token, &first.csrf))
            .await
            .unwrap();
        let replaced_at = s.clock.now();
        for at in [0, grace - 1] {
            s.clock.advance(at - (s.clock.now() - replaced_at));
            for method in [Method::GET, Method::POST] {
                let outcome = engine
                    .authenticate(&USER, &method, &headers(&first.access_token, &first.csrf))
                    .await;
                assert!(
                    matches!(outcome, Err(SessionError::SessionEnded)),
                    "{method} at replaced + {at}: {outcome:?}"
                );
            }
            let current = s
                .get(&USER, &second)
                .await
                .expect("the current token works");
            assert_eq!(current.key(), s.session_key(&USER, &second));
            assert!(s.session(&USER, &second).await.is_some(), "session alive");
        }
        let log = s.log_text();
        assert!(!s.logged("WARN", 42, "possible theft"), "{log}");
        s.assert_no_secret_logged(&[&first, &second]);
    })
    .await;
}

/// The token a refresh replaced, presented once the grace window has closed, is a copy that
/// outlived its browser's cookie: the whole session ends, for the thief and the owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn superseded_token_after_the_grace_window_ends_the_session_and_warns() {
    on_every_store(policy(), |s| async move {
        let engine = &s.engine;
        let grace = engine.policy().grace_seconds;
        let first = s.open(&USER, 42).await;
        let bystander = s.open(&USER, 42).await;
        s.clock.advance(5);
        let second = engine
            .refresh(&USER, &headers(&first.access_token, &first.csrf))
            .await
            .unwrap();
        s.clock.advance(grace);
        // A safe method, no CSRF: the stolen cookie is all a thief needs to try.
        assert!(matches!(
            s.get(&USER, &first).await,
            Err(SessionError::SessionEnded)
        ));
        assert!(s.session(&USER, &second).await.is_none(), "session ended");
        assert!(matches!(
            s.get(&USER, &second).await,
            Err(SessionError::SessionEnded)
        ));
        assert!(matches!(
            engine
                .refresh(&USER, &headers(&second.access_token, &second.csrf))
                .await,
            Err(SessionError::SessionEnded)
        ));
        // The identity's other session is not that one.
        s.get(&USER, &bystander)
            .await
            .expect("another session of the identity lives on");

        let log = s.log_text();
        assert!(s.logged("WARN", 42, "possible theft"), "{log}");
        let warned = s
            .events()
            .iter()
            .filter(|e| e["level"] == "WARN" && e["fields"]["context"] == "user")
            .count();
        assert_eq!(warned, 1, "one theft, one warning: {log}");
        s.assert_no_secret_logged(&[&first, &second, &bystander]);
    })
    .await;
}

/// A login in a browser that still holds a session of the same context ends that session; a
/// cookie of another context is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_ends_the_session_of_the_same_contexts_cookie_and_ignores_other_contexts() {
    on_every_store(policy(), |s| async move {
        let engine = &s.engine;
        let earlier = s.open(&USER, 42).await;
        let admin = s.open(&ADMIN, 42).await;
        let elsewhere = s.open(&USER, 42).await;

        // The browser sends both contexts' cookies with its new user login.
        let sent = cookies(&[
            (ADMIN.access_cookie, &admin.access_token),
            (USER.access_cookie, &earlier.access_token),
            (USER.csrf_cookie, &earlier.csrf),
        ]);
        let later = engine
            .open(&USER, 42, &sent, None, false)
            .await
            .expect("open");
        assert!(s.session(&USER, &earlier).await.is_none(), "earlier ended");
        assert!(matches!(
            s.get(&USER, &earlier).await,
            Err(SessionError::SessionEnded)
        ));
        s.get(&USER, &later).await.expect("the new session works");
        s.get(&ADMIN, &admin)
            .await
            .expect("the admin session is not this login's");
        s.get(&USER, &elsewhere)
            .await
            .expect("the identity's session in another browser lives on");
        let log = s.log_text();
        assert!(s.logged("INFO", 42, "replaced by a new login"), "{log}");

        // Only another context's cookie: nothing ends.
        let admin_only = cookies(&[(ADMIN.access_cookie, &admin.access_token)]);
        let third = engine
            .open(&USER, 42, &admin_only, None, false)
            .await
            .expect("open");
        s.get(&ADMIN, &admin).await.expect("admin session intact");
        s.get(&USER, &later).await.expect("user session intact");
        // Another context's token under this context's cookie name does not verify here.
        let misplaced = cookies(&[(USER.access_cookie, &admin.access_token)]);
        engine
            .open(&USER, 42, &misplaced, None, false)
            .await
            .expect("open");
        s.get(&ADMIN, &admin).await.expect("admin session intact");
        // An admin login in the same browser ends the admin session only.
        let both = cookies(&[
            (USER.access_cookie, &third.access_token),
            (ADMIN.access_cookie, &admin.access_token),
        ]);
        let admin_again = engine
            .open(&ADMIN, 42, &both, None, false)
            .await
            .expect("open");
        assert!(s.session(&ADMIN, &admin).await.is_none(), "admin replaced");
        s.get(&ADMIN, &admin_again)
            .await
            .expect("new admin session");
        s.get(&USER, &third).await.expect("user session intact");

        // The browser's session is ended whoever logs in next in it.
        let switch = cookies(&[(USER.access_cookie, &third.access_token)]);
        let other_identity = engine
            .open(&USER, 43, &switch, None, false)
            .await
            .expect("open");
        assert!(s.session(&USER, &third).await.is_none(), "replaced");
        assert_eq!(s.get(&USER, &other_identity).await.unwrap().subject, 43);
        s.assert_no_secret_logged(&[&earlier, &admin, &later, &third, &admin_again]);
    })
    .await;
}

/// `last_seen_at` is rewritten by a request that finds it `touch_seconds` old, not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticate_rewrites_last_seen_at_once_it_is_touch_seconds_old() {
    on_every_store(policy(), |s| async move {
        let touch = s.engine.policy().touch_seconds;
        let issued = s.open(&USER, 42).await;
        let opened_at = s.clock.now();
        assert_eq!(
            s.session(&USER, &issued).await.unwrap().last_seen_at,
            opened_at
        );
        s.clock.advance(touch - 1);
        s.get(&USER, &issued).await.unwrap();
        assert_eq!(
            s.session(&USER, &issued).await.unwrap().last_seen_at,
            opened_at,
            "fresh enough: no write"
        );
        s.clock.advance(1);
        s.get(&USER, &issued).await.unwrap();
        let seen = s.clock.now();
        assert_eq!(s.session(&USER, &issued).await.unwrap().last_seen_at, seen);
        // A refused request does not count as seen.
        s.clock.advance(touch);
        let wrong = headers(&issued.access_token, "not-the-csrf-token");
        assert!(matches!(
            s.engine.authenticate(&USER, &Method::POST, &wrong).await,
            Err(SessionError::CsrfFailed)
        ));
        assert_eq!(s.session(&USER, &issued).await.unwrap().last_seen_at, seen);
    })
    .await;
}

/// A login beyond `sessions_per_identity` ends that identity's least recently used session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_beyond_the_sessions_per_identity_ends_the_least_recently_used() {
    let limited = SessionPolicy {
        sessions_per_identity: 2,
        ..policy()
    };
    on_every_store(limited, |s| async move {
        let touch = s.engine.policy().touch_seconds;
        let first = s.open(&USER, 42).await;
        s.clock.advance(1);
        let second = s.open(&USER, 42).await;
        let other_identity = s.open(&USER, 43).await;
        let admin = s.open(&ADMIN, 42).await;
        // The first session is used again: the second is now the least recently used.
        s.clock.advance(touch);
        s.get(&USER, &first).await.unwrap();
        s.clock.advance(1);
        let third = s.open(&USER, 42).await;
        assert!(s.session(&USER, &second).await.is_none(), "LRU ended");
        for (context, alive) in [
            (&USER, &first),
            (&USER, &third),
            (&USER, &other_identity),
            (&ADMIN, &admin),
        ] {
            s.get(context, alive).await.expect("alive");
        }
        let log = s.log_text();
        assert!(s.logged("INFO", 42, "least recently used"), "{log}");
    })
    .await;
}

/// `authenticate_with` reads the area's rows beside the session check: `load` gets the token's
/// subject, runs only for a correctly signed token with (on unsafe methods) the right CSRF, and
/// its output comes back only with a live session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticate_with_loads_beside_the_check_and_hands_back_only_with_a_live_session() {
    on_every_store(policy(), |s| async move {
        let engine = &s.engine;
        let opened = s.open(&USER, 42).await;
        let good = headers(&opened.access_token, &opened.csrf);
        let calls = Mutex::new(Vec::new());
        let load = |subject: i64| {
            calls.lock().unwrap().push(subject);
            async move { subject * 10 }
        };

        let (session, loaded) = engine
            .authenticate_with(&USER, &Method::GET, &good, load)
            .await
            .expect("a live session");
        assert_eq!((session.subject, loaded), (42, 420));

        // Refused before any load: no cookie, a forged token, a wrong CSRF on an unsafe method.
        let forged = headers("eyJhbGciOiJIUzI1NiJ9.e30.c2ln", &opened.csrf);
        let wrong_csrf = headers(&opened.access_token, "not-the-csrf-token");
        for (what, request, method) in [
            ("no cookie", HeaderMap::new(), Method::GET),
            ("forged", forged, Method::GET),
            ("wrong CSRF", wrong_csrf, Method::POST),
        ] {
            let outcome = engine
                .authenticate_with(&USER, &method, &request, load)
                .await;
            assert!(outcome.is_err(), "{what}: {outcome:?}");
        }
        assert_eq!(
            *calls.lock().unwrap(),
            vec![42],
            "loaded once, for the good request"
        );

        // An ended session: the load may have run, but its output is not handed back.
        engine.close(&USER, &good).await.expect("logout");
        let outcome = engine
            .authenticate_with(&USER, &Method::GET, &good, load)
            .await;
        assert!(
            matches!(outcome, Err(SessionError::SessionEnded)),
            "{outcome:?}"
        );
    })
    .await;
}

/// The second factor belongs to the session (CONTRACT §11): a login's flag is carried by every
/// refresh of that session, a session opened without it stays without it, and a reissue (the
/// confirmation of a factor) raises it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_factor_flag_follows_the_session_through_refresh_and_reissue() {
    on_every_store(policy(), |s| async move {
        let with = s
            .engine
            .open(&ADMIN, 7, &HeaderMap::new(), None, true)
            .await
            .expect("open");
        let without = s.open(&ADMIN, 7).await;
        assert!(s.get(&ADMIN, &with).await.unwrap().second_factor);
        assert!(!s.get(&ADMIN, &without).await.unwrap().second_factor);
        let refresh = |issued: &IssuedAccess| {
            let headers = headers_for(&ADMIN, &issued.access_token, &issued.csrf);
            let engine = &s.engine;
            async move { engine.refresh(&ADMIN, &headers).await }
        };
        let with = refresh(&with).await.expect("refresh");
        let without = refresh(&without).await.expect("refresh");
        assert!(s.get(&ADMIN, &with).await.unwrap().second_factor);
        let plain = s.get(&ADMIN, &without).await.unwrap();
        assert!(!plain.second_factor);
        let raised = s
            .engine
            .reissue(&ADMIN, &plain, true)
            .await
            .expect("reissue");
        assert!(s.get(&ADMIN, &raised).await.unwrap().second_factor);
        let raised = refresh(&raised).await.expect("refresh");
        assert!(s.get(&ADMIN, &raised).await.unwrap().second_factor);
    })
    .await;
}
