//! What the benchmark's programs share: the connection to a benchmark database.

/// A one-connection PostgreSQL pool whose connection works in `schema` (its search path), as
/// careers-api's does with `DATABASE_SCHEMA`.
pub async fn postgres_pool(url: &str, schema: Option<String>) -> sqlx::PgPool {
    let mut options: sqlx::postgres::PgConnectOptions = url.parse().expect("a PostgreSQL URL");
    if let Some(schema) = schema {
        options = options.options([("search_path", schema)]);
    }
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .expect("PostgreSQL")
}
