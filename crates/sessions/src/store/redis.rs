//! Redis (standalone or Cluster) store for production: shared by every API instance.
//!
//! A session is one hash at `{prefix}{namespace}:{{subject}}:{ruid}`; the identity's index is a
//! sorted set at `{prefix}{namespace}:{{subject}}` whose members are its sessions' refresh UIDs,
//! scored by `last_seen_at`. The braces are a Cluster hash tag: every key of one identity maps
//! to one slot, so each Lua script that changes a session and the index touches a single slot.
//! Records carry a TTL equal to the session's remaining life and disappear by themselves; the
//! index lives as long as its longest-lived session, and members whose record expired are
//! dropped by the next login of that identity.

use std::fmt::Write as _;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use fred::bytes::Bytes;
use fred::prelude::*;
use fred::types::RespVersion;
use fred::types::scan::Scanner;
use fred::types::scripts::Script;
use futures::StreamExt;

use super::{
    Counter, Ending, ListedSession, LiveAccess, Rotation, SessionKey, SessionLimits, SessionMeta,
    SessionRecord, StoreError, TokenStore, USER_AGENT_BYTES,
};
use crate::SessionId;

mod cache;
mod reads;
pub use cache::CacheStats;
use cache::{Access, AccessCache, Lookup};
use reads::BatchedReads;

// A record's fields. Every value is at most 64 bytes (`hash-max-listpack-value`), so Redis keeps
// the hash as one compact listpack (a single longer value would turn it into a hash table of
// about four times the memory), and the fields are chosen so that a session with an IPv6
// address and a common browser's `User-Agent` stays in a 224-byte allocation (DECISIONS 112):
//
// - `u`: the current access UID (16 raw bytes), followed after a refresh by the one it replaced
//   (32 bytes); `i`: when the current one was issued, which is also when the last refresh
//   happened; `c`, `l`, `e`: created, last seen, end (Unix seconds);
// - `n`: the login's client address, 4 or 16 raw bytes (absent when unknown);
// - `v` to `z`: the `User-Agent` in pieces of at most `UA_PIECE` bytes.
//
// The subject is not stored: the key carries it. Records of the earlier layout are read and
// changed as they are (its `s`, `p` for the previous UID, `r` for the rotation time, `a` for
// the address as text, `g1` to `g4` for the `User-Agent`); their first refresh rewrites them.

/// What `get` and a listing read, in this order.
const FIELDS: [&str; 6] = ["u", "p", "i", "c", "l", "e"];
/// What authentication reads: the access UIDs, the current one's issue time, last seen, end.
const ACCESS_FIELDS: [&str; 4] = ["u", "i", "l", "e"];

/// A listing reads these after `FIELDS`: the address (raw, then the earlier layout's text),
/// then the `User-Agent`'s pieces (the earlier layout's, then this one's; a record has one set).
const META_FIELDS: [&str; 11] = ["n", "a", "g1", "g2", "g3", "g4", "v", "w", "x", "y", "z"];
/// Pieces of 63 bytes: a value of 64 bytes or more takes a 2-byte length in a listpack.
const UA_PIECE: usize = 63;
const UA_PIECES: usize = 5;
const _: () = assert!(UA_PIECE * UA_PIECES >= USER_AGENT_BYTES && UA_PIECE <= 64);

/// Lua shared by the scripts that compare a presented access UID with a record's: `uids(u, p)`
/// splits `u` into the current and the previous UID ('' before the first refresh), reading the
/// earlier layout's `p` when `u` holds only the current one.
macro_rules! lua_uids {
    () => {
        r"
local function uids(u, p)
  local previous = string.sub(u, 17)
  if previous == '' then previous = p or '' end
  return string.sub(u, 1, 16), previous
end
"
    };
}

// KEYS: record, index. ARGV: u, i, c, l, e, TTL, member, limit, score, record key prefix,
// address, then the `User-Agent`'s pieces (empty ones are not set).
// Drops index members whose record is gone, then the least recently used sessions while the
// identity has `limit` or more; returns how many it ended that way.
const INSERT: &str = r"
local idx = KEYS[2]
local prefix = ARGV[10]
local limit = tonumber(ARGV[8])
for _, m in ipairs(redis.call('ZRANGE', idx, 0, -1)) do
  if redis.call('EXISTS', prefix .. m) == 0 then redis.call('ZREM', idx, m) end
end
local evicted = 0
if limit > 0 then
  while redis.call('ZCARD', idx) >= limit do
    local oldest = redis.call('ZRANGE', idx, 0, 0)[1]
    redis.call('DEL', prefix .. oldest)
    redis.call('ZREM', idx, oldest)
    evicted = evicted + 1
  end
end
redis.call('HSET', KEYS[1], 'u', ARGV[1], 'i', ARGV[2], 'c', ARGV[3], 'l', ARGV[4], 'e', ARGV[5])
if ARGV[11] ~= '' then redis.call('HSET', KEYS[1], 'n', ARGV[11]) end
local pieces = {'v', 'w', 'x', 'y', 'z'}
for n = 1, 5 do
  if ARGV[11 + n] ~= '' then redis.call('HSET', KEYS[1], pieces[n], ARGV[11 + n]) end
end
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', idx, ARGV[9], ARGV[7])
if redis.call('TTL', idx) < tonumber(ARGV[6]) then redis.call('EXPIRE', idx, ARGV[6]) end
return evicted
";

// KEYS: record, index. ARGV: now, member. Only an existing record is touched.
const TOUCH: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'l', ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[2])
return 1
";

// KEYS: record, index. ARGV: presented, new, now, grace, member, idle (0: none).
// Returns {1, FIELDS...} rotated, {2, FIELDS...} replayed, {3} superseded (deleted), {0}
// missing (an expired or idle session is deleted on the way). A rotation writes this layout's
// `u` and drops the earlier layout's `s`, `p` and `r`.
const ROTATE: &str = concat!(
    lua_uids!(),
    r"
local k = KEYS[1]
local f = redis.call('HMGET', k, 'u', 'p', 'i', 'e', 'l')
if not f[1] then return {0} end
local now = tonumber(ARGV[3])
local idle = tonumber(ARGV[6])
if tonumber(f[4]) <= now or (idle > 0 and now - tonumber(f[5]) >= idle) then
  redis.call('DEL', k)
  redis.call('ZREM', KEYS[2], ARGV[5])
  return {0}
end
local current, previous = uids(f[1], f[2])
if current == ARGV[1] then
  redis.call('HSET', k, 'u', ARGV[2] .. current, 'i', ARGV[3], 'l', ARGV[3])
  redis.call('HDEL', k, 's', 'p', 'r')
  redis.call('ZADD', KEYS[2], 'XX', ARGV[3], ARGV[5])
  local r = redis.call('HMGET', k, 'u', 'p', 'i', 'c', 'l', 'e')
  table.insert(r, 1, 1)
  return r
end
if previous ~= '' and previous == ARGV[1] and now - tonumber(f[3]) < tonumber(ARGV[4]) then
  local r = redis.call('HMGET', k, 'u', 'p', 'i', 'c', 'l', 'e')
  table.insert(r, 1, 2)
  return r
end
redis.call('DEL', k)
redis.call('ZREM', KEYS[2], ARGV[5])
return {3}
"
);

// KEYS: record, index. ARGV: presented, now, grace, member, idle (0: none).
// Deletes the record whatever it holds; returns 1 ended, 2 superseded, 0 missing, expired or
// idle.
const END: &str = concat!(
    lua_uids!(),
    r"
local k = KEYS[1]
local f = redis.call('HMGET', k, 'u', 'p', 'i', 'e', 'l')
redis.call('ZREM', KEYS[2], ARGV[4])
if not f[1] then return 0 end
redis.call('DEL', k)
local now = tonumber(ARGV[2])
local idle = tonumber(ARGV[5])
if tonumber(f[4]) <= now or (idle > 0 and now - tonumber(f[5]) >= idle) then return 0 end
local current, previous = uids(f[1], f[2])
if current == ARGV[1] then return 1 end
if previous ~= '' and previous == ARGV[1] and now - tonumber(f[3]) < tonumber(ARGV[3]) then return 1 end
return 2
"
);

// KEYS: record, index. ARGV: member. Returns whether the record existed.
const REVOKE: &str = r"
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
";

// KEYS: index. ARGV: record key prefix, the member to keep ('' for none). Ends every other
// session of the identity; returns how many.
const REVOKE_ALL: &str = r"
local ended = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if m ~= ARGV[2] then
    ended = ended + redis.call('DEL', ARGV[1] .. m)
    redis.call('ZREM', KEYS[1], m)
  end
end
return ended
";

// KEYS: index. ARGV: record key prefix. The identity's sessions: for each member whose record
// exists, the member then its fields in FIELDS and META_FIELDS order; members whose record
// has expired leave the index on the way.
const LIST: &str = r"
local out = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local f = redis.call('HMGET', ARGV[1] .. m, 'u', 'p', 'i', 'c', 'l', 'e', 'n', 'a', 'g1', 'g2', 'g3', 'g4', 'v', 'w', 'x', 'y', 'z')
  if f[1] then
    table.insert(out, m)
    for i = 1, 17 do table.insert(out, f[i]) end
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
return out
";

// Returns {count, seconds left}. The first event of a window sets its expiry; a counter that
// was refunded to zero keeps its window.
const HIT: &str = r"
local c = redis.call('INCR', KEYS[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {c, ttl}
";

// DECR keeps the key's expiry: the window stays as it is.
const REFUND: &str = r"
local c = redis.call('GET', KEYS[1])
if c and tonumber(c) > 0 then redis.call('DECR', KEYS[1]) end
return 0
";

#[derive(Debug, Clone)]
pub struct RedisStoreConfig {
    /// `redis://host:port[/db]`, or `redis-cluster://host:port?node=host:port...` for Cluster.
    pub url: String,
    /// Prefix of every key (`careers:`), so several deployments or tests share one server.
    pub key_prefix: String,
    /// How long one command may take before the request fails closed.
    pub command_timeout: Duration,
    /// Keep the sessions this instance checked, with Redis's client-side caching (RESP3
    /// `CLIENT TRACKING`): a check of a session read before is confirmed by one `PING` for its
    /// whole batch instead of read (see `cache`, DECISIONS 115). Ignored with Redis Cluster.
    pub cache_sessions: bool,
}

/// The session cache and its watcher, which ends when this is dropped.
struct Cached {
    cache: Arc<AccessCache>,
    _stop_watch: tokio::sync::oneshot::Sender<()>,
}

impl std::ops::Deref for Cached {
    type Target = AccessCache;
    fn deref(&self) -> &AccessCache {
        &self.cache
    }
}

pub struct RedisStore {
    client: Client,
    /// The session check's reads, written to Redis in batches (see `reads`).
    access_reads: BatchedReads,
    /// The sessions checked here, while Redis tracks them for this client (`cache_sessions`).
    cache: Option<Cached>,
    prefix: String,
    insert: Script,
    touch: Script,
    rotate: Script,
    end: Script,
    revoke: Script,
    revoke_all: Script,
    list: Script,
    hit: Script,
    refund: Script,
}

fn unavailable(error: Error) -> StoreError {
    StoreError::Unavailable(error.details().to_owned())
}

impl RedisStore {
    /// Builds the client and starts connecting. An unreachable server is not an error here:
    /// the client keeps reconnecting, requests fail closed until it is back.
    pub async fn connect(config: RedisStoreConfig) -> Result<Self, StoreError> {
        if config
            .key_prefix
            .bytes()
            .any(|b| matches!(b, b'*' | b'?' | b'[' | b']' | b'\\' | b'{' | b'}'))
        {
            return Err(StoreError::Unavailable(
                "key prefix must not contain glob or hash-tag characters".into(),
            ));
        }
        let mut redis_config = Config::from_url(&config.url).map_err(unavailable)?;
        redis_config.fail_fast = true;
        // One confirming `PING` covers every key only on a single server (see `cache`).
        let cache_sessions = config.cache_sessions && !redis_config.server.is_clustered();
        if config.cache_sessions && !cache_sessions {
            tracing::warn!("token store: the session cache is not used with Redis Cluster");
        }
        if cache_sessions {
            // Invalidation messages come on the connection that read the key: RESP3 only.
            redis_config.version = RespVersion::RESP3;
        }
        let timeout = config.command_timeout;
        let client = Builder::from_config(redis_config)
            .with_connection_config(|c| {
                c.connection_timeout = timeout;
                c.internal_command_timeout = timeout;
                c.max_command_attempts = 2;
            })
            .with_performance_config(|p| {
                p.default_command_timeout = timeout;
                // Invalidations wait here for the cache's watcher; one it missed resets it.
                p.broadcast_channel_capacity = 4096;
            })
            .set_policy(ReconnectPolicy::new_constant(0, 250))
            .build()
            .map_err(unavailable)?;
        // The cache subscribes before the first connection (`AccessCache::new`), so that
        // `catch_up` sees every new connection.
        let cache = cache_sessions.then(|| {
            let cache = Arc::new(AccessCache::new(&client));
            let (stop, stopped) = tokio::sync::oneshot::channel();
            tokio::spawn(cache::watch(client.clone(), Arc::clone(&cache), stopped));
            Cached {
                cache,
                _stop_watch: stop,
            }
        });
        client.connect();
        if tokio::time::timeout(timeout * 2, client.wait_for_connect())
            .await
            .ok()
            .and_then(Result::ok)
            .is_none()
        {
            tracing::warn!("token store: Redis not reachable yet; retrying in the background");
        }
        Ok(Self {
            access_reads: BatchedReads::start(
                client.clone(),
                cache.as_ref().map(|cached| Arc::clone(&cached.cache)),
                timeout,
            ),
            cache,
            client,
            prefix: config.key_prefix,
            insert: Script::from_lua(INSERT),
            touch: Script::from_lua(TOUCH),
            rotate: Script::from_lua(ROTATE),
            end: Script::from_lua(END),
            revoke: Script::from_lua(REVOKE),
            revoke_all: Script::from_lua(REVOKE_ALL),
            list: Script::from_lua(LIST),
            hit: Script::from_lua(HIT),
            refund: Script::from_lua(REFUND),
        })
    }

    /// The identity's index; its records' keys are this, `:` and the refresh UID.
    fn index_key(&self, namespace: &str, subject: i64) -> String {
        format!("{}{}:{{{}}}", self.prefix, namespace, subject)
    }

    /// One session's record: its identity's index key, `:` and its refresh UID.
    fn record_key(&self, namespace: &str, key: &SessionKey) -> String {
        let mut record = self.index_key(namespace, key.subject);
        write!(record, ":{}", key.ruid).expect("a String takes any write");
        record
    }

    /// (record key, index key, index member) of one session; the index key is built once.
    fn keys(&self, namespace: &str, key: &SessionKey) -> (String, String, String) {
        let index = self.index_key(namespace, key.subject);
        let member = key.ruid.to_string();
        (format!("{index}:{member}"), index, member)
    }

    /// Counter keys carry their name as a hash tag, like session keys.
    fn counter_key(&self, key: &str) -> String {
        format!("{}counter:{{{}}}", self.prefix, key)
    }

    /// Some fields of one session's hash, in the order asked (nil where absent).
    async fn fields<const N: usize>(
        &self,
        namespace: &str,
        key: &SessionKey,
        names: &[&str; N],
    ) -> Result<Vec<Value>, StoreError> {
        self.client
            .hmget(self.record_key(namespace, key), names)
            .await
            .map_err(|e| self.failed(e))
    }

    /// A command failed: the connection may have lost invalidations, so nothing cached is
    /// served until tracking is on again.
    fn failed(&self, error: Error) -> StoreError {
        if let Some(cache) = &self.cache {
            cache.reset();
        }
        unavailable(error)
    }

    /// This instance changed `record_key` (or tried to): its copy goes, so that the next check
    /// reads it at once instead of confirming a copy that the invalidation will drop. Changes
    /// to sessions it does not name (the sessions an insert evicts, `revoke_all`, `flush`)
    /// reach the cache as anyone's do: through the invalidations that a confirmation waits for.
    fn changed(&self, record_key: &str) {
        if let Some(cache) = &self.cache {
            cache.forget(record_key.as_bytes());
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The session cache's counters; `None` when `cache_sessions` is off.
    pub fn cache_stats(&self) -> Option<CacheStats> {
        self.cache.as_ref().map(|cache| cache.stats())
    }

    async fn run<R: FromValue>(
        &self,
        script: &Script,
        keys: Vec<String>,
        args: Vec<Value>,
    ) -> Result<R, StoreError> {
        script
            .evalsha_with_reload(&self.client, keys, args)
            .await
            .map_err(|e| self.failed(e))
    }

    /// Runs a script that changes the session at `record_key` (its first key) and the index,
    /// then drops this instance's copy of it, whatever the outcome.
    async fn change<R: FromValue>(
        &self,
        script: &Script,
        record_key: String,
        index: String,
        args: Vec<Value>,
    ) -> Result<R, StoreError> {
        let reply = self
            .run(script, vec![record_key.clone(), index], args)
            .await;
        self.changed(&record_key);
        reply
    }
}

/// Namespaces are plain names: letters, digits, `_` and `-`.
fn valid_namespace(namespace: &str) -> bool {
    !namespace.is_empty()
        && namespace
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn uid_value(uid: &SessionId) -> Value {
    Value::Bytes(Bytes::copy_from_slice(&uid.0))
}

/// No record at the key: neither its access UID nor its end (`FIELDS` and `ACCESS_FIELDS`
/// both begin with `u` and end with `e`). One without the other is a damaged record.
fn absent(fields: &[Value]) -> bool {
    fields.first().is_none_or(Value::is_null) && fields.last().is_none_or(Value::is_null)
}

fn int_of(value: &Value) -> Result<i64, StoreError> {
    match value {
        Value::Integer(i) => Ok(*i),
        other => other
            .as_bytes()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.parse().ok())
            .ok_or(StoreError::Corrupt),
    }
}

fn uid_of(value: &Value) -> Result<Option<SessionId>, StoreError> {
    match value.as_bytes() {
        Some([]) | None => Ok(None),
        Some(bytes) => <[u8; 16]>::try_from(bytes)
            .map(|b| Some(SessionId(b)))
            .map_err(|_| StoreError::Corrupt),
    }
}

/// `u`: the current access UID, then (after a refresh) the previous one.
fn uids_value(current: &SessionId, previous: Option<&SessionId>) -> Value {
    let mut bytes = Vec::with_capacity(32);
    bytes.extend_from_slice(&current.0);
    if let Some(previous) = previous {
        bytes.extend_from_slice(&previous.0);
    }
    Value::Bytes(Bytes::from(bytes))
}

/// The current and the previous access UID from `u`, or from `u` and the earlier layout's `p`.
fn uids_of(u: &Value, p: &Value) -> Result<(SessionId, Option<SessionId>), StoreError> {
    let bytes = u.as_bytes().ok_or(StoreError::Corrupt)?;
    let id = |b: &[u8]| <[u8; 16]>::try_from(b).map(SessionId);
    match bytes.len() {
        16 => Ok((id(bytes).map_err(|_| StoreError::Corrupt)?, uid_of(p)?)),
        32 => {
            let (current, previous) = bytes.split_at(16);
            match (id(current), id(previous)) {
                (Ok(current), Ok(previous)) => Ok((current, Some(previous))),
                _ => Err(StoreError::Corrupt),
            }
        }
        _ => Err(StoreError::Corrupt),
    }
}

/// An address as its 4 or 16 bytes.
fn address_value(ip: Option<IpAddr>) -> Value {
    let bytes = match ip {
        Some(IpAddr::V4(v4)) => v4.octets().to_vec(),
        Some(IpAddr::V6(v6)) => v6.octets().to_vec(),
        None => Vec::new(),
    };
    Value::Bytes(Bytes::from(bytes))
}

/// Reads the fields in `META_FIELDS` order (empty when absent).
fn meta_of(fields: &[Value]) -> Result<SessionMeta, StoreError> {
    let [raw, text, pieces @ ..] = fields else {
        return Err(StoreError::Corrupt);
    };
    let mut agent = Vec::new();
    for piece in pieces {
        agent.extend_from_slice(piece.as_bytes().unwrap_or_default());
    }
    let ip = match raw.as_bytes().unwrap_or_default() {
        [] => std::str::from_utf8(text.as_bytes().unwrap_or_default())
            .ok()
            .and_then(|text| text.parse().ok()),
        bytes => match bytes.len() {
            4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
            16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
            _ => return Err(StoreError::Corrupt),
        },
    };
    Ok(SessionMeta {
        ip,
        user_agent: String::from_utf8_lossy(&agent).into_owned(),
    })
}

/// The record of `subject` from the fields in `FIELDS` order.
fn record_of(subject: i64, fields: &[Value]) -> Result<SessionRecord, StoreError> {
    let [u, p, i, c, l, e] = fields else {
        return Err(StoreError::Corrupt);
    };
    let (access_uid, previous_uid) = uids_of(u, p)?;
    let access_iat = int_of(i)?;
    Ok(SessionRecord {
        subject,
        access_uid,
        access_iat,
        // A refresh issues the current access token: the two times are one.
        rotated_at: if previous_uid.is_some() {
            access_iat
        } else {
            0
        },
        previous_uid,
        created_at: int_of(c)?,
        last_seen_at: int_of(l)?,
        expires_at: int_of(e)?,
    })
}

impl TokenStore for RedisStore {
    async fn insert(
        &self,
        namespace: &str,
        key: &SessionKey,
        record: &SessionRecord,
        meta: &SessionMeta,
        limit: usize,
        now: i64,
    ) -> Result<usize, StoreError> {
        let ttl = (record.expires_at - now).max(1);
        let (record_key, index, member) = self.keys(namespace, key);
        let mut args = vec![
            uids_value(&record.access_uid, record.previous_uid.as_ref()),
            Value::from(record.access_iat),
            Value::from(record.created_at),
            Value::from(record.last_seen_at),
            Value::from(record.expires_at),
            Value::from(ttl),
            Value::from(member),
            Value::from(limit as i64),
            Value::from(record.last_seen_at),
            Value::from(format!("{index}:")),
            address_value(meta.ip),
        ];
        let agent = meta.user_agent.as_bytes();
        for piece in 0..UA_PIECES {
            let start = (piece * UA_PIECE).min(agent.len());
            let end = (start + UA_PIECE).min(agent.len());
            args.push(Value::Bytes(Bytes::copy_from_slice(&agent[start..end])));
        }
        let evicted = self
            .change::<i64>(&self.insert, record_key, index, args)
            .await?;
        Ok(evicted.max(0) as usize)
    }

    async fn list(
        &self,
        namespace: &str,
        subject: i64,
        now: i64,
    ) -> Result<Vec<ListedSession>, StoreError> {
        let index = self.index_key(namespace, subject);
        let prefix = Value::from(format!("{index}:"));
        let reply: Vec<Value> = self.run(&self.list, vec![index], vec![prefix]).await?;
        let width = 1 + FIELDS.len() + META_FIELDS.len();
        if !reply.len().is_multiple_of(width) {
            return Err(StoreError::Corrupt);
        }
        let mut sessions = Vec::with_capacity(reply.len() / width);
        for row in reply.chunks_exact(width) {
            let (member, fields) = row.split_first().ok_or(StoreError::Corrupt)?;
            let (fields, meta) = fields.split_at(FIELDS.len());
            let record = record_of(subject, fields)?;
            if record.expires_at <= now {
                continue;
            }
            let ruid = member
                .as_str()
                .and_then(|text| SessionId::parse(&text))
                .ok_or(StoreError::Corrupt)?;
            sessions.push(ListedSession {
                ruid,
                record,
                meta: meta_of(meta)?,
            });
        }
        Ok(sessions)
    }

    async fn get(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> Result<Option<SessionRecord>, StoreError> {
        let fields = self.fields(namespace, key, &FIELDS).await?;
        if absent(&fields) {
            return Ok(None);
        }
        let record = record_of(key.subject, &fields)?;
        Ok((record.expires_at > now).then_some(record))
    }

    async fn access(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> Result<Option<LiveAccess>, StoreError> {
        let record_key = self.record_key(namespace, key);
        let Some(cache) = &self.cache else {
            let fields = self.access_reads.access_fields(record_key).await?;
            return Ok(access_of(&fields)?.and_then(|access| access.live_at(now)));
        };
        let mut lookup = cache.lookup(&record_key, self.client.is_connected(), false);
        if let Lookup::Confirm = lookup {
            if let Err(error) = self.access_reads.confirm().await {
                cache.reset();
                return Err(error);
            }
            lookup = cache.lookup(&record_key, self.client.is_connected(), true);
        }
        let ticket = match lookup {
            Lookup::Hit(access) => return Ok(access.live_at(now)),
            Lookup::Miss(ticket) => Some(ticket),
            Lookup::Confirm | Lookup::Bypass => None,
        };
        let read = self.access_reads.access_fields(record_key.clone()).await;
        let found = match read {
            Ok(fields) => access_of(&fields),
            Err(error) => {
                cache.reset();
                Err(error)
            }
        };
        if let Some(ticket) = ticket {
            match &found {
                Ok(Some(access)) => cache.fill(&record_key, ticket, *access),
                _ => cache.abandon(&record_key, ticket),
            }
        }
        Ok(found?.and_then(|access| access.live_at(now)))
    }

    async fn touch(&self, namespace: &str, key: &SessionKey, now: i64) -> Result<(), StoreError> {
        let (record_key, index, member) = self.keys(namespace, key);
        let args = vec![Value::from(now), Value::from(member)];
        self.change::<Value>(&self.touch, record_key, index, args)
            .await
            .map(drop)
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
        let (record_key, index, member) = self.keys(namespace, key);
        let args = vec![
            uid_value(presented),
            uid_value(new_uid),
            Value::from(now),
            Value::from(limits.grace_seconds),
            Value::from(member),
            Value::from(limits.idle_seconds),
        ];
        let reply: Vec<Value> = self.change(&self.rotate, record_key, index, args).await?;
        match reply.split_first() {
            Some((code, rest)) => match int_of(code)? {
                1 => Ok(Rotation::Rotated(record_of(key.subject, rest)?)),
                2 => Ok(Rotation::Replayed(record_of(key.subject, rest)?)),
                3 => Ok(Rotation::Superseded),
                _ => Ok(Rotation::Missing),
            },
            None => Err(StoreError::Corrupt),
        }
    }

    async fn end(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        now: i64,
        limits: SessionLimits,
    ) -> Result<Ending, StoreError> {
        let (record_key, index, member) = self.keys(namespace, key);
        let args = vec![
            uid_value(presented),
            Value::from(now),
            Value::from(limits.grace_seconds),
            Value::from(member),
            Value::from(limits.idle_seconds),
        ];
        let code: i64 = self.change(&self.end, record_key, index, args).await?;
        Ok(match code {
            1 => Ending::Ended,
            2 => Ending::Superseded,
            _ => Ending::Missing,
        })
    }

    async fn revoke(&self, namespace: &str, key: &SessionKey) -> Result<bool, StoreError> {
        let (record_key, index, member) = self.keys(namespace, key);
        let removed: i64 = self
            .change(&self.revoke, record_key, index, vec![Value::from(member)])
            .await?;
        Ok(removed > 0)
    }

    async fn revoke_all(
        &self,
        namespace: &str,
        subject: i64,
        keep: Option<&SessionId>,
    ) -> Result<usize, StoreError> {
        let index = self.index_key(namespace, subject);
        let prefix = Value::from(format!("{index}:"));
        let keep = Value::from(keep.map(SessionId::to_string).unwrap_or_default());
        let ended = self
            .run::<i64>(&self.revoke_all, vec![index], vec![prefix, keep])
            .await?;
        Ok(ended.max(0) as usize)
    }

    async fn flush(&self, namespace: &str) -> Result<u64, StoreError> {
        // A pattern must match this namespace only: `a` must not also flush `a:b` or act as a glob.
        if !valid_namespace(namespace) {
            return Err(StoreError::Unavailable(format!(
                "invalid namespace {namespace:?}"
            )));
        }
        let pattern = format!("{}{}:*", self.prefix, namespace);
        let mut removed = 0u64;
        // Cluster: SCAN runs on every primary; each key is unlinked on its own node.
        let mut pages = if self.client.is_clustered() {
            self.client.scan_cluster(pattern, Some(1000), None).boxed()
        } else {
            self.client.scan(pattern, Some(1000), None).boxed()
        };
        while let Some(page) = pages.next().await {
            let mut page = page.map_err(|e| self.failed(e))?;
            if let Some(keys) = page.take_results()
                && !keys.is_empty()
            {
                let pipeline = self.client.pipeline();
                // Only session records count as sessions; identity indexes (their keys end
                // with the hash tag's brace) go with them.
                let mut records = Vec::with_capacity(keys.len());
                for key in keys {
                    records.push(!key.as_bytes().ends_with(b"}"));
                    let _: () = pipeline.unlink(key).await.map_err(|e| self.failed(e))?;
                }
                let counts: Vec<i64> = pipeline.all().await.map_err(|e| self.failed(e))?;
                removed += counts
                    .iter()
                    .zip(records)
                    .filter(|(_, record)| *record)
                    .map(|(n, _)| *n)
                    .sum::<i64>() as u64;
            }
            page.next();
        }
        Ok(removed)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.client
            .ping::<Value>(None)
            .await
            .map(drop)
            .map_err(|e| self.failed(e))
    }

    async fn hit(&self, key: &str, window_seconds: i64, _now: i64) -> Result<Counter, StoreError> {
        let reply: Vec<Value> = self
            .run(
                &self.hit,
                vec![self.counter_key(key)],
                vec![Value::from(window_seconds)],
            )
            .await?;
        counter_of(&reply)
    }

    async fn refund(&self, key: &str, _now: i64) -> Result<(), StoreError> {
        self.run::<Value>(&self.refund, vec![self.counter_key(key)], vec![])
            .await
            .map(drop)
    }
}

/// A session check's fields (`ACCESS_FIELDS` order); `None` when the record is gone.
fn access_of(fields: &[Value]) -> Result<Option<Access>, StoreError> {
    if absent(fields) {
        return Ok(None);
    }
    let [u, i, l, e] = fields else {
        return Err(StoreError::Corrupt);
    };
    Ok(Some(Access {
        live: LiveAccess {
            access_uid: uids_of(u, &Value::Null)?.0,
            access_iat: int_of(i)?,
            last_seen_at: int_of(l)?,
        },
        expires_at: int_of(e)?,
    }))
}

fn counter_of(reply: &[Value]) -> Result<Counter, StoreError> {
    match reply {
        [count, ttl] => Ok(Counter {
            count: int_of(count)?.max(0) as u64,
            retry_after: int_of(ttl)?.max(0),
        }),
        _ => Err(StoreError::Corrupt),
    }
}
