//! The header rules and whole-value operations of `types::hll`.

use super::add::new_with;
use super::*;

#[test]
fn an_empty_hll_is_valkeys() {
    let v = empty();
    let mut want = b"HYLL\x01\0\0\0".to_vec();
    want.extend_from_slice(&[0; 8]);
    want.extend_from_slice(&[0x7f, 0xff]);
    assert_eq!(v, want);
    assert_eq!(check(&v), Ok(Encoding::Sparse));
    assert_eq!(cached_count(&v), Some(0));
    assert_eq!(count(&v), Ok(0));
    assert_eq!(decode(&v), "Z:16384");
}

#[test]
fn check_follows_valkey() {
    let sparse = empty();
    let mut dense = sparse.clone();
    assert_eq!(to_dense(&mut dense), Ok(true));
    assert_eq!(to_dense(&mut dense), Ok(false));
    assert_eq!(check(&dense), Ok(Encoding::Dense));
    assert_eq!(count(&dense), Ok(0));
    // Too short, a wrong magic, an unknown encoding, a dense value of the wrong length.
    assert_eq!(check(&sparse[..15]), Err(NotHll));
    assert_eq!(check(&sparse[..16]), Ok(Encoding::Sparse));
    let mut bad = sparse.clone();
    bad[0] = b'h';
    assert_eq!(check(&bad), Err(NotHll));
    bad = sparse.clone();
    bad[4] = 2;
    assert_eq!(check(&bad), Err(NotHll));
    assert_eq!(check(&dense[..DENSE_BYTES - 1]), Err(NotHll));
    let mut long = dense.clone();
    long.push(0);
    assert_eq!(check(&long), Err(NotHll));
    // The unused bytes are not checked, and survive a conversion.
    bad = sparse.clone();
    bad[5..8].copy_from_slice(b"abc");
    assert_eq!(check(&bad), Ok(Encoding::Sparse));
    assert_eq!(to_dense(&mut bad), Ok(true));
    assert_eq!(&bad[5..8], b"abc");
    // A sparse body that covers too few registers counts as corrupt.
    assert_eq!(count(&sparse[..16]), Err(Corrupt));
}

#[test]
fn the_cache_and_its_stale_bit() {
    let mut v = new_with(&["a", "b", "c"], 3000).0;
    assert_eq!(cached_count(&v), None, "a write leaves the cache stale");
    let n = count(&v).expect("valid");
    assert_eq!(n, 3);
    let (at, bytes) = cache_edit(n);
    v[at..at + 8].copy_from_slice(&bytes);
    assert_eq!(cached_count(&v), Some(3));
}

#[test]
fn sparse_and_dense_count_alike() {
    let elements: Vec<String> = (0..1500).map(|i| format!("element:{i}")).collect();
    for n in [1, 10, 100, 700, 1500] {
        let sparse = new_with(&elements[..n], u64::MAX).0;
        assert_eq!(check(&sparse), Ok(Encoding::Sparse));
        let mut dense = sparse.clone();
        to_dense(&mut dense).expect("valid");
        assert_eq!(count(&sparse), count(&dense), "{n} elements");
        let mut union = Registers::new();
        union.merge(&sparse).expect("valid");
        assert_eq!(Ok(union.count()), count(&dense));
        assert!(dense_registers(&dense).iter().any(|&r| r > 0));
    }
}
