//! Persistence directives: RDB snapshots and the append-only file.

use super::*;
#[allow(unused_imports)]
use crate::config::kind::any_string;
#[allow(unused_imports)]
use crate::config::special;
#[allow(unused_imports)]
use crate::config::values::*;

/// The persistence settings added for Valkey 9.1; the older ones are fields of `Config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Persistence {
    pub aof_rewrite_incremental_fsync: bool,
    pub rdb_save_incremental_fsync: bool,
    pub aof_timestamp_enabled: bool,
    pub no_appendfsync_on_rewrite: bool,
    pub rdb_del_sync_files: bool,
    pub rdb_version_check: RdbVersionCheck,
}

impl Default for Persistence {
    fn default() -> Self {
        Persistence {
            aof_rewrite_incremental_fsync: true,
            rdb_save_incremental_fsync: true,
            aof_timestamp_enabled: false,
            no_appendfsync_on_rewrite: false,
            rdb_del_sync_files: false,
            rdb_version_check: RdbVersionCheck::Strict,
        }
    }
}

pub(super) static ROWS: &[Directive] = &[
    // SNAPSHOTTING
    special("save", Mutable, "3600 1 300 100 60 10000", &special::SAVE),
    boolean(
        "stop-writes-on-bgsave-error",
        Mutable,
        "yes",
        |c| c.stop_writes_on_bgsave_error,
        |c, v| c.stop_writes_on_bgsave_error = v,
    ),
    boolean("rdbcompression", Mutable, "yes", |c| c.rdbcompression, |c, v| c.rdbcompression = v),
    boolean("rdbchecksum", Immutable, "yes", |c| c.rdbchecksum, |c, v| c.rdbchecksum = v),
    string(
        "dbfilename",
        Protected,
        "dump.rdb",
        special::check_dbfilename,
        |c| &c.dbfilename,
        |c, v| c.dbfilename = v,
    ),
    special("dir", Protected, "./", &special::DIR),
    // APPEND ONLY MODE
    boolean("appendonly", Mutable, "no", |c| c.appendonly, |c, v| c.appendonly = v),
    string(
        "appendfilename",
        Immutable,
        "appendonly.aof",
        special::check_appendfilename,
        |c| &c.appendfilename,
        |c, v| c.appendfilename = v,
    ),
    string(
        "appenddirname",
        Immutable,
        "appendonlydir",
        special::check_appenddirname,
        |c| &c.appenddirname,
        |c, v| c.appenddirname = v,
    ),
    choice(
        "appendfsync",
        Mutable,
        Appendfsync::NAMES,
        "everysec",
        |c| c.appendfsync as usize,
        |c, i| c.appendfsync = Appendfsync::ALL[i],
    ),
    int(
        "auto-aof-rewrite-percentage",
        Mutable,
        0,
        INT_MAX,
        "100",
        |c| c.auto_aof_rewrite_percentage.into(),
        |c, v| c.auto_aof_rewrite_percentage = v as u32,
    ),
    memory(
        "auto-aof-rewrite-min-size",
        0,
        LONG_MAX as u64,
        "64mb",
        |c| c.auto_aof_rewrite_min_size_bytes,
        |c, v| c.auto_aof_rewrite_min_size_bytes = v,
    ),
    boolean(
        "aof-load-truncated",
        Mutable,
        "yes",
        |c| c.aof_load_truncated,
        |c, v| c.aof_load_truncated = v,
    ),
    boolean(
        "aof-use-rdb-preamble",
        Mutable,
        "yes",
        |c| c.aof_use_rdb_preamble,
        |c, v| c.aof_use_rdb_preamble = v,
    ),
    // Added for Valkey 9.1.
    boolean(
        "aof-rewrite-incremental-fsync",
        Mutable,
        "yes",
        |c| c.persistence.aof_rewrite_incremental_fsync,
        |c, v| c.persistence.aof_rewrite_incremental_fsync = v,
    )
    .support(NoEffect("ferrokey fsyncs a rewritten AOF once, at its end")),
    boolean(
        "rdb-save-incremental-fsync",
        Mutable,
        "yes",
        |c| c.persistence.rdb_save_incremental_fsync,
        |c, v| c.persistence.rdb_save_incremental_fsync = v,
    )
    .support(NoEffect("ferrokey fsyncs an RDB file once, at its end")),
    boolean(
        "aof-timestamp-enabled",
        Mutable,
        "no",
        |c| c.persistence.aof_timestamp_enabled,
        |c, v| c.persistence.aof_timestamp_enabled = v,
    )
    .support(Gate(Feature::AofTimestamps)),
    boolean(
        "no-appendfsync-on-rewrite",
        Mutable,
        "no",
        |c| c.persistence.no_appendfsync_on_rewrite,
        |c, v| c.persistence.no_appendfsync_on_rewrite = v,
    )
    .support(NoEffect("ferrokey keeps fsyncing the AOF during a rewrite, as with `no`")),
    boolean(
        "rdb-del-sync-files",
        Mutable,
        "no",
        |c| c.persistence.rdb_del_sync_files,
        |c, v| c.persistence.rdb_del_sync_files = v,
    )
    .support(Tunes(Feature::Replication)),
    choice(
        "rdb-version-check",
        Mutable,
        RdbVersionCheck::NAMES,
        "strict",
        |c| c.persistence.rdb_version_check as usize,
        |c, i| c.persistence.rdb_version_check = RdbVersionCheck::ALL[i],
    ),
];
