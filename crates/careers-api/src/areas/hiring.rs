//! Employer area, the discussion of an application (CONTRACT §16): its notes and its timeline.
//! Every member of the company reads and writes notes; only a note's author deletes it (the
//! model refuses anyone else: a record-dependent rule, not a role).

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::EmployerCtx;
use crate::error::ApiError;
use crate::error::responses::{
    AreaErrors, FormErrors, MalformedRequest, NotFound, Unavailable, UnsafeAreaErrors,
};
use crate::extract::{Json as Form, Path, Query};
use crate::models::careers::job_application_event;
use crate::models::careers::job_application_note::{self, NoteForm};
use crate::state::AppState;
use crate::views::{ApplicationEventList, ApplicationNoteList, ApplicationNoteOne};
use crate::views::{Json, Meta, PageParams};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_notes, add_note))
        .routes(routes!(delete_note))
        .routes(routes!(list_events))
}

/// Notes on an application to your jobs, newest first.
#[utoipa::path(
    get,
    path = "/org-user/careers/job_applications/{id}/notes",
    tag = "employer",
    summary = "List the notes on an application",
    params(("id" = i64, Path, description = "The application's id"), PageParams),
    responses(
        (status = 200, description = "The notes, newest first, with their authors", body = ApplicationNoteList),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_notes(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Query(params): Query<PageParams>,
) -> Result<Json<ApplicationNoteList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (notes, total) =
        job_application_note::notes_of(&state.db, ctx.company_id, id, page, per_page).await?;
    Ok(Json(ApplicationNoteList {
        careers_job_application_notes: notes,
        meta: Meta::new(page, per_page, total),
    }))
}

/// Adds your note, with an optional rating, to an application to your jobs (and a
/// `note_added` event to its timeline).
#[utoipa::path(
    post,
    path = "/org-user/careers/job_applications/{id}/notes",
    tag = "employer",
    summary = "Add a note on an application",
    params(("id" = i64, Path, description = "The application's id")),
    request_body = NoteForm,
    responses(
        (status = 201, description = "The note, with you as its author", body = ApplicationNoteOne),
        FormErrors, UnsafeAreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn add_note(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(form): Form<NoteForm>,
) -> Result<(StatusCode, Json<ApplicationNoteOne>), ApiError> {
    form.validate()?;
    let note = job_application_note::add(
        &state.db,
        ctx.company_id,
        id,
        ctx.member.user_id,
        form,
        state.now(),
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(ApplicationNoteOne {
            careers_job_application_notes: note,
        }),
    ))
}

/// Deletes your own note: another member's is 403.
#[utoipa::path(
    delete,
    path = "/org-user/careers/job_applications/{id}/notes/{note_id}",
    tag = "employer",
    summary = "Delete your note on an application",
    params(
        ("id" = i64, Path, description = "The application's id"),
        ("note_id" = i64, Path, description = "The note's id")
    ),
    responses(
        (status = 204, description = "The note is deleted"),
        MalformedRequest, UnsafeAreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = [], "csrf_token" = []))
)]
async fn delete_note(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path((id, note_id)): Path<(i64, i64)>,
) -> Result<StatusCode, ApiError> {
    job_application_note::remove(&state.db, ctx.company_id, id, note_id, ctx.member.user_id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The timeline of an application to your jobs, oldest first.
#[utoipa::path(
    get,
    path = "/org-user/careers/job_applications/{id}/events",
    tag = "employer",
    summary = "Read an application's timeline",
    params(("id" = i64, Path, description = "The application's id"), PageParams),
    responses(
        (status = 200, description = "The events, oldest first, with who did them", body = ApplicationEventList),
        MalformedRequest, AreaErrors, NotFound, Unavailable
    ),
    security(("user_session" = []))
)]
async fn list_events(
    ctx: EmployerCtx,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Query(params): Query<PageParams>,
) -> Result<Json<ApplicationEventList>, ApiError> {
    let (page, per_page) = params.resolve()?;
    let (events, total) =
        job_application_event::events_of(&state.db, ctx.company_id, id, page, per_page).await?;
    Ok(Json(ApplicationEventList {
        careers_job_application_events: events,
        meta: Meta::new(page, per_page, total),
    }))
}
