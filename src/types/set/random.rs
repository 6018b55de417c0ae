//! Random members for SRANDMEMBER and SPOP: picks with repeats, distinct picks, and pops,
//! with Valkey's choice of strategy by the ratio of the count to the set's size, so the work
//! is bounded by the count the client asked for (or by the set's size when the count is
//! close to it).
//!
//! Randomness comes from the caller as a seed ([`Rng`]), so tests are deterministic.

use std::collections::HashSet;
use std::ops::ControlFlow;

use super::{Elem, Member, Repr, SetLimits, SetObj};
use crate::table::Table;
use crate::types::listpack::{Listpack, Pos};
use crate::util::rng::Rng;

/// SPOP keeps the remaining members in a new set once it would pop more than this many times
/// as many members as it leaves (Valkey's `SPOP_MOVE_STRATEGY_MUL`).
const SPOP_MOVE_STRATEGY_MUL: usize = 5;
/// SRANDMEMBER picks distinct members by discarding from a copy of the whole set when the set
/// has fewer than this many times the count (Valkey's `SRANDMEMBER_SUB_STRATEGY_MUL`).
const SRANDMEMBER_SUB_STRATEGY_MUL: usize = 3;
/// A random table member is drawn by rejection. A SCAN cursor below the size of the smaller
/// bucket array names a group of `k` members: one head bucket and its chain, or during a
/// resize that bucket of the smaller array and every bucket of the larger one it maps to.
/// Every member is in exactly one group. A uniformly random group is kept with probability
/// `k / (GROUP_MEMBERS * buckets in the group)`, then a uniformly random member of it is
/// taken, so every member is exactly equally likely as long as no group holds more than
/// that bound. 13 is what a head bucket with one child holds; at the 77% fill where a table
/// grows, a head holds more with probability 0.2% (its group is then always kept and its
/// members are slightly less likely). Expected draws: 13 / (7 * fill), 2.4 at 77% fill,
/// 15 at the 12.5% where a table shrinks.
const GROUP_MEMBERS: usize = 13;
/// Draws before the next non-empty group is kept whatever its size; at the lowest fill, 256
/// draws all fail with probability 3e-8.
const GROUP_DRAWS_MAX: usize = 256;
/// Distinct picks by rejection give up after this many draws per wanted member (never
/// reached in practice: the set has at least 3 times the count) and take members in order.
const REJECTION_DRAWS_PER_PICK: usize = 64;

/// A member taken out of a set.
#[derive(Debug)]
pub enum Popped {
    Int(i64),
    Bytes(Vec<u8>),
    Member(Member),
}

impl Popped {
    pub fn as_elem(&self) -> Elem<'_> {
        match self {
            Popped::Int(v) => Elem::Int(*v),
            Popped::Bytes(b) => Elem::Str(b),
            Popped::Member(m) => Elem::Str(m.bytes()),
        }
    }
}

/// The positions of `k` distinct entries of `lp` chosen uniformly, in listpack order
/// (selection sampling: one pass, each entry taken with probability wanted / left).
fn sample_positions(lp: &Listpack, k: usize, rng: &mut Rng) -> Vec<Pos> {
    let mut out = Vec::with_capacity(k);
    let mut left = lp.len();
    let mut p = lp.first();
    while let Some(pos) = p {
        if out.len() == k {
            break;
        }
        if rng.below(left) < k - out.len() {
            out.push(pos);
        }
        left -= 1;
        p = lp.next(pos);
    }
    out
}

/// Deletes entries at `positions` (ascending); from the last, so the others stay valid.
fn delete_positions(lp: &mut Listpack, positions: &[Pos]) {
    for &p in positions.iter().rev() {
        lp.delete(p);
    }
}

/// Calls `f` on a uniformly random member of a non-empty table (see [`GROUP_MEMBERS`]).
fn with_random_member<R>(table: &Table<Member>, rng: &mut Rng, f: impl FnOnce(&Member) -> R) -> R {
    debug_assert!(!table.is_empty(), "random member of an empty table");
    // Both arrays are powers of two of different sizes, so the smaller is the lowest set
    // bit of the total (the only one when the table is not resizing).
    let heads = table.head_buckets();
    let groups = heads & heads.wrapping_neg();
    let group_bound = GROUP_MEMBERS * (heads / groups);
    let mut draws = 0;
    let (cursor, k) = loop {
        let cursor = rng.below(groups) as u64;
        let mut k = 0;
        table.scan(cursor, |_| k += 1);
        draws += 1;
        if k > 0 && (rng.below(group_bound) < k || draws >= GROUP_DRAWS_MAX) {
            break (cursor, k);
        }
    };
    // The same cursor visits the same members in the same order while the table is shared.
    let mut nth = rng.below(k);
    let mut f = Some(f);
    let mut out = None;
    table.scan(cursor, |m| {
        if nth == 0 {
            out = f.take().map(|f| f(m));
        }
        nth = nth.wrapping_sub(1);
    });
    out.expect("the group has k members")
}

impl SetObj {
    /// Calls `f` on `count` members drawn independently (repeats allowed), until `f` breaks.
    /// The set must not be empty.
    pub fn for_each_random(
        &self,
        count: usize,
        rng: &mut Rng,
        mut f: impl FnMut(Elem<'_>) -> ControlFlow<()>,
    ) {
        assert!(!self.is_empty(), "random members of an empty set");
        match &self.repr {
            Repr::Intset(is) => {
                for _ in 0..count {
                    if f(Elem::Int(is.get(rng.below(is.len())))).is_break() {
                        return;
                    }
                }
            }
            Repr::Listpack(lp) => {
                // Bounded by the listpack's length, which its limits keep small.
                let positions: Vec<Pos> =
                    std::iter::successors(lp.first(), |&p| lp.next(p)).collect();
                for _ in 0..count {
                    if f(lp.get(positions[rng.below(positions.len())])).is_break() {
                        return;
                    }
                }
            }
            Repr::Table(t) => {
                for _ in 0..count {
                    if with_random_member(&t.table, rng, |m| f(Elem::Str(m.bytes()))).is_break() {
                        return;
                    }
                }
            }
        }
    }

    /// Calls `f` on `count` distinct members, `0 < count < len()`, in no particular order.
    /// The work is O(count) for a set much larger than the count, else O(len) (Valkey's
    /// cases 2.5, 3 and 4 of SRANDMEMBER).
    pub fn pick_distinct(&self, count: usize, rng: &mut Rng, mut f: impl FnMut(Elem<'_>)) {
        let len = self.len();
        assert!(count > 0 && count < len, "pick_distinct wants 0 < count < len");
        if let Repr::Listpack(lp) = &self.repr {
            sample_positions(lp, count, rng).into_iter().for_each(|p| f(lp.get(p)));
            return;
        }
        if count.saturating_mul(SRANDMEMBER_SUB_STRATEGY_MUL) > len {
            // Close to the whole set: drop random members from a copy of all of them.
            let mut all: Vec<Elem<'_>> = self.iter().collect();
            while all.len() > count {
                all.swap_remove(rng.below(all.len()));
            }
            all.into_iter().for_each(f);
            return;
        }
        self.pick_by_rejection(count, rng, f);
    }

    /// Draws until `count` distinct members are found (the set has at least 3 times as
    /// many, so about 1.2 draws per member).
    fn pick_by_rejection(&self, count: usize, rng: &mut Rng, mut f: impl FnMut(Elem<'_>)) {
        // Identity of a drawn member: its index (intset) or its allocation's address (table).
        let mut seen: HashSet<usize> = HashSet::with_capacity(count);
        let mut draws_left = count.saturating_mul(REJECTION_DRAWS_PER_PICK);
        match &self.repr {
            Repr::Intset(is) => {
                while seen.len() < count && draws_left > 0 {
                    let i = rng.below(is.len());
                    if seen.insert(i) {
                        f(Elem::Int(is.get(i)));
                    }
                    draws_left -= 1;
                }
                if seen.len() < count {
                    // Only after an absurd run of repeats: complete in order.
                    let rest = (0..is.len()).filter(|i| !seen.contains(i));
                    rest.take(count - seen.len()).for_each(|i| f(Elem::Int(is.get(i))));
                }
            }
            Repr::Table(t) => {
                while seen.len() < count && draws_left > 0 {
                    with_random_member(&t.table, rng, |m| {
                        if seen.insert(m.bytes().as_ptr() as usize) {
                            f(Elem::Str(m.bytes()));
                        }
                    });
                    draws_left -= 1;
                }
                if seen.len() < count {
                    let rest =
                        t.table.iter().filter(|m| !seen.contains(&(m.bytes().as_ptr() as usize)));
                    rest.take(count - seen.len()).for_each(|m| f(Elem::Str(m.bytes())));
                }
            }
            Repr::Listpack(_) => unreachable!("listpacks are sampled in one pass"),
        }
    }

    /// Removes and returns one random member. The set must not be empty.
    pub fn pop_random(&mut self, rng: &mut Rng) -> Popped {
        assert!(!self.is_empty(), "pop from an empty set");
        match &mut self.repr {
            Repr::Intset(is) => {
                let v = is.get(rng.below(is.len()));
                is.remove(v);
                Popped::Int(v)
            }
            Repr::Listpack(lp) => {
                let i = rng.below(lp.len());
                let p = lp.seek(i as i64).expect("index below the length");
                let popped = match lp.get(p) {
                    Elem::Int(v) => Popped::Int(v),
                    Elem::Str(s) => Popped::Bytes(s.to_vec()),
                };
                lp.delete(p);
                popped
            }
            Repr::Table(t) => {
                let key = with_random_member(&t.table, rng, |m| m.bytes().to_vec());
                Popped::Member(t.remove(&key).expect("a member just drawn"))
            }
        }
    }

    /// Removes `count` random members, `0 < count < len()`, calling `f` on each. When few
    /// members would remain, the remaining ones are moved into a new set instead (which may
    /// have a smaller encoding, as in Valkey), so the work is O(count) either way.
    pub fn pop_many(
        &mut self,
        count: usize,
        rng: &mut Rng,
        lim: &SetLimits,
        mut f: impl FnMut(Elem<'_>),
    ) {
        let len = self.len();
        assert!(count > 0 && count < len, "pop_many wants 0 < count < len");
        let remaining = len - count;
        if remaining.saturating_mul(SPOP_MOVE_STRATEGY_MUL) > count {
            match &mut self.repr {
                Repr::Listpack(lp) => {
                    let positions = sample_positions(lp, count, rng);
                    positions.iter().for_each(|&p| f(lp.get(p)));
                    delete_positions(lp, &positions);
                }
                _ => {
                    for _ in 0..count {
                        f(self.pop_random(rng).as_elem());
                    }
                }
            }
            return;
        }
        let kept = self.take_random_into_new_set(remaining, rng, lim);
        let popped = std::mem::replace(self, kept);
        popped.iter().for_each(f);
    }

    /// Moves `n` random members out into a new set (SPOP's case 3): a listpack for members
    /// of a listpack or a table, an intset for members of an intset.
    fn take_random_into_new_set(&mut self, n: usize, rng: &mut Rng, lim: &SetLimits) -> SetObj {
        if let Repr::Listpack(lp) = &mut self.repr {
            let positions = sample_positions(lp, n, rng);
            let mut kept = SetObj::new_listpack();
            for &p in &positions {
                kept.add_elem(lp.get(p), lim);
            }
            delete_positions(lp, &positions);
            return kept;
        }
        let mut kept = match self.repr {
            Repr::Intset(_) => SetObj::new_intset(),
            _ => SetObj::new_listpack(),
        };
        for _ in 0..n {
            kept.add_elem(self.pop_random(rng).as_elem(), lim);
        }
        kept
    }
}
