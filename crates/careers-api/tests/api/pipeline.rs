//! An application in the hiring pipeline (CONTRACT §16): the employer's `PATCH` (stage moves,
//! the status transitions cell by cell, the rejection reason) under optimistic locking
//! (`lock_version`: a stale one is 409 and changes nothing; of two recruiters at once one wins),
//! and the candidate's withdrawal.

use reqwest::StatusCode;
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::data_layer::scalar;
use crate::fixtures::*;
use crate::helpers::*;

const STATUSES: [&str; 4] = ["active", "rejected", "hired", "withdrawn"];

fn employer_path(id: i64) -> String {
    format!("/org-user/careers/job_applications/{id}")
}

fn candidate_path(id: i64) -> String {
    format!("/candidate/careers/job_applications/{id}")
}

/// The contract's employer transitions (a different status).
fn may_become(from: &str, to: &str) -> bool {
    matches!(
        (from, to),
        ("active", "rejected") | ("active", "hired") | ("rejected", "active")
    )
}

/// A company with an employer, an open job and a candidate's active application to it:
/// (employer, candidate, job id, application id).
async fn applied(app: &TestApp) -> (Creds, Creds, i64, i64) {
    let acme = company(app, "Acme").await;
    let (_, boss) = employer(app, "boss@acme.example", acme).await;
    let job_id = job(app, acme, "Rust engineer", true).await;
    let (_, profile_id, cara) = candidate(app, "cara@example.com").await;
    let id = application(app, job_id, profile_id).await;
    (boss, cara, job_id, id)
}

backend_tests! {
    async fn the_employers_status_transitions_are_the_contracts_cell_by_cell(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let (_, profile_id, _) = candidate(&app, "cara@example.com").await;
        for from in STATUSES {
            for to in STATUSES.into_iter().filter(|to| *to != from) {
                let job_id = job(&app, acme, &format!("{from} to {to}"), true).await;
                let id = application(&app, job_id, profile_id).await;
                let reason = if from == "rejected" { "'other'" } else { "NULL" };
                app.state.db.execute_unprepared(&format!(
                    "UPDATE careers_job_applications SET status = '{from}', rejection_reason = {reason} \
                     WHERE id = {id}")).await.unwrap();
                let mut form = json!({"lock_version": 0, "status": to});
                if to == "rejected" {
                    form["rejection_reason"] = json!("not_a_fit");
                }
                let response = patch(&app, &boss, &employer_path(id), &form).await;
                let stored = format!("SELECT status FROM careers_job_applications WHERE id = {id}");
                if may_become(from, to) {
                    let body = ok(response).await;
                    let item = &body["careers_job_applications"];
                    assert_eq!(item["status"], to, "{from} -> {to}: {body}");
                    assert_eq!(item["lock_version"], 1, "{from} -> {to}");
                    assert_eq!(scalar(&app, &stored).await, to);
                } else {
                    expect_fields(response, &["status"]).await;
                    assert_eq!(scalar(&app, &stored).await, from, "{from} -> {to} changes nothing");
                }
            }
        }
    }

    async fn rejecting_needs_a_reason_and_reopening_clears_it(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, _, _, id) = applied(&app).await;
        let path = employer_path(id);
        let cases = [
            json!({"lock_version": 0, "status": "rejected"}),
            json!({"lock_version": 0, "status": "rejected", "rejection_reason": "rude"}),
            json!({"lock_version": 0, "rejection_reason": "other"}),
            json!({"lock_version": 0, "status": "hired", "rejection_reason": "other"}),
        ];
        for form in cases {
            expect_fields(patch(&app, &boss, &path, &form).await, &["rejection_reason"]).await;
        }
        expect_fields(patch(&app, &boss, &path, &json!({"lock_version": 0, "status": "paused"})).await,
                      &["status"]).await;
        expect_fields(patch(&app, &boss, &path, &json!({"status": "hired"})).await, &["lock_version"]).await;
        let before = application_item(&app, &boss, id).await;
        assert_eq!(before["lock_version"], 0, "refused forms change nothing");

        let form = json!({"lock_version": 0, "status": "rejected", "rejection_reason": "position_filled"});
        let rejected = ok(patch(&app, &boss, &path, &form).await).await["careers_job_applications"].clone();
        assert_eq!(rejected["status"], "rejected");
        assert_eq!(rejected["rejection_reason"], "position_filled");
        assert_eq!(rejected["lock_version"], 1);
        assert_eq!(rejected, application_item(&app, &boss, id).await, "the answer is what is stored");
        let reopened = ok(patch(&app, &boss, &path, &json!({"lock_version": 1, "status": "active"})).await).await;
        let reopened = &reopened["careers_job_applications"];
        assert_eq!(reopened["status"], "active");
        assert_eq!(reopened["rejection_reason"], Value::Null);
        assert_eq!(reopened["lock_version"], 2);
    }

    async fn a_stale_lock_version_is_409_and_changes_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, _, job_id, id) = applied(&app).await;
        let stages = stage_ids(&app, &boss, job_id).await;
        let path = employer_path(id);
        let moved = ok(patch(&app, &boss, &path, &json!({"lock_version": 0, "careers_job_stage": {"id": stages[1]}})).await).await;
        assert_eq!(moved["careers_job_applications"]["careers_job_stage"], json!({"id": stages[1]}));
        assert_eq!(moved["careers_job_applications"]["lock_version"], 1);
        assert_eq!(moved["careers_job_applications"]["status_changed_at"],
                   application_item(&app, &boss, id).await["created_at"], "a move is no status change");
        // The other recruiter still holds version 0.
        let stale = json!({"lock_version": 0, "careers_job_stage": {"id": stages[2]}});
        expect_error(patch(&app, &boss, &path, &stale).await, StatusCode::CONFLICT, "conflict").await;
        let stale = json!({"lock_version": 0, "status": "hired"});
        expect_error(patch(&app, &boss, &path, &stale).await, StatusCode::CONFLICT, "conflict").await;
        let after = application_item(&app, &boss, id).await;
        assert_eq!(after["careers_job_stage"], json!({"id": stages[1]}));
        assert_eq!((after["status"].clone(), after["lock_version"].clone()), (json!("active"), json!(1)));
        // A change that changes nothing keeps the version.
        let same = json!({"lock_version": 1, "careers_job_stage": {"id": stages[1]}, "status": "active"});
        assert_eq!(ok(patch(&app, &boss, &path, &same).await).await["careers_job_applications"]["lock_version"], 1);
    }

    async fn of_two_recruiters_moving_one_application_at_once_one_wins(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, _, job_id, id) = applied(&app).await;
        let acme_job = scalar(&app, &format!("SELECT company_id FROM careers_jobs WHERE id = {job_id}")).await;
        let (_, colleague) = employer(&app, "colleague@acme.example", acme_job.parse().unwrap()).await;
        let stages = stage_ids(&app, &boss, job_id).await;
        let path = employer_path(id);
        let (a, b) = (json!({"lock_version": 0, "careers_job_stage": {"id": stages[1]}}),
                      json!({"lock_version": 0, "careers_job_stage": {"id": stages[2]}}));
        let (first, second) = tokio::join!(patch(&app, &boss, &path, &a), patch(&app, &colleague, &path, &b));
        let mut statuses = [first.status(), second.status()];
        statuses.sort();
        assert_eq!(statuses, [StatusCode::OK, StatusCode::CONFLICT]);
        let after = application_item(&app, &boss, id).await;
        assert_eq!(after["lock_version"], 1, "one change, once");
        assert!([json!({"id": stages[1]}), json!({"id": stages[2]})].contains(&after["careers_job_stage"]));
    }

    /// A stage destroyed while applications are moved into it (issue 46's fault): in every
    /// round exactly one side wins. Either the move lands and the destroy is 422 on the stage's
    /// `id` (it holds an application), or the destroy lands and the move is 422 on
    /// `careers_job_stage.id` (read, or refused by the foreign key, after the stage was gone).
    async fn a_stage_destroyed_while_an_application_moves_into_it_has_one_winner(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, _, job_id, id) = applied(&app).await;
        let path = employer_path(id);
        let job_path = format!("/org-user/careers/jobs/{job_id}");
        for round in 0..8 {
            // A fresh stage to fight over, and the application back in the first one.
            let added = ok(patch(&app, &boss, &job_path, &json!({"careers_job_stages": [
                {"name": format!("Contested {round}"), "position": 100 + round}]})).await).await;
            let stages = &added["careers_jobs"]["careers_job_stages"];
            let contested = items(stages).iter()
                .find(|s| s["name"] == format!("Contested {round}")).unwrap()["id"].as_i64().unwrap();
            let version = application_item(&app, &boss, id).await["lock_version"].as_i64().unwrap();
            let move_in = json!({"lock_version": version, "careers_job_stage": {"id": contested}});
            let destroy = json!({"careers_job_stages": [{"id": contested, "_destroy": true}]});
            let (moved, destroyed) = tokio::join!(patch(&app, &boss, &path, &move_in),
                                                  patch(&app, &boss, &job_path, &destroy));
            let (moved_status, destroyed_status) = (moved.status(), destroyed.status());
            let remains = count(&app, &format!("SELECT COUNT(*) FROM careers_job_stages WHERE id = {contested}")).await;
            let holds = count(&app, &format!("SELECT COUNT(*) FROM careers_job_applications \
                                              WHERE id = {id} AND careers_job_stage_id = {contested}")).await;
            match (moved_status, destroyed_status) {
                (StatusCode::OK, StatusCode::UNPROCESSABLE_ENTITY) => {
                    expect_fields(destroyed, &["careers_job_stages[0].id"]).await;
                    assert_eq!((remains, holds), (1, 1), "round {round}: the move won");
                    // Back to the first stage for the next round.
                    let first = stage_ids(&app, &boss, job_id).await[0];
                    ok(patch(&app, &boss, &path, &json!({"lock_version": version + 1,
                        "careers_job_stage": {"id": first}})).await).await;
                }
                (StatusCode::UNPROCESSABLE_ENTITY, StatusCode::OK) => {
                    expect_fields(moved, &["careers_job_stage.id"]).await;
                    assert_eq!((remains, holds), (0, 0), "round {round}: the destroy won");
                }
                other => panic!("round {round}: {other:?}"),
            }
        }
    }

    async fn stage_moves_stay_within_the_job_and_only_while_active(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, _, job_id, id) = applied(&app).await;
        let company_id = scalar(&app, &format!("SELECT company_id FROM careers_jobs WHERE id = {job_id}")).await;
        let other_job = job(&app, company_id.parse().unwrap(), "Go engineer", true).await;
        let foreign = stage_ids(&app, &boss, other_job).await[1];
        let path = employer_path(id);
        for stage in [foreign, 999_999] {
            let form = json!({"lock_version": 0, "careers_job_stage": {"id": stage}});
            expect_fields(patch(&app, &boss, &path, &form).await, &["careers_job_stage.id"]).await;
        }
        let form = json!({"lock_version": 0, "status": "rejected", "rejection_reason": "not_a_fit"});
        ok(patch(&app, &boss, &path, &form).await).await;
        let stages = stage_ids(&app, &boss, job_id).await;
        let form = json!({"lock_version": 1, "careers_job_stage": {"id": stages[3]}});
        expect_fields(patch(&app, &boss, &path, &form).await, &["careers_job_stage.id"]).await;
        assert_eq!(application_item(&app, &boss, id).await["careers_job_stage"], json!({"id": stages[0]}));
    }

    async fn the_employers_list_filters_by_status_and_stage(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, _, job_id, first) = applied(&app).await;
        let (_, profile_id, _) = candidate(&app, "olga@example.com").await;
        let second = application(&app, job_id, profile_id).await;
        let stages = stage_ids(&app, &boss, job_id).await;
        let form = json!({"lock_version": 0, "careers_job_stage": {"id": stages[2]}});
        ok(patch(&app, &boss, &employer_path(second), &form).await).await;
        let form = json!({"lock_version": 0, "status": "rejected", "rejection_reason": "other"});
        ok(patch(&app, &boss, &employer_path(first), &form).await).await;
        let ids = |body: Value| -> (Vec<i64>, Value) {
            let ids = body["careers_job_applications"].as_array().unwrap().iter()
                .map(|a| a["id"].as_i64().unwrap()).collect();
            (ids, body["meta"]["total"].clone())
        };
        let list = "/org-user/careers/job_applications";
        let cases = [
            (String::new(), vec![first, second]),
            ("?status=rejected".to_owned(), vec![first]),
            ("?status=active".to_owned(), vec![second]),
            ("?status=hired".to_owned(), vec![]),
            (format!("?careers_job_stage_id={}", stages[2]), vec![second]),
            (format!("?careers_job_stage_id={}&status=rejected", stages[2]), vec![]),
            (format!("?careers_job_id={job_id}&careers_job_stage_id={}&status=rejected", stages[0]), vec![first]),
        ];
        for (query, expected) in cases {
            let (found, total) = ids(ok(get(&app, &boss, &format!("{list}{query}")).await).await);
            assert_eq!(found, expected, "{query}");
            assert_eq!(total, json!(expected.len()), "{query}");
        }
        let response = get(&app, &boss, &format!("{list}?status=paused")).await;
        expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
    }

    async fn another_companys_application_cannot_be_changed(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, _, id) = applied(&app).await;
        let globex = company(&app, "Globex").await;
        let (_, other) = employer(&app, "boss@globex.example", globex).await;
        let response = patch(&app, &other, &employer_path(id), &json!({"lock_version": 0, "status": "hired"})).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(scalar(&app, &format!("SELECT status FROM careers_job_applications WHERE id = {id}")).await, "active");
    }

    async fn the_candidate_withdraws_only_their_own_active_application(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, cara, _, id) = applied(&app).await;
        let (_, _, other) = candidate(&app, "olga@example.com").await;
        let withdraw = json!({"status": "withdrawn"});
        expect_error(patch(&app, &other, &candidate_path(id), &withdraw).await, StatusCode::NOT_FOUND, "not_found").await;
        expect_fields(patch(&app, &cara, &candidate_path(id), &json!({"status": "hired"})).await, &["status"]).await;
        expect_fields(patch(&app, &cara, &candidate_path(id), &json!({})).await, &["status"]).await;

        let body = ok(patch(&app, &cara, &candidate_path(id), &withdraw).await).await;
        let item = &body["careers_job_applications"];
        assert_eq!(item["status"], "withdrawn");
        assert_eq!(keys(item), ["careers_job", "cover_letter", "created_at", "id", "status",
                                "status_changed_at", "updated_at"], "no stage, reason or version");
        let seen = application_item(&app, &boss, id).await;
        assert_eq!((seen["status"].clone(), seen["lock_version"].clone()), (json!("withdrawn"), json!(1)));
        // Final: neither side changes it again.
        expect_fields(patch(&app, &cara, &candidate_path(id), &withdraw).await, &["status"]).await;
        let reopen = json!({"lock_version": 1, "status": "active"});
        expect_fields(patch(&app, &boss, &employer_path(id), &reopen).await, &["status"]).await;
    }
}
