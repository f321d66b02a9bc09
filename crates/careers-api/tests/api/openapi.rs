//! The OpenAPI 3.1 document covers every route, and every documented route is served.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::backend_tests;
use crate::helpers::*;

/// Every route of the API, generated from the handlers by `scripts/regenerate.sh`: a route
/// added, removed or renamed shows in the file's diff, and this test fails until it is there.
fn routes() -> Vec<(String, String)> {
    let mut routes: Vec<(String, String)> = include_str!("routes.txt")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (method, path) = line.split_once(' ').expect("METHOD path");
            (method.to_lowercase(), path.to_owned())
        })
        .collect();
    routes.sort();
    routes
}

fn operations(document: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_some() {
                found.push((method.to_string(), path.clone()));
            }
        }
    }
    found.sort();
    found
}

backend_tests! {
    async fn the_demo_page_and_its_kit_are_served_in_development_only(backend) {
        let test = TestApp::spawn(backend).await;
        let response = test.request(Method::GET, "/demo").send().await.unwrap();
        assert_error(response, StatusCode::NOT_FOUND, "not_found").await;
        let dev = TestApp::spawn_with(backend, &[("APP_ENV", "development")]).await;
        let page = dev.request(Method::GET, "/demo").send().await.unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        let page = page.text().await.unwrap();
        assert!(page.contains(r#"import { createSession } from "/demo/session-kit.js""#));
        let kit = dev.request(Method::GET, "/demo/session-kit.js").send().await.unwrap();
        assert!(kit.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
        let kit = kit.text().await.unwrap();
        let source = include_str!("../../../../clients/js/session-kit.js");
        assert_eq!(kit, source, "the kit of clients/js, as it is");
    }

    async fn swagger_ui_is_served_only_with_api_docs_on(backend) {
        let off = TestApp::spawn(backend).await;
        let response = off.request(Method::GET, "/docs/").send().await.unwrap();
        assert_error(response, StatusCode::NOT_FOUND, "not_found").await;
        let on = TestApp::spawn_with(backend, &[("API_DOCS", "on")]).await;
        let response = on.request(Method::GET, "/docs/").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let page = response.text().await.unwrap();
        assert!(page.contains("swagger-ui"));
        // Every asset from the binary: the page references no other host.
        assert!(!page.contains("https://") && !page.contains("http://"), "{page}");
    }

    async fn the_document_is_openapi_3_1_and_lists_exactly_the_routes(backend) {
        let app = TestApp::spawn(backend).await;
        let response = app.request(Method::GET, "/openapi.json").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let document: Value = response.json().await.unwrap();
        assert!(document["openapi"].as_str().unwrap().starts_with("3.1"));
        let expected = routes();
        assert!(expected.len() > 50, "{expected:?}");
        assert_eq!(operations(&document), expected);
        // Each operation documents its success and the JSON error body.
        for (method, path) in operations(&document) {
            let op = &document["paths"][&path][&method];
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses.keys().any(|s| s.starts_with('2')),
                "{method} {path} documents a success"
            );
            if path != "/health/live" && path != "/openapi.json" {
                let error = responses.iter().find(|(s, _)| s.starts_with('4') || s.starts_with('5'));
                let (_, error) = error.unwrap_or_else(|| panic!("{method} {path} documents errors"));
                let schema = &error["content"]["application/json"]["schema"]["$ref"];
                assert_eq!(schema, "#/components/schemas/ErrorBody", "{method} {path}");
            }
        }
        let schemas = document["components"]["schemas"].as_object().unwrap();
        for name in ["ErrorBody", "UserView", "OrgUserProfileView", "EmployerApplicationList",
                     "JobApplicationForm", "TalentProfileForm", "OrgUserProfileForm"] {
            assert!(schemas.contains_key(name), "schema {name}");
        }
    }

    async fn every_documented_route_is_served(backend) {
        let app = TestApp::spawn(backend).await;
        let document: Value = app
            .request(Method::GET, "/openapi.json")
            .send().await.unwrap().json().await.unwrap();
        for (method, path) in operations(&document) {
            let url = path.replace("{id}", "1");
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let response = app
                .request(method.clone(), &url)
                .json(&serde_json::json!({}))
                .send()
                .await
                .unwrap();
            let status = response.status();
            assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {url}");
            let body = response.text().await.unwrap();
            assert!(!body.contains("no such route"), "{method} {url}: {body}");
        }
        // And an unknown path is the fallback's 404.
        let unknown = app.request(Method::GET, "/no/such/path").send().await.unwrap();
        let body = assert_error(unknown, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(body["error"]["message"], "no such route");
    }
}

/// Operation ids are unique: a typed client generated from the document needs them so.
#[test]
fn operation_ids_are_unique() {
    let document = serde_json::to_value(careers_api::openapi::document()).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for (method, path) in operations(&document) {
        let id = document["paths"][&path][&method]["operationId"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(seen.insert(id.clone()), "{method} {path}: {id} twice");
    }
    assert!(
        seen.contains("get_admin_user_org_user_profiles_id"),
        "{seen:?}"
    );
}

/// Routes are registered only through `utoipa_axum::routes!`, which documents them: a plain
/// axum `.route(` would add an undocumented route. `metrics.rs` (the private metrics listener)
/// and `demo.rs` (a development-only page) are not the API's routes.
#[test]
fn no_route_is_registered_without_its_document() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("metrics.rs")
                && !path.ends_with("demo.rs")
            {
                let text = std::fs::read_to_string(&path).unwrap();
                for needle in [".route(", ".route_service(", ".nest_service("] {
                    assert!(!text.contains(needle), "{} uses {needle}", path.display());
                }
            }
        }
    }
}

/// Unsafe-method operations without a session: login and sign-up (no session, so no CSRF yet).
const PUBLIC_WRITES: &[(&str, &str)] = &[
    ("post", "/identities/sessions"),
    ("post", "/team/identities/admins/sessions"),
    ("post", "/identities/users"),
    ("post", "/identities/password_resets"),
    ("patch", "/identities/password_resets/current"),
    ("patch", "/identities/email_verifications/current"),
];

/// The public operations of the contract, and only they, say `security: []` (no requirement);
/// every other operation names its session (the marketplace's optionally, with `{}`).
#[test]
fn exactly_the_public_operations_declare_no_security() {
    let document = serde_json::to_value(careers_api::openapi::document()).unwrap();
    let mut public: Vec<(String, String)> = operations(&document)
        .into_iter()
        .filter(|(method, path)| {
            let security = &document["paths"][path][method]["security"];
            assert!(security.is_array(), "{method} {path} declares its security");
            security.as_array().unwrap().is_empty()
        })
        .collect();
    public.sort();
    let mut expected: Vec<(String, String)> = PUBLIC_WRITES
        .iter()
        .chain(&[
            ("get", "/health/live"),
            ("get", "/health/ready"),
            ("get", "/marketplace/org/companies/{slug}"),
            ("get", "/openapi.json"),
        ])
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    expected.sort();
    assert_eq!(public, expected);
    assert!(
        document["servers"][0]["url"].is_string(),
        "the document names its server"
    );
}

/// Every operation that requires a session documents 401; every unsafe-method one also
/// requires the CSRF header and documents 403. An optional session (`security((), ...)`, the
/// marketplace) is no requirement: an unusable cookie there is anonymous, not 401.
#[test]
fn every_session_operation_documents_401_and_every_unsafe_one_403() {
    let document = serde_json::to_value(careers_api::openapi::document()).unwrap();
    let mut checked = 0;
    for (method, path) in operations(&document) {
        let op = &document["paths"][&path][&method];
        let requirements = op["security"].as_array().cloned().unwrap_or_default();
        let optional = requirements
            .iter()
            .any(|r| r.as_object().is_some_and(|r| r.is_empty()));
        let required = !requirements.is_empty() && !optional;
        let unsafe_method = !matches!(method.as_str(), "get" | "head" | "options");
        let responses = op["responses"].as_object().unwrap();
        if !required {
            assert!(
                !unsafe_method || PUBLIC_WRITES.contains(&(method.as_str(), path.as_str())),
                "{method} {path}: an unsafe method without a session requirement"
            );
            continue;
        }
        checked += 1;
        assert!(
            responses.contains_key("401"),
            "{method} {path} documents 401"
        );
        if unsafe_method {
            assert!(
                responses.contains_key("403"),
                "{method} {path} documents 403"
            );
            assert!(
                requirements.iter().all(|r| r.get("csrf_token").is_some()),
                "{method} {path} requires the CSRF header"
            );
        }
    }
    assert!(checked > 0);
}
