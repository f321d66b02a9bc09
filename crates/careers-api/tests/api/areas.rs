//! Area checks of specification §5.5 and API.md "Areas and routes", evaluated on every request,
//! and the employer's company scope (CONTRACT §4, §5).

use reqwest::{Method, StatusCode};
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::fixtures::*;
use crate::helpers::*;

const EMPLOYER_READS: [&str; 3] = [
    "/org/user-profiles",
    "/org-user/careers/jobs",
    "/org-user/careers/job_applications",
];
const TALENT_READS: [&str; 2] = [
    "/talent/careers/user_profile",
    "/candidate/careers/job_applications",
];
const TEAM_READS: [&str; 3] = [
    "/admin-user/identities/users",
    "/admin-user/org/companies",
    "/admin-user/org/user-profiles",
];
const MARKETPLACE: &str = "/marketplace/careers/jobs";

/// Every read of the employer, talent and candidate areas, with ids that exist.
fn user_area_reads(org_profile_id: i64, application_id: i64) -> Vec<String> {
    let mut paths: Vec<String> = EMPLOYER_READS.iter().map(|p| p.to_string()).collect();
    paths.push(format!("/org/user-profiles/{org_profile_id}"));
    paths.push(format!(
        "/org-user/careers/job_applications/{application_id}"
    ));
    paths.extend(TALENT_READS.iter().map(|p| p.to_string()));
    paths
}

/// An employer at Acme with a published job that a candidate applied to:
/// (employer creds, org profile id, candidate creds, application id).
async fn hiring(app: &TestApp) -> (Creds, i64, Creds, i64) {
    let acme = company(app, "Acme").await;
    let (_, org_profile_id, boss) = employer_with_profile(app, "boss@acme.example", acme).await;
    let job_id = job(app, acme, "Rust engineer", true).await;
    let (_, profile_id, cara) = candidate(app, "cara@example.com").await;
    let application_id = application(app, job_id, profile_id).await;
    (boss, org_profile_id, cara, application_id)
}

/// The marketplace jobs of a list body, as (job id, ids of its careers_job_applications).
fn marketplace_applications(body: &Value) -> Vec<(i64, Vec<i64>)> {
    items(&body["careers_jobs"])
        .iter()
        .map(|job| {
            (
                job["id"].as_i64().unwrap(),
                ids(&job["careers_job_applications"]),
            )
        })
        .collect()
}

/// Asserts an anonymous view of the marketplace: 200, every job's applications empty.
/// An empty `cookie` sends no Cookie header at all.
async fn assert_anonymous_marketplace(app: &TestApp, cookie: &str, job_id: i64, what: &str) {
    let fetch = |path: String| async move {
        if cookie.is_empty() {
            get_anon(app, &path).await
        } else {
            get_with_cookie(app, cookie, &path).await
        }
    };
    let list = ok(fetch(MARKETPLACE.to_string()).await).await;
    assert!(!items(&list["careers_jobs"]).is_empty(), "{what}: {list}");
    for (id, applications) in marketplace_applications(&list) {
        assert!(applications.is_empty(), "{what}: job {id}: {list}");
    }
    let path = format!("{MARKETPLACE}/{job_id}");
    let one = ok(fetch(path).await).await;
    assert_eq!(one["careers_jobs"]["id"], job_id, "{what}: {one}");
    assert_eq!(
        one["careers_jobs"]["careers_job_applications"],
        json!([]),
        "{what}: {one}"
    );
}

backend_tests! {
    async fn employer_area_accepts_a_user_with_an_org_profile(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, org_profile_id, _, application_id) = hiring(&app).await;
        let mut paths: Vec<String> = EMPLOYER_READS.iter().map(|p| p.to_string()).collect();
        paths.push(format!("/org/user-profiles/{org_profile_id}"));
        paths.push(format!("/org-user/careers/job_applications/{application_id}"));
        for path in paths {
            ok(get(&app, &boss, &path).await).await;
        }
    }

    async fn employer_area_forbids_a_user_without_an_org_profile(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, org_profile_id, cara, application_id) = hiring(&app).await;
        let (plain_id, plain) = app.user_session("plain@example.com").await;
        let mut paths: Vec<String> = EMPLOYER_READS.iter().map(|p| p.to_string()).collect();
        paths.push(format!("/org/user-profiles/{org_profile_id}"));
        paths.push(format!("/org-user/careers/job_applications/{application_id}"));
        // Neither a user without any profile nor one with only a talent profile is an employer.
        for creds in [&plain, &cara] {
            for path in &paths {
                let response = get(&app, creds, path).await;
                expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
            }
        }
        // Unsafe methods are checked too, with a valid CSRF header; nothing is written.
        let form = json!({"title": "Self-made", "identities_user": {"id": plain_id},
                          "company": {"id": 1}});
        let response = post(&app, &plain, "/org/user-profiles", &form).await;
        expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        let response = get(&app, &plain, "/org/user-profiles").await;
        expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
    }

    async fn user_areas_without_a_cookie_are_unauthenticated(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, org_profile_id, _, application_id) = hiring(&app).await;
        for path in user_area_reads(org_profile_id, application_id) {
            let response = get_anon(&app, &path).await;
            expect_error(response, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        }
        // Unsafe methods without a cookie are 401 as well (authentication comes before CSRF).
        for (method, path) in [
            (Method::POST, "/org/user-profiles".to_string()),
            (Method::PATCH, format!("/org/user-profiles/{org_profile_id}")),
            (Method::POST, "/org-user/careers/jobs".to_string()),
            (Method::PATCH, "/talent/careers/user_profile".to_string()),
            (Method::POST, "/candidate/careers/job_applications".to_string()),
        ] {
            let response = app.request(method, &path).json(&json!({})).send().await.unwrap();
            expect_error(response, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        }
    }

    async fn user_areas_do_not_read_the_admin_cookie(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, org_profile_id, cara, application_id) = hiring(&app).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        // team_jwt_access alone: the user areas see no credential of their context.
        for path in user_area_reads(org_profile_id, application_id) {
            let response = get(&app, &admin, &path).await;
            expect_error(response, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        }
        // Both contexts' cookies, as a browser sends them: the admin's is ignored.
        for (creds, paths) in [(&boss, &EMPLOYER_READS[..]), (&cara, &TALENT_READS[..])] {
            let cookie = format!("{}; {}", admin.cookie_header(), creds.cookie_header());
            for path in paths {
                ok(get_with_cookie(&app, &cookie, path).await).await;
            }
        }
    }

    async fn an_admin_token_in_jwt_access_is_an_invalid_token(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, org_profile_id, _, application_id) = hiring(&app).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let cookie = format!("jwt_access={}; CSRF_TOKEN={}", admin.access, admin.csrf);
        for path in user_area_reads(org_profile_id, application_id) {
            let response = get_with_cookie(&app, &cookie, &path).await;
            expect_error(response, StatusCode::UNAUTHORIZED, "invalid_token").await;
        }
    }

    async fn talent_and_candidate_areas_accept_a_user_with_a_talent_profile(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, cara, _) = hiring(&app).await;
        for path in TALENT_READS {
            ok(get(&app, &cara, path).await).await;
        }
    }

    async fn talent_and_candidate_areas_forbid_a_user_without_a_talent_profile(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, _, _, _) = hiring(&app).await;
        let (_, plain) = app.user_session("plain@example.com").await;
        // An employer is not a candidate, nor is a user without any profile.
        for creds in [&plain, &boss] {
            for path in TALENT_READS {
                let response = get(&app, creds, path).await;
                expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
            }
            let response = patch(&app, creds, "/talent/careers/user_profile",
                                 &json!({"headline": "Hi"})).await;
            expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
            let response = post(&app, creds, "/candidate/careers/job_applications",
                                &json!({"careers_job": {"id": 1}})).await;
            expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        }
    }

    async fn employer_area_checks_come_before_query_errors(backend) {
        // Every employer route's extractor runs the area check before the handler reads the
        // query string (DECISIONS 77): a non-employer gets 403 before any error of the query
        // string, and the employer gets the 400.
        let app = TestApp::spawn(backend).await;
        let (boss, _, cara, _) = hiring(&app).await;
        let (_, plain) = app.user_session("plain@example.com").await;
        for path in EMPLOYER_READS {
            for query in ["per_page=0", "page=abc", "careers_job_id=x"] {
                // Only the applications list reads `careers_job_id`; the others ignore it.
                let read = !query.starts_with("careers_job_id") || path.contains("applications");
                let path = format!("{path}?{query}");
                for creds in [&plain, &cara] {
                    let response = get(&app, creds, &path).await;
                    expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
                }
                if read {
                    let response = get(&app, &boss, &path).await;
                    expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
                }
            }
        }
    }

    async fn employer_list_forbids_a_former_employer_whose_company_has_applications(backend) {
        // A user whose org profile is gone is no employer, even while that company's
        // applications exist: the area check answers 403 on every variant of the list.
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, org_profile_id, boss) =
            employer_with_profile(&app, "boss@acme.example", acme).await;
        let (_, _, colleague) = employer_with_profile(&app, "hr@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id) = silent_candidate(&app, "cara@example.com").await;
        application(&app, job_id, profile_id).await;
        let path = EMPLOYER_READS[2];
        let list = ok(get(&app, &boss, path).await).await;
        assert_eq!(list["meta"]["total"], 1, "{list}");
        delete_org_profile(&app, org_profile_id).await;
        for query in ["", "?page=2", &format!("?careers_job_id={job_id}")] {
            let response = get(&app, &boss, &format!("{path}{query}")).await;
            expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        }
        let list = ok(get(&app, &colleague, path).await).await;
        assert_eq!(list["meta"]["total"], 1, "the company's other employer still sees it: {list}");
    }

    async fn employer_area_ends_the_session_of_a_deleted_user(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (boss_id, org_profile_id, boss) =
            employer_with_profile(&app, "boss@acme.example", acme).await;
        ok(get(&app, &boss, EMPLOYER_READS[2]).await).await;
        // The user goes away (their org profile first, its foreign key restricts): the area
        // check finds no user and ends the session (401), rather than calling them a
        // non-employer (403).
        delete_org_profile(&app, org_profile_id).await;
        careers_api::models::identities::user::entity::Entity::delete_by_id(boss_id)
            .exec(&*app.state.db)
            .await
            .unwrap();
        for path in EMPLOYER_READS {
            let response = get(&app, &boss, path).await;
            expect_error(response, StatusCode::UNAUTHORIZED, "session_ended").await;
        }
    }

    async fn area_checks_run_on_every_request_not_only_at_login(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, org_profile_id, boss) =
            employer_with_profile(&app, "boss@acme.example", acme).await;
        ok(get(&app, &boss, "/org/user-profiles").await).await;
        // The org profile goes away: the same session is no longer an employer.
        delete_org_profile(&app, org_profile_id).await;
        let response = get(&app, &boss, "/org/user-profiles").await;
        expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        // A user who gets a talent profile during the session becomes a candidate at once.
        let (_, plain) = app.user_session("plain@example.com").await;
        let response = get(&app, &plain, "/talent/careers/user_profile").await;
        expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        let form = json!({"headline": "Systems programmer"});
        let response = post(&app, &plain, "/identities/careers/user_profiles", &form).await;
        json(response, StatusCode::CREATED).await;
        ok(get(&app, &plain, "/talent/careers/user_profile").await).await;
        ok(get(&app, &plain, "/candidate/careers/job_applications").await).await;
    }

    async fn team_area_needs_an_admin_session(backend) {
        let app = TestApp::spawn(backend).await;
        let (boss, _, _, _) = hiring(&app).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        for path in TEAM_READS {
            ok(get(&app, &admin, path).await).await;
            // A user's cookie, even an employer's, is not read by the team area.
            let response = get(&app, &boss, path).await;
            expect_error(response, StatusCode::UNAUTHORIZED, "unauthenticated").await;
            let response = get_anon(&app, path).await;
            expect_error(response, StatusCode::UNAUTHORIZED, "unauthenticated").await;
            // A user's token in the admin cookie carries the wrong payload key.
            let cookie = format!("team_jwt_access={}", boss.access);
            let response = get_with_cookie(&app, &cookie, path).await;
            expect_error(response, StatusCode::UNAUTHORIZED, "invalid_token").await;
        }
    }

    async fn marketplace_answers_anonymous_callers_with_no_applications(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let applied = job(&app, acme, "Rust engineer", true).await;
        job(&app, acme, "Go engineer", true).await;
        let (_, profile_id) = silent_candidate(&app, "cara@example.com").await;
        application(&app, applied, profile_id).await;
        let list = ok(get_anon(&app, MARKETPLACE).await).await;
        assert_eq!(marketplace_applications(&list).len(), 2, "{list}");
        assert_anonymous_marketplace(&app, "", applied, "no cookie").await;
    }

    async fn marketplace_shows_a_logged_in_user_only_their_own_applications(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let first = job(&app, acme, "Rust engineer", true).await;
        let second = job(&app, acme, "Go engineer", true).await;
        let (_, cara_profile, cara) = candidate(&app, "cara@example.com").await;
        let (_, dan_profile, dan) = candidate(&app, "dan@example.com").await;
        let cara_first = application(&app, first, cara_profile).await;
        let dan_first = application(&app, first, dan_profile).await;
        let dan_second = application(&app, second, dan_profile).await;

        // Newest first: the second job leads.
        let body = ok(get(&app, &cara, MARKETPLACE).await).await;
        assert_eq!(
            marketplace_applications(&body),
            [(second, vec![]), (first, vec![cara_first])],
            "{body}"
        );
        let body = ok(get(&app, &dan, MARKETPLACE).await).await;
        assert_eq!(
            marketplace_applications(&body),
            [(second, vec![dan_second]), (first, vec![dan_first])],
            "{body}"
        );
        let one = ok(get(&app, &cara, &format!("{MARKETPLACE}/{first}")).await).await;
        assert_eq!(ids(&one["careers_jobs"]["careers_job_applications"]), [cara_first]);
        let one = ok(get(&app, &cara, &format!("{MARKETPLACE}/{second}")).await).await;
        assert_eq!(one["careers_jobs"]["careers_job_applications"], json!([]), "{one}");
        // A logged-in user without a talent profile is neither rejected nor given anything.
        let (_, plain) = app.user_session("plain@example.com").await;
        let body = ok(get(&app, &plain, MARKETPLACE).await).await;
        assert_eq!(marketplace_applications(&body), [(second, vec![]), (first, vec![])]);
    }

    async fn marketplace_treats_a_garbage_or_foreign_cookie_as_anonymous(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        application(&app, job_id, profile_id).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let cases = [
            ("jwt_access=garbage".to_string(), "garbage"),
            ("jwt_access=a.b.c; CSRF_TOKEN=x".to_string(), "malformed JWT"),
            (format!("jwt_access={}", admin.access), "admin token in jwt_access"),
            (admin.cookie_header(), "admin cookie only"),
        ];
        for (cookie, what) in &cases {
            assert_anonymous_marketplace(&app, cookie, job_id, what).await;
        }
        // A logged-out session's cookie is anonymous as well.
        assert_eq!(app.logout(&cara).await.status(), StatusCode::NO_CONTENT);
        assert_anonymous_marketplace(&app, &cara.cookie_header(), job_id, "logged out").await;
    }

    async fn marketplace_treats_an_expired_cookie_as_anonymous(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let application_id = application(&app, job_id, profile_id).await;
        let body = ok(get(&app, &cara, MARKETPLACE).await).await;
        assert_eq!(marketplace_applications(&body), [(job_id, vec![application_id])]);
        app.clock.advance(3601);
        assert_anonymous_marketplace(&app, &cara.cookie_header(), job_id, "expired").await;
        // After a refresh the user is identified again.
        let refreshed = app.refresh(&cara).await;
        assert_eq!(refreshed.status(), StatusCode::OK);
        let fresh = Creds::from_response(&cara.ctx, &refreshed);
        let body = ok(get(&app, &fresh, MARKETPLACE).await).await;
        assert_eq!(marketplace_applications(&body), [(job_id, vec![application_id])]);
    }

    async fn marketplace_lists_only_open_jobs_newest_first(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let open = job(&app, acme, "Rust engineer", true).await;
        let draft = job(&app, acme, "Secret project", false).await;
        let other = job(&app, globex, "Go engineer", true).await;
        let (_, cara) = app.user_session("cara@example.com").await;
        let body = ok(get_anon(&app, MARKETPLACE).await).await;
        assert_eq!(ids(&body["careers_jobs"]), [other, open], "{body}");
        assert_eq!(body["meta"]["total"], 2, "{body}");
        let body = ok(get(&app, &cara, MARKETPLACE).await).await;
        assert_eq!(ids(&body["careers_jobs"]), [other, open], "{body}");
        ok(get_anon(&app, &format!("{MARKETPLACE}/{open}")).await).await;
        let path = format!("{MARKETPLACE}/{draft}");
        expect_error(get_anon(&app, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        expect_error(get(&app, &cara, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        let path = format!("{MARKETPLACE}/999999");
        expect_error(get_anon(&app, &path).await, StatusCode::NOT_FOUND, "not_found").await;
    }

    async fn employer_sees_only_own_company_org_profiles(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, boss_profile, boss) =
            employer_with_profile(&app, "boss@acme.example", acme).await;
        let colleague = plain_user(&app, "colleague@acme.example", "Col", "League").await;
        let colleague_profile = org_profile(&app, colleague, acme, "Recruiter").await;
        let rival = plain_user(&app, "rival@globex.example", "Riv", "Al").await;
        let rival_profile = org_profile(&app, rival, globex, "Recruiter").await;

        let list = ok(get(&app, &boss, "/org/user-profiles").await).await;
        assert_eq!(ids(&list["org_user_profiles"]), [boss_profile, colleague_profile]);
        assert_eq!(list["meta"]["total"], 2, "{list}");
        ok(get(&app, &boss, &format!("/org/user-profiles/{colleague_profile}")).await).await;
        let path = format!("/org/user-profiles/{rival_profile}");
        expect_error(get(&app, &boss, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        let response = patch(&app, &boss, &path, &json!({"title": "Mine now"})).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        let path = "/org/user-profiles/999999";
        expect_error(get(&app, &boss, path).await, StatusCode::NOT_FOUND, "not_found").await;
    }

    async fn employer_sees_only_own_company_jobs(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let open = job(&app, acme, "Rust engineer", true).await;
        let draft = job(&app, acme, "Secret project", false).await;
        let rival = job(&app, globex, "Go engineer", true).await;
        let list = ok(get(&app, &boss, "/org-user/careers/jobs").await).await;
        assert_eq!(ids(&list["careers_jobs"]), [open, draft], "open or not: {list}");
        assert_eq!(list["meta"]["total"], 2, "{list}");
        let path = format!("/org-user/careers/jobs/{rival}");
        let response = patch(&app, &boss, &path, &json!({"title": "Mine now"})).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        let body = ok(get_anon(&app, &format!("{MARKETPLACE}/{rival}")).await).await;
        assert_eq!(body["careers_jobs"]["title"], "Go engineer", "unchanged: {body}");
    }

    async fn employer_sees_only_applications_to_own_company_jobs(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let (_, rival_boss) = employer(&app, "boss@globex.example", globex).await;
        let acme_rust = job(&app, acme, "Rust engineer", true).await;
        let acme_go = job(&app, acme, "Go engineer", true).await;
        let globex_job = job(&app, globex, "Java engineer", true).await;
        let (_, cara) = silent_candidate(&app, "cara@example.com").await;
        let (_, dan) = silent_candidate(&app, "dan@example.com").await;
        let to_rust = application(&app, acme_rust, cara).await;
        let to_go = application(&app, acme_go, dan).await;
        let to_globex = application(&app, globex_job, cara).await;

        let path = "/org-user/careers/job_applications";
        let list = ok(get(&app, &boss, path).await).await;
        assert_eq!(ids(&list["careers_job_applications"]), [to_rust, to_go], "{list}");
        assert_eq!(list["meta"]["total"], 2, "{list}");
        let list = ok(get(&app, &rival_boss, path).await).await;
        assert_eq!(ids(&list["careers_job_applications"]), [to_globex], "{list}");
        // The job filter.
        let by_job = format!("{path}?careers_job_id={acme_go}");
        let filtered = ok(get(&app, &boss, &by_job).await).await;
        assert_eq!(ids(&filtered["careers_job_applications"]), [to_go], "{filtered}");
        assert_eq!(filtered["meta"]["total"], 1, "{filtered}");
        // Pages: the total rides on every page, and past the last page it is counted apart,
        // with and without the job filter.
        let second = ok(get(&app, &boss, &format!("{path}?per_page=1&page=2")).await).await;
        assert_eq!(ids(&second["careers_job_applications"]), [to_go], "{second}");
        assert_eq!(second["meta"]["total"], 2, "{second}");
        let past = ok(get(&app, &boss, &format!("{path}?per_page=1&page=5")).await).await;
        assert_eq!(past["careers_job_applications"], json!([]), "{past}");
        assert_eq!(past["meta"]["total"], 2, "{past}");
        let past = ok(get(&app, &boss, &format!("{by_job}&per_page=1&page=3")).await).await;
        assert_eq!(past["careers_job_applications"], json!([]), "{past}");
        assert_eq!(past["meta"]["total"], 1, "{past}");
        // Filtering by another company's job never reveals its applications.
        let response = get(&app, &boss, &format!("{path}?careers_job_id={globex_job}")).await;
        let status = response.status();
        let body = response.text().await.unwrap();
        assert!(
            status == StatusCode::OK || status == StatusCode::NOT_FOUND,
            "{status}: {body}"
        );
        if status == StatusCode::OK {
            let body: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(body["careers_job_applications"], json!([]), "{body}");
            assert_eq!(body["meta"]["total"], 0, "{body}");
        }
        // By id: another company's application is 404.
        ok(get(&app, &boss, &format!("{path}/{to_go}")).await).await;
        for id in [to_globex, 999_999] {
            let response = get(&app, &boss, &format!("{path}/{id}")).await;
            expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        }
        let response = get(&app, &rival_boss, &format!("{path}/{to_rust}")).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
    }

    async fn admin_sees_every_company_org_profiles(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, acme_profile, _) = employer_with_profile(&app, "boss@acme.example", acme).await;
        let rival = plain_user(&app, "rival@globex.example", "Riv", "Al").await;
        let globex_profile = org_profile(&app, rival, globex, "Recruiter").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let list = ok(get(&app, &admin, "/admin-user/org/user-profiles").await).await;
        assert_eq!(ids(&list["org_user_profiles"]), [acme_profile, globex_profile], "{list}");
        assert_eq!(list["meta"]["total"], 2, "{list}");
        for (id, company_id) in [(acme_profile, acme), (globex_profile, globex)] {
            let path = format!("/admin-user/org/user-profiles/{id}");
            let one = ok(get(&app, &admin, &path).await).await;
            assert_eq!(one["org_user_profiles"]["id"], id, "{one}");
            assert_eq!(one["org_user_profiles"]["company"]["id"], company_id, "{one}");
        }
        let companies = ok(get(&app, &admin, "/admin-user/org/companies").await).await;
        assert_eq!(ids(&companies["org_companies"]), [acme, globex], "{companies}");
    }
}
