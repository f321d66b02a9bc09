//! A job's ordered hiring stages (CONTRACT §16): `careers_job_stages`, and the four default
//! stages for every job that exists (a new job gets them from the application). Names and
//! positions are unique within a job by the application's check under the job's row lock,
//! judged on a form's final state (two stages may swap names in one form), so no unique index
//! holds them: one would refuse the swap half-way.

use sea_orm::ConnectionTrait;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

/// The stages a job got when this migration was written (`job_stage::DEFAULT_STAGES` then): a
/// migration is history and keeps its own copy, which a later change of the default leaves as
/// it was.
const DEFAULT_STAGES: [&str; 4] = ["Applied", "Screening", "Interview", "Offer"];

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum CareersJobs {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum CareersJobStages {
    Table,
    Id,
    CareersJobId,
    Name,
    Position,
    CreatedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(CareersJobStages::Table)
                    .col(big_pk_auto(CareersJobStages::Id))
                    .col(big_integer(CareersJobStages::CareersJobId))
                    .col(string_len(CareersJobStages::Name, 60))
                    .col(integer(CareersJobStages::Position))
                    .col(timestamp_with_time_zone(CareersJobStages::CreatedAt))
                    .col(timestamp_with_time_zone(CareersJobStages::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(CareersJobStages::Table, CareersJobStages::CareersJobId)
                            .to(CareersJobs::Table, CareersJobs::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("careers_job_stages_careers_job_id_position")
                    .table(CareersJobStages::Table)
                    .col(CareersJobStages::CareersJobId)
                    .col(CareersJobStages::Position)
                    .to_owned(),
            )
            .await?;
        let db = manager.get_connection();
        for (position, name) in (1..).zip(DEFAULT_STAGES) {
            db.execute_unprepared(&format!(
                "INSERT INTO careers_job_stages (careers_job_id, name, position, created_at, \
                 updated_at) SELECT id, '{name}', {position}, created_at, created_at \
                 FROM careers_jobs"
            ))
            .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(CareersJobStages::Table).to_owned())
            .await
    }
}
