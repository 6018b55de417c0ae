//! List commands: pushes, pops, reads by index and range, LSET, LTRIM, LREM, LINSERT, LPOS,
//! LMOVE/RPOPLPUSH and LMPOP here; the blocking variants (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
//! BLMPOP) in `blocking.rs`. Handlers parse and check their arguments in
//! Valkey's order (so the first error is Valkey's), then edit the [`ListObj`] through its
//! API; the encoding conversions are the type's, the node limit comes from
//! `list-max-listpack-size` at each command.
//!
//! Every command that adds elements to a list calls `ctx.signal_ready(key)` so that clients
//! blocked on the key get served; a command that empties a list deletes its key.
//!
//! # Layout
//! - `mod.rs`: the command table, shared helpers and the non-blocking commands.
//! - `blocking.rs`: the blocking commands (their timeout is `commands::args::parse_timeout`).

mod blocking;

use bytes::Bytes;

use crate::commands::args::{self, int_arg, is, negatable_int_arg, pop_count_arg, Args};
use crate::commands::table::ks::{ACCESS, DELETE, INSERT, RW};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, keynum, range, specs, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::resp::reply::{AggKind, Reply};
use crate::types::agg::AggType;
use crate::types::list::{Dir, End, ListObj, Needle, NodeLimit, Place};
use crate::types::listpack::LpEntry;

/// Pushes: the key is read-modified and only grows.
const PUSH_KEYS: &[KeySpec] = &[range(RW | INSERT, 1, 0, 1)];
/// Pops: elements are returned and removed.
const POP_KEYS: &[KeySpec] = &[range(RW | ACCESS | DELETE, 1, 0, 1)];
/// LTRIM, LREM: elements are removed, none returned.
const DELETE_KEYS: &[KeySpec] = &[range(RW | DELETE, 1, 0, 1)];
/// LSET.
const UPDATE_KEYS: &[KeySpec] = &[range(RW | crate::commands::table::ks::UPDATE, 1, 0, 1)];
/// LMOVE and friends: pop from the first key, push to the second.
const MOVE_KEYS: &[KeySpec] = &[range(RW | ACCESS | DELETE, 1, 0, 1), range(RW | INSERT, 2, 0, 1)];
/// BLPOP, BRPOP: every argument but the timeout.
const BPOP_KEYS: &[KeySpec] = &[range(RW | ACCESS | DELETE, 1, -2, 1)];
/// LMPOP: numkeys at 1, keys after it.
const LMPOP_KEYS: &[KeySpec] = &[keynum(RW | ACCESS | DELETE, 1)];
/// BLMPOP: the timeout at 1, numkeys at 2.
const BLMPOP_KEYS: &[KeySpec] = &[keynum(RW | ACCESS | DELETE, 2)];

const READ_FAST: (u64, u64) = (flag::READONLY | flag::FAST, acl::READ | acl::LIST | acl::FAST);
const READ_SLOW: (u64, u64) = (flag::READONLY, acl::READ | acl::LIST | acl::SLOW);
const PUSH: (u64, u64) =
    (flag::WRITE | flag::DENYOOM | flag::FAST, acl::WRITE | acl::LIST | acl::FAST);
const POP: (u64, u64) = (flag::WRITE | flag::FAST, acl::WRITE | acl::LIST | acl::FAST);
const WRITE_SLOW: (u64, u64) = (flag::WRITE, acl::WRITE | acl::LIST | acl::SLOW);
const GROW_SLOW: (u64, u64) = (flag::WRITE | flag::DENYOOM, acl::WRITE | acl::LIST | acl::SLOW);
const BLOCK: (u64, u64) =
    (flag::WRITE | flag::BLOCKING, acl::WRITE | acl::LIST | acl::SLOW | acl::BLOCKING);
const BLOCK_GROW: (u64, u64) = (
    flag::WRITE | flag::DENYOOM | flag::BLOCKING,
    acl::WRITE | acl::LIST | acl::SLOW | acl::BLOCKING,
);

const PUSH_COMPLEXITY: &str = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.";
const POP_COMPLEXITY: &str = "O(N) where N is the number of elements returned";
const MPOP_COMPLEXITY: &str =
    "O(N+M) where N is the number of provided keys and M is the number of elements returned.";
const BPOP_COMPLEXITY: &str = "O(N) where N is the number of provided keys.";

pub static COMMANDS: &[Command] = &[
    Command::new("lpush", -3, PUSH.0, PUSH.1, Data(lpush))
        .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .keys(PUSH_KEYS)
        .doc("list", "1.0.0", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", PUSH_COMPLEXITY),
    Command::new("rpush", -3, PUSH.0, PUSH.1, Data(rpush))
        .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .keys(PUSH_KEYS)
        .doc("list", "1.0.0", "Appends one or more elements to a list. Creates the key if it doesn't exist.", PUSH_COMPLEXITY),
    Command::new("lpushx", -3, PUSH.0, PUSH.1, Data(lpushx))
        .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .keys(PUSH_KEYS)
        .doc("list", "2.2.0", "Prepends one or more elements to a list only when the list exists.", PUSH_COMPLEXITY),
    Command::new("rpushx", -3, PUSH.0, PUSH.1, Data(rpushx))
        .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .keys(PUSH_KEYS)
        .doc("list", "2.2.0", "Appends one or more elements to a list only when the list exists.", PUSH_COMPLEXITY),
    Command::new("lpop", -2, POP.0, POP.1, Data(lpop))
        .history(&[("6.2.0", "Added the `count` argument.")])
        .keys(POP_KEYS)
        .doc("list", "1.0.0", "Returns and removes one or more elements from the beginning of a list. Deletes the list if the last element was popped.", POP_COMPLEXITY),
    Command::new("rpop", -2, POP.0, POP.1, Data(rpop))
        .history(&[("6.2.0", "Added the `count` argument.")])
        .keys(POP_KEYS)
        .doc("list", "1.0.0", "Returns and removes one or more elements from the end of a list. Deletes the list if the last element was popped.", POP_COMPLEXITY),
    Command::new("llen", 2, READ_FAST.0, READ_FAST.1, Data(llen))
        .keys(specs::READ1_META)
        .doc("list", "1.0.0", "Returns the length of a list.", "O(1)"),
    Command::new("lindex", 3, READ_SLOW.0, READ_SLOW.1, Data(lindex))
        .keys(specs::READ1)
        .doc("list", "1.0.0", "Returns an element from a list by its index.", "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1)."),
    Command::new("lset", 4, GROW_SLOW.0, GROW_SLOW.1, Data(lset))
        .keys(UPDATE_KEYS)
        .doc("list", "1.0.0", "Sets the value of an element in a list by its index.", "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1)."),
    Command::new("lrange", 4, READ_SLOW.0, READ_SLOW.1, Data(lrange))
        .keys(specs::READ1)
        .doc("list", "1.0.0", "Returns a range of elements from a list.", "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range."),
    Command::new("ltrim", 4, WRITE_SLOW.0, WRITE_SLOW.1, Data(ltrim))
        .keys(DELETE_KEYS)
        .doc("list", "1.0.0", "Removes elements from both ends of a list. Deletes the list if all elements were trimmed.", "O(N) where N is the number of elements to be removed by the operation."),
    Command::new("lrem", 4, WRITE_SLOW.0, WRITE_SLOW.1, Data(lrem))
        .keys(DELETE_KEYS)
        .doc("list", "1.0.0", "Removes elements from a list. Deletes the list if the last element was removed.", "O(N+M) where N is the length of the list and M is the number of elements removed."),
    Command::new("linsert", 5, GROW_SLOW.0, GROW_SLOW.1, Data(linsert))
        .keys(PUSH_KEYS)
        .doc("list", "2.2.0", "Inserts an element before or after another element in a list.", "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N)."),
    Command::new("lpos", -3, READ_SLOW.0, READ_SLOW.1, Data(lpos))
        .keys(specs::READ1)
        .doc("list", "6.0.6", "Returns the index of matching elements in a list.", "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time."),
    Command::new("lmove", 5, GROW_SLOW.0, GROW_SLOW.1, Data(lmove))
        .keys(MOVE_KEYS)
        .doc("list", "6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", "O(1)"),
    Command::new("rpoplpush", 3, GROW_SLOW.0, GROW_SLOW.1, Data(rpoplpush))
        .keys(MOVE_KEYS)
        .doc("list", "1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", "O(1)"),
    Command::new("lmpop", -4, WRITE_SLOW.0 | flag::MOVABLE_KEYS, WRITE_SLOW.1, Data(lmpop))
        .keys(LMPOP_KEYS)
        .doc("list", "7.0.0", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", MPOP_COMPLEXITY),
    Command::new("blpop", -3, BLOCK.0, BLOCK.1, Data(blocking::blpop))
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .keys(BPOP_KEYS)
        .doc("list", "2.0.0", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", BPOP_COMPLEXITY),
    Command::new("brpop", -3, BLOCK.0, BLOCK.1, Data(blocking::brpop))
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .keys(BPOP_KEYS)
        .doc("list", "2.0.0", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", BPOP_COMPLEXITY),
    Command::new("blmove", 6, BLOCK_GROW.0, BLOCK_GROW.1, Data(blocking::blmove))
        .keys(MOVE_KEYS)
        .doc("list", "6.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", "O(1)"),
    Command::new("brpoplpush", 4, BLOCK_GROW.0, BLOCK_GROW.1, Data(blocking::brpoplpush))
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .keys(MOVE_KEYS)
        .doc("list", "2.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "O(1)"),
    Command::new(
        "blmpop",
        -5,
        flag::WRITE | flag::BLOCKING | flag::MOVABLE_KEYS,
        acl::WRITE | acl::LIST | acl::SLOW | acl::BLOCKING,
        Data(blocking::blmpop),
    )
    .keys(BLMPOP_KEYS)
    .doc("list", "7.0.0", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", MPOP_COMPLEXITY),
];

// ----- helpers ---------------------------------------------------------------------------

/// The node limit of this command (`list-max-listpack-size`).
fn limit(ctx: &Ctx) -> NodeLimit {
    NodeLimit::from_fill(ctx.config.list_max_listpack_size)
}

fn reply_entry(out: &mut Reply, e: LpEntry<'_>) {
    match e {
        LpEntry::Int(n) => out.bulk_int(n),
        LpEntry::Str(s) => out.bulk(s),
    }
}

/// LEFT or RIGHT (a syntax error otherwise).
fn parse_end(a: &[u8]) -> Result<End, CmdError> {
    if is(a, "left") {
        Ok(End::Head)
    } else if is(a, "right") {
        Ok(End::Tail)
    } else {
        Err(CmdError::Syntax)
    }
}

/// Replies the (up to) `count` elements at `end` of `list` as an array, in pop order, and
/// deletes them. Returns how many.
fn pop_range(
    out: &mut Reply,
    list: &mut ListObj,
    end: End,
    count: usize,
    limit: NodeLimit,
) -> usize {
    let len = list.len();
    let n = count.min(len);
    out.array(n);
    let (start, dir, delete_from) = match end {
        End::Head => (0, Dir::Forward, 0),
        End::Tail => (len - 1, Dir::Backward, len - n),
    };
    for e in list.walk(start, dir).take(n) {
        reply_entry(out, e);
    }
    list.delete_range(delete_from, n, limit);
    list.shrink_check(limit);
    n
}

/// Replies the element at `end` as a bulk string and deletes it.
fn pop_one(out: &mut Reply, list: &mut ListObj, end: End, limit: NodeLimit) {
    let at = match end {
        End::Head => 0,
        End::Tail => list.len() - 1,
    };
    reply_entry(out, list.get(at as i64).expect("the list is not empty"));
    list.delete_range(at, 1, limit);
    list.shrink_check(limit);
}

/// An inclusive LRANGE/LTRIM range as Valkey normalizes it: None when empty, else the first
/// offset and the count.
fn clamp_range(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = i64::try_from(len).expect("list length fits i64");
    let start = if start < 0 { start.saturating_add(len).max(0) } else { start };
    let stop = if stop < 0 { stop.saturating_add(len) } else { stop };
    if start > stop || start >= len {
        return None;
    }
    let stop = stop.min(len - 1);
    Some((start as usize, (stop - start + 1) as usize))
}

/// The `lpop` / `rpop` event of a pop from `end` of `key`, then `del` when the pop emptied
/// (and so deleted) the list.
fn notify_pop(ctx: &mut Ctx, key: &[u8], dirty: u64, end: End, emptied: bool) {
    let event = match end {
        End::Head => "lpop",
        End::Tail => "rpop",
    };
    ctx.changed(key, dirty, KeyspaceEvents::LIST, event);
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
}

/// The `lpush` / `rpush` event of a push at `end` of `key`.
fn notify_push(ctx: &mut Ctx, key: &[u8], dirty: u64, end: End) {
    let event = match end {
        End::Head => "lpush",
        End::Tail => "rpush",
    };
    ctx.changed(key, dirty, KeyspaceEvents::LIST, event);
}

/// `event` of `key`, then `del` when the edit emptied (and so deleted) the list.
fn notify_edit(ctx: &mut Ctx, key: &[u8], dirty: u64, event: &'static str, emptied: bool) {
    ctx.changed(key, dirty, KeyspaceEvents::LIST, event);
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
}

// ----- pushes ----------------------------------------------------------------------------

/// Whether a push needs the key to exist (LPUSHX, RPUSHX).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Create {
    Yes,
    OnlyExisting,
}

fn push_generic(ctx: &mut Ctx, argv: &[Bytes], end: End, create: Create) -> CmdResult {
    let limit = limit(ctx);
    let (key, elements) = (&argv[1], &argv[2..]);
    let db = &mut ctx.dbs[ctx.client.db];
    let list = match create {
        Create::Yes => db.write_agg_or_create::<ListObj>(key, ctx.now_ms, ListObj::new)?,
        Create::OnlyExisting => match db.write_agg::<ListObj>(key, ctx.now_ms)? {
            Some(list) => list,
            None => {
                ctx.out.int(0);
                return Ok(());
            }
        },
    };
    list.grow_check(elements.iter().map(|e| e.len()).sum(), elements.len(), limit);
    for e in elements {
        list.push(end, e, limit);
    }
    ctx.out.int(list.len() as i64);
    notify_push(ctx, key, elements.len() as u64, end);
    Ok(())
}

fn lpush(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    push_generic(ctx, argv, End::Head, Create::Yes)
}

fn rpush(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    push_generic(ctx, argv, End::Tail, Create::Yes)
}

fn lpushx(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    push_generic(ctx, argv, End::Head, Create::OnlyExisting)
}

fn rpushx(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    push_generic(ctx, argv, End::Tail, Create::OnlyExisting)
}

// ----- pops ------------------------------------------------------------------------------

fn pop_generic(ctx: &mut Ctx, argv: &[Bytes], end: End, name: &str) -> CmdResult {
    if argv.len() > 3 {
        return Err(CmdError::WrongArity(name.to_string()));
    }
    let count = argv.get(2).map(|a| pop_count_arg(a)).transpose()?;
    let limit = limit(ctx);
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut list) = db.agg_existing::<ListObj>(key, ctx.now_ms)? else {
        match count {
            Some(_) => ctx.out.null_array(),
            None => ctx.out.null(),
        }
        return Ok(());
    };
    let popped = match count {
        // Nothing is popped, and an existing key answers an empty array.
        Some(0) => {
            ctx.out.array(0);
            return Ok(());
        }
        Some(n) => pop_range(ctx.out, list.get(), end, n, limit),
        None => {
            pop_one(ctx.out, list.get(), end, limit);
            1
        }
    };
    let emptied = list.remove_if_empty();
    notify_pop(ctx, key, popped as u64, end, emptied);
    Ok(())
}

fn lpop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    pop_generic(ctx, argv, End::Head, "lpop")
}

fn rpop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    pop_generic(ctx, argv, End::Tail, "rpop")
}

/// The command a pop from `end` propagates as.
fn pop_word(end: End) -> Bytes {
    Bytes::from_static(if end == End::Head { b"LPOP" } else { b"RPOP" })
}

/// The pop of LMPOP and BLMPOP: from the first non-empty list of `keys`, replies
/// `[key, [elements]]`. Returns false (and replies nothing) when every list is missing.
fn mpop(ctx: &mut Ctx, keys: &[Bytes], end: End, count: usize) -> Result<bool, CmdError> {
    let limit = limit(ctx);
    let db = &mut ctx.dbs[ctx.client.db];
    for key in keys {
        let Some(mut list) = db.agg_existing::<ListObj>(key, ctx.now_ms)? else { continue };
        ctx.out.array(2);
        ctx.out.bulk(key);
        let popped = pop_range(ctx.out, list.get(), end, count, limit);
        let emptied = list.remove_if_empty();
        notify_pop(ctx, key, popped as u64, end, emptied);
        // LMPOP and BLMPOP propagate as `LPOP|RPOP key count`, as in Valkey.
        let n = Bytes::from(count.to_string());
        ctx.propagate_as(|| vec![vec![pop_word(end), key.clone(), n]]);
        return Ok(true);
    }
    Ok(false)
}

/// LMPOP / BLMPOP arguments after the timeout: `numkeys key [key ...] LEFT|RIGHT [COUNT n]`,
/// from `argv[at]`.
fn parse_mpop(argv: &[Bytes], at: usize) -> Result<(&[Bytes], End, usize), CmdError> {
    args::parse_mpop(argv, at, parse_end)
}

fn lmpop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (keys, end, count) = parse_mpop(argv, 1)?;
    if !mpop(ctx, keys, end, count)? {
        ctx.out.null_array();
    }
    Ok(())
}

// ----- reads -----------------------------------------------------------------------------

fn llen(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let len = db.read_agg::<ListObj>(&argv[1], ctx.now_ms)?.map_or(0, |l| l.len());
    ctx.out.int(len as i64);
    Ok(())
}

fn lindex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    // A missing key answers null before the index is looked at.
    let Some(list) = db.read_agg::<ListObj>(&argv[1], ctx.now_ms)? else {
        ctx.out.null();
        return Ok(());
    };
    match list.get(int_arg(&argv[2])?) {
        Some(e) => reply_entry(ctx.out, e),
        None => ctx.out.null(),
    }
    Ok(())
}

fn lrange(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (start, stop) = (int_arg(&argv[2])?, int_arg(&argv[3])?);
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(list) = db.read_agg::<ListObj>(&argv[1], ctx.now_ms)? else {
        ctx.out.array(0);
        return Ok(());
    };
    let Some((first, n)) = clamp_range(start, stop, list.len()) else {
        ctx.out.array(0);
        return Ok(());
    };
    ctx.out.array(n);
    for e in list.walk(first, Dir::Forward).take(n) {
        reply_entry(ctx.out, e);
    }
    Ok(())
}

/// LPOS options.
#[derive(Clone, Copy, Debug)]
struct LposOptions {
    /// Which match to start from (1 = the first); the sign picks the direction.
    rank: i64,
    /// COUNT: None replies one index (or null), Some(0) every match.
    count: Option<u64>,
    /// MAXLEN: elements to compare at most (0: all).
    maxlen: u64,
}

fn parse_lpos(argv: &[Bytes]) -> Result<LposOptions, CmdError> {
    let mut o = LposOptions { rank: 1, count: None, maxlen: 0 };
    let mut args = Args::new(argv, 3);
    let non_negative = |a: &[u8], e: CmdError| match int_arg(a) {
        Ok(n) if n >= 0 => Ok(n as u64),
        _ => Err(e),
    };
    while let Some(opt) = args.next_opt() {
        if args.is_empty() {
            return Err(CmdError::Syntax);
        }
        if is(opt, "rank") {
            let rank = negatable_int_arg(args.next_bytes()?)?;
            if rank == 0 {
                return Err(CmdError::ListRankZero);
            }
            o.rank = rank;
        } else if is(opt, "count") {
            o.count = Some(non_negative(args.next_bytes()?, CmdError::ListCountNegative)?);
        } else if is(opt, "maxlen") {
            o.maxlen = non_negative(args.next_bytes()?, CmdError::ListMaxlenNegative)?;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(o)
}

fn lpos(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let o = parse_lpos(argv)?;
    let needle = Needle::new(&argv[2]);
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(list) = db.read_agg::<ListObj>(&argv[1], ctx.now_ms)? else {
        match o.count {
            Some(_) => ctx.out.array(0),
            None => ctx.out.null(),
        }
        return Ok(());
    };
    let len = list.len();
    let (start, dir) = if o.rank > 0 { (0, Dir::Forward) } else { (len - 1, Dir::Backward) };
    let skip = o.rank.unsigned_abs() - 1;
    let scan = if o.maxlen == 0 { len } else { usize::try_from(o.maxlen).unwrap_or(len).min(len) };
    let mut matches = list
        .walk(start, dir)
        .take(scan)
        .enumerate()
        .filter(|(_, e)| needle.matches(*e))
        .skip(usize::try_from(skip).unwrap_or(usize::MAX))
        .map(|(i, _)| if dir == Dir::Forward { i } else { len - 1 - i });
    match o.count {
        None => match matches.next() {
            Some(i) => ctx.out.int(i as i64),
            None => ctx.out.null(),
        },
        Some(count) => {
            let want =
                if count == 0 { usize::MAX } else { usize::try_from(count).unwrap_or(usize::MAX) };
            let d = ctx.out.begin_deferred(AggKind::Array);
            let mut n = 0;
            for i in matches.take(want) {
                ctx.out.int(i as i64);
                n += 1;
            }
            ctx.out.end_deferred(d, n);
        }
    }
    Ok(())
}

// ----- edits -----------------------------------------------------------------------------

fn lset(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let limit = limit(ctx);
    let (key, value) = (&argv[1], &argv[3]);
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(list) = db.write_agg::<ListObj>(key, ctx.now_ms)? else {
        return Err(CmdError::NoSuchKey);
    };
    // Valkey 9.1 hands the index to its replace-at-index helper as a C `int`, so only the low
    // 32 bits count: 2^32 is the head, i64::MAX is the tail (-1), 2^31 is out of range.
    let index = i64::from(int_arg(&argv[2])? as i32);
    list.grow_check(value.len(), 1, limit);
    if !list.set(index, value, limit) {
        return Err(CmdError::IndexOutOfRange);
    }
    list.shrink_check(limit);
    ctx.changed(key, 1, KeyspaceEvents::LIST, "lset");
    ctx.out.ok();
    Ok(())
}

fn ltrim(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (start, stop) = (int_arg(&argv[2])?, int_arg(&argv[3])?);
    let limit = limit(ctx);
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut list) = db.agg_existing::<ListObj>(key, ctx.now_ms)? else {
        ctx.out.ok();
        return Ok(());
    };
    let len = list.get().len();
    let (left, right) = match clamp_range(start, stop, len) {
        None => (len, 0),
        Some((first, n)) => (first, len - first - n),
    };
    list.get().delete_range(0, left, limit);
    list.get().delete_range(len - left - right, right, limit);
    list.get().shrink_check(limit);
    let emptied = list.remove_if_empty();
    // Raised even when nothing was trimmed, as Valkey does.
    notify_edit(ctx, key, (left + right) as u64, "ltrim", emptied);
    if left + right == 0 {
        // Changed nothing: not propagated, as in Valkey (whose rule is the dirty count).
        ctx.propagate_as(Vec::new);
    }
    ctx.out.ok();
    Ok(())
}

fn lrem(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let count = negatable_int_arg(&argv[2])?;
    let limit = limit(ctx);
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut list) = db.agg_existing::<ListObj>(key, ctx.now_ms)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let from = if count < 0 { End::Tail } else { End::Head };
    let want = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
    let removed = list.get().remove(&argv[3], want, from, limit);
    if removed > 0 {
        list.get().shrink_check(limit);
        let emptied = list.remove_if_empty();
        notify_edit(ctx, key, removed as u64, "lrem", emptied);
    }
    ctx.out.int(removed as i64);
    Ok(())
}

fn linsert(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let place = if is(&argv[2], "after") {
        Place::After
    } else if is(&argv[2], "before") {
        Place::Before
    } else {
        return Err(CmdError::Syntax);
    };
    let limit = limit(ctx);
    let (key, pivot, value) = (&argv[1], &argv[3], &argv[4]);
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(list) = db.write_agg::<ListObj>(key, ctx.now_ms)? else {
        ctx.out.int(0);
        return Ok(());
    };
    // As Valkey: the conversion is decided before the pivot is known to exist.
    list.grow_check(value.len(), 1, limit);
    if !list.insert(pivot, value, place, limit) {
        ctx.out.int(-1);
        return Ok(());
    }
    ctx.out.int(list.len() as i64);
    ctx.changed(key, 1, KeyspaceEvents::LIST, "linsert");
    Ok(())
}

/// LMOVE's work once the source is known to exist: pops from `src`, pushes to `dst` (which
/// may be the same list), replies the element.
fn move_element(ctx: &mut Ctx, src: &Bytes, dst: &Bytes, from: End, to: End) -> CmdResult {
    let limit = limit(ctx);
    let now_ms = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    if db.write_agg::<ListObj>(src, now_ms)?.is_none() {
        ctx.out.null();
        return Ok(());
    }
    // The destination's type is checked before anything moves.
    db.write_agg::<ListObj>(dst, now_ms)?;
    let list = db.write_agg::<ListObj>(src, now_ms)?.expect("checked above");
    let value = list.pop(from, limit).expect("a stored list is not empty");
    let emptied = if src == dst {
        // Valkey pushes before it checks the popped list for shrinking.
        list.grow_check(value.len(), 1, limit);
        list.push(to, &value, limit);
        list.shrink_check(limit);
        false
    } else {
        list.shrink_check(limit);
        let emptied = db.remove_if_empty(src);
        let target = db.write_agg_or_create::<ListObj>(dst, now_ms, ListObj::new)?;
        target.grow_check(value.len(), 1, limit);
        target.push(to, &value, limit);
        emptied
    };
    ctx.out.bulk(&value);
    // Valkey pushes first, then pops: the destination's events (`new` included) come first.
    notify_push(ctx, dst, 1, to);
    notify_pop(ctx, src, 0, from, emptied);
    Ok(())
}

fn lmove(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let from = parse_end(&argv[3])?;
    let to = parse_end(&argv[4])?;
    move_element(ctx, &argv[1], &argv[2], from, to)
}

fn rpoplpush(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    move_element(ctx, &argv[1], &argv[2], End::Tail, End::Head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_clamp_as_valkey() {
        assert_eq!(clamp_range(0, -1, 5), Some((0, 5)));
        assert_eq!(clamp_range(-100, 100, 5), Some((0, 5)));
        assert_eq!(clamp_range(2, 1, 5), None);
        assert_eq!(clamp_range(5, 10, 5), None);
        assert_eq!(clamp_range(-2, -1, 5), Some((3, 2)));
        assert_eq!(clamp_range(0, -6, 5), None);
        assert_eq!(clamp_range(i64::MIN, i64::MAX, 5), Some((0, 5)));
        assert_eq!(clamp_range(i64::MAX, i64::MIN, 5), None);
        assert_eq!(clamp_range(0, 0, 0), None);
    }
}
