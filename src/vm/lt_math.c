/* lt_math.c: Lua bindings of the elementwise ops, generated from the op
   lists in mt_ops.h: x:op(), x:op_(), torch.op(), and the arithmetic
   metamethods. */
#include <math.h>
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

/* r = x in dtype, recorded */
static mt_tensor *push_cast(lua_State *L, const mt_tensor *x, int dtype) {
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_to_dtype(r, x, dtype));
  if (x->grad_meta) LT_TRY(L, mt_ag_record_cast(r, x));
  return r;
}

/* x:round({decimals=d}) as PyTorch: round(x * 10^d) / 10^d, or for d < 0
   round(x / 10^-d) * 10^-d, in x's dtype (float16 and bfloat16 compute in
   float32, as PyTorch). Composed of recorded ops, so the gradient is
   round's (zero); in place it follows unary's path below. */
static int round_decimals(lua_State *L, mt_tensor *x, double decimals, int inplace) {
  const char *op = inplace ? "round_" : "round";
  if (decimals != floor(decimals)) luaL_error(L, "%s: decimals must be an integer, got %f", op, decimals);
  if (!mt_dtype_is_float(x->dtype))
    luaL_error(L, "%s: decimals are not supported for %s tensors", op, mt_dtypes[x->dtype].name);
  mt_operand scale = {NULL, pow(10, fabs(decimals)), 0}, in = {x, 0, 0};
  mt_op into = decimals > 0 ? MT_OP_mul : MT_OP_div, back = decimals > 0 ? MT_OP_div : MT_OP_mul;
  int need = 0;
  if (inplace) {
    LT_TRY(L, mt_check_writable("round", x));
    if (x->grad_meta && (need = mt_ag_inplace_needed(op, x, NULL)) < 0) LT_TRY(L, need);
    if (need) {                                   /* x = x:round(...), for autograd */
      mt_tensor *src = lt_push(L);
      LT_TRY(L, mt_ag_inplace_source(src, x));
      in.t = src;
    }
  }
  int half = x->dtype == MT_FLOAT16 || x->dtype == MT_BFLOAT16;
  if (half) in.t = push_cast(L, in.t, MT_FLOAT32);
  mt_tensor *scaled = lt_push(L);
  LT_TRY(L, mt_binary(scaled, &in, &scale, into, 1, 0, lt_default_dtype));
  if (in.t->grad_meta) LT_TRY(L, mt_ag_record_binary(scaled, &in, &scale, into, 1));
  mt_tensor *rounded = lt_push(L);
  LT_TRY(L, mt_unary(rounded, scaled, MT_OP_round, 0, lt_default_dtype));
  if (scaled->grad_meta) LT_TRY(L, mt_ag_record_unary(rounded, scaled, MT_OP_round));
  in.t = rounded;
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_binary(r, &in, &scale, back, 1, 0, lt_default_dtype));
  if (in.t->grad_meta) LT_TRY(L, mt_ag_record_binary(r, &in, &scale, back, 1));
  if (half) r = push_cast(L, r, x->dtype);
  if (!inplace) return 1;
  LT_TRY(L, need ? mt_ag_inplace_commit(x, r) : mt_copy(x, r));
  lua_settop(L, 1);
  return 1;
}

static int unary(lua_State *L, mt_op op, int inplace) {
  mt_tensor *x = lt_check(L, 1, mt_op_names[op]);
  if (op == MT_OP_round && lua_istable(L, 2) && !lt_test(L, 2)) {   /* x:round({decimals=2}) */
    double decimals = lt_opt_number(L, 2, "decimals", 0);
    if (decimals != 0) return round_decimals(L, x, decimals, inplace);
  }
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

/* Records r = a op b. Rounded division has PyTorch's derivative, zero: it
   is recorded as floor (trunc) of the true quotient, whose values r holds. */
static void record_binary(lua_State *L, mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op,
                          double alpha) {
  if (op != MT_OP_div_floor && op != MT_OP_div_trunc) { LT_TRY(L, mt_ag_record_binary(r, a, b, op, alpha)); return; }
  if (!mt_ag_grad_enabled() || !((a->t && mt_ag_requires_grad(a->t)) || (b->t && mt_ag_requires_grad(b->t)))) return;
  mt_tensor *q = lt_push(L);
  LT_TRY(L, mt_binary(q, a, b, MT_OP_div, 1, 0, lt_default_dtype));
  LT_TRY(L, mt_ag_record_binary(q, a, b, MT_OP_div, 1));
  LT_TRY(L, mt_ag_record_unary(r, q, op == MT_OP_div_floor ? MT_OP_floor : MT_OP_trunc));
  lua_pop(L, 1);                                  /* the graph keeps q's history */
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
        record_binary(L, r, &a, &b, op, alpha);
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
  if ((a.t && a.t->grad_meta) || (b.t && b.t->grad_meta)) record_binary(L, r, &a, &b, op, alpha);
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
static int m_floor_divide(lua_State *L) { return binary(L, MT_OP_div_floor, 0); }
static int m_floor_divide_(lua_State *L) { return binary(L, MT_OP_div_floor, 1); }

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
  {"fix", m_trunc}, {"floor_divide", m_floor_divide}, {"floor_divide_", m_floor_divide_},
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
  {"__mod", m_remainder}, {"__idiv", m_floor_divide}, {"__unm", mm_unm}, {"__lt", mm_lt}, {"__le", mm_le},
  {NULL, NULL}};

void lt_open_math(lua_State *L) {
  lt_setfuncs(L, math_methods, math_methods);
  for (const luaL_Reg *m = metamethods; m->name; m++) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, m->func, 1);
    lua_setfield(L, -2, m->name);
  }
}
