//! `Careers::UserProfile`: a user's talent profile (one per user).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "careers_user_profiles")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub identities_user_id: i64,
    pub headline: String,
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
    #[sea_orm(has_many = "super::super::certificate::entity::Entity")]
    Certificates,
    #[sea_orm(has_many = "super::super::experience::entity::Entity")]
    Experiences,
    #[sea_orm(has_many = "super::super::skill::entity::Entity")]
    Skills,
    #[sea_orm(has_many = "super::super::job_application::entity::Entity")]
    JobApplications,
}

impl Related<crate::models::identities::user::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::IdentitiesUser.def()
    }
}

impl Related<super::super::certificate::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Certificates.def()
    }
}

impl Related<super::super::experience::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Experiences.def()
    }
}

impl Related<super::super::skill::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Skills.def()
    }
}

impl Related<super::super::job_application::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::JobApplications.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
