//! In-process store for development and single-instance use: sharded maps behind short locks.
//!
//! A namespace is split into shards by identity. Each shard is an ordered map keyed by
//! (identity, refresh UID), so one identity's sessions lie next to each other under one lock:
//! the map is its own per-identity index, and a range read lists them without a scan.

use std::collections::{BTreeMap, HashMap};
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use super::{
    Counter, Ending, ListedSession, LiveAccess, Rotation, SessionKey, SessionLimits, SessionMeta,
    SessionRecord, StoreError, TokenStore, decide_ending, decide_rotation, idle_out,
};
use crate::SessionId;

const SHARDS: usize = 64;

type Slot = (i64, u128);

/// One session: what requests read, and what only listings read.
struct Entry {
    record: SessionRecord,
    meta: SessionMeta,
}

#[derive(Default)]
struct Shard {
    records: BTreeMap<Slot, Entry>,
}

fn slot(key: &SessionKey) -> Slot {
    (key.subject, key.ruid.as_u128())
}

fn identity(subject: i64) -> RangeInclusive<Slot> {
    (subject, 0)..=(subject, u128::MAX)
}

impl Shard {
    /// The record of `key` while it lives; an expired one is dropped on the way.
    fn live(&mut self, key: &SessionKey, now: i64) -> Option<&mut SessionRecord> {
        let slot = slot(key);
        if self.records.get(&slot)?.record.expires_at <= now {
            self.records.remove(&slot);
            return None;
        }
        self.records.get_mut(&slot).map(|entry| &mut entry.record)
    }

    /// Drops `subject`'s ended sessions, then its least recently used ones until fewer than
    /// `limit` remain (0: no limit); returns how many live ones it ended.
    fn make_room(&mut self, subject: i64, limit: usize, now: i64) -> usize {
        let mut sessions: Vec<(i64, i64, Slot)> = Vec::new();
        let mut ended: Vec<Slot> = Vec::new();
        for (slot, Entry { record: r, .. }) in self.records.range(identity(subject)) {
            if r.expires_at > now {
                sessions.push((r.last_seen_at, r.created_at, *slot));
            } else {
                ended.push(*slot);
            }
        }
        for slot in &ended {
            self.records.remove(slot);
        }
        if limit == 0 {
            return 0;
        }
        let excess = (sessions.len() + 1).saturating_sub(limit);
        sessions.sort_unstable();
        for (_, _, slot) in &sessions[..excess] {
            self.records.remove(slot);
        }
        excess
    }
}

struct Namespace {
    shards: Box<[Mutex<Shard>]>,
}

impl Namespace {
    fn new() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
        }
    }

    fn shard(&self, subject: i64) -> MutexGuard<'_, Shard> {
        // A poisoned lock only means another request panicked mid-update of plain data: keep
        // serving.
        let index = subject.rem_euclid(SHARDS as i64) as usize;
        self.shards[index]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[derive(Default)]
pub struct MemoryStore {
    namespaces: RwLock<HashMap<String, Arc<Namespace>>>,
    /// Window counters: key -> (count, window end).
    counters: Mutex<HashMap<String, (u64, i64)>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn namespace(&self, name: &str) -> Arc<Namespace> {
        if let Some(ns) = self
            .namespaces
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
        {
            return ns.clone();
        }
        self.namespaces
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(Namespace::new()))
            .clone()
    }

    /// Drops records that reached their end; run periodically by the application.
    pub fn sweep(&self, now: i64) -> usize {
        let namespaces: Vec<_> = self
            .namespaces
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let mut removed = 0;
        self.counters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, (_, end)| *end > now);
        for ns in namespaces {
            for shard in ns.shards.iter() {
                let mut shard = shard.lock().unwrap_or_else(|p| p.into_inner());
                let before = shard.records.len();
                shard.records.retain(|_, e| e.record.expires_at > now);
                removed += before - shard.records.len();
            }
        }
        removed
    }

    /// Number of live records in a namespace (for tests and benchmarks).
    pub fn len(&self, namespace: &str) -> usize {
        let ns = self.namespace(namespace);
        ns.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).records.len())
            .sum()
    }

    pub fn is_empty(&self, namespace: &str) -> bool {
        self.len(namespace) == 0
    }
}

impl TokenStore for MemoryStore {
    async fn insert(
        &self,
        namespace: &str,
        key: &SessionKey,
        record: &SessionRecord,
        meta: &SessionMeta,
        limit: usize,
        now: i64,
    ) -> Result<usize, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        let evicted = shard.make_room(key.subject, limit, now);
        let entry = Entry {
            record: *record,
            meta: meta.clone(),
        };
        shard.records.insert(slot(key), entry);
        Ok(evicted)
    }

    async fn list(
        &self,
        namespace: &str,
        subject: i64,
        now: i64,
    ) -> Result<Vec<ListedSession>, StoreError> {
        let ns = self.namespace(namespace);
        let shard = ns.shard(subject);
        Ok(shard
            .records
            .range(identity(subject))
            .filter(|(_, e)| e.record.expires_at > now)
            .map(|(&(_, ruid), e)| ListedSession {
                ruid: SessionId(ruid.to_le_bytes()),
                record: e.record,
                meta: e.meta.clone(),
            })
            .collect())
    }

    async fn get(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> Result<Option<SessionRecord>, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        Ok(shard.live(key, now).map(|r| *r))
    }

    async fn access(
        &self,
        namespace: &str,
        key: &SessionKey,
        now: i64,
    ) -> Result<Option<LiveAccess>, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        Ok(shard.live(key, now).map(|r| LiveAccess::from(&*r)))
    }

    async fn touch(&self, namespace: &str, key: &SessionKey, now: i64) -> Result<(), StoreError> {
        let ns = self.namespace(namespace);
        if let Some(record) = ns.shard(key.subject).live(key, now) {
            record.last_seen_at = now;
        }
        Ok(())
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
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        let Some(record) = shard.live(key, now) else {
            return Ok(Rotation::Missing);
        };
        if idle_out(record.last_seen_at, now, limits.idle_seconds) {
            shard.records.remove(&slot(key));
            return Ok(Rotation::Missing);
        }
        let outcome = decide_rotation(record, presented, new_uid, now, limits.grace_seconds);
        if outcome == Rotation::Superseded {
            shard.records.remove(&slot(key));
        }
        Ok(outcome)
    }

    async fn end(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        now: i64,
        limits: SessionLimits,
    ) -> Result<Ending, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        let Some(Entry { record, .. }) = shard.records.remove(&slot(key)) else {
            return Ok(Ending::Missing);
        };
        if record.expires_at <= now || idle_out(record.last_seen_at, now, limits.idle_seconds) {
            return Ok(Ending::Missing);
        }
        Ok(decide_ending(&record, presented, now, limits.grace_seconds))
    }

    async fn revoke(&self, namespace: &str, key: &SessionKey) -> Result<bool, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        Ok(shard.records.remove(&slot(key)).is_some())
    }

    async fn revoke_all(
        &self,
        namespace: &str,
        subject: i64,
        keep: Option<&SessionId>,
    ) -> Result<usize, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(subject);
        let kept = keep.map(SessionId::as_u128);
        let slots: Vec<Slot> = shard
            .records
            .range(identity(subject))
            .map(|(slot, _)| *slot)
            .filter(|(_, ruid)| Some(*ruid) != kept)
            .collect();
        for slot in &slots {
            shard.records.remove(slot);
        }
        Ok(slots.len())
    }

    async fn flush(&self, namespace: &str) -> Result<u64, StoreError> {
        let ns = self.namespace(namespace);
        let mut removed = 0u64;
        for shard in ns.shards.iter() {
            // Swap each shard out under its lock and drop the records afterwards, so requests
            // of this namespace wait for one swap at most and other namespaces never wait.
            let old = std::mem::take(&mut *shard.lock().unwrap_or_else(|p| p.into_inner()));
            removed += old.records.len() as u64;
        }
        Ok(removed)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn hit(&self, key: &str, window_seconds: i64, now: i64) -> Result<Counter, StoreError> {
        let mut counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        let entry = counters
            .entry(key.to_owned())
            .or_insert((0, now + window_seconds));
        if entry.1 <= now {
            *entry = (0, now + window_seconds);
        }
        entry.0 += 1;
        Ok(Counter {
            count: entry.0,
            retry_after: entry.1 - now,
        })
    }

    async fn refund(&self, key: &str, now: i64) -> Result<(), StoreError> {
        let mut counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((count, end)) = counters.get_mut(key)
            && *end > now
        {
            *count = count.saturating_sub(1);
        }
        Ok(())
    }
}
