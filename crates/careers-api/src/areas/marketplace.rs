//! Marketplace area (`/marketplace`): public, personalised when a user is identified.

use axum::extract::State;

use super::MarketplaceCtx;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::{MalformedRequest, NotFound, Unavailable};
use crate::extract::{Path, Query};
use crate::models::careers::job;
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
) -> Result<Json<PublicCompanyOne>, ApiError> {
    let company = company::public_company(&state.db, &slug)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(PublicCompanyOne {
        org_companies: company,
    }))
}

#[utoipa::path(
    get,
    path = "/marketplace/careers/jobs",
    tag = "marketplace",
    summary = "List published jobs",
    params(PageParams),
    responses(
        (status = 200, description = "Published jobs", body = MarketplaceJobList),
        MalformedRequest, Unavailable
    ),
    security((), ("user_session" = []))
)]
async fn list_jobs(
    ctx: MarketplaceCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<MarketplaceJobList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let viewer = ctx.user.map(|u| u.id);
    let (rows, total) = job::marketplace_jobs(&state.db, viewer, None, page, per_page).await?;
    Ok(Json(MarketplaceJobList {
        careers_jobs: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

#[utoipa::path(
    get,
    path = "/marketplace/careers/jobs/{id}",
    tag = "marketplace",
    summary = "Read a published job",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 200, description = "A published job", body = MarketplaceJobOne),
        MalformedRequest, NotFound, Unavailable
    ),
    security((), ("user_session" = []))
)]
async fn show_job(
    ctx: MarketplaceCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<MarketplaceJobOne>, ApiError> {
    let viewer = ctx.user.map(|u| u.id);
    let (mut rows, _) = job::marketplace_jobs(&state.db, viewer, Some(id), 1, 1).await?;
    let job = rows.pop().ok_or(ApiError::NotFound)?;
    Ok(Json(MarketplaceJobOne { careers_jobs: job }))
}
