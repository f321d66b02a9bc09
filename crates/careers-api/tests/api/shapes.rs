//! Response shapes of API.md "Shapes" (specification §4.3, §4.4; CONTRACT §5): exact key sets,
//! nesting instead of flattening, wrapping, `meta`, pagination, no `password_digest`. The
//! statement counts that keep a list's cost independent of its length are in
//! `performance_guards.rs`.

use careers_api::areas::USER;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::fixtures::*;
use crate::helpers::*;

const USER_KEYS: [&str; 7] = [
    "country_id",
    "email",
    "first_name",
    "id",
    "last_name",
    "mobile",
    "phone_code",
];
const ORG_PROFILE_KEYS: [&str; 7] = [
    "company",
    "created_at",
    "id",
    "identities_user",
    "role",
    "title",
    "updated_at",
];
const NAME_KEYS: [&str; 3] = ["first_name", "id", "last_name"];
const COMPANY_KEYS: [&str; 2] = ["id", "name"];
/// A job's keys in the employer's view (sorted).
pub(crate) const JOB_KEYS: [&str; 19] = [
    "company",
    "country_code",
    "created_at",
    "department",
    "description",
    "employment_type",
    "id",
    "locality",
    "published_at",
    "region",
    "salary_currency",
    "salary_interval",
    "salary_max",
    "salary_min",
    "status",
    "title",
    "updated_at",
    "valid_through",
    "workplace_type",
];

/// A job as its employer reads, creates and updates it one at a time: with its stages.
pub(crate) fn employer_job_keys() -> Vec<&'static str> {
    let mut keys = JOB_KEYS.to_vec();
    keys.push("careers_job_stages");
    keys.sort_unstable();
    keys
}

const MARKETPLACE_JOB_KEYS: [&str; 20] = [
    "careers_job_applications",
    "company",
    "country_code",
    "created_at",
    "department",
    "description",
    "employment_type",
    "id",
    "locality",
    "published_at",
    "region",
    "salary_currency",
    "salary_interval",
    "salary_max",
    "salary_min",
    "status",
    "title",
    "updated_at",
    "valid_through",
    "workplace_type",
];
const OWN_APPLICATION_KEYS: [&str; 3] = ["created_at", "id", "status"];
/// The employer's application (CONTRACT §16): the candidate's attributes and the pipeline's.
pub(crate) const APPLICATION_KEYS: [&str; 11] = [
    "career_user_profile",
    "careers_job",
    "careers_job_stage",
    "cover_letter",
    "created_at",
    "id",
    "lock_version",
    "rejection_reason",
    "status",
    "status_changed_at",
    "updated_at",
];
/// The candidate's application: never the stage, the rejection reason or the lock version.
pub(crate) const CANDIDATE_APPLICATION_KEYS: [&str; 7] = [
    "careers_job",
    "cover_letter",
    "created_at",
    "id",
    "status",
    "status_changed_at",
    "updated_at",
];
const TALENT_PROFILE_KEYS: [&str; 7] = [
    "certificates",
    "created_at",
    "experiences",
    "headline",
    "id",
    "skills",
    "updated_at",
];
const CERTIFICATE_KEYS: [&str; 4] = ["id", "issued_on", "issuer", "name"];
const EXPERIENCE_KEYS: [&str; 6] = [
    "company_name",
    "description",
    "ended_on",
    "id",
    "job_title",
    "started_on",
];
const SKILL_KEYS: [&str; 2] = ["id", "name"];
const META_KEYS: [&str; 3] = ["page", "per_page", "total"];

/// An RFC 3339 timestamp in UTC.
fn assert_timestamp(value: &Value) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("timestamp string: {value}"));
    let parsed = chrono::DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("RFC 3339 timestamp {text}: {e}"));
    assert_eq!(parsed.offset().local_minus_utc(), 0, "UTC: {text}");
}

/// An employer's org profile as API.md shows it: exact keys and nested values.
fn assert_org_profile(value: &Value, id: i64, user_id: i64, company_id: i64, company: &str) {
    assert_eq!(keys(value), ORG_PROFILE_KEYS, "{value}");
    assert_eq!(value["id"], id, "{value}");
    assert!(value["title"].is_string(), "{value}");
    assert!(
        ["owner", "admin", "member"].contains(&value["role"].as_str().unwrap_or_default()),
        "{value}"
    );
    assert_timestamp(&value["created_at"]);
    assert_timestamp(&value["updated_at"]);
    assert_eq!(
        value["identities_user"],
        json!({"id": user_id, "first_name": "Ada", "last_name": "Lovelace"}),
        "{value}"
    );
    assert_eq!(keys(&value["company"]), COMPANY_KEYS, "{value}");
    assert_eq!(
        value["company"],
        json!({"id": company_id, "name": company}),
        "{value}"
    );
}

/// A list body: exactly the array under `name` and `meta`.
fn assert_list<'a>(body: &'a Value, name: &str) -> &'a Vec<Value> {
    let mut expected = vec![name, "meta"];
    expected.sort_unstable();
    assert_eq!(keys(body), expected, "{body}");
    assert_eq!(keys(&body["meta"]), META_KEYS, "{body}");
    items(&body[name])
}

/// The marketplace's search body: the list, and `meta` with the facets beside the page.
fn assert_search(body: &Value) -> &Vec<Value> {
    assert_eq!(keys(body), ["careers_jobs", "meta"], "{body}");
    assert_eq!(
        keys(&body["meta"]),
        ["facets", "page", "per_page", "total"],
        "{body}"
    );
    assert_eq!(
        keys(&body["meta"]["facets"]),
        ["country_code", "employment_type", "workplace_type"],
        "{body}"
    );
    items(&body["careers_jobs"])
}

/// `meta` without the facets.
fn page_meta(body: &Value) -> Value {
    let mut meta = body["meta"].clone();
    meta.as_object_mut().unwrap().remove("facets");
    meta
}

/// A single-record body: exactly the object under `name`.
fn assert_single<'a>(body: &'a Value, name: &str) -> &'a Value {
    assert_eq!(keys(body), [name], "{body}");
    &body[name]
}

backend_tests! {
    async fn identities_user_is_bare_with_exactly_the_user_fields(backend) {
        let app = TestApp::spawn(backend).await;
        let (id, ada) = app.user_session("ada@example.com").await;
        let body = ok(get(&app, &ada, &format!("/identities/user/{id}")).await).await;
        assert_eq!(keys(&body), USER_KEYS, "{body}");
        assert_eq!(
            body,
            json!({"id": id, "country_id": 2, "email": "ada@example.com", "first_name": "Ada",
                   "last_name": "Lovelace", "phone_code": "+44", "mobile": "7700900123"})
        );
        let path = format!("/identities/user/{id}");
        let body = ok(patch(&app, &ada, &path, &json!({"first_name": "Augusta"})).await).await;
        assert_eq!(keys(&body), USER_KEYS, "PATCH is bare too: {body}");
        assert_eq!(body["first_name"], "Augusta", "{body}");
    }

    async fn org_user_profile_by_id_is_bare_with_nested_user_and_company(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (user_id, profile_id, boss) =
            employer_with_profile(&app, "boss@acme.example", acme).await;
        let path = format!("/org/user-profiles/{profile_id}");
        let body = ok(get(&app, &boss, &path).await).await;
        assert_org_profile(&body, profile_id, user_id, acme, "Acme");
        assert_eq!(body["title"], "Head of Hiring");
        // PATCH on the same path answers bare as well.
        let body = ok(patch(&app, &boss, &path, &json!({"title": "Chief Hiring"})).await).await;
        assert_org_profile(&body, profile_id, user_id, acme, "Acme");
        assert_eq!(body["title"], "Chief Hiring");
    }

    async fn org_user_profile_lists_and_creations_are_wrapped(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (user_id, profile_id, boss) =
            employer_with_profile(&app, "boss@acme.example", acme).await;
        let body = ok(get(&app, &boss, "/org/user-profiles").await).await;
        let list = assert_list(&body, "org_user_profiles");
        assert_eq!(list.len(), 1, "{body}");
        assert_org_profile(&list[0], profile_id, user_id, acme, "Acme");

        // A new user is attached to a company by the admin's form (DECISIONS 68); the team
        // area wraps every method, single records included.
        let (_, admin) = app.admin_session("grace@example.com").await;
        let hire = plain_user(&app, "hire@acme.example", "Ada", "Lovelace").await;
        let form = json!({"title": "Recruiter", "identities_user": {"id": hire},
                          "company": {"id": acme}});
        let body = json(post(&app, &admin, "/admin-user/org/user-profiles", &form).await,
                        StatusCode::CREATED).await;
        let created = assert_single(&body, "org_user_profiles");
        let created_id = created["id"].as_i64().unwrap();
        assert_org_profile(created, created_id, hire, acme, "Acme");
        assert_eq!(created["title"], "Recruiter");
        let body = ok(get(&app, &boss, "/org/user-profiles").await).await;
        let list = assert_list(&body, "org_user_profiles");
        assert_eq!(list.len(), 2, "{body}");
        assert_org_profile(&list[1], created_id, hire, acme, "Acme");

        let body = ok(get(&app, &admin, "/admin-user/org/user-profiles").await).await;
        let list = assert_list(&body, "org_user_profiles");
        assert_eq!(list.len(), 2, "{body}");
        assert_org_profile(&list[0], profile_id, user_id, acme, "Acme");
        let path = format!("/admin-user/org/user-profiles/{created_id}");
        let body = ok(get(&app, &admin, &path).await).await;
        assert_org_profile(assert_single(&body, "org_user_profiles"), created_id, hire, acme,
                           "Acme");
        let body = ok(patch(&app, &admin, &path, &json!({"title": "Lead"})).await).await;
        let patched = assert_single(&body, "org_user_profiles");
        assert_org_profile(patched, created_id, hire, acme, "Acme");
        assert_eq!(patched["title"], "Lead");
        let other = plain_user(&app, "other@acme.example", "Ada", "Lovelace").await;
        let form = json!({"title": "Scout", "identities_user": {"id": other},
                          "company": {"id": acme}});
        let body = json(post(&app, &admin, "/admin-user/org/user-profiles", &form).await,
                        StatusCode::CREATED).await;
        let created = assert_single(&body, "org_user_profiles");
        assert_org_profile(created, created["id"].as_i64().unwrap(), other, acme, "Acme");
    }

    async fn employer_job_applications_list_has_exactly_the_specified_shape(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (cara_id, profile_id) = silent_candidate(&app, "cara@example.com").await;
        let application_id = application(&app, job_id, profile_id).await;

        let response = get(&app, &boss, "/org-user/careers/job_applications").await;
        let raw = text(response, StatusCode::OK).await;
        let body: Value = serde_json::from_str(&raw).unwrap();
        let list = assert_list(&body, "careers_job_applications");
        assert_eq!(body["meta"], json!({"page": 1, "per_page": 25, "total": 1}));
        assert_eq!(list.len(), 1, "{body}");
        let item = &list[0];
        assert_eq!(keys(item), APPLICATION_KEYS, "{item}");
        assert_eq!(item["id"], application_id);
        assert_eq!(item["status"], "active");
        assert_eq!(item["cover_letter"], "I would love to work with you.");
        assert_timestamp(&item["status_changed_at"]);
        assert_eq!(item["rejection_reason"], Value::Null);
        assert_eq!(item["lock_version"], 0);
        assert_eq!(item["careers_job"], json!({"id": job_id}));
        let first_stage = ok(get(&app, &boss, &format!("/org-user/careers/jobs/{job_id}")).await).await
            ["careers_jobs"]["careers_job_stages"][0]["id"].clone();
        assert_eq!(item["careers_job_stage"], json!({"id": first_stage}), "the job's first stage");
        assert_timestamp(&item["created_at"]);
        assert_timestamp(&item["updated_at"]);
        let profile = &item["career_user_profile"];
        assert_eq!(keys(profile), ["id", "identities_user"], "{profile}");
        assert_eq!(profile["id"], profile_id);
        assert_eq!(keys(&profile["identities_user"]), NAME_KEYS, "{profile}");
        assert_eq!(
            profile["identities_user"],
            json!({"id": cara_id, "first_name": CANDIDATE_FIRST, "last_name": CANDIDATE_LAST})
        );
        // Nothing else of the applicant: no e-mail, no phone.
        assert!(!raw.contains("cara@example.com"), "{raw}");
        assert!(!raw.contains("7700900999"), "{raw}");
    }

    async fn employer_job_application_detail_nests_the_profile_and_its_children(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let cara_id = plain_user(&app, "cara@example.com", CANDIDATE_FIRST, CANDIDATE_LAST).await;
        let profile_id = talent_profile(&app, cara_id, "Systems programmer").await;
        let (certificate_id, experience_id, skill_id) = fill_profile(&app, profile_id).await;
        let application_id = application(&app, job_id, profile_id).await;

        let path = format!("/org-user/careers/job_applications/{application_id}");
        let raw = text(get(&app, &boss, &path).await, StatusCode::OK).await;
        let body: Value = serde_json::from_str(&raw).unwrap();
        let item = assert_single(&body, "careers_job_applications");
        assert_eq!(keys(item), APPLICATION_KEYS, "{item}");
        assert_eq!(item["id"], application_id);
        assert_eq!(item["status"], "active");
        let profile = &item["career_user_profile"];
        assert_eq!(
            keys(profile),
            ["certificates", "experiences", "id", "identities_user", "skills"],
            "{profile}"
        );
        assert_eq!(profile["id"], profile_id);
        assert_eq!(
            profile["identities_user"],
            json!({"id": cara_id, "first_name": CANDIDATE_FIRST, "last_name": CANDIDATE_LAST})
        );
        assert_eq!(
            profile["certificates"],
            json!([{"id": certificate_id, "name": "CKA", "issuer": "CNCF",
                    "issued_on": "2024-05-01"}])
        );
        assert_eq!(
            profile["experiences"],
            json!([{"id": experience_id, "job_title": "Engineer", "company_name": "Initech",
                    "started_on": "2020-01-01", "ended_on": null, "description": null}])
        );
        assert_eq!(profile["skills"], json!([{"id": skill_id, "name": "Rust"}]));
        assert!(!raw.contains("cara@example.com"), "{raw}");
        assert!(!raw.contains("headline"), "the profile's own headline is not in §4.3: {raw}");
    }

    async fn candidate_job_applications_nest_the_job_and_its_company(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let application_id = application(&app, job_id, profile_id).await;
        let body = ok(get(&app, &cara, "/candidate/careers/job_applications").await).await;
        let list = assert_list(&body, "careers_job_applications");
        assert_eq!(body["meta"], json!({"page": 1, "per_page": 25, "total": 1}));
        assert_eq!(list.len(), 1, "{body}");
        let item = &list[0];
        assert_eq!(keys(item), CANDIDATE_APPLICATION_KEYS, "{item}");
        assert_eq!(item["id"], application_id);
        assert_eq!(item["status"], "active");
        assert_timestamp(&item["created_at"]);
        assert_eq!(
            item["careers_job"],
            json!({"id": job_id, "title": "Rust engineer",
                   "company": {"id": acme, "name": "Acme"}})
        );
    }

    async fn jobs_carry_their_company_nested(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let body = ok(get(&app, &boss, "/org-user/careers/jobs").await).await;
        let list = assert_list(&body, "careers_jobs");
        assert_eq!(keys(&list[0]), JOB_KEYS, "{body}");
        assert_eq!(list[0]["id"], job_id);
        assert_eq!(list[0]["status"], "open");
        assert_eq!(list[0]["description"], "About the Rust engineer role");
        assert_eq!(list[0]["company"], json!({"id": acme, "name": "Acme"}));
        assert_timestamp(&list[0]["created_at"]);

        let form = json!({"title": "Go engineer", "description": "Go", "company": {"id": acme}});
        let body = json(post(&app, &boss, "/org-user/careers/jobs", &form).await,
                        StatusCode::CREATED).await;
        let created = assert_single(&body, "careers_jobs");
        assert_eq!(keys(created), employer_job_keys(), "{body}");
        assert_eq!(created["status"], "draft", "default: {body}");
        assert_eq!(created["workplace_type"], "on_site", "default: {body}");
        assert_eq!(created["published_at"], Value::Null, "{body}");
        assert_eq!(created["company"], json!({"id": acme, "name": "Acme"}));
        let path = format!("/org-user/careers/jobs/{}", created["id"]);
        let opening = json!({"status": "open", "country_code": "DE"});
        let body = ok(patch(&app, &boss, &path, &opening).await).await;
        let patched = assert_single(&body, "careers_jobs");
        assert_eq!(keys(patched), employer_job_keys(), "{body}");
        assert_eq!(patched["status"], "open");
        assert_timestamp(&patched["published_at"]);
        assert_eq!(patched["title"], "Go engineer");
    }

    async fn marketplace_jobs_add_the_callers_applications(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let application_id = application(&app, job_id, profile_id).await;
        for creds in [None, Some(&cara)] {
            let response = match creds {
                Some(creds) => get(&app, creds, "/marketplace/careers/jobs").await,
                None => get_anon(&app, "/marketplace/careers/jobs").await,
            };
            let body = ok(response).await;
            let list = assert_search(&body);
            assert_eq!(keys(&list[0]), MARKETPLACE_JOB_KEYS, "{body}");
            assert_eq!(list[0]["company"], json!({"id": acme, "name": "Acme"}));
        }
        let path = format!("/marketplace/careers/jobs/{job_id}");
        let body = ok(get(&app, &cara, &path).await).await;
        let one = assert_single(&body, "careers_jobs");
        assert_eq!(keys(one), MARKETPLACE_JOB_KEYS, "{body}");
        let own = items(&one["careers_job_applications"]);
        assert_eq!(own.len(), 1, "{body}");
        assert_eq!(keys(&own[0]), OWN_APPLICATION_KEYS, "{body}");
        assert_eq!(own[0]["id"], application_id);
        assert_eq!(own[0]["status"], "active");
        assert_timestamp(&own[0]["created_at"]);
    }

    async fn talent_profile_nests_certificates_experiences_and_skills(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, ada) = app.user_session("ada@example.com").await;
        let form = json!({"headline": "Systems programmer"});
        let body = json(post(&app, &ada, "/identities/careers/user_profiles", &form).await,
                        StatusCode::CREATED).await;
        let created = assert_single(&body, "careers_user_profiles");
        assert_eq!(keys(created), TALENT_PROFILE_KEYS, "{body}");
        assert_eq!(created["headline"], "Systems programmer");
        for children in ["certificates", "experiences", "skills"] {
            assert_eq!(created[children], json!([]), "{body}");
        }
        let profile_id = created["id"].as_i64().unwrap();
        let (certificate_id, experience_id, skill_id) = fill_profile(&app, profile_id).await;
        let body = ok(get(&app, &ada, "/talent/careers/user_profile").await).await;
        let profile = assert_single(&body, "careers_user_profiles");
        assert_eq!(keys(profile), TALENT_PROFILE_KEYS, "{body}");
        assert_eq!(profile["id"], profile_id);
        assert_timestamp(&profile["created_at"]);
        assert_timestamp(&profile["updated_at"]);
        assert_eq!(keys(&profile["certificates"][0]), CERTIFICATE_KEYS, "{body}");
        assert_eq!(keys(&profile["experiences"][0]), EXPERIENCE_KEYS, "{body}");
        assert_eq!(keys(&profile["skills"][0]), SKILL_KEYS, "{body}");
        assert_eq!(
            profile["certificates"],
            json!([{"id": certificate_id, "name": "CKA", "issuer": "CNCF",
                    "issued_on": "2024-05-01"}])
        );
        assert_eq!(
            profile["experiences"],
            json!([{"id": experience_id, "job_title": "Engineer", "company_name": "Initech",
                    "started_on": "2020-01-01", "ended_on": null, "description": null}])
        );
        assert_eq!(profile["skills"], json!([{"id": skill_id, "name": "Rust"}]));
        let form = json!({"headline": "Rustacean"});
        let body = ok(patch(&app, &ada, "/talent/careers/user_profile", &form).await).await;
        let patched = assert_single(&body, "careers_user_profiles");
        assert_eq!(keys(patched), TALENT_PROFILE_KEYS, "{body}");
        assert_eq!(patched["headline"], "Rustacean");
        assert_eq!(patched["skills"], json!([{"id": skill_id, "name": "Rust"}]));
    }

    async fn admin_lists_have_their_model_shapes(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let ada = app.create_user("ada@example.com").await;
        let bob = plain_user(&app, "bob@example.com", "Bob", "Builder").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let body = ok(get(&app, &admin, "/admin-user/identities/users").await).await;
        let list = assert_list(&body, "identities_users");
        assert_eq!(ids(&body["identities_users"]), [ada, bob], "{body}");
        for user in list {
            assert_eq!(keys(user), USER_KEYS, "{body}");
        }
        // ?q= filters by name or e-mail.
        let body = ok(get(&app, &admin, "/admin-user/identities/users?q=builder").await).await;
        assert_eq!(ids(&body["identities_users"]), [bob], "{body}");
        assert_eq!(body["meta"]["total"], 1, "{body}");
        let body = ok(get(&app, &admin, "/admin-user/identities/users?q=ada%40exa").await).await;
        assert_eq!(ids(&body["identities_users"]), [ada], "{body}");

        let body = ok(get(&app, &admin, "/admin-user/org/companies").await).await;
        let list = assert_list(&body, "org_companies");
        assert_eq!(list.len(), 1, "{body}");
        assert_eq!(
            keys(&list[0]),
            ["created_at", "id", "name", "slug", "suspended_at", "updated_at", "website"],
            "{body}"
        );
        assert_eq!(list[0]["suspended_at"], Value::Null, "{body}");
        assert_eq!(list[0]["id"], acme);
        assert_eq!(list[0]["name"], "Acme");
        assert_timestamp(&list[0]["created_at"]);
        assert_eq!(body["meta"], json!({"page": 1, "per_page": 25, "total": 1}));
    }

    async fn pagination_slices_lists_in_order_and_reports_the_total(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let mut jobs = Vec::new();
        for n in 0..5 {
            jobs.push(job(&app, acme, &format!("Job {n}"), true).await);
        }
        job(&app, acme, "Draft", false).await;
        // The marketplace lists newest first.
        jobs.reverse();
        let path = "/marketplace/careers/jobs";
        let body = ok(get_anon(&app, path).await).await;
        assert_eq!(ids(&body["careers_jobs"]), jobs, "{body}");
        assert_eq!(page_meta(&body), json!({"page": 1, "per_page": 25, "total": 5}));
        let body = ok(get_anon(&app, &format!("{path}?per_page=2")).await).await;
        assert_eq!(ids(&body["careers_jobs"]), jobs[0..2], "{body}");
        assert_eq!(page_meta(&body), json!({"page": 1, "per_page": 2, "total": 5}));
        let body = ok(get_anon(&app, &format!("{path}?per_page=2&page=2")).await).await;
        assert_eq!(ids(&body["careers_jobs"]), jobs[2..4], "{body}");
        assert_eq!(page_meta(&body), json!({"page": 2, "per_page": 2, "total": 5}));
        let body = ok(get_anon(&app, &format!("{path}?per_page=2&page=3")).await).await;
        assert_eq!(ids(&body["careers_jobs"]), jobs[4..], "{body}");
        let body = ok(get_anon(&app, &format!("{path}?per_page=2&page=9")).await).await;
        assert_eq!(body["careers_jobs"], json!([]), "beyond the end: {body}");
        assert_eq!(page_meta(&body), json!({"page": 9, "per_page": 2, "total": 5}));
        let body = ok(get_anon(&app, &format!("{path}?per_page=100")).await).await;
        assert_eq!(body["meta"]["per_page"], 100, "{body}");
        let body = ok(get_anon(&app, &format!("{path}?per_page=1")).await).await;
        assert_eq!(ids(&body["careers_jobs"]), jobs[0..1], "{body}");

        // The same rules hold in the employer area.
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let path = "/org-user/careers/jobs?per_page=2&page=3";
        let body = ok(get(&app, &boss, path).await).await;
        assert_eq!(body["careers_jobs"].as_array().unwrap().len(), 2, "{body}");
        assert_eq!(body["meta"], json!({"page": 3, "per_page": 2, "total": 6}));
    }

    async fn out_of_range_pagination_is_a_malformed_request(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let queries = ["per_page=0", "per_page=101", "page=0", "page=-1", "per_page=abc",
                       "page=x"];
        for query in queries {
            let path = format!("/marketplace/careers/jobs?{query}");
            let response = get_anon(&app, &path).await;
            expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
            for path in ["/org/user-profiles", "/org-user/careers/job_applications"] {
                let response = get(&app, &boss, &format!("{path}?{query}")).await;
                expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
            }
            let path = format!("/admin-user/org/companies?{query}");
            let response = get(&app, &admin, &path).await;
            expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
        }
    }

    async fn password_digest_never_appears_in_any_response(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (boss_id, boss_profile, boss) =
            employer_with_profile(&app, "boss@acme.example", acme).await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (cara_id, profile_id, cara) = candidate(&app, "cara@example.com").await;
        fill_profile(&app, profile_id).await;
        let application_id = application(&app, job_id, profile_id).await;
        let (_, admin) = app.admin_session("grace@example.com").await;

        let mut bodies = Vec::new();
        let signup = json!({"email": "new@example.com", "password": "a-long-enough-password",
                            "first_name": "New", "last_name": "Comer", "phone_code": "+1",
                            "mobile": "5550100", "country": {"id": 1}});
        let response = app.request(reqwest::Method::POST, "/identities/users")
            .json(&signup).send().await.unwrap();
        bodies.push(("sign-up".to_string(), text(response, StatusCode::CREATED).await));
        let response = app.login_raw(&USER, "cara@example.com", PASSWORD).await;
        bodies.push(("login".to_string(), text(response, StatusCode::CREATED).await));
        let reads = [
            (&cara, format!("/identities/user/{cara_id}")),
            (&cara, "/talent/careers/user_profile".to_string()),
            (&cara, "/candidate/careers/job_applications".to_string()),
            (&cara, "/marketplace/careers/jobs".to_string()),
            (&cara, format!("/marketplace/careers/jobs/{job_id}")),
            (&boss, format!("/identities/user/{boss_id}")),
            (&boss, "/org/user-profiles".to_string()),
            (&boss, format!("/org/user-profiles/{boss_profile}")),
            (&boss, "/org-user/careers/jobs".to_string()),
            (&boss, "/org-user/careers/job_applications".to_string()),
            (&boss, format!("/org-user/careers/job_applications/{application_id}")),
            (&admin, "/admin-user/identities/users".to_string()),
            (&admin, "/admin-user/org/user-profiles".to_string()),
            (&admin, format!("/admin-user/org/user-profiles/{boss_profile}")),
        ];
        for (creds, path) in reads {
            bodies.push((path.clone(), text(get(&app, creds, &path).await, StatusCode::OK).await));
        }
        let path = format!("/identities/user/{cara_id}");
        let response = patch(&app, &cara, &path, &json!({"last_name": "Coder"})).await;
        bodies.push((path, text(response, StatusCode::OK).await));
        for (what, body) in bodies {
            assert!(!body.contains("password_digest"), "{what}: {body}");
            assert!(!body.contains("$argon2"), "{what}: {body}");
            assert!(!body.contains("a-long-enough-password"), "{what}: {body}");
        }
    }
}
