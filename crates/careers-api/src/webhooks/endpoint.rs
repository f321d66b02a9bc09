//! `Org::WebhookEndpoint`: where a company's webhook events go, and the secret that signs them.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "org_webhook_endpoints")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub company_id: i64,
    pub url: String,
    /// The event types, each between commas: `,a,b,` (one `LIKE` finds an endpoint's type).
    pub events: String,
    /// The signing secret (`whsec_…`), sealed with the `MFA_ENCRYPTION_KEY` ring.
    pub secret: String,
    /// The secret before the last rotation, sealed, which also signs until `previous_secret_until`.
    pub previous_secret: Option<String>,
    pub previous_secret_until: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
