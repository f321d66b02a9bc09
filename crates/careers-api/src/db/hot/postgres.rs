//! PostgreSQL values read from their binary form where that is a plain comparison of one type
//! OID, beside sqlx's `try_get` (the fast-path register of docs/PERFORMANCE.md); anything else
//! goes to sqlx's decoder.

use chrono::{DateTime, Utc};
use sea_orm::sqlx::postgres::types::Oid;
use sea_orm::sqlx::postgres::{PgRow, PgValueFormat};
use sea_orm::sqlx::{Row, ValueRef as _};

/// The OIDs of the PostgreSQL types of the hot reads' columns: `bigint`, `text`, `varchar`
/// (SeaORM's `string`) and `timestamptz`.
pub(super) const INT8: Oid = Oid(20);
const TEXT: Oid = Oid(25);
const VARCHAR: Oid = Oid(1043);
const TIMESTAMPTZ: Oid = Oid(1184);

/// The bytes of a PostgreSQL value that is not NULL, in the binary format (that of every
/// prepared statement), of a column whose type is one of `types`; `None` for anything else,
/// which the caller leaves to sqlx's `try_get`. `try_get` compares the column's type with each
/// type the Rust type accepts, on every value (six for a `&str`), where this compares one OID:
/// the PostgreSQL list +5.5 % to +9 % (PERFORMANCE.md, the fast-path register).
fn postgres_binary<'r>(row: &'r PgRow, index: usize, types: &[Oid]) -> Option<&'r [u8]> {
    let raw = row.try_get_raw(index).ok()?;
    if raw.format() != PgValueFormat::Binary || !types.contains(&raw.type_info().oid()?) {
        return None;
    }
    raw.as_bytes().ok()
}

/// A PostgreSQL `text` or `varchar` value, checked as UTF-8 as sqlx checks it.
pub(super) fn postgres_text(row: &PgRow, index: usize) -> Option<&str> {
    std::str::from_utf8(postgres_binary(row, index, &[TEXT, VARCHAR])?).ok()
}

/// A PostgreSQL value of type `oid` that is eight bytes, big-endian: a `bigint`, or a
/// `timestamptz`'s microseconds.
pub(super) fn postgres_i64(row: &PgRow, index: usize, oid: Oid) -> Option<i64> {
    let bytes = postgres_binary(row, index, &[oid])?;
    Some(i64::from_be_bytes(bytes.try_into().ok()?))
}

/// A PostgreSQL `timestamptz` that is not NULL: microseconds since 2000-01-01 UTC. `None` also
/// for one chrono cannot hold (`infinity`), which sqlx's decoder then answers as it does.
pub(super) fn postgres_timestamptz(row: &PgRow, index: usize) -> Option<DateTime<Utc>> {
    /// 2000-01-01 in microseconds since the Unix epoch.
    const POSTGRES_EPOCH: i64 = 946_684_800_000_000;
    let micros = postgres_i64(row, index, TIMESTAMPTZ)?;
    DateTime::from_timestamp_micros(micros.checked_add(POSTGRES_EPOCH)?)
}
