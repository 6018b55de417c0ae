//! A cursor over a command's arguments: typed accessors that return the right `CmdError`,
//! so option parsing in handlers reads as a small grammar.

use bytes::Bytes;

use crate::commands::error::CmdError;
use crate::types::string::{parse_f64, parse_i64};

pub struct Args<'a> {
    argv: &'a [Bytes],
    pos: usize,
}

impl<'a> Args<'a> {
    /// A cursor starting at argument `pos` (1 skips the command name).
    pub fn new(argv: &'a [Bytes], pos: usize) -> Args<'a> {
        Args { argv, pos }
    }

    pub fn remaining(&self) -> usize {
        self.argv.len().saturating_sub(self.pos)
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn peek(&self) -> Option<&'a Bytes> {
        self.argv.get(self.pos)
    }

    /// The next argument, or a syntax error.
    pub fn next_bytes(&mut self) -> Result<&'a Bytes, CmdError> {
        let a = self.argv.get(self.pos).ok_or(CmdError::Syntax)?;
        self.pos += 1;
        Ok(a)
    }

    pub fn next_opt(&mut self) -> Option<&'a Bytes> {
        let a = self.argv.get(self.pos)?;
        self.pos += 1;
        Some(a)
    }

    /// The next argument as an integer (`value is not an integer or out of range`).
    pub fn next_i64(&mut self) -> Result<i64, CmdError> {
        int_arg(self.next_bytes()?)
    }

    pub fn next_f64(&mut self) -> Result<f64, CmdError> {
        parse_f64(self.next_bytes()?).ok_or(CmdError::NotFloat)
    }

    /// True (and advance) when the next argument equals `word` case-insensitively.
    pub fn eat(&mut self, word: &str) -> bool {
        match self.peek() {
            Some(a) if a.eq_ignore_ascii_case(word.as_bytes()) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    /// Fails with a syntax error when arguments are left.
    pub fn finish(&self) -> Result<(), CmdError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(CmdError::Syntax)
        }
    }
}

/// Parse an integer argument.
pub fn int_arg(a: &[u8]) -> Result<i64, CmdError> {
    parse_i64(a).ok_or(CmdError::NotInteger)
}

/// True when `a` equals `word`, ignoring ASCII case.
pub fn is(a: &[u8], word: &str) -> bool {
    a.eq_ignore_ascii_case(word.as_bytes())
}

/// Lossy text of an argument, for error messages.
pub fn text(a: &[u8]) -> String {
    String::from_utf8_lossy(a).into_owned()
}
