//! Streams against a real Valkey 9.1 (and Redis 7.0 for files): the entry commands (XADD,
//! XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID) with their options and errors in both
//! protocols, approximate trims over many nodes, the forms replicas receive, RDB files and
//! DUMP payloads both ways, and the AOF rewrite.

mod common;
#[path = "stream/groups.rs"]
mod groups;
#[path = "stream/persist.rs"]
mod persist;

use common::diff::{same_as_valkey_with, Pair};
use common::{start, start_redis, start_valkey, Client, Server, Val};

const DEBUG: [&str; 2] = ["--enable-debug-command", "yes"];

/// Lines without `*` ids: replies must be byte for byte Valkey's.
const ENTRY_COMMANDS: &[&str] = &[
    "XADD s 1-1 a 1 b 2",
    "XADD s 1-1 a 1",
    "XADD s 1-* a x",
    "XADD s 2-* a x b y",
    "XADD s 0-0 a 1",
    "XADD s 0-* a 1",
    "XADD s MAXLEN ~ x * a 1",
    "XADD s 3-0 a",
    "XADD s bad a 1",
    "XADD s + a 1",
    "XADD s LIMIT 5 3-0 a 1",
    "XADD s MAXLEN 5 LIMIT 5 3-0 a 1",
    "XADD s MAXLEN -1 3-0 a 1",
    "XADD s MAXLEN 1 MINID 1 3-0 a 1",
    "XADD s MINID + 3-0 a 1",
    "XADD nokey NOMKSTREAM * a 1",
    "EXISTS nokey",
    "XLEN s",
    "XRANGE s - +",
    "XREVRANGE s + -",
    "XRANGE s (1-1 +",
    "XRANGE s - (2-1",
    "XRANGE s - + COUNT 1",
    "XRANGE s - + COUNT 0",
    "XRANGE s - + COUNT -1",
    "XRANGE s - + COUNT",
    "XRANGE s - + LIMIT 1",
    "XRANGE s (- +",
    "XRANGE s - (-",
    "XRANGE s (18446744073709551615-18446744073709551615 +",
    "XRANGE s - (0-0",
    "XRANGE nokey - +",
    "XRANGE s 2 2",
    "XRANGE s 2-1 1-1",
    "XREVRANGE s 1 2",
    "XDEL s 1-2 9-9 bad",
    "XDEL s 1-2 9-9",
    "XDEL nokey 1-1",
    "XLEN s",
    "XRANGE s - +",
    "XADD s 5-0 f1 v1 f2 v2",
    "XADD s 5-1 f1 v1 f2 v2",
    "XADD s 6-0 n 123 m -5",
    "XTRIM s MAXLEN 2",
    "XRANGE s - +",
    "XTRIM s",
    "XTRIM s LIMIT 1",
    "XTRIM s MAXLEN ~ 1 LIMIT -1",
    "XTRIM s MINID ~ 6",
    "XTRIM s MINID 6-0",
    "XTRIM s FOO 1",
    "XTRIM nokey MAXLEN 0",
    "XRANGE s - +",
    "TYPE s",
    "OBJECT ENCODING s",
    "SET str x",
    "XADD str 1-1 a 1",
    "XLEN str",
    "XRANGE str - +",
    "XDEL str 1-1",
    "XTRIM str MAXLEN 0",
    "XSETID str 1-1",
    "XSETID s 1-0",
    "XSETID s 99-0 ENTRIESADDED 1",
    "XSETID s 99-0 ENTRIESADDED -1",
    "XSETID s 99-0 MAXDELETEDID 100-0",
    "XSETID s 99-0 ENTRIESADDED 50 MAXDELETEDID 10-0",
    "XSETID s 99-0 FOO 1",
    "XSETID nokey 1-1",
    "XADD s 99-0 a 1",
    "XADD s 99-* a 1",
    "XDEL s 99-1",
    "XSETID s 5-0",
    "XLEN s",
    "XTRIM s MAXLEN 0",
    "XLEN s",
    "EXISTS s",
    "XRANGE s - +",
    "XADD e MAXLEN 0 5-5 x y",
    "EXISTS e",
    "XLEN e",
    "XADD e 5-5 x y",
    "XADD e 5-6 x y",
    "XADD m 18446744073709551615-18446744073709551615 a 1",
    "XADD m * a 1",
    "XADD m 18446744073709551615-* a 1",
    "DEBUG DIGEST-VALUE s e m",
];

#[test]
fn entry_commands_reply_as_valkey() {
    for proto in [2, 3] {
        same_as_valkey_with(proto, &DEBUG, ENTRY_COMMANDS);
    }
}

/// Entries in many nodes (small node limits): approximate trims drop whole nodes, LIMIT
/// caps them, and both servers keep the same entries.
#[test]
fn approximate_trims_follow_node_boundaries() {
    let args =
        ["--stream-node-max-entries", "7", "--stream-node-max-bytes", "300", DEBUG[0], DEBUG[1]];
    let mut p = Pair::start(2, &args);
    for i in 1..400 {
        let value = "v".repeat(i % 9);
        p.same(&["XADD", "t", &format!("{i}-{}", i % 4), "field", &i.to_string(), "other", &value]);
    }
    for line in [
        "XTRIM t MAXLEN ~ 300",
        "XLEN t",
        "XTRIM t MAXLEN ~ 10 LIMIT 50",
        "XLEN t",
        "XTRIM t MINID ~ 200",
        "XLEN t",
        "XDEL t 250-2 251-3 300-0",
        "XADD t MAXLEN ~ 100 LIMIT 20 500-1 a 1",
        "XLEN t",
        "XRANGE t - + COUNT 5",
        "XREVRANGE t + - COUNT 5",
        "XRANGE t (260-0 270",
        "CONFIG SET stream-node-max-entries 0",
        "XTRIM t MAXLEN ~ 10",
        "XLEN t",
        "DEBUG DIGEST-VALUE t",
    ] {
        p.same_line(line);
    }
}

/// XADD with a generated id and approximate trims reach replicas (ferrokey and Valkey) as
/// what they did: every replica ends with the primary's entries and metadata.
#[test]
fn replicas_get_the_generated_ids_and_exact_trims() {
    let primary = start(&["--stream-node-max-entries", "5", DEBUG[0], DEBUG[1]]);
    let port = primary.port.to_string();
    let replicas = [
        start(&["--replicaof", "127.0.0.1", &port, DEBUG[0], DEBUG[1]]),
        start_valkey(&["--replicaof", "127.0.0.1", &port, DEBUG[0], DEBUG[1]]),
    ];
    let mut p = Client::connect(primary.port);
    let mut rs: Vec<Client> = replicas.iter().map(|r| Client::connect(r.port)).collect();
    for r in rs.iter_mut() {
        wait_for(|| common::info_field(r, "replication", "master_link_status") == "up");
    }
    for i in 0..60 {
        p.cmd(&["XADD", "s", "*", "i", &i.to_string()]);
        p.cmd(&["XADD", "s", &format!("{}-*", 10_000_000_000_000u64 + i), "j", "x"]);
        // Logged as `MAXLEN = <length> LIMIT 20`, which replicas accept from a primary.
        p.cmd(&["XADD", "s", "MAXLEN", "~", "30", "LIMIT", "20", "*", "k", "y"]);
    }
    p.cmd(&["XTRIM", "s", "MINID", "~", "10000000000030"]);
    p.cmd(&["XDEL", "s", "10000000000040-0"]);
    p.cmd(&[
        "XSETID",
        "s",
        "99999999999999-0",
        "ENTRIESADDED",
        "1000",
        "MAXDELETEDID",
        "10000000000040-0",
    ]);
    p.cmd(&["SET", "end", "1"]);
    let digest = p.cmd(&["DEBUG", "DIGEST-VALUE", "s"]);
    let info = |c: &mut Client| (c.cmd(&["XLEN", "s"]), c.cmd(&["XRANGE", "s", "-", "+"]));
    let expected = info(&mut p);
    for r in rs.iter_mut() {
        wait_for(|| r.cmd(&["GET", "end"]) == Val::bulk("1"));
        assert_eq!(info(r), expected);
        assert_eq!(r.cmd(&["DEBUG", "DIGEST-VALUE", "s"]), digest);
    }
    // XSETID's metadata too: the next XADD at the same time is refused alike.
    let too_small = p.cmd(&["XADD", "s", "99999999999999-0", "a", "1"]);
    for r in rs.iter_mut() {
        r.cmd(&["CONFIG", "SET", "replica-read-only", "no"]);
        assert_eq!(r.cmd(&["XADD", "s", "99999999999999-0", "a", "1"]), too_small);
    }
}

fn wait_for(mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !cond() {
        assert!(std::time::Instant::now() < deadline, "timed out");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Streams of every shape: many nodes, deletions, an empty stream with metadata.
fn fill(c: &mut Client) {
    for i in 1..500u64 {
        let value = "w".repeat((i % 13) as usize);
        let fields = if i % 3 == 0 { vec!["a", "1", "b", &value] } else { vec!["x", &value] };
        let id = format!("{i}-{}", i % 5);
        let mut argv = vec!["XADD", "big", &id];
        argv.extend(fields);
        c.cmd(&argv);
    }
    c.cmd(&["XDEL", "big", "3-3", "100-0", "200-0", "499-4"]);
    c.cmd(&["XTRIM", "big", "MINID", "10"]);
    c.cmd(&["XADD", "empty", "MAXLEN", "0", "7-7", "x", "y"]);
    c.cmd(&["XSETID", "empty", "9-0", "ENTRIESADDED", "3", "MAXDELETEDID", "8-0"]);
    c.cmd(&["XADD", "one", "1-1", "k", "v"]);
}

fn digest(c: &mut Client) -> Val {
    c.cmd(&["DEBUG", "DIGEST"])
}

/// XINFO STREAM's metadata where the server has it (Valkey): length, ids, entries added.
fn metadata(c: &mut Client, key: &str) -> Vec<Val> {
    let info = c.cmd(&["XINFO", "STREAM", key]).as_array();
    info.chunks(2)
        .filter(|kv| {
            let k = kv[0].as_str();
            [
                "length",
                "last-generated-id",
                "max-deleted-entry-id",
                "entries-added",
                "recorded-first-entry-id",
            ]
            .contains(&k.as_str())
        })
        .flat_map(|kv| kv.to_vec())
        .collect()
}

/// A server started on a copy of `file`, its client, and the directory it saves into.
fn restart_with(
    file: &std::path::Path,
    starter: fn(&[&str]) -> Server,
) -> (Server, Client, std::path::PathBuf) {
    let dir = common::unique_dir("stream-rdb");
    std::fs::copy(file, dir.join("dump.rdb")).expect("copy dump.rdb");
    let dir_arg = dir.to_str().expect("utf-8").to_string();
    let server = starter(&["--dir", &dir_arg, DEBUG[0], DEBUG[1]]);
    let c = Client::connect(server.port);
    (server, c, dir)
}

/// ferrokey's RDB file loads in Valkey 9.1 and Redis 7.0 with the same streams (digest and
/// metadata), and theirs load here; DUMP payloads restore both ways.
#[test]
fn rdb_files_and_dump_payloads_move_both_ways() {
    let ours = start(&[DEBUG[0], DEBUG[1]]);
    let mut c = Client::connect(ours.port);
    fill(&mut c);
    let expected = digest(&mut c);
    assert_eq!(c.cmd(&["SAVE"]), Val::ok());
    let file = ours.dir.join("dump.rdb");
    for starter in [start_valkey as fn(&[&str]) -> Server, start_redis] {
        let (_theirs, mut t, their_dir) = restart_with(&file, starter);
        assert_eq!(digest(&mut t), expected);
        let meta = metadata(&mut t, "empty");
        assert_eq!(meta[1], Val::Int(0), "{meta:?}");
        assert_eq!(meta[3], Val::bulk("9-0"), "{meta:?}");
        // And back: their file here.
        assert_eq!(t.cmd(&["SAVE"]), Val::ok());
        let (_back, mut b, back_dir) = restart_with(&their_dir.join("dump.rdb"), start);
        assert_eq!(digest(&mut b), expected);
        // The metadata survived: the next id must be above 9-0, the entries added 3.
        assert!(matches!(b.cmd(&["XADD", "empty", "9-0", "a", "1"]), Val::Err(_)));
        assert_eq!(b.cmd(&["XADD", "empty", "9-1", "a", "1"]), Val::bulk("9-1"));
        let _ = std::fs::remove_dir_all(their_dir);
        let _ = std::fs::remove_dir_all(back_dir);
    }
    // DUMP / RESTORE both ways.
    let valkey = start_valkey(&[DEBUG[0], DEBUG[1]]);
    let mut v = Client::connect(valkey.port);
    for key in ["big", "empty", "one"] {
        let Val::Bulk(payload) = c.cmd(&["DUMP", key]) else { panic!("DUMP {key}") };
        let restored = v.cmd_b(&[b"RESTORE", format!("{key}-copy").as_bytes(), b"0", &payload]);
        assert_eq!(restored, Val::ok());
        let Val::Bulk(theirs) = v.cmd(&["DUMP", &format!("{key}-copy")]) else { panic!() };
        let back = c.cmd_b(&[b"RESTORE", format!("{key}-back").as_bytes(), b"0", &theirs]);
        assert_eq!(back, Val::ok());
        let d = |c: &mut Client, k: &str| c.cmd(&["DEBUG", "DIGEST-VALUE", k]);
        assert_eq!(d(&mut c, &format!("{key}-back")), d(&mut c, key));
        assert_eq!(d(&mut v, &format!("{key}-copy")), d(&mut c, key));
    }
}

/// BGREWRITEAOF writes streams as Valkey does (XADD per entry, XSETID with the metadata) and
/// the rewritten file loads back to the same streams.
#[test]
fn aof_rewrite_keeps_streams() {
    let dir = common::unique_dir("stream-aof");
    let dir_arg = dir.to_str().expect("utf-8").to_string();
    let args = ["--appendonly", "yes", "--dir", &dir_arg, DEBUG[0], DEBUG[1]];
    let server = start(&args);
    let mut c = Client::connect(server.port);
    fill(&mut c);
    let expected = digest(&mut c);
    assert_eq!(c.cmd(&["BGREWRITEAOF"]).as_str(), "Background append only file rewriting started");
    wait_for(|| common::info_field(&mut c, "persistence", "aof_rewrite_in_progress") == "0");
    c.cmd(&["XADD", "after", "1-1", "a", "b"]);
    let expected_after = digest(&mut c);
    assert_ne!(expected, expected_after);
    drop(c);
    drop(server);
    let again = start(&args);
    let mut c = Client::connect(again.port);
    assert_eq!(digest(&mut c), expected_after);
    assert!(matches!(c.cmd(&["XADD", "empty", "9-0", "a", "1"]), Val::Err(_)));
    let _ = std::fs::remove_dir_all(dir);
}

/// Binary field names and values round-trip.
#[test]
fn binary_fields_and_values() {
    let mut p = Pair::start(2, &[DEBUG[0], DEBUG[1]]);
    let (f, v) = (&b"a\x00b"[..], &b"\r\n\xff"[..]);
    let (ours, theirs) = p.both(&[&b"XADD"[..], b"bin", b"1-1", f, v, b"123", b"-0"]);
    assert_eq!(ours, theirs);
    p.same(&["XRANGE", "bin", "-", "+"]);
    p.same(&["DEBUG", "DIGEST-VALUE", "bin"]);
}
