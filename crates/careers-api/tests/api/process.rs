//! The real binary as a process: what it logs, and how it shuts down.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const BIN: &str = env!("CARGO_BIN_EXE_careers-api");

struct Server {
    child: Option<Child>,
    base: String,
    file: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // The database and SQLite's write-ahead log and shared-memory files beside it.
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.file.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn env_for(file: &std::path::Path, port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("APP_ENV", "test".into()),
        ("JWT_SIGNING_SECRET", SECRET.into()),
        ("DATABASE_URL", format!("sqlite://{}", file.display())),
        ("BIND_ADDR", format!("127.0.0.1:{port}")),
        ("RUST_LOG", "trace".into()),
        ("LOG_FORMAT", "json".into()),
    ]
}

/// Creates a user with the CLI, then starts `careers-api serve` and waits until it answers.
async fn start() -> Server {
    let file = std::env::temp_dir().join(format!("careers-proc-{}.db", random_suffix()));
    let port = free_port();
    let env = env_for(&file, port);
    create_ada(&env);
    spawn_server(env, file, port).await
}

/// Like [`start`], with `overrides` of the environment and the admin `grace@example.com` too.
async fn start_with(overrides: &[(&'static str, String)]) -> Server {
    let file = std::env::temp_dir().join(format!("careers-proc-{}.db", random_suffix()));
    let port = free_port();
    let mut env = env_for(&file, port);
    for (key, value) in overrides {
        env.retain(|(k, _)| k != key);
        env.push((key, value.clone()));
    }
    create_ada(&env);
    create_grace(&env);
    spawn_server(env, file, port).await
}

fn create_ada(env: &[(&'static str, String)]) {
    let created = Command::new(BIN)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("RUST_LOG", "off")
        .args([
            "users",
            "create",
            "--email",
            "ada@example.com",
            "--password",
            PASSWORD,
        ])
        .args(["--first-name", "Ada", "--last-name", "Lovelace"])
        .output()
        .unwrap();
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
}

/// Creates the admin `grace@example.com` with the CLI.
fn create_grace(env: &[(&'static str, String)]) {
    let created = Command::new(BIN)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("RUST_LOG", "off")
        .args([
            "admins",
            "create",
            "--email",
            "grace@example.com",
            "--password",
            PASSWORD,
        ])
        .output()
        .unwrap();
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
}

async fn spawn_server(
    env: Vec<(&'static str, String)>,
    file: std::path::PathBuf,
    port: u16,
) -> Server {
    careers_api::webhooks::transport::install_crypto_provider();
    let child = Command::new(BIN)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .arg("serve")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let server = Server {
        child: Some(child),
        base: format!("http://127.0.0.1:{port}"),
        file,
    };
    let started = Instant::now();
    while reqwest::get(format!("{}/health/live", server.base))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "server did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server
}

fn terminate(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Stops the server with SIGTERM and returns its exit status and everything it logged.
fn stop(server: &mut Server) -> (std::process::ExitStatus, String) {
    let mut child = server.child.take().unwrap();
    terminate(&child);
    let status = child.wait().unwrap();
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    (status, log)
}

/// `times` reads of `url` with `creds`, each answered 200.
async fn read_ok(client: &reqwest::Client, url: &str, creds: &Creds, times: usize) {
    for _ in 0..times {
        let read = client
            .get(url)
            .header("cookie", creds.cookie_header())
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), StatusCode::OK);
    }
}

/// `GET /metrics` on the metrics listener at `port`: the exposition's text.
async fn scrape(client: &reqwest::Client, port: u16) -> String {
    let scrape = client
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(scrape.status(), StatusCode::OK);
    scrape.text().await.unwrap()
}

/// The value of the first line of `text` that starts with `series`.
fn series_value(text: &str, series: &str) -> f64 {
    text.lines()
        .find(|line| line.starts_with(series))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no series {series} in\n{text}"))
}

/// Logs `ada@example.com` in through `url` and returns the cookies' credentials.
async fn log_in(client: &reqwest::Client, url: &str) -> Creds {
    let login = client
        .post(url)
        .json(&json!({ "email": "ada@example.com", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), StatusCode::CREATED);
    Creds::from_response(&careers_api::areas::USER, &login)
}

/// Refreshes `creds` through `url` and returns the new credentials.
async fn refresh(client: &reqwest::Client, url: &str, creds: &Creds) -> Creds {
    let refreshed = client
        .patch(url)
        .header("cookie", creds.cookie_header())
        .header("x-csrf-token", &creds.csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(refreshed.status(), StatusCode::OK);
    Creds::from_response(&careers_api::areas::USER, &refreshed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_never_contain_passwords_tokens_cookies_or_csrf_values() {
    let mut server = start().await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{}", server.base, path);
    let wrong_password = "a-wrong-password-that-must-not-be-logged";
    let failed = client
        .post(url("/identities/sessions"))
        .json(&json!({ "email": "ada@example.com", "password": wrong_password }))
        .send()
        .await
        .unwrap();
    assert_eq!(failed.status(), StatusCode::UNAUTHORIZED);
    let first = log_in(&client, &url("/identities/sessions")).await;
    // A query string (here an e-mail in `?q=`) is not logged, only the path; a client's request
    // id is kept and echoed.
    let read = client
        .get(url("/identities/user/1?q=query-mail@example.com"))
        .header("cookie", first.cookie_header())
        .header("x-request-id", "client-chosen-id-42")
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(read.headers()["x-request-id"], "client-chosen-id-42");
    let bad_csrf = client
        .patch(url("/identities/sessions/current"))
        .header("cookie", first.cookie_header())
        .header("x-csrf-token", "forged-csrf-value-that-must-not-be-logged")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_csrf.status(), StatusCode::FORBIDDEN);
    let second = refresh(&client, &url("/identities/sessions/current"), &first).await;
    let logout = client
        .delete(url("/identities/sessions/current"))
        .header("cookie", second.cookie_header())
        .header("x-csrf-token", &second.csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), StatusCode::NO_CONTENT);

    // Theft: a token superseded by a refresh more than 10 s ago ends its session on a read.
    let third = log_in(&client, &url("/identities/sessions")).await;
    refresh(&client, &url("/identities/sessions/current"), &third).await;
    tokio::time::sleep(std::time::Duration::from_millis(11_000)).await;
    let replayed = client
        .get(url("/identities/user/1"))
        .header("cookie", third.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(replayed.status(), StatusCode::UNAUTHORIZED);

    // Throttling: ten failures for an unknown account, then the eleventh attempt is refused.
    for _ in 0..10 {
        client
            .post(url("/identities/sessions"))
            .json(&json!({ "email": "ghost@example.com", "password": wrong_password }))
            .send()
            .await
            .unwrap();
    }
    let throttled = client
        .post(url("/identities/sessions"))
        .json(&json!({ "email": "ghost@example.com", "password": wrong_password }))
        .send()
        .await
        .unwrap();
    assert_eq!(throttled.status(), StatusCode::TOO_MANY_REQUESTS);

    let (_, log) = stop(&mut server);
    let secrets = [
        PASSWORD,
        wrong_password,
        SECRET,
        &first.access,
        &first.csrf,
        &second.access,
        &second.csrf,
        &third.access,
        &third.csrf,
        "forged-csrf-value-that-must-not-be-logged",
    ];
    for secret in secrets {
        assert!(
            !log.contains(secret),
            "the log contains a secret ({} chars)",
            secret.len()
        );
    }
    // Not even the signature or payload segments of a token.
    for token in [&first.access, &second.access] {
        for segment in token.split('.').skip(1) {
            assert!(!log.contains(segment), "a token segment is in the log");
        }
    }
    // Structured request lines: request id, method, path, status, latency.
    let lines: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let finished: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"] == "finished processing request")
        .collect();
    assert!(finished.len() >= 6, "{} request lines", finished.len());
    for line in &finished {
        assert!(
            line["level"] == "INFO" && line["status"].is_u64() && line["latency_us"].is_u64(),
            "{line}"
        );
        assert!(
            line["method"].is_string() && line["path"].is_string(),
            "{line}"
        );
        assert!(
            line["request_id"].as_str().is_some_and(|id| !id.is_empty()),
            "{line}"
        );
    }
    assert!(!log.contains("query-mail"), "query strings are not logged");
    assert!(
        finished.iter().any(|l| l["path"] == "/identities/user/1"
            && l["request_id"] == "client-chosen-id-42"
            && l["status"] == 200),
        "the read's line: path without the query, the client's request id"
    );
    // Security events at warn level name the identity as its context does and the client's
    // address (CONTRACT §8): the test's requests come from 127.0.0.1.
    let warn = |message: &str| {
        lines.iter().any(|l| {
            l["level"] == "WARN"
                && l["message"] == message
                && l["user_id"] == 1
                && l["identity_id"].is_null()
                && l["client_ip"] == "127.0.0.1"
        })
    };
    assert!(warn("login failed"), "failed login logged");
    assert!(warn("CSRF check failed"), "CSRF failure logged");
    assert!(
        warn("superseded access token presented: session ended (possible theft)"),
        "theft detection logged"
    );
    // The throttled e-mail has no identity; the event names its context and reason.
    let throttled = lines.iter().any(|l| {
        l["level"] == "WARN"
            && l["message"] == "login throttled"
            && l["reason"] == "account"
            && l["client_ip"] == "127.0.0.1"
    });
    assert!(throttled, "throttled login logged");
    assert!(
        !log.contains("ghost@example.com"),
        "e-mails of throttled logins are not logged"
    );
}

/// The access line follows `RUST_LOG` by its target, in both log formats: with JSON the edge
/// layer writes it past tracing (docs/DECISIONS.md 57), with text it is a tracing event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_line_follows_rust_log_in_both_formats() {
    for (filter, format, logged) in [
        ("warn", "json", false),
        ("warn,careers_api::access=info", "json", true),
        ("warn", "text", false),
        ("warn,careers_api::access=info", "text", true),
    ] {
        let file = std::env::temp_dir().join(format!("careers-proc-{}.db", random_suffix()));
        let port = free_port();
        let mut env = env_for(&file, port);
        env.retain(|(key, _)| !matches!(*key, "RUST_LOG" | "LOG_FORMAT"));
        env.push(("RUST_LOG", filter.into()));
        env.push(("LOG_FORMAT", format.into()));
        let mut server = spawn_server(env, file, port).await;
        let missing = reqwest::get(format!("{}/no-such-route?q=query-mail", server.base))
            .await
            .unwrap();
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        let (_, log) = stop(&mut server);
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("finished processing request") && l.contains("/no-such-route"))
            .collect();
        assert_eq!(lines.len(), usize::from(logged), "{filter} {format}: {log}");
        assert!(!log.contains("query-mail"), "{filter} {format}: {log}");
        if logged && format == "json" {
            let line: Value = serde_json::from_str(lines[0]).unwrap();
            assert_eq!(line["level"], "INFO", "{line}");
            assert_eq!(line["status"], 404, "{line}");
            assert_eq!(line["path"], "/no-such-route", "{line}");
            assert_eq!(line["target"], "careers_api::access", "{line}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_in_flight_requests_finish_and_refuses_new_connections() {
    let mut server = start().await;
    let client = reqwest::Client::new();
    let url = format!("{}/identities/sessions", server.base);
    // Logins take a password hash each, so these are still in flight when SIGTERM arrives.
    let requests = (0..8).map(|_| {
        client
            .post(&url)
            .json(&json!({ "email": "ada@example.com", "password": PASSWORD }))
            .send()
    });
    let in_flight = tokio::spawn(join_all(requests));
    tokio::time::sleep(Duration::from_millis(30)).await;
    terminate(server.child.as_ref().unwrap());
    for response in in_flight.await.unwrap() {
        let response = response.expect("in-flight request answered");
        assert_eq!(response.status(), StatusCode::CREATED);
    }
    let mut child = server.child.take().unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful exit: {status:?}");
    let refused = reqwest::get(format!("{}/health/live", server.base)).await;
    assert!(
        refused.is_err(),
        "new connections are refused after shutdown"
    );
}

/// Two `careers-api` processes sharing PostgreSQL and Redis behave as one service.
#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_sharing_postgres_and_redis_behave_as_one() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    // The test app creates the schema and the user; the two processes only share them.
    let app = TestApp::spawn(Backend::PostgresRedis).await;
    app.create_user("ada@example.com").await;
    let shared = |port: u16| -> Vec<(&'static str, String)> {
        let mut env: Vec<(&'static str, String)> = vec![
            ("APP_ENV", "test".into()),
            ("BIND_ADDR", format!("127.0.0.1:{port}")),
            ("RUST_LOG", "warn".into()),
        ];
        for key in [
            "JWT_SIGNING_SECRET",
            "DATABASE_URL",
            "DATABASE_SCHEMA",
            "REDIS_URL",
            "REDIS_KEY_PREFIX",
        ] {
            env.push((key, app.env[key].clone()));
        }
        env
    };
    let (port_a, port_b) = (free_port(), free_port());
    let none = std::path::PathBuf::from("/nonexistent/careers-api-test");
    let a = spawn_server(shared(port_a), none.clone(), port_a).await;
    let b = spawn_server(shared(port_b), none, port_b).await;
    let client = reqwest::Client::new();
    let login = client
        .post(format!("{}/identities/sessions", a.base))
        .json(&json!({ "email": "ada@example.com", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), StatusCode::CREATED);
    let old = Creds::from_response(&careers_api::areas::USER, &login);
    let id = app.claims(&old).subject;
    let read = |base: &str, creds: &Creds| {
        client
            .get(format!("{base}/identities/user/{id}"))
            .header("cookie", creds.cookie_header())
            .send()
    };
    assert_eq!(
        read(&b.base, &old).await.unwrap().status(),
        StatusCode::OK,
        "login on A, read on B"
    );
    let refreshed = client
        .patch(format!("{}/identities/sessions/current", b.base))
        .header("cookie", old.cookie_header())
        .header("x-csrf-token", &old.csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(refreshed.status(), StatusCode::OK, "refresh on B");
    let new = Creds::from_response(&careers_api::areas::USER, &refreshed);
    let stale = read(&a.base, &old).await.unwrap();
    assert_error(stale, StatusCode::UNAUTHORIZED, "session_ended").await;
    assert_eq!(read(&a.base, &new).await.unwrap().status(), StatusCode::OK);
    let logout = client
        .delete(format!("{}/identities/sessions/current", a.base))
        .header("cookie", new.cookie_header())
        .header("x-csrf-token", &new.csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), StatusCode::NO_CONTENT, "logout on A");
    let ended = read(&b.base, &new).await.unwrap();
    assert_error(ended, StatusCode::UNAUTHORIZED, "session_ended").await;
}

/// A password reset and an admin's TOTP enrolment and login through the real binary at
/// `RUST_LOG=trace`: the reset token, the TOTP secret, its codes and the recovery codes appear
/// nowhere in the log (CONTRACT §10, §11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_never_contain_reset_tokens_totp_secrets_or_codes() {
    let outbox = std::env::temp_dir().join(format!("careers-proc-outbox-{}", random_suffix()));
    let mut server = start_with(&[("MAIL_OUTBOX_DIR", outbox.display().to_string())]).await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{}", server.base, path);

    // The reset: its message lands in the outbox directory.
    let asked = client
        .post(url("/identities/password_resets"))
        .json(&json!({ "email": "ada@example.com" }))
        .send()
        .await
        .unwrap();
    assert_eq!(asked.status(), StatusCode::ACCEPTED);
    let deadline = Instant::now() + Duration::from_secs(10);
    let message = loop {
        let found = std::fs::read_dir(&outbox)
            .ok()
            .and_then(|mut entries| entries.next())
            .and_then(Result::ok);
        if let Some(entry) = found {
            break std::fs::read_to_string(entry.path()).unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "no message in the outbox directory"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let text = message
        .replace("=\r\n", "")
        .replace("=\n", "")
        .replace("=3D", "=");
    let start = text.find("token=").unwrap() + "token=".len();
    let token: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    let new_password = "a brand new passphrase";
    let reset = client
        .patch(url("/identities/password_resets/current"))
        .json(&json!({ "token": token, "password": new_password }))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::NO_CONTENT);

    // The admin enrols a second factor and logs in with a code and a recovery code.
    let login = client
        .post(url("/team/identities/admins/sessions"))
        .json(&json!({ "email": "grace@example.com", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    let admin = Creds::from_response(&careers_api::areas::ADMIN, &login);
    let started: Value = admin
        .with_csrf(client.post(url("/team/identities/admins/totp")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let secret = started["secret"].as_str().unwrap().to_owned();
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    };
    let code = code_at(&secret, now());
    let confirmed: Value = admin
        .with_csrf(client.patch(url("/team/identities/admins/totp")))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let recovery: Vec<String> = confirmed["recovery_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    let with_recovery = client
        .post(url("/team/identities/admins/sessions"))
        .json(&json!({ "email": "grace@example.com", "password": PASSWORD, "recovery_code": recovery[0] }))
        .send()
        .await
        .unwrap();
    assert_eq!(with_recovery.status(), StatusCode::CREATED);
    let wrong_code = client
        .post(url("/team/identities/admins/sessions"))
        .json(&json!({ "email": "grace@example.com", "password": PASSWORD, "otp": "999999" }))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_code.status(), StatusCode::UNAUTHORIZED);

    let (_, log) = stop(&mut server);
    let _ = std::fs::remove_dir_all(&outbox);
    let mut secrets = vec![
        token.clone(),
        secret.clone(),
        code.clone(),
        new_password.to_owned(),
    ];
    secrets.extend(recovery.iter().cloned());
    secrets.extend(recovery.iter().map(|c| c.replace('-', "")));
    for value in &secrets {
        assert!(
            !log.contains(value.as_str()),
            "the log contains a secret ({} chars)",
            value.len()
        );
    }
    assert!(
        log.contains("password reset issued") && log.contains("mail outbox: delivered"),
        "the events are logged, by id"
    );
    assert!(log.contains("second factor confirmed") && log.contains("recovery code used"));
}

/// The text of the first message in `outbox` whose text contains `needle` (quoted-printable
/// soft breaks undone), waiting up to 10 s for the mail worker.
async fn outbox_message(outbox: &std::path::Path, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        for entry in std::fs::read_dir(outbox).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(entry.path())
                .unwrap_or_default()
                .replace("=\r\n", "")
                .replace("=\n", "")
                .replace("=3D", "=");
            if text.contains(needle) {
                return text;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no message with {needle:?} in the outbox"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The token of a message's `token=` link.
fn link_token(text: &str) -> String {
    let start = text.find("token=").unwrap() + "token=".len();
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

/// E-mail verification and an invitation through the real binary at `RUST_LOG=trace`: a
/// sign-up's verification token and an invitation's token appear in no response and nowhere
/// in the log (CONTRACT §14).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_never_contain_verification_or_invitation_tokens() {
    let outbox = std::env::temp_dir().join(format!("careers-proc-outbox-{}", random_suffix()));
    let mut server = start_with(&[("MAIL_OUTBOX_DIR", outbox.display().to_string())]).await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{}", server.base, path);
    let mut bodies = String::new();

    // Sam signs up and verifies the address with the message's token.
    let signed_up = client
        .post(url("/identities/users"))
        .json(&sign_up_body("sam@example.com"))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_up.status(), StatusCode::CREATED);
    bodies.push_str(&signed_up.text().await.unwrap());
    let verification = link_token(&outbox_message(&outbox, "verify-email").await);
    let verified = client
        .patch(url("/identities/email_verifications/current"))
        .json(&json!({ "token": verification }))
        .send()
        .await
        .unwrap();
    assert_eq!(verified.status(), StatusCode::NO_CONTENT);

    // Ada (verified by the command line) creates a company and invites Sam, who accepts.
    let ada = log_in(&client, &url("/identities/sessions")).await;
    let created = ada
        .with_csrf(client.post(url("/identities/org/companies")))
        .json(&json!({ "name": "Analytical Engines" }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    bodies.push_str(&created.text().await.unwrap());
    let invited = ada
        .with_csrf(client.post(url("/org/invitations")))
        .json(&json!({ "email": "sam@example.com", "role": "admin" }))
        .send()
        .await
        .unwrap();
    assert_eq!(invited.status(), StatusCode::CREATED);
    bodies.push_str(&invited.text().await.unwrap());
    let invitation = link_token(&outbox_message(&outbox, "invitations?token").await);
    let login = client
        .post(url("/identities/sessions"))
        .json(&json!({ "email": "sam@example.com", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), StatusCode::CREATED);
    let sam = Creds::from_response(&careers_api::areas::USER, &login);
    for body in [
        json!({ "token": invitation }),
        json!({ "token": invitation, "status": "accepted" }),
    ] {
        let answered = sam
            .with_csrf(client.patch(url("/identities/org/invitations/current")))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answered.status(), StatusCode::OK);
        bodies.push_str(&answered.text().await.unwrap());
    }
    // A used token is refused (and the refusal logged, without it).
    let used = sam
        .with_csrf(client.patch(url("/identities/org/invitations/current")))
        .json(&json!({ "token": invitation, "status": "accepted" }))
        .send()
        .await
        .unwrap();
    assert_eq!(used.status(), StatusCode::UNPROCESSABLE_ENTITY);
    bodies.push_str(&used.text().await.unwrap());
    let listed = ada
        .with_cookies(client.get(url("/org/invitations")))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    bodies.push_str(&listed.text().await.unwrap());
    assert!(bodies.contains("\"accepted\""), "{bodies}");

    let (_, log) = stop(&mut server);
    let _ = std::fs::remove_dir_all(&outbox);
    for token in [&verification, &invitation] {
        assert_eq!(token.len(), 43, "a 256-bit base64url token");
        assert!(!log.contains(token.as_str()), "the log contains a token");
        assert!(
            !bodies.contains(token.as_str()),
            "a response contains a token"
        );
    }
    assert!(log.contains("invitation sent") && log.contains("mail outbox: delivered"));
    assert!(log.contains("invitation token refused"));
}

/// The team's moderation through the real binary (CONTRACT §13, §14, §15): suspending and
/// unsuspending a company, archiving and releasing a job are audit events, by id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suspensions_and_job_moderation_are_audit_events() {
    let mut server = start_with(&[]).await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{}", server.base, path);
    let ada = log_in(&client, &url("/identities/sessions")).await;
    let company: Value = ada
        .with_csrf(client.post(url("/identities/org/companies")))
        .json(&json!({ "name": "Analytical Engines" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let company_id = company["org_companies"]["id"].as_i64().unwrap();
    let job: Value = ada
        .with_csrf(client.post(url("/org-user/careers/jobs")))
        .json(&json!({ "title": "Engineer", "company": { "id": company_id } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let job_id = job["careers_jobs"]["id"].as_i64().unwrap();
    let login = client
        .post(url("/team/identities/admins/sessions"))
        .json(&json!({ "email": "grace@example.com", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    let admin = Creds::from_response(&careers_api::areas::ADMIN, &login);
    let company_path = url(&format!("/admin-user/org/companies/{company_id}"));
    let job_path = url(&format!("/admin-user/careers/jobs/{job_id}"));
    for (path, body) in [
        (&company_path, json!({ "suspended": true })),
        (&company_path, json!({ "suspended": true })),
        (&company_path, json!({ "suspended": false })),
        (&job_path, json!({ "status": "archived" })),
        (&job_path, json!({ "status": "draft" })),
    ] {
        let answer = admin
            .with_csrf(client.patch(path.as_str()))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{path} {body}");
    }

    let (_, log) = stop(&mut server);
    let audit: Vec<(String, i64)> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["target"] == "careers_api::audit" && l["admin_id"].is_u64())
        .map(|l| {
            (
                l["action"].as_str().unwrap().to_owned(),
                l["object_id"].as_i64().unwrap(),
            )
        })
        .collect();
    // A second suspension of a suspended company changes nothing and is no event.
    let expected = [
        ("company_suspended", company_id),
        ("company_unsuspended", company_id),
        ("job_archived", job_id),
        ("job_released", job_id),
    ]
    .map(|(a, id)| (a.to_owned(), id));
    assert_eq!(audit, expected);
}

/// Operations (CONTRACT §13) through the real binary: the Prometheus series on `METRICS_ADDR`
/// after real requests (route templates, never raw paths), Swagger UI at `/docs` with
/// `API_DOCS=on`, and audit events of admin actions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_audit_events_and_api_docs() {
    let metrics_port = free_port();
    let mut server = start_with(&[
        ("METRICS_ADDR", format!("127.0.0.1:{metrics_port}")),
        ("API_DOCS", "on".into()),
        ("RUST_LOG", "info".into()),
    ])
    .await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{}", server.base, path);

    let wrong = client
        .post(url("/identities/sessions"))
        .json(&json!({ "email": "ada@example.com", "password": "not the password" }))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let ada = log_in(&client, &url("/identities/sessions")).await;
    read_ok(&client, &url("/identities/user/1"), &ada, 3).await;
    let ada = refresh(&client, &url("/identities/sessions/current"), &ada).await;
    let login = client
        .post(url("/team/identities/admins/sessions"))
        .json(&json!({ "email": "grace@example.com", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    let grace = Creds::from_response(&careers_api::areas::ADMIN, &login);
    let ended = grace
        .with_csrf(client.delete(url("/admin-user/identities/users/1/sessions")))
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    let gone = client
        .get(url("/identities/user/1"))
        .header("cookie", ada.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::UNAUTHORIZED);
    let started = grace
        .with_csrf(client.post(url("/team/identities/admins/totp")))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), StatusCode::CREATED);

    // Swagger UI from the binary; the metrics are not on the public listener.
    let docs = client.get(url("/docs/")).send().await.unwrap();
    assert_eq!(docs.status(), StatusCode::OK);
    let page = docs.text().await.unwrap();
    assert!(page.contains("swagger-ui"), "{page}");
    let initializer = client
        .get(url("/docs/swagger-initializer.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(initializer.status(), StatusCode::OK);
    assert!(initializer.text().await.unwrap().contains("/openapi.json"));
    assert_eq!(
        client.get(url("/metrics")).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );

    let text = scrape(&client, metrics_port).await;
    let value = |series: &str| series_value(&text, series);
    assert_eq!(
        value(
            r#"careers_http_requests_total{route="/identities/user/{id}",method="GET",status="200"}"#
        ),
        3.0
    );
    assert_eq!(
        value(
            r#"careers_http_requests_total{route="/identities/user/{id}",method="GET",status="401"}"#
        ),
        1.0
    );
    assert!(!text.contains("/identities/user/1\""), "never a raw path");
    assert!(text.contains(r#"careers_http_request_duration_seconds_bucket{route="/identities/user/{id}",method="GET",le="0.005"}"#));
    assert_eq!(
        value(r#"careers_logins_total{context="user",outcome="success"}"#),
        1.0
    );
    assert_eq!(
        value(r#"careers_logins_total{context="user",outcome="invalid_credentials"}"#),
        1.0
    );
    assert_eq!(
        value(r#"careers_logins_total{context="admin",outcome="success"}"#),
        1.0
    );
    assert_eq!(value(r#"careers_refreshes_total{context="user"}"#), 1.0);
    assert_eq!(
        value(r#"careers_sessions_ended_total{context="user",reason="revoked"}"#),
        1.0
    );
    assert!(text.contains("careers_mail_outbox_pending"), "{text}");
    // On the SQLite file the response cache is on, and read at the scrape (no list was asked).
    assert_eq!(
        value(r#"careers_response_cache_lookups_total{result="miss"}"#),
        0.0
    );

    let (_, log) = stop(&mut server);
    let audit: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["target"] == "careers_api::audit")
        .collect();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["level"], "INFO");
    assert_eq!(audit[0]["action"], "user.sessions_ended");
    assert_eq!(audit[0]["object_id"], 1);
    assert!(audit[0]["admin_id"].is_u64());
}

/// On a SQLite file with Redis the session cache is on by default (DECISIONS 115): a session's
/// later checks are answered from its copy, and `/metrics` shows it.
#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_sqlite_and_redis_the_session_cache_is_on_and_measured() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    let metrics_port = free_port();
    let mut server = start_with(&[
        ("METRICS_ADDR", format!("127.0.0.1:{metrics_port}")),
        ("REDIS_URL", std::env::var("TEST_REDIS_URL").unwrap()),
        (
            "REDIS_KEY_PREFIX",
            format!("careers-test:{}:", random_suffix()),
        ),
    ])
    .await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{}", server.base, path);
    let ada = log_in(&client, &url("/identities/sessions")).await;
    let hits = r#"careers_session_cache_lookups_total{result="hit"}"#;
    // The cache turns tracking on in the background; then checks of one session hit it.
    let start = Instant::now();
    loop {
        read_ok(&client, &url("/identities/user/1"), &ada, 3).await;
        let text = scrape(&client, metrics_port).await;
        if text.contains(hits) && series_value(&text, hits) >= 1.0 {
            assert_eq!(series_value(&text, "careers_session_cache_ready"), 1.0);
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no session cache hit:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop(&mut server);
}
