//! Output buffer limits: when a client's pending replies break the limit of its class
//! (`client-output-buffer-limit`), hard at once or soft for longer than its time. Used by the
//! dispatcher after each command and by fan-out ([`Fanout`]: pub/sub, tracking, MONITOR) as
//! it writes into other clients' outboxes.

use crate::config::Config;
use crate::config::ObufClass;
use crate::resp::reply::Reply;
use crate::server::client::{Client, ClientType};
use crate::server::state::{Clients, Outbox, Slot, Stats};

/// Reply bytes that never count toward client-output-buffer-limit (Valkey's PROTO_REPLY_CHUNK_BYTES).
pub const REPLY_STATIC_BYTES: usize = 16 * 1024;

/// Whether a client's output buffer broke the limit of its class (`pubsub` for a client
/// with subscriptions, else `normal`): hard, or soft for longer than its time. Updates the
/// soft-limit timer.
pub fn output_over_limit(
    config: &Config,
    client: &mut Client,
    out_len: usize,
    now_ms: i64,
) -> bool {
    let class = match client.client_type() {
        ClientType::PubSub => ObufClass::Pubsub as usize,
        ClientType::Replica => ObufClass::Replica as usize,
        ClientType::Normal | ClientType::Primary => ObufClass::Normal as usize,
    };
    let lim = &config.client_output_buffer_limit[class];
    // As Valkey, the first 16 KiB (its static reply buffer) do not count toward the limit.
    let len = out_len.saturating_sub(REPLY_STATIC_BYTES) as u64;
    if lim.hard_bytes > 0 && len >= lim.hard_bytes {
        return true;
    }
    if lim.soft_bytes > 0 && len >= lim.soft_bytes {
        if client.obuf_soft_since_ms == 0 {
            client.obuf_soft_since_ms = now_ms;
            return false;
        }
        return now_ms - client.obuf_soft_since_ms >= lim.soft_secs as i64 * 1000;
    }
    client.obuf_soft_since_ms = 0;
    false
}

/// Schedules the client of `token`, whose output broke its limit, to be closed without more
/// writes, and counts it (INFO `client_output_buffer_limit_disconnections`).
pub fn close_for_limit(
    token: usize,
    client: &mut Client,
    to_close: &mut Vec<usize>,
    disconnections: &mut u64,
) {
    tracing::warn!(
        "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
        client.id,
        client.addr
    );
    client.close_asap = true;
    to_close.push(token);
    *disconnections += 1;
}

/// Fan-out: writing into the outboxes of other clients (pub/sub messages, tracking
/// invalidations, MONITOR lines), with what that needs beside the client table: the queues a
/// written client goes on and the limits it is held to.
pub struct Fanout<'a> {
    to_write: &'a mut Vec<usize>,
    to_close: &'a mut Vec<usize>,
    config: &'a Config,
    disconnections: &'a mut u64,
    /// The clock, read at most once per fan-out and only when a buffer is large.
    now_ms: Option<i64>,
}

impl<'a> Fanout<'a> {
    /// From the server state's queues, settings and statistics, borrowed apart.
    pub fn new(
        to_write: &'a mut Vec<usize>,
        to_close: &'a mut Vec<usize>,
        config: &'a Config,
        stats: &'a mut Stats,
    ) -> Fanout<'a> {
        let disconnections = &mut stats.client_outbuf_limit_disconnections;
        Fanout { to_write, to_close, config, disconnections, now_ms: None }
    }

    /// Writes to the client of `token` with `write`, which says whether it wrote anything:
    /// never to a stale token or a client being closed. An idle client that got its first
    /// bytes is queued for writing, and a written one is held to its class's limit at once;
    /// what a running client gets follows its reply and is held to the limit with it.
    pub fn send(
        &mut self,
        clients: &mut Clients,
        token: usize,
        write: impl FnOnce(&mut Reply) -> bool,
    ) -> bool {
        let Some(mut outbox) = clients.outbox(token) else { return false };
        if outbox.closing() {
            return false;
        }
        let was_empty = outbox.out().is_empty();
        if !write(outbox.out()) {
            return false;
        }
        if let Outbox::Idle(slot) = outbox {
            self.written(token, slot, was_empty);
        }
        true
    }

    /// An idle client got output: queue it (a client already holding bytes is queued, this
    /// turn or by its writable event), and enforce its output-buffer limit.
    fn written(&mut self, token: usize, slot: &mut Slot, was_empty: bool) {
        if was_empty {
            self.to_write.push(token);
        }
        let pending = slot.out.len().saturating_sub(slot.sent);
        if pending <= REPLY_STATIC_BYTES {
            slot.client.obuf_soft_since_ms = 0;
            return;
        }
        let now = *self.now_ms.get_or_insert_with(crate::util::clock::now_ms);
        if output_over_limit(self.config, &mut slot.client, pending, now) {
            close_for_limit(token, &mut slot.client, self.to_close, self.disconnections);
        }
    }
}
