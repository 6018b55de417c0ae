//! Differential checks of the keyspace commands against a real Valkey 9.1: the same script
//! on both, replies compared byte for byte (RESP2 and RESP3, errors included). Replies whose
//! order is unspecified (KEYS, SCAN, RANDOMKEY, OBJECT's subcommands in COMMAND INFO) are
//! compared as sorted lists or sets.

use super::*;
use common::parse_val;

#[test]
fn diff_del_exists_type_touch_dbsize() {
    same_as_valkey(&[
        "SET a 1",
        "SET b hello",
        "DEL a a b c",
        "DEL",
        "UNLINK",
        "EXISTS",
        "TOUCH",
        "TYPE",
        "TYPE a b",
        "DBSIZE x",
        "SET a 1",
        "SET b 2",
        "EXISTS a a nokey b",
        "TOUCH a a nokey",
        "TYPE a",
        "TYPE nokey",
        "DBSIZE",
        "UNLINK a b a",
        "EXISTS a b",
        "DBSIZE",
        "SET \"\" empty",
        "EXISTS \"\"",
        "TYPE \"\"",
        "DEL \"\"",
    ]);
}

#[test]
fn diff_keys() {
    same_as_valkey(&[
        "~KEYS *",
        "MSET hello 1 hallo 2 hxllo 3 hllo 4 heeeello 5 h*llo 6 \"\" 7",
        "~KEYS *",
        "~KEYS **",
        "~KEYS h?llo",
        "~KEYS h*llo",
        "~KEYS h[ae]llo",
        "~KEYS h[^e]llo",
        "~KEYS h[a-b]llo",
        "~KEYS h\\*llo",
        "~KEYS \"\"",
        "~KEYS nomatch",
        "KEYS",
        "KEYS a b",
    ]);
}

#[test]
fn diff_rename_renamenx() {
    same_as_valkey(&[
        "RENAME nokey x",
        "RENAME nokey nokey",
        "RENAMENX nokey x",
        "RENAMENX nokey nokey",
        "SET a 1",
        "RENAME a b",
        "GET a",
        "GET b",
        "RENAME b b",
        "RENAMENX b b",
        "SET c 3",
        "RENAMENX b c",
        "GET c",
        "RENAMENX b d",
        "GET d",
        "EXPIRE d 100",
        "SET e 5",
        "RENAME d e",
        "TTL e",
        "GET e",
        "RENAME e",
        "RENAMENX e f g",
    ]);
}

#[test]
fn diff_copy() {
    same_as_valkey(&[
        "SET a 1",
        "COPY a b",
        "GET b",
        "COPY a b",
        "COPY a b REPLACE",
        "COPY a a",
        "COPY a a DB 0",
        "COPY a a DB 1",
        "SELECT 1",
        "GET a",
        "SELECT 0",
        "COPY a b DB 16",
        "COPY a b DB -1",
        "COPY a b DB abc",
        "COPY a b DB 99999999999",
        "COPY a b DB",
        "COPY a b foo",
        "COPY a b REPLACE REPLACE",
        "COPY a b db 2 replace",
        "COPY nokey b",
        "COPY nokey nokey",
        "EXPIRE a 100",
        "COPY a ttlcopy",
        "TTL ttlcopy",
        "OBJECT ENCODING ttlcopy",
        "COPY a",
    ]);
}

#[test]
fn diff_move() {
    same_as_valkey(&[
        "SET a 1",
        "MOVE a 0",
        "MOVE nokey 0",
        "MOVE a 16",
        "MOVE a -1",
        "MOVE a abc",
        "MOVE a 99999999999",
        "EXPIRE a 100",
        "MOVE a 1",
        "EXISTS a",
        "SELECT 1",
        "TTL a",
        "GET a",
        "SET b x",
        "SELECT 0",
        "SET b y",
        "MOVE b 1",
        "GET b",
        "MOVE nokey 1",
        "MOVE a",
    ]);
}

#[test]
fn diff_select_swapdb_flush() {
    same_as_valkey(&[
        "SELECT 16",
        "SELECT -1",
        "SELECT abc",
        "SELECT 99999999999",
        "SELECT 1 2",
        "SELECT",
        "SET a 1",
        "SELECT 1",
        "SET b 2",
        "SET c 3",
        "DBSIZE",
        "SWAPDB 0 1",
        "DBSIZE",
        "GET a",
        "SWAPDB 0 abc",
        "SWAPDB abc 0",
        "SWAPDB abc def",
        "SWAPDB 99999999999 0",
        "SWAPDB 0 99999999999",
        "SWAPDB 0 16",
        "SWAPDB -1 0",
        "SWAPDB 1 1",
        "SWAPDB 1",
        "FLUSHDB foo",
        "FLUSHDB SYNC ASYNC",
        "FLUSHDB ASYNC",
        "DBSIZE",
        "SELECT 0",
        "DBSIZE",
        "FLUSHALL sync",
        "DBSIZE",
        "FLUSHALL foo",
        "SET x 1",
        "FLUSHALL ASYNC",
        "DBSIZE",
        "FLUSHDB",
        "FLUSHALL",
        "FLUSHDB Sync",
    ]);
}

#[test]
fn diff_expire_family() {
    same_as_valkey(&[
        "EXPIRE nokey 100",
        "SET k v",
        "EXPIRE k 100",
        "TTL k",
        "EXPIRE k 100 foo",
        "EXPIRE k abc foo",
        "EXPIRE k abc nx",
        "EXPIRE k 10 nx xx",
        "EXPIRE k 10 NX GT",
        "EXPIRE k 10 nx lt",
        "EXPIRE k 10 gt lt",
        "EXPIRE k 10 xx gt lt",
        "EXPIRE k 10 nx xx foo",
        "EXPIRE k 200 NX",
        "EXPIRE k 200 XX",
        "TTL k",
        "EXPIRE k 100 GT",
        "EXPIRE k 300 GT",
        "TTL k",
        "EXPIRE k 400 LT",
        "EXPIRE k 50 lt",
        "TTL k",
        "EXPIRE k 50 xx lt",
        "PERSIST k",
        "PERSIST k",
        "TTL k",
        "EXPIRE k 100 GT",
        "EXPIRE k 100 XX",
        "EXPIRE k 100 LT",
        "PEXPIRE k 200000 gt",
        "TTL k",
        "EXPIRE k 9223372036854775807",
        "PEXPIRE k 9223372036854775807",
        "EXPIREAT k 9223372036854775807",
        "EXPIRE k 9223372036854775",
        "EXPIRE k -9223372036854775808",
        "PEXPIREAT k 9223372036854775807",
        "EXPIRETIME k",
        "PEXPIRETIME k",
        "EXPIREAT k 4102444800",
        "EXPIRETIME k",
        "PEXPIRETIME k",
        "PEXPIREAT k 4102444800500",
        "EXPIRETIME k",
        "PEXPIRETIME k",
        "EXPIRE k 0",
        "EXISTS k",
        "SET k v",
        "PEXPIRE k -1",
        "EXISTS k",
        "SET k v",
        "EXPIREAT k 1",
        "GET k",
        "SET k v",
        "EXPIRE k -9223372036854775",
        "EXISTS k",
        "SET k v",
        "PEXPIRE k -9223372036854775808",
        "EXISTS k",
        "TTL nokey",
        "PTTL nokey",
        "EXPIRETIME nokey",
        "PEXPIRETIME nokey",
        "SET k v",
        "TTL k",
        "PTTL k",
        "EXPIRETIME k",
        "PEXPIRETIME k",
        "PEXPIRE k 100000",
        "TTL k",
        "EXPIRE k 1.5",
        "EXPIRE k",
        "EXPIRE",
        "PEXPIREAT k",
        "TTL",
        "TTL a b",
        "PERSIST",
        "PERSIST a b",
        "EXPIRETIME",
    ]);
}

#[test]
fn diff_object() {
    let long = format!("SET long {}", "x".repeat(45));
    let long44 = format!("SET long44 {}", "x".repeat(44));
    same_as_valkey(&[
        "SET i 5",
        "SET zero 0",
        "SET max 9999",
        "SET big 10000",
        "SET neg -1",
        "SET s hello",
        &long,
        &long44,
        "SET huge 12345678901234567890",
        "SET lead 007",
        "OBJECT ENCODING i",
        "OBJECT ENCODING big",
        "OBJECT ENCODING neg",
        "OBJECT ENCODING s",
        "OBJECT ENCODING long",
        "OBJECT ENCODING long44",
        "OBJECT ENCODING huge",
        "OBJECT ENCODING lead",
        "OBJECT encoding nokey",
        "OBJECT REFCOUNT i",
        "OBJECT REFCOUNT zero",
        "OBJECT REFCOUNT max",
        "OBJECT REFCOUNT big",
        "OBJECT REFCOUNT neg",
        "OBJECT REFCOUNT s",
        "OBJECT REFCOUNT long",
        "OBJECT REFCOUNT nokey",
        "OBJECT FREQ s",
        "OBJECT FREQ nokey",
        "OBJECT IDLETIME nokey",
        "OBJECT HELP",
        "OBJECT help",
        "OBJECT HELP x",
        "OBJECT",
        "OBJECT foo",
        "OBJECT foo bar",
        "OBJECT ENCODING",
        "OBJECT ENCODING a b",
        "OBJECT FREQ",
    ]);
}

/// Needs the server to keep each db's access clock in step with maxmemory-policy
/// (`commands::keyspace::sync_access_clock`, at start and on CONFIG SET).
#[test]
fn diff_object_under_lfu() {
    let lines = [
        "SET s hello",
        "OBJECT FREQ s",
        "GET s",
        "OBJECT FREQ s",
        "OBJECT IDLETIME s",
        "OBJECT IDLETIME nokey",
        "OBJECT FREQ nokey",
        "SET i 5",
        "OBJECT REFCOUNT i",
    ];
    same_as_valkey_with(2, &["--maxmemory-policy", "allkeys-lfu"], &lines);
    same_as_valkey_with(3, &["--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lfu"], &lines);
}

#[test]
fn diff_refcount_with_maxmemory_lru() {
    let args = ["--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"];
    same_as_valkey_with(2, &args, &["SET i 5", "OBJECT REFCOUNT i", "OBJECT ENCODING i"]);
    let args = ["--maxmemory", "100mb", "--maxmemory-policy", "volatile-ttl"];
    same_as_valkey_with(2, &args, &["SET i 5", "OBJECT REFCOUNT i"]);
}

#[test]
fn diff_scan_and_randomkey_on_deterministic_cases() {
    same_as_valkey(&[
        "SCAN 0",
        "RANDOMKEY",
        "SCAN abc",
        "SCAN -",
        "SCAN 18446744073709551616",
        "SCAN 0x1",
        "SCAN 0 COUNT 0",
        "SCAN 0 COUNT -1",
        "SCAN 0 COUNT abc",
        "SCAN 0 MATCH",
        "SCAN 0 TYPE",
        "SCAN 0 foo bar",
        "SCAN 0 COUNT 5 COUNT",
        "SCAN abc COUNT 0",
        "SCAN",
        "RANDOMKEY x",
        "SET only 1",
        "SCAN 0",
        "SCAN 0 MATCH o*",
        "SCAN 0 MATCH x*",
        "SCAN 0 TYPE string",
        "SCAN 0 TYPE STRING",
        "SCAN 0 TYPE list",
        "SCAN 0 TYPE nosuchtype",
        "SCAN 0 COUNT 100 MATCH * TYPE string",
        "RANDOMKEY",
    ]);
}

/// SCAN's order is unspecified: compare the sets of keys a full iteration returns.
#[test]
fn diff_scan_key_sets() {
    let mut p = Pair::start(2, &[]);
    for c in [&mut p.a, &mut p.b] {
        for i in 0..300 {
            assert_eq!(c.cmd(&["SET", &format!("user:{i}"), "v"]), Val::ok());
        }
        for i in 0..50 {
            assert_eq!(c.cmd(&["SET", &format!("other:{i}"), &i.to_string()]), Val::ok());
        }
    }
    for opts in [
        &[][..],
        &["COUNT", "1"][..],
        &["MATCH", "user:1*"][..],
        &["MATCH", "other:?", "COUNT", "7"][..],
        &["TYPE", "string"][..],
        &["TYPE", "hash"][..],
    ] {
        assert_eq!(scan_all(&mut p.a, opts), scan_all(&mut p.b, opts), "SCAN {opts:?}");
    }
    let ka = keys_set(p.a.cmd(&["KEYS", "*"]));
    assert_eq!(ka, keys_set(p.b.cmd(&["KEYS", "*"])));
    for c in [&mut p.a, &mut p.b] {
        let Val::Bulk(k) = c.cmd(&["RANDOMKEY"]) else { panic!("RANDOMKEY") };
        assert!(ka.contains(&k));
    }
}

#[test]
fn diff_resp3_shapes() {
    same_as_valkey_with(
        3,
        &[],
        &[
            "RANDOMKEY",
            "SCAN 0",
            "KEYS *",
            "OBJECT ENCODING nokey",
            "OBJECT HELP",
            "SET a 1",
            "TYPE a",
            "TTL a",
            "EXISTS a nokey",
            "SCAN 0 MATCH a",
            "KEYS a",
            "OBJECT ENCODING a",
            "RENAME nokey x",
            "COPY a b DB 99",
        ],
    );
}

#[test]
fn diff_command_info_of_the_family() {
    let names = [
        "del",
        "unlink",
        "exists",
        "type",
        "keys",
        "scan",
        "randomkey",
        "rename",
        "renamenx",
        "copy",
        "move",
        "swapdb",
        "dbsize",
        "flushdb",
        "flushall",
        "select",
        "expire",
        "pexpire",
        "expireat",
        "pexpireat",
        "ttl",
        "pttl",
        "expiretime",
        "pexpiretime",
        "persist",
        "touch",
    ];
    let lines: Vec<String> = names.iter().map(|n| format!("COMMAND INFO {n}")).collect();
    let lines: Vec<&str> = lines.iter().map(|s| s.as_str()).collect();
    same_as_valkey_with(2, &[], &lines);
}

/// OBJECT's subcommands come in hash-table order from redis-server: compare them sorted.
#[test]
fn diff_command_info_of_object() {
    let mut p = Pair::start(2, &[]);
    let info = |c: &mut Client| {
        let reply = c.cmd(&["COMMAND", "INFO", "object"]).as_array();
        let mut entry = reply[0].as_array();
        let mut subs = entry[9].as_array();
        subs.sort_by_key(|s| format!("{s:?}"));
        entry[9] = Val::Array(subs);
        entry
    };
    assert_eq!(info(&mut p.a), info(&mut p.b));
}

#[test]
fn differential_helpers_parse_replies() {
    // The helpers above rely on these shapes.
    let raw = b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n";
    let v = parse_val(&mut &raw[..]);
    assert_eq!(v, Val::Array(vec![bulk("0"), Val::Array(vec![bulk("a")])]));
}
