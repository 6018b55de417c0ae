//! The runtime's half of each client, under the same token as its `server::state::Slot`:
//! the connection (socket, query buffer, parser), the commands parsed and not run yet, and a
//! protocol error met after them. The server core never sees it.

use std::collections::VecDeque;

use crate::resp::parse::ProtoError;
use crate::runtime::conn::Conn;
use crate::runtime::parsed::Parsed;

pub struct IoSlot {
    /// None while the connection is away (on an I/O thread).
    pub conn: Option<Conn>,
    /// Parsed commands not executed yet, in order.
    pub pending: VecDeque<Parsed>,
    /// A protocol error met after the pending commands: answered, then the client closes.
    pub proto_error: Option<ProtoError>,
}

impl IoSlot {
    pub fn new(conn: Conn) -> IoSlot {
        IoSlot { conn: Some(conn), pending: VecDeque::new(), proto_error: None }
    }
}

/// The I/O halves, indexed by client token.
#[derive(Default)]
pub struct IoSlots {
    slots: Vec<Option<IoSlot>>,
}

impl IoSlots {
    pub fn insert(&mut self, token: usize, slot: IoSlot) {
        if self.slots.len() <= token {
            self.slots.resize_with(token + 1, || None);
        }
        self.slots[token] = Some(slot);
    }

    pub fn remove(&mut self, token: usize) -> Option<IoSlot> {
        self.slots.get_mut(token)?.take()
    }

    pub fn get_mut(&mut self, token: usize) -> Option<&mut IoSlot> {
        self.slots.get_mut(token)?.as_mut()
    }

    pub fn get(&self, token: usize) -> Option<&IoSlot> {
        self.slots.get(token)?.as_ref()
    }
}
