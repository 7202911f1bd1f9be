/* lt_reduce.c: Lua bindings of the reductions, the ops along a dim and the
   selections (the registry's, through one generic binding per family),
   argmax, argmin and argsort, the in-place scans, and tensor comparisons.
   Dims and returned indices are 1-based; every op takes PyTorch's
   positional arguments or an options table ({dim=, keepdim=, ...}) as its
   last argument. */
#include <math.h>
#include <string.h>
#include "lt.h"
#include "../ops/dispatch.h"
#include "../autograd/ag.h"
#include "../autograd/ag_reduce.h"
#include "../tensor/mt_reduce.h"
#include "../tensor/mt_ops.h"

/* The last argument index before the options table (or the top). */
static int last_positional(lua_State *L, int opts) { return opts ? opts - 1 : lua_gettop(L); }

/* A dim (number) or a list of dims ({1, 2}) at i as a mask; {} is every dim,
   as in PyTorch. */
static uint32_t dim_mask(lua_State *L, int i, const mt_tensor *x, const char *op) {
  i = lua_absindex(L, i);
  if (lua_type(L, i) != LUA_TTABLE) return 1u << lt_check_dim(L, i, x->ndim, op);
  int n = (int)lt_len(L, i, MT_MAX_DIMS, "dims", op);
  if (n == 0) return MT_ALL_DIMS;
  uint32_t mask = 0;
  for (int k = 1; k <= n; k++) {
    lua_geti(L, i, k);
    int d = lt_check_dim(L, lua_gettop(L), x->ndim, op);
    lua_pop(L, 1);
    if (mask & (1u << d)) luaL_error(L, "%s: dim %d appears more than once in the list of dims", op, d + 1);
    mask |= 1u << d;
  }
  return mask;
}

typedef struct {
  uint32_t mask;     /* MT_ALL_DIMS when no dim was given */
  int has_dim;
  int keepdim;
  int opts;          /* index of the options table, or 0 */
} dim_args;

/* Reads dim(s) at i and a keepdim boolean at i + 1, then opts.dim and
   opts.keepdim: x:sum(), x:sum(2), x:sum(2, true), x:sum({1, 2}),
   x:sum(2, {keepdim=true}), x:sum({dim=2, keepdim=true}). */
static void read_dims(lua_State *L, int i, const mt_tensor *x, const char *op, dim_args *a) {
  a->opts = lt_opts_index(L);
  a->mask = MT_ALL_DIMS;
  a->has_dim = 0;
  a->keepdim = 0;
  int top = last_positional(L, a->opts);
  if (i <= top && !lua_isnil(L, i)) { a->mask = dim_mask(L, i, x, op); a->has_dim = 1; }
  if (i + 1 <= top && !lua_isnil(L, i + 1)) {
    if (!lua_isboolean(L, i + 1))
      luaL_error(L, "%s: argument %d (keepdim) must be a boolean, got %s", op, i + 1, luaL_typename(L, i + 1));
    a->keepdim = lua_toboolean(L, i + 1);
  }
  if (a->opts) {
    if (lua_getfield(L, a->opts, "dim") != LUA_TNIL) { a->mask = dim_mask(L, -1, x, op); a->has_dim = 1; }
    lua_pop(L, 1);
    a->keepdim = lt_opt_bool(L, a->opts, "keepdim", a->keepdim);
  }
}

/* The single dim of a dim_args (ops that reduce one dim only). */
static int single_dim(lua_State *L, const dim_args *a, const char *op) {
  uint32_t m = a->mask;
  if (!a->has_dim) return -1;
  if (m == MT_ALL_DIMS || (m & (m - 1)))
    luaL_error(L, "%s: expects a single dim, not a list", op);
  return __builtin_ctz(m);
}

/* A selection through the dispatcher: pushes values and 1-based indices. */
static int select_run(lua_State *L, mt_op op, mt_tensor *x, int64_t k, int dim, int keepdim, int flag) {
  mt_tensor *values = lt_push(L), *indices = lt_push(L);
  LT_TRY(L, mt_call_select(values, indices, x, op, k, dim, keepdim, flag, 1));
  return 2;
}

/* ---- max, min: x:max() -> 0-dim; x:max(dim) -> values, indices; x:max(y) elementwise ---- */
static int minmax(lua_State *L, int is_min) {
  const char *name = is_min ? "min" : "max";
  mt_tensor *x = lt_check(L, 1, name);
  mt_tensor *y = lt_test(L, 2);
  if (y) {
    mt_operand a = {x, 0, 0}, b = {y, 0, 0};
    LT_TRY(L, mt_call_binary(lt_push(L), &a, &b, is_min ? MT_OP_minimum : MT_OP_maximum, 1, 0, lt_default_dtype));
    return 1;
  }
  dim_args a;
  read_dims(L, 2, x, name, &a);
  int dim = single_dim(L, &a, name);
  if (dim < 0) {
    if (mt_numel(x) == 0)
      luaL_error(L, "%s: cannot take the %s of an empty tensor; specify a non-empty dim", name, name);
    LT_TRY(L, mt_call_reduce(lt_push(L), x, is_min ? MT_OP_min : MT_OP_max, MT_ALL_DIMS, 0, -1, 0, lt_default_dtype));
    return 1;
  }
  return select_run(L, is_min ? MT_OP_min_dim : MT_OP_max_dim, x, 0, dim, a.keepdim, 0);
}
static int r_max(lua_State *L) { return minmax(L, 0); }
static int r_min(lua_State *L) { return minmax(L, 1); }


/* var, std: x:var(), x:var(dim), x:var(dim, unbiased, keepdim),
   x:var(dim, {unbiased=false, correction=n, keepdim=true}); the parameter
   is the correction */
static void var_args(lua_State *L, mt_tensor *x, const char *name, dim_args *a, double *param) {
  int opts = lt_opts_index(L), top = last_positional(L, opts), i = 2, unbiased = 1;
  a->opts = opts;
  a->mask = MT_ALL_DIMS;
  a->keepdim = 0;
  if (i <= top && !lua_isboolean(L, i)) { if (!lua_isnil(L, i)) a->mask = dim_mask(L, i, x, name); i++; }
  if (i <= top && lua_isboolean(L, i)) unbiased = lua_toboolean(L, i++);
  if (i <= top && lua_isboolean(L, i)) a->keepdim = lua_toboolean(L, i++);
  if (i <= top && !lua_isnil(L, i)) luaL_error(L, "%s: unexpected argument %d (%s)", name, i, luaL_typename(L, i));
  if (opts) {
    if (lua_getfield(L, opts, "dim") != LUA_TNIL) a->mask = dim_mask(L, -1, x, name);
    lua_pop(L, 1);
    a->keepdim = lt_opt_bool(L, opts, "keepdim", a->keepdim);
    unbiased = lt_opt_bool(L, opts, "unbiased", unbiased);
  }
  *param = lt_opt_number(L, opts, "correction", unbiased ? 1 : 0);
}

/* norm: x:norm(), x:norm(p), x:norm(p, dim, keepdim), x:norm({p=, dim=});
   the parameter is the order p */
static double read_order(lua_State *L, int i) {
  if (lua_type(L, i) == LUA_TSTRING) {
    const char *s = lua_tostring(L, i);
    if (!strcmp(s, "fro")) return 2;
    if (!strcmp(s, "inf")) return INFINITY;
    if (!strcmp(s, "-inf")) return -INFINITY;
    luaL_error(L, "norm: unknown order '%s' (use a number, 'fro', 'inf' or '-inf')", s);
  }
  if (!lua_isnumber(L, i)) luaL_error(L, "norm: the order p must be a number, got %s", luaL_typename(L, i));
  return lua_tonumber(L, i);
}

static void norm_args(lua_State *L, mt_tensor *x, const char *name, dim_args *a, double *param) {
  read_dims(L, 3, x, name, a);
  *param = 2;
  if (2 <= last_positional(L, a->opts) && !lua_isnil(L, 2)) *param = read_order(L, 2);
  if (a->opts) {
    if (lua_getfield(L, a->opts, "p") != LUA_TNIL) *param = read_order(L, -1);
    lua_pop(L, 1);
  }
}

/* ---- the registry's reductions (src/ops/registry.h): one binding for all,
   reading the arguments its signature names; the dispatcher checks, runs
   the kernel and records the derivative. Upvalue 1 is the tensor
   metatable, upvalue 2 the op and its signature (op * 8 + SIG_*). ---- */
enum { SIG_DIMS, SIG_VAR, SIG_NORM };
static int reduce_call(lua_State *L) {
  lua_Integer code = lua_tointeger(L, lua_upvalueindex(2));
  mt_op op = (mt_op)(code >> 3);
  const mt_op_info *info = &mt_op_infos[op];
  mt_tensor *x = lt_check(L, 1, info->name);
  dim_args a;
  double param = 0;
  int dtype = -1;
  if ((code & 7) == SIG_VAR) {
    var_args(L, x, info->name, &a, &param);
  } else if ((code & 7) == SIG_NORM) {
    norm_args(L, x, info->name, &a, &param);
  } else {
    read_dims(L, 2, x, info->name, &a);
    dtype = lt_opt_dtype(L, a.opts, -1, info->name);
  }
  LT_TRY(L, mt_call_reduce(lt_push(L), x, op, a.mask, a.keepdim, dtype, param, lt_default_dtype));
  return 1;
}

/* ---- ops along one required dim ---- */

/* The dim at i, or opts.dim, or def (-1: required). */
static int read_one_dim(lua_State *L, int i, int opts, const mt_tensor *x, const char *op, int def) {
  if (i <= last_positional(L, opts) && !lua_isnil(L, i)) return lt_check_dim(L, i, x->ndim, op);
  if (opts) {
    int d = def;
    if (lua_getfield(L, opts, "dim") != LUA_TNIL) d = lt_check_dim(L, lua_gettop(L), x->ndim, op);
    lua_pop(L, 1);
    if (d != -1 || def != -1) return d;
  }
  if (def == -1) luaL_error(L, "%s: expects a dim", op);
  return def;
}

/* last dim, 0-based (0 for a 0-dim tensor) */
static int last_dim(const mt_tensor *x) { return x->ndim ? x->ndim - 1 : 0; }

/* x:cumsum_(dim): the scan in x's own dtype (uint8 wraps, as in PyTorch),
   written back into x, through the dispatcher's in-place protocol */
static int cumulative_(lua_State *L, int is_prod) {
  const char *name = is_prod ? "cumprod_" : "cumsum_";
  mt_tensor *x = lt_check(L, 1, name);
  int opts = lt_opts_index(L);
  int dim = read_one_dim(L, 2, opts, x, name, -1);
  int dtype = lt_opt_dtype(L, opts, x->dtype, name);
  if (dtype != x->dtype)
    luaL_error(L, "%s: dtype %s differs from the tensor's %s", name, mt_dtypes[dtype].name, mt_dtypes[x->dtype].name);
  if (x->dtype == MT_BOOL) luaL_error(L, "%s: not supported for bool tensors", name);
  LT_TRY(L, mt_call_along(x, x, is_prod ? MT_OP_cumprod : MT_OP_cumsum, dim, x->dtype, 1));
  lua_settop(L, 1);
  return 1;
}
static int r_cumsum_(lua_State *L) { return cumulative_(L, 0); }
static int r_cumprod_(lua_State *L) { return cumulative_(L, 1); }

/* x:sort(), x:sort(dim), x:sort(dim, descending), x:sort(true),
   x:sort({dim=, descending=, stable=}) -> values, indices */
static int sort_args(lua_State *L, mt_tensor *x, const char *name, int *descending) {
  int opts = lt_opts_index(L), top = last_positional(L, opts), i = 2, dim = last_dim(x);
  *descending = 0;
  if (i <= top && !lua_isboolean(L, i)) { if (!lua_isnil(L, i)) dim = lt_check_dim(L, i, x->ndim, name); i++; }
  if (i <= top && lua_isboolean(L, i)) *descending = lua_toboolean(L, i);
  if (opts) {
    dim = read_one_dim(L, top + 1, opts, x, name, dim);
    *descending = lt_opt_bool(L, opts, "descending", *descending);
  }
  return dim;
}

static int r_argsort(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "argsort");
  int descending, dim = sort_args(L, x, "argsort", &descending);
  mt_tensor values = {0};                        /* sort's indices, through the dispatcher */
  mt_tensor *indices = lt_push(L);
  int rc = mt_call_select(&values, indices, x, MT_OP_sort, 0, dim, 0, descending, 1);
  mt_tensor_release(&values);
  LT_TRY(L, rc);
  return 1;
}

/* Reads dim (default last) at i and keepdim at i + 1 or in opts. */
static int dim_keepdim(lua_State *L, int i, const mt_tensor *x, const char *op, int *keepdim) {
  int opts = lt_opts_index(L), top = last_positional(L, opts);
  int dim = read_one_dim(L, i, opts, x, op, last_dim(x));
  *keepdim = i + 1 <= top ? lua_toboolean(L, i + 1) : 0;
  *keepdim = lt_opt_bool(L, opts, "keepdim", *keepdim);
  return dim;
}

/* x:median() -> 0-dim; x:median(dim, keepdim) -> values, indices */
static int r_median(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "median");
  int opts = lt_opts_index(L);
  int has_dim = (2 <= last_positional(L, opts) && !lua_isnil(L, 2));
  if (opts && !has_dim) { has_dim = lua_getfield(L, opts, "dim") != LUA_TNIL; lua_pop(L, 1); }
  if (!has_dim) {
    LT_TRY(L, mt_call_reduce(lt_push(L), x, MT_OP_median, MT_ALL_DIMS, 0, -1, 0, lt_default_dtype));
    return 1;
  }
  int keepdim, dim = dim_keepdim(L, 2, x, "median", &keepdim);
  return select_run(L, MT_OP_median_dim, x, 0, dim, keepdim, 0);
}

/* The registry's selections under their own names: x:sort(dim, descending),
   x:topk(k, dim, largest, sorted), x:kthvalue(k, dim, keepdim),
   x:mode(dim, keepdim), each with an options table last; upvalue 2 is
   op * 8 + the signature's kind. */
enum { SEL_DIM, SEL_KTH, SEL_SORT, SEL_TOPK, SEL_ARG };
static int select_call(lua_State *L) {
  lua_Integer code = lua_tointeger(L, lua_upvalueindex(2));
  mt_op op = (mt_op)(code >> 3);
  const char *name = mt_op_names[op];
  mt_tensor *x = lt_check(L, 1, name);
  int keepdim = 0, dim, flag = 0;
  lua_Integer k = 0;
  switch ((int)(code & 7)) {
  case SEL_ARG: {                                 /* the indices alone; every element without a dim */
    dim_args a;
    read_dims(L, 2, x, name, &a);
    dim = single_dim(L, &a, name);
    mt_tensor values = {0}, *indices = lt_push(L);
    int rc = mt_call_select(&values, indices, x, op, dim < 0, dim < 0 ? 0 : dim, a.keepdim, 0, 1);
    mt_tensor_release(&values);
    LT_TRY(L, rc);
    return 1;
  }
  case SEL_DIM:
    dim = dim_keepdim(L, 2, x, name, &keepdim);
    break;
  case SEL_KTH:
    k = luaL_checkinteger(L, 2);
    dim = dim_keepdim(L, 3, x, name, &keepdim);
    break;
  case SEL_SORT:
    dim = sort_args(L, x, name, &flag);
    break;
  default: {                                      /* topk: largest by default */
    k = luaL_checkinteger(L, 2);
    int opts = lt_opts_index(L), top = last_positional(L, opts);
    dim = read_one_dim(L, 3, opts, x, name, last_dim(x));
    flag = 1;
    if (4 <= top && !lua_isnil(L, 4)) flag = lua_toboolean(L, 4);
    flag = lt_opt_bool(L, opts, "largest", flag);
    break;
  }
  }
  return select_run(L, op, x, k, dim, keepdim, flag);
}

/* ---- comparisons ---- */
static int r_equal(lua_State *L) {
  mt_tensor *a = lt_check(L, 1, "equal"), *b = lt_check(L, 2, "equal");
  int eq;
  LT_TRY(L, mt_call_equal(&eq, a, b));
  lua_pushboolean(L, eq);
  return 1;
}

/* (a, b, rtol, atol, equal_nan) or (a, b, {rtol=, atol=, equal_nan=}) */
static void close_args(lua_State *L, double *rtol, double *atol, int *equal_nan) {
  int opts = lt_opts_index(L);
  *rtol = opts || lua_isnoneornil(L, 3) ? 1e-5 : luaL_checknumber(L, 3);
  *atol = opts || lua_isnoneornil(L, 4) ? 1e-8 : luaL_checknumber(L, 4);
  *equal_nan = opts ? 0 : lua_toboolean(L, 5);
  *rtol = lt_opt_number(L, opts, "rtol", *rtol);
  *atol = lt_opt_number(L, opts, "atol", *atol);
  *equal_nan = lt_opt_bool(L, opts, "equal_nan", *equal_nan);
}

static int r_allclose(lua_State *L) {
  mt_tensor *a = lt_check(L, 1, "allclose"), *b = lt_check(L, 2, "allclose");
  double rtol, atol;
  int equal_nan, close;
  close_args(L, &rtol, &atol, &equal_nan);
  LT_TRY(L, mt_call_allclose(&close, a, b, rtol, atol, equal_nan, lt_default_dtype));
  lua_pushboolean(L, close);
  return 1;
}

static int r_isclose(lua_State *L) {
  mt_tensor *a = lt_check(L, 1, "isclose"), *b = lt_check(L, 2, "isclose");
  double rtol, atol;
  int equal_nan;
  close_args(L, &rtol, &atol, &equal_nan);
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_call_isclose(r, a, b, rtol, atol, equal_nan, lt_default_dtype));
  return 1;
}

/* Methods and torch functions alike: torch.sum(x, 2) is x:sum(2). */
static const luaL_Reg reduce_funcs[] = {
  {"max", r_max}, {"min", r_min}, {"argsort", r_argsort},
  {"median", r_median},
  {NULL, NULL}};

/* Compositions of the registry's ops through the dispatcher: nothing to
   guard (their results are booleans), every device. */
static const luaL_Reg compare_funcs[] = {
  {"equal", r_equal}, {"allclose", r_allclose}, {"isclose", r_isclose}, {NULL, NULL}};

/* In-place scans: methods only, as in PyTorch. */
static const luaL_Reg reduce_methods[] = {{"cumsum_", r_cumsum_}, {"cumprod_", r_cumprod_}, {NULL, NULL}};


/* The registry's ops along a dim: x:cumsum(dim), torch.softmax(x, dim,
   {dtype=}); the dim is required. Upvalues as reduce_call's. */
static int along_call(lua_State *L) {
  mt_op op = (mt_op)(lua_tointeger(L, lua_upvalueindex(2)) >> 3);
  const char *name = mt_op_infos[op].name;
  mt_tensor *x = lt_check(L, 1, name);
  int opts = lt_opts_index(L);
  int dim = read_one_dim(L, 2, opts, x, name, -1);
  int dtype = lt_opt_dtype(L, opts, -1, name);
  LT_TRY(L, mt_call_along(lt_push(L), x, op, dim, dtype, 0));
  return 1;
}

/* x:op() and torch.op(x) under a registry name of a reduction, an op along
   a dim or a selection; stack: methods torch mt */
LT_OUT_BINDING(select_call)
LT_OUT_BINDING(along_call)
LT_OUT_BINDING(reduce_call)

static void set_reduction(lua_State *L, const char *name, size_t len, int op) {
  const char *sig = mt_op_infos[op].signature;
  int kind = !strcmp(sig, "var") ? SIG_VAR : !strcmp(sig, "norm") ? SIG_NORM : SIG_DIMS;
  if (mt_op_is_select(op))
    kind = !strcmp(sig, "kth") ? SEL_KTH : !strcmp(sig, "sort") ? SEL_SORT : !strcmp(sig, "topk") ? SEL_TOPK
         : !strcmp(sig, "arg") ? SEL_ARG : SEL_DIM;
  lua_CFunction fn = mt_op_is_select(op) ? select_call_out : mt_op_is_along(op) ? along_call_out : reduce_call_out;
  lt_bind_op(L, name, len, 0, 0, fn, (lua_Integer)op * 8 + kind);
}

void lt_open_reduce(lua_State *L) {
  lt_bind_registry(L, MT_NUM_POINTWISE_OPS, MT_OP_END_SELECT, set_reduction);
  lt_setfuncs_guarded(L, reduce_funcs, reduce_funcs);
  lt_setfuncs(L, reduce_methods, NULL);
  lt_setfuncs(L, compare_funcs, compare_funcs);
  static const char *const any_device[] = {"max", "min", "median", "argsort", "equal", "allclose", "isclose",
                                           NULL};   /* device kernels */
  lt_mark_any_device(L, -3, any_device);
  lt_mark_any_device(L, -2, any_device);
}
