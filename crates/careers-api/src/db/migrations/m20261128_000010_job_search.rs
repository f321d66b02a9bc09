//! The marketplace's full-text search (CONTRACT §15): each job's folded text (title; description
//! and department; its company's name) in three columns the application writes, indexed by the
//! database's own full-text search: an FTS5 table kept by triggers on SQLite, a generated
//! `tsvector` with a GIN index on PostgreSQL.

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::forms::fold_text;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum CareersJobs {
    Table,
    SearchTitle,
    SearchBody,
    SearchCompany,
}

/// The folded text the application writes, one column a part.
const SEARCH_COLUMNS: [CareersJobs; 3] = [
    CareersJobs::SearchTitle,
    CareersJobs::SearchBody,
    CareersJobs::SearchCompany,
];

const SQLITE_UP: &[&str] = &[
    "CREATE VIRTUAL TABLE careers_jobs_fts USING fts5(search_title, search_body, search_company, \
     content='careers_jobs', content_rowid='id', tokenize='unicode61')",
    "CREATE TRIGGER careers_jobs_fts_insert AFTER INSERT ON careers_jobs BEGIN \
     INSERT INTO careers_jobs_fts (rowid, search_title, search_body, search_company) \
     VALUES (new.id, new.search_title, new.search_body, new.search_company); END",
    "CREATE TRIGGER careers_jobs_fts_delete AFTER DELETE ON careers_jobs BEGIN \
     INSERT INTO careers_jobs_fts (careers_jobs_fts, rowid, search_title, search_body, search_company) \
     VALUES ('delete', old.id, old.search_title, old.search_body, old.search_company); END",
    "CREATE TRIGGER careers_jobs_fts_update AFTER UPDATE OF search_title, search_body, search_company \
     ON careers_jobs BEGIN \
     INSERT INTO careers_jobs_fts (careers_jobs_fts, rowid, search_title, search_body, search_company) \
     VALUES ('delete', old.id, old.search_title, old.search_body, old.search_company); \
     INSERT INTO careers_jobs_fts (rowid, search_title, search_body, search_company) \
     VALUES (new.id, new.search_title, new.search_body, new.search_company); END",
    "INSERT INTO careers_jobs_fts (careers_jobs_fts) VALUES ('rebuild')",
];

const SQLITE_DOWN: &[&str] = &[
    "DROP TRIGGER careers_jobs_fts_insert",
    "DROP TRIGGER careers_jobs_fts_delete",
    "DROP TRIGGER careers_jobs_fts_update",
    "DROP TABLE careers_jobs_fts",
];

const POSTGRES_UP: &[&str] = &[
    "ALTER TABLE careers_jobs ADD COLUMN search_vector tsvector GENERATED ALWAYS AS \
     (setweight(to_tsvector('simple', search_title), 'A') || \
      setweight(to_tsvector('simple', search_body), 'B') || \
      setweight(to_tsvector('simple', search_company), 'C')) STORED",
    "CREATE INDEX careers_jobs_search_vector ON careers_jobs USING GIN (search_vector)",
];

const POSTGRES_DOWN: &[&str] = &[
    "DROP INDEX careers_jobs_search_vector",
    "ALTER TABLE careers_jobs DROP COLUMN search_vector",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// In one transaction on SQLite too, so that a failure leaves the table as it was.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in SEARCH_COLUMNS {
            manager
                .alter_table(
                    Table::alter()
                        .table(CareersJobs::Table)
                        .add_column(text(column).default(""))
                        .to_owned(),
                )
                .await?;
        }
        let db = manager.get_connection();
        let backend = db.get_database_backend();
        let jobs = db
            .query_all_raw(Statement::from_string(
                backend,
                "SELECT j.id, j.title, j.description, j.department, c.name FROM careers_jobs j \
                 INNER JOIN org_companies c ON c.id = j.company_id",
            ))
            .await?;
        for row in jobs {
            let id: i64 = row.try_get_by_index(0)?;
            let title: String = row.try_get_by_index(1)?;
            let description: String = row.try_get_by_index(2)?;
            let department: Option<String> = row.try_get_by_index(3)?;
            let company: String = row.try_get_by_index(4)?;
            let body = format!("{description} {}", department.unwrap_or_default());
            db.execute_raw(Statement::from_sql_and_values(
                backend,
                "UPDATE careers_jobs SET search_title = $1, search_body = $2, \
                 search_company = $3 WHERE id = $4",
                [
                    fold_text(&title).into(),
                    fold_text(&body).into(),
                    fold_text(&company).into(),
                    id.into(),
                ],
            ))
            .await?;
        }
        let statements = match backend {
            DbBackend::Postgres => POSTGRES_UP,
            _ => SQLITE_UP,
        };
        for statement in statements {
            db.execute_unprepared(statement).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let statements = match db.get_database_backend() {
            DbBackend::Postgres => POSTGRES_DOWN,
            _ => SQLITE_DOWN,
        };
        for statement in statements {
            db.execute_unprepared(statement).await?;
        }
        for column in SEARCH_COLUMNS {
            manager
                .alter_table(
                    Table::alter()
                        .table(CareersJobs::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
