//! Longest common subsequence of two strings (the LCS command), by the classic dynamic
//! programming table, walked back the way Valkey walks it so that the same subsequence and
//! the same match ranges come out.
//!
//! The table holds one u32 per (i, j) pair: `(a_len + 1) * (b_len + 1) * 4` bytes, which the
//! command bounds before calling in here ([`table_bytes`]). The length alone needs two rows.

/// One run of consecutive matching bytes: inclusive ranges in `a` and in `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LcsMatch {
    pub a: (usize, usize),
    pub b: (usize, usize),
    pub len: usize,
}

/// The subsequence and its runs, last run first (the order Valkey reports them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lcs {
    pub text: Vec<u8>,
    pub matches: Vec<LcsMatch>,
}

/// Bytes of the full table for strings of these lengths.
pub fn table_bytes(a_len: usize, b_len: usize) -> u128 {
    (a_len as u128 + 1) * (b_len as u128 + 1) * std::mem::size_of::<u32>() as u128
}

/// Length of the longest common subsequence, in O(len(b)) memory.
pub fn lcs_len(a: &[u8], b: &[u8]) -> usize {
    let mut prev = vec![0u32; b.len() + 1];
    let mut cur = vec![0u32; b.len() + 1];
    for &ca in a {
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = if ca == cb { prev[j] + 1 } else { prev[j + 1].max(cur[j]) };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()] as usize
}

/// The longest common subsequence and its runs of at least `min_match_len` bytes; None when
/// the table cannot be allocated (the caller bounds its size first, this is the last guard).
pub fn lcs(a: &[u8], b: &[u8], min_match_len: usize) -> Option<Lcs> {
    let width = b.len() + 1;
    let cells = (a.len() + 1).checked_mul(width)?;
    let mut table: Vec<u32> = Vec::new();
    table.try_reserve_exact(cells).ok()?;
    table.resize(cells, 0);
    for (i, &ca) in a.iter().enumerate() {
        for (j, &cb) in b.iter().enumerate() {
            let v = if ca == cb {
                table[i * width + j] + 1
            } else {
                table[i * width + j + 1].max(table[(i + 1) * width + j])
            };
            table[(i + 1) * width + j + 1] = v;
        }
    }
    let at = |i: usize, j: usize| table[i * width + j];

    let total = at(a.len(), b.len()) as usize;
    let mut text = vec![0u8; total];
    let mut matches = Vec::new();
    let mut left = total;
    // The run being walked (backwards): its start moves down while matches continue.
    let mut run: Option<LcsMatch> = None;
    let mut emit = |run: LcsMatch| {
        if run.len >= min_match_len {
            matches.push(run);
        }
    };
    let (mut i, mut j) = (a.len(), b.len());
    while i > 0 && j > 0 {
        if a[i - 1] == b[j - 1] {
            left -= 1;
            text[left] = a[i - 1];
            let r = run.get_or_insert(LcsMatch { a: (i - 1, i - 1), b: (j - 1, j - 1), len: 0 });
            r.a.0 = i - 1;
            r.b.0 = j - 1;
            r.len += 1;
            i -= 1;
            j -= 1;
            if i == 0 || j == 0 {
                // The run touches the start of a string: the walk ends here.
                emit(run.take().expect("run is open"));
            }
        } else {
            if let Some(r) = run.take() {
                emit(r);
            }
            // Move toward the larger neighbour; on a tie, along `b` (as Valkey does).
            if at(i - 1, j) > at(i, j - 1) {
                i -= 1;
            } else {
                j -= 1;
            }
        }
    }
    Some(Lcs { text, matches })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valkey_documentation_example() {
        let r = lcs(b"ohmytext", b"mynewtext", 0).expect("small table");
        assert_eq!(r.text, b"mytext");
        assert_eq!(
            r.matches,
            vec![
                LcsMatch { a: (4, 7), b: (5, 8), len: 4 },
                LcsMatch { a: (2, 3), b: (0, 1), len: 2 },
            ]
        );
        assert_eq!(lcs(b"ohmytext", b"mynewtext", 4).map(|r| r.matches.len()), Some(1));
        assert_eq!(lcs_len(b"ohmytext", b"mynewtext"), 6);
    }

    #[test]
    fn empty_and_disjoint() {
        assert_eq!(lcs(b"", b"abc", 0), Some(Lcs { text: vec![], matches: vec![] }));
        assert_eq!(lcs(b"abc", b"xyz", 0).map(|r| r.text), Some(vec![]));
        assert_eq!(lcs_len(b"", b""), 0);
        assert_eq!(table_bytes(511, 511), 1 << 20);
    }

    #[test]
    fn length_agrees_with_the_table() {
        let mut rng = crate::util::rng::Rng::new(7);
        let mut next = || b"abcd"[rng.below(4)];
        for n in 0..40 {
            let a: Vec<u8> = (0..n).map(|_| next()).collect();
            let b: Vec<u8> = (0..(n * 7 % 23)).map(|_| next()).collect();
            let full = lcs(&a, &b, 0).expect("small table");
            assert_eq!(full.text.len(), lcs_len(&a, &b));
            let covered: usize = full.matches.iter().map(|m| m.len).sum();
            assert_eq!(covered, full.text.len());
        }
    }
}
