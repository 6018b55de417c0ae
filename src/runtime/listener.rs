//! Listening sockets: TCP on every `bind` address (IPv4 and IPv6) and the optional unix
//! socket; accepting, keepalive, and reopening the TCP listeners when CONFIG SET changes
//! `bind` or `port`. Who may stay once accepted is `protected_mode`'s call.
//!
//! IPv6 listeners are `IPV6_V6ONLY`, as Valkey's, so the default `bind * -::*` holds both
//! wildcards on one port (without it, `::` takes the IPv4 port too and `0.0.0.0` fails).
//! A `-` before an address makes it optional: skipped when the host lacks that address or
//! address family, an error for anything else (a port in use).
//!
//! A reopen ([`Listeners::rebind_tcp`]) keeps the listeners whose address stays, closes the
//! others, opens the new ones; when one fails it closes what it opened and reopens what it
//! closed, so a refused CONFIG SET leaves the server listening where it was.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use mio::net::{TcpListener, UnixListener};
use mio::{Interest, Registry, Token};
use tracing::warn;

use crate::config::Config;
use crate::runtime::conn::Sock;
use crate::runtime::protected_mode::Peer;

/// Listener tokens count down from the top of the token space; clients count up from 0.
/// `bind` takes 16 addresses at most (Valkey's CONFIG_BINDADDR_MAX), plus the unix socket.
const LISTENER_TOKEN_BASE: usize = usize::MAX - 64;

enum Listener {
    /// The socket and the address it was asked to listen on (the port as configured).
    Tcp(TcpListener, SocketAddr),
    Unix(UnixListener, String),
}

/// Every listening socket, registered with the event loop's poll (a `Registry` clone, so
/// CONFIG SET can reopen them from inside a command). Tokens follow the order of `all`.
#[derive(Default)]
pub struct Listeners {
    all: Vec<Listener>,
    /// None only for a server state without an event loop (unit tests).
    registry: Option<Registry>,
    /// The TCP port bound (useful with `port 0`).
    pub tcp_port: Option<u16>,
}

/// A freshly accepted connection.
pub struct Accepted {
    pub sock: Sock,
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
    pub unix: bool,
    pub peer: Peer,
}

fn fmt_addr(a: &SocketAddr) -> String {
    match a {
        SocketAddr::V4(v) => format!("{}:{}", v.ip(), v.port()),
        SocketAddr::V6(v) => format!("{}:{}", v.ip(), v.port()),
    }
}

/// One `bind` entry on a port: where to listen, and whether a missing address is skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BindAddr {
    addr: SocketAddr,
    optional: bool,
}

/// The TCP addresses `config` asks for: none with `port 0` (no TCP at all, as Valkey).
/// `*` is every IPv4 address, `::*` every IPv6 address.
fn bind_addrs(config: &Config) -> io::Result<Vec<BindAddr>> {
    if config.port == 0 {
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(config.bind.len());
    for spec in &config.bind {
        let (optional, text) = match spec.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, spec.as_str()),
        };
        let ip = match text {
            "*" => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            "::*" => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            _ => text.parse().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("Invalid bind address '{text}'"),
                )
            })?,
        };
        out.push(BindAddr { addr: SocketAddr::new(ip, config.port), optional });
    }
    Ok(out)
}

/// Errors of an optional (`-`) address that mean "this host has no such address or
/// family": the address is skipped, as Valkey's listenToPort does.
fn skippable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::EADDRNOTAVAIL
                | libc::EAFNOSUPPORT
                | libc::EPROTONOSUPPORT
                | libc::ENOPROTOOPT
                | libc::ESOCKTNOSUPPORT
                | libc::EPFNOSUPPORT
        )
    )
}

impl crate::server::state::Listening for Listeners {
    fn rebind_tcp(&mut self, config: &Config) -> io::Result<()> {
        Listeners::rebind_tcp(self, config)
    }

    fn tcp_port(&self) -> Option<u16> {
        self.tcp_port
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The event loop's listeners, inside the server state.
pub fn of(srv: &crate::server::state::ServerState) -> &Listeners {
    srv.listeners.as_any().downcast_ref().expect("the event loop's listeners")
}

impl Listeners {
    /// Opens every listener `config` names and registers them with `registry`.
    pub fn bind(config: &Config, registry: Registry) -> io::Result<Listeners> {
        let mut l = Listeners { all: Vec::new(), registry: Some(registry), tcp_port: None };
        for b in bind_addrs(config)? {
            if let Some(t) = open_tcp(b, config.tcp_backlog)? {
                l.all.push(t);
            }
        }
        if !config.unixsocket.is_empty() {
            l.all.push(open_unix(&config.unixsocket, config.unixsocketperm)?);
        }
        l.register(0)?;
        Ok(l)
    }

    /// CONFIG SET `bind` or `port`: listen where `config` now says. Listeners on an address
    /// that stays are kept (their clients in the accept queue too). On error the previous
    /// set is restored and the error returned; the unix socket is not touched.
    /// Without an event loop (a server state in a unit test) there is nothing to reopen.
    pub fn rebind_tcp(&mut self, config: &Config) -> io::Result<()> {
        if self.registry.is_none() {
            return Ok(());
        }
        let wanted = bind_addrs(config)?;
        let (kept, dropped): (Vec<Listener>, Vec<Listener>) =
            std::mem::take(&mut self.all).into_iter().partition(|l| match l {
                Listener::Tcp(_, addr) => wanted.iter().any(|w| w.addr == *addr),
                Listener::Unix(..) => true,
            });
        self.all = kept;
        let mut closed: Vec<BindAddr> = Vec::new();
        for l in dropped {
            if let Listener::Tcp(mut t, addr) = l {
                self.deregister(&mut t);
                closed.push(BindAddr { addr, optional: true });
            }
        }
        let kept_len = self.all.len();
        let new: Vec<BindAddr> = wanted.into_iter().filter(|w| !self.has_tcp(w.addr)).collect();
        let mut result = Ok(());
        for b in new {
            match open_tcp(b, config.tcp_backlog) {
                Ok(Some(t)) => self.all.push(t),
                Ok(None) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_err() {
            // Back to where it was: close the new ones, reopen the closed ones.
            for l in self.all.drain(kept_len..).collect::<Vec<_>>() {
                if let Listener::Tcp(mut t, _) = l {
                    self.deregister(&mut t);
                }
            }
            for b in closed {
                match open_tcp(b, config.tcp_backlog) {
                    Ok(Some(t)) => self.all.push(t),
                    Ok(None) => {}
                    Err(e) => warn!("Could not listen again on {}: {e}", b.addr),
                }
            }
        }
        self.register(kept_len)?;
        result
    }

    fn has_tcp(&self, addr: SocketAddr) -> bool {
        self.all.iter().any(|l| matches!(l, Listener::Tcp(_, a) if *a == addr))
    }

    fn deregister(&self, t: &mut TcpListener) {
        if let Some(r) = &self.registry {
            let _ = r.deregister(t);
        }
    }

    /// Registers the listeners from position `first_new` on, and moves those before it to
    /// the token of their (maybe new) position; recomputes `tcp_port`.
    fn register(&mut self, first_new: usize) -> io::Result<()> {
        assert!(self.all.len() < 64, "more listeners than reserved tokens");
        self.tcp_port = None;
        for (i, l) in self.all.iter_mut().enumerate() {
            let token = Token(LISTENER_TOKEN_BASE + i);
            let source: &mut dyn mio::event::Source = match l {
                Listener::Tcp(t, _) => {
                    self.tcp_port = Some(t.local_addr()?.port());
                    t
                }
                Listener::Unix(u, _) => u,
            };
            match &self.registry {
                Some(r) if i < first_new => r.reregister(source, token, Interest::READABLE)?,
                Some(r) => r.register(source, token, Interest::READABLE)?,
                None => {}
            }
        }
        Ok(())
    }

    /// The local addresses of the TCP listeners (tests, logs).
    pub fn tcp_addrs(&self) -> Vec<SocketAddr> {
        self.all
            .iter()
            .filter_map(|l| match l {
                Listener::Tcp(t, _) => t.local_addr().ok(),
                Listener::Unix(..) => None,
            })
            .collect()
    }

    /// Which listener a token belongs to, if any.
    pub fn which(&self, token: usize) -> Option<usize> {
        let i = token.checked_sub(LISTENER_TOKEN_BASE)?;
        (i < self.all.len()).then_some(i)
    }

    pub fn accept(&self, which: usize) -> io::Result<Option<Accepted>> {
        let r = match &self.all[which] {
            Listener::Tcp(l, _) => l.accept().map(|(s, peer)| {
                let laddr = s.local_addr().map(|a| fmt_addr(&a)).unwrap_or_default();
                let fd = s.as_raw_fd();
                Accepted {
                    sock: Sock::Tcp(s),
                    addr: fmt_addr(&peer),
                    laddr,
                    fd,
                    unix: false,
                    peer: Peer::Tcp(peer.ip()),
                }
            }),
            Listener::Unix(l, path) => l.accept().map(|(s, _)| {
                let fd = s.as_raw_fd();
                Accepted {
                    sock: Sock::Unix(s),
                    addr: format!("{path}:0"),
                    laddr: path.clone(),
                    fd,
                    unix: true,
                    peer: Peer::Unix,
                }
            }),
        };
        match r {
            Ok(a) => Ok(Some(a)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        for l in &self.all {
            if let Listener::Unix(_, path) = l {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// A TCP listener on `b`, or None for an optional address this host cannot have.
fn open_tcp(b: BindAddr, backlog: u32) -> io::Result<Option<Listener>> {
    match listen_socket(b.addr, backlog.min(i32::MAX as u32) as i32) {
        Ok(fd) => {
            let std_l = std::net::TcpListener::from(fd);
            Ok(Some(Listener::Tcp(TcpListener::from_std(std_l), b.addr)))
        }
        Err(e) if b.optional && skippable(&e) => {
            warn!("Could not create server TCP listening socket {}: {e} (skipped)", b.addr);
            Ok(None)
        }
        Err(e) => {
            warn!("Could not create server TCP listening socket {}: {e}", b.addr);
            Err(io::Error::new(
                e.kind(),
                format!("Could not create server TCP listening socket {}: {e}", b.addr),
            ))
        }
    }
}

fn open_unix(path: &str, perm: u32) -> io::Result<Listener> {
    let _ = std::fs::remove_file(path);
    let l = UnixListener::bind(path)
        .map_err(|e| io::Error::new(e.kind(), format!("Failed opening Unix socket {path}: {e}")))?;
    if perm != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(perm))?;
    }
    Ok(Listener::Unix(l, path.to_string()))
}

/// A non-blocking, close-on-exec listening socket on `addr`: `SO_REUSEADDR` (a restart
/// binds while old connections linger in TIME_WAIT), `IPV6_V6ONLY` on IPv6, then bind and
/// listen with the configured backlog. std's `TcpListener::bind` cannot set an option
/// between socket(2) and bind(2), hence libc.
fn listen_socket(addr: SocketAddr, backlog: i32) -> io::Result<OwnedFd> {
    let family = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    let kind = libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: socket(2) takes no pointers; a non-negative result is a new descriptor that
    // nothing else owns, so OwnedFd may take it (and close it on every error path below).
    let fd = unsafe {
        let raw = libc::socket(family, kind, 0);
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(raw)
    };
    set_int_option(&fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    let rc = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            let len = std::mem::size_of_val(&sin) as libc::socklen_t;
            // SAFETY: `sin` is a live, fully initialised sockaddr_in and `len` is its size;
            // bind(2) only reads it during the call.
            unsafe { libc::bind(fd.as_raw_fd(), (&sin as *const libc::sockaddr_in).cast(), len) }
        }
        SocketAddr::V6(a) => {
            set_int_option(&fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 1)?;
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            let len = std::mem::size_of_val(&sin6) as libc::socklen_t;
            // SAFETY: as above, with a fully initialised sockaddr_in6 of `len` bytes.
            unsafe { libc::bind(fd.as_raw_fd(), (&sin6 as *const libc::sockaddr_in6).cast(), len) }
        }
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: listen(2) on a descriptor `fd` owns; no pointers.
    if unsafe { libc::listen(fd.as_raw_fd(), backlog) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// setsockopt(2) of one `int` option.
fn set_int_option(fd: &OwnedFd, level: i32, name: i32, value: libc::c_int) -> io::Result<()> {
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` is a live c_int of `len` bytes, read only during the call; `fd` is an
    // open socket for the whole call.
    let rc = unsafe {
        libc::setsockopt(fd.as_raw_fd(), level, name, (&value as *const libc::c_int).cast(), len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Turn on TCP keepalive with the configured interval (0 disables).
pub fn set_keepalive(s: &mio::net::TcpStream, interval_secs: u64) {
    if interval_secs == 0 {
        return;
    }
    let fd = s.as_raw_fd();
    let on: libc::c_int = 1;
    let idle = interval_secs as libc::c_int;
    let intvl = (interval_secs / 3).max(1) as libc::c_int;
    let cnt: libc::c_int = 3;
    let sz = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: fd is a valid socket for the duration of the calls; each option value points
    // to a live c_int of the size passed.
    unsafe {
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, &on as *const _ as _, sz);
        libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, &idle as *const _ as _, sz);
        libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, &intvl as *const _ as _, sz);
        libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, &cnt as *const _ as _, sz);
    }
}

#[cfg(test)]
#[path = "listener_tests.rs"]
mod tests;
