//! Diskless load (`repl-diskless-load`): the sync thread parses the primary's snapshot
//! straight from the socket into fresh databases, and the main thread swaps them in once the
//! whole snapshot has arrived and checked out. The event loop never blocks on the load: it
//! goes on serving the dataset it has (Valkey's "async loading"), and a load that fails (a
//! dropped link, a corrupt payload, a wrong EOF mark) leaves that dataset as it was, never
//! half of the new one.
//!
//! The modes, as Valkey 9.1 names them:
//! - `disabled` (the default): the snapshot goes to the RDB file, which is then loaded.
//! - `on-empty-db`: diskless when every database is empty, else as `disabled`.
//! - `swapdb`: diskless; the old dataset is served until the new one replaces it, so both
//!   are in memory at the end of the load (the price Valkey documents too).
//! - `flush-before-load`: diskless; the old dataset is dropped as soon as the primary
//!   announces a full sync, so that only one copy is ever in memory, and a failed load
//!   leaves the replica empty.
//!
//! The loading thread's allocations are published as it reads (each MiB), so `used_memory`
//! follows the load; the replaced contents are freed on the lazyfree thread when
//! `replica-lazy-flush` is on.

use std::io::{self, Read};
use std::time::Instant;

use crate::config::ReplDisklessLoad;
use crate::keyspace::db::Db;
use crate::persist::rdb::encoding::{RdbError, RdbReader};
use crate::persist::rdb::file::{load_rdb, LoadStats};
use crate::persist::rdb::value::LoadLimits;
use crate::replication::wire::Wire;
use crate::server::state::ServerState;

/// Bytes read between two publications of the loading thread's allocations.
const PUBLISH_EVERY_BYTES: u64 = 1 << 20;

/// What the sync thread needs for a diskless load, prepared on the main thread.
pub struct Plan {
    /// Empty databases, as many as the server has, with its access clock.
    dbs: Vec<Db>,
    lim: LoadLimits,
    max_len: u64,
    /// Drop the dataset when the full sync is announced (`flush-before-load`).
    pub flush_first: bool,
}

/// A snapshot loaded off the event loop.
pub struct Loaded {
    dbs: Vec<Db>,
    stats: LoadStats,
    started: Instant,
}

/// Whether the next full sync loads diskless under the current configuration and dataset,
/// and with what.
pub fn plan(srv: &ServerState) -> Option<Plan> {
    let flush_first = match srv.config.replication.repl_diskless_load {
        ReplDisklessLoad::Disabled => return None,
        ReplDisklessLoad::OnEmptyDb if srv.dbs.iter().any(|db| !db.is_empty()) => return None,
        ReplDisklessLoad::OnEmptyDb | ReplDisklessLoad::Swapdb => false,
        ReplDisklessLoad::FlushBeforeLoad => true,
    };
    let dbs = srv.dbs.iter().map(Db::empty_like).collect();
    // A replica keeps the keys whose time has passed: its primary sends their DELs.
    let lim = LoadLimits { keep_expired: true, ..LoadLimits::from_config(&srv.config) };
    let max_len = LoadLimits::max_string_len(&srv.config);
    Some(Plan { dbs, lim, max_len, flush_first })
}

/// On the sync thread: reads the snapshot announced by `head` (`$<length>` or
/// `$EOF:<40-byte mark>`) from `w` into the plan's databases. On success `w` holds what
/// followed the snapshot (the stream's first bytes).
pub fn load(w: &mut Wire, head: &str, plan: Plan) -> Result<Loaded, String> {
    let Plan { mut dbs, lim, max_len, .. } = plan;
    let started = Instant::now();
    let now_ms = crate::util::clock::now_ms();
    let failed = |e: RdbError| match e {
        RdbError::Corrupt(why) => {
            format!("Failed trying to load the PRIMARY synchronization DB from socket: {why}")
        }
        RdbError::Io(e) => format!(
            "Failed trying to load the PRIMARY synchronization DB from socket: {}",
            crate::util::strerror(&e)
        ),
    };
    let stats = if let Some(mark) = head.strip_prefix("$EOF:") {
        if mark.len() != 40 {
            return Err(format!("Bad EOF mark from PRIMARY: {head}"));
        }
        tracing::info!("PRIMARY <-> REPLICA sync: Loading DB in memory");
        let stats = {
            let mut r = RdbReader::new(Publishing::new(&mut *w), max_len);
            load_rdb(&mut r, &mut dbs, &lim, now_ms).map_err(failed)?
        };
        // The snapshot ends where the RDB does: the mark must follow it.
        let mut tail = [0u8; 40];
        w.read_exact(&mut tail).map_err(|e| failed(RdbError::Io(e)))?;
        if tail != mark.as_bytes() {
            return Err("Replication stream EOF marker is broken".to_string());
        }
        stats
    } else {
        let len: u64 = head.strip_prefix('$').and_then(|n| n.parse().ok()).ok_or_else(|| {
            format!("Bad protocol from PRIMARY, the first byte is not '$': {head}")
        })?;
        tracing::info!("PRIMARY <-> REPLICA sync: Loading DB in memory ({len} bytes)");
        let mut limited = Publishing::new(&mut *w).take(len);
        let stats = {
            let mut r = RdbReader::new(&mut limited, max_len);
            load_rdb(&mut r, &mut dbs, &lim, now_ms).map_err(failed)?
        };
        if limited.limit() != 0 {
            return Err(format!("{} bytes after the end of the snapshot", limited.limit()));
        }
        stats
    };
    crate::memory::publish();
    Ok(Loaded { dbs, stats, started })
}

/// On the main thread, when the full sync is announced under `flush-before-load`: the
/// dataset goes now.
pub fn flush_before_load(srv: &mut ServerState) {
    tracing::info!("PRIMARY <-> REPLICA sync: Flushing old data");
    let lazy = srv.config.replication.replica_lazy_flush;
    srv.db_modified(None);
    for db in srv.dbs.iter_mut() {
        db.flush(lazy);
    }
}

/// On the main thread: the loaded databases replace the dataset; the old contents are
/// freed (lazily under `replica-lazy-flush`).
pub fn install(srv: &mut ServerState, mut loaded: Loaded) {
    srv.db_modified(None);
    let lazy = srv.config.replication.replica_lazy_flush;
    for (db, new) in srv.dbs.iter_mut().zip(loaded.dbs.iter_mut()) {
        Db::swap_contents(db, new);
        new.flush(lazy);
    }
    let store = &mut crate::persist::store(srv);
    if let Err(e) = crate::persist::save::install_functions(store, &loaded.stats) {
        tracing::warn!("{e}");
    }
    crate::persist::save::log_loaded(store, &loaded.stats, loaded.started, "the primary's socket");
}

/// A reader that publishes the thread's allocations every [`PUBLISH_EVERY_BYTES`] read.
struct Publishing<R> {
    inner: R,
    unpublished: u64,
}

impl<R: Read> Publishing<R> {
    fn new(inner: R) -> Publishing<R> {
        Publishing { inner, unpublished: 0 }
    }
}

impl<R: Read> Read for Publishing<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        self.unpublished += n as u64;
        if self.unpublished >= PUBLISH_EVERY_BYTES {
            self.unpublished = 0;
            crate::memory::publish();
        }
        Ok(n)
    }
}
