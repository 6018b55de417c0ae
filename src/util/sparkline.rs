//! ASCII sparklines in Valkey's layout (LATENCY GRAPH): samples drawn as columns of
//! `_ o #` (filled) characters over a few rows, each sample's label written downwards
//! below it, one character a row. It only draws: the caller picks the samples and labels.
//!
//! # Layout
//!
//! With `rows` rows and three characters a row, a column has `3 * rows` steps. A sample's
//! step is its height above the smallest sample, scaled so that the largest reaches the
//! top step (`(value - min) * steps / (max - min)`, truncated; all equal: every column at
//! step 0). Row `r` (0 at the top) shows step `s` as the character `s - 3 * (rows - 1 - r)`
//! when that is 0, 1 or 2 (`_`, `o`, `#`), as `|` when it is more (the column passes through
//! this row), and as a space when less. One blank row follows when any sample has a
//! label, then as many rows as the longest label:
//!
//! ```text
//!  #          row 0: step 11 of 12 -> '#', step 0 -> ' '
//!  |          rows 1, 2: the first column passes through
//!  |
//!  |_         row 3: the second column's step 0 is '_'
//!             the blank row
//!  42         labels ("4s", "2s"), one character a row
//!  ss
//! ```
//!
//! More samples than `columns` are drawn in several blocks of at most `columns`, one
//! after the other, separated by an empty line.

/// Characters for steps 0, 1, 2 of a row.
const FILL: [u8; 3] = *b"_o#";
/// Characters a row has, per step.
const PER_ROW: i64 = FILL.len() as i64;

/// One column: its value and its label (empty for none).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub value: f64,
    pub label: String,
}

/// Draws `samples` `rows` high, in blocks at most `columns` wide, each line ended by `\n`.
pub fn render(samples: &[Sample], columns: usize, rows: usize) -> String {
    let mut out = String::new();
    if samples.is_empty() {
        return out;
    }
    let min = samples.iter().map(|s| s.value).fold(f64::INFINITY, f64::min);
    let max = samples.iter().map(|s| s.value).fold(f64::NEG_INFINITY, f64::max);
    let labelled = samples.iter().any(|s| !s.label.is_empty());
    for (i, block) in samples.chunks(columns.max(1)).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_block(&mut out, block, rows, min, max, labelled);
    }
    out
}

/// The step (0 ..= 3 * rows - 1) of `value` between `min` and `max`.
fn step_of(value: f64, min: f64, max: f64, rows: usize) -> i64 {
    let steps = PER_ROW * rows as i64;
    let range = if max - min == 0.0 { 1.0 } else { max - min };
    let step = (((value - min) * steps as f64) as i64 as f64 / range) as i64;
    step.clamp(0, steps - 1)
}

fn render_block(
    out: &mut String,
    block: &[Sample],
    rows: usize,
    min: f64,
    max: f64,
    labelled: bool,
) {
    let steps: Vec<i64> = block.iter().map(|s| step_of(s.value, min, max, rows)).collect();
    let mut line = vec![b' '; block.len()];
    for row in 0..rows {
        for (c, &step) in line.iter_mut().zip(&steps) {
            let idx = step - PER_ROW * (rows - 1 - row) as i64;
            *c = match idx {
                i if i < 0 => b' ',
                i if i < PER_ROW => FILL[i as usize],
                _ => b'|',
            };
        }
        push_line(out, &line);
    }
    if !labelled {
        return;
    }
    push_line(out, &vec![b' '; block.len()]);
    let longest = block.iter().map(|s| s.label.len()).max().unwrap_or(0);
    for k in 0..longest {
        for (c, s) in line.iter_mut().zip(block) {
            *c = s.label.as_bytes().get(k).copied().unwrap_or(b' ');
        }
        push_line(out, &line);
    }
}

fn push_line(out: &mut String, line: &[u8]) {
    out.push_str(&String::from_utf8_lossy(line));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(value: f64, label: &str) -> Sample {
        Sample { value, label: label.to_string() }
    }

    #[test]
    fn two_samples_as_valkey_draws_them() {
        // Valkey 9.1: LATENCY GRAPH of a 50 ms and a 30 ms spike, 20 s and 2 s ago.
        let g = render(&[s(50.0, "20s"), s(30.0, "2s")], 80, 4);
        assert_eq!(g, "# \n| \n| \n|_\n  \n22\n0s\ns \n");
    }

    #[test]
    fn one_sample_sits_on_the_bottom_row() {
        assert_eq!(render(&[s(20.0, "1s")], 80, 4), " \n \n \n_\n \n1\ns\n");
    }

    #[test]
    fn steps_rise_through_the_rows() {
        let samples: Vec<Sample> = (0..12).map(|v| s(v as f64, "")).collect();
        let g = render(&samples, 80, 4);
        assert_eq!(g, "         _o#\n      _o#|||\n   _o#||||||\n_o#|||||||||\n");
    }

    #[test]
    fn wide_sequences_wrap_into_blocks() {
        let samples: Vec<Sample> = (0..5).map(|v| s(v as f64, "")).collect();
        let g = render(&samples, 3, 1);
        // One row of three steps: 0 1 2 3 4 over 0..=4 -> steps 0, 0, 1, 2, 2.
        assert_eq!(g, "__o\n\n##\n");
    }
}
