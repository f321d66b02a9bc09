//! `Careers::Certificate`: one of a talent profile's has-many children.

pub mod entity;

use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::Set;
use serde::{Deserialize, Serialize};

use self::entity as certificate;
use super::nested::{NestedItem, ProfileChild};
use crate::forms::{date, parse_date};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CertificateView {
    pub id: i64,
    pub name: String,
    pub issuer: Option<String>,
    pub issued_on: Option<NaiveDate>,
}

impl From<&certificate::Model> for CertificateView {
    fn from(c: &certificate::Model) -> Self {
        Self {
            id: c.id,
            name: c.name.clone(),
            issuer: c.issuer.clone(),
            issued_on: c.issued_on,
        }
    }
}

#[derive(Debug, Clone, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct CertificateItem {
    #[garde(skip)]
    pub id: Option<i64>,
    #[serde(rename = "_destroy")]
    #[garde(skip)]
    pub destroy: Option<bool>,
    #[garde(length(chars, min = 1, max = 200))]
    pub name: Option<String>,
    #[garde(length(chars, max = 200))]
    pub issuer: Option<String>,
    #[garde(custom(date))]
    pub issued_on: Option<String>,
}

impl NestedItem for CertificateItem {
    fn id(&self) -> Option<i64> {
        self.id
    }
    fn destroy(&self) -> bool {
        self.destroy.unwrap_or(false)
    }
    fn required_field(&self) -> (&'static str, bool) {
        ("name", self.name.is_some())
    }
}

pub(super) fn active_model(
    item: &CertificateItem,
    existing: Option<certificate::Model>,
    profile_id: i64,
    now: DateTime<Utc>,
) -> certificate::ActiveModel {
    let mut m: certificate::ActiveModel = match existing {
        Some(model) => model.into(),
        None => certificate::ActiveModel {
            careers_user_profile_id: Set(profile_id),
            created_at: Set(now),
            ..Default::default()
        },
    };
    if let Some(name) = &item.name {
        m.name = Set(name.clone());
    }
    if item.issuer.is_some() {
        m.issuer = Set(item.issuer.clone());
    }
    if let Some(date) = &item.issued_on {
        m.issued_on = Set(parse_date(date));
    }
    m.updated_at = Set(now);
    m
}

impl ProfileChild for certificate::Entity {
    fn profile_id(model: &Self::Model) -> i64 {
        model.careers_user_profile_id
    }
}
