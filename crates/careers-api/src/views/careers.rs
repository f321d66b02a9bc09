use std::borrow::Cow;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use super::json;
use super::org::{CompanyBrief, UserBrief};
use super::timestamp::Stamp;
use crate::db::entities::careers::{certificate, experience, job_application, skill, user_profile};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CertificateView {
    pub id: i64,
    pub name: String,
    pub issuer: Option<String>,
    pub issued_on: Option<NaiveDate>,
}

impl From<&certificate::Model> for CertificateView {
    fn from(c: &certificate::Model) -> Self {
        Self {
            id: c.id,
            name: c.name.clone(),
            issuer: c.issuer.clone(),
            issued_on: c.issued_on,
        }
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ExperienceView {
    pub id: i64,
    pub job_title: String,
    pub company_name: Option<String>,
    pub started_on: Option<NaiveDate>,
    pub ended_on: Option<NaiveDate>,
    pub description: Option<String>,
}

impl From<&experience::Model> for ExperienceView {
    fn from(e: &experience::Model) -> Self {
        Self {
            id: e.id,
            job_title: e.job_title.clone(),
            company_name: e.company_name.clone(),
            started_on: e.started_on,
            ended_on: e.ended_on,
            description: e.description.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SkillView {
    pub id: i64,
    pub name: String,
}

impl From<&skill::Model> for SkillView {
    fn from(s: &skill::Model) -> Self {
        Self {
            id: s.id,
            name: s.name.clone(),
        }
    }
}

/// A talent profile's has-many children, loaded in one batched query each.
#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct ProfileChildren {
    pub certificates: Vec<CertificateView>,
    pub experiences: Vec<ExperienceView>,
    pub skills: Vec<SkillView>,
}

/// `Careers::UserProfile` (the talent profile) with its children.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TalentProfileView {
    pub id: i64,
    pub headline: String,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub updated_at: DateTime<Utc>,
    #[serde(flatten)]
    pub children: ProfileChildren,
}

impl TalentProfileView {
    pub fn new(profile: &user_profile::Model, children: ProfileChildren) -> Self {
        Self {
            id: profile.id,
            headline: profile.headline.clone(),
            created_at: profile.created_at,
            updated_at: profile.updated_at,
            children,
        }
    }
}

/// `Careers::JobApplication`'s own attributes. Its text is borrowed from the database's rows
/// where the employer's list writes them straight from its hot read, and owned everywhere
/// else (`'static`): see `db::careers::ApplicantRows`.
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

impl From<&job_application::Model> for ApplicationAttrs<'static> {
    fn from(a: &job_application::Model) -> Self {
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
        super::timestamp::write_json(out, &application.created_at)?;
        out.extend_from_slice(b",\"updated_at\":");
        super::timestamp::write_json(out, &application.updated_at)?;
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

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct JobBrief {
    pub id: i64,
    pub title: String,
    pub company: CompanyBrief,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CandidateApplicationItem {
    #[serde(flatten)]
    pub application: ApplicationAttrs<'static>,
    pub careers_job: JobBrief,
}

/// `Careers::Job` with its company.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct JobView {
    pub id: i64,
    pub title: String,
    pub description: String,
    pub published: bool,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub updated_at: DateTime<Utc>,
    pub company: CompanyBrief,
}

/// One of the caller's own applications to a marketplace job.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct OwnApplication {
    pub id: i64,
    pub status: String,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct MarketplaceJobView {
    #[serde(flatten)]
    pub job: JobView,
    pub careers_job_applications: Vec<OwnApplication>,
}
