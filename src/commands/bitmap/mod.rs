//! Bitmap commands on string values (issue 19): SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
//! BITFIELD and BITFIELD_RO, replying as Valkey 9.1 does, errors included.
//!
//! A bitmap is an ordinary string (bit 0 is the top bit of the first byte; see
//! `types::bitmap`); an integer-encoded string is addressed as its decimal text, as Valkey
//! does. Handlers parse their arguments into typed values (offsets, [`Field`] types,
//! [`Overflow`] modes, [`BitOp`]s) before they look a key up, in Valkey's order, so a refused
//! command touches nothing. The bit algorithms live in `types::bitmap`; writes go through the
//! keyspace's in-place string edits (`StrEdit`), so SETBIT and BITFIELD cost what they change
//! and grow a value once, with greedy room, never byte by byte.
//!
//! This module owns the command table entries, the argument rules the commands share (bit
//! offsets, C-string words) and the family's error texts; it must not reach past `Ctx`.
//!
//! # Layout
//! - `mod.rs`: the table, shared argument parsing, errors, and value helpers.
//! - `bit.rs`: SETBIT and GETBIT.
//! - `count.rs`: BITCOUNT and BITPOS (their shared `start end [BYTE|BIT]` range).
//! - `op.rs`: BITOP.
//! - `field.rs`: BITFIELD and BITFIELD_RO.
//!
//! [`Field`]: crate::types::bitmap::Field
//! [`Overflow`]: crate::types::bitmap::Overflow
//! [`BitOp`]: crate::types::bitmap::BitOp

mod bit;
mod count;
mod field;
mod op;

use crate::commands::table::ks::{ACCESS, OW, RO, RW, UPDATE, VARIABLE_FLAGS};
use crate::commands::table::{acl, flag, range, specs, Command, Data, KeySpec};
use crate::commands::{CmdError, Ctx};
use crate::keyspace::db::{Db, ValueRef};
use crate::keyspace::entry::{NewValue, INLINE_VALUE_MAX};
use crate::keyspace::heap_str::HeapStr;
use crate::types::string::{parse_i64, StrRef};

/// SETBIT: read-modify-write of one key.
const SETBIT_KEYS: &[KeySpec] = &[range(RW | ACCESS | UPDATE, 1, 0, 1)];
/// BITOP: the destination, overwritten, then the sources, read.
const BITOP_KEYS: &[KeySpec] = &[range(OW | UPDATE, 2, 0, 1), range(RO | ACCESS, 3, -1, 1)];
/// BITFIELD: read, written, or both, depending on the operations.
const BITFIELD_KEYS: &[KeySpec] = &[range(RW | ACCESS | UPDATE | VARIABLE_FLAGS, 1, 0, 1)];
const BITFIELD_NOTES: &[&str] = &["This command allows both access and modification of the key"];

const READ_FAST: (u64, u64) = (flag::READONLY | flag::FAST, acl::READ | acl::BITMAP | acl::FAST);
const READ_SLOW: (u64, u64) = (flag::READONLY, acl::READ | acl::BITMAP | acl::SLOW);
const WRITE_SLOW: (u64, u64) = (flag::WRITE | flag::DENYOOM, acl::WRITE | acl::BITMAP | acl::SLOW);

const FIELD_COMPLEXITY: &str = "O(1) for each subcommand specified";

pub static COMMANDS: &[Command] = &[
    Command::new("setbit", 4, WRITE_SLOW.0, WRITE_SLOW.1, Data(bit::setbit))
        .keys(SETBIT_KEYS)
        .doc("bitmap", "2.2.0", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", "O(1)"),
    Command::new("getbit", 3, READ_FAST.0, READ_FAST.1, Data(bit::getbit))
        .keys(specs::READ1)
        .doc("bitmap", "2.2.0", "Returns a bit value by offset.", "O(1)"),
    Command::new("bitcount", -2, READ_SLOW.0, READ_SLOW.1, Data(count::bitcount))
        .history(&[
            ("7.0.0", "Added the `BYTE|BIT` option."),
            ("8.0.0", "`end` made optional; when called without argument the command reports the last BYTE."),
        ])
        .keys(specs::READ1)
        .doc("bitmap", "2.6.0", "Counts the number of set bits (population counting) in a string.", "O(N)"),
    Command::new("bitpos", -3, READ_SLOW.0, READ_SLOW.1, Data(count::bitpos))
        .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .keys(specs::READ1)
        .doc("bitmap", "2.8.7", "Finds the first set (1) or clear (0) bit in a string.", "O(N)"),
    Command::new("bitop", -4, WRITE_SLOW.0, WRITE_SLOW.1, Data(op::bitop))
        .keys(BITOP_KEYS)
        .doc("bitmap", "2.6.0", "Performs bitwise operations on multiple strings, and stores the result.", "O(N)"),
    Command::new("bitfield", -2, WRITE_SLOW.0, WRITE_SLOW.1, Data(field::bitfield))
        .keys(BITFIELD_KEYS)
        .key_notes(BITFIELD_NOTES)
        .doc("bitmap", "3.2.0", "Performs arbitrary bitfield integer operations on strings.", FIELD_COMPLEXITY),
    Command::new("bitfield_ro", -2, READ_FAST.0, READ_FAST.1, Data(field::bitfield_ro))
        .keys(specs::READ1)
        .doc("bitmap", "6.0.0", "Performs arbitrary read-only bitfield integer operations on strings.", FIELD_COMPLEXITY),
];

/// The family's own error replies, in Valkey's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BitError {
    /// A bit offset that is no integer, is negative, or lies past `proto-max-bulk-len` bytes.
    Offset,
    /// SETBIT's value is not 0 or 1.
    SetbitValue,
    /// BITPOS's bit is an integer other than 0 or 1.
    BitposBit,
    /// BITFIELD's type is not `i1`..`i64` or `u1`..`u63`.
    FieldType,
    /// BITFIELD's OVERFLOW is not WRAP, SAT or FAIL.
    OverflowType,
    /// BITFIELD_RO given SET or INCRBY.
    ReadOnlyWrite,
    /// BITOP NOT given more or fewer than one source.
    NotOneSource,
}

impl BitError {
    fn text(self) -> &'static str {
        match self {
            BitError::Offset => "ERR bit offset is not an integer or out of range",
            BitError::SetbitValue => "ERR bit is not an integer or out of range",
            BitError::BitposBit => "ERR The bit argument must be 1 or 0.",
            BitError::FieldType => {
                "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
            }
            BitError::OverflowType => "ERR Invalid OVERFLOW type specified",
            BitError::ReadOnlyWrite => "ERR BITFIELD_RO only supports the GET subcommand",
            BitError::NotOneSource => "ERR BITOP NOT must be called with a single source key.",
        }
    }
}

impl From<BitError> for CmdError {
    fn from(e: BitError) -> CmdError {
        CmdError::Other(e.text().to_string())
    }
}

/// A bit offset argument: a non-negative integer whose byte lies below `proto-max-bulk-len`
/// (not checked for what our primary or the AOF sends, as Valkey trusts them). With `width`
/// (BITFIELD), `#n` means field number `n`: bit `n * width`, the product wrapping as
/// Valkey's C arithmetic does before the range check.
fn bit_offset(ctx: &Ctx, arg: &[u8], width: Option<u32>) -> Result<u64, BitError> {
    let (digits, scale) = match (arg.first(), width) {
        (Some(b'#'), Some(w)) => (&arg[1..], w as i64),
        _ => (arg, 1),
    };
    let offset = parse_i64(digits).ok_or(BitError::Offset)?.wrapping_mul(scale);
    let limit_bytes = ctx.config.proto_max_bulk_len;
    if offset < 0 || (!ctx.obeyed && (offset >> 3) as u64 >= limit_bytes) {
        return Err(BitError::Offset);
    }
    Ok(offset as u64)
}

/// An option word as Valkey compares it: a C string, so a NUL ends it.
fn c_str(arg: &[u8]) -> &[u8] {
    arg.iter().position(|&b| b == 0).map_or(arg, |end| &arg[..end])
}

/// Whether `arg` (as a C string) is `word`, ignoring ASCII case.
fn is_word(arg: &[u8], word: &str) -> bool {
    c_str(arg).eq_ignore_ascii_case(word.as_bytes())
}

/// The string at `key`, looked up for reading (a hit or miss is counted): None when it does
/// not exist, WRONGTYPE when it holds another type.
fn read_string<'d>(
    db: &'d mut Db,
    key: &[u8],
    now_ms: i64,
) -> Result<Option<StrRef<'d>>, CmdError> {
    match db.get(key, now_ms) {
        None => Ok(None),
        Some(ValueRef::Str(s)) => Ok(Some(s)),
        Some(ValueRef::Agg(_)) => Err(CmdError::WrongType),
    }
}

/// Create `key` (missing) as `len` zero bytes with `bytes` written over them (`(offset,
/// byte)`, offsets below `len`): allocated once at its size, as Valkey's `sdsnewlen` (an
/// edit that grows it later gets greedy room). Reported `raw`, as Valkey's new object.
fn create_zeroed(db: &mut Db, key: &[u8], len: usize, bytes: &[(usize, u8)], now_ms: i64) {
    if len <= INLINE_VALUE_MAX {
        let mut value = vec![0u8; len];
        for &(offset, b) in bytes {
            value[offset] = b;
        }
        db.set_str_edited(key, NewValue::Str(&value), now_ms);
    } else {
        let mut value = HeapStr::from_range(len - 1, &[0]);
        for &(offset, b) in bytes {
            value.set_range(offset, &[b]);
        }
        db.set_str_edited(key, NewValue::Heap(value), now_ms);
    }
}
