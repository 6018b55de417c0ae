//! What jemalloc and the kernel say about the process's memory: jemalloc's own statistics
//! (for INFO memory and MEMORY STATS), its text report (MEMORY MALLOC-STATS), arena purging
//! (MEMORY PURGE), the resident set size, and the size class of a request.
//!
//! Nothing here is on the allocation path; these calls take jemalloc's locks and may
//! allocate. The byte count that maxmemory enforces is `used_memory`, not these.

#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_char, c_void, CStr};
use std::fs::File;
use std::io::{self, Read};
use std::ptr;

use tikv_jemalloc_ctl::{epoch, stats};
use tikv_jemalloc_sys as jemalloc;

/// jemalloc's `MALLCTL_ARENAS_ALL` (jemalloc.h): the arena index that means "every arena".
const MALLCTL_ARENAS_ALL: usize = 4096;

/// jemalloc's process-wide statistics, all in bytes, as of one epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocatorStats {
    /// Bytes in live allocations (size classes), including regions held in thread caches.
    pub allocated: usize,
    /// Bytes in active pages: `allocated` plus the unused part of partly used pages.
    pub active: usize,
    /// Bytes in physically resident data pages mapped by the allocator, metadata included.
    pub resident: usize,
    /// Bytes in active extents mapped by the allocator.
    pub mapped: usize,
    /// Bytes in virtual memory kept mapped for reuse but returned to the OS (not resident).
    pub retained: usize,
    /// Bytes of jemalloc's own metadata.
    pub metadata: usize,
    /// Bytes in muzzy pages (freed, decayed past dirty, not yet returned to the OS), every
    /// arena together.
    pub muzzy: usize,
}

/// Reads jemalloc's statistics, advancing its epoch first (its numbers are a snapshot that
/// only a new epoch refreshes).
pub fn allocator_stats() -> AllocatorStats {
    // The crate pins jemalloc with statistics compiled in, so these reads cannot fail short of
    // a build that breaks that invariant.
    const STATS_ENABLED: &str = "jemalloc is built with statistics (tikv-jemalloc-ctl `stats`)";
    epoch::advance().expect(STATS_ENABLED);
    AllocatorStats {
        allocated: stats::allocated::read().expect(STATS_ENABLED),
        active: stats::active::read().expect(STATS_ENABLED),
        resident: stats::resident::read().expect(STATS_ENABLED),
        mapped: stats::mapped::read().expect(STATS_ENABLED),
        retained: stats::retained::read().expect(STATS_ENABLED),
        metadata: stats::metadata::read().expect(STATS_ENABLED),
        muzzy: muzzy_pages() * jemalloc_page_bytes(),
    }
}

/// Muzzy pages of every arena (`stats.arenas.<all>.pmuzzy`), 0 if jemalloc will not say.
fn muzzy_pages() -> usize {
    let name = format!("stats.arenas.{MALLCTL_ARENAS_ALL}.pmuzzy\0");
    // SAFETY: `name` is NUL-terminated, and `stats.arenas.<i>.pmuzzy` is a read-only size_t,
    // which is what `usize` is on every platform jemalloc supports.
    unsafe { tikv_jemalloc_ctl::raw::read::<usize>(name.as_bytes()) }.unwrap_or(0)
}

/// jemalloc's page size (`arenas.page`), 4096 if it will not say.
fn jemalloc_page_bytes() -> usize {
    // SAFETY: a NUL-terminated name of a read-only size_t.
    unsafe { tikv_jemalloc_ctl::raw::read::<usize>(b"arenas.page\0") }.unwrap_or(4096)
}

/// The process's resident set size in bytes, from `/proc/self/statm` (one small read, no
/// allocation). 0 where the file cannot be read or parsed.
pub fn rss_bytes() -> usize {
    // "size resident shared text lib data dt", in pages; seven numbers fit in 160 bytes.
    let mut buf = [0u8; 160];
    let Ok(len) = File::open("/proc/self/statm").and_then(|mut file| file.read(&mut buf)) else {
        return 0;
    };
    let resident_pages = std::str::from_utf8(&buf[..len])
        .ok()
        .and_then(|statm| statm.split_ascii_whitespace().nth(1))
        .and_then(|field| field.parse::<usize>().ok());
    resident_pages.map_or(0, |pages| pages * page_bytes())
}

fn page_bytes() -> usize {
    // SAFETY: sysconf only reads a configuration value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096)
}

/// jemalloc's full text report (`malloc_stats_print`), for MEMORY MALLOC-STATS.
pub fn malloc_stats_text() -> String {
    let mut text: Vec<u8> = Vec::new();
    // SAFETY: jemalloc calls `append_report_chunk` synchronously, before returning, with the
    // opaque pointer given here, which points at `text` for the whole call; a null options
    // string asks for the default report.
    unsafe {
        jemalloc::malloc_stats_print(
            Some(append_report_chunk),
            ptr::from_mut(&mut text).cast(),
            ptr::null(),
        );
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// `malloc_stats_print`'s write callback: appends one NUL-terminated chunk to the Vec<u8>
/// behind `opaque`.
unsafe extern "C" fn append_report_chunk(opaque: *mut c_void, chunk: *const c_char) {
    // SAFETY: `opaque` is the `&mut Vec<u8>` that `malloc_stats_text` passed, alive and not
    // otherwise borrowed during the call; jemalloc passes a valid NUL-terminated string.
    let (text, chunk) = unsafe { (&mut *opaque.cast::<Vec<u8>>(), CStr::from_ptr(chunk)) };
    text.extend_from_slice(chunk.to_bytes());
}

/// Returns every arena's unused dirty pages to the OS now (MEMORY PURGE), rather than when
/// jemalloc's decay would.
pub fn purge() -> io::Result<()> {
    let name = format!("arena.{MALLCTL_ARENAS_ALL}.purge\0");
    // SAFETY: `name` is NUL-terminated; `arena.<i>.purge` is a write-only command that takes
    // no value, so old and new pointers are null with zero lengths, as jemalloc requires.
    let rc = unsafe {
        jemalloc::mallctl(
            name.as_ptr().cast(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            0,
        )
    };
    match rc {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// The bytes an allocation of `n` bytes (alignment 8 or less) really takes: jemalloc's size
/// class (`nallocx`). 0 for `n == 0` (nothing is allocated) and for sizes beyond jemalloc's
/// largest class.
pub fn size_class(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    // SAFETY: nallocx only computes the size class; `n` is non-zero as it requires.
    unsafe { jemalloc::nallocx(n, 0) }
}

#[cfg(test)]
mod tests {
    use std::hint::black_box;
    use std::sync::PoisonError;

    use super::*;
    use crate::memory::PROCESS_WIDE_TESTS;

    const MIB: usize = 1 << 20;

    #[test]
    fn size_class_steps_by_the_eight_byte_quantum() {
        assert_eq!(size_class(1), 8);
        assert_eq!(size_class(8), 8);
        assert_eq!(size_class(9), 16);
        assert_eq!(size_class(17), 24);
        assert_eq!(size_class(24), 24);
        assert_eq!(size_class(33), 40);
        assert_eq!(size_class(41), 48);
        assert_eq!(size_class(57), 64);
        assert_eq!(size_class(65), 80);
        assert_eq!(size_class(129), 160);
    }

    #[test]
    fn size_class_of_nothing_is_nothing() {
        assert_eq!(size_class(0), 0);
    }

    #[test]
    fn allocator_stats_see_a_large_allocation() {
        let _serial = PROCESS_WIDE_TESTS.lock().unwrap_or_else(PoisonError::into_inner);
        let before = allocator_stats();
        let block = black_box(vec![1u8; 32 * MIB]);
        let during = allocator_stats();
        assert!(during.allocated >= before.allocated + 31 * MIB, "{before:?} -> {during:?}");
        assert!(during.allocated <= during.active, "{during:?}");
        assert!(during.active <= during.resident, "{during:?}");
        assert!(during.active <= during.mapped, "{during:?}");
        assert!(during.metadata > 0, "{during:?}");
        drop(block);
    }

    #[test]
    fn rss_counts_touched_memory() {
        let _serial = PROCESS_WIDE_TESTS.lock().unwrap_or_else(PoisonError::into_inner);
        let block = black_box(vec![1u8; 64 * MIB]);
        assert!(rss_bytes() >= 64 * MIB, "rss {} bytes", rss_bytes());
        drop(block);
    }

    #[test]
    fn malloc_stats_text_is_jemallocs_report() {
        let text = malloc_stats_text();
        assert!(text.starts_with("___ Begin jemalloc statistics ___"), "{text}");
        assert!(text.trim_end().ends_with("--- End jemalloc statistics ---"), "{text}");
        assert!(text.contains("Allocated:"), "{text}");
    }

    /// Blocks below jemalloc's 8 MiB oversize threshold stay in the arenas as dirty pages
    /// after a free (until decay); purge hands them back to the OS at once.
    #[test]
    fn purge_returns_freed_pages_to_the_os() {
        let _serial = PROCESS_WIDE_TESTS.lock().unwrap_or_else(PoisonError::into_inner);
        let blocks: Vec<Vec<u8>> = (0..64).map(|_| black_box(vec![1u8; MIB])).collect();
        drop(blocks);
        let resident_dirty = allocator_stats().resident;
        purge().expect("purging every arena");
        let resident_purged = allocator_stats().resident;
        assert!(
            resident_purged + 32 * MIB <= resident_dirty,
            "resident {resident_dirty} -> {resident_purged} bytes"
        );
    }
}
