//! The union of HLLs: the register-wise maximum, one byte a register (Valkey's internal
//! `HLL_RAW` form), for PFCOUNT of several keys and for PFMERGE.

use super::sparse::{self, Set};
use super::{
    dense, empty, encoding_of, estimate, invalidate, Corrupt, Encoding, HEADER_BYTES, REGISTERS,
};

/// The union of the HLLs merged so far (none: all registers 0).
pub struct Registers {
    max: [u8; REGISTERS],
    /// A dense HLL was merged (PFMERGE then stores a dense result).
    saw_dense: bool,
}

impl Default for Registers {
    fn default() -> Registers {
        Registers::new()
    }
}

impl Registers {
    pub fn new() -> Registers {
        Registers { max: [0; REGISTERS], saw_dense: false }
    }

    /// Merges the HLL `value` (which passed `check`).
    pub fn merge(&mut self, value: &[u8]) -> Result<(), Corrupt> {
        match encoding_of(value) {
            Encoding::Dense => {
                self.saw_dense = true;
                dense::unpack_max(value, &mut self.max);
                Ok(())
            }
            Encoding::Sparse => sparse::merge_into(value, &mut self.max),
        }
    }

    /// The estimated cardinality of the union.
    pub fn count(&self) -> u64 {
        estimate::cardinality(&dense::histogram_of_bytes(&self.max))
    }

    /// The value PFMERGE stores: `dest` is the destination's value (None when missing; a
    /// present one was merged too, as Valkey merges the destination with the sources).
    /// Dense when a merged HLL was dense (a sparse destination is converted first, keeping
    /// its header); else the destination's sparse registers are raised one by one in
    /// register order, as Valkey does, which may promote it on the way. The cached count
    /// is marked stale.
    pub fn merged(&self, dest: Option<&[u8]>, sparse_max_bytes: u64) -> Result<Vec<u8>, Corrupt> {
        let mut v = dest.map_or_else(empty, <[u8]>::to_vec);
        if self.saw_dense && encoding_of(&v) == Encoding::Sparse {
            v = sparse::to_dense(&v)?;
        }
        if encoding_of(&v) == Encoding::Sparse {
            for (index, &count) in self.max.iter().enumerate() {
                if count == 0 {
                    continue;
                }
                // A corrupt destination cannot get here: it was merged first.
                if sparse::set(&mut v, index, count, sparse_max_bytes)? == Set::Promote {
                    v = sparse::to_dense(&v)?;
                    break;
                }
            }
        }
        if encoding_of(&v) == Encoding::Dense {
            // Every register of the destination is at most the union's (it was merged),
            // so raising each to the union's value sets it to that value.
            v.truncate(HEADER_BYTES);
            v.extend_from_slice(&dense::pack(&self.max));
        }
        invalidate(&mut v);
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::super::add::{add_owned, new_with};
    use super::super::{count, STALE_AT};
    use super::*;

    fn elements(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    #[test]
    fn a_union_counts_what_one_hll_of_everything_counts() {
        let (a, b) = (elements("a", 3000), elements("b", 500));
        let ha = new_with(&a, 3000).0;
        let hb = new_with(&b, 3000).0;
        assert_eq!(encoding_of(&ha), Encoding::Dense);
        assert_eq!(encoding_of(&hb), Encoding::Sparse);
        let mut union = Registers::new();
        union.merge(&ha).expect("valid");
        union.merge(&hb).expect("valid");
        let all: Vec<&String> = a.iter().chain(&b).collect();
        let both = new_with(&all, 3000).0;
        assert_eq!(union.count(), count(&both).expect("valid"));
        // PFMERGE into a new key: dense, the registers of everything, the cache stale.
        let merged = union.merged(None, 3000).expect("valid");
        assert_eq!(merged[HEADER_BYTES..], both[HEADER_BYTES..]);
        assert_ne!(merged[STALE_AT] & 0x80, 0);
    }

    #[test]
    fn sparse_merges_stay_sparse_until_the_limit() {
        let (a, b) = (elements("a", 50), elements("b", 60));
        let (ha, hb) = (new_with(&a, 3000).0, new_with(&b, 3000).0);
        let mut union = Registers::new();
        union.merge(&ha).expect("valid");
        union.merge(&hb).expect("valid");
        let merged = union.merged(Some(&ha), 3000).expect("valid");
        assert_eq!(encoding_of(&merged), Encoding::Sparse);
        let mut want = ha.clone();
        add_owned(&mut want, &b, 3000).1.expect("valid");
        assert_eq!(count(&merged), count(&want));
        // A limit just above the result's start promotes on the way.
        let tight = union.merged(Some(&ha), ha.len() as u64 + 3).expect("valid");
        assert_eq!(encoding_of(&tight), Encoding::Dense);
        assert_eq!(count(&tight), count(&merged));
    }
}
