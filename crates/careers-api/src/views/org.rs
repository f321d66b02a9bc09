use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::db::entities::identities::user;
use crate::db::entities::org::company;

/// An identity as another party sees it: the name only. Borrowed or owned text, as
/// [`ApplicationAttrs`](super::careers::ApplicationAttrs)'s.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct UserBrief<'a> {
    pub id: i64,
    pub first_name: Cow<'a, str>,
    pub last_name: Cow<'a, str>,
}

impl From<&user::Model> for UserBrief<'static> {
    fn from(u: &user::Model) -> Self {
        Self {
            id: u.id,
            first_name: u.first_name.clone().into(),
            last_name: u.last_name.clone().into(),
        }
    }
}

impl UserBrief<'_> {
    /// The same brief with its text owned.
    pub fn into_owned(self) -> UserBrief<'static> {
        UserBrief {
            id: self.id,
            first_name: self.first_name.into_owned().into(),
            last_name: self.last_name.into_owned().into(),
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
    pub identities_user: UserBrief<'static>,
    pub company: CompanyBrief,
}
