//! What happens around an application (CONTRACT §16–17): the employer's notes (any member
//! writes and reads them, only the author deletes one, the form's limits, refused forms write
//! nothing, the application's `lock_version` does not move), the timeline of its events (every
//! kind, who did it, oldest first, written in the change's transaction: a 409 or 422 writes
//! none, one `PATCH` of stage and status writes two), what another company and the candidate
//! never see, the candidate's message when a decision is made (`notify_candidate`, never the
//! rejection's reason), and a deleted author's notes and events kept without their user.

use reqwest::StatusCode;
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::data_layer::scalar;
use crate::fixtures::*;
use crate::helpers::*;
use crate::shapes::CANDIDATE_APPLICATION_KEYS;
use crate::smtp_sink::SmtpSink;

const NOTE_KEYS: [&str; 5] = ["body", "created_at", "id", "identities_user", "rating"];
const EVENT_KEYS: [&str; 6] = ["created_at", "from", "id", "identities_user", "kind", "to"];
const NOTES_TABLE: &str = "SELECT COUNT(*) FROM careers_job_application_notes";
const EVENTS_TABLE: &str = "SELECT COUNT(*) FROM careers_job_application_events";

fn employer_path(id: i64) -> String {
    format!("/org-user/careers/job_applications/{id}")
}

fn notes_path(id: i64) -> String {
    format!("/org-user/careers/job_applications/{id}/notes")
}

fn note_path(id: i64, note_id: i64) -> String {
    format!("/org-user/careers/job_applications/{id}/notes/{note_id}")
}

fn events_path(id: i64) -> String {
    format!("/org-user/careers/job_applications/{id}/events")
}

/// `identities_user` as the views carry it.
fn brief(id: i64, first_name: &str, last_name: &str) -> Value {
    json!({"id": id, "first_name": first_name, "last_name": last_name})
}

/// Posts a note and returns the created note (asserting 201).
async fn add_note(app: &TestApp, creds: &Creds, id: i64, form: &Value) -> Value {
    let body = json(
        post(app, creds, &notes_path(id), form).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(keys(&body), ["careers_job_application_notes"], "{body}");
    body["careers_job_application_notes"].clone()
}

/// The whole timeline of application `id` (asserting 200 and the list's shape).
async fn events(app: &TestApp, boss: &Creds, id: i64) -> Vec<Value> {
    let body = ok(get(app, boss, &format!("{}?per_page=100", events_path(id))).await).await;
    assert_eq!(
        keys(&body),
        ["careers_job_application_events", "meta"],
        "{body}"
    );
    let list = items(&body["careers_job_application_events"]).clone();
    assert_eq!(body["meta"]["total"], json!(list.len()), "{body}");
    for event in &list {
        assert_eq!(keys(event), EVENT_KEYS, "{event}");
    }
    list
}

/// An event's `(kind, from, to, identities_user)`.
fn summary(event: &Value) -> (Value, Value, Value, Value) {
    (
        event["kind"].clone(),
        event["from"].clone(),
        event["to"].clone(),
        event["identities_user"].clone(),
    )
}

fn event(kind: &str, from: Value, to: Value, user: Value) -> (Value, Value, Value, Value) {
    (json!(kind), from, to, user)
}

async fn events_of(app: &TestApp, id: i64) -> i64 {
    count(
        app,
        &format!("{EVENTS_TABLE} WHERE careers_job_application_id = {id}"),
    )
    .await
}

/// A company with an employer (Ada Lovelace), an open job and Cara Candidate's active
/// application to it (written directly: no `applied` event): (company id, employer's user id,
/// employer, candidate, job id, application id).
async fn applied(app: &TestApp) -> (i64, i64, Creds, Creds, i64, i64) {
    let acme = company(app, "Acme").await;
    let (boss_id, boss) = employer(app, "boss@acme.example", acme).await;
    let job_id = job(app, acme, "Rust engineer", true).await;
    let (_, profile_id, cara) = candidate(app, "cara@example.com").await;
    let id = application(app, job_id, profile_id).await;
    (acme, boss_id, boss, cara, job_id, id)
}

/// A logged-in colleague named Max Member with role `role` at `company_id`: (user id, creds).
async fn colleague(app: &TestApp, email: &str, company_id: i64, role: &str) -> (i64, Creds) {
    let user_id = app.create_user(email).await;
    rename_user(app, user_id, "Max", "Member").await;
    org_profile_as(app, user_id, company_id, "Recruiter", role).await;
    (user_id, app.login(&careers_api::areas::USER, email).await)
}

backend_tests! {
    async fn a_note_is_201_with_its_author_and_every_role_reads_them_newest_first(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, boss_id, boss, _, _, id) = applied(&app).await;
        let (max_id, max) = colleague(&app, "max@acme.example", acme, "member").await;

        let first = add_note(&app, &boss, id, &json!({"body": "Strong Rust background.", "rating": "strong_yes"})).await;
        assert_eq!(keys(&first), NOTE_KEYS, "{first}");
        assert!(first["id"].is_i64(), "{first}");
        assert_eq!(first["body"], "Strong Rust background.");
        assert_eq!(first["rating"], "strong_yes");
        assert_eq!(first["identities_user"], brief(boss_id, "Ada", "Lovelace"), "the caller is the author");
        let at = first["created_at"].as_str().expect("created_at");
        assert!(chrono::DateTime::parse_from_rfc3339(at).is_ok(), "{at}");

        app.clock.advance(60);
        // The least role of the company writes one too, without a rating.
        let second = add_note(&app, &max, id, &json!({"body": "Asked about remote work."})).await;
        assert_eq!(second["rating"], Value::Null);
        assert_eq!(second["identities_user"], brief(max_id, "Max", "Member"));
        assert_ne!(first["id"], second["id"]);

        for reader in [&boss, &max] {
            let body = ok(get(&app, reader, &notes_path(id)).await).await;
            assert_eq!(keys(&body), ["careers_job_application_notes", "meta"], "{body}");
            assert_eq!(body["careers_job_application_notes"], json!([second, first]), "newest first, as created");
            assert_eq!(body["meta"], json!({"page": 1, "per_page": 25, "total": 2}));
        }
        let page = ok(get(&app, &boss, &format!("{}?per_page=1&page=2", notes_path(id))).await).await;
        assert_eq!(ids(&page["careers_job_application_notes"]), [first["id"].as_i64().unwrap()]);
        assert_eq!(page["meta"], json!({"page": 2, "per_page": 1, "total": 2}));
    }

    async fn a_notes_body_and_rating_are_validated_and_refused_forms_write_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss, _, _, id) = applied(&app).await;
        let path = notes_path(id);
        let cases = [
            (json!({"body": "x".repeat(5001)}), "body"),
            (json!({}), "body"),
            (json!({"rating": "yes"}), "body"),
            (json!({"body": ""}), "body"),
            (json!({"body": null}), "body"),
            (json!({"body": "Fine", "rating": "maybe"}), "rating"),
            (json!({"body": "Fine", "rating": "Yes"}), "rating"),
            (json!({"body": "Fine", "rating": ""}), "rating"),
        ];
        for (form, field) in cases {
            expect_fields(post(&app, &boss, &path, &form).await, &[field]).await;
        }
        expect_fields(post(&app, &boss, &path, &json!({"body": "", "rating": "great"})).await,
                      &["body", "rating"]).await;
        assert_eq!(count(&app, NOTES_TABLE).await, 0, "refused forms write no note");
        assert_eq!(count(&app, EVENTS_TABLE).await, 0, "nor any event");

        // The limits: 1 and 5,000 characters (not bytes); every rating, and null.
        let longest = "é".repeat(5000);
        let note = add_note(&app, &boss, id, &json!({"body": longest, "rating": null})).await;
        assert_eq!(note["body"], longest);
        assert_eq!(note["rating"], Value::Null);
        for rating in ["strong_no", "no", "yes", "strong_yes"] {
            let note = add_note(&app, &boss, id, &json!({"body": "y", "rating": rating})).await;
            assert_eq!((note["body"].clone(), note["rating"].clone()), (json!("y"), json!(rating)));
        }
        assert_eq!(count(&app, NOTES_TABLE).await, 5);
    }

    async fn only_the_author_deletes_a_note_of_that_application(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss, _, job_id, id) = applied(&app).await;
        let (_, max) = colleague(&app, "max@acme.example", acme, "admin").await;
        let (_, profile_id, _) = candidate(&app, "olga@example.com").await;
        let sibling = application(&app, job_id, profile_id).await;
        let note = add_note(&app, &boss, id, &json!({"body": "Mine."})).await["id"].as_i64().unwrap();
        let other = add_note(&app, &boss, sibling, &json!({"body": "Of the sibling."})).await["id"].as_i64().unwrap();

        expect_error(delete(&app, &max, &note_path(id, note)).await, StatusCode::FORBIDDEN, "forbidden").await;
        // A note of another application of the same company, through this application: 404,
        // for the author too; and a note that does not exist.
        expect_error(delete(&app, &boss, &note_path(id, other)).await, StatusCode::NOT_FOUND, "not_found").await;
        expect_error(delete(&app, &boss, &note_path(id, 999_999)).await, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(count(&app, NOTES_TABLE).await, 2, "refused deletions delete nothing");

        let response = delete(&app, &boss, &note_path(id, note)).await;
        assert_eq!(text(response, StatusCode::NO_CONTENT).await, "");
        let left = ok(get(&app, &boss, &notes_path(id)).await).await;
        assert_eq!(left["careers_job_application_notes"], json!([]));
        assert_eq!(left["meta"]["total"], 0);
        expect_error(delete(&app, &boss, &note_path(id, note)).await, StatusCode::NOT_FOUND, "not_found").await;
        let sibling_notes = ok(get(&app, &boss, &notes_path(sibling)).await).await;
        assert_eq!(ids(&sibling_notes["careers_job_application_notes"]), [other], "the other note stays");
    }

    async fn notes_do_not_change_the_applications_lock_version(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss, _, _, id) = applied(&app).await;
        assert_eq!(application_item(&app, &boss, id).await["lock_version"], 0);
        let note = add_note(&app, &boss, id, &json!({"body": "First call went well.", "rating": "yes"})).await;
        add_note(&app, &boss, id, &json!({"body": "Second thoughts."})).await;
        assert_eq!(application_item(&app, &boss, id).await["lock_version"], 0, "after two notes");
        let response = delete(&app, &boss, &note_path(id, note["id"].as_i64().unwrap())).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        assert_eq!(application_item(&app, &boss, id).await["lock_version"], 0, "after a deletion");
        // The version a recruiter read before the notes is still good.
        let form = json!({"lock_version": 0, "status": "hired", "notify_candidate": false});
        let body = ok(patch(&app, &boss, &employer_path(id), &form).await).await;
        assert_eq!(body["careers_job_applications"]["lock_version"], 1);
    }

    async fn the_timeline_records_every_kind_with_who_did_it_oldest_first(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (boss_id, boss) = employer(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (cara_id, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let form = json!({"careers_job": {"id": job_id}, "careers_user_profile": {"id": profile_id},
                          "cover_letter": "Hello"});
        let created = json(post(&app, &cara, "/candidate/careers/job_applications", &form).await,
                           StatusCode::CREATED).await;
        let id = created["careers_job_applications"]["id"].as_i64().expect("the application's id");
        let stages = stage_ids(&app, &boss, job_id).await;
        let path = employer_path(id);

        app.clock.advance(10);
        let form = json!({"lock_version": 0, "careers_job_stage": {"id": stages[1]}});
        ok(patch(&app, &boss, &path, &form).await).await;
        app.clock.advance(10);
        add_note(&app, &boss, id, &json!({"body": "Good screening call."})).await;
        app.clock.advance(10);
        let form = json!({"lock_version": 1, "status": "rejected", "rejection_reason": "other",
                          "notify_candidate": false});
        ok(patch(&app, &boss, &path, &form).await).await;
        app.clock.advance(10);
        ok(patch(&app, &boss, &path, &json!({"lock_version": 2, "status": "active"})).await).await;
        app.clock.advance(10);
        let withdrawn = patch(&app, &cara, &format!("/candidate/careers/job_applications/{id}"),
                              &json!({"status": "withdrawn"})).await;
        ok(withdrawn).await;

        let timeline = events(&app, &boss, id).await;
        let cara_brief = brief(cara_id, CANDIDATE_FIRST, CANDIDATE_LAST);
        let boss_brief = brief(boss_id, "Ada", "Lovelace");
        let expected = vec![
            event("applied", Value::Null, Value::Null, cara_brief.clone()),
            event("stage_changed", json!("Applied"), json!("Screening"), boss_brief.clone()),
            event("note_added", Value::Null, Value::Null, boss_brief.clone()),
            event("status_changed", json!("active"), json!("rejected"), boss_brief.clone()),
            event("status_changed", json!("rejected"), json!("active"), boss_brief),
            event("status_changed", json!("active"), json!("withdrawn"), cara_brief),
        ];
        assert_eq!(timeline.iter().map(summary).collect::<Vec<_>>(), expected, "{timeline:?}");
        let times: Vec<chrono::DateTime<chrono::FixedOffset>> = timeline.iter()
            .map(|e| chrono::DateTime::parse_from_rfc3339(e["created_at"].as_str().unwrap()).unwrap())
            .collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]), "oldest first: {times:?}");
        let mut unique = ids(&json!(timeline));
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 6);
        let body = ok(get(&app, &boss, &events_path(id)).await).await;
        assert_eq!(body["meta"], json!({"page": 1, "per_page": 25, "total": 6}));
        let page = ok(get(&app, &boss, &format!("{}?per_page=2&page=2", events_path(id))).await).await;
        assert_eq!(ids(&page["careers_job_application_events"]), ids(&json!(timeline[2..4])));
    }

    async fn one_patch_of_stage_and_status_writes_two_events_in_that_order(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, boss_id, boss, _, job_id, id) = applied(&app).await;
        let stages = stage_ids(&app, &boss, job_id).await;
        let form = json!({"lock_version": 0, "careers_job_stage": {"id": stages[3]}, "status": "hired",
                          "notify_candidate": false});
        let item = ok(patch(&app, &boss, &employer_path(id), &form).await).await;
        assert_eq!(item["careers_job_applications"]["lock_version"], 1, "{item}");
        let boss_brief = brief(boss_id, "Ada", "Lovelace");
        let timeline = events(&app, &boss, id).await;
        assert_eq!(timeline.iter().map(summary).collect::<Vec<_>>(), vec![
            event("stage_changed", json!("Applied"), json!("Offer"), boss_brief.clone()),
            event("status_changed", json!("active"), json!("hired"), boss_brief),
        ]);
    }

    async fn a_refused_or_empty_change_writes_no_event(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss, _, job_id, id) = applied(&app).await;
        let stages = stage_ids(&app, &boss, job_id).await;
        let other_job = job(&app, acme, "Go engineer", true).await;
        let foreign = stage_ids(&app, &boss, other_job).await[1];
        let path = employer_path(id);
        ok(patch(&app, &boss, &path, &json!({"lock_version": 0, "careers_job_stage": {"id": stages[1]}})).await).await;
        assert_eq!(events_of(&app, id).await, 1);

        // Stale: someone else changed it first.
        for form in [json!({"lock_version": 0, "careers_job_stage": {"id": stages[2]}}),
                     json!({"lock_version": 0, "status": "hired"}),
                     json!({"lock_version": 0, "careers_job_stage": {"id": stages[2]}, "status": "rejected",
                            "rejection_reason": "other"})] {
            expect_error(patch(&app, &boss, &path, &form).await, StatusCode::CONFLICT, "conflict").await;
        }
        // Invalid, with the right version.
        let cases = [
            (json!({"lock_version": 1, "status": "rejected"}), "rejection_reason"),
            (json!({"lock_version": 1, "status": "withdrawn"}), "status"),
            (json!({"lock_version": 1, "careers_job_stage": {"id": foreign}}), "careers_job_stage.id"),
            (json!({"lock_version": 1, "careers_job_stage": {"id": stages[2]}, "status": "paused"}), "status"),
        ];
        for (form, field) in cases {
            expect_fields(patch(&app, &boss, &path, &form).await, &[field]).await;
        }
        // A change that changes nothing records nothing.
        let same = json!({"lock_version": 1, "careers_job_stage": {"id": stages[1]}, "status": "active"});
        ok(patch(&app, &boss, &path, &same).await).await;
        assert_eq!(events_of(&app, id).await, 1, "only the first move is on the timeline");
        assert_eq!(count(&app, EVENTS_TABLE).await, 1);
        let after = application_item(&app, &boss, id).await;
        assert_eq!((after["careers_job_stage"].clone(), after["status"].clone(), after["lock_version"].clone()),
                   (json!({"id": stages[1]}), json!("active"), json!(1)));
    }

    async fn another_company_gets_404_on_notes_and_events_and_changes_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss, _, _, id) = applied(&app).await;
        let note = add_note(&app, &boss, id, &json!({"body": "Internal only."})).await["id"].as_i64().unwrap();
        let globex = company(&app, "Globex").await;
        let (_, rival) = employer(&app, "boss@globex.example", globex).await;
        expect_error(get(&app, &rival, &notes_path(id)).await, StatusCode::NOT_FOUND, "not_found").await;
        expect_error(get(&app, &rival, &events_path(id)).await, StatusCode::NOT_FOUND, "not_found").await;
        let response = post(&app, &rival, &notes_path(id), &json!({"body": "Sneaky", "rating": "no"})).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        expect_error(delete(&app, &rival, &note_path(id, note)).await, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(count(&app, NOTES_TABLE).await, 1);
        assert_eq!(count(&app, EVENTS_TABLE).await, 1, "the owner's note_added only");
        // An application that does not exist is the same 404.
        expect_error(get(&app, &boss, &notes_path(999_999)).await, StatusCode::NOT_FOUND, "not_found").await;
        expect_error(get(&app, &boss, &events_path(999_999)).await, StatusCode::NOT_FOUND, "not_found").await;
        let response = post(&app, &boss, &notes_path(999_999), &json!({"body": "Lost"})).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(count(&app, NOTES_TABLE).await, 1);
    }

    async fn the_candidate_never_sees_notes_or_events(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss, cara, job_id, id) = applied(&app).await;
        let stages = stage_ids(&app, &boss, job_id).await;
        let secret = "Salary expectations too high";
        let note = add_note(&app, &boss, id, &json!({"body": secret, "rating": "strong_no"})).await["id"].as_i64().unwrap();
        ok(patch(&app, &boss, &employer_path(id), &json!({"lock_version": 0, "careers_job_stage": {"id": stages[2]}})).await).await;

        let response = get(&app, &cara, "/candidate/careers/job_applications").await;
        let raw = text(response, StatusCode::OK).await;
        let body: Value = serde_json::from_str(&raw).unwrap();
        let list = items(&body["careers_job_applications"]);
        assert_eq!(list.len(), 1, "{body}");
        assert_eq!(keys(&list[0]), CANDIDATE_APPLICATION_KEYS, "no stage, reason, notes or events");
        for hidden in [secret, "strong_no", "note_added", "stage_changed", "Interview"] {
            assert!(!raw.contains(hidden), "{hidden} in {raw}");
        }
        // The employer's routes are not the candidate's area.
        expect_error(get(&app, &cara, &notes_path(id)).await, StatusCode::FORBIDDEN, "forbidden").await;
        expect_error(get(&app, &cara, &events_path(id)).await, StatusCode::FORBIDDEN, "forbidden").await;
        let response = post(&app, &cara, &notes_path(id), &json!({"body": "Please hire me"})).await;
        expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        expect_error(delete(&app, &cara, &note_path(id, note)).await, StatusCode::FORBIDDEN, "forbidden").await;
        assert_eq!(count(&app, NOTES_TABLE).await, 1);
    }

    async fn a_decision_mails_the_candidate_unless_told_not_to_and_never_the_reason(backend) {
        let sink = SmtpSink::up().await;
        let url = sink.url();
        let app = TestApp::spawn_with(backend, &[("SMTP_URL", url.as_str())]).await;
        app.start_mail_worker();
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let (_, profile_id, _) = candidate(&app, "cara@example.com").await;
        let mut applications = Vec::new();
        for title in ["Rust engineer", "Go engineer", "C engineer"] {
            let job_id = job(&app, acme, title, true).await;
            applications.push((job_id, application(&app, job_id, profile_id).await));
        }
        let mails = "SELECT COUNT(*) FROM mail_outbox WHERE recipient = 'cara@example.com'";
        let all_mails = "SELECT COUNT(*) FROM mail_outbox";

        // A stage move is no decision.
        let (rust_job, rust) = applications[0];
        let stages = stage_ids(&app, &boss, rust_job).await;
        ok(patch(&app, &boss, &employer_path(rust), &json!({"lock_version": 0, "careers_job_stage": {"id": stages[1]}})).await).await;
        assert_eq!(count(&app, all_mails).await, 0, "a stage move sends nothing");
        // A rejection with notify_candidate absent: one message.
        let form = json!({"lock_version": 1, "status": "rejected", "rejection_reason": "position_filled"});
        ok(patch(&app, &boss, &employer_path(rust), &form).await).await;
        assert_eq!(count(&app, mails).await, 1, "rejected, notify_candidate absent");
        // A hire with notify_candidate true: one more.
        let (_, go) = applications[1];
        let form = json!({"lock_version": 0, "status": "hired", "notify_candidate": true});
        ok(patch(&app, &boss, &employer_path(go), &form).await).await;
        assert_eq!(count(&app, mails).await, 2, "hired, notify_candidate true");
        // notify_candidate false: none, for a rejection and for a hire.
        let (_, c) = applications[2];
        let form = json!({"lock_version": 0, "status": "rejected", "rejection_reason": "not_a_fit",
                          "notify_candidate": false});
        ok(patch(&app, &boss, &employer_path(c), &form).await).await;
        ok(patch(&app, &boss, &employer_path(c), &json!({"lock_version": 1, "status": "active"})).await).await;
        let form = json!({"lock_version": 2, "status": "hired", "notify_candidate": false});
        ok(patch(&app, &boss, &employer_path(c), &form).await).await;
        assert_eq!(count(&app, mails).await, 2, "notify_candidate false sends nothing");
        assert_eq!(count(&app, all_mails).await, 2, "and nobody else hears of it");

        let received = sink.wait_for(2, 10).await;
        assert_eq!(received.len(), 2, "{received:?}");
        for message in &received {
            assert_eq!(message.to, ["<cara@example.com>"], "{message:?}");
            let text = message.text().to_lowercase();
            for reason in ["position_filled", "position filled", "not_a_fit", "not a fit"] {
                assert!(!text.contains(reason), "the reason stays inside the company: {text}");
            }
        }
    }

    async fn a_deleted_authors_notes_and_events_stay_without_a_user(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss, _, _, id) = applied(&app).await;
        let (max_id, max) = colleague(&app, "max@acme.example", acme, "member").await;
        add_note(&app, &max, id, &json!({"body": "Leaving soon, but: hire.", "rating": "yes"})).await;
        let form = json!({"lock_version": 0, "status": "hired", "notify_candidate": false});
        ok(patch(&app, &max, &employer_path(id), &form).await).await;
        app.state.db.execute_unprepared(&format!(
            "DELETE FROM org_user_profiles WHERE identities_user_id = {max_id}")).await.unwrap();
        app.state.db.execute_unprepared(&format!(
            "DELETE FROM identities_users WHERE id = {max_id}")).await.unwrap();

        let notes = ok(get(&app, &boss, &notes_path(id)).await).await;
        let notes = items(&notes["careers_job_application_notes"]);
        assert_eq!(notes.len(), 1, "the note stays");
        assert_eq!(keys(&notes[0]), NOTE_KEYS);
        assert_eq!((notes[0]["body"].clone(), notes[0]["identities_user"].clone()),
                   (json!("Leaving soon, but: hire."), Value::Null));
        let timeline = events(&app, &boss, id).await;
        assert_eq!(timeline.iter().map(summary).collect::<Vec<_>>(), vec![
            event("note_added", Value::Null, Value::Null, Value::Null),
            event("status_changed", json!("active"), json!("hired"), Value::Null),
        ]);
        let stored = format!("SELECT COUNT(*) FROM careers_job_application_notes WHERE identities_user_id IS NULL \
                              AND careers_job_application_id = {id}");
        assert_eq!(scalar(&app, &stored).await, "1");
    }
}
