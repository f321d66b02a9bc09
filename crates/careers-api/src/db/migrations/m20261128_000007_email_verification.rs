//! E-mail verification (CONTRACT §14): `email_verified_at` on the user, and the issued tokens
//! by their SHA-256 only, as the password resets keep theirs.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum IdentitiesUsers {
    Table,
    Id,
    EmailVerifiedAt,
}

#[derive(DeriveIden)]
enum IdentitiesEmailVerifications {
    Table,
    Id,
    UserId,
    TokenHash,
    CreatedAt,
    ExpiresAt,
    UsedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(IdentitiesUsers::Table)
                    .add_column(timestamp_with_time_zone_null(
                        IdentitiesUsers::EmailVerifiedAt,
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(IdentitiesEmailVerifications::Table)
                    .col(big_pk_auto(IdentitiesEmailVerifications::Id))
                    .col(big_integer(IdentitiesEmailVerifications::UserId))
                    .col(string_uniq(IdentitiesEmailVerifications::TokenHash))
                    .col(timestamp_with_time_zone(
                        IdentitiesEmailVerifications::CreatedAt,
                    ))
                    .col(timestamp_with_time_zone(
                        IdentitiesEmailVerifications::ExpiresAt,
                    ))
                    .col(timestamp_with_time_zone_null(
                        IdentitiesEmailVerifications::UsedAt,
                    ))
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                IdentitiesEmailVerifications::Table,
                                IdentitiesEmailVerifications::UserId,
                            )
                            .to(IdentitiesUsers::Table, IdentitiesUsers::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("identities_email_verifications_user_id")
                    .table(IdentitiesEmailVerifications::Table)
                    .col(IdentitiesEmailVerifications::UserId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(
                Table::drop()
                    .table(IdentitiesEmailVerifications::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(IdentitiesUsers::Table)
                    .drop_column(IdentitiesUsers::EmailVerifiedAt)
                    .to_owned(),
            )
            .await
    }
}
