//! `spawn_app()`: the real router on a random port, a manual clock, and a fresh database
//! (SQLite file or PostgreSQL schema) and token-store namespace prefix per test.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use careers_api::app;
use careers_api::areas::{ADMIN, USER};
use careers_api::config::Config;
use careers_api::models::identities::admin;
use careers_api::models::identities::user;
use careers_api::state::AppState;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};
use sessions::{AccessClaims, ManualClock, SessionContext, SessionRecord, TokenStore};

pub const SECRET: &str = "test-signing-secret-of-at-least-32-bytes!";
pub const PASSWORD: &str = "correct-horse-battery";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file and the in-memory token store (the embedded default).
    SqliteMemoryStore,
    PostgresRedis,
}

impl Backend {
    /// The PostgreSQL + Redis pair runs when TEST_DATABASE_URL and TEST_REDIS_URL are set.
    /// With REQUIRE_EXTERNAL_BACKENDS=1 (CI) a missing variable fails instead of skipping.
    pub fn available(self) -> bool {
        if self == Backend::SqliteMemoryStore {
            return true;
        }
        let present =
            std::env::var("TEST_DATABASE_URL").is_ok() && std::env::var("TEST_REDIS_URL").is_ok();
        if !present {
            assert!(
                std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() != Ok("1"),
                "REQUIRE_EXTERNAL_BACKENDS=1 but TEST_DATABASE_URL / TEST_REDIS_URL are not set"
            );
            eprintln!(
                "skipped: PostgreSQL + Redis suite needs TEST_DATABASE_URL and TEST_REDIS_URL"
            );
        }
        present
    }
}

pub fn random_suffix() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).unwrap();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub clock: Arc<ManualClock>,
    pub state: AppState,
    /// Environment given to `Config::from_lookup`, reused by CLI tests.
    pub env: HashMap<String, String>,
    statements: Arc<AtomicU64>,
    sql: Arc<std::sync::Mutex<Vec<String>>>,
    sqlite_file: Option<std::path::PathBuf>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(dir) = self.env.get("MAIL_OUTBOX_DIR") {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some(file) = &self.sqlite_file {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
            }
        }
    }
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, &[]).await
    }

    /// Spawns with extra environment. The mail worker does not run until
    /// [`start_mail_worker`](Self::start_mail_worker): its polling would count in the statement
    /// tests.
    pub async fn spawn_with(backend: Backend, overrides: &[(&str, &str)]) -> TestApp {
        let suffix = random_suffix();
        let outbox = std::env::temp_dir().join(format!("careers-test-outbox-{suffix}"));
        let mut env: HashMap<String, String> = HashMap::from([
            ("APP_ENV".into(), "test".into()),
            ("JWT_SIGNING_SECRET".into(), SECRET.into()),
            ("REDIS_KEY_PREFIX".into(), format!("careers-test:{suffix}:")),
            ("MAIL_OUTBOX_DIR".into(), outbox.display().to_string()),
        ]);
        let mut sqlite_file = None;
        match backend {
            Backend::SqliteMemoryStore => {
                let file = std::env::temp_dir().join(format!("careers-test-{suffix}.db"));
                env.insert(
                    "DATABASE_URL".into(),
                    format!("sqlite://{}", file.display()),
                );
                sqlite_file = Some(file);
            }
            Backend::PostgresRedis => {
                let url = std::env::var("TEST_DATABASE_URL").unwrap();
                let schema = format!("careers_test_{suffix}");
                let admin = sea_orm::Database::connect(&url)
                    .await
                    .expect("connect TEST_DATABASE_URL");
                admin
                    .execute_unprepared(&format!("CREATE SCHEMA {schema}"))
                    .await
                    .expect("create test schema");
                admin.close().await.ok();
                env.insert("DATABASE_URL".into(), url);
                env.insert("DATABASE_SCHEMA".into(), schema);
                env.insert("REDIS_URL".into(), std::env::var("TEST_REDIS_URL").unwrap());
            }
        }
        for (key, value) in overrides {
            env.insert((*key).into(), (*value).into());
        }
        // Production, staging and QA refuse to start without these: give them stand-ins (no
        // test of those environments sends mail; `ADMIN_MFA` keeps their default, required).
        if matches!(env["APP_ENV"].as_str(), "production" | "staging" | "qa") {
            for (key, value) in PRODUCTION_STAND_INS {
                env.entry(key.into()).or_insert_with(|| value.into());
            }
        }
        // Production and staging refuse to start without Redis; the memory backend still gets
        // validated as they would be, then runs on its own store.
        let mut lookup = env.clone();
        lookup
            .entry("REDIS_URL".into())
            .or_insert_with(|| "redis://127.0.0.1:6379".into());
        let mut config =
            Config::from_lookup(|name| lookup.get(name).cloned()).expect("valid test config");
        if backend == Backend::SqliteMemoryStore {
            config.redis_url = None;
        }
        let clock = Arc::new(ManualClock::new());
        let mut state = AppState::build(config, clock.clone())
            .await
            .expect("app state");
        // Counts every SQL statement the application runs, for the N+1 tests.
        let statements = Arc::new(AtomicU64::new(0));
        let sql = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (counter, log) = (statements.clone(), sql.clone());
        state.observe_statements(move |sql| {
            counter.fetch_add(1, Ordering::SeqCst);
            log.lock().unwrap().push(sql.to_owned());
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let service = app::build_app(state.clone());
        tokio::spawn(app::serve(listener, service, std::future::pending()));
        TestApp {
            base,
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            clock,
            state,
            env,
            statements,
            sql,
            sqlite_file,
        }
    }

    /// Starts the mail outbox's worker, as `serve` does.
    pub fn start_mail_worker(&self) {
        careers_api::app::spawn_mail_worker(&self.state);
    }

    /// Starts the webhook delivery worker, as `serve` does.
    pub fn start_webhook_worker(&self) {
        careers_api::app::spawn_webhook_worker(&self.state);
    }

    /// SQL statements run through the application's connection so far.
    pub fn statements(&self) -> u64 {
        self.statements.load(Ordering::SeqCst)
    }

    /// The SQL text of every statement the application ran so far.
    pub fn sql_statements(&self) -> Vec<String> {
        self.sql.lock().unwrap().clone()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, self.url(path))
    }

    pub async fn create_user(&self, email: &str) -> i64 {
        let digest = self.state.passwords.hash(PASSWORD.into()).await.unwrap();
        user::create_user(
            &self.state.db,
            user::NewUser {
                email: email.into(),
                password_digest: digest,
                first_name: "Ada".into(),
                last_name: "Lovelace".into(),
                phone_code: "+44".into(),
                mobile: "7700900123".into(),
                country_id: 2,
            },
            user::EmailProof::Verified,
            self.state.now(),
        )
        .await
        .unwrap()
        .id
    }

    pub async fn create_admin(&self, email: &str) -> i64 {
        let digest = self.state.passwords.hash(PASSWORD.into()).await.unwrap();
        admin::create_admin(
            &self.state.db,
            admin::NewAdmin {
                email: email.into(),
                password_digest: digest,
                first_name: "Grace".into(),
                last_name: "Hopper".into(),
            },
        )
        .await
        .unwrap()
        .id
    }

    pub async fn login_raw(&self, ctx: &SessionContext, email: &str, password: &str) -> Response {
        self.request(Method::POST, session_path(ctx))
            .json(&json!({ "email": email, "password": password }))
            .send()
            .await
            .unwrap()
    }

    /// A login from client `address`, as a trusted balancer forwards it in `X-Forwarded-For`
    /// (the app must be spawned with `CLIENT_IP_HEADER=X-Forwarded-For` and a `TRUSTED_PROXIES` that
    /// holds loopback, the test client's address).
    pub async fn login_from(
        &self,
        address: &str,
        ctx: &SessionContext,
        email: &str,
        password: &str,
    ) -> Response {
        self.request(Method::POST, session_path(ctx))
            .header("x-forwarded-for", address)
            .json(&json!({ "email": email, "password": password }))
            .send()
            .await
            .unwrap()
    }

    /// Logs in and returns the credentials the cookies carry.
    pub async fn login(&self, ctx: &SessionContext, email: &str) -> Creds {
        let response = self.login_raw(ctx, email, PASSWORD).await;
        assert_eq!(response.status(), StatusCode::CREATED, "login of {email}");
        Creds::from_response(ctx, &response)
    }

    /// A user with a session: (user id, credentials).
    pub async fn user_session(&self, email: &str) -> (i64, Creds) {
        let id = self.create_user(email).await;
        (id, self.login(&USER, email).await)
    }

    /// An identity of `ctx` with a session: (identity id, credentials).
    pub async fn session(&self, ctx: &SessionContext, email: &str) -> (i64, Creds) {
        if *ctx == USER {
            self.user_session(email).await
        } else {
            self.admin_session(email).await
        }
    }

    pub async fn admin_session(&self, email: &str) -> (i64, Creds) {
        let id = self.create_admin(email).await;
        (id, self.login(&ADMIN, email).await)
    }

    pub async fn refresh(&self, creds: &Creds) -> Response {
        creds
            .with_csrf(self.request(Method::PATCH, &current_path(&creds.ctx)))
            .send()
            .await
            .unwrap()
    }

    pub async fn logout(&self, creds: &Creds) -> Response {
        creds
            .with_csrf(self.request(Method::DELETE, &current_path(&creds.ctx)))
            .send()
            .await
            .unwrap()
    }

    /// A read in the creds' own area: the user's own record or the admin user list.
    pub async fn read(&self, creds: &Creds, subject: i64) -> Response {
        let path = if creds.ctx == USER {
            format!("/identities/user/{subject}")
        } else {
            "/admin-user/identities/users".to_string()
        };
        creds
            .with_cookies(self.request(Method::GET, &path))
            .send()
            .await
            .unwrap()
    }

    /// An unsafe request in the creds' own area, with their CSRF token: an empty patch of the
    /// user's own record (200 once authentication and CSRF passed), an empty org profile for an
    /// admin (422 once they passed).
    pub async fn write(&self, creds: &Creds, subject: i64) -> Response {
        let request = if creds.ctx == USER {
            self.request(Method::PATCH, &format!("/identities/user/{subject}"))
        } else {
            self.request(Method::POST, "/admin-user/org/user-profiles")
        };
        creds
            .with_csrf(request)
            .json(&json!({}))
            .send()
            .await
            .unwrap()
    }

    pub fn claims(&self, creds: &Creds) -> AccessClaims {
        self.state
            .sessions
            .keys()
            .verify(&creds.ctx, &creds.access)
            .expect("own token verifies")
    }

    pub async fn record(&self, creds: &Creds) -> Option<SessionRecord> {
        let claims = self.claims(creds);
        self.state
            .sessions
            .store()
            .get(
                creds.ctx.namespace,
                &claims.session_key(),
                sessions::Clock::now(&*self.clock),
            )
            .await
            .unwrap()
    }
}

pub fn session_path(ctx: &SessionContext) -> &'static str {
    if *ctx == USER {
        "/identities/sessions"
    } else {
        "/team/identities/admins/sessions"
    }
}

pub fn current_path(ctx: &SessionContext) -> String {
    format!("{}/current", session_path(ctx))
}

/// The access token and CSRF token of one session, as the cookies carry them.
#[derive(Debug, Clone)]
pub struct Creds {
    pub ctx: SessionContext,
    pub access: String,
    pub csrf: String,
}

impl Creds {
    pub fn from_response(ctx: &SessionContext, response: &Response) -> Creds {
        let cookies = set_cookies(response);
        let find = |name: &str| {
            cookies
                .iter()
                .find(|c| c.name == name)
                .unwrap_or_else(|| panic!("cookie {name} set"))
                .value
                .clone()
        };
        Creds {
            ctx: *ctx,
            access: find(ctx.access_cookie),
            csrf: find(ctx.csrf_cookie),
        }
    }

    pub fn cookie_header(&self) -> String {
        format!(
            "{}={}; {}={}",
            self.ctx.access_cookie, self.access, self.ctx.csrf_cookie, self.csrf
        )
    }

    pub fn with_cookies(&self, request: RequestBuilder) -> RequestBuilder {
        request.header("cookie", self.cookie_header())
    }

    pub fn with_csrf(&self, request: RequestBuilder) -> RequestBuilder {
        self.with_cookies(request)
            .header("x-csrf-token", &self.csrf)
    }
}

/// One parsed `Set-Cookie` header.
#[derive(Debug, Clone)]
pub struct SetCookie {
    pub name: String,
    pub value: String,
    pub attrs: Vec<(String, Option<String>)>,
}

impl SetCookie {
    pub fn attr(&self, name: &str) -> Option<Option<&str>> {
        self.attrs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_deref())
    }

    pub fn has(&self, name: &str) -> bool {
        self.attr(name).is_some()
    }

    pub fn value_of(&self, name: &str) -> Option<&str> {
        self.attr(name).flatten()
    }
}

pub fn set_cookies(response: &Response) -> Vec<SetCookie> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| {
            let text = v.to_str().unwrap();
            let mut parts = text.split(';').map(str::trim);
            let (name, value) = parts.next().unwrap().split_once('=').unwrap();
            SetCookie {
                name: name.into(),
                value: value.into(),
                attrs: parts
                    .map(|p| match p.split_once('=') {
                        Some((k, v)) => (k.to_string(), Some(v.to_string())),
                        None => (p.to_string(), None),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Asserts the contract's error body and returns it.
pub async fn assert_error(response: Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(response.status(), status, "status for expected {code}");
    let body: Value = response.json().await.expect("JSON error body");
    assert_eq!(body["error"]["code"], code, "body: {body}");
    assert!(body["error"]["message"].is_string(), "body: {body}");
    body
}

/// Declares each test once and runs it on SQLite + memory store and on PostgreSQL + Redis. A
/// build without TEST_DATABASE_URL and TEST_REDIS_URL (build.rs) marks the PostgreSQL + Redis
/// ones ignored, so that the count says they did not run.
#[macro_export]
macro_rules! backend_tests {
    ($( $(#[$meta:meta])* async fn $name:ident($backend:ident) $body:block )*) => {
        mod sqlite_memory_store {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[$meta])*
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let $backend = $crate::helpers::Backend::SqliteMemoryStore;
                    $body
                }
            )*
        }
        mod postgres_redis {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[$meta])*
                #[cfg_attr(
                    not(external_backends),
                    ignore = "needs TEST_DATABASE_URL and TEST_REDIS_URL"
                )]
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let $backend = $crate::helpers::Backend::PostgresRedis;
                    if !$backend.available() {
                        return;
                    }
                    $body
                }
            )*
        }
    };
}

/// A valid sign-up form for `email`.
pub fn sign_up_body(email: &str) -> Value {
    json!({"email": email, "password": PASSWORD, "first_name": "Nora", "last_name": "New",
           "phone_code": "+49", "mobile": "1701234567", "country": {"id": 3}})
}

/// The code an authenticator app shows for `secret` (base32) at `time`.
pub fn code_at(secret: &str, time: i64) -> String {
    let bytes = totp_rs::Secret::Encoded(secret.to_owned())
        .to_bytes()
        .unwrap();
    totp_rs::TOTP::new_unchecked(
        totp_rs::Algorithm::SHA1,
        6,
        1,
        30,
        bytes,
        None,
        String::new(),
    )
    .generate(time as u64)
}

/// What production, staging and QA refuse to start without, as stand-ins (no test of those
/// environments sends mail; `ADMIN_MFA` keeps their default, required).
pub const PRODUCTION_STAND_INS: [(&str, &str); 6] = [
    ("SMTP_URL", "smtp://127.0.0.1:9"),
    ("MAIL_FROM", "no-reply@example.com"),
    (
        "PASSWORD_RESET_URL",
        "https://app.example.com/reset?token={token}",
    ),
    (
        "EMAIL_VERIFICATION_URL",
        "https://app.example.com/verify?token={token}",
    ),
    (
        "INVITATION_URL",
        "https://app.example.com/invitations?token={token}",
    ),
    (
        "MFA_ENCRYPTION_KEY",
        "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",
    ),
];
