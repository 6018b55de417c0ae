//! `used_memory` (the sum of the per-thread counters, published once per epoch) against
//! jemalloc's own `stats.allocated`, under a mixed allocate / free / grow / shrink load.
//!
//! This runs in its own test binary: the relation only holds when every allocating thread
//! publishes, and the library's unit tests run many unpublished threads in parallel.

use ferrokey::memory::{allocator_stats, publish, size_class, thread_allocated, used_memory};

/// A seeded mix of allocations, frees, grows and shrinks that leaves about 150 MiB live.
fn mixed_load(slots: &mut [Vec<u8>], operations: usize) {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    for _ in 0..operations {
        let slot = next() % slots.len();
        let size = match next() % 100 {
            0..60 => 1 + next() % 256,
            60..90 => 257 + next() % 16_128,
            90..99 => (16 << 10) + next() % (240 << 10),
            _ => (256 << 10) + next() % (3840 << 10),
        };
        match next() % 10 {
            0..5 => slots[slot] = Vec::with_capacity(size),
            5..7 => slots[slot].reserve_exact(size),
            7..9 => slots[slot].shrink_to(size / 2),
            _ => slots[slot] = Vec::new(),
        }
    }
}

#[test]
fn used_memory_is_within_two_percent_of_jemalloc_allocated() {
    let start = thread_allocated();
    let mut slots = vec![Vec::new(); 4096];
    mixed_load(&mut slots, 300_000);
    let live_bytes: usize = slots.iter().map(|b| size_class(b.capacity())).sum::<usize>()
        + size_class(slots.capacity() * std::mem::size_of::<Vec<u8>>());
    assert!(live_bytes >= 100 << 20, "the load left only {live_bytes} bytes live");
    assert_eq!(thread_allocated() - start, live_bytes as isize, "exact size-class accounting");
    publish();
    let used = used_memory();
    let allocated = allocator_stats().allocated;
    assert!(
        used.abs_diff(allocated) <= allocated / 50,
        "used_memory {used} is not within 2% of stats.allocated {allocated}"
    );
}
