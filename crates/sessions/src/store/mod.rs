//! Where sessions live: one namespace per context, records keyed by identity and refresh UID.
//!
//! Every per-request operation touches one record (O(1), no scans). The sessions of one
//! identity are kept together with an index of them (one Redis Cluster slot, one memory
//! shard), so that creating, rotating and ending a session changes the record and the index
//! atomically, and the per-identity cap needs no scan. Refresh and logout are atomic
//! compare-and-swap operations on the current access UID, so however many refreshes race, a
//! session rotates once, and a logout racing a refresh can never bring it back.

mod memory;
mod redis;

pub use memory::MemoryStore;
pub use redis::{CacheStats, RedisStore, RedisStoreConfig};

use std::future::Future;
use std::net::IpAddr;

use crate::SessionId;

/// Where one session lives: whose it is and its refresh UID. Both come from the verified
/// access token, so a lookup never needs more than the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionKey {
    pub subject: i64,
    pub ruid: SessionId,
}

/// One session as the store holds it. The CSRF token is not stored: it is derived from
/// `access_uid` (see [`crate::TokenKeys::csrf_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionRecord {
    pub subject: i64,
    /// UID of the one access token currently valid for this session.
    pub access_uid: SessionId,
    /// When the current access token was issued (login or the last refresh); with
    /// `access_uid` it re-creates the token. A superseded token was replaced at this time.
    pub access_iat: i64,
    /// The access UID that was current until the last refresh, for the grace window.
    pub previous_uid: Option<SessionId>,
    /// When the last refresh happened (0 before the first).
    pub rotated_at: i64,
    pub created_at: i64,
    /// The last authenticated request or refresh, at most [`crate::SessionPolicy`]'s
    /// `touch_seconds` stale: the per-identity cap ends the least recently used session.
    pub last_seen_at: i64,
    pub expires_at: i64,
}

/// What a session's owner sees of it besides its times (CONTRACT §9). Written at login, read
/// only by listings: the per-request path never touches it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionMeta {
    /// The client address of the login (the one the throttles count), when known.
    pub ip: Option<IpAddr>,
    /// The login's `User-Agent`, at most [`USER_AGENT_BYTES`] bytes.
    pub user_agent: String,
}

/// How much of a `User-Agent` a session keeps.
pub const USER_AGENT_BYTES: usize = 256;

/// One live session of an identity, as a listing returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSession {
    pub ruid: SessionId,
    pub record: SessionRecord,
    pub meta: SessionMeta,
}

impl ListedSession {
    /// The session's public handle (see [`SessionId::public_handle`]).
    pub fn id(&self) -> SessionId {
        self.ruid.public_handle()
    }
}

/// What every authenticated request reads of its session. [`TokenStore::access`] reads just
/// this, where [`TokenStore::get`] reads the whole record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveAccess {
    pub access_uid: SessionId,
    pub access_iat: i64,
    pub last_seen_at: i64,
}

impl From<&SessionRecord> for LiveAccess {
    fn from(record: &SessionRecord) -> Self {
        Self {
            access_uid: record.access_uid,
            access_iat: record.access_iat,
            last_seen_at: record.last_seen_at,
        }
    }
}

/// What a refresh compare-and-swap found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotation {
    /// The presented UID was current: the session now carries the new one.
    Rotated(SessionRecord),
    /// The presented UID was superseded less than the grace window ago: here is the result of
    /// that refresh, unchanged.
    Replayed(SessionRecord),
    /// A superseded UID outside the grace window (token theft): the session has been ended.
    Superseded,
    /// No such session (logged out, ended, expired, never existed).
    Missing,
}

/// What a logout found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Current (or grace-window) credentials: the session is ended.
    Ended,
    /// A superseded UID outside the grace window: the session has been ended all the same.
    Superseded,
    Missing,
}

/// A fixed-window event counter (login throttling), shared by every instance using the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counter {
    pub count: u64,
    /// Seconds until the window closes (0 when no window is open).
    pub retry_after: i64,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backing service is unreachable or failed; callers fail closed.
    #[error("token store unavailable: {0}")]
    Unavailable(String),
    /// A record that cannot be read back (foreign or corrupt data).
    #[error("token store record is corrupt")]
    Corrupt,
}

/// The session store. `namespace` isolates contexts; `now` comes from the engine's clock.
pub trait TokenStore: Send + Sync {
    /// Stores a new session and indexes it under its identity. When the identity already has
    /// `limit` live sessions (0: no limit), the least recently used ones (oldest
    /// `last_seen_at`) are ended first; returns how many were.
    fn insert(
        &self,
        namespace: &str,
        key: &SessionKey,
        record: &SessionRecord,
        meta: &SessionMeta,
        limit: usize,
        now: i64,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// The identity's live sessions through its index (no scan), in no particular order.
    fn list(
        &self,
        namespace: &str,
        subject: i64,
        now: i64,
    ) -> impl Future<Output = Result<Vec<ListedSession>, StoreError>> + Send;

    /// The live record, or `None` when it does not exist or has reached its end.
    fn get(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> impl Future<Output = Result<Option<SessionRecord>, StoreError>> + Send;

    /// [`get`](Self::get) narrowed to what authentication checks, for the store's cheapest read
    /// (Redis: five fields of the eight). `None` exactly when `get` gives `None`.
    fn access(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> impl Future<Output = Result<Option<LiveAccess>, StoreError>> + Send;

    /// Sets `last_seen_at` to `now` if the session still exists.
    fn touch(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Refresh's compare-and-swap. A session idle for `idle_seconds` or more (0: no idle
    /// limit) is ended and reported `Missing`.
    fn rotate(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        new_uid: &SessionId,
        now: i64,
        limits: SessionLimits,
    ) -> impl Future<Output = Result<Rotation, StoreError>> + Send;

    /// Logout's compare-and-delete; an idle session is deleted and reported `Missing`, as
    /// [`rotate`](Self::rotate) does.
    fn end(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        now: i64,
        limits: SessionLimits,
    ) -> impl Future<Output = Result<Ending, StoreError>> + Send;

    /// Ends one session whatever its access UID; whether it existed.
    fn revoke(
        &self,
        namespace: &str,
        key: &SessionKey,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Ends every session of one identity but `keep` (a refresh UID), if given; returns how
    /// many it ended.
    fn revoke_all(
        &self,
        namespace: &str,
        subject: i64,
        keep: Option<&SessionId>,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// Ends every session of one namespace; returns how many records were removed.
    fn flush(&self, namespace: &str) -> impl Future<Output = Result<u64, StoreError>> + Send;

    fn ping(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Counts one event under `key`. A window opens with its first event and lasts
    /// `window_seconds`; returns the count within it and the seconds it has left.
    fn hit(
        &self,
        key: &str,
        window_seconds: i64,
        now: i64,
    ) -> impl Future<Output = Result<Counter, StoreError>> + Send;

    /// Takes one event of [`hit`](Self::hit) back (never below zero); the window stays.
    fn refund(&self, key: &str, now: i64) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// The time limits a refresh or a logout applies besides the session's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// A token superseded less than this long ago replays the refresh that superseded it.
    pub grace_seconds: i64,
    /// A session unseen for this long ends instead of rotating (0: no idle limit).
    pub idle_seconds: i64,
}

/// Whether a session has been idle too long: unseen for `idle_seconds` (0: never).
pub(crate) fn idle_out(last_seen_at: i64, now: i64, idle_seconds: i64) -> bool {
    idle_seconds > 0 && now - last_seen_at >= idle_seconds
}

/// The rules of a refresh, shared by every store that evaluates them in Rust. The caller has
/// already ended an idle session.
pub(crate) fn decide_rotation(
    record: &mut SessionRecord,
    presented: &SessionId,
    new_uid: &SessionId,
    now: i64,
    grace_seconds: i64,
) -> Rotation {
    if record.access_uid == *presented {
        record.previous_uid = Some(*presented);
        record.access_uid = *new_uid;
        record.access_iat = now;
        record.rotated_at = now;
        record.last_seen_at = now;
        Rotation::Rotated(*record)
    } else if in_grace(record, presented, now, grace_seconds) {
        Rotation::Replayed(*record)
    } else {
        Rotation::Superseded
    }
}

pub(crate) fn decide_ending(
    record: &SessionRecord,
    presented: &SessionId,
    now: i64,
    grace_seconds: i64,
) -> Ending {
    if record.access_uid == *presented || in_grace(record, presented, now, grace_seconds) {
        Ending::Ended
    } else {
        Ending::Superseded
    }
}

fn in_grace(record: &SessionRecord, presented: &SessionId, now: i64, grace_seconds: i64) -> bool {
    record.previous_uid == Some(*presented) && now - record.rotated_at < grace_seconds
}

/// The store the application runs on, chosen by configuration. There is one per process, so
/// the size difference between the variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyStore {
    Memory(MemoryStore),
    Redis(RedisStore),
}

impl AnyStore {
    /// The Redis session cache's counters; `None` in memory or with the cache off.
    pub fn cache_stats(&self) -> Option<CacheStats> {
        match self {
            AnyStore::Memory(_) => None,
            AnyStore::Redis(store) => store.cache_stats(),
        }
    }
}

macro_rules! delegate {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Memory($store) => $call.await,
            AnyStore::Redis($store) => $call.await,
        }
    };
}

impl TokenStore for AnyStore {
    async fn insert(
        &self,
        namespace: &str,
        key: &SessionKey,
        record: &SessionRecord,
        meta: &SessionMeta,
        limit: usize,
        now: i64,
    ) -> Result<usize, StoreError> {
        delegate!(self, s => s.insert(namespace, key, record, meta, limit, now))
    }

    async fn list(
        &self,
        namespace: &str,
        subject: i64,
        now: i64,
    ) -> Result<Vec<ListedSession>, StoreError> {
        delegate!(self, s => s.list(namespace, subject, now))
    }

    async fn get(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> Result<Option<SessionRecord>, StoreError> {
        delegate!(self, s => s.get(namespace, key, now))
    }

    async fn access(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> Result<Option<LiveAccess>, StoreError> {
        delegate!(self, s => s.access(namespace, key, now))
    }

    async fn touch(&self, namespace: &str, key: &SessionKey, now: i64) -> Result<(), StoreError> {
        delegate!(self, s => s.touch(namespace, key, now))
    }

    async fn rotate(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        new_uid: &SessionId,
        now: i64,
        limits: SessionLimits,
    ) -> Result<Rotation, StoreError> {
        delegate!(self, s => s.rotate(namespace, key, presented, new_uid, now, limits))
    }

    async fn end(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        now: i64,
        limits: SessionLimits,
    ) -> Result<Ending, StoreError> {
        delegate!(self, s => s.end(namespace, key, presented, now, limits))
    }

    async fn revoke(&self, namespace: &str, key: &SessionKey) -> Result<bool, StoreError> {
        delegate!(self, s => s.revoke(namespace, key))
    }

    async fn revoke_all(
        &self,
        namespace: &str,
        subject: i64,
        keep: Option<&SessionId>,
    ) -> Result<usize, StoreError> {
        delegate!(self, s => s.revoke_all(namespace, subject, keep))
    }

    async fn flush(&self, namespace: &str) -> Result<u64, StoreError> {
        delegate!(self, s => s.flush(namespace))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        delegate!(self, s => s.ping())
    }

    async fn hit(&self, key: &str, window_seconds: i64, now: i64) -> Result<Counter, StoreError> {
        delegate!(self, s => s.hit(key, window_seconds, now))
    }

    async fn refund(&self, key: &str, now: i64) -> Result<(), StoreError> {
        delegate!(self, s => s.refund(key, now))
    }
}
