//! Backend outages (PostgreSQL + Redis only): the service fails closed with 503 `unavailable`
//! while Redis or PostgreSQL is gone, and recovers by itself when it is back, without a restart.
//!
//! Redis: a private `redis-server` child on a free port, killed and restarted on the same port.
//! PostgreSQL: a TCP proxy in front of the test database that can cut every connection.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use careers_api::areas::USER;
use reqwest::{Method, Response, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};

use crate::helpers::*;

/// Longest a single request may take while a backend is down before it counts as a hang.
const HANG: Duration = Duration::from_secs(15);
/// How long the service may take to notice that a backend is back.
const RECOVERY: Duration = Duration::from_secs(10);

/// A free TCP port on 127.0.0.1 (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("local address")
        .port()
}

/// Awaits one request, failing the test (with how long it took) if it hangs.
async fn within<F: Future<Output = Response>>(what: &str, request: F) -> Response {
    let start = Instant::now();
    match tokio::time::timeout(HANG, request).await {
        Ok(response) => {
            eprintln!("{what}: {} after {:?}", response.status(), start.elapsed());
            response
        }
        Err(_) => panic!("{what}: no answer after {HANG:?} (hang)"),
    }
}

async fn ready(app: &TestApp) -> Response {
    app.request(Method::GET, "/health/ready")
        .send()
        .await
        .unwrap()
}

/// Polls `probe` until it answers `want` or `RECOVERY` has passed; returns the last status.
async fn recovers<F, Fut>(what: &str, want: StatusCode, mut probe: F) -> StatusCode
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Response>,
{
    let start = Instant::now();
    loop {
        let status = within(what, probe()).await.status();
        if status == want || start.elapsed() >= RECOVERY {
            eprintln!("{what}: {status} after {:?} of polling", start.elapsed());
            return status;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A private, non-persistent `redis-server` child, killed when dropped.
struct RedisChild {
    port: u16,
    child: Option<Child>,
}

impl RedisChild {
    async fn start(port: u16) -> RedisChild {
        let child = Command::new("/usr/bin/redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start /usr/bin/redis-server");
        let mut redis = RedisChild {
            port,
            child: Some(child),
        };
        redis.wait_until_up().await;
        redis
    }

    async fn wait_until_up(&mut self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!("redis-server on port {} exited: {status}", self.port);
            }
            if self.pong().await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("redis-server on port {} did not answer PING", self.port);
    }

    async fn pong(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)).await else {
            return false;
        };
        if stream.write_all(b"PING\r\n").await.is_err() {
            return false;
        }
        let mut reply = [0u8; 7];
        matches!(
            tokio::time::timeout(Duration::from_secs(1), stream.read_exact(&mut reply)).await,
            Ok(Ok(_)) if &reply == b"+PONG\r\n"
        )
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisChild {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A TCP proxy to PostgreSQL. `cut` closes every live connection and closes new ones at once;
/// `restore` forwards again.
struct PgProxy {
    port: u16,
    shared: Arc<ProxyShared>,
    accept: JoinHandle<()>,
}

struct ProxyShared {
    cut: AtomicBool,
    /// Live forwarding tasks; locked while checking `cut` so that none escapes a cut.
    live: Mutex<Vec<AbortHandle>>,
}

impl PgProxy {
    async fn start(upstream: String) -> PgProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(ProxyShared {
            cut: AtomicBool::new(false),
            live: Mutex::new(Vec::new()),
        });
        let accept = tokio::spawn({
            let shared = shared.clone();
            async move {
                loop {
                    let Ok((mut client, _)) = listener.accept().await else {
                        continue;
                    };
                    let mut live = shared.live.lock().unwrap();
                    if shared.cut.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    let upstream = upstream.clone();
                    let task = tokio::spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(upstream.as_str()).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    live.retain(|t| !t.is_finished());
                    live.push(task.abort_handle());
                }
            }
        });
        PgProxy {
            port,
            shared,
            accept,
        }
    }

    fn cut(&self) {
        let mut live = self.shared.live.lock().unwrap();
        self.shared.cut.store(true, Ordering::SeqCst);
        for task in live.drain(..) {
            task.abort();
        }
    }

    fn restore(&self) {
        let _live = self.shared.live.lock().unwrap();
        self.shared.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for PgProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

/// Splits `scheme://[user@]host[:port]/rest` into (`scheme://[user@]`, `host:port`, `/rest`).
fn split_database_url(url: &str) -> (String, String, String) {
    let scheme_end = url.find("://").expect("DATABASE_URL has a scheme") + 3;
    let after = &url[scheme_end..];
    let authority_end = after.find(['/', '?']).unwrap_or(after.len());
    let authority = &after[..authority_end];
    let host_start = authority.rfind('@').map_or(0, |at| at + 1);
    let host = &authority[host_start..];
    let host = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:5432")
    };
    (
        url[..scheme_end + host_start].to_string(),
        host,
        after[authority_end..].to_string(),
    )
}

#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_fails_closed_with_503_and_recovers_without_restart() {
    redis_down_fails_closed(false).await;
}

/// The same with the session cache on (DECISIONS 115): a kept session is not served from the
/// moment Redis is gone, and the cache works again after the outage.
#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_fails_closed_with_the_session_cache_on() {
    redis_down_fails_closed(true).await;
}

async fn redis_down_fails_closed(cache: bool) {
    if !Backend::PostgresRedis.available() {
        return;
    }
    let port = free_port();
    let mut redis = RedisChild::start(port).await;
    let url = redis.url();
    let cache_setting = if cache { "on" } else { "off" };
    let app = TestApp::spawn_with(
        Backend::PostgresRedis,
        &[
            ("REDIS_URL", url.as_str()),
            ("REDIS_SESSION_CACHE", cache_setting),
        ],
    )
    .await;
    let (id, creds) = app.user_session("ada@example.com").await;
    assert_eq!(app.read(&creds, id).await.status(), StatusCode::OK);
    assert_eq!(app.read(&creds, id).await.status(), StatusCode::OK);
    assert_eq!(ready(&app).await.status(), StatusCode::OK);

    redis.kill();
    // With the cache on too: a kept copy is served only after a `PING` has come back.
    for attempt in 1..=3 {
        let read = within(
            &format!("read #{attempt}, Redis down"),
            app.read(&creds, id),
        )
        .await;
        assert_error(read, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    }
    let login = within(
        "login, Redis down",
        app.login_raw(&USER, "ada@example.com", PASSWORD),
    )
    .await;
    assert!(
        set_cookies(&login).is_empty(),
        "no cookie when no session was stored"
    );
    assert_error(login, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    let not_ready = within("ready, Redis down", ready(&app)).await;
    assert_error(not_ready, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;

    // Same port, empty data set: the old session is gone, the service is not.
    let redis = RedisChild::start(port).await;
    let status = recovers("ready, Redis back", StatusCode::OK, || ready(&app)).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "ready within {RECOVERY:?} of Redis coming back"
    );
    let fresh = app.login(&USER, "ada@example.com").await;
    assert_eq!(app.read(&fresh, id).await.status(), StatusCode::OK);
    let lost = app.read(&creds, id).await;
    assert_error(lost, StatusCode::UNAUTHORIZED, "session_ended").await;
    drop(redis);
}

/// An app on PostgreSQL + Redis whose database connections all go through a [`PgProxy`].
async fn app_behind_proxy() -> (PgProxy, TestApp) {
    let admin_url = std::env::var("TEST_DATABASE_URL").unwrap();
    let (head, upstream, tail) = split_database_url(&admin_url);
    let proxy = PgProxy::start(upstream).await;
    let proxied = format!("{head}127.0.0.1:{}{tail}", proxy.port);
    // The schema is created through TEST_DATABASE_URL; the app itself goes through the proxy.
    let app = TestApp::spawn_with(
        Backend::PostgresRedis,
        &[("DATABASE_URL", proxied.as_str())],
    )
    .await;
    assert_eq!(app.env["DATABASE_URL"], proxied);
    (proxy, app)
}

#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_fails_closed_with_503_and_recovers_without_restart() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    let (proxy, app) = app_behind_proxy().await;
    let (id, creds) = app.user_session("ada@example.com").await;
    assert_eq!(app.read(&creds, id).await.status(), StatusCode::OK);
    assert_eq!(ready(&app).await.status(), StatusCode::OK);

    proxy.cut();
    for attempt in 1..=2 {
        let what = format!("read #{attempt}, PostgreSQL down");
        let read = within(&what, app.read(&creds, id)).await;
        assert_error(read, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    }
    let login = within(
        "login, PostgreSQL down",
        app.login_raw(&USER, "ada@example.com", PASSWORD),
    )
    .await;
    assert!(
        set_cookies(&login).is_empty(),
        "no cookie without a verified identity"
    );
    assert_error(login, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    let not_ready = within("ready, PostgreSQL down", ready(&app)).await;
    assert_error(not_ready, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;

    // Redis was never down: the same session works again once PostgreSQL is reachable.
    proxy.restore();
    let status = recovers("read, PostgreSQL back", StatusCode::OK, || {
        app.read(&creds, id)
    })
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "same session reads within {RECOVERY:?}"
    );
    assert_eq!(ready(&app).await.status(), StatusCode::OK);
    let fresh = app.login(&USER, "ada@example.com").await;
    assert_eq!(app.read(&fresh, id).await.status(), StatusCode::OK);
    drop(proxy);
}

/// The pool pings a connection only when it has sat idle for a second (docs/DECISIONS.md): after
/// a blip that killed every connection and then a pause, not even the first request fails.
#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_connections_that_sat_idle_are_tested_before_use() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    let (proxy, app) = app_behind_proxy().await;
    let (id, creds) = app.user_session("ada@example.com").await;
    assert_eq!(app.read(&creds, id).await.status(), StatusCode::OK);

    // Every pooled connection dies, and PostgreSQL is reachable again at once.
    proxy.cut();
    proxy.restore();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for attempt in 1..=3 {
        let read = within(
            &format!("read #{attempt} after the blip"),
            app.read(&creds, id),
        )
        .await;
        assert_eq!(read.status(), StatusCode::OK, "read #{attempt}");
    }
    drop(proxy);
}

#[test]
fn database_url_splits_around_host_and_port() {
    let parts = |url: &str| split_database_url(url);
    assert_eq!(
        parts("postgres://postgres@127.0.0.1:5432/test"),
        (
            "postgres://postgres@".into(),
            "127.0.0.1:5432".into(),
            "/test".into()
        )
    );
    assert_eq!(
        parts("postgres://u:p@db/test?sslmode=disable"),
        (
            "postgres://u:p@".into(),
            "db:5432".into(),
            "/test?sslmode=disable".into()
        )
    );
    assert_eq!(
        parts("postgres://localhost:6543"),
        ("postgres://".into(), "localhost:6543".into(), String::new())
    );
}
