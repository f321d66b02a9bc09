//! What every handler may reach, and how it is built from the configuration: the database, the
//! session engine on its token store, the password hasher, the mail outbox's settings, the
//! configuration itself.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::{DatabaseConnection, DbErr};
use sessions::store::{MemoryStore, RedisStore, RedisStoreConfig};
use sessions::{
    AnyStore, Clock, CookieDomain, CookiePolicy, OriginPolicy, SameSite, SessionEngine,
    SessionPolicy, TokenKeys,
};

use crate::answers::Answers;
use crate::config::Config;
use crate::contexts::{ADMIN, USER};
use crate::db;
use crate::mail::{MailSettings, Mailer};
use crate::mfa::SecretBox;
use crate::password::Passwords;
use crate::webhooks::{self, Deliverer, transport::Transport};

/// The handlers' state: one shared [`Shared`], so that the clone axum makes for each request
/// and extractor is one reference count, not one per part.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

pub struct Shared {
    pub db: db::Db,
    /// The employer application pages kept while the database does not change (answers.rs).
    pub answers: Option<Answers>,
    pub sessions: Arc<SessionEngine>,
    pub passwords: Arc<Passwords>,
    pub mail: Mailer,
    /// Seals and opens the admins' TOTP secrets.
    pub secrets: SecretBox,
    /// The webhooks' transport and delivery worker (CONTRACT §17).
    pub webhooks: Arc<Deliverer>,
    pub config: Config,
}

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("database: {0}")]
    Database(String),
    #[error("token store: {0}")]
    TokenStore(String),
    #[error("mail: {0}")]
    Mail(String),
}

impl StartupError {
    fn database(error: DbErr) -> Self {
        Self::Database(error.to_string())
    }
}

impl AppState {
    /// The engine's clock as a timestamp, whole seconds (the manual clock in tests).
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp(self.sessions.now(), 0).unwrap_or_default()
    }

    /// Connects the database (migrating it) and the token store of `config`.
    pub async fn build(config: Config, clock: Arc<dyn Clock>) -> Result<Self, StartupError> {
        let db = db::connect_migrated(&config.database_url.0, config.database_schema.as_deref())
            .await
            .map_err(StartupError::database)?;
        let store = build_store(&config).await?;
        Self::with_parts(config, db, store, clock)
    }

    pub fn with_parts(
        config: Config,
        db: DatabaseConnection,
        store: AnyStore,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, StartupError> {
        let mail = Mailer::new(MailSettings {
            smtp_url: config.mail.smtp_url.as_ref().map(|url| url.0.as_str()),
            from: &config.mail.from,
            reset_url: &config.mail.reset_url,
            verification_url: &config.mail.verification_url,
            invitation_url: &config.mail.invitation_url,
            outbox_dir: &config.mail.outbox_dir,
        })
        .map_err(StartupError::Mail)?;
        let engine = Arc::new(
            SessionEngine::new(
                TokenKeys::with_keys(&config.signing_keys),
                store,
                clock,
                cookie_policy(&config),
                OriginPolicy::new(config.cors_allowed_origins.clone()),
                SessionPolicy {
                    sessions_per_identity: config.limits.sessions_per_identity,
                    access_seconds: config
                        .access_token_seconds
                        .unwrap_or(SessionPolicy::default().access_seconds),
                    ..SessionPolicy::default()
                },
            )
            .with_idle_timeout(&USER, config.idle_timeouts.user)
            .with_idle_timeout(&ADMIN, config.idle_timeouts.admin),
        );
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let db = db::Db::new(db);
        let webhooks = {
            let engine = Arc::clone(&engine);
            Arc::new(Deliverer::new(
                Transport::new(config.webhook_allow_private, webhooks::transport::TIMEOUT),
                SecretBox::new(&config.mfa.keys),
                move || chrono::DateTime::from_timestamp(engine.now(), 0).unwrap_or_default(),
            ))
        };
        Ok(Self(Arc::new(Shared {
            answers: Answers::for_db(&db, config.response_cache_bytes),
            db,
            sessions: engine,
            passwords: Passwords::new(cores),
            mail,
            secrets: SecretBox::new(&config.mfa.keys),
            webhooks,
            config,
        })))
    }

    /// Calls `observer` with the SQL of every statement the service runs ([`db::Db::observe_statements`]);
    /// before the state is shared (the tests' statement counts).
    #[cfg(any(test, feature = "test-support"))]
    pub fn observe_statements(&mut self, observer: impl Fn(&str) + Send + Sync + 'static) {
        Arc::get_mut(&mut self.0)
            .expect("statements are observed before the state is shared")
            .db
            .observe_statements(observer);
    }
}

pub async fn build_store(config: &Config) -> Result<AnyStore, StartupError> {
    Ok(match &config.redis_url {
        Some(url) => AnyStore::Redis(
            RedisStore::connect(RedisStoreConfig {
                url: url.0.clone(),
                key_prefix: config.redis_key_prefix.clone(),
                command_timeout: Duration::from_secs(2),
                cache_sessions: config.redis_session_cache,
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
