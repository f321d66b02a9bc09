//! `Careers::JobApplication`: a candidate's application to a job, as the candidate and the
//! job's employer see it.

pub mod entity;

use std::borrow::Cow;
use std::sync::LazyLock;

use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, FromQueryResult, JoinType,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, RelationTrait, Select, Set,
    TransactionTrait,
};
use serde::{Deserialize, Serialize};

use self::entity as application;
use super::experience::{self, ExperienceItem};
use super::job::{JobBrief, entity as job};
use super::user_profile::{ProfileChildren, children_of};
use crate::db::{Columns, DataError, Db, FromRow, HotRow, Rows, page_of, unique_violation};
use crate::error::ApiError;
use crate::forms::{Errors, IdRef};
use crate::models::identities::user::UserBrief;
use crate::models::org::company::{CompanyBrief, entity as company};
use crate::views::timestamp::Stamp;
use crate::views::{Meta, answer, envelope, json};

/// `Careers::JobApplication`'s own attributes. Its text is borrowed from the database's rows
/// where the employer's list writes them straight from its hot read, and owned everywhere
/// else (`'static`): see `db::ApplicantRows`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ApplicationAttrs<'a> {
    pub id: i64,
    pub status: Cow<'a, str>,
    pub cover_letter: Cow<'a, str>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Stamp<'a>,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Stamp<'a>,
}

impl From<&application::Model> for ApplicationAttrs<'static> {
    fn from(a: &application::Model) -> Self {
        Self {
            id: a.id,
            status: a.status.clone().into(),
            cover_letter: a.cover_letter.clone().into(),
            created_at: a.created_at.into(),
            updated_at: a.updated_at.into(),
        }
    }
}

impl ApplicationAttrs<'_> {
    /// The same attributes with their text owned.
    pub fn into_owned(self) -> ApplicationAttrs<'static> {
        ApplicationAttrs {
            id: self.id,
            status: self.status.into_owned().into(),
            cover_letter: self.cover_letter.into_owned().into(),
            created_at: self.created_at.into_owned(),
            updated_at: self.updated_at.into_owned(),
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
    pub career_user_profile: ApplicantBrief<'a>,
}

impl EmployerApplicationItem<'_> {
    /// Writes the item's JSON: the bytes its `Serialize` writes, with the keys and
    /// punctuation as literals. Through serde, each of its eleven keys is a call that tests
    /// and copies the key, and each nested object its own serialiser: that came to three times
    /// the cost of these writes, about 2.6 µs of a page of 25 (docs/PERFORMANCE.md,
    /// session 14). The oracle test `the_page_is_written_as_serialize_writes_it` holds the
    /// two to the same bytes, new fields included.
    pub fn write_json(&self, out: &mut Vec<u8>) -> json::Result {
        let application = &self.application;
        let profile = &self.career_user_profile;
        let user = &profile.identities_user;
        out.extend_from_slice(b"{\"id\":");
        json::integer(out, application.id);
        out.extend_from_slice(b",\"status\":");
        json::string(out, &application.status);
        out.extend_from_slice(b",\"cover_letter\":");
        json::string(out, &application.cover_letter);
        out.extend_from_slice(b",\"created_at\":");
        crate::views::timestamp::write_json(out, &application.created_at)?;
        out.extend_from_slice(b",\"updated_at\":");
        crate::views::timestamp::write_json(out, &application.updated_at)?;
        out.extend_from_slice(b",\"career_user_profile\":{\"id\":");
        json::integer(out, profile.id);
        out.extend_from_slice(b",\"identities_user\":{\"id\":");
        json::integer(out, user.id);
        out.extend_from_slice(b",\"first_name\":");
        json::string(out, &user.first_name);
        out.extend_from_slice(b",\"last_name\":");
        json::string(out, &user.last_name);
        out.extend_from_slice(b"}}}");
        Ok(())
    }
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
    pub career_user_profile: ApplicantDetail,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CandidateApplicationItem {
    #[serde(flatten)]
    pub application: ApplicationAttrs<'static>,
    pub careers_job: JobBrief,
}

/// One of the caller's own applications to a marketplace job.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct OwnApplication {
    pub id: i64,
    pub status: String,
    #[serde(serialize_with = "crate::views::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
}

/// The employer's page of applications, borrowing its text from the rows it was read from.
/// Answered as [`Json`] answers it, its body written by [`Self::write_json`].
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct EmployerApplicationList<'a> {
    pub careers_job_applications: Vec<EmployerApplicationItem<'a>>,
    pub meta: Meta,
}

impl EmployerApplicationList<'_> {
    /// Writes the page's JSON: the bytes its `Serialize` writes (serde_json's), with the keys
    /// and punctuation as literals, each item by
    /// [`EmployerApplicationItem::write_json`].
    pub fn write_json(&self, out: &mut Vec<u8>) -> json::Result {
        out.extend_from_slice(b"{\"careers_job_applications\":[");
        for (i, item) in self.careers_job_applications.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write_json(out)?;
        }
        out.extend_from_slice(b"],\"meta\":");
        json::to_writer(out, &self.meta)?;
        out.push(b'}');
        Ok(())
    }
}

impl IntoResponse for EmployerApplicationList<'_> {
    fn into_response(self) -> Response {
        // About 260 bytes an item with a short cover letter; a longer page grows its buffer.
        let mut body = Vec::with_capacity(128 + 320 * self.careers_job_applications.len());
        let written = self.write_json(&mut body);
        answer(body, written)
    }
}

/// A page of 25 applications of the benchmark's shape (timestamps with nanoseconds), each with
/// `cover_letter`: for the JSON writer's tests and its micro-benchmark (`crates/bench`).
#[doc(hidden)]
pub fn sample_application_page(cover_letter: &str) -> EmployerApplicationList<'_> {
    let time = DateTime::from_timestamp(1_700_000_000, 456_789_012).unwrap_or_default();
    EmployerApplicationList {
        careers_job_applications: (1..=25)
            .map(|id| EmployerApplicationItem {
                application: ApplicationAttrs {
                    id,
                    status: "submitted".into(),
                    cover_letter: cover_letter.into(),
                    created_at: time.into(),
                    updated_at: time.into(),
                },
                career_user_profile: ApplicantBrief {
                    id: id + 100,
                    identities_user: UserBrief {
                        id: id + 200,
                        first_name: format!("Applicant{id}").into(),
                        last_name: "Bench".into(),
                    },
                },
            })
            .collect(),
        meta: Meta::new(1, 25, 25),
    }
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
    pub fn validate(&self) -> Result<(), ApiError> {
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

pub const STATUS_SUBMITTED: &str = "submitted";

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
    pub fn page(&self) -> Result<(Vec<EmployerApplicationItem<'_>>, u64), DataError> {
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
) -> Result<ApplicantRows, DataError> {
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
) -> Result<Option<EmployerApplicationDetail>, DataError> {
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

/// Creates an application and adds its experiences to the applicant's profile in one
/// transaction: a failure (already applied, say) leaves neither.
pub async fn apply(
    db: &DatabaseConnection,
    own_profile_id: i64,
    form: JobApplicationForm,
) -> Result<CandidateApplicationItem, DataError> {
    let applicant = form.careers_user_profile.ok_or(DataError::Inconsistent)?;
    if applicant.id != Some(own_profile_id) {
        return Err(DataError::invalid(
            "careers_user_profile.id",
            "must be your own talent profile",
        ));
    }
    let job_id = IdRef::id_of(&form.careers_job).ok_or(DataError::Inconsistent)?;
    let txn = db.begin().await?;
    let Some(job) = job::Entity::find_by_id(job_id)
        .one(&txn)
        .await?
        .filter(|j| j.published)
    else {
        return Err(DataError::invalid("careers_job.id", "does not exist"));
    };
    let now = Utc::now();
    for item in applicant.careers_experience.iter().flatten() {
        experience::active_model(item, None, own_profile_id, now)
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
            DataError::Conflict("you have already applied to this job".into())
        } else {
            e.into()
        }
    })?;
    let item = applications_of(own_profile_id)
        .filter(application::Column::Id.eq(created.id))
        .into_model::<CandidateRow>()
        .one(&txn)
        .await?
        .ok_or(DataError::Inconsistent)?;
    txn.commit().await?;
    Ok(item.into())
}

envelope!(EmployerApplicationOne {
    careers_job_applications: EmployerApplicationDetail
});

envelope!(CandidateApplicationList {
    careers_job_applications: Vec<CandidateApplicationItem>,
    meta
});

envelope!(CandidateApplicationOne {
    careers_job_applications: CandidateApplicationItem
});

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;
    use chrono::DateTime;
    use proptest::prelude::*;

    /// Any text, ids and timestamps.
    fn application_item() -> impl Strategy<Value = super::EmployerApplicationItem<'static>> {
        use super::{ApplicantBrief, ApplicationAttrs, EmployerApplicationItem, UserBrief};
        // Text of every kind: letters, any character, and what needs an escape.
        let text = || {
            prop_oneof![
                "[a-z ]{0,24}",
                ".{0,40}",
                "[a-z\"\\\\\\x00-\\x1f\u{7f}\u{e9}\u{2028}]{0,16}",
            ]
        };
        // From before year 0 to after 9999, leap seconds included: both of the timestamp
        // writer's paths.
        // Each as a time or, where it has one, as the text SQLite stores it in.
        let time = (
            -100_000_000_000i64..300_000_000_000,
            prop_oneof![0u32..1_000_000_000, 1_000_000_000u32..2_000_000_000],
            any::<bool>(),
        )
            .prop_filter_map("a valid time", |(seconds, nanos, stored)| {
                let time = DateTime::from_timestamp(seconds, nanos)?;
                let text = time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false);
                Some(
                    match crate::views::timestamp::Stamp::stored(text.as_bytes()) {
                        Some(stamp) if stored => stamp.into_owned(),
                        _ => time.into(),
                    },
                )
            });
        (
            (any::<i64>(), text(), text(), time.clone(), time),
            (any::<i64>(), any::<i64>(), text(), text()),
        )
            .prop_map(
                |(
                    (id, status, cover_letter, created_at, updated_at),
                    (profile, user, first, last),
                )| {
                    EmployerApplicationItem {
                        application: ApplicationAttrs {
                            id,
                            status: status.into(),
                            cover_letter: cover_letter.into(),
                            created_at,
                            updated_at,
                        },
                        career_user_profile: ApplicantBrief {
                            id: profile,
                            identities_user: UserBrief {
                                id: user,
                                first_name: first.into(),
                                last_name: last.into(),
                            },
                        },
                    }
                },
            )
    }

    proptest! {
        /// The page written by hand is what its `Serialize` writes through serde_json, byte
        /// for byte: a field added to the views and not to `write_json` fails this.
        #[test]
        fn the_page_is_written_as_serialize_writes_it(
            items in proptest::collection::vec(application_item(), 0..4),
            (page, per_page, total) in any::<(u64, u64, u64)>(),
        ) {
            let list = super::EmployerApplicationList {
                careers_job_applications: items,
                meta: crate::views::Meta::new(page, per_page, total),
            };
            let mut ours = Vec::new();
            list.write_json(&mut ours).unwrap();
            let serde = serde_json::to_vec(&list).unwrap();
            prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(serde).unwrap());
        }
    }

    /// The page's answer: the status, headers and body of `Json`'s, which writes it through
    /// its `Serialize`.
    #[tokio::test]
    async fn the_page_answers_as_json_does() {
        let cover_letter = "Dear \"team\",\n\u{1}\u{e9}";
        crate::views::tests::same_answer(
            super::sample_application_page(cover_letter).into_response(),
            crate::views::Json(super::sample_application_page(cover_letter)).into_response(),
        )
        .await;
    }
}
