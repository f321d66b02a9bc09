//! `Identities::User`: a person of the candidate, employer and marketplace frontends.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "identities_users")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub country_id: i64,
    /// Stored trimmed and lower-cased; unique on `lower(email)`.
    pub email: String,
    pub password_digest: String,
    pub first_name: String,
    pub last_name: String,
    pub phone_code: String,
    pub mobile: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// When the user proved the e-mail theirs (CONTRACT §14); `None` until then.
    pub email_verified_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "crate::models::country::entity::Entity",
        from = "Column::CountryId",
        to = "crate::models::country::entity::Column::Id"
    )]
    Country,
    #[sea_orm(has_one = "crate::models::org::user_profile::entity::Entity")]
    OrgUserProfile,
    #[sea_orm(has_one = "crate::models::careers::user_profile::entity::Entity")]
    CareersUserProfile,
}

impl Related<crate::models::country::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Country.def()
    }
}

impl Related<crate::models::org::user_profile::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::OrgUserProfile.def()
    }
}

impl Related<crate::models::careers::user_profile::entity::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::CareersUserProfile.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
