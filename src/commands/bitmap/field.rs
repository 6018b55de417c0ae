//! BITFIELD and BITFIELD_RO: integers of 1 to 64 bits at any bit offset of a string, read
//! (GET), written (SET, replying the old value) or incremented (INCRBY, replying the new
//! one), with the overflow rule OVERFLOW sets for the operations after it (WRAP by default).
//!
//! Every operation is parsed, in Valkey's order, before the key is looked up. A command with
//! only GETs reads the key (a missing key reads as zeros). One with a write looks the key up
//! once, for writing: the operations run in order over the current bytes with a small
//! overlay of the bytes already written (a later GET sees an earlier SET), and the result is
//! one in-place edit of the value (`StrEdit::Patch`): grown once, zero filled, to reach the
//! farthest bit any write names, even when every write fails with OVERFLOW FAIL (Valkey
//! creates or grows the key first; that alone is not counted as a change). Each operation
//! that wrote counts as a change (one `setbit` event for the command, the dirty counter
//! moved by the count) when it changed the field or the string grew.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::{bit_offset, c_str, create_zeroed, is_word, read_string, BitError};
use crate::commands::args::int_arg;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::StrEdit;
use crate::types::bitmap::{Field, Overflow, WINDOW_BYTES};
use crate::types::string::parse_i64;

/// What one operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Get,
    Set(i64),
    IncrBy(i64),
}

/// The operation words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Get,
    Set,
    IncrBy,
}

/// One parsed operation.
#[derive(Clone, Copy, Debug)]
struct FieldOp {
    field: Field,
    /// Bit offset of the field's first (most significant) bit.
    offset: u64,
    action: Action,
    overflow: Overflow,
}

impl FieldOp {
    /// The last bit the operation covers.
    fn last_bit(&self) -> u64 {
        self.offset + self.field.bits() as u64 - 1
    }
}

/// `i<bits>` or `u<bits>` (a C string: a NUL ends it, as Valkey reads it).
fn parse_type(arg: &[u8]) -> Result<Field, BitError> {
    let text = c_str(arg);
    let signed = match text.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(BitError::FieldType),
    };
    parse_i64(&text[1..])
        .and_then(|bits| u32::try_from(bits).ok())
        .and_then(|bits| Field::new(signed, bits))
        .ok_or(BitError::FieldType)
}

fn parse_overflow(arg: &[u8]) -> Result<Overflow, BitError> {
    [("wrap", Overflow::Wrap), ("sat", Overflow::Sat), ("fail", Overflow::Fail)]
        .into_iter()
        .find(|(word, _)| is_word(arg, word))
        .map(|(_, o)| o)
        .ok_or(BitError::OverflowType)
}

/// The operations of `argv[2..]`, as Valkey parses them: a word with too few arguments
/// after it is a syntax error; then the type, the offset and (SET, INCRBY) the value.
fn parse_ops(ctx: &Ctx, argv: &[Bytes]) -> Result<Vec<FieldOp>, CmdError> {
    let mut ops = Vec::with_capacity((argv.len() - 2) / 3);
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < argv.len() {
        let left = argv.len() - j - 1;
        let word = &argv[j];
        let kind = if is_word(word, "get") && left >= 2 {
            Kind::Get
        } else if is_word(word, "set") && left >= 3 {
            Kind::Set
        } else if is_word(word, "incrby") && left >= 3 {
            Kind::IncrBy
        } else if is_word(word, "overflow") && left >= 1 {
            overflow = parse_overflow(&argv[j + 1])?;
            j += 2;
            continue;
        } else {
            return Err(CmdError::Syntax);
        };
        let field = parse_type(&argv[j + 1])?;
        let offset = bit_offset(ctx, &argv[j + 2], Some(field.bits()))?;
        let action = match kind {
            Kind::Get => Action::Get,
            Kind::Set => Action::Set(int_arg(&argv[j + 3])?),
            Kind::IncrBy => Action::IncrBy(int_arg(&argv[j + 3])?),
        };
        ops.push(FieldOp { field, offset, action, overflow });
        j += if kind == Kind::Get { 3 } else { 4 };
    }
    Ok(ops)
}

pub(super) fn bitfield(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let ops = parse_ops(ctx, argv)?;
    if ops.iter().all(|op| op.action == Action::Get) {
        return read_only(ctx, &argv[1], &ops);
    }
    write(ctx, &argv[1], &ops)
}

pub(super) fn bitfield_ro(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let ops = parse_ops(ctx, argv)?;
    if ops.iter().any(|op| op.action != Action::Get) {
        return Err(BitError::ReadOnlyWrite.into());
    }
    read_only(ctx, &argv[1], &ops)
}

/// Only GETs: the key is read (a missing one reads as zeros).
fn read_only(ctx: &mut Ctx, key: &[u8], ops: &[FieldOp]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let mut scratch = [0u8; 20];
    let bytes = match read_string(db, key, ctx.now_ms)? {
        None => &[][..],
        Some(s) => s.bytes(&mut scratch),
    };
    ctx.out.array(ops.len());
    for op in ops {
        ctx.out.int(op.field.get(bytes, op.offset));
    }
    Ok(())
}

/// At least one SET or INCRBY: one lookup for writing, one edit.
fn write(ctx: &mut Ctx, key: &[u8], ops: &[FieldOp]) -> CmdResult {
    let last_bit = ops.iter().filter(|op| op.action != Action::Get).map(FieldOp::last_bit).max();
    let len = usize::try_from(last_bit.expect("a write") / 8 + 1).expect("fits in memory");
    let now_ms = ctx.now_ms;
    let db = ctx.db();
    let edited = db.update_str(key, now_ms, |s| {
        let mut scratch = [0u8; 20];
        let bytes = s.bytes(&mut scratch);
        let mut data = Overlay::new(bytes);
        let outcome = run(ops, &mut data, len > bytes.len());
        Ok::<_, CmdError>((StrEdit::Patch { len, bytes: data.into_writes() }, outcome))
    })?;
    let (replies, changes) = edited.unwrap_or_else(|| {
        let mut data = Overlay::new(&[]);
        let outcome = run(ops, &mut data, true);
        create_zeroed(db, key, len, &data.into_writes(), now_ms);
        outcome
    });
    if changes > 0 {
        ctx.changed(key, changes, KeyspaceEvents::STRING, "setbit");
    }
    ctx.out.array(replies.len());
    for r in replies {
        match r {
            Some(v) => ctx.out.int(v),
            None => ctx.out.null(),
        }
    }
    Ok(())
}

/// A string's bytes with the bytes written so far laid over them; zeros past the end.
struct Overlay<'a> {
    base: &'a [u8],
    written: BTreeMap<usize, u8>,
}

impl<'a> Overlay<'a> {
    fn new(base: &'a [u8]) -> Overlay<'a> {
        Overlay { base, written: BTreeMap::new() }
    }

    fn byte(&self, i: usize) -> u8 {
        match self.written.get(&i) {
            Some(&b) => b,
            None => self.base.get(i).copied().unwrap_or(0),
        }
    }

    /// The field window starting at byte `start`.
    fn window(&self, start: usize) -> [u8; WINDOW_BYTES] {
        std::array::from_fn(|i| self.byte(start + i))
    }

    /// Keep the first `n` bytes of `window` as written at `start`.
    fn store(&mut self, start: usize, window: &[u8; WINDOW_BYTES], n: usize) {
        for (i, &b) in window[..n].iter().enumerate() {
            self.written.insert(start + i, b);
        }
    }

    /// The bytes written, by offset.
    fn into_writes(self) -> Vec<(usize, u8)> {
        self.written.into_iter().collect()
    }
}

/// Run `ops` in order over `data`: the reply of each (None: an overflow under FAIL, nothing
/// written) and the number of changes (`grew`: the string was created or lengthened, which
/// makes every write a change, as in Valkey).
fn run(ops: &[FieldOp], data: &mut Overlay<'_>, grew: bool) -> (Vec<Option<i64>>, u64) {
    let mut replies = Vec::with_capacity(ops.len());
    let mut changes = 0;
    for op in ops {
        let start = usize::try_from(op.offset / 8).expect("fits in memory");
        let shift = (op.offset % 8) as u32;
        let mut window = data.window(start);
        let old = op.field.read(&window, shift);
        let (stored, reply) = match op.action {
            Action::Get => {
                replies.push(Some(old));
                continue;
            }
            Action::Set(value) => (op.field.set_value(value, op.overflow), old),
            Action::IncrBy(incr) => {
                let new = op.field.incr_value(old, incr, op.overflow);
                (new, new.unwrap_or(old))
            }
        };
        let Some(new) = stored else {
            replies.push(None);
            continue;
        };
        op.field.write(&mut window, shift, new);
        data.store(start, &window, op.field.span_bytes(op.offset));
        replies.push(Some(reply));
        if grew || old != new {
            changes += 1;
        }
    }
    (replies, changes)
}
