//! One data layer for SQLite (embedded default) and PostgreSQL.

pub mod careers;
pub mod entities;
pub mod identities;
pub mod migrations;
pub mod org;

use std::time::Duration;

use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr};
use sea_orm_migration::MigratorTrait;

pub use migrations::Migrator;

/// Opens the database of `url`. SQLite gets foreign keys, WAL and a busy timeout, and its file
/// (and folder) is created on first start. `schema` selects a PostgreSQL schema.
pub async fn connect(url: &str, schema: Option<&str>) -> Result<DatabaseConnection, DbErr> {
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
        options.max_connections(8).map_sqlx_sqlite_opts(|o| {
            o.create_if_missing(true)
                .foreign_keys(true)
                .journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(5))
        });
    } else {
        options.max_connections(16);
        if let Some(schema) = schema {
            options.set_schema_search_path(schema.to_owned());
        }
    }
    Database::connect(options).await
}

pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    Migrator::up(db, None).await
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

/// Turns start-up database errors into a message for the operator.
pub trait DbErrorContext<T> {
    fn context_startup(self) -> Result<T, crate::app::StartupError>;
}

impl<T> DbErrorContext<T> for Result<T, DbErr> {
    fn context_startup(self) -> Result<T, crate::app::StartupError> {
        self.map_err(|e| crate::app::StartupError::Database(e.to_string()))
    }
}
