//! `Identities::Admin`: a staff member of the team dashboard, in a store of its own.

pub mod entity;
pub mod recovery_code;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    Set, Unchanged,
};
use serde::Serialize;

use self::entity as admin;
use super::notices::{CredentialChange, Notice};
use super::{email_taken_or, normalize_email};
use crate::db::{DataError, write_transaction};
use crate::mfa::{self, Factor, SecretBox};

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

/// Replaces an admin's password digest (a change, or `admins set-password`) and queues the
/// admin's notice of `change`, in one transaction.
pub async fn set_admin_password_digest(
    db: &DatabaseConnection,
    id: i64,
    password_digest: String,
    notice: &Notice<'_>,
    change: CredentialChange,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    let txn = write_transaction(db).await?;
    admin::ActiveModel {
        id: Unchanged(id),
        password_digest: Set(password_digest),
        updated_at: Set(now),
        ..Default::default()
    }
    .update(&txn)
    .await?;
    notice.enqueue(&txn, change, now).await?;
    txn.commit().await?;
    Ok(())
}

/// Starts (or restarts) an enrolment: the sealed secret, waiting for its first code. A first
/// enrolment is a `Conflict` when a factor was confirmed meanwhile; a `replacement` (its code
/// checked by the caller) leaves the confirmed factor in force until it is confirmed.
pub async fn start_totp(
    db: &DatabaseConnection,
    id: i64,
    sealed_secret: String,
    replacement: bool,
) -> Result<(), DataError> {
    let mut update = admin::Entity::update_many()
        .col_expr(
            admin::Column::TotpPendingSecret,
            Expr::value(Some(sealed_secret)),
        )
        .filter(admin::Column::Id.eq(id));
    if !replacement {
        update = update.filter(admin::Column::TotpConfirmedAt.is_null());
    }
    let started = update.exec(db).await?.rows_affected == 1;
    if started {
        Ok(())
    } else {
        Err(DataError::Conflict(
            "a second factor is already confirmed".into(),
        ))
    }
}

/// Confirms the enrolment `sealed_secret` (the one a code at `step` was checked against) as
/// the admin's factor, replacing a confirmed one and the recovery codes (with `code_hashes`),
/// in one transaction with the admin's notice, if any; `Conflict` when that enrolment was
/// confirmed or restarted meanwhile.
#[allow(clippy::too_many_arguments)]
pub async fn confirm_totp(
    db: &DatabaseConnection,
    id: i64,
    sealed_secret: &str,
    step: i64,
    code_hashes: Vec<String>,
    now: DateTime<Utc>,
    notice: Option<(&Notice<'_>, CredentialChange)>,
) -> Result<(), DataError> {
    let txn = write_transaction(db).await?;
    let confirmed = admin::Entity::update_many()
        .col_expr(admin::Column::TotpSecret, Expr::value(Some(sealed_secret)))
        .col_expr(
            admin::Column::TotpPendingSecret,
            Expr::value(Option::<String>::None),
        )
        .col_expr(admin::Column::TotpConfirmedAt, Expr::value(Some(now)))
        .col_expr(admin::Column::TotpLastStep, Expr::value(step))
        .filter(admin::Column::Id.eq(id))
        .filter(admin::Column::TotpPendingSecret.eq(sealed_secret))
        .exec(&txn)
        .await?
        .rows_affected
        == 1;
    if !confirmed {
        txn.rollback().await?;
        return Err(DataError::Conflict(
            "this enrolment was confirmed or restarted meanwhile".into(),
        ));
    }
    replace_recovery_codes(&txn, id, code_hashes).await?;
    if let Some((notice, change)) = notice {
        notice.enqueue(&txn, change, now).await?;
    }
    txn.commit().await?;
    Ok(())
}

async fn replace_recovery_codes(
    conn: &impl ConnectionTrait,
    id: i64,
    code_hashes: Vec<String>,
) -> Result<(), DataError> {
    recovery_code::Entity::delete_many()
        .filter(recovery_code::Column::AdminId.eq(id))
        .exec(conn)
        .await?;
    for hash in code_hashes {
        recovery_code::ActiveModel {
            admin_id: Set(id),
            code_hash: Set(hash),
            used_at: Set(None),
            ..Default::default()
        }
        .insert(conn)
        .await?;
    }
    Ok(())
}

/// Records that a code of `step` was accepted; false when that step (or a later one) was
/// already used: a code is accepted once.
pub async fn use_totp_step(db: &DatabaseConnection, id: i64, step: i64) -> Result<bool, DataError> {
    Ok(admin::Entity::update_many()
        .col_expr(admin::Column::TotpLastStep, Expr::value(step))
        .filter(admin::Column::Id.eq(id))
        .filter(admin::Column::TotpLastStep.lt(step))
        .exec(db)
        .await?
        .rows_affected
        == 1)
}

/// Uses one unused recovery code of the admin; false when there is none with this hash.
pub async fn use_recovery_code(
    db: &DatabaseConnection,
    id: i64,
    code_hash: &str,
    now: DateTime<Utc>,
) -> Result<bool, DataError> {
    let Some(code) = recovery_code::Entity::find()
        .filter(recovery_code::Column::AdminId.eq(id))
        .filter(recovery_code::Column::CodeHash.eq(code_hash))
        .filter(recovery_code::Column::UsedAt.is_null())
        .one(db)
        .await?
    else {
        return Ok(false);
    };
    Ok(recovery_code::Entity::update_many()
        .col_expr(recovery_code::Column::UsedAt, Expr::value(Some(now)))
        .filter(recovery_code::Column::Id.eq(code.id))
        .filter(recovery_code::Column::UsedAt.is_null())
        .exec(db)
        .await?
        .rows_affected
        == 1)
}

/// Replaces the sealed secret (after a rotation of `MFA_ENCRYPTION_KEY`).
pub async fn reseal_totp(
    db: &DatabaseConnection,
    id: i64,
    sealed: String,
) -> Result<(), DataError> {
    admin::Entity::update_many()
        .col_expr(admin::Column::TotpSecret, Expr::value(Some(sealed)))
        .filter(admin::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Removes the factor: secret, confirmation, a waiting enrolment and the recovery codes, and
/// queues the admin's notice, in one transaction.
pub async fn remove_totp(
    db: &DatabaseConnection,
    id: i64,
    notice: &Notice<'_>,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    let txn = write_transaction(db).await?;
    admin::Entity::update_many()
        .col_expr(
            admin::Column::TotpSecret,
            Expr::value(Option::<String>::None),
        )
        .col_expr(
            admin::Column::TotpConfirmedAt,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(admin::Column::TotpLastStep, Expr::value(0i64))
        .col_expr(
            admin::Column::TotpPendingSecret,
            Expr::value(Option::<String>::None),
        )
        .filter(admin::Column::Id.eq(id))
        .exec(&txn)
        .await?;
    replace_recovery_codes(&txn, id, Vec::new()).await?;
    notice
        .enqueue(&txn, CredentialChange::SecondFactorRemoved, now)
        .await?;
    txn.commit().await?;
    Ok(())
}

/// Checks the second factor of `admin` at `now` (CONTRACT §11): a TOTP code of the current
/// step or one either side, not used before; or an unused recovery code, now used. A secret
/// sealed with an older `MFA_ENCRYPTION_KEY` is sealed again with the current one on its first
/// use; a secret no listed key opens is `Inconsistent` (a 500, logged), not a wrong code.
pub async fn check_factor(
    db: &DatabaseConnection,
    secrets: &SecretBox,
    admin: &admin::Model,
    otp: Option<&str>,
    recovery_code: Option<&str>,
    now: i64,
) -> Result<Factor, DataError> {
    let (Some(sealed), Some(_)) = (admin.totp_secret.as_deref(), admin.totp_confirmed_at) else {
        return Ok(Factor::NotRequired);
    };
    if let Some(code) = otp {
        let Some((secret, stale_key)) = secrets.open(admin.id, sealed) else {
            tracing::error!(
                admin_id = admin.id,
                "TOTP secret does not open with MFA_ENCRYPTION_KEY: was a key removed too early?"
            );
            return Err(DataError::Inconsistent);
        };
        let Some(step) = mfa::matching_step(&secret, code.trim(), now) else {
            return Ok(Factor::Wrong);
        };
        if !use_totp_step(db, admin.id, step).await? {
            return Ok(Factor::Wrong);
        }
        if stale_key {
            reseal_totp(db, admin.id, secrets.seal(admin.id, &secret)).await?;
        }
        return Ok(Factor::Verified);
    }
    if let Some(code) = recovery_code {
        let at = DateTime::from_timestamp(now, 0).unwrap_or_default();
        if use_recovery_code(db, admin.id, &mfa::recovery_code_hash(code), at).await? {
            tracing::warn!(admin_id = admin.id, "recovery code used");
            return Ok(Factor::Verified);
        }
        return Ok(Factor::Wrong);
    }
    Ok(Factor::Missing)
}
