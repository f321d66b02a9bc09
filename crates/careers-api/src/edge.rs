//! The outermost layer: what every response gets, in one pass instead of five stacked layers.
//!
//! - a request id: the client's `x-request-id` when it sent one, else `<pid hex>-<counter>`
//!   (unique per process, no syscall, no RNG), given to the log lines written while the
//!   handler runs and echoed on the response;
//! - CORS for credentialed requests from exact origins (the session engine's origin policy,
//!   never `*`): `Access-Control-Allow-Origin` with the request's own origin when the policy
//!   allows it, `Access-Control-Allow-Credentials: true` and `Vary: Origin` on every response,
//!   and every `OPTIONS` request answered here as a preflight (200, the allowed methods and
//!   headers, `Max-Age` 600 s) without reaching the router: what tower-http's CORS layer,
//!   configured so, answered (`cors_answers_as_tower_http_did`), without its per-request header
//!   map, request rebuild and layer clone (docs/DECISIONS.md 66);
//! - `Cache-Control: no-store` unless the handler chose otherwise, and
//!   `X-Content-Type-Options: nosniff` (docs/DECISIONS.md 20);
//! - one access-log line per request at info: method, path (never the query string), status,
//!   latency in microseconds and the request id (docs/DECISIONS.md 19). With the JSON format
//!   the layer writes it straight into the log's batched sink, under the same filter, instead
//!   of as a tracing event (docs/DECISIONS.md 57); the tests check both ways write the same;
//! - a handler that panics answers the contract's 500 `internal` body and logs "handler
//!   panicked" at error level, instead of dropping the connection.
//!
//! It replaces tower-http's request-id, set-header, trace, catch-panic and CORS layers, whose
//! per-request span, two formatted events, boxed response bodies and header maps cost about a
//! tenth of the server's CPU (docs/PERFORMANCE.md).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Instant;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderName, HeaderValue, Method, Request, Response, header};
use axum::response::IntoResponse;
use tower::{Layer, Service};
use tracing::Level;

use sessions::OriginPolicy;

use crate::error::ApiError;
use crate::logging::{ACCESS_MESSAGE, ACCESS_TARGET, Access, Handling, LineSink};
use crate::throttle::client_address;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest client-sent request id that is kept; a longer one is replaced by a generated id.
const MAX_CLIENT_ID: usize = 128;

/// The methods and request headers a preflight allows, and how long a browser may keep its
/// answer.
const ALLOW_METHODS: &str = "GET,POST,PUT,PATCH,DELETE";
const ALLOW_HEADERS: &str = "content-type,x-csrf-token";
const PREFLIGHT_MAX_AGE: &str = "600";

#[derive(Clone)]
pub struct EdgeLayer {
    shared: Arc<Shared>,
}

/// What every copy of the edge layer shares (one per request, see [`Edge`]).
struct Shared {
    ids: RequestIds,
    origins: OriginPolicy,
    access: Option<&'static dyn LineSink>,
    /// `CLIENT_IP_HEADER` and `TRUSTED_PROXIES`: the client address every log line of a
    /// request names (`throttle::client_address`).
    client_ip_header: Option<HeaderName>,
    trusted_proxies: Vec<ipnet::IpNet>,
}

impl EdgeLayer {
    /// CORS answers the origins `origins` allows. Access lines go straight to the log's sink
    /// when `logging::init` chose the JSON format, else through tracing.
    pub fn new(origins: OriginPolicy) -> Self {
        Self::writing_access_to(crate::logging::access_sink(), origins)
    }

    fn writing_access_to(access: Option<&'static dyn LineSink>, origins: OriginPolicy) -> Self {
        let process = format!("{:x}-", std::process::id());
        Self {
            shared: Arc::new(Shared {
                ids: RequestIds {
                    next: AtomicU64::new(0),
                    prefix: process.into_bytes(),
                },
                origins,
                access,
                client_ip_header: None,
                trusted_proxies: Vec::new(),
            }),
        }
    }

    /// Reads the client address behind the listed proxies (CONTRACT §1) rather than the TCP
    /// peer's, for the log lines.
    pub fn behind_proxies(
        mut self,
        header: Option<HeaderName>,
        proxies: Vec<ipnet::IpNet>,
    ) -> Self {
        let shared = Arc::get_mut(&mut self.shared).expect("configured before it is shared");
        shared.client_ip_header = header;
        shared.trusted_proxies = proxies;
        self
    }
}

struct RequestIds {
    next: AtomicU64,
    /// The process id in hex and a dash.
    prefix: Vec<u8>,
}

impl RequestIds {
    /// `<pid hex>-<counter>`, without `format!` and a `String` (about a thousand instructions
    /// per request).
    fn make(&self) -> HeaderValue {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(n).as_bytes();
        let mut id = Vec::with_capacity(self.prefix.len() + digits.len());
        id.extend_from_slice(&self.prefix);
        id.extend_from_slice(digits);
        HeaderValue::from_bytes(&id)
            .expect("hex digits, a dash and decimal digits are a valid header value")
    }
}

impl<S> Layer<S> for EdgeLayer {
    type Service = Edge<S>;

    fn layer(&self, inner: S) -> Edge<S> {
        Edge {
            inner,
            shared: self.shared.clone(),
        }
    }
}

/// Cloned for every request (hyper's service adapter calls a clone): an `Arc` and the router.
#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S, B> Service<Request<B>> for Edge<S>
where
    S: Service<Request<B>, Response = Response<Body>>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = EdgeFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = &*self.shared;
        let headers = request.headers();
        let id = match headers.get(&REQUEST_ID) {
            Some(id) if !id.is_empty() && id.len() <= MAX_CLIENT_ID && id.to_str().is_ok() => {
                id.clone()
            }
            _ => shared.ids.make(),
        };
        let allow_origin = headers
            .get(header::ORIGIN)
            .filter(|origin| origin.to_str().is_ok_and(|o| shared.origins.allows(o)))
            .cloned();
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| info.0.ip());
        let client = client_address(
            peer,
            headers,
            shared.client_ip_header.as_ref(),
            &shared.trusted_proxies,
        );
        let line = AccessLine {
            id,
            client,
            method: request.method().clone(),
            // The path only: query strings may carry personal data (`?q=` an e-mail).
            path: request.uri().clone(),
            started: Instant::now(),
            allow_origin,
        };
        let access = shared.access;
        let inner = if request.method() == Method::OPTIONS {
            Inner::Preflight
        } else {
            // A handler that panics answers 500 instead of dropping the connection: whether it
            // panics while its future is made or while it runs.
            match panic::catch_unwind(AssertUnwindSafe(|| self.inner.call(request))) {
                Ok(future) => Inner::Handler { future },
                Err(_) => Inner::Panicked,
            }
        };
        EdgeFuture {
            inner,
            line: Some(line),
            access,
        }
    }
}

/// What the response and its log line need from the request.
struct AccessLine {
    id: HeaderValue,
    /// The request's client address, for the log lines its handler writes.
    client: Option<IpAddr>,
    method: Method,
    path: axum::http::Uri,
    started: Instant,
    /// The request's `Origin`, when CORS allows it.
    allow_origin: Option<HeaderValue>,
}

pin_project_lite::pin_project! {
    pub struct EdgeFuture<F> {
        #[pin]
        inner: Inner<F>,
        // Taken when the response is ready.
        line: Option<AccessLine>,
        access: Option<&'static dyn LineSink>,
    }
}

pin_project_lite::pin_project! {
    #[project = InnerProj]
    enum Inner<F> {
        Handler { #[pin] future: F },
        // An `OPTIONS` request: answered here.
        Preflight,
        // The handler panicked, while its future was made or polled: never polled again.
        Panicked,
    }
}

impl<F, E> Future for EdgeFuture<F>
where
    F: Future<Output = Result<Response<Body>, E>>,
{
    type Output = Result<Response<Body>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let line = this.line.as_ref().expect("polled after completion");
        let id = &line.id;
        let polled = match this.inner.as_mut().project() {
            InnerProj::Handler { future } => {
                let _handling = Handling::start(id, line.client);
                panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))).ok()
            }
            InnerProj::Preflight => Some(Poll::Ready(Ok(preflight()))),
            InnerProj::Panicked => None,
        };
        let mut response = match polled {
            Some(poll) => ready!(poll)?,
            None => {
                this.inner.set(Inner::Panicked);
                tracing::error!(request_id = id.to_str().unwrap_or("-"), "handler panicked");
                ApiError::Internal.into_response()
            }
        };
        let line = this.line.take().expect("polled after completion");
        let status = response.status();
        let latency_us = line.started.elapsed().as_micros() as u64;
        let request_id = line.id.to_str().unwrap_or("-");
        // A server error is logged at error level (and so written at once) even when info is
        // filtered out: what tower-http's trace layer did with its "response failed".
        macro_rules! access {
            ($level:expr) => {
                match *this.access {
                    // The same filter as the event's; its interest is cached per callsite.
                    Some(sink) => {
                        if tracing::enabled!(target: ACCESS_TARGET, $level) {
                            let access = Access {
                                level: $level,
                                method: line.method.as_str(),
                                path: line.path.path(),
                                status: status.as_u16(),
                                latency_us,
                                request_id,
                            };
                            crate::logging::write_access(sink, &access);
                        }
                    }
                    None => tracing::event!(
                        target: ACCESS_TARGET,
                        $level,
                        method = line.method.as_str(),
                        path = line.path.path(),
                        status = status.as_u16(),
                        latency_us,
                        request_id,
                        "{}",
                        ACCESS_MESSAGE
                    ),
                }
            };
        }
        if status.is_server_error() {
            access!(Level::ERROR);
        } else {
            access!(Level::INFO);
        }
        let headers = response.headers_mut();
        // Room for the six headers below at once, instead of the map growing on the way.
        headers.reserve(6);
        // CORS: `Vary` added to the handler's own, the rest set.
        headers.append(header::VARY, HeaderValue::from_static("origin"));
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
            HeaderValue::from_static("true"),
        );
        if let Some(origin) = line.allow_origin {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        }
        headers.insert(REQUEST_ID, line.id);
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

/// The answer to a CORS preflight, before the headers every response gets.
fn preflight() -> Response<Body> {
    let mut response = Response::new(Body::empty());
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOW_METHODS),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOW_HEADERS),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(PREFLIGHT_MAX_AGE),
    );
    response
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, header};
    use tower::{Layer, ServiceExt, service_fn};

    use sessions::OriginPolicy;

    use super::{EdgeLayer, REQUEST_ID};
    use crate::logging::{BatchedSink, Captured, LineSink};

    /// One request through the edge layer around a service answering `status`, logged at
    /// `max_level`, once with the access line written as a tracing event and once straight to
    /// the sink (as `logging::init` sets it up for the JSON format); asserts that both ways
    /// write the same lines but for timestamps and latencies. The response and the JSON log
    /// lines of the second way.
    async fn through_edge(
        status: StatusCode,
        request_id: Option<&str>,
        max_level: tracing::Level,
    ) -> (Response<Body>, Vec<serde_json::Value>) {
        let (_, by_event) = through_edge_by(false, status, request_id, max_level).await;
        let (response, direct) = through_edge_by(true, status, request_id, max_level).await;
        assert_eq!(comparable(&direct), comparable(&by_event));
        let lines = direct
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (response, lines)
    }

    /// `text` with every timestamp's and latency's value blanked, byte for byte otherwise.
    fn comparable(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = ["\"timestamp\":\"", "\"latency_us\":"]
            .iter()
            .filter_map(|key| rest.find(key).map(|i| i + key.len()))
            .min()
        {
            out.push_str(&rest[..at]);
            rest = rest[at..]
                .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || ".:-".contains(c));
        }
        out.push_str(rest);
        out
    }

    async fn through_edge_by(
        direct: bool,
        status: StatusCode,
        request_id: Option<&str>,
        max_level: tracing::Level,
    ) -> (Response<Body>, String) {
        let captured = Captured::default();
        let sink: &'static BatchedSink<Captured> =
            Box::leak(Box::new(BatchedSink::new(captured.clone())));
        let subscriber = tracing_subscriber::fmt()
            .event_format(crate::logging::JsonLines)
            .with_max_level(max_level)
            .with_writer(sink)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        // Tests run in parallel, each with its own subscriber: a callsite first reached while
        // no subscriber that wants it was alive is cached as disabled. Recompute under ours.
        tracing::callsite::rebuild_interest_cache();
        // The request comes through a trusted balancer at 10.0.0.1 for 203.0.113.9.
        let edge = EdgeLayer::writing_access_to(
            direct.then_some(sink as &dyn LineSink),
            OriginPolicy::new(None),
        )
        .behind_proxies(
            Some(HeaderName::from_static("x-forwarded-for")),
            vec!["10.0.0.0/8".parse().unwrap()],
        );
        let service = edge.layer(service_fn(move |_: Request<String>| async move {
            tracing::warn!(identity_id = 7i64, "inside the handler");
            tokio::task::yield_now().await;
            tracing::warn!("inside the handler, polled again");
            if status == StatusCode::IM_A_TEAPOT {
                panic!("a handler bug");
            }
            let mut response = Response::new(Body::empty());
            *response.status_mut() = status;
            Ok::<_, std::convert::Infallible>(response)
        }));
        let mut request = Request::get("/identities/user/1?q=someone@example.com")
            .header("x-forwarded-for", "203.0.113.9")
            .extension(super::ConnectInfo(super::SocketAddr::from((
                [10, 0, 0, 1],
                4000,
            ))));
        if let Some(id) = request_id {
            request = request.header(REQUEST_ID, id);
        }
        let response = service
            .oneshot(request.body(String::new()).unwrap())
            .await
            .unwrap();
        tracing::warn!("after the request");
        (response, captured.text())
    }

    /// The handler's own lines (two warnings, one before and one after a yield), then the
    /// edge layer's, then one written after the request.
    fn edge_lines(lines: &[serde_json::Value]) -> &[serde_json::Value] {
        assert!(lines.len() >= 3, "{lines:?}");
        assert_eq!(lines[0]["message"], "inside the handler");
        assert_eq!(lines[1]["message"], "inside the handler, polled again");
        let last = lines.last().unwrap();
        assert_eq!(last["message"], "after the request");
        assert!(last.get("request_id").is_none(), "{last}");
        &lines[2..lines.len() - 1]
    }

    #[tokio::test]
    async fn a_request_gets_one_info_line_without_its_query_string() {
        let (response, lines) =
            through_edge(StatusCode::OK, Some("lb-7"), tracing::Level::INFO).await;
        assert_eq!(response.headers()[REQUEST_ID], "lb-7");
        let lines = edge_lines(&lines);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line = &lines[0];
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["path"], "/identities/user/1");
        assert_eq!(line["status"], 200);
        assert_eq!(line["request_id"], "lb-7");
        assert!(!line.to_string().contains("someone"), "{line}");
    }

    #[tokio::test]
    async fn lines_written_while_a_handler_runs_carry_its_request_id() {
        let (response, lines) =
            through_edge(StatusCode::OK, Some("lb \"8\""), tracing::Level::INFO).await;
        assert_eq!(response.headers()[REQUEST_ID], "lb \"8\"");
        for line in &lines[..2] {
            assert_eq!(line["request_id"], "lb \"8\"", "{line}");
            assert_eq!(line["level"], "WARN");
        }
        assert_eq!(lines[0]["identity_id"], 7);
        // And its client address, the one behind the trusted balancer (CONTRACT §8).
        for line in &lines[..2] {
            assert_eq!(line["client_ip"], "203.0.113.9", "{line}");
        }
        assert!(lines.last().unwrap().get("client_ip").is_none());
        // The access line names it once, as its own field.
        let access = edge_lines(&lines)[0].to_string();
        assert_eq!(access.matches("request_id").count(), 1, "{access}");
        // A generated id, likewise.
        let (response, lines) = through_edge(StatusCode::OK, None, tracing::Level::INFO).await;
        let id = response.headers()[REQUEST_ID].to_str().unwrap().to_owned();
        assert_eq!(lines[0]["request_id"], id.as_str());
    }

    #[tokio::test]
    async fn server_errors_are_logged_at_error_even_when_info_is_off() {
        let (_, lines) =
            through_edge(StatusCode::SERVICE_UNAVAILABLE, None, tracing::Level::WARN).await;
        let lines = edge_lines(&lines);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0]["level"], "ERROR");
        assert_eq!(lines[0]["status"], 503);
        let (_, lines) = through_edge(StatusCode::NOT_FOUND, None, tracing::Level::WARN).await;
        let lines = edge_lines(&lines);
        assert!(lines.is_empty(), "client errors stay at info: {lines:?}");
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_500_with_the_contract_body() {
        let (response, lines) =
            through_edge(StatusCode::IM_A_TEAPOT, Some("lb-9"), tracing::Level::INFO).await;
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()[REQUEST_ID], "lb-9");
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        // CORS headers too, so that a browser can read the error.
        assert_eq!(
            response.headers()["access-control-allow-credentials"],
            "true"
        );
        assert_eq!(response.headers()["vary"], "origin");
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "internal", "{body}");
        let lines = edge_lines(&lines);
        let messages: Vec<_> = lines.iter().map(|l| l["message"].clone()).collect();
        assert_eq!(
            messages,
            ["handler panicked", "finished processing request"]
        );
        assert_eq!(lines[0]["level"], "ERROR");
        assert_eq!(lines[0]["request_id"], "lb-9");
        assert_eq!(lines[1]["status"], 500);
    }

    #[tokio::test]
    async fn a_panic_while_the_handler_future_is_made_answers_500() {
        // A subscriber, so that this test cannot leave the panic line's callsite disabled.
        let _guard = tracing::subscriber::set_default(tracing_subscriber::fmt().finish());
        let service =
            EdgeLayer::new(OriginPolicy::new(None)).layer(tower::service_fn(|_: Request<Body>| {
                panic!("before any future");
                #[allow(unreachable_code)]
                std::future::ready(Ok::<Response<Body>, std::convert::Infallible>(
                    Response::new(Body::empty()),
                ))
            }));
        let response = service
            .oneshot(Request::get("/").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[tokio::test]
    async fn an_empty_client_request_id_is_replaced() {
        let (response, _) = through_edge(StatusCode::OK, Some(""), tracing::Level::INFO).await;
        assert!(!response.headers()[REQUEST_ID].is_empty());
    }

    #[test]
    fn generated_request_ids_are_the_process_id_and_a_counter() {
        let layer = EdgeLayer::writing_access_to(None, OriginPolicy::new(None));
        let ids = &layer.shared.ids;
        let pid = format!("{:x}", std::process::id());
        for expected in [0, 1, 2] {
            assert_eq!(ids.make().to_str().unwrap(), format!("{pid}-{expected}"));
        }
        for n in [9, 10, 99, 100, 1_000_007, u64::MAX] {
            ids.next.store(n, std::sync::atomic::Ordering::Relaxed);
            assert_eq!(ids.make().to_str().unwrap(), format!("{pid}-{n}"));
        }
    }

    /// tower-http's CORS layer as `app.rs` configured it until DECISIONS 66: the reference.
    fn tower_http_cors(origins: OriginPolicy) -> tower_http::cors::CorsLayer {
        use tower_http::cors::{AllowOrigin, CorsLayer};
        CorsLayer::new()
            .allow_origin(AllowOrigin::predicate(move |origin, _| {
                origin.to_str().is_ok_and(|o| origins.allows(o))
            }))
            .allow_credentials(true)
            .allow_methods([
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ])
            .allow_headers([
                header::CONTENT_TYPE,
                HeaderName::from_static("x-csrf-token"),
            ])
            .max_age(std::time::Duration::from_secs(600))
    }

    /// Status, body and every CORS header (`Vary` and `Access-Control-*`, all their values) of
    /// `service`'s answer to `request`.
    async fn cors_answer<S>(
        service: S,
        request: Request<Body>,
    ) -> (StatusCode, Vec<u8>, Vec<String>)
    where
        S: tower::Service<
                Request<Body>,
                Response = Response<Body>,
                Error = std::convert::Infallible,
            >,
    {
        let response = service.oneshot(request).await.unwrap();
        let mut cors: Vec<String> = response
            .headers()
            .iter()
            .filter(|(name, _)| {
                name.as_str() == "vary" || name.as_str().starts_with("access-control-")
            })
            .map(|(name, value)| format!("{name}: {}", String::from_utf8_lossy(value.as_bytes())))
            .collect();
        cors.sort();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, body.to_vec(), cors)
    }

    #[tokio::test]
    async fn cors_answers_as_tower_http_did() {
        let policies = [
            OriginPolicy::new(Some(vec![
                "https://app.example.com".into(),
                "http://localhost:5173".into(),
            ])),
            OriginPolicy::new(None),
        ];
        let origins: [Option<&[u8]>; 10] = [
            None,
            Some(b"https://app.example.com"),
            Some(b"http://localhost:5173"),
            Some(b"http://localhost:5173/"),
            Some(b"http://127.0.0.1:8080"),
            Some(b"https://evil.example"),
            Some(b"null"),
            Some(b""),
            Some(b"HTTPS://APP.EXAMPLE.COM"),
            Some(b"https://app.example.com\xff"),
        ];
        let methods = [
            Method::GET,
            Method::HEAD,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
            Method::OPTIONS,
        ];
        let asks: [&[(&str, &str)]; 3] = [
            &[],
            &[("access-control-request-method", "PATCH")],
            &[
                ("access-control-request-method", "DELETE"),
                (
                    "access-control-request-headers",
                    "x-csrf-token, content-type",
                ),
            ],
        ];
        // A handler with a `Vary` of its own, which CORS must add to, not replace.
        let handler = tower::service_fn(|_: Request<Body>| async {
            let mut response = Response::new(Body::from("handled"));
            *response.status_mut() = StatusCode::CREATED;
            response
                .headers_mut()
                .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
            Ok::<_, std::convert::Infallible>(response)
        });
        let mut compared = 0;
        for policy in &policies {
            let ours = EdgeLayer::writing_access_to(None, policy.clone()).layer(handler);
            let reference = tower_http_cors(policy.clone()).layer(handler);
            for origin in origins {
                for method in &methods {
                    for ask in asks {
                        let request = || {
                            let mut request = Request::builder()
                                .method(method.clone())
                                .uri("/identities/user/1");
                            if let Some(origin) = origin {
                                request = request.header(
                                    header::ORIGIN,
                                    HeaderValue::from_bytes(origin).unwrap(),
                                );
                            }
                            for (name, value) in ask {
                                request = request.header(*name, *value);
                            }
                            request.body(Body::empty()).unwrap()
                        };
                        let expected = cors_answer(reference.clone(), request()).await;
                        let answer = cors_answer(ours.clone(), request()).await;
                        assert_eq!(answer, expected, "{method} from {origin:?} with {ask:?}");
                        compared += 1;
                    }
                }
            }
        }
        assert_eq!(compared, 2 * 10 * 7 * 3);
    }
}
