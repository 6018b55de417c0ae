//! Protected mode: which freshly accepted connections are refused, and the `-DENIED` text
//! they get before the server closes them.
//!
//! Valkey's rule (since Redis 7, whatever `bind` says): while `protected-mode` is yes and
//! the default user has no password, only local clients are served. Local means a unix
//! socket, or a TCP peer whose address is in 127.0.0.0/8 (Valkey compares the text with
//! the prefix `127.`) or is exactly `::1`. IPv6 listeners are `IPV6_V6ONLY`, so an IPv4
//! client never shows up as `::ffff:127.x.x.x`. This module is pure: no socket, no config
//! struct, so the rule is tested on its own.

use std::net::IpAddr;

/// Where an accepted connection comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    Unix,
    Tcp(IpAddr),
}

impl Peer {
    /// Valkey's `connIsLocal`: unix sockets, 127.0.0.0/8 and ::1.
    pub fn is_local(self) -> bool {
        match self {
            Peer::Unix => true,
            Peer::Tcp(ip) => ip.is_loopback(),
        }
    }
}

/// Whether protected mode refuses `peer`.
pub fn denies(protected_mode: bool, default_user_has_password: bool, peer: Peer) -> bool {
    protected_mode && !default_user_has_password && !peer.is_local()
}

/// The reply a refused client gets (Valkey's exact text), then the connection closes.
pub const DENIED: &str = "-DENIED Running in protected mode because protected mode is enabled \
    and no password is set for the default user. In this mode connections are only accepted \
    from the loopback interface. If you want to connect from external computers, you may \
    adopt one of the following solutions: 1) Just disable protected mode sending the command \
    'CONFIG SET protected-mode no' from the loopback interface by connecting from the same \
    host the server is running, however MAKE SURE it's not publicly accessible from internet \
    if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can \
    just disable the protected mode by editing the configuration file, and setting the \
    protected mode option to 'no', and then restarting the server. 3) If you started the \
    server manually just for testing, restart it with the '--protected-mode no' option. 4) \
    Set up an authentication password for the default user. NOTE: You only need to do one of \
    the above things in order for the server to start accepting connections from the \
    outside.\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(ip: &str) -> Peer {
        Peer::Tcp(ip.parse().expect("an IP literal"))
    }

    #[test]
    fn only_local_peers_pass_without_a_password() {
        for local in [tcp("127.0.0.1"), tcp("127.0.0.2"), tcp("127.255.255.254"), tcp("::1")] {
            assert!(!denies(true, false, local), "{local:?}");
        }
        assert!(!denies(true, false, Peer::Unix));
        // Not loopback to Valkey: other addresses of the host, the wildcard, and IPv4
        // loopback written as an IPv4-mapped IPv6 address (its text does not start "127.").
        for remote in [tcp("192.0.2.2"), tcp("10.0.0.1"), tcp("fd00::2"), tcp("fe80::1")] {
            assert!(denies(true, false, remote), "{remote:?}");
        }
        for odd in [tcp("0.0.0.0"), tcp("::"), tcp("::ffff:127.0.0.1"), tcp("126.0.0.1")] {
            assert!(denies(true, false, odd), "{odd:?}");
        }
    }

    #[test]
    fn a_password_or_protected_mode_off_lets_everyone_in() {
        let remote = tcp("192.0.2.2");
        assert!(!denies(true, true, remote));
        assert!(!denies(false, false, remote));
        assert!(!denies(false, true, remote));
    }

    #[test]
    fn the_denial_is_one_error_line() {
        assert!(DENIED.starts_with("-DENIED Running in protected mode because"));
        assert!(DENIED.ends_with("from the outside.\r\n"));
        assert_eq!(DENIED.matches("\r\n").count(), 1);
        assert!(!DENIED.contains("  "), "line continuations must leave single spaces");
    }
}
