//! Output buffer limits: when a client's pending replies break the limit of its class
//! (`client-output-buffer-limit`), hard at once or soft for longer than its time. Used by the
//! dispatcher after each command and by fan-out (pub/sub, tracking) as it writes into other
//! clients' buffers.

use crate::config::Config;
use crate::config::ObufClass;
use crate::server::client::{Client, ClientType};

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
