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

/// The client's address: the TCP peer, or, behind a trusted load balancer configured with
/// `CLIENT_IP_HEADER`, the rightmost entry of that header (the one the balancer appended;
/// entries further left come from the client and could be forged).
pub struct ClientAddr(pub Option<IpAddr>);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| info.0.ip());
        let forwarded = state
            .config
            .client_ip_header
            .as_ref()
            .and_then(|name| rightmost_address(&parts.headers, name));
        Ok(Self(forwarded.or(peer)))
    }
}

/// The last address of every value of `name` taken together.
pub fn rightmost_address(
    headers: &axum::http::HeaderMap,
    name: &axum::http::HeaderName,
) -> Option<IpAddr> {
    let last_value = headers.get_all(name).iter().next_back()?.to_str().ok()?;
    let entry = last_value.rsplit(',').next()?.trim();
    entry
        .parse::<IpAddr>()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|a| a.ip()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderName, HeaderValue};

    #[test]
    fn the_balancers_entry_is_the_rightmost() {
        let name = HeaderName::from_static("x-forwarded-for");
        let mut headers = HeaderMap::new();
        assert_eq!(rightmost_address(&headers, &name), None);
        headers.append(&name, HeaderValue::from_static("6.6.6.6, 10.0.0.7"));
        assert_eq!(rightmost_address(&headers, &name), "10.0.0.7".parse().ok());
        headers.append(&name, HeaderValue::from_static("203.0.113.9"));
        assert_eq!(
            rightmost_address(&headers, &name),
            "203.0.113.9".parse().ok()
        );
        let mut v6 = HeaderMap::new();
        v6.insert(&name, HeaderValue::from_static("[2001:db8::1]:443"));
        assert_eq!(rightmost_address(&v6, &name), "2001:db8::1".parse().ok());
        let mut junk = HeaderMap::new();
        junk.insert(&name, HeaderValue::from_static("1.2.3.4, not-an-ip"));
        assert_eq!(rightmost_address(&junk, &name), None);
    }
}
