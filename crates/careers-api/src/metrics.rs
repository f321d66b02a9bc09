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
//! `careers_mail_outbox_pending`, `careers_mail_delivery_failures_total`, and with the Redis
//! session cache on, `careers_session_cache_lookups_total{result}`,
//! `careers_session_cache_resets_total` and `careers_session_cache_ready` (read from the
//! cache's own counters when scraped, so a request pays nothing for them), and with the
//! response cache on (a SQLite file), `careers_response_cache_lookups_total{result}` (read
//! from its counters in the same way).

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use sessions::SessionEngine;
use sessions::store::CacheStats;

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
pub const WEBHOOK_FAILURES: &str = "careers_webhook_delivery_failures_total";
pub const WEBHOOKS_PENDING: &str = "careers_webhook_deliveries_pending";
pub const MARKETPLACE_SEARCHES: &str = "careers_marketplace_searches_total";
pub const CACHE_LOOKUPS: &str = "careers_session_cache_lookups_total";
pub const CACHE_RESETS: &str = "careers_session_cache_resets_total";
pub const CACHE_READY: &str = "careers_session_cache_ready";
pub const CACHE_CONFIRMATIONS: &str = "careers_session_cache_confirmations_total";
pub const RESPONSE_CACHE_LOOKUPS: &str = "careers_response_cache_lookups_total";

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

/// Serves `GET /metrics` on `addr` until the process ends; the bound address. The session
/// cache of `sessions`' store and `response_cache` (its hits and misses, when it is on) are
/// read at each scrape.
pub async fn serve(
    addr: SocketAddr,
    handle: PrometheusHandle,
    sessions: Arc<SessionEngine>,
    response_cache: impl Fn() -> Option<(u64, u64)> + Clone + Send + Sync + 'static,
) -> Result<SocketAddr, String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on METRICS_ADDR {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let router = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let handle = handle.clone();
            record_session_cache(sessions.store().cache_stats());
            record_response_cache(response_cache());
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

/// The session cache's series, from its counters (nothing without the cache).
fn record_session_cache(stats: Option<CacheStats>) {
    let Some(stats) = stats else {
        return;
    };
    ::metrics::counter!(CACHE_LOOKUPS, "result" => "hit").absolute(stats.hits);
    ::metrics::counter!(CACHE_LOOKUPS, "result" => "miss").absolute(stats.misses);
    ::metrics::counter!(CACHE_RESETS).absolute(stats.resets);
    ::metrics::counter!(CACHE_CONFIRMATIONS).absolute(stats.confirmations);
    ::metrics::gauge!(CACHE_READY).set(if stats.ready { 1.0 } else { 0.0 });
}

/// The response cache's series, from its hits and misses (nothing without the cache).
fn record_response_cache(hits_and_misses: Option<(u64, u64)>) {
    let Some((hits, misses)) = hits_and_misses else {
        return;
    };
    ::metrics::counter!(RESPONSE_CACHE_LOOKUPS, "result" => "hit").absolute(hits);
    ::metrics::counter!(RESPONSE_CACHE_LOOKUPS, "result" => "miss").absolute(misses);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_series_are_their_counters() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        ::metrics::with_local_recorder(&recorder, || {
            record_session_cache(None);
            assert!(!handle.render().contains("careers_session_cache"));
            record_response_cache(None);
            assert!(!handle.render().contains("careers_response_cache"));
            record_response_cache(Some((9, 2)));
            for hits in [5, 7] {
                record_session_cache(Some(CacheStats {
                    ready: hits == 7,
                    hits,
                    misses: 3,
                    resets: 1,
                    confirmations: hits - 1,
                }));
            }
        });
        let text = handle.render();
        for line in [
            r#"careers_session_cache_lookups_total{result="hit"} 7"#,
            r#"careers_session_cache_lookups_total{result="miss"} 3"#,
            "careers_session_cache_resets_total 1",
            "careers_session_cache_confirmations_total 6",
            "careers_session_cache_ready 1",
            r#"careers_response_cache_lookups_total{result="hit"} 9"#,
            r#"careers_response_cache_lookups_total{result="miss"} 2"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
