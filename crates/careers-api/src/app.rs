//! The service: the router inside its edge layer, shared by `serve` and the tests, and the
//! server's background work (the memory store's sweeper, the mail worker).

use std::future::Future;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request};
use axum::{Router, ServiceExt};
use sessions::AnyStore;
use tower::Layer;

use crate::db::DataError;
use crate::edge::{Edge, EdgeLayer};
use crate::error::ApiError;
use crate::extract::BODY_LIMIT;
use crate::mail;
use crate::models::identities::password_reset::{self, ResetMessage};
use crate::state::AppState;

/// The service `serve` runs: the router inside the edge layer (request id, headers, CORS,
/// access line, panics). It wraps the router instead of being added with `Router::layer`,
/// which puts a copy into every route's service, and axum clones the route's service for each
/// request (docs/PERFORMANCE.md).
pub type App = Edge<Router>;

pub fn build_app(state: AppState) -> App {
    let edge = EdgeLayer::new(state.sessions.origins().clone()).behind_proxies(
        state.config.client_ip_header.clone(),
        state.config.trusted_proxies.clone(),
    );
    let (router, _) = crate::openapi::router().split_for_parts();
    // Swagger UI from the binary (`vendored`: no CDN, nothing fetched at build time), reading
    // the document the router already serves at /openapi.json.
    let router = if state.config.api_docs {
        router.merge(
            utoipa_swagger_ui::SwaggerUi::new("/docs")
                .config(utoipa_swagger_ui::Config::from("/openapi.json")),
        )
    } else {
        router
    };
    // The session kit's demo page, in development only (not part of the API).
    let router = if state.config.env.is_development() {
        router.merge(crate::demo::routes())
    } else {
        router
    };
    // The HTTP series need the route template, which only a route layer sees.
    let router = if crate::metrics::enabled() {
        router.route_layer(axum::middleware::from_fn(crate::metrics::record_http))
    } else {
        router
    };
    let router = router
        .fallback(|| async { ApiError::NoRoute })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state);
    edge.layer(router)
}

/// Serves until `shutdown` resolves; in-flight requests finish, new connections are refused.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: App,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        ServiceExt::<Request>::into_make_service_with_connect_info::<std::net::SocketAddr>(app),
    )
    .with_graceful_shutdown(shutdown)
    .await
}

/// Periodically drops expired records from an in-memory store.
pub fn spawn_memory_sweeper(state: &AppState) {
    if let AnyStore::Memory(_) = state.sessions.store() {
        let engine = state.sessions.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                if let AnyStore::Memory(store) = engine.store() {
                    store.sweep(engine.now());
                }
            }
        });
    }
}

/// How often the stored status of expired open jobs is set to `closed` (CONTRACT §15: within
/// 60 s; every view reads them closed at once).
const JOB_CLOSER_PERIOD: Duration = Duration::from_secs(30);

/// Starts the task that stores `closed` for open jobs past their `valid_through`.
pub fn spawn_job_closer(state: &AppState) {
    let state = state.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(JOB_CLOSER_PERIOD);
        loop {
            tick.tick().await;
            match crate::models::careers::job::close_expired(&state.db, state.now()).await {
                Ok(0) => {}
                Ok(closed) => tracing::info!(closed, "expired jobs closed"),
                Err(error) => tracing::warn!(%error, "closing expired jobs failed; retrying"),
            }
        }
    });
}

/// How often the webhook worker looks for due deliveries (CONTRACT §17: the first try within
/// 10 s of the commit).
const WEBHOOK_POLL: Duration = Duration::from_secs(1);
/// The least time between two rounds of the webhook worker.
const WEBHOOK_ROUND_GAP: Duration = Duration::from_millis(50);
/// The webhook worker's own connections: a round's statements and the tries' records.
const WEBHOOK_CONNECTIONS: u32 = 2;

/// Starts the process's webhook worker: a round every second and whenever a try ends, each
/// starting the tries there is room for (`webhooks::Deliverer`); a failed round (the database
/// down) is tried again. The worker, its tries and its statements run on a runtime of their own
/// with connections of their own, on a thread in the idle scheduling class (as the password
/// hashers'): a request's thread preempts it at once, so deliveries take only the time the API
/// leaves (DECISIONS 140). It stops with the runtime that started it.
pub fn spawn_webhook_worker(state: &AppState) {
    let state = state.clone();
    // Dropped with the starting runtime's tasks: the worker then ends (a test's app, say).
    let (alive, mut ended) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _alive = alive;
        std::future::pending::<()>().await;
    });
    let started = std::thread::Builder::new()
        .name("webhooks".into())
        .spawn(move || {
            crate::password::lower_priority();
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    tracing::error!(%error, "webhooks: no runtime; deliveries wait");
                    return;
                }
            };
            runtime.block_on(webhook_rounds(state, &mut ended));
        });
    if let Err(error) = started {
        tracing::error!(%error, "webhooks: no worker thread; deliveries wait");
    }
}

/// The worker's loop, until `ended`.
async fn webhook_rounds(state: AppState, ended: &mut tokio::sync::oneshot::Receiver<()>) {
    let db = loop {
        let (url, schema) = (&state.config.database_url.0, &state.config.database_schema);
        match crate::db::connect_worker(url, schema.as_deref(), WEBHOOK_CONNECTIONS).await {
            Ok(db) => break db,
            Err(error) => {
                tracing::warn!(%error, "webhooks: cannot connect; retrying");
                tokio::select! {
                    _ = &mut *ended => return,
                    () = tokio::time::sleep(WEBHOOK_POLL) => {}
                }
            }
        }
    };
    let mut counted = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = &mut *ended => return,
            () = tokio::time::sleep(WEBHOOK_POLL) => {}
            () = state.webhooks.woken() => {}
        }
        if let Err(error) = state.webhooks.round(&db).await {
            tracing::warn!(%error, "webhooks: round failed; retrying");
            continue;
        }
        // Rounds at most every WEBHOOK_ROUND_GAP: the tries that end meanwhile are taken over,
        // and recorded, together.
        tokio::time::sleep(WEBHOOK_ROUND_GAP).await;
        // The gauge at most once a poll: rounds follow every try's end.
        if crate::metrics::enabled() && counted.elapsed() >= WEBHOOK_POLL {
            counted = tokio::time::Instant::now();
            match crate::webhooks::pending(&db).await {
                Ok(pending) => {
                    ::metrics::gauge!(crate::metrics::WEBHOOKS_PENDING).set(pending as f64);
                }
                Err(error) => tracing::warn!(%error, "webhooks: could not count pending"),
            }
        }
    }
}

/// How often the mail worker looks for due work when nobody wakes it.
const MAIL_POLL: Duration = Duration::from_secs(1);

/// Starts the process's mail worker (CONTRACT §10): every pending message is due at once, then
/// a round runs whenever a request wakes it and at least every second.
pub fn spawn_mail_worker(state: &AppState) {
    let state = state.clone();
    tokio::spawn(async move {
        if let Err(error) = mail::make_pending_due(&state.db, state.now()).await {
            tracing::warn!(%error, "mail outbox: could not reschedule pending messages");
        }
        loop {
            if let Err(error) = mail_round(&state).await {
                tracing::warn!(%error, "mail outbox: round failed; retrying");
            }
            tokio::select! {
                () = state.mail.woken() => {}
                () = tokio::time::sleep(MAIL_POLL) => {}
            }
        }
    });
}

/// One round of the mail worker: resolve pending reset requests, then deliver due messages.
pub async fn mail_round(state: &AppState) -> Result<(), DataError> {
    let now = state.now();
    let message = ResetMessage {
        url_template: state.mail.reset_url(),
        secrets: &state.secrets,
    };
    while password_reset::resolve_requests(&state.db, &message, now, mail::BATCH).await? > 0 {}
    mail::deliver_due(&state.db, &state.mail, &state.secrets, now).await?;
    if crate::metrics::enabled() {
        let pending = mail::pending(&state.db).await?;
        ::metrics::gauge!(crate::metrics::OUTBOX_PENDING).set(pending as f64);
    }
    Ok(())
}
