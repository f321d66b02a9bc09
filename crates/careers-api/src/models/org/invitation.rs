//! `Org::Invitation` (CONTRACT §14): a company's manager invites an e-mail address with a role;
//! the message's link carries a single-use token (kept only as its SHA-256, as the other
//! one-time tokens); the invited user accepts (which makes them a member, in the same
//! transaction) or declines, by id once their e-mail is verified, or by the token, which proves
//! the mailbox.
//!
//! Every rule that spans rows is a constraint or a conditional write: one pending invitation per
//! (company, e-mail) is a partial unique index, an invitation is answered once by an `UPDATE ...
//! WHERE status = 'pending'`, and a user has one org profile by a unique index.

pub mod entity;

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait,
    FromQueryResult, JoinType, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, RelationTrait,
    Select, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as invitation;
use super::company::{CompanyBrief, entity as company};
use super::member::{current_actor, insert_member};
use super::user_profile::{entity as profile, role_name, role_of};
use super::{Actor, Role};
use crate::db::{DataError, page_of, write_transaction};
use crate::forms::{Errors, Invalid};
use crate::mail::{self, NewMail};
use crate::mfa::SecretBox;
use crate::models::identities::normalize_email;
use crate::models::identities::one_time_token::{new_token, token_hash};
use crate::models::identities::user::{UserBrief, entity as user};

/// An invitation's state as its responses spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Accepted,
    Declined,
    Revoked,
    /// A pending invitation past `expires_at`.
    Expired,
}

impl Status {
    fn stored(self) -> &'static str {
        match self {
            Self::Pending | Self::Expired => "pending",
            Self::Accepted => "accepted",
            Self::Declined => "declined",
            Self::Revoked => "revoked",
        }
    }

    fn read(stored: &str, expires_at: DateTime<Utc>, now: DateTime<Utc>) -> Self {
        match stored {
            "accepted" => Self::Accepted,
            "declined" => Self::Declined,
            "revoked" => Self::Revoked,
            "expired" => Self::Expired,
            _ if expires_at <= now => Self::Expired,
            _ => Self::Pending,
        }
    }
}

/// `Org::Invitation`; `company` only in the invited user's views. The token is never here.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct InvitationView {
    pub id: i64,
    pub email: String,
    pub role: Role,
    pub status: Status,
    pub expires_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Who invited; null once their account is gone.
    pub inviter: Option<UserBrief<'static>>,
    /// The inviting company (the invited user's views only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company: Option<CompanyBrief>,
}

/// `POST /org/invitations`: `{email, role}` (`role` defaults to `member`).
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct InvitationForm {
    #[garde(email, length(max = 254))]
    pub email: Option<String>,
    /// `owner`, `admin` or `member`.
    #[garde(custom(role_name))]
    #[schema(value_type = Option<Role>)]
    pub role: Option<String>,
}

impl InvitationForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("email", self.email.is_some());
        errors.finish()
    }
}

/// An answer: `accepted` or `declined`.
fn answer_name(value: &Option<String>, _: &()) -> garde::Result {
    match value.as_deref() {
        None | Some("accepted" | "declined") => Ok(()),
        Some(_) => Err(garde::Error::new("must be accepted or declined")),
    }
}

/// `PATCH /identities/org/invitations/:id`: `{status}`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct AnswerForm {
    /// `accepted` or `declined`.
    #[garde(custom(answer_name))]
    pub status: Option<String>,
}

impl AnswerForm {
    pub fn validate(&self) -> Result<Answer, Invalid> {
        let mut errors = Errors::of(self);
        errors.require("status", self.status.is_some());
        errors.finish()?;
        Answer::of(self.status.as_deref()).ok_or_else(|| Invalid::field("status", "is required"))
    }
}

/// `PATCH /identities/org/invitations/current`: `{token, status}`; without `status`, the
/// invitation is only read (the link's landing page).
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct TokenAnswerForm {
    /// The token of the invitation message.
    #[garde(length(min = 1, max = 256))]
    pub token: Option<String>,
    /// `accepted` or `declined`; absent: only read.
    #[garde(custom(answer_name))]
    pub status: Option<String>,
}

impl TokenAnswerForm {
    pub fn validate(&self) -> Result<(&str, Option<Answer>), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("token", self.token.is_some());
        errors.finish()?;
        let token = self.token.as_deref().unwrap_or_default();
        Ok((token, Answer::of(self.status.as_deref())))
    }
}

/// What the invited user answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Accepted,
    Declined,
}

impl Answer {
    fn of(status: Option<&str>) -> Option<Self> {
        match status? {
            "accepted" => Some(Self::Accepted),
            "declined" => Some(Self::Declined),
            _ => None,
        }
    }

    fn status(self) -> Status {
        match self {
            Self::Accepted => Status::Accepted,
            Self::Declined => Status::Declined,
        }
    }
}

/// The `?status=` filter of the company's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    Pending,
    Accepted,
    Declined,
    Revoked,
    Expired,
}

#[derive(Debug, FromQueryResult)]
struct InvitationRow {
    id: i64,
    email: String,
    role: String,
    status: String,
    expires_at: DateTime<Utc>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    inviter_id: Option<i64>,
    inviter_first_name: Option<String>,
    inviter_last_name: Option<String>,
    company_id: Option<i64>,
    company_name: Option<String>,
}

impl InvitationRow {
    fn view(self, now: DateTime<Utc>) -> InvitationView {
        let inviter = match (
            self.inviter_id,
            self.inviter_first_name,
            self.inviter_last_name,
        ) {
            (Some(id), Some(first), Some(last)) => Some(UserBrief {
                id,
                first_name: first.into(),
                last_name: last.into(),
            }),
            _ => None,
        };
        let company = match (self.company_id, self.company_name) {
            (Some(id), Some(name)) => Some(CompanyBrief { id, name }),
            _ => None,
        };
        InvitationView {
            id: self.id,
            email: self.email,
            role: Role::parse(&self.role),
            status: Status::read(&self.status, self.expires_at, now),
            expires_at: self.expires_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
            inviter,
            company,
        }
    }
}

/// Invitations with their inviter (a left join: the inviter's account may be gone) and, for the
/// invited user's views, their company: three tables, one statement.
fn invitations(with_company: bool) -> Select<invitation::Entity> {
    let query = invitation::Entity::find()
        .select_only()
        .column(invitation::Column::Id)
        .column(invitation::Column::Email)
        .column(invitation::Column::Role)
        .column(invitation::Column::Status)
        .column(invitation::Column::ExpiresAt)
        .column(invitation::Column::CreatedAt)
        .column(invitation::Column::UpdatedAt)
        .column_as(user::Column::Id, "inviter_id")
        .column_as(user::Column::FirstName, "inviter_first_name")
        .column_as(user::Column::LastName, "inviter_last_name")
        .join(JoinType::LeftJoin, invitation::Relation::Inviter.def());
    if with_company {
        query
            .column_as(company::Column::Id, "company_id")
            .column_as(company::Column::Name, "company_name")
            .join(JoinType::InnerJoin, invitation::Relation::Company.def())
    } else {
        query
            .expr_as(Expr::value(Option::<i64>::None), "company_id")
            .expr_as(Expr::value(Option::<String>::None), "company_name")
    }
}

async fn view_of<C: ConnectionTrait>(
    conn: &C,
    id: i64,
    with_company: bool,
    now: DateTime<Utc>,
) -> Result<InvitationView, DataError> {
    invitations(with_company)
        .filter(invitation::Column::Id.eq(id))
        .into_model::<InvitationRow>()
        .one(conn)
        .await?
        .map(|row| row.view(now))
        .ok_or(DataError::Inconsistent)
}

/// What the invitation message says, where its link goes, how long it is valid, and what seals
/// it in the outbox.
pub struct InvitationMessage<'a> {
    /// The frontend's page; `{token}` is replaced by the token.
    pub url_template: &'a str,
    pub lifetime_seconds: i64,
    pub secrets: &'a SecretBox,
}

impl InvitationMessage<'_> {
    fn mail(
        &self,
        recipient: &str,
        company: &str,
        role: Role,
        token: &str,
        expires_at: DateTime<Utc>,
    ) -> NewMail {
        let link = self.url_template.replace("{token}", token);
        let role = role.as_str();
        NewMail {
            recipient: recipient.to_owned(),
            subject: format!("You are invited to join {company}"),
            body: format!(
                "You are invited to join {company} on careers as {role}. Open this link to \
                 accept or decline:\n\n{link}\n\n\
                 The link works once, until {expires_at}. If you did not expect this \
                 invitation, ignore this message.\n",
                expires_at = expires_at.format("%Y-%m-%d %H:%M UTC"),
            ),
            not_after: expires_at,
        }
    }
}

/// Who invites: their company, their user id and their role there.
#[derive(Debug, Clone, Copy)]
pub struct Inviter {
    pub company_id: i64,
    pub user_id: i64,
    pub actor: Actor,
}

/// Invites `form.email` into the inviter's company, in one transaction: the pending invitation
/// to the same address is revoked, the new one stored and its message queued. 409 for an
/// address that is a member's; refused when an admin invites an owner or replaces an owner's
/// invitation.
pub async fn invite(
    db: &DatabaseConnection,
    message: &InvitationMessage<'_>,
    inviter: Inviter,
    form: InvitationForm,
    now: DateTime<Utc>,
) -> Result<InvitationView, DataError> {
    let email = normalize_email(form.email.as_deref().ok_or(DataError::Inconsistent)?);
    let role = role_of(&form.role).unwrap_or(Role::Member);
    let txn = write_transaction(db).await?;
    // Invitations of one company serialise on its row: of two to one address at once, the
    // second revokes the first, as if it had come later.
    super::company::lock(&txn, inviter.company_id).await?;
    let actor = current_actor(&txn, inviter.actor, inviter.company_id).await?;
    actor.may_manage()?;
    actor.may_touch(role)?;
    let company = company::Entity::find_by_id(inviter.company_id)
        .one(&txn)
        .await?
        .ok_or(DataError::NotFound)?;
    let member = profile::Entity::find()
        .inner_join(user::Entity)
        .filter(profile::Column::CompanyId.eq(inviter.company_id))
        .filter(user::Column::Email.eq(&email))
        .count(&txn)
        .await?;
    if member > 0 {
        return Err(DataError::Conflict(
            "this address is a member's of your company already".into(),
        ));
    }
    // A lapsed invitation to the address is stored as the `expired` it reads (its history
    // kept), which frees the one-pending index; a pending one is replaced: revoked.
    invitation::Entity::update_many()
        .col_expr(invitation::Column::Status, Expr::value(LAPSED))
        .filter(invitation::Column::CompanyId.eq(inviter.company_id))
        .filter(invitation::Column::Email.eq(&email))
        .filter(invitation::Column::Status.eq(Status::Pending.stored()))
        .filter(invitation::Column::ExpiresAt.lte(now))
        .exec(&txn)
        .await?;
    let pending = invitation::Entity::find()
        .filter(invitation::Column::CompanyId.eq(inviter.company_id))
        .filter(invitation::Column::Email.eq(&email))
        .filter(pending_at(now))
        .one(&txn)
        .await?;
    if let Some(pending) = pending {
        actor.may_touch(Role::parse(&pending.role))?;
        invitation::Entity::update_many()
            .col_expr(
                invitation::Column::Status,
                Expr::value(Status::Revoked.stored()),
            )
            .col_expr(invitation::Column::UpdatedAt, Expr::value(now))
            .filter(invitation::Column::Id.eq(pending.id))
            .filter(pending_at(now))
            .exec(&txn)
            .await?;
    }
    let token = new_token();
    let expires_at = now + Duration::seconds(message.lifetime_seconds);
    let created = invitation::ActiveModel {
        company_id: Set(inviter.company_id),
        email: Set(email.clone()),
        role: Set(role.as_str().to_owned()),
        status: Set(Status::Pending.stored().to_owned()),
        token_hash: Set(token_hash(&token)),
        expires_at: Set(expires_at),
        inviter_id: Set(Some(inviter.user_id)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await
    .map_err(|e| {
        DataError::conflict_if_unique(e, "another invitation to this address was just sent")
    })?;
    mail::enqueue(
        &txn,
        message.secrets,
        message.mail(&email, &company.name, role, &token, expires_at),
        now,
    )
    .await?;
    let view = view_of(&txn, created.id, false, now).await?;
    txn.commit().await?;
    Ok(view)
}

/// How a lapsed invitation is stored once a new one to its address replaces it (it read
/// `expired` already; a stored `pending` would hold the one-pending index).
const LAPSED: &str = "expired";

/// A pending invitation is one whose stored status is `pending` and that has not expired.
fn pending_at(now: DateTime<Utc>) -> Condition {
    Condition::all()
        .add(invitation::Column::Status.eq(Status::Pending.stored()))
        .add(invitation::Column::ExpiresAt.gt(now))
}

/// The company's invitations, newest first, optionally of one status.
pub async fn company_invitations(
    db: &DatabaseConnection,
    company_id: i64,
    status: Option<StatusFilter>,
    page: u64,
    per_page: u64,
    now: DateTime<Utc>,
) -> Result<(Vec<InvitationView>, u64), DataError> {
    let mut filter = Condition::all().add(invitation::Column::CompanyId.eq(company_id));
    filter = match status {
        None => filter,
        Some(StatusFilter::Pending) => filter.add(pending_at(now)),
        Some(StatusFilter::Expired) => filter.add(
            Condition::any()
                .add(invitation::Column::Status.eq(LAPSED))
                .add(
                    Condition::all()
                        .add(invitation::Column::Status.eq(Status::Pending.stored()))
                        .add(invitation::Column::ExpiresAt.lte(now)),
                ),
        ),
        Some(StatusFilter::Accepted) => filter.add(invitation::Column::Status.eq("accepted")),
        Some(StatusFilter::Declined) => filter.add(invitation::Column::Status.eq("declined")),
        Some(StatusFilter::Revoked) => filter.add(invitation::Column::Status.eq("revoked")),
    };
    newest_first(db, filter, false, page, per_page, now).await
}

/// A page of the invitations that `filter` keeps, newest first, and their number.
async fn newest_first(
    db: &DatabaseConnection,
    filter: Condition,
    with_company: bool,
    page: u64,
    per_page: u64,
    now: DateTime<Utc>,
) -> Result<(Vec<InvitationView>, u64), DataError> {
    let total = invitation::Entity::find()
        .filter(filter.clone())
        .count(db)
        .await?;
    let rows = page_of(
        invitations(with_company)
            .filter(filter)
            .order_by_desc(invitation::Column::CreatedAt)
            .order_by_desc(invitation::Column::Id),
        page,
        per_page,
    )
    .into_model::<InvitationRow>()
    .all(db)
    .await?;
    Ok((rows.into_iter().map(|r| r.view(now)).collect(), total))
}

/// Revokes a pending invitation of the company (a conditional write: one that is no longer
/// pending is 409); an admin may not revoke an owner's.
pub async fn revoke(
    db: &DatabaseConnection,
    actor: Actor,
    company_id: i64,
    id: i64,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    let txn = write_transaction(db).await?;
    super::company::lock(&txn, company_id).await?;
    let actor = current_actor(&txn, actor, company_id).await?;
    actor.may_manage()?;
    let found = invitation::Entity::find_by_id(id)
        .filter(invitation::Column::CompanyId.eq(company_id))
        .one(&txn)
        .await?
        .ok_or(DataError::NotFound)?;
    actor.may_touch(Role::parse(&found.role))?;
    let revoked = invitation::Entity::update_many()
        .col_expr(
            invitation::Column::Status,
            Expr::value(Status::Revoked.stored()),
        )
        .col_expr(invitation::Column::UpdatedAt, Expr::value(now))
        .filter(invitation::Column::Id.eq(id))
        .filter(pending_at(now))
        .exec(&txn)
        .await?
        .rows_affected;
    if revoked == 0 {
        return Err(not_pending());
    }
    txn.commit().await?;
    Ok(())
}

fn not_pending() -> DataError {
    DataError::Conflict("the invitation is no longer pending".into())
}

/// The pending, unexpired invitations to `email`, newest first, with their companies.
pub async fn user_invitations(
    db: &DatabaseConnection,
    email: &str,
    page: u64,
    per_page: u64,
    now: DateTime<Utc>,
) -> Result<(Vec<InvitationView>, u64), DataError> {
    let filter = Condition::all()
        .add(invitation::Column::Email.eq(normalize_email(email)))
        .add(pending_at(now));
    newest_first(db, filter, true, page, per_page, now).await
}

/// The invited user: the caller of the `/identities` area.
#[derive(Debug, Clone, Copy)]
pub struct Invitee<'a> {
    pub user_id: i64,
    pub email: &'a str,
}

/// Answers invitation `id` for a caller whose (verified) e-mail is the invitation's; any other
/// caller gets `NotFound`. 409 when it is no longer pending, when accepting it and the caller
/// has an org profile, or when its company is suspended.
pub async fn answer_by_id(
    db: &DatabaseConnection,
    invitee: Invitee<'_>,
    id: i64,
    answer: Answer,
    now: DateTime<Utc>,
) -> Result<InvitationView, DataError> {
    let txn = write_transaction(db).await?;
    let found = invitation::Entity::find_by_id(id)
        .filter(invitation::Column::Email.eq(normalize_email(invitee.email)))
        .one(&txn)
        .await?
        .ok_or(DataError::NotFound)?;
    // Answers, invitations and suspensions of one company serialise on its row.
    super::company::lock(&txn, found.company_id).await?;
    if !answer_once(&txn, &found, answer, now).await? {
        return Err(not_pending());
    }
    if answer == Answer::Accepted {
        join(&txn, invitee.user_id, &found, now).await?;
    }
    let view = view_of(&txn, id, false, now).await?;
    txn.commit().await?;
    Ok(view)
}

/// Why a token answer failed: the token itself (422 on `token`), or a conflict of the state.
pub fn invalid_token() -> Invalid {
    Invalid::field(
        "token",
        "is invalid, for another address, or its invitation is no longer pending",
    )
}

/// Reads (`answer` `None`) or answers the invitation of `token`. The token proves the mailbox:
/// a caller whose e-mail is the invitation's becomes verified by it. Every refusal about the
/// token itself (unknown, another address, not pending) is `Ok(None)`.
pub async fn answer_by_token(
    db: &DatabaseConnection,
    invitee: Invitee<'_>,
    token: &str,
    answer: Option<Answer>,
    now: DateTime<Utc>,
) -> Result<Option<InvitationView>, DataError> {
    let txn = write_transaction(db).await?;
    let Some(found) = invitation::Entity::find()
        .filter(invitation::Column::TokenHash.eq(token_hash(token)))
        .filter(invitation::Column::Email.eq(normalize_email(invitee.email)))
        .filter(pending_at(now))
        .one(&txn)
        .await?
    else {
        return Ok(None);
    };
    user::Entity::update_many()
        .col_expr(user::Column::EmailVerifiedAt, Expr::value(now))
        .col_expr(user::Column::UpdatedAt, Expr::value(now))
        .filter(user::Column::Id.eq(invitee.user_id))
        .filter(user::Column::EmailVerifiedAt.is_null())
        .exec(&txn)
        .await?;
    if let Some(answer) = answer {
        super::company::lock(&txn, found.company_id).await?;
        if !answer_once(&txn, &found, answer, now).await? {
            return Ok(None);
        }
        if answer == Answer::Accepted {
            join(&txn, invitee.user_id, &found, now).await?;
        }
    }
    let view = view_of(&txn, found.id, true, now).await?;
    txn.commit().await?;
    Ok(Some(view))
}

/// The conditional write that answers an invitation once: `false` when it was no longer pending
/// (answered, revoked, expired; a concurrent answer committed first).
async fn answer_once<C: ConnectionTrait>(
    conn: &C,
    found: &invitation::Model,
    answer: Answer,
    now: DateTime<Utc>,
) -> Result<bool, DataError> {
    let answered = invitation::Entity::update_many()
        .col_expr(
            invitation::Column::Status,
            Expr::value(answer.status().stored()),
        )
        .col_expr(invitation::Column::UpdatedAt, Expr::value(now))
        .filter(invitation::Column::Id.eq(found.id))
        .filter(pending_at(now))
        .exec(conn)
        .await?
        .rows_affected;
    Ok(answered == 1)
}

/// The accepting user's org profile at the invitation's company, with its role and the role's
/// name as title: 409 when the company is suspended or the user has an org profile.
async fn join<C: ConnectionTrait>(
    conn: &C,
    user_id: i64,
    found: &invitation::Model,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    let open = company::Entity::find_by_id(found.company_id)
        .filter(company::Column::SuspendedAt.is_null())
        .count(conn)
        .await?;
    if open == 0 {
        return Err(DataError::Conflict("the company is suspended".into()));
    }
    insert_member(
        conn,
        user_id,
        found.company_id,
        Role::parse(&found.role),
        now,
    )
    .await
    .map(drop)
}
