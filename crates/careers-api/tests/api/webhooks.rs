//! Webhooks (CONTRACT §17): the endpoints' routes (shapes, the secret shown once, validation,
//! the limit of 10, owners and admins only, another company's endpoint 404), the URL policy with
//! `WEBHOOK_ALLOW_PRIVATE=off` (at creation and at every try) and its refusal outside development
//! and test, and the delivery worker against a receiver run inside the test: the Standard
//! Webhooks headers and signature, the body's snapshot, retries with the same `webhook-id`,
//! redirects not followed, a closed connection, a large answer, a hanging receiver (which slows
//! neither other endpoints nor the API), the 24-hour give-up, secret rotation, no loss and no
//! duplicate across a restart of the worker, a suspended company's deliveries, and an endpoint's
//! deletion.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method};
use axum::response::IntoResponse;
use base64::Engine;
use careers_api::areas::USER;
use careers_api::config::Config;
use reqwest::StatusCode;
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};
use standardwebhooks::Webhook;

use crate::backend_tests;
use crate::fixtures::*;
use crate::helpers::*;
use crate::shapes::{APPLICATION_KEYS, JOB_KEYS};

const ENDPOINTS: &str = "/org/webhook_endpoints";
const APPLY: &str = "/candidate/careers/job_applications";
const APPLICATIONS: &str = "/org-user/careers/job_applications";
const JOBS: &str = "/org-user/careers/jobs";
const TEAM_COMPANIES: &str = "/admin-user/org/companies";

const CREATED: &str = "careers_job_application.created";
const STAGE_CHANGED: &str = "careers_job_application.stage_changed";
const STATUS_CHANGED: &str = "careers_job_application.status_changed";
const JOB_STATUS_CHANGED: &str = "careers_job.status_changed";
const ALL_EVENTS: [&str; 4] = [CREATED, STAGE_CHANGED, STATUS_CHANGED, JOB_STATUS_CHANGED];

/// An endpoint's keys without its secret (sorted).
const ENDPOINT_KEYS: [&str; 4] = ["created_at", "events", "id", "url"];
/// An endpoint's keys in the answer that shows its secret (sorted).
const ENDPOINT_KEYS_WITH_SECRET: [&str; 5] = ["created_at", "events", "id", "secret", "url"];
/// A delivery's keys (sorted).
const DELIVERY_KEYS: [&str; 6] = [
    "attempts",
    "created_at",
    "event_type",
    "id",
    "last_status_code",
    "status",
];

/// How long a delivery may take to show (the contract's first try comes within 10 s).
const WAIT: Duration = Duration::from_secs(12);
const POLL: Duration = Duration::from_millis(100);

// ---------------------------------------------------------------------------------------------
// The receiver
// ---------------------------------------------------------------------------------------------

/// How the receiver answers.
#[derive(Clone, Debug)]
pub(crate) enum Mode {
    /// This status, an empty body.
    Status(u16),
    /// This 3xx status with `Location` the given URL.
    Redirect(u16, String),
    /// 200 with a 10 MB body.
    Huge,
    /// Answers 200 after 60 s.
    Hang,
}

/// One request the receiver got.
#[derive(Clone, Debug)]
pub(crate) struct Hit {
    method: Method,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Hit {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("header {name}: {:?}", self.headers))
            .to_str()
            .unwrap()
    }

    fn message_id(&self) -> &str {
        self.header("webhook-id")
    }

    fn timestamp(&self) -> i64 {
        self.header("webhook-timestamp")
            .parse()
            .unwrap_or_else(|_| panic!("Unix seconds: {:?}", self.headers))
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// The `v1,…` signatures of `webhook-signature`, in order.
    fn signatures(&self) -> Vec<&str> {
        self.header("webhook-signature").split(' ').collect()
    }

    /// Whether the Standard Webhooks library verifies this message with `secret` (which also
    /// requires `webhook-timestamp` within 5 minutes of the real time).
    pub(crate) fn verifies_with(&self, secret: &str) -> bool {
        Webhook::new(secret)
            .unwrap()
            .verify(&self.body, &self.headers)
            .is_ok()
    }

    /// The signature the Standard Webhooks library makes of this message with `secret`, for
    /// timestamps that `verify` refuses as too far from the real time.
    fn signed_with(&self, secret: &str) -> String {
        Webhook::new(secret)
            .unwrap()
            .sign(self.message_id(), self.timestamp(), &self.body)
            .unwrap()
    }
}

/// An HTTP server on a random loopback port that records every request and answers by its mode.
#[derive(Clone)]
pub(crate) struct Receiver {
    pub(crate) url: String,
    hits: Arc<Mutex<Vec<Hit>>>,
    mode: Arc<Mutex<Mode>>,
}

impl Receiver {
    pub(crate) async fn start(mode: Mode) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let receiver = Receiver {
            url: format!("http://{}/hooks", listener.local_addr().unwrap()),
            hits: Arc::default(),
            mode: Arc::new(Mutex::new(mode)),
        };
        let router = axum::Router::new()
            .fallback(receive)
            .with_state(receiver.clone());
        tokio::spawn(async move {
            axum::serve(listener, router).await.ok();
        });
        receiver
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// The requests once there are at least `n` (fails after [`WAIT`]).
    pub(crate) async fn wait_for(&self, n: usize) -> Vec<Hit> {
        let deadline = Instant::now() + WAIT;
        loop {
            let hits = self.hits();
            if hits.len() >= n {
                return hits;
            }
            assert!(
                Instant::now() < deadline,
                "{} got {} of {n} requests within {WAIT:?}",
                self.url,
                hits.len()
            );
            tokio::time::sleep(POLL).await;
        }
    }
}

async fn receive(
    State(receiver): State<Receiver>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> axum::response::Response {
    receiver.hits.lock().unwrap().push(Hit {
        method,
        headers,
        body: body.to_vec(),
    });
    let mode = receiver.mode.lock().unwrap().clone();
    match mode {
        Mode::Status(code) => StatusCode::from_u16(code).unwrap().into_response(),
        Mode::Redirect(code, to) => (
            StatusCode::from_u16(code).unwrap(),
            [(axum::http::header::LOCATION, to)],
        )
            .into_response(),
        Mode::Huge => (StatusCode::OK, vec![b'x'; 10 << 20]).into_response(),
        Mode::Hang => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            StatusCode::OK.into_response()
        }
    }
}

/// A TCP listener that counts the connections it accepts and closes each without answering.
struct Closer {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

impl Closer {
    async fn start() -> Closer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    // Reads what the request sends first, then hangs up.
                    let mut buf = vec![0u8; 64 * 1024];
                    let read = async {
                        socket.readable().await.ok();
                        socket.try_read(&mut buf).ok();
                    };
                    tokio::time::timeout(Duration::from_secs(2), read)
                        .await
                        .ok();
                    drop(socket);
                });
            }
        });
        Closer { addr, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

// ---------------------------------------------------------------------------------------------
// Scenario and requests
// ---------------------------------------------------------------------------------------------

/// A company with an owner, an open job, and a logged-in candidate with a talent profile.
struct Scene {
    acme: i64,
    boss_email: &'static str,
    boss: Creds,
    job_id: i64,
    profile_id: i64,
    cara: Creds,
}

async fn scene(app: &TestApp) -> Scene {
    let acme = company(app, "Acme").await;
    let boss_email = "boss@acme.example";
    let (_, boss) = employer(app, boss_email, acme).await;
    let job_id = job(app, acme, "Rust engineer", true).await;
    let (_, profile_id, cara) = candidate(app, "cara@example.com").await;
    Scene {
        acme,
        boss_email,
        boss,
        job_id,
        profile_id,
        cara,
    }
}

/// A fresh e-mail address for `tag`.
fn unique(tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    format!("{tag}-{}@acme.example", N.fetch_add(1, Ordering::Relaxed))
}

/// A logged-in member with role `role` at `company_id`.
async fn staff(app: &TestApp, company_id: i64, role: &str) -> Creds {
    let email = unique(role);
    let user_id = app.create_user(&email).await;
    org_profile_as(app, user_id, company_id, "Staff", role).await;
    app.login(&USER, &email).await
}

fn endpoint_path(id: i64) -> String {
    format!("{ENDPOINTS}/{id}")
}

fn deliveries_path(id: i64) -> String {
    format!("{ENDPOINTS}/{id}/deliveries")
}

fn id_of(value: &Value) -> i64 {
    value["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("id: {value}"))
}

/// Creates an endpoint (201) and returns it, secret included.
async fn create_endpoint(app: &TestApp, creds: &Creds, url: &str, events: &[&str]) -> Value {
    let form = json!({"url": url, "events": events});
    let body = json(
        post(app, creds, ENDPOINTS, &form).await,
        StatusCode::CREATED,
    )
    .await;
    body["org_webhook_endpoints"].clone()
}

fn secret_of(endpoint: &Value) -> String {
    endpoint["secret"]
        .as_str()
        .unwrap_or_else(|| panic!("secret: {endpoint}"))
        .to_owned()
}

/// The candidate's application to `job_id` through the API (the `created` event): its id.
async fn apply_to(app: &TestApp, s: &Scene, job_id: i64) -> i64 {
    let form = json!({"careers_job": {"id": job_id},
                      "careers_user_profile": {"id": s.profile_id},
                      "cover_letter": "Hello"});
    let body = json(post(app, &s.cara, APPLY, &form).await, StatusCode::CREATED).await;
    id_of(&body["careers_job_applications"])
}

async fn apply(app: &TestApp, s: &Scene) -> i64 {
    apply_to(app, s, s.job_id).await
}

/// The employer changes the job's status (the `careers_job.status_changed` event).
async fn set_job_status(app: &TestApp, boss: &Creds, job_id: i64, status: &str) {
    let path = format!("{JOBS}/{job_id}");
    let job = ok(patch(app, boss, &path, &json!({ "status": status })).await).await;
    assert_eq!(job["careers_jobs"]["status"], status, "{job}");
}

/// The deliveries' answer of endpoint `id` (200).
async fn deliveries(app: &TestApp, creds: &Creds, id: i64) -> Value {
    ok(get(app, creds, &deliveries_path(id)).await).await
}

/// Endpoint `id`'s deliveries (newest first) once `done` holds of them (fails after [`WAIT`]).
async fn wait_for_deliveries(
    app: &TestApp,
    creds: &Creds,
    id: i64,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let body = deliveries(app, creds, id).await;
        let list = items(&body["org_webhook_deliveries"]).clone();
        if done(&list) {
            return list;
        }
        assert!(Instant::now() < deadline, "{what}: {body}");
        tokio::time::sleep(POLL).await;
    }
}

/// The newest delivery of endpoint `id` once it has been tried `attempts` times.
async fn wait_for_attempts(app: &TestApp, creds: &Creds, id: i64, attempts: i64) -> Value {
    let list = wait_for_deliveries(
        app,
        creds,
        id,
        &format!("a delivery tried {attempts} times"),
        |list| list.first().is_some_and(|d| d["attempts"] == attempts),
    )
    .await;
    list[0].clone()
}

fn is_delivered(d: &Value) -> bool {
    d["status"] == "delivered"
}

/// `(status, attempts, last_status_code)` of a delivery.
fn outcome(d: &Value) -> (Value, Value, Value) {
    (
        d["status"].clone(),
        d["attempts"].clone(),
        d["last_status_code"].clone(),
    )
}

/// The company's webhook deliveries straight from the table: `(status, attempts)` by id.
async fn stored_deliveries(app: &TestApp) -> Vec<(String, i64)> {
    let backend = app.state.db.get_database_backend();
    let rows = app
        .state
        .db
        .query_all_raw(sea_orm::Statement::from_string(
            backend,
            "SELECT status, attempts FROM org_webhook_deliveries ORDER BY id",
        ))
        .await
        .unwrap();
    rows.iter()
        .map(|row| {
            let status: String = row.try_get_by_index(0).unwrap();
            let attempts = row
                .try_get_by_index::<i32>(1)
                .map(i64::from)
                .or_else(|_| row.try_get_by_index::<i64>(1))
                .unwrap();
            (status, attempts)
        })
        .collect()
}

/// Asserts the Standard Webhooks request: `POST`, JSON, `msg_` id, a timestamp at the app's
/// clock, a signature the endpoint's secret verifies; returns the body.
fn assert_standard(hit: &Hit, app: &TestApp, secret: &str) -> Value {
    assert_eq!(hit.method, Method::POST);
    assert_eq!(hit.header("content-type"), "application/json");
    assert!(
        hit.message_id().starts_with("msg_"),
        "webhook-id: {}",
        hit.message_id()
    );
    let now = app.state.now().timestamp();
    assert!(
        (hit.timestamp() - now).abs() <= 5,
        "webhook-timestamp {} near {now}",
        hit.timestamp()
    );
    assert!(
        hit.signatures().iter().all(|s| s.starts_with("v1,")),
        "{:?}",
        hit.signatures()
    );
    assert!(
        hit.verifies_with(secret),
        "the endpoint's secret verifies {:?}",
        hit.headers
    );
    let body = hit.json();
    assert_eq!(keys(&body), ["data", "timestamp", "type"], "{body}");
    let timestamp = body["timestamp"].as_str().expect("timestamp string");
    chrono::DateTime::parse_from_rfc3339(timestamp)
        .unwrap_or_else(|e| panic!("RFC 3339 timestamp {timestamp}: {e}"));
    body
}

/// Suspends (`true`) or unsuspends a company through the team's form.
async fn suspend(app: &TestApp, admin: &Creds, id: i64, suspended: bool) {
    let path = format!("{TEAM_COMPANIES}/{id}");
    ok(patch(app, admin, &path, &json!({ "suspended": suspended })).await).await;
}

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

/// `Config::from_lookup` of `APP_ENV=app_env` with everything production needs, plus `extra`.
fn config_of(app_env: &str, extra: &[(&str, &str)]) -> Result<Config, String> {
    let mut env: Vec<(&str, &str)> = vec![
        ("APP_ENV", app_env),
        ("JWT_SIGNING_SECRET", SECRET),
        ("REDIS_URL", "redis://127.0.0.1:6379"),
        ("COOKIE_DOMAIN", ".example.com"),
        ("DATABASE_URL", "sqlite::memory:"),
    ];
    env.extend_from_slice(&PRODUCTION_STAND_INS);
    env.extend_from_slice(extra);
    Config::from_lookup(|name| {
        env.iter()
            .rev()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    })
    .map_err(|e| e.0)
}

#[test]
fn webhook_allow_private_is_on_only_in_development_and_test() {
    for app_env in ["development", "test"] {
        let config = config_of(app_env, &[]).unwrap_or_else(|e| panic!("{app_env}: {e}"));
        assert!(config.webhook_allow_private, "{app_env}: on by default");
        let config = config_of(app_env, &[("WEBHOOK_ALLOW_PRIVATE", "off")])
            .unwrap_or_else(|e| panic!("{app_env}: {e}"));
        assert!(!config.webhook_allow_private, "{app_env}: off when asked");
    }
    for app_env in ["production", "staging", "qa"] {
        let config = config_of(app_env, &[]).unwrap_or_else(|e| panic!("{app_env}: {e}"));
        assert!(!config.webhook_allow_private, "{app_env}: off by default");
        let config = config_of(app_env, &[("WEBHOOK_ALLOW_PRIVATE", "off")])
            .unwrap_or_else(|e| panic!("{app_env}: {e}"));
        assert!(!config.webhook_allow_private, "{app_env}");
        match config_of(app_env, &[("WEBHOOK_ALLOW_PRIVATE", "on")]) {
            Ok(_) => panic!("{app_env}: WEBHOOK_ALLOW_PRIVATE=on must refuse to start"),
            Err(message) => assert!(message.contains("WEBHOOK_ALLOW_PRIVATE"), "{message}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

backend_tests! {
    async fn an_endpoints_secret_is_shown_once_at_creation(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let form = json!({"url": "https://hooks.acme.example/in", "events": [CREATED, JOB_STATUS_CHANGED]});
        let body = json(post(&app, &s.boss, ENDPOINTS, &form).await, StatusCode::CREATED).await;
        assert_eq!(keys(&body), ["org_webhook_endpoints"], "{body}");
        let created = &body["org_webhook_endpoints"];
        assert_eq!(keys(created), ENDPOINT_KEYS_WITH_SECRET, "{created}");
        assert_eq!(created["url"], "https://hooks.acme.example/in");
        assert_eq!(created["events"], json!([CREATED, JOB_STATUS_CHANGED]));
        let created_at = created["created_at"].as_str().expect("created_at string");
        chrono::DateTime::parse_from_rfc3339(created_at).expect("RFC 3339 created_at");
        let secret = secret_of(created);
        let encoded = secret.strip_prefix("whsec_").unwrap_or_else(|| panic!("whsec_ prefix: {secret}"));
        let bytes = base64::engine::general_purpose::STANDARD.decode(encoded)
            .unwrap_or_else(|e| panic!("base64 after whsec_ ({e}): {secret}"));
        assert!(bytes.len() >= 24, "at least 24 random bytes, got {}", bytes.len());
        Webhook::new(&secret).expect("a Standard Webhooks secret");
        let id = id_of(created);

        // Another endpoint gets another secret.
        let other = create_endpoint(&app, &s.boss, "https://hooks.acme.example/other", &ALL_EVENTS).await;
        assert_ne!(secret_of(&other), secret);
        assert_eq!(other["events"], json!(ALL_EVENTS));

        // The list: oldest first, never a secret.
        let list = ok(get(&app, &s.boss, ENDPOINTS).await).await;
        assert_eq!(keys(&list), ["org_webhook_endpoints"], "{list}");
        assert_eq!(ids(&list["org_webhook_endpoints"]), [id, id_of(&other)]);
        for item in items(&list["org_webhook_endpoints"]) {
            assert_eq!(keys(item), ENDPOINT_KEYS, "no secret in the list: {item}");
        }
        let listed = &list["org_webhook_endpoints"][0];
        assert_eq!(listed["url"], created["url"]);
        assert_eq!(listed["events"], created["events"]);
        assert_eq!(listed["created_at"], created["created_at"]);

        // A PATCH without rotation answers without the secret, with the change.
        let form = json!({"url": "https://hooks.acme.example/moved", "events": [STATUS_CHANGED]});
        let body = ok(patch(&app, &s.boss, &endpoint_path(id), &form).await).await;
        assert_eq!(keys(&body), ["org_webhook_endpoints"], "{body}");
        let changed = &body["org_webhook_endpoints"];
        assert_eq!(keys(changed), ENDPOINT_KEYS, "no secret without rotate_secret: {changed}");
        assert_eq!(changed["url"], "https://hooks.acme.example/moved");
        assert_eq!(changed["events"], json!([STATUS_CHANGED]));
        assert_eq!(changed["id"], id);
        let body = ok(patch(&app, &s.boss, &endpoint_path(id), &json!({"rotate_secret": false})).await).await;
        assert_eq!(keys(&body["org_webhook_endpoints"]), ENDPOINT_KEYS, "{body}");
        let body = ok(patch(&app, &s.boss, &endpoint_path(id), &json!({})).await).await;
        assert_eq!(keys(&body["org_webhook_endpoints"]), ENDPOINT_KEYS, "{body}");
        let list = ok(get(&app, &s.boss, ENDPOINTS).await).await;
        assert_eq!(list["org_webhook_endpoints"][0]["url"], "https://hooks.acme.example/moved");
        assert_eq!(list["org_webhook_endpoints"][0]["events"], json!([STATUS_CHANGED]));

        // DELETE: 204, gone from the list.
        let response = delete(&app, &s.boss, &endpoint_path(id)).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        let list = ok(get(&app, &s.boss, ENDPOINTS).await).await;
        assert_eq!(ids(&list["org_webhook_endpoints"]), [id_of(&other)]);
        expect_error(delete(&app, &s.boss, &endpoint_path(id)).await, StatusCode::NOT_FOUND, "not_found").await;
    }

    async fn endpoint_forms_are_validated_and_limited_to_ten(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let url = "http://127.0.0.1:9/hooks";
        let stored = "SELECT COUNT(*) FROM org_webhook_endpoints";
        let cases: Vec<(Value, &[&str])> = vec![
            (json!({}), &["events", "url"]),
            (json!({"events": [CREATED]}), &["url"]),
            (json!({"url": url}), &["events"]),
            (json!({"url": url, "events": []}), &["events"]),
            (json!({"url": url, "events": ["careers_job.created"]}), &["events"]),
            (json!({"url": url, "events": [CREATED, "careers_job_application.deleted"]}), &["events"]),
            (json!({"url": "ftp://x", "events": [CREATED]}), &["url"]),
            (json!({"url": "not a url", "events": [CREATED]}), &["url"]),
            (json!({"url": "hooks.acme.example/in", "events": [CREATED]}), &["url"]),
            (json!({"url": "", "events": [CREATED]}), &["url"]),
        ];
        for (form, fields) in &cases {
            expect_fields(post(&app, &s.boss, ENDPOINTS, form).await, fields).await;
        }
        assert_eq!(count(&app, stored).await, 0, "refused forms store nothing");

        // A PATCH is validated the same way and changes nothing when refused.
        let first = create_endpoint(&app, &s.boss, url, &[CREATED]).await;
        let path = endpoint_path(id_of(&first));
        for (form, fields) in [
            (json!({"events": []}), &["events"][..]),
            (json!({"events": ["nope"]}), &["events"]),
            (json!({"url": "ftp://x"}), &["url"]),
            (json!({"url": "not a url"}), &["url"]),
        ] {
            expect_fields(patch(&app, &s.boss, &path, &form).await, fields).await;
        }
        let list = ok(get(&app, &s.boss, ENDPOINTS).await).await;
        assert_eq!(list["org_webhook_endpoints"][0]["url"], url);
        assert_eq!(list["org_webhook_endpoints"][0]["events"], json!([CREATED]));

        // At most 10 per company: the 11th is 409 and stores nothing.
        for n in 2..=10 {
            create_endpoint(&app, &s.boss, &format!("http://127.0.0.1:9/hooks/{n}"), &[CREATED]).await;
        }
        assert_eq!(count(&app, stored).await, 10);
        let form = json!({"url": "http://127.0.0.1:9/hooks/11", "events": [CREATED]});
        expect_error(post(&app, &s.boss, ENDPOINTS, &form).await, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(count(&app, stored).await, 10);
        // Another company has its own 10.
        let globex = company(&app, "Globex").await;
        let (_, other_boss) = employer(&app, "boss@globex.example", globex).await;
        create_endpoint(&app, &other_boss, url, &[CREATED]).await;
        // After a deletion there is room again.
        assert_eq!(delete(&app, &s.boss, &path).await.status(), StatusCode::NO_CONTENT);
        let created = json(post(&app, &s.boss, ENDPOINTS, &form).await, StatusCode::CREATED).await;
        assert_eq!(created["org_webhook_endpoints"]["url"], "http://127.0.0.1:9/hooks/11");
    }

    async fn webhooks_are_for_owners_and_admins_cell_by_cell(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let admin = staff(&app, s.acme, "admin").await;
        let member = staff(&app, s.acme, "member").await;
        let stored = "SELECT COUNT(*) FROM org_webhook_endpoints";

        // Owner and admin: every route.
        for (role, creds) in [("owner", &s.boss), ("admin", &admin)] {
            let created = create_endpoint(&app, creds, "http://127.0.0.1:9/hooks", &[CREATED]).await;
            let id = id_of(&created);
            let list = ok(get(&app, creds, ENDPOINTS).await).await;
            assert!(ids(&list["org_webhook_endpoints"]).contains(&id), "{role}: {list}");
            let form = json!({"events": [CREATED, STATUS_CHANGED]});
            let changed = ok(patch(&app, creds, &endpoint_path(id), &form).await).await;
            assert_eq!(changed["org_webhook_endpoints"]["events"], json!([CREATED, STATUS_CHANGED]), "{role}");
            let body = deliveries(&app, creds, id).await;
            assert_eq!(keys(&body), ["meta", "org_webhook_deliveries"], "{role}: {body}");
            assert_eq!(body["org_webhook_deliveries"], json!([]), "{role}");
            assert_eq!(body["meta"]["total"], 0, "{role}: {body}");
            let response = delete(&app, creds, &endpoint_path(id)).await;
            assert_eq!(response.status(), StatusCode::NO_CONTENT, "{role}");
        }
        assert_eq!(count(&app, stored).await, 0);

        // Member: 403 on each route, and nothing changes.
        let kept = create_endpoint(&app, &s.boss, "http://127.0.0.1:9/kept", &[CREATED]).await;
        let id = id_of(&kept);
        let form = json!({"url": "http://127.0.0.1:9/member", "events": [CREATED]});
        for response in [
            post(&app, &member, ENDPOINTS, &form).await,
            get(&app, &member, ENDPOINTS).await,
            patch(&app, &member, &endpoint_path(id), &json!({"url": "http://127.0.0.1:9/member"})).await,
            patch(&app, &member, &endpoint_path(id), &json!({"rotate_secret": true})).await,
            get(&app, &member, &deliveries_path(id)).await,
            delete(&app, &member, &endpoint_path(id)).await,
        ] {
            expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        }
        assert_eq!(count(&app, stored).await, 1);
        let list = ok(get(&app, &s.boss, ENDPOINTS).await).await;
        assert_eq!(list["org_webhook_endpoints"][0]["url"], "http://127.0.0.1:9/kept");

        // Another company's owner: its list is empty, the endpoint is 404 to it.
        let globex = company(&app, "Globex").await;
        let (_, stranger) = employer(&app, "boss@globex.example", globex).await;
        let list = ok(get(&app, &stranger, ENDPOINTS).await).await;
        assert_eq!(list["org_webhook_endpoints"], json!([]));
        for response in [
            patch(&app, &stranger, &endpoint_path(id), &json!({"url": "http://127.0.0.1:9/stolen"})).await,
            get(&app, &stranger, &deliveries_path(id)).await,
            delete(&app, &stranger, &endpoint_path(id)).await,
            patch(&app, &s.boss, &endpoint_path(999_999), &json!({})).await,
            get(&app, &s.boss, &deliveries_path(999_999)).await,
            delete(&app, &s.boss, &endpoint_path(999_999)).await,
        ] {
            expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        }
        let list = ok(get(&app, &s.boss, ENDPOINTS).await).await;
        assert_eq!(ids(&list["org_webhook_endpoints"]), [id]);
        assert_eq!(list["org_webhook_endpoints"][0]["url"], "http://127.0.0.1:9/kept");
    }

    async fn without_private_addresses_only_https_to_global_hosts_is_taken_or_tried(backend) {
        let app = TestApp::spawn_with(backend, &[("WEBHOOK_ALLOW_PRIVATE", "off")]).await;
        let s = scene(&app).await;
        let stored = "SELECT COUNT(*) FROM org_webhook_endpoints";
        for url in [
            "http://example.com/x",
            "http://1.1.1.1/x",
            "https://127.0.0.1/x",
            "https://127.1.2.3/x",
            "https://2130706433/x",
            "https://[::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://[::ffff:10.0.0.1]/x",
            "https://[64:ff9b::7f00:1]/x",
            "https://[2002:7f00:1::]/x",
            "https://10.0.0.1/x",
            "https://172.16.0.1/x",
            "https://192.168.1.1/x",
            "https://100.64.0.1/x",
            "https://0.0.0.0/x",
            "https://169.254.169.254/x",
            "https://224.0.0.1/x",
            "https://[fd00::1]/x",
            "https://[fe80::1]/x",
            "https://localhost/x",
        ] {
            let form = json!({"url": url, "events": [CREATED]});
            let body = expect_fields(post(&app, &s.boss, ENDPOINTS, &form).await, &["url"]).await;
            assert!(body["error"]["fields"]["url"].is_array(), "{url}: {body}");
        }
        assert_eq!(count(&app, stored).await, 0, "refused URLs store nothing");

        // A global address written as such is taken (no lookup); a change to a private one is not.
        let first = create_endpoint(&app, &s.boss, "https://1.1.1.1/hooks", &[CREATED]).await;
        let second = create_endpoint(&app, &s.boss, "https://[2606:4700:4700::1111]/hooks", &[CREATED]).await;
        for url in ["https://127.0.0.1/x", "https://localhost/x", "http://1.1.1.1/x"] {
            let response = patch(&app, &s.boss, &endpoint_path(id_of(&first)), &json!({"url": url})).await;
            expect_fields(response, &["url"]).await;
        }

        // Stored URLs that now point inside (as a changed DNS answer would) fail the try
        // without a request: neither the written loopback address nor a name resolving to it.
        let tripwire = Closer::start().await;
        let port = tripwire.addr.port();
        for (endpoint, url) in [
            (&first, format!("https://127.0.0.1:{port}/hooks")),
            (&second, format!("https://localhost:{port}/hooks")),
        ] {
            let sql = format!("UPDATE org_webhook_endpoints SET url = '{url}' WHERE id = {}", id_of(endpoint));
            app.state.db.execute_unprepared(&sql).await.unwrap();
        }
        app.start_webhook_worker();
        apply(&app, &s).await;
        for endpoint in [&first, &second] {
            let tried = wait_for_attempts(&app, &s.boss, id_of(endpoint), 1).await;
            assert_eq!(outcome(&tried), (json!("pending"), json!(1), Value::Null), "{tried}");
        }
        assert_eq!(tripwire.accepted(), 0, "no connection to a refused address");
    }

    async fn events_are_delivered_signed_with_the_snapshot_of_the_change(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let applications = Receiver::start(Mode::Status(200)).await;
        let jobs = Receiver::start(Mode::Status(204)).await;
        let events = [CREATED, STAGE_CHANGED, STATUS_CHANGED];
        let for_applications = create_endpoint(&app, &s.boss, &applications.url, &events).await;
        let for_jobs = create_endpoint(&app, &s.boss, &jobs.url, &[JOB_STATUS_CHANGED]).await;
        let (app_secret, job_secret) = (secret_of(&for_applications), secret_of(&for_jobs));
        app.start_webhook_worker();

        // created
        let id = apply(&app, &s).await;
        let hits = applications.wait_for(1).await;
        let body = assert_standard(&hits[0], &app, &app_secret);
        assert!(!hits[0].verifies_with(&job_secret), "another endpoint's secret does not verify");
        assert_eq!(body["type"], CREATED, "{body}");
        assert_eq!(keys(&body["data"]), APPLICATION_KEYS, "{body}");
        assert_eq!(body["data"]["id"], id);
        assert_eq!(body["data"]["status"], "active");
        assert_eq!(body["data"]["lock_version"], 0);
        assert_eq!(body["data"], application_item(&app, &s.boss, id).await, "the employer's list item");
        let list = wait_for_deliveries(&app, &s.boss, id_of(&for_applications), "delivered",
                                       |l| l.first().is_some_and(is_delivered)).await;
        assert_eq!(keys(&list[0]), DELIVERY_KEYS, "{}", list[0]);
        assert_eq!(list[0]["event_type"], CREATED);
        assert_eq!(outcome(&list[0]), (json!("delivered"), json!(1), json!(200)));
        let created_at = list[0]["created_at"].as_str().expect("created_at string");
        chrono::DateTime::parse_from_rfc3339(created_at).expect("RFC 3339 created_at");

        // stage_changed
        let stages = stage_ids(&app, &s.boss, s.job_id).await;
        let path = format!("{APPLICATIONS}/{id}");
        let form = json!({"lock_version": 0, "careers_job_stage": {"id": stages[1]}});
        ok(patch(&app, &s.boss, &path, &form).await).await;
        let hits = applications.wait_for(2).await;
        let body = assert_standard(&hits[1], &app, &app_secret);
        assert_eq!(body["type"], STAGE_CHANGED, "{body}");
        assert_eq!(body["data"]["careers_job_stage"], json!({"id": stages[1]}));
        assert_eq!(body["data"]["lock_version"], 1);
        assert_eq!(body["data"], application_item(&app, &s.boss, id).await);

        // status_changed
        let form = json!({"lock_version": 1, "status": "rejected", "rejection_reason": "not_a_fit"});
        ok(patch(&app, &s.boss, &path, &form).await).await;
        let hits = applications.wait_for(3).await;
        let body = assert_standard(&hits[2], &app, &app_secret);
        assert_eq!(body["type"], STATUS_CHANGED, "{body}");
        assert_eq!(keys(&body["data"]), APPLICATION_KEYS);
        assert_eq!(body["data"]["status"], "rejected");
        assert_eq!(body["data"]["rejection_reason"], "not_a_fit");
        assert_eq!(body["data"], application_item(&app, &s.boss, id).await);
        let message_ids: std::collections::HashSet<&str> = hits.iter().map(Hit::message_id).collect();
        assert_eq!(message_ids.len(), 3, "one webhook-id per event: {message_ids:?}");

        // The job endpoint got none of these; the job's status change goes to it only.
        assert!(jobs.hits().is_empty(), "not subscribed to applications");
        assert_eq!(deliveries(&app, &s.boss, id_of(&for_jobs)).await["meta"]["total"], 0);
        set_job_status(&app, &s.boss, s.job_id, "closed").await;
        let hits = jobs.wait_for(1).await;
        let body = assert_standard(&hits[0], &app, &job_secret);
        assert_eq!(body["type"], JOB_STATUS_CHANGED, "{body}");
        assert_eq!(keys(&body["data"]), JOB_KEYS, "{body}");
        assert_eq!(body["data"]["id"], s.job_id);
        assert_eq!(body["data"]["status"], "closed");
        assert_eq!(body["data"]["company"], json!({"id": s.acme, "name": "Acme"}));
        let job_list = wait_for_deliveries(&app, &s.boss, id_of(&for_jobs), "the job's event delivered",
                                           |l| l.first().is_some_and(is_delivered)).await;
        assert_eq!(outcome(&job_list[0]), (json!("delivered"), json!(1), json!(204)));
        assert_eq!(job_list[0]["event_type"], JOB_STATUS_CHANGED);

        // The application endpoint's deliveries, newest first, all delivered once.
        let list = wait_for_deliveries(&app, &s.boss, id_of(&for_applications), "three delivered",
                                       |l| l.len() == 3 && l.iter().all(is_delivered)).await;
        let types: Vec<&Value> = list.iter().map(|d| &d["event_type"]).collect();
        assert_eq!(types, [STATUS_CHANGED, STAGE_CHANGED, CREATED]);
        let delivery_ids = ids(&Value::Array(list.clone()));
        assert!(delivery_ids.windows(2).all(|w| w[0] > w[1]), "newest first: {delivery_ids:?}");
        for d in &list {
            assert_eq!(outcome(d), (json!("delivered"), json!(1), json!(200)), "{d}");
        }
        let body = deliveries(&app, &s.boss, id_of(&for_applications)).await;
        assert_eq!(body["meta"]["total"], 3, "{body}");
        assert_eq!(body["meta"]["page"], 1, "{body}");
        assert_eq!(applications.hits().len(), 3, "nothing sent twice");
    }

    async fn a_failed_try_is_retried_with_the_same_webhook_id(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let receiver = Receiver::start(Mode::Status(500)).await;
        let endpoint = create_endpoint(&app, &s.boss, &receiver.url, &[CREATED]).await;
        let (id, secret) = (id_of(&endpoint), secret_of(&endpoint));
        app.start_webhook_worker();
        apply(&app, &s).await;
        let first = receiver.wait_for(1).await[0].clone();
        assert_standard(&first, &app, &secret);
        let tried = wait_for_attempts(&app, &s.boss, id, 1).await;
        assert_eq!(outcome(&tried), (json!("pending"), json!(1), json!(500)), "{tried}");

        receiver.set(Mode::Status(200));
        app.clock.advance(11);
        let hits = receiver.wait_for(2).await;
        let second = &hits[1];
        assert_standard(second, &app, &secret);
        assert_eq!(second.message_id(), first.message_id(), "the same webhook-id for every try");
        assert_eq!(second.body, first.body, "the same body");
        let delivered = wait_for_deliveries(&app, &s.boss, id, "delivered on the retry",
                                            |l| l.first().is_some_and(is_delivered)).await;
        assert_eq!(delivered.len(), 1);
        assert_eq!(outcome(&delivered[0]), (json!("delivered"), json!(2), json!(200)));
    }

    async fn retries_back_off_at_most_doubling_and_give_up_after_24_hours(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let receiver = Receiver::start(Mode::Status(503)).await;
        let endpoint = create_endpoint(&app, &s.boss, &receiver.url, &[CREATED]).await;
        let id = id_of(&endpoint);
        app.start_webhook_worker();
        apply(&app, &s).await;
        receiver.wait_for(1).await;
        wait_for_attempts(&app, &s.boss, id, 1).await;
        // The first retry within 10 s, each wait at most double the one before.
        for (tries, wait) in [(2usize, 10i64), (3, 20), (4, 40)] {
            app.clock.advance(wait + 1);
            receiver.wait_for(tries).await;
            let tried = wait_for_attempts(&app, &s.boss, id, tries as i64).await;
            assert_eq!(outcome(&tried), (json!("pending"), json!(tries), json!(503)), "{tried}");
        }
        let message_ids: Vec<String> = receiver.hits().iter().map(|h| h.message_id().to_owned()).collect();
        assert!(message_ids.iter().all(|m| *m == message_ids[0]), "{message_ids:?}");

        // 24 hours after the event, the next failed try marks it failed; nothing more is tried.
        app.clock.advance(24 * 3600);
        let boss = app.login(&USER, s.boss_email).await;
        receiver.wait_for(5).await;
        let failed = wait_for_deliveries(&app, &boss, id, "failed after 24 hours",
                                         |l| l.first().is_some_and(|d| d["status"] == "failed")).await;
        assert_eq!(outcome(&failed[0]), (json!("failed"), json!(5), json!(503)), "{}", failed[0]);
        app.clock.advance(2 * 3600);
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(receiver.hits().len(), 5, "a failed delivery is not tried again");
    }

    async fn a_redirect_is_a_failed_try_and_is_not_followed(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let target = Receiver::start(Mode::Status(200)).await;
        let mut endpoints = Vec::new();
        for code in [301u16, 302, 307, 308] {
            let receiver = Receiver::start(Mode::Redirect(code, target.url.clone())).await;
            let endpoint = create_endpoint(&app, &s.boss, &receiver.url, &[CREATED]).await;
            endpoints.push((code, receiver, id_of(&endpoint)));
        }
        app.start_webhook_worker();
        apply(&app, &s).await;
        for (code, receiver, id) in &endpoints {
            receiver.wait_for(1).await;
            let tried = wait_for_attempts(&app, &s.boss, *id, 1).await;
            assert_eq!(outcome(&tried), (json!("pending"), json!(1), json!(code)), "{code}: {tried}");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(target.hits().is_empty(), "the redirect's target got {} requests", target.hits().len());
    }

    async fn a_connection_closed_without_an_answer_is_a_failed_try(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let closer = Closer::start().await;
        let url = format!("http://{}/hooks", closer.addr);
        let endpoint = create_endpoint(&app, &s.boss, &url, &[CREATED]).await;
        app.start_webhook_worker();
        apply(&app, &s).await;
        let tried = wait_for_attempts(&app, &s.boss, id_of(&endpoint), 1).await;
        assert_eq!(outcome(&tried), (json!("pending"), json!(1), Value::Null), "{tried}");
        assert!(closer.accepted() >= 1, "the try connected");
    }

    async fn a_2xx_with_a_large_body_is_delivered(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let receiver = Receiver::start(Mode::Huge).await;
        let endpoint = create_endpoint(&app, &s.boss, &receiver.url, &[CREATED]).await;
        app.start_webhook_worker();
        apply(&app, &s).await;
        receiver.wait_for(1).await;
        let delivered = wait_for_deliveries(&app, &s.boss, id_of(&endpoint), "delivered",
                                            |l| l.first().is_some_and(is_delivered)).await;
        assert_eq!(outcome(&delivered[0]), (json!("delivered"), json!(1), json!(200)));
        assert_eq!(receiver.hits().len(), 1);
    }

    async fn a_hanging_receiver_slows_neither_other_endpoints_nor_the_api(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let hanging = Receiver::start(Mode::Hang).await;
        let prompt = Receiver::start(Mode::Status(200)).await;
        let stuck = create_endpoint(&app, &s.boss, &hanging.url, &[CREATED, JOB_STATUS_CHANGED]).await;
        let fine = create_endpoint(&app, &s.boss, &prompt.url, &[CREATED]).await;
        app.start_webhook_worker();
        let committed = Instant::now();
        apply(&app, &s).await;

        // (a) The other endpoint gets its delivery promptly, while the first hangs.
        hanging.wait_for(1).await;
        let hang_started = Instant::now();
        prompt.wait_for(1).await;
        assert!(committed.elapsed() < Duration::from_secs(5),
                "the other endpoint's delivery took {:?}", committed.elapsed());
        let delivered = wait_for_deliveries(&app, &s.boss, id_of(&fine), "the other endpoint delivered",
                                            |l| l.first().is_some_and(is_delivered)).await;
        assert_eq!(outcome(&delivered[0]), (json!("delivered"), json!(1), json!(200)));

        // (b) The API answers fast meanwhile, reads and a write that records an event for the
        // hanging endpoint alike.
        for _ in 0..3 {
            let started = Instant::now();
            ok(get(&app, &s.boss, ENDPOINTS).await).await;
            assert!(started.elapsed() < Duration::from_secs(1), "GET took {:?}", started.elapsed());
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let started = Instant::now();
        set_job_status(&app, &s.boss, s.job_id, "closed").await;
        assert!(started.elapsed() < Duration::from_secs(1), "PATCH took {:?}", started.elapsed());
        assert!(hang_started.elapsed() < Duration::from_secs(14), "still within the hang");

        // (c) After the 15 s timeout the hanging delivery is pending, tried once, no status.
        let deadline = Instant::now() + Duration::from_secs(25);
        let tried = loop {
            let body = deliveries(&app, &s.boss, id_of(&stuck)).await;
            let found = items(&body["org_webhook_deliveries"]).iter()
                .find(|d| d["event_type"] == CREATED).cloned().expect("the created event's delivery");
            if found["attempts"] == 1 {
                break found;
            }
            assert!(Instant::now() < deadline, "the hanging try never ended: {body}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        let took = hang_started.elapsed();
        assert_eq!(outcome(&tried), (json!("pending"), json!(1), Value::Null), "{tried}");
        assert!(took >= Duration::from_secs(13) && took <= Duration::from_secs(22),
                "the try ended after {took:?}, not at the 15 s timeout");
    }

    async fn a_rotated_secret_signs_beside_the_old_one_for_24_hours(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let receiver = Receiver::start(Mode::Status(200)).await;
        let endpoint = create_endpoint(&app, &s.boss, &receiver.url, &[JOB_STATUS_CHANGED]).await;
        let (id, old) = (id_of(&endpoint), secret_of(&endpoint));
        let body = ok(patch(&app, &s.boss, &endpoint_path(id), &json!({"rotate_secret": true})).await).await;
        let rotated = &body["org_webhook_endpoints"];
        assert_eq!(keys(rotated), ENDPOINT_KEYS_WITH_SECRET, "{rotated}");
        let new = secret_of(rotated);
        assert!(new.starts_with("whsec_"), "{new}");
        assert_ne!(new, old);
        let list = ok(get(&app, &s.boss, ENDPOINTS).await).await;
        assert_eq!(keys(&list["org_webhook_endpoints"][0]), ENDPOINT_KEYS, "shown once: {list}");
        app.start_webhook_worker();

        // Right after the rotation: `v1,<new> v1,<old>`, each verifying on its own.
        set_job_status(&app, &s.boss, s.job_id, "closed").await;
        let hit = receiver.wait_for(1).await[0].clone();
        assert_standard(&hit, &app, &new);
        assert!(hit.verifies_with(&new), "the new secret verifies");
        assert!(hit.verifies_with(&old), "the old secret verifies");
        let stranger = format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode([7u8; 32]));
        assert!(!hit.verifies_with(&stranger), "another secret does not");
        assert_eq!(hit.signatures(), [hit.signed_with(&new), hit.signed_with(&old)],
                   "two space-separated signatures, the new one first");

        // Still both a minute before the 24 hours end.
        app.clock.advance(24 * 3600 - 60);
        let boss = app.login(&USER, s.boss_email).await;
        set_job_status(&app, &boss, s.job_id, "open").await;
        let hit = receiver.wait_for(2).await[1].clone();
        assert_eq!(hit.signatures(), [hit.signed_with(&new), hit.signed_with(&old)], "within 24 hours");

        // Past 24 hours: the new one only.
        app.clock.advance(61);
        set_job_status(&app, &boss, s.job_id, "closed").await;
        let hit = receiver.wait_for(3).await[2].clone();
        assert_eq!(hit.timestamp(), app.state.now().timestamp(), "webhook-timestamp is the clock's");
        assert_eq!(hit.signatures(), [hit.signed_with(&new)], "only the new secret after 24 hours");
        assert_eq!(hit.json()["type"], JOB_STATUS_CHANGED);
    }

    async fn deliveries_stored_without_a_worker_go_out_once_it_starts_and_only_once(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let receiver = Receiver::start(Mode::Status(200)).await;
        let endpoint = create_endpoint(&app, &s.boss, &receiver.url, &[CREATED, JOB_STATUS_CHANGED]).await;
        let id = id_of(&endpoint);
        apply(&app, &s).await;
        set_job_status(&app, &s.boss, s.job_id, "closed").await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(receiver.hits().is_empty(), "no worker, no delivery");
        let body = deliveries(&app, &s.boss, id).await;
        assert_eq!(body["meta"]["total"], 2, "{body}");
        for d in items(&body["org_webhook_deliveries"]) {
            assert_eq!(outcome(d), (json!("pending"), json!(0), Value::Null), "{d}");
        }

        // The worker (as after a restart) delivers both.
        app.start_webhook_worker();
        let hits = receiver.wait_for(2).await;
        assert_ne!(hits[0].message_id(), hits[1].message_id());
        let mut types: Vec<String> = hits.iter().map(|h| h.json()["type"].as_str().unwrap().to_owned()).collect();
        types.sort();
        assert_eq!(types, [JOB_STATUS_CHANGED, CREATED]);
        wait_for_deliveries(&app, &s.boss, id, "both delivered",
                            |l| l.len() == 2 && l.iter().all(is_delivered)).await;

        // A delivered one is never sent again, however much time passes.
        app.clock.advance(2 * 3600);
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(receiver.hits().len(), 2, "no duplicate");
        assert_eq!(stored_deliveries(&app).await,
                   [("delivered".to_owned(), 1), ("delivered".to_owned(), 1)]);
    }

    /// A try cut short by a stopped process leaves its delivery leased: no other round takes it
    /// until the lease (60 s) ends, and then it is delivered, once.
    async fn a_delivery_left_leased_by_a_stopped_process_goes_out_when_its_lease_ends(backend) {
        use careers_api::webhooks::delivery;
        use sea_orm::{EntityTrait, sea_query::Expr};
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let receiver = Receiver::start(Mode::Status(200)).await;
        create_endpoint(&app, &s.boss, &receiver.url, &[CREATED]).await;
        apply(&app, &s).await;
        let now = sessions::Clock::now(&*app.clock);
        let leased_until = chrono::DateTime::from_timestamp(now + 60, 0).unwrap();
        delivery::Entity::update_many()
            .col_expr(delivery::Column::NextAttemptAt, Expr::value(leased_until))
            .exec(&*app.state.db)
            .await
            .unwrap();
        app.start_webhook_worker();
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(receiver.hits().is_empty(), "the lease holds");
        app.clock.advance(61);
        receiver.wait_for(1).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(receiver.hits().len(), 1, "once");
        assert_eq!(stored_deliveries(&app).await, [("delivered".to_owned(), 1)]);
    }

    async fn a_suspended_companys_deliveries_wait_until_it_is_unsuspended(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let receiver = Receiver::start(Mode::Status(200)).await;
        let endpoint = create_endpoint(&app, &s.boss, &receiver.url, &[CREATED]).await;
        apply(&app, &s).await;
        suspend(&app, &admin, s.acme, true).await;
        app.start_webhook_worker();
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(receiver.hits().is_empty(), "a suspended company's delivery waits");
        assert_eq!(stored_deliveries(&app).await, [("pending".to_owned(), 0)]);

        suspend(&app, &admin, s.acme, false).await;
        let hits = receiver.wait_for(1).await;
        assert_eq!(hits[0].json()["type"], CREATED);
        let delivered = wait_for_deliveries(&app, &s.boss, id_of(&endpoint), "delivered once unsuspended",
                                            |l| l.first().is_some_and(is_delivered)).await;
        assert_eq!(outcome(&delivered[0]), (json!("delivered"), json!(1), json!(200)));
    }

    async fn deleting_an_endpoint_deletes_its_deliveries(backend) {
        let app = TestApp::spawn(backend).await;
        let s = scene(&app).await;
        let events = [CREATED, JOB_STATUS_CHANGED];
        let gone = create_endpoint(&app, &s.boss, "http://127.0.0.1:9/gone", &events).await;
        let kept = create_endpoint(&app, &s.boss, "http://127.0.0.1:9/kept", &events).await;
        apply(&app, &s).await;
        set_job_status(&app, &s.boss, s.job_id, "closed").await;
        let of = |id: i64| format!("SELECT COUNT(*) FROM org_webhook_deliveries WHERE org_webhook_endpoint_id = {id}");
        assert_eq!(count(&app, &of(id_of(&gone))).await, 2);
        assert_eq!(count(&app, &of(id_of(&kept))).await, 2);
        assert_eq!(deliveries(&app, &s.boss, id_of(&gone)).await["meta"]["total"], 2);

        let response = delete(&app, &s.boss, &endpoint_path(id_of(&gone))).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        assert_eq!(count(&app, &of(id_of(&gone))).await, 0, "its deliveries are deleted");
        assert_eq!(count(&app, "SELECT COUNT(*) FROM org_webhook_deliveries").await, 2);
        expect_error(get(&app, &s.boss, &deliveries_path(id_of(&gone))).await, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(deliveries(&app, &s.boss, id_of(&kept)).await["meta"]["total"], 2, "the other's stay");
    }
}
