//! Authenticated user area (`/identities`), plus public sign-up.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::UserCtx;
use crate::app::AppState;
use crate::db;
use crate::error::ApiError;
use crate::extract::{Json as Form, Path};
use crate::forms::IdRef;
use crate::forms::careers::TalentProfileCreateForm;
use crate::forms::identities::{SignUpForm, UserUpdateForm};
use crate::views::identities::UserView;
use crate::views::{CareersUserProfileOne, IdentitiesUserOne};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/identities/users", post(sign_up))
        .route("/identities/user/{id}", get(show_user).patch(update_user))
        .route(
            "/identities/careers/user_profiles",
            post(create_talent_profile),
        )
}

/// Public sign-up. It does not log in: the client then creates a session.
async fn sign_up(
    State(state): State<AppState>,
    Form(form): Form<SignUpForm>,
) -> Result<(StatusCode, Json<IdentitiesUserOne>), ApiError> {
    form.validate()?;
    let (Some(email), Some(password), Some(first_name), Some(last_name)) =
        (form.email, form.password, form.first_name, form.last_name)
    else {
        return Err(ApiError::Internal);
    };
    let country_id = IdRef::id_of(&form.country).ok_or(ApiError::Internal)?;
    let password_digest = state.passwords.hash(password).await?;
    let user = db::identities::create_user(
        &state.db,
        db::identities::NewUser {
            email,
            password_digest,
            first_name,
            last_name,
            phone_code: form.phone_code.unwrap_or_default(),
            mobile: form.mobile.unwrap_or_default(),
            country_id,
        },
    )
    .await?;
    tracing::info!(identity_id = user.id, "user signed up");
    Ok((
        StatusCode::CREATED,
        Json(IdentitiesUserOne {
            identities_users: UserView::from(&user),
        }),
    ))
}

/// The caller's own record, bare (specification §4.3). Any other id is 404, not 403, so the
/// endpoint does not confirm which ids exist.
async fn show_user(ctx: UserCtx, Path(id): Path<i64>) -> Result<Json<UserView>, ApiError> {
    if id != ctx.user.id {
        return Err(ApiError::NotFound);
    }
    Ok(Json(UserView::from(&ctx.user)))
}

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
    let user = db::identities::update_user(&state.db, ctx.user, form).await?;
    Ok(Json(UserView::from(&user)))
}

async fn create_talent_profile(
    ctx: UserCtx,
    State(state): State<AppState>,
    Form(form): Form<TalentProfileCreateForm>,
) -> Result<(StatusCode, Json<CareersUserProfileOne>), ApiError> {
    form.validate()?;
    let headline = form.headline.ok_or(ApiError::Internal)?;
    let view = db::careers::create_profile(&state.db, ctx.user.id, headline).await?;
    Ok((
        StatusCode::CREATED,
        Json(CareersUserProfileOne {
            careers_user_profiles: view,
        }),
    ))
}
