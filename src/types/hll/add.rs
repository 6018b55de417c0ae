//! PFADD: the elements' registers raised in an HLL, and how to store the result.
//!
//! A dense HLL is 12 KiB and a PFADD of a few elements changes a few bytes of it, so the
//! stored value is not copied: the registers are read where they lie and the command gets
//! [`Write::Edits`], the few byte runs to overwrite (registers of one command that share
//! bytes, or lie close, in one run), applied in place by the keyspace. Past a few dozen
//! elements one copy of the registers is cheaper than tracking them, and the edit is the
//! one byte range that changed. A sparse HLL changes shape with every split and merge, and
//! is at most `hll-sparse-max-bytes`: it is edited as a copy and stored whole
//! ([`Write::Value`]), as is a new HLL.

use super::dense;
use super::hash::pattern;
use super::sparse::{self, Set};
use super::{
    check, empty, encoding_of, invalidate, Corrupt, Encoding, BITS, HEADER_BYTES, STALE_AT,
    STALE_BIT,
};

/// Elements up to which a dense PFADD tracks the registers it raised instead of copying.
const TRACKED_MAX: usize = 32;
/// Byte runs closer than this are written as one edit.
const RUN_GAP_BYTES: usize = 32;

/// Overwrite the stored value from `offset` with `bytes` (its length is unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub offset: usize,
    pub bytes: Vec<u8>,
}

/// How a PFADD's result is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// Nothing changed.
    Nothing,
    /// These runs of the stored value change, in place (a dense HLL).
    Edits(Vec<Edit>),
    /// The whole new value (a sparse HLL, or one that became dense).
    Value(Vec<u8>),
}

/// What a PFADD did to an existing HLL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Elements that raised a register (Valkey's count of changes for the dirty counter).
    pub raised: u64,
    pub write: Write,
    /// A sparse HLL was found corrupt after `raised` elements: as in Valkey, what changed
    /// before is kept (and written), the command fails with INVALIDOBJ and the change is
    /// neither counted nor propagated.
    pub corrupt: bool,
}

/// PFADD of `elements` to the HLL `value` (which passed [`check`]).
pub fn add<E: AsRef<[u8]>>(value: &[u8], elements: &[E], sparse_max_bytes: u64) -> Outcome {
    debug_assert!(check(value).is_ok());
    match encoding_of(value) {
        Encoding::Dense if elements.len() <= TRACKED_MAX => add_tracked(value, elements),
        Encoding::Dense => add_copied(value, elements),
        Encoding::Sparse => {
            let mut v = value.to_vec();
            let (raised, result) = add_owned(&mut v, elements, sparse_max_bytes);
            let corrupt = result.is_err();
            if raised > 0 && !corrupt {
                invalidate(&mut v);
            }
            let write = if v == value { Write::Nothing } else { Write::Value(v) };
            Outcome { raised, write, corrupt }
        }
    }
}

/// A new HLL holding `elements`: the value PFADD creates (its cached count stale, as
/// Valkey leaves it, since creating counts as a change), and how many elements raised a
/// register.
pub fn new_with<E: AsRef<[u8]>>(elements: &[E], sparse_max_bytes: u64) -> (Vec<u8>, u64) {
    let mut v = empty();
    let (raised, result) = add_owned(&mut v, elements, sparse_max_bytes);
    result.expect("a new HLL is well formed");
    invalidate(&mut v);
    (v, raised)
}

/// Adds `elements` to the HLL `v` one by one, as Valkey's `hllAdd` does (a sparse HLL may
/// turn dense on the way); returns how many raised a register, and stops at corruption.
pub fn add_owned<E: AsRef<[u8]>>(
    v: &mut Vec<u8>,
    elements: &[E],
    sparse_max_bytes: u64,
) -> (u64, Result<(), Corrupt>) {
    let mut raised = 0;
    for e in elements {
        match add_one(v, e.as_ref(), sparse_max_bytes) {
            Ok(true) => raised += 1,
            Ok(false) => {}
            Err(c) => return (raised, Err(c)),
        }
    }
    (raised, Ok(()))
}

/// Adds one element to the HLL `v`; true when it raised a register.
pub fn add_one(v: &mut Vec<u8>, element: &[u8], sparse_max_bytes: u64) -> Result<bool, Corrupt> {
    let (index, count) = pattern(element);
    match encoding_of(v) {
        Encoding::Dense => Ok(raise(&mut v[HEADER_BYTES..], index, count)),
        Encoding::Sparse => match sparse::set(v, index, count, sparse_max_bytes)? {
            Set::Unchanged => Ok(false),
            Set::Updated => Ok(true),
            Set::Promote => {
                *v = sparse::to_dense(v)?;
                raise(&mut v[HEADER_BYTES..], index, count);
                Ok(true)
            }
        },
    }
}

/// Raises dense register `index` of `regs` to `count`; true when it was lower.
fn raise(regs: &mut [u8], index: usize, count: u8) -> bool {
    let raised = dense::get(regs, index) < count;
    if raised {
        dense::set(regs, index, count);
    }
    raised
}

/// The register bytes (offsets into the registers) register `index` occupies.
fn bytes_of(index: usize) -> std::ops::Range<usize> {
    let bit = index * BITS;
    bit / 8..(bit + BITS).div_ceil(8)
}

/// A dense PFADD of a few elements: the raised registers are read where they lie, and the
/// bytes they change become edits of the stored value.
fn add_tracked<E: AsRef<[u8]>>(value: &[u8], elements: &[E]) -> Outcome {
    let regs = &value[HEADER_BYTES..];
    let mut raised: Vec<(usize, u8)> = Vec::new();
    for e in elements {
        let (index, count) = pattern(e.as_ref());
        let current = raised
            .iter()
            .rev()
            .find(|(i, _)| *i == index)
            .map_or_else(|| dense::get(regs, index), |&(_, c)| c);
        if count > current {
            raised.push((index, count));
        }
    }
    if raised.is_empty() {
        return Outcome { raised: 0, write: Write::Nothing, corrupt: false };
    }
    // Stable: the later (larger) value of a register raised twice is written last.
    raised.sort_by_key(|&(i, _)| i);
    let mut edits = stale_edit(value).into_iter().collect::<Vec<_>>();
    // Runs of registers whose bytes lie close: `raised[first..next]` in one edit.
    let mut first = 0;
    while first < raised.len() {
        let mut bytes = bytes_of(raised[first].0);
        let mut next = first + 1;
        while let Some(&(index, _)) = raised.get(next) {
            let more = bytes_of(index);
            if more.start > bytes.end + RUN_GAP_BYTES {
                break;
            }
            bytes.end = bytes.end.max(more.end);
            next += 1;
        }
        edits.push(run_edit(regs, bytes, &raised[first..next]));
        first = next;
    }
    Outcome { raised: raised.len() as u64, write: Write::Edits(edits), corrupt: false }
}

/// The edit writing `members` (register, value) into the register bytes `r`.
fn run_edit(regs: &[u8], r: std::ops::Range<usize>, members: &[(usize, u8)]) -> Edit {
    let mut bytes = regs[r.clone()].to_vec();
    for &(index, count) in members {
        dense::set_at(&mut bytes, index * BITS - r.start * 8, count);
    }
    Edit { offset: HEADER_BYTES + r.start, bytes }
}

/// A dense PFADD of many elements: on a copy of the registers, written back as the one
/// byte range that changed.
fn add_copied<E: AsRef<[u8]>>(value: &[u8], elements: &[E]) -> Outcome {
    let mut regs = value[HEADER_BYTES..].to_vec();
    let (mut raised, mut lo, mut hi) = (0, usize::MAX, 0);
    for e in elements {
        let (index, count) = pattern(e.as_ref());
        if raise(&mut regs, index, count) {
            raised += 1;
            let bytes = bytes_of(index);
            lo = lo.min(bytes.start);
            hi = hi.max(bytes.end);
        }
    }
    if raised == 0 {
        return Outcome { raised, write: Write::Nothing, corrupt: false };
    }
    let mut edits = stale_edit(value).into_iter().collect::<Vec<_>>();
    edits.push(Edit { offset: HEADER_BYTES + lo, bytes: regs[lo..hi].to_vec() });
    Outcome { raised, write: Write::Edits(edits), corrupt: false }
}

/// The edit marking the cached count of `value` stale, unless it already is.
fn stale_edit(value: &[u8]) -> Option<Edit> {
    let b = value[STALE_AT];
    (b & STALE_BIT == 0).then(|| Edit { offset: STALE_AT, bytes: vec![b | STALE_BIT] })
}

#[cfg(test)]
mod tests {
    use super::super::DENSE_BYTES;
    use super::*;

    fn apply(value: &[u8], write: &Write) -> Vec<u8> {
        match write {
            Write::Nothing => value.to_vec(),
            Write::Value(v) => v.clone(),
            Write::Edits(edits) => {
                let mut v = value.to_vec();
                for e in edits {
                    v[e.offset..e.offset + e.bytes.len()].copy_from_slice(&e.bytes);
                }
                v
            }
        }
    }

    /// The edits of a dense PFADD, applied, give what adding to a copy gives, for every
    /// batch size and with registers raised twice in one batch.
    #[test]
    fn dense_edits_equal_a_full_rewrite() {
        let elements: Vec<String> = (0..30_000).map(|i| format!("e{i}")).collect();
        let (mut value, _) = new_with(&elements[..5000], 3000);
        assert_eq!(value.len(), DENSE_BYTES);
        value[STALE_AT] &= !STALE_BIT;
        let mut at = 5000;
        for batch in [1, 2, 3, 7, 32, 33, 100, 1, 0, 5000] {
            let mut batch_elements: Vec<&str> =
                elements[at..at + batch].iter().map(String::as_str).collect();
            // Repeats, and elements already counted.
            batch_elements.extend(elements[at..at + batch / 2].iter().map(String::as_str));
            batch_elements.push("e17");
            at += batch;
            let out = add(&value, &batch_elements, 3000);
            let mut want = value.clone();
            let (raised, result) = add_owned(&mut want, &batch_elements, 3000);
            assert!(result.is_ok() && !out.corrupt);
            if raised > 0 {
                invalidate(&mut want);
            }
            assert_eq!(out.raised, raised, "batch of {batch}");
            let got = apply(&value, &out.write);
            assert!(got == want, "batch of {batch}");
            if raised == 0 {
                assert_eq!(out.write, Write::Nothing);
            }
            value = got;
        }
    }

    #[test]
    fn sparse_adds_promote_past_the_limit() {
        let elements: Vec<String> = (0..2000).map(|i| format!("x{i}")).collect();
        let (v, raised) = new_with(&elements[..10], 3000);
        assert_eq!(raised, 10);
        assert_eq!(encoding_of(&v), Encoding::Sparse);
        let out = add(&v, &elements[10..], 3000);
        let Write::Value(dense) = out.write else { panic!("a new value") };
        assert_eq!(encoding_of(&dense), Encoding::Dense);
        // The same elements added one by one to a new HLL give the same bytes.
        assert_eq!(dense, new_with(&elements, 3000).0);
        // A limit of 0 makes the first split promote.
        let small = add(&v, &["y"], 0);
        let Write::Value(d) = small.write else { panic!("a new value") };
        assert_eq!(d.len(), DENSE_BYTES);
    }
}
