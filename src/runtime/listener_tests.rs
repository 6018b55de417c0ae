//! Unit tests of the listeners on real sockets (127.0.0.1 and ::1, plus the two wildcards
//! for `IPV6_V6ONLY`): the bind list, optional addresses, and reopening for CONFIG SET
//! with its rollback.

use super::*;
use std::net::{TcpListener as StdListener, TcpStream};
use std::time::Duration;

use mio::{Events, Poll};

/// A port free on 127.0.0.1 a moment ago.
fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0").expect("bind port 0").local_addr().expect("addr").port()
}

fn config(bind: &[&str], port: u16) -> Config {
    Config { bind: bind.iter().map(|b| b.to_string()).collect(), port, ..Config::default() }
}

fn sa(text: &str) -> SocketAddr {
    text.parse().expect("a socket address")
}

/// Accepts one connection on whichever listener `poll` reports ready, through the token.
fn accept_via_poll(poll: &mut Poll, l: &Listeners) -> Accepted {
    let mut events = Events::with_capacity(8);
    for _ in 0..50 {
        poll.poll(&mut events, Some(Duration::from_millis(100))).expect("poll");
        for ev in events.iter() {
            let which = l.which(ev.token().0).expect("a listener token");
            if let Some(acc) = l.accept(which).expect("accept") {
                return acc;
            }
        }
    }
    panic!("no connection to accept");
}

#[test]
fn ipv6_listeners_are_v6only_so_both_wildcards_share_a_port() {
    let port = free_port();
    let v6 = listen_socket(SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), port), 16)
        .expect("[::] listens (this host has IPv6: see /proc/net/if_inet6)");
    let v4 = listen_socket(SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), port), 16)
        .expect("0.0.0.0 listens on the same port beside a v6-only [::]");
    drop((v4, v6));
}

#[test]
fn the_bind_list_resolves_wildcards_and_optional_addresses() {
    let got = bind_addrs(&config(&["*", "-::*", "127.0.0.1", "-::1"], 7000)).unwrap();
    let want = [("0.0.0.0:7000", false), ("[::]:7000", true), ("127.0.0.1:7000", false)];
    let mut want: Vec<BindAddr> =
        want.iter().map(|(a, optional)| BindAddr { addr: sa(a), optional: *optional }).collect();
    want.push(BindAddr { addr: sa("[::1]:7000"), optional: true });
    assert_eq!(got, want);
    // port 0: no TCP at all; an address that is not an IP literal is an error.
    assert_eq!(bind_addrs(&config(&["127.0.0.1"], 0)).unwrap(), Vec::new());
    let e = bind_addrs(&config(&["999.1.1.1"], 7000)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn an_optional_address_the_host_lacks_is_skipped_and_a_required_one_fails() {
    let poll = Poll::new().unwrap();
    let port = free_port();
    // 203.0.113.0/24 is TEST-NET-3: no host has it.
    let c = config(&["127.0.0.1", "-203.0.113.7"], port);
    let l = Listeners::bind(&c, poll.registry().try_clone().unwrap()).expect("optional skipped");
    assert_eq!(l.tcp_addrs(), vec![sa(&format!("127.0.0.1:{port}"))]);
    drop(l);
    let c = config(&["127.0.0.1", "203.0.113.7"], port);
    let e = Listeners::bind(&c, poll.registry().try_clone().unwrap()).err().expect("fails");
    assert_eq!(e.raw_os_error(), None, "wrapped with the address: {e}");
    assert!(e.to_string().contains("203.0.113.7"), "{e}");
    // An optional address in use is an error, not a skip (the IPv6 half of `* -::*`).
    let taken = StdListener::bind("127.0.0.1:0").unwrap();
    let c = config(&["-127.0.0.1"], taken.local_addr().unwrap().port());
    assert!(Listeners::bind(&c, poll.registry().try_clone().unwrap()).is_err());
}

#[test]
fn rebinding_keeps_staying_listeners_and_rolls_back_on_failure() {
    let mut poll = Poll::new().unwrap();
    let port = free_port();
    let mut c = config(&["127.0.0.1"], port);
    let mut l = Listeners::bind(&c, poll.registry().try_clone().unwrap()).unwrap();
    let v4 = sa(&format!("127.0.0.1:{port}"));
    assert_eq!((l.tcp_addrs(), l.tcp_port), (vec![v4], Some(port)));

    // A new port that another socket holds: refused, and still listening where it was.
    let taken = StdListener::bind("127.0.0.1:0").unwrap();
    c.port = taken.local_addr().unwrap().port();
    assert_eq!(l.rebind_tcp(&c).unwrap_err().kind(), io::ErrorKind::AddrInUse);
    assert_eq!((l.tcp_addrs(), l.tcp_port), (vec![v4], Some(port)));
    // An address that is no address: the same.
    c.port = port;
    c.bind = vec!["127.0.0.1".into(), "999.1.1.1".into()];
    assert!(l.rebind_tcp(&c).is_err());
    assert_eq!(l.tcp_addrs(), vec![v4]);
    let _waiting = TcpStream::connect(v4).expect("the old listener still listens");
    let acc = accept_via_poll(&mut poll, &l);
    assert_eq!(acc.peer, Peer::Tcp("127.0.0.1".parse().unwrap()));

    // Adding ::1 keeps the 127.0.0.1 listener: a connection waiting in its accept queue
    // before the change is accepted after it.
    let _queued = TcpStream::connect(v4).unwrap();
    c.bind = vec!["::1".into(), "127.0.0.1".into()];
    l.rebind_tcp(&c).expect("add ::1");
    let v6 = sa(&format!("[::1]:{port}"));
    assert_eq!(l.tcp_addrs(), vec![v4, v6]);
    let acc = accept_via_poll(&mut poll, &l);
    assert_eq!(acc.peer, Peer::Tcp("127.0.0.1".parse().unwrap()));
    let _v6_client = TcpStream::connect(v6).expect("::1 listens");
    assert_eq!(accept_via_poll(&mut poll, &l).peer, Peer::Tcp("::1".parse().unwrap()));

    // A new port: the old one closes, the new one accepts (through its new token).
    let new_port = free_port();
    c.port = new_port;
    c.bind = vec!["127.0.0.1".into()];
    l.rebind_tcp(&c).expect("new port");
    assert_eq!(l.tcp_port, Some(new_port));
    assert!(TcpStream::connect(v4).is_err(), "the old port still listens");
    let _new = TcpStream::connect(("127.0.0.1", new_port)).expect("the new port listens");
    accept_via_poll(&mut poll, &l);

    // port 0: no TCP listener at all.
    c.port = 0;
    l.rebind_tcp(&c).unwrap();
    assert_eq!((l.tcp_addrs(), l.tcp_port), (vec![], None));
}

#[test]
fn without_an_event_loop_there_is_nothing_to_reopen() {
    let mut l = Listeners::default();
    l.rebind_tcp(&config(&["999.1.1.1"], 7000)).expect("no registry: no-op");
    assert_eq!(l.tcp_addrs(), vec![]);
}
