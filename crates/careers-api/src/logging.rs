//! Logs go to stderr: JSON lines outside development (or with `LOG_FORMAT=json`), readable text
//! in development (or with `LOG_FORMAT=text`). `RUST_LOG` filters (default `info`).
//!
//! Lines at info and below (the access log) are buffered and written in batches: at most every
//! 100 ms, when 64 KiB are pending, before any warn or error line, and at exit. One `write`
//! per request cost several percent of the server's CPU (docs/PERFORMANCE.md). Warn and error
//! lines (security events, faults) are written at once, after whatever was pending, so the
//! order of lines is kept. A process killed outright loses at most the last 100 ms of info
//! lines; a graceful stop, an error exit or a panic loses nothing (docs/DECISIONS.md 40).

mod handling;
mod json;

pub(crate) use handling::Handling;
pub(crate) use json::{ACCESS_MESSAGE, ACCESS_TARGET, Access, JsonLines};

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tracing::{Level, Metadata};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// Pending bytes that make an info line write through at once.
const HIGH_WATER: usize = 64 * 1024;
const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// A line sink that batches low-severity lines in front of `W`.
pub struct BatchedSink<W> {
    state: Mutex<(Vec<u8>, W)>,
}

impl<W: Write> BatchedSink<W> {
    pub fn new(out: W) -> Self {
        Self {
            state: Mutex::new((Vec::with_capacity(HIGH_WATER), out)),
        }
    }

    /// Appends `line`; writes everything pending through when `urgent` or over the high water.
    pub fn write_line(&self, line: &[u8], urgent: bool) -> std::io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (pending, out) = &mut *state;
        pending.extend_from_slice(line);
        if urgent || pending.len() >= HIGH_WATER {
            Self::drain(pending, out)?;
        }
        Ok(())
    }

    /// Writes everything pending.
    pub fn flush(&self) -> std::io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (pending, out) = &mut *state;
        Self::drain(pending, out)
    }

    fn drain(pending: &mut Vec<u8>, out: &mut W) -> std::io::Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let result = out.write_all(pending).and_then(|()| out.flush());
        // A failed write drops the batch rather than growing without bound.
        pending.clear();
        result
    }
}

/// Where whole lines go: the edge layer's way to the batched sink past tracing.
pub(crate) trait LineSink: Sync {
    /// Appends `line`; `urgent` writes it and everything pending through at once.
    fn write_line(&self, line: &[u8], urgent: bool) -> std::io::Result<()>;
}

impl<W: Write + Send> LineSink for BatchedSink<W> {
    fn write_line(&self, line: &[u8], urgent: bool) -> std::io::Result<()> {
        BatchedSink::write_line(self, line, urgent)
    }
}

/// The sink the edge layer writes its access lines to itself; set by [`init`] when the format
/// is JSON (docs/DECISIONS.md 57). Unset (tests, the text format), the line is a tracing event.
static ACCESS_SINK: OnceLock<&'static dyn LineSink> = OnceLock::new();

pub(crate) fn access_sink() -> Option<&'static dyn LineSink> {
    ACCESS_SINK.get().copied()
}

/// Writes the access line to `sink` as the JSON format writes it (`json::access_line`).
pub(crate) fn write_access(sink: &dyn LineSink, access: &Access<'_>) {
    thread_local! {
        static LINE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    LINE.with(|line| {
        let mut line = line.borrow_mut();
        line.clear();
        if json::access_line(&mut line, access).is_ok() {
            // As the subscriber's writer does: a failed write to stderr is dropped.
            let _ = sink.write_line(line.as_bytes(), access.level <= Level::WARN);
        }
    });
}

/// One event's writer: the formatter writes a whole line with one `write_all`.
pub struct LineWriter<'a, W> {
    sink: &'a BatchedSink<W>,
    urgent: bool,
}

impl<W: Write> Write for LineWriter<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.sink.write_line(bytes, self.urgent)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<W: Write + 'static> MakeWriter<'_> for &'static BatchedSink<W> {
    type Writer = LineWriter<'static, W>;

    fn make_writer(&self) -> Self::Writer {
        LineWriter {
            sink: self,
            urgent: true,
        }
    }

    fn make_writer_for(&self, meta: &Metadata<'_>) -> Self::Writer {
        LineWriter {
            sink: self,
            urgent: *meta.level() <= Level::WARN,
        }
    }
}

static STDERR: OnceLock<BatchedSink<std::io::Stderr>> = OnceLock::new();

fn stderr_sink() -> &'static BatchedSink<std::io::Stderr> {
    STDERR.get_or_init(|| BatchedSink::new(std::io::stderr()))
}

/// Installs the global subscriber and starts the flusher thread.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let development =
        std::env::var("APP_ENV").map_or(true, |env| env.trim().eq_ignore_ascii_case("development"));
    let json = match std::env::var("LOG_FORMAT").as_deref() {
        Ok("json") => true,
        Ok("text") => false,
        _ => !development,
    };
    let sink = stderr_sink();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(sink)
        .with_ansi(std::io::stderr().is_terminal());
    if json {
        builder.event_format(JsonLines).init();
        let _ = ACCESS_SINK.set(sink);
    } else {
        builder.init();
    }
    // A panic's message goes straight to stderr: pending lines first, and none lost if the
    // panic ends the process.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = sink.flush();
        previous(info);
    }));
    std::thread::Builder::new()
        .name("log-flush".into())
        .spawn(move || {
            loop {
                std::thread::sleep(FLUSH_EVERY);
                let _ = sink.flush();
            }
        })
        .expect("a thread for the log flusher");
}

/// Writes every pending line; call before the process exits.
pub fn flush() {
    if let Some(sink) = STDERR.get() {
        let _ = sink.flush();
    }
}

/// A writer that keeps what is written, one entry per `write`: the log tests' stand-in for
/// stderr.
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct Captured(std::sync::Arc<Mutex<Vec<Vec<u8>>>>);

#[cfg(test)]
impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().push(bytes.to_vec());
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
impl Captured {
    /// Each `write`, in order.
    pub(crate) fn writes(&self) -> Vec<String> {
        let writes = self.0.lock().unwrap();
        writes
            .iter()
            .map(|w| String::from_utf8(w.clone()).unwrap())
            .collect()
    }

    /// Everything written.
    pub(crate) fn text(&self) -> String {
        self.writes().concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_wait_for_a_batch_and_warn_lines_write_through_in_order() {
        let out = Captured::default();
        let sink = BatchedSink::new(out.clone());
        sink.write_line(b"info 1\n", false).unwrap();
        sink.write_line(b"info 2\n", false).unwrap();
        assert!(out.writes().is_empty(), "info lines are batched");
        sink.write_line(b"warn 3\n", true).unwrap();
        assert_eq!(out.writes(), ["info 1\ninfo 2\nwarn 3\n"]);
        sink.write_line(b"info 4\n", false).unwrap();
        sink.flush().unwrap();
        sink.flush().unwrap();
        assert_eq!(out.writes(), ["info 1\ninfo 2\nwarn 3\n", "info 4\n"]);
    }

    #[test]
    fn a_full_batch_is_written_without_waiting() {
        let out = Captured::default();
        let sink = BatchedSink::new(out.clone());
        let line = [b'x'; 1000];
        let below = HIGH_WATER / line.len();
        for _ in 0..below {
            sink.write_line(&line, false).unwrap();
        }
        assert!(out.writes().is_empty(), "{} bytes wait", below * line.len());
        sink.write_line(&line, false).unwrap();
        assert_eq!(out.writes().len(), 1);
        assert_eq!(out.writes()[0].len(), (below + 1) * line.len());
    }

    #[test]
    fn the_subscriber_picks_the_writer_by_level() {
        let out = Captured::default();
        let sink: &'static BatchedSink<Captured> =
            Box::leak(Box::new(BatchedSink::new(out.clone())));
        let subscriber = tracing_subscriber::fmt().with_writer(sink).finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!("an access line");
            assert!(out.writes().is_empty());
            tracing::warn!("a security event");
        });
        let writes = out.writes();
        assert_eq!(writes.len(), 1);
        assert!(writes[0].contains("an access line") && writes[0].contains("a security event"));
    }
}
