//! `Careers::Job`: a company's job posting, as employers manage it and the marketplace shows it.

pub mod entity;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    FromQueryResult, JoinType, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, RelationTrait,
    Select, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as job;
use super::briefs::OwnApplication;
use super::job_application::entity as application;
use super::user_profile::profile_of_user;
use crate::db::{DataError, page_of};

use crate::forms::{Errors, IdRef, Invalid};
use crate::models::org::company::{CompanyBrief, entity as company};

/// `Careers::Job`: `{title, description, published, company: {id}}`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct JobForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub title: Option<String>,
    #[garde(length(chars, max = 20_000))]
    pub description: Option<String>,
    #[garde(skip)]
    pub published: Option<bool>,
    #[garde(dive)]
    pub company: Option<IdRef>,
}

impl JobForm {
    pub fn validate_create(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("title", self.title.is_some());
        errors.require("company", self.company.is_some());
        errors.finish()
    }

    pub fn validate_update(&self) -> Result<(), Invalid> {
        Errors::of(self).finish()
    }
}

/// `Careers::Job` with its company.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct JobView {
    pub id: i64,
    pub title: String,
    pub description: String,
    pub published: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub company: CompanyBrief,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct MarketplaceJobView {
    #[serde(flatten)]
    pub job: JobView,
    pub careers_job_applications: Vec<OwnApplication>,
}

#[derive(Debug, FromQueryResult)]
struct JobRow {
    id: i64,
    title: String,
    description: String,
    published: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    company_id: i64,
    company_name: String,
}

impl From<JobRow> for JobView {
    fn from(r: JobRow) -> Self {
        Self {
            id: r.id,
            title: r.title,
            description: r.description,
            published: r.published,
            created_at: r.created_at,
            updated_at: r.updated_at,
            company: CompanyBrief {
                id: r.company_id,
                name: r.company_name,
            },
        }
    }
}

/// Jobs joined with their company.
fn jobs() -> Select<job::Entity> {
    job::Entity::find()
        .select_only()
        .column(job::Column::Id)
        .column(job::Column::Title)
        .column(job::Column::Description)
        .column(job::Column::Published)
        .column(job::Column::CreatedAt)
        .column(job::Column::UpdatedAt)
        .column_as(company::Column::Id, "company_id")
        .column_as(company::Column::Name, "company_name")
        .join(JoinType::InnerJoin, job::Relation::Company.def())
}

pub async fn company_jobs(
    db: &DatabaseConnection,
    company_id: i64,
    page: u64,
    per_page: u64,
) -> Result<(Vec<JobView>, u64), DataError> {
    let total = job::Entity::find()
        .filter(job::Column::CompanyId.eq(company_id))
        .count(db)
        .await?;
    let rows = page_of(
        jobs().filter(job::Column::CompanyId.eq(company_id)),
        page,
        per_page,
    )
    .order_by_asc(job::Column::Id)
    .into_model::<JobRow>()
    .all(db)
    .await?;
    Ok((rows.into_iter().map(Into::into).collect(), total))
}

async fn job_view<C: ConnectionTrait>(db: &C, id: i64) -> Result<Option<JobView>, DataError> {
    Ok(jobs()
        .filter(job::Column::Id.eq(id))
        .into_model::<JobRow>()
        .one(db)
        .await?
        .map(Into::into))
}

/// `company.id` of a job form: the employer's own company only.
fn own_company(reference: &Option<IdRef>, company_id: i64) -> Result<Option<i64>, DataError> {
    match IdRef::id_of(reference) {
        Some(id) if id != company_id => {
            Err(DataError::invalid("company.id", "must be your own company"))
        }
        other => Ok(other),
    }
}

pub async fn create_job(
    db: &DatabaseConnection,
    company_id: i64,
    form: JobForm,
) -> Result<JobView, DataError> {
    own_company(&form.company, company_id)?;
    let now = Utc::now();
    let created = job::ActiveModel {
        company_id: Set(company_id),
        title: Set(form.title.unwrap_or_default()),
        description: Set(form.description.unwrap_or_default()),
        published: Set(form.published.unwrap_or(false)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    job_view(db, created.id)
        .await?
        .ok_or(DataError::Inconsistent)
}

pub async fn update_job(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    form: JobForm,
) -> Result<JobView, DataError> {
    let existing = job::Entity::find_by_id(id)
        .one(db)
        .await?
        .filter(|j| j.company_id == company_id)
        .ok_or(DataError::NotFound)?;
    own_company(&form.company, company_id)?;
    let mut model: job::ActiveModel = existing.into();
    if let Some(title) = form.title {
        model.title = Set(title);
    }
    if let Some(description) = form.description {
        model.description = Set(description);
    }
    if let Some(published) = form.published {
        model.published = Set(published);
    }
    model.updated_at = Set(Utc::now());
    model.update(db).await?;
    job_view(db, id).await?.ok_or(DataError::Inconsistent)
}

/// Published jobs of companies that are not suspended, each with the viewer's own applications to it (none when anonymous).
pub async fn marketplace_jobs(
    db: &DatabaseConnection,
    viewer: Option<i64>,
    job_id: Option<i64>,
    page: u64,
    per_page: u64,
) -> Result<(Vec<MarketplaceJobView>, u64), DataError> {
    // A suspended company's jobs are out of the marketplace (CONTRACT §14).
    let mut published = job::Entity::find()
        .inner_join(company::Entity)
        .filter(job::Column::Published.eq(true))
        .filter(company::Column::SuspendedAt.is_null());
    let mut rows = jobs()
        .filter(job::Column::Published.eq(true))
        .filter(company::Column::SuspendedAt.is_null());
    if let Some(id) = job_id {
        published = published.filter(job::Column::Id.eq(id));
        rows = rows.filter(job::Column::Id.eq(id));
    }
    let total = published.count(db).await?;
    let rows = page_of(rows, page, per_page)
        .order_by_asc(job::Column::Id)
        .into_model::<JobRow>()
        .all(db)
        .await?;
    let profile_id = match viewer {
        Some(user_id) => profile_of_user(db, user_id).await?.map(|p| p.id),
        None => None,
    };
    let mut own: HashMap<i64, Vec<OwnApplication>> = HashMap::new();
    if let Some(profile_id) = profile_id
        && !rows.is_empty()
    {
        let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        for a in application::Entity::find()
            .filter(application::Column::CareersUserProfileId.eq(profile_id))
            .filter(application::Column::CareersJobId.is_in(ids))
            .order_by_asc(application::Column::Id)
            .all(db)
            .await?
        {
            own.entry(a.careers_job_id)
                .or_default()
                .push(OwnApplication {
                    id: a.id,
                    status: a.status,
                    created_at: a.created_at,
                });
        }
    }
    let views = rows
        .into_iter()
        .map(|r| {
            let applications = own.remove(&r.id).unwrap_or_default();
            MarketplaceJobView {
                job: r.into(),
                careers_job_applications: applications,
            }
        })
        .collect();
    Ok((views, total))
}
