//! Batched execution with prefetching.
//!
//! Once per turn the event loop hands over the clients that have parsed commands waiting.
//! Their commands are gathered into batches of at most `prefetch-batch-max-size` commands
//! (each client's in order, clients in arrival order), and for each batch:
//!
//! 1. the key arguments of every command are found from the command table's key specs and
//!    hashed, and the bucket of each key is prefetched in the client's database;
//! 2. for every key, the entries whose secondary hash matches are prefetched (the bucket
//!    lines requested in step 1 have arrived or are arriving by now);
//! 3. for every key, the out-of-line value of its entry (a long string) is prefetched;
//! 4. the commands run, in batch order.
//!
//! The key hashes come with the parsed command ([`Parsed`]): they were computed where it was
//! parsed, on an I/O thread when there are some, so the main thread only issues the loads.
//!
//! Each step issues independent loads for the whole batch, so the cache misses of different
//! keys overlap instead of being paid one after the other inside the handlers. A prefetch
//! that turns out stale (a SELECT or a write earlier in the batch changed things) is only a
//! wasted load: prefetching never reads data the execution relies on.
//!
//! A client whose command is held back by CLIENT PAUSE keeps that command and the ones after
//! it, in order, for a later turn; a client being closed has its remaining commands dropped.

use crate::runtime::dispatch::{self, Flow};
use crate::runtime::io_slots::IoSlots;
use crate::runtime::parsed::Parsed;
use crate::server::obuf;
use crate::server::state::ServerState;
use crate::spec::table::{key_positions, KeyBuf};
use crate::table::hash_key;
use crate::util::clock::now_ms;

/// Commands executed for one client per turn before others get theirs (fairness).
pub const CMDS_PER_TURN_MAX: usize = 1024;

/// Reusable buffers of the batch runner (kept across turns so a turn allocates nothing).
#[derive(Default)]
pub struct Batcher {
    batch: Vec<(usize, Parsed)>,
    hashes: Vec<(usize, u64)>,
    keys: KeyBuf,
    /// Clients stopped in this turn (paused or closing): their later commands wait.
    stopped: Vec<usize>,
    requeue: Vec<(usize, Parsed)>,
}

impl Batcher {
    /// Execute the pending commands of `tokens`' clients. Returns nothing; clients left with
    /// pending commands (fairness cap, pause) are found by the caller from their queues.
    pub fn run(&mut self, srv: &mut ServerState, conns: &mut IoSlots, tokens: &[usize]) {
        let batch_max = srv.config.prefetch_batch_max_size as usize;
        let flush_at = batch_max.max(1);
        self.stopped.clear();
        for &t in tokens {
            if self.stopped.contains(&t) || srv.blocking.is_blocked(t) {
                continue;
            }
            let Some(io) = conns.get_mut(t) else { continue };
            let n = io.pending.len().min(CMDS_PER_TURN_MAX);
            for _ in 0..n {
                if srv.clients.get_mut(t).is_none() {
                    break;
                }
                let Some(cmd) = conns.get_mut(t).and_then(|io| io.pending.pop_front()) else {
                    break;
                };
                self.batch.push((t, cmd));
                if self.batch.len() >= flush_at {
                    self.flush(srv, conns, batch_max > 0);
                    if self.stopped.contains(&t) {
                        break;
                    }
                }
            }
        }
        self.flush(srv, conns, batch_max > 0);
    }

    fn flush(&mut self, srv: &mut ServerState, conns: &mut IoSlots, prefetch: bool) {
        if self.batch.is_empty() {
            return;
        }
        if prefetch {
            self.prefetch(srv);
        }
        let mut batch = std::mem::take(&mut self.batch);
        for (t, cmd) in batch.drain(..) {
            if self.stopped.contains(&t) {
                self.requeue.push((t, cmd));
                continue;
            }
            if !self.execute_one(srv, t, cmd) {
                self.stopped.push(t);
            }
        }
        // Put held-back commands back at the front of their queues, in order.
        for (t, cmd) in self.requeue.drain(..).rev() {
            if let (Some(slot), Some(io)) = (srv.clients.get_mut(t), conns.get_mut(t)) {
                if !slot.client.close_after_reply && !slot.client.close_asap {
                    io.pending.push_front(cmd);
                }
            }
        }
        // Keep the (now empty) vector's allocation for the next batch.
        self.batch = batch;
    }

    /// Run one command; false when the client must not run more commands this turn.
    fn execute_one(&mut self, srv: &mut ServerState, t: usize, cmd: Parsed) -> bool {
        let Some(mut slot) = srv.clients.lend(t) else {
            return false;
        };
        let mut go_on = true;
        let now = now_ms();
        if slot.client.close_after_reply || slot.client.close_asap {
            go_on = false;
        } else {
            let hashed = cmd.hashed();
            let flow =
                dispatch::execute_looked_up(srv, t, &mut slot, cmd.cmd, &cmd.argv, hashed, now);
            if flow == Flow::Paused {
                self.requeue.push((t, cmd));
                go_on = false;
            } else if flow == Flow::Blocked {
                go_on = false;
            }
        }
        // What the command sent its own client (its outbox) follows its reply from here on.
        let slot = srv.clients.put_back(t, slot);
        if go_on && obuf::output_over_limit(&srv.config, &mut slot.client, slot.out.len(), now) {
            let disconnections = &mut srv.stats.client_outbuf_limit_disconnections;
            obuf::close_for_limit(t, &mut slot.client, &mut srv.to_close, disconnections);
            go_on = false;
        } else if slot.client.close_after_reply {
            go_on = false;
        }
        srv.to_write.push(t);
        go_on
    }

    /// Steps 1 to 3 of the module documentation for the current batch.
    fn prefetch(&mut self, srv: &mut ServerState) {
        self.hashes.clear();
        for (t, cmd) in &self.batch {
            let Some(slot) = srv.clients.get_mut(*t) else { continue };
            let db = slot.client.db;
            for &h in cmd.hashes() {
                srv.dbs[db].prefetch_bucket(h);
                self.hashes.push((db, h));
            }
            if cmd.more_keys {
                hash_remaining_keys(srv, db, cmd, &mut self.keys, &mut self.hashes);
            }
        }
        for &(db, h) in &self.hashes {
            srv.dbs[db].prefetch_entries(h);
        }
        for (t, cmd) in &self.batch {
            let Some(slot) = srv.clients.get_mut(*t) else { continue };
            let db = &srv.dbs[slot.client.db];
            for (h, key) in cmd.hashed_keys() {
                db.prefetch_value(h, key);
            }
        }
        srv.stats.prefetch_batches += 1;
        srv.stats.prefetch_keys += self.hashes.len() as u64;
    }
}

/// Keys beyond what parsing hashed (MSET with many pairs): hash and prefetch them here.
fn hash_remaining_keys(
    srv: &ServerState,
    db: usize,
    cmd: &Parsed,
    keys: &mut KeyBuf,
    hashes: &mut Vec<(usize, u64)>,
) {
    let Some(c) = cmd.cmd else { return };
    if !key_positions(c, &cmd.argv, keys) {
        return;
    }
    for i in keys.iter().skip(cmd.hashes().len()) {
        let h = hash_key(&cmd.argv[i as usize]);
        srv.dbs[db].prefetch_bucket(h);
        hashes.push((db, h));
    }
}
