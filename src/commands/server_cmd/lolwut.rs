//! LOLWUT: a picture and the version, as Valkey answers it, with ferrokey's own picture.
//!
//! `LOLWUT [VERSION v] [columns rows] [real imaginary]`. Version 9 (the default, the
//! server's major version) draws the Mandelbrot set in ASCII shades, `columns` x `rows`
//! characters (clamped to 1..=160 and 1..=80, as Valkey clamps its canvas), centred on
//! `real + imaginary i` (default -0.5 + 0i); the last line ends with ` Valkey ver. X`,
//! where scripts look for the version. Any other version has no picture: the reply is
//! `Valkey ver.X` alone, as Valkey's reply for a version without art.

use bytes::Bytes;

use crate::commands::args::is;
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::types::string::{parse_f64, parse_i64};

use super::SERVER_VERSION;

/// The version whose picture this is (the server's major version).
const ART_VERSION: i64 = 9;
const COLUMNS_MAX: i64 = 160;
const ROWS_MAX: i64 = 80;
/// Shades from the outside of the set (escaped at once) to its inside.
const SHADES: &[u8] = b" .:-=+*#%@";
/// Iterations before a point counts as inside the set.
const ITERATIONS: u32 = 200;

pub fn lolwut(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let (version, args) = match argv.get(1) {
        Some(a) if is(a, "VERSION") && argv.len() >= 3 => {
            (parse_i64(&argv[2]).ok_or(CmdError::NotInteger)?, &argv[3..])
        }
        _ => (ART_VERSION, &argv[1..]),
    };
    let text =
        if version == ART_VERSION { picture(args)? } else { format!("{}\n", version_line("")) };
    ctx.out.verbatim("txt", text.as_bytes());
    Ok(())
}

/// `Valkey ver.<sep>9.1.2`, or `Redis ver.<sep>7.2.4` under `extended-redis-compatibility`.
fn version_line(sep: &str) -> String {
    if crate::spec::error::redis_compat() {
        format!("Redis ver.{sep}{}", super::REDIS_COMPAT_VERSION)
    } else {
        format!("Valkey ver.{sep}{SERVER_VERSION}")
    }
}

/// The picture and its caption, for `[columns rows] [real imaginary]`.
fn picture(args: &[Bytes]) -> Result<String, CmdError> {
    let (mut cols, mut rows, mut center) = (80, 40, (-0.5, 0.0));
    match args.len() {
        0 => {}
        2 | 4 => {
            let int = |a: &Bytes| parse_i64(a).ok_or(CmdError::NotInteger);
            cols = int(&args[0])?.clamp(1, COLUMNS_MAX) as usize;
            rows = int(&args[1])?.clamp(1, ROWS_MAX) as usize;
            if args.len() == 4 {
                let float = |a: &Bytes| parse_f64(a).ok_or(CmdError::NotFloat);
                center = (float(&args[2])?, float(&args[3])?);
            }
        }
        _ => {
            return Err(CmdError::Other(
                "ERR Syntax error. Use: LOLWUT [columns rows] [real imaginary]".into(),
            ))
        }
    }
    let mut out = String::with_capacity((cols + 1) * rows + 128);
    // A character is about twice as tall as it is wide: 3 units across, 2.4 down.
    let (dx, dy) = (3.0 / cols as f64, 2.4 / rows as f64);
    for y in 0..rows {
        let im = center.1 + (y as f64 - rows as f64 / 2.0) * dy;
        for x in 0..cols {
            let re = center.0 + (x as f64 - cols as f64 / 2.0) * dx;
            out.push(SHADES[shade(re, im)] as char);
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "The Mandelbrot set around {:.2} + {:.2}i, iron filings on a terminal.\n",
        center.0, center.1
    ));
    out.push_str(&format!("Rust never sleeps. {}\n", version_line(" ")));
    Ok(out)
}

/// The shade of the point `re + im i`: how long it stays bounded under z -> z^2 + c.
fn shade(re: f64, im: f64) -> usize {
    let (mut zr, mut zi) = (0.0f64, 0.0f64);
    for n in 0..ITERATIONS {
        if zr * zr + zi * zi > 4.0 {
            // Escape times grow fast near the set: a square root spreads the shades.
            let t = (n as f64 / ITERATIONS as f64).sqrt();
            return ((t * (SHADES.len() - 1) as f64) as usize).min(SHADES.len() - 2);
        }
        (zr, zi) = (zr * zr - zi * zi + re, 2.0 * zr * zi + im);
    }
    SHADES.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &str) -> Vec<Bytes> {
        words
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    #[test]
    fn the_picture_has_the_asked_size_and_the_version_last() {
        let p = picture(&args("20 10")).unwrap();
        let lines: Vec<&str> = p.lines().collect();
        assert_eq!(lines.len(), 12);
        assert!(lines[..10].iter().all(|l| l.len() == 20));
        assert!(lines[11].ends_with(&format!(" Valkey ver. {SERVER_VERSION}")));
        // The set is there: the centre is inside, the corners outside.
        assert_eq!(lines[5].as_bytes()[10], b'@');
        assert_eq!(lines[0].as_bytes()[0], b' ');
        // Clamped sizes, as Valkey clamps them.
        assert_eq!(picture(&args("2000 0")).unwrap().lines().count(), 1 + 2);
        assert_eq!(picture(&args("-5 3")).unwrap().lines().next().unwrap().len(), 1);
        assert_eq!(
            picture(&args("10")),
            Err(CmdError::Other(
                "ERR Syntax error. Use: LOLWUT [columns rows] [real imaginary]".into()
            ))
        );
        assert_eq!(picture(&args("10 5 x 0")), Err(CmdError::NotFloat));
        assert_eq!(picture(&args("x 5")), Err(CmdError::NotInteger));
    }
}
