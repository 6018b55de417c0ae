//! DEBUG's inspection and testing subcommands: LISTPACK, QUICKLIST, HTSTATS, HTSTATS-KEY,
//! SDSLEN, STRUCTSIZE, CLIENT-EVICTION, QUICKLIST-PACKED-THRESHOLD, DICT-RESIZING,
//! REPLYBUFFER, AOF-FLUSH-SLEEP, MALLCTL, CONFIG-REWRITE-FORCE-ALL, RESTART and
//! CRASH-AND-RECOVER. Errors and fixed replies against Valkey 9.1; the figures, which are
//! ferrokey's own structures, and the effects directly.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::diff::{same_as_valkey_with, Pair};
use crate::common::{err, free_port, int, start, unique_dir, wait_ready, Client, Server, Val};

const DEBUG_ON: &[&str] = &["--enable-debug-command", "yes"];

#[test]
fn debug_inspection_errors_match_valkey() {
    for proto in [2, 3] {
        same_as_valkey_with(
            proto,
            DEBUG_ON,
            &[
                "RPUSH l a b c",
                "HSET h f v",
                "SET s hello",
                "SET n 123",
                "DEBUG QUICKLIST-PACKED-THRESHOLD abc",
                "DEBUG QUICKLIST-PACKED-THRESHOLD 5gb",
                "DEBUG QUICKLIST-PACKED-THRESHOLD -1",
                "DEBUG QUICKLIST-PACKED-THRESHOLD 4gb",
                "DEBUG QUICKLIST-PACKED-THRESHOLD 0 x",
                "DEBUG QUICKLIST-PACKED-THRESHOLD 1kb",
                "DEBUG QUICKLIST-PACKED-THRESHOLD 0",
                "DEBUG LISTPACK l",
                "DEBUG LISTPACK h",
                "DEBUG LISTPACK s",
                "DEBUG LISTPACK nokey",
                "DEBUG LISTPACK",
                "DEBUG LISTPACK l x",
                "DEBUG QUICKLIST l",
                "DEBUG QUICKLIST l 1",
                "DEBUG QUICKLIST nokey",
                "DEBUG QUICKLIST l 1 2",
                "DEBUG QUICKLIST",
                "DEBUG HTSTATS 99",
                "DEBUG HTSTATS x",
                "DEBUG HTSTATS -1",
                "DEBUG HTSTATS",
                "DEBUG HTSTATS-KEY h",
                "DEBUG HTSTATS-KEY s",
                "DEBUG HTSTATS-KEY nokey",
                "DEBUG HTSTATS-KEY l full",
                "DEBUG HTSTATS-KEY",
                "DEBUG SDSLEN n",
                "DEBUG SDSLEN l",
                "DEBUG SDSLEN nokey",
                "DEBUG SDSLEN",
                "DEBUG STRUCTSIZE x",
                "DEBUG CLIENT-EVICTION",
                "DEBUG CLIENT-EVICTION x",
                "DEBUG REPLYBUFFER RESIZING 0",
                "DEBUG REPLYBUFFER RESIZING x",
                "DEBUG REPLYBUFFER BOGUS 1",
                "DEBUG REPLYBUFFER RESIZING",
                "DEBUG REPLYBUFFER RESIZING 1 2",
                "DEBUG REPLYBUFFER RESIZING 1",
                "DEBUG DICT-RESIZING 0",
                "DEBUG DICT-RESIZING x",
                "DEBUG DICT-RESIZING 1",
                "DEBUG DICT-RESIZING",
                "DEBUG DICT-RESIZING 1 2",
                "DEBUG AOF-FLUSH-SLEEP 0",
                "DEBUG AOF-FLUSH-SLEEP x",
                "DEBUG AOF-FLUSH-SLEEP",
                "DEBUG CONFIG-REWRITE-FORCE-ALL",
                "DEBUG CONFIG-REWRITE-FORCE-ALL x",
                "DEBUG RESTART x",
                "DEBUG CRASH-AND-RECOVER x",
                "DEBUG FORCE-TLS-WRITE-ERROR 0",
                "DEBUG FORCE-TLS-WRITE-ERROR",
                // An emptied database prints its two headings and nothing else.
                "FLUSHALL",
                "DEBUG HTSTATS 0",
                "DEBUG HTSTATS 0 full",
            ],
        );
    }
}

/// DEBUG HELP lists, in Valkey 9.1's words and order, the subcommands ferrokey has, and
/// each of them is known (never the unknown-subcommand error).
#[test]
fn debug_help_is_valkeys_in_its_order() {
    let mut p = Pair::start(2, DEBUG_ON);
    let (ours, theirs) = (p.a.cmd(&["DEBUG", "HELP"]), p.b.cmd(&["DEBUG", "HELP"]));
    let theirs: Vec<String> = theirs.as_array().iter().map(Val::as_str).collect();
    let ours: Vec<String> = ours.as_array().iter().map(Val::as_str).collect();
    let mut rest = theirs.iter();
    for line in &ours {
        assert!(rest.any(|t| t == line), "{line:?} is not in Valkey's help, or out of order");
    }
    for entry in ours.iter().filter(|l| !l.starts_with(' ') && !l.starts_with("DEBUG <")) {
        let mut words = entry.split(' ');
        let name = words.next().unwrap();
        // `REPLYBUFFER RESIZING <0|1>`: the option word comes with the name.
        if let Some(option) = words.next().filter(|w| w.bytes().all(|b| b.is_ascii_uppercase())) {
            assert_eq!(p.a.cmd(&["DEBUG", name, option, "1"]), Val::ok(), "{entry}");
            continue;
        }
        if matches!(
            name,
            "ASSERT" | "PANIC" | "SEGFAULT" | "OOM" | "RESTART" | "CRASH-AND-RECOVER" | "SLEEP"
        ) {
            continue; // They end or hold the server.
        }
        let reply = p.a.cmd(&["DEBUG", name, "x", "y", "z", "w"]);
        let unknown = format!("ERR unknown subcommand or wrong number of arguments for '{name}'");
        // Too many words is refused with that error too; one word more must not be.
        if reply == err(&format!("{unknown}. Try DEBUG HELP.")) {
            let fewer = p.a.cmd(&["DEBUG", name, "x"]);
            let two = p.a.cmd(&["DEBUG", name, "x", "y"]);
            let none = p.a.cmd(&["DEBUG", name]);
            let known = |v: &Val| !matches!(v, Val::Err(e) if e.starts_with(&unknown));
            assert!(known(&fewer) || known(&two) || known(&none), "{name} is unknown");
        }
    }
}

/// With resizing off the key table keeps its one bucket and chains (as Valkey's: 300 keys,
/// 49 child buckets under one head); back on, the next write grows it.
#[test]
fn debug_htstats_shows_the_table_and_dict_resizing_holds_it() {
    let s = start(DEBUG_ON);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["DEBUG", "DICT-RESIZING", "0"]), Val::ok());
    assert_eq!(c.cmd(&["DEBUG", "POPULATE", "300"]), Val::ok());
    let stats = c.cmd(&["DEBUG", "HTSTATS", "0", "full"]).as_str();
    let expected = "[Dictionary HT]\nHash table 0 stats (main hash table):\n table size: 7\n \
        number of entries: 300\n rehashing index: -1\n top-level buckets: 1\n child buckets: 49\n \
        max chain length: 49\n avg chain length: 49.000000\n chain length distribution:\n\
        [Expires HT]\n";
    assert_eq!(stats, expected);
    assert_eq!(c.cmd(&["DEBUG", "DICT-RESIZING", "1"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "x", "y"]), Val::ok());
    assert_eq!(c.cmd(&["EXPIRE", "x", "100"]), int(1));
    let deadline = Instant::now() + Duration::from_secs(5);
    let stats = loop {
        let stats = c.cmd(&["DEBUG", "HTSTATS", "0"]).as_str();
        if stats.contains("rehashing index: -1") || Instant::now() > deadline {
            break stats;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(stats.contains(" number of entries: 301\n rehashing index: -1\n"), "{stats}");
    assert!(!stats.contains(" table size: 7\n"), "{stats}");
    assert!(stats.ends_with("[Expires HT]\nNot a hash table: an array of the 1 keys with a TTL\n"));

    for i in 0..600 {
        c.cmd(&["SADD", "set", &format!("m{i}")]);
    }
    let stats = c.cmd(&["DEBUG", "HTSTATS-KEY", "set", "full"]).as_str();
    assert!(stats.starts_with("Hash table 0 stats (main hash table):\n table size: "), "{stats}");
    assert!(stats.contains("\n number of entries: 600\n"), "{stats}");
    assert!(stats.contains("\n chain length distribution:\n   0: "), "{stats}");
}

#[test]
fn debug_sdslen_structsize_and_client_eviction() {
    let s = start(DEBUG_ON);
    let mut c = Client::connect(s.port);
    c.cmd(&["SET", "s", "hello"]);
    let line = c.cmd(&["DEBUG", "SDSLEN", "s"]).as_str();
    assert!(line.starts_with("key_sds_len:1 key_sds_avail:0 obj_alloc:"), "{line}");
    assert!(line.ends_with(" val_sds_len:5 val_sds_avail:0 val_alloc:0"), "{line}");
    // A long value lies in a buffer of its own, with spare room after an append.
    c.cmd(&["SET", "long", &"x".repeat(300)]);
    c.cmd(&["APPEND", "long", "y"]);
    let line = c.cmd(&["DEBUG", "SDSLEN", "long"]).as_str();
    let field = |name: &str| -> usize {
        let f =
            line.split(' ').find_map(|f| f.strip_prefix(name)).unwrap_or_else(|| panic!("{line}"));
        f.parse().unwrap()
    };
    assert_eq!(field("val_sds_len:"), 301);
    assert!(field("val_alloc:") >= 301 + field("val_sds_avail:"), "{line}");

    let sizes = c.cmd(&["DEBUG", "STRUCTSIZE"]);
    assert!(matches!(sizes, Val::Bulk(_)), "{sizes:?}");
    let sizes = sizes.as_str();
    assert!(sizes.starts_with("bits:64 keyentry_header:6 bucket:64 "), "{sizes}");
    assert!(sizes.ends_with(' '), "{sizes}");

    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory-clients", "1mb"]), Val::ok());
    let buckets = c.cmd(&["DEBUG", "CLIENT-EVICTION"]).as_str();
    let lines: Vec<&str> = buckets.lines().collect();
    assert_eq!(lines.len(), 19, "{buckets}");
    assert!(lines[0].starts_with("bucket          0 -      32767: tot-mem: "), "{buckets}");
    assert!(lines[18].starts_with("bucket 4294967296+            : tot-mem: "), "{buckets}");
    let clients: usize =
        lines.iter().map(|l| l.rsplit("clients: ").next().unwrap().parse::<usize>().unwrap()).sum();
    assert_eq!(clients, 1, "{buckets}");
    let mut no_evict = Client::connect(s.port);
    assert_eq!(no_evict.cmd(&["CLIENT", "NO-EVICT", "on"]), Val::ok());
    let mut other = Client::connect(s.port);
    assert_eq!(other.cmd(&["PING"]), Val::Simple("PONG".into()));
    let buckets = c.cmd(&["DEBUG", "CLIENT-EVICTION"]).as_str();
    let clients: usize = buckets
        .lines()
        .map(|l| l.rsplit("clients: ").next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(clients, 2, "the NO-EVICT client is not counted: {buckets}");
}

/// Reads the `tot-mem` of CLIENT INFO.
fn tot_mem(c: &mut Client) -> usize {
    let info = c.cmd(&["CLIENT", "INFO"]).as_str();
    let field = info.split(' ').find_map(|f| f.strip_prefix("tot-mem=")).expect("tot-mem");
    field.parse().unwrap()
}

#[test]
fn debug_replybuffer_resizing_keeps_a_grown_buffer() {
    let s = start(DEBUG_ON);
    // KEYS builds its reply in the buffer (about 480 kB); a long string would be sent from
    // where it lies instead.
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["DEBUG", "POPULATE", "30000"]), Val::ok());
    c.cmd(&["KEYS", "*"]);
    assert!(tot_mem(&mut c) < 150_000, "the drained buffer shrank");
    assert_eq!(c.cmd(&["DEBUG", "REPLYBUFFER", "RESIZING", "0"]), Val::ok());
    c.cmd(&["KEYS", "*"]);
    assert!(tot_mem(&mut c) > 300_000, "the buffer kept its size");
    assert_eq!(c.cmd(&["DEBUG", "REPLYBUFFER", "RESIZING", "1"]), Val::ok());
    c.cmd(&["KEYS", "*"]);
    assert!(tot_mem(&mut c) < 150_000, "shrinking again");
}

#[test]
fn debug_mallctl_reads_and_writes_jemalloc_settings() {
    let s = start(DEBUG_ON);
    let mut c = Client::connect(s.port);
    let Val::Int(old) = c.cmd(&["DEBUG", "MALLCTL", "arenas.dirty_decay_ms"]) else {
        panic!("a number")
    };
    let new = (old + 1).to_string();
    assert_eq!(c.cmd(&["DEBUG", "MALLCTL", "arenas.dirty_decay_ms", &new]), Val::Int(old));
    assert_eq!(c.cmd(&["DEBUG", "MALLCTL", "arenas.dirty_decay_ms"]), Val::Int(old + 1));
    assert!(matches!(c.cmd(&["DEBUG", "MALLCTL", "opt.retain"]), Val::Int(0 | 1)));
    assert_eq!(c.cmd(&["DEBUG", "MALLCTL", "no.such"]), err("ERR No such file or directory"));
    assert_eq!(
        c.cmd(&["DEBUG", "MALLCTL", "arenas.narenas", "1"]),
        err("ERR Operation not permitted")
    );
    assert_eq!(
        c.cmd(&["DEBUG", "MALLCTL", "arenas.narenas", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert!(c.cmd(&["DEBUG", "MALLCTL-STR", "version"]).as_str().starts_with('5'));
    assert_eq!(c.cmd(&["DEBUG", "MALLCTL-STR", "arenas.narenas"]), err("ERR Invalid argument"));
    assert!(c.cmd(&["DEBUG", "MALLCTL"]).as_str().contains("unknown subcommand"));
}

/// Starts ferrokey with `conf` as its config file (when given) and `args`, its stdout in
/// `stdout` (DEBUG LISTPACK and QUICKLIST print there).
fn start_logged(conf: Option<&Path>, stdout: &Path, args: &[&str]) -> Server {
    let dir = unique_dir("fk-debug");
    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"));
    if let Some(conf) = conf {
        cmd.arg(conf);
    }
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir"])
        .arg(&dir)
        .args(DEBUG_ON)
        .args(args)
        .stdout(std::fs::File::create(stdout).expect("stdout file"))
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn server");
    wait_ready(&mut child, port).expect("server up");
    Server { child, port, dir }
}

/// The `{len : N}` (node count) of each quicklist printed so far.
fn printed_node_counts(stdout: &Path) -> Vec<usize> {
    let text = std::fs::read_to_string(stdout).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("{len : ")?.strip_suffix('}')?.parse().ok())
        .collect()
}

/// LISTPACK and QUICKLIST print the value's structure on stdout; with a packed threshold an
/// element that long gets a node that the next element does not join.
#[test]
fn debug_listpack_quicklist_print_and_the_packed_threshold() {
    let out_dir = unique_dir("fk-debug-out");
    let stdout = out_dir.join("stdout");
    let s = start_logged(None, &stdout, &["--list-max-listpack-size", "4"]);
    let mut c = Client::connect(s.port);
    c.cmd(&["RPUSH", "lp", "a", "b", "c"]);
    assert_eq!(
        c.cmd(&["DEBUG", "LISTPACK", "lp"]),
        Val::Simple("Listpack structure printed on stdout".into())
    );
    let text = std::fs::read_to_string(&stdout).unwrap();
    assert!(text.contains("{num entries 3}") && text.contains("[str]c"), "{text}");

    let big = "x".repeat(200);
    c.cmd(&["RPUSH", "q1", "a", "b", "c", "d", "e", "f", &big, "g"]);
    assert_eq!(
        c.cmd(&["DEBUG", "QUICKLIST", "q1"]),
        Val::Simple("Quicklist structure printed on stdout".into())
    );
    assert_eq!(c.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"]), Val::ok());
    c.cmd(&["RPUSH", "q2", "a", "b", "c", "d", "e", "f", &big, "g"]);
    c.cmd(&["LSET", "q2", "1", &big]);
    assert_eq!(
        c.cmd(&["DEBUG", "QUICKLIST", "q2", "1"]),
        Val::Simple("Quicklist structure printed on stdout".into())
    );
    assert_eq!(c.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"]), Val::ok());
    // q1: [a b c d] [e f big g]; q2: [a] [big] [c d] [e f] [big] [g].
    assert_eq!(printed_node_counts(&stdout), [2, 6]);
    assert_eq!(c.cmd(&["LRANGE", "q2", "0", "1"]).as_array()[1], Val::bulk(&big));
    assert_eq!(c.cmd(&["LLEN", "q2"]), int(8));
}

#[test]
fn debug_config_rewrite_force_all_writes_every_directive() {
    let dir = unique_dir("fk-debug-conf");
    let conf = dir.join("ferrokey.conf");
    std::fs::write(&conf, "# mine\nhz 15\n").unwrap();
    let s = start_logged(Some(&conf), &dir.join("stdout"), &[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), Val::ok());
    let changed = std::fs::read_to_string(&conf).unwrap();
    assert_eq!(c.cmd(&["DEBUG", "CONFIG-REWRITE-FORCE-ALL"]), Val::ok());
    let all = std::fs::read_to_string(&conf).unwrap();
    assert!(all.starts_with("# mine\nhz 15\n"), "{all}");
    for line in ["maxmemory-policy noeviction", "list-max-listpack-size -2", "appendfsync everysec"]
    {
        assert!(!changed.lines().any(|l| l == line), "{line} is a default");
        assert!(all.lines().any(|l| l == line), "{line} missing from\n{all}");
    }
    let directives = all.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).count();
    assert!(directives > 100, "{directives} directives:\n{all}");
}

/// Waits for the server on `port` to answer again after it replaced itself.
fn reconnect(s: &mut Server) -> Client {
    wait_ready(&mut s.child, s.port).expect("the server came back");
    assert!(s.child.try_wait().unwrap().is_none(), "the same process runs on");
    Client::connect(s.port)
}

/// RESTART saves (save points are set) and comes back with the data; CRASH-AND-RECOVER
/// saves nothing: what was written since the last save is gone.
#[test]
fn debug_restart_and_crash_and_recover() {
    let dir = unique_dir("fk-debug-restart");
    let conf = dir.join("ferrokey.conf");
    std::fs::write(&conf, "").unwrap();
    let mut s = start_logged(Some(&conf), &dir.join("stdout"), &["--save", "3600 1"]);
    let mut c = Client::connect(s.port);
    c.cmd(&["SET", "k", "v"]);
    c.cmd(&["CONFIG", "SET", "hz", "17"]);
    c.send(&[b"DEBUG", b"RESTART"]);
    assert!(c.is_closed(), "the restart closes connections");
    let mut c = reconnect(&mut s);
    assert_eq!(c.cmd(&["GET", "k"]), Val::bulk("v"));
    // The config file was rewritten first.
    assert_eq!(c.cmd(&["CONFIG", "GET", "hz"]).as_array()[1], Val::bulk("17"));
    c.cmd(&["SET", "unsaved", "1"]);
    c.send(&[b"DEBUG", b"CRASH-AND-RECOVER", b"10"]);
    assert!(c.is_closed());
    let mut c = reconnect(&mut s);
    assert_eq!(c.cmd(&["GET", "k"]), Val::bulk("v"));
    assert_eq!(c.cmd(&["EXISTS", "unsaved"]), int(0));
}
