//! The `bit` library: Lua BitOp 1.0.2 (Mike Pall's bit operations for Lua 5.1) as Valkey's
//! build loads it into the scripting interpreter under the global `bit`. It offers `tobit`,
//! `tohex`, `bnot`, `band`, `bor`, `bxor`, `lshift`, `rshift`, `arshift`, `rol`, `ror` and
//! `bswap`, all working on 32-bit integers and returning signed 32-bit results as Lua numbers.
//!
//! Arguments are converted the way LuaBitOp does on a `double` build: the value (a number, or a
//! string Lua 5.1 itself converts to a number) is added to 2^52+2^51 and the low 32 bits of the
//! sum's IEEE-754 representation are the result. That gives modular results for large and
//! negative values, rounds non-integral values to nearest-even, and maps NaN and the infinities
//! to 0, exactly as Valkey does. Values that are not numbers raise LuaBitOp's argument error
//! (`bad argument #1 to 'tobit' (number expected, got no value)`).
//!
//! Errors are what the C library raises, in mlua's terms: an argument error is an
//! `mlua::Error::BadArgument { pos, cause: RuntimeError("number expected, got nil") }`, which
//! the scripting engine's C-function wrapper (`scripting::cfunc`) raises through Lua's own
//! `luaL_argerror`, so the function name the caller used, `calling 'f' on bad self` for a
//! method and the `user_script:1: ` position come out as in Valkey. The library's load-time
//! self test is left out: the conversion here does not depend on the C compiler or the FPU
//! mode.

use super::cfunc::{arg_error, type_name};
use mlua::{Lua, LuaString, MultiValue, Table, Value};

/// 2^52 + 2^51: adding it to a double puts the integer part of the value, modulo 2^32, into
/// the low 32 bits of the double's representation.
const CONVERSION_BIAS: f64 = 6_755_399_441_055_744.0;

/// Creates the `bit` table and sets it as a global.
pub fn open(lua: &Lua) -> mlua::Result<()> {
    let bit = lua.create_table()?;
    add(lua, &bit, "tobit", |lua, args| Ok(bret(barg(lua, &args, 1)?)))?;
    add(lua, &bit, "bnot", |lua, args| Ok(bret(!barg(lua, &args, 1)?)))?;
    add(lua, &bit, "band", |lua, args| fold(lua, &args, |a, b| a & b))?;
    add(lua, &bit, "bor", |lua, args| fold(lua, &args, |a, b| a | b))?;
    add(lua, &bit, "bxor", |lua, args| fold(lua, &args, |a, b| a ^ b))?;
    add(lua, &bit, "lshift", |lua, args| shift(lua, &args, |b, n| b << n))?;
    add(lua, &bit, "rshift", |lua, args| shift(lua, &args, |b, n| b >> n))?;
    add(lua, &bit, "arshift", |lua, args| shift(lua, &args, |b, n| ((b as i32) >> n) as u32))?;
    add(lua, &bit, "rol", |lua, args| shift(lua, &args, u32::rotate_left))?;
    add(lua, &bit, "ror", |lua, args| shift(lua, &args, u32::rotate_right))?;
    add(lua, &bit, "bswap", |lua, args| Ok(bret(barg(lua, &args, 1)?.swap_bytes())))?;
    let tohex = lua.create_function(|lua, args: MultiValue| tohex(lua, &args))?;
    bit.set("tohex", tohex)?;
    lua.globals().set("bit", bit)
}

/// Registers one function returning a number under `name`.
fn add<F>(lua: &Lua, table: &Table, name: &str, f: F) -> mlua::Result<()>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<f64> + Send + 'static,
{
    table.set(name, lua.create_function(f)?)
}

/// The Lua number a 32-bit result is returned as: its signed value.
fn bret(b: u32) -> f64 {
    f64::from(b as i32)
}

/// Converts a Lua number to 32 bits as LuaBitOp does (see the module documentation).
fn tobit32(n: f64) -> u32 {
    // Truncation to the low 32 bits of the biased double is the whole conversion.
    (n + CONVERSION_BIAS).to_bits() as u32
}

/// Argument `idx` (1-based) as 32 bits, or LuaBitOp's "number expected" argument error.
fn barg(lua: &Lua, args: &MultiValue, idx: usize) -> mlua::Result<u32> {
    let value = args.get(idx - 1);
    let number = match value {
        Some(Value::Number(n)) => Some(*n),
        Some(Value::Integer(i)) => Some(*i as f64),
        Some(v) => lua.coerce_number(v.clone())?,
        None => None,
    };
    match number {
        Some(n) => Ok(tobit32(n)),
        None => Err(arg_error(lua, idx, format!("number expected, got {}", type_name(value)))),
    }
}

/// `band`/`bor`/`bxor`: the first argument combined with all the others, which are converted
/// from the last one backwards (so the highest bad argument is the one reported).
fn fold(lua: &Lua, args: &MultiValue, op: fn(u32, u32) -> u32) -> mlua::Result<f64> {
    let mut acc = barg(lua, args, 1)?;
    for idx in (2..=args.len()).rev() {
        acc = op(acc, barg(lua, args, idx)?);
    }
    Ok(bret(acc))
}

/// The shifts and rotations: the count is the second argument modulo 32.
fn shift(lua: &Lua, args: &MultiValue, op: fn(u32, u32) -> u32) -> mlua::Result<f64> {
    let b = barg(lua, args, 1)?;
    let n = barg(lua, args, 2)? & 31;
    Ok(bret(op(b, n)))
}

/// `bit.tohex(x [, n])`: the low `|n|` hex digits of `x` (at most 8; 8 when `n` is absent),
/// upper case when `n` is negative.
fn tohex(lua: &Lua, args: &MultiValue) -> mlua::Result<LuaString> {
    let mut b = barg(lua, args, 1)?;
    let mut n = if args.len() < 2 { 8 } else { barg(lua, args, 2)? as i32 };
    let digits: &[u8; 16] = if n < 0 { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    n = n.max(i32::MIN + 1).abs().min(8);
    let mut buf = vec![0u8; n as usize];
    for slot in buf.iter_mut().rev() {
        *slot = digits[(b & 15) as usize];
        b >>= 4;
    }
    lua.create_string(&buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lua() -> Lua {
        let lua = Lua::new();
        open(&lua).expect("open bit");
        lua
    }

    /// Evaluates `expr` and returns its value as a number.
    fn num(expr: &str) -> f64 {
        lua().load(format!("return {expr}")).eval::<f64>().expect(expr)
    }

    fn string(expr: &str) -> String {
        lua().load(format!("return {expr}")).eval::<String>().expect(expr)
    }

    /// Runs `code` and returns the root error message it fails with.
    fn err(code: &str) -> String {
        match lua().load(code).exec() {
            Ok(()) => panic!("{code} did not fail"),
            Err(e) => root_message(&e),
        }
    }

    use crate::scripting::cfunc::tests::root_message;

    #[test]
    fn tobit_matches_valkey() {
        // Values observed from Valkey 9.1.2.
        let cases: &[(&str, f64)] = &[
            ("0xffffffff", -1.0),
            ("-1", -1.0),
            ("2^31", -2147483648.0),
            ("2^32+5", 5.0),
            ("1.5", 2.0),
            ("2.5", 2.0),
            ("-1.5", -2.0),
            ("-2.5", -2.0),
            ("0.5", 0.0),
            ("2^52", 0.0),
            ("2^53+3", 2.0),
            ("2^60+2^40+7", 0.0),
            ("1e300", -2013235812.0),
            ("-1e300", -2013235812.0),
            ("1/0", 0.0),
            ("-1/0", 0.0),
            ("0/0", 0.0),
            ("2^51", 0.0),
            ("-(2^51)", 0.0),
            ("-(2^51)-1", -2.0),
            ("6755399441055744", 0.0),
            ("2^31-0.5", -2147483648.0),
            ("'0x10'", 16.0),
            ("' 12 '", 12.0),
            ("'inf'", 0.0),
            ("'nan'", 0.0),
            ("'0x1p4'", 16.0),
            ("'-0x10'", -16.0),
            ("'1e3'", 1000.0),
        ];
        for (arg, want) in cases {
            assert_eq!(num(&format!("bit.tobit({arg})")), *want, "tobit({arg})");
        }
    }

    #[test]
    fn argument_errors_match_valkey() {
        let cases: &[(&str, &str)] = &[
            ("bit.tobit()", "bad argument #1 to 'tobit' (number expected, got no value)"),
            ("bit.tobit('12a')", "bad argument #1 to 'tobit' (number expected, got string)"),
            ("bit.tobit('')", "bad argument #1 to 'tobit' (number expected, got string)"),
            ("bit.tobit(nil)", "bad argument #1 to 'tobit' (number expected, got nil)"),
            ("bit.tobit({})", "bad argument #1 to 'tobit' (number expected, got table)"),
            ("bit.tobit(true)", "bad argument #1 to 'tobit' (number expected, got boolean)"),
            ("bit.tohex(255, nil)", "bad argument #2 to 'tohex' (number expected, got nil)"),
            ("bit.tohex(255, 'x')", "bad argument #2 to 'tohex' (number expected, got string)"),
            ("bit.tohex()", "bad argument #1 to 'tohex' (number expected, got no value)"),
            ("bit.tohex(nil, 2)", "bad argument #1 to 'tohex' (number expected, got nil)"),
            ("bit.bnot()", "bad argument #1 to 'bnot' (number expected, got no value)"),
            ("bit.band()", "bad argument #1 to 'band' (number expected, got no value)"),
            ("bit.band(1, nil)", "bad argument #2 to 'band' (number expected, got nil)"),
            ("bit.band(1, 2, {})", "bad argument #3 to 'band' (number expected, got table)"),
            ("bit.bor(1, 2, 3, 'a', {})", "bad argument #5 to 'bor' (number expected, got table)"),
            ("bit.lshift(1)", "bad argument #2 to 'lshift' (number expected, got no value)"),
            ("bit.lshift()", "bad argument #1 to 'lshift' (number expected, got no value)"),
            ("bit.rshift(1, 'a')", "bad argument #2 to 'rshift' (number expected, got string)"),
            (
                "local f = bit.bswap f(print)",
                "bad argument #1 to 'f' (number expected, got function)",
            ),
        ];
        for (code, want) in cases {
            assert_eq!(err(code), *want, "{code}");
        }
        // Called through pcall the function has no name: Valkey says
        // "bad argument #1 to '?' (number expected, got no value)".
        let lua = lua();
        let tobit = lua.load("return bit.tobit").eval::<mlua::Function>().expect("tobit");
        let e = tobit.call::<f64>(()).expect_err("no argument");
        assert_eq!(root_message(&e), "bad argument #1 to '?' (number expected, got no value)");
    }

    #[test]
    fn method_call_errors_leave_self_to_lual_argerror() {
        // Valkey: "calling 'tobit' on bad self (number expected, got table)". The callback
        // reports argument 1; Lua's luaL_argerror (in the engine's wrapper) sees the method
        // call and words it so.
        let e = lua().load("bit:tobit()").exec().expect_err("bad self");
        let mlua::Error::CallbackError { cause, .. } = e else { panic!("{e}") };
        let mlua::Error::BadArgument { pos, cause, .. } = cause.as_ref() else { panic!() };
        assert_eq!(*pos, 1);
        assert_eq!(root_message(cause), "number expected, got table");
    }

    #[test]
    fn tohex_matches_valkey() {
        let cases: &[(&str, &str)] = &[
            ("1", "00000001"),
            ("-1", "ffffffff"),
            ("255, 2", "ff"),
            ("255, -2", "FF"),
            ("255, -20", "000000FF"),
            ("255, 0", ""),
            ("0x12345678, 3", "678"),
            ("255, -2^31", "000000FF"),
            ("255, 2^31", "000000FF"),
            ("255, 2^32+4", "00ff"),
            ("255, -0.4", ""),
            ("-1, -8", "FFFFFFFF"),
            ("1, 2, {}", "01"),
        ];
        for (args, want) in cases {
            assert_eq!(string(&format!("bit.tohex({args})")), *want, "tohex({args})");
        }
    }

    #[test]
    fn operations_match_valkey() {
        let cases: &[(&str, f64)] = &[
            ("bit.bnot(0)", -1.0),
            ("bit.bnot(1, {})", -2.0),
            ("bit.band(7)", 7.0),
            ("bit.band(0xff, 0x0f, 0x3)", 3.0),
            ("bit.bor(1,2,4,8)", 15.0),
            ("bit.bxor(1,3,'7')", 5.0),
            ("bit.lshift(1, 31)", -2147483648.0),
            ("bit.lshift(1, 32)", 1.0),
            ("bit.lshift(1, 33)", 2.0),
            ("bit.lshift(1, -1)", -2147483648.0),
            ("bit.rshift(-1, 28)", 15.0),
            ("bit.arshift(-256, 4)", -16.0),
            ("bit.arshift(0x80000000, 31)", -1.0),
            ("bit.rol(0x12345678, 12)", 1164411171.0),
            ("bit.ror(0x12345678, 12)", 1736516421.0),
            ("bit.rol(0x12345678, 0)", 305419896.0),
            ("bit.ror(1, 0)", 1.0),
            ("bit.ror(1, 32)", 1.0),
            ("bit.rol(1, 2, 3)", 4.0),
            ("bit.bswap(0x12345678)", 2018915346.0),
            ("bit.bswap(-1)", -1.0),
            ("bit.bswap(1, nil)", 16777216.0),
            ("bit.tobit(1, {})", 1.0),
        ];
        for (code, want) in cases {
            assert_eq!(num(code), *want, "{code}");
        }
    }

    #[test]
    fn table_has_the_valkey_functions() {
        let names: String = lua()
            .load(
                "local o = {} for k, v in pairs(bit) do o[#o+1] = k .. ':' .. type(v) end \
                 table.sort(o) return table.concat(o, ',')",
            )
            .eval()
            .expect("names");
        assert_eq!(
            names,
            "arshift:function,band:function,bnot:function,bor:function,bswap:function,\
             bxor:function,lshift:function,rol:function,ror:function,rshift:function,\
             tobit:function,tohex:function"
        );
    }
}
