//! Placeholder until the library lands (replaced by its module).

pub fn open(lua: &mlua::Lua) -> mlua::Result<()> {
    lua.globals().set("cmsgpack", lua.create_table()?)
}
