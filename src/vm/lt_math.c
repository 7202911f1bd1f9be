/* lt_math.c: Lua bindings of the elementwise ops, generated from the op
   lists in mt_ops.h: x:op(), x:op_(), torch.op(), and the arithmetic
   metamethods. */
#include <stdio.h>
#include <string.h>
#include "lt.h"
#include "../tensor/mt_ops.h"
#include "../autograd/ag.h"

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
  if (op == MT_OP_gelu && lua_istable(L, 2)) {        /* x:gelu({approximate='tanh'|'none'}) */
    lua_getfield(L, 2, "approximate");
    const char *a = lua_isnil(L, -1) ? "none" : luaL_checkstring(L, -1);
    lua_pop(L, 1);                               /* the string stays in the options table */
    if (!strcmp(a, "tanh")) op = MT_OP_gelu_tanh;
    else if (strcmp(a, "none")) luaL_error(L, "gelu: approximate must be 'none' or 'tanh', got '%s'", a);
  }
  if (inplace) {
    if (x->grad_meta) {
      char opname[64];
      snprintf(opname, sizeof opname, "%s_", mt_op_names[op]);
      int need = mt_ag_inplace_needed(opname, x, NULL);
      if (need < 0) LT_TRY(L, need);
      if (need) {                                 /* x = x:op(), for autograd */
        mt_tensor *src = lt_push(L), *r = lt_push(L);
        LT_TRY(L, mt_ag_inplace_source(src, x));
        LT_TRY(L, mt_unary(r, src, op, 0, lt_default_dtype));
        LT_TRY(L, mt_ag_record_unary(r, src, op));
        LT_TRY(L, mt_ag_inplace_commit(x, r));
        lua_settop(L, 1);
        return 1;
      }
    }
    LT_TRY(L, mt_unary(x, x, op, 1, lt_default_dtype));
    lua_settop(L, 1);
    return 1;
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_unary(r, x, op, 0, lt_default_dtype));
  if (x->grad_meta) LT_TRY(L, mt_ag_record_unary(r, x, op));
  return 1;
}

/* x:add(y), x:add(y, {alpha=a}), Torch7's x:add(a, y) */
static int binary(lua_State *L, mt_op op, int inplace) {
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
  if (inplace) {
    if (!a.t) luaL_error(L, "%s_: self must be a tensor", name);
    if (a.t->grad_meta || (b.t && b.t->grad_meta)) {
      char opname[64];
      snprintf(opname, sizeof opname, "%s_", name);
      int need = mt_ag_inplace_needed(opname, a.t, b.t);
      if (need < 0) LT_TRY(L, need);
      if (need) {                                 /* a = a:op(b), for autograd */
        mt_tensor *self = lt_test(L, 1), *src = lt_push(L), *r = lt_push(L);
        LT_TRY(L, mt_ag_inplace_source(src, self));
        if (b.t == self) b.t = src;               /* x:mul_(x) */
        a.t = src;
        LT_TRY(L, mt_binary(r, &a, &b, op, alpha, 0, lt_default_dtype));
        LT_TRY(L, mt_ag_record_binary(r, &a, &b, op, alpha));
        if (r->dtype != self->dtype) {           /* computed in the promoted type, stored in self's */
          mt_tensor *c = lt_push(L);
          LT_TRY(L, mt_to_dtype(c, r, self->dtype));
          LT_TRY(L, mt_ag_record_cast(c, r));
          r = c;
        }
        LT_TRY(L, mt_ag_inplace_commit(self, r));
        lua_settop(L, 1);
        return 1;
      }
    }
    LT_TRY(L, mt_binary(lt_test(L, 1), &a, &b, op, alpha, 1, lt_default_dtype));
    lua_settop(L, 1);
    return 1;
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_binary(r, &a, &b, op, alpha, 0, lt_default_dtype));
  if ((a.t && a.t->grad_meta) || (b.t && b.t->grad_meta)) LT_TRY(L, mt_ag_record_binary(r, &a, &b, op, alpha));
  return 1;
}

#define LT_UNARY(name, expr, E)                                                    \
  static int m_##name(lua_State *L) { return unary(L, MT_OP_##name, 0); }          \
  static int m_##name##_(lua_State *L) { return unary(L, MT_OP_##name, 1); }
#define LT_UNARY_OUT(name, expr, E)                                                \
  static int m_##name(lua_State *L) { return unary(L, MT_OP_##name, 0); }
#define LT_BINARY(name, expr, E)                                                   \
  static int m_##name(lua_State *L) { return binary(L, MT_OP_##name, 0); }         \
  static int m_##name##_(lua_State *L) { return binary(L, MT_OP_##name, 1); }
MT_UNARY_FLOAT_OPS(LT_UNARY, _)
MT_UNARY_FLOAT_ONLY_OPS(LT_UNARY, _)
MT_UNARY_ROUND_OPS(LT_UNARY, _)
MT_UNARY_SAME_OPS(LT_UNARY, _)
MT_UNARY_BOOL_OPS(LT_UNARY_OUT, _)
static int m_logical_not_(lua_State *L) { return unary(L, MT_OP_logical_not, 1); }
MT_BINARY_OPS(LT_BINARY, _)
MT_BINARY_FLOAT_OPS(LT_BINARY, _)
MT_COMPARE_OPS(LT_BINARY, _)

#define LT_REG(name, expr, E) {#name, m_##name}, {#name "_", m_##name##_},
#define LT_REG_OUT(name, expr, E) {#name, m_##name},
static const luaL_Reg math_methods[] = {
  MT_UNARY_FLOAT_OPS(LT_REG, _) MT_UNARY_FLOAT_ONLY_OPS(LT_REG, _) MT_UNARY_ROUND_OPS(LT_REG, _)
  MT_UNARY_SAME_OPS(LT_REG, _) MT_UNARY_BOOL_OPS(LT_REG_OUT, _) {"logical_not_", m_logical_not_},
  MT_BINARY_OPS(LT_REG, _) MT_BINARY_FLOAT_OPS(LT_REG, _) MT_COMPARE_OPS(LT_REG, _)
  /* Torch7 and PyTorch aliases */
  {"cmul", m_mul}, {"cmul_", m_mul_}, {"cdiv", m_div}, {"cdiv_", m_div_},
  {"cmax", m_maximum}, {"cmin", m_minimum}, {"negative", m_neg}, {"true_divide", m_div},
  {"multiply", m_mul}, {"subtract", m_sub}, {"divide", m_div}, {"absolute", m_abs},
  {"fix", m_trunc},
  {NULL, NULL}};

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
  {"__mod", m_remainder}, {"__unm", mm_unm}, {"__lt", mm_lt}, {"__le", mm_le},
  {NULL, NULL}};

void lt_open_math(lua_State *L) {
  lt_setfuncs(L, math_methods, math_methods);
  for (const luaL_Reg *m = metamethods; m->name; m++) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, m->func, 1);
    lua_setfield(L, -2, m->name);
  }
}
