//! The API areas of specification §5.5. Each area's extractor runs the area check on every
//! request and hands its handlers a typed context; no handler reads a cookie or a token.

pub mod health;
pub mod identities;
pub mod sessions;
pub mod team;

use ::sessions::{Authenticated, SessionContext};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::app::AppState;
use crate::db;
use crate::db::entities::identities::{admin, user};
use crate::error::ApiError;

/// The user context: candidate, employer and marketplace frontends.
pub const USER: SessionContext = SessionContext {
    name: "user",
    payload_key: "user_id",
    access_cookie: "jwt_access",
    csrf_cookie: "CSRF_TOKEN",
    namespace: "default",
};

/// The admin context: the team dashboard.
pub const ADMIN: SessionContext = SessionContext {
    name: "admin",
    payload_key: "admin_id",
    access_cookie: "team_jwt_access",
    csrf_cookie: "TEAM_CSRF_TOKEN",
    namespace: "team",
};

/// Authenticated user area: a valid `Identities::User` behind a `jwt_access` session.
pub struct UserCtx {
    pub user: user::Model,
    pub session: Authenticated,
}

impl FromRequestParts<AppState> for UserCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let session = state
            .sessions
            .authenticate(&USER, &parts.method, &parts.headers)
            .await?;
        // A session whose identity was deleted is over.
        let user = db::identities::find_user(&state.db, session.subject)
            .await?
            .ok_or(ApiError::SessionEnded)?;
        Ok(Self { user, session })
    }
}

/// Team (admin) area: a valid `Identities::Admin` behind a `team_jwt_access` session.
pub struct AdminCtx {
    pub admin: admin::Model,
    pub session: Authenticated,
}

impl FromRequestParts<AppState> for AdminCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let session = state
            .sessions
            .authenticate(&ADMIN, &parts.method, &parts.headers)
            .await?;
        let admin = db::identities::find_admin(&state.db, session.subject)
            .await?
            .ok_or(ApiError::SessionEnded)?;
        Ok(Self { admin, session })
    }
}
