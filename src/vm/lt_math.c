/* lt_math.c: Lua bindings of the elementwise ops, generated from the
   registry (src/ops/registry.h): x:op(), x:op_(), torch.op() under the op's
   name and its aliases, and the arithmetic metamethods. A binding reads its
   arguments and calls the dispatcher (src/ops/dispatch.h), which checks,
   runs the kernel and records the derivative. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lt.h"
#include "../tensor/mt_ops.h"
#include "../ops/dispatch.h"

/* An operand from a Lua value: a tensor, a number or a boolean. */
static void read_operand(lua_State *L, int i, mt_operand *op, const char *name) {
  op->t = lt_test(L, i);
  op->value = 0;
  op->is_int = 0;
  if (op->t) return;
  int type = lua_type(L, i);
  if (type == LUA_TNUMBER) {
    op->is_int = lua_isinteger(L, i);
    op->value = lua_tonumber(L, i);
  } else if (type == LUA_TBOOLEAN) {
    op->is_int = 2;
    op->value = lua_toboolean(L, i);
  } else {
    luaL_error(L, "%s: argument %d must be a tensor or a number, got %s", name, i, luaL_typename(L, i));
  }
}

static int unary(lua_State *L, mt_op op, int inplace) {
  mt_tensor *x = lt_check(L, 1, mt_op_names[op]);
  if (op == MT_OP_round && lua_istable(L, 2) && !lt_test(L, 2)) {   /* x:round({decimals=2}) */
    double decimals = lt_opt_number(L, 2, "decimals", 0);
    if (decimals != 0) {
      mt_tensor *r = inplace ? x : lt_push(L);
      LT_TRY(L, mt_call_round_decimals(r, x, decimals, inplace, lt_default_dtype));
      if (inplace) lua_settop(L, 1);
      return 1;
    }
  }
  if (op == MT_OP_gelu && lua_istable(L, 2)) {        /* x:gelu({approximate='tanh'|'none'}) */
    lua_getfield(L, 2, "approximate");
    const char *a = lua_isnil(L, -1) ? "none" : luaL_checkstring(L, -1);
    lua_pop(L, 1);                               /* the string stays in the options table */
    if (!strcmp(a, "tanh")) op = MT_OP_gelu_tanh;
    else if (strcmp(a, "none")) luaL_error(L, "gelu: approximate must be 'none' or 'tanh', got '%s'", a);
  }
  if (inplace) {
    LT_TRY(L, mt_call_unary(x, x, op, 1, lt_default_dtype));
    lua_settop(L, 1);
    return 1;
  }
  LT_TRY(L, mt_call_unary(lt_push(L), x, op, 0, lt_default_dtype));
  return 1;
}

/* div's rounding_mode at i, from x:div(y, 'floor') or x:div(y,
   {rounding_mode='trunc'}): the op that divides that way. */
static mt_op rounding_op(lua_State *L, int i) {
  if (lua_istable(L, i) && !lt_test(L, i)) {
    lua_getfield(L, i, "rounding_mode");
    lua_replace(L, i);                            /* the options table is read */
  }
  if (lua_isnoneornil(L, i)) return MT_OP_div;
  const char *mode = lua_type(L, i) == LUA_TSTRING ? lua_tostring(L, i) : luaL_typename(L, i);
  if (!strcmp(mode, "floor")) return MT_OP_div_floor;
  if (!strcmp(mode, "trunc")) return MT_OP_div_trunc;
  return luaL_error(L, "div: rounding_mode must be 'trunc', 'floor' or nil, got '%s'", mode);
}

/* x:add(y), x:add(y, {alpha=a}), Torch7's x:add(a, y); x:div(y, mode) */
static int binary(lua_State *L, mt_op op, int inplace) {
  if (op == MT_OP_div) op = rounding_op(L, 3);
  const char *name = mt_op_names[op];
  mt_operand a, b;
  double alpha = 1;
  int top = lua_gettop(L);
  if (top >= 3 && lua_type(L, 2) == LUA_TNUMBER && lt_test(L, 3) &&
      (op == MT_OP_add || op == MT_OP_sub)) {
    alpha = lua_tonumber(L, 2);
    lua_remove(L, 2);
  } else if (top >= 3 && lua_istable(L, top) && !lt_test(L, top)) {
    alpha = lt_opt_number(L, top, "alpha", 1);
  } else if (top >= 3 && lua_type(L, 3) == LUA_TNUMBER && (op == MT_OP_add || op == MT_OP_sub)) {
    alpha = lua_tonumber(L, 3);
  }
  read_operand(L, 1, &a, name);
  read_operand(L, 2, &b, name);
  if (inplace) {                                  /* the dispatcher refuses a number as self */
    LT_TRY(L, mt_call_binary((mt_tensor *)a.t, &a, &b, op, alpha, 1, lt_default_dtype));
    lua_settop(L, 1);
    return 1;
  }
  LT_TRY(L, mt_call_binary(lt_push(L), &a, &b, op, alpha, 0, lt_default_dtype));
  return 1;
}

/* Every registry op's binding: upvalue 1 is the tensor metatable (lt_check),
   upvalue 2 the op, whether it is binary and whether it runs in place
   (op * 4 + binary * 2 + inplace). */
static int op_call(lua_State *L) {
  lua_Integer code = lua_tointeger(L, lua_upvalueindex(2));
  mt_op op = (mt_op)(code >> 2);
  return code & 2 ? binary(L, op, (int)(code & 1)) : unary(L, op, (int)(code & 1));
}

static int m_add(lua_State *L) { return binary(L, MT_OP_add, 0); }
static int m_sub(lua_State *L) { return binary(L, MT_OP_sub, 0); }
static int m_mul(lua_State *L) { return binary(L, MT_OP_mul, 0); }
static int m_div(lua_State *L) { return binary(L, MT_OP_div, 0); }
static int m_pow(lua_State *L) { return binary(L, MT_OP_pow, 0); }
static int m_remainder(lua_State *L) { return binary(L, MT_OP_remainder, 0); }
static int m_floor_divide(lua_State *L) { return binary(L, MT_OP_div_floor, 0); }

LT_OUT_BINDING(op_call)

/* name (and name_ when in place) for op, as a method and as torch.name;
   stack: methods torch mt */
static void set_op(lua_State *L, const char *name, size_t len, int op) {
  for (int inplace = 0; inplace <= mt_op_infos[op].inplace; inplace++)
    lt_bind_op(L, name, len, inplace, 0, op_call_out, (lua_Integer)op * 4 + (mt_op_infos[op].arity == 2) * 2 + inplace);
}

/* 0-dim (one-element) tensors compare with numbers as numbers */
static double as_number(lua_State *L, int i, const char *op) {
  mt_tensor *t = lt_test(L, i);
  if (!t) return luaL_checknumber(L, i);
  if (mt_numel(t) != 1) {
    char b[128];
    luaL_error(L, "%s: comparison operators need one-element tensors (got %s); use x:lt(y), x:le(y), ...",
               op, mt_shape_str(t, b, sizeof b));
  }
  return mt_get_f64(t->dtype, mt_data(t));
}
static int mm_lt(lua_State *L) { lua_pushboolean(L, as_number(L, 1, "<") < as_number(L, 2, "<")); return 1; }
static int mm_le(lua_State *L) { lua_pushboolean(L, as_number(L, 1, "<=") <= as_number(L, 2, "<=")); return 1; }
static int mm_unm(lua_State *L) { lua_settop(L, 1); return unary(L, MT_OP_neg, 0); }

static const luaL_Reg metamethods[] = {
  {"__add", m_add}, {"__sub", m_sub}, {"__mul", m_mul}, {"__div", m_div}, {"__pow", m_pow},
  {"__mod", m_remainder}, {"__idiv", m_floor_divide}, {"__unm", mm_unm}, {"__lt", mm_lt}, {"__le", mm_le},
  {NULL, NULL}};

/* torch._ops(): the registry, one table per op: {name=, aliases={...},
   family=, domain={...} (one word per input), arity=, autocast=,
   differentiable=, inplace=, inplace_only= (fill, zero, copy), lua_name=, and signature= for every op but the
   elementwise ones: how Lua calls it (src/ops/registry.h)} */
static int m_ops(lua_State *L) {
  static const char *const autocast[] = {"none", "lower", "fp32", "promote"};
  lua_createtable(L, MT_NUM_OPS, 0);
  for (int op = 0; op < MT_NUM_OPS; op++) {
    const mt_op_info *info = &mt_op_infos[op];
    lua_createtable(L, 0, 10);
    lua_pushstring(L, info->name); lua_setfield(L, -2, "name");
    lua_pushstring(L, info->family); lua_setfield(L, -2, "family");
    lua_pushinteger(L, info->arity); lua_setfield(L, -2, "arity");
    lua_pushstring(L, autocast[info->autocast]); lua_setfield(L, -2, "autocast");
    lua_pushboolean(L, info->differentiable); lua_setfield(L, -2, "differentiable");
    lua_pushboolean(L, info->inplace != 0); lua_setfield(L, -2, "inplace");
    lua_pushboolean(L, info->inplace == 2); lua_setfield(L, -2, "inplace_only");
    lua_pushboolean(L, info->lua_name); lua_setfield(L, -2, "lua_name");
    if (info->signature[0] || !mt_op_is_pointwise(op)) {
      lua_pushstring(L, info->signature);
      lua_setfield(L, -2, "signature");
    }
    for (int list = 0; list < 2; list++) {
      const char *p = list ? info->domain : info->aliases, *w;
      size_t n;
      lua_newtable(L);
      for (int k = 1; (w = lt_next_word(&p, &n)); k++) { lua_pushlstring(L, w, n); lua_rawseti(L, -2, k); }
      lua_setfield(L, -2, list ? "domain" : "aliases");
    }
    lua_rawseti(L, -2, op + 1);
  }
  return 1;
}

/* torch._op_counter(on): counting op calls (through the dispatcher's op
   hook) from now, or no more; torch._op_counts(): {name = calls} of the ops
   called at least once since it was turned on */
static int m_op_counter(lua_State *L) {
  mt_op_counter_enable(lua_toboolean(L, 1));
  return 0;
}
static int m_op_counts(lua_State *L) {
  lua_newtable(L);
  for (int op = 0; op < MT_NUM_OPS; op++) {
    int64_t n = mt_op_count(op);
    if (n) { lua_pushinteger(L, n); lua_setfield(L, -2, mt_op_names[op]); }
  }
  return 1;
}

static const luaL_Reg registry_functions[] = {
  {"_ops", m_ops}, {"_op_counter", m_op_counter}, {"_op_counts", m_op_counts}, {NULL, NULL}};

void lt_open_math(lua_State *L) {
  lt_bind_registry(L, 0, MT_NUM_POINTWISE_OPS, set_op);
  lt_setfuncs(L, NULL, registry_functions);
  for (const luaL_Reg *m = metamethods; m->name; m++) {   /* through the dispatcher: every device */
    lua_pushvalue(L, -1);
    lua_pushnil(L);
    lt_push_any_device_key(L);
    lua_pushcclosure(L, m->func, LT_ANY_DEVICE_UPVALUE);
    lua_setfield(L, -2, m->name);
  }
}
