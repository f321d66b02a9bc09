//! Members and roles (CONTRACT §14): the role matrix cell by cell, `role` in every org profile
//! response, the caller's own profile and leaving, the last-owner rule (and its races), one org
//! profile per user whichever form writes it, and a member removed mid-session.

use std::sync::atomic::{AtomicU64, Ordering};

use careers_api::areas::USER;
use careers_api::models::org::invitation;
use futures::future::join_all;
use reqwest::{Response, StatusCode};
use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::data_layer::scalar;
use crate::fixtures::*;
use crate::helpers::*;

const PROFILES: &str = "/org/user-profiles";
const CURRENT: &str = "/org/user-profiles/current";
const TEAM_PROFILES: &str = "/admin-user/org/user-profiles";
const INVITATIONS: &str = "/org/invitations";
const JOBS: &str = "/org-user/careers/jobs";
const APPLICATIONS: &str = "/org-user/careers/job_applications";

/// An org profile's keys (CONTRACT §5 plus §14's `role`).
const PROFILE_KEYS: [&str; 7] = [
    "company",
    "created_at",
    "id",
    "identities_user",
    "role",
    "title",
    "updated_at",
];

/// A fresh e-mail address for `tag`.
fn unique(tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    format!("{tag}-{}@acme.example", N.fetch_add(1, Ordering::Relaxed))
}

/// A colleague who never logs in, with role `role` at `company`: (user id, org profile id).
async fn colleague(app: &TestApp, company_id: i64, role: &str) -> (i64, i64) {
    let user_id = plain_user(app, &unique(role), "Col", "League").await;
    let profile_id = org_profile_as(app, user_id, company_id, "Colleague", role).await;
    (user_id, profile_id)
}

/// A logged-in member with role `role` at `company_id`: (user id, org profile id, creds).
async fn member_session(app: &TestApp, company_id: i64, role: &str) -> (i64, i64, Creds) {
    let email = unique(&format!("{role}-session"));
    let user_id = app.create_user(&email).await;
    let profile_id = org_profile_as(app, user_id, company_id, "Staff", role).await;
    (user_id, profile_id, app.login(&USER, &email).await)
}

/// A pending invitation row (no message, a token hash nobody knows).
async fn invitation_row(app: &TestApp, company_id: i64, email: &str, role: &str) -> i64 {
    let now = app.state.now();
    invitation::entity::ActiveModel {
        company_id: Set(company_id),
        email: Set(email.into()),
        role: Set(role.into()),
        status: Set("pending".into()),
        token_hash: Set(format!("not-a-real-hash-{}", random_suffix())),
        expires_at: Set(now + chrono::Duration::days(7)),
        inviter_id: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&*app.state.db)
    .await
    .unwrap()
    .id
}

async fn profile_count(app: &TestApp, profile_id: i64) -> i64 {
    count(
        app,
        &format!("SELECT COUNT(*) FROM org_user_profiles WHERE id = {profile_id}"),
    )
    .await
}

async fn profile_column(app: &TestApp, profile_id: i64, column: &str) -> String {
    scalar(
        app,
        &format!("SELECT {column} FROM org_user_profiles WHERE id = {profile_id}"),
    )
    .await
}

async fn owners(app: &TestApp, company_id: i64) -> i64 {
    count(
        app,
        &format!(
            "SELECT COUNT(*) FROM org_user_profiles WHERE company_id = {company_id} AND role = 'owner'"
        ),
    )
    .await
}

async fn invitation_status(app: &TestApp, id: i64) -> String {
    scalar(
        app,
        &format!("SELECT status FROM org_invitations WHERE id = {id}"),
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// The role matrix
// ---------------------------------------------------------------------------------------------

/// One guarded employer action of CONTRACT §14's table, done on fresh targets.
#[derive(Debug, Clone, Copy)]
enum Action {
    ReadCompany,
    ReadMembers,
    ReadMember,
    ReadOwnProfile,
    ReadInvitations,
    ReadJobs,
    ReadApplications,
    ReadApplication,
    CreateJob,
    UpdateJob,
    EditCompany,
    Invite,
    RevokeInvitation,
    /// `POST /org/user-profiles` naming a colleague: past the role check it is 409 (a user has
    /// one org profile, and the employer may name only their company's users).
    CreateProfile,
    EditMember,
    PromoteToAdmin,
    RemoveMember,
    GiveOwnerRole,
    CreateProfileWithOwnerRole,
    EditOwner,
    DemoteOwner,
    RemoveOwner,
    InviteOwner,
    RevokeOwnerInvitation,
    ReplaceOwnerInvitation,
}

const ACTIONS: [Action; 25] = [
    Action::ReadCompany,
    Action::ReadMembers,
    Action::ReadMember,
    Action::ReadOwnProfile,
    Action::ReadInvitations,
    Action::ReadJobs,
    Action::ReadApplications,
    Action::ReadApplication,
    Action::CreateJob,
    Action::UpdateJob,
    Action::EditCompany,
    Action::Invite,
    Action::RevokeInvitation,
    Action::CreateProfile,
    Action::EditMember,
    Action::PromoteToAdmin,
    Action::RemoveMember,
    Action::GiveOwnerRole,
    Action::CreateProfileWithOwnerRole,
    Action::EditOwner,
    Action::DemoteOwner,
    Action::RemoveOwner,
    Action::InviteOwner,
    Action::RevokeOwnerInvitation,
    Action::ReplaceOwnerInvitation,
];

/// What a cell must answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Allowed: this status, and the write is stored.
    Done(StatusCode),
    /// Past the role check, refused by the record's state: 409 `conflict`, nothing stored.
    Conflict,
    /// 403 `forbidden`, nothing stored.
    Refused,
}

fn expected(action: Action, role: &str) -> Expect {
    use Action::*;
    let (owner, admin, member) = match action {
        ReadCompany | ReadMembers | ReadMember | ReadOwnProfile | ReadInvitations | ReadJobs
        | ReadApplications | ReadApplication | UpdateJob => {
            let ok = Expect::Done(StatusCode::OK);
            (ok, ok, ok)
        }
        CreateJob => {
            let created = Expect::Done(StatusCode::CREATED);
            (created, created, created)
        }
        EditCompany | EditMember | PromoteToAdmin => (
            Expect::Done(StatusCode::OK),
            Expect::Done(StatusCode::OK),
            Expect::Refused,
        ),
        Invite => (
            Expect::Done(StatusCode::CREATED),
            Expect::Done(StatusCode::CREATED),
            Expect::Refused,
        ),
        RevokeInvitation | RemoveMember => (
            Expect::Done(StatusCode::NO_CONTENT),
            Expect::Done(StatusCode::NO_CONTENT),
            Expect::Refused,
        ),
        CreateProfile => (Expect::Conflict, Expect::Conflict, Expect::Refused),
        CreateProfileWithOwnerRole => (Expect::Conflict, Expect::Refused, Expect::Refused),
        GiveOwnerRole | EditOwner | DemoteOwner => (
            Expect::Done(StatusCode::OK),
            Expect::Refused,
            Expect::Refused,
        ),
        RemoveOwner | RevokeOwnerInvitation => (
            Expect::Done(StatusCode::NO_CONTENT),
            Expect::Refused,
            Expect::Refused,
        ),
        InviteOwner | ReplaceOwnerInvitation => (
            Expect::Done(StatusCode::CREATED),
            Expect::Refused,
            Expect::Refused,
        ),
    };
    match role {
        "owner" => owner,
        "admin" => admin,
        _ => member,
    }
}

/// A company where the actor has `role` (besides an owner, when the actor is not one), a job
/// and an application to it.
struct Crew {
    role: &'static str,
    company: i64,
    profile_id: i64,
    creds: Creds,
    job_id: i64,
    application_id: i64,
}

async fn crew(app: &TestApp, role: &'static str) -> Crew {
    let company_id = company(app, &format!("Crew of an {role}")).await;
    let (_, profile_id, creds) = member_session(app, company_id, role).await;
    if role != "owner" {
        colleague(app, company_id, "owner").await;
    }
    let job_id = job(app, company_id, "Rust engineer", true).await;
    let (_, talent) = silent_candidate(app, &unique("cara")).await;
    let application_id = application(app, job_id, talent).await;
    Crew {
        role,
        company: company_id,
        profile_id,
        creds,
        job_id,
        application_id,
    }
}

/// Does `action` as the crew's actor: its answer, and whether its write is stored (`true` for
/// reads).
async fn perform(app: &TestApp, crew: &Crew, action: Action) -> (StatusCode, Value, bool) {
    let c = &crew.creds;
    let role = crew.role;
    let company_id = crew.company;
    let (response, stored): (Response, bool) = match action {
        Action::ReadCompany => (get(app, c, "/org/company").await, true),
        Action::ReadMembers => (get(app, c, PROFILES).await, true),
        Action::ReadMember => {
            let (_, target) = colleague(app, company_id, "member").await;
            let path = format!("{PROFILES}/{target}");
            (get(app, c, &path).await, true)
        }
        Action::ReadOwnProfile => (get(app, c, CURRENT).await, true),
        Action::ReadInvitations => (get(app, c, INVITATIONS).await, true),
        Action::ReadJobs => (get(app, c, JOBS).await, true),
        Action::ReadApplications => (get(app, c, APPLICATIONS).await, true),
        Action::ReadApplication => {
            let path = format!("{APPLICATIONS}/{}", crew.application_id);
            (get(app, c, &path).await, true)
        }
        Action::CreateJob => {
            let title = format!("Job by an {role}");
            let form =
                json!({"title": title, "description": "Work", "company": {"id": company_id}});
            let response = post(app, c, JOBS, &form).await;
            let sql = format!("SELECT COUNT(*) FROM careers_jobs WHERE title = '{title}'");
            let stored = scalar(app, &sql).await;
            (response, stored == "1")
        }
        Action::UpdateJob => {
            let path = format!("{JOBS}/{}", crew.job_id);
            let title = format!("Renamed by an {role}");
            let response = patch(app, c, &path, &json!({"title": title})).await;
            let sql = format!("SELECT title FROM careers_jobs WHERE id = {}", crew.job_id);
            let stored = scalar(app, &sql).await;
            (response, stored == title)
        }
        Action::EditCompany => {
            let name = format!("Renamed by an {role}");
            let response = patch(app, c, "/org/company", &json!({"name": name})).await;
            let sql = format!("SELECT name FROM org_companies WHERE id = {company_id}");
            let stored = scalar(app, &sql).await;
            (response, stored == name)
        }
        Action::Invite | Action::InviteOwner => {
            let invite_role = if matches!(action, Action::Invite) {
                "member"
            } else {
                "owner"
            };
            let email = unique("invitee");
            let form = json!({"email": email, "role": invite_role});
            let response = post(app, c, INVITATIONS, &form).await;
            let sql = format!(
                "SELECT COUNT(*) FROM org_invitations WHERE email = '{email}' \
                 AND role = '{invite_role}' AND status = 'pending'"
            );
            let stored = scalar(app, &sql).await;
            (response, stored == "1")
        }
        Action::RevokeInvitation | Action::RevokeOwnerInvitation => {
            let invite_role = if matches!(action, Action::RevokeInvitation) {
                "member"
            } else {
                "owner"
            };
            let id = invitation_row(app, company_id, &unique("invitee"), invite_role).await;
            let response = delete(app, c, &format!("{INVITATIONS}/{id}")).await;
            let stored = invitation_status(app, id).await;
            (response, stored == "revoked")
        }
        Action::ReplaceOwnerInvitation => {
            let email = unique("invitee");
            let old = invitation_row(app, company_id, &email, "owner").await;
            let form = json!({"email": email, "role": "member"});
            let response = post(app, c, INVITATIONS, &form).await;
            let old_status = invitation_status(app, old).await;
            let sql = format!("SELECT COUNT(*) FROM org_invitations WHERE email = '{email}'");
            let rows = scalar(app, &sql).await;
            (response, old_status == "revoked" && rows == "2")
        }
        Action::CreateProfile | Action::CreateProfileWithOwnerRole => {
            let given = if matches!(action, Action::CreateProfile) {
                "member"
            } else {
                "owner"
            };
            let (user_id, _) = colleague(app, company_id, "member").await;
            let form = json!({"title": "Second profile", "role": given,
                              "identities_user": {"id": user_id}, "company": {"id": company_id}});
            let response = post(app, c, PROFILES, &form).await;
            let sql = format!(
                "SELECT COUNT(*) FROM org_user_profiles WHERE identities_user_id = {user_id}"
            );
            let stored = scalar(app, &sql).await;
            (response, stored != "1")
        }
        Action::EditMember | Action::EditOwner => {
            let target_role = if matches!(action, Action::EditMember) {
                "member"
            } else {
                "owner"
            };
            let (_, target) = colleague(app, company_id, target_role).await;
            let path = format!("{PROFILES}/{target}");
            let response = patch(app, c, &path, &json!({"title": "Edited"})).await;
            let stored = profile_column(app, target, "title").await;
            (response, stored == "Edited")
        }
        Action::PromoteToAdmin | Action::GiveOwnerRole | Action::DemoteOwner => {
            let (from, to) = match action {
                Action::PromoteToAdmin => ("member", "admin"),
                Action::GiveOwnerRole => ("member", "owner"),
                _ => ("owner", "member"),
            };
            let (_, target) = colleague(app, company_id, from).await;
            let path = format!("{PROFILES}/{target}");
            let response = patch(app, c, &path, &json!({"role": to})).await;
            let stored = profile_column(app, target, "role").await;
            (response, stored == to)
        }
        Action::RemoveMember | Action::RemoveOwner => {
            let target_role = if matches!(action, Action::RemoveMember) {
                "member"
            } else {
                "owner"
            };
            let (_, target) = colleague(app, company_id, target_role).await;
            let response = delete(app, c, &format!("{PROFILES}/{target}")).await;
            let left = profile_count(app, target).await;
            (response, left == 0)
        }
    };
    let status = response.status();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, body, stored)
}

/// The cell's mismatch, if any, named by role and action.
fn check(role: &str, action: Action, got: (StatusCode, Value, bool)) -> Option<String> {
    let (status, body, stored) = got;
    let want = expected(action, role);
    let fine = match want {
        Expect::Done(success) => status == success && stored,
        Expect::Conflict => {
            status == StatusCode::CONFLICT && body["error"]["code"] == "conflict" && !stored
        }
        Expect::Refused => {
            status == StatusCode::FORBIDDEN && body["error"]["code"] == "forbidden" && !stored
        }
    };
    (!fine).then(|| {
        format!(
            "{role} × {action:?}: expected {want:?}, got {status} (write stored: {stored}) {body}"
        )
    })
}

backend_tests! {
    /// CONTRACT §14's table, every cell: owner, admin and member against each guarded action,
    /// each on fresh targets, with the stored state checked (a refused write leaves nothing).
    async fn the_role_matrix_holds_cell_by_cell(backend) {
        let app = TestApp::spawn(backend).await;
        let mut failures = Vec::new();
        for role in ["owner", "admin", "member"] {
            let crew = crew(&app, role).await;
            for action in ACTIONS {
                let got = perform(&app, &crew, action).await;
                failures.extend(check(role, action, got));
            }
            // The actor is still there, in their role, after the whole row.
            assert_eq!(profile_column(&app, crew.profile_id, "role").await, role);
        }
        assert!(failures.is_empty(), "{} cells differ:\n{}", failures.len(), failures.join("\n"));
    }

    /// A member's own answers for the reads carry the data, not only a 200.
    async fn every_role_reads_the_company_members_invitations_jobs_and_applications(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let (_, talent) = silent_candidate(&app, "cara@example.com").await;
        let application_id = application(&app, job_id, talent).await;
        let invitation_id = invitation_row(&app, acme, "new@example.com", "member").await;
        for role in ["owner", "admin", "member"] {
            let (_, profile_id, creds) = member_session(&app, acme, role).await;
            let company = ok(get(&app, &creds, "/org/company").await).await;
            assert_eq!(company["org_companies"]["id"], acme, "{role}: {company}");
            let members = ok(get(&app, &creds, PROFILES).await).await;
            assert!(ids(&members["org_user_profiles"]).contains(&profile_id), "{role}: {members}");
            let invitations = ok(get(&app, &creds, INVITATIONS).await).await;
            assert_eq!(ids(&invitations["org_invitations"]), [invitation_id], "{role}: {invitations}");
            let jobs = ok(get(&app, &creds, JOBS).await).await;
            assert_eq!(ids(&jobs["careers_jobs"]), [job_id], "{role}: {jobs}");
            let applications = ok(get(&app, &creds, APPLICATIONS).await).await;
            assert_eq!(ids(&applications["careers_job_applications"]), [application_id], "{role}");
        }
    }

    async fn role_is_in_every_org_profile_response_and_a_patch_keeps_it(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, owner_profile, boss) = member_session(&app, acme, "owner").await;
        let (_, admin_profile) = colleague(&app, acme, "admin").await;
        let (_, member_profile) = colleague(&app, acme, "member").await;
        let roles = [(owner_profile, "owner"), (admin_profile, "admin"), (member_profile, "member")];

        let list = ok(get(&app, &boss, PROFILES).await).await;
        assert_eq!(items(&list["org_user_profiles"]).len(), 3, "{list}");
        for item in items(&list["org_user_profiles"]) {
            assert_eq!(keys(item), PROFILE_KEYS, "{item}");
            let role = roles.iter().find(|(id, _)| item["id"] == *id).unwrap().1;
            assert_eq!(item["role"], role, "{item}");
        }
        for (id, role) in roles {
            let one = ok(get(&app, &boss, &format!("{PROFILES}/{id}")).await).await;
            assert_eq!(keys(&one), PROFILE_KEYS, "bare: {one}");
            assert_eq!(one["role"], role, "{one}");
        }
        let own = ok(get(&app, &boss, CURRENT).await).await;
        assert_eq!(keys(&own), PROFILE_KEYS, "{own}");
        assert_eq!(own["role"], "owner");

        // A PATCH without `role` keeps it.
        let path = format!("{PROFILES}/{admin_profile}");
        let patched = ok(patch(&app, &boss, &path, &json!({"title": "Head of People"})).await).await;
        assert_eq!(keys(&patched), PROFILE_KEYS, "{patched}");
        assert_eq!((patched["title"].as_str(), patched["role"].as_str()),
                   (Some("Head of People"), Some("admin")), "{patched}");
        assert_eq!(profile_column(&app, admin_profile, "role").await, "admin");
        // And one with it changes it.
        let patched = ok(patch(&app, &boss, &path, &json!({"role": "member"})).await).await;
        assert_eq!((patched["title"].as_str(), patched["role"].as_str()),
                   (Some("Head of People"), Some("member")), "{patched}");

        // The team's views.
        let (_, admin) = app.admin_session("grace@example.com").await;
        let list = ok(get(&app, &admin, TEAM_PROFILES).await).await;
        for item in items(&list["org_user_profiles"]) {
            assert_eq!(keys(item), PROFILE_KEYS, "{item}");
            assert!(["owner", "member"].contains(&item["role"].as_str().unwrap()), "{item}");
        }
        let one = ok(get(&app, &admin, &format!("{TEAM_PROFILES}/{owner_profile}")).await).await;
        assert_eq!(keys(&one["org_user_profiles"]), PROFILE_KEYS, "{one}");
        assert_eq!(one["org_user_profiles"]["role"], "owner");
        let path = format!("{TEAM_PROFILES}/{member_profile}");
        let patched = ok(patch(&app, &admin, &path, &json!({"title": "Scout"})).await).await;
        assert_eq!(patched["org_user_profiles"]["role"], "member", "{patched}");
        assert_eq!(patched["org_user_profiles"]["title"], "Scout", "{patched}");
    }

    async fn an_unknown_role_is_a_422_on_role_in_every_form(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, _, boss) = member_session(&app, acme, "owner").await;
        let (colleague_id, colleague_profile) = colleague(&app, acme, "member").await;
        let (_, admin) = app.admin_session("grace@example.com").await;
        let free = plain_user(&app, "free@example.com", "Fre", "E").await;
        let employer_path = format!("{PROFILES}/{colleague_profile}");
        let team_path = format!("{TEAM_PROFILES}/{colleague_profile}");
        for bad in ["boss", "Owner", "", "superuser"] {
            expect_fields(patch(&app, &boss, &employer_path, &json!({"role": bad})).await, &["role"]).await;
            let form = json!({"title": "T", "role": bad, "identities_user": {"id": colleague_id},
                              "company": {"id": acme}});
            expect_fields(post(&app, &boss, PROFILES, &form).await, &["role"]).await;
            expect_fields(patch(&app, &admin, &team_path, &json!({"role": bad})).await, &["role"]).await;
            let form = json!({"title": "T", "role": bad, "identities_user": {"id": free},
                              "company": {"id": acme}});
            expect_fields(post(&app, &admin, TEAM_PROFILES, &form).await, &["role"]).await;
        }
        assert_eq!(profile_column(&app, colleague_profile, "role").await, "member");
        let sql = format!("SELECT COUNT(*) FROM org_user_profiles WHERE identities_user_id = {free}");
        assert_eq!(count(&app, &sql).await, 0);
    }

    async fn the_callers_own_profile_is_bare_with_role_and_leaving_keeps_the_sessions(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        colleague(&app, acme, "owner").await;
        let (user_id, profile_id, creds) = member_session(&app, acme, "admin").await;
        let own = ok(get(&app, &creds, CURRENT).await).await;
        assert_eq!(keys(&own), PROFILE_KEYS, "bare: {own}");
        assert_eq!(own["id"], profile_id);
        assert_eq!(own["role"], "admin");
        assert_eq!(own["title"], "Staff");
        assert_eq!(own["company"], json!({"id": acme, "name": "Acme"}));
        assert_eq!(own["identities_user"],
                   json!({"id": user_id, "first_name": "Ada", "last_name": "Lovelace"}));

        let left = delete(&app, &creds, CURRENT).await;
        assert_eq!(text(left, StatusCode::NO_CONTENT).await, "");
        assert_eq!(profile_count(&app, profile_id).await, 0);
        expect_error(get(&app, &creds, "/org/company").await, StatusCode::FORBIDDEN, "forbidden").await;
        expect_error(get(&app, &creds, CURRENT).await, StatusCode::FORBIDDEN, "forbidden").await;
        expect_error(delete(&app, &creds, CURRENT).await, StatusCode::FORBIDDEN, "forbidden").await;
        // Not logged out: the user area still answers.
        assert_eq!(app.read(&creds, user_id).await.status(), StatusCode::OK);
        assert!(app.record(&creds).await.is_some(), "the session lives on");
    }

    async fn a_member_may_remove_themself_by_id(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        colleague(&app, acme, "owner").await;
        let (_, profile_id, creds) = member_session(&app, acme, "member").await;
        let gone = delete(&app, &creds, &format!("{PROFILES}/{profile_id}")).await;
        assert_eq!(gone.status(), StatusCode::NO_CONTENT);
        assert_eq!(profile_count(&app, profile_id).await, 0);
    }

    async fn the_last_owner_cannot_leave_be_removed_or_demoted(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, first_profile, first) = member_session(&app, acme, "owner").await;
        let (_, admin_profile, admin_creds) = member_session(&app, acme, "admin").await;
        let (_, team) = app.admin_session("grace@example.com").await;
        let own_path = format!("{PROFILES}/{first_profile}");
        let team_path = format!("{TEAM_PROFILES}/{first_profile}");

        expect_error(delete(&app, &first, CURRENT).await, StatusCode::CONFLICT, "conflict").await;
        expect_error(delete(&app, &first, &own_path).await, StatusCode::CONFLICT, "conflict").await;
        for role in ["admin", "member"] {
            let demoted = patch(&app, &first, &own_path, &json!({"role": role})).await;
            expect_error(demoted, StatusCode::CONFLICT, "conflict").await;
            let by_team = patch(&app, &team, &team_path, &json!({"role": role})).await;
            expect_error(by_team, StatusCode::CONFLICT, "conflict").await;
        }
        // Moving the last owner to another company takes the owner away as well.
        let globex = company(&app, "Globex").await;
        let moved = patch(&app, &team, &team_path, &json!({"company": {"id": globex}})).await;
        expect_error(moved, StatusCode::CONFLICT, "conflict").await;
        // An admin may not try at all.
        expect_error(delete(&app, &admin_creds, &own_path).await, StatusCode::FORBIDDEN, "forbidden").await;
        assert_eq!(profile_column(&app, first_profile, "role").await, "owner");
        assert_eq!(profile_column(&app, first_profile, "company_id").await, acme.to_string());
        assert_eq!(owners(&app, acme).await, 1);

        // With a second owner, the first may go.
        let admin_path = format!("{PROFILES}/{admin_profile}");
        let promoted = ok(patch(&app, &first, &admin_path, &json!({"role": "owner"})).await).await;
        assert_eq!(promoted["role"], "owner");
        assert_eq!(owners(&app, acme).await, 2);
        let left = delete(&app, &first, CURRENT).await;
        assert_eq!(left.status(), StatusCode::NO_CONTENT);
        assert_eq!(profile_count(&app, first_profile).await, 0);
        // Now the other is the last one.
        expect_error(delete(&app, &admin_creds, CURRENT).await, StatusCode::CONFLICT, "conflict").await;
        let self_demotion = patch(&app, &admin_creds, &admin_path, &json!({"role": "admin"})).await;
        expect_error(self_demotion, StatusCode::CONFLICT, "conflict").await;
        let by_team = patch(&app, &team, &format!("{TEAM_PROFILES}/{admin_profile}"),
                            &json!({"role": "member"})).await;
        expect_error(by_team, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(owners(&app, acme).await, 1);
    }

    /// Two owners leave at once, rounds apart: one goes, the other is the last owner (409, the
    /// answer it gets coming second).
    async fn two_owners_leaving_at_once_leave_one_owner(backend) {
        let app = TestApp::spawn(backend).await;
        for round in 0..4 {
            let company_id = company(&app, &format!("Race {round}")).await;
            let (_, a_profile, a) = member_session(&app, company_id, "owner").await;
            let (_, b_profile, b) = member_session(&app, company_id, "owner").await;
            let (ra, rb) = tokio::join!(delete(&app, &a, CURRENT), delete(&app, &b, CURRENT));
            let mut statuses = [ra.status(), rb.status()];
            statuses.sort();
            assert_eq!(statuses, [StatusCode::NO_CONTENT, StatusCode::CONFLICT], "round {round}");
            let loser = if ra.status() == StatusCode::CONFLICT { ra } else { rb };
            expect_error(loser, StatusCode::CONFLICT, "conflict").await;
            assert_eq!(owners(&app, company_id).await, 1, "round {round}");
            assert_eq!(profile_count(&app, a_profile).await + profile_count(&app, b_profile).await, 1);
        }
    }

    /// Two owners each removing (or demoting) the other at once: exactly one wins and the company
    /// keeps one owner.
    async fn two_owners_removing_or_demoting_each_other_at_once_keep_one_owner(backend) {
        let app = TestApp::spawn(backend).await;
        for round in 0..6 {
            let demote = round % 2 == 1;
            let company_id = company(&app, &format!("Race {round}")).await;
            let (_, a_profile, a) = member_session(&app, company_id, "owner").await;
            let (_, b_profile, b) = member_session(&app, company_id, "owner").await;
            let (a_path, b_path) = (format!("{PROFILES}/{b_profile}"), format!("{PROFILES}/{a_profile}"));
            let demotion = json!({"role": "member"});
            let (ra, rb) = if demote {
                tokio::join!(patch(&app, &a, &a_path, &demotion), patch(&app, &b, &b_path, &demotion))
            } else {
                tokio::join!(delete(&app, &a, &a_path), delete(&app, &b, &b_path))
            };
            let success = if demote { StatusCode::OK } else { StatusCode::NO_CONTENT };
            let (sa, sb) = (ra.status(), rb.status());
            assert!((sa == success) != (sb == success), "round {round}: exactly one wins: {sa} {sb}");
            let loser = if sa == success { rb } else { ra };
            let status = loser.status();
            let body: Value = loser.json().await.unwrap();
            assert!(
                [StatusCode::FORBIDDEN, StatusCode::CONFLICT].contains(&status),
                "round {round}: the loser is refused: {status} {body}"
            );
            assert_eq!(owners(&app, company_id).await, 1, "round {round}");
            let left = profile_count(&app, a_profile).await + profile_count(&app, b_profile).await;
            assert_eq!(left, if demote { 2 } else { 1 }, "round {round}");
        }
    }

    /// CONTRACT §14: "of two racing requests, the loser gets the answer it would get had it come
    /// second". Coming second, the loser of a mutual removal has no org profile any more, and the
    /// loser of a mutual demotion is a member: either way 403 `forbidden`.
    async fn the_loser_of_a_mutual_removal_gets_the_answer_of_coming_second(backend) {
        let app = TestApp::spawn(backend).await;
        let mut differing = Vec::new();
        for round in 0..6 {
            let demote = round % 2 == 1;
            let company_id = company(&app, &format!("Race {round}")).await;
            let (_, a_profile, a) = member_session(&app, company_id, "owner").await;
            let (_, b_profile, b) = member_session(&app, company_id, "owner").await;
            let (a_path, b_path) = (format!("{PROFILES}/{b_profile}"), format!("{PROFILES}/{a_profile}"));
            let demotion = json!({"role": "member"});
            let (ra, rb) = if demote {
                tokio::join!(patch(&app, &a, &a_path, &demotion), patch(&app, &b, &b_path, &demotion))
            } else {
                tokio::join!(delete(&app, &a, &a_path), delete(&app, &b, &b_path))
            };
            let success = if demote { StatusCode::OK } else { StatusCode::NO_CONTENT };
            let loser = if ra.status() == success { rb } else { ra };
            let what = if demote { "demotion" } else { "removal" };
            let status = loser.status();
            let body: Value = loser.json().await.unwrap();
            if (status, body["error"]["code"].as_str()) != (StatusCode::FORBIDDEN, Some("forbidden")) {
                differing.push(format!("round {round} ({what}): {status} {body}"));
            }
        }
        assert!(differing.is_empty(), "expected 403 forbidden for every loser:\n{}",
                differing.join("\n"));
    }

    /// One org profile per user, whichever form writes it; the team's form takes `role`
    /// (default `member`).
    async fn the_teams_form_takes_a_role_and_keeps_one_profile_per_user(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, team) = app.admin_session("grace@example.com").await;
        let (taken, taken_profile) = colleague(&app, acme, "member").await;

        for company_id in [acme, globex] {
            let form = json!({"title": "Second", "identities_user": {"id": taken},
                              "company": {"id": company_id}});
            expect_error(post(&app, &team, TEAM_PROFILES, &form).await, StatusCode::CONFLICT, "conflict").await;
        }
        let sql = format!("SELECT COUNT(*) FROM org_user_profiles WHERE identities_user_id = {taken}");
        assert_eq!(count(&app, &sql).await, 1);
        assert_eq!(profile_column(&app, taken_profile, "title").await, "Colleague");

        let plain = plain_user(&app, "plain@example.com", "Pla", "In").await;
        let form = json!({"title": "Recruiter", "identities_user": {"id": plain},
                          "company": {"id": globex}});
        let created = json(post(&app, &team, TEAM_PROFILES, &form).await, StatusCode::CREATED).await;
        assert_eq!(keys(&created["org_user_profiles"]), PROFILE_KEYS, "{created}");
        assert_eq!(created["org_user_profiles"]["role"], "member", "default: {created}");

        for role in ["owner", "admin", "member"] {
            let user = plain_user(&app, &unique(role), "Ro", "Le").await;
            let form = json!({"title": "Hire", "role": role, "identities_user": {"id": user},
                              "company": {"id": globex}});
            let created = json(post(&app, &team, TEAM_PROFILES, &form).await, StatusCode::CREATED).await;
            assert_eq!(created["org_user_profiles"]["role"], role, "{created}");
            let id = created["org_user_profiles"]["id"].as_i64().unwrap();
            assert_eq!(profile_column(&app, id, "role").await, role);
        }

        // The team may give and take the owner role, as long as an owner is left.
        let path = format!("{TEAM_PROFILES}/{taken_profile}");
        let promoted = ok(patch(&app, &team, &path, &json!({"role": "owner"})).await).await;
        assert_eq!(promoted["org_user_profiles"]["role"], "owner");
        let demoted = patch(&app, &team, &path, &json!({"role": "admin"})).await;
        expect_error(demoted, StatusCode::CONFLICT, "conflict").await;

        // Two team requests creating a profile for one free user at once: one profile.
        let racer = plain_user(&app, "racer@example.com", "Ra", "Cer").await;
        let answers = join_all([acme, globex].map(|company_id| {
            let form = json!({"title": "Racer", "identities_user": {"id": racer},
                              "company": {"id": company_id}});
            let team = team.clone();
            let app = &app;
            async move { post(app, &team, TEAM_PROFILES, &form).await.status() }
        }))
        .await;
        let mut answers = answers;
        answers.sort();
        assert_eq!(answers, [StatusCode::CREATED, StatusCode::CONFLICT]);
        let sql = format!("SELECT COUNT(*) FROM org_user_profiles WHERE identities_user_id = {racer}");
        assert_eq!(count(&app, &sql).await, 1);
    }

    async fn a_member_removed_mid_session_is_forbidden_on_the_next_request(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, _, boss) = member_session(&app, acme, "owner").await;
        let (user_id, profile_id, member) = member_session(&app, acme, "member").await;
        let job_id = job(&app, acme, "Rust engineer", true).await;
        let jobs = ok(get(&app, &member, JOBS).await).await;
        assert_eq!(ids(&jobs["careers_jobs"]), [job_id]);

        let removed = delete(&app, &boss, &format!("{PROFILES}/{profile_id}")).await;
        assert_eq!(removed.status(), StatusCode::NO_CONTENT);
        assert_eq!(profile_count(&app, profile_id).await, 0);
        expect_error(get(&app, &member, JOBS).await, StatusCode::FORBIDDEN, "forbidden").await;
        expect_error(get(&app, &member, "/org/company").await, StatusCode::FORBIDDEN, "forbidden").await;
        let form = json!({"title": "Sneaky", "description": "x", "company": {"id": acme}});
        expect_error(post(&app, &member, JOBS, &form).await, StatusCode::FORBIDDEN, "forbidden").await;
        let sql = "SELECT COUNT(*) FROM careers_jobs WHERE title = 'Sneaky'";
        assert_eq!(count(&app, sql).await, 0);
        // The sessions are not ended.
        assert_eq!(app.read(&member, user_id).await.status(), StatusCode::OK);
        assert!(app.record(&member).await.is_some());
        // Removing again: the record is gone.
        let again = delete(&app, &boss, &format!("{PROFILES}/{profile_id}")).await;
        expect_error(again, StatusCode::NOT_FOUND, "not_found").await;
    }

    async fn members_of_another_company_are_not_found(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, _, boss) = member_session(&app, acme, "owner").await;
        let (_, rival) = colleague(&app, globex, "member").await;
        let path = format!("{PROFILES}/{rival}");
        expect_error(delete(&app, &boss, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        expect_error(patch(&app, &boss, &path, &json!({"role": "admin"})).await,
                     StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(profile_column(&app, rival, "role").await, "member");
    }
}
