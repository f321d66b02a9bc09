//! A message of the outbox.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "mail_outbox")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub recipient: String,
    pub subject: String,
    /// Plain text; cleared once the message is delivered or dropped (it may hold a token).
    pub body: Option<String>,
    pub created_at: DateTimeUtc,
    /// Delivering later is pointless (its token has expired): the message is dropped.
    pub not_after: DateTimeUtc,
    pub attempts: i32,
    /// When the next attempt is due; while one runs, a lease that keeps other instances off.
    pub next_attempt_at: DateTimeUtc,
    pub sent_at: Option<DateTimeUtc>,
    pub dropped_at: Option<DateTimeUtc>,
    /// The last delivery error, without the message.
    pub last_error: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
