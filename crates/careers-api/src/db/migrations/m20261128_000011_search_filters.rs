//! The search's filter columns beside the job's id in one narrow index on SQLite, which the
//! search reads in place of the job's row for each FTS5 match (`INDEXED BY`; the rows carry
//! the description twice, as written and folded, and the match set can be thousands of rows).
//! PostgreSQL reaches its rows from the GIN index's bitmap and needs nothing here.

use sea_orm::{ConnectionTrait, DbBackend};
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Every column the search's match set reads (`models::careers::search`), the id first.
const SQLITE_UP: &str = "CREATE INDEX careers_jobs_search_filters ON careers_jobs \
    (id, status, valid_through, published_at, company_id, workplace_type, employment_type, \
     country_code, salary_currency, salary_interval, salary_min, salary_max)";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Sqlite {
            db.execute_unprepared(SQLITE_UP).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Sqlite {
            db.execute_unprepared("DROP INDEX careers_jobs_search_filters")
                .await?;
        }
        Ok(())
    }
}
