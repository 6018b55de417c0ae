//! Keyspace entries: one heap allocation per key holding a compact header, the expire time
//! (only when the key has one), the key bytes and the value.
//!
//! # Layout
//!
//! ```text
//!  byte 0      1   2   3      4         5          6 ...
//!     +-------+-----------+---------+---------+- - - - - - - - - - -+- - - - - -+-------+-------+
//!     |  tag  | lru/lfu   | key_len | val_len | expire_at_ms  (6|8) | exp_slot  |  key  | value |
//!     +-------+-----------+---------+---------+- - - - - - - - - - -+- - - - - -+-------+-------+
//!        1        3            1         1      only with a TTL        4, TTL only
//!
//!  tag bits: 0-1 encoding (0 inline string, 1 integer, 2 heap string, 3 aggregate)
//!            2   has an expire time            3   expire time takes 8 bytes (else 6)
//!            4   key length is a u32 after the expire fields (key_len byte unused)
//!            5   "raw" string: OBJECT ENCODING reports raw (APPEND, SETRANGE, or too long
//!                for Valkey's embstr with this key and TTL when built; see `encoding`)
//!            5-7 instead, when the encoding is 3: the aggregate kind (hash, list, set,
//!                zset, stream; a string flag has no meaning for an aggregate)
//! ```
//!
//! - **Inline string** (up to [`INLINE_VALUE_MAX`] bytes): the bytes follow the key; `val_len`
//!   is their length. No pointer, no second allocation.
//! - **Integer**: 8 bytes, little endian, after the key.
//! - **Heap string**: an 8-byte pointer after the key to a [`HeapStr`]: `[len: u64][cap: u64]
//!   [bytes]`, one allocation with spare room for edits (layout and growth in `heap_str`).
//! - **Aggregate**: an 8-byte pointer after the key to the boxed hash, list, set or sorted set
//!   (`types::agg`); its kind is in tag bits 5-7, so no per-object type word is needed.
//!
//! Multi-byte fields are read and written unaligned (the entry is a byte array; x86-64 and
//! aarch64 load unaligned words at full speed).
//!
//! # The byte budget
//!
//! The target workload stores 16-byte keys with 16-byte values: 6 (header) + 16 + 16 = 38
//! bytes, which jemalloc built with an 8-byte quantum rounds to the 40-byte class. With the
//! 14-15 bytes per key of the hashtable (see `hashtable`), that is about 55 bytes per key.
//!
//! A key with a TTL adds the expire time and its slot in the expire index: 6 + 4 = 10 bytes,
//! 48 in all, the next class. Expire times up to 2^48 ms (the year 10889) take 6 bytes; a
//! later one takes 8 (bit 3). The expire index itself costs 8 bytes per key with a TTL (see
//! `expire_index`), so a TTL costs 16 bytes per key.
//!
//! # Edits, and where the inline boundary lies
//!
//! APPEND, SETRANGE and the counters edit a value where it lies ([`KeyEntry::edit_str`]),
//! so an edit costs what it changes, not what the value holds:
//! - an out-of-line string is edited in its buffer, which grows greedily (double below
//!   1 MiB, +1 MiB above, as Valkey's `sdsMakeRoomFor`): APPEND is amortised O(appended
//!   bytes), SETRANGE inside the capacity O(changed bytes), and the entry never moves;
//! - an inline string edited inside its length, or an integer replaced by an integer, is
//!   written in place;
//! - an inline string that grows is rebuilt as a new entry, which copies the header, the key
//!   and at most [`INLINE_VALUE_MAX`] bytes of value: a bounded cost, paid at most once per
//!   byte of growth up to the limit. Past it the value moves out, with spare room.
//!
//! The boundary stays at 255 bytes, the most the `val_len` byte can say. Lowering it (say to
//! Valkey's 44-byte embstr limit, or moving every edited value out) would make edits of
//! short values cheaper only by a constant, while costing each such key the pointer, the
//! buffer's 16-byte header and a second size-class rounding. Raising it needs a wider
//! `val_len` (a bigger header for every key) and would make each inline edit copy more.
//! Inline values get no spare room: that too would need header bits on every key. The
//! out-of-line buffer's capacity word costs 8 bytes per value of at least 256 bytes (under
//! 3%), and nothing for the short values the byte budget below is about.
//!
//! No reference count on the entry: the table owns it; the expire index holds a non-owning
//! pointer that the `Db` keeps in step. Only an out-of-line string's buffer can have more
//! than one owner, while a reply of it is being written (`heap_str`).

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::keyspace::heap_str::{HeapStr, SharedStr};
use crate::table;
use crate::types::agg::{Agg, AggMut, AggRef, Kind};
use crate::types::string::{embeds_as_embstr, StrRef, StrValue};

/// Longest string stored inline in the entry.
pub const INLINE_VALUE_MAX: usize = 255;

/// The fixed header of every entry (tag, lengths, LRU clock).
pub const HEADER_BYTES: usize = 6;
const ENC_MASK: u8 = 0b11;
const ENC_INLINE: u8 = 0;
const ENC_INT: u8 = 1;
const ENC_HEAP: u8 = 2;
const F_EXPIRE: u8 = 1 << 2;
const F_EXPIRE_LONG: u8 = 1 << 3;
const F_KEY_LONG: u8 = 1 << 4;
const F_RAW: u8 = 1 << 5;
const ENC_AGG: u8 = 3;
const KIND_SHIFT: u8 = 5;
/// The kind's bits, once shifted down.
const KIND_MASK: u8 = 0b111;
/// Expire times below this fit in 6 bytes.
const SHORT_EXPIRE_LIMIT: i64 = 1 << 48;

/// Where a string entry's value lies, for DEBUG SDSLEN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrLayout {
    /// What the allocator charges for the entry (header, key, inline value or pointer).
    pub entry_alloc_bytes: usize,
    pub value_len: usize,
    /// Bytes the value can grow by where it lies (out-of-line buffers only).
    pub value_spare_bytes: usize,
    /// The out-of-line buffer's allocation; 0 for a value inline in the entry.
    pub value_alloc_bytes: usize,
}

/// The value to store in a new entry. An aggregate is moved in.
#[derive(Debug)]
pub enum NewValue<'a> {
    Int(i64),
    Str(&'a [u8]),
    /// An out-of-line string already built (an edit that outgrew the inline value); moved in.
    Heap(HeapStr),
    Agg(Agg),
}

impl<'a> From<&'a StrValue> for NewValue<'a> {
    fn from(v: &'a StrValue) -> NewValue<'a> {
        match v {
            StrValue::Int(n) => NewValue::Int(*n),
            StrValue::Raw(b) => NewValue::Str(b),
        }
    }
}

impl<'a> From<StrRef<'a>> for NewValue<'a> {
    fn from(v: StrRef<'a>) -> NewValue<'a> {
        match v {
            StrRef::Int(n) => NewValue::Int(n),
            StrRef::Raw(b) => NewValue::Str(b),
        }
    }
}

/// A change to a string value ([`KeyEntry::edit_str`]).
#[derive(Debug)]
pub enum StrEdit<'a> {
    /// APPEND: the result is raw text.
    Append(&'a [u8]),
    /// SETRANGE: overwrite from `offset`, zero-filling a gap; the result is raw text.
    SetRange { offset: usize, bytes: &'a [u8] },
    /// A new value (INCR, INCRBY, INCRBYFLOAT), encoded as a fresh value would be.
    Replace(StrValue),
    /// Scattered byte writes (BITFIELD): zero-fill the value to at least `len` bytes, then
    /// write each `(offset, byte)` in order; every offset lies below `len`. The result is raw
    /// text. Costs what it writes (plus any growth), however far apart the bytes are.
    Patch { len: usize, bytes: Vec<(usize, u8)> },
}

/// The value an edit that could not be made in place stores instead, by rebuilding the
/// entry; `raw` says whether OBJECT ENCODING must then report `raw`.
#[derive(Debug)]
pub struct Rebuild {
    pub value: RebuiltValue,
    pub raw: bool,
}

#[derive(Debug)]
pub enum RebuiltValue {
    Str(StrValue),
    Heap(HeapStr),
}

impl Rebuild {
    /// The edited text of a short value `head` (at most the inline limit, or an integer's
    /// text) that becomes `len` bytes long: inline when it still fits, else an out-of-line
    /// buffer with greedy spare room (the value is being edited, so more edits may follow).
    fn grown(head: &[u8], len: usize, edit: impl FnOnce(&mut Editable) -> usize) -> Rebuild {
        let value = if len <= INLINE_VALUE_MAX {
            let mut v = Editable::Small(head.to_vec());
            edit(&mut v);
            let Editable::Small(v) = v else { unreachable!() };
            RebuiltValue::Str(StrValue::Raw(v.into_boxed_slice()))
        } else {
            let mut v = Editable::Heap(HeapStr::grown(head, len));
            edit(&mut v);
            let Editable::Heap(h) = v else { unreachable!() };
            RebuiltValue::Heap(h)
        };
        Rebuild { value, raw: true }
    }
}

/// The two forms an edited short value is built in.
enum Editable {
    Small(Vec<u8>),
    Heap(HeapStr),
}

impl Editable {
    fn append(&mut self, tail: &[u8]) -> usize {
        match self {
            Editable::Small(v) => {
                v.extend_from_slice(tail);
                v.len()
            }
            Editable::Heap(h) => h.append(tail),
        }
    }

    fn set_range(&mut self, offset: usize, bytes: &[u8]) -> usize {
        match self {
            Editable::Small(v) => {
                let end = offset + bytes.len();
                if v.len() < end {
                    v.resize(end, 0);
                }
                v[offset..end].copy_from_slice(bytes);
                v.len()
            }
            Editable::Heap(h) => h.set_range(offset, bytes),
        }
    }

    fn patch(&mut self, len: usize, bytes: &[(usize, u8)]) -> usize {
        match self {
            Editable::Small(v) => {
                if v.len() < len {
                    v.resize(len, 0);
                }
                for &(offset, b) in bytes {
                    v[offset] = b;
                }
                v.len()
            }
            Editable::Heap(h) => patch_heap(h, len, bytes),
        }
    }
}

/// [`StrEdit::Patch`] on an out-of-line string: grown once (greedily, zero-filled) to `len`,
/// then written byte by byte inside its capacity.
fn patch_heap(h: &mut HeapStr, len: usize, bytes: &[(usize, u8)]) -> usize {
    if h.len() < len {
        h.set_range(len - 1, &[0]);
    }
    for &(offset, b) in bytes {
        h.set_range(offset, &[b]);
    }
    h.len()
}

/// Everything that decides an entry's layout, computed once.
#[derive(Clone, Copy)]
struct Shape {
    tag: u8,
    key_len: usize,
    value_bytes: usize,
}

impl Shape {
    fn expire_bytes(self) -> usize {
        match (self.tag & F_EXPIRE != 0, self.tag & F_EXPIRE_LONG != 0) {
            (false, _) => 0,
            (true, false) => 6 + 4,
            (true, true) => 8 + 4,
        }
    }

    fn key_offset(self) -> usize {
        HEADER_BYTES + self.expire_bytes() + if self.tag & F_KEY_LONG != 0 { 4 } else { 0 }
    }

    fn value_offset(self) -> usize {
        self.key_offset() + self.key_len
    }

    fn size(self) -> usize {
        self.value_offset() + self.value_bytes
    }
}

fn entry_layout(size: usize) -> Layout {
    Layout::from_size_align(size, 1).expect("entry size fits a layout")
}

/// One key with its value and metadata, in one allocation. Owns the allocation (and the
/// heap string, if any); dropped when the table drops it.
pub struct KeyEntry {
    ptr: NonNull<u8>,
}

// SAFETY: a KeyEntry uniquely owns its allocations; nothing else aliases them mutably.
unsafe impl Send for KeyEntry {}
// SAFETY: shared access only reads.
unsafe impl Sync for KeyEntry {}

impl KeyEntry {
    /// Build an entry.
    pub fn new(key: &[u8], value: NewValue<'_>, expire_at_ms: Option<i64>, lru: u32) -> KeyEntry {
        let mut tag = 0u8;
        let value_bytes = match value {
            NewValue::Int(_) => {
                tag |= ENC_INT;
                8
            }
            NewValue::Str(b) if b.len() <= INLINE_VALUE_MAX => {
                tag |= ENC_INLINE;
                b.len()
            }
            NewValue::Str(_) | NewValue::Heap(_) => {
                tag |= ENC_HEAP;
                8
            }
            NewValue::Agg(ref a) => {
                tag |= ENC_AGG | ((a.kind() as u8) << KIND_SHIFT);
                8
            }
        };
        if let Some(at) = expire_at_ms {
            tag |= F_EXPIRE;
            if !(0..SHORT_EXPIRE_LIMIT).contains(&at) {
                tag |= F_EXPIRE_LONG;
            }
        }
        if key.len() >= 255 {
            tag |= F_KEY_LONG;
        }
        let too_long_for_embstr = match &value {
            NewValue::Str(b) => !embeds_as_embstr(key.len(), b.len(), expire_at_ms.is_some()),
            NewValue::Heap(_) => true,
            NewValue::Int(_) | NewValue::Agg(_) => false,
        };
        if too_long_for_embstr {
            tag |= F_RAW;
        }
        let shape = Shape { tag, key_len: key.len(), value_bytes };
        let layout = entry_layout(shape.size());
        // SAFETY: the layout has a non-zero size (at least the 6-byte header).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        let mut e = KeyEntry { ptr };
        let buf = e.bytes_mut_raw(shape.size());
        buf[0] = tag;
        buf[1..4].copy_from_slice(&lru.to_le_bytes()[..3]);
        buf[4] = key.len().min(255) as u8;
        buf[5] = match &value {
            NewValue::Str(b) if b.len() <= INLINE_VALUE_MAX => b.len() as u8,
            _ => 0,
        };
        if tag & F_KEY_LONG != 0 {
            let at = shape.key_offset() - 4;
            buf[at..at + 4].copy_from_slice(&(key.len() as u32).to_le_bytes());
        }
        let ko = shape.key_offset();
        buf[ko..ko + key.len()].copy_from_slice(key);
        let vo = shape.value_offset();
        match value {
            NewValue::Int(n) => buf[vo..vo + 8].copy_from_slice(&n.to_le_bytes()),
            NewValue::Str(b) if b.len() <= INLINE_VALUE_MAX => {
                buf[vo..vo + b.len()].copy_from_slice(b)
            }
            NewValue::Str(b) => {
                let heap = HeapStr::from_slice(b).into_raw();
                buf[vo..vo + 8]
                    .copy_from_slice(&(heap.as_ptr().expose_provenance() as u64).to_le_bytes());
            }
            NewValue::Heap(h) => {
                let heap = h.into_raw();
                buf[vo..vo + 8]
                    .copy_from_slice(&(heap.as_ptr().expose_provenance() as u64).to_le_bytes());
            }
            NewValue::Agg(a) => {
                let raw = a.into_raw();
                buf[vo..vo + 8].copy_from_slice(&(raw.expose_provenance() as u64).to_le_bytes());
            }
        }
        if let Some(at) = expire_at_ms {
            e.write_expire(at);
            e.set_expire_slot(u32::MAX);
        }
        e
    }

    /// The whole allocation as a mutable slice, given its size (during construction).
    fn bytes_mut_raw(&mut self, size: usize) -> &mut [u8] {
        // SAFETY: the allocation is `size` bytes long and uniquely owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), size) }
    }

    fn tag(&self) -> u8 {
        // SAFETY: every entry has at least the 6-byte header.
        unsafe { *self.ptr.as_ptr() }
    }

    fn header(&self) -> &[u8] {
        // SAFETY: every entry has at least the 6-byte header.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), HEADER_BYTES) }
    }

    fn shape(&self) -> Shape {
        let tag = self.tag();
        let h = self.header();
        let mut s = Shape { tag, key_len: h[4] as usize, value_bytes: 0 };
        if tag & F_KEY_LONG != 0 {
            let at = s.key_offset() - 4;
            s.key_len = u32::from_le_bytes(self.read::<4>(at)) as usize;
        }
        s.value_bytes = match tag & ENC_MASK {
            ENC_INLINE => h[5] as usize,
            _ => 8,
        };
        s
    }

    /// Read N bytes at `offset` (within the allocation).
    fn read<const N: usize>(&self, offset: usize) -> [u8; N] {
        let mut out = [0u8; N];
        // SAFETY: callers pass offsets of fields that the shape says exist, so
        // offset + N is within the allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(offset), out.as_mut_ptr(), N)
        };
        out
    }

    fn write(&mut self, offset: usize, bytes: &[u8]) {
        // SAFETY: as for `read`; `&mut self` gives unique access.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.ptr.as_ptr().add(offset),
                bytes.len(),
            )
        };
    }

    /// The key bytes. The common entry (no TTL, short key) takes the fast path: the key
    /// starts right after the header and its length is the header's `key_len` byte.
    #[inline]
    pub fn key(&self) -> &[u8] {
        let p = self.ptr.as_ptr();
        // SAFETY: every entry has at least the 6-byte header.
        let (tag, len) = unsafe { (*p, *p.add(4) as usize) };
        if tag & (F_EXPIRE | F_KEY_LONG) == 0 {
            // SAFETY: without a TTL or a long key, the key lies right after the header for
            // `key_len` bytes inside the allocation, which lives as long as `self`.
            return unsafe { std::slice::from_raw_parts(p.add(HEADER_BYTES), len) };
        }
        self.key_slow()
    }

    fn key_slow(&self) -> &[u8] {
        let s = self.shape();
        // SAFETY: the key lies at key_offset for key_len bytes inside the allocation, which
        // lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(s.key_offset()), s.key_len) }
    }

    /// A view of the value. Fast path for the common entry: an inline string, no TTL, a
    /// short key (value right after the key, length in the header's `val_len` byte).
    #[inline]
    pub fn value(&self) -> StrRef<'_> {
        let p = self.ptr.as_ptr();
        // SAFETY: every entry has at least the 6-byte header.
        let (tag, klen, vlen) = unsafe { (*p, *p.add(4) as usize, *p.add(5) as usize) };
        if tag & (ENC_MASK | F_EXPIRE | F_KEY_LONG) == ENC_INLINE {
            // SAFETY: such an entry is header, key, then `val_len` inline value bytes, all
            // inside the allocation, which lives as long as `self`.
            return StrRef::Raw(unsafe {
                std::slice::from_raw_parts(p.add(HEADER_BYTES + klen), vlen)
            });
        }
        self.value_slow()
    }

    fn value_slow(&self) -> StrRef<'_> {
        let s = self.shape();
        let vo = s.value_offset();
        match s.tag & ENC_MASK {
            ENC_INT => StrRef::Int(i64::from_le_bytes(self.read::<8>(vo))),
            ENC_INLINE => {
                // SAFETY: inline bytes lie at value_offset for value_bytes bytes.
                StrRef::Raw(unsafe {
                    std::slice::from_raw_parts(self.ptr.as_ptr().add(vo), s.value_bytes)
                })
            }
            ENC_HEAP => StrRef::Raw(heap_str(self.heap_ptr(vo))),
            _ => panic!("value() of an aggregate entry: use value_ref()"),
        }
    }

    /// Whether the value is a string (else an aggregate).
    #[inline]
    pub fn is_str(&self) -> bool {
        self.tag() & ENC_MASK != ENC_AGG
    }

    /// The aggregate kind and its pointer, if the value is one.
    fn agg_raw(&self) -> Option<(Kind, *mut u8)> {
        let tag = self.tag();
        if tag & ENC_MASK != ENC_AGG {
            return None;
        }
        let vo = self.shape().value_offset();
        Some((Kind::from_bits((tag >> KIND_SHIFT) & KIND_MASK), self.heap_ptr(vo).as_ptr()))
    }

    /// The aggregate this entry holds, if any.
    pub fn agg(&self) -> Option<AggRef<'_>> {
        let (kind, ptr) = self.agg_raw()?;
        // SAFETY: the pointer came from `Agg::into_raw` of this kind in `new` and is owned by
        // this entry, which the borrow keeps alive and unchanged.
        Some(unsafe { AggRef::from_raw(kind, ptr) })
    }

    /// The aggregate this entry holds, mutably. The caller must not leave it empty in the
    /// keyspace (the db deletes emptied keys).
    pub fn agg_mut(&mut self) -> Option<AggMut<'_>> {
        let (kind, ptr) = self.agg_raw()?;
        // SAFETY: as in `agg`; `&mut self` makes the access unique.
        Some(unsafe { AggMut::from_raw(kind, ptr) })
    }

    /// Moves the aggregate out, leaving the entry holding the integer 0 (so dropping the entry
    /// frees only its own allocation). None for a string entry.
    fn take_agg(&mut self) -> Option<Agg> {
        let (kind, ptr) = self.agg_raw()?;
        let vo = self.shape().value_offset();
        let tag = (self.tag() & !(ENC_MASK | (KIND_MASK << KIND_SHIFT))) | ENC_INT;
        self.write(0, &[tag]);
        self.write(vo, &0i64.to_le_bytes());
        // SAFETY: the pointer came from `Agg::into_raw` of this kind; the entry no longer
        // refers to it (its encoding is now an integer), so this is the only owner.
        Some(unsafe { Agg::from_raw(kind, ptr) })
    }

    /// Moves the out-of-line string out, leaving the entry holding the integer 0 (as
    /// `take_agg`). None for any other value.
    fn take_heap(&mut self) -> Option<HeapStr> {
        let s = self.shape();
        if s.tag & ENC_MASK != ENC_HEAP {
            return None;
        }
        let vo = s.value_offset();
        let p = self.heap_ptr(vo);
        self.write(0, &[(s.tag & !ENC_MASK) | ENC_INT]);
        self.write(vo, &0i64.to_le_bytes());
        // SAFETY: the pointer came from `HeapStr::into_raw`; the entry no longer refers to it
        // (its encoding is now an integer), so this is the only owner.
        Some(unsafe { HeapStr::from_raw(p) })
    }

    /// A new entry for `key` with this entry's value, clock and `raw` flag and the expire
    /// time `at` (the layout changes with the TTL, or the key). An aggregate or an
    /// out-of-line string moves to the new entry, not copied; this one is left holding an
    /// integer, to be dropped.
    ///
    /// The `raw` flag follows Valkey 9.1, where `raw` never turns back into `embstr`: under the
    /// same key (EXPIRE, PERSIST, MOVE) the flag is kept as it was, even when the new TTL
    /// would not have fitted an embstr; under a new key (RENAME, COPY) it is also set when
    /// the value does not fit with that key.
    pub fn rebuilt(&mut self, key: &[u8], at: Option<i64>) -> KeyEntry {
        // The raw flag is a string's (an aggregate's kind uses that bit).
        let (lru, raw) = (self.lru(), self.is_str() && self.tag() & F_RAW != 0);
        let same_key = self.key() == key;
        let mut n = match (self.take_agg(), self.take_heap()) {
            (Some(a), _) => KeyEntry::new(key, NewValue::Agg(a), at, lru),
            (None, Some(h)) => KeyEntry::new(key, NewValue::Heap(h), at, lru),
            (None, None) => KeyEntry::new(key, NewValue::from(self.value()), at, lru),
        };
        if raw {
            n.set_raw();
        } else if same_key && n.is_str() {
            let t = n.tag() & !F_RAW;
            n.write(0, &[t]);
        }
        n
    }

    /// The value, moved out: a copy of a string, or the aggregate itself (the entry is left
    /// holding an integer).
    pub fn take_value(&mut self) -> crate::keyspace::value::Value {
        match self.take_agg() {
            Some(a) => crate::keyspace::value::Value::Agg(a),
            None => crate::keyspace::value::Value::Str(self.value().to_owned()),
        }
    }

    /// Run `f` on the out-of-line string whose pointer lies at `vo`, then store its pointer
    /// back (a growing edit may have moved it). The entry must hold a heap string.
    fn with_heap<R>(&self, vo: usize, f: impl FnOnce(&mut HeapStr) -> R) -> R {
        // SAFETY: the pointer came from `HeapStr::into_raw` and is owned by this entry; the
        // ManuallyDrop view never frees it.
        let mut h = std::mem::ManuallyDrop::new(unsafe { HeapStr::from_raw(self.heap_ptr(vo)) });
        f(&mut h)
    }

    fn with_heap_mut<R>(&mut self, vo: usize, f: impl FnOnce(&mut HeapStr) -> R) -> R {
        // SAFETY: as in `with_heap`; `&mut self` makes the access unique.
        let h = unsafe { HeapStr::from_raw(self.heap_ptr(vo)) };
        let mut h = std::mem::ManuallyDrop::new(h);
        let r = f(&mut h);
        let p = std::mem::ManuallyDrop::into_inner(h).into_raw();
        self.write(vo, &(p.as_ptr().expose_provenance() as u64).to_le_bytes());
        r
    }

    /// Apply an edit to the string value in place when the layout allows it: always for an
    /// out-of-line string (its buffer grows greedily, see `heap_str`), for an inline string
    /// when the range lies inside it, and for an integer replaced by an integer. Otherwise
    /// the entry is left unchanged and the value to rebuild it with comes back (an inline
    /// value that grows, bounded by the inline limit plus the edit, or a new value).
    /// Returns the new length of the string.
    pub fn edit_str(&mut self, edit: StrEdit<'_>) -> Result<usize, Rebuild> {
        let s = self.shape();
        let vo = s.value_offset();
        match (s.tag & ENC_MASK, edit) {
            (ENC_AGG, _) => panic!("edit_str on an aggregate entry"),
            (ENC_HEAP, StrEdit::Append(tail)) => {
                self.set_raw();
                Ok(self.with_heap_mut(vo, |h| h.append(tail)))
            }
            (ENC_HEAP, StrEdit::SetRange { offset, bytes }) => {
                self.set_raw();
                Ok(self.with_heap_mut(vo, |h| h.set_range(offset, bytes)))
            }
            (ENC_INLINE, StrEdit::SetRange { offset, bytes })
                if offset + bytes.len() <= s.value_bytes =>
            {
                self.write(vo + offset, bytes);
                self.set_raw();
                Ok(s.value_bytes)
            }
            (ENC_HEAP, StrEdit::Patch { len, bytes }) => {
                self.set_raw();
                Ok(self.with_heap_mut(vo, |h| patch_heap(h, len, &bytes)))
            }
            (ENC_INLINE, StrEdit::Patch { len, bytes }) if len <= s.value_bytes => {
                for (offset, b) in bytes {
                    // `write` is unchecked: the offset must lie inside the value.
                    assert!(offset < s.value_bytes, "patch offset past the value");
                    self.write(vo + offset, &[b]);
                }
                self.set_raw();
                Ok(s.value_bytes)
            }
            (ENC_INT, StrEdit::Replace(StrValue::Int(n))) => {
                self.write(vo, &n.to_le_bytes());
                Ok(crate::types::string::int_len(n))
            }
            (_, StrEdit::Replace(value)) => {
                Err(Rebuild { value: RebuiltValue::Str(value), raw: false })
            }
            (_, StrEdit::Append(tail)) => {
                let mut scratch = [0u8; 20];
                let head = self.value().bytes(&mut scratch);
                Err(Rebuild::grown(head, head.len() + tail.len(), |v| v.append(tail)))
            }
            (_, StrEdit::SetRange { offset, bytes }) => {
                let mut scratch = [0u8; 20];
                let head = self.value().bytes(&mut scratch);
                let len = head.len().max(offset + bytes.len());
                Err(Rebuild::grown(head, len, |v| v.set_range(offset, bytes)))
            }
            (_, StrEdit::Patch { len, bytes }) => {
                let mut scratch = [0u8; 20];
                let head = self.value().bytes(&mut scratch);
                let new_len = head.len().max(len);
                Err(Rebuild::grown(head, new_len, |v| v.patch(len, &bytes)))
            }
        }
    }

    fn heap_ptr(&self, vo: usize) -> NonNull<u8> {
        let addr = u64::from_le_bytes(self.read::<8>(vo)) as usize;
        // The address was stored with its provenance exposed (see `new`).
        NonNull::new(std::ptr::with_exposed_provenance_mut(addr)).expect("heap pointer is set")
    }

    /// Address of the out-of-line value, if any (for prefetching).
    pub fn value_addr(&self) -> Option<*const u8> {
        let s = self.shape();
        matches!(s.tag & ENC_MASK, ENC_HEAP | ENC_AGG)
            .then(|| self.heap_ptr(s.value_offset()).as_ptr() as *const u8)
    }

    pub fn expire_at(&self) -> Option<i64> {
        let tag = self.tag();
        if tag & F_EXPIRE == 0 {
            return None;
        }
        Some(if tag & F_EXPIRE_LONG != 0 {
            i64::from_le_bytes(self.read::<8>(HEADER_BYTES))
        } else {
            let b = self.read::<6>(HEADER_BYTES);
            let mut w = [0u8; 8];
            w[..6].copy_from_slice(&b);
            i64::from_le_bytes(w)
        })
    }

    /// Whether `at` can replace the current expire time without changing the layout.
    pub fn expire_fits(&self, at: i64) -> bool {
        let tag = self.tag();
        tag & F_EXPIRE != 0 && (tag & F_EXPIRE_LONG != 0 || (0..SHORT_EXPIRE_LIMIT).contains(&at))
    }

    /// Overwrite the expire time in place. The entry must have one, in a form `at` fits.
    pub fn write_expire(&mut self, at: i64) {
        assert!(self.expire_fits(at), "expire time does not fit the entry's layout");
        if self.tag() & F_EXPIRE_LONG != 0 {
            self.write(HEADER_BYTES, &at.to_le_bytes());
        } else {
            self.write(HEADER_BYTES, &at.to_le_bytes()[..6]);
        }
    }

    /// The entry's position in the expire index (entries with a TTL only).
    pub fn expire_slot(&self) -> u32 {
        let s = self.shape();
        debug_assert!(s.tag & F_EXPIRE != 0);
        u32::from_le_bytes(self.read::<4>(HEADER_BYTES + s.expire_bytes() - 4))
    }

    pub fn set_expire_slot(&mut self, slot: u32) {
        let s = self.shape();
        assert!(s.tag & F_EXPIRE != 0, "only entries with a TTL are in the expire index");
        self.write(HEADER_BYTES + s.expire_bytes() - 4, &slot.to_le_bytes());
    }

    /// The LRU clock or LFU data (24 bits).
    pub fn lru(&self) -> u32 {
        let h = self.header();
        u32::from_le_bytes([h[1], h[2], h[3], 0])
    }

    pub fn set_lru(&mut self, lru: u32) {
        self.write(1, &lru.to_le_bytes()[..3]);
    }

    /// Mark a string as `raw` for OBJECT ENCODING (it was modified in place).
    pub fn set_raw(&mut self) {
        assert!(self.is_str(), "only a string can be raw");
        let t = self.tag() | F_RAW;
        self.write(0, &[t]);
    }

    /// OBJECT ENCODING's name.
    pub fn encoding(&self) -> &'static str {
        let tag = self.tag();
        match tag & ENC_MASK {
            ENC_INT => "int",
            ENC_AGG => self.agg().expect("aggregate").encoding(),
            // `new` set the flag for a value too long for Valkey's embstr with this key.
            _ if tag & F_RAW != 0 => "raw",
            _ => "embstr",
        }
    }

    /// Bytes this entry occupies in the allocator, its value included (MEMORY USAGE).
    pub fn alloc_bytes(&self) -> usize {
        let s = self.shape();
        let mut n = crate::memory::size_class(s.size());
        if s.tag & ENC_MASK == ENC_HEAP {
            n += self.with_heap(s.value_offset(), |h| h.alloc_bytes());
        }
        if let Some(a) = self.agg() {
            n += a.alloc_bytes();
        }
        n
    }

    /// Where a string value's bytes lie (DEBUG SDSLEN); None for an integer or an aggregate.
    pub fn str_layout(&self) -> Option<StrLayout> {
        let s = self.shape();
        let entry_alloc_bytes = crate::memory::size_class(s.size());
        match s.tag & ENC_MASK {
            ENC_INLINE => Some(StrLayout {
                entry_alloc_bytes,
                value_len: self.value().len(),
                // An inline value has no spare room: growing rebuilds the entry.
                value_spare_bytes: 0,
                value_alloc_bytes: 0,
            }),
            ENC_HEAP => Some(self.with_heap(s.value_offset(), |h| StrLayout {
                entry_alloc_bytes,
                value_len: h.len(),
                value_spare_bytes: h.capacity() - h.len(),
                value_alloc_bytes: h.alloc_bytes(),
            })),
            _ => None,
        }
    }

    /// A counted reference to an out-of-line string value, for a reply that should not copy
    /// it (see `heap_str`). None for any other value, or when the count is saturated.
    pub fn share_str(&self) -> Option<SharedStr> {
        let s = self.shape();
        if s.tag & ENC_MASK != ENC_HEAP {
            return None;
        }
        self.with_heap(s.value_offset(), |h| h.share())
    }

    /// The entry's address, as the expire index records it.
    pub fn addr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// A non-owning view of the entry at `ptr` (from the expire index). It never frees.
    ///
    /// # Safety
    /// `ptr` must be the address of a live entry that stays alive and is not mutated while
    /// the view is used.
    pub unsafe fn view(ptr: NonNull<u8>) -> std::mem::ManuallyDrop<KeyEntry> {
        std::mem::ManuallyDrop::new(KeyEntry { ptr })
    }
}

impl Drop for KeyEntry {
    fn drop(&mut self) {
        let s = self.shape();
        if s.tag & ENC_MASK == ENC_HEAP {
            // SAFETY: the pointer came from `HeapStr::into_raw` in `new` (or was replaced by
            // `with_heap`); the entry is going away, so this is its last owner.
            drop(unsafe { HeapStr::from_raw(self.heap_ptr(s.value_offset())) });
        }
        drop(self.take_agg());
        // SAFETY: the allocation was made in `new` with exactly this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), entry_layout(s.size())) };
    }
}

impl table::Entry for KeyEntry {
    #[inline]
    fn key(&self) -> &[u8] {
        KeyEntry::key(self)
    }

    fn prefetch_addr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    fn resize_allowed() -> bool {
        crate::keyspace::keys::resizing_enabled()
    }
}

fn heap_str<'a>(p: NonNull<u8>) -> &'a [u8] {
    // SAFETY: `p` came from `HeapStr::into_raw` and is owned by a live entry that outlives 'a
    // (callers tie 'a to the entry borrow).
    unsafe { HeapStr::slice_at(p) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_byte_key_and_value_take_38_bytes() {
        let e = KeyEntry::new(b"key:000000123456", NewValue::Str(b"xxxxxxxxxxxxxxxx"), None, 7);
        assert_eq!(e.shape().size(), 38);
        assert_eq!(e.key(), b"key:000000123456");
        assert_eq!(e.value(), StrRef::Raw(b"xxxxxxxxxxxxxxxx"));
        assert_eq!(e.lru(), 7);
        assert_eq!(e.expire_at(), None);
        let t = KeyEntry::new(b"key:000000123456", NewValue::Str(b"xxxxxxxxxxxxxxxx"), Some(1), 7);
        assert_eq!(t.shape().size(), 48);
    }

    #[test]
    fn every_encoding_round_trips() {
        let long_key = vec![b'k'; 300];
        let long_val = vec![b'\0'; 1000];
        for key in [&b""[..], b"a", &long_key] {
            for exp in [None, Some(5), Some(1i64 << 50), Some(i64::MAX)] {
                let e = KeyEntry::new(key, NewValue::Int(-42), exp, 0xABCDEF);
                assert_eq!(
                    (e.key(), e.value(), e.expire_at(), e.lru()),
                    (key, StrRef::Int(-42), exp, 0xABCDEF)
                );
                assert_eq!(e.encoding(), "int");
                let mut e = KeyEntry::new(key, NewValue::Str(&long_val), exp, 1);
                assert_eq!(
                    (e.key(), e.value(), e.expire_at()),
                    (key, StrRef::Raw(&long_val[..]), exp)
                );
                assert_eq!(e.encoding(), "raw");
                if exp.is_some() {
                    e.set_expire_slot(99);
                    assert_eq!(e.expire_slot(), 99);
                    assert_eq!(e.expire_at(), exp);
                    assert!(e.expire_fits(10));
                    e.write_expire(10);
                    assert_eq!(e.expire_at(), Some(10));
                    assert_eq!(e.key(), key);
                }
                let e = KeyEntry::new(key, NewValue::Str(b"hi\r\n"), exp, 1);
                assert_eq!(e.value(), StrRef::Raw(b"hi\r\n"));
                let embeds = key.len() < 100;
                assert_eq!(e.encoding(), if embeds { "embstr" } else { "raw" });
            }
        }
    }

    #[test]
    fn embstr_is_reported_by_valkeys_budget_for_key_value_and_ttl() {
        let v = |n: usize| vec![b'v'; n];
        let enc = |k: &[u8], n: usize, at: Option<i64>| {
            KeyEntry::new(k, NewValue::Str(&v(n)), at, 0).encoding()
        };
        assert_eq!(enc(b"k", 112, None), "embstr");
        assert_eq!(enc(b"k", 113, None), "raw");
        assert_eq!(enc(b"k", 104, Some(5)), "embstr");
        assert_eq!(enc(b"k", 105, Some(5)), "raw");
        assert_eq!(enc(&[b'k'; 31], 82, None), "embstr");
        assert_eq!(enc(&[b'k'; 32], 79, None), "embstr");
        assert_eq!(enc(&[b'k'; 32], 80, None), "raw");
        // A TTL added later keeps embstr; a longer key (RENAME) makes it raw for good.
        let mut e = KeyEntry::new(b"k", NewValue::Str(&v(110)), None, 0);
        let mut e = e.rebuilt(b"k", Some(5));
        assert_eq!(e.encoding(), "embstr");
        let mut e = e.rebuilt(&[b'k'; 21], None);
        assert_eq!(e.encoding(), "raw");
        assert_eq!(e.rebuilt(b"k", None).encoding(), "raw");
    }

    #[test]
    fn rebuilding_moves_an_out_of_line_string() {
        let big = vec![b'\r'; 100_000];
        let mut e = KeyEntry::new(b"k", NewValue::Str(&big), None, 5);
        e.set_raw();
        let at = e.value_addr();
        let before = crate::memory::thread_allocated_gross();
        let n = e.rebuilt(b"other", Some(77));
        assert!(crate::memory::thread_allocated_gross() - before < 1024, "the value was copied");
        assert_eq!(
            (n.key(), n.value(), n.expire_at(), n.lru()),
            (&b"other"[..], StrRef::Raw(&big[..]), Some(77), 5)
        );
        assert_eq!((n.value_addr(), n.encoding()), (at, "raw"));
        assert_eq!(e.value(), StrRef::Int(0), "the old entry gave its value up");
    }

    #[test]
    fn lru_and_raw_flag_do_not_disturb_the_rest() {
        let mut e = KeyEntry::new(b"k", NewValue::Str(b"v"), Some(1234), 0);
        e.set_lru(0xFFFFFF);
        e.set_raw();
        assert_eq!(e.lru(), 0xFFFFFF);
        assert_eq!(e.encoding(), "raw");
        assert_eq!(e.expire_at(), Some(1234));
        assert_eq!(e.key(), b"k");
        assert_eq!(e.value(), StrRef::Raw(b"v"));
    }

    /// A byte patch gives the same bytes in every encoding it can meet, grows a short value
    /// past the inline limit with greedy room, and is made in place where the layout allows.
    #[test]
    fn patches_write_scattered_bytes_in_every_encoding() {
        let apply = |e: &mut KeyEntry, len: usize, bytes: &[(usize, u8)]| -> Vec<u8> {
            let edit = StrEdit::Patch { len, bytes: bytes.to_vec() };
            match e.edit_str(edit) {
                Ok(n) => {
                    assert_eq!(e.encoding(), "raw");
                    assert_eq!(e.value().len(), n);
                    e.value().to_vec()
                }
                Err(Rebuild { value: RebuiltValue::Str(v), raw: true }) => v.as_ref().to_vec(),
                Err(Rebuild { value: RebuiltValue::Heap(h), raw: true }) => {
                    assert!(h.capacity() >= 2 * h.len(), "grown without spare room");
                    h.as_slice().to_vec()
                }
                Err(other) => panic!("not a raw rebuild: {other:?}"),
            }
        };
        let model = |head: &[u8], len: usize, bytes: &[(usize, u8)]| {
            let mut v = head.to_vec();
            if v.len() < len {
                v.resize(len, 0);
            }
            for &(o, b) in bytes {
                v[o] = b;
            }
            v
        };
        let big = vec![7u8; 1000];
        let starts: [(&str, NewValue<'_>, &[u8]); 3] = [
            ("int", NewValue::Int(123), b"123"),
            ("inline", NewValue::Str(b"abcdef"), b"abcdef"),
            ("heap", NewValue::Str(&big), &big),
        ];
        for (what, value, head) in starts {
            let cases: [(usize, &[(usize, u8)]); 4] = [
                (2, &[(0, b'x'), (1, b'y')]),
                (3, &[(2, 0xff), (0, 0), (2, 1)]),
                (200, &[(199, 9), (5, 5)]),
                (5000, &[(4999, 1), (300, 2), (0, 3)]),
            ];
            for (len, bytes) in cases {
                let mut e = KeyEntry::new(b"k", NewValue::from(&value_of(&value)), None, 0);
                let got = apply(&mut e, len, bytes);
                assert_eq!(got, model(head, len, bytes), "{what}: patch to {len}");
            }
        }
        // An inline value patched inside its length is written where it lies.
        let mut e = KeyEntry::new(b"k", NewValue::Str(b"hello"), None, 0);
        assert_eq!(e.edit_str(StrEdit::Patch { len: 5, bytes: vec![(4, b'!')] }).ok(), Some(5));
        assert_eq!(e.value(), StrRef::Raw(b"hell!"));
        // An out-of-line value grows once, greedily, and later patches stay inside it.
        let mut e = KeyEntry::new(b"k", NewValue::Str(&big), None, 0);
        assert_eq!(e.edit_str(StrEdit::Patch { len: 1001, bytes: vec![] }).ok(), Some(1001));
        let at = e.value_addr();
        for len in 1002..1900 {
            assert_eq!(
                e.edit_str(StrEdit::Patch { len, bytes: vec![(len - 1, 1)] }).ok(),
                Some(len)
            );
        }
        assert_eq!(e.value_addr(), at, "a patch inside the greedy room reallocated");
    }

    fn value_of(v: &NewValue<'_>) -> StrValue {
        match v {
            NewValue::Int(n) => StrValue::Int(*n),
            NewValue::Str(b) => StrValue::Raw((*b).into()),
            _ => unreachable!(),
        }
    }
}
