//! Several tabs refreshing at once, the grace window, and theft detection (CONTRACT §3).

use careers_api::areas::{ADMIN, USER};
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::Value;
use sessions::SessionContext;

use crate::backend_tests;
use crate::fixtures::*;
use crate::helpers::*;

async fn session(app: &TestApp, ctx: &SessionContext) -> (i64, Creds) {
    if *ctx == USER {
        app.user_session("ada@example.com").await
    } else {
        app.admin_session("grace@example.com").await
    }
}

backend_tests! {
    /// Writes that read before they write, sent at once, all succeed: on SQLite a writing
    /// transaction takes the write lock at BEGIN (`db::write_transaction`), where a deferred one
    /// could fail with SQLITE_BUSY_SNAPSHOT (500) when another commit came first.
    async fn concurrent_read_then_write_transactions_all_succeed(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, profile_id, boss) = employer_with_profile(&app, "boss@acme.example", acme).await;
        let path = format!("/org/user-profiles/{profile_id}");
        let responses = join_all((0..24).map(|i| {
            boss.with_csrf(app.request(reqwest::Method::PATCH, &path))
                .json(&serde_json::json!({"title": format!("Head of Hiring {i}")}))
                .send()
        }))
        .await;
        for response in responses {
            let response = response.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{:?}", response.text().await);
        }
    }

    async fn fifty_concurrent_refreshes_rotate_once_and_all_get_the_same_answer(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in [USER, ADMIN] {
            let (id, old) = session(&app, &ctx).await;
            let old_claims = app.claims(&old);
            let responses = join_all((0..50).map(|_| app.refresh(&old))).await;
            let mut answers = Vec::new();
            for response in responses {
                assert_eq!(response.status(), StatusCode::OK);
                let creds = Creds::from_response(&ctx, &response);
                let body: Value = response.json().await.unwrap();
                assert_eq!(body["csrf"], creds.csrf.as_str());
                answers.push((creds.access, creds.csrf));
            }
            let first = answers[0].clone();
            assert!(answers.iter().all(|a| *a == first), "every tab got the same token and CSRF");
            let new = Creds { ctx, access: first.0, csrf: first.1 };
            let new_claims = app.claims(&new);
            assert_ne!(new_claims.uid, old_claims.uid);

            let record = app.record(&new).await.unwrap();
            assert_eq!(record.access_uid, new_claims.uid, "rotated exactly once: to the answer");
            assert_eq!(record.previous_uid, Some(old_claims.uid), "from the presented token");
            assert_eq!(app.read(&new, id).await.status(), StatusCode::OK);

            // Superseded tokens are never good for reads, not even inside the window.
            assert_error(app.read(&old, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;

            // A late tab inside the window still gets the same answer.
            app.clock.advance(9);
            let late = app.refresh(&old).await;
            assert_eq!(late.status(), StatusCode::OK);
            let late = Creds::from_response(&ctx, &late);
            assert_eq!((late.access, late.csrf), (new.access.clone(), new.csrf.clone()));

            // At 10 seconds the window has closed: the same token is theft, the session ends.
            app.clock.advance(1);
            assert_error(app.refresh(&old).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert!(app.record(&new).await.is_none(), "session removed from the store");
            assert_error(app.read(&new, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        }
    }

    async fn logout_with_the_superseded_pair_inside_the_window_ends_the_session(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in [USER, ADMIN] {
            let (id, old) = session(&app, &ctx).await;
            let refreshed = app.refresh(&old).await;
            assert_eq!(refreshed.status(), StatusCode::OK);
            let new = Creds::from_response(&ctx, &refreshed);
            app.clock.advance(5);
            assert_eq!(app.logout(&old).await.status(), StatusCode::NO_CONTENT);
            assert!(app.record(&new).await.is_none());
            assert_error(app.read(&new, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        }
    }

    async fn a_superseded_token_at_logout_after_the_window_ends_the_session(backend) {
        let app = TestApp::spawn(backend).await;
        let (id, old) = session(&app, &USER).await;
        let new = Creds::from_response(&USER, &app.refresh(&old).await);
        app.clock.advance(60);
        assert_error(app.logout(&old).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_error(app.read(&new, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
    }

    async fn a_logout_racing_fifty_refreshes_leaves_the_session_ended(backend) {
        let app = TestApp::spawn(backend).await;
        for ctx in [USER, ADMIN] {
            let (id, creds) = session(&app, &ctx).await;
            let refreshes = join_all((0..50).map(|_| app.refresh(&creds)));
            let (refreshed, logout) = tokio::join!(refreshes, app.logout(&creds));
            assert_eq!(logout.status(), StatusCode::NO_CONTENT);
            assert!(app.record(&creds).await.is_none());
            for response in refreshed {
                match response.status() {
                    StatusCode::OK => {
                        let issued = Creds::from_response(&ctx, &response);
                        assert!(app.record(&issued).await.is_none(), "no refresh revived it");
                        assert_error(app.read(&issued, id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
                    }
                    status => {
                        assert_eq!(status, StatusCode::UNAUTHORIZED);
                        let body: Value = response.json().await.unwrap();
                        assert_eq!(body["error"]["code"], "session_ended");
                    }
                }
            }
        }
    }
}
