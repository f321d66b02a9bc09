//! The admins' second factor (CONTRACT §11): enrolment, login with a TOTP code or a recovery
//! code, `ADMIN_MFA=required`, removal, and the encryption key's rotation.

use careers_api::areas::ADMIN;
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::fixtures::expect_fields;
use crate::helpers::*;
use crate::session_management::get;

const EMAIL: &str = "grace@example.com";
const TOTP_PATH: &str = "/team/identities/admins/totp";

fn now(app: &TestApp) -> i64 {
    sessions::Clock::now(&*app.clock)
}

async fn totp(app: &TestApp, creds: &Creds, method: Method, body: Option<Value>) -> Response {
    let request = creds.with_csrf(app.request(method, TOTP_PATH));
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    request.send().await.unwrap()
}

/// Enrols the creds' admin: (base32 secret, recovery codes, the session's new credentials).
pub(crate) async fn enrol(app: &TestApp, creds: &Creds) -> (String, Vec<String>, Creds) {
    let started = totp(app, creds, Method::POST, None).await;
    assert_eq!(started.status(), StatusCode::CREATED);
    let body: Value = started.json().await.unwrap();
    let secret = body["secret"].as_str().unwrap().to_owned();
    let code = code_at(&secret, now(app));
    let confirmed = totp(app, creds, Method::PATCH, Some(json!({ "code": code }))).await;
    assert_eq!(confirmed.status(), StatusCode::OK);
    let raised = Creds::from_response(&ADMIN, &confirmed);
    let body: Value = confirmed.json().await.unwrap();
    let codes = body["recovery_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    (secret, codes, raised)
}

/// A session of the admin opened without a second factor, as a login that raced the
/// confirmation would have it (no route opens one once the factor exists).
async fn session_without_factor(app: &TestApp, admin_id: i64) -> Creds {
    let issued = app
        .state
        .sessions
        .open(
            &ADMIN,
            admin_id,
            &reqwest::header::HeaderMap::new(),
            None,
            false,
        )
        .await
        .unwrap();
    Creds {
        ctx: ADMIN,
        access: issued.access_token,
        csrf: issued.csrf,
    }
}

async fn login(app: &TestApp, extra: Value) -> Response {
    let mut body = json!({ "email": EMAIL, "password": PASSWORD });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    app.request(Method::POST, session_path(&ADMIN))
        .json(&body)
        .send()
        .await
        .unwrap()
}

backend_tests! {
    async fn an_enrolment_is_confirmed_by_a_code_and_answers_ten_recovery_codes_once(backend) {
        let app = TestApp::spawn(backend).await;
        let (admin_id, creds) = app.admin_session(EMAIL).await;
        let no_csrf = creds.with_cookies(app.request(Method::POST, TOTP_PATH)).send().await.unwrap();
        assert_error(no_csrf, StatusCode::FORBIDDEN, "csrf_failed").await;

        let started = totp(&app, &creds, Method::POST, None).await;
        assert_eq!(started.status(), StatusCode::CREATED);
        let body: Value = started.json().await.unwrap();
        let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["otpauth_uri", "secret"]);
        let secret = body["secret"].as_str().unwrap().to_owned();
        assert!(secret.len() >= 32, "160 bits in base32: {secret}");
        let uri = body["otpauth_uri"].as_str().unwrap();
        assert!(uri.starts_with("otpauth://totp/Careers:grace%40example.com?"), "{uri}");
        assert!(uri.contains(&format!("secret={secret}")) && uri.contains("issuer=Careers"), "{uri}");
        // At rest the secret is sealed, never the base32 text or its bytes.
        let stored = crate::data_layer::scalar(&app, &format!("SELECT totp_pending_secret FROM identities_admins WHERE id = {admin_id}")).await;
        assert!(!stored.contains(&secret) && stored.len() > 40, "{stored}");

        let wrong = totp(&app, &creds, Method::PATCH, Some(json!({ "code": "000000" }))).await;
        let wrong_body = assert_error(wrong, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert!(wrong_body["error"]["fields"]["code"].is_array());
        let code = code_at(&secret, now(&app));
        let confirmed = totp(&app, &creds, Method::PATCH, Some(json!({ "code": code }))).await;
        assert_eq!(confirmed.status(), StatusCode::OK);
        // The privilege raise replaces the session's credentials, as a refresh does.
        assert_eq!(set_cookies(&confirmed).len(), 2);
        let raised = Creds::from_response(&ADMIN, &confirmed);
        assert_ne!(raised.access, creds.access);
        let body: Value = confirmed.json().await.unwrap();
        assert_eq!(body["csrf"], raised.csrf.as_str());
        let superseded = get(&app, &creds, "/team/identities/admins/sessions").await;
        assert_error(superseded, StatusCode::UNAUTHORIZED, "session_ended").await;
        let creds = raised;
        let codes: Vec<&str> = body["recovery_codes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        assert_eq!(codes.len(), 10);
        assert_eq!(codes.iter().collect::<std::collections::HashSet<_>>().len(), 10);
        // Stored as hashes only.
        let count = crate::data_layer::scalar(&app, &format!("SELECT COUNT(*) FROM identities_admin_recovery_codes WHERE admin_id = {admin_id}")).await;
        assert_eq!(count, "10");
        for code in &codes {
            let found = crate::data_layer::scalar(&app, &format!("SELECT COUNT(*) FROM identities_admin_recovery_codes WHERE code_hash = '{code}'")).await;
            assert_eq!(found, "0");
        }
        // Once confirmed, neither a new enrolment nor a second confirmation.
        assert_error(totp(&app, &creds, Method::POST, None).await, StatusCode::CONFLICT, "conflict").await;
        let again = totp(&app, &creds, Method::PATCH, Some(json!({ "code": code }))).await;
        assert_error(again, StatusCode::CONFLICT, "conflict").await;
    }

    async fn with_a_factor_a_login_needs_a_code_that_is_accepted_once(backend) {
        // Five failures allowed: four unrefunded `mfa_required` answers would use them up.
        let app = TestApp::spawn_with(backend, &[("LOGIN_FAILURES_PER_ACCOUNT", "5")]).await;
        let (_, creds) = app.admin_session(EMAIL).await;
        let (secret, _, _) = enrol(&app, &creds).await;
        app.clock.advance(30);

        // The right password alone: 401 mfa_required, no cookie, and no failure counted.
        for _ in 0..4 {
            let response = login(&app, json!({})).await;
            assert!(set_cookies(&response).is_empty());
            assert_error(response, StatusCode::UNAUTHORIZED, "mfa_required").await;
        }
        // A wrong password never reveals that a factor exists.
        let wrong_password = app.login_raw(&ADMIN, EMAIL, "not the password").await;
        assert_error(wrong_password, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        // A wrong code is a failed login.
        let wrong = login(&app, json!({ "otp": "000000" })).await;
        assert!(set_cookies(&wrong).is_empty());
        assert_error(wrong, StatusCode::UNAUTHORIZED, "invalid_credentials").await;

        let code = code_at(&secret, now(&app));
        let response = login(&app, json!({ "otp": code })).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        assert_eq!(set_cookies(&response).len(), 2);
        // The same code again, in the same step: refused.
        let replay = login(&app, json!({ "otp": code })).await;
        assert_error(replay, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        // One step of skew: a code of the previous step after 60 s is still good once.
        app.clock.advance(60);
        let late = code_at(&secret, now(&app) - 30);
        assert_eq!(login(&app, json!({ "otp": late })).await.status(), StatusCode::CREATED);
        // Two steps away: refused.
        app.clock.advance(30);
        let stale = code_at(&secret, now(&app) - 60);
        let current = code_at(&secret, now(&app));
        if stale != current && stale != code_at(&secret, now(&app) + 30) {
            assert_error(login(&app, json!({ "otp": stale })).await, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        }
    }

    async fn a_recovery_code_logs_in_once(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, creds) = app.admin_session(EMAIL).await;
        let (_, codes, _) = enrol(&app, &creds).await;
        let first = codes[0].to_uppercase().replace('-', "");
        assert_eq!(login(&app, json!({ "recovery_code": first })).await.status(), StatusCode::CREATED, "dashes and case do not matter");
        let again = login(&app, json!({ "recovery_code": codes[0] })).await;
        assert_error(again, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        assert_eq!(login(&app, json!({ "recovery_code": codes[1] })).await.status(), StatusCode::CREATED);
        let made_up = login(&app, json!({ "recovery_code": "aaaa-bbbb-cccc-dddd" })).await;
        assert_error(made_up, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
    }

    async fn when_required_an_admin_without_a_factor_may_only_enrol_refresh_and_log_out(backend) {
        let app = TestApp::spawn_with(backend, &[("ADMIN_MFA", "required")]).await;
        let (_, creds) = app.admin_session(EMAIL).await;
        for path in ["/admin-user/identities/users", "/team/identities/admins/sessions"] {
            let response = creds.with_cookies(app.request(Method::GET, path)).send().await.unwrap();
            assert_error(response, StatusCode::FORBIDDEN, "mfa_enrollment_required").await;
        }
        let refreshed = app.refresh(&creds).await;
        assert_eq!(refreshed.status(), StatusCode::OK);
        let creds = Creds::from_response(&ADMIN, &refreshed);
        let (secret, _, creds) = enrol(&app, &creds).await;
        let users = creds.with_cookies(app.request(Method::GET, "/admin-user/identities/users")).send().await.unwrap();
        assert_eq!(users.status(), StatusCode::OK, "enrolled: the team area opens");
        // Removing the factor is not allowed when it is required.
        app.clock.advance(30);
        let code = code_at(&secret, now(&app));
        let removal = totp(&app, &creds, Method::DELETE, Some(json!({ "code": code }))).await;
        assert_error(removal, StatusCode::FORBIDDEN, "forbidden").await;
        assert_eq!(app.logout(&creds).await.status(), StatusCode::NO_CONTENT);
    }

    async fn an_unenrolled_admin_can_log_out_under_required(backend) {
        let app = TestApp::spawn_with(backend, &[("ADMIN_MFA", "required")]).await;
        let (_, creds) = app.admin_session(EMAIL).await;
        assert_eq!(app.logout(&creds).await.status(), StatusCode::NO_CONTENT);
    }

    async fn under_optional_a_factor_is_removed_with_a_code(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, creds) = app.admin_session(EMAIL).await;
        assert_error(totp(&app, &creds, Method::DELETE, Some(json!({ "code": "123456" }))).await, StatusCode::NOT_FOUND, "not_found").await;
        let (secret, codes, creds) = enrol(&app, &creds).await;
        let wrong = totp(&app, &creds, Method::DELETE, Some(json!({ "code": "000000" }))).await;
        assert_error(wrong, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        let missing = totp(&app, &creds, Method::DELETE, Some(json!({}))).await;
        assert_error(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert_eq!(login(&app, json!({})).await.status(), StatusCode::UNAUTHORIZED, "still required");
        let removed = totp(&app, &creds, Method::DELETE, Some(json!({ "code": codes[3] }))).await;
        assert_eq!(removed.status(), StatusCode::NO_CONTENT);
        assert_eq!(login(&app, json!({})).await.status(), StatusCode::CREATED, "a password alone again");
        let _ = secret;
    }

    /// `MFA_ENCRYPTION_KEY` rotation across restarts: a new key first, the old one kept; the
    /// first login re-seals the secret with the new key, after which the old key can go.
    async fn the_encryption_key_rotates_without_losing_a_factor(backend) {
        const OLD: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
        const NEW: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";
        let first = TestApp::spawn_with(backend, &[("MFA_ENCRYPTION_KEY", OLD)]).await;
        let (admin_id, creds) = first.admin_session(EMAIL).await;
        let (secret, _, _) = enrol(&first, &creds).await;
        let sealed = format!("SELECT totp_secret FROM identities_admins WHERE id = {admin_id}");
        let sealed_before = crate::data_layer::scalar(&first, &sealed).await;

        // The same database (the SQLite file, or the PostgreSQL schema) under new keys.
        let database = first.env["DATABASE_URL"].clone();
        let schema = first.env.get("DATABASE_SCHEMA").cloned().unwrap_or_default();
        let restart = |keys: String| {
            let (database, schema) = (database.clone(), schema.clone());
            async move {
                let mut env = vec![("DATABASE_URL", database.as_str()), ("MFA_ENCRYPTION_KEY", keys.as_str())];
                if !schema.is_empty() {
                    env.push(("DATABASE_SCHEMA", schema.as_str()));
                }
                TestApp::spawn_with(backend, &env).await
            }
        };
        let second = restart(format!("{NEW},{OLD}")).await;
        second.clock.advance((now(&first) - now(&second)).max(0) + 30);
        let code = code_at(&secret, now(&second));
        assert_eq!(login(&second, json!({ "otp": code })).await.status(), StatusCode::CREATED);
        let sealed_after = crate::data_layer::scalar(&second, &sealed).await;
        assert_ne!(sealed_before, sealed_after, "re-sealed with the new key");

        let third = restart(NEW.to_owned()).await;
        third.clock.advance((now(&second) - now(&third)).max(0) + 30);
        let code = code_at(&secret, now(&third));
        assert_eq!(login(&third, json!({ "otp": code })).await.status(), StatusCode::CREATED, "the old key is no longer needed");
        // A secret no listed key opens is a server error, not a wrong code.
        let fourth = restart(OLD.to_owned()).await;
        fourth.clock.advance((now(&third) - now(&fourth)).max(0) + 30);
        let code = code_at(&secret, now(&fourth));
        assert_error(login(&fourth, json!({ "otp": code })).await, StatusCode::INTERNAL_SERVER_ERROR, "internal").await;
    }

    async fn second_factor_guesses_are_capped_per_account_from_every_address(backend) {
        // CONTRACT §8: ten wrong codes for one admin in 15 minutes, from twelve addresses
        // (each far under its own limit), and `otp` is refused; a recovery code still works.
        let app = TestApp::spawn_with(
            backend,
            &[("CLIENT_IP_HEADER", "X-Forwarded-For"), ("TRUSTED_PROXIES", "127.0.0.1,::1")],
        )
        .await;
        let (_, creds) = app.admin_session(EMAIL).await;
        let (secret, codes, _) = enrol(&app, &creds).await;
        let from = |address: String, extra: Value| {
            let mut body = json!({ "email": EMAIL, "password": PASSWORD });
            body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            app.request(Method::POST, session_path(&ADMIN))
                .header("x-forwarded-for", address)
                .json(&body)
                .send()
        };
        let wrong = |app: &TestApp| {
            let right: u32 = code_at(&secret, now(app)).parse().unwrap();
            format!("{:06}", (right + 500_000) % 1_000_000)
        };
        for n in 0..10 {
            let guess = from(format!("203.0.113.{n}"), json!({ "otp": wrong(&app) })).await.unwrap();
            assert_error(guess, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        }
        let right = code_at(&secret, now(&app));
        let capped = from("203.0.113.10".into(), json!({ "otp": right })).await.unwrap();
        let retry: i64 = capped.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=careers_api::throttle::LOGIN_WINDOW_SECONDS).contains(&retry), "{retry}");
        assert_error(capped, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        let recovery = from("203.0.113.11".into(), json!({ "recovery_code": codes[0] })).await.unwrap();
        assert_eq!(recovery.status(), StatusCode::CREATED, "a recovery code is still accepted");
        // The window passes; the owner's code works again. (Redis keeps its counters' windows
        // by the server's own clock, which the test's clock does not move.)
        if backend == Backend::SqliteMemoryStore {
            app.clock.advance(15 * 60 + 1);
            let code = code_at(&secret, now(&app));
            let back = from("198.51.100.7".into(), json!({ "otp": code })).await.unwrap();
            assert_eq!(back.status(), StatusCode::CREATED);
        }
    }

    async fn code_guesses_on_the_totp_routes_are_throttled_like_logins(backend) {
        // A session holder cannot guess codes at DELETE without limit (CONTRACT §8): each wrong
        // code counts as a failed login of (account, address) and on the admin's code cap.
        let app = TestApp::spawn(backend).await;
        let (_, creds) = app.admin_session(EMAIL).await;
        let (secret, _, creds) = enrol(&app, &creds).await;
        let limit = app.state.config.limits.login_failures_per_account;
        for _ in 0..limit {
            let right: u32 = code_at(&secret, now(&app)).parse().unwrap();
            let wrong = format!("{:06}", (right + 500_000) % 1_000_000);
            let guess = totp(&app, &creds, Method::DELETE, Some(json!({ "code": wrong }))).await;
            expect_fields(guess, &["code"]).await;
        }
        let code = code_at(&secret, now(&app));
        let throttled = totp(&app, &creds, Method::DELETE, Some(json!({ "code": code }))).await;
        assert_error(throttled, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        // The factor is still there.
        let confirmed = crate::data_layer::scalar(
            &app,
            "SELECT COUNT(*) FROM identities_admins WHERE totp_confirmed_at IS NOT NULL",
        )
        .await;
        assert_eq!(confirmed, "1");
    }

    /// CONTRACT §11, the review's first finding: a password-only session of an admin who must
    /// enrol waits while the owner enrols in another session; it never reaches team data.
    async fn the_second_factor_belongs_to_the_session(backend) {
        let app = TestApp::spawn_with(backend, &[("ADMIN_MFA", "required")]).await;
        let (admin_id, owner) = app.admin_session(EMAIL).await;
        let attacker = Creds::from_response(&ADMIN, &app.login_raw(&ADMIN, EMAIL, PASSWORD).await);
        let users = "/admin-user/identities/users";
        assert_error(get(&app, &attacker, users).await, StatusCode::FORBIDDEN, "mfa_enrollment_required").await;
        let (secret, _, owner) = enrol(&app, &owner).await;
        // Confirming ended every other session: the attacker's is gone, refresh included.
        assert_error(get(&app, &attacker, users).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_error(app.refresh(&attacker).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_eq!(get(&app, &owner, users).await.status(), StatusCode::OK);
        // The raised session keeps the factor through a refresh.
        let owner = Creds::from_response(&ADMIN, &app.refresh(&owner).await);
        assert_eq!(get(&app, &owner, users).await.status(), StatusCode::OK);
        // A login with a code opens a session that reaches team data at once.
        app.clock.advance(30);
        let code = code_at(&secret, now(&app));
        let with_code = Creds::from_response(&ADMIN, &login(&app, json!({ "otp": code })).await);
        assert_eq!(get(&app, &with_code, users).await.status(), StatusCode::OK);
        // A session opened without the factor (a login racing the confirmation) is ended by
        // the first team-area request it makes, not let through.
        let raced = session_without_factor(&app, admin_id).await;
        assert_error(get(&app, &raced, users).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_error(app.refresh(&raced).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_eq!(get(&app, &owner, users).await.status(), StatusCode::OK);
    }

    /// CONTRACT §11: a lost or stolen authenticator is replaced with a code of the factor in
    /// force; the old factor holds until the new one is confirmed, which ends other sessions.
    async fn a_factor_is_replaced_with_a_code_of_the_old_one(backend) {
        let app = TestApp::spawn_with(backend, &[("ADMIN_MFA", "required")]).await;
        let (_, creds) = app.admin_session(EMAIL).await;
        let (old_secret, old_codes, creds) = enrol(&app, &creds).await;
        assert_error(totp(&app, &creds, Method::POST, None).await, StatusCode::CONFLICT, "conflict").await;
        let wrong = totp(&app, &creds, Method::POST, Some(json!({ "code": "000000" }))).await;
        assert_error(wrong, StatusCode::CONFLICT, "conflict").await;
        app.clock.advance(30);
        let code = code_at(&old_secret, now(&app));
        let started = totp(&app, &creds, Method::POST, Some(json!({ "code": code }))).await;
        assert_eq!(started.status(), StatusCode::CREATED);
        let new_secret = crate::fixtures::json(started, StatusCode::CREATED).await["secret"].as_str().unwrap().to_owned();
        assert_ne!(new_secret, old_secret);
        // Until the replacement is confirmed, the old factor holds.
        app.clock.advance(30);
        let other = login(&app, json!({ "otp": code_at(&old_secret, now(&app)) })).await;
        assert_eq!(other.status(), StatusCode::CREATED, "the old factor still logs in");
        let other = Creds::from_response(&ADMIN, &other);
        let confirmed = totp(&app, &creds, Method::PATCH, Some(json!({ "code": code_at(&new_secret, now(&app)) }))).await;
        let creds = Creds::from_response(&ADMIN, &confirmed);
        let new_codes = crate::fixtures::json(confirmed, StatusCode::OK).await["recovery_codes"].clone();
        // The other session ended; the old factor and its recovery codes are gone.
        let users = "/admin-user/identities/users";
        assert_error(get(&app, &other, users).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_eq!(get(&app, &creds, users).await.status(), StatusCode::OK);
        app.clock.advance(30);
        assert_error(login(&app, json!({ "otp": code_at(&old_secret, now(&app)) })).await, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        assert_error(login(&app, json!({ "recovery_code": old_codes[0] })).await, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        assert_eq!(login(&app, json!({ "otp": code_at(&new_secret, now(&app)) })).await.status(), StatusCode::CREATED);
        // A recovery code of the factor in force also starts a replacement.
        let again = totp(&app, &creds, Method::POST, Some(json!({ "code": new_codes[0] }))).await;
        assert_eq!(again.status(), StatusCode::CREATED);
    }

    /// CONTRACT §11: removing the factor ends every other session of the admin.
    async fn removing_the_factor_ends_the_other_sessions(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, creds) = app.admin_session(EMAIL).await;
        let (secret, codes, creds) = enrol(&app, &creds).await;
        app.clock.advance(30);
        let other = Creds::from_response(&ADMIN, &login(&app, json!({ "otp": code_at(&secret, now(&app)) })).await);
        let users = "/admin-user/identities/users";
        assert_eq!(get(&app, &other, users).await.status(), StatusCode::OK);
        let removed = totp(&app, &creds, Method::DELETE, Some(json!({ "code": codes[0] }))).await;
        assert_eq!(removed.status(), StatusCode::NO_CONTENT);
        assert_error(get(&app, &other, users).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_eq!(get(&app, &creds, users).await.status(), StatusCode::OK, "this session stays");
    }
}
