//! The global allocator (jemalloc, with the alignment rule this build's 8-byte quantum needs),
//! the per-thread byte counts that jemalloc keeps for us, and the slot array that those counts
//! are published into once per event-loop epoch.
//!
//! This file owns every `unsafe` call into jemalloc's allocation functions and the
//! publication protocol. Nothing here runs on the allocation path but the call into jemalloc:
//! no counter, no lock, no atomic. The only shared-memory writes happen in [`publish`].

#![deny(unsafe_op_in_unsafe_fn)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};

use libc::c_int;
use tikv_jemalloc_ctl::thread::{allocatedp, deallocatedp, ThreadLocal};
use tikv_jemalloc_sys as jemalloc;

/// The alignment of every pointer jemalloc returns in this build (its quantum,
/// `JEMALLOC_SYS_WITH_LG_QUANTUM=3` in `.cargo/config.toml`). Layouts aligned to this or less
/// need no alignment flag.
const QUANTUM_BYTES: usize = 8;

/// Slots in the publication array. A thread claims one at its first [`publish`] and gives it
/// back when it exits, so this bounds the threads alive at once, not the threads ever started;
/// threads beyond it share one overflow slot.
pub const SLOT_COUNT: usize = 256;

/// The global allocator of the crate: jemalloc, called with the alignment flag a layout needs.
///
/// Alignment rule (the build's 8-byte quantum makes this wrapper responsible for it): every
/// jemalloc pointer is at least 8-aligned, so a layout aligned to 8 or less is served by plain
/// `malloc`/`calloc`/`rallocx(.., 0)`. A layout aligned to 16 (every allocation of the Lua
/// interpreter: mlua asks for the platform's malloc alignment) is served the same way with
/// its size rounded up to a multiple of 16: the size class of such a size is itself a
/// multiple of 16 (small classes step by 8 only below 64, where the multiples of 16 are
/// classes of their own), slabs are page-aligned and regions sit at multiples of their class
/// size, so the region is 16-aligned, without jemalloc's slower aligned path. A layout
/// aligned above 16 passes `MALLOCX_ALIGN(align)`.
/// `tikv_jemallocator::Jemalloc` must not be used instead: it assumes the 16-byte quantum and
/// would hand a 16-aligned layout of 24 bytes an 8-aligned pointer.
///
/// It counts nothing itself: jemalloc already keeps, per thread, the bytes allocated and
/// freed in size classes (`thread.allocatedp` / `thread.deallocatedp`), and [`publish`] reads
/// them (see the module documentation of `memory`).
pub struct AlignedJemalloc;

// SAFETY: every method forwards to the jemalloc function with the contract GlobalAlloc
// requires (see the SAFETY comments inside).
unsafe impl GlobalAlloc for AlignedJemalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (size, flags) = jemalloc_args(layout.size(), layout.align());
        let ptr = if flags == 0 {
            // SAFETY: GlobalAlloc callers never pass a zero size; malloc's 8-byte alignment
            // covers `layout.align() <= 8`, and a 16-byte multiple's class covers 16.
            unsafe { jemalloc::malloc(size) }
        } else {
            // SAFETY: size is non-zero and flags hold a valid power-of-two alignment.
            unsafe { jemalloc::mallocx(size, flags) }
        };
        debug_assert!(ptr.is_null() || (ptr as usize).is_multiple_of(layout.align()));
        ptr.cast()
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let (size, flags) = jemalloc_args(layout.size(), layout.align());
        let ptr = if flags == 0 {
            // SAFETY: as in `alloc`; calloc of one element of `size` bytes cannot overflow.
            unsafe { jemalloc::calloc(1, size) }
        } else {
            // SAFETY: as in `alloc`; MALLOCX_ZERO only asks for zeroed memory.
            unsafe { jemalloc::mallocx(size, flags | jemalloc::MALLOCX_ZERO) }
        };
        debug_assert!(ptr.is_null() || (ptr as usize).is_multiple_of(layout.align()));
        ptr.cast()
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let (size, flags) = jemalloc_args(layout.size(), layout.align());
        // SAFETY: the caller guarantees `ptr` came from this allocator with `layout`, so it was
        // allocated by jemalloc with this size and these flags, which is what sdallocx needs.
        unsafe { jemalloc::sdallocx(ptr.cast(), size, flags) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // The alignment does not change across a realloc, so neither does the rule.
        let (size, flags) = jemalloc_args(new_size, layout.align());
        // SAFETY: the caller guarantees `ptr` is live, from this allocator with `layout`, and
        // `new_size` is non-zero; rallocx keeps the alignment the size or flags give.
        let ptr = unsafe { jemalloc::rallocx(ptr.cast(), size, flags) };
        debug_assert!(ptr.is_null() || (ptr as usize).is_multiple_of(layout.align()));
        ptr.cast()
    }
}

/// The size and flags jemalloc is called with for a layout (see [`AlignedJemalloc`]): the
/// size as it is and no flag up to the quantum, since every size class is a multiple of 8
/// and slabs are page-aligned, so every region is 8-aligned; for 16, the size rounded up to
/// a multiple of 16 and no flag; an explicit alignment above that.
#[inline(always)]
fn jemalloc_args(size: usize, align: usize) -> (usize, c_int) {
    if align <= QUANTUM_BYTES {
        (size, 0)
    } else if align == 2 * QUANTUM_BYTES {
        ((size + 15) & !15, 0)
    } else {
        (size, jemalloc::MALLOCX_ALIGN(align))
    }
}

// ---------------------------------------------------------------------------------------------
// Per-thread counts and publication.
//
//   thread T (hot path)           thread T (epoch boundary)           any thread
//   jemalloc's tsd:               publish(): SLOTS[i].bytes   ---+--> used_memory() =
//     allocated   += class        = inherited + (allocated -     |    OVERFLOW + sum of
//     deallocated += class          deallocated)  (relaxed,      |    SLOTS[..SLOTS_USED]
//   (plain TLS adds, done by        idempotent store)            |
//    jemalloc anyway)                                            |
//   threads past SLOT_COUNT:      OVERFLOW.bytes += total - published (fetch_add)
// ---------------------------------------------------------------------------------------------

/// One publication slot, alone on its cache line so that threads publishing at the same
/// epoch boundary do not false-share.
#[repr(align(64))]
struct Slot {
    /// The running total published by the thread that owns the slot, plus the final totals of
    /// the threads that owned it before (a thread that exits leaves its total behind; the next
    /// owner inherits it, so memory allocated by a dead thread still counts).
    bytes: AtomicIsize,
    /// Whether a live thread owns the slot.
    claimed: AtomicBool,
}

const _: () = assert!(size_of::<Slot>() == 64);

impl Slot {
    const fn new() -> Slot {
        Slot { bytes: AtomicIsize::new(0), claimed: AtomicBool::new(false) }
    }
}

static SLOTS: [Slot; SLOT_COUNT] = [const { Slot::new() }; SLOT_COUNT];
/// One more than the highest slot index ever claimed: `used_memory` sums only this prefix.
static SLOTS_USED: AtomicUsize = AtomicUsize::new(0);
/// Shared by the threads that found no free slot; they add deltas instead of storing totals.
static OVERFLOW: Slot = Slot::new();

/// How this thread publishes.
#[derive(Clone, Copy)]
enum Publication {
    /// Never published: its counter is invisible to `used_memory` until it does.
    Unregistered,
    /// Owns `SLOTS[index]`, which held `inherited` bytes when it was claimed.
    Owned { index: usize, inherited: isize },
    /// Adds to `OVERFLOW`; `published` is the part of the counter already added there.
    Shared { published: isize },
}

/// Where jemalloc keeps this thread's two running byte counts (fields of its thread-specific
/// data, in static TLS): bytes ever allocated and bytes ever freed, both in size classes,
/// both plain `u64`s that only this thread writes. Looked up once per thread with `mallctl`.
#[derive(Clone, Copy)]
struct JemallocCounts {
    allocated: ThreadLocal<u64>,
    deallocated: ThreadLocal<u64>,
}

thread_local! {
    /// This thread's jemalloc counters, found at its first [`thread_allocated`]. Const-
    /// initialised and without a destructor, so it is readable even from TLS destructors.
    static COUNTS: Cell<Option<JemallocCounts>> = const { Cell::new(None) };
    static PUBLICATION: Cell<Publication> = const { Cell::new(Publication::Unregistered) };
    /// Touched once, at registration, to have the thread's exit publish its final total.
    static EXIT_HOOK: ExitHook = const { ExitHook };
}

struct ExitHook;

impl Drop for ExitHook {
    fn drop(&mut self) {
        retire();
    }
}

/// Finds this thread's counters. `mallctl` by name: a string lookup in jemalloc's control
/// tree, once per thread; it allocates nothing through the global allocator.
#[cold]
fn find_counts() -> JemallocCounts {
    // The crate builds jemalloc with statistics (tikv-jemalloc-ctl's `stats` feature); without
    // them these names do not exist and memory accounting is impossible: refuse to run.
    const STATS_ENABLED: &str = "jemalloc is built with statistics (thread.allocatedp)";
    let counts = JemallocCounts {
        allocated: allocatedp::read().expect(STATS_ENABLED),
        deallocated: deallocatedp::read().expect(STATS_ENABLED),
    };
    COUNTS.set(Some(counts));
    counts
}

/// This thread's running total: bytes allocated minus bytes freed (in size classes) since the
/// thread started, whether published yet or not. Negative on a thread that mostly frees what
/// others allocated. Two loads of jemalloc's thread-local counters; wrapping arithmetic, since
/// only the sum over all threads is meaningful (and it is exact mod 2^64).
#[inline]
pub fn thread_allocated() -> isize {
    let counts = COUNTS.get().unwrap_or_else(find_counts);
    counts.allocated.get().wrapping_sub(counts.deallocated.get()) as isize
}

/// Bytes this thread has ever allocated (in size classes; frees not subtracted). Tests read
/// it around an operation to show that it copied nothing: a temporary copy that is freed again
/// leaves [`thread_allocated`] unchanged but shows here. A realloc that moves counts its whole
/// new size.
pub fn thread_allocated_gross() -> u64 {
    COUNTS.get().unwrap_or_else(find_counts).allocated.get()
}

/// Publishes this thread's running total so that [`used_memory`] sees it. Called at each
/// epoch boundary: by the main thread before it polls, by an I/O thread after each job batch,
/// and by eviction around what it frees. Idempotent; a relaxed store into the thread's own
/// slot (after the first call, which claims the slot). A thread that never calls it is
/// invisible to `used_memory`.
pub fn publish() {
    let publication = match PUBLICATION.get() {
        Publication::Unregistered => register(),
        publication => publication,
    };
    let total = thread_allocated();
    match publication {
        Publication::Owned { index, inherited } => {
            SLOTS[index].bytes.store(inherited.wrapping_add(total), Ordering::Relaxed);
        }
        Publication::Shared { published } => {
            OVERFLOW.bytes.fetch_add(total.wrapping_sub(published), Ordering::Relaxed);
            PUBLICATION.set(Publication::Shared { published: total });
        }
        Publication::Unregistered => unreachable!("register() returns a registered publication"),
    }
}

/// Bytes the allocator has handed out and not taken back, over every thread that publishes:
/// the sum of the slots. Exact at an epoch boundary (once every thread has published since
/// its last allocation); in between, each thread counts as of its last publication. Clamped
/// at 0: a thread that freed memory another thread allocated can publish first.
pub fn used_memory() -> usize {
    let used = SLOTS_USED.load(Ordering::Relaxed);
    let overflow = OVERFLOW.bytes.load(Ordering::Relaxed);
    let total = SLOTS[..used]
        .iter()
        .fold(overflow, |sum, slot| sum.wrapping_add(slot.bytes.load(Ordering::Relaxed)));
    usize::try_from(total).unwrap_or(0)
}

/// Claims a slot for this thread (or the overflow slot) and arms the exit hook.
#[cold]
fn register() -> Publication {
    // A thread already running its TLS destructors cannot arm the hook any more; sharing the
    // overflow slot keeps whatever it publishes from now on correct without one.
    let exit_hook_armed = EXIT_HOOK.try_with(|_| ()).is_ok();
    let publication =
        exit_hook_armed.then(claim_slot).flatten().unwrap_or(Publication::Shared { published: 0 });
    PUBLICATION.set(publication);
    publication
}

fn claim_slot() -> Option<Publication> {
    let index = SLOTS.iter().position(|slot| {
        slot.claimed.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    })?;
    SLOTS_USED.fetch_max(index + 1, Ordering::Relaxed);
    // The Acquire above pairs with the Release in `retire`: the previous owner's final store
    // is visible here.
    let inherited = SLOTS[index].bytes.load(Ordering::Relaxed);
    Some(Publication::Owned { index, inherited })
}

/// Thread exit: publish the final total and give the slot back with the total left in it.
/// Rust's TLS destructors run before the pthread-key destructors that tear down jemalloc's
/// thread data, and the counters live in static TLS, so the final read is still this thread's.
/// Allocations made after this by later TLS destructors of the same thread are only counted
/// if something publishes again (they then go to the overflow slot as deltas).
fn retire() {
    publish();
    if let Publication::Owned { index, .. } = PUBLICATION.get() {
        PUBLICATION.set(Publication::Shared { published: thread_allocated() });
        SLOTS[index].claimed.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::hint::black_box;
    use std::ptr;
    use std::sync::{Barrier, MutexGuard, PoisonError};
    use std::thread;

    use super::*;
    use crate::memory::{size_class, PROCESS_WIDE_TESTS};

    /// Slack for assertions on `used_memory`, which other threads of the test process also
    /// move a little (the harness, thread spawning); each such test moves tens of MiB.
    const USED_MEMORY_SLACK_BYTES: usize = 1 << 20;

    fn serial() -> MutexGuard<'static, ()> {
        PROCESS_WIDE_TESTS.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What this thread has published so far, net of what its slot inherited.
    fn published_by_this_thread() -> isize {
        match PUBLICATION.get() {
            Publication::Unregistered => 0,
            Publication::Owned { index, inherited } => {
                SLOTS[index].bytes.load(Ordering::Relaxed).wrapping_sub(inherited)
            }
            Publication::Shared { published } => published,
        }
    }

    fn assert_near(actual: usize, expected: usize, slack: usize, what: &str) {
        assert!(actual.abs_diff(expected) <= slack, "{what}: {actual} is not {expected} ± {slack}");
    }

    fn aligned_class(size: usize, align: usize) -> isize {
        // SAFETY: nallocx only computes; size is non-zero.
        unsafe { jemalloc::nallocx(size, jemalloc::MALLOCX_ALIGN(align)) as isize }
    }

    /// Runs `f` on a fresh thread (a fresh counter and a fresh registration).
    fn on_new_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        thread::scope(|scope| scope.spawn(f).join().expect("test thread panicked"))
    }

    #[test]
    fn alloc_and_free_change_the_thread_counter_by_size_classes() {
        for size in [1, 8, 9, 17, 24, 25, 33, 41, 57, 100, 1000, 4097, 20_000, 1 << 20] {
            let before = thread_allocated();
            let block: Vec<u8> = black_box(Vec::with_capacity(size));
            assert_eq!(thread_allocated() - before, size_class(size) as isize, "size {size}");
            drop(block);
            assert_eq!(thread_allocated(), before, "size {size}");
        }
    }

    #[test]
    fn vec_of_24_bytes_costs_24_bytes() {
        let before = thread_allocated();
        let bytes: Vec<u8> = black_box(Vec::with_capacity(24));
        assert_eq!(thread_allocated() - before, 24);
        let words: Vec<u64> = black_box(Vec::with_capacity(3));
        assert_eq!(thread_allocated() - before, 48);
        drop((bytes, words));
        assert_eq!(thread_allocated(), before);
    }

    #[test]
    fn over_aligned_boxes_are_aligned_and_counted() {
        #[repr(align(64))]
        struct CacheLine([u8; 40]);
        #[repr(align(4096))]
        struct Page([u8; 100]);

        let before = thread_allocated();
        let line = black_box(Box::new(CacheLine([1; 40])));
        assert_eq!(ptr::from_ref(&*line).addr() % 64, 0);
        assert_eq!(thread_allocated() - before, aligned_class(64, 64));
        let page = black_box(Box::new(Page([2; 100])));
        assert_eq!(ptr::from_ref(&*page).addr() % 4096, 0);
        assert_eq!(thread_allocated() - before, aligned_class(64, 64) + aligned_class(4096, 4096));
        assert_eq!((line.0[39], page.0[99]), (1, 2));
        drop((line, page));
        assert_eq!(thread_allocated(), before);
    }

    /// With an 8-byte quantum a 24-byte region can sit at an odd multiple of 8; a layout that
    /// asks for 16 must still get 16 (tikv_jemallocator would call plain malloc here).
    #[test]
    fn sixteen_aligned_layouts_get_sixteen_aligned_pointers() {
        let layout = Layout::from_size_align(24, 16).unwrap();
        let before = thread_allocated();
        // SAFETY: the layout has a non-zero size; every pointer is freed below with it.
        let blocks: Vec<*mut u8> =
            (0..64).map(|_| unsafe { AlignedJemalloc.alloc(layout) }).collect();
        for &block in &blocks {
            assert!(!block.is_null());
            assert_eq!(block.addr() % 16, 0);
        }
        let charged = thread_allocated() - before - size_class(64 * 8) as isize;
        assert_eq!(charged, 64 * aligned_class(24, 16));
        for block in blocks {
            // SAFETY: allocated above by AlignedJemalloc with `layout`, freed once.
            unsafe { AlignedJemalloc.dealloc(block, layout) };
        }
        assert_eq!(thread_allocated(), before);
    }

    #[test]
    fn small_allocations_are_eight_byte_aligned() {
        for size in 1..=128 {
            let layout = Layout::from_size_align(size, 8).unwrap();
            for _ in 0..16 {
                // SAFETY: non-zero size; freed right away with the same layout.
                unsafe {
                    let block = AlignedJemalloc.alloc(black_box(layout));
                    assert!(!block.is_null());
                    assert_eq!(block.addr() % 8, 0, "size {size}");
                    AlignedJemalloc.dealloc(block, layout);
                }
            }
        }
    }

    #[test]
    fn realloc_charges_the_change_in_size_class() {
        let before = thread_allocated();
        let mut bytes: Vec<u8> = black_box(Vec::with_capacity(17));
        bytes.reserve_exact(100);
        assert_eq!(bytes.capacity(), 100);
        assert_eq!(thread_allocated() - before, size_class(100) as isize);
        bytes.reserve_exact(50_000);
        assert_eq!(thread_allocated() - before, size_class(50_000) as isize);
        bytes.shrink_to(33);
        assert_eq!(thread_allocated() - before, 40);
        drop(bytes);
        assert_eq!(thread_allocated(), before);

        let layout = Layout::from_size_align(64, 64).unwrap();
        // SAFETY: non-zero sizes; the block is reallocated with its current layout and freed
        // once with the layout of its last size.
        unsafe {
            let block = AlignedJemalloc.alloc(layout);
            let grown = AlignedJemalloc.realloc(block, layout, 200);
            assert!(!grown.is_null());
            assert_eq!(grown.addr() % 64, 0);
            assert_eq!(thread_allocated() - before, aligned_class(200, 64));
            AlignedJemalloc.dealloc(grown, Layout::from_size_align(200, 64).unwrap());
        }
        assert_eq!(thread_allocated(), before);
    }

    #[test]
    fn alloc_zeroed_is_zeroed_and_counted() {
        let before = thread_allocated();
        let zeros = black_box(vec![0u8; 3000]);
        assert!(zeros.iter().all(|&byte| byte == 0));
        assert_eq!(thread_allocated() - before, size_class(3000) as isize);
        drop(zeros);

        let layout = Layout::from_size_align(100, 32).unwrap();
        // SAFETY: non-zero size; read within the block, freed once with the same layout.
        unsafe {
            let block = AlignedJemalloc.alloc_zeroed(layout);
            assert_eq!(block.addr() % 32, 0);
            assert!(std::slice::from_raw_parts(block, 100).iter().all(|&byte| byte == 0));
            assert_eq!(thread_allocated() - before, aligned_class(100, 32));
            AlignedJemalloc.dealloc(block, layout);
        }
        assert_eq!(thread_allocated(), before);
    }

    #[test]
    fn publish_stores_this_threads_running_total() {
        on_new_thread(|| {
            assert!(matches!(PUBLICATION.get(), Publication::Unregistered));
            publish();
            assert!(!matches!(PUBLICATION.get(), Publication::Unregistered));
            assert_eq!(published_by_this_thread(), thread_allocated());
            let block = black_box(vec![7u8; 1 << 20]);
            assert_ne!(published_by_this_thread(), thread_allocated());
            publish();
            publish();
            assert_eq!(published_by_this_thread(), thread_allocated());
            drop(block);
            publish();
            assert_eq!(published_by_this_thread(), thread_allocated());
        });
    }

    #[test]
    fn used_memory_reflects_a_publication() {
        let _serial = serial();
        const BLOCK_BYTES: usize = 64 << 20;
        on_new_thread(|| {
            publish();
            let before = used_memory();
            let block = black_box(vec![1u8; BLOCK_BYTES]);
            assert_near(used_memory(), before, USED_MEMORY_SLACK_BYTES, "before publish");
            publish();
            assert_near(used_memory(), before + BLOCK_BYTES, USED_MEMORY_SLACK_BYTES, "held");
            drop(block);
            publish();
            assert_near(used_memory(), before, USED_MEMORY_SLACK_BYTES, "freed");
        });
    }

    /// A allocates and exits, B frees: A's total stays positive, B's goes negative, and the
    /// sum comes back to where it was. Also checks that an exiting thread publishes.
    #[test]
    fn memory_freed_by_another_thread_keeps_the_sum_right() {
        let _serial = serial();
        const BLOCK_BYTES: usize = 32 << 20;
        let before = used_memory();
        let block = on_new_thread(|| {
            publish();
            let start = thread_allocated();
            let block = black_box(vec![3u8; BLOCK_BYTES]);
            assert_eq!(thread_allocated() - start, size_class(BLOCK_BYTES) as isize);
            // No publish: thread exit must publish the final total.
            block
        });
        assert_near(used_memory(), before + BLOCK_BYTES, USED_MEMORY_SLACK_BYTES, "A exited");
        on_new_thread(move || {
            publish();
            let start = thread_allocated();
            drop(block);
            assert_eq!(thread_allocated() - start, -(size_class(BLOCK_BYTES) as isize));
            publish();
            assert_near(used_memory(), before, USED_MEMORY_SLACK_BYTES, "B freed");
        });
        assert_near(used_memory(), before, USED_MEMORY_SLACK_BYTES, "B exited");
    }

    #[test]
    fn slots_are_reused_after_threads_exit() {
        let _serial = serial();
        for round in 0..2 * SLOT_COUNT {
            let owned = on_new_thread(|| {
                publish();
                matches!(PUBLICATION.get(), Publication::Owned { .. })
            });
            assert!(owned, "thread {round} found no free slot");
        }
    }

    #[test]
    fn threads_beyond_the_slots_share_the_overflow_slot() {
        let _serial = serial();
        const THREADS: usize = SLOT_COUNT + 44;
        const BLOCK_BYTES: usize = 64 << 10;
        let allocated = Barrier::new(THREADS + 1);
        let freed = Barrier::new(THREADS + 1);
        let before = used_memory();
        let shared_count = thread::scope(|scope| {
            let threads: Vec<_> = (0..THREADS)
                .map(|_| {
                    let worker = || {
                        publish();
                        let block = black_box(vec![5u8; BLOCK_BYTES]);
                        publish();
                        allocated.wait();
                        freed.wait();
                        drop(block);
                        publish();
                        matches!(PUBLICATION.get(), Publication::Shared { .. })
                    };
                    thread::Builder::new().stack_size(64 << 10).spawn_scoped(scope, worker).unwrap()
                })
                .collect();
            allocated.wait();
            let held = before + THREADS * size_class(BLOCK_BYTES);
            assert_near(used_memory(), held, USED_MEMORY_SLACK_BYTES, "all threads holding");
            freed.wait();
            threads.into_iter().map(|t| t.join().unwrap() as usize).sum::<usize>()
        });
        assert!(shared_count >= THREADS - SLOT_COUNT, "only {shared_count} threads shared");
        assert_near(used_memory(), before, USED_MEMORY_SLACK_BYTES, "all threads exited");
    }
}
