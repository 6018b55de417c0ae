//! Persistence: restarting without losing data, and moving data to and from Valkey/Redis.
//!
//! - `rdb`: the RDB format (values, whole files, DUMP payloads; CRC-64, LZF), no I/O policy.
//! - `save`: SAVE, loading at start-up, SHUTDOWN's save; `bgsave`: BGSAVE and save points;
//!   `fork`: the fork children both BGSAVE and the AOF rewrite run in.
//! - `aof`: the append-only file in Valkey's multi-part layout.
//! - `deny`: refusing writes while persistence is failing (MISCONF).

pub mod aof;
pub mod bgsave;
pub mod deny;
pub mod fork;
pub mod rdb;
pub mod save;

use std::any::Any;

/// Persistence's own state in the server: the AOF and BGSAVE. The server core keeps it in an
/// opaque slot (`ServerState::persist`) that it never reads, so that the core does not depend
/// on this layer above it; [`aof_in`] and [`bgsave_in`] reach it (borrowing only that slot, so the
/// rest of the state stays usable alongside), installing a fresh one on first use.
#[derive(Default)]
pub struct Persistence {
    pub aof: aof::Aof,
    pub bgsave: bgsave::BgSave,
}

/// The persistence state in `slot` (`&mut srv.persist`), installed on first use.
pub fn state(slot: &mut Box<dyn Any>) -> &mut Persistence {
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

/// The AOF state in `slot` (`&mut srv.persist`).
pub fn aof_in(slot: &mut Box<dyn Any>) -> &mut aof::Aof {
    &mut state(slot).aof
}

/// The BGSAVE state in `slot` (`&mut srv.persist`).
pub fn bgsave_in(slot: &mut Box<dyn Any>) -> &mut bgsave::BgSave {
    &mut state(slot).bgsave
}
