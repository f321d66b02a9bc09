//! Liveness and readiness. Ready checks the database and the token store.

use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde_json::{Value, json};
use sessions::TokenStore;

use crate::app::AppState;
use crate::error::ApiError;

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/health/live", get(live))
        .route("/health/ready", get(ready))
}

async fn live() -> Json<Value> {
    Json(json!({ "status": "live" }))
}

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
