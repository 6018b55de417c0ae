//! What every run of a command leaves behind in the server's statistics: commandstats and
//! the processed-commands counters, the latency histograms (`latency-tracking`) and the
//! latency monitor's `command` / `fast-command` events, errorstats for error replies, and
//! the slow log. Dispatch
//! calls these after each command; unblocking calls them for a blocked command that ends
//! without being served.

use bytes::Bytes;

use crate::server::commandlog::{self, Caller};
use crate::server::state::{ServerState, Slot};
use crate::spec::table::flag;

/// The facts of a command that its statistics need: its name and flags (from the command
/// table, so the name is `'static`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallOf {
    pub name: &'static str,
    pub flags: u64,
}

/// Write an error reply (any bytes: a client's own are echoed raw) and count it in
/// errorstats under its code (the first word).
pub fn reply_error_text(srv: &mut ServerState, slot: &mut Slot, text: &[u8]) {
    count_error(srv, text);
    slot.out.error_bytes(text);
}

/// Counts an error reply of text `text` (after the `-`) in the error statistics.
pub fn count_error(srv: &mut ServerState, text: &[u8]) {
    // Valkey's rule: the code is the first word when a space comes within 32 bytes, else
    // the error counts as ERR.
    let code = match text[..text.len().min(32)].iter().position(|&c| c == b' ') {
        Some(i) => &text[..i],
        None => b"ERR".as_slice(),
    };
    let code = String::from_utf8_lossy(code);
    match srv.stats.errors.get_mut(code.as_ref()) {
        Some(n) => *n += 1,
        None => {
            srv.stats.errors.insert(code.into_owned(), 1);
        }
    }
    srv.stats.total_error_replies += 1;
}

/// One run of a command took `duration_us` (every run: a blocked command's first one and
/// the one that serves it each count): the latency monitor's `command` or `fast-command`
/// event, as the command is flagged.
pub fn record_run(srv: &mut ServerState, flags: u64, duration_us: u64) {
    use crate::server::latency::Event;
    let event = if flags & flag::FAST != 0 { Event::FastCommand } else { Event::Command };
    // Stamped when the command ended, as Valkey stamps it (the tick's time is from before).
    let threshold_ms = srv.config.latency_monitor_threshold_ms;
    srv.latency.add_if_needed(threshold_ms, event, duration_us / 1000);
}

/// One call of `cmd` done (Valkey's statistics at the end of `call()`, or
/// `updateStatsOnUnblock` for a blocked command that timed out or was unblocked):
/// commandstats, the processed-commands counters and the command logs, with the time of
/// every run of the command (`Client::blocked_run_us`) and the bytes of its reply.
pub fn record_call(
    srv: &mut ServerState,
    slot: &mut Slot,
    cmd: CallOf,
    argv: &[Bytes],
    failed: bool,
    reply_bytes: u64,
    now_ms: i64,
) {
    let duration_us = std::mem::take(&mut slot.client.blocked_run_us);
    let stat = srv.stats.cmd.entry(cmd.name).or_default();
    stat.calls += 1;
    stat.usec += duration_us;
    if failed {
        stat.failed_calls += 1;
    }
    if srv.config.general.latency_tracking {
        // Valkey's resolution: the microseconds of the call, counted in nanoseconds.
        stat.latency.get_or_insert_with(Box::default).record(duration_us * 1000);
    }
    srv.stats.total_commands_processed += 1;
    slot.client.tot_cmds += 1;
    if cmd.flags & flag::SKIP_COMMANDLOG == 0 {
        log_command(srv, slot, cmd, argv, duration_us, reply_bytes, now_ms);
    }
}

/// The command logs' part of a call: the thresholds are checked first, so a command that
/// none of the logs wants builds nothing.
fn log_command(
    srv: &mut ServerState,
    slot: &Slot,
    cmd: CallOf,
    argv: &[Bytes],
    duration_us: u64,
    reply_bytes: u64,
    now_ms: i64,
) {
    let over = |threshold: i64, value: u64| threshold >= 0 && value >= threshold as u64;
    let c = &srv.config;
    let slow = over(c.slowlog_log_slower_than, duration_us);
    let request_bytes = if c.general.commandlog_request_larger_than_bytes >= 0 {
        commandlog::request_bytes(argv)
    } else {
        0
    };
    let big_request = over(c.general.commandlog_request_larger_than_bytes, request_bytes);
    let big_reply = over(c.general.commandlog_reply_larger_than_bytes, reply_bytes);
    if !(slow || big_request || big_reply) {
        return;
    }
    let name = slot.client.name.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    let who = Caller { now_s: now_ms / 1000, peer: &slot.client.addr, name: &name };
    // Secrets are hidden only from what is logged: no work for the calls that are not.
    let argv = crate::server::redact::redact(cmd.name, argv);
    let logs = &mut srv.commandlog;
    if slow {
        logs.slow.record(c.slowlog_max_len as usize, &argv, duration_us, &who);
    }
    if big_request {
        let max = c.general.commandlog_large_request_max_len as usize;
        logs.large_request.record(max, &argv, request_bytes, &who);
    }
    if big_reply {
        let max = c.general.commandlog_large_reply_max_len as usize;
        logs.large_reply.record(max, &argv, reply_bytes, &who);
    }
}
