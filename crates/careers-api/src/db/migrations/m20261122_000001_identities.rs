//! Countries, `Identities::User` and `Identities::Admin`.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Countries {
    Table,
    Id,
    Code,
    Name,
}

#[derive(DeriveIden)]
enum IdentitiesUsers {
    Table,
    Id,
    CountryId,
    Email,
    PasswordDigest,
    FirstName,
    LastName,
    PhoneCode,
    Mobile,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum IdentitiesAdmins {
    Table,
    Id,
    Email,
    PasswordDigest,
    FirstName,
    LastName,
    CreatedAt,
    UpdatedAt,
}

/// Reference data: ids are stable so that forms and demo data can name them.
const COUNTRIES: &[(i64, &str, &str)] = &[
    (1, "US", "United States"),
    (2, "GB", "United Kingdom"),
    (3, "DE", "Germany"),
    (4, "FR", "France"),
    (5, "IN", "India"),
    (6, "NL", "Netherlands"),
    (7, "ES", "Spain"),
    (8, "CA", "Canada"),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Countries::Table)
                    .col(big_pk_auto(Countries::Id))
                    .col(string_len_uniq(Countries::Code, 2))
                    .col(string(Countries::Name))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(IdentitiesUsers::Table)
                    .col(big_pk_auto(IdentitiesUsers::Id))
                    .col(big_integer(IdentitiesUsers::CountryId))
                    .col(string(IdentitiesUsers::Email))
                    .col(string(IdentitiesUsers::PasswordDigest))
                    .col(string(IdentitiesUsers::FirstName))
                    .col(string(IdentitiesUsers::LastName))
                    .col(string(IdentitiesUsers::PhoneCode))
                    .col(string(IdentitiesUsers::Mobile))
                    .col(timestamp_with_time_zone(IdentitiesUsers::CreatedAt))
                    .col(timestamp_with_time_zone(IdentitiesUsers::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(IdentitiesUsers::Table, IdentitiesUsers::CountryId)
                            .to(Countries::Table, Countries::Id)
                            .on_delete(ForeignKeyAction::Restrict),
                    )
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(IdentitiesAdmins::Table)
                    .col(big_pk_auto(IdentitiesAdmins::Id))
                    .col(string(IdentitiesAdmins::Email))
                    .col(string(IdentitiesAdmins::PasswordDigest))
                    .col(string(IdentitiesAdmins::FirstName))
                    .col(string(IdentitiesAdmins::LastName))
                    .col(timestamp_with_time_zone(IdentitiesAdmins::CreatedAt))
                    .col(timestamp_with_time_zone(IdentitiesAdmins::UpdatedAt))
                    .to_owned(),
            )
            .await?;

        // E-mail uniqueness is case-insensitive, enforced by the database on both backends.
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE UNIQUE INDEX identities_users_email_lower ON identities_users (lower(email))",
        )
        .await?;
        db.execute_unprepared(
            "CREATE UNIQUE INDEX identities_admins_email_lower ON identities_admins (lower(email))",
        )
        .await?;

        let mut insert = Query::insert()
            .into_table(Countries::Table)
            .columns([Countries::Id, Countries::Code, Countries::Name])
            .to_owned();
        for (id, code, name) in COUNTRIES {
            insert.values_panic([(*id).into(), (*code).into(), (*name).into()]);
        }
        manager.exec_stmt(insert).await?;
        if manager.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
            // Explicit ids leave the sequence behind; move it past them.
            db.execute_unprepared(
                "SELECT setval(pg_get_serial_sequence('countries', 'id'), (SELECT MAX(id) FROM countries))",
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(IdentitiesAdmins::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(IdentitiesUsers::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Countries::Table).to_owned())
            .await
    }
}
