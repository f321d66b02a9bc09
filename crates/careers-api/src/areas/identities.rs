//! Authenticated user area (`/identities`), plus the public sign-up and password reset.

use axum::extract::State;
use axum::http::StatusCode;

use super::{USER, UserCtx};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, RateLimited, Unavailable,
    UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path};
use crate::forms::IdRef;
use crate::models::careers::user_profile::{self, TalentProfileCreateForm};
use crate::models::identities;
use crate::models::identities::email_verification::{
    self, EmailVerificationForm, VerificationMessage,
};
use crate::models::identities::notices::Notice;
use crate::models::identities::password_reset::{
    self, PasswordResetForm, PasswordResetRequestForm,
};
use crate::models::identities::user::{self, SignUpForm, UserUpdateForm, UserView};
use crate::password::Purpose;
use crate::state::AppState;
use crate::throttle::{self, ClientAddr};
use crate::views::Json;
use crate::views::{CareersUserProfileOne, EmailVerificationOne, IdentitiesUserOne};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sign_up))
        .routes(routes!(request_password_reset))
        .routes(routes!(reset_password))
        .routes(routes!(request_email_verification))
        .routes(routes!(show_email_verification, verify_email))
        .routes(routes!(show_user, update_user))
        .routes(routes!(create_talent_profile))
}

/// The answer to a password-reset request: an empty object, whatever the address.
#[derive(serde::Serialize, utoipa::ToSchema)]
struct ResetRequested {}

/// Asks for a password reset (public). The same 202 and the same work for every address: the
/// request is stored and the mail worker sends a message only to an existing account.
#[utoipa::path(
    post,
    path = "/identities/password_resets",
    tag = "identities",
    summary = "Ask for a password reset e-mail (public)",
    request_body = PasswordResetRequestForm,
    responses(
        (status = 202, description = "Accepted, whether or not an account has the address", body = ResetRequested),
        FormErrors, RateLimited, Unavailable
    )
)]
async fn request_password_reset(
    State(state): State<AppState>,
    client: ClientAddr,
    Form(form): Form<PasswordResetRequestForm>,
) -> Result<(StatusCode, Json<ResetRequested>), ApiError> {
    form.validate()?;
    let email = form.email.ok_or(ApiError::Internal)?;
    throttle::count_password_reset(&state, &identities::normalize_email(&email), &client).await?;
    password_reset::record_request(&state.db, &email, state.now()).await?;
    state.mail.wake();
    Ok((StatusCode::ACCEPTED, Json(ResetRequested {})))
}

/// Sets a new password with the token of a reset message (public); every session of the user
/// ends.
#[utoipa::path(
    patch,
    path = "/identities/password_resets/current",
    tag = "identities",
    summary = "Set a new password with a reset token (public)",
    request_body = PasswordResetForm,
    responses(
        (status = 204, description = "Password set; every session of the user ended"),
        FormErrors, Unavailable
    )
)]
async fn reset_password(
    State(state): State<AppState>,
    Form(form): Form<PasswordResetForm>,
) -> Result<StatusCode, ApiError> {
    form.validate()?;
    let (Some(token), Some(password)) = (form.token, form.password) else {
        return Err(ApiError::Internal);
    };
    let now = state.now();
    let Some((user_id, email)) = password_reset::user_of_token(&state.db, &token, now).await?
    else {
        tracing::warn!("password reset refused: unknown, used or expired token");
        return Err(password_reset::invalid_token().into());
    };
    // The account's e-mail counts against the new password too (zxcvbn's user inputs).
    if let Some(message) = crate::forms::password_weakness(&password, &[&email]) {
        return Err(ApiError::field("password", message));
    }
    let digest = state.passwords.hash(password).await?;
    // Sessions end before the password changes and again after, as at a password change: a
    // store fault before the change changes nothing.
    state
        .sessions
        .end_sessions(&USER, user_id, None, sessions::EndReason::Password)
        .await?;
    let notice = Notice {
        secrets: &state.secrets,
        recipient: &email,
    };
    if !password_reset::redeem(&state.db, &token, user_id, digest, &notice, now).await? {
        return Err(password_reset::invalid_token().into());
    }
    state.mail.wake();
    let ended = state
        .sessions
        .end_sessions(&USER, user_id, None, sessions::EndReason::Password)
        .await?;
    tracing::info!(
        user_id,
        ended,
        "password reset: password set, every session ended"
    );
    Ok(StatusCode::NO_CONTENT)
}

/// The state of the caller's e-mail: the address and when it was verified.
#[utoipa::path(
    get,
    path = "/identities/email_verifications/current",
    tag = "identities",
    summary = "Whether your e-mail address is verified",
    responses(
        (status = 200, description = "The address and when it was verified", body = EmailVerificationOne),
        AreaErrors, Unavailable
    ),
    security(("user_session" = []))
)]
async fn show_email_verification(
    ctx: UserCtx,
    State(state): State<AppState>,
) -> Result<Json<EmailVerificationOne>, ApiError> {
    let account = user::find_user(&state.db, ctx.user.id)
        .await?
        .ok_or(ApiError::SessionEnded)?;
    Ok(Json(EmailVerificationOne {
        email_verifications: (&account).into(),
    }))
}

/// Asks for a new verification message (at most 5 an hour); 409 once verified.
#[utoipa::path(
    post,
    path = "/identities/email_verifications",
    tag = "identities",
    summary = "Send the e-mail verification message again",
    responses(
        (status = 202, description = "A new message is queued", body = ResetRequested),
        UnsafeAreaErrors, Conflict, RateLimited, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn request_email_verification(
    ctx: UserCtx,
    State(state): State<AppState>,
) -> Result<(StatusCode, Json<ResetRequested>), ApiError> {
    let account = user::find_user(&state.db, ctx.user.id)
        .await?
        .ok_or(ApiError::SessionEnded)?;
    throttle::count_verification_request(&state, account.id).await?;
    let message = VerificationMessage {
        url_template: state.mail.verification_url(),
        secrets: &state.secrets,
    };
    email_verification::request(&state.db, &message, &account, state.now()).await?;
    state.mail.wake();
    tracing::info!(user_id = account.id, "e-mail verification requested");
    Ok((StatusCode::ACCEPTED, Json(ResetRequested {})))
}

/// Verifies the e-mail of a verification message's token (public: the link may be opened in
/// another browser than the one signed in).
#[utoipa::path(
    patch,
    path = "/identities/email_verifications/current",
    tag = "identities",
    summary = "Verify an e-mail address with the token of its message (public)",
    request_body = EmailVerificationForm,
    responses(
        (status = 204, description = "The token's user is verified"),
        FormErrors, Unavailable
    )
)]
async fn verify_email(
    State(state): State<AppState>,
    Form(form): Form<EmailVerificationForm>,
) -> Result<StatusCode, ApiError> {
    form.validate()?;
    let token = form.token.ok_or(ApiError::Internal)?;
    let Some(user_id) = email_verification::verify(&state.db, &token, state.now()).await? else {
        tracing::warn!("e-mail verification refused: unknown, used or expired token");
        return Err(email_verification::invalid_token().into());
    };
    tracing::info!(user_id, "e-mail verified");
    Ok(StatusCode::NO_CONTENT)
}

/// Public sign-up. It does not log in: the client then creates a session.
#[utoipa::path(
    post,
    path = "/identities/users",
    tag = "identities",
    summary = "Sign up (public)",
    request_body = SignUpForm,
    responses(
        (status = 201, description = "The new user", body = IdentitiesUserOne),
        FormErrors, Conflict, RateLimited, Unavailable
    )
)]
async fn sign_up(
    State(state): State<AppState>,
    client: ClientAddr,
    Form(form): Form<SignUpForm>,
) -> Result<(StatusCode, Json<IdentitiesUserOne>), ApiError> {
    form.validate()?;
    throttle::count_signup(&state, &client).await?;
    let (Some(email), Some(password), Some(first_name), Some(last_name)) =
        (form.email, form.password, form.first_name, form.last_name)
    else {
        return Err(ApiError::Internal);
    };
    let country_id = IdRef::id_of(&form.country).ok_or(ApiError::Internal)?;
    // The e-mail before the hash: a taken one costs no hashing. The unique index still decides
    // a race between two sign-ups.
    if user::find_user_by_email(&state.db, &email).await?.is_some() {
        return Err(identities::email_taken().into());
    }
    let password_digest = state
        .passwords
        .admit(Purpose::SignUp)
        .await?
        .hash(password)
        .await?;
    let message = VerificationMessage {
        url_template: state.mail.verification_url(),
        secrets: &state.secrets,
    };
    let user = user::create_user(
        &state.db,
        user::NewUser {
            email,
            password_digest,
            first_name,
            last_name,
            phone_code: form.phone_code.unwrap_or_default(),
            mobile: form.mobile.unwrap_or_default(),
            country_id,
        },
        user::EmailProof::Send(&message),
        state.now(),
    )
    .await?;
    state.mail.wake();
    tracing::info!(user_id = user.id, "user signed up");
    Ok((
        StatusCode::CREATED,
        Json(IdentitiesUserOne {
            identities_users: UserView::from(&user),
        }),
    ))
}

/// The caller's own record, bare (specification §4.3). Any other id is 404, not 403, so the
/// endpoint does not confirm which ids exist.
#[utoipa::path(
    get,
    path = "/identities/user/{id}",
    tag = "identities",
    summary = "Read your own user record",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 200, description = "The caller's own record, bare", body = UserView),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn show_user(ctx: UserCtx, Path(id): Path<i64>) -> Result<Json<UserView>, ApiError> {
    if id != ctx.user.id {
        return Err(ApiError::NotFound);
    }
    Ok(Json(ctx.user))
}

#[utoipa::path(
    patch,
    path = "/identities/user/{id}",
    tag = "identities",
    summary = "Update your own user record",
    params(("id" = i64, Path, description = "Record id")),
    request_body = UserUpdateForm,
    responses(
        (status = 200, description = "The updated record, bare", body = UserView),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn update_user(
    ctx: UserCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<UserUpdateForm>,
) -> Result<Json<UserView>, ApiError> {
    if id != ctx.user.id {
        return Err(ApiError::NotFound);
    }
    form.validate()?;
    let user = user::update_user(&state.db, ctx.user.id, form).await?;
    Ok(Json(UserView::from(&user)))
}

#[utoipa::path(
    post,
    path = "/identities/careers/user_profiles",
    tag = "identities",
    summary = "Create your talent profile",
    request_body = TalentProfileCreateForm,
    responses(
        (status = 201, description = "The new talent profile", body = CareersUserProfileOne),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn create_talent_profile(
    ctx: UserCtx,
    State(state): State<AppState>,
    Form(form): Form<TalentProfileCreateForm>,
) -> Result<(StatusCode, Json<CareersUserProfileOne>), ApiError> {
    form.validate()?;
    let headline = form.headline.ok_or(ApiError::Internal)?;
    let view = user_profile::create_profile(&state.db, ctx.user.id, headline).await?;
    Ok((
        StatusCode::CREATED,
        Json(CareersUserProfileOne {
            careers_user_profiles: view,
        }),
    ))
}
