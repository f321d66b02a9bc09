//! Password resets (CONTRACT §10): a request, the token the mail worker issues for it, and the
//! token's redemption.
//!
//! A request is stored as it arrived (its e-mail only), whether or not an account has that
//! address, so that both cases do the same work in the same time. The mail worker resolves it:
//! for an existing user, in one transaction, it voids all but the two newest valid tokens of the
//! user (`one_time_token::keep_newest`), stores the new token's SHA-256 and writes the message
//! that carries the token into the outbox, sealed. The token itself exists only in that message,
//! which the outbox clears once delivered; a password change or reset voids every token.

pub mod entity;
pub mod request;

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityName,
    EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde::Deserialize;

use self::entity as reset;
use self::request as reset_request;
use super::normalize_email;
use super::notices::{CredentialChange, Notice};
use super::one_time_token::{keep_newest, new_token, token_hash};
use super::user::entity as user;
use crate::db::{DataError, write_transaction};

use crate::forms::{Errors, Invalid};
use crate::mail::{self, NewMail};
use crate::mfa::SecretBox;

/// How long a token is valid after its request.
pub const TOKEN_LIFETIME_SECONDS: i64 = 30 * 60;

/// `POST /identities/password_resets`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct PasswordResetRequestForm {
    #[garde(length(min = 1, max = 254))]
    pub email: Option<String>,
}

impl PasswordResetRequestForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("email", self.email.is_some());
        errors.finish()
    }
}

/// `PATCH /identities/password_resets/current`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct PasswordResetForm {
    /// The token of the reset message.
    #[garde(length(min = 1, max = 256))]
    pub token: Option<String>,
    /// The new password: at least 12 characters, and not too easy to guess (zxcvbn score 3 or
    /// more).
    #[garde(length(chars, min = 12, max = 1024))]
    pub password: Option<String>,
}

impl PasswordResetForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("token", self.token.is_some());
        errors.require("password", self.password.is_some());
        errors.strong_password("password", self.password.as_deref(), &[]);
        errors.finish()
    }
}

/// The error of an unknown, used, voided or expired token.
pub fn invalid_token() -> Invalid {
    Invalid::field("token", "is invalid or has expired")
}

/// Stores a request for the mail worker. The same statement for every address.
pub async fn record_request(
    db: &DatabaseConnection,
    email: &str,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    reset_request::ActiveModel {
        email: Set(normalize_email(email)),
        requested_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(())
}

/// What the reset message says, where its link goes and what seals it in the outbox.
pub struct ResetMessage<'a> {
    /// The frontend's page; `{token}` is replaced by the token.
    pub url_template: &'a str,
    pub secrets: &'a SecretBox,
}

impl ResetMessage<'_> {
    fn mail(&self, recipient: &str, token: &str, expires_at: DateTime<Utc>) -> NewMail {
        let link = self.url_template.replace("{token}", token);
        NewMail {
            recipient: recipient.to_owned(),
            subject: "Reset your password".into(),
            body: format!(
                "Someone asked to reset the password of the careers account of this address.\n\n\
                 To choose a new password, open this link within 30 minutes:\n\n{link}\n\n\
                 The link works once. If you did not ask for it, ignore this message: your \
                 password stays as it is.\n"
            ),
            not_after: expires_at,
        }
    }
}

/// Resolves up to `limit` pending requests, oldest first; how many it took. A request another
/// instance took first is skipped.
pub async fn resolve_requests(
    db: &DatabaseConnection,
    message: &ResetMessage<'_>,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<usize, DataError> {
    let pending = reset_request::Entity::find()
        .order_by_asc(reset_request::Column::Id)
        .limit(limit)
        .all(db)
        .await?;
    let mut resolved = 0;
    for request in pending {
        let txn = write_transaction(db).await?;
        let claimed = reset_request::Entity::delete_by_id(request.id)
            .exec(&txn)
            .await?
            .rows_affected
            == 1;
        if !claimed {
            txn.rollback().await?;
            continue;
        }
        let account = user::Entity::find()
            .filter(Expr::expr(Func::lower(Expr::col(user::Column::Email))).eq(&request.email))
            .one(&txn)
            .await?;
        if let Some(account) = account {
            // At most the three newest tokens stay valid: asking again cannot void the owner's
            // link (CONTRACT §10). The two newest of the earlier ones stay; expired ones go.
            keep_newest(&txn, reset::Entity.table_name(), account.id, now).await?;
            let token = new_token();
            let expires_at = request.requested_at + Duration::seconds(TOKEN_LIFETIME_SECONDS);
            reset::ActiveModel {
                user_id: Set(account.id),
                token_hash: Set(token_hash(&token)),
                created_at: Set(request.requested_at),
                expires_at: Set(expires_at),
                used_at: Set(None),
                ..Default::default()
            }
            .insert(&txn)
            .await?;
            let mail = message.mail(&account.email, &token, expires_at);
            mail::enqueue(&txn, message.secrets, mail, now).await?;
            tracing::info!(user_id = account.id, "password reset issued");
        }
        txn.commit().await?;
        resolved += 1;
    }
    Ok(resolved)
}

/// The user a valid token (unused, unexpired, not voided) resets: id and e-mail.
pub async fn user_of_token(
    db: &DatabaseConnection,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<(i64, String)>, DataError> {
    let Some(reset) = reset::Entity::find()
        .filter(reset::Column::TokenHash.eq(token_hash(token)))
        .filter(reset::Column::UsedAt.is_null())
        .filter(reset::Column::ExpiresAt.gt(now))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    Ok(user::Entity::find_by_id(reset.user_id)
        .one(db)
        .await?
        .map(|user| (user.id, user.email)))
}

/// Uses the token of `user_id`, sets the user's password digest and queues the user's notice,
/// in one transaction; false when the token is no longer valid (a concurrent redemption won).
/// The user's other tokens go too.
pub async fn redeem(
    db: &DatabaseConnection,
    token: &str,
    user_id: i64,
    password_digest: String,
    notice: &Notice<'_>,
    now: DateTime<Utc>,
) -> Result<bool, DataError> {
    let txn = write_transaction(db).await?;
    let used = reset::Entity::update_many()
        .col_expr(reset::Column::UsedAt, Expr::value(now))
        .filter(reset::Column::TokenHash.eq(token_hash(token)))
        .filter(reset::Column::UserId.eq(user_id))
        .filter(reset::Column::UsedAt.is_null())
        .filter(reset::Column::ExpiresAt.gt(now))
        .exec(&txn)
        .await?
        .rows_affected
        == 1;
    if !used {
        txn.rollback().await?;
        return Ok(false);
    }
    replace_password(
        &txn,
        user_id,
        password_digest,
        notice,
        CredentialChange::PasswordReset,
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(true)
}

/// Sets a user's password digest, voids every reset token of the user and queues the user's
/// notice, in one transaction (a password change, CONTRACT §10).
pub async fn set_password(
    db: &DatabaseConnection,
    user_id: i64,
    password_digest: String,
    notice: &Notice<'_>,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    let txn = write_transaction(db).await?;
    replace_password(
        &txn,
        user_id,
        password_digest,
        notice,
        CredentialChange::PasswordChanged,
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(())
}

/// The user's new digest, every unused reset token void, and the notice of `change`, on `txn`.
async fn replace_password(
    txn: &DatabaseTransaction,
    user_id: i64,
    password_digest: String,
    notice: &Notice<'_>,
    change: CredentialChange,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    user::Entity::update_many()
        .col_expr(user::Column::PasswordDigest, Expr::value(password_digest))
        .col_expr(user::Column::UpdatedAt, Expr::value(now))
        .filter(user::Column::Id.eq(user_id))
        .exec(txn)
        .await?;
    reset::Entity::delete_many()
        .filter(reset::Column::UserId.eq(user_id))
        .filter(reset::Column::UsedAt.is_null())
        .exec(txn)
        .await?;
    notice.enqueue(txn, change, now).await?;
    Ok(())
}
