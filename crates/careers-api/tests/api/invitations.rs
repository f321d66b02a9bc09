//! Invitations (CONTRACT §14): a manager invites an address, the message's link carries a
//! single-use token kept only as a hash, the company lists and revokes its invitations, the
//! invited user lists, accepts or declines them by id (verified e-mail) or by the token (which
//! proves the mailbox); races of two answers; the whole onboarding journey over HTTP and SMTP.

use std::time::{Duration, Instant};

use careers_api::areas::USER;
use careers_api::models::org::invitation;
use chrono::{DateTime, Utc};
use reqwest::{Method, Response, StatusCode};
use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::data_layer::scalar;
use crate::fixtures::*;
use crate::helpers::*;
use crate::smtp_sink::{Received, SmtpSink};

const INVITATION_URL: &str = "https://app.example/inv?t={token}";
const LINK: &str = "https://app.example/inv?t=";
const VERIFY_URL: &str = "https://app.example/verify-email?token={token}";
const INVITATIONS: &str = "/org/invitations";
const MINE: &str = "/identities/org/invitations";
const BY_TOKEN: &str = "/identities/org/invitations/current";
const WEEK: i64 = 7 * 24 * 60 * 60;

const INVITATION_KEYS: [&str; 8] = [
    "created_at",
    "email",
    "expires_at",
    "id",
    "inviter",
    "role",
    "status",
    "updated_at",
];
const INVITATION_WITH_COMPANY_KEYS: [&str; 9] = [
    "company",
    "created_at",
    "email",
    "expires_at",
    "id",
    "inviter",
    "role",
    "status",
    "updated_at",
];

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

async fn spawn_with_sink(backend: Backend, sink: &SmtpSink, extra: &[(&str, &str)]) -> TestApp {
    let url = sink.url();
    let mut overrides = vec![
        ("SMTP_URL", url.as_str()),
        ("INVITATION_URL", INVITATION_URL),
        ("EMAIL_VERIFICATION_URL", VERIFY_URL),
    ];
    overrides.extend_from_slice(extra);
    let app = TestApp::spawn_with(backend, &overrides).await;
    app.start_mail_worker();
    app
}

/// The first message to `address` whose text contains `needle` (waits up to 10 seconds).
pub(crate) async fn message_to(sink: &SmtpSink, address: &str, needle: &str) -> Received {
    let envelope = format!("<{address}>");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = sink
            .received()
            .into_iter()
            .find(|m| m.to.contains(&envelope) && m.text().contains(needle));
        if let Some(message) = found {
            return message;
        }
        assert!(
            Instant::now() < deadline,
            "no message to {address} with {needle:?}; got {:?}",
            sink.received()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The URL-safe token that follows `marker` in `text`.
pub(crate) fn token_after(text: &str, marker: &str) -> String {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {text}"))
        + marker.len();
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

/// The token of the invitation message to `address`.
async fn invitation_token(sink: &SmtpSink, address: &str) -> String {
    token_after(&message_to(sink, address, LINK).await.text(), LINK)
}

async fn invite(app: &TestApp, creds: &Creds, email: &str, role: Option<&str>) -> Response {
    let form = match role {
        Some(role) => json!({"email": email, "role": role}),
        None => json!({"email": email}),
    };
    post(app, creds, INVITATIONS, &form).await
}

/// Invites and returns the new invitation's id.
async fn invited(app: &TestApp, creds: &Creds, email: &str, role: Option<&str>) -> i64 {
    let body = json(invite(app, creds, email, role).await, StatusCode::CREATED).await;
    body["org_invitations"]["id"].as_i64().unwrap()
}

async fn answer(app: &TestApp, creds: &Creds, id: i64, status: &str) -> Response {
    let path = format!("{MINE}/{id}");
    patch(app, creds, &path, &json!({ "status": status })).await
}

async fn by_token(app: &TestApp, creds: &Creds, body: Value) -> Response {
    patch(app, creds, BY_TOKEN, &body).await
}

/// A 422 on `token` only.
async fn expect_token_refused(response: Response, what: &str) {
    let status = response.status();
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{what}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "validation_failed", "{what}: {body}");
    assert_eq!(keys(&body["error"]["fields"]), ["token"], "{what}: {body}");
}

async fn stored_status(app: &TestApp, id: i64) -> String {
    scalar(
        app,
        &format!("SELECT status FROM org_invitations WHERE id = {id}"),
    )
    .await
}

async fn profiles_of(app: &TestApp, user_id: i64) -> i64 {
    count(
        app,
        &format!("SELECT COUNT(*) FROM org_user_profiles WHERE identities_user_id = {user_id}"),
    )
    .await
}

/// Moves an invitation's `expires_at` to just before the app's clock.
async fn expire(app: &TestApp, id: i64) {
    invitation::entity::ActiveModel {
        id: Set(id),
        expires_at: Set(app.state.now() - chrono::Duration::seconds(1)),
        ..Default::default()
    }
    .update(&*app.state.db)
    .await
    .unwrap();
}

fn timestamp(value: &Value) -> DateTime<Utc> {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("timestamp: {value}"));
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .with_timezone(&Utc)
}

/// A user signed up through the public form (e-mail not verified), logged in: (id, creds).
async fn signed_up(app: &TestApp, email: &str) -> (i64, Creds) {
    let response = app
        .request(Method::POST, "/identities/users")
        .json(&sign_up_body(email))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED, "sign-up of {email}");
    let id = scalar(
        app,
        &format!("SELECT id FROM identities_users WHERE email = '{email}'"),
    )
    .await
    .parse()
    .unwrap();
    (id, app.login(&USER, email).await)
}

/// `verified_at` of the caller's e-mail.
async fn verified_at(app: &TestApp, creds: &Creds) -> Value {
    let body = ok(get(app, creds, "/identities/email_verifications/current").await).await;
    body["email_verifications"]["verified_at"].clone()
}

/// Acme with its owner Ada Lovelace logged in: (company id, owner's user id, creds).
async fn acme(app: &TestApp) -> (i64, i64, Creds) {
    let acme = company(app, "Acme").await;
    let (boss_id, boss) = employer(app, "boss@acme.example", acme).await;
    (acme, boss_id, boss)
}

backend_tests! {
    async fn an_invitation_answers_without_its_token_and_its_message_carries_the_link(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let (_, boss_id, boss) = acme(&app).await;
        let now = app.state.now();
        let response = invite(&app, &boss, "new@example.com", None).await;
        let raw = text(response, StatusCode::CREATED).await;
        let body: Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(keys(&body), ["org_invitations"], "{body}");
        let created = &body["org_invitations"];
        assert_eq!(keys(created), INVITATION_KEYS, "{body}");
        let id = created["id"].as_i64().unwrap();
        assert_eq!(created["email"], "new@example.com");
        assert_eq!(created["role"], "member", "default role: {body}");
        assert_eq!(created["status"], "pending");
        assert_eq!(created["inviter"],
                   json!({"id": boss_id, "first_name": "Ada", "last_name": "Lovelace"}));
        assert_eq!(timestamp(&created["expires_at"]), now + chrono::Duration::seconds(WEEK),
                   "INVITATION_LIFETIME defaults to 7 days: {body}");
        assert_eq!(timestamp(&created["created_at"]), now);
        assert_eq!(timestamp(&created["updated_at"]), now);

        let message = message_to(&sink, "new@example.com", LINK).await;
        let token = token_after(&message.text(), LINK);
        assert!(token.len() >= 22, "at least 128 bits: {token}");
        assert!(!raw.contains(&token), "the token is not in the answer");
        // Stored only as a hash.
        let hash = scalar(&app, &format!("SELECT token_hash FROM org_invitations WHERE id = {id}")).await;
        assert!(!hash.contains(&token) && hash != token, "stored as a hash");
        let anywhere = format!("SELECT COUNT(*) FROM org_invitations WHERE token_hash = '{token}'");
        assert_eq!(count(&app, &anywhere).await, 0);
        // Nor in the company's list, nor the invited user's.
        let list = text(get(&app, &boss, INVITATIONS).await, StatusCode::OK).await;
        assert!(!list.contains(&token), "{list}");
        let (_, nora) = app.user_session("new@example.com").await;
        let mine = text(get(&app, &nora, MINE).await, StatusCode::OK).await;
        assert!(!mine.contains(&token), "{mine}");
        let opened = text(by_token(&app, &nora, json!({"token": token})).await, StatusCode::OK).await;
        assert!(!opened.contains(&token), "{opened}");
        let accepted = by_token(&app, &nora, json!({"token": token, "status": "accepted"})).await;
        let accepted = text(accepted, StatusCode::OK).await;
        assert!(!accepted.contains(&token), "{accepted}");
        let profile = text(get(&app, &nora, "/org/user-profiles/current").await, StatusCode::OK).await;
        assert!(!profile.contains(&token));
    }

    async fn the_lifetime_follows_invitation_lifetime(backend) {
        let app = TestApp::spawn_with(backend, &[("INVITATION_LIFETIME", "2d")]).await;
        let (_, _, boss) = acme(&app).await;
        let now = app.state.now();
        let body = json(invite(&app, &boss, "new@example.com", Some("admin")).await,
                        StatusCode::CREATED).await;
        assert_eq!(body["org_invitations"]["role"], "admin");
        assert_eq!(timestamp(&body["org_invitations"]["expires_at"]),
                   now + chrono::Duration::days(2));
    }

    async fn inviting_an_address_again_revokes_its_pending_invitation(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss) = acme(&app).await;
        let globex = company(&app, "Globex").await;
        let (_, rival) = employer(&app, "boss@globex.example", globex).await;
        let elsewhere = invited(&app, &rival, "new@example.com", None).await;
        let first = invited(&app, &boss, "new@example.com", None).await;
        let second = invited(&app, &boss, "NEW@example.com", Some("admin")).await;
        assert_ne!(first, second);
        assert_eq!(stored_status(&app, first).await, "revoked");
        assert_eq!(stored_status(&app, second).await, "pending");
        assert_eq!(stored_status(&app, elsewhere).await, "pending", "another company's stays");
        let list = ok(get(&app, &boss, INVITATIONS).await).await;
        assert_eq!(ids(&list["org_invitations"]), [second, first], "{list}");
        assert_eq!(list["org_invitations"][0]["status"], "pending");
        assert_eq!(list["org_invitations"][0]["role"], "admin");
        assert_eq!(list["org_invitations"][1]["status"], "revoked");
        let revoked = ok(get(&app, &boss, &format!("{INVITATIONS}?status=revoked")).await).await;
        assert_eq!(ids(&revoked["org_invitations"]), [first]);
        let pending = format!(
            "SELECT COUNT(*) FROM org_invitations WHERE company_id = {acme} AND status = 'pending'"
        );
        assert_eq!(count(&app, &pending).await, 1);
    }

    /// A lapsed invitation keeps reading `expired` when the address is invited again, and an
    /// admin may re-invite an address whose owner invitation lapsed (only a pending owner
    /// invitation is the owner's to replace).
    async fn a_lapsed_invitation_stays_expired_and_does_not_bind_a_reinvite(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss) = acme(&app).await;
        let lapsed = invited(&app, &boss, "new@example.com", Some("owner")).await;
        expire(&app, lapsed).await;
        let admin = app.create_user("admin@acme.example").await;
        org_profile_as(&app, admin, acme, "Admin", "admin").await;
        let admin = app.login(&USER, "admin@acme.example").await;
        let again = invited(&app, &admin, "new@example.com", None).await;
        assert_eq!(stored_status(&app, lapsed).await, "expired");
        assert_eq!(stored_status(&app, again).await, "pending");
        let list = ok(get(&app, &boss, &format!("{INVITATIONS}?status=expired")).await).await;
        assert_eq!(ids(&list["org_invitations"]), [lapsed], "{list}");
        assert_eq!(list["org_invitations"][0]["status"], "expired");
        // A pending owner invitation is still the owner's to replace.
        let owners = invited(&app, &boss, "next@example.com", Some("owner")).await;
        let refused = invite(&app, &admin, "next@example.com", None).await;
        expect_error(refused, StatusCode::FORBIDDEN, "forbidden").await;
        assert_eq!(stored_status(&app, owners).await, "pending");
    }

    async fn a_members_address_is_a_conflict_and_a_bad_form_a_422(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss) = acme(&app).await;
        let colleague = plain_user(&app, "col@acme.example", "Col", "League").await;
        org_profile_as(&app, colleague, acme, "Recruiter", "member").await;
        for address in ["boss@acme.example", "col@acme.example", "COL@Acme.Example"] {
            let refused = invite(&app, &boss, address, None).await;
            expect_error(refused, StatusCode::CONFLICT, "conflict").await;
        }
        // A member of another company may be invited.
        let globex = company(&app, "Globex").await;
        let rival = plain_user(&app, "rival@globex.example", "Riv", "Al").await;
        org_profile_as(&app, rival, globex, "Recruiter", "member").await;
        invited(&app, &boss, "rival@globex.example", None).await;

        for address in ["not-an-email", "", "two@@example.com"] {
            expect_fields(invite(&app, &boss, address, None).await, &["email"]).await;
        }
        expect_fields(post(&app, &boss, INVITATIONS, &json!({"role": "admin"})).await, &["email"]).await;
        for role in ["boss", "Owner", ""] {
            expect_fields(invite(&app, &boss, "fine@example.com", Some(role)).await, &["role"]).await;
        }
        assert_eq!(count(&app, "SELECT COUNT(*) FROM org_invitations").await, 1);
    }

    async fn the_daily_cap_per_company_is_429_with_retry_after(backend) {
        let app = TestApp::spawn_with(backend, &[("INVITATIONS_PER_COMPANY_PER_DAY", "2")]).await;
        let (acme, _, boss) = acme(&app).await;
        invited(&app, &boss, "one@example.com", None).await;
        invited(&app, &boss, "two@example.com", None).await;
        let third = invite(&app, &boss, "three@example.com", None).await;
        let retry: i64 = third.headers().get("retry-after").expect("Retry-After")
            .to_str().unwrap().parse().unwrap();
        assert!((1..=24 * 3600).contains(&retry), "{retry}");
        expect_error(third, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
        let sql = format!("SELECT COUNT(*) FROM org_invitations WHERE company_id = {acme}");
        assert_eq!(count(&app, &sql).await, 2);
        // The cap is the company's: another company still invites.
        let globex = company(&app, "Globex").await;
        let (_, rival) = employer(&app, "boss@globex.example", globex).await;
        invited(&app, &rival, "three@example.com", None).await;
    }

    async fn the_company_list_is_newest_first_with_meta_and_filters_by_status(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss) = acme(&app).await;
        let pending = invited(&app, &boss, "pending@example.com", None).await;
        let revoked = invited(&app, &boss, "revoked@example.com", None).await;
        let expired = invited(&app, &boss, "expired@example.com", None).await;
        let accepted = invited(&app, &boss, "accepted@example.com", Some("admin")).await;
        let declined = invited(&app, &boss, "declined@example.com", None).await;
        assert_eq!(delete(&app, &boss, &format!("{INVITATIONS}/{revoked}")).await.status(),
                   StatusCode::NO_CONTENT);
        expire(&app, expired).await;
        let (_, yes) = app.user_session("accepted@example.com").await;
        ok(answer(&app, &yes, accepted, "accepted").await).await;
        let (_, no) = app.user_session("declined@example.com").await;
        ok(answer(&app, &no, declined, "declined").await).await;

        let all = ok(get(&app, &boss, INVITATIONS).await).await;
        assert_eq!(keys(&all), ["meta", "org_invitations"], "{all}");
        assert_eq!(all["meta"], json!({"page": 1, "per_page": 25, "total": 5}));
        assert_eq!(ids(&all["org_invitations"]), [declined, accepted, expired, revoked, pending]);
        let statuses: Vec<&str> = items(&all["org_invitations"]).iter()
            .map(|i| i["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["declined", "accepted", "expired", "revoked", "pending"]);
        for item in items(&all["org_invitations"]) {
            assert_eq!(keys(item), INVITATION_KEYS, "{item}");
        }
        for (status, id) in [("pending", pending), ("revoked", revoked), ("expired", expired),
                             ("accepted", accepted), ("declined", declined)] {
            let path = format!("{INVITATIONS}?status={status}");
            let body = ok(get(&app, &boss, &path).await).await;
            assert_eq!(ids(&body["org_invitations"]), [id], "{status}: {body}");
            assert_eq!(body["org_invitations"][0]["status"], status);
            assert_eq!(body["meta"]["total"], 1, "{status}: {body}");
        }
        let page = ok(get(&app, &boss, &format!("{INVITATIONS}?per_page=2&page=2")).await).await;
        assert_eq!(ids(&page["org_invitations"]), [expired, revoked]);
        assert_eq!(page["meta"], json!({"page": 2, "per_page": 2, "total": 5}));
        let bogus = get(&app, &boss, &format!("{INVITATIONS}?status=bogus")).await;
        expect_error(bogus, StatusCode::BAD_REQUEST, "malformed_request").await;
        // An invitation that expired reads `expired` in the invited user's view too: it is gone.
        let (_, late) = app.user_session("expired@example.com").await;
        let mine = ok(get(&app, &late, MINE).await).await;
        assert_eq!(ids(&mine["org_invitations"]), [0i64; 0]);
    }

    async fn revoking_is_204_once_then_409_and_another_companys_is_404(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss) = acme(&app).await;
        let id = invited(&app, &boss, "new@example.com", None).await;
        let path = format!("{INVITATIONS}/{id}");
        assert_eq!(text(delete(&app, &boss, &path).await, StatusCode::NO_CONTENT).await, "");
        assert_eq!(stored_status(&app, id).await, "revoked");
        let list = ok(get(&app, &boss, INVITATIONS).await).await;
        assert_eq!(list["org_invitations"][0]["status"], "revoked");
        expect_error(delete(&app, &boss, &path).await, StatusCode::CONFLICT, "conflict").await;

        let expired = invited(&app, &boss, "late@example.com", None).await;
        expire(&app, expired).await;
        let late = delete(&app, &boss, &format!("{INVITATIONS}/{expired}")).await;
        expect_error(late, StatusCode::CONFLICT, "conflict").await;
        let accepted = invited(&app, &boss, "yes@example.com", None).await;
        let (_, yes) = app.user_session("yes@example.com").await;
        ok(answer(&app, &yes, accepted, "accepted").await).await;
        let answered = delete(&app, &boss, &format!("{INVITATIONS}/{accepted}")).await;
        expect_error(answered, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(stored_status(&app, accepted).await, "accepted");

        let globex = company(&app, "Globex").await;
        let (_, rival) = employer(&app, "boss@globex.example", globex).await;
        let theirs = invited(&app, &rival, "other@example.com", None).await;
        let foreign = delete(&app, &boss, &format!("{INVITATIONS}/{theirs}")).await;
        expect_error(foreign, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(stored_status(&app, theirs).await, "pending");
        let unknown = delete(&app, &boss, &format!("{INVITATIONS}/{}", theirs + 1000)).await;
        expect_error(unknown, StatusCode::NOT_FOUND, "not_found").await;
    }

    async fn a_user_lists_the_pending_invitations_to_their_address(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, boss_id, boss) = acme(&app).await;
        let globex = company(&app, "Globex").await;
        let (_, rival) = employer(&app, "boss@globex.example", globex).await;
        let initech = company(&app, "Initech").await;
        let (_, third) = employer(&app, "boss@initech.example", initech).await;
        let from_acme = invited(&app, &boss, "New@Example.com", None).await;
        let from_globex = invited(&app, &rival, "new@example.com", Some("admin")).await;
        let withdrawn = invited(&app, &third, "new@example.com", None).await;
        delete(&app, &third, &format!("{INVITATIONS}/{withdrawn}")).await;
        let lapsed = invited(&app, &third, "NEW@example.COM", None).await;
        expire(&app, lapsed).await;
        invited(&app, &boss, "someone-else@example.com", None).await;

        let (_, nora) = app.user_session("new@example.com").await;
        let mine = ok(get(&app, &nora, MINE).await).await;
        assert_eq!(keys(&mine), ["meta", "org_invitations"], "{mine}");
        assert_eq!(mine["meta"], json!({"page": 1, "per_page": 25, "total": 2}));
        assert_eq!(ids(&mine["org_invitations"]), [from_globex, from_acme], "newest first: {mine}");
        for item in items(&mine["org_invitations"]) {
            assert_eq!(keys(item), INVITATION_WITH_COMPANY_KEYS, "{item}");
            assert_eq!(item["status"], "pending");
        }
        assert_eq!(mine["org_invitations"][0]["company"], json!({"id": globex, "name": "Globex"}));
        assert_eq!(mine["org_invitations"][0]["role"], "admin");
        assert_eq!(mine["org_invitations"][1]["company"], json!({"id": acme, "name": "Acme"}));
        assert_eq!(mine["org_invitations"][1]["inviter"],
                   json!({"id": boss_id, "first_name": "Ada", "last_name": "Lovelace"}));

        // An unverified caller sees nothing: 403.
        let (_, otto) = signed_up(&app, "otto@example.com").await;
        invited(&app, &boss, "otto@example.com", None).await;
        expect_error(get(&app, &otto, MINE).await, StatusCode::FORBIDDEN, "email_unverified").await;
    }

    async fn accepting_by_id_makes_a_member_with_the_invitations_role_and_title(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss) = acme(&app).await;
        for (role, title) in [("member", "Member"), ("admin", "Admin"), ("owner", "Owner")] {
            let email = format!("{role}@example.com");
            let id = invited(&app, &boss, &email, Some(role)).await;
            let (user_id, creds) = app.user_session(&email).await;
            let body = ok(answer(&app, &creds, id, "accepted").await).await;
            assert_eq!(keys(&body), ["org_invitations"], "{body}");
            assert_eq!(keys(&body["org_invitations"]), INVITATION_KEYS, "{body}");
            assert_eq!(body["org_invitations"]["id"], id);
            assert_eq!(body["org_invitations"]["status"], "accepted");
            assert_eq!(body["org_invitations"]["role"], role);
            assert_eq!(stored_status(&app, id).await, "accepted");
            assert_eq!(profiles_of(&app, user_id).await, 1);
            let own = ok(get(&app, &creds, "/org/user-profiles/current").await).await;
            assert_eq!(own["role"], role, "{own}");
            assert_eq!(own["title"], title, "{own}");
            assert_eq!(own["company"], json!({"id": acme, "name": "Acme"}));
            // And it is gone from their list.
            let mine = ok(get(&app, &creds, MINE).await).await;
            assert_eq!(mine["meta"]["total"], 0, "{mine}");
        }
    }

    async fn answering_by_id_refuses_others_invitations_and_answered_ones(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss) = acme(&app).await;
        let to_nora = invited(&app, &boss, "nora@example.com", None).await;
        let (otto_id, otto) = app.user_session("otto@example.com").await;
        for status in ["accepted", "declined"] {
            expect_error(answer(&app, &otto, to_nora, status).await, StatusCode::NOT_FOUND, "not_found").await;
        }
        expect_error(answer(&app, &otto, to_nora + 1000, "accepted").await, StatusCode::NOT_FOUND, "not_found").await;
        assert_eq!(stored_status(&app, to_nora).await, "pending");
        assert_eq!(profiles_of(&app, otto_id).await, 0);

        // Declined: 200, no profile; no second answer.
        let (nora_id, nora) = app.user_session("nora@example.com").await;
        let body = ok(answer(&app, &nora, to_nora, "declined").await).await;
        assert_eq!(body["org_invitations"]["status"], "declined");
        assert_eq!(stored_status(&app, to_nora).await, "declined");
        assert_eq!(profiles_of(&app, nora_id).await, 0);
        for status in ["accepted", "declined"] {
            expect_error(answer(&app, &nora, to_nora, status).await, StatusCode::CONFLICT, "conflict").await;
        }
        // Revoked and expired ones: 409.
        let revoked = invited(&app, &boss, "nora@example.com", None).await;
        delete(&app, &boss, &format!("{INVITATIONS}/{revoked}")).await;
        expect_error(answer(&app, &nora, revoked, "accepted").await, StatusCode::CONFLICT, "conflict").await;
        let expired = invited(&app, &boss, "nora@example.com", None).await;
        expire(&app, expired).await;
        for status in ["accepted", "declined"] {
            expect_error(answer(&app, &nora, expired, status).await, StatusCode::CONFLICT, "conflict").await;
        }
        assert_eq!(stored_status(&app, revoked).await, "revoked");
        assert_eq!(stored_status(&app, expired).await, "pending");
        assert_eq!(profiles_of(&app, nora_id).await, 0);

        // A bad answer: 422 on status, nothing changes.
        let fresh = invited(&app, &boss, "nora@example.com", None).await;
        for body in [json!({"status": "maybe"}), json!({"status": "pending"}), json!({}),
                     json!({"status": "revoked"})] {
            let response = patch(&app, &nora, &format!("{MINE}/{fresh}"), &body).await;
            expect_fields(response, &["status"]).await;
        }
        assert_eq!(stored_status(&app, fresh).await, "pending");
    }

    async fn a_caller_with_an_org_profile_cannot_accept_and_the_invitation_stays_pending(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss) = acme(&app).await;
        let globex = company(&app, "Globex").await;
        let (user_id, employed) = employer(&app, "busy@globex.example", globex).await;
        let id = invited(&app, &boss, "busy@globex.example", None).await;
        expect_error(answer(&app, &employed, id, "accepted").await, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(stored_status(&app, id).await, "pending");
        assert_eq!(profiles_of(&app, user_id).await, 1);
        let own = ok(get(&app, &employed, "/org/user-profiles/current").await).await;
        assert_eq!(own["company"]["id"], globex);
        // They may still decline it.
        let body = ok(answer(&app, &employed, id, "declined").await).await;
        assert_eq!(body["org_invitations"]["status"], "declined");
    }

    async fn an_unverified_caller_cannot_answer_by_id(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss) = acme(&app).await;
        let id = invited(&app, &boss, "nora@example.com", None).await;
        let (nora_id, nora) = signed_up(&app, "nora@example.com").await;
        for status in ["accepted", "declined"] {
            expect_error(answer(&app, &nora, id, status).await, StatusCode::FORBIDDEN, "email_unverified").await;
        }
        assert_eq!(stored_status(&app, id).await, "pending");
        assert_eq!(profiles_of(&app, nora_id).await, 0);
    }

    async fn the_token_opens_the_invitation_and_verifies_a_matching_address(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let (acme, boss_id, boss) = acme(&app).await;
        let id = invited(&app, &boss, "Nora@Example.com", Some("admin")).await;
        let token = invitation_token(&sink, "nora@example.com").await;
        let (nora_id, nora) = signed_up(&app, "nora@example.com").await;
        assert_eq!(verified_at(&app, &nora).await, Value::Null);

        let opened = ok(by_token(&app, &nora, json!({"token": token})).await).await;
        assert_eq!(keys(&opened), ["org_invitations"], "{opened}");
        let view = &opened["org_invitations"];
        assert_eq!(keys(view), INVITATION_WITH_COMPANY_KEYS, "{opened}");
        assert_eq!(view["id"], id);
        assert_eq!(view["status"], "pending");
        assert_eq!(view["role"], "admin");
        assert_eq!(view["company"], json!({"id": acme, "name": "Acme"}));
        assert_eq!(view["inviter"], json!({"id": boss_id, "first_name": "Ada", "last_name": "Lovelace"}));
        // The token proved the mailbox; nothing else changed.
        assert!(verified_at(&app, &nora).await.is_string(), "verified by the invitation's token");
        assert_eq!(stored_status(&app, id).await, "pending");
        assert_eq!(profiles_of(&app, nora_id).await, 0);
        // Opening again is fine while it is pending.
        ok(by_token(&app, &nora, json!({"token": token})).await).await;

        let accepted = ok(by_token(&app, &nora, json!({"token": token, "status": "accepted"})).await).await;
        assert_eq!(keys(&accepted["org_invitations"]), INVITATION_WITH_COMPANY_KEYS, "{accepted}");
        assert_eq!(accepted["org_invitations"]["status"], "accepted");
        assert_eq!(accepted["org_invitations"]["company"], json!({"id": acme, "name": "Acme"}));
        assert_eq!(stored_status(&app, id).await, "accepted");
        let own = ok(get(&app, &nora, "/org/user-profiles/current").await).await;
        assert_eq!((own["role"].as_str(), own["title"].as_str()), (Some("admin"), Some("Admin")));
        // Used: 422 on token.
        expect_token_refused(by_token(&app, &nora, json!({"token": token})).await, "used").await;
        expect_token_refused(by_token(&app, &nora, json!({"token": token, "status": "accepted"})).await,
                             "used, accepting again").await;
    }

    async fn a_token_declines_too(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let (_, _, boss) = acme(&app).await;
        let id = invited(&app, &boss, "nora@example.com", None).await;
        let token = invitation_token(&sink, "nora@example.com").await;
        let (nora_id, nora) = signed_up(&app, "nora@example.com").await;
        let declined = ok(by_token(&app, &nora, json!({"token": token, "status": "declined"})).await).await;
        assert_eq!(declined["org_invitations"]["status"], "declined");
        assert_eq!(stored_status(&app, id).await, "declined");
        assert_eq!(profiles_of(&app, nora_id).await, 0);
        assert!(verified_at(&app, &nora).await.is_string());
        expect_token_refused(by_token(&app, &nora, json!({"token": token, "status": "accepted"})).await,
                             "declined").await;
        assert_eq!(profiles_of(&app, nora_id).await, 0);
    }

    async fn a_refused_token_is_a_422_on_token(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let (_, _, boss) = acme(&app).await;
        let to_nora = invited(&app, &boss, "nora@example.com", None).await;
        let revoked = invited(&app, &boss, "rev@example.com", None).await;
        let expired = invited(&app, &boss, "exp@example.com", None).await;
        let replaced = invited(&app, &boss, "rep@example.com", None).await;
        let nora_token = invitation_token(&sink, "nora@example.com").await;
        let revoked_token = invitation_token(&sink, "rev@example.com").await;
        let expired_token = invitation_token(&sink, "exp@example.com").await;
        let replaced_token = invitation_token(&sink, "rep@example.com").await;
        delete(&app, &boss, &format!("{INVITATIONS}/{revoked}")).await;
        expire(&app, expired).await;
        let replacement = invited(&app, &boss, "rep@example.com", None).await;
        assert_eq!(stored_status(&app, replaced).await, "revoked");

        // Another address's token: refused, and it verifies nobody.
        let (otto_id, otto) = signed_up(&app, "otto@example.com").await;
        for status in [None, Some("accepted"), Some("declined")] {
            let mut body = json!({"token": nora_token});
            if let Some(status) = status {
                body["status"] = json!(status);
            }
            expect_token_refused(by_token(&app, &otto, body).await, "another address's").await;
        }
        assert_eq!(verified_at(&app, &otto).await, Value::Null);
        assert_eq!(stored_status(&app, to_nora).await, "pending");
        assert_eq!(profiles_of(&app, otto_id).await, 0);

        let unknown = by_token(&app, &otto, json!({"token": "x".repeat(43)})).await;
        expect_token_refused(unknown, "unknown").await;
        expect_token_refused(by_token(&app, &otto, json!({})).await, "missing").await;

        for (address, token, what) in [("rev@example.com", &revoked_token, "revoked"),
                                       ("exp@example.com", &expired_token, "expired"),
                                       ("rep@example.com", &replaced_token, "replaced")] {
            let (user_id, creds) = signed_up(&app, address).await;
            for status in [None, Some("accepted")] {
                let mut body = json!({"token": token});
                if let Some(status) = status {
                    body["status"] = json!(status);
                }
                expect_token_refused(by_token(&app, &creds, body).await, what).await;
            }
            assert_eq!(verified_at(&app, &creds).await, Value::Null, "{what}: verifies nobody");
            assert_eq!(profiles_of(&app, user_id).await, 0, "{what}");
        }
        assert_eq!(stored_status(&app, revoked).await, "revoked");
        assert_eq!(stored_status(&app, expired).await, "pending");
        assert_eq!(stored_status(&app, replacement).await, "pending");

        // A bad status with a good token: 422 on status, nothing answered.
        let (_, nora) = app.user_session("nora@example.com").await;
        let bad = by_token(&app, &nora, json!({"token": nora_token, "status": "maybe"})).await;
        expect_fields(bad, &["status"]).await;
        assert_eq!(stored_status(&app, to_nora).await, "pending");
    }

    async fn a_caller_with_an_org_profile_cannot_accept_by_token(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let (_, _, boss) = acme(&app).await;
        let globex = company(&app, "Globex").await;
        let (user_id, busy) = employer(&app, "busy@globex.example", globex).await;
        let id = invited(&app, &boss, "busy@globex.example", None).await;
        let token = invitation_token(&sink, "busy@globex.example").await;
        let refused = by_token(&app, &busy, json!({"token": token, "status": "accepted"})).await;
        expect_error(refused, StatusCode::CONFLICT, "conflict").await;
        assert_eq!(stored_status(&app, id).await, "pending");
        assert_eq!(profiles_of(&app, user_id).await, 1);
    }

    /// Two accepts of one invitation at once (same user, by id): one 200, one 409, one profile.
    async fn two_accepts_of_one_invitation_at_once_make_one_member(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss) = acme(&app).await;
        let (nora_id, nora) = app.user_session("nora@example.com").await;
        for round in 0..5 {
            let id = invited(&app, &boss, "nora@example.com", None).await;
            let (first, second) = tokio::join!(answer(&app, &nora, id, "accepted"),
                                                answer(&app, &nora, id, "accepted"));
            let mut statuses = [first.status(), second.status()];
            statuses.sort();
            assert_eq!(statuses, [StatusCode::OK, StatusCode::CONFLICT], "round {round}");
            let loser = if first.status() == StatusCode::CONFLICT { first } else { second };
            expect_error(loser, StatusCode::CONFLICT, "conflict").await;
            assert_eq!(profiles_of(&app, nora_id).await, 1, "round {round}");
            assert_eq!(stored_status(&app, id).await, "accepted", "round {round}");
            let profile: i64 = scalar(&app, &format!(
                "SELECT id FROM org_user_profiles WHERE identities_user_id = {nora_id} AND company_id = {acme}"
            )).await.parse().unwrap();
            delete_org_profile(&app, profile).await;
        }
    }

    /// Two invitations to one address at once: had either come second it would have revoked the
    /// other and got 201; so both are 201 and exactly one stays pending (rounds with and without
    /// an earlier pending invitation to the address).
    async fn two_invitations_to_one_address_at_once_leave_one_pending(backend) {
        let app = TestApp::spawn(backend).await;
        let (acme, _, boss) = acme(&app).await;
        for round in 0..6 {
            let email = format!("twice{round}@example.com");
            if round % 2 == 1 {
                invited(&app, &boss, &email, None).await;
            }
            let (a, b) = tokio::join!(invite(&app, &boss, &email, None),
                                      invite(&app, &boss, &email, Some("admin")));
            let (sa, sb) = (a.status(), b.status());
            let (ta, tb) = (a.text().await.unwrap(), b.text().await.unwrap());
            assert_eq!((sa, sb), (StatusCode::CREATED, StatusCode::CREATED),
                       "round {round}: {ta} / {tb}");
            let pending = format!(
                "SELECT COUNT(*) FROM org_invitations WHERE company_id = {acme} \
                 AND email = '{email}' AND status = 'pending'"
            );
            assert_eq!(count(&app, &pending).await, 1, "round {round}");
        }
    }

    /// An accept and a revocation of one invitation at once: exactly one of them happens, and the
    /// org profile exists exactly when the invitation reads accepted.
    async fn an_accept_racing_a_revocation_lets_exactly_one_happen(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss) = acme(&app).await;
        for round in 0..6 {
            let email = format!("racer{round}@example.com");
            let (user_id, creds) = app.user_session(&email).await;
            let id = invited(&app, &boss, &email, None).await;
            let path = format!("{INVITATIONS}/{id}");
            let (accepted, revoked) = tokio::join!(
                answer(&app, &creds, id, "accepted"),
                delete(&app, &boss, &path)
            );
            let (sa, sr) = (accepted.status(), revoked.status());
            let status = stored_status(&app, id).await;
            let profiles = profiles_of(&app, user_id).await;
            match (sa, sr) {
                (StatusCode::OK, StatusCode::CONFLICT) => {
                    assert_eq!((status.as_str(), profiles), ("accepted", 1), "round {round}");
                }
                (StatusCode::CONFLICT, StatusCode::NO_CONTENT) => {
                    assert_eq!((status.as_str(), profiles), ("revoked", 0), "round {round}");
                }
                other => panic!("round {round}: exactly one happens, got {other:?}"),
            }
        }
    }

    /// Two invitations of two companies accepted at once by one user: one profile, the other
    /// invitation still pending.
    async fn accepting_two_companies_invitations_at_once_makes_one_profile(backend) {
        let app = TestApp::spawn(backend).await;
        let (_, _, boss) = acme(&app).await;
        let globex = company(&app, "Globex").await;
        let (_, rival) = employer(&app, "boss@globex.example", globex).await;
        for round in 0..4 {
            let email = format!("nora{round}@example.com");
            let (user_id, nora) = app.user_session(&email).await;
            let a = invited(&app, &boss, &email, None).await;
            let b = invited(&app, &rival, &email, None).await;
            let (ra, rb) = tokio::join!(answer(&app, &nora, a, "accepted"),
                                        answer(&app, &nora, b, "accepted"));
            let mut statuses = [ra.status(), rb.status()];
            statuses.sort();
            assert_eq!(statuses, [StatusCode::OK, StatusCode::CONFLICT], "round {round}");
            assert_eq!(profiles_of(&app, user_id).await, 1, "round {round}");
            let (winner, loser) = if ra.status() == StatusCode::OK { (a, b) } else { (b, a) };
            assert_eq!(stored_status(&app, winner).await, "accepted", "round {round}");
            assert_eq!(stored_status(&app, loser).await, "pending", "round {round}");
        }
    }

    /// The journey, over HTTP and SMTP only: sign up, verify, log in, create the company
    /// and a job, invite a colleague, who signs up, logs in, accepts by the link's token and
    /// reads the company's jobs.
    async fn onboarding_journey_from_sign_up_to_a_colleague_reading_the_jobs(backend) {
        let sink = SmtpSink::up().await;
        let app = spawn_with_sink(backend, &sink, &[]).await;
        let founder = "founder@example.com";
        let signed = app.request(Method::POST, "/identities/users")
            .json(&sign_up_body(founder)).send().await.unwrap();
        assert_eq!(signed.status(), StatusCode::CREATED);
        let verification = message_to(&sink, founder, "verify-email?token=").await;
        let token = token_after(&verification.text(), "verify-email?token=");
        let verified = app.request(Method::PATCH, "/identities/email_verifications/current")
            .json(&json!({"token": token})).send().await.unwrap();
        assert_eq!(verified.status(), StatusCode::NO_CONTENT);
        let boss = app.login(&USER, founder).await;
        assert!(verified_at(&app, &boss).await.is_string());

        let created = post(&app, &boss, "/identities/org/companies",
                           &json!({"name": "Acme Robotics"})).await;
        let created = json(created, StatusCode::CREATED).await;
        let company_id = created["org_companies"]["id"].as_i64().unwrap();
        let own = ok(get(&app, &boss, "/org/user-profiles/current").await).await;
        assert_eq!((own["role"].as_str(), own["title"].as_str()), (Some("owner"), Some("Owner")));

        let form = json!({"title": "Rust engineer", "description": "Build robots",
                          "company": {"id": company_id}});
        let job = json(post(&app, &boss, "/org-user/careers/jobs", &form).await, StatusCode::CREATED).await;
        let job_id = job["careers_jobs"]["id"].as_i64().unwrap();

        let colleague = "colleague@example.com";
        invited(&app, &boss, colleague, None).await;
        let signed = app.request(Method::POST, "/identities/users")
            .json(&sign_up_body(colleague)).send().await.unwrap();
        assert_eq!(signed.status(), StatusCode::CREATED);
        let mate = app.login(&USER, colleague).await;
        let invitation = invitation_token(&sink, colleague).await;
        let landing = ok(by_token(&app, &mate, json!({"token": invitation})).await).await;
        assert_eq!(landing["org_invitations"]["company"],
                   json!({"id": company_id, "name": "Acme Robotics"}));
        let accepted = by_token(&app, &mate, json!({"token": invitation, "status": "accepted"})).await;
        let accepted = ok(accepted).await;
        assert_eq!(accepted["org_invitations"]["status"], "accepted");

        let jobs = ok(get(&app, &mate, "/org-user/careers/jobs").await).await;
        assert_eq!(ids(&jobs["careers_jobs"]), [job_id], "{jobs}");
        assert_eq!(jobs["careers_jobs"][0]["title"], "Rust engineer");
        let own = ok(get(&app, &mate, "/org/user-profiles/current").await).await;
        assert_eq!((own["role"].as_str(), own["title"].as_str()), (Some("member"), Some("Member")));
        assert_eq!(own["company"]["id"], company_id);
        // The colleague's address was proved by the invitation's link.
        assert!(verified_at(&app, &mate).await.is_string());
        // The founder sees the colleague among the members and the invitation accepted.
        let members = ok(get(&app, &boss, "/org/user-profiles").await).await;
        assert_eq!(items(&members["org_user_profiles"]).len(), 2, "{members}");
        let list = ok(get(&app, &boss, "/org/invitations").await).await;
        assert_eq!(list["org_invitations"][0]["status"], "accepted");
    }
}
