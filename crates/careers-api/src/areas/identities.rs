//! Authenticated user area (`/identities`, apart from the session routes and sign-up).

use axum::Json;
use axum::Router;
use axum::routing::get;

use super::UserCtx;
use crate::app::AppState;
use crate::error::ApiError;
use crate::extract::Path;
use crate::views::identities::UserView;

pub fn routes() -> Router<AppState> {
    Router::new().route("/identities/user/{id}", get(show_user))
}

/// The caller's own record, bare (specification §4.3). Any other id is 404, not 403, so the
/// endpoint does not confirm which ids exist.
async fn show_user(ctx: UserCtx, Path(id): Path<i64>) -> Result<Json<UserView>, ApiError> {
    if id != ctx.user.id {
        return Err(ApiError::NotFound);
    }
    Ok(Json(UserView::from(&ctx.user)))
}
