//! In-process store for development and single-instance use: sharded maps behind short locks.
//!
//! A namespace is split into shards by identity, so one identity's records and its index live
//! under one lock and change together.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use super::{
    Counter, Ending, LiveAccess, Rotation, SessionKey, SessionRecord, StoreError, TokenStore,
    decide_ending, decide_rotation,
};
use crate::SessionId;

const SHARDS: usize = 64;

#[derive(Default)]
struct Shard {
    records: HashMap<u128, SessionRecord>,
    /// The refresh UIDs of each identity's sessions.
    by_subject: HashMap<i64, Vec<u128>>,
}

impl Shard {
    /// The record of `key` while it lives; an expired one is dropped on the way.
    fn live(&mut self, key: &SessionKey, now: i64) -> Option<&mut SessionRecord> {
        let id = key.ruid.as_u128();
        match self.records.get(&id) {
            Some(record) if record.subject == key.subject && record.expires_at > now => {}
            Some(record) if record.subject == key.subject => {
                self.remove(key.subject, id);
                return None;
            }
            _ => return None,
        }
        self.records.get_mut(&id)
    }

    fn remove(&mut self, subject: i64, id: u128) -> Option<SessionRecord> {
        let record = self.records.remove(&id)?;
        if let Some(ids) = self.by_subject.get_mut(&subject) {
            ids.retain(|other| *other != id);
            if ids.is_empty() {
                self.by_subject.remove(&subject);
            }
        }
        Some(record)
    }

    /// Drops `subject`'s ended sessions from its index, then its least recently used ones
    /// until fewer than `limit` remain.
    fn make_room(&mut self, subject: i64, limit: usize, now: i64) -> usize {
        let Some(ids) = self.by_subject.get(&subject) else {
            return 0;
        };
        let expired: Vec<u128> = ids
            .iter()
            .copied()
            .filter(|id| self.records.get(id).is_none_or(|r| r.expires_at <= now))
            .collect();
        for id in expired {
            self.remove(subject, id);
        }
        let mut evicted = 0;
        while limit > 0 {
            let Some(ids) = self.by_subject.get(&subject) else {
                break;
            };
            if ids.len() < limit {
                break;
            }
            let oldest = ids
                .iter()
                .copied()
                .min_by_key(|id| self.records.get(id).map(|r| (r.last_seen_at, r.created_at)));
            match oldest {
                Some(id) => {
                    self.remove(subject, id);
                    evicted += 1;
                }
                None => break,
            }
        }
        evicted
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
                let shard = &mut *shard;
                let before = shard.records.len();
                shard.records.retain(|_, r| r.expires_at > now);
                removed += before - shard.records.len();
                let records = &shard.records;
                shard.by_subject.retain(|_, ids| {
                    ids.retain(|id| records.contains_key(id));
                    !ids.is_empty()
                });
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
        limit: usize,
        now: i64,
    ) -> Result<usize, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        let evicted = shard.make_room(key.subject, limit, now);
        let id = key.ruid.as_u128();
        shard.records.insert(id, *record);
        shard.by_subject.entry(key.subject).or_default().push(id);
        Ok(evicted)
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
        grace_seconds: i64,
    ) -> Result<Rotation, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        let Some(record) = shard.live(key, now) else {
            return Ok(Rotation::Missing);
        };
        let outcome = decide_rotation(record, presented, new_uid, now, grace_seconds);
        if outcome == Rotation::Superseded {
            shard.remove(key.subject, key.ruid.as_u128());
        }
        Ok(outcome)
    }

    async fn end(
        &self,
        namespace: &str,
        key: &SessionKey,
        presented: &SessionId,
        now: i64,
        grace_seconds: i64,
    ) -> Result<Ending, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        let Some(record) = shard.remove(key.subject, key.ruid.as_u128()) else {
            return Ok(Ending::Missing);
        };
        if record.subject != key.subject || record.expires_at <= now {
            return Ok(Ending::Missing);
        }
        Ok(decide_ending(&record, presented, now, grace_seconds))
    }

    async fn revoke(&self, namespace: &str, key: &SessionKey) -> Result<bool, StoreError> {
        let ns = self.namespace(namespace);
        let mut shard = ns.shard(key.subject);
        Ok(shard.remove(key.subject, key.ruid.as_u128()).is_some())
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
