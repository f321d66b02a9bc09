use serde::Deserialize;

use super::{Errors, IdRef, date};
use crate::error::ApiError;

/// `POST /identities/careers/user_profiles`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct TalentProfileCreateForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub headline: Option<String>,
}

impl TalentProfileCreateForm {
    pub fn validate(&self) -> Result<(), ApiError> {
        let mut errors = Errors::of(self);
        errors.require("headline", self.headline.is_some());
        errors.finish()
    }
}

#[derive(Debug, Clone, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct CertificateItem {
    #[garde(skip)]
    pub id: Option<i64>,
    #[serde(rename = "_destroy")]
    #[garde(skip)]
    pub destroy: Option<bool>,
    #[garde(length(chars, min = 1, max = 200))]
    pub name: Option<String>,
    #[garde(length(chars, max = 200))]
    pub issuer: Option<String>,
    #[garde(custom(date))]
    pub issued_on: Option<String>,
}

#[derive(Debug, Clone, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct ExperienceItem {
    #[garde(skip)]
    pub id: Option<i64>,
    #[serde(rename = "_destroy")]
    #[garde(skip)]
    pub destroy: Option<bool>,
    #[garde(length(chars, min = 1, max = 200))]
    pub job_title: Option<String>,
    #[garde(length(chars, max = 200))]
    pub company_name: Option<String>,
    #[garde(custom(date))]
    pub started_on: Option<String>,
    #[garde(custom(date))]
    pub ended_on: Option<String>,
    #[garde(length(chars, max = 5_000))]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct SkillItem {
    #[garde(skip)]
    pub id: Option<i64>,
    #[serde(rename = "_destroy")]
    #[garde(skip)]
    pub destroy: Option<bool>,
    #[garde(length(chars, min = 1, max = 100))]
    pub name: Option<String>,
}

/// A nested item: with `id` it updates (or, with `_destroy`, removes) an existing child;
/// without, it creates one, which needs its one required field.
pub trait NestedItem {
    fn id(&self) -> Option<i64>;
    fn destroy(&self) -> bool;
    /// The required field of a new item, and whether it is present.
    fn required_field(&self) -> (&'static str, bool);
}

impl NestedItem for CertificateItem {
    fn id(&self) -> Option<i64> {
        self.id
    }
    fn destroy(&self) -> bool {
        self.destroy.unwrap_or(false)
    }
    fn required_field(&self) -> (&'static str, bool) {
        ("name", self.name.is_some())
    }
}

impl NestedItem for ExperienceItem {
    fn id(&self) -> Option<i64> {
        self.id
    }
    fn destroy(&self) -> bool {
        self.destroy.unwrap_or(false)
    }
    fn required_field(&self) -> (&'static str, bool) {
        ("job_title", self.job_title.is_some())
    }
}

impl NestedItem for SkillItem {
    fn id(&self) -> Option<i64> {
        self.id
    }
    fn destroy(&self) -> bool {
        self.destroy.unwrap_or(false)
    }
    fn required_field(&self) -> (&'static str, bool) {
        ("name", self.name.is_some())
    }
}

/// `PATCH /talent/careers/user_profile`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct TalentProfileForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub headline: Option<String>,
    #[garde(dive, length(max = 100))]
    pub certificates: Option<Vec<CertificateItem>>,
    #[garde(dive, length(max = 100))]
    pub experiences: Option<Vec<ExperienceItem>>,
    #[garde(dive, length(max = 100))]
    pub skills: Option<Vec<SkillItem>>,
}

fn require_items<T: NestedItem>(errors: &mut Errors, key: &str, items: &Option<Vec<T>>) {
    for (index, item) in items.iter().flatten().enumerate() {
        if item.id().is_none() && !item.destroy() {
            let (field, present) = item.required_field();
            errors.require(&format!("{key}[{index}].{field}"), present);
        }
    }
}

impl TalentProfileForm {
    pub fn validate(&self) -> Result<(), ApiError> {
        let mut errors = Errors::of(self);
        require_items(&mut errors, "certificates", &self.certificates);
        require_items(&mut errors, "experiences", &self.experiences);
        require_items(&mut errors, "skills", &self.skills);
        errors.finish()
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
