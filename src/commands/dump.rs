//! DUMP and RESTORE: a key's value as an RDB payload (`persist::rdb::dump`), moved between
//! servers. Payloads are exchangeable with redis-server 7.0 and Valkey in both directions.

use bytes::Bytes;

use crate::commands::args::is;
use crate::commands::table::ks::{ACCESS, OW, RO, UPDATE};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, range, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::clock::{lfu_clock_with_freq, lru_clock_idle_for};
use crate::keyspace::db::{is_expired, AccessClock, Obj, ObjView};
use crate::persist::rdb::dump::{self, PayloadError};
use crate::persist::rdb::value::LoadLimits;
use crate::types::string::parse_i64;

const DUMP_KEYS: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1)];
const RESTORE_KEYS: &[KeySpec] = &[range(OW | UPDATE, 1, 0, 1)];

pub static COMMANDS: &[Command] = &[
    Command::new("dump", 2, flag::READONLY, acl::KEYSPACE | acl::READ | acl::SLOW, Data(dump_cmd))
        .keys(DUMP_KEYS)
        .tips(&["nondeterministic_output"])
        .doc(
            "generic",
            "2.6.0",
            "Returns a serialized representation of the value stored at a key.",
            "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
        ),
    Command::new(
        "restore",
        -4,
        flag::WRITE | flag::DENYOOM,
        acl::KEYSPACE | acl::WRITE | acl::SLOW | acl::DANGEROUS,
        Data(restore),
    ).history(&[("3.0.0", "Added the `REPLACE` modifier."), ("5.0.0", "Added the `ABSTTL` modifier."), ("5.0.0", "Added the `IDLETIME` and `FREQ` options.")])
    .keys(RESTORE_KEYS)
    .doc(
        "generic",
        "2.6.0",
        "Creates a key from the serialized representation of a value.",
        "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
    ),
];

fn dump_cmd(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let compress = ctx.config.rdbcompression;
    let payload = ctx.db().read_obj(&argv[1], now).map(|e| dump::payload(e.value_ref(), compress));
    match payload {
        Some(p) => ctx.out.bulk(&p),
        None => ctx.out.null(),
    }
    Ok(())
}

/// RESTORE's options.
struct RestoreOpts {
    replace: bool,
    /// The TTL argument is a unix time in milliseconds.
    absolute_ttl: bool,
    idle_secs: Option<i64>,
    freq: Option<i64>,
}

fn parse_restore(argv: &[Bytes]) -> Result<RestoreOpts, CmdError> {
    let mut o = RestoreOpts { replace: false, absolute_ttl: false, idle_secs: None, freq: None };
    let mut i = 4;
    while i < argv.len() {
        let a = &argv[i];
        let has_next = i + 1 < argv.len();
        if is(a, "replace") {
            o.replace = true;
        } else if is(a, "absttl") {
            o.absolute_ttl = true;
        } else if is(a, "idletime") && has_next && o.freq.is_none() {
            let v = parse_i64(&argv[i + 1]).ok_or(CmdError::NotInteger)?;
            if v < 0 {
                return Err(CmdError::err("Invalid IDLETIME value, must be >= 0"));
            }
            o.idle_secs = Some(v);
            i += 1;
        } else if is(a, "freq") && has_next && o.idle_secs.is_none() {
            let v = parse_i64(&argv[i + 1]).ok_or(CmdError::NotInteger)?;
            if !(0..=255).contains(&v) {
                return Err(CmdError::err("Invalid FREQ value, must be >= 0 and <= 255"));
            }
            o.freq = Some(v);
            i += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    Ok(o)
}

pub(crate) fn restore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, payload) = (&argv[1], &argv[3]);
    let opts = parse_restore(argv)?;
    let ttl = parse_i64(&argv[2]).ok_or(CmdError::NotInteger)?;
    if ttl < 0 {
        return Err(CmdError::err("Invalid TTL value, must be >= 0"));
    }
    let now = ctx.now_ms;
    let exists = ctx.db().contains(key, now);
    if exists && !opts.replace {
        return Err(CmdError::Other("BUSYKEY Target key name already exists.".into()));
    }
    let lim = LoadLimits::from_config(ctx.config);
    let max_len = ctx.config.proto_max_bulk_len;
    let value = dump::parse(payload, &lim, max_len).map_err(|e| match e {
        PayloadError::VersionOrChecksum => {
            CmdError::err("DUMP payload version or checksum are wrong")
        }
        PayloadError::BadFormat => CmdError::err("Bad data format"),
    })?;
    let expire_at_ms = match ttl {
        0 => None,
        t if opts.absolute_ttl => Some(t),
        t => Some(t.saturating_add(now)),
    };
    if expire_at_ms.is_some_and(|at| is_expired(at, now)) && !ctx.keep_past_expiry {
        // Already expired: the key is not created (a replaced one is deleted), as Valkey.
        if exists && ctx.db().remove(key, now) {
            ctx.changed(key, 1, KeyspaceEvents::GENERIC, "del");
        }
        ctx.out.ok();
        return Ok(());
    }
    let access = ctx.db().access_clock();
    let lru = match (access, opts.idle_secs, opts.freq) {
        (AccessClock::Lfu { .. }, _, Some(f)) => lfu_clock_with_freq(f as u8, now),
        (AccessClock::Lru, Some(idle), _) => lru_clock_idle_for(idle as u64, now),
        _ => crate::keyspace::clock::new_clock(access, now),
    };
    if exists && ctx.db().remove(key, now) {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
    ctx.db().put(key, Obj { value, expire_at_ms, lru, raw: false });
    ctx.changed(key, 1, KeyspaceEvents::GENERIC, "restore");
    ctx.out.ok();
    Ok(())
}
