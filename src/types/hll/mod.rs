//! HyperLogLog values (issue 19): Valkey's `HYLL` representation, byte for byte, so that a
//! value written here counts the same in Valkey and the other way round, and so that GET,
//! DUMP, RDB and the AOF carry it unchanged. An HLL is a plain string value; this module
//! owns its bytes (header, sparse and dense encodings, hashing, the estimator, merging) and
//! knows nothing of the keyspace, RESP or the configuration (`hll-sparse-max-bytes` comes
//! in as an argument).
//!
//! # The header
//!
//! ```text
//!  byte 0    4     5 6 7     8                                15
//!     +------+-----+-------+----------------------------------+
//!     | HYLL | enc | 0 0 0 | cached cardinality, u64 LE       |  registers ...
//!     +------+-----+-------+----------------------------------+
//!              0 = dense      bit 63 (bit 7 of byte 15) set: the cache is stale
//!              1 = sparse
//! ```
//!
//! A value is an HLL when it is at least 16 bytes, starts with `HYLL`, its encoding byte
//! is 0 or 1, and, dense, it is exactly [`DENSE_BYTES`] long ([`check`]). The three unused
//! bytes are not checked, and are carried along as they are (a conversion to dense copies
//! the whole header). Every write that changes a register sets the stale bit; PFCOUNT of
//! one key writes the count it computed back with the bit clear, so the next PFCOUNT of an
//! unchanged HLL reads 8 bytes. A cached count is trusted as it is: Valkey does not check
//! it against the registers, neither do we.
//!
//! # Registers
//!
//! 16384 registers (p = 14): the low 14 bits of an element's 64-bit MurmurHash64A (seed
//! `0xadc83b19`) pick the register, and 1 + the number of trailing zeros of the other 50
//! bits (capped at 51) is the candidate value; a register keeps the largest value it was
//! offered (`hash`).
//!
//! # Dense: 6 bits a register, 12288 bytes
//!
//! ```text
//!   byte:   |    0     |    1     |    2     |    3     | ...
//!   bits:   |11000000  |22221111  |33333322  |55444444  |       (MSB on the left)
//! ```
//!
//! Register `i` starts at bit `6 i`, least significant bits first, and spans two bytes
//! when its first bit is 6 or 4 within its byte. Every 3 bytes hold 4 registers, so 12
//! bytes hold 16 and 24 bytes 32: the unit of the vector paths (`dense`, `simd`).
//!
//! # Sparse: run lengths, at most `hll-sparse-max-bytes`
//!
//! ```text
//!   ZERO   00xxxxxx            1..=64 registers at 0         (xxxxxx + 1)
//!   XZERO  01xxxxxx yyyyyyyy   1..=16384 registers at 0      (xxxxxxyyyyyyyy + 1)
//!   VAL    1vvvvvxx            1..=4 registers at 1..=32     (vvvvv + 1, xx + 1)
//! ```
//!
//! An empty HLL is one `XZERO:16384` (18 bytes in all). Registers are set by splitting the
//! opcode that covers them into at most three (`XZERO VAL XZERO`, 5 bytes in place of 2)
//! and merging equal neighbouring VALs, exactly as Valkey's `hllSparseSet` does, so the
//! same additions give the same bytes. A value past 32, or a value that would grow past
//! `hll-sparse-max-bytes`, converts the HLL to dense first ("promotion"); nothing converts
//! back. Sparse HLLs of a few hundred elements take a few hundred bytes instead of 12 KiB.
//!
//! # Counting
//!
//! A count is the estimator of Ertl ("New cardinality estimation algorithms for
//! HyperLogLog sketches", arXiv:1702.01284) over the histogram of register values, with
//! Valkey's floating-point operations in Valkey's order (`estimate`). The union of several
//! HLLs (PFCOUNT of many keys, PFMERGE) is the register-wise maximum, kept one byte a
//! register ([`Registers`]). Unpacking dense registers and counting the histogram are the
//! hot loops: on x86-64 with AVX2 they take 32 registers an instruction (`simd`; unpacking
//! uses AVX-512 VBMI's bit-field gather where the CPU has it), otherwise word-wise scalar
//! code; all give the same bytes, and tests hold them to it. Measured on PFCOUNT of 8 dense
//! HLLs (`benches/hll-compare.sh`): about half of Valkey 9.1's server CPU per call.
//!
//! # Layout
//! - `hash`: MurmurHash64A and an element's (register, value).
//! - `dense`: 6-bit register access, unpacking, packing, histograms.
//! - `simd`: the vector forms of unpacking and of the histogram (x86-64 only).
//! - `sparse`: the opcodes, setting a register, conversion to dense, decoding.
//! - `estimate`: the cardinality from a histogram.
//! - `add`: PFADD as a plan of small in-place edits (dense) or a rewritten value (sparse).
//! - `union`: [`Registers`], the union of several HLLs, and PFMERGE's result.
//! - `selftest`: PFSELFTEST.

mod add;
mod dense;
mod estimate;
mod hash;
mod selftest;
#[cfg(target_arch = "x86_64")]
mod simd;
mod sparse;
mod union;

pub use add::{add, new_with, Edit, Outcome, Write};
pub use hash::{murmur64a, pattern};
pub use selftest::selftest;
pub use sparse::decode;
pub use union::Registers;

/// Bits of the hash that select the register.
pub const P: u32 = 14;
/// Number of registers.
pub const REGISTERS: usize = 1 << P;
/// Bits of a dense register.
pub const BITS: usize = 6;
/// The largest value a register holds.
pub const REGISTER_MAX: u8 = (1 << BITS) - 1;
/// Hash bits left for the run of zeros: a register value is at most `Q + 1`.
pub const Q: usize = 64 - P as usize;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 16;
/// Bytes of the dense registers.
pub const REGISTER_BYTES: usize = (REGISTERS * BITS).div_ceil(8);
/// Bytes of a dense HLL.
pub const DENSE_BYTES: usize = HEADER_BYTES + REGISTER_BYTES;
/// The magic the value starts with.
pub const MAGIC: &[u8; 4] = b"HYLL";
/// Offset of the encoding byte.
const ENCODING_AT: usize = 4;
/// Offset of the cached cardinality.
const CARD_AT: usize = 8;
/// The stale bit of the cached cardinality, in its last byte.
const STALE_BIT: u8 = 0x80;
/// Offset of the byte that holds the stale bit.
pub const STALE_AT: usize = CARD_AT + 7;

const _: () = assert!(REGISTER_BYTES == 12288 && DENSE_BYTES == 12304);
const _: () = assert!(REGISTERS.is_multiple_of(32), "the vector paths take 32 at a time");

/// How the registers are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Dense = 0,
    Sparse = 1,
}

impl Encoding {
    /// PFDEBUG ENCODING's word.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Dense => "dense",
            Encoding::Sparse => "sparse",
        }
    }
}

/// The value is not an HLL (`WRONGTYPE Key is not a valid HyperLogLog string value.`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotHll;

/// A sparse HLL whose opcodes do not cover exactly the 16384 registers (`INVALIDOBJ`);
/// found only when the opcodes are walked, as Valkey finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corrupt;

/// The encoding of `value`, if it is an HLL by Valkey's checks (`isHLLObjectOrReply`):
/// the length, the magic, the encoding byte, and the exact length of a dense one.
pub fn check(value: &[u8]) -> Result<Encoding, NotHll> {
    if value.len() < HEADER_BYTES || &value[..4] != MAGIC {
        return Err(NotHll);
    }
    match value[ENCODING_AT] {
        0 if value.len() == DENSE_BYTES => Ok(Encoding::Dense),
        1 => Ok(Encoding::Sparse),
        _ => Err(NotHll),
    }
}

/// The cached cardinality, unless it is stale.
pub fn cached_count(value: &[u8]) -> Option<u64> {
    let card: [u8; 8] = value[CARD_AT..CARD_AT + 8].try_into().expect("a header");
    (card[7] & STALE_BIT == 0).then(|| u64::from_le_bytes(card))
}

/// Where and what to write to cache `count` in the header (PFCOUNT of one key).
pub fn cache_edit(count: u64) -> (usize, [u8; 8]) {
    (CARD_AT, count.to_le_bytes())
}

/// Marks the cached cardinality of `value` stale.
fn invalidate(value: &mut [u8]) {
    value[STALE_AT] |= STALE_BIT;
}

/// The value of a new, empty HLL: sparse, one `XZERO:16384`, the cache valid at 0 (as
/// Valkey's `createHLLObject`).
pub fn empty() -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER_BYTES + 2);
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&[Encoding::Sparse as u8, 0, 0, 0]);
    v.extend_from_slice(&[0; 8]);
    sparse::push_zeros(&mut v, REGISTERS);
    v
}

/// The cardinality of one HLL (`value` passed [`check`]), computed from its registers.
pub fn count(value: &[u8]) -> Result<u64, Corrupt> {
    let histogram = match encoding_of(value) {
        Encoding::Dense => dense::histogram(value),
        Encoding::Sparse => sparse::histogram(&value[HEADER_BYTES..])?,
    };
    Ok(estimate::cardinality(&histogram))
}

/// The encoding of a value that passed [`check`].
fn encoding_of(value: &[u8]) -> Encoding {
    match value[ENCODING_AT] {
        0 => Encoding::Dense,
        1 => Encoding::Sparse,
        e => panic!("HLL encoding {e} was not checked"),
    }
}

/// Converts a sparse HLL (that passed [`check`]) to dense, as PFDEBUG TODENSE and GETREG
/// do; a dense one is left alone. Returns whether it converted.
pub fn to_dense(value: &mut Vec<u8>) -> Result<bool, Corrupt> {
    if encoding_of(value) == Encoding::Dense {
        return Ok(false);
    }
    *value = sparse::to_dense(value)?;
    Ok(true)
}

/// The registers of a dense HLL (PFDEBUG GETREG), one byte each.
pub fn dense_registers(value: &[u8]) -> Box<[u8; REGISTERS]> {
    assert_eq!(encoding_of(value), Encoding::Dense, "GETREG reads a dense HLL");
    let mut out = Box::new([0u8; REGISTERS]);
    dense::unpack_max(value, &mut out);
    out
}

#[cfg(test)]
mod tests;
