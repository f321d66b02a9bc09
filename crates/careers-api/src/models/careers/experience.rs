//! `Careers::Experience`: one of a talent profile's has-many children.

pub mod entity;

use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::Set;
use serde::{Deserialize, Serialize};

use self::entity as experience;
use super::nested::{NestedItem, ProfileChild};
use crate::forms::{date, parse_date};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ExperienceView {
    pub id: i64,
    pub job_title: String,
    pub company_name: Option<String>,
    pub started_on: Option<NaiveDate>,
    pub ended_on: Option<NaiveDate>,
    pub description: Option<String>,
}

impl From<&experience::Model> for ExperienceView {
    fn from(e: &experience::Model) -> Self {
        Self {
            id: e.id,
            job_title: e.job_title.clone(),
            company_name: e.company_name.clone(),
            started_on: e.started_on,
            ended_on: e.ended_on,
            description: e.description.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct ExperienceItem {
    #[garde(skip)]
    pub id: Option<i64>,
    #[serde(rename = "_destroy")]
    #[garde(skip)]
    pub destroy: Option<bool>,
    #[garde(length(chars, min = 1, max = 200))]
    pub job_title: Option<String>,
    #[garde(length(chars, max = 200))]
    pub company_name: Option<String>,
    #[garde(custom(date))]
    pub started_on: Option<String>,
    #[garde(custom(date))]
    pub ended_on: Option<String>,
    #[garde(length(chars, max = 5_000))]
    pub description: Option<String>,
}

impl NestedItem for ExperienceItem {
    fn id(&self) -> Option<i64> {
        self.id
    }
    fn destroy(&self) -> bool {
        self.destroy.unwrap_or(false)
    }
    fn required_field(&self) -> (&'static str, bool) {
        ("job_title", self.job_title.is_some())
    }
}

pub(super) fn active_model(
    item: &ExperienceItem,
    existing: Option<experience::Model>,
    profile_id: i64,
    now: DateTime<Utc>,
) -> experience::ActiveModel {
    let mut m: experience::ActiveModel = match existing {
        Some(model) => model.into(),
        None => experience::ActiveModel {
            careers_user_profile_id: Set(profile_id),
            created_at: Set(now),
            ..Default::default()
        },
    };
    if let Some(title) = &item.job_title {
        m.job_title = Set(title.clone());
    }
    if item.company_name.is_some() {
        m.company_name = Set(item.company_name.clone());
    }
    if let Some(date) = &item.started_on {
        m.started_on = Set(parse_date(date));
    }
    if let Some(date) = &item.ended_on {
        m.ended_on = Set(parse_date(date));
    }
    if item.description.is_some() {
        m.description = Set(item.description.clone());
    }
    m.updated_at = Set(now);
    m
}

impl ProfileChild for experience::Entity {
    fn profile_id(model: &Self::Model) -> i64 {
        model.careers_user_profile_id
    }
}
