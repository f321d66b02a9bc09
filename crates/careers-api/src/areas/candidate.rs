//! Candidate area (`/candidate`): a user with a talent profile applies to jobs.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};

use super::TalentCtx;
use crate::app::AppState;
use crate::db;
use crate::error::ApiError;
use crate::extract::{Json as Form, Query};
use crate::forms::careers::JobApplicationForm;
use crate::views::{CandidateApplicationList, CandidateApplicationOne, Meta, PageParams};

pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/candidate/careers/job_applications",
        get(list_applications).post(apply),
    )
}

async fn list_applications(
    ctx: TalentCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<CandidateApplicationList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) =
        db::careers::candidate_applications(&state.db, ctx.profile.id, page, per_page).await?;
    Ok(Json(CandidateApplicationList {
        careers_job_applications: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

/// The form of specification §4.5.2; its experiences join the profile in the same transaction.
async fn apply(
    ctx: TalentCtx,
    State(state): State<AppState>,
    Form(form): Form<JobApplicationForm>,
) -> Result<(StatusCode, Json<CandidateApplicationOne>), ApiError> {
    form.validate()?;
    let item = db::careers::apply(&state.db, ctx.profile.id, form).await?;
    Ok((
        StatusCode::CREATED,
        Json(CandidateApplicationOne {
            careers_job_applications: item,
        }),
    ))
}
