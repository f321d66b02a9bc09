//! An enrolment waits in a column of its own (CONTRACT §11): `totp_secret` holds only the
//! confirmed factor, so that a replacement can be started while the old factor still holds.
//! Enrolments started before this migration move there.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum IdentitiesAdmins {
    Table,
    TotpSecret,
    TotpConfirmedAt,
    TotpPendingSecret,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(IdentitiesAdmins::Table)
                    .add_column(string_null(IdentitiesAdmins::TotpPendingSecret))
                    .to_owned(),
            )
            .await?;
        manager
            .exec_stmt(
                Query::update()
                    .table(IdentitiesAdmins::Table)
                    .value(
                        IdentitiesAdmins::TotpPendingSecret,
                        Expr::col(IdentitiesAdmins::TotpSecret),
                    )
                    .value(IdentitiesAdmins::TotpSecret, Option::<String>::None)
                    .and_where(Expr::col(IdentitiesAdmins::TotpConfirmedAt).is_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(IdentitiesAdmins::Table)
                    .drop_column(IdentitiesAdmins::TotpPendingSecret)
                    .to_owned(),
            )
            .await
    }
}
