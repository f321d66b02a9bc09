//! The JSON line format: one object per event, `{"timestamp", "level", <fields>, "target"}`,
//! the fields flattened (the message is the field `message`), as tracing-subscriber's own JSON
//! formatter writes them with `flatten_event(true)`, but written straight into the line
//! instead of through serde's and `fmt`'s generic machinery: through the generic formatter the
//! access line alone cost a tenth of an authenticated GET's instructions
//! (docs/PERFORMANCE.md). The service opens no spans, so none are written; an event written
//! while a request's handler runs gets that request's client address as `client_ip` and its id
//! as the field `request_id` instead
//! (the edge layer marks it, [`super::Handling`]). The edge layer's access line has its own writer here, [`access_line`],
//! which writes the same bytes without tracing's dispatch (docs/DECISIONS.md 57).

use std::fmt::{self, Write as _};

use chrono::{DateTime, Timelike, Utc};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_log::NormalizeEvent;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The service's JSON event format (`LOG_FORMAT=json`).
pub struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _: &FmtContext<'_, S, N>,
        mut out: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // Events bridged from the `log` crate carry their real target in `log.*` fields.
        let normalized = event.normalized_metadata();
        let meta = normalized.as_ref().unwrap_or_else(|| event.metadata());
        out.write_str("{\"timestamp\":\"")?;
        timestamp(&mut out, Utc::now())?;
        out.write_str("\",\"level\":\"")?;
        out.write_str(meta.level().as_str())?;
        out.write_char('"')?;
        let mut fields = Fields {
            out: &mut out,
            result: Ok(()),
            request_id: false,
            client_ip: false,
        };
        event.record(&mut fields);
        fields.result?;
        let (has_request_id, has_client_ip) = (fields.request_id, fields.client_ip);
        // Written while a request's handler runs: that request's client address and id, unless
        // the event names them.
        if !has_client_ip && let Some(ip) = super::handling::client_ip() {
            out.write_str(",\"client_ip\":\"")?;
            write!(out, "{ip}")?;
            out.write_char('"')?;
        }
        if !has_request_id {
            super::handling::with_request_id(|id| match id {
                Some(id) => {
                    out.write_str(",\"request_id\":")?;
                    string(&mut out, id)
                }
                None => Ok(()),
            })?;
        }
        out.write_str(",\"target\":")?;
        string(&mut out, meta.target())?;
        out.write_str("}\n")
    }
}

/// What the edge layer's access line says.
pub(crate) struct Access<'a> {
    pub level: Level,
    pub method: &'a str,
    pub path: &'a str,
    pub status: u16,
    pub latency_us: u64,
    pub request_id: &'a str,
}

/// The target and message of the access line.
pub(crate) const ACCESS_TARGET: &str = "careers_api::access";
pub(crate) const ACCESS_MESSAGE: &str = "finished processing request";

/// Writes the access line into `out` as [`JsonLines`] formats the edge layer's access event,
/// byte for byte, without tracing's dispatch and field visitor (docs/DECISIONS.md 57).
pub(crate) fn access_line(out: &mut String, access: &Access<'_>) -> fmt::Result {
    out.push_str("{\"timestamp\":\"");
    timestamp(out, Utc::now())?;
    out.push_str("\",\"level\":\"");
    out.push_str(access.level.as_str());
    out.push_str("\",\"message\":\"");
    out.push_str(ACCESS_MESSAGE);
    out.push_str("\",\"method\":");
    string(out, access.method)?;
    out.push_str(",\"path\":");
    string(out, access.path)?;
    out.push_str(",\"status\":");
    out.push_str(itoa::Buffer::new().format(access.status));
    out.push_str(",\"latency_us\":");
    out.push_str(itoa::Buffer::new().format(access.latency_us));
    out.push_str(",\"request_id\":");
    string(out, access.request_id)?;
    out.push_str(",\"target\":\"");
    out.push_str(ACCESS_TARGET);
    out.push_str("\"}\n");
    Ok(())
}

/// RFC 3339 in UTC to the microsecond, as the formatter it replaces wrote it.
fn timestamp(out: &mut impl fmt::Write, now: DateTime<Utc>) -> fmt::Result {
    let now = now
        .with_nanosecond(now.timestamp_subsec_micros() * 1_000)
        .unwrap_or(now);
    out.write_str(&now.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
}

/// Writes each field as `,"name":value`.
struct Fields<'a, W> {
    out: &'a mut W,
    result: fmt::Result,
    /// Whether the event has a `request_id` field of its own.
    request_id: bool,
    /// Whether the event has a `client_ip` field of its own.
    client_ip: bool,
}

impl<W: fmt::Write> Fields<'_, W> {
    fn field(&mut self, field: &Field, value: impl FnOnce(&mut W) -> fmt::Result) {
        // `log.target` and the like are already the line's own keys.
        if self.result.is_err() || field.name().starts_with("log.") {
            return;
        }
        self.request_id |= field.name() == "request_id";
        self.client_ip |= field.name() == "client_ip";
        let out = &mut *self.out;
        self.result = out
            .write_char(',')
            .and_then(|()| string(out, field.name()))
            .and_then(|()| out.write_char(':'))
            .and_then(|()| value(out));
    }

    fn quoted(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        self.field(field, |out| {
            out.write_char('"')?;
            Escaped(&mut *out).write_fmt(value)?;
            out.write_char('"')
        });
    }
}

impl<W: fmt::Write> Visit for Fields<'_, W> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.field(field, |out| string(out, value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.field(field, |out| write!(out, "{value}"));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.field(field, |out| write!(out, "{value}"));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.field(field, |out| {
            out.write_str(if value { "true" } else { "false" })
        });
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        // JSON has no NaN or infinity; serde_json writes them as null too.
        self.field(field, |out| match value.is_finite() {
            true => write!(out, "{value:?}"),
            false => out.write_str("null"),
        });
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.quoted(field, format_args!("{value}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.quoted(field, format_args!("{value:?}"));
    }
}

/// A JSON string literal.
fn string(out: &mut impl fmt::Write, value: &str) -> fmt::Result {
    out.write_char('"')?;
    Escaped(&mut *out).write_str(value)?;
    out.write_char('"')
}

/// Escapes what it is given for the inside of a JSON string literal.
struct Escaped<'a, W>(&'a mut W);

impl<W: fmt::Write> fmt::Write for Escaped<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // Most values need no escape: one pass that the compiler vectorises, then one write.
        let needs_escape = s.bytes().fold(false, |any, b| {
            any | (b < 0x20) | (b == b'"') | (b == b'\\')
        });
        if !needs_escape {
            return self.0.write_str(s);
        }
        let mut plain = 0;
        for (i, byte) in s.bytes().enumerate() {
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.write_str(&s[plain..i])?;
            plain = i + 1;
            if escape.is_empty() {
                write!(self.0, "\\u{byte:04x}")?;
            } else {
                self.0.write_str(escape)?;
            }
        }
        self.0.write_str(&s[plain..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logging::Captured;

    /// The lines `emit` logs, through [`JsonLines`] (`ours`) or tracing-subscriber's own
    /// flattened JSON format, parsed.
    fn lines_of(ours: bool, emit: impl FnOnce()) -> Vec<serde_json::Value> {
        let captured = Captured::default();
        let writer = captured.clone();
        let builder = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::TRACE);
        // Tests run in parallel, each with its own subscriber: recompute the callsites' cached
        // interest under this one before emitting (see the edge layer's tests).
        let emit = || {
            tracing::callsite::rebuild_interest_cache();
            emit();
        };
        if ours {
            tracing::subscriber::with_default(builder.event_format(JsonLines).finish(), emit);
        } else {
            let subscriber = builder.json().flatten_event(true).finish();
            tracing::subscriber::with_default(subscriber, emit);
        }
        captured
            .text()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    }

    fn events() {
        let error = std::io::Error::other("disk \"full\"");
        tracing::info!(
            target: "careers_api::access",
            method = "GET",
            path = "/identities/user/1",
            status = 200u16,
            latency_us = 41u64,
            request_id = "lb-7",
            "finished processing request"
        );
        tracing::warn!(
            identity_id = -7i64,
            refused = true,
            ratio = 0.5,
            whole = 2.0,
            "a \"quoted\"\nline\t\u{1}é \\ {}",
            "formatted"
        );
        tracing::error!(
            error = &error as &dyn std::error::Error,
            nan = f64::NAN,
            "fault"
        );
        tracing::debug!(value = ?Some("x"), "debug");
    }

    #[test]
    fn writes_what_the_generic_json_formatter_writes() {
        let ours = lines_of(true, events);
        let theirs = lines_of(false, events);
        assert_eq!(ours.len(), 4);
        assert_eq!(ours.len(), theirs.len());
        for (mut a, mut b) in ours.into_iter().zip(theirs) {
            for t in [a["timestamp"].take(), b["timestamp"].take()] {
                let t = t.as_str().unwrap().to_owned();
                DateTime::parse_from_rfc3339(&t).unwrap_or_else(|e| panic!("{e}: {t}"));
            }
            assert_eq!(a, b);
        }
    }

    #[test]
    fn escapes_every_control_character() {
        let all: String = (0u8..0x80).map(char::from).collect();
        let lines = lines_of(true, || tracing::info!(text = all.as_str(), "{}", all));
        assert_eq!(lines[0]["text"], all.as_str());
        assert_eq!(lines[0]["message"], all.as_str());
    }

    #[test]
    fn timestamps_are_utc_to_the_microsecond() {
        let mut out = String::new();
        let at = DateTime::<Utc>::from_timestamp(1_795_385_704, 123_456_789).unwrap();
        timestamp(&mut out, at).unwrap();
        assert_eq!(out, "2026-11-22T22:15:04.123456Z");
        out.clear();
        timestamp(&mut out, DateTime::<Utc>::from_timestamp(0, 0).unwrap()).unwrap();
        assert_eq!(out, "1970-01-01T00:00:00Z");
    }
}
