//! LATENCY DOCTOR's report, in Valkey's voice: one line per event the monitor kept (its
//! spikes, their average and mean deviation, how often, the worst ever; for `fork` the
//! fork rate), then the advice those events call for, each piece once, in a fixed order.
//! It reads the monitor, the settings the advice depends on and the fork rate; it changes
//! nothing.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::config::Appendfsync;
use crate::server::state::ServerState;

/// The pieces of advice, in the order the report gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Advice {
    BetterVm,
    SlowlogEnabled,
    SlowlogTuning,
    SlowlogInspect,
    Scheduler,
    LocalDisk,
    Ssd,
    DataWriteback,
    DiskContention,
    NoAppendfsync,
    RelaxFsyncPolicy,
    WriteLoadInfo,
    Hz,
    LargeObjects,
    MassEviction,
    DisableThp,
}

const DISABLED: &str = "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this \
    Valkey instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in \
    order to enable it.\n";
const NOTHING: &str = "No latency spike was observed during the lifetime of this Valkey \
    instance, not in the slightest bit.\n";
const NO_ADVICE: &str = "\nThere are latency events logged that are not easy to fix. Please get \
    some help from Valkey community, providing this report in your help request.\n";

/// The report for `srv` at `now_s` (Unix seconds).
pub fn report(srv: &ServerState, now_s: i64) -> String {
    let threshold_ms = srv.config.latency_monitor_threshold_ms;
    if srv.latency.is_empty() && threshold_ms == 0 {
        return DISABLED.to_string();
    }
    let mut text = String::new();
    let mut advice = BTreeSet::new();
    // Valkey counts a piece of advice each time an event calls for it, and prints the
    // advice header when the count is not zero, even if no piece applies to this setup.
    let mut advices = 0;
    let mut events = 0;
    for (name, series) in srv.latency.iter() {
        events += 1;
        if events == 1 {
            text.push_str("Latency spikes are observed in this Valkey instance.\n\n");
        }
        let a = series.analyze(now_s);
        let _ = write!(
            text,
            "{events}. {name}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} \
             sec). Worst all time event {}ms.",
            a.samples,
            a.avg_ms,
            a.mad_ms,
            a.period_s as f64 / a.samples.max(1) as f64,
            series.max_ms
        );
        if name == "fork" {
            let rate = crate::persist::fork::latest_fork_rate_gb_s();
            let quality = match rate {
                r if r < 10.0 => "terrible",
                r if r < 25.0 => "poor",
                r if r < 100.0 => "good",
                _ => "excellent",
            };
            let _ = write!(text, " Fork rate is {rate:.2} GB/sec ({quality}).");
        }
        let called = called_for(name, srv, threshold_ms);
        advices += called.len();
        advice.extend(called);
        text.push('\n');
    }
    if anon_huge_pages_bytes() > 0 {
        advice.insert(Advice::DisableThp);
        advices += 1;
    }
    match (events, advices) {
        (0, 0) => text.push_str(NOTHING),
        (_, 0) => text.push_str(NO_ADVICE),
        _ => {
            text.push_str("\nHere is some advice for you:\n\n");
            for a in advice {
                text.push_str(&advice_text(a, srv));
            }
        }
    }
    text
}

/// The advice an event calls for.
fn called_for(event: &str, srv: &ServerState, threshold_ms: u64) -> Vec<Advice> {
    use Advice::*;
    match event {
        "fork" if crate::persist::fork::latest_fork_rate_gb_s() < 25.0 => vec![BetterVm],
        "command" => {
            let slowlog_us = srv.config.slowlog_log_slower_than;
            let mut v = vec![SlowlogInspect, LargeObjects];
            if slowlog_us < 0 || srv.config.slowlog_max_len == 0 {
                v.push(SlowlogEnabled);
            } else if (slowlog_us / 1000) as u64 > threshold_ms {
                v.push(SlowlogTuning);
            }
            v
        }
        "fast-command" => vec![Scheduler],
        "aof-write-pending-fsync" => vec![LocalDisk, DiskContention, Ssd, DataWriteback],
        "aof-write-active-child" => vec![NoAppendfsync, DataWriteback, Ssd],
        "aof-write-alone" => vec![LocalDisk, DataWriteback, Ssd],
        "aof-fsync-always" => vec![RelaxFsyncPolicy],
        "rdb-unlink-temp-file" => vec![DiskContention, LocalDisk],
        "aof-rename" => vec![WriteLoadInfo, DataWriteback, Ssd, LocalDisk],
        "expire-cycle" => vec![Hz, LargeObjects],
        "eviction-cycle" => vec![MassEviction],
        "eviction-del" => vec![LargeObjects],
        _ => Vec::new(),
    }
}

/// One piece of advice's paragraph ("" where the setup makes it moot).
fn advice_text(a: Advice, srv: &ServerState) -> String {
    let slowlog_us = srv.config.latency_monitor_threshold_ms * 1000;
    match a {
        Advice::BetterVm => "- If you are using a virtual machine, consider upgrading it with a \
            faster one using a hypervisior that provides less latency during fork() calls. Xen \
            is known to have poor fork() performance. Even in the context of the same VM \
            provider, certain kinds of instances can execute fork faster than others.\n"
            .into(),
        Advice::SlowlogEnabled => format!(
            "- There are latency issues with potentially slow commands you are using. Try to \
             enable the Slow Log Valkey feature using the command 'CONFIG SET \
             slowlog-log-slower-than {slowlog_us}'. If the Slow log is disabled Valkey is not \
             able to log slow commands execution for you.\n"
        ),
        Advice::SlowlogTuning => format!(
            "- Your current Slow Log configuration only logs events that are slower than your \
             configured latency monitor threshold. Please use 'CONFIG SET \
             slowlog-log-slower-than {slowlog_us}'.\n"
        ),
        Advice::SlowlogInspect => "- Check your Slow Log to understand what are the commands \
            you are running which are too slow to execute. Please check \
            https://valkey.io/commands/slowlog for more information.\n"
            .into(),
        Advice::Scheduler => "- The system is slow to execute Valkey code paths not containing \
            system calls. This usually means the system does not provide Valkey CPU time to run \
            for long periods. You should try to:\n  1) Lower the system load.\n  2) Use a \
            computer / VM just for Valkey if you are running other software in the same \
            system.\n  3) Check if you have a \"noisy neighbour\" problem.\n  4) Check with \
            'valkey-cli --intrinsic-latency 100' what is the intrinsic latency in your \
            system.\n  5) Check if the problem is allocator-related by recompiling Valkey with \
            MALLOC=libc, if you are using Jemalloc. However this may create fragmentation \
            problems.\n"
            .into(),
        Advice::LocalDisk => "- It is strongly advised to use local disks for persistence, \
            especially if you are using AOF. Remote disks provided by platform-as-a-service \
            providers are known to be slow.\n"
            .into(),
        Advice::Ssd => "- SSD disks are able to reduce fsync latency, and total time needed \
            for snapshotting and AOF log rewriting (resulting in smaller memory usage). With \
            extremely high write load SSD disks can be a good option. However Valkey should \
            perform reasonably with high load using normal disks. Use this advice as a last \
            resort.\n"
            .into(),
        Advice::DataWriteback => "- Mounting ext3/4 filesystems with data=writeback can \
            provide a performance boost compared to data=ordered, however this mode of \
            operation provides less guarantees, and sometimes it can happen that after a hard \
            crash the AOF file will have a half-written command at the end and will require to \
            be repaired before Valkey restarts.\n"
            .into(),
        Advice::DiskContention => "- Try to lower the disk contention. This is often caused \
            by other disk intensive processes running in the same computer (including other \
            Valkey instances).\n"
            .into(),
        Advice::NoAppendfsync => "- Assuming from the point of view of data safety this is \
            viable in your environment, you could try to enable the 'no-appendfsync-on-rewrite' \
            option, so that fsync will not be performed while there is a child rewriting the \
            AOF file or producing an RDB file (the moment where there is high disk \
            contention).\n"
            .into(),
        Advice::RelaxFsyncPolicy if srv.config.appendfsync == Appendfsync::Always => {
            "- Your fsync policy is set to 'always'. It is very hard to get good performances \
             with such a setup, if possible try to relax the fsync policy to 'onesec'.\n"
                .into()
        }
        Advice::WriteLoadInfo => "- Latency during the AOF atomic rename operation or when the \
            final difference is flushed to the AOF file at the end of the rewrite, sometimes is \
            caused by very high write load, causing the AOF buffer to get very large. If \
            possible try to send less commands to accomplish the same work, or use Lua scripts \
            to group multiple operations into a single EVALSHA call.\n"
            .into(),
        Advice::Hz if srv.config.hz < 100 => "- In order to make the Valkey keys expiring \
            process more incremental, try to set the 'hz' configuration parameter to 100 using \
            'CONFIG SET hz 100'.\n"
            .into(),
        Advice::LargeObjects => "- Deleting, expiring or evicting (because of maxmemory \
            policy) large objects is a blocking operation. If you have very large objects that \
            are often deleted, expired, or evicted, try to fragment those objects into multiple \
            smaller objects.\n"
            .into(),
        Advice::MassEviction => "- Sudden changes to the 'maxmemory' setting via 'CONFIG \
            SET', or allocation of large objects via sets or sorted sets intersections, STORE \
            option of SORT, Valkey Cluster large keys migrations (RESTORE command), may create \
            sudden memory pressure forcing the server to block trying to evict keys. \n"
            .into(),
        Advice::DisableThp => "- I detected a non zero amount of anonymous huge pages used by \
            your process. This creates very serious latency events in different conditions, \
            especially when Valkey is persisting on disk. To disable THP support use the \
            command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to \
            also add it into /etc/rc.local so that the command will be executed again after a \
            reboot. Note that even if you have already disabled THP, you still need to restart \
            the Valkey process to get rid of the huge pages already created.\n"
            .into(),
        Advice::RelaxFsyncPolicy | Advice::Hz => String::new(),
    }
}

/// The process's anonymous huge pages, bytes (the `AnonHugePages:` lines of
/// /proc/self/smaps_rollup, or 0 where it cannot be read).
fn anon_huge_pages_bytes() -> u64 {
    let Ok(text) = std::fs::read_to_string("/proc/self/smaps_rollup") else { return 0 };
    text.lines()
        .filter_map(|l| l.strip_prefix("AnonHugePages:"))
        .filter_map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::server::latency::Event;

    fn server() -> ServerState {
        ServerState::new(Config::default(), None, 0)
    }

    #[test]
    fn off_and_never_on_it_says_so() {
        assert_eq!(report(&server(), 100), DISABLED);
    }

    #[test]
    fn on_without_spikes_it_says_nothing_happened() {
        let mut srv = server();
        srv.config.latency_monitor_threshold_ms = 1;
        if anon_huge_pages_bytes() == 0 {
            assert_eq!(report(&srv, 100), NOTHING);
        }
    }

    #[test]
    fn command_spikes_as_valkey_reports_them() {
        // Valkey 9.1, spikes of 50 ms and 30 ms two seconds apart, threshold 1 ms, the
        // slow log at its default (10 ms).
        let mut srv = server();
        srv.config.latency_monitor_threshold_ms = 1;
        srv.latency.add(Event::Command, 50, 1000);
        srv.latency.add(Event::Command, 30, 1002);
        let text = report(&srv, 1002);
        let expected = "Latency spikes are observed in this Valkey instance.\n\n\
            1. command: 2 latency spikes (average 40ms, mean deviation 10ms, period 1.00 sec). \
            Worst all time event 50ms.\n\nHere is some advice for you:\n\n\
            - Your current Slow Log configuration only logs events that are slower than your \
            configured latency monitor threshold. Please use 'CONFIG SET \
            slowlog-log-slower-than 1000'.\n\
            - Check your Slow Log to understand what are the commands you are running which \
            are too slow to execute. Please check https://valkey.io/commands/slowlog for more \
            information.\n\
            - Deleting, expiring or evicting (because of maxmemory policy) large objects is a \
            blocking operation. If you have very large objects that are often deleted, \
            expired, or evicted, try to fragment those objects into multiple smaller \
            objects.\n";
        if anon_huge_pages_bytes() == 0 {
            assert_eq!(text, expected);
        }
    }

    #[test]
    fn moot_advice_still_gets_the_header() {
        // An `aof-fsync-always` spike under `everysec` calls for advice that does not apply.
        let mut srv = server();
        srv.config.latency_monitor_threshold_ms = 1;
        srv.config.appendfsync = Appendfsync::Everysec;
        srv.latency.add(Event::AofFsyncAlways, 5, 1000);
        let text = report(&srv, 1000);
        assert!(text.contains("1. aof-fsync-always: 1 latency spikes"), "{text}");
        assert!(
            text.ends_with("\nHere is some advice for you:\n\n") || anon_huge_pages_bytes() > 0
        );
    }
}
