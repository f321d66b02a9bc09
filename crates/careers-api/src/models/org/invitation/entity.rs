//! `Org::Invitation`: an e-mail invited into a company with a role; its token only as SHA-256.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "org_invitations")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub company_id: i64,
    /// Normalised (trimmed, lower case), as users' e-mails are stored.
    pub email: String,
    pub role: String,
    /// `pending`, `accepted`, `declined` or `revoked` (`expired` is a pending one past
    /// `expires_at`, read, never stored).
    pub status: String,
    #[sea_orm(unique)]
    pub token_hash: String,
    pub expires_at: DateTimeUtc,
    pub inviter_id: Option<i64>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "crate::models::org::company::entity::Entity",
        from = "Column::CompanyId",
        to = "crate::models::org::company::entity::Column::Id"
    )]
    Company,
    #[sea_orm(
        belongs_to = "crate::models::identities::user::entity::Entity",
        from = "Column::InviterId",
        to = "crate::models::identities::user::entity::Column::Id"
    )]
    Inviter,
}

impl ActiveModelBehavior for ActiveModel {}
