//! DUMP payloads: a value in RDB form, then the RDB version (2 bytes, little endian), then
//! the CRC-64 of everything before it (8 bytes, little endian). RESTORE checks the footer
//! before it reads anything, then reads exactly one value and nothing more.

use super::crc64;
use super::encoding::{RdbError, RdbReader, RdbWriter};
use super::value::{read_value, write_value, LoadLimits};
use crate::keyspace::value::{Value, ValueRef};

/// The RDB version ferrokey writes: 10, which redis-server 7.0 and every Valkey load.
pub const RDB_VERSION: u16 = 10;
/// The newest RDB version of the `REDIS` line that ferrokey reads (Redis 7.2, Valkey 7.2-8.1).
pub const RDB_VERSION_MAX: u16 = 11;
/// The RDB version Valkey 9 writes, with the `VALKEY` signature; ferrokey reads it.
pub const RDB_VERSION_VALKEY: u16 = 80;
/// Versions of other projects' RDB lines (Redis 7.4 and later): their types and opcodes may
/// mean something else, so they are read only under `rdb-version-check relaxed`, as Valkey.
pub const RDB_FOREIGN_VERSIONS: std::ops::RangeInclusive<u16> = 12..=79;

/// Whether a DUMP payload or RDB file of `version` is read: the versions up to Valkey 9's,
/// except the foreign range unless `relaxed`; later versions only when `relaxed` (read as
/// far as their types and opcodes are known).
pub fn version_readable(version: u16, relaxed: bool) -> bool {
    match version {
        0 => false,
        v if RDB_FOREIGN_VERSIONS.contains(&v) => relaxed,
        v => v <= RDB_VERSION_VALKEY || relaxed,
    }
}

/// The DUMP payload of `v`.
/// A hash with volatile fields is written as Valkey 9's `HASH_2`, which only a version-80
/// reader knows: its payload says version 80, as Valkey 9.1's do.
pub fn payload(v: ValueRef<'_>, compress: bool) -> Vec<u8> {
    let mut w = RdbWriter::new(Vec::new(), compress);
    write_value(&mut w, v).expect("writing to memory cannot fail");
    let volatile_hash = matches!(
        v,
        ValueRef::Agg(crate::types::agg::AggRef::Hash(h)) if h.has_volatile()
    );
    seal_as(w, if volatile_hash { RDB_VERSION_VALKEY } else { RDB_VERSION })
}

/// A payload's bytes with their footer: the RDB version, then the CRC-64 of everything
/// (FUNCTION DUMP's payloads have the same).
pub fn seal(w: RdbWriter<Vec<u8>>) -> Vec<u8> {
    seal_as(w, RDB_VERSION)
}

/// [`seal`] with the given RDB version.
fn seal_as(mut w: RdbWriter<Vec<u8>>, version: u16) -> Vec<u8> {
    w.raw(&version.to_le_bytes()).expect("writing to memory cannot fail");
    let crc = w.crc();
    let mut out = w.into_inner();
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The bytes of a payload before its footer, once the footer is checked: a readable RDB
/// version and a matching CRC-64.
pub fn unseal(bytes: &[u8], relaxed: bool) -> Result<&[u8], PayloadError> {
    if bytes.len() < 10 {
        return Err(PayloadError::VersionOrChecksum);
    }
    let (body, crc) = bytes.split_at(bytes.len() - 8);
    let version = u16::from_le_bytes([body[body.len() - 2], body[body.len() - 1]]);
    let crc_ok =
        || super::skip_checksum_validation() || crc64::update(0, body).to_le_bytes() == crc;
    if !version_readable(version, relaxed) || !crc_ok() {
        return Err(PayloadError::VersionOrChecksum);
    }
    Ok(&body[..body.len() - 2])
}

/// Why a payload was refused (RESTORE's two error replies).
#[derive(Debug, PartialEq, Eq)]
pub enum PayloadError {
    /// Too short, a newer RDB version, or a checksum that does not match.
    VersionOrChecksum,
    /// The footer is right but the value does not parse (or has bytes left over).
    BadFormat,
}

/// The value of a DUMP payload, built under `lim`. `max_len` bounds every length read.
pub fn parse(bytes: &[u8], lim: &LoadLimits, max_len: u64) -> Result<Value, PayloadError> {
    let value_bytes = unseal(bytes, lim.relaxed_version_check)?;
    let mut r = RdbReader::new(value_bytes, max_len);
    let value = (|| -> Result<Value, RdbError> {
        let ty = r.byte()?;
        read_value(&mut r, ty, lim)
    })()
    .map_err(|_| PayloadError::BadFormat)?;
    if r.position() != value_bytes.len() as u64 {
        return Err(PayloadError::BadFormat);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::types::string::StrValue;

    fn lim() -> LoadLimits {
        LoadLimits::from_config(&Config::default())
    }

    #[test]
    fn a_string_payload_matches_redis_server() {
        // redis-server 7.0: DUMP of "12".
        let p = payload(ValueRef::Str(crate::types::string::StrRef::Int(12)), true);
        assert_eq!(
            p,
            [0x00, 0xc0, 0x0c, 0x0a, 0x00, 0x3c, 0x2a, 0xf8, 0x51, 0x5c, 0x04, 0xbc, 0xd5]
        );
        let v = parse(&p, &lim(), 1 << 20).unwrap();
        assert!(matches!(v, Value::Str(StrValue::Int(12))));
    }

    #[test]
    fn versions_read_as_valkey_9_reads_them() {
        for (v, strict, relaxed) in
            [(0, false, false), (1, true, true), (11, true, true), (12, false, true)]
                .into_iter()
                .chain([(79, false, true), (80, true, true), (81, false, true)])
        {
            assert_eq!(version_readable(v, false), strict, "{v} strict");
            assert_eq!(version_readable(v, true), relaxed, "{v} relaxed");
        }
        use crate::persist::rdb::file::{check_header, starts_rdb};
        let h = |s: &str| -> [u8; 9] { s.as_bytes().try_into().expect("9 bytes") };
        assert_eq!(check_header(&h("REDIS0011"), false).ok(), Some(11));
        assert_eq!(check_header(&h("VALKEY080"), false).ok(), Some(80));
        assert_eq!(check_header(&h("REDIS0012"), true).ok(), Some(12));
        for (bad, relaxed) in [
            ("REDIS0012", false),
            ("VALKEY081", false),
            ("VALKEY011", true),
            ("REDIS0080", true),
            ("VALKEY-80", true),
            ("REDIX0010", true),
        ] {
            assert!(check_header(&h(bad), relaxed).is_err(), "{bad}");
        }
        assert!(starts_rdb(b"VALKEY") && starts_rdb(b"REDIS0") && !starts_rdb(b"VALKE"));
    }

    #[test]
    fn damaged_payloads_are_refused() {
        let p = payload(ValueRef::Str(crate::types::string::StrRef::Raw(b"hello")), true);
        for cut in 0..p.len() {
            assert!(parse(&p[..cut], &lim(), 1 << 20).is_err());
        }
        for i in 0..p.len() {
            let mut bad = p.clone();
            bad[i] ^= 0x20;
            assert_eq!(parse(&bad, &lim(), 1 << 20).err(), Some(PayloadError::VersionOrChecksum));
        }
    }
}
