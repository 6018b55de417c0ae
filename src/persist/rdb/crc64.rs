//! CRC-64 as RDB files and DUMP payloads use it: the "Jones" polynomial (0xad93d23594c935a9),
//! bits reflected on input and output, starting from 0, no final xor. The check value of
//! "123456789" is 0xe9c6d914c4b8d9ca.
//!
//! Table-driven with the reflected polynomial, eight bytes per step (slicing by 8); the
//! tables are built at compile time.

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

/// Slicing by 8: `TABLES[k][b]` is the CRC of byte `b` followed by `k` zero bytes, so eight
/// input bytes fold in with eight independent lookups instead of a chain of eight.
const fn build_tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    t[0] = build_table();
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

static TABLES: [[u64; 256]; 8] = build_tables();

/// Continues the checksum `crc` over `bytes` (start with 0).
pub fn update(mut crc: u64, bytes: &[u8]) -> u64 {
    let t = &TABLES;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let x = crc ^ u64::from_le_bytes(c.try_into().expect("8 bytes"));
        crc = t[7][(x & 0xff) as usize]
            ^ t[6][((x >> 8) & 0xff) as usize]
            ^ t[5][((x >> 16) & 0xff) as usize]
            ^ t[4][((x >> 24) & 0xff) as usize]
            ^ t[3][((x >> 32) & 0xff) as usize]
            ^ t[2][((x >> 40) & 0xff) as usize]
            ^ t[1][((x >> 48) & 0xff) as usize]
            ^ t[0][(x >> 56) as usize];
    }
    for &b in chunks.remainder() {
        crc = t[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time reference the sliced form must agree with.
    fn bytewise(mut crc: u64, bytes: &[u8]) -> u64 {
        for &b in bytes {
            crc = TABLES[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
        }
        crc
    }

    #[test]
    fn sliced_matches_bytewise_at_every_length_and_split() {
        let data: Vec<u8> = (0..300u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for len in 0..data.len() {
            assert_eq!(update(0, &data[..len]), bytewise(0, &data[..len]), "length {len}");
        }
        for split in 0..40 {
            let whole = update(0, &data);
            assert_eq!(update(update(0, &data[..split]), &data[split..]), whole);
        }
    }

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
