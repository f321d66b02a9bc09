//! The API areas of specification §5.5. Each area's extractor runs the area check on every
//! request, before the handler, and hands its handlers a typed context; no handler reads a
//! cookie or a token, or checks authorization itself (docs/DECISIONS.md 77).

pub mod admin_totp;
pub mod candidate;
pub mod company;
pub mod health;
pub mod hiring;
pub mod identities;
pub mod marketplace;
pub mod membership;
pub mod org;
pub mod sessions;
pub mod talent;
pub mod team;
pub mod webhooks;

use std::marker::PhantomData;

use ::sessions::{Authenticated, EndReason};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::error::ApiError;
use crate::models::careers::user_profile as talent_profile;
use crate::models::identities::admin;
use crate::models::identities::user::{self, UserView};
use crate::models::org::Actor;
use crate::models::org::user_profile as org_profile;
use crate::state::AppState;

pub use crate::contexts::{ADMIN, USER};

/// The user-context session of a request (every check of the engine, and CSRF on unsafe
/// methods) and what `load` reads of its identity for the area's own checks, read beside the
/// session's store round trip (`SessionEngine::authenticate_with`): the area decides on both.
async fn user_session_with<F: Future>(
    parts: &Parts,
    state: &AppState,
    load: impl FnOnce(i64) -> F,
) -> Result<(Authenticated, F::Output), ApiError> {
    Ok(state
        .sessions
        .authenticate_with(&USER, &parts.method, &parts.headers, load)
        .await?)
}

/// Authenticated user area: a valid `Identities::User` behind a `jwt_access` session.
pub struct UserCtx {
    pub user: UserView,
    pub session: Authenticated,
}

impl FromRequestParts<AppState> for UserCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let (session, user) = user_session_with(parts, state, |subject| {
            user::find_session_user(&state.db, subject)
        })
        .await?;
        // A session whose identity was deleted is over.
        let user = user?.ok_or(ApiError::SessionEnded)?;
        Ok(Self { user, session })
    }
}

/// Team (admin) area: a valid `Identities::Admin` behind a `team_jwt_access` session, with a
/// confirmed second factor when `ADMIN_MFA=required` (403 `mfa_enrollment_required` otherwise)
/// that this session presented, when the admin has one (401 `session_ended` otherwise).
pub struct AdminCtx {
    pub admin: admin::entity::Model,
    pub session: Authenticated,
}

impl FromRequestParts<AppState> for AdminCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let AdminEnrolmentCtx { admin, session } =
            AdminEnrolmentCtx::from_request_parts(parts, state).await?;
        if admin.totp_confirmed_at.is_some() && !session.second_factor {
            // The factor belongs to the session (CONTRACT §11): one opened before the admin's
            // factor existed never reaches team data. Confirming ended such sessions; this one
            // escaped that (a login racing the confirmation), so it ends now.
            state
                .sessions
                .end_current(&ADMIN, &session, EndReason::SecondFactor)
                .await?;
            ::sessions::identity_event!(
                warn,
                ADMIN,
                admin.id,
                "session without the admin's second factor ended"
            );
            return Err(ApiError::SessionEnded);
        }
        if state.config.mfa.required && admin.totp_confirmed_at.is_none() {
            return Err(ApiError::MfaEnrollmentRequired);
        }
        Ok(Self { admin, session })
    }
}

/// The admin's own second-factor routes: a valid admin session, with or without a factor (an
/// admin who must enrol reaches these and nothing else of the team area).
pub struct AdminEnrolmentCtx {
    pub admin: admin::entity::Model,
    pub session: Authenticated,
}

impl FromRequestParts<AppState> for AdminEnrolmentCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let (session, admin) = state
            .sessions
            .authenticate_with(&ADMIN, &parts.method, &parts.headers, |subject| {
                admin::find_admin(&state.db, subject)
            })
            .await?;
        // A session whose identity was deleted is over.
        let admin = admin?.ok_or(ApiError::SessionEnded)?;
        Ok(Self { admin, session })
    }
}

/// What an employer-area route demands beyond an org profile: part of the route's declared
/// context (`EmployerCtx<Manager>`), decided by the extractor in the same place and from the
/// same row as the area check (CONTRACT §14).
pub trait EmployerRule: Send + Sync + 'static {
    /// Only a role that manages the company (owner, admin) may pass.
    const MANAGERS_ONLY: bool;
    /// The route stays open while the company is suspended (`GET /org/company`, the caller's
    /// own profile and leaving).
    const WHILE_SUSPENDED: bool;
}

/// Every member of a company that is not suspended.
pub struct AnyMember;

/// Owners and admins of a company that is not suspended.
pub struct Manager;

/// Every member, even of a suspended company.
pub struct WhileSuspended;

impl EmployerRule for AnyMember {
    const MANAGERS_ONLY: bool = false;
    const WHILE_SUSPENDED: bool = false;
}

impl EmployerRule for Manager {
    const MANAGERS_ONLY: bool = true;
    const WHILE_SUSPENDED: bool = false;
}

impl EmployerRule for WhileSuspended {
    const MANAGERS_ONLY: bool = false;
    const WHILE_SUSPENDED: bool = true;
}

/// Employer area (`/org`, `/org-user`): a user with an employer (org) profile, whose role and
/// company pass the route's [`EmployerRule`]. Hands the handler the profile's company, the scope
/// of everything the employer sees, and who the member is.
pub struct EmployerCtx<R: EmployerRule = AnyMember> {
    pub company_id: i64,
    pub member: org_profile::Employer,
    rule: PhantomData<fn() -> R>,
}

impl<R: EmployerRule> EmployerCtx<R> {
    /// The member as the models' role rules see them.
    pub fn actor(&self) -> Actor {
        Actor::Member {
            profile_id: self.member.profile_id,
            role: self.member.role,
        }
    }
}

impl<R: EmployerRule> FromRequestParts<AppState> for EmployerCtx<R> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let (_, member) = user_session_with(parts, state, |subject| {
            org_profile::employer(&state.db, subject)
        })
        .await?;
        // A session whose identity was deleted is over; a user without an org profile is not
        // an employer (a removed member included).
        let member = member?
            .ok_or(ApiError::SessionEnded)?
            .ok_or(ApiError::Forbidden)?;
        if member.suspended && !R::WHILE_SUSPENDED {
            return Err(ApiError::CompanySuspended);
        }
        if R::MANAGERS_ONLY && !member.role.manages() {
            return Err(ApiError::Forbidden);
        }
        Ok(Self {
            company_id: member.company_id,
            member,
            rule: PhantomData,
        })
    }
}

/// A user whose e-mail is verified (creating a company, invitations by id: CONTRACT §14), with
/// their whole row: 403 `email_unverified` otherwise.
pub struct VerifiedUserCtx {
    pub user: user::entity::Model,
}

impl FromRequestParts<AppState> for VerifiedUserCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let (_, user) =
            user_session_with(parts, state, |subject| user::find_user(&state.db, subject)).await?;
        let user = user?.ok_or(ApiError::SessionEnded)?;
        if user.email_verified_at.is_none() {
            return Err(ApiError::EmailUnverified);
        }
        Ok(Self { user })
    }
}

/// Talent and candidate areas (`/talent`, `/candidate`): a user with a talent profile.
pub struct TalentCtx {
    pub user: user::entity::Model,
    pub profile: talent_profile::entity::Model,
}

impl FromRequestParts<AppState> for TalentCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let (_, found) = user_session_with(parts, state, |subject| {
            talent_profile::user_with_profile(&state.db, subject)
        })
        .await?;
        let (user, profile) = found?.ok_or(ApiError::SessionEnded)?;
        let profile = profile.ok_or(ApiError::Forbidden)?;
        Ok(Self { user, profile })
    }
}

/// Marketplace area: the user when a valid user session comes with the request, otherwise
/// anonymous. A missing, invalid or expired cookie is anonymous, not an error; a store or
/// database fault still fails closed.
pub struct MarketplaceCtx {
    pub user: Option<UserView>,
}

impl FromRequestParts<AppState> for MarketplaceCtx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let user = match state
            .sessions
            .identify(&USER, &parts.method, &parts.headers)
            .await?
        {
            Some(session) => user::find_session_user(&state.db, session.subject).await?,
            None => None,
        };
        Ok(Self { user })
    }
}
