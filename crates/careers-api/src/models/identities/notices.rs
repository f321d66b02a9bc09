//! The e-mails that tell an account its credentials changed (CONTRACT §17, ASVS 2.2.3, 2.5.5):
//! a user after their password is changed or reset, an admin after their password is set or
//! changed or their second factor is enrolled, replaced or removed. Each goes through the
//! outbox in the transaction of the change, and carries no token and no link that logs in.

use chrono::{DateTime, Duration, Utc};
use sea_orm::{ConnectionTrait, DbErr};

use crate::mail::{self, NewMail};
use crate::mfa::SecretBox;

/// How long a notice may wait for the mail server before it is no longer worth sending.
const NOTICE_LIFETIME_DAYS: i64 = 7;

/// Which credential changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialChange {
    PasswordChanged,
    PasswordReset,
    PasswordSet,
    SecondFactorEnrolled,
    SecondFactorReplaced,
    SecondFactorRemoved,
}

impl CredentialChange {
    fn subject_and_what(self) -> (&'static str, &'static str) {
        match self {
            Self::PasswordChanged => ("Your password was changed", "your password was changed"),
            Self::PasswordReset => (
                "Your password was reset",
                "your password was reset with a link sent to this address",
            ),
            Self::PasswordSet => (
                "Your password was set",
                "your password was set by an operator",
            ),
            Self::SecondFactorEnrolled => (
                "A second factor was added to your account",
                "an authenticator app was confirmed as your second factor",
            ),
            Self::SecondFactorReplaced => (
                "Your second factor was replaced",
                "your authenticator app was replaced by a new one",
            ),
            Self::SecondFactorRemoved => (
                "Your second factor was removed",
                "the second factor of your account was removed",
            ),
        }
    }

    fn mail(self, recipient: &str, now: DateTime<Utc>) -> NewMail {
        let (subject, what) = self.subject_and_what();
        let at = now.format("%Y-%m-%d %H:%M UTC");
        NewMail {
            recipient: recipient.to_owned(),
            subject: subject.into(),
            body: format!(
                "On {at}, {what}. Every other session of your account has ended.\n\n\
                 If this was you, there is nothing else to do. If it was not, sign in and \
                 change your password at once (or ask an operator to), and tell your \
                 administrator.\n"
            ),
            not_after: now + Duration::days(NOTICE_LIFETIME_DAYS),
        }
    }
}

/// Where a notice goes and what seals it in the outbox.
pub struct Notice<'a> {
    pub secrets: &'a SecretBox,
    pub recipient: &'a str,
}

impl Notice<'_> {
    /// Queues the notice of `change` on `conn` (the change's transaction).
    pub async fn enqueue(
        &self,
        conn: &impl ConnectionTrait,
        change: CredentialChange,
        now: DateTime<Utc>,
    ) -> Result<(), DbErr> {
        mail::enqueue(conn, self.secrets, change.mail(self.recipient, now), now).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_carries_no_link() {
        let now = Utc::now();
        for change in [
            CredentialChange::PasswordChanged,
            CredentialChange::PasswordReset,
            CredentialChange::PasswordSet,
            CredentialChange::SecondFactorEnrolled,
            CredentialChange::SecondFactorReplaced,
            CredentialChange::SecondFactorRemoved,
        ] {
            let mail = change.mail("a@example.com", now);
            assert!(!mail.body.contains("://"), "{change:?}: {}", mail.body);
            assert!(!mail.subject.is_empty());
        }
    }
}
