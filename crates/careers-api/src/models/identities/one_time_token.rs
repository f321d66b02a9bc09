//! The single-use tokens that links carry (password resets, e-mail verification; CONTRACT §10,
//! §14): 256 bits from the OS, base64url, kept only as their SHA-256.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Expr, ExprTrait, Order, Query};
use sea_orm::{ConnectionTrait, DbErr};
use sha2::{Digest, Sha256};

/// How a token is stored: lower-case hex SHA-256 (a token carries 256 random bits, so no salt
/// or slow hash is needed to keep it unguessable from the hash).
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A new token: 256 bits from the OS, base64url (43 characters).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("operating system random number generator failed");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// How many of an account's tokens of one kind are valid at once: the newest.
pub const KEPT_TOKENS: u64 = 3;

/// Makes room for a new token of `user_id` in `table` (a table of tokens: `id`, `user_id`,
/// `used_at`, `expires_at`): every token of the user goes but the newest `KEPT_TOKENS - 1`
/// that are still valid, so that with the new one at most [`KEPT_TOKENS`] are (asking again
/// cannot void the owner's link; CONTRACT §10, §14).
pub async fn keep_newest(
    conn: &impl ConnectionTrait,
    table: &str,
    user_id: i64,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let column = |name: &str| Expr::col(Alias::new(name));
    let newest = Query::select()
        .column(Alias::new("id"))
        .from(Alias::new(table))
        .and_where(column("user_id").eq(user_id))
        .and_where(column("used_at").is_null())
        .and_where(column("expires_at").gt(now))
        .order_by(Alias::new("id"), Order::Desc)
        .limit(KEPT_TOKENS - 1)
        .to_owned();
    let older = Query::delete()
        .from_table(Alias::new(table))
        .and_where(column("user_id").eq(user_id))
        .and_where(column("id").not_in_subquery(newest))
        .to_owned();
    conn.execute(&older).await?;
    Ok(())
}
