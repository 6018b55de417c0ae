//! Writing the AOF buffer to the open incremental file, and the `appendfsync` policies.
//!
//! The buffer is written once per event-loop turn, right before replies go out, so a reply
//! never reaches a client before the write it acknowledges reached the file:
//! - `always`: the write is followed by `fdatasync` in the same turn, before any reply;
//! - `everysec`: a background thread syncs the file about once a second (a sync is never
//!   queued while the previous one is still running; `aof_delayed_fsync` counts the turns
//!   that found one running), so at most about a second of acknowledged writes is at risk
//!   on a power loss, and none on a crash of the process alone;
//! - `no`: the kernel decides.
//!
//! A failed write keeps the buffer, truncates the file back to the last complete write when
//! it can (a partial command would make the file unreadable), and is retried each turn;
//! meanwhile writes are refused (MISCONF). Under `always` there is no safe way to go on, and
//! the server exits, as Valkey does.

use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use crossbeam_channel::{bounded, Sender, TrySendError};

/// The incremental file commands are appended to.
#[derive(Debug)]
pub struct IncrFile {
    pub file: Arc<File>,
    /// Its name inside the AOF directory.
    pub name: String,
    /// Its size, as written so far.
    pub size: u64,
    /// Whether something was written since the last sync.
    pub unsynced: bool,
}

impl IncrFile {
    pub fn new(file: File, name: String) -> io::Result<IncrFile> {
        let size = file.metadata()?.len();
        Ok(IncrFile { file: Arc::new(file), name, size, unsynced: false })
    }

    /// Writes all of `buf`; on failure, cuts the file back to where it was.
    pub fn append(&mut self, buf: &[u8]) -> io::Result<()> {
        match (&*self.file).write_all(buf) {
            Ok(()) => {
                self.size += buf.len() as u64;
                self.unsynced = true;
                Ok(())
            }
            Err(e) => {
                if let Err(t) = self.file.set_len(self.size) {
                    tracing::warn!(
                        "Could not remove short write from the append-only file. The file may \
                         need to be repaired with valkey-check-aof: {t}"
                    );
                }
                Err(e)
            }
        }
    }
}

/// The background syncer of `everysec`.
#[derive(Debug)]
pub struct Syncer {
    tx: Sender<(Arc<File>, u64)>,
    busy: Arc<AtomicBool>,
    /// The AOF position (bytes ever written, [`super::Aof::written_total`]) the last finished
    /// sync covered: what WAITAOF counts as on disk.
    done: Arc<AtomicU64>,
}

impl Syncer {
    pub fn start() -> io::Result<Syncer> {
        // One request at a time: a new one is only sent when the last is done.
        let (tx, rx) = bounded::<(Arc<File>, u64)>(1);
        let busy = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let (flag, covered) = (Arc::clone(&busy), Arc::clone(&done));
        thread::Builder::new().name("aof-fsync".into()).spawn(move || {
            for (file, upto) in rx {
                match file.sync_data() {
                    Ok(()) => {
                        covered.fetch_max(upto, Ordering::Release);
                    }
                    Err(e) => tracing::warn!("Error syncing the append only file: {e}"),
                }
                flag.store(false, Ordering::Release);
            }
        })?;
        Ok(Syncer { tx, busy, done })
    }

    /// Whether a sync is still running.
    pub fn busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// The AOF position the last finished sync covered.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }

    /// Queues a sync of `file`, which holds the AOF up to position `upto`; false when one is
    /// still running.
    pub fn request(&self, file: &Arc<File>, upto: u64) -> bool {
        if self.busy() {
            return false;
        }
        self.busy.store(true, Ordering::Release);
        match self.tx.try_send((Arc::clone(file), upto)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.busy.store(false, Ordering::Release);
                false
            }
        }
    }
}
