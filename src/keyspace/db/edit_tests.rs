//! Edits of big string values through [`Db::update_str`]: a refused edit copies and changes
//! nothing, an accepted one costs what it changes (allocation counts and buffer addresses,
//! never timings), and memory reports follow the buffer's capacity.

use super::*;
use crate::memory::{size_class, thread_allocated_gross};

const T0: i64 = 1_000_000;
const MIB: usize = 1 << 20;

/// A db holding `key` = `len` bytes of binary text (every byte value, NUL and CR LF too).
fn db_with(key: &[u8], len: usize) -> Db {
    let mut db = Db::new();
    let value: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    db.set_str(key, StrValue::Raw(value.into_boxed_slice()), Ttl::At(T0 + 60_000), T0);
    db
}

fn bytes_of(db: &mut Db, key: &[u8]) -> Vec<u8> {
    db.peek(key, T0).and_then(ValueRef::as_str).expect("a string").to_vec()
}

fn addr(db: &Db, key: &[u8]) -> Option<*const u8> {
    db.stored(key).and_then(|e| e.value_addr())
}

/// A check that decides an edit from a borrowed view of the value, or refuses it.
type Refusal = dyn Fn(StrRef<'_>) -> Result<(StrEdit<'static>, ()), &'static str>;

/// Bytes allocated (gross) while `f` runs.
fn allocated_by<R>(f: impl FnOnce() -> R) -> (u64, R) {
    let before = thread_allocated_gross();
    let r = f();
    (thread_allocated_gross() - before, r)
}

#[test]
fn refused_edits_copy_nothing_and_change_nothing() {
    let mut db = db_with(b"big", 4 * MIB);
    let before = bytes_of(&mut db, b"big");
    let (at, lru) = (addr(&db, b"big"), db.stored(b"big").unwrap().lru());
    // A counter on a non-integer, a float on a non-float, a length limit.
    let refusals: [&Refusal; 3] = [
        &|s| s.as_i64().map(|n| (StrEdit::Replace(StrValue::Int(n + 1)), ())).ok_or("int"),
        &|s| s.as_long_double().map(|_| (StrEdit::Append(b"x"), ())).ok_or("float"),
        &|s| if s.len() + 1 > 4 * MIB { Err("too long") } else { Ok((StrEdit::Append(b"x"), ())) },
    ];
    for refuse in refusals {
        let (bytes, r) =
            allocated_by(|| db.update_str(b"big", T0 + 5, |s| refuse(s).map_err(|_| WrongType)));
        assert_eq!(r, Err(WrongType));
        assert!(bytes < 4096, "a refused edit allocated {bytes} bytes");
    }
    assert_eq!(addr(&db, b"big"), at);
    assert_eq!(db.stored(b"big").unwrap().lru(), lru, "a refused edit is not an access");
    assert_eq!(bytes_of(&mut db, b"big"), before);
}

#[test]
fn setrange_inside_a_big_value_writes_in_place() {
    let mut db = db_with(b"big", 4 * MIB);
    let mut expected = bytes_of(&mut db, b"big");
    let at = addr(&db, b"big");
    for i in 0..200usize {
        let offset = (i * 20_011) % (4 * MIB - 3);
        let (bytes, r) = allocated_by(|| {
            db.update_str(b"big", T0, |s| {
                Ok::<_, WrongType>((StrEdit::SetRange { offset, bytes: b"\r\n\0" }, s.len()))
            })
        });
        assert_eq!(r, Ok(Some(4 * MIB)));
        assert!(bytes < 4096, "SETRANGE in place allocated {bytes} bytes");
        expected[offset..offset + 3].copy_from_slice(b"\r\n\0");
    }
    assert_eq!(addr(&db, b"big"), at);
    assert_eq!(bytes_of(&mut db, b"big"), expected);
    let e = db.stored(b"big").unwrap();
    assert_eq!((e.encoding(), e.expire_at()), ("raw", Some(T0 + 60_000)));
}

#[test]
fn appends_move_the_buffer_a_logarithmic_number_of_times() {
    let mut db = Db::new();
    let chunk: Vec<u8> = (0..4096).map(|i| (i % 256) as u8).collect();
    let mut expected = Vec::new();
    let (mut moves, mut last) = (0, None);
    let (bytes, ()) = allocated_by(|| {
        for _ in 0..2048 {
            let r = db.update_str(b"k", T0, |s| {
                Ok::<_, WrongType>((StrEdit::Append(&chunk), s.len() + chunk.len()))
            });
            if r == Ok(None) {
                db.set_str(b"k", StrValue::Raw(chunk.clone().into_boxed_slice()), Ttl::Clear, T0);
            }
            expected.extend_from_slice(&chunk);
            let now = addr(&db, b"k");
            moves += (now != last) as u32;
            last = now;
        }
    });
    assert_eq!(bytes_of(&mut db, b"k"), expected);
    // Doubling from 8 KiB to 1 MiB, then one step per MiB up to 8 MiB: about 16 growths
    // (a realloc may also extend in place, so moves can only be fewer). Without spare room
    // every append would rebuild the value: 2,048 moves and 8 GiB copied.
    assert!(moves <= 20, "{moves} moves");
    assert!(bytes < 64 * MIB as u64, "8 MiB of appends allocated {bytes} bytes");
    let e = db.stored(b"k").unwrap();
    assert_eq!(e.encoding(), "raw");
    // MEMORY USAGE counts the spare room: the buffer's size class, beyond the 8 MiB held.
    let held = 2048 * 4096;
    assert!(e.alloc_bytes() > size_class(held + 16), "{}", e.alloc_bytes());
    assert!(e.alloc_bytes() <= size_class(held + MIB + 16) + 64, "{}", e.alloc_bytes());
}

#[test]
fn short_values_grow_inline_then_move_out_with_room() {
    let mut db = Db::new();
    db.set_str(b"n", StrValue::Int(12), Ttl::Clear, T0);
    let append = |db: &mut Db, tail: &'static [u8]| {
        db.update_str(b"n", T0, |s| Ok::<_, WrongType>((StrEdit::Append(tail), s.len())))
    };
    append(&mut db, b"34").unwrap();
    assert_eq!(bytes_of(&mut db, b"n"), b"1234");
    assert_eq!(db.stored(b"n").unwrap().encoding(), "raw");
    assert_eq!(addr(&db, b"n"), None, "still inline");
    append(&mut db, &[b'x'; 251]).unwrap();
    assert_eq!(addr(&db, b"n"), None, "255 bytes still fit inline");
    append(&mut db, b"\0").unwrap();
    let at = addr(&db, b"n");
    assert!(at.is_some(), "256 bytes live out of line");
    // The move out left room: the next appends do not move the buffer.
    for _ in 0..100 {
        append(&mut db, b"y").unwrap();
    }
    assert_eq!(addr(&db, b"n"), at);
    let v = bytes_of(&mut db, b"n");
    assert_eq!((v.len(), &v[..4], v[255], v[355]), (356, &b"1234"[..], 0, b'y'));
    // An integer replaced by an integer stays an integer, in place.
    db.set_str(b"c", StrValue::Int(1), Ttl::Clear, T0);
    let r = db.update_str(b"c", T0, |s| {
        let n = s.as_i64().unwrap() + 41;
        Ok::<_, WrongType>((StrEdit::Replace(StrValue::Int(n)), n))
    });
    assert_eq!(r, Ok(Some(42)));
    assert_eq!(db.peek(b"c", T0).and_then(ValueRef::as_str), Some(StrRef::Int(42)));
    assert_eq!(db.stored(b"c").unwrap().encoding(), "int");
    db.check_invariants();
}
