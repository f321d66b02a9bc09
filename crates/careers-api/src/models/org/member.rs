//! Making a user a member of a company: the one insert of an org profile that a company's
//! creation and an invitation's acceptance share, under the one-profile-per-user index.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

use super::user_profile::entity as profile;
use super::{Actor, Role};
use crate::db::DataError;

/// The actor as they are now, read inside the caller's transaction once it holds the
/// company's lock ([`super::company::lock`]): the employer area read their role before the
/// transaction, and a concurrent change may have removed or demoted them since. Refused when
/// they are no longer a member of `company_id`, so that the loser of a race gets the answer it
/// would get had it come second (CONTRACT §14).
pub async fn current_actor<C: ConnectionTrait>(
    conn: &C,
    actor: Actor,
    company_id: i64,
) -> Result<Actor, DataError> {
    let Actor::Member { profile_id, .. } = actor else {
        return Ok(actor);
    };
    let found = profile::Entity::find_by_id(profile_id)
        .filter(profile::Column::CompanyId.eq(company_id))
        .one(conn)
        .await?
        .ok_or_else(|| DataError::Refused("you are no longer a member of this company".into()))?;
    Ok(Actor::Member {
        profile_id,
        role: Role::parse(&found.role),
    })
}

/// A new org profile for `user_id` at `company_id` in the caller's transaction, titled with the
/// role's name: 409 when the user has one already.
pub async fn insert_member<C: ConnectionTrait>(
    conn: &C,
    user_id: i64,
    company_id: i64,
    role: Role,
    now: DateTime<Utc>,
) -> Result<i64, DataError> {
    let created = profile::ActiveModel {
        identities_user_id: Set(user_id),
        company_id: Set(company_id),
        title: Set(role.title().to_owned()),
        role: Set(role.as_str().to_owned()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(conn)
    .await
    .map_err(one_profile_per_user)?;
    Ok(created.id)
}

/// A unique-index refusal of a second org profile, as the 409 it is.
pub fn one_profile_per_user(error: sea_orm::DbErr) -> DataError {
    DataError::conflict_if_unique(error, "this user already has an org profile")
}
