//! Iterating the keyspace: SCAN (cursor, MATCH, COUNT, TYPE), KEYS and RANDOMKEY. SCAN's
//! cursor and options are read by `commands::args`, as are those of HSCAN, SSCAN and ZSCAN.

use bytes::Bytes;

use crate::commands::args::{parse_cursor, parse_scan_opts, scan_reply, Pattern, ScanKind};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::keyspace::db::ObjView;
use crate::resp::reply::AggKind;

pub fn scan(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let cursor = parse_cursor(&argv[1]).ok_or(CmdError::InvalidCursor)?;
    let opts = parse_scan_opts(&argv[2..], ScanKind::Keys)?;
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let mut found: Vec<Vec<u8>> = Vec::new();
    let next = db.scan(cursor, opts.count, |key, _| {
        if opts.pattern.matches(key) {
            found.push(key.to_vec());
        }
    });
    // The type filter and expiry go through a lookup, as in Valkey: an expired key is
    // deleted here and not returned.
    found.retain(|key| match opts.type_name {
        None => db.contains(key, now),
        Some(t) => db
            .read_obj_notouch(key, now)
            .is_some_and(|obj| t.eq_ignore_ascii_case(obj.value_ref().type_name().as_bytes())),
    });
    scan_reply(ctx.out, next, &found);
    Ok(())
}

pub fn keys(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let pattern = Pattern::new(&argv[1]);
    let now = ctx.now_ms;
    let db = &ctx.dbs[ctx.client.db];
    let out = &mut *ctx.out;
    let header = out.begin_deferred(AggKind::Array);
    let mut n = 0;
    db.for_each(|key, obj| {
        if db.shows(obj, now) && pattern.matches(key) {
            out.bulk(key);
            n += 1;
        }
    });
    out.end_deferred(header, n);
    Ok(())
}

pub fn randomkey(ctx: &mut Ctx, _argv: &[Bytes]) -> CmdResult {
    let seed = ctx.random();
    let now = ctx.now_ms;
    match ctx.db().random_key(seed, now) {
        Some(key) => ctx.out.bulk(&key),
        None => ctx.out.null(),
    }
    Ok(())
}
