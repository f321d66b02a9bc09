//! Marketplace area (`/marketplace`): public, personalised when a user is identified.

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::MarketplaceCtx;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::{MalformedRequest, NotFound, Unavailable};
use crate::extract::{MultiQuery, Path, WantsJsonLd};
use crate::models::careers::job;
use crate::models::careers::job::MarketplaceJobView;
use crate::models::careers::job_posting::job_posting;
use crate::models::careers::search::{BadSearch, Facets, SearchParams};
use crate::models::org::company;
use crate::state::AppState;
use crate::views::{Json, PageParams};
use crate::views::{MarketplaceJobOne, PublicCompanyOne};

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
    ctx: MarketplaceCtx,
    State(state): State<AppState>,
    Path(slug): Path<String>,
) -> Result<Response, ApiError> {
    let company = company::public_company(&state.db, &slug)
        .await?
        .ok_or(ApiError::NotFound)?;
    let answer = Json(PublicCompanyOne {
        org_companies: company,
    });
    Ok(marketplace_answer(
        ctx.user.is_some(),
        answer.into_response(),
    ))
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

/// `meta` of a search: the page, the total and the facets.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct SearchMeta {
    pub page: u64,
    pub per_page: u64,
    pub total: u64,
    pub facets: Facets,
}

/// `GET /marketplace/careers/jobs`.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct MarketplaceSearch {
    pub careers_jobs: Vec<MarketplaceJobView>,
    pub meta: SearchMeta,
}

/// The marketplace's search: open jobs of companies that are not suspended (CONTRACT §15).
#[utoipa::path(
    get,
    path = "/marketplace/careers/jobs",
    tag = "marketplace",
    summary = "Search open jobs",
    params(SearchParams),
    responses(
        (status = 200, description = "A page of open jobs with the facets", body = MarketplaceSearch),
        MalformedRequest, Unavailable
    ),
    security((), ("user_session" = []))
)]
async fn list_jobs(
    ctx: MarketplaceCtx,
    State(state): State<AppState>,
    MultiQuery(params): MultiQuery<SearchParams>,
) -> Result<Response, ApiError> {
    let (page, per_page) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .resolve()?;
    let search = params
        .check(page, per_page)
        .map_err(|BadSearch(message)| ApiError::MalformedRequest(message))?;
    let viewer = ctx.user.map(|u| u.id);
    let (rows, total, facets) =
        job::marketplace_search(&state.db, viewer, &search, state.now()).await?;
    ::metrics::counter!(crate::metrics::MARKETPLACE_SEARCHES).increment(1);
    let answer = Json(MarketplaceSearch {
        careers_jobs: rows,
        meta: SearchMeta {
            page,
            per_page,
            total,
            facets,
        },
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
    let job = job::marketplace_job(&state.db, viewer, id, state.now())
        .await?
        .ok_or(ApiError::NotFound)?;
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
