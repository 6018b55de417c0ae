//! Memory accounting: the crate's global allocator and what it reports.
//!
//! Owns the `#[global_allocator]` (jemalloc behind [`CountingAlloc`]), the `used_memory`
//! figure that INFO, MEMORY and maxmemory enforcement read, and the jemalloc statistics
//! behind MEMORY STATS / MALLOC-STATS / PURGE. It must not know about keys, commands or the
//! event loop: the loops call [`publish`] at their epoch boundaries, that is all.
//!
//! # Counting without atomics
//!
//! A server allocates on every command, from several threads, so an atomic add per
//! allocation would put one contended cache line on every thread's hot path. Instead each
//! thread keeps a plain thread-local counter (const-initialised, no destructor: a TLS load
//! and store) of the bytes it allocated minus the bytes it freed. Memory allocated by thread
//! A and freed by thread B leaves A's counter positive and B's negative; only the sum means
//! anything, and the sum is right.
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
//! an I/O thread after each job batch. The first call claims a slot; each call stores the
//! thread's running total there (a store of a total, not an add of a delta, so publishing
//! twice is harmless). [`used_memory`] sums the slots: it is exact at an epoch boundary, when
//! every thread has published since it last allocated, and between boundaries each thread
//! counts as of its last publication. A thread that exits publishes its final total and
//! leaves it in the slot for the next owner to inherit, so memory it allocated (or freed)
//! still counts. Threads beyond the 256 slots share an overflow slot and add deltas to it.
//!
//! # Size classes and the 8-byte quantum
//!
//! The count is what jemalloc really reserves, the size class, not the bytes asked for.
//! jemalloc is built with an 8-byte quantum (`JEMALLOC_SYS_WITH_LG_QUANTUM=3` in
//! `.cargo/config.toml`), so small classes step by 8 (8, 16, 24, 32, 40, 48, 56, 64, 80, ...)
//! instead of 16, which saves up to 8 bytes per keyspace allocation. The price is that
//! `malloc` now only guarantees 8-byte alignment, so the wrapper owns alignment: layouts
//! aligned to 8 or less go to plain `malloc`, layouts aligned above 8 pass jemalloc an
//! explicit `MALLOCX_ALIGN`. For the plain case the size class is computed inline with
//! jemalloc's own arithmetic (checked against `nallocx` by the tests and once at start-up).
//!
//! # Layout
//!
//! - `alloc`: [`CountingAlloc`], the per-thread counters, [`publish`], [`used_memory`].
//! - `stats`: jemalloc statistics, RSS, the stats report, purge, [`size_class`].

mod alloc;
pub mod stats;

pub use alloc::{publish, thread_allocated, used_memory, CountingAlloc, SLOT_COUNT};
pub use stats::{allocator_stats, malloc_stats_text, purge, rss_bytes, size_class, AllocatorStats};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Serialises the tests that assert on process-wide figures (`used_memory`, jemalloc's
/// statistics, RSS) or that claim many slots, so that they do not move each other's numbers.
#[cfg(test)]
static PROCESS_WIDE_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
