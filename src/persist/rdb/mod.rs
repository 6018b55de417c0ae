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
