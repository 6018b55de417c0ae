//! Listpack tests: golden bytes, a seeded random-operation model test against `VecDeque`,
//! more than 65534 entries, and garbage fed to `from_bytes`.

use std::collections::VecDeque;

use super::*;
use crate::util::rng::Rng;

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|c| c.is_ascii_hexdigit()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

fn build(elements: &[&[u8]]) -> Listpack {
    let mut lp = Listpack::new();
    for e in elements {
        lp.push_back(e);
    }
    lp
}

#[test]
fn empty_listpack_bytes() {
    let lp = Listpack::new();
    assert_eq!(lp.as_bytes(), &[0x07, 0, 0, 0, 0, 0, 0xFF]);
    assert_eq!((lp.len(), lp.is_empty(), lp.first(), lp.last()), (0, true, None, None));
    assert_eq!(lp.seek(0), None);
    assert_eq!(lp.seek(-1), None);
    assert!(lp.alloc_bytes() >= 7);
}

/// The golden vectors in this file match the listpack blobs in `DUMP` payloads of hashes from
/// redis-server 7.0 (`--rdbcompression no`), checked when this file was written.
#[test]
fn golden_small_entries() {
    // "a", 1, -1, "hello", 128, "0123" (not canonical: a string)
    let lp = build(&[b"a", b"1", b"-1", b"hello", b"128", b"0123"]);
    let want = hex("1F000000 0600
         81 61 02
         01 01
         DF FF 02
         85 68656C6C6F 06
         C0 80 02
         84 30313233 05
         FF");
    assert_eq!(lp.as_bytes(), &want[..]);
    assert_eq!(Listpack::from_bytes(&want).unwrap(), lp);
}

#[test]
fn golden_int_widths() {
    let lp = build(&[b"4096", b"-32769", b"2147483647", b"-9223372036854775808"]);
    let want = hex("20000000 0400
         F1 0010 03
         F2 FF7FFF 04
         F3 FFFFFF7F 05
         F4 0000000000000080 09
         FF");
    assert_eq!(lp.as_bytes(), &want[..]);
    let ints: Vec<i64> = lp.iter().map(|e| e.as_int().unwrap()).collect();
    assert_eq!(ints, [4096, -32769, 2147483647, i64::MIN]);
}

/// The encoding and backlen bytes of the one entry of a listpack holding `n` bytes of 'x'.
fn single_string_entry(n: usize) -> (Vec<u8>, Vec<u8>) {
    let lp = build(&[&vec![b'x'; n]]);
    let b = lp.as_bytes();
    let entry = &b[HEADER_BYTES..b.len() - 1];
    let head_len = if n == 0 { 1 } else { entry.iter().position(|&c| c == b'x').unwrap() };
    let back = entry[head_len + n..].to_vec();
    (entry[..head_len].to_vec(), back)
}

#[test]
fn golden_string_lengths_and_backlens() {
    let cases: &[(usize, &str, &str)] = &[
        (0, "80", "01"),
        (63, "BF", "40"),
        (64, "E040", "42"),              // 66 encoded: still a 1-byte backlen
        (125, "E07D", "7F"),             // 127 encoded: the largest 1-byte backlen
        (126, "E07E", "0180"),           // 128 encoded: 2 bytes
        (4095, "EFFF", "2081"),          // 4097 = 32*128 + 1
        (4096, "F000100000", "2085"),    // 4101 = 32*128 + 5
        (16377, "F0F93F0000", "7FFE"),   // 16382: the largest 2-byte backlen
        (16378, "F0FA3F0000", "00FFFF"), // 16383: Valkey's `<` makes it 3 bytes
    ];
    for &(n, head, back) in cases {
        let (h, b) = single_string_entry(n);
        assert_eq!((h, b), (hex(head), hex(back)), "string of {n}");
    }
}

#[test]
fn navigation_and_edits() {
    let mut lp = build(&[b"a", b"b", b"c"]);
    let p = lp.seek(1).unwrap();
    assert!(lp.get(p).eq_bytes(b"b"));
    let q = lp.insert_before(p, b"x");
    assert_eq!(q, p);
    let r = lp.insert_after(q, b"77");
    assert_eq!(lp.get(r).as_int(), Some(77));
    let got: Vec<Vec<u8>> = lp.iter().map(|e| e.to_vec()).collect();
    assert_eq!(got, [&b"a"[..], b"x", b"77", b"b", b"c"]);
    let r = lp.replace(r, &[b'y'; 100]);
    assert_eq!(lp.get(r).to_vec(), vec![b'y'; 100]);
    assert_eq!(lp.delete(lp.last().unwrap()), None);
    let next = lp.delete(lp.first().unwrap()).unwrap();
    assert!(lp.get(next).eq_bytes(b"x"));
    lp.delete_range(-2, 10);
    let got: Vec<Vec<u8>> = lp.iter().map(|e| e.to_vec()).collect();
    assert_eq!(got, [&b"x"[..]]);
    let mut buf = [0u8; 20];
    assert_eq!(LpEntry::Int(-42).write_to(&mut buf), b"-42");
    assert_eq!(format!("{lp:?}"), "[\"x\"]");
}

#[test]
fn find_compares_ints_numerically_and_skips() {
    let lp = build(&[b"f1", b"10", b"10", b"v", b"f3", b"-7", b"010", b"x"]);
    let first = lp.first().unwrap();
    assert_eq!(lp.find(first, b"10", 0), lp.seek(1));
    assert_eq!(lp.find(first, b"10", 1), lp.seek(2));
    assert_eq!(lp.find(first, b"-7", 1), None);
    assert_eq!(lp.find(first, b"-7", 0), lp.seek(5));
    assert_eq!(lp.find(first, b"010", 1), lp.seek(6));
    assert_eq!(lp.find(first, b"+10", 0), None);
    assert_eq!(lp.find(lp.seek(3).unwrap(), b"x", 1), lp.seek(7));
}

#[test]
fn more_than_65534_entries() {
    let mut lp = Listpack::new();
    for i in 0..65536 {
        lp.push_back_int(i % 1000);
    }
    assert_eq!(&lp.as_bytes()[4..6], &[0xFF, 0xFF]);
    assert_eq!(lp.len(), 65536);
    assert_eq!(lp.iter().len(), 65536);
    assert_eq!(lp.get(lp.seek(-1).unwrap()).as_int(), Some(535));
    assert_eq!(lp.get(lp.seek(65535).unwrap()).as_int(), Some(535));
    assert_eq!(lp.seek(65536), None);
    assert_eq!(lp.seek(-65537), None);
    assert_eq!(Listpack::from_bytes(lp.as_bytes()).unwrap(), lp);
    lp.delete(lp.first().unwrap());
    assert_eq!(&lp.as_bytes()[4..6], &[0xFF, 0xFF]);
    lp.delete_range(0, 1);
    assert_eq!(lp.len(), 65534);
    assert_eq!(&lp.as_bytes()[4..6], &65534u16.to_le_bytes());
    // A listpack written with "unknown" but fewer entries loads with the exact count.
    let mut bytes = build(&[b"a"]).as_bytes().to_vec();
    bytes[4..6].copy_from_slice(&[0xFF, 0xFF]);
    assert_eq!(Listpack::from_bytes(&bytes).unwrap().as_bytes()[4..6], [1, 0]);
}

/// An element for the model test: ints of every width, near-ints, and strings around each
/// header boundary.
fn element(rng: &mut Rng) -> Vec<u8> {
    match rng.below(12) {
        0 => (rng.next_u64() as i64 % 200 - 50).to_string().into_bytes(),
        1 => (rng.next_u64() as i64 % 10000).to_string().into_bytes(),
        2 => (rng.next_u64() as i64 % 20_000_000).to_string().into_bytes(),
        3 => (rng.next_u64() as i64).to_string().into_bytes(),
        4 => format!("0{}", rng.below(100)).into_bytes(),
        5 => b"-0".to_vec(),
        6 => vec![b'z'; [63, 64, 125, 126, 4095, 4096][rng.below(6)]],
        7 => Vec::new(),
        _ => (0..rng.below(20)).map(|_| b"abc\xff\x00"[rng.below(5)]).collect(),
    }
}

fn check(lp: &Listpack, model: &VecDeque<Vec<u8>>) {
    assert_eq!(lp.len(), model.len());
    assert_eq!(lp.is_empty(), model.is_empty());
    let forward: Vec<Vec<u8>> = lp.iter().map(|e| e.to_vec()).collect();
    assert!(forward.iter().eq(model.iter()), "forward iteration differs");
    let backward: Vec<Vec<u8>> = lp.iter().rev().map(|e| e.to_vec()).collect();
    assert!(backward.iter().eq(model.iter().rev()), "backward iteration differs");
    let mut p = lp.last();
    for want in model.iter().rev() {
        assert!(lp.get(p.unwrap()).eq_bytes(want));
        p = lp.prev(p.unwrap());
    }
    assert_eq!(p, None);
    assert_eq!(Listpack::from_bytes(lp.as_bytes()).as_ref(), Ok(lp));
    let total: usize = model.iter().map(|e| entry_size_for(e)).sum();
    assert_eq!(lp.total_bytes(), HEADER_BYTES + total + 1);
}

#[test]
fn random_operations_match_vecdeque() {
    let mut rng = Rng::new(0x5EED_115C_0FFE_E000);
    for _round in 0..20 {
        let mut lp = Listpack::new();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        for _step in 0..300 {
            let v = element(&mut rng);
            let n = model.len();
            let index = if n == 0 { 0 } else { rng.below(n) };
            let signed = if rng.below(2) == 0 { index as i64 } else { index as i64 - n as i64 };
            match rng.below(10) {
                0 => {
                    lp.push_back(&v);
                    model.push_back(v);
                }
                1 => {
                    lp.push_front(&v);
                    model.push_front(v);
                }
                2 if n > 0 => {
                    let p = lp.seek(signed).unwrap();
                    let q = lp.insert_before(p, &v);
                    assert!(lp.get(q).eq_bytes(&v));
                    model.insert(index, v);
                }
                3 if n > 0 => {
                    let p = lp.seek(signed).unwrap();
                    let q = lp.insert_after(p, &v);
                    assert!(lp.get(q).eq_bytes(&v));
                    model.insert(index + 1, v);
                }
                4 if n > 0 => {
                    let p = lp.seek(signed).unwrap();
                    lp.replace(p, &v);
                    model[index] = v;
                }
                5 if n > 0 => {
                    let p = lp.seek(signed).unwrap();
                    let next = lp.delete(p);
                    model.remove(index);
                    assert_eq!(next.is_some(), index < model.len());
                }
                6 if n > 0 => {
                    let count = rng.below(5);
                    lp.delete_range(signed, count);
                    let end = (index + count).min(n);
                    model.drain(index..end);
                }
                7 => {
                    let i = rng.below(n + 3) as i64 - 1 - rng.below(2) as i64 * (n as i64 + 2);
                    let want = if i < 0 { i + n as i64 } else { i };
                    let got = lp.seek(i).map(|p| lp.get(p).to_vec());
                    let want = usize::try_from(want).ok().and_then(|w| model.get(w)).cloned();
                    assert_eq!(got, want, "seek {i}");
                }
                8 if n > 0 => {
                    let skip = rng.below(3);
                    let needle = if rng.below(2) == 0 { model[rng.below(n)].clone() } else { v };
                    let from = lp.seek(index as i64).unwrap();
                    let want = (index..n).step_by(skip + 1).find(|&j| model[j] == needle);
                    assert_eq!(lp.find(from, &needle, skip), want.and_then(|j| lp.seek(j as i64)));
                }
                _ => {}
            }
            check(&lp, &model);
        }
    }
}

#[test]
fn garbage_is_rejected_without_panics() {
    let mut rng = Rng::new(0xBAD_BAD_BAD);
    let valid = build(&[b"a", b"12", b"-300", &[b'q'; 70], b"99999999999", &[b'r'; 5000]]);
    for _ in 0..20_000 {
        let mut b = match rng.below(3) {
            0 => (0..rng.below(40)).map(|_| rng.next_u64() as u8).collect::<Vec<u8>>(),
            1 => valid.as_bytes()[..rng.below(valid.total_bytes())].to_vec(),
            _ => valid.as_bytes().to_vec(),
        };
        if !b.is_empty() {
            for _ in 0..rng.below(3) {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
        }
        // Half the time, make the header's total agree so the entry checks are reached.
        if rng.below(2) == 0 && b.len() >= 4 {
            let total = b.len() as u32;
            b[..4].copy_from_slice(&total.to_le_bytes());
            if let Some(last) = b.last_mut() {
                *last = 0xFF;
            }
        }
        if let Ok(lp) = Listpack::from_bytes(&b) {
            // Whatever is accepted must be fully walkable both ways.
            assert_eq!(lp.iter().count(), lp.len());
            assert_eq!(lp.iter().rev().count(), lp.len());
            assert_eq!(lp.as_bytes().len(), b.len());
        }
    }
    assert_eq!(Listpack::from_bytes(&[]), Err(ListpackError::BadSize));
    assert_eq!(Listpack::from_bytes(&hex("07000000 0100 FF")), Err(ListpackError::CountMismatch));
    assert_eq!(
        Listpack::from_bytes(&hex("08000000 0000 FF FF")),
        Err(ListpackError::BadTerminator)
    );
    assert_eq!(
        Listpack::from_bytes(&hex("09000000 0100 01 02 FF")),
        Err(ListpackError::BadBacklen { offset: 6 })
    );
    assert_eq!(
        Listpack::from_bytes(&hex("09000000 0100 F5 01 FF")),
        Err(ListpackError::BadEntry { offset: 6 })
    );
}
