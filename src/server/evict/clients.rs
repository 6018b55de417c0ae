//! Client eviction (`maxmemory-clients`): when the memory all clients hold passes the limit,
//! disconnect the biggest clients until it is back under, as Valkey's `evictClients` does.
//! CLIENT NO-EVICT clients are never chosen. Run from the time events over the client table;
//! the clients chosen are closed by the event loop with the rest of `to_close`.

use tracing::info;

use crate::config::MaxmemoryClients;
use crate::resp::reply::Reply;
use crate::server::client::Client;
use crate::server::state::{ServerState, Slot};

/// What one client holds: its struct, its query buffer and its reply buffer, at capacity
/// (what the allocator reserved); CLIENT LIST `tot-mem` without the argv.
pub fn client_memory_bytes(client: &Client, out: &Reply) -> usize {
    std::mem::size_of::<Client>() + client.qbuf_cap + out.buf.capacity()
}

fn slot_memory_bytes(slot: &Slot) -> usize {
    client_memory_bytes(&slot.client, &slot.out)
}

/// Sum of [`client_memory_bytes`] over the client table (INFO `mem_clients_normal`; the
/// client executing a command is lent out of the table and not in it).
pub fn clients_memory_bytes(srv: &ServerState) -> usize {
    srv.clients.iter().map(|(_, slot)| slot_memory_bytes(slot)).sum()
}

/// The client memory budget in bytes, 0 when off: `maxmemory-clients` as bytes, or as a
/// percentage of `maxmemory` (off while `maxmemory` is 0).
pub fn limit_bytes(srv: &ServerState) -> u64 {
    match srv.config.maxmemory_clients {
        MaxmemoryClients::Bytes(bytes) => bytes,
        MaxmemoryClients::Percent(pct) => {
            (u128::from(srv.config.maxmemory_bytes) * u128::from(pct) / 100) as u64
        }
    }
}

/// Disconnect the biggest evictable clients until client memory is within the limit.
/// Returns how many were chosen (they are pushed to `srv.to_close`).
pub fn evict_clients(srv: &mut ServerState) -> u64 {
    let limit = limit_bytes(srv);
    if limit == 0 {
        return 0;
    }
    let mut total = 0u64;
    let mut evictable: Vec<(usize, usize)> = Vec::new();
    for (token, slot) in srv.clients.iter() {
        if slot.client.close_asap {
            continue; // Already on its way out; its memory goes with it.
        }
        let bytes = slot_memory_bytes(slot);
        total += bytes as u64;
        if !slot.client.no_evict {
            evictable.push((bytes, token));
        }
    }
    if total <= limit {
        return 0;
    }
    evictable.sort_unstable_by(|a, b| b.cmp(a));
    let mut evicted = 0;
    for (bytes, token) in evictable {
        if total <= limit {
            break;
        }
        let Some(slot) = srv.clients.get_mut(token) else { continue };
        info!(
            "Evicting client: id={} addr={} tot-mem={bytes} (maxmemory-clients {limit})",
            slot.client.id, slot.client.addr
        );
        slot.client.close_asap = true;
        srv.to_close.push(token);
        total -= bytes as u64;
        evicted += 1;
    }
    evicted
}
