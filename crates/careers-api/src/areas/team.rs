//! Team (admin) area (`/admin-user`): an admin sees and may choose everything.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::{AdminCtx, USER};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::audit::{self, Action};
use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, Unavailable, UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path, Query};
use crate::models::careers::job::{self, JobStatus, Moderation};
use crate::models::identities::session::SessionView;
use crate::models::identities::user::{self, UserView};
use crate::models::org::company::{self, CompanyView, Suspension, TeamCompanyForm};
use crate::models::org::user_profile::{self, OrgUserProfileForm};
use crate::models::org::{Actor, Scope};
use crate::state::AppState;
use crate::views::{
    CareersJobList, CareersJobOne, IdentitiesUserList, OrgCompanyList, OrgCompanyOne,
    OrgUserProfileList, OrgUserProfileOne, SessionList,
};
use crate::views::{Json, Meta, PageParams};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_users))
        .routes(routes!(list_user_sessions, end_user_sessions))
        .routes(routes!(list_companies))
        .routes(routes!(show_company, update_company))
        .routes(routes!(list_jobs))
        .routes(routes!(moderate_job))
        .routes(routes!(list_profiles, create_profile))
        .routes(routes!(show_profile, update_profile))
}

/// A user's live sessions, most recently used first (`current` is always false here).
#[utoipa::path(
    get,
    path = "/admin-user/identities/users/{id}/sessions",
    tag = "team",
    summary = "List a user's sessions",
    params(("id" = i64, Path, description = "The user's id")),
    responses(
        (status = 200, description = "The user's sessions", body = SessionList),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("admin_session" = []))
)]
async fn list_user_sessions(
    admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<SessionList>, ApiError> {
    if !user::user_exists(&state.db, id).await? {
        return Err(ApiError::NotFound);
    }
    let sessions = state.sessions.sessions(&USER, id, None).await?;
    tracing::info!(
        admin_id = admin.admin.id,
        user_id = id,
        "admin listed a user's sessions"
    );
    Ok(Json(SessionList {
        sessions: sessions.into_iter().map(SessionView::from).collect(),
    }))
}

/// Ends every session of a user (a lost laptop, a compromised account).
#[utoipa::path(
    delete,
    path = "/admin-user/identities/users/{id}/sessions",
    tag = "team",
    summary = "End every session of a user",
    params(("id" = i64, Path, description = "The user's id")),
    responses(
        (status = 204, description = "The user's sessions ended"),
        MalformedRequest, UnsafeAreaErrors, NotFound, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn end_user_sessions(
    admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<StatusCode, ApiError> {
    if !user::user_exists(&state.db, id).await? {
        return Err(ApiError::NotFound);
    }
    let ended = state
        .sessions
        .end_sessions(&USER, id, None, sessions::EndReason::Revoked)
        .await?;
    audit::record(Some(admin.admin.id), Action::UserSessionsEnded, id);
    tracing::info!(
        user_id = id,
        ended,
        "every session of a user ended by an admin"
    );
    Ok(StatusCode::NO_CONTENT)
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

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct CompanyListParams {
    /// Case-insensitive match on the name or the slug.
    q: Option<String>,
    /// Page number, from 1.
    page: Option<u64>,
    /// Items per page, 1 to 100 (default 25).
    per_page: Option<u64>,
}

#[utoipa::path(
    get,
    path = "/admin-user/org/companies",
    tag = "team",
    summary = "List companies",
    params(CompanyListParams),
    responses(
        (status = 200, description = "Companies, with suspended_at", body = OrgCompanyList),
        MalformedRequest, AreaErrors, Unavailable
    ),
    security(("admin_session" = []))
)]
async fn list_companies(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Query(params): Query<CompanyListParams>,
) -> Result<Json<OrgCompanyList>, ApiError> {
    let (page, per_page) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .resolve()?;
    let (rows, total) =
        company::list_companies(&state.db, params.q.as_deref(), page, per_page).await?;
    Ok(Json(OrgCompanyList {
        org_companies: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

#[utoipa::path(
    get,
    path = "/admin-user/org/companies/{id}",
    tag = "team",
    summary = "Read any company",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 200, description = "The company, with suspended_at", body = OrgCompanyOne),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("admin_session" = []))
)]
async fn show_company(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<OrgCompanyOne>, ApiError> {
    let found = company::find_company(&state.db, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(OrgCompanyOne {
        org_companies: CompanyView::team(&found),
    }))
}

/// Edits any company; `suspended` suspends it or lifts the suspension (audit events).
#[utoipa::path(
    patch,
    path = "/admin-user/org/companies/{id}",
    tag = "team",
    summary = "Edit or suspend any company",
    params(("id" = i64, Path, description = "Record id")),
    request_body = TeamCompanyForm,
    responses(
        (status = 200, description = "The company, with suspended_at", body = OrgCompanyOne),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn update_company(
    admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<TeamCompanyForm>,
) -> Result<Json<OrgCompanyOne>, ApiError> {
    form.company.validate_update()?;
    let (updated, change) =
        company::update_company(&state.db, id, form.company, form.suspended, state.now()).await?;
    match change {
        Suspension::Suspended => audit::record(Some(admin.admin.id), Action::CompanySuspended, id),
        Suspension::Unsuspended => {
            audit::record(Some(admin.admin.id), Action::CompanyUnsuspended, id)
        }
        Suspension::Unchanged => {}
    }
    Ok(Json(OrgCompanyOne {
        org_companies: CompanyView::team(&updated),
    }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct TeamJobParams {
    /// Case-insensitive match on the title or the company's name.
    q: Option<String>,
    /// Only jobs of this status, as read.
    #[param(inline)]
    status: Option<JobStatus>,
    /// Only this company's jobs.
    company_id: Option<i64>,
    /// Page number, from 1.
    page: Option<u64>,
    /// Items per page, 1 to 100 (default 25).
    per_page: Option<u64>,
}

#[utoipa::path(
    get,
    path = "/admin-user/careers/jobs",
    tag = "team",
    summary = "List every company's jobs",
    params(TeamJobParams),
    responses(
        (status = 200, description = "Jobs", body = CareersJobList),
        MalformedRequest, AreaErrors, Unavailable
    ),
    security(("admin_session" = []))
)]
async fn list_jobs(
    _admin: AdminCtx,
    State(state): State<AppState>,
    Query(params): Query<TeamJobParams>,
) -> Result<Json<CareersJobList>, ApiError> {
    let (page, per_page) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .resolve()?;
    let (rows, total) = job::team_jobs(
        &state.db,
        params.q.as_deref(),
        params.status,
        params.company_id,
        page,
        per_page,
        state.now(),
    )
    .await?;
    Ok(Json(CareersJobList {
        careers_jobs: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

/// The team's moderation: `{"status": "archived"}`, or `{"status": "draft"}` for a job the
/// team archived (released back to its employer).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
struct ModerationForm {
    /// `archived`, or `draft` to release a job the team archived.
    status: Option<String>,
}

#[utoipa::path(
    patch,
    path = "/admin-user/careers/jobs/{id}",
    tag = "team",
    summary = "Archive a job, or release one the team archived",
    params(("id" = i64, Path, description = "Record id")),
    request_body = ModerationForm,
    responses(
        (status = 200, description = "The job", body = CareersJobOne),
        FormErrors, UnsafeAreaErrors, NotFound, Unavailable
    ),
    security(("admin_session" = [], "csrf_token" = []))
)]
async fn moderate_job(
    admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<ModerationForm>,
) -> Result<Json<CareersJobOne>, ApiError> {
    let (view, action) = job::moderate(&state.db, id, form.status.as_deref(), state.now()).await?;
    let action = match action {
        Moderation::Archived => Action::JobArchived,
        Moderation::Released => Action::JobReleased,
    };
    audit::record(Some(admin.admin.id), action, id);
    Ok(Json(CareersJobOne { careers_jobs: view }))
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
    admin: AdminCtx,
    State(state): State<AppState>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<(StatusCode, Json<OrgUserProfileOne>), ApiError> {
    form.validate_create()?;
    let view = user_profile::create_profile(&state.db, Actor::Team, Scope::All, form).await?;
    audit::record(Some(admin.admin.id), Action::OrgProfileCreated, view.id);
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
    admin: AdminCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<Json<OrgUserProfileOne>, ApiError> {
    form.validate_update()?;
    let view = user_profile::update_profile(&state.db, Actor::Team, Scope::All, id, form).await?;
    audit::record(Some(admin.admin.id), Action::OrgProfileUpdated, id);
    Ok(Json(OrgUserProfileOne {
        org_user_profiles: view,
    }))
}
