//! Abuse throttles (CONTRACT §8), counted in the token store so every instance sees the same
//! counts.
//!
//! Logins: failures are counted per (account, client address) and per client address across
//! accounts, so an attacker hammering an account from elsewhere never locks its owner out. An
//! attempt is counted *before* its password is verified, so a burst of parallel guesses cannot
//! slip past the limit, and refunded when the password was right. Sign-ups: at most so many per
//! client address an hour. Past a limit the answer is 429 `rate_limited` with `Retry-After`.
//! IPv6 clients count by their /64, the block one subscriber usually holds.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use sessions::{SessionContext, TokenStore};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::state::AppState;

/// The window of the login failure counters.
pub const LOGIN_WINDOW_SECONDS: i64 = 15 * 60;
/// The window of the sign-up counter.
pub const SIGNUP_WINDOW_SECONDS: i64 = 60 * 60;

/// The client's address (CONTRACT §1): the TCP peer, unless the peer is one of
/// `TRUSTED_PROXIES` and `CLIENT_IP_HEADER` is set; then the rightmost address of that header
/// that is not a trusted proxy (the one the outermost balancer appended; entries further left
/// come from the client and could be forged), or the peer when the header is absent or that
/// entry is not an address.
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
        let config = &state.config;
        Ok(Self(client_address(
            peer,
            &parts.headers,
            config.client_ip_header.as_ref(),
            &config.trusted_proxies,
        )))
    }
}

/// The client address of a request from `peer` (see [`ClientAddr`]): also what the edge layer
/// marks every log line of the request with (`client_ip`, CONTRACT §8).
pub fn client_address(
    peer: Option<IpAddr>,
    headers: &axum::http::HeaderMap,
    header: Option<&axum::http::HeaderName>,
    proxies: &[ipnet::IpNet],
) -> Option<IpAddr> {
    let forwarded = match (peer, header) {
        (Some(peer), Some(name)) if trusted(proxies, peer) => {
            client_behind_proxies(headers, name, proxies)
        }
        _ => None,
    };
    forwarded.or(peer)
}

fn trusted(proxies: &[ipnet::IpNet], ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    proxies.iter().any(|net| net.contains(&ip))
}

/// The rightmost address of every value of `name` taken together that is not in `proxies`;
/// `None` when there is none or it is not an address.
pub fn client_behind_proxies(
    headers: &axum::http::HeaderMap,
    name: &axum::http::HeaderName,
    proxies: &[ipnet::IpNet],
) -> Option<IpAddr> {
    let values: Vec<&str> = headers
        .get_all(name)
        .iter()
        .map(|value| value.to_str().ok())
        .collect::<Option<_>>()?;
    for entry in values.iter().rev().flat_map(|value| value.rsplit(',')) {
        let ip = parse_entry(entry.trim())?;
        if !trusted(proxies, ip) {
            return Some(ip);
        }
    }
    None
}

/// An address as balancers write it: bare, or with a port (`1.2.3.4:5678`, `[::1]:80`).
fn parse_entry(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|a| a.ip()))
}

/// What the throttles count a client address as: an IPv4 address as it is, an IPv6 address by
/// its /64 (an IPv4-mapped IPv6 address as the IPv4 address it maps).
pub fn address_bucket(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
    }
}

fn bucket_of(client: &ClientAddr) -> String {
    client
        .0
        .map_or_else(|| "unknown".to_owned(), address_bucket)
}

/// The counters one login attempt touches. E-mails are hashed: keys hold no personal data.
pub struct LoginThrottle {
    account: String,
    address: String,
}

impl LoginThrottle {
    pub fn new(context: &SessionContext, email: &str, client: &ClientAddr) -> Self {
        let hex = email_key(email);
        let bucket = bucket_of(client);
        Self {
            account: format!("login:{}:{hex}:{bucket}", context.name),
            address: format!("login:ip:{bucket}"),
        }
    }

    /// Counts this attempt as a failure until [`refund`](Self::refund) says otherwise; 429 when
    /// either counter is past its limit, whatever the password.
    pub async fn attempt(
        &self,
        state: &AppState,
        context: &SessionContext,
    ) -> Result<(), ApiError> {
        let limits = state.config.limits;
        let over = count_each(
            state,
            LOGIN_WINDOW_SECONDS,
            &[
                (&self.account, limits.login_failures_per_account, "account"),
                (&self.address, limits.login_failures_per_address, "address"),
            ],
        )
        .await?;
        if let Some((reason, retry_after)) = over {
            tracing::warn!(context = context.name, reason, "login throttled");
            return Err(rate_limited(retry_after));
        }
        Ok(())
    }

    /// The password was right: this attempt was no failure.
    pub async fn refund(&self, state: &AppState) -> Result<(), ApiError> {
        let store = state.sessions.store();
        let now = state.sessions.now();
        let (account, address) = tokio::join!(
            store.refund(&self.account, now),
            store.refund(&self.address, now),
        );
        account?;
        Ok(address?)
    }
}

/// Wrong TOTP codes per identity from every address together, in the login window (CONTRACT §8):
/// past it an `otp` is refused (429), a recovery code is still accepted. Only someone who knows
/// the password, or holds a session, reaches it, so it cannot lock the owner out.
pub const OTP_FAILURES_PER_ACCOUNT: u64 = 10;

/// The per-account counter of TOTP codes: a code is counted before it is checked and refunded
/// when it was right, so a burst of parallel guesses cannot pass the cap either.
pub struct OtpThrottle {
    key: String,
}

impl OtpThrottle {
    pub fn new(context: &SessionContext, identity_id: i64) -> Self {
        Self {
            key: format!("otp:{}:{identity_id}", context.name),
        }
    }

    /// Counts this code as wrong until [`refund`](Self::refund); 429 past the cap.
    pub async fn attempt(&self, state: &AppState) -> Result<(), ApiError> {
        let counter = state
            .sessions
            .store()
            .hit(&self.key, LOGIN_WINDOW_SECONDS, state.sessions.now())
            .await?;
        if counter.count > OTP_FAILURES_PER_ACCOUNT {
            tracing::warn!(key = %self.key, "second-factor code throttled");
            return Err(rate_limited(counter.retry_after));
        }
        Ok(())
    }

    /// The code was right: it was no failure.
    pub async fn refund(&self, state: &AppState) -> Result<(), ApiError> {
        Ok(state
            .sessions
            .store()
            .refund(&self.key, state.sessions.now())
            .await?)
    }
}

/// A second-factor code an admin presents on the routes of §11: it counts as a login attempt
/// of (account, client address) and, a TOTP code, on the per-account cap, both refunded when
/// it was right (CONTRACT §8).
pub struct CodeGuess {
    login: LoginThrottle,
    otp: Option<OtpThrottle>,
}

impl CodeGuess {
    /// Counts the guess; 429 when either throttle is past its limit.
    pub async fn start(
        state: &AppState,
        context: &SessionContext,
        (identity_id, email): (i64, &str),
        client: &ClientAddr,
        totp: bool,
    ) -> Result<Self, ApiError> {
        let guess = Self {
            login: LoginThrottle::new(context, email, client),
            otp: totp.then(|| OtpThrottle::new(context, identity_id)),
        };
        guess.login.attempt(state, context).await?;
        if let Some(otp) = &guess.otp {
            otp.attempt(state).await?;
        }
        Ok(guess)
    }

    /// The code was right.
    pub async fn right(&self, state: &AppState) -> Result<(), ApiError> {
        self.login.refund(state).await?;
        match &self.otp {
            Some(otp) => otp.refund(state).await,
            None => Ok(()),
        }
    }
}

/// Sign-ups per client address (CONTRACT §8): every sign-up attempt with a valid form counts.
pub async fn count_signup(state: &AppState, client: &ClientAddr) -> Result<(), ApiError> {
    let key = format!("signup:ip:{}", bucket_of(client));
    let counter = state
        .sessions
        .store()
        .hit(&key, SIGNUP_WINDOW_SECONDS, state.sessions.now())
        .await?;
    if counter.count > state.config.limits.signups_per_hour {
        tracing::warn!(reason = "address", "sign-up throttled");
        return Err(rate_limited(counter.retry_after));
    }
    Ok(())
}

/// Verification messages one user may ask for in an hour (CONTRACT §14).
pub const VERIFICATION_REQUESTS_PER_HOUR: u64 = 5;

/// `POST /identities/email_verifications` per user: at most
/// [`VERIFICATION_REQUESTS_PER_HOUR`] an hour.
pub async fn count_verification_request(state: &AppState, user_id: i64) -> Result<(), ApiError> {
    let counter = state
        .sessions
        .store()
        .hit(
            &format!("verify:{user_id}"),
            RESET_WINDOW_SECONDS,
            state.sessions.now(),
        )
        .await?;
    if counter.count > VERIFICATION_REQUESTS_PER_HOUR {
        tracing::warn!(user_id, "e-mail verification request throttled");
        return Err(rate_limited(counter.retry_after));
    }
    Ok(())
}

/// Invitations a company sends in a day (`INVITATIONS_PER_COMPANY_PER_DAY`, CONTRACT §14):
/// counted in the token store, so that the cap holds across instances and racing requests.
pub async fn count_invitation(state: &AppState, company_id: i64) -> Result<(), ApiError> {
    const DAY_SECONDS: i64 = 24 * 60 * 60;
    let counter = state
        .sessions
        .store()
        .hit(
            &format!("invite:{company_id}"),
            DAY_SECONDS,
            state.sessions.now(),
        )
        .await?;
    if counter.count > state.config.invitations.per_company_per_day {
        tracing::warn!(company_id, "invitations throttled: the company's daily cap");
        return Err(rate_limited(counter.retry_after));
    }
    Ok(())
}

/// The window of the password-reset counters (and of the verification requests'): an hour.
pub const RESET_WINDOW_SECONDS: i64 = 60 * 60;

/// Password-reset requests from one client address for one e-mail address in an hour
/// (`PASSWORD_RESET_LIMIT_PER_EMAIL`), for one e-mail address from every client address
/// (this), and from one client address (`PASSWORD_RESET_LIMIT_PER_ADDRESS`).
pub const RESETS_PER_EMAIL_FROM_ALL_ADDRESSES: u64 = 20;

/// Password-reset requests per (e-mail, client address), per e-mail from all addresses and per
/// client address (CONTRACT §10). Every request counts, for an unknown address as for a known
/// one, so the answer tells nothing; someone asking from elsewhere uses up only the e-mail's
/// overall share, never the owner's own (e-mail, address) count.
pub async fn count_password_reset(
    state: &AppState,
    email: &str,
    client: &ClientAddr,
) -> Result<(), ApiError> {
    let limits = state.config.limits;
    let (email, address) = (email_key(email), bucket_of(client));
    let over = count_each(
        state,
        RESET_WINDOW_SECONDS,
        &[
            (
                &format!("reset:{email}:ip:{address}"),
                limits.password_resets_per_email,
                "email_and_address",
            ),
            (
                &format!("reset:{email}"),
                RESETS_PER_EMAIL_FROM_ALL_ADDRESSES,
                "email",
            ),
            (
                &format!("reset:ip:{address}"),
                limits.password_resets_per_address,
                "address",
            ),
        ],
    )
    .await?;
    if let Some((reason, retry_after)) = over {
        tracing::warn!(reason, "password reset throttled");
        return Err(rate_limited(retry_after));
    }
    Ok(())
}

/// A counter key for an e-mail address that does not carry it: the first 16 bytes of its
/// SHA-256, in hex.
fn email_key(email: &str) -> String {
    let digest = Sha256::digest(email.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Counts one event on each counter at once (with Redis, one round trip's wait); the answer
/// is the first whose count passed its limit, with the seconds left in its window.
async fn count_each(
    state: &AppState,
    window_seconds: i64,
    counters: &[(&str, u64, &'static str)],
) -> Result<Option<(&'static str, i64)>, ApiError> {
    let store = state.sessions.store();
    let now = state.sessions.now();
    let counts = futures_util::future::join_all(
        counters
            .iter()
            .map(|(key, _, _)| store.hit(key, window_seconds, now)),
    )
    .await;
    for (count, (_, limit, name)) in counts.into_iter().zip(counters) {
        let count = count?;
        if count.count > *limit {
            return Ok(Some((name, count.retry_after)));
        }
    }
    Ok(None)
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
    fn the_client_is_the_rightmost_entry_that_is_not_a_trusted_proxy() {
        let name = HeaderName::from_static("x-forwarded-for");
        let one: Vec<ipnet::IpNet> = vec!["10.0.0.1/32".parse().unwrap()];
        let hops: Vec<ipnet::IpNet> = vec![
            "10.0.0.0/8".parse().unwrap(),
            "2001:db8:ffff::/48".parse().unwrap(),
        ];
        let client = |headers: &HeaderMap, proxies: &[ipnet::IpNet]| {
            client_behind_proxies(headers, &name, proxies)
        };
        let mut headers = HeaderMap::new();
        assert_eq!(client(&headers, &one), None, "no header");
        headers.append(&name, HeaderValue::from_static("6.6.6.6, 10.0.0.7"));
        assert_eq!(client(&headers, &one), "10.0.0.7".parse().ok());
        assert_eq!(
            client(&headers, &hops),
            "6.6.6.6".parse().ok(),
            "10.0.0.7 is a trusted hop"
        );
        headers.append(&name, HeaderValue::from_static("203.0.113.9"));
        assert_eq!(
            client(&headers, &hops),
            "203.0.113.9".parse().ok(),
            "the last of several values"
        );
        let mut all_trusted = HeaderMap::new();
        all_trusted.insert(&name, HeaderValue::from_static("10.1.1.1, 10.2.2.2"));
        assert_eq!(client(&all_trusted, &hops), None);
        let mut v6 = HeaderMap::new();
        v6.insert(
            &name,
            HeaderValue::from_static("[2001:db8::1]:443, 2001:db8:ffff::9"),
        );
        assert_eq!(client(&v6, &hops), "2001:db8::1".parse().ok());
        let mut junk = HeaderMap::new();
        junk.insert(&name, HeaderValue::from_static("1.2.3.4, not-an-ip"));
        assert_eq!(
            client(&junk, &one),
            None,
            "the rightmost entry is no address"
        );
    }

    #[test]
    fn a_mapped_ipv4_peer_is_trusted_as_its_ipv4_address() {
        let proxies: Vec<ipnet::IpNet> = vec!["127.0.0.1/32".parse().unwrap()];
        assert!(trusted(&proxies, "::ffff:127.0.0.1".parse().unwrap()));
        assert!(trusted(&proxies, "127.0.0.1".parse().unwrap()));
        assert!(!trusted(&proxies, "127.0.0.2".parse().unwrap()));
    }

    #[test]
    fn ipv6_counts_by_its_64_and_mapped_ipv4_as_ipv4() {
        let bucket = |text: &str| address_bucket(text.parse().unwrap());
        assert_eq!(bucket("203.0.113.9"), "203.0.113.9");
        assert_eq!(bucket("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        assert_eq!(
            bucket("2001:db8:1:2:ffff:ffff:ffff:ffff"),
            "2001:db8:1:2::/64"
        );
        assert_ne!(bucket("2001:db8:1:3::1"), bucket("2001:db8:1:2::1"));
        assert_eq!(bucket("::ffff:203.0.113.9"), "203.0.113.9");
    }
}
