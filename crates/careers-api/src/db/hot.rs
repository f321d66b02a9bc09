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

use std::ops::{Deref, Range};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::config::DbConfig;
use rusqlite::types::{FromSql, ValueRef};
use rusqlite::{Connection, OpenFlags};
use sea_orm::sqlx::postgres::types::Oid;
use sea_orm::sqlx::postgres::{PgRow, PgValueFormat};
use sea_orm::sqlx::sqlite::SqliteRow;
use sea_orm::sqlx::{self, Decode, Postgres, Row, Sqlite, Type, ValueRef as _};
use sea_orm::{
    ConnectionTrait, DatabaseConnection, DbBackend, DbErr, QueryResult, RuntimeErr, Statement,
};

type Observer = Arc<dyn Fn(&str) + Send + Sync>;

/// Why a column could not be decoded into its Rust type.
pub type DecodeError = Box<dyn std::error::Error + Send + Sync>;

/// The `DbErr` of a failed inline SQLite statement or of a value that does not decode.
fn read_failed(error: impl std::fmt::Display) -> DbErr {
    DbErr::Query(RuntimeErr::Internal(error.to_string()))
}

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
struct Reader {
    connection: Connection,
    data_version: Option<i64>,
}

/// Idle connections kept beyond this many are closed. A reader opened later asks its first
/// `data_version` afresh, which moves the generation ([`Readers::generation`]): a host whose
/// runtime has more than this many threads would empty the response cache often.
const MAX_IDLE_READERS: usize = 16;

impl Readers {
    fn new(path: PathBuf) -> Self {
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
    fn with_reader<T>(
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
    fn read<T>(
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
    fn generation(&self) -> Result<u64, DbErr> {
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
    fn read(rows: &mut rusqlite::Rows<'_>) -> rusqlite::Result<Self> {
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

    fn rows(&self) -> impl ExactSizeIterator<Item = InlineRow<'_>> {
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

/// A value a hot read decodes: the same Rust type from every backend, by the drivers' own
/// decoders (rusqlite's `FromSql`, sqlx's `Decode`). `'r` is the row's borrow, which a
/// `&'r str` keeps.
pub trait HotValue<'r>: Sized {
    fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError>;
    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError>;
    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError>;
}

/// Owned values: rusqlite's `FromSql`, sqlx's `Decode` on SQLite in memory, and on PostgreSQL
/// the value's bytes where [`postgres_fast`] reads them, else sqlx's `Decode`.
macro_rules! owned {
    ($($ty:ty => $fast:expr),*) => {$(
        impl<'r> HotValue<'r> for $ty {
            fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError> {
                Ok(<$ty as FromSql>::column_result(value)?)
            }

            fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError> {
                Ok(row.try_get(index)?)
            }

            fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError> {
                match $fast(row, index) {
                    Some(value) => Ok(value),
                    None => Ok(row.try_get(index)?),
                }
            }
        }
    )*};
}

owned!(
    i64 => |row, index| postgres_i64(row, index, INT8),
    Option<i64> => |row, index| postgres_i64(row, index, INT8).map(Some),
    String => |row, index| postgres_text(row, index).map(str::to_owned)
);

/// The OIDs of the PostgreSQL types of the hot reads' columns: `bigint`, `text`, `varchar`
/// (SeaORM's `string`) and `timestamptz`.
const INT8: Oid = Oid(20);
const TEXT: Oid = Oid(25);
const VARCHAR: Oid = Oid(1043);
const TIMESTAMPTZ: Oid = Oid(1184);

/// The bytes of a PostgreSQL value that is not NULL, in the binary format (that of every
/// prepared statement), of a column whose type is one of `types`; `None` for anything else,
/// which the caller leaves to sqlx's `try_get`. `try_get` compares the column's type with each
/// type the Rust type accepts, on every value (six for a `&str`), where this compares one OID:
/// the PostgreSQL list +5.5 % to +9 % (PERFORMANCE.md, the fast-path register).
fn postgres_binary<'r>(row: &'r PgRow, index: usize, types: &[Oid]) -> Option<&'r [u8]> {
    let raw = row.try_get_raw(index).ok()?;
    if raw.format() != PgValueFormat::Binary || !types.contains(&raw.type_info().oid()?) {
        return None;
    }
    raw.as_bytes().ok()
}

/// A PostgreSQL `text` or `varchar` value, checked as UTF-8 as sqlx checks it.
fn postgres_text(row: &PgRow, index: usize) -> Option<&str> {
    std::str::from_utf8(postgres_binary(row, index, &[TEXT, VARCHAR])?).ok()
}

/// A PostgreSQL value of type `oid` that is eight bytes, big-endian: a `bigint`, or a
/// `timestamptz`'s microseconds.
fn postgres_i64(row: &PgRow, index: usize, oid: Oid) -> Option<i64> {
    let bytes = postgres_binary(row, index, &[oid])?;
    Some(i64::from_be_bytes(bytes.try_into().ok()?))
}

/// A PostgreSQL `timestamptz` that is not NULL: microseconds since 2000-01-01 UTC. `None` also
/// for one chrono cannot hold (`infinity`), which sqlx's decoder then answers as it does.
fn postgres_timestamptz(row: &PgRow, index: usize) -> Option<DateTime<Utc>> {
    /// 2000-01-01 in microseconds since the Unix epoch.
    const POSTGRES_EPOCH: i64 = 946_684_800_000_000;
    let micros = postgres_i64(row, index, TIMESTAMPTZ)?;
    DateTime::from_timestamp_micros(micros.checked_add(POSTGRES_EPOCH)?)
}

/// A timestamp: sqlx writes a `DateTime<Utc>` to SQLite as RFC 3339 text, which chrono's RFC 3339
/// parser reads (as sqlx's own decoder does) without the format-string machinery of rusqlite's
/// `FromSql`, which was a tenth of the employer list's CPU; any other text or type goes to
/// rusqlite's decoder.
impl<'r> HotValue<'r> for DateTime<Utc> {
    fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError> {
        if let ValueRef::Text(text) = value
            && let Ok(time) = std::str::from_utf8(text)
                .map_err(drop)
                .and_then(|text| DateTime::parse_from_rfc3339(text).map_err(drop))
        {
            return Ok(time.to_utc());
        }
        Ok(<DateTime<Utc> as FromSql>::column_result(value)?)
    }

    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError> {
        Ok(row.try_get(index)?)
    }

    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError> {
        match postgres_timestamptz(row, index) {
            Some(time) => Ok(time),
            None => Ok(row.try_get(index)?),
        }
    }
}

/// Text borrowed from the row.
impl<'r> HotValue<'r> for &'r str {
    fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError> {
        Ok(value.as_str()?)
    }

    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError> {
        decode_str::<Sqlite, _>(row, index)
    }

    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError> {
        match postgres_text(row, index) {
            Some(text) => Ok(text),
            None => decode_str::<Postgres, _>(row, index),
        }
    }
}

fn decode_str<'r, DB, R>(row: &'r R, index: usize) -> Result<&'r str, DecodeError>
where
    DB: sqlx::Database,
    R: Row<Database = DB>,
    &'r str: Decode<'r, DB> + Type<DB>,
    usize: sqlx::ColumnIndex<R>,
{
    Ok(row.try_get(index)?)
}

/// A row of any of the three, borrowed for `'r`: what is decoded from it may keep that borrow.
pub trait HotRow<'r>: Copy {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError>;
}

impl<'r> HotRow<'r> for &'r rusqlite::Row<'_> {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        T::inline(self.get_ref(index)?)
    }
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

impl<'r> HotRow<'r> for &'r SqliteRow {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        T::sqlite(self, index)
    }
}

impl<'r> HotRow<'r> for &'r PgRow {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        T::postgres(self, index)
    }
}

/// A row SeaORM read: the driver's row inside it.
impl<'r> HotRow<'r> for &'r QueryResult {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        if let Some(row) = self.try_as_pg_row() {
            T::postgres(row, index)
        } else if let Some(row) = self.try_as_sqlite_row() {
            T::sqlite(row, index)
        } else {
            Err("a hot read runs on PostgreSQL or SQLite".into())
        }
    }
}

/// Reads a row's columns in select-list order.
pub struct Columns<R> {
    row: R,
    next: usize,
}

impl<'r, R: HotRow<'r>> Columns<R> {
    pub fn new(row: R) -> Self {
        Self { row, next: 0 }
    }

    pub fn read<T: HotValue<'r>>(&mut self) -> Result<T, DecodeError> {
        let value = self.row.get(self.next);
        self.next += 1;
        value
    }
}

/// What a hot read decodes a row into, column by column in select-list order; `'r` is the
/// row's borrow, for values that keep it.
pub trait FromRow<'r>: Sized {
    fn read<R: HotRow<'r>>(cols: &mut Columns<R>) -> Result<Self, DecodeError>;
}

/// A single-column row.
impl<'r, T: HotValue<'r>> FromRow<'r> for T {
    fn read<R: HotRow<'r>>(cols: &mut Columns<R>) -> Result<Self, DecodeError> {
        cols.read()
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use rusqlite::types::{Value, ValueRef};
    use sea_orm::sqlx::postgres::PgRow;
    use sea_orm::sqlx::sqlite::SqliteRow;
    use sea_orm::sqlx::{self, Executor, PgPool, Row};

    use super::{Columns, Db, DecodeError, FromRow, HotRow, HotValue, postgres_timestamptz};

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

    /// What `T` reads from a row, as text: the value's JSON, or the error's message.
    fn read<'r, T: HotValue<'r> + serde::Serialize>(row: &'r PgRow) -> String {
        match T::postgres(row, 0) {
            Ok(value) => serde_json::to_string(&value).unwrap(),
            Err(error) => error.to_string(),
        }
    }

    /// What sqlx's own `try_get` reads, in the same form.
    fn sqlx_reads<'r, T>(row: &'r PgRow) -> String
    where
        T: sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres> + serde::Serialize,
    {
        match row.try_get::<T, _>(0) {
            Ok(value) => serde_json::to_string(&value).unwrap(),
            Err(error) => error.to_string(),
        }
    }

    /// The oracle of the PostgreSQL value readers: values of PostgreSQL's types read through
    /// real rows, in the binary format of prepared statements and the text format of simple
    /// queries, answer what sqlx's own decoder answers, value or error, on the fast path or not.
    #[cfg_attr(not(external_backends), ignore = "needs TEST_DATABASE_URL")]
    #[tokio::test]
    async fn postgres_values_decode_as_sqlx_does() {
        let Ok(url) = std::env::var("TEST_DATABASE_URL") else {
            assert!(
                std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() != Ok("1"),
                "REQUIRE_EXTERNAL_BACKENDS=1 but TEST_DATABASE_URL is not set"
            );
            eprintln!("skipped: needs TEST_DATABASE_URL");
            return;
        };
        let pool = PgPool::connect(&url).await.unwrap();
        let values = [
            "'submitted'::text",
            "'a cover letter, with \"quotes\" and ~'::text",
            "''::text",
            "'Zoë'::text",
            "'日本語'::varchar",
            "'padded'::char(10)",
            "'pg_catalog'::name",
            "NULL::text",
            "42::bigint",
            "(-9223372036854775807 - 1)::bigint",
            "NULL::bigint",
            "42::integer",
            "42::numeric",
            "'2026-11-25 06:00:00.123456+00'::timestamptz",
            "'2026-11-25 07:00:00+01'::timestamptz",
            "'1999-12-31 23:59:59.999999+00'::timestamptz",
            "'4713-01-01 00:00:00+00 BC'::timestamptz",
            "NULL::timestamptz",
            "'2026-11-25 06:00:00'::timestamp",
            "true",
        ];
        let mut rows = Vec::new();
        for value in values {
            let sql = format!("SELECT {value}");
            let prepared = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .fetch_one(&pool)
                .await
                .unwrap();
            let simple = pool
                .fetch_one(sqlx::raw_sql(sqlx::AssertSqlSafe(sql)))
                .await
                .unwrap();
            rows.push((value, prepared));
            rows.push((value, simple));
        }
        for (value, row) in &rows {
            assert_eq!(
                read::<&str>(row),
                sqlx_reads::<&str>(row),
                "&str of {value}"
            );
            assert_eq!(
                read::<String>(row),
                sqlx_reads::<String>(row),
                "String of {value}"
            );
            assert_eq!(read::<i64>(row), sqlx_reads::<i64>(row), "i64 of {value}");
            assert_eq!(
                read::<Option<i64>>(row),
                sqlx_reads::<Option<i64>>(row),
                "Option<i64> of {value}"
            );
            assert_eq!(
                read::<DateTime<Utc>>(row),
                sqlx_reads::<DateTime<Utc>>(row),
                "timestamp of {value}"
            );
        }
        // Timestamps chrono cannot hold are left to sqlx's decoder.
        for value in ["'infinity'", "'-infinity'"] {
            let sql = format!("SELECT {value}::timestamptz");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql))
                .fetch_one(&pool)
                .await
                .unwrap();
            assert_eq!(postgres_timestamptz(&row, 0), None, "{value}");
        }
    }
}
