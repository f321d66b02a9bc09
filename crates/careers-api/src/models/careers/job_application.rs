//! `Careers::JobApplication`: a candidate's application to a job, as the candidate and the
//! job's employer see it.

pub mod entity;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, FromQueryResult, JoinType,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, RelationTrait, Select, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as application;
use super::briefs::JobBrief;
use super::experience::{self, ExperienceItem};
use super::job::entity as job;
use super::job_application_event::{self, EventKind, NewEvent};
use super::user_profile::{ProfileChildren, children_of};
use crate::db::{DataError, Db, Rows, foreign_key_violation, hot_row, page_of, unique_violation};
use crate::webhooks::{self, EventType};

use crate::forms::{Errors, IdRef, Invalid};
use crate::models::identities::user::UserBrief;
use crate::models::org::company::{CompanyBrief, entity as company};

/// `Careers::JobApplication`'s own attributes. Its text is borrowed from the database's rows
/// where the employer's list writes them straight from its hot read, and owned everywhere
/// else (`'static`): see `db::ApplicantRows`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ApplicationAttrs<'a> {
    pub id: i64,
    /// `active`, `rejected`, `hired` or `withdrawn` (CONTRACT §16).
    pub status: Cow<'a, str>,
    pub status_changed_at: DateTime<Utc>,
    pub cover_letter: Cow<'a, str>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<&application::Model> for ApplicationAttrs<'static> {
    fn from(a: &application::Model) -> Self {
        Self {
            id: a.id,
            status: a.status.clone().into(),
            status_changed_at: a.status_changed_at,
            cover_letter: a.cover_letter.clone().into(),
            created_at: a.created_at,
            updated_at: a.updated_at,
        }
    }
}

impl ApplicationAttrs<'_> {
    /// The same attributes with their text owned.
    pub fn into_owned(self) -> ApplicationAttrs<'static> {
        ApplicationAttrs {
            id: self.id,
            status: self.status.into_owned().into(),
            status_changed_at: self.status_changed_at,
            cover_letter: self.cover_letter.into_owned().into(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// A record named by its id alone: `{"id": 1}`.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
pub struct IdOnly {
    pub id: i64,
}

/// What the employer sees of an application's place in the hiring pipeline (CONTRACT §16):
/// never shown to the candidate. The stage's name is in the job's `careers_job_stages`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PipelineAttrs {
    /// `not_a_fit`, `position_filled`, `no_response` or `other` when rejected; else null.
    pub rejection_reason: Option<String>,
    /// 0 at creation, +1 on every change of the application; a change must name it.
    pub lock_version: i64,
    pub careers_job: IdOnly,
    pub careers_job_stage: Option<IdOnly>,
}

impl From<&application::Model> for PipelineAttrs {
    fn from(a: &application::Model) -> Self {
        Self {
            rejection_reason: a.rejection_reason.clone(),
            lock_version: a.lock_version,
            careers_job: IdOnly {
                id: a.careers_job_id,
            },
            careers_job_stage: a.careers_job_stage_id.map(|id| IdOnly { id }),
        }
    }
}

/// The applicant as an employer's list shows them (specification §4.3).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ApplicantBrief<'a> {
    pub id: i64,
    pub identities_user: UserBrief<'a>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EmployerApplicationItem<'a> {
    #[serde(flatten)]
    pub application: ApplicationAttrs<'a>,
    #[serde(flatten)]
    pub pipeline: PipelineAttrs,
    pub career_user_profile: ApplicantBrief<'a>,
}

/// The applicant with their profile's children, for the employer's detail view.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ApplicantDetail {
    pub id: i64,
    #[serde(flatten)]
    pub children: ProfileChildren,
    pub identities_user: UserBrief<'static>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EmployerApplicationDetail {
    #[serde(flatten)]
    pub application: ApplicationAttrs<'static>,
    #[serde(flatten)]
    pub pipeline: PipelineAttrs,
    pub career_user_profile: ApplicantDetail,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CandidateApplicationItem {
    #[serde(flatten)]
    pub application: ApplicationAttrs<'static>,
    pub careers_job: JobBrief,
}

/// `careers_user_profile` of an application: the caller's own profile, plus experiences to add.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct ApplicantRef {
    #[garde(required)]
    pub id: Option<i64>,
    #[garde(dive, length(max = 50))]
    pub careers_experience: Option<Vec<ExperienceItem>>,
}

/// `POST /candidate/careers/job_applications`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct JobApplicationForm {
    #[garde(dive)]
    pub careers_job: Option<IdRef>,
    #[garde(dive)]
    pub careers_user_profile: Option<ApplicantRef>,
    #[garde(length(chars, max = 10_000))]
    pub cover_letter: Option<String>,
}

impl JobApplicationForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("careers_job", self.careers_job.is_some());
        errors.require("careers_user_profile", self.careers_user_profile.is_some());
        if let Some(profile) = &self.careers_user_profile {
            let key = "careers_user_profile.careers_experience";
            for (index, item) in profile.careers_experience.iter().flatten().enumerate() {
                if item.id.is_some() || item.destroy.is_some() {
                    errors.add(
                        format!("{key}[{index}].id"),
                        "experiences are added here, not edited",
                    );
                }
                errors.require(
                    &format!("{key}[{index}].job_title"),
                    item.job_title.is_some(),
                );
            }
        }
        errors.finish()
    }
}

/// A new application's status (CONTRACT §16).
pub const STATUS_ACTIVE: &str = ApplicationStatus::Active.as_str();

hot_row! {
    /// A row of [`applications_to`]: the application, its applicant's profile and user, and the
    /// total of the whole selection (its `{filters}` are the statement's). Its text is borrowed
    /// from the database's row.
    struct ApplicantRow<'r> {
        id: i64 = "a.id",
        status: &'r str = "a.status",
        status_changed_at: DateTime<Utc> = "a.status_changed_at",
        cover_letter: &'r str = "a.cover_letter",
        created_at: DateTime<Utc> = "a.created_at",
        updated_at: DateTime<Utc> = "a.updated_at",
        rejection_reason: Option<String> = "a.rejection_reason",
        lock_version: i64 = "a.lock_version",
        job_id: i64 = "a.careers_job_id",
        stage_id: Option<i64> = "a.careers_job_stage_id",
        profile_id: i64 = "p.id",
        user_id: i64 = "u.id",
        user_first_name: &'r str = "u.first_name",
        user_last_name: &'r str = "u.last_name",
        total: i64 = "(SELECT COUNT(*) FROM careers_job_applications a \
                      WHERE a.company_id = $1{filters})",
    }
}

impl<'r> ApplicantRow<'r> {
    fn application(&self) -> ApplicationAttrs<'r> {
        ApplicationAttrs {
            id: self.id,
            status: Cow::Borrowed(self.status),
            status_changed_at: self.status_changed_at,
            cover_letter: Cow::Borrowed(self.cover_letter),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }

    fn pipeline(&self) -> PipelineAttrs {
        PipelineAttrs {
            rejection_reason: self.rejection_reason.clone(),
            lock_version: self.lock_version,
            careers_job: IdOnly { id: self.job_id },
            careers_job_stage: self.stage_id.map(|id| IdOnly { id }),
        }
    }

    fn item(&self) -> EmployerApplicationItem<'r> {
        EmployerApplicationItem {
            application: self.application(),
            pipeline: self.pipeline(),
            career_user_profile: ApplicantBrief {
                id: self.profile_id,
                identities_user: self.user(),
            },
        }
    }

    fn user(&self) -> UserBrief<'r> {
        UserBrief {
            id: self.user_id,
            first_name: Cow::Borrowed(self.user_first_name),
            last_name: Cow::Borrowed(self.user_last_name),
        }
    }
}

/// A page of [`applications_to`]'s rows as the database returned them, with the total of the
/// whole selection. The page's items borrow their text from it, so that no string of the page
/// is copied into a `String` of its own on the way to the body (on a SQLite file the rows keep
/// all their text in one buffer: `InlineRows` in `db/hot/inline.rs`).
pub struct ApplicantRows {
    rows: Rows,
    /// The total when there is no row to carry it: 0 on the first page, counted past the last.
    empty_total: u64,
}

impl ApplicantRows {
    /// The page's items, and the total of the whole selection.
    pub fn page(&self) -> Result<(Vec<EmployerApplicationItem<'_>>, u64), DataError> {
        let rows: Vec<ApplicantRow> = self.rows.decode()?;
        let total = rows
            .first()
            .map_or(self.empty_total, |row| row.total as u64);
        let items = rows.iter().map(ApplicantRow::item).collect();
        Ok((items, total))
    }
}

/// Applications to a company's jobs, joined with the applicant's profile and user: three
/// tables. The company is the application's own `company_id` (kept equal to its job's by a
/// foreign key), so a page walks the `(company_id, id)` index in order and stops after its
/// rows: no sub-query on the jobs, no sort of the company's every application
/// (DECISIONS 52). The company is `$1`; `filters` adds conditions on `a` with
/// the next placeholders. The total of the whole selection rides along on every row from an
/// uncorrelated sub-query, which the database computes once, so a page with rows needs no
/// count statement (a `COUNT(*) OVER ()` window made SQLite materialise and sort the result,
/// ~40 % slower). The SQL is written out rather than built per request: building and dropping
/// the ORM's query was a tenth of the list's CPU (docs/bench-results/read-path.md).
fn applications_to(filters: &str, tail: &str) -> String {
    format!(
        "SELECT {} \
         FROM careers_job_applications a \
         INNER JOIN careers_user_profiles p ON p.id = a.careers_user_profile_id \
         INNER JOIN identities_users u ON u.id = p.identities_user_id \
         WHERE a.company_id = $1{filters}{tail}",
        ApplicantRow::COLUMNS.replace("{filters}", filters)
    )
}

/// An application's status (CONTRACT §16), as the employer's list filters by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApplicationStatus {
    Active,
    Rejected,
    Hired,
    Withdrawn,
}

impl ApplicationStatus {
    pub const ALL: [Self; 4] = [Self::Active, Self::Rejected, Self::Hired, Self::Withdrawn];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Rejected => "rejected",
            Self::Hired => "hired",
            Self::Withdrawn => "withdrawn",
        }
    }
}

/// The employer's list's filters: a job, a status, a stage (each optional).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ApplicationFilter {
    pub job_id: Option<i64>,
    pub status: Option<ApplicationStatus>,
    pub stage_id: Option<i64>,
}

/// The page of applications to `company_id`'s jobs that pass `filter`, with the total: one
/// statement, and a count past the last page, where no row carries the total.
pub async fn employer_applications(
    db: &Db,
    company_id: i64,
    filter: ApplicationFilter,
    page: u64,
    per_page: u64,
) -> Result<ApplicantRows, DataError> {
    // The statements, written once for every combination of filters. The hot reads bind
    // integers only, so a status stands in the text as the literal of its (closed) set.
    type Shape = (bool, Option<ApplicationStatus>, bool);
    static PAGES: LazyLock<HashMap<Shape, String>> = LazyLock::new(|| {
        let statuses = std::iter::once(None).chain(ApplicationStatus::ALL.map(Some));
        let mut pages = HashMap::new();
        for status in statuses {
            for (job, stage) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut next = 2;
                let mut filters = String::new();
                let mut bound = |filters: &mut String, column: &str| {
                    filters.push_str(&format!(" AND a.{column} = ${next}"));
                    next += 1;
                };
                if job {
                    bound(&mut filters, "careers_job_id");
                }
                if stage {
                    bound(&mut filters, "careers_job_stage_id");
                }
                if let Some(status) = status {
                    filters.push_str(&format!(" AND a.status = '{}'", status.as_str()));
                }
                let tail = format!(" ORDER BY a.id LIMIT ${next} OFFSET ${}", next + 1);
                pages.insert((job, status, stage), applications_to(&filters, &tail));
            }
        }
        pages
    });
    let shape = (
        filter.job_id.is_some(),
        filter.status,
        filter.stage_id.is_some(),
    );
    let mut binds: Vec<i64> = [Some(company_id), filter.job_id, filter.stage_id]
        .into_iter()
        .flatten()
        .collect();
    binds.extend([per_page as i64, ((page - 1) * per_page) as i64]);
    let rows = db.fetch_rows(PAGES[&shape].as_str(), &binds).await?;
    let empty_total = if rows.is_empty() && page > 1 {
        let mut applications =
            application::Entity::find().filter(application::Column::CompanyId.eq(company_id));
        if let Some(job_id) = filter.job_id {
            applications = applications.filter(application::Column::CareersJobId.eq(job_id));
        }
        if let Some(stage_id) = filter.stage_id {
            applications = applications.filter(application::Column::CareersJobStageId.eq(stage_id));
        }
        if let Some(status) = filter.status {
            applications = applications.filter(application::Column::Status.eq(status.as_str()));
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
) -> Result<Option<EmployerApplicationDetail>, DataError> {
    static SQL: LazyLock<String> = LazyLock::new(|| applications_to(" AND a.id = $2", ""));
    let rows = db.fetch_rows(SQL.as_str(), &[company_id, id]).await?;
    let Some(row) = rows.decode::<ApplicantRow>()?.into_iter().next() else {
        return Ok(None);
    };
    let mut children = children_of(&**db, &[row.profile_id]).await?;
    Ok(Some(EmployerApplicationDetail {
        application: row.application().into_owned(),
        pipeline: row.pipeline(),
        career_user_profile: ApplicantDetail {
            id: row.profile_id,
            children: children.remove(&row.profile_id).unwrap_or_default(),
            identities_user: row.user().into_owned(),
        },
    }))
}

#[derive(Debug, FromQueryResult)]
struct CandidateRow {
    id: i64,
    status: String,
    status_changed_at: DateTime<Utc>,
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
                status_changed_at: r.status_changed_at,
                cover_letter: r.cover_letter.into(),
                created_at: r.created_at,
                updated_at: r.updated_at,
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
        .column(application::Column::StatusChangedAt)
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
) -> Result<(Vec<CandidateApplicationItem>, u64), DataError> {
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

/// The job's first stage (by position), where a new application starts.
pub async fn first_stage<C: sea_orm::ConnectionTrait>(
    conn: &C,
    job_id: i64,
) -> Result<Option<i64>, DataError> {
    use super::job_stage::entity as stage;
    Ok(stage::Entity::find()
        .filter(stage::Column::CareersJobId.eq(job_id))
        .order_by_asc(stage::Column::Position)
        .order_by_asc(stage::Column::Id)
        .one(conn)
        .await?
        .map(|s| s.id))
}

/// Creates an application and adds its experiences to the applicant's profile in one
/// transaction: a failure (already applied, say) leaves neither.
pub async fn apply(
    db: &DatabaseConnection,
    user: &UserBrief<'static>,
    own_profile_id: i64,
    form: JobApplicationForm,
    now: DateTime<Utc>,
) -> Result<CandidateApplicationItem, DataError> {
    let applicant = form.careers_user_profile.ok_or(DataError::Inconsistent)?;
    if applicant.id != Some(own_profile_id) {
        return Err(DataError::invalid(
            "careers_user_profile.id",
            "must be your own talent profile",
        ));
    }
    let job_id = IdRef::id_of(&form.careers_job).ok_or(DataError::Inconsistent)?;
    let txn = crate::db::write_transaction(db).await?;
    // A job open to applications: open as read, of a company that is not suspended.
    let Some(job) = super::job::open_to_candidates(job::Entity::find_by_id(job_id), now)
        .one(&txn)
        .await?
    else {
        return Err(DataError::invalid(
            "careers_job.id",
            "is not a job open to applications",
        ));
    };
    for item in applicant.careers_experience.iter().flatten() {
        experience::active_model(item, None, own_profile_id, now)
            .insert(&txn)
            .await?;
    }
    let created = application::ActiveModel {
        careers_job_id: Set(job_id),
        company_id: Set(job.company_id),
        careers_user_profile_id: Set(own_profile_id),
        status: Set(STATUS_ACTIVE.into()),
        cover_letter: Set(form.cover_letter.unwrap_or_default()),
        created_at: Set(now),
        updated_at: Set(now),
        careers_job_stage_id: Set(first_stage(&txn, job_id).await?),
        rejection_reason: Set(None),
        status_changed_at: Set(now),
        lock_version: Set(0),
        ..Default::default()
    }
    .insert(&txn)
    .await
    .map_err(|e| {
        if unique_violation(&e) {
            DataError::Conflict("you have already applied to this job".into())
        } else {
            e.into()
        }
    })?;
    let applied = NewEvent::new(EventKind::Applied, user.id);
    job_application_event::record(&txn, created.id, vec![applied], now).await?;
    let snapshot = EmployerApplicationItem::of(&created, user);
    webhooks::record(
        &txn,
        created.company_id,
        EventType::ApplicationCreated,
        &snapshot,
        now,
    )
    .await?;
    let item = applications_of(own_profile_id)
        .filter(application::Column::Id.eq(created.id))
        .into_model::<CandidateRow>()
        .one(&txn)
        .await?
        .ok_or(DataError::Inconsistent)?;
    txn.commit().await?;
    Ok(item.into())
}

/// The statuses of an application (CONTRACT §16).
pub const STATUSES: [&str; 4] = [
    ApplicationStatus::Active.as_str(),
    ApplicationStatus::Rejected.as_str(),
    ApplicationStatus::Hired.as_str(),
    ApplicationStatus::Withdrawn.as_str(),
];
/// Why an application was rejected.
pub const REJECTION_REASONS: [&str; 4] = ["not_a_fit", "position_filled", "no_response", "other"];

/// Whether the employer may change an application's status `from` → `to` (a different one):
/// `active`→`rejected`, `active`→`hired`, `rejected`→`active`; `hired` and `withdrawn` are
/// final, and only the candidate withdraws.
pub fn employer_may_change(from: &str, to: &str) -> bool {
    matches!(
        (from, to),
        ("active", "rejected") | ("active", "hired") | ("rejected", "active")
    )
}

/// `PATCH /org-user/careers/job_applications/{id}`: the employer moves, rejects, hires or
/// reopens an application, naming the `lock_version` it read.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct ApplicationChangeForm {
    /// The version read; another than the stored one is 409 (someone else changed it first).
    #[garde(skip)]
    pub lock_version: Option<i64>,
    /// A stage of the same job; only while the application is `active`.
    #[garde(dive)]
    pub careers_job_stage: Option<IdRef>,
    /// `active`, `rejected` or `hired`, by the transitions.
    #[garde(skip)]
    pub status: Option<String>,
    /// Required with `rejected`: `not_a_fit`, `position_filled`, `no_response`, `other`.
    #[garde(skip)]
    pub rejection_reason: Option<String>,
    /// Whether the candidate is told of a rejection or a hire by e-mail (default true).
    #[garde(skip)]
    pub notify_candidate: Option<bool>,
}

impl ApplicationChangeForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("lock_version", self.lock_version.is_some());
        if let Some(status) = &self.status
            && !STATUSES.contains(&status.as_str())
        {
            errors.add("status", format!("must be one of {}", STATUSES.join(", ")));
        }
        if let Some(reason) = &self.rejection_reason
            && !REJECTION_REASONS.contains(&reason.as_str())
        {
            let allowed = REJECTION_REASONS.join(", ");
            errors.add("rejection_reason", format!("must be one of {allowed}"));
        }
        errors.finish()
    }
}

/// `PATCH /candidate/careers/job_applications/{id}`: `{"status": "withdrawn"}`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct WithdrawalForm {
    /// `withdrawn`, from `active` only.
    #[garde(required)]
    pub status: Option<String>,
}

/// Who tells the candidate of a decision, and what seals the message in the outbox.
pub struct DecisionNotice<'a> {
    pub secrets: &'a crate::mfa::SecretBox,
}

/// How long the message of a decision may wait for the mail server.
const DECISION_MAIL_DAYS: i64 = 7;

impl DecisionNotice<'_> {
    /// Queues the candidate's message of application `id` becoming `status` (`rejected` or
    /// `hired`) on `conn` (the change's transaction). The rejection's reason stays inside the
    /// company (CONTRACT §16).
    async fn enqueue(
        &self,
        conn: &impl sea_orm::ConnectionTrait,
        id: i64,
        status: &str,
        now: DateTime<Utc>,
    ) -> Result<(), DataError> {
        use crate::models::careers::user_profile::entity as profile;
        use crate::models::identities::user::entity as user;
        let (email, first_name): (String, String) = application::Entity::find_by_id(id)
            .select_only()
            .column(user::Column::Email)
            .column(user::Column::FirstName)
            .join(
                JoinType::InnerJoin,
                application::Relation::UserProfile.def(),
            )
            .join(JoinType::InnerJoin, profile::Relation::IdentitiesUser.def())
            .into_tuple()
            .one(conn)
            .await?
            .ok_or(DataError::Inconsistent)?;
        let (title, company_name): (String, String) = application::Entity::find_by_id(id)
            .select_only()
            .column(job::Column::Title)
            .column(company::Column::Name)
            .join(JoinType::InnerJoin, application::Relation::Job.def())
            .join(JoinType::InnerJoin, job::Relation::Company.def())
            .into_tuple()
            .one(conn)
            .await?
            .ok_or(DataError::Inconsistent)?;
        let (subject, text) = if status == "hired" {
            (
                format!("{company_name}: your application for {title}"),
                format!(
                    "Hello {first_name},\n\n{company_name} has decided to hire you for the \
                     position {title}. Congratulations! They will be in touch about the next \
                     steps.\n"
                ),
            )
        } else {
            (
                format!("{company_name}: your application for {title}"),
                format!(
                    "Hello {first_name},\n\nthank you for applying for {title} at \
                     {company_name}. After careful consideration they have decided not to \
                     move forward with your application.\n\nWe wish you every success in your \
                     search.\n"
                ),
            )
        };
        let mail = crate::mail::NewMail {
            recipient: email,
            subject,
            body: text,
            not_after: now + chrono::Duration::days(DECISION_MAIL_DAYS),
        };
        crate::mail::enqueue(conn, self.secrets, mail, now).await?;
        Ok(())
    }
}

/// The member who changes an application, and how the candidate hears of a decision.
pub struct Changer<'a> {
    pub company_id: i64,
    pub user_id: i64,
    pub notice: DecisionNotice<'a>,
}

/// The employer's change of an application of its company: judged on the stored application,
/// written only if its `lock_version` is still the one the form names (a conditional update: a
/// change that lost the race is 409 and writes nothing), with its events, its webhook events
/// and the candidate's message of a decision in the same transaction. A change that changes
/// nothing writes nothing and keeps the version. A stage move is three statements (the
/// application, the two stages' names, the update) plus its event and webhook rows.
pub async fn change_application(
    db: &Db,
    changer: &Changer<'_>,
    id: i64,
    form: ApplicationChangeForm,
    now: DateTime<Utc>,
) -> Result<EmployerApplicationItem<'static>, DataError> {
    use super::job_stage::entity as stage;
    let conflict = || DataError::Conflict("someone else changed this application first".into());
    static SQL: LazyLock<String> = LazyLock::new(|| applications_to(" AND a.id = $2", ""));
    let rows = db
        .fetch_rows(SQL.as_str(), &[changer.company_id, id])
        .await?;
    let mut item = rows
        .decode::<ApplicantRow>()?
        .first()
        .map(|row| row.item().into_owned())
        .ok_or(DataError::NotFound)?;
    let current = (
        item.application.status.to_string(),
        item.pipeline.careers_job_stage.map(|s| s.id),
        item.pipeline.rejection_reason.clone(),
    );
    if form.lock_version != Some(item.pipeline.lock_version) {
        return Err(conflict());
    }
    let mut errors = Errors::default();
    let mut stage_id = current.1;
    // The names of the stages left and entered, for the event.
    let mut stage_names: Option<(String, String)> = None;
    if let Some(wanted) = IdRef::id_of(&form.careers_job_stage)
        && Some(wanted) != current.1
    {
        let names: HashMap<i64, String> = stage::Entity::find()
            .filter(stage::Column::Id.is_in([Some(wanted), current.1].into_iter().flatten()))
            .filter(stage::Column::CareersJobId.eq(item.pipeline.careers_job.id))
            .select_only()
            .column(stage::Column::Id)
            .column(stage::Column::Name)
            .into_tuple::<(i64, String)>()
            .all(&**db)
            .await?
            .into_iter()
            .collect();
        match names.get(&wanted) {
            None => errors.add("careers_job_stage.id", "is not a stage of this job"),
            Some(_) if current.0 != STATUS_ACTIVE => errors.add(
                "careers_job_stage.id",
                "an application moves between stages only while active",
            ),
            Some(to) => {
                let from = current.1.and_then(|s| names.get(&s)).cloned();
                stage_names = Some((from.unwrap_or_default(), to.clone()));
                stage_id = Some(wanted);
            }
        }
    }
    let status = form.status.clone().unwrap_or_else(|| current.0.clone());
    if status != current.0 && !employer_may_change(&current.0, &status) {
        errors.add(
            "status",
            format!("an {} application cannot become {status}", current.0),
        );
    }
    // A reason only with `rejected`, and one is needed to become rejected; reopening clears it.
    let rejected = status == "rejected";
    if form.rejection_reason.is_some() && !rejected {
        errors.add("rejection_reason", "is given only with the status rejected");
    }
    if rejected && current.0 != "rejected" && form.rejection_reason.is_none() {
        errors.add("rejection_reason", "is required to reject");
    }
    let reason = if rejected {
        form.rejection_reason.clone().or(current.2.clone())
    } else {
        None
    };
    errors.finish()?;
    let status_changed = status != current.0;
    if !status_changed && stage_id == current.1 && reason == current.2 {
        return Ok(item);
    }
    let status_changed_at = if status_changed {
        now
    } else {
        item.application.status_changed_at
    };
    let txn = crate::db::write_transaction(db).await?;
    let changed = application::Entity::update_many()
        .col_expr(application::Column::Status, Expr::value(status.clone()))
        .col_expr(
            application::Column::CareersJobStageId,
            Expr::value(stage_id),
        )
        .col_expr(
            application::Column::RejectionReason,
            Expr::value(reason.clone()),
        )
        .col_expr(
            application::Column::StatusChangedAt,
            Expr::value(status_changed_at),
        )
        .col_expr(application::Column::UpdatedAt, Expr::value(now))
        .col_expr(
            application::Column::LockVersion,
            Expr::col(application::Column::LockVersion).add(1),
        )
        .filter(application::Column::Id.eq(id))
        .filter(application::Column::LockVersion.eq(item.pipeline.lock_version))
        .exec(&txn)
        .await
        .map_err(|e| {
            // The stage was destroyed since it was read: its job's edit came first.
            if foreign_key_violation(&e) {
                DataError::invalid("careers_job_stage.id", "is not a stage of this job")
            } else {
                e.into()
            }
        })?;
    if changed.rows_affected != 1 {
        return Err(conflict());
    }
    item.application.status = status.clone().into();
    item.application.status_changed_at = status_changed_at;
    item.application.updated_at = now;
    item.pipeline.rejection_reason = reason;
    item.pipeline.lock_version += 1;
    item.pipeline.careers_job_stage = stage_id.map(|id| IdOnly { id });
    let mut events = Vec::new();
    let mut hooks = Vec::new();
    if let Some((from, to)) = &stage_names {
        events.push(NewEvent::change(
            EventKind::StageChanged,
            changer.user_id,
            from,
            to,
        ));
        hooks.push(EventType::ApplicationStageChanged);
    }
    if status_changed {
        events.push(NewEvent::change(
            EventKind::StatusChanged,
            changer.user_id,
            &current.0,
            &status,
        ));
        hooks.push(EventType::ApplicationStatusChanged);
    }
    job_application_event::record(&txn, id, events, now).await?;
    for hook in hooks {
        webhooks::record(&txn, changer.company_id, hook, &item, now).await?;
    }
    if status_changed
        && matches!(status.as_str(), "rejected" | "hired")
        && form.notify_candidate != Some(false)
    {
        changer.notice.enqueue(&txn, id, &status, now).await?;
    }
    txn.commit().await?;
    Ok(item)
}

/// The candidate's withdrawal of their own application, from `active` only (a conditional
/// update: an employer's change that came first wins, and the withdrawal is then 422), with
/// its event and webhook event in the same transaction.
pub async fn withdraw(
    db: &DatabaseConnection,
    applicant: &UserBrief<'static>,
    own_profile_id: i64,
    id: i64,
    form: WithdrawalForm,
    now: DateTime<Utc>,
) -> Result<CandidateApplicationItem, DataError> {
    if form.status.as_deref() != Some("withdrawn") {
        return Err(DataError::invalid(
            "status",
            "a candidate may only withdraw",
        ));
    }
    let txn = crate::db::write_transaction(db).await?;
    let exists = application::Entity::find_by_id(id)
        .filter(application::Column::CareersUserProfileId.eq(own_profile_id))
        .one(&txn)
        .await?
        .ok_or(DataError::NotFound)?;
    let changed = application::Entity::update_many()
        .col_expr(application::Column::Status, Expr::value("withdrawn"))
        .col_expr(application::Column::StatusChangedAt, Expr::value(now))
        .col_expr(application::Column::UpdatedAt, Expr::value(now))
        .col_expr(
            application::Column::LockVersion,
            Expr::col(application::Column::LockVersion).add(1),
        )
        .filter(application::Column::Id.eq(exists.id))
        .filter(application::Column::Status.eq(STATUS_ACTIVE))
        .exec(&txn)
        .await?;
    if changed.rows_affected != 1 {
        return Err(DataError::invalid(
            "status",
            format!("a {} application cannot be withdrawn", exists.status),
        ));
    }
    let withdrawn = application::Model {
        status: "withdrawn".into(),
        status_changed_at: now,
        updated_at: now,
        lock_version: exists.lock_version + 1,
        ..exists
    };
    let event = NewEvent::change(
        EventKind::StatusChanged,
        applicant.id,
        STATUS_ACTIVE,
        "withdrawn",
    );
    job_application_event::record(&txn, id, vec![event], now).await?;
    let snapshot = EmployerApplicationItem::of(&withdrawn, applicant);
    webhooks::record(
        &txn,
        withdrawn.company_id,
        EventType::ApplicationStatusChanged,
        &snapshot,
        now,
    )
    .await?;
    let item = applications_of(own_profile_id)
        .filter(application::Column::Id.eq(id))
        .into_model::<CandidateRow>()
        .one(&txn)
        .await?
        .ok_or(DataError::Inconsistent)?;
    txn.commit().await?;
    Ok(item.into())
}

impl EmployerApplicationItem<'static> {
    /// The employer's list item of `application`, whose applicant is `applicant` (the webhook
    /// events' snapshot).
    pub fn of(application: &application::Model, applicant: &UserBrief<'static>) -> Self {
        Self {
            application: application.into(),
            pipeline: application.into(),
            career_user_profile: ApplicantBrief {
                id: application.careers_user_profile_id,
                identities_user: applicant.clone(),
            },
        }
    }
}

impl EmployerApplicationItem<'_> {
    /// The same item with its text owned.
    pub fn into_owned(self) -> EmployerApplicationItem<'static> {
        EmployerApplicationItem {
            application: self.application.into_owned(),
            pipeline: self.pipeline,
            career_user_profile: ApplicantBrief {
                id: self.career_user_profile.id,
                identities_user: self.career_user_profile.identities_user.into_owned(),
            },
        }
    }
}
