//! Login, refresh and logout (specification §4.1), one implementation for both contexts.
//!
//! `POST {base}` creates a session, `PATCH {base}/current` renews it, `DELETE {base}/current`
//! destroys it; "current" is resolved from the context's own cookies.

use std::future::Future;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{patch, post};
use serde::Serialize;
use serde_json::{Map, Value, json};
use sessions::{IssuedAccess, SessionContext};

use super::{ADMIN, USER};
use crate::app::AppState;
use crate::db;
use crate::error::ApiError;
use crate::extract::Json;
use crate::forms::identities::LoginForm;
use crate::views::identities::{AdminView, UserView};
use crate::views::rfc3339;

/// An identity type that can log in: where its sessions live and how it is found.
pub trait Principal: Send + Sync + 'static {
    const CONTEXT: SessionContext;
    /// Path of the session resource.
    const PATH: &'static str;
    /// Key of the identity in the login body.
    const BODY_KEY: &'static str;
    type View: Serialize + Send;

    /// (id, password digest, view) of the account with this e-mail.
    fn find_by_email(
        state: &AppState,
        email: &str,
    ) -> impl Future<Output = Result<Option<(i64, String, Self::View)>, ApiError>> + Send;
}

pub struct UserPrincipal;

impl Principal for UserPrincipal {
    const CONTEXT: SessionContext = USER;
    const PATH: &'static str = "/identities/sessions";
    const BODY_KEY: &'static str = "identities_user";
    type View = UserView;

    async fn find_by_email(
        state: &AppState,
        email: &str,
    ) -> Result<Option<(i64, String, UserView)>, ApiError> {
        Ok(db::identities::find_user_by_email(&state.db, email)
            .await?
            .map(|u| (u.id, u.password_digest.clone(), UserView::from(&u))))
    }
}

pub struct AdminPrincipal;

impl Principal for AdminPrincipal {
    const CONTEXT: SessionContext = ADMIN;
    const PATH: &'static str = "/team/identities/admins/sessions";
    const BODY_KEY: &'static str = "identities_admin";
    type View = AdminView;

    async fn find_by_email(
        state: &AppState,
        email: &str,
    ) -> Result<Option<(i64, String, AdminView)>, ApiError> {
        Ok(db::identities::find_admin_by_email(&state.db, email)
            .await?
            .map(|a| (a.id, a.password_digest.clone(), AdminView::from(&a))))
    }
}

pub fn routes<P: Principal>() -> Router<AppState> {
    Router::new().route(P::PATH, post(login::<P>)).route(
        &format!("{}/current", P::PATH),
        patch(refresh::<P>).delete(logout::<P>),
    )
}

async fn login<P: Principal>(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(form): Json<LoginForm>,
) -> Result<Response, ApiError> {
    form.validate()?;
    let (Some(email), Some(password)) = (form.email, form.password) else {
        return Err(ApiError::Internal);
    };
    let account = P::find_by_email(&state, &email).await?;
    let (id, digest, view) = match account {
        Some((id, digest, view)) => (Some(id), Some(digest), Some(view)),
        None => (None, None, None),
    };
    // Unknown e-mails verify against a dummy hash: same answer, same cost.
    let verified = state.passwords.verify(password, digest).await?;
    let (true, Some(id), Some(view)) = (verified, id, view) else {
        tracing::warn!(context = P::CONTEXT.name, identity_id = ?id, "login failed");
        return Err(ApiError::InvalidCredentials);
    };
    let issued = state.sessions.open(&P::CONTEXT, id).await?;
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
    let mut response = (status, axum::Json(Value::Object(body))).into_response();
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
