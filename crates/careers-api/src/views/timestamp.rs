//! Timestamps in responses: RFC 3339 in UTC with `Z`, the fraction in 0, 3, 6 or 9 digits as
//! needed: exactly chrono's own serde format, written without `fmt` machinery. chrono's
//! `Display` path cost about half a microsecond per timestamp, and a page of 25 applications
//! has 50 of them (docs/PERFORMANCE.md). Also the layout sqlx stores a `DateTime<Utc>` in on
//! SQLite ([`StoredFields`]), which is the same text with `+00:00` for `Z`, and [`Stamp`], which
//! copies such a text into a response instead of parsing and formatting it again.

// `unsafe` here: UTF-8 text whose bytes were already checked, each block with its SAFETY
// argument.
#![allow(unsafe_code)]

use std::borrow::Cow;

use chrono::{DateTime, Datelike, Timelike, Utc};
use serde::ser::Error as _;
use serde::{Serialize, Serializer};

/// A response's timestamp: a time, or the text a database stores one in, where that text is
/// what the response writes for it but for its offset: the employer's list reads its 50
/// timestamps this way, and parsing each into a time to format it again was about 8 % of the
/// list's instructions (docs/PERFORMANCE.md, session 14). Either writes chrono's serde format.
/// (Equality compares the two forms as they are: a time and its stored text are not equal.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp<'a> {
    Time(DateTime<Utc>),
    Stored(StoredText<'a>),
}

/// Text that [`Stamp::stored`] took: its response text is its digits with `Z` for `+00:00`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredText<'a>(Cow<'a, str>);

impl StoredText<'_> {
    /// The response's text but for its `Z`: the text without its offset.
    fn digits(&self) -> &str {
        &self.0[..self.0.len() - "+00:00".len()]
    }
}

impl Stamp<'_> {
    /// The same stamp, its text owned.
    pub fn into_owned(self) -> Stamp<'static> {
        match self {
            Self::Time(time) => Stamp::Time(time),
            Self::Stored(text) => Stamp::Stored(StoredText(text.0.into_owned().into())),
        }
    }
}

impl<'a> Stamp<'a> {
    /// `text` as it is stored, if it is sqlx's layout (`2026-11-24T09:00:00.120+00:00`) of a
    /// valid time, with the fraction in as many digits as the response writes (0, 3, 6 or 9:
    /// the fewest that hold it), so that the response's text is the same with `Z` for `+00:00`.
    /// Anything else is `None` (and read as a time).
    pub fn stored(text: &'a [u8]) -> Option<Self> {
        let fields = StoredFields::read(text)?;
        if !fields.is_valid() || fields.fraction_width != fraction_width(fields.nano) {
            return None;
        }
        debug_assert!(text.is_ascii());
        // SAFETY: `StoredFields::read` took every byte of `text` as an ASCII digit or one of
        // the layout's marks, so it is UTF-8. Checking it again cost about 80 instructions a
        // timestamp (callgrind, docs/PERFORMANCE.md, session 14); the property test
        // `a_stored_stamp_is_exactly_sqlxs_text` puts every byte at every place of its text.
        let text = unsafe { std::str::from_utf8_unchecked(text) };
        Some(Self::Stored(StoredText(Cow::Borrowed(text))))
    }
}

impl From<DateTime<Utc>> for Stamp<'_> {
    fn from(time: DateTime<Utc>) -> Self {
        Self::Time(time)
    }
}

impl Serialize for Stamp<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Time(time) => serialize(time, serializer),
            Self::Stored(text) => {
                let mut buf = [0u8; 36];
                let digits = text.digits();
                buf[..digits.len()].copy_from_slice(digits.as_bytes());
                buf[digits.len()] = b'Z';
                let text = std::str::from_utf8(&buf[..=digits.len()]).map_err(S::Error::custom)?;
                serializer.serialize_str(text)
            }
        }
    }
}

/// The fields of a timestamp in the layout sqlx writes a `DateTime<Utc>` in on SQLite: RFC 3339
/// with a fraction of 0, 3, 6 or 9 digits and the offset `+00:00`, read by position. The date
/// and time are checked and read eight bytes at a time ([`digits_and_marks`]); a byte at a time,
/// they were most of the 300 instructions a timestamp took (callgrind, docs/PERFORMANCE.md,
/// session 14).
struct StoredFields {
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nano: u32,
    fraction_width: usize,
}

impl StoredFields {
    /// The fields of `text`, if it has the layout; whether they make a time is not checked.
    fn read(text: &[u8]) -> Option<Self> {
        fn number(digits: &[u8]) -> Option<u32> {
            digits.iter().try_fold(0u32, |n, &d| {
                d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
            })
        }
        let (main, rest) = text.split_at_checked(19)?;
        let (nano, fraction_width) = match rest.strip_suffix(b"+00:00")? {
            [] => (0, 0),
            // Nine digits, as most stored times have them: eight at a time, then the last.
            [b'.', fraction @ ..] if fraction.len() == 9 => {
                let eight = digits_and_marks(
                    u64::from_le_bytes(fraction[..8].try_into().ok()?),
                    *b"00000000",
                )?;
                (eight_digits(eight) * 10 + number(&fraction[8..])?, 9)
            }
            [b'.', fraction @ ..] if matches!(fraction.len(), 3 | 6) => (
                number(fraction)?
                    * if fraction.len() == 3 {
                        1_000_000
                    } else {
                        1_000
                    },
                fraction.len(),
            ),
            _ => return None,
        };
        // `YYYY-MM-`, `DDTHH:MM` and `HH:MM:SS` (overlapping the second).
        let word =
            |at: usize| u64::from_le_bytes(main[at..at + 8].try_into().expect("eight bytes"));
        let date = digits_and_marks(word(0), *b"0000-00-")?;
        let day = digits_and_marks(word(8), *b"00T00:00")?;
        let time = digits_and_marks(word(11), *b"00:00:00")?;
        let pair =
            |digits: [u8; 8], at: usize| u32::from(digits[at]) * 10 + u32::from(digits[at + 1]);
        Some(Self {
            year: pair(date, 0) * 100 + pair(date, 2),
            month: pair(date, 5),
            day: pair(day, 0),
            hour: pair(day, 3),
            minute: pair(time, 3),
            second: pair(time, 6),
            nano,
            fraction_width,
        })
    }

    /// Whether the fields make a time: the day within its month of the proleptic Gregorian
    /// calendar, the time within the day (no leap second: the fraction has at most nine
    /// digits, so it cannot hold chrono's, which counts from a billion).
    fn is_valid(&self) -> bool {
        let leap = self.year.is_multiple_of(4)
            && (!self.year.is_multiple_of(100) || self.year.is_multiple_of(400));
        let days = match self.month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return false,
        };
        (1..=days).contains(&self.day) && self.hour < 24 && self.minute < 60 && self.second < 60
    }
}

/// The eight bytes of `word` (little-endian) as the layout `pattern` has them, a `0` for a
/// digit and any other byte for itself: each digit's value (and 0 for each mark), or `None`
/// if a byte does not fit. `word ^ pattern` leaves a digit's value in its byte (a byte of `0x30`
/// to `0x39` and only those become 0 to 9) and zero in a mark's; adding `0x76` to a digit's
/// byte or `0x7f` to a mark's sets the byte's high bit exactly when it is out of range, with
/// no carry into the next byte unless the high bit was already set, which fails it anyway.
fn digits_and_marks(word: u64, pattern: [u8; 8]) -> Option<[u8; 8]> {
    const HIGH_BITS: u64 = u64::from_le_bytes([0x80; 8]);
    let limits = pattern.map(|byte| if byte == b'0' { 0x76 } else { 0x7f });
    let values = word ^ u64::from_le_bytes(pattern);
    let out_of_range = (values.wrapping_add(u64::from_le_bytes(limits)) | values) & HIGH_BITS;
    (out_of_range == 0).then(|| values.to_le_bytes())
}

/// The number that eight digits' values (as [`digits_and_marks`] gives them, the first digit
/// first) make: pairs, then fours, then the eight, each step one multiplication of the word.
fn eight_digits(digits: [u8; 8]) -> u32 {
    let word = u64::from_le_bytes(digits);
    let pairs = (word * 10 + (word >> 8)) & 0x00ff_00ff_00ff_00ff;
    let fours = (pairs * 100 + (pairs >> 16)) & 0x0000_ffff_0000_ffff;
    ((fours * 10_000 + (fours >> 32)) & 0xffff_ffff) as u32
}

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
    match write(time, &mut buf) {
        Some(len) => {
            debug_assert!(buf[..len].is_ascii());
            // SAFETY: `write` fills `buf[..len]` with ASCII digits and the marks `-T:.Z` only,
            // so it is UTF-8. Checking it again cost 116 instructions a timestamp, a seventh of
            // this function (callgrind, docs/PERFORMANCE.md, session 10); the test
            // `writes_what_chrono_writes` takes every path of `write`.
            serializer.serialize_str(unsafe { std::str::from_utf8_unchecked(&buf[..len]) })
        }
        // Years outside 0..=9999 and leap seconds: chrono's own path.
        None => time.serialize(serializer),
    }
}

/// Writes `stamp` into `out` as a JSON string, the bytes its `Serialize` has the JSON writer
/// write: for bodies written by hand (`EmployerApplicationItem::write_json`).
pub fn write_json(out: &mut Vec<u8>, stamp: &Stamp<'_>) -> super::json::Result {
    match stamp {
        Stamp::Stored(text) => {
            out.push(b'"');
            out.extend_from_slice(text.digits().as_bytes());
            out.extend_from_slice(b"Z\"");
            Ok(())
        }
        Stamp::Time(time) => {
            let mut buf = [0u8; 30];
            match write(time, &mut buf) {
                Some(len) => {
                    out.push(b'"');
                    out.extend_from_slice(&buf[..len]);
                    out.push(b'"');
                    Ok(())
                }
                None => super::json::to_writer(out, time),
            }
        }
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

#[cfg(test)]
mod tests {
    use chrono::{DateTime, SecondsFormat, Utc};
    use proptest::prelude::*;

    use super::Stamp;

    /// What sqlx stores a time as on SQLite (`Encode<Sqlite>` for `DateTime<Utc>`).
    fn sqlx_text(time: &DateTime<Utc>) -> String {
        time.to_rfc3339_opts(SecondsFormat::AutoSi, false)
    }

    /// A stamp's JSON, through its `Serialize` and through `write_json`, which must agree.
    fn stamp_json(stamp: &Stamp<'_>) -> String {
        let serialized = serde_json::to_string(stamp).unwrap();
        let mut written = Vec::new();
        super::write_json(&mut written, stamp).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), serialized);
        serialized
    }

    fn any_time() -> impl Strategy<Value = DateTime<Utc>> {
        (
            -62_167_219_200i64..253_402_300_800, // years 0 to 9999
            prop_oneof![
                Just(0u32),
                (1u32..1000).prop_map(|ms| ms * 1_000_000),
                (1u32..1_000_000).prop_map(|us| us * 1_000),
                0u32..1_000_000_000,
            ],
        )
            .prop_map(|(seconds, nanos)| DateTime::from_timestamp(seconds, nanos).unwrap())
    }

    proptest! {
        /// Every time's stored text is taken as it is and answers what the time answers:
        /// chrono's serde format.
        #[test]
        fn stored_stamps_write_what_their_time_writes(time in any_time()) {
            let text = sqlx_text(&time);
            let stored = Stamp::stored(text.as_bytes());
            prop_assert!(stored.is_some(), "{}", text);
            let json = stamp_json(&stored.unwrap());
            prop_assert_eq!(&json, &stamp_json(&Stamp::Time(time)));
            prop_assert_eq!(json, serde_json::to_string(&time).unwrap());
        }

        /// Any byte at any place of a stored text: taken exactly when the text is what sqlx
        /// stores for the time it reads as, and then answering that time's JSON.
        #[test]
        fn a_stored_stamp_is_exactly_sqlxs_text(
            time in any_time(),
            at in 0usize..40,
            byte in any::<u8>(),
        ) {
            let mut text = sqlx_text(&time).into_bytes();
            let at = at % text.len();
            text[at] = byte;
            let reads_as = std::str::from_utf8(&text)
                .ok()
                .and_then(|text| DateTime::parse_from_rfc3339(text).ok())
                .map(|time| time.to_utc())
                .filter(|time| sqlx_text(time).as_bytes() == text.as_slice());
            let stored = Stamp::stored(&text);
            prop_assert_eq!(stored.is_some(), reads_as.is_some(), "{}", text.escape_ascii());
            if let (Some(stored), Some(time)) = (stored, reads_as) {
                prop_assert_eq!(stamp_json(&stored), stamp_json(&Stamp::Time(time)));
            }
        }
    }

    /// Texts the stamp leaves to be read as times: other layouts, fractions longer than the
    /// response writes, impossible dates and times; and the calendar's edges it takes.
    #[test]
    fn a_stamp_takes_only_the_responses_own_digits() {
        for text in [
            "2026-11-24T09:00:00.120000+00:00",
            "2026-11-24T09:00:00.123000000+00:00",
            "2026-11-24T09:00:00.000+00:00",
            "2026-11-24T09:00:00Z",
            "2026-11-24T10:00:00+01:00",
            "2025-02-29T09:00:00+00:00",
            "1900-02-29T09:00:00+00:00",
            "2026-04-31T09:00:00+00:00",
            "2026-13-01T09:00:00+00:00",
            "2026-00-01T09:00:00+00:00",
            "2026-11-00T09:00:00+00:00",
            "2026-11-24T24:00:00+00:00",
            "2026-11-24T09:60:00+00:00",
            "2026-06-30T23:59:60+00:00",
        ] {
            assert_eq!(Stamp::stored(text.as_bytes()), None, "{text}");
        }
        for text in [
            "2024-02-29T09:00:00+00:00",
            "2000-02-29T09:00:00+00:00",
            "0000-02-29T00:00:00+00:00",
            "9999-12-31T23:59:59.999999999+00:00",
            "2026-11-24T09:00:00.120+00:00",
            "2026-11-24T09:00:00.123456+00:00",
            "2026-11-24T09:00:00.123456789+00:00",
        ] {
            let stamp = Stamp::stored(text.as_bytes()).expect(text);
            let time = DateTime::parse_from_rfc3339(text).unwrap().to_utc();
            assert_eq!(stamp_json(&stamp), stamp_json(&Stamp::Time(time)), "{text}");
        }
    }

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
