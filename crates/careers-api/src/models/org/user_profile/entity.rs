//! `Org::UserProfile`: a user's employer profile at one company (one per user).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "org_user_profiles")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub identities_user_id: i64,
    pub company_id: i64,
    pub title: String,
    /// `owner`, `admin` or `member` ([`super::Role`]).
    pub role: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "crate::models::identities::user::entity::Entity",
        from = "Column::IdentitiesUserId",
        to = "crate::models::identities::user::entity::Column::Id"
    )]
    IdentitiesUser,
    #[sea_orm(
        belongs_to = "super::super::company::entity::Entity",
        from = "Column::CompanyId",
        to = "super::super::company::entity::Column::Id"
    )]
    Company,
}

impl Related<crate::models::identities::user::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::IdentitiesUser.def()
    }
}

impl Related<super::super::company::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Company.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
