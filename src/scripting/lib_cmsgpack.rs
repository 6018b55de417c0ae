//! The `cmsgpack` Lua library: MessagePack encoding and decoding for scripts, as Valkey bundles
//! it (lua-cmsgpack 0.4.0, registered as the global `cmsgpack`). It offers `pack(...)`,
//! `unpack(s)`, `unpack_one(s [, offset])`, `unpack_limit(s, limit [, offset])` and the
//! `_NAME`, `_VERSION`, `_COPYRIGHT` and `_DESCRIPTION` fields, and matches Valkey's build on
//! x86-64 byte for byte and error for error: numbers that are integers are written in the
//! smallest integer type, other numbers as float32 when that is exact and float64 otherwise;
//! a table is an array when its keys are exactly 1..n, else a map (in `next` order); tables
//! nested deeper than 16 levels are written as nil; functions, userdata and threads as nil;
//! strings as fixstr/str8/str16/str32. Decoding knows the same types as Valkey's build (no bin
//! or ext types: they are "Bad data format in input."), reads uint64 values above 2^63 as
//! negative numbers as Valkey does, and raises the same errors ("Missing bytes in input.",
//! "Bad data format in input.", "table index is nil", the offset/limit messages with their
//! quirks, argument errors with the name the function was called by). The C library's use of
//! the Lua stack (LUAI_MAXCSTACK, 8000 slots) is modelled slot for slot, so too deep nesting,
//! too many arguments and too many results fail where and how Valkey's do ("stack overflow
//! (...)"). Declared lengths are checked against the bytes left before anything is built,
//! decoding is iterative (no Rust recursion on input) and encoding recursion stops at the
//! nesting limit.
//!
//! Errors are what the C library raises, in mlua's terms, for the scripting engine's C-function
//! wrapper (`scripting::cfunc`) to raise as Lua would: a `luaL_error` is an
//! `mlua::Error::RuntimeError` with the message (the wrapper puts the script position first);
//! an argument error is an `mlua::Error::BadArgument { pos, cause: RuntimeError(msg) }` (the
//! wrapper calls Lua's own `luaL_argerror`, which names the function as the caller did), except
//! `pack`'s argument #0 errors, whose whole text is made here; "table index is nil" and "table
//! index is NaN", which Valkey raises without a position, go through the [`Raise`] function
//! given to [`open_with`].
//!
//! Deliberate differences: one `pack` call fails with "not enough memory" once its output would
//! pass 512 MiB (Valkey grows its buffer without end, e.g. on a table holding itself several
//! times); and as mlua needs some stack slots of its own, the unpacking functions return at most
//! 7968 values less the number of arguments (Valkey: 8000 less the arguments), failing beyond
//! with Valkey's "too many return values" message. Map order follows the interpreter's `next`,
//! so string keys come out in a different order than on Valkey, whose Lua hashes strings with
//! murmur32.

use super::cfunc::{arg_error, type_name};
use mlua::{Lua, LuaString, MultiValue, Table, Value};

const NAME: &str = "cmsgpack";
const VERSION: &str = "lua-cmsgpack 0.4.0";
const COPYRIGHT: &str = "Copyright (C) 2012, Redis Ltd.";
const DESCRIPTION: &str = "MessagePack C implementation for Lua";

/// Tables nested deeper than this are encoded as nil (LUACMSGPACK_MAX_NESTING).
const MAX_NESTING: usize = 16;
/// Lua 5.1's limit on the stack slots a C function may use (LUAI_MAXCSTACK).
const MAX_C_STACK: usize = 8000;
/// Largest output of one `pack` call.
const MAX_PACKED_LEN: usize = 512 << 20;
/// Stack slots mlua needs beyond a callback's arguments and results (measured: 23 with mlua
/// 0.12; kept larger so that mlua never fails a return in place of this library's own error).
const MLUA_RETURN_RESERVE: usize = 32;

const MISSING_BYTES: &str = "Missing bytes in input.";
const BAD_FORMAT: &str = "Bad data format in input.";
const TOO_MANY_RESULTS: &str =
    "too many return values at once; use unpack_one or unpack_limit instead.";

/// How an error that Valkey raises as a bare value (without the script position `luaL_error`
/// puts first) is raised: "table index is nil" and "table index is NaN". Given the message, it
/// returns what the library function returns in its place, or the error to fail with.
pub type Raise = fn(&Lua, String) -> mlua::Result<MultiValue>;

/// Creates the `cmsgpack` table and sets it as a global. Errors are plain `mlua` errors (see
/// [`open_with`]).
pub fn open(lua: &Lua) -> mlua::Result<()> {
    open_with(lua, |_, message| Err(lua_error(message)))
}

/// Like [`open`], with the errors Valkey raises as bare values going through `raise` (the
/// scripting engine passes `cfunc::raise`, which the C-function wrapper raises as they are).
pub fn open_with(lua: &Lua, raise: Raise) -> mlua::Result<()> {
    let lib = lua.create_table()?;
    let unpack_any = |mode: Mode| {
        lua.create_function(move |lua, args: MultiValue| match unpack(lua, &args, mode) {
            Err(mlua::Error::ExternalError(e)) => match e.downcast_ref::<BareError>() {
                Some(BareError(message)) => raise(lua, message.to_string()),
                None => Err(mlua::Error::ExternalError(e)),
            },
            result => result,
        })
    };
    lib.raw_set("pack", lua.create_function(pack)?)?;
    lib.raw_set("unpack", unpack_any(Mode::All)?)?;
    lib.raw_set("unpack_one", unpack_any(Mode::One)?)?;
    lib.raw_set("unpack_limit", unpack_any(Mode::Limit)?)?;
    lib.raw_set("_NAME", NAME)?;
    lib.raw_set("_VERSION", VERSION)?;
    lib.raw_set("_COPYRIGHT", COPYRIGHT)?;
    lib.raw_set("_DESCRIPTION", DESCRIPTION)?;
    lua.globals().raw_set(NAME, lib)
}

// ----------------------------------------------------------------------------------------------
// Errors and arguments, as Lua's auxiliary library words them.

fn lua_error(message: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(message.into())
}

/// An error Lua raises without a position (from `lua_settable`), handed to [`Raise`].
#[derive(Debug)]
struct BareError(&'static str);

impl std::fmt::Display for BareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for BareError {}

fn bare_error(message: &'static str) -> mlua::Error {
    mlua::Error::external(BareError(message))
}

fn stack_overflow(place: &str) -> mlua::Error {
    lua_error(format!("stack overflow ({place})"))
}

/// Fails as `luaL_checkstack` does when `used + extra` slots pass Lua's C stack limit.
fn check_stack(used: usize, extra: usize, place: &str) -> mlua::Result<()> {
    if used + extra > MAX_C_STACK {
        return Err(stack_overflow(place));
    }
    Ok(())
}

/// `luaL_argerror(L, 0, msg)`, which `pack` raises: `bad argument #0 to 'pack' (msg)` (`#-1`
/// for a method call). The wrapper's protocol has no argument 0, so the text is made here as a
/// plain error (the wrapper puts the position before it). The name is the one this callback
/// was called by or, when it has none because the wrapper called it, the wrapper's.
fn arg0_error(lua: &Lua, message: &str) -> mlua::Error {
    let called = |level| {
        lua.inspect_stack(level, |frame| {
            let names = frame.names();
            let is_c = frame.source().what == "C";
            (names.name.map(|n| n.into_owned()), names.name_what == Some("method"), is_c)
        })
    };
    let (name, method) = match called(0) {
        Some((Some(name), method, _)) => (Some(name), method),
        _ => match called(1) {
            Some((name, method, true)) => (name, method),
            _ => (None, false),
        },
    };
    let name = name.unwrap_or_else(|| "?".to_string());
    let pos = if method { -1 } else { 0 };
    lua_error(format!("bad argument #{pos} to '{name}' ({message})"))
}

fn type_error(lua: &Lua, args: &MultiValue, arg: usize, expected: &str) -> mlua::Error {
    let got = type_name(args.get(arg - 1));
    arg_error(lua, arg, format!("{expected} expected, got {got}"))
}

/// `luaL_checklstring`: a string, or a number converted as Lua prints it.
fn check_string(lua: &Lua, args: &MultiValue, arg: usize) -> mlua::Result<LuaString> {
    match args.get(arg - 1) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v @ (Value::Integer(_) | Value::Number(_))) => match lua.coerce_string(v.clone())? {
            Some(s) => Ok(s),
            None => Err(type_error(lua, args, arg, "string")),
        },
        _ => Err(type_error(lua, args, arg, "string")),
    }
}

/// `luaL_checkinteger`: a number, or a string Lua reads as one, truncated as C casts it.
fn check_integer(lua: &Lua, args: &MultiValue, arg: usize) -> mlua::Result<i64> {
    let number = match args.get(arg - 1) {
        Some(v @ (Value::Integer(_) | Value::Number(_) | Value::String(_))) => {
            lua.coerce_number(v.clone())?
        }
        _ => None,
    };
    match number {
        Some(n) => Ok(c_i64(n)),
        None => Err(type_error(lua, args, arg, "number")),
    }
}

/// `luaL_optinteger`: `default` when the argument is missing or nil.
fn opt_integer(lua: &Lua, args: &MultiValue, arg: usize, default: i64) -> mlua::Result<i64> {
    match args.get(arg - 1) {
        None | Some(Value::Nil) => Ok(default),
        Some(_) => check_integer(lua, args, arg),
    }
}

/// A C cast from double to int64_t as x86-64 performs it: truncation, and the "integer
/// indefinite" value (the minimum) for NaN and out-of-range values.
fn c_i64(n: f64) -> i64 {
    if n.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        return i64::MIN;
    }
    n as i64
}

/// A C cast from double to int as x86-64 performs it (see [`c_i64`]).
fn c_i32(n: f64) -> i32 {
    if n.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&n) {
        return i32::MIN;
    }
    n as i32
}

// ----------------------------------------------------------------------------------------------
// Encoding.

fn pack(lua: &Lua, args: MultiValue) -> mlua::Result<LuaString> {
    let nargs = args.len();
    if nargs == 0 {
        return Err(arg0_error(lua, "MessagePack pack needs input."));
    }
    if 2 * nargs > MAX_C_STACK {
        return Err(arg0_error(lua, "Too many arguments for MessagePack pack."));
    }
    let mut packer = Packer { out: Vec::new(), limit: MAX_PACKED_LEN };
    // Valkey's stack holds the arguments, the encodings made so far and the value being encoded.
    for (used, value) in (nargs..).zip(args.iter()) {
        check_stack(used, 1, "in function mp_check")?;
        packer.value(value, 0, used + 1)?;
    }
    lua.create_string(&packer.out)
}

struct Packer {
    out: Vec<u8>,
    /// Most bytes `out` may grow to.
    limit: usize,
}

impl Packer {
    fn put(&mut self, bytes: &[u8]) -> mlua::Result<()> {
        if self.out.len() + bytes.len() > self.limit {
            return Err(lua_error("not enough memory"));
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// Encodes `value`, a table `level` levels deep; `used` counts the stack slots Valkey's
    /// encoder would be using with the value on top.
    fn value(&mut self, value: &Value, level: usize, used: usize) -> mlua::Result<()> {
        match value {
            Value::String(s) => self.string(&s.as_bytes()),
            Value::Boolean(b) => self.put(&[if *b { 0xc3 } else { 0xc2 }]),
            Value::Integer(i) => self.number(*i as f64),
            Value::Number(n) => self.number(*n),
            Value::Table(t) if level < MAX_NESTING => self.table(t, level, used),
            _ => self.put(&[0xc0]),
        }
    }

    fn number(&mut self, n: f64) -> mlua::Result<()> {
        let i = c_i64(n);
        if !n.is_infinite() && i as f64 == n {
            self.integer(i)
        } else {
            self.float(n)
        }
    }

    fn integer(&mut self, n: i64) -> mlua::Result<()> {
        match n {
            0..=0x7f => self.put(&[n as u8]),
            0x80..=0xff => self.put(&[0xcc, n as u8]),
            0x100..=0xffff => self.put_prefixed(0xcd, &(n as u16).to_be_bytes()),
            0x1_0000..=0xffff_ffff => self.put_prefixed(0xce, &(n as u32).to_be_bytes()),
            0x1_0000_0000.. => self.put_prefixed(0xcf, &(n as u64).to_be_bytes()),
            -32..=-1 => self.put(&[n as u8]),
            -128..=-33 => self.put(&[0xd0, n as u8]),
            -32768..=-129 => self.put_prefixed(0xd1, &(n as i16).to_be_bytes()),
            -2_147_483_648..=-32769 => self.put_prefixed(0xd2, &(n as i32).to_be_bytes()),
            _ => self.put_prefixed(0xd3, &n.to_be_bytes()),
        }
    }

    fn float(&mut self, n: f64) -> mlua::Result<()> {
        let single = n as f32;
        if single as f64 == n {
            self.put_prefixed(0xca, &single.to_be_bytes())
        } else {
            self.put_prefixed(0xcb, &n.to_be_bytes())
        }
    }

    fn put_prefixed(&mut self, marker: u8, bytes: &[u8]) -> mlua::Result<()> {
        self.put(&[marker])?;
        self.put(bytes)
    }

    fn string(&mut self, bytes: &[u8]) -> mlua::Result<()> {
        let len = bytes.len();
        match len {
            0..=31 => self.put(&[0xa0 | len as u8])?,
            32..=0xff => self.put(&[0xd9, len as u8])?,
            0x100..=0xffff => self.put_prefixed(0xda, &(len as u16).to_be_bytes())?,
            _ => self.put_prefixed(0xdb, &(len as u32).to_be_bytes())?,
        }
        self.put(bytes)
    }

    /// Writes an array or map header: `fix` for up to 15 entries, then the 16- and 32-bit forms.
    fn header(&mut self, fix: u8, wide: u8, len: usize) -> mlua::Result<()> {
        match len {
            0..=15 => self.put(&[fix | len as u8]),
            16..=0xffff => self.put_prefixed(wide, &(len as u16).to_be_bytes()),
            _ => self.put_prefixed(wide + 1, &(len as u32).to_be_bytes()),
        }
    }

    fn table(&mut self, table: &Table, level: usize, used: usize) -> mlua::Result<()> {
        check_stack(used, 2, "in function table_is_an_array")?;
        match array_len(table)? {
            Some(len) => self.array(table, len, level, used),
            None => self.map(table, level, used),
        }
    }

    fn array(&mut self, table: &Table, len: usize, level: usize, used: usize) -> mlua::Result<()> {
        self.header(0x90, 0xdc, len)?;
        check_stack(used, 1, "in function mp_encode_lua_table_as_array")?;
        for index in 1..=len {
            let item: Value = table.raw_get(index)?;
            self.value(&item, level + 1, used + 1)?;
        }
        Ok(())
    }

    fn map(&mut self, table: &Table, level: usize, used: usize) -> mlua::Result<()> {
        check_stack(used, 3, "in function mp_encode_lua_table_as_map")?;
        let mut len = 0;
        for pair in table.pairs::<Value, Value>() {
            pair?;
            len += 1;
        }
        self.header(0x80, 0xde, len)?;
        for pair in table.pairs::<Value, Value>() {
            let (key, item) = pair?;
            self.value(&key, level + 1, used + 3)?;
            self.value(&item, level + 1, used + 2)?;
        }
        Ok(())
    }
}

/// The length of `table` if its keys are exactly 1..n (n may be 0), else None. Keys count as
/// indexes only when positive and exactly representable as a C int.
fn array_len(table: &Table) -> mlua::Result<Option<usize>> {
    let mut count = 0usize;
    let mut max = 0i32;
    for pair in table.pairs::<Value, Value>() {
        let (key, _) = pair?;
        let n = match key {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            _ => return Ok(None),
        };
        let index = c_i32(n);
        if n <= 0.0 || n.is_infinite() || index as f64 != n {
            return Ok(None);
        }
        max = max.max(index);
        count += 1;
    }
    Ok((usize::try_from(max).ok() == Some(count)).then_some(count))
}

// ----------------------------------------------------------------------------------------------
// Decoding.

/// Which of the three unpacking functions runs.
#[derive(Clone, Copy)]
enum Mode {
    /// `unpack(s)`: every value.
    All,
    /// `unpack_one(s [, offset])`.
    One,
    /// `unpack_limit(s, limit [, offset])`.
    Limit,
}

fn unpack(lua: &Lua, args: &MultiValue, mode: Mode) -> mlua::Result<MultiValue> {
    let nargs = args.len();
    let (limit, offset, used) = match mode {
        // Valkey's `unpack` keeps every argument on its stack while it decodes.
        Mode::All => (0, 0, nargs),
        Mode::One => (1, opt_integer(lua, args, 2, 0)?, 1),
        Mode::Limit => {
            let limit = check_integer(lua, args, 2)?;
            (limit, opt_integer(lua, args, 3, 0)?, 1)
        }
    };
    let input = check_string(lua, args, 1)?;
    unpack_full(lua, &input.as_bytes(), limit, offset, Stack { used, nargs })
}

/// The Lua stack of an unpacking call.
struct Stack {
    /// Slots Valkey's function holds when it starts decoding.
    used: usize,
    /// Arguments the call got (mlua keeps them all on its stack).
    nargs: usize,
}

/// Decodes up to `limit` values from `input` at `offset`; with both 0 decodes everything and
/// returns just the values, else returns the next offset (-1 at the end) before them.
fn unpack_full(
    lua: &Lua,
    input: &[u8],
    limit: i64,
    offset: i64,
    stack: Stack,
) -> mlua::Result<MultiValue> {
    let len = input.len();
    if offset < 0 || limit < 0 {
        // Valkey prints the input length where it means the limit.
        return Err(lua_error(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        )));
    }
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    if start > len {
        return Err(lua_error(format!(
            "Start offset {} greater than input length {}.",
            offset as i32, len as i32
        )));
    }
    let decode_all = limit == 0 && offset == 0;
    let limit = if decode_all { i64::from(i32::MAX) } else { limit };
    // Valkey returns up to 8000 values less its arguments; mlua needs a few slots more.
    let room = MAX_C_STACK - MLUA_RETURN_RESERVE - usize::from(!decode_all);
    let room = room.saturating_sub(stack.nargs);
    let mut decoder = Decoder { lua, input, pos: start, used: stack.used };
    let mut values = MultiValue::new();
    let mut count = 0;
    while decoder.pos < len && count < limit {
        if values.len() >= room {
            return Err(stack_overflow(TOO_MANY_RESULTS));
        }
        values.push_back(decoder.value()?);
        count += 1;
    }
    if !decode_all {
        check_stack(decoder.used, 1, "in function mp_unpack_full")?;
        let next = if decoder.pos == len { -1 } else { decoder.pos as i64 };
        values.push_front(Value::Number(next as f64));
    }
    Ok(values)
}

/// What a value's leading bytes announce.
enum Head {
    Value(Value),
    Array(usize),
    Map(usize),
}

/// Reads values from `input`, keeping count of the Lua stack slots Valkey's recursive decoder
/// would use (`used`) so that its stack limit is hit at the same places.
struct Decoder<'a> {
    lua: &'a Lua,
    input: &'a [u8],
    pos: usize,
    used: usize,
}

impl<'a> Decoder<'a> {
    /// The next `n` bytes, consumed; "Missing bytes" when fewer are left.
    fn take(&mut self, n: usize) -> mlua::Result<&'a [u8]> {
        let input: &'a [u8] = self.input;
        let bytes = input.get(self.pos..).and_then(|rest| rest.get(..n));
        let bytes = bytes.ok_or_else(|| lua_error(MISSING_BYTES))?;
        self.pos += n;
        Ok(bytes)
    }

    fn take_array<const N: usize>(&mut self) -> mlua::Result<[u8; N]> {
        let mut bytes = [0; N];
        bytes.copy_from_slice(self.take(N)?);
        Ok(bytes)
    }

    /// A length field of `N` big-endian bytes.
    fn take_len<const N: usize>(&mut self) -> mlua::Result<usize> {
        Ok(self.take_array::<N>()?.iter().fold(0, |len, &b| len << 8 | usize::from(b)))
    }

    fn number(n: f64) -> Head {
        Head::Value(Value::Number(n))
    }

    fn string(&mut self, len: usize) -> mlua::Result<Head> {
        let bytes = self.take(len)?;
        Ok(Head::Value(Value::String(self.lua.create_string(bytes)?)))
    }

    /// Reads the header of the next value (the whole value unless it is an array or a map).
    fn head(&mut self) -> mlua::Result<Head> {
        let marker = self.take_array::<1>()?[0];
        Ok(match marker {
            0x00..=0x7f => Self::number(f64::from(marker)),
            0x80..=0x8f => Head::Map(usize::from(marker & 0x0f)),
            0x90..=0x9f => Head::Array(usize::from(marker & 0x0f)),
            0xa0..=0xbf => return self.string(usize::from(marker & 0x1f)),
            0xc0 => Head::Value(Value::Nil),
            0xc2 => Head::Value(Value::Boolean(false)),
            0xc3 => Head::Value(Value::Boolean(true)),
            0xca => Self::number(f64::from(f32::from_be_bytes(self.take_array()?))),
            0xcb => Self::number(f64::from_be_bytes(self.take_array()?)),
            0xcc => Self::number(f64::from(self.take_array::<1>()?[0])),
            0xcd => Self::number(f64::from(u16::from_be_bytes(self.take_array()?))),
            0xce => Self::number(f64::from(u32::from_be_bytes(self.take_array()?))),
            // Valkey pushes uint64 through a signed integer: values above 2^63 turn negative.
            0xcf => Self::number(i64::from_be_bytes(self.take_array()?) as f64),
            0xd0 => Self::number(f64::from(i8::from_be_bytes(self.take_array()?))),
            0xd1 => Self::number(f64::from(i16::from_be_bytes(self.take_array()?))),
            0xd2 => Self::number(f64::from(i32::from_be_bytes(self.take_array()?))),
            0xd3 => Self::number(i64::from_be_bytes(self.take_array()?) as f64),
            0xd9 => return self.take_len::<1>().and_then(|len| self.string(len)),
            0xda => return self.take_len::<2>().and_then(|len| self.string(len)),
            0xdb => return self.take_len::<4>().and_then(|len| self.string(len)),
            0xdc => Head::Array(self.take_len::<2>()?),
            0xdd => Head::Array(self.take_len::<4>()?),
            0xde => Head::Map(self.take_len::<2>()?),
            0xdf => Head::Map(self.take_len::<4>()?),
            0xe0..=0xff => Self::number(f64::from(marker as i8)),
            _ => return Err(lua_error(BAD_FORMAT)),
        })
    }

    /// Starts the next value: a finished value, or a new table with entries still to read.
    fn begin(&mut self) -> mlua::Result<Begun> {
        if self.pos >= self.input.len() {
            return Err(lua_error(MISSING_BYTES));
        }
        check_stack(self.used, 1, TOO_MANY_RESULTS)?;
        let (len, is_map) = match self.head()? {
            Head::Value(value) => {
                self.used += 1;
                return Ok(Begun::Done(value));
            }
            Head::Array(len) => (len, false),
            Head::Map(len) => (len, true),
        };
        let table = self.lua.create_table()?;
        self.used += 1;
        if !is_map {
            check_stack(self.used, 1, "in function mp_decode_to_lua_array")?;
        }
        if len == 0 {
            return Ok(Begun::Done(Value::Table(table)));
        }
        Ok(Begun::Open(table, Frame { remaining: len, is_map, next_index: 1, has_key: false }))
    }

    /// Decodes one complete value, however deeply nested, without recursion.
    fn value(&mut self) -> mlua::Result<Value> {
        let mut open = OpenTables::new(self.lua);
        loop {
            let mut value = match self.begin()? {
                Begun::Done(value) => value,
                Begun::Open(table, frame) => {
                    self.start_entry(&frame);
                    open.push(table, frame)?;
                    continue;
                }
            };
            // Hand the finished value to the tables waiting for it, closing those it completes.
            loop {
                let Some(frame) = open.frames.last_mut() else { return Ok(value) };
                let Some(table) = open.table.as_ref() else { return Ok(value) };
                if frame.is_map && !frame.has_key {
                    open.key = value;
                    frame.has_key = true;
                    break;
                }
                store(table, frame, &mut open.key, value)?;
                self.used -= 2;
                if frame.remaining > 0 {
                    self.start_entry(frame);
                    break;
                }
                value = Value::Table(open.pop()?);
            }
        }
    }

    /// Valkey pushes an array's next index before decoding the element.
    fn start_entry(&mut self, frame: &Frame) {
        if !frame.is_map {
            self.used += 1;
        }
    }
}

/// Stores a finished entry into the innermost open table.
fn store(table: &Table, frame: &mut Frame, key: &mut Value, value: Value) -> mlua::Result<()> {
    if frame.is_map {
        let key = std::mem::replace(key, Value::Nil);
        frame.has_key = false;
        match key {
            Value::Nil => return Err(bare_error("table index is nil")),
            Value::Number(n) if n.is_nan() => return Err(bare_error("table index is NaN")),
            _ => table.raw_set(key, value)?,
        }
    } else {
        table.raw_set(frame.next_index, value)?;
        frame.next_index += 1;
    }
    frame.remaining -= 1;
    Ok(())
}

enum Begun {
    Done(Value),
    Open(Table, Frame),
}

/// A table being filled: entries left to read, and where the next one goes.
struct Frame {
    remaining: usize,
    is_map: bool,
    next_index: i64,
    /// For a map: whether the pending key (the entry's first half) has been read.
    has_key: bool,
}

/// The tables being filled while decoding. Only the innermost table and its pending key are
/// held from Rust; the enclosing ones wait in a Lua table, so deep nesting does not run out of
/// mlua's reference slots.
struct OpenTables<'a> {
    lua: &'a Lua,
    frames: Vec<Frame>,
    table: Option<Table>,
    key: Value,
    parked: Option<Table>,
}

impl<'a> OpenTables<'a> {
    fn new(lua: &'a Lua) -> Self {
        OpenTables { lua, frames: Vec::new(), table: None, key: Value::Nil, parked: None }
    }

    /// Slots in the parking table for the table and pending key of frame `depth`.
    fn slots(depth: usize) -> (usize, usize) {
        (2 * depth + 1, 2 * depth + 2)
    }

    fn push(&mut self, table: Table, frame: Frame) -> mlua::Result<()> {
        if let Some(outer) = self.table.take() {
            let parked = match &self.parked {
                Some(parked) => parked.clone(),
                None => self.lua.create_table()?,
            };
            let (table_slot, key_slot) = Self::slots(self.frames.len() - 1);
            parked.raw_set(table_slot, outer)?;
            parked.raw_set(key_slot, std::mem::replace(&mut self.key, Value::Nil))?;
            self.parked = Some(parked);
        }
        self.frames.push(frame);
        self.table = Some(table);
        Ok(())
    }

    /// Closes the innermost table, returning it, and brings back the one enclosing it.
    fn pop(&mut self) -> mlua::Result<Table> {
        self.frames.pop();
        let done = self.table.take().ok_or_else(|| lua_error("cmsgpack: no open table"))?;
        if let (Some(parked), Some(depth)) = (&self.parked, self.frames.len().checked_sub(1)) {
            let (table_slot, key_slot) = Self::slots(depth);
            self.table = Some(parked.raw_get(table_slot)?);
            self.key = parked.raw_get(key_slot)?;
            parked.raw_set(table_slot, Value::Nil)?;
            parked.raw_set(key_slot, Value::Nil)?;
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    //! Expected values and error texts were observed from Valkey 9.1.2's `EVAL` (x86-64).

    use mlua::IntoLuaMulti;

    use super::*;

    /// Describes values deterministically: `count:value value ...`, tables with sorted entries.
    const DUMP: &str = r#"
        local function dump(v)
          local t = type(v)
          if t == 'table' then
            local parts = {}
            for k, x in pairs(v) do parts[#parts+1] = dump(k) .. '=' .. dump(x) end
            table.sort(parts)
            return '{' .. table.concat(parts, ',') .. '}'
          elseif t == 'string' then return string.format('%q', v)
          elseif t == 'number' then return string.format('%.17g', v)
          else return tostring(v) end
        end
        function pk(...)
          local p = {}
          for i = 1, select('#', ...) do p[i] = dump((select(i, ...))) end
          return select('#', ...) .. ':' .. table.concat(p, ' ')
        end
        function hex(s)
          return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
        end
    "#;

    fn lua() -> Lua {
        let lua = Lua::new();
        open(&lua).expect("open cmsgpack");
        lua.load(DUMP).exec().expect("test helpers");
        lua
    }

    fn eval(lua: &Lua, code: &str) -> String {
        match lua.load(code).eval::<Value>() {
            Ok(Value::String(s)) => s.to_string_lossy(),
            Ok(other) => format!("{other:?}"),
            Err(e) => panic!("{code}: {e}"),
        }
    }

    /// The message of an error as Lua's C API raises it, without the position; an argument
    /// error in `luaL_argerror`'s form, naming the function as the callback saw its caller
    /// name it.
    fn root(error: &mlua::Error) -> String {
        match error {
            mlua::Error::CallbackError { cause, .. } => root(cause),
            mlua::Error::BadArgument { to, pos, cause, .. } => {
                let to = to.as_deref().unwrap_or("?");
                format!("bad argument #{pos} to '{to}' ({})", root(cause))
            }
            mlua::Error::RuntimeError(message) => message.clone(),
            mlua::Error::ExternalError(e) => e.to_string(),
            other => format!("unexpected error: {other}"),
        }
    }

    fn error(lua: &Lua, code: &str) -> String {
        match lua.load(code).exec() {
            Ok(()) => panic!("{code}: no error"),
            Err(e) => root(&e),
        }
    }

    /// `hex(cmsgpack.pack(<args>))`.
    fn packed(lua: &Lua, args: &str) -> String {
        eval(lua, &format!("return hex(cmsgpack.pack({args}))"))
    }

    /// Runs `pk(<call>)` with the global `S` set to `input`.
    fn decoded(lua: &Lua, input: &[u8], call: &str) -> mlua::Result<String> {
        lua.globals().set("S", lua.create_string(input)?)?;
        lua.load(format!("return pk({call})")).eval::<String>()
    }

    fn unpacked(lua: &Lua, input: &[u8]) -> String {
        decoded(lua, input, "cmsgpack.unpack(S)").unwrap_or_else(|e| panic!("{input:?}: {e}"))
    }

    fn unpack_error(lua: &Lua, input: &[u8], call: &str) -> String {
        match decoded(lua, input, call) {
            Ok(v) => panic!("{input:?}: no error but {v}"),
            Err(e) => root(&e),
        }
    }

    #[test]
    fn library_table() {
        let lua = lua();
        assert_eq!(
            eval(&lua, "return cmsgpack._NAME .. '|' .. cmsgpack._VERSION .. '|' .. cmsgpack._COPYRIGHT .. '|' .. cmsgpack._DESCRIPTION"),
            "cmsgpack|lua-cmsgpack 0.4.0|Copyright (C) 2012, Redis Ltd.|MessagePack C implementation for Lua"
        );
        assert_eq!(
            eval(&lua, "local t = {} for k in pairs(cmsgpack) do t[#t+1] = k end table.sort(t) return table.concat(t, ',')"),
            "_COPYRIGHT,_DESCRIPTION,_NAME,_VERSION,pack,unpack,unpack_limit,unpack_one"
        );
        assert_eq!(eval(&lua, "return type(cmsgpack_safe)"), "nil");
    }

    #[test]
    fn pack_integers() {
        let lua = lua();
        for (expr, hex) in [
            ("0", "00"),
            ("1", "01"),
            ("127", "7f"),
            ("128", "cc80"),
            ("255", "ccff"),
            ("256", "cd0100"),
            ("65535", "cdffff"),
            ("65536", "ce00010000"),
            ("4294967295", "ceffffffff"),
            ("4294967296", "cf0000000100000000"),
            ("2^53", "cf0020000000000000"),
            ("2^62", "cf4000000000000000"),
            ("2^31", "ce80000000"),
            ("-1", "ff"),
            ("-32", "e0"),
            ("-33", "d0df"),
            ("-128", "d080"),
            ("-129", "d1ff7f"),
            ("-32768", "d18000"),
            ("-32769", "d2ffff7fff"),
            ("-2147483648", "d280000000"),
            ("-2147483649", "d3ffffffff7fffffff"),
            ("-2^63", "d38000000000000000"),
            ("-0.0", "00"),
            ("1,2,3", "010203"),
        ] {
            assert_eq!(packed(&lua, expr), hex, "{expr}");
        }
    }

    #[test]
    fn pack_floats() {
        let lua = lua();
        for (expr, hex) in [
            ("0.5", "ca3f000000"),
            ("1.5", "ca3fc00000"),
            ("0.1", "cb3fb999999999999a"),
            ("2^63", "ca5f000000"),
            ("2^64", "ca5f800000"),
            ("-2^64", "cadf800000"),
            ("1/0", "ca7f800000"),
            ("-1/0", "caff800000"),
            ("0/0", "cbfff8000000000000"),
            ("-(0/0)", "cb7ff8000000000000"),
            ("3.4028234663852886e38", "ca7f7fffff"),
            ("1e39", "cb48078287f49c4a1d"),
            ("1e-46", "cb366244ce242c5561"),
            ("1e300", "cb7e37e43c8800759c"),
        ] {
            assert_eq!(packed(&lua, expr), hex, "{expr}");
        }
    }

    #[test]
    fn pack_scalars_and_strings() {
        let lua = lua();
        assert_eq!(packed(&lua, "nil"), "c0");
        assert_eq!(packed(&lua, "nil, nil"), "c0c0");
        assert_eq!(packed(&lua, "true"), "c3");
        assert_eq!(packed(&lua, "false"), "c2");
        assert_eq!(packed(&lua, "type"), "c0");
        assert_eq!(packed(&lua, "coroutine.create(function() end)"), "c0");
        assert_eq!(packed(&lua, "''"), "a0");
        assert_eq!(packed(&lua, "'abc'"), "a3616263");
        let prefix = |len: usize| {
            let code = format!("return hex(cmsgpack.pack(string.rep('a', {len}))):sub(1, 12)");
            eval(&lua, &code)
        };
        assert_eq!(prefix(31), "bf6161616161");
        assert_eq!(prefix(32), "d92061616161");
        assert_eq!(prefix(255), "d9ff61616161");
        assert_eq!(prefix(256), "da0100616161");
        assert_eq!(prefix(65535), "daffff616161");
        assert_eq!(prefix(65536), "db0001000061");
        assert_eq!(eval(&lua, "return tostring(#cmsgpack.pack(string.rep('a', 65536)))"), "65541");
    }

    #[test]
    fn pack_tables() {
        let lua = lua();
        for (expr, hex) in [
            ("{}", "90"),
            ("{1,2,3}", "93010203"),
            ("{a=1}", "81a16101"),
            ("{[1]=1,[3]=3}", "8201010303"),
            ("{[0]=1}", "810001"),
            ("{[-1]=1}", "81ff01"),
            ("{[1.5]=1}", "81ca3fc0000001"),
            ("{[2^31]=1}", "81ce8000000001"),
            ("{[2^31-1]=1}", "81ce7fffffff01"),
            ("{1,2,nil,4}", "83010102020404"),
            ("{[1]=1,[2]=2,n=3}", "8301010202a16e03"),
            ("{1,2,3,[2^31]=1}", "84010102020303ce8000000001"),
            ("{[true]=1}", "81c301"),
            ("{['1']=1}", "81a13101"),
            ("{{{}}}", "919190"),
            ("{type}", "91c0"),
            ("{[type]=1}", "81c001"),
            ("setmetatable({}, {__index=function() return 1 end})", "90"),
            ("setmetatable({1,2}, {__len=function() return 5 end})", "920102"),
        ] {
            assert_eq!(packed(&lua, expr), hex, "{expr}");
        }
        let code = "local t = {} t[1]=1 t[2]=2 t[4]=4 return hex(cmsgpack.pack(t))";
        assert_eq!(eval(&lua, code), "83010102020404");
        let code = "local a = {} for i=1,20 do a[i]=i end return hex(cmsgpack.pack(a))";
        assert_eq!(eval(&lua, code), "dc00140102030405060708090a0b0c0d0e0f1011121314");
        let code = "local a = {} for i=1,70000 do a[i]=1 end return hex(cmsgpack.pack(a):sub(1,5))";
        assert_eq!(eval(&lua, code), "dd00011170");
        let code =
            "local a = {} for i=1,70000 do a['k'..i]=1 end return hex(cmsgpack.pack(a):sub(1,5))";
        assert_eq!(eval(&lua, code), "df00011170");
        let code =
            "local a = {} for i=1,20 do a['k'..i]=1 end return hex(cmsgpack.pack(a):sub(1,3))";
        assert_eq!(eval(&lua, code), "de0014");
    }

    #[test]
    fn pack_nesting_limit() {
        let lua = lua();
        let deep = "local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end";
        let expected = format!("{}c0", "91".repeat(16));
        assert_eq!(eval(&lua, &format!("{deep} return hex(cmsgpack.pack(t))")), expected);
        let cyclic = "local t = {} t[1] = t return hex(cmsgpack.pack(t))";
        assert_eq!(eval(&lua, cyclic), expected);
        let cyclic = "local t = {} t.a = t return hex(cmsgpack.pack(t))";
        assert_eq!(eval(&lua, cyclic), format!("{}c0", "81a161".repeat(16)));
        let cyclic = "local t = {} t[t] = 1 return hex(cmsgpack.pack(t))";
        assert_eq!(eval(&lua, cyclic), format!("{}c0{}", "81".repeat(16), "01".repeat(16)));
        let cyclic = "local t = {} t[1] = t t[2] = t return tostring(#cmsgpack.pack(t))";
        assert_eq!(eval(&lua, cyclic), "131071");
    }

    #[test]
    fn pack_output_is_bounded() {
        let lua = lua();
        let table: Table =
            lua.load("local t = {} for i = 1, 10 do t[i] = t end return t").eval().expect("table");
        let mut packer = Packer { out: Vec::new(), limit: 1 << 20 };
        // 10^16 leaves: Valkey grows its buffer without end; here the cap stops it.
        let result = packer.value(&Value::Table(table), 0, 1);
        assert_eq!(root(&result.expect_err("capped")), "not enough memory");
        assert!(packer.out.len() <= 1 << 20);
    }

    #[test]
    fn pack_argument_errors() {
        let lua = lua();
        assert_eq!(
            error(&lua, "cmsgpack.pack()"),
            "bad argument #0 to 'pack' (MessagePack pack needs input.)"
        );
        assert_eq!(
            error(&lua, "local t = {} for i = 1, 4001 do t[i] = 1 end cmsgpack.pack(unpack(t))"),
            "bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)"
        );
        let ok = "local t = {} for i = 1, 4000 do t[i] = 1 end return tostring(#cmsgpack.pack(unpack(t)))";
        assert_eq!(eval(&lua, ok), "4000");
        assert!(eval(&lua, "return hex(cmsgpack:pack())").starts_with("88"));
    }

    #[test]
    fn pack_stack_limits() {
        let lua = lua();
        let many = |n: usize, item: &str| {
            let code = format!(
                "local t = {{}} for i = 1, {n} do t[i] = {item} end return tostring(#cmsgpack.pack(unpack(t)))"
            );
            match lua.load(&code).eval::<String>() {
                Ok(len) => len,
                Err(e) => root(&e),
            }
        };
        assert_eq!(many(3999, "{}"), "3999");
        assert_eq!(many(4000, "{}"), "stack overflow (in function table_is_an_array)");
        assert_eq!(many(3999, "{1}"), "7998");
        assert_eq!(many(4000, "{1}"), "stack overflow (in function table_is_an_array)");
        assert_eq!(many(3998, "{a=1}"), "15992");
        assert_eq!(many(3999, "{a=1}"), "stack overflow (in function mp_encode_lua_table_as_map)");
        assert_eq!(many(3997, "{a={b={}}}"), "27979");
        assert_eq!(many(3998, "{a={b={}}}"), "stack overflow (in function table_is_an_array)");
    }

    #[test]
    fn unpack_numbers() {
        let lua = lua();
        for (input, expected) in [
            (&b"\x00"[..], "1:0"),
            (b"\x7f", "1:127"),
            (b"\xff", "1:-1"),
            (b"\xe0", "1:-32"),
            (b"\xcc\x80", "1:128"),
            (b"\xd0\x80", "1:-128"),
            (b"\xcd\xff\xff", "1:65535"),
            (b"\xd1\xff\xff", "1:-1"),
            (b"\xd1\x80\x00", "1:-32768"),
            (b"\xd1\x00\x80", "1:128"),
            (b"\xce\xff\xff\xff\xff", "1:4294967295"),
            (b"\xd2\x80\x00\x00\x00", "1:-2147483648"),
            (b"\xd2\xff\xff\xff\xff", "1:-1"),
            (b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff", "1:-1"),
            (b"\xcf\x80\x00\x00\x00\x00\x00\x00\x00", "1:-9.2233720368547758e+18"),
            (b"\xcf\x7f\xff\xff\xff\xff\xff\xff\xff", "1:9.2233720368547758e+18"),
            (b"\xd3\x80\x00\x00\x00\x00\x00\x00\x00", "1:-9.2233720368547758e+18"),
            (b"\xd3\xff\xff\xff\xff\xff\xff\xff\xff", "1:-1"),
            (b"\xca\x3f\xc0\x00\x00", "1:1.5"),
            (b"\xca\x7f\xc0\x00\x00", "1:nan"),
            (b"\xca\x7f\x80\x00\x00", "1:inf"),
            (b"\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a", "1:0.10000000000000001"),
            (b"\x01\x02\x03", "3:1 2 3"),
        ] {
            assert_eq!(unpacked(&lua, input), expected, "{input:?}");
        }
    }

    #[test]
    fn unpack_other_values() {
        let lua = lua();
        for (input, expected) in [
            (&b""[..], "0:"),
            (b"\xc0", "1:nil"),
            (b"\xc2", "1:false"),
            (b"\xc3", "1:true"),
            (b"\xa0", "1:\"\""),
            (b"\xa3abc", "1:\"abc\""),
            (b"\xd9\x03abc", "1:\"abc\""),
            (b"\xda\x00\x03abc", "1:\"abc\""),
            (b"\xdb\x00\x00\x00\x03abc", "1:\"abc\""),
            (b"\x90", "1:{}"),
            (b"\x80", "1:{}"),
            (b"\x93\x01\x02\x03", "1:{1=1,2=2,3=3}"),
            (b"\x93\xc0\x02\xc0", "1:{2=2}"),
            (b"\xdc\x00\x02\x01\x02", "1:{1=1,2=2}"),
            (b"\xdd\x00\x00\x00\x01\x05", "1:{1=5}"),
            (b"\x81\xa1a\x01", "1:{\"a\"=1}"),
            (b"\x81\x01\xc0", "1:{}"),
            (b"\x82\x01\x02\x01\x03", "1:{1=3}"),
            (b"\xde\x00\x01\x01\x02", "1:{1=2}"),
            (b"\xdf\x00\x00\x00\x01\x01\x02", "1:{1=2}"),
            (b"\x91\x91\x90", "1:{1={1={}}}"),
            (b"\x81\x91\x01\x02", "1:{{1=1}=2}"),
        ] {
            assert_eq!(unpacked(&lua, input), expected, "{input:?}");
        }
        let mut long = b"\xdb\x00\x00\x01\x00".to_vec();
        long.extend([b'z'; 256]);
        assert_eq!(unpacked(&lua, &long), format!("1:\"{}\"", "z".repeat(256)));
    }

    #[test]
    fn unpack_errors() {
        let lua = lua();
        let missing = "Missing bytes in input.";
        let bad = "Bad data format in input.";
        for (input, expected) in [
            (&b"\xcc"[..], missing),
            (b"\xca\x3f", missing),
            (b"\xcb\x3f", missing),
            (b"\xa3ab", missing),
            (b"\xd9", missing),
            (b"\xd9\x03ab", missing),
            (b"\xda\x00", missing),
            (b"\xdb\x00\x00", missing),
            (b"\xdb\xff\xff\xff\xff", missing),
            (b"\xdb\xff\xff\xff\xffabc", missing),
            (b"\x93\x01\x02", missing),
            (b"\xdc\x00", missing),
            (b"\xdd\xff\xff\xff\xff\x01", missing),
            (b"\xdf\xff\xff\xff\xff", missing),
            (b"\x81\xa1a", missing),
            (b"\x91\x91", missing),
            (b"\x81", missing),
            (b"\x81\xc0", missing),
            (b"\xc1", bad),
            (b"\xc4\x01a", bad),
            (b"\xc5\x00\x01a", bad),
            (b"\xc6\x00\x00\x00\x01a", bad),
            (b"\xc7\x01\x01a", bad),
            (b"\xd4\x01\x01", bad),
            (b"\xd8", bad),
            (b"\x01\xc1", bad),
            (b"\x91\xc1", bad),
            (b"\x81\xc0\xc1", bad),
            (b"\x81\xc0\x01", "table index is nil"),
            (b"\x82\xc0\x01\xc1", "table index is nil"),
            (b"\x81\xca\x7f\xc0\x00\x00\x01", "table index is NaN"),
        ] {
            assert_eq!(unpack_error(&lua, input, "cmsgpack.unpack(S)"), expected, "{input:?}");
        }
    }

    #[test]
    fn unpack_one_and_limit() {
        let lua = lua();
        let s = b"\x01\xa2ab\x93\x01\x02\x03";
        for (call, expected) in [
            ("cmsgpack.unpack_one(S)", "2:1 1"),
            ("cmsgpack.unpack_one(S, 0)", "2:1 1"),
            ("cmsgpack.unpack_one(S, nil)", "2:1 1"),
            ("cmsgpack.unpack_one(S, 1)", "2:4 \"ab\""),
            ("cmsgpack.unpack_one(S, 1.9)", "2:4 \"ab\""),
            ("cmsgpack.unpack_one(S, '1')", "2:4 \"ab\""),
            ("cmsgpack.unpack_one(S, 1, 2, 3)", "2:4 \"ab\""),
            ("cmsgpack.unpack_one(S, 2)", "2:3 97"),
            ("cmsgpack.unpack_one(S, 4)", "2:-1 {1=1,2=2,3=3}"),
            ("cmsgpack.unpack_one(S, 8)", "1:-1"),
            ("cmsgpack.unpack_one(1)", "2:-1 49"),
            ("cmsgpack.unpack_one('')", "1:-1"),
            ("cmsgpack.unpack_limit(S, 0)", "3:1 \"ab\" {1=1,2=2,3=3}"),
            ("cmsgpack.unpack_limit(S, 0, 0)", "3:1 \"ab\" {1=1,2=2,3=3}"),
            ("cmsgpack.unpack_limit(S, 0, 1)", "1:1"),
            ("cmsgpack.unpack_limit(S, 1)", "2:1 1"),
            ("cmsgpack.unpack_limit(S, 2)", "3:4 1 \"ab\""),
            ("cmsgpack.unpack_limit(S, 3)", "4:-1 1 \"ab\" {1=1,2=2,3=3}"),
            ("cmsgpack.unpack_limit(S, 4)", "4:-1 1 \"ab\" {1=1,2=2,3=3}"),
            ("cmsgpack.unpack_limit(S, 2, 1)", "3:-1 \"ab\" {1=1,2=2,3=3}"),
            ("cmsgpack.unpack_limit(S, 5, 8)", "1:-1"),
            ("cmsgpack.unpack_limit(S, '2', '1')", "3:-1 \"ab\" {1=1,2=2,3=3}"),
            ("cmsgpack.unpack_limit(S, ' 2 ', '0x1')", "3:-1 \"ab\" {1=1,2=2,3=3}"),
            ("cmsgpack.unpack_limit('', 0, 0)", "0:"),
            ("cmsgpack.unpack_limit('', 1)", "1:-1"),
            ("cmsgpack.unpack_limit('\\1\\204', 1)", "2:1 1"),
            ("cmsgpack.unpack(S, 5)", "3:1 \"ab\" {1=1,2=2,3=3}"),
            ("cmsgpack.unpack(12)", "2:49 50"),
            ("cmsgpack.unpack(1.5)", "3:49 46 53"),
        ] {
            assert_eq!(decoded(&lua, s, call).expect(call), expected, "{call}");
        }
    }

    #[test]
    fn offset_and_limit_errors() {
        let lua = lua();
        let s = b"\x01\xa2ab\x93\x01\x02\x03";
        for (call, expected) in [
            ("cmsgpack.unpack_one(S, 9)", "Start offset 9 greater than input length 8."),
            ("cmsgpack.unpack_one('', 1)", "Start offset 1 greater than input length 0."),
            ("cmsgpack.unpack_one(S, 2^40)", "Start offset 0 greater than input length 8."),
            ("cmsgpack.unpack_one(S, 4294967297)", "Start offset 1 greater than input length 8."),
            ("cmsgpack.unpack_limit(S, 1, 100)", "Start offset 100 greater than input length 8."),
            ("cmsgpack.unpack_limit(S, 1, 2^32+3)", "Start offset 3 greater than input length 8."),
            (
                "cmsgpack.unpack_one(S, -1)",
                "Invalid request to unpack with offset of -1 and limit of 8.",
            ),
            (
                "cmsgpack.unpack_one(S, 0/0)",
                "Invalid request to unpack with offset of 0 and limit of 8.",
            ),
            (
                "cmsgpack.unpack_one(S, -2^40)",
                "Invalid request to unpack with offset of 0 and limit of 8.",
            ),
            (
                "cmsgpack.unpack_one(S, 2^63)",
                "Invalid request to unpack with offset of 0 and limit of 8.",
            ),
            (
                "cmsgpack.unpack_limit(S, -1)",
                "Invalid request to unpack with offset of 0 and limit of 8.",
            ),
            (
                "cmsgpack.unpack_limit(S, -1, 3)",
                "Invalid request to unpack with offset of 3 and limit of 8.",
            ),
            (
                "cmsgpack.unpack_limit(S, 1, -3)",
                "Invalid request to unpack with offset of -3 and limit of 8.",
            ),
            (
                "cmsgpack.unpack_limit(S, -2^32, 0)",
                "Invalid request to unpack with offset of 0 and limit of 8.",
            ),
            (
                "cmsgpack.unpack_limit(S, 0/0)",
                "Invalid request to unpack with offset of 0 and limit of 8.",
            ),
            ("cmsgpack.unpack_one('\\204')", "Missing bytes in input."),
            ("cmsgpack.unpack_limit('\\1\\204', 2)", "Missing bytes in input."),
        ] {
            assert_eq!(unpack_error(&lua, s, call), expected, "{call}");
        }
    }

    #[test]
    fn argument_errors() {
        let lua = lua();
        let s = b"\x01";
        for (call, expected) in [
            ("cmsgpack.unpack()", "bad argument #1 to 'unpack' (string expected, got no value)"),
            ("cmsgpack.unpack(nil)", "bad argument #1 to 'unpack' (string expected, got nil)"),
            ("cmsgpack.unpack(true)", "bad argument #1 to 'unpack' (string expected, got boolean)"),
            ("cmsgpack.unpack({})", "bad argument #1 to 'unpack' (string expected, got table)"),
            (
                "(function() local f = cmsgpack.unpack return f() end)()",
                "bad argument #1 to 'f' (string expected, got no value)",
            ),
            (
                "cmsgpack.unpack_one()",
                "bad argument #1 to 'unpack_one' (string expected, got no value)",
            ),
            (
                "cmsgpack.unpack_one(nil, 1)",
                "bad argument #1 to 'unpack_one' (string expected, got nil)",
            ),
            (
                "cmsgpack.unpack_one({})",
                "bad argument #1 to 'unpack_one' (string expected, got table)",
            ),
            (
                "cmsgpack.unpack_one(S, 'x')",
                "bad argument #2 to 'unpack_one' (number expected, got string)",
            ),
            (
                "cmsgpack.unpack_one(nil, 'x')",
                "bad argument #2 to 'unpack_one' (number expected, got string)",
            ),
            (
                "cmsgpack.unpack_one(S, {})",
                "bad argument #2 to 'unpack_one' (number expected, got table)",
            ),
            (
                "cmsgpack.unpack_limit()",
                "bad argument #2 to 'unpack_limit' (number expected, got no value)",
            ),
            (
                "cmsgpack.unpack_limit(S)",
                "bad argument #2 to 'unpack_limit' (number expected, got no value)",
            ),
            (
                "cmsgpack.unpack_limit(S, 'a')",
                "bad argument #2 to 'unpack_limit' (number expected, got string)",
            ),
            (
                "cmsgpack.unpack_limit(S, 1, 'a')",
                "bad argument #3 to 'unpack_limit' (number expected, got string)",
            ),
            (
                "cmsgpack.unpack_limit(nil, 1, 'a')",
                "bad argument #3 to 'unpack_limit' (number expected, got string)",
            ),
            (
                "cmsgpack.unpack_limit(S, 1, true)",
                "bad argument #3 to 'unpack_limit' (number expected, got boolean)",
            ),
            (
                "cmsgpack.unpack_limit(nil, 1)",
                "bad argument #1 to 'unpack_limit' (string expected, got nil)",
            ),
        ] {
            assert_eq!(unpack_error(&lua, s, call), expected, "{call}");
        }
        // Method calls: Valkey says "calling 'unpack' on bad self (string expected, got table)",
        // "calling 'unpack_one' on bad self (...)" and "bad argument #1 to 'unpack_limit'
        // (number expected, got no value)", which Lua's own `luaL_argerror` makes of these
        // errors when the engine's wrapper raises them.
        for (call, expected) in [
            ("cmsgpack:unpack()", "bad argument #1 to 'unpack' (string expected, got table)"),
            (
                "cmsgpack:unpack_one()",
                "bad argument #1 to 'unpack_one' (string expected, got table)",
            ),
            (
                "cmsgpack:unpack_limit()",
                "bad argument #2 to 'unpack_limit' (number expected, got no value)",
            ),
        ] {
            assert_eq!(unpack_error(&lua, s, call), expected, "{call}");
        }
        assert_eq!(
            error(&lua, "local p = cmsgpack.pack p()"),
            "bad argument #0 to 'p' (MessagePack pack needs input.)"
        );
        let many = "local t = {} for i = 1, 4001 do t[i] = 1 end cmsgpack:pack(unpack(t))";
        assert_eq!(
            error(&lua, many),
            "bad argument #-1 to 'pack' (Too many arguments for MessagePack pack.)"
        );
    }

    #[test]
    fn bare_errors_go_through_raise() {
        let lua = Lua::new();
        let raise: Raise = |lua, message| ("raised", message).into_lua_multi(lua);
        open_with(&lua, raise).expect("open cmsgpack");
        lua.load(DUMP).exec().expect("test helpers");
        assert_eq!(
            decoded(&lua, b"\x81\xc0\x01", "cmsgpack.unpack(S)").expect("raised"),
            "2:\"raised\" \"table index is nil\""
        );
        let nan_key = b"\x81\xca\x7f\xc0\x00\x00\x01";
        assert_eq!(
            decoded(&lua, nan_key, "cmsgpack.unpack_one(S)").expect("raised"),
            "2:\"raised\" \"table index is NaN\""
        );
        // Other errors stay errors (the engine's wrapper puts the script position first).
        assert_eq!(unpack_error(&lua, b"\xc1", "cmsgpack.unpack(S)"), "Bad data format in input.");
    }

    #[test]
    fn decoding_stack_limits() {
        let lua = lua();
        let nested = |depth: usize, inner: &[u8]| {
            let mut input = b"\x91".repeat(depth);
            input.extend_from_slice(inner);
            input
        };
        let count = "select('#', cmsgpack.unpack(S))";
        assert_eq!(decoded(&lua, &nested(3999, b"\x00"), count).expect("3999 levels"), "1:1");
        assert_eq!(
            unpack_error(&lua, &nested(3999, b"\x90"), count),
            "stack overflow (in function mp_decode_to_lua_array)"
        );
        assert_eq!(
            unpack_error(&lua, &nested(3999, b"\x00"), "cmsgpack.unpack(S, 1)"),
            "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"
        );
        assert_eq!(
            decoded(&lua, &nested(3999, b"\x00"), "cmsgpack.unpack_one(S)").expect("one"),
            {
                let mut dump = String::from("2:-1 ");
                dump.push_str(&"{1=".repeat(3999));
                dump.push('0');
                dump.push_str(&"}".repeat(3999));
                dump
            }
        );
        let maps = |depth: usize, inner: &[u8]| {
            let mut input = b"\x81\xa1a".repeat(depth);
            input.extend_from_slice(inner);
            input
        };
        assert_eq!(decoded(&lua, &maps(3999, b"\xa1b"), count).expect("maps"), "1:1");
        assert_eq!(
            unpack_error(&lua, &maps(4000, b"\xa1b"), count),
            "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"
        );
        assert_eq!(unpack_error(&lua, &nested(3999, b""), count), "Missing bytes in input.");
        assert_eq!(
            unpack_error(&lua, &nested(5000, b""), count),
            "stack overflow (in function mp_decode_to_lua_array)"
        );
        let flat = |n: usize| b"\x00".repeat(n);
        assert_eq!(decoded(&lua, &flat(7900), count).expect("7900 values"), "1:7900");
        assert_eq!(
            unpack_error(&lua, &flat(8000), count),
            "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"
        );
        let limited = "select('#', cmsgpack.unpack_limit(S, 7000, 2))";
        assert_eq!(decoded(&lua, &flat(8001), limited).expect("7000 values"), "1:7001");
        // Deliberate difference: mlua needs a few stack slots of its own, so results stop short
        // of Valkey's limit (Valkey returns these 7990 values, and fails `unpack_limit(S, 8001,
        // 2)` only after 7999 of them with "stack overflow (in function mp_unpack_full)").
        assert_eq!(
            unpack_error(&lua, &flat(7990), count),
            "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"
        );
    }

    #[test]
    fn round_trips() {
        let lua = lua();
        let code = "return pk(cmsgpack.unpack(cmsgpack.pack({1,{2,{3}},{a={b='c'}},true,false,'x',1.5,-7})))";
        assert_eq!(
            eval(&lua, code),
            "1:{1=1,2={1=2,2={1=3}},3={\"a\"={\"b\"=\"c\"}},4=true,5=false,6=\"x\",7=1.5,8=-7}"
        );
        let code = "return pk(cmsgpack.unpack(cmsgpack.pack(2^53+1, -2^53, 1e308, -1e-308)))";
        assert_eq!(
            eval(&lua, code),
            "4:9007199254740992 -9007199254740992 1e+308 -9.9999999999999991e-309"
        );
        let code = "return tostring(cmsgpack.pack(1,2) == cmsgpack.pack(1) .. cmsgpack.pack(2))";
        assert_eq!(eval(&lua, code), "true");
        let code = "local t = cmsgpack.unpack(cmsgpack.pack({[1]=1,[2]=2,[4]=4})) return pk(t)";
        assert_eq!(eval(&lua, code), "1:{1=1,2=2,4=4}");
    }
}
