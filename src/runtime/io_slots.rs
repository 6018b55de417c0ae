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

    /// The index of `token`'s entry, if it holds that very token.
    fn current(&self, token: usize) -> Option<usize> {
        let i = slot_index(token);
        matches!(self.slots.get(i)?, Some((t, _)) if *t == token).then_some(i)
    }

    pub fn remove(&mut self, token: usize) -> Option<IoSlot> {
        let i = self.current(token)?;
        self.slots[i].take().map(|(_, s)| s)
    }

    pub fn get_mut(&mut self, token: usize) -> Option<&mut IoSlot> {
        let i = self.current(token)?;
        self.slots[i].as_mut().map(|(_, s)| s)
    }

    pub fn get(&self, token: usize) -> Option<&IoSlot> {
        let i = self.current(token)?;
        self.slots[i].as_ref().map(|(_, s)| s)
    }
}
