//! LATENCY: LATEST, HISTORY, RESET, GRAPH, DOCTOR (in `latency_doctor`), HISTOGRAM and
//! HELP, and the INFO `latencystats` lines.
//!
//! Two sources, both kept in the server state: the latency monitor's spikes per event
//! (`server::latency`, fed while `latency-monitor-threshold` is on) and each command's
//! latency histogram (`CmdStat::latency`, fed while `latency-tracking` is on, by
//! `server::calls`). This module only reads them and writes replies in Valkey's shapes.

use std::fmt::Write;

use bytes::Bytes;

use super::latency_doctor::report;
use crate::commands::command::{find_by_full_name, reply_help};
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::resp::reply::Reply;
use crate::server::latency::Series;
use crate::server::state::ServerState;
use crate::util::histogram::Histogram;
use crate::util::sparkline::{self, Sample};

const FLAGS: u64 = flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE;
const ACL: u64 = acl::ADMIN | acl::SLOW | acl::DANGEROUS;
const TIPS: &[&str] =
    &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"];
/// LATENCY GRAPH's width and height (Valkey's `LATENCY_GRAPH_COLS`, 4 rows).
const GRAPH_COLUMNS: usize = 80;
const GRAPH_ROWS: usize = 4;

pub static LATENCY_SUBCOMMANDS: &[Command] = &[
    Command::new("latency|doctor", 2, FLAGS, ACL, Server(latency_doctor))
        .doc("server", "2.8.13", "Returns a human-readable latency analysis report.", "O(1)")
        .tips(TIPS),
    Command::new("latency|graph", 3, FLAGS, ACL, Server(latency_graph))
        .doc("server", "2.8.13", "Returns a latency graph for an event.", "O(1)")
        .tips(TIPS),
    Command::new("latency|help", 2, flag::LOADING | flag::STALE, acl::SLOW, Server(latency_help))
        .doc("server", "2.8.13", "Returns helpful text about the different subcommands.", "O(1)"),
    Command::new("latency|histogram", -2, FLAGS, ACL, Server(latency_histogram))
        .doc(
            "server",
            "7.0.0",
            "Returns the cumulative distribution of latencies of a subset or all commands.",
            "O(N) where N is the number of commands with latency information being retrieved.",
        )
        .tips(TIPS),
    Command::new("latency|history", 3, FLAGS, ACL, Server(latency_history))
        .doc("server", "2.8.13", "Returns timestamp-latency samples for an event.", "O(1)")
        .tips(TIPS),
    Command::new("latency|latest", 2, FLAGS, ACL, Server(latency_latest))
        .doc("server", "2.8.13", "Returns the latest latency samples for all events.", "O(1)")
        .tips(TIPS),
    Command::new("latency|reset", -2, FLAGS, ACL, Server(latency_reset))
        .doc("server", "2.8.13", "Resets the latency data for one or more events.", "O(1)")
        .tips(&["request_policy:all_nodes", "response_policy:agg_sum"]),
];

/// LATENCY LATEST: per event, its name, the latest sample's time and latency, the worst
/// ever, and the sum and count of every spike (Valkey 9.1's six fields).
fn latency_latest(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let monitor = &ctx.srv.latency;
    ctx.out.array(monitor.iter().count());
    for (name, series) in monitor.iter() {
        let latest = series.latest();
        ctx.out.array(6);
        ctx.out.bulk(name.as_bytes());
        ctx.out.int(latest.time_s);
        ctx.out.int(latest.latency_ms as i64);
        ctx.out.int(series.max_ms as i64);
        ctx.out.int(series.sum_ms as i64);
        ctx.out.int(series.count as i64);
    }
    Ok(())
}

/// LATENCY HISTORY event: the kept samples, oldest first, as (time, latency) pairs; an
/// empty array for an event without any.
fn latency_history(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let Some((_, series)) = ctx.srv.latency.get(&argv[2]) else {
        ctx.out.array(0);
        return Ok(());
    };
    let samples: Vec<_> = series.samples().collect();
    ctx.out.array(samples.len());
    for s in samples {
        ctx.out.array(2);
        ctx.out.int(s.time_s);
        ctx.out.int(s.latency_ms as i64);
    }
    Ok(())
}

/// LATENCY RESET [event ...]: forgets the named events (any case), or all; how many.
fn latency_reset(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let monitor = &mut ctx.srv.latency;
    let resets = match &argv[2..] {
        [] => monitor.reset_all(),
        events => events.iter().map(|e| monitor.reset(e)).sum(),
    };
    ctx.out.int(resets as i64);
    Ok(())
}

/// LATENCY GRAPH event: the samples as a sparkline, labelled with how long ago each was.
fn latency_graph(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let Some((name, series)) = ctx.srv.latency.get(&argv[2]) else {
        return Err(CmdError::NoLatencySamples(String::from_utf8_lossy(&argv[2]).into_owned()));
    };
    let graph = graph(name, series, ctx.now_ms / 1000);
    ctx.out.verbatim("txt", graph.as_bytes());
    Ok(())
}

/// The graph's text: a title line, a rule, the sparkline.
fn graph(name: &str, series: &Series, now_s: i64) -> String {
    let samples: Vec<Sample> = series
        .samples()
        .map(|s| Sample { value: s.latency_ms as f64, label: ago(now_s - s.time_s) })
        .collect();
    let high = series.samples().map(|s| s.latency_ms).max().unwrap_or(0);
    let low = series.samples().map(|s| s.latency_ms).min().unwrap_or(0);
    let mut text = format!(
        "{name} - high {high} ms, low {low} ms (all time high {} ms)\n{}\n",
        series.max_ms,
        "-".repeat(GRAPH_COLUMNS)
    );
    text.push_str(&sparkline::render(&samples, GRAPH_COLUMNS, GRAPH_ROWS));
    text
}

/// How long ago, in the largest unit that fits: `12s`, `5m`, `3h`, `2d`.
fn ago(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

fn latency_doctor(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let text = report(ctx.srv, ctx.now_ms / 1000);
    ctx.out.verbatim("txt", text.as_bytes());
    Ok(())
}

/// LATENCY HISTOGRAM [command ...]: per command with a histogram (all, or the named ones
/// and their subcommands; unknown names are skipped), its calls and cumulative buckets.
fn latency_histogram(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let stats = &ctx.srv.stats.cmd;
    let histogram = |name: &str| stats.get(name).and_then(|st| st.latency.as_deref());
    let mut found: Vec<(&str, &Histogram)> = Vec::new();
    if argv.len() == 2 {
        found.extend(stats.iter().filter_map(|(n, st)| Some((*n, st.latency.as_deref()?))));
        found.sort_by_key(|(n, _)| *n);
    } else {
        for cmd in argv[2..].iter().filter_map(|a| find_by_full_name(a)) {
            let subs = cmd.subcommands.iter().map(|s| s.name);
            for name in std::iter::once(cmd.name).chain(subs) {
                if let Some(h) = histogram(name) {
                    found.push((name, h));
                }
            }
        }
    }
    ctx.out.map(found.len());
    for (name, h) in found {
        ctx.out.bulk(name.as_bytes());
        reply_distribution(ctx.out, h);
    }
    Ok(())
}

/// One command's `{calls, histogram_usec: {bucket: cumulative count}}`.
fn reply_distribution(out: &mut Reply, h: &Histogram) {
    out.map(2);
    out.bulk(b"calls");
    out.int(h.total() as i64);
    out.bulk(b"histogram_usec");
    let buckets = h.cumulative_pow2();
    out.map(buckets.len());
    for (usec, count) in buckets {
        out.int(usec as i64);
        out.int(count as i64);
    }
}

fn latency_help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(
        ctx.out,
        "LATENCY",
        &[
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        ],
    );
    Ok(())
}

/// INFO latencystats' lines: each command's percentiles
/// (`latency-tracking-info-percentiles`) in microseconds with three decimals,
/// `latency_percentiles_usec_<cmd>:p50=1.003,p99=...`; none while `latency-tracking` is off.
pub fn info_lines(s: &mut String, srv: &ServerState) {
    if !srv.config.general.latency_tracking {
        return;
    }
    let mut names: Vec<&&str> = srv.stats.cmd.keys().collect();
    names.sort();
    for name in names {
        let Some(h) = srv.stats.cmd[*name].latency.as_deref() else { continue };
        let _ = write!(s, "latency_percentiles_usec_{name}:");
        for (i, &p) in srv.config.general.latency_tracking_info_percentiles.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let usec = h.value_at_percentile(p) as f64 / 1000.0;
            let _ = write!(s, "{sep}p{}={usec:.3}", percentile_label(p));
        }
        s.push_str("\r\n");
    }
}

/// A percentile as Valkey names it: `%f`, trailing zeros (and a trailing dot) dropped
/// (`50`, `99.9`).
fn percentile_label(p: f64) -> String {
    let text = format!("{p:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::latency::{Event, LatencyMonitor};

    #[test]
    fn percentiles_are_named_as_valkey_names_them() {
        assert_eq!(percentile_label(50.0), "50");
        assert_eq!(percentile_label(99.9), "99.9");
        assert_eq!(percentile_label(99.99), "99.99");
        assert_eq!(percentile_label(0.0), "0");
        assert_eq!(percentile_label(100.0), "100");
    }

    #[test]
    fn labels_say_how_long_ago() {
        assert_eq!(ago(0), "0s");
        assert_eq!(ago(59), "59s");
        assert_eq!(ago(60), "1m");
        assert_eq!(ago(7200), "2h");
        assert_eq!(ago(3 * 86400), "3d");
    }

    #[test]
    fn the_graph_has_valkeys_title_and_rule() {
        let mut m = LatencyMonitor::default();
        m.add(Event::Command, 20, 1000);
        let (name, series) = m.get(b"command").unwrap();
        let g = graph(name, series, 1001);
        let rule = "-".repeat(80);
        assert_eq!(
            g,
            format!(
                "command - high 20 ms, low 20 ms (all time high 20 ms)\n{rule}\n \n \n \n_\n \n1\ns\n"
            )
        );
    }
}
