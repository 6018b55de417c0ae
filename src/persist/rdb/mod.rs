//! The RDB format's primitives (see Valkey's RDB file format documentation): the checksum
//! (`crc64`), string compression (`lzf`) and the length/string encodings (`encoding`).

pub mod crc64;
pub mod dump;
pub mod encoding;
pub mod file;
pub mod legacy;
pub mod lzf;
pub mod value;
