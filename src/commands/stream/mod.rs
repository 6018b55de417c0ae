//! Stream commands on the entries: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM and XSETID.
//! Ids are parsed in `id`; the structure itself lives in `types::stream`.
//!
//! Replication and the AOF get deterministic forms, as Valkey propagates them: XADD with
//! `*` or `<ms>-*` is logged with the id it generated, and an approximate trim (`~`, which
//! depends on node boundaries, and on LIMIT) as the exact trim it amounted to (`MAXLEN =
//! <length left>` or `MINID = <first id left>`).
//!
//! The consumer group commands are in `group_cmd`, XREAD and XREADGROUP in `read`, XINFO in
//! `info`.

mod group_cmd;
mod id;
mod info;
mod read;

pub use group_cmd::COMMANDS as GROUP_COMMANDS;
pub use info::COMMANDS as INFO_COMMANDS;
pub use read::COMMANDS as READ_COMMANDS;

use bytes::Bytes;

use crate::commands::args::int_arg;
use crate::commands::table::ks::{ACCESS, DELETE, RO, RW, UPDATE};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, range, specs, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::resp::reply::Reply;
use crate::types::stream::{
    EntryRef, NodeLimits, StreamId, StreamObj, TrimSpec, TrimStrategy, NODE_BYTES_MAX,
};
use id::{parse_add_id, parse_id, parse_strict_id, IdArg};

const RW_UPDATE: &[KeySpec] = &[range(RW | UPDATE, 1, 0, 1)];
const RW_DELETE: &[KeySpec] = &[range(RW | DELETE, 1, 0, 1)];
const RO_ACCESS: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1)];

const G: &str = "stream";

pub static COMMANDS: &[Command] = &[
    Command::new(
        "xadd",
        -5,
        flag::WRITE | flag::DENYOOM | flag::FAST,
        acl::WRITE | acl::STREAM | acl::FAST,
        Data(xadd),
    )
    .history(&[
        ("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."),
        ("7.0.0", "Added support for the `<ms>-*` explicit ID form."),
    ])
    .tips(&["nondeterministic_output"])
    .keys(RW_UPDATE)
    .key_notes(&["UPDATE instead of INSERT because of the optional trimming feature"])
    .doc(
        G,
        "5.0.0",
        "Appends a new message to a stream. Creates the key if it doesn't exist.",
        "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
    ),
    Command::new("xlen", 2, flag::READONLY | flag::FAST, acl::READ | acl::STREAM | acl::FAST, Data(xlen))
        .keys(specs::READ1_META)
        .doc(G, "5.0.0", "Returns the number of messages in a stream.", "O(1)"),
    Command::new("xrange", -4, flag::READONLY, acl::READ | acl::STREAM | acl::SLOW, Data(xrange))
        .history(&[("6.2.0", "Added exclusive ranges.")])
        .keys(RO_ACCESS)
        .doc(
            G,
            "5.0.0",
            "Returns the messages from a stream within a range of IDs.",
            "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
        ),
    Command::new("xrevrange", -4, flag::READONLY, acl::READ | acl::STREAM | acl::SLOW, Data(xrevrange))
        .history(&[("6.2.0", "Added exclusive ranges.")])
        .keys(RO_ACCESS)
        .doc(
            G,
            "5.0.0",
            "Returns the messages from a stream within a range of IDs in reverse order.",
            "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
        ),
    Command::new("xdel", -3, flag::WRITE | flag::FAST, acl::WRITE | acl::STREAM | acl::FAST, Data(xdel))
        .keys(RW_DELETE)
        .doc(
            G,
            "5.0.0",
            "Returns the number of messages after removing them from a stream.",
            "O(1) for each single item to delete in the stream, regardless of the stream size.",
        ),
    Command::new("xtrim", -4, flag::WRITE, acl::WRITE | acl::STREAM | acl::SLOW, Data(xtrim))
        .history(&[("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option.")])
        .tips(&["nondeterministic_output"])
        .keys(RW_DELETE)
        .doc(
            G,
            "5.0.0",
            "Deletes messages from the beginning of a stream.",
            "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
        ),
    Command::new(
        "xsetid",
        -3,
        flag::WRITE | flag::DENYOOM | flag::FAST,
        acl::WRITE | acl::STREAM | acl::FAST,
        Data(xsetid),
    )
    .history(&[("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments.")])
    .keys(RW_UPDATE)
    .doc(G, "5.0.0", "An internal command for replicating stream values.", "O(1)"),
];

/// The node limits of the configuration (read at each write, so CONFIG SET applies to the
/// next append).
fn node_limits(ctx: &Ctx) -> NodeLimits {
    let m = &ctx.config.memory;
    NodeLimits {
        max_bytes: usize::try_from(m.stream_node_max_bytes).unwrap_or(usize::MAX),
        max_entries: usize::try_from(m.stream_node_max_entries).unwrap_or(usize::MAX),
    }
}

pub(super) fn err(text: &str) -> CmdError {
    CmdError::Other(format!("ERR {text}"))
}

/// XADD's and XTRIM's trimming options.
struct TrimArgs {
    spec: Option<TrimSpec>,
    /// Where the strategy's `~`/`=` and threshold are in argv (to log the exact form).
    at: usize,
    approx_mark: Option<usize>,
}

/// The options of XADD (up to its id) or XTRIM, as Valkey parses them; returns the trim and,
/// for XADD, the id's position and NOMKSTREAM.
fn parse_options(
    ctx: &Ctx,
    argv: &[Bytes],
    xadd: bool,
) -> Result<(TrimArgs, usize, bool), CmdError> {
    let mut strategy: Option<TrimStrategy> = None;
    let mut approx = false;
    let mut limit: Option<i64> = None;
    let (mut at, mut approx_mark) = (0, None);
    let mut nomkstream = false;
    let mut i = 2;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        let opt = &argv[i][..];
        if xadd && opt == b"*" {
            break;
        }
        if (opt.eq_ignore_ascii_case(b"maxlen") || opt.eq_ignore_ascii_case(b"minid")) && more > 0 {
            if strategy.is_some() {
                return Err(err(
                    "syntax error, MAXLEN and MINID options at the same time are not compatible",
                ));
            }
            approx = false;
            approx_mark = None;
            let next = &argv[i + 1][..];
            if more >= 2 && (next == b"~" || next == b"=") {
                approx = next == b"~";
                approx_mark = Some(i + 1);
                i += 1;
            }
            let arg = &argv[i + 1];
            strategy = Some(if opt.eq_ignore_ascii_case(b"maxlen") {
                let n = int_arg(arg)?;
                if n < 0 {
                    return Err(err("The MAXLEN argument must be >= 0."));
                }
                TrimStrategy::MaxLen(n as u64)
            } else {
                TrimStrategy::MinId(parse_strict_id(arg, 0)?.id)
            });
            at = i + 1;
            i += 2;
            continue;
        }
        if opt.eq_ignore_ascii_case(b"limit") && more > 0 {
            let n = int_arg(&argv[i + 1])?;
            if n < 0 {
                return Err(err("The LIMIT argument must be >= 0."));
            }
            limit = Some(n);
            i += 2;
            continue;
        }
        if xadd && opt.eq_ignore_ascii_case(b"nomkstream") {
            nomkstream = true;
            i += 1;
            continue;
        }
        if xadd {
            break; // The id (checked by the caller).
        }
        return Err(CmdError::Syntax);
    }
    if limit.is_some_and(|n| n != 0) && strategy.is_none() {
        return Err(err(
            "syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ));
    }
    if !xadd && strategy.is_none() {
        return Err(err("syntax error, XTRIM must be called with a trimming strategy"));
    }
    let limit = match limit {
        // Our primary and the AOF log exact trims (LIMIT kept, and ignored).
        _ if ctx.obeyed => 0,
        Some(_) if !approx => {
            return Err(err("syntax error, LIMIT cannot be used without the special ~ option"))
        }
        Some(n) => n as u64,
        // Approximate trims do at most 100 nodes' worth of work unless told otherwise.
        None if approx => {
            let n = 100u64.saturating_mul(ctx.config.memory.stream_node_max_entries);
            if n == 0 {
                10_000
            } else {
                n.min(1_000_000)
            }
        }
        None => 0,
    };
    let spec = strategy.map(|strategy| TrimSpec { strategy, approx, limit });
    Ok((TrimArgs { spec, at, approx_mark }, i, nomkstream))
}

/// The id of a new entry after `last`, from XADD's id argument and the clock.
fn new_id(last: StreamId, arg: Option<IdArg>, now_ms: i64) -> Result<StreamId, CmdError> {
    let smaller =
        || err("The ID specified in XADD is equal or smaller than the target stream top item");
    let id = match arg {
        None => {
            let ms = u64::try_from(now_ms).unwrap_or(0);
            if ms > last.ms {
                StreamId::new(ms, 0)
            } else {
                last.next().ok_or_else(smaller)?
            }
        }
        Some(IdArg { id, seq_given: true }) => id,
        Some(IdArg { id, seq_given: false }) if id.ms == last.ms => {
            StreamId::new(id.ms, last.seq.checked_add(1).ok_or_else(smaller)?)
        }
        Some(IdArg { id, .. }) => StreamId::new(id.ms, 0),
    };
    if id <= last {
        return Err(smaller());
    }
    Ok(id)
}

fn xadd(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (trim, id_at, nomkstream) = parse_options(ctx, argv, true)?;
    let fields_at = id_at + 1;
    let id_arg = match argv.get(id_at) {
        Some(a) if &a[..] != b"*" => Some(parse_add_id(a)?),
        _ => None,
    };
    if argv.len() < fields_at + 2 || (argv.len() - fields_at) % 2 == 1 {
        return Err(CmdError::WrongArity("xadd".into()));
    }
    if id_arg.is_some_and(|a| a.seq_given && a.id == StreamId::MIN) {
        return Err(err("The ID specified in XADD must be greater than 0-0"));
    }
    let raw: usize = argv[fields_at..].iter().map(|a| a.len()).sum();
    let limits = node_limits(ctx);
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let s = if nomkstream {
        match db.write_agg::<StreamObj>(key, ctx.now_ms)? {
            Some(s) => s,
            None => {
                ctx.out.null();
                return Ok(());
            }
        }
    } else {
        db.write_agg_or_create(key, ctx.now_ms, StreamObj::new)?
    };
    let stream = &mut s.stream;
    if stream.last_id() == StreamId::MAX {
        return Err(err("The stream has exhausted the last possible ID, unable to add more items"));
    }
    let id = new_id(stream.last_id(), id_arg, ctx.now_ms)?;
    if raw > NODE_BYTES_MAX || stream.append(id, &argv[fields_at..], limits).is_err() {
        return Err(err("Elements are too large to be stored"));
    }
    let trimmed = trim.spec.map(|spec| (spec, stream.trim(spec)));
    let exact_arg = match trim.spec {
        Some(TrimSpec { strategy: TrimStrategy::MaxLen(_), approx: true, .. }) => {
            Some(stream.len().to_string())
        }
        Some(TrimSpec { strategy: TrimStrategy::MinId(_), approx: true, .. }) => {
            Some(stream.head_id().unwrap_or(StreamId::MAX).to_string())
        }
        _ => None,
    };
    let id_text = id.to_string();
    ctx.out.bulk(id_text.as_bytes());
    ctx.changed(key, 1, KeyspaceEvents::STREAM, "xadd");
    if trimmed.is_some_and(|(_, n)| n > 0) {
        ctx.changed(key, 0, KeyspaceEvents::STREAM, "xtrim");
    }
    let rewrite_id = !matches!(id_arg, Some(IdArg { seq_given: true, .. }));
    if rewrite_id || exact_arg.is_some() {
        ctx.propagate_as(|| {
            let mut logged = argv.to_vec();
            if let (Some(mark), Some(text)) = (trim.approx_mark, exact_arg) {
                logged[mark] = Bytes::from_static(b"=");
                logged[trim.at] = Bytes::from(text);
            }
            let id_at = logged.len() - (argv.len() - id_at);
            logged[id_at] = Bytes::from(id_text);
            vec![logged]
        });
    }
    Ok(())
}

fn xlen(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let len = db.read_agg::<StreamObj>(&argv[1], ctx.now_ms)?.map_or(0, |s| s.stream.len());
    ctx.out.int(len as i64);
    Ok(())
}

fn xrange(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    range_command(ctx, argv, false)
}

fn xrevrange(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    range_command(ctx, argv, true)
}

/// An interval bound: `-`, `+`, an id (a missing sequence is `missing_seq`), or `(id`
/// exclusive.
pub(super) fn interval_bound(a: &[u8], missing_seq: u64) -> Result<(StreamId, bool), CmdError> {
    if a.len() > 1 && a[0] == b'(' {
        return Ok((parse_strict_id(&a[1..], missing_seq)?.id, true));
    }
    Ok((parse_id(a, missing_seq)?.id, false))
}

fn range_command(ctx: &mut Ctx, argv: &[Bytes], rev: bool) -> CmdResult {
    let (start_arg, end_arg) = if rev { (&argv[3], &argv[2]) } else { (&argv[2], &argv[3]) };
    let (mut start, ex) = interval_bound(start_arg, 0)?;
    if ex {
        start = start.next().ok_or_else(|| err("invalid start ID for the interval"))?;
    }
    let (mut end, ex) = interval_bound(end_arg, u64::MAX)?;
    if ex {
        end = end.prev().ok_or_else(|| err("invalid end ID for the interval"))?;
    }
    let mut count: Option<usize> = None;
    let mut j = 4;
    while j < argv.len() {
        if argv[j].eq_ignore_ascii_case(b"count") && j + 1 < argv.len() {
            count = Some(usize::try_from(int_arg(&argv[j + 1])?).unwrap_or(0));
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(s) = db.read_agg::<StreamObj>(&argv[1], ctx.now_ms)? else {
        ctx.out.array(0);
        return Ok(());
    };
    if count == Some(0) {
        ctx.out.null_array();
        return Ok(());
    }
    let limit = count.unwrap_or(usize::MAX);
    let d = ctx.out.begin_deferred(crate::resp::reply::AggKind::Array);
    let mut n = 0;
    if start <= end {
        for e in s.stream.range(start, end, rev).take(limit) {
            reply_entry(ctx.out, &e);
            n += 1;
        }
    }
    ctx.out.end_deferred(d, n);
    Ok(())
}

/// `[id, [field, value, ...]]`.
pub(super) fn reply_entry(out: &mut Reply, e: &EntryRef<'_>) {
    out.array(2);
    out.bulk(e.id().to_string().as_bytes());
    out.array(e.len() * 2);
    for (f, v) in e.fields() {
        reply_lp(out, f);
        reply_lp(out, v);
    }
}

fn reply_lp(out: &mut Reply, v: crate::types::listpack::LpEntry<'_>) {
    match v {
        crate::types::listpack::LpEntry::Str(s) => out.bulk(s),
        crate::types::listpack::LpEntry::Int(n) => out.bulk_int(n),
    }
}

fn xdel(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    // Every id is checked before anything is deleted.
    let ids = argv[2..]
        .iter()
        .map(|a| Ok(parse_strict_id(a, 0)?.id))
        .collect::<Result<Vec<_>, CmdError>>()?;
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(s) = db.write_agg::<StreamObj>(key, ctx.now_ms)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let deleted = ids.iter().filter(|&&id| s.stream.delete(id)).count();
    if deleted > 0 {
        ctx.changed(key, deleted as u64, KeyspaceEvents::STREAM, "xdel");
    }
    ctx.out.int(deleted as i64);
    Ok(())
}

fn xtrim(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (trim, end, _) = parse_options(ctx, argv, false)?;
    debug_assert_eq!(end, argv.len());
    let spec = trim.spec.expect("XTRIM has a strategy");
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(s) = db.write_agg::<StreamObj>(key, ctx.now_ms)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let removed = s.stream.trim(spec);
    let exact_arg = match spec.strategy {
        _ if !spec.approx => None,
        TrimStrategy::MaxLen(_) => Some(s.stream.len().to_string()),
        TrimStrategy::MinId(_) => Some(s.stream.head_id().unwrap_or(StreamId::MAX).to_string()),
    };
    if removed > 0 {
        ctx.changed(key, removed, KeyspaceEvents::STREAM, "xtrim");
    }
    // Logged as the exact trim it amounted to (LIMIT kept: replicas and the AOF ignore it),
    // and only when it removed something, as in Valkey.
    if let (Some(text), Some(mark), true) = (exact_arg, trim.approx_mark, removed > 0) {
        ctx.propagate_as(|| {
            let mut logged = argv.to_vec();
            logged[mark] = Bytes::from_static(b"=");
            logged[trim.at] = Bytes::from(text);
            vec![logged]
        });
    }
    ctx.out.int(removed as i64);
    Ok(())
}

/// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]
fn xsetid(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let id = parse_strict_id(&argv[2], 0)?.id;
    let mut entries_added: Option<u64> = None;
    let mut max_deleted: Option<StreamId> = None;
    let mut i = 3;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        if argv[i].eq_ignore_ascii_case(b"entriesadded") && more > 0 {
            let n = int_arg(&argv[i + 1])?;
            if n < 0 {
                return Err(err("entries_added must be positive"));
            }
            entries_added = Some(n as u64);
        } else if argv[i].eq_ignore_ascii_case(b"maxdeletedid") && more > 0 {
            let m = parse_strict_id(&argv[i + 1], 0)?.id;
            if id < m {
                return Err(err(
                    "The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                ));
            }
            max_deleted = Some(m);
        } else {
            return Err(CmdError::Syntax);
        }
        i += 2;
    }
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(s) = db.write_agg::<StreamObj>(key, ctx.now_ms)? else {
        return Err(CmdError::NoSuchKey);
    };
    let st = &mut s.stream;
    if id < st.max_deleted_id() {
        return Err(err("The ID specified in XSETID is smaller than current max_deleted_entry_id"));
    }
    // Valkey compares with the last live entry; every entry, tombstones included, is
    // compared here, so that a later XADD can never repeat an id still in a node.
    if st.tail_id().is_some_and(|top| id < top) {
        return Err(err("The ID specified in XSETID is smaller than the target stream top item"));
    }
    if entries_added.is_some_and(|n| n < st.len()) {
        return Err(err(
            "The entries_added specified in XSETID is smaller than the target stream length",
        ));
    }
    st.set_last_id(id);
    if let Some(n) = entries_added {
        st.set_entries_added(n);
    }
    if let Some(m) = max_deleted {
        st.set_max_deleted_id(m);
    }
    ctx.changed(key, 1, KeyspaceEvents::STREAM, "xsetid");
    ctx.out.ok();
    Ok(())
}
