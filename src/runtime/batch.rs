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
//!
//! While a batch runs, the event loop's `Net` is lent to `runtime::busy`, so that a script
//! running past `busy-reply-threshold` can serve the other clients.

use crate::runtime::dispatch::{self, Flow};
use crate::runtime::event_loop::Net;
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

/// What became of a command given to [`execute_one`].
pub enum Ran {
    /// The client may run its next command.
    Next,
    /// The client must run nothing more this turn (it blocked, or is closing).
    Stop,
    /// Held back by CLIENT PAUSE: the command goes back to the front of its client's queue.
    Held(Parsed),
}

impl Batcher {
    /// Execute the pending commands of `tokens`' clients. Returns nothing; clients left with
    /// pending commands (fairness cap, pause) are found by the caller from their queues.
    pub(crate) fn run(&mut self, srv: &mut ServerState, net: &mut Net, tokens: &[usize]) {
        let batch_max = srv.config.prefetch_batch_max_size as usize;
        let flush_at = batch_max.max(1);
        self.stopped.clear();
        for &t in tokens {
            if self.stopped.contains(&t) || srv.blocking.is_blocked(t) {
                continue;
            }
            let Some(io) = net.conns.get_mut(t) else { continue };
            let n = io.pending.len().min(CMDS_PER_TURN_MAX);
            for _ in 0..n {
                if srv.clients.get_mut(t).is_none() {
                    break;
                }
                let Some(cmd) = net.conns.get_mut(t).and_then(|io| io.pending.pop_front()) else {
                    break;
                };
                self.batch.push((t, cmd));
                if self.batch.len() >= flush_at {
                    self.flush(srv, net, batch_max > 0);
                    if self.stopped.contains(&t) {
                        break;
                    }
                }
            }
        }
        self.flush(srv, net, batch_max > 0);
    }

    /// Runs the batch. Meanwhile the event loop's `Net` is lent to `runtime::busy` (a
    /// script that runs long serves other clients through it), with the batch's clients
    /// listed in `in_flight`: they are left alone until their commands have run.
    fn flush(&mut self, srv: &mut ServerState, net: &mut Net, prefetch: bool) {
        if self.batch.is_empty() {
            return;
        }
        if prefetch {
            self.prefetch(srv);
        }
        net.in_flight.extend(self.batch.iter().map(|(t, _)| *t));
        let mut batch = std::mem::take(&mut self.batch);
        {
            let _lent = crate::runtime::busy::Lent::new(net);
            for (t, cmd) in batch.drain(..) {
                if self.stopped.contains(&t) {
                    self.requeue.push((t, cmd));
                    continue;
                }
                match execute_one(srv, t, cmd) {
                    Ran::Next => {}
                    Ran::Stop => self.stopped.push(t),
                    Ran::Held(cmd) => {
                        self.requeue.push((t, cmd));
                        self.stopped.push(t);
                    }
                }
            }
        }
        net.in_flight.clear();
        // Put held-back commands back at the front of their queues, in order.
        for (t, cmd) in self.requeue.drain(..).rev() {
            if let (Some(slot), Some(io)) = (srv.clients.get_mut(t), net.conns.get_mut(t)) {
                if !slot.client.close_after_reply && !slot.client.close_asap {
                    io.pending.push_front(cmd);
                }
            }
        }
        // Keep the (now empty) vector's allocation for the next batch.
        self.batch = batch;
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

/// Runs one command of the client `t`, then holds it to its output limit and queues its
/// reply for writing.
#[inline(always)]
pub fn execute_one(srv: &mut ServerState, t: usize, cmd: Parsed) -> Ran {
    let Some(mut slot) = srv.clients.lend(t) else {
        return Ran::Stop;
    };
    let mut ran = Ran::Next;
    let now = now_ms();
    if slot.client.close_after_reply || slot.client.close_asap {
        ran = Ran::Stop;
    } else {
        let hashed = cmd.hashed();
        let flow = dispatch::execute_looked_up(srv, t, &mut slot, cmd.cmd, &cmd.argv, hashed, now);
        if flow == Flow::Paused {
            ran = Ran::Held(cmd);
        } else if flow == Flow::Blocked {
            ran = Ran::Stop;
        }
    }
    // What the command sent its own client (its outbox) follows its reply from here on.
    let slot = srv.clients.put_back(t, slot);
    if matches!(ran, Ran::Next) {
        if obuf::output_over_limit(&srv.config, &mut slot.client, slot.out.len(), now) {
            let disconnections = &mut srv.stats.client_outbuf_limit_disconnections;
            obuf::close_for_limit(t, &mut slot.client, &mut srv.to_close, disconnections);
            ran = Ran::Stop;
        } else if slot.client.close_after_reply {
            ran = Ran::Stop;
        }
    }
    srv.to_write.push(t);
    ran
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
