//! `Careers::Job`: a job a company offers; only published jobs reach the marketplace.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "careers_jobs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub company_id: i64,
    pub title: String,
    pub description: String,
    pub published: bool,
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
    #[sea_orm(has_many = "super::super::job_application::entity::Entity")]
    JobApplications,
}

impl Related<crate::models::org::company::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Company.def()
    }
}

impl Related<super::super::job_application::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::JobApplications.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
