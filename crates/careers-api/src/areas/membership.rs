//! The authenticated user's ways into a company (CONTRACT §14): creating one (and becoming its
//! owner), and the invitations to their e-mail address. Creating a company and answering by id
//! need a verified e-mail ([`VerifiedUserCtx`]); answering by token proves the mailbox itself.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{UserCtx, VerifiedUserCtx};
use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, Conflict, FormErrors, MalformedRequest, NotFound, Unavailable, UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path, Query};
use crate::models::org::company::{self, CompanyForm};
use crate::models::org::invitation::{self, AnswerForm, Invitee, TokenAnswerForm};
use crate::state::AppState;
use crate::views::{Json, Meta, PageParams};
use crate::views::{OrgCompanyOne, OrgInvitationList, OrgInvitationOne};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_company))
        .routes(routes!(list_invitations))
        .routes(routes!(answer_invitation))
        .routes(routes!(answer_invitation_by_token))
}

/// Creates a company; the caller becomes its owner (title "Owner").
#[utoipa::path(
    post,
    path = "/identities/org/companies",
    tag = "identities",
    summary = "Create a company and become its owner",
    request_body = CompanyForm,
    responses(
        (status = 201, description = "The new company", body = OrgCompanyOne),
        FormErrors, UnsafeAreaErrors, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn create_company(
    ctx: VerifiedUserCtx,
    State(state): State<AppState>,
    Form(form): Form<CompanyForm>,
) -> Result<(StatusCode, Json<OrgCompanyOne>), ApiError> {
    form.validate_create()?;
    let created = company::create_company(&state.db, ctx.user.id, form, state.now()).await?;
    tracing::info!(
        user_id = ctx.user.id,
        company_id = created.id,
        "company created"
    );
    Ok((
        StatusCode::CREATED,
        Json(OrgCompanyOne {
            org_companies: created,
        }),
    ))
}

/// The pending invitations to the caller's (verified) e-mail address.
#[utoipa::path(
    get,
    path = "/identities/org/invitations",
    tag = "identities",
    summary = "List the invitations to your e-mail address",
    params(PageParams),
    responses(
        (status = 200, description = "Pending invitations, with their companies", body = OrgInvitationList),
        MalformedRequest, AreaErrors, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_invitations(
    ctx: VerifiedUserCtx,
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
) -> Result<Json<OrgInvitationList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (rows, total) =
        invitation::user_invitations(&state.db, &ctx.user.email, page, per_page, state.now())
            .await?;
    Ok(Json(OrgInvitationList {
        org_invitations: rows,
        meta: Meta::new(page, per_page, total),
    }))
}

/// Accepts or declines an invitation to the caller's verified address.
#[utoipa::path(
    patch,
    path = "/identities/org/invitations/{id}",
    tag = "identities",
    summary = "Accept or decline an invitation",
    params(("id" = i64, Path, description = "Record id")),
    request_body = AnswerForm,
    responses(
        (status = 200, description = "The answered invitation", body = OrgInvitationOne),
        FormErrors, UnsafeAreaErrors, NotFound, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn answer_invitation(
    ctx: VerifiedUserCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<AnswerForm>,
) -> Result<Json<OrgInvitationOne>, ApiError> {
    let answer = form.validate()?;
    let invitee = Invitee {
        user_id: ctx.user.id,
        email: &ctx.user.email,
    };
    let view = invitation::answer_by_id(&state.db, invitee, id, answer, state.now()).await?;
    tracing::info!(user_id = ctx.user.id, invitation_id = id, status = ?view.status, "invitation answered");
    Ok(Json(OrgInvitationOne {
        org_invitations: view,
    }))
}

/// Reads (no `status`) or answers the invitation of a message's token; the token verifies a
/// matching e-mail.
#[utoipa::path(
    patch,
    path = "/identities/org/invitations/current",
    tag = "identities",
    summary = "Read or answer an invitation by its token",
    request_body = TokenAnswerForm,
    responses(
        (status = 200, description = "The invitation, with its company", body = OrgInvitationOne),
        FormErrors, UnsafeAreaErrors, Conflict, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn answer_invitation_by_token(
    ctx: UserCtx,
    State(state): State<AppState>,
    Form(form): Form<TokenAnswerForm>,
) -> Result<Json<OrgInvitationOne>, ApiError> {
    let (token, answer) = form.validate()?;
    let invitee = Invitee {
        user_id: ctx.user.id,
        email: &ctx.user.email,
    };
    let Some(view) =
        invitation::answer_by_token(&state.db, invitee, token, answer, state.now()).await?
    else {
        tracing::warn!(
            user_id = ctx.user.id,
            "invitation token refused: unknown, another address's, or no longer pending"
        );
        return Err(invitation::invalid_token().into());
    };
    tracing::info!(user_id = ctx.user.id, invitation_id = view.id, status = ?view.status, "invitation opened by token");
    Ok(Json(OrgInvitationOne {
        org_invitations: view,
    }))
}
