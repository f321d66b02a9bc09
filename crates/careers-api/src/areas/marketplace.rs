//! Marketplace area (`/marketplace`): public, personalised when a user is identified.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use super::MarketplaceCtx;
use crate::app::AppState;
use crate::db;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::views::{MarketplaceJobList, MarketplaceJobOne, Meta, PageParams};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/marketplace/careers/jobs", get(list_jobs))
        .route("/marketplace/careers/jobs/{id}", get(show_job))
}

async fn list_jobs(
    ctx: MarketplaceCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<MarketplaceJobList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let viewer = ctx.user.map(|u| u.id);
    let (rows, total) =
        db::careers::marketplace_jobs(&state.db, viewer, None, page, per_page).await?;
    Ok(Json(MarketplaceJobList {
        careers_jobs: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

async fn show_job(
    ctx: MarketplaceCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<MarketplaceJobOne>, ApiError> {
    let viewer = ctx.user.map(|u| u.id);
    let (mut rows, _) = db::careers::marketplace_jobs(&state.db, viewer, Some(id), 1, 1).await?;
    let job = rows.pop().ok_or(ApiError::NotFound)?;
    Ok(Json(MarketplaceJobOne { careers_jobs: job }))
}
