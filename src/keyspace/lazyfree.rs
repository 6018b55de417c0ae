//! Lazy freeing: dropping big things (a whole database for FLUSHALL ASYNC, a big value for
//! UNLINK) on one background thread, so that the main thread returns at once.
//!
//! The main thread hands over ownership and forgets; the lazyfree thread only runs
//! destructors. It never reads the keyspace, so it needs no lock: what it receives is no
//! longer reachable from any database. INFO reads the two counters.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crossbeam_channel::Sender;

/// Allocations above which UNLINK frees a value on the lazyfree thread (Valkey's
/// `LAZYFREE_THRESHOLD`); below it, the hand-over costs more than the free.
pub const LAZYFREE_THRESHOLD: usize = 64;

struct Job {
    garbage: Box<dyn Send>,
    objects: u64,
}

static PENDING_OBJECTS: AtomicU64 = AtomicU64::new(0);
static FREED_OBJECTS: AtomicU64 = AtomicU64::new(0);

/// The queue to the lazyfree thread, started on first use. The queue is unbounded on
/// purpose: it holds only pointers to memory that is already allocated, and blocking the
/// main thread on a full queue would defeat the point of freeing lazily.
fn queue() -> Option<&'static Sender<Job>> {
    static QUEUE: OnceLock<Option<Sender<Job>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (tx, rx) = crossbeam_channel::unbounded::<Job>();
            let spawned = std::thread::Builder::new().name("lazyfree".into()).spawn(move || {
                for job in rx {
                    drop(job.garbage);
                    crate::memory::publish();
                    PENDING_OBJECTS.fetch_sub(job.objects, Ordering::Relaxed);
                    FREED_OBJECTS.fetch_add(job.objects, Ordering::Relaxed);
                }
            });
            spawned.ok().map(|_| tx)
        })
        .as_ref()
}

/// Drop `garbage` (holding `objects` keys or values, for the counters) on the lazyfree
/// thread; when that thread could not be started, drop it here.
pub fn free_async<T: Send + 'static>(garbage: T, objects: u64) {
    let Some(tx) = queue() else {
        drop(garbage);
        return;
    };
    PENDING_OBJECTS.fetch_add(objects, Ordering::Relaxed);
    if let Err(e) = tx.send(Job { garbage: Box::new(garbage), objects }) {
        PENDING_OBJECTS.fetch_sub(objects, Ordering::Relaxed);
        drop(e.into_inner());
    }
}

/// Objects handed over and not freed yet (INFO `lazyfree_pending_objects`).
pub fn pending_objects() -> u64 {
    PENDING_OBJECTS.load(Ordering::Relaxed)
}

/// Objects freed by the lazyfree thread since start (INFO `lazyfreed_objects`).
pub fn freed_objects() -> u64 {
    FREED_OBJECTS.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_dropped_on_another_thread() {
        struct Probe(std::sync::mpsc::Sender<std::thread::ThreadId>);
        impl Drop for Probe {
            fn drop(&mut self) {
                let _ = self.0.send(std::thread::current().id());
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let before = freed_objects();
        free_async(Probe(tx), 3);
        let id = rx.recv_timeout(std::time::Duration::from_secs(5)).expect("dropped");
        assert_ne!(id, std::thread::current().id());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while freed_objects() < before + 3 {
            assert!(std::time::Instant::now() < deadline, "counter not updated");
            std::thread::yield_now();
        }
    }
}
