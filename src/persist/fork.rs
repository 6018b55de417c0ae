//! Fork children: the BGSAVE child and the AOF rewrite child both run through [`spawn`];
//! a forked debugging session (`SCRIPT DEBUG YES`) through [`spawn_detached`], which
//! reports nothing back and is tracked by its pid alone.
//!
//! The child runs one closure over its copy-on-write snapshot of the parent's memory, then
//! reports how much memory the snapshot cost (its private dirty pages: every page either
//! process wrote since the fork had to be copied) through a pipe, and leaves with `_exit`.
//! The parent polls it with [`ForkChild::try_reap`] from the time events, or stops it with
//! [`ForkChild::kill_and_reap`] (SHUTDOWN, turning the AOF off).
//!
//! ```text
//!  parent                               child
//!  spawn ── pipe ── fork ─────────────► work()            (iterate, write, no logging)
//!    │                                  private dirty  ──► pipe: cow bytes, 8 bytes LE
//!    │                                  _exit(0 | 1)
//!  try_reap: waitpid(WNOHANG) ─► Reaped { ok, cow_bytes, by_signal, elapsed_ms }
//! ```
//!
//! The child must not take a lock another thread of the parent may have held at the fork
//! (the logger's, a channel's): it only walks the dataset and writes a file. jemalloc's own
//! fork handlers make allocating safe. It never returns into the parent's code, unwinds
//! past `work` or runs the parent's destructors.
//!
//! Fork times are kept process-wide for INFO (`latest_fork_usec`, `total_forks`) and
//! LATENCY DOCTOR (the fork rate).

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Which job a child does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    Rdb,
    Aof,
}

/// A running child.
#[derive(Debug)]
pub struct ForkChild {
    pub pid: libc::pid_t,
    pub kind: ChildKind,
    pub started_ms: i64,
    /// How long the fork call took in the parent, microseconds.
    pub fork_usec: u64,
    /// The read end of the info pipe (non-blocking).
    info: File,
}

/// How a child ended.
#[derive(Debug)]
pub struct Reaped {
    /// It exited with status 0.
    pub ok: bool,
    /// Its copy-on-write memory, as it reported it (0 when it reported nothing).
    pub cow_bytes: u64,
    /// The signal that ended it, if one did.
    pub by_signal: Option<i32>,
    pub elapsed_ms: i64,
}

static LATEST_FORK_USEC: AtomicU64 = AtomicU64::new(0);
static TOTAL_FORKS: AtomicU64 = AtomicU64::new(0);
/// The last fork's rate, GB of used memory a second, as `f64` bits (LATENCY DOCTOR).
static LATEST_FORK_RATE: AtomicU64 = AtomicU64::new(0);

/// Duration of the last fork, microseconds (INFO `latest_fork_usec`).
pub fn latest_fork_usec() -> u64 {
    LATEST_FORK_USEC.load(Ordering::Relaxed)
}

/// The last fork's speed: used memory (GB) over the fork's time (s), as Valkey's
/// `stat_fork_rate` (LATENCY DOCTOR grades it).
pub fn latest_fork_rate_gb_s() -> f64 {
    f64::from_bits(LATEST_FORK_RATE.load(Ordering::Relaxed))
}

/// Forks done since start-up (INFO `total_forks`).
pub fn total_forks() -> u64 {
    TOTAL_FORKS.load(Ordering::Relaxed)
}

/// Forks; in the child runs `work` (which returns success), reports the child's
/// copy-on-write bytes through the pipe, and leaves with `_exit(0)` or `_exit(1)`.
pub fn spawn(
    kind: ChildKind,
    now_ms: i64,
    work: impl FnOnce() -> bool,
) -> std::io::Result<ForkChild> {
    let (read_end, write_end) = info_pipe()?;
    let started = Instant::now();
    // SAFETY: fork has no memory-safety preconditions of its own. The child only runs
    // `child_main`, which never returns: it ends with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        drop(read_end);
        child_main(Some(write_end), work);
    }
    drop(write_end);
    let fork_usec = started.elapsed().as_micros() as u64;
    LATEST_FORK_USEC.store(fork_usec, Ordering::Relaxed);
    let rate = crate::memory::used_memory() as f64 * 1e6 / fork_usec.max(1) as f64 / 1073741824.0;
    LATEST_FORK_RATE.store(rate.to_bits(), Ordering::Relaxed);
    TOTAL_FORKS.fetch_add(1, Ordering::Relaxed);
    Ok(ForkChild { pid, kind, started_ms: now_ms, fork_usec, info: File::from(read_end) })
}

/// A pipe whose ends close on exec; the read end does not block (a later child may
/// inherit the write end, so end-of-file cannot be waited for).
fn info_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: F_SETFL on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fds[0], libc::F_GETFL);
        libc::fcntl(fds[0], libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    Ok((r, w))
}

/// Forks a child that reports nothing back (a forked debugging session, `runtime::ldb`):
/// in the child runs `work` and leaves with `_exit(0)` or `_exit(1)`; the parent gets the
/// child's pid, to reap it with [`reap_detached`] or stop it with [`kill_detached`]. It
/// counts as a fork for INFO, as Valkey counts it.
pub fn spawn_detached(work: impl FnOnce() -> bool) -> std::io::Result<libc::pid_t> {
    let started = Instant::now();
    // SAFETY: as in `spawn`: the child only runs `child_main`, which never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        child_main(None, work);
    }
    LATEST_FORK_USEC.store(started.elapsed().as_micros() as u64, Ordering::Relaxed);
    TOTAL_FORKS.fetch_add(1, Ordering::Relaxed);
    Ok(pid)
}

/// Reaps the children of `pids` that have ended (waitpid with WNOHANG) and drops them.
pub fn reap_detached(pids: &mut Vec<libc::pid_t>) {
    pids.retain(|&pid| {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid on our own child with a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        r == 0
    });
}

/// Stops every child of `pids` (SIGKILL, as Valkey stops its debugging sessions) and
/// reaps it.
pub fn kill_detached(pids: &mut Vec<libc::pid_t>) {
    for pid in pids.drain(..) {
        // SAFETY: signalling and reaping our own child; the status pointer may be null.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
}

fn child_main(write_end: Option<OwnedFd>, work: impl FnOnce() -> bool) -> ! {
    // The parent's signal handlers (SIGTERM, SIGINT schedule a shutdown) mean nothing
    // here: these signals, and SIGUSR1 (`kill_and_reap`), end the child.
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGUSR1] {
        // SAFETY: restoring a signal's default disposition has no preconditions.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    // A panic in `work` (with unwinding builds) must not unwind into the parent's frames.
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or(false);
    if let Some(write_end) = write_end {
        let msg = private_dirty_bytes().to_le_bytes();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&write_end);
        // SAFETY: writing a local buffer to a descriptor we own; a short or failed write
        // only loses the report.
        unsafe {
            libc::write(fd, msg.as_ptr().cast(), msg.len());
        }
    }
    // SAFETY: `_exit` ends the process at once, without running the parent's handlers.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

/// This process's private dirty memory, bytes: the sum of the `Private_Dirty:` lines of
/// /proc/self/smaps_rollup (or of /proc/self/smaps on kernels without it).
fn private_dirty_bytes() -> u64 {
    smaps_field_bytes("/proc/self/smaps_rollup", "Private_Dirty:")
        .or_else(|| smaps_field_bytes("/proc/self/smaps", "Private_Dirty:"))
        .unwrap_or(0)
}

fn smaps_field_bytes(path: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(sum_field_kb(&text, field) * 1024)
}

/// Sums the kB values of the lines starting with `field` (`Private_Dirty:   12 kB`).
fn sum_field_kb(text: &str, field: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.strip_prefix(field))
        .filter_map(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

impl ForkChild {
    /// Reaps the child if it has ended (waitpid with WNOHANG).
    pub fn try_reap(&mut self, now_ms: i64) -> Option<Reaped> {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid on our own child with a valid out-pointer.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if r == 0 {
            return None;
        }
        let (ok, by_signal) = if r != self.pid {
            // Already reaped elsewhere, or not our child any more.
            (false, None)
        } else if libc::WIFSIGNALED(status) {
            (false, Some(libc::WTERMSIG(status)))
        } else {
            (libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, None)
        };
        Some(Reaped {
            ok,
            cow_bytes: self.read_cow(),
            by_signal,
            elapsed_ms: now_ms - self.started_ms,
        })
    }

    /// Stops the child with SIGUSR1 (which Valkey treats as a deliberate stop, not a
    /// failure) and waits for it.
    pub fn kill_and_reap(self) {
        // SAFETY: signalling and reaping our own child; the status pointer may be null.
        unsafe {
            libc::kill(self.pid, libc::SIGUSR1);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }

    fn read_cow(&mut self) -> u64 {
        let mut buf = [0u8; 8];
        match self.info.read(&mut buf) {
            Ok(8) => u64::from_le_bytes(buf),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaps_lines() {
        let text =
            "Rss:  100 kB\nPrivate_Dirty:   12 kB\nPrivate_Clean: 3 kB\nPrivate_Dirty: 4 kB\n";
        assert_eq!(sum_field_kb(text, "Private_Dirty:"), 16);
        assert_eq!(sum_field_kb("", "Private_Dirty:"), 0);
    }

    fn wait(child: &mut ForkChild) -> Reaped {
        loop {
            if let Some(r) = child.try_reap(child.started_ms + 5) {
                return r;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    #[test]
    fn exit_status_and_cow_report() {
        let before = total_forks();
        let mut ok = spawn(ChildKind::Rdb, 1000, || {
            // Dirty some memory so the report is not zero.
            let v = vec![1u8; 1 << 20];
            std::hint::black_box(&v);
            true
        })
        .unwrap();
        assert_eq!(ok.kind, ChildKind::Rdb);
        let r = wait(&mut ok);
        assert!(r.ok);
        assert_eq!(r.by_signal, None);
        assert_eq!(r.elapsed_ms, 5);
        assert!(r.cow_bytes > 0);
        assert!(total_forks() > before);

        let mut failed = spawn(ChildKind::Aof, 0, || false).unwrap();
        let r = wait(&mut failed);
        assert!(!r.ok);
        assert_eq!(r.by_signal, None);
    }

    #[test]
    fn killed_child() {
        let child = spawn(ChildKind::Rdb, 0, || {
            std::thread::sleep(std::time::Duration::from_secs(30));
            true
        })
        .unwrap();
        let pid = child.pid;
        child.kill_and_reap();
        // Reaped: no such child any more.
        // SAFETY: waitpid with a null status pointer.
        assert_eq!(unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) }, -1);

        let mut child = spawn(ChildKind::Rdb, 0, || {
            std::thread::sleep(std::time::Duration::from_secs(30));
            true
        })
        .unwrap();
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.pid, libc::SIGKILL) };
        let r = wait(&mut child);
        assert!(!r.ok);
        assert_eq!(r.by_signal, Some(libc::SIGKILL));
    }
}
