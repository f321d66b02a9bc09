//! What a query or a write of the data layer can fail with. It knows nothing of HTTP:
//! `error.rs` maps it to a status and the contract's error body at the boundary.

use sea_orm::DbErr;

#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A field of the input names a record that does not exist or may not be named
    /// (`field` is the nested form path, such as `company.id`).
    #[error("{field} {message}")]
    Invalid { field: String, message: String },
    /// The record the input would make breaks a rule between its fields (an open job without a
    /// place): the field errors, keyed by path.
    #[error("validation failed")]
    Fields(crate::forms::Invalid),
    /// The write would break a uniqueness rule: another record already holds the value.
    #[error("{0}")]
    Conflict(String),
    /// The caller's role may not do this to this record (an admin acting on an owner).
    #[error("{0}")]
    Refused(String),
    /// The record to read or change does not exist.
    #[error("not found")]
    NotFound,
    /// A record written or found a moment ago could not be read back, or holds what the
    /// service cannot read (a TOTP secret no configured key opens).
    #[error("a record vanished between two statements")]
    Inconsistent,
    /// The database failed or could not be reached.
    #[error(transparent)]
    Database(#[from] DbErr),
}

impl From<crate::forms::Invalid> for DataError {
    fn from(invalid: crate::forms::Invalid) -> Self {
        Self::Fields(invalid)
    }
}

impl DataError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// `error` as a [`Conflict`](Self::Conflict) saying `message` when it is a
    /// unique-constraint violation, else as the database failure it is.
    pub fn conflict_if_unique(error: DbErr, message: impl Into<String>) -> Self {
        if unique_violation(&error) {
            Self::Conflict(message.into())
        } else {
            Self::Database(error)
        }
    }
}

/// Whether `error` is a unique-constraint violation, on either backend.
pub fn unique_violation(error: &DbErr) -> bool {
    matches!(
        error.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}

/// Whether `error` is a foreign key's refusal (a row referred to is gone, or still referred to).
pub fn foreign_key_violation(error: &DbErr) -> bool {
    matches!(
        error.sql_err(),
        Some(sea_orm::SqlErr::ForeignKeyConstraintViolation(_))
    )
}
