//! Migrations written out explicitly (not derived from entities), for SQLite and PostgreSQL.

mod m20261122_000001_identities;
mod m20261122_000002_domain;
mod m20261123_000003_application_company;
mod m20261126_000004_password_resets;
mod m20261126_000005_admin_totp;
mod m20261128_000006_totp_enrolment;
mod m20261128_000007_email_verification;
mod m20261128_000008_companies_members;
mod m20261128_000009_structured_jobs;
mod m20261128_000010_job_search;
mod m20261128_000011_search_filters;
mod m20261128_000012_job_stages;
mod m20261128_000013_application_pipeline;
mod m20261128_000014_pipeline_activity;
mod m20261128_000015_webhook_due_index;
mod m20261128_000016_webhook_due_by_endpoint;

use sea_orm_migration::prelude::*;

pub struct Migrator;

/// Runs `statements` in order on the migration's connection (its transaction, when it has one).
async fn run(manager: &SchemaManager<'_>, statements: &[impl AsRef<str>]) -> Result<(), DbErr> {
    let db = manager.get_connection();
    for sql in statements {
        db.execute_unprepared(sql.as_ref()).await?;
    }
    Ok(())
}

/// The `MigrationTrait` of a migration that runs the SQL statements of `$up` in order and,
/// undone, those of `$down`.
macro_rules! statements_migration {
    ($up:expr, $down:expr) => {
        #[async_trait::async_trait]
        impl MigrationTrait for Migration {
            async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
                super::run(manager, &$up).await
            }

            async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
                super::run(manager, &$down).await
            }
        }
    };
}
use statements_migration;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261122_000001_identities::Migration),
            Box::new(m20261122_000002_domain::Migration),
            Box::new(m20261123_000003_application_company::Migration),
            Box::new(m20261126_000004_password_resets::Migration),
            Box::new(m20261126_000005_admin_totp::Migration),
            Box::new(m20261128_000006_totp_enrolment::Migration),
            Box::new(m20261128_000007_email_verification::Migration),
            Box::new(m20261128_000008_companies_members::Migration),
            Box::new(m20261128_000009_structured_jobs::Migration),
            Box::new(m20261128_000010_job_search::Migration),
            Box::new(m20261128_000011_search_filters::Migration),
            Box::new(m20261128_000012_job_stages::Migration),
            Box::new(m20261128_000013_application_pipeline::Migration),
            Box::new(m20261128_000014_pipeline_activity::Migration),
            Box::new(m20261128_000015_webhook_due_index::Migration),
            Box::new(m20261128_000016_webhook_due_by_endpoint::Migration),
        ]
    }
}
