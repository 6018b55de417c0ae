//! The consumer group commands that are not reads: XGROUP (CREATE, SETID, DESTROY,
//! CREATECONSUMER, DELCONSUMER, HELP), XACK, XPENDING, XCLAIM and XAUTOCLAIM, on the group
//! state of `types::stream::group`. Arguments are parsed and checked in Valkey's order, so
//! that a bad argument gets the error Valkey gives first.
//!
//! A group change is not a change of the key for WATCH or client tracking (Valkey signals
//! neither), and only XGROUP's changes raise keyspace events (`xgroup-create`, ...), plus
//! `xgroup-createconsumer` wherever a command creates a consumer; [`Ctx::group_changed`]
//! reports them so. XCLAIM and XAUTOCLAIM reach replicas and the AOF as one idempotent
//! `XCLAIM ... FORCE JUSTID LASTID` per entry they moved or dropped, as Valkey propagates
//! them; XGROUP and XACK as themselves.

use bytes::Bytes;

use super::id::{parse_id, parse_strict_id};
use super::{err, interval_bound, reply_entry};
use crate::commands::args::int_arg;
use crate::commands::command::reply_help;
use crate::commands::table::ks::{ACCESS, DELETE, INSERT, RO, RW, UPDATE};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, range, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::resp::reply::Reply;
use crate::spec::error::CmdError::SubcommandSyntax;
use crate::types::stream::group::{
    AutoClaimOptions, ClaimOptions, ClaimTime, ConsumerGroup, GroupError, PendingQuery,
};
use crate::types::stream::{Stream, StreamId, StreamObj};

const G: &str = "stream";
const KEY2_INSERT: &[KeySpec] = &[range(RW | INSERT, 2, 0, 1)];
const KEY2_DELETE: &[KeySpec] = &[range(RW | DELETE, 2, 0, 1)];
const KEY2_UPDATE: &[KeySpec] = &[range(RW | UPDATE, 2, 0, 1)];
const KEY1_UPDATE: &[KeySpec] = &[range(RW | UPDATE, 1, 0, 1)];
const KEY1_DELETE: &[KeySpec] = &[range(RW | DELETE, 1, 0, 1)];
const KEY1_ACCESS: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1)];
const SUB_ACL: u64 = acl::WRITE | acl::STREAM | acl::SLOW;

pub static XGROUP_SUBCOMMANDS: &[Command] = &[
    Command::new("xgroup|create", -5, flag::WRITE | flag::DENYOOM, SUB_ACL, Data(xgroup))
        .history(&[("7.0.0", "Added the `entries_read` named argument.")])
        .keys(KEY2_INSERT)
        .doc(G, "5.0.0", "Creates a consumer group.", "O(1)"),
    Command::new("xgroup|createconsumer", 5, flag::WRITE | flag::DENYOOM, SUB_ACL, Data(xgroup))
        .keys(KEY2_INSERT)
        .doc(G, "6.2.0", "Creates a consumer in a consumer group.", "O(1)"),
    Command::new("xgroup|delconsumer", 5, flag::WRITE, SUB_ACL, Data(xgroup))
        .keys(KEY2_DELETE)
        .doc(G, "5.0.0", "Deletes a consumer from a consumer group.", "O(1)"),
    Command::new("xgroup|destroy", 4, flag::WRITE, SUB_ACL, Data(xgroup)).keys(KEY2_DELETE).doc(
        G,
        "5.0.0",
        "Destroys a consumer group.",
        "O(N) where N is the number of entries in the group's pending entries list (PEL).",
    ),
    Command::new(
        "xgroup|help",
        2,
        flag::LOADING | flag::STALE,
        acl::STREAM | acl::SLOW,
        Data(xgroup),
    )
    .doc(G, "5.0.0", "Returns helpful text about the different subcommands.", "O(1)"),
    Command::new("xgroup|setid", -5, flag::WRITE, SUB_ACL, Data(xgroup))
        .history(&[("7.0.0", "Added the optional `entries_read` argument.")])
        .keys(KEY2_UPDATE)
        .doc(G, "5.0.0", "Sets the last-delivered ID of a consumer group.", "O(1)"),
];

pub static COMMANDS: &[Command] = &[
    Command::container("xgroup", -2, 0, acl::SLOW, XGROUP_SUBCOMMANDS).doc(
        G,
        "5.0.0",
        "A container for consumer groups commands.",
        "Depends on subcommand.",
    ),
    Command::new("xack", -4, flag::WRITE | flag::FAST, acl::WRITE | acl::STREAM | acl::FAST, Data(xack))
        .keys(KEY1_UPDATE)
        .doc(
            G,
            "5.0.0",
            "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.",
            "O(1) for each message ID processed.",
        ),
    Command::new("xpending", -3, flag::READONLY, acl::READ | acl::STREAM | acl::SLOW, Data(xpending))
        .history(&[("6.2.0", "Added the `IDLE` option and exclusive range intervals.")])
        .tips(&["nondeterministic_output"])
        .keys(KEY1_ACCESS)
        .doc(
            G,
            "5.0.0",
            "Returns the information and entries from a stream consumer group's pending entries list.",
            "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
        ),
    Command::new("xclaim", -6, flag::WRITE | flag::FAST, acl::WRITE | acl::STREAM | acl::FAST, Data(xclaim))
        .tips(&["nondeterministic_output"])
        .keys(KEY1_UPDATE)
        .doc(
            G,
            "5.0.0",
            "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered to a consumer group member.",
            "O(log N) with N being the number of messages in the PEL of the consumer group.",
        ),
    Command::new("xautoclaim", -6, flag::WRITE | flag::FAST, acl::WRITE | acl::STREAM | acl::FAST, Data(xautoclaim))
        .history(&[(
            "7.0.0",
            "Added an element to the reply array, containing deleted entries the command cleared from the PEL",
        )])
        .tips(&["nondeterministic_output"])
        .keys(KEY1_DELETE)
        .doc(
            G,
            "6.2.0",
            "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to a consumer group member.",
            "O(1) if COUNT is small.",
        ),
];

const XGROUP_HELP: &[&str] = &[
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

pub(super) fn lossy(b: &[u8]) -> String {
    // Valkey formats names with %s: the text ends at a NUL.
    let b = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
    String::from_utf8_lossy(b).into_owned()
}

/// `-NOGROUP No such key '<key>' or consumer group '<group>'` (XPENDING, XCLAIM, XAUTOCLAIM).
pub(super) fn no_key_or_group(key: &[u8], group: &[u8]) -> CmdError {
    CmdError::Other(format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        lossy(key),
        lossy(group)
    ))
}

/// `-NOGROUP No such consumer group '<group>' for key name '<key>'` (XGROUP, XINFO).
pub(super) fn no_group_for_key(group: &[u8], key: &[u8]) -> CmdError {
    CmdError::Other(format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        lossy(group),
        lossy(key)
    ))
}

/// A group's counter as Valkey prints it in propagated commands (-1: unknown).
pub(super) fn entries_read_arg(g: &ConsumerGroup) -> Bytes {
    Bytes::from(g.entries_read().map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX)).to_string())
}

fn id_bytes(id: StreamId) -> Bytes {
    Bytes::from(id.to_string())
}

/// `XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last`: the
/// idempotent form a delivery or claim of `id` reaches replicas and the AOF in.
pub(super) fn xclaim_form(
    key: &Bytes,
    group: &Bytes,
    consumer: &[u8],
    id: StreamId,
    (delivery_time_ms, delivery_count): (i64, u64),
    last_id: StreamId,
) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XCLAIM"),
        key.clone(),
        group.clone(),
        Bytes::copy_from_slice(consumer),
        Bytes::from_static(b"0"),
        id_bytes(id),
        Bytes::from_static(b"TIME"),
        Bytes::from(delivery_time_ms.to_string()),
        Bytes::from_static(b"RETRYCOUNT"),
        Bytes::from(delivery_count.to_string()),
        Bytes::from_static(b"FORCE"),
        Bytes::from_static(b"JUSTID"),
        Bytes::from_static(b"LASTID"),
        id_bytes(last_id),
    ]
}

/// `XGROUP SETID key group last ENTRIESREAD n`.
pub(super) fn setid_form(key: &Bytes, group: &Bytes, g: &ConsumerGroup) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XGROUP"),
        Bytes::from_static(b"SETID"),
        key.clone(),
        group.clone(),
        id_bytes(g.last_id()),
        Bytes::from_static(b"ENTRIESREAD"),
        entries_read_arg(g),
    ]
}

/// XGROUP's subcommands share one handler, as in Valkey: the options and the key are
/// checked in the same order whatever the subcommand.
fn xgroup(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let sub = argv[1].to_ascii_lowercase();
    if sub == b"help" {
        reply_help(ctx.out, "XGROUP", XGROUP_HELP);
        return Ok(());
    }
    let syntax = || SubcommandSyntax {
        sub: String::from_utf8_lossy(&argv[1]).into_owned(),
        cmd: "XGROUP".into(),
    };
    let (create, setid) = (sub == b"create", sub == b"setid");
    let mut mkstream = false;
    let mut entries_read: Option<u64> = None;
    let mut i = 5;
    while i < argv.len() {
        if create && argv[i].eq_ignore_ascii_case(b"mkstream") {
            mkstream = true;
            i += 1;
        } else if (create || setid)
            && argv[i].eq_ignore_ascii_case(b"entriesread")
            && i + 1 < argv.len()
        {
            let n = int_arg(&argv[i + 1])?;
            if n < -1 {
                return Err(err("value for ENTRIESREAD must be positive or -1"));
            }
            entries_read = u64::try_from(n).ok();
            i += 2;
        } else {
            return Err(syntax());
        }
    }
    let bad_arity = (create && argv.len() > 8) || (setid && argv.len() != 5 && argv.len() != 7);
    let (key, name) = (&argv[2], &argv[3]);
    let db = &mut ctx.dbs[ctx.client.db];
    let exists = db.write_agg::<StreamObj>(key, ctx.now_ms)?.is_some();
    if !exists && !mkstream {
        return Err(err(
            "The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.",
        ));
    }
    if !create && sub != b"destroy" {
        let s = db.write_agg::<StreamObj>(key, ctx.now_ms)?.expect("checked above");
        if s.groups().and_then(|g| g.get(name)).is_none() {
            return Err(no_group_for_key(name, key));
        }
    }
    if bad_arity {
        return Err(syntax());
    }
    let now = ctx.now_ms;
    match &sub[..] {
        b"create" => {
            let last_id = match &argv[4][..] {
                b"$" => None,
                a => Some(parse_strict_id(a, 0)?.id),
            };
            let s = db.write_agg_or_create(key, now, StreamObj::new)?;
            let last_id = last_id.unwrap_or(s.stream.last_id());
            match s.groups_mut().create(name, last_id, entries_read) {
                Ok(_) => {
                    db.group_changed(key, 1, Some("xgroup-create"), false, !exists);
                    ctx.out.ok();
                }
                Err(GroupError::Exists) => {
                    return Err(CmdError::Other(
                        "BUSYGROUP Consumer Group name already exists".into(),
                    ));
                }
                Err(GroupError::NoGroup) => unreachable!("create never misses a group"),
            }
        }
        b"setid" => {
            let s = db.write_agg::<StreamObj>(key, now)?.expect("checked above");
            let last_id = match &argv[4][..] {
                b"$" => s.stream.last_id(),
                a => parse_id(a, 0)?.id,
            };
            let g = s.groups_mut().require(name).expect("checked above");
            g.set_last_id(last_id, entries_read);
            ctx.group_changed(key, 1, Some("xgroup-setid"), false);
            ctx.out.ok();
        }
        b"destroy" => {
            let s = db.write_agg::<StreamObj>(key, now)?.expect("checked above");
            let destroyed = s.groups_mut().destroy(name);
            if destroyed {
                // Readers blocked on the group wake to find it gone.
                ctx.group_changed(key, 1, Some("xgroup-destroy"), true);
            }
            ctx.out.int(i64::from(destroyed));
        }
        b"createconsumer" => {
            let s = db.write_agg::<StreamObj>(key, now)?.expect("checked above");
            let g = s.groups_mut().require(name).expect("checked above");
            let created = g.create_consumer(&argv[4], now);
            if created {
                ctx.group_changed(key, 1, Some("xgroup-createconsumer"), false);
            }
            ctx.out.int(i64::from(created));
        }
        b"delconsumer" => {
            let s = db.write_agg::<StreamObj>(key, now)?.expect("checked above");
            let g = s.groups_mut().require(name).expect("checked above");
            let pending = g.delete_consumer(&argv[4]);
            if pending.is_some() {
                ctx.group_changed(key, 1, Some("xgroup-delconsumer"), false);
            }
            ctx.out.int(pending.unwrap_or(0) as i64);
        }
        _ => return Err(syntax()),
    }
    Ok(())
}

/// XACK key group id [id ...]
fn xack(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(s) = db.write_agg::<StreamObj>(key, ctx.now_ms)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let Some(g) = s.group_mut(&argv[2]) else {
        ctx.out.int(0);
        return Ok(());
    };
    // Every id is checked before any is acknowledged.
    let ids = argv[3..]
        .iter()
        .map(|a| Ok(parse_strict_id(a, 0)?.id))
        .collect::<Result<Vec<_>, CmdError>>()?;
    let acked = g.ack(&ids);
    if acked > 0 {
        ctx.group_changed(key, acked as u64, None, false);
    }
    ctx.out.int(acked as i64);
    Ok(())
}

/// XPENDING key group [[IDLE min-idle] start end count [consumer]]
fn xpending(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let argc = argv.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(CmdError::Syntax);
    }
    let mut query = None;
    if argc >= 6 {
        let mut at = 3;
        let mut min_idle_ms = 0;
        if argv[3].eq_ignore_ascii_case(b"idle") {
            min_idle_ms = int_arg(&argv[4])?;
            if argc < 8 {
                return Err(CmdError::Syntax);
            }
            at += 2;
        }
        let count = int_arg(&argv[at + 2])?.max(0);
        let (mut start, ex) = interval_bound(&argv[at], 0)?;
        if ex {
            start = start.next().ok_or_else(|| err("invalid start ID for the interval"))?;
        }
        let (mut end, ex) = interval_bound(&argv[at + 1], u64::MAX)?;
        if ex {
            end = end.prev().ok_or_else(|| err("invalid end ID for the interval"))?;
        }
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        query = Some((start, end, count, argv.get(at + 3), min_idle_ms));
    }
    let (key, name) = (&argv[1], &argv[2]);
    let db = &mut ctx.dbs[ctx.client.db];
    let g = db
        .read_agg::<StreamObj>(key, ctx.now_ms)?
        .and_then(|s| s.groups())
        .and_then(|gs| gs.get(name))
        .ok_or_else(|| no_key_or_group(key, name))?;
    let out = &mut *ctx.out;
    let Some((start, end, count, consumer, min_idle_ms)) = query else {
        out.array(4);
        match g.pending_summary() {
            None => {
                out.int(0);
                out.null();
                out.null();
                out.null_array();
            }
            Some(sum) => {
                out.int(sum.count as i64);
                out.bulk(sum.smallest.to_string().as_bytes());
                out.bulk(sum.greatest.to_string().as_bytes());
                out.array(sum.consumers.len());
                for (name, n) in sum.consumers {
                    out.array(2);
                    out.bulk(name);
                    out.bulk(n.to_string().as_bytes());
                }
            }
        }
        return Ok(());
    };
    let q = PendingQuery { start, end, count, consumer: consumer.map(|c| &c[..]), min_idle_ms };
    let rows = g.pending_range(&q, ctx.now_ms);
    out.array(rows.len());
    for row in rows {
        out.array(4);
        out.bulk(row.id.to_string().as_bytes());
        out.bulk(row.consumer);
        out.int(row.idle_ms(ctx.now_ms));
        out.int(i64::try_from(row.delivery_count).unwrap_or(i64::MAX));
    }
    Ok(())
}

/// Replies one claimed id: the entry itself, or its id alone (JUSTID).
fn reply_claimed(out: &mut Reply, stream: &Stream, id: StreamId, just_id: bool) {
    if just_id {
        out.bulk(id.to_string().as_bytes());
        return;
    }
    let e = stream.range(id, id, false).next().expect("a claimed entry exists");
    reply_entry(out, &e);
}

/// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms] [RETRYCOUNT n]
/// [FORCE] [JUSTID] [LASTID id]
fn xclaim(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, name, consumer) = (&argv[1], &argv[2], &argv[3]);
    let db = &mut ctx.dbs[ctx.client.db];
    let found = db.write_agg::<StreamObj>(key, ctx.now_ms)?;
    if found.and_then(|s| s.group_mut(name)).is_none() {
        return Err(no_key_or_group(key, name));
    }
    let invalid = |what: &str| err(&format!("Invalid {what} argument for XCLAIM"));
    let min_idle_ms =
        crate::types::string::parse_i64(&argv[4]).ok_or_else(|| invalid("min-idle-time"))?.max(0);
    let mut ids = Vec::new();
    let mut j = 5;
    while j < argv.len() {
        match parse_strict_id(&argv[j], 0) {
            Ok(a) => ids.push(a.id),
            Err(_) => break,
        }
        j += 1;
    }
    let now = ctx.now_ms;
    let mut options = ClaimOptions {
        min_idle_ms,
        time: ClaimTime::Now,
        retry_count: None,
        force: false,
        just_id: false,
        last_id: None,
    };
    while j < argv.len() {
        let more = j + 1 < argv.len();
        let opt = &argv[j][..];
        let number = |a: &Bytes, what: &str| {
            crate::types::string::parse_i64(a)
                .ok_or_else(|| err(&format!("Invalid {what} option argument for XCLAIM")))
        };
        if opt.eq_ignore_ascii_case(b"force") {
            options.force = true;
        } else if opt.eq_ignore_ascii_case(b"justid") {
            options.just_id = true;
        } else if opt.eq_ignore_ascii_case(b"idle") && more {
            j += 1;
            options.time = ClaimTime::IdleMs(number(&argv[j], "IDLE")?);
        } else if opt.eq_ignore_ascii_case(b"time") && more {
            j += 1;
            options.time = ClaimTime::UnixMs(number(&argv[j], "TIME")?);
        } else if opt.eq_ignore_ascii_case(b"retrycount") && more {
            j += 1;
            options.retry_count = u64::try_from(number(&argv[j], "RETRYCOUNT")?).ok();
        } else if opt.eq_ignore_ascii_case(b"lastid") && more {
            j += 1;
            options.last_id = Some(parse_strict_id(&argv[j], 0)?.id);
        } else {
            return Err(err(&format!("Unrecognized XCLAIM option '{}'", lossy(opt))));
        }
        j += 1;
    }
    let db = &mut ctx.dbs[ctx.client.db];
    let s = db.write_agg::<StreamObj>(key, now)?.expect("checked above");
    let (stream, groups) = s.parts_mut();
    let g = groups.and_then(|gs| gs.get_mut(name)).expect("checked above");
    // The NACKs of entries found gone are dropped: remember whose they were, to log them.
    let gone: Vec<(StreamId, Vec<u8>, (i64, u64))> = ids
        .iter()
        .filter(|&&id| !stream.contains(id))
        .filter_map(|&id| {
            let p = g.pending_entry(id)?;
            Some((id, p.consumer.to_vec(), (p.delivery_time_ms, p.delivery_count)))
        })
        .collect();
    let outcome = g.claim(consumer, &ids, &options, now, |id| stream.contains(id));
    let last_id = g.last_id();
    let mut forms = Vec::new();
    let (mut ci, mut di) = (0, 0);
    for &id in &ids {
        if outcome.deleted.get(di) == Some(&id) {
            let (_, owner, nack) = gone.iter().find(|(g_id, ..)| *g_id == id).expect("recorded");
            forms.push(xclaim_form(key, name, owner, id, *nack, last_id));
            di += 1;
        } else if outcome.claimed.get(ci) == Some(&id) {
            let nack = g.nack(id).expect("claimed ids are pending");
            let nack = (nack.delivery_time_ms, nack.delivery_count);
            forms.push(xclaim_form(key, name, consumer, id, nack, last_id));
            ci += 1;
        }
    }
    if forms.is_empty() && outcome.last_id_raised {
        forms.push(setid_form(key, name, g));
    }
    ctx.out.array(outcome.claimed.len());
    for &id in &outcome.claimed {
        reply_claimed(ctx.out, stream, id, options.just_id);
    }
    let moved = (outcome.claimed.len() + outcome.deleted.len()) as u64;
    let dirty = moved + u64::from(outcome.last_id_raised && moved == 0);
    finish_claim(ctx, key, outcome.consumer_created, dirty, forms);
    Ok(())
}

/// The effects of XCLAIM or XAUTOCLAIM: the consumer's creation event, and the changes
/// logged as `forms` (nothing is logged when nothing but the consumer changed, as in
/// Valkey, whose replicas then never hear of that consumer).
fn finish_claim(ctx: &mut Ctx, key: &Bytes, created: bool, dirty: u64, forms: Vec<Vec<Bytes>>) {
    if created {
        ctx.group_changed(key, 1, Some("xgroup-createconsumer"), false);
    }
    if dirty > 0 {
        ctx.group_changed(key, dirty, None, false);
    }
    if created || dirty > 0 {
        ctx.propagate_as(|| forms);
    }
}

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
fn xautoclaim(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, name, consumer) = (&argv[1], &argv[2], &argv[3]);
    let min_idle_ms = crate::types::string::parse_i64(&argv[4])
        .ok_or_else(|| err("Invalid min-idle-time argument for XAUTOCLAIM"))?
        .max(0);
    let (mut start, ex) = interval_bound(&argv[5], 0)?;
    if ex {
        start = start.next().ok_or_else(|| err("invalid start ID for the interval"))?;
    }
    let mut count = 100usize;
    let mut just_id = false;
    let mut j = 6;
    while j < argv.len() {
        if argv[j].eq_ignore_ascii_case(b"count") && j + 1 < argv.len() {
            // Valkey's bound: LONG_MAX / 16, so that its buffer size cannot overflow.
            let n = crate::types::string::parse_i64(&argv[j + 1]);
            count = match n {
                Some(n) if (1..=i64::MAX / 16).contains(&n) => n as usize,
                _ => return Err(err("COUNT must be > 0")),
            };
            j += 2;
        } else if argv[j].eq_ignore_ascii_case(b"justid") {
            just_id = true;
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(s) = db.write_agg::<StreamObj>(key, now)? else {
        return Err(no_key_or_group(key, name));
    };
    let (stream, groups) = s.parts_mut();
    let Some(g) = groups.and_then(|gs| gs.get_mut(name)) else {
        return Err(no_key_or_group(key, name));
    };
    let options = AutoClaimOptions { min_idle_ms, start, count, just_id };
    // Entries found gone are dropped from the PEL; their NACKs are logged as the claimer's
    // (an XCLAIM of a missing entry drops the NACK whoever it names).
    let outcome = g.autoclaim(consumer, &options, now, |id| stream.contains(id));
    let last_id = g.last_id();
    let mut forms = Vec::new();
    for &id in &outcome.deleted {
        forms.push(xclaim_form(key, name, consumer, id, (now, 0), last_id));
    }
    for &id in &outcome.claimed {
        let nack = g.nack(id).expect("claimed ids are pending");
        let nack = (nack.delivery_time_ms, nack.delivery_count);
        forms.push(xclaim_form(key, name, consumer, id, nack, last_id));
    }
    ctx.out.array(3);
    ctx.out.bulk(outcome.next.to_string().as_bytes());
    ctx.out.array(outcome.claimed.len());
    for &id in &outcome.claimed {
        reply_claimed(ctx.out, stream, id, just_id);
    }
    ctx.out.array(outcome.deleted.len());
    for id in &outcome.deleted {
        ctx.out.bulk(id.to_string().as_bytes());
    }
    let dirty = (outcome.claimed.len() + outcome.deleted.len()) as u64;
    finish_claim(ctx, key, outcome.consumer_created, dirty, forms);
    Ok(())
}
