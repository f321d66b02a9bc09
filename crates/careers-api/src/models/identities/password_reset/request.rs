//! A password-reset request as it arrived: the e-mail and when. The mail worker resolves it.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "identities_password_reset_requests")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Normalized (trimmed, lower-cased).
    pub email: String,
    pub requested_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
