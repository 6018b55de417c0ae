//! Damaged directories: truncated tails (cut back or refused), bad formats and manifests,
//! a crash in the middle of a rewrite, a rewrite child killed by a signal.

use std::process::Command;

use super::harness::*;
use crate::common::{bulk, info_field, info_int, int, Client, Val};

// ---------------------------------------------------------------------------------------
// Truncated and damaged files

/// A directory holding an AOF of a few keys (closed cleanly), and its contents.
fn small_aof() -> (TempDir, Snapshot) {
    let dir = TempDir::new("aof-damage");
    let s = aof_on(Kind::Ours, &dir, &[]);
    let mut c = Client::connect(s.port);
    for i in 0..50 {
        w(&mut c, &["SET", &format!("k{i}"), &format!("v{i}")]);
    }
    w(&mut c, &["RPUSH", "list", "a", "b", "c"]);
    let before = snapshot(&mut c);
    shutdown(s);
    (dir, before)
}

#[test]
fn a_truncated_tail_is_cut_back_or_refused() {
    let (dir, before) = small_aof();
    let incr = last_incr(&dir);
    let whole = file_len(&incr);
    append(&incr, b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$5\r\nab");
    let strict = copy_dir(&dir, "aof-strict");
    let theirs = copy_dir(&dir, "aof-truncated-redis");
    // aof-load-truncated no: refused, by both.
    for kind in [Kind::Ours, Kind::Redis] {
        let log = start_fails(kind, &strict, &["--aof-load-truncated", "no"]);
        assert!(
            log.contains("Unexpected end of file reading the append only file"),
            "{kind:?}: {log}"
        );
    }
    // yes: everything before the cut, the file cut back, later writes appended cleanly.
    for (kind, d) in [(Kind::Ours, &dir), (Kind::Redis, &theirs)] {
        let s = aof_on(kind, d, &["--aof-load-truncated", "yes"]);
        let mut c = Client::connect(s.port);
        assert_same(&format!("{kind:?} truncated"), &before, &snapshot(&mut c), 0);
        assert_eq!(file_len(&last_incr(d)), whole, "{kind:?}: the file was not cut back");
        w(&mut c, &["SET", "after", "1"]);
        shutdown(s);
        let s = aof_on(kind, d, &[]);
        let mut c = Client::connect(s.port);
        let mut want = before.clone();
        want.insert((0, "after".into()), (bulk("1"), -1));
        assert_same(&format!("{kind:?} after the cut"), &want, &snapshot(&mut c), 0);
        drop(s);
    }
    // A transaction without its EXEC at the end is dropped, the file cut before its MULTI.
    for (kind, d) in [(Kind::Ours, &dir), (Kind::Redis, &theirs)] {
        let incr = last_incr(d);
        let whole = file_len(&incr);
        append(&incr, &[resp(&["MULTI"]), resp(&["SET", "in-multi", "1"])].concat());
        let s = aof_on(kind, d, &[]);
        let mut c = Client::connect(s.port);
        assert_eq!(c.cmd(&["EXISTS", "in-multi"]), int(0), "{kind:?}");
        assert_eq!(file_len(&incr), whole, "{kind:?}: not cut back before the MULTI");
        w(&mut c, &["SET", "after-multi", "1"]);
        shutdown(s);
        let s = aof_on(kind, d, &[]);
        let mut c = Client::connect(s.port);
        assert_eq!(
            c.cmd(&["MGET", "after", "after-multi"]),
            Val::Array(vec![bulk("1"), bulk("1")])
        );
        drop(s);
    }
}

/// A tail cut anywhere inside the last command: everything before it loads, the file is
/// cut back to the last whole command.
#[test]
fn a_tail_cut_at_any_byte_is_cut_back() {
    let (dir, before) = small_aof();
    let incr = last_incr(&dir);
    let whole = std::fs::read(&incr).unwrap();
    let tail = resp(&["SET", "tail", "value"]);
    for cut in 1..=tail.len() {
        std::fs::write(&incr, [&whole[..], &tail[..cut]].concat()).unwrap();
        let s = aof_on(Kind::Ours, &dir, &["--aof-load-truncated", "yes"]);
        let mut c = Client::connect(s.port);
        let exists = c.cmd(&["EXISTS", "tail"]);
        let len = c.cmd(&["DBSIZE"]).as_int();
        drop(s);
        let cut_back = file_len(&incr) as usize;
        if cut == tail.len() {
            assert_eq!((exists, cut_back), (int(1), whole.len() + cut), "the whole command");
        } else {
            assert_eq!((exists, cut_back), (int(0), whole.len()), "cut after {cut} bytes");
        }
        assert_eq!(len as usize, before.len() + usize::from(cut == tail.len()));
    }
}

#[test]
fn bad_format_and_bad_manifests_refuse_to_start() {
    let (dir, _) = small_aof();
    let incr = last_incr(&dir);
    let bytes = std::fs::read(&incr).unwrap();
    let set = resp(&["SET", "k25", "v25"]);
    let at = bytes.windows(set.len()).position(|w| w == set).expect("a SET in the middle");
    let mut damaged = bytes[..at].to_vec();
    damaged.extend_from_slice(b"garbage\r\n");
    damaged.extend_from_slice(&bytes[at..]);
    std::fs::write(&incr, &damaged).unwrap();
    for kind in [Kind::Ours, Kind::Redis] {
        for truncated in ["yes", "no"] {
            let log = start_fails(kind, &dir, &["--aof-load-truncated", truncated]);
            assert!(
                log.contains("Bad file format reading the append only file"),
                "{kind:?}: {log}"
            );
        }
    }
    std::fs::write(&incr, &bytes).unwrap();
    let m = dir.join(MANIFEST);
    let good = std::fs::read(&m).unwrap();
    let invalid = "Invalid AOF manifest file format";
    for (bad, why) in [
        (b"garbage\n".to_vec(), invalid),
        (b"file appendonly.aof.1.base.rdb seq x type b\n".to_vec(), invalid),
        (
            [&good[..], b"file appendonly.aof.1.base.rdb seq 1 type b\n"].concat(),
            "Found duplicate base file information",
        ),
        (
            [&good[..], b"file appendonly.aof.9.incr.aof seq 9 type i\n"].concat(),
            "Unable to obtain the AOF file appendonly.aof.9.incr.aof length",
        ),
    ] {
        std::fs::write(&m, &bad).unwrap();
        for kind in [Kind::Ours, Kind::Redis] {
            let log = start_fails(kind, &dir, &[]);
            assert!(log.contains(why), "{kind:?}, manifest {:?}: {log}", bad.escape_ascii());
        }
    }
    std::fs::write(&m, &good).unwrap();
    let s = aof_on(Kind::Ours, &dir, &[]);
    assert_eq!(Client::connect(s.port).cmd(&["GET", "k25"]), bulk("v25"));
    drop(s);
}

/// A server killed during a rewrite: its manifest names the old base and both incr files,
/// which replay to everything; a cut in the first incr (not the last file) is fatal even
/// with aof-load-truncated yes.
#[test]
fn a_crash_during_a_rewrite_leaves_a_loadable_directory() {
    for kind in [Kind::Ours, Kind::Redis] {
        let dir = TempDir::new("aof-crash-rewrite");
        let mut s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        many_keys(&mut c, "k:", 20000);
        let replies = pipeline(&mut c, &[&["BGREWRITEAOF"], &["SET", "during", "1"]]);
        assert_eq!(replies[1], b"+OK\r\n");
        s.child.kill().unwrap();
        s.child.wait().unwrap();
        drop(s);
        let m = manifest(&dir);
        let incrs: Vec<&str> = m.iter().filter(|f| f.2 == "i").map(|f| f.0.as_str()).collect();
        assert_eq!(incrs.len(), 2, "{kind:?}: {m:?}");
        let s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        assert_eq!(c.cmd(&["DBSIZE"]), int(20001), "{kind:?}");
        assert_eq!(c.cmd(&["GET", "during"]), bulk("1"));
        shutdown(s);
        let first = dir.join(AOF_DIR).join(incrs[0]);
        let len = file_len(&first);
        std::fs::OpenOptions::new().write(true).open(&first).unwrap().set_len(len - 3).unwrap();
        let log = start_fails(kind, &dir, &["--aof-load-truncated", "yes"]);
        assert!(log.contains("the truncated file is not the last file"), "{kind:?}: {log}");
    }
}

/// The pid of the fork child of the server `pid` (None when it has none).
fn child_of(pid: u32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    text.split_whitespace().next().map(str::to_string)
}

/// A rewrite child killed by a signal: the status and counters say so, its file is removed,
/// the data is intact, and the next rewrite succeeds.
#[test]
fn a_killed_rewrite_child_fails_cleanly() {
    let mut stories = Vec::new();
    for kind in [Kind::Redis, Kind::Ours] {
        let mut story = Vec::new();
        let dir = TempDir::new("aof-killed-child");
        let s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        // Enough data for the child to run a while (incompressible values).
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..160 {
            let value: Vec<u8> = (0..400_000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            wb(&mut c, &[b"SET", format!("big:{i}").as_bytes(), &value]);
        }
        assert_eq!(
            c.cmd(&["BGREWRITEAOF"]).as_str(),
            "Background append only file rewriting started"
        );
        let pid = child_of(s.child.id()).expect("a rewrite child");
        let killed = Command::new("kill").args(["-9", &pid]).status().expect("kill");
        assert!(killed.success());
        wait_until("the child to be reaped", || {
            info_int(&mut c, "persistence", "aof_rewrite_in_progress") == 0
        });
        for f in ["aof_last_bgrewrite_status", "aof_rewrites_consecutive_failures", "aof_rewrites"]
        {
            story.push(format!("{f}:{}", info_field(&mut c, "persistence", f)));
        }
        let top: Vec<String> =
            listing_of(&dir).into_iter().filter(|f| f.starts_with("temp")).collect();
        story.push(format!("temp files: {top:?}"));
        story.push(std::fs::read_to_string(dir.join(MANIFEST)).unwrap());
        w(&mut c, &["SET", "after", "1"]);
        w(&mut c, &["BGREWRITEAOF"]);
        wait_rewrite_done(&mut c);
        for f in ["aof_last_bgrewrite_status", "aof_rewrites_consecutive_failures", "aof_rewrites"]
        {
            story.push(format!("{f}:{}", info_field(&mut c, "persistence", f)));
        }
        story.push(wait_history_gone(&dir).join(" "));
        let before = snapshot(&mut c);
        shutdown(s);
        let s = aof_on(kind, &dir, &[]);
        assert_same(&format!("{kind:?}"), &before, &snapshot(&mut Client::connect(s.port)), 0);
        drop(s);
        stories.push(story);
    }
    assert_eq!(
        stories[0][..2],
        ["aof_last_bgrewrite_status:err", "aof_rewrites_consecutive_failures:1"]
    );
    assert_eq!(stories[1], stories[0]);
}
