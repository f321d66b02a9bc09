//! Companies and their members (CONTRACT §14): a company's `slug`, `website` and
//! `suspended_at`, and its name no longer unique (the slug is the unique handle: two companies
//! may share a name); a member's `role`; invitations, kept by their token's SHA-256.
//!
//! Existing companies get the slug their name derives (`-2`, `-3`... on a clash, in id order);
//! of each company's existing profiles the oldest (by creation time, then id) becomes `owner`,
//! the others `member`.
//!
//! SQLite cannot drop a column's `UNIQUE`: the companies table is rebuilt, the documented way
//! (foreign keys off on one connection, one transaction, `foreign_key_check` before the commit),
//! since other tables reference it. Everything else runs in one transaction on both backends.

use std::collections::HashSet;

use sea_orm::{ConnectionTrait, DatabaseExecutor, DbBackend, Statement, sqlx};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::forms::derive_slug;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum OrgCompanies {
    Table,
    Id,
    Name,
    Slug,
    Website,
    SuspendedAt,
    CreatedAt,
    UpdatedAt,
}

/// The companies table with its new columns and without the name's `UNIQUE`, under `name`.
fn sqlite_companies(name: &str) -> String {
    Table::create()
        .table(Alias::new(name))
        .col(big_pk_auto(OrgCompanies::Id))
        .col(string(OrgCompanies::Name))
        .col(timestamp_with_time_zone(OrgCompanies::CreatedAt))
        .col(timestamp_with_time_zone(OrgCompanies::UpdatedAt))
        .col(string(OrgCompanies::Slug).default(""))
        .col(string_null(OrgCompanies::Website))
        .col(timestamp_with_time_zone_null(OrgCompanies::SuspendedAt))
        .to_string(SqliteQueryBuilder)
}

fn failed(error: sqlx::Error) -> DbErr {
    DbErr::Custom(format!("rebuilding org_companies: {error}"))
}

/// SQLite's rebuild of `org_companies` (sqlite.org/lang_altertable.html, "Making Other Kinds Of
/// Table Schema Changes"): on one connection with foreign keys off, in one transaction, checked
/// by `foreign_key_check` before it commits. The ids and the id counter are kept.
async fn sqlite_rebuild_companies(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    let DatabaseExecutor::Connection(db) = manager.get_connection() else {
        return Err(DbErr::Custom(
            "the companies migration runs outside a transaction on SQLite".into(),
        ));
    };
    let mut conn = db
        .get_sqlite_connection_pool()
        .acquire()
        .await
        .map_err(failed)?;
    sqlx::query("PRAGMA foreign_keys = OFF")
        .execute(&mut *conn)
        .await
        .map_err(failed)?;
    let rebuilt = async {
        let statements = [
            "BEGIN IMMEDIATE".to_owned(),
            sqlite_companies("org_companies_new"),
            "INSERT INTO org_companies_new (id, name, created_at, updated_at) \
             SELECT id, name, created_at, updated_at FROM org_companies"
                .to_owned(),
            // The counter of ids ever handed out, not only of the ids that remain.
            "DELETE FROM sqlite_sequence WHERE name = 'org_companies_new'".to_owned(),
            "INSERT INTO sqlite_sequence (name, seq) SELECT 'org_companies_new', seq \
             FROM sqlite_sequence WHERE name = 'org_companies'"
                .to_owned(),
            "DROP TABLE org_companies".to_owned(),
            "ALTER TABLE org_companies_new RENAME TO org_companies".to_owned(),
        ];
        for statement in &statements {
            // Constant statements and sea-query's DDL: no outside input.
            sqlx::query(sqlx::AssertSqlSafe(statement.as_str()))
                .execute(&mut *conn)
                .await?;
        }
        let broken = sqlx::query("PRAGMA foreign_key_check")
            .fetch_all(&mut *conn)
            .await?;
        if !broken.is_empty() {
            return Err(sqlx::Error::Protocol(format!(
                "{} rows would lose their company",
                broken.len()
            )));
        }
        sqlx::query("COMMIT").execute(&mut *conn).await?;
        Ok(())
    }
    .await;
    if rebuilt.is_err() {
        let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
    }
    sqlx::query("PRAGMA foreign_keys = ON")
        .execute(&mut *conn)
        .await
        .map_err(failed)?;
    rebuilt.map_err(failed)
}

#[derive(DeriveIden)]
enum OrgUserProfiles {
    Table,
    Role,
}

#[derive(DeriveIden)]
enum IdentitiesUsers {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum OrgInvitations {
    Table,
    Id,
    CompanyId,
    Email,
    Role,
    Status,
    TokenHash,
    ExpiresAt,
    InviterId,
    CreatedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let sqlite = manager.get_database_backend() == DbBackend::Sqlite;
        if sqlite {
            sqlite_rebuild_companies(manager).await?;
        }
        // The rest in one transaction (on PostgreSQL the migrator's, a savepoint here).
        let manager = manager.begin().await?;
        if !sqlite {
            manager
                .get_connection()
                .execute_unprepared(
                    "ALTER TABLE org_companies DROP CONSTRAINT IF EXISTS org_companies_name_key",
                )
                .await?;
            for column in [
                string(OrgCompanies::Slug).default("").to_owned(),
                string_null(OrgCompanies::Website),
                timestamp_with_time_zone_null(OrgCompanies::SuspendedAt),
            ] {
                manager
                    .alter_table(
                        Table::alter()
                            .table(OrgCompanies::Table)
                            .add_column(column)
                            .to_owned(),
                    )
                    .await?;
            }
        }
        manager
            .alter_table(
                Table::alter()
                    .table(OrgUserProfiles::Table)
                    .add_column(string(OrgUserProfiles::Role).default("member"))
                    .to_owned(),
            )
            .await?;
        let db = manager.get_connection();
        let backend = db.get_database_backend();
        let companies = db
            .query_all_raw(Statement::from_string(
                backend,
                "SELECT id, name FROM org_companies ORDER BY id",
            ))
            .await?;
        let mut taken = HashSet::new();
        for row in companies {
            let id: i64 = row.try_get_by_index(0)?;
            let name: String = row.try_get_by_index(1)?;
            let base = derive_slug(&name);
            let slug = (1..)
                .map(|n| match n {
                    1 => base.clone(),
                    n => format!("{base}-{n}"),
                })
                .find(|slug| !taken.contains(slug))
                .expect("an unbounded range has a free suffix");
            taken.insert(slug.clone());
            db.execute_raw(Statement::from_sql_and_values(
                backend,
                "UPDATE org_companies SET slug = $1 WHERE id = $2",
                [slug.into(), id.into()],
            ))
            .await?;
        }
        db.execute_unprepared(
            "UPDATE org_user_profiles SET role = 'owner' WHERE NOT EXISTS \
             (SELECT 1 FROM org_user_profiles older \
              WHERE older.company_id = org_user_profiles.company_id \
              AND (older.created_at < org_user_profiles.created_at \
                   OR (older.created_at = org_user_profiles.created_at \
                       AND older.id < org_user_profiles.id)))",
        )
        .await?;
        manager
            .create_index(
                Index::create()
                    .name("org_companies_slug")
                    .table(OrgCompanies::Table)
                    .col(OrgCompanies::Slug)
                    .unique()
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(OrgInvitations::Table)
                    .col(big_pk_auto(OrgInvitations::Id))
                    .col(big_integer(OrgInvitations::CompanyId))
                    .col(string(OrgInvitations::Email))
                    .col(string(OrgInvitations::Role))
                    .col(string(OrgInvitations::Status))
                    .col(string_uniq(OrgInvitations::TokenHash))
                    .col(timestamp_with_time_zone(OrgInvitations::ExpiresAt))
                    .col(big_integer_null(OrgInvitations::InviterId))
                    .col(timestamp_with_time_zone(OrgInvitations::CreatedAt))
                    .col(timestamp_with_time_zone(OrgInvitations::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(OrgInvitations::Table, OrgInvitations::CompanyId)
                            .to(OrgCompanies::Table, OrgCompanies::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(OrgInvitations::Table, OrgInvitations::InviterId)
                            .to(IdentitiesUsers::Table, IdentitiesUsers::Id)
                            .on_delete(ForeignKeyAction::SetNull),
                    )
                    .to_owned(),
            )
            .await?;
        for index in [
            // The company's list, newest first.
            Index::create()
                .name("org_invitations_company_id_id")
                .table(OrgInvitations::Table)
                .col(OrgInvitations::CompanyId)
                .col(OrgInvitations::Id)
                .to_owned(),
            // A user's pending invitations.
            Index::create()
                .name("org_invitations_email_status")
                .table(OrgInvitations::Table)
                .col(OrgInvitations::Email)
                .col(OrgInvitations::Status)
                .to_owned(),
        ] {
            manager.create_index(index).await?;
        }
        // One pending invitation per (company, e-mail): a new one revokes the earlier in its
        // transaction, and of two racing, the index lets one through (a partial index, the
        // same SQL on both backends).
        db.execute_unprepared(
            "CREATE UNIQUE INDEX org_invitations_one_pending ON org_invitations \
             (company_id, email) WHERE status = 'pending'",
        )
        .await?;
        manager.commit().await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Names become unique again: refused before anything changes when two companies share
        // one; the rest in one transaction.
        let shared = manager
            .get_connection()
            .query_one_raw(Statement::from_string(
                manager.get_database_backend(),
                "SELECT COUNT(*) FROM (SELECT name FROM org_companies GROUP BY name \
                 HAVING COUNT(*) > 1) shared",
            ))
            .await?
            .map(|row| row.try_get_by_index::<i64>(0))
            .transpose()?
            .unwrap_or(0);
        if shared > 0 {
            return Err(DbErr::Custom(format!(
                "{shared} company names are shared by several companies: rename them before \
                 reverting to unique names"
            )));
        }
        let manager = manager.begin().await?;
        manager
            .drop_table(Table::drop().table(OrgInvitations::Table).to_owned())
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("org_companies_slug")
                    .table(OrgCompanies::Table)
                    .to_owned(),
            )
            .await?;
        for column in [
            OrgCompanies::Slug,
            OrgCompanies::Website,
            OrgCompanies::SuspendedAt,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(OrgCompanies::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .alter_table(
                Table::alter()
                    .table(OrgUserProfiles::Table)
                    .drop_column(OrgUserProfiles::Role)
                    .to_owned(),
            )
            .await?;
        // Names are unique again (as migration 2 made them; a later up drops it again).
        let restore = match manager.get_database_backend() {
            DbBackend::Sqlite => {
                "CREATE UNIQUE INDEX org_companies_name_key ON org_companies (name)"
            }
            _ => "ALTER TABLE org_companies ADD CONSTRAINT org_companies_name_key UNIQUE (name)",
        };
        manager.get_connection().execute_unprepared(restore).await?;
        manager.commit().await
    }
}
