//! `math.random` and `math.randomseed` as Valkey's build has them: not libc's generator but
//! the 48-bit linear congruential generator of `lrand48` (x' = 0x5DEECE66D x + 0xB mod 2^48,
//! 31 bits out), one per interpreter, starting from lrand48's default state. A script that
//! draws numbers gets the same ones on ferrokey as on Valkey.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{Lua, Table, Value, Variadic};

use super::cfunc::{arg_error, type_name};

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const INCREMENT: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;
/// lrand48's state before any seeding.
const DEFAULT_STATE: u64 = 0x1234_ABCD_330E;
/// Valkey divides by INT32_MAX (after a modulo that avoids exactly 1).
const OUT_MAX: i64 = i32::MAX as i64;

/// The generator's state, shared by `random` and `randomseed`.
#[derive(Clone)]
pub struct Lrand48(Rc<Cell<u64>>);

impl Default for Lrand48 {
    fn default() -> Lrand48 {
        Lrand48(Rc::new(Cell::new(DEFAULT_STATE)))
    }
}

impl Lrand48 {
    /// The next 31-bit output.
    pub fn next(&self) -> i64 {
        let x = (self.0.get().wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT)) & MASK;
        self.0.set(x);
        (x >> 17) as i64
    }

    /// `srand48(seed)`: the seed's 32 bits above lrand48's fixed low 16.
    pub fn seed(&self, seed: i32) {
        self.0.set((((seed as u32) as u64) << 16) | 0x330E);
    }
}

/// `luaL_checkint`: a number (or numeric string), truncated to a C int.
fn check_int(lua: &Lua, args: &[Value], pos: usize) -> mlua::Result<i32> {
    let got = type_name(args.get(pos - 1));
    match lua.coerce_number(args.get(pos - 1).cloned().unwrap_or(Value::Nil))? {
        Some(n) => Ok(n as i64 as i32),
        None => Err(arg_error(lua, pos, format!("number expected, got {got}"))),
    }
}

/// Replaces `math.random` and `math.randomseed` in `math`.
pub fn install(lua: &Lua, math: &Table) -> mlua::Result<()> {
    let gen = Lrand48::default();
    let g = gen.clone();
    let random = lua.create_function(move |lua, args: Variadic<Value>| {
        let r = (g.next() % OUT_MAX) as f64 / OUT_MAX as f64;
        match args.len() {
            0 => Ok(r),
            1 => {
                let u = check_int(lua, &args, 1)?;
                if u < 1 {
                    return Err(arg_error(lua, 1, "interval is empty"));
                }
                Ok((r * u as f64).floor() + 1.0)
            }
            2 => {
                let l = check_int(lua, &args, 1)?;
                let u = check_int(lua, &args, 2)?;
                if l > u {
                    return Err(arg_error(lua, 2, "interval is empty"));
                }
                Ok((r * (u as f64 - l as f64 + 1.0)).floor() + l as f64)
            }
            _ => Err(mlua::Error::RuntimeError("wrong number of arguments".into())),
        }
    })?;
    let randomseed = lua.create_function(move |lua, args: Variadic<Value>| {
        gen.seed(check_int(lua, &args, 1)?);
        Ok(())
    })?;
    math.raw_set("random", super::cfunc::lua_style(lua, random)?)?;
    math.raw_set("randomseed", super::cfunc::lua_style(lua, randomseed)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_draws_are_lrand48s() {
        // Valkey's first draws (its fourth `math.random()` is 0.44658343468168).
        let g = Lrand48::default();
        assert_eq!(
            [g.next(), g.next(), g.next(), g.next()],
            [851401618, 1804928587, 758783491, 959030623]
        );
        // glibc: srand48(0) then lrand48() twice; srand48(-5) then once.
        g.seed(0);
        assert_eq!([g.next(), g.next()], [366850414, 1610402240]);
        g.seed(-5);
        assert_eq!(g.next(), 1754100061);
    }
}
