//! `Careers::Skill`: one of a talent profile's has-many children.

pub mod entity;

use chrono::{DateTime, Utc};
use sea_orm::Set;
use serde::{Deserialize, Serialize};

use self::entity as skill;
use super::nested::{NestedItem, ProfileChild};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SkillView {
    pub id: i64,
    pub name: String,
}

impl From<&skill::Model> for SkillView {
    fn from(s: &skill::Model) -> Self {
        Self {
            id: s.id,
            name: s.name.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct SkillItem {
    #[garde(skip)]
    pub id: Option<i64>,
    #[serde(rename = "_destroy")]
    #[garde(skip)]
    pub destroy: Option<bool>,
    #[garde(length(chars, min = 1, max = 100))]
    pub name: Option<String>,
}

impl NestedItem for SkillItem {
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
    item: &SkillItem,
    existing: Option<skill::Model>,
    profile_id: i64,
    now: DateTime<Utc>,
) -> skill::ActiveModel {
    let mut m: skill::ActiveModel = match existing {
        Some(model) => model.into(),
        None => skill::ActiveModel {
            careers_user_profile_id: Set(profile_id),
            created_at: Set(now),
            ..Default::default()
        },
    };
    if let Some(name) = &item.name {
        m.name = Set(name.clone());
    }
    m.updated_at = Set(now);
    m
}

impl ProfileChild for skill::Entity {
    fn profile_id(model: &Self::Model) -> i64 {
        model.careers_user_profile_id
    }
}
