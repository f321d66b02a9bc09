//! `Org::UserProfile`: a user's place in a company, which makes them an employer.

pub mod entity;

use chrono::{DateTime, Utc};
use std::sync::LazyLock;

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    FromQueryResult, JoinType, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, RelationTrait,
    Select, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as profile;
use super::company::{self as companies, CompanyBrief, entity as company};
use super::member::{current_actor, one_profile_per_user};
use super::{Actor, Role, Scope};
use crate::db::{DataError, Db, hot_row, page_of};

use crate::forms::{Errors, IdRef, Invalid};
use crate::models::identities::user::{UserBrief, entity as user};

/// `Org::UserProfile` with its user and company joined.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OrgUserProfileView {
    pub id: i64,
    pub title: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub identities_user: UserBrief<'static>,
    pub company: CompanyBrief,
}

/// `Org::UserProfile`: `{title, role, identities_user: {id}, company: {id}}`; `role` defaults to
/// `member` on create, and an update keeps every field it does not send.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct OrgUserProfileForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub title: Option<String>,
    /// `owner`, `admin` or `member`.
    #[garde(custom(role_name))]
    #[schema(value_type = Option<Role>)]
    pub role: Option<String>,
    #[garde(dive)]
    pub identities_user: Option<IdRef>,
    #[garde(dive)]
    pub company: Option<IdRef>,
}

/// garde's rule for a role field: one of the three names (an unknown one is a 422 on the
/// field, not a 400: it is a value, not a type, that is wrong).
pub fn role_name(value: &Option<String>, _: &()) -> garde::Result {
    match value.as_deref() {
        None | Some("owner" | "admin" | "member") => Ok(()),
        Some(_) => Err(garde::Error::new("must be owner, admin or member")),
    }
}

/// The role a validated role field names.
pub fn role_of(value: &Option<String>) -> Option<Role> {
    value.as_deref().map(Role::parse)
}

impl OrgUserProfileForm {
    pub fn validate_create(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("title", self.title.is_some());
        errors.require("identities_user", self.identities_user.is_some());
        errors.require("company", self.company.is_some());
        errors.finish()
    }

    pub fn validate_update(&self) -> Result<(), Invalid> {
        Errors::of(self).finish()
    }
}

hot_row! {
    /// The employer check's row: the user, their org profile if any, and whether its company is
    /// suspended (a left join: every profile column is null for a user without one).
    struct EmployerRow {
        user_id: i64 = "u.id",
        profile_id: Option<i64> = "op.id",
        company_id: Option<i64> = "op.company_id",
        role: Option<String> = "op.role",
        suspended: i64 = "CAST(CASE WHEN c.suspended_at IS NULL THEN 0 ELSE 1 END AS BIGINT)",
    }
}

/// What the employer area knows of a member on every request: everything its checks (area,
/// role, suspension) decide on and the scope its handlers work in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Employer {
    pub user_id: i64,
    pub profile_id: i64,
    pub company_id: i64,
    pub role: Role,
    pub suspended: bool,
}

/// The employer area check in one statement: `None` when the user does not exist (their session
/// is over), `Some(None)` when they have no org profile, and `Some(Some(employer))` for an
/// employer. Every employer request runs it; the role and the company's suspension come in the
/// same row as the profile, so the role check adds no statement (CONTRACT §14). A user has at
/// most one org profile (unique index), and the profile's foreign key guarantees its company.
pub async fn employer(db: &Db, user_id: i64) -> Result<Option<Option<Employer>>, DataError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {} FROM identities_users u \
             LEFT JOIN org_user_profiles op ON op.identities_user_id = u.id \
             LEFT JOIN org_companies c ON c.id = op.company_id \
             WHERE u.id = $1",
            EmployerRow::COLUMNS
        )
    });
    let row: Option<EmployerRow> = db.fetch_optional(SQL.as_str(), &[user_id]).await?;
    Ok(
        row.map(|row| match (row.profile_id, row.company_id, row.role) {
            (Some(profile_id), Some(company_id), Some(role)) => Some(Employer {
                user_id: row.user_id,
                profile_id,
                company_id,
                role: Role::parse(&role),
                suspended: row.suspended != 0,
            }),
            _ => None,
        }),
    )
}

#[derive(Debug, FromQueryResult)]
struct ProfileRow {
    id: i64,
    title: String,
    role: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    user_id: i64,
    user_first_name: String,
    user_last_name: String,
    company_id: i64,
    company_name: String,
}

impl From<ProfileRow> for OrgUserProfileView {
    fn from(r: ProfileRow) -> Self {
        Self {
            id: r.id,
            title: r.title,
            role: Role::parse(&r.role),
            created_at: r.created_at,
            updated_at: r.updated_at,
            identities_user: UserBrief {
                id: r.user_id,
                first_name: r.user_first_name.into(),
                last_name: r.user_last_name.into(),
            },
            company: CompanyBrief {
                id: r.company_id,
                name: r.company_name,
            },
        }
    }
}

/// Profiles joined with their user and company: three tables, one statement.
fn profiles(scope: Scope) -> Select<profile::Entity> {
    let query = profile::Entity::find()
        .select_only()
        .column(profile::Column::Id)
        .column(profile::Column::Title)
        .column(profile::Column::Role)
        .column(profile::Column::CreatedAt)
        .column(profile::Column::UpdatedAt)
        .column_as(user::Column::Id, "user_id")
        .column_as(user::Column::FirstName, "user_first_name")
        .column_as(user::Column::LastName, "user_last_name")
        .column_as(company::Column::Id, "company_id")
        .column_as(company::Column::Name, "company_name")
        .join(JoinType::InnerJoin, profile::Relation::IdentitiesUser.def())
        .join(JoinType::InnerJoin, profile::Relation::Company.def());
    match scope {
        Scope::Company(id) => query.filter(profile::Column::CompanyId.eq(id)),
        Scope::All => query,
    }
}

pub async fn list_profiles(
    db: &DatabaseConnection,
    scope: Scope,
    page: u64,
    per_page: u64,
) -> Result<(Vec<OrgUserProfileView>, u64), DataError> {
    let total = match scope {
        Scope::Company(id) => {
            profile::Entity::find()
                .filter(profile::Column::CompanyId.eq(id))
                .count(db)
                .await?
        }
        Scope::All => profile::Entity::find().count(db).await?,
    };
    let rows = page_of(
        profiles(scope).order_by_asc(profile::Column::Id),
        page,
        per_page,
    )
    .into_model::<ProfileRow>()
    .all(db)
    .await?;
    Ok((rows.into_iter().map(Into::into).collect(), total))
}

/// A profile within `scope`; outside it, as absent as one that does not exist.
pub async fn find_profile<C: ConnectionTrait>(
    db: &C,
    scope: Scope,
    id: i64,
) -> Result<Option<OrgUserProfileView>, DataError> {
    Ok(profiles(scope)
        .filter(profile::Column::Id.eq(id))
        .into_model::<ProfileRow>()
        .one(db)
        .await?
        .map(Into::into))
}

pub async fn create_profile(
    db: &DatabaseConnection,
    actor: Actor,
    scope: Scope,
    form: OrgUserProfileForm,
) -> Result<OrgUserProfileView, DataError> {
    let role = role_of(&form.role).unwrap_or(Role::Member);
    actor.may_touch(role)?;
    let txn = crate::db::write_transaction(db).await?;
    let company_id = checked_company(&txn, scope, &form.company).await?;
    let user_id = checked_user(&txn, scope, &form.identities_user, None).await?;
    let (Some(company_id), Some(user_id), Some(title)) = (company_id, user_id, form.title) else {
        return Err(DataError::Inconsistent);
    };
    let now = Utc::now();
    let created = profile::ActiveModel {
        identities_user_id: Set(user_id),
        company_id: Set(company_id),
        title: Set(title),
        role: Set(role.as_str().to_owned()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await
    .map_err(one_profile_per_user)?;
    let view = find_profile(&txn, Scope::All, created.id).await?;
    txn.commit().await?;
    view.ok_or(DataError::Inconsistent)
}

/// Updates a profile: a role the actor may not touch (the profile's, or the one given) is
/// refused; an owner who would leave their company without an owner is 409 (the last-owner
/// rule). Every check runs under the company's lock ([`companies::lock`]), on the actor and the
/// profile as they are then.
pub async fn update_profile(
    db: &DatabaseConnection,
    actor: Actor,
    scope: Scope,
    id: i64,
    form: OrgUserProfileForm,
) -> Result<OrgUserProfileView, DataError> {
    let txn = crate::db::write_transaction(db).await?;
    let found = profile::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .filter(|p| scope.allows(p.company_id))
        .ok_or(DataError::NotFound)?;
    companies::lock(&txn, found.company_id).await?;
    let actor = current_actor(&txn, actor, found.company_id).await?;
    actor.may_manage()?;
    let existing = profile::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .filter(|p| p.company_id == found.company_id)
        .ok_or(DataError::NotFound)?;
    let old_role = Role::parse(&existing.role);
    actor.may_touch(old_role)?;
    let new_role = role_of(&form.role);
    if let Some(role) = new_role {
        actor.may_touch(role)?;
    }
    let company_id = checked_company(&txn, scope, &form.company).await?;
    let user_id = checked_user(&txn, scope, &form.identities_user, Some(id)).await?;
    let old_company = existing.company_id;
    let loses_an_owner = old_role == Role::Owner
        && (new_role.is_some_and(|r| r != Role::Owner)
            || company_id.is_some_and(|c| c != old_company));
    let mut model: profile::ActiveModel = existing.into();
    if let Some(title) = form.title {
        model.title = Set(title);
    }
    if let Some(role) = new_role {
        model.role = Set(role.as_str().to_owned());
    }
    if let Some(company_id) = company_id {
        model.company_id = Set(company_id);
    }
    if let Some(user_id) = user_id {
        model.identities_user_id = Set(user_id);
    }
    model.updated_at = Set(Utc::now());
    model.update(&txn).await.map_err(one_profile_per_user)?;
    if loses_an_owner {
        keeps_an_owner(&txn, old_company).await?;
    }
    let view = find_profile(&txn, Scope::All, id).await?;
    txn.commit().await?;
    view.ok_or(DataError::Inconsistent)
}

/// Removes the member `id` of `company_id` (their org profile; what they wrote stays). Anyone
/// may remove themself; the company's last owner cannot go (409). Decided under the company's
/// lock, on the actor and the member as they are then.
pub async fn remove_profile(
    db: &DatabaseConnection,
    actor: Actor,
    company_id: i64,
    id: i64,
) -> Result<(), DataError> {
    let txn = crate::db::write_transaction(db).await?;
    companies::lock(&txn, company_id).await?;
    let actor = current_actor(&txn, actor, company_id).await?;
    let target = profile::Entity::find_by_id(id)
        .filter(profile::Column::CompanyId.eq(company_id))
        .one(&txn)
        .await?
        .ok_or(DataError::NotFound)?;
    let role = Role::parse(&target.role);
    actor.may_remove(target.id, role)?;
    profile::Entity::delete_by_id(id).exec(&txn).await?;
    if role == Role::Owner {
        keeps_an_owner(&txn, company_id).await?;
    }
    txn.commit().await?;
    Ok(())
}

/// The last-owner rule, checked after a write that took an owner from `company_id`, under the
/// company's lock: 409 (and the caller's transaction is dropped, undoing the write) when no
/// owner is left.
async fn keeps_an_owner<C: ConnectionTrait>(conn: &C, company_id: i64) -> Result<(), DataError> {
    let owners = profile::Entity::find()
        .filter(profile::Column::CompanyId.eq(company_id))
        .filter(profile::Column::Role.eq(Role::Owner.as_str()))
        .count(conn)
        .await?;
    if owners == 0 {
        return Err(DataError::Conflict(
            "the company's last owner cannot leave, be removed or lose the role".into(),
        ));
    }
    Ok(())
}

/// `company.id` must exist and lie within the caller's scope.
async fn checked_company<C: ConnectionTrait>(
    db: &C,
    scope: Scope,
    reference: &Option<IdRef>,
) -> Result<Option<i64>, DataError> {
    let Some(id) = IdRef::id_of(reference) else {
        return Ok(None);
    };
    if company::Entity::find_by_id(id).one(db).await?.is_none() {
        return Err(DataError::invalid("company.id", "does not exist"));
    }
    if !scope.allows(id) {
        return Err(DataError::invalid("company.id", "must be your own company"));
    }
    Ok(Some(id))
}

/// What an employer gets for any `identities_user.id` outside their company: one message for
/// every case, so that the answer tells nothing about the id.
const NOT_YOUR_COMPANYS_USER: &str = "must be a user of your company";

/// `identities_user.id`, in one statement (the user's org profile, if any).
///
/// An employer may name only a user of their own company, that is one with an org profile
/// there; any other id (a user without an org profile, a user of another company, an id that
/// names no user) gets the same 422 from the same statement, so that the ids and names of other
/// users cannot be probed (DECISIONS 68). The admin may name any existing user (422 "does not
/// exist" otherwise). A user has at most one org profile: naming one whose profile is not the
/// one being edited is 409.
async fn checked_user<C: ConnectionTrait>(
    db: &C,
    scope: Scope,
    reference: &Option<IdRef>,
    editing: Option<i64>,
) -> Result<Option<i64>, DataError> {
    let Some(id) = IdRef::id_of(reference) else {
        return Ok(None);
    };
    let current = profile::Entity::find()
        .filter(profile::Column::IdentitiesUserId.eq(id))
        .one(db)
        .await?;
    match (scope, current) {
        (_, Some(p)) if Some(p.id) == editing => Ok(Some(id)),
        (Scope::Company(own), Some(p)) if p.company_id == own => Err(DataError::Conflict(
            "this user already has an org profile".into(),
        )),
        (Scope::Company(_), _) => Err(DataError::invalid(
            "identities_user.id",
            NOT_YOUR_COMPANYS_USER,
        )),
        (Scope::All, Some(_)) => Err(DataError::Conflict(
            "this user already has an org profile".into(),
        )),
        (Scope::All, None) => {
            // The profile's foreign key vouches for a user who has one; a free user is read.
            if user::Entity::find_by_id(id).one(db).await?.is_none() {
                return Err(DataError::invalid("identities_user.id", "does not exist"));
            }
            Ok(Some(id))
        }
    }
}
