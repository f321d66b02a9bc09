//! One error type for the whole API, rendered as the contract's JSON error body (CONTRACT §4).

use std::collections::BTreeMap;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sea_orm::DbErr;
use serde::Serialize;
use sessions::{SessionError, StoreError};

use crate::db::DataError;
use crate::forms::{FieldErrors, Invalid};

use axum::Json;

/// The body of every error response (CONTRACT §4).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// One of the contract's error codes (`invalid_token`, `validation_failed`...).
    pub code: String,
    /// A human-readable explanation; never internals.
    pub message: String,
    /// Only on `validation_failed`: messages keyed by the nested field path.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<std::collections::HashMap<String, Vec<String>>>)]
    pub fields: Option<FieldErrors>,
}

/// The error responses of the OpenAPI document, declared once and listed by the handlers'
/// `responses(...)` next to their success (`responses((status = 200, ...), AreaErrors,
/// Unavailable)`). Each set owns distinct status codes: utoipa merges the sets into one map by
/// status, so two sets naming the same status would silently keep only the last.
pub mod responses {
    use utoipa::IntoResponses;

    use super::ErrorBody;

    /// A request that cannot be read: bad path or query parameter, or bad JSON.
    #[derive(IntoResponses)]
    #[response(
        status = 400,
        description = "`malformed_request`: bad JSON, wrong JSON type, bad path or query parameter"
    )]
    pub struct MalformedRequest(pub ErrorBody);

    /// A JSON body: it can be malformed, too large, of the wrong type or fail validation.
    #[derive(IntoResponses)]
    pub enum FormErrors {
        #[response(
            status = 400,
            description = "`malformed_request`: bad JSON, wrong JSON type, bad path or query parameter"
        )]
        Malformed(ErrorBody),
        #[response(status = 413, description = "`payload_too_large`: body over 64 KiB")]
        TooLarge(ErrorBody),
        #[response(
            status = 415,
            description = "`unsupported_media_type`: body is not application/json"
        )]
        UnsupportedMediaType(ErrorBody),
        #[response(
            status = 422,
            description = "`validation_failed`, with `fields` keyed by nested path"
        )]
        Validation(ErrorBody),
    }

    /// A safe-method request to an authenticated area (user or admin context).
    #[derive(IntoResponses)]
    pub enum AreaErrors {
        #[response(
            status = 401,
            description = "`unauthenticated`, `invalid_token`, `access_expired` or `session_ended`"
        )]
        Unauthenticated(ErrorBody),
        #[response(
            status = 403,
            description = "`forbidden` (area check or role), `email_unverified`, `company_suspended`; team area: `mfa_enrollment_required`"
        )]
        Forbidden(ErrorBody),
    }

    /// An unsafe-method request to an authenticated area: [`AreaErrors`] plus the CSRF check.
    #[derive(IntoResponses)]
    pub enum UnsafeAreaErrors {
        #[response(
            status = 401,
            description = "`unauthenticated`, `invalid_token`, `access_expired` or `session_ended`"
        )]
        Unauthenticated(ErrorBody),
        #[response(
            status = 403,
            description = "`forbidden` (area check or role), `csrf_failed`, `email_unverified`, `company_suspended`; team area: `mfa_enrollment_required`"
        )]
        Forbidden(ErrorBody),
    }

    /// Refresh and logout: the session itself is checked (an expired access token is fine) and
    /// CSRF, but no area.
    #[derive(IntoResponses)]
    pub enum SessionErrors {
        #[response(
            status = 401,
            description = "`unauthenticated`, `invalid_token` or `session_ended`"
        )]
        Unauthenticated(ErrorBody),
        #[response(status = 403, description = "`csrf_failed`")]
        CsrfFailed(ErrorBody),
    }

    /// Login with a wrong e-mail or password (or a wrong second factor).
    #[derive(IntoResponses)]
    #[response(
        status = 401,
        description = "`invalid_credentials`; admin login: `mfa_required` (the password was right, the admin has a second factor, and the body has no `otp` or `recovery_code`)"
    )]
    pub struct InvalidCredentials(pub ErrorBody);

    #[derive(IntoResponses)]
    #[response(
        status = 404,
        description = "`not_found`, or outside the caller's scope"
    )]
    pub struct NotFound(pub ErrorBody);

    #[derive(IntoResponses)]
    #[response(
        status = 409,
        description = "`conflict`: uniqueness clash, a record no longer in the state the request needs, the last owner, a cap"
    )]
    pub struct Conflict(pub ErrorBody);

    /// Login and sign-up throttles.
    #[derive(IntoResponses)]
    #[response(
        status = 429,
        description = "`rate_limited`: too many attempts, with Retry-After"
    )]
    pub struct RateLimited(pub ErrorBody);

    #[derive(IntoResponses)]
    #[response(
        status = 503,
        description = "`unavailable`: database or token store unreachable; on login and sign-up \
                       also hashing capacity exhausted, with Retry-After"
    )]
    pub struct Unavailable(pub ErrorBody);
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    MalformedRequest(String),
    #[error("authentication required")]
    Unauthenticated,
    #[error("invalid access token")]
    InvalidToken,
    #[error("access token expired: refresh the session")]
    AccessExpired,
    #[error("session has ended: log in again")]
    SessionEnded,
    #[error("e-mail or password is wrong")]
    InvalidCredentials,
    #[error("a one-time code (otp) or a recovery code is required")]
    MfaRequired,
    #[error("set up a second factor first (POST /team/identities/admins/totp)")]
    MfaEnrollmentRequired,
    #[error("CSRF check failed")]
    CsrfFailed,
    #[error("not allowed in this area")]
    Forbidden,
    /// The caller's role may not do this to this record (CONTRACT §14).
    #[error("{0}")]
    Refused(String),
    #[error("verify your e-mail address first")]
    EmailUnverified,
    #[error("your company is suspended")]
    CompanySuspended,
    #[error("not found")]
    NotFound,
    /// The fallback: no route has this path.
    #[error("no such route")]
    NoRoute,
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("{0}")]
    Conflict(String),
    #[error("request body is larger than 64 KiB")]
    PayloadTooLarge,
    #[error("request body must be application/json")]
    UnsupportedMediaType,
    #[error("validation failed")]
    Validation(FieldErrors),
    #[error("too many attempts: try again later")]
    RateLimited { retry_after_seconds: u64 },
    #[error("service temporarily unavailable")]
    Unavailable,
    /// Too many logins are waiting for a password hash: shed load quickly instead of queueing.
    #[error("too many logins at once: retry shortly")]
    Busy,
    #[error("internal error")]
    Internal,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::MalformedRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthenticated
            | Self::InvalidToken
            | Self::AccessExpired
            | Self::SessionEnded
            | Self::InvalidCredentials
            | Self::MfaRequired => StatusCode::UNAUTHORIZED,
            Self::CsrfFailed
            | Self::Forbidden
            | Self::Refused(_)
            | Self::EmailUnverified
            | Self::CompanySuspended
            | Self::MfaEnrollmentRequired => StatusCode::FORBIDDEN,
            Self::NotFound | Self::NoRoute => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable | Self::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            Self::MalformedRequest(_) => "malformed_request",
            Self::Unauthenticated => "unauthenticated",
            Self::InvalidToken => "invalid_token",
            Self::AccessExpired => "access_expired",
            Self::SessionEnded => "session_ended",
            Self::InvalidCredentials => "invalid_credentials",
            Self::MfaRequired => "mfa_required",
            Self::MfaEnrollmentRequired => "mfa_enrollment_required",
            Self::CsrfFailed => "csrf_failed",
            Self::Forbidden | Self::Refused(_) => "forbidden",
            Self::EmailUnverified => "email_unverified",
            Self::CompanySuspended => "company_suspended",
            Self::NotFound | Self::NoRoute => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Conflict(_) => "conflict",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Validation(_) => "validation_failed",
            Self::RateLimited { .. } => "rate_limited",
            Self::Unavailable | Self::Busy => "unavailable",
            Self::Internal => "internal",
        }
    }

    /// A validation error on one field.
    pub fn field(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Validation(BTreeMap::from([(path.into(), vec![message.into()])]))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code().into(),
                message: self.to_string(),
                fields: match &self {
                    Self::Validation(fields) => Some(fields.clone()),
                    _ => None,
                },
            },
        };
        let mut response = (self.status(), Json(body)).into_response();
        let retry_after = match self {
            Self::RateLimited {
                retry_after_seconds,
            } => Some(retry_after_seconds),
            Self::Busy => Some(1),
            _ => None,
        };
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

impl From<SessionError> for ApiError {
    fn from(error: SessionError) -> Self {
        match error {
            SessionError::Unauthenticated => Self::Unauthenticated,
            SessionError::InvalidToken => Self::InvalidToken,
            SessionError::AccessExpired => Self::AccessExpired,
            SessionError::SessionEnded => Self::SessionEnded,
            SessionError::CsrfFailed => Self::CsrfFailed,
            SessionError::Store(error) => error.into(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        ::metrics::counter!(crate::metrics::STORE_ERRORS).increment(1);
        tracing::error!(%error, "token store failure: failing closed");
        Self::Unavailable
    }
}

impl From<Invalid> for ApiError {
    fn from(Invalid(fields): Invalid) -> Self {
        Self::Validation(fields)
    }
}

impl From<DataError> for ApiError {
    fn from(error: DataError) -> Self {
        match error {
            DataError::Invalid { field, message } => Self::field(field, message),
            DataError::Conflict(message) => Self::Conflict(message),
            DataError::Refused(message) => Self::Refused(message),
            DataError::Fields(invalid) => invalid.into(),
            DataError::NotFound => Self::NotFound,
            DataError::Inconsistent => {
                tracing::error!(%error, "data layer");
                Self::Internal
            }
            DataError::Database(error) => error.into(),
        }
    }
}

impl From<DbErr> for ApiError {
    fn from(error: DbErr) -> Self {
        if let DbErr::RecordNotFound(_) = error {
            return Self::NotFound;
        }
        ::metrics::counter!(crate::metrics::DATABASE_ERRORS).increment(1);
        if is_connection_failure(&error) {
            tracing::error!(%error, "database unreachable: failing closed");
            Self::Unavailable
        } else {
            tracing::error!(%error, "database error");
            Self::Internal
        }
    }
}

/// Whether the database could not be reached, as opposed to a statement that failed: judged by
/// the driver's error kind, never by the message text.
fn is_connection_failure(error: &DbErr) -> bool {
    use sea_orm::RuntimeErr;
    use sea_orm::sqlx::Error as Sqlx;
    let runtime = match error {
        DbErr::ConnectionAcquire(_) => return true,
        DbErr::Conn(runtime) | DbErr::Exec(runtime) | DbErr::Query(runtime) => runtime,
        _ => return false,
    };
    match runtime {
        RuntimeErr::SqlxError(sqlx) => matches!(
            **sqlx,
            Sqlx::Io(_)
                | Sqlx::Tls(_)
                | Sqlx::Protocol(_)
                | Sqlx::PoolTimedOut
                | Sqlx::PoolClosed
                | Sqlx::WorkerCrashed
        ),
        _ => matches!(error, DbErr::Conn(_)),
    }
}
