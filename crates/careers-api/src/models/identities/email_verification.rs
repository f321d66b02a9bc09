//! E-mail verification (CONTRACT §14): sign-up (and a user's later request) queues a message
//! with a single-use link; redeeming its token marks the user's e-mail verified.
//!
//! Tokens are those of [`super::one_time_token`]: 256 bits, kept as their SHA-256, valid 24
//! hours; a new request keeps the three newest of the user valid. The token exists only in the
//! message, which the outbox keeps sealed and clears once delivered.

pub mod entity;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityName, EntityTrait,
    QueryFilter, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as verification;
use super::one_time_token::{keep_newest, new_token, token_hash};
use super::user::entity as user;
use crate::db::{DataError, write_transaction};
use crate::forms::{Errors, Invalid};
use crate::mail::{self, NewMail};
use crate::mfa::SecretBox;

/// How long a token is valid after it was issued.
pub const TOKEN_LIFETIME_SECONDS: i64 = 24 * 60 * 60;

/// `PATCH /identities/email_verifications/current`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct EmailVerificationForm {
    /// The token of the verification message.
    #[garde(length(min = 1, max = 256))]
    pub token: Option<String>,
}

impl EmailVerificationForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("token", self.token.is_some());
        errors.finish()
    }
}

/// The error of an unknown, used, voided or expired token.
pub fn invalid_token() -> Invalid {
    Invalid::field("token", "is invalid or has expired")
}

/// The state of a user's e-mail.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EmailVerificationView {
    pub email: String,
    /// When the e-mail was verified (RFC 3339); null until then.
    pub verified_at: Option<String>,
}

impl From<&user::Model> for EmailVerificationView {
    fn from(user: &user::Model) -> Self {
        Self {
            email: user.email.clone(),
            verified_at: user
                .email_verified_at
                .map(|at| at.to_rfc3339_opts(SecondsFormat::AutoSi, true)),
        }
    }
}

/// What the verification message says, where its link goes and what seals it in the outbox.
pub struct VerificationMessage<'a> {
    /// The frontend's page; `{token}` is replaced by the token.
    pub url_template: &'a str,
    pub secrets: &'a SecretBox,
}

impl VerificationMessage<'_> {
    fn mail(&self, recipient: &str, token: &str, expires_at: DateTime<Utc>) -> NewMail {
        let link = self.url_template.replace("{token}", token);
        NewMail {
            recipient: recipient.to_owned(),
            subject: "Confirm your e-mail address".into(),
            body: format!(
                "Please confirm that this address belongs to your careers account by opening \
                 this link within 24 hours:\n\n{link}\n\n\
                 The link works once. If you did not create an account, ignore this message.\n"
            ),
            not_after: expires_at,
        }
    }

    /// Issues a new token for the user and queues its message on `conn` (the caller's
    /// transaction). At most the three newest tokens of the user stay valid.
    pub async fn issue(
        &self,
        conn: &impl ConnectionTrait,
        user_id: i64,
        email: &str,
        now: DateTime<Utc>,
    ) -> Result<(), DataError> {
        keep_newest(conn, verification::Entity.table_name(), user_id, now).await?;
        let token = new_token();
        let expires_at = now + Duration::seconds(TOKEN_LIFETIME_SECONDS);
        verification::ActiveModel {
            user_id: Set(user_id),
            token_hash: Set(token_hash(&token)),
            created_at: Set(now),
            expires_at: Set(expires_at),
            used_at: Set(None),
            ..Default::default()
        }
        .insert(conn)
        .await?;
        mail::enqueue(
            conn,
            self.secrets,
            self.mail(email, &token, expires_at),
            now,
        )
        .await?;
        Ok(())
    }
}

/// A user's request for a new message (`POST /identities/email_verifications`): `Conflict`
/// when the e-mail is verified already.
pub async fn request(
    db: &DatabaseConnection,
    message: &VerificationMessage<'_>,
    account: &user::Model,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    if account.email_verified_at.is_some() {
        return Err(DataError::Conflict("the e-mail is already verified".into()));
    }
    let txn = write_transaction(db).await?;
    message.issue(&txn, account.id, &account.email, now).await?;
    txn.commit().await?;
    Ok(())
}

/// Redeems a token: uses it, marks its user's e-mail verified (the first time) and voids the
/// user's other tokens, in one transaction. The user's id, or `None` for an unknown, used or
/// expired token (a concurrent redemption of the same token finds it used).
pub async fn verify(
    db: &DatabaseConnection,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<i64>, DataError> {
    let hash = token_hash(token);
    let txn = write_transaction(db).await?;
    let Some(found) = verification::Entity::find()
        .filter(verification::Column::TokenHash.eq(&hash))
        .filter(verification::Column::UsedAt.is_null())
        .filter(verification::Column::ExpiresAt.gt(now))
        .one(&txn)
        .await?
    else {
        txn.rollback().await?;
        return Ok(None);
    };
    let used = verification::Entity::update_many()
        .col_expr(verification::Column::UsedAt, Expr::value(now))
        .filter(verification::Column::Id.eq(found.id))
        .filter(verification::Column::UsedAt.is_null())
        .exec(&txn)
        .await?
        .rows_affected
        == 1;
    if !used {
        txn.rollback().await?;
        return Ok(None);
    }
    user::Entity::update_many()
        .col_expr(user::Column::EmailVerifiedAt, Expr::value(now))
        .col_expr(user::Column::UpdatedAt, Expr::value(now))
        .filter(user::Column::Id.eq(found.user_id))
        .filter(user::Column::EmailVerifiedAt.is_null())
        .exec(&txn)
        .await?;
    verification::Entity::delete_many()
        .filter(verification::Column::UserId.eq(found.user_id))
        .filter(verification::Column::UsedAt.is_null())
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(Some(found.user_id))
}
