//! The access token (specification §5.3, CONTRACT §3): HS256 only, payload key of its context,
//! `uid`, `ruid`, `iat`, `exp` = `iat` + 1 hour; anything else is `invalid_token`.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use careers_api::areas::{ADMIN, USER};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::helpers::*;

fn segments(token: &str) -> (Value, Value) {
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3);
    let decode = |p: &str| serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap();
    (decode(parts[0]), decode(parts[1]))
}

fn sign(alg: Algorithm, secret: &[u8], claims: &Value) -> String {
    jsonwebtoken::encode(&Header::new(alg), claims, &EncodingKey::from_secret(secret)).unwrap()
}

backend_tests! {
    async fn access_token_is_hs256_with_the_contexts_claims(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, user) = app.user_session("ada@example.com").await;
        let (admin_id, admin) = app.admin_session("grace@example.com").await;
        let now = sessions::Clock::now(&*app.clock);
        for (creds, key, id, other_key) in [(&user, "user_id", user_id, "admin_id"), (&admin, "admin_id", admin_id, "user_id")] {
            let (header, payload) = segments(&creds.access);
            assert_eq!(header["alg"], "HS256");
            let mut keys: Vec<&str> = payload.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort();
            let mut expected = vec![key, "exp", "iat", "ruid", "uid"];
            expected.sort();
            assert_eq!(keys, expected);
            assert!(payload.get(other_key).is_none());
            assert_eq!(payload[key], id, "numeric identity id");
            assert_eq!(payload["iat"], now);
            assert_eq!(payload["exp"], now + 3600);
            assert_eq!(payload["uid"].as_str().unwrap().len(), 22);
            assert_ne!(payload["uid"], payload["ruid"]);
        }
    }

    async fn forged_and_foreign_tokens_are_invalid(backend) {
        let app = TestApp::spawn(backend).await;
        let (id, creds) = app.user_session("ada@example.com").await;
        let (_, mut payload) = segments(&creds.access);
        let secret = SECRET.as_bytes();

        let mut forged: Vec<(&str, String)> = Vec::new();
        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let body = URL_SAFE_NO_PAD.encode(payload.to_string());
        forged.push(("alg none", format!("{none_header}.{body}.")));
        forged.push(("alg none, no signature part", format!("{none_header}.{body}")));
        forged.push(("HS384 with the right key", sign(Algorithm::HS384, secret, &payload)));
        forged.push(("HS512 with the right key", sign(Algorithm::HS512, secret, &payload)));
        forged.push(("HS256 with a wrong key", sign(Algorithm::HS256, b"another-secret-of-at-least-32-bytes!!", &payload)));
        let parts: Vec<&str> = creds.access.split('.').collect();
        let mut tampered = payload.clone();
        tampered["user_id"] = json!(id + 1);
        forged.push(("tampered payload", format!("{}.{}.{}", parts[0], URL_SAFE_NO_PAD.encode(tampered.to_string()), parts[2])));
        forged.push(("signature of another token", format!("{}.{}.{}", parts[0], parts[1], URL_SAFE_NO_PAD.encode([0u8; 32]))));
        forged.push(("two segments", format!("{}.{}", parts[0], parts[1])));
        forged.push(("four segments", format!("{}.x", creds.access)));
        forged.push(("not base64", "@@@.###.$$$".into()));
        forged.push(("garbage", "garbage".into()));
        let object = payload.as_object_mut().unwrap();
        let user_id = object.remove("user_id").unwrap();
        object.insert("admin_id".into(), user_id);
        forged.push(("admin payload key, right signature", sign(Algorithm::HS256, secret, &payload)));

        for (what, token) in forged {
            let response = app
                .request(reqwest::Method::GET, &format!("/identities/user/{id}"))
                .header("cookie", format!("jwt_access={token}"))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{what}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"]["code"], "invalid_token", "{what}");
        }
    }

    async fn a_user_token_in_the_admin_cookie_is_rejected_and_the_reverse(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, user) = app.user_session("ada@example.com").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let as_admin = app
            .request(reqwest::Method::GET, "/admin-user/identities/users")
            .header("cookie", format!("team_jwt_access={}", user.access))
            .send()
            .await
            .unwrap();
        assert_error(as_admin, StatusCode::UNAUTHORIZED, "invalid_token").await;
        let as_user = app
            .request(reqwest::Method::GET, &format!("/identities/user/{user_id}"))
            .header("cookie", format!("jwt_access={}", admin.access))
            .send()
            .await
            .unwrap();
        assert_error(as_user, StatusCode::UNAUTHORIZED, "invalid_token").await;
        // Nor can the other context's token refresh or end a session here.
        let refresh = app
            .request(reqwest::Method::PATCH, "/team/identities/admins/sessions/current")
            .header("cookie", format!("team_jwt_access={}", user.access))
            .header("x-csrf-token", &user.csrf)
            .send()
            .await
            .unwrap();
        assert_error(refresh, StatusCode::UNAUTHORIZED, "invalid_token").await;
        assert!(app.record(&user).await.is_some());
    }

    async fn no_cookie_is_unauthenticated(backend) {
        let app = TestApp::spawn(backend).await;
        let user = app.request(reqwest::Method::GET, "/identities/user/1").send().await.unwrap();
        assert_error(user, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        let admin = app.request(reqwest::Method::GET, "/admin-user/identities/users").send().await.unwrap();
        assert_error(admin, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        let refresh = app.request(reqwest::Method::PATCH, "/identities/sessions/current").send().await.unwrap();
        assert_error(refresh, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        let logout = app.request(reqwest::Method::DELETE, "/team/identities/admins/sessions/current").send().await.unwrap();
        assert_error(logout, StatusCode::UNAUTHORIZED, "unauthenticated").await;
    }
}

#[test]
fn admin_context_constants_match_the_specification() {
    assert_eq!(
        (
            USER.payload_key,
            USER.access_cookie,
            USER.csrf_cookie,
            USER.namespace
        ),
        ("user_id", "jwt_access", "CSRF_TOKEN", "default")
    );
    assert_eq!(
        (
            ADMIN.payload_key,
            ADMIN.access_cookie,
            ADMIN.csrf_cookie,
            ADMIN.namespace
        ),
        ("admin_id", "team_jwt_access", "TEAM_CSRF_TOKEN", "team")
    );
}
