//! The partial quicksort Valkey uses for `COUNT n` without `ANY` (its `pqsort`, NetBSD's
//! Bentley-McIlroy quicksort that skips the parts beyond the wanted prefix). It is not
//! stable, so points at equal distances come out in the order its swaps leave them: to
//! answer as Valkey does, the same comparisons and swaps are made here, step for step.
//!
//! Written on indexes: `base` is where a part starts in the whole slice, and a part is
//! sorted only when it holds a position up to `last`.

use std::cmp::Ordering;

/// Below this many elements a part is insertion sorted.
const INSERTION_MAX: usize = 7;
/// Above this many elements the pivot is a median of three medians.
const NINTHER_MIN: usize = 41;

/// Reorders `v` so that positions `0..=last` hold, in order, what a full sort by `cmp`
/// would put there (ties in the order Valkey's `pqsort` leaves them).
pub fn partial_sort<T>(v: &mut [T], last: usize, cmp: &impl Fn(&T, &T) -> Ordering) {
    sort_part(v, 0, last, cmp);
}

/// Index of the median of `a`, `b`, `c` under `cmp` (NetBSD's `med3`).
fn med3<T>(v: &[T], a: usize, b: usize, c: usize, cmp: &impl Fn(&T, &T) -> Ordering) -> usize {
    let lt = |x: usize, y: usize| cmp(&v[x], &v[y]) == Ordering::Less;
    let gt = |x: usize, y: usize| cmp(&v[x], &v[y]) == Ordering::Greater;
    if lt(a, b) {
        if lt(b, c) {
            b
        } else if lt(a, c) {
            c
        } else {
            a
        }
    } else if gt(b, c) {
        b
    } else if lt(a, c) {
        a
    } else {
        c
    }
}

/// Swaps the `n` elements from `a` with the `n` from `b`, pairwise.
fn swap_blocks<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for k in 0..n {
        v.swap(a + k, b + k);
    }
}

fn sort_part<T>(mut v: &mut [T], mut base: usize, last: usize, cmp: &impl Fn(&T, &T) -> Ordering) {
    loop {
        let n = v.len();
        if n < INSERTION_MAX {
            for m in 1..n {
                let mut l = m;
                while l > 0 && cmp(&v[l - 1], &v[l]) == Ordering::Greater {
                    v.swap(l, l - 1);
                    l -= 1;
                }
            }
            return;
        }
        let mut pm = n / 2;
        if n > INSERTION_MAX {
            let mut pl = 0;
            let mut pn = n - 1;
            if n >= NINTHER_MIN {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(v, pm - d, pm, pm + d, cmp);
                pn = med3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(v, pl, pm, pn, cmp);
        }
        v.swap(0, pm);
        // Three-way partition around v[0]: equal elements gather at both ends
        // (0..pa and pd+1..n), smaller ones before pb, larger ones after pc.
        let (mut pa, mut pb) = (1usize, 1usize);
        let (mut pc, mut pd) = (n as isize - 1, n as isize - 1);
        loop {
            while pb as isize <= pc {
                let r = cmp(&v[pb], &v[0]);
                if r == Ordering::Greater {
                    break;
                }
                if r == Ordering::Equal {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb as isize <= pc {
                let r = cmp(&v[pc as usize], &v[0]);
                if r == Ordering::Less {
                    break;
                }
                if r == Ordering::Equal {
                    v.swap(pc as usize, pd as usize);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb as isize > pc {
                break;
            }
            v.swap(pb, pc as usize);
            pb += 1;
            pc -= 1;
        }
        // Move the equal ends to the middle.
        let r = pa.min(pb - pa);
        swap_blocks(v, 0, pb - r, r);
        let (pc, pd) = (pc as usize, pd as usize);
        let r = (pd - pc).min(n - pd - 1);
        swap_blocks(v, pb, n - r, r);
        let smaller = pb - pa;
        if smaller > 1 && last >= base {
            sort_part(&mut v[..smaller], base, last, cmp);
        }
        let larger = pd - pc;
        if larger <= 1 {
            return;
        }
        // Iterate rather than recurse on the larger elements, when they hold wanted ones.
        let start = n - larger;
        if last < base + start {
            return;
        }
        v = &mut v[start..];
        base += start;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    #[test]
    fn the_prefix_is_sorted() {
        let mut rng = Rng::new(42);
        for round in 0..500 {
            let n = 1 + rng.below(300);
            let distinct = 1 + rng.below(if round % 2 == 0 { 5 } else { 1000 });
            let v: Vec<u64> = (0..n).map(|_| rng.below(distinct) as u64).collect();
            let last = rng.below(n);
            let mut got = v.clone();
            partial_sort(&mut got, last, &|a: &u64, b: &u64| a.cmp(b));
            let mut want = v.clone();
            want.sort();
            assert_eq!(got[..=last], want[..=last], "n {n} last {last}");
            let mut all = got.clone();
            all.sort();
            assert_eq!(all, want, "a permutation");
        }
    }

    /// Ties keep the order the algorithm leaves them in (checked against Valkey in the
    /// integration tests): here, a fixed case that a stable sort would order differently.
    #[test]
    fn ties_are_not_stable() {
        let mut v: Vec<(u8, usize)> =
            [3u8, 1, 2, 1, 3, 1, 2, 1, 3, 1].iter().copied().zip(0..).collect();
        partial_sort(&mut v, 2, &|a: &(u8, usize), b: &(u8, usize)| a.0.cmp(&b.0));
        let keys: Vec<u8> = v[..3].iter().map(|p| p.0).collect();
        assert_eq!(keys, [1, 1, 1]);
        let mut stable = v.clone();
        stable.sort_by_key(|p| p.1);
        stable.sort_by_key(|p| p.0);
        assert_ne!(v[..3], stable[..3]);
    }
}
