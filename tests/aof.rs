//! The append-only file, end to end and against redis-server 7.0: every type and expire
//! form survives a restart from the AOF alone; each server loads the other's AOF directory
//! (RDB preamble or commands); BGREWRITEAOF and its manifest, texts and INFO fields;
//! `CONFIG SET appendonly` at run time; automatic rewrites; acknowledged writes survive a
//! SIGKILL under `appendfsync always`; expired and evicted keys logged as DEL; the fsync
//! policies and the size fields of INFO; single rules of the loader and of SHUTDOWN; a
//! `CONFIG SET appendonly yes` that cannot start the AOF (against the Valkey 9.1 oracle).
//!
//! `aof/harness.rs` starts servers on directories and snapshots every key; `aof/fill.rs`
//! writes every type and command form; `aof/damage.rs` holds the damaged-directory tests.

mod common;
#[path = "aof/damage.rs"]
mod damage;
#[path = "aof/fill.rs"]
mod fill;
#[path = "aof/harness.rs"]
mod harness;
#[path = "aof/hash_fields.rs"]
mod hash_fields;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{bulk, info_field, info_int, int, Client, Val};
use fill::{fill, fill_rest, short_lived};
use harness::*;

#[test]
fn every_type_and_expire_form_survives_a_restart_from_the_aof() {
    for preamble in ["yes", "no"] {
        let dir = TempDir::new("aof-roundtrip");
        let args = ["--aof-use-rdb-preamble", preamble];
        let s = aof_on(Kind::Ours, &dir, &args);
        let mut c = Client::connect(s.port);
        prelude(&mut c);
        fill(&mut c, s.port, "a");
        // Half of the data goes into a rewritten base, half stays in the incr file.
        assert_eq!(
            c.cmd(&["BGREWRITEAOF"]).as_str(),
            "Background append only file rewriting started"
        );
        wait_rewrite_done(&mut c);
        fill(&mut c, s.port, "b");
        let before = snapshot(&mut c);
        assert!(before.len() > 100, "{} keys", before.len());
        short_lived(&mut c);
        let written = Instant::now();
        shutdown(s);
        assert!(!dir.join("dump.rdb").exists(), "SHUTDOWN NOSAVE wrote an RDB file");
        let base = &manifest(&dir)[0].0;
        let ext = if preamble == "yes" { ".base.rdb" } else { ".base.aof" };
        assert!(base.ends_with(ext), "base {base} with aof-use-rdb-preamble {preamble}");
        std::thread::sleep(Duration::from_millis(1100).saturating_sub(written.elapsed()));
        let s = aof_on(Kind::Ours, &dir, &args);
        let mut c = Client::connect(s.port);
        let after = snapshot(&mut c);
        assert_same(&format!("restart, preamble {preamble}"), &before, &after, 5000);
        assert_eq!(c.cmd(&["KEYS", "short:*"]), Val::Array(vec![]), "short TTLs came back");
        // The restarted server keeps logging to the same directory.
        w(&mut c, &["SET", "after-restart", "1"]);
        shutdown(s);
        let s = aof_on(Kind::Ours, &dir, &args);
        let mut c = Client::connect(s.port);
        let mut want = before.clone();
        want.insert((0, "after-restart".into()), (bulk("1"), -1));
        assert_same("second restart", &want, &snapshot(&mut c), 8000);
        drop(s);
    }
}

/// Writes, a rewrite, more writes on `kind`; its directory then loads in `other`.
/// The propagation feed of every write command of the table replays to the same dataset:
/// a server logs them all (the AOF is the feed's consumer), and a new one started from the
/// log alone holds what the first held. The test fails when the command table gains a write
/// command that `fill` and `fill_rest` do not run.
#[test]
fn every_write_command_of_the_table_replays_from_the_feed() {
    let dir = TempDir::new("aof-every-write");
    let args = ["--aof-use-rdb-preamble", "no"];
    let s = aof_on(Kind::Ours, &dir, &args);
    let mut c = Client::connect(s.port);
    prelude(&mut c);
    w(&mut c, &["SET", "gone", "1"]);
    w(&mut c, &["FLUSHALL"]);
    fill(&mut c, s.port, "a");
    fill_rest(&mut c, s.port, "a");
    // Every command the table flags `write`, from COMMAND's own answer.
    let writes = common::write_commands(&mut c);
    assert!(writes.len() >= 79, "{} write commands", writes.len());
    let sent = harness::sent_commands();
    let missing: Vec<&String> = writes.iter().filter(|n| !sent.contains(*n)).collect();
    assert!(missing.is_empty(), "write commands never run here: {missing:?}");
    let before = snapshot(&mut c);
    shutdown(s);
    let s = aof_on(Kind::Ours, &dir, &args);
    let mut c = Client::connect(s.port);
    assert_same("replayed from the feed", &before, &snapshot(&mut c), 5000);
    assert_eq!(c.cmd(&["EXISTS", "gone"]), int(0), "FLUSHALL replayed");
    shutdown(s);
}

fn cross_load(kind: Kind, other: Kind, preamble: &str, writer_extra: &[&str]) {
    let dir = TempDir::new("aof-interop");
    let args = ["--aof-use-rdb-preamble", preamble];
    let s = aof_on(kind, &dir, &[&args[..], writer_extra].concat());
    let mut c = Client::connect(s.port);
    prelude(&mut c);
    fill(&mut c, s.port, "a");
    assert_eq!(c.cmd(&["BGREWRITEAOF"]).as_str(), "Background append only file rewriting started");
    wait_rewrite_done(&mut c);
    fill(&mut c, s.port, "b");
    let before = snapshot(&mut c);
    shutdown(s);
    let s = aof_on(other, &dir, &args);
    let mut c = Client::connect(s.port);
    let after = snapshot(&mut c);
    assert_same(&format!("{kind:?} -> {other:?}, preamble {preamble}"), &before, &after, 5000);
    drop(s);
}

#[test]
fn redis_loads_ferrokeys_aof_directory() {
    cross_load(Kind::Ours, Kind::Redis, "yes", &[]);
    cross_load(Kind::Ours, Kind::Redis, "no", &[]);
}

/// Valkey 9.1's directory: its base file (RDB preamble) is a `VALKEY080` RDB.
#[test]
fn ferrokey_loads_valkey_9_aof_directory() {
    cross_load(Kind::Valkey, Kind::Ours, "yes", &[]);
    cross_load(Kind::Valkey, Kind::Ours, "no", &[]);
}

#[test]
fn ferrokey_loads_redis_aof_directory() {
    cross_load(Kind::Redis, Kind::Ours, "yes", &[]);
    // Timestamp annotations (`#TS:...` lines) are skipped by the reader.
    cross_load(Kind::Redis, Kind::Ours, "no", &["--aof-timestamp-enabled", "yes"]);
}

// ---------------------------------------------------------------------------------------
// BGREWRITEAOF

/// What a run of BGREWRITEAOF / BGSAVE does on `kind`: the replies, the manifests and the
/// directory listings along the way.
fn rewrite_story(kind: Kind, preamble: &str) -> Vec<String> {
    let dir = TempDir::new("aof-rewrite");
    let args = ["--aof-use-rdb-preamble", preamble];
    let s = aof_on(kind, &dir, &args);
    let mut c = Client::connect(s.port);
    many_keys(&mut c, "key:", 2000);
    let mut story = vec![std::fs::read_to_string(dir.join(MANIFEST)).unwrap()];
    let initial: Vec<String> = manifest(&dir).into_iter().map(|f| f.0).collect();
    // Twice in a row, writes while the child runs, then a BGSAVE while it runs.
    let replies = pipeline(
        &mut c,
        &[
            &["BGREWRITEAOF"],
            &["BGREWRITEAOF"],
            &["SET", "during", "1"],
            &["RPUSH", "during:list", "a", "b"],
            &["BGSAVE"],
            &["INFO", "persistence"],
        ],
    );
    let (info, replies) = replies.split_last().unwrap();
    story.extend(replies.iter().map(|r| String::from_utf8_lossy(r).into_owned()));
    assert_eq!(field_of(info, "aof_rewrite_in_progress"), "1", "{kind:?}");
    w(&mut c, &["INCR", "during:ctr"]);
    wait_rewrite_done(&mut c);
    assert_eq!(info_int(&mut c, "persistence", "aof_rewrites"), 1, "{kind:?}");
    assert_eq!(info_field(&mut c, "persistence", "aof_last_bgrewrite_status"), "ok");
    story.push(std::fs::read_to_string(dir.join(MANIFEST)).unwrap());
    let files = wait_history_gone(&dir);
    for old in &initial {
        assert!(!files.contains(old), "{kind:?}: {old} was not deleted");
    }
    story.push(files.join(" "));
    // During a BGSAVE: scheduled, and it runs when the BGSAVE is over.
    let replies = pipeline(
        &mut c,
        &[&["BGSAVE"], &["BGREWRITEAOF"], &["SET", "during2", "x"], &["INFO", "persistence"]],
    );
    let (info, replies) = replies.split_last().unwrap();
    story.extend(replies.iter().map(|r| String::from_utf8_lossy(r).into_owned()));
    assert_eq!(field_of(info, "aof_rewrite_scheduled"), "1", "{kind:?}");
    wait_until("the scheduled rewrite", || info_int(&mut c, "persistence", "aof_rewrites") == 2);
    wait_rewrite_done(&mut c);
    story.push(std::fs::read_to_string(dir.join(MANIFEST)).unwrap());
    story.push(wait_history_gone(&dir).join(" "));
    let before = snapshot(&mut c);
    assert_eq!(before.len(), 2004);
    shutdown(s);
    let s = aof_on(kind, &dir, &args);
    let mut c = Client::connect(s.port);
    assert_same(&format!("{kind:?} after rewrites"), &before, &snapshot(&mut c), 0);
    drop(s);
    story
}

#[test]
fn bgrewriteaof_moves_the_base_deletes_history_and_keeps_concurrent_writes() {
    for preamble in ["yes", "no"] {
        let ours = rewrite_story(Kind::Ours, preamble);
        let theirs = rewrite_story(Kind::Redis, preamble);
        assert_eq!(ours, theirs, "preamble {preamble}");
    }
}

// ---------------------------------------------------------------------------------------
// CONFIG SET appendonly

fn config_set_story(kind: Kind) -> Vec<String> {
    let dir = TempDir::new("aof-config");
    let s = start_on(kind, &dir, &[]);
    let mut c = Client::connect(s.port);
    assert_eq!(info_int(&mut c, "persistence", "aof_enabled"), 0);
    prelude(&mut c);
    fill(&mut c, s.port, "a");
    let replies = pipeline(
        &mut c,
        &[&["CONFIG", "SET", "appendonly", "yes"], &["SET", "while-waiting", "1"], &["INCR", "n"]],
    );
    let mut story: Vec<String> =
        replies.iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect();
    wait_rewrite_done(&mut c);
    assert_eq!(info_int(&mut c, "persistence", "aof_enabled"), 1);
    story.push(std::fs::read_to_string(dir.join(MANIFEST)).unwrap());
    story.push(wait_history_gone(&dir).join(" "));
    w(&mut c, &["SET", "after-on", "1"]);
    fill(&mut c, s.port, "b");
    let before = snapshot(&mut c);
    shutdown(s);
    let s = aof_on(kind, &dir, &[]);
    let mut c = Client::connect(s.port);
    assert_same(&format!("{kind:?}: on at run time"), &before, &snapshot(&mut c), 5000);
    // Off: the files stay and nothing more goes in.
    assert_eq!(c.cmd(&["CONFIG", "SET", "appendonly", "no"]), Val::ok());
    assert_eq!(info_int(&mut c, "persistence", "aof_enabled"), 0);
    let files = listing(&dir);
    let incr = last_incr(&dir);
    let len = file_len(&incr);
    w(&mut c, &["SET", "after-off", "1"]);
    w(&mut c, &["DEL", "after-on"]);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(file_len(&incr), len, "{kind:?}: logged after appendonly no");
    assert_eq!(listing(&dir), files);
    story.push(files.join(" "));
    shutdown(s);
    let s = aof_on(kind, &dir, &[]);
    let mut c = Client::connect(s.port);
    assert_same(&format!("{kind:?}: off at run time"), &before, &snapshot(&mut c), 5000);
    drop(s);
    story
}

#[test]
fn config_set_appendonly_at_run_time() {
    assert_eq!(config_set_story(Kind::Ours), config_set_story(Kind::Redis));
}

#[test]
fn automatic_rewrites_on_growth() {
    for kind in [Kind::Ours, Kind::Redis] {
        let dir = TempDir::new("aof-auto");
        let args = ["--auto-aof-rewrite-min-size", "64kb", "--auto-aof-rewrite-percentage", "100"];
        let s = aof_on(kind, &dir, &args);
        let mut c = Client::connect(s.port);
        assert_eq!(info_int(&mut c, "persistence", "aof_rewrites"), 0);
        many_keys(&mut c, "auto:", 1500);
        wait_until("an automatic rewrite", || info_int(&mut c, "persistence", "aof_rewrites") >= 1);
        wait_rewrite_done(&mut c);
        assert!(manifest(&dir)[0].1 >= 2, "{kind:?}: {:?}", manifest(&dir));
        // Small writes after it do not start another.
        w(&mut c, &["SET", "after", "1"]);
        std::thread::sleep(Duration::from_millis(300));
        let n = info_int(&mut c, "persistence", "aof_rewrites");
        let before = snapshot(&mut c);
        shutdown(s);
        assert!(n <= 2, "{kind:?}: {n} rewrites");
        let s = aof_on(kind, &dir, &args);
        let mut c = Client::connect(s.port);
        assert_same(&format!("{kind:?} auto rewrite"), &before, &snapshot(&mut c), 0);
        drop(s);
    }
}

/// After a restart, growth counts from the base file's size (Valkey's
/// `aof_rewrite_base_size`): a large incr file left by the last run makes the next
/// automatic rewrite start right away.
#[test]
fn automatic_rewrite_after_a_restart_counts_growth_from_the_base() {
    for kind in [Kind::Redis, Kind::Ours] {
        let dir = TempDir::new("aof-auto-restart");
        let s = aof_on(kind, &dir, &["--auto-aof-rewrite-percentage", "0"]);
        let mut c = Client::connect(s.port);
        many_keys(&mut c, "k:", 1500);
        shutdown(s);
        let args = ["--auto-aof-rewrite-min-size", "64kb", "--auto-aof-rewrite-percentage", "100"];
        let s = aof_on(kind, &dir, &args);
        let mut c = Client::connect(s.port);
        let deadline = Instant::now() + Duration::from_secs(3);
        while info_int(&mut c, "persistence", "aof_rewrites") == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(info_int(&mut c, "persistence", "aof_rewrites"), 1, "{kind:?}: no rewrite");
        drop(s);
    }
}

// ---------------------------------------------------------------------------------------
// Crash safety under appendfsync always

/// What one client thread sent and had acknowledged.
#[derive(Default, Debug)]
struct Record {
    incr_sent: i64,
    incr_acked: i64,
    /// Indexes of the SET values sent, and of the last one acknowledged.
    set_sent: Vec<usize>,
    set_acked: Option<usize>,
    set_acks: usize,
    push_sent: Vec<usize>,
    push_acked: Vec<usize>,
}

/// Sends INCR / SET / RPUSH one at a time until the server goes away.
fn hammer(port: u16, t: usize) -> Record {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_nodelay(true).ok();
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    let (ctr, key, list) = (format!("ctr:{t}"), format!("set:{t}"), format!("list:{t}"));
    let mut rec = Record::default();
    for i in 0.. {
        let value = format!("v{i}");
        let cmd = match i % 3 {
            0 => resp(&["INCR", &ctr]),
            1 => resp(&["SET", &key, &value]),
            _ => resp(&["RPUSH", &list, &value]),
        };
        match i % 3 {
            0 => rec.incr_sent += 1,
            1 => rec.set_sent.push(i),
            _ => rec.push_sent.push(i),
        }
        if writer.write_all(&cmd).is_err() {
            break;
        }
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(n) if n > 0 && line.ends_with("\r\n") => {}
            _ => break,
        }
        match i % 3 {
            0 => {
                assert_eq!(line, format!(":{}\r\n", rec.incr_acked + 1));
                rec.incr_acked += 1;
            }
            1 => {
                assert_eq!(line, "+OK\r\n");
                rec.set_acked = Some(i);
                rec.set_acks += 1;
            }
            _ => {
                assert_eq!(line, format!(":{}\r\n", rec.push_acked.len() + 1));
                rec.push_acked.push(i);
            }
        }
    }
    rec
}

#[test]
fn acknowledged_writes_survive_sigkill_under_appendfsync_always() {
    const THREADS: usize = 4;
    let dir = TempDir::new("aof-crash");
    let mut s = aof_on(Kind::Ours, &dir, &["--appendfsync", "always"]);
    let port = s.port;
    let records: Vec<Record> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS).map(|t| scope.spawn(move || hammer(port, t))).collect();
        std::thread::sleep(Duration::from_secs(2));
        s.child.kill().expect("SIGKILL");
        s.child.wait().expect("reap");
        handles.into_iter().map(|h| h.join().expect("client thread")).collect()
    });
    drop(s);
    let s = aof_on(Kind::Ours, &dir, &[]);
    let mut c = Client::connect(s.port);
    let (mut acked, mut sent) = (0, 0);
    for (t, rec) in records.iter().enumerate() {
        assert!(rec.incr_acked > 10, "thread {t} barely ran: {rec:?}");
        let n: i64 = c.cmd(&["GET", &format!("ctr:{t}")]).as_str().parse().unwrap();
        assert!(n >= rec.incr_acked && n <= rec.incr_sent, "ctr:{t} = {n}, {rec:?}");
        let v = c.cmd(&["GET", &format!("set:{t}")]).as_str();
        let j: usize = v.strip_prefix('v').and_then(|j| j.parse().ok()).expect("a value sent");
        assert!(rec.set_sent.contains(&j), "set:{t} = {v}");
        assert!(Some(j) >= rec.set_acked, "set:{t} = {v}, last acknowledged {:?}", rec.set_acked);
        let list: Vec<usize> = c
            .cmd(&["LRANGE", &format!("list:{t}"), "0", "-1"])
            .as_array()
            .iter()
            .map(|v| v.as_str()[1..].parse().unwrap())
            .collect();
        assert_eq!(list[..rec.push_acked.len()], rec.push_acked[..], "list:{t}");
        assert_eq!(list[..], rec.push_sent[..list.len()], "list:{t}");
        acked += rec.incr_acked as usize + rec.set_acks + rec.push_acked.len();
        sent += rec.incr_sent as usize + rec.set_sent.len() + rec.push_sent.len();
    }
    println!(
        "{THREADS} clients: {sent} writes sent, {acked} acknowledged, all acknowledged ones found"
    );
    drop(s);
}

// ---------------------------------------------------------------------------------------
// Keys the server removes by itself

#[test]
fn expired_and_evicted_keys_are_logged_as_unlink_or_del() {
    // Valkey 9.1 frees expired and evicted keys lazily by default and logs them as UNLINK
    // (checked against its binary); redis-server 7.0 does not, and logs DEL, as ferrokey
    // does with lazy freeing off.
    let lazy_off = ["--lazyfree-lazy-expire", "no", "--lazyfree-lazy-eviction", "no"];
    for (kind, verb, lazy) in [
        (Kind::Ours, "UNLINK", &[][..]),
        (Kind::Ours, "DEL", &lazy_off[..]),
        (Kind::Redis, "DEL", &[][..]),
    ] {
        let dir = TempDir::new("aof-del");
        // `always`: the log is read while the server runs, and under everysec redis may hold
        // a write back while a background fsync runs.
        let mut args = vec!["--maxmemory-policy", "allkeys-lru", "--appendfsync", "always"];
        args.extend_from_slice(lazy);
        let s = aof_on(kind, &dir, &args);
        let mut c = Client::connect(s.port);
        w(&mut c, &["SET", "gone", "v", "PX", "50"]);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(c.cmd(&["GET", "gone"]), Val::Nil);
        // Never touched again, in another database: the active expiry cycle removes it.
        w(&mut c, &["SELECT", "6"]);
        w(&mut c, &["SET", "gone", "in six", "PX", "50"]);
        w(&mut c, &["SELECT", "0"]);
        w(&mut c, &["SET", "gone", "kept"]);
        wait_until("the active expiry", || info_int(&mut c, "stats", "expired_keys") == 2);
        let log = std::fs::read(last_incr(&dir)).unwrap();
        let del = resp(&[verb, "gone"]);
        assert!(contains(&log, &del), "{kind:?}: no {verb} for the expired key");
        let actively = [resp(&["SELECT", "6"]), del].concat();
        assert!(contains(&log, &actively), "{kind:?}: no {verb} for the actively expired key");
        // Eviction.
        many_keys(&mut c, "old:", 500);
        let used = info_int(&mut c, "memory", "used_memory");
        w(&mut c, &["CONFIG", "SET", "maxmemory", &(used + 40_000).to_string()]);
        many_keys(&mut c, "new:", 500);
        let evicted = info_int(&mut c, "stats", "evicted_keys");
        assert!(evicted > 0, "{kind:?}: nothing evicted");
        // Stop evicting (any command may evict) before reading the log.
        w(&mut c, &["CONFIG", "SET", "maxmemory", "0"]);
        let log = std::fs::read(last_incr(&dir)).unwrap();
        let mut logged = 0;
        for i in 0..500 {
            let k = format!("old:{i}");
            if c.cmd(&["EXISTS", &k]) == int(0) {
                assert!(contains(&log, &resp(&[verb, &k])), "{kind:?}: {k} evicted, no {verb}");
                logged += 1;
            }
        }
        assert!(logged > 0, "{kind:?}: no old key evicted ({evicted} evictions)");
        let before = snapshot(&mut c);
        shutdown(s);
        let s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        assert_same(&format!("{kind:?} after evictions"), &before, &snapshot(&mut c), 0);
        drop(s);
    }
}

// ---------------------------------------------------------------------------------------
// fsync policies and INFO sizes

#[test]
fn every_fsync_policy_keeps_the_data_and_the_sizes_add_up() {
    for kind in [Kind::Redis, Kind::Ours] {
        for policy in ["always", "everysec", "no"] {
            let dir = TempDir::new("aof-fsync");
            let s = aof_on(kind, &dir, &["--appendfsync", policy]);
            let mut c = Client::connect(s.port);
            assert_eq!(info_int(&mut c, "persistence", "aof_enabled"), 1);
            let got = c.cmd(&["CONFIG", "GET", "appendfsync"]).as_array();
            assert_eq!(got, vec![bulk("appendfsync"), bulk(policy)]);
            // redis-server 7.0 reports 0 for both until a restart or a rewrite measures them.
            if kind == Kind::Ours {
                aof_sizes(&mut c, &dir, &format!("{policy}, fresh start"));
            }
            let size0 = info_int(&mut c, "persistence", "aof_current_size");
            many_keys(&mut c, "f:", 300);
            w(&mut c, &["RPUSH", "l", "a"]);
            let size1 = info_int(&mut c, "persistence", "aof_current_size");
            assert!(size1 > size0 + 300 * 20, "{kind:?} {policy}: {size0} -> {size1}");
            if kind == Kind::Ours {
                aof_sizes(&mut c, &dir, &format!("{policy}, after writes"));
            }
            let before = snapshot(&mut c);
            shutdown(s);
            let s = aof_on(kind, &dir, &["--appendfsync", policy]);
            let mut c = Client::connect(s.port);
            assert_same(&format!("{kind:?} {policy}"), &before, &snapshot(&mut c), 0);
            aof_sizes(&mut c, &dir, &format!("{kind:?} {policy}, after a restart"));
            drop(s);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The directory's layout in less common paths, file for file with redis-server 7.0

fn layout_story(kind: Kind) -> Vec<String> {
    let mut story = Vec::new();
    // Custom names; CONFIG SET appendonly yes during a BGSAVE waits for it.
    let dir = TempDir::new("aof-layout");
    let names = ["--appendfilename", "my.aof", "--appenddirname", "mydir"];
    let s = start_on(kind, &dir, &names);
    let mut c = Client::connect(s.port);
    many_keys(&mut c, "k:", 300);
    let replies = pipeline(
        &mut c,
        &[
            &["BGSAVE"],
            &["CONFIG", "SET", "appendonly", "yes"],
            &["SET", "during", "1"],
            &["INFO", "persistence"],
        ],
    );
    let (info, replies) = replies.split_last().unwrap();
    story.extend(replies.iter().map(|r| String::from_utf8_lossy(r).into_owned()));
    story.push(field_of(info, "aof_rewrite_scheduled"));
    wait_rewrite_done(&mut c);
    let m = std::fs::read_to_string(dir.join("mydir/my.aof.manifest"));
    story.push(m.unwrap_or_else(|e| panic!("{kind:?}: {e}, {:?}", listing_of(&dir.join("mydir")))));
    let before = snapshot(&mut c);
    shutdown(s);
    let s = aof_on(kind, &dir, &names);
    assert_same(
        &format!("{kind:?} custom names"),
        &before,
        &snapshot(&mut Client::connect(s.port)),
        0,
    );
    drop(s);
    // BGREWRITEAOF with the AOF off writes a base alone; turned on and off and on again.
    let dir = TempDir::new("aof-layout");
    let s = start_on(kind, &dir, &[]);
    let mut c = Client::connect(s.port);
    w(&mut c, &["SET", "a", "1"]);
    w(&mut c, &["BGREWRITEAOF"]);
    wait_rewrite_done(&mut c);
    story.push(wait_history_gone(&dir).join(" "));
    let replies = pipeline(
        &mut c,
        &[
            &["CONFIG", "SET", "appendonly", "yes"],
            &["SET", "b", "1"],
            &["CONFIG", "SET", "appendonly", "no"],
            &["SET", "c", "1"],
        ],
    );
    story.extend(replies.iter().map(|r| String::from_utf8_lossy(r).into_owned()));
    std::thread::sleep(Duration::from_millis(200));
    story.push(listing(&dir).join(" "));
    w(&mut c, &["CONFIG", "SET", "appendonly", "yes"]);
    wait_rewrite_done(&mut c);
    story.push(wait_history_gone(&dir).join(" "));
    story.push(std::fs::read_to_string(dir.join(MANIFEST)).unwrap());
    // SHUTDOWN during a rewrite: the child is killed, its file removed.
    // (In one write, so the child cannot be done and reaped before the SHUTDOWN; the
    // replies may not come back before the server exits.)
    let mut s = s;
    let bytes = [resp(&["SET", "d", "1"]), resp(&["BGREWRITEAOF"]), resp(&["SHUTDOWN", "NOSAVE"])];
    c.send_raw(&bytes.concat());
    let _ = std::io::Read::read_to_end(&mut c.stream, &mut Vec::new());
    assert!(s.child.wait().unwrap().success(), "{kind:?}: SHUTDOWN NOSAVE during a rewrite");
    let mut top: Vec<String> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    story.push(top.join(" "));
    story.push(listing(&dir).join(" "));
    let s = aof_on(kind, &dir, &[]);
    let mut c = Client::connect(s.port);
    story.push(format!("{:?}", c.cmd(&["MGET", "a", "b", "c", "d"])));
    drop(s);
    // The base changes kind when aof-use-rdb-preamble changes at run time.
    let dir = TempDir::new("aof-preamble");
    let s = aof_on(kind, &dir, &[]);
    let mut c = Client::connect(s.port);
    w(&mut c, &["SET", "a", "1"]);
    w(&mut c, &["CONFIG", "SET", "aof-use-rdb-preamble", "no"]);
    w(&mut c, &["BGREWRITEAOF"]);
    wait_rewrite_done(&mut c);
    story.push(wait_history_gone(&dir).join(" "));
    w(&mut c, &["SAVE"]);
    shutdown(s);
    // With appendonly yes the RDB file is not read, even when the AOF directory is missing.
    std::fs::remove_dir_all(dir.join(AOF_DIR)).unwrap();
    let s = aof_on(kind, &dir, &[]);
    story.push(format!("{:?}", Client::connect(s.port).cmd(&["DBSIZE"])));
    drop(s);
    // An AOF of Redis before 7 (a single file in `dir`) is moved into the directory.
    let dir = TempDir::new("aof-upgrade");
    let old = [resp(&["SELECT", "0"]), resp(&["SET", "old", "style"]), resp(&["RPUSH", "l", "a"])];
    std::fs::write(dir.join("appendonly.aof"), old.concat()).unwrap();
    let s = aof_on(kind, &dir, &[]);
    let mut c = Client::connect(s.port);
    story.push(format!("{:?}", c.cmd(&["MGET", "old", "l"])));
    story.push(std::fs::read_to_string(dir.join(MANIFEST)).unwrap());
    story.push(listing(&dir).join(" "));
    w(&mut c, &["SET", "new", "1"]);
    shutdown(s);
    let s = aof_on(kind, &dir, &[]);
    story.push(format!("{:?}", Client::connect(s.port).cmd(&["MGET", "old", "new"])));
    drop(s);
    story
}

#[test]
fn the_directory_layout_matches_redis_in_less_common_paths() {
    let ours = layout_story(Kind::Ours);
    let theirs = layout_story(Kind::Redis);
    assert_eq!(ours, theirs);
}

// ---------------------------------------------------------------------------------------
// Single rules of redis-server 7.0 / Valkey, one test each

/// `prepareForShutdown`: while the first rewrite after `CONFIG SET appendonly yes` runs,
/// SHUTDOWN (even NOSAVE) is refused ("Writing initial AOF, can't exit."): exiting then
/// would leave no AOF to restart from.
#[test]
fn shutdown_is_refused_while_the_initial_aof_is_written() {
    let mut story = Vec::new();
    for kind in [Kind::Redis, Kind::Ours] {
        let dir = TempDir::new("aof-initial");
        let mut s = start_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        many_keys(&mut c, "k:", 500);
        c.send_raw(
            &[resp(&["CONFIG", "SET", "appendonly", "yes"]), resp(&["SHUTDOWN", "NOSAVE"])]
                .concat(),
        );
        assert_eq!(c.read(), Val::ok());
        // One line, or nothing when the server exited.
        let mut line = String::new();
        let _ = c.stream.read_line(&mut line);
        story.push(line.clone());
        assert_eq!(
            line, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n",
            "{kind:?}: SHUTDOWN NOSAVE while the initial AOF is written"
        );
        wait_rewrite_done(&mut c);
        shutdown(s);
        s = aof_on(kind, &dir, &[]);
        assert_eq!(Client::connect(s.port).cmd(&["DBSIZE"]), int(500), "{kind:?}");
        drop(s);
    }
    assert_eq!(story[0], story[1]);
}

/// `stat_aof_rewrites` counts rewrites started (it goes up at the fork), killed ones too.
#[test]
fn aof_rewrites_counts_rewrites_started() {
    let mut seen = Vec::new();
    for kind in [Kind::Redis, Kind::Ours] {
        let dir = TempDir::new("aof-count");
        let s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        many_keys(&mut c, "k:", 500);
        let replies = pipeline(&mut c, &[&["BGREWRITEAOF"], &["INFO", "persistence"]]);
        let running = format!("aof_rewrites:{}", field_of(&replies[1], "aof_rewrites"));
        wait_rewrite_done(&mut c);
        let done = info_int(&mut c, "persistence", "aof_rewrites");
        // Started then killed by turning the AOF off.
        pipeline(&mut c, &[&["BGREWRITEAOF"], &["CONFIG", "SET", "appendonly", "no"]]);
        let killed = info_int(&mut c, "persistence", "aof_rewrites");
        seen.push((kind, running.trim().to_string(), done, killed));
        drop(s);
    }
    let expected = (Kind::Ours, "aof_rewrites:1".to_string(), 1, 2);
    assert_eq!(seen[0], (Kind::Redis, expected.1.clone(), expected.2, expected.3));
    assert_eq!(seen[1], expected);
}

/// Each file of the AOF starts replaying in database 0 (a fresh loading client per file),
/// whatever the previous file selected last.
#[test]
fn each_aof_file_replays_from_database_0() {
    let mut seen = Vec::new();
    for kind in [Kind::Redis, Kind::Ours] {
        let dir = TempDir::new("aof-per-file-db");
        let s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        w(&mut c, &["SELECT", "3"]);
        w(&mut c, &["SET", "a", "1"]);
        shutdown(s);
        // A second incr file, written by hand, without a SELECT of its own.
        let name = "appendonly.aof.2.incr.aof";
        std::fs::write(dir.join(AOF_DIR).join(name), resp(&["SET", "b", "1"])).unwrap();
        append(&dir.join(MANIFEST), format!("file {name} seq 2 type i\n").as_bytes());
        let s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        let db0 = keys_of(&mut c);
        w(&mut c, &["SELECT", "3"]);
        seen.push((kind, db0, keys_of(&mut c)));
        drop(s);
    }
    let want = |kind| (kind, vec!["b".to_string()], vec!["a".to_string()]);
    assert_eq!(seen, vec![want(Kind::Redis), want(Kind::Ours)], "(kind, db 0, db 3)");
}

/// Writes to keys with a TTL, made while the keys were alive, replayed after the TTL has
/// passed: nothing expires while the AOF loads (Valkey's `keyIsExpired` is false while
/// loading, and an RDB preamble keeps expired keys), so the writes apply to the keys as
/// they were and the keys then expire. Treating them as missing during the replay would
/// recreate them from the later writes alone, with other values and no TTL.
#[test]
fn keys_that_expire_after_their_last_write_stay_gone_after_a_restart() {
    let mut seen = Vec::new();
    for kind in [Kind::Redis, Kind::Ours] {
        let dir = TempDir::new("aof-expire-replay");
        let s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        let set_at = Instant::now();
        // Written into the base by a rewrite, then changed in the incr file.
        w(&mut c, &["SET", "base:str", "v", "PX", "1500"]);
        w(&mut c, &["RPUSH", "base:list", "a"]);
        w(&mut c, &["PEXPIRE", "base:list", "1500"]);
        w(&mut c, &["BGREWRITEAOF"]);
        wait_rewrite_done(&mut c);
        w(&mut c, &["APPEND", "base:str", "x"]);
        w(&mut c, &["RPUSH", "base:list", "b"]);
        // Only in the incr file.
        w(&mut c, &["SET", "incr:str", "v", "PX", "1500"]);
        w(&mut c, &["APPEND", "incr:str", "x"]);
        w(&mut c, &["SET", "incr:n", "5", "PX", "1500"]);
        w(&mut c, &["INCR", "incr:n"]);
        w(&mut c, &["HSET", "incr:hash", "f", "v"]);
        w(&mut c, &["PEXPIRE", "incr:hash", "1500"]);
        w(&mut c, &["HSET", "incr:hash", "g", "w"]);
        w(&mut c, &["ZADD", "incr:zset", "1", "a"]);
        w(&mut c, &["PEXPIRE", "incr:zset", "1500"]);
        // The last TTL set (the rewrite may have taken a while under load).
        let last_ttl_at = Instant::now();
        w(&mut c, &["ZADD", "incr:zset", "2", "b"]);
        w(&mut c, &["SET", "kept", "1"]);
        assert!(set_at.elapsed() < Duration::from_millis(1200), "too slow to test");
        shutdown(s);
        std::thread::sleep(Duration::from_millis(1600).saturating_sub(last_ttl_at.elapsed()));
        let s = aof_on(kind, &dir, &[]);
        let mut c = Client::connect(s.port);
        seen.push((kind, keys_of(&mut c)));
        drop(s);
    }
    let want = |kind| (kind, vec!["kept".to_string()]);
    assert_eq!(seen, vec![want(Kind::Redis), want(Kind::Ours)]);
}

/// `startAppendOnly`: when the rewrite that writes the first base cannot start (here a
/// regular file holds the AOF directory's name), CONFIG SET appendonly yes is refused, every
/// value of that CONFIG SET goes back, and the AOF stays off instead of acknowledging writes
/// that no file keeps. Compared with the Valkey 9.1 oracle.
#[test]
fn config_set_appendonly_refuses_when_the_aof_cannot_start() {
    let story = |s: common::Server| {
        std::fs::write(s.dir.join("blocked"), b"not a directory").unwrap();
        let mut c = Client::connect(s.port);
        let mut story: Vec<String> = [
            &["CONFIG", "SET", "appendonly", "yes"][..],
            &["CONFIG", "GET", "appendonly"],
            &["CONFIG", "SET", "maxmemory", "10mb", "appendonly", "yes"],
            &["CONFIG", "GET", "maxmemory"],
            &["SET", "k", "v"],
        ]
        .iter()
        .map(|args| format!("{args:?} -> {:?}", c.cmd(args)))
        .collect();
        for field in [
            "aof_enabled",
            "aof_rewrite_in_progress",
            "aof_rewrite_scheduled",
            "aof_last_bgrewrite_status",
            "aof_rewrites",
            "aof_rewrites_consecutive_failures",
        ] {
            story.push(format!("{field}:{}", info_field(&mut c, "persistence", field)));
        }
        story
    };
    let ours = story(common::start(&["--appenddirname", "blocked"]));
    let theirs = story(common::start_valkey(&["--appenddirname", "blocked"]));
    assert_eq!(ours, theirs);
    let refused = "ERR CONFIG SET failed (possibly related to argument 'appendonly') - Unable \
                   to turn on AOF. Check server logs.";
    assert!(ours[0].contains(refused) && ours[2].contains(refused), "{ours:#?}");
    assert!(ours.contains(&"aof_enabled:0".to_string()), "{ours:#?}");
}
