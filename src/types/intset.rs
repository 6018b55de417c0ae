//! Valkey's intset: a sorted set of integers packed into one allocation, byte for byte the
//! format Valkey keeps in memory and writes into RDB files for small all-integer sets. This
//! module owns the format, lookup and editing; it knows nothing of keys, commands or
//! `set-max-intset-entries` (the caller converts to another encoding past that).
//!
//! # Layout
//!
//! ```text
//!  byte 0          4          8            8+w          8+2w
//!       +----------+----------+------------+------------+-----+----------------+
//!       | encoding |  length  | element 0  | element 1  | ... | element len-1  |
//!       |  u32 LE  |  u32 LE  | w bytes LE | w bytes LE |     |                |
//!       +----------+----------+------------+------------+-----+----------------+
//!   encoding = w = 2, 4 or 8: the width of every element (i16, i32 or i64)
//!   elements: two's complement little endian, strictly ascending
//! ```
//!
//! All elements share the width, so element `i` is at `8 + i * w` and lookup is a binary
//! search. Inserting a value that needs a wider encoding upgrades the whole set: every
//! element is rewritten at the new width, and the new value, being outside the old range,
//! goes first (negative) or last (positive). KeyEvent never narrows the encoding (Valkey does
//! not either, and an RDB file must hold the bytes Valkey would).
//!
//! Like the listpack, an [`Intset`] is a thin pointer (8 bytes) to exactly the bytes above;
//! every edit reallocates to the new exact size.

use std::fmt;

use crate::types::listpack::raw::ThinBuf;

const HEADER_BYTES: usize = 8;

/// Why bytes are not a valid intset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntsetError {
    /// Shorter than the header.
    Truncated,
    /// The encoding is not 2, 4 or 8.
    BadEncoding,
    /// The length field does not match the bytes.
    LengthMismatch,
    /// Two neighbouring elements are out of order or equal.
    NotSorted,
}

impl fmt::Display for IntsetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IntsetError::Truncated => "intset shorter than its header",
            IntsetError::BadEncoding => "intset encoding is not 2, 4 or 8",
            IntsetError::LengthMismatch => "intset length does not match its size",
            IntsetError::NotSorted => "intset elements not strictly ascending",
        })
    }
}

impl std::error::Error for IntsetError {}

/// The narrowest element width that holds `v`.
fn width_for(v: i64) -> usize {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

/// Element `i` of `width` bytes in `b` (the whole intset).
fn read(b: &[u8], width: usize, i: usize) -> i64 {
    let at = HEADER_BYTES + i * width;
    let le = &b[at..at + width];
    match width {
        2 => i64::from(i16::from_le_bytes([le[0], le[1]])),
        4 => i64::from(i32::from_le_bytes([le[0], le[1], le[2], le[3]])),
        _ => i64::from_le_bytes(le.try_into().expect("8-byte element")),
    }
}

/// A sorted set of integers (see the module documentation).
pub struct Intset {
    buf: ThinBuf,
}

const _: () = assert!(std::mem::size_of::<Intset>() == 8);
// Send + Sync come from `ThinBuf` (see the SAFETY comments there); pinned here.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Intset>();
};

impl Intset {
    /// An empty set with the narrowest encoding (2 bytes), as Valkey creates it.
    pub fn new() -> Intset {
        let mut header = [0u8; HEADER_BYTES];
        header[..4].copy_from_slice(&2u32.to_le_bytes());
        Intset { buf: ThinBuf::from_slice(&header) }
    }

    /// An intset holding a copy of `b`, after checking the header, the size and the order.
    /// An empty set is accepted here; Valkey refuses one in an RDB file, so the loader must.
    pub fn from_bytes(b: &[u8]) -> Result<Intset, IntsetError> {
        let header = b.get(..HEADER_BYTES).ok_or(IntsetError::Truncated)?;
        let width = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        if !matches!(width, 2 | 4 | 8) {
            return Err(IntsetError::BadEncoding);
        }
        if len.checked_mul(width).and_then(|n| n.checked_add(HEADER_BYTES)) != Some(b.len()) {
            return Err(IntsetError::LengthMismatch);
        }
        for i in 1..len {
            if read(b, width, i - 1) >= read(b, width, i) {
                return Err(IntsetError::NotSorted);
            }
        }
        Ok(Intset { buf: ThinBuf::from_slice(b) })
    }

    fn header(&self) -> (usize, usize) {
        // SAFETY: every intset is at least HEADER_BYTES long.
        let h = unsafe { self.buf.as_slice(HEADER_BYTES) };
        let width = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let len = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as usize;
        (width, len)
    }

    /// The intset's bytes, as they go into an RDB file.
    pub fn as_bytes(&self) -> &[u8] {
        let (width, len) = self.header();
        // SAFETY: the header always describes the allocation: 8 + len * width bytes.
        unsafe { self.buf.as_slice(HEADER_BYTES + len * width) }
    }

    pub fn len(&self) -> usize {
        self.header().1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The width of every element: 2, 4 or 8 bytes.
    pub fn encoding_bytes(&self) -> usize {
        self.header().0
    }

    /// The bytes the allocator charges for this intset (its size class).
    pub fn alloc_bytes(&self) -> usize {
        crate::memory::size_class(self.as_bytes().len())
    }

    /// Element `i` in ascending order. Panics if `i >= len()`.
    pub fn get(&self, i: usize) -> i64 {
        let (width, len) = self.header();
        assert!(i < len, "intset index {i} out of range for length {len}");
        read(self.as_bytes(), width, i)
    }

    pub fn min(&self) -> Option<i64> {
        (!self.is_empty()).then(|| self.get(0))
    }

    pub fn max(&self) -> Option<i64> {
        self.len().checked_sub(1).map(|i| self.get(i))
    }

    /// `Ok(index)` of `v`, or `Err(index)` where it would be inserted.
    pub fn search(&self, v: i64) -> Result<usize, usize> {
        let (width, len) = self.header();
        if width_for(v) > width {
            // Outside the range of every element.
            return Err(if v < 0 { 0 } else { len });
        }
        let b = self.as_bytes();
        let (mut lo, mut hi) = (0, len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match read(b, width, mid).cmp(&v) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    pub fn contains(&self, v: i64) -> bool {
        self.search(v).is_ok()
    }

    /// Add `v`; false if it was already there.
    pub fn insert(&mut self, v: i64) -> bool {
        let (width, len) = self.header();
        if width_for(v) > width {
            self.upgrade_and_insert(v);
            return true;
        }
        let Err(i) = self.search(v) else { return false };
        let total = HEADER_BYTES + len * width;
        let bytes = v.to_le_bytes();
        // SAFETY: `total` is the allocation's length, from the header.
        unsafe { self.buf.splice(total, HEADER_BYTES + i * width, 0, &[&bytes[..width]]) };
        self.set_header(width, len + 1);
        true
    }

    /// Rewrite every element at the width `v` needs, with `v` first or last.
    fn upgrade_and_insert(&mut self, v: i64) {
        let (_, len) = self.header();
        let width = width_for(v);
        let mut out = Vec::with_capacity(HEADER_BYTES + (len + 1) * width);
        out.extend_from_slice(&(width as u32).to_le_bytes());
        out.extend_from_slice(&Self::len_field(len + 1).to_le_bytes());
        let mut push = |x: i64| out.extend_from_slice(&x.to_le_bytes()[..width]);
        if v < 0 {
            push(v);
        }
        self.iter().for_each(&mut push);
        if v >= 0 {
            push(v);
        }
        let total = self.as_bytes().len();
        // SAFETY: `total` is the allocation's length, from the header.
        unsafe { self.buf.splice(total, 0, total, &[&out]) };
    }

    /// Remove `v`; false if it was not there. The encoding stays as it is.
    pub fn remove(&mut self, v: i64) -> bool {
        let Ok(i) = self.search(v) else { return false };
        let (width, len) = self.header();
        let total = HEADER_BYTES + len * width;
        // SAFETY: `total` is the allocation's length, from the header.
        unsafe { self.buf.splice(total, HEADER_BYTES + i * width, width, &[]) };
        self.set_header(width, len - 1);
        true
    }

    fn len_field(len: usize) -> u32 {
        u32::try_from(len).expect("intset longer than u32::MAX elements")
    }

    fn set_header(&mut self, width: usize, len: usize) {
        let len_field = Self::len_field(len);
        // SAFETY: the buffer holds at least the header.
        let h = unsafe { self.buf.as_mut_slice(HEADER_BYTES) };
        h[..4].copy_from_slice(&(width as u32).to_le_bytes());
        h[4..].copy_from_slice(&len_field.to_le_bytes());
    }

    /// The elements in ascending order (reversible).
    pub fn iter(&self) -> IntsetIter<'_> {
        let (width, len) = self.header();
        IntsetIter { bytes: self.as_bytes(), width, front: 0, back: len }
    }
}

impl Default for Intset {
    fn default() -> Intset {
        Intset::new()
    }
}

impl Clone for Intset {
    fn clone(&self) -> Intset {
        Intset { buf: ThinBuf::from_slice(self.as_bytes()) }
    }
}

impl Drop for Intset {
    fn drop(&mut self) {
        let total = self.as_bytes().len();
        // SAFETY: `total` is the allocation's length, and `self` is never used again.
        unsafe { self.buf.free(total) };
    }
}

/// Byte equality (so the same elements at different encodings compare unequal).
impl PartialEq for Intset {
    fn eq(&self, other: &Intset) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Intset {}

impl fmt::Debug for Intset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Intset(w{}) ", self.encoding_bytes())?;
        f.debug_set().entries(self.iter()).finish()
    }
}

/// The elements of an intset, from either end.
pub struct IntsetIter<'a> {
    bytes: &'a [u8],
    width: usize,
    /// Next index from the front.
    front: usize,
    /// One past the next index from the back.
    back: usize,
}

impl Iterator for IntsetIter<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        Some(read(self.bytes, self.width, self.front - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.back - self.front, Some(self.back - self.front))
    }
}

impl DoubleEndedIterator for IntsetIter<'_> {
    fn next_back(&mut self) -> Option<i64> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(read(self.bytes, self.width, self.back))
    }
}

impl ExactSizeIterator for IntsetIter<'_> {}

impl std::iter::FusedIterator for IntsetIter<'_> {}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::util::rng::Rng;

    #[test]
    fn golden_bytes_and_upgrades() {
        let mut s = Intset::new();
        assert_eq!(s.as_bytes(), &[2, 0, 0, 0, 0, 0, 0, 0]);
        assert!(s.insert(5));
        assert!(s.insert(-2));
        assert!(!s.insert(5));
        assert_eq!(s.as_bytes(), &[2, 0, 0, 0, 2, 0, 0, 0, 0xFE, 0xFF, 5, 0]);
        assert!(s.insert(70000)); // needs 4 bytes: appended after the upgrade
        assert_eq!(
            s.as_bytes(),
            &[4, 0, 0, 0, 3, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF, 5, 0, 0, 0, 0x70, 0x11, 1, 0]
        );
        assert!(s.insert(i64::MIN)); // needs 8 bytes: prepended after the upgrade
        assert_eq!(s.encoding_bytes(), 8);
        assert_eq!(s.iter().collect::<Vec<_>>(), [i64::MIN, -2, 5, 70000]);
        assert_eq!(&s.as_bytes()[..16], &[8, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80]);
        assert!(s.remove(i64::MIN) && s.remove(70000));
        assert!(!s.remove(12));
        assert_eq!(s.encoding_bytes(), 8, "removal never narrows");
        assert_eq!((s.min(), s.max(), s.len()), (Some(-2), Some(5), 2));
        assert_eq!(Intset::from_bytes(s.as_bytes()).unwrap(), s);
        assert_eq!(format!("{s:?}"), "Intset(w8) {-2, 5}");
    }

    #[test]
    fn upgrade_at_every_boundary() {
        for (v, width) in [(32767, 2), (-32768, 2), (32768, 4), (-32769, 4)] {
            let mut s = Intset::new();
            s.insert(1);
            s.insert(v);
            assert_eq!(s.encoding_bytes(), width, "{v}");
        }
        for (v, width) in [(2147483647, 4), (-2147483648, 4), (2147483648, 8), (-2147483649, 8)] {
            let mut s = Intset::new();
            s.insert(40000);
            s.insert(v);
            assert_eq!(s.encoding_bytes(), width, "{v}");
            assert!(s.contains(v) && s.contains(40000) && !s.contains(0));
        }
    }

    #[test]
    fn random_operations_match_btreeset() {
        let mut rng = Rng::new(0x1D5E_7A11_0000_0001);
        for round in 0..40 {
            let mut s = Intset::new();
            let mut model = BTreeSet::new();
            // Later rounds reach for wider values, so upgrades happen at different sizes.
            let span: u64 = [100, 70_000, 5_000_000_000, u64::MAX][round % 4];
            for _ in 0..400 {
                let raw = rng.next_u64();
                let v = if span == u64::MAX {
                    raw as i64
                } else {
                    (raw % span) as i64 - (span / 2) as i64
                };
                if rng.next_u64().is_multiple_of(3) {
                    assert_eq!(s.remove(v), model.remove(&v));
                } else {
                    assert_eq!(s.insert(v), model.insert(v));
                }
                assert_eq!(s.len(), model.len());
                assert!(s.iter().eq(model.iter().copied()));
                assert!(s.iter().rev().eq(model.iter().rev().copied()));
                assert_eq!((s.min(), s.max()), (model.first().copied(), model.last().copied()));
                assert!(s.contains(v) == model.contains(&v));
                let needed = model.iter().map(|&x| width_for(x)).max().unwrap_or(2);
                assert!(s.encoding_bytes() >= needed);
                assert_eq!(s.as_bytes().len(), HEADER_BYTES + s.len() * s.encoding_bytes());
                assert_eq!(Intset::from_bytes(s.as_bytes()).as_ref(), Ok(&s));
                assert_eq!(s.clone(), s);
            }
        }
    }

    #[test]
    fn garbage_is_rejected_without_panics() {
        let mut rng = Rng::new(0xFEED_F00D);
        let mut valid = Intset::new();
        for v in [-5, 0, 7, 1000, 70000] {
            valid.insert(v);
        }
        for _ in 0..20_000 {
            let mut b: Vec<u8> = match rng.next_u64() % 2 {
                0 => (0..rng.next_u64() % 40).map(|_| rng.next_u64() as u8).collect(),
                _ => valid.as_bytes()[..(rng.next_u64() as usize % 29)].to_vec(),
            };
            if !b.is_empty() && rng.next_u64().is_multiple_of(2) {
                let i = rng.next_u64() as usize % b.len();
                b[i] ^= 1 << (rng.next_u64() % 8);
            }
            if let Ok(s) = Intset::from_bytes(&b) {
                assert_eq!(s.as_bytes(), &b[..]);
                assert!(s.iter().zip(s.iter().skip(1)).all(|(a, b)| a < b));
            }
        }
        assert_eq!(Intset::from_bytes(&[2, 0, 0]), Err(IntsetError::Truncated));
        assert_eq!(Intset::from_bytes(&[3, 0, 0, 0, 0, 0, 0, 0]), Err(IntsetError::BadEncoding));
        assert_eq!(Intset::from_bytes(&[2, 0, 0, 0, 1, 0, 0, 0]), Err(IntsetError::LengthMismatch));
        assert_eq!(
            Intset::from_bytes(&[2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 1, 0]),
            Err(IntsetError::NotSorted)
        );
        assert_eq!(
            Intset::from_bytes(&[4, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]),
            Err(IntsetError::LengthMismatch)
        );
    }
}
