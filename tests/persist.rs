//! RDB files over TCP and on disk: ferrokey's SAVE loads in a real redis-server 7.0, a file
//! redis-server 7.0 saved loads in ferrokey, with every type and encoding, expire times
//! included; ferrokey restarts with its data; a corrupted file stops start-up with a
//! message instead of starting with partial data.

mod common;

use std::process::{Command, Stdio};

use common::{bulk, contents, free_port, int, start, start_redis, Client, Val};

fn fill(c: &mut Client) {
    c.cmd(&["SET", "str:int", "12345"]);
    c.cmd(&["SET", "str:raw", "hello"]);
    c.cmd(&["SET", "str:long", &"abc".repeat(200)]);
    c.cmd(&["SET", "str:ttl", "v", "EX", "100000"]);
    c.cmd(&["HSET", "hash:small", "a", "1", "b", "two"]);
    for i in 0..600 {
        c.cmd(&["HSET", "hash:big", &format!("f{i}"), &format!("v{i}")]);
        c.cmd(&["SADD", "set:big", &format!("m{i}")]);
        c.cmd(&["ZADD", "zset:big", &format!("{}.25", i % 41), &format!("m{i}")]);
    }
    c.cmd(&["SADD", "set:ints", "1", "-2", "300000"]);
    c.cmd(&["SADD", "set:small", "x", "y"]);
    c.cmd(&["ZADD", "zset:small", "1", "a", "-inf", "b"]);
    c.cmd(&["RPUSH", "list:small", "a", "1"]);
    let items: Vec<String> = (0..5000).map(|i| format!("item-{i}")).collect();
    let mut argv = vec!["RPUSH", "list:big"];
    argv.extend(items.iter().map(String::as_str));
    c.cmd(&argv);
    c.cmd(&["SELECT", "3"]);
    c.cmd(&["SET", "in-db-3", "x"]);
    c.cmd(&["SELECT", "0"]);
}

const KEYS: &[&str] = &[
    "str:int",
    "str:raw",
    "str:long",
    "str:ttl",
    "hash:small",
    "hash:big",
    "set:big",
    "set:ints",
    "set:small",
    "zset:small",
    "zset:big",
    "list:small",
    "list:big",
];

fn assert_same_data(a: &mut Client, b: &mut Client) {
    for k in KEYS {
        assert_eq!(contents(a, k), contents(b, k), "{k}");
    }
    let ttl = b.cmd(&["TTL", "str:ttl"]).as_int();
    assert!(ttl > 99_000, "TTL {ttl}");
    assert_eq!(b.cmd(&["TTL", "str:raw"]), int(-1));
    b.cmd(&["SELECT", "3"]);
    assert_eq!(b.cmd(&["GET", "in-db-3"]), bulk("x"));
    b.cmd(&["SELECT", "0"]);
}

#[test]
fn redis_loads_what_ferrokey_saved_and_the_other_way_round() {
    let ours = start(&[]);
    let theirs = start_redis(&[]);
    let mut a = Client::connect(ours.port);
    let mut b = Client::connect(theirs.port);
    fill(&mut a);
    fill(&mut b);
    assert_eq!(a.cmd(&["SAVE"]), Val::ok());
    assert_eq!(b.cmd(&["SAVE"]), Val::ok());
    let our_file = ours.dir.join("dump.rdb");
    let their_file = theirs.dir.join("dump.rdb");
    // redis-server 7.0 loads ferrokey's file.
    let redis_dir = common::unique_dir("load-ours");
    std::fs::copy(&our_file, redis_dir.join("dump.rdb")).unwrap();
    let r = start_redis(&["--dir", redis_dir.to_str().unwrap()]);
    let mut rc = Client::connect(r.port);
    assert_eq!(rc.cmd(&["DBSIZE"]), int(KEYS.len() as i64));
    assert_same_data(&mut a, &mut rc);
    // ferrokey loads redis-server 7.0's file.
    let our_dir = common::unique_dir("load-theirs");
    std::fs::copy(&their_file, our_dir.join("dump.rdb")).unwrap();
    let f = start(&["--dir", our_dir.to_str().unwrap()]);
    let mut fc = Client::connect(f.port);
    assert_eq!(fc.cmd(&["DBSIZE"]), int(KEYS.len() as i64));
    assert_same_data(&mut b, &mut fc);
    for k in KEYS {
        assert_eq!(
            fc.cmd(&["OBJECT", "ENCODING", k]),
            a.cmd(&["OBJECT", "ENCODING", k]),
            "{k}: a loaded value takes the encoding its size calls for"
        );
    }
    let _ = std::fs::remove_dir_all(redis_dir);
    let _ = std::fs::remove_dir_all(our_dir);
}

/// Valkey 9.1 writes `VALKEY080` files (RDB 80): ferrokey loads one with every type and
/// encoding it has, and loads a DUMP payload of RDB 80 with RESTORE.
#[test]
fn ferrokey_loads_what_valkey_9_saved() {
    let theirs = common::start_valkey(&[]);
    let mut v = Client::connect(theirs.port);
    fill(&mut v);
    assert_eq!(v.cmd(&["SAVE"]), Val::ok());
    let their_file = theirs.dir.join("dump.rdb");
    assert!(std::fs::read(&their_file).unwrap().starts_with(b"VALKEY080"));
    let our_dir = common::unique_dir("load-valkey9");
    std::fs::copy(&their_file, our_dir.join("dump.rdb")).unwrap();
    let f = start(&["--dir", our_dir.to_str().unwrap()]);
    let mut fc = Client::connect(f.port);
    assert_eq!(fc.cmd(&["DBSIZE"]), int(KEYS.len() as i64));
    assert_same_data(&mut v, &mut fc);
    // DUMP payloads of RDB 80 restore, each into a key of its own.
    for k in KEYS {
        let Val::Bulk(payload) = v.cmd(&["DUMP", k]) else { panic!("DUMP {k}") };
        assert_eq!(&payload[payload.len() - 10..payload.len() - 8], &80u16.to_le_bytes());
        let copy = format!("restored:{k}");
        assert_eq!(fc.cmd_b(&[b"RESTORE", copy.as_bytes(), b"0", &payload]), Val::ok(), "{k}");
        assert_eq!(contents(&mut fc, &copy), contents(&mut v, k), "{k}");
    }
    let _ = std::fs::remove_dir_all(our_dir);
}

/// RDB versions of other projects' lines (Redis 7.4+'s 12 to 79) are refused with a
/// message, never loaded half, unless `rdb-version-check relaxed`.
#[test]
fn foreign_files_stop_start_up() {
    let dir = common::unique_dir("unreadable");
    let d = dir.to_str().unwrap().to_string();
    let run = |bytes: &[u8], extra: &[&str]| {
        std::fs::write(dir.join("dump.rdb"), bytes).unwrap();
        let port = free_port().to_string();
        let mut args = vec!["--port", &port, "--bind", "127.0.0.1", "--dir", &d];
        args.extend_from_slice(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(!out.status.success(), "started with an unreadable RDB file");
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
    };
    // A ferrokey file relabelled as a Redis 7.4 one (RDB 12).
    let ours = start(&["--dir", &d]);
    let mut c = Client::connect(ours.port);
    c.cmd(&["SET", "k", "v"]);
    assert_eq!(c.cmd(&["SAVE"]), Val::ok());
    drop(ours);
    let mut foreign = std::fs::read(dir.join("dump.rdb")).unwrap();
    foreign[..9].copy_from_slice(b"REDIS0012");
    // The checksum covers the header: a stored zero means "not checked".
    let n = foreign.len();
    foreign[n - 8..].fill(0);
    let log = run(&foreign, &[]);
    assert!(log.contains("Can't handle RDB format version 12"), "{log}");
    std::fs::write(dir.join("dump.rdb"), &foreign).unwrap();
    let relaxed = start(&["--dir", &d, "--rdb-version-check", "relaxed"]);
    assert_eq!(Client::connect(relaxed.port).cmd(&["GET", "k"]), bulk("v"));
    let _ = std::fs::remove_dir_all(dir);
}

/// The hashes with volatile fields of the round-trip tests: a small one and a big one (a
/// hashtable either way), with fields past their time not included (loaders may drop them).
const VOLATILE_SETUP: &[&[&str]] = &[
    &["HSET", "vh", "a", "1", "b", "two", "c", "3"],
    &["HPEXPIREAT", "vh", "4000000000000", "FIELDS", "2", "a", "b"],
    &["HSETEX", "one", "PXAT", "4000000000123", "FIELDS", "1", "f", "12345"],
];

fn volatile_fill(c: &mut Client) {
    for cmd in VOLATILE_SETUP {
        c.cmd(cmd);
    }
    let mut big = vec!["HSET".to_string(), "vbig".to_string()];
    for i in 0..300 {
        big.push(format!("f{i}"));
        big.push(format!("value-{i}"));
    }
    c.cmd(&big.iter().map(String::as_str).collect::<Vec<_>>());
    for i in (0..300).step_by(7) {
        let at = (4_000_000_000_000i64 + i).to_string();
        c.cmd(&["HPEXPIREAT", "vbig", &at, "FIELDS", "1", &format!("f{i}")]);
    }
}

/// Every field of `key` with its value and expire time, sorted.
fn volatile_contents(c: &mut Client, key: &str) -> Vec<(String, String, i64)> {
    let fields = c.cmd(&["HKEYS", key]).as_array();
    let mut out: Vec<(String, String, i64)> = fields
        .iter()
        .map(|f| {
            let f = f.as_str();
            let v = c.cmd(&["HGET", key, &f]).as_str();
            let at = c.cmd(&["HPEXPIRETIME", key, "FIELDS", "1", &f]).as_array()[0].as_int();
            (f, v, at)
        })
        .collect();
    out.sort();
    out
}

fn assert_same_volatile(a: &mut Client, b: &mut Client) {
    for k in ["vh", "one", "vbig"] {
        let theirs = volatile_contents(a, k);
        assert!(theirs.iter().any(|(_, _, at)| *at > 0), "{k} has volatile fields");
        assert_eq!(volatile_contents(b, k), theirs, "{k}");
        assert_eq!(b.cmd(&["OBJECT", "ENCODING", k]), bulk("hashtable"), "{k}");
    }
}

/// Hashes with volatile fields (Valkey 9's RDB type 22, `HASH_2`) move both ways between
/// ferrokey and Valkey 9.1, in RDB files (`VALKEY080`) and in DUMP payloads (RDB 80); a
/// one-field payload is the same bytes on both.
#[test]
fn volatile_hashes_round_trip_with_valkey_9() {
    let theirs = common::start_valkey(&[]);
    let mut v = Client::connect(theirs.port);
    volatile_fill(&mut v);
    assert_eq!(v.cmd(&["SAVE"]), Val::ok());
    // Valkey's file, loaded by ferrokey.
    let our_dir = common::unique_dir("volatile-load");
    std::fs::copy(theirs.dir.join("dump.rdb"), our_dir.join("dump.rdb")).unwrap();
    let ours = start(&["--dir", our_dir.to_str().unwrap()]);
    let mut f = Client::connect(ours.port);
    assert_same_volatile(&mut v, &mut f);
    // DUMP payloads both ways.
    let dump = |c: &mut Client, k: &str| match c.cmd(&["DUMP", k]) {
        Val::Bulk(p) => p,
        other => panic!("DUMP {k}: {other:?}"),
    };
    assert_eq!(dump(&mut f, "one"), dump(&mut v, "one"), "the same payload bytes");
    for k in ["vh", "one", "vbig"] {
        let (theirs_p, ours_p) = (dump(&mut v, k), dump(&mut f, k));
        assert_eq!(&ours_p[ours_p.len() - 10..ours_p.len() - 8], &80u16.to_le_bytes());
        let copy = format!("r:{k}");
        assert_eq!(f.cmd_b(&[b"RESTORE", copy.as_bytes(), b"0", &theirs_p]), Val::ok());
        assert_eq!(v.cmd_b(&[b"RESTORE", copy.as_bytes(), b"0", &ours_p]), Val::ok());
        assert_eq!(volatile_contents(&mut f, &copy), volatile_contents(&mut v, k));
        assert_eq!(volatile_contents(&mut v, &copy), volatile_contents(&mut v, k));
    }
    // ferrokey's file, loaded by Valkey.
    assert_eq!(f.cmd(&["SAVE"]), Val::ok());
    let ours_file = std::fs::read(our_dir.join("dump.rdb")).unwrap();
    assert!(ours_file.starts_with(b"VALKEY080"));
    let their_dir = common::unique_dir("volatile-valkey");
    std::fs::write(their_dir.join("dump.rdb"), &ours_file).unwrap();
    let again = common::start_valkey(&["--dir", their_dir.to_str().unwrap()]);
    let mut v2 = Client::connect(again.port);
    assert_same_volatile(&mut f, &mut v2);
    let _ = std::fs::remove_dir_all(our_dir);
    let _ = std::fs::remove_dir_all(their_dir);
}

#[test]
fn ferrokey_restarts_with_its_data() {
    let dir = common::unique_dir("restart");
    let d = dir.to_str().unwrap();
    let s = start(&["--dir", d]);
    let mut c = Client::connect(s.port);
    fill(&mut c);
    let before: Vec<Val> = KEYS.iter().map(|k| contents(&mut c, k)).collect();
    assert_eq!(c.cmd(&["SAVE"]), Val::ok());
    assert!(c.cmd(&["LASTSAVE"]).as_int() > 0);
    drop(c);
    drop(s);
    let s = start(&["--dir", d]);
    let mut c = Client::connect(s.port);
    let after: Vec<Val> = KEYS.iter().map(|k| contents(&mut c, k)).collect();
    assert_eq!(before, after);
    assert!(c.cmd(&["TTL", "str:ttl"]).as_int() > 99_000);
    drop(s);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_corrupted_file_stops_start_up() {
    let dir = common::unique_dir("corrupt");
    let d = dir.to_str().unwrap().to_string();
    {
        let s = start(&["--dir", &d]);
        let mut c = Client::connect(s.port);
        fill(&mut c);
        assert_eq!(c.cmd(&["SAVE"]), Val::ok());
    }
    let path = dir.join("dump.rdb");
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    for damaged in [bytes.clone(), bytes[..bytes.len() / 3].to_vec()] {
        std::fs::write(&path, &damaged).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
            .args(["--port", &free_port().to_string(), "--bind", "127.0.0.1", "--dir", &d])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(!out.status.success(), "started with a damaged RDB file");
        let log = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            log.contains("Wrong RDB checksum") || log.contains("Short read or corrupt data"),
            "{log}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn wait_bgsave_done(c: &mut Client) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while common::info_int(c, "persistence", "rdb_bgsave_in_progress") != 0 {
        assert!(std::time::Instant::now() < deadline, "BGSAVE never finished");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn bgsave_writes_a_file_redis_loads_and_the_server_keeps_serving() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    fill(&mut c);
    assert_eq!(c.cmd(&["BGSAVE"]), Val::Simple("Background saving started".into()));
    // Writes go on while the child saves; they are not in this snapshot's file.
    assert_eq!(c.cmd(&["SET", "after", "1"]), Val::ok());
    wait_bgsave_done(&mut c);
    assert_eq!(common::info_field(&mut c, "persistence", "rdb_last_bgsave_status"), "ok");
    assert!(common::info_int(&mut c, "persistence", "rdb_changes_since_last_save") >= 1);
    let redis_dir = common::unique_dir("bgsave");
    std::fs::copy(s.dir.join("dump.rdb"), redis_dir.join("dump.rdb")).unwrap();
    let r = start_redis(&["--dir", redis_dir.to_str().unwrap()]);
    let mut rc = Client::connect(r.port);
    assert_same_data(&mut c, &mut rc);
    assert_eq!(rc.cmd(&["EXISTS", "after"]), int(0));
    assert_eq!(c.cmd(&["BGSAVE", "SCHEDULE"]), Val::Simple("Background saving started".into()));
    wait_bgsave_done(&mut c);
    assert_eq!(c.cmd(&["BGSAVE", "NOW"]), Val::Err("ERR syntax error".into()));
    let _ = std::fs::remove_dir_all(redis_dir);
}

#[test]
fn save_points_and_shutdown_save() {
    let dir = common::unique_dir("savepoints");
    let d = dir.to_str().unwrap();
    let s = start(&["--dir", d, "--save", "1 1"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while common::info_int(&mut c, "persistence", "rdb_saves") == 0 {
        assert!(std::time::Instant::now() < deadline, "the save point never fired");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    wait_bgsave_done(&mut c);
    assert!(dir.join("dump.rdb").exists());
    // SHUTDOWN SAVE writes what came after.
    assert_eq!(c.cmd(&["SET", "k2", "v2"]), Val::ok());
    c.send(&[b"SHUTDOWN", b"SAVE"]);
    assert!(c.is_closed());
    drop(s);
    let s = start(&["--dir", d]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["MGET", "k", "k2"]), Val::Array(vec![bulk("v"), bulk("v2")]));
    drop(s);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn idle_time_is_saved_under_an_lru_policy_only() {
    for (policy, kept) in [("allkeys-lru", true), ("noeviction", false)] {
        let dir = common::unique_dir("idle");
        let d = dir.to_str().unwrap();
        let s = start(&["--dir", d, "--maxmemory-policy", policy]);
        let mut c = Client::connect(s.port);
        c.cmd(&["SET", "src", "v"]);
        let Val::Bulk(p) = c.cmd(&["DUMP", "src"]) else { panic!() };
        assert_eq!(c.cmd_b(&[b"RESTORE", b"k", b"0", &p, b"IDLETIME", b"5000"]), Val::ok());
        assert_eq!(c.cmd(&["SAVE"]), Val::ok());
        drop(c);
        drop(s);
        let s = start(&["--dir", d, "--maxmemory-policy", policy]);
        let mut c = Client::connect(s.port);
        let idle = c.cmd(&["OBJECT", "IDLETIME", "k"]).as_int();
        assert_eq!(idle >= 5000, kept, "{policy}: idle {idle}");
        drop(s);
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `rdbchecksum no`: the save ends in a zero checksum (which every loader skips), and a
/// load does not check the stored checksum at all, as in Valkey; with the default `yes` a
/// damaged checksum stops the start-up.
#[test]
fn rdbchecksum_no_skips_the_check() {
    let ours = start(&["--rdbchecksum", "no"]);
    let mut a = Client::connect(ours.port);
    fill(&mut a);
    assert_eq!(a.cmd(&["SAVE"]), Val::ok());
    let saved = std::fs::read(ours.dir.join("dump.rdb")).unwrap();
    assert_eq!(saved[saved.len() - 8..], [0u8; 8], "no checksum written");
    // A file with a wrong checksum: from a save with checksums, its last byte changed.
    let checked = start(&[]);
    let mut c = Client::connect(checked.port);
    fill(&mut c);
    assert_eq!(c.cmd(&["SAVE"]), Val::ok());
    let mut bytes = std::fs::read(checked.dir.join("dump.rdb")).unwrap();
    *bytes.last_mut().unwrap() ^= 0x5a;
    let dir = common::unique_dir("bad-crc");
    std::fs::write(dir.join("dump.rdb"), &bytes).unwrap();
    let d = dir.to_str().unwrap();
    let f = start(&["--dir", d, "--rdbchecksum", "no"]);
    let mut fc = Client::connect(f.port);
    assert_eq!(fc.cmd(&["DBSIZE"]), int(KEYS.len() as i64));
    assert_same_data(&mut c, &mut fc);
    drop(f);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
        .args(["--port", &common::free_port().to_string(), "--dir", d, "--save", ""])
        .output()
        .unwrap();
    assert!(!out.status.success(), "a damaged checksum stops the start-up");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Wrong RDB checksum"));
    let _ = std::fs::remove_dir_all(dir);
}
