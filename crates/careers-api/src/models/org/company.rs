//! `Org::Company`: created by a verified user who becomes its owner, edited by its managers,
//! listed, edited and suspended by the team (CONTRACT §14).

pub mod entity;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as company;
use super::Role;
use super::member::insert_member;
use crate::db::{DataError, page_of, unique_violation, write_transaction};
use crate::forms::{self, Errors, Invalid};

#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct CompanyBrief {
    pub id: i64,
    pub name: String,
}

impl From<&company::Model> for CompanyBrief {
    fn from(c: &company::Model) -> Self {
        Self {
            id: c.id,
            name: c.name.clone(),
        }
    }
}

/// `Org::Company`. `suspended_at` is in the team area's views, and in a suspended company's
/// own view; elsewhere it is left out.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CompanyView {
    pub id: i64,
    pub name: String,
    pub slug: String,
    pub website: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Team area (and a suspended company's own view): when it was suspended, or null.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub suspended_at: Option<Option<DateTime<Utc>>>,
}

impl CompanyView {
    /// The team's view: `suspended_at` always.
    pub fn team(c: &company::Model) -> Self {
        Self {
            suspended_at: Some(c.suspended_at),
            ..Self::own(c)
        }
    }

    /// A member's view: `suspended_at` only while suspended.
    pub fn own(c: &company::Model) -> Self {
        Self {
            id: c.id,
            name: c.name.clone(),
            slug: c.slug.clone(),
            website: c.website.clone(),
            created_at: c.created_at,
            updated_at: c.updated_at,
            suspended_at: c.suspended_at.map(Some),
        }
    }
}

/// The marketplace's page of a company.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PublicCompanyView {
    pub id: i64,
    pub name: String,
    pub slug: String,
    pub website: Option<String>,
}

/// `Org::Company`: `{name, website, slug}`. On create `name` is required and a missing `slug`
/// is derived from it; an update keeps what it does not send (`website: null` clears it).
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct CompanyForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub name: Option<String>,
    /// An `http://` or `https://` URL of at most 500 characters, or null.
    #[garde(custom(website_field))]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>)]
    pub website: Option<Option<String>>,
    /// `^[a-z0-9]+(-[a-z0-9]+)*$`, at most 100 characters, unique.
    #[garde(custom(forms::slug))]
    pub slug: Option<String>,
}

fn website_field(value: &Option<Option<String>>, context: &()) -> garde::Result {
    forms::website(&value.clone().flatten(), context)
}

impl CompanyForm {
    pub fn validate_create(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("name", self.name.is_some());
        errors.finish()
    }

    pub fn validate_update(&self) -> Result<(), Invalid> {
        Errors::of(self).finish()
    }
}

/// The team's form: the company's fields, plus `suspended`. The company's part validates as
/// the employer's form does ([`CompanyForm::validate_update`]), so its errors keep their paths.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct TeamCompanyForm {
    #[serde(flatten)]
    pub company: CompanyForm,
    /// `true` suspends the company (CONTRACT §14), `false` lifts the suspension.
    pub suspended: Option<bool>,
}

/// Takes the company's row lock for the rest of the caller's transaction: the writes that must
/// see every other write to the company's members (the last-owner rule) serialise on it. On
/// SQLite the write transaction holds the database's lock already.
pub async fn lock<C: ConnectionTrait>(conn: &C, id: i64) -> Result<(), DataError> {
    company::Entity::update_many()
        .col_expr(company::Column::Id, Expr::col(company::Column::Id))
        .filter(company::Column::Id.eq(id))
        .exec(conn)
        .await?;
    Ok(())
}

const SLUG_TAKEN: &str = "this slug is taken";

/// How often a derived slug is tried again when a concurrent creation took it first.
const SLUG_ATTEMPTS: usize = 5;

/// Creates a company whose owner is `user_id` (title "Owner"), in one transaction: 409 when the
/// user has an org profile already or the given slug is taken. A derived slug takes the first
/// free `-2`, `-3`... suffix; two creations deriving the same slug at once both succeed (the
/// unique index refuses the second, which derives again).
pub async fn create_company(
    db: &DatabaseConnection,
    user_id: i64,
    form: CompanyForm,
    now: DateTime<Utc>,
) -> Result<CompanyView, DataError> {
    let name = form.name.ok_or(DataError::Inconsistent)?;
    let website = form.website.flatten();
    for _ in 0..SLUG_ATTEMPTS {
        let txn = write_transaction(db).await?;
        let slug = match &form.slug {
            Some(slug) => slug.clone(),
            None => free_slug(&txn, &forms::derive_slug(&name)).await?,
        };
        let inserted = company::ActiveModel {
            name: Set(name.clone()),
            slug: Set(slug),
            website: Set(website.clone()),
            suspended_at: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
            ..Default::default()
        }
        .insert(&txn)
        .await;
        let created = match inserted {
            Ok(created) => created,
            Err(error) if unique_violation(&error) && form.slug.is_none() => continue,
            Err(error) => return Err(DataError::conflict_if_unique(error, SLUG_TAKEN)),
        };
        insert_member(&txn, user_id, created.id, Role::Owner, now).await?;
        txn.commit().await?;
        return Ok(CompanyView::own(&created));
    }
    Err(DataError::Conflict(
        "could not find a free slug: try again or give one".into(),
    ))
}

/// `base`, or `base-N` with the smallest N from 2 that no company has.
async fn free_slug<C: ConnectionTrait>(conn: &C, base: &str) -> Result<String, DataError> {
    let taken: Vec<String> = company::Entity::find()
        .select_only()
        .column(company::Column::Slug)
        .filter(
            Condition::any()
                .add(company::Column::Slug.eq(base))
                .add(company::Column::Slug.starts_with(format!("{base}-"))),
        )
        .into_tuple()
        .all(conn)
        .await?;
    if !taken.iter().any(|s| s == base) {
        return Ok(base.to_owned());
    }
    let slug = (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|candidate| !taken.contains(candidate))
        .expect("an unbounded range has a free suffix");
    Ok(slug)
}

pub async fn find_company(
    db: &DatabaseConnection,
    id: i64,
) -> Result<Option<company::Model>, DataError> {
    Ok(company::Entity::find_by_id(id).one(db).await?)
}

/// The marketplace's company of `slug`: not suspended, or `None`.
pub async fn public_company(
    db: &DatabaseConnection,
    slug: &str,
) -> Result<Option<PublicCompanyView>, DataError> {
    Ok(company::Entity::find()
        .filter(company::Column::Slug.eq(slug))
        .filter(company::Column::SuspendedAt.is_null())
        .one(db)
        .await?
        .map(|c| PublicCompanyView {
            id: c.id,
            name: c.name,
            slug: c.slug,
            website: c.website,
        }))
}

/// What a team edit changed of the company's suspension, for the audit trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspension {
    Unchanged,
    Suspended,
    Unsuspended,
}

/// Updates company `id` with what `form` sends (and, for the team, `suspended`): 409 when the
/// slug is taken. Suspending an already suspended company keeps its first `suspended_at`.
pub async fn update_company(
    db: &DatabaseConnection,
    id: i64,
    form: CompanyForm,
    suspended: Option<bool>,
    now: DateTime<Utc>,
) -> Result<(company::Model, Suspension), DataError> {
    let txn = write_transaction(db).await?;
    // Concurrent edits (two suspensions, two renames) decide on the company as it is then.
    lock(&txn, id).await?;
    let existing = company::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .ok_or(DataError::NotFound)?;
    let change = match (suspended, existing.suspended_at) {
        (Some(true), None) => Suspension::Suspended,
        (Some(false), Some(_)) => Suspension::Unsuspended,
        _ => Suspension::Unchanged,
    };
    let renamed = form
        .name
        .as_ref()
        .filter(|name| **name != existing.name)
        .cloned();
    let mut model: company::ActiveModel = existing.into();
    if let Some(name) = form.name {
        model.name = Set(name);
    }
    if let Some(website) = form.website {
        model.website = Set(website);
    }
    if let Some(slug) = form.slug {
        model.slug = Set(slug);
    }
    match change {
        Suspension::Suspended => model.suspended_at = Set(Some(now)),
        Suspension::Unsuspended => model.suspended_at = Set(None),
        Suspension::Unchanged => {}
    }
    model.updated_at = Set(now);
    let updated = model
        .update(&txn)
        .await
        .map_err(|e| DataError::conflict_if_unique(e, SLUG_TAKEN))?;
    if let Some(name) = renamed {
        // The jobs' search text carries the company's name (CONTRACT §15: `q` matches it).
        txn.execute_raw(sea_orm::Statement::from_sql_and_values(
            txn.get_database_backend(),
            "UPDATE careers_jobs SET search_company = $1 WHERE company_id = $2",
            [forms::fold_text(&name).into(), id.into()],
        ))
        .await?;
    }
    txn.commit().await?;
    Ok((updated, change))
}

/// The team's list, oldest first; `q` keeps the companies whose name or slug contains it,
/// case-insensitively.
pub async fn list_companies(
    db: &DatabaseConnection,
    q: Option<&str>,
    page: u64,
    per_page: u64,
) -> Result<(Vec<CompanyView>, u64), DataError> {
    let mut query = company::Entity::find();
    let columns = [company::Column::Name, company::Column::Slug];
    if let Some(matching) = crate::db::contains_any(q, columns.map(Expr::col)) {
        query = query.filter(matching);
    }
    let total = query.clone().count(db).await?;
    let rows = page_of(query.order_by_asc(company::Column::Id), page, per_page)
        .all(db)
        .await?;
    Ok((rows.iter().map(CompanyView::team).collect(), total))
}
