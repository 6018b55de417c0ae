//! The CONFIG family against a real Valkey 9.1 (`common::start_valkey`): every name of its
//! `CONFIG GET *` with the same default, GET patterns and values, SET with its exact errors
//! and all-or-nothing behaviour, REWRITE of a config file, the fatal start-up error for a bad
//! config file, and start-up on Valkey's own test configuration.

mod common;

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::diff::Pair;
use common::{free_port, parse_val, start, unique_dir, wait_ready, Client, Val};

/// Names whose value is about the process, not a default: the test servers are started
/// with their own port, directory and I/O threads.
const PROCESS_DEPENDENT: &[&str] = &["dir", "port", "pidfile", "logfile", "io-threads"];

/// Names ferrokey lists that Valkey 9.1 does not (it still accepts them in a file).
const OURS_ONLY: &[&str] = &["dynamic-hz", "metrics-port", "metrics-bind", "metrics-max-clients"];

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
    /// CONFIG GET: the same pairs in any order (ours may add [`OURS_ONLY`]).
    fn same_get(&mut self, args: &[&str]) {
        let (ours, theirs) = self.both(args);
        let ours = pairs(&parse_val(&mut &ours[..]));
        let theirs = pairs(&parse_val(&mut &theirs[..]));
        let ours: Vec<_> =
            ours.into_iter().filter(|(k, _)| !OURS_ONLY.contains(&k.as_str())).collect();
        let known = |k: &str| self.known.iter().any(|n| n.eq_ignore_ascii_case(k));
        assert!(theirs.iter().all(|(k, _)| known(k)), "{theirs:?}");
        self.assert_equal(args, ours, theirs);
    }
}

/// Directives whose defaults (as the test servers start) agree with Valkey 9.1.
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
fn get_matches_valkey() {
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
fn set_matches_valkey() {
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

/// Valkey defaults `hash-max-listpack-entries` to 512.
#[test]
fn listpack_defaults_match_valkey() {
    let mut p = pair(2);
    p.same_get(&["CONFIG", "GET", "hash-max-listpack-entries"]);
    p.same_get(&["CONFIG", "GET", "*max-*-entries*"]);
    p.same_get(&["CONFIG", "GET", "hz", "h*", "HZ"]);
}

/// A directive set through an alias: errors name the alias (lower case), and an alias
/// with its canonical name in one CONFIG SET is not a duplicate (Valkey 9.1).
#[test]
fn alias_errors_match_valkey() {
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
fn protected_configs_match_valkey() {
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
fn bad_config_file_is_fatal_like_valkey() {
    let dir = unique_dir("config-fatal");
    let conf = dir.join("bad.conf");
    std::fs::write(&conf, "# comment\nport 0\nmaxmemory 1x\n").unwrap();
    let run = |bin: &str| {
        let out = Command::new(bin).arg(&conf).output().expect("run server");
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, ours) = run(env!("CARGO_BIN_EXE_ferrokey-server"));
    let (valkey_code, theirs) = run(&common::valkey_bin());
    assert_eq!(code, Some(1), "{ours}");
    assert_eq!(valkey_code, Some(1), "{theirs}");
    assert!(ours.contains("*** FATAL CONFIG FILE ERROR ("), "{ours}");
    // After the banner (which names the server and version), the lines are Valkey's.
    let tail: Vec<&str> =
        theirs.lines().skip_while(|l| !l.starts_with("*** FATAL")).skip(1).collect();
    assert_eq!(tail.len(), 3, "{theirs}");
    let ours_lines: Vec<&str> =
        ours.lines().skip_while(|l| !l.starts_with("*** FATAL")).skip(1).collect();
    assert_eq!(ours_lines[..3], tail[..], "ferrokey:\n{ours}\nvalkey-server:\n{theirs}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every name of Valkey 9.1's `CONFIG GET *` (aliases included) is one of ours, with the
/// same value on a fresh server, but for [`PROCESS_DEPENDENT`] ones.
#[test]
fn every_valkey_name_is_known_with_its_default() {
    let ours_server = start(&[]);
    let theirs_server = common::start_valkey(&[]);
    let ours = pairs(&Client::connect(ours_server.port).cmd(&["CONFIG", "GET", "*"]));
    let theirs = pairs(&Client::connect(theirs_server.port).cmd(&["CONFIG", "GET", "*"]));
    assert!(theirs.len() >= 237, "{}", theirs.len());
    let mut differ = Vec::new();
    for (name, value) in &theirs {
        match ours.iter().find(|(n, _)| n == name) {
            None => differ.push(format!("{name}: unknown")),
            Some(_) if PROCESS_DEPENDENT.contains(&name.as_str()) => {}
            Some((_, v)) if v != value => differ.push(format!("{name}: {v:?} != {value:?}")),
            Some(_) => {}
        }
    }
    assert!(differ.is_empty(), "{differ:#?}");
    let extra: Vec<_> = ours.iter().filter(|(n, _)| !theirs.iter().any(|(t, _)| t == n)).collect();
    assert!(extra.iter().all(|(n, _)| OURS_ONLY.contains(&n.as_str())), "{extra:?}");
}

/// CONFIG SET validation of directives added for Valkey 9.1, byte for byte.
#[test]
fn set_errors_of_new_directives_match_valkey() {
    let mut p = pair(2);
    for (name, value) in [
        ("propagation-error-behavior", "crash"),
        ("propagation-error-behavior", "PANIC"),
        ("repl-diskless-sync-delay", "-1"),
        ("repl-diskless-sync-delay", "x"),
        ("repl-backlog-size", "0"),
        ("repl-backlog-size", "1gb"),
        ("repl-backlog-size", "1x"),
        ("repl-diskless-load", "sometimes"),
        ("replica-read-only", "maybe"),
        ("slave-read-only", "maybe"),
        ("active-defrag-cycle-max", "100"),
        ("active-defrag-ignore-bytes", "0"),
        ("activedefrag", "no"),
        ("jemalloc-bg-thread", "x"),
        ("shutdown-on-sigterm", "later"),
        ("shutdown-on-sigterm", "default"),
        ("oom-score-adj", "sometimes"),
        ("oom-score-adj-values", "1 2"),
        ("oom-score-adj-values", "0 0 2001"),
        ("oom-score-adj-values", "0 200 800"),
        ("latency-tracking-info-percentiles", "101"),
        ("latency-tracking-info-percentiles", "x"),
        ("latency-tracking-info-percentiles", "50 99"),
        ("tls-auth-clients", "maybe"),
        ("tls-session-cache-size", "-1"),
        ("cluster-node-timeout", "-1"),
        ("cluster-announce-hostname", "a_b"),
        ("cluster-announce-client-ipv4", "1.2.3"),
        ("cluster-announce-client-ipv6", "1.2.3.4"),
        ("cluster-preferred-endpoint-type", "dns"),
        ("proc-title-template", "{nope}"),
        ("proc-title-template", ""),
        ("log-format", "xml"),
        ("commandlog-reply-larger-than", "-2"),
        ("slot-migration-max-failover-repl-bytes", "-2"),
        ("slot-migration-max-failover-repl-bytes", "-1kb"),
        ("max-new-connections-per-cycle", "0"),
        ("stream-node-max-bytes", "4kb"),
        ("aclfile", "x"),
        ("cluster-enabled", "no"),
        ("replicaof", "no one"),
        ("slaveof", "no one"),
        ("rdma-rx-size", "1"),
        ("syslog-enabled", "no"),
        ("hash-seed", "x"),
        ("enable-module-command", "yes"),
        ("masterauth", "secret"),
        ("primaryuser", "u"),
        ("repl-ping-slave-period", "0"),
    ] {
        p.same(&["CONFIG", "SET", name, value]);
        p.same_get(&["CONFIG", "GET", name]);
    }
}

/// The reply copy avoidance settings are hidden in Valkey 9.1: no pattern lists them, their
/// exact names do, and CONFIG SET checks them as any integer.
#[test]
fn hidden_directives_match_valkey() {
    let mut p = pair(2);
    for name in [
        "min-io-threads-avoid-copy-reply",
        "min-string-size-avoid-copy-reply",
        "min-string-size-avoid-copy-reply-threaded",
    ] {
        p.same(&["CONFIG", "GET", name]);
        p.same(&["CONFIG", "GET", &name.to_uppercase()]);
        for value in ["-1", "2147483648", "1k", "x", "0", "2147483647"] {
            p.same(&["CONFIG", "SET", name, value]);
            p.same(&["CONFIG", "GET", name]);
        }
    }
    p.same(&["CONFIG", "GET", "*avoid*"]);
    p.same(&["CONFIG", "GET", "min-string-size-avoid-copy-repl?"]);
}

/// Valkey's own test configuration (`tests/assets/default.conf`) starts ferrokey, with its
/// port, directory and pidfile overridden on the command line.
#[test]
fn valkey_test_default_conf_starts() {
    let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/assets/valkey-default.conf");
    let dir = unique_dir("valkey-default-conf");
    let pidfile = dir.join("ferrokey.pid");
    for _attempt in 0..5 {
        let port = free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
            .arg(&conf)
            .args(["--port", &port.to_string(), "--dir", dir.to_str().unwrap()])
            .args(["--pidfile", pidfile.to_str().unwrap(), "--loglevel", "warning"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ferrokey");
        match wait_ready(&mut child, port) {
            Ok(()) => {
                let mut c = Client::connect(port);
                assert_eq!(c.cmd(&["PING"]), Val::Simple("PONG".into()));
                let got = pairs(&c.cmd(&[
                    "CONFIG",
                    "GET",
                    "propagation-error-behavior",
                    "shutdown-on-sigterm",
                    "notify-keyspace-events",
                    "replica-serve-stale-data",
                ]));
                let want = [
                    ("notify-keyspace-events", "AKE"),
                    ("propagation-error-behavior", "panic"),
                    ("replica-serve-stale-data", "yes"),
                    ("shutdown-on-sigterm", "force"),
                ];
                assert_eq!(got, want.map(|(k, v)| (k.to_string(), v.to_string())));
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&dir);
                return;
            }
            Err(Some(status)) => panic!("ferrokey exited on valkey-default.conf: {status}"),
            Err(None) => {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
    panic!("ferrokey did not start on valkey-default.conf");
}

/// CONFIG REWRITE writes the directives added for Valkey 9.1 so that they load back.
#[test]
fn rewrite_round_trips_new_directives() {
    let dir = unique_dir("config-rewrite-new");
    let conf = dir.join("ferrokey.conf");
    std::fs::write(&conf, "propagation-error-behavior panic\nslave-read-only no\n").unwrap();
    let s = start_with_file(&conf, &dir);
    let mut c = Client::connect(s.port);
    let set = [
        ("repl-backlog-size", "2mb"),
        ("oom-score-adj-values", "1 2 3"),
        ("latency-tracking-info-percentiles", "50 99.99"),
        ("shutdown-on-sigint", "nosave now"),
        ("tls-protocols", "TLSv1.3"),
        ("cluster-node-timeout", "5000"),
        ("slot-migration-max-failover-repl-bytes", "-1"),
        ("primaryauth", "s e c"),
    ];
    for (name, value) in set {
        assert_eq!(c.cmd(&["CONFIG", "SET", name, value]), Val::ok(), "{name}");
    }
    assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), Val::ok());
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(text.contains("replica-read-only no\n"), "{text}");
    drop(s);
    let s = start_with_file(&conf, &dir);
    let mut c = Client::connect(s.port);
    let names: Vec<&str> = set.iter().map(|(n, _)| *n).collect();
    let got = pairs(&c.cmd(&[&["CONFIG", "GET"][..], &names].concat()));
    let mut want: Vec<(String, String)> = set
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .map(|(n, v)| if n == "repl-backlog-size" { (n, "2097152".into()) } else { (n, v) })
        .collect();
    want.sort();
    assert_eq!(got, want);
    let behavior = pairs(&c.cmd(&["CONFIG", "GET", "propagation-error-behavior"]));
    assert_eq!(behavior, [("propagation-error-behavior".to_string(), "panic".to_string())]);
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `rename-command`: a renamed command answers to its new name only, a command renamed to
/// "" is gone, long names work, ACL rules and DRYRUN behave as Valkey's; a line naming no
/// command, or a name already taken, stops the start-up with Valkey's error.
#[test]
fn rename_command_matches_valkey() {
    let args = [
        "--rename-command",
        "config",
        "cfg2",
        "--rename-command",
        "flushall",
        "",
        "--rename-command",
        "GET",
        "aVeryLongNameThatIsLongerThanThirtyTwoBytes1234",
    ];
    let mut p = Pair::start(2, &args);
    p.same_lines(&[
        "cfg2 GET maxmemory",
        "CONFIG GET maxmemory",
        "FLUSHALL",
        "SET k v",
        "AVERYLONGNAMETHATISLONGERTHANTHIRTYTWOBYTES1234 k",
        "GET k",
        "ACL SETUSER u on nopass +get +config|get ~*",
        "ACL GETUSER u",
        "ACL DRYRUN u config get x",
        "ACL DRYRUN u cfg2 get x",
    ]);
    for (bad, reason) in [
        (["--rename-command", "nosuch", "x"], "No such command in rename-command"),
        (["--rename-command", "get", "set"], "Target command name already exists"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
            .args(["--port", &free_port().to_string()])
            .args(bad)
            .output()
            .expect("run ferrokey-server");
        assert!(!out.status.success(), "{bad:?} should stop the start-up");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(text.contains(reason), "{bad:?}: {text}");
    }
}

/// Valkey 9.1's hidden testing directives: shown by exact name only, set and checked as
/// Valkey does.
#[test]
fn hidden_testing_directives_match_valkey() {
    let mut p = pair(2);
    let values: &[(&str, &[&str])] = &[
        ("use-exit-on-panic", &["yes", "maybe", "no"]),
        ("aof-disable-auto-gc", &["yes", "x", "no"]),
        ("enable-debug-assert", &["yes", "no"]),
        ("debug-context", &["ctx", ""]),
        ("rdb-key-save-delay", &["-2147483648", "-2147483649", "2147483647", "1k", "0"]),
        ("key-load-delay", &["-5", "2147483648", "100", "0"]),
        ("watchdog-period", &["-1", "100", "0"]),
        ("loading-process-events-interval-bytes", &["1023", "1024", "2147483648", "2097152"]),
    ];
    for (name, tries) in values {
        p.same(&["CONFIG", "GET", name]);
        for value in *tries {
            p.same(&["CONFIG", "SET", name, value]);
            p.same(&["CONFIG", "GET", name]);
        }
    }
    p.same_get(&["CONFIG", "GET", "*delay*"]);
    p.same_get(&["CONFIG", "GET", "*-gc"]);
}

/// `key-load-delay` and `rdb-key-save-delay` slow each key of a load or a save (tests use
/// them to catch one in progress); `aof-disable-auto-gc` keeps the AOF's history files.
#[test]
fn testing_directives_act() {
    let s = start(&["--enable-debug-command", "yes", "--appendonly", "yes"]);
    let mut c = Client::connect(s.port);
    for i in 0..100 {
        c.cmd(&["SET", &format!("k{i}"), "v"]);
    }
    assert_eq!(c.cmd(&["CONFIG", "SET", "key-load-delay", "2000"]), Val::ok());
    let started = std::time::Instant::now();
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]), Val::ok());
    assert!(started.elapsed() >= std::time::Duration::from_millis(200), "{:?}", started.elapsed());
    assert_eq!(c.cmd(&["CONFIG", "SET", "key-load-delay", "0"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Val::Int(100));

    assert_eq!(c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "5000"]), Val::ok());
    c.cmd(&["BGSAVE"]);
    let info = c.cmd(&["INFO", "persistence"]).as_str();
    assert!(info.contains("rdb_bgsave_in_progress:1"), "{info}");
    assert_eq!(c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "0"]), Val::ok());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while c.cmd(&["INFO", "persistence"]).as_str().contains("rdb_bgsave_in_progress:1") {
        assert!(std::time::Instant::now() < deadline, "the BGSAVE did not end");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    let manifest = || {
        let dir = s.dir.join("appendonlydir");
        std::fs::read_to_string(dir.join("appendonly.aof.manifest")).unwrap()
    };
    let rewrite = |c: &mut Client| {
        c.cmd(&["BGREWRITEAOF"]);
        let busy = |i: &str| {
            i.contains("aof_rewrite_in_progress:1") || i.contains("aof_rewrite_scheduled:1")
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while busy(&c.cmd(&["INFO", "persistence"]).as_str()) {
            assert!(std::time::Instant::now() < deadline, "the rewrite did not end");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    assert_eq!(c.cmd(&["CONFIG", "SET", "aof-disable-auto-gc", "yes"]), Val::ok());
    rewrite(&mut c);
    assert!(manifest().contains("type h"), "{}", manifest());
    assert_eq!(c.cmd(&["CONFIG", "SET", "aof-disable-auto-gc", "no"]), Val::ok());
    assert!(!manifest().contains("type h"), "{}", manifest());
}
