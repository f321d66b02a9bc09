//! The session kit's demo page (issue "frontend kit"), served in development only at `/demo`:
//! log in as a demo account, see and end your sessions, refresh, log out. Not part of the API
//! (nor of its OpenAPI document): a page for frontend developers to copy from.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

const PAGE: &str = include_str!("demo/index.html");
const KIT: &str = include_str!("../../../clients/js/session-kit.js");

/// The page and the kit it imports.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/demo",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response()
            }),
        )
        .route(
            "/demo/session-kit.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    KIT,
                )
                    .into_response()
            }),
        )
}
