//! Application state, and the service (the router inside its layers) shared by `serve` and
//! the tests.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request};
use axum::{Router, ServiceExt};
use sea_orm::DatabaseConnection;
use sessions::store::{MemoryStore, RedisStore, RedisStoreConfig};
use sessions::{
    AnyStore, Clock, CookieDomain, CookiePolicy, OriginPolicy, SameSite, SessionEngine,
    SessionPolicy, TokenKeys,
};
use tower::Layer;

use crate::config::Config;
use crate::edge::{Edge, EdgeLayer};
use crate::error::ApiError;
use crate::extract::BODY_LIMIT;
use crate::password::Passwords;
use crate::{db, db::DbErrorContext};

#[derive(Clone)]
pub struct AppState {
    pub db: db::Db,
    pub sessions: Arc<SessionEngine>,
    pub passwords: Arc<Passwords>,
    pub config: Arc<Config>,
    pub openapi: Arc<utoipa::openapi::OpenApi>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("database: {0}")]
    Database(String),
    #[error("token store: {0}")]
    TokenStore(String),
}

impl AppState {
    /// Connects the database (migrating it) and the token store of `config`.
    pub async fn build(config: Config, clock: Arc<dyn Clock>) -> Result<Self, StartupError> {
        let db = db::connect(&config.database_url.0, config.database_schema.as_deref())
            .await
            .context_startup()?;
        db::migrate(&db).await.context_startup()?;
        let store = build_store(&config).await?;
        Ok(Self::with_parts(config, db, store, clock))
    }

    pub fn with_parts(
        config: Config,
        db: DatabaseConnection,
        store: AnyStore,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let engine = SessionEngine::new(
            TokenKeys::new(&config.signing_secret),
            store,
            clock,
            cookie_policy(&config),
            OriginPolicy::new(config.cors_allowed_origins.clone()),
            SessionPolicy {
                sessions_per_identity: config.limits.sessions_per_identity,
                ..SessionPolicy::default()
            },
        );
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            db: db::Db::new(db),
            sessions: Arc::new(engine),
            passwords: Passwords::new(cores),
            config: Arc::new(config),
            openapi: Arc::new(crate::openapi::document()),
        }
    }
}

pub async fn build_store(config: &Config) -> Result<AnyStore, StartupError> {
    Ok(match &config.redis_url {
        Some(url) => AnyStore::Redis(
            RedisStore::connect(RedisStoreConfig {
                url: url.0.clone(),
                key_prefix: config.redis_key_prefix.clone(),
                command_timeout: Duration::from_secs(2),
            })
            .await
            .map_err(|e| StartupError::TokenStore(e.to_string()))?,
        ),
        None => AnyStore::Memory(MemoryStore::new()),
    })
}

/// The one place that turns the environment into a cookie policy (CONTRACT §2).
pub fn cookie_policy(config: &Config) -> CookiePolicy {
    let development = config.env.is_development();
    CookiePolicy {
        secure: !development,
        same_site: if development {
            SameSite::Lax
        } else {
            SameSite::None
        },
        domain: match (&config.cookie_domain, config.env.needs_cookie_domain()) {
            (Some(domain), true) => CookieDomain::Fixed(domain.clone()),
            _ => CookieDomain::FromHost,
        },
        partitioned: config.cookie_partitioned.clone(),
    }
}

/// The service `serve` runs: the router inside the edge layer (request id, headers, CORS,
/// access line, panics). It wraps the router instead of being added with `Router::layer`,
/// which puts a copy into every route's service, and axum clones the route's service for each
/// request (docs/PERFORMANCE.md).
pub type App = Edge<Router>;

pub fn build_app(state: AppState) -> App {
    let edge = EdgeLayer::new(state.sessions.origins().clone());
    let (router, _) = crate::openapi::router().split_for_parts();
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
