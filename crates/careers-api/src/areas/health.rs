//! Liveness and readiness. Ready checks the database and the token store.

use std::time::Duration;

use axum::extract::State;
use serde_json::{Value, json};
use sessions::TokenStore;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::error::responses::Unavailable;
use crate::state::AppState;
use crate::views::Json;

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(live))
        .routes(routes!(ready))
}

#[utoipa::path(
    get,
    path = "/health/live",
    tag = "health",
    summary = "Liveness",
    responses(
        (status = 200, description = "The process is up", body = serde_json::Value)
    )
)]
async fn live() -> Json<Value> {
    Json(json!({ "status": "live" }))
}

#[utoipa::path(
    get,
    path = "/health/ready",
    tag = "health",
    summary = "Readiness",
    responses(
        (status = 200, description = "Database and token store reachable", body = serde_json::Value),
        Unavailable
    )
)]
async fn ready(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let (database, store) = tokio::join!(
        tokio::time::timeout(CHECK_TIMEOUT, state.db.ping()),
        tokio::time::timeout(CHECK_TIMEOUT, state.sessions.store().ping()),
    );
    let database_up = matches!(database, Ok(Ok(())));
    let store_up = matches!(store, Ok(Ok(())));
    if database_up && store_up {
        Ok(Json(
            json!({ "status": "ready", "database": "up", "token_store": "up" }),
        ))
    } else {
        tracing::error!(database_up, store_up, "not ready");
        Err(ApiError::Unavailable)
    }
}
