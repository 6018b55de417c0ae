//! SORT and SORT_RO: the elements of a list (in list order), a set or a sorted set (in
//! score order), sorted numerically or by bytes, optionally by the values of other keys
//! (`BY pattern`), windowed (`LIMIT`), mapped through other keys (`GET pattern`) and stored
//! as a list (`STORE`, SORT only). Valkey 7.0's semantics, in Valkey's order of checks:
//! every option is parsed (syntax and LIMIT errors) before the key is looked up (WRONGTYPE),
//! and scores that are not numbers are reported only after all of them were read.
//!
//! This module owns the command table entries, the option grammar, SORT's key finder
//! (`STORE destination` may be anywhere) and the flow of the command; `pattern.rs` owns
//! what a pattern resolves to and how two elements compare. Reads of the source key and of
//! the keys patterns name count as keyspace hits and misses, as Valkey's `lookupKeyRead`
//! does for each of them; nothing is created except the STORE destination.
//!
//! # Layout
//! - `mod.rs`: table, options, key finder, the command.
//! - `pattern.rs`: pattern lookups, scores, the comparison.

mod pattern;

use std::borrow::Cow;

use bytes::Bytes;

use crate::commands::args::int_arg;
use crate::commands::table::ks::{ACCESS, OW, RO, UPDATE};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, range, BeginSearch, Command, FindKeys, KeyBuf, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::{Db, Ttl, Value, ValueRef};
use crate::types::agg::{AggRef, AggType, Typed};
use crate::types::list::{Dir, End, ListObj, NodeLimit};
use crate::types::set::SetObj;
use crate::types::zset::ZSetObj;

use pattern::{lookup, sort_items, Compare, Item, Order};

/// A key spec that only the command's key finder can apply.
const fn unknown(flags: u32) -> KeySpec {
    KeySpec { flags, begin: BeginSearch::Unknown, find: FindKeys::Unknown }
}

/// The sorted key; the keys BY and GET patterns name (never reported: they derive from the
/// data); the STORE destination.
const SORT_KEYS: &[KeySpec] =
    &[range(RO | ACCESS, 1, 0, 1), unknown(RO | ACCESS), unknown(OW | UPDATE)];
const SORT_RO_KEYS: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1), unknown(RO | ACCESS)];

const BY_GET_NOTES: &str = "For the optional BY/GET keyword. It is marked 'unknown' because \
    the key names derive from the content of the key we sort";
const STORE_NOTES: &str = "For the optional STORE keyword. It is marked 'unknown' because the \
    keyword can appear anywhere in the argument array";

const COMPLEXITY: &str = "O(N+M*log(M)) where N is the number of elements in the list or set to \
    sort, and M the number of returned elements. When the elements are not sorted, complexity \
    is O(N).";

const TYPES: u64 = acl::SET | acl::SORTEDSET | acl::LIST | acl::SLOW | acl::DANGEROUS;

pub static COMMANDS: &[Command] = &[
    Command::new(
        "sort",
        -2,
        flag::WRITE | flag::DENYOOM | flag::MOVABLE_KEYS,
        acl::WRITE | TYPES,
        Data(sort),
    )
    .keys(SORT_KEYS)
    .key_notes(&["", BY_GET_NOTES, STORE_NOTES])
    .getkeys(sort_keys)
    .doc(
        "generic",
        "1.0.0",
        "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.",
        COMPLEXITY,
    ),
    Command::new(
        "sort_ro",
        -2,
        flag::READONLY | flag::MOVABLE_KEYS,
        acl::READ | TYPES,
        Data(sort_ro),
    )
    .keys(SORT_RO_KEYS)
    .key_notes(&["", BY_GET_NOTES])
    .getkeys(sort_keys)
    .doc(
        "generic",
        "7.0.0",
        "Returns the sorted elements of a list, a set, or a sorted set.",
        COMPLEXITY,
    ),
];

// ----- key finder --------------------------------------------------------------------------

/// The keys of SORT's unknown specs: the destination of the last `STORE` for the write spec
/// (as Valkey's `sortGetKeys` finds it, skipping LIMIT's two arguments and BY's and GET's
/// one); nothing for the BY/GET spec, whose keys depend on the data.
fn sort_keys(argv: &[Bytes], spec: &KeySpec, out: &mut KeyBuf) -> bool {
    if spec.flags & OW == 0 {
        return true;
    }
    match store_position(argv).map(u32::try_from) {
        None => true,
        Some(Ok(pos)) => {
            out.push(pos);
            true
        }
        Some(Err(_)) => false,
    }
}

/// The argument index of the last `STORE`'s destination.
fn store_position(argv: &[Bytes]) -> Option<usize> {
    let mut found = None;
    let mut i = 2;
    while i < argv.len() {
        let a = &argv[i];
        if a.eq_ignore_ascii_case(b"limit") {
            i += 2;
        } else if a.eq_ignore_ascii_case(b"get") || a.eq_ignore_ascii_case(b"by") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"store") && i + 1 < argv.len() {
            found = Some(i + 1);
        }
        i += 1;
    }
    found
}

// ----- options -----------------------------------------------------------------------------

/// Whether STORE is accepted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    ReadWrite,
    ReadOnly,
}

/// What the elements are ordered by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum By<'a> {
    /// The elements themselves.
    Element,
    /// The values of the keys (or hash fields) a pattern with a `*` names.
    Pattern(&'a [u8]),
    /// A BY pattern without `*`: not sorted at all.
    NoSort,
}

#[derive(Debug)]
struct Options<'a> {
    by: By<'a>,
    /// LIMIT offset and count; count -1 means all.
    offset: i64,
    count: i64,
    gets: Vec<&'a [u8]>,
    order: Order,
    compare: Compare,
    store: Option<&'a [u8]>,
}

/// The options after the key, in Valkey's order of checks. A later option of the same kind
/// replaces an earlier one, except that a BY without `*` anywhere turns sorting off.
/// BY and GET patterns name keys the command does not: without `full_read()` (a user who may
/// read every key) they are refused where they appear.
fn parse<'a>(
    argv: &'a [Bytes],
    mode: Mode,
    full_read: &dyn Fn() -> bool,
) -> Result<Options<'a>, CmdError> {
    let denied = |which: &str| {
        CmdError::Other(format!(
            "ERR {which} option of SORT denied due to insufficient ACL permissions."
        ))
    };
    let mut o = Options {
        by: By::Element,
        offset: 0,
        count: -1,
        gets: Vec::new(),
        order: Order::Asc,
        compare: Compare::Numeric,
        store: None,
    };
    let mut j = 2;
    while j < argv.len() {
        let word = &argv[j];
        let left = argv.len() - j - 1;
        let is = |w: &str| word.eq_ignore_ascii_case(w.as_bytes());
        if is("asc") {
            o.order = Order::Asc;
        } else if is("desc") {
            o.order = Order::Desc;
        } else if is("alpha") {
            o.compare = Compare::Alpha;
        } else if is("limit") && left >= 2 {
            o.offset = int_arg(&argv[j + 1])?;
            o.count = int_arg(&argv[j + 2])?;
            j += 2;
        } else if mode == Mode::ReadWrite && is("store") && left >= 1 {
            o.store = Some(&argv[j + 1]);
            j += 1;
        } else if is("by") && left >= 1 {
            let p: &[u8] = &argv[j + 1];
            let real = pattern::c_str(p).contains(&b'*');
            if real && !full_read() {
                return Err(denied("BY"));
            }
            o.by = match o.by {
                By::NoSort => By::NoSort,
                _ if real => By::Pattern(p),
                _ => By::NoSort,
            };
            j += 1;
        } else if is("get") && left >= 1 {
            if !full_read() {
                return Err(denied("GET"));
            }
            o.gets.push(&argv[j + 1]);
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok(o)
}

// ----- the command -------------------------------------------------------------------------

fn sort(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    sort_generic(ctx, argv, Mode::ReadWrite)
}

fn sort_ro(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    sort_generic(ctx, argv, Mode::ReadOnly)
}

fn sort_generic(ctx: &mut Ctx, argv: &[Bytes], mode: Mode) -> CmdResult {
    // Asked only when a pattern is there.
    let mut o = parse(argv, mode, &|| full_read_access(ctx, argv))?;
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let (mut items, window) = load(db, &argv[1], now, &mut o)?;
    if o.by != By::NoSort {
        score(db, &mut items, &o, now)?;
        let by_pattern = matches!(o.by, By::Pattern(_));
        sort_items(&mut items, o.compare, by_pattern, o.order, o.store.is_some());
    }
    let chosen = window.map_or(&items[..0], |(lo, hi)| &items[lo..hi]);
    match o.store {
        None => reply(ctx, chosen, &o.gets),
        Some(dst) => store(ctx, dst, chosen, &o.gets),
    }
}

/// Whether the client's user may run this SORT and read any key (Valkey's
/// `ACLUserCheckCmdWithUnrestrictedKeyAccess`).
fn full_read_access(ctx: &Ctx, argv: &[Bytes]) -> bool {
    let user = ctx.acl.user(ctx.client.user);
    if user.unrestricted() {
        return true;
    }
    let Some(cmd) = crate::commands::lookup(&argv[0]) else { return false };
    let cat = crate::commands::acl_cmd::catalog();
    let Some(id) = cat.id_of(cmd) else { return false };
    let req =
        crate::acl::check::Request { cmd, id, argv, db: ctx.client.db, databases: ctx.dbs.len() };
    crate::acl::check::unrestricted_key_access(user, cat, &req, crate::commands::table::ks::ACCESS)
}

/// The source value, read once.
enum Source<'a> {
    Missing,
    List(&'a ListObj),
    Set(&'a SetObj),
    ZSet(&'a ZSetObj),
}

impl Source<'_> {
    fn len(&self) -> usize {
        match self {
            Source::Missing => 0,
            Source::List(l) => l.len(),
            Source::Set(s) => s.len(),
            Source::ZSet(z) => z.len(),
        }
    }
}

/// The elements, and the part of them that is output (`lo..hi`; None when empty).
type Loaded = (Vec<Item>, Option<(usize, usize)>);

/// The LIMIT window as Valkey clamps it: (start, end) inclusive, empty when end < start.
fn window(offset: i64, count: i64, len: usize) -> (i64, i64) {
    let len = i64::try_from(len).expect("length fits i64");
    let mut start = offset.clamp(0, len);
    let count = count.clamp(-1, len);
    let mut end = if count < 0 { len - 1 } else { start + count - 1 };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    (start, end.min(len - 1))
}

/// The elements to sort (or, unsorted, the elements to output), and the part of them the
/// output takes (`lo..hi`; None when empty). A list or sorted set that is not sorted is
/// read only in the window, in its own order (reversed by DESC). A set that is not sorted
/// but stored is sorted by bytes instead, so that the stored list does not depend on the
/// set's layout (Valkey does the same).
fn load(db: &mut Db, key: &[u8], now: i64, o: &mut Options<'_>) -> Result<Loaded, CmdError> {
    let src = match db.get(key, now) {
        None => Source::Missing,
        Some(ValueRef::Agg(AggRef::List(l))) => Source::List(l),
        Some(ValueRef::Agg(AggRef::Set(s))) => Source::Set(s),
        Some(ValueRef::Agg(AggRef::ZSet(z))) => Source::ZSet(z),
        Some(_) => return Err(CmdError::WrongType),
    };
    if o.by == By::NoSort && matches!(src, Source::Set(_)) && o.store.is_some() {
        o.by = By::Element;
        o.compare = Compare::Alpha;
    }
    let len = src.len();
    let (start, end) = window(o.offset, o.count, len);
    let full = end >= start;
    let desc = o.order == Order::Desc;
    let mut items = Vec::new();
    match src {
        // Not sorted: read just the window, already in output order.
        Source::List(l) if o.by == By::NoSort => {
            if full {
                let n = (end - start + 1) as usize;
                let (from, dir) = match desc {
                    true => (len - 1 - start as usize, Dir::Backward),
                    false => (start as usize, Dir::Forward),
                };
                items.extend(l.walk(from, dir).take(n).map(|e| Item::new(e.to_vec())));
            }
            let n = items.len();
            return Ok((items, full.then_some((0, n))));
        }
        Source::ZSet(z) if o.by == By::NoSort => {
            if full {
                let n = (end - start + 1) as usize;
                let (lo, hi) = match desc {
                    true => (len - start as usize - n, len - start as usize),
                    false => (start as usize, start as usize + n),
                };
                z.visit(lo, hi, desc, |m, _| {
                    items.push(Item::new(m.to_vec()));
                    true
                });
            }
            let n = items.len();
            return Ok((items, full.then_some((0, n))));
        }
        Source::Missing => {}
        Source::List(l) => items.extend(l.iter().map(|e| Item::new(e.to_vec()))),
        Source::Set(s) => items.extend(s.iter().map(|e| Item::new(e.to_vec()))),
        Source::ZSet(z) => z.visit(0, len, false, |m, _| {
            items.push(Item::new(m.to_vec()));
            true
        }),
    }
    Ok((items, full.then_some((start as usize, end as usize + 1))))
}

/// Reads what each element sorts by. Every element is read (and every BY key looked up)
/// before a value that is not a number is reported, as in Valkey.
fn score(db: &mut Db, items: &mut [Item], o: &Options<'_>, now: i64) -> CmdResult {
    let mut all_numbers = true;
    for item in items.iter_mut() {
        let by: Option<Cow<'_, [u8]>> = match o.by {
            By::Pattern(p) => match lookup(db, p, &item.elem, now) {
                Some(v) => Some(Cow::Owned(v.into_owned())),
                // A missing value sorts as 0, or first by bytes.
                None => continue,
            },
            _ => None,
        };
        match o.compare {
            Compare::Numeric => {
                let text = by.as_deref().unwrap_or(&item.elem);
                match pattern::parse_score(text) {
                    Some(s) => item.score = s,
                    None => all_numbers = false,
                }
            }
            Compare::Alpha => item.by = by.map(Cow::into_owned),
        }
    }
    if all_numbers {
        Ok(())
    } else {
        Err(CmdError::SortScoreNotDouble)
    }
}

/// The reply: each element, or for each element the value of each GET pattern (nil when
/// there is none).
fn reply(ctx: &mut Ctx, chosen: &[Item], gets: &[&[u8]]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let out = &mut *ctx.out;
    out.array(chosen.len() * gets.len().max(1));
    for item in chosen {
        if gets.is_empty() {
            out.bulk(&item.elem);
        }
        for get in gets {
            match lookup(db, get, &item.elem, ctx.now_ms) {
                Some(v) => out.bulk(&v),
                None => out.null(),
            }
        }
    }
    Ok(())
}

/// STORE: the output becomes a list at `dst` (nil GET values as empty strings), replacing
/// whatever was there; an empty output deletes `dst`. Replies with the number of elements.
fn store(ctx: &mut Ctx, dst: &[u8], chosen: &[Item], gets: &[&[u8]]) -> CmdResult {
    let now = ctx.now_ms;
    let limit = NodeLimit::from_fill(ctx.config.list_max_listpack_size);
    let db = &mut ctx.dbs[ctx.client.db];
    let mut values: Vec<Cow<'_, [u8]>> = Vec::with_capacity(chosen.len() * gets.len().max(1));
    for item in chosen {
        if gets.is_empty() {
            values.push(Cow::Borrowed(&item.elem));
        }
        for get in gets {
            let v = lookup(db, get, &item.elem, now).map(Cow::into_owned).unwrap_or_default();
            values.push(Cow::Owned(v));
        }
    }
    let n = values.len();
    if n > 0 {
        let mut list = ListObj::new();
        list.grow_check(values.iter().map(|v| v.len()).sum(), n, limit);
        for v in &values {
            list.push(End::Tail, v, limit);
        }
        db.set(dst, Value::Agg(list.wrap()), Ttl::Clear, now);
        // A client blocked on the destination (BLPOP) can now be served.
        ctx.changed(dst, n as u64, KeyspaceEvents::LIST, "sortstore");
    } else if db.remove(dst, now) {
        ctx.changed(dst, 1, KeyspaceEvents::GENERIC, "del");
    }
    ctx.out.int(n as i64);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &str) -> Vec<Bytes> {
        words.split(' ').map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    #[test]
    fn store_position_is_the_last_store_outside_option_arguments() {
        assert_eq!(store_position(&args("sort k")), None);
        assert_eq!(store_position(&args("sort k STORE d")), Some(3));
        assert_eq!(store_position(&args("sort k store a sToRe b")), Some(5));
        // LIMIT takes two arguments, BY and GET one: a STORE there is an argument.
        assert_eq!(store_position(&args("sort k LIMIT store x y STORE z")), Some(7));
        assert_eq!(store_position(&args("sort k GET store x")), None);
        assert_eq!(store_position(&args("sort k by store")), None);
        // STORE as the last word has no destination.
        assert_eq!(store_position(&args("sort k STORE")), None);
    }

    #[test]
    fn key_finder_reports_store_only_for_the_write_spec() {
        let argv = args("sort k STORE d");
        let mut out = KeyBuf::new();
        assert!(sort_keys(&argv, &SORT_KEYS[1], &mut out));
        assert!(out.is_empty());
        assert!(sort_keys(&argv, &SORT_KEYS[2], &mut out));
        assert_eq!(out.iter().collect::<Vec<_>>(), [3]);
        let sort = crate::commands::lookup(b"sort").unwrap();
        let mut keys = KeyBuf::new();
        assert!(crate::commands::table::key_positions(sort, &argv, &mut keys));
        assert_eq!(keys.iter().collect::<Vec<_>>(), [1, 3]);
        let ro = crate::commands::lookup(b"sort_ro").unwrap();
        assert!(crate::commands::table::key_positions(ro, &argv, &mut keys));
        assert_eq!(keys.iter().collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn options_parse_in_valkey_order() {
        let a = args("sort k LIMIT 1 2 GET # GET h_*->f DESC ALPHA STORE d BY w_*");
        let o = parse(&a, Mode::ReadWrite, &|| true).unwrap();
        assert_eq!((o.offset, o.count, o.order, o.compare), (1, 2, Order::Desc, Compare::Alpha));
        assert_eq!(o.gets, [&b"#"[..], b"h_*->f"]);
        assert_eq!((o.store, o.by), (Some(&b"d"[..]), By::Pattern(b"w_*")));
        // A BY without '*' turns sorting off for good.
        let a = args("sort k BY nosort BY w_*");
        assert_eq!(parse(&a, Mode::ReadWrite, &|| true).unwrap().by, By::NoSort);
        let err = |line: &str, mode| parse(&args(line), mode, &|| true).unwrap_err();
        assert_eq!(err("sort k STORE d", Mode::ReadOnly), CmdError::Syntax);
        assert_eq!(err("sort k LIMIT 1", Mode::ReadWrite), CmdError::Syntax);
        assert_eq!(err("sort k LIMIT x 1", Mode::ReadWrite), CmdError::NotInteger);
        assert_eq!(err("sort k LIMIT 1 1.5", Mode::ReadWrite), CmdError::NotInteger);
        assert_eq!(err("sort k GET", Mode::ReadWrite), CmdError::Syntax);
        assert_eq!(err("sort k bogus", Mode::ReadWrite), CmdError::Syntax);
    }

    #[test]
    fn window_clamps_like_valkey() {
        assert_eq!(window(0, -1, 5), (0, 4));
        assert_eq!(window(-3, 2, 5), (0, 1));
        assert_eq!(window(1, 0, 5), (1, 0));
        assert_eq!(window(2, i64::MAX, 5), (2, 4));
        assert_eq!(window(i64::MAX, i64::MAX, 5), (4, 3));
        assert_eq!(window(5, 1, 5), (4, 3));
        assert_eq!(window(1, i64::MIN, 5), (1, 4));
        assert_eq!(window(0, -1, 0), (-1, -2));
    }
}
