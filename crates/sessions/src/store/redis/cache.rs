//! Sessions this instance read, kept until Redis says they changed (client-side caching).
//!
//! The session check reads the same few fields of the same record on every request of a
//! session. With `CLIENT TRACKING` on (RESP3), Redis remembers which keys this connection read
//! and pushes an `invalidate` message on the same connection when any client changes one of
//! them; until then the copy read here is current, and the check needs no round trip.
//!
//! What keeps a copy from being served after the record changed (DECISIONS 115):
//!
//! - **Own writes** drop the key here as soon as the write's reply is back, so the instance
//!   that ended or refreshed a session refuses its old token on the very next request.
//! - **Other instances' writes** arrive as invalidations, which drop the key.
//! - **A read that an invalidation overtook is not kept.** A miss leaves a placeholder with a
//!   ticket; an invalidation (or a clear) removes it, and the answer is kept only if its own
//!   placeholder is still there.
//! - **Nothing is kept or served unless tracking is on.** The cache starts *not ready*; the
//!   watcher turns tracking on and marks it ready. A reconnect, a connection error, a lagging
//!   event channel or any failed command makes it not ready and empty again, and the watcher
//!   turns tracking on anew (fred does not do that by itself after a reconnect).
//! - **Fail closed:** nothing is served while the client is not connected.
//! - **A copy is served for at most [`MAX_AGE`]**, whatever happened, as a bound on anything
//!   the rules above miss (fred drops the keyless invalidation that `FLUSHALL` sends).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fred::prelude::*;
use fred::types::Key;
use tokio::sync::Notify;
use tokio::sync::broadcast::error::RecvError;

use crate::store::LiveAccess;

/// The longest a copy is served without being read again.
pub(super) const MAX_AGE: Duration = Duration::from_secs(5);
/// At most this many sessions are kept; a new one then replaces an arbitrary one.
const MAX_ENTRIES: usize = 65_536;
/// How often the watcher looks again whether it can turn tracking on.
const RETRY: Duration = Duration::from_millis(50);
/// How long it waits for `CLIENT TRACKING ON` to be answered.
const TRACKING_TIMEOUT: Duration = Duration::from_secs(1);

/// A session check's fields as read from Redis: what `access` returns, and the session's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Access {
    pub live: LiveAccess,
    pub expires_at: i64,
}

impl Access {
    /// The check's answer at `now`: nothing once the session's end has passed.
    pub(super) fn live_at(self, now: i64) -> Option<LiveAccess> {
        (self.expires_at > now).then_some(self.live)
    }
}

enum Slot {
    /// A read of this key is in flight; its answer is kept only if this is still here.
    Pending(u64),
    Ready(Access, Instant),
}

#[derive(Default)]
struct State {
    /// Tracking is on for the current connection(s), and nothing was missed since.
    ready: bool,
    /// Counts resets, so that a `CLIENT TRACKING` answer that a reset overtook is ignored.
    resets: u64,
    hits: u64,
    misses: u64,
    next_ticket: u64,
    entries: HashMap<String, Slot>,
}

/// How the cache has done so far (for diagnostics and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Tracking is on and copies are served.
    pub ready: bool,
    /// Checks answered from a copy.
    pub hits: u64,
    /// Checks read from Redis to be kept (not counting those while not ready).
    pub misses: u64,
    /// How many times everything was dropped (reconnects, errors, lag).
    pub resets: u64,
}

/// What a look-up found.
pub(super) enum Lookup {
    Hit(Access),
    /// Read it from Redis, then hand the answer to [`AccessCache::fill`] with this ticket.
    Miss(u64),
    /// Not ready: read it from Redis and do not keep it.
    Bypass,
}

pub(super) struct AccessCache {
    state: Mutex<State>,
    /// Wakes the watcher when the cache stops being ready.
    lost: Notify,
}

impl AccessCache {
    pub(super) fn new() -> Self {
        Self {
            state: Mutex::new(State::default()),
            lost: Notify::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent at every point a panic could unwind from.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The copy of `key` if one may be served (`connected`: the client's connection is up).
    pub(super) fn lookup(&self, key: &str, connected: bool) -> Lookup {
        let mut state = self.state();
        if !state.ready || !connected {
            return Lookup::Bypass;
        }
        if let Some(Slot::Ready(access, at)) = state.entries.get(key)
            && at.elapsed() < MAX_AGE
        {
            let access = *access;
            state.hits += 1;
            return Lookup::Hit(access);
        }
        state.misses += 1;
        state.next_ticket += 1;
        let ticket = state.next_ticket;
        if state.entries.len() >= MAX_ENTRIES
            && !state.entries.contains_key(key)
            && let Some(victim) = state.entries.keys().next().cloned()
        {
            state.entries.remove(&victim);
        }
        state.entries.insert(key.to_owned(), Slot::Pending(ticket));
        Lookup::Miss(ticket)
    }

    /// Keeps what the read of `ticket` found, unless something dropped its placeholder since.
    pub(super) fn fill(&self, key: &str, ticket: u64, access: Access) {
        let mut state = self.state();
        if let Some(slot) = state.entries.get_mut(key)
            && matches!(slot, Slot::Pending(t) if *t == ticket)
        {
            *slot = Slot::Ready(access, Instant::now());
        }
    }

    /// The read of `ticket` found nothing or failed: its placeholder goes.
    pub(super) fn abandon(&self, key: &str, ticket: u64) {
        let mut state = self.state();
        if matches!(state.entries.get(key), Some(Slot::Pending(t)) if *t == ticket) {
            state.entries.remove(key);
        }
    }

    /// `key` changed (an invalidation, or a write of this instance).
    pub(super) fn forget(&self, key: &[u8]) {
        if let Ok(key) = std::str::from_utf8(key) {
            self.state().entries.remove(key);
        }
    }

    /// Drops every copy and placeholder; stays ready (a write of this instance that changed
    /// keys it does not name, such as ending all of an identity's sessions).
    pub(super) fn forget_all(&self) {
        self.state().entries.clear();
    }

    /// Drops everything and stops serving until the watcher has turned tracking on again.
    pub(super) fn reset(&self) {
        {
            let mut state = self.state();
            state.ready = false;
            state.resets += 1;
            state.entries.clear();
        }
        self.lost.notify_one();
    }

    pub(super) fn stats(&self) -> CacheStats {
        let state = self.state();
        CacheStats {
            ready: state.ready,
            hits: state.hits,
            misses: state.misses,
            resets: state.resets,
        }
    }

    /// Whether it is ready, and how many resets it has had.
    fn readiness(&self) -> (bool, u64) {
        let state = self.state();
        (state.ready, state.resets)
    }

    /// Ready, unless it was reset after `resets` was read.
    fn set_ready(&self, resets: u64) {
        let mut state = self.state();
        if state.resets == resets {
            state.ready = true;
        }
    }
}

/// Keeps the cache in step with the connection: applies invalidations, resets on every
/// reconnect, error or lag, and turns tracking on whenever the cache is not ready. Runs until
/// `stop` is dropped (the store was) or the client's event channels close.
pub(super) async fn watch(
    client: Client,
    cache: std::sync::Arc<AccessCache>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let mut invalidations = client.invalidation_rx();
    let mut reconnects = client.reconnect_rx();
    let mut errors = client.error_rx();
    loop {
        let (ready, resets) = cache.readiness();
        if !ready && client.is_connected() {
            // A reset while this runs keeps the cache not ready; a reconnect that happens
            // after the answer arrives as an event below and resets it again.
            let on = tokio::time::timeout(
                TRACKING_TIMEOUT,
                client.start_tracking(Vec::<String>::new(), false, false, false, false),
            )
            .await;
            match on {
                Ok(Ok(())) => cache.set_ready(resets),
                Ok(Err(error)) => {
                    tracing::debug!(error = %error, "token store: client tracking not on yet");
                }
                Err(_) => tracing::debug!("token store: client tracking timed out"),
            }
        }
        let retry = async {
            if cache.readiness().0 {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(RETRY).await;
        };
        tokio::select! {
            biased;
            invalidation = invalidations.recv() => match invalidation {
                Ok(invalidation) => {
                    for key in &invalidation.keys {
                        cache.forget(Key::as_bytes(key));
                    }
                }
                Err(RecvError::Lagged(_)) => cache.reset(),
                Err(RecvError::Closed) => break,
            },
            event = reconnects.recv() => match event {
                Ok(_) | Err(RecvError::Lagged(_)) => cache.reset(),
                Err(RecvError::Closed) => break,
            },
            event = errors.recv() => match event {
                Ok(_) | Err(RecvError::Lagged(_)) => cache.reset(),
                Err(RecvError::Closed) => break,
            },
            _ = &mut stop => break,
            () = cache.lost.notified() => {}
            () = retry => {}
        }
    }
    cache.reset();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SessionId;

    fn access(iat: i64) -> Access {
        Access {
            live: LiveAccess {
                access_uid: SessionId::random(),
                access_iat: iat,
                last_seen_at: iat,
            },
            expires_at: iat + 60,
        }
    }

    fn ready() -> AccessCache {
        let cache = AccessCache::new();
        cache.set_ready(0);
        cache
    }

    fn ticket(lookup: Lookup) -> u64 {
        match lookup {
            Lookup::Miss(ticket) => ticket,
            Lookup::Hit(_) => panic!("expected a miss, got a hit"),
            Lookup::Bypass => panic!("expected a miss, got a bypass"),
        }
    }

    fn hit(lookup: Lookup) -> Option<Access> {
        match lookup {
            Lookup::Hit(access) => Some(access),
            _ => None,
        }
    }

    #[test]
    fn nothing_is_kept_or_served_until_ready_or_while_disconnected() {
        let cache = AccessCache::new();
        assert!(matches!(cache.lookup("k", true), Lookup::Bypass));
        cache.set_ready(0);
        let t = ticket(cache.lookup("k", true));
        cache.fill("k", t, access(1));
        assert!(hit(cache.lookup("k", true)).is_some());
        assert!(matches!(cache.lookup("k", false), Lookup::Bypass));
        cache.reset();
        assert!(matches!(cache.lookup("k", true), Lookup::Bypass));
        cache.set_ready(0);
        assert!(
            matches!(cache.lookup("k", true), Lookup::Bypass),
            "tracking turned on before the reset does not make it ready"
        );
        cache.set_ready(1);
        assert!(
            hit(cache.lookup("k", true)).is_none(),
            "a reset empties the cache"
        );
    }

    #[test]
    fn a_read_is_served_until_its_key_is_invalidated() {
        let cache = ready();
        let t = ticket(cache.lookup("k", true));
        let first = access(1);
        cache.fill("k", t, first);
        assert_eq!(hit(cache.lookup("k", true)), Some(first));
        assert_eq!(hit(cache.lookup("k", true)), Some(first));
        cache.forget(b"k");
        ticket(cache.lookup("k", true));
    }

    #[test]
    fn a_read_that_an_invalidation_overtook_is_not_kept() {
        let cache = ready();
        let t = ticket(cache.lookup("k", true));
        cache.forget(b"k");
        cache.fill("k", t, access(1));
        ticket(cache.lookup("k", true));

        // Nor one that a reset, a clear or a later read of the same key overtook.
        for overtake in [
            |c: &AccessCache| c.forget_all(),
            |c: &AccessCache| {
                c.reset();
                c.set_ready(1);
            },
            |c: &AccessCache| {
                let _ = c.lookup("k", true);
            },
        ] {
            let cache = ready();
            let t = ticket(cache.lookup("k", true));
            overtake(&cache);
            cache.fill("k", t, access(1));
            assert!(hit(cache.lookup("k", true)).is_none());
        }
    }

    #[test]
    fn an_abandoned_read_leaves_no_placeholder_and_spares_a_newer_one() {
        let cache = ready();
        let old = ticket(cache.lookup("k", true));
        let new = ticket(cache.lookup("k", true));
        cache.abandon("k", old);
        cache.fill("k", new, access(2));
        assert!(hit(cache.lookup("k", true)).is_some());
        cache.forget(b"k");
        let t = ticket(cache.lookup("k", true));
        cache.abandon("k", t);
        assert!(cache.state().entries.is_empty());
    }

    #[test]
    fn a_copy_older_than_max_age_is_read_again() {
        let cache = ready();
        let t = ticket(cache.lookup("k", true));
        cache.fill("k", t, access(1));
        if let Some(Slot::Ready(_, at)) = cache.state().entries.get_mut("k") {
            *at -= MAX_AGE;
        }
        ticket(cache.lookup("k", true));
    }

    #[test]
    fn the_cache_never_holds_more_than_max_entries() {
        let cache = ready();
        for n in 0..MAX_ENTRIES + 10 {
            let key = n.to_string();
            let t = ticket(cache.lookup(&key, true));
            cache.fill(&key, t, access(1));
        }
        assert_eq!(cache.state().entries.len(), MAX_ENTRIES);
    }
}
