//! Typed settings from the environment (CONTRACT §1), validated once at start.

use std::fmt;
use std::net::SocketAddr;

use sessions::{SigningKey, SigningSecret};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppEnv {
    Production,
    Qa,
    Staging,
    Development,
    /// Any other name (`test`, `preview`...): cookie domain "all", secure cookies.
    Other(String),
}

impl AppEnv {
    /// The environment named `name`, compared case-insensitively (`Production` is production).
    pub fn parse(name: &str) -> Self {
        match name.to_ascii_lowercase().as_str() {
            "production" => Self::Production,
            "qa" => Self::Qa,
            "staging" => Self::Staging,
            "development" => Self::Development,
            other => Self::Other(other.to_owned()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Self::Production => "production",
            Self::Qa => "qa",
            Self::Staging => "staging",
            Self::Development => "development",
            Self::Other(name) => name,
        }
    }

    pub fn is_development(&self) -> bool {
        *self == Self::Development
    }

    /// Development and `test`: the environments that accept known passwords (`seed --demo`)
    /// and the shortened access lifetime of browser tests (`ACCESS_TOKEN_LIFETIME`).
    pub fn allows_test_shortcuts(&self) -> bool {
        match self {
            Self::Development => true,
            Self::Other(name) => name == "test",
            _ => false,
        }
    }

    /// Production and staging hold sessions in a persistent store with a configured secret.
    pub fn needs_persistent_sessions(&self) -> bool {
        matches!(self, Self::Production | Self::Staging)
    }

    /// Production, staging and QA require `MFA_ENCRYPTION_KEY` and default to `ADMIN_MFA=required`.
    pub fn needs_mfa_key(&self) -> bool {
        matches!(self, Self::Production | Self::Staging | Self::Qa)
    }

    /// Production and QA set cookies on the configured parent domain of the API host.
    pub fn needs_cookie_domain(&self) -> bool {
        matches!(self, Self::Production | Self::Qa)
    }
}

/// A string that must not reach logs (URLs with passwords).
#[derive(Clone, PartialEq, Eq)]
pub struct Redacted(pub String);

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub env: AppEnv,
    pub bind_addr: SocketAddr,
    pub database_url: Redacted,
    /// PostgreSQL schema to use (tests isolate themselves in fresh schemas).
    pub database_schema: Option<String>,
    pub redis_url: Option<Redacted>,
    pub redis_key_prefix: String,
    /// `REDIS_SESSION_CACHE=on|off`: keep checked sessions with Redis's client-side caching
    /// instead of reading each on every request (DECISIONS 115). By default on with SQLite,
    /// where it pays, and off with PostgreSQL, where the database's read dominates.
    pub redis_session_cache: bool,
    /// `RESPONSE_CACHE_MIB` (default 16; 0 turns it off): the memory for rendered answers kept
    /// while the database does not change, on a SQLite file only (db/answers.rs, DECISIONS 118).
    pub response_cache_bytes: u64,
    /// The token keys (CONTRACT §12): `JWT_SIGNING_KEYS` in order (the first signs), then
    /// `JWT_SIGNING_SECRET` as the key of tokens without `kid`; at least one.
    pub signing_keys: Vec<SigningKey>,
    /// True when no secret was configured and a random one was made (development only).
    pub signing_secret_generated: bool,
    pub cookie_domain: Option<String>,
    /// Exact origins allowed with credentials; `None` means development's localhost rule.
    pub cors_allowed_origins: Option<Vec<String>>,
    pub cookie_partitioned: Vec<String>,
    /// Header a trusted load balancer appends the client address to (`X-Forwarded-For`), read
    /// only from a peer in `trusted_proxies` (CONTRACT §1). Unset: the TCP peer address.
    pub client_ip_header: Option<http::HeaderName>,
    /// `TRUSTED_PROXIES`: the load balancers' addresses and blocks; required with
    /// `CLIENT_IP_HEADER`.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    pub limits: Limits,
    /// Idle timeouts of the user and admin contexts in seconds, 0 for none (CONTRACT §9).
    pub idle_timeouts: IdleTimeouts,
    /// Outgoing mail (CONTRACT §10).
    pub mail: MailConfig,
    /// `INVITATION_LIFETIME` and `INVITATIONS_PER_COMPANY_PER_DAY` (CONTRACT §14).
    pub invitations: InvitationConfig,
    /// The admins' second factor (CONTRACT §11).
    pub mfa: MfaConfig,
    /// `API_DOCS`: Swagger UI at `/docs` (CONTRACT §13); on by default in development.
    pub api_docs: bool,
    /// `WEBHOOK_ALLOW_PRIVATE` (CONTRACT §17): webhook URLs may be `http://` and reach
    /// addresses that are not globally reachable; development and test only (their default).
    pub webhook_allow_private: bool,
    /// `METRICS_ADDR`: the Prometheus listener (CONTRACT §13); unset: no metrics.
    pub metrics_addr: Option<SocketAddr>,
    /// `ACCESS_TOKEN_LIFETIME` (development and test only): a shorter access-token lifetime in
    /// seconds, so browser tests see `access_expired` without waiting an hour; `None`: the
    /// specification's hour.
    pub access_token_seconds: Option<i64>,
}

/// `ADMIN_MFA` and `MFA_ENCRYPTION_KEY`.
#[derive(Clone)]
pub struct MfaConfig {
    /// `ADMIN_MFA=required`: an admin without a confirmed factor may only enrol, refresh and
    /// log out.
    pub required: bool,
    /// AEAD keys of the TOTP secrets: the first encrypts, every one decrypts.
    pub keys: Vec<[u8; 32]>,
    /// No `MFA_ENCRYPTION_KEY`: the key is derived from the signing secret (warned at start).
    pub key_derived: bool,
}

impl fmt::Debug for MfaConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MfaConfig")
            .field("required", &self.required)
            .field("keys", &self.keys.len())
            .field("key_derived", &self.key_derived)
            .finish()
    }
}

/// `SMTP_URL`, `MAIL_FROM`, `PASSWORD_RESET_URL`, `EMAIL_VERIFICATION_URL`, `INVITATION_URL`,
/// `MAIL_OUTBOX_DIR`.
#[derive(Debug, Clone)]
pub struct MailConfig {
    /// `smtp://host:port` or `smtps://user:pass@host`; unset: `.eml` files in `outbox_dir`.
    pub smtp_url: Option<Redacted>,
    pub from: String,
    /// The frontend's reset page; `{token}` is replaced by the token.
    pub reset_url: String,
    /// The frontend's page that redeems an e-mail verification link; `{token}` as above.
    pub verification_url: String,
    /// The frontend's page of an invitation's link (CONTRACT §14); `{token}` as above.
    pub invitation_url: String,
    pub outbox_dir: String,
}

/// `INVITATION_LIFETIME` (default `7d`) and `INVITATIONS_PER_COMPANY_PER_DAY` (default 50).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvitationConfig {
    pub lifetime_seconds: i64,
    pub per_company_per_day: u64,
}

impl Default for InvitationConfig {
    fn default() -> Self {
        Self {
            lifetime_seconds: 7 * 24 * 3600,
            per_company_per_day: 50,
        }
    }
}

/// `SESSION_IDLE_TIMEOUT_USER` and `SESSION_IDLE_TIMEOUT_ADMIN` in seconds; 0 is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleTimeouts {
    pub user: i64,
    pub admin: i64,
}

impl Default for IdleTimeouts {
    fn default() -> Self {
        Self {
            user: 0,
            admin: 30 * 60,
        }
    }
}

/// The abuse limits of CONTRACT §8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Failed logins per (account, client address) in a 15-minute window.
    pub login_failures_per_account: u64,
    /// Failed logins per client address, whatever the account, in a 15-minute window.
    pub login_failures_per_address: u64,
    /// Sign-ups per client address in an hour.
    pub signups_per_hour: u64,
    /// Live sessions per identity and context.
    pub sessions_per_identity: usize,
    /// Password-reset requests per (e-mail address, client address) in an hour.
    pub password_resets_per_email: u64,
    /// Password-reset requests per client address in an hour.
    pub password_resets_per_address: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            login_failures_per_account: 10,
            login_failures_per_address: 100,
            signups_per_hour: 20,
            sessions_per_identity: 20,
            password_resets_per_email: 5,
            password_resets_per_address: 20,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("configuration error: {0}")]
pub struct ConfigError(pub String);

fn fail<T>(message: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError(message.into()))
}

impl Config {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads every setting through `var`, so tests can validate configurations without
    /// touching the process environment. Each concern is read and checked by a function of its
    /// own below, in the order of CONFIGURATION.md.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let vars = Vars(&var);
        let env = AppEnv::parse(vars.text("APP_ENV").as_deref().unwrap_or("development"));
        let bind_addr = vars
            .socket_addr("BIND_ADDR")?
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 3000)));
        let storage = Storage::read(&vars, &env)?;
        let (signing_keys, signing_secret_generated) = signing_keys(&vars, &env)?;
        let browser = Browser::read(&vars, &env)?;
        let mfa = mfa(&vars, &env, &signing_keys)?;
        let operations = Operations::read(&vars, &env, bind_addr)?;
        Ok(Self {
            env: env.clone(),
            bind_addr,
            database_url: Redacted(storage.database_url),
            database_schema: storage.database_schema,
            redis_url: storage.redis_url.map(Redacted),
            redis_key_prefix: storage.redis_key_prefix,
            redis_session_cache: storage.redis_session_cache,
            response_cache_bytes: storage.response_cache_bytes,
            signing_keys,
            signing_secret_generated,
            cookie_domain: browser.cookie_domain,
            cors_allowed_origins: browser.cors_allowed_origins,
            cookie_partitioned: browser.cookie_partitioned,
            client_ip_header: browser.client_ip_header,
            trusted_proxies: browser.trusted_proxies,
            limits: limits(&vars)?,
            idle_timeouts: IdleTimeouts {
                user: vars
                    .idle_timeout("SESSION_IDLE_TIMEOUT_USER", IdleTimeouts::default().user)?,
                admin: vars
                    .idle_timeout("SESSION_IDLE_TIMEOUT_ADMIN", IdleTimeouts::default().admin)?,
            },
            mail: mail(&vars, &env)?,
            invitations: InvitationConfig {
                lifetime_seconds: vars.duration(
                    "INVITATION_LIFETIME",
                    InvitationConfig::default().lifetime_seconds,
                    "",
                )?,
                per_company_per_day: vars.positive(
                    "INVITATIONS_PER_COMPANY_PER_DAY",
                    InvitationConfig::default().per_company_per_day,
                )?,
            },
            mfa,
            api_docs: operations.api_docs,
            webhook_allow_private: operations.webhook_allow_private,
            metrics_addr: operations.metrics_addr,
            access_token_seconds: operations.access_token_seconds,
        })
    }
}

/// The environment as the checks read it: a variable that is unset, empty or blank is unset,
/// and every value is trimmed.
struct Vars<'a>(&'a dyn Fn(&str) -> Option<String>);

impl Vars<'_> {
    fn text(&self, name: &str) -> Option<String> {
        (self.0)(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// `on` or `off`, or `default` when unset.
    fn on_off(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        match self.text(name).as_deref() {
            None => Ok(default),
            Some("on") => Ok(true),
            Some("off") => Ok(false),
            Some(other) => fail(format!("{name} must be on or off, got {other:?}")),
        }
    }

    fn socket_addr(&self, name: &str) -> Result<Option<SocketAddr>, ConfigError> {
        match self.text(name) {
            None => Ok(None),
            Some(text) => match text.parse() {
                Ok(addr) => Ok(Some(addr)),
                Err(_) => fail(format!("{name} is not an address:port, got {text:?}")),
            },
        }
    }

    /// A whole number of at least 1, or `default` when unset.
    fn positive(&self, name: &str, default: u64) -> Result<u64, ConfigError> {
        self.whole(name, default, 1..=u64::MAX)
    }

    /// A whole number in `range`, or `default` when unset.
    fn whole(
        &self,
        name: &str,
        default: u64,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<u64, ConfigError> {
        match self.text(name) {
            None => Ok(default),
            Some(text) => match text.parse::<u64>() {
                Ok(n) if range.contains(&n) => Ok(n),
                _ if *range.end() == u64::MAX => fail(format!(
                    "{name} must be a whole number of at least {}, got {text:?}",
                    range.start()
                )),
                _ => fail(format!(
                    "{name} must be a whole number from {} to {}, got {text:?}",
                    range.start(),
                    range.end()
                )),
            },
        }
    }

    /// A duration written `90s`, `30m` or `8h` in seconds, or `none` (0); `default` when unset.
    fn idle_timeout(&self, name: &str, default: i64) -> Result<i64, ConfigError> {
        match self.text(name) {
            Some(text) if text.eq_ignore_ascii_case("none") => Ok(0),
            _ => self.duration(name, default, ", or none"),
        }
    }

    /// A duration such as `90s`, `30m` or `8h` in seconds, or `default` when unset; `also`
    /// names the other accepted values in the error.
    fn duration(&self, name: &str, default: i64, also: &str) -> Result<i64, ConfigError> {
        let Some(text) = self.text(name) else {
            return Ok(default);
        };
        let seconds = [("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
            .iter()
            .find_map(|(suffix, unit)| {
                let n = text.strip_suffix(suffix)?.parse::<i64>().ok()?;
                n.checked_mul(*unit)
            })
            .filter(|seconds| (1..=366 * 24 * 3600).contains(seconds));
        match seconds {
            Some(seconds) => Ok(seconds),
            None => fail(format!(
                "{name} must be a duration such as 90s, 30m, 8h or 7d{also}; got {text:?}"
            )),
        }
    }
}

/// The database, the token store and the caches in front of them.
struct Storage {
    database_url: String,
    database_schema: Option<String>,
    redis_url: Option<String>,
    redis_key_prefix: String,
    redis_session_cache: bool,
    response_cache_bytes: u64,
}

impl Storage {
    fn read(vars: &Vars, env: &AppEnv) -> Result<Self, ConfigError> {
        let database_url = vars
            .text("DATABASE_URL")
            .unwrap_or_else(|| "sqlite://data/careers.db".into());
        let on_sqlite = database_url.starts_with("sqlite:");
        if !(on_sqlite
            || database_url.starts_with("postgres://")
            || database_url.starts_with("postgresql://"))
        {
            return fail("DATABASE_URL must start with sqlite:// or postgres://");
        }
        let redis_url = vars.text("REDIS_URL");
        if let Some(url) = &redis_url
            && !(url.starts_with("redis://")
                || url.starts_with("rediss://")
                || url.starts_with("redis-cluster://"))
        {
            return fail("REDIS_URL must start with redis://, rediss:// or redis-cluster://");
        }
        if env.needs_persistent_sessions() && redis_url.is_none() {
            return fail(format!(
                "APP_ENV={} refuses the in-memory token store: set REDIS_URL",
                env.name()
            ));
        }
        Ok(Self {
            database_schema: vars.text("DATABASE_SCHEMA"),
            redis_url,
            redis_key_prefix: vars
                .text("REDIS_KEY_PREFIX")
                .unwrap_or_else(|| "careers:".into()),
            redis_session_cache: vars.on_off("REDIS_SESSION_CACHE", on_sqlite)?,
            response_cache_bytes: vars.whole("RESPONSE_CACHE_MIB", 16, 0..=65_536)? << 20,
            database_url,
        })
    }
}

/// The token keys: `JWT_SIGNING_KEYS` in order, then `JWT_SIGNING_SECRET`; a random key in
/// development when neither is set (the second value says so).
fn signing_keys(vars: &Vars, env: &AppEnv) -> Result<(Vec<SigningKey>, bool), ConfigError> {
    let mut keys = match vars.text("JWT_SIGNING_KEYS") {
        Some(list) => signing_key_list(&list)?,
        None => Vec::new(),
    };
    if let Some(secret) = vars.text("JWT_SIGNING_SECRET") {
        match SigningSecret::new(secret.into_bytes()) {
            Ok(secret) => keys.push(SigningKey { kid: None, secret }),
            Err(message) => return fail(message),
        }
    }
    let generated = keys.is_empty();
    if generated {
        if !env.is_development() {
            return fail(format!(
                "APP_ENV={} requires JWT_SIGNING_KEYS or JWT_SIGNING_SECRET (at least 32 bytes)",
                env.name()
            ));
        }
        keys.push(SigningKey {
            kid: None,
            secret: SigningSecret::random(),
        });
    }
    Ok((keys, generated))
}

/// What the browser-facing edge needs: the cookies' Domain and Partitioned, the CORS origins,
/// and where the client's address comes from.
struct Browser {
    cookie_domain: Option<String>,
    cors_allowed_origins: Option<Vec<String>>,
    cookie_partitioned: Vec<String>,
    client_ip_header: Option<http::HeaderName>,
    trusted_proxies: Vec<ipnet::IpNet>,
}

impl Browser {
    fn read(vars: &Vars, env: &AppEnv) -> Result<Self, ConfigError> {
        let cookie_domain = vars.text("COOKIE_DOMAIN");
        if env.needs_cookie_domain() {
            match &cookie_domain {
                None => {
                    return fail(format!(
                        "APP_ENV={} requires COOKIE_DOMAIN (e.g. .example.com)",
                        env.name()
                    ));
                }
                Some(domain) if !is_dotted_domain(domain) => {
                    return fail(format!(
                        "COOKIE_DOMAIN must start with a dot and name a parent domain, got {domain:?}"
                    ));
                }
                Some(_) => {}
            }
        }

        let cors_allowed_origins = match vars.text("CORS_ALLOWED_ORIGINS") {
            Some(list) => {
                let mut origins = Vec::new();
                for origin in list.split(',').map(str::trim).filter(|o| !o.is_empty()) {
                    if !is_origin(origin) {
                        return fail(format!(
                            "CORS_ALLOWED_ORIGINS entries must be exact origins like https://app.example.com, got {origin:?}"
                        ));
                    }
                    origins.push(origin.trim_end_matches('/').to_owned());
                }
                Some(origins)
            }
            None if env.is_development() => None,
            None => Some(Vec::new()),
        };

        let mut cookie_partitioned = Vec::new();
        if let Some(list) = vars.text("COOKIE_PARTITIONED") {
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if name != "user" && name != "admin" {
                    return fail(format!(
                        "COOKIE_PARTITIONED takes the contexts user and admin, got {name:?}"
                    ));
                }
                cookie_partitioned.push(name.to_owned());
            }
            if env.is_development() && !cookie_partitioned.is_empty() {
                return fail(
                    "COOKIE_PARTITIONED needs Secure cookies and is refused in development",
                );
            }
        }

        let client_ip_header = match vars.text("CLIENT_IP_HEADER") {
            None => None,
            Some(name) => match http::HeaderName::from_bytes(name.as_bytes()) {
                Ok(header) => Some(header),
                Err(_) => return fail(format!("CLIENT_IP_HEADER is not a header name: {name:?}")),
            },
        };
        let trusted_proxies = match vars.text("TRUSTED_PROXIES") {
            None => Vec::new(),
            Some(list) => trusted_proxy_list(&list)?,
        };
        if client_ip_header.is_some() && trusted_proxies.is_empty() {
            return fail(
                "CLIENT_IP_HEADER needs TRUSTED_PROXIES (the load balancers' addresses or CIDR \
                 blocks): without it any client could name its own address",
            );
        }
        Ok(Self {
            cookie_domain,
            cors_allowed_origins,
            cookie_partitioned,
            client_ip_header,
            trusted_proxies,
        })
    }
}

/// The abuse limits of CONTRACT §8 and §10.
fn limits(vars: &Vars) -> Result<Limits, ConfigError> {
    let defaults = Limits::default();
    Ok(Limits {
        login_failures_per_account: vars.positive(
            "LOGIN_FAILURES_PER_ACCOUNT",
            defaults.login_failures_per_account,
        )?,
        login_failures_per_address: vars.positive(
            "LOGIN_FAILURES_PER_ADDRESS",
            defaults.login_failures_per_address,
        )?,
        signups_per_hour: vars.positive("SIGNUP_LIMIT_PER_HOUR", defaults.signups_per_hour)?,
        sessions_per_identity: vars.positive(
            "SESSIONS_PER_IDENTITY",
            defaults.sessions_per_identity as u64,
        )? as usize,
        password_resets_per_email: vars.positive(
            "PASSWORD_RESET_LIMIT_PER_EMAIL",
            defaults.password_resets_per_email,
        )?,
        password_resets_per_address: vars.positive(
            "PASSWORD_RESET_LIMIT_PER_ADDRESS",
            defaults.password_resets_per_address,
        )?,
    })
}

/// Outgoing mail (CONTRACT §10): required in production and staging.
fn mail(vars: &Vars, env: &AppEnv) -> Result<MailConfig, ConfigError> {
    let mail = MailConfig {
        smtp_url: vars.text("SMTP_URL").map(Redacted),
        from: vars
            .text("MAIL_FROM")
            .unwrap_or_else(|| "no-reply@localhost".into()),
        reset_url: vars
            .text("PASSWORD_RESET_URL")
            .unwrap_or_else(|| "http://localhost:3000/reset?token={token}".into()),
        verification_url: vars
            .text("EMAIL_VERIFICATION_URL")
            .unwrap_or_else(|| "http://localhost:3000/verify-email?token={token}".into()),
        invitation_url: vars
            .text("INVITATION_URL")
            .unwrap_or_else(|| "http://localhost:3000/invitations?token={token}".into()),
        outbox_dir: vars
            .text("MAIL_OUTBOX_DIR")
            .unwrap_or_else(|| "data/outbox".into()),
    };
    if env.needs_persistent_sessions() {
        for name in [
            "SMTP_URL",
            "MAIL_FROM",
            "PASSWORD_RESET_URL",
            "EMAIL_VERIFICATION_URL",
            "INVITATION_URL",
        ] {
            if vars.text(name).is_none() {
                return fail(format!("APP_ENV={} requires {name}", env.name()));
            }
        }
    }
    if !mail.reset_url.contains("{token}") {
        return fail("PASSWORD_RESET_URL must contain {token}");
    }
    if !mail.verification_url.contains("{token}") {
        return fail("EMAIL_VERIFICATION_URL must contain {token}");
    }
    if !mail.invitation_url.contains("{token}") {
        return fail("INVITATION_URL must contain {token}");
    }
    if mail.from.parse::<lettre::message::Mailbox>().is_err() {
        return fail(format!(
            "MAIL_FROM is not an e-mail address: {:?}",
            mail.from
        ));
    }
    if let Some(url) = &mail.smtp_url
        && !(url.0.starts_with("smtp://") || url.0.starts_with("smtps://"))
    {
        return fail("SMTP_URL must start with smtp:// or smtps://");
    }
    Ok(mail)
}

/// The admins' second factor (CONTRACT §11); without `MFA_ENCRYPTION_KEY` (where allowed) the
/// key is derived from the first signing key.
fn mfa(vars: &Vars, env: &AppEnv, signing_keys: &[SigningKey]) -> Result<MfaConfig, ConfigError> {
    let required = match vars.text("ADMIN_MFA").as_deref() {
        None => env.needs_mfa_key(),
        Some("required") => true,
        Some("optional") => false,
        Some(other) => {
            return fail(format!(
                "ADMIN_MFA must be required or optional, got {other:?}"
            ));
        }
    };
    let (keys, key_derived) = match vars.text("MFA_ENCRYPTION_KEY") {
        Some(list) => (mfa_key_list(&list)?, false),
        None if env.needs_mfa_key() => {
            return fail(format!(
                "APP_ENV={} requires MFA_ENCRYPTION_KEY (32 random bytes, base64)",
                env.name()
            ));
        }
        None => (
            vec![signing_keys[0].secret.derive("careers-api/mfa/v1")],
            true,
        ),
    };
    Ok(MfaConfig {
        required,
        keys,
        key_derived,
    })
}

/// Operations (CONTRACT §13) and the browser tests' shortcut.
struct Operations {
    api_docs: bool,
    webhook_allow_private: bool,
    metrics_addr: Option<SocketAddr>,
    access_token_seconds: Option<i64>,
}

impl Operations {
    fn read(vars: &Vars, env: &AppEnv, bind_addr: SocketAddr) -> Result<Self, ConfigError> {
        let metrics_addr = vars.socket_addr("METRICS_ADDR")?;
        if metrics_addr == Some(bind_addr) {
            return fail("METRICS_ADDR must differ from BIND_ADDR: metrics are never public");
        }
        let access_token_seconds = match vars.text("ACCESS_TOKEN_LIFETIME") {
            None => None,
            Some(_) if !env.allows_test_shortcuts() => {
                return fail(format!(
                    "ACCESS_TOKEN_LIFETIME is for browser tests and is refused in APP_ENV={} (development and test only)",
                    env.name()
                ));
            }
            Some(_) => Some(vars.duration("ACCESS_TOKEN_LIFETIME", 0, "")?),
        };
        let webhook_allow_private =
            vars.on_off("WEBHOOK_ALLOW_PRIVATE", env.allows_test_shortcuts())?;
        if webhook_allow_private && !env.allows_test_shortcuts() {
            return fail(format!(
                "WEBHOOK_ALLOW_PRIVATE=on is refused in APP_ENV={}: webhooks could reach internal services (development and test only)",
                env.name()
            ));
        }
        Ok(Self {
            api_docs: vars.on_off("API_DOCS", env.is_development())?,
            webhook_allow_private,
            metrics_addr,
            access_token_seconds,
        })
    }
}

/// `JWT_SIGNING_KEYS`: comma-separated `kid:secret` pairs, `kid` of letters, digits, `.`, `_`
/// and `-`, each once, each secret at least 32 bytes (it cannot hold a comma).
fn signing_key_list(list: &str) -> Result<Vec<SigningKey>, ConfigError> {
    let mut keys: Vec<SigningKey> = Vec::new();
    for entry in list.split(',').map(str::trim) {
        let Some((kid, secret)) = entry.split_once(':') else {
            return fail("JWT_SIGNING_KEYS must be comma-separated kid:secret pairs");
        };
        let valid_kid = !kid.is_empty()
            && kid.len() <= 64
            && kid
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if !valid_kid {
            return fail(format!(
                "JWT_SIGNING_KEYS: a kid is 1 to 64 letters, digits, '.', '_' or '-', got {kid:?}"
            ));
        }
        if keys.iter().any(|k| k.kid.as_deref() == Some(kid)) {
            return fail(format!("JWT_SIGNING_KEYS lists the kid {kid:?} twice"));
        }
        let secret = SigningSecret::new(secret.as_bytes().to_vec()).map_err(|_| {
            ConfigError(format!(
                "JWT_SIGNING_KEYS: the secret of {kid:?} must be at least 32 bytes"
            ))
        })?;
        keys.push(SigningKey {
            kid: Some(kid.to_owned()),
            secret,
        });
    }
    Ok(keys)
}

/// `TRUSTED_PROXIES`: comma-separated addresses (`10.0.0.7`, `2001:db8::1`) or CIDR blocks
/// (`10.0.0.0/8`, `2001:db8::/32`), parsed by the `ipnet` crate; an address is a block of one.
fn trusted_proxy_list(list: &str) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    list.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            entry
                .parse::<ipnet::IpNet>()
                .or_else(|_| entry.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    ConfigError(format!(
                        "TRUSTED_PROXIES takes addresses or CIDR blocks, got {entry:?}"
                    ))
                })
        })
        .collect()
}

/// `MFA_ENCRYPTION_KEY`: comma-separated keys of 32 bytes in base64 (standard or URL-safe);
/// the first encrypts, every one decrypts.
fn mfa_key_list(list: &str) -> Result<Vec<[u8; 32]>, ConfigError> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    list.split(',')
        .map(str::trim)
        .map(|text| {
            STANDARD
                .decode(text)
                .or_else(|_| URL_SAFE.decode(text))
                .ok()
                .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
                .ok_or_else(|| {
                    ConfigError(
                        "MFA_ENCRYPTION_KEY must be 32 random bytes in base64 (e.g. openssl rand \
                         -base64 32), several separated by commas"
                            .into(),
                    )
                })
        })
        .collect()
}

fn is_dotted_domain(domain: &str) -> bool {
    let Some(rest) = domain.strip_prefix('.') else {
        return false;
    };
    rest.contains('.')
        && rest.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn is_origin(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    (scheme == "http" || scheme == "https")
        && !rest.is_empty()
        && !rest.trim_end_matches('/').contains('/')
        && !rest.contains('*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|name| map.get(name).cloned())
    }

    const SECRET: &str = "0123456789abcdef0123456789abcdef";
    /// 32 bytes in base64.
    const MFA_KEY: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";

    #[test]
    fn admin_mfa_is_required_and_keyed_in_production_staging_and_qa() {
        for env in ["production", "staging", "qa"] {
            let mut pairs = vec![
                ("APP_ENV", env),
                ("REDIS_URL", "redis://127.0.0.1:6379"),
                ("JWT_SIGNING_SECRET", SECRET),
                ("COOKIE_DOMAIN", ".example.com"),
                ("SMTP_URL", "smtp://127.0.0.1:25"),
                ("MAIL_FROM", "no-reply@example.com"),
                ("PASSWORD_RESET_URL", "https://a.example.com/r?t={token}"),
                (
                    "EMAIL_VERIFICATION_URL",
                    "https://a.example.com/v?t={token}",
                ),
                ("INVITATION_URL", "https://a.example.com/i?t={token}"),
            ];
            let err = config(&pairs).unwrap_err();
            assert!(err.0.contains("MFA_ENCRYPTION_KEY"), "{env}: {err}");
            pairs.push(("MFA_ENCRYPTION_KEY", MFA_KEY));
            let c = config(&pairs).unwrap();
            assert!(c.mfa.required, "{env}");
            assert!(!c.mfa.key_derived);
            pairs.push(("ADMIN_MFA", "optional"));
            assert!(!config(&pairs).unwrap().mfa.required);
        }
        let dev = config(&[]).unwrap();
        assert!(!dev.mfa.required);
        assert!(
            dev.mfa.key_derived,
            "derived from the signing secret, with a warning"
        );
        assert!(config(&[("ADMIN_MFA", "required")]).unwrap().mfa.required);
        for bad in [
            ("ADMIN_MFA", "sometimes"),
            ("MFA_ENCRYPTION_KEY", "c2hvcnQ="),
            ("MFA_ENCRYPTION_KEY", "not base64!"),
        ] {
            let err = config(&[bad]).unwrap_err();
            assert!(err.0.contains(bad.0), "{bad:?}: {err}");
        }
        let two = format!("{MFA_KEY},AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=");
        assert_eq!(
            config(&[("MFA_ENCRYPTION_KEY", &two)])
                .unwrap()
                .mfa
                .keys
                .len(),
            2
        );
    }

    #[test]
    fn development_defaults_start_on_embedded_backends() {
        let c = config(&[]).unwrap();
        assert_eq!(c.env, AppEnv::Development);
        assert_eq!(c.bind_addr.to_string(), "127.0.0.1:3000");
        assert_eq!(c.database_url.0, "sqlite://data/careers.db");
        assert!(c.redis_url.is_none());
        assert!(c.signing_secret_generated);
        assert!(c.cors_allowed_origins.is_none());
    }

    #[test]
    fn the_response_cache_takes_mib_and_zero_turns_it_off() {
        assert_eq!(config(&[]).unwrap().response_cache_bytes, 16 << 20);
        let got = |mib: &str| config(&[("RESPONSE_CACHE_MIB", mib)]);
        assert_eq!(got("0").unwrap().response_cache_bytes, 0);
        assert_eq!(got("64").unwrap().response_cache_bytes, 64 << 20);
        for bad in ["-1", "1.5", "lots", "65537"] {
            let err = got(bad).unwrap_err();
            assert!(err.0.contains("RESPONSE_CACHE_MIB"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn the_session_cache_is_on_by_default_with_sqlite_only() {
        let sqlite = [("REDIS_URL", "redis://127.0.0.1:6379")];
        assert!(config(&sqlite).unwrap().redis_session_cache);
        let postgres = [
            ("REDIS_URL", "redis://127.0.0.1:6379"),
            ("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"),
        ];
        assert!(!config(&postgres).unwrap().redis_session_cache);
        for (backend, setting, on) in [
            (&sqlite[..], "off", false),
            (&postgres[..], "on", true),
            (&postgres[..], "off", false),
        ] {
            let mut pairs = backend.to_vec();
            pairs.push(("REDIS_SESSION_CACHE", setting));
            let got = config(&pairs).unwrap();
            assert_eq!(got.redis_session_cache, on, "{backend:?} {setting}");
        }
        let err = config(&[("REDIS_SESSION_CACHE", "yes")]).unwrap_err();
        assert!(err.0.contains("REDIS_SESSION_CACHE"), "{err}");
    }

    #[test]
    fn production_and_staging_refuse_the_memory_store() {
        for env in ["production", "staging"] {
            let err = config(&[
                ("APP_ENV", env),
                ("JWT_SIGNING_SECRET", SECRET),
                ("COOKIE_DOMAIN", ".example.com"),
            ])
            .unwrap_err();
            assert!(err.0.contains("REDIS_URL"), "{env}: {err}");
        }
    }

    #[test]
    fn production_and_staging_refuse_to_start_without_mail_settings() {
        let complete = [
            ("REDIS_URL", "redis://127.0.0.1:6379"),
            ("JWT_SIGNING_SECRET", SECRET),
            ("COOKIE_DOMAIN", ".example.com"),
            ("SMTP_URL", "smtps://user:pass@smtp.example.com"),
            ("MAIL_FROM", "Careers <no-reply@example.com>"),
            (
                "PASSWORD_RESET_URL",
                "https://app.example.com/reset?token={token}",
            ),
            (
                "EMAIL_VERIFICATION_URL",
                "https://app.example.com/verify?token={token}",
            ),
            (
                "INVITATION_URL",
                "https://app.example.com/invitations?token={token}",
            ),
            ("MFA_ENCRYPTION_KEY", MFA_KEY),
        ];
        for env in ["production", "staging"] {
            let mut pairs = vec![("APP_ENV", env)];
            pairs.extend_from_slice(&complete);
            assert!(config(&pairs).is_ok(), "{env}");
            for missing in [
                "SMTP_URL",
                "MAIL_FROM",
                "PASSWORD_RESET_URL",
                "EMAIL_VERIFICATION_URL",
                "INVITATION_URL",
            ] {
                let pairs: Vec<(&str, &str)> = pairs
                    .iter()
                    .copied()
                    .filter(|(k, _)| *k != missing)
                    .collect();
                let err = config(&pairs).unwrap_err();
                assert!(err.0.contains(missing), "{env} without {missing}: {err}");
            }
        }
        // Elsewhere: files in data/outbox, from no-reply@localhost, to the local frontend.
        let c = config(&[
            ("APP_ENV", "qa"),
            ("JWT_SIGNING_SECRET", SECRET),
            ("COOKIE_DOMAIN", ".example.com"),
            ("MFA_ENCRYPTION_KEY", MFA_KEY),
        ])
        .unwrap();
        assert!(c.mail.smtp_url.is_none());
        assert_eq!(c.mail.outbox_dir, "data/outbox");
        assert_eq!(c.mail.from, "no-reply@localhost");
        assert_eq!(
            c.mail.reset_url,
            "http://localhost:3000/reset?token={token}"
        );
        assert_eq!(
            c.mail.verification_url,
            "http://localhost:3000/verify-email?token={token}"
        );
        assert_eq!(
            c.mail.invitation_url,
            "http://localhost:3000/invitations?token={token}"
        );
        assert_eq!(c.invitations, InvitationConfig::default());
        let c = config(&[
            ("INVITATION_LIFETIME", "2d"),
            ("INVITATIONS_PER_COMPANY_PER_DAY", "3"),
        ])
        .unwrap();
        assert_eq!(c.invitations.lifetime_seconds, 2 * 86400);
        assert_eq!(c.invitations.per_company_per_day, 3);
        for (name, bad) in [
            ("PASSWORD_RESET_URL", "https://app.example.com/reset"),
            ("EMAIL_VERIFICATION_URL", "https://app.example.com/verify"),
            ("INVITATION_URL", "https://app.example.com/invitations"),
            ("INVITATION_LIFETIME", "a week"),
            ("INVITATIONS_PER_COMPANY_PER_DAY", "0"),
            ("MAIL_FROM", "not an address"),
            ("SMTP_URL", "http://smtp.example.com"),
        ] {
            let err = config(&[(name, bad)]).unwrap_err();
            assert!(err.0.contains(name), "{name}: {err}");
            assert!(!err.0.contains("pass"), "no credentials in messages");
        }
    }

    #[test]
    fn production_and_staging_refuse_a_missing_secret() {
        for env in ["production", "staging"] {
            let err = config(&[
                ("APP_ENV", env),
                ("REDIS_URL", "redis://127.0.0.1:6379"),
                ("COOKIE_DOMAIN", ".example.com"),
            ])
            .unwrap_err();
            assert!(err.0.contains("JWT_SIGNING_SECRET"), "{env}: {err}");
        }
    }

    #[test]
    fn a_short_secret_is_refused_everywhere() {
        let err = config(&[("JWT_SIGNING_SECRET", "short")]).unwrap_err();
        assert!(err.0.contains("32 bytes"));
    }

    #[test]
    fn production_and_qa_need_a_dotted_cookie_domain() {
        for env in ["production", "qa"] {
            let base = [
                ("APP_ENV", env),
                ("REDIS_URL", "redis://127.0.0.1:6379"),
                ("JWT_SIGNING_SECRET", SECRET),
                ("MFA_ENCRYPTION_KEY", MFA_KEY),
                ("SMTP_URL", "smtp://127.0.0.1:25"),
                ("MAIL_FROM", "no-reply@example.com"),
                ("PASSWORD_RESET_URL", "https://a.example.com/r?t={token}"),
                (
                    "EMAIL_VERIFICATION_URL",
                    "https://a.example.com/v?t={token}",
                ),
                ("INVITATION_URL", "https://a.example.com/i?t={token}"),
            ];
            let err = config(&base).unwrap_err();
            assert!(err.0.contains("COOKIE_DOMAIN"), "{env}: {err}");
            let mut dotless = base.to_vec();
            dotless.push(("COOKIE_DOMAIN", "example.com"));
            assert!(config(&dotless).unwrap_err().0.contains("start with a dot"));
            let mut good = base.to_vec();
            good.push(("COOKIE_DOMAIN", ".example.com"));
            assert_eq!(
                config(&good).unwrap().cookie_domain.as_deref(),
                Some(".example.com")
            );
        }
    }

    #[test]
    fn partitioned_cookies_are_refused_in_development_and_checked_elsewhere() {
        assert!(config(&[("COOKIE_PARTITIONED", "admin")]).is_err());
        let ok = config(&[
            ("APP_ENV", "test"),
            ("JWT_SIGNING_SECRET", SECRET),
            ("COOKIE_PARTITIONED", "admin"),
        ])
        .unwrap();
        assert_eq!(ok.cookie_partitioned, vec!["admin".to_string()]);
        assert!(
            config(&[
                ("APP_ENV", "test"),
                ("JWT_SIGNING_SECRET", SECRET),
                ("COOKIE_PARTITIONED", "team"),
            ])
            .is_err()
        );
    }

    #[test]
    fn client_ip_header_needs_trusted_proxies_which_take_addresses_and_blocks() {
        let header = ("CLIENT_IP_HEADER", "X-Forwarded-For");
        let refused = config(&[header]).unwrap_err();
        assert!(refused.0.contains("TRUSTED_PROXIES"), "{refused}");
        let bad = config(&[header, ("TRUSTED_PROXIES", "10.0.0.0/8, nonsense")]).unwrap_err();
        assert!(bad.0.contains("nonsense"), "{bad}");
        let ok = config(&[
            header,
            ("TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7, 2001:db8::/32"),
        ])
        .unwrap();
        let listed: Vec<String> = ok.trusted_proxies.iter().map(|n| n.to_string()).collect();
        assert_eq!(listed, ["10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32"]);
        assert!(
            config(&[("TRUSTED_PROXIES", "10.0.0.0/8")])
                .unwrap()
                .client_ip_header
                .is_none()
        );
    }

    #[test]
    fn app_env_is_compared_case_insensitively() {
        for name in ["Production", "PRODUCTION", " production "] {
            let refused = config(&[("APP_ENV", name)]).unwrap_err();
            assert!(
                refused.0.contains("APP_ENV=production"),
                "{name}: {refused}"
            );
        }
        assert!(
            config(&[("APP_ENV", "Development")])
                .unwrap()
                .env
                .is_development()
        );
    }

    #[test]
    fn cors_origins_must_be_exact() {
        let ok = config(&[(
            "CORS_ALLOWED_ORIGINS",
            "https://a.example.com, http://localhost:5173",
        )])
        .unwrap();
        assert_eq!(ok.cors_allowed_origins.unwrap().len(), 2);
        assert!(config(&[("CORS_ALLOWED_ORIGINS", "*")]).is_err());
        assert!(config(&[("CORS_ALLOWED_ORIGINS", "https://a.example.com/path")]).is_err());
    }

    #[test]
    fn other_environments_need_a_secret_and_allow_no_origin_by_default() {
        assert!(config(&[("APP_ENV", "test")]).is_err());
        let c = config(&[("APP_ENV", "test"), ("JWT_SIGNING_SECRET", SECRET)]).unwrap();
        assert_eq!(c.cors_allowed_origins, Some(vec![]));
    }

    #[test]
    fn abuse_limits_have_the_contracts_defaults_and_refuse_zero() {
        let c = config(&[]).unwrap();
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.limits.login_failures_per_account, 10);
        assert_eq!(c.limits.login_failures_per_address, 100);
        assert_eq!(c.limits.signups_per_hour, 20);
        assert_eq!(c.limits.sessions_per_identity, 20);
        let c = config(&[
            ("SESSIONS_PER_IDENTITY", "3"),
            ("LOGIN_FAILURES_PER_ACCOUNT", "4"),
        ])
        .unwrap();
        assert_eq!(c.limits.sessions_per_identity, 3);
        assert_eq!(c.limits.login_failures_per_account, 4);
        for (name, value) in [
            ("SESSIONS_PER_IDENTITY", "0"),
            ("LOGIN_FAILURES_PER_ADDRESS", "-1"),
            ("SIGNUP_LIMIT_PER_HOUR", "many"),
        ] {
            let err = config(&[(name, value)]).unwrap_err();
            assert!(err.0.contains(name), "{err}");
        }
    }

    #[test]
    fn access_token_lifetime_is_refused_outside_development_and_test() {
        assert_eq!(config(&[]).unwrap().access_token_seconds, None);
        let c = config(&[("ACCESS_TOKEN_LIFETIME", "2s")]).unwrap();
        assert_eq!(c.access_token_seconds, Some(2));
        let c = config(&[
            ("APP_ENV", "test"),
            ("JWT_SIGNING_SECRET", SECRET),
            ("ACCESS_TOKEN_LIFETIME", "5m"),
        ])
        .unwrap();
        assert_eq!(c.access_token_seconds, Some(300));
        for env in ["production", "staging", "qa", "preview"] {
            let err = config(&[
                ("APP_ENV", env),
                ("REDIS_URL", "redis://127.0.0.1:6379"),
                ("JWT_SIGNING_SECRET", SECRET),
                ("COOKIE_DOMAIN", ".example.com"),
                ("MFA_ENCRYPTION_KEY", MFA_KEY),
                ("SMTP_URL", "smtp://127.0.0.1:25"),
                ("MAIL_FROM", "no-reply@example.com"),
                ("PASSWORD_RESET_URL", "https://a.example.com/r?t={token}"),
                (
                    "EMAIL_VERIFICATION_URL",
                    "https://a.example.com/v?t={token}",
                ),
                ("INVITATION_URL", "https://a.example.com/i?t={token}"),
                ("ACCESS_TOKEN_LIFETIME", "2s"),
            ])
            .unwrap_err();
            assert!(
                err.0.contains("ACCESS_TOKEN_LIFETIME") && err.0.contains("refused"),
                "{env}: {err}"
            );
        }
        for bad in ["2", "none", "0s", "soon"] {
            let err = config(&[("ACCESS_TOKEN_LIFETIME", bad)]).unwrap_err();
            assert!(err.0.contains("ACCESS_TOKEN_LIFETIME"), "{bad}: {err}");
        }
    }

    #[test]
    fn idle_timeouts_default_to_none_for_users_and_30m_for_admins() {
        let c = config(&[]).unwrap();
        assert_eq!(
            c.idle_timeouts,
            IdleTimeouts {
                user: 0,
                admin: 1800
            }
        );
        let c = config(&[
            ("SESSION_IDLE_TIMEOUT_USER", "8h"),
            ("SESSION_IDLE_TIMEOUT_ADMIN", "none"),
        ])
        .unwrap();
        assert_eq!(
            c.idle_timeouts,
            IdleTimeouts {
                user: 8 * 3600,
                admin: 0
            }
        );
        let c = config(&[("SESSION_IDLE_TIMEOUT_USER", "90s")]).unwrap();
        assert_eq!(c.idle_timeouts.user, 90);
        for bad in ["30", "0m", "-5m", "1w", "m", "5 m", "5µ", "ten minutes"] {
            let err = config(&[("SESSION_IDLE_TIMEOUT_ADMIN", bad)]).unwrap_err();
            assert!(err.0.contains("SESSION_IDLE_TIMEOUT_ADMIN"), "{bad}: {err}");
        }
    }

    #[test]
    fn signing_keys_list_kids_in_order_then_the_one_key_form() {
        let k2 = "k2:".to_string() + &"b".repeat(32);
        let k1 = "k1:".to_string() + &"a".repeat(40);
        let c = config(&[
            ("APP_ENV", "test"),
            ("JWT_SIGNING_KEYS", &format!("{k2}, {k1}")),
        ])
        .unwrap();
        let kids: Vec<Option<&str>> = c.signing_keys.iter().map(|k| k.kid.as_deref()).collect();
        assert_eq!(kids, [Some("k2"), Some("k1")]);
        assert!(!c.signing_secret_generated);
        let c = config(&[
            ("APP_ENV", "test"),
            ("JWT_SIGNING_KEYS", &k2),
            ("JWT_SIGNING_SECRET", SECRET),
        ])
        .unwrap();
        let kids: Vec<Option<&str>> = c.signing_keys.iter().map(|k| k.kid.as_deref()).collect();
        assert_eq!(kids, [Some("k2"), None]);
        let c = config(&[("APP_ENV", "test"), ("JWT_SIGNING_SECRET", SECRET)]).unwrap();
        assert_eq!(c.signing_keys.len(), 1);
        let long = "a".repeat(32);
        for bad in [
            format!("k1{long}"),
            format!(":{long}"),
            format!("k 1:{long}"),
            "k1:short".to_string(),
            format!("k1:{long},k1:{long}"),
            format!("k1:{long},"),
        ] {
            let err = config(&[("APP_ENV", "test"), ("JWT_SIGNING_KEYS", &bad)]).unwrap_err();
            assert!(err.0.contains("JWT_SIGNING_KEYS"), "{bad}: {err}");
            assert!(!err.0.contains(&long), "no secret in the message: {err}");
        }
    }

    #[test]
    fn debug_output_hides_secrets() {
        let c = config(&[
            ("JWT_SIGNING_SECRET", SECRET),
            ("REDIS_URL", "redis://:hunter2@127.0.0.1:6379"),
        ])
        .unwrap();
        let printed = format!("{c:?}");
        assert!(!printed.contains(SECRET));
        assert!(!printed.contains("hunter2"));
    }
}
