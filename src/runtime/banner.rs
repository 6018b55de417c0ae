//! The start-up lines, in Valkey's order and shape, so that tools which supervise Valkey by
//! its log (its own test suite, init scripts) read ferrokey's the same way:
//!
//! 1. `oO0OoO0OoO0Oo Valkey is starting oO0OoO0OoO0Oo`, the version line, and
//!    `Configuration loaded` (or the warning that no file was given);
//! 2. the logo (with `always-show-logo yes`, or when stdout is a terminal and there is no
//!    log file), whose ` PID: <pid>` those tools read, or else the one line
//!    `Running mode=standalone, port=N.`;
//! 3. `Server initialized`, then the dataset is loaded, then `Ready to accept connections`.
//!
//! A fatal load error comes after `Server initialized`, as in Valkey, so a supervisor sees it.
//! The logo is ferrokey's own drawing; only the facts on its right are Valkey's.

use std::io::IsTerminal;

use crate::commands::server_cmd::SERVER_VERSION;
use crate::config::Config;

/// Step 1: who is starting, and from what configuration.
pub fn starting(config_file: Option<&std::path::Path>) {
    tracing::info!("oO0OoO0OoO0Oo Valkey is starting oO0OoO0OoO0Oo");
    tracing::info!(
        "Valkey version={SERVER_VERSION}, bits={}, commit=00000000, modified=0, pid={}, just \
         started (ferrokey {})",
        usize::BITS,
        std::process::id(),
        env!("CARGO_PKG_VERSION")
    );
    match config_file {
        Some(_) => tracing::info!("Configuration loaded"),
        None => tracing::warn!(
            "Warning: no config file specified, using the default config. In order to specify \
             a config file use ferrokey-server /path/to/valkey.conf"
        ),
    }
}

/// Step 2: the logo, or the one line that stands for it.
pub fn mode(config: &Config, port: u16) {
    let show =
        config.always_show_logo || (config.logfile.is_empty() && std::io::stdout().is_terminal());
    if !show {
        tracing::info!("Running mode=standalone, port={port}.");
        return;
    }
    crate::server::log::raw(config, &logo(port, std::process::id()));
}

/// ferrokey's logo (an iron key) with Valkey's facts beside it.
fn logo(port: u16, pid: u32) -> String {
    let facts = [
        String::new(),
        format!(
            "ferrokey {} (Valkey {SERVER_VERSION} compatible) 64 bit",
            env!("CARGO_PKG_VERSION")
        ),
        String::new(),
        "Running in standalone mode".to_string(),
        format!("Port: {port}"),
        format!("PID: {pid}"),
        String::new(),
    ];
    let art = [
        "      .-------.      ",
        "     /  .---.  \\     ",
        "    |  |  Fe |  |    ",
        "     \\  '---'  /     ",
        "      '--. .--'      ",
        "         | |==       ",
        "         | |=        ",
    ];
    let mut out = String::from("\n");
    for (line, fact) in art.iter().zip(facts.iter()) {
        out.push_str(line);
        out.push_str("    ");
        out.push_str(fact);
        out.push('\n');
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_logo_carries_the_pid_that_supervisors_read() {
        let text = super::logo(6379, 4242);
        assert!(text.lines().any(|l| l.trim_end().ends_with(" PID: 4242")), "{text}");
        assert!(text.contains("Port: 6379"));
    }
}
