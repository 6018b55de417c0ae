//! The runtime: the mio event loop and everything that knows about sockets and threads
//! (listeners, connections, the I/O-thread jobs), the batch of ready commands and its
//! prefetch, dispatch, the time events, signals, logging and the start-up banner. The top
//! layer: it uses every other module and none uses it.

pub mod banner;
pub mod batch;
pub mod conn;
pub mod cron;
pub mod daemon;
pub mod dispatch;
pub mod event_loop;
pub mod io_slots;
pub mod listener;
pub mod log;
pub mod parsed;
pub mod protected_mode;
pub mod signals;
pub mod unblock;

use std::path::PathBuf;

use crate::config::Config;

/// Start the server with a parsed configuration and run until SHUTDOWN.
///
/// The start-up follows Valkey's order (see `banner`): the listeners are opened, `Server
/// initialized` is logged, and only then is the dataset loaded, so a fatal load error is
/// logged after it.
pub fn run(config: Config, config_file: Option<PathBuf>) -> std::io::Result<()> {
    crate::memory::publish();
    banner::starting(config_file.as_deref());
    let now = crate::util::clock::now_ms();
    let mut srv = crate::server::state::ServerState::new(config, config_file, now);
    crate::commands::keyspace::sync_access_clock(&mut srv);
    signals::install();
    let mut el = event_loop::EventLoop::new(srv)?;
    banner::mode(&el.srv.config, el.srv.tcp_port);
    tracing::info!("Server initialized");
    let now = crate::util::clock::now_ms();
    let loaded = if el.srv.config.appendonly {
        let mut replayer = crate::commands::aof_replay::Replayer::new(now);
        crate::persist::aof::startup::load_and_open(&mut el.srv, &mut replayer, now)
    } else {
        crate::persist::save::load_at_startup(&mut el.srv, now).map(|_| ())
    };
    if let Err(e) = loaded {
        tracing::warn!("{e}");
        return Err(std::io::Error::other(e));
    }
    tracing::info!("Ready to accept connections tcp");
    el.run()
}
