//! The webhook worker's due deliveries read endpoint by endpoint: `(status,
//! org_webhook_endpoint_id, next_attempt_at, id)` replaces migration 15's `(status,
//! next_attempt_at, id, org_webhook_endpoint_id)`. A round finds the endpoints with a pending
//! delivery by a loose scan of it (one probe an endpoint) and reads each one's first due rows
//! from it, so an endpoint it leaves out (a hanging receiver's, with its backlog) costs one
//! probe, not a step over each of its rows (DECISIONS 143).

use sea_orm_migration::prelude::*;

use super::statements_migration;

#[derive(DeriveMigrationName)]
pub struct Migration;

const UP: [&str; 2] = [
    "CREATE INDEX org_webhook_deliveries_due_by_endpoint \
     ON org_webhook_deliveries (status, org_webhook_endpoint_id, next_attempt_at, id)",
    "DROP INDEX org_webhook_deliveries_due_order",
];

const DOWN: [&str; 2] = [
    "CREATE INDEX org_webhook_deliveries_due_order \
     ON org_webhook_deliveries (status, next_attempt_at, id, org_webhook_endpoint_id)",
    "DROP INDEX org_webhook_deliveries_due_by_endpoint",
];

statements_migration!(UP, DOWN);
