//! Memory directives: maxmemory and eviction, lazy freeing, encodings of the data types,
//! buffers and limits, and active defragmentation (accepted without effect).

use super::*;
#[allow(unused_imports)]
use crate::config::kind::any_string;
#[allow(unused_imports)]
use crate::config::special;
#[allow(unused_imports)]
use crate::config::values::*;

/// The memory settings added for Valkey 9.1; the older ones are fields of `Config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    pub activedefrag: bool,
    pub active_defrag_cycle_min_percent: u32,
    pub active_defrag_cycle_max_percent: u32,
    pub active_defrag_cycle_us: u32,
    pub active_defrag_ignore_bytes: u64,
    pub active_defrag_max_scan_fields: u64,
    pub active_defrag_threshold_lower_percent: u32,
    pub active_defrag_threshold_upper_percent: u32,
    pub jemalloc_bg_thread: bool,
    pub hll_sparse_max_bytes: u64,
    pub stream_node_max_bytes: u64,
    pub stream_node_max_entries: u64,
}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            activedefrag: false,
            active_defrag_cycle_min_percent: 1,
            active_defrag_cycle_max_percent: 25,
            active_defrag_cycle_us: 500,
            active_defrag_ignore_bytes: 100 * MB,
            active_defrag_max_scan_fields: 1000,
            active_defrag_threshold_lower_percent: 10,
            active_defrag_threshold_upper_percent: 100,
            jemalloc_bg_thread: true,
            hll_sparse_max_bytes: 3000,
            stream_node_max_bytes: 4 * KB,
            stream_node_max_entries: 100,
        }
    }
}

pub(super) static ROWS: &[Directive] = &[
    // MEMORY MANAGEMENT
    memory("maxmemory", 0, u64::MAX, "0", |c| c.maxmemory_bytes, |c, v| c.maxmemory_bytes = v),
    choice(
        "maxmemory-policy",
        Mutable,
        MaxmemoryPolicy::NAMES,
        "noeviction",
        |c| c.maxmemory_policy as usize,
        |c, i| c.maxmemory_policy = MaxmemoryPolicy::ALL[i],
    ),
    int(
        "maxmemory-samples",
        Mutable,
        1,
        64,
        "5",
        |c| c.maxmemory_samples.into(),
        |c, v| c.maxmemory_samples = v as u32,
    ),
    int(
        "maxmemory-eviction-tenacity",
        Mutable,
        0,
        100,
        "10",
        |c| c.maxmemory_eviction_tenacity.into(),
        |c, v| c.maxmemory_eviction_tenacity = v as u32,
    ),
    special("maxmemory-clients", Mutable, "0", &special::MAXMEMORY_CLIENTS),
    // LAZY FREEING
    boolean(
        "lazyfree-lazy-eviction",
        Mutable,
        "yes",
        |c| c.lazyfree_lazy_eviction,
        |c, v| c.lazyfree_lazy_eviction = v,
    ),
    boolean(
        "lazyfree-lazy-expire",
        Mutable,
        "yes",
        |c| c.lazyfree_lazy_expire,
        |c, v| c.lazyfree_lazy_expire = v,
    ),
    boolean(
        "lazyfree-lazy-server-del",
        Mutable,
        "yes",
        |c| c.lazyfree_lazy_server_del,
        |c, v| c.lazyfree_lazy_server_del = v,
    ),
    boolean(
        "lazyfree-lazy-user-del",
        Mutable,
        "yes",
        |c| c.lazyfree_lazy_user_del,
        |c, v| c.lazyfree_lazy_user_del = v,
    ),
    boolean(
        "lazyfree-lazy-user-flush",
        Mutable,
        "yes",
        |c| c.lazyfree_lazy_user_flush,
        |c, v| c.lazyfree_lazy_user_flush = v,
    ),
    // ADVANCED CONFIG
    int(
        "hash-max-listpack-entries",
        Mutable,
        0,
        LONG_MAX,
        "512",
        |c| c.hash_max_listpack_entries as i64,
        |c, v| c.hash_max_listpack_entries = v as u64,
    )
    .aliases(&["hash-max-ziplist-entries"]),
    memory(
        "hash-max-listpack-value",
        0,
        LONG_MAX as u64,
        "64",
        |c| c.hash_max_listpack_value_bytes,
        |c, v| c.hash_max_listpack_value_bytes = v,
    )
    .aliases(&["hash-max-ziplist-value"]),
    int(
        "list-max-listpack-size",
        Mutable,
        i32::MIN as i64,
        INT_MAX,
        "-2",
        |c| c.list_max_listpack_size.into(),
        |c, v| c.list_max_listpack_size = v as i32,
    )
    .aliases(&["list-max-ziplist-size"]),
    int(
        "list-compress-depth",
        Mutable,
        0,
        INT_MAX,
        "0",
        |c| c.list_compress_depth.into(),
        |c, v| c.list_compress_depth = v as u32,
    ),
    int(
        "set-max-intset-entries",
        Mutable,
        0,
        LONG_MAX,
        "512",
        |c| c.set_max_intset_entries as i64,
        |c, v| c.set_max_intset_entries = v as u64,
    ),
    int(
        "set-max-listpack-entries",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.set_max_listpack_entries as i64,
        |c, v| c.set_max_listpack_entries = v as u64,
    ),
    int(
        "set-max-listpack-value",
        Mutable,
        0,
        LONG_MAX,
        "64",
        |c| c.set_max_listpack_value_bytes as i64,
        |c, v| c.set_max_listpack_value_bytes = v as u64,
    ),
    int(
        "zset-max-listpack-entries",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.zset_max_listpack_entries as i64,
        |c, v| c.zset_max_listpack_entries = v as u64,
    )
    .aliases(&["zset-max-ziplist-entries"]),
    memory(
        "zset-max-listpack-value",
        0,
        LONG_MAX as u64,
        "64",
        |c| c.zset_max_listpack_value_bytes,
        |c, v| c.zset_max_listpack_value_bytes = v,
    )
    .aliases(&["zset-max-ziplist-value"]),
    boolean("activerehashing", Mutable, "yes", |c| c.activerehashing, |c, v| c.activerehashing = v),
    special(
        "client-output-buffer-limit",
        Mutable,
        "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60",
        &special::CLIENT_OUTPUT_BUFFER_LIMIT,
    ),
    memory(
        "client-query-buffer-limit",
        MB,
        LONG_MAX as u64,
        "1gb",
        |c| c.client_query_buffer_limit,
        |c, v| c.client_query_buffer_limit = v,
    ),
    memory(
        "proto-max-bulk-len",
        MB,
        LONG_MAX as u64,
        "512mb",
        |c| c.proto_max_bulk_len,
        |c, v| c.proto_max_bulk_len = v,
    ),
    // Valkey accepts any non-negative hz and clamps it: hz is a hint.
    int("hz", Mutable, 0, INT_MAX, "10", |c| c.hz.into(), |c, v| c.hz = v.clamp(1, 500) as u32),
    boolean("dynamic-hz", Mutable, "yes", |c| c.dynamic_hz, |c, v| c.dynamic_hz = v)
        .support(NoEffect("ferrokey's cron runs at `hz`; Valkey 9.1 no longer lists dynamic-hz")),
    int(
        "tracking-table-max-keys",
        Mutable,
        0,
        LONG_MAX,
        "1000000",
        |c| c.tracking_table_max_keys as i64,
        |c, v| c.tracking_table_max_keys = v as u64,
    ),
    int(
        "lfu-log-factor",
        Mutable,
        0,
        INT_MAX,
        "10",
        |c| c.lfu_log_factor.into(),
        |c, v| c.lfu_log_factor = v as u32,
    ),
    int(
        "lfu-decay-time",
        Mutable,
        0,
        INT_MAX,
        "1",
        |c| c.lfu_decay_time_mins.into(),
        |c, v| c.lfu_decay_time_mins = v as u32,
    ),
    int(
        "active-expire-effort",
        Mutable,
        1,
        10,
        "1",
        |c| c.active_expire_effort.into(),
        |c, v| c.active_expire_effort = v as u32,
    ),
    // Added for Valkey 9.1.
    boolean("activedefrag", Mutable, "no", |c| c.memory.activedefrag, |c, v| c.memory.activedefrag = v)
.support(NoEffect("active defragmentation moves jemalloc allocations by Valkey's own hooks; ferrokey has none")),
    int("active-defrag-cycle-min", Mutable, 1, 99, "1", |c| c.memory.active_defrag_cycle_min_percent.into(), |c, v| c.memory.active_defrag_cycle_min_percent = v as u32)
.support(NoEffect("no active defragmentation")),
    int("active-defrag-cycle-max", Mutable, 1, 99, "25", |c| c.memory.active_defrag_cycle_max_percent.into(), |c, v| c.memory.active_defrag_cycle_max_percent = v as u32)
.support(NoEffect("no active defragmentation")),
    int("active-defrag-cycle-us", Mutable, 0, 100000, "500", |c| c.memory.active_defrag_cycle_us.into(), |c, v| c.memory.active_defrag_cycle_us = v as u32)
.support(NoEffect("no active defragmentation")),
    memory("active-defrag-ignore-bytes", 1, LONG_MAX as u64, "100mb", |c| c.memory.active_defrag_ignore_bytes, |c, v| c.memory.active_defrag_ignore_bytes = v)
.support(NoEffect("no active defragmentation")),
    int("active-defrag-max-scan-fields", Mutable, 1, LONG_MAX, "1000", |c| c.memory.active_defrag_max_scan_fields as i64, |c, v| c.memory.active_defrag_max_scan_fields = v as u64)
.support(NoEffect("no active defragmentation")),
    int("active-defrag-threshold-lower", Mutable, 0, 1000, "10", |c| c.memory.active_defrag_threshold_lower_percent.into(), |c, v| c.memory.active_defrag_threshold_lower_percent = v as u32)
.support(NoEffect("no active defragmentation")),
    int("active-defrag-threshold-upper", Mutable, 0, 1000, "100", |c| c.memory.active_defrag_threshold_upper_percent.into(), |c, v| c.memory.active_defrag_threshold_upper_percent = v as u32)
.support(NoEffect("no active defragmentation")),
    boolean("jemalloc-bg-thread", Mutable, "yes", |c| c.memory.jemalloc_bg_thread, |c, v| c.memory.jemalloc_bg_thread = v)
.support(NoEffect("ferrokey leaves jemalloc's background threads at jemalloc's own default")),
    memory("hll-sparse-max-bytes", 0, LONG_MAX as u64, "3000", |c| c.memory.hll_sparse_max_bytes, |c, v| c.memory.hll_sparse_max_bytes = v)
.support(Tunes(Feature::HyperLogLog)),
    memory("stream-node-max-bytes", 0, LONG_MAX as u64, "4kb", |c| c.memory.stream_node_max_bytes, |c, v| c.memory.stream_node_max_bytes = v)
.support(Tunes(Feature::Streams)),
    int("stream-node-max-entries", Mutable, 0, LONG_MAX, "100", |c| c.memory.stream_node_max_entries as i64, |c, v| c.memory.stream_node_max_entries = v as u64)
.support(Tunes(Feature::Streams)),
];
