//! The reply encoder: typed reply values written straight into a client's output buffer, in
//! RESP2 or RESP3 depending on what the client negotiated with HELLO.
//!
//! Handlers never build reply bytes by hand: they call these methods, and the RESP2 fallback
//! of every RESP3-only type (map, set, double, boolean, null, verbatim, big number, push) is
//! decided here, in one place, exactly as Valkey downgrades them.
//!
//! Aggregates whose length is not known up front use [`Reply::begin_deferred`] and
//! [`Reply::end_deferred`]: a placeholder is reserved and patched, so nothing is built twice.
//!
//! # Bytes that are referenced, not copied
//!
//! A big string value goes out without being copied ([`Reply::bulk_shared`]): the buffer
//! gets its `$len` header and trailing CRLF, and the value itself is a reference (a
//! [`Bytes`] over the stored value) recorded with the buffer offset where it belongs. What
//! goes on the wire, the *stream*, is the buffer with each reference spliced in at its
//! offset:
//!
//! ```text
//!   buf:     [ ..., $5368...\r\n | \r\n, +OK\r\n ... ]
//!                               ^ at
//!   shared:  [ { at, start, bytes: 512 MiB } ]
//!   stream:  buf[..at] ++ bytes ++ buf[at..]
//! ```
//!
//! Every position a caller sees ([`Reply::len`], the marks given to [`Reply::truncate`] and
//! [`Reply::drop_keeping`], the writer's progress in [`Reply::gather`]) is a stream position.
//! Each reference also records its `start` in the stream, so the writer finds where it is
//! with a binary search, and the slices it hands to `writev` cover buffer and references
//! alike.

use std::io::IoSlice;

use bytes::Bytes;

use crate::util::fmt::{fmt_i64, itoa_buf};

/// The protocol version a client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Resp2,
    Resp3,
}

/// The aggregate kind of a deferred header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    Array,
    Map,
    Set,
}

/// A reserved aggregate header, filled in by [`Reply::end_deferred`].
#[derive(Debug)]
#[must_use]
pub struct Deferred {
    at: usize,
    kind: AggKind,
}

/// Width reserved for a deferred header: type byte, up to 20 digits, CRLF.
const DEFERRED_WIDTH: usize = 23;

/// A referenced value spliced into the stream at buffer offset `at` (see the module essay).
#[derive(Debug)]
struct Spliced {
    at: usize,
    /// Its stream position: `at` plus the lengths of the references before it.
    start: usize,
    bytes: Bytes,
}

/// Output buffer plus the protocol it is encoded in.
#[derive(Debug)]
pub struct Reply {
    pub buf: Vec<u8>,
    pub proto: Proto,
    /// Referenced values, in stream order.
    shared: Vec<Spliced>,
    /// Their total length.
    shared_len: usize,
}

impl Default for Reply {
    fn default() -> Self {
        Reply::new(Proto::Resp2)
    }
}

impl Reply {
    pub fn new(proto: Proto) -> Reply {
        Reply { buf: Vec::new(), proto, shared: Vec::new(), shared_len: 0 }
    }

    /// Bytes in the stream: the buffer plus the referenced values.
    pub fn len(&self) -> usize {
        self.buf.len() + self.shared_len
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Bytes of referenced values in the stream (they belong to the stored values, not to
    /// this buffer).
    pub fn shared_bytes(&self) -> usize {
        self.shared_len
    }

    /// Forget everything: the buffer's bytes and the references.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.shared.clear();
        self.shared_len = 0;
    }

    /// A bulk string whose bytes are referenced, not copied (a big stored value). The stream
    /// is the same as [`Reply::bulk`] would make.
    pub fn bulk_shared(&mut self, bytes: Bytes) {
        self.header(b'$', bytes.len() as i64);
        let at = self.buf.len();
        let len = bytes.len();
        self.shared.push(Spliced { at, start: at + self.shared_len, bytes });
        self.shared_len += len;
        self.buf.extend_from_slice(b"\r\n");
    }

    /// The whole stream as one vector (for tests: the bytes a copy would have made).
    #[cfg(test)]
    pub fn stream_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.copy_stream_into(&mut out);
        out
    }

    /// Appends the whole stream to `out` (references spliced in).
    pub fn copy_stream_into(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.reserve(self.len());
        let mut slices = [IoSlice::new(&[]); 16];
        loop {
            let n = self.gather(out.len() - start, usize::MAX, &mut slices);
            if n == 0 {
                return;
            }
            slices[..n].iter().for_each(|s| out.extend_from_slice(s));
        }
    }

    /// The buffer offset of stream position `pos`, which must not lie inside a reference.
    fn buf_offset(&self, pos: usize) -> usize {
        let before = self.shared.partition_point(|s| s.start < pos);
        let skipped = match before {
            0 => 0,
            n => {
                let s = &self.shared[n - 1];
                debug_assert!(s.start + s.bytes.len() <= pos, "position inside a reference");
                s.start - s.at + s.bytes.len()
            }
        };
        pos - skipped
    }

    /// Fill `slices` with the stream from position `pos` on, at most `budget` bytes in all;
    /// returns how many slices were filled (0 when nothing is left). For `writev`.
    pub fn gather<'a>(&'a self, pos: usize, budget: usize, slices: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        let mut left = budget;
        // The first reference that ends after `pos`.
        let mut i = self.shared.partition_point(|s| s.start + s.bytes.len() <= pos);
        let mut pos = pos;
        while n < slices.len() && left > 0 {
            let piece: &[u8] = match self.shared.get(i) {
                Some(s) if pos >= s.start => {
                    i += 1;
                    &s.bytes[pos - s.start..]
                }
                Some(s) => {
                    let from = s.at - (s.start - pos);
                    &self.buf[from..s.at]
                }
                None => {
                    let from = pos - self.shared_len;
                    if from >= self.buf.len() {
                        break;
                    }
                    &self.buf[from..]
                }
            };
            let piece = &piece[..piece.len().min(left)];
            if !piece.is_empty() {
                slices[n] = IoSlice::new(piece);
                n += 1;
            }
            left -= piece.len();
            pos += piece.len();
        }
        n
    }

    pub fn is_resp3(&self) -> bool {
        self.proto == Proto::Resp3
    }

    fn header(&mut self, tag: u8, n: i64) {
        self.buf.push(tag);
        let mut b = itoa_buf();
        self.buf.extend_from_slice(fmt_i64(&mut b, n));
        self.buf.extend_from_slice(b"\r\n");
    }

    /// `+OK`.
    pub fn ok(&mut self) {
        self.buf.extend_from_slice(b"+OK\r\n");
    }

    /// A simple string. `s` must not contain CR or LF.
    pub fn simple(&mut self, s: &str) {
        debug_assert!(!s.contains('\r') && !s.contains('\n'));
        self.buf.push(b'+');
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.extend_from_slice(b"\r\n");
    }

    /// An error reply. `msg` is the full text after the `-`, starting with its code
    /// (`ERR ...`, `WRONGTYPE ...`). CR and LF inside it are replaced by spaces, as Valkey does.
    pub fn error(&mut self, msg: &str) {
        self.error_bytes(msg.as_bytes());
    }

    /// An error whose text may hold any bytes (a client's own, echoed raw as Valkey does);
    /// `\r` and `\n` become spaces so the reply stays one line.
    pub fn error_bytes(&mut self, msg: &[u8]) {
        self.buf.push(b'-');
        self.buf.extend(msg.iter().map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }));
        self.buf.extend_from_slice(b"\r\n");
    }

    pub fn int(&mut self, n: i64) {
        self.header(b':', n);
    }

    pub fn bulk(&mut self, s: &[u8]) {
        // Room for the whole reply at once: a big value is copied once, never again by a
        // growth step for its trailing CR LF. (The `$len\r\n` header is at most 23 bytes.)
        self.buf.reserve(s.len() + 25);
        self.header(b'$', s.len() as i64);
        self.buf.extend_from_slice(s);
        self.buf.extend_from_slice(b"\r\n");
    }

    /// A bulk string holding the decimal text of `n`.
    pub fn bulk_int(&mut self, n: i64) {
        let mut b = itoa_buf();
        let s = fmt_i64(&mut b, n);
        self.header(b'$', s.len() as i64);
        self.buf.extend_from_slice(s);
        self.buf.extend_from_slice(b"\r\n");
    }

    /// The null bulk string (`$-1` in RESP2, `_` in RESP3).
    pub fn null(&mut self) {
        match self.proto {
            Proto::Resp2 => self.buf.extend_from_slice(b"$-1\r\n"),
            Proto::Resp3 => self.buf.extend_from_slice(b"_\r\n"),
        }
    }

    /// The null array (`*-1` in RESP2, `_` in RESP3).
    pub fn null_array(&mut self) {
        match self.proto {
            Proto::Resp2 => self.buf.extend_from_slice(b"*-1\r\n"),
            Proto::Resp3 => self.buf.extend_from_slice(b"_\r\n"),
        }
    }

    pub fn array(&mut self, n: usize) {
        self.header(b'*', n as i64);
    }

    /// A map of `n` pairs (an array of `2n` items in RESP2).
    pub fn map(&mut self, n: usize) {
        match self.proto {
            Proto::Resp2 => self.header(b'*', 2 * n as i64),
            Proto::Resp3 => self.header(b'%', n as i64),
        }
    }

    /// A set of `n` items (an array in RESP2).
    pub fn set(&mut self, n: usize) {
        match self.proto {
            Proto::Resp2 => self.header(b'*', n as i64),
            Proto::Resp3 => self.header(b'~', n as i64),
        }
    }

    /// A push message header (an array in RESP2).
    pub fn push(&mut self, n: usize) {
        match self.proto {
            Proto::Resp2 => self.header(b'*', n as i64),
            Proto::Resp3 => self.header(b'>', n as i64),
        }
    }

    /// A boolean (`:1`/`:0` in RESP2).
    pub fn boolean(&mut self, b: bool) {
        match (self.proto, b) {
            (Proto::Resp2, true) => self.buf.extend_from_slice(b":1\r\n"),
            (Proto::Resp2, false) => self.buf.extend_from_slice(b":0\r\n"),
            (Proto::Resp3, true) => self.buf.extend_from_slice(b"#t\r\n"),
            (Proto::Resp3, false) => self.buf.extend_from_slice(b"#f\r\n"),
        }
    }

    /// A double, formatted as Valkey 8+ does ([`format_double`]; a bulk string in RESP2).
    pub fn double(&mut self, d: f64) {
        let s = format_double(d);
        match self.proto {
            Proto::Resp2 => self.bulk(s.as_bytes()),
            Proto::Resp3 => {
                self.buf.push(b',');
                self.buf.extend_from_slice(s.as_bytes());
                self.buf.extend_from_slice(b"\r\n");
            }
        }
    }

    /// Verbatim text with a three-letter format (`txt`, `mkd`); a bulk string in RESP2.
    pub fn verbatim(&mut self, format: &str, s: &[u8]) {
        debug_assert_eq!(format.len(), 3);
        match self.proto {
            Proto::Resp2 => self.bulk(s),
            Proto::Resp3 => {
                self.header(b'=', (s.len() + 4) as i64);
                self.buf.extend_from_slice(format.as_bytes());
                self.buf.push(b':');
                self.buf.extend_from_slice(s);
                self.buf.extend_from_slice(b"\r\n");
            }
        }
    }

    /// A big number given as decimal text; a bulk string in RESP2.
    pub fn big_number(&mut self, digits: &str) {
        match self.proto {
            Proto::Resp2 => self.bulk(digits.as_bytes()),
            Proto::Resp3 => {
                self.buf.push(b'(');
                self.buf.extend_from_slice(digits.as_bytes());
                self.buf.extend_from_slice(b"\r\n");
            }
        }
    }

    /// Append already-encoded RESP bytes.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Reserve an aggregate header whose length is given later by [`Reply::end_deferred`].
    pub fn begin_deferred(&mut self, kind: AggKind) -> Deferred {
        let at = self.buf.len();
        self.buf.extend_from_slice(&[b' '; DEFERRED_WIDTH]);
        Deferred { at, kind }
    }

    /// Fill a reserved header with `n` items (pairs for a map).
    pub fn end_deferred(&mut self, d: Deferred, n: usize) {
        let (tag, count) = match (d.kind, self.proto) {
            (AggKind::Array, _) | (AggKind::Set, Proto::Resp2) => (b'*', n),
            (AggKind::Map, Proto::Resp2) => (b'*', 2 * n),
            (AggKind::Map, Proto::Resp3) => (b'%', n),
            (AggKind::Set, Proto::Resp3) => (b'~', n),
        };
        let mut h = [0u8; DEFERRED_WIDTH];
        h[0] = tag;
        let mut b = itoa_buf();
        let digits = fmt_i64(&mut b, count as i64);
        h[1..1 + digits.len()].copy_from_slice(digits);
        let hlen = 1 + digits.len() + 2;
        h[hlen - 2] = b'\r';
        h[hlen - 1] = b'\n';
        // Shift the body left over the unused tail of the placeholder. The body is whatever
        // was written since begin_deferred; the copy is one memmove of it.
        let body_start = d.at + DEFERRED_WIDTH;
        let gap = DEFERRED_WIDTH - hlen;
        self.buf[d.at..d.at + hlen].copy_from_slice(&h[..hlen]);
        if gap > 0 {
            self.buf.copy_within(body_start.., d.at + hlen);
            let new_len = self.buf.len() - gap;
            self.buf.truncate(new_len);
            for s in self.shared.iter_mut().filter(|s| s.at > d.at) {
                s.at -= gap;
                s.start -= gap;
            }
        }
    }

    /// Moves the whole stream of `other` (bytes and references) to the end of this one,
    /// leaving `other` empty: what was sent to a client while its command ran follows the
    /// command's reply.
    pub fn append(&mut self, other: &mut Reply) {
        let (at, start) = (self.buf.len(), self.len());
        for mut s in other.shared.drain(..) {
            s.at += at;
            s.start += start;
            self.shared_len += s.bytes.len();
            self.shared.push(s);
        }
        other.shared_len = 0;
        self.buf.append(&mut other.buf);
    }

    /// Drop everything written at or after stream position `mark` (used to roll back a
    /// partial reply).
    pub fn truncate(&mut self, mark: usize) {
        let at = self.buf_offset(mark);
        self.buf.truncate(at);
        while self.shared.last().is_some_and(|s| s.start >= mark) {
            let s = self.shared.pop().expect("checked");
            self.shared_len -= s.bytes.len();
        }
    }

    /// Drops what was written after `mark` except the bytes of `keep` (a range within it,
    /// holding no reference): a silenced reply whose pushes still go out.
    pub fn drop_keeping(&mut self, mark: usize, keep: std::ops::Range<usize>) {
        debug_assert!(mark <= keep.start && keep.end <= self.len());
        if keep.is_empty() {
            self.truncate(mark);
            return;
        }
        self.truncate(keep.end);
        let (from, to) = (self.buf_offset(mark), self.buf_offset(keep.start));
        while self.shared.last().is_some_and(|s| s.start >= mark) {
            let s = self.shared.pop().expect("checked");
            debug_assert!(s.start < keep.start, "a reference inside the kept range");
            self.shared_len -= s.bytes.len();
        }
        self.buf.drain(from..to);
    }
}

/// Format a double the way Valkey 8+'s `d2string` does for `addReplyDouble`: `inf`, `-inf`,
/// `nan`, `0` / `-0`; an integral value within ±`i64::MAX / 2` as an integer; anything else
/// in its shortest round-trip digits ([`format_shortest`]).
pub fn format_double(d: f64) -> String {
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if d.is_nan() {
        return "nan".into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    const SAFE: f64 = (i64::MAX / 2) as f64;
    if (-SAFE..=SAFE).contains(&d) && d.trunc() == d {
        return (d as i64).to_string();
    }
    format_shortest(d)
}

/// A finite, non-zero double in the fewest digits that read back to it, laid out as Valkey's
/// `fpconv_dtoa`: digits `D` (n of them) times 10^K are written as an integer with `K`
/// zeros when K >= 0 and the decimal exponent is below n + 7; as a plain decimal when K < 0
/// and (K > -7 or the decimal exponent is within ±3); otherwise as `d.ddde±x`, the exponent
/// without padding (`5e-324`, `1e+20`).
pub fn format_shortest(d: f64) -> String {
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp10) = sci.split_once('e').expect("exponent form");
    let exp10: i32 = exp10.parse().expect("exponent digits");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let n = digits.len() as i32;
    let k = exp10 - (n - 1);
    let mut out = String::with_capacity(24);
    if d < 0.0 {
        out.push('-');
    }
    let exp_abs = exp10.abs();
    if k >= 0 && exp_abs < n + 7 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', k as usize));
    } else if k < 0 && (k > -7 || exp_abs < 4) {
        let point = n + k;
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp10 < 0 { '-' } else { '+' });
        out.push_str(&exp_abs.to_string());
    }
    out
}

/// C's `%.17g`.
pub fn format_g17(d: f64) -> String {
    format_g(d, 17)
}

/// C's `%.<prec>g` (`util::fmt_g`), as a string.
pub fn format_g(d: f64, prec: usize) -> String {
    let mut out = Vec::with_capacity(24);
    crate::util::fmt_g::fmt_g(d, prec, &mut out);
    String::from_utf8(out).expect("digits, signs, points and exponents are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole stream, read back through `gather` in pieces of at most `step` bytes and
    /// `width` slices.
    fn stream(r: &Reply, step: usize, width: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut slices = vec![IoSlice::new(&[]); width];
        loop {
            let n = r.gather(out.len(), step, &mut slices);
            if n == 0 {
                break;
            }
            let before = out.len();
            for s in &slices[..n] {
                out.extend_from_slice(s);
            }
            assert!(out.len() - before <= step);
        }
        assert_eq!(out.len(), r.len());
        out
    }

    #[test]
    fn append_moves_bytes_and_references() {
        let big = Bytes::from(vec![b'x'; 3000]);
        let mut a = Reply::new(Proto::Resp3);
        a.bulk_shared(big.clone());
        a.int(1);
        let mut b = Reply::new(Proto::Resp3);
        b.push(2);
        b.bulk(b"m");
        b.bulk_shared(big.clone());
        let mut want = a.stream_bytes();
        want.extend(b.stream_bytes());
        a.append(&mut b);
        assert_eq!(a.stream_bytes(), want);
        assert_eq!(stream(&a, 7, 3), want);
        assert!(b.is_empty() && b.stream_bytes().is_empty());
        a.truncate(want.len() - 3000 - 5);
        assert_eq!(a.stream_bytes(), want[..want.len() - 3005]);
    }

    #[test]
    fn referenced_values_go_out_as_copies_would() {
        let big: Vec<u8> = (0..5000u32).map(|i| (i % 253) as u8).collect();
        let other = vec![b'\r'; 70];
        let build = |r: &mut Reply, shared: bool| {
            r.ok();
            let d = r.begin_deferred(AggKind::Array);
            for (i, v) in [&big, &other, &big].into_iter().enumerate() {
                if shared {
                    r.bulk_shared(Bytes::copy_from_slice(v));
                } else {
                    r.bulk(v);
                }
                r.int(i as i64);
            }
            r.end_deferred(d, 6);
            r.simple("done");
        };
        let mut copies = Reply::new(Proto::Resp2);
        build(&mut copies, false);
        let want = copies.buf;
        let mut r = Reply::new(Proto::Resp2);
        build(&mut r, true);
        assert_eq!(r.shared_bytes(), 2 * big.len() + other.len());
        assert!(r.buf.len() < 200, "the values are not in the buffer");
        for (step, width) in [(usize::MAX, 64), (1, 64), (7, 2), (4096, 1), (100_000, 3)] {
            assert_eq!(stream(&r, step, width), want, "step {step}, {width} slices");
        }
        r.clear();
        assert_eq!((r.len(), r.shared_bytes()), (0, 0));
    }

    #[test]
    fn truncating_at_a_stream_mark_drops_later_references() {
        let v = vec![b'v'; 1000];
        let mut r = Reply::new(Proto::Resp2);
        r.bulk_shared(Bytes::copy_from_slice(&v));
        let mark = r.len();
        r.bulk_shared(Bytes::copy_from_slice(&v));
        r.ok();
        r.truncate(mark);
        assert_eq!(r.len(), mark);
        assert_eq!(r.shared_bytes(), 1000);
        let mut want = Reply::new(Proto::Resp2);
        want.bulk(&v);
        assert_eq!(stream(&r, usize::MAX, 8), want.buf);
    }

    #[test]
    fn dropping_a_silenced_reply_keeps_its_pushes() {
        let v = vec![b'x'; 300];
        let mut r = Reply::new(Proto::Resp3);
        r.bulk_shared(Bytes::copy_from_slice(&v));
        let mark = r.len();
        r.bulk_shared(Bytes::copy_from_slice(&v));
        let from = r.len();
        r.push(1);
        r.bulk(b"msg");
        let keep = from..r.len();
        r.bulk_shared(Bytes::copy_from_slice(&v));
        r.drop_keeping(mark, keep);
        let mut want = Reply::new(Proto::Resp3);
        want.bulk(&v);
        want.push(1);
        want.bulk(b"msg");
        assert_eq!(stream(&r, usize::MAX, 8), want.buf);
        assert_eq!(r.shared_bytes(), 300);
    }

    #[test]
    fn doubles_format_as_valkey_8() {
        // Each pair was read from Valkey 9.1 (ZADD then ZSCORE).
        let cases = [
            (1e20, "1e+20"),
            (0.1, "0.1"),
            (1e-5, "0.00001"),
            (123456.0, "123456"),
            (1.5e300, "1.5e+300"),
            (1e16, "10000000000000000"),
            (123456789012345678.0, "123456789012345680"),
            (1e21, "1e+21"),
            (5e-324, "5e-324"),
            (2.833764258202258, "2.833764258202258"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-1.5, "-1.5"),
            (0.000123, "0.000123"),
            (1234567.125, "1234567.125"),
            (1e18, "1000000000000000000"),
            (1e19, "1e+19"),
            (1.23e19, "1.23e+19"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (0.0000123456, "1.23456e-5"),
            (1234567890123456789.0, "1234567890123456768"),
            (0.5, "0.5"),
            (12345678901234567890.0, "12345678901234567000"),
            (5e18, "5e+18"),
            (4.6e18, "4600000000000000000"),
            (4.7e18, "4.7e+18"),
            (123.456e18, "1.23456e+20"),
        ];
        for (d, want) in cases {
            assert_eq!(format_double(d), want, "{d:e}");
        }
        assert_eq!(format_double(-0.0), "-0");
        assert_eq!(format_double(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn g17_matches_printf() {
        assert_eq!(format_g17(1.5), "1.5");
        assert_eq!(format_g17(0.1), "0.10000000000000001");
        assert_eq!(format_g17(1e20), "1e+20");
        assert_eq!(format_g17(123456.0), "123456");
        assert_eq!(format_g17(1e-5), "1.0000000000000001e-05");
        assert_eq!(format_g17(-2.0), "-2");
        assert_eq!(format_double(f64::INFINITY), "inf");
    }

    #[test]
    fn resp2_downgrades_resp3_types() {
        let mut r = Reply::new(Proto::Resp2);
        r.map(2);
        r.boolean(true);
        r.null();
        r.double(2.5);
        assert_eq!(r.buf, b"*4\r\n:1\r\n$-1\r\n$3\r\n2.5\r\n");
        let mut r = Reply::new(Proto::Resp3);
        r.map(2);
        r.boolean(false);
        r.null();
        r.double(2.5);
        assert_eq!(r.buf, b"%2\r\n#f\r\n_\r\n,2.5\r\n");
    }

    #[test]
    fn deferred_headers_are_patched_in_place() {
        let mut r = Reply::new(Proto::Resp3);
        r.int(7);
        let d = r.begin_deferred(AggKind::Map);
        r.bulk(b"a");
        r.int(1);
        r.end_deferred(d, 1);
        assert_eq!(r.buf, b":7\r\n%1\r\n$1\r\na\r\n:1\r\n");
        let mut r = Reply::new(Proto::Resp2);
        let d = r.begin_deferred(AggKind::Set);
        r.end_deferred(d, 0);
        assert_eq!(r.buf, b"*0\r\n");
    }
}
