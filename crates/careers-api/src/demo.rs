//! The session kit's demo pages, served in development only: `/demo` (log in as a demo account,
//! see and end your sessions, refresh, log out) and `/demo/search` (the marketplace's search
//! with its facets, CONTRACT §15). Not part of the API (nor of its OpenAPI document): pages for
//! frontend developers to copy from.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

const PAGE: &str = include_str!("demo/index.html");
const SEARCH: &str = include_str!("demo/search.html");
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
            "/demo/search",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], SEARCH).into_response()
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
