//! `Org::*`: companies, the org profiles that make a user an employer of one, their roles, and
//! the invitations that bring colleagues in.

pub mod company;
pub mod invitation;
pub mod member;
pub mod user_profile;
pub mod webhook_endpoint;

use serde::{Deserialize, Serialize};

use crate::db::DataError;

/// Whose records a caller may see and name: an employer's own company, or all (admin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Company(i64),
    All,
}

impl Scope {
    pub fn allows(self, company_id: i64) -> bool {
        match self {
            Scope::Company(own) => own == company_id,
            Scope::All => true,
        }
    }
}

/// A member's role in their company (CONTRACT §14), least to most powerful.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Member,
    Admin,
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Member => "member",
            Self::Admin => "admin",
            Self::Owner => "owner",
        }
    }

    /// The role of a stored value; anything else (never written) reads as the least role.
    pub fn parse(text: &str) -> Self {
        match text {
            "owner" => Self::Owner,
            "admin" => Self::Admin,
            _ => Self::Member,
        }
    }

    /// The title a member gets when a role brings them in (an invitation, a new company).
    pub fn title(self) -> &'static str {
        match self {
            Self::Member => "Member",
            Self::Admin => "Admin",
            Self::Owner => "Owner",
        }
    }

    /// Whether the role manages the company: edits it, invites, writes members (the second row
    /// of CONTRACT §14's table). The extractor `EmployerCtx<Manager>` asks this.
    pub fn manages(self) -> bool {
        self >= Self::Admin
    }
}

/// Who acts on the company's members and invitations: the employer area hands an `Actor`
/// to the model, which applies the record-dependent rows of CONTRACT §14's role table (an admin
/// never acts on an owner nor gives the owner role). The team area acts as [`Actor::Team`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    /// A member of the company: their own org profile's id and role.
    Member { profile_id: i64, role: Role },
    /// An admin of the team area: every role may be given and changed.
    Team,
}

impl Actor {
    /// Whether the actor may act on a record of role `target` (a member, an invitation) or give
    /// role `target`: an owner (and the team) on every role, an admin on all but `owner`.
    pub fn may_touch(self, target: Role) -> Result<(), DataError> {
        match self {
            Actor::Team => Ok(()),
            Actor::Member { role, .. } if role == Role::Owner || target != Role::Owner => Ok(()),
            Actor::Member { .. } => Err(DataError::Refused(
                "only an owner may give the owner role or act on an owner".into(),
            )),
        }
    }

    /// Whether the actor manages the company (the team always does): the role its route
    /// demanded, re-checked where the role may have changed since the request began.
    pub fn may_manage(self) -> Result<(), DataError> {
        match self {
            Actor::Member { role, .. } if !role.manages() => Err(DataError::Refused(
                "only an owner or an admin may do this".into(),
            )),
            _ => Ok(()),
        }
    }

    /// Whether the actor may remove the member `target` (their org profile's id and role):
    /// anyone may remove themself (leave); removing another needs a managing role that may
    /// touch the target's.
    pub fn may_remove(self, target: i64, target_role: Role) -> Result<(), DataError> {
        match self {
            Actor::Member { profile_id, .. } if profile_id == target => Ok(()),
            Actor::Member { role, .. } if !role.manages() => Err(DataError::Refused(
                "only an owner or an admin may remove another member".into(),
            )),
            _ => self.may_touch(target_role),
        }
    }
}
