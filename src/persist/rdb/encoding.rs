//! RDB's length and string encodings, written to and read from a byte stream that keeps the
//! running CRC-64 of everything that passed through it.
//!
//! Lengths take 1, 2, 5 or 9 bytes by their top two bits:
//!
//! ```text
//!  00xxxxxx                       6-bit length
//!  01xxxxxx xxxxxxxx              14-bit length (big endian)
//!  10000000 + 4 bytes             32-bit length (big endian)
//!  10000001 + 8 bytes             64-bit length (big endian)
//!  11xxxxxx                       a specially encoded string follows: xxxxxx = 0 int8,
//!                                 1 int16, 2 int32 (little endian), 3 LZF
//! ```
//!
//! A string is written as an integer when it is the canonical decimal form of a number that
//! fits 32 bits, LZF-compressed when compression is on, it is longer than 20 bytes and
//! compression saves at least 4 bytes, and as length + bytes otherwise.

use std::io::{self, Read, Write};

use super::{crc64, lzf};

/// Strings up to this length are read into a buffer sized in advance.
const PRESIZE_MAX: u64 = 1 << 20;

const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
const ENC_LZF: u8 = 3;

/// Strings up to this long are never compressed.
const LZF_MIN_LEN: usize = 20;

/// Writes RDB data to `W`, keeping the CRC-64 of every byte written.
pub struct RdbWriter<W: Write> {
    out: W,
    crc: u64,
    written: u64,
    compress: bool,
}

impl<W: Write> RdbWriter<W> {
    pub fn new(out: W, compress: bool) -> RdbWriter<W> {
        RdbWriter { out, crc: 0, written: 0, compress }
    }

    /// The checksum of everything written so far.
    pub fn crc(&self) -> u64 {
        self.crc
    }

    /// Whether strings are LZF-compressed (rdbcompression).
    pub fn compresses(&self) -> bool {
        self.compress
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.crc = crc64::update(self.crc, bytes);
        self.written += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    pub fn byte(&mut self, b: u8) -> io::Result<()> {
        self.raw(&[b])
    }

    pub fn length(&mut self, n: u64) -> io::Result<()> {
        if n < 1 << 6 {
            self.byte(n as u8)
        } else if n < 1 << 14 {
            self.raw(&[0x40 | (n >> 8) as u8, n as u8])
        } else if n <= u64::from(u32::MAX) {
            self.byte(0x80)?;
            self.raw(&(n as u32).to_be_bytes())
        } else {
            self.byte(0x81)?;
            self.raw(&n.to_be_bytes())
        }
    }

    /// An integer in the smallest of the int8/int16/int32 string encodings; false (nothing
    /// written) when it does not fit 32 bits.
    pub fn int_string(&mut self, v: i64) -> io::Result<bool> {
        if let Ok(v) = i8::try_from(v) {
            self.raw(&[0xC0 | ENC_INT8, v as u8])?;
        } else if let Ok(v) = i16::try_from(v) {
            self.byte(0xC0 | ENC_INT16)?;
            self.raw(&v.to_le_bytes())?;
        } else if let Ok(v) = i32::try_from(v) {
            self.byte(0xC0 | ENC_INT32)?;
            self.raw(&v.to_le_bytes())?;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// A string, in the most compact encoding RDB allows for it.
    pub fn string(&mut self, s: &[u8]) -> io::Result<()> {
        if s.len() <= 11 {
            if let Some(v) = crate::types::listpack::parse_canonical_int(s) {
                if self.int_string(v)? {
                    return Ok(());
                }
            }
        }
        if self.compress && s.len() > LZF_MIN_LEN {
            if let Some(c) = lzf::compress(s, s.len() - 4) {
                self.byte(0xC0 | ENC_LZF)?;
                self.length(c.len() as u64)?;
                self.length(s.len() as u64)?;
                return self.raw(&c);
            }
        }
        self.length(s.len() as u64)?;
        self.raw(s)
    }
}

/// Why an RDB stream could not be read.
#[derive(Debug)]
pub enum RdbError {
    Io(io::Error),
    /// The data is not valid RDB (the text says what).
    Corrupt(String),
}

impl From<io::Error> for RdbError {
    fn from(e: io::Error) -> RdbError {
        RdbError::Io(e)
    }
}

impl std::fmt::Display for RdbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RdbError::Io(e) => write!(f, "{e}"),
            RdbError::Corrupt(why) => f.write_str(why),
        }
    }
}

pub fn corrupt(why: impl Into<String>) -> RdbError {
    RdbError::Corrupt(why.into())
}

/// A length, or the marker of a specially encoded string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    Plain(u64),
    Encoded(u8),
}

/// Reads RDB data from `R`, keeping the CRC-64 of every byte read. Every length is checked
/// against `max_len` before anything is allocated for it.
pub struct RdbReader<R: Read> {
    input: R,
    crc: u64,
    read: u64,
    max_len: u64,
}

impl<R: Read> RdbReader<R> {
    pub fn new(input: R, max_len: u64) -> RdbReader<R> {
        RdbReader { input, crc: 0, read: 0, max_len }
    }

    pub fn crc(&self) -> u64 {
        self.crc
    }

    /// Bytes read so far.
    pub fn position(&self) -> u64 {
        self.read
    }

    pub fn exact<const N: usize>(&mut self) -> Result<[u8; N], RdbError> {
        let mut buf = [0u8; N];
        self.input.read_exact(&mut buf).map_err(eof_is_corrupt)?;
        self.crc = crc64::update(self.crc, &buf);
        self.read += N as u64;
        Ok(buf)
    }

    pub fn byte(&mut self) -> Result<u8, RdbError> {
        Ok(self.exact::<1>()?[0])
    }

    /// `n` bytes (checked against the length limit first).
    pub fn bytes(&mut self, n: u64) -> Result<Vec<u8>, RdbError> {
        if n > self.max_len {
            return Err(corrupt(format!("length {n} over the limit")));
        }
        let mut buf = Vec::new();
        if n <= PRESIZE_MAX {
            // The usual short string: one exact read into a buffer of the right size.
            buf.resize(n as usize, 0);
            self.input.read_exact(&mut buf).map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => corrupt("unexpected end of file"),
                _ => RdbError::Io(e),
            })?;
        } else {
            // A long one grows as the bytes arrive, so a corrupt length cannot allocate
            // hundreds of megabytes before the end of the file shows.
            let got = (&mut self.input).take(n).read_to_end(&mut buf)?;
            if got as u64 != n {
                return Err(corrupt("unexpected end of file"));
            }
        }
        self.crc = crc64::update(self.crc, &buf);
        self.read += n;
        Ok(buf)
    }

    pub fn len_or_encoding(&mut self) -> Result<Len, RdbError> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            0 => Len::Plain(u64::from(b & 0x3f)),
            1 => Len::Plain(u64::from(b & 0x3f) << 8 | u64::from(self.byte()?)),
            3 => Len::Encoded(b & 0x3f),
            _ if b == 0x80 => Len::Plain(u64::from(u32::from_be_bytes(self.exact()?))),
            _ if b == 0x81 => Len::Plain(u64::from_be_bytes(self.exact()?)),
            _ => return Err(corrupt(format!("unknown length encoding {b:#x}"))),
        })
    }

    pub fn length(&mut self) -> Result<u64, RdbError> {
        match self.len_or_encoding()? {
            Len::Plain(n) => Ok(n),
            Len::Encoded(e) => Err(corrupt(format!("encoded value {e} where a length belongs"))),
        }
    }

    /// A string in any of its encodings.
    pub fn string(&mut self) -> Result<Vec<u8>, RdbError> {
        match self.len_or_encoding()? {
            Len::Plain(n) => self.bytes(n),
            Len::Encoded(ENC_INT8) => Ok((self.byte()? as i8).to_string().into_bytes()),
            Len::Encoded(ENC_INT16) => Ok(i16::from_le_bytes(self.exact()?).to_string().into()),
            Len::Encoded(ENC_INT32) => Ok(i32::from_le_bytes(self.exact()?).to_string().into()),
            Len::Encoded(ENC_LZF) => {
                let compressed_len = self.length()?;
                let len = self.length()?;
                if len > self.max_len {
                    return Err(corrupt(format!("LZF length {len} over the limit")));
                }
                let compressed = self.bytes(compressed_len)?;
                lzf::decompress(&compressed, len as usize).map_err(corrupt)
            }
            Len::Encoded(e) => Err(corrupt(format!("unknown string encoding {e}"))),
        }
    }
}

fn eof_is_corrupt(e: io::Error) -> RdbError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        corrupt("unexpected end of file")
    } else {
        RdbError::Io(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(f: impl FnOnce(&mut RdbWriter<Vec<u8>>) -> io::Result<()>) -> Vec<u8> {
        let mut w = RdbWriter::new(Vec::new(), true);
        f(&mut w).unwrap();
        w.into_inner()
    }

    #[test]
    fn lengths_take_their_documented_sizes() {
        assert_eq!(written(|w| w.length(63)), [63]);
        assert_eq!(written(|w| w.length(64)), [0x40, 64]);
        assert_eq!(written(|w| w.length(16383)), [0x7f, 0xff]);
        assert_eq!(written(|w| w.length(16384)), [0x80, 0, 0, 0x40, 0]);
        assert_eq!(written(|w| w.length(1 << 32)), [0x81, 0, 0, 0, 1, 0, 0, 0, 0]);
        for n in [0, 1, 63, 64, 300, 16383, 16384, 1 << 31, u64::from(u32::MAX), 1 << 40] {
            let bytes = written(|w| w.length(n));
            assert_eq!(RdbReader::new(&bytes[..], u64::MAX).length().unwrap(), n);
        }
    }

    #[test]
    fn strings_pick_int_lzf_or_raw() {
        assert_eq!(written(|w| w.string(b"12")), [0xC0, 12]);
        assert_eq!(written(|w| w.string(b"-300")), [0xC1, 0xd4, 0xfe]);
        assert_eq!(written(|w| w.string(b"70000")), [0xC2, 0x70, 0x11, 0x01, 0x00]);
        assert_eq!(written(|w| w.string(b"012")), [3, b'0', b'1', b'2']);
        assert_eq!(
            written(|w| w.string(b"99999999999")),
            [11, b'9', b'9', b'9', b'9', b'9', b'9', b'9', b'9', b'9', b'9', b'9']
        );
        let long = vec![b'a'; 100];
        let lzf = written(|w| w.string(&long));
        assert_eq!(lzf[0], 0xC3);
        for s in [&b""[..], b"12", b"-300", b"70000", b"hello", &long, b"-0", b"4294967296"] {
            let bytes = written(|w| w.string(s));
            let mut r = RdbReader::new(&bytes[..], 1 << 20);
            assert_eq!(r.string().unwrap(), s);
            assert_eq!(r.crc(), crc64::update(0, &bytes));
        }
    }

    #[test]
    fn truncated_and_oversized_input_is_corrupt() {
        let bytes = written(|w| w.string(b"hello world"));
        for cut in 0..bytes.len() {
            assert!(RdbReader::new(&bytes[..cut], 1 << 20).string().is_err());
        }
        let huge = written(|w| w.length(1 << 40));
        let mut r = RdbReader::new(&huge[..], 1 << 20);
        let n = r.length().unwrap();
        assert!(r.bytes(n).is_err());
    }
}
