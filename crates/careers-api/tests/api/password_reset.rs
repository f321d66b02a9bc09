//! Password reset by e-mail and the durable mail outbox (CONTRACT §10), against a real SMTP
//! exchange with the in-process sink (`smtp_sink.rs`).

use careers_api::areas::USER;
use reqwest::{Method, Response, StatusCode};
use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::helpers::*;
use crate::smtp_sink::{Received, SmtpSink};

const RESET_URL: &str = "https://app.example.com/reset?token={token}";
const NEW_PASSWORD: &str = "a brand new passphrase";

async fn spawn_with_sink(backend: Backend, sink: &SmtpSink, extra: &[(&str, &str)]) -> TestApp {
    let url = sink.url();
    let mut overrides = vec![
        ("SMTP_URL", url.as_str()),
        ("PASSWORD_RESET_URL", RESET_URL),
        ("MAIL_FROM", "Careers <no-reply@careers.example>"),
    ];
    overrides.extend_from_slice(extra);
    let app = TestApp::spawn_with(backend, &overrides).await;
    app.start_mail_worker();
    app
}

async fn ask(app: &TestApp, email: &str) -> Response {
    app.request(Method::POST, "/identities/password_resets")
        .json(&json!({ "email": email }))
        .send()
        .await
        .unwrap()
}

async fn complete(app: &TestApp, token: &str, password: &str) -> Response {
    app.request(Method::PATCH, "/identities/password_resets/current")
        .json(&json!({ "token": token, "password": password }))
        .send()
        .await
        .unwrap()
}

/// The token of a reset message: the link's `token` parameter.
fn token_of(message: &Received) -> String {
    let text = message.text();
    let start = text.find("token=").expect("a reset link") + "token=".len();
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

/// Rows of one column of the outbox, in id order.
async fn outbox(app: &TestApp, column: &str) -> Vec<Option<String>> {
    let sql = format!("SELECT CAST({column} AS TEXT) AS v FROM mail_outbox ORDER BY id");
    let db = &app.state.db;
    let rows = db
        .query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap();
    rows.iter()
        .map(|row| row.try_get::<Option<String>>("", "v").unwrap())
        .collect()
}

/// Waits until the outbox's first message has had `attempts` attempts.
async fn wait_for_attempts(app: &TestApp, attempts: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while outbox(app, "attempts")
        .await
        .first()
        .cloned()
        .flatten()
        .as_deref()
        != Some(attempts)
    {
        assert!(std::time::Instant::now() < deadline, "no attempt was made");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

backend_tests! {
    async fn a_request_is_202_for_every_address_and_mails_only_an_account(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        app.create_user("ada@example.com").await;
        for email in ["  ADA@example.com ", "nobody@example.com"] {
            let response = ask(&app, email).await;
            assert_eq!(response.status(), StatusCode::ACCEPTED);
            assert!(set_cookies(&response).is_empty());
            let body: Value = response.json().await.unwrap();
            assert_eq!(body, json!({}));
        }
        let received = sink.wait_for(1, 10).await;
        assert_eq!(received.len(), 1);
        let message = &received[0];
        assert_eq!(message.to, ["<ada@example.com>"]);
        assert_eq!(message.from, "<no-reply@careers.example>", "MAIL_FROM");
        assert!(message.data.contains("Subject: Reset your password"), "{}", message.data);
        assert!(message.text().contains("https://app.example.com/reset?token="));
        let token = token_of(message);
        assert!(token.len() >= 43, "at least 256 bits, base64url: {token}");
        // Nothing for the unknown address, even after the worker's next rounds.
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        assert_eq!(sink.received().len(), 1);
        // Stored as a hash only; the outbox keeps no body once delivered.
        let hashes = {
            let db = &app.state.db;
            let rows = db
                .query_all_raw(Statement::from_string(
                    db.get_database_backend(),
                    "SELECT token_hash FROM identities_password_resets".to_owned(),
                ))
                .await
                .unwrap();
            rows.iter().map(|r| r.try_get::<String>("", "token_hash").unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(hashes.len(), 1);
        assert_ne!(hashes[0], token);
        assert!(!hashes[0].contains(&token));
        assert_eq!(outbox(&app, "body").await, [None]);
        assert!(outbox(&app, "sent_at").await[0].is_some());
    }

    async fn known_and_unknown_addresses_run_the_same_statements(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        let mut seen = Vec::new();
        for email in ["ada@example.com", "nobody@example.com"] {
            let before = app.sql_statements().len();
            assert_eq!(ask(&app, email).await.status(), StatusCode::ACCEPTED);
            seen.push(app.sql_statements()[before..].to_vec());
        }
        assert!(!seen[0].is_empty());
        assert_eq!(seen[0], seen[1], "the same work for both: same time, nothing to tell them apart");
    }

    async fn completing_a_reset_sets_the_password_and_ends_every_session(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let (id, phone) = app.user_session("ada@example.com").await;
        let laptop = app.login(&USER, "ada@example.com").await;
        assert_eq!(ask(&app, "ada@example.com").await.status(), StatusCode::ACCEPTED);
        let token = token_of(&sink.wait_for(1, 10).await[0]);

        let done = complete(&app, &token, NEW_PASSWORD).await;
        assert_eq!(done.status(), StatusCode::NO_CONTENT);
        assert!(set_cookies(&done).is_empty());
        for creds in [&phone, &laptop] {
            assert!(app.record(creds).await.is_none(), "every session ended");
            assert_error(app.read(creds, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        }
        assert_error(app.login_raw(&USER, "ada@example.com", PASSWORD).await, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        assert_eq!(app.login_raw(&USER, "ada@example.com", NEW_PASSWORD).await.status(), StatusCode::CREATED);

        // Single use.
        let again = complete(&app, &token, "yet another passphrase").await;
        let body = assert_error(again, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert!(body["error"]["fields"]["token"].is_array(), "{body}");
        assert_eq!(app.login_raw(&USER, "ada@example.com", NEW_PASSWORD).await.status(), StatusCode::CREATED);
    }

    async fn the_three_newest_tokens_stay_valid_and_a_token_lives_30_minutes(backend) {
        // CONTRACT §10: asking again cannot void the owner's link; only a fourth request voids
        // the oldest of four.
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        app.create_user("ada@example.com").await;
        let mut tokens = Vec::new();
        for n in 1..=4 {
            ask(&app, "ada@example.com").await;
            tokens.push(token_of(&sink.wait_for(n, 10).await[n - 1]));
        }
        let valid = "SELECT COUNT(*) FROM identities_password_resets WHERE used_at IS NULL";
        assert_eq!(crate::data_layer::scalar(&app, valid).await, "3");
        let voided = complete(&app, &tokens[0], NEW_PASSWORD).await;
        assert_error(voided, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        // The oldest kept one works; redeeming it voids the others.
        assert_eq!(complete(&app, &tokens[1], NEW_PASSWORD).await.status(), StatusCode::NO_CONTENT);
        let after = complete(&app, &tokens[3], "yet another passphrase").await;
        assert_error(after, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;

        ask(&app, "ada@example.com").await;
        let late = token_of(&sink.wait_for(6, 10).await.last().unwrap().clone());
        app.clock.advance(30 * 60);
        let expired = complete(&app, &late, "yet another passphrase").await;
        assert_error(expired, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert_eq!(app.login_raw(&USER, "ada@example.com", NEW_PASSWORD).await.status(), StatusCode::CREATED, "unchanged");
    }

    async fn a_password_change_voids_every_reset_token(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let (_, creds) = app.user_session("ada@example.com").await;
        ask(&app, "ada@example.com").await;
        let token = token_of(&sink.wait_for(1, 10).await[0]);
        let changed = creds
            .with_csrf(app.request(Method::PATCH, "/identities/password"))
            .json(&json!({ "current_password": PASSWORD, "password": NEW_PASSWORD }))
            .send()
            .await
            .unwrap();
        assert_eq!(changed.status(), StatusCode::OK);
        let stale = complete(&app, &token, "yet another passphrase").await;
        assert_error(stale, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert_eq!(app.login_raw(&USER, "ada@example.com", NEW_PASSWORD).await.status(), StatusCode::CREATED);
    }

    async fn a_token_is_good_until_just_before_30_minutes(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        app.create_user("ada@example.com").await;
        ask(&app, "ada@example.com").await;
        let token = token_of(&sink.wait_for(1, 10).await[0]);
        app.clock.advance(30 * 60 - 1);
        assert_eq!(complete(&app, &token, NEW_PASSWORD).await.status(), StatusCode::NO_CONTENT);
    }

    async fn bad_input_is_422_and_changes_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        let missing = app.request(Method::POST, "/identities/password_resets").json(&json!({})).send().await.unwrap();
        let body = assert_error(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert!(body["error"]["fields"]["email"].is_array());
        let unknown = complete(&app, "not-a-token-of-ours-at-all-not-a-token-of-ours", NEW_PASSWORD).await;
        let body = assert_error(unknown, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert!(body["error"]["fields"]["token"].is_array());
        let short = complete(&app, "whatever", "short").await;
        let body = assert_error(short, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert!(body["error"]["fields"]["password"].is_array());
        let empty = app.request(Method::PATCH, "/identities/password_resets/current").json(&json!({})).send().await.unwrap();
        let body = assert_error(empty, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        let mut fields: Vec<&String> = body["error"]["fields"].as_object().unwrap().keys().collect();
        fields.sort();
        assert_eq!(fields, ["password", "token"]);
        assert_eq!(app.login_raw(&USER, "ada@example.com", PASSWORD).await.status(), StatusCode::CREATED);
    }

    async fn requests_are_throttled_per_email_and_address_per_email_and_per_address(backend) {
        // CONTRACT §10: per (e-mail, client address), per e-mail from every address (20), per
        // client address; for an unknown e-mail exactly as for a known one.
        let app = TestApp::spawn_with(backend, &[
            ("CLIENT_IP_HEADER", "X-Forwarded-For"), ("TRUSTED_PROXIES", "127.0.0.1,::1"),
            ("PASSWORD_RESET_LIMIT_PER_EMAIL", "2"),
            ("PASSWORD_RESET_LIMIT_PER_ADDRESS", "4"),
        ]).await;
        app.create_user("ada@example.com").await;
        let from = |address: String, email: &'static str| {
            app.request(Method::POST, "/identities/password_resets")
                .header("x-forwarded-for", address)
                .json(&json!({ "email": email }))
                .send()
        };
        for (email, attacker, owner) in [
            ("ada@example.com", "198.51.100.1", "198.51.100.2"),
            ("nobody@example.com", "198.51.100.3", "198.51.100.4"),
        ] {
            for _ in 0..2 {
                assert_eq!(from(attacker.into(), email).await.unwrap().status(), StatusCode::ACCEPTED);
            }
            // The third from that address for that e-mail is refused...
            let third = from(attacker.into(), email).await.unwrap();
            assert!(third.headers().get("retry-after").is_some());
            assert_error(third, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
            // ...but the owner elsewhere still gets their link.
            assert_eq!(from(owner.into(), email).await.unwrap().status(), StatusCode::ACCEPTED);
        }
        // Per e-mail from every address: 20 an hour, then refused from a new address too.
        for n in 0..10 {
            for _ in 0..2 {
                assert_eq!(from(format!("203.0.113.{n}"), "bob@example.com").await.unwrap().status(), StatusCode::ACCEPTED);
            }
        }
        let over = from("203.0.113.99".into(), "bob@example.com").await.unwrap();
        assert_error(over, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        // Per client address, whatever the e-mail: 198.51.100.9 has 4.
        for n in 0..4 {
            let email: &'static str = ["a@example.com", "b@example.com", "c@example.com", "d@example.com"][n];
            assert_eq!(from("198.51.100.9".into(), email).await.unwrap().status(), StatusCode::ACCEPTED);
        }
        let fifth = from("198.51.100.9".into(), "e@example.com").await.unwrap();
        assert_error(fifth, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    }

    async fn no_usable_token_is_at_rest_while_the_mail_server_is_down(backend) {
        // CONTRACT §10: every column of every table, read while the message waits, holds
        // neither the token nor the link; the body is sealed.
        let mut sink = SmtpSink::down();
        let app = spawn_with_sink(backend, &sink, &[]).await;
        app.create_user("ada@example.com").await;
        assert_eq!(ask(&app, "ada@example.com").await.status(), StatusCode::ACCEPTED);
        wait_for_attempts(&app, "1").await;
        let at_rest = crate::data_layer::every_value(&app).await;
        assert!(!at_rest.is_empty());
        assert!(at_rest.iter().all(|v| !v.contains("reset?token=")), "a reset link is at rest");
        sink.start().await;
        app.clock.advance(10);
        let token = token_of(&sink.wait_for(1, 10).await[0]);
        assert!(at_rest.iter().all(|v| !v.contains(&token)), "the token was at rest in clear");
        assert_eq!(complete(&app, &token, NEW_PASSWORD).await.status(), StatusCode::NO_CONTENT);
    }

    async fn a_mail_server_down_at_the_request_gets_the_message_when_it_is_back(backend) {
        let mut sink = SmtpSink::down();
        let app = spawn_with_sink(backend, &sink, &[]).await;
        app.create_user("ada@example.com").await;
        let response = ask(&app, "ada@example.com").await;
        assert_eq!(response.status(), StatusCode::ACCEPTED, "a down server does not fail the request");
        // The first attempt fails and is scheduled 10 s later.
        wait_for_attempts(&app, "1").await;
        assert!(outbox(&app, "last_error").await[0].is_some());
        assert!(outbox(&app, "sent_at").await[0].is_none());
        assert!(outbox(&app, "body").await[0].is_some(), "kept until delivered");

        sink.start().await;
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        assert!(sink.received().is_empty(), "not before its retry is due");
        app.clock.advance(10);
        let received = sink.wait_for(1, 10).await;
        assert_eq!(received.len(), 1);
        // The sink has the message once the SMTP exchange ends; the outbox row is updated
        // right after it.
        wait_for_attempts(&app, "2").await;
        assert!(outbox(&app, "sent_at").await[0].is_some());
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        assert_eq!(sink.received().len(), 1, "delivered once");
        let token = token_of(&received[0]);
        assert_eq!(complete(&app, &token, NEW_PASSWORD).await.status(), StatusCode::NO_CONTENT);
    }

    async fn a_message_pending_at_a_restart_goes_out_right_after_it(backend) {
        let mut sink = SmtpSink::down();
        let first = spawn_with_sink(backend, &sink, &[]).await;
        first.create_user("ada@example.com").await;
        assert_eq!(ask(&first, "ada@example.com").await.status(), StatusCode::ACCEPTED);
        wait_for_attempts(&first, "1").await;
        // The mail server comes back; the first instance would retry only in 10 s. A new
        // instance on the same database tries every pending message at its start.
        sink.start().await;
        let url = sink.url();
        let database = first.env["DATABASE_URL"].clone();
        let schema = first.env.get("DATABASE_SCHEMA").cloned().unwrap_or_default();
        let mut shared = vec![("SMTP_URL", url.as_str()), ("DATABASE_URL", database.as_str())];
        if !schema.is_empty() {
            shared.push(("DATABASE_SCHEMA", schema.as_str()));
        }
        let second = TestApp::spawn_with(backend, &shared).await;
        let now = |app: &TestApp| sessions::Clock::now(&*app.clock);
        second.clock.advance((now(&first) - now(&second)).max(0));
        second.start_mail_worker();
        let received = sink.wait_for(1, 10).await;
        assert_eq!(received.len(), 1);
        assert_eq!(received[0].to, ["<ada@example.com>"]);
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        assert_eq!(sink.received().len(), 1, "delivered once");
        assert!(outbox(&second, "sent_at").await[0].is_some());
    }

    async fn without_smtp_url_messages_are_eml_files(backend) {
        let app = TestApp::spawn(backend).await;
        app.start_mail_worker();
        app.create_user("ada@example.com").await;
        ask(&app, "ada@example.com").await;
        let dir = std::path::PathBuf::from(&app.env["MAIL_OUTBOX_DIR"]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let file = loop {
            let found = std::fs::read_dir(&dir).ok().and_then(|mut entries| entries.next()).and_then(Result::ok);
            if let Some(entry) = found {
                break entry.path();
            }
            assert!(std::time::Instant::now() < deadline, "no .eml file in {}", dir.display());
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        assert_eq!(file.extension().and_then(|e| e.to_str()), Some("eml"));
        // Only the service's user may read the messages (CONTRACT §10), once written.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while outbox(&app, "sent_at").await[0].is_none() {
            assert!(std::time::Instant::now() < deadline, "not marked sent");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&dir), 0o700);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("To: ada@example.com"), "{text}");
        assert!(text.contains("http://localhost:3000/reset?token="), "the default reset page");
    }
}
