//! Test data written straight through the entities (no HTTP), scenario builders on top of them,
//! and small request and JSON helpers shared by `areas`, `shapes` and `forms`.

use careers_api::areas::USER;
use careers_api::models::{careers, identities, org};
use chrono::{NaiveDate, Utc};
use reqwest::{Method, Response, StatusCode};
use sea_orm::{ActiveModelTrait, EntityTrait, Set};
use serde_json::Value;

use crate::helpers::{Creds, TestApp};

/// The applicant's name as `candidate` stores it (the employer sees only this of the user).
pub const CANDIDATE_FIRST: &str = "Cara";
pub const CANDIDATE_LAST: &str = "Candidate";

pub fn date(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

/// A user who never logs in: inserted directly, without the cost of hashing a password.
pub async fn plain_user(app: &TestApp, email: &str, first_name: &str, last_name: &str) -> i64 {
    let now = Utc::now();
    identities::user::entity::ActiveModel {
        country_id: Set(2),
        email: Set(email.to_lowercase()),
        password_digest: Set("not-a-digest".into()),
        first_name: Set(first_name.into()),
        last_name: Set(last_name.into()),
        phone_code: Set("+44".into()),
        mobile: Set("7700900999".into()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

pub async fn rename_user(app: &TestApp, user_id: i64, first_name: &str, last_name: &str) {
    identities::user::entity::ActiveModel {
        id: Set(user_id),
        first_name: Set(first_name.into()),
        last_name: Set(last_name.into()),
        ..Default::default()
    }
    .update(&*app.state.db)
    .await
    .unwrap();
}

/// A company named `name`, with a slug made unique by a counter.
pub async fn company(app: &TestApp, name: &str) -> i64 {
    static SLUGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = SLUGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let slug = format!("{}-f{n}", careers_api::forms::derive_slug(name));
    company_with(app, name, &slug, None).await
}

/// A company row with the given slug and website.
pub async fn company_with(app: &TestApp, name: &str, slug: &str, website: Option<&str>) -> i64 {
    let now = Utc::now();
    org::company::entity::ActiveModel {
        name: Set(name.into()),
        slug: Set(slug.into()),
        website: Set(website.map(Into::into)),
        suspended_at: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

/// An org profile with role `owner` (the role that may do everything).
pub async fn org_profile(app: &TestApp, user_id: i64, company_id: i64, title: &str) -> i64 {
    org_profile_as(app, user_id, company_id, title, "owner").await
}

pub async fn org_profile_as(
    app: &TestApp,
    user_id: i64,
    company_id: i64,
    title: &str,
    role: &str,
) -> i64 {
    let now = Utc::now();
    org::user_profile::entity::ActiveModel {
        identities_user_id: Set(user_id),
        company_id: Set(company_id),
        title: Set(title.into()),
        role: Set(role.into()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

pub async fn delete_org_profile(app: &TestApp, id: i64) {
    org::user_profile::entity::Entity::delete_by_id(id)
        .exec(&*app.state.db)
        .await
        .unwrap();
}

pub async fn talent_profile(app: &TestApp, user_id: i64, headline: &str) -> i64 {
    let now = Utc::now();
    careers::user_profile::entity::ActiveModel {
        identities_user_id: Set(user_id),
        headline: Set(headline.into()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

/// A certificate issued by CNCF on 2024-05-01.
pub async fn certificate(app: &TestApp, profile_id: i64, name: &str) -> i64 {
    let now = Utc::now();
    careers::certificate::entity::ActiveModel {
        careers_user_profile_id: Set(profile_id),
        name: Set(name.into()),
        issuer: Set(Some("CNCF".into())),
        issued_on: Set(Some(date("2024-05-01"))),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

/// An experience at Initech from 2020-01-01, still current.
pub async fn experience(app: &TestApp, profile_id: i64, job_title: &str) -> i64 {
    let now = Utc::now();
    careers::experience::entity::ActiveModel {
        careers_user_profile_id: Set(profile_id),
        job_title: Set(job_title.into()),
        company_name: Set(Some("Initech".into())),
        started_on: Set(Some(date("2020-01-01"))),
        ended_on: Set(None),
        description: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

pub async fn skill(app: &TestApp, profile_id: i64, name: &str) -> i64 {
    let now = Utc::now();
    careers::skill::entity::ActiveModel {
        careers_user_profile_id: Set(profile_id),
        name: Set(name.into()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

/// An on-site job in Berlin: `open` (published now) when `open`, else a `draft`.
pub async fn job(app: &TestApp, company_id: i64, title: &str, open: bool) -> i64 {
    let now = Utc::now();
    let company_name = org::company::entity::Entity::find_by_id(company_id)
        .one(&*app.state.db)
        .await
        .unwrap()
        .unwrap()
        .name;
    let description = format!("About the {title} role");
    let search = careers::job::search_text(title, &description, None);
    let id = careers::job::entity::ActiveModel {
        company_id: Set(company_id),
        title: Set(title.into()),
        description: Set(description.clone()),
        status: Set(if open { "open" } else { "draft" }.into()),
        department: Set(None),
        employment_type: Set(Some("full_time".into())),
        workplace_type: Set("on_site".into()),
        country_code: Set(Some("DE".into())),
        region: Set(None),
        locality: Set(Some("Berlin".into())),
        salary_min: Set(None),
        salary_max: Set(None),
        salary_currency: Set(None),
        salary_interval: Set(None),
        valid_through: Set(None),
        published_at: Set(open.then_some(now)),
        moderated_at: Set(None),
        search_title: Set(search.0),
        search_body: Set(search.1),
        search_company: Set(careers_api::forms::fold_text(&company_name)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id;
    careers::job_stage::write_stages(&*app.state.db, id, None, now)
        .await
        .unwrap();
    id
}

/// An active application with a cover letter, in its job's first stage.
pub async fn application(app: &TestApp, job_id: i64, profile_id: i64) -> i64 {
    let now = Utc::now();
    let job = careers::job::entity::Entity::find_by_id(job_id)
        .one(&*app.state.db)
        .await
        .unwrap()
        .expect("the job applied to");
    let stage = careers::job_application::first_stage(&*app.state.db, job_id)
        .await
        .unwrap();
    careers::job_application::entity::ActiveModel {
        careers_job_id: Set(job_id),
        company_id: Set(job.company_id),
        careers_user_profile_id: Set(profile_id),
        status: Set("active".into()),
        cover_letter: Set("I would love to work with you.".into()),
        created_at: Set(now),
        updated_at: Set(now),
        careers_job_stage_id: Set(stage),
        rejection_reason: Set(None),
        status_changed_at: Set(now),
        lock_version: Set(0),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

/// A logged-in user with an org profile ("Head of Hiring") at `company_id`.
pub async fn employer(app: &TestApp, email: &str, company_id: i64) -> (i64, Creds) {
    let (user_id, _, creds) = employer_with_profile(app, email, company_id).await;
    (user_id, creds)
}

/// As `employer`, also returning the org profile id: (user id, org profile id, credentials).
pub async fn employer_with_profile(
    app: &TestApp,
    email: &str,
    company_id: i64,
) -> (i64, i64, Creds) {
    let user_id = app.create_user(email).await;
    let profile_id = org_profile(app, user_id, company_id, "Head of Hiring").await;
    (user_id, profile_id, app.login(&USER, email).await)
}

/// A logged-in user named Cara Candidate with an empty talent profile:
/// (user id, talent profile id, credentials).
pub async fn candidate(app: &TestApp, email: &str) -> (i64, i64, Creds) {
    let user_id = app.create_user(email).await;
    rename_user(app, user_id, CANDIDATE_FIRST, CANDIDATE_LAST).await;
    let profile_id = talent_profile(app, user_id, "Systems programmer").await;
    (user_id, profile_id, app.login(&USER, email).await)
}

/// Gives a talent profile one certificate (CKA), one experience (Engineer), one skill (Rust).
pub async fn fill_profile(app: &TestApp, profile_id: i64) -> (i64, i64, i64) {
    (
        certificate(app, profile_id, "CKA").await,
        experience(app, profile_id, "Engineer").await,
        skill(app, profile_id, "Rust").await,
    )
}

/// A candidate who never logs in, with a filled talent profile: (user id, profile id).
pub async fn silent_candidate(app: &TestApp, email: &str) -> (i64, i64) {
    let user_id = plain_user(app, email, CANDIDATE_FIRST, CANDIDATE_LAST).await;
    let profile_id = talent_profile(app, user_id, "Systems programmer").await;
    fill_profile(app, profile_id).await;
    (user_id, profile_id)
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/// GET with the session's cookies.
pub async fn get(app: &TestApp, creds: &Creds, path: &str) -> Response {
    creds
        .with_cookies(app.request(Method::GET, path))
        .send()
        .await
        .unwrap()
}

/// GET without any cookie.
pub async fn get_anon(app: &TestApp, path: &str) -> Response {
    app.request(Method::GET, path).send().await.unwrap()
}

/// GET with a raw `Cookie` header.
pub async fn get_with_cookie(app: &TestApp, cookie: &str, path: &str) -> Response {
    app.request(Method::GET, path)
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
}

/// An unsafe request with the session's cookies and its CSRF header.
/// A `DELETE` with the CSRF header.
pub async fn delete(app: &TestApp, creds: &Creds, path: &str) -> Response {
    creds
        .with_csrf(app.request(Method::DELETE, path))
        .send()
        .await
        .unwrap()
}

/// A whole number a statement answers (`SELECT COUNT(*) ...`).
pub async fn count(app: &TestApp, sql: &str) -> i64 {
    crate::data_layer::scalar(app, sql).await.parse().unwrap()
}

pub async fn send(
    app: &TestApp,
    creds: &Creds,
    method: Method,
    path: &str,
    body: &Value,
) -> Response {
    creds
        .with_csrf(app.request(method, path))
        .json(body)
        .send()
        .await
        .unwrap()
}

pub async fn post(app: &TestApp, creds: &Creds, path: &str, body: &Value) -> Response {
    send(app, creds, Method::POST, path, body).await
}

pub async fn patch(app: &TestApp, creds: &Creds, path: &str, body: &Value) -> Response {
    send(app, creds, Method::PATCH, path, body).await
}

/// An unsafe request with the session's cookies but no `X-CSRF-Token`.
pub async fn send_without_csrf(
    app: &TestApp,
    creds: &Creds,
    method: Method,
    path: &str,
    body: &Value,
) -> Response {
    creds
        .with_cookies(app.request(method, path))
        .json(body)
        .send()
        .await
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

/// Asserts the status (showing the body when it differs) and returns the raw body text.
pub async fn text(response: Response, status: StatusCode) -> String {
    let url = response.url().path().to_string();
    let actual = response.status();
    let body = response.text().await.unwrap();
    assert_eq!(actual, status, "{url}: body {body}");
    body
}

/// Asserts the status (showing the body when it differs) and returns the JSON body.
pub async fn json(response: Response, status: StatusCode) -> Value {
    let body = text(response, status).await;
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("JSON body ({e}): {body}"))
}

pub async fn ok(response: Response) -> Value {
    json(response, StatusCode::OK).await
}

/// The contract's error body with this status and code; returns the body.
pub async fn expect_error(response: Response, status: StatusCode, code: &str) -> Value {
    let body = json(response, status).await;
    assert_eq!(body["error"]["code"], code, "body: {body}");
    assert!(body["error"]["message"].is_string(), "body: {body}");
    body
}

/// A 422 `validation_failed` whose `fields` are exactly `fields`, each a non-empty list of
/// messages; returns the body.
pub async fn expect_fields(response: Response, fields: &[&str]) -> Value {
    let body = expect_error(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    let map = body["error"]["fields"]
        .as_object()
        .unwrap_or_else(|| panic!("fields object: {body}"));
    let mut expected: Vec<&str> = fields.to_vec();
    expected.sort_unstable();
    assert_eq!(keys(&body["error"]["fields"]), expected, "body: {body}");
    for (field, messages) in map {
        let messages = messages
            .as_array()
            .unwrap_or_else(|| panic!("{field}: list of messages: {body}"));
        assert!(!messages.is_empty(), "{field}: {body}");
        assert!(messages.iter().all(Value::is_string), "{field}: {body}");
    }
    body
}

/// The sorted keys of a JSON object.
pub fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap_or_else(|| panic!("object expected: {value}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

/// The items of a JSON array.
pub fn items(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("array expected: {value}"))
}

/// The `id`s of a JSON array's items, in order.
pub fn ids(value: &Value) -> Vec<i64> {
    items(value)
        .iter()
        .map(|item| item["id"].as_i64().unwrap_or_else(|| panic!("id: {item}")))
        .collect()
}

/// The employer's list item of application `id`: the shape a `PATCH` of it answers with.
pub async fn application_item(app: &TestApp, boss: &Creds, id: i64) -> Value {
    let list = ok(get(app, boss, "/org-user/careers/job_applications?per_page=100").await).await;
    items(&list["careers_job_applications"])
        .iter()
        .find(|item| item["id"] == id)
        .unwrap_or_else(|| panic!("application {id} is listed: {list}"))
        .clone()
}

/// The ids of a job's stages, in order.
pub async fn stage_ids(app: &TestApp, boss: &Creds, job_id: i64) -> Vec<i64> {
    let job = ok(get(app, boss, &format!("/org-user/careers/jobs/{job_id}")).await).await;
    ids(&job["careers_jobs"]["careers_job_stages"])
}
