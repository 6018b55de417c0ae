//! ferrokey's own directives (Valkey has none of them): the Prometheus metrics endpoint.
//! `metrics-port` turns it on (0, the default, leaves it off), `metrics-bind` is the one
//! address it listens on (loopback by default: the figures are served without
//! authentication, so exposing them is a deliberate choice), and `metrics-max-clients`
//! bounds its open connections (one more is answered 503 and closed). All three are read
//! once at start-up: CONFIG SET refuses them.

use super::*;

/// The metrics endpoint's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// TCP port of the HTTP endpoint; 0 turns it off.
    pub port: u16,
    /// The address it listens on (one IPv4 or IPv6 address, no `-` prefix).
    pub bind: String,
    /// Open connections at most; a further one is refused with HTTP 503.
    pub max_clients: u32,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics { port: 0, bind: "127.0.0.1".to_string(), max_clients: 16 }
    }
}

/// An address the endpoint can listen on.
fn ip_address(v: &str) -> Result<(), &'static str> {
    match v.parse::<std::net::IpAddr>() {
        Ok(_) => Ok(()),
        Err(_) => Err("argument must be an IPv4 or IPv6 address"),
    }
}

pub(super) static ROWS: &[Directive] = &[
    int(
        "metrics-port",
        Immutable,
        0,
        65535,
        "0",
        |c| c.metrics.port.into(),
        |c, v| c.metrics.port = v as u16,
    ),
    string(
        "metrics-bind",
        Immutable,
        "127.0.0.1",
        ip_address,
        |c| &c.metrics.bind,
        |c, v| c.metrics.bind = v,
    ),
    int(
        "metrics-max-clients",
        Immutable,
        1,
        1024,
        "16",
        |c| c.metrics.max_clients.into(),
        |c, v| c.metrics.max_clients = v as u32,
    ),
];
