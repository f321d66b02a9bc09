//! Rendered answers kept while the database does not change.
//!
//! A page the service is measured on (the employer's application list) costs a join over its
//! rows, their decoding and their JSON: work that gives the same bytes again as long as nothing
//! was written. On a SQLite file [`Db::answer`](super::Db::answer) keeps those bytes, keyed by
//! everything the page depends on, together with the database's generation when it was read
//! (`Readers::generation`, from SQLite's `PRAGMA data_version`), and answers with them while the
//! generation stays: any commit, by this process or another one on the same file, moves it on,
//! so a write is seen by the very next request (DECISIONS 118). Authorisation is not part of
//! this: the area's extractor has run before a handler asks for an answer, and the key names
//! the company whose page it is.
//!
//! PostgreSQL has no such cheap, exact signal across instances; there (and with SQLite in
//! memory) every answer is rendered.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use quick_cache::Weighter;
use quick_cache::sync::Cache;

/// What a kept answer depends on: a page's parameters, the company among them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AnswerKey {
    /// `GET /org-user/careers/job_applications` of `company_id`.
    EmployerApplications {
        company_id: i64,
        job_id: Option<i64>,
        page: u64,
        per_page: u64,
    },
}

/// An answer's bytes and the generation they were read at.
#[derive(Clone)]
struct Kept {
    generation: u64,
    body: Bytes,
}

/// Weighs an answer by its bytes (and its key's), so the cache holds a bounded memory.
#[derive(Clone)]
struct ByLength;

impl Weighter<AnswerKey, Kept> for ByLength {
    fn weight(&self, _key: &AnswerKey, kept: &Kept) -> u64 {
        (size_of::<AnswerKey>() + size_of::<Kept>() + kept.body.len()) as u64
    }
}

/// The kept answers, at most `bytes` of them; the least recently useful go first.
pub struct Answers {
    cache: Cache<AnswerKey, Kept, ByLength>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// How often a kept answer was used (`hits`), and how often one was rendered (`misses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerStats {
    pub hits: u64,
    pub misses: u64,
}

impl Answers {
    pub fn new(bytes: u64) -> Self {
        // quick_cache sizes its table from this estimate (answers of about 8 KiB) and splits the
        // bytes among its shards (at least 32 answers' worth each): an answer larger than one
        // shard's share, such as a 100-item page of long cover letters with a small
        // `RESPONSE_CACHE_MIB` on many cores, is rendered every time and never kept.
        let estimated = usize::try_from(bytes / 8192).unwrap_or(usize::MAX).max(16);
        Self {
            cache: Cache::with_weighter(estimated, bytes, ByLength),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The answer of `key` read at `generation`, if one is kept.
    pub(super) fn get(&self, key: &AnswerKey, generation: u64) -> Option<Bytes> {
        let kept = self
            .cache
            .get(key)
            .filter(|kept| kept.generation == generation);
        let counter = if kept.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        kept.map(|kept| kept.body)
    }

    /// Keeps `body`, the answer of `key` read at `generation` (or later).
    pub(super) fn keep(&self, key: AnswerKey, generation: u64, body: Bytes) {
        self.cache.insert(key, Kept { generation, body });
    }

    pub fn stats(&self) -> AnswerStats {
        AnswerStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(company_id: i64) -> AnswerKey {
        AnswerKey::EmployerApplications {
            company_id,
            job_id: None,
            page: 1,
            per_page: 25,
        }
    }

    #[test]
    fn an_answer_is_used_only_at_its_generation_and_under_its_key() {
        let answers = Answers::new(1 << 20);
        assert_eq!(answers.get(&key(1), 7), None);
        answers.keep(key(1), 7, Bytes::from_static(b"acme"));
        assert_eq!(answers.get(&key(1), 7).as_deref(), Some(&b"acme"[..]));
        assert_eq!(answers.get(&key(2), 7), None, "another company's page");
        assert_eq!(answers.get(&key(1), 8), None, "the database changed since");
        let other_page = AnswerKey::EmployerApplications {
            company_id: 1,
            job_id: None,
            page: 2,
            per_page: 25,
        };
        assert_eq!(answers.get(&other_page, 7), None);
        assert_eq!(answers.stats(), AnswerStats { hits: 1, misses: 4 });
    }

    #[test]
    fn the_cache_holds_at_most_its_bytes() {
        let answers = Answers::new(64 * 1024);
        for company_id in 0..100 {
            answers.keep(key(company_id), 1, Bytes::from(vec![b'x'; 4096]));
        }
        assert!(
            answers.cache.weight() <= 64 * 1024,
            "{}",
            answers.cache.weight()
        );
        let kept = (0..100)
            .filter(|&company_id| answers.get(&key(company_id), 1).is_some())
            .count();
        assert!(
            (1..16).contains(&kept),
            "{kept} answers of 4 KiB kept in 64 KiB"
        );
    }
}
