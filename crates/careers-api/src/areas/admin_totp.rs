//! The admin's own second factor (CONTRACT §11): start an enrolment (or, with a code of the
//! factor in force, a replacement), confirm it (the recovery codes are shown once), remove it.
//! These routes take `AdminEnrolmentCtx`: an admin who must enrol under `ADMIN_MFA=required`
//! reaches them, and only them, of the team area.
//!
//! The factor belongs to the session: confirming raises this session to one that presented it
//! (new credentials, as at a refresh), and confirming or removing a factor ends every other
//! session of the admin.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use serde_json::json;
use sessions::{Authenticated, EndReason};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::sessions::{AdminPrincipal, access_body, with_cookies_for};
use super::{ADMIN, AdminEnrolmentCtx};
use crate::audit::{self, Action};
use crate::error::ApiError;
use crate::error::responses::{
    Conflict, FormErrors, NotFound, RateLimited, Unavailable, UnsafeAreaErrors,
};
use crate::extract::{Json as Form, RequestHost};
use crate::mfa::{self, Factor};
use crate::models::identities::admin;
use crate::models::identities::notices::{CredentialChange, Notice};
use crate::models::identities::{TotpCodeForm, normalize_email};
use crate::state::AppState;
use crate::throttle::{ClientAddr, CodeGuess};
use crate::views::Json;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(start_enrolment, confirm_enrolment, remove_factor))
}

/// A new, unconfirmed TOTP secret for the authenticator app.
#[derive(Serialize, utoipa::ToSchema)]
struct TotpEnrolment {
    /// The secret in base32, to type into an authenticator app.
    secret: String,
    /// `otpauth://totp/...`, to show as a QR code.
    otpauth_uri: String,
}

/// The recovery codes, shown this once: each logs in once instead of a TOTP code. The session
/// now counts as one that presented the factor, with new credentials: the cookies are replaced
/// and `csrf` is the new CSRF token, as after a refresh.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct RecoveryCodes {
    recovery_codes: Vec<String>,
    csrf: String,
    access_expires_at: String,
    session_expires_at: String,
}

fn wrong_code() -> ApiError {
    ApiError::field("code", "is not a valid code")
}

/// Starts (or restarts) an enrolment: a new secret, unconfirmed until a code of it comes back.
/// While a factor is confirmed, only with `{"code"}` of that factor (a TOTP or recovery code):
/// a replacement, the old factor holding until the new one is confirmed.
#[utoipa::path(
    post,
    path = "/team/identities/admins/totp",
    tag = "sessions",
    summary = "Start a TOTP enrolment (or, with a code of the factor in force, a replacement)",
    request_body(content = Option<TotpCodeForm>, description = "Only to replace a confirmed factor: one of its codes"),
    responses(
        (status = 201, description = "The secret, unconfirmed", body = TotpEnrolment),
        FormErrors, UnsafeAreaErrors, Conflict, RateLimited, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn start_enrolment(
    ctx: AdminEnrolmentCtx,
    State(state): State<AppState>,
    client: ClientAddr,
    form: Option<Form<TotpCodeForm>>,
) -> Result<(StatusCode, Json<TotpEnrolment>), ApiError> {
    let replacement = ctx.admin.totp_confirmed_at.is_some();
    if replacement {
        // Without a right code of the factor in force, as before replacements: 409.
        let code = form.and_then(|Form(form)| form.code);
        let verified = match code.filter(|code| !code.trim().is_empty()) {
            Some(code) => verify_factor(&state, &ctx, &client, &code).await?,
            None => false,
        };
        if !verified {
            tracing::warn!(
                admin_id = ctx.admin.id,
                "second-factor replacement refused: no right code"
            );
            return Err(ApiError::Conflict(
                "a second factor is confirmed: replacing it takes one of its codes".into(),
            ));
        }
    }
    let secret = mfa::new_secret();
    let sealed = state.secrets.seal(ctx.admin.id, &secret);
    admin::start_totp(&state.db, ctx.admin.id, sealed, replacement).await?;
    let (secret, otpauth_uri) = mfa::enrolment(&secret, &ctx.admin.email);
    tracing::info!(
        admin_id = ctx.admin.id,
        replacement,
        "TOTP enrolment started"
    );
    Ok((
        StatusCode::CREATED,
        Json(TotpEnrolment {
            secret,
            otpauth_uri,
        }),
    ))
}

/// Confirms the enrolment with a code of the new secret; answers the recovery codes, once.
#[utoipa::path(
    patch,
    path = "/team/identities/admins/totp",
    tag = "sessions",
    summary = "Confirm the TOTP enrolment with a code; returns 10 recovery codes, once",
    request_body = TotpCodeForm,
    responses(
        (status = 200, description = "Confirmed; the session's cookies are replaced", body = RecoveryCodes),
        FormErrors, UnsafeAreaErrors, Conflict, RateLimited, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn confirm_enrolment(
    ctx: AdminEnrolmentCtx,
    State(state): State<AppState>,
    client: ClientAddr,
    RequestHost(host): RequestHost,
    Form(form): Form<TotpCodeForm>,
) -> Result<Response, ApiError> {
    form.validate()?;
    let code = form.code.ok_or(ApiError::Internal)?;
    let Some(sealed) = ctx.admin.totp_pending_secret.as_deref() else {
        if ctx.admin.totp_confirmed_at.is_some() {
            return Err(ApiError::Conflict(
                "a second factor is already confirmed".into(),
            ));
        }
        return Err(ApiError::field("code", "start an enrolment first"));
    };
    let secret = state
        .secrets
        .open(ctx.admin.id, sealed)
        .map(|(secret, _)| secret)
        .ok_or(ApiError::Internal)?;
    let guess = CodeGuess::start(
        &state,
        &ADMIN,
        (ctx.admin.id, &normalize_email(&ctx.admin.email)),
        &client,
        true,
    )
    .await?;
    let step =
        mfa::matching_step(&secret, code.trim(), state.sessions.now()).ok_or_else(wrong_code)?;
    guess.right(&state).await?;
    let replaced = ctx.admin.totp_confirmed_at.is_some();
    let codes = mfa::new_recovery_codes();
    let hashes = codes.iter().map(|c| mfa::recovery_code_hash(c)).collect();
    let notice = Notice {
        secrets: &state.secrets,
        recipient: &ctx.admin.email,
    };
    let change = if replaced {
        CredentialChange::SecondFactorReplaced
    } else {
        CredentialChange::SecondFactorEnrolled
    };
    admin::confirm_totp(
        &state.db,
        ctx.admin.id,
        sealed,
        step,
        hashes,
        state.now(),
        Some((&notice, change)),
    )
    .await?;
    state.mail.wake();
    let ended = end_other_sessions(&state, &ctx.session).await?;
    // The privilege raise gets new credentials, which carry the factor.
    let issued = state.sessions.reissue(&ADMIN, &ctx.session, true).await?;
    tracing::warn!(
        admin_id = ctx.admin.id,
        replaced,
        ended,
        "second factor confirmed; other sessions ended"
    );
    audit::record(
        Some(ctx.admin.id),
        if replaced {
            Action::SecondFactorReplaced
        } else {
            Action::SecondFactorEnrolled
        },
        ctx.admin.id,
    );
    let mut body = access_body(&issued);
    body.insert("recovery_codes".into(), json!(codes));
    Ok(with_cookies_for::<AdminPrincipal>(
        &state,
        host.as_deref(),
        &issued,
        StatusCode::OK,
        body,
    ))
}

/// Ends every session of the admin but `session` (CONTRACT §11); how many.
async fn end_other_sessions(state: &AppState, session: &Authenticated) -> Result<usize, ApiError> {
    Ok(state
        .sessions
        .end_sessions(
            &ADMIN,
            session.subject,
            Some(&session.ruid),
            EndReason::SecondFactor,
        )
        .await?)
}

/// Checks a code of the admin's confirmed factor (callers check that there is one; six digits:
/// TOTP, else a recovery code), as
/// a guess: it counts like a failed login of (account, address) and, for TOTP, on the admin's
/// cap (CONTRACT §8), refunded when right. A right code is used up.
async fn verify_factor(
    state: &AppState,
    ctx: &AdminEnrolmentCtx,
    client: &ClientAddr,
    code: &str,
) -> Result<bool, ApiError> {
    let code = code.trim();
    let is_totp = code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit());
    let (otp, recovery) = if is_totp {
        (Some(code), None)
    } else {
        (None, Some(code))
    };
    let guess = CodeGuess::start(
        state,
        &ADMIN,
        (ctx.admin.id, &normalize_email(&ctx.admin.email)),
        client,
        is_totp,
    )
    .await?;
    let factor = admin::check_factor(
        &state.db,
        &state.secrets,
        &ctx.admin,
        otp,
        recovery,
        state.sessions.now(),
    )
    .await?;
    if !matches!(factor, Factor::Wrong | Factor::Missing) {
        guess.right(state).await?;
    }
    Ok(factor == Factor::Verified)
}

/// Removes the factor, with a current code or a recovery code; only under `ADMIN_MFA=optional`.
#[utoipa::path(
    delete,
    path = "/team/identities/admins/totp",
    tag = "sessions",
    summary = "Remove the second factor (ADMIN_MFA=optional only)",
    request_body = TotpCodeForm,
    responses(
        (status = 204, description = "Removed"),
        FormErrors, UnsafeAreaErrors, NotFound, RateLimited, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn remove_factor(
    ctx: AdminEnrolmentCtx,
    State(state): State<AppState>,
    client: ClientAddr,
    Form(form): Form<TotpCodeForm>,
) -> Result<StatusCode, ApiError> {
    if state.config.mfa.required {
        return Err(ApiError::Forbidden);
    }
    form.validate()?;
    let code = form.code.ok_or(ApiError::Internal)?;
    if ctx.admin.totp_confirmed_at.is_none() {
        return Err(ApiError::NotFound);
    }
    if !verify_factor(&state, &ctx, &client, &code).await? {
        return Err(wrong_code());
    }
    let notice = Notice {
        secrets: &state.secrets,
        recipient: &ctx.admin.email,
    };
    admin::remove_totp(&state.db, ctx.admin.id, &notice, state.now()).await?;
    state.mail.wake();
    let ended = end_other_sessions(&state, &ctx.session).await?;
    tracing::warn!(
        admin_id = ctx.admin.id,
        ended,
        "second factor removed; other sessions ended"
    );
    audit::record(
        Some(ctx.admin.id),
        Action::SecondFactorRemoved,
        ctx.admin.id,
    );
    Ok(StatusCode::NO_CONTENT)
}
