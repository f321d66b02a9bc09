//! `Careers::Job`: a job a company offers; only open ones reach the marketplace (CONTRACT §15).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "careers_jobs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub company_id: i64,
    pub title: String,
    pub description: String,
    /// `draft`, `open`, `closed` or `archived` as stored; an open job past `valid_through` reads
    /// `closed` ([`super::JobStatus::effective`]).
    pub status: String,
    pub department: Option<String>,
    pub employment_type: Option<String>,
    pub workplace_type: String,
    pub country_code: Option<String>,
    pub region: Option<String>,
    pub locality: Option<String>,
    pub salary_min: Option<i64>,
    pub salary_max: Option<i64>,
    pub salary_currency: Option<String>,
    pub salary_interval: Option<String>,
    pub valid_through: Option<DateTimeUtc>,
    /// The first time the job opened.
    pub published_at: Option<DateTimeUtc>,
    /// When the team archived it (moderation); its employer cannot change its status until the
    /// team releases it.
    pub moderated_at: Option<DateTimeUtc>,
    /// The folded text the search indexes (CONTRACT §15; [`super::search_text`]): the title;
    /// the description and department; the company's name.
    pub search_title: String,
    pub search_body: String,
    pub search_company: String,
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
