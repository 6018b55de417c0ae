//! The expire index: every entry that has a TTL, for active expiry's random sampling.
//!
//! # Why a dense array and not a second hashtable
//!
//! The index holds non-owning pointers to the same entries the keyspace table owns. A second
//! cache-line hashtable would cost what the keyspace table costs, about 14.8 bytes per key at
//! the benchmark's 632,000 keys (68.9% fill plus child buckets); with the 8 bytes the expire
//! time adds to the entry (40 -> 48 byte class) a TTL would cost about 23 bytes per key,
//! over the 20-byte budget. The index never needs a lookup by key: it needs insert, remove
//! and uniform sampling. So it is a dense array of pointers in fixed chunks:
//!
//! ```text
//!  chunks: [ptr ptr ptr ... ptr] [ptr ptr ... ptr] [ptr ptr . . . .]
//!           chunk 0 (4096)        chunk 1           last chunk, len % 4096 used
//! ```
//!
//! - 8 bytes per key with a TTL (chunks of 4096 pointers: no doubling slack beyond one chunk).
//! - Each entry records its slot (`KeyEntry::expire_slot`, 4 bytes, inside the 48-byte class).
//!   KeyEvent swaps the last pointer into the hole and updates that entry's slot: O(1).
//! - Sampling draws uniform random slots: every key with a TTL is equally likely, and no
//!   empty slot is ever visited, however sparse the keyspace.
//!
//! Invariant (kept by `Db`): slot `i` holds entry `e` if and only if `e.expire_slot() == i`
//! and `e` is alive in its table. Entries are moved only by being replaced, and every
//! replacement goes through [`ExpireIndex::replace`].

use std::ptr::NonNull;

use crate::keyspace::entry::KeyEntry;

const CHUNK: usize = 4096;

#[derive(Default)]
pub struct ExpireIndex {
    chunks: Vec<Box<[Option<NonNull<u8>>; CHUNK]>>,
    len: usize,
}

// SAFETY: the index holds plain addresses of entries owned by the same Db; it is moved
// between threads only together with that Db's table (lazy free), never shared.
unsafe impl Send for ExpireIndex {}

impl ExpireIndex {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn get(&self, i: usize) -> NonNull<u8> {
        self.chunks[i / CHUNK][i % CHUNK].expect("slot below len is set")
    }

    fn set(&mut self, i: usize, p: Option<NonNull<u8>>) {
        self.chunks[i / CHUNK][i % CHUNK] = p;
    }

    /// Add an entry (which has a TTL) and record its slot in it.
    pub fn insert(&mut self, e: &mut KeyEntry) {
        let i = self.len;
        if i / CHUNK == self.chunks.len() {
            self.chunks.push(Box::new([None; CHUNK]));
        }
        self.set(i, Some(e.addr()));
        e.set_expire_slot(i as u32);
        self.len += 1;
    }

    /// Remove the entry at `slot` (the entry is going away or losing its TTL).
    pub fn remove(&mut self, slot: u32) {
        let i = slot as usize;
        assert!(i < self.len, "expire slot out of range");
        let last = self.len - 1;
        if i != last {
            let moved = self.get(last);
            self.set(i, Some(moved));
            // SAFETY: every pointer in the index is a live entry of this Db (invariant), and
            // the Db holds `&mut` to the whole keyspace while calling this, so nothing else
            // reads the moved entry while its slot field is rewritten.
            let mut view = unsafe { KeyEntry::view(moved) };
            view.set_expire_slot(i as u32);
        }
        self.set(last, None);
        self.len = last;
        if self.len.is_multiple_of(CHUNK) && self.chunks.len() > self.len / CHUNK + 1 {
            // Keep one empty chunk of slack so a key flapping at a boundary does not
            // allocate and free a chunk each time.
            self.chunks.pop();
        }
    }

    /// The entry at `slot` was replaced by `e` (a new allocation with the same TTL slot).
    pub fn replace(&mut self, e: &KeyEntry) {
        let i = e.expire_slot() as usize;
        assert!(i < self.len, "expire slot out of range");
        self.set(i, Some(e.addr()));
    }

    /// The entry pointer at a uniformly random slot.
    pub fn random(&self, seed: u64) -> Option<NonNull<u8>> {
        if self.len == 0 {
            return None;
        }
        Some(self.get((seed % self.len as u64) as usize))
    }

    /// The entry pointer at `slot`.
    pub fn at(&self, slot: usize) -> Option<NonNull<u8>> {
        (slot < self.len).then(|| self.get(slot))
    }

    /// Bytes of the chunks (for INFO memory overhead).
    pub fn memory_bytes(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<usize>()
    }

    pub fn clear(&mut self) {
        self.chunks.clear();
        self.len = 0;
    }
}
