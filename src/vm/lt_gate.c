/* lt_gate.c: torch._gate, the cheap front of a function that has another
   form (Torch7's result-tensor-first calls, a generator first, ...). A gate
   looks at its arguments' types, in C; only a call that may be the other
   form goes to the Lua handler, which answers it or declines. Every other
   call goes straight to the function, so PyTorch's forms pay a type test
   and no Lua. Either way errors are raised at the caller's line and name the
   function, as the function called directly would. */
#include <string.h>
#include "lt.h"

/* what makes a call a candidate for the handler */
enum {
  GATE_LEAD = 0,      /* the first k arguments are userdata (tensors, storages, generators) */
  GATE_NARGS = 1,     /* the first is userdata and there are at least k positional arguments */
  GATE_FIRST_NUM = 2, /* the first is a number and there are at least k positional arguments */
  GATE_ALWAYS = 3     /* every call */
};

/* The arguments before a trailing options table (a plain table). */
static int positional(lua_State *L) {
  int top = lua_gettop(L);
  if (top && lua_type(L, top) == LUA_TTABLE) top--;
  return top;
}

static int candidate(lua_State *L, int kind, int k) {
  int n = positional(L);
  switch (kind) {
  case GATE_LEAD:
    if (n < k) return 0;
    for (int i = 1; i <= k; i++)
      if (lua_type(L, i) != LUA_TUSERDATA) return 0;
    return 1;
  case GATE_NARGS: return n >= k && lua_type(L, 1) == LUA_TUSERDATA;
  case GATE_FIRST_NUM: return n >= k && lua_type(L, 1) == LUA_TNUMBER;
  default: return 1;
  }
}

/* Raises the error on top at the caller's line (level 1 from the gate is
   the caller), naming the function where Lua could not ('?'). */
static int raise_here(lua_State *L) {
  if (lua_type(L, -1) == LUA_TSTRING) {
    const char *name = lua_tostring(L, lua_upvalueindex(4));
    lua_pushfstring(L, "to '%s'", name);
    luaL_gsub(L, lua_tostring(L, -2), "to '?'", lua_tostring(L, -1));
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

/* The direct gate, in front of a binding of the op registry (a C closure of
   OP_UPVALUES upvalues: lt_push_op_binding's): it carries the binding's
   upvalues as its own, at the same places, and calls the binding's C
   function in its own frame, so a PyTorch call costs a type test more than
   the binding alone, and the binding's errors already name the caller's line.
   Upvalues: 1..OP_UPVALUES the binding's, then the C function, the handler,
   kind * 256 + k, the name. */
#define OP_UPVALUES (LT_ANY_DEVICE_UPVALUE + 2)
#define DIRECT(i) lua_upvalueindex(OP_UPVALUES + (i))
static int direct_gate(lua_State *L) {
  lua_Integer spec = lua_tointeger(L, DIRECT(3));
  if (candidate(L, (int)(spec >> 8), (int)(spec & 255))) {
    int top = lua_gettop(L);
    luaL_checkstack(L, top + 2, "too many arguments");
    lua_pushvalue(L, DIRECT(2));
    for (int i = 1; i <= top; i++) lua_pushvalue(L, i);
    if (lua_pcall(L, top, LUA_MULTRET, 0) != LUA_OK) {
      if (lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
      }
      return lua_error(L);
    }
    if (lua_toboolean(L, top + 1)) return lua_gettop(L) - top - 1;
    lua_settop(L, top);
  }
  lua_CFunction fn = (lua_CFunction)(intptr_t)lua_tointeger(L, DIRECT(1));
  return fn(L);
}

/* upvalues: 1 the function, 2 the handler, 3 kind * 256 + k, 4 the name */
static int gate(lua_State *L) {
  int top = lua_gettop(L);
  lua_Integer spec = lua_tointeger(L, lua_upvalueindex(3));
  if (candidate(L, (int)(spec >> 8), (int)(spec & 255))) {
    luaL_checkstack(L, top + 2, "too many arguments");
    lua_pushvalue(L, lua_upvalueindex(2));
    for (int i = 1; i <= top; i++) lua_pushvalue(L, i);
    if (lua_pcall(L, top, LUA_MULTRET, 0) != LUA_OK) return raise_here(L);
    if (lua_toboolean(L, top + 1)) return lua_gettop(L) - top - 1;     /* answered: the rest */
    lua_settop(L, top);                                                /* declined */
  }
  luaL_checkstack(L, 2, "too many arguments");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  if (lua_pcall(L, top, LUA_MULTRET, 0) != LUA_OK) return raise_here(L);
  return lua_gettop(L);
}

/* torch._gate(fn, handler, kind, k, name) */
static int t_gate(lua_State *L) {
  luaL_checkany(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_Integer kind = luaL_checkinteger(L, 3), k = luaL_checkinteger(L, 4);
  luaL_checkstring(L, 5);
  if (kind < 0 || kind > GATE_ALWAYS || k < 0 || k > 255) luaL_error(L, "_gate: bad spec %I, %I", kind, k);
  lua_settop(L, 5);
  lua_CFunction fn = lua_tocfunction(L, 1);
  int n = 0;
  while (fn && lua_getupvalue(L, 1, n + 1)) { lua_pop(L, 1); n++; }
  if (fn && n == OP_UPVALUES) {                   /* a registry binding: the direct gate */
    for (int i = 1; i <= n; i++) lua_getupvalue(L, 1, i);
    lua_pushinteger(L, (lua_Integer)(intptr_t)fn);
    lua_pushvalue(L, 2);
    lua_pushinteger(L, kind * 256 + k);
    lua_pushvalue(L, 5);
    lua_pushcclosure(L, direct_gate, n + 4);
    return 1;
  }
  lua_pushinteger(L, kind * 256 + k);
  lua_replace(L, 3);
  lua_remove(L, 4);
  lua_pushcclosure(L, gate, 4);
  return 1;
}

void lt_open_gate(lua_State *L) {
  /* stack: methods torch mt */
  lua_pushcfunction(L, t_gate);
  lua_setfield(L, -3, "_gate");
}
