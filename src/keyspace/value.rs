//! Values as the command code sees them: the owned [`Value`] a command stores, the borrowed
//! [`ValueRef`] a lookup returns, and [`Obj`], a key's value with its metadata taken out of
//! the keyspace whole (RENAME, MOVE, COPY).
//!
//! Storage is the entries' business (`keyspace::entry`); this is the shape of the API.

use crate::keyspace::entry::{KeyEntry, NewValue};
use crate::types::agg::{Agg, AggRef};
use crate::types::string::{embeds_as_embstr, StrRef, StrValue};

/// The key holds a value of another type than the command works on (WRONGTYPE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrongType;

/// A value to store.
#[derive(Clone, Debug)]
pub enum Value {
    Str(StrValue),
    Agg(Agg),
}

/// A borrowed view of a stored value.
#[derive(Clone, Copy, Debug)]
pub enum ValueRef<'a> {
    Str(StrRef<'a>),
    Agg(AggRef<'a>),
}

impl Value {
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Str(s) => ValueRef::Str(s.as_ref()),
            Value::Agg(a) => ValueRef::Agg(a.as_ref()),
        }
    }
}

impl<'a> ValueRef<'a> {
    /// The type name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            ValueRef::Str(_) => "string",
            ValueRef::Agg(a) => a.kind().type_name(),
        }
    }

    /// A deep copy (COPY, and reading a value out of the keyspace).
    pub fn to_owned(&self) -> Value {
        match self {
            ValueRef::Str(s) => Value::Str(s.to_owned()),
            ValueRef::Agg(a) => Value::Agg(a.to_owned()),
        }
    }

    /// The string, if it is one.
    pub fn as_str(self) -> Option<StrRef<'a>> {
        match self {
            ValueRef::Str(s) => Some(s),
            ValueRef::Agg(_) => None,
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
            ValueRef::Agg(a) => a.free_effort(),
        }
    }

    /// Not expired at `now_ms`.
    fn is_live(&self, now_ms: i64) -> bool {
        !self.expire_at_ms().is_some_and(|at| is_expired(at, now_ms))
    }
}

impl ObjView for KeyEntry {
    fn value_ref(&self) -> ValueRef<'_> {
        match self.agg() {
            Some(a) => ValueRef::Agg(a),
            None => ValueRef::Str(self.value()),
        }
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
            // Detached, the key is unknown: judged as if it were empty (a stored entry's
            // answer came over in `raw`).
            Value::Str(StrValue::Raw(b))
                if !self.raw && embeds_as_embstr(0, b.len(), self.expire_at_ms.is_some()) =>
            {
                "embstr"
            }
            Value::Str(StrValue::Raw(_)) => "raw",
            Value::Agg(a) => a.as_ref().encoding(),
        }
    }
}

impl Obj {
    /// Copy a stored entry out (a deep copy of an aggregate).
    pub fn from_entry(e: &KeyEntry) -> Obj {
        Obj {
            value: e.value_ref().to_owned(),
            expire_at_ms: e.expire_at(),
            lru: e.lru(),
            raw: e.encoding() == "raw",
        }
    }

    /// Move a removed entry's value out: an aggregate is not copied.
    pub fn from_removed(mut e: KeyEntry) -> Obj {
        let raw = e.encoding() == "raw";
        let (expire_at_ms, lru) = (e.expire_at(), e.lru());
        Obj { value: e.take_value(), expire_at_ms, lru, raw }
    }

    /// The value to build an entry from; an aggregate moves in.
    pub(crate) fn new_value(value: &mut Value) -> NewValue<'_> {
        match value {
            Value::Str(s) => NewValue::from(&*s),
            Value::Agg(_) => {
                let Value::Agg(a) = std::mem::replace(value, Value::Str(StrValue::Int(0))) else {
                    unreachable!()
                };
                NewValue::Agg(a)
            }
        }
    }
}
