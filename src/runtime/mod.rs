//! The runtime: the mio event loop and everything that knows about sockets and threads
//! (listeners, connections, the I/O-thread jobs), the batch of ready commands and its
//! prefetch, dispatch, the time events, signals, logging and the start-up banner. The top
//! layer: it uses every other module and none uses it.

pub mod banner;
pub mod batch;
pub mod busy;
pub mod conn;
pub mod cron;
pub mod daemon;
pub mod dispatch;
pub mod event_loop;
pub mod io_slots;
pub mod ldb;
pub mod listener;
pub mod metrics;
pub mod parsed;
pub mod protected_mode;
pub mod script;
pub mod signals;
pub mod unblock;

use std::path::PathBuf;

use crate::config::Config;

/// Start-up with `appendonly yes`: replays the AOF directory through the command handlers
/// (nothing expires meanwhile, as in Valkey: a key whose time passed while the server was
/// down is still there for the writes logged after its last one), then opens it for
/// appending.
fn load_aof(srv: &mut crate::server::state::ServerState, now: i64) -> Result<(), String> {
    use crate::persist::aof::startup;
    let settings = startup::LoadSettings::new(&srv.config);
    srv.set_loading(true);
    let mut replayer =
        crate::commands::aof_replay::Replayer::new(srv, now, crate::runtime::script::run);
    let loaded = startup::load(&settings, &mut replayer, now);
    srv.set_loading(false);
    startup::open_loaded(&mut crate::persist::store(srv), loaded?, now)?;
    srv.refresh_removal_log();
    Ok(())
}

/// Start the server with a parsed configuration and run until SHUTDOWN.
///
/// The start-up follows Valkey's order (see `banner`): the listeners are opened, `Server
/// initialized` is logged, and only then is the dataset loaded, so a fatal load error is
/// logged after it.
pub fn run(config: Config, config_file: Option<PathBuf>) -> std::io::Result<()> {
    crate::memory::publish();
    crate::commands::set_renames(config.general.renames.clone());
    crate::spec::error::set_redis_compat(config.general.extended_redis_compatibility);
    banner::starting(config_file.as_deref());
    let now = crate::util::clock::now_ms();
    let mut srv = crate::server::state::ServerState::new(config, config_file, now);
    if let Err(e) = crate::commands::acl_cmd::load_users_at_startup(&mut srv) {
        tracing::warn!("{e}");
        return Err(std::io::Error::other(e));
    }
    crate::commands::keyspace::sync_access_clock(&mut srv);
    signals::install();
    let mut el = event_loop::EventLoop::new(srv)?;
    banner::mode(&el.srv.config, el.srv.tcp_port);
    tracing::info!("Server initialized");
    let now = crate::util::clock::now_ms();
    let loaded = if el.srv.config.appendonly {
        load_aof(&mut el.srv, now)
    } else {
        crate::persist::save::load_at_startup(&mut crate::persist::store(&mut el.srv), now)
            .map(|_| ())
    };
    if let Err(e) = loaded {
        tracing::warn!("{e}");
        return Err(std::io::Error::other(e));
    }
    tracing::info!("Ready to accept connections tcp");
    el.run()
}
