//! The database handle, and the hot reads.
//!
//! Everything goes through SeaORM except the statements that run on every request of an area
//! or page the service is measured on: the session's user, the user check of a refresh, the
//! employer check, and the employer's application list and detail. Those are constant SQL with
//! integer parameters (`$1`, `$2`...), decoded by position, written once for both backends
//! ([`FromRow`]).
//!
//! Where they run is the design of the read path (docs/DECISIONS.md 79):
//! - **SQLite (a file)**: on the calling thread, through a read-only rusqlite connection to the
//!   same file taken from a small pool of idle ones ([`Readers`]). sqlx runs each SQLite
//!   connection on a thread of its own and hands every statement and its rows over channels:
//!   two wake-ups and context switches per statement, which were half of an authenticated GET's
//!   CPU time. A point read takes microseconds, so running it inline costs the runtime less
//!   than the hand-off did. Writes stay on SeaORM's sqlx pool (WAL: a reader never blocks the
//!   writer, and sees every write committed before its statement starts).
//! - **PostgreSQL, and SQLite in memory** (which a second connection cannot open): through
//!   SeaORM's raw statements (`query_one_raw`, `query_all_raw`), decoded by position from the
//!   driver's row. Running them on sqlx directly did not pay (PERFORMANCE.md, "Measured and
//!   removed").

mod decode;
mod inline;

use std::ops::Deref;
use std::sync::Arc;

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, DbErr, QueryResult, Statement};

use self::decode::read_failed;
pub use self::decode::{Columns, DecodeError, FromRow, HotRow, HotValue};
use self::inline::{InlineRows, Readers};

type Observer = Arc<dyn Fn(&str) + Send + Sync>;

/// SeaORM's connection (through `Deref`, for everything else) and the hot reads.
#[derive(Clone)]
pub struct Db {
    orm: DatabaseConnection,
    readers: Option<Arc<Readers>>,
    observer: Option<Observer>,
}

impl Deref for Db {
    type Target = DatabaseConnection;

    fn deref(&self) -> &DatabaseConnection {
        &self.orm
    }
}

impl Db {
    /// The handle of `orm`. On a SQLite file, the hot reads get their inline readers.
    pub fn new(orm: DatabaseConnection) -> Self {
        let readers = (orm.get_database_backend() == DbBackend::Sqlite)
            .then(|| orm.get_sqlite_connection_pool().connect_options())
            // A file on disk (SQLite in memory has none, and another connection cannot open it).
            .filter(|options| options.get_filename().is_file())
            .map(|options| Arc::new(Readers::new(options.get_filename().to_owned())));
        Self {
            orm,
            readers,
            observer: None,
        }
    }

    /// Whether [`Db::generation`] tells when the database changed: on a SQLite file.
    pub fn has_generation(&self) -> bool {
        self.readers.is_some()
    }

    /// A number that differs from every earlier answer if anything was committed to the
    /// database since that answer, by any connection ([`Readers::generation`]); `None` where the
    /// database has no such cheap, exact signal (PostgreSQL, SQLite in memory).
    pub fn generation(&self) -> Result<Option<u64>, DbErr> {
        let Some(readers) = &self.readers else {
            return Ok(None);
        };
        self.observe("PRAGMA data_version");
        readers.generation().map(Some)
    }

    /// Runs `work` while one inline reader is taken, so that the reads within it open a second
    /// one (the response cache's test of a reader's first question).
    #[cfg(test)]
    pub(crate) fn while_a_reader_is_busy<T>(&self, work: impl FnOnce() -> T) -> T {
        let readers = self.readers.as_ref().expect("inline readers");
        readers.with_reader(|_| Ok(work())).unwrap()
    }

    /// Whether the hot reads run inline on rusqlite.
    #[cfg(any(test, feature = "test-support"))]
    pub fn reads_inline(&self) -> bool {
        self.readers.is_some()
    }

    /// Calls `observer` with the SQL of every statement the service runs, through SeaORM or
    /// as a hot read: the tests count statements with it.
    #[cfg(any(test, feature = "test-support"))]
    pub fn observe_statements(&mut self, observer: impl Fn(&str) + Send + Sync + 'static) {
        let observer: Observer = Arc::new(observer);
        let orm = observer.clone();
        self.orm
            .set_metric_callback(move |info| orm(&info.statement.sql));
        self.observer = Some(observer);
    }

    /// The row, if any, of a constant statement whose parameters are `binds` (`$1`, `$2`...).
    pub async fn fetch_optional<T: for<'r> FromRow<'r>>(
        &self,
        sql: &'static str,
        binds: &[i64],
    ) -> Result<Option<T>, DbErr> {
        if let Some(readers) = &self.readers {
            self.observe(sql);
            return readers.read(sql, binds, |rows| match rows.next()? {
                Some(row) => Ok(Some(T::read(&mut Columns::new(row))?)),
                None => Ok(None),
            });
        }
        let row = self.orm.query_one_raw(self.statement(sql, binds)).await?;
        row.map(|row| T::read(&mut Columns::new(&row)))
            .transpose()
            .map_err(read_failed)
    }

    /// The rows of a constant statement whose parameters are `binds`, kept whole: what is
    /// decoded from them may borrow their text ([`Rows::decode`]).
    pub async fn fetch_rows(&self, sql: &'static str, binds: &[i64]) -> Result<Rows, DbErr> {
        if let Some(readers) = &self.readers {
            self.observe(sql);
            return readers
                .read(sql, binds, |rows| Ok(InlineRows::read(rows)?))
                .map(Rows::Inline);
        }
        let rows = self.orm.query_all_raw(self.statement(sql, binds)).await?;
        Ok(Rows::Driver(rows))
    }

    /// `sql` with `binds` as SeaORM's raw statement (SeaORM's own observer sees it run).
    fn statement(&self, sql: &str, binds: &[i64]) -> Statement {
        Statement::from_sql_and_values(
            self.orm.get_database_backend(),
            sql,
            binds
                .iter()
                .map(|value| sea_orm::Value::BigInt(Some(*value))),
        )
    }

    /// Tells the statement observer of an inline read (SeaORM's own callback sees the rest).
    fn observe(&self, sql: &str) {
        if let Some(observer) = &self.observer {
            observer(sql);
        }
    }
}

/// The rows of [`Db::fetch_rows`]: read inline (SQLite file), or through SeaORM.
pub enum Rows {
    Inline(InlineRows),
    Driver(Vec<QueryResult>),
}

impl Rows {
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Inline(rows) => rows.rows().len() == 0,
            Self::Driver(rows) => rows.is_empty(),
        }
    }

    /// Every row decoded into `T`, which may borrow from the rows (`&str` values).
    pub fn decode<'r, T: FromRow<'r>>(&'r self) -> Result<Vec<T>, DbErr> {
        fn all<'r, R: HotRow<'r>, T: FromRow<'r>>(
            rows: impl ExactSizeIterator<Item = R>,
        ) -> Result<Vec<T>, DecodeError> {
            let mut all = Vec::with_capacity(rows.len());
            for row in rows {
                all.push(T::read(&mut Columns::new(row))?);
            }
            Ok(all)
        }
        match self {
            Self::Inline(rows) => all(rows.rows()),
            Self::Driver(rows) => all(rows.iter()),
        }
        .map_err(read_failed)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::{Columns, Db, DecodeError, FromRow, HotRow};

    /// A row of every kind of value the hot reads decode, for the inline readers' oracle.
    #[derive(Debug, PartialEq)]
    struct Mixed<'r> {
        id: i64,
        borrowed: &'r str,
        owned: String,
        parent: Option<i64>,
        at: DateTime<Utc>,
    }

    impl<'r> FromRow<'r> for Mixed<'r> {
        fn read<R: HotRow<'r>>(cols: &mut Columns<R>) -> Result<Self, DecodeError> {
            Ok(Self {
                id: cols.read()?,
                borrowed: cols.read()?,
                owned: cols.read()?,
                parent: cols.read()?,
                at: cols.read()?,
            })
        }
    }

    /// The oracle of the inline readers: a page of rows kept in one buffer
    /// ([`super::InlineRows`]), and a single row read straight off the statement, decode to
    /// what rusqlite's own `get` reads from the same rows (multi-byte, empty and quoted text,
    /// NULL, timestamps in RFC 3339 and in SQLite's own form), and a page with no rows is empty.
    #[tokio::test]
    async fn inline_rows_decode_as_rusqlite_does() {
        use sea_orm::ConnectionTrait;

        let dir = std::env::temp_dir().join(format!("careers-hot-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rows.db");
        let _ = std::fs::remove_file(&path);
        let orm = sea_orm::Database::connect(format!("sqlite://{}?mode=rwc", path.display()))
            .await
            .unwrap();
        orm.execute_unprepared(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, parent INTEGER, \
             at TEXT NOT NULL); \
             INSERT INTO t VALUES (1, 'Zoë ✓ 日本', NULL, '2026-11-26T14:16:49.857533525+00:00'), \
             (2, '', 7, '2026-01-02T03:04:05+00:00'), \
             (3, 'say \"hi\"\n', NULL, '2026-11-26 14:16:49')",
        )
        .await
        .unwrap();
        let db = Db::new(orm);
        assert!(db.reads_inline());
        const SQL: &str = "SELECT id, name, name, parent, at FROM t WHERE id >= $1 ORDER BY id";

        type Values = (i64, String, String, Option<i64>, DateTime<Utc>);
        let theirs: Vec<Values> = rusqlite::Connection::open(&path)
            .unwrap()
            .prepare(&SQL.replace("$1", "?1"))
            .unwrap()
            .query_map([1], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(theirs.len(), 3);
        let rows = db.fetch_rows(SQL, &[1]).await.unwrap();
        assert!(!rows.is_empty());
        let ours: Vec<Mixed> = rows.decode().unwrap();
        let ours: Vec<_> = ours
            .into_iter()
            .map(|m| (m.id, m.borrowed.to_owned(), m.owned, m.parent, m.at))
            .collect();
        assert_eq!(ours, theirs);

        // One row at a time, decoded straight off the statement (`fetch_optional`).
        for (id, name, _, parent, at) in &theirs {
            let one: Option<String> = db
                .fetch_optional("SELECT name FROM t WHERE id = $1", &[*id])
                .await
                .unwrap();
            assert_eq!(one.as_ref(), Some(name));
            let one: Option<Option<i64>> = db
                .fetch_optional("SELECT parent FROM t WHERE id = $1", &[*id])
                .await
                .unwrap();
            assert_eq!(one, Some(*parent));
            let one: Option<DateTime<Utc>> = db
                .fetch_optional("SELECT at FROM t WHERE id = $1", &[*id])
                .await
                .unwrap();
            assert_eq!(one, Some(*at));
        }

        let none = db.fetch_rows(SQL, &[4]).await.unwrap();
        assert!(none.is_empty());
        assert!(none.decode::<Mixed>().unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
