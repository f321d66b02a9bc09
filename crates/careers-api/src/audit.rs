//! Audit events (CONTRACT §13): every admin action is one `info` line of the target
//! `careers_api::audit` with the flat fields `admin_id` (who; absent for the command line),
//! `action` and `object_id` (the record acted on). Never a secret: ids and a fixed action name.
//!
//! Operators route them with the log filter (`RUST_LOG=info` shows them; the target isolates
//! them: `careers_api::audit=info`).

/// What an admin did, as the `action` field spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    OrgProfileCreated,
    OrgProfileUpdated,
    UserSessionsEnded,
    SecondFactorEnrolled,
    SecondFactorReplaced,
    SecondFactorRemoved,
    AdminPasswordChanged,
    AdminPasswordSet,
    CompanySuspended,
    CompanyUnsuspended,
    JobArchived,
    JobReleased,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Self::OrgProfileCreated => "org_profile.created",
            Self::OrgProfileUpdated => "org_profile.updated",
            Self::UserSessionsEnded => "user.sessions_ended",
            Self::SecondFactorEnrolled => "admin.second_factor_enrolled",
            Self::SecondFactorReplaced => "admin.second_factor_replaced",
            Self::SecondFactorRemoved => "admin.second_factor_removed",
            Self::AdminPasswordChanged => "admin.password_changed",
            Self::AdminPasswordSet => "admin.password_set",
            Self::CompanySuspended => "company_suspended",
            Self::CompanyUnsuspended => "company_unsuspended",
            Self::JobArchived => "job_archived",
            Self::JobReleased => "job_released",
        }
    }
}

/// Logs one admin action. `admin_id` is `None` when the command line acted.
pub fn record(admin_id: Option<i64>, action: Action, object_id: i64) {
    let action = action.name();
    match admin_id {
        Some(admin_id) => tracing::info!(
            target: "careers_api::audit",
            admin_id,
            action,
            object_id,
            "admin action"
        ),
        None => tracing::info!(
            target: "careers_api::audit",
            action,
            object_id,
            "admin action (command line)"
        ),
    }
}
