//! The floor: the least code that does the unavoidable work of an authenticated
//! `GET /identities/user/{id}`: read the cookie, verify the HS256 token, one session-store
//! lookup, one row read, JSON. careers-api's figures are reported as ratios to this one.
//!
//! Environment: BIND_ADDR, DATABASE_URL (sqlite:// or postgres://), DATABASE_SCHEMA, REDIS_URL,
//! REDIS_KEY_PREFIX, JWT_SIGNING_SECRET, FLOOR_USER_ID. Prints `TOKEN <jwt>` for its session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::get;
use base64::Engine as _;
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

async fn user(
    State(floor): State<Arc<Floor>>,
    Path(id): Path<i64>,
    headers: HeaderMap,
) -> Result<Json<User>, StatusCode> {
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
    if claims.user_id != id {
        return Err(StatusCode::NOT_FOUND);
    }
    let row = match &floor.db {
        Db::Sqlite(pool) => {
            sqlx::query_as::<_, User>(SELECT)
                .bind(id)
                .fetch_optional(pool)
                .await
        }
        Db::Postgres(pool) => {
            sqlx::query_as::<_, User>(SELECT)
                .bind(id)
                .fetch_optional(pool)
                .await
        }
    };
    row.map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?
        .map(Json)
        .ok_or(StatusCode::NOT_FOUND)
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
    let (uid, ruid) = (id(), id());
    let store = match var("REDIS_URL") {
        Some(url) => {
            let client = Builder::from_config(Config::from_url(&url).unwrap())
                .build()
                .unwrap();
            client.init().await.unwrap();
            let prefix = var("REDIS_KEY_PREFIX").unwrap_or_else(|| "careers:".into());
            let key = format!("{prefix}default:{{{ruid}}}");
            let _: () = client.hset(&key, ("u", uid.as_str())).await.unwrap();
            let _: () = client.expire(&key, 3600, None).await.unwrap();
            Store::Redis(client, prefix)
        }
        None => Store::Memory(Mutex::new(HashMap::from([(ruid.clone(), uid.clone())]))),
    };
    let user_id: i64 = var("FLOOR_USER_ID").map_or(1, |v| v.parse().unwrap());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = Claims {
        user_id,
        uid,
        ruid,
        iat: now,
        exp: now + 3600,
    };
    let token = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap();
    // Listening before the token is printed: the caller sends its first request on reading it.
    let addr = var("BIND_ADDR").unwrap_or_else(|| "127.0.0.1:3100".into());
    let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
    println!("TOKEN {token}");
    let floor = Arc::new(Floor {
        key: DecodingKey::from_secret(secret.as_bytes()),
        validation: Validation::new(Algorithm::HS256),
        store,
        db,
    });
    let app = axum::Router::new()
        .route("/identities/user/{id}", get(user))
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
