//! Abuse resistance of the session engine (CONTRACT §8): theft detection on every route, a
//! login ending the session it replaces, and the cap on sessions per identity.

use careers_api::areas::{ADMIN, USER};
use reqwest::{Method, StatusCode};
use serde_json::json;
use sessions::SessionContext;

use crate::backend_tests;
use crate::helpers::*;

const CONTEXTS: [SessionContext; 2] = [USER, ADMIN];

backend_tests! {
    async fn a_token_superseded_longer_than_the_grace_window_ends_the_session_on_any_route(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            for on_write in [false, true] {
                let email = format!("{}-{on_write}@example.com", ctx.name);
                let (id, owner) = app.session(&ctx, &email).await;
                // The attacker refreshes first with a copy of the owner's cookies.
                let stolen = app.refresh(&owner).await;
                assert_eq!(stolen.status(), StatusCode::OK);
                let attacker = Creds::from_response(&ctx, &stolen);
                app.clock.advance(11);
                let presented = if on_write {
                    app.write(&owner, id).await
                } else {
                    app.read(&owner, id).await
                };
                assert!(set_cookies(&presented).is_empty());
                assert_error(presented, StatusCode::UNAUTHORIZED, "session_ended").await;
                // The whole session ended, the attacker's fresh token with it.
                assert!(app.record(&attacker).await.is_none(), "{} write={on_write}", ctx.name);
                assert_error(app.read(&attacker, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
                assert_error(app.refresh(&attacker).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            }
        }
    }

    async fn inside_the_grace_window_a_superseded_token_is_refused_and_the_session_lives(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in CONTEXTS {
            let (id, old) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            let refreshed = app.refresh(&old).await;
            let new = Creds::from_response(&ctx, &refreshed);
            app.clock.advance(9);
            assert_error(app.read(&old, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert_error(app.write(&old, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert!(app.record(&new).await.is_some());
            assert_eq!(app.read(&new, id).await.status(), StatusCode::OK);
        }
    }

    async fn the_marketplace_treats_a_stolen_token_as_anonymous_and_ends_the_session(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, owner) = app.user_session("ada@example.com").await;
        let attacker = Creds::from_response(&USER, &app.refresh(&owner).await);
        app.clock.advance(11);
        let browse = owner
            .with_cookies(app.request(Method::GET, "/marketplace/careers/jobs"))
            .send()
            .await
            .unwrap();
        assert_eq!(browse.status(), StatusCode::OK);
        assert!(app.record(&attacker).await.is_none());
    }

    async fn a_login_ends_the_session_it_replaces_in_that_browser(backend) {
        let app = TestApp::spawn(backend).await;
        let (id, first) = app.user_session("ada@example.com").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        // The same browser logs in again: it sends its current cookies of both contexts.
        let second = app
            .request(Method::POST, session_path(&USER))
            .header("cookie", format!("{}; {}", first.cookie_header(), admin.cookie_header()))
            .json(&json!({ "email": "ada@example.com", "password": PASSWORD }))
            .send()
            .await
            .unwrap();
        assert_eq!(second.status(), StatusCode::CREATED);
        let second = Creds::from_response(&USER, &second);
        assert!(app.record(&first).await.is_none(), "the replaced session ended");
        assert_error(app.read(&first, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert!(app.record(&second).await.is_some());
        // The other context's session is not this login's business.
        assert!(app.record(&admin).await.is_some());
        // A failed login ends nothing.
        let failed = second
            .with_cookies(app.request(Method::POST, session_path(&USER)))
            .json(&json!({ "email": "ada@example.com", "password": "wrong-password" }))
            .send()
            .await
            .unwrap();
        assert_eq!(failed.status(), StatusCode::UNAUTHORIZED);
        assert!(app.record(&second).await.is_some());
    }

    async fn sessions_per_identity_are_capped_least_recently_used_first(backend) {
        let app = TestApp::spawn_with(backend, &[("SESSIONS_PER_IDENTITY", "3")]).await;
        for ctx in CONTEXTS {
            let email = format!("{}@example.com", ctx.name);
            let (id, first) = app.session(&ctx, &email).await;
            let (_, other_identity) = app.session(&ctx, &format!("other-{email}")).await;
            app.clock.advance(1);
            let second = app.login(&ctx, &email).await;
            app.clock.advance(1);
            let third = app.login(&ctx, &email).await;
            // The first session is used again, so the second is now the least recently used.
            app.clock.advance(120);
            assert_eq!(app.read(&first, id).await.status(), StatusCode::OK);
            let fourth = app.login(&ctx, &email).await;
            assert!(app.record(&second).await.is_none(), "{}: LRU ended", ctx.name);
            assert_error(app.read(&second, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            for kept in [&first, &third, &fourth, &other_identity] {
                assert!(app.record(kept).await.is_some(), "{}", ctx.name);
            }
        }
    }

    async fn twenty_sessions_per_identity_by_default(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, first) = app.user_session("ada@example.com").await;
        let mut last = first.clone();
        for _ in 0..19 {
            app.clock.advance(1);
            last = app.login(&USER, "ada@example.com").await;
        }
        assert!(app.record(&first).await.is_some(), "twenty fit");
        app.clock.advance(1);
        app.login(&USER, "ada@example.com").await;
        assert!(app.record(&first).await.is_none(), "the twenty-first ends the oldest");
        assert!(app.record(&last).await.is_some());
    }
}
