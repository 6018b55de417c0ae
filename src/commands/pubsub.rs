//! The pub/sub family: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE,
//! SUNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB CHANNELS / NUMSUB / NUMPAT / SHARDCHANNELS /
//! SHARDNUMSUB / HELP.
//!
//! The handlers turn arguments into registry calls (`server::pubsub`) and write the
//! confirmations; delivery and the registry's invariants live there. RESP2 subscriber mode
//! (which commands a subscribed RESP2 client may run) is enforced by dispatch.

use bytes::Bytes;

use crate::commands::command::reply_help;
use crate::commands::server_cmd::subcommand_syntax;
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, ks, range, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::server::pubsub::{self, Kind, Scope};

const SUB_FLAGS: u64 = flag::PUBSUB | flag::NOSCRIPT | flag::LOADING | flag::STALE;
const SUB_ACL: u64 = acl::PUBSUB | acl::SLOW;
const PUB_FLAGS: u64 =
    flag::PUBSUB | flag::LOADING | flag::STALE | flag::FAST | flag::MAY_REPLICATE_UNPRINTED;
const PUB_ACL: u64 = acl::PUBSUB | acl::FAST;
const INTROSPECT_FLAGS: u64 = flag::PUBSUB | flag::LOADING | flag::STALE;

/// Shard channels are declared as (not-key) key specs, so a cluster can route them.
const SHARD_CHANNELS: &[KeySpec] = &[range(ks::NOT_KEY, 1, -1, 1)];
const SHARD_CHANNEL: &[KeySpec] = &[range(ks::NOT_KEY, 1, 0, 1)];

pub static COMMANDS: &[Command] = &[
    Command::new("subscribe", -2, SUB_FLAGS, SUB_ACL, Server(subscribe)).doc(
        "pubsub",
        "2.0.0",
        "Listens for messages published to channels.",
        "O(N) where N is the number of channels to subscribe to.",
    ),
    Command::new("unsubscribe", -1, SUB_FLAGS, SUB_ACL, Server(unsubscribe)).doc(
        "pubsub",
        "2.0.0",
        "Stops listening to messages posted to channels.",
        "O(N) where N is the number of channels to unsubscribe.",
    ),
    Command::new("psubscribe", -2, SUB_FLAGS, SUB_ACL, Server(psubscribe)).doc(
        "pubsub",
        "2.0.0",
        "Listens for messages published to channels that match one or more patterns.",
        "O(N) where N is the number of patterns to subscribe to.",
    ),
    Command::new("punsubscribe", -1, SUB_FLAGS, SUB_ACL, Server(punsubscribe)).doc(
        "pubsub",
        "2.0.0",
        "Stops listening to messages published to channels that match one or more patterns.",
        "O(N) where N is the number of patterns to unsubscribe.",
    ),
    Command::new("ssubscribe", -2, SUB_FLAGS, SUB_ACL, Server(ssubscribe))
        .keys(SHARD_CHANNELS)
        .doc(
            "pubsub",
            "7.0.0",
            "Listens for messages published to shard channels.",
            "O(N) where N is the number of shard channels to subscribe to.",
        ),
    Command::new("sunsubscribe", -1, SUB_FLAGS, SUB_ACL, Server(sunsubscribe))
        .keys(SHARD_CHANNELS)
        .doc(
            "pubsub",
            "7.0.0",
            "Stops listening to messages posted to shard channels.",
            "O(N) where N is the number of shard channels to unsubscribe.",
        ),
    Command::new("publish", 3, PUB_FLAGS, PUB_ACL, Server(publish)).doc(
        "pubsub",
        "2.0.0",
        "Posts a message to a channel.",
        "O(N+M) where N is the number of clients subscribed to the receiving channel and M is \
         the total number of subscribed patterns (by any client).",
    ),
    Command::new("spublish", 3, PUB_FLAGS, PUB_ACL, Server(spublish)).keys(SHARD_CHANNEL).doc(
        "pubsub",
        "7.0.0",
        "Posts a message to a shard channel.",
        "O(N) where N is the number of clients subscribed to the receiving shard channel.",
    ),
    Command::container("pubsub", -2, 0, acl::SLOW, SUBCOMMANDS).doc(
        "pubsub",
        "2.8.0",
        "A container for Pub/Sub commands.",
        "Depends on subcommand.",
    ),
];

static SUBCOMMANDS: &[Command] = &[
    Command::new("pubsub|channels", -2, INTROSPECT_FLAGS, SUB_ACL, Server(channels)).doc(
        "pubsub",
        "2.8.0",
        "Returns the active channels.",
        "O(N) where N is the number of active channels, and assuming constant time pattern \
         matching (relatively short channels and patterns)",
    ),
    Command::new("pubsub|numsub", -2, INTROSPECT_FLAGS, SUB_ACL, Server(numsub)).doc(
        "pubsub",
        "2.8.0",
        "Returns a count of subscribers to channels.",
        "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
    ),
    Command::new("pubsub|numpat", 2, INTROSPECT_FLAGS, SUB_ACL, Server(numpat)).doc(
        "pubsub",
        "2.8.0",
        "Returns a count of unique pattern subscriptions.",
        "O(1)",
    ),
    Command::new("pubsub|shardchannels", -2, INTROSPECT_FLAGS, SUB_ACL, Server(shardchannels)).doc(
        "pubsub",
        "7.0.0",
        "Returns the active shard channels.",
        "O(N) where N is the number of active shard channels, and assuming constant time \
         pattern matching (relatively short shard channels).",
    ),
    Command::new("pubsub|shardnumsub", -2, INTROSPECT_FLAGS, SUB_ACL, Server(shardnumsub)).doc(
        "pubsub",
        "7.0.0",
        "Returns the count of subscribers of shard channels.",
        "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
    ),
    Command::new("pubsub|help", 2, flag::LOADING | flag::STALE, acl::SLOW, Server(help)).doc(
        "pubsub",
        "6.2.0",
        "Returns helpful text about the different subcommands.",
        "O(1)",
    ),
];

/// Subscribes to every name in `argv[1..]`, confirming each (also one already held).
fn subscribe_all(ctx: &mut ServerCtx, kind: Kind, argv: &[Bytes]) {
    for name in &argv[1..] {
        ctx.srv.pubsub.subscribe(kind, ctx.slot, &mut ctx.client.subs, name);
        let count = ctx.client.subs.confirm_count(kind);
        pubsub::confirm(ctx.out, kind.subscribe_word(), Some(name), count);
    }
}

/// Unsubscribes from every name in `argv[1..]`, or from all of `kind` when there are none;
/// confirms each name, or once with a null name when there was nothing to leave.
fn unsubscribe_all(ctx: &mut ServerCtx, kind: Kind, argv: &[Bytes]) {
    let names = if argv.len() > 1 { argv[1..].to_vec() } else { ctx.client.subs.names(kind) };
    if names.is_empty() {
        let count = ctx.client.subs.confirm_count(kind);
        pubsub::confirm(ctx.out, kind.unsubscribe_word(), None, count);
    }
    for name in &names {
        ctx.srv.pubsub.unsubscribe(kind, ctx.slot, &mut ctx.client.subs, name);
        let count = ctx.client.subs.confirm_count(kind);
        pubsub::confirm(ctx.out, kind.unsubscribe_word(), Some(name), count);
    }
}

fn subscribe(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    subscribe_all(ctx, Kind::Channel, argv);
    Ok(())
}

fn psubscribe(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    subscribe_all(ctx, Kind::Pattern, argv);
    Ok(())
}

/// SSUBSCRIBE is refused inside EXEC (Valkey's DENY BLOCKING clients), unlike SUBSCRIBE and
/// PSUBSCRIBE, which MULTI allows for backward compatibility.
fn ssubscribe(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if ctx.client.in_exec {
        return Err(CmdError::DenyBlocking("SSUBSCRIBE"));
    }
    subscribe_all(ctx, Kind::Shard, argv);
    Ok(())
}

fn unsubscribe(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    unsubscribe_all(ctx, Kind::Channel, argv);
    Ok(())
}

fn punsubscribe(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    unsubscribe_all(ctx, Kind::Pattern, argv);
    Ok(())
}

fn sunsubscribe(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    unsubscribe_all(ctx, Kind::Shard, argv);
    Ok(())
}

/// PUBLISH and SPUBLISH: the number of deliveries. A message to the publisher itself (a
/// RESP3 subscriber) comes before this reply.
fn publish_in(ctx: &mut ServerCtx, scope: Scope, argv: &[Bytes]) -> CmdResult {
    // Messages to the publisher itself follow this reply (dispatch writes them).
    let receivers = pubsub::publish(ctx.srv, scope, &argv[1], &argv[2]);
    ctx.out.int(receivers as i64);
    Ok(())
}

fn publish(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    publish_in(ctx, Scope::Global, argv)
}

fn spublish(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    publish_in(ctx, Scope::Shard, argv)
}

/// PUBSUB CHANNELS / SHARDCHANNELS [pattern].
fn list_names(ctx: &mut ServerCtx, kind: Kind, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 3 {
        return Err(subcommand_syntax(argv));
    }
    let names = ctx.srv.pubsub.names_matching(kind, argv.get(2).map(|p| &p[..]));
    ctx.out.array(names.len());
    for n in &names {
        ctx.out.bulk(n);
    }
    Ok(())
}

/// PUBSUB NUMSUB / SHARDNUMSUB [name ...]: a flat array of name, count pairs (an array in
/// RESP3 too, as in Valkey).
fn count_subscribers(ctx: &mut ServerCtx, kind: Kind, argv: &[Bytes]) -> CmdResult {
    ctx.out.array((argv.len() - 2) * 2);
    for name in &argv[2..] {
        ctx.out.bulk(name);
        ctx.out.int(ctx.srv.pubsub.subscribers(kind, name) as i64);
    }
    Ok(())
}

fn channels(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    list_names(ctx, Kind::Channel, argv)
}

fn shardchannels(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    list_names(ctx, Kind::Shard, argv)
}

fn numsub(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    count_subscribers(ctx, Kind::Channel, argv)
}

fn shardnumsub(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    count_subscribers(ctx, Kind::Shard, argv)
}

/// PUBSUB NUMPAT: distinct patterns with subscribers.
fn numpat(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.int(ctx.srv.pubsub.len(Kind::Pattern) as i64);
    Ok(())
}

const HELP_LINES: &[&str] = &[
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
];

fn help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(ctx.out, "PUBSUB", HELP_LINES);
    Ok(())
}
