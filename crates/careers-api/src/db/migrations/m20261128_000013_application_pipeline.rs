//! An application in the hiring pipeline (CONTRACT §16): its stage (the job's first at
//! creation; a stage that holds an application cannot be deleted), `rejection_reason`,
//! `status_changed_at` and `lock_version`; the status `submitted` becomes `active`. Existing
//! applications are put in their job's first stage, changed when they were created.
//!
//! Both backends add the columns in place (SQLite allows a new column with a foreign key when
//! its default is NULL). SQLite cannot drop a column a foreign key uses, so its `down` rebuilds
//! the table as migration 3 left it (SQLite's documented procedure, as there).

use sea_orm_migration::prelude::*;

use super::run;

#[derive(DeriveMigrationName)]
pub struct Migration;

const SQLITE_COLUMNS: &[&str] = &[
    "ALTER TABLE careers_job_applications ADD COLUMN careers_job_stage_id integer NULL \
     REFERENCES careers_job_stages (id) ON DELETE RESTRICT",
    "ALTER TABLE careers_job_applications ADD COLUMN rejection_reason varchar NULL",
    // Every row gets its value below; the default only lets SQLite add a NOT NULL column.
    "ALTER TABLE careers_job_applications ADD COLUMN status_changed_at \
     timestamp_with_timezone_text NOT NULL DEFAULT '1970-01-01T00:00:00+00:00'",
    "ALTER TABLE careers_job_applications ADD COLUMN lock_version integer NOT NULL DEFAULT 0",
];

const POSTGRES_COLUMNS: &[&str] = &[
    "ALTER TABLE careers_job_applications ADD COLUMN careers_job_stage_id bigint NULL \
     REFERENCES careers_job_stages (id) ON DELETE RESTRICT",
    "ALTER TABLE careers_job_applications ADD COLUMN rejection_reason varchar NULL",
    "ALTER TABLE careers_job_applications ADD COLUMN status_changed_at timestamptz NULL",
    "ALTER TABLE careers_job_applications ADD COLUMN lock_version bigint NOT NULL DEFAULT 0",
];

const FILL: &[&str] = &[
    "UPDATE careers_job_applications SET status = 'active' WHERE status = 'submitted'",
    "UPDATE careers_job_applications SET status_changed_at = created_at",
    "UPDATE careers_job_applications SET careers_job_stage_id = (SELECT s.id \
     FROM careers_job_stages s WHERE s.careers_job_id = careers_job_applications.careers_job_id \
     ORDER BY s.position, s.id LIMIT 1)",
    // The stage's applications: the list's filter and the foreign key's check on a delete.
    "CREATE INDEX careers_job_applications_careers_job_stage_id \
     ON careers_job_applications (careers_job_stage_id)",
];

const POSTGRES_DOWN: &[&str] = &[
    "DROP INDEX careers_job_applications_careers_job_stage_id",
    "ALTER TABLE careers_job_applications DROP COLUMN careers_job_stage_id",
    "ALTER TABLE careers_job_applications DROP COLUMN rejection_reason",
    "ALTER TABLE careers_job_applications DROP COLUMN status_changed_at",
    "ALTER TABLE careers_job_applications DROP COLUMN lock_version",
    "UPDATE careers_job_applications SET status = 'submitted' WHERE status = 'active'",
];

const SQLITE_DOWN: &[&str] = &[
    "CREATE TABLE \"careers_job_applications_old\" ( \"id\" integer NOT NULL PRIMARY KEY \
     AUTOINCREMENT, \"careers_job_id\" integer NOT NULL, \"company_id\" integer NOT NULL, \
     \"careers_user_profile_id\" integer NOT NULL, \"status\" varchar NOT NULL, \
     \"cover_letter\" text NOT NULL, \"created_at\" timestamp_with_timezone_text NOT NULL, \
     \"updated_at\" timestamp_with_timezone_text NOT NULL, \
     FOREIGN KEY (\"careers_job_id\", \"company_id\") REFERENCES \"careers_jobs\" (\"id\", \
     \"company_id\") ON DELETE RESTRICT ON UPDATE CASCADE, \
     FOREIGN KEY (\"careers_user_profile_id\") REFERENCES \"careers_user_profiles\" (\"id\") \
     ON DELETE CASCADE )",
    "INSERT INTO careers_job_applications_old (id, careers_job_id, company_id, \
     careers_user_profile_id, status, cover_letter, created_at, updated_at) \
     SELECT id, careers_job_id, company_id, careers_user_profile_id, \
     CASE status WHEN 'active' THEN 'submitted' ELSE status END, cover_letter, created_at, \
     updated_at FROM careers_job_applications",
    "DELETE FROM sqlite_sequence WHERE name = 'careers_job_applications_old'",
    "INSERT INTO sqlite_sequence (name, seq) SELECT 'careers_job_applications_old', seq \
     FROM sqlite_sequence WHERE name = 'careers_job_applications'",
    "DROP TABLE careers_job_applications",
    "ALTER TABLE careers_job_applications_old RENAME TO careers_job_applications",
    "CREATE UNIQUE INDEX careers_job_applications_job_profile \
     ON careers_job_applications (careers_job_id, careers_user_profile_id)",
    "CREATE INDEX careers_job_applications_profile_id \
     ON careers_job_applications (careers_user_profile_id)",
    "CREATE INDEX careers_job_applications_company_id \
     ON careers_job_applications (company_id, id)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        match manager.get_database_backend() {
            sea_orm::DbBackend::Postgres => {
                run(manager, POSTGRES_COLUMNS).await?;
                run(manager, FILL).await?;
                run(
                    manager,
                    &["ALTER TABLE careers_job_applications \
                       ALTER COLUMN status_changed_at SET NOT NULL"],
                )
                .await
            }
            _ => {
                run(manager, SQLITE_COLUMNS).await?;
                run(manager, FILL).await
            }
        }
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        match manager.get_database_backend() {
            sea_orm::DbBackend::Postgres => run(manager, POSTGRES_DOWN).await,
            _ => run(manager, SQLITE_DOWN).await,
        }
    }
}
