//! The byte encoding of one listpack entry: the encoding byte(s), the data, and the backlen
//! that follows it. This file owns the format facts (which integer takes which width, when a
//! string is stored as an integer, how the backlen is written) and nothing else: it never
//! touches a whole listpack's header, terminator or allocation.
//!
//! Every decoder here takes a plain `&[u8]` and an offset and returns `None` when the entry
//! does not fit or its first byte is not an encoding, so garbage can never make it read out of
//! bounds; the validator and the accessors share these same functions.

use crate::util::fmt::fmt_i64;
/// Longest decimal an `i64` can be written as ("-9223372036854775808").
pub use crate::util::fmt::INT_DECIMAL_BYTES_MAX;

/// The header: total bytes (u32 LE) and element count (u16 LE).
pub const HEADER_BYTES: usize = 6;
/// The byte after the last entry, and an invalid first byte for any entry.
pub const EOF: u8 = 0xFF;
/// The element-count value that means "too many to count here: walk the entries".
pub const COUNT_UNKNOWN: u16 = u16::MAX;

const ENC_13BIT_INT: u8 = 0xC0;
const ENC_6BIT_STR: u8 = 0x80;
const ENC_12BIT_STR: u8 = 0xE0;
const ENC_32BIT_STR: u8 = 0xF0;
const ENC_16BIT_INT: u8 = 0xF1;
const ENC_24BIT_INT: u8 = 0xF2;
const ENC_32BIT_INT: u8 = 0xF3;
const ENC_64BIT_INT: u8 = 0xF4;

/// What an entry holds: an integer, or a string borrowed from the listpack it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpEntry<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl<'a> LpEntry<'a> {
    /// Whether the entry is the element `b` (an integer equals its decimal form only).
    pub fn eq_bytes(&self, b: &[u8]) -> bool {
        match *self {
            LpEntry::Int(v) => parse_canonical_int(b) == Some(v),
            LpEntry::Str(s) => s == b,
        }
    }

    /// The element as bytes (integers in decimal).
    pub fn to_vec(&self) -> Vec<u8> {
        self.write_to(&mut [0u8; INT_DECIMAL_BYTES_MAX]).to_vec()
    }

    /// The integer, or a string whose bytes are the canonical decimal form of one.
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            LpEntry::Int(v) => Some(v),
            LpEntry::Str(s) => parse_canonical_int(s),
        }
    }

    /// The element as bytes without allocating: integers are written into `buf`, strings are
    /// returned as they sit in the listpack.
    pub fn write_to<'b>(&self, buf: &'b mut [u8; INT_DECIMAL_BYTES_MAX]) -> &'b [u8]
    where
        'a: 'b,
    {
        match *self {
            LpEntry::Int(v) => fmt_i64(buf, v),
            LpEntry::Str(s) => s,
        }
    }
}

/// Parse `s` as an integer exactly when Valkey's listpack would store it as one: the
/// canonical decimal form of an `i64` (optional '-', no '+', no leading zero, no "-0",
/// 1..=20 bytes, in range). Only then does formatting the result give `s` back.
pub fn parse_canonical_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > INT_DECIMAL_BYTES_MAX {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    // Accumulate the magnitude as u64 so that i64::MIN's magnitude fits.
    let mut magnitude: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if negative {
        if magnitude > i64::MIN.unsigned_abs() {
            return None;
        }
        Some(0i64.wrapping_sub_unsigned(magnitude))
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// The encoding bytes of an integer (the data is part of them), narrowest width first, as
/// Valkey chooses: 7-bit unsigned, 13-bit, then 16, 24, 32 and 64 bits.
pub fn encode_int(v: i64, out: &mut [u8; 9]) -> usize {
    // Two's complement little-endian bytes; each width below keeps the low bytes.
    let le = v.to_le_bytes();
    if (0..=127).contains(&v) {
        out[0] = v as u8;
        1
    } else if (-4096..=4095).contains(&v) {
        // 13 bits of two's complement: the high 5 in the first byte after 110.
        let bits = (v as u16) & 0x1FFF;
        out[0] = ENC_13BIT_INT | (bits >> 8) as u8;
        out[1] = bits as u8;
        2
    } else {
        let (tag, width) = if (-32768..=32767).contains(&v) {
            (ENC_16BIT_INT, 2)
        } else if (-8_388_608..=8_388_607).contains(&v) {
            (ENC_24BIT_INT, 3)
        } else if (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v) {
            (ENC_32BIT_INT, 4)
        } else {
            (ENC_64BIT_INT, 8)
        };
        out[0] = tag;
        out[1..=width].copy_from_slice(&le[..width]);
        1 + width
    }
}

/// The encoding bytes (before the data) of a string of `len` bytes.
pub fn encode_str_header(len: usize, out: &mut [u8; 9]) -> usize {
    if len < 64 {
        out[0] = ENC_6BIT_STR | len as u8;
        1
    } else if len < 4096 {
        out[0] = ENC_12BIT_STR | (len >> 8) as u8;
        out[1] = len as u8;
        2
    } else {
        let len = u32::try_from(len).expect("listpack string longer than u32::MAX bytes");
        out[0] = ENC_32BIT_STR;
        out[1..5].copy_from_slice(&len.to_le_bytes());
        5
    }
}

/// The bytes the backlen of an entry whose encoding + data take `len` bytes occupies. The
/// thresholds are Valkey's, including its `<` (16383 takes three bytes, not two).
pub fn backlen_bytes(len: usize) -> usize {
    if len <= 127 {
        1
    } else if len < 16383 {
        2
    } else if len < 2_097_151 {
        3
    } else if len < 268_435_455 {
        4
    } else {
        5
    }
}

/// Write the backlen of `len`: 7 bits a byte, the most significant group first (next to the
/// entry data, no continuation bit), every later byte with bit 7 set, so that a reader walking
/// right to left takes the least significant group first and stops at the byte without bit 7.
pub fn encode_backlen(len: usize, out: &mut [u8; 5]) -> usize {
    let n = backlen_bytes(len);
    for (i, byte) in out[..n].iter_mut().enumerate() {
        let shift = 7 * (n - 1 - i);
        let group = ((len >> shift) & 0x7F) as u8;
        *byte = if i == 0 { group } else { group | 0x80 };
    }
    n
}

/// Decode the backlen that ends just before `end` (right to left). Returns the value and
/// the bytes it took, or `None` if it runs past the start of `b` or past five bytes.
pub fn decode_backlen(b: &[u8], end: usize) -> Option<(usize, usize)> {
    let mut value = 0usize;
    for taken in 1..=5 {
        let byte = *b.get(end.checked_sub(taken)?)?;
        value |= usize::from(byte & 0x7F) << (7 * (taken - 1));
        if byte & 0x80 == 0 {
            return Some((value, taken));
        }
    }
    None
}

/// Decode the entry at `at`: what it holds and the bytes of encoding + data (without the
/// backlen). `None` if the first byte is not an entry encoding (0xFF included) or the data
/// runs past the end of `b`. The backlen is not looked at.
pub fn decode(b: &[u8], at: usize) -> Option<(LpEntry<'_>, usize)> {
    let first = *b.get(at)?;
    let byte = |i: usize| b.get(at + i).copied();
    let (value, len) = match first {
        0x00..=0x7F => (LpEntry::Int(i64::from(first)), 1),
        0x80..=0xBF => return string(b, at, 1, usize::from(first & 0x3F)),
        0xC0..=0xDF => {
            let bits = (u16::from(first & 0x1F) << 8) | u16::from(byte(1)?);
            // Sign-extend the 13 bits by parking them at the top of an i16.
            (LpEntry::Int(i64::from(((bits << 3) as i16) >> 3)), 2)
        }
        0xE0..=0xEF => {
            let len = (usize::from(first & 0x0F) << 8) | usize::from(byte(1)?);
            return string(b, at, 2, len);
        }
        ENC_32BIT_STR => {
            let len = u32::from_le_bytes(b.get(at + 1..at + 5)?.try_into().ok()?);
            return string(b, at, 5, usize::try_from(len).ok()?);
        }
        ENC_16BIT_INT => (LpEntry::Int(sign_extend(b.get(at + 1..at + 3)?)), 3),
        ENC_24BIT_INT => (LpEntry::Int(sign_extend(b.get(at + 1..at + 4)?)), 4),
        ENC_32BIT_INT => (LpEntry::Int(sign_extend(b.get(at + 1..at + 5)?)), 5),
        ENC_64BIT_INT => (LpEntry::Int(sign_extend(b.get(at + 1..at + 9)?)), 9),
        _ => return None,
    };
    Some((value, len))
}

/// A string entry whose `header` bytes say `len` data bytes follow.
fn string(b: &[u8], at: usize, header: usize, len: usize) -> Option<(LpEntry<'_>, usize)> {
    let start = at + header;
    let data = b.get(start..start.checked_add(len)?)?;
    Some((LpEntry::Str(data), header + len))
}

/// A little-endian two's complement integer of 2..=8 bytes, sign-extended to 64 bits.
fn sign_extend(le: &[u8]) -> i64 {
    let mut bytes = [0u8; 8];
    bytes[..le.len()].copy_from_slice(le);
    let unused_bits = 64 - 8 * le.len() as u32;
    (i64::from_le_bytes(bytes) << unused_bits) >> unused_bits
}

/// An element ready to be written: encoding bytes, borrowed data, backlen.
pub struct Encoded<'v> {
    head: [u8; 9],
    head_len: usize,
    data: &'v [u8],
    back: [u8; 5],
    back_len: usize,
}

impl<'v> Encoded<'v> {
    /// Encode `v` as Valkey would: as an integer when it is a canonical decimal `i64`.
    pub fn bytes(v: &'v [u8]) -> Encoded<'v> {
        match parse_canonical_int(v) {
            Some(i) => Encoded::int(i),
            None => {
                let mut head = [0u8; 9];
                let head_len = encode_str_header(v.len(), &mut head);
                Encoded::finish(head, head_len, v)
            }
        }
    }

    pub fn int(v: i64) -> Encoded<'static> {
        let mut head = [0u8; 9];
        let head_len = encode_int(v, &mut head);
        Encoded::finish(head, head_len, &[])
    }

    fn finish(head: [u8; 9], head_len: usize, data: &[u8]) -> Encoded<'_> {
        let mut back = [0u8; 5];
        let back_len = encode_backlen(head_len + data.len(), &mut back);
        Encoded { head, head_len, data, back, back_len }
    }

    /// The entry as three slices to be written one after the other.
    pub fn parts(&self) -> [&[u8]; 3] {
        [&self.head[..self.head_len], self.data, &self.back[..self.back_len]]
    }
}

/// Bytes an element would take in a listpack (encoding + data + backlen), for callers that
/// check size limits before inserting.
pub fn entry_size_for(v: &[u8]) -> usize {
    let encoded_len = match parse_canonical_int(v) {
        Some(i) => encode_int(i, &mut [0u8; 9]),
        None => encode_str_header(v.len(), &mut [0u8; 9]) + v.len(),
    };
    encoded_len + backlen_bytes(encoded_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_bytes(v: i64) -> Vec<u8> {
        let mut out = [0u8; 9];
        let n = encode_int(v, &mut out);
        out[..n].to_vec()
    }

    #[test]
    fn int_widths_at_every_boundary() {
        let cases: &[(i64, &[u8])] = &[
            (0, &[0x00]),
            (127, &[0x7F]),
            (128, &[0xC0, 0x80]),
            (-1, &[0xDF, 0xFF]),
            (4095, &[0xCF, 0xFF]),
            (-4096, &[0xD0, 0x00]),
            (4096, &[0xF1, 0x00, 0x10]),
            (-4097, &[0xF1, 0xFF, 0xEF]),
            (32767, &[0xF1, 0xFF, 0x7F]),
            (-32768, &[0xF1, 0x00, 0x80]),
            (32768, &[0xF2, 0x00, 0x80, 0x00]),
            (-32769, &[0xF2, 0xFF, 0x7F, 0xFF]),
            (8_388_607, &[0xF2, 0xFF, 0xFF, 0x7F]),
            (-8_388_608, &[0xF2, 0x00, 0x00, 0x80]),
            (8_388_608, &[0xF3, 0x00, 0x00, 0x80, 0x00]),
            (i64::from(i32::MAX), &[0xF3, 0xFF, 0xFF, 0xFF, 0x7F]),
            (i64::from(i32::MIN), &[0xF3, 0x00, 0x00, 0x00, 0x80]),
            (i64::from(i32::MAX) + 1, &[0xF4, 0, 0, 0, 0x80, 0, 0, 0, 0]),
            (i64::MIN, &[0xF4, 0, 0, 0, 0, 0, 0, 0, 0x80]),
            (i64::MAX, &[0xF4, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
        ];
        for &(v, want) in cases {
            let got = int_bytes(v);
            assert_eq!(got, want, "encoding of {v}");
            assert_eq!(decode(&got, 0), Some((LpEntry::Int(v), want.len())), "decode {v}");
        }
    }

    #[test]
    fn canonical_int_rules() {
        for ok in ["0", "1", "-1", "127", "9223372036854775807", "-9223372036854775808"] {
            let v = parse_canonical_int(ok.as_bytes()).unwrap();
            assert_eq!(fmt_i64(&mut [0; 20], v), ok.as_bytes());
        }
        for bad in [
            "",
            "-",
            "+1",
            "01",
            "-0",
            "00",
            " 1",
            "1 ",
            "1a",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
            "-01",
            "123456789012345678901",
        ] {
            assert_eq!(parse_canonical_int(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn backlen_golden_and_round_trip() {
        let cases: &[(usize, &[u8])] = &[
            (1, &[0x01]),
            (127, &[0x7F]),
            (128, &[0x01, 0x80]),
            (16382, &[0x7F, 0xFE]),
            (16383, &[0x00, 0xFF, 0xFF]),
            (2_097_150, &[0x7F, 0xFF, 0xFE]),
            (2_097_151, &[0x00, 0xFF, 0xFF, 0xFF]),
            (268_435_455, &[0x00, 0xFF, 0xFF, 0xFF, 0xFF]),
        ];
        for &(len, want) in cases {
            let mut out = [0u8; 5];
            let n = encode_backlen(len, &mut out);
            assert_eq!(&out[..n], want, "backlen {len}");
            assert_eq!(decode_backlen(want, want.len()), Some((len, n)));
        }
    }

    #[test]
    fn string_headers() {
        let header = |len: usize| {
            let mut out = [0u8; 9];
            let n = encode_str_header(len, &mut out);
            out[..n].to_vec()
        };
        assert_eq!(header(0), [0x80]);
        assert_eq!(header(63), [0xBF]);
        assert_eq!(header(64), [0xE0, 0x40]);
        assert_eq!(header(4095), [0xEF, 0xFF]);
        assert_eq!(header(4096), [0xF0, 0x00, 0x10, 0x00, 0x00]);
    }

    #[test]
    fn entry_sizes() {
        assert_eq!(entry_size_for(b"7"), 2);
        assert_eq!(entry_size_for(b"-1"), 3);
        assert_eq!(entry_size_for(b"07"), 4);
        assert_eq!(entry_size_for(&[b'a'; 63]), 65);
        assert_eq!(entry_size_for(&[b'a'; 125]), 128); // 127 encoded: 1-byte backlen
        assert_eq!(entry_size_for(&[b'a'; 126]), 130); // 128 encoded: 2-byte backlen
        assert_eq!(entry_size_for(b"-9223372036854775808"), 10);
    }

    #[test]
    fn decode_rejects_truncation_and_bad_tags() {
        for tag in 0xF5..=0xFFu8 {
            assert_eq!(decode(&[tag, 0, 0, 0, 0, 0, 0, 0, 0], 0), None);
        }
        assert_eq!(decode(&[0x82, b'a'], 0), None);
        assert_eq!(decode(&[0xC0], 0), None);
        assert_eq!(decode(&[0xF0, 1, 0, 0], 0), None);
        assert_eq!(decode(&[0xF0, 0xFF, 0xFF, 0xFF, 0xFF], 0), None);
        assert_eq!(decode(&[0xF4, 1, 2, 3, 4, 5, 6, 7], 0), None);
        assert_eq!(decode_backlen(&[0x80, 0x80], 2), None);
        assert_eq!(decode_backlen(&[0x81; 6], 6), None);
    }
}
