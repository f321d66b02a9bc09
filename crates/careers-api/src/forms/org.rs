use serde::Deserialize;

use super::{Errors, IdRef};
use crate::error::ApiError;

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
    pub fn validate_create(&self) -> Result<(), ApiError> {
        let mut errors = Errors::of(self);
        errors.require("title", self.title.is_some());
        errors.require("identities_user", self.identities_user.is_some());
        errors.require("company", self.company.is_some());
        errors.finish()
    }

    pub fn validate_update(&self) -> Result<(), ApiError> {
        Errors::of(self).finish()
    }
}

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
    pub fn validate_create(&self) -> Result<(), ApiError> {
        let mut errors = Errors::of(self);
        errors.require("title", self.title.is_some());
        errors.require("company", self.company.is_some());
        errors.finish()
    }

    pub fn validate_update(&self) -> Result<(), ApiError> {
        Errors::of(self).finish()
    }
}
