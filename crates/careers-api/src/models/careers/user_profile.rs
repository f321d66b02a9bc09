//! `Careers::UserProfile`: a candidate's talent profile, with its certificates, experiences and
//! skills.

pub mod entity;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as profile;
use super::certificate::{self, CertificateItem, CertificateView};
use super::experience::{self, ExperienceItem, ExperienceView};
use super::nested::{require_items, sync_children};
use super::skill::{self, SkillItem, SkillView};
use crate::db::{DataError, unique_violation};
use crate::forms::{Errors, Invalid};
use crate::models::identities::user::entity as user;

/// A talent profile's has-many children, loaded in one batched query each.
#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct ProfileChildren {
    pub certificates: Vec<CertificateView>,
    pub experiences: Vec<ExperienceView>,
    pub skills: Vec<SkillView>,
}

/// `Careers::UserProfile` (the talent profile) with its children.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TalentProfileView {
    pub id: i64,
    pub headline: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(flatten)]
    pub children: ProfileChildren,
}

impl TalentProfileView {
    pub fn new(profile: &profile::Model, children: ProfileChildren) -> Self {
        Self {
            id: profile.id,
            headline: profile.headline.clone(),
            created_at: profile.created_at,
            updated_at: profile.updated_at,
            children,
        }
    }
}

/// `POST /identities/careers/user_profiles`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct TalentProfileCreateForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub headline: Option<String>,
}

impl TalentProfileCreateForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("headline", self.headline.is_some());
        errors.finish()
    }
}

/// `PATCH /talent/careers/user_profile`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct TalentProfileForm {
    #[garde(length(chars, min = 1, max = 200))]
    pub headline: Option<String>,
    #[garde(dive, length(max = 100))]
    pub certificates: Option<Vec<CertificateItem>>,
    #[garde(dive, length(max = 100))]
    pub experiences: Option<Vec<ExperienceItem>>,
    #[garde(dive, length(max = 100))]
    pub skills: Option<Vec<SkillItem>>,
}

impl TalentProfileForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        require_items(&mut errors, "certificates", &self.certificates);
        require_items(&mut errors, "experiences", &self.experiences);
        require_items(&mut errors, "skills", &self.skills);
        errors.finish()
    }
}

/// A user with their talent profile, if any: the talent and candidate area check in one
/// statement.
pub async fn user_with_profile(
    db: &DatabaseConnection,
    user_id: i64,
) -> Result<Option<(user::Model, Option<profile::Model>)>, DataError> {
    Ok(user::Entity::find_by_id(user_id)
        .find_also_related(profile::Entity)
        .one(db)
        .await?)
}

pub async fn profile_of_user<C: ConnectionTrait>(
    db: &C,
    user_id: i64,
) -> Result<Option<profile::Model>, DataError> {
    Ok(profile::Entity::find()
        .filter(profile::Column::IdentitiesUserId.eq(user_id))
        .one(db)
        .await?)
}

pub async fn create_profile(
    db: &DatabaseConnection,
    user_id: i64,
    headline: String,
) -> Result<TalentProfileView, DataError> {
    if profile_of_user(db, user_id).await?.is_some() {
        return Err(DataError::Conflict(
            "you already have a talent profile".into(),
        ));
    }
    let now = Utc::now();
    let created = profile::ActiveModel {
        identities_user_id: Set(user_id),
        headline: Set(headline),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await
    .map_err(|e| {
        if unique_violation(&e) {
            DataError::Conflict("you already have a talent profile".into())
        } else {
            e.into()
        }
    })?;
    Ok(TalentProfileView::new(&created, ProfileChildren::default()))
}

/// Certificates, experiences and skills of several profiles: three statements in all.
pub async fn children_of<C: ConnectionTrait>(
    db: &C,
    profile_ids: &[i64],
) -> Result<HashMap<i64, ProfileChildren>, DataError> {
    let mut children: HashMap<i64, ProfileChildren> = HashMap::new();
    if profile_ids.is_empty() {
        return Ok(children);
    }
    let ids = profile_ids.to_vec();
    for c in certificate::entity::Entity::find()
        .filter(certificate::entity::Column::CareersUserProfileId.is_in(ids.clone()))
        .order_by_asc(certificate::entity::Column::Id)
        .all(db)
        .await?
    {
        let entry = children.entry(c.careers_user_profile_id).or_default();
        entry.certificates.push(CertificateView::from(&c));
    }
    for e in experience::entity::Entity::find()
        .filter(experience::entity::Column::CareersUserProfileId.is_in(ids.clone()))
        .order_by_asc(experience::entity::Column::Id)
        .all(db)
        .await?
    {
        let entry = children.entry(e.careers_user_profile_id).or_default();
        entry.experiences.push(ExperienceView::from(&e));
    }
    for s in skill::entity::Entity::find()
        .filter(skill::entity::Column::CareersUserProfileId.is_in(ids))
        .order_by_asc(skill::entity::Column::Id)
        .all(db)
        .await?
    {
        let entry = children.entry(s.careers_user_profile_id).or_default();
        entry.skills.push(SkillView::from(&s));
    }
    Ok(children)
}

pub async fn profile_view<C: ConnectionTrait>(
    db: &C,
    profile: &profile::Model,
) -> Result<TalentProfileView, DataError> {
    let mut children = children_of(db, &[profile.id]).await?;
    Ok(TalentProfileView::new(
        profile,
        children.remove(&profile.id).unwrap_or_default(),
    ))
}

/// Applies a nested talent-profile form in one transaction: nothing is written unless all of
/// it is valid.
pub async fn update_profile(
    db: &DatabaseConnection,
    current: profile::Model,
    form: TalentProfileForm,
) -> Result<TalentProfileView, DataError> {
    let txn = crate::db::write_transaction(db).await?;
    let profile_id = current.id;
    let now = Utc::now();
    let mut model: profile::ActiveModel = current.into();
    if let Some(headline) = form.headline {
        model.headline = Set(headline);
    }
    model.updated_at = Set(now);
    let updated = model.update(&txn).await?;

    if let Some(items) = &form.certificates {
        sync_children::<certificate::entity::Entity, _>(
            &txn,
            profile_id,
            "certificates",
            items,
            |item, existing| certificate::active_model(item, existing, profile_id, now),
        )
        .await?;
    }
    if let Some(items) = &form.experiences {
        sync_children::<experience::entity::Entity, _>(
            &txn,
            profile_id,
            "experiences",
            items,
            |item, existing| experience::active_model(item, existing, profile_id, now),
        )
        .await?;
    }
    if let Some(items) = &form.skills {
        sync_children::<skill::entity::Entity, _>(
            &txn,
            profile_id,
            "skills",
            items,
            |item, existing| skill::active_model(item, existing, profile_id, now),
        )
        .await?;
    }
    let view = profile_view(&txn, &updated).await?;
    txn.commit().await?;
    Ok(view)
}
