//! Login throttling (OWASP ASVS V2.2.1): failed logins are counted per account and per client
//! address in the token store, so every instance sees the same counts. Past the limit, logins
//! answer 429 `rate_limited` with `Retry-After` until the window closes, without even checking
//! the password.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use sessions::{SessionContext, TokenStore};
use sha2::{Digest, Sha256};

use crate::app::AppState;
use crate::error::ApiError;

/// Failed logins of one account (per context) within a window before it is throttled.
pub const ACCOUNT_LIMIT: u64 = 10;
/// Failed logins from one client address, whatever the account, within a window.
pub const ADDRESS_LIMIT: u64 = 100;
pub const WINDOW_SECONDS: i64 = 15 * 60;

/// The peer address of the connection (no proxy headers are trusted).
pub struct ClientAddr(pub Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|info| info.0.ip()),
        ))
    }
}

/// The counters one login attempt touches. E-mails are hashed: keys hold no personal data.
pub struct LoginThrottle {
    account: String,
    address: Option<String>,
}

impl LoginThrottle {
    pub fn new(context: &SessionContext, email: &str, client: &ClientAddr) -> Self {
        let digest = Sha256::digest(email.as_bytes());
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Self {
            account: format!("login:{}:{hex}", context.name),
            address: client.0.map(|ip| format!("login:ip:{ip}")),
        }
    }

    /// 429 when either counter is past its limit.
    pub async fn check(&self, state: &AppState, context: &SessionContext) -> Result<(), ApiError> {
        let store = state.sessions.store();
        let now = state.sessions.now();
        let account = store.peek(&self.account, now).await?;
        if account.count >= ACCOUNT_LIMIT {
            tracing::warn!(
                context = context.name,
                reason = "account",
                "login throttled"
            );
            return Err(rate_limited(account.retry_after));
        }
        if let Some(address) = &self.address {
            let counter = store.peek(address, now).await?;
            if counter.count >= ADDRESS_LIMIT {
                tracing::warn!(
                    context = context.name,
                    reason = "address",
                    "login throttled"
                );
                return Err(rate_limited(counter.retry_after));
            }
        }
        Ok(())
    }

    pub async fn failed(&self, state: &AppState) -> Result<(), ApiError> {
        let store = state.sessions.store();
        let now = state.sessions.now();
        store.hit(&self.account, WINDOW_SECONDS, now).await?;
        if let Some(address) = &self.address {
            store.hit(address, WINDOW_SECONDS, now).await?;
        }
        Ok(())
    }

    /// A successful login clears the account's count (not the address's).
    pub async fn succeeded(&self, state: &AppState) -> Result<(), ApiError> {
        Ok(state.sessions.store().clear(&self.account).await?)
    }
}

fn rate_limited(retry_after: i64) -> ApiError {
    ApiError::RateLimited {
        retry_after_seconds: retry_after.max(1) as u64,
    }
}
