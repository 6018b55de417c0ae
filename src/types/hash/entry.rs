//! One field of a large (`hashtable`-encoded) hash: the field and its value in ONE heap
//! allocation behind a thin pointer, the element type of the keyspace's `Table` when it
//! holds a hash. This file owns the byte layout and every `unsafe` block of it; it knows
//! nothing of listpacks, limits or commands.
//!
//! # Layout
//!
//! ```text
//!  byte 0                                                                   size-1
//!     +---------------+---------------+-------------+-----------------+---------------+
//!     |   field_tag   |   value_tag   | [expire_at] |   field bytes   |  value bytes  |
//!     |  varint 1..6  |  varint 1..10 |  0 or 8     | field_len bytes |               |
//!     +---------------+---------------+-------------+-----------------+---------------+
//!
//!  varint:     LEB128, 7 bits a byte, least significant group first; bit 7 set on every
//!              byte but the last (lengths below 64 take one byte)
//!  field_tag:  field_len << 1 | volatile
//!  expire_at:  only when `volatile`: the field's expire time, unix ms, i64 little endian
//!  value_tag:  len << 1 | 0   a string: `len` bytes follow the field
//!              n   << 1 | 1   an integer: `n` (1..=8) bytes, little endian two's complement,
//!                             sign-extended to 64 bits when read
//! ```
//!
//! A value is stored as an integer exactly when its bytes are the canonical decimal form of
//! an `i64` (the listpack's rule, [`parse_canonical_int`]), so formatting it gives the bytes
//! back, and in the fewest bytes that hold it: `"12345"` takes 2 bytes instead of 5, a
//! 13-digit id 6 instead of 13.
//!
//! # The byte budget
//!
//! There is no header word, no capacity, no pointer to the value: the field tag takes one
//! byte for a field shorter than 64 bytes, the value tag one byte for a string shorter than 64 bytes and for every
//! integer. A 10-byte field with a 10-byte value is 1 + 1 + 10 + 10 = 22 bytes, the 24-byte
//! size class; with an integer value below 2^15 it is 14 bytes, the 16-byte class. Valkey 7's
//! dict spends a 24-byte entry pointing to an sds field and a separate sds value (3-byte
//! header and a NUL each): 24 + 16 + 16 = 56 bytes in three allocations for the same pair.
//! The table slot (8 bytes) and the bucket overhead come on top of both, see
//! `table`.
//!
//! A field with a TTL (hash field expiration) pays 8 more bytes for its expire time, and
//! only such a field: a field without one has no room for it, and giving it one (or taking
//! it away) rebuilds the entry ([`HashEntry::with_expire`]); changing the time of a field
//! that has one writes the 8 bytes in place ([`HashEntry::set_expire_in_place`]).
//!
//! The allocation has alignment 1: every multi-byte quantity is read byte by byte, so any
//! address is fine and no padding is ever added.

use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;

use crate::table;
use crate::types::listpack::{parse_canonical_int, LpEntry};

/// Longest varint: a u64 in 7-bit groups.
const VARINT_BYTES_MAX: usize = 10;

/// Bytes of the varint encoding of `v`.
#[cfg(test)]
fn varint_len(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// Writes the varint of `v` at the start of `out`; returns its length.
fn write_varint(mut v: u64, out: &mut [u8]) -> usize {
    let mut i = 0;
    loop {
        let group = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out[i] = group;
            return i + 1;
        }
        out[i] = group | 0x80;
        i += 1;
    }
}

/// Reads a varint at the start of `b`: (value, bytes read).
fn read_varint(b: &[u8]) -> (u64, usize) {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(VARINT_BYTES_MAX) {
        v |= u64::from(byte & 0x7F) << (7 * i);
        if byte & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    panic!("hash entry varint is corrupt");
}

/// Fewest little-endian bytes whose sign extension gives `v` back.
fn int_bytes(v: i64) -> usize {
    (1..8).find(|&n| sign_extend(&v.to_le_bytes()[..n]) == v).unwrap_or(8)
}

fn sign_extend(le: &[u8]) -> i64 {
    let mut bytes = [0u8; 8];
    bytes[..le.len()].copy_from_slice(le);
    let unused_bits = 64 - 8 * le.len() as u32;
    (i64::from_le_bytes(bytes) << unused_bits) >> unused_bits
}

/// How a value is written: its tag and the bytes after the field.
enum ValueBytes<'a> {
    Str(&'a [u8]),
    Int { le: [u8; 8], n: usize },
}

impl<'a> ValueBytes<'a> {
    fn of(value: &'a [u8]) -> ValueBytes<'a> {
        match parse_canonical_int(value) {
            Some(v) => ValueBytes::int(v),
            None => ValueBytes::Str(value),
        }
    }

    fn int(v: i64) -> ValueBytes<'static> {
        ValueBytes::Int { le: v.to_le_bytes(), n: int_bytes(v) }
    }

    fn tag(&self) -> u64 {
        match self {
            ValueBytes::Str(s) => (s.len() as u64) << 1,
            ValueBytes::Int { n, .. } => ((*n as u64) << 1) | 1,
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            ValueBytes::Str(s) => s,
            ValueBytes::Int { le, n } => &le[..*n],
        }
    }
}

/// Where the parts of an entry are, decoded from its two varints.
#[derive(Clone, Copy)]
struct Shape {
    /// Where the 8 expire bytes are, for a volatile field.
    expire_at: Option<usize>,
    field_at: usize,
    field_len: usize,
    value_len: usize,
    value_is_int: bool,
}

impl Shape {
    fn value_at(self) -> usize {
        self.field_at + self.field_len
    }

    fn size(self) -> usize {
        self.value_at() + self.value_len
    }
}

fn layout(size: usize) -> Layout {
    Layout::from_size_align(size, 1).expect("hash entry size fits a layout")
}

/// A field and its value in one allocation (see the module documentation). Owns the
/// allocation; the table drops it.
pub struct HashEntry {
    ptr: NonNull<u8>,
}

// SAFETY: a HashEntry uniquely owns its allocation; `&HashEntry` only reads it.
unsafe impl Send for HashEntry {}
// SAFETY: shared access only reads.
unsafe impl Sync for HashEntry {}

const _: () = assert!(std::mem::size_of::<HashEntry>() == 8);

impl HashEntry {
    /// An entry for `field` with `value` (stored as an integer when it is a canonical one).
    pub fn new(field: &[u8], value: &[u8]) -> HashEntry {
        HashEntry::build(field, &ValueBytes::of(value), None)
    }

    /// An entry for `field` with the integer `value`.
    pub fn new_int(field: &[u8], value: i64) -> HashEntry {
        HashEntry::build(field, &ValueBytes::int(value), None)
    }

    /// An entry for `field` with `value` and the expire time `expire_at` (unix ms), if any.
    pub fn new_expiring(field: &[u8], value: &[u8], expire_at: Option<i64>) -> HashEntry {
        HashEntry::build(field, &ValueBytes::of(value), expire_at)
    }

    /// This entry with the expire time `expire_at` (None: without one), as a new entry; the
    /// caller replaces this one with it.
    pub fn with_expire(&self, expire_at: Option<i64>) -> HashEntry {
        let value = match self.value() {
            LpEntry::Int(n) => ValueBytes::int(n),
            LpEntry::Str(s) => ValueBytes::Str(s),
        };
        HashEntry::build(self.field(), &value, expire_at)
    }

    /// The field's expire time (unix ms), for a volatile field.
    #[inline]
    pub fn expire_at(&self) -> Option<i64> {
        let at = self.shape().expire_at?;
        let mut le = [0u8; 8];
        le.copy_from_slice(&self.bytes()[at..at + 8]);
        Some(i64::from_le_bytes(le))
    }

    /// Sets the expire time of a field that already has one, in place; false (and nothing
    /// changed) when the field has none.
    pub fn set_expire_in_place(&mut self, expire_at: i64) -> bool {
        let Some(at) = self.shape().expire_at else { return false };
        let le = expire_at.to_le_bytes();
        // SAFETY: the 8 expire bytes lie inside the allocation (the shape says where), which
        // this entry owns uniquely (`&mut self`).
        unsafe { std::ptr::copy_nonoverlapping(le.as_ptr(), self.ptr.as_ptr().add(at), 8) };
        true
    }

    fn build(field: &[u8], value: &ValueBytes<'_>, expire_at: Option<i64>) -> HashEntry {
        let mut head = [0u8; 2 * VARINT_BYTES_MAX + 8];
        let field_tag = (field.len() as u64) << 1 | u64::from(expire_at.is_some());
        let mut head_len = write_varint(field_tag, &mut head);
        head_len += write_varint(value.tag(), &mut head[head_len..]);
        if let Some(at) = expire_at {
            head[head_len..head_len + 8].copy_from_slice(&at.to_le_bytes());
            head_len += 8;
        }
        let value = value.bytes();
        let size = head_len + field.len() + value.len();
        let layout = layout(size);
        // SAFETY: the layout has a non-zero size (at least the two one-byte varints).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        // SAFETY: `ptr` is a fresh allocation of `size` bytes, which cannot overlap the
        // sources; the three copies fill it exactly, in order.
        unsafe {
            let p = ptr.as_ptr();
            std::ptr::copy_nonoverlapping(head.as_ptr(), p, head_len);
            std::ptr::copy_nonoverlapping(field.as_ptr(), p.add(head_len), field.len());
            std::ptr::copy_nonoverlapping(
                value.as_ptr(),
                p.add(head_len + field.len()),
                value.len(),
            );
        }
        let e = HashEntry { ptr };
        debug_assert_eq!(e.shape().size(), size);
        e
    }

    /// The two varints at the start of the allocation.
    fn shape(&self) -> Shape {
        // The varints come first and together take at most 2 * VARINT_BYTES_MAX bytes; read
        // them without knowing the size yet, one byte at a time, through `byte`.
        let byte = |i: usize| {
            // SAFETY: `read_head` below only asks for bytes up to and including the last byte
            // of the second varint, which every entry has (the encoder wrote them).
            unsafe { *self.ptr.as_ptr().add(i) }
        };
        let (field_tag, a) = read_head(byte, 0);
        let (tag, b) = read_head(byte, a);
        let volatile = field_tag & 1 == 1;
        Shape {
            expire_at: volatile.then_some(a + b),
            field_at: a + b + if volatile { 8 } else { 0 },
            field_len: (field_tag >> 1) as usize,
            value_len: (tag >> 1) as usize,
            value_is_int: tag & 1 == 1,
        }
    }

    /// The whole allocation.
    fn bytes(&self) -> &[u8] {
        let size = self.shape().size();
        // SAFETY: the allocation is `size` bytes long, all written by `build`, and lives as
        // long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), size) }
    }

    /// The field bytes.
    #[inline]
    pub fn field(&self) -> &[u8] {
        let s = self.shape();
        // SAFETY: the field lies at `field_at` for `field_len` bytes inside the allocation,
        // which lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(s.field_at), s.field_len) }
    }

    /// The value: an integer, or a string borrowed from the entry.
    pub fn value(&self) -> LpEntry<'_> {
        let s = self.shape();
        let b = &self.bytes()[s.value_at()..];
        if s.value_is_int {
            LpEntry::Int(sign_extend(b))
        } else {
            LpEntry::Str(b)
        }
    }

    /// Bytes the allocator charges for this entry.
    pub fn alloc_bytes(&self) -> usize {
        crate::memory::size_class(self.shape().size())
    }
}

/// Reads one varint through `byte` starting at index `at`: (value, bytes read).
fn read_head(byte: impl Fn(usize) -> u8, at: usize) -> (u64, usize) {
    let mut buf = [0u8; VARINT_BYTES_MAX];
    for (i, slot) in buf.iter_mut().enumerate() {
        *slot = byte(at + i);
        if *slot & 0x80 == 0 {
            return read_varint(&buf[..=i]);
        }
    }
    panic!("hash entry varint is corrupt");
}

impl Drop for HashEntry {
    fn drop(&mut self) {
        let size = self.shape().size();
        // SAFETY: the allocation was made in `build` with exactly this layout and is freed
        // only here.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout(size)) };
    }
}

impl Clone for HashEntry {
    fn clone(&self) -> HashEntry {
        let bytes = self.bytes();
        let layout = layout(bytes.len());
        // SAFETY: non-zero size, as for `build`.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        // SAFETY: a fresh allocation of exactly `bytes.len()` bytes, distinct from `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.as_ptr(), bytes.len()) };
        HashEntry { ptr }
    }
}

impl fmt::Debug for HashEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\" => {:?}", self.field().escape_ascii(), self.value())
    }
}

impl table::Entry for HashEntry {
    #[inline]
    fn key(&self) -> &[u8] {
        self.field()
    }

    fn prefetch_addr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for v in [0u64, 1, 127, 128, 300, 16383, 16384, u32::MAX as u64, u64::MAX] {
            let mut b = [0u8; VARINT_BYTES_MAX];
            let n = write_varint(v, &mut b);
            assert_eq!(n, varint_len(v), "{v}");
            assert_eq!(read_varint(&b[..n]), (v, n));
        }
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
    }

    #[test]
    fn integers_take_the_fewest_bytes() {
        assert_eq!(int_bytes(0), 1);
        assert_eq!(int_bytes(-128), 1);
        assert_eq!(int_bytes(128), 2);
        assert_eq!(int_bytes(12345), 2);
        assert_eq!(int_bytes(i64::MAX), 8);
        assert_eq!(int_bytes(i64::MIN), 8);
        assert_eq!(int_bytes(1 << 40), 6);
    }

    #[test]
    fn strings_and_integers_round_trip() {
        let long = vec![b'x'; 70_000];
        let cases: Vec<(&[u8], &[u8])> = vec![
            (b"", b""),
            (b"f", b"v"),
            (b"f\0\r\n", b"\0\r\nv"),
            (b"n", b"12345"),
            (b"n", b"-9223372036854775808"),
            (b"n", b"9223372036854775807"),
            (b"n", b"007"),
            (b"n", b"-0"),
            (b"n", b"9223372036854775808"),
            (&long, b"1"),
            (b"big", &long),
        ];
        for (field, value) in cases {
            let e = HashEntry::new(field, value);
            assert_eq!(e.field(), field);
            assert!(e.value().eq_bytes(value));
            assert_eq!(e.value().to_vec(), value);
            let c = e.clone();
            assert_eq!((c.field(), c.value()), (e.field(), e.value()));
        }
        assert_eq!(HashEntry::new(b"n", b"12345").value(), LpEntry::Int(12345));
        assert_eq!(HashEntry::new(b"n", b"007").value(), LpEntry::Str(b"007"));
        assert_eq!(HashEntry::new_int(b"n", -5).value(), LpEntry::Int(-5));
    }

    #[test]
    fn sizes_are_compact() {
        // 1 + 1 + 10 + 10.
        assert_eq!(HashEntry::new(b"field:0001", b"value:0001").shape().size(), 22);
        // 1 + 1 + 10 + 2: "12345" is a 2-byte integer.
        assert_eq!(HashEntry::new(b"field:0001", b"12345").shape().size(), 14);
        // Fields of 64 bytes and more take a second varint byte.
        assert_eq!(HashEntry::new(&[b'f'; 63], b"v").shape().size(), 1 + 1 + 63 + 1);
        assert_eq!(HashEntry::new(&[b'f'; 64], b"v").shape().size(), 2 + 1 + 64 + 1);
        // A volatile field pays 8 bytes for its expire time, and only it.
        let e = HashEntry::new_expiring(b"field:0001", b"value:0001", Some(1));
        assert_eq!(e.shape().size(), 30);
    }

    #[test]
    fn expire_times_round_trip_and_change() {
        for (field, value) in [(&b"f"[..], &b"v"[..]), (b"n", b"12345"), (&[b'x'; 200], b"")] {
            let plain = HashEntry::new(field, value);
            assert_eq!(plain.expire_at(), None);
            let mut e = plain.with_expire(Some(1_700_000_000_123));
            assert_eq!((e.field(), e.value()), (plain.field(), plain.value()));
            assert_eq!(e.expire_at(), Some(1_700_000_000_123));
            assert!(e.set_expire_in_place(-5));
            assert_eq!(e.expire_at(), Some(-5));
            assert_eq!(e.clone().expire_at(), Some(-5));
            let back = e.with_expire(None);
            assert_eq!(
                (back.field(), back.value(), back.expire_at()),
                (field, plain.value(), None)
            );
            assert_eq!(back.alloc_bytes(), plain.alloc_bytes());
        }
        let mut plain = HashEntry::new(b"f", b"v");
        assert!(!plain.set_expire_in_place(1), "no room for a time in a plain entry");
    }
}
