//! Talent profiles, jobs and job applications: queries that return views, and the form rules.
//!
//! Responses join at most three tables; has-many children are loaded with one batched query
//! per association, so a list costs the same number of statements whatever its length.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    FromQueryResult, JoinType, ModelTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
    RelationTrait, Select, Set, TransactionTrait,
};

use super::entities::careers::{
    certificate, experience, job, job_application as application, skill, user_profile as profile,
};
use super::entities::identities::user;
use super::entities::org::company;
use super::{Columns, Db, FromRow, HotRow, Rows};
use crate::error::ApiError;
use crate::forms::careers::{
    CertificateItem, ExperienceItem, JobApplicationForm, NestedItem, SkillItem, TalentProfileForm,
};
use crate::forms::org::JobForm;
use crate::forms::{IdRef, parse_date};
use crate::views::careers::{
    ApplicantBrief, ApplicantDetail, ApplicationAttrs, CandidateApplicationItem, CertificateView,
    EmployerApplicationDetail, EmployerApplicationItem, ExperienceView, JobBrief, JobView,
    MarketplaceJobView, OwnApplication, ProfileChildren, SkillView, TalentProfileView,
};
use crate::views::org::{CompanyBrief, UserBrief};

pub const STATUS_SUBMITTED: &str = "submitted";

fn unique_violation(error: &sea_orm::DbErr) -> bool {
    matches!(
        error.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}

fn page_of<E: EntityTrait>(query: Select<E>, page: u64, per_page: u64) -> Select<E> {
    query.offset((page - 1) * per_page).limit(per_page)
}

// ---------------------------------------------------------------------------------------------
// Talent profiles

/// A user with their talent profile, if any: the talent and candidate area check in one
/// statement.
pub async fn user_with_profile(
    db: &DatabaseConnection,
    user_id: i64,
) -> Result<Option<(user::Model, Option<profile::Model>)>, ApiError> {
    Ok(user::Entity::find_by_id(user_id)
        .find_also_related(profile::Entity)
        .one(db)
        .await?)
}

pub async fn profile_of_user<C: ConnectionTrait>(
    db: &C,
    user_id: i64,
) -> Result<Option<profile::Model>, ApiError> {
    Ok(profile::Entity::find()
        .filter(profile::Column::IdentitiesUserId.eq(user_id))
        .one(db)
        .await?)
}

pub async fn create_profile(
    db: &DatabaseConnection,
    user_id: i64,
    headline: String,
) -> Result<TalentProfileView, ApiError> {
    if profile_of_user(db, user_id).await?.is_some() {
        return Err(ApiError::Conflict(
            "you already have a talent profile".into(),
        ));
    }
    let now = Utc::now();
    let created = profile::ActiveModel {
        identities_user_id: Set(user_id),
        headline: Set(headline),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await
    .map_err(|e| {
        if unique_violation(&e) {
            ApiError::Conflict("you already have a talent profile".into())
        } else {
            e.into()
        }
    })?;
    Ok(TalentProfileView::new(&created, ProfileChildren::default()))
}

/// Certificates, experiences and skills of several profiles: three statements in all.
pub async fn children_of<C: ConnectionTrait>(
    db: &C,
    profile_ids: &[i64],
) -> Result<HashMap<i64, ProfileChildren>, ApiError> {
    let mut children: HashMap<i64, ProfileChildren> = HashMap::new();
    if profile_ids.is_empty() {
        return Ok(children);
    }
    let ids = profile_ids.to_vec();
    for c in certificate::Entity::find()
        .filter(certificate::Column::CareersUserProfileId.is_in(ids.clone()))
        .order_by_asc(certificate::Column::Id)
        .all(db)
        .await?
    {
        let entry = children.entry(c.careers_user_profile_id).or_default();
        entry.certificates.push(CertificateView::from(&c));
    }
    for e in experience::Entity::find()
        .filter(experience::Column::CareersUserProfileId.is_in(ids.clone()))
        .order_by_asc(experience::Column::Id)
        .all(db)
        .await?
    {
        let entry = children.entry(e.careers_user_profile_id).or_default();
        entry.experiences.push(ExperienceView::from(&e));
    }
    for s in skill::Entity::find()
        .filter(skill::Column::CareersUserProfileId.is_in(ids))
        .order_by_asc(skill::Column::Id)
        .all(db)
        .await?
    {
        let entry = children.entry(s.careers_user_profile_id).or_default();
        entry.skills.push(SkillView::from(&s));
    }
    Ok(children)
}

pub async fn profile_view<C: ConnectionTrait>(
    db: &C,
    profile: &profile::Model,
) -> Result<TalentProfileView, ApiError> {
    let mut children = children_of(db, &[profile.id]).await?;
    Ok(TalentProfileView::new(
        profile,
        children.remove(&profile.id).unwrap_or_default(),
    ))
}

/// Applies a nested talent-profile form in one transaction: nothing is written unless all of
/// it is valid.
pub async fn update_profile(
    db: &DatabaseConnection,
    current: profile::Model,
    form: TalentProfileForm,
) -> Result<TalentProfileView, ApiError> {
    let txn = db.begin().await?;
    let profile_id = current.id;
    let now = Utc::now();
    let mut model: profile::ActiveModel = current.into();
    if let Some(headline) = form.headline {
        model.headline = Set(headline);
    }
    model.updated_at = Set(now);
    let updated = model.update(&txn).await?;

    if let Some(items) = &form.certificates {
        sync_children::<certificate::Entity, _>(
            &txn,
            profile_id,
            "certificates",
            items,
            |item, existing| certificate_model(item, existing, profile_id, now),
        )
        .await?;
    }
    if let Some(items) = &form.experiences {
        sync_children::<experience::Entity, _>(
            &txn,
            profile_id,
            "experiences",
            items,
            |item, existing| experience_model(item, existing, profile_id, now),
        )
        .await?;
    }
    if let Some(items) = &form.skills {
        sync_children::<skill::Entity, _>(&txn, profile_id, "skills", items, |item, existing| {
            skill_model(item, existing, profile_id, now)
        })
        .await?;
    }
    let view = profile_view(&txn, &updated).await?;
    txn.commit().await?;
    Ok(view)
}

fn certificate_model(
    item: &CertificateItem,
    existing: Option<certificate::Model>,
    profile_id: i64,
    now: DateTime<Utc>,
) -> certificate::ActiveModel {
    let mut m: certificate::ActiveModel = match existing {
        Some(model) => model.into(),
        None => certificate::ActiveModel {
            careers_user_profile_id: Set(profile_id),
            created_at: Set(now),
            ..Default::default()
        },
    };
    if let Some(name) = &item.name {
        m.name = Set(name.clone());
    }
    if item.issuer.is_some() {
        m.issuer = Set(item.issuer.clone());
    }
    if let Some(date) = &item.issued_on {
        m.issued_on = Set(parse_date(date));
    }
    m.updated_at = Set(now);
    m
}

fn skill_model(
    item: &SkillItem,
    existing: Option<skill::Model>,
    profile_id: i64,
    now: DateTime<Utc>,
) -> skill::ActiveModel {
    let mut m: skill::ActiveModel = match existing {
        Some(model) => model.into(),
        None => skill::ActiveModel {
            careers_user_profile_id: Set(profile_id),
            created_at: Set(now),
            ..Default::default()
        },
    };
    if let Some(name) = &item.name {
        m.name = Set(name.clone());
    }
    m.updated_at = Set(now);
    m
}

fn experience_model(
    item: &ExperienceItem,
    existing: Option<experience::Model>,
    profile_id: i64,
    now: DateTime<Utc>,
) -> experience::ActiveModel {
    let mut m: experience::ActiveModel = match existing {
        Some(model) => model.into(),
        None => experience::ActiveModel {
            careers_user_profile_id: Set(profile_id),
            created_at: Set(now),
            ..Default::default()
        },
    };
    if let Some(title) = &item.job_title {
        m.job_title = Set(title.clone());
    }
    if item.company_name.is_some() {
        m.company_name = Set(item.company_name.clone());
    }
    if let Some(date) = &item.started_on {
        m.started_on = Set(parse_date(date));
    }
    if let Some(date) = &item.ended_on {
        m.ended_on = Set(parse_date(date));
    }
    if item.description.is_some() {
        m.description = Set(item.description.clone());
    }
    m.updated_at = Set(now);
    m
}

/// A child entity of a talent profile.
trait ProfileChild: EntityTrait {
    fn profile_id(model: &Self::Model) -> i64;
}

impl ProfileChild for certificate::Entity {
    fn profile_id(model: &Self::Model) -> i64 {
        model.careers_user_profile_id
    }
}

impl ProfileChild for experience::Entity {
    fn profile_id(model: &Self::Model) -> i64 {
        model.careers_user_profile_id
    }
}

impl ProfileChild for skill::Entity {
    fn profile_id(model: &Self::Model) -> i64 {
        model.careers_user_profile_id
    }
}

/// Items with `id` update (or with `_destroy` remove) the profile's own child of that id; items
/// without create one. An id that is not the profile's own is a 422 on that item.
async fn sync_children<E, I>(
    txn: &sea_orm::DatabaseTransaction,
    profile_id: i64,
    key: &str,
    items: &[I],
    build: impl Fn(&I, Option<E::Model>) -> E::ActiveModel,
) -> Result<(), ApiError>
where
    E: ProfileChild,
    E::Model: sea_orm::IntoActiveModel<E::ActiveModel> + ModelTrait<Entity = E> + Sync,
    E::ActiveModel: ActiveModelTrait<Entity = E> + sea_orm::ActiveModelBehavior + Send,
    <E::PrimaryKey as sea_orm::PrimaryKeyTrait>::ValueType: From<i64>,
    I: NestedItem,
{
    for (index, item) in items.iter().enumerate() {
        // `_destroy` on an item that names no existing child has nothing to remove.
        if item.destroy() && item.id().is_none() {
            continue;
        }
        let existing = match item.id() {
            Some(id) => Some(
                E::find_by_id(id)
                    .one(txn)
                    .await?
                    .filter(|m| E::profile_id(m) == profile_id)
                    .ok_or_else(|| {
                        ApiError::field(format!("{key}[{index}].id"), "does not exist")
                    })?,
            ),
            None => None,
        };
        let result = match existing {
            Some(model) if item.destroy() => model.delete(txn).await.map(drop),
            existing => build(item, existing).save(txn).await.map(drop),
        };
        result.map_err(|e| {
            if unique_violation(&e) {
                ApiError::Conflict(format!("{key}[{index}] duplicates an existing entry"))
            } else {
                e.into()
            }
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Jobs

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
) -> Result<(Vec<JobView>, u64), ApiError> {
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

async fn job_view<C: ConnectionTrait>(db: &C, id: i64) -> Result<Option<JobView>, ApiError> {
    Ok(jobs()
        .filter(job::Column::Id.eq(id))
        .into_model::<JobRow>()
        .one(db)
        .await?
        .map(Into::into))
}

/// `company.id` of a job form: the employer's own company only.
fn own_company(reference: &Option<IdRef>, company_id: i64) -> Result<Option<i64>, ApiError> {
    match IdRef::id_of(reference) {
        Some(id) if id != company_id => {
            Err(ApiError::field("company.id", "must be your own company"))
        }
        other => Ok(other),
    }
}

pub async fn create_job(
    db: &DatabaseConnection,
    company_id: i64,
    form: JobForm,
) -> Result<JobView, ApiError> {
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
    job_view(db, created.id).await?.ok_or(ApiError::Internal)
}

pub async fn update_job(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    form: JobForm,
) -> Result<JobView, ApiError> {
    let existing = job::Entity::find_by_id(id)
        .one(db)
        .await?
        .filter(|j| j.company_id == company_id)
        .ok_or(ApiError::NotFound)?;
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
    job_view(db, id).await?.ok_or(ApiError::Internal)
}

/// Published jobs, each with the viewer's own applications to it (none when anonymous).
pub async fn marketplace_jobs(
    db: &DatabaseConnection,
    viewer: Option<i64>,
    job_id: Option<i64>,
    page: u64,
    per_page: u64,
) -> Result<(Vec<MarketplaceJobView>, u64), ApiError> {
    let mut published = job::Entity::find().filter(job::Column::Published.eq(true));
    let mut rows = jobs().filter(job::Column::Published.eq(true));
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

// ---------------------------------------------------------------------------------------------
// Job applications

/// A row of [`applications_to`], decoded by position in its select-list order; its text is
/// borrowed from the row.
struct ApplicantRow<'r> {
    application: ApplicationAttrs<'r>,
    profile_id: i64,
    user: UserBrief<'r>,
    /// The total of the whole selection (see [`applications_to`]).
    total: i64,
}

impl<'r> FromRow<'r> for ApplicantRow<'r> {
    fn read<R: HotRow>(cols: &mut Columns<'r, R>) -> Result<Self, sea_orm::sqlx::Error> {
        Ok(Self {
            application: ApplicationAttrs {
                id: cols.read()?,
                status: Cow::Borrowed(cols.read()?),
                cover_letter: Cow::Borrowed(cols.read()?),
                created_at: cols.read()?,
                updated_at: cols.read()?,
            },
            profile_id: cols.read()?,
            user: UserBrief {
                id: cols.read()?,
                first_name: Cow::Borrowed(cols.read()?),
                last_name: Cow::Borrowed(cols.read()?),
            },
            total: cols.read()?,
        })
    }
}

/// A page of [`applications_to`]'s rows as the database returned them, with the total of the
/// whole selection. The page's items borrow their text from it, so that a list answer copies
/// each string once, from the row into the body: copying it into a `String` on the way cost the
/// list about 4 % of its CPU (docs/PERFORMANCE.md, sessions 13 and 14).
pub struct ApplicantRows {
    rows: Rows,
    /// The total when there is no row to carry it: 0 on the first page, counted past the last.
    empty_total: u64,
}

impl ApplicantRows {
    /// The page's items, and the total of the whole selection.
    pub fn page(&self) -> Result<(Vec<EmployerApplicationItem<'_>>, u64), ApiError> {
        let rows: Vec<ApplicantRow> = self.rows.decode()?;
        let total = rows
            .first()
            .map_or(self.empty_total, |row| row.total as u64);
        let items = rows
            .into_iter()
            .map(|r| EmployerApplicationItem {
                application: r.application,
                career_user_profile: ApplicantBrief {
                    id: r.profile_id,
                    identities_user: r.user,
                },
            })
            .collect();
        Ok((items, total))
    }
}

/// Applications to a company's jobs, joined with the applicant's profile and user: three
/// tables. The company is the application's own `company_id` (kept equal to its job's by a
/// foreign key), so a page walks the `(company_id, id)` index in order and stops after its
/// rows: no sub-query on the jobs, no sort of the company's every application
/// (docs/PERFORMANCE.md, session 6). The company is `$1`; `filters` adds conditions on `a` with
/// the next placeholders. The total of the whole selection rides along on every row from an
/// uncorrelated sub-query, which the database computes once, so a page with rows needs no
/// count statement (a `COUNT(*) OVER ()` window made SQLite materialise and sort the result,
/// ~40 % slower). The SQL is written out rather than built per request: building and dropping
/// the ORM's query was a tenth of the list's CPU (docs/PERFORMANCE.md).
fn applications_to(filters: &str, tail: &str) -> String {
    format!(
        "SELECT a.id, a.status, a.cover_letter, a.created_at, a.updated_at, \
         p.id AS profile_id, u.id AS user_id, u.first_name AS user_first_name, \
         u.last_name AS user_last_name, \
         (SELECT COUNT(*) FROM careers_job_applications a WHERE a.company_id = $1{filters}) \
         AS total \
         FROM careers_job_applications a \
         INNER JOIN careers_user_profiles p ON p.id = a.careers_user_profile_id \
         INNER JOIN identities_users u ON u.id = p.identities_user_id \
         WHERE a.company_id = $1{filters}{tail}"
    )
}

/// The page of applications to `company_id`'s jobs (to one of them with `job_id`), with the
/// total: one statement, and a count past the last page, where no row carries the total.
pub async fn employer_applications(
    db: &Db,
    company_id: i64,
    job_id: Option<i64>,
    page: u64,
    per_page: u64,
) -> Result<ApplicantRows, ApiError> {
    // The statements, written once: without and with the job filter.
    static PAGES: LazyLock<[String; 2]> = LazyLock::new(|| {
        [
            applications_to("", " ORDER BY a.id LIMIT $2 OFFSET $3"),
            applications_to(
                " AND a.careers_job_id = $2",
                " ORDER BY a.id LIMIT $3 OFFSET $4",
            ),
        ]
    });
    let filtered = usize::from(job_id.is_some());
    let mut binds: Vec<i64> = [Some(company_id), job_id].into_iter().flatten().collect();
    binds.extend([per_page as i64, ((page - 1) * per_page) as i64]);
    let rows = db.fetch_rows(PAGES[filtered].as_str(), &binds).await?;
    let empty_total = if rows.is_empty() && page > 1 {
        let mut applications =
            application::Entity::find().filter(application::Column::CompanyId.eq(company_id));
        if let Some(job_id) = job_id {
            applications = applications.filter(application::Column::CareersJobId.eq(job_id));
        }
        applications.count(&**db).await?
    } else {
        0
    };
    Ok(ApplicantRows { rows, empty_total })
}

pub async fn employer_application(
    db: &Db,
    company_id: i64,
    id: i64,
) -> Result<Option<EmployerApplicationDetail>, ApiError> {
    static SQL: LazyLock<String> = LazyLock::new(|| applications_to(" AND a.id = $2", ""));
    let rows = db.fetch_rows(SQL.as_str(), &[company_id, id]).await?;
    let Some(row) = rows.decode::<ApplicantRow>()?.into_iter().next() else {
        return Ok(None);
    };
    let mut children = children_of(&**db, &[row.profile_id]).await?;
    Ok(Some(EmployerApplicationDetail {
        application: row.application.into_owned(),
        career_user_profile: ApplicantDetail {
            id: row.profile_id,
            children: children.remove(&row.profile_id).unwrap_or_default(),
            identities_user: row.user.into_owned(),
        },
    }))
}

#[derive(Debug, FromQueryResult)]
struct CandidateRow {
    id: i64,
    status: String,
    cover_letter: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    job_id: i64,
    job_title: String,
    company_id: i64,
    company_name: String,
}

impl From<CandidateRow> for CandidateApplicationItem {
    fn from(r: CandidateRow) -> Self {
        Self {
            application: ApplicationAttrs {
                id: r.id,
                status: r.status.into(),
                cover_letter: r.cover_letter.into(),
                created_at: r.created_at.into(),
                updated_at: r.updated_at.into(),
            },
            careers_job: JobBrief {
                id: r.job_id,
                title: r.job_title,
                company: CompanyBrief {
                    id: r.company_id,
                    name: r.company_name,
                },
            },
        }
    }
}

/// A profile's applications joined with their job and the job's company: three tables.
fn applications_of(profile_id: i64) -> Select<application::Entity> {
    application::Entity::find()
        .select_only()
        .column(application::Column::Id)
        .column(application::Column::Status)
        .column(application::Column::CoverLetter)
        .column(application::Column::CreatedAt)
        .column(application::Column::UpdatedAt)
        .column_as(job::Column::Id, "job_id")
        .column_as(job::Column::Title, "job_title")
        .column_as(company::Column::Id, "company_id")
        .column_as(company::Column::Name, "company_name")
        .join(JoinType::InnerJoin, application::Relation::Job.def())
        .join(JoinType::InnerJoin, job::Relation::Company.def())
        .filter(application::Column::CareersUserProfileId.eq(profile_id))
}

pub async fn candidate_applications(
    db: &DatabaseConnection,
    profile_id: i64,
    page: u64,
    per_page: u64,
) -> Result<(Vec<CandidateApplicationItem>, u64), ApiError> {
    let total = application::Entity::find()
        .filter(application::Column::CareersUserProfileId.eq(profile_id))
        .count(db)
        .await?;
    let rows = page_of(applications_of(profile_id), page, per_page)
        .order_by_asc(application::Column::Id)
        .into_model::<CandidateRow>()
        .all(db)
        .await?;
    Ok((rows.into_iter().map(Into::into).collect(), total))
}

/// Creates an application and adds its experiences to the applicant's profile in one
/// transaction: a failure (already applied, say) leaves neither.
pub async fn apply(
    db: &DatabaseConnection,
    own_profile_id: i64,
    form: JobApplicationForm,
) -> Result<CandidateApplicationItem, ApiError> {
    let applicant = form.careers_user_profile.ok_or(ApiError::Internal)?;
    if applicant.id != Some(own_profile_id) {
        return Err(ApiError::field(
            "careers_user_profile.id",
            "must be your own talent profile",
        ));
    }
    let job_id = IdRef::id_of(&form.careers_job).ok_or(ApiError::Internal)?;
    let txn = db.begin().await?;
    let Some(job) = job::Entity::find_by_id(job_id)
        .one(&txn)
        .await?
        .filter(|j| j.published)
    else {
        return Err(ApiError::field("careers_job.id", "does not exist"));
    };
    let now = Utc::now();
    for item in applicant.careers_experience.iter().flatten() {
        experience_model(item, None, own_profile_id, now)
            .insert(&txn)
            .await?;
    }
    let created = application::ActiveModel {
        careers_job_id: Set(job_id),
        company_id: Set(job.company_id),
        careers_user_profile_id: Set(own_profile_id),
        status: Set(STATUS_SUBMITTED.into()),
        cover_letter: Set(form.cover_letter.unwrap_or_default()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await
    .map_err(|e| {
        if unique_violation(&e) {
            ApiError::Conflict("you have already applied to this job".into())
        } else {
            e.into()
        }
    })?;
    let item = applications_of(own_profile_id)
        .filter(application::Column::Id.eq(created.id))
        .into_model::<CandidateRow>()
        .one(&txn)
        .await?
        .ok_or(ApiError::Internal)?;
    txn.commit().await?;
    Ok(item.into())
}
