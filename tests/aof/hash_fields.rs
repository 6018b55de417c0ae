//! Hash field expiration in the AOF, against Valkey 9.1: the same commands give the same
//! log (relative times made absolute, past times and expiry as HDEL, an emptied hash as
//! MULTI/HDEL/UNLINK/EXEC), a rewrite writes HSETEX ... PXAT per volatile field, and a
//! restart from the rewritten directory gives the same fields and times.

use std::time::{Duration, Instant};

use super::common::{int, Client, Val};
use super::harness::*;

/// The commands both servers run, in order.
const SCRIPT: &[&[&str]] = &[
    &["HSET", "k", "a", "1", "b", "2", "c", "3", "d", "4"],
    &["HEXPIRE", "k", "100", "FIELDS", "2", "a", "zz"],
    &["HPEXPIRE", "k", "100000", "FIELDS", "1", "b"],
    &["HEXPIREAT", "k", "4000000000", "FIELDS", "1", "c"],
    &["hpexpireat", "k", "4000000000000", "fields", "1", "d"],
    &["HEXPIRE", "k", "100", "NX", "FIELDS", "1", "a"],
    &["HEXPIRE", "k", "200", "NX", "FIELDS", "3", "a", "b", "zz"],
    &["HPERSIST", "k", "FIELDS", "2", "a", "zz"],
    &["HEXPIRE", "k", "0", "FIELDS", "2", "a", "zz"],
    &["HSETEX", "k", "EX", "100", "FIELDS", "2", "x", "1", "y", "2"],
    &["HSETEX", "k", "FIELDS", "1", "z", "1"],
    &["HSETEX", "k", "KEEPTTL", "FIELDS", "1", "x", "5"],
    &["HSETEX", "k", "PX", "0", "FIELDS", "2", "x", "5", "new", "6"],
    &["HSETEX", "k", "FXX", "EX", "100", "FIELDS", "1", "nosuch", "1"],
    &["HGETEX", "k", "EX", "50", "FIELDS", "3", "y", "nosuch", "y"],
    &["HGETEX", "k", "PERSIST", "FIELDS", "2", "y", "z"],
    &["HGETEX", "k", "PERSIST", "FIELDS", "1", "z"],
    &["HGETEX", "k", "FIELDS", "1", "z"],
    &["HGETEX", "k", "EX", "0", "FIELDS", "1", "y"],
    &["HGETDEL", "k", "FIELDS", "2", "z", "nosuch"],
    &["HSET", "j3", "a", "1"],
    &["HSETEX", "j3", "PX", "0", "FIELDS", "1", "a", "2"],
    &["HSET", "j", "a", "1", "b", "2"],
    &["HPEXPIRE", "j", "20", "FIELDS", "1", "a"],
];

/// Run once active expiry took j's field: j2 expires whole.
const SCRIPT_AFTER: &[&[&str]] = &[
    &["HPEXPIRE", "j2", "20", "FIELDS", "1", "a"],
    &["HSET", "j2", "a", "1"],
    &["HPEXPIRE", "j2", "20", "FIELDS", "1", "a"],
];

/// The log with the times taken from the clock (13-digit numbers near now) as `<t>`.
fn normalized(log: &[u8]) -> String {
    let text = String::from_utf8_lossy(log);
    let now = now_ms();
    let mut out = String::new();
    for line in text.split("\r\n") {
        let near_now =
            line.len() == 13 && line.parse::<i64>().is_ok_and(|t| (t - now).abs() < 10_000_000);
        out.push_str(if near_now { "<t>" } else { line });
        out.push('|');
    }
    out
}

/// Runs the script on `kind` with its AOF on; the directory and the server.
fn run(kind: Kind) -> (TempDir, common_server::Server) {
    let dir = TempDir::new("aof-hfe");
    let s = aof_on(kind, &dir, &["--aof-use-rdb-preamble", "no", "--appendfsync", "always"]);
    let mut c = Client::connect(s.port);
    for cmd in SCRIPT {
        c.cmd(cmd);
    }
    // Active expiry removes j's field, then j2 whole.
    let wait = |c: &mut Client, what: &[&str], want: Val| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while c.cmd(what) != want {
            assert!(Instant::now() < deadline, "{kind:?}: active field expiry did not run");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait(&mut c, &["HLEN", "j"], int(1));
    for cmd in SCRIPT_AFTER {
        c.cmd(cmd);
    }
    wait(&mut c, &["EXISTS", "j2"], int(0));
    (dir, s)
}

use super::common as common_server;

#[test]
fn field_ttl_commands_are_logged_as_valkey_9_logs_them() {
    let (our_dir, ours) = run(Kind::Ours);
    let (their_dir, theirs) = run(Kind::Valkey);
    let our_log = normalized(&std::fs::read(last_incr(&our_dir)).unwrap());
    let their_log = normalized(&std::fs::read(last_incr(&their_dir)).unwrap());
    assert_eq!(our_log, their_log);
    // A rewrite, then a restart from it, keeps every field and time.
    let mut c = Client::connect(ours.port);
    c.cmd(&["BGREWRITEAOF"]);
    wait_rewrite_done(&mut c);
    let base = manifest(&our_dir)[0].0.clone();
    let base = std::fs::read(our_dir.join(AOF_DIR).join(base)).unwrap();
    assert!(contains(&base, b"HSETEX\r\n$1\r\nk\r\n$4\r\nPXAT\r\n"), "{}", normalized(&base));
    let before = snapshot(&mut c);
    shutdown(ours);
    let ours = aof_on(Kind::Ours, &our_dir, &["--aof-use-rdb-preamble", "no"]);
    let mut c = Client::connect(ours.port);
    assert_same("after a rewrite and a restart", &before, &snapshot(&mut c), 0);
    // Valkey's data agrees, times taken from the clock aside.
    let mut v = Client::connect(theirs.port);
    let blank = |s: Snapshot| -> Vec<_> {
        s.into_iter().map(|(k, (v, t))| (k, blank_times(v), t)).collect()
    };
    assert_eq!(blank(before), blank(snapshot(&mut v)));
}

/// `v` with the times near now (relative ones, which differ by a few ms between the two
/// servers) as 0.
fn blank_times(v: Val) -> Val {
    match v {
        Val::Int(t) if (t - now_ms()).abs() < 10_000_000 => Val::Int(0),
        Val::Array(items) => Val::Array(items.into_iter().map(blank_times).collect()),
        other => other,
    }
}
