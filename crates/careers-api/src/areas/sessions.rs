//! Login, refresh and logout (specification §4.1), one implementation for both contexts.
//!
//! `POST {base}` creates a session, `PATCH {base}/current` renews it, `DELETE {base}/current`
//! destroys it; "current" is resolved from the context's own cookies.

use std::future::Future;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value, json};
use sessions::{IssuedAccess, SessionContext};

use super::{ADMIN, USER};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::{
    FormErrors, InvalidCredentials, RateLimited, SessionErrors, Unavailable,
};
use crate::extract::Json;
use crate::models::identities::admin::{self, AdminView};
use crate::models::identities::user::{self, UserView};
use crate::models::identities::{LoginForm, normalize_email};
use crate::password::Purpose;
use crate::state::AppState;
use crate::throttle::{ClientAddr, LoginThrottle};
use crate::views::rfc3339;

/// An identity type that can log in: where its sessions live and how it is found.
pub trait Principal: Send + Sync + 'static {
    const CONTEXT: SessionContext;
    /// Key of the identity in the login body.
    const BODY_KEY: &'static str;
    type View: Serialize + Send;

    /// (id, password digest, view) of the account with this e-mail.
    fn find_by_email(
        state: &AppState,
        email: &str,
    ) -> impl Future<Output = Result<Option<(i64, String, Self::View)>, ApiError>> + Send;

    /// Whether the identity still exists: a refresh for a deleted one ends there.
    fn exists(state: &AppState, id: i64) -> impl Future<Output = Result<bool, ApiError>> + Send;
}

pub struct UserPrincipal;

impl Principal for UserPrincipal {
    const CONTEXT: SessionContext = USER;
    const BODY_KEY: &'static str = "identities_user";
    type View = UserView;

    async fn find_by_email(
        state: &AppState,
        email: &str,
    ) -> Result<Option<(i64, String, UserView)>, ApiError> {
        Ok(user::find_user_by_email(&state.db, email)
            .await?
            .map(|u| (u.id, u.password_digest.clone(), UserView::from(&u))))
    }

    async fn exists(state: &AppState, id: i64) -> Result<bool, ApiError> {
        Ok(user::user_exists(&state.db, id).await?)
    }
}

pub struct AdminPrincipal;

impl Principal for AdminPrincipal {
    const CONTEXT: SessionContext = ADMIN;
    const BODY_KEY: &'static str = "identities_admin";
    type View = AdminView;

    async fn find_by_email(
        state: &AppState,
        email: &str,
    ) -> Result<Option<(i64, String, AdminView)>, ApiError> {
        Ok(admin::find_admin_by_email(&state.db, email)
            .await?
            .map(|a| (a.id, a.password_digest.clone(), AdminView::from(&a))))
    }

    async fn exists(state: &AppState, id: i64) -> Result<bool, ApiError> {
        Ok(admin::find_admin(&state.db, id).await?.is_some())
    }
}

async fn login<P: Principal>(
    State(state): State<AppState>,
    client: ClientAddr,
    headers: HeaderMap,
    Json(form): Json<LoginForm>,
) -> Result<Response, ApiError> {
    form.validate()?;
    let (Some(email), Some(password)) = (form.email, form.password) else {
        return Err(ApiError::Internal);
    };
    // A hashing slot first: a login refused for load (503) costs no database or store round
    // trip and counts nothing.
    let admission = state.passwords.admit(Purpose::Login).await?;
    let throttle = LoginThrottle::new(&P::CONTEXT, &normalize_email(&email), &client);
    throttle.attempt(&state, &P::CONTEXT).await?;
    let account = P::find_by_email(&state, &email).await?;
    let (id, digest, view) = match account {
        Some((id, digest, view)) => (Some(id), Some(digest), Some(view)),
        None => (None, None, None),
    };
    // Unknown e-mails verify against a dummy hash: same answer, same cost.
    let verified = admission.verify(password, digest).await?;
    let (true, Some(id), Some(view)) = (verified, id, view) else {
        tracing::warn!(context = P::CONTEXT.name, identity_id = id, "login failed");
        return Err(ApiError::InvalidCredentials);
    };
    // The refund and the new session are independent: one round trip's wait for both.
    let (refunded, issued) = tokio::join!(
        throttle.refund(&state),
        state.sessions.open(&P::CONTEXT, id, &headers)
    );
    refunded?;
    let issued = issued?;
    tracing::info!(
        context = P::CONTEXT.name,
        identity_id = id,
        "session created"
    );
    let mut body = access_body(&issued);
    body.insert(P::BODY_KEY.into(), json!(view));
    Ok(with_cookies::<P>(
        &state,
        &headers,
        &issued,
        StatusCode::CREATED,
        body,
    ))
}

async fn refresh<P: Principal>(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let issued = state.sessions.refresh(&P::CONTEXT, &headers).await?;
    if !P::exists(&state, issued.subject).await? {
        return Err(ApiError::SessionEnded);
    }
    Ok(with_cookies::<P>(
        &state,
        &headers,
        &issued,
        StatusCode::OK,
        access_body(&issued),
    ))
}

async fn logout<P: Principal>(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let subject = state.sessions.close(&P::CONTEXT, &headers).await?;
    tracing::info!(
        context = P::CONTEXT.name,
        identity_id = subject,
        "session destroyed"
    );
    let mut response = StatusCode::NO_CONTENT.into_response();
    for cookie in state.sessions.cookies().clear(&P::CONTEXT, host(&headers)) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

/// `csrf` equals the CSRF cookie: a frontend on another registrable domain cannot read the API
/// domain's cookie and takes it from here.
fn access_body(issued: &IssuedAccess) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("csrf".into(), json!(issued.csrf));
    body.insert(
        "access_expires_at".into(),
        json!(rfc3339(issued.access_expires_at)),
    );
    body.insert(
        "session_expires_at".into(),
        json!(rfc3339(issued.session_expires_at)),
    );
    body
}

fn with_cookies<P: Principal>(
    state: &AppState,
    headers: &HeaderMap,
    issued: &IssuedAccess,
    status: StatusCode,
    body: Map<String, Value>,
) -> Response {
    let mut response = (status, crate::views::Json(Value::Object(body))).into_response();
    let cookies = state.sessions.cookies().issue(
        &P::CONTEXT,
        host(headers),
        &issued.access_token,
        &issued.csrf,
        issued.session_expires_at,
    );
    for cookie in cookies {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

fn host(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::HOST)
        .and_then(|v: &HeaderValue| v.to_str().ok())
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(user_login))
        .routes(routes!(user_refresh, user_logout))
        .routes(routes!(admin_login))
        .routes(routes!(admin_refresh, admin_logout))
}

/// Login response of the user context.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct UserLogin {
    csrf: String,
    access_expires_at: String,
    session_expires_at: String,
    identities_user: UserView,
}

/// Login response of the admin context.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct AdminLogin {
    csrf: String,
    access_expires_at: String,
    session_expires_at: String,
    identities_admin: AdminView,
}

/// Refresh response of both contexts: `csrf` equals the new CSRF cookie.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct Refreshed {
    csrf: String,
    access_expires_at: String,
    session_expires_at: String,
}

macro_rules! session_handlers {
    ($principal:ty, $path:literal, $tag:literal, $login_body:ty, $security:literal,
     $login:ident, $refresh:ident, $logout:ident) => {
        #[utoipa::path(
            post,
            path = $path,
            tag = $tag,
            summary = "Log in: create a session and set the access and CSRF cookies",
            request_body = LoginForm,
            responses(
                (status = 201, description = "Session created; cookies set", body = $login_body),
                FormErrors, InvalidCredentials, RateLimited, Unavailable
            )
        )]
        async fn $login(
            state: State<AppState>,
            client: ClientAddr,
            headers: HeaderMap,
            form: Json<LoginForm>,
        ) -> Result<Response, ApiError> {
            login::<$principal>(state, client, headers, form).await
        }

        #[utoipa::path(
            patch,
            path = concat!($path, "/current"),
            tag = $tag,
            summary = "Refresh: same session, new access token and CSRF token",
            responses(
                (status = 200, description = "Cookies replaced", body = Refreshed),
                SessionErrors, Unavailable
            ),
            security(($security = [], "csrf_token" = []))
        )]
        async fn $refresh(state: State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
            refresh::<$principal>(state, headers).await
        }

        #[utoipa::path(
            delete,
            path = concat!($path, "/current"),
            tag = $tag,
            summary = "Log out: destroy the session and delete both cookies",
            responses(
                (status = 204, description = "Session destroyed; cookies deleted"),
                SessionErrors, Unavailable
            ),
            security(($security = [], "csrf_token" = []))
        )]
        async fn $logout(state: State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
            logout::<$principal>(state, headers).await
        }
    };
}

session_handlers!(
    UserPrincipal,
    "/identities/sessions",
    "sessions",
    UserLogin,
    "user_session",
    user_login,
    user_refresh,
    user_logout
);
session_handlers!(
    AdminPrincipal,
    "/team/identities/admins/sessions",
    "sessions",
    AdminLogin,
    "admin_session",
    admin_login,
    admin_refresh,
    admin_logout
);
