//! The database handle, and the hot reads that run on its sqlx pool directly.
//!
//! Everything goes through SeaORM except the statements that run on every request of an area
//! or page the service is measured on: the session's user, the user check of a refresh, the
//! employer check, and the employer's application list and detail. Those are constant SQL, run on the same pool that SeaORM holds
//! (same connections, settings and PostgreSQL schema) without SeaORM's statement wrapper,
//! which cost about a tenth of an authenticated GET (docs/PERFORMANCE.md, session 4). Their
//! rows are decoded by position, written once for both backends ([`FromRow`]).

use std::ops::Deref;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use sea_orm::sqlx::postgres::PgRow;
use sea_orm::sqlx::sqlite::SqliteRow;
use sea_orm::sqlx::{self, Decode, Postgres, Row, Sqlite, Type, ValueRef};
use sea_orm::{DatabaseConnection, DbBackend, DbErr, RuntimeErr};

use crate::views::timestamp::{Stamp, StoredFields};

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
        on_pool!(self.orm, |pool| query(sql, binds)
            .fetch_all(pool)
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

impl<'r, T> HotValue<'r> for T
where
    T: Decode<'r, Sqlite> + Type<Sqlite> + Decode<'r, Postgres> + Type<Postgres>,
{
    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, sqlx::Error> {
        row.try_get(index)
    }

    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, sqlx::Error> {
        row.try_get(index)
    }
}

/// A timestamp column of a hot read. SQLite keeps sqlx's `DateTime<Utc>` as the text sqlx
/// writes (`2026-11-24T09:00:00.123456789+00:00`: RFC 3339 with a fraction of 0, 3, 6 or 9
/// digits and a zero offset); that layout is read by position, and any other text goes through
/// sqlx's own decoder, so the value is the same (`stored_layout_reads_as_sqlx_does`). sqlx's
/// decoder, chrono's general RFC 3339 parser, cost about 730 instructions a timestamp, and a
/// page of 25 applications has 50 (docs/PERFORMANCE.md, session 10). PostgreSQL's binary
/// timestamps go through sqlx.
pub struct Timestamp(pub DateTime<Utc>);

impl HotValue<'_> for Timestamp {
    fn sqlite(row: &SqliteRow, index: usize) -> Result<Self, sqlx::Error> {
        // A text value's bytes, read without validating them as UTF-8 (the layout is ASCII);
        // a blob or NULL is left to sqlx, which refuses it.
        let raw = row.try_get_raw(index)?;
        if <str as Type<Sqlite>>::compatible(&raw.type_info())
            && let Ok(text) = <&[u8] as Decode<Sqlite>>::decode(raw)
            && let Some(time) = stored_utc(text)
        {
            return Ok(Self(time));
        }
        row.try_get(index).map(Self)
    }

    fn postgres(row: &PgRow, index: usize) -> Result<Self, sqlx::Error> {
        row.try_get(index).map(Self)
    }
}

/// `text` in the layout sqlx writes a `DateTime<Utc>` in on SQLite, or `None` for anything
/// else (other layouts, offsets and leap seconds included), which sqlx's decoder then reads.
fn stored_utc(text: &[u8]) -> Option<DateTime<Utc>> {
    StoredFields::read(text)?.to_utc()
}

/// A timestamp column that the response writes: the stored text itself where it is already
/// the response's text but for its offset ([`Stamp::stored`]), so that it is neither parsed
/// nor formatted again; else the time, as [`Timestamp`] reads it.
impl<'r> HotValue<'r> for Stamp<'r> {
    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, sqlx::Error> {
        // A text value's bytes, read without validating them as UTF-8 (`Stamp::stored` takes
        // ASCII only); a blob or NULL is left to sqlx, which refuses it.
        let raw = row.try_get_raw(index)?;
        if <str as Type<Sqlite>>::compatible(&raw.type_info())
            && let Ok(text) = <&[u8] as Decode<Sqlite>>::decode(raw)
            && let Some(stamp) = Stamp::stored(text)
        {
            return Ok(stamp);
        }
        Timestamp::sqlite(row, index).map(|time| Stamp::Time(time.0))
    }

    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, sqlx::Error> {
        Timestamp::postgres(row, index).map(|time| Stamp::Time(time.0))
    }
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
    use chrono::{DateTime, SecondsFormat, Utc};
    use proptest::prelude::*;
    use sea_orm::sqlx::sqlite::SqliteRow;
    use sea_orm::sqlx::{self, Row, SqlitePool};

    use super::{HotValue, Stamp, Timestamp, stored_utc};

    proptest! {
        /// Every `DateTime<Utc>` that sqlx writes reads back by position, as sqlx reads it.
        #[test]
        fn stored_layout_reads_as_sqlx_does(
            seconds in -62_167_219_200i64..253_402_300_800, // years 0 to 9999
            nanos in prop_oneof![
                Just(0u32),
                (0u32..1000).prop_map(|ms| ms * 1_000_000),
                (0u32..1_000_000).prop_map(|us| us * 1_000),
                0u32..1_000_000_000,
            ],
        ) {
            let time = DateTime::<Utc>::from_timestamp(seconds, nanos).unwrap();
            // What sqlx's `Encode<Sqlite>` for `DateTime<Utc>` writes.
            let text = time.to_rfc3339_opts(SecondsFormat::AutoSi, false);
            prop_assert_eq!(stored_utc(text.as_bytes()), Some(time));
            let sqlx = DateTime::parse_from_rfc3339(&text).unwrap().to_utc();
            prop_assert_eq!(stored_utc(text.as_bytes()), Some(sqlx));
        }
    }

    /// What `Timestamp` and sqlx's own `DateTime<Utc>` decoder make of a row's one column;
    /// and that a `Stamp` read from it answers the JSON of sqlx's time, or fails as sqlx does.
    type Decoded = Result<DateTime<Utc>, String>;
    fn both_ways(row: &SqliteRow) -> (Decoded, Decoded) {
        let sqlx = row
            .try_get::<DateTime<Utc>, _>(0)
            .map_err(|e| e.to_string());
        let stamp = Stamp::sqlite(row, 0).map_err(|e| e.to_string());
        assert_eq!(
            stamp.map(|stamp| serde_json::to_string(&stamp).unwrap()),
            sqlx.clone()
                .map(|time| serde_json::to_string(&time).unwrap()),
        );
        (
            Timestamp::sqlite(row, 0)
                .map(|t| t.0)
                .map_err(|e| e.to_string()),
            sqlx,
        )
    }

    /// Any other text is left to sqlx's decoder, through a real SQLite row: the same value or
    /// the same refusal as sqlx's own `DateTime<Utc>` decode.
    #[tokio::test]
    async fn other_text_decodes_as_sqlx_does() {
        let pool = SqlitePool::connect("sqlite::memory:").await.unwrap();
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
            let row = sqlx::query("SELECT ?")
                .bind(text)
                .fetch_one(&pool)
                .await
                .unwrap();
            let (ours, sqlx) = both_ways(&row);
            assert_eq!(ours, sqlx, "{text:?}");
        }
        // Other storage classes, too: sqlx reads integers as Unix seconds, refuses a blob
        // (even one holding the stored layout) and a NULL.
        for sql in [
            "SELECT 1795519463",
            "SELECT CAST('2026-11-24T09:00:00+00:00' AS BLOB)",
            "SELECT NULL",
        ] {
            let row = sqlx::query(sql).fetch_one(&pool).await.unwrap();
            let (ours, sqlx) = both_ways(&row);
            assert_eq!(ours, sqlx, "{sql}");
        }
    }

    /// The layouts the fast path refuses, so that sqlx reads them: offsets other than zero,
    /// leap seconds, fractions of other lengths, impossible dates.
    #[test]
    fn the_fast_path_takes_only_the_stored_layout() {
        assert!(stored_utc(b"2026-11-24T09:00:00.123+00:00").is_some());
        assert!(stored_utc(b"2026-11-24T09:00:00+00:00").is_some());
        for text in [
            &b"2026-11-24T09:00:00Z"[..],
            b"2026-11-24T10:00:00+01:00",
            b"2026-11-24 09:00:00+00:00",
            b"2026-11-24T09:00:00.12+00:00",
            b"2026-06-30T23:59:60+00:00",
            b"2026-02-30T09:00:00+00:00",
            b"2026-11-24T09:00:00.12a+00:00",
            b"2026-11-24T09:00",
            // a byte out of place in each of the three words read
            b"2026/11-24T09:00:00+00:00",
            b"2026-11-2aT09:00:00+00:00",
            b"2026-11-24T09:00:0:+00:00",
            b"2026-11-24T09 00:00+00:00",
            b"\xb2026-11-24T09:00:00+00:00",
            b"2026-11-24T09:00:\xb00+00:00",
        ] {
            assert_eq!(stored_utc(text), None, "{}", text.escape_ascii());
        }
    }

    /// The stored layout's reader as it was before it read eight bytes at a time
    /// (docs/PERFORMANCE.md, session 14): the oracle of `reads_what_the_byte_reader_reads`.
    fn byte_reader(text: &[u8]) -> Option<DateTime<Utc>> {
        fn number(digits: &[u8]) -> Option<u32> {
            digits.iter().try_fold(0u32, |n, &d| {
                d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
            })
        }
        let (main, rest) = text.split_at_checked(19)?;
        let nanos = match rest.strip_suffix(b"+00:00")? {
            [] => 0,
            [b'.', fraction @ ..] if matches!(fraction.len(), 3 | 6 | 9) => {
                number(fraction)? * 10u32.pow(9 - fraction.len() as u32)
            }
            _ => return None,
        };
        if [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')]
            .iter()
            .any(|&(at, mark)| main[at] != mark)
        {
            return None;
        }
        let field = |from: usize, to: usize| number(&main[from..to]);
        chrono::NaiveDate::from_ymd_opt(field(0, 4)? as i32, field(5, 7)?, field(8, 10)?)?
            .and_hms_nano_opt(field(11, 13)?, field(14, 16)?, field(17, 19)?, nanos)
            .map(|time| time.and_utc())
    }

    proptest! {
        /// Any byte at any place of a stored timestamp: the same value or refusal as the byte
        /// reader's.
        #[test]
        fn reads_what_the_byte_reader_reads(
            seconds in -62_167_219_200i64..253_402_300_800,
            nanos in prop_oneof![
                Just(0u32),
                (1u32..1000).prop_map(|ms| ms * 1_000_000),
                (1u32..1_000_000).prop_map(|us| us * 1_000),
                0u32..1_000_000_000,
            ],
            at in 0usize..40,
            byte in any::<u8>(),
        ) {
            let time = DateTime::<Utc>::from_timestamp(seconds, nanos).unwrap();
            let mut text = time.to_rfc3339_opts(SecondsFormat::AutoSi, false).into_bytes();
            let at = at % text.len();
            text[at] = byte;
            prop_assert_eq!(stored_utc(&text), byte_reader(&text), "{}", text.escape_ascii());
        }
    }
}
