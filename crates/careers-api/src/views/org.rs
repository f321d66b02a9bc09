use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::db::entities::identities::user;
use crate::db::entities::org::company;

/// An identity as another party sees it: the name only.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct UserBrief {
    pub id: i64,
    pub first_name: String,
    pub last_name: String,
}

impl From<&user::Model> for UserBrief {
    fn from(u: &user::Model) -> Self {
        Self {
            id: u.id,
            first_name: u.first_name.clone(),
            last_name: u.last_name.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct CompanyBrief {
    pub id: i64,
    pub name: String,
}

impl From<&company::Model> for CompanyBrief {
    fn from(c: &company::Model) -> Self {
        Self {
            id: c.id,
            name: c.name.clone(),
        }
    }
}

/// `Org::Company` with its own attributes.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CompanyView {
    pub id: i64,
    pub name: String,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub updated_at: DateTime<Utc>,
}

impl From<&company::Model> for CompanyView {
    fn from(c: &company::Model) -> Self {
        Self {
            id: c.id,
            name: c.name.clone(),
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

/// `Org::UserProfile` with its user and company joined.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OrgUserProfileView {
    pub id: i64,
    pub title: String,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "super::timestamp::serialize")]
    pub updated_at: DateTime<Utc>,
    pub identities_user: UserBrief,
    pub company: CompanyBrief,
}
