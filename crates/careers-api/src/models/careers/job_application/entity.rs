//! `Careers::JobApplication`: a talent profile's application to a job (one per job and profile).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "careers_job_applications")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub careers_job_id: i64,
    /// The job's company, kept equal to it by a foreign key (migration 3): the employer's
    /// applications are one index range.
    pub company_id: i64,
    pub careers_user_profile_id: i64,
    pub status: String,
    pub cover_letter: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// The application's stage, of its job (null only if the job had no stage).
    pub careers_job_stage_id: Option<i64>,
    pub rejection_reason: Option<String>,
    pub status_changed_at: DateTimeUtc,
    /// 0 at creation, +1 on every change of the application itself (optimistic locking).
    pub lock_version: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::super::job::entity::Entity",
        from = "Column::CareersJobId",
        to = "super::super::job::entity::Column::Id"
    )]
    Job,
    #[sea_orm(
        belongs_to = "super::super::user_profile::entity::Entity",
        from = "Column::CareersUserProfileId",
        to = "super::super::user_profile::entity::Column::Id"
    )]
    UserProfile,
}

impl Related<super::super::job::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Job.def()
    }
}

impl Related<super::super::user_profile::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::UserProfile.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
