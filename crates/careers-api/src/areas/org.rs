//! Employer area (`/org`, `/org-user`): a user with an org profile, scoped to their company.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use super::EmployerCtx;
use crate::app::AppState;
use crate::db;
use crate::db::org::Scope;
use crate::error::ApiError;
use crate::extract::{Json as Form, Path, Query};
use crate::forms::org::{JobForm, OrgUserProfileForm};
use crate::views::org::OrgUserProfileView;
use crate::views::{
    CareersJobList, CareersJobOne, EmployerApplicationList, EmployerApplicationOne, Meta,
    OrgUserProfileList, OrgUserProfileOne, PageParams,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/org/user-profiles",
            get(list_profiles).post(create_profile),
        )
        .route(
            "/org/user-profiles/{id}",
            get(show_profile).patch(update_profile),
        )
        .route("/org-user/careers/jobs", get(list_jobs).post(create_job))
        .route(
            "/org-user/careers/jobs/{id}",
            axum::routing::patch(update_job),
        )
        .route("/org-user/careers/job_applications", get(list_applications))
        .route(
            "/org-user/careers/job_applications/{id}",
            get(show_application),
        )
}

fn scope(ctx: &EmployerCtx) -> Scope {
    Scope::Company(ctx.company.id)
}

async fn list_profiles(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<OrgUserProfileList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) = db::org::list_profiles(&state.db, scope(&ctx), page, per_page).await?;
    Ok(Json(OrgUserProfileList {
        org_user_profiles: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

/// Bare, as the specification shows it (§4.3).
async fn show_profile(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<OrgUserProfileView>, ApiError> {
    db::org::find_profile(&state.db, scope(&ctx), id)
        .await?
        .map(Json)
        .ok_or(ApiError::NotFound)
}

async fn create_profile(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<(StatusCode, Json<OrgUserProfileOne>), ApiError> {
    form.validate_create()?;
    let view = db::org::create_profile(&state.db, scope(&ctx), form).await?;
    Ok((
        StatusCode::CREATED,
        Json(OrgUserProfileOne {
            org_user_profiles: view,
        }),
    ))
}

/// Bare, like the GET of the same path.
async fn update_profile(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<Json<OrgUserProfileView>, ApiError> {
    form.validate_update()?;
    Ok(Json(
        db::org::update_profile(&state.db, scope(&ctx), id, form).await?,
    ))
}

async fn list_jobs(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<CareersJobList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) =
        db::careers::company_jobs(&state.db, ctx.company.id, page, per_page).await?;
    Ok(Json(CareersJobList {
        careers_jobs: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

async fn create_job(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Form(form): Form<JobForm>,
) -> Result<(StatusCode, Json<CareersJobOne>), ApiError> {
    form.validate_create()?;
    let view = db::careers::create_job(&state.db, ctx.company.id, form).await?;
    Ok((
        StatusCode::CREATED,
        Json(CareersJobOne { careers_jobs: view }),
    ))
}

async fn update_job(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<JobForm>,
) -> Result<Json<CareersJobOne>, ApiError> {
    form.validate_update()?;
    let view = db::careers::update_job(&state.db, ctx.company.id, id, form).await?;
    Ok(Json(CareersJobOne { careers_jobs: view }))
}

#[derive(Debug, Deserialize)]
struct ApplicationParams {
    careers_job_id: Option<i64>,
    page: Option<u64>,
    per_page: Option<u64>,
}

/// Applications to the company's own jobs (specification §4.3).
async fn list_applications(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Query(params): Query<ApplicationParams>,
) -> Result<Json<EmployerApplicationList>, ApiError> {
    let (page, per_page) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .resolve()?;
    let (rows, total) = db::careers::employer_applications(
        &state.db,
        ctx.company.id,
        params.careers_job_id,
        page,
        per_page,
    )
    .await?;
    Ok(Json(EmployerApplicationList {
        careers_job_applications: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

async fn show_application(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<EmployerApplicationOne>, ApiError> {
    let detail = db::careers::employer_application(&state.db, ctx.company.id, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(EmployerApplicationOne {
        careers_job_applications: detail,
    }))
}
