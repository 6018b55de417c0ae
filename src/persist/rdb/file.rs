//! Whole RDB files: the header, aux fields, database selectors with resize hints, keys with
//! their expire times and LRU/LFU metadata, and the EOF marker with the CRC-64.
//!
//! ```text
//!  "REDIS0010"
//!  FA aux-key aux-value ...                 redis-ver, redis-bits, ctime, used-mem, aof-base
//!  FE db-number  FB keys expires            per non-empty database
//!    [FC expire-ms:8 LE] [F8 idle-secs | F9 freq:1] type key value
//!  FF crc64:8 LE
//! ```
//!
//! The save walks each table with the prefetching iterator: bucket lines three heads ahead,
//! entries two ahead, and each entry's out-of-line value one head before it is written.
//!
//! The loader reads versions 1 to 11 and Valkey 9's 80 (`VALKEY080`; other projects' 12 to
//! 79 and later ones under `rdb-version-check relaxed`) with every value type Valkey reads
//! but modules, streams and hashes with volatile fields (the old encodings are in
//! `legacy`), skips Valkey 9's cluster slot-size hints, skips keys with no element, skips aux
//! fields it does not know, refuses module data and duplicate keys, drops keys already
//! expired (as a primary does), and checks the CRC-64 unless the file stored 0 (checksums
//! disabled when it was written).

use std::io::{self, Read, Write};

use super::dump::{
    version_readable, RDB_FOREIGN_VERSIONS, RDB_VERSION, RDB_VERSION_MAX, RDB_VERSION_VALKEY,
};
use super::encoding::{corrupt, RdbError, RdbReader, RdbWriter};
use super::value::{read_value_or_empty, write_keyed_value, LoadLimits};
use crate::keyspace::clock::{idle_ms, lfu_clock_with_freq, lfu_decayed, lru_clock_idle_for};
use crate::keyspace::db::{is_expired, AccessClock, Db, Obj, ObjView};
use crate::keyspace::entry::KeyEntry;

/// Valkey 9's cluster-mode opcodes: a slot's key counts (a sizing hint), and a slot import
/// under way.
const OP_SLOT_IMPORT: u8 = 0xF3;
const OP_SLOT_INFO: u8 = 0xF4;
/// A function library's code (`RDB_OPCODE_FUNCTION2`; also in FUNCTION DUMP payloads).
pub const OP_FUNCTION2: u8 = 0xF5;
const OP_MODULE_AUX: u8 = 0xF7;
const OP_IDLE: u8 = 0xF8;
const OP_FREQ: u8 = 0xF9;
const OP_AUX: u8 = 0xFA;
const OP_RESIZEDB: u8 = 0xFB;
const OP_EXPIRETIME_MS: u8 = 0xFC;
const OP_EXPIRETIME: u8 = 0xFD;
const OP_SELECTDB: u8 = 0xFE;
const OP_EOF: u8 = 0xFF;

/// The largest resize hint a load pre-sizes a table for (a corrupt hint must not allocate
/// gigabytes before the first key is read).
const RESIZE_HINT_MAX: u64 = 1 << 24;

/// Which access metadata a save writes per key: as Valkey, the LRU idle time only under an
/// LRU maxmemory-policy and the LFU counter only under an LFU one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessMeta {
    None,
    LruIdle,
    LfuFreq,
}

impl AccessMeta {
    pub fn for_policy(policy: crate::config::MaxmemoryPolicy) -> AccessMeta {
        use crate::config::MaxmemoryPolicy::*;
        match policy {
            AllkeysLru | VolatileLru => AccessMeta::LruIdle,
            AllkeysLfu | VolatileLfu => AccessMeta::LfuFreq,
            _ => AccessMeta::None,
        }
    }
}

/// What a save needs to know besides the data.
pub struct SaveInfo {
    pub now_ms: i64,
    pub used_memory: usize,
    pub meta: AccessMeta,
    /// Walk the tables with the prefetching iterator (always, except to measure it).
    pub prefetch: bool,
    /// `rdbchecksum`: end the file with its CRC-64; without it the last 8 bytes are zero, which
    /// every loader takes as "no check", as Valkey writes them.
    pub checksum: bool,
    /// The code of each function library, written as function records before the data.
    pub functions: Vec<bytes::Bytes>,
    /// `rdb-key-save-delay`: a pause after each key (a testing knob).
    pub key_delay: i32,
}

impl SaveInfo {
    /// What a save at `now_ms` writes under `config`: the access metadata of its
    /// maxmemory-policy, its `rdbchecksum`, the prefetching walk.
    pub fn for_config(config: &crate::config::Config, now_ms: i64) -> SaveInfo {
        SaveInfo {
            now_ms,
            used_memory: crate::memory::used_memory(),
            meta: AccessMeta::for_policy(config.maxmemory_policy),
            prefetch: true,
            checksum: config.rdbchecksum,
            functions: Vec::new(),
            key_delay: config.testing.rdb_key_save_delay,
        }
    }
}

/// Writes every database as one RDB file.
pub fn write_rdb<W: Write>(w: &mut RdbWriter<W>, dbs: &[Db], info: &SaveInfo) -> io::Result<()> {
    // Hashes with volatile fields are written as Valkey 9's HASH_2, which only a Valkey 9
    // reader knows: such a file says so in its signature, as Valkey 9.1's files do. (The
    // field-expiry queues may hold stale entries, so a file may say VALKEY080 without
    // needing to; Valkey 9 reads it all the same.)
    if dbs.iter().any(|db| db.field_queue_len() > 0) {
        w.raw(format!("VALKEY{RDB_VERSION_VALKEY:03}").as_bytes())?;
    } else {
        w.raw(format!("REDIS{RDB_VERSION:04}").as_bytes())?;
    }
    let aux = |w: &mut RdbWriter<W>, k: &str, v: &str| -> io::Result<()> {
        w.byte(OP_AUX)?;
        w.string(k.as_bytes())?;
        w.string(v.as_bytes())
    };
    // Valkey writes redis-ver 7.2.4 for the tools that look at it; so does ferrokey.
    aux(w, "redis-ver", "7.2.4")?;
    aux(w, "redis-bits", "64")?;
    aux(w, "ctime", &(info.now_ms / 1000).to_string())?;
    aux(w, "used-mem", &info.used_memory.to_string())?;
    aux(w, "aof-base", "0")?;
    for code in &info.functions {
        w.byte(OP_FUNCTION2)?;
        w.string(code)?;
    }
    for (n, db) in dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        w.byte(OP_SELECTDB)?;
        w.length(n as u64)?;
        w.byte(OP_RESIZEDB)?;
        w.length(db.len() as u64)?;
        w.length(db.expires_len() as u64)?;
        let access = db.access_clock();
        let mut result = Ok(());
        let mut each = |key: &[u8], e: &KeyEntry| {
            if result.is_err() || !Db::is_live(e, info.now_ms) {
                return;
            }
            result = write_key(w, key, e, access, info);
            crate::util::clock::debug_delay(info.key_delay);
        };
        if info.prefetch {
            db.for_each_with_values(&mut each);
        } else {
            db.for_each_unprefetched(&mut each);
        }
        result?;
    }
    w.byte(OP_EOF)?;
    let crc = if info.checksum { w.crc() } else { 0 };
    w.raw(&crc.to_le_bytes())
}

fn write_key<W: Write>(
    w: &mut RdbWriter<W>,
    key: &[u8],
    e: &impl ObjView,
    access: AccessClock,
    info: &SaveInfo,
) -> io::Result<()> {
    if let Some(at) = e.expire_at_ms() {
        w.byte(OP_EXPIRETIME_MS)?;
        w.raw(&at.to_le_bytes())?;
    }
    match (info.meta, access) {
        (AccessMeta::LruIdle, AccessClock::Lru) => {
            w.byte(OP_IDLE)?;
            w.length((idle_ms(e.lru(), info.now_ms) / 1000) as u64)?;
        }
        (AccessMeta::LfuFreq, AccessClock::Lfu { decay_time_mins, .. }) => {
            w.byte(OP_FREQ)?;
            w.byte(lfu_decayed(e.lru(), info.now_ms, decay_time_mins) as u8)?;
        }
        _ => {}
    }
    // The value's type byte comes before the key.
    write_keyed_value(w, Some(key), e.value_ref())
}

/// What a load found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LoadStats {
    pub version: u16,
    pub keys_loaded: u64,
    pub keys_expired: u64,
    /// Keys skipped for holding no element.
    pub keys_empty: u64,
    /// The code of each function library the file holds (`scripting::functions`).
    pub functions: Vec<Vec<u8>>,
}

/// The RDB version an RDB file's first 9 bytes announce, if this server reads it: `REDIS`
/// and 4 digits (versions up to 11, and other projects' 12 to 79 under `relaxed`), or Valkey
/// 9's `VALKEY` and 3 digits (80; later ones under `relaxed`).
pub fn check_header(header: &[u8; 9], relaxed: bool) -> Result<u16, RdbError> {
    let digits = if header.starts_with(b"REDIS") {
        &header[5..]
    } else if header.starts_with(b"VALKEY") {
        &header[6..]
    } else {
        return Err(corrupt("Wrong signature trying to load DB from file"));
    };
    let version = std::str::from_utf8(digits)
        .ok()
        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse::<u16>().ok())
        .ok_or_else(|| corrupt("Wrong signature trying to load DB from file"))?;
    // A `VALKEY` file is of Valkey's own line (80 on), a `REDIS` one of the shared line or
    // another project's.
    let line_ok = if header.starts_with(b"VALKEY") {
        version >= RDB_VERSION_VALKEY
    } else {
        version <= RDB_VERSION_MAX || RDB_FOREIGN_VERSIONS.contains(&version)
    };
    if !line_ok || !version_readable(version, relaxed) {
        return Err(corrupt(format!("Can't handle RDB format version {version}")));
    }
    Ok(version)
}

/// Whether an AOF file begins with an RDB (a `.base.rdb`, or an old AOF's preamble): its
/// first bytes, as many as there are up to 6.
pub fn starts_rdb(first: &[u8]) -> bool {
    first.starts_with(b"REDIS") || first.starts_with(b"VALKEY")
}

/// Loads an RDB file into `dbs` (which should be empty).
pub fn load_rdb<R: Read>(
    r: &mut RdbReader<R>,
    dbs: &mut [Db],
    lim: &LoadLimits,
    now_ms: i64,
) -> Result<LoadStats, RdbError> {
    let header: [u8; 9] = r.exact()?;
    let version = check_header(&header, lim.relaxed_version_check)?;
    let mut stats = LoadStats { version, ..LoadStats::default() };
    let mut db = 0usize;
    let mut expire_at: Option<i64> = None;
    let mut lru: Option<u32> = None;
    loop {
        let op = r.byte()?;
        match op {
            OP_EOF => break,
            OP_SELECTDB => {
                let n = r.length()?;
                if n >= dbs.len() as u64 {
                    return Err(corrupt(format!(
                        "FATAL: Data file was created with a Redis server configured to handle more than {} databases. Exiting",
                        dbs.len()
                    )));
                }
                db = n as usize;
            }
            OP_RESIZEDB => {
                // Size the table once (bounded: the hint is only a hint).
                let keys = r.length()?;
                r.length()?;
                dbs[db].reserve_empty(keys.min(RESIZE_HINT_MAX) as usize);
            }
            OP_AUX => {
                r.string()?;
                r.string()?;
            }
            OP_EXPIRETIME_MS => expire_at = Some(i64::from_le_bytes(r.exact()?)),
            OP_EXPIRETIME => {
                expire_at = Some(i64::from(i32::from_le_bytes(r.exact()?)) * 1000);
            }
            OP_IDLE => lru = Some(lru_clock_idle_for(r.length()?, now_ms)),
            OP_FREQ => lru = Some(lfu_clock_with_freq(r.byte()?, now_ms)),
            OP_SLOT_INFO => {
                // Slot id, its keys, its keys with an expire time: a hint, skipped.
                for _ in 0..3 {
                    r.length()?;
                }
            }
            OP_SLOT_IMPORT => {
                return Err(corrupt(
                    "Can't load a slot import of cluster mode (cluster mode is not supported)",
                ));
            }
            OP_FUNCTION2 => stats.functions.push(r.string()?),
            OP_MODULE_AUX => {
                return Err(corrupt(
                    "the RDB file holds module data, which ferrokey does not support",
                ));
            }
            ty => {
                let key = r.string()?;
                let value = read_value_or_empty(r, ty, lim)?;
                let at = expire_at.take();
                let clock = lru.take();
                // Old versions could save a key with no element; Valkey skips it.
                let Some(value) = value else {
                    if stats.keys_empty < 10 {
                        tracing::info!(
                            "rdbLoadObject skipping empty key: {}",
                            String::from_utf8_lossy(&key)
                        );
                    }
                    stats.keys_empty += 1;
                    continue;
                };
                if !lim.keep_expired && at.is_some_and(|t| is_expired(t, now_ms)) {
                    stats.keys_expired += 1;
                    continue;
                }
                let target = &mut dbs[db];
                let clock = clock.unwrap_or_else(|| {
                    crate::keyspace::clock::new_clock(target.access_clock(), now_ms)
                });
                let obj = Obj { value, expire_at_ms: at, lru: clock, raw: false };
                if !target.put_absent(&key, obj) {
                    return Err(corrupt(format!(
                        "Duplicate key '{}' found in RDB file",
                        String::from_utf8_lossy(&key)
                    )));
                }
                stats.keys_loaded += 1;
                crate::util::clock::debug_delay(lim.key_delay);
            }
        }
    }
    if version >= 5 {
        let expected = r.crc();
        let stored = u64::from_le_bytes(r.exact()?);
        // `rdbchecksum no` skips the check, as Valkey, and so does DEBUG
        // SET-SKIP-CHECKSUM-VALIDATION.
        let check_crc = lim.check_crc && !super::skip_checksum_validation();
        if check_crc && stored == 0 {
            tracing::info!("RDB file was saved with checksum disabled: no check performed.");
        } else if check_crc && stored != expected {
            tracing::warn!(
                "Wrong RDB checksum expected: ({expected:x}) but got ({stored:x}). Aborting now."
            );
            return Err(corrupt("Wrong RDB checksum. Aborting now."));
        }
    }
    Ok(stats)
}
