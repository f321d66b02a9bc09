//! Session lifecycle: open (login), authenticate (every request), refresh, close (logout).

use http::{HeaderMap, Method, header};
use std::net::IpAddr;
use std::sync::Arc;

use crate::store::{
    AnyStore, Ending, Rotation, SessionKey, SessionLimits, SessionMeta, SessionRecord, StoreError,
    TokenStore, USER_AGENT_BYTES, idle_out,
};
use crate::token::TokenKeys;
use crate::{
    AccessClaims, Clock, CookiePolicy, OriginPolicy, SessionContext, SessionId, read_cookie,
};

/// The header a client echoes the CSRF cookie's value in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// Lifetimes of the specification (§5.3, §8), the contract's concurrent-refresh window (§3)
/// and its limits on sessions (§8, §9).
#[derive(Debug, Clone, Copy)]
pub struct SessionPolicy {
    pub access_seconds: i64,
    pub session_seconds: i64,
    /// A token superseded by a refresh less than this long ago is a concurrent request of the
    /// same browser, not a theft.
    pub grace_seconds: i64,
    /// `last_seen_at` is rewritten when a request finds it at least this old (or a quarter of
    /// the context's idle timeout, if shorter), so that reads rarely write.
    pub touch_seconds: i64,
    /// Live sessions per identity and context; a login beyond it ends the least recently used
    /// one. 0: no limit.
    pub sessions_per_identity: usize,
}

impl Default for SessionPolicy {
    fn default() -> Self {
        Self {
            access_seconds: 60 * 60,
            session_seconds: 7 * 24 * 60 * 60,
            grace_seconds: 10,
            touch_seconds: 60,
            sessions_per_identity: 20,
        }
    }
}

/// Why a request's session credentials were refused. Each maps to one error of the contract.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no access cookie of this context")]
    Unauthenticated,
    #[error("access token is invalid")]
    InvalidToken,
    #[error("access token has expired")]
    AccessExpired,
    #[error("session has ended")]
    SessionEnded,
    #[error("CSRF token missing or wrong")]
    CsrfFailed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A verified request: who it is and which session and access token it came with.
#[derive(Debug, Clone, Copy)]
pub struct Authenticated {
    pub subject: i64,
    pub ruid: SessionId,
    pub uid: SessionId,
    /// Whether the session presented a second factor (see [`AccessClaims::second_factor`]).
    pub second_factor: bool,
}

impl Authenticated {
    pub fn key(&self) -> SessionKey {
        SessionKey {
            subject: self.subject,
            ruid: self.ruid,
        }
    }
}

/// Why sessions ended, as the `careers_sessions_ended_total{context,reason}` series spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// Logout of the session itself.
    Logout,
    /// Ended by its owner from another session, by an admin, or by a new login in the same
    /// browser.
    Revoked,
    /// Unused for the context's idle timeout.
    Idle,
    /// A superseded token was presented (possible theft).
    Theft,
    /// The least recently used beyond the per-identity cap.
    Cap,
    /// A password change or reset.
    Password,
    /// A second factor confirmed, replaced or removed (the admin's other sessions), or a
    /// session that never presented the factor its admin now has.
    SecondFactor,
    /// `sessions flush`.
    Flush,
}

impl EndReason {
    pub fn name(self) -> &'static str {
        match self {
            Self::Logout => "logout",
            Self::Revoked => "revoked",
            Self::Idle => "idle",
            Self::Theft => "theft",
            Self::Cap => "cap",
            Self::Password => "password",
            Self::SecondFactor => "second_factor",
            Self::Flush => "flush",
        }
    }
}

/// Counts `n` ended sessions of `context` (a no-op without a metrics recorder).
fn ended(context: &SessionContext, reason: EndReason, n: u64) {
    if n > 0 {
        metrics::counter!(
            "careers_sessions_ended_total",
            "context" => context.name,
            "reason" => reason.name()
        )
        .increment(n);
    }
}

/// One session of an identity as its owner (or an admin) sees it (CONTRACT §9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The public handle ([`SessionId::public_handle`]), never the refresh UID.
    pub id: SessionId,
    pub created_at: i64,
    pub last_seen_at: i64,
    pub expires_at: i64,
    pub ip: Option<IpAddr>,
    pub user_agent: String,
    /// Whether it is the session of the request that asked.
    pub current: bool,
}

/// Fresh credentials after login or refresh, for the cookies and the response body.
#[derive(Debug, Clone)]
pub struct IssuedAccess {
    pub subject: i64,
    pub access_token: String,
    pub csrf: String,
    pub access_expires_at: i64,
    pub session_expires_at: i64,
}

pub struct SessionEngine {
    keys: TokenKeys,
    store: AnyStore,
    clock: Arc<dyn Clock>,
    cookies: CookiePolicy,
    origins: OriginPolicy,
    policy: SessionPolicy,
    /// Idle timeouts by context namespace; a context not listed has none.
    idle_timeouts: Vec<(&'static str, i64)>,
}

impl SessionEngine {
    pub fn new(
        keys: TokenKeys,
        store: AnyStore,
        clock: Arc<dyn Clock>,
        cookies: CookiePolicy,
        origins: OriginPolicy,
        policy: SessionPolicy,
    ) -> Self {
        Self {
            keys,
            store,
            clock,
            cookies,
            origins,
            policy,
            idle_timeouts: Vec::new(),
        }
    }

    /// Ends the context's sessions after `seconds` without an authenticated request or refresh
    /// (CONTRACT §9); 0 keeps only the absolute end.
    pub fn with_idle_timeout(mut self, context: &SessionContext, seconds: i64) -> Self {
        self.idle_timeouts
            .retain(|(ns, _)| *ns != context.namespace);
        if seconds > 0 {
            self.idle_timeouts.push((context.namespace, seconds));
        }
        self
    }

    /// The context's idle timeout in seconds, 0 for none.
    pub fn idle_seconds(&self, context: &SessionContext) -> i64 {
        self.idle_timeouts
            .iter()
            .find(|(ns, _)| *ns == context.namespace)
            .map_or(0, |(_, seconds)| *seconds)
    }

    /// How stale `last_seen_at` may get: a request finding it older rewrites it.
    fn touch_after(&self, idle_seconds: i64) -> i64 {
        if idle_seconds > 0 {
            self.policy.touch_seconds.min((idle_seconds / 4).max(1))
        } else {
            self.policy.touch_seconds
        }
    }

    fn session_limits(&self, context: &SessionContext) -> SessionLimits {
        SessionLimits {
            grace_seconds: self.policy.grace_seconds,
            idle_seconds: self.idle_seconds(context),
        }
    }

    pub fn origins(&self) -> &OriginPolicy {
        &self.origins
    }

    pub fn cookies(&self) -> &CookiePolicy {
        &self.cookies
    }

    pub fn store(&self) -> &AnyStore {
        &self.store
    }

    pub fn keys(&self) -> &TokenKeys {
        &self.keys
    }

    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    pub fn policy(&self) -> &SessionPolicy {
        &self.policy
    }

    /// Login: a new session for `subject` with a new refresh UID and access token, recording
    /// the client address `ip` and the request's `User-Agent` for listings, and whether the
    /// login presented a second factor (carried by every token of the session).
    ///
    /// The session named by the request's own access cookie of this context, if any, is the
    /// one this login replaces in that browser: it is ended first. When the identity already
    /// has as many sessions as the policy allows, its least recently used ones end.
    pub async fn open(
        &self,
        context: &SessionContext,
        subject: i64,
        headers: &HeaderMap,
        ip: Option<IpAddr>,
        second_factor: bool,
    ) -> Result<IssuedAccess, SessionError> {
        let now = self.clock.now();
        if let Ok(replaced) = self.verified_claims(context, headers)
            && self
                .store
                .revoke(context.namespace, &replaced.session_key())
                .await?
        {
            ended(context, EndReason::Revoked, 1);
            crate::identity_event!(
                info,
                *context,
                replaced.subject,
                "session replaced by a new login in the same browser"
            );
        }
        let key = SessionKey {
            subject,
            ruid: SessionId::random(),
        };
        let record = SessionRecord {
            subject,
            access_uid: SessionId::random(),
            access_iat: now,
            previous_uid: None,
            rotated_at: 0,
            created_at: now,
            last_seen_at: now,
            expires_at: now + self.policy.session_seconds,
        };
        let meta = SessionMeta {
            ip,
            user_agent: user_agent(headers),
        };
        let evicted = self
            .store
            .insert(
                context.namespace,
                &key,
                &record,
                &meta,
                self.policy.sessions_per_identity,
                now,
            )
            .await?;
        if evicted > 0 {
            ended(context, EndReason::Cap, evicted as u64);
            crate::identity_event!(
                info,
                *context,
                subject,
                evicted,
                "least recently used sessions ended: sessions per identity at the limit"
            );
        }
        Ok(self.issue(context, &key.ruid, &record, second_factor))
    }

    /// Every authenticated request: signature, HS256, payload key, CSRF on unsafe methods,
    /// session alive in the context's namespace and not idle too long, token's UID current,
    /// access not expired.
    ///
    /// A token superseded by a refresh more than the grace window ago can only be a copy that
    /// outlived its browser's cookie: the whole session ends (theft detection, CONTRACT §8).
    /// Inside the window it is refused without ending anything: a concurrent request of the
    /// browser that refreshed.
    pub async fn authenticate(
        &self,
        context: &SessionContext,
        method: &Method,
        headers: &HeaderMap,
    ) -> Result<Authenticated, SessionError> {
        let claims = self.verified_request(context, method, headers)?;
        self.live_session(context, claims).await
    }

    /// [`authenticate`](Self::authenticate), with `load(subject)` run beside the store's
    /// check, so that an area that reads its identity's rows overlaps the two round trips.
    /// `load` starts only for a correctly signed token (and, on unsafe methods, the right CSRF
    /// header), and its output is handed back only with a live session: the caller decides
    /// on both together.
    pub async fn authenticate_with<F: Future>(
        &self,
        context: &SessionContext,
        method: &Method,
        headers: &HeaderMap,
        load: impl FnOnce(i64) -> F,
    ) -> Result<(Authenticated, F::Output), SessionError> {
        let claims = self.verified_request(context, method, headers)?;
        let subject = claims.subject;
        let (session, loaded) = tokio::join!(self.live_session(context, claims), load(subject));
        Ok((session?, loaded))
    }

    /// The checks that need no store: signature, algorithm, payload key, and CSRF on unsafe
    /// methods.
    fn verified_request(
        &self,
        context: &SessionContext,
        method: &Method,
        headers: &HeaderMap,
    ) -> Result<AccessClaims, SessionError> {
        let claims = self.verified_claims(context, headers)?;
        if !is_safe(method) {
            self.check_csrf(context, headers, &claims)?;
        }
        Ok(claims)
    }

    /// The store's part of [`authenticate`](Self::authenticate) for verified claims.
    async fn live_session(
        &self,
        context: &SessionContext,
        claims: AccessClaims,
    ) -> Result<Authenticated, SessionError> {
        let now = self.clock.now();
        let key = claims.session_key();
        let live = self
            .store
            .access(context.namespace, &key, now)
            .await?
            .ok_or(SessionError::SessionEnded)?;
        let idle_seconds = self.idle_seconds(context);
        if idle_out(live.last_seen_at, now, idle_seconds) {
            if self.store.revoke(context.namespace, &key).await? {
                ended(context, EndReason::Idle, 1);
            }
            crate::identity_event!(
                info,
                *context,
                claims.subject,
                "session ended: idle timeout"
            );
            return Err(SessionError::SessionEnded);
        }
        if live.access_uid != claims.uid {
            // Signed for this session but not its current UID: superseded at `access_iat`.
            if now - live.access_iat >= self.policy.grace_seconds {
                if self.store.revoke(context.namespace, &key).await? {
                    ended(context, EndReason::Theft, 1);
                }
                crate::identity_event!(
                    warn,
                    *context,
                    claims.subject,
                    "superseded access token presented: session ended (possible theft)"
                );
            }
            return Err(SessionError::SessionEnded);
        }
        if claims.exp <= now {
            return Err(SessionError::AccessExpired);
        }
        if now - live.last_seen_at >= self.touch_after(idle_seconds) {
            self.store.touch(context.namespace, &key, now).await?;
        }
        Ok(Authenticated {
            subject: claims.subject,
            ruid: claims.ruid,
            uid: claims.uid,
            second_factor: claims.second_factor,
        })
    }

    /// Like [`authenticate`](Self::authenticate), but any failure is "nobody": for areas that
    /// identify a user when they can and proceed anonymously otherwise. Store faults still fail.
    pub async fn identify(
        &self,
        context: &SessionContext,
        method: &Method,
        headers: &HeaderMap,
    ) -> Result<Option<Authenticated>, StoreError> {
        match self.authenticate(context, method, headers).await {
            Ok(found) => Ok(Some(found)),
            Err(SessionError::Store(error)) => Err(error),
            Err(_) => Ok(None),
        }
    }

    /// Refresh: new access UID and CSRF, same refresh UID and session end. An expired but
    /// correctly signed access token is accepted while its session lives.
    pub async fn refresh(
        &self,
        context: &SessionContext,
        headers: &HeaderMap,
    ) -> Result<IssuedAccess, SessionError> {
        let claims = self.verified_claims(context, headers)?;
        self.check_csrf(context, headers, &claims)?;
        let now = self.clock.now();
        let key = claims.session_key();
        let rotation = self
            .store
            .rotate(
                context.namespace,
                &key,
                &claims.uid,
                &SessionId::random(),
                now,
                self.session_limits(context),
            )
            .await?;
        match rotation {
            Rotation::Rotated(record) | Rotation::Replayed(record)
                if record.subject == claims.subject =>
            {
                Ok(self.issue(context, &claims.ruid, &record, claims.second_factor))
            }
            Rotation::Superseded => {
                ended(context, EndReason::Theft, 1);
                crate::identity_event!(
                    warn,
                    *context,
                    claims.subject,
                    "superseded access token presented to refresh: session ended (possible theft)"
                );
                Err(SessionError::SessionEnded)
            }
            _ => Err(SessionError::SessionEnded),
        }
    }

    /// Logout: ends the session the access cookie belongs to.
    pub async fn close(
        &self,
        context: &SessionContext,
        headers: &HeaderMap,
    ) -> Result<i64, SessionError> {
        let claims = self.verified_claims(context, headers)?;
        self.check_csrf(context, headers, &claims)?;
        let now = self.clock.now();
        let key = claims.session_key();
        match self
            .store
            .end(
                context.namespace,
                &key,
                &claims.uid,
                now,
                self.session_limits(context),
            )
            .await?
        {
            Ending::Ended => {
                ended(context, EndReason::Logout, 1);
                Ok(claims.subject)
            }
            Ending::Superseded => {
                ended(context, EndReason::Theft, 1);
                crate::identity_event!(
                    warn,
                    *context,
                    claims.subject,
                    "superseded access token presented to logout: session ended (possible theft)"
                );
                Err(SessionError::SessionEnded)
            }
            Ending::Missing => Err(SessionError::SessionEnded),
        }
    }

    /// The current session's new access UID and CSRF, as a refresh gives them, for a request
    /// that authenticated already (a password change; a second factor confirmed, which raises
    /// the session to `second_factor`: a privilege raise gets new credentials).
    pub async fn reissue(
        &self,
        context: &SessionContext,
        session: &Authenticated,
        second_factor: bool,
    ) -> Result<IssuedAccess, SessionError> {
        let now = self.clock.now();
        let rotation = self
            .store
            .rotate(
                context.namespace,
                &session.key(),
                &session.uid,
                &SessionId::random(),
                now,
                self.session_limits(context),
            )
            .await?;
        match rotation {
            Rotation::Rotated(record) if record.subject == session.subject => {
                Ok(self.issue(context, &session.ruid, &record, second_factor))
            }
            _ => Err(SessionError::SessionEnded),
        }
    }

    /// The identity's live sessions, most recently used first; `current` marks the one of
    /// `session`, if given. One store round trip through the identity's index.
    pub async fn sessions(
        &self,
        context: &SessionContext,
        subject: i64,
        session: Option<&Authenticated>,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        let now = self.clock.now();
        let idle_seconds = self.idle_seconds(context);
        let mut listed = self
            .store
            .list(context.namespace, subject, now)
            .await?
            .into_iter()
            .filter(|s| !idle_out(s.record.last_seen_at, now, idle_seconds))
            .map(|s| SessionInfo {
                id: s.id(),
                created_at: s.record.created_at,
                last_seen_at: s.record.last_seen_at,
                expires_at: s.record.expires_at,
                ip: s.meta.ip,
                user_agent: s.meta.user_agent,
                current: session.is_some_and(|current| current.ruid == s.ruid),
            })
            .collect::<Vec<_>>();
        listed.sort_by(|a, b| {
            (b.last_seen_at, b.created_at, b.id.0).cmp(&(a.last_seen_at, a.created_at, a.id.0))
        });
        Ok(listed)
    }

    /// Ends the identity's session with this public handle; which one it was (its refresh UID),
    /// or `None` when the identity has no such session.
    pub async fn end_session(
        &self,
        context: &SessionContext,
        subject: i64,
        id: &SessionId,
    ) -> Result<Option<SessionId>, StoreError> {
        let now = self.clock.now();
        let found = self
            .store
            .list(context.namespace, subject, now)
            .await?
            .into_iter()
            .find(|s| s.id() == *id);
        let Some(found) = found else {
            return Ok(None);
        };
        let key = SessionKey {
            subject,
            ruid: found.ruid,
        };
        let revoked = self.store.revoke(context.namespace, &key).await?;
        if revoked {
            ended(context, EndReason::Revoked, 1);
        }
        Ok(revoked.then_some(found.ruid))
    }

    /// Ends every session of the identity but `keep` (a refresh UID), if given, for `reason`;
    /// how many.
    /// Ends the session of a request that authenticated already, whatever its access UID;
    /// whether it still existed.
    pub async fn end_current(
        &self,
        context: &SessionContext,
        session: &Authenticated,
        reason: EndReason,
    ) -> Result<bool, StoreError> {
        let ended_now = self.store.revoke(context.namespace, &session.key()).await?;
        if ended_now {
            ended(context, reason, 1);
        }
        Ok(ended_now)
    }

    pub async fn end_sessions(
        &self,
        context: &SessionContext,
        subject: i64,
        keep: Option<&SessionId>,
        reason: EndReason,
    ) -> Result<usize, StoreError> {
        let n = self
            .store
            .revoke_all(context.namespace, subject, keep)
            .await?;
        ended(context, reason, n as u64);
        Ok(n)
    }

    /// Ends every session of one context.
    pub async fn flush(&self, context: &SessionContext) -> Result<u64, StoreError> {
        let n = self.store.flush(context.namespace).await?;
        ended(context, EndReason::Flush, n);
        Ok(n)
    }

    fn verified_claims(
        &self,
        context: &SessionContext,
        headers: &HeaderMap,
    ) -> Result<AccessClaims, SessionError> {
        let token =
            read_cookie(headers, context.access_cookie).ok_or(SessionError::Unauthenticated)?;
        self.keys
            .verify(context, token)
            .map_err(|_| SessionError::InvalidToken)
    }

    /// Double submit: `X-CSRF-Token` must equal the token bound to the access token. Defence
    /// in depth: a browser request from a foreign site is refused even with the right token.
    fn check_csrf(
        &self,
        context: &SessionContext,
        headers: &HeaderMap,
        claims: &AccessClaims,
    ) -> Result<(), SessionError> {
        let same_site = self.origins.permits(headers);
        let token_ok = headers.get(CSRF_HEADER).is_some_and(|v| {
            self.keys
                .csrf_matches(claims.key, &claims.uid, v.as_bytes())
        });
        if same_site && token_ok {
            return Ok(());
        }
        crate::identity_event!(
            warn,
            *context,
            claims.subject,
            cross_site = !same_site,
            "CSRF check failed"
        );
        Err(SessionError::CsrfFailed)
    }

    /// The access token and CSRF of a record's current access UID, both with the signing key: a
    /// session signed with an older key moves to the current one here. Re-issuing from the same
    /// record gives byte-identical values, which the grace-window replay relies on.
    fn issue(
        &self,
        context: &SessionContext,
        ruid: &SessionId,
        record: &SessionRecord,
        second_factor: bool,
    ) -> IssuedAccess {
        let claims = AccessClaims {
            subject: record.subject,
            uid: record.access_uid,
            ruid: *ruid,
            iat: record.access_iat,
            exp: record.access_iat + self.policy.access_seconds,
            second_factor,
            key: TokenKeys::SIGNING,
        };
        IssuedAccess {
            subject: record.subject,
            access_token: self.keys.sign(context, &claims),
            csrf: self.keys.csrf_for(TokenKeys::SIGNING, &record.access_uid),
            access_expires_at: claims.exp,
            session_expires_at: record.expires_at,
        }
    }
}

/// The request's `User-Agent`, cut to [`USER_AGENT_BYTES`] at a character boundary.
fn user_agent(headers: &HeaderMap) -> String {
    let Some(value) = headers.get(header::USER_AGENT) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    let mut end = text.len().min(USER_AGENT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}
