//! Response shapes. Each follows one model and nests associations under their names; none is
//! an entity, so columns such as `password_digest` can never leak.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

mod envelopes;
pub use envelopes::*;

/// A JSON response: what `axum::Json` answers (`Content-Type: application/json`, serde_json's
/// bytes), serialised into a `Vec` of 1 KiB, which holds most bodies whole, where axum's
/// writer starts at 128 bytes and grows a page of 25 applications by six copies.
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        match json_bytes(&self.0) {
            Ok(body) => JsonBytes(body).into_response(),
            Err(error) => error.into_response(),
        }
    }
}

/// `value` written as [`Json`] answers it, for an answer that is kept ([`crate::db::Db::answer`]).
pub fn json_bytes(value: &impl Serialize) -> Result<Bytes, ApiError> {
    let mut body = Vec::with_capacity(1024);
    match serde_json::to_writer(&mut body, value) {
        Ok(()) => Ok(Bytes::from(body)),
        // A view that cannot be written (none of ours can: no map has non-string keys) is
        // the server's fault; the contract's 500, whose own body always serialises.
        Err(error) => {
            tracing::error!(%error, "a response body could not be serialised");
            Err(ApiError::Internal)
        }
    }
}

/// A JSON response of bytes already written ([`json_bytes`]).
pub struct JsonBytes(pub Bytes);

impl IntoResponse for JsonBytes {
    fn into_response(self) -> Response {
        let mut response = Response::new(Body::from(self.0));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}

/// `?page=` (from 1) and `?per_page=` (default 25, at most 100).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// Page number, from 1.
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u64>,
    /// Items per page, 1 to 100 (default 25).
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u64>,
}

impl PageParams {
    pub const DEFAULT_PER_PAGE: u64 = 25;
    pub const MAX_PER_PAGE: u64 = 100;

    /// The page and page size, or a 400 for values out of range.
    pub fn resolve(&self) -> Result<(u64, u64), ApiError> {
        let page = self.page.unwrap_or(1);
        let per_page = self.per_page.unwrap_or(Self::DEFAULT_PER_PAGE);
        if page == 0 || page > 1_000_000 {
            return Err(ApiError::MalformedRequest(
                "page must be between 1 and 1000000".into(),
            ));
        }
        if per_page == 0 || per_page > Self::MAX_PER_PAGE {
            return Err(ApiError::MalformedRequest(
                "per_page must be between 1 and 100".into(),
            ));
        }
        Ok((page, per_page))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use axum::response::IntoResponse;
    use serde_json::json;

    /// The same status, headers and bytes.
    pub(crate) async fn same_answer(
        ours: axum::response::Response,
        theirs: axum::response::Response,
    ) {
        assert_eq!(ours.status(), theirs.status());
        assert_eq!(ours.headers(), theirs.headers());
        let ours = axum::body::to_bytes(ours.into_body(), usize::MAX)
            .await
            .unwrap();
        let theirs = axum::body::to_bytes(theirs.into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(ours, theirs);
    }

    /// What `axum::Json` answers, whose place it takes: written at once, or kept as bytes.
    async fn answers_as_axum_json<T: serde::Serialize>(value: T) {
        same_answer(
            super::Json(&value).into_response(),
            axum::Json(&value).into_response(),
        )
        .await;
        same_answer(
            super::JsonBytes(super::json_bytes(&value).unwrap()).into_response(),
            axum::Json(&value).into_response(),
        )
        .await;
    }

    #[tokio::test]
    async fn json_answers_as_axum_json_does() {
        let page = json!({"items": (0..40).map(|i| json!({"id": i, "text": "\"quoted\"\n\u{1}é"}))
            .collect::<Vec<_>>(), "meta": {"page": 1}});
        for value in [page, json!({}), json!("x")] {
            answers_as_axum_json(value).await;
        }
        // Shapes serde_json writes in its own way: a map with integer keys, a raw value.
        answers_as_axum_json(std::collections::BTreeMap::from([(1, "one"), (2, "two")])).await;
        answers_as_axum_json(serde_json::value::RawValue::from_string("[1, 2]".into()).unwrap())
            .await;
    }

    /// A value serde_json refuses is the contract's 500, not a half-written body.
    #[tokio::test]
    async fn json_that_cannot_be_written_is_the_internal_error() {
        let refused = std::collections::BTreeMap::from([((1, 2), "a map with tuple keys")]);
        let response = super::Json(refused).into_response();
        assert_eq!(response.status(), 500);
        assert_eq!(response.headers()["content-type"], "application/json");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "internal");
    }
}
