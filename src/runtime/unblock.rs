//! Serving blocked clients: re-running their commands when a key they wait on is ready (the
//! bookkeeping is in `server::blocking`; timeouts in `server::unblock`).
//!
//! After every command, if it signaled keys, [`serve_ready`] walks each ready key's waiters in
//! arrival order. A waiter is re-run only while the key holds a value of the type its command
//! pops from (a list for BLPOP and friends, a sorted set for BZPOPMIN and friends), so a key
//! emptied by the first waiter leaves the others blocked in their places. A served client may
//! have pipelined commands queued behind the blocking one: it is listed in
//! `ServerState::unblocked` for the event loop to run them.

use bytes::Bytes;

use crate::runtime::dispatch::{self, Flow};
use crate::server::blocking::Blocked;
use crate::server::state::ServerState;
use crate::types::agg::Kind;

/// The aggregate kind a blocking command reads from.
fn wanted_kind(argv: &[Bytes]) -> Kind {
    if argv[0].len() >= 2 && argv[0][..2].eq_ignore_ascii_case(b"bz") {
        Kind::ZSet
    } else if argv[0].first().is_some_and(|c| c.eq_ignore_ascii_case(&b'x')) {
        Kind::Stream
    } else {
        Kind::List
    }
}

/// Whether the blocked command should run again now that `key` of `db` was signaled: the
/// key holds a value of the type it reads; for XREADGROUP, whatever happened to the key (a
/// deleted or replaced stream, or a destroyed group, is answered with an error, as Valkey
/// does).
fn can_serve(srv: &mut ServerState, db: usize, key: &[u8], b: &Blocked, now_ms: i64) -> bool {
    if b.argv[0].eq_ignore_ascii_case(b"xreadgroup") {
        return true;
    }
    let kind = wanted_kind(&b.argv);
    srv.dbs[db].object(key, now_ms).and_then(|e| e.agg()).is_some_and(|a| a.kind() == kind)
}

/// Re-runs the commands of clients blocked on keys signaled ready, until no key is ready.
pub fn serve_ready(srv: &mut ServerState, now_ms: i64) {
    // Each pass serves what the previous one signaled (a BLMOVE pushes to its target); the
    // number of passes is bounded by the number of blocked clients, which only shrinks.
    while srv.blocking.has_ready() {
        for (db, key) in srv.blocking.take_ready() {
            for t in srv.blocking.waiters(db, &key) {
                let Some(b) = srv.blocking.get(t) else { continue };
                // Each waiter is asked (a stream serves every XREAD waiting after an older
                // id, whatever the first one waits for).
                if b.db != db || !can_serve(srv, db, &key, &b.clone(), now_ms) {
                    continue;
                }
                let b = srv.blocking.unblock(t).expect("waiter is blocked");
                run_again(srv, t, &b, now_ms);
            }
        }
    }
}

fn run_again(srv: &mut ServerState, t: usize, b: &Blocked, now_ms: i64) {
    let Some(mut slot) = srv.clients.lend(t) else { return };
    slot.client.unblocking = true;
    slot.client.blocked = false;
    // The entry found when it first ran (a blocking command has no subcommands).
    let top: &'static crate::commands::Command =
        b.entry.downcast_ref().expect("blocked from this table");
    let hashed = crate::keyspace::db::HashedKeys::default();
    let flow = dispatch::execute_looked_up(srv, t, &mut slot, Some(top), &b.argv, hashed, now_ms);
    slot.client.unblocking = false;
    srv.clients.put_back(t, slot);
    srv.to_write.push(t);
    if flow == Flow::Blocked {
        // Blocked again (it found nothing after all): it keeps its original deadline.
        srv.blocking.set_timeout(t, b.timeout_at_ms);
    } else {
        srv.unblocked.push(t);
    }
}
