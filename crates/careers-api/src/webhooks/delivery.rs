//! `Org::WebhookDelivery`: one event for one endpoint, stored with the change that made it and
//! tried until it is delivered or 24 hours have passed.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "org_webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub org_webhook_endpoint_id: i64,
    pub event_type: String,
    /// `webhook-id`: the same for every try, and for every endpoint of one event.
    pub message_id: String,
    /// The body, as it was at the commit.
    pub payload: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i32,
    pub last_status_code: Option<i32>,
    /// When it is due; while a try runs, the end of that try's lease.
    pub next_attempt_at: DateTimeUtc,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
