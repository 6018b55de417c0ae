//! The CONFIG family against a real redis-server 7.0: GET patterns and values, SET with
//! its exact errors and all-or-nothing behaviour, REWRITE of a config file, and the fatal
//! start-up error for a bad config file.

mod common;

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::diff::Pair;
use common::{free_port, parse_val, start, unique_dir, wait_ready, Client, Val};

/// Directives Valkey 8 has and redis-server 7.0 lacks (they may appear in our CONFIG GET
/// replies only).
const NEWER_THAN_REDIS_7_0: &[&str] = &["set-max-listpack-entries", "set-max-listpack-value"];

/// The (name, value) pairs of a CONFIG GET reply (RESP3 map or RESP2 flat array), sorted.
fn pairs(v: &Val) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = match v {
        Val::Map(m) => m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
        Val::Array(flat) => {
            assert!(flat.len() % 2 == 0, "odd CONFIG GET reply: {v:?}");
            flat.chunks(2).map(|p| (p[0].as_str(), p[1].as_str())).collect()
        }
        other => panic!("CONFIG GET reply is not a map: {other:?}"),
    };
    out.sort();
    out
}

/// A [`Pair`] that also knows every directive name (and alias) we have, from
/// `CONFIG GET *`.
struct ConfigPair {
    pair: Pair,
    known: Vec<String>,
}

impl Deref for ConfigPair {
    type Target = Pair;
    fn deref(&self) -> &Pair {
        &self.pair
    }
}

impl DerefMut for ConfigPair {
    fn deref_mut(&mut self) -> &mut Pair {
        &mut self.pair
    }
}

fn pair(proto: u8) -> ConfigPair {
    let mut pair = Pair::start(proto, &[]);
    let known = pairs(&pair.a.cmd(&["CONFIG", "GET", "*"])).into_iter().map(|(k, _)| k).collect();
    ConfigPair { pair, known }
}

impl ConfigPair {
    /// CONFIG GET: the same pairs in any order, over the directives both servers have
    /// (ours may lack some of redis-server's and add a few newer ones).
    fn same_get(&mut self, args: &[&str]) {
        let (ours, theirs) = self.both(args);
        let ours = pairs(&parse_val(&mut &ours[..]));
        let theirs = pairs(&parse_val(&mut &theirs[..]));
        let ours: Vec<_> =
            ours.into_iter().filter(|(k, _)| !NEWER_THAN_REDIS_7_0.contains(&k.as_str())).collect();
        let known = |k: &str| self.known.iter().any(|n| n.eq_ignore_ascii_case(k));
        let theirs: Vec<_> = theirs.into_iter().filter(|(k, _)| known(k)).collect();
        self.assert_equal(args, ours, theirs);
    }
}

/// Directives whose defaults (as the test servers start) agree with redis-server 7.0.
const COMMON: &[&str] = &[
    "maxmemory",
    "maxmemory-policy",
    "maxmemory-samples",
    "maxmemory-clients",
    "timeout",
    "tcp-keepalive",
    "tcp-backlog",
    "databases",
    "maxclients",
    "hz",
    "dynamic-hz",
    "appendonly",
    "appendfsync",
    "appendfilename",
    "save",
    "dbfilename",
    "rdbcompression",
    "rdbchecksum",
    "stop-writes-on-bgsave-error",
    "proto-max-bulk-len",
    "client-query-buffer-limit",
    "client-output-buffer-limit",
    "slowlog-log-slower-than",
    "slowlog-max-len",
    "latency-monitor-threshold",
    "notify-keyspace-events",
    "bind",
    "protected-mode",
    "requirepass",
    "list-max-listpack-size",
    "list-compress-depth",
    "hash-max-listpack-value",
    "zset-max-listpack-entries",
    "zset-max-listpack-value",
    "set-max-intset-entries",
    "activerehashing",
    "lfu-log-factor",
    "lfu-decay-time",
    "active-expire-effort",
    "lazyfree-lazy-eviction",
    "lazyfree-lazy-user-del",
    "auto-aof-rewrite-percentage",
    "auto-aof-rewrite-min-size",
    "busy-reply-threshold",
    "lua-time-limit",
    "unixsocketperm",
];

#[test]
fn get_matches_redis() {
    for proto in [2, 3] {
        let mut p = pair(proto);
        p.same(&["CONFIG", "GET", "maxmemory"]);
        p.same(&["CONFIG", "GET", "MAXMEMORY"]);
        p.same(&["CONFIG", "GET", "nosuch"]);
        p.same(&["CONFIG", "GET"]);
        p.same_get(&["CONFIG", "GET", "maxmemory", "hz", "nosuch", "h?"]);
        p.same_get(&["CONFIG", "GET", "HZ", "h?", "hz"]);
        p.same_get(&["CONFIG", "GET", "*ziplist-value", "zset-*"]);
        for name in COMMON {
            p.same_get(&["CONFIG", "GET", name]);
        }
        // The port differs; the shape does not.
        let port = pairs(&p.a.cmd(&["CONFIG", "GET", "port"]));
        assert_eq!(port.len(), 1);
        assert_eq!(port[0].0, "port");
        assert!(port[0].1.parse::<u16>().is_ok_and(|n| n > 0), "{port:?}");
        let dir = pairs(&p.a.cmd(&["CONFIG", "GET", "dir"]));
        assert!(Path::new(&dir[0].1).is_absolute(), "{dir:?}");
        let all = pairs(&p.a.cmd(&["CONFIG", "GET", "*"]));
        assert!(all.len() > COMMON.len(), "CONFIG GET * lists every directive");
    }
}

#[test]
fn set_matches_redis() {
    let lines: &[&[&str]] = &[
        &["CONFIG", "SET", "maxmemory", "100mb"],
        &["CONFIG", "GET", "maxmemory"],
        &["CONFIG", "SET", "MAXMEMORY-POLICY", "ALLKEYS-LRU"],
        &["CONFIG", "GET", "maxmemory-policy"],
        &["CONFIG", "SET", "maxmemory-policy", "lru"],
        &["CONFIG", "SET", "hz", "x"],
        &["CONFIG", "SET", "hz", "1000"],
        &["CONFIG", "GET", "hz"],
        &["CONFIG", "SET", "nosuch", "1"],
        &["CONFIG", "SET", "daemonize", "yes"],
        &["CONFIG", "SET", "databases", "4"],
        &["CONFIG", "SET", "maxmemory", "1x"],
        &["CONFIG", "SET", "port", "65536"],
        &["CONFIG", "SET", "appendonly", "maybe"],
        &["CONFIG", "SET", "save", "100"],
        &["CONFIG", "SET", "save", "900 1 300 10"],
        &["CONFIG", "GET", "save"],
        &["CONFIG", "SET", "save", ""],
        &["CONFIG", "GET", "save"],
        &["CONFIG", "SET", "notify-keyspace-events", "KEA"],
        &["CONFIG", "GET", "notify-keyspace-events"],
        &["CONFIG", "SET", "notify-keyspace-events", "KEQ"],
        &["CONFIG", "SET", "client-output-buffer-limit", "normal 0 0"],
        &["CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 2kb 3"],
        &["CONFIG", "GET", "client-output-buffer-limit"],
        &["CONFIG", "SET", "lua-time-limit", "100"],
        &["CONFIG", "GET", "busy-reply-threshold"],
        &["CONFIG", "SET", "proto-max-bulk-len", "1000"],
        // Several pairs: all or nothing.
        &["CONFIG", "SET", "hz", "15", "maxmemory", "10mb"],
        &["CONFIG", "GET", "hz"],
        &["CONFIG", "SET", "hz", "20", "maxmemory", "20mb", "appendonly", "maybe"],
        &["CONFIG", "GET", "hz"],
        &["CONFIG", "GET", "maxmemory"],
        &["CONFIG", "SET", "hz", "10", "HZ", "11"],
        &["CONFIG", "SET", "hz", "11", "nosuch", "1"],
        &["CONFIG", "SET", "nosuch", "1", "hz", "x"],
        &["CONFIG", "SET", "databases", "1", "nosuch", "2"],
        &["CONFIG", "GET", "hz"],
        // Arity and pairing.
        &["CONFIG", "SET", "hz"],
        &["CONFIG", "SET", "hz", "10", "maxmemory"],
        &["CONFIG", "SET"],
        &["CONFIG"],
        &["CONFIG", "FOO"],
        &["CONFIG", "HELP"],
        &["CONFIG", "help"],
        &["CONFIG", "HELP", "x"],
        &["CONFIG", "RESETSTAT", "x"],
        &["CONFIG", "REWRITE", "x"],
        // Neither server was started with a config file.
        &["CONFIG", "REWRITE"],
        &["CONFIG", "RESETSTAT"],
    ];
    for proto in [2, 3] {
        let mut p = pair(proto);
        for args in lines {
            if args.len() >= 2 && args[1] == "GET" {
                p.same_get(args);
            } else {
                p.same(args);
            }
        }
    }
}

/// Valkey and redis-server 7.0 both default `hash-max-listpack-entries` to 512.
#[test]
fn listpack_defaults_match_redis() {
    let mut p = pair(2);
    p.same_get(&["CONFIG", "GET", "hash-max-listpack-entries"]);
    p.same_get(&["CONFIG", "GET", "*max-*-entries*"]);
    p.same_get(&["CONFIG", "GET", "hz", "h*", "HZ"]);
}

/// A directive set through an alias: errors name the alias (lower case), and an alias
/// with its canonical name in one CONFIG SET is not a duplicate (redis-server 7.0).
#[test]
fn alias_errors_match_redis() {
    let mut p = pair(2);
    p.same(&["CONFIG", "SET", "hash-max-ziplist-entries", "-1"]);
    p.same(&["CONFIG", "SET", "HASH-MAX-ZIPLIST-ENTRIES", "x"]);
    p.same(&["CONFIG", "SET", "Hz", "x"]);
    p.same(&["CONFIG", "SET", "hz", "10", "HZ", "11"]);
    p.same(&["CONFIG", "SET", "lua-time-limit", "1", "busy-reply-threshold", "2"]);
    p.same_get(&["CONFIG", "GET", "busy-reply-threshold", "lua-time-limit"]);
}

/// `dir` and `dbfilename` are protected configs: CONFIG SET refuses them unless
/// `enable-protected-configs` allows it.
#[test]
fn protected_configs_match_redis() {
    let mut p = pair(2);
    p.same(&["CONFIG", "SET", "dbfilename", "a/b.rdb"]);
    p.same(&["CONFIG", "SET", "dbfilename", "x.rdb"]);
    p.same(&["CONFIG", "SET", "dir", "/"]);
    p.same_get(&["CONFIG", "GET", "dbfilename"]);
}

#[test]
fn resetstat_clears_command_counters() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for _ in 0..5 {
        c.cmd(&["SET", "k", "v"]);
    }
    c.cmd(&["GET", "k"]);
    c.cmd(&["GET", "nosuch"]);
    assert_eq!(c.cmd(&["CONFIG", "RESETSTAT"]), Val::ok());
    let info = c.cmd(&["INFO", "commandstats"]).as_str();
    assert!(info.contains("cmdstat_config|resetstat:calls=1,"), "{info}");
    assert!(!info.contains("cmdstat_set:"), "{info}");
    let stats = c.cmd(&["INFO", "stats"]).as_str();
    assert!(
        stats.contains("keyspace_hits:0\r\n") && stats.contains("keyspace_misses:0\r\n"),
        "{stats}"
    );
}

/// A ferrokey started with a config file as its first argument (plus test options).
struct FileServer {
    child: Child,
    port: u16,
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_with_file(conf: &Path, dir: &Path) -> FileServer {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
        .arg(conf)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ferrokey-server");
    let mut server = FileServer { child, port };
    match wait_ready(&mut server.child, port) {
        Ok(()) => server,
        Err(Some(status)) => panic!("ferrokey-server exited: {status}"),
        Err(None) => panic!("ferrokey-server with {} did not start", conf.display()),
    }
}

#[test]
fn rewrite_keeps_comments_and_round_trips() {
    let dir = unique_dir("config-rewrite");
    let conf = dir.join("ferrokey.conf");
    let original = "# A comment that must survive\n\nhz 20\n# maxmemory is set below\nmaxmemory 1mb\nsave \"\"\n";
    std::fs::write(&conf, original).unwrap();
    {
        let s = start_with_file(&conf, &dir);
        let mut c = Client::connect(s.port);
        assert_eq!(
            c.cmd(&["CONFIG", "GET", "hz"]),
            Val::Array(vec![Val::bulk("hz"), Val::bulk("20")])
        );
        assert_eq!(
            c.cmd(&["CONFIG", "SET", "maxmemory", "2mb", "maxmemory-policy", "allkeys-lru"]),
            Val::ok()
        );
        assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), Val::ok());
    }
    let text = std::fs::read_to_string(&conf).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for kept in ["# A comment that must survive", "# maxmemory is set below", "hz 20"] {
        assert!(lines.contains(&kept), "{kept:?} lost:\n{text}");
    }
    assert_eq!(lines.iter().filter(|l| l.starts_with("maxmemory ")).count(), 1, "{text}");
    assert!(lines.contains(&"maxmemory-policy allkeys-lru"), "{text}");
    // The comment before `maxmemory` still precedes it.
    let comment = lines.iter().position(|l| *l == "# maxmemory is set below").unwrap();
    let line = lines.iter().position(|l| l.starts_with("maxmemory ")).unwrap();
    assert_eq!(line, comment + 1, "{text}");
    // Started again from the rewritten file, the server has the values that were set.
    let s = start_with_file(&conf, &dir);
    let mut c = Client::connect(s.port);
    let got = pairs(&c.cmd(&["CONFIG", "GET", "maxmemory", "maxmemory-policy", "hz"]));
    let want = [("hz", "20"), ("maxmemory", "2097152"), ("maxmemory-policy", "allkeys-lru")];
    assert_eq!(got, want.map(|(k, v)| (k.to_string(), v.to_string())));
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_config_file_is_fatal_like_redis() {
    let dir = unique_dir("config-fatal");
    let conf = dir.join("bad.conf");
    std::fs::write(&conf, "# comment\nport 0\nmaxmemory 1x\n").unwrap();
    let run = |bin: &str| {
        let out = Command::new(bin).arg(&conf).output().expect("run server");
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, ours) = run(env!("CARGO_BIN_EXE_ferrokey-server"));
    let redis = common::which("redis-server").expect("redis-server is installed");
    let (redis_code, theirs) = run(&redis);
    assert_eq!(code, Some(1), "{ours}");
    assert_eq!(redis_code, Some(1), "{theirs}");
    assert!(ours.contains("*** FATAL CONFIG FILE ERROR ("), "{ours}");
    // After the banner (which names the server and version), the lines are Valkey's.
    let tail: Vec<&str> =
        theirs.lines().skip_while(|l| !l.starts_with("*** FATAL")).skip(1).collect();
    assert_eq!(tail.len(), 3, "{theirs}");
    let ours_lines: Vec<&str> =
        ours.lines().skip_while(|l| !l.starts_with("*** FATAL")).skip(1).collect();
    assert_eq!(ours_lines[..3], tail[..], "ferrokey:\n{ours}\nredis-server:\n{theirs}");
    let _ = std::fs::remove_dir_all(&dir);
}
