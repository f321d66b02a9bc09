//! The admin's own second factor (CONTRACT §11): start an enrolment, confirm it (the recovery
//! codes are shown once), remove it. These routes take `AdminEnrolmentCtx`: an admin who must
//! enrol under `ADMIN_MFA=required` reaches them, and only them, of the team area.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{ADMIN, AdminEnrolmentCtx};
use crate::audit::{self, Action};
use crate::error::ApiError;
use crate::error::responses::{
    Conflict, FormErrors, NotFound, RateLimited, Unavailable, UnsafeAreaErrors,
};
use crate::extract::Json as Form;
use crate::mfa::{self, Factor};
use crate::models::identities::admin;
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

/// The recovery codes, shown this once: each logs in once instead of a TOTP code.
#[derive(Serialize, utoipa::ToSchema)]
struct RecoveryCodes {
    recovery_codes: Vec<String>,
}

fn wrong_code() -> ApiError {
    ApiError::field("code", "is not a valid code")
}

/// Starts (or restarts) an enrolment: a new secret, unconfirmed until a code of it comes back.
#[utoipa::path(
    post,
    path = "/team/identities/admins/totp",
    tag = "sessions",
    summary = "Start a TOTP enrolment: a new secret and its otpauth:// URI",
    responses(
        (status = 201, description = "The secret, unconfirmed", body = TotpEnrolment),
        UnsafeAreaErrors, Conflict, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn start_enrolment(
    ctx: AdminEnrolmentCtx,
    State(state): State<AppState>,
) -> Result<(StatusCode, Json<TotpEnrolment>), ApiError> {
    let secret = mfa::new_secret();
    let sealed = state.secrets.seal(ctx.admin.id, &secret);
    admin::start_totp(&state.db, ctx.admin.id, sealed).await?;
    let (secret, otpauth_uri) = mfa::enrolment(&secret, &ctx.admin.email);
    tracing::info!(admin_id = ctx.admin.id, "TOTP enrolment started");
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
        (status = 200, description = "Confirmed", body = RecoveryCodes),
        FormErrors, UnsafeAreaErrors, Conflict, RateLimited, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn confirm_enrolment(
    ctx: AdminEnrolmentCtx,
    State(state): State<AppState>,
    client: ClientAddr,
    Form(form): Form<TotpCodeForm>,
) -> Result<Json<RecoveryCodes>, ApiError> {
    form.validate()?;
    let code = form.code.ok_or(ApiError::Internal)?;
    if ctx.admin.totp_confirmed_at.is_some() {
        return Err(ApiError::Conflict(
            "a second factor is already confirmed".into(),
        ));
    }
    let Some(sealed) = ctx.admin.totp_secret.as_deref() else {
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
    let codes = mfa::new_recovery_codes();
    let hashes = codes.iter().map(|c| mfa::recovery_code_hash(c)).collect();
    admin::confirm_totp(&state.db, ctx.admin.id, step, hashes, state.now()).await?;
    tracing::warn!(admin_id = ctx.admin.id, "second factor confirmed");
    audit::record(
        Some(ctx.admin.id),
        Action::SecondFactorEnrolled,
        ctx.admin.id,
    );
    Ok(Json(RecoveryCodes {
        recovery_codes: codes,
    }))
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
    let code = code.trim();
    // Six digits are a TOTP code; anything else is tried as a recovery code.
    let is_totp = code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit());
    let (otp, recovery) = if is_totp {
        (Some(code), None)
    } else {
        (None, Some(code))
    };
    // A guess counts like a failed login, and a TOTP code on the admin's cap (CONTRACT §8).
    let guess = CodeGuess::start(
        &state,
        &ADMIN,
        (ctx.admin.id, &normalize_email(&ctx.admin.email)),
        &client,
        is_totp && ctx.admin.totp_confirmed_at.is_some(),
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
        guess.right(&state).await?;
    }
    match factor {
        Factor::Verified => {
            admin::remove_totp(&state.db, ctx.admin.id).await?;
            tracing::warn!(admin_id = ctx.admin.id, "second factor removed");
            audit::record(
                Some(ctx.admin.id),
                Action::SecondFactorRemoved,
                ctx.admin.id,
            );
            Ok(StatusCode::NO_CONTENT)
        }
        Factor::NotRequired => Err(ApiError::NotFound),
        Factor::Missing | Factor::Wrong => Err(wrong_code()),
    }
}
