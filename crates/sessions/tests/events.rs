//! Security events of the engine are logged at warn, with the identity id and no secrets.

use std::io::Write;
use std::sync::{Arc, Mutex};

use http::{HeaderMap, HeaderValue, header};
use sessions::store::MemoryStore;
use sessions::{
    AnyStore, CookieDomain, CookiePolicy, ManualClock, OriginPolicy, SameSite, SessionContext,
    SessionEngine, SessionError, SessionTimes, SigningSecret, TokenKeys,
};

const USER: SessionContext = SessionContext {
    name: "user",
    payload_key: "user_id",
    access_cookie: "jwt_access",
    csrf_cookie: "CSRF_TOKEN",
    namespace: "default",
};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn headers(access: &str, csrf: &str) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert(
        header::COOKIE,
        HeaderValue::from_str(&format!("jwt_access={access}")).unwrap(),
    );
    map.insert("x-csrf-token", HeaderValue::from_str(csrf).unwrap());
    map
}

#[tokio::test]
async fn token_theft_and_csrf_failures_are_logged_at_warn_with_the_identity() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let clock = Arc::new(ManualClock::new());
    let engine = SessionEngine::new(
        TokenKeys::new(&SigningSecret::new(vec![7u8; 32]).unwrap()),
        AnyStore::Memory(MemoryStore::new()),
        clock.clone(),
        CookiePolicy {
            secure: true,
            same_site: SameSite::None,
            domain: CookieDomain::FromHost,
            partitioned: vec![],
        },
        OriginPolicy::new(None),
        SessionTimes::default(),
    );
    let first = engine.open(&USER, 42).await.unwrap();
    let old = headers(&first.access_token, &first.csrf);
    let wrong_csrf = headers(&first.access_token, "not-the-csrf-token");
    assert!(matches!(
        engine.refresh(&USER, &wrong_csrf).await,
        Err(SessionError::CsrfFailed)
    ));
    let second = engine.refresh(&USER, &old).await.unwrap();
    clock.advance(10);
    assert!(matches!(
        engine.refresh(&USER, &old).await,
        Err(SessionError::SessionEnded)
    ));

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let events: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let warned = |needle: &str| {
        events.iter().any(|e| {
            e["level"] == "WARN"
                && e["fields"]["identity_id"] == 42
                && e["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(needle))
        })
    };
    assert!(warned("CSRF check failed"), "{log}");
    assert!(warned("possible theft"), "{log}");
    for secret in [
        &first.access_token,
        &first.csrf,
        &second.access_token,
        &second.csrf,
    ] {
        assert!(!log.contains(secret.as_str()), "a credential is in the log");
    }
}
