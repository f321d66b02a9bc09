//! Timestamps in responses and log lines: RFC 3339 in UTC with `Z`, the fraction in 0, 3, 6 or 9
//! digits as needed, which is exactly chrono's own serde format, written without `fmt`'s
//! machinery. chrono's `Display` path (format items, a `Formatter` per field) cost the employer
//! list a tenth of its CPU for its 50 timestamps, and every access line one more (the fast-path
//! register in docs/PERFORMANCE.md). The oracle test holds it to chrono's bytes.

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use serde::{Serialize, Serializer};

/// The digits of the fraction chrono's serde format writes for `nano`: none for a whole second,
/// else the fewest of 3, 6 and 9 that hold it.
fn fraction_width(nano: u32) -> usize {
    if nano == 0 {
        0
    } else if nano.is_multiple_of(1_000_000) {
        3
    } else if nano.is_multiple_of(1_000) {
        6
    } else {
        9
    }
}

/// `#[serde(serialize_with = "…")]` for `DateTime<Utc>` fields.
pub fn serialize<S: Serializer>(time: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    let mut buf = [0u8; 30];
    match write(time, &mut buf).and_then(|len| std::str::from_utf8(&buf[..len]).ok()) {
        Some(text) => serializer.serialize_str(text),
        // Years outside 0..=9999 and leap seconds: chrono's own path.
        None => time.serialize(serializer),
    }
}

/// Writes `time` into `buf` as chrono's serde format does; `None` for years outside 0..=9999
/// and leap seconds. Also the log lines' timestamp (`crate::logging`).
pub(crate) fn write(time: &DateTime<Utc>, buf: &mut [u8; 30]) -> Option<usize> {
    // The fields of the UTC date and time, each read from it once (`DateTime`'s own accessors
    // add the offset again for each field).
    let time = time.naive_utc();
    let year = time.year();
    let nano = time.nanosecond();
    if !(0..=9999).contains(&year) || nano >= 1_000_000_000 {
        return None;
    }
    /// "00" to "99": two digits a division.
    const PAIRS: [u8; 200] = {
        let mut pairs = [0u8; 200];
        let mut i = 0;
        while i < 100 {
            pairs[2 * i] = b'0' + (i / 10) as u8;
            pairs[2 * i + 1] = b'0' + (i % 10) as u8;
            i += 1;
        }
        pairs
    };
    fn digits(buf: &mut [u8; 30], at: &mut usize, value: u32, width: usize) {
        let (start, mut end, mut v) = (*at, *at + width, value as usize);
        while end >= start + 2 {
            buf[end - 2..end].copy_from_slice(&PAIRS[2 * (v % 100)..][..2]);
            v /= 100;
            end -= 2;
        }
        if end > start {
            buf[start] = b'0' + (v % 10) as u8;
        }
        *at = start + width;
    }
    let mut at = 0;
    digits(buf, &mut at, year as u32, 4);
    for (mark, value) in [
        (b'-', time.month()),
        (b'-', time.day()),
        (b'T', time.hour()),
        (b':', time.minute()),
        (b':', time.second()),
    ] {
        buf[at] = mark;
        at += 1;
        digits(buf, &mut at, value, 2);
    }
    let width = fraction_width(nano);
    let fraction = match width {
        3 => nano / 1_000_000,
        6 => nano / 1_000,
        _ => nano,
    };
    if width > 0 {
        buf[at] = b'.';
        at += 1;
        digits(buf, &mut at, fraction, width);
    }
    buf[at] = b'Z';
    Some(at + 1)
}

/// Unix seconds as RFC 3339 in UTC, to the second (the session engine's times).
pub fn rfc3339(unix_seconds: i64) -> String {
    DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;
    use chrono::Utc;

    #[derive(serde::Serialize)]
    struct Fast(#[serde(serialize_with = "super::serialize")] DateTime<Utc>);

    fn same_as_chrono(seconds: i64, nanos: u32) {
        let time = DateTime::<Utc>::from_timestamp(seconds, nanos).unwrap();
        assert_eq!(
            serde_json::to_string(&Fast(time)).unwrap(),
            serde_json::to_string(&time).unwrap(),
            "{seconds} s {nanos} ns"
        );
    }

    #[test]
    fn writes_what_chrono_writes() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // From before year 0 to after 9999, so both paths are taken.
            let seconds = (x % 400_000_000_000) as i64 - 100_000_000_000;
            // The path from bits the values below do not use, so that every fraction width
            // meets values ending in any digit.
            let nanos = match (x >> 40) % 5 {
                0 => 0,
                1 => (x % 1000) as u32 * 1_000_000,
                2 => (x % 1_000_000) as u32 * 1_000,
                3 => (x % 1_000_000_000) as u32,
                _ => 1_000_000_000 + (x % 1000) as u32, // a leap second's fraction
            };
            if DateTime::<Utc>::from_timestamp(seconds, nanos).is_some() {
                same_as_chrono(seconds, nanos);
            }
        }
        same_as_chrono(0, 0);
        for nanos in [1, 100_000, 100_000_000, 120_000_000, 999_000] {
            same_as_chrono(0, nanos);
        }
        same_as_chrono(253_402_300_800, 0); // 10000-01-01: chrono's own path
        same_as_chrono(-62_167_219_201, 0); // -0001-12-31T23:59:59Z: chrono's own path
        same_as_chrono(253_402_300_799, 999_999_999); // 9999-12-31T23:59:59.999999999Z
        same_as_chrono(-62_167_219_200, 0); // 0000-01-01T00:00:00Z
    }
}
