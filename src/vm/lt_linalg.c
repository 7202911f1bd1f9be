/* lt_linalg.c: Lua bindings of the registry's products (src/ops/registry.h):
   x:mm(y), torch.matmul(x, y), M:addmm(a, b, {beta=, alpha=}), M:addmm_(a, b),
   ...: one binding per kind, driven by the op. */
#include <stdio.h>
#include <string.h>
#include "lt.h"
#include "../ops/dispatch.h"

/* The registry's products: a:mm(b), torch.matmul(a, b), ...; upvalue 1 the
   metatable, upvalue 2 the op. */
static int product_call(lua_State *L) {
  mt_op op = (mt_op)lua_tointeger(L, lua_upvalueindex(2));
  const char *name = mt_op_names[op];
  mt_tensor *a = lt_check(L, 1, name), *b = lt_check(L, 2, name);
  LT_TRY(L, mt_call_product(lt_push(L), a, b, op));
  return 1;
}

/* Arguments of the add* ops: three tensors (input, then the two factors)
   with PyTorch's trailing {beta=, alpha=} or Torch7's numbers -- one before
   input is beta, one between input and the factors alpha, two there beta
   and alpha. Returns the stack index of input. */
static int read_add_args(lua_State *L, const char *op, mt_tensor **t, double *beta, double *alpha) {
  int opts = lt_opts_index(L), last = opts ? opts - 1 : lua_gettop(L);
  int ntensors = 0, input_index = 0, nbefore = 0, nbetween = 0;
  double before = 1, between[2] = {1, 1};
  for (int i = 1; i <= last; i++) {
    mt_tensor *x = lt_test(L, i);
    if (x) {
      if (ntensors == 3) luaL_error(L, "%s: expected 3 tensors (input and two factors), got more", op);
      if (ntensors == 0) input_index = i;
      t[ntensors++] = x;
    } else if (lua_type(L, i) == LUA_TNUMBER && ntensors == 0 && nbefore == 0) {
      before = lua_tonumber(L, i);
      nbefore++;
    } else if (lua_type(L, i) == LUA_TNUMBER && ntensors == 1 && nbetween < 2) {
      between[nbetween++] = lua_tonumber(L, i);
    } else {
      luaL_error(L, "%s: unexpected argument %d (%s); use %s(input, a, b, {beta=, alpha=})", op, i,
                 luaL_typename(L, i), op);
    }
  }
  if (ntensors != 3)
    luaL_error(L, "%s: expected 3 tensors (input and two factors), got %d", op, ntensors);
  if (nbefore && nbetween == 2) luaL_error(L, "%s: too many scalar arguments", op);
  *beta = nbetween == 2 ? between[0] : before;
  *alpha = nbetween == 2 ? between[1] : between[0];
  *beta = lt_opt_number(L, opts, "beta", *beta);
  *alpha = lt_opt_number(L, opts, "alpha", *alpha);
  return input_index;
}

/* The registry's add* products: M:addmm(a, b, {beta=, alpha=}), the Torch7
   forms, and M:addmm_(a, b) in place; upvalue 2 is op * 2 + inplace. */
static int add_product_call(lua_State *L) {
  char name[64];
  int inplace;
  mt_op op = (mt_op)lt_bound_op(L, name, sizeof name, &inplace);
  mt_tensor *t[3];
  double beta, alpha;
  int input_index = read_add_args(L, name, t, &beta, &alpha);
  if (inplace) {
    LT_TRY(L, mt_call_add_product(t[0], t[0], t[1], t[2], op, beta, alpha, 1));
    lua_pushvalue(L, input_index);
    return 1;
  }
  LT_TRY(L, mt_call_add_product(lt_push(L), t[0], t[1], t[2], op, beta, alpha, 0));
  return 1;
}

/* name (and name_ for the add* products, a method only, as PyTorch's) under
   a registry name of a product; stack: methods torch mt */
LT_OUT_BINDING(product_call)
LT_OUT_BINDING(add_product_call)

static void set_product(lua_State *L, const char *name, size_t len, int op) {
  if (!mt_op_is_add_product(op)) {
    lt_bind_op(L, name, len, 0, 0, product_call_out, op);
    return;
  }
  for (int inplace = 0; inplace <= 1; inplace++)
    lt_bind_op(L, name, len, inplace, inplace, add_product_call_out, (lua_Integer)op * 2 + inplace);
}

void lt_open_linalg(lua_State *L) { lt_bind_registry(L, MT_OP_END_SELECT, MT_OP_END_ADD_PRODUCT, set_product); }
