//! When saving fails, and the debugging commands around the RDB file: writes refused after
//! a failed background save (stop-writes-on-bgsave-error), SHUTDOWN refusing to exit when
//! its final save fails, DEBUG RELOAD and DEBUG POPULATE, and the fork statistics of INFO.
//! Checked against redis-server 7.0 in the same test where the behaviour is shared.
//!
//! A save is made to fail by putting a directory where the RDB file goes (after start-up,
//! which would refuse to load it): the final rename fails, even for root.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::diff::Pair;
use common::{bulk, contents, int, start, Client, Server, Val};

const SAVE_POINTS: &[&str] = &["--save", "3600 1", "--enable-debug-command", "yes"];

/// Redis 7.0 names itself where Valkey (and ferrokey) say Valkey, and its DEBUG RELOAD
/// load error lacks the advice Valkey added.
fn valkey_wording(v: Val) -> Val {
    match v {
        Val::Err(e) if e == "ERR Error trying to load the RDB dump" => {
            Val::Err(format!("{e}, check server logs."))
        }
        Val::Err(e) => Val::Err(e.replace("Redis", "Valkey")),
        other => other,
    }
}

fn block_rdb_file(dir: &Path) {
    std::fs::create_dir_all(dir.join("dump.rdb").join("blocker")).unwrap();
}

fn unblock_rdb_file(dir: &Path) {
    std::fs::remove_dir_all(dir.join("dump.rdb")).unwrap();
}

fn wait_bgsave_done(c: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while common::info_int(c, "persistence", "rdb_bgsave_in_progress") != 0 {
        assert!(Instant::now() < deadline, "BGSAVE never finished");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn bgsave_and_wait(c: &mut Client) {
    assert_eq!(c.cmd(&["BGSAVE"]), Val::Simple("Background saving started".into()));
    wait_bgsave_done(c);
}

fn misconf() -> Val {
    Val::Err(
        "MISCONF Valkey is configured to save RDB snapshots, but it's currently unable to \
         persist to disk. Commands that may modify the data set are disabled, because this \
         instance is configured to report errors during writes if RDB snapshotting fails \
         (stop-writes-on-bgsave-error option). Please check the Valkey logs for details about \
         the RDB error."
            .into(),
    )
}

/// The `rejected_calls=N` part of a commandstats line.
fn rejected_calls(line: &str) -> String {
    line.split(',').find(|f| f.starts_with("rejected_calls=")).unwrap_or_default().to_string()
}

/// The fork child of the server process `pid` (read from /proc).
fn fork_child_of(pid: u32) -> libc::pid_t {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    let mut kids = text.split_whitespace().map(|p| p.parse::<libc::pid_t>().unwrap());
    let child = kids.next().expect("no child process");
    assert!(kids.next().is_none(), "more than one child: {text}");
    child
}

fn wait_exit(s: &mut Server) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = s.child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn a_failed_bgsave_refuses_writes_until_a_good_one() {
    let mut p = Pair::start(2, SAVE_POINTS);
    p.same_lines(&["SET a 1", "RPUSH l x"]);
    block_rdb_file(&p.ours.dir);
    block_rdb_file(&p.theirs.dir);
    for c in [&mut p.a, &mut p.b] {
        bgsave_and_wait(c);
        assert_eq!(common::info_field(c, "persistence", "rdb_last_bgsave_status"), "err");
        assert_eq!(common::info_int(c, "persistence", "rdb_saves"), 1);
    }
    assert_eq!(p.a.cmd(&["SET", "b", "2"]), misconf());
    assert_eq!(valkey_wording(p.b.cmd(&["SET", "b", "2"])), misconf());
    // Writes and PING are refused; reads and the rest are not.
    for line in [
        "SET b 2",
        "PING",
        "PING hello",
        "DEL a",
        "LPUSH l y",
        "FLUSHALL",
        "EXPIRE a 100",
        "GET a",
        "LRANGE l 0 -1",
        "ECHO x",
        "DBSIZE",
        "CONFIG SET maxmemory-policy noeviction",
        // A transaction: the refused write fails it, as an unknown command would.
        "MULTI",
        "GET a",
        "SET c 3",
        "PING",
        "EXEC",
        "MULTI",
        "GET a",
        "EXEC",
        "GET b",
    ] {
        p.same_normalized(line, valkey_wording);
    }
    // Counted as rejected calls and as MISCONF errors, as redis-server counts them.
    for field in ["cmdstat_set", "cmdstat_ping", "cmdstat_exec"] {
        let ours = rejected_calls(&common::info_field(&mut p.a, "commandstats", field));
        let theirs = rejected_calls(&common::info_field(&mut p.b, "commandstats", field));
        assert_eq!(ours, theirs, "{field}");
    }
    let ours = common::info_field(&mut p.a, "errorstats", "errorstat_MISCONF");
    assert_eq!(ours, common::info_field(&mut p.b, "errorstats", "errorstat_MISCONF"));
    // A good BGSAVE lifts it.
    unblock_rdb_file(&p.ours.dir);
    unblock_rdb_file(&p.theirs.dir);
    for c in [&mut p.a, &mut p.b] {
        bgsave_and_wait(c);
        assert_eq!(common::info_field(c, "persistence", "rdb_last_bgsave_status"), "ok");
        assert_eq!(common::info_int(c, "persistence", "rdb_saves"), 2);
    }
    p.same_lines(&["SET b 2", "PING", "GET b"]);
}

#[test]
fn the_refusal_needs_save_points_and_the_option() {
    let s = start(SAVE_POINTS);
    let mut c = Client::connect(s.port);
    block_rdb_file(&s.dir);
    bgsave_and_wait(&mut c);
    assert_eq!(c.cmd(&["SET", "k", "v"]), misconf());
    assert_eq!(c.cmd(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    assert_eq!(c.cmd(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"]), Val::ok());
    assert_eq!(c.cmd(&["PING"]), misconf());
    // Without save points nothing is refused either.
    assert_eq!(c.cmd(&["CONFIG", "SET", "save", ""]), Val::ok());
    assert_eq!(c.cmd(&["SET", "k", "v2"]), Val::ok());
    assert_eq!(c.cmd(&["CONFIG", "SET", "save", "3600 1"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "k", "v3"]), misconf());
    // A failed SAVE answers a bare -ERR and counts; a good one lifts the refusal.
    assert_eq!(c.cmd(&["SAVE"]), Val::Err("ERR".into()));
    assert_eq!(common::info_int(&mut c, "persistence", "rdb_saves"), 2);
    unblock_rdb_file(&s.dir);
    assert_eq!(c.cmd(&["SAVE"]), Val::ok());
    assert_eq!(common::info_field(&mut c, "persistence", "rdb_last_bgsave_status"), "ok");
    assert_eq!(c.cmd(&["SET", "k", "v3"]), Val::ok());
}

#[test]
fn shutdown_is_refused_when_its_save_fails() {
    let mut p = Pair::start(2, SAVE_POINTS);
    p.same_line("SET a 1");
    block_rdb_file(&p.ours.dir);
    block_rdb_file(&p.theirs.dir);
    for line in
        ["SHUTDOWN", "SHUTDOWN SAVE", "SHUTDOWN NOW", "SHUTDOWN ABORT", "SHUTDOWN SAVE NOSAVE"]
    {
        p.same_line(line);
    }
    assert_eq!(
        p.a.cmd(&["SHUTDOWN"]),
        Val::Err("ERR Errors trying to SHUTDOWN. Check logs.".into())
    );
    // Still serving (and the failed final save is not a BGSAVE failure: writes go on).
    p.same_lines(&["GET a", "SET b 2"]);
    // NOSAVE exits whatever the file.
    for (c, s) in [(&mut p.a, &mut p.ours), (&mut p.b, &mut p.theirs)] {
        c.send(&[b"SHUTDOWN", b"NOSAVE"]);
        assert!(c.is_closed());
        assert!(wait_exit(s), "NOSAVE did not exit");
    }

    // FORCE exits though the save fails.
    let mut s = start(SAVE_POINTS);
    let mut c = Client::connect(s.port);
    block_rdb_file(&s.dir);
    c.send(&[b"SHUTDOWN", b"FORCE"]);
    assert!(c.is_closed());
    assert!(wait_exit(&mut s), "FORCE did not exit");

    // Without save points the default SHUTDOWN does not save, so nothing can fail.
    let mut s = start(&[]);
    let mut c = Client::connect(s.port);
    block_rdb_file(&s.dir);
    c.send(&[b"SHUTDOWN"]);
    assert!(c.is_closed());
    assert!(wait_exit(&mut s), "SHUTDOWN did not exit");
}

#[test]
fn shutdown_saves_after_stopping_a_bgsave() {
    let dir = common::unique_dir("shutdown-bgsave");
    let d = dir.to_str().unwrap();
    let mut s = start(&["--dir", d, "--save", "3600 1"]);
    let mut c = Client::connect(s.port);
    for i in 0..2000 {
        c.cmd(&["SET", &format!("k{i}"), &"v".repeat(100)]);
    }
    assert_eq!(c.cmd(&["BGSAVE"]), Val::Simple("Background saving started".into()));
    c.send(&[b"SHUTDOWN"]);
    assert!(c.is_closed());
    assert!(wait_exit(&mut s));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("temp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    drop(s);
    let s = start(&["--dir", d]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["DBSIZE"]), int(2000));
    drop(s);
    let _ = std::fs::remove_dir_all(dir);
}

fn fill(c: &mut Client) {
    c.cmd(&["SET", "str", "hello"]);
    c.cmd(&["SET", "int", "12345"]);
    c.cmd(&["SET", "ttl", "v", "PX", "100000000"]);
    c.cmd(&["HSET", "hash", "a", "1", "b", "2"]);
    c.cmd(&["RPUSH", "list", "a", "b", "c"]);
    c.cmd(&["SADD", "set", "x", "y"]);
    c.cmd(&["SADD", "intset", "1", "2", "3"]);
    c.cmd(&["ZADD", "zset", "1.5", "a", "2", "b"]);
    for i in 0..300 {
        c.cmd(&["HSET", "bighash", &format!("f{i}"), &"v".repeat(i % 70)]);
        c.cmd(&["ZADD", "bigzset", &i.to_string(), &format!("m{i}")]);
        c.cmd(&["SADD", "bigset", &format!("m{i}")]);
    }
    c.cmd(&["HSET", "ttlhash", "f", "v"]);
    c.cmd(&["EXPIRE", "ttlhash", "5000"]);
    c.cmd(&["SELECT", "2"]);
    c.cmd(&["SET", "other-db", "x"]);
    c.cmd(&["SELECT", "0"]);
}

const KEYS: &[&str] = &[
    "str", "int", "ttl", "hash", "list", "set", "intset", "zset", "bighash", "bigzset", "bigset",
    "ttlhash",
];

fn snapshot(c: &mut Client) -> Vec<(Val, Val, Val)> {
    KEYS.iter()
        .map(|k| (contents(c, k), c.cmd(&["TYPE", k]), c.cmd(&["OBJECT", "ENCODING", k])))
        .collect()
}

#[test]
fn debug_reload_keeps_every_type_and_ttl() {
    let s = start(&["--enable-debug-command", "yes"]);
    let mut c = Client::connect(s.port);
    fill(&mut c);
    let before = snapshot(&mut c);
    let pttl = c.cmd(&["PTTL", "ttl"]).as_int();
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]), Val::ok());
    assert_eq!(snapshot(&mut c), before);
    let after = c.cmd(&["PTTL", "ttl"]).as_int();
    assert!(after <= pttl && after > pttl - 10_000, "{pttl} -> {after}");
    assert!(c.cmd(&["TTL", "ttlhash"]).as_int() > 4000);
    assert_eq!(c.cmd(&["TTL", "str"]), int(-1));
    assert_eq!(c.cmd(&["DBSIZE"]), int(KEYS.len() as i64));
    c.cmd(&["SELECT", "2"]);
    assert_eq!(c.cmd(&["GET", "other-db"]), bulk("x"));
    c.cmd(&["SELECT", "0"]);
    assert_eq!(common::info_int(&mut c, "persistence", "rdb_last_load_keys_loaded"), 13);
    assert_eq!(common::info_int(&mut c, "persistence", "rdb_changes_since_last_save"), 0);

    // NOSAVE loads the file as it is: later changes go.
    c.cmd(&["SET", "str", "changed"]);
    c.cmd(&["SET", "new", "1"]);
    assert_eq!(c.cmd(&["DEBUG", "RELOAD", "NOSAVE"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "str"]), bulk("hello"));
    assert_eq!(c.cmd(&["EXISTS", "new"]), int(0));

    // NOFLUSH keeps what is there; a key in both is an error without MERGE.
    c.cmd(&["SET", "new", "1"]);
    assert_eq!(
        c.cmd(&["DEBUG", "RELOAD", "NOSAVE", "NOFLUSH"]),
        Val::Err("ERR Error trying to load the RDB dump, check server logs.".into())
    );
    assert_eq!(c.cmd(&["GET", "new"]), bulk("1"));
    c.cmd(&["SET", "str", "changed"]);
    assert_eq!(c.cmd(&["DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "str"]), bulk("hello"));
    assert_eq!(c.cmd(&["GET", "new"]), bulk("1"));
    assert_eq!(snapshot(&mut c), before);

    // WATCHed keys are touched by the reload.
    let mut w = Client::connect(s.port);
    w.cmd(&["WATCH", "str"]);
    w.cmd(&["MULTI"]);
    w.cmd(&["GET", "str"]);
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]), Val::ok());
    assert_eq!(w.cmd(&["EXEC"]), Val::NilArray);
}

#[test]
fn debug_reload_errors_as_redis() {
    let mut p = Pair::start(2, SAVE_POINTS);
    p.same_lines(&["SET a 1", "DEBUG RELOAD BOGUS", "DEBUG RELOAD NOSAVE MERGE x", "GET a"]);
    // No file yet: the load fails, and the dataset is emptied first.
    for line in ["DEBUG RELOAD NOSAVE", "DBSIZE", "SET a 1"] {
        p.same_normalized(line, valkey_wording);
    }
    block_rdb_file(&p.ours.dir);
    block_rdb_file(&p.theirs.dir);
    p.same_lines(&["DEBUG RELOAD", "GET a", "SET b 2"]);
}

#[test]
fn debug_populate_as_redis() {
    let mut p = Pair::start(2, &["--enable-debug-command", "yes"]);
    p.same_lines(&[
        "SET key:3 mine",
        "DEBUG POPULATE 10",
        "DBSIZE",
        "GET key:0",
        "GET key:9",
        "GET key:3",
        "DEBUG POPULATE 4 p 3",
        "GET p:0",
        "GET p:3",
        "DEBUG POPULATE 3 q 20",
        "STRLEN q:2",
        "GET q:2",
        "DEBUG POPULATE 2 long 0",
        "GET long:1",
        "DEBUG POPULATE 0",
        "DEBUG POPULATE -1",
        "DEBUG POPULATE x",
        "DEBUG POPULATE 1 r -1",
        "DEBUG POPULATE 1 r x",
        "EXISTS r:0",
        "DEBUG POPULATE 1 r 1 extra",
        "DEBUG POPULATE",
        "~KEYS *",
        "SELECT 5",
        "DEBUG POPULATE 2 db5",
        "~KEYS *",
    ]);
    // A long prefix: the key is cut to 127 bytes.
    let prefix = "p".repeat(130);
    p.same(&["DEBUG", "POPULATE", "1", prefix.as_str()]);
    p.same_line("~KEYS *");
    p.same(&["GET", &prefix[..127]]);
    // Help lists both.
    let help = p.a.cmd(&["DEBUG", "HELP"]);
    let lines: Vec<String> = help.as_array().iter().map(Val::as_str).collect();
    assert!(lines.iter().any(|l| l == "POPULATE <count> [<prefix>] [<size>]"), "{lines:?}");
    assert!(lines.iter().any(|l| l == "RELOAD [option ...]"), "{lines:?}");
}

#[test]
fn fork_statistics_and_copy_on_write() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(common::info_int(&mut c, "stats", "total_forks"), 0);
    assert_eq!(common::info_int(&mut c, "stats", "latest_fork_usec"), 0);
    // Enough data that the child takes a while, and writes meanwhile, which the parent's
    // pages copy for the child.
    common::fill_40k(&mut c, "k", 'x');
    let value = "x".repeat(1000);
    assert_eq!(c.cmd(&["BGSAVE"]), Val::Simple("Background saving started".into()));
    // Hold the child still while the parent writes over the pages it shares with it.
    let child = fork_child_of(s.child.id());
    // SAFETY: signalling a process this test started (through the server).
    unsafe { libc::kill(child, libc::SIGSTOP) };
    assert_eq!(common::info_int(&mut c, "persistence", "rdb_bgsave_in_progress"), 1);
    assert_eq!(common::info_int(&mut c, "persistence", "current_save_keys_total"), 40_000);
    assert_eq!(c.cmd(&["BGSAVE"]), Val::Err("ERR Background save already in progress".into()));
    assert_eq!(c.cmd(&["SAVE"]), Val::Err("ERR Background save already in progress".into()));
    for i in 0..20_000 {
        c.cmd(&["SET", &format!("k{}:{}", i % 40, i % 1000), &value]);
    }
    // SAFETY: as above.
    unsafe { libc::kill(child, libc::SIGCONT) };
    wait_bgsave_done(&mut c);
    assert_eq!(common::info_field(&mut c, "persistence", "rdb_last_bgsave_status"), "ok");
    assert_eq!(common::info_int(&mut c, "stats", "total_forks"), 1);
    assert!(common::info_int(&mut c, "stats", "latest_fork_usec") > 0);
    let cow = common::info_int(&mut c, "persistence", "rdb_last_cow_size");
    assert!(cow > 0, "rdb_last_cow_size {cow}");
    assert_eq!(common::info_int(&mut c, "persistence", "current_save_keys_total"), 0);
    // Inside a transaction BGSAVE is scheduled, and the time events start it.
    c.cmd(&["MULTI"]);
    c.cmd(&["BGSAVE"]);
    assert_eq!(
        c.cmd(&["EXEC"]),
        Val::Array(vec![Val::Simple("Background saving scheduled".into())])
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while common::info_int(&mut c, "stats", "total_forks") < 2 {
        assert!(Instant::now() < deadline, "the scheduled BGSAVE never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    wait_bgsave_done(&mut c);
    assert_eq!(common::info_int(&mut c, "persistence", "rdb_saves"), 2);
}
