//! Logging through `tracing`, in Valkey's line shapes, to stdout or to `logfile`:
//! - `log-format legacy`: `pid:M 29 Nov 2026 22:48:52.123 * message` (`.` debug, `-`
//!   verbose, `*` notice, `#` warning);
//! - `logfmt`: `pid=N role=primary timestamp="..." level=notice message="..."` (double
//!   quotes in the message become single ones, as Valkey writes them);
//! - `json`: one object per line with the same five fields.
//!
//! `log-timestamp-format` writes the time as above (`legacy`), as ISO 8601 with its offset
//! (`iso8601`), or as Unix milliseconds (`milliseconds`). The formats and `loglevel` take
//! effect at once on CONFIG SET ([`apply`]): the formats are two process-wide atomics the
//! formatter reads, the level a reloadable filter (changing it rebuilds tracing's callsite
//! cache, so a disabled `debug!` still costs only its cached check).

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::OnceLock;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{reload, Registry};

use crate::config::{Config, LogFormat, LogLevel, LogTimestampFormat};

struct ValkeyFormat {
    pid: u32,
}

/// `log-format` and `log-timestamp-format`, as the index of their value.
static FORMAT: AtomicU8 = AtomicU8::new(0);
static TIMESTAMP: AtomicU8 = AtomicU8::new(0);

/// Whether this server is a replica (its lines say `S` / `replica` instead of `M` /
/// `primary`).
static REPLICA: AtomicBool = AtomicBool::new(false);

pub fn set_replica(on: bool) {
    REPLICA.store(on, Ordering::Relaxed);
}

/// The handle that changes `loglevel` at run time.
static LEVEL: OnceLock<reload::Handle<LevelFilter, Registry>> = OnceLock::new();

fn level_filter(level: LogLevel) -> LevelFilter {
    match level {
        LogLevel::Debug => LevelFilter::TRACE,
        LogLevel::Verbose => LevelFilter::DEBUG,
        LogLevel::Notice => LevelFilter::INFO,
        LogLevel::Warning => LevelFilter::WARN,
        LogLevel::Nothing => LevelFilter::OFF,
    }
}

/// Makes `loglevel`, `log-format` and `log-timestamp-format` of `config` the ones in use.
pub fn apply(config: &Config) {
    FORMAT.store(config.general.log_format as u8, Ordering::Relaxed);
    TIMESTAMP.store(config.general.log_timestamp_format as u8, Ordering::Relaxed);
    if let Some(handle) = LEVEL.get() {
        let _ = handle.modify(|f| *f = level_filter(config.loglevel));
    }
}

/// The time of a line at `now_ms` in the `log-timestamp-format` in use.
fn line_time(now_ms: i64) -> String {
    match LogTimestampFormat::ALL[TIMESTAMP.load(Ordering::Relaxed) as usize] {
        LogTimestampFormat::Legacy => timestamp(now_ms),
        LogTimestampFormat::Iso8601 => iso8601(now_ms),
        LogTimestampFormat::Milliseconds => now_ms.to_string(),
    }
}

/// `2026-11-29T22:48:52.123+00:00` (UTC, as the other forms).
fn iso8601(now_ms: i64) -> String {
    let secs = now_ms.div_euclid(1000);
    let (y, m, d) = civil(secs.div_euclid(86400));
    let sod = secs.rem_euclid(86400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}+00:00",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        now_ms.rem_euclid(1000)
    )
}

/// `text` as the inside of a JSON string.
fn json_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// Civil date from days since the unix epoch (proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z.rem_euclid(146097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `29 Nov 2026 22:48:52.123` in UTC.
pub fn timestamp(now_ms: i64) -> String {
    let secs = now_ms.div_euclid(1000);
    let (y, m, d) = civil(secs.div_euclid(86400));
    let sod = secs.rem_euclid(86400);
    format!(
        "{d:02} {} {y} {:02}:{:02}:{:02}.{:03}",
        MONTHS[(m - 1) as usize],
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        now_ms.rem_euclid(1000)
    )
}

impl<S, N> FormatEvent<S, N> for ValkeyFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let (mark, level) = match *event.metadata().level() {
            Level::ERROR | Level::WARN => ('#', "warning"),
            Level::INFO => ('*', "notice"),
            Level::DEBUG => ('-', "verbose"),
            Level::TRACE => ('.', "debug"),
        };
        let time = line_time(crate::util::clock::now_ms());
        let format = LogFormat::ALL[FORMAT.load(Ordering::Relaxed) as usize];
        let replica = REPLICA.load(Ordering::Relaxed);
        if format == LogFormat::Legacy {
            write!(writer, "{}:{} {time} {mark} ", self.pid, if replica { 'S' } else { 'M' })?;
            ctx.field_format().format_fields(writer.by_ref(), event)?;
            return writeln!(writer);
        }
        let mut message = String::new();
        ctx.field_format().format_fields(Writer::new(&mut message), event)?;
        let (pid, role) = (self.pid, if replica { "replica" } else { "primary" });
        if format == LogFormat::Logfmt {
            let message = message.replace('"', "'");
            writeln!(
                writer,
                "pid={pid} role={role} timestamp=\"{time}\" level={level} message=\"{message}\""
            )
        } else {
            writeln!(
                writer,
                "{{\"pid\":{pid},\"role\":\"{role}\",\"timestamp\":\"{time}\",\"level\":\"{level}\",\"message\":\"{}\"}}",
                json_escaped(&message)
            )
        }
    }
}

/// Install the global subscriber for `loglevel` and `logfile`.
pub fn init(config: &Config) {
    apply(config);
    let (filter, handle) = reload::Layer::new(level_filter(config.loglevel));
    let format = ValkeyFormat { pid: std::process::id() };
    let installed = if config.logfile.is_empty() {
        let layer =
            tracing_subscriber::fmt::layer().event_format(format).with_writer(std::io::stdout);
        tracing::subscriber::set_global_default(Registry::default().with(filter).with(layer))
    } else {
        let path = config.logfile.clone();
        let layer = tracing_subscriber::fmt::layer().event_format(format).with_writer(
            move || -> Box<dyn Write> {
                match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
                    Ok(f) => Box::new(f),
                    Err(_) => Box::new(std::io::sink()),
                }
            },
        );
        tracing::subscriber::set_global_default(Registry::default().with(filter).with(layer))
    };
    if installed.is_ok() {
        let _ = LEVEL.set(handle);
    }
}

/// Writes `text` as it is (no line prefix) where the log goes, when the log level lets
/// notices through: Valkey's `LL_RAW` lines, such as the start-up logo.
pub fn raw(config: &Config, text: &str) {
    if matches!(config.loglevel, LogLevel::Warning | LogLevel::Nothing) {
        return;
    }
    if config.logfile.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    } else if let Ok(mut f) =
        std::fs::OpenOptions::new().create(true).append(true).open(&config.logfile)
    {
        let _ = f.write_all(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_are_utc_civil_time() {
        assert_eq!(super::timestamp(0), "01 Jan 1970 00:00:00.000");
        assert_eq!(super::timestamp(1_796_000_000_123), "30 Nov 2026 00:53:20.123");
    }
}
