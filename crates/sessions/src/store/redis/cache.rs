//! Sessions this instance read, kept until Redis says they changed (client-side caching).
//!
//! The session check reads the same few fields of the same record on every request of a
//! session. With `CLIENT TRACKING` on (RESP3), Redis remembers which keys this connection read
//! and pushes an `invalidate` message on the same connection when any client changes one of
//! them; until then the copy read here is current.
//!
//! What keeps a copy from being served after the record changed (DECISIONS 115):
//!
//! - **A copy is confirmed before it is served.** A check that finds a copy waits for the
//!   answer to a command sent after the check began (one `PING` for every batch of such
//!   checks, see `reads`). Redis answers in order on the one connection, so every
//!   invalidation it sent before that answer (for every write it completed before the check
//!   began, whichever instance made it) has arrived by then; [`AccessCache::catch_up`] applies
//!   them, and only a copy still there is served. That keeps CONTRACT §3's "at once" across
//!   instances: the check saves the read, not the round trip.
//! - **Own writes** drop the key they name as soon as the write's reply is back (the sessions
//!   they end without naming them, Redis invalidates like anyone's).
//! - **A read that an invalidation overtook is not kept.** A miss leaves a placeholder with a
//!   ticket; an invalidation (or a reset) removes it, and the answer is kept only if its own
//!   placeholder is still there.
//! - **Nothing is kept or served unless tracking is on.** The cache starts *not ready*; the
//!   watcher turns tracking on and marks it ready. A new connection (fred announces it before
//!   it writes a command on it, so a confirming `PING` answered on it finds the announcement),
//!   a connection error, a lagging event channel or any failed command makes it not ready and
//!   empty again, and the watcher turns tracking on anew (fred does not do that by itself).
//! - **Fail closed:** nothing is served while the client is not connected.
//! - **A copy is served for at most [`MAX_AGE`]**, whatever happened, as a bound on anything
//!   the rules above miss (fred drops the keyless invalidation that `FLUSHALL` sends).
//!
//! Only a single Redis server (not Cluster) is cached: there the one `PING` confirms every key.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fred::prelude::*;
use fred::types::Key;
use fred::types::client::Invalidation;
use fred::types::config::Server;
use tokio::sync::Notify;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

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
    confirmations: u64,
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
    /// Confirming `PING`s sent, one for every batch of checks that found a copy (`hits`
    /// divided by this is how many checks a round trip confirmed on average).
    pub confirmations: u64,
}

/// What a look-up found.
pub(super) enum Lookup {
    /// A copy is here: confirm it (see the module's notes), then look up again, confirmed.
    Confirm,
    Hit(Access),
    /// Read it from Redis, then hand the answer to [`AccessCache::fill`] with this ticket.
    Miss(u64),
    /// Not ready: read it from Redis and do not keep it.
    Bypass,
}

/// The client's announcements that [`AccessCache::catch_up`] applies, in the order received.
struct Events {
    invalidations: broadcast::Receiver<Invalidation>,
    connections: broadcast::Receiver<Server>,
}

pub(super) struct AccessCache {
    state: Mutex<State>,
    events: Mutex<Events>,
    /// Wakes the watcher when the cache stops being ready.
    lost: Notify,
}

impl AccessCache {
    /// Subscribes to `client`'s announcements: call it before the client connects.
    pub(super) fn new(client: &Client) -> Self {
        Self {
            state: Mutex::new(State::default()),
            events: Mutex::new(Events {
                invalidations: client.invalidation_rx(),
                connections: client.reconnect_rx(),
            }),
            lost: Notify::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent at every point a panic could unwind from.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What to do for `key` (`connected`: the client's connection is up; `confirmed`: every
    /// invalidation sent before the check began has been applied, see the module's notes).
    pub(super) fn lookup(&self, key: &str, connected: bool, confirmed: bool) -> Lookup {
        let mut state = self.state();
        if !state.ready || !connected {
            return Lookup::Bypass;
        }
        if let Some(Slot::Ready(access, at)) = state.entries.get(key)
            && at.elapsed() < MAX_AGE
        {
            if !confirmed {
                return Lookup::Confirm;
            }
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

    /// Applies what the client has announced so far: invalidations drop their keys, a new
    /// connection (or missed announcements) resets. Called once a confirming answer is back,
    /// and by the watcher as announcements come.
    pub(super) fn catch_up(&self) {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let mut new_connection = false;
        let mut missed = drain(&mut events.connections, |_| new_connection = true);
        missed |= drain(&mut events.invalidations, |invalidation| {
            for key in &invalidation.keys {
                self.forget(Key::as_bytes(key));
            }
        });
        if new_connection || missed {
            self.reset();
        }
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
            confirmations: state.confirmations,
        }
    }

    /// A confirming `PING` is about to be sent.
    pub(super) fn confirming(&self) {
        self.state().confirmations += 1;
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

/// Hands every message queued on `events` to `each`; whether any was missed (the receiver
/// lagged) or the channel has closed.
fn drain<T: Clone>(events: &mut broadcast::Receiver<T>, mut each: impl FnMut(T)) -> bool {
    let mut missed = false;
    loop {
        match events.try_recv() {
            Ok(event) => each(event),
            Err(TryRecvError::Lagged(_)) => missed = true,
            Err(TryRecvError::Empty) => return missed,
            Err(TryRecvError::Closed) => return true,
        }
    }
}

/// Keeps the cache in step with the connection: applies announcements as they come (so that
/// they do not pile up between checks), resets on every connection error, and turns tracking
/// on whenever the cache is not ready. Runs until `stop` is dropped (the store was) or the
/// client's event channels close.
pub(super) async fn watch(
    client: Client,
    cache: std::sync::Arc<AccessCache>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    // These only wake the watcher; the cache's own receivers carry what it applies.
    let mut invalidations = client.invalidation_rx();
    let mut connections = client.reconnect_rx();
    let mut errors = client.error_rx();
    loop {
        cache.catch_up();
        let (ready, resets) = cache.readiness();
        if !ready && client.is_connected() {
            // A reset while this runs keeps the cache not ready; a new connection after the
            // answer is announced and resets it again.
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
            event = invalidations.recv() => if let Err(RecvError::Closed) = event {
                break;
            },
            event = connections.recv() => if let Err(RecvError::Closed) = event {
                break;
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
        let cache = AccessCache::new(&Client::default());
        cache.set_ready(0);
        cache
    }

    fn ticket(lookup: Lookup) -> u64 {
        match lookup {
            Lookup::Miss(ticket) => ticket,
            Lookup::Hit(_) => panic!("expected a miss, got a hit"),
            Lookup::Bypass => panic!("expected a miss, got a bypass"),
            Lookup::Confirm => panic!("expected a miss, got a copy to confirm"),
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
        let cache = AccessCache::new(&Client::default());
        assert!(matches!(cache.lookup("k", true, true), Lookup::Bypass));
        cache.set_ready(0);
        let t = ticket(cache.lookup("k", true, true));
        cache.fill("k", t, access(1));
        assert!(hit(cache.lookup("k", true, true)).is_some());
        assert!(matches!(cache.lookup("k", false, true), Lookup::Bypass));
        cache.reset();
        assert!(matches!(cache.lookup("k", true, true), Lookup::Bypass));
        cache.set_ready(0);
        assert!(
            matches!(cache.lookup("k", true, true), Lookup::Bypass),
            "tracking turned on before the reset does not make it ready"
        );
        cache.set_ready(1);
        assert!(
            hit(cache.lookup("k", true, true)).is_none(),
            "a reset empties the cache"
        );
    }

    #[test]
    fn a_read_is_served_until_its_key_is_invalidated() {
        let cache = ready();
        let t = ticket(cache.lookup("k", true, true));
        let first = access(1);
        cache.fill("k", t, first);
        assert_eq!(hit(cache.lookup("k", true, true)), Some(first));
        assert_eq!(hit(cache.lookup("k", true, true)), Some(first));
        cache.forget(b"k");
        ticket(cache.lookup("k", true, true));
    }

    #[test]
    fn a_copy_is_served_only_once_confirmed() {
        let cache = ready();
        let t = ticket(cache.lookup("k", true, false));
        cache.fill("k", t, access(1));
        assert!(matches!(cache.lookup("k", true, false), Lookup::Confirm));
        assert_eq!(cache.stats().hits, 0);
        assert!(hit(cache.lookup("k", true, true)).is_some());
        assert_eq!(cache.stats().hits, 1);
    }

    #[test]
    fn a_read_that_an_invalidation_overtook_is_not_kept() {
        let cache = ready();
        let t = ticket(cache.lookup("k", true, true));
        cache.forget(b"k");
        cache.fill("k", t, access(1));
        ticket(cache.lookup("k", true, true));

        // Nor one that a reset or a later read of the same key overtook.
        for overtake in [
            |c: &AccessCache| {
                c.reset();
                c.set_ready(1);
            },
            |c: &AccessCache| {
                let _ = c.lookup("k", true, true);
            },
        ] {
            let cache = ready();
            let t = ticket(cache.lookup("k", true, true));
            overtake(&cache);
            cache.fill("k", t, access(1));
            assert!(hit(cache.lookup("k", true, true)).is_none());
        }
    }

    #[test]
    fn an_abandoned_read_leaves_no_placeholder_and_spares_a_newer_one() {
        let cache = ready();
        let old = ticket(cache.lookup("k", true, true));
        let new = ticket(cache.lookup("k", true, true));
        cache.abandon("k", old);
        cache.fill("k", new, access(2));
        assert!(hit(cache.lookup("k", true, true)).is_some());
        cache.forget(b"k");
        let t = ticket(cache.lookup("k", true, true));
        cache.abandon("k", t);
        assert!(cache.state().entries.is_empty());
    }

    #[test]
    fn a_copy_older_than_max_age_is_read_again() {
        let cache = ready();
        let t = ticket(cache.lookup("k", true, true));
        cache.fill("k", t, access(1));
        if let Some(Slot::Ready(_, at)) = cache.state().entries.get_mut("k") {
            *at -= MAX_AGE;
        }
        ticket(cache.lookup("k", true, true));
    }

    #[test]
    fn the_cache_never_holds_more_than_max_entries() {
        let cache = ready();
        for n in 0..MAX_ENTRIES + 10 {
            let key = n.to_string();
            let t = ticket(cache.lookup(&key, true, true));
            cache.fill(&key, t, access(1));
        }
        assert_eq!(cache.state().entries.len(), MAX_ENTRIES);
    }
}
