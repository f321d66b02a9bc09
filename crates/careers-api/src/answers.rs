//! Rendered answers kept while the database does not change.
//!
//! A page the service is measured on (the employer's application list) costs a join over its
//! rows, their decoding and their JSON: work that gives the same bytes again as long as nothing
//! was written. On a SQLite file [`Answers::answer`] keeps those bytes, keyed by everything the
//! page depends on, together with the database's generation when it was read
//! ([`Db::generation`], from SQLite's `PRAGMA data_version`), and answers with them while the
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
use sea_orm::DbErr;

use crate::db::Db;
use crate::models::careers::job_application::ApplicationFilter;

/// What a kept answer depends on: a page's parameters, the company among them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AnswerKey {
    /// `GET /org-user/careers/job_applications` of `company_id`.
    EmployerApplications {
        company_id: i64,
        filter: ApplicationFilter,
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

    /// The kept answers of `db`, at most `bytes` of them, where its generation keeps them
    /// current (a SQLite file); elsewhere, or with 0 bytes, none: every answer is rendered.
    pub fn for_db(db: &Db, bytes: u64) -> Option<Self> {
        (db.has_generation() && bytes > 0).then(|| Self::new(bytes))
    }

    /// The answer of `key`: the bytes `render` gave earlier if the database has not changed
    /// since they were read, else `render`'s, kept for the next request. A failed render is not
    /// kept. `render` is handed the key and must give the same bytes for the same key and the
    /// same data: it takes its parameters from the key, so that nothing the answer depends on is
    /// left out of it. Without kept answers (`answers` is `None`) every answer is rendered.
    pub async fn answer<E: From<DbErr>>(
        answers: Option<&Self>,
        db: &Db,
        key: AnswerKey,
        render: impl AsyncFnOnce(&AnswerKey) -> Result<Bytes, E>,
    ) -> Result<Bytes, E> {
        let Some(answers) = answers else {
            return render(&key).await;
        };
        // Taken before `render` reads, so that what it reads is at least this current.
        let Some(generation) = db.generation()? else {
            return render(&key).await;
        };
        if let Some(body) = answers.get(&key, generation) {
            return Ok(body);
        }
        let body = render(&key).await?;
        answers.keep(key, generation, body.clone());
        Ok(body)
    }

    /// The answer of `key` read at `generation`, if one is kept.
    fn get(&self, key: &AnswerKey, generation: u64) -> Option<Bytes> {
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
    fn keep(&self, key: AnswerKey, generation: u64, body: Bytes) {
        self.cache.insert(key, Kept { generation, body });
    }

    /// [`Answers::answer`] with these answers kept (the tests').
    #[cfg(test)]
    async fn answer_of<E: From<DbErr>>(
        &self,
        db: &Db,
        key: AnswerKey,
        render: impl AsyncFnOnce(&AnswerKey) -> Result<Bytes, E>,
    ) -> Result<Bytes, E> {
        Self::answer(Some(self), db, key, render).await
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
            filter: ApplicationFilter::default(),
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
            filter: ApplicationFilter::default(),
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

    /// A kept answer is used while nothing was written, and never after a commit: one through
    /// the service's own writers, one by another connection to the file (another process), one
    /// seen first by a reader that had not asked before, and one after every reader had asked.
    #[tokio::test]
    async fn a_kept_answer_lasts_until_the_first_commit_whoever_makes_it() {
        use std::cell::Cell;

        use sea_orm::ConnectionTrait;

        let dir = std::env::temp_dir().join(format!("careers-answers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("answers.db");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let orm = crate::db::connect(&format!("sqlite://{}", path.display()), None)
            .await
            .unwrap();
        orm.execute_unprepared("CREATE TABLE t (n INTEGER NOT NULL); INSERT INTO t VALUES (1)")
            .await
            .unwrap();
        let db = Db::new(orm);
        let answers = Answers::for_db(&db, 1 << 20).unwrap();
        let key = applications_page(1);
        let renders = Cell::new(0);
        // The answer: the table's sum, read by the render, and whether it was rendered.
        let answer = || answer_now(&answers, &db, &key, &renders);
        assert_eq!(answer(), ("1".into(), true));
        assert_eq!(answer(), ("1".into(), false), "nothing was written");

        db.execute_unprepared("INSERT INTO t VALUES (2)")
            .await
            .unwrap();
        assert_eq!(answer(), ("3".into(), true), "the service's own write");
        assert_eq!(answer(), ("3".into(), false));

        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute("INSERT INTO t VALUES (4)", []).unwrap();
        assert_eq!(answer(), ("7".into(), true), "another connection's write");

        // A second reader, opened while the first is busy: its first question moves the
        // generation (it cannot know what it missed), so the kept answer is read again.
        let busy = db.while_a_reader_is_busy(|| answer_now(&answers, &db, &key, &renders));
        assert_eq!(busy, ("7".into(), true), "a reader's first question");
        assert_eq!(answer(), ("7".into(), false));

        // Both readers have asked; a commit; each reader's first question after it moves the
        // generation on (a conservative second render: neither knows what the other saw).
        other.execute("INSERT INTO t VALUES (8)", []).unwrap();
        let busy = db.while_a_reader_is_busy(|| answer_now(&answers, &db, &key, &renders));
        assert_eq!(
            busy,
            ("15".into(), true),
            "the second reader saw the commit"
        );
        assert_eq!(answer(), ("15".into(), true), "the first reader saw it too");
        assert_eq!(answer(), ("15".into(), false));
        other.execute("INSERT INTO t VALUES (16)", []).unwrap();
        assert_eq!(answer(), ("31".into(), true));

        // A commit while a page is rendered: the page read before it is kept under the
        // generation taken before the render, so the next request reads again.
        let during = answers
            .answer_of(&db, key.clone(), async |_| -> Result<bytes::Bytes, DbErr> {
                unreachable!("kept: nothing was committed")
            })
            .await
            .unwrap();
        assert_eq!(during, "31");
        let page_3 = applications_page(3);
        let rendered = answers
            .answer_of(
                &db,
                page_3.clone(),
                async |_| -> Result<bytes::Bytes, DbErr> {
                    let sum: i64 = db
                        .fetch_optional("SELECT SUM(n) FROM t", &[])
                        .await?
                        .unwrap();
                    other.execute("INSERT INTO t VALUES (32)", []).unwrap();
                    Ok(sum.to_string().into())
                },
            )
            .await
            .unwrap();
        assert_eq!(rendered, "31", "read before the commit");
        let next = answers
            .answer_of(&db, page_3, async |_| -> Result<bytes::Bytes, DbErr> {
                Ok("63".into())
            })
            .await
            .unwrap();
        assert_eq!(
            next, "63",
            "the commit during the render is seen by the next request"
        );

        // A failed render is not kept.
        let page_2 = applications_page(2);
        let failed = answers
            .answer_of(
                &db,
                page_2.clone(),
                async |_| -> Result<bytes::Bytes, DbErr> {
                    Err(DbErr::Custom("render failed".into()))
                },
            )
            .await;
        assert!(failed.is_err());
        let again = answers
            .answer_of(&db, page_2, async |_| -> Result<bytes::Bytes, DbErr> {
                Ok("2".into())
            })
            .await;
        assert_eq!(again.unwrap(), "2");
        assert_eq!(answer(), ("63".into(), true));
        let stats = answers.stats();
        assert_eq!((stats.hits, stats.misses), (5, 12));

        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The key of company 1's application page `page`, 25 a page.
    fn applications_page(page: u64) -> AnswerKey {
        AnswerKey::EmployerApplications {
            company_id: 1,
            filter: ApplicationFilter::default(),
            page,
            per_page: 25,
        }
    }

    /// [`Db::answer`] with the sum render, polled on this thread (inline reads never wait, so this
    /// also runs while a test holds a reader): the body, and whether it was rendered.
    fn answer_now(
        answers: &Answers,
        db: &Db,
        key: &AnswerKey,
        renders: &std::cell::Cell<u32>,
    ) -> (String, bool) {
        let before = renders.get();
        let body = futures::executor::block_on(answers.answer_of(
            db,
            key.clone(),
            async |_| -> Result<bytes::Bytes, DbErr> {
                renders.set(renders.get() + 1);
                let sum: i64 = db
                    .fetch_optional("SELECT SUM(n) FROM t", &[])
                    .await?
                    .unwrap();
                Ok(sum.to_string().into())
            },
        ))
        .unwrap();
        (
            String::from_utf8(body.to_vec()).unwrap(),
            renders.get() > before,
        )
    }

    /// Without a file (SQLite in memory) nothing is kept: every answer is rendered (with 0
    /// bytes on a file: `response_cache::with_no_memory_for_it_every_list_is_read`).
    #[tokio::test]
    async fn answers_are_rendered_every_time_where_none_are_kept() {
        let memory = sea_orm::Database::connect("sqlite::memory:").await.unwrap();
        let db = Db::new(memory);
        assert!(Answers::for_db(&db, 1 << 20).is_none());
        let key = applications_page(1);
        for _ in 0..2 {
            let mut rendered = false;
            Answers::answer(
                None,
                &db,
                key.clone(),
                async |_| -> Result<bytes::Bytes, DbErr> {
                    rendered = true;
                    Ok("x".into())
                },
            )
            .await
            .unwrap();
            assert!(rendered);
        }
    }
}
