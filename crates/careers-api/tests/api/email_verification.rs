//! E-mail verification (CONTRACT §14): sign-up queues a message through the outbox, a user asks
//! again (throttled), the token is redeemed without a cookie; against a real SMTP exchange.

use careers_api::areas::USER;
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::helpers::*;
use crate::smtp_sink::{Received, SmtpSink};

const VERIFY_URL: &str = "https://app.example.com/verify-email?token={token}";
const CURRENT: &str = "/identities/email_verifications/current";
const EMAIL: &str = "nora@example.com";

async fn spawn_with_sink(backend: Backend, sink: &SmtpSink, extra: &[(&str, &str)]) -> TestApp {
    let url = sink.url();
    let mut overrides = vec![
        ("SMTP_URL", url.as_str()),
        ("EMAIL_VERIFICATION_URL", VERIFY_URL),
    ];
    overrides.extend_from_slice(extra);
    let app = TestApp::spawn_with(backend, &overrides).await;
    app.start_mail_worker();
    app
}

/// Signs `EMAIL` up and logs in.
async fn sign_up(app: &TestApp) -> Creds {
    let response = app
        .request(Method::POST, "/identities/users")
        .json(&sign_up_body(EMAIL))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    app.login(&USER, EMAIL).await
}

/// The token of a verification message: the link's `token` parameter.
fn token_of(message: &Received) -> String {
    let text = message.text();
    let start = text
        .find("verify-email?token=")
        .expect("a verification link")
        + "verify-email?token=".len();
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

async fn verify(app: &TestApp, token: &str) -> Response {
    app.request(Method::PATCH, CURRENT)
        .json(&json!({ "token": token }))
        .send()
        .await
        .unwrap()
}

async fn ask_again(app: &TestApp, creds: &Creds) -> Response {
    creds
        .with_csrf(app.request(Method::POST, "/identities/email_verifications"))
        .send()
        .await
        .unwrap()
}

async fn state_of(app: &TestApp, creds: &Creds) -> Value {
    let response = creds
        .with_cookies(app.request(Method::GET, CURRENT))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    let mut keys: Vec<&String> = body["email_verifications"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    keys.sort();
    assert_eq!(keys, ["email", "verified_at"], "{body}");
    body["email_verifications"].clone()
}

backend_tests! {
    async fn sign_up_sends_a_link_whose_token_verifies_the_email_without_a_cookie(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let creds = sign_up(&app).await;
        let received = sink.wait_for(1, 10).await;
        assert_eq!(received[0].to, [format!("<{EMAIL}>")]);
        assert!(received[0].data.contains("Subject: Confirm your e-mail address"), "{}", received[0].data);
        let token = token_of(&received[0]);
        assert!(token.len() >= 43, "256 bits, base64url: {token}");
        assert_eq!(state_of(&app, &creds).await, json!({ "email": EMAIL, "verified_at": null }));
        // Stored as a hash only.
        let hash = crate::data_layer::scalar(&app, "SELECT token_hash FROM identities_email_verifications").await;
        assert!(!hash.contains(&token));

        let done = verify(&app, &token).await;
        assert_eq!(done.status(), StatusCode::NO_CONTENT);
        assert!(set_cookies(&done).is_empty());
        let verified = state_of(&app, &creds).await;
        let at = verified["verified_at"].as_str().expect("verified_at set");
        assert!(chrono::DateTime::parse_from_rfc3339(at).is_ok(), "{at}");
        // Single use; and once verified, no new message.
        let again = verify(&app, &token).await;
        let body = assert_error(again, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert!(body["error"]["fields"]["token"].is_array(), "{body}");
        assert_error(ask_again(&app, &creds).await, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(state_of(&app, &creds).await["verified_at"], at);
    }

    async fn asking_again_keeps_the_three_newest_tokens_and_a_token_lives_24_hours(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let creds = sign_up(&app).await;
        for _ in 0..3 {
            assert_eq!(ask_again(&app, &creds).await.status(), StatusCode::ACCEPTED);
        }
        let tokens: Vec<String> = sink.wait_for(4, 10).await.iter().map(token_of).collect();
        let valid = "SELECT COUNT(*) FROM identities_email_verifications WHERE used_at IS NULL";
        assert_eq!(crate::data_layer::scalar(&app, valid).await, "3");
        assert_error(verify(&app, &tokens[0]).await, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        app.clock.advance(24 * 60 * 60 - 1);
        assert_eq!(verify(&app, &tokens[1]).await.status(), StatusCode::NO_CONTENT, "good until just before 24 hours");
        // Redeeming one voids the others.
        assert_error(verify(&app, &tokens[3]).await, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        // Another user's token, 24 hours on: expired.
        let other = app.request(Method::POST, "/identities/users").json(&sign_up_body("otto@example.com")).send().await.unwrap();
        assert_eq!(other.status(), StatusCode::CREATED);
        let late = token_of(sink.wait_for(5, 10).await.last().unwrap());
        app.clock.advance(24 * 60 * 60);
        assert_error(verify(&app, &late).await, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        let unverified = "SELECT COUNT(*) FROM identities_users WHERE email = 'otto@example.com' AND email_verified_at IS NULL";
        assert_eq!(crate::data_layer::scalar(&app, unverified).await, "1");
    }

    async fn a_user_asks_again_at_most_five_times_an_hour(backend) {
        let app = TestApp::spawn(backend).await;
        let creds = sign_up(&app).await;
        for _ in 0..5 {
            assert_eq!(ask_again(&app, &creds).await.status(), StatusCode::ACCEPTED);
        }
        let sixth = ask_again(&app, &creds).await;
        let retry: i64 = sixth.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=3600).contains(&retry), "{retry}");
        assert_error(sixth, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        // Another user is not affected.
        let (_, other) = app.user_session("otto@example.com").await;
        assert_error(ask_again(&app, &other).await, StatusCode::CONFLICT, "conflict").await;
    }

    async fn bad_input_and_missing_sessions_change_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        let creds = sign_up(&app).await;
        let empty = app.request(Method::PATCH, CURRENT).json(&json!({})).send().await.unwrap();
        let body = assert_error(empty, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert!(body["error"]["fields"]["token"].is_array());
        let unknown = verify(&app, "not-a-token-of-ours-at-all-not-a-token-of-ours").await;
        assert_error(unknown, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        let anonymous = app.request(Method::GET, CURRENT).send().await.unwrap();
        assert_error(anonymous, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        let no_csrf = creds.with_cookies(app.request(Method::POST, "/identities/email_verifications")).send().await.unwrap();
        assert_error(no_csrf, StatusCode::FORBIDDEN, "csrf_failed").await;
        assert_eq!(state_of(&app, &creds).await["verified_at"], Value::Null);
        // Users made by an operator (and the tests' fixtures) are verified.
        let (_, made) = app.user_session("made@example.com").await;
        assert!(state_of(&app, &made).await["verified_at"].is_string());
    }

    async fn the_demo_users_are_verified(backend) {
        let app = TestApp::spawn(backend).await;
        careers_api::seed::demo(&app.state.db, &app.state.passwords).await.unwrap();
        let unverified = "SELECT COUNT(*) FROM identities_users WHERE email_verified_at IS NULL";
        assert_eq!(crate::data_layer::scalar(&app, unverified).await, "0");
        let all = "SELECT COUNT(*) FROM identities_users";
        assert_ne!(crate::data_layer::scalar(&app, all).await, "0");
    }
}
