//! Candidate area (`/candidate`): a user with a talent profile applies to jobs.

use axum::extract::State;
use axum::http::StatusCode;

use super::TalentCtx;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, Unavailable, UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path, Query};
use crate::models::careers::job_application::{self, JobApplicationForm, WithdrawalForm};
use crate::state::AppState;
use crate::views::{CandidateApplicationList, CandidateApplicationOne};
use crate::views::{Json, Meta, PageParams};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_applications, apply))
        .routes(routes!(withdraw_application))
}

#[utoipa::path(
    get,
    path = "/candidate/careers/job_applications",
    tag = "candidate",
    summary = "List your applications",
    params(PageParams),
    responses(
        (status = 200, description = "Your applications", body = CandidateApplicationList),
        MalformedRequest, AreaErrors, NotFound, Unavailable
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
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn apply(
    ctx: TalentCtx,
    State(state): State<AppState>,
    Form(form): Form<JobApplicationForm>,
) -> Result<(StatusCode, Json<CandidateApplicationOne>), ApiError> {
    form.validate()?;
    let item = job_application::apply(
        &state.db,
        &(&ctx.user).into(),
        ctx.profile.id,
        form,
        state.now(),
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(CandidateApplicationOne {
            careers_job_applications: item,
        }),
    ))
}

/// Withdraws your application (CONTRACT §16): `{"status": "withdrawn"}`, from `active` only.
#[utoipa::path(
    patch,
    path = "/candidate/careers/job_applications/{id}",
    tag = "candidate",
    summary = "Withdraw your application",
    params(("id" = i64, Path, description = "Record id")),
    request_body = WithdrawalForm,
    responses(
        (status = 200, description = "The withdrawn application", body = CandidateApplicationOne),
        FormErrors, UnsafeAreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn withdraw_application(
    ctx: TalentCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<WithdrawalForm>,
) -> Result<Json<CandidateApplicationOne>, ApiError> {
    let item = job_application::withdraw(
        &state.db,
        &(&ctx.user).into(),
        ctx.profile.id,
        id,
        form,
        state.now(),
    )
    .await?;
    Ok(Json(CandidateApplicationOne {
        careers_job_applications: item,
    }))
}
