//! The runtime's half of each client, under the same token as its `server::state::Slot`:
//! the connection (socket, query buffer, parser), the commands parsed and not run yet, and a
//! protocol error met after them. The server core never sees it.

use std::collections::VecDeque;

use crate::resp::parse::ProtoError;
use crate::runtime::conn::Conn;
use crate::runtime::parsed::Parsed;
use crate::server::state::slot_index;

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

/// The I/O halves, by client token: at the token's slot index, with the whole token kept
/// so that a stale one (see `server::state::Clients`) finds nothing.
#[derive(Default)]
pub struct IoSlots {
    slots: Vec<Option<(usize, IoSlot)>>,
}

impl IoSlots {
    pub fn insert(&mut self, token: usize, slot: IoSlot) {
        let i = slot_index(token);
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i] = Some((token, slot));
    }

    pub fn remove(&mut self, token: usize) -> Option<IoSlot> {
        let entry = self.slots.get_mut(slot_index(token))?;
        match entry {
            Some((t, _)) if *t == token => entry.take().map(|(_, s)| s),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, token: usize) -> Option<&mut IoSlot> {
        match self.slots.get_mut(slot_index(token))? {
            Some((t, s)) if *t == token => Some(s),
            _ => None,
        }
    }

    pub fn get(&self, token: usize) -> Option<&IoSlot> {
        match self.slots.get(slot_index(token))? {
            Some((t, s)) if *t == token => Some(s),
            _ => None,
        }
    }
}
