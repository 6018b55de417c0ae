//! The AOF suite's harness: servers on a directory of the test's own (ferrokey or
//! redis-server 7.0), the AOF directory's files, and every key of every database as a
//! comparable snapshot.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::common::{self, free_port, info_int, Client, Server, Val};

// ---------------------------------------------------------------------------------------
// Servers on a directory of the test's own

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Ours,
    Redis,
    /// The Valkey 9.1 oracle (its RDB preamble and base files are `VALKEY080`).
    Valkey,
}

pub fn start_on(kind: Kind, dir: &Path, extra: &[&str]) -> Server {
    let mut args = vec!["--dir", dir.to_str().expect("utf-8 dir")];
    args.extend_from_slice(extra);
    match kind {
        Kind::Ours => common::start(&args),
        Kind::Redis => common::start_redis(&args),
        Kind::Valkey => common::start_valkey(&args),
    }
}

/// `--appendonly yes` plus `extra`.
pub fn aof_on(kind: Kind, dir: &Path, extra: &[&str]) -> Server {
    let mut args = vec!["--appendonly", "yes"];
    args.extend_from_slice(extra);
    start_on(kind, dir, &args)
}

/// SHUTDOWN NOSAVE (the AOF alone must carry the data) and wait for the process to end.
pub fn shutdown(mut s: Server) {
    let mut c = Client::connect(s.port);
    c.send(&[b"SHUTDOWN", b"NOSAVE"]);
    assert!(c.is_closed(), "SHUTDOWN NOSAVE did not close the connection");
    let status = s.child.wait().expect("wait for the server");
    assert!(status.success(), "exit status after SHUTDOWN: {status}");
}

/// Starts `kind` on `dir` expecting it to refuse; returns everything it logged.
pub fn start_fails(kind: Kind, dir: &Path, extra: &[&str]) -> String {
    let bin = match kind {
        Kind::Ours => env!("CARGO_BIN_EXE_ferrokey-server").to_string(),
        Kind::Redis => common::which("redis-server").expect("redis-server installed"),
        Kind::Valkey => common::valkey_bin(),
    };
    let mut child = Command::new(bin)
        .args(["--port", &free_port().to_string(), "--bind", "127.0.0.1", "--save", ""])
        .args(["--dir", dir.to_str().unwrap(), "--appendonly", "yes"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{kind:?} started on a damaged AOF: {}", String::from_utf8_lossy(&out.stdout));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "{kind:?} exited with success on a damaged AOF");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until no rewrite runs or is scheduled, and no BGSAVE runs (the three fields read
/// from one INFO: a scheduled rewrite may start between two).
pub fn wait_rewrite_done(c: &mut Client) {
    let idle = ["aof_rewrite_in_progress:0", "aof_rewrite_scheduled:0", "rdb_bgsave_in_progress:0"];
    wait_until("the AOF rewrite", || {
        let info = c.cmd(&["INFO", "persistence"]).as_str();
        idle.iter().all(|f| info.lines().any(|l| l.trim_end() == *f))
    });
}

/// A field of an INFO reply read raw (from a pipeline, where it saw the same moment as the
/// commands before it).
pub fn field_of(info: &[u8], field: &str) -> String {
    let text = String::from_utf8_lossy(info);
    let prefix = format!("{field}:");
    let line = text.lines().find_map(|l| l.strip_prefix(&prefix).map(str::to_string));
    line.unwrap_or_else(|| panic!("no {field} in {text}")).trim().to_string()
}

/// The keys of the selected database, sorted, as text.
pub fn keys_of(c: &mut Client) -> Vec<String> {
    let mut keys: Vec<String> = c.cmd(&["KEYS", "*"]).as_array().iter().map(Val::as_str).collect();
    keys.sort();
    keys
}

pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// A directory of the test's own, removed when dropped (a failed test too).
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        TempDir(common::unique_dir(tag))
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------
// The AOF directory

pub const AOF_DIR: &str = "appendonlydir";
pub const MANIFEST: &str = "appendonlydir/appendonly.aof.manifest";

/// The manifest's lines as (file name, seq, type).
pub fn manifest(dir: &Path) -> Vec<(String, u64, String)> {
    let text = std::fs::read_to_string(dir.join(MANIFEST)).expect("manifest");
    text.lines()
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            assert_eq!((w.len(), w[0], w[2], w[4]), (6, "file", "seq", "type"), "{l}");
            (w[1].to_string(), w[3].parse().unwrap(), w[5].to_string())
        })
        .collect()
}

/// The files of the AOF directory, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join(AOF_DIR))
        .expect("AOF dir")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

pub fn last_incr(dir: &Path) -> PathBuf {
    let name = manifest(dir).into_iter().rev().find(|f| f.2 == "i").expect("an incr").0;
    dir.join(AOF_DIR).join(name)
}

pub fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A command as the AOF holds it.
pub fn resp(args: &[&str]) -> Vec<u8> {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    Client::encode(&a)
}

pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

pub fn copy_dir(from: &Path, tag: &str) -> TempDir {
    let to = TempDir::new(tag);
    let status =
        Command::new("cp").arg("-r").arg(from.join(AOF_DIR)).arg(&*to).status().expect("cp");
    assert!(status.success());
    to
}

// ---------------------------------------------------------------------------------------
// Contents of every key of every database

/// A key, binary-safe, shown escaped.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key(pub Vec<u8>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{}\"", self.0.escape_ascii())
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key(s.as_bytes().to_vec())
    }
}

/// (db, key) -> (contents, PTTL).
pub type Snapshot = BTreeMap<(usize, Key), (Val, i64)>;

/// The contents of `key`, whatever its type: hashes and sets sorted, lists in order,
/// sorted sets WITHSCORES (`common::contents` for binary keys).
pub fn contents_of(c: &mut Client, key: &[u8]) -> Val {
    let sorted = |v: Val| {
        let mut items = v.as_array();
        items.sort_by_key(|x| format!("{x:?}"));
        Val::Array(items)
    };
    match c.cmd_b(&[b"TYPE", key]).as_str().as_str() {
        "string" => c.cmd_b(&[b"GET", key]),
        "hash" => Val::Array(vec![sorted(c.cmd_b(&[b"HGETALL", key])), field_ttls(c, key)]),
        "set" => sorted(c.cmd_b(&[b"SMEMBERS", key])),
        "list" => c.cmd_b(&[b"LRANGE", key, b"0", b"-1"]),
        "zset" => common::scores_as_numbers(c.cmd_b(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"])),
        "stream" => Val::Array(vec![
            c.cmd_b(&[b"XRANGE", key, b"-", b"+"]),
            c.cmd_b(&[b"XINFO", b"GROUPS", key]),
        ]),
        other => panic!("{:?}: type {other}", Key(key.to_vec())),
    }
}

/// The expire time of every field of a hash that has one, sorted by field (none on servers
/// without hash field expiration: redis-server 7.0 answers an error).
fn field_ttls(c: &mut Client, key: &[u8]) -> Val {
    let mut fields = c.cmd_b(&[b"HKEYS", key]).as_array();
    fields.sort_by_key(|x| format!("{x:?}"));
    let mut out = Vec::new();
    for f in fields {
        let Val::Bulk(f) = f else { panic!("field {f:?}") };
        match c.cmd_b(&[b"HPEXPIRETIME", key, b"FIELDS", b"1", &f]) {
            Val::Array(at) if at[0] != Val::Int(-1) => {
                out.push(Val::Array(vec![Val::Bulk(f), at[0].clone()]))
            }
            Val::Array(_) => {}
            _ => return Val::Array(vec![]),
        }
    }
    Val::Array(out)
}

/// Every key of every database.
pub fn snapshot(c: &mut Client) -> Snapshot {
    let mut out = Snapshot::new();
    for db in 0..16 {
        assert_eq!(c.cmd(&["SELECT", &db.to_string()]), Val::ok());
        for k in c.cmd(&["KEYS", "*"]).as_array() {
            let Val::Bulk(k) = k else { panic!("key {k:?}") };
            let v = contents_of(c, &k);
            let pttl = c.cmd_b(&[b"PTTL", &k]).as_int();
            out.insert((db, Key(k)), (v, pttl));
        }
    }
    assert_eq!(c.cmd(&["SELECT", "0"]), Val::ok());
    out
}

/// Same keys, same contents, TTLs within `tol_ms` of each other (or both none).
pub fn assert_same(what: &str, before: &Snapshot, after: &Snapshot, tol_ms: i64) {
    let kb: Vec<_> = before.keys().collect();
    let ka: Vec<_> = after.keys().collect();
    assert_eq!(kb, ka, "{what}: the keys differ");
    for (k, (v, ttl)) in before {
        let (v2, ttl2) = &after[k];
        assert_eq!(v, v2, "{what}: contents of {k:?}");
        let close =
            (*ttl < 0 && ttl == ttl2) || (*ttl > 0 && *ttl2 > 0 && (ttl - ttl2).abs() <= tol_ms);
        assert!(close, "{what}: PTTL of {k:?}: {ttl} then {ttl2}");
    }
}

// ---------------------------------------------------------------------------------------
// Writing every type and every form of command the AOF rewrites

thread_local! {
    /// The command names `w`, `wb` and `served` sent on this thread (lower case).
    static SENT: std::cell::RefCell<std::collections::BTreeSet<String>> = Default::default();
}

fn record(name: &[u8]) {
    SENT.with(|s| s.borrow_mut().insert(String::from_utf8_lossy(name).to_lowercase()));
}

/// The command names sent through `w`, `wb` and `served` on this thread so far.
pub fn sent_commands() -> std::collections::BTreeSet<String> {
    SENT.with(|s| s.borrow().clone())
}

/// A write that must not fail.
pub fn w(c: &mut Client, args: &[&str]) -> Val {
    record(args[0].as_bytes());
    let r = c.cmd(args);
    assert!(!matches!(r, Val::Err(_)), "{args:?}: {r:?}");
    r
}

pub fn wb(c: &mut Client, args: &[&[u8]]) -> Val {
    record(args[0]);
    let r = c.cmd_b(args);
    assert!(!matches!(r, Val::Err(_)), "{r:?}");
    r
}

/// A blocking command served by a push from `c`: the blocked client's reply.
pub fn served(c: &mut Client, port: u16, block: &[&str], push: &[&str]) -> Val {
    record(block[0].as_bytes());
    std::thread::scope(|s| {
        let h = s.spawn(|| Client::connect(port).cmd(block));
        wait_until("a blocked client", || info_int(c, "clients", "blocked_clients") == 1);
        w(c, push);
        h.join().expect("blocked client")
    })
}

/// FLUSHALL of a few keys first: the log of a server starts with one.
pub fn prelude(c: &mut Client) {
    w(c, &["SET", "junk", "1"]);
    w(c, &["SELECT", "3"]);
    w(c, &["SET", "junk", "1"]);
    w(c, &["FLUSHALL"]);
    w(c, &["SELECT", "0"]);
}

/// Sends `cmds` in one write (so they run in one event-loop turn, before any child is
/// reaped) and returns the raw replies.
pub fn pipeline(c: &mut Client, cmds: &[&[&str]]) -> Vec<Vec<u8>> {
    let bytes: Vec<u8> = cmds.iter().flat_map(|a| resp(a)).collect();
    c.send_raw(&bytes);
    cmds.iter().map(|_| c.read_raw()).collect()
}

/// Waits until the AOF directory holds exactly the manifest and the files it names
/// (redis-server deletes history files in a background thread).
pub fn wait_history_gone(dir: &Path) -> Vec<String> {
    let mut want = Vec::new();
    wait_until("the history files to go", || {
        want = manifest(dir).into_iter().map(|f| f.0).collect();
        want.push("appendonly.aof.manifest".into());
        want.sort();
        listing(dir) == want
    });
    want
}

pub fn many_keys(c: &mut Client, prefix: &str, n: usize) {
    let cmds: Vec<Vec<String>> = (0..n)
        .map(|i| {
            vec!["SET".into(), format!("{prefix}{i}"), format!("value-{i}-{}", "v".repeat(i % 50))]
        })
        .collect();
    for chunk in cmds.chunks(200) {
        let refs: Vec<Vec<&str>> =
            chunk.iter().map(|v| v.iter().map(String::as_str).collect()).collect();
        let args: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
        for r in pipeline(c, &args) {
            assert_eq!(r, b"+OK\r\n");
        }
    }
}

pub fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

/// INFO's aof_base_size and aof_current_size are the sizes of the files.
pub fn aof_sizes(c: &mut Client, dir: &Path, what: &str) {
    let base = dir.join(AOF_DIR).join(&manifest(dir)[0].0);
    let base_len = file_len(&base) as i64;
    assert_eq!(info_int(c, "persistence", "aof_base_size"), base_len, "{what}: aof_base_size");
    let current = info_int(c, "persistence", "aof_current_size");
    let incr_len = file_len(&last_incr(dir)) as i64;
    assert_eq!(current, base_len + incr_len, "{what}: aof_current_size");
}

/// The files of a directory, sorted (for messages).
pub fn listing_of(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}
