//! Password resets (CONTRACT §10) and the mail outbox.
//!
//! - `identities_password_reset_requests`: a request as it arrived (the e-mail only), so that
//!   a request for an unknown address does exactly what one for a known address does; the mail
//!   worker resolves it.
//! - `identities_password_resets`: issued tokens, by their SHA-256 only.
//! - `mail_outbox`: messages to deliver, written in the transaction that makes their content;
//!   a message's body is cleared once delivered or given up.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum IdentitiesUsers {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum IdentitiesPasswordResetRequests {
    Table,
    Id,
    Email,
    RequestedAt,
}

#[derive(DeriveIden)]
enum IdentitiesPasswordResets {
    Table,
    Id,
    UserId,
    TokenHash,
    CreatedAt,
    ExpiresAt,
    UsedAt,
}

#[derive(DeriveIden)]
enum MailOutbox {
    Table,
    Id,
    Recipient,
    Subject,
    Body,
    CreatedAt,
    NotAfter,
    Attempts,
    NextAttemptAt,
    SentAt,
    DroppedAt,
    LastError,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(IdentitiesPasswordResetRequests::Table)
                    .col(big_pk_auto(IdentitiesPasswordResetRequests::Id))
                    .col(string(IdentitiesPasswordResetRequests::Email))
                    .col(timestamp_with_time_zone(
                        IdentitiesPasswordResetRequests::RequestedAt,
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(IdentitiesPasswordResets::Table)
                    .col(big_pk_auto(IdentitiesPasswordResets::Id))
                    .col(big_integer(IdentitiesPasswordResets::UserId))
                    .col(string_uniq(IdentitiesPasswordResets::TokenHash))
                    .col(timestamp_with_time_zone(
                        IdentitiesPasswordResets::CreatedAt,
                    ))
                    .col(timestamp_with_time_zone(
                        IdentitiesPasswordResets::ExpiresAt,
                    ))
                    .col(timestamp_with_time_zone_null(
                        IdentitiesPasswordResets::UsedAt,
                    ))
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                IdentitiesPasswordResets::Table,
                                IdentitiesPasswordResets::UserId,
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
                    .name("identities_password_resets_user_id")
                    .table(IdentitiesPasswordResets::Table)
                    .col(IdentitiesPasswordResets::UserId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(MailOutbox::Table)
                    .col(big_pk_auto(MailOutbox::Id))
                    .col(string(MailOutbox::Recipient))
                    .col(string(MailOutbox::Subject))
                    .col(text_null(MailOutbox::Body))
                    .col(timestamp_with_time_zone(MailOutbox::CreatedAt))
                    .col(timestamp_with_time_zone(MailOutbox::NotAfter))
                    .col(integer(MailOutbox::Attempts).default(0))
                    .col(timestamp_with_time_zone(MailOutbox::NextAttemptAt))
                    .col(timestamp_with_time_zone_null(MailOutbox::SentAt))
                    .col(timestamp_with_time_zone_null(MailOutbox::DroppedAt))
                    .col(string_null(MailOutbox::LastError))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("mail_outbox_next_attempt_at")
                    .table(MailOutbox::Table)
                    .col(MailOutbox::NextAttemptAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            MailOutbox::Table.into_iden(),
            IdentitiesPasswordResets::Table.into_iden(),
            IdentitiesPasswordResetRequests::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
