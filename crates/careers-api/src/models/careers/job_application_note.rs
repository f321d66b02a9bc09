//! `Careers::JobApplicationNote`: what the members of a company say about an application, with
//! an optional rating (CONTRACT §16). Every member may write and read them; only the author
//! deletes one. A note is written with its `note_added` event in one transaction and does not
//! change the application's `lock_version`. The candidate never sees them.

pub mod entity;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, FromQueryResult, JoinType,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, RelationTrait, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as note;
use super::job_application_event::{self as events, EventKind, NewEvent, brief};
use crate::db::{DataError, page_of};
use crate::forms::{Errors, Invalid};
use crate::models::identities::user::{UserBrief, entity as user};

/// A note's ratings, from the most against to the most for (a scorecard's recommendation).
pub const RATINGS: [&str; 4] = ["strong_no", "no", "yes", "strong_yes"];

/// `POST /org-user/careers/job_applications/{id}/notes`.
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct NoteForm {
    /// 1 to 5,000 characters.
    #[garde(length(chars, min = 1, max = 5_000))]
    pub body: Option<String>,
    /// Null, `strong_no`, `no`, `yes` or `strong_yes`.
    #[garde(skip)]
    pub rating: Option<String>,
}

impl NoteForm {
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        errors.require("body", self.body.is_some());
        if let Some(rating) = &self.rating
            && !RATINGS.contains(&rating.as_str())
        {
            errors.add("rating", format!("must be one of {}", RATINGS.join(", ")));
        }
        errors.finish()
    }
}

/// A note as the company's members read it, with its author.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct NoteView {
    pub id: i64,
    pub body: String,
    pub rating: Option<String>,
    pub created_at: DateTime<Utc>,
    /// The author; null once their user is deleted.
    pub identities_user: Option<UserBrief<'static>>,
}

#[derive(Debug, FromQueryResult)]
struct NoteRow {
    id: i64,
    body: String,
    rating: Option<String>,
    created_at: DateTime<Utc>,
    user_id: Option<i64>,
    user_first_name: Option<String>,
    user_last_name: Option<String>,
}

impl From<NoteRow> for NoteView {
    fn from(r: NoteRow) -> Self {
        Self {
            id: r.id,
            body: r.body,
            rating: r.rating,
            created_at: r.created_at,
            identities_user: brief(r.user_id, r.user_first_name, r.user_last_name),
        }
    }
}

/// Notes with their authors: two tables.
fn with_authors(query: sea_orm::Select<note::Entity>) -> sea_orm::Select<note::Entity> {
    query
        .select_only()
        .columns([
            note::Column::Id,
            note::Column::Body,
            note::Column::Rating,
            note::Column::CreatedAt,
        ])
        .column_as(user::Column::Id, "user_id")
        .column_as(user::Column::FirstName, "user_first_name")
        .column_as(user::Column::LastName, "user_last_name")
        .join(JoinType::LeftJoin, note::Relation::Author.def())
}

/// Adds `author_id`'s note to application `id` of `company_id`, with its event, in one
/// transaction.
pub async fn add(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    author_id: i64,
    form: NoteForm,
    now: DateTime<Utc>,
) -> Result<NoteView, DataError> {
    let txn = crate::db::write_transaction(db).await?;
    events::require_application(&txn, company_id, id).await?;
    let created = note::ActiveModel {
        careers_job_application_id: Set(id),
        identities_user_id: Set(Some(author_id)),
        body: Set(form.body.ok_or(DataError::Inconsistent)?),
        rating: Set(form.rating),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    events::record(
        &txn,
        id,
        vec![NewEvent::new(EventKind::NoteAdded, author_id)],
        now,
    )
    .await?;
    let view = with_authors(note::Entity::find_by_id(created.id))
        .into_model::<NoteRow>()
        .one(&txn)
        .await?
        .ok_or(DataError::Inconsistent)?;
    txn.commit().await?;
    Ok(view.into())
}

/// A page of the notes on application `id` of `company_id`, newest first, with their total.
pub async fn notes_of(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    page: u64,
    per_page: u64,
) -> Result<(Vec<NoteView>, u64), DataError> {
    events::require_application(db, company_id, id).await?;
    let of_application = note::Entity::find().filter(note::Column::CareersJobApplicationId.eq(id));
    let total = of_application.clone().count(db).await?;
    let rows = with_authors(page_of(of_application, page, per_page))
        .order_by_desc(note::Column::Id)
        .into_model::<NoteRow>()
        .all(db)
        .await?;
    Ok((rows.into_iter().map(Into::into).collect(), total))
}

/// Deletes note `note_id` of application `id` of `company_id`: `NotFound` when it is not a
/// note of that application, `Refused` when `user_id` is not its author.
pub async fn remove(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    note_id: i64,
    user_id: i64,
) -> Result<(), DataError> {
    let txn = crate::db::write_transaction(db).await?;
    events::require_application(&txn, company_id, id).await?;
    let found = note::Entity::find_by_id(note_id)
        .filter(note::Column::CareersJobApplicationId.eq(id))
        .one(&txn)
        .await?
        .ok_or(DataError::NotFound)?;
    if found.identities_user_id != Some(user_id) {
        return Err(DataError::Refused(
            "only the note's author may delete it".into(),
        ));
    }
    note::Entity::delete_by_id(note_id).exec(&txn).await?;
    txn.commit().await?;
    Ok(())
}
