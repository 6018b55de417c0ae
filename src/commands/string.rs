//! String commands.
use bytes::Bytes;

use crate::commands::table::{acl, flag, specs, Command};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::keyspace::db::{Ttl, ValueRef};
use crate::resp::reply::Reply;
use crate::types::string::{StrRef, StrValue};

pub static COMMANDS: &[Command] = &[
    Command::new("get", 2, flag::READONLY | flag::FAST, acl::READ | acl::STRING | acl::FAST, get)
        .keys(specs::READ1)
        .doc("string", "1.0.0", "Returns the string value of a key.", "O(1)"),
    Command::new("set", -3, flag::WRITE | flag::DENYOOM, acl::WRITE | acl::STRING | acl::SLOW, set)
        .keys(specs::OVERWRITE1)
        .doc("string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", "O(1)"),
];

/// Reply with a string value.
pub fn reply_str(out: &mut Reply, s: StrRef<'_>) {
    match s {
        StrRef::Int(n) => out.bulk_int(n),
        StrRef::Raw(b) => out.bulk(b),
    }
}

fn get(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.client.db];
    match db.get(&argv[1], ctx.now_ms) {
        None => ctx.out.null(),
        Some(ValueRef::Str(s)) => reply_str(ctx.out, s),
        #[allow(unreachable_patterns)]
        Some(_) => return Err(CmdError::WrongType),
    }
    Ok(())
}

fn set(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.client.db];
    db.set_str(&argv[1], StrValue::from_bytes(&argv[2]), Ttl::Clear, ctx.now_ms);
    ctx.out.ok();
    Ok(())
}
