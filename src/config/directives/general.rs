//! General directives: process, logging, security, signals, slow log and keyspace events,
//! plus the OS and diagnostics knobs of Valkey 9.1 that ferrokey accepts without effect.

use super::*;
#[allow(unused_imports)]
use crate::config::kind::any_string;
#[allow(unused_imports)]
use crate::config::special;
#[allow(unused_imports)]
use crate::config::values::*;

/// The general settings added for Valkey 9.1; the older ones are fields of `Config`.
#[derive(Debug, Clone, PartialEq)]
pub struct General {
    pub propagation_error_behavior: PropagationErrorBehavior,
    pub enable_module_command: EnableModuleCommand,
    pub proc_title_template: String,
    pub syslog_enabled: bool,
    pub syslog_ident: String,
    pub syslog_facility: SyslogFacility,
    pub log_format: LogFormat,
    pub log_timestamp_format: LogTimestampFormat,
    pub crash_log_enabled: bool,
    pub crash_memcheck_enabled: bool,
    pub hide_user_data_from_log: bool,
    pub locale_collate: String,
    pub ignore_warnings: String,
    pub availability_zone: String,
    pub extended_redis_compatibility: bool,
    pub import_mode: bool,
    pub hash_seed: String,
    pub oom_score_adj: OomScoreAdj,
    pub oom_score_adj_values: [i32; 3],
    pub disable_thp: bool,
    pub server_cpulist: String,
    pub bio_cpulist: String,
    pub aof_rewrite_cpulist: String,
    pub bgsave_cpulist: String,
    pub shutdown_on_sigint: ShutdownFlags,
    pub shutdown_on_sigterm: ShutdownFlags,
    pub shutdown_timeout_secs: u32,
    pub latency_tracking: bool,
    pub latency_tracking_info_percentiles: Vec<f64>,
    pub acllog_max_len: u64,
    pub acl_pubsub_default: AclPubsubDefault,
    pub aclfile: String,
    /// The `user` lines of the configuration file: each the words after `user`.
    pub users: Vec<Vec<String>>,
    /// `rename-command old new` lines, in order: the command's lower-case table name and
    /// its new name (empty: the command is gone).
    pub renames: Vec<(String, String)>,
    pub commandlog_large_request_max_len: u64,
    pub commandlog_large_reply_max_len: u64,
    pub commandlog_request_larger_than_bytes: i64,
    pub commandlog_reply_larger_than_bytes: i64,
}

impl Default for General {
    fn default() -> Self {
        General {
            propagation_error_behavior: PropagationErrorBehavior::Ignore,
            enable_module_command: EnableModuleCommand::No,
            proc_title_template: "{title} {listen-addr} {server-mode}".to_string(),
            syslog_enabled: false,
            syslog_ident: "valkey".to_string(),
            syslog_facility: SyslogFacility::Local0,
            log_format: LogFormat::Legacy,
            log_timestamp_format: LogTimestampFormat::Legacy,
            crash_log_enabled: true,
            crash_memcheck_enabled: true,
            hide_user_data_from_log: true,
            locale_collate: String::new(),
            ignore_warnings: String::new(),
            availability_zone: String::new(),
            extended_redis_compatibility: false,
            import_mode: false,
            hash_seed: String::new(),
            oom_score_adj: OomScoreAdj::No,
            oom_score_adj_values: [0, 200, 800],
            disable_thp: true,
            server_cpulist: String::new(),
            bio_cpulist: String::new(),
            aof_rewrite_cpulist: String::new(),
            bgsave_cpulist: String::new(),
            shutdown_on_sigint: ShutdownFlags::DEFAULT,
            shutdown_on_sigterm: ShutdownFlags::DEFAULT,
            shutdown_timeout_secs: 10,
            latency_tracking: true,
            latency_tracking_info_percentiles: vec![50.0, 99.0, 99.9],
            acllog_max_len: 128,
            acl_pubsub_default: AclPubsubDefault::Resetchannels,
            aclfile: String::new(),
            users: Vec::new(),
            renames: Vec::new(),
            commandlog_large_request_max_len: 128,
            commandlog_large_reply_max_len: 128,
            commandlog_request_larger_than_bytes: 1048576,
            commandlog_reply_larger_than_bytes: 1048576,
        }
    }
}

pub(super) static ROWS: &[Directive] = &[
    // GENERAL
    boolean("daemonize", Immutable, "no", |c| c.daemonize, |c, v| c.daemonize = v),
    choice(
        "supervised",
        Immutable,
        Supervised::NAMES,
        "no",
        |c| c.supervised as usize,
        |c, i| c.supervised = Supervised::ALL[i],
    ),
    string("pidfile", Immutable, "\"\"", any_string, |c| &c.pidfile, |c, v| c.pidfile = v),
    choice(
        "loglevel",
        Mutable,
        LogLevel::NAMES,
        "notice",
        |c| c.loglevel as usize,
        |c, i| c.loglevel = LogLevel::ALL[i],
    ),
    string("logfile", Immutable, "\"\"", any_string, |c| &c.logfile, |c, v| c.logfile = v),
    int(
        "databases",
        Immutable,
        1,
        INT_MAX,
        "16",
        |c| c.databases.into(),
        |c, v| c.databases = v as u32,
    ),
    boolean(
        "always-show-logo",
        Immutable,
        "no",
        |c| c.always_show_logo,
        |c, v| c.always_show_logo = v,
    ),
    boolean("set-proc-title", Immutable, "yes", |c| c.set_proc_title, |c, v| c.set_proc_title = v)
        .support(NoEffect("ferrokey does not rewrite its process title")),
    choice(
        "enable-protected-configs",
        Immutable,
        EnableProtectedConfigs::NAMES,
        "no",
        |c| c.enable_protected_configs as usize,
        |c, i| c.enable_protected_configs = EnableProtectedConfigs::ALL[i],
    ),
    choice(
        "enable-debug-command",
        Immutable,
        EnableDebugCommand::NAMES,
        "no",
        |c| c.enable_debug_command as usize,
        |c, i| c.enable_debug_command = EnableDebugCommand::ALL[i],
    ),
    // SECURITY
    string(
        "requirepass",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.requirepass,
        |c, v| c.requirepass = v,
    ),
    // SLOW LOG, LATENCY MONITOR, EVENT NOTIFICATION
    int(
        "busy-reply-threshold",
        Mutable,
        0,
        LONG_MAX,
        "5000",
        |c| c.busy_reply_threshold_ms as i64,
        |c, v| c.busy_reply_threshold_ms = v as u64,
    )
    .aliases(&["lua-time-limit"]),
    int(
        "slowlog-log-slower-than",
        Mutable,
        -1,
        LONG_MAX,
        "10000",
        |c| c.slowlog_log_slower_than,
        |c, v| c.slowlog_log_slower_than = v,
    )
    .aliases(&["commandlog-execution-slower-than"]),
    int(
        "slowlog-max-len",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.slowlog_max_len as i64,
        |c, v| c.slowlog_max_len = v as u64,
    )
    .aliases(&["commandlog-slow-execution-max-len"]),
    int(
        "latency-monitor-threshold",
        Mutable,
        0,
        LONG_MAX,
        "0",
        |c| c.latency_monitor_threshold_ms as i64,
        |c, v| c.latency_monitor_threshold_ms = v as u64,
    ),
    special("notify-keyspace-events", Mutable, "\"\"", &special::NOTIFY_KEYSPACE_EVENTS),
    // Added for Valkey 9.1.
    choice(
        "propagation-error-behavior",
        Mutable,
        PropagationErrorBehavior::NAMES,
        "ignore",
        |c| c.general.propagation_error_behavior as usize,
        |c, i| c.general.propagation_error_behavior = PropagationErrorBehavior::ALL[i],
    ),
    choice(
        "enable-module-command",
        Immutable,
        EnableModuleCommand::NAMES,
        "no",
        |c| c.general.enable_module_command as usize,
        |c, i| c.general.enable_module_command = EnableModuleCommand::ALL[i],
    )
    .support(NoEffect(
        "ferrokey has no MODULE command: modules cannot be loaded (loadmodule is refused)",
    )),
    string(
        "proc-title-template",
        Mutable,
        "\"{title} {listen-addr} {server-mode}\"",
        special::check_proc_title_template,
        |c| &c.general.proc_title_template,
        |c, v| c.general.proc_title_template = v,
    )
    .support(NoEffect("ferrokey does not rewrite its process title")),
    boolean(
        "syslog-enabled",
        Immutable,
        "no",
        |c| c.general.syslog_enabled,
        |c, v| c.general.syslog_enabled = v,
    )
    .support(Gate(Feature::Syslog)),
    string(
        "syslog-ident",
        Immutable,
        "valkey",
        any_string,
        |c| &c.general.syslog_ident,
        |c, v| c.general.syslog_ident = v,
    )
    .support(Tunes(Feature::Syslog)),
    choice(
        "syslog-facility",
        Immutable,
        SyslogFacility::NAMES,
        "local0",
        |c| c.general.syslog_facility as usize,
        |c, i| c.general.syslog_facility = SyslogFacility::ALL[i],
    )
    .support(Tunes(Feature::Syslog)),
    choice(
        "log-format",
        Mutable,
        LogFormat::NAMES,
        "legacy",
        |c| c.general.log_format as usize,
        |c, i| c.general.log_format = LogFormat::ALL[i],
    ),
    choice(
        "log-timestamp-format",
        Mutable,
        LogTimestampFormat::NAMES,
        "legacy",
        |c| c.general.log_timestamp_format as usize,
        |c, i| c.general.log_timestamp_format = LogTimestampFormat::ALL[i],
    ),
    boolean(
        "crash-log-enabled",
        Mutable,
        "yes",
        |c| c.general.crash_log_enabled,
        |c, v| c.general.crash_log_enabled = v,
    )
    .support(NoEffect("ferrokey writes no crash report: a panic aborts with Rust's message")),
    boolean(
        "crash-memcheck-enabled",
        Mutable,
        "yes",
        |c| c.general.crash_memcheck_enabled,
        |c, v| c.general.crash_memcheck_enabled = v,
    )
    .support(NoEffect("ferrokey runs no memory test after a crash")),
    boolean(
        "hide-user-data-from-log",
        Mutable,
        "yes",
        |c| c.general.hide_user_data_from_log,
        |c, v| c.general.hide_user_data_from_log = v,
    )
    .support(NoEffect("ferrokey never writes keys or values to its log")),
    string(
        "locale-collate",
        Mutable,
        "\"\"",
        special::check_locale,
        |c| &c.general.locale_collate,
        |c, v| c.general.locale_collate = v,
    )
    .support(NoEffect("ferrokey compares strings byte by byte (SORT ALPHA), as the C locale does")),
    string(
        "ignore-warnings",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.general.ignore_warnings,
        |c, v| c.general.ignore_warnings = v,
    )
    .support(NoEffect("ferrokey does not run Valkey's start-up system checks")),
    string(
        "availability-zone",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.general.availability_zone,
        |c, v| c.general.availability_zone = v,
    )
    .support(Tunes(Feature::Cluster)),
    boolean(
        "extended-redis-compatibility",
        Mutable,
        "no",
        |c| c.general.extended_redis_compatibility,
        |c, v| c.general.extended_redis_compatibility = v,
    ),
    boolean(
        "import-mode",
        Mutable,
        "no",
        |c| c.general.import_mode,
        |c, v| c.general.import_mode = v,
    ),
    string(
        "hash-seed",
        Immutable,
        "\"\"",
        any_string,
        |c| &c.general.hash_seed,
        |c, v| c.general.hash_seed = v,
    )
    .support(NoEffect("ferrokey seeds its hasher randomly in every process")),
    choice(
        "oom-score-adj",
        Mutable,
        OomScoreAdj::NAMES,
        "no",
        |c| c.general.oom_score_adj as usize,
        |c, i| c.general.oom_score_adj = OomScoreAdj::ALL[i],
    )
    .support(NoEffect("ferrokey does not write /proc/self/oom_score_adj")),
    special("oom-score-adj-values", Mutable, "0 200 800", &special::OOM_SCORE_ADJ_VALUES)
        .support(NoEffect("ferrokey does not write /proc/self/oom_score_adj")),
    boolean(
        "disable-thp",
        Immutable,
        "yes",
        |c| c.general.disable_thp,
        |c, v| c.general.disable_thp = v,
    )
    .support(NoEffect("ferrokey does not change transparent huge pages settings")),
    string(
        "server-cpulist",
        Immutable,
        "\"\"",
        any_string,
        |c| &c.general.server_cpulist,
        |c, v| c.general.server_cpulist = v,
    )
    .aliases(&["server_cpulist"])
    .support(NoEffect("ferrokey does not pin its threads to CPUs")),
    string(
        "bio-cpulist",
        Immutable,
        "\"\"",
        any_string,
        |c| &c.general.bio_cpulist,
        |c, v| c.general.bio_cpulist = v,
    )
    .aliases(&["bio_cpulist"])
    .support(NoEffect("ferrokey does not pin its threads to CPUs")),
    string(
        "aof-rewrite-cpulist",
        Immutable,
        "\"\"",
        any_string,
        |c| &c.general.aof_rewrite_cpulist,
        |c, v| c.general.aof_rewrite_cpulist = v,
    )
    .aliases(&["aof_rewrite_cpulist"])
    .support(NoEffect("ferrokey does not pin its threads to CPUs")),
    string(
        "bgsave-cpulist",
        Immutable,
        "\"\"",
        any_string,
        |c| &c.general.bgsave_cpulist,
        |c, v| c.general.bgsave_cpulist = v,
    )
    .aliases(&["bgsave_cpulist"])
    .support(NoEffect("ferrokey does not pin its threads to CPUs")),
    special("shutdown-on-sigint", Mutable, "default", &special::SHUTDOWN_ON_SIGNAL_INT).support(
        NoEffect(
            "ferrokey shuts down on a signal as `default` does; the flags are not implemented",
        ),
    ),
    special("shutdown-on-sigterm", Mutable, "default", &special::SHUTDOWN_ON_SIGNAL_TERM).support(
        NoEffect(
            "ferrokey shuts down on a signal as `default` does; the flags are not implemented",
        ),
    ),
    int(
        "shutdown-timeout",
        Mutable,
        0,
        INT_MAX,
        "10",
        |c| c.general.shutdown_timeout_secs.into(),
        |c, v| c.general.shutdown_timeout_secs = v as u32,
    ),
    boolean(
        "latency-tracking",
        Mutable,
        "yes",
        |c| c.general.latency_tracking,
        |c, v| c.general.latency_tracking = v,
    ),
    special(
        "latency-tracking-info-percentiles",
        Mutable,
        "50 99 99.9",
        &special::LATENCY_PERCENTILES,
    ),
    int(
        "acllog-max-len",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.general.acllog_max_len as i64,
        |c, v| c.general.acllog_max_len = v as u64,
    ),
    choice(
        "acl-pubsub-default",
        Mutable,
        AclPubsubDefault::NAMES,
        "resetchannels",
        |c| c.general.acl_pubsub_default as usize,
        |c, i| c.general.acl_pubsub_default = AclPubsubDefault::ALL[i],
    ),
    string(
        "aclfile",
        Immutable,
        "\"\"",
        any_string,
        |c| &c.general.aclfile,
        |c, v| c.general.aclfile = v,
    ),
    int(
        "commandlog-large-request-max-len",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.general.commandlog_large_request_max_len as i64,
        |c, v| c.general.commandlog_large_request_max_len = v as u64,
    ),
    int(
        "commandlog-large-reply-max-len",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.general.commandlog_large_reply_max_len as i64,
        |c, v| c.general.commandlog_large_reply_max_len = v as u64,
    ),
    int(
        "commandlog-request-larger-than",
        Mutable,
        -1,
        LONG_MAX,
        "1048576",
        |c| c.general.commandlog_request_larger_than_bytes,
        |c, v| c.general.commandlog_request_larger_than_bytes = v,
    ),
    int(
        "commandlog-reply-larger-than",
        Mutable,
        -1,
        LONG_MAX,
        "1048576",
        |c| c.general.commandlog_reply_larger_than_bytes,
        |c, v| c.general.commandlog_reply_larger_than_bytes = v,
    ),
];
