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
use sea_orm::sqlx::{self, Decode, Postgres, Row, Sqlite, Type};
use sea_orm::{DatabaseConnection, DbBackend, DbErr, RuntimeErr};

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

/// A value a hot read decodes: the same Rust type from either backend, by sqlx's decoders.
/// `'r` is the row's borrow, which a `&'r str` keeps.
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
