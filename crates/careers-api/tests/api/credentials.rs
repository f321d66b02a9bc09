//! New passwords judged by zxcvbn (CONTRACT §10) and the e-mails that tell an account its
//! credentials changed (CONTRACT §17, first bullet), against a real SMTP exchange.

use careers_api::areas::{ADMIN, USER};
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::helpers::*;
use crate::smtp_sink::{Received, SmtpSink};

const NEW_PASSWORD: &str = "a brand new passphrase";
const TOTP_PATH: &str = "/team/identities/admins/totp";

/// zxcvbn's warning for the most common passwords.
const COMMON: &str = "This is a very common password";

async fn spawn_with_sink(backend: Backend, sink: &SmtpSink) -> TestApp {
    let url = sink.url();
    let app = TestApp::spawn_with(backend, &[("SMTP_URL", url.as_str())]).await;
    app.start_mail_worker();
    app
}

async fn change_password(app: &TestApp, creds: &Creds, password: &str) -> Response {
    let path = match creds.ctx.name {
        "admin" => "/team/identities/admins/password",
        _ => "/identities/password",
    };
    creds
        .with_csrf(app.request(Method::PATCH, path))
        .json(&json!({ "current_password": PASSWORD, "password": password }))
        .send()
        .await
        .unwrap()
}

/// The one message on the password field of a 422.
async fn password_error(response: Response) -> String {
    let body = assert_error(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    let fields = body["error"]["fields"].as_object().unwrap();
    assert_eq!(fields.keys().collect::<Vec<_>>(), ["password"], "{body}");
    fields["password"][0].as_str().unwrap().to_owned()
}

/// A credential notice: to `to`, with `subject`, and no link or token in it.
fn assert_notice(message: &Received, to: &str, subject: &str) {
    assert_eq!(message.to, [format!("<{to}>")]);
    assert!(
        message.data.contains(&format!("Subject: {subject}")),
        "{}",
        message.data
    );
    let text = message.text();
    assert!(!text.contains("://") && !text.contains("token"), "{text}");
}

backend_tests! {
    async fn a_weak_new_password_is_422_with_zxcvbns_warning_and_changes_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        // Sign-up.
        let mut body = sign_up_body("weak@example.com");
        body["password"] = json!("password1234");
        let response = app.request(Method::POST, "/identities/users").json(&body).send().await.unwrap();
        let message = password_error(response).await;
        assert!(message.contains(COMMON), "{message}");
        let users = "SELECT COUNT(*) FROM identities_users WHERE email = 'weak@example.com'";
        assert_eq!(crate::data_layer::scalar(&app, users).await, "0");
        // The account's own words count against it.
        let mut body = sign_up_body("nora.newman@example.com");
        body["password"] = json!("nora.newman@example.com");
        body["first_name"] = json!("Nora");
        let response = app.request(Method::POST, "/identities/users").json(&body).send().await.unwrap();
        assert!(password_error(response).await.starts_with("is too easy to guess"));
        // A change, of a user's password and of an admin's.
        let (_, user) = app.user_session("ada@example.com").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        for creds in [&user, &admin] {
            let message = password_error(change_password(&app, creds, "aaaaaaaaaaaa").await).await;
            assert!(message.starts_with("is too easy to guess: "), "{message}");
            assert!(message.len() > "is too easy to guess: ".len());
        }
        assert_eq!(app.login_raw(&USER, "ada@example.com", PASSWORD).await.status(), StatusCode::CREATED);
        assert_eq!(app.login_raw(&ADMIN, "grace@example.com", PASSWORD).await.status(), StatusCode::CREATED);
        // A reset: the password is judged with the form.
        let reset = app.request(Method::PATCH, "/identities/password_resets/current")
            .json(&json!({ "token": "t".repeat(43), "password": "qwertyuiop12" }))
            .send().await.unwrap();
        assert!(!password_error(reset).await.is_empty());
        // A strong one passes.
        assert_eq!(change_password(&app, &user, NEW_PASSWORD).await.status(), StatusCode::OK);
    }

    async fn a_password_change_or_reset_is_announced_to_the_user(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink).await;
        let (_, creds) = app.user_session("ada@example.com").await;
        assert_eq!(change_password(&app, &creds, NEW_PASSWORD).await.status(), StatusCode::OK);
        let received = sink.wait_for(1, 10).await;
        assert_notice(&received[0], "ada@example.com", "Your password was changed");
        // A reset: the reset message, then the notice once the new password is set.
        let asked = app.request(Method::POST, "/identities/password_resets")
            .json(&json!({ "email": "ada@example.com" })).send().await.unwrap();
        assert_eq!(asked.status(), StatusCode::ACCEPTED);
        let text = sink.wait_for(2, 10).await[1].text();
        let start = text.find("token=").unwrap() + "token=".len();
        let token: String = text[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
        let done = app.request(Method::PATCH, "/identities/password_resets/current")
            .json(&json!({ "token": token, "password": "yet another passphrase" }))
            .send().await.unwrap();
        assert_eq!(done.status(), StatusCode::NO_CONTENT);
        let received = sink.wait_for(3, 10).await;
        assert_notice(&received[2], "ada@example.com", "Your password was reset");
    }

    async fn an_admins_password_and_second_factor_changes_are_announced(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink).await;
        let (_, creds) = app.admin_session("grace@example.com").await;
        let changed = change_password(&app, &creds, NEW_PASSWORD).await;
        assert_eq!(changed.status(), StatusCode::OK);
        let creds = Creds::from_response(&ADMIN, &changed);
        assert_notice(&sink.wait_for(1, 10).await[0], "grace@example.com", "Your password was changed");
        let (secret, codes, creds) = crate::admin_totp::enrol(&app, &creds).await;
        assert_notice(&sink.wait_for(2, 10).await[1], "grace@example.com", "A second factor was added to your account");
        // A replacement, then a removal.
        let now = sessions::Clock::now(&*app.clock);
        let started = creds.with_csrf(app.request(Method::POST, TOTP_PATH))
            .json(&json!({ "code": code_at(&secret, now + 30) }))
            .send().await.unwrap();
        app.clock.advance(30);
        let new_secret = started.json::<Value>().await.unwrap()["secret"].as_str().unwrap().to_owned();
        let confirmed = creds.with_csrf(app.request(Method::PATCH, TOTP_PATH))
            .json(&json!({ "code": code_at(&new_secret, now + 30) }))
            .send().await.unwrap();
        assert_eq!(confirmed.status(), StatusCode::OK);
        let creds = Creds::from_response(&ADMIN, &confirmed);
        assert_notice(&sink.wait_for(3, 10).await[2], "grace@example.com", "Your second factor was replaced");
        let new_codes = confirmed.json::<Value>().await.unwrap()["recovery_codes"].clone();
        assert_ne!(new_codes[0].as_str(), Some(codes[0].as_str()));
        let removed = creds.with_csrf(app.request(Method::DELETE, TOTP_PATH))
            .json(&json!({ "code": new_codes[0] }))
            .send().await.unwrap();
        assert_eq!(removed.status(), StatusCode::NO_CONTENT);
        assert_notice(&sink.wait_for(4, 10).await[3], "grace@example.com", "Your second factor was removed");
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        assert_eq!(sink.received().len(), 4, "one notice per change");
    }
}
