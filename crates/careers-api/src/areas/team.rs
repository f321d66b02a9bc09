//! Team (admin) area (`/admin-user`): an admin sees and may choose everything.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::AdminCtx;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, Unavailable, UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path, Query};
use crate::models::identities::user::{self, IdentitiesUserList, UserView};
use crate::models::org::Scope;
use crate::models::org::company::{self, OrgCompanyList};
use crate::models::org::user_profile::{
    self, OrgUserProfileForm, OrgUserProfileList, OrgUserProfileOne,
};
use crate::state::AppState;
use crate::views::{Json, Meta, PageParams};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_users))
        .routes(routes!(list_companies))
        .routes(routes!(list_profiles, create_profile))
        .routes(routes!(show_profile, update_profile))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct UserListParams {
    /// Case-insensitive match on first name, last name or e-mail.
    q: Option<String>,
    /// Page number, from 1.
    page: Option<u64>,
    /// Items per page, 1 to 100 (default 25).
    per_page: Option<u64>,
}

/// Users for a selection list; `?q=` filters by name or e-mail.
#[utoipa::path(
    get,
    path = "/admin-user/identities/users",
    tag = "team",
    summary = "List users (selection list)",
    params(UserListParams),
    responses(
        (status = 200, description = "Users", body = IdentitiesUserList),
        MalformedRequest, AreaErrors, Unavailable
    ),
    security(("admin_session" = []))
)]
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
    let (rows, total) = user::list_users(&state.db, params.q.as_deref(), page, per_page).await?;
    Ok(Json(IdentitiesUserList {
        identities_users: rows.iter().map(UserView::from).collect(),
        meta: Meta::new(page, per_page, total),
    }))
}

#[utoipa::path(
    get,
    path = "/admin-user/org/companies",
    tag = "team",
    summary = "List companies",
    params(PageParams),
    responses(
        (status = 200, description = "Companies", body = OrgCompanyList),
        MalformedRequest, AreaErrors, Unavailable
    ),
    security(("admin_session" = []))
)]
async fn list_companies(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<OrgCompanyList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) = company::list_companies(&state.db, page, per_page).await?;
    Ok(Json(OrgCompanyList {
        org_companies: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

#[utoipa::path(
    get,
    path = "/admin-user/org/user-profiles",
    tag = "team",
    summary = "List all org profiles",
    params(PageParams),
    responses(
        (status = 200, description = "All org profiles", body = OrgUserProfileList),
        MalformedRequest, AreaErrors, Unavailable
    ),
    security(("admin_session" = []))
)]
async fn list_profiles(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<OrgUserProfileList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) = user_profile::list_profiles(&state.db, Scope::All, page, per_page).await?;
    Ok(Json(OrgUserProfileList {
        org_user_profiles: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

#[utoipa::path(
    get,
    path = "/admin-user/org/user-profiles/{id}",
    tag = "team",
    summary = "Read any org profile",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 200, description = "An org profile", body = OrgUserProfileOne),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("admin_session" = []))
)]
async fn show_profile(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<OrgUserProfileOne>, ApiError> {
    let view = user_profile::find_profile(&*state.db, Scope::All, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(OrgUserProfileOne {
        org_user_profiles: view,
    }))
}

#[utoipa::path(
    post,
    path = "/admin-user/org/user-profiles",
    tag = "team",
    summary = "Create an org profile for any user and company",
    request_body = OrgUserProfileForm,
    responses(
        (status = 201, description = "The new org profile", body = OrgUserProfileOne),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn create_profile(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<(StatusCode, Json<OrgUserProfileOne>), ApiError> {
    form.validate_create()?;
    let view = user_profile::create_profile(&state.db, Scope::All, form).await?;
    Ok((
        StatusCode::CREATED,
        Json(OrgUserProfileOne {
            org_user_profiles: view,
        }),
    ))
}

#[utoipa::path(
    patch,
    path = "/admin-user/org/user-profiles/{id}",
    tag = "team",
    summary = "Update any org profile",
    params(("id" = i64, Path, description = "Record id")),
    request_body = OrgUserProfileForm,
    responses(
        (status = 200, description = "The updated org profile", body = OrgUserProfileOne),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn update_profile(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<Json<OrgUserProfileOne>, ApiError> {
    form.validate_update()?;
    let view = user_profile::update_profile(&state.db, Scope::All, id, form).await?;
    Ok(Json(OrgUserProfileOne {
        org_user_profiles: view,
    }))
}
