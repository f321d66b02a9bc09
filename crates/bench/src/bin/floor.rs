//! The floor: the least code that does the unavoidable work of an authenticated
//! `GET /identities/user/{id}`: read the cookie, verify the HS256 token, one session-store
//! lookup, one row read, JSON. careers-api's figures are reported as ratios to this one.
//!
//! Also the list's floor, `GET /org-user/careers/job_applications` (`page`, `per_page`): the
//! same session checks, then **one** statement for the page of the employer's applications with
//! their applicant's profile and user, the total, and the employer check folded into it (the
//! company is the session user's org profile's), decoded by position, and the same JSON as
//! careers-api's. It does not tell a missing org profile (careers-api's 403) from an empty
//! page: the least work for the benchmark's request, whose employer has one.
//!
//! Environment: BIND_ADDR, DATABASE_URL (sqlite:// or postgres://), DATABASE_SCHEMA, REDIS_URL,
//! REDIS_KEY_PREFIX, JWT_SIGNING_SECRET, FLOOR_USER_ID, FLOOR_EMPLOYER_ID. Prints
//! `TOKEN <jwt>` for the user's session, then `EMPLOYER_TOKEN <jwt>` for the employer's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::get;
use base64::Engine as _;
// The service's JSON response, so that the ratio measures the feature set, not a writer.
use careers_api::views::Json;
use chrono::{DateTime, Utc};
use fred::prelude::*;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, SqlitePool};

/// The service's allocator, so that the ratio measures code, not the allocator (DECISIONS 51).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Serialize, Deserialize)]
struct Claims {
    user_id: i64,
    uid: String,
    ruid: String,
    iat: i64,
    exp: i64,
}

enum Store {
    Memory(Mutex<HashMap<String, String>>),
    Redis(Client, String),
}

enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Evaluates `$run` with `$pool` bound to the pool of either driver: written once, compiled for
/// each (their row types differ).
macro_rules! on_pool {
    ($db:expr, |$pool:ident| $run:expr) => {
        match $db {
            Db::Sqlite($pool) => $run,
            Db::Postgres($pool) => $run,
        }
    };
}

#[derive(Serialize, sqlx::FromRow)]
struct User {
    id: i64,
    country_id: i64,
    email: String,
    first_name: String,
    last_name: String,
    phone_code: String,
    mobile: String,
}

struct Floor {
    key: DecodingKey,
    validation: Validation,
    store: Store,
    db: Db,
}

const SELECT: &str = "SELECT id, country_id, email, first_name, last_name, phone_code, mobile \
                      FROM identities_users WHERE id = $1";

/// The session's user: the cookie, the token's signature and claims, one store lookup.
async fn session(floor: &Floor, headers: &HeaderMap) -> Result<i64, StatusCode> {
    let token = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|c| {
            c.split(';')
                .find_map(|p| p.trim().strip_prefix("jwt_access="))
        })
        .ok_or(StatusCode::UNAUTHORIZED)?;
    let claims = jsonwebtoken::decode::<Claims>(token, &floor.key, &floor.validation)
        .map_err(|_| StatusCode::UNAUTHORIZED)?
        .claims;
    let current = match &floor.store {
        Store::Memory(map) => map.lock().unwrap().get(&claims.ruid).cloned(),
        Store::Redis(client, prefix) => client
            .hget::<Option<String>, _, _>(format!("{prefix}default:{{{}}}", claims.ruid), "u")
            .await
            .map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?,
    };
    if current.as_deref() != Some(claims.uid.as_str()) {
        return Err(StatusCode::UNAUTHORIZED);
    }
    Ok(claims.user_id)
}

async fn user(
    State(floor): State<Arc<Floor>>,
    Path(id): Path<i64>,
    headers: HeaderMap,
) -> Result<Json<User>, StatusCode> {
    if session(&floor, &headers).await? != id {
        return Err(StatusCode::NOT_FOUND);
    }
    let row = on_pool!(&floor.db, |pool| sqlx::query_as::<_, User>(SELECT)
        .bind(id)
        .fetch_optional(pool)
        .await);
    row.map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?
        .map(Json)
        .ok_or(StatusCode::NOT_FOUND)
}

#[derive(Deserialize)]
struct Paging {
    page: Option<u64>,
    per_page: Option<u64>,
}

#[derive(Serialize)]
struct Applications {
    careers_job_applications: Vec<Application>,
    meta: Meta,
}

#[derive(Serialize)]
struct Meta {
    page: u64,
    per_page: u64,
    total: i64,
}

#[derive(Serialize)]
struct Application {
    id: i64,
    status: String,
    status_changed_at: DateTime<Utc>,
    cover_letter: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    rejection_reason: Option<String>,
    lock_version: i64,
    careers_job: Id,
    careers_job_stage: Option<Id>,
    career_user_profile: Applicant,
}

#[derive(Serialize)]
struct Id {
    id: i64,
}

#[derive(Serialize)]
struct Applicant {
    id: i64,
    identities_user: UserBrief,
}

#[derive(Serialize)]
struct UserBrief {
    id: i64,
    first_name: String,
    last_name: String,
}

/// A row of [`PAGE`], by position.
type ApplicationRow = (
    i64,
    String,
    String,
    DateTime<Utc>,
    DateTime<Utc>,
    i64,
    i64,
    String,
    String,
    i64,
    DateTime<Utc>,
    Option<String>,
    i64,
    i64,
    Option<i64>,
);

const PAGE: &str = "SELECT a.id, a.status, a.cover_letter, a.created_at, a.updated_at, p.id, u.id, \
                    u.first_name, u.last_name, (SELECT COUNT(*) FROM careers_job_applications c \
                    WHERE c.company_id = (SELECT company_id FROM org_user_profiles \
                    WHERE identities_user_id = $1)), a.status_changed_at, a.rejection_reason, \
                    a.lock_version, a.careers_job_id, a.careers_job_stage_id \
                    FROM careers_job_applications a \
                    INNER JOIN careers_user_profiles p ON p.id = a.careers_user_profile_id \
                    INNER JOIN identities_users u ON u.id = p.identities_user_id \
                    WHERE a.company_id = (SELECT company_id FROM org_user_profiles \
                    WHERE identities_user_id = $1) \
                    ORDER BY a.id";

async fn applications(
    State(floor): State<Arc<Floor>>,
    Query(paging): Query<Paging>,
    headers: HeaderMap,
) -> Result<Json<Applications>, StatusCode> {
    let user_id = session(&floor, &headers).await?;
    let page = paging.page.unwrap_or(1).max(1);
    let per_page = paging.per_page.unwrap_or(25).clamp(1, 100);
    let offset = ((page - 1) * per_page) as i64;
    // The page's bounds as literals (two integers): a statement with a bound `LIMIT` is
    // re-planned on every execution by SQLite 3.47+, and sqlx cannot set the planner-stability
    // option; the same text is one cached statement for every request of the benchmark.
    let sql = format!("{PAGE} LIMIT {per_page} OFFSET {offset}");
    let rows = on_pool!(&floor.db, |pool| sqlx::query_as::<_, ApplicationRow>(
        sqlx::AssertSqlSafe(sql)
    )
    .bind(user_id)
    .fetch_all(pool)
    .await)
    .map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?;
    let total = rows.first().map_or(0, |row| row.9);
    let careers_job_applications = rows
        .into_iter()
        .map(|r| Application {
            id: r.0,
            status: r.1,
            status_changed_at: r.10,
            cover_letter: r.2,
            created_at: r.3,
            updated_at: r.4,
            rejection_reason: r.11,
            lock_version: r.12,
            careers_job: Id { id: r.13 },
            careers_job_stage: r.14.map(|id| Id { id }),
            career_user_profile: Applicant {
                id: r.5,
                identities_user: UserBrief {
                    id: r.6,
                    first_name: r.7,
                    last_name: r.8,
                },
            },
        })
        .collect();
    Ok(Json(Applications {
        careers_job_applications,
        meta: Meta {
            page,
            per_page,
            total,
        },
    }))
}

fn id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).unwrap();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

#[tokio::main]
async fn main() {
    let secret = var("JWT_SIGNING_SECRET").expect("JWT_SIGNING_SECRET");
    let url = var("DATABASE_URL").expect("DATABASE_URL");
    let db = if url.starts_with("sqlite:") {
        Db::Sqlite(
            sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(8)
                // As careers-api: no liveness ping on an embedded file connection.
                .test_before_acquire(false)
                .connect(&url)
                .await
                .unwrap(),
        )
    } else {
        let mut options: sqlx::postgres::PgConnectOptions = url.parse().unwrap();
        if let Some(schema) = var("DATABASE_SCHEMA") {
            options = options.options([("search_path", schema)]);
        }
        Db::Postgres(
            sqlx::postgres::PgPoolOptions::new()
                .max_connections(16)
                // As careers-api under load: no liveness ping before each statement.
                .test_before_acquire(false)
                .connect_with(options)
                .await
                .unwrap(),
        )
    };
    let user_id: i64 = var("FLOOR_USER_ID").map_or(1, |v| v.parse().unwrap());
    let employer_id: i64 = var("FLOOR_EMPLOYER_ID").map_or(1, |v| v.parse().unwrap());
    // One session for each: (user id, uid, ruid).
    let sessions = [user_id, employer_id].map(|user| (user, id(), id()));
    let store = match var("REDIS_URL") {
        Some(url) => {
            let client = Builder::from_config(Config::from_url(&url).unwrap())
                .build()
                .unwrap();
            client.init().await.unwrap();
            let prefix = var("REDIS_KEY_PREFIX").unwrap_or_else(|| "careers:".into());
            for (_, uid, ruid) in &sessions {
                let key = format!("{prefix}default:{{{ruid}}}");
                let _: () = client.hset(&key, ("u", uid.as_str())).await.unwrap();
                let _: () = client.expire(&key, 3600, None).await.unwrap();
            }
            Store::Redis(client, prefix)
        }
        None => Store::Memory(Mutex::new(
            sessions
                .iter()
                .map(|(_, uid, ruid)| (ruid.clone(), uid.clone()))
                .collect(),
        )),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let [user_token, employer_token] = sessions.map(|(user_id, uid, ruid)| {
        let claims = Claims {
            user_id,
            uid,
            ruid,
            iat: now,
            exp: now + 3600,
        };
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap()
    });
    // Listening before the token is printed: the caller sends its first request on reading it.
    let addr = var("BIND_ADDR").unwrap_or_else(|| "127.0.0.1:3100".into());
    let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
    println!("TOKEN {user_token}\nEMPLOYER_TOKEN {employer_token}");
    let floor = Arc::new(Floor {
        key: DecodingKey::from_secret(secret.as_bytes()),
        validation: Validation::new(Algorithm::HS256),
        store,
        db,
    });
    let app = axum::Router::new()
        .route("/identities/user/{id}", get(user))
        .route("/org-user/careers/job_applications", get(applications))
        .with_state(floor);
    // Ends on SIGTERM by returning from `main`, so that an instrumented build (crates/bench/pgo.sh)
    // writes its profile.
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("a SIGTERM handler");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            terminate.recv().await;
        })
        .await
        .unwrap();
}
