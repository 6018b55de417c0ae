//! The RDB format's primitives (see Valkey's RDB file format documentation): the checksum
//! (`crc64`), string compression (`lzf`) and the length/string encodings (`encoding`); values
//! (`value`, with stream payloads and their consumer groups in `stream` and the encodings of
//! old versions in `legacy`), whole files (`file`) and DUMP payloads (`dump`).

pub mod crc64;
pub mod dump;
pub mod encoding;
pub mod file;
pub mod legacy;
pub mod lzf;
mod stream;
pub mod value;

use std::sync::atomic::{AtomicBool, Ordering};

/// `DEBUG SET-SKIP-CHECKSUM-VALIDATION 1`: files and DUMP payloads load without their CRC-64
/// being checked (a testing knob, process-wide as in Valkey; off at start).
static SKIP_CHECKSUM_VALIDATION: AtomicBool = AtomicBool::new(false);

pub fn set_skip_checksum_validation(skip: bool) {
    SKIP_CHECKSUM_VALIDATION.store(skip, Ordering::Relaxed);
}

/// Whether checksums are being skipped (see [`set_skip_checksum_validation`]).
pub fn skip_checksum_validation() -> bool {
    SKIP_CHECKSUM_VALIDATION.load(Ordering::Relaxed)
}
