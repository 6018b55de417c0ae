//! The command table: each family file declares its commands next to its handlers; this
//! lists the families. COMMAND, dispatch and key extraction read it through
//! [`commands::all`](crate::commands::all).

use crate::commands::table::Command;
use crate::commands::{
    acl_cmd, aof_cmd, bitmap, client_cmd, command, config_cmd, connection, dump, function_cmd, geo,
    hash, hll, info, keyspace, list, migrate, persist_cmd, pubsub, repl_cmd, script_cmd,
    server_cmd, set, sort, stream, string, zset,
};

pub static FAMILIES: &[&[Command]] = &[
    string::COMMANDS,
    bitmap::COMMANDS,
    hll::COMMANDS,
    hash::COMMANDS,
    list::COMMANDS,
    set::COMMANDS,
    zset::COMMANDS,
    geo::COMMANDS,
    stream::COMMANDS,
    stream::GROUP_COMMANDS,
    stream::READ_COMMANDS,
    stream::INFO_COMMANDS,
    sort::COMMANDS,
    keyspace::COMMANDS,
    dump::COMMANDS,
    migrate::COMMANDS,
    persist_cmd::COMMANDS,
    aof_cmd::COMMANDS,
    acl_cmd::COMMANDS,
    connection::COMMANDS,
    pubsub::COMMANDS,
    crate::commands::multi::COMMANDS,
    server_cmd::COMMANDS,
    repl_cmd::COMMANDS,
    info::COMMANDS,
    client_cmd::COMMANDS,
    config_cmd::COMMANDS,
    command::COMMANDS,
    script_cmd::COMMANDS,
    function_cmd::COMMANDS,
];
