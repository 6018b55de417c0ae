//! HyperLogLog against a real Valkey 9.1 (issue 19): every command, option and error; the
//! counts and the raw bytes of the values (GET) after the same inputs, sparse, dense,
//! promoted and merged, under several `hll-sparse-max-bytes`; hand-made and corrupt
//! values; values moved between the two servers as strings, DUMP payloads and RDB files;
//! and the effects (dirty counter, hits and misses, events, WATCH, the AOF).

use crate::common::diff::{same_as_valkey_with, Pair};
use crate::common::{info_int, start, start_valkey, Client, Server, Val};

/// A deterministic pseudo-random sequence for generated elements.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A binary element of 0 to 24 bytes (NUL, CR and LF included).
    fn element(&mut self) -> Vec<u8> {
        let len = self.next() % 25;
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// A command of byte-string arguments.
fn cmd<'a>(head: &[&'a [u8]], tail: &'a [Vec<u8>]) -> Vec<&'a [u8]> {
    head.iter().copied().chain(tail.iter().map(Vec::as_slice)).collect()
}

/// The bytes of a hand-made HLL value: header (`encoding`, cached count bytes) and body.
fn hll_value(encoding: u8, card: [u8; 8], body: &[u8]) -> Vec<u8> {
    let mut v = b"HYLL".to_vec();
    v.extend_from_slice(&[encoding, 0, 0, 0]);
    v.extend_from_slice(&card);
    v.extend_from_slice(body);
    v
}

/// A stale cached count.
const STALE: [u8; 8] = [0, 0, 0, 0, 0, 0, 0, 0x80];

#[test]
fn differential_commands_and_errors() {
    for proto in [2, 3] {
        same_as_valkey_with(
            proto,
            &[],
            &[
                "PFADD h",
                "GET h",
                "OBJECT ENCODING h",
                "PFCOUNT h",
                // PFCOUNT may rewrite its key: refused in read-only scripts, as a write.
                "EVAL_RO return(server.call('pfcount',KEYS[1])) 1 h",
                "GET h",
                "PFADD h",
                "PFADD h a b c",
                "GET h",
                "PFADD h a",
                "PFADD h A a b",
                "PFCOUNT h",
                "GET h",
                "PFCOUNT h",
                "PFCOUNT h nokey",
                "PFCOUNT nokey",
                "PFCOUNT nokey nokey2",
                "EXISTS nokey",
                "PFADD",
                "PFCOUNT",
                "PFMERGE",
                "PFDEBUG",
                "PFDEBUG GETREG",
                "PFDEBUG GETREG h extra",
                "PFSELFTEST extra",
                // Strings that are not HLLs, integers, and other types.
                "SET s abc",
                "PFADD s x",
                "PFADD s",
                "PFCOUNT s",
                "PFCOUNT h s",
                "PFMERGE s h",
                "PFMERGE h s",
                "PFMERGE d h s",
                "EXISTS d",
                "PFDEBUG ENCODING s",
                "SET i 123",
                "PFADD i x",
                "PFCOUNT i",
                "SET long HYLL_but_not_an_hll",
                "PFCOUNT long",
                "LPUSH l a",
                "PFADD l x",
                "PFCOUNT l",
                "PFCOUNT h l",
                "PFCOUNT l s",
                "PFMERGE d l",
                "PFMERGE l h",
                "PFDEBUG ENCODING l",
                "EXISTS d",
                // PFDEBUG: the key is checked before the subcommand.
                "PFDEBUG ENCODING nokey",
                "PFDEBUG foo nokey",
                "PFDEBUG foo s",
                "PFDEBUG foo h",
                "PFDEBUG Fo\0o h",
                "PFDEBUG a\r\nb h",
                "PFDEBUG DECODE h",
                "PFDEBUG encoding h",
                "PFDEBUG GETREG h",
                "PFDEBUG ENCODING h",
                "GET h",
                "PFADD h2 x y",
                "PFDEBUG TODENSE h2",
                "PFDEBUG todense h2",
                "PFDEBUG DECODE h2",
                "PFDEBUG ENCODING h2",
                "PFCOUNT h2",
                "GET h2",
                "OBJECT ENCODING h2",
                // PFMERGE: the destination is merged too; missing sources are empty.
                "PFMERGE m",
                "GET m",
                "PFMERGE m h nokey",
                "GET m",
                "PFCOUNT m",
                "PFMERGE m h2",
                "PFDEBUG ENCODING m",
                "GET m",
                "PFCOUNT m h h2",
                "PFCOUNT m",
                "PFSELFTEST",
                "DEL h",
                "PFDEBUG GETREG h",
            ],
        );
    }
}

/// Elements added in batches of growing size to several keys: after every batch the reply,
/// the encoding and the raw bytes agree, and so does the count (computed, then cached).
#[test]
fn differential_bytes_of_sparse_dense_and_promoted_values() {
    for max_bytes in ["3000", "200", "0", "12000"] {
        let mut p = Pair::start(2, &["--hll-sparse-max-bytes", max_bytes]);
        let mut rng = Lcg(max_bytes.len() as u64 * 7919 + 1);
        let batches = [1usize, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597];
        for key in ["a", "b", "c"] {
            let key = key.as_bytes();
            for (round, &n) in batches.iter().enumerate() {
                let elements: Vec<Vec<u8>> = (0..n).map(|_| rng.element()).collect();
                p.same(&cmd(&[b"PFADD", key], &elements));
                p.same(&[&b"GET"[..], key]);
                p.same(&[&b"PFDEBUG"[..], b"ENCODING", key]);
                if round % 4 == 3 {
                    p.same(&[&b"PFCOUNT"[..], key]);
                    p.same(&[&b"GET"[..], key]);
                }
                // Elements already counted change nothing.
                p.same(&cmd(&[b"PFADD", key], &elements[..n.min(3)]));
            }
            p.same(&[&b"PFCOUNT"[..], key]);
        }
        p.same_lines(&["PFCOUNT a b c", "PFCOUNT a", "PFCOUNT c b"]);
        // Sequential elements: the counts of growing cardinalities, up to dense.
        for i in 0..40 {
            let elements: Vec<Vec<u8>> =
                (0..250).map(|j| format!("seq:{}", i * 250 + j).into_bytes()).collect();
            p.same(&cmd(&[b"PFADD", b"seq"], &elements));
            p.same_lines(&["PFCOUNT seq", "PFDEBUG ENCODING seq"]);
        }
        p.same_lines(&["GET seq", "PFCOUNT seq a b c", "PFCOUNT seq"]);
    }
}

/// PFMERGE of every mix of encodings, into new, sparse and dense destinations (their TTL
/// kept), and PFCOUNT of unions.
#[test]
fn differential_merges() {
    for max_bytes in ["3000", "300"] {
        let mut p = Pair::start(2, &["--hll-sparse-max-bytes", max_bytes]);
        let mut rng = Lcg(99);
        for (key, n) in [("s1", 30), ("s2", 40), ("s3", 200), ("d1", 4000), ("d2", 6000)] {
            let elements: Vec<Vec<u8>> = (0..n).map(|_| rng.element()).collect();
            p.same(&cmd(&[b"PFADD", key.as_bytes()], &elements));
            p.same_lines(&[&format!("PFDEBUG ENCODING {key}"), &format!("GET {key}")]);
        }
        p.same_lines(&[
            "PFMERGE m1 s1 s2",
            "GET m1",
            "PFDEBUG ENCODING m1",
            "PFMERGE m2 s1 s2 s3",
            "GET m2",
            "PFMERGE m3 s1 d1",
            "GET m3",
            "PFMERGE m4 d1 d2 s3 nokey",
            "GET m4",
            "PFCOUNT m4",
            "PFCOUNT d1 d2 s3",
            "PFCOUNT s1 s2",
            "PFCOUNT s1 s2 s3 d1 d2 nokey",
            // Into an existing sparse destination, with a TTL.
            "PFADD t1 x y z",
            "EXPIRE t1 1000",
            "PFADD t1 w",
            "TTL t1",
            "PFMERGE t1 s1 s2",
            "GET t1",
            "TTL t1",
            "PFMERGE t1 s3",
            "GET t1",
            "PFMERGE t1 d1",
            "GET t1",
            "TTL t1",
            "PFDEBUG ENCODING t1",
            "PFADD t2 a",
            "PEXPIRE t2 100000",
            "PFDEBUG GETREG t2",
            "PFDEBUG ENCODING t2",
            "PFCOUNT t2",
            "TTL t2",
            // Into an existing dense destination.
            "PFMERGE d1 s1",
            "GET d1",
            "PFCOUNT d1",
            "PFMERGE d1 d2",
            "GET d1",
            "PFCOUNT d1",
            "GET d1",
            // The destination alone: nothing to add, the cache goes stale all the same.
            "PFMERGE d2",
            "GET d2",
            "PFMERGE s1",
            "GET s1",
            "PFCOUNT s1 s1 s1",
        ]);
    }
}

/// Hand-made values: what Valkey accepts, counts and refuses.
#[test]
fn differential_hand_made_and_corrupt_values() {
    let mut p = Pair::start(2, &[]);
    let set = |p: &mut Pair, key: &str, value: &[u8]| {
        p.same(&[b"SET", key.as_bytes(), value]);
    };
    // An empty HLL with a wrong (but valid) cached count: trusted.
    set(&mut p, "cached", &hll_value(1, 12345u64.to_le_bytes(), &[0x7f, 0xff]));
    // Opcodes that cover 10000 registers only: corrupt; a PFADD keeps what it changed
    // before it found out ("" falls in register 5938, "0" in 13225).
    set(&mut p, "short", &hll_value(1, [0; 8], &[0x67, 0x0f]));
    // 16384 registers and one more: corrupt for counting, not for adding.
    set(&mut p, "long", &hll_value(1, STALE, &[0x7f, 0xff, 0x00]));
    // A VAL after the last register: ignored by merges and conversions, not by counting.
    set(&mut p, "trailing", &hll_value(1, STALE, &[0x7f, 0xff, 0x88]));
    // An XZERO cut short: its missing byte reads as zero.
    set(&mut p, "cut", &hll_value(1, STALE, &[0x7f, 0xfe, 0x40]));
    // Opcodes Valkey would not write: runs of one, neighbours of equal values.
    let mut odd = vec![0x40, 0x00, 0x00, 0x84, 0x84, 0x80, 0x41, 0x00];
    odd.extend_from_slice(&[0x7e, 0xf7]);
    set(&mut p, "odd", &hll_value(1, STALE, &odd));
    // Unused header bytes set, kept by a conversion.
    let mut unused = hll_value(1, [1, 2, 3, 4, 5, 6, 7, 8], &[0x7f, 0xff]);
    unused[5..8].copy_from_slice(b"xyz");
    set(&mut p, "unused", &unused);
    // Dense values: the right length with registers up to 63, and wrong lengths.
    let mut regs: Vec<u8> = (0..12288u32).map(|i| (i * 37 % 251) as u8).collect();
    set(&mut p, "dense", &hll_value(0, STALE, &regs));
    regs.pop();
    set(&mut p, "dense-short", &hll_value(0, STALE, &regs));
    regs.extend_from_slice(&[1, 2]);
    set(&mut p, "dense-long", &hll_value(0, STALE, &regs));
    set(&mut p, "enc2", &hll_value(2, STALE, &[0x7f, 0xff]));
    set(&mut p, "magic", &[b"HYLX", &hll_value(1, STALE, &[0x7f, 0xff])[4..]].concat());
    set(&mut p, "header-only", &hll_value(1, STALE, &[]));
    set(&mut p, "fifteen", &hll_value(1, STALE, &[])[..15]);
    p.same_lines(&[
        "PFCOUNT cached",
        "OBJECT ENCODING cached",
        "PFADD cached",
        "OBJECT ENCODING cached",
        "PFCOUNT cached",
        "PFADD cached a",
        "PFCOUNT cached",
        "PFCOUNT short",
        "PFCOUNT short cached",
        "PFMERGE m short",
        "EXISTS m",
        "PFDEBUG DECODE short",
        "PFDEBUG GETREG short",
        "PFDEBUG TODENSE short",
        "PFDEBUG ENCODING short",
        "PFADD short \"\" 0",
        "GET short",
        "PFADD short 0",
        "GET short",
        "PFCOUNT long",
        "PFADD long a b c d",
        "GET long",
        "PFCOUNT long",
        "PFCOUNT long cached",
        "PFCOUNT trailing",
        "PFCOUNT trailing cached",
        "PFMERGE mt trailing",
        "GET mt",
        "PFDEBUG TODENSE trailing",
        "GET trailing",
        "PFCOUNT cut",
        "PFADD cut a b c",
        "GET cut",
        "PFDEBUG DECODE cut",
        "PFDEBUG DECODE odd",
        "PFCOUNT odd",
        "PFADD odd a b c d e f g h i j",
        "GET odd",
        "PFDEBUG DECODE odd",
        "PFDEBUG TODENSE unused",
        "GET unused",
        "PFCOUNT dense",
        "GET dense",
        "PFADD dense a b c",
        "PFCOUNT dense cached",
        "PFMERGE md dense odd",
        "GET md",
        "PFMERGE odd dense",
        "GET odd",
        "PFCOUNT dense-short",
        "PFCOUNT dense-long",
        "PFADD dense-long a",
        "PFCOUNT enc2",
        "PFCOUNT magic",
        "PFDEBUG ENCODING enc2",
        "PFCOUNT header-only",
        "PFADD header-only a",
        "PFDEBUG TODENSE header-only",
        "PFDEBUG DECODE header-only",
        "PFCOUNT fifteen",
    ]);
}

/// HLL values are strings: written by one server, they count the same on the other, as
/// strings (GET and SET), as DUMP payloads and in RDB files.
#[test]
fn values_move_between_ferrokey_and_valkey() {
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    let mut a = Client::connect(ours.port);
    let mut b = Client::connect(theirs.port);
    let mut rng = Lcg(5);
    let mut fill = |c: &mut Client, key: &str, n: usize| {
        let elements: Vec<Vec<u8>> = (0..n).map(|_| rng.element()).collect();
        c.cmd_b(&cmd(&[b"PFADD", key.as_bytes()], &elements));
    };
    for (key, n) in [("sparse", 100), ("dense", 9000)] {
        fill(&mut a, &format!("ours:{key}"), n);
        fill(&mut b, &format!("theirs:{key}"), n);
    }
    let keys = ["ours:sparse", "ours:dense", "theirs:sparse", "theirs:dense"];
    // As strings, with stale caches and then cached counts.
    for _ in 0..2 {
        for key in keys {
            let (from, to) =
                if key.starts_with("ours") { (&mut a, &mut b) } else { (&mut b, &mut a) };
            let Val::Bulk(value) = from.cmd(&["GET", key]) else { panic!("GET {key}") };
            assert_eq!(to.cmd_b(&[b"SET", key.as_bytes(), &value]), Val::ok());
            assert_eq!(to.cmd(&["PFCOUNT", key]), from.cmd(&["PFCOUNT", key]), "{key}");
            assert_eq!(to.cmd(&["GET", key]), from.cmd(&["GET", key]), "{key} after PFCOUNT");
        }
    }
    assert_eq!(
        a.cmd(&["PFCOUNT", keys[0], keys[1], keys[2], keys[3]]),
        b.cmd(&["PFCOUNT", keys[0], keys[1], keys[2], keys[3]])
    );
    // As DUMP payloads, both ways.
    for key in keys {
        let (from, to) = if key.starts_with("ours") { (&mut a, &mut b) } else { (&mut b, &mut a) };
        let Val::Bulk(payload) = from.cmd(&["DUMP", key]) else { panic!("DUMP {key}") };
        let copy = format!("{key}:restored");
        assert_eq!(to.cmd_b(&[b"RESTORE", copy.as_bytes(), b"0", &payload]), Val::ok());
        assert_eq!(to.cmd(&["GET", &copy]), from.cmd(&["GET", key]), "{key}");
        assert_eq!(to.cmd(&["PFADD", &copy, "more"]), from.cmd(&["PFADD", key, "more"]));
        assert_eq!(to.cmd(&["GET", &copy]), from.cmd(&["GET", key]), "{key} after PFADD");
    }
    // In an RDB file: ferrokey's, loaded by Valkey.
    assert_eq!(a.cmd(&["SAVE"]), Val::ok());
    let rdb = std::fs::read(ours.dir.join("dump.rdb")).expect("ferrokey's dump.rdb");
    let valkey_dir = crate::common::unique_dir("hll-rdb");
    std::fs::write(valkey_dir.join("dump.rdb"), rdb).expect("write dump.rdb");
    let dir = valkey_dir.to_str().expect("utf-8");
    let loaded = start_valkey(&["--dir", dir]);
    let mut l = Client::connect(loaded.port);
    for key in keys {
        assert_eq!(l.cmd(&["GET", key]), a.cmd(&["GET", key]), "{key} loaded by Valkey");
        assert_eq!(l.cmd(&["PFCOUNT", key]), a.cmd(&["PFCOUNT", key]), "{key} loaded by Valkey");
    }
    drop(loaded);
    let _ = std::fs::remove_dir_all(valkey_dir);
}

/// The events of `line` on a server subscribed to every keyspace and keyevent channel.
struct Watcher {
    sub: Client,
}

impl Watcher {
    fn new(c: &mut Client, port: u16) -> Watcher {
        assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEAnm"]), Val::ok());
        let mut sub = Client::connect(port);
        sub.send(&[b"PSUBSCRIBE", b"__key*@*__:*"]);
        sub.read();
        Watcher { sub }
    }

    /// What was published since the last call, up to a marker `c` publishes now.
    fn events(&mut self, c: &mut Client) -> Vec<String> {
        c.cmd(&["PUBLISH", "__keyspace@0__:~marker~", "x"]);
        let mut got = Vec::new();
        for _ in 0..100 {
            let m: Vec<String> = self.sub.read().as_array().iter().map(Val::as_str).collect();
            if m[2].contains("~marker~") {
                return got;
            }
            got.push(format!("{} {}", m[2], m[3]));
        }
        panic!("no marker");
    }
}

/// Per command: the reply, the change to the dirty counter, keyspace hits and misses, the
/// events, and whether a WATCH of the key fails, all as Valkey's.
#[test]
fn effects_are_valkeys() {
    let servers = [start(&[]), start_valkey(&[])];
    let mut sides: Vec<(Client, Client, Watcher)> = servers
        .iter()
        .map(|s| {
            let mut c = Client::connect(s.port);
            let w = Watcher::new(&mut c, s.port);
            (c, Client::connect(s.port), w)
        })
        .collect();
    let lines = [
        "PFADD h a b c",
        "PFADD h a",
        "PFADD h a d",
        "PFADD empty",
        "PFCOUNT h",
        "PFCOUNT h",
        "PFCOUNT nokey",
        "PFCOUNT h nokey empty",
        "PFMERGE m h nokey",
        "PFMERGE m",
        "PFDEBUG GETREG h",
        "PFDEBUG ENCODING h",
        "PFDEBUG TODENSE m",
        "PFDEBUG TODENSE m",
        "PFCOUNT m",
        "PFADD m e f",
        "SET s abc",
        "PFADD s x",
        "PFCOUNT s",
    ];
    for line in lines {
        let key = line.split(' ').nth(if line.starts_with("PFDEBUG") { 2 } else { 1 });
        let key = key.unwrap_or("nokey");
        let mut seen = Vec::new();
        for (c, watcher_client, w) in &mut sides {
            assert_eq!(watcher_client.cmd(&["WATCH", key]), Val::ok());
            let dirty = info_int(c, "persistence", "rdb_changes_since_last_save");
            let hits = info_int(c, "stats", "keyspace_hits");
            let misses = info_int(c, "stats", "keyspace_misses");
            let args = crate::common::diff::words(line);
            let reply = format!("{:?}", c.cmd_b(&args));
            let dirty = info_int(c, "persistence", "rdb_changes_since_last_save") - dirty;
            let hits = info_int(c, "stats", "keyspace_hits") - hits;
            let misses = info_int(c, "stats", "keyspace_misses") - misses;
            let events = w.events(c);
            assert_eq!(watcher_client.cmd(&["MULTI"]), Val::ok());
            watcher_client.cmd(&["PING"]);
            let watch_failed = matches!(watcher_client.cmd(&["EXEC"]), Val::Nil | Val::NilArray);
            seen.push((reply, dirty, hits, misses, events, watch_failed));
        }
        assert_eq!(seen[0], seen[1], "{line} (left: ferrokey, right: valkey 9.1)");
    }
}

/// The commands of the server's incremental AOF files, each as one line.
fn aof_commands(server: &Server) -> Vec<String> {
    crate::common::aof_commands(server).iter().map(|words| words.join(" ")).collect()
}

/// What reaches the AOF: PFADD and PFMERGE when they change something, PFCOUNT when it
/// cached a count, PFDEBUG when it converted; and the file replays to the same values.
#[test]
fn the_aof_logs_what_valkey_logs() {
    let args = ["--appendonly", "yes", "--appendfsync", "always"];
    let mut p = Pair::start(2, &args);
    p.same_lines(&[
        "PFADD h a b c",
        "PFADD h a",
        "PFCOUNT h",
        "PFCOUNT h",
        "PFCOUNT h nokey",
        "PFADD h d",
        "MULTI",
        "PFCOUNT h",
        "PFADD h e",
        "PFCOUNT h",
        "EXEC",
        "PFDEBUG TODENSE h",
        "PFDEBUG TODENSE h",
        "PFDEBUG GETREG h",
        "PFADD g x",
        "PFDEBUG GETREG g",
        "PFADD g y",
        "EVAL return(server.call('pfcount',KEYS[1])) 1 g",
        "PFADD g z",
        "PFMERGE m h g",
        "PFCOUNT m",
        "GET h",
        "GET g",
        "GET m",
    ]);
    assert_eq!(aof_commands(&p.ours), aof_commands(&p.theirs));
    let before: Vec<Val> = ["h", "g", "m"].iter().map(|k| p.a.cmd(&["GET", k])).collect();
    let dir = p.ours.dir.clone();
    let dir = dir.to_str().expect("utf-8");
    // The same directory, loaded again (the first server is still running: copy it).
    let copy = crate::common::unique_dir("hll-aof");
    std::fs::create_dir_all(copy.join("appendonlydir")).expect("dir");
    for f in std::fs::read_dir(format!("{dir}/appendonlydir")).expect("AOF dir") {
        let f = f.expect("entry").path();
        std::fs::copy(&f, copy.join("appendonlydir").join(f.file_name().expect("name")))
            .expect("copy");
    }
    let again = start(&["--appendonly", "yes", "--dir", copy.to_str().expect("utf-8")]);
    let mut c = Client::connect(again.port);
    let after: Vec<Val> = ["h", "g", "m"].iter().map(|k| c.cmd(&["GET", k])).collect();
    assert_eq!(before, after);
    drop(again);
    let _ = std::fs::remove_dir_all(copy);
}
