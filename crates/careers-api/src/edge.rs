//! The outermost layer: what every response gets, in one pass instead of five stacked layers.
//!
//! - a request id: the client's `x-request-id` when it sent one, else `<pid hex>-<counter>`
//!   (unique per process, no syscall, no RNG), set on the request for the handlers and echoed
//!   on the response;
//! - `Cache-Control: no-store` unless the handler chose otherwise, and
//!   `X-Content-Type-Options: nosniff` (docs/DECISIONS.md 20);
//! - one access-log event per request at info: method, path (never the query string), status,
//!   latency in microseconds and the request id (docs/DECISIONS.md 19).
//!
//! It replaces tower-http's request-id, set-header and trace layers, whose per-request span
//! and two formatted events cost about a tenth of the server's CPU (docs/PERFORMANCE.md).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Instant;

use axum::http::{HeaderName, HeaderValue, Method, Request, Response, header};
use tower::{Layer, Service};

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest client-sent request id that is kept; a longer one is replaced by a generated id.
const MAX_CLIENT_ID: usize = 128;

#[derive(Clone)]
pub struct EdgeLayer {
    ids: Arc<RequestIds>,
}

impl EdgeLayer {
    pub fn new() -> Self {
        Self {
            ids: Arc::new(RequestIds {
                next: AtomicU64::new(0),
                process: format!("{:x}", std::process::id()),
            }),
        }
    }
}

impl Default for EdgeLayer {
    fn default() -> Self {
        Self::new()
    }
}

struct RequestIds {
    next: AtomicU64,
    process: String,
}

impl RequestIds {
    fn make(&self) -> HeaderValue {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        HeaderValue::try_from(format!("{}-{n}", self.process))
            .expect("hex digits, a dash and decimal digits are a valid header value")
    }
}

impl<S> Layer<S> for EdgeLayer {
    type Service = Edge<S>;

    fn layer(&self, inner: S) -> Edge<S> {
        Edge {
            inner,
            ids: self.ids.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    ids: Arc<RequestIds>,
}

impl<S, B, R> Service<Request<B>> for Edge<S>
where
    S: Service<Request<B>, Response = Response<R>>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = EdgeFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let id = match request.headers().get(&REQUEST_ID) {
            Some(id) if id.len() <= MAX_CLIENT_ID && id.to_str().is_ok() => id.clone(),
            _ => {
                let id = self.ids.make();
                request.headers_mut().insert(REQUEST_ID, id.clone());
                id
            }
        };
        let log = tracing::enabled!(target: ACCESS, tracing::Level::INFO).then(|| AccessLine {
            method: request.method().clone(),
            // The path only: query strings may carry personal data (`?q=` an e-mail).
            path: request.uri().clone(),
            started: Instant::now(),
        });
        EdgeFuture {
            inner: self.inner.call(request),
            id: Some(id),
            log,
        }
    }
}

const ACCESS: &str = "careers_api::access";

struct AccessLine {
    method: Method,
    path: axum::http::Uri,
    started: Instant,
}

pin_project_lite::pin_project! {
    pub struct EdgeFuture<F> {
        #[pin]
        inner: F,
        id: Option<HeaderValue>,
        log: Option<AccessLine>,
    }
}

impl<F, R, E> Future for EdgeFuture<F>
where
    F: Future<Output = Result<Response<R>, E>>,
{
    type Output = Result<Response<R>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = ready!(this.inner.poll(cx))?;
        let id = this.id.take().expect("polled after completion");
        if let Some(line) = this.log.take() {
            tracing::info!(
                target: ACCESS,
                method = line.method.as_str(),
                path = line.path.path(),
                status = response.status().as_u16(),
                latency_us = line.started.elapsed().as_micros() as u64,
                request_id = id.to_str().unwrap_or("-"),
                "finished processing request"
            );
        }
        let headers = response.headers_mut();
        headers.insert(REQUEST_ID, id);
        headers
            .entry(header::CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("no-store"));
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        Poll::Ready(Ok(response))
    }
}
