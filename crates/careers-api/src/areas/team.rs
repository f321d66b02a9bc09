//! Team (admin) area (`/admin-user`): an admin sees and may choose everything.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use super::AdminCtx;
use crate::app::AppState;
use crate::db;
use crate::db::org::Scope;
use crate::error::ApiError;
use crate::extract::{Json as Form, Path, Query};
use crate::forms::org::OrgUserProfileForm;
use crate::views::identities::UserView;
use crate::views::{
    IdentitiesUserList, Meta, OrgCompanyList, OrgUserProfileList, OrgUserProfileOne, PageParams,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/admin-user/identities/users", get(list_users))
        .route("/admin-user/org/companies", get(list_companies))
        .route(
            "/admin-user/org/user-profiles",
            get(list_profiles).post(create_profile),
        )
        .route(
            "/admin-user/org/user-profiles/{id}",
            get(show_profile).patch(update_profile),
        )
}

#[derive(Debug, Deserialize)]
struct UserListParams {
    q: Option<String>,
    page: Option<u64>,
    per_page: Option<u64>,
}

/// Users for a selection list; `?q=` filters by name or e-mail.
async fn list_users(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Query(params): Query<UserListParams>,
) -> Result<Json<IdentitiesUserList>, ApiError> {
    let (page, per_page) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .resolve()?;
    let (rows, total) =
        db::identities::list_users(&state.db, params.q.as_deref(), page, per_page).await?;
    Ok(Json(IdentitiesUserList {
        identities_users: rows.iter().map(UserView::from).collect(),
        meta: Meta::new(page, per_page, total),
    }))
}

async fn list_companies(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<OrgCompanyList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) = db::org::list_companies(&state.db, page, per_page).await?;
    Ok(Json(OrgCompanyList {
        org_companies: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

async fn list_profiles(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<OrgUserProfileList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) = db::org::list_profiles(&state.db, Scope::All, page, per_page).await?;
    Ok(Json(OrgUserProfileList {
        org_user_profiles: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

async fn show_profile(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<OrgUserProfileOne>, ApiError> {
    let view = db::org::find_profile(&state.db, Scope::All, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(OrgUserProfileOne {
        org_user_profiles: view,
    }))
}

async fn create_profile(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<(StatusCode, Json<OrgUserProfileOne>), ApiError> {
    form.validate_create()?;
    let view = db::org::create_profile(&state.db, Scope::All, form).await?;
    Ok((
        StatusCode::CREATED,
        Json(OrgUserProfileOne {
            org_user_profiles: view,
        }),
    ))
}

async fn update_profile(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<Json<OrgUserProfileOne>, ApiError> {
    form.validate_update()?;
    let view = db::org::update_profile(&state.db, Scope::All, id, form).await?;
    Ok(Json(OrgUserProfileOne {
        org_user_profiles: view,
    }))
}
