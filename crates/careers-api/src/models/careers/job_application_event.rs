//! `Careers::JobApplicationEvent`: an application's timeline (CONTRACT §16). An event is
//! written by the change it records, in that change's transaction; the employer reads the
//! timeline oldest first, the candidate never.

pub mod entity;

use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, FromQueryResult,
    JoinType, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, RelationTrait, Set,
};
use serde::Serialize;

use self::entity as event;
use super::job_application::entity as application;
use crate::db::{DataError, page_of};
use crate::models::identities::user::{UserBrief, entity as user};

/// What an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Applied,
    /// `from`/`to`: the stages' names.
    StageChanged,
    /// `from`/`to`: the statuses.
    StatusChanged,
    NoteAdded,
}

impl EventKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::StageChanged => "stage_changed",
            Self::StatusChanged => "status_changed",
            Self::NoteAdded => "note_added",
        }
    }
}

/// An event to write: its kind, who did it and the values before and after.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub kind: EventKind,
    pub user_id: Option<i64>,
    pub from: Option<String>,
    pub to: Option<String>,
}

impl NewEvent {
    pub fn new(kind: EventKind, user_id: i64) -> Self {
        Self {
            kind,
            user_id: Some(user_id),
            from: None,
            to: None,
        }
    }

    pub fn change(kind: EventKind, user_id: i64, from: &str, to: &str) -> Self {
        Self {
            kind,
            user_id: Some(user_id),
            from: Some(from.to_owned()),
            to: Some(to.to_owned()),
        }
    }
}

/// Writes `events` of application `application_id` on `conn` (the change's transaction), in
/// one statement, in their order.
pub async fn record(
    conn: &impl ConnectionTrait,
    application_id: i64,
    events: Vec<NewEvent>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    if events.is_empty() {
        return Ok(());
    }
    let rows = events.into_iter().map(|e| event::ActiveModel {
        careers_job_application_id: Set(application_id),
        identities_user_id: Set(e.user_id),
        kind: Set(e.kind.as_str().to_owned()),
        from_value: Set(e.from),
        to_value: Set(e.to),
        created_at: Set(now),
        ..Default::default()
    });
    event::Entity::insert_many(rows).exec(conn).await?;
    Ok(())
}

/// An event as the employer reads it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EventView {
    pub id: i64,
    /// `applied`, `stage_changed`, `status_changed` or `note_added`.
    pub kind: String,
    /// The stage's name (`stage_changed`) or the status (`status_changed`) before; else null.
    pub from: Option<String>,
    /// The stage's name or the status after; else null.
    pub to: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Who did it: the candidate for `applied` and a withdrawal; null once deleted.
    pub identities_user: Option<UserBrief<'static>>,
}

#[derive(Debug, FromQueryResult)]
struct EventRow {
    id: i64,
    kind: String,
    from_value: Option<String>,
    to_value: Option<String>,
    created_at: DateTime<Utc>,
    user_id: Option<i64>,
    user_first_name: Option<String>,
    user_last_name: Option<String>,
}

/// The author of a note or an event, from a left join: `None` once deleted.
pub fn brief(
    id: Option<i64>,
    first_name: Option<String>,
    last_name: Option<String>,
) -> Option<UserBrief<'static>> {
    Some(UserBrief {
        id: id?,
        first_name: first_name?.into(),
        last_name: last_name?.into(),
    })
}

/// Whether application `id` is one of `company_id`'s: `NotFound` otherwise, so that another
/// company's notes and events are not even known to exist.
pub async fn require_application(
    db: &impl ConnectionTrait,
    company_id: i64,
    id: i64,
) -> Result<(), DataError> {
    application::Entity::find_by_id(id)
        .filter(application::Column::CompanyId.eq(company_id))
        .select_only()
        .column(application::Column::Id)
        .into_tuple::<i64>()
        .one(db)
        .await?
        .ok_or(DataError::NotFound)
        .map(|_| ())
}

/// A page of the timeline of application `id` of `company_id`, oldest first, with its total.
pub async fn events_of(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    page: u64,
    per_page: u64,
) -> Result<(Vec<EventView>, u64), DataError> {
    require_application(db, company_id, id).await?;
    let of_application =
        event::Entity::find().filter(event::Column::CareersJobApplicationId.eq(id));
    let total = of_application.clone().count(db).await?;
    let rows = page_of(of_application, page, per_page)
        .select_only()
        .columns([
            event::Column::Id,
            event::Column::Kind,
            event::Column::FromValue,
            event::Column::ToValue,
            event::Column::CreatedAt,
        ])
        .column_as(user::Column::Id, "user_id")
        .column_as(user::Column::FirstName, "user_first_name")
        .column_as(user::Column::LastName, "user_last_name")
        .join(JoinType::LeftJoin, event::Relation::Author.def())
        .order_by_asc(event::Column::Id)
        .into_model::<EventRow>()
        .all(db)
        .await?;
    let views = rows
        .into_iter()
        .map(|r| EventView {
            id: r.id,
            kind: r.kind,
            from: r.from_value,
            to: r.to_value,
            created_at: r.created_at,
            identities_user: brief(r.user_id, r.user_first_name, r.user_last_name),
        })
        .collect();
    Ok((views, total))
}
