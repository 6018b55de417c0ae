//! Where a reply that repeats elements stops: HRANDFIELD, SRANDMEMBER and ZRANDMEMBER with
//! a negative count answer exactly `|count|` elements that may repeat, up to `i64::MAX` of
//! them from a one-element key. The client asked for that many, but the reply is cut off
//! and the client disconnected once it passes the normal class's output buffer hard limit
//! (as Valkey's CLIENT_CLOSE_ASAP check in the same loop does), or [`REPLY_BYTES_CEILING`]
//! when no hard limit is configured: Valkey would grow such a reply until the server runs
//! out of memory.
//!
//! This module owns only that decision; the handlers own their loops and reply shapes. The
//! array header has already announced `|count|` elements when the reply stops, which is
//! fine: the client is closed and never reads past what it was sent.

use crate::commands::Ctx;
use crate::config::ObufClass;
use crate::resp::reply::Reply;

/// Where a repeating reply stops when no hard output limit is set: a reply this large is
/// already more than any client can use.
pub const REPLY_BYTES_CEILING: usize = 1 << 30;
/// Elements written between two checks of the reply size.
const CHECK_EVERY: u64 = 1024;
/// How far past a configured hard limit a reply goes before it stops. The dispatcher's
/// limit check ignores the first 16 KiB (Valkey's static reply buffer); a whole check
/// interval more than that is enough for it to act.
const DISPATCH_SLACK_BYTES: usize = 64 * 1024;

/// The size check of one repeating reply: make one per reply, call
/// [`ReplyLimit::passed_after_one`] after each element, and [`ReplyLimit::cut_off`] when it
/// says to stop.
#[derive(Debug)]
pub struct ReplyLimit {
    /// The reply length (bytes) past which writing stops.
    bytes_max: usize,
    /// True when no hard limit is configured: nothing else will close the client, so
    /// [`ReplyLimit::cut_off`] does.
    close_here: bool,
    /// Elements written so far.
    written: u64,
}

impl ReplyLimit {
    /// The limit for a reply to `ctx`'s client, from the configuration as it is now.
    pub fn new(ctx: &Ctx) -> ReplyLimit {
        let classes = &ctx.config.client_output_buffer_limit;
        ReplyLimit::for_hard_limit(classes[ObufClass::Normal as usize].hard_bytes)
    }

    /// The limit under a normal-class hard limit of `hard_bytes` (0: none).
    fn for_hard_limit(hard_bytes: u64) -> ReplyLimit {
        let (bytes_max, close_here) = match usize::try_from(hard_bytes) {
            Ok(0) | Err(_) => (REPLY_BYTES_CEILING, true),
            // Past a configured hard limit the dispatcher closes the client itself.
            Ok(hard) => (hard.saturating_add(DISPATCH_SLACK_BYTES), false),
        };
        ReplyLimit { bytes_max, close_here, written: 0 }
    }

    /// Counts one more element written to `out`; true when the reply has passed the limit
    /// and the caller must stop writing (checked every [`CHECK_EVERY`] elements).
    pub fn passed_after_one(&mut self, out: &Reply) -> bool {
        self.written += 1;
        self.written.is_multiple_of(CHECK_EVERY) && out.len() > self.bytes_max
    }

    /// Ends a reply that [`ReplyLimit::passed_after_one`] stopped: closes the client after
    /// this reply unless the dispatcher's limit check will.
    pub fn cut_off(&self, ctx: &mut Ctx) {
        if self.close_here {
            ctx.close_asap();
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::config::Config;
    use crate::resp::reply::Proto;
    use crate::server::client::Client;
    use crate::server::state::ServerState;

    #[test]
    fn the_limit_follows_the_hard_limit() {
        let none = ReplyLimit::for_hard_limit(0);
        assert_eq!((none.bytes_max, none.close_here), (REPLY_BYTES_CEILING, true));
        let set = ReplyLimit::for_hard_limit(1 << 20);
        assert_eq!((set.bytes_max, set.close_here), ((1 << 20) + DISPATCH_SLACK_BYTES, false));
        let huge = ReplyLimit::for_hard_limit(u64::MAX);
        assert_eq!(huge.bytes_max, usize::MAX);
    }

    #[test]
    fn the_size_is_checked_every_interval() {
        let mut lim = ReplyLimit::for_hard_limit(1);
        let mut out = Reply::new(Proto::Resp2);
        out.buf.resize(DISPATCH_SLACK_BYTES + 2, b'x');
        for _ in 1..CHECK_EVERY {
            assert!(!lim.passed_after_one(&out));
        }
        assert!(lim.passed_after_one(&out));
        out.buf.truncate(DISPATCH_SLACK_BYTES);
        for _ in 0..2 * CHECK_EVERY {
            assert!(!lim.passed_after_one(&out));
        }
    }

    /// Runs `name` (looked up in the command table) on `srv` and returns the reply's length
    /// and whether the client is to be closed.
    fn run(srv: &mut ServerState, argv: &[&str]) -> (usize, bool) {
        let argv: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a.as_bytes())).collect();
        let cmd = crate::commands::lookup(&argv[0]).expect("a known command");
        let handler = cmd.handler.expect("a command with a handler");
        let mut client = Client::new(1, "127.0.0.1:1".into(), "127.0.0.1:2".into(), -1, false, 0);
        let mut out = Reply::new(Proto::Resp2);
        crate::commands::run_handler(handler, srv, &mut client, &mut out, &argv, 0, 7)
            .expect("the command succeeds");
        (out.len(), client.close_asap)
    }

    /// A repeating reply stops just past a configured hard limit and leaves the closing to
    /// the dispatcher, for each of the three commands. The count asks for about 3 MiB, so a
    /// command that ignores the limit fails here instead of exhausting memory.
    #[test]
    fn repeating_replies_stop_at_the_hard_limit() {
        let mut srv = ServerState::new(Config::default(), None, 0);
        let hard_bytes: u64 = 1 << 20;
        srv.config.client_output_buffer_limit[ObufClass::Normal as usize].hard_bytes = hard_bytes;
        run(&mut srv, &["hset", "h", "field", "value"]);
        run(&mut srv, &["sadd", "s", "member"]);
        run(&mut srv, &["zadd", "z", "1.5", "member"]);
        let count = "-262144";
        for argv in [
            &["hrandfield", "h", count][..],
            &["hrandfield", "h", count, "withvalues"],
            &["srandmember", "s", count],
            &["zrandmember", "z", count],
            &["zrandmember", "z", count, "withscores"],
        ] {
            let (len, close_asap) = run(&mut srv, argv);
            let len_max = hard_bytes as usize + DISPATCH_SLACK_BYTES + 64 * CHECK_EVERY as usize;
            assert!(len > hard_bytes as usize && len < len_max, "{argv:?}: {len} bytes");
            assert!(!close_asap, "{argv:?}");
        }
        assert!(srv.to_close.is_empty());
    }

    /// Without a hard limit the command closes the client itself (the ceiling is too large
    /// to reach here; the decision is the same).
    #[test]
    fn without_a_hard_limit_the_command_closes_the_client() {
        let mut srv = ServerState::new(Config::default(), None, 0);
        srv.config.client_output_buffer_limit[ObufClass::Normal as usize].hard_bytes = 0;
        let mut client = Client::new(1, "127.0.0.1:1".into(), "127.0.0.1:2".into(), -1, false, 0);
        let mut out = Reply::new(Proto::Resp2);
        crate::commands::with_ctx(&mut srv, &mut client, &mut out, 0, 7, |ctx| {
            let lim = ReplyLimit::new(ctx);
            assert_eq!(lim.bytes_max, REPLY_BYTES_CEILING);
            lim.cut_off(ctx);
        });
        assert!(client.close_asap);
        assert_eq!(srv.to_close, vec![7]);
    }
}
