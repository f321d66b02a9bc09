//! Companies (CONTRACT §14): a verified user creates one and becomes its owner, slugs derived
//! or given, the company read by its members and edited by its owners and admins, the team's
//! list, search and suspension, what a suspension shuts and what it keeps, the public page,
//! racing creations, and the migration that gave the existing companies and members theirs.

use careers_api::areas::USER;
use careers_api::models::identities;
use chrono::Utc;
use reqwest::{Method, Response, StatusCode};
use sea_orm::{ActiveModelTrait, ConnectionTrait, Set};
use sea_orm_migration::MigratorTrait;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::data_layer::scalar;
use crate::fixtures::*;
use crate::helpers::*;

const CREATE: &str = "/identities/org/companies";
const OWN: &str = "/org/company";
const CURRENT_PROFILE: &str = "/org/user-profiles/current";
const TEAM: &str = "/admin-user/org/companies";
const PUBLIC: &str = "/marketplace/org/companies";
const MARKETPLACE_JOBS: &str = "/marketplace/careers/jobs";
const APPLY: &str = "/candidate/careers/job_applications";

/// `Org::Company` outside the team area (sorted).
const COMPANY_KEYS: [&str; 6] = ["created_at", "id", "name", "slug", "updated_at", "website"];
/// `Org::Company` in the team area, and a suspended company's own view (sorted).
const TEAM_KEYS: [&str; 7] = [
    "created_at",
    "id",
    "name",
    "slug",
    "suspended_at",
    "updated_at",
    "website",
];

async fn execute(app: &TestApp, sql: &str) {
    app.state.db.execute_unprepared(sql).await.unwrap();
}

async fn companies(app: &TestApp) -> i64 {
    count(app, "SELECT COUNT(*) FROM org_companies").await
}

async fn profiles_of(app: &TestApp, user_id: i64) -> i64 {
    let sql =
        format!("SELECT COUNT(*) FROM org_user_profiles WHERE identities_user_id = {user_id}");
    count(app, &sql).await
}

async fn slug_of(app: &TestApp, company_id: i64) -> String {
    scalar(
        app,
        &format!("SELECT slug FROM org_companies WHERE id = {company_id}"),
    )
    .await
}

async fn create(app: &TestApp, creds: &Creds, body: &Value) -> Response {
    post(app, creds, CREATE, body).await
}

/// A 201 of `POST /identities/org/companies` with exactly the company's keys; the company.
async fn created_from(response: Response) -> Value {
    let body = json(response, StatusCode::CREATED).await;
    assert_eq!(keys(&body), ["org_companies"], "{body}");
    let company = body["org_companies"].clone();
    assert_eq!(keys(&company), COMPANY_KEYS, "no suspended_at: {company}");
    company
}

async fn created(app: &TestApp, creds: &Creds, body: &Value) -> Value {
    created_from(create(app, creds, body).await).await
}

/// Lets a user create a company again: their org profile is deleted straight in the database.
async fn release(app: &TestApp, user_id: i64) {
    let sql = format!("DELETE FROM org_user_profiles WHERE identities_user_id = {user_id}");
    execute(app, &sql).await;
}

async fn set_verified(app: &TestApp, user_id: i64, verified: bool) {
    identities::user::entity::ActiveModel {
        id: Set(user_id),
        email_verified_at: Set(verified.then(Utc::now)),
        ..Default::default()
    }
    .update(&*app.state.db)
    .await
    .unwrap();
}

/// A logged-in user with an org profile of `role` at `company_id`.
async fn member_as(app: &TestApp, email: &str, company_id: i64, role: &str) -> (i64, Creds) {
    let user_id = app.create_user(email).await;
    org_profile_as(app, user_id, company_id, role, role).await;
    (user_id, app.login(&USER, email).await)
}

/// The `{"org_companies": Company}` of a 200, with exactly `expected` keys.
async fn one_company(response: Response, expected: &[&str]) -> Value {
    let body = ok(response).await;
    assert_eq!(keys(&body), ["org_companies"], "{body}");
    let company = body["org_companies"].clone();
    assert_eq!(keys(&company), expected, "{company}");
    company
}

fn assert_rfc3339(value: &Value) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("a timestamp: {value}"));
    assert!(
        chrono::DateTime::parse_from_rfc3339(text).is_ok(),
        "RFC 3339: {text}"
    );
}

async fn team_patch(app: &TestApp, admin: &Creds, id: i64, body: &Value) -> Response {
    patch(app, admin, &format!("{TEAM}/{id}"), body).await
}

/// Suspends (`true`) or unsuspends a company through the team's form; its team view.
async fn suspend(app: &TestApp, admin: &Creds, id: i64, suspended: bool) -> Value {
    let response = team_patch(app, admin, id, &json!({ "suspended": suspended })).await;
    one_company(response, &TEAM_KEYS).await
}

async fn marketplace_total(app: &TestApp) -> i64 {
    let body = ok(get_anon(app, MARKETPLACE_JOBS).await).await;
    body["meta"]["total"].as_i64().unwrap()
}

fn application_form(job_id: i64, profile_id: i64) -> Value {
    json!({"careers_job": {"id": job_id},
           "careers_user_profile": {"id": profile_id, "careers_experience": []},
           "cover_letter": "Hello"})
}

/// The team's list for `?q=`: the names in it, after checking `meta.total` against them.
async fn search(app: &TestApp, admin: &Creds, q: &str) -> Vec<String> {
    let path = format!("{TEAM}?q={}", urlencoding(q));
    let body = ok(get(app, admin, &path).await).await;
    let names: Vec<String> = items(&body["org_companies"])
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(body["meta"]["total"], names.len(), "q={q}: {body}");
    names
}

/// Percent-encodes a query value (every byte but unreserved ones).
fn urlencoding(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn id_named(app: &TestApp, name: &str) -> i64 {
    count(
        app,
        &format!("SELECT id FROM org_companies WHERE name = '{name}'"),
    )
    .await
}

async fn role_of(app: &TestApp, user_id: i64) -> String {
    let sql = format!("SELECT role FROM org_user_profiles WHERE identities_user_id = {user_id}");
    scalar(app, &sql).await
}

backend_tests! {
    async fn creating_a_company_makes_the_caller_its_owner(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, creds) = app.user_session("founder@example.com").await;
        expect_error(get(&app, &creds, CURRENT_PROFILE).await, StatusCode::FORBIDDEN, "forbidden").await;

        let form = json!({"name": "Société Générale", "website": "https://socgen.example"});
        let company = created(&app, &creds, &form).await;
        let id = company["id"].as_i64().expect("numeric id");
        assert_eq!(company["name"], "Société Générale");
        assert_eq!(company["slug"], "societe-generale");
        assert_eq!(company["website"], "https://socgen.example");
        assert_rfc3339(&company["created_at"]);
        assert_rfc3339(&company["updated_at"]);

        // The caller's org profile: owner, titled "Owner".
        let profile = ok(get(&app, &creds, CURRENT_PROFILE).await).await;
        assert_eq!(profile["role"], "owner", "{profile}");
        assert_eq!(profile["title"], "Owner", "{profile}");
        assert_eq!(profile["company"], json!({"id": id, "name": "Société Générale"}));
        assert_eq!(profile["identities_user"]["id"], user_id);
        let stored = format!(
            "SELECT COUNT(*) FROM org_user_profiles WHERE identities_user_id = {user_id} \
             AND company_id = {id} AND role = 'owner' AND title = 'Owner'"
        );
        assert_eq!(count(&app, &stored).await, 1);
        assert_eq!(companies(&app).await, 1);

        // Their company, and its public page.
        assert_eq!(one_company(get(&app, &creds, OWN).await, &COMPANY_KEYS).await, company);
        let public = ok(get_anon(&app, &format!("{PUBLIC}/societe-generale")).await).await;
        assert_eq!(public["org_companies"]["id"], id);
    }

    async fn creating_a_company_needs_a_verified_session(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, creds) = app.user_session("nora@example.com").await;
        set_verified(&app, user_id, false).await;
        let form = json!({"name": "Acme"});
        expect_error(create(&app, &creds, &form).await, StatusCode::FORBIDDEN, "email_unverified").await;
        let anonymous = app.request(Method::POST, CREATE).json(&form).send().await.unwrap();
        expect_error(anonymous, StatusCode::UNAUTHORIZED, "unauthenticated").await;
        let no_csrf = send_without_csrf(&app, &creds, Method::POST, CREATE, &form).await;
        expect_error(no_csrf, StatusCode::FORBIDDEN, "csrf_failed").await;
        assert_eq!(companies(&app).await, 0);
        assert_eq!(profiles_of(&app, user_id).await, 0);

        // Verified, the same request creates it.
        set_verified(&app, user_id, true).await;
        assert_eq!(created(&app, &creds, &form).await["slug"], "acme");
        assert_eq!(profiles_of(&app, user_id).await, 1);
    }

    async fn a_user_with_an_org_profile_may_not_create_a_company(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (owner_id, owner) = employer(&app, "boss@acme.example", acme).await;
        let (member_id, member) = member_as(&app, "staff@acme.example", acme, "member").await;
        for (user_id, creds) in [(owner_id, &owner), (member_id, &member)] {
            for form in [json!({"name": "Second"}), json!({"name": "Second", "slug": "second"})] {
                expect_error(create(&app, creds, &form).await, StatusCode::CONFLICT, "conflict").await;
            }
            assert_eq!(companies(&app).await, 1, "no company stored");
            assert_eq!(profiles_of(&app, user_id).await, 1);
            let profile = ok(get(&app, creds, CURRENT_PROFILE).await).await;
            assert_eq!(profile["company"]["id"], acme, "{profile}");
        }
    }

    async fn derived_slugs_are_transliterated_and_take_the_next_free_suffix(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, creds) = app.user_session("founder@example.com").await;
        let long_a = "a".repeat(120);
        let long_upper = "A".repeat(120);
        let cut_at_hyphen = format!("{} bcd", "a".repeat(89));
        let cases = [
            ("Société Générale", "societe-generale".to_owned()),
            ("SOCIÉTÉ GÉNÉRALE", "societe-generale-2".to_owned()),
            ("Societe -- Generale!", "societe-generale-3".to_owned()),
            ("  Acme, Inc. -- (EU) ", "acme-inc-eu".to_owned()),
            ("!!!", "company".to_owned()),
            ("***", "company-2".to_owned()),
            (long_a.as_str(), "a".repeat(90)),
            (long_upper.as_str(), format!("{}-2", "a".repeat(90))),
            (cut_at_hyphen.as_str(), "a".repeat(89)),
        ];
        for (name, slug) in cases {
            let company = created(&app, &creds, &json!({ "name": name })).await;
            assert_eq!(company["slug"], slug.as_str(), "{name}");
            assert_eq!(company["name"], name);
            assert_eq!(slug_of(&app, company["id"].as_i64().unwrap()).await, slug, "stored");
            release(&app, user_id).await;
        }
    }

    async fn companies_may_share_a_name(backend) {
        // The contract makes the slug unique, not the name: a second company of the same name
        // gets `-2`, a third `-3`; a company may be renamed to another's name.
        let app = TestApp::spawn(backend).await;
        let (user_id, creds) = app.user_session("founder@example.com").await;
        for slug in ["societe-generale", "societe-generale-2", "societe-generale-3"] {
            let response = create(&app, &creds, &json!({"name": "Société Générale"})).await;
            assert_eq!(created_from(response).await["slug"], slug);
            release(&app, user_id).await;
        }
        let globex = created(&app, &creds, &json!({"name": "Globex"})).await;
        let renamed = patch(&app, &creds, OWN, &json!({"name": "Société Générale"})).await;
        let renamed = one_company(renamed, &COMPANY_KEYS).await;
        assert_eq!(renamed["name"], "Société Générale");
        assert_eq!(renamed["slug"], globex["slug"], "a rename keeps the slug");
        // Two users creating companies of one name at once both succeed, with distinct slugs.
        let (_, other) = app.user_session("other@example.com").await;
        release(&app, user_id).await;
        let form = json!({"name": "Initech"});
        let (first, second) = tokio::join!(create(&app, &creds, &form), create(&app, &other, &form));
        let (first, second) = (created_from(first).await, created_from(second).await);
        let mut slugs = [first["slug"].as_str().unwrap(), second["slug"].as_str().unwrap()];
        slugs.sort_unstable();
        assert_eq!(slugs, ["initech", "initech-2"]);
    }

    async fn a_given_slug_is_kept_and_a_taken_one_is_a_conflict(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, first) = app.user_session("first@example.com").await;
        let (second_id, second) = app.user_session("second@example.com").await;
        let company = created(&app, &first, &json!({"name": "Acme", "slug": "acme-eu"})).await;
        assert_eq!(company["slug"], "acme-eu");

        let taken = json!({"name": "Other", "slug": "acme-eu"});
        expect_error(create(&app, &second, &taken).await, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(companies(&app).await, 1, "no company stored");
        assert_eq!(profiles_of(&app, second_id).await, 0, "no profile stored");
        expect_error(get(&app, &second, CURRENT_PROFILE).await, StatusCode::FORBIDDEN, "forbidden").await;

        // The longest slug the contract allows.
        let longest = "b".repeat(100);
        let company = created(&app, &second, &json!({"name": "Other", "slug": longest})).await;
        assert_eq!(company["slug"], longest.as_str());
    }

    async fn the_company_form_is_validated(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, creds) = app.user_session("founder@example.com").await;
        let long_url = format!("https://{}.example", "a".repeat(490));
        let cases = [
            (json!({}), vec!["name"]),
            (json!({"website": "https://acme.example"}), vec!["name"]),
            (json!({"name": ""}), vec!["name"]),
            (json!({"name": "x".repeat(201)}), vec!["name"]),
            (json!({"name": "Acme", "slug": "Bad Slug"}), vec!["slug"]),
            (json!({"name": "Acme", "slug": "a--b"}), vec!["slug"]),
            (json!({"name": "Acme", "slug": "-a"}), vec!["slug"]),
            (json!({"name": "Acme", "slug": "a-"}), vec!["slug"]),
            (json!({"name": "Acme", "slug": "a_b"}), vec!["slug"]),
            (json!({"name": "Acme", "slug": ""}), vec!["slug"]),
            (json!({"name": "Acme", "slug": "a".repeat(101)}), vec!["slug"]),
            (json!({"name": "Acme", "website": "ftp://x"}), vec!["website"]),
            (json!({"name": "Acme", "website": "acme.example"}), vec!["website"]),
            (json!({"name": "Acme", "website": "https://"}), vec!["website"]),
            (json!({"name": "Acme", "website": long_url}), vec!["website"]),
            (json!({"name": "", "website": "ftp://x", "slug": "a--b"}), vec!["name", "slug", "website"]),
        ];
        for (form, fields) in cases {
            let body = expect_fields(create(&app, &creds, &form).await, &fields).await;
            assert!(body["error"]["fields"].is_object(), "{form}: {body}");
        }
        let wrong_type = create(&app, &creds, &json!({"name": 5})).await;
        expect_error(wrong_type, StatusCode::BAD_REQUEST, "malformed_request").await;
        assert_eq!(companies(&app).await, 0, "nothing stored");
        assert_eq!(profiles_of(&app, user_id).await, 0);

        // The limits themselves pass: 200 characters (not bytes), a null website.
        let name = "é".repeat(200);
        let company = created(&app, &creds, &json!({"name": name, "website": null})).await;
        assert_eq!(company["name"], name.as_str());
        assert_eq!(company["website"], Value::Null);
        assert_eq!(company["slug"], "e".repeat(90).as_str());
        release(&app, user_id).await;
        let url = format!("http://{}.example", "a".repeat(485));
        assert_eq!(url.len(), 500);
        let company = created(&app, &creds, &json!({"name": "Long URL", "website": url})).await;
        assert_eq!(company["website"], url.as_str());
    }

    async fn every_member_reads_the_company_and_owners_and_admins_edit_it(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, owner) = app.user_session("owner@acme.example").await;
        let form = json!({"name": "Acme", "website": "https://acme.example"});
        let company = created(&app, &owner, &form).await;
        let id = company["id"].as_i64().unwrap();
        let (_, admin) = member_as(&app, "admin@acme.example", id, "admin").await;
        let (_, member) = member_as(&app, "member@acme.example", id, "member").await;
        let (_, stranger) = app.user_session("stranger@example.com").await;
        company_with(&app, "Globex", "globex", None).await;

        for creds in [&owner, &admin, &member] {
            assert_eq!(one_company(get(&app, creds, OWN).await, &COMPANY_KEYS).await, company);
        }
        expect_error(get(&app, &stranger, OWN).await, StatusCode::FORBIDDEN, "forbidden").await;

        // A member may not edit it.
        let hacked = patch(&app, &member, OWN, &json!({"name": "Hacked"})).await;
        expect_error(hacked, StatusCode::FORBIDDEN, "forbidden").await;
        let hacked = patch(&app, &stranger, OWN, &json!({"name": "Hacked"})).await;
        expect_error(hacked, StatusCode::FORBIDDEN, "forbidden").await;
        assert_eq!(scalar(&app, &format!("SELECT name FROM org_companies WHERE id = {id}")).await, "Acme");

        // An admin and an owner may; a PATCH keeps what it does not send.
        let renamed = one_company(patch(&app, &admin, OWN, &json!({"name": "Acme Corp"})).await, &COMPANY_KEYS).await;
        assert_eq!(
            (&renamed["id"], &renamed["name"], &renamed["slug"], &renamed["website"]),
            (&json!(id), &json!("Acme Corp"), &json!("acme"), &json!("https://acme.example"))
        );
        let moved = one_company(patch(&app, &owner, OWN, &json!({"slug": "acme-corp"})).await, &COMPANY_KEYS).await;
        assert_eq!((&moved["name"], &moved["slug"]), (&json!("Acme Corp"), &json!("acme-corp")));
        assert_eq!(moved["website"], "https://acme.example");
        let unchanged = one_company(patch(&app, &owner, OWN, &json!({})).await, &COMPANY_KEYS).await;
        assert_eq!((&unchanged["name"], &unchanged["slug"], &unchanged["website"]),
                   (&moved["name"], &moved["slug"], &moved["website"]));

        // `website: null` clears it.
        let cleared = one_company(patch(&app, &admin, OWN, &json!({"website": null})).await, &COMPANY_KEYS).await;
        assert_eq!(cleared["website"], Value::Null);
        assert_eq!((&cleared["name"], &cleared["slug"]), (&json!("Acme Corp"), &json!("acme-corp")));
        let null_website = format!("SELECT COUNT(*) FROM org_companies WHERE id = {id} AND website IS NULL");
        assert_eq!(count(&app, &null_website).await, 1);
        let set = one_company(patch(&app, &owner, OWN, &json!({"website": "https://acme.example/jobs"})).await, &COMPANY_KEYS).await;
        assert_eq!(set["website"], "https://acme.example/jobs");

        // The form's rules, and a slug another company has.
        for (form, field) in [
            (json!({"name": ""}), "name"),
            (json!({"name": "x".repeat(201)}), "name"),
            (json!({"slug": "Bad Slug"}), "slug"),
            (json!({"slug": "a--b"}), "slug"),
            (json!({"website": "ftp://x"}), "website"),
        ] {
            expect_fields(patch(&app, &owner, OWN, &form).await, &[field]).await;
        }
        for creds in [&owner, &admin] {
            let taken = patch(&app, creds, OWN, &json!({"slug": "globex"})).await;
            expect_error(taken, StatusCode::CONFLICT, "conflict").await;
        }
        assert_eq!(slug_of(&app, id).await, "acme-corp");
        let same = one_company(patch(&app, &owner, OWN, &json!({"slug": "acme-corp"})).await, &COMPANY_KEYS).await;
        assert_eq!(same["slug"], "acme-corp", "its own slug is not a clash");
        let stored = format!("SELECT COUNT(*) FROM org_companies WHERE id = {id} AND name = 'Acme Corp' \
                              AND website = 'https://acme.example/jobs'");
        assert_eq!(count(&app, &stored).await, 1);

        // The public page follows the slug.
        expect_error(get_anon(&app, &format!("{PUBLIC}/acme")).await, StatusCode::NOT_FOUND, "not_found").await;
        ok(get_anon(&app, &format!("{PUBLIC}/acme-corp")).await).await;
    }

    async fn the_team_lists_and_searches_companies(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let acme = company_with(&app, "Acme Widgets", "acme-widgets", Some("https://acme.example")).await;
        company_with(&app, "Globex", "gx-corp", None).await;
        company_with(&app, "100% Pure", "hundred-pure", None).await;
        company_with(&app, "snake_case Ltd", "snake-case-ltd", None).await;

        let body = ok(get(&app, &admin, TEAM).await).await;
        assert_eq!(keys(&body), ["meta", "org_companies"], "{body}");
        assert_eq!(body["meta"]["total"], 4, "{body}");
        for company in items(&body["org_companies"]) {
            assert_eq!(keys(company), TEAM_KEYS, "{company}");
            assert_eq!(company["suspended_at"], Value::Null, "{company}");
        }
        let first = &items(&body["org_companies"])[0];
        assert_eq!(first["id"], acme);
        assert_eq!(first["slug"], "acme-widgets");
        assert_eq!(first["website"], "https://acme.example");

        // `?q=`: a substring of the name or the slug, case-insensitive; `%` and `_` literal.
        assert_eq!(search(&app, &admin, "ACME").await, ["Acme Widgets"]);
        assert_eq!(search(&app, &admin, "widg").await, ["Acme Widgets"]);
        assert_eq!(search(&app, &admin, "GX-C").await, ["Globex"], "by slug");
        assert_eq!(search(&app, &admin, "pure").await, ["100% Pure"]);
        assert_eq!(search(&app, &admin, "%").await, ["100% Pure"]);
        assert_eq!(search(&app, &admin, "0%").await, ["100% Pure"]);
        assert_eq!(search(&app, &admin, "_").await, ["snake_case Ltd"]);
        assert_eq!(search(&app, &admin, "e_c").await, ["snake_case Ltd"]);
        assert_eq!(search(&app, &admin, "E-C").await, ["snake_case Ltd"], "by slug");
        assert_eq!(search(&app, &admin, "zzz").await, Vec::<String>::new());
        assert_eq!(search(&app, &admin, "").await.len(), 4, "an empty q filters nothing");
    }

    async fn the_team_reads_edits_and_suspends_a_company(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let acme = company_with(&app, "Acme", "acme", Some("https://acme.example")).await;
        company_with(&app, "Globex", "globex", None).await;

        let path = format!("{TEAM}/{acme}");
        let company = one_company(get(&app, &admin, &path).await, &TEAM_KEYS).await;
        assert_eq!(company["id"], acme);
        assert_eq!(company["slug"], "acme");
        assert_eq!(company["website"], "https://acme.example");
        assert_eq!(company["suspended_at"], Value::Null);
        expect_error(get(&app, &admin, &format!("{TEAM}/999999")).await, StatusCode::NOT_FOUND, "not_found").await;
        expect_error(get(&app, &admin, &format!("{TEAM}/abc")).await, StatusCode::BAD_REQUEST, "malformed_request").await;

        // Suspending sets `suspended_at`; the list and the record say so.
        let suspended = suspend(&app, &admin, acme, true).await;
        assert_rfc3339(&suspended["suspended_at"]);
        assert_eq!((&suspended["name"], &suspended["slug"]), (&json!("Acme"), &json!("acme")));
        let read = one_company(get(&app, &admin, &path).await, &TEAM_KEYS).await;
        assert_eq!(read["suspended_at"], suspended["suspended_at"]);
        let list = ok(get(&app, &admin, TEAM).await).await;
        let listed = items(&list["org_companies"]).iter().find(|c| c["id"] == acme).unwrap().clone();
        assert_eq!(listed["suspended_at"], suspended["suspended_at"]);
        let flagged = "SELECT COUNT(*) FROM org_companies WHERE suspended_at IS NOT NULL";
        assert_eq!(count(&app, flagged).await, 1);

        // Unsuspending clears it.
        let lifted = suspend(&app, &admin, acme, false).await;
        assert_eq!(lifted["suspended_at"], Value::Null);
        assert_eq!(count(&app, flagged).await, 0);
        assert_eq!(one_company(get(&app, &admin, &path).await, &TEAM_KEYS).await["suspended_at"], Value::Null);

        // The team's edits: the company's form, a PATCH keeping what it does not send.
        let edited = one_company(team_patch(&app, &admin, acme, &json!({"name": "Acme Corp"})).await, &TEAM_KEYS).await;
        assert_eq!((&edited["name"], &edited["slug"], &edited["website"]),
                   (&json!("Acme Corp"), &json!("acme"), &json!("https://acme.example")));
        let taken = team_patch(&app, &admin, acme, &json!({"slug": "globex"})).await;
        expect_error(taken, StatusCode::CONFLICT, "conflict").await;
        expect_fields(team_patch(&app, &admin, acme, &json!({"slug": "Bad Slug"})).await, &["slug"]).await;
        let malformed = team_patch(&app, &admin, acme, &json!({"suspended": "yes"})).await;
        expect_error(malformed, StatusCode::BAD_REQUEST, "malformed_request").await;
        let unknown = team_patch(&app, &admin, 999_999, &json!({"suspended": true})).await;
        expect_error(unknown, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(slug_of(&app, acme).await, "acme");
        assert_eq!(count(&app, flagged).await, 0);
    }

    async fn a_suspended_companys_members_are_shut_out_but_may_see_themselves_and_leave(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let acme = company_with(&app, "Acme", "acme", None).await;
        let globex = company_with(&app, "Globex", "globex", None).await;
        let (_, owner) = member_as(&app, "owner@acme.example", acme, "owner").await;
        let (leaver_id, leaver) = member_as(&app, "leaver@acme.example", acme, "member").await;
        let (_, staff) = member_as(&app, "staff@acme.example", acme, "admin").await;
        let (_, other) = member_as(&app, "owner@globex.example", globex, "owner").await;
        job(&app, acme, "Rust engineer", true).await;
        job(&app, acme, "Draft", false).await;
        let invite = json!({"email": "new@example.com"});

        let suspended = suspend(&app, &admin, acme, true).await;
        let blocked: [(&Creds, Method, &str, Value); 7] = [
            (&owner, Method::GET, "/org/user-profiles", Value::Null),
            (&staff, Method::GET, "/org/user-profiles", Value::Null),
            (&owner, Method::GET, "/org-user/careers/jobs", Value::Null),
            (&owner, Method::GET, "/org-user/careers/job_applications", Value::Null),
            (&owner, Method::GET, "/org/invitations", Value::Null),
            (&owner, Method::POST, "/org/invitations", invite.clone()),
            (&owner, Method::PATCH, OWN, json!({"name": "Renamed"})),
        ];
        for (creds, method, path, body) in &blocked {
            let response = if *method == Method::GET {
                get(&app, creds, path).await
            } else {
                send(&app, creds, method.clone(), path, body).await
            };
            expect_error(response, StatusCode::FORBIDDEN, "company_suspended").await;
        }
        let new_job = json!({"title": "Sneaky", "company": {"id": acme}});
        let posted = post(&app, &staff, "/org-user/careers/jobs", &new_job).await;
        expect_error(posted, StatusCode::FORBIDDEN, "company_suspended").await;

        // Their company, with `suspended_at`; their own profile.
        for creds in [&owner, &leaver, &staff] {
            let own = one_company(get(&app, creds, OWN).await, &TEAM_KEYS).await;
            assert_eq!(own["suspended_at"], suspended["suspended_at"]);
            assert_eq!(own["id"], acme);
            let profile = ok(get(&app, creds, CURRENT_PROFILE).await).await;
            assert_eq!(profile["company"]["id"], acme, "{profile}");
        }
        // Another company's members are not touched.
        ok(get(&app, &other, "/org/user-profiles").await).await;
        assert_eq!(one_company(get(&app, &other, OWN).await, &COMPANY_KEYS).await["id"], globex);

        // A member may still leave.
        let left = send(&app, &leaver, Method::DELETE, CURRENT_PROFILE, &json!({})).await;
        assert_eq!(left.status(), StatusCode::NO_CONTENT);
        assert_eq!(profiles_of(&app, leaver_id).await, 0);
        expect_error(get(&app, &leaver, OWN).await, StatusCode::FORBIDDEN, "forbidden").await;

        // Nothing is deleted.
        assert_eq!(count(&app, &format!("SELECT COUNT(*) FROM careers_jobs WHERE company_id = {acme}")).await, 2);
        assert_eq!(count(&app, &format!("SELECT COUNT(*) FROM org_user_profiles WHERE company_id = {acme}")).await, 2);
        assert_eq!(companies(&app).await, 2);

        // Unsuspended, everything is back, and the company's own view drops `suspended_at`.
        suspend(&app, &admin, acme, false).await;
        let profiles = ok(get(&app, &owner, "/org/user-profiles").await).await;
        assert_eq!(items(&profiles["org_user_profiles"]).len(), 2, "{profiles}");
        let jobs = ok(get(&app, &owner, "/org-user/careers/jobs").await).await;
        assert_eq!(items(&jobs["careers_jobs"]).len(), 2, "{jobs}");
        json(post(&app, &owner, "/org/invitations", &invite).await, StatusCode::CREATED).await;
        let renamed = patch(&app, &staff, OWN, &json!({"name": "Renamed"})).await;
        assert_eq!(one_company(renamed, &COMPANY_KEYS).await["name"], "Renamed");
        one_company(get(&app, &owner, OWN).await, &COMPANY_KEYS).await;
    }

    async fn a_suspended_companys_jobs_and_page_leave_the_marketplace(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let acme = company_with(&app, "Acme", "acme", None).await;
        let globex = company_with(&app, "Globex", "globex", None).await;
        let (_, owner) = member_as(&app, "owner@acme.example", acme, "owner").await;
        let acme_job = job(&app, acme, "Rust engineer", true).await;
        let second_job = job(&app, acme, "Go engineer", true).await;
        let globex_job = job(&app, globex, "Analyst", true).await;
        let (_, profile_id, cara) = candidate(&app, "cara@example.com").await;
        let (_, invitee) = app.user_session("invitee@example.com").await;
        let invitation = json(post(&app, &owner, "/org/invitations", &json!({"email": "invitee@example.com"})).await,
                              StatusCode::CREATED).await;
        let invitation_id = invitation["org_invitations"]["id"].as_i64().unwrap();
        assert_eq!(marketplace_total(&app).await, 3);

        suspend(&app, &admin, acme, true).await;
        assert_eq!(marketplace_total(&app).await, 1, "its jobs are left out");
        let list = ok(get(&app, &cara, MARKETPLACE_JOBS).await).await;
        assert_eq!(ids(&list["careers_jobs"]), [globex_job], "{list}");
        assert_eq!(list["meta"]["total"], 1);
        for id in [acme_job, second_job] {
            let one = get_anon(&app, &format!("{MARKETPLACE_JOBS}/{id}")).await;
            expect_error(one, StatusCode::NOT_FOUND, "not_found").await;
        }
        ok(get_anon(&app, &format!("{MARKETPLACE_JOBS}/{globex_job}")).await).await;
        expect_error(get_anon(&app, &format!("{PUBLIC}/acme")).await, StatusCode::NOT_FOUND, "not_found").await;
        ok(get_anon(&app, &format!("{PUBLIC}/globex")).await).await;

        // Applying is 422 on the job; accepting an invitation to it is 409.
        let applied = post(&app, &cara, APPLY, &application_form(acme_job, profile_id)).await;
        expect_fields(applied, &["careers_job.id"]).await;
        assert_eq!(count(&app, "SELECT COUNT(*) FROM careers_job_applications").await, 0);
        let accept = patch(&app, &invitee, &format!("/identities/org/invitations/{invitation_id}"),
                           &json!({"status": "accepted"})).await;
        expect_error(accept, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(count(&app, &format!("SELECT COUNT(*) FROM org_user_profiles WHERE company_id = {acme}")).await, 1);

        // Nothing is deleted; unsuspended, everything is back.
        assert_eq!(count(&app, &format!("SELECT COUNT(*) FROM careers_jobs WHERE company_id = {acme}")).await, 2);
        suspend(&app, &admin, acme, false).await;
        assert_eq!(marketplace_total(&app).await, 3);
        let one = ok(get_anon(&app, &format!("{MARKETPLACE_JOBS}/{acme_job}")).await).await;
        assert_eq!(one["careers_jobs"]["id"], acme_job);
        let page = ok(get_anon(&app, &format!("{PUBLIC}/acme")).await).await;
        assert_eq!(page["org_companies"]["id"], acme);
        let applied = post(&app, &cara, APPLY, &application_form(acme_job, profile_id)).await;
        json(applied, StatusCode::CREATED).await;
        let accept = patch(&app, &invitee, &format!("/identities/org/invitations/{invitation_id}"),
                           &json!({"status": "accepted"})).await;
        ok(accept).await;
        assert_eq!(count(&app, &format!("SELECT COUNT(*) FROM org_user_profiles WHERE company_id = {acme}")).await, 2);
    }

    async fn the_public_company_page_shows_only_the_public_fields(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company_with(&app, "Acme", "acme", Some("https://acme.example")).await;
        company_with(&app, "Globex", "globex", None).await;
        let body = ok(get_anon(&app, &format!("{PUBLIC}/acme")).await).await;
        assert_eq!(keys(&body), ["org_companies"], "{body}");
        assert_eq!(
            body["org_companies"],
            json!({"id": acme, "name": "Acme", "slug": "acme", "website": "https://acme.example"})
        );
        let globex = ok(get_anon(&app, &format!("{PUBLIC}/globex")).await).await;
        assert_eq!(keys(&globex["org_companies"]), ["id", "name", "slug", "website"]);
        assert_eq!(globex["org_companies"]["website"], Value::Null);
        // A user's cookie changes nothing; an unknown slug is 404.
        let (_, creds) = app.user_session("ada@example.com").await;
        assert_eq!(ok(get(&app, &creds, &format!("{PUBLIC}/acme")).await).await, body);
        for slug in ["initech", "acme-2", "acm"] {
            let missing = get_anon(&app, &format!("{PUBLIC}/{slug}")).await;
            expect_error(missing, StatusCode::NOT_FOUND, "not_found").await;
        }
    }

    async fn racing_creations_deriving_one_slug_both_succeed_with_distinct_slugs(backend) {
        let app = TestApp::spawn(backend).await;
        let (first_id, first) = app.user_session("first@example.com").await;
        let (second_id, second) = app.user_session("second@example.com").await;
        for round in 1..=4 {
            // Two names that derive the same slug.
            let a = json!({ "name": format!("Race Co {round}") });
            let b = json!({ "name": format!("RACE CO {round}!") });
            let (one, two) = tokio::join!(create(&app, &first, &a), create(&app, &second, &b));
            let (one, two) = (created_from(one).await, created_from(two).await);
            let mut slugs = [one["slug"].as_str().unwrap().to_owned(), two["slug"].as_str().unwrap().to_owned()];
            slugs.sort_unstable();
            assert_eq!(slugs, [format!("race-co-{round}"), format!("race-co-{round}-2")], "round {round}");
            assert_eq!(profiles_of(&app, first_id).await, 1);
            assert_eq!(profiles_of(&app, second_id).await, 1);
            release(&app, first_id).await;
            release(&app, second_id).await;
        }
        assert_eq!(companies(&app).await, 8);
    }

    async fn racing_creations_with_one_given_slug_let_exactly_one_through(backend) {
        let app = TestApp::spawn(backend).await;
        let (first_id, first) = app.user_session("first@example.com").await;
        let (second_id, second) = app.user_session("second@example.com").await;
        for round in 1..=4 {
            let slug = format!("contested-{round}");
            let a = json!({ "name": format!("First {round}"), "slug": slug });
            let b = json!({ "name": format!("Second {round}"), "slug": slug });
            let (one, two) = tokio::join!(create(&app, &first, &a), create(&app, &second, &b));
            let mut statuses = [one.status(), two.status()];
            statuses.sort_unstable();
            assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CONFLICT], "round {round}");
            let (winner, loser) = if one.status() == StatusCode::CREATED { (one, two) } else { (two, one) };
            expect_error(loser, StatusCode::CONFLICT, "conflict").await;
            assert_eq!(created_from(winner).await["slug"], slug.as_str());
            let holders = format!("SELECT COUNT(*) FROM org_companies WHERE slug = '{slug}'");
            assert_eq!(count(&app, &holders).await, 1);
            assert_eq!(profiles_of(&app, first_id).await + profiles_of(&app, second_id).await, 1,
                       "only the winner has a profile");
            release(&app, first_id).await;
            release(&app, second_id).await;
        }
        assert_eq!(companies(&app).await, 4);
    }

    async fn one_user_racing_two_creations_gets_one_company(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, creds) = app.user_session("founder@example.com").await;
        for round in 1..=4 {
            let a = json!({ "name": format!("Twin A {round}") });
            let b = json!({ "name": format!("Twin B {round}") });
            let (one, two) = tokio::join!(create(&app, &creds, &a), create(&app, &creds, &b));
            let mut statuses = [one.status(), two.status()];
            statuses.sort_unstable();
            assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CONFLICT], "round {round}");
            assert_eq!(companies(&app).await, round, "the loser's company is not stored");
            assert_eq!(profiles_of(&app, user_id).await, 1);
            release(&app, user_id).await;
        }
    }

    async fn the_companies_migration_derives_slugs_and_makes_the_oldest_member_owner(backend) {
        let app = TestApp::spawn(backend).await;
        let users = [
            plain_user(&app, "u1@example.com", "U", "One").await,
            plain_user(&app, "u2@example.com", "U", "Two").await,
            plain_user(&app, "u3@example.com", "U", "Three").await,
        ];
        let db = &*app.state.db;
        careers_api::db::Migrator::down(db, Some(9)).await.unwrap();
        // Names were unique before the migration: "ACME" derives the same slug as "Acme".
        for name in ["Acme", "ACME", "!!!"] {
            execute(&app, &format!(
                "INSERT INTO org_companies (name, created_at, updated_at) \
                 VALUES ('{name}', '2024-01-01T00:00:00+00:00', '2024-01-01T00:00:00+00:00')"
            )).await;
        }
        let (acme, acme_upper, bangs) =
            (id_named(&app, "Acme").await, id_named(&app, "ACME").await, id_named(&app, "!!!").await);
        assert!(acme < acme_upper);
        for (user, company, at) in [
            (users[0], acme, "2024-01-02T00:00:00+00:00"),
            (users[1], acme, "2024-01-03T00:00:00+00:00"),
            (users[2], acme_upper, "2024-01-04T00:00:00+00:00"),
        ] {
            execute(&app, &format!(
                "INSERT INTO org_user_profiles (identities_user_id, company_id, title, created_at, updated_at) \
                 VALUES ({user}, {company}, 'Recruiter', '{at}', '{at}')"
            )).await;
        }

        careers_api::db::Migrator::up(db, None).await.unwrap();
        assert_eq!(slug_of(&app, acme).await, "acme");
        assert_eq!(slug_of(&app, acme_upper).await, "acme-2");
        assert_eq!(slug_of(&app, bangs).await, "company");
        assert_eq!(role_of(&app, users[0]).await, "owner", "the oldest of Acme");
        assert_eq!(role_of(&app, users[1]).await, "member");
        assert_eq!(role_of(&app, users[2]).await, "owner", "the only one of ACME");
        // The slugs serve the public pages and stay unique.
        let page = ok(get_anon(&app, &format!("{PUBLIC}/acme-2")).await).await;
        assert_eq!(page["org_companies"]["id"], acme_upper);
        let duplicate = db.execute_unprepared(&format!(
            "UPDATE org_companies SET slug = 'acme' WHERE id = {acme_upper}"
        )).await;
        assert!(duplicate.is_err(), "the slug is unique in the database");
    }

    async fn the_companies_migration_takes_the_oldest_profile_by_creation_time(backend) {
        // "The oldest of each company becomes owner": by creation time, whatever the ids say.
        let app = TestApp::spawn(backend).await;
        let first = plain_user(&app, "u1@example.com", "U", "One").await;
        let second = plain_user(&app, "u2@example.com", "U", "Two").await;
        let db = &*app.state.db;
        careers_api::db::Migrator::down(db, Some(9)).await.unwrap();
        execute(&app, "INSERT INTO org_companies (name, created_at, updated_at) \
                       VALUES ('Acme', '2024-01-01T00:00:00+00:00', '2024-01-01T00:00:00+00:00')").await;
        let acme = id_named(&app, "Acme").await;
        for (user, at) in [(first, "2024-03-01T00:00:00+00:00"), (second, "2024-02-01T00:00:00+00:00")] {
            execute(&app, &format!(
                "INSERT INTO org_user_profiles (identities_user_id, company_id, title, created_at, updated_at) \
                 VALUES ({user}, {acme}, 'Recruiter', '{at}', '{at}')"
            )).await;
        }
        careers_api::db::Migrator::up(db, None).await.unwrap();
        assert_eq!(role_of(&app, second).await, "owner", "created first, inserted second");
        assert_eq!(role_of(&app, first).await, "member");
    }
}
