//! The admins' second factor (CONTRACT §11): the TOTP secret (encrypted), when it was confirmed
//! and the last step used, on the admin's row, so that the team area's extractor reads them
//! with the admin; the recovery codes by their SHA-256 in a table of their own.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum IdentitiesAdmins {
    Table,
    Id,
    TotpSecret,
    TotpConfirmedAt,
    TotpLastStep,
}

#[derive(DeriveIden)]
enum IdentitiesAdminRecoveryCodes {
    Table,
    Id,
    AdminId,
    CodeHash,
    UsedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite adds one at a time.
        for column in [
            string_null(IdentitiesAdmins::TotpSecret),
            timestamp_with_time_zone_null(IdentitiesAdmins::TotpConfirmedAt),
            big_integer(IdentitiesAdmins::TotpLastStep)
                .default(0)
                .to_owned(),
        ] {
            let mut column = column;
            manager
                .alter_table(
                    Table::alter()
                        .table(IdentitiesAdmins::Table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(IdentitiesAdminRecoveryCodes::Table)
                    .col(big_pk_auto(IdentitiesAdminRecoveryCodes::Id))
                    .col(big_integer(IdentitiesAdminRecoveryCodes::AdminId))
                    .col(string(IdentitiesAdminRecoveryCodes::CodeHash))
                    .col(timestamp_with_time_zone_null(
                        IdentitiesAdminRecoveryCodes::UsedAt,
                    ))
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                IdentitiesAdminRecoveryCodes::Table,
                                IdentitiesAdminRecoveryCodes::AdminId,
                            )
                            .to(IdentitiesAdmins::Table, IdentitiesAdmins::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("identities_admin_recovery_codes_admin_id")
                    .table(IdentitiesAdminRecoveryCodes::Table)
                    .col(IdentitiesAdminRecoveryCodes::AdminId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(
                Table::drop()
                    .table(IdentitiesAdminRecoveryCodes::Table)
                    .to_owned(),
            )
            .await?;
        for column in [
            IdentitiesAdmins::TotpLastStep,
            IdentitiesAdmins::TotpConfirmedAt,
            IdentitiesAdmins::TotpSecret,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(IdentitiesAdmins::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
