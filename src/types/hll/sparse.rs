//! The sparse encoding: ZERO, XZERO and VAL opcodes after the header (see the module essay),
//! walked and edited exactly as Valkey walks and edits them, corrupt values included: a
//! walk that does not end on register 16384 is [`Corrupt`], found where Valkey finds it,
//! and an XZERO cut short by the end of the value reads its missing byte as zero (Valkey
//! reads the string's terminating NUL there).

use super::dense::{self, Histogram};
use super::{invalidate, Corrupt, Encoding, DENSE_BYTES, ENCODING_AT, HEADER_BYTES, REGISTERS};

/// The largest register value a VAL opcode holds.
pub const VAL_MAX_VALUE: u8 = 32;
/// The longest run of a VAL opcode.
const VAL_MAX_LEN: i64 = 4;
/// The longest run of a ZERO opcode.
const ZERO_MAX_LEN: i64 = 64;
/// The longest run of an XZERO opcode.
const XZERO_MAX_LEN: usize = 16384;

/// One opcode, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// `len` registers at 0 (ZERO when `wide` is false, XZERO when true).
    Zeros { len: i64, wide: bool },
    /// `len` registers at `value`.
    Val { value: u8, len: i64 },
}

impl Op {
    /// The opcode at `at` of `v`.
    #[inline]
    fn at(v: &[u8], at: usize) -> Op {
        let b = v[at];
        if b & 0x80 != 0 {
            Op::Val { value: (b >> 2 & 0x1f) + 1, len: i64::from(b & 0x3) + 1 }
        } else if b & 0x40 != 0 {
            let low = v.get(at + 1).copied().unwrap_or(0);
            Op::Zeros { len: (i64::from(b & 0x3f) << 8 | i64::from(low)) + 1, wide: true }
        } else {
            Op::Zeros { len: i64::from(b & 0x3f) + 1, wide: false }
        }
    }

    /// Registers covered.
    fn len(self) -> i64 {
        match self {
            Op::Zeros { len, .. } | Op::Val { len, .. } => len,
        }
    }

    /// Bytes of the opcode.
    fn bytes(self) -> usize {
        match self {
            Op::Zeros { wide: true, .. } => 2,
            _ => 1,
        }
    }
}

/// A VAL opcode byte (`value` in 1..=32, `len` in 1..=4).
fn val(value: u8, len: i64) -> u8 {
    debug_assert!((1..=VAL_MAX_VALUE).contains(&value) && (1..=VAL_MAX_LEN).contains(&len));
    0x80 | (value - 1) << 2 | (len - 1) as u8
}

/// A run of `len` zeros as one opcode: ZERO up to 64, XZERO above (Valkey's choice when it
/// splits a run).
fn push_zero_run(out: &mut Vec<u8>, len: i64) {
    debug_assert!((1..=XZERO_MAX_LEN as i64).contains(&len));
    let l = len - 1;
    if len > ZERO_MAX_LEN {
        out.extend_from_slice(&[0x40 | (l >> 8) as u8, l as u8]);
    } else {
        out.push(l as u8);
    }
}

/// Appends XZERO opcodes covering `n` registers (an empty HLL's body).
pub fn push_zeros(out: &mut Vec<u8>, mut n: usize) {
    while n > 0 {
        let run = n.min(XZERO_MAX_LEN);
        let l = run - 1;
        out.extend_from_slice(&[0x40 | (l >> 8) as u8, l as u8]);
        n -= run;
    }
}

/// The opcodes of a sparse value, in order: (offset, opcode).
fn ops(v: &[u8]) -> impl Iterator<Item = (usize, Op)> + '_ {
    let mut at = HEADER_BYTES;
    std::iter::from_fn(move || {
        (at < v.len()).then(|| {
            let op = Op::at(v, at);
            let here = at;
            at += op.bytes();
            (here, op)
        })
    })
}

/// The histogram of a sparse body (`ops`: the value past its header), as Valkey's
/// `hllSparseRegHisto`: every opcode counts, and the total must be 16384.
pub fn histogram(body: &[u8]) -> Result<Histogram, Corrupt> {
    let mut h = [0u32; 64];
    let mut registers: i64 = 0;
    let mut at = 0;
    while at < body.len() {
        let op = Op::at(body, at);
        at += op.bytes();
        registers += op.len();
        let (slot, n) = match op {
            Op::Zeros { len, .. } => (0, len),
            Op::Val { value, len } => (usize::from(value), len),
        };
        h[slot] = h[slot].wrapping_add(n as u32);
    }
    if registers != REGISTERS as i64 {
        return Err(Corrupt);
    }
    Ok(h)
}

/// Raises `max` to the registers of the sparse HLL `v` (Valkey's `hllMerge`). The opcodes
/// must cover exactly 16384 registers: a VAL past the last register is corruption too
/// (Valkey 9.1 refuses it, where older versions ignored it).
pub fn merge_into(v: &[u8], max: &mut [u8; REGISTERS]) -> Result<(), Corrupt> {
    let mut i: i64 = 0;
    for (_, op) in ops(v) {
        match op {
            Op::Zeros { len, .. } => i += len,
            Op::Val { value, len } => {
                if i + len > REGISTERS as i64 {
                    return Err(Corrupt);
                }
                for m in &mut max[i as usize..(i + len) as usize] {
                    *m = (*m).max(value);
                }
                i += len;
            }
        }
    }
    if i != REGISTERS as i64 {
        return Err(Corrupt);
    }
    Ok(())
}

/// The dense form of the sparse HLL `v` (Valkey's `hllSparseToDense`): the header is
/// copied (unused bytes and cached count included) with the encoding set to dense. The
/// opcodes must cover exactly 16384 registers, as for [`merge_into`].
pub fn to_dense(v: &[u8]) -> Result<Vec<u8>, Corrupt> {
    let mut out = vec![0u8; DENSE_BYTES];
    out[..HEADER_BYTES].copy_from_slice(&v[..HEADER_BYTES]);
    out[ENCODING_AT] = Encoding::Dense as u8;
    let regs = &mut out[HEADER_BYTES..];
    let mut i: i64 = 0;
    for (_, op) in ops(v) {
        match op {
            Op::Zeros { len, .. } => i += len,
            Op::Val { value, len } => {
                if i + len > REGISTERS as i64 {
                    return Err(Corrupt);
                }
                for r in i..i + len {
                    dense::set(regs, r as usize, value);
                }
                i += len;
            }
        }
    }
    if i != REGISTERS as i64 {
        return Err(Corrupt);
    }
    Ok(out)
}

/// What [`set`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// The register already held as much.
    Unchanged,
    /// The register was raised (and the cached count marked stale).
    Updated,
    /// The value cannot stay sparse: convert to dense, then set the register there.
    Promote,
}

/// Raises register `index` of the sparse HLL `v` to `count`, as Valkey's `hllSparseSet`
/// does, byte for byte: find the opcode covering the register; raise it in place when it
/// is a single register, else split it into up to three opcodes; then merge equal
/// neighbouring VALs (up to five opcodes from the one before). A value above 32, or a
/// split that would make `v` longer than `sparse_max_bytes`, asks for promotion instead.
pub fn set(
    v: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max_bytes: u64,
) -> Result<Set, Corrupt> {
    if count > VAL_MAX_VALUE {
        return Ok(Set::Promote);
    }
    let index = index as i64;
    // Step 1: the opcode covering `index`, its first register, and the opcode before it.
    let (mut at, mut first, mut prev, mut found) = (HEADER_BYTES, 0i64, None, None);
    while at < v.len() {
        let op = Op::at(v, at);
        if index < first + op.len() {
            found = Some(op);
            break;
        }
        prev = Some(at);
        at += op.bytes();
        first += op.len();
    }
    let Some(op) = found else { return Err(Corrupt) };
    // Step 2: the trivial cases, changed in place.
    match op {
        Op::Val { value, .. } if value >= count => return Ok(Set::Unchanged),
        Op::Val { len: 1, .. } | Op::Zeros { len: 1, wide: false } => {
            v[at] = val(count, 1);
            merge_neighbours(v, prev);
            return Ok(Set::Updated);
        }
        _ => {}
    }
    // The general case: the run split around the register.
    let last = first + op.len() - 1;
    let mut seq = Vec::with_capacity(5);
    match op {
        Op::Zeros { .. } => {
            if index != first {
                push_zero_run(&mut seq, index - first);
            }
            seq.push(val(count, 1));
            if index != last {
                push_zero_run(&mut seq, last - index);
            }
        }
        Op::Val { value, .. } => {
            if index != first {
                seq.push(val(value, index - first));
            }
            seq.push(val(count, 1));
            if index != last {
                seq.push(val(value, last - index));
            }
        }
    }
    // Step 3: put the sequence in place of the opcode.
    let len = v.len() as i64;
    let delta = seq.len() as i64 - op.bytes() as i64;
    if delta > 0 && (len + delta) as u64 > sparse_max_bytes {
        return Ok(Set::Promote);
    }
    // An XZERO cut short at the end of the value claims a byte past it: the sequence ends
    // where the value's new length says, as in Valkey.
    let replaced_end = (at + op.bytes()).min(v.len());
    v.splice(at..replaced_end, seq);
    v.truncate((len + delta) as usize);
    merge_neighbours(v, prev);
    Ok(Set::Updated)
}

/// Step 4 of [`set`]: merge adjacent VALs of one value whose runs fit one opcode, scanning
/// five opcodes from `prev` (or the first), then mark the cached count stale.
fn merge_neighbours(v: &mut Vec<u8>, prev: Option<usize>) {
    let mut at = prev.unwrap_or(HEADER_BYTES);
    let mut scans = 5;
    while at < v.len() && scans > 0 {
        scans -= 1;
        let op = Op::at(v, at);
        let Op::Val { value, len } = op else {
            at += op.bytes();
            continue;
        };
        if at + 1 < v.len() {
            if let Op::Val { value: next, len: next_len } = Op::at(v, at + 1) {
                if next == value && len + next_len <= VAL_MAX_LEN {
                    v[at + 1] = val(value, len + next_len);
                    v.remove(at);
                    continue;
                }
            }
        }
        at += 1;
    }
    invalidate(v);
}

/// PFDEBUG DECODE: the opcodes of the sparse HLL `v` as `z:<len>`, `Z:<len>` and
/// `v:<value>,<len>`, separated by spaces.
pub fn decode(v: &[u8]) -> String {
    let words: Vec<String> = ops(v)
        .map(|(_, op)| match op {
            Op::Zeros { len, wide: false } => format!("z:{len}"),
            Op::Zeros { len, wide: true } => format!("Z:{len}"),
            Op::Val { value, len } => format!("v:{value},{len}"),
        })
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::super::{empty, STALE_AT};
    use super::*;

    fn registers(v: &[u8]) -> Vec<u8> {
        let mut max = [0u8; REGISTERS];
        merge_into(v, &mut max).expect("valid");
        max.to_vec()
    }

    #[test]
    fn the_example_of_the_essay() {
        let mut v = empty();
        for (i, c) in [(1000, 2), (1020, 3), (1021, 3)] {
            assert_eq!(set(&mut v, i, c, 3000), Ok(Set::Updated));
        }
        assert_eq!(decode(&v), "Z:1000 v:2,1 z:19 v:3,2 Z:15362");
        assert_eq!(set(&mut v, 1020, 3, 3000), Ok(Set::Unchanged));
        assert_eq!(set(&mut v, 1020, 2, 3000), Ok(Set::Unchanged));
        assert_ne!(v[STALE_AT] & 0x80, 0);
    }

    #[test]
    fn splits_merges_and_promotions() {
        let mut v = empty();
        let mut model = vec![0u8; REGISTERS];
        // Runs of equal values grow into VAL:n,4 opcodes and no further.
        for (i, m) in model.iter_mut().enumerate().take(10) {
            assert_eq!(set(&mut v, i, 1, 3000), Ok(Set::Updated));
            *m = 1;
        }
        assert_eq!(decode(&v), "v:1,4 v:1,4 v:1,2 Z:16374");
        // Raising a register inside a VAL run splits it in three.
        assert_eq!(set(&mut v, 5, 7, 3000), Ok(Set::Updated));
        model[5] = 7;
        assert_eq!(decode(&v), "v:1,4 v:1,1 v:7,1 v:1,4 Z:16374");
        assert_eq!(registers(&v), model);
        // A value above 32, or growth past the limit, asks for dense.
        assert_eq!(set(&mut v, 100, 33, 3000), Ok(Set::Promote));
        let len = v.len() as u64;
        assert_eq!(set(&mut v, 200, 1, len), Ok(Set::Promote));
        assert_eq!(set(&mut v, 200, 1, len + 3), Ok(Set::Updated));
        model[200] = 1;
        let d = to_dense(&v).expect("valid");
        assert_eq!(d.len(), DENSE_BYTES);
        for (i, m) in model.iter().enumerate() {
            assert_eq!(dense::get(&d[HEADER_BYTES..], i), *m);
        }
    }

    #[test]
    fn corrupt_walks_are_found() {
        // The opcodes cover one register too few.
        let mut v = empty();
        v.truncate(HEADER_BYTES);
        v.extend_from_slice(&[0x7f, 0xfe]);
        assert_eq!(histogram(&v[HEADER_BYTES..]), Err(Corrupt));
        assert_eq!(set(&mut v, REGISTERS - 1, 1, 3000), Err(Corrupt));
        assert_eq!(set(&mut v, 0, 1, 3000), Ok(Set::Updated));
        assert_eq!(to_dense(&v), Err(Corrupt));
        assert_eq!(merge_into(&v, &mut [0; REGISTERS]), Err(Corrupt));
        // A VAL after the 16384th register is corrupt for all (Valkey 9.1), but a set
        // walks no further than the register it sets.
        let mut w = empty();
        w.push(val(3, 1));
        assert_eq!(to_dense(&w), Err(Corrupt));
        assert_eq!(merge_into(&w, &mut [0; REGISTERS]), Err(Corrupt));
        assert_eq!(histogram(&w[HEADER_BYTES..]), Err(Corrupt));
        assert_eq!(set(&mut w, 7, 2, 3000), Ok(Set::Updated));
        // An XZERO cut short reads its second byte as zero: 0x40 alone is XZERO:1.
        let mut x = empty();
        x.truncate(HEADER_BYTES);
        x.extend_from_slice(&[0x7f, 0xfe, 0x40]);
        assert_eq!(decode(&x), "Z:16383 Z:1");
        assert!(histogram(&x[HEADER_BYTES..]).is_ok());
    }
}
