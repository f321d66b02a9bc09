//! Candidate area (`/candidate`): a user with a talent profile applies to jobs.

use axum::extract::State;
use axum::http::StatusCode;

use super::TalentCtx;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::ErrorBody;
use crate::extract::{Json as Form, Query};
use crate::models::careers::job_application::{
    self, CandidateApplicationList, CandidateApplicationOne, JobApplicationForm,
};
use crate::state::AppState;
use crate::views::{Json, Meta, PageParams};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_applications, apply))
}

#[utoipa::path(
    get,
    path = "/candidate/careers/job_applications",
    tag = "candidate",
    summary = "List your applications",
    params(PageParams),
    responses(
        (status = 200, description = "Your applications", body = CandidateApplicationList),
        (status = 400, description = "`malformed_request`: bad JSON, wrong JSON type, bad path or query parameter", body = ErrorBody),
        (status = 401, description = "`unauthenticated`, `invalid_token`, `access_expired` or `session_ended`", body = ErrorBody),
        (status = 403, description = "`forbidden` (area check) or `csrf_failed`", body = ErrorBody),
        (status = 404, description = "`not_found`, or outside the caller's scope", body = ErrorBody),
        (status = 503, description = "`unavailable`: database or token store unreachable", body = ErrorBody)
    ),
    security(("user_session" = []))
)]
async fn list_applications(
    ctx: TalentCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<CandidateApplicationList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) =
        job_application::candidate_applications(&state.db, ctx.profile.id, page, per_page).await?;
    Ok(Json(CandidateApplicationList {
        careers_job_applications: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

/// The form of specification §4.5.2; its experiences join the profile in the same transaction.
#[utoipa::path(
    post,
    path = "/candidate/careers/job_applications",
    tag = "candidate",
    summary = "Apply to a job",
    request_body = JobApplicationForm,
    responses(
        (status = 201, description = "The new application", body = CandidateApplicationOne),
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
async fn apply(
    ctx: TalentCtx,
    State(state): State<AppState>,
    Form(form): Form<JobApplicationForm>,
) -> Result<(StatusCode, Json<CandidateApplicationOne>), ApiError> {
    form.validate()?;
    let item = job_application::apply(&state.db, ctx.profile.id, form).await?;
    Ok((
        StatusCode::CREATED,
        Json(CandidateApplicationOne {
            careers_job_applications: item,
        }),
    ))
}
