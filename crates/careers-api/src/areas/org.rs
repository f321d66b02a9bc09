//! Employer area (`/org`, `/org-user`): a user with an org profile, scoped to their company.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::{EmployerCtx, EmployerRule, Manager};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::answers::{AnswerKey, Answers};
use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, Unavailable, UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path, Query};
use crate::models::careers::job::{self, JobForm, JobStatus};
use crate::models::careers::job_application::{
    self, ApplicationChangeForm, ApplicationFilter, ApplicationStatus, Changer, DecisionNotice,
};
use crate::models::org::Scope;
use crate::models::org::user_profile::{self, OrgUserProfileForm, OrgUserProfileView};
use crate::state::AppState;
use crate::views::{
    CareersJobList, EmployerApplicationChanged, EmployerApplicationList, EmployerApplicationOne,
    EmployerJobOne, OrgUserProfileList, OrgUserProfileOne,
};
use crate::views::{Json, JsonBytes, Meta, PageParams, json_bytes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_profiles, create_profile))
        .routes(routes!(show_profile, update_profile))
        .routes(routes!(list_jobs, create_job))
        .routes(routes!(show_job, update_job))
        .routes(routes!(list_applications))
        .routes(routes!(show_application, update_application))
}

fn scope<R: EmployerRule>(ctx: &EmployerCtx<R>) -> Scope {
    Scope::Company(ctx.company_id)
}

#[utoipa::path(
    get,
    path = "/org/user-profiles",
    tag = "employer",
    summary = "List your company's org profiles",
    params(PageParams),
    responses(
        (status = 200, description = "Org profiles of your company", body = OrgUserProfileList),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_profiles(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<OrgUserProfileList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) = user_profile::list_profiles(&state.db, scope(&ctx), page, per_page).await?;
    Ok(Json(OrgUserProfileList {
        org_user_profiles: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

/// Bare, as the specification shows it (§4.3).
#[utoipa::path(
    get,
    path = "/org/user-profiles/{id}",
    tag = "employer",
    summary = "Read an org profile of your company",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 200, description = "The org profile, bare", body = OrgUserProfileView),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn show_profile(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<OrgUserProfileView>, ApiError> {
    user_profile::find_profile(&*state.db, scope(&ctx), id)
        .await?
        .map(Json)
        .ok_or(ApiError::NotFound)
}

#[utoipa::path(
    post,
    path = "/org/user-profiles",
    tag = "employer",
    summary = "Create an org profile in your company",
    request_body = OrgUserProfileForm,
    responses(
        (status = 201, description = "The new org profile", body = OrgUserProfileOne),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn create_profile(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<(StatusCode, Json<OrgUserProfileOne>), ApiError> {
    form.validate_create()?;
    let view = user_profile::create_profile(&state.db, ctx.actor(), scope(&ctx), form).await?;
    Ok((
        StatusCode::CREATED,
        Json(OrgUserProfileOne {
            org_user_profiles: view,
        }),
    ))
}

/// Bare, like the GET of the same path.
#[utoipa::path(
    patch,
    path = "/org/user-profiles/{id}",
    tag = "employer",
    summary = "Update an org profile of your company",
    params(("id" = i64, Path, description = "Record id")),
    request_body = OrgUserProfileForm,
    responses(
        (status = 200, description = "The updated org profile, bare", body = OrgUserProfileView),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn update_profile(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<OrgUserProfileForm>,
) -> Result<Json<OrgUserProfileView>, ApiError> {
    form.validate_update()?;
    Ok(Json(
        user_profile::update_profile(&state.db, ctx.actor(), scope(&ctx), id, form).await?,
    ))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct JobListParams {
    /// Only jobs of this status, as read (an open job past `valid_through` is closed).
    #[param(inline)]
    status: Option<JobStatus>,
    /// Page number, from 1.
    page: Option<u64>,
    /// Items per page, 1 to 100 (default 25).
    per_page: Option<u64>,
}

#[utoipa::path(
    get,
    path = "/org-user/careers/jobs",
    tag = "employer",
    summary = "List your company's jobs",
    params(JobListParams),
    responses(
        (status = 200, description = "Your company's jobs", body = CareersJobList),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_jobs(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Query(params): Query<JobListParams>,
) -> Result<Json<CareersJobList>, ApiError> {
    let (page, per_page) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .resolve()?;
    let (rows, total) = job::company_jobs(
        &state.db,
        ctx.company_id,
        params.status,
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

#[utoipa::path(
    get,
    path = "/org-user/careers/jobs/{id}",
    tag = "employer",
    summary = "Read a job of your company",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 200, description = "The job", body = EmployerJobOne),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn show_job(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<EmployerJobOne>, ApiError> {
    let view = job::company_job(&state.db, ctx.company_id, id, state.now())
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(EmployerJobOne { careers_jobs: view }))
}

#[utoipa::path(
    post,
    path = "/org-user/careers/jobs",
    tag = "employer",
    summary = "Create a job",
    request_body = JobForm,
    responses(
        (status = 201, description = "The new job", body = EmployerJobOne),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn create_job(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Form(form): Form<JobForm>,
) -> Result<(StatusCode, Json<EmployerJobOne>), ApiError> {
    form.validate_create()?;
    let view = job::create_job(&state.db, ctx.company_id, form, state.now()).await?;
    Ok((
        StatusCode::CREATED,
        Json(EmployerJobOne { careers_jobs: view }),
    ))
}

#[utoipa::path(
    patch,
    path = "/org-user/careers/jobs/{id}",
    tag = "employer",
    summary = "Update a job of your company",
    params(("id" = i64, Path, description = "Record id")),
    request_body = JobForm,
    responses(
        (status = 200, description = "The updated job", body = EmployerJobOne),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn update_job(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<JobForm>,
) -> Result<Json<EmployerJobOne>, ApiError> {
    form.validate_update()?;
    let view = job::update_job(&state.db, ctx.company_id, id, form, state.now()).await?;
    Ok(Json(EmployerJobOne { careers_jobs: view }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ApplicationParams {
    /// Only applications to this job.
    careers_job_id: Option<i64>,
    /// Only applications with this status.
    #[param(inline)]
    status: Option<ApplicationStatus>,
    /// Only applications in this stage.
    careers_job_stage_id: Option<i64>,
    /// Page number, from 1.
    page: Option<u64>,
    /// Items per page, 1 to 100 (default 25).
    per_page: Option<u64>,
}

/// Applications to the company's own jobs (specification §4.3).
#[utoipa::path(
    get,
    path = "/org-user/careers/job_applications",
    tag = "employer",
    summary = "List applications to your jobs",
    params(ApplicationParams),
    responses(
        (status = 200, description = "Applications to your company's jobs", body = EmployerApplicationList),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_applications(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Query(params): Query<ApplicationParams>,
) -> Result<Response, ApiError> {
    let page = PageParams {
        page: params.page,
        per_page: params.per_page,
    };
    let (page, per_page) = page.resolve()?;
    // Kept while the database does not change (answers.rs): the page, the same bytes again.
    let key = AnswerKey::EmployerApplications {
        company_id: ctx.company_id,
        filter: ApplicationFilter {
            job_id: params.careers_job_id,
            status: params.status,
            stage_id: params.careers_job_stage_id,
        },
        page,
        per_page,
    };
    let body = Answers::answer(state.answers.as_ref(), &state.db, key, async |key| {
        let &AnswerKey::EmployerApplications {
            company_id,
            filter,
            page,
            per_page,
        } = key;
        let rows =
            job_application::employer_applications(&state.db, company_id, filter, page, per_page)
                .await?;
        // The items borrow their text from `rows`, so the answer is written while they live.
        let (items, total) = rows.page()?;
        json_bytes(&EmployerApplicationList {
            careers_job_applications: items,
            meta: Meta::new(page, per_page, total),
        })
    })
    .await?;
    Ok(JsonBytes(body).into_response())
}

#[utoipa::path(
    get,
    path = "/org-user/careers/job_applications/{id}",
    tag = "employer",
    summary = "Read an application to your jobs",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 200, description = "The application with the applicant's profile", body = EmployerApplicationOne),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn show_application(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<EmployerApplicationOne>, ApiError> {
    let detail = job_application::employer_application(&state.db, ctx.company_id, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(EmployerApplicationOne {
        careers_job_applications: detail,
    }))
}

/// Moves, rejects, hires or reopens an application (CONTRACT §16), naming the `lock_version`
/// it read: a stale one is 409 and changes nothing.
#[utoipa::path(
    patch,
    path = "/org-user/careers/job_applications/{id}",
    tag = "employer",
    summary = "Move, reject, hire or reopen an application to your jobs",
    params(("id" = i64, Path, description = "Record id")),
    request_body = ApplicationChangeForm,
    responses(
        (status = 200, description = "The changed application, as the list shows it", body = EmployerApplicationChanged),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn update_application(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<ApplicationChangeForm>,
) -> Result<Json<EmployerApplicationChanged>, ApiError> {
    form.validate()?;
    let changer = Changer {
        company_id: ctx.company_id,
        user_id: ctx.member.user_id,
        notice: DecisionNotice {
            secrets: &state.secrets,
        },
    };
    let item =
        job_application::change_application(&state.db, &changer, id, form, state.now()).await?;
    // A decision's message to the candidate may be waiting in the outbox.
    state.mail.wake();
    Ok(Json(EmployerApplicationChanged {
        careers_job_applications: item,
    }))
}
