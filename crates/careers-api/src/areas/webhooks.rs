//! Employer area, the company's webhook endpoints (CONTRACT §17): owners and admins only
//! (`EmployerCtx<Manager>`). A secret is in the answer that makes it and nowhere else.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{EmployerCtx, Manager};
use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, Unavailable, UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path, Query};
use crate::models::org::webhook_endpoint::{self, EndpointForm, Keys};
use crate::state::AppState;
use crate::views::{Json, Meta, PageParams};
use crate::views::{OrgWebhookDeliveryList, OrgWebhookEndpointList, OrgWebhookEndpointOne};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_endpoints, create_endpoint))
        .routes(routes!(update_endpoint, delete_endpoint))
        .routes(routes!(list_deliveries))
}

fn keys(state: &AppState) -> Keys<'_> {
    Keys {
        secrets: &state.secrets,
        transport: state.webhooks.transport(),
    }
}

/// Your company's webhook endpoints, without their secrets.
#[utoipa::path(
    get,
    path = "/org/webhook_endpoints",
    tag = "employer",
    summary = "List your company's webhook endpoints",
    responses(
        (status = 200, description = "The endpoints, oldest first (no secret)", body = OrgWebhookEndpointList),
        AreaErrors, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_endpoints(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
) -> Result<Json<OrgWebhookEndpointList>, ApiError> {
    Ok(Json(OrgWebhookEndpointList {
        org_webhook_endpoints: webhook_endpoint::list(&state.db, ctx.company_id).await?,
    }))
}

/// Adds a webhook endpoint; its signing secret is in this answer only.
#[utoipa::path(
    post,
    path = "/org/webhook_endpoints",
    tag = "employer",
    summary = "Add a webhook endpoint",
    request_body = EndpointForm,
    responses(
        (status = 201, description = "The endpoint with its secret, shown once", body = OrgWebhookEndpointOne),
        FormErrors, UnsafeAreaErrors, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn create_endpoint(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Form(form): Form<EndpointForm>,
) -> Result<(StatusCode, Json<OrgWebhookEndpointOne>), ApiError> {
    form.validate(true)?;
    let view =
        webhook_endpoint::create(&state.db, &keys(&state), ctx.company_id, form, state.now())
            .await?;
    tracing::info!(
        user_id = ctx.member.user_id,
        company_id = ctx.company_id,
        endpoint_id = view.id,
        "webhook endpoint added"
    );
    Ok((
        StatusCode::CREATED,
        Json(OrgWebhookEndpointOne {
            org_webhook_endpoints: view,
        }),
    ))
}

/// Changes a webhook endpoint; `rotate_secret: true` answers with the new secret, once, and the
/// old one keeps signing beside it for 24 hours.
#[utoipa::path(
    patch,
    path = "/org/webhook_endpoints/{id}",
    tag = "employer",
    summary = "Change a webhook endpoint or rotate its secret",
    params(("id" = i64, Path, description = "Record id")),
    request_body = EndpointForm,
    responses(
        (status = 200, description = "The endpoint; with the new secret after a rotation", body = OrgWebhookEndpointOne),
        FormErrors, UnsafeAreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn update_endpoint(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<EndpointForm>,
) -> Result<Json<OrgWebhookEndpointOne>, ApiError> {
    form.validate(false)?;
    let rotated = form.rotate_secret == Some(true);
    let view = webhook_endpoint::update(
        &state.db,
        &keys(&state),
        ctx.company_id,
        id,
        form,
        state.now(),
    )
    .await?;
    tracing::info!(
        user_id = ctx.member.user_id,
        company_id = ctx.company_id,
        endpoint_id = id,
        rotated,
        "webhook endpoint changed"
    );
    Ok(Json(OrgWebhookEndpointOne {
        org_webhook_endpoints: view,
    }))
}

/// Deletes a webhook endpoint with its deliveries.
#[utoipa::path(
    delete,
    path = "/org/webhook_endpoints/{id}",
    tag = "employer",
    summary = "Delete a webhook endpoint",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 204, description = "The endpoint and its deliveries are deleted"),
        MalformedRequest, UnsafeAreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn delete_endpoint(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<StatusCode, ApiError> {
    webhook_endpoint::delete(&state.db, ctx.company_id, id).await?;
    tracing::info!(
        user_id = ctx.member.user_id,
        company_id = ctx.company_id,
        endpoint_id = id,
        "webhook endpoint deleted"
    );
    Ok(StatusCode::NO_CONTENT)
}

/// The deliveries of a webhook endpoint, newest first.
#[utoipa::path(
    get,
    path = "/org/webhook_endpoints/{id}/deliveries",
    tag = "employer",
    summary = "List a webhook endpoint's deliveries",
    params(("id" = i64, Path, description = "Record id"), PageParams),
    responses(
        (status = 200, description = "The deliveries, newest first", body = OrgWebhookDeliveryList),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_deliveries(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Query(params): Query<PageParams>,
) -> Result<Json<OrgWebhookDeliveryList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (deliveries, total) =
        webhook_endpoint::deliveries(&state.db, ctx.company_id, id, page, per_page).await?;
    Ok(Json(OrgWebhookDeliveryList {
        org_webhook_deliveries: deliveries,
        meta: Meta::new(page, per_page, total),
    }))
}
