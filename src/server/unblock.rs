//! Ending a block without serving it: the timeout reply when its time has passed, or an
//! error (CLIENT UNBLOCK ... ERROR), counted as one call of the blocked command (the
//! bookkeeping is in `blocking`; re-running served commands is the runtime's `unblock`).

use crate::server::blocking::{Blocked, TimeoutReply};
use crate::server::calls;
use crate::server::state::ServerState;

/// Answers every blocked client whose timeout is at or before `now_ms`.
pub fn expire_timeouts(srv: &mut ServerState, now_ms: i64) {
    if srv.blocking.is_empty() {
        return;
    }
    for t in srv.blocking.timed_out(now_ms) {
        if let Some(b) = srv.blocking.unblock(t) {
            answer_timeout(srv, t, &b, now_ms);
        }
    }
}

/// Replies a blocked command's timeout reply for the client in `t` (already unblocked) and
/// lets it go on with its next commands. The command counts as one call now.
pub fn answer_timeout(srv: &mut ServerState, t: usize, b: &Blocked, now_ms: i64) {
    let Some(mut slot) = srv.clients.lend(t) else { return };
    slot.client.blocked = false;
    let mark = slot.out.len();
    match b.on_timeout {
        TimeoutReply::NullArray => slot.out.null_array(),
        TimeoutReply::NullBulk => slot.out.null(),
    }
    record_unblocked(srv, &mut slot, b, false, mark, now_ms);
    srv.clients.put_back(t, slot);
    srv.to_write.push(t);
    srv.unblocked.push(t);
}

/// Answers the client in `t`, blocked, with an error instead (CLIENT UNBLOCK ... ERROR).
/// The command counts as one failed call.
pub fn answer_error(srv: &mut ServerState, t: usize, b: &Blocked, text: &str, now_ms: i64) {
    let Some(mut slot) = srv.clients.lend(t) else { return };
    slot.client.blocked = false;
    let mark = slot.out.len();
    calls::reply_error_text(srv, &mut slot, text.as_bytes());
    record_unblocked(srv, &mut slot, b, true, mark, now_ms);
    srv.clients.put_back(t, slot);
    srv.to_write.push(t);
    srv.unblocked.push(t);
}

/// The statistics of a blocked command that ends without being served, whose reply was
/// written from `reply_mark` on.
fn record_unblocked(
    srv: &mut ServerState,
    slot: &mut crate::server::state::Slot,
    b: &Blocked,
    failed: bool,
    reply_mark: usize,
    now_ms: i64,
) {
    let reply_bytes = slot.out.len().saturating_sub(reply_mark) as u64;
    calls::record_call(srv, slot, b.cmd, &b.argv, failed, reply_bytes, now_ms);
}
