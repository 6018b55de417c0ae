//! XREAD and XREADGROUP, blocking or not.
//!
//! Both parse their options and every stream's id first (so a wrong type, a missing group or
//! a bad id fails the command before anything changes), then serve each stream that has
//! something past its id, in argument order. XREADGROUP with `>` delivers the entries after
//! the group's last id to the consumer (the group's last id, read counter and pending entries
//! list follow), and with an id re-reads the consumer's own pending entries after it. Every
//! consumer named is created and marked seen, in every stream it names, served or not.
//!
//! When nothing could be served and BLOCK was given, the client blocks on every stream key
//! (`Ctx::block`) and the whole command runs again when one is signaled: XADD signals its
//! key, and so do deleting or replacing the key and XGROUP DESTROY, after which the run
//! again finds the group gone and answers NOGROUP, as Valkey does. XREAD's `$` is replaced in
//! the blocked command by the id it stood for, so that the run again waits for entries after
//! it rather than after whatever is last by then.
//!
//! XREADGROUP is never propagated as itself: each delivery reaches replicas and the AOF as
//! an idempotent `XCLAIM ... FORCE JUSTID LASTID`, followed by `XGROUP SETID ... ENTRIESREAD`
//! when the group's last id moved, and a consumer that NOACK created as `XGROUP
//! CREATECONSUMER` (Valkey's forms).

use bytes::Bytes;

use super::group_cmd::{lossy, setid_form, xclaim_form};
use super::id::parse_strict_id;
use super::{err, reply_entry};
use crate::commands::table::ks::{ACCESS, RO};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::resp::reply::{AggKind, Reply};
use crate::server::blocking::{BlockRequest, TimeoutReply};
use crate::spec::table::{BeginSearch, FindKeys};
use crate::types::stream::group::{ConsumerGroup, ConsumerHandle, Tracking};
use crate::types::stream::{Stream, StreamId, StreamObj};

const fn streams_keys(start_from: i32) -> [KeySpec; 1] {
    [KeySpec {
        flags: RO | ACCESS,
        begin: BeginSearch::Keyword { keyword: "STREAMS", start_from },
        find: FindKeys::Range { last_key: -1, step: 1, limit: 2 },
    }]
}
const XREAD_KEYS: &[KeySpec] = &streams_keys(1);
const XREADGROUP_KEYS: &[KeySpec] = &streams_keys(4);

pub static COMMANDS: &[Command] = &[
    Command::new(
        "xread",
        -4,
        flag::READONLY | flag::BLOCKING | flag::MOVABLE_KEYS,
        acl::READ | acl::STREAM | acl::SLOW | acl::BLOCKING,
        Data(xread),
    )
    .keys(XREAD_KEYS)
    .doc(
        "stream",
        "5.0.0",
        "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.",
        "",
    ),
    Command::new(
        "xreadgroup",
        -7,
        flag::WRITE | flag::BLOCKING | flag::MOVABLE_KEYS,
        acl::WRITE | acl::STREAM | acl::SLOW | acl::BLOCKING,
        Data(xreadgroup),
    )
    .keys(XREADGROUP_KEYS)
    .doc(
        "stream",
        "5.0.0",
        "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.",
        "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
    ),
];

fn xread(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    read(ctx, argv, false)
}

fn xreadgroup(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    read(ctx, argv, true)
}

/// Where a stream is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum From {
    /// Entries after this id (XREAD; `$` and `+` resolved).
    After(StreamId),
    /// `>`: the entries the group has not delivered yet.
    New,
    /// The consumer's pending entries after this id.
    History(StreamId),
}

struct Options<'a> {
    block_at_ms: Option<Option<i64>>,
    count: usize,
    group: Option<(&'a Bytes, &'a Bytes)>,
    noack: bool,
    streams_at: usize,
    n: usize,
}

/// BLOCK's milliseconds, as Valkey reads them (an integer, not negative; 0 waits forever).
fn block_deadline(arg: &[u8], now_ms: i64) -> Result<Option<i64>, CmdError> {
    let ms = crate::types::string::parse_i64(arg).ok_or(CmdError::TimeoutNotInteger)?;
    if ms < 0 {
        return Err(CmdError::TimeoutNegative);
    }
    if ms == 0 {
        return Ok(None);
    }
    if ms > i64::MAX - now_ms {
        return Err(CmdError::TimeoutOutOfRange);
    }
    Ok(Some(now_ms + ms))
}

fn parse_options<'a>(ctx: &Ctx, argv: &'a [Bytes], group: bool) -> Result<Options<'a>, CmdError> {
    let mut o =
        Options { block_at_ms: None, count: 0, group: None, noack: false, streams_at: 0, n: 0 };
    let mut i = 1;
    while i < argv.len() {
        let more = argv.len() - i - 1;
        let opt = &argv[i][..];
        if opt.eq_ignore_ascii_case(b"block") && more > 0 {
            i += 1;
            o.block_at_ms = Some(block_deadline(&argv[i], ctx.now_ms)?);
        } else if opt.eq_ignore_ascii_case(b"count") && more > 0 {
            i += 1;
            let n = crate::commands::args::int_arg(&argv[i])?;
            o.count = usize::try_from(n).unwrap_or(0);
        } else if opt.eq_ignore_ascii_case(b"streams") && more > 0 {
            let n = argv.len() - i - 1;
            if !n.is_multiple_of(2) {
                let (name, symbol) = if group { ("xreadgroup", '>') } else { ("xread", '$') };
                return Err(err(&format!(
                    "Unbalanced '{name}' list of streams: for each stream key an ID or '{symbol}' must be specified."
                )));
            }
            o.streams_at = i + 1;
            o.n = n / 2;
            break;
        } else if opt.eq_ignore_ascii_case(b"group") && more >= 2 {
            if !group {
                return Err(err(
                    "The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            o.group = Some((&argv[i + 1], &argv[i + 2]));
            i += 2;
        } else if opt.eq_ignore_ascii_case(b"noack") {
            if !group {
                return Err(err(
                    "The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            o.noack = true;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if o.streams_at == 0 {
        return Err(CmdError::Syntax);
    }
    if group && o.group.is_none() {
        return Err(err("Missing GROUP option for XREADGROUP"));
    }
    Ok(o)
}

const MEANINGLESS: &str = "ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The";

/// Each stream's starting point, checking types and groups on the way.
fn resolve(ctx: &mut Ctx, argv: &[Bytes], o: &Options<'_>) -> Result<Vec<From>, CmdError> {
    let mut froms = Vec::with_capacity(o.n);
    for i in 0..o.n {
        let key = &argv[o.streams_at + i];
        let arg = &argv[o.streams_at + o.n + i][..];
        let db = &mut ctx.dbs[ctx.client.db];
        let s = db.read_agg::<StreamObj>(key, ctx.now_ms)?;
        if let Some((group, _)) = o.group {
            if s.and_then(|s| s.groups()).and_then(|g| g.get(group)).is_none() {
                return Err(CmdError::Other(format!(
                    "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                    lossy(key),
                    lossy(group)
                )));
            }
        }
        let last_id = s.map_or(StreamId::MIN, |s| s.stream.last_id());
        let grouped = o.group.is_some();
        froms.push(match arg {
            b"$" if grouped => return Err(err(&format!("The $ {MEANINGLESS} $ ID would just return an empty result set."))),
            b"+" if grouped => return Err(err(&format!("The + {MEANINGLESS} + ID would just return an empty result set."))),
            b"$" => From::After(last_id),
            // The last entry: after the id before the last one made (an empty stream that
            // never had one serves nothing, as in Valkey 9.1).
            b"+" => From::After(last_id.prev().unwrap_or(StreamId::MIN)),
            b">" if grouped => From::New,
            b">" => {
                return Err(err(
                    "The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.",
                ))
            }
            _ if grouped => From::History(parse_strict_id(arg, 0)?.id),
            _ => From::After(parse_strict_id(arg, 0)?.id),
        });
    }
    Ok(froms)
}

/// The last live entry's id.
fn last_live(stream: &Stream) -> Option<StreamId> {
    stream.range(StreamId::MIN, StreamId::MAX, true).next().map(|e| e.id())
}

/// Entries after `after`, at most `count` (0: all).
fn reply_after(out: &mut Reply, stream: &Stream, after: StreamId, count: usize) {
    let d = out.begin_deferred(AggKind::Array);
    let mut n = 0;
    if let Some(start) = after.next() {
        for e in stream.range(start, StreamId::MAX, false) {
            reply_entry(out, &e);
            n += 1;
            if n == count {
                break;
            }
        }
    }
    out.end_deferred(d, n);
}

/// What one XREADGROUP read of a stream did.
struct GroupRead {
    consumer_created: bool,
    served: bool,
}

/// Delivers new entries of `stream` to the consumer (`>`), or re-reads its history.
#[allow(clippy::too_many_arguments)]
fn read_group(
    out: &mut Reply,
    stream: &Stream,
    g: &mut ConsumerGroup,
    (key, group, consumer): (&Bytes, &Bytes, &Bytes),
    from: From,
    o: &Options<'_>,
    now_ms: i64,
    forms: &mut Vec<Vec<Bytes>>,
) -> GroupRead {
    let after = match from {
        From::History(id) => Some(id),
        _ => last_live(stream).filter(|&id| id > g.last_id()).map(|_| g.last_id()),
    };
    let (handle, created): (ConsumerHandle, bool) = g.touch_consumer(consumer, now_ms);
    if created && o.noack {
        forms.push(
            [&b"XGROUP"[..], b"CREATECONSUMER", key, group, consumer]
                .iter()
                .map(|a| Bytes::copy_from_slice(a))
                .collect(),
        );
    }
    let Some(after) = after else {
        return GroupRead { consumer_created: created, served: false };
    };
    header(out, key);
    let limit = (o.count > 0).then_some(o.count);
    if let From::History(_) = from {
        let entries = g.read_history(handle, after, limit, now_ms, |id| stream.contains(id));
        out.array(entries.len());
        for h in entries {
            match stream.range(h.id, h.id, false).next().filter(|_| h.exists) {
                Some(e) => reply_entry(out, &e),
                None => {
                    out.array(2);
                    out.bulk(h.id.to_string().as_bytes());
                    out.null_array();
                }
            }
        }
        return GroupRead { consumer_created: created, served: true };
    }
    let info = stream.info();
    let tracking = if o.noack { Tracking::NoAck } else { Tracking::Pending };
    let before = g.last_id();
    let d = out.begin_deferred(AggKind::Array);
    let mut n = 0;
    let start = after.next().expect("a live entry lies after it");
    for e in stream.range(start, StreamId::MAX, false) {
        g.deliver(handle, e.id(), tracking, now_ms, &info);
        reply_entry(out, &e);
        if tracking == Tracking::Pending {
            forms.push(xclaim_form(key, group, consumer, e.id(), (now_ms, 1), g.last_id()));
        }
        n += 1;
        if Some(n) == limit {
            break;
        }
    }
    out.end_deferred(d, n);
    if g.last_id() != before {
        forms.push(setid_form(key, group, g));
    }
    GroupRead { consumer_created: created, served: true }
}

/// One served stream's key: RESP2 replies `[key, entries]` pairs, RESP3 a map.
fn header(out: &mut Reply, key: &[u8]) {
    if !out.is_resp3() {
        out.array(2);
    }
    out.bulk(key);
}

fn read(ctx: &mut Ctx, argv: &[Bytes], grouped: bool) -> CmdResult {
    let o = parse_options(ctx, argv, grouped)?;
    let froms = resolve(ctx, argv, &o)?;
    let now = ctx.now_ms;
    let kind = if ctx.out.is_resp3() { AggKind::Map } else { AggKind::Array };
    let mut forms = Vec::new();
    let mut served = 0;
    // (stream index, consumer created, served) of each XREADGROUP stream.
    let mut effects: Vec<(usize, bool, bool)> = Vec::new();
    let mark = ctx.out.len();
    let d = ctx.out.begin_deferred(kind);
    for (i, &from) in froms.iter().enumerate() {
        let key = &argv[o.streams_at + i];
        let db = &mut ctx.dbs[ctx.client.db];
        match o.group {
            None => {
                let Some(s) = db.read_agg::<StreamObj>(key, now)? else { continue };
                let From::After(after) = from else { unreachable!("XREAD reads after an id") };
                if last_live(&s.stream).is_some_and(|last| last > after) {
                    header(ctx.out, key);
                    reply_after(ctx.out, &s.stream, after, o.count);
                    served += 1;
                }
            }
            Some((group, consumer)) => {
                let s = db.write_agg::<StreamObj>(key, now)?.expect("checked by resolve");
                let (stream, groups) = s.parts_mut();
                let g = groups.and_then(|gs| gs.get_mut(group)).expect("checked by resolve");
                let names = (key, group, consumer);
                let r = read_group(ctx.out, stream, g, names, from, &o, now, &mut forms);
                served += usize::from(r.served);
                effects.push((i, r.consumer_created, r.served));
            }
        }
    }
    if served > 0 {
        ctx.out.end_deferred(d, served);
    } else {
        ctx.out.truncate(mark);
    }
    if o.group.is_some() {
        group_effects(ctx, argv, &o, &effects, forms);
    }
    if served > 0 {
        return Ok(());
    }
    match o.block_at_ms {
        Some(timeout_at_ms) if ctx.can_block() => {
            let keys = argv[o.streams_at..o.streams_at + o.n].to_vec();
            // `$` stands for the id it meant when the command first ran.
            let mut again = argv.to_vec();
            for (i, from) in froms.iter().enumerate() {
                if let (b"$", From::After(id)) = (&argv[o.streams_at + o.n + i][..], from) {
                    again[o.streams_at + o.n + i] = Bytes::from(id.to_string());
                }
            }
            let argv = (again != argv).then_some(again);
            ctx.block(BlockRequest {
                keys,
                timeout_at_ms,
                on_timeout: TimeoutReply::NullArray,
                argv,
            });
        }
        _ => ctx.out.null_array(),
    }
    Ok(())
}

/// The effects of XREADGROUP: a consumer's creation (an event), each stream served (a
/// change), and what replicas and the AOF are told instead of the command.
fn group_effects(
    ctx: &mut Ctx,
    argv: &[Bytes],
    o: &Options<'_>,
    effects: &[(usize, bool, bool)],
    forms: Vec<Vec<Bytes>>,
) {
    let mut any = false;
    for &(i, created, served) in effects {
        let key = &argv[o.streams_at + i];
        if created {
            ctx.group_changed(key, 1, Some("xgroup-createconsumer"), false);
        }
        if served {
            ctx.group_changed(key, 1, None, false);
        }
        any |= created || served;
    }
    if any {
        ctx.propagate_as(|| forms);
    }
}
