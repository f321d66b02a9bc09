//! Login, refresh and logout (specification §3, §4.1, §5.4; CONTRACT §3).

use careers_api::areas::{ADMIN, USER};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use sessions::SessionContext;

use crate::backend_tests;
use crate::helpers::*;

const CONTEXTS: [SessionContext; 2] = [USER, ADMIN];
const NO_ADMIN_IDLE_TIMEOUT: (&str, &str) = ("SESSION_IDLE_TIMEOUT_ADMIN", "none");

backend_tests! {
    async fn login_answers_201_with_the_contract_body(backend) {
        let app = TestApp::spawn(backend).await;
        let user_id = app.create_user("ada@example.com").await;
        let response = app.login_raw(&USER, "  ADA@Example.com ", PASSWORD).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let creds = Creds::from_response(&USER, &response);
        let body: Value = response.json().await.unwrap();
        let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["access_expires_at", "csrf", "identities_user", "session_expires_at"]);
        assert_eq!(body["csrf"], creds.csrf.as_str(), "csrf in body equals the CSRF cookie");
        let user = body["identities_user"].as_object().unwrap();
        let mut user_keys: Vec<&str> = user.keys().map(String::as_str).collect();
        user_keys.sort();
        assert_eq!(user_keys, ["country_id", "email", "first_name", "id", "last_name", "mobile", "phone_code"]);
        assert_eq!(user["id"], user_id);
        assert_eq!(user["email"], "ada@example.com");
        let now = sessions::Clock::now(&*app.clock);
        let parse = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap().timestamp();
        assert_eq!(parse(&body["access_expires_at"]), now + 3600);
        assert_eq!(parse(&body["session_expires_at"]), now + 7 * 24 * 3600);
    }

    async fn admin_login_returns_identities_admin(backend) {
        let app = TestApp::spawn(backend).await;
        let admin_id = app.create_admin("grace@example.com").await;
        let response = app.login_raw(&ADMIN, "grace@example.com", PASSWORD).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let body: Value = response.json().await.unwrap();
        let admin = body["identities_admin"].as_object().unwrap();
        let mut keys: Vec<&str> = admin.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["email", "first_name", "id", "last_name"]);
        assert_eq!(admin["id"], admin_id);
        assert!(body.get("identities_user").is_none());
    }

    async fn wrong_password_and_unknown_email_are_the_same_401(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        app.create_admin("grace@example.com").await;
        for (ctx, email) in [(USER, "ada@example.com"), (ADMIN, "grace@example.com")] {
            let wrong = app.login_raw(&ctx, email, "not-the-password").await;
            assert!(set_cookies(&wrong).is_empty(), "no cookie on failure");
            let wrong = assert_error(wrong, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
            let unknown = app.login_raw(&ctx, "nobody@example.com", PASSWORD).await;
            assert!(set_cookies(&unknown).is_empty());
            let unknown = assert_error(unknown, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
            assert_eq!(wrong, unknown, "identical bodies");
        }
        // A user cannot log in to the admin context and the reverse: separate identity stores.
        let cross = app.login_raw(&ADMIN, "ada@example.com", PASSWORD).await;
        assert_error(cross, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        let cross = app.login_raw(&USER, "grace@example.com", PASSWORD).await;
        assert_error(cross, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
    }

    async fn an_unknown_email_still_costs_one_password_verification(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        let before = app.state.passwords.jobs();
        let unknown = app.login_raw(&USER, "nobody@example.com", PASSWORD).await;
        assert_eq!(unknown.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(app.state.passwords.jobs(), before + 1);
        let wrong = app.login_raw(&USER, "ada@example.com", "not-the-password").await;
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(app.state.passwords.jobs(), before + 2);
    }

    async fn login_form_errors_are_422_with_fields(backend) {
        let app = TestApp::spawn(backend).await;
        let response = app
            .request(Method::POST, "/identities/sessions")
            .json(&serde_json::json!({ "email": "ada@example.com" }))
            .send()
            .await
            .unwrap();
        let body = assert_error(response, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
        assert!(body["error"]["fields"]["password"].is_array(), "{body}");
        assert!(body["error"]["fields"].get("email").is_none(), "{body}");
    }

    async fn refresh_keeps_the_session_and_replaces_access_and_csrf(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let (_, old) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            let login_claims = app.claims(&old);
            let before = app.record(&old).await.unwrap();
            app.clock.advance(120);
            let response = app.refresh(&old).await;
            assert_eq!(response.status(), StatusCode::OK);
            let cookies = set_cookies(&response);
            assert_eq!(cookies.len(), 2);
            let new = Creds::from_response(&ctx, &response);
            let body: Value = response.json().await.unwrap();
            let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort();
            assert_eq!(keys, ["access_expires_at", "csrf", "session_expires_at"]);
            assert_eq!(body["csrf"], new.csrf.as_str());

            let (old_claims, new_claims) = (app.claims(&old), app.claims(&new));
            assert_eq!(new_claims.ruid, old_claims.ruid, "refresh UID unchanged");
            assert_ne!(new_claims.uid, old_claims.uid, "new access UID");
            assert_ne!(new.csrf, old.csrf, "new CSRF token");
            assert_eq!(new_claims.iat, login_claims.iat + 120);
            assert_eq!(new_claims.exp, new_claims.iat + 3600);

            let after = app.record(&new).await.unwrap();
            assert_eq!(after.expires_at, before.expires_at, "session end never moves");
            assert_eq!(after.access_uid, new_claims.uid);
            for cookie in &cookies {
                assert_eq!(
                    cookie.value_of("Expires"),
                    Some(httpdate(before.expires_at).as_str()),
                    "cookie expiry stays at the session's end"
                );
            }

            // The new token reads; the old one is rejected for reads at once.
            assert_eq!(app.read(&new, new_claims.subject).await.status(), StatusCode::OK);
            let stale = app.read(&old, old_claims.subject).await;
            assert_error(stale, StatusCode::UNAUTHORIZED, "session_ended").await;
            // Only its own CSRF could replay it; with the new CSRF it is refused.
            let mixed = Creds { csrf: new.csrf.clone(), ..old.clone() };
            assert_error(app.refresh(&mixed).await, StatusCode::FORBIDDEN, "csrf_failed").await;
        }
    }

    async fn expired_access_token_must_refresh_and_refresh_accepts_it(backend) {
        // Without an idle timeout, so that the admin context keeps the user's lifetimes
        // (an admin unseen for 30 minutes is ended by default: session_management.rs).
        let app = TestApp::spawn_with(backend, &[NO_ADMIN_IDLE_TIMEOUT]).await;
        for ctx in CONTEXTS {
            let (id, creds) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            app.clock.advance(3599);
            assert_eq!(app.read(&creds, id).await.status(), StatusCode::OK, "valid for just under an hour");
            app.clock.advance(1);
            assert_error(app.read(&creds, id).await, StatusCode::UNAUTHORIZED, "access_expired").await;
            let response = app.refresh(&creds).await;
            assert_eq!(response.status(), StatusCode::OK, "refresh accepts an expired access token");
            let fresh = Creds::from_response(&ctx, &response);
            assert_eq!(app.read(&fresh, id).await.status(), StatusCode::OK);
        }
    }

    async fn logout_accepts_an_expired_access_token(backend) {
        // Without an idle timeout, so that the admin context keeps the user's lifetimes
        // (an admin unseen for 30 minutes is ended by default: session_management.rs).
        let app = TestApp::spawn_with(backend, &[NO_ADMIN_IDLE_TIMEOUT]).await;
        for ctx in CONTEXTS {
            let (_, creds) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            app.clock.advance(2 * 3600);
            assert_eq!(app.logout(&creds).await.status(), StatusCode::NO_CONTENT);
            assert!(app.record(&creds).await.is_none());
        }
    }

    async fn after_seven_days_the_session_has_ended_everywhere(backend) {
        // Without an idle timeout, so that the admin context keeps the user's lifetimes
        // (an admin unseen for 30 minutes is ended by default: session_management.rs).
        let app = TestApp::spawn_with(backend, &[NO_ADMIN_IDLE_TIMEOUT]).await;
        for ctx in CONTEXTS {
            let (id, creds) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            // Keep refreshing: the session's end never moves.
            let mut current = creds;
            for _ in 0..6 {
                app.clock.advance(24 * 3600);
                let response = app.refresh(&current).await;
                assert_eq!(response.status(), StatusCode::OK);
                current = Creds::from_response(&ctx, &response);
            }
            app.clock.advance(24 * 3600);
            assert_error(app.read(&current, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert_error(app.refresh(&current).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert_error(app.logout(&current).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        }
    }

    async fn refresh_and_logout_need_the_csrf_header(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let (id, creds) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            let before = app.record(&creds).await.unwrap();
            for method in [Method::PATCH, Method::DELETE] {
                let missing = creds
                    .with_cookies(app.request(method.clone(), &current_path(&ctx)))
                    .send()
                    .await
                    .unwrap();
                assert!(set_cookies(&missing).is_empty());
                assert_error(missing, StatusCode::FORBIDDEN, "csrf_failed").await;
                let wrong = creds
                    .with_cookies(app.request(method.clone(), &current_path(&ctx)))
                    .header("x-csrf-token", "A".repeat(43))
                    .send()
                    .await
                    .unwrap();
                assert_error(wrong, StatusCode::FORBIDDEN, "csrf_failed").await;
                // The CSRF cookie alone is not the header: double submit means both.
                let cookie_only = creds
                    .with_cookies(app.request(method, &current_path(&ctx)))
                    .header("x-csrf-token", "")
                    .send()
                    .await
                    .unwrap();
                assert_error(cookie_only, StatusCode::FORBIDDEN, "csrf_failed").await;
            }
            assert_eq!(app.record(&creds).await.unwrap(), before, "nothing changed");
            assert_eq!(app.read(&creds, id).await.status(), StatusCode::OK);
        }
    }

    async fn reads_need_no_csrf_header(backend) {
        let app = TestApp::spawn(backend).await;
        let (id, creds) = app.user_session("ada@example.com").await;
        let response = app
            .request(Method::GET, &format!("/identities/user/{id}"))
            .header("cookie", format!("jwt_access={}", creds.access))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let head = app
            .request(Method::HEAD, &format!("/identities/user/{id}"))
            .header("cookie", format!("jwt_access={}", creds.access))
            .send()
            .await
            .unwrap();
        assert_eq!(head.status(), StatusCode::OK);
    }

    async fn logout_destroys_the_session_and_deletes_both_cookies(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let (id, creds) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            assert!(app.record(&creds).await.is_some());
            let response = app.logout(&creds).await;
            assert_eq!(response.status(), StatusCode::NO_CONTENT);
            let cookies = set_cookies(&response);
            let mut names: Vec<&str> = cookies.iter().map(|c| c.name.as_str()).collect();
            names.sort();
            let mut expected = vec![ctx.access_cookie, ctx.csrf_cookie];
            expected.sort();
            assert_eq!(names, expected);
            for cookie in &cookies {
                assert_eq!(cookie.value, "");
                assert_eq!(cookie.value_of("Max-Age"), Some("0"));
                assert_eq!(cookie.value_of("Path"), Some("/"));
                assert_eq!(cookie.value_of("Expires"), Some("Thu, 01 Jan 1970 00:00:00 GMT"));
            }
            assert!(response.bytes().await.unwrap().is_empty(), "204 has no body");
            assert!(app.record(&creds).await.is_none(), "store record removed");
            assert_error(app.read(&creds, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert_error(app.logout(&creds).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert_error(app.refresh(&creds).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        }
    }

    async fn two_logins_are_two_independent_sessions(backend) {
        let app = TestApp::spawn(backend).await;
        let id = app.create_user("ada@example.com").await;
        let laptop = app.login(&USER, "ada@example.com").await;
        let phone = app.login(&USER, "ada@example.com").await;
        assert_ne!(app.claims(&laptop).ruid, app.claims(&phone).ruid);
        assert_eq!(app.logout(&laptop).await.status(), StatusCode::NO_CONTENT);
        assert_error(app.read(&laptop, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_eq!(app.read(&phone, id).await.status(), StatusCode::OK);
        assert_eq!(app.refresh(&phone).await.status(), StatusCode::OK);
    }

    async fn a_user_reads_only_their_own_record(backend) {
        let app = TestApp::spawn(backend).await;
        let (id, creds) = app.user_session("ada@example.com").await;
        let other = app.create_user("bob@example.com").await;
        let own = app.read(&creds, id).await;
        assert_eq!(own.status(), StatusCode::OK);
        let body: Value = own.json().await.unwrap();
        let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["country_id", "email", "first_name", "id", "last_name", "mobile", "phone_code"]);
        assert_error(app.read(&creds, other).await, StatusCode::NOT_FOUND, "not_found").await;
        assert_error(app.read(&creds, 999_999).await, StatusCode::NOT_FOUND, "not_found").await;
    }

    async fn admins_list_users_with_search_and_pages(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        for name in ["ada", "bob", "carol"] {
            app.create_user(&format!("{name}@example.com")).await;
        }
        let all: Value = admin
            .with_cookies(app.request(Method::GET, "/admin-user/identities/users?per_page=2"))
            .send().await.unwrap().json().await.unwrap();
        assert_eq!(all["identities_users"].as_array().unwrap().len(), 2);
        assert_eq!(all["meta"], serde_json::json!({"page": 1, "per_page": 2, "total": 3}));
        let first = all["identities_users"][0].as_object().unwrap();
        assert!(first.get("password_digest").is_none());
        assert_eq!(first.len(), 7);
        let found: Value = admin
            .with_cookies(app.request(Method::GET, "/admin-user/identities/users?q=BOB"))
            .send().await.unwrap().json().await.unwrap();
        assert_eq!(found["meta"]["total"], 1);
        assert_eq!(found["identities_users"][0]["email"], "bob@example.com");
        let bad = admin
            .with_cookies(app.request(Method::GET, "/admin-user/identities/users?per_page=101"))
            .send().await.unwrap();
        assert_error(bad, StatusCode::BAD_REQUEST, "malformed_request").await;
    }
}

pub fn httpdate(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .unwrap()
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string()
}

mod deleted_identity {
    use super::*;
    use careers_api::models::identities::user::entity as user;
    use sea_orm::{EntityTrait, ModelTrait};

    backend_tests! {
        async fn a_deleted_users_session_cannot_be_refreshed_or_used(backend) {
            let app = TestApp::spawn(backend).await;
            let (id, creds) = app.user_session("ada@example.com").await;
            let model = user::Entity::find_by_id(id).one(&*app.state.db).await.unwrap().unwrap();
            model.delete(&*app.state.db).await.unwrap();
            let refresh = app.refresh(&creds).await;
            assert!(set_cookies(&refresh).is_empty(), "no fresh cookies for a deleted identity");
            assert_error(refresh, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert_error(app.read(&creds, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        }
    }
}
