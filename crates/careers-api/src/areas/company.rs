//! Employer area, the company itself (CONTRACT §14): its record, its members' own profile and
//! leaving, removing a member, and invitations. The role each route needs is its context's
//! [`EmployerRule`](super::EmployerRule): `EmployerCtx<Manager>` admits owners and admins only.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{EmployerCtx, Manager, WhileSuspended};
use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, RateLimited, Unavailable,
    UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path, Query};
use crate::models::org::Scope;
use crate::models::org::company::{self, CompanyForm, CompanyView};
use crate::models::org::invitation::{
    self, InvitationForm, InvitationMessage, Inviter, StatusFilter,
};
use crate::models::org::user_profile::{self, OrgUserProfileView};
use crate::state::AppState;
use crate::throttle;
use crate::views::{Json, Meta, PageParams};
use crate::views::{OrgCompanyOne, OrgInvitationList, OrgInvitationOne};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show_company, update_company))
        .routes(routes!(show_own_profile, leave))
        .routes(routes!(remove_member))
        .routes(routes!(list_invitations, invite))
        .routes(routes!(revoke_invitation))
}

/// The caller's company; while it is suspended, with `suspended_at`.
#[utoipa::path(
    get,
    path = "/org/company",
    tag = "employer",
    summary = "Read your company",
    responses(
        (status = 200, description = "Your company", body = OrgCompanyOne),
        AreaErrors, Unavailable
    ),
    security(("user_session" = []))
)]
async fn show_company(
    ctx: EmployerCtx<WhileSuspended>,
    State(state): State<AppState>,
) -> Result<Json<OrgCompanyOne>, ApiError> {
    let found = company::find_company(&state.db, ctx.company_id)
        .await?
        .ok_or(ApiError::Forbidden)?;
    Ok(Json(OrgCompanyOne {
        org_companies: CompanyView::own(&found),
    }))
}

/// Edits the caller's company (owners and admins).
#[utoipa::path(
    patch,
    path = "/org/company",
    tag = "employer",
    summary = "Edit your company",
    request_body = CompanyForm,
    responses(
        (status = 200, description = "Your company", body = OrgCompanyOne),
        FormErrors, UnsafeAreaErrors, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn update_company(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Form(form): Form<CompanyForm>,
) -> Result<Json<OrgCompanyOne>, ApiError> {
    form.validate_update()?;
    let (updated, _) =
        company::update_company(&state.db, ctx.company_id, form, None, state.now()).await?;
    Ok(Json(OrgCompanyOne {
        org_companies: CompanyView::own(&updated),
    }))
}

/// The caller's own org profile, bare like `/org/user-profiles/{id}`.
#[utoipa::path(
    get,
    path = "/org/user-profiles/current",
    tag = "employer",
    summary = "Read your own org profile",
    responses(
        (status = 200, description = "Your org profile, bare", body = OrgUserProfileView),
        AreaErrors, Unavailable
    ),
    security(("user_session" = []))
)]
async fn show_own_profile(
    ctx: EmployerCtx<WhileSuspended>,
    State(state): State<AppState>,
) -> Result<Json<OrgUserProfileView>, ApiError> {
    user_profile::find_profile(&*state.db, Scope::All, ctx.member.profile_id)
        .await?
        .map(Json)
        .ok_or(ApiError::Forbidden)
}

/// Leaves the company: the caller's org profile is deleted (409 for its last owner).
#[utoipa::path(
    delete,
    path = "/org/user-profiles/current",
    tag = "employer",
    summary = "Leave your company",
    responses(
        (status = 204, description = "You left the company"),
        UnsafeAreaErrors, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn leave(
    ctx: EmployerCtx<WhileSuspended>,
    State(state): State<AppState>,
) -> Result<StatusCode, ApiError> {
    let member = ctx.member;
    user_profile::remove_profile(&state.db, ctx.actor(), ctx.company_id, member.profile_id).await?;
    tracing::info!(
        user_id = member.user_id,
        company_id = member.company_id,
        "member left their company"
    );
    Ok(StatusCode::NO_CONTENT)
}

/// Removes a member (owners and admins; an admin never an owner), or the caller themself.
#[utoipa::path(
    delete,
    path = "/org/user-profiles/{id}",
    tag = "employer",
    summary = "Remove a member of your company",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 204, description = "The member is removed"),
        MalformedRequest, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn remove_member(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<StatusCode, ApiError> {
    user_profile::remove_profile(&state.db, ctx.actor(), ctx.company_id, id).await?;
    tracing::info!(
        user_id = ctx.member.user_id,
        company_id = ctx.company_id,
        profile_id = id,
        "member removed"
    );
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct InvitationParams {
    /// Only invitations in this state.
    #[param(inline)]
    status: Option<StatusFilter>,
    /// Page number, from 1.
    page: Option<u64>,
    /// Items per page, 1 to 100 (default 25).
    per_page: Option<u64>,
}

/// The company's invitations, newest first.
#[utoipa::path(
    get,
    path = "/org/invitations",
    tag = "employer",
    summary = "List your company's invitations",
    params(InvitationParams),
    responses(
        (status = 200, description = "Your company's invitations", body = OrgInvitationList),
        MalformedRequest, AreaErrors, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_invitations(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Query(params): Query<InvitationParams>,
) -> Result<Json<OrgInvitationList>, ApiError> {
    let (page, per_page) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .resolve()?;
    let (rows, total) = invitation::company_invitations(
        &state.db,
        ctx.company_id,
        params.status,
        page,
        per_page,
        state.now(),
    )
    .await?;
    Ok(Json(OrgInvitationList {
        org_invitations: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

/// Invites an e-mail address (owners and admins; an admin may not invite an owner).
#[utoipa::path(
    post,
    path = "/org/invitations",
    tag = "employer",
    summary = "Invite a colleague by e-mail",
    request_body = InvitationForm,
    responses(
        (status = 201, description = "The invitation; its message is queued", body = OrgInvitationOne),
        FormErrors, UnsafeAreaErrors, Conflict, RateLimited, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn invite(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Form(form): Form<InvitationForm>,
) -> Result<(StatusCode, Json<OrgInvitationOne>), ApiError> {
    form.validate()?;
    throttle::count_invitation(&state, ctx.company_id).await?;
    let message = InvitationMessage {
        url_template: state.mail.invitation_url(),
        lifetime_seconds: state.config.invitations.lifetime_seconds,
        secrets: &state.secrets,
    };
    let inviter = Inviter {
        company_id: ctx.company_id,
        user_id: ctx.member.user_id,
        actor: ctx.actor(),
    };
    let view = invitation::invite(&state.db, &message, inviter, form, state.now()).await?;
    state.mail.wake();
    tracing::info!(
        user_id = ctx.member.user_id,
        company_id = ctx.company_id,
        invitation_id = view.id,
        "invitation sent"
    );
    Ok((
        StatusCode::CREATED,
        Json(OrgInvitationOne {
            org_invitations: view,
        }),
    ))
}

/// Revokes a pending invitation (owners and admins; an admin not an owner's).
#[utoipa::path(
    delete,
    path = "/org/invitations/{id}",
    tag = "employer",
    summary = "Revoke an invitation",
    params(("id" = i64, Path, description = "Record id")),
    responses(
        (status = 204, description = "The invitation is revoked"),
        MalformedRequest, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn revoke_invitation(
    ctx: EmployerCtx<Manager>,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> Result<StatusCode, ApiError> {
    invitation::revoke(&state.db, ctx.actor(), ctx.company_id, id, state.now()).await?;
    tracing::info!(
        user_id = ctx.member.user_id,
        invitation_id = id,
        "invitation revoked"
    );
    Ok(StatusCode::NO_CONTENT)
}
