//! Marketplace area (`/marketplace`): public, personalised when a user is identified.

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::MarketplaceCtx;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::{MalformedRequest, NotFound, Unavailable};
use crate::extract::{Path, Query, WantsJsonLd};
use crate::models::careers::job;
use crate::models::careers::job_posting::job_posting;
use crate::models::org::company;
use crate::state::AppState;
use crate::views::{Json, Meta, PageParams};
use crate::views::{MarketplaceJobList, MarketplaceJobOne, PublicCompanyOne};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_jobs))
        .routes(routes!(show_job))
        .routes(routes!(show_company))
}

/// A company's public page (CONTRACT §14): 404 for a suspended one.
#[utoipa::path(
    get,
    path = "/marketplace/org/companies/{slug}",
    tag = "marketplace",
    summary = "Read a company by its slug (public)",
    params(("slug" = String, Path, description = "The company's slug")),
    responses(
        (status = 200, description = "The company", body = PublicCompanyOne),
        MalformedRequest, NotFound, Unavailable
    )
)]
async fn show_company(
    State(state): State<AppState>,
    Path(slug): Path<String>,
) -> Result<Response, ApiError> {
    let company = company::public_company(&state.db, &slug)
        .await?
        .ok_or(ApiError::NotFound)?;
    let answer = Json(PublicCompanyOne {
        org_companies: company,
    });
    Ok(marketplace_answer(false, answer.into_response()))
}

/// A marketplace answer's caching headers (CONTRACT §5): it varies with `Accept` and the
/// cookie, and one made for an identified user is private.
fn marketplace_answer(identified: bool, mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::VARY, HeaderValue::from_static("accept, cookie"));
    if identified {
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, no-store"),
        );
    }
    response
}

#[utoipa::path(
    get,
    path = "/marketplace/careers/jobs",
    tag = "marketplace",
    summary = "List open jobs",
    params(PageParams),
    responses(
        (status = 200, description = "Open jobs of companies that are not suspended, newest first", body = MarketplaceJobList),
        MalformedRequest, Unavailable
    ),
    security((), ("user_session" = []))
)]
async fn list_jobs(
    ctx: MarketplaceCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Response, ApiError> {
    let (page, per_page) = params.resolve()?;
    let viewer = ctx.user.map(|u| u.id);
    let (rows, total) =
        job::marketplace_jobs(&state.db, viewer, None, page, per_page, state.now()).await?;
    let answer = Json(MarketplaceJobList {
        careers_jobs: rows,
        meta: Meta::new(page, per_page, total),
    });
    Ok(marketplace_answer(viewer.is_some(), answer.into_response()))
}

/// An open job; with `Accept: application/ld+json`, its schema.org `JobPosting`.
#[utoipa::path(
    get,
    path = "/marketplace/careers/jobs/{id}",
    tag = "marketplace",
    summary = "Read an open job (JSON, or JSON-LD JobPosting)",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 200, description = "An open job; with `Accept: application/ld+json`, a schema.org JobPosting",
         content((MarketplaceJobOne = "application/json"), (Object = "application/ld+json"))),
        MalformedRequest, NotFound, Unavailable
    ),
    security((), ("user_session" = []))
)]
async fn show_job(
    ctx: MarketplaceCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    WantsJsonLd(json_ld): WantsJsonLd,
) -> Result<Response, ApiError> {
    let viewer = ctx.user.map(|u| u.id);
    let (mut rows, _) =
        job::marketplace_jobs(&state.db, viewer, Some(id), 1, 1, state.now()).await?;
    let job = rows.pop().ok_or(ApiError::NotFound)?;
    let response = if json_ld {
        let website = company::find_company(&state.db, job.job.company.id)
            .await?
            .and_then(|c| c.website);
        let posting = job_posting(&job.job, website.as_deref());
        (
            [(header::CONTENT_TYPE, "application/ld+json")],
            posting.to_string(),
        )
            .into_response()
    } else {
        Json(MarketplaceJobOne { careers_jobs: job }).into_response()
    };
    Ok(marketplace_answer(viewer.is_some(), response))
}
