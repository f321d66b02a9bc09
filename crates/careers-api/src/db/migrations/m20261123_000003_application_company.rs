//! Each job application carries its job's company, so that an employer's applications are one
//! index range in id order: a page reads its own rows, not every application of the company
//! sorted (DECISIONS 52).
//!
//! `(careers_job_id, company_id)` references `careers_jobs (id, company_id)`, so the copy cannot
//! disagree with the job's company: an insert with another company fails, and a job moved to
//! another company carries its applications along (`ON UPDATE CASCADE`). Existing rows are
//! filled from their jobs.
//!
//! PostgreSQL alters the table in place. SQLite cannot add a foreign key to a table, so the table
//! is rebuilt (SQLite's documented procedure: create, copy, drop, rename, re-index), keeping its
//! `AUTOINCREMENT` counter. Nothing references job applications, so the rebuild breaks no key.

use sea_orm_migration::prelude::*;

use super::run;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The parent key of the composite foreign key (both backends need a unique index on it).
const JOBS_KEY: &str =
    "CREATE UNIQUE INDEX careers_jobs_id_company_id ON careers_jobs (id, company_id)";

/// An employer's applications in id order.
const BY_COMPANY: &str = "CREATE INDEX careers_job_applications_company_id \
                          ON careers_job_applications (company_id, id)";

const POSTGRES_UP: &[&str] = &[
    JOBS_KEY,
    "ALTER TABLE careers_job_applications ADD COLUMN company_id bigint",
    "UPDATE careers_job_applications a SET company_id = j.company_id \
     FROM careers_jobs j WHERE j.id = a.careers_job_id",
    "ALTER TABLE careers_job_applications ALTER COLUMN company_id SET NOT NULL",
    "ALTER TABLE careers_job_applications \
     ADD CONSTRAINT fk_careers_job_applications_job_company \
     FOREIGN KEY (careers_job_id, company_id) REFERENCES careers_jobs (id, company_id) \
     ON DELETE RESTRICT ON UPDATE CASCADE",
    BY_COMPANY,
];

const POSTGRES_DOWN: &[&str] = &[
    "ALTER TABLE careers_job_applications DROP COLUMN company_id",
    "DROP INDEX careers_jobs_id_company_id",
];

/// The table as migration 2 created it, under `name`, with `company_id` when `with_company`.
fn sqlite_table(name: &str, with_company: bool) -> String {
    let (company_column, job_key) = if with_company {
        (
            "\"company_id\" integer NOT NULL, ",
            "FOREIGN KEY (\"careers_job_id\", \"company_id\") \
             REFERENCES \"careers_jobs\" (\"id\", \"company_id\") \
             ON DELETE RESTRICT ON UPDATE CASCADE",
        )
    } else {
        (
            "",
            "FOREIGN KEY (\"careers_job_id\") REFERENCES \"careers_jobs\" (\"id\") \
             ON DELETE RESTRICT",
        )
    };
    format!(
        "CREATE TABLE \"{name}\" ( \"id\" integer NOT NULL PRIMARY KEY AUTOINCREMENT, \
         \"careers_job_id\" integer NOT NULL, {company_column}\
         \"careers_user_profile_id\" integer NOT NULL, \"status\" varchar NOT NULL, \
         \"cover_letter\" text NOT NULL, \
         \"created_at\" timestamp_with_timezone_text NOT NULL, \
         \"updated_at\" timestamp_with_timezone_text NOT NULL, \
         {job_key}, \
         FOREIGN KEY (\"careers_user_profile_id\") REFERENCES \"careers_user_profiles\" (\"id\") \
         ON DELETE CASCADE )"
    )
}

/// SQLite's rebuild of the table, with or without `company_id`.
fn sqlite_rebuild(with_company: bool) -> Vec<String> {
    const COLUMNS: &str = "id, careers_job_id, careers_user_profile_id, status, cover_letter, \
                           created_at, updated_at";
    let (columns, source) = if with_company {
        (
            format!("{COLUMNS}, company_id"),
            "SELECT a.id, a.careers_job_id, a.careers_user_profile_id, a.status, a.cover_letter, \
             a.created_at, a.updated_at, j.company_id FROM careers_job_applications a \
             INNER JOIN careers_jobs j ON j.id = a.careers_job_id",
        )
    } else {
        (
            COLUMNS.to_owned(),
            "SELECT id, careers_job_id, careers_user_profile_id, status, cover_letter, \
             created_at, updated_at FROM careers_job_applications",
        )
    };
    let mut statements = vec![
        sqlite_table("careers_job_applications_new", with_company),
        format!("INSERT INTO careers_job_applications_new ({columns}) {source}"),
        // The counter of ids ever handed out, not only of the ids that remain.
        "DELETE FROM sqlite_sequence WHERE name = 'careers_job_applications_new'".to_owned(),
        "INSERT INTO sqlite_sequence (name, seq) SELECT 'careers_job_applications_new', seq \
         FROM sqlite_sequence WHERE name = 'careers_job_applications'"
            .to_owned(),
        "DROP TABLE careers_job_applications".to_owned(),
        "ALTER TABLE careers_job_applications_new RENAME TO careers_job_applications".to_owned(),
        "CREATE UNIQUE INDEX careers_job_applications_job_profile \
         ON careers_job_applications (careers_job_id, careers_user_profile_id)"
            .to_owned(),
        "CREATE INDEX careers_job_applications_profile_id \
         ON careers_job_applications (careers_user_profile_id)"
            .to_owned(),
    ];
    if with_company {
        statements.insert(0, JOBS_KEY.to_owned());
        statements.push(BY_COMPANY.to_owned());
    } else {
        statements.push("DROP INDEX careers_jobs_id_company_id".to_owned());
    }
    statements
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// In one transaction on SQLite too (SeaORM's default there is none), so that a failed
    /// rebuild leaves the table as it was.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        match manager.get_database_backend() {
            sea_orm::DbBackend::Postgres => run(manager, POSTGRES_UP).await,
            _ => run(manager, &sqlite_rebuild(true)).await,
        }
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        match manager.get_database_backend() {
            sea_orm::DbBackend::Postgres => run(manager, POSTGRES_DOWN).await,
            _ => run(manager, &sqlite_rebuild(false)).await,
        }
    }
}
