//! Session management (CONTRACT §9): an identity's view of its sessions, ending them, the team
//! area's view of a user's sessions, idle timeouts; and the password change (§10).

use careers_api::areas::{ADMIN, USER};
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};
use sessions::SessionContext;

use crate::backend_tests;
use crate::helpers::*;

const CONTEXTS: [SessionContext; 2] = [USER, ADMIN];
const FORWARDED: (&str, &str) = ("CLIENT_IP_HEADER", "X-Forwarded-For");
/// The test client is the balancer: it connects from loopback.
const PROXIES: (&str, &str) = ("TRUSTED_PROXIES", "127.0.0.1,::1");

/// A login from `address` with `agent` as its `User-Agent`.
async fn login_with(
    app: &TestApp,
    ctx: &SessionContext,
    email: &str,
    address: &str,
    agent: &str,
) -> Creds {
    let response = app
        .request(Method::POST, session_path(ctx))
        .header("x-forwarded-for", address)
        .header("user-agent", agent)
        .json(&json!({ "email": email, "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    Creds::from_response(ctx, &response)
}

pub(crate) async fn get(app: &TestApp, creds: &Creds, path: &str) -> Response {
    creds
        .with_cookies(app.request(Method::GET, path))
        .send()
        .await
        .unwrap()
}

async fn delete(app: &TestApp, creds: &Creds, path: &str) -> Response {
    creds
        .with_csrf(app.request(Method::DELETE, path))
        .send()
        .await
        .unwrap()
}

async fn sessions_of(app: &TestApp, creds: &Creds) -> Vec<Value> {
    let response = get(app, creds, session_path(&creds.ctx)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body.as_object().unwrap().len(), 1, "{body}");
    body["sessions"].as_array().unwrap().clone()
}

/// Whether the creds' session still authenticates a read of its own area.
async fn alive(app: &TestApp, creds: &Creds, subject: i64) -> bool {
    let response = app.read(creds, subject).await;
    match response.status() {
        StatusCode::OK => true,
        _ => {
            assert_error(response, StatusCode::UNAUTHORIZED, "session_ended").await;
            false
        }
    }
}

fn password_path(ctx: &SessionContext) -> &'static str {
    if *ctx == USER {
        "/identities/password"
    } else {
        "/team/identities/admins/password"
    }
}

async fn change_password(app: &TestApp, creds: &Creds, current: &str, new: &str) -> Response {
    creds
        .with_csrf(app.request(Method::PATCH, password_path(&creds.ctx)))
        .json(&json!({ "current_password": current, "password": new }))
        .send()
        .await
        .unwrap()
}

backend_tests! {
    async fn the_client_address_is_read_from_the_header_only_behind_a_trusted_proxy(backend) {
        // Inside: loopback (the test client) and the 10/8 hops are trusted, so the client is the
        // rightmost entry that is not one of them, whatever the client wrote to its left.
        let hops = ("TRUSTED_PROXIES", "127.0.0.1,::1,10.0.0.0/8");
        let app = TestApp::spawn_with(backend, &[FORWARDED, hops]).await;
        app.create_user("ada@example.com").await;
        let creds = login_with(&app, &USER, "ada@example.com", "6.6.6.6, 198.51.100.7, 10.1.2.3", "Firefox/133").await;
        assert_eq!(sessions_of(&app, &creds).await[0]["ip"], "198.51.100.7");
        // Outside: a peer that is not a trusted proxy is taken at its TCP address.
        let outside = ("TRUSTED_PROXIES", "10.0.0.0/8");
        let app = TestApp::spawn_with(backend, &[FORWARDED, outside]).await;
        app.create_user("ada@example.com").await;
        let creds = login_with(&app, &USER, "ada@example.com", "198.51.100.7", "Firefox/133").await;
        assert_eq!(sessions_of(&app, &creds).await[0]["ip"], "127.0.0.1");
    }

    async fn the_owner_lists_their_live_sessions_most_recent_first(backend) {
        let app = TestApp::spawn_with(backend, &[FORWARDED, PROXIES]).await;
        for ctx in CONTEXTS {
            let email = format!("{}@example.com", ctx.name);
            let (subject, _) = app.session(&ctx, &email).await;
            let first = login_with(&app, &ctx, &email, "203.0.113.7", "Firefox/133").await;
            app.clock.advance(120);
            let second = login_with(&app, &ctx, &email, "2001:db8::42", "Safari/18").await;
            app.clock.advance(120);
            // Another identity and the other context stay out of the listing.
            let other_ctx = if ctx == USER { ADMIN } else { USER };
            app.session(&other_ctx, &email).await;
            app.session(&ctx, &format!("other-{}", email)).await;

            let listed = sessions_of(&app, &first).await;
            assert_eq!(listed.len(), 3, "{listed:?}");
            for session in &listed {
                let mut keys: Vec<&str> = session.as_object().unwrap().keys().map(String::as_str).collect();
                keys.sort();
                assert_eq!(keys, ["created_at", "current", "expires_at", "id", "ip", "last_seen_at", "user_agent"]);
            }
            // The listing request touched `first` (last seen 240 s ago): it is now the most
            // recent; then `second`, then the helper's session.
            assert_eq!(listed[0]["user_agent"], "Firefox/133");
            assert_eq!(listed[0]["ip"], "203.0.113.7");
            assert_eq!(listed[0]["current"], true);
            assert_eq!(listed[1]["user_agent"], "Safari/18");
            assert_eq!(listed[1]["ip"], "2001:db8::42");
            assert_eq!(listed[1]["current"], false);
            assert_eq!(listed[2]["current"], false);
            let now = sessions::Clock::now(&*app.clock);
            let at = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap().timestamp();
            assert_eq!(at(&listed[0]["last_seen_at"]), now);
            assert_eq!(at(&listed[1]["created_at"]), now - 120);
            assert_eq!(at(&listed[1]["last_seen_at"]), now - 120);
            assert_eq!(at(&listed[1]["expires_at"]), now - 120 + 7 * 24 * 3600);
            // The public id is neither credential half of the session.
            let claims = app.claims(&second);
            let id = listed[1]["id"].as_str().unwrap();
            assert_ne!(id, claims.ruid.to_string());
            assert_ne!(id, claims.uid.to_string());
            assert!(!second.access.contains(id));

            // The same list from the other session, with `current` moved.
            let seen_from_second = sessions_of(&app, &second).await;
            let current: Vec<&Value> = seen_from_second.iter().filter(|s| s["current"] == true).collect();
            assert_eq!(current.len(), 1);
            assert_eq!(current[0]["id"], id);
            let _ = subject;
        }
    }

    async fn the_current_session_is_the_requests_own(backend) {
        let app = TestApp::spawn_with(backend, &[FORWARDED, PROXIES]).await;
        for ctx in CONTEXTS {
            let email = format!("{}@example.com", ctx.name);
            app.session(&ctx, &email).await;
            let mine = login_with(&app, &ctx, &email, "198.51.100.9", "curl/8.11").await;
            let response = get(&app, &mine, &current_path(&ctx)).await;
            assert_eq!(response.status(), StatusCode::OK);
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["sessions"]["current"], true);
            assert_eq!(body["sessions"]["user_agent"], "curl/8.11");
            assert_eq!(body["sessions"]["ip"], "198.51.100.9");
            // Without a session: 401.
            let anonymous = app.request(Method::GET, &current_path(&ctx)).send().await.unwrap();
            assert_error(anonymous, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        }
    }

    async fn a_user_agent_is_kept_to_256_bytes_at_a_character_boundary(backend) {
        let app = TestApp::spawn_with(backend, &[FORWARDED, PROXIES]).await;
        app.create_user("ua@example.com").await;
        // 255 ASCII bytes then a two-byte character: cut before it.
        let agent = format!("{}é and more", "a".repeat(255));
        let creds = login_with(&app, &USER, "ua@example.com", "192.0.2.1", &agent).await;
        let listed = sessions_of(&app, &creds).await;
        assert_eq!(listed[0]["user_agent"].as_str().unwrap(), "a".repeat(255));
    }

    async fn ending_one_session_by_its_id(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let email = format!("{}@example.com", ctx.name);
            let (subject, mine) = app.session(&ctx, &email).await;
            let lost_laptop = app.login(&ctx, &email).await;
            let listed = sessions_of(&app, &mine).await;
            let other_id = listed.iter().find(|s| s["current"] == false).unwrap()["id"].as_str().unwrap().to_owned();
            let path = format!("{}/{other_id}", session_path(&ctx));

            // CSRF is required: without it nothing ends.
            let no_csrf = mine.with_cookies(app.request(Method::DELETE, &path)).send().await.unwrap();
            assert_error(no_csrf, StatusCode::FORBIDDEN, "csrf_failed").await;
            assert!(alive(&app, &lost_laptop, subject).await);

            // Another identity cannot end it: 404, as for an id that does not exist.
            let (_, stranger) = app.session(&ctx, &format!("stranger-{email}")).await;
            assert_error(delete(&app, &stranger, &path).await, StatusCode::NOT_FOUND, "not_found").await;
            assert!(alive(&app, &lost_laptop, subject).await);
            let unknown = format!("{}/{}", session_path(&ctx), sessions::SessionId::random());
            assert_error(delete(&app, &mine, &unknown).await, StatusCode::NOT_FOUND, "not_found").await;
            let garbage = format!("{}/not-an-id", session_path(&ctx));
            assert_error(delete(&app, &mine, &garbage).await, StatusCode::NOT_FOUND, "not_found").await;

            let ended = delete(&app, &mine, &path).await;
            assert_eq!(ended.status(), StatusCode::NO_CONTENT);
            assert!(set_cookies(&ended).is_empty(), "ending another session leaves this one's cookies");
            assert!(app.record(&lost_laptop).await.is_none(), "the store no longer holds it");
            assert!(!alive(&app, &lost_laptop, subject).await);
            assert!(alive(&app, &mine, subject).await);
            assert_error(delete(&app, &mine, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        }
    }

    async fn ending_the_current_session_by_its_id_is_a_logout(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let (subject, mine) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            let listed = sessions_of(&app, &mine).await;
            let path = format!("{}/{}", session_path(&ctx), listed[0]["id"].as_str().unwrap());
            let ended = delete(&app, &mine, &path).await;
            assert_eq!(ended.status(), StatusCode::NO_CONTENT);
            let cookies = set_cookies(&ended);
            assert_eq!(cookies.len(), 2, "both cookies deleted");
            for cookie in cookies {
                assert_eq!(cookie.value_of("Max-Age"), Some("0"), "{}", cookie.name);
            }
            assert!(app.record(&mine).await.is_none());
            assert!(!alive(&app, &mine, subject).await);
        }
    }

    async fn ending_every_other_session_keeps_the_current_one(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let email = format!("{}@example.com", ctx.name);
            let (subject, mine) = app.session(&ctx, &email).await;
            let others = [app.login(&ctx, &email).await, app.login(&ctx, &email).await];
            let (neighbour_id, neighbour) = app.session(&ctx, &format!("neighbour-{email}")).await;

            let no_csrf = mine
                .with_cookies(app.request(Method::DELETE, session_path(&ctx)))
                .send()
                .await
                .unwrap();
            assert_error(no_csrf, StatusCode::FORBIDDEN, "csrf_failed").await;
            assert_eq!(sessions_of(&app, &mine).await.len(), 3);

            let ended = delete(&app, &mine, session_path(&ctx)).await;
            assert_eq!(ended.status(), StatusCode::NO_CONTENT);
            for other in &others {
                assert!(app.record(other).await.is_none());
                assert!(!alive(&app, other, subject).await);
            }
            assert!(alive(&app, &mine, subject).await);
            let listed = sessions_of(&app, &mine).await;
            assert_eq!(listed.len(), 1);
            assert_eq!(listed[0]["current"], true);
            assert!(alive(&app, &neighbour, neighbour_id).await, "other identities keep theirs");
        }
    }

    async fn an_admin_lists_and_ends_a_users_sessions(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let (user_id, phone) = app.user_session("ada@example.com").await;
        let laptop = app.login(&USER, "ada@example.com").await;
        let path = format!("/admin-user/identities/users/{user_id}/sessions");

        let response = get(&app, &admin, &path).await;
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.unwrap();
        let listed = body["sessions"].as_array().unwrap();
        assert_eq!(listed.len(), 2);
        assert!(listed.iter().all(|s| s["current"] == false));

        // The user context cannot reach the team area, and the admin needs CSRF to end them.
        assert_error(get(&app, &phone, &path).await, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        let no_csrf = admin.with_cookies(app.request(Method::DELETE, &path)).send().await.unwrap();
        assert_error(no_csrf, StatusCode::FORBIDDEN, "csrf_failed").await;
        assert!(alive(&app, &phone, user_id).await);

        let ended = delete(&app, &admin, &path).await;
        assert_eq!(ended.status(), StatusCode::NO_CONTENT);
        for creds in [&phone, &laptop] {
            assert!(app.record(creds).await.is_none());
            assert!(!alive(&app, creds, user_id).await);
        }
        assert!(alive(&app, &admin, 0).await, "the admin's own session lives");
        let response = get(&app, &admin, &path).await;
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["sessions"], json!([]));

        let unknown = "/admin-user/identities/users/999999/sessions";
        assert_error(get(&app, &admin, unknown).await, StatusCode::NOT_FOUND, "not_found").await;
        assert_error(delete(&app, &admin, unknown).await, StatusCode::NOT_FOUND, "not_found").await;
    }

    async fn a_user_session_idle_for_the_timeout_ends_and_activity_keeps_it(backend) {
        let app = TestApp::spawn_with(backend, &[("SESSION_IDLE_TIMEOUT_USER", "10m")]).await;
        let (id, creds) = app.user_session("ada@example.com").await;
        // Reads every 9 minutes keep it alive well past 10 minutes since the login.
        for _ in 0..3 {
            app.clock.advance(9 * 60);
            assert!(alive(&app, &creds, id).await);
        }
        // A read within min(60 s, 10 min / 4) of the last write does not write again.
        let seen = app.record(&creds).await.unwrap().last_seen_at;
        app.clock.advance(59);
        assert!(alive(&app, &creds, id).await);
        assert_eq!(app.record(&creds).await.unwrap().last_seen_at, seen);
        app.clock.advance(1);
        assert!(alive(&app, &creds, id).await);
        assert_eq!(app.record(&creds).await.unwrap().last_seen_at, seen + 60);

        app.clock.advance(10 * 60);
        assert!(!alive(&app, &creds, id).await, "10 minutes unseen: ended");
        assert!(app.record(&creds).await.is_none(), "and removed from the store");
        assert_error(app.refresh(&creds).await, StatusCode::UNAUTHORIZED, "session_ended").await;
    }

    async fn an_idle_session_cannot_log_out_either(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        app.clock.advance(30 * 60);
        assert_error(app.logout(&admin).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert!(app.record(&admin).await.is_none());
    }

    async fn a_refresh_after_the_idle_timeout_is_session_ended(backend) {
        let app = TestApp::spawn_with(backend, &[("SESSION_IDLE_TIMEOUT_USER", "90s")]).await;
        let (_, creds) = app.user_session("ada@example.com").await;
        app.clock.advance(60);
        assert_eq!(app.refresh(&creds).await.status(), StatusCode::OK, "a refresh is activity");
        let (_, idle) = app.user_session("bob@example.com").await;
        app.clock.advance(90);
        assert_error(app.refresh(&idle).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert!(app.record(&idle).await.is_none());
    }

    async fn admins_idle_out_after_30_minutes_by_default_and_users_never(backend) {
        let app = TestApp::spawn(backend).await;
        let (admin_id, admin) = app.admin_session("grace@example.com").await;
        let (user_id, user) = app.user_session("ada@example.com").await;
        app.clock.advance(29 * 60);
        assert!(alive(&app, &admin, admin_id).await);
        app.clock.advance(31 * 60);
        assert!(!alive(&app, &admin, admin_id).await, "31 minutes unseen");
        // The user's access token expired meanwhile (1 h), but the session lives on.
        assert_error(app.read(&user, user_id).await, StatusCode::UNAUTHORIZED, "access_expired").await;
        assert_eq!(app.refresh(&user).await.status(), StatusCode::OK);
    }

    async fn activity_never_moves_the_absolute_end(backend) {
        let app = TestApp::spawn_with(backend, &[("SESSION_IDLE_TIMEOUT_USER", "2h")]).await;
        let (id, mut creds) = app.user_session("ada@example.com").await;
        let end = app.record(&creds).await.unwrap().expires_at;
        // A refresh every 50 minutes for 7 days.
        let mut elapsed = 0;
        while elapsed + 50 * 60 < 7 * 24 * 3600 {
            app.clock.advance(50 * 60);
            elapsed += 50 * 60;
            let refreshed = app.refresh(&creds).await;
            assert_eq!(refreshed.status(), StatusCode::OK, "after {elapsed} s");
            creds = Creds::from_response(&USER, &refreshed);
            assert_eq!(app.record(&creds).await.unwrap().expires_at, end);
        }
        app.clock.advance(7 * 24 * 3600 - elapsed);
        assert!(!alive(&app, &creds, id).await);
        assert_error(app.refresh(&creds).await, StatusCode::UNAUTHORIZED, "session_ended").await;
    }

    async fn a_password_change_ends_every_other_session_and_refreshes_this_one(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let email = format!("{}@example.com", ctx.name);
            let (subject, mine) = app.session(&ctx, &email).await;
            let others = [app.login(&ctx, &email).await, app.login(&ctx, &email).await];
            let (neighbour_id, neighbour) = app.session(&ctx, &format!("neighbour-{email}")).await;
            let new_password = "a brand new passphrase";

            let response = change_password(&app, &mine, PASSWORD, new_password).await;
            assert_eq!(response.status(), StatusCode::OK);
            let changed = Creds::from_response(&ctx, &response);
            let body: Value = response.json().await.unwrap();
            let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["access_expires_at", "csrf", "session_expires_at"]);
            assert_eq!(body["csrf"], changed.csrf.as_str());
            assert_ne!(changed.access, mine.access);
            assert_ne!(changed.csrf, mine.csrf);
            // The same session, rotated: same refresh UID, new access UID.
            assert_eq!(app.claims(&changed).ruid, app.claims(&mine).ruid);
            assert!(alive(&app, &changed, subject).await);
            for other in &others {
                assert!(app.record(other).await.is_none());
                assert!(!alive(&app, other, subject).await);
            }
            assert!(alive(&app, &neighbour, neighbour_id).await);

            // The old password no longer logs in; the new one does.
            let old = app.login_raw(&ctx, &email, PASSWORD).await;
            assert_error(old, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
            assert_eq!(app.login_raw(&ctx, &email, new_password).await.status(), StatusCode::CREATED);
        }
    }

    async fn a_password_change_refuses_a_wrong_current_password_a_short_one_and_no_csrf(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let email = format!("{}@example.com", ctx.name);
            let (subject, mine) = app.session(&ctx, &email).await;
            let other = app.login(&ctx, &email).await;

            let wrong = change_password(&app, &mine, "not the password", "a brand new passphrase").await;
            let body = assert_error(wrong, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
            let fields: Vec<&String> = body["error"]["fields"].as_object().unwrap().keys().collect();
            assert_eq!(fields, ["current_password"]);

            let short = change_password(&app, &mine, PASSWORD, "short").await;
            let body = assert_error(short, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
            assert!(body["error"]["fields"]["password"].is_array(), "{body}");

            let missing = mine
                .with_csrf(app.request(Method::PATCH, password_path(&ctx)))
                .json(&json!({}))
                .send()
                .await
                .unwrap();
            let body = assert_error(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
            let mut fields: Vec<&String> = body["error"]["fields"].as_object().unwrap().keys().collect();
            fields.sort();
            assert_eq!(fields, ["current_password", "password"]);

            let no_csrf = mine
                .with_cookies(app.request(Method::PATCH, password_path(&ctx)))
                .json(&json!({ "current_password": PASSWORD, "password": "a brand new passphrase" }))
                .send()
                .await
                .unwrap();
            assert_error(no_csrf, StatusCode::FORBIDDEN, "csrf_failed").await;

            // Nothing changed: both sessions live, the password still logs in.
            assert!(alive(&app, &mine, subject).await);
            assert!(alive(&app, &other, subject).await);
            assert_eq!(app.login_raw(&ctx, &email, PASSWORD).await.status(), StatusCode::CREATED);
        }
    }

    async fn wrong_current_passwords_count_as_failed_logins(backend) {
        let app = TestApp::spawn_with(backend, &[("LOGIN_FAILURES_PER_ACCOUNT", "3")]).await;
        for ctx in CONTEXTS {
            let email = format!("{}@example.com", ctx.name);
            let (_, mine) = app.session(&ctx, &email).await;
            for _ in 0..3 {
                let wrong = change_password(&app, &mine, "not the password", "a brand new passphrase").await;
                assert_eq!(wrong.status(), StatusCode::UNPROCESSABLE_ENTITY);
            }
            // The account's failures are spent: the change and a login are both throttled.
            let throttled = change_password(&app, &mine, PASSWORD, "a brand new passphrase").await;
            assert!(throttled.headers().get("retry-after").is_some());
            assert_error(throttled, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
            let login = app.login_raw(&ctx, &email, PASSWORD).await;
            assert_error(login, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        }
    }
}
