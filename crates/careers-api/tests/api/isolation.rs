//! The two contexts never overlap (specification §5.2).

use careers_api::areas::{ADMIN, USER};
use reqwest::{Method, StatusCode};
use sessions::TokenStore;

use crate::backend_tests;
use crate::helpers::*;

backend_tests! {
    async fn each_context_reads_only_its_own_cookie(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, user) = app.user_session("ada@example.com").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let both = format!("{}; {}", user.cookie_header(), admin.cookie_header());
        let as_user = app
            .request(Method::GET, &format!("/identities/user/{user_id}"))
            .header("cookie", &both)
            .send()
            .await
            .unwrap();
        assert_eq!(as_user.status(), StatusCode::OK);
        let as_admin = app
            .request(Method::GET, "/admin-user/identities/users")
            .header("cookie", &both)
            .send()
            .await
            .unwrap();
        assert_eq!(as_admin.status(), StatusCode::OK);
        // With only the other context's cookie, there is no credential at all.
        let admin_only = admin.with_cookies(app.request(Method::GET, &format!("/identities/user/{user_id}")));
        assert_error(admin_only.send().await.unwrap(), StatusCode::UNAUTHORIZED, "unauthenticated").await;
        let user_only = user.with_cookies(app.request(Method::GET, "/admin-user/identities/users"));
        assert_error(user_only.send().await.unwrap(), StatusCode::UNAUTHORIZED, "unauthenticated").await;
        // The other context's CSRF token does not pass this context's check.
        let crossed = app
            .request(Method::PATCH, "/identities/sessions/current")
            .header("cookie", &both)
            .header("x-csrf-token", &admin.csrf)
            .send()
            .await
            .unwrap();
        assert_error(crossed, StatusCode::FORBIDDEN, "csrf_failed").await;
    }

    async fn logging_out_of_one_context_leaves_the_other(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, user) = app.user_session("ada@example.com").await;
        let (admin_id, admin) = app.admin_session("grace@example.com").await;
        // The browser sends both contexts' cookies with the logout.
        let both = format!("{}; {}", user.cookie_header(), admin.cookie_header());
        let logout = app
            .request(Method::DELETE, "/team/identities/admins/sessions/current")
            .header("cookie", &both)
            .header("x-csrf-token", &admin.csrf)
            .send()
            .await
            .unwrap();
        assert_eq!(logout.status(), StatusCode::NO_CONTENT);
        assert!(logout.headers().get("clear-site-data").is_none());
        for cookie in set_cookies(&logout) {
            assert!(cookie.name == ADMIN.access_cookie || cookie.name == ADMIN.csrf_cookie);
        }
        assert_error(app.read(&admin, admin_id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_eq!(app.read(&user, user_id).await.status(), StatusCode::OK);
        assert!(app.record(&user).await.is_some());

        let (admin_id, admin) = (admin_id, app.login(&ADMIN, "grace@example.com").await);
        assert_eq!(app.logout(&user).await.status(), StatusCode::NO_CONTENT);
        assert_eq!(app.read(&admin, admin_id).await.status(), StatusCode::OK);
    }

    async fn flushing_the_admin_namespace_ends_only_admin_sessions(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, user) = app.user_session("ada@example.com").await;
        let second_user = app.login(&USER, "ada@example.com").await;
        let (admin_id, admin) = app.admin_session("grace@example.com").await;
        let second_admin = app.login(&ADMIN, "grace@example.com").await;
        let removed = app.state.sessions.flush(&ADMIN).await.unwrap();
        assert_eq!(removed, 2);
        for creds in [&admin, &second_admin] {
            assert!(app.record(creds).await.is_none());
            assert_error(app.read(creds, admin_id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        }
        for creds in [&user, &second_user] {
            assert!(app.record(creds).await.is_some());
            assert_eq!(app.read(creds, user_id).await.status(), StatusCode::OK);
        }
    }

    async fn sessions_live_in_their_contexts_namespace(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, user) = app.user_session("ada@example.com").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let store = app.state.sessions.store();
        let now = sessions::Clock::now(&*app.clock);
        let user_key = app.claims(&user).session_key();
        let admin_key = app.claims(&admin).session_key();
        assert!(store.get("default", &user_key, now).await.unwrap().is_some());
        assert!(store.get("team", &user_key, now).await.unwrap().is_none());
        assert!(store.get("team", &admin_key, now).await.unwrap().is_some());
        assert!(store.get("default", &admin_key, now).await.unwrap().is_none());
    }
}
