//! Forms of API.md "Form rules in detail" (specification §4.5, CONTRACT §6): nested forms, field
//! errors keyed by the nested path, references, scope, conflicts, transactions and CSRF.

use careers_api::areas::USER;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::fixtures::*;
use crate::helpers::*;

const APPLY: &str = "/candidate/careers/job_applications";
const TALENT: &str = "/talent/careers/user_profile";
const ORG_PROFILES: &str = "/org/user-profiles";
const ADMIN_ORG_PROFILES: &str = "/admin-user/org/user-profiles";
const JOBS: &str = "/org-user/careers/jobs";

fn signup_form(email: &str, password: &str) -> Value {
    json!({"email": email, "password": password, "first_name": "Nora", "last_name": "New",
           "phone_code": "+49", "mobile": "1701234567", "country": {"id": 3}})
}

async fn sign_up(app: &TestApp, form: &Value) -> reqwest::Response {
    app.request(Method::POST, "/identities/users")
        .json(form)
        .send()
        .await
        .unwrap()
}

/// The caller's talent profile (the object under `careers_user_profiles`).
async fn talent(app: &TestApp, creds: &Creds) -> Value {
    let body = ok(get(app, creds, TALENT).await).await;
    body["careers_user_profiles"].clone()
}

/// The ids of a list endpoint's items under `name`.
async fn list_ids(app: &TestApp, creds: &Creds, path: &str, name: &str) -> Vec<i64> {
    let body = ok(get(app, creds, &format!("{path}?per_page=100")).await).await;
    ids(&body[name])
}

/// The items of an array sorted by id.
fn by_id(value: &Value) -> Vec<Value> {
    let mut list = items(value).clone();
    list.sort_by_key(|item| item["id"].as_i64());
    list
}

/// Acme with an employer, Globex with its own org profile holder, and a plain user:
/// (acme, globex, employer creds, employer's org profile id, globex user id).
async fn two_companies(app: &TestApp) -> (i64, i64, Creds, i64, i64) {
    let acme = company(app, "Acme").await;
    let globex = company(app, "Globex").await;
    let (_, boss_profile, boss) = employer_with_profile(app, "boss@acme.example", acme).await;
    let rival = plain_user(app, "rival@globex.example", "Riv", "Al").await;
    org_profile(app, rival, globex, "Recruiter").await;
    (acme, globex, boss, boss_profile, rival)
}

fn application_form(job_id: i64, profile_id: i64, experiences: Value) -> Value {
    json!({"careers_job": {"id": job_id},
           "careers_user_profile": {"id": profile_id, "careers_experience": experiences},
           "cover_letter": "Hello"})
}

backend_tests! {
    async fn sign_up_creates_a_user_who_can_log_in(backend) {
        let app = TestApp::spawn(backend).await;
        let password = "a-long-enough-password";
        let response = sign_up(&app, &signup_form("nora@example.com", password)).await;
        assert!(set_cookies(&response).is_empty(), "sign-up does not log in");
        let body = json(response, StatusCode::CREATED).await;
        assert_eq!(keys(&body), ["identities_users"], "{body}");
        let user = &body["identities_users"];
        let id = user["id"].as_i64().unwrap();
        assert_eq!(
            *user,
            json!({"id": id, "country_id": 3, "email": "nora@example.com", "first_name": "Nora",
                   "last_name": "New", "phone_code": "+49", "mobile": "1701234567"})
        );
        let login = app.login_raw(&USER, "nora@example.com", password).await;
        assert_eq!(login.status(), StatusCode::CREATED);
        let creds = Creds::from_response(&USER, &login);
        let me = ok(get(&app, &creds, &format!("/identities/user/{id}")).await).await;
        assert_eq!(me, *user);
    }

    async fn sign_up_with_a_taken_email_is_a_conflict(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        for email in ["ada@example.com", "ADA@Example.com"] {
            let response = sign_up(&app, &signup_form(email, "a-long-enough-password")).await;
            expect_error(response, StatusCode::CONFLICT, "conflict").await;
        }
        // The existing account is untouched: its password still works, the new one does not.
        let wrong = app.login_raw(&USER, "ada@example.com", "a-long-enough-password").await;
        expect_error(wrong, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        app.login(&USER, "ada@example.com").await;
    }

    async fn sign_up_needs_a_password_of_at_least_12_characters(backend) {
        let app = TestApp::spawn(backend).await;
        let response = sign_up(&app, &signup_form("nora@example.com", "elevenchars")).await;
        expect_fields(response, &["password"]).await;
        let login = app.login_raw(&USER, "nora@example.com", "elevenchars").await;
        expect_error(login, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        let response = sign_up(&app, &signup_form("nora@example.com", "twelve-chars")).await;
        json(response, StatusCode::CREATED).await;
    }

    async fn sign_up_reports_fields_by_their_nested_names(backend) {
        let app = TestApp::spawn(backend).await;
        let response = sign_up(&app, &json!({})).await;
        expect_fields(
            response,
            &["country", "email", "first_name", "last_name", "mobile", "password", "phone_code"],
        )
        .await;
        // A flat country_id is ignored: the nested country is missing.
        let mut form = signup_form("nora@example.com", "a-long-enough-password");
        form.as_object_mut().unwrap().remove("country");
        form["country_id"] = json!(3);
        expect_fields(sign_up(&app, &form).await, &["country"]).await;
        form["country"] = json!({});
        expect_fields(sign_up(&app, &form).await, &["country.id"]).await;
        form["country"] = json!({"id": 999_999});
        expect_fields(sign_up(&app, &form).await, &["country.id"]).await;
        let login = app.login_raw(&USER, "nora@example.com", "a-long-enough-password").await;
        expect_error(login, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
    }

    async fn talent_profile_is_created_once_per_user(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, ada) = app.user_session("ada@example.com").await;
        let path = "/identities/careers/user_profiles";
        let response = post(&app, &ada, path, &json!({"headline": ""})).await;
        expect_fields(response, &["headline"]).await;
        let response = post(&app, &ada, path, &json!({"headline": "x".repeat(201)})).await;
        expect_fields(response, &["headline"]).await;
        expect_fields(post(&app, &ada, path, &json!({})).await, &["headline"]).await;
        let first = post(&app, &ada, path, &json!({"headline": "Systems programmer"})).await;
        let body = json(first, StatusCode::CREATED).await;
        let id = body["careers_user_profiles"]["id"].clone();
        let again = post(&app, &ada, path, &json!({"headline": "Second"})).await;
        expect_error(again, StatusCode::CONFLICT, "conflict").await;
        let profile = talent(&app, &ada).await;
        assert_eq!(profile["id"], id);
        assert_eq!(profile["headline"], "Systems programmer");
    }

    async fn patching_the_own_user_changes_only_the_given_fields(backend) {
        let app = TestApp::spawn(backend).await;
        let (ada_id, ada) = app.user_session("ada@example.com").await;
        let (bob_id, bob) = app.user_session("bob@example.com").await;
        let path = format!("/identities/user/{ada_id}");
        let form = json!({"first_name": "Augusta", "country": {"id": 3}});
        let body = ok(patch(&app, &ada, &path, &form).await).await;
        assert_eq!(body["first_name"], "Augusta", "{body}");
        assert_eq!(body["country_id"], 3, "{body}");
        assert_eq!(body["last_name"], "Lovelace", "untouched: {body}");
        assert_eq!(body["mobile"], "7700900123", "untouched: {body}");
        assert_eq!(ok(get(&app, &ada, &path).await).await, body);
        // Field rules.
        let response = patch(&app, &ada, &path, &json!({"country": {"id": 999_999}})).await;
        expect_fields(response, &["country.id"]).await;
        let response = patch(&app, &ada, &path, &json!({"country": {}})).await;
        expect_fields(response, &["country.id"]).await;
        assert_eq!(ok(get(&app, &ada, &path).await).await, body, "unchanged");
        // Another user's id is 404, and that user is unchanged.
        let other = format!("/identities/user/{bob_id}");
        let response = patch(&app, &ada, &other, &json!({"first_name": "Mallory"})).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found").await;
        let bob_body = ok(get(&app, &bob, &other).await).await;
        assert_eq!(bob_body["first_name"], "Ada", "{bob_body}");
    }

    async fn unsafe_requests_without_the_csrf_header_are_refused_and_write_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss_profile, boss) =
            employer_with_profile(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let (plain_id, plain) = app.user_session("plain@example.com").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let hire = plain_user(&app, "hire@acme.example", "Hi", "Re").await;
        let org_form = json!({"title": "Recruiter", "identities_user": {"id": hire},
                              "company": {"id": acme}});
        let cases = [
            (&plain, Method::PATCH, format!("/identities/user/{plain_id}"),
             json!({"first_name": "Mallory"})),
            (&plain, Method::POST, "/identities/careers/user_profiles".to_string(),
             json!({"headline": "Sneaky"})),
            (&boss, Method::POST, ORG_PROFILES.to_string(), org_form.clone()),
            (&boss, Method::PATCH, format!("{ORG_PROFILES}/{boss_profile}"),
             json!({"title": "Sneaky"})),
            (&boss, Method::POST, JOBS.to_string(),
             json!({"title": "Sneaky", "company": {"id": acme}})),
            (&boss, Method::PATCH, format!("{JOBS}/{job_id}"), json!({"title": "Sneaky"})),
            (&cara, Method::PATCH, TALENT.to_string(), json!({"headline": "Sneaky"})),
            (&cara, Method::POST, APPLY.to_string(), application_form(job_id, profile_id,
             json!([{"job_title": "Sneaky"}]))),
            (&admin, Method::POST, ADMIN_ORG_PROFILES.to_string(), org_form.clone()),
            (&admin, Method::PATCH, format!("{ADMIN_ORG_PROFILES}/{boss_profile}"),
             json!({"title": "Sneaky"})),
        ];
        for (creds, method, path, body) in &cases {
            let response = send_without_csrf(&app, creds, method.clone(), path, body).await;
            expect_error(response, StatusCode::FORBIDDEN, "csrf_failed").await;
            // Another session's CSRF token is wrong too.
            let wrong = Creds { csrf: "not-the-token".into(), ..(*creds).clone() };
            let response = send(&app, &wrong, method.clone(), path, body).await;
            expect_error(response, StatusCode::FORBIDDEN, "csrf_failed").await;
        }
        // Nothing was written.
        let me = ok(get(&app, &plain, &format!("/identities/user/{plain_id}")).await).await;
        assert_eq!(me["first_name"], "Ada");
        let response = get(&app, &plain, TALENT).await;
        expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        assert_eq!(list_ids(&app, &boss, ORG_PROFILES, "org_user_profiles").await,
                   [boss_profile]);
        let mine = ok(get(&app, &boss, &format!("{ORG_PROFILES}/{boss_profile}")).await).await;
        assert_eq!(mine["title"], "Head of Hiring");
        let jobs = ok(get(&app, &boss, JOBS).await).await;
        assert_eq!(ids(&jobs["careers_jobs"]), [job_id]);
        assert_eq!(jobs["careers_jobs"][0]["title"], "Rust engineer");
        let profile = talent(&app, &cara).await;
        assert_eq!(profile["headline"], "Systems programmer");
        assert_eq!(profile["experiences"], json!([]));
        assert_eq!(list_ids(&app, &cara, APPLY, "careers_job_applications").await, [0i64; 0]);
    }

    async fn org_profile_form_reports_missing_fields_by_nested_path(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss, boss_profile, _) = two_companies(&app).await;
        let hire = plain_user(&app, "hire@acme.example", "Hi", "Re").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        for (creds, path) in [(&boss, ORG_PROFILES), (&admin, ADMIN_ORG_PROFILES)] {
            let response = post(&app, creds, path, &json!({})).await;
            expect_fields(response, &["company", "identities_user", "title"]).await;
            let form = json!({"title": "Recruiter", "identities_user": {}, "company": {}});
            let response = post(&app, creds, path, &form).await;
            expect_fields(response, &["company.id", "identities_user.id"]).await;
            for title in [String::new(), "x".repeat(201)] {
                let form = json!({"title": title, "identities_user": {"id": hire},
                                  "company": {"id": acme}});
                expect_fields(post(&app, creds, path, &form).await, &["title"]).await;
            }
        }
        // PATCH changes only what it contains, with the same rules.
        let path = format!("{ORG_PROFILES}/{boss_profile}");
        let response = patch(&app, &boss, &path, &json!({"title": ""})).await;
        expect_fields(response, &["title"]).await;
        let response = patch(&app, &boss, &path, &json!({"company": {}})).await;
        expect_fields(response, &["company.id"]).await;
        assert_eq!(list_ids(&app, &boss, ORG_PROFILES, "org_user_profiles").await,
                   [boss_profile]);
        let mine = ok(get(&app, &boss, &path).await).await;
        assert_eq!(mine["title"], "Head of Hiring", "{mine}");
    }

    async fn flat_org_profile_form_is_rejected_with_the_nested_keys(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss, boss_profile, _) = two_companies(&app).await;
        let hire = plain_user(&app, "hire@acme.example", "Hi", "Re").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let flat = json!({"title": "x", "identities_user_id": hire, "company_id": acme});
        for (creds, path) in [(&boss, ORG_PROFILES), (&admin, ADMIN_ORG_PROFILES)] {
            let body = expect_fields(post(&app, creds, path, &flat).await,
                                     &["company", "identities_user"]).await;
            assert!(body["error"]["fields"].get("company_id").is_none(), "{body}");
        }
        assert_eq!(list_ids(&app, &boss, ORG_PROFILES, "org_user_profiles").await,
                   [boss_profile]);
    }

    async fn employer_naming_another_company_is_422_and_writes_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, globex, boss, boss_profile, _) = two_companies(&app).await;
        let hire = plain_user(&app, "hire@acme.example", "Hi", "Re").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let before = list_ids(&app, &admin, ADMIN_ORG_PROFILES, "org_user_profiles").await;
        let form = json!({"title": "Mole", "identities_user": {"id": hire},
                          "company": {"id": globex}});
        expect_fields(post(&app, &boss, ORG_PROFILES, &form).await, &["company.id"]).await;
        let path = format!("{ORG_PROFILES}/{boss_profile}");
        let response = patch(&app, &boss, &path, &json!({"company": {"id": globex}})).await;
        expect_fields(response, &["company.id"]).await;
        assert_eq!(list_ids(&app, &boss, ORG_PROFILES, "org_user_profiles").await,
                   [boss_profile]);
        assert_eq!(list_ids(&app, &admin, ADMIN_ORG_PROFILES, "org_user_profiles").await,
                   before);
        let mine = ok(get(&app, &boss, &path).await).await;
        assert_eq!(mine["company"]["id"], acme, "{mine}");
        // A job for another company is refused the same way.
        let form = json!({"title": "Mole", "company": {"id": globex}});
        expect_fields(post(&app, &boss, JOBS, &form).await, &["company.id"]).await;
        assert_eq!(list_ids(&app, &boss, JOBS, "careers_jobs").await, [0i64; 0]);
        let body = ok(get_anon(&app, "/marketplace/careers/jobs").await).await;
        assert_eq!(body["careers_jobs"], json!([]), "{body}");
    }

    async fn employer_may_name_only_users_of_their_own_company(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss, boss_profile, _) = two_companies(&app).await;
        let colleague = plain_user(&app, "colleague@acme.example", "Col", "League").await;
        let colleague_profile = org_profile(&app, colleague, acme, "Recruiter").await;
        let mine = ok(get(&app, &boss, &format!("{ORG_PROFILES}/{boss_profile}")).await).await;
        let boss_user = mine["identities_user"]["id"].as_i64().unwrap();
        // A user of the own company passes the rule; a user has at most one org profile, so a
        // POST naming one is 409 (a new user is attached to a company by the admin).
        for user in [colleague, boss_user] {
            let form = json!({"title": "Twice", "identities_user": {"id": user},
                              "company": {"id": acme}});
            let response = post(&app, &boss, ORG_PROFILES, &form).await;
            expect_error(response, StatusCode::CONFLICT, "conflict").await;
        }
        // PATCH keeps a profile's own user, and names the company's users under the same rule.
        let path = format!("{ORG_PROFILES}/{colleague_profile}");
        let form = json!({"title": "Lead Recruiter", "identities_user": {"id": colleague},
                          "company": {"id": acme}});
        let body = ok(patch(&app, &boss, &path, &form).await).await;
        assert_eq!(body["identities_user"]["id"], colleague, "{body}");
        assert_eq!(body["title"], "Lead Recruiter", "{body}");
        let form = json!({"identities_user": {"id": boss_user}});
        let response = patch(&app, &boss, &path, &form).await;
        expect_error(response, StatusCode::CONFLICT, "conflict").await;
        let unchanged = ok(get(&app, &boss, &path).await).await;
        assert_eq!(unchanged["identities_user"]["id"], colleague, "{unchanged}");
        assert_eq!(list_ids(&app, &boss, ORG_PROFILES, "org_user_profiles").await,
                   [boss_profile, colleague_profile]);
    }

    async fn employer_cannot_name_a_user_outside_their_company(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss, boss_profile, rival) = two_companies(&app).await;
        let free_id = app.create_user("free@example.com").await;
        let free = app.login(&USER, "free@example.com").await;
        let missing = 999_999;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let all_before = ok(get(&app, &admin, &format!("{ADMIN_ORG_PROFILES}?per_page=100"))
            .await).await;
        let path = format!("{ORG_PROFILES}/{boss_profile}");
        // A free user, another company's user and an id that names no one: one answer, one
        // statement sequence, so the answer tells nothing about the id.
        let mut answers: Vec<(Value, Vec<String>)> = Vec::new();
        for user in [free_id, rival, missing] {
            let form = json!({"title": "Named", "identities_user": {"id": user},
                              "company": {"id": acme}});
            let start = app.sql_statements().len();
            let body = expect_fields(post(&app, &boss, ORG_PROFILES, &form).await,
                                     &["identities_user.id"]).await;
            answers.push((body, app.sql_statements()[start..].to_vec()));
            let form = json!({"title": "Renamed", "identities_user": {"id": user}});
            let start = app.sql_statements().len();
            let body = expect_fields(patch(&app, &boss, &path, &form).await,
                                     &["identities_user.id"]).await;
            answers.push((body, app.sql_statements()[start..].to_vec()));
        }
        let (first, _) = &answers[0];
        assert_eq!(first["error"]["fields"]["identities_user.id"],
                   json!(["must be a user of your company"]), "{first}");
        for (body, _) in &answers {
            assert_eq!(body, first, "identical bodies");
        }
        assert!(!answers[0].1.is_empty(), "statements observed");
        for pair in answers.chunks(2) {
            // POST and PATCH each run the same statements whichever id was named.
            assert_eq!(pair[0].1, answers[0].1, "POST statements");
            assert_eq!(pair[1].1, answers[1].1, "PATCH statements");
        }
        // Nothing was written: every profile as it was, the free user still without one.
        let all_after = ok(get(&app, &admin, &format!("{ADMIN_ORG_PROFILES}?per_page=100"))
            .await).await;
        assert_eq!(all_after, all_before);
        let mine = ok(get(&app, &boss, &path).await).await;
        assert_eq!(mine["title"], "Head of Hiring", "{mine}");
        let response = get(&app, &free, ORG_PROFILES).await;
        expect_error(response, StatusCode::FORBIDDEN, "forbidden").await;
        // The admin's form still attaches the free user to a company.
        let form = json!({"title": "Recruiter", "identities_user": {"id": free_id},
                          "company": {"id": acme}});
        let body = json(post(&app, &admin, ADMIN_ORG_PROFILES, &form).await,
                        StatusCode::CREATED).await;
        let created = body["org_user_profiles"]["id"].as_i64().unwrap();
        assert_eq!(body["org_user_profiles"]["identities_user"]["id"], free_id, "{body}");
        // The same session of the new employer passes the employer area now.
        assert_eq!(list_ids(&app, &free, ORG_PROFILES, "org_user_profiles").await,
                   [boss_profile, created]);
    }

    async fn admin_may_use_any_user_and_any_company(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, globex, _, boss_profile, _) = two_companies(&app).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let first = plain_user(&app, "first@example.com", "Fir", "St").await;
        let second = plain_user(&app, "second@example.com", "Sec", "Ond").await;
        let mut created = Vec::new();
        // Acme's newcomer is a second owner, so that its first may move (the last-owner rule
        // binds the team's form too); the role defaults to member.
        for (user_id, company_id, role) in [(first, acme, Some("owner")), (second, globex, None)] {
            let mut form = json!({"title": "Scout", "identities_user": {"id": user_id},
                                  "company": {"id": company_id}});
            if let Some(role) = role {
                form["role"] = json!(role);
            }
            let response = post(&app, &admin, ADMIN_ORG_PROFILES, &form).await;
            let body = json(response, StatusCode::CREATED).await;
            assert_eq!(body["org_user_profiles"]["company"]["id"], company_id, "{body}");
            assert_eq!(body["org_user_profiles"]["identities_user"]["id"], user_id, "{body}");
            assert_eq!(body["org_user_profiles"]["role"], role.unwrap_or("member"), "{body}");
            created.push(body["org_user_profiles"]["id"].as_i64().unwrap());
        }
        // Moving an employer to another company.
        let path = format!("{ADMIN_ORG_PROFILES}/{boss_profile}");
        let body = ok(patch(&app, &admin, &path, &json!({"company": {"id": globex}})).await).await;
        assert_eq!(body["org_user_profiles"]["company"]["id"], globex, "{body}");
        assert_eq!(body["org_user_profiles"]["title"], "Head of Hiring", "{body}");
        // Still at most one org profile per user.
        let form = json!({"title": "Twice", "identities_user": {"id": first},
                          "company": {"id": globex}});
        let response = post(&app, &admin, ADMIN_ORG_PROFILES, &form).await;
        expect_error(response, StatusCode::CONFLICT, "conflict").await;
        let all = list_ids(&app, &admin, ADMIN_ORG_PROFILES, "org_user_profiles").await;
        assert_eq!(all.len(), 4, "{all:?}");
        assert!(created.iter().all(|id| all.contains(id)), "{all:?}");
    }

    async fn references_to_missing_records_are_422_on_their_id(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss, _, _) = two_companies(&app).await;
        let hire = plain_user(&app, "hire@acme.example", "Hi", "Re").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let missing = 999_999;
        for (creds, path) in [(&boss, ORG_PROFILES), (&admin, ADMIN_ORG_PROFILES)] {
            let form = json!({"title": "Ghost", "identities_user": {"id": missing},
                              "company": {"id": acme}});
            expect_fields(post(&app, creds, path, &form).await, &["identities_user.id"]).await;
            let form = json!({"title": "Ghost", "identities_user": {"id": hire},
                              "company": {"id": missing}});
            expect_fields(post(&app, creds, path, &form).await, &["company.id"]).await;
        }
        let form = json!({"title": "Ghost", "company": {"id": missing}});
        expect_fields(post(&app, &boss, JOBS, &form).await, &["company.id"]).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let form = application_form(missing, profile_id, json!([]));
        expect_fields(post(&app, &cara, APPLY, &form).await, &["careers_job.id"]).await;
        let form = application_form(job_id, missing, json!([]));
        expect_fields(post(&app, &cara, APPLY, &form).await, &["careers_user_profile.id"]).await;
        assert_eq!(list_ids(&app, &cara, APPLY, "careers_job_applications").await, [0i64; 0]);
    }

    async fn job_form_rules(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        for title in [String::new(), "x".repeat(201)] {
            let form = json!({"title": title, "company": {"id": acme}});
            expect_fields(post(&app, &boss, JOBS, &form).await, &["title"]).await;
        }
        let form = json!({"title": "Big", "description": "x".repeat(20_001),
                          "company": {"id": acme}});
        expect_fields(post(&app, &boss, JOBS, &form).await, &["description"]).await;
        expect_fields(post(&app, &boss, JOBS, &json!({"title": "No company"})).await,
                      &["company"]).await;
        let flat = json!({"title": "Flat", "company_id": acme});
        expect_fields(post(&app, &boss, JOBS, &flat).await, &["company"]).await;
        expect_fields(post(&app, &boss, JOBS, &json!({"company": {"id": acme}})).await,
                      &["title"]).await;
        let wrong_type = json!({"title": "Typed", "salary_min": "many", "company": {"id": acme}});
        let response = post(&app, &boss, JOBS, &wrong_type).await;
        expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
        assert_eq!(list_ids(&app, &boss, JOBS, "careers_jobs").await, [0i64; 0]);

        let form = json!({"title": "Rust engineer", "description": "x".repeat(20_000),
                          "company": {"id": acme}});
        let body = json(post(&app, &boss, JOBS, &form).await, StatusCode::CREATED).await;
        let job_id = body["careers_jobs"]["id"].as_i64().unwrap();
        assert_eq!(body["careers_jobs"]["status"], "draft", "default: {body}");
        let path = format!("{JOBS}/{job_id}");
        let opening = json!({"status": "open", "workplace_type": "remote"});
        let body = ok(patch(&app, &boss, &path, &opening).await).await;
        assert_eq!(body["careers_jobs"]["status"], "open");
        assert_eq!(body["careers_jobs"]["title"], "Rust engineer", "only the status changed");
        let response = patch(&app, &boss, &path, &json!({"title": ""})).await;
        expect_fields(response, &["title"]).await;
        let response = patch(&app, &boss, &path, &json!({"company": {"id": globex}})).await;
        expect_fields(response, &["company.id"]).await;
        let listed = ok(get(&app, &boss, JOBS).await).await;
        assert_eq!(ids(&listed["careers_jobs"]), [job_id], "{listed}");
        assert_eq!(listed["careers_jobs"][0]["title"], "Rust engineer");
        assert_eq!(listed["careers_jobs"][0]["company"]["id"], acme);
    }

    async fn job_application_is_created_with_its_experiences(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let experiences = json!([{"job_title": "Engineer", "company_name": "Initech",
                                  "started_on": "2020-01-01", "ended_on": "2022-12-31",
                                  "description": "Built things"},
                                 {"job_title": "Intern"}]);
        let form = application_form(job_id, profile_id, experiences);
        let body = json(post(&app, &cara, APPLY, &form).await, StatusCode::CREATED).await;
        assert_eq!(keys(&body), ["careers_job_applications"], "{body}");
        let created = &body["careers_job_applications"];
        assert_eq!(
            keys(created),
            ["careers_job", "cover_letter", "created_at", "id", "status", "status_changed_at", "updated_at"],
            "{body}"
        );
        assert_eq!(created["status"], "active");
        assert_eq!(created["status_changed_at"], created["created_at"]);
        assert_eq!(created["cover_letter"], "Hello");
        assert_eq!(created["careers_job"]["id"], job_id, "{body}");
        let application_id = created["id"].as_i64().unwrap();

        let profile = talent(&app, &cara).await;
        let saved: Vec<Value> = by_id(&profile["experiences"])
            .into_iter()
            .map(|mut e| {
                e.as_object_mut().unwrap().remove("id");
                e
            })
            .collect();
        assert_eq!(
            saved,
            [json!({"job_title": "Engineer", "company_name": "Initech",
                    "started_on": "2020-01-01", "ended_on": "2022-12-31",
                    "description": "Built things"}),
             json!({"job_title": "Intern", "company_name": null, "started_on": null,
                    "ended_on": null, "description": null})]
        );
        assert_eq!(list_ids(&app, &cara, APPLY, "careers_job_applications").await,
                   [application_id]);
        let path = "/org-user/careers/job_applications";
        assert_eq!(list_ids(&app, &boss, path, "careers_job_applications").await,
                   [application_id]);
        // The cover letter is optional.
        let other = job(&app, acme, "Go engineer", true).await;
        let form =
            json!({"careers_job": {"id": other}, "careers_user_profile": {"id": profile_id}});
        let body = json(post(&app, &cara, APPLY, &form).await, StatusCode::CREATED).await;
        assert_eq!(body["careers_job_applications"]["status"], "active", "{body}");
    }

    async fn flat_job_application_form_is_rejected_with_the_nested_keys(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let flat = json!({"careers_job_id": job_id, "careers_user_profile_id": profile_id,
                          "careers_experiences": [{"job_title": "Engineer"}],
                          "cover_letter": "Hello"});
        let body = expect_fields(post(&app, &cara, APPLY, &flat).await,
                                 &["careers_job", "careers_user_profile"]).await;
        assert!(body["error"]["fields"].get("careers_job_id").is_none(), "{body}");
        let form = json!({"careers_job": {}, "careers_user_profile": {"id": profile_id}});
        expect_fields(post(&app, &cara, APPLY, &form).await, &["careers_job.id"]).await;
        let form = json!({"careers_job": {"id": job_id}, "careers_user_profile": {}});
        expect_fields(post(&app, &cara, APPLY, &form).await, &["careers_user_profile.id"]).await;
        assert_eq!(list_ids(&app, &cara, APPLY, "careers_job_applications").await, [0i64; 0]);
        assert_eq!(talent(&app, &cara).await["experiences"], json!([]));
    }

    async fn job_application_references_must_be_a_published_job_and_the_own_profile(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let draft = job(&app, acme, "Secret project", false).await;
        let open = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let (_, dan_profile) = silent_candidate(&app, "dan@example.com").await;
        let form = application_form(draft, profile_id, json!([]));
        expect_fields(post(&app, &cara, APPLY, &form).await, &["careers_job.id"]).await;
        let form = application_form(open, dan_profile, json!([{"job_title": "Sneaky"}]));
        expect_fields(post(&app, &cara, APPLY, &form).await, &["careers_user_profile.id"]).await;
        let mut form = application_form(open, profile_id, json!([]));
        form["cover_letter"] = json!("x".repeat(10_001));
        expect_fields(post(&app, &cara, APPLY, &form).await, &["cover_letter"]).await;
        assert_eq!(list_ids(&app, &cara, APPLY, "careers_job_applications").await, [0i64; 0]);
        form["cover_letter"] = json!("x".repeat(10_000));
        json(post(&app, &cara, APPLY, &form).await, StatusCode::CREATED).await;
    }

    async fn job_application_experience_errors_are_keyed_by_index(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        experience(&app, profile_id, "Engineer").await;
        let before = talent(&app, &cara).await;
        let cases = [
            (json!([{"job_title": ""}]), "careers_user_profile.careers_experience[0].job_title"),
            (json!([{"job_title": "Fine"}, {"company_name": "Nameless"}]),
             "careers_user_profile.careers_experience[1].job_title"),
            (json!([{"job_title": "x".repeat(201)}]),
             "careers_user_profile.careers_experience[0].job_title"),
            (json!([{"job_title": "Fine", "company_name": "x".repeat(201)}]),
             "careers_user_profile.careers_experience[0].company_name"),
            (json!([{"job_title": "Fine", "started_on": "not a date"}]),
             "careers_user_profile.careers_experience[0].started_on"),
            (json!([{"job_title": "Fine", "description": "x".repeat(5_001)}]),
             "careers_user_profile.careers_experience[0].description"),
        ];
        for (experiences, field) in cases {
            let form = application_form(job_id, profile_id, experiences);
            expect_fields(post(&app, &cara, APPLY, &form).await, &[field]).await;
        }
        assert_eq!(talent(&app, &cara).await, before, "no experience was added");
        assert_eq!(list_ids(&app, &cara, APPLY, "careers_job_applications").await, [0i64; 0]);
    }

    async fn a_second_application_is_a_conflict_and_adds_no_experience(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let form = application_form(job_id, profile_id, json!([{"job_title": "Engineer"}]));
        let body = json(post(&app, &cara, APPLY, &form).await, StatusCode::CREATED).await;
        let application_id = body["careers_job_applications"]["id"].as_i64().unwrap();
        let before = talent(&app, &cara).await;
        assert_eq!(items(&before["experiences"]).len(), 1, "{before}");
        let again = application_form(job_id, profile_id, json!([{"job_title": "Architect"}]));
        let response = post(&app, &cara, APPLY, &again).await;
        expect_error(response, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(talent(&app, &cara).await, before, "the failed application left nothing");
        assert_eq!(list_ids(&app, &cara, APPLY, "careers_job_applications").await,
                   [application_id]);
    }

    async fn talent_profile_patch_updates_creates_and_removes_items(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let (cka, engineer, rust) = fill_profile(&app, profile_id).await;
        let intern = experience(&app, profile_id, "Intern").await;
        let form = json!({
            "headline": "Rustacean",
            "certificates": [{"id": cka, "name": "CKAD"},
                             {"name": "AWS SA", "issuer": "AWS", "issued_on": "2023-01-15"}],
            "experiences": [{"id": engineer, "_destroy": true},
                            {"id": intern, "job_title": "Senior intern"},
                            {"job_title": "Lead", "company_name": "Hooli",
                             "started_on": "2022-02-01", "ended_on": "2023-03-01",
                             "description": "Led"}],
            "skills": [{"id": rust, "_destroy": true}, {"name": "Go"}]
        });
        let body = ok(patch(&app, &cara, TALENT, &form).await).await;
        let profile = &body["careers_user_profiles"];
        assert_eq!(profile["headline"], "Rustacean");
        let certificates = by_id(&profile["certificates"]);
        assert_eq!(certificates.len(), 2, "{body}");
        assert_eq!(certificates[0],
                   json!({"id": cka, "name": "CKAD", "issuer": "CNCF",
                          "issued_on": "2024-05-01"}));
        assert_eq!(certificates[1]["name"], "AWS SA");
        assert_eq!(certificates[1]["issuer"], "AWS");
        assert_eq!(certificates[1]["issued_on"], "2023-01-15");
        let experiences = by_id(&profile["experiences"]);
        assert_eq!(experiences.len(), 2, "{body}");
        assert_eq!(experiences[0]["id"], intern);
        assert_eq!(experiences[0]["job_title"], "Senior intern");
        assert_eq!(experiences[0]["company_name"], "Initech", "untouched attribute");
        assert_eq!(experiences[1]["job_title"], "Lead");
        assert_eq!(experiences[1]["ended_on"], "2023-03-01");
        let skills = by_id(&profile["skills"]);
        assert_eq!(skills.len(), 1, "{body}");
        assert_eq!(skills[0]["name"], "Go");
        assert_eq!(talent(&app, &cara).await, *profile, "the response is what was stored");
    }

    async fn talent_profile_patch_with_one_invalid_item_changes_nothing(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let (cka, engineer, rust) = fill_profile(&app, profile_id).await;
        let before = talent(&app, &cara).await;
        let form = json!({
            "headline": "Changed",
            "certificates": [{"id": cka, "name": "Renamed"}, {"name": "New cert"}],
            "experiences": [{"id": engineer, "_destroy": true}, {"job_title": ""}],
            "skills": [{"id": rust, "name": "Rust lang"}, {"name": "Go"}]
        });
        let response = patch(&app, &cara, TALENT, &form).await;
        expect_fields(response, &["experiences[1].job_title"]).await;
        assert_eq!(talent(&app, &cara).await, before, "one transaction: nothing changed");
    }

    async fn talent_profile_patch_field_rules(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let (_, _, rust) = fill_profile(&app, profile_id).await;
        skill(&app, profile_id, "Go").await;
        let (_, dan_profile, dan) = candidate(&app, "dan@example.com").await;
        let dan_skill = skill(&app, dan_profile, "Java").await;
        let dan_certificate = certificate(&app, dan_profile, "OCP").await;
        let before = talent(&app, &cara).await;
        let dan_before = talent(&app, &dan).await;
        let cases = [
            (json!({"headline": ""}), "headline"),
            (json!({"headline": "x".repeat(201)}), "headline"),
            (json!({"certificates": [{"name": ""}]}), "certificates[0].name"),
            (json!({"certificates": [{"name": "x".repeat(201)}]}), "certificates[0].name"),
            (json!({"certificates": [{"name": "A", "issuer": "x".repeat(201)}]}),
             "certificates[0].issuer"),
            (json!({"certificates": [{"name": "A", "issued_on": "May 2024"}]}),
             "certificates[0].issued_on"),
            (json!({"certificates": [{"id": dan_certificate, "name": "Mine"}]}),
             "certificates[0].id"),
            (json!({"experiences": [{"job_title": "A", "description": "x".repeat(5_001)}]}),
             "experiences[0].description"),
            (json!({"experiences": [{"job_title": "A", "ended_on": "2020-13-01"}]}),
             "experiences[0].ended_on"),
            (json!({"skills": [{"name": ""}]}), "skills[0].name"),
            (json!({"skills": [{"name": "x".repeat(101)}]}), "skills[0].name"),
            (json!({"skills": [{"id": rust, "name": "Rust"}, {"name": "C"},
                               {"id": dan_skill, "name": "Mine"}]}), "skills[2].id"),
            (json!({"skills": [{"id": 999_999, "_destroy": true}]}), "skills[0].id"),
        ];
        for (form, field) in cases {
            let response = patch(&app, &cara, TALENT, &form).await;
            expect_fields(response, &[field]).await;
        }
        // A skill name is unique per profile.
        let response = patch(&app, &cara, TALENT, &json!({"skills": [{"name": "Go"}]})).await;
        expect_error(response, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(talent(&app, &cara).await, before, "nothing changed");
        assert_eq!(talent(&app, &dan).await, dan_before, "another profile's items untouched");
    }
}

mod destroy_without_id {
    use super::*;

    backend_tests! {
        async fn destroy_on_an_item_without_id_creates_nothing(backend) {
            let app = TestApp::spawn(backend).await;
            let (_, _, creds) = candidate(&app, "cara@example.com").await;
            let response = creds
                .with_csrf(app.request(Method::PATCH, "/talent/careers/user_profile"))
                .json(&serde_json::json!({
                    "skills": [{"_destroy": true}, {"_destroy": true, "name": "Ghost"}],
                    "certificates": [{"_destroy": true}]
                }))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let body: serde_json::Value = response.json().await.unwrap();
            let profile = &body["careers_user_profiles"];
            let names: Vec<&str> = profile["skills"].as_array().unwrap().iter()
                .filter_map(|s| s["name"].as_str()).collect();
            assert!(!names.contains(&"Ghost"), "{names:?}");
        }
    }
}
