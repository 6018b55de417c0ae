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
    /// LRU clock (seconds, 24 bits) of the last access.
    pub lru: u32,
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

    pub fn scan(&self, cursor: u64, count: usize, f: &mut dyn FnMut(&[u8], &Obj)) -> u64 {
        let start = cursor as usize;
        let end = (start + count.max(1)).min(self.slots.len());
        for (k, o) in self.slots.get(start..end).unwrap_or(&[]) {
            f(k, o);
        }
        if end >= self.slots.len() {
            0
        } else {
            end as u64
        }
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
                if at <= now_ms && !out.iter().any(|x: &Box<[u8]>| x == k) {
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
