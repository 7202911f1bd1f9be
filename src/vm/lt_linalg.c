/* lt_linalg.c: Lua bindings of the matrix products: x:mm(y), torch.matmul(x, y),
   M:addmm(a, b, {beta=, alpha=}), M:addmm_(a, b), ... */
#include "lt.h"
#include "../autograd/ag.h"
#include "../autograd/ag_linalg.h"
#include "../tensor/mt_linalg.h"

typedef int (*product_fn)(mt_tensor *r, const mt_tensor *a, const mt_tensor *b);

static int product(lua_State *L, const char *op, product_fn fn) {
  mt_tensor *a = lt_check(L, 1, op), *b = lt_check(L, 2, op);
  mt_tensor *r = lt_push(L);
  LT_TRY(L, fn(r, a, b));
  if (a->grad_meta || b->grad_meta) {
    if (fn == mt_mm) LT_TRY(L, mt_ag_record_mm(r, a, b));
    else if (fn == mt_outer) LT_TRY(L, mt_ag_record_outer(r, a, b));
    else LT_TRY(L, mt_ag_record_matmul(r, a, b));    /* matmul, mv, dot, bmm */
  }
  return 1;
}

#define LT_PRODUCTS(X) X(mm) X(mv) X(dot) X(bmm) X(matmul) X(outer)
#define LT_PRODUCT(name) static int l_##name(lua_State *L) { return product(L, #name, mt_##name); }
LT_PRODUCTS(LT_PRODUCT)

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

static int add_product(lua_State *L, const char *op, mt_addprod_fn fn, mt_ag_addprod kind, int inplace) {
  mt_tensor *t[3];
  double beta, alpha;
  int input_index = read_add_args(L, op, t, &beta, &alpha);
  if (inplace) {
    LT_TRY(L, fn(t[0], t[0], t[1], t[2], beta, alpha, 1));
    lua_pushvalue(L, input_index);
    return 1;
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, fn(r, t[0], t[1], t[2], beta, alpha, 0));
  if (t[0]->grad_meta || t[1]->grad_meta || t[2]->grad_meta)
    LT_TRY(L, mt_ag_record_addprod(r, kind, t[0], t[1], t[2], beta, alpha));
  return 1;
}

#define LT_ADD_PRODUCTS(X) X(addmm, ADDMM) X(addmv, ADDMV) X(addr, ADDR) X(baddbmm, BADDBMM) X(addbmm, ADDBMM)
#define LT_ADD_PRODUCT(name, KIND)                                                                   \
  static int l_##name(lua_State *L) { return add_product(L, #name, mt_##name, MT_AG_##KIND, 0); }   \
  static int l_##name##_(lua_State *L) { return add_product(L, #name, mt_##name, MT_AG_##KIND, 1); }
LT_ADD_PRODUCTS(LT_ADD_PRODUCT)

#define LT_REG(name) {#name, l_##name},
#define LT_REG2(name, KIND) {#name, l_##name},
#define LT_REG_INPLACE(name, KIND) {#name "_", l_##name##_},
static const luaL_Reg linalg_methods[] = {
  LT_PRODUCTS(LT_REG) LT_ADD_PRODUCTS(LT_REG2) LT_ADD_PRODUCTS(LT_REG_INPLACE)
  {"ger", l_outer},
  {NULL, NULL}};
static const luaL_Reg linalg_functions[] = {
  LT_PRODUCTS(LT_REG) LT_ADD_PRODUCTS(LT_REG2)
  {"ger", l_outer},
  {NULL, NULL}};

void lt_open_linalg(lua_State *L) { lt_setfuncs_guarded(L, linalg_methods, linalg_functions); }
