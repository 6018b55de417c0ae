//! Sorted set commands: the command table and the helpers the families share (limits from
//! the config, score and range arguments, reply shapes). Handlers work on
//! [`ZSetObj`](crate::types::zset::ZSetObj) methods only and never see an encoding.
//!
//! # Layout
//! - `mod.rs`: the table, argument and reply helpers.
//! - `write.rs`: ZADD, ZINCRBY, ZREM and the point reads (ZCARD, ZSCORE, ZMSCORE, ZRANK,
//!   ZREVRANK, ZCOUNT, ZLEXCOUNT).
//! - `range.rs`: ZRANGE and its older forms, ZRANGESTORE, ZREMRANGEBY*.
//! - `pop.rs`: ZPOPMIN/ZPOPMAX, ZMPOP, the blocking BZPOPMIN/BZPOPMAX/BZMPOP, ZRANDMEMBER,
//!   ZSCAN.
//! - `ops.rs`: ZUNION, ZINTER, ZDIFF, their *STORE forms, ZINTERCARD.

mod ops;
mod pop;
mod range;
mod write;

pub(crate) use write::Presence;

use crate::commands::table::ks::{ACCESS, DELETE, OW, RO, RW, UPDATE};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, keynum, range as spec_range, specs, Command, KeySpec};
use crate::commands::{CmdError, Ctx};
use crate::config::KeyspaceEvents;
use crate::resp::reply::Reply;
use crate::types::zset::range::{parse_lex_bound, parse_score_bound};
use crate::types::zset::{LexRange, Limits, ScoreRange};

const READ_FAST: (u64, u64) = (flag::READONLY | flag::FAST, acl::READ | acl::SORTEDSET | acl::FAST);
const READ_SLOW: (u64, u64) = (flag::READONLY, acl::READ | acl::SORTEDSET | acl::SLOW);
const WRITE_FAST: (u64, u64) =
    (flag::WRITE | flag::DENYOOM | flag::FAST, acl::WRITE | acl::SORTEDSET | acl::FAST);
/// Removals never grow memory: no DENYOOM.
const DEL_FAST: (u64, u64) = (flag::WRITE | flag::FAST, acl::WRITE | acl::SORTEDSET | acl::FAST);
const DEL_SLOW: (u64, u64) = (flag::WRITE, acl::WRITE | acl::SORTEDSET | acl::SLOW);
const STORE: (u64, u64) = (flag::WRITE | flag::DENYOOM, acl::WRITE | acl::SORTEDSET | acl::SLOW);
const READ_KEYNUM: (u64, u64) =
    (flag::READONLY | flag::MOVABLE_KEYS, acl::READ | acl::SORTEDSET | acl::SLOW);
const STORE_KEYNUM: (u64, u64) =
    (flag::WRITE | flag::DENYOOM | flag::MOVABLE_KEYS, acl::WRITE | acl::SORTEDSET | acl::SLOW);
const BLOCK_FAST: (u64, u64) = (
    flag::WRITE | flag::BLOCKING | flag::FAST,
    acl::WRITE | acl::SORTEDSET | acl::FAST | acl::BLOCKING,
);

const RW_UPDATE: &[KeySpec] = &[spec_range(RW | UPDATE, 1, 0, 1)];
const RW_ACCESS_UPDATE: &[KeySpec] = &[spec_range(RW | ACCESS | UPDATE, 1, 0, 1)];
const RW_DELETE: &[KeySpec] = &[spec_range(RW | DELETE, 1, 0, 1)];
const RW_ACCESS_DELETE: &[KeySpec] = &[spec_range(RW | ACCESS | DELETE, 1, 0, 1)];
const READ_META: &[KeySpec] = &[spec_range(RO, 1, 0, 1)];
const RANGESTORE_KEYS: &[KeySpec] =
    &[spec_range(OW | UPDATE, 1, 0, 1), spec_range(RO | ACCESS, 2, 0, 1)];
const KEYNUM_READ: &[KeySpec] = &[keynum(RO | ACCESS, 1)];
const KEYNUM_POP: &[KeySpec] = &[keynum(RW | ACCESS | DELETE, 1)];
const KEYNUM_BPOP: &[KeySpec] = &[keynum(RW | ACCESS | DELETE, 2)];
const KEYNUM_STORE: &[KeySpec] = &[spec_range(OW | UPDATE, 1, 0, 1), keynum(RO | ACCESS, 2)];
const BPOP_KEYS: &[KeySpec] = &[spec_range(RW | ACCESS | DELETE, 1, -2, 1)];

const NONDETERMINISTIC: &[&str] = &["nondeterministic_output"];

const G: &str = "sorted-set";
const LOGN: &str = "O(log(N)) with N being the number of elements in the sorted set.";
const RANGE_BY: &str = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).";
const REMRANGE: &str = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.";
const UNION: &str = "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.";
const INTER: &str = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.";
const DIFF: &str = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.";
const MPOP: &str = "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.";

pub static COMMANDS: &[Command] = &[
    Command::new("zadd", -4, WRITE_FAST.0, WRITE_FAST.1, Data(write::zadd))
        .history(&[
            ("2.4.0", "Accepts multiple elements."),
            ("3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."),
            ("6.2.0", "Added the `GT` and `LT` options."),
        ])
        .keys(RW_UPDATE)
        .doc(G, "1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", "O(log(N)) for each item added, where N is the number of elements in the sorted set."),
    Command::new("zincrby", 4, WRITE_FAST.0, WRITE_FAST.1, Data(write::zincrby))
        .keys(RW_ACCESS_UPDATE)
        .doc(G, "1.2.0", "Increments the score of a member in a sorted set.", "O(log(N)) where N is the number of elements in the sorted set."),
    Command::new("zrem", -3, DEL_FAST.0, DEL_FAST.1, Data(write::zrem))
        .history(&[("2.4.0", "Accepts multiple elements.")])
        .keys(RW_DELETE)
        .doc(G, "1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed."),
    Command::new("zcard", 2, READ_FAST.0, READ_FAST.1, Data(write::zcard))
        .keys(READ_META)
        .doc(G, "1.2.0", "Returns the number of members in a sorted set.", "O(1)"),
    Command::new("zcount", 4, READ_FAST.0, READ_FAST.1, Data(write::zcount))
        .keys(specs::READ1)
        .doc(G, "2.0.0", "Returns the count of members in a sorted set that have scores within a range.", LOGN),
    Command::new("zlexcount", 4, READ_FAST.0, READ_FAST.1, Data(write::zlexcount))
        .keys(specs::READ1)
        .doc(G, "2.8.9", "Returns the number of members in a sorted set within a lexicographical range.", LOGN),
    Command::new("zscore", 3, READ_FAST.0, READ_FAST.1, Data(write::zscore))
        .keys(specs::READ1)
        .doc(G, "1.2.0", "Returns the score of a member in a sorted set.", "O(1)"),
    Command::new("zmscore", -3, READ_FAST.0, READ_FAST.1, Data(write::zmscore))
        .keys(specs::READ1)
        .doc(G, "6.2.0", "Returns the score of one or more members in a sorted set.", "O(N) where N is the number of members being requested."),
    Command::new("zrank", -3, READ_FAST.0, READ_FAST.1, Data(write::zrank))
        .history(&[("7.2.0", "Added the optional `WITHSCORE` argument.")])
        .keys(specs::READ1)
        .doc(G, "2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores.", "O(log(N))"),
    Command::new("zrevrank", -3, READ_FAST.0, READ_FAST.1, Data(write::zrevrank))
        .history(&[("7.2.0", "Added the optional `WITHSCORE` argument.")])
        .keys(specs::READ1)
        .doc(G, "2.0.0", "Returns the index of a member in a sorted set ordered by descending scores.", "O(log(N))"),
    Command::new("zrange", -4, READ_SLOW.0, READ_SLOW.1, Data(range::zrange))
        .history(&[("6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options.")])
        .keys(specs::READ1)
        .doc(G, "1.2.0", "Returns members in a sorted set within a range of indexes.", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned."),
    Command::new("zrangestore", -5, STORE.0, STORE.1, Data(range::zrangestore))
        .keys(RANGESTORE_KEYS)
        .doc(G, "6.2.0", "Stores a range of members from sorted set in a key.", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key."),
    Command::new("zrevrange", -4, READ_SLOW.0, READ_SLOW.1, Data(range::zrevrange))
        .keys(specs::READ1)
        .doc(G, "1.2.0", "Returns members in a sorted set within a range of indexes in reverse order.", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned."),
    Command::new("zrangebyscore", -4, READ_SLOW.0, READ_SLOW.1, Data(range::zrangebyscore))
        .history(&[("2.0.0", "Added the `WITHSCORES` modifier.")])
        .keys(specs::READ1)
        .doc(G, "1.0.5", "Returns members in a sorted set within a range of scores.", RANGE_BY),
    Command::new("zrevrangebyscore", -4, READ_SLOW.0, READ_SLOW.1, Data(range::zrevrangebyscore))
        .history(&[("2.1.6", "`min` and `max` can be exclusive.")])
        .keys(specs::READ1)
        .doc(G, "2.2.0", "Returns members in a sorted set within a range of scores in reverse order.", RANGE_BY),
    Command::new("zrangebylex", -4, READ_SLOW.0, READ_SLOW.1, Data(range::zrangebylex))
        .keys(specs::READ1)
        .doc(G, "2.8.9", "Returns members in a sorted set within a lexicographical range.", RANGE_BY),
    Command::new("zrevrangebylex", -4, READ_SLOW.0, READ_SLOW.1, Data(range::zrevrangebylex))
        .keys(specs::READ1)
        .doc(G, "2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order.", RANGE_BY),
    Command::new("zremrangebyrank", 4, DEL_SLOW.0, DEL_SLOW.1, Data(range::zremrangebyrank))
        .keys(RW_DELETE)
        .doc(G, "2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", REMRANGE),
    Command::new("zremrangebyscore", 4, DEL_SLOW.0, DEL_SLOW.1, Data(range::zremrangebyscore))
        .keys(RW_DELETE)
        .doc(G, "1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", REMRANGE),
    Command::new("zremrangebylex", 4, DEL_SLOW.0, DEL_SLOW.1, Data(range::zremrangebylex))
        .keys(RW_DELETE)
        .doc(G, "2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", REMRANGE),
    Command::new("zpopmin", -2, DEL_FAST.0, DEL_FAST.1, Data(pop::zpopmin))
        .keys(RW_ACCESS_DELETE)
        .doc(G, "5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped."),
    Command::new("zpopmax", -2, DEL_FAST.0, DEL_FAST.1, Data(pop::zpopmax))
        .keys(RW_ACCESS_DELETE)
        .doc(G, "5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped."),
    Command::new("zmpop", -4, DEL_SLOW.0 | flag::MOVABLE_KEYS, DEL_SLOW.1, Data(pop::zmpop))
        .keys(KEYNUM_POP)
        .doc(G, "7.0.0", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", MPOP),
    Command::new("zrandmember", -2, READ_SLOW.0, READ_SLOW.1, Data(pop::zrandmember))
        .keys(specs::READ1)
        .tips(NONDETERMINISTIC)
        .doc(G, "6.2.0", "Returns one or more random members from a sorted set.", "O(N) where N is the number of members returned"),
    Command::new("zunion", -3, READ_KEYNUM.0, READ_KEYNUM.1, Data(ops::zunion))
        .keys(KEYNUM_READ)
        .doc(G, "6.2.0", "Returns the union of multiple sorted sets.", UNION),
    Command::new("zinter", -3, READ_KEYNUM.0, READ_KEYNUM.1, Data(ops::zinter))
        .keys(KEYNUM_READ)
        .doc(G, "6.2.0", "Returns the intersect of multiple sorted sets.", INTER),
    Command::new("zdiff", -3, READ_KEYNUM.0, READ_KEYNUM.1, Data(ops::zdiff))
        .keys(KEYNUM_READ)
        .doc(G, "6.2.0", "Returns the difference between multiple sorted sets.", DIFF),
    Command::new("zunionstore", -4, STORE_KEYNUM.0, STORE_KEYNUM.1, Data(ops::zunionstore))
        .keys(KEYNUM_STORE)
        .doc(G, "2.0.0", "Stores the union of multiple sorted sets in a key.", "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set."),
    Command::new("zinterstore", -4, STORE_KEYNUM.0, STORE_KEYNUM.1, Data(ops::zinterstore))
        .keys(KEYNUM_STORE)
        .doc(G, "2.0.0", "Stores the intersect of multiple sorted sets in a key.", INTER),
    Command::new("zdiffstore", -4, STORE_KEYNUM.0, STORE_KEYNUM.1, Data(ops::zdiffstore))
        .keys(KEYNUM_STORE)
        .doc(G, "6.2.0", "Stores the difference of multiple sorted sets in a key.", DIFF),
    Command::new("zintercard", -3, READ_KEYNUM.0, READ_KEYNUM.1, Data(ops::zintercard))
        .keys(KEYNUM_READ)
        .doc(G, "7.0.0", "Returns the number of members of the intersect of multiple sorted sets.", "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets."),
    Command::new("zscan", -3, READ_SLOW.0, READ_SLOW.1, Data(pop::zscan))
        .history(&[("8.0.0", "Added noscores option.")])
        .keys(specs::READ1)
        .tips(NONDETERMINISTIC)
        .doc(G, "2.8.0", "Iterates over members and scores of a sorted set.", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection."),
    Command::new("bzpopmin", -3, BLOCK_FAST.0, BLOCK_FAST.1, Data(pop::bzpopmin))
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .keys(BPOP_KEYS)
        .doc(G, "5.0.0", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", LOGN),
    Command::new("bzpopmax", -3, BLOCK_FAST.0, BLOCK_FAST.1, Data(pop::bzpopmax))
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .keys(BPOP_KEYS)
        .doc(G, "5.0.0", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", LOGN),
    Command::new(
        "bzmpop",
        -5,
        flag::WRITE | flag::BLOCKING | flag::MOVABLE_KEYS,
        acl::WRITE | acl::SORTEDSET | acl::SLOW | acl::BLOCKING,
        Data(pop::bzmpop),
    )
    .keys(KEYNUM_BPOP)
    .doc(G, "7.0.0", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", MPOP),
];

/// The listpack limits from the config.
/// `event` (`zrem`, `zpopmin`, `zremrangebyscore`...) of `key`, then `del` when the removal
/// emptied (and so deleted) the sorted set.
fn notify_removed(ctx: &mut Ctx, event: &'static str, dirty: u64, key: &[u8], emptied: bool) {
    ctx.changed(key, dirty, KeyspaceEvents::ZSET, event);
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
}

fn limits(ctx: &Ctx) -> Limits {
    let c = &ctx.config;
    Limits {
        max_entries: usize::try_from(c.zset_max_listpack_entries).unwrap_or(usize::MAX),
        max_value_bytes: usize::try_from(c.zset_max_listpack_value_bytes).unwrap_or(usize::MAX),
    }
}

/// `min max` of a score range (`min or max is not a float`).
fn score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, CmdError> {
    let (min, min_ex) = parse_score_bound(min).ok_or(CmdError::ZMinMaxNotFloat)?;
    let (max, max_ex) = parse_score_bound(max).ok_or(CmdError::ZMinMaxNotFloat)?;
    Ok(ScoreRange { min, max, min_ex, max_ex })
}

/// `min max` of a lex range (`min or max not valid string range item`).
fn lex_range<'a>(min: &'a [u8], max: &'a [u8]) -> Result<LexRange<'a>, CmdError> {
    let min = parse_lex_bound(min).ok_or(CmdError::ZMinMaxNotLex)?;
    let max = parse_lex_bound(max).ok_or(CmdError::ZMinMaxNotLex)?;
    Ok(LexRange { min, max })
}

/// The header of `n` members, with scores or not: RESP2 flattens the pairs, RESP3 nests
/// them as [member, score] arrays.
fn members_header(out: &mut Reply, n: usize, withscores: bool) {
    if withscores && !out.is_resp3() {
        out.array(2 * n);
    } else {
        out.array(n);
    }
}

/// One member of a [`members_header`] reply.
fn member_reply(out: &mut Reply, m: &[u8], s: f64, withscores: bool) {
    if withscores && out.is_resp3() {
        out.array(2);
    }
    out.bulk(m);
    if withscores {
        out.double(s);
    }
}
