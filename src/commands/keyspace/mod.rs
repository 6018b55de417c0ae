//! Keyspace commands: the generic ones that work on keys of any type (DEL, EXISTS, TYPE,
//! KEYS, SCAN, RENAME, COPY, MOVE, TOUCH, OBJECT), expire times (EXPIRE and friends, TTL
//! and friends, PERSIST) and whole databases (SELECT, SWAPDB, DBSIZE, FLUSHDB, FLUSHALL).
//!
//! Handlers talk to the keyspace only through the `Db` API; how keys are stored is none of
//! their business. Time is `ctx.now_ms`, fixed for the command.
//!
//! # Layout
//! - `mod.rs`: the command table of the family and helpers shared by its files.
//! - `keys.rs`: commands on named keys (DEL, UNLINK, EXISTS, TYPE, TOUCH, RENAME, COPY...).
//! - `expire.rs`: setting and reading expire times.
//! - `scan.rs`: SCAN, KEYS, RANDOMKEY.
//! - `object.rs`: OBJECT and its subcommands.
//! - `dbs.rs`: commands on whole databases.

mod dbs;
pub(crate) mod expire;
mod keys;
mod object;
mod scan;

use crate::commands::table::ks::{ACCESS, DELETE, INSERT, OW, RO, RW, UPDATE};
use crate::commands::table::{acl, flag, range, specs, Command, KeySpec};
use crate::commands::table::{Data, Server};
use crate::commands::CmdError;
use crate::config::{Config, MaxmemoryPolicy};
use crate::keyspace::db::{AccessClock, Db};
use crate::server::state::ServerState;
use crate::types::string::parse_i64;

/// Command tips, as COMMAND INFO prints them.
const MULTI_SHARD_SUM: &[&str] = &["request_policy:multi_shard", "response_policy:agg_sum"];
const ALL_SHARDS_SUM: &[&str] = &["request_policy:all_shards", "response_policy:agg_sum"];
const ALL_SHARDS_SUCCEEDED: &[&str] =
    &["request_policy:all_shards", "response_policy:all_succeeded"];
const NONDETERMINISTIC: &[&str] = &["nondeterministic_output"];

/// RENAME: the source is read and deleted, the destination overwritten.
const RENAME_KEYS: &[KeySpec] =
    &[range(RW | ACCESS | DELETE, 1, 0, 1), range(OW | UPDATE, 2, 0, 1)];
/// RENAMENX: as RENAME, but the destination is only ever inserted.
const RENAMENX_KEYS: &[KeySpec] =
    &[range(RW | ACCESS | DELETE, 1, 0, 1), range(OW | INSERT, 2, 0, 1)];
/// COPY: the source is read, the destination overwritten.
const COPY_KEYS: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1), range(OW | UPDATE, 2, 0, 1)];
/// TTL and friends: the key is read (its expire time is user data).
const TTL_KEYS: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1)];

const EXPIRE_FLAGS: u64 = flag::WRITE | flag::FAST;
const EXPIRE_ACL: u64 = acl::KEYSPACE | acl::WRITE | acl::FAST;
const TTL_FLAGS: u64 = flag::READONLY | flag::FAST;
const TTL_ACL: u64 = acl::KEYSPACE | acl::READ | acl::FAST;
const EXPIRE_COMPLEXITY: &str = "O(1)";

pub static COMMANDS: &[Command] = &[
    Command::new("del", -2, flag::WRITE, acl::KEYSPACE | acl::WRITE | acl::SLOW, Data(keys::del))
        .keys(specs::DELETE_ALL)
        .tips(MULTI_SHARD_SUM)
        .doc(
            "generic",
            "1.0.0",
            "Deletes one or more keys.",
            "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).",
        ),
    Command::new("unlink", -2, flag::WRITE | flag::FAST, acl::KEYSPACE | acl::WRITE | acl::FAST, Data(keys::unlink))
        .keys(specs::DELETE_ALL)
        .tips(MULTI_SHARD_SUM)
        .doc(
            "generic",
            "4.0.0",
            "Asynchronously deletes one or more keys.",
            "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.",
        ),
    Command::new("exists", -2, flag::READONLY | flag::FAST, acl::KEYSPACE | acl::READ | acl::FAST, Data(keys::exists))
        .history(&[("3.0.3", "Accepts multiple `key` arguments.")])
        .keys(specs::READ_ALL_META)
        .tips(MULTI_SHARD_SUM)
        .doc("generic", "1.0.0", "Determines whether one or more keys exist.", "O(N) where N is the number of keys to check."),
    Command::new("type", 2, flag::READONLY | flag::FAST, acl::KEYSPACE | acl::READ | acl::FAST, Data(keys::type_cmd))
        .keys(specs::READ1_META)
        .doc("generic", "1.0.0", "Determines the type of value stored at a key.", "O(1)"),
    Command::new("touch", -2, flag::READONLY | flag::FAST, acl::KEYSPACE | acl::READ | acl::FAST, Data(keys::touch))
        .keys(specs::READ_ALL_META)
        .tips(MULTI_SHARD_SUM)
        .doc(
            "generic",
            "3.2.1",
            "Returns the number of existing keys out of those specified after updating the time they were last accessed.",
            "O(N) where N is the number of keys that will be touched.",
        ),
    Command::new("rename", 3, flag::WRITE, acl::KEYSPACE | acl::WRITE | acl::SLOW, Data(keys::rename))
        .keys(RENAME_KEYS)
        .doc("generic", "1.0.0", "Renames a key and overwrites the destination.", "O(1)"),
    Command::new("renamenx", 3, flag::WRITE | flag::FAST, acl::KEYSPACE | acl::WRITE | acl::FAST, Data(keys::renamenx))
        .history(&[("3.2.0", "The command no longer returns an error when source and destination names are the same.")])
        .keys(RENAMENX_KEYS)
        .doc("generic", "1.0.0", "Renames a key only when the target key name doesn't exist.", "O(1)"),
    Command::new("copy", -3, flag::WRITE | flag::DENYOOM, acl::KEYSPACE | acl::WRITE | acl::SLOW, Data(keys::copy))
        .keys(COPY_KEYS)
        .doc(
            "generic",
            "6.2.0",
            "Copies the value of a key to a new key.",
            "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.",
        ),
    Command::new("move", 3, flag::WRITE | flag::FAST, acl::KEYSPACE | acl::WRITE | acl::FAST, Data(keys::move_cmd))
        .keys(specs::RW1_UPDATE)
        .doc("generic", "1.0.0", "Moves a key to another database.", "O(1)"),
    Command::new("keys", 2, flag::READONLY, acl::KEYSPACE | acl::READ | acl::SLOW | acl::DANGEROUS, Data(scan::keys))
        .tips(&["request_policy:all_shards", "nondeterministic_output_order"])
        .doc(
            "generic",
            "1.0.0",
            "Returns all key names that match a pattern.",
            "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
        ),
    Command::new("scan", -2, flag::READONLY, acl::KEYSPACE | acl::READ | acl::SLOW, Data(scan::scan))
        .history(&[("6.0.0", "Added the `TYPE` subcommand.")])
        .tips(&["nondeterministic_output", "request_policy:special", "response_policy:special"])
        .doc(
            "generic",
            "2.8.0",
            "Iterates over the key names in the database.",
            "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
        ),
    Command::new("randomkey", 1, flag::READONLY, acl::KEYSPACE | acl::READ | acl::SLOW, Data(scan::randomkey))
        .tips(&["request_policy:all_shards", "response_policy:special", "nondeterministic_output"])
        .doc("generic", "1.0.0", "Returns a random key name from the database.", "O(1)"),
    Command::new("expire", -3, EXPIRE_FLAGS, EXPIRE_ACL, Data(expire::expire))
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .keys(specs::RW1_META)
        .doc("generic", "1.0.0", "Sets the expiration time of a key in seconds.", EXPIRE_COMPLEXITY),
    Command::new("pexpire", -3, EXPIRE_FLAGS, EXPIRE_ACL, Data(expire::pexpire))
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .keys(specs::RW1_META)
        .doc("generic", "2.6.0", "Sets the expiration time of a key in milliseconds.", EXPIRE_COMPLEXITY),
    Command::new("expireat", -3, EXPIRE_FLAGS, EXPIRE_ACL, Data(expire::expireat))
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .keys(specs::RW1_META)
        .doc("generic", "1.2.0", "Sets the expiration time of a key to a Unix timestamp.", EXPIRE_COMPLEXITY),
    Command::new("pexpireat", -3, EXPIRE_FLAGS, EXPIRE_ACL, Data(expire::pexpireat))
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .keys(specs::RW1_META)
        .doc(
            "generic",
            "2.6.0",
            "Sets the expiration time of a key to a Unix milliseconds timestamp.",
            EXPIRE_COMPLEXITY,
        ),
    Command::new("ttl", 2, TTL_FLAGS, TTL_ACL, Data(expire::ttl))
        .history(&[("2.8.0", "Added the -2 reply.")])
        .keys(TTL_KEYS)
        .tips(NONDETERMINISTIC)
        .doc("generic", "1.0.0", "Returns the expiration time in seconds of a key.", "O(1)"),
    Command::new("pttl", 2, TTL_FLAGS, TTL_ACL, Data(expire::pttl))
        .history(&[("2.8.0", "Added the -2 reply.")])
        .keys(TTL_KEYS)
        .tips(NONDETERMINISTIC)
        .doc("generic", "2.6.0", "Returns the expiration time in milliseconds of a key.", "O(1)"),
    Command::new("expiretime", 2, TTL_FLAGS, TTL_ACL, Data(expire::expiretime))
        .keys(TTL_KEYS)
        .doc("generic", "7.0.0", "Returns the expiration time of a key as a Unix timestamp.", "O(1)"),
    Command::new("pexpiretime", 2, TTL_FLAGS, TTL_ACL, Data(expire::pexpiretime))
        .keys(TTL_KEYS)
        .doc(
            "generic",
            "7.0.0",
            "Returns the expiration time of a key as a Unix milliseconds timestamp.",
            "O(1)",
        ),
    Command::new("persist", 2, EXPIRE_FLAGS, EXPIRE_ACL, Data(expire::persist))
        .keys(specs::RW1_META)
        .doc("generic", "2.2.0", "Removes the expiration time of a key.", "O(1)"),
    Command::container("object", -2, 0, acl::SLOW, object::SUBCOMMANDS).doc(
        "generic",
        "2.2.3",
        "A container for object introspection commands.",
        "Depends on subcommand.",
    ),
    Command::new("select", 2, flag::LOADING | flag::STALE | flag::FAST | flag::ALLOW_BUSY, acl::FAST | acl::CONNECTION, Data(dbs::select))
        .doc("connection", "1.0.0", "Changes the selected database.", "O(1)"),
    Command::new("swapdb", 3, flag::WRITE | flag::FAST, acl::KEYSPACE | acl::WRITE | acl::FAST | acl::DANGEROUS, Server(dbs::swapdb))
        .doc(
            "server",
            "4.0.0",
            "Swaps two databases.",
            "O(N) where N is the count of clients watching or blocking on keys from both databases.",
        ),
    Command::new("dbsize", 1, flag::READONLY | flag::FAST, acl::KEYSPACE | acl::READ | acl::FAST, Data(dbs::dbsize))
        .tips(ALL_SHARDS_SUM)
        .doc("server", "1.0.0", "Returns the number of keys in the database.", "O(1)"),
    Command::new("flushdb", -1, flag::WRITE, acl::KEYSPACE | acl::WRITE | acl::SLOW | acl::DANGEROUS, Server(dbs::flushdb))
        .history(&[
            ("4.0.0", "Added the `ASYNC` flushing mode modifier."),
            ("6.2.0", "Added the `SYNC` flushing mode modifier."),
        ])
        .tips(ALL_SHARDS_SUCCEEDED)
        .doc(
            "server",
            "1.0.0",
            "Removes all keys from the current database.",
            "O(N) where N is the number of keys in the selected database",
        ),
    Command::new("flushall", -1, flag::WRITE, acl::KEYSPACE | acl::WRITE | acl::SLOW | acl::DANGEROUS, Server(dbs::flushall))
        .history(&[
            ("4.0.0", "Added the `ASYNC` flushing mode modifier."),
            ("6.2.0", "Added the `SYNC` flushing mode modifier."),
        ])
        .tips(ALL_SHARDS_SUCCEEDED)
        .doc(
            "server",
            "1.0.0",
            "Removes all keys from all databases.",
            "O(N) where N is the total number of keys in all databases",
        ),
];

/// A database index argument, parsed as Valkey's `getIntFromObjectOrReply`: not an integer
/// and out of the 32-bit range are two different errors.
fn db_index_arg(a: &[u8]) -> Result<i32, CmdError> {
    let n = parse_i64(a).ok_or(CmdError::NotInteger)?;
    i32::try_from(n)
        .map_err(|_| CmdError::OutOfRangeBetween { min: i32::MIN as i64, max: i32::MAX as i64 })
}

/// The position of database `index` in `dbs`, or `DB index is out of range`.
fn db_position(dbs: &[Db], index: i32) -> Result<usize, CmdError> {
    usize::try_from(index).ok().filter(|&i| i < dbs.len()).ok_or(CmdError::DbIndexOutOfRange)
}

/// Two different databases, both mutable.
fn two_dbs(dbs: &mut [Db], a: usize, b: usize) -> (&mut Db, &mut Db) {
    assert_ne!(a, b, "two_dbs needs two different databases");
    if a < b {
        let (low, high) = dbs.split_at_mut(b);
        (&mut low[a], &mut high[0])
    } else {
        let (low, high) = dbs.split_at_mut(a);
        (&mut high[0], &mut low[b])
    }
}

/// The access clock that maxmemory-policy (and the lfu-* settings) ask for.
pub fn access_clock_for(config: &Config) -> AccessClock {
    match config.maxmemory_policy {
        MaxmemoryPolicy::AllkeysLfu | MaxmemoryPolicy::VolatileLfu => AccessClock::Lfu {
            log_factor: config.lfu_log_factor,
            decay_time_mins: config.lfu_decay_time_mins,
        },
        _ => AccessClock::Lru,
    }
}

/// Put every database's access clock in step with the configuration. The server calls
/// this at start and whenever CONFIG SET changes maxmemory-policy, lfu-log-factor or
/// lfu-decay-time.
pub fn sync_access_clock(srv: &mut ServerState) {
    let clock = access_clock_for(&srv.config);
    for db in &mut srv.dbs {
        db.set_access_clock(clock);
    }
}
