//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP, field for
//! field as Valkey 9.1 replies them.
//!
//! `radix-tree-keys` is the number of nodes (Valkey keys its radix tree by each node's first
//! id). `radix-tree-nodes` counts the nodes Valkey's radix tree of those 16-byte keys would
//! have: ferrokey keeps its nodes in a sorted deque, not a radix tree, so the figure is
//! computed from the keys ([`rax_nodes`]): one node per branching point, one per run of
//! bytes shared below it, one per key end, as a compressed radix tree holds them.

use bytes::Bytes;

use super::group_cmd::no_group_for_key;
use super::reply_entry;
use crate::commands::command::reply_help;
use crate::commands::table::ks::{ACCESS, RO};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, range, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::resp::reply::Reply;
use crate::spec::error::CmdError::SubcommandSyntax;
use crate::types::stream::group::ConsumerGroup;
use crate::types::stream::{Stream, StreamId, StreamObj};

const G: &str = "stream";
const KEY2: &[KeySpec] = &[range(RO | ACCESS, 2, 0, 1)];
const SUB_ACL: u64 = acl::READ | acl::STREAM | acl::SLOW;

pub static XINFO_SUBCOMMANDS: &[Command] = &[
    Command::new("xinfo|consumers", 4, flag::READONLY, SUB_ACL, Data(xinfo))
        .history(&[("7.2.0", "Added the `inactive` field, and changed the meaning of `idle`.")])
        .tips(&["nondeterministic_output"])
        .keys(KEY2)
        .doc(G, "5.0.0", "Returns a list of the consumers in a consumer group.", "O(1)"),
    Command::new("xinfo|groups", 3, flag::READONLY, SUB_ACL, Data(xinfo))
        .history(&[("7.0.0", "Added the `entries-read` and `lag` fields")])
        .keys(KEY2)
        .doc(G, "5.0.0", "Returns a list of the consumer groups of a stream.", "O(1)"),
    Command::new("xinfo|help", 2, flag::LOADING | flag::STALE, acl::STREAM | acl::SLOW, Data(xinfo))
        .doc(G, "5.0.0", "Returns helpful text about the different subcommands.", "O(1)"),
    Command::new("xinfo|stream", -3, flag::READONLY, SUB_ACL, Data(xinfo))
        .history(&[
            ("6.0.0", "Added the `FULL` modifier."),
            (
                "7.0.0",
                "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields",
            ),
            ("7.2.0", "Added the `active-time` field, and changed the meaning of `seen-time`."),
        ])
        .keys(KEY2)
        .doc(G, "5.0.0", "Returns information about a stream.", "O(1)"),
];

pub static COMMANDS: &[Command] =
    &[Command::container("xinfo", -2, 0, acl::SLOW, XINFO_SUBCOMMANDS).doc(
        G,
        "5.0.0",
        "A container for stream introspection commands.",
        "Depends on subcommand.",
    )];

const HELP: &[&str] = &[
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
];

fn xinfo(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let sub = argv[1].to_ascii_lowercase();
    if sub == b"help" {
        reply_help(ctx.out, "XINFO", HELP);
        return Ok(());
    }
    let key = &argv[2];
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let s = db.read_agg::<StreamObj>(key, now)?.ok_or(CmdError::NoSuchKey)?;
    let out = &mut *ctx.out;
    match &sub[..] {
        b"consumers" => {
            let g = s
                .groups()
                .and_then(|gs| gs.get(&argv[3]))
                .ok_or_else(|| no_group_for_key(&argv[3], key))?;
            out.array(g.consumers_len());
            for c in g.consumers() {
                out.map(4);
                out.bulk(b"name");
                out.bulk(c.name());
                out.bulk(b"pending");
                out.int(c.pending_len() as i64);
                out.bulk(b"idle");
                out.int(c.idle_ms(now));
                out.bulk(b"inactive");
                out.int(c.inactive_ms(now).unwrap_or(-1));
            }
        }
        b"groups" => {
            let Some(gs) = s.groups() else {
                out.array(0);
                return Ok(());
            };
            out.array(gs.len());
            for (name, g) in gs.iter() {
                out.map(6);
                out.bulk(b"name");
                out.bulk(name);
                out.bulk(b"consumers");
                out.int(g.consumers_len() as i64);
                out.bulk(b"pending");
                out.int(g.pending_len() as i64);
                reply_group_counters(out, &s.stream, g);
            }
        }
        b"stream" => return stream_info(out, s, &argv[3..], &argv[1]),
        _ => {
            return Err(SubcommandSyntax {
                sub: String::from_utf8_lossy(&argv[1]).into_owned(),
                cmd: "XINFO".into(),
            })
        }
    }
    Ok(())
}

/// `last-delivered-id`, `entries-read` and `lag` of a group.
fn reply_group_counters(out: &mut Reply, stream: &Stream, g: &ConsumerGroup) {
    out.bulk(b"last-delivered-id");
    out.bulk(g.last_id().to_string().as_bytes());
    out.bulk(b"entries-read");
    match g.entries_read() {
        Some(n) => out.int(i64::try_from(n).unwrap_or(i64::MAX)),
        None => out.null(),
    }
    out.bulk(b"lag");
    match g.lag(&stream.info()) {
        Some(n) => out.int(n),
        None => out.null(),
    }
}

fn id_field(out: &mut Reply, name: &[u8], id: StreamId) {
    out.bulk(name);
    out.bulk(id.to_string().as_bytes());
}

/// XINFO STREAM key [FULL [COUNT n]]
fn stream_info(out: &mut Reply, s: &StreamObj, opts: &[Bytes], sub: &[u8]) -> CmdResult {
    let syntax =
        || SubcommandSyntax { sub: String::from_utf8_lossy(sub).into_owned(), cmd: "XINFO".into() };
    let mut count: Option<usize> = Some(10);
    let full = !opts.is_empty();
    if full {
        if (opts.len() != 1 && opts.len() != 3) || !opts[0].eq_ignore_ascii_case(b"full") {
            return Err(syntax());
        }
        if opts.len() == 3 {
            if !opts[1].eq_ignore_ascii_case(b"count") {
                return Err(syntax());
            }
            let n = crate::commands::args::int_arg(&opts[2])?;
            count = match n {
                0 => None,
                n if n < 0 => Some(10),
                n => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            };
        }
    }
    let st = &s.stream;
    let m = st.meta();
    out.map(if full { 9 } else { 10 });
    out.bulk(b"length");
    out.int(m.length as i64);
    out.bulk(b"radix-tree-keys");
    out.int(st.node_count() as i64);
    out.bulk(b"radix-tree-nodes");
    out.int(rax_nodes(&st.nodes().map(|(k, _)| k.to_be_bytes()).collect::<Vec<_>>(), 0) as i64);
    id_field(out, b"last-generated-id", m.last_id);
    id_field(out, b"max-deleted-entry-id", m.max_deleted_id);
    out.bulk(b"entries-added");
    out.int(i64::try_from(m.entries_added).unwrap_or(i64::MAX));
    id_field(out, b"recorded-first-entry-id", m.first_id);
    let limit = count.unwrap_or(usize::MAX);
    if !full {
        out.bulk(b"groups");
        out.int(s.groups().map_or(0, |g| g.len()) as i64);
        for (name, rev) in [(&b"first-entry"[..], false), (b"last-entry", true)] {
            out.bulk(name);
            match st.range(StreamId::MIN, StreamId::MAX, rev).next() {
                Some(e) => reply_entry(out, &e),
                None => out.null(),
            }
        }
        return Ok(());
    }
    out.bulk(b"entries");
    let entries: Vec<_> = st.range(StreamId::MIN, StreamId::MAX, false).take(limit).collect();
    out.array(entries.len());
    for e in &entries {
        reply_entry(out, e);
    }
    out.bulk(b"groups");
    let Some(gs) = s.groups() else {
        out.array(0);
        return Ok(());
    };
    out.array(gs.len());
    for (name, g) in gs.iter() {
        out.map(7);
        out.bulk(b"name");
        out.bulk(name);
        reply_group_counters(out, st, g);
        out.bulk(b"pel-count");
        out.int(g.pending_len() as i64);
        out.bulk(b"pending");
        let pending: Vec<_> = g.pending().take(limit).collect();
        out.array(pending.len());
        for p in pending {
            out.array(4);
            out.bulk(p.id.to_string().as_bytes());
            out.bulk(p.consumer);
            out.int(p.delivery_time_ms);
            out.int(i64::try_from(p.delivery_count).unwrap_or(i64::MAX));
        }
        out.bulk(b"consumers");
        out.array(g.consumers_len());
        for c in g.consumers() {
            out.map(5);
            out.bulk(b"name");
            out.bulk(c.name());
            out.bulk(b"seen-time");
            out.int(c.seen_time_ms());
            out.bulk(b"active-time");
            out.int(c.active_time_ms().unwrap_or(-1));
            out.bulk(b"pel-count");
            out.int(c.pending_len() as i64);
            out.bulk(b"pending");
            let ids: Vec<StreamId> = c.pending_ids().take(limit).collect();
            out.array(ids.len());
            for id in ids {
                let nack = g.nack(id).expect("a consumer's id is pending");
                out.array(3);
                out.bulk(id.to_string().as_bytes());
                out.int(nack.delivery_time_ms);
                out.int(i64::try_from(nack.delivery_count).unwrap_or(i64::MAX));
            }
        }
    }
    Ok(())
}

/// The nodes of a compressed radix tree holding `keys` (sorted, distinct, of one length),
/// below depth `depth`: a run of bytes every key shares is one node, a byte where they part
/// is a node with a child per distinct byte, and each key's end is a node. An empty tree is
/// its root alone.
fn rax_nodes(keys: &[[u8; 16]], depth: usize) -> usize {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else { return 1 };
    if depth == first.len() {
        return 1;
    }
    // Sorted keys share what their first and last share.
    let mut shared = depth;
    while shared < first.len() && first[shared] == last[shared] {
        shared += 1;
    }
    if shared > depth {
        return 1 + rax_nodes(keys, shared);
    }
    let mut n = 1;
    let mut rest = keys;
    while let Some(k) = rest.first() {
        let byte = k[depth];
        let run = rest.partition_point(|k| k[depth] == byte);
        n += rax_nodes(&rest[..run], depth + 1);
        rest = &rest[run..];
    }
    n
}

#[cfg(test)]
mod tests {
    use super::rax_nodes;

    fn key(ms: u64, seq: u64) -> [u8; 16] {
        crate::types::stream::StreamId::new(ms, seq).to_be_bytes()
    }

    #[test]
    fn radix_tree_node_counts() {
        assert_eq!(rax_nodes(&[], 0), 1);
        // One compressed run of 16 bytes, then the key's end.
        assert_eq!(rax_nodes(&[key(1, 1)], 0), 2);
        // Shared 15 bytes, a branch, two ends.
        assert_eq!(rax_nodes(&[key(1, 1), key(1, 2)], 0), 4);
    }
}
