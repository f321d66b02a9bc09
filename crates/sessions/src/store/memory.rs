//! In-process store for development and single-instance use: sharded maps behind short locks.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, RwLock};

use super::{
    Counter, Ending, LiveAccess, Rotation, SessionRecord, StoreError, TokenStore, decide_ending,
    decide_rotation,
};
use crate::SessionId;

const SHARDS: usize = 64;

type Shard = Mutex<HashMap<u128, SessionRecord>>;

struct Namespace {
    shards: Box<[Shard]>,
}

impl Namespace {
    fn new() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, ruid: &SessionId) -> MutexGuard<'_, HashMap<u128, SessionRecord>> {
        // Ids are uniformly random, so their low bits spread records evenly. A poisoned lock
        // only means another request panicked mid-update of plain data: keep serving.
        let index = (ruid.as_u128() as usize) % SHARDS;
        self.shards[index]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[derive(Default)]
pub struct MemoryStore {
    namespaces: RwLock<HashMap<String, std::sync::Arc<Namespace>>>,
    /// Window counters: key -> (count, window end).
    counters: std::sync::Mutex<HashMap<String, (u64, i64)>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn namespace(&self, name: &str) -> std::sync::Arc<Namespace> {
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
            .or_insert_with(|| std::sync::Arc::new(Namespace::new()))
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
                let mut map = shard.lock().unwrap_or_else(|p| p.into_inner());
                let before = map.len();
                map.retain(|_, r| r.expires_at > now);
                removed += before - map.len();
            }
        }
        removed
    }

    /// Number of live records in a namespace (for tests and benchmarks).
    pub fn len(&self, namespace: &str) -> usize {
        let ns = self.namespace(namespace);
        ns.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).len())
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
        ruid: &SessionId,
        record: &SessionRecord,
        _now: i64,
    ) -> Result<(), StoreError> {
        self.namespace(namespace)
            .shard(ruid)
            .insert(ruid.as_u128(), *record);
        Ok(())
    }

    async fn get(
        &self,
        namespace: &str,
        ruid: &SessionId,
        now: i64,
    ) -> Result<Option<SessionRecord>, StoreError> {
        let ns = self.namespace(namespace);
        let mut map = ns.shard(ruid);
        match map.get(&ruid.as_u128()) {
            Some(r) if r.expires_at > now => Ok(Some(*r)),
            Some(_) => {
                map.remove(&ruid.as_u128());
                Ok(None)
            }
            None => Ok(None),
        }
    }

    async fn access(
        &self,
        namespace: &str,
        ruid: &SessionId,
        now: i64,
    ) -> Result<Option<LiveAccess>, StoreError> {
        Ok(self
            .get(namespace, ruid, now)
            .await?
            .as_ref()
            .map(LiveAccess::from))
    }

    async fn rotate(
        &self,
        namespace: &str,
        ruid: &SessionId,
        presented: &SessionId,
        new_uid: &SessionId,
        now: i64,
        grace_seconds: i64,
    ) -> Result<Rotation, StoreError> {
        let ns = self.namespace(namespace);
        let mut map = ns.shard(ruid);
        let key = ruid.as_u128();
        let Some(record) = map.get_mut(&key) else {
            return Ok(Rotation::Missing);
        };
        if record.expires_at <= now {
            map.remove(&key);
            return Ok(Rotation::Missing);
        }
        let outcome = decide_rotation(record, presented, new_uid, now, grace_seconds);
        if outcome == Rotation::Superseded {
            map.remove(&key);
        }
        Ok(outcome)
    }

    async fn end(
        &self,
        namespace: &str,
        ruid: &SessionId,
        presented: &SessionId,
        now: i64,
        grace_seconds: i64,
    ) -> Result<Ending, StoreError> {
        let ns = self.namespace(namespace);
        let Some(record) = ns.shard(ruid).remove(&ruid.as_u128()) else {
            return Ok(Ending::Missing);
        };
        if record.expires_at <= now {
            return Ok(Ending::Missing);
        }
        Ok(decide_ending(&record, presented, now, grace_seconds))
    }

    async fn flush(&self, namespace: &str) -> Result<u64, StoreError> {
        let ns = self.namespace(namespace);
        let mut removed = 0u64;
        for shard in ns.shards.iter() {
            // Swap each shard out under its lock and drop the records afterwards, so requests
            // of this namespace wait for one swap at most and other namespaces never wait.
            let old = std::mem::take(&mut *shard.lock().unwrap_or_else(|p| p.into_inner()));
            removed += old.len() as u64;
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

    async fn peek(&self, key: &str, now: i64) -> Result<Counter, StoreError> {
        let counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        Ok(match counters.get(key) {
            Some((count, end)) if *end > now => Counter {
                count: *count,
                retry_after: end - now,
            },
            _ => Counter::default(),
        })
    }

    async fn clear(&self, key: &str) -> Result<(), StoreError> {
        self.counters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
        Ok(())
    }
}
