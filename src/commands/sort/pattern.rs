//! What SORT's BY and GET patterns find, how a value becomes a score, and how two elements
//! compare. Patterns, numbers and (without STORE) ALPHA comparisons follow Valkey's C
//! string handling: each stops at the first NUL byte, as `strchr`, `strstr`, `strtod` and
//! `strcoll` (in the C and C.UTF-8 locales, byte order) do there.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::keyspace::db::{Db, ValueRef};
use crate::types::agg::AggRef;
use crate::types::zset::range::strtod;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Asc,
    Desc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// By score (the element or its BY value as a double), ties by element bytes.
    Numeric,
    /// By bytes (ALPHA).
    Alpha,
}

/// One element being sorted.
#[derive(Debug)]
pub struct Item {
    pub elem: Vec<u8>,
    /// Numeric sort: the score (0 when the BY value is missing).
    pub score: f64,
    /// ALPHA sort by a pattern: the BY value (None when missing: sorts first).
    pub by: Option<Vec<u8>>,
}

impl Item {
    pub fn new(elem: Vec<u8>) -> Item {
        Item { elem, score: 0.0, by: None }
    }
}

/// The bytes before the first NUL: what C string functions see.
pub fn c_str(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |nul| &b[..nul])
}

/// Where a pattern points for one element.
#[derive(Debug, PartialEq, Eq)]
enum Target<'p, 'e> {
    /// `#`: the element itself.
    Element(&'e [u8]),
    /// The string at `key`, or with a field (`key->field`) the hash field.
    Key { key: Vec<u8>, field: Option<&'p [u8]> },
}

/// Resolves `pattern` for `elem`: `#` is the element; otherwise the first `*` is replaced by
/// the element, and a `->` after it (with something after the arrow) splits off a hash
/// field. None when the pattern has no `*` (a fixed key is never looked up).
fn target<'p, 'e>(pattern: &'p [u8], elem: &'e [u8]) -> Option<Target<'p, 'e>> {
    let c = c_str(pattern);
    if c == b"#" {
        return Some(Target::Element(elem));
    }
    let star = c.iter().position(|&b| b == b'*')?;
    let arrow = c[star + 1..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + 1 + i)
        .filter(|&at| at + 2 < c.len());
    // The field runs to the end of the pattern, NULs included (its length is the pattern's).
    let (key_end, field) = match arrow {
        Some(at) => (at, Some(&pattern[at + 2..])),
        None => (pattern.len(), None),
    };
    let mut key = Vec::with_capacity(key_end - 1 + elem.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(&pattern[star + 1..key_end]);
    Some(Target::Key { key, field })
}

/// The value `pattern` finds for `elem`: the element, a string, or a hash field; None when
/// the key is missing or of another type, or the field is missing. A key lookup counts as
/// a keyspace hit or miss, as each `lookupKeyRead` of Valkey's does.
pub fn lookup<'e>(db: &mut Db, pattern: &[u8], elem: &'e [u8], now: i64) -> Option<Cow<'e, [u8]>> {
    let (key, field) = match target(pattern, elem)? {
        Target::Element(e) => return Some(Cow::Borrowed(e)),
        Target::Key { key, field } => (key, field),
    };
    let found = match (db.get(&key, now)?, field) {
        (ValueRef::Str(s), None) => s.to_vec(),
        (ValueRef::Agg(AggRef::Hash(h)), Some(f)) => h.get(f, now)?.to_vec(),
        _ => return None,
    };
    Some(Cow::Owned(found))
}

/// A value as a sort score, by Valkey 9.1's rule: [`strtod`] must read the whole C string
/// (an empty one is no number), without overflow or underflow to zero, and not NaN.
/// Subnormal results are fine, and hex is not a number (fast_float's grammar, not libc's).
pub fn parse_score(v: &[u8]) -> Option<f64> {
    let text = c_str(v);
    let p = strtod(text)?;
    let ok = p.end == text.len() && !p.out_of_range && !p.value.is_nan();
    ok.then_some(p.value)
}

/// Sorts in place. Numeric: by score, equal scores by element bytes. ALPHA: by the BY
/// values (missing ones first) or by the elements; without STORE as `strcoll` compares C
/// strings, with STORE by all bytes (Valkey's choice, so a stored result is binary exact).
/// The sort is stable, so elements that compare equal keep their order. `by_pattern` says
/// whether ALPHA compares BY values (two missing ones are equal) or the elements.
pub fn sort_items(
    items: &mut [Item],
    compare: Compare,
    by_pattern: bool,
    order: Order,
    store: bool,
) {
    let bytes = |a: &[u8], b: &[u8]| if store { a.cmp(b) } else { c_str(a).cmp(c_str(b)) };
    let cmp = |a: &Item, b: &Item| match compare {
        Compare::Numeric => a
            .score
            .partial_cmp(&b.score)
            .expect("scores are never NaN")
            .then_with(|| a.elem.cmp(&b.elem)),
        Compare::Alpha => match (&a.by, &b.by) {
            (Some(x), Some(y)) => bytes(x, y),
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (None, None) if by_pattern => Ordering::Equal,
            (None, None) => bytes(&a.elem, &b.elem),
        },
    };
    match order {
        Order::Asc => items.sort_by(cmp),
        Order::Desc => items.sort_by(|a, b| cmp(b, a)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'p>(key: &str, field: Option<&'p [u8]>) -> Option<Target<'p, 'static>> {
        Some(Target::Key { key: key.as_bytes().to_vec(), field })
    }

    #[test]
    fn patterns_resolve_like_valkey() {
        assert_eq!(target(b"#", b"e"), Some(Target::Element(b"e")));
        assert_eq!(target(b"#\0x", b"e"), Some(Target::Element(b"e")));
        assert_eq!(target(b"nostar", b"e"), None);
        // A '*' after a NUL is not seen.
        assert_eq!(target(b"a\0*", b"e"), None);
        assert_eq!(target(b"w_*", b"e"), key("w_e", None));
        assert_eq!(target(b"a*b*c", b"e"), key("aeb*c", None));
        assert_eq!(target(b"h_*->f", b"e"), key("h_e", Some(b"f")));
        assert_eq!(target(b"h_*x->f->g", b"e"), key("h_ex", Some(b"f->g")));
        // An arrow at the end (or before the '*') is part of the key.
        assert_eq!(target(b"h_*->", b"e"), key("h_e->", None));
        assert_eq!(target(b"h->_*", b"e"), key("h->_e", None));
        // Bytes after a NUL stay in the key or field.
        assert_eq!(target(b"k*\0z", b"e"), key("ke\0z", None));
        assert_eq!(target(b"k*->f\0g", b"e"), key("ke", Some(b"f\0g")));
    }

    #[test]
    fn scores_follow_valkey_strtod() {
        assert_eq!(parse_score(b"1.5"), Some(1.5));
        assert_eq!(parse_score(b"+.5"), Some(0.5));
        assert_eq!(parse_score(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_score(b"1e-310"), Some(1e-310));
        assert_eq!(parse_score(b"3\0junk"), Some(3.0));
        for bad in [
            &b"x"[..],
            b"1 ",
            b" ",
            b" \t-2",
            b"0x10",
            b"nan",
            b"1e400",
            b"1e-400",
            b"1e-324",
            b"1x",
        ] {
            assert_eq!(parse_score(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    fn items(elems: &[&str]) -> Vec<Item> {
        elems.iter().map(|e| Item::new(e.as_bytes().to_vec())).collect()
    }

    fn elems(items: &[Item]) -> Vec<String> {
        items.iter().map(|i| String::from_utf8_lossy(&i.elem).into_owned()).collect()
    }

    #[test]
    fn comparisons() {
        let mut v = items(&["b", "a", "c"]);
        for (i, s) in [2.0, 2.0, 1.0].into_iter().enumerate() {
            v[i].score = s;
        }
        sort_items(&mut v, Compare::Numeric, false, Order::Asc, false);
        assert_eq!(elems(&v), ["c", "a", "b"]);
        sort_items(&mut v, Compare::Numeric, false, Order::Desc, false);
        assert_eq!(elems(&v), ["b", "a", "c"]);
        // Without STORE, ALPHA stops at a NUL (equal elements keep their order).
        let mut v = items(&["a\0z", "a\0b", "B"]);
        sort_items(&mut v, Compare::Alpha, false, Order::Asc, false);
        assert_eq!(elems(&v), ["B", "a\0z", "a\0b"]);
        sort_items(&mut v, Compare::Alpha, false, Order::Asc, true);
        assert_eq!(elems(&v), ["B", "a\0b", "a\0z"]);
        // By pattern: missing values first, equal to each other.
        let mut v = items(&["x", "y", "z"]);
        v[0].by = Some(b"2".to_vec());
        sort_items(&mut v, Compare::Alpha, true, Order::Asc, false);
        assert_eq!(elems(&v), ["y", "z", "x"]);
    }
}
