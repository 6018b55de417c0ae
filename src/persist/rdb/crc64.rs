//! CRC-64 as RDB files and DUMP payloads use it: the "Jones" polynomial (0xad93d23594c935a9),
//! bits reflected on input and output, starting from 0, no final xor. The check value of
//! "123456789" is 0xe9c6d914c4b8d9ca.
//!
//! Table-driven, one byte at a time with the reflected polynomial; the table is built at
//! compile time.

/// The polynomial with its bits reversed (for the reflected, LSB-first algorithm).
const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;

const fn build_table() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 != 0 { POLY_REFLECTED ^ (c >> 1) } else { c >> 1 };
            bit += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

static TABLE: [u64; 256] = build_table();

/// Continues the checksum `crc` over `bytes` (start with 0).
pub fn update(mut crc: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        crc = TABLE[((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value() {
        assert_eq!(update(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(update(0, b""), 0);
    }

    #[test]
    fn matches_a_redis_server_dump_payload() {
        // redis-server 7.0: DUMP of the string "12" is 00 c0 0c 0a 00 + CRC-64 (LE).
        let body = [0x00, 0xc0, 0x0c, 0x0a, 0x00];
        assert_eq!(update(0, &body), 0xd5bc_045c_51f8_2a3c);
    }

    #[test]
    fn updates_compose() {
        let data = b"Lorem ipsum dolor sit amet, consectetur adipiscing elit";
        for split in 0..data.len() {
            let (a, b) = data.split_at(split);
            assert_eq!(update(update(0, a), b), update(0, data));
        }
    }
}
