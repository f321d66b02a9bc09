//! `Identities::User`: a person of the candidate, employer and marketplace frontends.

pub mod entity;

use std::borrow::Cow;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    Set, Unchanged,
};
use serde::{Deserialize, Serialize};

use self::entity as user;
use super::email_verification::VerificationMessage;
use super::{email_taken_or, normalize_email};
use crate::db::{DataError, Db, hot_row, page_of, write_transaction};
use crate::forms::{Errors, IdRef, Invalid};
use crate::models::country::entity as country;

hot_row! {
    /// `Identities::User` as specification §2.3 lists it; also the row of the session's user, the
    /// hottest read ([`find_session_user`]).
    #[derive(Debug, Serialize, utoipa::ToSchema)]
    pub struct UserView {
        pub id: i64 = "u.id",
        pub country_id: i64 = "u.country_id",
        pub email: String = "u.email",
        pub first_name: String = "u.first_name",
        pub last_name: String = "u.last_name",
        pub phone_code: String = "u.phone_code",
        pub mobile: String = "u.mobile",
    }
}

impl From<&user::Model> for UserView {
    fn from(u: &user::Model) -> Self {
        Self {
            id: u.id,
            country_id: u.country_id,
            email: u.email.clone(),
            first_name: u.first_name.clone(),
            last_name: u.last_name.clone(),
            phone_code: u.phone_code.clone(),
            mobile: u.mobile.clone(),
        }
    }
}

/// An identity as another party sees it: the name only. Borrowed or owned text, as
/// [`ApplicationAttrs`](crate::models::careers::job_application::ApplicationAttrs)'s.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct UserBrief<'a> {
    pub id: i64,
    pub first_name: Cow<'a, str>,
    pub last_name: Cow<'a, str>,
}

impl From<&user::Model> for UserBrief<'static> {
    fn from(u: &user::Model) -> Self {
        Self {
            id: u.id,
            first_name: u.first_name.clone().into(),
            last_name: u.last_name.clone().into(),
        }
    }
}

impl UserBrief<'_> {
    /// The same brief with its text owned.
    pub fn into_owned(self) -> UserBrief<'static> {
        UserBrief {
            id: self.id,
            first_name: self.first_name.into_owned().into(),
            last_name: self.last_name.into_owned().into(),
        }
    }
}

/// `POST /identities/users` (sign-up).
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct SignUpForm {
    #[garde(email, length(max = 254))]
    pub email: Option<String>,
    /// At least 12 characters, and not too easy to guess (zxcvbn score 3 or more).
    #[garde(length(chars, min = 12, max = 1024))]
    pub password: Option<String>,
    #[garde(length(chars, min = 1, max = 100))]
    pub first_name: Option<String>,
    #[garde(length(chars, min = 1, max = 100))]
    pub last_name: Option<String>,
    #[garde(length(chars, min = 1, max = 8))]
    pub phone_code: Option<String>,
    #[garde(length(chars, min = 1, max = 32))]
    pub mobile: Option<String>,
    #[garde(dive)]
    pub country: Option<IdRef>,
}

impl SignUpForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("email", self.email.is_some());
        errors.require("password", self.password.is_some());
        let inputs = [&self.email, &self.first_name, &self.last_name];
        let inputs: Vec<&str> = inputs.iter().filter_map(|i| i.as_deref()).collect();
        errors.strong_password("password", self.password.as_deref(), &inputs);
        errors.require("first_name", self.first_name.is_some());
        errors.require("last_name", self.last_name.is_some());
        errors.require("phone_code", self.phone_code.is_some());
        errors.require("mobile", self.mobile.is_some());
        errors.require("country", self.country.is_some());
        errors.finish()
    }
}

/// `PATCH /identities/user/{id}`: only the fields present change.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct UserUpdateForm {
    #[garde(length(chars, min = 1, max = 100))]
    pub first_name: Option<String>,
    #[garde(length(chars, min = 1, max = 100))]
    pub last_name: Option<String>,
    #[garde(length(chars, min = 1, max = 8))]
    pub phone_code: Option<String>,
    #[garde(length(chars, min = 1, max = 32))]
    pub mobile: Option<String>,
    #[garde(dive)]
    pub country: Option<IdRef>,
}

impl UserUpdateForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        Errors::of(self).finish()
    }
}

pub async fn find_user_by_email(
    db: &DatabaseConnection,
    email: &str,
) -> Result<Option<user::Model>, DataError> {
    Ok(user::Entity::find()
        .filter(Expr::expr(Func::lower(Expr::col(user::Column::Email))).eq(normalize_email(email)))
        .one(db)
        .await?)
}

/// The user of a session, as the user areas use it: the hottest read (every user-context
/// request). Its SQL is a constant instead of being built per request, and it reads only the
/// columns of [`UserView`]: not the password digest or the timestamps, which no user-area
/// handler needs and which cost a copy and two date parses per request (docs/PERFORMANCE.md).
pub async fn find_session_user(db: &Db, id: i64) -> Result<Option<UserView>, DataError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {} FROM identities_users u WHERE u.id = $1",
            UserView::COLUMNS
        )
    });
    Ok(db.fetch_optional(SQL.as_str(), &[id]).await?)
}

/// The whole row of a user, if it exists.
pub async fn find_user(db: &DatabaseConnection, id: i64) -> Result<Option<user::Model>, DataError> {
    Ok(user::Entity::find_by_id(id).one(db).await?)
}

/// Whether the user still exists (a refresh of a user session): one constant statement that
/// decodes one integer (the id: a literal `1` would be a 4-byte integer on PostgreSQL).
pub async fn user_exists(db: &Db, id: i64) -> Result<bool, DataError> {
    const SQL: &str = "SELECT id FROM identities_users WHERE id = $1";
    Ok(db.fetch_optional::<i64>(SQL, &[id]).await?.is_some())
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

/// How a new user's e-mail is proven theirs (CONTRACT §14).
pub enum EmailProof<'a> {
    /// Verified at creation (`users create`, the demo data).
    Verified,
    /// A verification message is queued with the user, in the same transaction (sign-up).
    Send(&'a VerificationMessage<'a>),
}

/// Creates a user and, as `proof` says, marks the e-mail verified or queues its verification
/// message, in one transaction.
pub async fn create_user(
    db: &DatabaseConnection,
    new: NewUser,
    proof: EmailProof<'_>,
    now: DateTime<Utc>,
) -> Result<user::Model, DataError> {
    if country::Entity::find_by_id(new.country_id)
        .one(db)
        .await?
        .is_none()
    {
        return Err(DataError::invalid("country.id", "does not exist"));
    }
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
        email_verified_at: Set(matches!(proof, EmailProof::Verified).then_some(now)),
        ..Default::default()
    };
    let txn = write_transaction(db).await?;
    let created = model.insert(&txn).await.map_err(email_taken_or)?;
    if let EmailProof::Send(message) = proof {
        message.issue(&txn, created.id, &created.email, now).await?;
    }
    txn.commit().await?;
    Ok(created)
}

/// Applies a partial update to a user's own record.
pub async fn update_user(
    db: &DatabaseConnection,
    id: i64,
    form: UserUpdateForm,
) -> Result<user::Model, DataError> {
    if let Some(country_id) = IdRef::id_of(&form.country)
        && country::Entity::find_by_id(country_id)
            .one(db)
            .await?
            .is_none()
    {
        return Err(DataError::invalid("country.id", "does not exist"));
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
    if let Some(id) = IdRef::id_of(&form.country) {
        model.country_id = Set(id);
    }
    model.updated_at = Set(Utc::now());
    Ok(model.update(db).await?)
}

/// One page of users, optionally filtered by a case-insensitive match on name or e-mail.
pub async fn list_users(
    db: &DatabaseConnection,
    q: Option<&str>,
    page: u64,
    per_page: u64,
) -> Result<(Vec<user::Model>, u64), DataError> {
    let mut query = user::Entity::find();
    let columns = [
        user::Column::Email,
        user::Column::FirstName,
        user::Column::LastName,
    ];
    if let Some(matching) = crate::db::contains_any(q, columns.map(Expr::col)) {
        query = query.filter(matching);
    }
    let total = query.clone().count(db).await?;
    let rows = page_of(query.order_by_asc(user::Column::Id), page, per_page)
        .all(db)
        .await?;
    Ok((rows, total))
}
