//! `Careers::JobApplicationEvent`: an entry of an application's timeline.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "careers_job_application_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub careers_job_application_id: i64,
    /// Who did it (the candidate for `applied` and a withdrawal); null once deleted.
    pub identities_user_id: Option<i64>,
    /// `applied`, `stage_changed`, `status_changed` or `note_added`.
    pub kind: String,
    /// The stage's name or the status before the change.
    pub from_value: Option<String>,
    /// The stage's name or the status after the change.
    pub to_value: Option<String>,
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
