//! Valkey's listpack: a sequence of strings and integers packed into one allocation, byte for
//! byte the format Valkey keeps in memory and writes into RDB files (small hashes, sets,
//! sorted sets and list nodes). This module owns the format and the navigation and editing
//! of a listpack; it knows nothing of keys, commands or size limits (callers check
//! `list-max-listpack-size` and friends, with [`entry_size_for`], before inserting).
//!
//! # Layout
//!
//! ```text
//!  byte 0         4        6                                                     total-1
//!       +---------+--------+--------------+--------------+-----+--------------+------+
//!       |  total  | count  |   entry 0    |   entry 1    | ... |  entry n-1   | 0xFF |
//!       | u32 LE  | u16 LE |              |              |     |              |      |
//!       +---------+--------+--------------+--------------+-----+--------------+------+
//!
//!  one entry:
//!       +----------------------------+------------+---------------------+
//!       | encoding (1, 2 or 5 bytes) |    data    | backlen (1..5 bytes) |
//!       +----------------------------+------------+---------------------+
//!       |<------- encoded length L (what the backlen says) -->|
//! ```
//!
//! `count` is the number of entries, or 65535 when there may be 65535 or more (then it is
//! found by walking). This implementation keeps it exact whenever it is below 65535.
//!
//! The first byte of an entry says what it is:
//!
//! ```text
//!   0xxxxxxx                      integer 0..=127 in the byte itself
//!   10xxxxxx  data[x]             string, x < 64 bytes
//!   110xxxxx yyyyyyyy             integer, 13-bit two's complement x:y (-4096..=4095)
//!   1110xxxx yyyyyyyy data[x:y]   string, x:y < 4096 bytes
//!   11110000  u32 LE  data        string of any length
//!   11110001  i16 LE              integers: 16, 24, 32 and 64 bits
//!   11110010  i24 LE
//!   11110011  i32 LE
//!   11110100  i64 LE
//!   11111111                      the terminator; never the start of an entry
//! ```
//!
//! An element is stored as an integer exactly when its bytes are the canonical decimal form
//! of an `i64` (so it can be given back byte for byte), in the narrowest width that holds it.
//!
//! The backlen makes the list walkable right to left: it is `L` written 7 bits a byte, most
//! significant group first, and every byte but the first has bit 7 set. A reader standing at
//! the start of an entry steps back one byte and reads groups leftwards, least significant
//! first, until a byte without bit 7; `L` plus the backlen's own size is the previous
//! entry's size. E.g. `L` = 300 = 2*128 + 44 is written `02 AC`.
//!
//! # Memory
//!
//! A [`Listpack`] is one thin pointer (8 bytes) to exactly `total` bytes; there is no
//! capacity. Every edit reallocates to the new exact size (as Valkey does: jemalloc resizes in
//! place within a size class, so most edits cost a `memmove` of the tail and no copy), and
//! [`Listpack::alloc_bytes`] is the size class the allocator really charges.
//!
//! # Positions
//!
//! A [`Pos`] is an entry's byte offset. Any edit invalidates every `Pos` except the one the
//! edit returns. A stale `Pos` can give a wrong entry or a panic, never undefined behaviour:
//! all reads go through bounds-checked slices.

mod encoding;
pub(crate) mod raw;
#[cfg(test)]
mod tests;
mod validate;

use std::fmt;

use encoding::{backlen_bytes, decode, decode_backlen, Encoded, COUNT_UNKNOWN, EOF, HEADER_BYTES};
pub use encoding::{entry_size_for, parse_canonical_int, LpEntry, INT_DECIMAL_BYTES_MAX};
use raw::ThinBuf;
pub use validate::ListpackError;

/// The byte offset of an entry in a listpack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos(u32);

impl Pos {
    /// The byte offset from the start of the listpack.
    pub fn offset(self) -> usize {
        self.0 as usize
    }
}

/// A listpack (see the module documentation).
pub struct Listpack {
    buf: ThinBuf,
}

const _: () = assert!(std::mem::size_of::<Listpack>() == 8);
const _: () = assert!(std::mem::size_of::<Option<Listpack>>() == 8);
// Send + Sync come from `ThinBuf` (see the SAFETY comments there); pinned here.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Listpack>();
};

/// The bytes of an empty listpack: total 7, count 0, terminator.
const EMPTY: [u8; HEADER_BYTES + 1] = [7, 0, 0, 0, 0, 0, EOF];

fn pos(at: usize) -> Pos {
    Pos(u32::try_from(at).expect("listpack offsets fit u32"))
}

/// The size of the whole entry at `at` (encoding + data + backlen). Panics if there is none.
fn entry_len(b: &[u8], at: usize) -> usize {
    let (_, encoded) = decode(b, at).expect("listpack position does not hold an entry");
    encoded + backlen_bytes(encoded)
}

/// The start of the entry that ends (with its backlen) at `end`.
fn entry_before(b: &[u8], end: usize) -> usize {
    let (encoded, _) = decode_backlen(b, end).expect("listpack backlen is corrupt");
    end - encoded - backlen_bytes(encoded)
}

impl Listpack {
    pub fn new() -> Listpack {
        Listpack { buf: ThinBuf::from_slice(&EMPTY) }
    }

    /// A listpack holding a copy of `b`, after checking every byte of it. A count of 65535
    /// ("unknown") on fewer entries is replaced by the real count; nothing else changes.
    pub fn from_bytes(b: &[u8]) -> Result<Listpack, ListpackError> {
        let count = validate::validate(b)?;
        let mut lp = Listpack { buf: ThinBuf::from_slice(b) };
        lp.set_count(count);
        Ok(lp)
    }

    /// The listpack's bytes, as they go into an RDB file.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: every listpack is at least HEADER_BYTES + 1 bytes long.
        let header = unsafe { self.buf.as_slice(HEADER_BYTES) };
        let total = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        // SAFETY: the header's total is kept equal to the allocation's length.
        unsafe { self.buf.as_slice(total as usize) }
    }

    pub fn total_bytes(&self) -> usize {
        self.as_bytes().len()
    }

    /// The bytes the allocator charges for this listpack (its size class).
    pub fn alloc_bytes(&self) -> usize {
        crate::memory::size_class(self.total_bytes())
    }

    fn header_count(&self) -> u16 {
        let b = self.as_bytes();
        u16::from_le_bytes([b[4], b[5]])
    }

    /// The number of entries; walks them only when there are 65535 or more.
    pub fn len(&self) -> usize {
        match self.header_count() {
            COUNT_UNKNOWN => self.walk_count(),
            n => usize::from(n),
        }
    }

    fn walk_count(&self) -> usize {
        let b = self.as_bytes();
        let mut at = HEADER_BYTES;
        let mut count = 0;
        while b[at] != EOF {
            at += entry_len(b, at);
            count += 1;
        }
        count
    }

    pub fn is_empty(&self) -> bool {
        self.as_bytes()[HEADER_BYTES] == EOF
    }

    pub fn first(&self) -> Option<Pos> {
        (!self.is_empty()).then(|| pos(HEADER_BYTES))
    }

    pub fn last(&self) -> Option<Pos> {
        let b = self.as_bytes();
        (!self.is_empty()).then(|| pos(entry_before(b, b.len() - 1)))
    }

    pub fn next(&self, p: Pos) -> Option<Pos> {
        let b = self.as_bytes();
        let at = p.offset() + entry_len(b, p.offset());
        (b[at] != EOF).then(|| pos(at))
    }

    pub fn prev(&self, p: Pos) -> Option<Pos> {
        (p.offset() > HEADER_BYTES).then(|| pos(entry_before(self.as_bytes(), p.offset())))
    }

    /// The entry at `p`.
    pub fn get(&self, p: Pos) -> LpEntry<'_> {
        decode(self.as_bytes(), p.offset()).expect("listpack position does not hold an entry").0
    }

    /// The whole size of the entry at `p` (encoding + data + backlen).
    pub fn entry_bytes(&self, p: Pos) -> usize {
        entry_len(self.as_bytes(), p.offset())
    }

    /// The entry at `index` (negative counts from the end, -1 is the last), walking from the
    /// nearer end when the count is known.
    pub fn seek(&self, index: i64) -> Option<Pos> {
        let forward = |mut p: Pos, steps: u64| {
            for _ in 0..steps {
                p = self.next(p)?;
            }
            Some(p)
        };
        let backward = |mut p: Pos, steps: u64| {
            for _ in 0..steps {
                p = self.prev(p)?;
            }
            Some(p)
        };
        match self.header_count() {
            COUNT_UNKNOWN if index >= 0 => forward(self.first()?, index.unsigned_abs()),
            COUNT_UNKNOWN => backward(self.last()?, index.unsigned_abs() - 1),
            n => {
                let n = i64::from(n);
                let index = if index < 0 { index.checked_add(n)? } else { index };
                if !(0..n).contains(&index) {
                    return None;
                }
                if index <= (n - 1) / 2 {
                    forward(self.first()?, index as u64)
                } else {
                    backward(self.last()?, (n - 1 - index) as u64)
                }
            }
        }
    }

    pub fn push_back(&mut self, v: &[u8]) {
        let end = self.total_bytes() - 1;
        self.insert_at(end, &Encoded::bytes(v));
    }

    pub fn push_front(&mut self, v: &[u8]) {
        self.insert_at(HEADER_BYTES, &Encoded::bytes(v));
    }

    pub fn push_back_int(&mut self, v: i64) {
        let end = self.total_bytes() - 1;
        self.insert_at(end, &Encoded::int(v));
    }

    pub fn push_front_int(&mut self, v: i64) {
        self.insert_at(HEADER_BYTES, &Encoded::int(v));
    }

    /// Insert `v` before the entry at `p`; returns the new entry's position (which is `p`).
    pub fn insert_before(&mut self, p: Pos, v: &[u8]) -> Pos {
        self.insert_at(p.offset(), &Encoded::bytes(v))
    }

    /// Insert `v` after the entry at `p`; returns the new entry's position.
    pub fn insert_after(&mut self, p: Pos, v: &[u8]) -> Pos {
        let at = p.offset() + self.entry_bytes(p);
        self.insert_at(at, &Encoded::bytes(v))
    }

    /// Replace the entry at `p` by `v`; returns its position (which is `p`).
    pub fn replace(&mut self, p: Pos, v: &[u8]) -> Pos {
        let old = self.entry_bytes(p);
        self.splice(p.offset(), old, &Encoded::bytes(v).parts(), 1, 1);
        p
    }

    /// Delete the entry at `p`; returns the position of the entry that followed it (now at
    /// the same offset), or `None` if it was the last.
    pub fn delete(&mut self, p: Pos) -> Option<Pos> {
        let old = self.entry_bytes(p);
        self.splice(p.offset(), old, &[], 0, 1);
        (self.as_bytes()[p.offset()] != EOF).then_some(p)
    }

    /// Delete up to `count` entries starting at `index` (negative counts from the end).
    pub fn delete_range(&mut self, index: i64, count: usize) {
        if count == 0 {
            return;
        }
        let Some(start) = self.seek(index) else { return };
        let b = self.as_bytes();
        let mut end = start.offset();
        let mut deleted = 0;
        while deleted < count && b[end] != EOF {
            end += entry_len(b, end);
            deleted += 1;
        }
        self.splice(start.offset(), end - start.offset(), &[], 0, deleted);
    }

    /// The first entry from `from` on that equals `v`, comparing one entry and then skipping
    /// `skip` (hash fields and values alternate: `skip` = 1 compares fields only). Integer
    /// entries are compared numerically with `v` parsed once, so nothing is allocated.
    pub fn find(&self, from: Pos, v: &[u8], skip: usize) -> Option<Pos> {
        let needle_int = parse_canonical_int(v);
        let b = self.as_bytes();
        let mut at = from.offset();
        loop {
            if b[at] == EOF {
                return None;
            }
            let (entry, encoded) = decode(b, at).expect("listpack position does not hold an entry");
            let hit = match entry {
                LpEntry::Int(i) => needle_int == Some(i),
                LpEntry::Str(s) => s == v,
            };
            if hit {
                return Some(pos(at));
            }
            at += encoded + backlen_bytes(encoded);
            for _ in 0..skip {
                if b[at] == EOF {
                    return None;
                }
                at += entry_len(b, at);
            }
        }
    }

    pub fn iter(&self) -> Iter<'_> {
        let bytes = self.as_bytes();
        Iter { bytes, front: HEADER_BYTES, back_end: bytes.len() - 1, remaining: self.len() }
    }

    fn insert_at(&mut self, at: usize, entry: &Encoded<'_>) -> Pos {
        self.splice(at, 0, &entry.parts(), 1, 0);
        pos(at)
    }

    /// Replace `remove_bytes` bytes at `at` by `parts` (whole entries: `added` of them, in
    /// place of `removed`), then bring the header up to date.
    fn splice(
        &mut self,
        at: usize,
        remove_bytes: usize,
        parts: &[&[u8]],
        added: usize,
        removed: usize,
    ) {
        let old_count = self.header_count();
        let len = self.total_bytes();
        let insert: usize = parts.iter().map(|p| p.len()).sum();
        let new_len = len - remove_bytes + insert;
        let new_total = u32::try_from(new_len).expect("listpack grew past u32::MAX bytes");
        // SAFETY: `len` is the header's total, which is the allocation's length.
        unsafe { self.buf.splice(len, at, remove_bytes, parts) };
        // SAFETY: the buffer is now `new_len` bytes long.
        let b = unsafe { self.buf.as_mut_slice(new_len) };
        b[..4].copy_from_slice(&new_total.to_le_bytes());
        let count = if old_count != COUNT_UNKNOWN {
            usize::from(old_count) + added - removed
        } else if removed > added {
            self.walk_count()
        } else {
            usize::from(COUNT_UNKNOWN)
        };
        self.set_count(count);
    }

    /// Write `count` into the header, or 65535 if it does not fit below that.
    fn set_count(&mut self, count: usize) {
        let field = u16::try_from(count).unwrap_or(COUNT_UNKNOWN);
        let len = self.total_bytes();
        // SAFETY: `len` is the header's total, which is the allocation's length.
        let b = unsafe { self.buf.as_mut_slice(len) };
        b[4..6].copy_from_slice(&field.to_le_bytes());
    }
}

impl Default for Listpack {
    fn default() -> Listpack {
        Listpack::new()
    }
}

impl Clone for Listpack {
    fn clone(&self) -> Listpack {
        Listpack { buf: ThinBuf::from_slice(self.as_bytes()) }
    }
}

impl Drop for Listpack {
    fn drop(&mut self) {
        let len = self.total_bytes();
        // SAFETY: `len` is the allocation's length, and `self` is never used again.
        unsafe { self.buf.free(len) };
    }
}

/// Byte equality: the same entries in different encodings (possible only in loaded data)
/// compare unequal.
impl PartialEq for Listpack {
    fn eq(&self, other: &Listpack) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Listpack {}

impl fmt::Debug for Listpack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Shown<'a>(LpEntry<'a>);
        impl fmt::Debug for Shown<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.0 {
                    LpEntry::Int(v) => write!(f, "{v}"),
                    LpEntry::Str(s) => write!(f, "\"{}\"", s.escape_ascii()),
                }
            }
        }
        f.debug_list().entries(self.iter().map(Shown)).finish()
    }
}

/// The entries of a listpack, from either end.
pub struct Iter<'a> {
    bytes: &'a [u8],
    /// Where the next entry from the front starts.
    front: usize,
    /// Where the next entry from the back ends (its backlen's last byte + 1).
    back_end: usize,
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = LpEntry<'a>;

    fn next(&mut self) -> Option<LpEntry<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let (entry, encoded) = decode(self.bytes, self.front).expect("listpack entry is corrupt");
        self.front += encoded + backlen_bytes(encoded);
        Some(entry)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        self.back_end = entry_before(self.bytes, self.back_end);
        let (entry, _) = decode(self.bytes, self.back_end).expect("listpack entry is corrupt");
        Some(entry)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl std::iter::FusedIterator for Iter<'_> {}
