use serde::Deserialize;

use super::{Errors, IdRef};
use crate::error::ApiError;

/// `POST /identities/users` (sign-up).
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct SignUpForm {
    #[garde(email, length(max = 254))]
    pub email: Option<String>,
    #[garde(length(chars, min = 12, max = 1024))]
    pub password: Option<String>,
    #[garde(length(chars, min = 1, max = 100))]
    pub first_name: Option<String>,
    #[garde(length(chars, min = 1, max = 100))]
    pub last_name: Option<String>,
    #[garde(length(chars, min = 1, max = 8))]
    pub phone_code: Option<String>,
    #[garde(length(chars, min = 1, max = 32))]
    pub mobile: Option<String>,
    #[garde(dive)]
    pub country: Option<IdRef>,
}

impl SignUpForm {
    pub fn validate(&self) -> Result<(), ApiError> {
        let mut errors = Errors::of(self);
        errors.require("email", self.email.is_some());
        errors.require("password", self.password.is_some());
        errors.require("first_name", self.first_name.is_some());
        errors.require("last_name", self.last_name.is_some());
        errors.require("phone_code", self.phone_code.is_some());
        errors.require("mobile", self.mobile.is_some());
        errors.require("country", self.country.is_some());
        errors.finish()
    }
}

/// `PATCH /identities/user/{id}`: only the fields present change.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct UserUpdateForm {
    #[garde(length(chars, min = 1, max = 100))]
    pub first_name: Option<String>,
    #[garde(length(chars, min = 1, max = 100))]
    pub last_name: Option<String>,
    #[garde(length(chars, min = 1, max = 8))]
    pub phone_code: Option<String>,
    #[garde(length(chars, min = 1, max = 32))]
    pub mobile: Option<String>,
    #[garde(dive)]
    pub country: Option<IdRef>,
}

impl UserUpdateForm {
    pub fn validate(&self) -> Result<(), ApiError> {
        Errors::of(self).finish()
    }
}

/// `POST /identities/sessions` and `POST /team/identities/admins/sessions`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct LoginForm {
    #[garde(length(min = 1, max = 254))]
    pub email: Option<String>,
    #[garde(length(min = 1, max = 1024))]
    pub password: Option<String>,
}

impl LoginForm {
    pub fn validate(&self) -> Result<(), ApiError> {
        let mut errors = Errors::of(self);
        errors.require("email", self.email.is_some());
        errors.require("password", self.password.is_some());
        errors.finish()
    }
}
