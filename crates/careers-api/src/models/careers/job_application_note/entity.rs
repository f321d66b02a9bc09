//! `Careers::JobApplicationNote`: a member's note on an application, with an optional rating.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "careers_job_application_notes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub careers_job_application_id: i64,
    /// The author; null once their user is deleted.
    pub identities_user_id: Option<i64>,
    pub body: String,
    /// `strong_no`, `no`, `yes` or `strong_yes`.
    pub rating: Option<String>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "crate::models::identities::user::entity::Entity",
        from = "Column::IdentitiesUserId",
        to = "crate::models::identities::user::entity::Column::Id"
    )]
    Author,
}

impl ActiveModelBehavior for ActiveModel {}
