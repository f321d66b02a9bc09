//! `Org::UserProfile`: a user's place in a company, which makes them an employer.

pub mod entity;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    FromQueryResult, JoinType, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, RelationTrait,
    Select, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as profile;
use super::Scope;
use super::company::{CompanyBrief, entity as company};
use crate::db::{DataError, Db, page_of};

use crate::forms::{Errors, IdRef, Invalid};
use crate::models::identities::user::{UserBrief, entity as user};

/// `Org::UserProfile` with its user and company joined.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OrgUserProfileView {
    pub id: i64,
    pub title: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub identities_user: UserBrief<'static>,
    pub company: CompanyBrief,
}

/// `Org::UserProfile`: `{title, identities_user: {id}, company: {id}}`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct OrgUserProfileForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub title: Option<String>,
    #[garde(dive)]
    pub identities_user: Option<IdRef>,
    #[garde(dive)]
    pub company: Option<IdRef>,
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

/// The employer area check in one statement: `None` when the user does not exist (their session
/// is over), `Some(None)` when they have no org profile, and `Some(Some(company_id))` for an
/// employer. Every employer request runs it, and the handlers scope everything by the company
/// id alone, so it reads that one value rather than the user's, the profile's and the company's
/// rows. A user has at most one org profile (unique index),
/// and the profile's foreign key guarantees its company.
pub async fn employer_company(db: &Db, user_id: i64) -> Result<Option<Option<i64>>, DataError> {
    const SQL: &str = "SELECT op.company_id FROM identities_users u \
                       LEFT JOIN org_user_profiles op ON op.identities_user_id = u.id \
                       WHERE u.id = $1";
    Ok(db.fetch_optional(SQL, &[user_id]).await?)
}

#[derive(Debug, FromQueryResult)]
struct ProfileRow {
    id: i64,
    title: String,
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
    scope: Scope,
    form: OrgUserProfileForm,
) -> Result<OrgUserProfileView, DataError> {
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

pub async fn update_profile(
    db: &DatabaseConnection,
    scope: Scope,
    id: i64,
    form: OrgUserProfileForm,
) -> Result<OrgUserProfileView, DataError> {
    let txn = crate::db::write_transaction(db).await?;
    let existing = profile::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .filter(|p| scope.allows(p.company_id))
        .ok_or(DataError::NotFound)?;
    let company_id = checked_company(&txn, scope, &form.company).await?;
    let user_id = checked_user(&txn, scope, &form.identities_user, Some(id)).await?;
    let mut model: profile::ActiveModel = existing.into();
    if let Some(title) = form.title {
        model.title = Set(title);
    }
    if let Some(company_id) = company_id {
        model.company_id = Set(company_id);
    }
    if let Some(user_id) = user_id {
        model.identities_user_id = Set(user_id);
    }
    model.updated_at = Set(Utc::now());
    model.update(&txn).await.map_err(one_profile_per_user)?;
    let view = find_profile(&txn, Scope::All, id).await?;
    txn.commit().await?;
    view.ok_or(DataError::Inconsistent)
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

fn one_profile_per_user(error: sea_orm::DbErr) -> DataError {
    DataError::conflict_if_unique(error, "this user already has an org profile")
}
