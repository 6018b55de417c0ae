//! Memory accounting and the memory budget: the crate's global allocator, the `used_memory`
//! figure that INFO, MEMORY and maxmemory enforcement read, the jemalloc statistics behind
//! MEMORY STATS / MALLOC-STATS / PURGE.
//!
//! This module must not know about keys, commands or the event loop: the loops call
//! [`publish`] at their epoch boundaries, that is all. Eviction, where the budget meets the
//! keyspace and the client table, lives above them in `server::evict`.
//!
//! # Counting without atomics, and without counting
//!
//! A server allocates on every command, from several threads, so an atomic add per
//! allocation would put one contended cache line on every thread's hot path. The design keeps
//! a plain per-thread count of the bytes a thread allocated minus the bytes it freed. jemalloc
//! already keeps exactly that: every allocation and free adds the size class to one of two
//! `u64`s in the thread's jemalloc data (`thread.allocatedp` / `thread.deallocatedp`), plain
//! thread-local adds on its fast path that it does whether we read them or not. So the global
//! allocator ([`AlignedJemalloc`]) counts nothing; [`thread_allocated`] reads the two counters
//! through pointers looked up once per thread (`allocated - deallocated`).
//!
//! Memory allocated by thread A and freed by thread B leaves A's count positive and B's
//! negative; only the sum means anything, and the sum is right. jemalloc's counts also cover
//! what C code in the process allocates with `malloc` (jemalloc replaces it), which the old
//! wrapper-side counter missed, and not jemalloc's own metadata (its `stats.metadata`).
//!
//! The cost, measured by `benches/alloc.rs` (wrapper against `tikv_jemallocator::Jemalloc`,
//! both calling the same jemalloc): within noise of zero on alloc+free and realloc, against
//! +20% for the earlier design that kept its own `Cell` counter and size-class table.
//!
//! # Publication per epoch
//!
//! ```text
//!   SLOTS: [ Slot 0 | Slot 1 | ... | Slot 255 ]   OVERFLOW   (64-byte lines, AtomicIsize)
//!              ^         ^
//!     main thread    I/O thread 1       publish(): relaxed store of the thread's total
//! ```
//!
//! Once per event-loop epoch, each thread calls [`publish`]: the main thread before it polls,
//! an I/O thread after each job batch, the lazyfree thread after each job; eviction publishes
//! the main thread's count before it reads `used_memory` and after it frees. The first call
//! claims a slot; each call stores the thread's running total there (a store of a total, not
//! an add of a delta, so publishing twice is harmless). [`used_memory`] sums the slots: it is
//! exact at an epoch boundary, when every thread has published since it last allocated, and
//! between boundaries each thread counts as of its last publication. A thread that exits
//! publishes its final total and leaves it in the slot for the next owner to inherit, so
//! memory it allocated (or freed) still counts. Threads beyond the 256 slots share an
//! overflow slot and add deltas to it.
//!
//! # Size classes and the 8-byte quantum
//!
//! The count is what jemalloc really reserves, the size class, not the bytes asked for.
//! jemalloc is built with an 8-byte quantum (`JEMALLOC_SYS_WITH_LG_QUANTUM=3` in
//! `.cargo/config.toml`), so small classes step by 8 (8, 16, 24, 32, 40, 48, 56, 64, 80, ...)
//! instead of 16, which saves up to 8 bytes per keyspace allocation. The price is that
//! `malloc` now only guarantees 8-byte alignment, so the wrapper owns alignment: layouts
//! aligned to 8 or less go to plain `malloc`, layouts aligned above 8 pass jemalloc an
//! explicit `MALLOCX_ALIGN`.
//!
//! # Layout
//!
//! - `alloc`: [`AlignedJemalloc`], the per-thread counts, [`publish`], [`used_memory`].
//! - `stats`: jemalloc statistics, RSS, the stats report, purge, [`size_class`].

mod alloc;
pub mod mallctl;
pub mod stats;

pub use alloc::{
    publish, thread_allocated, thread_allocated_gross, used_memory, AlignedJemalloc, SLOT_COUNT,
};
pub use stats::{allocator_stats, malloc_stats_text, purge, rss_bytes, size_class, AllocatorStats};

#[global_allocator]
static GLOBAL: AlignedJemalloc = AlignedJemalloc;

/// Serialises the tests that assert on process-wide figures (`used_memory`, jemalloc's
/// statistics, RSS) or that claim many slots, so that they do not move each other's numbers.
#[cfg(test)]
pub(crate) static PROCESS_WIDE_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
