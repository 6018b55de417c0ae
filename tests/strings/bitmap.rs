//! Bitmaps and BITFIELD against a real Valkey 9.1 (issue 19): SETBIT, GETBIT, BITCOUNT,
//! BITPOS, BITOP, BITFIELD and BITFIELD_RO with every option and error, in RESP2 and RESP3;
//! values on both sides of the inline limit and of BITOP's piece size, integer-encoded
//! values, TTLs and encodings; the offset limit under a small `proto-max-bulk-len`; a seeded
//! random run of BITFIELD operations (replies and the bytes left); the keyspace events each
//! command raises and the AOF each leaves.

use crate::common::diff::{same_as_valkey, same_as_valkey_with, words, Pair};
use crate::common::{start, start_valkey, Client, Server, Val};

const SETBIT_GETBIT: &[&str] = &[
    "SETBIT k 7 1",
    "SETBIT k 7 1",
    "SETBIT k 7 0",
    "GET k",
    "SETBIT k 100 1",
    "GET k",
    "STRLEN k",
    "OBJECT ENCODING k",
    "GETBIT k 100",
    "GETBIT k 7",
    "GETBIT k 99999",
    "GETBIT nokey 0",
    "EXISTS nokey",
    // Integers are addressed as their text; any SETBIT makes the value raw, even one that
    // changes nothing.
    "SET n 123",
    "GETBIT n 2",
    "OBJECT ENCODING n",
    "SETBIT n 2 0",
    "OBJECT ENCODING n",
    "GET n",
    "SETBIT n 6 1",
    "GET n",
    "SET n -7",
    "SETBIT n 24 1",
    "GET n",
    "SET e abc",
    "GETBIT e 1",
    "OBJECT ENCODING e",
    "SETBIT e 1 1",
    "OBJECT ENCODING e",
    // The TTL stays.
    "SET t abc EX 1000",
    "SETBIT t 100 1",
    "TTL t",
    // Across the inline limit and well past it.
    "SETBIT big 2000 1",
    "STRLEN big",
    "SETBIT big 2047 1",
    "SETBIT big 2048 1",
    "STRLEN big",
    "SETBIT big 80000 1",
    "STRLEN big",
    "GETBIT big 2000",
    "GETBIT big 2001",
    "BITCOUNT big",
    "OBJECT ENCODING big",
    "SETBIT fresh 90000 1",
    "OBJECT ENCODING fresh",
    "BITPOS fresh 1",
    // Errors: the offset is checked first, then the value, then the type.
    "SETBIT k 4294967296 1",
    "SETBIT k 4294967296 x",
    "SETBIT k -1 1",
    "SETBIT k 01 1",
    "SETBIT k +1 1",
    "SETBIT k 1.5 1",
    "SETBIT k x 1",
    "SETBIT k \"\" 1",
    "SETBIT k 1 2",
    "SETBIT k 1 -1",
    "SETBIT k 1 01",
    "SETBIT k 1 x",
    "SETBIT k 1 \"\"",
    "GETBIT k -1",
    "GETBIT k 4294967296",
    "GETBIT k 18446744073709551616",
    "GETBIT k x",
    "LPUSH l a",
    "SETBIT l 0 1",
    "SETBIT l 0 2",
    "SETBIT l x 1",
    "GETBIT l 0",
    "GETBIT l x",
    "SETBIT k 1",
    "GETBIT k",
    "SETBIT k 1 1 1",
    "GETBIT k 1 1",
];

#[test]
fn setbit_and_getbit_reply_as_valkey() {
    same_as_valkey(SETBIT_GETBIT);
}

const COUNT_AND_POS: &[&str] = &[
    "SET s foobar",
    "BITCOUNT s",
    "BITCOUNT s 0 0",
    "BITCOUNT s 1 1",
    "BITCOUNT s 1 1 BYTE",
    "BITCOUNT s 1 1 byte",
    "BITCOUNT s 5 30 BIT",
    "BITCOUNT s 5 30 bit",
    "BITCOUNT s 7 7 BIT",
    "BITCOUNT s 0 -1 BIT",
    "BITCOUNT s -1 -3",
    "BITCOUNT s -3 -1",
    "BITCOUNT s -10 -20",
    "BITCOUNT s -20 -10",
    "BITCOUNT s -20 -10 BIT",
    "BITCOUNT s -100 -48 BIT",
    "BITCOUNT s -5 -100",
    "BITCOUNT s 1",
    "BITCOUNT s -2",
    "BITCOUNT s 100",
    "BITCOUNT s 3 1",
    "BITCOUNT s 0 1000",
    "BITCOUNT s 0 1000 BIT",
    "BITCOUNT s -9223372036854775808 9223372036854775807",
    "BITCOUNT s -9223372036854775808 9223372036854775807 BIT",
    "BITCOUNT nokey",
    "BITCOUNT nokey 0 -1 BIT",
    "SET n 12345",
    "BITCOUNT n",
    "BITCOUNT n 1 2",
    "OBJECT ENCODING n",
    "SET empty \"\"",
    "BITCOUNT empty",
    "BITCOUNT empty 0 -1",
    "BITCOUNT empty 0 0 BIT",
    // Errors: start, then the unit, then end; too many arguments before anything.
    "BITCOUNT s a",
    "BITCOUNT s a 2",
    "BITCOUNT s 1 b",
    "BITCOUNT s a b BIT",
    "BITCOUNT s 1 b BIT",
    "BITCOUNT s 1 b foo",
    "BITCOUNT s 1 2 foo",
    "BITCOUNT s 1 2 BITS",
    "BITCOUNT s 1 2 BIT extra",
    "BITCOUNT s a b c d",
    "BITCOUNT",
    "LPUSH l a",
    "BITCOUNT l",
    "BITCOUNT l 0 1 BIT",
    "BITCOUNT l a",
    "BITCOUNT l 0 1 foo",
    "BITPOS s 1",
    "BITPOS s 0",
    "BITPOS s 1 2",
    "BITPOS s 0 2",
    "BITPOS s 1 2 -1",
    "BITPOS s 1 2 -1 BYTE",
    "BITPOS s 1 7 15 BIT",
    "BITPOS s 0 7 15 BIT",
    "BITPOS s 1 9 9 bit",
    "BITPOS s 0 9 9 bit",
    "BITPOS s 1 -3 -1 BIT",
    "BITPOS s 0 -3 -1 BIT",
    "BITPOS s 1 -1 -3",
    "BITPOS s 1 -10 -20",
    "BITPOS s 1 -20 -10",
    "BITPOS s 0 100",
    "BITPOS s 0 0 1000",
    "BITPOS s 1 -9223372036854775808 9223372036854775807 BIT",
    "BITPOS nokey 0",
    "BITPOS nokey 1",
    "BITPOS nokey 0 5 10 BIT",
    "BITPOS n 1",
    "BITPOS n 0 1",
    "BITPOS empty 0",
    "BITPOS empty 1",
    "BITPOS empty 0 0",
    // Errors: the bit first (integer, then 0 or 1), then the count of arguments.
    "BITPOS s 2",
    "BITPOS s -1",
    "BITPOS s x",
    "BITPOS s 2 1 2 3 4",
    "BITPOS s 1 1 2 3 4",
    "BITPOS s 1 x",
    "BITPOS s 1 1 x",
    "BITPOS s 1 1 2 foo",
    "BITPOS s 1 x 2 foo",
    "BITPOS s 1 1 x foo",
    "BITPOS s",
    "BITPOS l 1",
    "BITPOS l 2",
    "BITPOS l 1 x",
];

#[test]
fn bitcount_and_bitpos_reply_as_valkey() {
    same_as_valkey(COUNT_AND_POS);
}

/// All-ones and all-zeros runs (where the word-wide searches skip), with a clear or a set
/// bit at every place in and around them.
#[test]
fn bitpos_finds_the_odd_bit_in_long_runs() {
    let mut p = Pair::start(2, &[]);
    for len in [1usize, 7, 8, 9, 63, 64, 65, 200, 300, 5000] {
        for fill in [0x00u8, 0xff] {
            let mut value = vec![fill; len];
            p.same(&[b"SET".as_slice(), b"r", &value]);
            for line in
                ["BITPOS r 0", "BITPOS r 1", "BITPOS r 0 0 -1", "BITPOS r 1 1", "BITCOUNT r"]
            {
                p.same_line(line);
            }
            for at in [0, len / 2, len - 1] {
                value[at] = fill ^ 0x10;
                p.same(&[b"SET".as_slice(), b"r", &value]);
                let (bit_at, past) = ((at * 8 + 3).to_string(), (at * 8 + 4).to_string());
                for args in [
                    vec!["BITPOS", "r", "0"],
                    vec!["BITPOS", "r", "1"],
                    vec!["BITPOS", "r", "0", "1", "-1"],
                    vec!["BITPOS", "r", "1", "0", "-2"],
                    vec!["BITPOS", "r", "0", &bit_at, "-1", "BIT"],
                    vec!["BITPOS", "r", "1", &past, "-1", "BIT"],
                    vec!["BITCOUNT", "r", &bit_at, &past, "BIT"],
                ] {
                    p.same(&args);
                }
                value[at] = fill;
            }
        }
    }
}

const BITOP: &[&str] = &[
    "SET a foobar",
    "SET b abcdef",
    "SET c xyz",
    "BITOP AND d a b",
    "GET d",
    "OBJECT ENCODING d",
    "BITOP OR d a b c",
    "GET d",
    "BITOP XOR d a b c",
    "GET d",
    "BITOP and d a c",
    "GET d",
    "BITOP NOT d c",
    "GET d",
    "BITOP not d nokey",
    "EXISTS d",
    "BITOP AND d a nokey",
    "GET d",
    "BITOP OR d nokey a",
    "GET d",
    "BITOP XOR d a a",
    "GET d",
    "SET d x EX 1000",
    "BITOP OR d a",
    "TTL d",
    // The destination may be a source.
    "BITOP AND a a b",
    "GET a",
    "BITOP NOT a a",
    "GET a",
    "SET n 123",
    "BITOP OR d n c",
    "GET d",
    "SET empty \"\"",
    "BITOP AND d empty nokey",
    "EXISTS d",
    "BITOP AND d nokey",
    "EXISTS d",
    // Errors.
    "BITOP DIFF d a b",
    "BITOP DIFF1 d a b",
    "BITOP ANDOR d a b",
    "BITOP ONE d a b",
    "BITOP NOT d a b",
    "BITOP NOT d",
    "BITOP foo d a",
    "BITOP AND d",
    "LPUSH l x",
    "BITOP AND d a l",
    "BITOP AND d l nokey",
    "BITOP NOT d l",
    "BITOP AND l a",
    "TYPE l",
    "GET l",
    "BITOP AND l nokey",
    "EXISTS l",
];

#[test]
fn bitop_replies_as_valkey() {
    same_as_valkey(BITOP);
}

const BITFIELD: &[&str] = &[
    "BITFIELD bf SET u8 0 255 GET u8 0 INCRBY u8 0 10 OVERFLOW SAT INCRBY u8 0 300 OVERFLOW FAIL INCRBY u8 0 1 GET i8 0",
    "GET bf",
    "OBJECT ENCODING bf",
    "BITFIELD bf SET i5 #3 -7 GET i5 #3 GET u4 13 INCRBY i64 20 9223372036854775807 OVERFLOW WRAP INCRBY i64 20 1",
    "GET bf",
    "BITFIELD bf GET u63 0 GET i64 1 GET i1 0 GET u1 7 GET i64 #1 GET u8 #1000",
    "BITFIELD bf set u8 0 -1 overflow sat set u8 8 -1 overflow wrap set u8 16 -200 set i8 24 200 get u32 0",
    "BITFIELD bf overflow sat incrby i8 0 -1000 incrby u8 8 -1000 incrby u63 0 9223372036854775807 incrby u63 0 1",
    "BITFIELD bf set i64 0 -9223372036854775808 incrby i64 0 -1 overflow sat incrby i64 0 -1 incrby i64 0 -9223372036854775808",
    "BITFIELD bf overflow WRAP set u8 0 1 overflow Sat set u8 0 1000 overflow FAIL set u8 0 1000 overflow fail incrby i1 0 1",
    "BITFIELD bf SET u2 7 3 SET i3 13 -4 GET u16 0 SET u8 #1 7 GET u8 #1",
    "GET bf",
    // OVERFLOW FAIL everywhere: the key is still created (or grown), but nothing changed.
    "BITFIELD f OVERFLOW FAIL SET u2 100 5",
    "EXISTS f",
    "GET f",
    "OBJECT ENCODING f",
    "BITFIELD f OVERFLOW FAIL SET u2 1000 5",
    "STRLEN f",
    "BITFIELD f SET u2 1000 3 GET u2 1000",
    // Only GETs: a read, nothing created.
    "BITFIELD nokey GET u8 0 GET i64 100",
    "EXISTS nokey",
    "BITFIELD nokey",
    "BITFIELD bf",
    "BITFIELD_RO bf",
    "BITFIELD_RO bf GET u8 0 GET i64 3 OVERFLOW SAT GET u2 #3",
    "BITFIELD_RO nokey GET u8 0",
    // Integers as text; a write makes them raw.
    "SET num 1234",
    "BITFIELD num GET u8 0 GET u16 4 GET u8 31",
    "OBJECT ENCODING num",
    "BITFIELD num SET u8 0 50",
    "GET num",
    "OBJECT ENCODING num",
    "SET num 1234",
    "BITFIELD num OVERFLOW FAIL INCRBY u2 0 100",
    "OBJECT ENCODING num",
    "SET t abc EX 1000",
    "BITFIELD t SET u8 100 1",
    "TTL t",
    // Across the inline limit.
    "BITFIELD grow SET u8 2000 1 SET u8 #400 2 GET u16 1999",
    "STRLEN grow",
    "BITFIELD grow INCRBY u16 #2000 7 GET u8 0",
    "STRLEN grow",
    "OBJECT ENCODING grow",
    // `#n` is n times the width, wrapping as Valkey's C arithmetic does.
    "BITFIELD w GET i64 #288230376151711745",
    "BITFIELD w GET u8 #-1",
    "BITFIELD w GET u8 #",
    "BITFIELD w GET u8 ##1",
    "BITFIELD w GET u8 #536870911",
    "BITFIELD w GET u8 #536870912",
    "BITFIELD w GET u8 4294967295",
    "BITFIELD w GET u8 4294967296",
    "BITFIELD w GET u8 -1",
    "BITFIELD w GET u8 x",
    // Parse errors, in Valkey's order.
    "BITFIELD bf GET",
    "BITFIELD bf GET u8",
    "BITFIELD bf GET u8 0 SET",
    "BITFIELD bf SET u8 0",
    "BITFIELD bf INCRBY u8 0",
    "BITFIELD bf OVERFLOW",
    "BITFIELD bf OVERFLOW foo GET u8 0",
    "BITFIELD bf OVERFLOW WRAP GET u8 a",
    "BITFIELD bf GET U8 0",
    "BITFIELD bf GET i8x 0",
    "BITFIELD bf GET u 0",
    "BITFIELD bf GET i 0",
    "BITFIELD bf GET i-1 0",
    "BITFIELD bf GET i0 0",
    "BITFIELD bf GET u0 0",
    "BITFIELD bf GET u64 0",
    "BITFIELD bf GET i65 0",
    "BITFIELD bf GET i08 0",
    "BITFIELD bf GET \"\" 0",
    "BITFIELD bf SET u8 0 a GET x 0",
    "BITFIELD bf GET x 0 SET u8 0 a",
    "BITFIELD bf SET u8 0 1.5",
    "BITFIELD bf INCRBY u8 0 9223372036854775808",
    "BITFIELD bf FOO u8 0",
    "BITFIELD bf GET u8 0 FOO",
    "BITFIELD bf SET u8 4294967296 255",
    "BITFIELD_RO bf SET u8 0 1",
    "BITFIELD_RO bf INCRBY u8 0 1",
    "BITFIELD_RO bf GET x 0 SET u8 0 1",
    "BITFIELD_RO bf SET u8 0 x",
    "BITFIELD_RO bf OVERFLOW foo",
    "BITFIELD_RO bf FOO",
    "BITFIELD",
    "BITFIELD_RO",
    "LPUSH l a",
    "BITFIELD l GET u8 0",
    "BITFIELD l SET u8 0 1",
    "BITFIELD l",
    "BITFIELD l GET x 0",
    "BITFIELD_RO l GET u8 0",
    "BITFIELD_RO l SET u8 0 1",
];

#[test]
fn bitfield_replies_as_valkey() {
    same_as_valkey(BITFIELD);
}

/// The offset limit follows `proto-max-bulk-len` (here Valkey's smallest, 1 MiB: bits up
/// to 8 Mi - 1), for every command that takes one.
#[test]
fn offsets_are_bounded_by_proto_max_bulk_len() {
    let lines = [
        "SETBIT k 8388607 1",
        "SETBIT k 8388608 1",
        "STRLEN k",
        "GETBIT k 8388607",
        "GETBIT k 8388608",
        "BITFIELD k GET u8 8388607",
        "BITFIELD k GET u8 8388608",
        "BITFIELD k SET i64 8388607 -1",
        "STRLEN k",
        "BITFIELD k GET i64 8388607",
        "BITFIELD k GET u8 #1048575",
        "BITFIELD k GET u8 #1048576",
        "BITFIELD_RO k GET u8 8388608",
        "BITCOUNT k",
        "BITPOS k 1 -2",
        "BITPOS k 0 -2",
        "APPEND k x",
        "SETBIT k 8388609 1",
        "STRLEN k",
    ];
    same_as_valkey_with(2, &["--proto-max-bulk-len", "1mb"], &lines);
}

/// A small generator for the random runs (SplitMix64), seeded.
struct Rand(u64);

impl Rand {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// One random BITFIELD operation's words: a type, an offset (sometimes `#n`), a value
/// near the interesting edges.
fn random_field_op(r: &mut Rand, out: &mut Vec<String>) {
    let signed = r.below(2) == 0;
    let bits = 1 + r.below(if signed { 64 } else { 63 });
    let op = r.pick(&["GET", "SET", "INCRBY", "OVERFLOW"]);
    if op == "OVERFLOW" {
        out.extend(["OVERFLOW".into(), r.pick(&["WRAP", "SAT", "FAIL"]).into()]);
        return;
    }
    let offset = if r.below(4) == 0 {
        format!("#{}", r.below(8))
    } else {
        let far = r.below(8) == 0;
        r.below(if far { 3000 } else { 130 }).to_string()
    };
    out.extend([op.into(), format!("{}{bits}", if signed { 'i' } else { 'u' }), offset]);
    if op != "GET" {
        let edge = 1i128 << (bits - 1);
        let value: i128 = match r.below(6) {
            0 => r.below(5) as i128 - 2,
            1 => edge - 1 + r.below(3) as i128 - 1,
            2 => -edge + r.below(3) as i128 - 1,
            3 => 2 * edge - 1 + r.below(3) as i128 - 1,
            4 => r.next() as i64 as i128,
            _ => (r.next() % 1000) as i128 - 500,
        };
        let value = value.clamp(i64::MIN as i128, i64::MAX as i128);
        out.push(value.to_string());
    }
}

/// Seeded random BITFIELD commands (1 to 6 operations, every width, offsets that straddle
/// bytes and the string's end, values at the edges of each type, all overflow modes) on a
/// few keys, some holding integers or long values: every reply, and then the value's bytes,
/// the same as Valkey's.
#[test]
fn random_bitfield_operations_match_valkey() {
    let mut p = Pair::start(2, &[]);
    let mut r = Rand(0x5eed_b17f);
    let keys = ["k0", "k1", "k2"];
    for round in 0..2500 {
        let key = keys[r.below(3) as usize];
        if round % 200 == 0 {
            let setup = match r.below(3) {
                0 => format!("SET {key} {}", r.next() as i64),
                1 => format!("SET {key} {}", "x".repeat(1 + r.below(400) as usize)),
                _ => format!("DEL {key}"),
            };
            p.same_line(&setup);
        }
        let mut args: Vec<String> = vec![r.pick(&["BITFIELD", "BITFIELD", "BITFIELD_RO"]).into()];
        args.push(key.into());
        for _ in 0..1 + r.below(6) {
            random_field_op(&mut r, &mut args);
        }
        p.same(&args);
        p.same(&["GET", key]);
        if round % 50 == 0 {
            p.same(&["BITCOUNT", key]);
            p.same(&["OBJECT", "ENCODING", key]);
        }
    }
}

/// Random binary values of several lengths (short, past the inline limit, past BITOP's
/// piece size, unequal), built with SETRANGE: BITOP of every operator, and BITCOUNT and
/// BITPOS over random ranges in both units.
#[test]
fn long_random_values_combine_count_and_search_as_valkey() {
    let mut p = Pair::start(2, &[]);
    let mut r = Rand(42);
    let lengths = [3usize, 255, 256, 4000, 16 * 1024 + 5, 70_000];
    for (i, len) in lengths.iter().enumerate() {
        let mut at = 0;
        while at < *len {
            let n = (*len - at).min(1 + r.below(5000) as usize);
            // Runs of zeros and ones among random bytes, as bitmaps have.
            let fill = r.below(3);
            let chunk: Vec<u8> = (0..n)
                .map(|_| match fill {
                    0 => r.next() as u8,
                    1 => 0,
                    _ => 0xff,
                })
                .collect();
            p.same(&[
                b"SETRANGE".as_slice(),
                format!("v{i}").as_bytes(),
                at.to_string().as_bytes(),
                &chunk,
            ]);
            at += n;
        }
    }
    let names: Vec<String> = (0..lengths.len()).map(|i| format!("v{i}")).collect();
    for round in 0..60 {
        let op = ["AND", "OR", "XOR", "NOT"][round % 4];
        let n = if op == "NOT" { 1 } else { 1 + r.below(4) as usize };
        let mut args = vec!["BITOP".to_string(), op.into(), "dest".into()];
        for _ in 0..n {
            args.push(names[r.below(names.len() as u64) as usize].clone());
        }
        p.same(&args);
        p.same(&["GET", "dest"]);
    }
    for round in 0..600 {
        let key = &names[r.below(names.len() as u64) as usize];
        let span = |r: &mut Rand| (r.below(1_200_000) as i64 - 600_000) / (1 + r.below(100) as i64);
        let (start, end) = (span(&mut r).to_string(), span(&mut r).to_string());
        let unit = ["BIT", "BYTE"][round % 2];
        let bit = (round / 2 % 2).to_string();
        let (start, end, bit) = (start.as_str(), end.as_str(), bit.as_str());
        p.same(&["BITCOUNT", key.as_str(), start, end, unit]);
        p.same(&["BITPOS", key.as_str(), bit, start, end, unit]);
        p.same(&["BITPOS", key.as_str(), bit, start]);
    }
}

/// A server with a command connection and a subscriber to every keyspace event.
struct Watched {
    _server: Server,
    cmd: Client,
    sub: Client,
}

const SENTINEL: &str = "__keyspace@0__:~end~";

impl Watched {
    fn new(server: Server) -> Watched {
        let mut cmd = Client::connect(server.port);
        let mut sub = Client::connect(server.port);
        assert_eq!(cmd.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEAnm"]), Val::ok());
        sub.cmd(&["PSUBSCRIBE", "__key*@*__:*"]);
        Watched { _server: server, cmd, sub }
    }

    /// The reply to `line` and the events it raised, up to a sentinel message.
    fn run(&mut self, line: &str) -> (Vec<u8>, Vec<Val>) {
        self.cmd.send(&words(line));
        let reply = self.cmd.read_raw();
        self.cmd.cmd(&["PUBLISH", SENTINEL, "x"]);
        let mut events = Vec::new();
        loop {
            let m = self.sub.read();
            if m.as_array().get(2).is_some_and(|c| c.as_str() == SENTINEL) {
                return (reply, events);
            }
            events.push(m);
        }
    }
}

/// Every write raises Valkey's events (`setbit` for SETBIT and BITFIELD, `set` or `del` for
/// BITOP's destination, `new` for a created key, even by a BITFIELD whose writes all
/// failed), once per command, and none when nothing changed; reads raise none but the
/// `keymiss` of a missing key, where Valkey raises it.
#[test]
fn keyspace_events_are_valkeys() {
    let mut ours = Watched::new(start(&[]));
    let mut theirs = Watched::new(start_valkey(&[]));
    for line in [
        "SETBIT k 3 1",
        "SETBIT k 3 1",
        "SETBIT k 3 0",
        "SETBIT k 300 0",
        "GETBIT k 1",
        "GETBIT nokey 1",
        "BITCOUNT nokey",
        "BITPOS nokey 1",
        "BITFIELD k SET u8 0 0",
        "BITFIELD k SET u8 0 7 INCRBY u8 0 1 GET u8 0",
        "BITFIELD k INCRBY u8 8 0",
        "BITFIELD k INCRBY u8 8000 0",
        "BITFIELD k OVERFLOW FAIL INCRBY u2 90000 9",
        "BITFIELD new OVERFLOW FAIL INCRBY u2 0 9",
        "BITFIELD k GET u8 0",
        "BITFIELD nokey GET u8 0",
        "BITFIELD_RO nokey GET u8 0",
        "BITOP NOT d k",
        "BITOP AND d k nokey",
        "BITOP AND d nokey",
        "BITOP AND d nokey",
        "SETBIT k x 1",
    ] {
        let (a, b) = (ours.run(line), theirs.run(line));
        assert_eq!(a, b, "{line}: reply and events (left: ferrokey, right: valkey 9.1)");
    }
}

/// The AOF holds what Valkey's holds: each write as sent, nothing for a command that
/// changed nothing (a SETBIT of the same bit; a BITFIELD whose writes all failed, although
/// Valkey grew the key; only GETs).
#[test]
fn the_aof_logs_what_valkeys_logs() {
    let args = ["--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "no"];
    let (ours, theirs) = (start(&args), start_valkey(&args));
    for server in [&ours, &theirs] {
        let mut c = Client::connect(server.port);
        for line in [
            "SETBIT k 1 1",
            "SETBIT k 1 1",
            "SETBIT k 9 0",
            "BITFIELD k OVERFLOW FAIL SET u2 100 5",
            "BITFIELD k2 OVERFLOW FAIL SET u2 100 5",
            "BITFIELD k GET u8 0",
            "BITFIELD k INCRBY u8 0 1 SET u8 8 0 GET u8 0",
            "BITFIELD_RO k GET u8 0",
            "BITOP NOT d k",
            "BITOP AND d nokey",
            "BITOP AND d nokey",
            "SETBIT k x 1",
        ] {
            c.cmd_b(&words(line));
        }
    }
    let incr = |s: &Server| {
        let path = s.dir.join("appendonlydir").join("appendonly.aof.1.incr.aof");
        String::from_utf8_lossy(&std::fs::read(&path).expect("the incr AOF")).into_owned()
    };
    assert_eq!(incr(&ours), incr(&theirs), "left: ferrokey's AOF, right: valkey 9.1's");
}
