//! One data layer for SQLite (embedded default) and PostgreSQL.

mod error;
mod hot;
pub mod migrations;

use std::time::Duration;

use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DbErr, EntityTrait, QuerySelect, Select,
};
use sea_orm_migration::MigratorTrait;

pub use crate::hot_row;
pub use error::{DataError, foreign_key_violation, unique_violation};
pub use hot::{Columns, Db, DecodeError, FromRow, HotRow, HotValue, Rows};
pub use migrations::Migrator;

/// Opens the database of `url`. SQLite gets foreign keys, WAL and a busy timeout, and its file
/// (and folder) is created on first start. `schema` selects a PostgreSQL schema.
pub async fn connect(url: &str, schema: Option<&str>) -> Result<DatabaseConnection, DbErr> {
    Database::connect(options(url, schema)?).await
}

/// A pool of at most `max` connections of its own for a background worker, opened from the
/// worker's thread: the connections' work then runs there (SQLite's connection threads are
/// started by it and inherit its scheduling class; PostgreSQL's answers are read by its
/// runtime), and no request waits on a connection the worker's thread answers.
///
/// On PostgreSQL its sessions plan without bitmap scans: the worker reads in an index's order
/// and writes by primary key, and a burst of new rows, not yet in the table's statistics, made
/// the planner scan every pending row of the due index for each of its statements (a bitmap
/// scan, which also leaves the dead index entries of updated rows in place; DECISIONS 142).
pub async fn connect_worker(
    url: &str,
    schema: Option<&str>,
    max: u32,
) -> Result<DatabaseConnection, DbErr> {
    let mut options = options(url, schema)?;
    options
        .max_connections(max)
        .min_connections(0)
        .map_sqlx_postgres_opts(|o| o.options([("enable_bitmapscan", "off")]));
    Database::connect(options).await
}

/// The options of [`connect`].
fn options(url: &str, schema: Option<&str>) -> Result<ConnectOptions, DbErr> {
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .acquire_timeout(Duration::from_secs(3))
        .connect_timeout(Duration::from_secs(3))
        .sqlx_logging(false);
    if url.starts_with("sqlite:") {
        if let Some(dir) = sqlite_parent_dir(url) {
            std::fs::create_dir_all(dir)
                .map_err(|e| DbErr::Custom(format!("cannot create the SQLite folder: {e}")))?;
        }
        options
            .max_connections(8)
            // No liveness ping before each statement: an embedded file connection cannot be
            // dropped by a server, and the ping is a thread hand-off per statement.
            .test_before_acquire(false)
            .map_sqlx_sqlite_opts(|o| {
                o.create_if_missing(true)
                    .foreign_keys(true)
                    .journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                    .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(5))
            });
    } else {
        options
            .max_connections(16)
            // A liveness ping only for a connection that has sat idle for a second, not before
            // every statement: each ping is a round trip to the server, and sqlx already pings
            // every connection it takes back. A connection cut while busy fails one statement
            // (503) and is dropped on release; the ones idle through an outage are tested.
            .test_before_acquire_if_idle_for(Duration::from_secs(1));
        if let Some(schema) = schema {
            options.set_schema_search_path(schema.to_owned());
        }
    }
    Ok(options)
}

/// A transaction that will write: on SQLite it takes the write lock at `BEGIN IMMEDIATE` (waiting
/// up to the busy timeout for another writer), so that its reads cannot be invalidated by a
/// concurrent commit before its first write, which a deferred transaction reports as
/// `SQLITE_BUSY_SNAPSHOT` without waiting. PostgreSQL ignores the SQLite mode.
pub async fn write_transaction(
    db: &DatabaseConnection,
) -> Result<sea_orm::DatabaseTransaction, DbErr> {
    use sea_orm::TransactionTrait;
    db.begin_with_options(sea_orm::TransactionOptions {
        sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
        ..Default::default()
    })
    .await
}

/// The `?q=` of the team's lists: a row is kept when any of `columns` contains `q` (trimmed),
/// case-insensitively, `%` and `_` taken literally; `None` for a blank or missing `q`.
pub fn contains_any(
    q: Option<&str>,
    columns: impl IntoIterator<Item = sea_orm::sea_query::Expr>,
) -> Option<sea_orm::Condition> {
    use sea_orm::sea_query::{Expr, ExprTrait, Func, LikeExpr};
    let q = q.map(str::trim).filter(|q| !q.is_empty())?;
    let pattern = format!("%{}%", crate::forms::escape_like(&q.to_lowercase()));
    Some(
        columns
            .into_iter()
            .fold(sea_orm::Condition::any(), |any, column| {
                any.add(
                    Expr::expr(Func::lower(column))
                        .like(LikeExpr::new(pattern.clone()).escape('\\')),
                )
            }),
    )
}

/// Page `page` (from 1) of `query`, `per_page` rows long.
pub fn page_of<E: EntityTrait>(query: Select<E>, page: u64, per_page: u64) -> Select<E> {
    query.offset((page - 1) * per_page).limit(per_page)
}

pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    Migrator::up(db, None).await
}

/// Connects, applies pending migrations, and hands out a pool opened after them. Connections
/// that ran the migrations may keep statements prepared against the old schema (sqlx caches a
/// statement's columns: SQLite's `RETURNING *` then misses a column added since), so that pool
/// is closed and a fresh one returned (DECISIONS 101). The server and every CLI command that
/// writes start here.
pub async fn connect_migrated(
    url: &str,
    schema: Option<&str>,
) -> Result<DatabaseConnection, DbErr> {
    let db = connect(url, schema).await?;
    migrate(&db).await?;
    db.close().await?;
    connect(url, schema).await
}

fn sqlite_parent_dir(url: &str) -> Option<&std::path::Path> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = path.split('?').next()?;
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    std::path::Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
}

#[cfg(test)]
mod tests {
    /// The build setting of .cargo/config.toml (DECISIONS 54) reaches the SQLite that sqlx
    /// and rusqlite link.
    #[test]
    fn sqlite_keeps_no_memory_statistics() {
        let connection = rusqlite::Connection::open_in_memory().unwrap();
        let options: Vec<String> = connection
            .prepare("SELECT compile_options FROM pragma_compile_options")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "{options:?}"
        );
    }
}
