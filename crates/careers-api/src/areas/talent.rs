//! Talent area (`/talent`): a user with a talent profile manages it.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use super::TalentCtx;
use crate::app::AppState;
use crate::db;
use crate::error::ApiError;
use crate::extract::Json as Form;
use crate::forms::careers::TalentProfileForm;
use crate::views::CareersUserProfileOne;

pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/talent/careers/user_profile",
        get(show_profile).patch(update_profile),
    )
}

async fn show_profile(
    ctx: TalentCtx,
    State(state): State<AppState>,
) -> Result<Json<CareersUserProfileOne>, ApiError> {
    let view = db::careers::profile_view(&state.db, &ctx.profile).await?;
    Ok(Json(CareersUserProfileOne {
        careers_user_profiles: view,
    }))
}

/// Nested form: items with `id` are updated, without are created, `_destroy: true` removes.
async fn update_profile(
    ctx: TalentCtx,
    State(state): State<AppState>,
    Form(form): Form<TalentProfileForm>,
) -> Result<Json<CareersUserProfileOne>, ApiError> {
    form.validate()?;
    let view = db::careers::update_profile(&state.db, ctx.profile, form).await?;
    Ok(Json(CareersUserProfileOne {
        careers_user_profiles: view,
    }))
}
