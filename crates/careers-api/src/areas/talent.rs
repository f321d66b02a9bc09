//! Talent area (`/talent`): a user with a talent profile manages it.

use axum::extract::State;

use super::TalentCtx;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, Unavailable, UnsafeAreaErrors,
};
use crate::extract::Json as Form;
use crate::models::careers::user_profile::{self, TalentProfileForm};
use crate::state::AppState;
use crate::views::CareersUserProfileOne;
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
        MalformedRequest, AreaErrors, NotFound, Unavailable
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
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
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
