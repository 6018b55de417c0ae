//! A differential fixture from Valkey 9.1.2 (test only): a seeded sequence of XADD, XDEL
//! and XTRIM run on `valkey-server` with `stream-node-max-bytes 120` and
//! `stream-node-max-entries 4`, the reply to each, and the nodes and metadata of the DUMP
//! taken at the end (with `rdbcompression no`, so the listpacks are verbatim). Trims carry
//! their effective LIMIT (an approximate trim without one: 100 x 4 = 400).
//!
//! Regenerating it needs a running Valkey; the script is not kept, the data is the record.

use super::{StreamId, TrimStrategy};

/// One command and Valkey's reply.
pub enum Op {
    /// XADD s <ms>-<seq> field value ...
    Add(u64, u64, &'static [&'static [u8]]),
    /// XDEL s <ms>-<seq>, and whether it deleted.
    Del(u64, u64, bool),
    /// XTRIM s (MAXLEN|MINID) (~|=) .. [LIMIT n]: strategy, approx, effective limit, reply.
    Trim(TrimStrategy, bool, u64, u64),
}

/// The node limits the commands ran with.
pub const MAX_BYTES: usize = 120;
pub const MAX_ENTRIES: usize = 4;

/// The commands, in order.
pub const OPS: &[Op] = &[
    Op::Add(201, 1, &[b"42", b"hello"]),
    Op::Add(201, 3, &[b"temp", b"x"]),
    Op::Add(203, 1, &[b"bb", b"100"]),
    Op::Add(203, 4, &[b"bb", b"x"]),
    Op::Add(203, 7, &[b"-7", b"9223372036854775807", b"temp", b"0"]),
    Op::Add(203, 9, &[b"bb", b"long value here!", b"42", b"hello", b"temp", b"hello"]),
    Op::Add(5203, 1, &[b"-7", b"hello", b"a", b"9223372036854775807"]),
    Op::Add(105203, 3, &[b"bb", b"-5000"]),
    Op::Add(205203, 2, &[b"42", b"long value here!"]),
    Op::Add(205204, 1, &[b"a", b"hello", b"42", b"-5000", b"bb", b"-5000"]),
    Op::Add(205404, 1, &[b"bb", b"100"]),
    Op::Trim(TrimStrategy::MinId(StreamId::new(5203, 1)), true, 400, 6),
    Op::Add(
        205404,
        4,
        &[b"a", b"long value here!", b"42", b"9223372036854775807", b"temp", b"long value here!"],
    ),
    Op::Add(210404, 3, &[b"bb", b"long value here!", b"-7", b"hello"]),
    Op::Trim(TrimStrategy::MaxLen(0), false, 0, 7),
    Op::Del(201, 3, false),
    Op::Trim(TrimStrategy::MinId(StreamId::new(205203, 2)), false, 0, 0),
    Op::Add(210404, 4, &[b"bb", b"100"]),
    Op::Add(210404, 6, &[b"bb", b"100"]),
    Op::Del(5203, 1, false),
    Op::Del(210404, 4, true),
    Op::Add(210405, 2, &[b"a", b"x", b"temp", b"hello"]),
    Op::Add(210405, 5, &[b"a", b"100", b"-7", b"long value here!", b"bb", b"long value here!"]),
    Op::Add(210405, 8, &[b"bb", b"-5000"]),
    Op::Trim(TrimStrategy::MaxLen(11), false, 0, 0),
    Op::Add(210405, 11, &[b"bb", b"9223372036854775807"]),
    Op::Del(210404, 3, false),
    Op::Del(210404, 6, true),
    Op::Del(210405, 5, true),
    Op::Del(5203, 1, false),
    Op::Del(5203, 1, false),
    Op::Add(210405, 13, &[b"bb", b"hello"]),
    Op::Add(210405, 16, &[b"bb", b"0"]),
    Op::Del(205203, 2, false),
    Op::Add(210405, 19, &[b"bb", b"-5000"]),
    Op::Del(210405, 13, true),
    Op::Add(210405, 22, &[b"-7", b"long value here!", b"a", b"0", b"temp", b"100"]),
    Op::Del(210405, 13, false),
    Op::Add(310405, 1, &[b"bb", b"long value here!"]),
    Op::Add(310405, 4, &[b"bb", b"hello"]),
    Op::Add(315405, 3, &[b"bb", b"0"]),
    Op::Add(315405, 4, &[b"temp", b"100", b"-7", b"hello"]),
    Op::Add(315406, 1, &[b"bb", b"100"]),
    Op::Add(315406, 2, &[b"bb", b"x"]),
    Op::Add(315406, 4, &[b"bb", b"100"]),
    Op::Trim(TrimStrategy::MaxLen(12), true, 400, 1),
    Op::Trim(TrimStrategy::MaxLen(10), true, 400, 0),
    Op::Del(203, 9, false),
    Op::Add(315606, 2, &[b"temp", b"hello", b"-7", b"-5000", b"bb", b"100"]),
    Op::Add(315606, 5, &[b"bb", b"long value here!"]),
    Op::Add(315606, 7, &[b"42", b"-5000", b"bb", b"0"]),
    Op::Trim(TrimStrategy::MinId(StreamId::new(315606, 5)), false, 0, 13),
    Op::Add(315606, 8, &[b"42", b"long value here!", b"bb", b"long value here!"]),
    Op::Del(315405, 3, false),
    Op::Add(315806, 0, &[b"a", b"0", b"42", b"0"]),
    Op::Trim(TrimStrategy::MaxLen(8), false, 0, 0),
    Op::Add(320806, 2, &[b"42", b"0", b"bb", b"long value here!"]),
    Op::Del(203, 9, false),
    Op::Add(420806, 3, &[b"42", b"9223372036854775807", b"temp", b"100"]),
    Op::Add(420808, 2, &[b"42", b"long value here!", b"bb", b"hello"]),
    Op::Add(420808, 5, &[b"42", b"long value here!", b"bb", b"100"]),
    Op::Trim(TrimStrategy::MaxLen(4), false, 0, 4),
    Op::Add(425808, 1, &[b"42", b"100", b"bb", b"long value here!"]),
    Op::Del(201, 3, false),
    Op::Trim(TrimStrategy::MinId(StreamId::new(320806, 2)), false, 0, 0),
    Op::Del(205404, 1, false),
    Op::Add(425809, 0, &[b"42", b"9223372036854775807", b"bb", b"x"]),
    Op::Add(525809, 1, &[b"42", b"0", b"bb", b"9223372036854775807"]),
    Op::Trim(TrimStrategy::MinId(StreamId::new(210404, 4)), true, 400, 0),
    Op::Add(530809, 3, &[b"42", b"9223372036854775807", b"bb", b"100"]),
];
/// The nodes at the end: key (ms, seq) and listpack bytes in hex.
pub const NODES: &[(u64, u64, &str)] = &[
    (315606, 8, "750000001b000101020102012a01826262030001030100010001906c6f6e672076616c756520686572652111906c6f6e672076616c75652068657265211105010101c0c802dff802020181610200012a01000108010201f1501403dffa020001906c6f6e672076616c7565206865726521110501ff"),
    (420806, 3, "790000001e000301000102012a018474656d70050001020100010001f4ffffffffffffff7f096401050100010201dfff0202012a01906c6f6e672076616c756520686572652111826262038568656c6c6f06080100010201020102012a01906c6f6e672076616c7565206865726521118262620364010801ff"),
    (425808, 1, "5e00000018000301000102012a018262620300010201000100016401906c6f6e672076616c756520686572652111050102010101dfff02f4ffffffffffffff7f0981780205010201f2a186010400010001f4ffffffffffffff7f090501ff"),
    (530809, 3, "290000000c000101000102012a01826262030001020100010001f4ffffffffffffff7f0964010501ff"),
];
/// The metadata at the end: length, last id (ms, seq), first id, max deleted id, entries
/// added.
pub const META: [u64; 8] = [8, 530809, 3, 320806, 2, 210405, 13, 43];
