//! Structured jobs (CONTRACT §15): a lifecycle `status` in place of `published` (a published job
//! becomes `open`, with `published_at` its creation time), the place, the employment and
//! workplace types, the salary range, `valid_through`, and `moderated_at` (the team archived it).

use sea_orm::ConnectionTrait;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum CareersJobs {
    Table,
    Status,
    Published,
    Department,
    EmploymentType,
    WorkplaceType,
    CountryCode,
    Region,
    Locality,
    SalaryMin,
    SalaryMax,
    SalaryCurrency,
    SalaryInterval,
    ValidThrough,
    PublishedAt,
    ModeratedAt,
}

/// The new columns, one statement each (SQLite alters one column per statement).
fn columns() -> Vec<ColumnDef> {
    vec![
        string(CareersJobs::Status).default("draft").to_owned(),
        string_null(CareersJobs::Department),
        string_null(CareersJobs::EmploymentType),
        string(CareersJobs::WorkplaceType)
            .default("on_site")
            .to_owned(),
        string_null(CareersJobs::CountryCode),
        string_null(CareersJobs::Region),
        string_null(CareersJobs::Locality),
        big_integer_null(CareersJobs::SalaryMin),
        big_integer_null(CareersJobs::SalaryMax),
        string_null(CareersJobs::SalaryCurrency),
        string_null(CareersJobs::SalaryInterval),
        timestamp_with_time_zone_null(CareersJobs::ValidThrough),
        timestamp_with_time_zone_null(CareersJobs::PublishedAt),
        timestamp_with_time_zone_null(CareersJobs::ModeratedAt),
    ]
}

async fn alter(manager: &SchemaManager<'_>, change: TableAlterStatement) -> Result<(), DbErr> {
    manager.alter_table(change).await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// In one transaction on SQLite too, so that a failure leaves the table as it was.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in columns() {
            let mut change = Table::alter();
            change.table(CareersJobs::Table).add_column(column);
            alter(manager, change).await?;
        }
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE careers_jobs SET status = 'open', published_at = created_at \
                 WHERE published = TRUE",
            )
            .await?;
        let mut change = Table::alter();
        change
            .table(CareersJobs::Table)
            .drop_column(CareersJobs::Published);
        alter(manager, change).await?;
        // The marketplace's newest-first walk over open jobs.
        manager
            .create_index(
                Index::create()
                    .name("careers_jobs_status_published_at_id")
                    .table(CareersJobs::Table)
                    .col(CareersJobs::Status)
                    .col(CareersJobs::PublishedAt)
                    .col(Alias::new("id"))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("careers_jobs_status_published_at_id")
                    .table(CareersJobs::Table)
                    .to_owned(),
            )
            .await?;
        let mut change = Table::alter();
        change
            .table(CareersJobs::Table)
            .add_column(boolean(CareersJobs::Published).default(false));
        alter(manager, change).await?;
        manager
            .get_connection()
            .execute_unprepared("UPDATE careers_jobs SET published = (status = 'open')")
            .await?;
        for column in columns() {
            let name = column.get_column_name();
            let mut change = Table::alter();
            change
                .table(CareersJobs::Table)
                .drop_column(Alias::new(name));
            alter(manager, change).await?;
        }
        Ok(())
    }
}
