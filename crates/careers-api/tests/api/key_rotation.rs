//! Signing-key rotation (CONTRACT §12): `JWT_SIGNING_KEYS` lists `kid:secret` pairs, the first
//! signs and every listed key verifies; tokens carry `kid`; a session's CSRF is derived with
//! the key of its current token; a refresh moves a session to the first key; an unlisted
//! `kid` is `invalid_token`. The restart test runs on PostgreSQL + Redis, where sessions
//! outlive the process.

use careers_api::areas::{ADMIN, USER};
use reqwest::StatusCode;
use sessions::{Clock, SessionContext, SigningKey, SigningSecret, TokenKeys};

use crate::backend_tests;
use crate::helpers::*;

const K1: &str = "first-key-secret-of-at-least-32-bytes!!";
const K2: &str = "second-key-secret-of-at-least-32-bytes!";

fn kid_of(token: &str) -> Option<String> {
    jsonwebtoken::decode_header(token).unwrap().kid
}

/// The keys of one `kid`, as an earlier deployment of the service held them.
fn only(kid: Option<&str>, secret: &str) -> TokenKeys {
    let secret = SigningSecret::new(secret.as_bytes().to_vec()).unwrap();
    TokenKeys::with_keys(&[SigningKey {
        kid: kid.map(str::to_owned),
        secret,
    }])
}

/// The same session's credentials as `keys` would have issued them.
fn resigned(app: &TestApp, creds: &Creds, keys: &TokenKeys) -> Creds {
    let claims = sessions::AccessClaims {
        key: TokenKeys::SIGNING,
        ..app.claims(creds)
    };
    Creds {
        ctx: creds.ctx,
        access: keys.sign(&creds.ctx, &claims),
        csrf: keys.csrf_for(TokenKeys::SIGNING, &claims.uid),
    }
}

/// What [`write`] answers once authentication and CSRF passed: an empty patch of the user's
/// own record changes nothing (200); an empty org profile is incomplete (422).
fn written(ctx: &SessionContext) -> StatusCode {
    if *ctx == USER {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    }
}

const CONTEXTS: [SessionContext; 2] = [USER, ADMIN];

backend_tests! {
    async fn tokens_of_every_listed_key_verify_each_with_its_own_csrf(backend) {
        let keys = format!("k2:{K2},k1:{K1}");
        let app = TestApp::spawn_with(
            backend,
            &[("JWT_SIGNING_KEYS", keys.as_str()), ("JWT_SIGNING_SECRET", "")],
        )
        .await;
        for ctx in CONTEXTS {
            let (id, current) = app.session(&ctx, &format!("{}@example.com", ctx.name)).await;
            assert_eq!(kid_of(&current.access).as_deref(), Some("k2"), "the first key signs");

            // The same session as the previous key signed it: it reads and writes, with the
            // CSRF of that key and not the current key's.
            let before = resigned(&app, &current, &only(Some("k1"), K1));
            assert_eq!(app.read(&before, id).await.status(), StatusCode::OK);
            assert_eq!(app.write(&before, id).await.status(), written(&ctx));
            let mixed = Creds { csrf: current.csrf.clone(), ..before.clone() };
            assert_error(app.write(&mixed, id).await, StatusCode::FORBIDDEN, "csrf_failed").await;

            // An unlisted kid, a listed kid over another secret, and no kid at all (no key
            // without one is configured): invalid, and the session lives on.
            for (what, keys) in [
                ("unlisted", only(Some("k0"), K1)),
                ("forged", only(Some("k2"), K1)),
                ("no kid", only(None, K2)),
            ] {
                let foreign = resigned(&app, &current, &keys);
                let response = app.read(&foreign, id).await;
                assert_error(response, StatusCode::UNAUTHORIZED, "invalid_token").await;
                assert!(app.record(&current).await.is_some(), "{what}");
            }

            // A refresh of the old key's token moves the session to the first key.
            let refreshed = app.refresh(&before).await;
            assert_eq!(refreshed.status(), StatusCode::OK);
            let moved = Creds::from_response(&ctx, &refreshed);
            assert_eq!(kid_of(&moved.access).as_deref(), Some("k2"));
            assert_eq!(app.claims(&moved).ruid, app.claims(&current).ruid, "same session");
            assert_eq!(app.write(&moved, id).await.status(), written(&ctx));
        }
    }
}

/// One deployment after another on the same PostgreSQL schema and Redis prefix, each with the
/// key configuration of a step of the rotation procedure of docs/OPERATIONS.md.
async fn deploy(first: &TestApp, keys: &str, secret: &str) -> TestApp {
    let schema = first.env["DATABASE_SCHEMA"].clone();
    let prefix = first.env["REDIS_KEY_PREFIX"].clone();
    let app = TestApp::spawn_with(
        Backend::PostgresRedis,
        &[
            ("DATABASE_SCHEMA", schema.as_str()),
            ("REDIS_KEY_PREFIX", prefix.as_str()),
            ("JWT_SIGNING_KEYS", keys),
            ("JWT_SIGNING_SECRET", secret),
        ],
    )
    .await;
    let latest = first.clock.now().max(app.clock.now());
    first.clock.advance(latest - first.clock.now());
    app.clock.advance(latest - app.clock.now());
    app
}

#[cfg_attr(
    not(external_backends),
    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_across_restarts_keeps_every_session_whose_key_is_listed() {
    if !Backend::PostgresRedis.available() {
        return;
    }
    // 1. The one-key form: tokens without kid.
    let v1 = TestApp::spawn(Backend::PostgresRedis).await;
    let (id, creds) = v1.user_session("ada@example.com").await;
    let idle = v1.login(&USER, "ada@example.com").await;
    assert_eq!(kid_of(&creds.access), None);

    // 2. Add a keyed key in front and keep the old secret: old tokens and their CSRF work,
    //    new logins and refreshes get kid k1.
    let v2 = deploy(&v1, &format!("k1:{K1}"), SECRET).await;
    assert_eq!(v2.read(&creds, id).await.status(), StatusCode::OK);
    assert_eq!(v2.write(&creds, id).await.status(), StatusCode::OK);
    let refreshed = v2.refresh(&creds).await;
    assert_eq!(refreshed.status(), StatusCode::OK);
    let creds = Creds::from_response(&USER, &refreshed);
    assert_eq!(kid_of(&creds.access).as_deref(), Some("k1"));

    // 3. Once every token without kid has expired (an hour) or been refreshed, drop the old
    //    secret and add the next key: k1's tokens still verify.
    v2.clock.advance(3601);
    let v3 = deploy(&v2, &format!("k2:{K2},k1:{K1}"), "").await;
    let refreshed = v3.refresh(&creds).await;
    assert_eq!(
        refreshed.status(),
        StatusCode::OK,
        "k1's expired token still refreshes"
    );
    let creds = Creds::from_response(&USER, &refreshed);
    assert_eq!(kid_of(&creds.access).as_deref(), Some("k2"));
    assert_eq!(v3.read(&creds, id).await.status(), StatusCode::OK);
    // A session that slept through the move still holds a token without kid: refused now.
    assert_error(
        v3.read(&idle, id).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
    )
    .await;

    // 4. With k1 unlisted its tokens are invalid; k2's work.
    let v4 = deploy(&v3, &format!("k2:{K2}"), "").await;
    assert_eq!(v4.read(&creds, id).await.status(), StatusCode::OK);
    let k1_token = resigned(&v4, &creds, &only(Some("k1"), K1));
    assert_error(
        v4.read(&k1_token, id).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
    )
    .await;
}
