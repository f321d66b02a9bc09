//! Issue 46's journey, over HTTP, SMTP and a webhook receiver only: an employer signs up,
//! verifies, creates a company and a job with its own stages and a webhook endpoint; a
//! candidate signs up and applies; the employer moves the application across the board, notes
//! an opinion and hires; the candidate reads the decision and gets the e-mail, the timeline tells
//! the story, and the receiver got every event, signed.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::fixtures::*;
use crate::helpers::*;
use crate::invitations::{message_to, token_after};
use crate::smtp_sink::SmtpSink;
use crate::webhooks::{Mode, Receiver};

const VERIFY_URL: &str = "https://app.example/verify-email?token={token}";

backend_tests! {
    async fn hiring_journey_from_sign_up_to_a_hire_with_its_timeline_mail_and_webhooks(backend) {
        let sink = SmtpSink::up().await;
        let url = sink.url();
        let app = TestApp::spawn_with(backend, &[("SMTP_URL", url.as_str()),
                                                   ("EMAIL_VERIFICATION_URL", VERIFY_URL)]).await;
        app.start_mail_worker();
        app.start_webhook_worker();

        // The employer: sign up, verify, log in, create the company.
        let founder = "founder@example.com";
        let signed = app.request(Method::POST, "/identities/users")
            .json(&sign_up_body(founder)).send().await.unwrap();
        assert_eq!(signed.status(), StatusCode::CREATED);
        let token = token_after(&message_to(&sink, founder, "verify-email?token=").await.text(),
                                "verify-email?token=");
        let verified = app.request(Method::PATCH, "/identities/email_verifications/current")
            .json(&json!({"token": token})).send().await.unwrap();
        assert_eq!(verified.status(), StatusCode::NO_CONTENT);
        let boss = app.login(&careers_api::areas::USER, founder).await;
        let company = json(post(&app, &boss, "/identities/org/companies",
                                &json!({"name": "Acme Robotics"})).await, StatusCode::CREATED).await;
        let company_id = company["org_companies"]["id"].as_i64().unwrap();

        // A webhook endpoint for every event, and a job with its own board.
        let receiver = Receiver::start(Mode::Status(204)).await;
        let events = ["careers_job_application.created", "careers_job_application.stage_changed",
                      "careers_job_application.status_changed", "careers_job.status_changed"];
        let endpoint = json(post(&app, &boss, "/org/webhook_endpoints",
                                 &json!({"url": receiver.url, "events": events})).await,
                            StatusCode::CREATED).await;
        let secret = endpoint["org_webhook_endpoints"]["secret"].as_str().unwrap().to_owned();
        let form = json!({"title": "Rust engineer", "description": "Build robots", "status": "open",
                          "country_code": "DE", "company": {"id": company_id},
                          "careers_job_stages": [{"name": "Applied", "position": 1},
                                                 {"name": "Phone screen", "position": 2},
                                                 {"name": "Onsite", "position": 3}]});
        let job = json(post(&app, &boss, "/org-user/careers/jobs", &form).await, StatusCode::CREATED).await;
        let job_id = job["careers_jobs"]["id"].as_i64().unwrap();
        let stages: Vec<i64> = job["careers_jobs"]["careers_job_stages"].as_array().unwrap()
            .iter().map(|s| s["id"].as_i64().unwrap()).collect();
        assert_eq!(stages.len(), 3);

        // The candidate: sign up, log in, a talent profile, apply.
        let seeker = "seeker@example.com";
        let signed = app.request(Method::POST, "/identities/users")
            .json(&sign_up_body(seeker)).send().await.unwrap();
        assert_eq!(signed.status(), StatusCode::CREATED);
        let cara = app.login(&careers_api::areas::USER, seeker).await;
        let profile = json(post(&app, &cara, "/identities/careers/user_profiles",
                                &json!({"headline": "Rustacean"})).await, StatusCode::CREATED).await;
        let profile_id = profile["careers_user_profiles"]["id"].as_i64().unwrap();
        let applied = json(post(&app, &cara, "/candidate/careers/job_applications",
                                &json!({"careers_job": {"id": job_id},
                                        "careers_user_profile": {"id": profile_id},
                                        "cover_letter": "I build robots too."})).await,
                           StatusCode::CREATED).await;
        let id = applied["careers_job_applications"]["id"].as_i64().unwrap();

        // The board: the first column holds the card; move it, note, move it, hire.
        let column = |stage: i64| format!(
            "/org-user/careers/job_applications?careers_job_id={job_id}&careers_job_stage_id={stage}&status=active");
        assert_eq!(ids(&ok(get(&app, &boss, &column(stages[0])).await).await["careers_job_applications"]), [id]);
        let path = format!("/org-user/careers/job_applications/{id}");
        let moved = ok(patch(&app, &boss, &path,
                             &json!({"lock_version": 0, "careers_job_stage": {"id": stages[1]}})).await).await;
        assert_eq!(moved["careers_job_applications"]["careers_job_stage"], json!({"id": stages[1]}));
        assert!(items(&ok(get(&app, &boss, &column(stages[0])).await).await["careers_job_applications"]).is_empty());
        assert_eq!(ids(&ok(get(&app, &boss, &column(stages[1])).await).await["careers_job_applications"]), [id]);
        json(post(&app, &boss, &format!("{path}/notes"),
                  &json!({"body": "Strong systems background.", "rating": "yes"})).await,
             StatusCode::CREATED).await;
        ok(patch(&app, &boss, &path, &json!({"lock_version": 1, "careers_job_stage": {"id": stages[2]}})).await).await;
        let hired = ok(patch(&app, &boss, &path, &json!({"lock_version": 2, "status": "hired"})).await).await;
        assert_eq!(hired["careers_job_applications"]["status"], "hired");
        assert_eq!(hired["careers_job_applications"]["lock_version"], 3);

        // The candidate reads the decision (and nothing of the board) and gets the e-mail.
        let own = ok(get(&app, &cara, "/candidate/careers/job_applications").await).await;
        let mine = &items(&own["careers_job_applications"])[0];
        assert_eq!(mine["status"], "hired");
        for hidden in ["careers_job_stage", "rejection_reason", "lock_version", "notes"] {
            assert!(mine.get(hidden).is_none(), "{hidden} in {mine}");
        }
        let mail = message_to(&sink, seeker, "hire").await;
        assert!(mail.text().contains("Rust engineer"), "{}", mail.text());

        // The timeline tells the story, oldest first, with who did each step.
        let timeline = ok(get(&app, &boss, &format!("{path}/events")).await).await;
        let events = &timeline["careers_job_application_events"];
        let steps: Vec<(String, Value, Value)> = items(events).iter()
            .map(|e| (e["kind"].as_str().unwrap().to_owned(), e["from"].clone(), e["to"].clone()))
            .collect();
        assert_eq!(steps, [
            ("applied".into(), Value::Null, Value::Null),
            ("stage_changed".into(), json!("Applied"), json!("Phone screen")),
            ("note_added".into(), Value::Null, Value::Null),
            ("stage_changed".into(), json!("Phone screen"), json!("Onsite")),
            ("status_changed".into(), json!("active"), json!("hired")),
        ]);
        // The candidate applied; the employer did the rest.
        let seeker_id = &hired["careers_job_applications"]["career_user_profile"]["identities_user"]["id"];
        let authors: Vec<&Value> = items(events).iter().map(|e| &e["identities_user"]["id"]).collect();
        assert_eq!(authors[0], seeker_id);
        assert!(authors[1..].iter().all(|a| a.is_i64() && *a != seeker_id), "{authors:?}");

        // The receiver got the four application events, each signed with the endpoint's secret.
        let hits = receiver.wait_for(4).await;
        let kinds: Vec<String> = hits.iter()
            .map(|h| h.json()["type"].as_str().unwrap().to_owned()).collect();
        let mut sorted = kinds.clone();
        sorted.sort();
        assert_eq!(sorted, ["careers_job_application.created", "careers_job_application.stage_changed",
                            "careers_job_application.stage_changed", "careers_job_application.status_changed"],
                   "{kinds:?}");
        assert!(hits.iter().all(|h| h.verifies_with(&secret)), "every delivery is signed");
        let last = hits.iter().find(|h| h.json()["type"] == "careers_job_application.status_changed").unwrap();
        assert_eq!(last.json()["data"]["status"], "hired");
        assert_eq!(last.json()["data"]["id"], id);
    }
}
