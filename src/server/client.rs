//! Per-client state that commands read and change: selected db, authentication, name,
//! protocol, reply mode, flags, and the counters CLIENT LIST shows.
//!
//! It lives on the main thread only. The socket and the query buffer are in `conn`; the reply
//! buffer is beside this struct in the client slot, so a handler can borrow both.

use bytes::Bytes;

/// CLIENT REPLY mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Skip the reply of the next command only.
    SkipNext,
    /// Skipping the reply of the current command (after SKIP).
    Skip,
}

/// What kind of client this is for CLIENT LIST TYPE and output limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    Normal,
    Monitor,
}

#[derive(Debug)]
pub struct Client {
    pub id: u64,
    pub db: usize,
    pub name: Option<Bytes>,
    pub lib_name: Option<Bytes>,
    pub lib_ver: Option<Bytes>,
    pub authenticated: bool,
    pub kind: ClientKind,
    pub reply_mode: ReplyMode,
    pub no_evict: bool,
    pub no_touch: bool,
    /// Close once the pending replies are written (QUIT, protocol error, CLIENT KILL).
    pub close_after_reply: bool,
    /// Close now without writing more (output buffer limit).
    pub close_asap: bool,
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
    pub unix: bool,
    pub created_ms: i64,
    pub last_interaction_ms: i64,
    /// Name of the last command executed (CLIENT LIST `cmd=`).
    pub last_cmd: &'static str,
    /// Bytes in the query buffer, as last seen (CLIENT LIST `qbuf=`).
    pub qbuf_len: usize,
    pub qbuf_cap: usize,
    /// When the output buffer first went over the soft limit (ms), or 0.
    pub obuf_soft_since_ms: i64,
    pub tot_net_in: u64,
    pub tot_net_out: u64,
    pub tot_cmds: u64,
}

impl Client {
    pub fn new(id: u64, addr: String, laddr: String, fd: i32, unix: bool, now_ms: i64) -> Client {
        Client {
            id,
            db: 0,
            name: None,
            lib_name: None,
            lib_ver: None,
            authenticated: false,
            kind: ClientKind::Normal,
            reply_mode: ReplyMode::On,
            no_evict: false,
            no_touch: false,
            close_after_reply: false,
            close_asap: false,
            addr,
            laddr,
            fd,
            unix,
            created_ms: now_ms,
            last_interaction_ms: now_ms,
            last_cmd: "NULL",
            qbuf_len: 0,
            qbuf_cap: 0,
            obuf_soft_since_ms: 0,
            tot_net_in: 0,
            tot_net_out: 0,
            tot_cmds: 0,
        }
    }

    /// The `flags=` letters of CLIENT LIST.
    pub fn flag_letters(&self) -> String {
        let mut f = String::new();
        if self.kind == ClientKind::Monitor {
            f.push('O');
        }
        if self.close_asap {
            f.push('A');
        }
        if self.close_after_reply {
            f.push('c');
        }
        if self.no_evict {
            f.push('e');
        }
        if self.no_touch {
            f.push('T');
        }
        if self.unix {
            f.push('U');
        }
        if f.is_empty() {
            f.push('N');
        }
        f
    }
}
