//! What each maxmemory-policy means: which keys it may evict and in which order, and the
//! score that orders candidates in the pool (higher = evicted sooner).

use crate::config::MaxmemoryPolicy;
use crate::keyspace::db::{idle_ms, lfu_decayed, KeySet};
use crate::keyspace::entry::KeyEntry;

/// The order a policy evicts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Longest idle first (the 24-bit LRU clock, one-second resolution).
    Lru,
    /// Least frequently used first: the LFU counter after decay.
    Lfu { decay_time_mins: u32 },
    /// Soonest expire time first (volatile-ttl).
    Ttl,
    /// Any key: no pool, one random key per eviction.
    Random,
}

/// An evicting policy: the keys it draws from and its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub from: KeySet,
    pub order: Order,
}

impl Rule {
    /// The rule of `policy`; None for noeviction.
    pub fn of(policy: MaxmemoryPolicy, lfu_decay_time_mins: u32) -> Option<Rule> {
        use MaxmemoryPolicy as P;
        let lfu = Order::Lfu { decay_time_mins: lfu_decay_time_mins };
        let (from, order) = match policy {
            P::Noeviction => return None,
            P::AllkeysLru => (KeySet::All, Order::Lru),
            P::AllkeysLfu => (KeySet::All, lfu),
            P::AllkeysRandom => (KeySet::All, Order::Random),
            P::VolatileLru => (KeySet::Volatile, Order::Lru),
            P::VolatileLfu => (KeySet::Volatile, lfu),
            P::VolatileRandom => (KeySet::Volatile, Order::Random),
            P::VolatileTtl => (KeySet::Volatile, Order::Ttl),
        };
        Some(Rule { from, order })
    }

    /// Whether a stored entry may be evicted under this rule: a volatile policy never touches
    /// a key without a TTL (one that lost it after it was pooled included).
    pub fn admits(self, e: &KeyEntry) -> bool {
        self.from == KeySet::All || e.expire_at().is_some()
    }

    /// The pool score of an entry at `now_ms`: idle milliseconds (LRU), 255 minus the decayed
    /// counter (LFU), or `u64::MAX` minus the expire time (TTL), as Valkey's pool orders them.
    pub fn score(self, e: &KeyEntry, now_ms: i64) -> u64 {
        match self.order {
            Order::Lru => idle_ms(e.lru(), now_ms).max(0) as u64,
            Order::Lfu { decay_time_mins } => {
                255 - u64::from(lfu_decayed(e.lru(), now_ms, decay_time_mins))
            }
            Order::Ttl => {
                let at = e.expire_at().unwrap_or(i64::MAX).max(0) as u64;
                u64::MAX - at
            }
            Order::Random => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::clock::{lru_clock, new_clock, AccessClock};
    use crate::keyspace::entry::NewValue;

    const T0: i64 = 1_700_000_000_000;

    #[test]
    fn every_policy_but_noeviction_has_a_rule() {
        for &p in MaxmemoryPolicy::ALL {
            let rule = Rule::of(p, 1);
            assert_eq!(rule.is_none(), p == MaxmemoryPolicy::Noeviction, "{p}");
            if let Some(r) = rule {
                assert_eq!(r.from == KeySet::Volatile, p.name().starts_with("volatile"), "{p}");
            }
        }
    }

    #[test]
    fn scores_order_candidates_as_the_policy_wants() {
        let old = KeyEntry::new(b"old", NewValue::Int(1), Some(T0 + 5000), lru_clock(T0 - 60_000));
        let new = KeyEntry::new(b"new", NewValue::Int(1), Some(T0 + 9000), lru_clock(T0));
        let lru = Rule::of(MaxmemoryPolicy::AllkeysLru, 1).unwrap();
        assert!(lru.score(&old, T0) > lru.score(&new, T0));
        assert_eq!(lru.score(&old, T0), 60_000);
        let ttl = Rule::of(MaxmemoryPolicy::VolatileTtl, 1).unwrap();
        assert!(ttl.score(&old, T0) > ttl.score(&new, T0), "the sooner expiry goes first");

        let lfu_clock = AccessClock::Lfu { log_factor: 10, decay_time_mins: 1 };
        let rare = KeyEntry::new(b"rare", NewValue::Int(1), None, new_clock(lfu_clock, T0) - 3);
        let hot = KeyEntry::new(b"hot", NewValue::Int(1), None, new_clock(lfu_clock, T0) + 40);
        let lfu = Rule::of(MaxmemoryPolicy::AllkeysLfu, 1).unwrap();
        assert_eq!(lfu.score(&rare, T0), 255 - 2);
        assert_eq!(lfu.score(&hot, T0), 255 - 45);
    }

    #[test]
    fn volatile_rules_admit_only_keys_with_a_ttl() {
        let with = KeyEntry::new(b"a", NewValue::Int(1), Some(T0), 0);
        let without = KeyEntry::new(b"b", NewValue::Int(1), None, 0);
        let volatile = Rule::of(MaxmemoryPolicy::VolatileRandom, 1).unwrap();
        assert!(volatile.admits(&with) && !volatile.admits(&without));
        let all = Rule::of(MaxmemoryPolicy::AllkeysRandom, 1).unwrap();
        assert!(all.admits(&with) && all.admits(&without));
    }
}
