//! Timestamps the service writes itself (the session engine's Unix seconds); every
//! `DateTime<Utc>` of a response is chrono's own serde format.

use chrono::{DateTime, SecondsFormat};

/// Unix seconds as RFC 3339 in UTC, to the second (the session engine's times).
pub fn rfc3339(unix_seconds: i64) -> String {
    DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}
