//! `Careers::Job` (CONTRACT §15): a company's posting with its place, types, salary range and
//! lifecycle, as employers manage it, the team moderates it and the marketplace shows it.

pub mod entity;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Select, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as job;
use super::briefs::OwnApplication;
use super::job_application::entity as application;
use super::job_stage::{self, StageItem, StageView};
use super::search::{Facets, Search};
use super::user_profile::profile_of_user;
pub use super::vocabulary::{EMPLOYMENT_TYPES, SALARY_INTERVALS, WORKPLACE_TYPES, is_country_code};
use crate::db::{DataError, write_transaction};
use crate::forms::{self, Errors, IdRef, Invalid};
use crate::models::org::company::{CompanyBrief, entity as company};
use crate::webhooks::{self, EventType};

/// A job's lifecycle (CONTRACT §15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Draft,
    Open,
    Closed,
    Archived,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Open => "open",
            Self::Closed => "closed",
            Self::Archived => "archived",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "draft" => Some(Self::Draft),
            "open" => Some(Self::Open),
            "closed" => Some(Self::Closed),
            "archived" => Some(Self::Archived),
            _ => None,
        }
    }

    /// The status every view reads: an open job whose `valid_through` has come is closed.
    pub fn effective(
        stored: &str,
        valid_through: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Self {
        match Self::parse(stored).unwrap_or(Self::Draft) {
            Self::Open if valid_through.is_some_and(|t| t <= now) => Self::Closed,
            status => status,
        }
    }

    /// The transitions an employer's `PATCH` may make, judged on the status as read.
    fn may_become(self, next: Self) -> bool {
        use JobStatus::*;
        matches!(
            (self, next),
            (Draft, Open)
                | (Open, Closed)
                | (Closed, Open)
                | (Draft | Open | Closed, Archived)
                | (Archived, Draft)
        )
    }
}

/// `Careers::Job`'s form. A `POST` needs `title` and `company`; a `PATCH` keeps what it does
/// not send, and `null` clears a nullable attribute.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct JobForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub title: Option<String>,
    #[garde(length(chars, max = 20_000))]
    pub description: Option<String>,
    /// `draft`, `open`, `closed` or `archived` (see the transitions).
    #[garde(skip)]
    #[schema(value_type = Option<JobStatus>)]
    pub status: Option<String>,
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>)]
    pub department: Option<Option<String>>,
    /// `full_time`, `part_time`, `contractor`, `temporary`, `intern`, `volunteer`, `per_diem`,
    /// `other`, or null.
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>)]
    pub employment_type: Option<Option<String>>,
    /// `on_site` (default), `hybrid` or `remote`.
    #[garde(skip)]
    pub workplace_type: Option<String>,
    /// ISO 3166-1 alpha-2, upper case, or null.
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>)]
    pub country_code: Option<Option<String>>,
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>)]
    pub region: Option<Option<String>>,
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>)]
    pub locality: Option<Option<String>>,
    /// Whole major units, ≥ 0.
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<i64>)]
    pub salary_min: Option<Option<i64>>,
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<i64>)]
    pub salary_max: Option<Option<i64>>,
    /// ISO 4217 (`EUR`); required with an amount.
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>)]
    pub salary_currency: Option<Option<String>>,
    /// `hour`, `day`, `week`, `month` or `year`; required with an amount.
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>)]
    pub salary_interval: Option<Option<String>>,
    /// RFC 3339; from then on the job reads `closed`.
    #[garde(skip)]
    #[serde(default, deserialize_with = "forms::nullable")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub valid_through: Option<Option<String>>,
    #[garde(dive)]
    pub company: Option<IdRef>,
    /// The job's stages as nested items (CONTRACT §16); a new job without them gets the four
    /// default stages.
    #[garde(dive)]
    pub careers_job_stages: Option<Vec<StageItem>>,
}

impl JobForm {
    pub fn validate_create(&self) -> Result<(), Invalid> {
        let mut errors = self.errors();
        errors.require("title", self.title.is_some());
        errors.require("company", self.company.is_some());
        if let Some(status) = &self.status
            && !matches!(status.as_str(), "draft" | "open")
        {
            errors.add("status", "a new job is draft or open");
        }
        errors.finish()
    }

    pub fn validate_update(&self) -> Result<(), Invalid> {
        self.errors().finish()
    }

    /// Each attribute on its own; the rules between attributes are [`JobAttrs::check`]'s, the
    /// rules between stages [`job_stage::write_stages`]'s.
    fn errors(&self) -> Errors {
        let mut errors = Errors::of(self);
        job_stage::require_items(&mut errors, &self.careers_job_stages);
        if let Some(status) = &self.status
            && JobStatus::parse(status).is_none()
        {
            errors.add("status", "must be draft, open, closed or archived");
        }
        let text = |errors: &mut Errors, field: &str, value: &Option<Option<String>>| {
            if let Some(Some(text)) = value
                && text.chars().count() > 100
            {
                errors.add(field, "must be at most 100 characters");
            }
        };
        text(&mut errors, "department", &self.department);
        text(&mut errors, "region", &self.region);
        text(&mut errors, "locality", &self.locality);
        let one_of = |errors: &mut Errors, field: &str, value: Option<&str>, allowed: &[&str]| {
            if let Some(value) = value
                && !allowed.contains(&value)
            {
                errors.add(field, format!("must be one of {}", allowed.join(", ")));
            }
        };
        one_of(
            &mut errors,
            "employment_type",
            self.employment_type.clone().flatten().as_deref(),
            &EMPLOYMENT_TYPES,
        );
        one_of(
            &mut errors,
            "workplace_type",
            self.workplace_type.as_deref(),
            &WORKPLACE_TYPES,
        );
        one_of(
            &mut errors,
            "salary_interval",
            self.salary_interval.clone().flatten().as_deref(),
            &SALARY_INTERVALS,
        );
        if let Some(Some(code)) = &self.country_code
            && !is_country_code(code)
        {
            errors.add(
                "country_code",
                "must be an ISO 3166-1 alpha-2 code in upper case",
            );
        }
        if let Some(Some(code)) = &self.salary_currency
            && iso_currency::Currency::from_code(code).is_none()
        {
            errors.add("salary_currency", "must be an ISO 4217 currency code");
        }
        for (field, amount) in [
            ("salary_min", &self.salary_min),
            ("salary_max", &self.salary_max),
        ] {
            if let Some(Some(amount)) = amount
                && *amount < 0
            {
                errors.add(field, "must be 0 or more");
            }
        }
        if let Some(Some(time)) = &self.valid_through
            && DateTime::parse_from_rfc3339(time).is_err()
        {
            errors.add("valid_through", "must be an RFC 3339 time");
        }
        errors
    }
}

/// A job's own attributes, as stored and as a form changes them.
#[derive(Debug, Clone)]
struct JobAttrs {
    title: String,
    description: String,
    status: JobStatus,
    department: Option<String>,
    employment_type: Option<String>,
    workplace_type: String,
    country_code: Option<String>,
    region: Option<String>,
    locality: Option<String>,
    salary_min: Option<i64>,
    salary_max: Option<i64>,
    salary_currency: Option<String>,
    salary_interval: Option<String>,
    valid_through: Option<DateTime<Utc>>,
}

impl JobAttrs {
    fn of(model: &job::Model, now: DateTime<Utc>) -> Self {
        Self {
            title: model.title.clone(),
            description: model.description.clone(),
            status: JobStatus::effective(&model.status, model.valid_through, now),
            department: model.department.clone(),
            employment_type: model.employment_type.clone(),
            workplace_type: model.workplace_type.clone(),
            country_code: model.country_code.clone(),
            region: model.region.clone(),
            locality: model.locality.clone(),
            salary_min: model.salary_min,
            salary_max: model.salary_max,
            salary_currency: model.salary_currency.clone(),
            salary_interval: model.salary_interval.clone(),
            valid_through: model.valid_through,
        }
    }

    fn new() -> Self {
        Self {
            title: String::new(),
            description: String::new(),
            status: JobStatus::Draft,
            department: None,
            employment_type: None,
            workplace_type: WORKPLACE_TYPES[0].to_owned(),
            country_code: None,
            region: None,
            locality: None,
            salary_min: None,
            salary_max: None,
            salary_currency: None,
            salary_interval: None,
            valid_through: None,
        }
    }

    /// The attributes with what `form` sends (validated already) in place.
    fn apply(mut self, form: JobForm) -> Self {
        fn set<T>(target: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *target = value;
            }
        }
        set(&mut self.title, form.title);
        set(&mut self.description, form.description);
        set(
            &mut self.status,
            form.status.as_deref().and_then(JobStatus::parse),
        );
        set(&mut self.department, form.department);
        set(&mut self.employment_type, form.employment_type);
        set(&mut self.workplace_type, form.workplace_type);
        set(&mut self.country_code, form.country_code);
        set(&mut self.region, form.region);
        set(&mut self.locality, form.locality);
        set(&mut self.salary_min, form.salary_min);
        set(&mut self.salary_max, form.salary_max);
        set(&mut self.salary_currency, form.salary_currency);
        set(&mut self.salary_interval, form.salary_interval);
        let valid_through = form.valid_through.map(|time| {
            time.and_then(|t| DateTime::parse_from_rfc3339(&t).ok().map(|t| t.to_utc()))
        });
        set(&mut self.valid_through, valid_through);
        self
    }

    /// The rules between attributes: the salary range, and what an open job needs.
    fn check(&self, now: DateTime<Utc>) -> Result<(), Invalid> {
        let mut errors = Errors::default();
        if let (Some(min), Some(max)) = (self.salary_min, self.salary_max)
            && min > max
        {
            errors.add("salary_max", "must be at least salary_min");
        }
        if self.salary_min.is_some() || self.salary_max.is_some() {
            if self.salary_currency.is_none() {
                errors.add("salary_currency", "is required with a salary");
            }
            if self.salary_interval.is_none() {
                errors.add("salary_interval", "is required with a salary");
            }
        }
        if self.status == JobStatus::Open {
            if self.description.trim().is_empty() {
                errors.add("description", "an open job needs a description");
            }
            if self.country_code.is_none() && self.workplace_type != "remote" {
                errors.add(
                    "country_code",
                    "an open job needs a place: a country, or remote",
                );
            }
            if self.valid_through.is_some_and(|t| t <= now) {
                errors.add("valid_through", "an open job's must be in the future");
            }
        }
        errors.finish()
    }

    /// Writes the attributes into `model`; `published_at` is set the first time the job opens.
    fn write(
        self,
        model: &mut job::ActiveModel,
        published_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) {
        let (title, body) = search_text(&self.title, &self.description, self.department.as_deref());
        model.search_title = Set(title);
        model.search_body = Set(body);
        model.title = Set(self.title);
        model.description = Set(self.description);
        model.status = Set(self.status.as_str().to_owned());
        model.department = Set(self.department);
        model.employment_type = Set(self.employment_type);
        model.workplace_type = Set(self.workplace_type);
        model.country_code = Set(self.country_code);
        model.region = Set(self.region);
        model.locality = Set(self.locality);
        model.salary_min = Set(self.salary_min);
        model.salary_max = Set(self.salary_max);
        model.salary_currency = Set(self.salary_currency);
        model.salary_interval = Set(self.salary_interval);
        model.valid_through = Set(self.valid_through);
        if published_at.is_none() && self.status == JobStatus::Open {
            model.published_at = Set(Some(now));
        }
        model.updated_at = Set(now);
    }
}

/// The folded text the search indexes of a job's title and of its description and department
/// (the company's name is [`crate::forms::fold_text`] of it, kept by the company's writes).
pub fn search_text(title: &str, description: &str, department: Option<&str>) -> (String, String) {
    let body = format!("{description} {}", department.unwrap_or_default());
    (forms::fold_text(title), forms::fold_text(&body))
}

/// `Careers::Job` with its company, as every area shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct JobView {
    pub id: i64,
    pub title: String,
    pub description: String,
    pub status: JobStatus,
    pub department: Option<String>,
    pub employment_type: Option<String>,
    pub workplace_type: String,
    pub country_code: Option<String>,
    pub region: Option<String>,
    pub locality: Option<String>,
    pub salary_min: Option<i64>,
    pub salary_max: Option<i64>,
    pub salary_currency: Option<String>,
    pub salary_interval: Option<String>,
    pub valid_through: Option<DateTime<Utc>>,
    pub published_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub company: CompanyBrief,
}

impl JobView {
    pub fn of(model: job::Model, company: &company::Model, now: DateTime<Utc>) -> Self {
        Self {
            id: model.id,
            status: JobStatus::effective(&model.status, model.valid_through, now),
            title: model.title,
            description: model.description,
            department: model.department,
            employment_type: model.employment_type,
            workplace_type: model.workplace_type,
            country_code: model.country_code,
            region: model.region,
            locality: model.locality,
            salary_min: model.salary_min,
            salary_max: model.salary_max,
            salary_currency: model.salary_currency,
            salary_interval: model.salary_interval,
            valid_through: model.valid_through,
            published_at: model.published_at,
            created_at: model.created_at,
            updated_at: model.updated_at,
            company: CompanyBrief::from(company),
        }
    }
}

/// A job as its employer reads and edits it: with its stages in order.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EmployerJobView {
    #[serde(flatten)]
    pub job: JobView,
    pub careers_job_stages: Vec<StageView>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct MarketplaceJobView {
    #[serde(flatten)]
    pub job: JobView,
    pub careers_job_applications: Vec<OwnApplication>,
}

/// Jobs with their company: two tables, one statement.
fn jobs() -> sea_orm::SelectTwo<job::Entity, company::Entity> {
    job::Entity::find().find_also_related(company::Entity)
}

fn views(
    rows: Vec<(job::Model, Option<company::Model>)>,
    now: DateTime<Utc>,
) -> Result<Vec<JobView>, DataError> {
    rows.into_iter()
        .map(|(job, company)| {
            let company = company.ok_or(DataError::Inconsistent)?;
            Ok(JobView::of(job, &company, now))
        })
        .collect()
}

/// The condition of a status as every view reads it (an open job past `valid_through` is
/// closed).
pub fn status_is(status: JobStatus, now: DateTime<Utc>) -> Condition {
    let unexpired = Condition::any()
        .add(job::Column::ValidThrough.is_null())
        .add(job::Column::ValidThrough.gt(now));
    let expired = Condition::all()
        .add(job::Column::Status.eq(JobStatus::Open.as_str()))
        .add(job::Column::ValidThrough.lte(now));
    match status {
        JobStatus::Open => Condition::all()
            .add(job::Column::Status.eq(JobStatus::Open.as_str()))
            .add(unexpired),
        JobStatus::Closed => Condition::any()
            .add(job::Column::Status.eq(JobStatus::Closed.as_str()))
            .add(expired),
        other => Condition::all().add(job::Column::Status.eq(other.as_str())),
    }
}

/// A job open to candidates: open as read, of a company that is not suspended.
pub fn open_to_candidates(query: Select<job::Entity>, now: DateTime<Utc>) -> Select<job::Entity> {
    query
        .inner_join(company::Entity)
        .filter(status_is(JobStatus::Open, now))
        .filter(company::Column::SuspendedAt.is_null())
}

/// The company's jobs, in id order, optionally of one status.
pub async fn company_jobs(
    db: &DatabaseConnection,
    company_id: i64,
    status: Option<JobStatus>,
    page: u64,
    per_page: u64,
    now: DateTime<Utc>,
) -> Result<(Vec<JobView>, u64), DataError> {
    let mut filter = Condition::all().add(job::Column::CompanyId.eq(company_id));
    if let Some(status) = status {
        filter = filter.add(status_is(status, now));
    }
    jobs_page(db, filter, page, per_page, now).await
}

/// A page of the jobs `filter` keeps, in id order, and their number.
async fn jobs_page(
    db: &DatabaseConnection,
    filter: Condition,
    page: u64,
    per_page: u64,
    now: DateTime<Utc>,
) -> Result<(Vec<JobView>, u64), DataError> {
    let total = job::Entity::find()
        .inner_join(company::Entity)
        .filter(filter.clone())
        .count(db)
        .await?;
    let rows = jobs()
        .filter(filter)
        .order_by_asc(job::Column::Id)
        .offset((page - 1) * per_page)
        .limit(per_page)
        .all(db)
        .await?;
    Ok((views(rows, now)?, total))
}

/// Every company's jobs for the team, in id order: `q` in the title or the company's name,
/// case-insensitively; a status; a company.
pub async fn team_jobs(
    db: &DatabaseConnection,
    q: Option<&str>,
    status: Option<JobStatus>,
    company_id: Option<i64>,
    page: u64,
    per_page: u64,
    now: DateTime<Utc>,
) -> Result<(Vec<JobView>, u64), DataError> {
    let mut filter = Condition::all();
    if let Some(status) = status {
        filter = filter.add(status_is(status, now));
    }
    if let Some(company_id) = company_id {
        filter = filter.add(job::Column::CompanyId.eq(company_id));
    }
    let columns = [
        Expr::col((job::Entity, job::Column::Title)),
        Expr::col((company::Entity, company::Column::Name)),
    ];
    if let Some(matching) = crate::db::contains_any(q, columns) {
        filter = filter.add(matching);
    }
    jobs_page(db, filter, page, per_page, now).await
}

/// One job of the company with its stages (`None` outside it).
pub async fn company_job(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    now: DateTime<Utc>,
) -> Result<Option<EmployerJobView>, DataError> {
    let rows = jobs()
        .filter(job::Column::Id.eq(id))
        .filter(job::Column::CompanyId.eq(company_id))
        .all(db)
        .await?;
    match views(rows, now)?.pop() {
        Some(job) => Ok(Some(EmployerJobView {
            careers_job_stages: job_stage::stages_of(db, job.id).await?,
            job,
        })),
        None => Ok(None),
    }
}

async fn job_view<C: ConnectionTrait>(
    db: &C,
    id: i64,
    now: DateTime<Utc>,
) -> Result<JobView, DataError> {
    let rows = jobs().filter(job::Column::Id.eq(id)).all(db).await?;
    views(rows, now)?.pop().ok_or(DataError::Inconsistent)
}

async fn employer_view<C: ConnectionTrait>(
    db: &C,
    id: i64,
    now: DateTime<Utc>,
) -> Result<EmployerJobView, DataError> {
    Ok(EmployerJobView {
        job: job_view(db, id, now).await?,
        careers_job_stages: job_stage::stages_of(db, id).await?,
    })
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
    mut form: JobForm,
    now: DateTime<Utc>,
) -> Result<EmployerJobView, DataError> {
    own_company(&form.company, company_id)?;
    let stages = form.careers_job_stages.take();
    let attrs = JobAttrs::new().apply(form);
    attrs.check(now)?;
    let company = company::Entity::find_by_id(company_id)
        .one(db)
        .await?
        .ok_or(DataError::NotFound)?;
    let mut model = job::ActiveModel {
        company_id: Set(company_id),
        search_company: Set(forms::fold_text(&company.name)),
        published_at: Set(None),
        moderated_at: Set(None),
        created_at: Set(now),
        ..Default::default()
    };
    attrs.write(&mut model, None, now);
    let txn = write_transaction(db).await?;
    let created = model.insert(&txn).await?;
    job_stage::write_stages(&txn, created.id, stages.as_deref(), now).await?;
    let view = employer_view(&txn, created.id, now).await?;
    txn.commit().await?;
    Ok(view)
}

/// Updates a job of the company: a status change must be one of the transitions, judged on the
/// status as read; a job the team archived keeps its status until the team releases it.
pub async fn update_job(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    mut form: JobForm,
    now: DateTime<Utc>,
) -> Result<EmployerJobView, DataError> {
    let txn = write_transaction(db).await?;
    lock(&txn, id).await?;
    let existing = job::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .filter(|j| j.company_id == company_id)
        .ok_or(DataError::NotFound)?;
    own_company(&form.company, company_id)?;
    let current = JobAttrs::of(&existing, now);
    let requested = form.status.as_deref().and_then(JobStatus::parse);
    if let Some(next) = requested.filter(|next| *next != current.status) {
        if existing.moderated_at.is_some() {
            return Err(DataError::invalid(
                "status",
                "the team archived this job: it keeps its status until the team releases it",
            ));
        }
        if !current.status.may_become(next) {
            return Err(DataError::invalid(
                "status",
                format!(
                    "a {} job cannot become {}",
                    current.status.as_str(),
                    next.as_str()
                ),
            ));
        }
    }
    let stages = form.careers_job_stages.take();
    let before = current.status;
    let attrs = current.apply(form);
    attrs.check(now)?;
    let published_at = existing.published_at;
    let status_changed = attrs.status != before;
    let mut model: job::ActiveModel = existing.into();
    attrs.write(&mut model, published_at, now);
    model.update(&txn).await?;
    if let Some(items) = &stages {
        job_stage::write_stages(&txn, id, Some(items), now).await?;
    }
    let view = employer_view(&txn, id, now).await?;
    if status_changed {
        status_changed_hook(&txn, company_id, &view.job, now).await?;
    }
    txn.commit().await?;
    Ok(view)
}

/// Stores the `careers_job.status_changed` webhook event of `job` (its snapshot, with its
/// company) on `conn`, the change's transaction.
async fn status_changed_hook<C: ConnectionTrait>(
    conn: &C,
    company_id: i64,
    job: &JobView,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    webhooks::record(conn, company_id, EventType::JobStatusChanged, job, now).await?;
    Ok(())
}

/// Takes job `id`'s row lock for the rest of the caller's transaction: the employer's edits and
/// the team's moderation decide on the status as it is then (PostgreSQL; SQLite's write
/// transaction holds the database's lock already).
async fn lock<C: ConnectionTrait>(conn: &C, id: i64) -> Result<(), DataError> {
    job::Entity::update_many()
        .col_expr(job::Column::Id, Expr::col(job::Column::Id))
        .filter(job::Column::Id.eq(id))
        .exec(conn)
        .await?;
    Ok(())
}

/// What the team may do to a job: archive it (moderation), or release a job it archived back to
/// its employer as a draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moderation {
    Archived,
    Released,
}

/// The team's `PATCH {status}`: `archived` archives any job (and marks it moderated), `draft`
/// releases a job the team archived; anything else is 422 on `status`.
pub async fn moderate(
    db: &DatabaseConnection,
    id: i64,
    status: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(JobView, Moderation), DataError> {
    let txn = write_transaction(db).await?;
    lock(&txn, id).await?;
    let existing = job::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .ok_or(DataError::NotFound)?;
    let (status, moderated_at, action) = match status {
        Some("archived") => (JobStatus::Archived, Some(now), Moderation::Archived),
        Some("draft") if existing.moderated_at.is_some() => {
            (JobStatus::Draft, None, Moderation::Released)
        }
        _ => {
            return Err(DataError::invalid(
                "status",
                "the team archives a job, or releases one it archived as a draft",
            ));
        }
    };
    let company_id = existing.company_id;
    let before = JobStatus::effective(&existing.status, existing.valid_through, now);
    let mut model: job::ActiveModel = existing.into();
    model.status = Set(status.as_str().to_owned());
    model.moderated_at = Set(moderated_at);
    model.updated_at = Set(now);
    model.update(&txn).await?;
    let view = job_view(&txn, id, now).await?;
    if before != status {
        status_changed_hook(&txn, company_id, &view, now).await?;
    }
    txn.commit().await?;
    Ok((view, action))
}

/// Stores `closed` for the open jobs whose `valid_through` has come (they read closed already):
/// the number closed. The server runs it at least every 60 s (CONTRACT §15).
/// Each closed job's `careers_job.status_changed` webhook event is stored in the same
/// transaction.
pub async fn close_expired(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<u64, DataError> {
    // Most rounds find nothing: a read, and no write transaction.
    let expired = job::Entity::find()
        .filter(job::Column::Status.eq(JobStatus::Open.as_str()))
        .filter(job::Column::ValidThrough.lte(now))
        .count(db)
        .await?;
    if expired == 0 {
        return Ok(0);
    }
    let txn = write_transaction(db).await?;
    let closed = job::Entity::update_many()
        .col_expr(job::Column::Status, Expr::value(JobStatus::Closed.as_str()))
        .col_expr(job::Column::UpdatedAt, Expr::value(now))
        .filter(job::Column::Status.eq(JobStatus::Open.as_str()))
        .filter(job::Column::ValidThrough.lte(now))
        .exec_with_returning(&txn)
        .await?;
    for job in &closed {
        let view = job_view(&txn, job.id, now).await?;
        status_changed_hook(&txn, job.company_id, &view, now).await?;
    }
    txn.commit().await?;
    Ok(closed.len() as u64)
}

/// An open job of a company that is not suspended, with the viewer's own applications to it.
pub async fn marketplace_job(
    db: &DatabaseConnection,
    viewer: Option<i64>,
    id: i64,
    now: DateTime<Utc>,
) -> Result<Option<MarketplaceJobView>, DataError> {
    let rows = jobs()
        .filter(job::Column::Id.eq(id))
        .filter(status_is(JobStatus::Open, now))
        .filter(company::Column::SuspendedAt.is_null())
        .all(db)
        .await?;
    Ok(with_own_applications(db, viewer, views(rows, now)?)
        .await?
        .pop())
}

/// A page of the marketplace's search (CONTRACT §15): the jobs in the search's order, the
/// total and the facets.
pub async fn marketplace_search(
    db: &DatabaseConnection,
    viewer: Option<i64>,
    search: &Search,
    now: DateTime<Utc>,
) -> Result<(Vec<MarketplaceJobView>, u64, Facets), DataError> {
    let (ids, total, facets) = super::search::search(db, search, now).await?;
    let mut found: HashMap<i64, JobView> = if ids.is_empty() {
        HashMap::new()
    } else {
        let rows = jobs()
            .filter(job::Column::Id.is_in(ids.clone()))
            .all(db)
            .await?;
        views(rows, now)?.into_iter().map(|v| (v.id, v)).collect()
    };
    let page = ids.iter().filter_map(|id| found.remove(id)).collect();
    Ok((
        with_own_applications(db, viewer, page).await?,
        total,
        facets,
    ))
}

/// The jobs, each with the viewer's own applications to it (none when anonymous): one
/// statement for the viewer's profile and one for their applications to these jobs.
async fn with_own_applications(
    db: &DatabaseConnection,
    viewer: Option<i64>,
    jobs: Vec<JobView>,
) -> Result<Vec<MarketplaceJobView>, DataError> {
    let profile_id = match viewer {
        Some(user_id) if !jobs.is_empty() => profile_of_user(db, user_id).await?.map(|p| p.id),
        _ => None,
    };
    let mut own: HashMap<i64, Vec<OwnApplication>> = HashMap::new();
    if let Some(profile_id) = profile_id {
        let ids: Vec<i64> = jobs.iter().map(|r| r.id).collect();
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
    Ok(jobs
        .into_iter()
        .map(|job| {
            let applications = own.remove(&job.id).unwrap_or_default();
            MarketplaceJobView {
                job,
                careers_job_applications: applications,
            }
        })
        .collect())
}
