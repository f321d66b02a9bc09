//! The short forms of a job and of an application that each one's views nest inside the
//! other's: a candidate's application carries its job, a marketplace job the caller's own
//! applications to it.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::models::org::company::CompanyBrief;

/// A job as an application names it: `{id, title, company: {id, name}}`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct JobBrief {
    pub id: i64,
    pub title: String,
    pub company: CompanyBrief,
}

/// One of the caller's own applications to a marketplace job.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct OwnApplication {
    pub id: i64,
    pub status: String,
    pub created_at: DateTime<Utc>,
}
