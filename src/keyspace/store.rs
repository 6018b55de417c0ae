//! The storage behind a [`Db`](crate::keyspace::db::Db): a dense vector of objects indexed by
//! a hash map, with O(1) removal by swap and O(1) uniform random sampling.
//!
//! This is the interim store; the cache-line hashtable with one-allocation entries replaces
//! it behind the same `Db` API.

use std::collections::HashMap;

use crate::types::string::{StrRef, StrValue};

/// A stored value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(StrValue),
}

/// A borrowed view of a stored value.
#[derive(Clone, Copy, Debug)]
pub enum ValueRef<'a> {
    Str(StrRef<'a>),
}

impl Value {
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Str(s) => ValueRef::Str(s.as_ref()),
        }
    }
}

impl ValueRef<'_> {
    /// The type name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            ValueRef::Str(_) => "string",
        }
    }
}

/// A stored object: the value and its metadata.
#[derive(Clone, Debug)]
pub struct Obj {
    pub value: Value,
    pub expire_at_ms: Option<i64>,
    /// The access clock, 24 bits as in Valkey: under an LRU (or no) policy the LRU clock
    /// (seconds) of the last access; under an LFU policy the minutes of the last decrement
    /// (16 bits) above an 8-bit logarithmic access counter. See `keyspace::db::AccessClock`.
    pub lru: u32,
}

/// Whether a key with expire time `at_ms` is expired at `now_ms`. As in Valkey, a key is
/// still alive during the millisecond it expires at.
pub fn is_expired(at_ms: i64, now_ms: i64) -> bool {
    now_ms > at_ms
}

impl Obj {
    /// OBJECT ENCODING's name for this object.
    pub fn encoding(&self) -> &'static str {
        match &self.value {
            Value::Str(StrValue::Int(_)) => "int",
            Value::Str(StrValue::Raw(b)) if b.len() <= crate::types::string::EMBSTR_LEN_MAX => {
                "embstr"
            }
            Value::Str(StrValue::Raw(_)) => "raw",
        }
    }

    /// How many allocations freeing this value costs (Valkey's lazyfree "effort"): UNLINK
    /// frees a value on the lazyfree thread only when this is above the lazyfree threshold.
    pub fn free_effort(&self) -> usize {
        match &self.value {
            Value::Str(_) => 1,
        }
    }
}

type Map = HashMap<Box<[u8]>, usize, ahash::RandomState>;

#[derive(Default)]
pub struct Store {
    index: Map,
    slots: Vec<(Box<[u8]>, Obj)>,
    expires: usize,
}

impl Store {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn expires_len(&self) -> usize {
        self.expires
    }

    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Obj> {
        let i = *self.index.get(key)?;
        Some(&mut self.slots[i].1)
    }

    pub fn expire_at(&self, key: &[u8]) -> Option<i64> {
        let i = *self.index.get(key)?;
        self.slots[i].1.expire_at_ms
    }

    pub fn set_expire(&mut self, key: &[u8], at: Option<i64>) -> bool {
        let Some(&i) = self.index.get(key) else { return false };
        let obj = &mut self.slots[i].1;
        self.expires = self.expires + at.is_some() as usize - obj.expire_at_ms.is_some() as usize;
        obj.expire_at_ms = at;
        true
    }

    pub fn insert(&mut self, key: &[u8], obj: Obj) {
        self.expires += obj.expire_at_ms.is_some() as usize;
        match self.index.get(key) {
            Some(&i) => {
                let old = std::mem::replace(&mut self.slots[i].1, obj);
                self.expires -= old.expire_at_ms.is_some() as usize;
            }
            None => {
                self.index.insert(key.into(), self.slots.len());
                self.slots.push((key.into(), obj));
            }
        }
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Obj> {
        let i = self.index.remove(key)?;
        let (_, obj) = self.slots.swap_remove(i);
        if i < self.slots.len() {
            let moved = &self.slots[i].0;
            *self.index.get_mut(moved).expect("moved key is indexed") = i;
        }
        self.expires -= obj.expire_at_ms.is_some() as usize;
        Some(obj)
    }

    /// Visits slots from the end towards the start: the cursor is the number of slots not
    /// visited yet (0 starts a scan). Removal moves the last slot into the hole, and the last
    /// slot has always been visited already, so a key present for the whole scan is never
    /// missed (at worst seen twice); keys added during the scan land at the end, unvisited.
    pub fn scan(&self, cursor: u64, count: usize, f: &mut dyn FnMut(&[u8], &Obj)) -> u64 {
        let len = self.slots.len();
        let end = if cursor == 0 { len } else { usize::try_from(cursor).unwrap_or(len).min(len) };
        let start = end.saturating_sub(count.max(1));
        for (k, o) in self.slots[start..end].iter().rev() {
            f(k, o);
        }
        start as u64
    }

    pub fn for_each(&self, f: &mut dyn FnMut(&[u8], &Obj)) {
        for (k, o) in &self.slots {
            f(k, o);
        }
    }

    pub fn random(&self, seed: u64) -> Option<(&[u8], &Obj)> {
        if self.slots.is_empty() {
            return None;
        }
        let (k, o) = &self.slots[(seed % self.slots.len() as u64) as usize];
        Some((k, o))
    }

    /// Sample `n` random keys; returns how many of them had a TTL and those expired.
    pub fn sample_expired(&self, seed: u64, n: usize, now_ms: i64) -> (usize, Vec<Box<[u8]>>) {
        let mut out = Vec::new();
        let mut sampled = 0;
        if self.expires == 0 {
            return (0, out);
        }
        let mut s = seed | 1;
        let tries = n * 20;
        for _ in 0..tries {
            if sampled == n {
                break;
            }
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let (k, o) = &self.slots[(s % self.slots.len() as u64) as usize];
            if let Some(at) = o.expire_at_ms {
                sampled += 1;
                if is_expired(at, now_ms) && !out.iter().any(|x| x == k) {
                    out.push(k.clone());
                }
            }
        }
        (sampled, out)
    }

    pub fn avg_ttl_ms(&self, now_ms: i64) -> i64 {
        let mut sum: i64 = 0;
        let mut n = 0;
        for (_, o) in self.slots.iter().take(1000) {
            if let Some(at) = o.expire_at_ms {
                sum += (at - now_ms).max(0);
                n += 1;
            }
        }
        if n == 0 {
            0
        } else {
            sum / n
        }
    }
}
