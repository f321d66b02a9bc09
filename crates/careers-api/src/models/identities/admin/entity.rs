//! `Identities::Admin`: a staff member of the team dashboard. A separate store from users.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "identities_admins")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub email: String,
    pub password_digest: String,
    pub first_name: String,
    pub last_name: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// The confirmed factor's TOTP secret, sealed by `mfa::SecretBox`; `None` without one.
    pub totp_secret: Option<String>,
    /// When the factor was confirmed; `None` without one.
    pub totp_confirmed_at: Option<DateTimeUtc>,
    /// The last 30-second step a code was accepted for: a code is accepted once.
    pub totp_last_step: i64,
    /// An enrolment waiting for its first code (a first factor or a replacement), sealed like
    /// `totp_secret`; the confirmed factor holds until a code of this one confirms it.
    pub totp_pending_secret: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
