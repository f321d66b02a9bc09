//! `Careers::JobStage`: one of a job's ordered hiring stages.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "careers_job_stages")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub careers_job_id: i64,
    pub name: String,
    pub position: i32,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::super::job::entity::Entity",
        from = "Column::CareersJobId",
        to = "super::super::job::entity::Column::Id"
    )]
    Job,
}

impl Related<super::super::job::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Job.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
