//! Unit tests of the legacy decoders: a small encoder builds ziplists and zipmaps the way
//! Redis wrote them; every blob decodes back, and damaged blobs are refused (never a panic).

use super::*;
use crate::config::Config;
use crate::persist::rdb::encoding::RdbWriter;
use crate::types::agg::{Agg, AggType};

fn lim() -> LoadLimits {
    LoadLimits::from_config(&Config::default())
}

/// An element to encode: a string, or an integer in the smallest integer encoding.
#[derive(Clone, Copy)]
enum E<'a> {
    S(&'a [u8]),
    I(i64),
}

fn encode_entry(e: E<'_>, prev: usize) -> Vec<u8> {
    let mut out = Vec::new();
    if prev < 254 {
        out.push(prev as u8);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&(prev as u32).to_le_bytes());
    }
    match e {
        E::S(s) if s.len() < 64 => out.push(s.len() as u8),
        E::S(s) if s.len() < 1 << 14 => {
            out.extend_from_slice(&[0x40 | (s.len() >> 8) as u8, s.len() as u8])
        }
        E::S(s) => {
            out.push(0x80);
            out.extend_from_slice(&(s.len() as u32).to_be_bytes());
        }
        E::I(n @ 0..=12) => out.push(0xF1 + n as u8),
        E::I(n) if i8::try_from(n).is_ok() => out.extend_from_slice(&[0xFE, n as u8]),
        E::I(n) if i16::try_from(n).is_ok() => {
            out.push(0xC0);
            out.extend_from_slice(&(n as i16).to_le_bytes());
        }
        E::I(n) if (-(1 << 23)..1 << 23).contains(&n) => {
            out.push(0xF0);
            out.extend_from_slice(&(n as i32).to_le_bytes()[..3]);
        }
        E::I(n) if i32::try_from(n).is_ok() => {
            out.push(0xD0);
            out.extend_from_slice(&(n as i32).to_le_bytes());
        }
        E::I(n) => {
            out.push(0xE0);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
    if let E::S(s) = e {
        out.extend_from_slice(s);
    }
    out
}

fn ziplist(items: &[E<'_>]) -> Vec<u8> {
    let mut body = Vec::new();
    let mut prev = 0;
    let mut tail = 10;
    for &e in items {
        let entry = encode_entry(e, prev);
        tail = 10 + body.len();
        prev = entry.len();
        body.extend_from_slice(&entry);
    }
    let mut zl = Vec::new();
    zl.extend_from_slice(&((10 + body.len() + 1) as u32).to_le_bytes());
    zl.extend_from_slice(&(tail as u32).to_le_bytes());
    zl.extend_from_slice(&(items.len().min(0xFFFF) as u16).to_le_bytes());
    zl.extend_from_slice(&body);
    zl.push(0xFF);
    zl
}

fn zipmap(pairs: &[(&[u8], &[u8])], free: u8) -> Vec<u8> {
    let len = |out: &mut Vec<u8>, n: usize| {
        if n < 254 {
            out.push(n as u8);
        } else {
            out.push(254);
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
    };
    let mut zm = vec![pairs.len().min(254) as u8];
    for (f, v) in pairs {
        len(&mut zm, f.len());
        zm.extend_from_slice(f);
        len(&mut zm, v.len());
        zm.push(free);
        zm.extend_from_slice(v);
        zm.extend(std::iter::repeat_n(0, usize::from(free)));
    }
    zm.push(0xFF);
    zm
}

/// `ty` and `payload` read back as a value (`None` when empty).
fn read(ty: u8, payload: &[u8]) -> Result<Option<Value>, RdbError> {
    let mut r = RdbReader::new(payload, 1 << 30);
    let v = read_legacy(&mut r, ty, &lim())?;
    assert_eq!(r.position(), payload.len() as u64, "payload read whole");
    Ok(v)
}

fn blob_payload(blob: &[u8]) -> Vec<u8> {
    let mut w = RdbWriter::new(Vec::new(), false);
    w.string(blob).unwrap();
    w.into_inner()
}

fn strings(items: &[&[u8]]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.to_vec()).collect()
}

fn list_of(v: Value) -> (Vec<Vec<u8>>, &'static str) {
    let Value::Agg(Agg::List(l)) = v else { panic!("not a list") };
    (l.iter().map(|e| e.to_vec()).collect(), l.encoding())
}

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn hash_of(v: Value) -> (Pairs, &'static str) {
    let Value::Agg(Agg::Hash(h)) = v else { panic!("not a hash") };
    let mut pairs: Vec<_> = h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
    pairs.sort();
    (pairs, h.encoding())
}

fn zset_of(v: Value) -> (Vec<(Vec<u8>, f64)>, &'static str) {
    let Value::Agg(Agg::ZSet(z)) = v else { panic!("not a sorted set") };
    let mut pairs = Vec::new();
    z.for_each(|m, s| pairs.push((m.to_vec(), s)));
    (pairs, z.encoding())
}

#[test]
fn every_ziplist_encoding_decodes() {
    let long = vec![b'x'; 300];
    let huge = vec![b'y'; 20_000];
    let ints = [0, 12, 13, -1, 127, -128, 128, 32767, -32768, 40_000, -(1 << 23), (1 << 23) - 1];
    let more = [1 << 23, i64::from(i32::MIN), 1 << 31, i64::MIN, i64::MAX];
    let mut items = vec![E::S(b""), E::S(b"hello"), E::S(&long), E::S(&huge), E::S(b"after")];
    items.extend(ints.iter().chain(&more).map(|&n| E::I(n)));
    let zl = ziplist(&items);
    let got = ziplist_entries(&zl).unwrap();
    let want: Vec<ZlEntry<'_>> = items
        .iter()
        .map(|e| match *e {
            E::S(s) => ZlEntry::Str(s),
            E::I(n) => ZlEntry::Int(n),
        })
        .collect();
    assert_eq!(got, want);
    // A count too large for 16 bits is recorded as 0xFFFF and counted.
    let mut unknown = ziplist(&[E::S(b"a"), E::I(1)]);
    unknown[8..10].copy_from_slice(&[0xFF, 0xFF]);
    assert_eq!(ziplist_entries(&unknown).unwrap().len(), 2);
    assert_eq!(ziplist_entries(&ziplist(&[])).unwrap(), []);
}

#[test]
fn damaged_ziplists_are_refused() {
    let zl = ziplist(&[E::S(b"abc"), E::I(1000), E::S(&[b'z'; 70])]);
    let bad = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = zl.clone();
        f(&mut b);
        ziplist_entries(&b).unwrap_err()
    };
    assert!(bad(&|b| b[0] += 1).contains("zlbytes"));
    assert!(bad(&|b| b[4] += 1).contains("zltail"));
    assert!(bad(&|b| b[8] = 2).contains("zllen"));
    assert!(bad(&|b| *b.last_mut().unwrap() = 0).contains("end marker"));
    assert!(bad(&|b| b[10] = 5).contains("previous entry"));
    assert!(bad(&|b| b[11 + 5] = 0xC1).contains("encoding"));
    // The entry's length runs past the end (a 14-bit length instead of 3).
    assert!(bad(&|b| b[11] = 0x7F).contains("past the end"));
    // An early end marker.
    assert!(bad(&|b| b[15] = 0xFF).contains("end marker"));
    // Every cut and every flipped byte: an error or a value, never a panic.
    for cut in 0..zl.len() {
        let mut b = zl[..cut].to_vec();
        if b.len() >= 4 {
            b[0..4].copy_from_slice(&(cut as u32).to_le_bytes());
        }
        assert!(ziplist_entries(&b).is_err(), "cut at {cut}");
    }
    for i in 0..zl.len() {
        for x in [0x01, 0x40, 0x80, 0xFF] {
            let mut b = zl.clone();
            b[i] ^= x;
            let _ = ziplist_entries(&b);
        }
    }
}

#[test]
fn zipmaps_decode_with_free_space_and_long_lengths() {
    let long = vec![b'v'; 300];
    let pairs: [(&[u8], &[u8]); 3] = [(b"foo", b"bar"), (b"hello", &long), (&long[..260], b"")];
    for free in [0, 3] {
        let zm = zipmap(&pairs, free);
        assert_eq!(zipmap_pairs(&zm).unwrap(), pairs);
    }
    // The count byte 254 means "count them".
    let many: Vec<(Vec<u8>, Vec<u8>)> =
        (0..300).map(|i| (format!("f{i}").into_bytes(), b"v".to_vec())).collect();
    let many_refs: Vec<(&[u8], &[u8])> =
        many.iter().map(|(f, v)| (f.as_slice(), v.as_slice())).collect();
    assert_eq!(zipmap_pairs(&zipmap(&many_refs, 0)).unwrap().len(), 300);
}

#[test]
fn damaged_zipmaps_are_refused() {
    let zm = zipmap(&[(b"foo", b"bar"), (b"k", b"value")], 1);
    assert!(zipmap_pairs(&[0, 0xFF]).unwrap_err().contains("no entries"));
    assert!(zipmap_pairs(&[0xFF]).is_err());
    let mut count = zm.clone();
    count[0] = 3;
    assert!(zipmap_pairs(&count).unwrap_err().contains("zmlen"));
    let mut end = zm.clone();
    *end.last_mut().unwrap() = 0;
    assert!(zipmap_pairs(&end).unwrap_err().contains("end marker"));
    // A length under 254 in five bytes.
    let five = [1, 254, 3, 0, 0, 0, b'f', b'o', b'o', 0, 0, 0xFF];
    assert!(zipmap_pairs(&five).unwrap_err().contains("five bytes"));
    for cut in 0..zm.len() {
        assert!(zipmap_pairs(&zm[..cut]).is_err(), "cut at {cut}");
    }
    for i in 0..zm.len() {
        for x in [0x01, 0x40, 0x80, 0xFF] {
            let mut b = zm.clone();
            b[i] ^= x;
            let _ = zipmap_pairs(&b);
        }
    }
}

#[test]
fn plain_lists_and_ziplist_lists_load() {
    let mut w = RdbWriter::new(Vec::new(), false);
    w.length(3).unwrap();
    for s in ["a", "12", "ccc"] {
        w.string(s.as_bytes()).unwrap();
    }
    let plain = w.into_inner();
    let (items, enc) = list_of(read(TYPE_LIST, &plain).unwrap().unwrap());
    assert_eq!(items, strings(&[b"a", b"12", b"ccc"]));
    assert_eq!(enc, "listpack");
    assert!(read(TYPE_LIST, &[0]).unwrap().is_none(), "no element: an empty key");

    let zl = ziplist(&[E::S(b"x"), E::I(-5), E::I(70000)]);
    let (items, _) = list_of(read(TYPE_LIST_ZIPLIST, &blob_payload(&zl)).unwrap().unwrap());
    assert_eq!(items, strings(&[b"x", b"-5", b"70000"]));
    assert!(read(TYPE_LIST_ZIPLIST, &blob_payload(&ziplist(&[]))).unwrap().is_none());
    let err = read(TYPE_LIST_ZIPLIST, &blob_payload(&zl[1..])).unwrap_err().to_string();
    assert!(err.contains("List ziplist integrity check failed"), "{err}");
}

#[test]
fn quicklists_of_ziplists_load_and_skip_empty_nodes() {
    let big: Vec<String> = (0..1000).map(|i| format!("element-{i}")).collect();
    let big_items: Vec<E<'_>> = big.iter().map(|s| E::S(s.as_bytes())).collect();
    let mut w = RdbWriter::new(Vec::new(), false);
    w.length(3).unwrap();
    w.string(&ziplist(&big_items)).unwrap();
    w.string(&ziplist(&[])).unwrap();
    w.string(&ziplist(&[E::I(7)])).unwrap();
    let (items, enc) = list_of(read(TYPE_LIST_QUICKLIST, &w.into_inner()).unwrap().unwrap());
    assert_eq!(items.len(), 1001);
    assert_eq!(items[999], b"element-999");
    assert_eq!(items[1000], b"7");
    assert_eq!(enc, "quicklist", "a long list takes the quicklist encoding");

    let mut w = RdbWriter::new(Vec::new(), false);
    w.length(1).unwrap();
    w.string(&ziplist(&[])).unwrap();
    assert!(read(TYPE_LIST_QUICKLIST, &w.into_inner()).unwrap().is_none());
    let mut w = RdbWriter::new(Vec::new(), false);
    w.length(1).unwrap();
    w.string(b"").unwrap();
    assert!(read(TYPE_LIST_QUICKLIST, &w.into_inner()).is_err(), "a node of zero bytes");
}

#[test]
fn hash_encodings_load_and_refuse_repeated_fields() {
    let zm = zipmap(&[(b"a", b"1"), (b"b", b"two")], 0);
    let (pairs, enc) = hash_of(read(TYPE_HASH_ZIPMAP, &blob_payload(&zm)).unwrap().unwrap());
    assert_eq!(pairs, [(b"a".to_vec(), b"1".to_vec()), (b"b".to_vec(), b"two".to_vec())]);
    assert_eq!(enc, "listpack");
    let dup = zipmap(&[(b"a", b"1"), (b"a", b"2")], 0);
    assert!(read(TYPE_HASH_ZIPMAP, &blob_payload(&dup)).is_err());

    let zl = ziplist(&[E::S(b"f"), E::I(1), E::I(5), E::S(b"five")]);
    let (pairs, _) = hash_of(read(TYPE_HASH_ZIPLIST, &blob_payload(&zl)).unwrap().unwrap());
    assert_eq!(pairs, [(b"5".to_vec(), b"five".to_vec()), (b"f".to_vec(), b"1".to_vec())]);
    // Integer 5 and string "5" are the same field.
    let dup = ziplist(&[E::I(5), E::S(b"x"), E::S(b"5"), E::S(b"y")]);
    assert!(read(TYPE_HASH_ZIPLIST, &blob_payload(&dup)).is_err());
    let odd = ziplist(&[E::S(b"f"), E::I(1), E::S(b"g")]);
    let err = read(TYPE_HASH_ZIPLIST, &blob_payload(&odd)).unwrap_err().to_string();
    assert!(err.contains("Hash ziplist integrity check failed"), "{err}");
    assert!(read(TYPE_HASH_ZIPLIST, &blob_payload(&ziplist(&[]))).unwrap().is_none());

    // Past hash-max-listpack-entries (512 by default): a hashtable.
    let fields: Vec<String> = (0..600).map(|i| format!("f{i}")).collect();
    let items: Vec<E<'_>> = fields.iter().flat_map(|f| [E::S(f.as_bytes()), E::I(1)]).collect();
    let (pairs, enc) =
        hash_of(read(TYPE_HASH_ZIPLIST, &blob_payload(&ziplist(&items))).unwrap().unwrap());
    assert_eq!((pairs.len(), enc), (600, "hashtable"));
}

#[test]
fn sorted_set_ziplists_load_and_refuse_bad_scores() {
    let zl = ziplist(&[E::S(b"a"), E::I(3), E::S(b"b"), E::S(b"1.5"), E::S(b"c"), E::S(b"-inf")]);
    let (pairs, enc) = zset_of(read(TYPE_ZSET_ZIPLIST, &blob_payload(&zl)).unwrap().unwrap());
    assert_eq!(
        pairs,
        [(b"c".to_vec(), f64::NEG_INFINITY), (b"b".to_vec(), 1.5), (b"a".to_vec(), 3.0)]
    );
    assert_eq!(enc, "listpack");
    for bad in [
        ziplist(&[E::S(b"a"), E::S(b"nan")]),
        ziplist(&[E::S(b"a"), E::I(1), E::S(b"a"), E::I(2)]),
        ziplist(&[E::S(b"a"), E::I(1), E::S(b"b")]),
    ] {
        assert!(read(TYPE_ZSET_ZIPLIST, &blob_payload(&bad)).is_err());
    }
    assert!(read(TYPE_ZSET_ZIPLIST, &blob_payload(&ziplist(&[]))).unwrap().is_none());
}
