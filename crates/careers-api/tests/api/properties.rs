//! Property tests: generated and mutated tokens, cookies, headers and form bodies thrown at the
//! router. Whatever arrives, the status is one the contract allows, an error is the contract's
//! JSON body, and a refused request changes nothing (database rows, session record).

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use careers_api::app;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sea_orm::{ConnectionTrait, Statement};
use serde_json::Value;
use tower::ServiceExt;

use crate::fixtures;
use crate::helpers::*;

const TABLES: &[&str] = &[
    "identities_users",
    "identities_admins",
    "org_companies",
    "org_user_profiles",
    "careers_user_profiles",
    "careers_certificates",
    "careers_experiences",
    "careers_skills",
    "careers_jobs",
    "careers_job_applications",
];

/// Row count and latest update of every table: any insert, update or delete changes it.
async fn snapshot(app: &TestApp) -> Vec<String> {
    let mut state = Vec::new();
    for table in TABLES {
        let sql = format!("SELECT COUNT(*), CAST(MAX(updated_at) AS TEXT) FROM {table}");
        let backend = app.state.db.get_database_backend();
        let row = app
            .state
            .db
            .query_one_raw(Statement::from_string(backend, sql))
            .await
            .unwrap()
            .unwrap();
        let count: i64 = row.try_get_by_index(0).unwrap();
        let latest: Option<String> = row.try_get_by_index(1).unwrap();
        state.push(format!("{table}:{count}:{latest:?}"));
    }
    state
}

struct Fixture {
    app: TestApp,
    creds: Creds,
    runtime: Arc<tokio::runtime::Runtime>,
}

fn fixture() -> Fixture {
    let runtime = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
    );
    let (app, creds) = runtime.block_on(async {
        let app = TestApp::spawn(Backend::SqliteMemoryStore).await;
        let company = fixtures::company(&app, "Acme").await;
        let (_, creds) = fixtures::employer(&app, "erin@acme.example", company).await;
        fixtures::job(&app, company, "Rust engineer", true).await;
        let _ = fixtures::candidate(&app, "cara@example.com").await;
        (app, creds)
    });
    Fixture {
        app,
        creds,
        runtime,
    }
}

impl Fixture {
    /// Sends one request through the router and checks the invariants; returns the status.
    fn check(&self, request: Request<Body>, allowed: &[u16]) -> Result<(), TestCaseError> {
        self.runtime.block_on(async {
            let before_rows = snapshot(&self.app).await;
            let before_session = self.app.record(&self.creds).await;
            let service = app::build_app(self.app.state.clone());
            let response = service.oneshot(request).await.unwrap();
            let status = response.status();
            let body = axum::body::to_bytes(Body::new(response.into_body()), 1 << 20)
                .await
                .unwrap();
            prop_assert!(
                allowed.contains(&status.as_u16()),
                "status {status} not allowed; body {}",
                String::from_utf8_lossy(&body)
            );
            prop_assert!(
                !status.is_server_error(),
                "5xx: {}",
                String::from_utf8_lossy(&body)
            );
            if status.is_client_error() {
                let json: Value = serde_json::from_slice(&body)
                    .map_err(|_| TestCaseError::fail("error body is not JSON"))?;
                prop_assert!(json["error"]["code"].is_string(), "{json}");
                prop_assert!(json["error"]["message"].is_string(), "{json}");
                prop_assert_eq!(snapshot(&self.app).await, before_rows, "rows changed");
                prop_assert_eq!(
                    self.app.record(&self.creds).await,
                    before_session,
                    "session changed"
                );
            }
            Ok(())
        })
    }
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// A valid token with one kind of damage.
fn mutated_token(valid: String) -> impl Strategy<Value = String> {
    let len = valid.len();
    prop_oneof![
        (0..len, any::<char>()).prop_map({
            let v = valid.clone();
            move |(i, c)| {
                let mut s: Vec<char> = v.chars().collect();
                s[i] = c;
                s.into_iter().collect()
            }
        }),
        (0..len).prop_map({
            let v = valid.clone();
            move |i| v[..i].to_string()
        }),
        Just(format!("{valid}.{valid}")),
        Just(valid.replacen('.', "", 1)),
        Just(valid.split('.').rev().collect::<Vec<_>>().join(".")),
        "[A-Za-z0-9_-]{0,40}\\.[A-Za-z0-9_-]{0,200}\\.[A-Za-z0-9_-]{0,60}",
        "\\PC{0,300}",
    ]
}

const UNSAFE_STATUSES: &[u16] = &[400, 401, 403, 404, 413, 415, 422];

#[test]
fn mutated_tokens_are_refused_without_side_effects() {
    let f = fixture();
    let strategy = (mutated_token(f.creds.access.clone()), 0..3usize);
    runner(256)
        .run(&strategy, |(token, route)| {
            let (method, path) = [
                ("GET", "/org/user-profiles"),
                ("PATCH", "/identities/sessions/current"),
                ("DELETE", "/identities/sessions/current"),
            ][route];
            prop_assume!(token != f.creds.access);
            let Ok(cookie) = axum::http::HeaderValue::from_str(&format!("jwt_access={token}"))
            else {
                return Ok(());
            };
            let request = Request::builder()
                .method(method)
                .uri(path)
                .header("cookie", cookie)
                .header("x-csrf-token", &f.creds.csrf)
                .body(Body::empty())
                .unwrap();
            f.check(request, &[400, 401, 403])
        })
        .unwrap();
}

#[test]
fn generated_cookie_headers_are_refused_without_side_effects() {
    let f = fixture();
    let names = prop_oneof![
        Just("jwt_access".to_string()),
        Just("team_jwt_access".to_string()),
        Just("CSRF_TOKEN".to_string()),
        "[A-Za-z_]{1,12}",
    ];
    let pair = (
        names,
        prop_oneof![mutated_token(f.creds.access.clone()), "[ -~]{0,64}"],
    );
    let strategy = proptest::collection::vec(pair, 0..5);
    runner(256)
        .run(&strategy, |pairs| {
            let header: String = pairs
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("; ");
            prop_assume!(!header.contains(&f.creds.access));
            let Ok(value) = axum::http::HeaderValue::from_str(&header) else {
                return Ok(());
            };
            let request = Request::builder()
                .method("PATCH")
                .uri("/org/user-profiles/1")
                .header("cookie", value)
                .header("content-type", "application/json")
                .body(Body::from("{\"title\":\"x\"}"))
                .unwrap();
            f.check(request, &[400, 401, 403])
        })
        .unwrap();
}

#[test]
fn generated_headers_on_unsafe_requests_are_refused_without_side_effects() {
    let f = fixture();
    let strategy = (
        proptest::option::of("[ -~]{0,80}"),
        proptest::option::of(prop_oneof![
            Just("https://evil.example".to_string()),
            Just("null".to_string()),
            "[ -~]{0,40}"
        ]),
        proptest::option::of(prop_oneof![
            Just("application/json".to_string()),
            Just("text/plain".to_string()),
            "[ -~]{0,40}"
        ]),
    );
    runner(128)
        .run(&strategy, |(csrf, origin, content_type)| {
            prop_assume!(csrf.as_deref() != Some(f.creds.csrf.as_str()));
            let mut builder = Request::builder()
                .method("POST")
                .uri("/org-user/careers/jobs")
                .header("cookie", f.creds.cookie_header());
            for (name, value) in [
                ("x-csrf-token", &csrf),
                ("origin", &origin),
                ("content-type", &content_type),
            ] {
                if let Some(value) = value
                    && let Ok(value) = axum::http::HeaderValue::from_str(value)
                {
                    builder = builder.header(name, value);
                }
            }
            let body = r#"{"title":"Injected","company":{"id":1}}"#;
            f.check(builder.body(Body::from(body)).unwrap(), &[400, 403, 415])
        })
        .unwrap();
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,40}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("title".to_string()),
                    Just("company".to_string()),
                    Just("identities_user".to_string()),
                    Just("id".to_string()),
                    Just("careers_job".to_string()),
                    Just("careers_user_profile".to_string()),
                    Just("careers_experience".to_string()),
                    Just("status".to_string()),
                    "[a-z_]{1,12}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn generated_form_bodies_get_contract_errors_and_change_nothing_when_refused() {
    let f = fixture();
    let routes = [
        ("POST", "/org/user-profiles"),
        ("PATCH", "/org/user-profiles/1"),
        ("POST", "/org-user/careers/jobs"),
        ("PATCH", "/org-user/careers/jobs/1"),
        ("POST", "/identities/careers/user_profiles"),
        ("PATCH", "/identities/user/1"),
    ];
    let strategy = (json_value(), 0..routes.len(), any::<bool>());
    runner(256)
        .run(&strategy, |(body, route, as_text)| {
            let (method, path) = routes[route];
            // Damaged JSON (cut anywhere, even inside a UTF-8 sequence) as well as well-formed
            // values of every shape.
            let mut bytes = body.to_string().into_bytes();
            if as_text {
                bytes.truncate(bytes.len() / 2);
            }
            let request = Request::builder()
                .method(method)
                .uri(path)
                .header("cookie", f.creds.cookie_header())
                .header("x-csrf-token", &f.creds.csrf)
                .header("content-type", "application/json")
                .body(Body::from(bytes))
                .unwrap();
            // A well-formed, valid partial update may succeed (200/201); refusals change nothing.
            let mut allowed = UNSAFE_STATUSES.to_vec();
            allowed.extend([200, 201, 409]);
            f.check(request, &allowed)
        })
        .unwrap();
}
