//! Sessions of both contexts, one implementation for each: login, refresh and logout
//! (specification §4.1), the owner's view of their sessions and the password change
//! (CONTRACT §9, §10). The `sessions` crate does the work; this module mounts it.
//!
//! `POST {base}` creates a session, `PATCH {base}/current` renews it, `DELETE {base}/current`
//! destroys it; "current" is resolved from the context's own cookies. `GET {base}` lists the
//! identity's sessions, `GET {base}/current` shows this one, `DELETE {base}/{id}` ends one and
//! `DELETE {base}` every other.

use std::future::Future;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value, json};
use sessions::{Authenticated, EndReason, IssuedAccess, SessionContext, SessionId};

use super::{ADMIN, AdminCtx, USER, UserCtx};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::audit::{self, Action};
use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, FormErrors, InvalidCredentials, NotFound, RateLimited, SessionErrors, Unavailable,
    UnsafeAreaErrors,
};
use crate::extract::Json;
use crate::metrics;
use crate::mfa::Factor;
use crate::models::identities::admin::{self, AdminView};
use crate::models::identities::notices::{CredentialChange, Notice};
use crate::models::identities::password_reset;
use crate::models::identities::session::SessionView;
use crate::models::identities::user::{self, UserView};
use crate::models::identities::{LoginForm, PasswordChangeForm, normalize_email};
use crate::password::Purpose;
use crate::state::AppState;
use crate::throttle::{ClientAddr, LoginThrottle, OtpThrottle};
use crate::timestamp::rfc3339;
use crate::views::{SessionList, SessionOne};

/// What an authenticated request of a context knows about its caller.
pub trait SessionOwner {
    fn session(&self) -> &Authenticated;
    fn email(&self) -> &str;
}

impl SessionOwner for UserCtx {
    fn session(&self) -> &Authenticated {
        &self.session
    }

    fn email(&self) -> &str {
        &self.user.email
    }
}

impl SessionOwner for AdminCtx {
    fn session(&self) -> &Authenticated {
        &self.session
    }

    fn email(&self) -> &str {
        &self.admin.email
    }
}

/// An identity type that can log in: where its sessions live and how it is found.
pub trait Principal: Send + Sync + 'static {
    const CONTEXT: SessionContext;
    /// Key of the identity in the login body.
    const BODY_KEY: &'static str;
    type View: Serialize + Send;
    /// The extractor of the context's own area: it authenticates (CSRF on unsafe methods) and
    /// checks that the identity exists.
    type Ctx: FromRequestParts<AppState, Rejection = ApiError> + SessionOwner + Send;

    /// (id, password digest, view) of the account with this e-mail.
    fn find_by_email(
        state: &AppState,
        email: &str,
    ) -> impl Future<Output = Result<Option<(i64, String, Self::View)>, ApiError>> + Send;

    /// Whether the identity still exists: a refresh for a deleted one ends there.
    fn exists(state: &AppState, id: i64) -> impl Future<Output = Result<bool, ApiError>> + Send;

    /// Stores a changed password's digest and queues the identity's notice to `email`.
    fn set_password_digest(
        state: &AppState,
        id: i64,
        email: &str,
        digest: String,
    ) -> impl Future<Output = Result<(), ApiError>> + Send;

    /// The second factor of a login whose password verified (CONTRACT §11).
    fn second_factor(
        state: &AppState,
        id: i64,
        otp: Option<&str>,
        recovery_code: Option<&str>,
    ) -> impl Future<Output = Result<Factor, ApiError>> + Send;
}

pub struct UserPrincipal;

impl Principal for UserPrincipal {
    const CONTEXT: SessionContext = USER;
    const BODY_KEY: &'static str = "identities_user";
    type View = UserView;
    type Ctx = UserCtx;

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

    async fn set_password_digest(
        state: &AppState,
        id: i64,
        email: &str,
        digest: String,
    ) -> Result<(), ApiError> {
        let notice = Notice {
            secrets: &state.secrets,
            recipient: email,
        };
        // The user's outstanding reset tokens are void with the old password (CONTRACT §10).
        Ok(password_reset::set_password(&state.db, id, digest, &notice, state.now()).await?)
    }

    /// Users have no second factor.
    async fn second_factor(
        _: &AppState,
        _: i64,
        _: Option<&str>,
        _: Option<&str>,
    ) -> Result<Factor, ApiError> {
        Ok(Factor::NotRequired)
    }
}

pub struct AdminPrincipal;

impl Principal for AdminPrincipal {
    const CONTEXT: SessionContext = ADMIN;
    const BODY_KEY: &'static str = "identities_admin";
    type View = AdminView;
    type Ctx = AdminCtx;

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

    async fn set_password_digest(
        state: &AppState,
        id: i64,
        email: &str,
        digest: String,
    ) -> Result<(), ApiError> {
        let notice = Notice {
            secrets: &state.secrets,
            recipient: email,
        };
        Ok(admin::set_admin_password_digest(
            &state.db,
            id,
            digest,
            &notice,
            CredentialChange::PasswordChanged,
            state.now(),
        )
        .await?)
    }

    async fn second_factor(
        state: &AppState,
        id: i64,
        otp: Option<&str>,
        recovery_code: Option<&str>,
    ) -> Result<Factor, ApiError> {
        let Some(admin) = admin::find_admin(&state.db, id).await? else {
            return Ok(Factor::Wrong);
        };
        // A TOTP code against a confirmed factor counts on the admin's cap (CONTRACT §8).
        let capped = (otp.is_some() && admin.totp_confirmed_at.is_some())
            .then(|| OtpThrottle::new(&ADMIN, id));
        if let Some(throttle) = &capped {
            throttle.attempt(state).await?;
        }
        let factor = admin::check_factor(
            &state.db,
            &state.secrets,
            &admin,
            otp,
            recovery_code,
            state.sessions.now(),
        )
        .await?;
        if let Some(throttle) = &capped
            && !matches!(factor, Factor::Wrong)
        {
            throttle.refund(state).await?;
        }
        Ok(factor)
    }
}

/// Login, counted by outcome in `careers_logins_total`.
async fn login<P: Principal>(
    state: State<AppState>,
    client: ClientAddr,
    headers: HeaderMap,
    form: Json<LoginForm>,
) -> Result<Response, ApiError> {
    let result = attempt_login::<P>(state, client, headers, form).await;
    let outcome = match &result {
        Ok(_) => Some("success"),
        Err(ApiError::InvalidCredentials) => Some("invalid_credentials"),
        Err(ApiError::MfaRequired) => Some("mfa_required"),
        Err(ApiError::RateLimited { .. }) => Some("rate_limited"),
        Err(ApiError::Unavailable | ApiError::Busy) => Some("unavailable"),
        Err(_) => None,
    };
    if let Some(outcome) = outcome {
        metrics::login(P::CONTEXT.name, outcome);
    }
    result
}

async fn attempt_login<P: Principal>(
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
        sessions::identity_event!(warn, P::CONTEXT, id, "login failed");
        return Err(ApiError::InvalidCredentials);
    };
    let factor = P::second_factor(
        &state,
        id,
        form.otp.as_deref(),
        form.recovery_code.as_deref(),
    )
    .await?;
    match factor {
        Factor::NotRequired | Factor::Verified => {}
        Factor::Missing => {
            // The password was right: this attempt is no failure.
            throttle.refund(&state).await?;
            return Err(ApiError::MfaRequired);
        }
        Factor::Wrong => {
            sessions::identity_event!(warn, P::CONTEXT, id, "login failed: wrong second factor");
            return Err(ApiError::InvalidCredentials);
        }
    }
    // The refund and the new session are independent: one round trip's wait for both.
    let (refunded, issued) = tokio::join!(
        throttle.refund(&state),
        state.sessions.open(
            &P::CONTEXT,
            id,
            &headers,
            client.0,
            factor == Factor::Verified
        )
    );
    refunded?;
    let issued = issued?;
    sessions::identity_event!(info, P::CONTEXT, id, "session created");
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
    metrics::refresh(P::CONTEXT.name);
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
    sessions::identity_event!(info, P::CONTEXT, subject, "session destroyed");
    let mut response = StatusCode::NO_CONTENT.into_response();
    for cookie in state.sessions.cookies().clear(&P::CONTEXT, host(&headers)) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

/// The caller's live sessions, most recently used first.
async fn list_sessions<P: Principal>(
    state: &AppState,
    ctx: P::Ctx,
) -> Result<SessionList, ApiError> {
    let session = ctx.session();
    let sessions = state
        .sessions
        .sessions(&P::CONTEXT, session.subject, Some(session))
        .await?;
    Ok(SessionList {
        sessions: sessions.into_iter().map(SessionView::from).collect(),
    })
}

async fn current_session<P: Principal>(
    state: &AppState,
    ctx: P::Ctx,
) -> Result<SessionOne, ApiError> {
    let session = ctx.session();
    let current = state
        .sessions
        .sessions(&P::CONTEXT, session.subject, Some(session))
        .await?
        .into_iter()
        .find(|s| s.current)
        .ok_or(ApiError::SessionEnded)?;
    Ok(SessionOne {
        sessions: SessionView::from(current),
    })
}

/// Ends one of the caller's sessions by its public handle; ending the current one is a logout
/// (its cookies are deleted). Another identity's handle or an unknown one: 404.
async fn end_session<P: Principal>(
    state: &AppState,
    headers: &HeaderMap,
    ctx: P::Ctx,
    id: &str,
) -> Result<Response, ApiError> {
    let session = ctx.session();
    let id = SessionId::parse(id).ok_or(ApiError::NotFound)?;
    let ended = state
        .sessions
        .end_session(&P::CONTEXT, session.subject, &id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    if ended == session.ruid {
        sessions::identity_event!(info, P::CONTEXT, session.subject, "session destroyed");
        for cookie in state.sessions.cookies().clear(&P::CONTEXT, host(headers)) {
            response.headers_mut().append(header::SET_COOKIE, cookie);
        }
    } else {
        sessions::identity_event!(
            info,
            P::CONTEXT,
            session.subject,
            "session ended by its owner from another session"
        );
    }
    Ok(response)
}

/// Ends every session of the caller but the current one.
async fn end_other_sessions<P: Principal>(
    state: &AppState,
    ctx: P::Ctx,
) -> Result<StatusCode, ApiError> {
    let session = ctx.session();
    let ended = state
        .sessions
        .end_sessions(
            &P::CONTEXT,
            session.subject,
            Some(&session.ruid),
            EndReason::Revoked,
        )
        .await?;
    sessions::identity_event!(
        info,
        P::CONTEXT,
        session.subject,
        ended,
        "other sessions ended by their owner"
    );
    Ok(StatusCode::NO_CONTENT)
}

/// Password change (CONTRACT §10): the current password is verified through the login's
/// hashing line and throttle (a wrong one counts as a failed login), the new digest is stored,
/// every other session ends, and this one gets a new access token and CSRF, as a refresh.
async fn change_password<P: Principal>(
    state: &AppState,
    client: &ClientAddr,
    headers: &HeaderMap,
    ctx: P::Ctx,
    form: PasswordChangeForm,
) -> Result<Response, ApiError> {
    form.validate(&[ctx.email()])?;
    let (Some(current_password), Some(password)) = (form.current_password, form.password) else {
        return Err(ApiError::Internal);
    };
    let session = *ctx.session();
    let admission = state.passwords.admit(Purpose::Login).await?;
    let throttle = LoginThrottle::new(&P::CONTEXT, &normalize_email(ctx.email()), client);
    throttle.attempt(state, &P::CONTEXT).await?;
    let digest = P::find_by_email(state, ctx.email())
        .await?
        .map(|(_, digest, _)| digest)
        .ok_or(ApiError::SessionEnded)?;
    if !admission.verify(current_password, Some(digest)).await? {
        sessions::identity_event!(
            warn,
            P::CONTEXT,
            session.subject,
            "password change refused: wrong current password"
        );
        return Err(ApiError::field(
            "current_password",
            "is not the current password",
        ));
    }
    throttle.refund(state).await?;
    let digest = state.passwords.hash(password).await?;
    // Other sessions end before the new digest is stored and again after it: a login with the
    // old password racing the change cannot leave a session behind.
    let keep = Some(&session.ruid);
    state
        .sessions
        .end_sessions(&P::CONTEXT, session.subject, keep, EndReason::Password)
        .await?;
    P::set_password_digest(state, session.subject, ctx.email(), digest).await?;
    state.mail.wake();
    let ended = state
        .sessions
        .end_sessions(&P::CONTEXT, session.subject, keep, EndReason::Password)
        .await?;
    let issued = state
        .sessions
        .reissue(&P::CONTEXT, &session, session.second_factor)
        .await?;
    sessions::identity_event!(
        info,
        P::CONTEXT,
        session.subject,
        ended,
        "password changed; other sessions ended"
    );
    if P::CONTEXT == ADMIN {
        audit::record(
            Some(session.subject),
            Action::AdminPasswordChanged,
            session.subject,
        );
    }
    Ok(with_cookies::<P>(
        state,
        headers,
        &issued,
        StatusCode::OK,
        access_body(&issued),
    ))
}

/// `csrf` equals the CSRF cookie: a frontend on another registrable domain cannot read the API
/// domain's cookie and takes it from here.
pub(super) fn access_body(issued: &IssuedAccess) -> Map<String, Value> {
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
    with_cookies_for::<P>(state, host(headers), issued, status, body)
}

/// The response with the session cookies of `issued` for the request's `Host`.
pub(super) fn with_cookies_for<P: Principal>(
    state: &AppState,
    host: Option<&str>,
    issued: &IssuedAccess,
    status: StatusCode,
    body: Map<String, Value>,
) -> Response {
    let mut response = (status, crate::views::Json(Value::Object(body))).into_response();
    let cookies = state.sessions.cookies().issue(
        &P::CONTEXT,
        host,
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
        .routes(routes!(user_login, user_sessions, user_end_other_sessions))
        .routes(routes!(user_refresh, user_logout, user_current_session))
        .routes(routes!(user_end_session))
        .routes(routes!(user_change_password))
        .routes(routes!(
            admin_login,
            admin_sessions,
            admin_end_other_sessions
        ))
        .routes(routes!(admin_refresh, admin_logout, admin_current_session))
        .routes(routes!(admin_end_session))
        .routes(routes!(admin_change_password))
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

/// The session routes of one context: each handler is a thin call of the generic operation above
/// for `principal`, named by the argument of the same name (`login: user_login`), with its
/// OpenAPI entry.
macro_rules! session_handlers {
    (
        principal: $principal:ty,
        sessions_path: $path:literal,
        password_path: $password_path:literal,
        tag: $tag:literal,
        login_body: $login_body:ty,
        security: $security:literal,
        login: $login:ident,
        refresh: $refresh:ident,
        logout: $logout:ident,
        list: $list:ident,
        current: $current:ident,
        end: $end:ident,
        end_others: $end_others:ident,
        change_password: $change_password:ident $(,)?
    ) => {
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

        #[utoipa::path(
            get,
            path = $path,
            tag = $tag,
            summary = "List the caller's live sessions, most recently used first",
            responses(
                (status = 200, description = "The sessions", body = SessionList),
                AreaErrors, Unavailable
            ),
            security(($security = []))
        )]
        async fn $list(
            State(state): State<AppState>,
            ctx: <$principal as Principal>::Ctx,
        ) -> Result<crate::views::Json<SessionList>, ApiError> {
            list_sessions::<$principal>(&state, ctx).await.map(crate::views::Json)
        }

        #[utoipa::path(
            get,
            path = concat!($path, "/current"),
            tag = $tag,
            summary = "The session of this request",
            responses(
                (status = 200, description = "The session", body = SessionOne),
                AreaErrors, Unavailable
            ),
            security(($security = []))
        )]
        async fn $current(
            State(state): State<AppState>,
            ctx: <$principal as Principal>::Ctx,
        ) -> Result<crate::views::Json<SessionOne>, ApiError> {
            current_session::<$principal>(&state, ctx).await.map(crate::views::Json)
        }

        #[utoipa::path(
            delete,
            path = concat!($path, "/{id}"),
            tag = $tag,
            summary = "End one of the caller's sessions (the current one: log out)",
            params(("id" = String, Path, description = "The session's public `id`")),
            responses(
                (status = 204, description = "Session ended; for the current one, cookies deleted"),
                UnsafeAreaErrors, NotFound, Unavailable
            ),
            security(($security = [], "csrf_token" = []))
        )]
        async fn $end(
            State(state): State<AppState>,
            headers: HeaderMap,
            ctx: <$principal as Principal>::Ctx,
            Path(id): Path<String>,
        ) -> Result<Response, ApiError> {
            end_session::<$principal>(&state, &headers, ctx, &id).await
        }

        #[utoipa::path(
            delete,
            path = $path,
            tag = $tag,
            summary = "End every session of the caller but the current one",
            responses(
                (status = 204, description = "The other sessions ended"),
                UnsafeAreaErrors, Unavailable
            ),
            security(($security = [], "csrf_token" = []))
        )]
        async fn $end_others(
            State(state): State<AppState>,
            ctx: <$principal as Principal>::Ctx,
        ) -> Result<StatusCode, ApiError> {
            end_other_sessions::<$principal>(&state, ctx).await
        }

        #[utoipa::path(
            patch,
            path = $password_path,
            tag = $tag,
            summary = "Change the password: every other session ends, this one is refreshed",
            request_body = PasswordChangeForm,
            responses(
                (status = 200, description = "Password changed; cookies replaced", body = Refreshed),
                FormErrors, UnsafeAreaErrors, RateLimited, Unavailable
            ),
            security(($security = [], "csrf_token" = []))
        )]
        async fn $change_password(
            State(state): State<AppState>,
            client: ClientAddr,
            headers: HeaderMap,
            ctx: <$principal as Principal>::Ctx,
            Json(form): Json<PasswordChangeForm>,
        ) -> Result<Response, ApiError> {
            change_password::<$principal>(&state, &client, &headers, ctx, form).await
        }
    };
}

session_handlers! {
    principal: UserPrincipal,
    sessions_path: "/identities/sessions",
    password_path: "/identities/password",
    tag: "sessions",
    login_body: UserLogin,
    security: "user_session",
    login: user_login,
    refresh: user_refresh,
    logout: user_logout,
    list: user_sessions,
    current: user_current_session,
    end: user_end_session,
    end_others: user_end_other_sessions,
    change_password: user_change_password,
}
session_handlers! {
    principal: AdminPrincipal,
    sessions_path: "/team/identities/admins/sessions",
    password_path: "/team/identities/admins/password",
    tag: "sessions",
    login_body: AdminLogin,
    security: "admin_session",
    login: admin_login,
    refresh: admin_refresh,
    logout: admin_logout,
    list: admin_sessions,
    current: admin_current_session,
    end: admin_end_session,
    end_others: admin_end_other_sessions,
    change_password: admin_change_password,
}
