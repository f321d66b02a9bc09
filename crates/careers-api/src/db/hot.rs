//! The database handle, and the hot reads that run on its sqlx pool directly.
//!
//! Everything goes through SeaORM except the statements that run on every request of an area
//! or page the service is measured on: the session's user, the user check of a refresh, the
//! employer check, and the employer's application list and detail. Those are constant SQL, run on the same pool that SeaORM holds
//! (same connections, settings and PostgreSQL schema) without SeaORM's statement wrapper,
//! which cost about a tenth of an authenticated GET (docs/PERFORMANCE.md, session 4). Their
//! rows are decoded by position, written once for both backends ([`FromRow`]).

// `unsafe` here: ASCII bytes taken as text without a second check, each block with its
// SAFETY argument.
#![allow(unsafe_code)]

use std::ops::Deref;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::sqlx::postgres::types::Oid;
use sea_orm::sqlx::postgres::{PgRow, PgValueFormat};
use sea_orm::sqlx::sqlite::SqliteRow;
use sea_orm::sqlx::{self, Decode, Row, Sqlite, Type, ValueRef};
use sea_orm::{DatabaseConnection, DbBackend, DbErr, RuntimeErr};

use crate::views::timestamp::Stamp;

type Observer = Arc<dyn Fn(&str) + Send + Sync>;

/// Evaluates `$run` with `$pool` bound to the sqlx pool of `$orm`'s backend: the body is
/// written once and compiled for each driver, whose row types differ. A failure becomes the
/// `DbErr` SeaORM reports for a failed statement, so that `ApiError`'s mapping (503 when the
/// database cannot be reached) is the same for both paths.
macro_rules! on_pool {
    ($orm:expr, |$pool:ident| $run:expr) => {
        match $orm.get_database_backend() {
            DbBackend::Postgres => {
                let $pool = $orm.get_postgres_connection_pool();
                $run
            }
            _ => {
                let $pool = $orm.get_sqlite_connection_pool();
                $run
            }
        }
        .map_err(query_failed)
    };
}

/// The `DbErr` SeaORM reports for a failed statement.
fn query_failed(error: sqlx::Error) -> DbErr {
    DbErr::Query(RuntimeErr::SqlxError(Arc::new(error)))
}

/// SeaORM's connection (through `Deref`, for everything else) and the hot reads.
#[derive(Clone)]
pub struct Db {
    orm: DatabaseConnection,
    observer: Option<Observer>,
}

impl Deref for Db {
    type Target = DatabaseConnection;

    fn deref(&self) -> &DatabaseConnection {
        &self.orm
    }
}

impl Db {
    pub fn new(orm: DatabaseConnection) -> Self {
        Self {
            orm,
            observer: None,
        }
    }

    /// Calls `observer` with the SQL of every statement the service runs, through SeaORM or
    /// as a hot read: the tests count statements with it.
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
        self.observe(sql);
        on_pool!(self.orm, |pool| query(sql, binds)
            .fetch_optional(pool)
            .await
            .and_then(|row| row
                .map(|row| T::read(&mut Columns::new(&row)))
                .transpose()))
    }

    /// The rows of a constant statement whose parameters are `binds`, kept as the driver
    /// returned them: what is decoded from them may borrow their text ([`Rows::decode`]).
    pub async fn fetch_rows(&self, sql: &'static str, binds: &[i64]) -> Result<Rows, DbErr> {
        self.observe(sql);
        // On a connection taken from the pool, as the pool itself runs `fetch_optional`: the
        // pool's `fetch_all` passes the connection's rows through a second stream, an async
        // generator polled once a row. Boxed, as the pool boxes its own: inline, `acquire`'s
        // large future would make every caller's future as large, and futures are moved
        // (docs/PERFORMANCE.md, session 15).
        on_pool!(self.orm, |pool| Box::pin(async {
            let mut connection = pool.acquire().await?;
            query(sql, binds).fetch_all(&mut *connection).await
        })
        .await
        .map(Rows::from))
    }

    fn observe(&self, sql: &str) {
        if let Some(observer) = &self.observer {
            observer(sql);
        }
    }
}

fn query<DB: sqlx::Database>(
    sql: &'static str,
    binds: &[i64],
) -> sqlx::query::Query<'static, DB, <DB as sqlx::Database>::Arguments>
where
    i64: for<'q> sqlx::Encode<'q, DB> + Type<DB>,
{
    binds
        .iter()
        .fold(sqlx::query(sql), |query, value| query.bind(*value))
}

/// The rows of [`Db::fetch_rows`], of either backend.
pub enum Rows {
    Sqlite(Vec<SqliteRow>),
    Postgres(Vec<PgRow>),
}

impl From<Vec<SqliteRow>> for Rows {
    fn from(rows: Vec<SqliteRow>) -> Self {
        Self::Sqlite(rows)
    }
}

impl From<Vec<PgRow>> for Rows {
    fn from(rows: Vec<PgRow>) -> Self {
        Self::Postgres(rows)
    }
}

impl Rows {
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Sqlite(rows) => rows.is_empty(),
            Self::Postgres(rows) => rows.is_empty(),
        }
    }

    /// Every row decoded into `T`, which may borrow from the rows (`&str` values).
    pub fn decode<'r, T: FromRow<'r>>(&'r self) -> Result<Vec<T>, DbErr> {
        fn all<'r, R: HotRow, T: FromRow<'r>>(rows: &'r [R]) -> Result<Vec<T>, sqlx::Error> {
            // Allocated once: collecting a `Result`'s iterator grows the vector from nothing.
            let mut all = Vec::with_capacity(rows.len());
            for row in rows {
                all.push(T::read(&mut Columns::new(row))?);
            }
            Ok(all)
        }
        match self {
            Self::Sqlite(rows) => all(rows),
            Self::Postgres(rows) => all(rows),
        }
        .map_err(query_failed)
    }
}

/// A value a hot read decodes: the same Rust type from either backend. `'r` is the row's
/// borrow, which a `&'r str` keeps.
pub trait HotValue<'r>: Sized {
    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, sqlx::Error>;
    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, sqlx::Error>;
}

/// The OIDs of the PostgreSQL types that the hot reads' columns have: `bigint`, `text`,
/// `varchar` (SeaORM's `string`) and `timestamptz`.
const INT8: Oid = Oid(20);
const TEXT: Oid = Oid(25);
const VARCHAR: Oid = Oid(1043);
const TIMESTAMPTZ: Oid = Oid(1184);

/// The bytes of a PostgreSQL value that is not NULL, in the binary format (that of every
/// prepared statement), of a column whose type is one of `types`. `None` for anything else,
/// which the caller leaves to sqlx's `try_get`. sqlx's `try_get` compares the column's type
/// with each type the Rust type accepts, on every value: six for a `&str` (about 300
/// instructions a value), where this compares one OID (docs/PERFORMANCE.md, session 17).
fn postgres_binary<'r>(row: &'r PgRow, index: usize, types: &[Oid]) -> Option<&'r [u8]> {
    let raw = row.try_get_raw(index).ok()?;
    if raw.format() != PgValueFormat::Binary {
        return None;
    }
    let oid = raw.type_info().oid()?;
    if !types.contains(&oid) {
        return None;
    }
    raw.as_bytes().ok()
}

/// A PostgreSQL `text` or `varchar` value that is ASCII, taken as it is ([`ascii`]).
fn postgres_ascii(row: &PgRow, index: usize) -> Option<&str> {
    ascii(postgres_binary(row, index, &[TEXT, VARCHAR])?)
}

/// A PostgreSQL value of type `oid` that is eight bytes, big-endian: a `bigint`, or a
/// `timestamptz`'s microseconds.
fn postgres_i64(row: &PgRow, index: usize, oid: Oid) -> Option<i64> {
    let bytes = postgres_binary(row, index, &[oid])?;
    Some(i64::from_be_bytes(bytes.try_into().ok()?))
}

/// Integers: a PostgreSQL `bigint` that is not NULL read as it is, anything else (a NULL,
/// another type, SQLite's values) by sqlx's decoder.
macro_rules! integer {
    ($($ty:ty => $wrap:expr),*) => {$(
        impl<'r> HotValue<'r> for $ty {
            fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, sqlx::Error> {
                row.try_get(index)
            }

            fn postgres(row: &'r PgRow, index: usize) -> Result<Self, sqlx::Error> {
                match postgres_i64(row, index, INT8) {
                    Some(value) => Ok($wrap(value)),
                    None => row.try_get(index),
                }
            }
        }
    )*};
}

integer!(i64 => std::convert::identity, Option<i64> => Some);

/// The bytes of a SQLite text value, read without validating them as UTF-8. `None` for a blob,
/// a number or a NULL without a declared type, which the caller leaves to sqlx's decoder; a NULL
/// of a `TEXT` column reads as empty text, as it does through sqlx.
fn sqlite_text(row: &SqliteRow, index: usize) -> Option<&[u8]> {
    let raw = row.try_get_raw(index).ok()?;
    if !<str as Type<Sqlite>>::compatible(&raw.type_info()) {
        return None;
    }
    <&[u8] as Decode<Sqlite>>::decode(raw).ok()
}

/// A SQLite text value that is ASCII, taken as it is ([`ascii`]).
fn sqlite_ascii(row: &SqliteRow, index: usize) -> Option<&str> {
    ascii(sqlite_text(row, index)?)
}

/// Text bytes that are ASCII, which are then UTF-8 as they are: sqlx validates every text with
/// `str::from_utf8`, about 86 instructions for each of the list's short strings, against a
/// plain test of each byte (docs/PERFORMANCE.md, session 15). `None` for any other bytes, which
/// the caller leaves to sqlx's own decoder (`text_decodes_as_sqlx_does`,
/// `postgres_values_decode_as_sqlx_does`).
fn ascii(bytes: &[u8]) -> Option<&str> {
    bytes.is_ascii().then(|| {
        // SAFETY: ASCII bytes are valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    })
}

/// Text: ASCII taken as it is from either backend ([`ascii`]), anything else decoded by sqlx's
/// own decoder, so that its answers and errors are sqlx's (`text_decodes_as_sqlx_does`,
/// `postgres_values_decode_as_sqlx_does`).
macro_rules! text {
    ($($ty:ty => $take:expr),*) => {$(
        impl<'r> HotValue<'r> for $ty {
            fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, sqlx::Error> {
                match sqlite_ascii(row, index) {
                    Some(text) => Ok($take(text)),
                    None => row.try_get(index),
                }
            }

            fn postgres(row: &'r PgRow, index: usize) -> Result<Self, sqlx::Error> {
                match postgres_ascii(row, index) {
                    Some(text) => Ok($take(text)),
                    None => row.try_get(index),
                }
            }
        }
    )*};
}

text!(&'r str => std::convert::identity, String => str::to_owned);

/// A timestamp column that the response writes. SQLite keeps sqlx's `DateTime<Utc>` as the text
/// sqlx writes (`2026-11-24T09:00:00.123456789+00:00`), which is the response's text but for its
/// offset: that text is taken as it is ([`Stamp::stored`]), neither parsed nor formatted again.
/// Any other value goes through sqlx's own decoder (chrono's RFC 3339 parser for text)
/// (`other_text_decodes_as_sqlx_does`). PostgreSQL's `timestamptz`, microseconds since
/// 2000-01-01 UTC, is read as such ([`postgres_timestamptz`]).
impl<'r> HotValue<'r> for Stamp<'r> {
    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, sqlx::Error> {
        // `Stamp::stored` takes ASCII only, so the text needs no UTF-8 check.
        if let Some(text) = sqlite_text(row, index)
            && let Some(stamp) = Stamp::stored(text)
        {
            return Ok(stamp);
        }
        row.try_get(index).map(Stamp::Time)
    }

    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, sqlx::Error> {
        match postgres_timestamptz(row, index) {
            Some(time) => Ok(Stamp::Time(time)),
            None => row.try_get(index).map(Stamp::Time),
        }
    }
}

/// A PostgreSQL `timestamptz` that is not NULL: the microseconds since 2000-01-01 UTC, eight
/// bytes, big-endian. `None` also for one that chrono cannot hold (`infinity`, years past
/// 262,143), which sqlx's decoder then answers as it does (`postgres_values_decode_as_sqlx_does`).
fn postgres_timestamptz(row: &PgRow, index: usize) -> Option<DateTime<Utc>> {
    /// 2000-01-01 in microseconds since the Unix epoch.
    const POSTGRES_EPOCH: i64 = 946_684_800_000_000;
    let micros = postgres_i64(row, index, TIMESTAMPTZ)?;
    DateTime::from_timestamp_micros(micros.checked_add(POSTGRES_EPOCH)?)
}

/// A row of either backend.
pub trait HotRow {
    fn get<'r, T: HotValue<'r>>(&'r self, index: usize) -> Result<T, sqlx::Error>;
}

impl HotRow for SqliteRow {
    fn get<'r, T: HotValue<'r>>(&'r self, index: usize) -> Result<T, sqlx::Error> {
        T::sqlite(self, index)
    }
}

impl HotRow for PgRow {
    fn get<'r, T: HotValue<'r>>(&'r self, index: usize) -> Result<T, sqlx::Error> {
        T::postgres(self, index)
    }
}

/// Reads a row's columns in select-list order.
pub struct Columns<'r, R> {
    row: &'r R,
    next: usize,
}

impl<'r, R: HotRow> Columns<'r, R> {
    pub fn new(row: &'r R) -> Self {
        Self { row, next: 0 }
    }

    pub fn read<T: HotValue<'r>>(&mut self) -> Result<T, sqlx::Error> {
        let value = self.row.get(self.next);
        self.next += 1;
        value
    }
}

/// What a hot read decodes a row into, column by column in select-list order; `'r` is the
/// row's borrow, for values that keep it.
pub trait FromRow<'r>: Sized {
    fn read<R: HotRow>(cols: &mut Columns<'r, R>) -> Result<Self, sqlx::Error>;
}

/// A single-column row.
impl<'r, T: HotValue<'r>> FromRow<'r> for T {
    fn read<R: HotRow>(cols: &mut Columns<'r, R>) -> Result<Self, sqlx::Error> {
        cols.read()
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use sea_orm::sqlx::postgres::PgRow;
    use sea_orm::sqlx::{self, Executor, PgPool, Row, SqlitePool};

    use super::{HotValue, Stamp, postgres_timestamptz};

    /// Text read through a real SQLite row as a borrowed `&str` and as a `String`: ASCII takes
    /// the fast path, and anything else (other characters, invalid UTF-8, an empty text, a NULL
    /// with and without a declared type, a number, a blob) answers what sqlx's own decoder
    /// answers.
    #[tokio::test]
    async fn text_decodes_as_sqlx_does() {
        let pool = SqlitePool::connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE t (v TEXT)")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO t VALUES (NULL), ('typed'), (7)")
            .execute(&pool)
            .await
            .unwrap();
        for sql in [
            "SELECT 'submitted'",
            "SELECT 'a cover letter of more than a word, with \"quotes\" and ~ at the end~'",
            "SELECT ''",
            "SELECT 'Zoë'",
            "SELECT 'Ada Lovelace, née Byron'",
            "SELECT '日本語'",
            "SELECT char(127)",
            "SELECT char(128)",
            "SELECT CAST(X'c328' AS TEXT)",
            "SELECT CAST(X'6869' AS TEXT)",
            "SELECT NULL",
            "SELECT 42",
            "SELECT 4.5",
            "SELECT X'6869'",
            "SELECT X'c328'",
            "SELECT CAST('plain' AS BLOB)",
            "SELECT v FROM t ORDER BY rowid",
        ] {
            for row in &sqlx::query(sql).fetch_all(&pool).await.unwrap() {
                let ours = <&str as HotValue>::sqlite(row, 0).map_err(|e| e.to_string());
                let sqlx = row.try_get::<&str, _>(0).map_err(|e| e.to_string());
                assert_eq!(ours, sqlx, "{sql}");
                let ours = <String as HotValue>::sqlite(row, 0).map_err(|e| e.to_string());
                let sqlx = row.try_get::<String, _>(0).map_err(|e| e.to_string());
                assert_eq!(ours, sqlx, "String of {sql}");
            }
        }
    }

    /// Any text, stored layouts with other digits included, and any other storage class, read
    /// through a real SQLite row: a `Stamp` answers the JSON of sqlx's own `DateTime<Utc>`
    /// decode, or fails as it does.
    #[tokio::test]
    async fn other_text_decodes_as_sqlx_does() {
        let pool = SqlitePool::connect("sqlite::memory:").await.unwrap();
        let mut rows = Vec::new();
        for text in [
            "2026-11-24T09:00:00.123456+00:00", // the stored layout itself
            "2026-11-24T09:00:00.123456789+00:00",
            "2026-11-24T09:00:00.120000+00:00", // stored layout, but not the response's digits
            "2026-11-24T09:00:00Z",
            "2026-11-24T09:00:00.5+00:00",
            "2026-11-24T09:00:00.1234+00:00",
            "2026-11-24T10:00:00+01:00",
            "2026-11-24 09:00:00",
            "2026-11-24 09:00:00.123",
            "2026-06-30T23:59:60+00:00",
            "2026-06-30T23:59:60.5+00:00",
            "2026-02-30T09:00:00+00:00",
            "2026-11-24T24:00:00+00:00",
            "2026-11-24X09:00:00+00:00",
            "+2026-11-24T09:00:00+00:00",
            "2026-11-24T09:00:00+00:00 ",
            "2026-1a-24T09:00:00+00:00",
            "yesterday",
            "",
        ] {
            let row = sqlx::query("SELECT ?").bind(text).fetch_one(&pool);
            rows.push((text, row.await.unwrap()));
        }
        // Other storage classes, too: sqlx reads integers as Unix seconds, refuses a blob
        // (even one holding the stored layout) and a NULL.
        for sql in [
            "SELECT 1795519463",
            "SELECT CAST('2026-11-24T09:00:00+00:00' AS BLOB)",
            "SELECT NULL",
        ] {
            rows.push((sql, sqlx::query(sql).fetch_one(&pool).await.unwrap()));
        }
        for (what, row) in &rows {
            let sqlx = row
                .try_get::<DateTime<Utc>, _>(0)
                .map(|time| serde_json::to_string(&time).unwrap())
                .map_err(|e| e.to_string());
            let stamp = Stamp::sqlite(row, 0)
                .map(|stamp| serde_json::to_string(&stamp).unwrap())
                .map_err(|e| e.to_string());
            assert_eq!(stamp, sqlx, "{what:?}");
        }
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

    /// Values of PostgreSQL's types read through real rows, in the binary format of prepared
    /// statements and the text format of simple queries: every hot type answers what sqlx's
    /// own decoder answers, value or error, whether it takes the fast path (`bigint`, ASCII
    /// `text` and `varchar`, `timestamptz`) or not (other text, other types, NULLs).
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
            "'plain'::varchar",
            "'padded'::char(10)",
            "'pg_catalog'::name",
            "NULL::text",
            "NULL::varchar",
            "42::bigint",
            "0::bigint",
            "12345678::bigint", // eight bytes in the text format, too
            "(-9223372036854775807 - 1)::bigint",
            "9223372036854775807::bigint",
            "NULL::bigint",
            "42::integer",
            "42::smallint",
            "42::numeric",
            "'2026-11-25 06:00:00.123456+00'::timestamptz",
            "'2026-11-25 07:00:00+01'::timestamptz",
            "'2000-01-01 00:00:00+00'::timestamptz",
            "'1999-12-31 23:59:59.999999+00'::timestamptz",
            "'1970-01-01 00:00:00+00'::timestamptz",
            "'0001-01-01 00:00:00+00'::timestamptz",
            "'4713-01-01 00:00:00+00 BC'::timestamptz",
            "'262142-12-31 23:59:59.999999+00'::timestamptz",
            "NULL::timestamptz",
            "'2026-11-25 06:00:00'::timestamp",
            "'2026-11-25'::date",
            "true",
        ];
        let mut rows = Vec::new();
        for value in values {
            let sql = format!("SELECT {value}");
            // Prepared (binary format), and as a simple query (text format).
            rows.push((
                value,
                sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                    .fetch_one(&pool)
                    .await
                    .unwrap(),
            ));
            rows.push((
                value,
                pool.fetch_one(sqlx::raw_sql(sqlx::AssertSqlSafe(sql)))
                    .await
                    .unwrap(),
            ));
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
                read::<Stamp>(row),
                sqlx_reads::<DateTime<Utc>>(row),
                "timestamp of {value}"
            );
        }
        // The fast paths are taken where they should be: a prepared statement's ASCII text,
        // bigint and timestamptz (and not for the same values as a simple query's text).
        let taken = |value: &str, binary: bool| {
            rows.iter()
                .filter(|(v, _)| *v == value)
                .map(|(_, row)| {
                    [
                        super::postgres_ascii(row, 0).is_some(),
                        super::postgres_i64(row, 0, super::INT8).is_some(),
                        postgres_timestamptz(row, 0).is_some(),
                    ]
                })
                .nth(usize::from(!binary))
                .unwrap()
        };
        assert_eq!(taken("'submitted'::text", true), [true, false, false]);
        assert_eq!(taken("'plain'::varchar", true), [true, false, false]);
        assert_eq!(taken("'Zoë'::text", true), [false; 3]);
        assert_eq!(taken("42::bigint", true), [false, true, false]);
        assert_eq!(
            taken("'2000-01-01 00:00:00+00'::timestamptz", true),
            [false, false, true]
        );
        for value in [
            "'plain'::varchar",
            "42::bigint",
            "'2000-01-01 00:00:00+00'::timestamptz",
        ] {
            assert_eq!(taken(value, false), [false; 3], "{value} as text");
        }
        // Timestamps that chrono cannot hold are left to sqlx's decoder, whatever it does.
        for value in ["'infinity'", "'-infinity'", "'294276-12-31 00:00:00+00'"] {
            let sql = format!("SELECT {value}::timestamptz");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .fetch_one(&pool)
                .await
                .unwrap();
            assert_eq!(postgres_timestamptz(&row, 0), None, "{value}");
        }
    }
}
