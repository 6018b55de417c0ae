//! `DEBUG DIGEST` and `DEBUG DIGEST-VALUE`: Valkey's SHA-1 signature of the dataset and of
//! single values, computed the way Valkey 9.1 computes it, so that a ferrokey server and a
//! Valkey server holding the same data give the same 40 hex digits (the Valkey test suite
//! compares primaries and replicas with it).
//!
//! Two mixing steps, over 20-byte digests: `xor(d, data)` xors SHA-1(data) into `d`, which
//! ignores order (set elements, hash fields, keys); `mix(d, data)` is `d = SHA-1(d xor
//! SHA-1(data))`, which keeps it (list elements, a key before its value). Per key: its name
//! mixed, its type code (big-endian u32) mixed, the value's digest, and `!!expire!!` xored
//! when it has an expire time; the key digests are xored into the database's, after the
//! database number (big-endian u32) is mixed into the running total. Integers count as their
//! decimal text, scores as their shortest round-trip text. Keys past their expire time and
//! not yet deleted count, as they do in Valkey.

use crate::keyspace::db::{Db, ObjView, ValueRef};
use crate::keyspace::entry::KeyEntry;
use crate::resp::reply::format_shortest;
use crate::types::agg::AggRef;
use crate::types::string::StrRef;
use crate::util::sha1::sha1;

type Digest = [u8; 20];

/// Xors SHA-1(`data`) into `d`.
fn xor(d: &mut Digest, data: &[u8]) {
    for (a, b) in d.iter_mut().zip(sha1(data)) {
        *a ^= b;
    }
}

/// `d = SHA-1(d xor SHA-1(data))`.
fn mix(d: &mut Digest, data: &[u8]) {
    xor(d, data);
    *d = sha1(d);
}

/// The digest of the whole dataset; all zeros when it is empty.
pub fn dataset(dbs: &[Db]) -> Digest {
    let mut total = [0u8; 20];
    for (n, db) in dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        mix(&mut total, &(n as u32).to_be_bytes());
        db.for_each_with_values(|key, e| {
            let mut d = [0u8; 20];
            mix(&mut d, key);
            value(&mut d, e);
            xor(&mut total, &d);
        });
    }
    total
}

/// The digest of one value (DEBUG DIGEST-VALUE): its type, contents and whether it expires,
/// without its key.
pub fn of_value(e: &KeyEntry) -> Digest {
    let mut d = [0u8; 20];
    value(&mut d, e);
    d
}

/// Valkey's type codes (`OBJ_STRING`...).
fn type_code(v: &ValueRef<'_>) -> u32 {
    match v {
        ValueRef::Str(_) => 0,
        ValueRef::Agg(AggRef::List(_)) => 1,
        ValueRef::Agg(AggRef::Set(_)) => 2,
        ValueRef::Agg(AggRef::ZSet(_)) => 3,
        ValueRef::Agg(AggRef::Hash(_)) => 4,
        ValueRef::Agg(AggRef::Stream(_)) => 6,
    }
}

fn value(d: &mut Digest, e: &KeyEntry) {
    let v = e.value_ref();
    mix(d, &type_code(&v).to_be_bytes());
    match v {
        ValueRef::Str(StrRef::Raw(b)) => mix(d, b),
        ValueRef::Str(StrRef::Int(n)) => mix(d, n.to_string().as_bytes()),
        ValueRef::Agg(AggRef::List(l)) => l.iter().for_each(|el| mix(d, &el.to_vec())),
        ValueRef::Agg(AggRef::Set(s)) => s.iter().for_each(|el| xor(d, &el.to_vec())),
        ValueRef::Agg(AggRef::Hash(h)) => {
            for (f, v) in h.iter() {
                let mut pair = [0u8; 20];
                mix(&mut pair, &f.to_vec());
                mix(&mut pair, &v.to_vec());
                xor(d, &pair);
            }
        }
        ValueRef::Agg(AggRef::Stream(s)) => {
            use crate::types::stream::StreamId;
            for e in s.stream.range(StreamId::MIN, StreamId::MAX, false) {
                let id = e.id();
                mix(d, format!("{}.{}", id.ms, id.seq).as_bytes());
                for (f, v) in e.fields() {
                    mix(d, &f.to_vec());
                    mix(d, &v.to_vec());
                }
            }
        }
        ValueRef::Agg(AggRef::ZSet(z)) => z.for_each(|m, score| {
            let mut pair = [0u8; 20];
            mix(&mut pair, m);
            mix(&mut pair, score_text(score).as_bytes());
            xor(d, &pair);
        }),
    }
    if e.expire_at().is_some() {
        xor(d, b"!!expire!!");
    }
}

/// A score as Valkey's `fpconv_dtoa` writes it.
fn score_text(score: f64) -> String {
    if score == 0.0 {
        return if score.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    if score.is_infinite() {
        return if score > 0.0 { "inf".into() } else { "-inf".into() };
    }
    format_shortest(score)
}
