//! What happens around an application (CONTRACT §16–17): the employer's notes, the timeline of
//! its events, and the company's webhook endpoints with the deliveries of their events.
//!
//! A note's or an event's author is kept as a user id that a deleted user leaves null (the
//! record stays in the company's history); notes and events go with their application. A
//! delivery is a row per (event, endpoint), written in the transaction of the change, with its
//! body as it was at the commit; it goes with its endpoint.
//!
//! The board's columns (`?careers_job_id=&status=`, CONTRACT §16) get an index of their own,
//! (company, job, status, id), and a job's list one of (company, job, id): the page reads its
//! rows in id order from it and the total counts them there, instead of walking the company's
//! every application (SQLite, given only the first, sorted a job's every application).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::run;

const BOARD_INDEXES: [&str; 2] = [
    "CREATE INDEX careers_job_applications_board \
     ON careers_job_applications (company_id, careers_job_id, status, id)",
    "CREATE INDEX careers_job_applications_job \
     ON careers_job_applications (company_id, careers_job_id, id)",
];
const BOARD_INDEXES_DOWN: [&str; 2] = [
    "DROP INDEX careers_job_applications_board",
    "DROP INDEX careers_job_applications_job",
];

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum CareersJobApplications {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum IdentitiesUsers {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum OrgCompanies {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum CareersJobApplicationNotes {
    Table,
    Id,
    CareersJobApplicationId,
    IdentitiesUserId,
    Body,
    Rating,
    CreatedAt,
}

#[derive(DeriveIden)]
enum CareersJobApplicationEvents {
    Table,
    Id,
    CareersJobApplicationId,
    IdentitiesUserId,
    Kind,
    FromValue,
    ToValue,
    CreatedAt,
}

#[derive(DeriveIden)]
enum OrgWebhookEndpoints {
    Table,
    Id,
    CompanyId,
    Url,
    Events,
    Secret,
    PreviousSecret,
    PreviousSecretUntil,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum OrgWebhookDeliveries {
    Table,
    Id,
    OrgWebhookEndpointId,
    EventType,
    MessageId,
    Payload,
    Status,
    Attempts,
    LastStatusCode,
    NextAttemptAt,
    CreatedAt,
    UpdatedAt,
}

/// A foreign key from `table.column` to `identities_users`, null when the user is deleted.
fn author(table: impl IntoIden, column: impl IntoIden) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(table, column)
        .to(IdentitiesUsers::Table, IdentitiesUsers::Id)
        .on_delete(ForeignKeyAction::SetNull)
        .to_owned()
}

/// A foreign key from `table.column` to `to`'s `id`, deleted with it.
fn owned_by(
    table: impl IntoIden,
    column: impl IntoIden,
    to: impl IntoIden,
    to_id: impl IntoIden,
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(table, column)
        .to(to, to_id)
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use CareersJobApplicationEvents as Events;
        use CareersJobApplicationNotes as Notes;
        use OrgWebhookDeliveries as Deliveries;
        use OrgWebhookEndpoints as Endpoints;
        manager
            .create_table(
                Table::create()
                    .table(Notes::Table)
                    .col(big_pk_auto(Notes::Id))
                    .col(big_integer(Notes::CareersJobApplicationId))
                    .col(big_integer_null(Notes::IdentitiesUserId))
                    .col(text(Notes::Body))
                    .col(string_null(Notes::Rating))
                    .col(timestamp_with_time_zone(Notes::CreatedAt))
                    .foreign_key(&mut owned_by(
                        Notes::Table,
                        Notes::CareersJobApplicationId,
                        CareersJobApplications::Table,
                        CareersJobApplications::Id,
                    ))
                    .foreign_key(&mut author(Notes::Table, Notes::IdentitiesUserId))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Events::Table)
                    .col(big_pk_auto(Events::Id))
                    .col(big_integer(Events::CareersJobApplicationId))
                    .col(big_integer_null(Events::IdentitiesUserId))
                    .col(string(Events::Kind))
                    .col(string_null(Events::FromValue))
                    .col(string_null(Events::ToValue))
                    .col(timestamp_with_time_zone(Events::CreatedAt))
                    .foreign_key(&mut owned_by(
                        Events::Table,
                        Events::CareersJobApplicationId,
                        CareersJobApplications::Table,
                        CareersJobApplications::Id,
                    ))
                    .foreign_key(&mut author(Events::Table, Events::IdentitiesUserId))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Endpoints::Table)
                    .col(big_pk_auto(Endpoints::Id))
                    .col(big_integer(Endpoints::CompanyId))
                    .col(text(Endpoints::Url))
                    .col(string(Endpoints::Events))
                    .col(text(Endpoints::Secret))
                    .col(text_null(Endpoints::PreviousSecret))
                    .col(timestamp_with_time_zone_null(
                        Endpoints::PreviousSecretUntil,
                    ))
                    .col(timestamp_with_time_zone(Endpoints::CreatedAt))
                    .col(timestamp_with_time_zone(Endpoints::UpdatedAt))
                    .foreign_key(&mut owned_by(
                        Endpoints::Table,
                        Endpoints::CompanyId,
                        OrgCompanies::Table,
                        OrgCompanies::Id,
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Deliveries::Table)
                    .col(big_pk_auto(Deliveries::Id))
                    .col(big_integer(Deliveries::OrgWebhookEndpointId))
                    .col(string(Deliveries::EventType))
                    .col(string(Deliveries::MessageId))
                    .col(text(Deliveries::Payload))
                    .col(string(Deliveries::Status))
                    .col(integer(Deliveries::Attempts))
                    .col(integer_null(Deliveries::LastStatusCode))
                    .col(timestamp_with_time_zone(Deliveries::NextAttemptAt))
                    .col(timestamp_with_time_zone(Deliveries::CreatedAt))
                    .col(timestamp_with_time_zone(Deliveries::UpdatedAt))
                    .foreign_key(&mut owned_by(
                        Deliveries::Table,
                        Deliveries::OrgWebhookEndpointId,
                        Endpoints::Table,
                        Endpoints::Id,
                    ))
                    .to_owned(),
            )
            .await?;
        for (name, table, columns) in [
            (
                "careers_job_application_notes_application_id",
                Notes::Table.into_iden(),
                vec![
                    Notes::CareersJobApplicationId.into_iden(),
                    Notes::Id.into_iden(),
                ],
            ),
            (
                "careers_job_application_events_application_id",
                Events::Table.into_iden(),
                vec![
                    Events::CareersJobApplicationId.into_iden(),
                    Events::Id.into_iden(),
                ],
            ),
            (
                "org_webhook_endpoints_company_id",
                Endpoints::Table.into_iden(),
                vec![Endpoints::CompanyId.into_iden()],
            ),
            (
                "org_webhook_deliveries_endpoint_id",
                Deliveries::Table.into_iden(),
                vec![
                    Deliveries::OrgWebhookEndpointId.into_iden(),
                    Deliveries::Id.into_iden(),
                ],
            ),
            // The worker's due pending deliveries.
            (
                "org_webhook_deliveries_due",
                Deliveries::Table.into_iden(),
                vec![
                    Deliveries::Status.into_iden(),
                    Deliveries::NextAttemptAt.into_iden(),
                ],
            ),
        ] {
            let mut index = Index::create();
            index.name(name).table(table);
            for column in columns {
                index.col(column);
            }
            manager.create_index(index.to_owned()).await?;
        }
        run(manager, &BOARD_INDEXES).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        run(manager, &BOARD_INDEXES_DOWN).await?;
        for table in [
            OrgWebhookDeliveries::Table.into_iden(),
            OrgWebhookEndpoints::Table.into_iden(),
            CareersJobApplicationEvents::Table.into_iden(),
            CareersJobApplicationNotes::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
