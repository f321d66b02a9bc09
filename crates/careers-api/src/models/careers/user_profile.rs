//! `Careers::UserProfile`: a candidate's talent profile, with its certificates, experiences and
//! skills.

pub mod entity;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, ModelTrait,
    QueryFilter, QueryOrder, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as profile;
use super::certificate::{self, CertificateItem, CertificateView};
use super::experience::{self, ExperienceItem, ExperienceView};
use super::skill::{self, SkillItem, SkillView};
use crate::db::{DataError, unique_violation};
use crate::error::ApiError;
use crate::forms::Errors;
use crate::models::identities::user::entity as user;
use crate::views::envelope;

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
    #[serde(serialize_with = "crate::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "crate::timestamp::serialize")]
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
    pub fn validate(&self) -> Result<(), ApiError> {
        let mut errors = Errors::of(self);
        errors.require("headline", self.headline.is_some());
        errors.finish()
    }
}

/// A nested item: with `id` it updates (or, with `_destroy`, removes) an existing child;
/// without, it creates one, which needs its one required field.
pub trait NestedItem {
    fn id(&self) -> Option<i64>;
    fn destroy(&self) -> bool;
    /// The required field of a new item, and whether it is present.
    fn required_field(&self) -> (&'static str, bool);
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

fn require_items<T: NestedItem>(errors: &mut Errors, key: &str, items: &Option<Vec<T>>) {
    for (index, item) in items.iter().flatten().enumerate() {
        if item.id().is_none() && !item.destroy() {
            let (field, present) = item.required_field();
            errors.require(&format!("{key}[{index}].{field}"), present);
        }
    }
}

impl TalentProfileForm {
    pub fn validate(&self) -> Result<(), ApiError> {
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

/// A child entity of a talent profile.
pub(super) trait ProfileChild: EntityTrait {
    fn profile_id(model: &Self::Model) -> i64;
}

/// Items with `id` update (or with `_destroy` remove) the profile's own child of that id; items
/// without create one. An id that is not the profile's own is a 422 on that item.
async fn sync_children<E, I>(
    txn: &sea_orm::DatabaseTransaction,
    profile_id: i64,
    key: &str,
    items: &[I],
    build: impl Fn(&I, Option<E::Model>) -> E::ActiveModel,
) -> Result<(), DataError>
where
    E: ProfileChild,
    E::Model: sea_orm::IntoActiveModel<E::ActiveModel> + ModelTrait<Entity = E> + Sync,
    E::ActiveModel: ActiveModelTrait<Entity = E> + sea_orm::ActiveModelBehavior + Send,
    <E::PrimaryKey as sea_orm::PrimaryKeyTrait>::ValueType: From<i64>,
    I: NestedItem,
{
    for (index, item) in items.iter().enumerate() {
        // `_destroy` on an item that names no existing child has nothing to remove.
        if item.destroy() && item.id().is_none() {
            continue;
        }
        let existing = match item.id() {
            Some(id) => Some(
                E::find_by_id(id)
                    .one(txn)
                    .await?
                    .filter(|m| E::profile_id(m) == profile_id)
                    .ok_or_else(|| {
                        DataError::invalid(format!("{key}[{index}].id"), "does not exist")
                    })?,
            ),
            None => None,
        };
        let result = match existing {
            Some(model) if item.destroy() => model.delete(txn).await.map(drop),
            existing => build(item, existing).save(txn).await.map(drop),
        };
        result.map_err(|e| {
            if unique_violation(&e) {
                DataError::Conflict(format!("{key}[{index}] duplicates an existing entry"))
            } else {
                e.into()
            }
        })?;
    }
    Ok(())
}

envelope!(CareersUserProfileOne {
    careers_user_profiles: TalentProfileView
});
