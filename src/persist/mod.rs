//! Persistence: restarting without losing data, and moving data to and from Valkey/Redis.
//!
//! - `rdb`: the RDB format (values, whole files, DUMP payloads; CRC-64, LZF), no I/O policy.
//! - `save`: SAVE, loading at start-up, SHUTDOWN's save; `bgsave`: BGSAVE and save points;
//!   `fork`: the fork children both BGSAVE and the AOF rewrite run in.
//! - `aof`: the append-only file in Valkey's multi-part layout.
//! - `deny`: refusing writes while persistence is failing (MISCONF).
//!
//! Persistence works on a [`Store`]: its own state, the keyspace, the settings, the save
//! counters and the propagation feed, and nothing else of the server. Where the rest of the
//! server must follow (WATCH and tracking after DEBUG RELOAD replaced the dataset, the
//! removal logs after the AOF turned on or off, the exit after SIGTERM's final save), the
//! function returns and its caller does it; the AOF's start-up replay runs commands through
//! a [`Replay`](aof::startup::Replay) that the command layer implements.

pub mod aof;
pub mod bgsave;
pub mod deny;
pub mod fork;
pub mod rdb;
pub mod save;

use std::any::Any;

use crate::config::Config;
use crate::keyspace::db::Db;
use crate::server::events::Dirty;
use crate::server::propagate::Feed;
use crate::server::state::ServerState;

/// Persistence's own state in the server: the AOF and BGSAVE. The server core keeps it in an
/// opaque slot (`ServerState::persist`) that it never reads, so that the core does not depend
/// on this layer above it; [`store`] reaches it.
#[derive(Default)]
pub struct Persistence {
    pub aof: aof::Aof,
    pub bgsave: bgsave::BgSave,
}

/// All that persistence works with, and all it can reach: its own state, the keyspace, the
/// settings, the counters a save resets and the propagation feed the AOF consumes. No
/// client, registry or event: what the rest of the server must do after a load or a
/// shutdown request is returned to the caller, which does it.
pub struct Store<'a> {
    pub persist: &'a mut Persistence,
    pub dbs: &'a mut Vec<Db>,
    pub config: &'a Config,
    pub feed: &'a mut Feed,
    /// Changes since the last save (`save` points, INFO `rdb_changes_since_last_save`).
    pub dirty: &'a mut Dirty,
    /// Unix time of the last successful save (LASTSAVE).
    pub lastsave_s: &'a mut i64,
    /// Replaying the AOF at start-up (see `ServerState::loading`).
    pub loading: &'a mut bool,
    /// The function libraries (saved with the data, installed from a loaded file).
    pub functions: &'a mut crate::scripting::functions::Functions,
    /// The latency monitor, for the spikes of writes, fsyncs, forks and renames.
    pub latency: &'a mut crate::server::latency::LatencyMonitor,
}

impl Store<'_> {
    /// A stopwatch for a latency event (running only while the monitor is on).
    pub fn latency_timer(&self) -> crate::server::latency::Timer {
        crate::server::latency::Timer::start(self.config.latency_monitor_threshold_ms)
    }

    /// Reports a latency event timed with [`Store::latency_timer`].
    pub fn latency_event(&mut self, event: crate::server::latency::Event, latency_ms: u64) {
        self.latency.add_if_needed(self.config.latency_monitor_threshold_ms, event, latency_ms);
    }
}

/// The persistence view of `srv`: the one place that knows where its parts live.
pub fn store(srv: &mut ServerState) -> Store<'_> {
    let ServerState {
        persist,
        dbs,
        config,
        feed,
        dirty,
        lastsave_s,
        loading,
        functions,
        latency,
        ..
    } = srv;
    Store {
        persist: state(persist),
        dbs,
        config,
        feed,
        dirty,
        lastsave_s,
        loading,
        functions,
        latency,
    }
}

/// The persistence state in `slot` (`&mut srv.persist`), installed on first use.
fn state(slot: &mut Box<dyn Any>) -> &mut Persistence {
    if !slot.is::<Persistence>() {
        *slot = Box::new(Persistence::default());
    }
    slot.downcast_mut().expect("installed above")
}

/// The persistence state in `slot`, if it was installed (None: nothing ever ran, so every
/// figure is the default).
pub fn peek(slot: &dyn Any) -> Option<&Persistence> {
    slot.downcast_ref()
}

/// `f` of the persistence state in `slot`, or of the default state when nothing ever ran
/// (what INFO persistence and the metrics endpoint report).
pub fn with_figures<R>(slot: &dyn Any, f: impl FnOnce(&Persistence) -> R) -> R {
    match peek(slot) {
        Some(p) => f(p),
        None => f(&Persistence::default()),
    }
}
