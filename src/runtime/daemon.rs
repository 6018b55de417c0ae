//! `daemonize yes`: detach from the terminal the way Valkey does (fork, setsid, stdio to
//! /dev/null). Called before any thread is started.

use std::io;

/// Fork; the parent exits, the child becomes a session leader with stdio on /dev/null.
pub fn daemonize() -> io::Result<()> {
    // SAFETY: called from main before any other thread exists, so fork duplicates only this
    // thread and the child may keep running Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        std::process::exit(0);
    }
    // SAFETY: setsid has no memory-safety preconditions.
    unsafe {
        libc::setsid();
    }
    let devnull = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null")?;
    use std::os::fd::AsRawFd;
    let fd = devnull.as_raw_fd();
    for target in 0..3 {
        // SAFETY: fd is an open descriptor; dup2 onto 0..2 replaces stdio.
        unsafe {
            libc::dup2(fd, target);
        }
    }
    Ok(())
}
