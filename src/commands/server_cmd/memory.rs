//! MEMORY: USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE and HELP.
//!
//! STATS is INFO memory's breakdown (`info::MemoryBreakdown`) as a map with Valkey's field
//! names; DOCTOR reads the same figures and reports what looks wrong. The allocator side
//! (jemalloc's statistics, its report, purging) is `crate::memory`'s.

use bytes::Bytes;

use crate::commands::args::Args;
use crate::commands::command::reply_help;
use crate::commands::info::MemoryBreakdown;
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, ks, range, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::keyspace::entry::KeyEntry;
use crate::memory::{self, AllocatorStats};
use crate::server::evict;

/// The tips of the subcommands whose reply differs from shard to shard.
const REPORT_TIPS: &[&str] =
    &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"];
const MAY_BE_SLOW: &str = "Depends on how much memory is allocated, could be slow";

pub static MEMORY_SUBCOMMANDS: &[Command] = &[
    Command::new("memory|usage", -3, flag::READONLY, acl::READ | acl::SLOW, Server(memory_usage))
        .keys(&[range(ks::RO, 2, 0, 1)])
        .doc(
            "server",
            "4.0.0",
            "Estimates the memory usage of a key.",
            "O(N) where N is the number of samples.",
        ),
    Command::new("memory|stats", 2, 0, acl::SLOW, Server(memory_stats))
        .doc("server", "4.0.0", "Returns details about memory usage.", "O(1)")
        .tips(REPORT_TIPS),
    Command::new("memory|doctor", 2, 0, acl::SLOW, Server(memory_doctor))
        .doc("server", "4.0.0", "Outputs a memory problems report.", "O(1)")
        .tips(REPORT_TIPS),
    Command::new("memory|malloc-stats", 2, flag::LOADING, acl::SLOW, Server(memory_malloc_stats))
        .doc("server", "4.0.0", "Returns the allocator statistics.", MAY_BE_SLOW)
        .tips(REPORT_TIPS),
    Command::new("memory|purge", 2, flag::LOADING, acl::SLOW, Server(memory_purge))
        .doc("server", "4.0.0", "Asks the allocator to release memory.", MAY_BE_SLOW)
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    Command::new("memory|help", 2, flag::LOADING | flag::STALE, acl::SLOW, Server(memory_help))
        .doc("server", "4.0.0", "Returns helpful text about the different subcommands.", "O(1)"),
];

/// Bytes one key costs: its entry (key, value and metadata in one allocation, at the
/// allocator's size class, plus any out-of-line value) and its 8-byte slot in the table.
fn usage_bytes(obj: &KeyEntry) -> usize {
    obj.alloc_bytes() + std::mem::size_of::<usize>()
}

/// MEMORY USAGE key [SAMPLES count]. Options are checked before the key is looked up.
fn memory_usage(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let mut args = Args::new(argv, 3);
    while !args.is_empty() {
        if !args.eat("SAMPLES") || args.is_empty() {
            return Err(CmdError::Syntax);
        }
        if args.next_i64()? < 0 {
            return Err(CmdError::Syntax);
        }
    }
    let now = ctx.now_ms;
    match ctx.db().object(&argv[2], now) {
        Some(obj) => {
            let n = usage_bytes(obj);
            ctx.out.int(n as i64);
        }
        None => ctx.out.null(),
    }
    Ok(())
}

/// Everything STATS and DOCTOR report, gathered once.
struct Report {
    mem: MemoryBreakdown,
    alloc: AllocatorStats,
    rss: usize,
    keys: usize,
    clients: usize,
}

impl Report {
    fn gather(ctx: &ServerCtx) -> Report {
        let mem = MemoryBreakdown::now(ctx.srv, evict::client_memory_bytes(ctx.client, ctx.out));
        Report {
            mem,
            alloc: memory::allocator_stats(),
            rss: memory::rss_bytes(),
            keys: ctx.srv.dbs.iter().map(|db| db.len()).sum(),
            clients: ctx.srv.clients.count + 1,
        }
    }

    fn bytes_per_key(&self) -> usize {
        self.mem.used.saturating_sub(self.mem.startup).checked_div(self.keys).unwrap_or(0)
    }

    /// allocator active / allocated ("allocator-fragmentation").
    fn allocator_frag(&self) -> (f64, i64) {
        fraction(self.alloc.active, self.alloc.allocated)
    }

    /// allocator resident / active ("allocator-rss").
    fn allocator_rss(&self) -> (f64, i64) {
        fraction(self.alloc.resident, self.alloc.active)
    }

    /// process RSS / allocator resident ("rss-overhead").
    fn rss_overhead(&self) -> (f64, i64) {
        fraction(self.rss, self.alloc.resident)
    }

    /// process RSS / used memory ("fragmentation").
    fn fragmentation(&self) -> (f64, i64) {
        fraction(self.rss, self.mem.used)
    }
}

/// `a / b` and `a - b`, as Valkey reports such pairs: the ratio is a C `float`, so its
/// digits are those of an `f32` printed as a double.
fn fraction(a: usize, b: usize) -> (f64, i64) {
    let ratio = if b == 0 { 0.0 } else { a as f32 / b as f32 };
    (f64::from(ratio), a as i64 - b as i64)
}

/// A percentage as Valkey's `float` fields hold it.
fn float_field(value: f64) -> f64 {
    f64::from(value as f32)
}

/// Top-level fields of MEMORY STATS (Valkey 9.1's), besides one `db.<n>` entry per database
/// with keys.
const STATS_FIELDS: usize = 34;

fn memory_stats(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let r = Report::gather(ctx);
    let dbs: Vec<(usize, (usize, usize))> = ctx
        .srv
        .dbs
        .iter()
        .zip(&r.mem.dbs)
        .enumerate()
        .filter(|(_, (db, _))| !db.is_empty())
        .map(|(i, (_, &bytes))| (i, bytes))
        .collect();
    let out = &mut *ctx.out;
    out.map(STATS_FIELDS + dbs.len());
    // Replication, cluster and scripting do not exist yet: their buffers are truly empty.
    let int_fields: [(&str, usize); 13] = [
        ("peak.allocated", r.mem.peak),
        ("total.allocated", r.mem.used),
        ("startup.allocated", r.mem.startup),
        ("replication.backlog", 0),
        ("replicas.repl.buffer", 0),
        ("clients.slaves", 0),
        ("clients.normal", r.mem.clients_normal),
        ("cluster.links", 0),
        ("cluster.slot_import", 0),
        ("cluster.slot_export", 0),
        ("aof.buffer", 0),
        ("lua.caches", 0),
        ("functions.caches", 0),
    ];
    for (name, value) in int_fields {
        out.bulk(name.as_bytes());
        out.int(value as i64);
    }
    for (i, (table, expires)) in dbs {
        out.bulk(format!("db.{i}").as_bytes());
        out.map(2);
        out.bulk(b"overhead.hashtable.main");
        out.int(table as i64);
        out.bulk(b"overhead.hashtable.expires");
        out.int(expires as i64);
    }
    // The databases' lookup table is the vector of databases; a database in a resize has
    // its old and new bucket arrays both counted in its table bytes.
    let all = &ctx.srv.dbs;
    let rehashing = all.iter().filter(|d| d.is_rehashing());
    let lut_bytes = std::mem::size_of_val(all.as_slice());
    for (name, value) in [
        ("overhead.db.hashtable.lut", lut_bytes),
        ("overhead.db.hashtable.rehashing", rehashing.clone().map(|d| d.table_bytes()).sum()),
        ("overhead.total", r.mem.overhead),
        ("db.dict.rehashing.count", rehashing.count()),
        ("keys.count", r.keys),
        ("keys.bytes-per-key", r.bytes_per_key()),
        ("dataset.bytes", r.mem.dataset),
    ] {
        out.bulk(name.as_bytes());
        out.int(value as i64);
    }
    out.bulk(b"dataset.percentage");
    out.double(float_field(r.mem.dataset_perc()));
    out.bulk(b"peak.percentage");
    out.double(float_field(r.mem.peak_perc()));
    // jemalloc here purges dirty pages without a muzzy stage (muzzy decay 0): none are muzzy.
    for (name, value) in [
        ("allocator.allocated", r.alloc.allocated),
        ("allocator.active", r.alloc.active),
        ("allocator.resident", r.alloc.resident),
        ("allocator.muzzy", 0),
    ] {
        out.bulk(name.as_bytes());
        out.int(value as i64);
    }
    for (name, (ratio, bytes)) in [
        ("allocator-fragmentation", r.allocator_frag()),
        ("allocator-rss", r.allocator_rss()),
        ("rss-overhead", r.rss_overhead()),
    ] {
        out.bulk(format!("{name}.ratio").as_bytes());
        out.double(ratio);
        out.bulk(format!("{name}.bytes").as_bytes());
        out.int(bytes);
    }
    let (ratio, bytes) = r.fragmentation();
    out.bulk(b"fragmentation");
    out.double(ratio);
    out.bulk(b"fragmentation.bytes");
    out.int(bytes);
    Ok(())
}

/// Below this much used memory DOCTOR does not judge.
const DOCTOR_MIN_USED_BYTES: usize = 5 << 20;
/// A ratio is only worth reporting when its excess is also this many bytes.
const DOCTOR_MIN_EXCESS_BYTES: i64 = 10 << 20;
/// Average client memory above which clients are reported.
const DOCTOR_CLIENT_BYTES: usize = 200 << 10;

const DOCTOR_EMPTY: &str = "Hi Sam, this instance is empty or is using very little memory, my \
    issues detector can't be used in these conditions. Please, leave for your mission on \
    Earth and fill it with some data. The new Sam and I will be back to our programming as \
    soon as I finished rebooting.\n";
const DOCTOR_FINE: &str = "Hi Sam, I can't find any memory issue in your instance. I can only \
    account for what occurs on this base.\n";
const DOCTOR_INTRO: &str = "Sam, I detected a few issues in this Valkey instance memory \
    implants:\n\n";
const DOCTOR_OUTRO: &str = "I'm here to keep you safe, Sam. I want to help you.\n";

/// What DOCTOR found, each with its paragraph.
fn doctor_findings(r: &Report) -> Vec<&'static str> {
    let excessive =
        |(ratio, bytes): (f64, i64), limit: f64| ratio > limit && bytes > DOCTOR_MIN_EXCESS_BYTES;
    let checks: [(bool, &str); 6] = [
        (
            r.mem.peak as f64 > r.mem.used as f64 * 1.5,
            " * Peak memory: In the past this instance used more than 150% the memory that is \
             currently using. The allocator is normally not able to release memory after a \
             peak, so you can expect to see a big fragmentation ratio, however this is actually \
             harmless and is only due to the memory peak. If the memory peak was only \
             occasional and you want to try to reclaim memory, please try the MEMORY PURGE \
             command, otherwise the only other option is to shutdown and restart the \
             instance.\n\n",
        ),
        (
            excessive(r.fragmentation(), 1.4),
            " * High total RSS: This instance has a memory fragmentation and RSS overhead \
             greater than 1.4 (the Resident Set Size of the process is much larger than the \
             sum of the logical allocations it performed). This is usually due either to a \
             large peak memory (see the peak memory entry above, if any) or to a workload that \
             fragments the allocator's memory a lot.\n\n",
        ),
        (
            excessive(r.allocator_frag(), 1.1),
            " * High allocator fragmentation: This instance has an allocator external \
             fragmentation greater than 1.1. This is usually due either to a large peak memory \
             (see the peak memory entry above, if any) or to a workload that fragments the \
             allocator's memory a lot.\n\n",
        ),
        (
            excessive(r.allocator_rss(), 1.1),
            " * High allocator RSS overhead: This instance has an RSS memory overhead greater \
             than 1.1 (the Resident Set Size of the allocator is much larger than what it \
             actually holds). This is usually due to a large peak memory (see the peak memory \
             entry above, if any); the MEMORY PURGE command may reclaim it.\n\n",
        ),
        (
            excessive(r.rss_overhead(), 1.1),
            " * High process RSS overhead: This instance has non-allocator RSS memory overhead \
             greater than 1.1 (the Resident Set Size of the process is much larger than the \
             RSS the allocator holds).\n\n",
        ),
        (
            r.mem.clients_normal / r.clients.max(1) > DOCTOR_CLIENT_BYTES,
            " * Big client buffers: The clients output buffers in this instance are greater \
             than 200KB per client (on average). This may result from different causes, which \
             may require the use of a client output buffer limit (client-output-buffer-limit) \
             or a client memory limit (maxmemory-clients).\n\n",
        ),
    ];
    checks.into_iter().filter(|&(found, _)| found).map(|(_, text)| text).collect()
}

fn memory_doctor(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let r = Report::gather(ctx);
    let text = if r.mem.used < DOCTOR_MIN_USED_BYTES {
        DOCTOR_EMPTY.to_string()
    } else {
        let findings = doctor_findings(&r);
        if findings.is_empty() {
            DOCTOR_FINE.to_string()
        } else {
            let mut text = String::from(DOCTOR_INTRO);
            findings.iter().for_each(|f| text.push_str(f));
            text.push_str(DOCTOR_OUTRO);
            text
        }
    };
    ctx.out.verbatim("txt", text.as_bytes());
    Ok(())
}

fn memory_malloc_stats(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.verbatim("txt", memory::malloc_stats_text().as_bytes());
    Ok(())
}

fn memory_purge(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    memory::purge().map_err(|_| CmdError::err("Error purging dirty pages"))?;
    ctx.out.ok();
    Ok(())
}

fn memory_help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(
        ctx.out,
        "MEMORY",
        &[
            "DOCTOR",
            "    Return memory problems reports.",
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS",
            "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
        ],
    );
    Ok(())
}
