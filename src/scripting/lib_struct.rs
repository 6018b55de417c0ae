//! The `struct` library: Roberto Ierusalimschy's `struct` (version 1.7, 2018) as Valkey bundles
//! it, loaded as the global `struct` with `pack(fmt, ...)`, `unpack(fmt, data [, pos])` (the
//! values, then the position after them) and `size(fmt)`.
//!
//! Formats are read as Valkey's build reads them, up to the first NUL byte: `>` big endian, `<`
//! little endian (native, little on x86-64, is the default), `!n` maximum alignment (a power of
//! two; 8 when `n` is absent; alignment 1 at the start), `x` a zero byte, `b/B` 1 byte, `h/H` 2,
//! `l/L` 8, `T` 8, `i/I[n]` an `n`-byte integer (4 by default, at most 32), `f` float, `d`
//! double, `c[n]` `n` characters (`c0`: the whole string when packing, the length given by the
//! previous value when unpacking), `s` a zero-terminated string, `' '` ignored. Everything else
//! (`=` too, which this version does not know) is "invalid format option". The sizes are those
//! of x86-64 Linux, the platform Valkey's build uses.
//!
//! The C library's integer conversions are reproduced as x86-64 executes them: integers are
//! packed from a 64-bit value (bytes past the eighth are zero, out-of-range doubles become
//! 0x8000000000000000 or 0 as `cvttsd2si` and GCC's unsigned conversion give them), unpacking
//! keeps the low 64 bits of the number and sign-extends it with a shift count taken modulo 64,
//! and the `pos` argument wraps as a `size_t`. The limits match too: integral sizes up to 32, format
//! numbers up to `INT_MAX` ("integral size overflow"), and at most as many results as Lua 5.1's
//! C stack allows (8000 slots, arguments included: "stack overflow (too many results)").
//!
//! Errors are what the C library raises, in mlua's terms: an argument error (`bad argument
//! #2 to 'unpack' (data string too short)`) is an `mlua::Error::BadArgument { pos, cause:
//! RuntimeError("data string too short") }`, which the scripting engine's C-function wrapper
//! (`scripting::cfunc`) raises through Lua's own `luaL_argerror` (the name the caller used,
//! `calling 'f' on bad self` for a method); the others (`integral size overflow`...) are
//! `RuntimeError`s with the bare message, which the wrapper prefixes with the position.
//!
//! Deliberate differences: an "invalid format option" error for a byte that is not ASCII
//! carries U+FFFD where Valkey's message has the raw byte, as Rust strings must be UTF-8.
//! `unpack` gives up to 23 fewer results than Valkey before "stack overflow (too many
//! results)" (see `CALLBACK_STACK_RESERVE`). NaN payloads are narrowed and widened
//! between `f` and `d` explicitly, as the x86-64 instructions do.

use super::cfunc::{arg_error, type_name};
use mlua::{Lua, LuaString, MultiValue, Value};

/// The largest `i`/`I` size in bytes.
const MAX_INT_SIZE: i32 = 32;
/// The alignment `!` without a number selects: the alignment of a double on x86-64.
const MAX_ALIGN: i32 = 8;
/// Lua 5.1's limit on the stack slots one C function may use (`LUAI_MAXCSTACK`).
const MAX_C_STACK: usize = 8000;
/// Stack slots mlua's callback machinery needs beyond what Lua 5.1 gives a C function. On a
/// callback's first call (and the first after a callback error) mlua keeps a preallocated
/// error object below the arguments and, to rotate it away after pushing the results, asks
/// for `2 + LUA_MINSTACK` (22) more slots. Raising the "too many results" error this much
/// earlier than Valkey keeps mlua's own stack error from ever appearing.
const CALLBACK_STACK_RESERVE: usize = 23;
/// 2^63 as a double: where `cvttsd2si` stops being exact for unsigned conversions.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// Creates the `struct` table and sets it as a global.
pub fn open(lua: &Lua) -> mlua::Result<()> {
    let library = lua.create_table()?;
    library.set("pack", lua.create_function(|lua, args: MultiValue| pack(lua, &args))?)?;
    library.set("unpack", lua.create_function(|lua, args: MultiValue| unpack(lua, &args))?)?;
    library.set("size", lua.create_function(|lua, args: MultiValue| size(lua, &args))?)?;
    lua.globals().set("struct", library)
}

/// Byte order and maximum alignment, changed by the control options.
struct Header {
    little: bool,
    align: usize,
}

impl Header {
    fn new() -> Self {
        Header { little: cfg!(target_endian = "little"), align: 1 }
    }
}

/// The unread part of a format string.
struct Format<'a> {
    rest: &'a [u8],
}

impl<'a> Format<'a> {
    /// A format ends at its first NUL byte, as a C string does.
    fn new(bytes: &'a [u8]) -> Self {
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Format { rest: &bytes[..end] }
    }

    fn next_option(&mut self) -> Option<u8> {
        let (&first, rest) = self.rest.split_first()?;
        self.rest = rest;
        Some(first)
    }

    /// The decimal number that follows, or `default` when no digit follows.
    fn number(&mut self, default: i32) -> mlua::Result<i32> {
        if !self.rest.first().is_some_and(u8::is_ascii_digit) {
            return Ok(default);
        }
        let mut value: i32 = 0;
        while let Some(&digit) = self.rest.first().filter(|d| d.is_ascii_digit()) {
            let digit = i32::from(digit - b'0');
            if value > i32::MAX / 10 || value * 10 > i32::MAX - digit {
                return Err(runtime("integral size overflow"));
            }
            value = value * 10 + digit;
            self.rest = &self.rest[1..];
        }
        Ok(value)
    }
}

/// The size in bytes of an option (reading its number), 0 for options without data.
fn option_size(fmt: &mut Format, opt: u8) -> mlua::Result<usize> {
    Ok(match opt {
        b'b' | b'B' | b'x' => 1,
        b'h' | b'H' => 2,
        b'f' => 4,
        b'l' | b'L' | b'T' | b'd' => 8,
        b'c' => non_negative(fmt.number(1)?),
        b'i' | b'I' => {
            let size = fmt.number(4)?;
            if size > MAX_INT_SIZE {
                return Err(runtime(format!(
                    "integral size {size} is larger than limit of {MAX_INT_SIZE}"
                )));
            }
            non_negative(size)
        }
        _ => 0,
    })
}

/// Format numbers are never negative; this is only the type change.
fn non_negative(n: i32) -> usize {
    usize::try_from(n).unwrap_or(0)
}

/// The padding an item of `size` bytes needs at offset `len` (sizes above the alignment are
/// aligned to it; `c` items and sizeless options are never aligned).
fn padding(len: usize, header: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(header.align);
    (size - (len & (size - 1))) & (size - 1)
}

/// Applies a control option (`' '`, `>`, `<`, `!n`); anything else is an invalid option.
fn control(lua: &Lua, opt: u8, fmt: &mut Format, header: &mut Header) -> mlua::Result<()> {
    match opt {
        b' ' => {}
        b'>' => header.little = false,
        b'<' => header.little = true,
        b'!' => {
            let align = fmt.number(MAX_ALIGN)?;
            if align <= 0 || align & (align - 1) != 0 {
                return Err(runtime(format!("alignment {align} is not a power of 2")));
            }
            header.align = non_negative(align);
        }
        _ => {
            let mut msg = b"invalid format option '".to_vec();
            msg.extend_from_slice(&[opt, b'\'']);
            return Err(arg_error(lua, 1, String::from_utf8_lossy(&msg)));
        }
    }
    Ok(())
}

fn is_integer_option(opt: u8) -> bool {
    matches!(opt, b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I')
}

/// `struct.pack(fmt, ...)`.
fn pack(lua: &Lua, args: &MultiValue) -> mlua::Result<LuaString> {
    let fmt_string = check_string(lua, args.front(), 1)?;
    let fmt_bytes = fmt_string.as_bytes();
    let mut fmt = Format::new(&fmt_bytes);
    let mut header = Header::new();
    let mut out = Vec::new();
    let mut arg = 2;
    while let Some(opt) = fmt.next_option() {
        let size = option_size(&mut fmt, opt)?;
        let pad = padding(out.len(), &header, opt, size);
        out.resize(out.len() + pad, 0);
        match opt {
            _ if is_integer_option(opt) => {
                let n = check_number(lua, pack_arg(args, arg), arg)?;
                put_integer(&mut out, n, header.little, size);
                arg += 1;
            }
            b'x' => out.push(0),
            b'f' => {
                let n = check_number(lua, pack_arg(args, arg), arg)?;
                put_ordered(&mut out, &narrow(n).to_bits().to_le_bytes(), header.little);
                arg += 1;
            }
            b'd' => {
                let n = check_number(lua, pack_arg(args, arg), arg)?;
                put_ordered(&mut out, &n.to_bits().to_le_bytes(), header.little);
                arg += 1;
            }
            b'c' | b's' => {
                let s = check_string(lua, pack_arg(args, arg), arg)?;
                arg += 1;
                put_chars(lua, &mut out, &s.as_bytes(), opt, size, arg)?;
            }
            _ => control(lua, opt, &mut fmt, &mut header)?,
        }
    }
    lua.create_string(&out)
}

/// A value argument of `pack`. The C library pushes a nil right after the arguments, so the
/// first missing one reads as nil rather than "no value" (and no later one is ever read).
fn pack_arg(args: &MultiValue, idx: usize) -> Option<&Value> {
    const NIL: &Value = &Value::Nil;
    Some(args.get(idx - 1).unwrap_or(NIL))
}

/// Writes the low `size` bytes of the 64-bit conversion of `n` (zeros past the eighth byte).
fn put_integer(out: &mut Vec<u8>, n: f64, little: bool, size: usize) {
    let value = if n < 0.0 { double_to_i64(n) as u64 } else { double_to_u64(n) };
    let le = value.to_le_bytes();
    let bytes: Vec<u8> = (0..size).map(|i| le.get(i).copied().unwrap_or(0)).collect();
    put_ordered(out, &bytes, little);
}

/// Appends little-endian `bytes` in the selected byte order.
fn put_ordered(out: &mut Vec<u8>, bytes: &[u8], little: bool) {
    if little {
        out.extend_from_slice(bytes);
    } else {
        out.extend(bytes.iter().rev());
    }
}

/// `c` and `s`: the first `size` bytes of `s` (all of it for `c0` and `s`), and a zero after
/// an `s`. A too short string is an error on argument `next_arg`, one past the string, as in C.
fn put_chars(
    lua: &Lua,
    out: &mut Vec<u8>,
    s: &[u8],
    opt: u8,
    size: usize,
    next_arg: usize,
) -> mlua::Result<()> {
    let size = if size == 0 { s.len() } else { size };
    let Some(chars) = s.get(..size) else {
        return Err(arg_error(lua, next_arg, "string too short"));
    };
    out.extend_from_slice(chars);
    if opt == b's' {
        out.push(0);
    }
    Ok(())
}

/// `struct.unpack(fmt, data [, pos])`.
fn unpack(lua: &Lua, args: &MultiValue) -> mlua::Result<MultiValue> {
    let fmt_string = check_string(lua, args.front(), 1)?;
    let data_string = check_string(lua, args.get(1), 2)?;
    let start = match args.get(2) {
        None | Some(Value::Nil) => 1,
        value => check_integer(lua, value, 3)?,
    };
    // The offset is a size_t in C: negative offsets become huge ones.
    let mut pos = start as usize;
    if pos == 0 {
        return Err(arg_error(lua, 3, "offset must be 1 or greater"));
    }
    pos -= 1;
    let fmt_bytes = fmt_string.as_bytes();
    let data = data_string.as_bytes();
    let mut fmt = Format::new(&fmt_bytes);
    let mut header = Header::new();
    let mut results: Vec<Value> = Vec::new();
    while let Some(opt) = fmt.next_option() {
        let mut size = option_size(&mut fmt, opt)?;
        pos = pos.wrapping_add(padding(pos, &header, opt, size));
        check_fits(lua, data.len(), pos, size)?;
        if args.len() + results.len() + 2 > MAX_C_STACK - CALLBACK_STACK_RESERVE {
            return Err(runtime("stack overflow (too many results)"));
        }
        let item = &data[pos..pos + size];
        match opt {
            _ if is_integer_option(opt) => {
                let n = get_integer(item, header.little, opt.is_ascii_lowercase());
                results.push(Value::Number(n));
            }
            b'x' => {}
            b'f' => {
                let bits = u32::from_le_bytes(ordered(item, header.little));
                results.push(Value::Number(widen(f32::from_bits(bits))));
            }
            b'd' => {
                let bits = u64::from_le_bytes(ordered(item, header.little));
                results.push(Value::Number(f64::from_bits(bits)));
            }
            b'c' => {
                if size == 0 {
                    size = previous_size(lua, &mut results)?;
                    check_fits(lua, data.len(), pos, size)?;
                }
                results.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(len) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(runtime("unfinished string in data"));
                };
                results.push(Value::String(lua.create_string(&data[pos..pos + len])?));
                size = len + 1;
            }
            _ => control(lua, opt, &mut fmt, &mut header)?,
        }
        pos = pos.wrapping_add(size);
    }
    // The next position goes back to Lua through a (signed) lua_Integer.
    results.push(Value::Number(pos.wrapping_add(1) as i64 as f64));
    Ok(MultiValue::from_iter(results))
}

/// "data string too short" unless `size` bytes from `pos` are all in the data.
fn check_fits(lua: &Lua, len: usize, pos: usize, size: usize) -> mlua::Result<()> {
    if size > len || pos > len - size {
        return Err(arg_error(lua, 2, "data string too short"));
    }
    Ok(())
}

/// `c0` when unpacking: the previous result, which must be a number (or a string that
/// converts to one), is removed and gives the length.
fn previous_size(lua: &Lua, results: &mut Vec<Value>) -> mlua::Result<usize> {
    let previous = match results.last() {
        Some(value) => lua.coerce_number(value.clone())?,
        None => None,
    };
    let Some(n) = previous else {
        return Err(runtime("format 'c0' needs a previous size"));
    };
    results.pop();
    Ok(double_to_u64(n) as usize)
}

/// `bytes` (of length N) rearranged to little-endian order.
fn ordered<const N: usize>(bytes: &[u8], little: bool) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[..N]);
    if !little {
        out.reverse();
    }
    out
}

/// Reads an integer into 64 bits (bytes beyond the last eight read are shifted out) and
/// sign-extends it with a mask shifted by `size * 8 - 1` modulo 64, as x86-64 does.
fn get_integer(bytes: &[u8], little: bool, signed: bool) -> f64 {
    let fold = |acc: u64, &b: &u8| (acc << 8) | u64::from(b);
    let mut value =
        if little { bytes.iter().rev().fold(0, fold) } else { bytes.iter().fold(0, fold) };
    if !signed {
        return value as f64;
    }
    let shift = (bytes.len() as u32).wrapping_mul(8).wrapping_sub(1) & 63;
    let mask = u64::MAX << shift;
    if value & mask != 0 {
        value |= mask;
    }
    value as i64 as f64
}

/// A double converted to a signed 64-bit integer as `cvttsd2si` does: truncation, and
/// i64::MIN for NaN and values out of range.
fn double_to_i64(n: f64) -> i64 {
    if n.is_nan() || n >= TWO_POW_63 {
        i64::MIN
    } else {
        // Truncates; values below -2^63 saturate to i64::MIN as the instruction gives.
        n as i64
    }
}

/// A double converted to an unsigned 64-bit integer as GCC does on x86-64: below 2^63 (and
/// NaN) through `cvttsd2si`, otherwise by converting `n - 2^63` and flipping the top bit
/// (so values from 2^64 up become 0).
fn double_to_u64(n: f64) -> u64 {
    if n.is_nan() || n < TWO_POW_63 {
        double_to_i64(n) as u64
    } else {
        (double_to_i64(n - TWO_POW_63) as u64) ^ (1 << 63)
    }
}

/// Double to float as `cvtsd2ss`: rounding to nearest, a NaN keeps its sign and the top of
/// its payload and becomes quiet.
fn narrow(n: f64) -> f32 {
    if !n.is_nan() {
        return n as f32;
    }
    let bits = n.to_bits();
    let sign = ((bits >> 32) as u32) & 0x8000_0000;
    let payload = ((bits >> 29) as u32) & 0x003f_ffff;
    f32::from_bits(sign | 0x7fc0_0000 | payload)
}

/// Float to double as `cvtss2sd`: exact, a NaN keeps its sign and payload and becomes quiet.
fn widen(f: f32) -> f64 {
    if !f.is_nan() {
        return f64::from(f);
    }
    let bits = u64::from(f.to_bits());
    let sign = (bits & 0x8000_0000) << 32;
    let payload = (bits & 0x003f_ffff) << 29;
    f64::from_bits(sign | 0x7ff8_0000_0000_0000 | payload)
}

/// `struct.size(fmt)`.
fn size(lua: &Lua, args: &MultiValue) -> mlua::Result<f64> {
    let fmt_string = check_string(lua, args.front(), 1)?;
    let fmt_bytes = fmt_string.as_bytes();
    let mut fmt = Format::new(&fmt_bytes);
    let mut header = Header::new();
    let mut pos: usize = 0;
    while let Some(opt) = fmt.next_option() {
        let size = option_size(&mut fmt, opt)?;
        pos = pos.wrapping_add(padding(pos, &header, opt, size));
        if opt == b's' {
            return Err(arg_error(lua, 1, "option 's' has no fixed size"));
        }
        if opt == b'c' && size == 0 {
            return Err(arg_error(lua, 1, "option 'c0' has no fixed size"));
        }
        // Letters and digits without a size are skipped; only the rest are control options.
        if !opt.is_ascii_alphanumeric() {
            control(lua, opt, &mut fmt, &mut header)?;
        }
        pos = pos.wrapping_add(size);
    }
    Ok(pos as i64 as f64)
}

/// `luaL_checklstring`: a string, or a number converted as Lua converts it.
fn check_string(lua: &Lua, value: Option<&Value>, narg: usize) -> mlua::Result<LuaString> {
    let converted = match value {
        Some(Value::String(s)) => Some(s.clone()),
        Some(v @ (Value::Integer(_) | Value::Number(_))) => lua.coerce_string(v.clone())?,
        _ => None,
    };
    converted.ok_or_else(|| type_error(lua, narg, "string", value))
}

/// `luaL_checknumber`: a number, or a string Lua 5.1 converts to one.
fn check_number(lua: &Lua, value: Option<&Value>, narg: usize) -> mlua::Result<f64> {
    let converted = match value {
        Some(Value::Number(n)) => Some(*n),
        Some(Value::Integer(i)) => Some(*i as f64),
        Some(v @ Value::String(_)) => lua.coerce_number(v.clone())?,
        _ => None,
    };
    converted.ok_or_else(|| type_error(lua, narg, "number", value))
}

/// `luaL_checkinteger`: the number truncated to a 64-bit integer as `cvttsd2si` does it.
fn check_integer(lua: &Lua, value: Option<&Value>, narg: usize) -> mlua::Result<i64> {
    check_number(lua, value, narg).map(double_to_i64)
}

fn type_error(lua: &Lua, narg: usize, expected: &str, value: Option<&Value>) -> mlua::Error {
    arg_error(lua, narg, format!("{expected} expected, got {}", type_name(value)))
}

fn runtime(message: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(message.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Formats values as the oracle probe did: strings quoted with bytes other than letters,
    /// digits, punctuation and space as `\xNN`, numbers with `%.17g`.
    const SHOW: &str = r##"
        local function sh(v)
            if type(v) == "string" then
                return "\"" .. (v:gsub("[^%w%p ]", function(c)
                    return string.format("\\x%02x", c:byte())
                end)) .. "\""
            elseif type(v) == "number" then
                return string.format("%.17g", v)
            end
            return tostring(v)
        end
        local function show(...)
            local o = {}
            for i = 1, select("#", ...) do o[i] = sh((select(i, ...))) end
            return table.concat(o, " ")
        end
    "##;

    fn lua() -> Lua {
        let lua = Lua::new();
        open(&lua).expect("open struct");
        lua
    }

    use crate::scripting::cfunc::tests::root_message;

    /// The values of `expr` formatted by `SHOW`, or `error: <message>`.
    fn show(lua: &Lua, expr: &str) -> String {
        match lua.load(format!("{SHOW} return show({expr})")).eval::<String>() {
            Ok(s) => s,
            Err(e) => format!("error: {}", root_message(&e)),
        }
    }

    /// Expressions and what Valkey 9.1.2 answered for them (errors without the
    /// `user_script:N: ` position).
    const VALKEY_OBSERVED: &[(&str, &str)] = &[
        (r##"struct.pack("b", 1)"##, r##""\x01""##),
        (r##"struct.pack(">h<h", 1, 1)"##, r##""\x00\x01\x01\x00""##),
        (
            r##"struct.pack("=h", 1)"##,
            r##"error: bad argument #1 to 'pack' (invalid format option '=')"##,
        ),
        (r##"struct.pack("!4 b i", 1, 2)"##, r##""\x01\x00\x00\x00\x02\x00\x00\x00""##),
        (r##"struct.pack("!bi", 1, 2)"##, r##""\x01\x00\x00\x00\x02\x00\x00\x00""##),
        (r##"struct.pack("!3bi", 1, 2)"##, r##"error: alignment 3 is not a power of 2"##),
        (r##"struct.pack("!0bi", 1, 2)"##, r##"error: alignment 0 is not a power of 2"##),
        (
            r##"struct.pack("!16bd", 1, 2)"##,
            r##""\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00@""##,
        ),
        (r##"struct.pack("!2bd", 1, 2)"##, r##""\x01\x00\x00\x00\x00\x00\x00\x00\x00@""##),
        (
            r##"struct.pack("!bd", 1, 2)"##,
            r##""\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00@""##,
        ),
        (r##"struct.pack("!bc3", 1, "abc")"##, r##""\x01abc""##),
        (r##"struct.pack("!bs", 1, "ab")"##, r##""\x01ab\x00""##),
        (r##"struct.pack("!bf", 1, 2)"##, r##""\x01\x00\x00\x00\x00\x00\x00@""##),
        (
            r##"struct.pack("!bl", 1, 2)"##,
            r##""\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00""##,
        ),
        (
            r##"struct.pack("!bT", 1, 2)"##,
            r##""\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00""##,
        ),
        (r##"struct.pack("!bh", 1, 2)"##, r##""\x01\x00\x02\x00""##),
        (r##"struct.pack("!bi3", 1, 2)"##, r##""\x01\x00\x00\x02\x00\x00""##),
        (
            r##"struct.pack("!bi16", 1, 2)"##,
            r##""\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00""##,
        ),
        (r##"struct.pack("!bx", 1)"##, r##""\x01\x00""##),
        (r##"struct.pack("!b!1h", 1, 2)"##, r##""\x01\x02\x00""##),
        (
            r##"struct.pack("!16bi6", 1, 2)"##,
            r##""\x01\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00""##,
        ),
        (
            r##"struct.pack("!0016bd", 1, 2)"##,
            r##""\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00@""##,
        ),
        (r##"struct.pack("i33", 1)"##, r##"error: integral size 33 is larger than limit of 32"##),
        (
            r##"struct.pack("i32", 1)"##,
            r##""\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00""##,
        ),
        (
            r##"struct.pack(">i32", -1)"##,
            r##""\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff""##,
        ),
        (r##"struct.pack("i0", 1)"##, r##""""##),
        (r##"struct.pack("I99999999999", 1)"##, r##"error: integral size overflow"##),
        (
            r##"struct.pack("i2147483647", 1)"##,
            r##"error: integral size 2147483647 is larger than limit of 32"##,
        ),
        (r##"struct.pack("i2147483648", 1)"##, r##"error: integral size overflow"##),
        (r##"struct.pack("!99999999999", 1)"##, r##"error: integral size overflow"##),
        (r##"struct.pack("!2147483648", 1)"##, r##"error: integral size overflow"##),
        (r##"struct.pack("!1073741824b", 1)"##, r##""\x01""##),
        (r##"struct.pack("!", 1)"##, r##""""##),
        (r##"struct.pack("!!1", 1)"##, r##""""##),
        (
            r##"struct.pack("y", 1)"##,
            r##"error: bad argument #1 to 'pack' (invalid format option 'y')"##,
        ),
        (
            r##"struct.pack("=", 1)"##,
            r##"error: bad argument #1 to 'pack' (invalid format option '=')"##,
        ),
        (r##"struct.pack("c2147483648", 1)"##, r##"error: integral size overflow"##),
        (r##"struct.pack("\0b", 1)"##, r##""""##),
        (r##"struct.pack("b\0b", 1, 2)"##, r##""\x01""##),
        (
            r##"struct.pack("c5", "abc")"##,
            r##"error: bad argument #3 to 'pack' (string too short)"##,
        ),
        (
            r##"struct.pack("bc5", 1, "abc")"##,
            r##"error: bad argument #4 to 'pack' (string too short)"##,
        ),
        (r##"struct.pack("c0", "abc")"##, r##""abc""##),
        (r##"struct.pack("c2", "abc")"##, r##""ab""##),
        (r##"struct.pack("c", "abc")"##, r##""a""##),
        (r##"struct.pack("s", "a\0b")"##, r##""a\x00b\x00""##),
        (r##"struct.pack("c0", 12.5)"##, r##""12.5""##),
        (r##"struct.pack("c0", 1e15)"##, r##""1e+15""##),
        (r##"struct.pack("c0", 2^63)"##, r##""9.2233720368548e+18""##),
        (
            r##"struct.pack("c0", {})"##,
            r##"error: bad argument #2 to 'pack' (string expected, got table)"##,
        ),
        (
            r##"struct.pack("b")"##,
            r##"error: bad argument #2 to 'pack' (number expected, got nil)"##,
        ),
        (
            r##"struct.pack("bb", 1)"##,
            r##"error: bad argument #3 to 'pack' (number expected, got nil)"##,
        ),
        (
            r##"struct.pack("bbbb", 1, 2)"##,
            r##"error: bad argument #4 to 'pack' (number expected, got nil)"##,
        ),
        (
            r##"struct.pack("c0")"##,
            r##"error: bad argument #2 to 'pack' (string expected, got nil)"##,
        ),
        (
            r##"struct.pack("bs", 1)"##,
            r##"error: bad argument #3 to 'pack' (string expected, got nil)"##,
        ),
        (
            r##"struct.pack("bf", 1)"##,
            r##"error: bad argument #3 to 'pack' (number expected, got nil)"##,
        ),
        (
            r##"struct.pack("d")"##,
            r##"error: bad argument #2 to 'pack' (number expected, got nil)"##,
        ),
        (r##"struct.pack("b", 1, 2, 3)"##, r##""\x01""##),
        (
            r##"struct.pack(string.rep("i32", 300) .. "c0", 1)"##,
            r##"error: bad argument #3 to 'pack' (number expected, got nil)"##,
        ),
        (
            r##"struct.pack("b", "x")"##,
            r##"error: bad argument #2 to 'pack' (number expected, got string)"##,
        ),
        (r##"struct.pack("b", "0x10")"##, r##""\x10""##),
        (r##"struct.pack("b", "12\0")"##, r##""\x0c""##),
        (r##"struct.pack("b", "1 ")"##, r##""\x01""##),
        (
            r##"struct.pack("b", "0x")"##,
            r##"error: bad argument #2 to 'pack' (number expected, got string)"##,
        ),
        (
            r##"struct.pack("b", nil)"##,
            r##"error: bad argument #2 to 'pack' (number expected, got nil)"##,
        ),
        (
            r##"struct.pack()"##,
            r##"error: bad argument #1 to 'pack' (string expected, got no value)"##,
        ),
        (
            r##"struct.pack(12)"##,
            r##"error: bad argument #1 to 'pack' (invalid format option '1')"##,
        ),
        (
            r##"struct.pack(1e100)"##,
            r##"error: bad argument #1 to 'pack' (invalid format option '1')"##,
        ),
        (
            r##"struct.pack({})"##,
            r##"error: bad argument #1 to 'pack' (string expected, got table)"##,
        ),
        (r##"struct.pack("!4bi", "1", "2")"##, r##""\x01\x00\x00\x00\x02\x00\x00\x00""##),
        (r##"struct.pack("i", 2^31)"##, r##""\x00\x00\x00\x80""##),
        (r##"struct.pack("<i8", 2^63)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x80""##),
        (r##"struct.pack("<i8", 2^64)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x00""##),
        (r##"struct.pack("<i8", 2^65)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x00""##),
        (r##"struct.pack("<i8", 1e300)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x00""##),
        (r##"struct.pack("<i8", -1e300)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x80""##),
        (r##"struct.pack("<i8", -2^63)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x80""##),
        (r##"struct.pack("<i8", 1/0)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x00""##),
        (r##"struct.pack("<i8", -1/0)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x80""##),
        (r##"struct.pack("<i8", 0/0)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x80""##),
        (r##"struct.pack("<i8", -(0/0))"##, r##""\x00\x00\x00\x00\x00\x00\x00\x80""##),
        (r##"struct.pack("<i8", 2^63+2^11)"##, r##""\x00\x08\x00\x00\x00\x00\x00\x80""##),
        (r##"struct.pack("<i8", 1.99)"##, r##""\x01\x00\x00\x00\x00\x00\x00\x00""##),
        (r##"struct.pack("<i8", -1.99)"##, r##""\xff\xff\xff\xff\xff\xff\xff\xff""##),
        (r##"struct.pack("<i8", -0.5)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x00""##),
        (r##"struct.pack("<i12", -1)"##, r##""\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00""##),
        (r##"struct.pack(">i12", -1)"##, r##""\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff""##),
        (r##"struct.pack("<I8", -1)"##, r##""\xff\xff\xff\xff\xff\xff\xff\xff""##),
        (r##"struct.pack("<B", 300)"##, r##"",""##),
        (r##"struct.pack("<b", -129)"##, r##""\x7f""##),
        (r##"struct.pack("<H", 65536 + 258)"##, r##""\x02\x01""##),
        (r##"struct.pack(">L", 2^40 + 5)"##, r##""\x00\x00\x01\x00\x00\x00\x00\x05""##),
        (r##"struct.pack(">l", -2)"##, r##""\xff\xff\xff\xff\xff\xff\xff\xfe""##),
        (r##"struct.pack(">T", 2^53)"##, r##""\x00 \x00\x00\x00\x00\x00\x00""##),
        (r##"struct.pack(">f", 1.5)"##, r##""?\xc0\x00\x00""##),
        (r##"struct.pack("<f", 1e300)"##, r##""\x00\x00\x80\x7f""##),
        (r##"struct.pack("<f", 1/3)"##, r##""\xab\xaa\xaa>""##),
        (r##"struct.pack("<f", 1e-46)"##, r##""\x00\x00\x00\x00""##),
        (r##"struct.pack("<d", -0.0)"##, r##""\x00\x00\x00\x00\x00\x00\x00\x80""##),
        (r##"struct.pack("<f", 0/0)"##, r##""\x00\x00\xc0\xff""##),
        (r##"struct.pack("<f", -(0/0))"##, r##""\x00\x00\xc0\x7f""##),
        (r##"struct.pack("<d", 0/0)"##, r##""\x00\x00\x00\x00\x00\x00\xf8\xff""##),
        (r##"struct.pack(">d", 1/3)"##, r##""?\xd5UUUUUU""##),
        (
            r##"struct.pack("<f", struct.unpack("<d", "\1\0\0\0\0\0\240\127"))"##,
            r##""\x00\x00\xc0\x7f""##,
        ),
        (
            r##"struct.pack("<d", struct.unpack("<f", "\1\0\128\127"))"##,
            r##""\x00\x00\x00 \x00\x00\xf8\x7f""##,
        ),
        (
            r##"struct.pack("<d", struct.unpack("<f", "\0\0\160\255"))"##,
            r##""\x00\x00\x00\x00\x00\x00\xfc\xff""##,
        ),
        (r##"struct.pack("<i", "  0x7fffffff  ")"##, r##""\xff\xff\xff\x7f""##),
        (
            r##"struct.pack(">!4 b h x i c2 s d", 1, 2, 3, "ab", "zz", 0.5)"##,
            r##""\x01\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x03abzz\x00\x00\x00\x00?\xe0\x00\x00\x00\x00\x00\x00""##,
        ),
        (r##"struct.unpack("b", "\255")"##, r##"-1 2"##),
        (r##"struct.unpack("B", "\255")"##, r##"255 2"##),
        (r##"struct.unpack(">h", "\255\254")"##, r##"-2 3"##),
        (r##"struct.unpack("<H", "\255\254")"##, r##"65279 3"##),
        (r##"struct.unpack("<i3", "\255\255\255")"##, r##"-1 4"##),
        (r##"struct.unpack("<I3", "\255\255\255")"##, r##"16777215 4"##),
        (r##"struct.unpack("<i8", "\255\255\255\255\255\255\255\255")"##, r##"-1 9"##),
        (
            r##"struct.unpack("<I8", "\255\255\255\255\255\255\255\255")"##,
            r##"1.8446744073709552e+19 9"##,
        ),
        (r##"struct.unpack("<I8", "\1\0\0\0\0\0\0\128")"##, r##"9.2233720368547758e+18 9"##),
        (r##"struct.unpack("<i8", "\0\0\0\0\0\0\0\128")"##, r##"-9.2233720368547758e+18 9"##),
        (r##"struct.unpack(">l", "\255\255\255\255\255\255\255\254")"##, r##"-2 9"##),
        (r##"struct.unpack(">L", "\0\0\0\0\0\0\1\2")"##, r##"258 9"##),
        (r##"struct.unpack(">T", "\128\0\0\0\0\0\0\1")"##, r##"9.2233720368547758e+18 9"##),
        (r##"struct.unpack("<i0", "")"##, r##"0 1"##),
        (r##"struct.unpack("<I0", "")"##, r##"0 1"##),
        (r##"struct.unpack("<i12", "\1\0\0\0\0\0\0\0\2\0\0\0")"##, r##"1 13"##),
        (r##"struct.unpack(">i12", "\1\0\0\0\0\0\0\0\2\0\0\0")"##, r##"33554432 13"##),
        (
            r##"struct.unpack("<i12", "\255\255\255\255\255\255\255\255\255\255\255\255")"##,
            r##"-1 13"##,
        ),
        (r##"struct.unpack("<i12", "\0\0\0\0\0\0\0\0\0\0\0\128")"##, r##"0 13"##),
        (r##"struct.unpack("<i9", "\0\0\0\0\0\0\0\128\0")"##, r##"-128 10"##),
        (r##"struct.unpack("<i9", "\0\0\0\0\0\0\0\0\128")"##, r##"0 10"##),
        (r##"struct.unpack("<I9", "\1\0\0\0\0\0\0\0\128")"##, r##"1 10"##),
        (
            r##"struct.unpack("<i16", string.rep("\0",7).."\128"..string.rep("\0",8))"##,
            r##"-9.2233720368547758e+18 17"##,
        ),
        (r##"struct.unpack("<i32", string.rep("\255",32))"##, r##"-1 33"##),
        (r##"struct.unpack("<i32", string.rep("\0",31).."\128")"##, r##"0 33"##),
        (
            r##"struct.unpack("<i32", string.rep("\0",7).."\128"..string.rep("\0",24))"##,
            r##"-9.2233720368547758e+18 33"##,
        ),
        (
            r##"struct.unpack("<i31", string.rep("\0",7).."\128"..string.rep("\0",23))"##,
            r##"-36028797018963968 32"##,
        ),
        (
            r##"struct.unpack("<i17", string.rep("\0",7).."\128"..string.rep("\0",9))"##,
            r##"-128 18"##,
        ),
        (
            r##"struct.unpack("<i24", string.rep("\0",7).."\128"..string.rep("\0",16))"##,
            r##"-9.2233720368547758e+18 25"##,
        ),
        (r##"struct.unpack("<i4", "\0\0\0\128")"##, r##"-2147483648 5"##),
        (r##"struct.unpack("<i7", "\0\0\0\0\0\0\128")"##, r##"-36028797018963968 8"##),
        (
            r##"struct.unpack("b", "")"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (
            r##"struct.unpack("bb", "\1")"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("b", "\1\2", 2)"##, r##"2 3"##),
        (
            r##"struct.unpack("b", "\1\2", 3)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("", "\1\2", 3)"##, r##"3"##),
        (r##"struct.unpack("", "\1\2", 4)"##, r##"4"##),
        (
            r##"struct.unpack(">", "\1\2", 4)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (
            r##"struct.unpack(" ", "\1\2", 4)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (
            r##"struct.unpack("x", "\1\2", 3)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("xb", "\1\2")"##, r##"2 3"##),
        (
            r##"struct.unpack("b", "\1\2", 0)"##,
            r##"error: bad argument #3 to 'unpack' (offset must be 1 or greater)"##,
        ),
        (
            r##"struct.unpack("b", "\1\2", -1)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("b", "\1\2", 1.9)"##, r##"1 2"##),
        (r##"struct.unpack("b", "\1\2", 2.9)"##, r##"2 3"##),
        (
            r##"struct.unpack("b", "\1\2", 0.5)"##,
            r##"error: bad argument #3 to 'unpack' (offset must be 1 or greater)"##,
        ),
        (r##"struct.unpack("b", "\1\2", "2")"##, r##"2 3"##),
        (
            r##"struct.unpack("b", "\1\2", "x")"##,
            r##"error: bad argument #3 to 'unpack' (number expected, got string)"##,
        ),
        (r##"struct.unpack("b", "\1\2", nil)"##, r##"1 2"##),
        (
            r##"struct.unpack("b", "\1\2", {})"##,
            r##"error: bad argument #3 to 'unpack' (number expected, got table)"##,
        ),
        (
            r##"struct.unpack("b", "\1\2", 0/0)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (
            r##"struct.unpack("b", "\1\2", 1/0)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (
            r##"struct.unpack("b", "\1\2", 2^63)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (
            r##"struct.unpack("b", "\1\2", -2^63)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (
            r##"struct.unpack("b", "\1\2", 2^64)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("", "", -1)"##, r##"-1"##),
        (r##"struct.unpack("", "", -5)"##, r##"-5"##),
        (r##"struct.unpack("", "", 2^63)"##, r##"-9.2233720368547758e+18"##),
        (r##"struct.unpack("", "", 0/0)"##, r##"-9.2233720368547758e+18"##),
        (r##"struct.unpack("", "", 2^53)"##, r##"9007199254740992"##),
        (r##"struct.unpack("", "", 1e300)"##, r##"-9.2233720368547758e+18"##),
        (
            r##"struct.unpack("!4i", "\1\0\0\0", -1)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (
            r##"struct.unpack("b")"##,
            r##"error: bad argument #2 to 'unpack' (string expected, got no value)"##,
        ),
        (r##"struct.unpack("b", 5)"##, r##"53 2"##),
        (r##"struct.unpack("b", 2^63)"##, r##"57 2"##),
        (
            r##"struct.unpack("b", {})"##,
            r##"error: bad argument #2 to 'unpack' (string expected, got table)"##,
        ),
        (
            r##"struct.unpack()"##,
            r##"error: bad argument #1 to 'unpack' (string expected, got no value)"##,
        ),
        (
            r##"struct.unpack(nil, "")"##,
            r##"error: bad argument #1 to 'unpack' (string expected, got nil)"##,
        ),
        (
            r##"struct.unpack(nil, {})"##,
            r##"error: bad argument #1 to 'unpack' (string expected, got nil)"##,
        ),
        (r##"struct.unpack("!4bi", "\1\0\0\0\2\0\0\0")"##, r##"1 2 9"##),
        (r##"struct.unpack("!4i", "\0\1\0\0\0\2\0\0\0", 2)"##, r##"512 9"##),
        (r##"struct.unpack("!4i", "\0\0\0\0\2\0\0\0", 2)"##, r##"2 9"##),
        (
            r##"struct.unpack("q", "\1")"##,
            r##"error: bad argument #1 to 'unpack' (invalid format option 'q')"##,
        ),
        (
            r##"struct.unpack("q", "", 5)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("!3", "\1")"##, r##"error: alignment 3 is not a power of 2"##),
        (
            r##"struct.unpack("i40", "\1")"##,
            r##"error: integral size 40 is larger than limit of 32"##,
        ),
        (r##"struct.unpack(">f", "?\192\0\0")"##, r##"1.5 5"##),
        (r##"struct.unpack("<d", "\0\0\0\0\0\0\248\255")"##, r##"-nan 9"##),
        (r##"struct.unpack("<f", "\0\0\192\255")"##, r##"-nan 5"##),
        (r##"struct.unpack("<f", "\1\0\128\127")"##, r##"nan 5"##),
        (r##"struct.unpack("<f", "\0\0\128\127")"##, r##"inf 5"##),
        (r##"struct.unpack(">d", "?\213UUUUUU")"##, r##"0.33333333333333331 9"##),
        (r##"struct.unpack("bc0", "\3abcd")"##, r##""abc" 5"##),
        (r##"struct.unpack("c0", "abc")"##, r##"error: format 'c0' needs a previous size"##),
        (r##"struct.unpack("c1c0", "2abc")"##, r##""ab" 4"##),
        (r##"struct.unpack("c1c0", "xabc")"##, r##"error: format 'c0' needs a previous size"##),
        (
            r##"struct.unpack("bc0", "\5abcd")"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("bc0", "\0abcd")"##, r##""" 2"##),
        (r##"struct.unpack("fc0", "\0\0\192\63abc")"##, r##""a" 6"##),
        (
            r##"struct.unpack("fc0", "\0\0\192\191abc")"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("fc0", "\0\0\0\191abc")"##, r##""" 5"##),
        (
            r##"struct.unpack("bc0", "\255abc")"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("c1c0", "-abc")"##, r##"error: format 'c0' needs a previous size"##),
        (
            r##"struct.unpack("c2c0", "-1abc")"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("c3c0", "0x2abc")"##, r##""ab" 6"##),
        (
            r##"struct.unpack("c3c0", "nanabc")"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("c3c0", "infabc")"##, r##""" 4"##),
        (r##"struct.unpack("xc0", "abc")"##, r##"error: format 'c0' needs a previous size"##),
        (r##"struct.unpack("c1c0c0", "2abc")"##, r##"error: format 'c0' needs a previous size"##),
        (r##"struct.unpack("bc0c0", "\1\50abc")"##, r##""ab" 5"##),
        (r##"struct.unpack("c", "abc")"##, r##""a" 2"##),
        (r##"struct.unpack("c3", "abc")"##, r##""abc" 4"##),
        (
            r##"struct.unpack("c4", "abc")"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("s", "ab\0cd")"##, r##""ab" 4"##),
        (r##"struct.unpack("ss", "ab\0cd\0")"##, r##""ab" "cd" 7"##),
        (r##"struct.unpack("s", "abcd")"##, r##"error: unfinished string in data"##),
        (r##"struct.unpack("s", "")"##, r##"error: unfinished string in data"##),
        (r##"struct.unpack("bs", "\1")"##, r##"error: unfinished string in data"##),
        (r##"struct.unpack("s", "ab", 3)"##, r##"error: unfinished string in data"##),
        (
            r##"struct.unpack("s", "ab", 4)"##,
            r##"error: bad argument #2 to 'unpack' (data string too short)"##,
        ),
        (r##"struct.unpack("!4bs", "\1\0\0\0ab\0")"##, r##"1 "" 3"##),
        (r##"struct.unpack("!4bc2", "\1xy")"##, r##"1 "xy" 4"##),
        (r##"struct.unpack("dc0", "\0\0\0\0\0\0\0\64xy")"##, r##""xy" 11"##),
        (r##"struct.unpack("dc0", struct.pack("d", 2^64).."xy")"##, r##""" 9"##),
        (r##"struct.unpack("bbc0", "\1\2xy")"##, r##"1 "xy" 5"##),
        (
            r##"struct.unpack(">!4 b h x i c2 s d", struct.pack(">!4 b h x i c2 s d", 1, 2, 3, "ab", "zz", 0.5))"##,
            r##"1 2 3 "ab" "zz" 0.5 29"##,
        ),
        (r##"struct.unpack("<i2", "\1\2\3\4", 3)"##, r##"1027 5"##),
        (
            r##"select("#", struct.unpack(string.rep("b", 7998), string.rep("\0", 8000)))"##,
            r##"error: stack overflow (too many results)"##,
        ),
        (
            r##"select("#", struct.unpack(string.rep("b", 7997), string.rep("\0", 8000), 1))"##,
            r##"error: stack overflow (too many results)"##,
        ),
        (
            r##"select("#", struct.unpack(string.rep("b", 7996), string.rep("\0", 8000), 1, 2))"##,
            r##"error: stack overflow (too many results)"##,
        ),
        (
            r##"select("#", struct.unpack(string.rep("x", 9000), string.rep("\0", 9000)))"##,
            r##"1"##,
        ),
        (
            r##"select("#", struct.unpack(string.rep("b", 7997).."c0", string.rep("\0", 8000)))"##,
            r##"error: stack overflow (too many results)"##,
        ),
        (
            r##"select("#", struct.unpack(string.rep("b", 7997).."q", string.rep("\0", 8000)))"##,
            r##"error: stack overflow (too many results)"##,
        ),
        (r##"struct.size("b")"##, r##"1"##),
        (r##"struct.size("!bd")"##, r##"16"##),
        (r##"struct.size("bd")"##, r##"9"##),
        (
            r##"struct.size("s")"##,
            r##"error: bad argument #1 to 'size' (option 's' has no fixed size)"##,
        ),
        (
            r##"struct.size("c0")"##,
            r##"error: bad argument #1 to 'size' (option 'c0' has no fixed size)"##,
        ),
        (r##"struct.size("c")"##, r##"1"##),
        (r##"struct.size("c10")"##, r##"10"##),
        (r##"struct.size("!4c3i")"##, r##"8"##),
        (r##"struct.size("q")"##, r##"0"##),
        (
            r##"struct.size("=")"##,
            r##"error: bad argument #1 to 'size' (invalid format option '=')"##,
        ),
        (r##"struct.size(">!2bhx i")"##, r##"10"##),
        (r##"struct.size("i33")"##, r##"error: integral size 33 is larger than limit of 32"##),
        (r##"struct.size("!3")"##, r##"error: alignment 3 is not a power of 2"##),
        (r##"struct.size("c2147483647c2147483647")"##, r##"4294967294"##),
        (r##"struct.size(string.rep("c2147483647", 100))"##, r##"214748364700"##),
        (
            r##"struct.size()"##,
            r##"error: bad argument #1 to 'size' (string expected, got no value)"##,
        ),
        (r##"struct.size(5)"##, r##"0"##),
        (
            r##"struct.size(nil)"##,
            r##"error: bad argument #1 to 'size' (string expected, got nil)"##,
        ),
        (
            r##"struct.size("bs")"##,
            r##"error: bad argument #1 to 'size' (option 's' has no fixed size)"##,
        ),
        (r##"struct.size("!8b!2d")"##, r##"10"##),
        (r##"struct.size("i0")"##, r##"0"##),
        (r##"struct.size("\0s")"##, r##"0"##),
        (
            r##"struct.size("%")"##,
            r##"error: bad argument #1 to 'size' (invalid format option '%')"##,
        ),
        (
            r##"struct.size("s%")"##,
            r##"error: bad argument #1 to 'size' (option 's' has no fixed size)"##,
        ),
        (
            r##"struct.size("%s")"##,
            r##"error: bad argument #1 to 'size' (invalid format option '%')"##,
        ),
        (r##"struct.size("!")"##, r##"0"##),
        (r##"struct.size("!1d")"##, r##"8"##),
        (r##"struct.size("!bh")"##, r##"4"##),
        (r##"struct.size("!bf")"##, r##"8"##),
        (r##"struct.size("!bi3")"##, r##"6"##),
        (r##"struct.size("!16bi32")"##, r##"48"##),
        (r##"struct.size("!32bi32")"##, r##"64"##),
        (r##"struct.size("!64bi32")"##, r##"64"##),
        (r##"struct.size("!16bi24")"##, r##"40"##),
        (r##"struct.size("!16bi5")"##, r##"10"##),
        (r##"struct.size("!16bc7")"##, r##"8"##),
        (r##"struct.size("!16bx")"##, r##"2"##),
        (r##"struct.size("b05")"##, r##"1"##),
        (r##"struct.size("i007")"##, r##"7"##),
        (
            r##"struct.size("c00")"##,
            r##"error: bad argument #1 to 'size' (option 'c0' has no fixed size)"##,
        ),
        (r##"struct.size("lLThHfdT")"##, r##"48"##),
        (r##"struct.size("!lLThHfdTb")"##, r##"49"##),
        (
            r##"(function() local f = struct.size return f("s") end)()"##,
            r##"error: bad argument #1 to 'f' (option 's' has no fixed size)"##,
        ),
    ];

    #[test]
    fn matches_valkey_observations() {
        let lua = lua();
        let mut failures = Vec::new();
        for (expr, want) in VALKEY_OBSERVED {
            let got = show(&lua, expr);
            if got != *want {
                failures.push(format!("{expr}\n   got: {got}\n  want: {want}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn result_limit_is_23_below_valkey() {
        // Valkey returns up to 8000 - nargs values (7998 for `unpack(fmt, data)`: 7997 values
        // and the position); mlua's callbacks need 23 slots more (see CALLBACK_STACK_RESERVE).
        let rep = |n: usize, extra: &str| {
            format!(
                r##"select("#", struct.unpack(string.rep("b", {n}), string.rep("\0", 8000){extra}))"##
            )
        };
        let cases: &[(usize, &str, &str)] = &[
            (7976 - 2, "", "7975"),
            (7976 - 2 + 1, "", "error: stack overflow (too many results)"),
            (7997, "", "error: stack overflow (too many results)"),
            (7976 - 3, ", 1", "7974"),
            (7976 - 3 + 1, ", 1", "error: stack overflow (too many results)"),
            (7976 - 4, ", 1, 2", "7973"),
            (7976 - 4 + 1, ", 1, 2", "error: stack overflow (too many results)"),
        ];
        for &(n, extra, want) in cases {
            // A fresh state (mlua's first callback call, the costliest) and a used one.
            let fresh = lua();
            assert_eq!(show(&fresh, &rep(n, extra)), want, "fresh, {n}{extra}");
            let used = lua();
            used.load("struct.size('b') pcall(struct.size, 's')").exec().expect("warm up");
            assert_eq!(show(&used, &rep(n, extra)), want, "used, {n}{extra}");
        }
    }

    #[test]
    fn method_call_errors_leave_self_to_lual_argerror() {
        // Valkey: "calling 'pack' on bad self (string expected, got table)", and so for
        // `unpack` and `size`. The callback reports argument 1; Lua's luaL_argerror (in the
        // engine's wrapper) sees the method call and words it so.
        for code in [r#"struct:pack(1)"#, r#"struct:unpack("")"#, r#"struct:size()"#] {
            let e = lua().load(code).exec().expect_err(code);
            let mlua::Error::CallbackError { cause, .. } = e else { panic!("{e}") };
            let mlua::Error::BadArgument { pos, cause, .. } = cause.as_ref() else { panic!() };
            assert_eq!(*pos, 1, "{code}");
            assert_eq!(root_message(cause), "string expected, got table", "{code}");
        }
    }

    #[test]
    fn non_ascii_invalid_option_is_replaced() {
        // Valkey's message carries the raw byte (0xc8 here); a Rust string cannot.
        let lua = lua();
        assert_eq!(
            show(&lua, r##"struct.pack("\200", 1)"##),
            "error: bad argument #1 to 'pack' (invalid format option '\u{fffd}')"
        );
        assert_eq!(
            show(&lua, r##"struct.unpack("\200", "a")"##),
            "error: bad argument #1 to 'unpack' (invalid format option '\u{fffd}')"
        );
        assert_eq!(
            show(&lua, r##"struct.size("\255")"##),
            "error: bad argument #1 to 'size' (invalid format option '\u{fffd}')"
        );
    }

    #[test]
    fn round_trips() {
        // Pack, size and unpack of every option at once; the values are what Valkey returned.
        let lua = lua();
        let code = r##"
            local fmt = "<!8 b B h H l L T i3 I5 i32 f d c3 s c0 x"
            local s = struct.pack(fmt, -1, 255, -300, 65535, -2^53, 2^53, 12345, -4, 2^39,
                -7, 0.5, 1/3, "abc", "zero", "all")
            assert(#s == struct.size("<!8 b B h H l L T i3 I5 i32 f d c3") + 5 + 3 + 1)
            return show(struct.unpack(string.gsub(fmt, "c0", "c3"), s))
        "##;
        let got: String = lua.load(format!("{SHOW} {code}")).eval().expect("round trip");
        assert_eq!(
            got,
            r##"-1 255 -300 65535 -9007199254740992 9007199254740992 12345 -4 549755813888 -7 0.5 0.33333333333333331 "abc" "zero" "all" 109"##
        );
    }

    #[test]
    fn table_has_the_valkey_functions() {
        let names: String = lua()
            .load(
                "local o = {} for k, v in pairs(struct) do o[#o+1] = k .. ':' .. type(v) end \
                 table.sort(o) return table.concat(o, ',')",
            )
            .eval()
            .expect("names");
        assert_eq!(names, "pack:function,size:function,unpack:function");
    }

    #[test]
    fn conversions_follow_x86_64() {
        assert_eq!(double_to_i64(f64::NAN), i64::MIN);
        assert_eq!(double_to_i64(1e300), i64::MIN);
        assert_eq!(double_to_i64(-1e300), i64::MIN);
        assert_eq!(double_to_i64(-1.99), -1);
        assert_eq!(double_to_u64(f64::NAN), 1 << 63);
        assert_eq!(double_to_u64(f64::INFINITY), 0);
        assert_eq!(double_to_u64(2f64.powi(63)), 1 << 63);
        assert_eq!(double_to_u64(2f64.powi(64) - 2048.0), u64::MAX - 2047);
        assert_eq!(narrow(f64::from_bits(0xfff8_0000_0000_0000)).to_bits(), 0xffc0_0000);
        assert_eq!(widen(f32::from_bits(0x7f80_0001)).to_bits(), 0x7ff8_0000_2000_0000);
    }
}
