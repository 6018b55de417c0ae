//! Listening sockets: TCP on every `bind` address (IPv4 and IPv6) and the optional unix
//! socket; accepting, keepalive, and protected mode.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;

use mio::net::{TcpListener, UnixListener};
use mio::{Interest, Registry, Token};
use tracing::warn;

use crate::config::Config;
use crate::server::conn::Sock;

/// Listener tokens count down from the top of the token space; clients count up from 0.
const LISTENER_TOKEN_BASE: usize = usize::MAX - 64;

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, String),
}

pub struct Listeners {
    all: Vec<Listener>,
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
    pub peer_ip: Option<IpAddr>,
}

fn fmt_addr(a: &SocketAddr) -> String {
    match a {
        SocketAddr::V4(v) => format!("{}:{}", v.ip(), v.port()),
        SocketAddr::V6(v) => format!("{}:{}", v.ip(), v.port()),
    }
}

impl Listeners {
    pub fn bind(config: &Config, registry: &Registry) -> io::Result<Listeners> {
        let mut all = Vec::new();
        let mut tcp_port = None;
        if config.port != 0 {
            for spec in &config.bind {
                let (optional, addr) = match spec.strip_prefix('-') {
                    Some(rest) => (true, rest),
                    None => (false, spec.as_str()),
                };
                let ip: IpAddr = match addr {
                    "*" => "0.0.0.0".parse().expect("literal"),
                    "::*" => "::".parse().expect("literal"),
                    a => match a.parse() {
                        Ok(ip) => ip,
                        Err(_) => {
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidInput,
                                format!("Invalid bind address '{a}'"),
                            ))
                        }
                    },
                };
                let sa = SocketAddr::new(ip, config.port);
                match bind_tcp(sa, config.tcp_backlog as i32) {
                    Ok(l) => {
                        tcp_port = Some(l.local_addr()?.port());
                        all.push(Listener::Tcp(l));
                    }
                    Err(e) if optional => {
                        warn!("Could not create server TCP listening socket {sa}: {e} (optional)");
                    }
                    Err(e) => {
                        return Err(io::Error::new(
                            e.kind(),
                            format!("Could not create server TCP listening socket {sa}: {e}"),
                        ))
                    }
                }
            }
        }
        if !config.unixsocket.is_empty() {
            let path = config.unixsocket.clone();
            let _ = std::fs::remove_file(&path);
            let l = UnixListener::bind(&path).map_err(|e| {
                io::Error::new(e.kind(), format!("Failed opening Unix socket {path}: {e}"))
            })?;
            if config.unixsocketperm != 0 {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(
                    &path,
                    std::fs::Permissions::from_mode(config.unixsocketperm),
                )?;
            }
            all.push(Listener::Unix(l, path));
        }
        for (i, l) in all.iter_mut().enumerate() {
            let token = Token(LISTENER_TOKEN_BASE + i);
            match l {
                Listener::Tcp(t) => registry.register(t, token, Interest::READABLE)?,
                Listener::Unix(u, _) => registry.register(u, token, Interest::READABLE)?,
            }
        }
        Ok(Listeners { all, tcp_port })
    }

    /// Which listener a token belongs to, if any.
    pub fn which(&self, token: usize) -> Option<usize> {
        let i = token.checked_sub(LISTENER_TOKEN_BASE)?;
        (i < self.all.len()).then_some(i)
    }

    pub fn accept(&self, which: usize) -> io::Result<Option<Accepted>> {
        let r = match &self.all[which] {
            Listener::Tcp(l) => l.accept().map(|(s, peer)| {
                let laddr = s.local_addr().map(|a| fmt_addr(&a)).unwrap_or_default();
                let fd = s.as_raw_fd();
                Accepted {
                    sock: Sock::Tcp(s),
                    addr: fmt_addr(&peer),
                    laddr,
                    fd,
                    unix: false,
                    peer_ip: Some(peer.ip()),
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
                    peer_ip: None,
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

fn bind_tcp(sa: SocketAddr, backlog: i32) -> io::Result<TcpListener> {
    let std_l = std::net::TcpListener::bind(sa)?;
    // Apply the configured backlog: std binds with 128; listen(2) again is allowed and
    // updates it.
    // SAFETY: the fd is a valid listening socket owned by `std_l` for the whole call.
    unsafe {
        libc::listen(std_l.as_raw_fd(), backlog);
    }
    std_l.set_nonblocking(true)?;
    Ok(TcpListener::from_std(std_l))
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

/// The DENIED message of protected mode, when it applies to this connection.
pub fn protected_mode_denial(config: &Config, acc: &Accepted) -> Option<String> {
    if !config.protected_mode || !config.requirepass.is_empty() {
        return None;
    }
    let default_bind =
        config.bind.is_empty() || config.bind.iter().all(|b| b == "*" || b == "-::*" || b == "::*");
    if !default_bind {
        return None;
    }
    let ip = acc.peer_ip?;
    if ip.is_loopback() {
        return None;
    }
    Some(
        "-DENIED Running in protected mode because protected mode is enabled and no password \
         is set for the default user. In this mode connections are only accepted from the \
         loopback interface. If you want to connect from external computers, you may adopt \
         one of the following solutions: 1) Just disable protected mode sending the command \
         'CONFIG SET protected-mode no' from the loopback interface by connecting from the \
         same host the server is running, however MAKE SURE it's not publicly accessible from \
         internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) \
         Alternatively you can just disable the protected mode by editing the configuration \
         file, and setting the protected mode option to 'no', and then restarting the server. \
         3) If you started the server manually just for testing, restart it with the \
         '--protected-mode no' option. 4) Set up an authentication password for the default \
         user. NOTE: You only need to do one of the above things in order for the server to \
         start accepting connections from the outside.\r\n"
            .to_string(),
    )
}
