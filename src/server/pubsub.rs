//! Pub/sub: the registry of subscriptions and the delivery of messages.
//!
//! Three kinds of subscription exist, as in Valkey: channels (SUBSCRIBE), patterns
//! (PSUBSCRIBE, glob-matched against the channel of every PUBLISH) and shard channels
//! (SSUBSCRIBE, reached only by SPUBLISH). Each is indexed twice:
//!
//! ```text
//!   PubSub (server-wide)                        Client::subs (per client)
//!   channels: "news" -> [slot 4, slot 9]        slot 4: channels {"news": seq 0}
//!   patterns: "n*"   -> [slot 9]                slot 9: channels {"news": 0}, patterns {"n*": 1}
//!   shard:    "s1"   -> [slot 4]                slot 4: shard {"s1": 1}
//! ```
//!
//! The server-wide side lists subscribers per name in subscription order (delivery order,
//! as Valkey's client lists); the client side answers "am I subscribed" in O(1), gives the
//! counts the replies and CLIENT LIST show, and keeps a sequence number per name so that
//! "unsubscribe from everything" goes in subscription order (Valkey walks patterns in that
//! order; for channels its order is a hash table's, so any order is as good).
//!
//! Delivery writes the message into each subscriber's outbox (RESP2 array or RESP3 push,
//! per the subscriber's protocol) through `obuf::Fanout`, which queues the subscriber for
//! writing and enforces the `pubsub` class of client-output-buffer-limit at once. A
//! subscriber that is running a command (it published to itself, or its command woke a
//! blocked client that did) has its messages follow its reply, as Valkey 8+ orders them: a
//! RESP3 client publishing to itself sees the PUBLISH reply, then the message (after EXEC's
//! whole reply inside a transaction).
//!
//! This module owns no commands (see `commands::pubsub`) and knows nothing of sockets.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;

use crate::config::glob_match;
use crate::resp::reply::Reply;
use crate::server::obuf::Fanout;
use crate::server::state::ServerState;

type Map<V> = HashMap<Bytes, V, ahash::RandomState>;

/// A kind of subscription.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Pattern,
    Shard,
}

impl Kind {
    /// The first element of a subscription confirmation.
    pub fn subscribe_word(self) -> &'static [u8] {
        match self {
            Kind::Channel => b"subscribe",
            Kind::Pattern => b"psubscribe",
            Kind::Shard => b"ssubscribe",
        }
    }

    /// The first element of an unsubscription confirmation.
    pub fn unsubscribe_word(self) -> &'static [u8] {
        match self {
            Kind::Channel => b"unsubscribe",
            Kind::Pattern => b"punsubscribe",
            Kind::Shard => b"sunsubscribe",
        }
    }
}

/// One client's subscriptions. Empty (and allocation-free) for the clients that never
/// subscribe.
#[derive(Debug, Default)]
pub struct ClientSubs {
    sets: Option<Box<SubSets>>,
}

#[derive(Debug, Default)]
struct SubSets {
    channels: Map<u64>,
    patterns: Map<u64>,
    shard: Map<u64>,
    /// Next subscription sequence number.
    seq: u64,
}

impl SubSets {
    fn of(&mut self, kind: Kind) -> &mut Map<u64> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }
}

impl ClientSubs {
    /// Subscriptions of `kind` (CLIENT LIST `sub=`, `psub=`, `ssub=`).
    pub fn count(&self, kind: Kind) -> usize {
        self.sets.as_ref().map_or(0, |s| match kind {
            Kind::Channel => s.channels.len(),
            Kind::Pattern => s.patterns.len(),
            Kind::Shard => s.shard.len(),
        })
    }

    /// All subscriptions: the client is in pub/sub context while this is not zero (RESP2
    /// subscriber mode, CLIENT LIST flag `P`, client type `pubsub`).
    pub fn total(&self) -> usize {
        self.sets.as_ref().map_or(0, |s| s.channels.len() + s.patterns.len() + s.shard.len())
    }

    /// The count a (un)subscription confirmation of `kind` carries: channels and patterns
    /// together, shard channels on their own (Valkey's `subscriptionCount` of the type).
    pub fn confirm_count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Channel | Kind::Pattern => self.count(Kind::Channel) + self.count(Kind::Pattern),
            Kind::Shard => self.count(Kind::Shard),
        }
    }

    /// Names of `kind`, in subscription order.
    pub fn names(&self, kind: Kind) -> Vec<Bytes> {
        let Some(sets) = &self.sets else { return Vec::new() };
        let map = match kind {
            Kind::Channel => &sets.channels,
            Kind::Pattern => &sets.patterns,
            Kind::Shard => &sets.shard,
        };
        let mut v: Vec<(u64, &Bytes)> = map.iter().map(|(k, &seq)| (seq, k)).collect();
        v.sort_unstable_by_key(|&(seq, _)| seq);
        v.into_iter().map(|(_, k)| k.clone()).collect()
    }
}

/// A message as delivered.
#[derive(Clone, Copy)]
enum Msg<'a> {
    Message { channel: &'a [u8], message: &'a [u8] },
    PMessage { pattern: &'a [u8], channel: &'a [u8], message: &'a [u8] },
    SMessage { channel: &'a [u8], message: &'a [u8] },
}

impl Msg<'_> {
    fn write(self, out: &mut Reply) {
        match self {
            Msg::Message { channel, message } => {
                out.push(3);
                out.bulk(b"message");
                out.bulk(channel);
                out.bulk(message);
            }
            Msg::PMessage { pattern, channel, message } => {
                out.push(4);
                out.bulk(b"pmessage");
                out.bulk(pattern);
                out.bulk(channel);
                out.bulk(message);
            }
            Msg::SMessage { channel, message } => {
                out.push(3);
                out.bulk(b"smessage");
                out.bulk(channel);
                out.bulk(message);
            }
        }
    }
}

/// The server-wide registry.
#[derive(Debug, Default)]
pub struct PubSub {
    channels: Map<Vec<usize>>,
    patterns: Map<Vec<usize>>,
    shard: Map<Vec<usize>>,
    /// Tokens of the clients with at least one subscription (INFO `pubsub_clients`).
    subscribers: HashSet<usize, ahash::RandomState>,
}

impl PubSub {
    fn of(&self, kind: Kind) -> &Map<Vec<usize>> {
        match kind {
            Kind::Channel => &self.channels,
            Kind::Pattern => &self.patterns,
            Kind::Shard => &self.shard,
        }
    }

    fn of_mut(&mut self, kind: Kind) -> &mut Map<Vec<usize>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    /// Names of `kind` with at least one subscriber (INFO `pubsub_channels`,
    /// `pubsub_patterns`, `pubsubshard_channels`; PUBSUB NUMPAT).
    pub fn len(&self, kind: Kind) -> usize {
        self.of(kind).len()
    }

    /// Clients with at least one subscription.
    pub fn clients(&self) -> usize {
        self.subscribers.len()
    }

    /// Whether the client of `token` has a subscription (it is in pub/sub context), read
    /// where its state may be lent out.
    pub fn is_subscriber(&self, token: usize) -> bool {
        self.subscribers.contains(&token)
    }

    /// Subscribers of `name` of `kind` (PUBSUB NUMSUB / SHARDNUMSUB).
    pub fn subscribers(&self, kind: Kind, name: &[u8]) -> usize {
        self.of(kind).get(name).map_or(0, Vec::len)
    }

    /// Names of `kind` with subscribers, matching `pattern` when given (PUBSUB CHANNELS /
    /// SHARDCHANNELS).
    pub fn names_matching(&self, kind: Kind, pattern: Option<&[u8]>) -> Vec<Bytes> {
        self.of(kind)
            .keys()
            .filter(|name| pattern.is_none_or(|p| glob_match(p, name, false)))
            .cloned()
            .collect()
    }

    /// Subscribes the client in `slot` to `name`; false when it already was.
    pub fn subscribe(
        &mut self,
        kind: Kind,
        slot: usize,
        subs: &mut ClientSubs,
        name: &Bytes,
    ) -> bool {
        let was_subscribed = subs.total() > 0;
        let sets = subs.sets.get_or_insert_with(Default::default);
        if sets.of(kind).contains_key(name) {
            return false;
        }
        let seq = sets.seq;
        sets.seq += 1;
        sets.of(kind).insert(name.clone(), seq);
        self.of_mut(kind).entry(name.clone()).or_default().push(slot);
        if !was_subscribed {
            self.subscribers.insert(slot);
        }
        true
    }

    /// Unsubscribes the client in `slot` from `name`; false when it was not subscribed.
    pub fn unsubscribe(
        &mut self,
        kind: Kind,
        slot: usize,
        subs: &mut ClientSubs,
        name: &[u8],
    ) -> bool {
        let Some(sets) = subs.sets.as_mut() else { return false };
        if sets.of(kind).remove(name).is_none() {
            return false;
        }
        let map = self.of_mut(kind);
        if let Some(slots) = map.get_mut(name) {
            if let Some(i) = slots.iter().position(|&s| s == slot) {
                slots.remove(i);
            }
            if slots.is_empty() {
                map.remove(name);
            }
        }
        if subs.total() == 0 {
            subs.sets = None;
            self.subscribers.remove(&slot);
        }
        true
    }

    /// Drops every subscription of the client in `slot`, without confirmations (RESET, and
    /// a closing connection).
    pub fn remove_client(&mut self, slot: usize, subs: &mut ClientSubs) {
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            for name in subs.names(kind) {
                self.unsubscribe(kind, slot, subs, &name);
            }
        }
        debug_assert_eq!(subs.total(), 0);
    }
}

/// Whether a RESP2 client with subscriptions may run `name` (a command's full name): the
/// rest are refused with [`CmdError::PubSubContext`](crate::spec::CmdError).
pub fn allowed_in_subscriber_mode(name: &str) -> bool {
    matches!(
        name,
        "ping"
            | "subscribe"
            | "ssubscribe"
            | "unsubscribe"
            | "sunsubscribe"
            | "psubscribe"
            | "punsubscribe"
            | "quit"
            | "reset"
    )
}

/// Writes a (un)subscription confirmation: `[word, name or null, count]`, an array in
/// RESP2 and a push in RESP3.
pub fn confirm(out: &mut Reply, word: &[u8], name: Option<&[u8]>, count: usize) {
    out.push(3);
    out.bulk(word);
    match name {
        Some(n) => out.bulk(n),
        None => out.null(),
    }
    out.int(count as i64);
}

/// Where a PUBLISH goes: every channel subscriber and matching pattern, or shard channel
/// subscribers only (SPUBLISH).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Global,
    Shard,
}

/// Delivers `message` published on `channel`; returns the number of deliveries (a client
/// subscribed to the channel and to a matching pattern counts twice, as in Valkey).
/// Channel subscribers get it first, in subscription order, then pattern subscribers.
pub fn publish(srv: &mut ServerState, scope: Scope, channel: &[u8], message: &[u8]) -> usize {
    let ServerState { pubsub, clients, to_write, to_close, config, stats, .. } = srv;
    let PubSub { channels, patterns, shard, .. } = pubsub;
    let mut fanout = Fanout::new(to_write, to_close, config, stats);
    let mut deliver = |token: usize, msg: Msg| {
        fanout.send(clients, token, |out| {
            msg.write(out);
            true
        });
    };
    let mut receivers = 0;
    let direct = match scope {
        Scope::Global => channels.get(channel),
        Scope::Shard => shard.get(channel),
    };
    if let Some(slots) = direct {
        for &slot in slots {
            let msg = match scope {
                Scope::Global => Msg::Message { channel, message },
                Scope::Shard => Msg::SMessage { channel, message },
            };
            deliver(slot, msg);
        }
        receivers += slots.len();
    }
    if scope == Scope::Global {
        for (pattern, slots) in patterns.iter() {
            if !glob_match(pattern, channel, false) {
                continue;
            }
            for &slot in slots {
                deliver(slot, Msg::PMessage { pattern, channel, message });
            }
            receivers += slots.len();
        }
    }
    receivers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::reply::Proto;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn both_indexes_stay_in_step() {
        let mut ps = PubSub::default();
        let (mut a, mut c) = (ClientSubs::default(), ClientSubs::default());
        assert!(ps.subscribe(Kind::Channel, 1, &mut a, &b("x")));
        assert!(!ps.subscribe(Kind::Channel, 1, &mut a, &b("x")));
        assert!(ps.subscribe(Kind::Pattern, 1, &mut a, &b("x*")));
        assert!(ps.subscribe(Kind::Channel, 2, &mut c, &b("x")));
        assert!(ps.subscribe(Kind::Shard, 2, &mut c, &b("s")));
        assert_eq!((ps.clients(), ps.subscribers(Kind::Channel, b"x")), (2, 2));
        assert_eq!((a.confirm_count(Kind::Shard), a.confirm_count(Kind::Channel)), (0, 2));
        assert_eq!((c.confirm_count(Kind::Shard), c.confirm_count(Kind::Pattern)), (1, 1));
        assert!(ps.unsubscribe(Kind::Channel, 1, &mut a, b"x"));
        assert!(!ps.unsubscribe(Kind::Channel, 1, &mut a, b"x"));
        assert_eq!(ps.of(Kind::Channel).get(&b"x"[..]), Some(&vec![2]));
        ps.remove_client(2, &mut c);
        assert_eq!((ps.len(Kind::Channel), ps.len(Kind::Shard), ps.clients()), (0, 0, 1));
        ps.remove_client(1, &mut a);
        assert_eq!((ps.len(Kind::Pattern), ps.clients(), a.total()), (0, 0, 0));
        assert!(a.sets.is_none());
    }

    #[test]
    fn names_keep_subscription_order() {
        let mut ps = PubSub::default();
        let mut a = ClientSubs::default();
        for p in ["p3", "p1", "p2"] {
            ps.subscribe(Kind::Pattern, 0, &mut a, &b(p));
        }
        ps.unsubscribe(Kind::Pattern, 0, &mut a, b"p1");
        ps.subscribe(Kind::Pattern, 0, &mut a, &b("p1"));
        assert_eq!(a.names(Kind::Pattern), vec![b("p3"), b("p2"), b("p1")]);
        let mut all = ps.names_matching(Kind::Pattern, Some(b"p[12]"));
        all.sort();
        assert_eq!(all, vec![b("p1"), b("p2")]);
    }

    #[test]
    fn messages_encode_per_protocol() {
        let mut r2 = Reply::new(Proto::Resp2);
        Msg::PMessage { pattern: b"c*", channel: b"ch", message: b"" }.write(&mut r2);
        assert_eq!(r2.buf, b"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$0\r\n\r\n");
        let mut r3 = Reply::new(Proto::Resp3);
        confirm(&mut r3, b"unsubscribe", None, 0);
        assert_eq!(r3.buf, b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n");
    }

    /// A message reaches an idle subscriber's buffer (and queues it for writing) and a
    /// running subscriber's outbox, never a client that took the seat of a departed one.
    #[test]
    fn publish_writes_into_outboxes() {
        use crate::config::Config;
        use crate::server::client::Client;
        use crate::server::state::{slot_index, Slot};
        let mut srv = ServerState::new(Config::default(), None, 0);
        let add = |srv: &mut ServerState, id: u64, proto: Proto| {
            let client = Client::new(id, String::new(), String::new(), -1, false, 0);
            let t = srv.clients.insert(Box::new(Slot::new(client, Reply::new(proto))));
            let slot = srv.clients.get_mut(t).expect("inserted");
            srv.pubsub.subscribe(Kind::Channel, t, &mut slot.client.subs, &b("ch"));
            t
        };
        let (idle, running, gone) = (
            add(&mut srv, 1, Proto::Resp2),
            add(&mut srv, 2, Proto::Resp3),
            add(&mut srv, 3, Proto::Resp2),
        );
        // The third client leaves without unsubscribing (as if the registry lagged) and a new
        // one takes its seat: the old token must not reach it.
        srv.clients.remove(gone).expect("idle");
        let newcomer = srv.clients.insert(Box::new(Slot::new(
            Client::new(4, String::new(), String::new(), -1, false, 0),
            Reply::new(Proto::Resp2),
        )));
        assert_eq!(slot_index(newcomer), slot_index(gone));
        let mut lent = srv.clients.lend(running).expect("current");
        lent.out.int(1);
        assert_eq!(publish(&mut srv, Scope::Global, b"ch", b"m"), 3);
        assert!(srv.pubsub.is_subscriber(running));
        srv.clients.put_back(running, lent);
        assert_eq!(srv.to_write, [idle]);
        let got = |srv: &ServerState, t| srv.clients.get(t).expect("here").out.buf.clone();
        assert_eq!(got(&srv, idle), b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n");
        assert_eq!(got(&srv, running), b":1\r\n>3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n");
        assert!(got(&srv, newcomer).is_empty());
    }
}
