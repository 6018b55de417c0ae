//! The database's side of hash field expiration: filing hashes that gain volatile fields in
//! the [`FieldExpiryQueue`], and active expiry's bounded step over the due ones. The hash
//! type does the per-field work (`types::hash`); this file only finds the hashes, deletes
//! a hash its last field left empty, and reports what it removed for the server's effects
//! (the `hexpired` event, `HDEL` in the propagation feed).

use super::Db;
use crate::keyspace::entry::KeyEntry;
use crate::keyspace::value::{is_expired, Value};
use crate::table::hash_key;
use crate::types::agg::{Agg, AggType, Typed};
use crate::types::hash::HashObj;

/// Fields active expiry removed from one hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldsExpired {
    pub key: Vec<u8>,
    pub fields: Vec<Vec<u8>>,
    /// The hash was left empty and deleted.
    pub deleted: bool,
}

/// What one [`Db::expire_fields_step`] did.
#[derive(Debug, Default)]
pub struct FieldsStep {
    /// Queue entries looked at.
    pub visited: usize,
    /// Hashes that lost fields.
    pub expired: Vec<FieldsExpired>,
    /// Due entries remain (the step stopped at its limit, or a sweep is unfinished).
    pub more: bool,
}

/// The field-expiry lower bound of `v` when it is a hash with volatile fields.
pub(super) fn expire_bound(v: &Value) -> Option<i64> {
    match v {
        Value::Agg(Agg::Hash(h)) => h.next_expire_bound(),
        _ => None,
    }
}

/// [`expire_bound`] of the value an entry holds.
pub(super) fn entry_expire_bound(e: &KeyEntry) -> Option<i64> {
    e.agg().and_then(HashObj::from_ref).and_then(HashObj::next_expire_bound)
}

impl Db {
    /// A write changed the expire times of the hash at `key`: its lower bound went from
    /// `before` to `after` (None: no volatile field). Files the hash for active expiry when
    /// the bound came down (see `keyspace::field_expiry`).
    pub fn hash_ttls_changed(&mut self, key: &[u8], before: Option<i64>, after: Option<i64>) {
        if let Some(after) = after {
            if before.is_none_or(|b| after < b) {
                self.field_queue.file(key, after);
            }
        }
    }

    /// A value was stored whole at `key` (RENAME, MOVE, RESTORE, a load): files it when it
    /// is a hash with volatile fields, whose lower bound ([`expire_bound`]) the caller took
    /// before storing it.
    pub(super) fn file_hash(&mut self, key: &[u8], bound: Option<i64>) {
        if let Some(bound) = bound {
            self.field_queue.file(key, bound);
        }
    }

    /// Hashes filed for field expiry, stale entries included (about
    /// `keys_with_volatile_items`).
    pub fn field_queue_len(&self) -> usize {
        self.field_queue.len()
    }

    /// One bounded step of active field expiry at `now_ms`: takes up to `entries_max` due
    /// queue entries and sweeps each due hash at most `buckets_per_hash` buckets, removing
    /// the expired fields (and a hash left empty). Keys that have expired themselves are
    /// left to key expiry.
    pub fn expire_fields_step(
        &mut self,
        now_ms: i64,
        entries_max: usize,
        buckets_per_hash: usize,
    ) -> FieldsStep {
        let mut step = FieldsStep::default();
        let mut refile = Vec::new();
        while step.visited < entries_max {
            let Some(key) = self.field_queue.take_due(now_ms) else { break };
            step.visited += 1;
            let h = hash_key(&key);
            let Some(e) = self.keys.get_mut(h, &key) else { continue };
            if e.expire_at().is_some_and(|at| is_expired(at, now_ms)) {
                continue;
            }
            let Some(hash) = e.agg_mut().and_then(HashObj::from_mut) else { continue };
            let Some(bound) = hash.next_expire_bound() else { continue };
            if !hash.may_have_expired(now_ms) && !hash.sweeping() {
                refile.push((key, bound));
                continue;
            }
            let mut fields = Vec::new();
            hash.reclaim(now_ms, buckets_per_hash, &mut fields);
            let emptied = hash.is_empty();
            let next = hash.next_expire_bound().map(|b| if hash.sweeping() { now_ms } else { b });
            if emptied {
                self.keys.remove(h, &key);
            } else if let Some(next) = next {
                step.more |= next <= now_ms;
                refile.push((key.clone(), next));
            }
            if !fields.is_empty() {
                self.stats.expired_fields += fields.len() as u64;
                step.expired.push(FieldsExpired { key: key.into_vec(), fields, deleted: emptied });
            }
        }
        step.more |= step.visited == entries_max;
        for (key, at) in refile {
            self.field_queue.file(&key, at);
        }
        step
    }
}
