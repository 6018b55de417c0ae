//! The aggregate types as the keyspace stores them: one owned, boxed object per key.
//!
//! An entry (`keyspace::entry`) holding an aggregate stores a thin pointer to the object and
//! the object's [`Kind`] in two tag bits, so a key of any type costs the same 8 bytes of value
//! field. This module is the only place that turns such a pointer back into a typed box; the
//! types themselves (`hash`, `list`, `set`, `zset`) know nothing about entries.
//!
//! Every type implements [`AggType`]: what TYPE, OBJECT ENCODING, MEMORY USAGE and lazyfree
//! need, plus the conversions the typed lookups in `keyspace::db` use.

use std::fmt;

use crate::types::hash::HashObj;
use crate::types::list::ListObj;
use crate::types::set::SetObj;
use crate::types::stream::StreamObj;
use crate::types::zset::ZSetObj;

// Every key of an aggregate type pays for its object's box, so the object itself must stay
// small: a compact encoding inline (a thin listpack/intset pointer), a large encoding boxed.
const OBJ_BYTES_MAX: usize = 16;
const _: () = assert!(
    std::mem::size_of::<HashObj>() <= OBJ_BYTES_MAX,
    "HashObj must be at most 16 bytes: box the large encoding (every hash key pays for it)"
);
const _: () = assert!(
    std::mem::size_of::<ListObj>() <= OBJ_BYTES_MAX,
    "ListObj must be at most 16 bytes: box the large encoding (every list key pays for it)"
);
const _: () = assert!(
    std::mem::size_of::<SetObj>() <= OBJ_BYTES_MAX,
    "SetObj must be at most 16 bytes: box the large encoding (every set key pays for it)"
);
const _: () = assert!(
    std::mem::size_of::<ZSetObj>() <= OBJ_BYTES_MAX,
    "ZSetObj must be at most 16 bytes: box the large encoding (every zset key pays for it)"
);

/// Which aggregate type an entry points to (three tag bits in the entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Hash = 0,
    List = 1,
    Set = 2,
    ZSet = 3,
    Stream = 4,
}

impl Kind {
    /// The kind stored in the entry's tag bits.
    pub fn from_bits(bits: u8) -> Kind {
        match bits {
            0 => Kind::Hash,
            1 => Kind::List,
            2 => Kind::Set,
            3 => Kind::ZSet,
            4 => Kind::Stream,
            _ => panic!("corrupt aggregate kind {bits}"),
        }
    }

    /// The name TYPE reports (and SCAN TYPE matches).
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::Hash => "hash",
            Kind::List => "list",
            Kind::Set => "set",
            Kind::ZSet => "zset",
            Kind::Stream => "stream",
        }
    }
}

/// What the keyspace needs from every aggregate type.
pub trait AggType: Clone + fmt::Debug + Send + Sync + Sized + 'static {
    const KIND: Kind;

    /// Number of elements (fields, items, members). A key never holds an empty aggregate:
    /// the command that empties it deletes the key.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// OBJECT ENCODING's name (`listpack`, `intset`, `hashtable`, `quicklist`, `skiplist`).
    fn encoding(&self) -> &'static str;

    /// Bytes the allocator charges for the object and everything it owns (not the box).
    fn alloc_bytes(&self) -> usize;

    /// How many allocations freeing it costs (Valkey's lazyfree effort): 1 for one compact
    /// allocation, about the element count for a table or a skiplist.
    fn free_effort(&self) -> usize;
}

/// Conversions between a concrete type and the enums, for the typed lookups
/// (`Db::read_agg::<HashObj>` and friends). Implemented here for the four types.
pub trait Typed: AggType {
    /// Whether the type can hold items with their own TTL (a hash's volatile fields), whose
    /// changes the keyspace must see: such a type is written only through the keyspace's
    /// write handle (`keyspace::db::AggMut`), never a bare `&mut`.
    const VOLATILE_ITEMS: bool = false;
    fn wrap(self) -> Agg;
    fn from_ref(a: AggRef<'_>) -> Option<&Self>;
    fn from_mut(a: AggMut<'_>) -> Option<&mut Self>;
}

macro_rules! typed {
    ($t:ty, $v:ident) => {
        typed!($t, $v, false);
    };
    ($t:ty, $v:ident, $volatile_items:expr) => {
        impl Typed for $t {
            const VOLATILE_ITEMS: bool = $volatile_items;
            fn wrap(self) -> Agg {
                Agg::$v(Box::new(self))
            }
            fn from_ref(a: AggRef<'_>) -> Option<&Self> {
                match a {
                    AggRef::$v(x) => Some(x),
                    _ => None,
                }
            }
            fn from_mut(a: AggMut<'_>) -> Option<&mut Self> {
                match a {
                    AggMut::$v(x) => Some(x),
                    _ => None,
                }
            }
        }
    };
}

typed!(HashObj, Hash, true);
typed!(ListObj, List);
typed!(SetObj, Set);
typed!(ZSetObj, ZSet);
typed!(StreamObj, Stream);

/// An owned aggregate.
#[derive(Clone)]
pub enum Agg {
    Hash(Box<HashObj>),
    List(Box<ListObj>),
    Set(Box<SetObj>),
    ZSet(Box<ZSetObj>),
    Stream(Box<StreamObj>),
}

/// A borrowed aggregate.
#[derive(Clone, Copy)]
pub enum AggRef<'a> {
    Hash(&'a HashObj),
    List(&'a ListObj),
    Set(&'a SetObj),
    ZSet(&'a ZSetObj),
    Stream(&'a StreamObj),
}

/// A mutably borrowed aggregate.
pub enum AggMut<'a> {
    Hash(&'a mut HashObj),
    List(&'a mut ListObj),
    Set(&'a mut SetObj),
    ZSet(&'a mut ZSetObj),
    Stream(&'a mut StreamObj),
}

/// Calls `$f` on the typed object inside any of the three enums.
macro_rules! each {
    ($e:expr, $x:ident => $f:expr) => {
        match $e {
            Self::Hash($x) => $f,
            Self::List($x) => $f,
            Self::Set($x) => $f,
            Self::ZSet($x) => $f,
            Self::Stream($x) => $f,
        }
    };
}

impl Agg {
    pub fn kind(&self) -> Kind {
        match self {
            Agg::Hash(_) => Kind::Hash,
            Agg::List(_) => Kind::List,
            Agg::Set(_) => Kind::Set,
            Agg::ZSet(_) => Kind::ZSet,
            Agg::Stream(_) => Kind::Stream,
        }
    }

    pub fn as_ref(&self) -> AggRef<'_> {
        match self {
            Agg::Hash(x) => AggRef::Hash(x),
            Agg::List(x) => AggRef::List(x),
            Agg::Set(x) => AggRef::Set(x),
            Agg::ZSet(x) => AggRef::ZSet(x),
            Agg::Stream(x) => AggRef::Stream(x),
        }
    }

    /// Gives up the box as a raw pointer (the entry stores it with its kind).
    pub fn into_raw(self) -> *mut u8 {
        each!(self, x => Box::into_raw(x).cast::<u8>())
    }

    /// Takes back a box given up by [`Agg::into_raw`].
    ///
    /// # Safety
    /// `ptr` must come from `into_raw` of an `Agg` of this `kind`, and not have been taken
    /// back before.
    pub unsafe fn from_raw(kind: Kind, ptr: *mut u8) -> Agg {
        // SAFETY: per the contract, `ptr` is a leaked box of the type `kind` names.
        unsafe {
            match kind {
                Kind::Hash => Agg::Hash(Box::from_raw(ptr.cast())),
                Kind::List => Agg::List(Box::from_raw(ptr.cast())),
                Kind::Set => Agg::Set(Box::from_raw(ptr.cast())),
                Kind::ZSet => Agg::ZSet(Box::from_raw(ptr.cast())),
                Kind::Stream => Agg::Stream(Box::from_raw(ptr.cast())),
            }
        }
    }
}

impl<'a> AggRef<'a> {
    /// A view of the object behind a raw pointer stored by an entry.
    ///
    /// # Safety
    /// `ptr` must come from [`Agg::into_raw`] of this `kind` and stay alive and unaliased by
    /// any `&mut` for `'a`.
    pub unsafe fn from_raw(kind: Kind, ptr: *const u8) -> AggRef<'a> {
        // SAFETY: per the contract.
        unsafe {
            match kind {
                Kind::Hash => AggRef::Hash(&*ptr.cast()),
                Kind::List => AggRef::List(&*ptr.cast()),
                Kind::Set => AggRef::Set(&*ptr.cast()),
                Kind::ZSet => AggRef::ZSet(&*ptr.cast()),
                Kind::Stream => AggRef::Stream(&*ptr.cast()),
            }
        }
    }

    /// The listpack of a listpack-encoded object (DEBUG LISTPACK); a stream's nodes and a
    /// quicklist's are not one listpack.
    pub fn listpack(self) -> Option<&'a crate::types::listpack::Listpack> {
        match self {
            AggRef::Hash(h) => h.listpack(),
            AggRef::List(l) => l.listpack(),
            AggRef::Set(s) => s.listpack(),
            AggRef::ZSet(z) => z.listpack(),
            AggRef::Stream(_) => None,
        }
    }

    /// The shape of the object's hashtable, when it has one (DEBUG HTSTATS-KEY).
    pub fn table_stats(self, walk_chains: bool) -> Option<crate::table::TableStats> {
        match self {
            AggRef::Hash(h) => h.table_stats(walk_chains),
            AggRef::Set(s) => s.table_stats(walk_chains),
            AggRef::ZSet(z) => z.table_stats(walk_chains),
            AggRef::List(_) | AggRef::Stream(_) => None,
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            AggRef::Hash(_) => Kind::Hash,
            AggRef::List(_) => Kind::List,
            AggRef::Set(_) => Kind::Set,
            AggRef::ZSet(_) => Kind::ZSet,
            AggRef::Stream(_) => Kind::Stream,
        }
    }

    pub fn len(&self) -> usize {
        each!(self, x => x.len())
    }

    pub fn is_empty(&self) -> bool {
        each!(self, x => x.is_empty())
    }

    pub fn encoding(&self) -> &'static str {
        each!(self, x => x.encoding())
    }

    /// The object's bytes, its box included.
    pub fn alloc_bytes(&self) -> usize {
        let boxed = match self {
            AggRef::Hash(_) => std::mem::size_of::<HashObj>(),
            AggRef::List(_) => std::mem::size_of::<ListObj>(),
            AggRef::Set(_) => std::mem::size_of::<SetObj>(),
            AggRef::ZSet(_) => std::mem::size_of::<ZSetObj>(),
            AggRef::Stream(_) => std::mem::size_of::<StreamObj>(),
        };
        crate::memory::size_class(boxed) + each!(self, x => x.alloc_bytes())
    }

    pub fn free_effort(&self) -> usize {
        each!(self, x => x.free_effort())
    }

    pub fn to_owned(&self) -> Agg {
        match self {
            AggRef::Hash(x) => Agg::Hash(Box::new((*x).clone())),
            AggRef::List(x) => Agg::List(Box::new((*x).clone())),
            AggRef::Set(x) => Agg::Set(Box::new((*x).clone())),
            AggRef::ZSet(x) => Agg::ZSet(Box::new((*x).clone())),
            AggRef::Stream(x) => Agg::Stream(Box::new((*x).clone())),
        }
    }
}

impl<'a> AggMut<'a> {
    /// A mutable view of the object behind a raw pointer stored by an entry.
    ///
    /// # Safety
    /// As [`AggRef::from_raw`], and no other reference to the object may exist for `'a`.
    pub unsafe fn from_raw(kind: Kind, ptr: *mut u8) -> AggMut<'a> {
        // SAFETY: per the contract.
        unsafe {
            match kind {
                Kind::Hash => AggMut::Hash(&mut *ptr.cast()),
                Kind::List => AggMut::List(&mut *ptr.cast()),
                Kind::Set => AggMut::Set(&mut *ptr.cast()),
                Kind::ZSet => AggMut::ZSet(&mut *ptr.cast()),
                Kind::Stream => AggMut::Stream(&mut *ptr.cast()),
            }
        }
    }
}

impl fmt::Debug for Agg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}

impl fmt::Debug for AggRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        each!(self, x => x.fmt(f))
    }
}
