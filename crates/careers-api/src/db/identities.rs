//! Queries and writes of `Identities::User` and `Identities::Admin`.

use chrono::Utc;
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, DatabaseConnection, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Set, Unchanged,
};

use crate::db::entities::country;
use crate::db::entities::identities::{admin, user};
use crate::db::{Columns, Db, FromRow, HotRow};
use crate::error::ApiError;
use crate::views::identities::UserView;

/// E-mail as stored and compared: trimmed and lower-cased.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

pub async fn find_user_by_email(
    db: &DatabaseConnection,
    email: &str,
) -> Result<Option<user::Model>, ApiError> {
    Ok(user::Entity::find()
        .filter(Expr::expr(Func::lower(Expr::col(user::Column::Email))).eq(normalize_email(email)))
        .one(db)
        .await?)
}

pub async fn find_admin_by_email(
    db: &DatabaseConnection,
    email: &str,
) -> Result<Option<admin::Model>, ApiError> {
    Ok(admin::Entity::find()
        .filter(Expr::expr(Func::lower(Expr::col(admin::Column::Email))).eq(normalize_email(email)))
        .one(db)
        .await?)
}

/// The user of a session, as the user areas use it: the hottest read (every user-context
/// request). Its SQL is a constant instead of being built per request, and it reads only the
/// columns of [`UserView`]: not the password digest or the timestamps, which no user-area
/// handler needs and which cost a copy and two date parses per request (docs/PERFORMANCE.md).
pub async fn find_session_user(db: &Db, id: i64) -> Result<Option<UserView>, ApiError> {
    const SQL: &str = "SELECT u.id, u.country_id, u.email, u.first_name, u.last_name, \
                       u.phone_code, u.mobile FROM identities_users u WHERE u.id = $1";
    Ok(db.fetch_optional(SQL, &[id]).await?)
}

impl FromRow<'_> for UserView {
    fn read<R: HotRow>(cols: &mut Columns<'_, R>) -> Result<Self, sea_orm::sqlx::Error> {
        Ok(Self {
            id: cols.read()?,
            country_id: cols.read()?,
            email: cols.read()?,
            first_name: cols.read()?,
            last_name: cols.read()?,
            phone_code: cols.read()?,
            mobile: cols.read()?,
        })
    }
}

/// Whether the user still exists (a refresh of a user session): one constant statement that
/// decodes one integer (the id: a literal `1` would be a 4-byte integer on PostgreSQL).
pub async fn user_exists(db: &Db, id: i64) -> Result<bool, ApiError> {
    const SQL: &str = "SELECT id FROM identities_users WHERE id = $1";
    Ok(db.fetch_optional::<i64>(SQL, &[id]).await?.is_some())
}

pub async fn find_admin(
    db: &DatabaseConnection,
    id: i64,
) -> Result<Option<admin::Model>, ApiError> {
    Ok(admin::Entity::find_by_id(id).one(db).await?)
}

pub struct NewUser {
    pub email: String,
    pub password_digest: String,
    pub first_name: String,
    pub last_name: String,
    pub phone_code: String,
    pub mobile: String,
    pub country_id: i64,
}

pub async fn create_user(db: &DatabaseConnection, new: NewUser) -> Result<user::Model, ApiError> {
    if country::Entity::find_by_id(new.country_id)
        .one(db)
        .await?
        .is_none()
    {
        return Err(ApiError::field("country.id", "does not exist"));
    }
    let now = Utc::now();
    let model = user::ActiveModel {
        email: Set(normalize_email(&new.email)),
        password_digest: Set(new.password_digest),
        first_name: Set(new.first_name),
        last_name: Set(new.last_name),
        phone_code: Set(new.phone_code),
        mobile: Set(new.mobile),
        country_id: Set(new.country_id),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    model.insert(db).await.map_err(email_taken_or)
}

/// Applies a partial update to a user's own record.
pub async fn update_user(
    db: &DatabaseConnection,
    id: i64,
    form: crate::forms::identities::UserUpdateForm,
) -> Result<user::Model, ApiError> {
    if let Some(country_id) = crate::forms::IdRef::id_of(&form.country)
        && country::Entity::find_by_id(country_id)
            .one(db)
            .await?
            .is_none()
    {
        return Err(ApiError::field("country.id", "does not exist"));
    }
    // Only what the form sets, and `updated_at`, is written; the update returns the whole row.
    let mut model = user::ActiveModel {
        id: Unchanged(id),
        ..Default::default()
    };
    if let Some(v) = form.first_name {
        model.first_name = Set(v);
    }
    if let Some(v) = form.last_name {
        model.last_name = Set(v);
    }
    if let Some(v) = form.phone_code {
        model.phone_code = Set(v);
    }
    if let Some(v) = form.mobile {
        model.mobile = Set(v);
    }
    if let Some(id) = crate::forms::IdRef::id_of(&form.country) {
        model.country_id = Set(id);
    }
    model.updated_at = Set(Utc::now());
    Ok(model.update(db).await?)
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
) -> Result<admin::Model, ApiError> {
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
) -> Result<(), ApiError> {
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

/// The answer to an e-mail that another account of the same kind already has.
pub fn email_taken() -> ApiError {
    ApiError::Conflict("e-mail is already taken".into())
}

fn email_taken_or(error: sea_orm::DbErr) -> ApiError {
    if matches!(
        error.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    ) {
        email_taken()
    } else {
        error.into()
    }
}

pub async fn country_id_by_code(
    db: &DatabaseConnection,
    code: &str,
) -> Result<Option<i64>, ApiError> {
    Ok(country::Entity::find()
        .filter(country::Column::Code.eq(code.to_ascii_uppercase()))
        .one(db)
        .await?
        .map(|c| c.id))
}

/// One page of users, optionally filtered by a case-insensitive match on name or e-mail.
pub async fn list_users(
    db: &DatabaseConnection,
    q: Option<&str>,
    page: u64,
    per_page: u64,
) -> Result<(Vec<user::Model>, u64), ApiError> {
    let mut query = user::Entity::find();
    if let Some(q) = q.map(str::trim).filter(|q| !q.is_empty()) {
        let pattern = format!("%{}%", escape_like(&q.to_lowercase()));
        let like = |column: user::Column| {
            Expr::expr(Func::lower(Expr::col(column)))
                .like(sea_orm::sea_query::LikeExpr::new(pattern.clone()).escape('\\'))
        };
        query = query.filter(
            Condition::any()
                .add(like(user::Column::Email))
                .add(like(user::Column::FirstName))
                .add(like(user::Column::LastName)),
        );
    }
    let total = query.clone().count(db).await?;
    let rows = query
        .order_by_asc(user::Column::Id)
        .offset((page - 1) * per_page)
        .limit(per_page)
        .all(db)
        .await?;
    Ok((rows, total))
}

fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}
