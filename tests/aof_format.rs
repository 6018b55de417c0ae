//! The multi-part AOF format against a real redis-server 7.0 (the same layout as Valkey 7+):
//! its manifest parses and prints back byte for byte, its base (RDB or commands) and incr files
//! load through `persist::aof::load`, a tail we truncate is cut where it should be and
//! redis-server still loads the result, and a directory whose manifest we wrote loads in
//! redis-server.

mod common;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{info_int, Client, Val};
use ferrokey::config::Config;
use ferrokey::keyspace::db::Db;
use ferrokey::persist::aof::load::{load_dir, AofStatus, ExecError, LoadOpts, LoadOutcome};
use ferrokey::persist::aof::manifest::{manifest_name, AofFileType, Manifest};
use ferrokey::persist::aof::reader::ReadLimits;
use ferrokey::persist::rdb::encoding::RdbReader;
use ferrokey::persist::rdb::file::load_rdb;
use ferrokey::persist::rdb::value::LoadLimits;

const F: &str = "appendonly.aof";
const D: &str = "appendonlydir";

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Runs commands given as space-separated words, each expected to succeed.
fn run(c: &mut Client, lines: &[&str]) {
    for line in lines {
        let words: Vec<&str> = line.split(' ').collect();
        let reply = c.cmd(&words);
        assert!(!matches!(reply, Val::Err(_)), "{line}: {reply:?}");
    }
}

/// BGREWRITEAOF, then waits until redis-server has installed the new base.
fn rewrite(c: &mut Client) {
    c.cmd(&["BGREWRITEAOF"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while info_int(c, "persistence", "aof_rewrite_in_progress") != 0
        || info_int(c, "persistence", "aof_rewrite_scheduled") != 0
    {
        assert!(Instant::now() < deadline, "rewrite did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a load produced: keys loaded from RDBs (all databases), commands, the outcome.
struct Loaded {
    rdb_keys: usize,
    commands: Vec<String>,
    outcome: LoadOutcome,
}

fn load(dir: &Path, load_truncated: bool) -> Loaded {
    let mut dbs: Vec<Db> = (0..16).map(|_| Db::new()).collect();
    let lim = LoadLimits::from_config(&Config::default());
    let now = now_ms();
    let mut commands = Vec::new();
    let mut load_base = |r: &mut dyn Read| -> Result<(), String> {
        let mut reader = RdbReader::new(r, 512 << 20);
        load_rdb(&mut reader, &mut dbs, &lim, now).map(|_| ()).map_err(|e| format!("{e:?}"))
    };
    let mut exec = |argv: Vec<Bytes>| -> Result<(), ExecError> {
        let words: Vec<String> =
            argv.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        commands.push(words.join(" "));
        Ok(())
    };
    let opts = LoadOpts { load_truncated, limits: ReadLimits::default() };
    let outcome = load_dir(dir, D, F, opts, &mut load_base, &mut exec)
        .unwrap_or_else(|e| panic!("load of {}: {e}", dir.display()));
    let rdb_keys = dbs.iter().map(Db::len).sum();
    Loaded { rdb_keys, commands, outcome }
}

/// Copies a server's AOF directory into a fresh `dir` of our own.
fn copy_dir(from: &Path, tag: &str) -> PathBuf {
    let to = common::unique_dir(tag);
    fs::create_dir_all(to.join(D)).unwrap();
    for entry in fs::read_dir(from.join(D)).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(D).join(entry.file_name())).unwrap();
    }
    to
}

fn manifest_text(dir: &Path) -> String {
    fs::read_to_string(dir.join(D).join(manifest_name(F))).unwrap()
}

#[test]
fn redis_multi_part_aof_with_rdb_base_loads() {
    // `always`: redis writes the log before it replies (under everysec it may hold a write
    // back while a background fsync runs, and this test reads the files right away).
    let redis = common::start_redis(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = Client::connect(redis.port);
    // A server starting on an empty directory writes a base at once, then an incr.
    assert_eq!(
        manifest_text(&redis.dir),
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    run(
        &mut c,
        &[
            "SET a 1",
            "RPUSH l x y z",
            "HSET h f v",
            "SADD s m1 m2",
            "ZADD z 1 one",
            "SET ex v EX 1000",
            "SELECT 2",
            "SET b 2",
        ],
    );
    rewrite(&mut c);
    let mut c = Client::connect(redis.port);
    run(&mut c, &["SET c 3", "MULTI", "SET d 4", "INCR a", "EXEC", "SELECT 2", "DEL b"]);

    let text = manifest_text(&redis.dir);
    assert_eq!(
        text,
        "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
    );
    let m = Manifest::load(&redis.dir.join(D), F).unwrap().unwrap();
    assert_eq!(m.to_text(), text.as_bytes(), "we print redis-server's manifest back unchanged");
    assert_eq!((m.curr_base_seq, m.curr_incr_seq), (2, 2));
    assert_eq!(m.base.as_ref().unwrap().kind, AofFileType::Base);

    let loaded = load(&redis.dir, false);
    assert_eq!(loaded.outcome.status, AofStatus::Ok);
    assert_eq!(loaded.rdb_keys, 7);
    assert_eq!(
        loaded.commands,
        ["SELECT 0", "SET c 3", "MULTI", "SET d 4", "INCR a", "EXEC", "SELECT 2", "DEL b"]
    );
    assert_eq!(loaded.outcome.commands, 8);
    let on_disk = |name: &str| fs::metadata(redis.dir.join(D).join(name)).unwrap().len();
    let base = on_disk("appendonly.aof.2.base.rdb");
    assert_eq!(loaded.outcome.base_size, base);
    assert_eq!(loaded.outcome.total_size, base + on_disk("appendonly.aof.2.incr.aof"));
    assert_eq!(
        info_int(&mut c, "persistence", "aof_current_size") as u64,
        loaded.outcome.total_size,
        "the size redis-server reports"
    );
}

#[test]
fn redis_base_written_as_commands_loads() {
    let redis = common::start_redis(&[
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--aof-use-rdb-preamble",
        "no",
    ]);
    let mut c = Client::connect(redis.port);
    run(&mut c, &["SET a 1", "RPUSH l x y z", "SADD s m1", "SET ex v EX 1000"]);
    rewrite(&mut c);
    run(&mut c, &["SET after 1"]);
    let m = Manifest::load(&redis.dir.join(D), F).unwrap().unwrap();
    assert_eq!(m.base.as_ref().unwrap().name, "appendonly.aof.2.base.aof");
    let loaded = load(&redis.dir, false);
    assert_eq!(loaded.outcome.status, AofStatus::Ok);
    assert_eq!(loaded.rdb_keys, 0, "no RDB anywhere");
    let mut base: Vec<String> = loaded.commands[..loaded.commands.len() - 2].to_vec();
    let incr = &loaded.commands[loaded.commands.len() - 2..];
    assert_eq!(base.remove(0), "SELECT 0");
    let mut names: Vec<String> =
        base.iter().map(|c| c.split(' ').next().unwrap().to_string()).collect();
    names.sort();
    assert_eq!(names, ["PEXPIREAT", "RPUSH", "SADD", "SET", "SET"]);
    assert_eq!(incr, ["SELECT 0", "SET after 1"]);
}

#[test]
fn a_truncated_redis_incr_is_cut_and_redis_still_loads_it() {
    // `always`: redis writes the log before it replies (under everysec it may hold a write
    // back while a background fsync runs, and this test reads the files right away).
    let redis = common::start_redis(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = Client::connect(redis.port);
    run(&mut c, &["SET a 1", "SET b 2", "SET c 3"]);
    let dir = copy_dir(&redis.dir, "aof-truncated");
    drop(redis);
    let incr = dir.join(D).join("appendonly.aof.1.incr.aof");
    let full = fs::read(&incr).unwrap();
    // Cut inside the last SET.
    fs::write(&incr, &full[..full.len() - 4]).unwrap();
    let loaded = load(&dir, true);
    assert_eq!(loaded.outcome.status, AofStatus::Truncated);
    assert_eq!(loaded.commands, ["SELECT 0", "SET a 1", "SET b 2"]);
    let cut = fs::metadata(&incr).unwrap().len() as usize;
    assert!(full.starts_with(&fs::read(&incr).unwrap()));
    assert_eq!(&full[cut..cut + 4], b"*3\r\n", "cut right before the partial command");
    // redis-server starts on what we left, with the whole commands.
    let redis = common::start_redis(&["--appendonly", "yes", "--dir", dir.to_str().unwrap()]);
    let mut c = Client::connect(redis.port);
    assert_eq!(
        c.cmd(&["MGET", "a", "b", "c"]),
        Val::Array(vec![common::bulk("1"), common::bulk("2"), Val::Nil])
    );
    drop(redis);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn redis_loads_a_directory_whose_manifest_we_wrote() {
    let dir = common::unique_dir("aof-ours");
    let aof_dir = dir.join(D);
    fs::create_dir_all(&aof_dir).unwrap();
    let mut m = Manifest::default();
    let base = m.next_base(F, false).name.clone();
    let incr = m.next_incr(F).name.clone();
    m.persist(&aof_dir, F).unwrap();
    let resp = |words: &[&str]| {
        let mut out = format!("*{}\r\n", words.len()).into_bytes();
        for w in words {
            out.extend_from_slice(format!("${}\r\n{w}\r\n", w.len()).as_bytes());
        }
        out
    };
    let base_bytes = [resp(&["SELECT", "0"]), resp(&["SET", "k", "from-base"])].concat();
    let incr_bytes =
        [b"#TS:1700000000\r\n".to_vec(), resp(&["SELECT", "0"]), resp(&["RPUSH", "l", "a", "b"])]
            .concat();
    fs::write(aof_dir.join(&base), base_bytes).unwrap();
    fs::write(aof_dir.join(&incr), incr_bytes).unwrap();
    let ours = load(&dir, false);
    assert_eq!(ours.commands, ["SELECT 0", "SET k from-base", "SELECT 0", "RPUSH l a b"]);
    let redis = common::start_redis(&["--appendonly", "yes", "--dir", dir.to_str().unwrap()]);
    let mut c = Client::connect(redis.port);
    assert_eq!(c.cmd(&["GET", "k"]), common::bulk("from-base"));
    assert_eq!(
        c.cmd(&["LRANGE", "l", "0", "-1"]),
        Val::Array(vec![common::bulk("a"), common::bulk("b")])
    );
    assert_eq!(
        manifest_text(&dir),
        String::from_utf8(m.to_text()).unwrap(),
        "redis kept our manifest"
    );
    drop(redis);
    let _ = fs::remove_dir_all(&dir);
}
