//! Values as the command code sees them: the owned [`Value`] a command stores, the borrowed
//! [`ValueRef`] a lookup returns, and [`Obj`], a key's value with its metadata taken out of
//! the keyspace whole (RENAME, MOVE, COPY).
//!
//! Storage is the entries' business (`keyspace::entry`); this is the shape of the API.

use crate::keyspace::entry::{KeyEntry, NewValue};
use crate::types::string::{StrRef, StrValue, EMBSTR_LEN_MAX};

/// A value to store.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(StrValue),
}

/// A borrowed view of a stored value.
#[derive(Clone, Copy, Debug, PartialEq)]
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

    pub fn to_owned(&self) -> Value {
        match self {
            ValueRef::Str(s) => Value::Str(s.to_owned()),
        }
    }

    pub(crate) fn as_new(&self) -> NewValue<'_> {
        match self {
            ValueRef::Str(s) => NewValue::from(*s),
        }
    }
}

/// Is an expire time past at `now_ms`? A key expires once the clock has moved beyond its
/// expire millisecond, as in Valkey.
pub fn is_expired(at_ms: i64, now_ms: i64) -> bool {
    now_ms > at_ms
}

/// A key's value and metadata, owned (out of the keyspace).
#[derive(Clone, Debug)]
pub struct Obj {
    pub value: Value,
    pub expire_at_ms: Option<i64>,
    /// LRU clock or LFU data (24 bits).
    pub lru: u32,
    /// OBJECT ENCODING says `raw` even for a short string (modified in place).
    pub raw: bool,
}

/// Read access shared by stored entries and owned objects.
pub trait ObjView {
    fn value_ref(&self) -> ValueRef<'_>;
    fn expire_at_ms(&self) -> Option<i64>;
    fn lru(&self) -> u32;
    /// OBJECT ENCODING's name.
    fn encoding(&self) -> &'static str;

    /// How many allocations freeing this value costs (Valkey's lazyfree "effort"): UNLINK
    /// frees a value on the lazyfree thread only above the lazyfree threshold.
    fn free_effort(&self) -> usize {
        match self.value_ref() {
            ValueRef::Str(_) => 1,
        }
    }

    /// Not expired at `now_ms`.
    fn is_live(&self, now_ms: i64) -> bool {
        !self.expire_at_ms().is_some_and(|at| is_expired(at, now_ms))
    }
}

impl ObjView for KeyEntry {
    fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::Str(self.value())
    }
    fn expire_at_ms(&self) -> Option<i64> {
        self.expire_at()
    }
    fn lru(&self) -> u32 {
        KeyEntry::lru(self)
    }
    fn encoding(&self) -> &'static str {
        KeyEntry::encoding(self)
    }
}

impl ObjView for Obj {
    fn value_ref(&self) -> ValueRef<'_> {
        self.value.as_ref()
    }
    fn expire_at_ms(&self) -> Option<i64> {
        self.expire_at_ms
    }
    fn lru(&self) -> u32 {
        self.lru
    }
    fn encoding(&self) -> &'static str {
        match &self.value {
            Value::Str(StrValue::Int(_)) => "int",
            Value::Str(StrValue::Raw(b)) if !self.raw && b.len() <= EMBSTR_LEN_MAX => "embstr",
            Value::Str(StrValue::Raw(_)) => "raw",
        }
    }
}

impl Obj {
    /// Copy a stored entry out.
    pub fn from_entry(e: &KeyEntry) -> Obj {
        Obj {
            value: e.value_ref().to_owned(),
            expire_at_ms: e.expire_at(),
            lru: e.lru(),
            raw: e.encoding() == "raw",
        }
    }
}
