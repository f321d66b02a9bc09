//! Webhooks (CONTRACT §17, the Standard Webhooks specification): a company's endpoints, the
//! events stored for them in the transaction of the change, and the worker that delivers them.
//!
//! [`record`] writes one delivery row per subscribed endpoint, with the body as it is at the
//! commit, in one `INSERT … SELECT`. The [`Deliverer`] (one per process, started by
//! `app::spawn_webhook_worker`) takes due deliveries every second and whenever a try ends,
//! endpoint by endpoint (each one's first due first, the endpoints in turn), leases them with one
//! conditional update (so that instances sharing a database never try one delivery at once),
//! and sends each in a task of its own: at most [`PER_ENDPOINT`] at a time for one endpoint and
//! [`MAX_IN_FLIGHT`] in all, so a receiver that hangs holds up only its own deliveries, and
//! never an API request (which only inserts rows). A 2xx answer within 15 s delivers it; any
//! other outcome is tried again after 10 s, each wait doubling up to an hour, until 24 hours
//! after the event, when it is marked `failed` and counted. A delivery recorded `delivered` is
//! never tried again; one whose try was cut short by a restart is tried again when its lease
//! ends. Deliveries of a suspended company wait until it is unsuspended.
//!
//! The signing secrets are sealed with the `MFA_ENCRYPTION_KEY` ring (bound to their company)
//! and opened only to sign; nothing of a secret, a body or a URL is logged.

pub mod delivery;
pub mod endpoint;
pub mod transport;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use sea_orm::sea_query::{
    Alias, Asterisk, Expr, ExprTrait, Func, LikeExpr, Order, Query, SelectStatement, UnionType,
};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, Statement,
};
use serde::Serialize;

use self::transport::{Outcome, Transport};
use crate::mfa::SecretBox;

/// The first retry's wait; each further one doubles, up to [`MAX_BACKOFF_SECONDS`].
pub const FIRST_BACKOFF_SECONDS: i64 = 10;
pub const MAX_BACKOFF_SECONDS: i64 = 60 * 60;
/// How long after its event a delivery is given up.
pub const GIVE_UP_AFTER_HOURS: i64 = 24;
/// How long a try keeps other rounds and instances off its delivery: more than a try's
/// 15 s, so that only a stopped process leaves one to its lease.
const LEASE_SECONDS: i64 = 60;
/// Tries of one endpoint at a time, in one process.
pub const PER_ENDPOINT: usize = 4;
/// Tries at a time, in one process.
pub const MAX_IN_FLIGHT: usize = 64;

/// The events a webhook endpoint may subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    ApplicationCreated,
    ApplicationStageChanged,
    ApplicationStatusChanged,
    JobStatusChanged,
}

impl EventType {
    pub const ALL: [Self; 4] = [
        Self::ApplicationCreated,
        Self::ApplicationStageChanged,
        Self::ApplicationStatusChanged,
        Self::JobStatusChanged,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ApplicationCreated => "careers_job_application.created",
            Self::ApplicationStageChanged => "careers_job_application.stage_changed",
            Self::ApplicationStatusChanged => "careers_job_application.status_changed",
            Self::JobStatusChanged => "careers_job.status_changed",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// The associated data a company's secret is sealed with, so that it opens for no other.
fn secret_aad(company_id: i64) -> Vec<u8> {
    format!("careers-api/webhook-secret/v1/{company_id}").into_bytes()
}

/// A new signing secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("operating system random number generator failed");
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// `secret` sealed for storage, bound to `company_id`.
pub fn seal_secret(secrets: &SecretBox, company_id: i64, secret: &str) -> String {
    secrets.seal_with(&secret_aad(company_id), secret.as_bytes())
}

fn open_secret(secrets: &SecretBox, company_id: i64, sealed: &str) -> Option<String> {
    let (bytes, _) = secrets.open_with(&secret_aad(company_id), sealed)?;
    String::from_utf8(bytes).ok()
}

/// The endpoints' `events` column: each type between commas.
pub fn events_column(types: &[EventType]) -> String {
    let mut column = String::from(",");
    for t in types {
        column.push_str(t.as_str());
        column.push(',');
    }
    column
}

/// The types of an `events` column.
pub fn events_of(column: &str) -> Vec<String> {
    column
        .split(',')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A new message id (`webhook-id`): `msg_` and 128 random bits.
fn new_message_id() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("operating system random number generator failed");
    format!(
        "msg_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// Stores event `event` of `company_id` with `data` (its snapshot at the commit) for every
/// endpoint of the company subscribed to it, due now, on `conn` (the change's transaction):
/// one statement, whatever the number of endpoints.
pub async fn record(
    conn: &impl ConnectionTrait,
    company_id: i64,
    event: EventType,
    data: &impl Serialize,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    #[derive(Serialize)]
    struct Body<'a, D> {
        r#type: &'a str,
        timestamp: String,
        data: &'a D,
    }
    let body = serde_json::to_string(&Body {
        r#type: event.as_str(),
        timestamp: now.to_rfc3339_opts(SecondsFormat::Secs, true),
        data,
    })
    .map_err(|e| DbErr::Custom(e.to_string()))?;
    let subscribed =
        LikeExpr::new(format!("%,{},%", event.as_str().replace('_', "\\_"))).escape('\\');
    let rows = Query::select()
        .column(endpoint::Column::Id)
        .expr(Expr::val(event.as_str()))
        .expr(Expr::val(new_message_id()))
        .expr(Expr::val(body))
        .expr(Expr::val("pending"))
        .expr(Expr::val(0))
        .expr(Expr::val(now))
        .expr(Expr::val(now))
        .expr(Expr::val(now))
        .from(endpoint::Entity)
        .and_where(endpoint::Column::CompanyId.eq(company_id))
        .and_where(Expr::col(endpoint::Column::Events).like(subscribed))
        .to_owned();
    let insert = Query::insert()
        .into_table(delivery::Entity)
        .columns([
            delivery::Column::OrgWebhookEndpointId,
            delivery::Column::EventType,
            delivery::Column::MessageId,
            delivery::Column::Payload,
            delivery::Column::Status,
            delivery::Column::Attempts,
            delivery::Column::NextAttemptAt,
            delivery::Column::CreatedAt,
            delivery::Column::UpdatedAt,
        ])
        .select_from(rows)
        .map_err(|e| DbErr::Custom(e.to_string()))?
        .to_owned();
    conn.execute(&insert).await?;
    Ok(())
}

/// The wait before try `attempts + 1`, after `attempts` failed ones.
pub fn backoff_seconds(attempts: i32) -> i64 {
    let doublings = attempts.saturating_sub(1).clamp(0, 20) as u32;
    Ord::min(FIRST_BACKOFF_SECONDS << doublings, MAX_BACKOFF_SECONDS)
}

/// How many deliveries wait (the `careers_webhook_deliveries_pending` gauge).
pub async fn pending(db: &DatabaseConnection) -> Result<u64, DbErr> {
    delivery::Entity::find()
        .filter(delivery::Column::Status.eq("pending"))
        .count(db)
        .await
}

/// The process's delivery worker: the transport, the clock, and the tries in flight.
pub struct Deliverer {
    transport: Transport,
    secrets: SecretBox,
    clock: Box<dyn Fn() -> DateTime<Utc> + Send + Sync>,
    /// Tries in flight, by endpoint.
    in_flight: Mutex<HashMap<i64, usize>>,
    /// Rung when a try ends: its room can take the next due delivery at once.
    wake: tokio::sync::Notify,
    /// Deliveries answered 2xx and not yet recorded.
    delivered: Mutex<Vec<Delivered>>,
    /// The last endpoint the last round served: the next round's turn starts after it.
    cursor: Mutex<i64>,
}

/// A 2xx answer, to record.
struct Delivered {
    id: i64,
    attempts: i32,
    code: i32,
    at: DateTime<Utc>,
}

/// A try's end, however it ends: its endpoint's count goes down.
struct InFlight {
    deliverer: Arc<Deliverer>,
    endpoint_id: i64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut in_flight = self.deliverer.in_flight.lock().expect("not poisoned");
        if let Some(count) = in_flight.get_mut(&self.endpoint_id) {
            *count -= 1;
            if *count == 0 {
                in_flight.remove(&self.endpoint_id);
            }
        }
        self.deliverer.wake.notify_one();
    }
}

impl Deliverer {
    pub fn new(
        transport: Transport,
        secrets: SecretBox,
        clock: impl Fn() -> DateTime<Utc> + Send + Sync + 'static,
    ) -> Self {
        Self {
            transport,
            secrets,
            clock: Box::new(clock),
            in_flight: Mutex::new(HashMap::new()),
            wake: tokio::sync::Notify::new(),
            delivered: Mutex::new(Vec::new()),
            cursor: Mutex::new(0),
        }
    }

    /// Records the deliveries answered 2xx since the last call: one statement for each
    /// (attempts, status code) among them, usually one. A process that stops before recording
    /// one sends it again when its lease ends (its `webhook-id` lets the receiver see it twice);
    /// a recorded one is never sent again.
    pub async fn record_delivered(&self, db: &DatabaseConnection) -> Result<(), DbErr> {
        let batch = std::mem::take(&mut *self.delivered.lock().expect("not poisoned"));
        let mut groups: HashMap<(i32, i32), (Vec<i64>, DateTime<Utc>)> = HashMap::new();
        for d in &batch {
            let group = groups
                .entry((d.attempts, d.code))
                .or_insert((Vec::new(), d.at));
            group.0.push(d.id);
            group.1 = Ord::max(group.1, d.at);
        }
        let mut recorded = std::collections::HashSet::new();
        for ((attempts, code), (ids, at)) in groups {
            let written = mark_delivered(ids.iter().copied(), attempts, code, at)
                .exec(db)
                .await;
            if let Err(error) = written {
                // The rest is kept for the next round: the database may be back by then.
                let mut delivered = self.delivered.lock().expect("not poisoned");
                delivered.extend(batch.into_iter().filter(|d| !recorded.contains(&d.id)));
                return Err(error);
            }
            recorded.extend(ids);
        }
        if !batch.is_empty() {
            tracing::info!(delivered = batch.len(), "webhook: deliveries recorded");
        }
        Ok(())
    }

    /// Waits until a try ends (or returns at once if one ended since the last call).
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// One round: takes the due deliveries there is room for and starts a try of each.
    /// Returns how many it started.
    pub async fn round(self: &Arc<Self>, db: &DatabaseConnection) -> Result<usize, DbErr> {
        let leased = self.take_due(db).await?;
        let started = leased.len();
        for (row, endpoint) in leased {
            let guard = {
                let mut in_flight = self.in_flight.lock().expect("not poisoned");
                *in_flight.entry(row.org_webhook_endpoint_id).or_insert(0) += 1;
                InFlight {
                    deliverer: Arc::clone(self),
                    endpoint_id: row.org_webhook_endpoint_id,
                }
            };
            let db = db.clone();
            let deliverer = Arc::clone(self);
            tokio::spawn(async move {
                let id = row.id;
                if let Err(error) = deliverer.try_once(&db, row, endpoint).await {
                    tracing::warn!(delivery_id = id, %error, "webhook: could not record a try; its lease will end");
                }
                drop(guard);
            });
        }
        Ok(started)
    }

    /// Records the round's 2xx answers, then leases the due deliveries there is room for, each
    /// with its endpoint (read once for the round, not once a try).
    async fn take_due(
        &self,
        db: &DatabaseConnection,
    ) -> Result<Vec<(delivery::Model, endpoint::Model)>, DbErr> {
        self.record_delivered(db).await?;
        let now = (self.clock)();
        // Only this task starts tries, so the room can only grow before they are started.
        let room = MAX_IN_FLIGHT
            .saturating_sub(self.in_flight.lock().expect("not poisoned").values().sum());
        if room == 0 {
            return Ok(Vec::new());
        }
        // The endpoints with a delivery due (companies not suspended), a few probes each.
        let endpoints: Vec<i64> = db
            .query_all_raw(endpoints_with_due(db.get_database_backend(), now))
            .await?
            .iter()
            .map(|row| row.try_get_by_index::<i64>(0))
            .collect::<Result<_, _>>()?;
        // Each one's first due deliveries, as many as it and the round have room for, from the
        // endpoint after the last one the last round served: with more endpoints than room,
        // each gets its turn.
        let wanted = {
            let in_flight = self.in_flight.lock().expect("not poisoned");
            let mut cursor = self.cursor.lock().expect("not poisoned");
            let wanted = shares(&endpoints, &in_flight, *cursor, room);
            if let Some((last, _)) = wanted.last() {
                *cursor = *last;
            }
            wanted
        };
        let Some(due) = due_deliveries(now, &wanted) else {
            return Ok(Vec::new());
        };
        let picked: Vec<i64> = db
            .query_all(&due)
            .await?
            .iter()
            .map(|row| row.try_get_by_index(0))
            .collect::<Result<_, _>>()?;
        if picked.is_empty() {
            return Ok(Vec::new());
        }
        // The lease: only the rows still pending and due are this round's.
        let leased = lease(picked, now).exec_with_returning(db).await?;
        let endpoint_ids: std::collections::HashSet<i64> =
            leased.iter().map(|d| d.org_webhook_endpoint_id).collect();
        let endpoints: HashMap<i64, endpoint::Model> = endpoint::Entity::find()
            .filter(endpoint::Column::Id.is_in(endpoint_ids))
            .all(db)
            .await?
            .into_iter()
            .map(|e| (e.id, e))
            .collect();
        // An endpoint deleted meanwhile took its deliveries with it.
        Ok(leased
            .into_iter()
            .filter_map(|d| {
                let endpoint = endpoints.get(&d.org_webhook_endpoint_id)?.clone();
                Some((d, endpoint))
            })
            .collect())
    }

    /// One try of `row`, and its outcome recorded.
    async fn try_once(
        &self,
        db: &DatabaseConnection,
        row: delivery::Model,
        endpoint: endpoint::Model,
    ) -> Result<(), DbErr> {
        let secrets = &self.secrets;
        let now = (self.clock)();
        let mut keys = Vec::with_capacity(2);
        keys.extend(open_secret(secrets, endpoint.company_id, &endpoint.secret));
        if let (Some(previous), Some(until)) =
            (&endpoint.previous_secret, endpoint.previous_secret_until)
            && until > now
        {
            keys.extend(open_secret(secrets, endpoint.company_id, previous));
        }
        let outcome = if keys.is_empty() {
            Outcome::NoAnswer("the secret does not open with MFA_ENCRYPTION_KEY".into())
        } else {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            self.transport
                .send(
                    &endpoint.url,
                    &row.message_id,
                    now.timestamp(),
                    &row.payload,
                    &keys,
                )
                .await
        };
        let attempts = row.attempts + 1;
        let done = (self.clock)();
        let code = match &outcome {
            Outcome::Delivered(code) => {
                // Recorded with the others of its round by the next round, in one statement.
                tracing::debug!(delivery_id = row.id, attempts, "webhook: delivered");
                self.delivered
                    .lock()
                    .expect("not poisoned")
                    .push(Delivered {
                        id: row.id,
                        attempts,
                        code: i32::from(*code),
                        at: done,
                    });
                return Ok(());
            }
            Outcome::Answered(code) => Some(i32::from(*code)),
            Outcome::NoAnswer(_) => None,
        };
        let mut update = delivery::Entity::update_many()
            .col_expr(delivery::Column::Attempts, Expr::value(attempts))
            .col_expr(delivery::Column::LastStatusCode, Expr::value(code))
            .col_expr(delivery::Column::UpdatedAt, Expr::value(done))
            .filter(delivery::Column::Id.eq(row.id))
            .filter(still_pending());
        let given_up = done >= row.created_at + Duration::hours(GIVE_UP_AFTER_HOURS);
        match &outcome {
            failure if given_up => {
                update = update.col_expr(delivery::Column::Status, Expr::value("failed"));
                ::metrics::counter!(crate::metrics::WEBHOOK_FAILURES).increment(1);
                tracing::warn!(delivery_id = row.id, attempts, outcome = ?failure, "webhook: failed for 24 hours; given up");
            }
            failure => {
                let wait = backoff_seconds(attempts);
                update = update.col_expr(
                    delivery::Column::NextAttemptAt,
                    Expr::value(done + Duration::seconds(wait)),
                );
                tracing::info!(delivery_id = row.id, attempts, retry_in_seconds = wait, outcome = ?failure, "webhook: try failed");
            }
        }
        update.exec(db).await?;
        Ok(())
    }
}

/// What a round asks of each endpoint of `endpoints` (ascending ids): the tries it has room for
/// beside its tries in flight, the full ones left out, `room` in all, starting after `cursor`
/// (the last endpoint the last round served) and wrapping round.
fn shares(
    endpoints: &[i64],
    in_flight: &HashMap<i64, usize>,
    cursor: i64,
    room: usize,
) -> Vec<(i64, u64)> {
    let turn = endpoints.partition_point(|id| *id <= cursor);
    let mut left = room;
    let mut wanted = Vec::new();
    for id in endpoints[turn..].iter().chain(&endpoints[..turn]) {
        let free = PER_ENDPOINT.saturating_sub(in_flight.get(id).copied().unwrap_or(0));
        let share = Ord::min(free, left);
        if share > 0 {
            wanted.push((*id, share as u64));
            left -= share;
        }
        if left == 0 {
            break;
        }
    }
    wanted
}

/// The endpoints with a delivery due at `now`, by id, less the suspended companies' (usually
/// none): a loose scan of the `org_webhook_deliveries_due_by_endpoint` index (migration 16) for
/// the endpoints with a pending delivery, then a probe of each one's due range, so a round's
/// cost follows the endpoints, never their backlogs; an endpoint whose deliveries all wait for
/// a retry or a lease is not named. Each check is a scalar subquery with a `LIMIT`, which no
/// planner turns into a join over every due row or every endpoint: a probe an endpoint. The
/// companies' table is the models'; this reads only its `suspended_at`.
pub fn endpoints_with_due(backend: DbBackend, now: DateTime<Utc>) -> Statement {
    let at = if backend == DbBackend::Postgres {
        "$1"
    } else {
        "?"
    };
    let sql = format!(
        "\
WITH RECURSIVE pending (id) AS (
    SELECT (SELECT org_webhook_endpoint_id FROM org_webhook_deliveries
            WHERE status = 'pending' ORDER BY org_webhook_endpoint_id LIMIT 1)
    UNION ALL
    SELECT (SELECT org_webhook_endpoint_id FROM org_webhook_deliveries
            WHERE status = 'pending' AND org_webhook_endpoint_id > pending.id
            ORDER BY org_webhook_endpoint_id LIMIT 1)
    FROM pending WHERE pending.id IS NOT NULL
)
SELECT id FROM pending
WHERE id IS NOT NULL
AND (SELECT 1 FROM org_webhook_deliveries
     WHERE status = 'pending' AND org_webhook_endpoint_id = pending.id
     AND next_attempt_at <= {at} LIMIT 1) IS NOT NULL
AND (SELECT 1 FROM org_webhook_endpoints e
     JOIN org_companies c ON c.id = e.company_id
     WHERE e.id = pending.id AND c.suspended_at IS NOT NULL LIMIT 1) IS NULL
ORDER BY id"
    );
    Statement::from_sql_and_values(backend, sql, [now.into()])
}

/// The ids of the deliveries due at `now` of each endpoint of `wanted`, the first due first
/// and at most as many as it is given: one range of the `org_webhook_deliveries_due_by_endpoint`
/// index each, in one statement (`None` for no endpoint).
pub fn due_deliveries(now: DateTime<Utc>, wanted: &[(i64, u64)]) -> Option<SelectStatement> {
    let mut branches = wanted.iter().enumerate().map(|(i, (endpoint_id, limit))| {
        let rows = Query::select()
            .column(delivery::Column::Id)
            .from(delivery::Entity)
            .and_where(delivery::Column::Status.eq("pending"))
            .and_where(delivery::Column::OrgWebhookEndpointId.eq(*endpoint_id))
            .and_where(delivery::Column::NextAttemptAt.lte(now))
            .order_by(delivery::Column::NextAttemptAt, Order::Asc)
            .order_by(delivery::Column::Id, Order::Asc)
            .limit(*limit)
            .to_owned();
        // Each range in a subquery of its own: SQLite takes no LIMIT on a member of a UNION.
        Query::select()
            .column(Asterisk)
            .from_subquery(rows, Alias::new(format!("due_{i}")))
            .to_owned()
    });
    let mut statement = branches.next()?;
    for branch in branches {
        statement.union(UnionType::All, branch);
    }
    Some(statement)
}

/// The lease of a round's picked deliveries `ids` at `now`: those still pending and due are the
/// round's until the lease ends. By primary key (on the worker's connections, DECISIONS 142).
pub fn lease(ids: Vec<i64>, now: DateTime<Utc>) -> sea_orm::UpdateMany<delivery::Entity> {
    delivery::Entity::update_many()
        .col_expr(
            delivery::Column::NextAttemptAt,
            Expr::value(now + Duration::seconds(LEASE_SECONDS)),
        )
        .filter(delivery::Column::Id.is_in(ids))
        .filter(still_pending())
        .filter(delivery::Column::NextAttemptAt.lte(now))
}

/// `status = 'pending'` as a check of the rows found by primary key, not a search: written as
/// `lower(status)`, which no index holds, so that neither planner scans the due index's range
/// of pending rows for them. Both took that path when a burst of new rows had outrun the
/// table's statistics (a scan of every pending row for each statement, DECISIONS 142).
fn still_pending() -> sea_orm::sea_query::SimpleExpr {
    Expr::expr(Func::lower(Expr::col((
        delivery::Entity,
        delivery::Column::Status,
    ))))
    .eq("pending")
}

/// Deliveries `ids`, answered 2xx at `at` on try `attempts` with `code`, recorded delivered.
/// By primary key (on the worker's connections, DECISIONS 142).
pub fn mark_delivered(
    ids: impl IntoIterator<Item = i64>,
    attempts: i32,
    code: i32,
    at: DateTime<Utc>,
) -> sea_orm::UpdateMany<delivery::Entity> {
    delivery::Entity::update_many()
        .col_expr(delivery::Column::Status, Expr::value("delivered"))
        .col_expr(delivery::Column::Attempts, Expr::value(attempts))
        .col_expr(delivery::Column::LastStatusCode, Expr::value(code))
        .col_expr(delivery::Column::UpdatedAt, Expr::value(at))
        .filter(delivery::Column::Id.is_in(ids))
        .filter(still_pending())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_start_at_10_s_and_double_up_to_an_hour() {
        let waits: Vec<i64> = (1..=11).map(backoff_seconds).collect();
        assert_eq!(
            waits,
            [10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]
        );
        assert_eq!(backoff_seconds(1000), 3600);
    }

    #[test]
    fn a_round_shares_its_room_among_the_endpoints_in_turn() {
        let full = PER_ENDPOINT;
        let in_flight = HashMap::from([(2, full), (3, 1)]);
        // The full endpoint is left out; the others get what they have room for.
        assert_eq!(
            shares(&[1, 2, 3], &in_flight, 0, 64),
            [(1, full as u64), (3, full as u64 - 1)]
        );
        // After the last endpoint the last round served, wrapping round, `room` tries in all.
        assert_eq!(
            shares(&[1, 3, 5, 7], &HashMap::new(), 3, 2 * full + 1),
            [(5, full as u64), (7, full as u64), (1, 1)]
        );
        assert_eq!(shares(&[1, 3], &HashMap::new(), 9, 1), [(1, 1)]);
        assert!(shares(&[1, 3], &HashMap::new(), 0, 0).is_empty());
        assert!(shares(&[], &in_flight, 0, 64).is_empty());
    }

    #[test]
    fn a_round_serves_more_endpoints_than_its_room_in_turn() {
        // 100 endpoints with deliveries due, room for 64 tries (16 endpoints) a round: each
        // endpoint is served once before any is served twice, then the turn starts again.
        let endpoints: Vec<i64> = (1..=100).collect();
        let mut cursor = 0;
        let mut served = Vec::new();
        for _ in 0..7 {
            let wanted = shares(&endpoints, &HashMap::new(), cursor, MAX_IN_FLIGHT);
            let tries: u64 = wanted.iter().map(|(_, n)| n).sum();
            assert_eq!(tries, MAX_IN_FLIGHT as u64);
            cursor = wanted.last().unwrap().0;
            served.extend(wanted.into_iter().map(|(id, _)| id));
        }
        assert_eq!(served[..100], endpoints[..]);
        assert_eq!(served[100..], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    }

    #[test]
    fn event_types_round_trip_through_the_column() {
        let column = events_column(&EventType::ALL);
        let names = events_of(&column);
        assert_eq!(names.len(), 4);
        for name in names {
            assert!(EventType::parse(&name).is_some());
        }
    }

    #[test]
    fn a_secret_is_whsec_and_32_bytes() {
        use base64::Engine;
        let secret = new_secret();
        let encoded = secret.strip_prefix("whsec_").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(bytes.len(), 32);
        assert!(standardwebhooks::Webhook::new(&secret).is_ok());
    }
}
