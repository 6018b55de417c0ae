//! The eviction pool: the best eviction candidates seen so far, across calls and databases.
//!
//! Sampling five keys and evicting the best of them approximates LRU poorly; keeping the best
//! candidates of every sample in a small sorted pool, and evicting the best of the pool,
//! approximates it well (Valkey's `evictionPoolPopulate`). The pool outlives a call, so a good
//! candidate found now is still there for the next eviction.
//!
//! ```text
//!   entries (ascending score):  [ c0 | c1 | ... | c14 | c15 ]
//!                                  ^ worst              ^ best: evicted first
//! ```
//!
//! A candidate holds a copy of its key, not a pointer to its entry: entries move and die
//! between calls, so a candidate is only a name to look up again, and one that is gone (a
//! "ghost") is skipped. Key buffers are recycled, so a full pool allocates nothing.

/// Candidates the pool keeps (Valkey's `EVPOOL_SIZE`).
pub const POOL_SIZE: usize = 16;

/// One candidate: its score (higher evicts sooner), its database and its key.
#[derive(Debug)]
struct Candidate {
    score: u64,
    db: usize,
    key: Vec<u8>,
}

/// What [`EvictionPool::pop_best`] hands back besides the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Popped {
    pub score: u64,
    pub db: usize,
}

#[derive(Debug, Default)]
pub struct EvictionPool {
    /// At most `POOL_SIZE`, ascending by score; equal scores keep their arrival order, the
    /// newest to the left (it is evicted after the older ones).
    entries: Vec<Candidate>,
    /// Key buffers of candidates that left, for the next ones.
    spare: Vec<Vec<u8>>,
}

impl EvictionPool {
    pub const fn new() -> EvictionPool {
        EvictionPool { entries: Vec::new(), spare: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Offer a sampled key. A key already pooled (same db) takes the new score. When the pool
    /// is full, a candidate no better than the worst is dropped; a better one pushes the worst
    /// out.
    pub fn offer(&mut self, score: u64, db: usize, key: &[u8]) {
        if let Some(i) = self.entries.iter().position(|c| c.db == db && c.key == key) {
            let old = self.entries.remove(i);
            self.spare.push(old.key);
        }
        if self.entries.len() == POOL_SIZE {
            if score <= self.entries[0].score {
                return;
            }
            let worst = self.entries.remove(0);
            self.spare.push(worst.key);
        }
        if self.entries.capacity() == 0 {
            // Every key buffer is in `entries`, in `spare`, or (one) being moved between
            // them: sized once, neither vector grows again.
            self.entries.reserve_exact(POOL_SIZE);
            self.spare.reserve_exact(POOL_SIZE + 1);
        }
        let at = self.entries.iter().position(|c| c.score >= score).unwrap_or(self.entries.len());
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(key);
        self.entries.insert(at, Candidate { score, db, key: buf });
        debug_assert!(self.entries.len() <= POOL_SIZE);
    }

    /// Take the best candidate out: its key is copied into `key` (replacing what it held).
    pub fn pop_best(&mut self, key: &mut Vec<u8>) -> Option<Popped> {
        self.pop_best_in(None, key)
    }

    /// [`EvictionPool::pop_best`] among the candidates of database `db` only, when given.
    pub fn pop_best_in(&mut self, db: Option<usize>, key: &mut Vec<u8>) -> Option<Popped> {
        let at = self.entries.iter().rposition(|c| db.is_none_or(|db| c.db == db))?;
        let best = self.entries.remove(at);
        key.clear();
        key.extend_from_slice(&best.key);
        let popped = Popped { score: best.score, db: best.db };
        self.spare.push(best.key);
        Some(popped)
    }

    /// Forget every candidate (the policy changed: the scores mean something else now).
    pub fn clear(&mut self) {
        let entries = std::mem::take(&mut self.entries);
        self.spare.extend(entries.into_iter().map(|c| c.key));
    }

    #[cfg(test)]
    fn scores(&self) -> Vec<u64> {
        self.entries.iter().map(|c| c.score).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pop(pool: &mut EvictionPool) -> Option<(u64, usize, Vec<u8>)> {
        let mut key = Vec::new();
        pool.pop_best(&mut key).map(|p| (p.score, p.db, key))
    }

    #[test]
    fn best_comes_out_first_and_the_worst_is_pushed_out() {
        let mut pool = EvictionPool::new();
        for i in 0..40u64 {
            // Scores 0, 7, 14, ... in a scrambled order.
            let score = (i * 17 % 40) * 7;
            pool.offer(score, 0, format!("k{score}").as_bytes());
        }
        assert_eq!(pool.len(), POOL_SIZE);
        let scores = pool.scores();
        assert!(scores.windows(2).all(|w| w[0] <= w[1]), "{scores:?}");
        assert_eq!(scores[0], 24 * 7, "the 16 best of 0..40 are 24..40");
        assert_eq!(pop(&mut pool), Some((39 * 7, 0, b"k273".to_vec())));
        // Room for one more, however bad.
        pool.offer(0, 1, b"x");
        assert_eq!((pool.len(), pool.scores()[0]), (POOL_SIZE, 0));
        // Full: no better than the worst is refused, better pushes the worst out.
        pool.offer(0, 1, b"z");
        assert_eq!(pool.scores()[..2], [0, 24 * 7]);
        pool.offer(1, 1, b"y");
        assert_eq!(pool.scores()[..2], [1, 24 * 7], "x was pushed out by y");
        assert_eq!(pool.len(), POOL_SIZE);
    }

    #[test]
    fn a_key_offered_again_keeps_one_place_with_its_new_score() {
        let mut pool = EvictionPool::new();
        pool.offer(10, 0, b"a");
        pool.offer(20, 0, b"b");
        pool.offer(30, 1, b"a");
        pool.offer(5, 0, b"b");
        assert_eq!(pool.len(), 3);
        assert_eq!(pop(&mut pool), Some((30, 1, b"a".to_vec())));
        assert_eq!(pop(&mut pool), Some((10, 0, b"a".to_vec())));
        assert_eq!(pop(&mut pool), Some((5, 0, b"b".to_vec())));
        assert_eq!(pop(&mut pool), None);
    }

    #[test]
    fn the_best_of_one_database_can_be_taken() {
        let mut pool = EvictionPool::new();
        pool.offer(10, 0, b"a");
        pool.offer(20, 1, b"b");
        pool.offer(30, 0, b"c");
        pool.offer(40, 1, b"d");
        let mut key = Vec::new();
        assert_eq!(pool.pop_best_in(Some(0), &mut key), Some(Popped { score: 30, db: 0 }));
        assert_eq!(key, b"c");
        assert_eq!(pool.pop_best_in(Some(2), &mut key), None);
        assert_eq!(pop(&mut pool), Some((40, 1, b"d".to_vec())));
        assert_eq!(pool.len(), 2);
    }

    #[test]
    fn equal_scores_leave_in_arrival_order() {
        let mut pool = EvictionPool::new();
        pool.offer(7, 0, b"first");
        pool.offer(7, 0, b"second");
        assert_eq!(pop(&mut pool).map(|c| c.2), Some(b"first".to_vec()));
        assert_eq!(pop(&mut pool).map(|c| c.2), Some(b"second".to_vec()));
    }

    #[test]
    fn a_full_pool_recycles_its_key_buffers() {
        let mut pool = EvictionPool::new();
        for i in 0..POOL_SIZE as u64 {
            pool.offer(i, 0, &[b'k'; 100]);
            pool.offer(i, 0, format!("k{i}").as_bytes());
        }
        // Buffers grow to the longest key they held, once; then they are only reused.
        for i in POOL_SIZE as u64..100 {
            pool.offer(i, 0, format!("key {i:04}").as_bytes());
        }
        let mut key = Vec::with_capacity(64);
        let before = crate::memory::thread_allocated();
        for i in 100..1000 {
            pool.offer(i, 0, format!("key {i:04}").as_bytes());
        }
        assert_eq!(crate::memory::thread_allocated(), before, "offers into a full pool");
        pool.pop_best(&mut key);
        assert_eq!(crate::memory::thread_allocated(), before, "a pop");
        pool.clear();
        assert!(pool.is_empty());
    }
}
