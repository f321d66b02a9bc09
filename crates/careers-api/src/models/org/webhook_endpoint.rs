//! `Org::WebhookEndpoint`: a company's webhook endpoints and their deliveries (CONTRACT §17),
//! managed by its owners and admins. The secret is shown once, in the answer that makes it
//! (creation or rotation); a rotated-out secret keeps signing beside the new one for 24 hours.
//! The rows and the delivery worker are `webhooks`'.

use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};
use serde::{Deserialize, Serialize};

use super::company;
use crate::db::{DataError, page_of};
use crate::forms::{Errors, Invalid};
use crate::mfa::SecretBox;
use crate::webhooks::transport::{Refused, Transport};
use crate::webhooks::{self, EventType, delivery, endpoint};

/// Endpoints a company may have.
pub const MAX_ENDPOINTS: u64 = 10;
/// How long a rotated-out secret keeps signing beside the new one.
pub const ROTATION_OVERLAP_HOURS: i64 = 24;

/// `POST /org/webhook_endpoints`, and `PATCH` (every field optional there).
#[derive(Debug, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct EndpointForm {
    /// `https://` (outside development and test), a globally reachable host.
    #[garde(skip)]
    pub url: Option<String>,
    /// A non-empty subset of `careers_job_application.created`,
    /// `careers_job_application.stage_changed`, `careers_job_application.status_changed`,
    /// `careers_job.status_changed`.
    #[garde(skip)]
    pub events: Option<Vec<String>>,
    /// `PATCH` only: `true` makes a new secret, shown in this answer only.
    #[garde(skip)]
    pub rotate_secret: Option<bool>,
}

impl EndpointForm {
    /// The form's checks without a lookup; `creating` requires `url` and `events`.
    pub fn validate(&self, creating: bool) -> Result<(), Invalid> {
        let mut errors = Errors::of(self);
        if creating {
            errors.require("url", self.url.is_some());
            errors.require("events", self.events.is_some());
            if self.rotate_secret.is_some() {
                errors.add("rotate_secret", "is for an existing endpoint");
            }
        }
        if let Some(events) = &self.events {
            let allowed = || {
                let names: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
                format!("must be a non-empty subset of {}", names.join(", "))
            };
            if events.is_empty() || events.iter().any(|e| EventType::parse(e).is_none()) {
                errors.add("events", allowed());
            }
        }
        errors.finish()
    }

    /// The event types, in the order of [`EventType::ALL`], each once.
    fn types(&self) -> Option<Vec<EventType>> {
        let events = self.events.as_ref()?;
        Some(
            EventType::ALL
                .into_iter()
                .filter(|t| events.iter().any(|e| e == t.as_str()))
                .collect(),
        )
    }
}

/// An endpoint as its company's owners and admins read it; `secret` only in the answer that
/// made it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EndpointView {
    pub id: i64,
    pub url: String,
    pub events: Vec<String>,
    pub created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl From<&endpoint::Model> for EndpointView {
    fn from(e: &endpoint::Model) -> Self {
        Self {
            id: e.id,
            url: e.url.clone(),
            events: webhooks::events_of(&e.events),
            created_at: e.created_at,
            secret: None,
        }
    }
}

/// A delivery as the endpoint's company reads it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DeliveryView {
    pub id: i64,
    pub event_type: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i32,
    pub last_status_code: Option<i32>,
    pub created_at: DateTime<Utc>,
}

/// The keys that seal the secrets and the URL policy.
pub struct Keys<'a> {
    pub secrets: &'a SecretBox,
    pub transport: &'a Transport,
}

async fn check_url(transport: &Transport, url: &str) -> Result<(), DataError> {
    transport
        .check(url)
        .await
        .map_err(|Refused(why)| DataError::invalid("url", why))
}

/// Creates an endpoint of `company_id` with a new secret (in the answer only): 409 past
/// [`MAX_ENDPOINTS`], counted under the company's lock.
pub async fn create(
    db: &DatabaseConnection,
    keys: &Keys<'_>,
    company_id: i64,
    form: EndpointForm,
    now: DateTime<Utc>,
) -> Result<EndpointView, DataError> {
    let url = form.url.clone().ok_or(DataError::Inconsistent)?;
    check_url(keys.transport, &url).await?;
    let types = form.types().ok_or(DataError::Inconsistent)?;
    let secret = webhooks::new_secret();
    let txn = crate::db::write_transaction(db).await?;
    company::lock(&txn, company_id).await?;
    let count = endpoint::Entity::find()
        .filter(endpoint::Column::CompanyId.eq(company_id))
        .count(&txn)
        .await?;
    if count >= MAX_ENDPOINTS {
        return Err(DataError::Conflict(format!(
            "a company has at most {MAX_ENDPOINTS} webhook endpoints"
        )));
    }
    let created = endpoint::ActiveModel {
        company_id: Set(company_id),
        url: Set(url),
        events: Set(webhooks::events_column(&types)),
        secret: Set(webhooks::seal_secret(keys.secrets, company_id, &secret)),
        previous_secret: Set(None),
        previous_secret_until: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    Ok(EndpointView {
        secret: Some(secret),
        ..EndpointView::from(&created)
    })
}

/// The endpoints of `company_id`, oldest first (at most [`MAX_ENDPOINTS`]).
pub async fn list(
    db: &DatabaseConnection,
    company_id: i64,
) -> Result<Vec<EndpointView>, DataError> {
    let rows = endpoint::Entity::find()
        .filter(endpoint::Column::CompanyId.eq(company_id))
        .order_by_asc(endpoint::Column::Id)
        .all(db)
        .await?;
    Ok(rows.iter().map(EndpointView::from).collect())
}

async fn find(
    conn: &impl sea_orm::ConnectionTrait,
    company_id: i64,
    id: i64,
) -> Result<endpoint::Model, DataError> {
    endpoint::Entity::find_by_id(id)
        .filter(endpoint::Column::CompanyId.eq(company_id))
        .one(conn)
        .await?
        .ok_or(DataError::NotFound)
}

/// Changes endpoint `id` of `company_id`; with `rotate_secret`, a new secret (in the answer
/// only) signs from now on, and the one it replaces signs beside it for 24 hours.
pub async fn update(
    db: &DatabaseConnection,
    keys: &Keys<'_>,
    company_id: i64,
    id: i64,
    form: EndpointForm,
    now: DateTime<Utc>,
) -> Result<EndpointView, DataError> {
    if let Some(url) = &form.url {
        check_url(keys.transport, url).await?;
    }
    let txn = crate::db::write_transaction(db).await?;
    let found = find(&txn, company_id, id).await?;
    let mut row: endpoint::ActiveModel = found.clone().into();
    if let Some(url) = form.url.clone() {
        row.url = Set(url);
    }
    if let Some(types) = form.types() {
        row.events = Set(webhooks::events_column(&types));
    }
    let secret = if form.rotate_secret == Some(true) {
        let secret = webhooks::new_secret();
        row.previous_secret = Set(Some(found.secret.clone()));
        row.previous_secret_until = Set(Some(now + Duration::hours(ROTATION_OVERLAP_HOURS)));
        row.secret = Set(webhooks::seal_secret(keys.secrets, company_id, &secret));
        Some(secret)
    } else {
        None
    };
    row.updated_at = Set(now);
    let updated = row.update(&txn).await?;
    txn.commit().await?;
    Ok(EndpointView {
        secret,
        ..EndpointView::from(&updated)
    })
}

/// Deletes endpoint `id` of `company_id` with its deliveries.
pub async fn delete(db: &DatabaseConnection, company_id: i64, id: i64) -> Result<(), DataError> {
    let deleted = endpoint::Entity::delete_many()
        .filter(endpoint::Column::Id.eq(id))
        .filter(endpoint::Column::CompanyId.eq(company_id))
        .exec(db)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(DataError::NotFound);
    }
    Ok(())
}

/// A page of the deliveries of endpoint `id` of `company_id`, newest first, with their total.
pub async fn deliveries(
    db: &DatabaseConnection,
    company_id: i64,
    id: i64,
    page: u64,
    per_page: u64,
) -> Result<(Vec<DeliveryView>, u64), DataError> {
    find(db, company_id, id).await?;
    let of_endpoint =
        delivery::Entity::find().filter(delivery::Column::OrgWebhookEndpointId.eq(id));
    let total = of_endpoint.clone().count(db).await?;
    let rows = page_of(of_endpoint, page, per_page)
        .select_only()
        .columns([
            delivery::Column::Id,
            delivery::Column::EventType,
            delivery::Column::Status,
            delivery::Column::Attempts,
            delivery::Column::LastStatusCode,
            delivery::Column::CreatedAt,
        ])
        .order_by_desc(delivery::Column::Id)
        .into_tuple::<(i64, String, String, i32, Option<i32>, DateTime<Utc>)>()
        .all(db)
        .await?;
    let views = rows
        .into_iter()
        .map(
            |(id, event_type, status, attempts, last_status_code, created_at)| DeliveryView {
                id,
                event_type,
                status,
                attempts,
                last_status_code,
                created_at,
            },
        )
        .collect();
    Ok((views, total))
}
