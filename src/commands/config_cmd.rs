//! The CONFIG family: CONFIG GET / SET / RESETSTAT / REWRITE / HELP.
//!
//! The configuration logic (patterns, parsing, all-or-nothing SET, the rewrite of the file)
//! lives in `crate::config`; these handlers turn its results into replies and apply the
//! changed directives that the running server must act on at once ([`apply_changes`]).

use bytes::Bytes;

use crate::commands::command::reply_help;
use crate::commands::error::ApplyFailure;
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::config::{Caller, Config};
use crate::keyspace::db::DbStats;
use crate::server::state::ServerState;

const FLAGS: u64 = flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE;
const ACL: u64 = acl::ADMIN | acl::SLOW | acl::DANGEROUS;
const PARAMS_COMPLEXITY: &str = "O(N) when N is the number of configuration parameters provided";

static SUBCOMMANDS: &[Command] = &[
    Command::new("config|get", -3, FLAGS, ACL, Server(get))
        .history(&[("7.0.0", "Added the ability to pass multiple pattern parameters in one call")])
        .doc(
            "server",
            "2.0.0",
            "Returns the effective values of configuration parameters.",
            PARAMS_COMPLEXITY,
        ),
    Command::new("config|set", -4, FLAGS, ACL, Server(set))
        .history(&[("7.0.0", "Added the ability to set multiple parameters in one call.")])
        .doc("server", "2.0.0", "Sets configuration parameters in-flight.", PARAMS_COMPLEXITY)
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    Command::new("config|resetstat", 2, FLAGS, ACL, Server(resetstat))
        .doc("server", "2.0.0", "Resets the server's statistics.", "O(1)")
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    Command::new("config|rewrite", 2, FLAGS, ACL, Server(rewrite))
        .doc("server", "2.8.0", "Persists the effective configuration to file.", "O(1)")
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    Command::new("config|help", 2, flag::LOADING | flag::STALE, acl::SLOW, Server(help)).doc(
        "server",
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        "O(1)",
    ),
];

pub static COMMANDS: &[Command] = &[Command::container("config", -2, 0, acl::SLOW, SUBCOMMANDS)
    .doc(
        "server",
        "2.0.0",
        "A container for server configuration commands.",
        "Depends on subcommand.",
    )];

/// `CONFIG GET pattern [pattern ...]`: a map of every matching directive to its value.
///
/// As in Valkey, a pattern without glob characters is a plain name (or alias) and is
/// answered under the name as typed; glob matches are answered under the table's names.
/// A name already answered (in any case) is not repeated.
fn get(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let config = &ctx.srv.config;
    let mut found: Vec<(String, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for pattern in &argv[2..] {
        if pattern.iter().any(|c| matches!(c, b'*' | b'?' | b'[')) {
            for (name, value) in config.get(&[&pattern[..]]) {
                if seen.insert(name.to_ascii_lowercase()) {
                    found.push((name, value));
                }
            }
            continue;
        }
        let name = String::from_utf8_lossy(pattern).into_owned();
        if seen.contains(&name.to_ascii_lowercase()) {
            continue;
        }
        if let Some(value) = config.get_value(&name) {
            seen.insert(name.to_ascii_lowercase());
            found.push((name, value));
        }
    }
    ctx.out.map(found.len());
    for (name, value) in &found {
        ctx.out.bulk(name.as_bytes());
        ctx.out.bulk(value.as_bytes());
    }
    Ok(())
}

/// `CONFIG SET name value [name value ...]`: all pairs or none.
fn set(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let args = &argv[2..];
    if !args.len().is_multiple_of(2) {
        // Valkey answers an unpaired trailing name with a syntax error, not an arity error.
        return Err(CmdError::Syntax);
    }
    let pairs: Vec<(&[u8], &[u8])> = args.chunks_exact(2).map(|p| (&p[0][..], &p[1][..])).collect();
    let caller = if ctx.client.is_local() { Caller::Local } else { Caller::Remote };
    let before = ctx.srv.config.clone();
    let changed = ctx.srv.config.set_by(&pairs, caller).map_err(CmdError::Other)?;
    apply_changes(ctx.srv, &changed, before).map_err(CmdError::ConfigApply)?;
    ctx.out.ok();
    Ok(())
}

/// Reacts to directives that CONFIG SET changed, in request order, each with the whole
/// new configuration in place. When one cannot take effect, every value goes back to
/// `before` and the directives already acted on are acted on again with their old values,
/// so the server is as it was (Valkey's restoreBackupConfig); the error names the
/// directive that failed.
pub fn apply_changes(
    srv: &mut ServerState,
    changed: &[&'static str],
    before: Config,
) -> Result<(), ApplyFailure> {
    for (i, name) in changed.iter().enumerate() {
        let Err(failure) = apply_one(srv, name) else { continue };
        tracing::warn!(
            "Failed applying new configuration. Possibly related to new {name} setting. \
             Restoring previous settings."
        );
        srv.config.restore(before);
        for undone in &changed[..=i] {
            if let Err(e) = apply_one(srv, undone) {
                tracing::warn!("CONFIG SET: could not restore the previous {undone}: {e:?}");
            }
        }
        return Err(failure);
    }
    Ok(())
}

/// Acts on one changed directive that the server keeps a copy of or a resource for.
/// Everything else is read from `srv.config` where it is used (maxclients at accept,
/// timeouts and limits in the cron and the event loop); `dir` was entered by the config
/// module itself; `unixsocket` and `unixsocketperm` cannot be set at run time (as Valkey).
fn apply_one(srv: &mut ServerState, name: &str) -> Result<(), ApplyFailure> {
    match name {
        "hz" => srv.hz = srv.config.hz,
        // A lower limit is evicted down to by the next command and the time events.
        "maxmemory" => crate::server::evict::maxmemory_changed(srv),
        "maxmemory-policy" | "lfu-log-factor" | "lfu-decay-time" => {
            crate::commands::keyspace::sync_access_clock(srv)
        }
        "notify-keyspace-events" => srv.refresh_removal_log(),
        "loglevel" | "log-format" | "log-timestamp-format" => {
            crate::server::log::apply(&srv.config)
        }
        "aof-disable-auto-gc" => {
            crate::persist::aof::startup::delete_history(&mut crate::persist::store(srv))
        }
        "extended-redis-compatibility" => {
            crate::spec::error::set_redis_compat(srv.config.general.extended_redis_compatibility)
        }
        "requirepass" => srv.acl.set_default_password(srv.config.requirepass.as_bytes()),
        "appendonly" => {
            let now = crate::util::clock::now_ms();
            let result = crate::persist::aof::config_changed(&mut crate::persist::store(srv), now);
            // The propagation feed followed the AOF on or off.
            srv.refresh_removal_log();
            result.map_err(|_| ApplyFailure::Appendonly)?
        }
        "port" | "bind" => {
            // Existing connections stay; new ones come in where the config now says.
            let reopened = srv.listeners.rebind_tcp(&srv.config);
            srv.tcp_port = srv.listeners.tcp_port().unwrap_or(srv.config.port);
            reopened.map_err(|e| {
                tracing::warn!("CONFIG SET {name}: {e}");
                if name == "bind" {
                    ApplyFailure::Bind
                } else {
                    ApplyFailure::Port
                }
            })?
        }
        _ => {}
    }
    Ok(())
}

/// `CONFIG RESETSTAT`: the INFO counters (stats, commandstats, errorstats, keyspace
/// hits and misses, expired keys) start again from zero. The slow log and the ACL
/// refusal counters (`acl_access_denied_*`, as in Valkey 9.1) are kept.
fn resetstat(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.srv.stats.reset();
    for db in &mut ctx.srv.dbs {
        db.stats = DbStats::default();
    }
    crate::server::evict::reset_stats();
    ctx.out.ok();
    Ok(())
}

/// The configuration a rewrite writes: the settings, and as `user` lines the users in
/// memory, each as ACL LIST describes it.
pub fn config_to_write(srv: &crate::server::state::ServerState) -> crate::config::Config {
    let mut config = srv.config.clone();
    config.general.users = srv
        .acl
        .users()
        .map(|(_, u)| {
            let mut words = vec![String::from_utf8_lossy(&u.name).into_owned()];
            let rules = String::from_utf8_lossy(&u.describe()).into_owned();
            words.extend(rules.split(' ').map(str::to_string));
            words
        })
        .collect();
    config
}

/// `CONFIG REWRITE`: bring the config file the server was started with up to date.
fn rewrite(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let Some(path) = ctx.srv.config_file.as_deref() else {
        return Err(CmdError::NoConfigFile);
    };
    if let Err(e) = config_to_write(ctx.srv).rewrite(path) {
        tracing::warn!("CONFIG REWRITE failed: {e}");
        return Err(CmdError::Other(e));
    }
    tracing::info!("CONFIG REWRITE executed with success.");
    ctx.out.ok();
    Ok(())
}

const HELP_LINES: &[&str] = &[
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
];

fn help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(ctx.out, "CONFIG", HELP_LINES);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::reply::{Proto, Reply};
    use crate::server::client::Client;

    /// Runs `handler` on a fresh server state with `argv`, returning the reply bytes.
    fn run(
        srv: &mut ServerState,
        handler: fn(&mut ServerCtx, &[Bytes]) -> CmdResult,
        argv: &[&str],
    ) -> Result<Vec<u8>, CmdError> {
        let argv: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a.as_bytes())).collect();
        let mut client = Client::new(1, "127.0.0.1:1".into(), "127.0.0.1:2".into(), -1, false, 0);
        let mut out = Reply::new(Proto::Resp2);
        let mut ctx = ServerCtx { srv, client: &mut client, out: &mut out, now_ms: 0, slot: 0 };
        handler(&mut ctx, &argv).map(|()| out.buf)
    }

    #[test]
    fn set_applies_hz_to_the_running_server() {
        let mut srv = ServerState::new(Config::default(), None, 0);
        assert_eq!(
            run(&mut srv, set, &["config", "set", "hz", "50", "maxmemory", "1mb"]),
            Ok(b"+OK\r\n".to_vec())
        );
        assert_eq!((srv.hz, srv.config.hz, srv.config.maxmemory_bytes), (50, 50, 1 << 20));
        assert_eq!(
            run(&mut srv, set, &["config", "set", "hz", "60", "maxmemory"]),
            Err(CmdError::Syntax)
        );
        assert_eq!(srv.hz, 50);
    }

    #[test]
    fn resetstat_clears_counters_but_not_the_slowlog() {
        let mut srv = ServerState::new(Config::default(), None, 0);
        srv.stats.total_commands_processed = 7;
        srv.stats.cmd.entry("get").or_default().calls = 3;
        srv.stats.errors.insert("ERR".into(), 2);
        srv.dbs[1].stats.keyspace_hits = 4;
        srv.dbs[0].stats.expired_keys = 5;
        let slowlog_before = format!("{:?}", srv.commandlog);
        assert_eq!(run(&mut srv, resetstat, &["config", "resetstat"]), Ok(b"+OK\r\n".to_vec()));
        assert_eq!(srv.stats.total_commands_processed, 0);
        assert!(srv.stats.cmd.is_empty() && srv.stats.errors.is_empty());
        assert_eq!((srv.dbs[1].stats.keyspace_hits, srv.dbs[0].stats.expired_keys), (0, 0));
        assert_eq!(format!("{:?}", srv.commandlog), slowlog_before);
    }

    #[test]
    fn rewrite_without_a_file_is_an_error() {
        let mut srv = ServerState::new(Config::default(), None, 0);
        assert_eq!(run(&mut srv, rewrite, &["config", "rewrite"]), Err(CmdError::NoConfigFile));
    }

    #[test]
    fn get_replies_a_map() {
        let mut srv = ServerState::new(Config::default(), None, 0);
        let reply = run(&mut srv, get, &["config", "get", "maxmemory", "nosuch"]).unwrap();
        assert_eq!(reply, b"*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n");
        // Plain names keep the case typed; a name is answered once.
        let reply =
            run(&mut srv, get, &["config", "get", "MaxMemory", "maxmemory", "maxmemor?"]).unwrap();
        assert_eq!(reply, b"*2\r\n$9\r\nMaxMemory\r\n$1\r\n0\r\n");
        let reply = run(&mut srv, get, &["config", "get", "hz", "HZ"]).unwrap();
        assert_eq!(reply, b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    }
}
