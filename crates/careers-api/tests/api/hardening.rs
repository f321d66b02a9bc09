//! Abuse and hostile input (issue "fail closed, lose nothing, leak nothing"): login throttling,
//! cross-site refusal, CORS, and bad input that must get the contract's JSON error.

use careers_api::areas::{ADMIN, USER};
use careers_api::password::Purpose;
use careers_api::throttle::LOGIN_WINDOW_SECONDS;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_tests;
use crate::helpers::*;

backend_tests! {
    async fn ten_failed_logins_throttle_the_account_with_retry_after(backend) {
        let app = TestApp::spawn(backend).await;
        let limit = app.state.config.limits.login_failures_per_account;
        assert_eq!(limit, 10, "the contract's default");
        app.create_user("ada@example.com").await;
        app.create_user("bob@example.com").await;
        for _ in 0..limit {
            let wrong = app.login_raw(&USER, "ada@example.com", "wrong-password").await;
            assert_error(wrong, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        }
        let jobs = app.state.passwords.jobs();
        // Even the right password is refused now, without a password check.
        let throttled = app.login_raw(&USER, "ADA@example.com", PASSWORD).await;
        let retry: i64 = throttled.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=LOGIN_WINDOW_SECONDS).contains(&retry), "Retry-After {retry}");
        assert!(set_cookies(&throttled).is_empty());
        assert_error(throttled, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        assert_eq!(app.state.passwords.jobs(), jobs);
        // Another account, and the same e-mail in the admin context, are not affected.
        assert_eq!(app.login_raw(&USER, "bob@example.com", PASSWORD).await.status(), StatusCode::CREATED);
        let admin = app.login_raw(&ADMIN, "ada@example.com", PASSWORD).await;
        assert_error(admin, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        // Unknown e-mails are throttled the same way: the answer reveals nothing.
        for _ in 0..limit {
            app.login_raw(&USER, "ghost@example.com", "whatever-password").await;
        }
        let ghost = app.login_raw(&USER, "ghost@example.com", "whatever-password").await;
        assert_error(ghost, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    }

    async fn a_login_refused_for_load_costs_no_round_trip_and_counts_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        // Every hashing slot taken and the line full, as in a login storm.
        let passwords = app.state.passwords.clone();
        let held: Vec<_> = std::iter::from_fn(|| passwords.try_admit().ok()).collect();
        assert!(!held.is_empty());
        let line: Vec<_> = (0..passwords.max_waiting())
            .map(|_| {
                let passwords = passwords.clone();
                tokio::spawn(async move { passwords.admit(Purpose::Login).await.map(drop) })
            })
            .collect();
        while passwords.waiting() < passwords.max_waiting() {
            tokio::task::yield_now().await;
        }
        let limit = app.state.config.limits.login_failures_per_account;
        let (statements, jobs) = (app.statements(), app.state.passwords.jobs());
        for _ in 0..limit + 1 {
            let refused = app.login_raw(&USER, "ada@example.com", "wrong-password").await;
            assert_eq!(refused.headers()["retry-after"], "1");
            assert!(set_cookies(&refused).is_empty());
            assert_error(refused, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
        }
        // Refused before the account was read or a password checked...
        assert_eq!(app.statements(), statements);
        assert_eq!(app.state.passwords.jobs(), jobs);
        // ... and not counted as failed attempts: once the storm is over, the login goes through.
        drop(held);
        for waiter in line {
            waiter.await.unwrap().unwrap();
        }
        assert_eq!(app.login_raw(&USER, "ada@example.com", PASSWORD).await.status(), StatusCode::CREATED);
    }

    async fn a_login_flood_waits_in_line_instead_of_being_refused(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        // Far more logins at once than there are hashing slots (and than the old queue held).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let flood = (0..20 * cores).map(|_| app.login_raw(&USER, "ada@example.com", PASSWORD));
        let answers = futures::future::join_all(flood).await;
        for answer in &answers {
            assert_eq!(answer.status(), StatusCode::CREATED, "a flood waits, it is not refused");
        }
        assert_eq!(app.state.passwords.waiting(), 0);
    }

    async fn a_successful_login_refunds_its_own_attempt_only(backend) {
        let app = TestApp::spawn(backend).await;
        let limit = app.state.config.limits.login_failures_per_account;
        app.create_user("ada@example.com").await;
        for _ in 0..limit - 1 {
            app.login_raw(&USER, "ada@example.com", "wrong-password").await;
        }
        assert_eq!(app.login_raw(&USER, "ada@example.com", PASSWORD).await.status(), StatusCode::CREATED);
        assert_eq!(app.login_raw(&USER, "ada@example.com", PASSWORD).await.status(), StatusCode::CREATED);
        // The earlier failures still count: one more is the tenth, and then the door closes.
        let wrong = app.login_raw(&USER, "ada@example.com", "wrong-password").await;
        assert_error(wrong, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        let throttled = app.login_raw(&USER, "ada@example.com", PASSWORD).await;
        assert_error(throttled, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    }

    async fn an_attacker_elsewhere_never_locks_the_owner_out(backend) {
        let app = TestApp::spawn_with(backend, &[("CLIENT_IP_HEADER", "X-Forwarded-For"), ("TRUSTED_PROXIES", "127.0.0.1,::1")]).await;
        let limit = app.state.config.limits.login_failures_per_account;
        app.create_admin("admin@example.com").await;
        let from = |address: &'static str, password: &'static str| {
            app.login_from(address, &ADMIN, "admin@example.com", password)
        };
        for _ in 0..limit {
            let wrong = from("203.0.113.66", "wrong-password").await;
            assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
        }
        let attacker = from("203.0.113.66", PASSWORD).await;
        assert_error(attacker, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        // The owner, from their own address, logs in while the attacker is locked out...
        let owner = from("198.51.100.7", PASSWORD).await;
        assert_eq!(owner.status(), StatusCode::CREATED);
        // ... and keeps a full budget of their own mistakes.
        for _ in 0..limit - 1 {
            let typo = from("198.51.100.7", "typo-password").await;
            assert_eq!(typo.status(), StatusCode::UNAUTHORIZED);
        }
        assert_eq!(from("198.51.100.7", PASSWORD).await.status(), StatusCode::CREATED);
    }

    async fn invented_addresses_from_a_peer_outside_the_trusted_proxies_count_as_that_peer(backend) {
        // CONTRACT §1: the header is read only from a trusted proxy; the test client (loopback)
        // is not one here, so guesses spread over invented addresses all count for it.
        let app = TestApp::spawn_with(
            backend,
            &[("CLIENT_IP_HEADER", "X-Forwarded-For"), ("TRUSTED_PROXIES", "10.0.0.0/8")],
        )
        .await;
        let limit = app.state.config.limits.login_failures_per_account;
        app.create_user("ada@example.com").await;
        for n in 0..limit {
            let wrong = app
                .login_from(&format!("203.0.113.{n}"), &USER, "ada@example.com", "wrong-password")
                .await;
            assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
        }
        let next = app.login_from("198.51.100.7", &USER, "ada@example.com", PASSWORD).await;
        assert_error(next, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    }

    async fn a_burst_of_parallel_guesses_cannot_pass_the_limit(backend) {
        let app = TestApp::spawn(backend).await;
        let limit = app.state.config.limits.login_failures_per_account;
        app.create_user("ada@example.com").await;
        let jobs = app.state.passwords.jobs();
        let guesses = (0..3 * limit).map(|n| {
            app.login_raw(&USER, "ada@example.com", if n == 0 { "guess-0-wrong" } else { "guess-n-wrong" })
        });
        let answers = futures::future::join_all(guesses).await;
        let wrong = answers.iter().filter(|r| r.status() == StatusCode::UNAUTHORIZED).count();
        let throttled = answers.iter().filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS).count();
        assert_eq!(wrong as u64, limit, "exactly the limit was verified");
        assert_eq!(throttled as u64, 2 * limit);
        assert_eq!(app.state.passwords.jobs(), jobs + limit);
    }

    async fn ipv6_clients_count_by_their_64(backend) {
        let app = TestApp::spawn_with(
            backend,
            &[("CLIENT_IP_HEADER", "X-Forwarded-For"), ("TRUSTED_PROXIES", "127.0.0.1,::1"), ("LOGIN_FAILURES_PER_ADDRESS", "5")],
        )
        .await;
        for n in 0..6 {
            app.create_user(&format!("user{n}@example.com")).await;
        }
        // Five failures, each from another address of one /64 and on another account.
        for n in 0..5 {
            let address = format!("2001:db8:0:1::{:x}", n + 1);
            let wrong = app.login_from(&address, &USER, &format!("user{n}@example.com"), "wrong-password").await;
            assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
        }
        // A sixth address of the same /64 is the same client: refused, right password or not.
        let same = app.login_from("2001:db8:0:1:ffff::1", &USER, "user5@example.com", PASSWORD).await;
        assert_error(same, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        // The next /64 is another client.
        let other = app.login_from("2001:db8:0:2::1", &USER, "user5@example.com", PASSWORD).await;
        assert_eq!(other.status(), StatusCode::CREATED);
    }

    async fn sign_up_is_throttled_per_client_address(backend) {
        let app = TestApp::spawn_with(
            backend,
            &[("CLIENT_IP_HEADER", "X-Forwarded-For"), ("TRUSTED_PROXIES", "127.0.0.1,::1"), ("SIGNUP_LIMIT_PER_HOUR", "2")],
        )
        .await;
        let sign_up = |address: &'static str, n: u32| {
            app.request(Method::POST, "/identities/users")
                .header("x-forwarded-for", address)
                .json(&sign_up_body(&format!("new{n}@example.com")))
                .send()
        };
        for n in 0..2 {
            assert_eq!(sign_up("203.0.113.5", n).await.unwrap().status(), StatusCode::CREATED);
        }
        let (statements, jobs) = (app.statements(), app.state.passwords.jobs());
        let throttled = sign_up("203.0.113.5", 2).await.unwrap();
        let retry: i64 = throttled.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=3600).contains(&retry), "Retry-After {retry}");
        assert_error(throttled, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        // Refused before any SQL or hashing: nothing was created.
        assert_eq!(app.statements(), statements);
        assert_eq!(app.state.passwords.jobs(), jobs);
        assert_eq!(sign_up("198.51.100.9", 3).await.unwrap().status(), StatusCode::CREATED);
    }

    async fn a_taken_email_is_refused_before_any_hashing(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        let jobs = app.state.passwords.jobs();
        let taken = app
            .request(Method::POST, "/identities/users")
            .json(&sign_up_body("ADA@example.com"))
            .send()
            .await
            .unwrap();
        assert_error(taken, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(app.state.passwords.jobs(), jobs, "no hash for a taken e-mail");
    }

    async fn a_sign_up_flood_leaves_logins_their_hashing_capacity(backend) {
        let app = TestApp::spawn_with(backend, &[("SIGNUP_LIMIT_PER_HOUR", "1000")]).await;
        app.create_user("ada@example.com").await;
        let signups_done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let flood: Vec<_> = (0..40)
            .map(|n| {
                let (client, url, done) = (app.client.clone(), app.url("/identities/users"), signups_done.clone());
                tokio::spawn(async move {
                    let response = client.post(url).json(&sign_up_body(&format!("flood{n}@example.com"))).send().await.unwrap();
                    done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    response.status()
                })
            })
            .collect();
        // Let the flood take its places first.
        while app.state.passwords.waiting() < 20 {
            tokio::task::yield_now().await;
        }
        let started = std::time::Instant::now();
        let logins = (0..6).map(|_| app.login_raw(&USER, "ada@example.com", PASSWORD));
        let answers = tokio::time::timeout(std::time::Duration::from_secs(30), futures::future::join_all(logins))
            .await
            .expect("logins answered in time");
        let login_time = started.elapsed();
        let done_by_then = signups_done.load(std::sync::atomic::Ordering::SeqCst);
        for answer in &answers {
            assert_eq!(answer.status(), StatusCode::CREATED, "login during a sign-up flood");
        }
        assert!(done_by_then < 40, "logins waited for the whole flood ({login_time:?})");
        for signup in flood {
            assert_eq!(signup.await.unwrap(), StatusCode::CREATED, "sign-ups wait, they are not refused");
        }
    }

    async fn unsafe_requests_from_a_foreign_origin_are_refused_despite_the_right_csrf(backend) {
        let app = TestApp::spawn_with(backend, &[("CORS_ALLOWED_ORIGINS", "https://app.example.com")]).await;
        let (id, creds) = app.user_session("ada@example.com").await;
        let before = app.record(&creds).await.unwrap();
        let path = current_path(&USER);
        for (header, value) in [
            ("origin", "https://evil.example"),
            ("origin", "null"),
            ("sec-fetch-site", "cross-site"),
        ] {
            for method in [Method::PATCH, Method::DELETE] {
                let response = creds
                    .with_csrf(app.request(method, &path))
                    .header(header, value)
                    .send()
                    .await
                    .unwrap();
                assert_error(response, StatusCode::FORBIDDEN, "csrf_failed").await;
            }
        }
        let update = creds
            .with_csrf(app.request(Method::PATCH, &format!("/identities/user/{id}")))
            .header("origin", "https://evil.example")
            .json(&json!({ "first_name": "Mallory" }))
            .send()
            .await
            .unwrap();
        assert_error(update, StatusCode::FORBIDDEN, "csrf_failed").await;
        assert_eq!(app.record(&creds).await.unwrap(), before, "nothing changed");
        let me: serde_json::Value = app.read(&creds, id).await.json().await.unwrap();
        assert_eq!(me["first_name"], "Ada");
        // A listed origin, the API's own origin, and same-site fetches pass.
        let host = app.base.trim_start_matches("http://").to_string();
        for (header, value) in [
            ("origin", "https://app.example.com".to_string()),
            ("origin", format!("http://{host}")),
            ("sec-fetch-site", "same-site".to_string()),
        ] {
            let response = creds
                .with_csrf(app.request(Method::PATCH, &format!("/identities/user/{id}")))
                .header(header, value)
                .json(&json!({ "first_name": "Ada" }))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK);
        }
        // Reads are not affected by the origin check.
        let read = creds
            .with_cookies(app.request(Method::GET, &format!("/identities/user/{id}")))
            .header("origin", "https://evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), StatusCode::OK);
    }

    async fn cors_answers_preflights_only_for_listed_origins(backend) {
        let app = TestApp::spawn_with(backend, &[("CORS_ALLOWED_ORIGINS", "https://app.example.com")]).await;
        let preflight = |origin: &'static str| {
            app.request(Method::OPTIONS, "/identities/sessions/current")
                .header("origin", origin)
                .header("access-control-request-method", "PATCH")
                .header("access-control-request-headers", "x-csrf-token, content-type")
                .send()
        };
        let allowed = preflight("https://app.example.com").await.unwrap();
        assert_eq!(allowed.status(), StatusCode::OK);
        let headers = allowed.headers();
        assert_eq!(headers["access-control-allow-origin"], "https://app.example.com");
        assert_eq!(headers["access-control-allow-credentials"], "true");
        assert_eq!(headers["access-control-allow-headers"], "content-type,x-csrf-token");
        assert_eq!(headers["access-control-allow-methods"], "GET,POST,PUT,PATCH,DELETE");
        assert_eq!(headers["access-control-max-age"], "600");
        assert_eq!(headers["vary"], "origin");
        // The edge layer's own headers too: the preflight is answered inside it.
        assert!(headers.contains_key("x-request-id"));
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(allowed.bytes().await.unwrap().is_empty());
        let refused = preflight("https://evil.example").await.unwrap();
        assert!(refused.headers().get("access-control-allow-origin").is_none());
        // Simple requests from a listed origin carry the header, never `*`; others, and requests
        // without an origin, do not; every response varies with the origin.
        for (origin, allowed) in [(Some("https://app.example.com"), true), (Some("https://evil.example"), false), (None, false)] {
            let mut request = app.request(Method::GET, "/health/live");
            if let Some(origin) = origin {
                request = request.header("origin", origin);
            }
            let get = request.send().await.unwrap();
            assert_eq!(get.status(), StatusCode::OK);
            let headers = get.headers();
            assert_eq!(headers.get("access-control-allow-origin").is_some(), allowed, "{origin:?}");
            if allowed {
                assert_eq!(headers["access-control-allow-origin"], "https://app.example.com");
            }
            assert_eq!(headers["access-control-allow-credentials"], "true");
            assert_eq!(headers.get_all("vary").iter().collect::<Vec<_>>(), ["origin"]);
            assert!(headers.get("access-control-allow-methods").is_none());
        }
        // An error answer carries them too, so that the browser lets the frontend read it.
        let unauthenticated = app
            .request(Method::GET, "/identities/user/1")
            .header("origin", "https://app.example.com")
            .send()
            .await
            .unwrap();
        assert_eq!(unauthenticated.headers()["access-control-allow-origin"], "https://app.example.com");
        assert_error(unauthenticated, StatusCode::UNAUTHORIZED, "unauthenticated").await;
    }

    async fn oversized_and_garbage_cookies_and_headers_get_json_errors(backend) {
        let app = TestApp::spawn(backend).await;
        let (id, creds) = app.user_session("ada@example.com").await;
        let path = format!("/identities/user/{id}");
        let cases: Vec<(String, &str)> = vec![
            (format!("jwt_access={}", "A".repeat(16 * 1024)), "invalid_token"),
            ("jwt_access=a.b.c.d.e".into(), "invalid_token"),
            ("jwt_access=..".into(), "invalid_token"),
            ("jwt_access=%00%ff".into(), "invalid_token"),
            ("jwt_access=\"\"".into(), "unauthenticated"),
            (";;;=;jwt_access".into(), "unauthenticated"),
            ("=".into(), "unauthenticated"),
        ];
        for (cookie, code) in cases {
            let response = app.request(Method::GET, &path).header("cookie", cookie.clone()).send().await.unwrap();
            assert_error(response, StatusCode::UNAUTHORIZED, code).await;
        }
        // Garbage CSRF headers on an unsafe request.
        for csrf in ["", "\u{1}", &"x".repeat(10_000)] {
            let response = creds
                .with_cookies(app.request(Method::PATCH, &current_path(&USER)))
                .header("x-csrf-token", csrf)
                .send()
                .await;
            if let Ok(response) = response {
                assert_error(response, StatusCode::FORBIDDEN, "csrf_failed").await;
            }
        }
        assert_eq!(app.read(&creds, id).await.status(), StatusCode::OK, "session intact");
    }

    async fn absurd_path_and_query_values_are_400(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let (_, user) = app.user_session("ada@example.com").await;
        for path in [
            "/identities/user/99999999999999999999999",
            "/identities/user/-",
            "/identities/user/1.5",
            "/identities/user/%F0%9F%92%A9",
        ] {
            let response = user.with_cookies(app.request(Method::GET, path)).send().await.unwrap();
            assert_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
        }
        for query in ["page=0", "page=-1", "page=abc", "per_page=1000", "per_page=0",
                      "page=99999999999999999999999", "page=1&page=2"] {
            let response = admin
                .with_cookies(app.request(Method::GET, &format!("/admin-user/identities/users?{query}")))
                .send()
                .await
                .unwrap();
            assert_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
        }
    }

    async fn login_with_a_json_body_in_another_content_type_is_415(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        for content_type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/jsonx"] {
            let response = app
                .request(Method::POST, "/identities/sessions")
                .header("content-type", content_type)
                .body(json!({ "email": "ada@example.com", "password": PASSWORD }).to_string())
                .send()
                .await
                .unwrap();
            assert!(set_cookies(&response).is_empty());
            assert_error(response, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type").await;
        }
        let missing = app
            .request(Method::POST, "/identities/sessions")
            .body(json!({ "email": "ada@example.com", "password": PASSWORD }).to_string())
            .send()
            .await
            .unwrap();
        assert_error(missing, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type").await;
    }
}

mod address_limit {
    use super::*;

    backend_tests! {
        async fn failures_from_one_address_throttle_every_account(backend) {
            let app = TestApp::spawn_with(
                backend,
                &[("LOGIN_FAILURES_PER_ACCOUNT", "3"), ("LOGIN_FAILURES_PER_ADDRESS", "6")],
            )
            .await;
            for n in 0..3 {
                app.create_user(&format!("user{n}@example.com")).await;
            }
            for n in 0..2 {
                for _ in 0..3 {
                    let email = format!("user{n}@example.com");
                    let wrong = app.login_raw(&USER, &email, "wrong-password").await;
                    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
                }
            }
            // A fresh account with the right password, from the same address: refused.
            let response = app.login_raw(&USER, "user2@example.com", PASSWORD).await;
            assert!(response.headers().contains_key("retry-after"));
            assert_error(response, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        }
    }
}
