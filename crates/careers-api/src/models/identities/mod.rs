//! `Identities::*`: users (candidates, employers) and admins, two separate account stores.

pub mod admin;
pub mod email_verification;
pub mod notices;
pub mod one_time_token;
pub mod password_reset;
pub mod session;
pub mod user;

use serde::Deserialize;

use crate::db::DataError;

use crate::forms::{Errors, Invalid};

/// E-mail as stored and compared: trimmed and lower-cased.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

const EMAIL_TAKEN: &str = "e-mail is already taken";

/// The answer to an e-mail that another account of the same kind already has.
pub fn email_taken() -> DataError {
    DataError::Conflict(EMAIL_TAKEN.into())
}

fn email_taken_or(error: sea_orm::DbErr) -> DataError {
    DataError::conflict_if_unique(error, EMAIL_TAKEN)
}

/// `POST /identities/sessions` and `POST /team/identities/admins/sessions`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct LoginForm {
    #[garde(length(min = 1, max = 254))]
    pub email: Option<String>,
    #[garde(length(min = 1, max = 1024))]
    pub password: Option<String>,
    /// Admins with a second factor: the authenticator's 6-digit code.
    #[garde(length(min = 1, max = 16))]
    pub otp: Option<String>,
    /// Admins with a second factor: one of the recovery codes, instead of `otp`.
    #[garde(length(min = 1, max = 64))]
    pub recovery_code: Option<String>,
}

impl LoginForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("email", self.email.is_some());
        errors.require("password", self.password.is_some());
        errors.finish()
    }
}

/// `PATCH /identities/password` and `PATCH /team/identities/admins/password`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct PasswordChangeForm {
    #[garde(length(min = 1, max = 1024))]
    pub current_password: Option<String>,
    /// The new password: at least 12 characters, and not too easy to guess (zxcvbn score 3 or
    /// more).
    #[garde(length(chars, min = 12, max = 1024))]
    pub password: Option<String>,
}

impl PasswordChangeForm {
    /// `user_inputs`: the account's own words (its e-mail), which zxcvbn counts against it.
    pub fn validate(&self, user_inputs: &[&str]) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("current_password", self.current_password.is_some());
        errors.require("password", self.password.is_some());
        errors.strong_password("password", self.password.as_deref(), user_inputs);
        errors.finish()
    }
}

/// `PATCH` and `DELETE /team/identities/admins/totp`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct TotpCodeForm {
    /// The authenticator's 6-digit code (removal also takes a recovery code).
    #[garde(length(min = 1, max = 64))]
    pub code: Option<String>,
}

impl TotpCodeForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("code", self.code.is_some());
        errors.finish()
    }
}
