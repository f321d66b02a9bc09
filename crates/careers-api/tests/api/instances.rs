//! Several API instances over one PostgreSQL schema and one Redis key prefix behave as one
//! service (PostgreSQL + Redis only): a session issued by one is read, refreshed and ended by
//! another, and survives a restart.

use careers_api::areas::USER;
use reqwest::StatusCode;
use sessions::{AnyStore, Clock};

use crate::helpers::*;

/// Another instance of `app`'s deployment: same schema, same key prefix, same signing secret.
async fn sibling(app: &TestApp) -> TestApp {
    sibling_with(app, &[]).await
}

/// [`sibling`], with more settings.
async fn sibling_with(app: &TestApp, settings: &[(&str, &str)]) -> TestApp {
    let schema = app.env["DATABASE_SCHEMA"].clone();
    let prefix = app.env["REDIS_KEY_PREFIX"].clone();
    let mut all = vec![
        ("DATABASE_SCHEMA", schema.as_str()),
        ("REDIS_KEY_PREFIX", prefix.as_str()),
    ];
    all.extend_from_slice(settings);
    let other = TestApp::spawn_with(Backend::PostgresRedis, &all).await;
    assert_eq!(other.env["DATABASE_SCHEMA"], schema);
    assert_eq!(other.env["REDIS_KEY_PREFIX"], prefix);
    assert_eq!(
        other.env["JWT_SIGNING_SECRET"],
        app.env["JWT_SIGNING_SECRET"]
    );
    other
}

/// Each instance has its own manual clock, started from the wall clock: line them up.
fn sync_clocks(apps: &[&TestApp]) {
    let latest = apps.iter().map(|a| a.clock.now()).max().unwrap();
    for app in apps {
        app.clock.advance(latest - app.clock.now());
    }
}

#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_sessions() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    let a = TestApp::spawn(Backend::PostgresRedis).await;
    let b = sibling(&a).await;
    sync_clocks(&[&a, &b]);

    let (id, first) = a.user_session("ada@example.com").await;
    assert_eq!(
        b.read(&first, id).await.status(),
        StatusCode::OK,
        "A's session read on B"
    );

    a.clock.advance(60);
    b.clock.advance(60);
    let refreshed = b.refresh(&first).await;
    assert_eq!(
        refreshed.status(),
        StatusCode::OK,
        "A's session refreshed on B"
    );
    let second = Creds::from_response(&USER, &refreshed);
    assert_eq!(
        b.claims(&second).ruid,
        a.claims(&first).ruid,
        "same session"
    );

    let stale = a.read(&first, id).await;
    assert_error(stale, StatusCode::UNAUTHORIZED, "session_ended").await;
    assert_eq!(
        a.read(&second, id).await.status(),
        StatusCode::OK,
        "B's token read on A"
    );
    assert_eq!(b.read(&second, id).await.status(), StatusCode::OK);

    assert_eq!(
        a.logout(&second).await.status(),
        StatusCode::NO_CONTENT,
        "logout on A"
    );
    let ended = b.read(&second, id).await;
    assert_error(ended, StatusCode::UNAUTHORIZED, "session_ended").await;
    let ended = a.read(&second, id).await;
    assert_error(ended, StatusCode::UNAUTHORIZED, "session_ended").await;
}

#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_accepts_sessions_issued_before_the_restart() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    let a = TestApp::spawn(Backend::PostgresRedis).await;
    let (id, creds) = a.user_session("ada@example.com").await;
    assert_eq!(a.read(&creds, id).await.status(), StatusCode::OK);
    let env = a.env.clone();
    drop(a);

    let c = TestApp::spawn_with(
        Backend::PostgresRedis,
        &[
            ("DATABASE_SCHEMA", env["DATABASE_SCHEMA"].as_str()),
            ("REDIS_KEY_PREFIX", env["REDIS_KEY_PREFIX"].as_str()),
        ],
    )
    .await;
    assert_eq!(
        c.read(&creds, id).await.status(),
        StatusCode::OK,
        "old cookie on the new server"
    );
    let refreshed = c.refresh(&creds).await;
    assert_eq!(refreshed.status(), StatusCode::OK, "and it refreshes there");
    let renewed = Creds::from_response(&USER, &refreshed);
    assert_eq!(c.read(&renewed, id).await.status(), StatusCode::OK);
}

#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_share_the_failed_login_count() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    let a = TestApp::spawn(Backend::PostgresRedis).await;
    let b = sibling(&a).await;
    a.create_user("ada@example.com").await;
    let limit = a.state.config.limits.login_failures_per_account;
    for attempt in 0..limit {
        let app = if attempt % 2 == 0 { &a } else { &b };
        let response = app
            .login_raw(&USER, "ada@example.com", "wrong-password")
            .await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    for app in [&a, &b] {
        let response = app.login_raw(&USER, "ada@example.com", PASSWORD).await;
        assert_error(response, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    }
}

/// With the session cache on (DECISIONS 115), a session ended on one instance is refused by
/// another that kept it on the very next request, as without the cache (CONTRACT §3), again
/// and again; the kept copies were served in between (the other instance's cache counted hits).
#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_session_cache_an_ended_session_is_refused_everywhere_at_once() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    let cache = [("REDIS_SESSION_CACHE", "on")];
    let a = TestApp::spawn_with(Backend::PostgresRedis, &cache).await;
    let b = sibling_with(&a, &cache).await;
    sync_clocks(&[&a, &b]);
    let hits = |app: &TestApp| match app.state.sessions.store() {
        AnyStore::Redis(store) => store.cache_stats().expect("the session cache is on").hits,
        AnyStore::Memory(_) => panic!("a Redis store"),
    };

    let (id, mut creds) = a.user_session("ada@example.com").await;
    for _ in 0..10 {
        let before = hits(&b);
        for app in [&a, &b, &a, &b] {
            assert_eq!(app.read(&creds, id).await.status(), StatusCode::OK);
        }
        a.clock.advance(60);
        b.clock.advance(60);
        let refreshed = a.refresh(&creds).await;
        assert_eq!(refreshed.status(), StatusCode::OK);
        let stale = b.read(&creds, id).await;
        assert_error(stale, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert!(hits(&b) > before, "B served its copy before the refresh");
        creds = Creds::from_response(&USER, &refreshed);
    }
    assert_eq!(b.read(&creds, id).await.status(), StatusCode::OK);
    assert_eq!(b.read(&creds, id).await.status(), StatusCode::OK);
    assert_eq!(a.logout(&creds).await.status(), StatusCode::NO_CONTENT);
    for app in [&b, &a] {
        let ended = app.read(&creds, id).await;
        assert_error(ended, StatusCode::UNAUTHORIZED, "session_ended").await;
    }
}
