//! Team (admin) area (`/admin-user`).

use axum::Json;
use axum::Router;
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::AdminCtx;
use crate::app::AppState;
use crate::db;
use crate::error::ApiError;
use crate::extract::Query;
use crate::views::identities::UserView;
use crate::views::{Meta, PageParams};

pub fn routes() -> Router<AppState> {
    Router::new().route("/admin-user/identities/users", get(list_users))
}

#[derive(Debug, Deserialize)]
struct UserListParams {
    q: Option<String>,
    page: Option<u64>,
    per_page: Option<u64>,
}

#[derive(Serialize)]
struct UserList {
    identities_users: Vec<UserView>,
    meta: Meta,
}

/// Users for a selection list; `?q=` filters by name or e-mail.
async fn list_users(
    _admin: AdminCtx,
    axum::extract::State(state): axum::extract::State<AppState>,
    Query(params): Query<UserListParams>,
) -> Result<Json<UserList>, ApiError> {
    let (page, per_page) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .resolve()?;
    let (rows, total) =
        db::identities::list_users(&state.db, params.q.as_deref(), page, per_page).await?;
    Ok(Json(UserList {
        identities_users: rows.iter().map(UserView::from).collect(),
        meta: Meta {
            page,
            per_page,
            total,
        },
    }))
}
