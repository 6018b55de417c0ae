//! OBJECT: ENCODING, FREQ, IDLETIME, REFCOUNT and HELP. Lookups do not touch the access
//! clock (reading it must not change it); a missing key replies null.

use crate::keyspace::entry::KeyEntry;
use bytes::Bytes;

use crate::commands::command::reply_help;
use crate::commands::table::ks::RO;
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, range, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::MaxmemoryPolicy;
use crate::keyspace::db::{idle_ms, lfu_decayed};
use crate::resp::reply::Reply;

/// The key of OBJECT subcommands is argv[2].
const OBJECT_KEY: &[KeySpec] = &[range(RO, 2, 0, 1)];
const SUB_FLAGS: u64 = flag::READONLY;
const SUB_ACL: u64 = acl::KEYSPACE | acl::READ | acl::SLOW;
const SUB_TIPS: &[&str] = &["nondeterministic_output"];

/// Alphabetical (redis-server lists them in the order of a randomly seeded hash table).
pub static SUBCOMMANDS: &[Command] = &[
    Command::new("object|encoding", 3, SUB_FLAGS, SUB_ACL, Data(encoding))
        .keys(OBJECT_KEY)
        .tips(SUB_TIPS)
        .doc("generic", "2.2.3", "Returns the internal encoding of an object.", "O(1)"),
    Command::new("object|freq", 3, SUB_FLAGS, SUB_ACL, Data(freq))
        .keys(OBJECT_KEY)
        .tips(SUB_TIPS)
        .doc(
            "generic",
            "4.0.0",
            "Returns the logarithmic access frequency counter of an object.",
            "O(1)",
        ),
    Command::new(
        "object|help",
        2,
        flag::LOADING | flag::STALE,
        acl::KEYSPACE | acl::SLOW,
        Data(help),
    )
    .doc("generic", "6.2.0", "Returns helpful text about the different subcommands.", "O(1)"),
    Command::new("object|idletime", 3, SUB_FLAGS, SUB_ACL, Data(idletime))
        .keys(OBJECT_KEY)
        .tips(SUB_TIPS)
        .doc("generic", "2.2.3", "Returns the time since the last access to an object.", "O(1)"),
    Command::new("object|refcount", 3, SUB_FLAGS, SUB_ACL, Data(refcount))
        .keys(OBJECT_KEY)
        .tips(SUB_TIPS)
        .doc("generic", "2.2.3", "Returns the reference count of a value of a key.", "O(1)"),
];

/// OBJECT HELP, between the usage line and the HELP entry.
const HELP_LINES: &[&str] = &[
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
];

fn help(ctx: &mut Ctx, _argv: &[Bytes]) -> CmdResult {
    reply_help(ctx.out, "OBJECT", HELP_LINES);
    Ok(())
}

/// The object at argv[2] without touching its access clock, and the reply buffer; replies
/// null and yields None when the key does not exist.
fn lookup<'c>(ctx: &'c mut Ctx, argv: &[Bytes]) -> Option<(&'c KeyEntry, &'c mut Reply)> {
    let now = ctx.now_ms;
    let obj = ctx.dbs[ctx.client.db].read_obj_nonotify(&argv[2], now);
    if obj.is_none() {
        ctx.out.null();
    }
    Some((obj?, &mut *ctx.out))
}

fn encoding(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    if let Some((obj, out)) = lookup(ctx, argv) {
        out.bulk(obj.encoding().as_bytes());
    }
    Ok(())
}

fn is_lfu(policy: MaxmemoryPolicy) -> bool {
    matches!(policy, MaxmemoryPolicy::AllkeysLfu | MaxmemoryPolicy::VolatileLfu)
}

/// The key is looked up first: a missing key replies null whatever the policy.
fn freq(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (policy, decay) = (ctx.config.maxmemory_policy, ctx.config.lfu_decay_time_mins);
    let now = ctx.now_ms;
    if let Some((obj, out)) = lookup(ctx, argv) {
        if !is_lfu(policy) {
            return Err(CmdError::LfuNotSelected);
        }
        out.int(lfu_decayed(obj.lru(), now, decay) as i64);
    }
    Ok(())
}

fn idletime(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let policy = ctx.config.maxmemory_policy;
    let now = ctx.now_ms;
    if let Some((obj, out)) = lookup(ctx, argv) {
        if is_lfu(policy) {
            return Err(CmdError::LfuSelected);
        }
        out.int(idle_ms(obj.lru(), now) / 1000);
    }
    Ok(())
}

/// Values are never shared here (ownership replaces reference counts), so the count is 1,
/// except that small integers report what Valkey's shared integers report.
fn refcount(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    // Valkey 9.1 embeds the key in each value's object, so no value is a shared object
    // (small integers included) and every count is 1.
    if let Some((_, out)) = lookup(ctx, argv) {
        out.int(1);
    }
    Ok(())
}
