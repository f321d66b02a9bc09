//! A job's stages (CONTRACT §16): the four defaults of a new job, the job's forms taking
//! `careers_job_stages` as nested items (specification §4.5), the rules judged on the form's
//! final state with each error on the item's path, the nested stages in the employer's views,
//! and the migration giving every existing job the defaults.

use reqwest::StatusCode;
use sea_orm::ConnectionTrait;
use sea_orm_migration::MigratorTrait;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::data_layer::scalar;
use crate::fixtures::*;
use crate::helpers::*;

const JOBS: &str = "/org-user/careers/jobs";

fn path(id: i64) -> String {
    format!("{JOBS}/{id}")
}

/// The stages of a job's answer as `(name, position)`, in the answer's order.
fn stages(job: &Value) -> Vec<(String, i64)> {
    job["careers_job_stages"]
        .as_array()
        .unwrap_or_else(|| panic!("careers_job_stages: {job}"))
        .iter()
        .map(|s| {
            assert_eq!(keys(s), ["id", "name", "position"], "{s}");
            (
                s["name"].as_str().unwrap().to_owned(),
                s["position"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn named(pairs: &[(&str, i64)]) -> Vec<(String, i64)> {
    pairs.iter().map(|(n, p)| (n.to_string(), *p)).collect()
}

/// The id of the job's stage called `name`.
fn stage_id(job: &Value, name: &str) -> i64 {
    job["careers_job_stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {job}"))["id"]
        .as_i64()
        .unwrap()
}

/// A job created through the employer's `POST` without stages: the answer's job.
async fn new_job(app: &TestApp, boss: &Creds, company: i64, title: &str) -> Value {
    let form = json!({"title": title, "company": {"id": company}});
    json(post(app, boss, JOBS, &form).await, StatusCode::CREATED).await["careers_jobs"].clone()
}

const DEFAULTS: [(&str, i64); 4] = [
    ("Applied", 1),
    ("Screening", 2),
    ("Interview", 3),
    ("Offer", 4),
];

backend_tests! {
    async fn a_new_job_gets_the_four_default_stages_nested_in_the_employers_views(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let form = json!({"title": "Rust engineer", "company": {"id": acme}});
        let created = json(post(&app, &boss, JOBS, &form).await, StatusCode::CREATED).await;
        let job = &created["careers_jobs"];
        assert_eq!(stages(job), named(&DEFAULTS), "{created}");
        let id = job["id"].as_i64().unwrap();
        let read = ok(get(&app, &boss, &path(id)).await).await;
        assert_eq!(read["careers_jobs"], *job, "the detail nests the same stages");
        let stored = scalar(&app, &format!("SELECT COUNT(*) FROM careers_job_stages WHERE careers_job_id = {id}")).await;
        assert_eq!(stored, "4");
        // A PATCH without the key keeps the stages.
        let patched = ok(patch(&app, &boss, &path(id), &json!({"title": "Renamed"})).await).await;
        assert_eq!(patched["careers_jobs"]["careers_job_stages"], job["careers_job_stages"]);
    }

    async fn a_job_created_with_stages_has_exactly_those_in_position_order(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let form = json!({"title": "Designer", "company": {"id": acme}, "careers_job_stages": [
            {"name": "Portfolio review", "position": 20},
            {"name": "Phone screen", "position": 10},
            {"name": "Offer", "position": 30},
        ]});
        let created = json(post(&app, &boss, JOBS, &form).await, StatusCode::CREATED).await;
        assert_eq!(stages(&created["careers_jobs"]),
                   named(&[("Phone screen", 10), ("Portfolio review", 20), ("Offer", 30)]));
    }

    async fn nested_items_rename_move_add_and_destroy_stages(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job = new_job(&app, &boss, acme, "Rust engineer").await;
        let id = job["id"].as_i64().unwrap();
        let screening = stage_id(&job, "Screening");
        let items = json!({"careers_job_stages": [
            {"id": screening, "name": "Phone screen"},
            {"id": stage_id(&job, "Offer"), "position": 9},
            {"id": stage_id(&job, "Interview"), "_destroy": true},
            {"name": "Take-home task", "position": 3},
            {"_destroy": true},
        ]});
        let body = ok(patch(&app, &boss, &path(id), &items).await).await;
        let after = &body["careers_jobs"];
        assert_eq!(stages(after),
                   named(&[("Applied", 1), ("Phone screen", 2), ("Take-home task", 3), ("Offer", 9)]));
        assert_eq!(stage_id(after, "Phone screen"), screening, "a renamed stage keeps its id");
        let stored = scalar(&app, &format!("SELECT COUNT(*) FROM careers_job_stages WHERE careers_job_id = {id}")).await;
        assert_eq!(stored, "4", "the destroyed stage is gone");
    }

    async fn two_stages_may_swap_names_and_positions_in_one_form(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job = new_job(&app, &boss, acme, "Rust engineer").await;
        let id = job["id"].as_i64().unwrap();
        let (applied, screening) = (stage_id(&job, "Applied"), stage_id(&job, "Screening"));
        let swap = json!({"careers_job_stages": [
            {"id": applied, "name": "Screening", "position": 2},
            {"id": screening, "name": "Applied", "position": 1},
        ]});
        let body = ok(patch(&app, &boss, &path(id), &swap).await).await;
        let after = &body["careers_jobs"];
        assert_eq!(stages(after), named(&DEFAULTS));
        assert_eq!(stage_id(after, "Applied"), screening);
        assert_eq!(stage_id(after, "Screening"), applied);
    }

    async fn stage_rules_are_judged_on_the_final_state_and_reported_on_the_item(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job = new_job(&app, &boss, acme, "Rust engineer").await;
        let id = job["id"].as_i64().unwrap();
        let other = new_job(&app, &boss, acme, "Other").await;
        let all: Vec<Value> = ["Applied", "Screening", "Interview", "Offer"]
            .iter()
            .map(|n| json!({"id": stage_id(&job, n), "_destroy": true}))
            .collect();
        let cases: Vec<(Value, &str)> = vec![
            (json!([{"position": 5}]), "careers_job_stages[0].name"),
            (json!([{"name": "Hired"}]), "careers_job_stages[0].position"),
            (json!([{"name": "", "position": 5}]), "careers_job_stages[0].name"),
            (json!([{"name": "x".repeat(61), "position": 5}]), "careers_job_stages[0].name"),
            (json!([{"name": "Hired", "position": 0}]), "careers_job_stages[0].position"),
            (json!([{"name": "Hired", "position": -1}]), "careers_job_stages[0].position"),
            (json!([{"name": "interview", "position": 5}]), "careers_job_stages[0].name"),
            (json!([{"name": "Hired", "position": 2}]), "careers_job_stages[0].position"),
            (json!([{"name": "Hired", "position": 7}, {"name": "Hired", "position": 8}]), "careers_job_stages[1].name"),
            (json!([{"id": stage_id(&job, "Offer"), "name": "Applied"}]), "careers_job_stages[0].name"),
            (json!([{"id": 999_999, "name": "Ghost"}]), "careers_job_stages[0].id"),
            (json!([{"id": stage_id(&other, "Offer"), "name": "Stolen"}]), "careers_job_stages[0].id"),
            (Value::Array(all), "careers_job_stages"),
            // 4 kept and 47 added: one more than a job may have.
            (Value::Array((1..=47).map(|n| json!({"name": format!("S{n}"), "position": n + 10})).collect()),
             "careers_job_stages"),
        ];
        for (items, field) in cases {
            let response = patch(&app, &boss, &path(id), &json!({"careers_job_stages": items})).await;
            expect_fields(response, &[field]).await;
        }
        // Nothing changed, nor on the other job.
        let read = ok(get(&app, &boss, &path(id)).await).await;
        assert_eq!(read["careers_jobs"]["careers_job_stages"], job["careers_job_stages"]);
        let read = ok(get(&app, &boss, &path(other["id"].as_i64().unwrap())).await).await;
        assert_eq!(stages(&read["careers_jobs"]), named(&DEFAULTS));
        // A POST is judged the same way, and creates nothing.
        let before = scalar(&app, "SELECT COUNT(*) FROM careers_jobs").await;
        let bad = json!({"title": "Bad", "company": {"id": acme}, "careers_job_stages": [
            {"name": "One", "position": 1}, {"name": "Two", "position": 1}]});
        expect_fields(post(&app, &boss, JOBS, &bad).await, &["careers_job_stages[1].position"]).await;
        let empty = json!({"title": "Bad", "company": {"id": acme}, "careers_job_stages": []});
        expect_fields(post(&app, &boss, JOBS, &empty).await, &["careers_job_stages"]).await;
        assert_eq!(scalar(&app, "SELECT COUNT(*) FROM careers_jobs").await, before);
        // Fifty stages are allowed.
        let added: Vec<Value> = (1..=46).map(|n| json!({"name": format!("S{n}"), "position": n + 10})).collect();
        let body = ok(patch(&app, &boss, &path(id), &json!({"careers_job_stages": added})).await).await;
        assert_eq!(stages(&body["careers_jobs"]).len(), 50);
    }

    async fn a_stage_that_holds_an_application_cannot_be_destroyed(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, _) = candidate(&app, "cara@example.com").await;
        application(&app, job_id, profile_id).await;
        let job = ok(get(&app, &boss, &path(job_id)).await).await["careers_jobs"].clone();
        let applied = stage_id(&job, "Applied");
        let destroy = |id: i64| json!({"careers_job_stages": [{"id": id, "_destroy": true}]});
        expect_fields(patch(&app, &boss, &path(job_id), &destroy(applied)).await,
                      &["careers_job_stages[0].id"]).await;
        // An empty stage goes.
        let body = ok(patch(&app, &boss, &path(job_id), &destroy(stage_id(&job, "Offer"))).await).await;
        assert_eq!(stages(&body["careers_jobs"]), named(&DEFAULTS[..3]));
        // The database refuses it too (the foreign key), whatever writes.
        let delete = format!("DELETE FROM careers_job_stages WHERE id = {applied}");
        assert!(app.state.db.execute_unprepared(&delete).await.is_err());
    }

    async fn the_pipeline_migration_makes_submitted_applications_active_in_the_first_stage(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, _) = candidate(&app, "cara@example.com").await;
        let id = application(&app, job_id, profile_id).await;
        let db = &*app.state.db;
        careers_api::db::Migrator::down(db, Some(4)).await.unwrap();
        let status = format!("SELECT status FROM careers_job_applications WHERE id = {id}");
        assert_eq!(scalar(&app, &status).await, "submitted", "down restores §5's status");
        careers_api::db::Migrator::up(db, None).await.unwrap();
        assert_eq!(scalar(&app, &status).await, "active");
        let first = format!("SELECT id FROM careers_job_stages WHERE careers_job_id = {job_id} AND position = 1");
        let stage = format!("SELECT careers_job_stage_id FROM careers_job_applications WHERE id = {id}");
        assert_eq!(scalar(&app, &stage).await, scalar(&app, &first).await);
        let filled = format!("SELECT COUNT(*) FROM careers_job_applications \
                              WHERE id = {id} AND status_changed_at = created_at AND lock_version = 0");
        assert_eq!(scalar(&app, &filled).await, "1");
    }

    async fn the_stages_migration_gives_every_job_the_defaults(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let first = job(&app, acme, "Rust engineer", true).await;
        let second = job(&app, acme, "Go engineer", false).await;
        let db = &*app.state.db;
        careers_api::db::Migrator::down(db, Some(5)).await.unwrap();
        careers_api::db::Migrator::up(db, None).await.unwrap();
        for id in [first, second] {
            let count = format!("SELECT COUNT(*) FROM careers_job_stages WHERE careers_job_id = {id}");
            assert_eq!(scalar(&app, &count).await, "4", "job {id}");
            for (name, position) in DEFAULTS {
                let sql = format!("SELECT name FROM careers_job_stages \
                                   WHERE careers_job_id = {id} AND position = {position}");
                assert_eq!(scalar(&app, &sql).await, name, "job {id}");
            }
        }
    }
}
