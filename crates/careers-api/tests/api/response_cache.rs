//! The response cache (db/answers.rs, DECISIONS 118): on a SQLite file the employer's
//! application list is kept while the database does not change. Whatever keeps it, an answer
//! shows every write at once, whoever wrote it, and never crosses companies. These run on both
//! backends (PostgreSQL renders every answer, and must answer the same); the tests of what a
//! kept answer saves run on the SQLite file, where it is kept.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::fixtures::*;
use crate::helpers::*;

const LIST: &str = "/org-user/careers/job_applications";

/// The applicants' names of a list, in its order.
fn names(list: &Value) -> Vec<String> {
    items(&list["careers_job_applications"])
        .iter()
        .map(|item| {
            let user = &item["career_user_profile"]["identities_user"];
            format!(
                "{} {}",
                user["first_name"].as_str().unwrap(),
                user["last_name"].as_str().unwrap()
            )
        })
        .collect()
}

backend_tests! {
    /// Every write that changes the list is in the next answer: an application through the
    /// API, an applicant renaming themselves through the API, a row written beside the API.
    async fn the_employer_list_shows_every_write_at_once(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, first) = silent_candidate(&app, "c0@example.com").await;
        application(&app, job_id, first).await;
        for _ in 0..2 {
            let list = ok(get(&app, &boss, LIST).await).await;
            assert_eq!(list["meta"]["total"], 1, "{list}");
        }

        let (cara_id, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let form = json!({"careers_job": {"id": job_id},
                          "careers_user_profile": {"id": profile_id},
                          "cover_letter": "Hello"});
        let response = post(&app, &cara, "/candidate/careers/job_applications", &form).await;
        json(response, StatusCode::CREATED).await;
        let list = ok(get(&app, &boss, LIST).await).await;
        assert_eq!(list["meta"]["total"], 2, "the application: {list}");
        assert_eq!(names(&list)[1], "Cara Candidate");

        let path = format!("/identities/user/{cara_id}");
        ok(patch(&app, &cara, &path, &json!({"first_name": "Carla"})).await).await;
        let list = ok(get(&app, &boss, LIST).await).await;
        assert_eq!(names(&list)[1], "Carla Candidate", "the rename: {list}");

        rename_user(&app, cara_id, "Karla", "Kandidat").await;
        let list = ok(get(&app, &boss, LIST).await).await;
        assert_eq!(names(&list)[1], "Karla Kandidat", "a row written beside the API: {list}");
        let filtered = ok(get(&app, &boss, &format!("{LIST}?careers_job_id={job_id}&per_page=1&page=2")).await).await;
        assert_eq!(names(&filtered), ["Karla Kandidat"], "{filtered}");
    }

    /// Two companies asking for the same page get their own: the company is part of what an
    /// answer is kept under, and the area's extractor decides the company before it is asked.
    async fn companies_never_share_a_list(backend) {
        let app = TestApp::spawn(backend).await;
        let mut employers = Vec::new();
        for name in ["Acme", "Globex"] {
            let id = company(&app, name).await;
            let (_, boss) = employer(&app, &format!("boss@{}.example", name.to_lowercase()), id).await;
            let job_id = job(&app, id, &format!("{name} engineer"), true).await;
            let (user_id, profile) = silent_candidate(&app, &format!("cv@{}.example", name.to_lowercase())).await;
            rename_user(&app, user_id, name, "Applicant").await;
            application(&app, job_id, profile).await;
            employers.push((name, boss));
        }
        for _ in 0..2 {
            for (name, boss) in &employers {
                let list = ok(get(&app, boss, LIST).await).await;
                assert_eq!(names(&list), [format!("{name} Applicant")], "{list}");
            }
        }
    }
}

/// The list a second time, nothing written between: on the SQLite file it is the same bytes,
/// and what runs is the area's check and the database's version, not the page's statement;
/// after a write, the page's statement runs again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_list_costs_the_area_check_and_the_version_only() {
    let app = TestApp::spawn(Backend::SqliteMemoryStore).await;
    let acme = company(&app, "Acme").await;
    let (boss_id, boss) = employer(&app, "boss@acme.example", acme).await;
    let job_id = job(&app, acme, "Rust engineer", true).await;
    let (_, profile) = silent_candidate(&app, "c0@example.com").await;
    application(&app, job_id, profile).await;
    let first = get(&app, &boss, LIST).await;
    let headers = first.headers().clone();
    let first = first.bytes().await.unwrap();
    let before = app.sql_statements().len();
    let again = get(&app, &boss, LIST).await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.headers()["content-type"], headers["content-type"]);
    assert_eq!(again.headers()["cache-control"], headers["cache-control"]);
    assert_eq!(again.bytes().await.unwrap(), first, "the same bytes");
    let ran = app.sql_statements()[before..].to_vec();
    assert_eq!(ran.len(), 2, "{ran:?}");
    assert_eq!(ran[1], "PRAGMA data_version", "{ran:?}");
    assert!(
        !ran[0].contains("careers_job_applications"),
        "the area check: {ran:?}"
    );
    // After a write the page is read again: the area check, the version, the page.
    rename_user(&app, boss_id, "Bo", "Renamed").await;
    let before = app.sql_statements().len();
    ok(get(&app, &boss, LIST).await).await;
    let ran = app.sql_statements()[before..].to_vec();
    assert_eq!(ran.len(), 3, "{ran:?}");
    assert_eq!(ran[1], "PRAGMA data_version", "{ran:?}");
    assert!(ran[2].contains("FROM careers_job_applications"), "{ran:?}");
    let stats = app
        .state
        .answers
        .as_ref()
        .map(|answers| answers.stats())
        .expect("kept on a SQLite file");
    assert_eq!((stats.hits, stats.misses), (1, 2));
}

/// `RESPONSE_CACHE_MIB=0` keeps nothing: every list runs its page statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_memory_for_it_every_list_is_read() {
    let app = TestApp::spawn_with(Backend::SqliteMemoryStore, &[("RESPONSE_CACHE_MIB", "0")]).await;
    assert!(
        app.state
            .answers
            .as_ref()
            .map(|answers| answers.stats())
            .is_none()
    );
    let acme = company(&app, "Acme").await;
    let (_, boss) = employer(&app, "boss@acme.example", acme).await;
    for _ in 0..2 {
        let before = app.sql_statements().len();
        ok(get(&app, &boss, LIST).await).await;
        let ran = app.sql_statements()[before..].to_vec();
        assert_eq!(ran.len(), 2, "{ran:?}");
        assert!(ran[1].contains("FROM careers_job_applications"), "{ran:?}");
    }
}
