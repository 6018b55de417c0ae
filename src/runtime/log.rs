//! Logging through `tracing`, in Valkey's line shape:
//! `pid:M 29 Nov 2026 22:48:52.123 * message` (`.` debug, `-` verbose, `*` notice, `#` warning),
//! to stdout or to `logfile`.

use std::fmt;
use std::io::Write;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::config::{Config, LogLevel};

struct ValkeyFormat {
    pid: u32,
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
        let mark = match *event.metadata().level() {
            Level::ERROR | Level::WARN => '#',
            Level::INFO => '*',
            Level::DEBUG => '-',
            Level::TRACE => '.',
        };
        let now = crate::util::clock::now_ms();
        write!(writer, "{}:M {} {} ", self.pid, timestamp(now), mark)?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Install the global subscriber for `loglevel` and `logfile`.
pub fn init(config: &Config) {
    let level = match config.loglevel {
        LogLevel::Debug => Some(Level::TRACE),
        LogLevel::Verbose => Some(Level::DEBUG),
        LogLevel::Notice => Some(Level::INFO),
        LogLevel::Warning => Some(Level::WARN),
        LogLevel::Nothing => None,
    };
    let Some(level) = level else { return };
    let builder = tracing_subscriber::fmt()
        .with_max_level(level)
        .event_format(ValkeyFormat { pid: std::process::id() });
    if config.logfile.is_empty() {
        let _ = builder.with_writer(std::io::stdout).try_init();
    } else {
        let path = config.logfile.clone();
        let _ = builder
            .with_writer(move || -> Box<dyn Write> {
                match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
                    Ok(f) => Box::new(f),
                    Err(_) => Box::new(std::io::sink()),
                }
            })
            .try_init();
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
