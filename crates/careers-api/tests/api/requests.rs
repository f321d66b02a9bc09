//! Routes, methods and request errors (CONTRACT §4, specification §4.1 rule 4).

use reqwest::{Method, StatusCode};

use crate::backend_tests;
use crate::helpers::*;

backend_tests! {
    async fn there_are_no_verb_routes(backend) {
        let app = TestApp::spawn(backend).await;
        for path in [
            "/login", "/logout", "/refresh",
            "/identities/login", "/identities/logout", "/identities/refresh",
            "/team/identities/admins/login",
            "/team/login", "/team/logout", "/team/refresh",
        ] {
            for method in [Method::GET, Method::POST] {
                let response = app.request(method, path).send().await.unwrap();
                assert_error(response, StatusCode::NOT_FOUND, "not_found").await;
            }
        }
        // `{base}/login` is only the address of a session named "login", which can be ended
        // (DELETE, 404: there is none) and nothing else.
        for base in ["/identities/sessions", "/team/identities/admins/sessions"] {
            for method in [Method::GET, Method::POST] {
                let response = app.request(method, &format!("{base}/login")).send().await.unwrap();
                let allow = response.headers().get("allow").unwrap().to_str().unwrap().to_owned();
                assert_eq!(allow, "DELETE");
                assert_error(response, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
            }
        }
    }

    async fn a_wrong_method_is_405_with_allow(backend) {
        let app = TestApp::spawn(backend).await;
        let cases = [
            (Method::PUT, "/identities/sessions", "POST"),
            (Method::POST, "/identities/sessions/current", "PATCH"),
            (Method::PUT, "/team/identities/admins/sessions/current", "DELETE"),
        ];
        for (method, path, allowed) in cases {
            let response = app.request(method, path).send().await.unwrap();
            let allow = response.headers().get("allow").expect("Allow header").to_str().unwrap().to_owned();
            assert!(allow.contains(allowed), "{path}: {allow}");
            assert_error(response, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
        }
    }

    async fn login_bodies_must_be_json(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        let form = app
            .request(Method::POST, "/identities/sessions")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("email=ada@example.com&password={PASSWORD}"))
            .send()
            .await
            .unwrap();
        assert!(set_cookies(&form).is_empty());
        assert_error(form, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type").await;
        let broken = app
            .request(Method::POST, "/identities/sessions")
            .header("content-type", "application/json")
            .body("{\"email\": ")
            .send()
            .await
            .unwrap();
        assert_error(broken, StatusCode::BAD_REQUEST, "malformed_request").await;
        let wrong_type = app
            .request(Method::POST, "/identities/sessions")
            .json(&serde_json::json!({ "email": 42, "password": PASSWORD }))
            .send()
            .await
            .unwrap();
        assert_error(wrong_type, StatusCode::BAD_REQUEST, "malformed_request").await;
        let huge = app
            .request(Method::POST, "/identities/sessions")
            .header("content-type", "application/json")
            .body(format!("{{\"email\":\"{}\"}}", "a".repeat(70 * 1024)))
            .send()
            .await
            .unwrap();
        assert_error(huge, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    }

    async fn a_bad_path_parameter_is_400(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, creds) = app.user_session("ada@example.com").await;
        let response = creds
            .with_cookies(app.request(Method::GET, "/identities/user/not-a-number"))
            .send()
            .await
            .unwrap();
        assert_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
    }

    async fn health_reports_live_and_ready(backend) {
        let app = TestApp::spawn(backend).await;
        let live = app.request(Method::GET, "/health/live").send().await.unwrap();
        assert_eq!(live.status(), StatusCode::OK);
        let ready = app.request(Method::GET, "/health/ready").send().await.unwrap();
        assert_eq!(ready.status(), StatusCode::OK);
        let body: serde_json::Value = ready.json().await.unwrap();
        assert_eq!(body, serde_json::json!({"status": "ready", "database": "up", "token_store": "up"}));
    }

    async fn every_response_carries_a_request_id_and_the_security_headers(backend) {
        let app = TestApp::spawn(backend).await;
        let mut seen = std::collections::HashSet::new();
        for path in ["/health/live", "/no/such/route", "/identities/user/1"] {
            let response = app.request(Method::GET, path).send().await.unwrap();
            let headers = response.headers();
            assert_eq!(headers["cache-control"], "no-store", "{path}");
            assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
            let id = headers["x-request-id"].to_str().unwrap().to_owned();
            assert!(!id.is_empty() && seen.insert(id), "a fresh id for {path}");
        }
        let kept = app
            .request(Method::GET, "/health/live")
            .header("x-request-id", "from-the-balancer-1")
            .send()
            .await
            .unwrap();
        assert_eq!(kept.headers()["x-request-id"], "from-the-balancer-1");
        let long = "x".repeat(129);
        let replaced = app
            .request(Method::GET, "/health/live")
            .header("x-request-id", &long)
            .send()
            .await
            .unwrap();
        let id = replaced.headers()["x-request-id"].to_str().unwrap();
        assert!(id != long && !id.is_empty(), "an over-long client id is replaced");
    }

    async fn session_responses_are_not_cached(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        let login = app.login_raw(&careers_api::areas::USER, "ada@example.com", PASSWORD).await;
        assert_eq!(login.headers()["cache-control"], "no-store");
        assert_eq!(login.headers()["x-content-type-options"], "nosniff");
    }
}
