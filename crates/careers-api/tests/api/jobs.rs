//! Jobs (CONTRACT §15): the attributes and their validation, the status transitions and the
//! opening rules, `published_at`, `valid_through` expiry, the employer's and the team's routes,
//! the marketplace's list and detail (with its caching headers, §5) and the JSON-LD
//! `JobPosting`, and the migration from `published` to `status`.

use careers_api::models::{careers, org};
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use reqwest::{Method, Response, StatusCode};
use sea_orm::{ActiveModelTrait, ConnectionTrait, Set};
use sea_orm_migration::MigratorTrait;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::data_layer::scalar;
use crate::fixtures::*;
use crate::helpers::*;

const JOBS: &str = "/org-user/careers/jobs";
const TEAM_JOBS: &str = "/admin-user/careers/jobs";
const MARKETPLACE: &str = "/marketplace/careers/jobs";
const APPLY: &str = "/candidate/careers/job_applications";
const LD_JSON: &str = "application/ld+json";

use crate::shapes::{JOB_KEYS, employer_job_keys};

const STATUSES: [&str; 4] = ["draft", "open", "closed", "archived"];

/// The transitions of an employer's `PATCH` (the same status is no change).
fn may_become(from: &str, to: &str) -> bool {
    from == to
        || matches!(
            (from, to),
            ("draft", "open")
                | ("open", "closed")
                | ("closed", "open")
                | ("draft" | "open" | "closed", "archived")
                | ("archived", "draft")
        )
}

/// `fields` of `base` replaced or added by those of `extra`.
fn with(base: &Value, extra: &Value) -> Value {
    let mut merged = base.clone();
    for (key, value) in extra.as_object().unwrap() {
        merged[key] = value.clone();
    }
    merged
}

/// Every attribute set, valid, as a draft of `company`.
fn full_form(company: i64) -> Value {
    json!({"title": "Rust engineer", "description": "Build the platform.",
           "department": "Engineering", "employment_type": "full_time",
           "workplace_type": "on_site", "country_code": "DE", "region": "Bavaria",
           "locality": "Munich", "salary_min": 60_000, "salary_max": 80_000,
           "salary_currency": "EUR", "salary_interval": "year",
           "valid_through": "2099-12-31T23:59:59Z", "company": {"id": company}})
}

fn rfc3339(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn time_of(value: &Value) -> DateTime<Utc> {
    let text = value.as_str().unwrap_or_else(|| panic!("a time: {value}"));
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("RFC 3339 ({e}): {text}"))
        .to_utc()
}

fn job_path(id: i64) -> String {
    format!("{JOBS}/{id}")
}

/// Creates a job through the employer's `POST`: the job.
async fn create(app: &TestApp, boss: &Creds, form: &Value) -> Value {
    let body = json(post(app, boss, JOBS, form).await, StatusCode::CREATED).await;
    assert_eq!(keys(&body), ["careers_jobs"], "{body}");
    body["careers_jobs"].clone()
}

/// The employer's view of a job.
async fn read(app: &TestApp, boss: &Creds, id: i64) -> Value {
    let body = ok(get(app, boss, &job_path(id)).await).await;
    assert_eq!(keys(&body), ["careers_jobs"], "{body}");
    body["careers_jobs"].clone()
}

/// The employer's `PATCH`, 200: the job.
async fn change(app: &TestApp, boss: &Creds, id: i64, form: &Value) -> Value {
    let body = ok(patch(app, boss, &job_path(id), form).await).await;
    body["careers_jobs"].clone()
}

async fn stored_status(app: &TestApp, id: i64) -> String {
    scalar(
        app,
        &format!("SELECT status FROM careers_jobs WHERE id = {id}"),
    )
    .await
}

async fn count(app: &TestApp, condition: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM careers_jobs WHERE {condition}");
    scalar(app, &sql).await.parse().unwrap()
}

async fn set_status(app: &TestApp, id: i64, status: &str) {
    let sql = format!("UPDATE careers_jobs SET status = '{status}' WHERE id = {id}");
    app.state.db.execute_unprepared(&sql).await.unwrap();
}

/// Writes some columns of a job through its entity (timestamps in the backend's own format).
async fn store(app: &TestApp, id: i64, edit: impl FnOnce(&mut careers::job::entity::ActiveModel)) {
    let mut model = careers::job::entity::ActiveModel {
        id: Set(id),
        ..Default::default()
    };
    edit(&mut model);
    model.update(&*app.state.db).await.unwrap();
}

async fn suspend_company(app: &TestApp, id: i64) {
    org::company::entity::ActiveModel {
        id: Set(id),
        suspended_at: Set(Some(Utc::now())),
        ..Default::default()
    }
    .update(&*app.state.db)
    .await
    .unwrap();
}

/// The ids of a list, sorted.
async fn list_ids(app: &TestApp, creds: &Creds, path: &str) -> Vec<i64> {
    let body = ok(get(app, creds, path).await).await;
    let mut list = ids(&body["careers_jobs"]);
    list.sort_unstable();
    list
}

fn sorted(mut list: Vec<i64>) -> Vec<i64> {
    list.sort_unstable();
    list
}

async fn marketplace_ids(app: &TestApp) -> Vec<i64> {
    ids(&ok(get_anon(app, MARKETPLACE).await).await["careers_jobs"])
}

/// A marketplace request with these optional credentials and `Accept`.
async fn market(
    app: &TestApp,
    creds: Option<&Creds>,
    path: &str,
    accept: Option<&str>,
) -> Response {
    let mut request = app.request(Method::GET, path);
    if let Some(creds) = creds {
        request = creds.with_cookies(request);
    }
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    request.send().await.unwrap()
}

/// The lower-cased items of every `Vary` header.
fn vary(response: &Response) -> Vec<String> {
    response
        .headers()
        .get_all("vary")
        .iter()
        .flat_map(|v| v.to_str().unwrap().split(','))
        .map(|item| item.trim().to_ascii_lowercase())
        .collect()
}

fn cache_control(response: &Response) -> String {
    response
        .headers()
        .get_all("cache-control")
        .iter()
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `Vary: Accept, Cookie`; `Cache-Control: private, no-store` exactly when `identified`.
fn assert_marketplace_headers(response: &Response, identified: bool, what: &str) {
    let vary = vary(response);
    assert!(vary.iter().any(|v| v == "accept"), "{what}: Vary {vary:?}");
    assert!(vary.iter().any(|v| v == "cookie"), "{what}: Vary {vary:?}");
    let cache = cache_control(response);
    let items: Vec<&str> = cache.split(',').map(str::trim).collect();
    if identified {
        assert!(
            items.contains(&"private"),
            "{what}: Cache-Control {cache:?}"
        );
        assert!(
            items.contains(&"no-store"),
            "{what}: Cache-Control {cache:?}"
        );
    } else {
        assert!(
            !items.contains(&"private"),
            "{what}: Cache-Control {cache:?}"
        );
    }
}

fn content_type(response: &Response) -> String {
    response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

fn application_form(job_id: i64, profile_id: i64) -> Value {
    json!({"careers_job": {"id": job_id},
           "careers_user_profile": {"id": profile_id, "careers_experience": []},
           "cover_letter": "Hello"})
}

/// The JSON-LD of a marketplace job: asserts 200 and its media type.
async fn job_posting(app: &TestApp, id: i64) -> Value {
    let response = market(app, None, &format!("{MARKETPLACE}/{id}"), Some(LD_JSON)).await;
    let media = content_type(&response);
    assert!(media.starts_with(LD_JSON), "Content-Type {media}");
    assert_marketplace_headers(&response, false, "JSON-LD");
    json(response, StatusCode::OK).await
}

backend_tests! {
    async fn each_attribute_is_validated_on_its_own_field(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let existing = create(&app, &boss, &json!({"title": "Kept", "company": {"id": acme}})).await;
        let existing_id = existing["id"].as_i64().unwrap();
        let base = json!({"title": "Job", "company": {"id": acme}});
        let salary = |extra: Value| with(&json!({"salary_currency": "EUR", "salary_interval": "year"}), &extra);
        let cases: Vec<(Value, &str)> = vec![
            (json!({"title": ""}), "title"),
            (json!({"title": "x".repeat(201)}), "title"),
            (json!({"description": "x".repeat(20_001)}), "description"),
            (json!({"department": "x".repeat(101)}), "department"),
            (json!({"region": "x".repeat(101)}), "region"),
            (json!({"locality": "x".repeat(101)}), "locality"),
            (json!({"employment_type": "freelance"}), "employment_type"),
            (json!({"workplace_type": "moon"}), "workplace_type"),
            (json!({"country_code": "de"}), "country_code"),
            (json!({"country_code": "XX"}), "country_code"),
            (json!({"country_code": "DEU"}), "country_code"),
            (salary(json!({"salary_min": -1})), "salary_min"),
            (salary(json!({"salary_max": -1})), "salary_max"),
            (salary(json!({"salary_min": 10, "salary_max": 9})), "salary_max"),
            (json!({"salary_min": 10, "salary_interval": "year"}), "salary_currency"),
            (json!({"salary_max": 10, "salary_currency": "EUR"}), "salary_interval"),
            (json!({"salary_min": 1, "salary_currency": "EURO", "salary_interval": "year"}), "salary_currency"),
            (json!({"salary_min": 1, "salary_currency": "XYZ", "salary_interval": "year"}), "salary_currency"),
            (json!({"salary_min": 1, "salary_currency": "EUR", "salary_interval": "fortnight"}), "salary_interval"),
            (json!({"valid_through": "tomorrow"}), "valid_through"),
            (json!({"status": "paused"}), "status"),
        ];
        for (extra, field) in &cases {
            let response = post(&app, &boss, JOBS, &with(&base, extra)).await;
            let body = expect_fields(response, &[*field]).await;
            assert!(body.to_string().len() < 2_000, "{field}: the message does not echo the value");
            let response = patch(&app, &boss, &job_path(existing_id), extra).await;
            expect_fields(response, &[*field]).await;
        }
        // A value of the wrong JSON type is a malformed request, not a field error.
        let wrong = json!({"salary_min": "many", "salary_currency": "EUR", "salary_interval": "year"});
        let response = post(&app, &boss, JOBS, &with(&base, &wrong)).await;
        expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
        let response = patch(&app, &boss, &job_path(existing_id), &wrong).await;
        expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
        // Nothing was stored by any of them.
        assert_eq!(list_ids(&app, &boss, JOBS).await, [existing_id]);
        assert_eq!(read(&app, &boss, existing_id).await, existing);

        // Valid values, at the limits, come back as sent.
        let form = full_form(acme);
        let created = create(&app, &boss, &form).await;
        let id = created["id"].as_i64().unwrap();
        for (key, value) in form.as_object().unwrap() {
            if key != "company" {
                assert_eq!(&created[key], value, "{key}: {created}");
            }
        }
        assert_eq!(created["company"], json!({"id": acme, "name": "Acme"}));
        assert_eq!(created["status"], "draft", "the default status");
        assert_eq!(created["published_at"], Value::Null);
        assert_eq!(read(&app, &boss, id).await, created);
        let limits = json!({"title": "t".repeat(200), "description": "d".repeat(20_000),
                            "department": "p".repeat(100), "region": "r".repeat(100),
                            "locality": "l".repeat(100), "country_code": "US",
                            "salary_min": 0, "salary_max": 0, "salary_currency": "JPY"});
        let changed = change(&app, &boss, id, &limits).await;
        for (key, value) in limits.as_object().unwrap() {
            assert_eq!(&changed[key], value, "{key}");
        }
        for kind in ["full_time", "part_time", "contractor", "temporary", "intern", "volunteer",
                     "per_diem", "other"] {
            let changed = change(&app, &boss, id, &json!({"employment_type": kind})).await;
            assert_eq!(changed["employment_type"], kind);
        }
        for kind in ["on_site", "hybrid", "remote"] {
            let changed = change(&app, &boss, id, &json!({"workplace_type": kind})).await;
            assert_eq!(changed["workplace_type"], kind);
        }
        for interval in ["hour", "day", "week", "month", "year"] {
            let changed = change(&app, &boss, id, &json!({"salary_interval": interval})).await;
            assert_eq!(changed["salary_interval"], interval);
        }
        // `null` clears one nullable attribute; what is absent is kept.
        let before = read(&app, &boss, id).await;
        let changed = change(&app, &boss, id, &json!({"department": null})).await;
        assert_eq!(changed["department"], Value::Null);
        for key in JOB_KEYS {
            if !matches!(key, "department" | "updated_at") {
                assert_eq!(changed[key], before[key], "{key} kept");
            }
        }
        let nulls = json!({"employment_type": null, "country_code": null, "region": null,
                           "locality": null, "salary_min": null, "salary_max": null,
                           "salary_currency": null, "salary_interval": null,
                           "valid_through": null});
        let changed = change(&app, &boss, id, &nulls).await;
        for key in nulls.as_object().unwrap().keys() {
            assert_eq!(changed[key], Value::Null, "{key} cleared: {changed}");
        }
        assert_eq!(changed["title"], before["title"]);
        assert_eq!(changed["description"], before["description"]);
        assert_eq!(changed["workplace_type"], before["workplace_type"]);
        assert_eq!(read(&app, &boss, id).await, changed, "as stored");
    }

    async fn the_status_transitions_cell_by_cell(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        for from in STATUSES {
            for to in STATUSES {
                let title = format!("{from} to {to}");
                let id = job(&app, acme, &title, false).await;
                set_status(&app, id, from).await;
                let form = json!({"status": to, "title": "Changed"});
                let response = patch(&app, &boss, &job_path(id), &form).await;
                if may_become(from, to) {
                    let body = ok(response).await;
                    assert_eq!(body["careers_jobs"]["status"], to, "{title}: {body}");
                    assert_eq!(stored_status(&app, id).await, to, "{title}");
                } else {
                    expect_fields(response, &["status"]).await;
                    assert_eq!(stored_status(&app, id).await, from, "{title}: nothing stored");
                    let kept = format!("id = {id} AND title = '{title}'");
                    assert_eq!(count(&app, &kept).await, 1, "{title}: nothing stored");
                }
            }
        }
        // A POST creates a draft or an open job, nothing else.
        let base = json!({"title": "New", "description": "About it", "country_code": "DE",
                          "company": {"id": acme}});
        let draft = create(&app, &boss, &with(&base, &json!({"status": "draft"}))).await;
        assert_eq!(draft["status"], "draft");
        assert_eq!(draft["published_at"], Value::Null);
        let open = create(&app, &boss, &with(&base, &json!({"status": "open"}))).await;
        assert_eq!(open["status"], "open");
        assert_eq!(time_of(&open["published_at"]), app.state.now(), "published when created open");
        let open_id = open["id"].as_i64().unwrap();
        assert_eq!(stored_status(&app, open_id).await, "open");
        let before = count(&app, "1 = 1").await;
        for status in ["closed", "archived"] {
            let response = post(&app, &boss, JOBS, &with(&base, &json!({"status": status}))).await;
            expect_fields(response, &["status"]).await;
        }
        assert_eq!(count(&app, "1 = 1").await, before, "nothing created");
    }

    async fn opening_needs_a_description_a_place_and_a_future_valid_through(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let opening = json!({"status": "open"});
        let draft = |extra: Value| with(&json!({"title": "Draft", "company": {"id": acme}}), &extra);

        // No description (nor blank).
        for description in ["", "   "] {
            let form = draft(json!({"description": description, "country_code": "DE"}));
            let id = create(&app, &boss, &form).await["id"].as_i64().unwrap();
            expect_fields(patch(&app, &boss, &job_path(id), &opening).await, &["description"]).await;
            assert_eq!(stored_status(&app, id).await, "draft");
        }
        let form = draft(json!({"country_code": "DE", "status": "open"}));
        expect_fields(post(&app, &boss, JOBS, &form).await, &["description"]).await;

        // No place: neither a country nor remote.
        for workplace in ["on_site", "hybrid"] {
            let form = draft(json!({"description": "About", "workplace_type": workplace}));
            let id = create(&app, &boss, &form).await["id"].as_i64().unwrap();
            expect_fields(patch(&app, &boss, &job_path(id), &opening).await, &["country_code"]).await;
            assert_eq!(stored_status(&app, id).await, "draft");
            let form = with(&form, &json!({"status": "open"}));
            expect_fields(post(&app, &boss, JOBS, &form).await, &["country_code"]).await;
        }

        // A valid_through that has come (now is not in the future).
        let now = app.state.now();
        for past in [now - Duration::seconds(1), now] {
            let form = draft(json!({"description": "About", "country_code": "DE",
                                    "valid_through": rfc3339(past)}));
            let id = create(&app, &boss, &form).await["id"].as_i64().unwrap();
            expect_fields(patch(&app, &boss, &job_path(id), &opening).await, &["valid_through"]).await;
            assert_eq!(stored_status(&app, id).await, "draft");
            let form = with(&form, &json!({"status": "open"}));
            expect_fields(post(&app, &boss, JOBS, &form).await, &["valid_through"]).await;
        }
        let future = rfc3339(now + Duration::seconds(1));
        let form = draft(json!({"description": "About", "country_code": "DE", "valid_through": future}));
        let id = create(&app, &boss, &form).await["id"].as_i64().unwrap();
        assert_eq!(change(&app, &boss, id, &opening).await["status"], "open");

        // A remote job without a country opens (applicants anywhere).
        let form = draft(json!({"description": "About", "workplace_type": "remote"}));
        let id = create(&app, &boss, &form).await["id"].as_i64().unwrap();
        let opened = change(&app, &boss, id, &opening).await;
        assert_eq!(opened["status"], "open");
        assert_eq!(opened["country_code"], Value::Null);
        let form = with(&form, &json!({"status": "open"}));
        assert_eq!(create(&app, &boss, &form).await["status"], "open");
    }

    async fn published_at_is_the_first_opening_and_never_reset(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let form = json!({"title": "Rust engineer", "description": "About", "country_code": "DE",
                          "company": {"id": acme}});
        let id = create(&app, &boss, &form).await["id"].as_i64().unwrap();
        app.clock.advance(5);
        let opened_at = app.state.now();
        let opened = change(&app, &boss, id, &json!({"status": "open"})).await;
        assert_eq!(time_of(&opened["published_at"]), opened_at, "{opened}");
        for status in ["closed", "open", "archived", "draft", "open", "closed"] {
            app.clock.advance(5);
            let job = change(&app, &boss, id, &json!({"status": status})).await;
            assert_eq!(job["status"], status);
            assert_eq!(time_of(&job["published_at"]), opened_at, "after {status}: {job}");
            let job = read(&app, &boss, id).await;
            assert_eq!(time_of(&job["published_at"]), opened_at, "after {status}, as stored");
        }
        // An edit that keeps the job open does not publish it again either.
        change(&app, &boss, id, &json!({"status": "open"})).await;
        app.clock.advance(5);
        let job = change(&app, &boss, id, &json!({"title": "Senior Rust engineer"})).await;
        assert_eq!(time_of(&job["published_at"]), opened_at);
    }

    async fn an_open_job_past_valid_through_reads_closed_everywhere(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let until = app.state.now() + Duration::seconds(60);
        let form = |title: &str, valid_through: Value| {
            json!({"title": title, "description": "About", "country_code": "DE",
                   "status": "open", "valid_through": valid_through, "company": {"id": acme}})
        };
        let expiring = create(&app, &boss, &form("Expiring", json!(rfc3339(until)))).await;
        let expiring = expiring["id"].as_i64().unwrap();
        let reopened = create(&app, &boss, &form("Reopened", json!(rfc3339(until)))).await;
        let reopened = reopened["id"].as_i64().unwrap();
        let forever = create(&app, &boss, &form("Forever", Value::Null)).await["id"].as_i64().unwrap();
        let later = rfc3339(until + Duration::hours(1));
        let later = create(&app, &boss, &form("Later", json!(later))).await["id"].as_i64().unwrap();

        app.clock.advance(59);
        assert_eq!(read(&app, &boss, expiring).await["status"], "open", "a second before");
        assert!(marketplace_ids(&app).await.contains(&expiring));

        app.clock.advance(1);
        // From valid_through on, the employer reads it closed, in the record and the list.
        let job = read(&app, &boss, expiring).await;
        assert_eq!(job["status"], "closed", "{job}");
        let listed = ok(get(&app, &boss, JOBS).await).await;
        let item = items(&listed["careers_jobs"]).iter().find(|j| j["id"] == expiring).unwrap().clone();
        assert_eq!(item["status"], "closed");
        assert_eq!(list_ids(&app, &boss, &format!("{JOBS}?status=closed")).await, sorted(vec![expiring, reopened]));
        assert_eq!(list_ids(&app, &boss, &format!("{JOBS}?status=open")).await, sorted(vec![forever, later]));
        assert_eq!(list_ids(&app, &admin, &format!("{TEAM_JOBS}?status=closed")).await, sorted(vec![expiring, reopened]));
        assert_eq!(list_ids(&app, &admin, &format!("{TEAM_JOBS}?status=open")).await, sorted(vec![forever, later]));
        // The marketplace no longer shows it, and nobody can apply to it.
        let shown = marketplace_ids(&app).await;
        assert!(!shown.contains(&expiring) && !shown.contains(&reopened), "{shown:?}");
        assert_eq!(sorted(shown), sorted(vec![forever, later]));
        let path = format!("{MARKETPLACE}/{expiring}");
        expect_error(get_anon(&app, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        expect_error(get(&app, &cara, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        let response = post(&app, &cara, APPLY, &application_form(expiring, profile_id)).await;
        expect_fields(response, &["careers_job.id"]).await;
        let applied = "SELECT COUNT(*) FROM careers_job_applications";
        assert_eq!(scalar(&app, applied).await, "0");
        // It is judged closed: reopening needs a valid_through in the future.
        let response = patch(&app, &boss, &job_path(reopened), &json!({"status": "open"})).await;
        expect_fields(response, &["valid_through"]).await;
        let future = rfc3339(app.state.now() + Duration::days(30));
        let job = change(&app, &boss, reopened, &json!({"status": "open", "valid_through": future})).await;
        assert_eq!(job["status"], "open");
        assert!(marketplace_ids(&app).await.contains(&reopened));

        // The stored status is still open until the closer runs; then it is closed.
        assert_eq!(stored_status(&app, expiring).await, "open");
        let closed = careers::job::close_expired(&app.state.db, app.state.now()).await.unwrap();
        assert_eq!(closed, 1);
        assert_eq!(stored_status(&app, expiring).await, "closed");
        for id in [reopened, forever, later] {
            assert_eq!(stored_status(&app, id).await, "open", "job {id} untouched");
        }
        let again = careers::job::close_expired(&app.state.db, app.state.now()).await.unwrap();
        assert_eq!(again, 0);
        let job = read(&app, &boss, expiring).await;
        assert_eq!(job["status"], "closed");
        assert_eq!(job["valid_through"], json!(rfc3339(until)));
    }

    async fn the_employer_reads_and_filters_its_own_jobs(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let created = create(&app, &boss, &full_form(acme)).await;
        let draft = created["id"].as_i64().unwrap();
        let body = ok(get(&app, &boss, &job_path(draft)).await).await;
        assert_eq!(keys(&body), ["careers_jobs"], "{body}");
        assert_eq!(keys(&body["careers_jobs"]), employer_job_keys(), "{body}");
        assert_eq!(body["careers_jobs"], created);
        assert_eq!(body["careers_jobs"]["company"], json!({"id": acme, "name": "Acme"}));
        let listed = ok(get(&app, &boss, JOBS).await).await;
        assert_eq!(keys(&listed["careers_jobs"][0]), JOB_KEYS, "{listed}");

        // Another company's job, or none: 404, and it cannot be changed.
        let foreign = job(&app, globex, "Go developer", true).await;
        for id in [foreign, 999_999] {
            let response = get(&app, &boss, &job_path(id)).await;
            expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
            let response = patch(&app, &boss, &job_path(id), &json!({"title": "Taken"})).await;
            expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        }
        assert_eq!(count(&app, &format!("id = {foreign} AND title = 'Go developer'")).await, 1);

        let open = job(&app, acme, "Open", true).await;
        let closed = job(&app, acme, "Closed", true).await;
        set_status(&app, closed, "closed").await;
        let archived = job(&app, acme, "Archived", false).await;
        set_status(&app, archived, "archived").await;
        let path = |status: &str| format!("{JOBS}?status={status}");
        assert_eq!(list_ids(&app, &boss, JOBS).await, sorted(vec![draft, open, closed, archived]));
        assert_eq!(list_ids(&app, &boss, &path("draft")).await, [draft]);
        assert_eq!(list_ids(&app, &boss, &path("open")).await, [open], "not Globex's");
        assert_eq!(list_ids(&app, &boss, &path("closed")).await, [closed]);
        assert_eq!(list_ids(&app, &boss, &path("archived")).await, [archived]);
        let filtered = ok(get(&app, &boss, &path("open")).await).await;
        assert_eq!(filtered["meta"]["total"], 1, "{filtered}");
        for bad in ["paused", "published"] {
            let response = get(&app, &boss, &path(bad)).await;
            expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
        }
    }

    async fn the_team_lists_archives_and_releases_jobs(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme Robotics").await;
        let globex = company(&app, "Globex").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let rust = job(&app, acme, "Rust Engineer", true).await;
        let office = job(&app, acme, "Office manager", false).await;
        let go = job(&app, globex, "Go developer", true).await;

        // The list: every company's jobs, by title or company name, status and company.
        assert_eq!(list_ids(&app, &admin, TEAM_JOBS).await, sorted(vec![rust, office, go]));
        let listed = ok(get(&app, &admin, TEAM_JOBS).await).await;
        let item = items(&listed["careers_jobs"]).iter().find(|j| j["id"] == go).unwrap().clone();
        assert_eq!(keys(&item), JOB_KEYS, "{item}");
        assert_eq!(item["company"], json!({"id": globex, "name": "Globex"}));
        for (query, expected) in [
            ("q=rust".to_owned(), vec![rust]),
            ("q=ENGINEER".to_owned(), vec![rust]),
            ("q=gLoBeX".to_owned(), vec![go]),
            ("q=robotics".to_owned(), vec![rust, office]),
            ("q=nothing-like-it".to_owned(), vec![]),
            ("status=open".to_owned(), vec![rust, go]),
            ("status=draft".to_owned(), vec![office]),
            (format!("company_id={globex}"), vec![go]),
            (format!("status=open&company_id={acme}"), vec![rust]),
            ("q=developer&status=draft".to_owned(), vec![]),
        ] {
            let ids = list_ids(&app, &admin, &format!("{TEAM_JOBS}?{query}")).await;
            assert_eq!(ids, sorted(expected), "?{query}");
        }
        let response = get(&app, &admin, &format!("{TEAM_JOBS}?status=paused")).await;
        expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;

        // Archiving: any job; the employer cannot change its status, only other fields.
        let team_path = |id: i64| format!("{TEAM_JOBS}/{id}");
        let body = ok(patch(&app, &admin, &team_path(rust), &json!({"status": "archived"})).await).await;
        assert_eq!(body["careers_jobs"]["status"], "archived", "{body}");
        assert_eq!(keys(&body["careers_jobs"]), JOB_KEYS);
        assert_eq!(stored_status(&app, rust).await, "archived");
        assert!(!marketplace_ids(&app).await.contains(&rust));
        for status in ["draft", "open", "closed"] {
            let response = patch(&app, &boss, &job_path(rust), &json!({"status": status})).await;
            expect_fields(response, &["status"]).await;
            assert_eq!(stored_status(&app, rust).await, "archived", "employer's {status}");
        }
        let job = change(&app, &boss, rust, &json!({"title": "Rust Engineer II"})).await;
        assert_eq!(job["title"], "Rust Engineer II");
        assert_eq!(job["status"], "archived");

        // Only `archived`, or `draft` for a job the team archived.
        for status in ["open", "closed"] {
            let response = patch(&app, &admin, &team_path(rust), &json!({"status": status})).await;
            expect_fields(response, &["status"]).await;
        }
        expect_fields(patch(&app, &admin, &team_path(rust), &json!({})).await, &["status"]).await;
        assert_eq!(stored_status(&app, rust).await, "archived");
        let response = patch(&app, &admin, &team_path(go), &json!({"status": "draft"})).await;
        expect_fields(response, &["status"]).await;
        assert_eq!(stored_status(&app, go).await, "open");
        change(&app, &boss, office, &json!({"status": "archived"})).await;
        let response = patch(&app, &admin, &team_path(office), &json!({"status": "draft"})).await;
        expect_fields(response, &["status"]).await;
        assert_eq!(stored_status(&app, office).await, "archived", "the employer archived it");
        assert_eq!(change(&app, &boss, office, &json!({"status": "draft"})).await["status"], "draft");

        // Released: a draft the employer may open again.
        let body = ok(patch(&app, &admin, &team_path(rust), &json!({"status": "draft"})).await).await;
        assert_eq!(body["careers_jobs"]["status"], "draft");
        assert_eq!(change(&app, &boss, rust, &json!({"status": "open"})).await["status"], "open");
        assert!(marketplace_ids(&app).await.contains(&rust));
        // Released once: a second release is refused.
        let response = patch(&app, &admin, &team_path(rust), &json!({"status": "draft"})).await;
        expect_fields(response, &["status"]).await;

        let response = patch(&app, &admin, &team_path(999_999), &json!({"status": "archived"})).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found").await;

        // A user session is not the team's.
        expect_error(get(&app, &boss, TEAM_JOBS).await, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        let response = patch(&app, &boss, &team_path(go), &json!({"status": "archived"})).await;
        expect_error(response, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        expect_error(get_anon(&app, TEAM_JOBS).await, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        assert_eq!(stored_status(&app, go).await, "open");
    }

    async fn the_marketplace_shows_open_jobs_newest_first_with_caching_headers(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, cara) = app.user_session("cara@example.com").await;
        let oldest_id = job(&app, acme, "Oldest id, newest", true).await;
        let tie_low = job(&app, acme, "Tie, lower id", true).await;
        let tie_high = job(&app, acme, "Tie, higher id", true).await;
        let draft = job(&app, acme, "Draft", false).await;
        let closed = job(&app, acme, "Closed", true).await;
        set_status(&app, closed, "closed").await;
        let archived = job(&app, acme, "Archived", true).await;
        set_status(&app, archived, "archived").await;
        let expired = job(&app, acme, "Expired", true).await;
        let past = app.state.now() - Duration::seconds(1);
        store(&app, expired, |m| m.valid_through = Set(Some(past))).await;
        let suspended = job(&app, globex, "Suspended company's", true).await;
        suspend_company(&app, globex).await;
        let day = |n: i64| app.state.now() - Duration::days(10 - n);
        store(&app, oldest_id, |m| m.published_at = Set(Some(day(2)))).await;
        store(&app, tie_low, |m| m.published_at = Set(Some(day(1)))).await;
        store(&app, tie_high, |m| m.published_at = Set(Some(day(1)))).await;

        let expected = vec![oldest_id, tie_high, tie_low];
        let response = market(&app, None, MARKETPLACE, None).await;
        assert_marketplace_headers(&response, false, "anonymous list");
        let body = ok(response).await;
        assert_eq!(ids(&body["careers_jobs"]), expected, "{body}");
        assert_eq!(body["meta"]["total"], 3, "{body}");
        let response = market(&app, Some(&cara), MARKETPLACE, None).await;
        assert_marketplace_headers(&response, true, "identified list");
        assert_eq!(ids(&ok(response).await["careers_jobs"]), expected);
        let response = app.request(Method::GET, MARKETPLACE)
            .header("cookie", "user_jwt_access=garbage")
            .send().await.unwrap();
        assert_marketplace_headers(&response, false, "garbage cookie");
        ok(response).await;
        let page = ok(get_anon(&app, &format!("{MARKETPLACE}?per_page=2&page=2")).await).await;
        assert_eq!(ids(&page["careers_jobs"]), [tie_low], "{page}");

        for id in &expected {
            let path = format!("{MARKETPLACE}/{id}");
            let response = market(&app, None, &path, None).await;
            assert_marketplace_headers(&response, false, "anonymous detail");
            let body = ok(response).await;
            assert_eq!(body["careers_jobs"]["id"], *id);
            assert_eq!(body["careers_jobs"]["status"], "open");
            let response = market(&app, Some(&cara), &path, None).await;
            assert_marketplace_headers(&response, true, "identified detail");
            ok(response).await;
            let response = market(&app, Some(&cara), &path, Some(LD_JSON)).await;
            assert_marketplace_headers(&response, true, "identified JSON-LD");
            ok(response).await;
        }
        for id in [draft, closed, archived, expired, suspended] {
            let path = format!("{MARKETPLACE}/{id}");
            expect_error(get_anon(&app, &path).await, StatusCode::NOT_FOUND, "not_found").await;
            expect_error(get(&app, &cara, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        }
    }

    async fn a_marketplace_job_is_a_json_ld_job_posting(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company_with(&app, "Acme GmbH", "acme-gmbh", Some("https://acme.example")).await;
        let plain = company(&app, "Plain").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let open = |extra: Value| with(&full_form(acme), &with(&json!({"status": "open"}), &extra));
        let onsite = create(&app, &boss, &open(json!({}))).await;
        let remote = create(&app, &boss, &open(json!({"workplace_type": "remote", "country_code": "PT",
                                 "employment_type": "part_time", "salary_min": 30,
                                 "salary_max": 45, "salary_interval": "hour",
                                 "valid_through": null}))).await;
        let anywhere = create(&app, &boss, &open(json!({"workplace_type": "remote", "country_code": null,
                                   "employment_type": "contractor", "salary_min": null,
                                   "salary_max": null, "salary_currency": null,
                                   "salary_interval": null, "valid_through": null}))).await;
        let date = |job: &Value| time_of(&job["published_at"]).date_naive().format("%Y-%m-%d").to_string();
        let organization = json!({"@type": "Organization", "name": "Acme GmbH",
                                  "sameAs": "https://acme.example"});
        let identifier = |job: &Value| json!({"@type": "PropertyValue", "name": "Acme GmbH", "value": job["id"]});

        let id = onsite["id"].as_i64().unwrap();
        let mut posting = job_posting(&app, id).await;
        let valid_through = posting.as_object_mut().unwrap().remove("validThrough");
        assert!(
            valid_through == Some(json!("2099-12-31T23:59:59Z")) || valid_through == Some(json!("2099-12-31")),
            "validThrough: {valid_through:?}"
        );
        assert_eq!(posting, json!({
            "@context": "https://schema.org",
            "@type": "JobPosting",
            "title": "Rust engineer",
            "description": "Build the platform.",
            "datePosted": date(&onsite),
            "employmentType": "FULL_TIME",
            "hiringOrganization": organization,
            "jobLocation": {"@type": "Place", "address": {
                "@type": "PostalAddress", "addressLocality": "Munich",
                "addressRegion": "Bavaria", "addressCountry": "DE"}},
            "baseSalary": {"@type": "MonetaryAmount", "currency": "EUR", "value": {
                "@type": "QuantitativeValue", "minValue": 60_000, "maxValue": 80_000,
                "unitText": "YEAR"}},
            "directApply": true,
            "identifier": identifier(&onsite),
        }));

        let posting = job_posting(&app, remote["id"].as_i64().unwrap()).await;
        assert_eq!(posting, json!({
            "@context": "https://schema.org",
            "@type": "JobPosting",
            "title": "Rust engineer",
            "description": "Build the platform.",
            "datePosted": date(&remote),
            "employmentType": "PART_TIME",
            "hiringOrganization": organization,
            "jobLocationType": "TELECOMMUTE",
            "applicantLocationRequirements": {"@type": "Country", "name": "PT"},
            "baseSalary": {"@type": "MonetaryAmount", "currency": "EUR", "value": {
                "@type": "QuantitativeValue", "minValue": 30, "maxValue": 45,
                "unitText": "HOUR"}},
            "directApply": true,
            "identifier": identifier(&remote),
        }));

        let posting = job_posting(&app, anywhere["id"].as_i64().unwrap()).await;
        assert_eq!(posting, json!({
            "@context": "https://schema.org",
            "@type": "JobPosting",
            "title": "Rust engineer",
            "description": "Build the platform.",
            "datePosted": date(&anywhere),
            "employmentType": "CONTRACTOR",
            "hiringOrganization": organization,
            "jobLocationType": "TELECOMMUTE",
            "directApply": true,
            "identifier": identifier(&anywhere),
        }));

        // A company without a website: no sameAs.
        let plain_job = job(&app, plain, "Courier", true).await;
        let posting = job_posting(&app, plain_job).await;
        assert_eq!(posting["hiringOrganization"], json!({"@type": "Organization", "name": "Plain"}));
        assert_eq!(posting["identifier"], json!({"@type": "PropertyValue", "name": "Plain", "value": plain_job}));

        // Any other Accept: the JSON of the marketplace.
        let path = format!("{MARKETPLACE}/{id}");
        for accept in [None, Some("application/json"), Some("*/*")] {
            let response = market(&app, None, &path, accept).await;
            let media = content_type(&response);
            assert!(media.starts_with("application/json"), "{accept:?}: Content-Type {media}");
            let body = ok(response).await;
            assert_eq!(keys(&body), ["careers_jobs"], "{accept:?}: {body}");
            assert_eq!(body["careers_jobs"]["id"], id);
        }

        // A draft is not in the marketplace, either way.
        let draft = create(&app, &boss, &full_form(acme)).await["id"].as_i64().unwrap();
        let path = format!("{MARKETPLACE}/{draft}");
        for accept in [None, Some(LD_JSON)] {
            let response = market(&app, None, &path, accept).await;
            expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        }
    }

    async fn the_structured_jobs_migration_maps_published_to_status(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let db = &*app.state.db;
        careers_api::db::Migrator::down(db, Some(8)).await.unwrap();
        let insert = |title: &str, published: &str| {
            format!(
                "INSERT INTO careers_jobs (company_id, title, description, published, created_at, updated_at) \
                 VALUES ({acme}, '{title}', 'About it', {published}, \
                 '2024-05-01 10:00:00+00:00', '2024-05-02 11:00:00+00:00')"
            )
        };
        db.execute_unprepared(&insert("Published", "TRUE")).await.unwrap();
        db.execute_unprepared(&insert("Unpublished", "FALSE")).await.unwrap();
        careers_api::db::Migrator::up(db, None).await.unwrap();

        let id_of = |title: &str| format!("SELECT id FROM careers_jobs WHERE title = '{title}'");
        let published: i64 = scalar(&app, &id_of("Published")).await.parse().unwrap();
        let unpublished: i64 = scalar(&app, &id_of("Unpublished")).await.parse().unwrap();
        assert_eq!(stored_status(&app, published).await, "open");
        assert_eq!(count(&app, &format!("id = {published} AND published_at = created_at")).await, 1);
        assert_eq!(stored_status(&app, unpublished).await, "draft");
        assert_eq!(count(&app, &format!("id = {unpublished} AND published_at IS NULL")).await, 1);
        assert_eq!(count(&app, "workplace_type = 'on_site' AND moderated_at IS NULL").await, 2);

        // Read back through the API.
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job = read(&app, &boss, published).await;
        assert_eq!(job["status"], "open");
        assert_eq!(time_of(&job["published_at"]), time_of(&job["created_at"]));
        assert_eq!(time_of(&job["created_at"]), time_of(&json!("2024-05-01T10:00:00Z")));
        let job = read(&app, &boss, unpublished).await;
        assert_eq!(job["status"], "draft");
        assert_eq!(job["published_at"], Value::Null);
        assert!(!keys(&job).contains(&"published"), "{job}");
        assert_eq!(marketplace_ids(&app).await, [published]);
    }
}
