//! Outgoing mail through a durable outbox (CONTRACT §10). The worker that drives it is the
//! server's background work (`app::spawn_mail_worker`).
//!
//! A message is a row of `mail_outbox`, written in the transaction that makes its content (a
//! password reset's token), so that it is never lost and never sent for a rolled-back change.
//! One worker per process delivers due messages with `lettre`: over SMTP when `SMTP_URL` is set,
//! otherwise as `.eml` files in `MAIL_OUTBOX_DIR` (development and tests). A failed attempt is
//! retried after 10 s, then twice as long each time up to 5 minutes; at start every pending
//! message is due at once. An attempt leases its message for a minute (a conditional update),
//! so that instances sharing a database never deliver one message twice; a delivered message
//! is marked sent and its body cleared at once. A message whose content has expired (its token)
//! is dropped instead of delivered. Nothing of a message's body is ever logged.
//!
//! No usable token is at rest in clear (CONTRACT §10): every body is stored sealed with the
//! `MFA_ENCRYPTION_KEY` ring (`mfa::SecretBox`, bound to its recipient) and opened only to be
//! sent. Without `SMTP_URL` the `.eml` files are written into a directory only the service's
//! user may enter (0700), each file 0600.

pub mod entity;

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::{AsyncFileTransport, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect, Set,
};
use tokio::sync::Notify;

use self::entity as outbox;
use crate::db::DataError;
use crate::mfa::SecretBox;

/// The first retry's wait; each further one doubles, up to [`MAX_BACKOFF_SECONDS`].
pub const FIRST_BACKOFF_SECONDS: i64 = 10;
pub const MAX_BACKOFF_SECONDS: i64 = 5 * 60;
/// How long an attempt keeps other instances off its message.
const LEASE_SECONDS: i64 = 60;
/// Messages and requests taken per round.
pub const BATCH: u64 = 20;
/// How long one SMTP exchange may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(10);

/// A message to store in the outbox.
pub struct NewMail {
    pub recipient: String,
    pub subject: String,
    pub body: String,
    /// Past this, the message is dropped rather than delivered.
    pub not_after: DateTime<Utc>,
}

/// The associated data a body is sealed with: its recipient's, so that it opens for no other.
fn body_aad(recipient: &str) -> Vec<u8> {
    format!("careers-api/mail/v1/{recipient}").into_bytes()
}

/// Stores a message, due now, on `conn` (the caller's transaction), its body sealed.
pub async fn enqueue(
    conn: &impl ConnectionTrait,
    secrets: &SecretBox,
    mail: NewMail,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let body = secrets.seal_with(&body_aad(&mail.recipient), mail.body.as_bytes());
    outbox::ActiveModel {
        recipient: Set(mail.recipient),
        subject: Set(mail.subject),
        body: Set(Some(body)),
        created_at: Set(now),
        not_after: Set(mail.not_after),
        attempts: Set(0),
        next_attempt_at: Set(now),
        sent_at: Set(None),
        dropped_at: Set(None),
        last_error: Set(None),
        ..Default::default()
    }
    .insert(conn)
    .await?;
    Ok(())
}

/// Where messages go.
enum Transport {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    Files(AsyncFileTransport<Tokio1Executor>, PathBuf),
}

/// The mail settings of the process and the worker's wake-up call.
pub struct Mailer {
    transport: Transport,
    from: Mailbox,
    reset_url: String,
    verification_url: String,
    invitation_url: String,
    wake: Notify,
}

/// The settings `Mailer::new` reads (validated by `Config`).
pub struct MailSettings<'a> {
    pub smtp_url: Option<&'a str>,
    pub from: &'a str,
    pub reset_url: &'a str,
    pub verification_url: &'a str,
    pub invitation_url: &'a str,
    pub outbox_dir: &'a str,
}

impl Mailer {
    pub fn new(settings: MailSettings<'_>) -> Result<Self, String> {
        let transport = match settings.smtp_url {
            Some(url) => Transport::Smtp(
                AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                    .map_err(|e| format!("SMTP_URL: {e}"))?
                    .timeout(Some(SMTP_TIMEOUT))
                    .build(),
            ),
            None => Transport::Files(
                AsyncFileTransport::<Tokio1Executor>::new(settings.outbox_dir),
                PathBuf::from(settings.outbox_dir),
            ),
        };
        Ok(Self {
            transport,
            from: settings
                .from
                .parse()
                .map_err(|e| format!("MAIL_FROM: {e}"))?,
            reset_url: settings.reset_url.to_owned(),
            verification_url: settings.verification_url.to_owned(),
            invitation_url: settings.invitation_url.to_owned(),
            wake: Notify::new(),
        })
    }

    /// Asks the worker to look for work now (a request was just stored).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Resolves when [`wake`](Self::wake) was called.
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// The frontend's reset page, `{token}` to be replaced.
    pub fn reset_url(&self) -> &str {
        &self.reset_url
    }

    /// The frontend's e-mail verification page, `{token}` to be replaced.
    pub fn verification_url(&self) -> &str {
        &self.verification_url
    }

    /// The frontend's invitation page, `{token}` to be replaced.
    pub fn invitation_url(&self) -> &str {
        &self.invitation_url
    }

    async fn send(&self, message: Message) -> Result<(), String> {
        match &self.transport {
            Transport::Smtp(smtp) => smtp
                .send(message)
                .await
                .map(drop)
                .map_err(|e| e.to_string()),
            Transport::Files(files, dir) => {
                private_dir(dir)
                    .await
                    .map_err(|e| format!("{}: {e}", dir.display()))?;
                let id = files.send(message).await.map_err(|e| e.to_string())?;
                let file = dir.join(format!("{id}.eml"));
                set_mode(&file, 0o600)
                    .await
                    .map_err(|e| format!("{}: {e}", file.display()))
            }
        }
    }
}

/// Creates `dir` if need be and lets only the service's user enter it.
async fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    tokio::fs::create_dir_all(dir).await?;
    set_mode(dir, 0o700).await
}

#[cfg(unix)]
async fn set_mode(path: &std::path::Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    tokio::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).await
}

#[cfg(not(unix))]
async fn set_mode(_: &std::path::Path, _: u32) -> std::io::Result<()> {
    Ok(())
}

/// The wait before attempt `attempts + 1`, after `attempts` failed ones.
pub fn backoff_seconds(attempts: i32) -> i64 {
    let doublings = attempts.saturating_sub(1).clamp(0, 16) as u32;
    (FIRST_BACKOFF_SECONDS << doublings).min(MAX_BACKOFF_SECONDS)
}

/// At start, messages waiting out a backoff are made due at once.
pub async fn make_pending_due(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<(), DbErr> {
    outbox::Entity::update_many()
        .col_expr(outbox::Column::NextAttemptAt, Expr::value(now))
        .filter(outbox::Column::SentAt.is_null())
        .filter(outbox::Column::DroppedAt.is_null())
        .filter(outbox::Column::NextAttemptAt.gt(now))
        .exec(db)
        .await?;
    Ok(())
}

/// How many messages wait for delivery (the `careers_mail_outbox_pending` gauge).
pub async fn pending(db: &DatabaseConnection) -> Result<u64, DbErr> {
    use sea_orm::PaginatorTrait;
    outbox::Entity::find()
        .filter(outbox::Column::SentAt.is_null())
        .filter(outbox::Column::DroppedAt.is_null())
        .count(db)
        .await
}

/// Delivers the messages due at `now`, each under a lease.
pub async fn deliver_due(
    db: &DatabaseConnection,
    mailer: &Mailer,
    secrets: &SecretBox,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    let due = outbox::Entity::find()
        .filter(outbox::Column::SentAt.is_null())
        .filter(outbox::Column::DroppedAt.is_null())
        .filter(outbox::Column::NextAttemptAt.lte(now))
        .order_by_asc(outbox::Column::NextAttemptAt)
        .limit(BATCH)
        .all(db)
        .await?;
    for message in due {
        // The lease: only the instance whose update finds the row as it read it goes on.
        let leased = outbox::Entity::update_many()
            .col_expr(
                outbox::Column::NextAttemptAt,
                Expr::value(now + chrono::Duration::seconds(LEASE_SECONDS)),
            )
            .filter(outbox::Column::Id.eq(message.id))
            .filter(outbox::Column::NextAttemptAt.eq(message.next_attempt_at))
            .filter(outbox::Column::SentAt.is_null())
            .exec(db)
            .await?
            .rows_affected
            == 1;
        if !leased {
            continue;
        }
        deliver(db, mailer, secrets, message, now).await?;
    }
    Ok(())
}

async fn deliver(
    db: &DatabaseConnection,
    mailer: &Mailer,
    secrets: &SecretBox,
    message: outbox::Model,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    let id = message.id;
    let attempts = message.attempts + 1;
    let mut row: outbox::ActiveModel = message.clone().into();
    if message.not_after <= now || message.body.is_none() {
        tracing::warn!(
            mail_id = id,
            attempts = message.attempts,
            "mail outbox: message expired before delivery; dropped"
        );
        row.dropped_at = Set(Some(now));
        row.body = Set(None);
        row.update(db).await?;
        return Ok(());
    }
    let outcome = match compose(mailer, secrets, &message) {
        Ok(mail) => mailer.send(mail).await,
        Err(error) => Err(error),
    };
    row.attempts = Set(attempts);
    match outcome {
        Ok(()) => {
            row.sent_at = Set(Some(now));
            row.body = Set(None);
            row.last_error = Set(None);
            row.update(db).await?;
            tracing::info!(mail_id = id, attempts, "mail outbox: delivered");
        }
        Err(error) => {
            ::metrics::counter!(crate::metrics::MAIL_FAILURES).increment(1);
            let wait = backoff_seconds(attempts);
            let error: String = error.chars().take(500).collect();
            row.next_attempt_at = Set(now + chrono::Duration::seconds(wait));
            row.last_error = Set(Some(error.clone()));
            row.update(db).await?;
            tracing::warn!(
                mail_id = id,
                attempts,
                retry_in_seconds = wait,
                error,
                "mail outbox: delivery failed"
            );
        }
    }
    Ok(())
}

fn compose(
    mailer: &Mailer,
    secrets: &SecretBox,
    message: &outbox::Model,
) -> Result<Message, String> {
    let to: Mailbox = message
        .recipient
        .parse()
        .map_err(|e| format!("recipient: {e}"))?;
    let sealed = message.body.as_deref().unwrap_or_default();
    let body = secrets
        .open_with(&body_aad(&message.recipient), sealed)
        .and_then(|(body, _)| String::from_utf8(body).ok())
        .ok_or("the body does not open with MFA_ENCRYPTION_KEY: was a key removed too early?")?;
    Message::builder()
        .from(mailer.from.clone())
        .to(to)
        .subject(&message.subject)
        .header(ContentType::TEXT_PLAIN)
        .body(body)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_start_at_10_s_and_double_up_to_5_minutes() {
        let waits: Vec<i64> = (1..=8).map(backoff_seconds).collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(backoff_seconds(1000), 300);
    }
}
