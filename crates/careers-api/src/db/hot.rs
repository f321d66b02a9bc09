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

use sea_orm::sqlx::postgres::PgRow;
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

/// Values decoded by sqlx's own decoders, on either backend.
macro_rules! decoded_by_sqlx {
    ($($ty:ty),*) => {$(
        impl<'r> HotValue<'r> for $ty {
            fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, sqlx::Error> {
                row.try_get(index)
            }

            fn postgres(row: &'r PgRow, index: usize) -> Result<Self, sqlx::Error> {
                row.try_get(index)
            }
        }
    )*};
}

decoded_by_sqlx!(i64, Option<i64>, String);

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

/// A SQLite text value that is ASCII, which is then UTF-8 as it is: sqlx validates every text
/// with `str::from_utf8`, about 86 instructions for each of the list's short strings, against a
/// plain test of each byte (docs/PERFORMANCE.md, session 15). Any other value, non-ASCII text
/// included, goes through sqlx's own decoder (`text_decodes_as_sqlx_does`).
fn sqlite_ascii(row: &SqliteRow, index: usize) -> Option<&str> {
    let bytes = sqlite_text(row, index)?;
    // SAFETY: ASCII bytes are valid UTF-8.
    bytes
        .is_ascii()
        .then(|| unsafe { std::str::from_utf8_unchecked(bytes) })
}

impl<'r> HotValue<'r> for &'r str {
    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, sqlx::Error> {
        match sqlite_ascii(row, index) {
            Some(text) => Ok(text),
            None => row.try_get(index),
        }
    }

    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, sqlx::Error> {
        row.try_get(index)
    }
}

/// A timestamp column that the response writes. SQLite keeps sqlx's `DateTime<Utc>` as the text
/// sqlx writes (`2026-11-24T09:00:00.123456789+00:00`), which is the response's text but for its
/// offset: that text is taken as it is ([`Stamp::stored`]), neither parsed nor formatted again.
/// Any other value goes through sqlx's own decoder (chrono's RFC 3339 parser for text), as do
/// PostgreSQL's binary timestamps (`other_text_decodes_as_sqlx_does`).
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
        row.try_get(index).map(Stamp::Time)
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
    use chrono::{DateTime, Utc};
    use sea_orm::sqlx::{self, Row, SqlitePool};

    use super::{HotValue, Stamp};

    /// Text read through a real SQLite row as a borrowed `&str`: ASCII takes the fast path, and
    /// anything else (other characters, invalid UTF-8, an empty text, a NULL with and without a
    /// declared type, a number, a blob) answers what sqlx's own decoder answers.
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
}
