//! `Careers::Experience`: a past or current position on a talent profile.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "careers_experiences")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub careers_user_profile_id: i64,
    pub job_title: String,
    pub company_name: Option<String>,
    pub started_on: Option<Date>,
    pub ended_on: Option<Date>,
    pub description: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::super::user_profile::entity::Entity",
        from = "Column::CareersUserProfileId",
        to = "super::super::user_profile::entity::Column::Id"
    )]
    UserProfile,
}

impl Related<super::super::user_profile::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::UserProfile.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
