//! `ferrokey-server [/path/to/config] [--directive value ...]`: parse the command line and
//! the configuration, set up logging, detach when asked, and run the server.
//!
//! Start-up errors (a bad config, a port in use) are printed and exit with status 1.

use std::process::ExitCode;

use clap::Parser;

/// A Valkey-compatible in-memory key-value server.
///
/// Every valkey.conf directive can also be given as `--name value`, after an optional
/// configuration file path.
#[derive(Parser, Debug)]
#[command(name = "ferrokey-server", version, disable_help_flag = false)]
#[command(override_usage = "ferrokey-server [/path/to/valkey.conf] [--directive value ...]")]
struct Cli {
    /// Configuration file, then `--directive value` pairs (e.g. `--port 6380 --save ''`).
    #[arg(allow_hyphen_values = true, trailing_var_arg = true, value_name = "ARGS")]
    args: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    ferrokey::config::set_command_names(ferrokey::commands::in_table);
    let (config, file) = match ferrokey::config::from_args(&cli.args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    if config.daemonize {
        if let Err(e) = ferrokey::runtime::daemon::daemonize() {
            eprintln!("Could not daemonize: {e}");
            return ExitCode::from(1);
        }
    }
    ferrokey::server::log::init(&config);
    config.log_warnings();
    if !config.pidfile.is_empty() || config.daemonize {
        let path = if config.pidfile.is_empty() {
            "/var/run/ferrokey.pid".to_string()
        } else {
            config.pidfile.clone()
        };
        if let Err(e) = std::fs::write(&path, format!("{}\n", std::process::id())) {
            tracing::warn!("Failed to write PID file {path}: {e}");
        }
    }
    let pidfile = config.pidfile.clone();
    let result = ferrokey::runtime::run(config, file);
    if !pidfile.is_empty() {
        let _ = std::fs::remove_file(&pidfile);
    }
    match result {
        Ok(()) => {
            tracing::warn!("ferrokey is now ready to exit, bye bye...");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::warn!("{e}");
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
