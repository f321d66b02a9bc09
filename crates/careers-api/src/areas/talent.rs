//! Talent area (`/talent`): a user with a talent profile manages it.

use axum::extract::State;

use super::TalentCtx;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::ErrorBody;
use crate::extract::Json as Form;
use crate::models::careers::user_profile::{self, CareersUserProfileOne, TalentProfileForm};
use crate::state::AppState;
use crate::views::Json;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show_profile, update_profile))
}

#[utoipa::path(
    get,
    path = "/talent/careers/user_profile",
    tag = "talent",
    summary = "Read your talent profile",
    responses(
        (status = 200, description = "Your talent profile", body = CareersUserProfileOne),
        (status = 400, description = "`malformed_request`: bad JSON, wrong JSON type, bad path or query parameter", body = ErrorBody),
        (status = 401, description = "`unauthenticated`, `invalid_token`, `access_expired` or `session_ended`", body = ErrorBody),
        (status = 403, description = "`forbidden` (area check) or `csrf_failed`", body = ErrorBody),
        (status = 404, description = "`not_found`, or outside the caller's scope", body = ErrorBody),
        (status = 503, description = "`unavailable`: database or token store unreachable", body = ErrorBody)
    ),
    security(("user_session" = []))
)]
async fn show_profile(
    ctx: TalentCtx,
    State(state): State<AppState>,
) -> Result<Json<CareersUserProfileOne>, ApiError> {
    let view = user_profile::profile_view(&*state.db, &ctx.profile).await?;
    Ok(Json(CareersUserProfileOne {
        careers_user_profiles: view,
    }))
}

/// Nested form: items with `id` are updated, without are created, `_destroy: true` removes.
#[utoipa::path(
    patch,
    path = "/talent/careers/user_profile",
    tag = "talent",
    summary = "Update your talent profile (nested form)",
    request_body = TalentProfileForm,
    responses(
        (status = 200, description = "Your updated talent profile", body = CareersUserProfileOne),
        (status = 400, description = "`malformed_request`: bad JSON, wrong JSON type, bad path or query parameter", body = ErrorBody),
        (status = 401, description = "`unauthenticated`, `invalid_token`, `access_expired` or `session_ended`", body = ErrorBody),
        (status = 403, description = "`forbidden` (area check) or `csrf_failed`", body = ErrorBody),
        (status = 404, description = "`not_found`, or outside the caller's scope", body = ErrorBody),
        (status = 409, description = "`conflict`: uniqueness clash", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: body over 64 KiB", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: body is not application/json", body = ErrorBody),
        (status = 422, description = "`validation_failed`, with `fields` keyed by nested path", body = ErrorBody),
        (status = 503, description = "`unavailable`: database or token store unreachable", body = ErrorBody)
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn update_profile(
    ctx: TalentCtx,
    State(state): State<AppState>,
    Form(form): Form<TalentProfileForm>,
) -> Result<Json<CareersUserProfileOne>, ApiError> {
    form.validate()?;
    let view = user_profile::update_profile(&state.db, ctx.profile, form).await?;
    Ok(Json(CareersUserProfileOne {
        careers_user_profiles: view,
    }))
}
