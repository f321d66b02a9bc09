//! Prometheus metrics (CONTRACT §13) through the `metrics` facade, exported by
//! `metrics-exporter-prometheus` on a listener of their own (`METRICS_ADDR`; never the public
//! one). Without `METRICS_ADDR` no recorder is installed and every recording is a no-op.
//!
//! Series: `careers_http_requests_total{route,method,status}` and
//! `careers_http_request_duration_seconds{route,method}` (the route template, never a raw
//! path), `careers_logins_total{context,outcome}`, `careers_refreshes_total{context}`,
//! `careers_sessions_ended_total{context,reason}` (recorded by the `sessions` crate),
//! `careers_store_errors_total`, `careers_database_errors_total`,
//! `careers_password_hash_queue`, `careers_password_hash_refusals_total`,
//! `careers_mail_outbox_pending`, `careers_mail_delivery_failures_total`.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub const HTTP_REQUESTS: &str = "careers_http_requests_total";
pub const HTTP_DURATION: &str = "careers_http_request_duration_seconds";
pub const LOGINS: &str = "careers_logins_total";
pub const REFRESHES: &str = "careers_refreshes_total";
pub const STORE_ERRORS: &str = "careers_store_errors_total";
pub const DATABASE_ERRORS: &str = "careers_database_errors_total";
pub const HASH_QUEUE: &str = "careers_password_hash_queue";
pub const HASH_REFUSALS: &str = "careers_password_hash_refusals_total";
pub const OUTBOX_PENDING: &str = "careers_mail_outbox_pending";
pub const MAIL_FAILURES: &str = "careers_mail_delivery_failures_total";

/// Request durations: 0.5 ms to 10 s.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process's recorder (once) and returns what renders the exposition.
pub fn install() -> Result<PrometheusHandle, String> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), BUCKETS)
        .map_err(|e| e.to_string())?
        .install_recorder()
        .map_err(|e| e.to_string())?;
    Ok(HANDLE.get_or_init(|| handle).clone())
}

/// Whether a recorder is installed (the HTTP layer is added only then).
pub fn enabled() -> bool {
    HANDLE.get().is_some()
}

/// Serves `GET /metrics` on `addr` until the process ends; the bound address.
pub async fn serve(addr: SocketAddr, handle: PrometheusHandle) -> Result<SocketAddr, String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on METRICS_ADDR {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let router = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let handle = handle.clone();
            async move {
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "text/plain; version=0.0.4; charset=utf-8",
                    )],
                    handle.render(),
                )
            }
        }),
    );
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::error!(%error, "metrics listener failed");
        }
    });
    Ok(bound)
}

/// The HTTP series of a routed request: a `route_layer`, so it sees the route template.
pub async fn record_http(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned())
        .unwrap_or_default();
    let method = request.method().as_str().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    let elapsed = started.elapsed().as_secs_f64();
    let status = response.status().as_u16().to_string();
    ::metrics::counter!(HTTP_REQUESTS, "route" => route.clone(), "method" => method.clone(), "status" => status)
        .increment(1);
    ::metrics::histogram!(HTTP_DURATION, "route" => route, "method" => method).record(elapsed);
    response
}

/// A login's outcome (`success`, `invalid_credentials`, `mfa_required`, `rate_limited`,
/// `unavailable`).
pub fn login(context: &'static str, outcome: &'static str) {
    ::metrics::counter!(LOGINS, "context" => context, "outcome" => outcome).increment(1);
}

pub fn refresh(context: &'static str) {
    ::metrics::counter!(REFRESHES, "context" => context).increment(1);
}
