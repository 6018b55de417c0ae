//! PFSELFTEST: Valkey's self-test of the HLL code, run on this implementation. First, a
//! thousand rounds of random values written to every dense register and read back (a
//! register must keep its value and leave its neighbours alone). Then ten million distinct
//! elements added to a dense HLL and to one that starts sparse (and turns dense when it
//! outgrows `hll-sparse-max-bytes`), checking at 1, 10, 100, ... elements that the small
//! one is still sparse, that both count the same, and that the count is within six
//! standard errors (1.04 / sqrt(16384)) of the truth. The failures are Valkey's texts.

use super::add::add_one;
use super::{
    count, dense, empty, encoding_of, Encoding, DENSE_BYTES, ENCODING_AT, HEADER_BYTES, REGISTERS,
};

/// Rounds of the register test.
const REGISTER_ROUNDS: usize = 1000;
/// Elements of the estimate test.
const ELEMENTS: u64 = 10_000_000;

/// Runs the self-test; `random` supplies the random numbers. `Err` holds the error text.
pub fn selftest(random: &mut dyn FnMut() -> u64, sparse_max_bytes: u64) -> Result<(), String> {
    registers_keep_their_values(random)?;
    estimates_are_close(random, sparse_max_bytes)
}

fn registers_keep_their_values(random: &mut dyn FnMut() -> u64) -> Result<(), String> {
    let mut regs = vec![0u8; DENSE_BYTES - HEADER_BYTES];
    let mut model = vec![0u8; REGISTERS];
    for _ in 0..REGISTER_ROUNDS {
        for (i, m) in model.iter_mut().enumerate() {
            *m = (random() & 63) as u8;
            dense::set(&mut regs, i, *m);
        }
        for (i, &m) in model.iter().enumerate() {
            let got = dense::get(&regs, i);
            if got != m {
                return Err(format!("TESTFAILED Register {i} should be {m} but is {got}"));
            }
        }
    }
    Ok(())
}

fn estimates_are_close(
    random: &mut dyn FnMut() -> u64,
    sparse_max_bytes: u64,
) -> Result<(), String> {
    let mut dense = empty_dense();
    let mut small = empty();
    let relative_error = 1.04 / (REGISTERS as f64).sqrt();
    let seed = (random() & 0xffff_ffff) | random() << 32;
    let mut checkpoint = 1;
    for j in 1..=ELEMENTS {
        let element = (j ^ seed).to_le_bytes();
        add_one(&mut dense, &element, sparse_max_bytes).expect("dense");
        add_one(&mut small, &element, sparse_max_bytes).expect("well formed");
        if j != checkpoint {
            continue;
        }
        if j < sparse_max_bytes / 2 && encoding_of(&small) != Encoding::Sparse {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let estimate = count(&dense).expect("dense");
        if count(&small) != Ok(estimate) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        // Cardinality 10 gets a bound of 1: collisions make larger errors likely there.
        let max_error = if j == 10 { 1 } else { (relative_error * 6.0 * j as f64).ceil() as u64 };
        let error = j.abs_diff(estimate);
        if error > max_error {
            return Err(format!("TESTFAILED Too big error. card:{j} abserr:{error}"));
        }
        checkpoint *= 10;
    }
    Ok(())
}

/// A dense HLL with every register at 0.
fn empty_dense() -> Vec<u8> {
    let mut v = empty();
    v.truncate(HEADER_BYTES);
    v[ENCODING_AT] = Encoding::Dense as u8;
    v.resize(DENSE_BYTES, 0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_self_test_passes() {
        let mut rng = crate::util::rng::Rng::new(5);
        assert_eq!(selftest(&mut || rng.next_u64(), 3000), Ok(()));
    }
}
