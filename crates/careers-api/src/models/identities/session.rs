//! A session as its owner or an admin sees it (CONTRACT §9). Sessions live in the token store,
//! not the database: the `sessions` crate lists and ends them; this is their response shape.

use serde::Serialize;
use sessions::SessionInfo;

use crate::timestamp::rfc3339;

/// One session: its public handle (never a credential), times, client address and browser.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionView {
    /// The session's public handle, for `DELETE .../sessions/{id}`.
    pub id: String,
    pub created_at: String,
    /// The last authenticated request or refresh, at most a minute stale (or a quarter of the
    /// context's idle timeout, if shorter).
    pub last_seen_at: String,
    /// The absolute end: login + 7 days.
    pub expires_at: String,
    /// The client address of the login, when known.
    pub ip: Option<String>,
    /// The login's `User-Agent`, at most 256 bytes.
    pub user_agent: String,
    /// Whether this is the session of the request.
    pub current: bool,
}

impl From<SessionInfo> for SessionView {
    fn from(s: SessionInfo) -> Self {
        Self {
            id: s.id.to_string(),
            created_at: rfc3339(s.created_at),
            last_seen_at: rfc3339(s.last_seen_at),
            expires_at: rfc3339(s.expires_at),
            ip: s.ip.map(|ip| ip.to_canonical().to_string()),
            user_agent: s.user_agent,
            current: s.current,
        }
    }
}
