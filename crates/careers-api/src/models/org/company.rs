//! `Org::Company`.

pub mod entity;

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, EntityTrait, PaginatorTrait, QueryOrder};
use serde::Serialize;

use self::entity as company;
use crate::db::{DataError, page_of};

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
    pub created_at: DateTime<Utc>,
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

pub async fn list_companies(
    db: &DatabaseConnection,
    page: u64,
    per_page: u64,
) -> Result<(Vec<CompanyView>, u64), DataError> {
    let query = company::Entity::find();
    let total = query.clone().count(db).await?;
    let rows = page_of(query.order_by_asc(company::Column::Id), page, per_page)
        .all(db)
        .await?;
    Ok((rows.iter().map(CompanyView::from).collect(), total))
}
