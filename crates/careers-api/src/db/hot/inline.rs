//! The hot reads on a SQLite file: run on the calling thread through read-only rusqlite
//! connections to the same file (docs/DECISIONS.md 79), their rows copied out of the statement
//! into one buffer (DECISIONS 117).

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use sea_orm::DbErr;

use super::decode::{DecodeError, HotRow, HotValue, read_failed};

/// The `DbErr` of a failed inline read: one that waited out the busy timeout or could not open
/// the file is the database being unavailable (503), as a pool timeout is on sqlx's path.
fn inline_failed(error: DecodeError) -> DbErr {
    use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked};
    match error.downcast_ref::<rusqlite::Error>() {
        Some(rusqlite::Error::SqliteFailure(failure, _))
            if matches!(failure.code, DatabaseBusy | DatabaseLocked | CannotOpen) =>
        {
            DbErr::ConnectionAcquire(sea_orm::ConnAcquireErr::Timeout)
        }
        _ => read_failed(error),
    }
}

/// Read-only rusqlite connections to the SQLite file, for the hot reads: one is taken for a
/// statement and put back after it, so there are as many as statements ever ran at once (one
/// per runtime thread, as a statement never waits across an `.await`). Each keeps its prepared
/// statements.
pub struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Reader>>,
    /// The database's generation as this process sees it ([`Readers::generation`]).
    generation: AtomicU64,
}

/// A connection of [`Readers`], with the `data_version` it read last.
pub(super) struct Reader {
    connection: Connection,
    data_version: Option<i64>,
}

/// Idle connections kept beyond this many are closed. A reader opened later asks its first
/// `data_version` afresh, which moves the generation ([`Readers::generation`]): a host whose
/// runtime has more than this many threads would empty the response cache often.
const MAX_IDLE_READERS: usize = 16;

impl Readers {
    pub(super) fn new(path: PathBuf) -> Self {
        Self {
            path,
            idle: Mutex::new(Vec::new()),
            generation: AtomicU64::new(0),
        }
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let connection = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // As the writer's connections: a reader may wait for WAL recovery, never forever.
        connection.busy_timeout(Duration::from_secs(5))?;
        // A statement with a bound `LIMIT` stays compiled when it is bound again
        // (SQLITE_DBCONFIG_ENABLE_QPSG): without it, SQLite 3.47+ re-plans such a statement
        // on every execution.
        connection.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        connection.set_prepared_statement_cache_capacity(32);
        Ok(connection)
    }

    /// Runs `work` on an idle connection (a new one when none is idle), then puts it back.
    pub(super) fn with_reader<T>(
        &self,
        work: impl FnOnce(&mut Reader) -> Result<T, DecodeError>,
    ) -> Result<T, DbErr> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut reader = match idle {
            Some(reader) => reader,
            None => Reader {
                connection: self.open().map_err(|e| inline_failed(e.into()))?,
                data_version: None,
            },
        };
        let result = work(&mut reader).map_err(inline_failed);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE_READERS {
            idle.push(reader);
        }
        result
    }

    /// Runs `sql` with `binds` and hands its rows to `take`, on this thread.
    pub(super) fn read<T>(
        &self,
        sql: &str,
        binds: &[i64],
        take: impl FnOnce(&mut rusqlite::Rows<'_>) -> Result<T, DecodeError>,
    ) -> Result<T, DbErr> {
        self.with_reader(|reader| {
            let mut statement = reader.connection.prepare_cached(sql)?;
            // `$n` is a named parameter to SQLite, numbered by first appearance: bound by name.
            const NAMES: [&str; 8] = ["$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8"];
            if binds.len() > NAMES.len() {
                return Err("a hot read takes at most eight parameters".into());
            }
            for (name, value) in NAMES.iter().zip(binds) {
                if let Some(index) = statement.parameter_index(name)? {
                    statement.raw_bind_parameter(index, value)?;
                }
            }
            let mut rows = statement.raw_query();
            take(&mut rows)
        })
    }

    /// A number that differs from every earlier answer if any connection has committed to the
    /// file since that answer: this process's writers or another process on the same file.
    ///
    /// Each connection asks SQLite whether another connection has committed since it last
    /// asked (`PRAGMA data_version`; the readers never write). When one has, or when the
    /// connection never asked, the generation moves on. A commit after a call is seen by the
    /// first later call on any connection, as every connection that had asked before the
    /// commit finds its `data_version` changed, and one that had not moves the generation
    /// when it first asks. So an answer read after the generation was taken, and kept with
    /// it, is current for as long as the generation stays.
    pub(super) fn generation(&self) -> Result<u64, DbErr> {
        self.with_reader(|reader| {
            let version: i64 = reader
                .connection
                .prepare_cached("PRAGMA data_version")?
                .query_row([], |row| row.get(0))?;
            if reader.data_version.replace(version) != Some(version) {
                self.generation.fetch_add(1, Ordering::AcqRel);
            }
            Ok(self.generation.load(Ordering::Acquire))
        })
    }
}

/// The rows of an inline read, copied out of SQLite's statement before it is reset: every
/// row's values in one vector, and the bytes of all their text in one buffer, so that a page
/// of rows costs a few allocations instead of one per value and one per row.
pub struct InlineRows {
    /// Values a row, in select-list order.
    width: usize,
    cells: Vec<Cell>,
    bytes: Vec<u8>,
}

/// A value of [`InlineRows`]; text and blobs are ranges of its `bytes`.
enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(Range<usize>),
    Blob(Range<usize>),
}

impl InlineRows {
    pub(super) fn read(rows: &mut rusqlite::Rows<'_>) -> rusqlite::Result<Self> {
        let width = rows
            .as_ref()
            .map_or(0, |statement| statement.column_count());
        let mut page = Self {
            width,
            cells: Vec::new(),
            bytes: Vec::new(),
        };
        while let Some(row) = rows.next()? {
            for index in 0..width {
                let cell = match row.get_ref(index)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(value) => Cell::Integer(value),
                    ValueRef::Real(value) => Cell::Real(value),
                    ValueRef::Text(text) => Cell::Text(page.keep(text)),
                    ValueRef::Blob(blob) => Cell::Blob(page.keep(blob)),
                };
                page.cells.push(cell);
            }
        }
        Ok(page)
    }

    /// Appends `value` to the bytes, and answers where it is.
    fn keep(&mut self, value: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(value);
        start..self.bytes.len()
    }

    pub(super) fn rows(&self) -> impl ExactSizeIterator<Item = InlineRow<'_>> {
        // A statement has at least one column (`max(1)` only keeps `chunks_exact` defined).
        self.cells
            .chunks_exact(self.width.max(1))
            .map(|cells| InlineRow {
                cells,
                bytes: &self.bytes,
            })
    }
}

/// One row of [`InlineRows`].
#[derive(Clone, Copy)]
pub struct InlineRow<'r> {
    cells: &'r [Cell],
    bytes: &'r [u8],
}

impl<'r> HotRow<'r> for InlineRow<'r> {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        T::inline(match self.cells.get(index).ok_or("no such column")? {
            Cell::Null => ValueRef::Null,
            Cell::Integer(value) => ValueRef::Integer(*value),
            Cell::Real(value) => ValueRef::Real(*value),
            Cell::Text(range) => ValueRef::Text(&self.bytes[range.clone()]),
            Cell::Blob(range) => ValueRef::Blob(&self.bytes[range.clone()]),
        })
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::types::{Value, ValueRef};
    use sea_orm::sqlx::postgres::PgRow;
    use sea_orm::sqlx::sqlite::SqliteRow;

    use super::super::decode::{DecodeError, HotRow, HotValue};

    /// A raw value, to compare the kinds an inline page keeps with rusqlite's own.
    impl<'r> HotValue<'r> for ValueRef<'r> {
        fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError> {
            Ok(value)
        }

        fn sqlite(_: &'r SqliteRow, _: usize) -> Result<Self, DecodeError> {
            Err("inline only".into())
        }

        fn postgres(_: &'r PgRow, _: usize) -> Result<Self, DecodeError> {
            Err("inline only".into())
        }
    }

    /// Every kind of SQLite value (real, blob, empty blob, NULL, integer, text) comes back out
    /// of an inline page as the same `ValueRef` rusqlite reads off the statement, row by row.
    #[test]
    fn an_inline_page_keeps_every_kind_of_value() {
        const SQL: &str = "SELECT 1.5, x'00ff', x'', NULL, 7, 'a' \
                           UNION ALL SELECT -2.25, x'01', x'', NULL, -8, 'bé'";
        let connection = rusqlite::Connection::open_in_memory().unwrap();
        let mut statement = connection.prepare(SQL).unwrap();
        let mut theirs: Vec<Vec<Value>> = Vec::new();
        let mut rows = statement.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            theirs.push(
                (0..6)
                    .map(|i| Value::try_from(row.get_ref(i).unwrap()).unwrap())
                    .collect(),
            );
        }
        drop(rows);
        let page = super::InlineRows::read(&mut statement.raw_query()).unwrap();
        let ours: Vec<Vec<Value>> = page
            .rows()
            .map(|row| {
                (0..6)
                    .map(|i| Value::try_from(row.get::<ValueRef>(i).unwrap()).unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(theirs.len(), 2);
        assert_eq!(ours, theirs);
        assert!(page.rows().next().unwrap().get::<ValueRef>(6).is_err());
    }
}
