//! Field expire times of a hash: reading and writing them, the views that hide expired
//! fields, and the bounded reclaim step of active expiry. Only the `hashtable` encoding has
//! volatile fields (see the parent module); a listpack answers "no TTL" for every field.

use super::entry::HashEntry;
use super::volatile::field_expired;
use super::{live, Big, HashObj, Pair, Repr};
use crate::table::hash_key;
use crate::types::listpack::LpEntry;

/// What a write does to the TTL of the field it sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtlWrite {
    /// No TTL after the write (HSET, HMSET, HSETEX without a time).
    Clear,
    /// The TTL the field had, if it was alive (HINCRBY, HSETEX KEEPTTL).
    Keep,
    /// Expire at this unix time in ms (HSETEX EX/PX/EXAT/PXAT).
    At(i64),
}

/// A field's expire time as the TTL commands see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldTtl {
    /// No such field, or it has expired (reply -2).
    Missing,
    /// A field without a TTL (reply -1).
    Persistent,
    /// A field that expires at this unix time in ms.
    At(i64),
}

/// HSET-like write of a table hash (see [`HashObj::set_with`]).
pub(super) fn table_set(
    big: &mut Big,
    field: &[u8],
    value: &[u8],
    ttl: TtlWrite,
    now_ms: i64,
) -> bool {
    let current = big.get(field).map(|e| (live(e, now_ms), e.expire_at()));
    let expire_at = match ttl {
        TtlWrite::Clear => None,
        TtlWrite::At(at) => Some(at),
        TtlWrite::Keep => current.and_then(|(alive, at)| at.filter(|_| alive)),
    };
    big.replace(HashEntry::new_expiring(field, value, expire_at));
    !current.is_some_and(|(alive, _)| alive)
}

impl HashObj {
    /// The expire time of `field` at `now_ms`.
    pub fn field_ttl(&self, field: &[u8], now_ms: i64) -> FieldTtl {
        match &self.repr {
            Repr::Listpack(_) if self.contains(field, now_ms) => FieldTtl::Persistent,
            Repr::Listpack(_) => FieldTtl::Missing,
            Repr::Table(big) => match big.get(field) {
                Some(e) if live(e, now_ms) => {
                    e.expire_at().map_or(FieldTtl::Persistent, FieldTtl::At)
                }
                _ => FieldTtl::Missing,
            },
        }
    }

    /// Sets (Some) or removes (None) the expire time of `field`, which the caller found
    /// alive; converts a listpack to a hashtable to give it one. False when the field is
    /// not there.
    pub fn set_field_expire(&mut self, field: &[u8], at_ms: Option<i64>) -> bool {
        if at_ms.is_some() {
            self.convert();
        }
        let Repr::Table(big) = &mut self.repr else {
            // A listpack field has no TTL: removing it changes nothing.
            return self.contains(field, i64::MIN);
        };
        let h = hash_key(field);
        let Some(e) = big.table.find_mut(h, field) else { return false };
        match (e.expire_at(), at_ms) {
            (Some(_), Some(at)) => {
                e.set_expire_in_place(at);
                big.vol.lowered_to(at);
            }
            (None, None) => {}
            (_, at) => {
                let rebuilt = e.with_expire(at);
                big.replace(rebuilt);
            }
        }
        true
    }

    /// Whether any stored field has a TTL.
    pub fn has_volatile(&self) -> bool {
        self.volatile_count() > 0
    }

    /// The mark the owner of the hash keeps in it: whether it counts the hash among its keys
    /// with volatile items (see `volatile.rs`). A listpack has no volatile field, and no mark.
    pub fn volatile_mark(&self) -> bool {
        matches!(&self.repr, Repr::Table(big) if big.vol.marked)
    }

    /// Sets the owner's mark (see [`HashObj::volatile_mark`]); only a hashtable keeps one.
    pub fn set_volatile_mark(&mut self, marked: bool) {
        match &mut self.repr {
            Repr::Table(big) => big.vol.marked = marked,
            Repr::Listpack(_) => debug_assert!(!marked, "a listpack has no volatile field"),
        }
    }

    /// Stored fields with a TTL, expired ones included.
    pub fn volatile_count(&self) -> usize {
        match &self.repr {
            Repr::Listpack(_) => 0,
            Repr::Table(big) => big.vol.count,
        }
    }

    /// No field expires before this time (a lower bound); None without volatile fields.
    pub fn next_expire_bound(&self) -> Option<i64> {
        match &self.repr {
            Repr::Table(big) if big.vol.count > 0 => Some(big.vol.next_at_ms),
            _ => None,
        }
    }

    /// Whether some field may be expired at `now_ms` (cheap: one comparison).
    pub fn may_have_expired(&self, now_ms: i64) -> bool {
        match &self.repr {
            Repr::Listpack(_) => false,
            Repr::Table(big) => big.vol.may_have_expired(now_ms),
        }
    }

    /// Whether a reclaim sweep is under way (it stopped at its bucket limit).
    pub fn sweeping(&self) -> bool {
        matches!(&self.repr, Repr::Table(big) if big.vol.cursor != 0)
    }

    /// Fields alive at `now_ms` (O(1) unless some field may have expired).
    pub fn live_len(&self, now_ms: i64) -> usize {
        use crate::types::agg::AggType;
        if !self.may_have_expired(now_ms) {
            return self.len();
        }
        self.iter_live(now_ms).count()
    }

    /// Every field alive at `now_ms` with its value.
    pub fn iter_live(&self, now_ms: i64) -> impl Iterator<Item = Pair<'_>> {
        let check = self.may_have_expired(now_ms);
        self.iter_with_expire()
            .filter(move |(_, at)| !check || at.is_none_or(|at| !field_expired(at, now_ms)))
            .map(|(pair, _)| pair)
    }

    /// Every stored field with its value and expire time, expired ones included (RDB, DUMP,
    /// AOF rewrite write them with their times; the loader decides).
    pub fn iter_with_expire(&self) -> impl Iterator<Item = (Pair<'_>, Option<i64>)> {
        let (lp, table) = match &self.repr {
            Repr::Listpack(_) => (Some(self.iter()), None),
            Repr::Table(big) => (None, Some(big.table.iter())),
        };
        lp.into_iter().flatten().map(|pair| (pair, None)).chain(
            table
                .into_iter()
                .flatten()
                .map(|e| ((LpEntry::Str(e.field()), e.value()), e.expire_at())),
        )
    }

    /// A copy without the fields expired at `now_ms`, when some are (COPY, HRANDFIELD's
    /// sampling); None when every stored field is alive.
    pub fn without_expired(&self, now_ms: i64) -> Option<HashObj> {
        let Repr::Table(big) = &self.repr else { return None };
        if !big.vol.may_have_expired(now_ms) || self.live_len(now_ms) == big.table.len() {
            return None;
        }
        let mut copy = big.as_ref().clone();
        let dead: Vec<Vec<u8>> =
            big.table.iter().filter(|e| !live(e, now_ms)).map(|e| e.field().to_vec()).collect();
        for f in dead {
            copy.remove(&f);
        }
        Some(HashObj { repr: Repr::Table(Box::new(copy)) })
    }

    /// One bounded step of active expiry on this hash: visits up to `buckets_max` buckets
    /// from where the last step stopped, removes the fields expired at `now_ms` and pushes
    /// their names to `out`. Returns the buckets visited (0 when nothing may have expired).
    /// The hash may be left empty; the caller deletes it then.
    pub fn reclaim(&mut self, now_ms: i64, buckets_max: usize, out: &mut Vec<Vec<u8>>) -> usize {
        let Repr::Table(big) = &mut self.repr else { return 0 };
        if !big.vol.may_have_expired(now_ms) && big.vol.cursor == 0 {
            return 0;
        }
        let mut visited = 0;
        let mut dead = Vec::new();
        let mut least = i64::MAX;
        let mut cursor = big.vol.cursor;
        while visited < buckets_max.max(1) {
            cursor = big.table.scan(cursor, |e| match e.expire_at() {
                Some(at) if field_expired(at, now_ms) => dead.push(e.field().to_vec()),
                Some(at) => least = least.min(at),
                None => {}
            });
            visited += 1;
            if cursor == 0 {
                break;
            }
        }
        for f in &dead {
            big.remove(f);
        }
        big.vol.pass_min_ms = big.vol.pass_min_ms.min(least);
        big.vol.cursor = cursor;
        if cursor == 0 {
            big.vol.sweep_done();
        }
        out.extend(dead);
        visited
    }
}
