//! Valkey 9.1's hidden directives for testing and debugging: left out of `CONFIG GET` with a
//! pattern (see [`HIDDEN`]), shown when asked for by name, settable as Valkey allows. Those
//! that mean something here act: `key-load-delay` and `rdb-key-save-delay` slow every key
//! an RDB load or save handles (tests use them to catch a load or a BGSAVE in progress),
//! `aof-disable-auto-gc` keeps the AOF's history files, `use-exit-on-panic` makes DEBUG's
//! deliberate crashes exit instead of abort, and `debug-context` goes into their log lines.

use super::*;

/// The testing settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Testing {
    pub use_exit_on_panic: bool,
    pub aof_disable_auto_gc: bool,
    pub enable_debug_assert: bool,
    pub debug_context: String,
    /// Per key saved in an RDB: microseconds asleep when positive, nanoseconds of busy
    /// waiting when negative (Valkey's `debugDelay`).
    pub rdb_key_save_delay: i32,
    /// Per key loaded from an RDB, the same way.
    pub key_load_delay: i32,
    pub watchdog_period_ms: i32,
    pub loading_process_events_interval_bytes: i64,
}

impl Default for Testing {
    fn default() -> Self {
        Testing {
            use_exit_on_panic: false,
            aof_disable_auto_gc: false,
            enable_debug_assert: false,
            debug_context: String::new(),
            rdb_key_save_delay: 0,
            key_load_delay: 0,
            watchdog_period_ms: 0,
            loading_process_events_interval_bytes: 2 * MB as i64,
        }
    }
}

/// Directives Valkey 9.1 keeps out of `CONFIG GET` with a pattern.
pub const HIDDEN: &[&str] = &[
    "use-exit-on-panic",
    "aof-disable-auto-gc",
    "enable-debug-assert",
    "debug-context",
    "rdb-key-save-delay",
    "key-load-delay",
    "watchdog-period",
    "loading-process-events-interval-bytes",
];

const INT_MIN: i64 = i32::MIN as i64;

pub(super) static ROWS: &[Directive] = &[
    boolean(
        "use-exit-on-panic",
        Mutable,
        "no",
        |c| c.testing.use_exit_on_panic,
        |c, v| c.testing.use_exit_on_panic = v,
    ),
    boolean(
        "aof-disable-auto-gc",
        Mutable,
        "no",
        |c| c.testing.aof_disable_auto_gc,
        |c, v| c.testing.aof_disable_auto_gc = v,
    ),
    boolean(
        "enable-debug-assert",
        Immutable,
        "no",
        |c| c.testing.enable_debug_assert,
        |c, v| c.testing.enable_debug_assert = v,
    )
    .support(NoEffect("ferrokey's debug assertions are chosen when it is built")),
    string(
        "debug-context",
        Mutable,
        "\"\"",
        crate::config::kind::any_string,
        |c| &c.testing.debug_context,
        |c, v| c.testing.debug_context = v,
    ),
    int(
        "rdb-key-save-delay",
        Mutable,
        INT_MIN,
        INT_MAX,
        "0",
        |c| c.testing.rdb_key_save_delay.into(),
        |c, v| c.testing.rdb_key_save_delay = v as i32,
    ),
    int(
        "key-load-delay",
        Mutable,
        INT_MIN,
        INT_MAX,
        "0",
        |c| c.testing.key_load_delay.into(),
        |c, v| c.testing.key_load_delay = v as i32,
    ),
    int(
        "watchdog-period",
        Mutable,
        0,
        INT_MAX,
        "0",
        |c| c.testing.watchdog_period_ms.into(),
        // As Valkey stores it: a period under two cron ticks is raised to two.
        |c, v| {
            let min = 2 * (1000 / c.hz.max(1) as i64);
            c.testing.watchdog_period_ms = if v > 0 { v.max(min) as i32 } else { 0 };
        },
    )
    .support(NoEffect("ferrokey has no software watchdog")),
    int(
        "loading-process-events-interval-bytes",
        Mutable,
        1024,
        INT_MAX,
        "2097152",
        |c| c.testing.loading_process_events_interval_bytes,
        |c, v| c.testing.loading_process_events_interval_bytes = v,
    )
    .support(NoEffect("ferrokey serves no client while it loads a dataset")),
];
