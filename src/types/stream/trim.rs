//! Trimming a stream from its old end (XTRIM, and XADD's MAXLEN/MINID), with exactly the
//! semantics of Valkey's `streamTrim`, because its result is visible (XLEN, replies, the
//! rewritten argument that is propagated) and ends up in RDB files:
//!
//! - Nodes are visited from the first. A node goes as a whole when that is enough: for
//!   MAXLEN when the stream keeps at least `n` live entries without it, for MINID when its
//!   last entry (tombstones included) is below the id. Whole nodes are freed, not marked.
//! - Approximate (`~`) trimming stops at the first node that cannot go as a whole.
//! - Exact trimming then marks entries of that one node deleted, from its first, until the
//!   stream is down to `n` entries or an entry's id reaches the MINID; the node's counters
//!   are updated and nothing moves. (A MINID trim can leave a node whose live entries are
//!   all gone but whose trailing tombstones are not below the id; Valkey keeps such a node,
//!   and so does this.)
//! - `limit` (0: none) caps the entries removed, counted a node at a time: the walk stops
//!   before a node whose live count would take the total past the limit, even in exact mode.
//!   XADD/XTRIM pass LIMIT when given, else `100 * stream-node-max-entries` for `~`
//!   ([`NodeLimits::approx_trim_limit`]) and 0 for exact trims (Valkey accepts LIMIT only
//!   with `~`).
//!
//! After removing anything, `first_id` becomes the first live entry (0-0 if none is left).
//! `max_deleted_entry_id` is not changed: Valkey's trim never touches it (only XDEL and
//! XSETID do), which consumer-group lag computations depend on.
//!
//! [`NodeLimits::approx_trim_limit`]: super::NodeLimits::approx_trim_limit

use super::id::StreamId;
use super::node::{self, Head, Master};
use super::Stream;

/// What a trim keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimStrategy {
    /// At most this many live entries (the newest).
    MaxLen(u64),
    /// No live entry with an id below this one.
    MinId(StreamId),
}

/// A trim request (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrimSpec {
    pub strategy: TrimStrategy,
    /// `~`: remove whole nodes only.
    pub approx: bool,
    /// The most entries to remove, 0 for no limit (the effective limit: the caller turns
    /// "`~` without LIMIT" into `100 * stream-node-max-entries`).
    pub limit: u64,
}

impl Stream {
    /// Trim as `spec` says (module documentation); returns the number of entries removed.
    pub fn trim(&mut self, spec: TrimSpec) -> u64 {
        let mut removed = 0u64;
        while let Some((_, lp)) = self.nodes.front() {
            if let TrimStrategy::MaxLen(n) = spec.strategy {
                if self.length <= n {
                    break;
                }
            }
            let count = Master::read(lp).count;
            if spec.limit != 0 && removed + count > spec.limit {
                break;
            }
            // The whole node goes if the stream keeps enough without it, or if its last
            // entry, tombstones included, is below the MINID.
            let whole = match spec.strategy {
                TrimStrategy::MaxLen(n) => self.length - count >= n,
                TrimStrategy::MinId(min) => self.node_tail_id(0) < min,
            };
            if whole {
                self.remove_node(0);
                self.length -= count;
                removed += count;
                continue;
            }
            if !spec.approx {
                removed += self.mark_front(spec.strategy);
            }
            break;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if removed > 0 {
            self.first_id = self.first_live_id().expect("a stream with entries has a first one");
        }
        removed
    }

    /// The exact part of a trim: mark entries of the first node deleted from its start
    /// until `strategy` is met; returns how many live entries were marked.
    fn mark_front(&mut self, strategy: TrimStrategy) -> u64 {
        let (key, lp) = self.nodes.front_mut().expect("trim of a stream without nodes");
        let master = Master::read(lp);
        let mut marked = 0u64;
        let mut at = master.first_entry(lp);
        while let Some(p) = at {
            let head = Head::read(lp, *key, &master, p);
            let done = match strategy {
                TrimStrategy::MaxLen(n) => self.length - marked <= n,
                TrimStrategy::MinId(min) => head.id >= min,
            };
            if done {
                break;
            }
            if !head.is_deleted() {
                node::mark_deleted(lp, p);
                marked += 1;
            }
            // Read again after the edit: the flags' width never changes for flags this
            // code writes, but a loaded node may spell them oddly.
            at = Head::read(lp, *key, &master, p).next(lp);
        }
        if marked > 0 {
            node::set_counts(lp, master.count - marked, master.deleted + marked);
        }
        self.length -= marked;
        marked
    }
}
