//! RDB files of versions 1, 6, 7 and 9 and DUMP payloads holding the value encodings older
//! Redis versions wrote (plain lists, zipmaps, ziplists, quicklists of ziplists, string
//! scores, expire times in seconds) load in ferrokey as they do in a real redis-server 7.0,
//! with every key, value and TTL, and the value built as commands would build it; damaged
//! blobs stop start-up with a message and make RESTORE answer `ERR Bad data format`.

mod common;
#[path = "persist_legacy/enc.rs"]
mod enc;

use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use common::{bulk, contents, free_port, int, start, start_redis, Client, Val};
use enc::{pairs, strs, Data, Expire, Form, Key};

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

fn numbered(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// The commands that build `data` under `key` in a server.
fn build(c: &mut Client, key: &str, data: &Data) {
    let argv: Vec<String> = match data {
        Data::Str(s) => vec!["SET".into(), key.into(), s.clone()],
        Data::List(items) => [vec!["RPUSH".into(), key.into()], items.clone()].concat(),
        Data::Set(items) => [vec!["SADD".into(), key.into()], items.clone()].concat(),
        Data::Hash(p) => {
            let mut v = vec!["HSET".into(), key.into()];
            v.extend(p.iter().flat_map(|(f, x)| [f.clone(), x.clone()]));
            v
        }
        Data::ZSet(p) => {
            let mut v = vec!["ZADD".into(), key.into()];
            v.extend(p.iter().flat_map(|(m, s)| [s.clone(), m.clone()]));
            v
        }
    };
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let r = c.cmd(&args);
    assert!(!matches!(r, Val::Err(_)), "{key}: {r:?}");
}

fn list_data() -> Data {
    let long = "x".repeat(300);
    let items = [
        "a",
        "1",
        "12",
        "13",
        "-300",
        "70000",
        "-8388608",
        "100000000",
        "2147483648",
        "9.5",
        &long,
    ];
    Data::List(strs(&items))
}

fn hash_data() -> Data {
    let long = "f".repeat(260);
    Data::Hash(pairs(&[("name", "ferrokey"), ("n", "42"), (&long, ""), ("neg", "-7")]))
}

fn zset_data() -> Data {
    Data::ZSet(pairs(&[("a", "1.5"), ("b", "inf"), ("c", "-inf"), ("d", "-2"), ("e", "3")]))
}

/// The keys of a version-1 file (Redis 2.0 to 2.4): plain lists, sets, string scores,
/// zipmaps, expire times in seconds (one already past).
fn v1_keys(now_s: i64) -> Vec<Key> {
    vec![
        Key::new("s:raw", Data::Str("hello world".into()), Form::Str),
        Key::new("s:int", Data::Str("12345".into()), Form::Str),
        Key::new("s:lzf", Data::Str("abcdefgh".repeat(20)), Form::StrLzf),
        Key::new("l:plain", list_data(), Form::PlainList),
        Key::new("l:plain:big", Data::List(numbered("element-", 2000)), Form::PlainList),
        Key::new("set:plain", Data::Set(strs(&["m1", "m2", "3"])), Form::Set),
        Key::new("z:text", zset_data(), Form::ZSetText),
        Key::new("h:zipmap", hash_data(), Form::HashZipmap { free: 2 }),
        Key::new("h:plain", Data::Hash(pairs(&[("a", "1"), ("b", "2")])), Form::Hash),
        Key::new("ttl:secs", Data::Str("v".into()), Form::Str)
            .expire(Expire::Secs(now_s + 100_000)),
        Key::new("ttl:past", Data::Str("gone".into()), Form::Str).expire(Expire::Secs(now_s - 100)),
    ]
}

/// Version 6 (Redis 2.6/2.8): ziplists, intsets, expire times in milliseconds.
fn v6_keys(now: i64) -> Vec<Key> {
    let big_hash: Vec<(String, String)> =
        (0..600).map(|i| (format!("field:{i}"), i.to_string())).collect();
    let big_zset: Vec<(String, String)> =
        (0..200).map(|i| (format!("m{i}"), format!("{}.25", i % 17))).collect();
    vec![
        Key::new("l:zl", list_data(), Form::ListZiplist),
        Key::new("l:zl:big", Data::List(numbered("item-", 1500)), Form::ListZiplist),
        Key::new("set:ints", Data::Set(strs(&["1", "-2", "300000", "5000000000"])), Form::Intset),
        Key::new("z:zl", zset_data(), Form::ZSetZiplist),
        Key::new("z:zl:big", Data::ZSet(big_zset), Form::ZSetZiplist),
        Key::new("h:zl", hash_data(), Form::HashZiplist),
        Key::new("h:zl:small", Data::Hash(pairs(&[("a", "1"), ("b", "x")])), Form::HashZiplist),
        Key::new("h:zl:big", Data::Hash(big_hash), Form::HashZiplist),
        Key::new("h:zipmap", hash_data(), Form::HashZipmap { free: 0 }),
        Key::new("h:zm:small", Data::Hash(pairs(&[("k", "7")])), Form::HashZipmap { free: 4 }),
        Key::new("ttl:ms", Data::Str("v".into()), Form::Str).expire(Expire::Ms(now + 50_000_000)),
    ]
}

/// Version 7 (Redis 3.2/4.0): quicklists of ziplists (some nodes compressed, one empty).
fn v7_keys(now: i64) -> Vec<Key> {
    let q = |per_node, lzf, empty_node| Form::Quicklist { per_node, lzf, empty_node };
    vec![
        Key::new("l:ql", list_data(), q(4, true, false)),
        Key::new("l:ql:big", Data::List(numbered("entry-", 3000)), q(128, true, true)),
        Key::new("l:ql:one", Data::List(strs(&["solo"])), q(8, false, true)),
        Key::new("z:zl", zset_data(), Form::ZSetZiplist),
        Key::new("h:zl", hash_data(), Form::HashZiplist),
        Key::new("h:plain", Data::Hash(pairs(&[("k", "v")])), Form::Hash)
            .expire(Expire::Ms(now + 90_000_000)),
    ]
}

/// Version 9 (Redis 5/6): the same, with idle and frequency opcodes and binary scores.
fn v9_keys() -> Vec<Key> {
    let q = Form::Quicklist { per_node: 3, lzf: false, empty_node: false };
    vec![
        Key::new("l:ql", list_data(), q).meta(&[0xF8, 0x40, 0x80]),
        Key::new("z:zl", zset_data(), Form::ZSetZiplist).meta(&[0xF9, 5]),
        Key::new("z:2", zset_data(), Form::ZSet2),
        Key::new("h:zl", hash_data(), Form::HashZiplist),
        Key::new("set:plain", Data::Set(numbered("s", 10)), Form::Set),
        Key::new("s:raw", Data::Str("nine".into()), Form::Str),
    ]
}

/// Writes `bytes` as x.rdb in a new directory; returns the directory.
fn write_file(tag: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = common::unique_dir(tag);
    std::fs::write(dir.join("x.rdb"), bytes).unwrap();
    dir
}

fn file_args(dir: &std::path::Path) -> [String; 4] {
    ["--dir".into(), dir.to_str().unwrap().into(), "--dbfilename".into(), "x.rdb".into()]
}

/// Loads `bytes` in ferrokey and in redis-server 7.0 and checks every live key of `dbs`
/// against the other server and against a server that built it with commands.
fn check_file(tag: &str, version: u32, dbs: &[(u64, Vec<Key>)], now: i64) {
    let bytes = enc::file(version, dbs, None);
    let dir = write_file(tag, &bytes);
    let args = file_args(&dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let ours = start(&args);
    let theirs = start_redis(&args);
    let reference = start(&[]);
    let (mut a, mut b, mut r) =
        (Client::connect(ours.port), Client::connect(theirs.port), Client::connect(reference.port));
    for (db, keys) in dbs {
        let live: Vec<&Key> = keys
            .iter()
            .filter(|k| match k.expire {
                Expire::Secs(s) => s * 1000 > now,
                Expire::Ms(ms) => ms > now,
                Expire::Never => true,
            })
            .collect();
        for c in [&mut a, &mut b, &mut r] {
            c.cmd(&["SELECT", &db.to_string()]);
        }
        assert_eq!(a.cmd(&["DBSIZE"]), int(live.len() as i64), "v{version} db {db}");
        assert_eq!(b.cmd(&["DBSIZE"]), int(live.len() as i64), "v{version} db {db} in redis");
        for k in live {
            build(&mut r, &k.name, &k.data);
            let want = contents(&mut r, &k.name);
            assert_eq!(contents(&mut a, &k.name), want, "v{version} {}", k.name);
            assert_eq!(contents(&mut b, &k.name), want, "v{version} {} in redis", k.name);
            let pttl = a.cmd(&["PTTL", &k.name]).as_int();
            match k.expire {
                Expire::Never => assert_eq!(pttl, -1, "{}", k.name),
                Expire::Secs(s) => assert!((pttl - (s * 1000 - now)).abs() < 5_000, "{pttl}"),
                Expire::Ms(ms) => assert!((pttl - (ms - now)).abs() < 5_000, "{pttl}"),
            }
        }
    }
    drop((ours, theirs));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_version_1_file_loads_with_plain_lists_zipmaps_and_second_expires() {
    let now = now_ms();
    let more = vec![Key::new("in-db-2", Data::Str("x".into()), Form::Str)];
    check_file("v1", 1, &[(0, v1_keys(now / 1000)), (2, more)], now);
}

#[test]
fn a_version_6_file_loads_with_ziplists_and_intsets() {
    let now = now_ms();
    check_file("v6", 6, &[(0, v6_keys(now))], now);
}

#[test]
fn a_version_7_file_loads_with_quicklists_of_ziplists() {
    let now = now_ms();
    let more = vec![Key::new("in-db-5", Data::Set(strs(&["1", "2"])), Form::Intset)];
    check_file("v7", 7, &[(0, v7_keys(now)), (5, more)], now);
}

#[test]
fn a_version_9_file_loads_with_access_metadata() {
    let now = now_ms();
    check_file("v9", 9, &[(0, v9_keys()), (1, v6_keys(now))], now);
}

#[test]
fn loaded_values_take_the_encoding_their_size_calls_for() {
    let now = now_ms();
    let bytes = enc::file(6, &[(0, v6_keys(now))], None);
    let dir = write_file("enc", &bytes);
    let args = file_args(&dir);
    let s = start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let mut c = Client::connect(s.port);
    for (key, want) in [
        ("l:zl", "listpack"),
        ("l:zl:big", "quicklist"),
        ("set:ints", "intset"),
        ("z:zl", "listpack"),
        ("z:zl:big", "skiplist"),
        ("h:zl", "hashtable"),
        ("h:zl:small", "listpack"),
        ("h:zl:big", "hashtable"),
        ("h:zipmap", "hashtable"),
        ("h:zm:small", "listpack"),
    ] {
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", key]), bulk(want), "{key}");
    }
    drop(s);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn checksums_are_checked_from_version_5_and_zero_means_none() {
    let keys = vec![(0, vec![Key::new("k", Data::Str("v".into()), Form::Str)])];
    for (version, crc, loads) in [(6, Some(0), true), (6, Some(12345), false), (9, Some(1), false)]
    {
        let bytes = enc::file(version, &keys, crc);
        let dir = write_file("crc", &bytes);
        match start_failure(&dir) {
            None => assert!(loads, "v{version} with CRC {crc:?} loaded"),
            Some(log) => {
                assert!(!loads, "v{version} with CRC {crc:?}: {log}");
                assert!(log.contains("Wrong RDB checksum"), "{log}");
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }
    // Below version 5 there is no checksum: eight more bytes are not the file's.
    let mut bytes = enc::file(4, &keys, None);
    bytes.extend_from_slice(&[0; 8]);
    let dir = write_file("crc", &bytes);
    assert_eq!(start_failure(&dir), None);
    let _ = std::fs::remove_dir_all(dir);
}

/// Starts ferrokey on the x.rdb in `dir`: `None` when it started, else its output.
fn start_failure(dir: &std::path::Path) -> Option<String> {
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
        .args(file_args(dir))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    match common::wait_ready(&mut child, port) {
        Ok(()) => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
        Err(_) => {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            Some(
                String::from_utf8_lossy(&out.stdout).to_string()
                    + &String::from_utf8_lossy(&out.stderr),
            )
        }
    }
}

#[test]
fn empty_keys_in_a_file_are_skipped_as_redis_does() {
    let empty_hash = Key::new("h:empty", Data::Hash(Vec::new()), Form::HashZiplist);
    let empty_list = Key::new("l:empty", Data::List(Vec::new()), Form::PlainList);
    let empty_ql = Key::new(
        "l:empty-nodes",
        Data::List(Vec::new()),
        Form::Quicklist { per_node: 1, lzf: false, empty_node: true },
    );
    let kept = Key::new("kept", Data::Str("v".into()), Form::Str);
    let bytes = enc::file(9, &[(0, vec![empty_hash, empty_list, empty_ql, kept])], None);
    let dir = write_file("empty", &bytes);
    let args = file_args(&dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for s in [start(&args), start_redis(&args)] {
        let mut c = Client::connect(s.port);
        assert_eq!(c.cmd(&["DBSIZE"]), int(1));
        assert_eq!(c.cmd(&["GET", "kept"]), bulk("v"));
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn old_payloads_restore_like_in_redis() {
    let q = Form::Quicklist { per_node: 3, lzf: true, empty_node: true };
    let cases: Vec<(Data, Form, u16)> = vec![
        (list_data(), Form::PlainList, 1),
        (hash_data(), Form::HashZipmap { free: 1 }, 1),
        (zset_data(), Form::ZSetText, 1),
        (list_data(), Form::ListZiplist, 6),
        (zset_data(), Form::ZSetZiplist, 6),
        (hash_data(), Form::HashZiplist, 6),
        (list_data(), q, 7),
        (Data::List(numbered("e", 5000)), q, 9),
    ];
    let ours = start(&[]);
    let theirs = start_redis(&[]);
    let reference = start(&[]);
    let (mut a, mut b, mut r) =
        (Client::connect(ours.port), Client::connect(theirs.port), Client::connect(reference.port));
    for (i, (data, form, version)) in cases.iter().enumerate() {
        let key = format!("k{i}");
        let (ty, payload) = enc::value(data, *form);
        let p = enc::dump(ty, &payload, *version);
        for c in [&mut a, &mut b] {
            assert_eq!(c.cmd_b(&[b"RESTORE", key.as_bytes(), b"0", &p]), Val::ok(), "{form:?}");
        }
        build(&mut r, &key, data);
        let want = contents(&mut r, &key);
        assert_eq!(contents(&mut a, &key), want, "{form:?}");
        assert_eq!(contents(&mut b, &key), want, "{form:?} in redis");
    }
}

/// Damaged blobs: (what, type byte, payload, whether redis-server 7.0 refuses it too).
fn damaged() -> Vec<(&'static str, u8, Vec<u8>, bool)> {
    let blob = |zl: &[u8]| {
        let mut out = Vec::new();
        enc::string(&mut out, zl);
        out
    };
    let hash = enc::ziplist(&[b"f1", b"v1", b"f2", b"22"]);
    let list = enc::ziplist(&[b"a", b"bbbbbbbbbb", b"c"]);
    let mut bad_zlbytes = hash.clone();
    bad_zlbytes[0] += 1;
    // The last entry cut short: the blob ends (with its end marker) inside it.
    let mut truncated = list[..list.len() - 6].to_vec();
    truncated.push(0xFF);
    let n = truncated.len() as u32;
    truncated[0..4].copy_from_slice(&n.to_le_bytes());
    let mut wrong_count = hash.clone();
    wrong_count[8] = 3;
    let mut bad_prevlen = list.clone();
    bad_prevlen[10 + 3] = 9;
    let mut bad_encoding = list.clone();
    bad_encoding[11] = 0xC1;
    let zm = enc::zipmap(&[(b"a", b"1"), (b"b", b"2")], 0);
    let mut zm_count = zm.clone();
    zm_count[0] = 3;
    let mut zm_end = zm.clone();
    *zm_end.last_mut().unwrap() = 0;
    let mut quicklist = Vec::new();
    enc::length(&mut quicklist, 2);
    enc::string(&mut quicklist, &list);
    enc::string(&mut quicklist, &bad_prevlen);
    let mut short_list = Vec::new();
    enc::length(&mut short_list, 40);
    enc::string(&mut short_list, b"a");
    enc::string(&mut short_list, b"b");
    vec![
        ("zlbytes off by one", 13, blob(&bad_zlbytes), true),
        ("entry cut short", 10, blob(&truncated), true),
        ("zllen off", 13, blob(&wrong_count), true),
        ("prevlen wrong", 10, blob(&bad_prevlen), true),
        ("encoding byte", 10, blob(&bad_encoding), true),
        ("bad node", 14, quicklist, true),
        ("zmlen off", 9, blob(&zm_count), true),
        ("zipmap end", 9, blob(&zm_end), true),
        ("repeated field", 13, blob(&enc::ziplist(&[b"f", b"1", b"f", b"2"])), true),
        ("odd hash", 13, blob(&enc::ziplist(&[b"f", b"1", b"g"])), true),
        ("repeated member", 12, blob(&enc::ziplist(&[b"m", b"1", b"m", b"2"])), true),
        ("NaN score", 12, blob(&enc::ziplist(&[b"m", b"nan"])), false),
        ("empty hash", 13, blob(&enc::ziplist(&[])), true),
        ("empty list", 1, vec![0], true),
        ("list short of elements", 1, short_list, true),
    ]
}

#[test]
fn damaged_payloads_answer_bad_data_format() {
    let ours = start(&[]);
    let theirs = start_redis(&[]);
    let (mut a, mut b) = (Client::connect(ours.port), Client::connect(theirs.port));
    for (what, ty, payload, redis_refuses) in damaged() {
        let p = enc::dump(ty, &payload, 9);
        let reply = a.cmd_b(&[b"RESTORE", b"k", b"0", &p]);
        assert_eq!(reply, common::err("ERR Bad data format"), "{what}");
        if redis_refuses {
            assert_eq!(b.cmd_b(&[b"RESTORE", b"k", b"0", &p]), reply, "{what} in redis");
        }
        assert_eq!(a.cmd(&["EXISTS", "k"]), int(0), "{what}: no partial key");
    }
}

#[test]
fn a_damaged_blob_in_a_file_stops_start_up_with_a_message() {
    for (what, ty, payload, _) in damaged().into_iter().filter(|d| !d.0.starts_with("empty")) {
        let mut bytes = b"REDIS0009".to_vec();
        bytes.extend_from_slice(&[0xFE, 0]);
        // A good key first: the bad one must not leave a partial load behind.
        bytes.extend_from_slice(&[0, 2, b'o', b'k', 1, b'v']);
        bytes.push(ty);
        enc::string(&mut bytes, b"bad");
        bytes.extend_from_slice(&payload);
        bytes.push(0xFF);
        let sum = enc::crc64(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        let dir = write_file("damaged", &bytes);
        let log = start_failure(&dir).unwrap_or_else(|| panic!("{what}: started"));
        assert!(log.contains("Short read or corrupt data"), "{what}: {log}");
        if ["zlbytes off by one", "entry cut short", "zllen off"].contains(&what) {
            assert!(log.contains("ziplist integrity check failed"), "{what}: {log}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn the_test_crc_matches_redis() {
    // The check value of CRC-64/Jones, and redis-server 7.0's DUMP of "12".
    assert_eq!(enc::crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    assert_eq!(
        enc::dump(0, &[0xC0, 12], 10),
        [0, 0xC0, 12, 10, 0, 0x3c, 0x2a, 0xf8, 0x51, 0x5c, 0x04, 0xbc, 0xd5]
    );
}
