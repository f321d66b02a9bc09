//! `Identities::Admin`: a staff member of the team dashboard, in a store of its own.

pub mod entity;

use chrono::Utc;
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{ActiveModelTrait, DatabaseConnection, EntityTrait, QueryFilter, Set, Unchanged};
use serde::Serialize;

use self::entity as admin;
use super::{email_taken_or, normalize_email};
use crate::db::DataError;

/// `Identities::Admin` in the admin login body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AdminView {
    pub id: i64,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
}

impl From<&admin::Model> for AdminView {
    fn from(a: &admin::Model) -> Self {
        Self {
            id: a.id,
            email: a.email.clone(),
            first_name: a.first_name.clone(),
            last_name: a.last_name.clone(),
        }
    }
}

pub async fn find_admin_by_email(
    db: &DatabaseConnection,
    email: &str,
) -> Result<Option<admin::Model>, DataError> {
    Ok(admin::Entity::find()
        .filter(Expr::expr(Func::lower(Expr::col(admin::Column::Email))).eq(normalize_email(email)))
        .one(db)
        .await?)
}

pub async fn find_admin(
    db: &DatabaseConnection,
    id: i64,
) -> Result<Option<admin::Model>, DataError> {
    Ok(admin::Entity::find_by_id(id).one(db).await?)
}

pub struct NewAdmin {
    pub email: String,
    pub password_digest: String,
    pub first_name: String,
    pub last_name: String,
}

pub async fn create_admin(
    db: &DatabaseConnection,
    new: NewAdmin,
) -> Result<admin::Model, DataError> {
    let now = Utc::now();
    let model = admin::ActiveModel {
        email: Set(normalize_email(&new.email)),
        password_digest: Set(new.password_digest),
        first_name: Set(new.first_name),
        last_name: Set(new.last_name),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    model.insert(db).await.map_err(email_taken_or)
}

/// Replaces an admin's password digest (`admins set-password`).
pub async fn set_admin_password_digest(
    db: &DatabaseConnection,
    id: i64,
    password_digest: String,
) -> Result<(), DataError> {
    admin::ActiveModel {
        id: Unchanged(id),
        password_digest: Set(password_digest),
        updated_at: Set(Utc::now()),
        ..Default::default()
    }
    .update(db)
    .await?;
    Ok(())
}
