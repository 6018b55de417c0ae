//! The `cjson` Lua library: JSON encoding and decoding for scripts, as Valkey bundles it
//! (lua-cjson 2.1.0 with Valkey's patches, built with `ENABLE_CJSON_GLOBAL` so the table is the
//! global `cjson`).
//!
//! Everything a script can observe matches Valkey 9.1's build: `encode`, `decode`, the
//! configuration functions (per instance, with the same defaults, ranges, return values and
//! `bad argument` errors, including lua-cjson's habit of naming argument #1 in every range error),
//! `new`, `null` (a NULL light userdata), `_NAME` and `_VERSION`. Numbers are written with
//! `%.<precision>g` (see [`super::numfmt`]), tables are arrays when every key is a positive
//! integer (with the same sparse-array rule and the same C `int` conversion of huge keys), `/` and
//! control characters are escaped, decode reads numbers the way glibc's `strtod` does (hex,
//! `inf`, `nan`, leading `+` and zeros unless `decode_invalid_numbers` is off), and the error
//! texts and character positions are the same. Nesting stops where Valkey's stops: at the
//! configured depth, or earlier where lua-cjson's `lua_checkstack` would fail (Lua 5.1 lets a C
//! function use 8000 stack slots); the encoder and decoder keep their own explicit stacks, so
//! no script can make them recurse on the Rust stack.
//!
//! Errors carry exactly lua-cjson's messages, in the form the embedding's C-style wrapper
//! (given to [`open_with`]) raises as Lua's C API would: argument errors as
//! `mlua::Error::BadArgument { pos, cause: RuntimeError("expected 1 argument") }` for
//! `luaL_argerror` (which names the function as it was called), the others as
//! `RuntimeError("Expected value but found T_END at character 2")` for `luaL_error` (which
//! prefixes the caller's position, `user_script:1: `).
//!
//! Deliberate differences: `encode` fails with "Cannot serialise, output exceeds 536870912 bytes"
//! where Valkey would keep growing its buffer until the allocator gives up and the server aborts
//! (e.g. `encode_sparse_array(false, 0)` and then `{[2^31-1] = 1}`); `encode_keep_buffer` only
//! decides whether the output buffer is kept between calls (as in C, nothing else shows it).
//! Object members are written in the order Lua's `next` visits them, as in lua-cjson; that order
//! is the interpreter's, and Valkey's Lua hashes strings differently (murmur32) from stock Lua
//! 5.1, so objects with string keys may list their members in another order than Valkey does.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};

use crate::util::fmt_g::fmt_g;

const NAME: &str = "cjson";
const VERSION: &str = "2.1.0";

/// Stack slots Lua 5.1 lets one C function use (`LUAI_MAXCSTACK`); lua-cjson's
/// `lua_checkstack` calls fail beyond it, which caps nesting below a large configured depth.
const LUA_C_STACK_SLOTS: usize = 8000;

/// Largest JSON text `encode` builds (Valkey's default `proto-max-bulk-len`).
const MAX_ENCODED_LEN: usize = 512 * 1024 * 1024;

/// Enclosing tables the encoder and decoder keep in Rust; deeper ones go to a Lua table.
/// (mlua keeps every Lua value Rust holds in a slot of one auxiliary Lua stack of about 8000
/// slots, so a deep nesting must not hold a value per level.)
const NEAR_LEVELS: usize = 32;

/// Keys of an object (at one of the first `NEAR_LEVELS` levels) the encoder keeps in Rust;
/// larger objects have their keys listed in a Lua table.
const NEAR_KEYS: usize = 16;

/// What `encode` does with NaN and infinities (`encode_invalid_numbers`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum InvalidNumbers {
    /// Raise "must not be NaN or Inf".
    Refuse,
    /// Write `inf`, `-inf` and `nan`.
    Write,
    /// Write `null`.
    Null,
}

/// One instance's configuration, with lua-cjson's defaults.
#[derive(Clone, Copy)]
struct Settings {
    sparse_convert: bool,
    sparse_ratio: i32,
    sparse_safe: i32,
    encode_max_depth: i32,
    decode_max_depth: i32,
    encode_invalid_numbers: InvalidNumbers,
    decode_invalid_numbers: bool,
    keep_buffer: bool,
    number_precision: i32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: InvalidNumbers::Refuse,
            decode_invalid_numbers: true,
            keep_buffer: true,
            number_precision: 14,
        }
    }
}

/// The state the functions of one `cjson` table share.
#[derive(Default)]
struct Instance {
    settings: Settings,
    /// The output buffer kept between `encode` calls while `encode_keep_buffer` is on.
    buffer: Vec<u8>,
}

type Shared = Rc<RefCell<Instance>>;

/// Turns each function of a `cjson` table into the function Lua sees (for instance the
/// embedding's wrapper that raises errors the way Lua's C functions do).
pub type Wrap = fn(&Lua, Function) -> mlua::Result<Function>;

/// Creates the `cjson` table and sets it as the global `cjson`.
pub fn open(lua: &Lua) -> mlua::Result<()> {
    open_with(lua, |_, function| Ok(function))
}

/// Like [`open`], with every function passed through `wrap`, including those of the tables
/// `cjson.new()` returns later.
///
/// Argument errors are returned as `mlua::Error::BadArgument { pos, cause: RuntimeError(msg) }`
/// (`pos` counting a method's receiver) for the wrapper to raise as `luaL_argerror(L, pos, msg)`
/// does; other errors are `RuntimeError`s with lua-cjson's message, which `luaL_error` would
/// prefix with the caller's position.
pub fn open_with(lua: &Lua, wrap: Wrap) -> mlua::Result<()> {
    let module = new_module(lua, wrap)?;
    lua.globals().set(NAME, module)
}

/// A fresh `cjson` table with its own default settings (also what `cjson.new()` returns).
fn new_module(lua: &Lua, wrap: Wrap) -> mlua::Result<Table> {
    let shared: Shared = Rc::default();
    let module = lua.create_table()?;
    let add =
        |name: &str, handler: Handler| add_function(lua, wrap, &module, &shared, name, handler);
    add("encode", encode)?;
    add("decode", decode)?;
    add("encode_sparse_array", cfg_encode_sparse_array)?;
    add("encode_max_depth", cfg_encode_max_depth)?;
    add("decode_max_depth", cfg_decode_max_depth)?;
    add("encode_number_precision", cfg_number_precision)?;
    add("encode_keep_buffer", cfg_keep_buffer)?;
    add("encode_invalid_numbers", cfg_encode_invalid)?;
    add("decode_invalid_numbers", cfg_decode_invalid)?;
    let new = lua.create_function(move |lua, _: MultiValue| new_module(lua, wrap))?;
    module.set("new", wrap(lua, new)?)?;
    module.set("null", null())?;
    module.set("_NAME", NAME)?;
    module.set("_VERSION", VERSION)?;
    Ok(module)
}

type Handler = fn(&Lua, &Shared, Vec<Value>) -> mlua::Result<MultiValue>;

fn add_function(
    lua: &Lua,
    wrap: Wrap,
    module: &Table,
    shared: &Shared,
    name: &str,
    handler: Handler,
) -> mlua::Result<()> {
    let shared = Rc::clone(shared);
    let function = lua.create_function(move |lua, args: MultiValue| {
        handler(lua, &shared, args.into_iter().collect())
    })?;
    module.set(name, wrap(lua, function)?)
}

/// `cjson.null`: a light userdata holding NULL.
fn null() -> Value {
    Value::LightUserData(mlua::LightUserData(std::ptr::null_mut()))
}

fn one(value: Value) -> MultiValue {
    MultiValue::from_iter([value])
}

// ===== Lua API emulation: argument errors and conversions =====

/// An argument error, for the embedding to raise as `luaL_argerror(L, narg, message)` does:
/// `bad argument #<narg> to '<name>' (<message>)`, with the name the function was called by
/// (and "calling '<name>' on bad self" for the receiver of a method call). `narg` counts the
/// receiver of a method call, as in C.
// mlua's error type holds its cause in an `Arc`; the error never leaves this thread.
#[allow(clippy::arc_with_non_send_sync)]
fn arg_error(narg: usize, message: &str) -> mlua::Error {
    mlua::Error::BadArgument {
        to: None,
        pos: narg,
        name: None,
        cause: std::sync::Arc::new(mlua::Error::RuntimeError(message.to_owned())),
    }
}

/// The `luaL_typerror` form: "<expected> expected, got <type>".
fn type_error(narg: usize, expected: &str, got: &Value) -> mlua::Error {
    arg_error(narg, &format!("{expected} expected, got {}", type_name(got)))
}

/// Lua's name for the type of `value` (`lua_typename`).
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// Lua's text for a number (`lua_tolstring`: `%.14g`).
fn number_text(n: f64) -> Vec<u8> {
    let mut text = Vec::new();
    fmt_g(n, 14, &mut text);
    text
}

/// `luaL_checklstring`: strings, and numbers converted to their text.
fn check_bytes(narg: usize, value: &Value) -> mlua::Result<Vec<u8>> {
    match value {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Integer(i) => Ok(number_text(*i as f64)),
        Value::Number(n) => Ok(number_text(*n)),
        other => Err(type_error(narg, "string", other)),
    }
}

/// `luaL_checkinteger` as built for x86-64: numbers (and numeric strings) truncated to
/// `lua_Integer`, then stored in a C `int` as lua-cjson does.
fn check_int(narg: usize, value: &Value) -> mlua::Result<i32> {
    let number = match value {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        Value::String(s) => lua_str_to_number(&s.as_bytes()),
        _ => None,
    };
    match number {
        Some(n) => Ok(c_i64_from_f64(n) as i32),
        None => Err(type_error(narg, "number", value)),
    }
}

/// C's `(int64_t)x` on x86-64: truncation, with NaN and out-of-range values giving `INT64_MIN`.
fn c_i64_from_f64(x: f64) -> i64 {
    if x.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// C's `(int)x` on x86-64: truncation, with NaN and out-of-range values giving `INT_MIN`.
fn c_int_from_f64(x: f64) -> i32 {
    if x.is_nan() || x >= 2_147_483_648.0 || x <= -2_147_483_649.0 {
        i32::MIN
    } else {
        x as i32
    }
}

/// Lua 5.1's string-to-number conversion (`luaO_str2d`): `strtod` with surrounding whitespace
/// allowed and nothing else after the number (the string ends at its first NUL, as in C).
fn lua_str_to_number(bytes: &[u8]) -> Option<f64> {
    let text = c_str(bytes);
    let (value, end) = strtod(text, 0, true)?;
    let rest = &text[end..];
    rest.iter().all(|&b| is_c_space(b)).then_some(value)
}

/// The part of `bytes` C sees as a string: up to the first NUL.
fn c_str(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

// ===== strtod =====

/// glibc's `strtod` in the C locale on `text[start..]` (a NUL or the end stops it): the value
/// and where the number ends, or `None` where `strtod` converts nothing. Accepts a sign,
/// decimal and hexadecimal numbers, `inf`/`infinity` and `nan`/`nan(chars)` in any case.
fn strtod(text: &[u8], start: usize, skip_space: bool) -> Option<(f64, usize)> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let mut i = start;
    if skip_space {
        while is_c_space(at(i)) {
            i += 1;
        }
    }
    let negative = at(i) == b'-';
    if matches!(at(i), b'-' | b'+') {
        i += 1;
    }
    let (magnitude, end) = if starts_with_ignore_case(text, i, b"inf") {
        let end = if starts_with_ignore_case(text, i, b"infinity") { i + 8 } else { i + 3 };
        (f64::INFINITY, end)
    } else if starts_with_ignore_case(text, i, b"nan") {
        (f64::NAN, nan_end(text, i + 3))
    } else if at(i) == b'0' && at(i + 1) | 0x20 == b'x' {
        hex_number(text, i)
    } else {
        decimal_number(text, i)?
    };
    Some((if negative { -magnitude } else { magnitude }, end))
}

fn starts_with_ignore_case(text: &[u8], at: usize, word: &[u8]) -> bool {
    text.get(at..at + word.len()).is_some_and(|s| s.eq_ignore_ascii_case(word))
}

/// After `nan`, an optional `(n-char-sequence)` is part of the number.
fn nan_end(text: &[u8], after: usize) -> usize {
    if text.get(after) != Some(&b'(') {
        return after;
    }
    let mut i = after + 1;
    while text.get(i).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
        i += 1;
    }
    if text.get(i) == Some(&b')') {
        i + 1
    } else {
        after
    }
}

/// Length of the run of ASCII digits at `text[i..]`.
fn digit_run(text: &[u8], i: usize, hex: bool) -> usize {
    let digit = |b: &u8| if hex { b.is_ascii_hexdigit() } else { b.is_ascii_digit() };
    text.get(i..).map_or(0, |s| s.iter().take_while(|b| digit(b)).count())
}

/// Where an exponent (`e`/`p` already checked by the caller at `i`) ends: only consumed when
/// at least one digit follows the optional sign.
fn exponent_end(text: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if matches!(text.get(j), Some(b'+' | b'-')) {
        j += 1;
    }
    let digits = digit_run(text, j, false);
    (digits > 0).then_some(j + digits)
}

/// `ddd[.ddd][e[+-]ddd]` with at least one digit.
fn decimal_number(text: &[u8], start: usize) -> Option<(f64, usize)> {
    let int_digits = digit_run(text, start, false);
    let mut end = start + int_digits;
    let mut frac_digits = 0;
    if text.get(end) == Some(&b'.') {
        frac_digits = digit_run(text, end + 1, false);
        if int_digits + frac_digits > 0 {
            end += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(text.get(end), Some(b'e' | b'E')) {
        if let Some(exp_end) = exponent_end(text, end) {
            end = exp_end;
        }
    }
    let literal = std::str::from_utf8(&text[start..end]).ok()?;
    literal.parse::<f64>().ok().map(|value| (value, end))
}

/// `0x` followed by a hexadecimal mantissa and an optional binary exponent, rounded to nearest
/// even like glibc; `0x` without hex digits is the number `0` ending before the `x`.
fn hex_number(text: &[u8], start: usize) -> (f64, usize) {
    let mut acc = HexAccumulator::default();
    let mut i = start + 2;
    let int_digits = digit_run(text, i, true);
    for &b in &text[i..i + int_digits] {
        acc.push(hex_value(b), false);
    }
    i += int_digits;
    let mut frac_digits = 0;
    if text.get(i) == Some(&b'.') {
        frac_digits = digit_run(text, i + 1, true);
        for &b in &text[i + 1..i + 1 + frac_digits] {
            acc.push(hex_value(b), true);
        }
        if int_digits + frac_digits > 0 {
            i += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return (0.0, start + 1);
    }
    if matches!(text.get(i), Some(b'p' | b'P')) {
        if let Some(end) = exponent_end(text, i) {
            acc.exponent = acc.exponent.saturating_add(parse_exponent(&text[i + 1..end]));
            i = end;
        }
    }
    (acc.value(), i)
}

fn hex_value(b: u8) -> u64 {
    match b {
        b'0'..=b'9' => u64::from(b - b'0'),
        _ => u64::from((b | 0x20) - b'a' + 10),
    }
}

/// A signed decimal exponent, saturated far beyond any double's range.
fn parse_exponent(text: &[u8]) -> i64 {
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let mut value: i64 = 0;
    for &d in digits {
        value = (value * 10 + i64::from(d - b'0')).min(1 << 40);
    }
    if negative {
        -value
    } else {
        value
    }
}

/// Hex digits gathered into 60 significant bits, a binary exponent and a sticky bit for the
/// nonzero digits beyond them.
#[derive(Default)]
struct HexAccumulator {
    mantissa: u64,
    exponent: i64,
    sticky: bool,
}

impl HexAccumulator {
    fn push(&mut self, digit: u64, fraction: bool) {
        if self.mantissa >> 56 == 0 {
            self.mantissa = self.mantissa << 4 | digit;
            if fraction {
                self.exponent -= 4;
            }
        } else {
            self.sticky |= digit != 0;
            if !fraction {
                self.exponent += 4;
            }
        }
    }

    /// `mantissa * 2^exponent` (plus the sticky bit) rounded to the nearest double, ties to even.
    fn value(&self) -> f64 {
        if self.mantissa == 0 {
            return 0.0;
        }
        let shift = self.mantissa.leading_zeros();
        let m = self.mantissa << shift;
        // The value is m * 2^(top - 63), with bit 63 of m set.
        let top = self.exponent - i64::from(shift) + 63;
        if top > 1023 {
            return f64::INFINITY;
        }
        let kept = if top >= -1022 { 53 } else { top + 1075 };
        if kept <= 0 {
            let above_half = kept == 0 && (m > 1 << 63 || self.sticky);
            return if above_half { f64::from_bits(1) } else { 0.0 };
        }
        let dropped = 64 - kept as u32;
        let mut q = m >> dropped;
        let rest = m & ((1u64 << dropped) - 1);
        let half = 1u64 << (dropped - 1);
        if rest > half || (rest == half && (self.sticky || q & 1 == 1)) {
            q += 1;
        }
        // q * 2^(top - kept + 1) is exact; the scale is at least 2^-1074.
        q as f64 * power_of_two(top - kept + 1)
    }
}

/// 2^e for -1074 <= e <= 1023, exactly.
fn power_of_two(e: i64) -> f64 {
    if e < -1022 {
        f64::from_bits(1u64 << (e + 1074))
    } else {
        f64::from_bits(((e + 1023) as u64) << 52)
    }
}

// ===== Configuration functions =====

/// `json_arg_init`: at most `count` arguments; missing ones read as nil.
fn check_arg_count(args: &[Value], count: usize) -> mlua::Result<()> {
    if args.len() > count {
        return Err(arg_error(count + 1, "found too many arguments"));
    }
    Ok(())
}

fn arg(args: &[Value], index: usize) -> &Value {
    args.get(index - 1).unwrap_or(&Value::Nil)
}

/// An integer setting: argument `index` (when not nil) must lie in `min..=max`; the range error
/// names argument #1 whatever `index` is, as lua-cjson's does.
fn integer_option(
    args: &[Value],
    index: usize,
    setting: &mut i32,
    (min, max): (i32, i32),
) -> mlua::Result<Value> {
    let value = arg(args, index);
    if !value.is_nil() {
        let n = check_int(index, value)?;
        if n < min || n > max {
            let message = format!("expected integer between {min} and {max}");
            return Err(arg_error(1, &message));
        }
        *setting = n;
    }
    Ok(Value::Integer(i64::from(*setting)))
}

/// An enumerated setting (`options[i]` selects `i`; booleans select 0 or 1). Returns a boolean
/// for 0 and 1, the option's name otherwise.
fn enum_option(
    lua: &Lua,
    args: &[Value],
    index: usize,
    setting: &mut usize,
    options: &[&str],
) -> mlua::Result<Value> {
    match arg(args, index) {
        Value::Nil => {}
        Value::Boolean(b) => *setting = usize::from(*b),
        value => *setting = check_option(index, value, options)?,
    }
    match *setting {
        0 | 1 => Ok(Value::Boolean(*setting == 1)),
        n => Ok(Value::String(lua.create_string(options[n])?)),
    }
}

/// `luaL_checkoption` without a default.
fn check_option(index: usize, value: &Value, options: &[&str]) -> mlua::Result<usize> {
    let bytes = check_bytes(index, value)?;
    let name = c_str(&bytes);
    match options.iter().position(|option| option.as_bytes() == name) {
        Some(n) => Ok(n),
        None => {
            let message = format!("invalid option '{}'", String::from_utf8_lossy(name));
            Err(arg_error(index, &message))
        }
    }
}

const ON_OFF: &[&str] = &["off", "on"];

fn bool_option(lua: &Lua, args: &[Value], index: usize, setting: &mut bool) -> mlua::Result<Value> {
    let mut n = usize::from(*setting);
    let result = enum_option(lua, args, index, &mut n, ON_OFF)?;
    *setting = n == 1;
    Ok(result)
}

fn cfg_encode_sparse_array(
    lua: &Lua,
    shared: &Shared,
    args: Vec<Value>,
) -> mlua::Result<MultiValue> {
    check_arg_count(&args, 3)?;
    // Each setting is stored once accepted, before the next argument is checked (as in C).
    let mut settings = shared.borrow().settings;
    let convert = bool_option(lua, &args, 1, &mut settings.sparse_convert)?;
    shared.borrow_mut().settings.sparse_convert = settings.sparse_convert;
    let ratio = integer_option(&args, 2, &mut settings.sparse_ratio, (0, i32::MAX))?;
    shared.borrow_mut().settings.sparse_ratio = settings.sparse_ratio;
    let safe = integer_option(&args, 3, &mut settings.sparse_safe, (0, i32::MAX))?;
    shared.borrow_mut().settings.sparse_safe = settings.sparse_safe;
    Ok(MultiValue::from_iter([convert, ratio, safe]))
}

/// Runs a one-argument integer setter on the field `field` picks.
fn single_integer(
    shared: &Shared,
    args: &[Value],
    field: fn(&mut Settings) -> &mut i32,
    range: (i32, i32),
) -> mlua::Result<MultiValue> {
    check_arg_count(args, 1)?;
    let mut settings = shared.borrow().settings;
    let result = integer_option(args, 1, field(&mut settings), range)?;
    *field(&mut shared.borrow_mut().settings) = *field(&mut settings);
    Ok(one(result))
}

fn cfg_encode_max_depth(_: &Lua, shared: &Shared, args: Vec<Value>) -> mlua::Result<MultiValue> {
    single_integer(shared, &args, |s| &mut s.encode_max_depth, (1, i32::MAX))
}

fn cfg_decode_max_depth(_: &Lua, shared: &Shared, args: Vec<Value>) -> mlua::Result<MultiValue> {
    single_integer(shared, &args, |s| &mut s.decode_max_depth, (1, i32::MAX))
}

fn cfg_number_precision(_: &Lua, shared: &Shared, args: Vec<Value>) -> mlua::Result<MultiValue> {
    single_integer(shared, &args, |s| &mut s.number_precision, (1, 14))
}

fn cfg_keep_buffer(lua: &Lua, shared: &Shared, args: Vec<Value>) -> mlua::Result<MultiValue> {
    check_arg_count(&args, 1)?;
    let mut keep = shared.borrow().settings.keep_buffer;
    let result = bool_option(lua, &args, 1, &mut keep)?;
    let mut instance = shared.borrow_mut();
    instance.settings.keep_buffer = keep;
    if !keep {
        instance.buffer = Vec::new();
    }
    Ok(one(result))
}

fn cfg_encode_invalid(lua: &Lua, shared: &Shared, args: Vec<Value>) -> mlua::Result<MultiValue> {
    const OPTIONS: &[&str] = &["off", "on", "null"];
    const MODES: [InvalidNumbers; 3] =
        [InvalidNumbers::Refuse, InvalidNumbers::Write, InvalidNumbers::Null];
    check_arg_count(&args, 1)?;
    let current = shared.borrow().settings.encode_invalid_numbers;
    let mut n = MODES.iter().position(|mode| *mode == current).unwrap_or(0);
    let result = enum_option(lua, &args, 1, &mut n, OPTIONS)?;
    shared.borrow_mut().settings.encode_invalid_numbers = MODES[n];
    Ok(one(result))
}

fn cfg_decode_invalid(lua: &Lua, shared: &Shared, args: Vec<Value>) -> mlua::Result<MultiValue> {
    check_arg_count(&args, 1)?;
    let mut allow = shared.borrow().settings.decode_invalid_numbers;
    let result = bool_option(lua, &args, 1, &mut allow)?;
    shared.borrow_mut().settings.decode_invalid_numbers = allow;
    Ok(one(result))
}

// ===== Encoding =====

fn encode(lua: &Lua, shared: &Shared, args: Vec<Value>) -> mlua::Result<MultiValue> {
    if args.len() != 1 {
        return Err(arg_error(1, "expected 1 argument"));
    }
    // No borrow is held while encoding: Lua may run finalizers that call back into cjson.
    let (settings, buffer) = {
        let mut instance = shared.borrow_mut();
        (instance.settings, std::mem::take(&mut instance.buffer))
    };
    let mut encoder = Encoder::new(lua, settings, buffer);
    let result = args.into_iter().next().map_or(Ok(()), |value| encoder.run(value));
    let mut out = encoder.out;
    let encoded = result.and_then(|()| lua.create_string(&out));
    if settings.keep_buffer {
        out.clear();
        shared.borrow_mut().buffer = out;
    }
    Ok(one(Value::String(encoded?)))
}

/// One open table of the encoder's explicit stack.
enum Level {
    /// An array of `len` elements, `next` the 1-based index to write next.
    Array { len: usize, next: usize },
    /// An object whose `len` keys were listed (in `next` order) when it was opened.
    Object { len: usize, next: usize },
}

impl Level {
    /// Lua stack slots lua-cjson holds at this level while a child is encoded.
    fn slots(&self) -> usize {
        match self {
            Level::Array { .. } => 1,
            Level::Object { .. } => 2,
        }
    }
}

/// The table being written (or read) and, for an object being written, its keys.
struct Current {
    table: Table,
    keys: Option<Keys>,
}

/// The keys of an object being encoded, in `next` order.
enum Keys {
    Near(Vec<Value>),
    /// A Lua sequence.
    Far(Table),
}

impl Keys {
    /// The `index`-th key (1-based).
    fn get(&self, index: usize) -> mlua::Result<Value> {
        match self {
            Keys::Near(keys) => Ok(keys.get(index - 1).cloned().unwrap_or(Value::Nil)),
            Keys::Far(keys) => keys.raw_get(index),
        }
    }

    fn into_table(self, lua: &Lua) -> mlua::Result<Table> {
        match self {
            Keys::Far(keys) => Ok(keys),
            Keys::Near(keys) => lua.create_sequence_from(keys),
        }
    }
}

/// The enclosing tables of the one being written or read: the first `NEAR_LEVELS` in Rust,
/// deeper ones in a Lua table (`[2n - 1]` the table, `[2n]` its keys).
#[derive(Default)]
struct Ancestors {
    near: Vec<Current>,
    far: Option<Table>,
    far_len: usize,
}

impl Ancestors {
    fn push(&mut self, lua: &Lua, current: Current) -> mlua::Result<()> {
        if self.near.len() < NEAR_LEVELS && self.far_len == 0 {
            self.near.push(current);
            return Ok(());
        }
        let far = match &self.far {
            Some(far) => far.clone(),
            None => self.far.insert(lua.create_table()?).clone(),
        };
        self.far_len += 1;
        far.raw_set(2 * self.far_len - 1, current.table)?;
        let keys = current.keys.map(|keys| keys.into_table(lua)).transpose()?;
        far.raw_set(2 * self.far_len, keys)
    }

    fn pop(&mut self) -> mlua::Result<Option<Current>> {
        let Some(far) = self.far.as_ref().filter(|_| self.far_len > 0) else {
            return Ok(self.near.pop());
        };
        let n = self.far_len;
        let table: Table = far.raw_get(2 * n - 1)?;
        let keys: Option<Table> = far.raw_get(2 * n)?;
        far.raw_set(2 * n - 1, Value::Nil)?;
        far.raw_set(2 * n, Value::Nil)?;
        self.far_len -= 1;
        Ok(Some(Current { table, keys: keys.map(Keys::Far) }))
    }
}

struct Encoder<'a> {
    lua: &'a Lua,
    settings: Settings,
    out: Vec<u8>,
    levels: Vec<Level>,
    ancestors: Ancestors,
    current: Option<Current>,
    /// Stack slots lua-cjson would be using (the argument plus each level's slots).
    stack_slots: usize,
}

impl<'a> Encoder<'a> {
    fn new(lua: &'a Lua, settings: Settings, mut out: Vec<u8>) -> Self {
        out.clear();
        Encoder {
            lua,
            settings,
            out,
            levels: Vec::new(),
            ancestors: Ancestors::default(),
            current: None,
            stack_slots: 1,
        }
    }

    fn run(&mut self, value: Value) -> mlua::Result<()> {
        self.value(value)?;
        while !self.levels.is_empty() {
            self.step()?;
        }
        Ok(())
    }

    /// Writes the next element of the innermost open table, or closes it.
    fn step(&mut self) -> mlua::Result<()> {
        if self.out.len() > MAX_ENCODED_LEN {
            let message = format!("Cannot serialise, output exceeds {MAX_ENCODED_LEN} bytes");
            return Err(mlua::Error::RuntimeError(message));
        }
        let (is_array, len, next) = match self.levels.last_mut() {
            Some(Level::Array { len, next }) => (true, *len, next),
            Some(Level::Object { len, next }) => (false, *len, next),
            None => return Ok(()),
        };
        let index = *next;
        if index > len {
            self.out.push(if is_array { b']' } else { b'}' });
            return self.close_level();
        }
        *next += 1;
        if index > 1 {
            self.out.push(b',');
        }
        let current = self.current.as_ref().ok_or_else(missing_table)?;
        if is_array {
            let element: Value = current.table.raw_get(index)?;
            return self.value(element);
        }
        let keys = current.keys.as_ref().ok_or_else(missing_table)?;
        let key = keys.get(index)?;
        let element: Value = current.table.raw_get(&key)?;
        self.key(&key)?;
        self.value(element)
    }

    /// Writes an object key and its colon.
    fn key(&mut self, key: &Value) -> mlua::Result<()> {
        match key {
            Value::Integer(_) | Value::Number(_) => {
                self.out.push(b'"');
                self.number(key)?;
                self.out.extend_from_slice(b"\":");
            }
            Value::String(s) => {
                append_string(&mut self.out, &s.as_bytes());
                self.out.push(b':');
            }
            other => return Err(encode_error(other, "table key must be a number or string")),
        }
        Ok(())
    }

    /// Writes a scalar, or opens a table (its elements are written by later steps).
    fn value(&mut self, value: Value) -> mlua::Result<()> {
        match &value {
            Value::String(s) => append_string(&mut self.out, &s.as_bytes()),
            Value::Integer(_) | Value::Number(_) => self.number(&value)?,
            Value::Boolean(true) => self.out.extend_from_slice(b"true"),
            Value::Boolean(false) => self.out.extend_from_slice(b"false"),
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::LightUserData(ud) if ud.0.is_null() => self.out.extend_from_slice(b"null"),
            Value::Table(table) => return self.open_table(table.clone()),
            other => return Err(encode_error(other, "type not supported")),
        }
        Ok(())
    }

    fn number(&mut self, value: &Value) -> mlua::Result<()> {
        let n = match value {
            Value::Integer(i) => *i as f64,
            Value::Number(n) => *n,
            _ => return Ok(()),
        };
        if !n.is_finite() {
            match self.settings.encode_invalid_numbers {
                InvalidNumbers::Refuse => {
                    return Err(encode_error(value, "must not be NaN or Inf"))
                }
                InvalidNumbers::Null => {
                    self.out.extend_from_slice(b"null");
                    return Ok(());
                }
                InvalidNumbers::Write if n.is_nan() => {
                    self.out.extend_from_slice(b"nan");
                    return Ok(());
                }
                InvalidNumbers::Write => {}
            }
        }
        let precision = usize::try_from(self.settings.number_precision).unwrap_or(14);
        fmt_g(n, precision, &mut self.out);
        Ok(())
    }

    fn open_table(&mut self, table: Table) -> mlua::Result<()> {
        let depth = self.levels.len() + 1;
        let too_deep = i32::try_from(depth).map_or(true, |d| d > self.settings.encode_max_depth);
        if too_deep || self.stack_slots + 3 > LUA_C_STACK_SLOTS {
            let message = format!("Cannot serialise, excessive nesting ({depth})");
            return Err(mlua::Error::RuntimeError(message));
        }
        let len = self.array_length(&table)?;
        let (level, keys) = match len {
            Some(len) => {
                self.out.push(b'[');
                (Level::Array { len, next: 1 }, None)
            }
            None => {
                self.out.push(b'{');
                let (keys, len) = self.list_keys(&table, depth)?;
                (Level::Object { len, next: 1 }, Some(keys))
            }
        };
        if let Some(parent) = self.current.take() {
            self.ancestors.push(self.lua, parent)?;
        }
        self.stack_slots += level.slots();
        self.levels.push(level);
        self.current = Some(Current { table, keys });
        Ok(())
    }

    fn close_level(&mut self) -> mlua::Result<()> {
        if let Some(level) = self.levels.pop() {
            self.stack_slots -= level.slots();
        }
        self.current = self.ancestors.pop()?;
        Ok(())
    }

    /// lua-cjson's array test: `Some(n)` to write `table` as an array of n elements (n > 0),
    /// `None` for an object; raises the sparse-array error when conversion is off.
    fn array_length(&self, table: &Table) -> mlua::Result<Option<usize>> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        for pair in table.pairs::<Value, Value>() {
            let (key, _) = pair?;
            let Some(k) = positive_integer_key(&key) else {
                return Ok(None);
            };
            if k > f64::from(max) {
                max = c_int_from_f64(k);
            }
            items = items.wrapping_add(1);
        }
        let settings = &self.settings;
        if settings.sparse_ratio > 0
            && max > items.wrapping_mul(settings.sparse_ratio)
            && max > settings.sparse_safe
        {
            if !settings.sparse_convert {
                return Err(encode_error(&Value::Table(table.clone()), "excessively sparse array"));
            }
            return Ok(None);
        }
        Ok(usize::try_from(max).ok().filter(|&n| n > 0))
    }

    /// The keys of `table` (an object at `depth`) in `next` order, and their count.
    fn list_keys(&self, table: &Table, depth: usize) -> mlua::Result<(Keys, usize)> {
        let mut near = Vec::new();
        let mut far: Option<Table> = None;
        let mut count = 0;
        for pair in table.pairs::<Value, Value>() {
            let (key, _) = pair?;
            count += 1;
            if let Some(far) = &far {
                far.raw_set(count, key)?;
            } else if depth <= NEAR_LEVELS && near.len() < NEAR_KEYS {
                near.push(key);
            } else {
                let listed = self.lua.create_sequence_from(near.drain(..))?;
                listed.raw_set(count, key)?;
                far = Some(listed);
            }
        }
        Ok((far.map_or(Keys::Near(near), Keys::Far), count))
    }
}

/// A key lua-cjson counts as an array index: a number, nonzero, integral and at least 1.
fn positive_integer_key(key: &Value) -> Option<f64> {
    let k = match key {
        Value::Integer(i) => *i as f64,
        Value::Number(n) => *n,
        _ => return None,
    };
    (k != 0.0 && k.floor() == k && k >= 1.0).then_some(k)
}

fn missing_table() -> mlua::Error {
    mlua::Error::RuntimeError("cjson: internal encoder state lost".to_owned())
}

fn encode_error(value: &Value, reason: &str) -> mlua::Error {
    mlua::Error::RuntimeError(format!("Cannot serialise {}: {reason}", type_name(value)))
}

/// Appends `bytes` as a JSON string: `"`, `\`, `/` and control characters (and DEL) escaped;
/// other bytes, including invalid UTF-8, are copied.
fn append_string(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    for &b in bytes {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            0x08 => b'b',
            0x09 => b't',
            0x0a => b'n',
            0x0c => b'f',
            0x0d => b'r',
            0x00..=0x1f | 0x7f => {
                let hex = [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]];
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&hex);
                continue;
            }
            _ => {
                out.push(b);
                continue;
            }
        };
        out.extend_from_slice(&[b'\\', short]);
    }
    out.push(b'"');
}

// ===== Decoding =====

fn decode(lua: &Lua, shared: &Shared, args: Vec<Value>) -> mlua::Result<MultiValue> {
    if args.len() != 1 {
        return Err(arg_error(1, "expected 1 argument"));
    }
    // A string argument is read in place; a number is converted to its text first.
    let (borrowed, converted);
    let json: &[u8] = match &args[0] {
        Value::String(s) => {
            borrowed = s.as_bytes();
            &borrowed
        }
        other => {
            converted = check_bytes(1, other)?;
            &converted
        }
    };
    if json.len() >= 2 && (json[0] == 0 || json[1] == 0) {
        let message = "JSON parser does not support UTF-16 or UTF-32";
        return Err(mlua::Error::RuntimeError(message.to_owned()));
    }
    let settings = shared.borrow().settings;
    let mut decoder = Decoder::new(lua, json, settings);
    Ok(one(decoder.run()?))
}

#[derive(Clone, Copy, PartialEq)]
enum TokenKind {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    /// The decoded text is in the decoder's `text` buffer.
    String,
    Number(f64),
    Boolean(bool),
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl TokenKind {
    /// How lua-cjson names the token in "Expected ... but found ..." errors.
    fn describe(self) -> &'static str {
        match self {
            TokenKind::ObjBegin => "T_OBJ_BEGIN",
            TokenKind::ObjEnd => "T_OBJ_END",
            TokenKind::ArrBegin => "T_ARR_BEGIN",
            TokenKind::ArrEnd => "T_ARR_END",
            TokenKind::String => "T_STRING",
            TokenKind::Number(_) => "T_NUMBER",
            TokenKind::Boolean(_) => "T_BOOLEAN",
            TokenKind::Null => "T_NULL",
            TokenKind::Colon => "T_COLON",
            TokenKind::Comma => "T_COMMA",
            TokenKind::End => "T_END",
            TokenKind::Error(reason) => reason,
        }
    }
}

#[derive(Clone, Copy)]
struct Token {
    kind: TokenKind,
    /// 0-based offset reported (plus one) in errors.
    index: usize,
}

/// One open container of the decoder's explicit stack.
enum Frame {
    /// An array; `next` is the index of its next element.
    Array { next: usize },
    /// An object; `key` is the key of the member whose value is being read.
    Object { key: Vec<u8> },
}

impl Frame {
    /// Lua stack slots lua-cjson holds at this level (the table, plus the key for objects).
    fn slots(&self) -> usize {
        match self {
            Frame::Array { .. } => 1,
            Frame::Object { .. } => 2,
        }
    }
}

struct Decoder<'a> {
    lua: &'a Lua,
    json: &'a [u8],
    pos: usize,
    settings: Settings,
    /// The text of the last string token.
    text: Vec<u8>,
    frames: Vec<Frame>,
    /// The table of the innermost open container.
    current: Option<Table>,
    ancestors: Ancestors,
    /// Stack slots lua-cjson would be using (the argument plus each frame's slots).
    stack_slots: usize,
}

impl<'a> Decoder<'a> {
    fn new(lua: &'a Lua, json: &'a [u8], settings: Settings) -> Self {
        Decoder {
            lua,
            json,
            pos: 0,
            settings,
            text: Vec::new(),
            frames: Vec::new(),
            current: None,
            ancestors: Ancestors::default(),
            stack_slots: 1,
        }
    }

    /// The byte at `i`; 0 past the end, as C sees the terminating NUL.
    fn at(&self, i: usize) -> u8 {
        self.json.get(i).copied().unwrap_or(0)
    }

    fn run(&mut self) -> mlua::Result<Value> {
        let mut token = self.next_token();
        loop {
            let Some(mut value) = self.start_value(&mut token)? else {
                continue;
            };
            // Attach the finished value to its container; finished containers attach in turn.
            loop {
                match self.attach(value)? {
                    Attached::Done(value) => return self.finish(value),
                    Attached::Closed(table) => value = table,
                    Attached::NextValue(next) => {
                        token = next;
                        break;
                    }
                }
            }
        }
    }

    /// Reads the value starting with `token`: `Some` for a scalar or an empty container,
    /// `None` after opening a container (`token` is then the start of its first value).
    fn start_value(&mut self, token: &mut Token) -> mlua::Result<Option<Value>> {
        let value = match token.kind {
            TokenKind::String => Value::String(self.lua.create_string(&self.text)?),
            TokenKind::Number(n) => Value::Number(n),
            TokenKind::Boolean(b) => Value::Boolean(b),
            TokenKind::Null => null(),
            TokenKind::ArrBegin => {
                self.open(Frame::Array { next: 1 })?;
                let first = self.next_token();
                if first.kind == TokenKind::ArrEnd {
                    return self.close().map(Some);
                }
                *token = first;
                return Ok(None);
            }
            TokenKind::ObjBegin => {
                self.open(Frame::Object { key: Vec::new() })?;
                let first = self.next_token();
                if first.kind == TokenKind::ObjEnd {
                    return self.close().map(Some);
                }
                *token = self.member_start(first)?;
                return Ok(None);
            }
            _ => return Err(parse_error("value", *token)),
        };
        Ok(Some(value))
    }

    /// After `"key"` (`token`) and a colon: stores the key and returns the value's first token.
    fn member_start(&mut self, token: Token) -> mlua::Result<Token> {
        if token.kind != TokenKind::String {
            return Err(parse_error("object key string", token));
        }
        if let Some(Frame::Object { key }) = self.frames.last_mut() {
            key.clone_from(&self.text);
        }
        let colon = self.next_token();
        if colon.kind != TokenKind::Colon {
            return Err(parse_error("colon", colon));
        }
        Ok(self.next_token())
    }

    /// Stores a finished value in the innermost container and reads what follows it.
    fn attach(&mut self, value: Value) -> mlua::Result<Attached> {
        let table = match &self.current {
            Some(table) => table.clone(),
            None => return Ok(Attached::Done(value)),
        };
        match self.frames.last_mut() {
            Some(Frame::Array { next }) => {
                table.raw_set(*next, value)?;
                *next += 1;
                let token = self.next_token();
                match token.kind {
                    TokenKind::ArrEnd => Ok(Attached::Closed(self.close()?)),
                    TokenKind::Comma => Ok(Attached::NextValue(self.next_token())),
                    _ => Err(parse_error("comma or array end", token)),
                }
            }
            Some(Frame::Object { key }) => {
                table.raw_set(self.lua.create_string(&*key)?, value)?;
                let token = self.next_token();
                match token.kind {
                    TokenKind::ObjEnd => Ok(Attached::Closed(self.close()?)),
                    TokenKind::Comma => {
                        let key = self.next_token();
                        Ok(Attached::NextValue(self.member_start(key)?))
                    }
                    _ => Err(parse_error("comma or object end", token)),
                }
            }
            None => Ok(Attached::Done(value)),
        }
    }

    /// After the top-level value: only whitespace may follow.
    fn finish(&mut self, value: Value) -> mlua::Result<Value> {
        let token = self.next_token();
        if token.kind != TokenKind::End {
            return Err(parse_error("the end", token));
        }
        Ok(value)
    }

    /// Opens a container one level deeper, within the depth and stack limits.
    fn open(&mut self, frame: Frame) -> mlua::Result<()> {
        let depth = self.frames.len() + 1;
        let too_deep = i32::try_from(depth).map_or(true, |d| d > self.settings.decode_max_depth);
        // lua_checkstack: 2 slots for an array (table, value), 3 for an object (table, key, value).
        if too_deep || self.stack_slots + frame.slots() + 1 > LUA_C_STACK_SLOTS {
            let message = format!(
                "Found too many nested data structures ({depth}) at character {}",
                self.pos
            );
            return Err(mlua::Error::RuntimeError(message));
        }
        let table = self.lua.create_table()?;
        if let Some(parent) = self.current.replace(table) {
            self.ancestors.push(self.lua, Current { table: parent, keys: None })?;
        }
        self.stack_slots += frame.slots();
        self.frames.push(frame);
        Ok(())
    }

    /// Closes the innermost container and returns its table.
    fn close(&mut self) -> mlua::Result<Value> {
        if let Some(frame) = self.frames.pop() {
            self.stack_slots -= frame.slots();
        }
        let table = self.current.take().ok_or_else(missing_table)?;
        self.current = self.ancestors.pop()?.map(|parent| parent.table);
        Ok(Value::Table(table))
    }

    // ----- Tokenizer -----

    fn next_token(&mut self) -> Token {
        while matches!(self.at(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let index = self.pos;
        let single = match self.at(index) {
            b'{' => Some(TokenKind::ObjBegin),
            b'}' => Some(TokenKind::ObjEnd),
            b'[' => Some(TokenKind::ArrBegin),
            b']' => Some(TokenKind::ArrEnd),
            b',' => Some(TokenKind::Comma),
            b':' => Some(TokenKind::Colon),
            _ => None,
        };
        if let Some(kind) = single {
            self.pos += 1;
            return Token { kind, index };
        }
        match self.at(index) {
            0 => Token { kind: TokenKind::End, index },
            b'"' => self.string_token(),
            b'-' | b'0'..=b'9' => {
                if !self.settings.decode_invalid_numbers && self.is_invalid_number() {
                    return self.error("invalid number");
                }
                self.number_token()
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => self.word_token(),
            _ => self.error("invalid token"),
        }
    }

    /// A token at the current position that starts with a letter or `+`.
    fn word_token(&mut self) -> Token {
        let index = self.pos;
        for (word, kind) in [
            (&b"true"[..], TokenKind::Boolean(true)),
            (&b"false"[..], TokenKind::Boolean(false)),
            (&b"null"[..], TokenKind::Null),
        ] {
            if self.json[index..].starts_with(word) {
                self.pos += word.len();
                return Token { kind, index };
            }
        }
        if self.settings.decode_invalid_numbers && self.is_invalid_number() {
            return self.number_token();
        }
        self.error("invalid token")
    }

    /// An error token at the current position.
    fn error(&self, reason: &'static str) -> Token {
        Token { kind: TokenKind::Error(reason), index: self.pos }
    }

    /// Numbers strict JSON forbids but `strtod` takes: a leading `+`, leading zeros, hex,
    /// `inf` and `nan`.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.pos;
        match self.at(p) {
            b'+' => return true,
            b'-' => p += 1,
            _ => {}
        }
        match self.at(p) {
            b'0' => {
                let next = self.at(p + 1);
                next | 0x20 == b'x' || next.is_ascii_digit()
            }
            c if c <= b'9' => false,
            _ => {
                starts_with_ignore_case(self.json, p, b"inf")
                    || starts_with_ignore_case(self.json, p, b"nan")
            }
        }
    }

    fn number_token(&mut self) -> Token {
        let index = self.pos;
        match strtod(self.json, index, false) {
            Some((n, end)) => {
                self.pos = end;
                Token { kind: TokenKind::Number(n), index }
            }
            None => self.error("invalid number"),
        }
    }

    /// A string token; its text goes to `self.text`.
    fn string_token(&mut self) -> Token {
        let index = self.pos;
        self.pos += 1;
        self.text.clear();
        loop {
            let c = self.at(self.pos);
            match c {
                b'"' => break,
                0 => return self.error("unexpected end of string"),
                b'\\' => {
                    let escaped = match self.at(self.pos + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            if self.unicode_escape() {
                                continue;
                            }
                            return self.error("invalid unicode escape code");
                        }
                        _ => return self.error("invalid escape code"),
                    };
                    self.text.push(escaped);
                    self.pos += 2;
                }
                _ => {
                    self.text.push(c);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        Token { kind: TokenKind::String, index }
    }

    /// `\uXXXX` (or a `\uD8xx\uDCxx` surrogate pair) at the current position, appended as
    /// UTF-8; false (position unchanged) when invalid.
    fn unicode_escape(&mut self) -> bool {
        let Some(mut code) = self.hex4(self.pos + 2) else {
            return false;
        };
        let mut length = 6;
        if code & 0xF800 == 0xD800 {
            if code & 0x400 != 0 {
                return false;
            }
            if self.at(self.pos + 6) != b'\\' || self.at(self.pos + 7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.pos + 8) else {
                return false;
            };
            if low & 0xFC00 != 0xDC00 {
                return false;
            }
            code = (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            length = 12;
        }
        push_utf8(&mut self.text, code);
        self.pos += length;
        true
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        (0..4).try_fold(0u32, |acc, i| {
            let digit = char::from(self.at(at + i)).to_digit(16)?;
            Some(acc << 4 | digit)
        })
    }
}

/// What followed a value stored in its container.
enum Attached {
    /// There is no container: the value is the whole document.
    Done(Value),
    /// The container ended; its table is the next finished value.
    Closed(Value),
    /// A comma: the next value starts with this token.
    NextValue(Token),
}

fn parse_error(expected: &str, token: Token) -> mlua::Error {
    mlua::Error::RuntimeError(format!(
        "Expected {expected} but found {} at character {}",
        token.kind.describe(),
        token.index + 1
    ))
}

/// Appends code point `code` (at most 0x10FFFF) as UTF-8.
fn push_utf8(out: &mut Vec<u8>, code: u32) {
    // Each cast keeps the low 8 bits of a value already masked or shifted into range.
    match code {
        0..=0x7F => out.push(code as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (code >> 6) as u8, cont(code)]),
        0x800..=0xFFFF => {
            out.extend_from_slice(&[0xE0 | (code >> 12) as u8, cont(code >> 6), cont(code)])
        }
        _ => out.extend_from_slice(&[
            0xF0 | (code >> 18) as u8,
            cont(code >> 12),
            cont(code >> 6),
            cont(code),
        ]),
    }
}

/// A UTF-8 continuation byte carrying the low 6 bits of `bits`.
fn cont(bits: u32) -> u8 {
    0x80 | (bits & 0x3F) as u8
}

#[cfg(test)]
mod tests {
    //! Expected values are what Valkey 9.1.2 returned for the same script (`EVAL "..." 0`), with
    //! errors reduced to the Lua message (Valkey adds `user_script:1: ` and the script suffix).
    use super::{open, open_with};
    use mlua::{Function, Lua, MultiValue, Value};

    /// A Lua state with `cjson` open and its functions wrapped the way the embedding wraps
    /// them: an argument error becomes `luaL_argerror`'s message, named from the call site.
    fn lua() -> Lua {
        let lua = Lua::new();
        open_with(&lua, c_style).expect("open cjson");
        lua
    }

    fn c_style(lua: &Lua, function: Function) -> mlua::Result<Function> {
        lua.create_function(move |lua, args: MultiValue| {
            function
                .call::<MultiValue>(args)
                .map_err(|e| mlua::Error::RuntimeError(c_api_message(lua, &e)))
        })
    }

    /// The message a C function raising `error` would give (`luaL_argerror` for argument
    /// errors, as the embedding does), called as the running function was.
    fn c_api_message(lua: &Lua, error: &mlua::Error) -> String {
        let (pos, extra) = match root(error) {
            mlua::Error::BadArgument { pos, cause, .. } => (*pos, root_message(root(cause))),
            other => return root_message(other),
        };
        let names = lua.inspect_stack(0, |debug| {
            let names = debug.names();
            (names.name.map(|name| name.into_owned()), names.name_what)
        });
        let (name, what) = names.unwrap_or((None, None));
        let name = name.unwrap_or_else(|| "?".to_owned());
        match (what, pos) {
            (Some("method"), 1) => format!("calling '{name}' on bad self ({extra})"),
            (Some("method"), pos) => format!("bad argument #{} to '{name}' ({extra})", pos - 1),
            _ => format!("bad argument #{pos} to '{name}' ({extra})"),
        }
    }

    fn root(mut error: &mlua::Error) -> &mlua::Error {
        while let mlua::Error::CallbackError { cause, .. } = error {
            error = cause;
        }
        error
    }

    fn root_message(error: &mlua::Error) -> String {
        match error {
            mlua::Error::RuntimeError(m) => m.clone(),
            other => format!("unexpected error {other}"),
        }
    }

    /// Runs `code` (which returns one value) with a fresh `cjson` and renders the result as
    /// `type:tostring`.
    fn run(code: &str) -> String {
        let lua = lua();
        let wrapped =
            format!("local r = (function() {code} end)() return type(r) .. ':' .. tostring(r)");
        match lua.load(&wrapped).eval::<mlua::LuaString>() {
            Ok(s) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
            Err(e) => format!("ERR {}", message(&e)),
        }
    }

    fn message(error: &mlua::Error) -> String {
        root_message(root(error))
    }

    fn check(cases: &[(&str, &str)]) {
        for (code, expected) in cases {
            assert_eq!(run(code), *expected, "script: {code}");
        }
    }

    #[test]
    fn plain_open_leaves_argument_errors_to_the_embedding() {
        let lua = Lua::new();
        open(&lua).expect("open cjson");
        let error = lua.load("return cjson.encode()").exec().expect_err("no argument");
        match root(&error) {
            mlua::Error::BadArgument { pos, cause, .. } => {
                assert_eq!(*pos, 1);
                assert_eq!(root_message(root(cause)), "expected 1 argument");
            }
            other => panic!("unexpected error {other}"),
        }
        let error = lua.load("return cjson.decode('[')").exec().expect_err("bad JSON");
        assert_eq!(message(&error), "Expected value but found T_END at character 2");
    }

    #[test]
    fn new_instances_are_wrapped_too() {
        check(&[
            (
                "local c = cjson.new() return c.encode()",
                "ERR bad argument #1 to 'encode' (expected 1 argument)",
            ),
            (
                "local c = cjson.new().new() return c.decode_max_depth(0)",
                "ERR bad argument #1 to 'decode_max_depth' (expected integer between 1 and \
                 2147483647)",
            ),
        ]);
    }

    #[test]
    fn module_fields() {
        check(&[
            ("return cjson._NAME .. ' ' .. cjson._VERSION", "string:cjson 2.1.0"),
            ("return type(cjson.null)", "string:userdata"),
            ("return tostring(cjson.null)", "string:userdata: (nil)"),
            ("return cjson.decode('null') == cjson.null", "boolean:true"),
            ("return type(cjson.new().new)", "string:function"),
            (
                "local a = cjson.new() local b = a.new() a.encode_max_depth(3) \
                 return b.encode_max_depth() .. ',' .. a.encode_max_depth() .. ',' .. \
                 cjson.encode_max_depth()",
                "string:1000,3,1000",
            ),
        ]);
    }

    #[test]
    fn encode_scalars_and_strings() {
        check(&[
            ("return cjson.encode(nil)", "string:null"),
            ("return cjson.encode(cjson.null)", "string:null"),
            ("return cjson.encode(true)", "string:true"),
            ("return cjson.encode('')", "string:\"\""),
            (
                r#"return cjson.encode("\0\1\31\127/\\\"\b\f\n\r\t\v")"#,
                r#"string:"\u0000\u0001\u001f\u007f\/\\\"\b\f\n\r\t\u000b""#,
            ),
            (r#"return cjson.encode("\200\255é")"#, "string:\"\u{FFFD}\u{FFFD}é\""),
            (r#"return cjson.encode({["a\0b"]=1})"#, r#"string:{"a\u0000b":1}"#),
            ("return cjson.encode(-0.0)", "string:-0"),
            ("return cjson.encode(0.1)", "string:0.1"),
            ("return cjson.encode(1e15)", "string:1e+15"),
            ("return cjson.encode(123456789012345678)", "string:1.2345678901235e+17"),
            (
                "return cjson.encode({1.5, 100, 1e100, -1e-100, 2^53, 123.456, 1e-5, 1e-4, 5e-324})",
                "string:[1.5,100,1e+100,-1e-100,9.007199254741e+15,123.456,1e-05,0.0001,\
                 4.9406564584125e-324]",
            ),
        ]);
    }

    #[test]
    fn encode_tables() {
        check(&[
            ("return cjson.encode({})", "string:{}"),
            ("return cjson.encode({{},{{}},{a={}}})", "string:[{},[{}],{\"a\":{}}]"),
            ("return cjson.encode({1,2,nil,4})", "string:[1,2,null,4]"),
            ("return cjson.encode({true,false})", "string:[true,false]"),
            ("return cjson.encode({a={b={c=1}}})", r#"string:{"a":{"b":{"c":1}}}"#),
            ("return cjson.encode({a=cjson.null})", r#"string:{"a":null}"#),
            (
                "return cjson.encode({[10]=1})",
                "string:[null,null,null,null,null,null,null,null,null,1]",
            ),
            ("return cjson.encode({[1.5]=1})", r#"string:{"1.5":1}"#),
            ("return cjson.encode({[0]=1})", r#"string:{"0":1}"#),
            ("return cjson.encode({[-1]=1})", r#"string:{"-1":1}"#),
            ("return cjson.encode({[1e10]=1})", r#"string:{"10000000000":1}"#),
            // A key beyond INT_MAX makes lua-cjson's `int` maximum INT_MIN.
            ("return cjson.encode({[1e10]=1, [1]=2})", "string:[2]"),
            ("return cjson.encode({[2^31]=1, [1]=2})", "string:[2]"),
            ("return cjson.encode({[1]=2, [2^31]=1})", r#"string:{"1":2,"2147483648":1}"#),
            (
                "return cjson.encode({[0.1]=1,[1.5]=2,[-1]=3,[2^53]=4,[-0.5]=5,[1e300]=6,[0]=7,\
                 [3]=8,[2^31]=9})",
                r#"string:{"0":7,"2147483648":9,"1e+300":6,"-0.5":5,"1.5":2,"0.1":1,"3":8,"9.007199254741e+15":4,"-1":3}"#,
            ),
        ]);
    }

    #[test]
    fn encode_sparse_arrays() {
        check(&[
            (
                "return cjson.encode({[1]=1,[2]=2,[20]=3})",
                "ERR Cannot serialise table: excessively sparse array",
            ),
            (
                "return cjson.encode({[11]=1})",
                "ERR Cannot serialise table: excessively sparse array",
            ),
            (
                "cjson.encode_sparse_array(true) return cjson.encode({[1]=1,[2]=2,[20]=3})",
                r#"string:{"1":1,"2":2,"20":3}"#,
            ),
            (
                "cjson.encode_sparse_array(false, 0) return cjson.encode({[20]=3})",
                "string:[null,null,null,null,null,null,null,null,null,null,null,null,null,null,\
                 null,null,null,null,null,3]",
            ),
            (
                "cjson.encode_sparse_array(false, 1, 0) return cjson.encode({[2]=3})",
                "ERR Cannot serialise table: excessively sparse array",
            ),
        ]);
    }

    #[test]
    fn encode_errors_and_invalid_numbers() {
        check(&[
            ("return cjson.encode()", "ERR bad argument #1 to 'encode' (expected 1 argument)"),
            ("return cjson.encode(1,2)", "ERR bad argument #1 to 'encode' (expected 1 argument)"),
            ("return cjson.encode(function() end)", "ERR Cannot serialise function: type not supported"),
            (
                "return cjson.encode(coroutine.create(function() end))",
                "ERR Cannot serialise thread: type not supported",
            ),
            (
                "return cjson.encode({[true]=1})",
                "ERR Cannot serialise boolean: table key must be a number or string",
            ),
            (
                "return cjson.encode({[{}]=1})",
                "ERR Cannot serialise table: table key must be a number or string",
            ),
            ("return cjson.encode(0/0)", "ERR Cannot serialise number: must not be NaN or Inf"),
            ("return cjson.encode({1, 1/0})", "ERR Cannot serialise number: must not be NaN or Inf"),
            ("return cjson.encode({[1/0]=1})", "ERR Cannot serialise number: must not be NaN or Inf"),
            (
                "cjson.encode_invalid_numbers(true) return cjson.encode({1/0, -1/0, 0/0, -(0/0)})",
                "string:[inf,-inf,nan,nan]",
            ),
            (
                "cjson.encode_invalid_numbers(true) return cjson.encode({[1/0]=5})",
                r#"string:{"inf":5}"#,
            ),
            (
                "cjson.encode_invalid_numbers('null') return cjson.encode({1/0, -1/0, 0/0, [1/0]=5})",
                r#"string:{"1":null,"2":null,"3":null,"null":5}"#,
            ),
            (
                "cjson.encode_number_precision(3) return cjson.encode({3.14159, 1234567, 0.0001234})",
                "string:[3.14,1.23e+06,0.000123]",
            ),
            (
                "cjson.encode_number_precision(1) \
                 return cjson.encode({3.14159, 1234567, 0.0001234, 15, 25, 0.5})",
                "string:[3,1e+06,0.0001,2e+01,2e+01,0.5]",
            ),
        ]);
    }

    #[test]
    fn encode_depth_limits() {
        check(&[
            (
                "local t = {} t[1] = t return cjson.encode(t)",
                "ERR Cannot serialise, excessive nesting (1001)",
            ),
            (
                "local t = {} t.a = t return cjson.encode(t)",
                "ERR Cannot serialise, excessive nesting (1001)",
            ),
            ("cjson.encode_max_depth(2) return cjson.encode({{1}})", "string:[[1]]"),
            (
                "cjson.encode_max_depth(2) return cjson.encode({{{1}}})",
                "ERR Cannot serialise, excessive nesting (3)",
            ),
            (
                "cjson.encode_max_depth(1) return cjson.encode({{}})",
                "ERR Cannot serialise, excessive nesting (2)",
            ),
            // Beyond ~8000 Lua stack slots lua_checkstack fails first.
            (
                "cjson.encode_max_depth(2^31-1) local t = {} t[1] = t return cjson.encode(t)",
                "ERR Cannot serialise, excessive nesting (7998)",
            ),
            (
                "cjson.encode_max_depth(2^31-1) local t = {} t.a = t return cjson.encode(t)",
                "ERR Cannot serialise, excessive nesting (4000)",
            ),
            (
                "cjson.encode_max_depth(2^31-1) local t = {} t[1] = {a = t} return cjson.encode(t)",
                "ERR Cannot serialise, excessive nesting (5333)",
            ),
            (
                "cjson.encode_max_depth(2^31-1) local t = {} t.a = {t} return cjson.encode(t)",
                "ERR Cannot serialise, excessive nesting (5332)",
            ),
            (
                "cjson.encode_max_depth(2^31-1) local t = {} local c = t \
                 for i=1,7996 do c[1] = {} c = c[1] end return #cjson.encode(t)",
                "number:15994",
            ),
            (
                "cjson.encode_max_depth(2^31-1) local t = {} local c = t \
                 for i=1,3999 do c.k = {} c = c.k end return #cjson.encode(t)",
                "ERR Cannot serialise, excessive nesting (4000)",
            ),
        ]);
    }

    #[test]
    fn decode_values() {
        check(&[
            ("return cjson.decode('[[[[1]]]]')[1][1][1][1]", "number:1"),
            ("return cjson.decode(123)", "number:123"),
            ("return cjson.decode(0.1)", "number:0.1"),
            ("return cjson.decode(1e20)", "number:1e+20"),
            ("return cjson.decode('  [ 1 , 2 ]  ')[2]", "number:2"),
            ("return cjson.decode('\\t\\r\\n 5 \\t\\r\\n')", "number:5"),
            ("return cjson.decode('{\"a\":1,\"a\":2}').a", "number:2"),
            ("return cjson.decode('{\"\":1}')['']", "number:1"),
            ("return cjson.decode('{\"1\":1}')['1']", "number:1"),
            ("return cjson.decode('true')", "boolean:true"),
            ("return #cjson.decode('[null, null, 3]')", "number:3"),
            ("return cjson.encode(cjson.decode('{}'))", "string:{}"),
            (
                "return cjson.encode(cjson.decode('[null, true, false]'))",
                "string:[null,true,false]",
            ),
            (
                r#"return cjson.decode('"\\/\\b\\f\\n\\r\\t\\"\\\\"')"#,
                "string:/\u{8}\u{c}\n\r\t\"\\",
            ),
            (r#"return cjson.decode('"\\u0041\\u00e9\\u20ac"')"#, "string:Aé€"),
            (
                r#"return cjson.encode(cjson.decode('"\\u00e9\\ud83d\\ude00\\u0000x"'))"#,
                "string:\"é😀\\u0000x\"",
            ),
            (r#"return cjson.decode('"\\udbff\\udfff"')"#, "string:\u{10FFFF}"),
            ("return cjson.decode('1 \\0 x')", "number:1"),
        ]);
    }

    #[test]
    fn decode_numbers() {
        check(&[
            ("return cjson.decode('+5')", "number:5"),
            ("return cjson.decode('01')", "number:1"),
            ("return cjson.decode('-01.5')", "number:-1.5"),
            ("return cjson.decode('0x1F')", "number:31"),
            ("return cjson.decode('-0x1p3')", "number:-8"),
            ("return cjson.decode('0x1.8p1')", "number:3"),
            ("return cjson.decode('0x.8')", "number:0.5"),
            ("return cjson.decode('-.5')", "number:-0.5"),
            ("return cjson.decode('[1.]')[1]", "number:1"),
            ("return cjson.decode('[1.e2]')[1]", "number:100"),
            ("return cjson.decode('-0')", "number:-0"),
            (
                "return cjson.encode(cjson.decode('[-0.0, 1E2, 1e-2, 5E+1]'))",
                "string:[-0,100,0.01,50]",
            ),
            ("return cjson.decode('nan')", "number:nan"),
            ("return cjson.decode('-nan')", "number:-nan"),
            ("return cjson.decode('NaN(abc)')", "number:nan"),
            ("return cjson.decode('Infinity')", "number:inf"),
            ("return cjson.decode('-inf')", "number:-inf"),
            ("return cjson.decode('+inf')", "number:inf"),
            ("return cjson.decode('1e400')", "number:inf"),
            ("return cjson.decode('1e-400')", "number:0"),
            ("return cjson.decode('2.4703282292062328e-324')", "number:4.9406564584125e-324"),
            ("return cjson.decode('0x1.fffffffffffff8p1023')", "number:inf"),
            ("return cjson.decode('0x1.fffffffffffff7p1023')", "number:1.7976931348623e+308"),
            ("return cjson.decode('0x1p-1075')", "number:0"),
            ("return cjson.decode('0x1.0000000000001p-1075')", "number:4.9406564584125e-324"),
            ("return cjson.decode('0x1.8p-1074')", "number:9.8813129168249e-324"),
            ("return cjson.decode('0x3p-1076')", "number:4.9406564584125e-324"),
            ("return cjson.decode('0x1.00000000000008p0') - 1", "number:0"),
            ("return cjson.decode('0x1.00000000000018p0') - 1", "number:4.4408920985006e-16"),
            (
                "return cjson.decode('0x1.000000000000080000000000001p0') - 1",
                "number:2.2204460492503e-16",
            ),
            ("return cjson.decode('0x123456789abcdef0123p0')", "number:5.3730036427317e+21"),
            ("return cjson.decode('0x1p99999999999999999999')", "number:inf"),
            ("return cjson.decode('0x1p-99999999999999999999')", "number:0"),
        ]);
    }

    #[test]
    fn decode_errors() {
        check(&[
            ("return cjson.decode()", "ERR bad argument #1 to 'decode' (expected 1 argument)"),
            (
                "return cjson.decode(nil)",
                "ERR bad argument #1 to 'decode' (string expected, got nil)",
            ),
            (
                "return cjson.decode({})",
                "ERR bad argument #1 to 'decode' (string expected, got table)",
            ),
            ("return cjson.decode('')", "ERR Expected value but found T_END at character 1"),
            ("return cjson.decode(' ')", "ERR Expected value but found T_END at character 2"),
            ("return cjson.decode('1\\0')", "ERR JSON parser does not support UTF-16 or UTF-32"),
            ("return cjson.decode('\\0')", "ERR Expected value but found T_END at character 1"),
            (
                "return cjson.decode('[1,]')",
                "ERR Expected value but found T_ARR_END at character 4",
            ),
            (
                "return cjson.decode('[1 2]')",
                "ERR Expected comma or array end but found T_NUMBER at character 4",
            ),
            (
                "return cjson.decode('{\"a\" 1}')",
                "ERR Expected colon but found T_NUMBER at character 6",
            ),
            (
                "return cjson.decode('{1:1}')",
                "ERR Expected object key string but found T_NUMBER at character 2",
            ),
            (
                "return cjson.decode('{\"a\":1,}')",
                "ERR Expected object key string but found T_OBJ_END at character 8",
            ),
            (
                "return cjson.decode('{\"a\":1 \"b\"}')",
                "ERR Expected comma or object end but found T_STRING at character 8",
            ),
            (
                "return cjson.decode('{\"a\":1}{')",
                "ERR Expected the end but found T_OBJ_BEGIN at character 8",
            ),
            (
                "return cjson.decode('{')",
                "ERR Expected object key string but found T_END at character 2",
            ),
            ("return cjson.decode('[')", "ERR Expected value but found T_END at character 2"),
            (
                "return cjson.decode('{\"a\"::1}')",
                "ERR Expected value but found T_COLON at character 6",
            ),
            (
                "return cjson.decode('[1,,2]')",
                "ERR Expected value but found T_COMMA at character 4",
            ),
            (
                "return cjson.decode('[1] x')",
                "ERR Expected the end but found invalid token at character 5",
            ),
            (
                "return cjson.decode('nul')",
                "ERR Expected value but found invalid token at character 1",
            ),
            (
                "return cjson.decode('trueX')",
                "ERR Expected the end but found invalid token at character 5",
            ),
            (
                "return cjson.decode('.5')",
                "ERR Expected value but found invalid token at character 1",
            ),
            (
                "return cjson.decode('\\f1')",
                "ERR Expected value but found invalid token at character 1",
            ),
            (
                "return cjson.decode('-')",
                "ERR Expected value but found invalid number at character 1",
            ),
            (
                "return cjson.decode('+')",
                "ERR Expected value but found invalid number at character 1",
            ),
            (
                "return cjson.decode('- 5')",
                "ERR Expected value but found invalid number at character 1",
            ),
            (
                "return cjson.decode('0x')",
                "ERR Expected the end but found invalid token at character 2",
            ),
            (
                "return cjson.decode('0x1p+')",
                "ERR Expected the end but found invalid token at character 4",
            ),
            (
                "return cjson.decode('nan(abc')",
                "ERR Expected the end but found invalid token at character 4",
            ),
            (
                "return cjson.decode('infinite')",
                "ERR Expected the end but found invalid token at character 4",
            ),
            (
                "return cjson.decode('[1e]')",
                "ERR Expected comma or array end but found invalid token at character 3",
            ),
            (
                "return cjson.decode('\"abc')",
                "ERR Expected value but found unexpected end of string at character 5",
            ),
            (
                "return cjson.decode('\"a\\0b\"')",
                "ERR Expected value but found unexpected end of string at character 3",
            ),
            (
                "return cjson.decode('\"\\\\x\"')",
                "ERR Expected value but found invalid escape code at character 2",
            ),
            (
                "return cjson.decode('\"\\\\')",
                "ERR Expected value but found invalid escape code at character 2",
            ),
            (
                "return cjson.decode('\"\\\\ud83d\"')",
                "ERR Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "return cjson.decode('\"\\\\ude00\"')",
                "ERR Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "return cjson.decode('\"\\\\ud83d\\\\u0041\"')",
                "ERR Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "return cjson.decode('\"\\\\u12G4\"')",
                "ERR Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "return cjson.decode('\"ab\\\\u00\"')",
                "ERR Expected value but found invalid unicode escape code at character 4",
            ),
        ]);
    }

    #[test]
    fn decode_strict_numbers() {
        let off = "cjson.decode_invalid_numbers(false) return ";
        let cases = [
            ("cjson.decode('+5')", "ERR Expected value but found invalid token at character 1"),
            ("cjson.decode('01')", "ERR Expected value but found invalid number at character 1"),
            ("cjson.decode('-0x10')", "ERR Expected value but found invalid number at character 1"),
            ("cjson.decode('nan')", "ERR Expected value but found invalid token at character 1"),
            ("cjson.decode('-inf')", "ERR Expected value but found invalid number at character 1"),
            (
                "cjson.decode('Infinity')",
                "ERR Expected value but found invalid token at character 1",
            ),
            (
                "cjson.decode('[1, -x]')",
                "ERR Expected value but found invalid number at character 5",
            ),
            ("cjson.encode(cjson.decode('[0, -0, 1, 0.5, -0.5e1]'))", "string:[0,-0,1,0.5,-5]"),
        ];
        for (code, expected) in cases {
            assert_eq!(run(&format!("{off}{code}")), expected, "{code}");
        }
    }

    #[test]
    fn decode_depth_limits() {
        check(&[
            (
                "return cjson.decode(string.rep('[', 1001))",
                "ERR Found too many nested data structures (1001) at character 1001",
            ),
            ("return #cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))", "number:1"),
            (
                "cjson.decode_max_depth(2) return cjson.decode('[[[1]]]')",
                "ERR Found too many nested data structures (3) at character 3",
            ),
            (
                "cjson.decode_max_depth(2) return cjson.decode('{\"a\":{\"b\":[1]}}')",
                "ERR Found too many nested data structures (3) at character 11",
            ),
            (
                "cjson.decode_max_depth(2^31-1) return cjson.decode(string.rep('[', 10000))",
                "ERR Found too many nested data structures (7999) at character 7999",
            ),
            (
                "cjson.decode_max_depth(2^31-1) return cjson.decode(string.rep('{\"a\":', 10000))",
                "ERR Found too many nested data structures (4000) at character 19996",
            ),
            (
                "cjson.decode_max_depth(2^31-1) return cjson.decode(string.rep('[{\"a\":', 10000))",
                "ERR Found too many nested data structures (5333) at character 15997",
            ),
            (
                "cjson.decode_max_depth(2^31-1) cjson.encode_max_depth(2^31-1) return \
                 #cjson.encode(cjson.decode(string.rep('[', 7000) .. string.rep(']', 7000)))",
                "number:14000",
            ),
            (
                "cjson.decode_max_depth(2^31-1) cjson.encode_max_depth(2^31-1) \
                 local s = string.rep('{\"k\":', 3998) .. '1' .. string.rep('}', 3998) \
                 return #cjson.encode(cjson.decode(s))",
                "number:23989",
            ),
        ]);
    }

    #[test]
    fn configuration_functions() {
        check(&[
            (
                "local a, b, c = cjson.encode_sparse_array() return tostring(a)..','..b..','..c",
                "string:false,2,10",
            ),
            (
                "local a, b, c = cjson.encode_sparse_array('on', 3, 4) \
                 return tostring(a)..','..b..','..c",
                "string:true,3,4",
            ),
            ("return cjson.encode_max_depth()", "number:1000"),
            ("return cjson.decode_max_depth(5)", "number:5"),
            ("return cjson.encode_max_depth(2^32+5)", "number:5"),
            ("return cjson.encode_max_depth(1.9)", "number:1"),
            ("return cjson.encode_max_depth('7')", "number:7"),
            ("return cjson.encode_max_depth(' 0x10 ')", "number:16"),
            ("return cjson.encode_max_depth('1e2')", "number:100"),
            ("return cjson.encode_number_precision()", "number:14"),
            ("return cjson.encode_number_precision('3\\0')", "number:3"),
            ("return cjson.encode_invalid_numbers()", "boolean:false"),
            ("return cjson.encode_invalid_numbers('null')", "string:null"),
            ("return cjson.encode_invalid_numbers('on')", "boolean:true"),
            ("return cjson.decode_invalid_numbers()", "boolean:true"),
            ("return cjson.decode_invalid_numbers('off')", "boolean:false"),
            ("return cjson.encode_keep_buffer()", "boolean:true"),
            ("return cjson.encode_keep_buffer(false)", "boolean:false"),
            ("return cjson.encode_sparse_array('on\\0x')", "boolean:true"),
        ]);
    }

    #[test]
    fn configuration_errors() {
        let range = |f: &str, max: &str| {
            format!("ERR bad argument #1 to '{f}' (expected integer between 1 and {max})")
        };
        let depth = range("encode_max_depth", "2147483647");
        check(&[
            ("return cjson.encode_max_depth(0)", &depth),
            ("return cjson.encode_max_depth(0/0)", &depth),
            ("return cjson.encode_max_depth(2^31)", &depth),
            ("return cjson.encode_max_depth(2^63)", &depth),
            ("return cjson.encode_max_depth(-2^31)", &depth),
            ("return cjson.encode_max_depth('0')", &depth),
            ("return cjson.decode_max_depth(0)", &range("decode_max_depth", "2147483647")),
            ("return cjson.encode_number_precision(15)", &range("encode_number_precision", "14")),
            ("return cjson.encode_number_precision(0)", &range("encode_number_precision", "14")),
            (
                "return cjson.encode_max_depth(1,2)",
                "ERR bad argument #2 to 'encode_max_depth' (found too many arguments)",
            ),
            (
                "return cjson.encode_max_depth('12abc')",
                "ERR bad argument #1 to 'encode_max_depth' (number expected, got string)",
            ),
            (
                "return cjson.encode_max_depth(true)",
                "ERR bad argument #1 to 'encode_max_depth' (number expected, got boolean)",
            ),
            (
                "return cjson.encode_sparse_array(nil, -1)",
                "ERR bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)",
            ),
            (
                "return cjson.encode_sparse_array(nil, 1, -1)",
                "ERR bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)",
            ),
            (
                "return cjson.encode_sparse_array(nil, 'x')",
                "ERR bad argument #2 to 'encode_sparse_array' (number expected, got string)",
            ),
            (
                "return cjson.encode_sparse_array(nil, nil, true)",
                "ERR bad argument #3 to 'encode_sparse_array' (number expected, got boolean)",
            ),
            (
                "return cjson.encode_sparse_array('yes')",
                "ERR bad argument #1 to 'encode_sparse_array' (invalid option 'yes')",
            ),
            (
                "return cjson.encode_sparse_array(1)",
                "ERR bad argument #1 to 'encode_sparse_array' (invalid option '1')",
            ),
            (
                "return cjson.encode_sparse_array({})",
                "ERR bad argument #1 to 'encode_sparse_array' (string expected, got table)",
            ),
            (
                "return cjson.encode_sparse_array(1,2,3,4)",
                "ERR bad argument #4 to 'encode_sparse_array' (found too many arguments)",
            ),
            (
                "return cjson.encode_invalid_numbers('maybe')",
                "ERR bad argument #1 to 'encode_invalid_numbers' (invalid option 'maybe')",
            ),
            (
                "return cjson.decode_invalid_numbers('null')",
                "ERR bad argument #1 to 'decode_invalid_numbers' (invalid option 'null')",
            ),
            (
                "return cjson.encode_keep_buffer(nil, nil)",
                "ERR bad argument #2 to 'encode_keep_buffer' (found too many arguments)",
            ),
        ]);
    }

    #[test]
    fn argument_errors_name_the_function_as_called() {
        check(&[
            (
                "local f = cjson.encode return f()",
                "ERR bad argument #1 to 'f' (expected 1 argument)",
            ),
            (
                "return cjson:encode_max_depth()",
                "ERR calling 'encode_max_depth' on bad self (number expected, got table)",
            ),
            (
                "return cjson:decode()",
                "ERR calling 'decode' on bad self (string expected, got table)",
            ),
            (
                "return cjson:encode_sparse_array(1, 2, 3)",
                "ERR bad argument #3 to 'encode_sparse_array' (found too many arguments)",
            ),
            (
                "local t = cjson return t:encode()",
                "ERR Cannot serialise function: type not supported",
            ),
        ]);
        // Called with no Lua caller (as through pcall), the name is unknown.
        let lua = lua();
        let encode: Function = lua.load("return cjson.encode").eval().expect("function");
        let error = encode.call::<Value>(()).expect_err("no argument");
        assert_eq!(message(&error), "bad argument #1 to '?' (expected 1 argument)");
    }

    #[test]
    fn round_trip_keeps_values() {
        check(&[(
            "local s = '[1,\"a\",{\"k\":[true,false,null]},-2.5,\"\\\\u00e9\"]' \
             return cjson.encode(cjson.decode(s))",
            "string:[1,\"a\",{\"k\":[true,false,null]},-2.5,\"é\"]",
        )]);
    }
}
