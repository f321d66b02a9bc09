//! The webhook worker's due deliveries read in the index's order: `(status, next_attempt_at,
//! id, org_webhook_endpoint_id)` replaces migration 14's `(status, next_attempt_at)`, so that a
//! round's `… ORDER BY next_attempt_at, id LIMIT n` stops after its rows and filters endpoints
//! in the index, whatever the history of delivered rows (DECISIONS 141).

use sea_orm_migration::prelude::*;

use super::statements_migration;

#[derive(DeriveMigrationName)]
pub struct Migration;

// A new name, not the old one dropped and made again: SQLite refused that through the
// migration's pool ("already exists").
const UP: [&str; 2] = [
    "CREATE INDEX org_webhook_deliveries_due_order \
     ON org_webhook_deliveries (status, next_attempt_at, id, org_webhook_endpoint_id)",
    "DROP INDEX org_webhook_deliveries_due",
];

const DOWN: [&str; 2] = [
    "CREATE INDEX org_webhook_deliveries_due ON org_webhook_deliveries (status, next_attempt_at)",
    "DROP INDEX org_webhook_deliveries_due_order",
];

statements_migration!(UP, DOWN);
