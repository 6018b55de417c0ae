//! The request pipeline under I/O threads and batching: the same interleaved pipelined load
//! gives the same replies with io-threads 1, 2 and 4; clients that vanish or are killed while
//! their work is in flight; output limits and shutdown with the threads busy.

mod common;

use std::io::Write;
use std::thread;
use std::time::Duration;

use common::{start, Client, Val};

/// Each client pipelines INCRs on shared counters and APPENDs to its own key, then reads
/// everything back. The final state is fully determined, whatever the interleaving.
fn shared_key_load(port: u16) -> Vec<Val> {
    let clients = 16;
    let rounds = 200;
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            thread::spawn(move || {
                let mut cl = Client::connect(port);
                let mut buf = Vec::new();
                for r in 0..rounds {
                    buf.extend(Client::encode(&[b"INCR", format!("ctr{}", r % 4).as_bytes()]));
                    buf.extend(Client::encode(&[
                        b"APPEND",
                        format!("own{c}").as_bytes(),
                        format!("{r},").as_bytes(),
                    ]));
                }
                cl.send_raw(&buf);
                let mut own_lens = Vec::new();
                for _ in 0..rounds {
                    let Val::Int(_) = cl.read() else { panic!("INCR must answer an integer") };
                    own_lens.push(cl.read());
                }
                // APPEND replies are this client's own running lengths: strictly in order.
                let lens: Vec<i64> = own_lens.iter().map(|v| v.as_int()).collect();
                assert!(lens.windows(2).all(|w| w[0] < w[1]), "replies out of order: {lens:?}");
            })
        })
        .collect();
    for h in handles {
        h.join().expect("client thread");
    }
    let mut c = Client::connect(port);
    let mut state = Vec::new();
    for k in 0..4 {
        state.push(c.cmd(&["GET", &format!("ctr{k}")]));
    }
    for k in 0..clients {
        state.push(c.cmd(&["GET", &format!("own{k}")]));
    }
    state
}

#[test]
fn replies_are_the_same_with_1_2_and_4_io_threads() {
    let mut results = Vec::new();
    for threads in ["1", "2", "4"] {
        let s = start(&["--io-threads", threads]);
        results.push(shared_key_load(s.port));
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], results[2]);
    assert_eq!(results[0][0], Val::bulk(&(16 * 50).to_string()));
}

#[test]
fn prefetch_disabled_gives_the_same_replies() {
    let a = start(&["--prefetch-batch-max-size", "0"]);
    let b = start(&["--prefetch-batch-max-size", "16"]);
    assert_eq!(shared_key_load(a.port), shared_key_load(b.port));
}

#[test]
fn clients_vanishing_mid_pipeline_do_not_disturb_others() {
    let s = start(&["--io-threads", "4"]);
    let port = s.port;
    let quitters: Vec<_> = (0..20)
        .map(|_| {
            thread::spawn(move || {
                let mut c = Client::connect(port);
                let mut buf = Vec::new();
                for i in 0..500 {
                    buf.extend(Client::encode(&[b"SET", format!("q{i}").as_bytes(), b"v"]));
                }
                let _ = c.stream.get_mut().write_all(&buf);
                // Drop without reading: the server is reading, executing or writing.
            })
        })
        .collect();
    let mut steady = Client::connect(port);
    for i in 0..300 {
        assert_eq!(steady.cmd(&["INCR", "steady"]), Val::Int(i + 1));
    }
    for q in quitters {
        q.join().expect("quitter");
    }
    assert_eq!(steady.cmd(&["PING"]), Val::Simple("PONG".into()));
}

#[test]
fn client_killed_while_its_commands_are_queued() {
    let s = start(&["--io-threads", "2"]);
    let mut victim = Client::connect(s.port);
    let id = victim.cmd(&["CLIENT", "ID"]).as_int();
    let mut killer = Client::connect(s.port);
    // A long pipeline from the victim, with the kill racing it.
    let mut buf = Vec::new();
    for i in 0..5000 {
        buf.extend(Client::encode(&[b"SET", format!("v{i}").as_bytes(), b"x"]));
    }
    victim.send_raw(&buf);
    assert_eq!(killer.cmd(&["CLIENT", "KILL", "ID", &id.to_string()]).as_int(), 1);
    // Whatever replies were written before the kill, the connection then reaches EOF.
    victim.stream.get_ref().set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut b = vec![0u8; 1 << 16];
    let eof = loop {
        match std::io::Read::read(victim.stream.get_mut(), &mut b) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) => break e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    };
    assert!(eof, "the killed client's connection must be closed");
    assert_eq!(killer.cmd(&["PING"]), Val::Simple("PONG".into()));
}

#[test]
fn output_limit_is_enforced_with_io_threads() {
    let s = start(&["--io-threads", "2", "--client-output-buffer-limit", "normal 1mb 0 0"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd_b(&[b"SET", b"big", &vec![b'v'; 100_000]]), Val::ok());
    let mut other = Client::connect(s.port);
    let mut pipeline = Vec::new();
    for _ in 0..500 {
        pipeline.extend(Client::encode(&[b"GET", b"big"]));
    }
    c.send_raw(&pipeline);
    thread::sleep(Duration::from_millis(300));
    let stats = other.cmd(&["INFO", "stats"]).as_str();
    assert!(stats.contains("client_output_buffer_limit_disconnections:1"), "{stats}");
}

#[test]
fn shutdown_with_io_threads_busy() {
    let mut s = start(&["--io-threads", "4"]);
    let port = s.port;
    let loaders: Vec<_> = (0..8)
        .map(|_| {
            thread::spawn(move || {
                let mut c = Client::connect(port);
                let mut buf = Vec::new();
                for i in 0..2000 {
                    buf.extend(Client::encode(&[b"SET", format!("s{i}").as_bytes(), b"v"]));
                }
                let _ = c.stream.get_mut().write_all(&buf);
            })
        })
        .collect();
    let mut c = Client::connect(port);
    c.send(&[b"SHUTDOWN", b"NOSAVE"]);
    for l in loaders {
        let _ = l.join();
    }
    let mut exited = false;
    for _ in 0..100 {
        if let Ok(Some(_)) = s.child.try_wait() {
            exited = true;
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    assert!(exited, "server did not exit after SHUTDOWN");
}
