//! The one JSON body extractor and the path and query extractors, whose rejections are the
//! contract's errors instead of axum's plain-text ones.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Largest accepted request body.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A JSON body: `application/json` only (415 otherwise, which also stops login CSRF through
/// HTML forms), at most 64 KiB (413), syntax and type errors 400.
pub struct Json<T>(pub T);

impl<S, T> FromRequest<S> for Json<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers()) {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge
            } else {
                ApiError::MalformedRequest("request body could not be read".into())
            }
        })?;
        serde_json::from_slice(&bytes).map(Json).map_err(|error| {
            ApiError::MalformedRequest(match error.classify() {
                serde_json::error::Category::Data => {
                    format!(
                        "a value has the wrong JSON type (line {}, column {})",
                        error.line(),
                        error.column()
                    )
                }
                _ => "request body is not valid JSON".into(),
            })
        })
    }
}

/// A body that may be left out: a request without `Content-Type` and without a body is `None`;
/// anything else is read as [`Json`] (a body of another type is still 415).
impl<S, T> OptionalFromRequest<S> for Json<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        if req.headers().contains_key(header::CONTENT_TYPE) {
            return <Self as FromRequest<S>>::from_request(req, state)
                .await
                .map(Some);
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|_| ApiError::UnsupportedMediaType)?;
        if bytes.is_empty() {
            Ok(None)
        } else {
            Err(ApiError::UnsupportedMediaType)
        }
    }
}

fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// Path parameters; a value that does not parse is a 400.
pub struct Path<T>(pub T);

impl<S, T> FromRequestParts<S> for Path<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Path(value))
            .map_err(|_| ApiError::MalformedRequest("bad path parameter".into()))
    }
}

/// Query parameters; a value that does not parse is a 400.
pub struct Query<T>(pub T);

impl<S, T> FromRequestParts<S> for Query<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| Query(value))
            .map_err(|_| ApiError::MalformedRequest("bad query parameter".into()))
    }
}

/// Query parameters whose keys may repeat (`?country_code=DE&country_code=AT` into a `Vec`), by
/// `serde_html_form`; a value that does not parse is a 400.
pub struct MultiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for MultiQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        serde_html_form::from_str(parts.uri.query().unwrap_or_default())
            .map(MultiQuery)
            .map_err(|_| ApiError::MalformedRequest("bad query parameter".into()))
    }
}

/// The request's `Host`, which the session cookies' `Domain` follows (CONTRACT §2), for a
/// handler that replaces a session's credentials outside the session routes.
pub struct RequestHost(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for RequestHost {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(
            parts
                .headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        ))
    }
}

/// Whether the request's `Accept` asks for JSON-LD (`application/ld+json`): the marketplace's job
/// page answers a schema.org `JobPosting` then (CONTRACT §15).
pub struct WantsJsonLd(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for WantsJsonLd {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let wants = parts
            .headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|item| {
                let mut parts = item.split(';');
                let media = parts.next().unwrap_or("").trim();
                let refused = parts.any(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .and_then(|q| q.trim().parse::<f32>().ok())
                        == Some(0.0)
                });
                media.eq_ignore_ascii_case("application/ld+json") && !refused
            });
        Ok(Self(wants))
    }
}
