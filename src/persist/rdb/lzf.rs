//! LZF, the compression RDB uses for strings longer than 20 bytes (`rdbcompression yes`).
//!
//! The stream is a sequence of chunks, each starting with a control byte `c`:
//! - `c < 32`: a literal run; the next `c + 1` bytes are copied as they are.
//! - otherwise a back reference: length `c >> 5` (7 means "7 + the next byte"), then the
//!   low 5 bits of `c` and the next byte form a 13-bit distance `d`; `length + 2` bytes are
//!   copied from `d + 1` bytes back in the output (the ranges may overlap, a byte at a time).
//!
//! The compressor is greedy: a 4096-entry table remembers the last position of each 3-byte
//! prefix hash, and a match is taken when the bytes there agree and lie within 8 KiB. The
//! table is the thread's, reused from call to call: each entry carries the number of the
//! call that wrote it, so a new call starts from an empty table without clearing 32 KiB (a
//! save compresses millions of short strings).

/// Longest literal run in one chunk.
const LITERAL_MAX: usize = 32;
/// Farthest back a reference reaches (13 bits).
const DISTANCE_MAX: usize = 1 << 13;
/// Longest match one reference copies: 7 + 255 in the length fields, plus 2.
const MATCH_MAX: usize = 7 + 255 + 2;
const HASH_BITS: u32 = 12;

fn hash3(b: &[u8]) -> usize {
    let v = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
    (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
}

/// Compresses `input`; None when the result would not be shorter than `limit` bytes (RDB
/// passes `len - 4` and stores the string uncompressed otherwise).
pub fn compress(input: &[u8], limit: usize) -> Option<Vec<u8>> {
    TABLE.with(|t| compress_with(&mut t.borrow_mut(), input, limit))
}

/// The thread's position table: per entry, the call number (high 32 bits) and the position.
struct PosTable {
    entries: Vec<u64>,
    call: u32,
}

thread_local! {
    static TABLE: std::cell::RefCell<PosTable> =
        std::cell::RefCell::new(PosTable { entries: vec![0; 1 << HASH_BITS], call: 0 });
}

impl PosTable {
    /// Starts a call: entries of earlier calls read as empty.
    fn begin(&mut self) {
        self.call = self.call.wrapping_add(1);
        if self.call == 0 {
            // Numbers wrapped: clear once, so no old entry can pass for a current one.
            self.entries.fill(0);
            self.call = 1;
        }
    }

    /// The position stored for hash `h` in this call, and `pos` stored in its place.
    fn swap(&mut self, h: usize, pos: usize) -> Option<usize> {
        let tag = u64::from(self.call) << 32;
        let old = std::mem::replace(&mut self.entries[h], tag | pos as u64);
        (old >> 32 == u64::from(self.call)).then_some((old & 0xffff_ffff) as usize)
    }
}

fn compress_with(table: &mut PosTable, input: &[u8], limit: usize) -> Option<Vec<u8>> {
    // Positions are kept in 32 bits; RDB strings stay far below (proto-max-bulk-len).
    if input.len() > u32::MAX as usize {
        return None;
    }
    table.begin();
    let mut out = Vec::with_capacity(limit.min(input.len()));
    let mut lit_start = 0;
    let mut i = 0;
    let flush_literals = |out: &mut Vec<u8>, from: usize, to: usize| {
        for chunk in input[from..to].chunks(LITERAL_MAX) {
            out.push((chunk.len() - 1) as u8);
            out.extend_from_slice(chunk);
        }
    };
    while i + 2 < input.len() {
        let h = hash3(&input[i..]);
        let candidate = match table.swap(h, i) {
            Some(c) if i - c <= DISTANCE_MAX && input[c..c + 3] == input[i..i + 3] => c,
            _ => {
                i += 1;
                continue;
            }
        };
        let max = MATCH_MAX.min(input.len() - i);
        let len = 3 + common_prefix(&input[candidate + 3..candidate + max], &input[i + 3..i + max]);
        flush_literals(&mut out, lit_start, i);
        let distance = i - candidate - 1;
        let stored = len - 2;
        if stored < 7 {
            out.push(((stored as u8) << 5) | (distance >> 8) as u8);
        } else {
            out.push((7 << 5) | (distance >> 8) as u8);
            out.push((stored - 7) as u8);
        }
        out.push(distance as u8);
        i += len;
        lit_start = i;
        if out.len() >= limit {
            return None;
        }
    }
    flush_literals(&mut out, lit_start, input.len());
    (out.len() < limit).then_some(out)
}

/// How many leading bytes `a` and `b` (of equal length) share: eight at a time, so a long
/// match (a run of one byte, the common case of a big compressible value) costs a word
/// compare per 8 bytes rather than a bounds-checked compare per byte.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let word = |s: &[u8], k: usize| u64::from_le_bytes(s[k..k + 8].try_into().expect("8 bytes"));
    let mut k = 0;
    while k + 8 <= n {
        let diff = word(a, k) ^ word(b, k);
        if diff != 0 {
            return k + (diff.trailing_zeros() / 8) as usize;
        }
        k += 8;
    }
    while k < n && a[k] == b[k] {
        k += 1;
    }
    k
}

/// Decompresses `input`, which must expand to exactly `len` bytes.
pub fn decompress(input: &[u8], len: usize) -> Result<Vec<u8>, &'static str> {
    let mut out: Vec<u8> = Vec::with_capacity(len);
    let mut i = 0;
    while i < input.len() {
        let ctrl = input[i] as usize;
        i += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            let bytes = input.get(i..i + run).ok_or("LZF literal past the input")?;
            if out.len() + run > len {
                return Err("LZF output longer than declared");
            }
            out.extend_from_slice(bytes);
            i += run;
            continue;
        }
        let mut copy = ctrl >> 5;
        if copy == 7 {
            copy += *input.get(i).ok_or("LZF length past the input")? as usize;
            i += 1;
        }
        copy += 2;
        let low = *input.get(i).ok_or("LZF distance past the input")? as usize;
        i += 1;
        let distance = ((ctrl & 0x1f) << 8 | low) + 1;
        if distance > out.len() {
            return Err("LZF reference before the start");
        }
        if out.len() + copy > len {
            return Err("LZF output longer than declared");
        }
        let from = out.len() - distance;
        for k in 0..copy {
            let b = out[from + k];
            out.push(b);
        }
    }
    if out.len() != len {
        return Err("LZF output shorter than declared");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    fn round_trip(data: &[u8]) {
        if let Some(c) = compress(data, data.len() + 64) {
            assert_eq!(decompress(&c, data.len()).unwrap(), data);
        }
    }

    #[test]
    fn common_prefix_counts_whole_words_and_tails() {
        let a: Vec<u8> = (0..40).collect();
        for cut in 0..40 {
            let mut b = a.clone();
            b[cut] ^= 0x80;
            assert_eq!(common_prefix(&a, &b), cut);
        }
        assert_eq!(common_prefix(&a, &a), 40);
        assert_eq!(common_prefix(&a[..13], &a[..13]), 13);
        assert_eq!(common_prefix(b"", b""), 0);
    }

    #[test]
    fn round_trips() {
        round_trip(b"");
        round_trip(b"a");
        round_trip(b"abcabcabcabcabcabcabcabcabcabcabcabcabc");
        round_trip(&vec![b'x'; 10_000]);
        let mut rng = Rng::new(7);
        let noisy: Vec<u8> = (0..50_000).map(|_| b"abcd"[rng.below(4)]).collect();
        round_trip(&noisy);
    }

    #[test]
    fn repetitive_input_shrinks_and_random_input_is_refused() {
        let data = vec![b'x'; 1000];
        let c = compress(&data, data.len() - 4).expect("compressible");
        assert!(c.len() < 20, "{}", c.len());
        let mut rng = Rng::new(1);
        let random: Vec<u8> = (0..1000).map(|_| (rng.next_u64() >> 56) as u8).collect();
        assert!(compress(&random, random.len() - 4).is_none());
    }

    #[test]
    fn the_reused_table_carries_nothing_from_one_call_to_the_next() {
        let inputs: Vec<Vec<u8>> = (0..50u8)
            .map(|k| {
                (0..400u32).map(|i| b"abcdefgh"[((i * u32::from(k + 1)) % 8) as usize]).collect()
            })
            .collect();
        let first: Vec<_> = inputs.iter().map(|d| compress(d, d.len())).collect();
        // The same inputs again, in reverse order: the same outputs, and each decodes.
        for (d, want) in inputs.iter().zip(&first).rev() {
            let got = compress(d, d.len());
            assert_eq!(&got, want);
            if let Some(c) = got {
                assert_eq!(decompress(&c, d.len()).unwrap(), *d);
            }
        }
        // A fresh table gives the same result as the reused one.
        let mut fresh = PosTable { entries: vec![0; 1 << HASH_BITS], call: 0 };
        for (d, want) in inputs.iter().zip(&first) {
            assert_eq!(&compress_with(&mut fresh, d, d.len()), want);
        }
    }

    #[test]
    fn known_stream_decodes() {
        // A literal "ab" then a reference of length 4 at distance 2: "ababab".
        let stream = [1, b'a', b'b', (2 << 5), 1];
        assert_eq!(decompress(&stream, 6).unwrap(), b"ababab");
    }

    #[test]
    fn decodes_what_redis_server_wrote() {
        // The LZF part of redis-server 7.0's DUMP of a 47-byte string.
        let mut stream = vec![0x0c];
        stream.extend_from_slice(b"hello world h");
        stream.extend_from_slice(&[0xe0, 0x17, 0x0b, 0x01, b'l', b'd']);
        let text = b"hello world hello world hello world hello world";
        assert_eq!(decompress(&stream, text.len()).unwrap(), text);
    }

    #[test]
    fn garbage_is_refused_without_panicking() {
        let mut rng = Rng::new(3);
        for n in 0..2000 {
            let bytes: Vec<u8> = (0..n % 40).map(|_| (rng.next_u64() >> 56) as u8).collect();
            let _ = decompress(&bytes, n % 97);
        }
    }
}
