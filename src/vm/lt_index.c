/* lt_index.c: indexing with tensors -- x[mask], x[idx] and their
   assignments -- and the index_* / gather / scatter / masked_* / where /
   nonzero bindings. Indices to and from Lua are 1-based. */
#include <stdio.h>
#include <string.h>
#include "lt.h"
#include "../ops/dispatch.h"
#include "../tensor/mt_index.h"
#include "../tensor/mt_loss.h"
#include "../tensor/mt_ops.h"
#include "../autograd/ag_shape.h"
#include "../autograd/ag_index.h"

/* Lua's index origin, passed to the engine as `base` */
#define LT_BASE 1

/* A Lua number or boolean as a 0-dim tensor in C stack memory: integers as
   int64 (exact), other numbers as float64, booleans as bool. */
typedef struct { mt_tensor t; mt_storage s; char buf[8]; } lt_scalar;

/* A value argument: a tensor, or a number or boolean wrapped in sc. */
static const mt_tensor *check_value(lua_State *L, int i, lt_scalar *sc, const char *op) {
  mt_tensor *t = lt_test(L, i);
  if (t) return t;
  int type = lua_type(L, i);
  if (type != LUA_TNUMBER && type != LUA_TBOOLEAN)
    luaL_error(L, "%s: value must be a number, a boolean or a tensor, got %s", op, luaL_typename(L, i));
  memset(sc, 0, sizeof *sc);
  sc->s.refcount = 1;                  /* never reaches 0: the engine only borrows it */
  sc->s.data = sc->buf;
  sc->s.nbytes = sizeof sc->buf;
  sc->t.storage = &sc->s;
  if (type == LUA_TBOOLEAN) {
    sc->t.dtype = MT_BOOL;
    *(bool *)sc->buf = lua_toboolean(L, i);
  } else if (lua_isinteger(L, i)) {
    sc->t.dtype = MT_INT64;
    *(int64_t *)sc->buf = lua_tointeger(L, i);
  } else {
    sc->t.dtype = MT_FLOAT64;
    *(double *)sc->buf = lua_tonumber(L, i);
  }
  return &sc->t;
}

/* An index argument: a tensor (the engine checks it is int64 or int32), or a
   Lua table of integers, made an int64 tensor on like's device that replaces
   it on the stack. */
static mt_tensor *check_index(lua_State *L, int i, const char *op, const mt_tensor *like) {
  mt_tensor *t = lt_test(L, i);
  if (t) return t;
  if (lua_type(L, i) != LUA_TTABLE)
    luaL_error(L, "%s: index must be a tensor or a table of integers, got %s", op, luaL_typename(L, i));
  int64_t n = lt_len(L, i, LT_MAX_TABLE_LEN, "indices", op);
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_tensor_init(r, MT_INT64, 1, &n));
  int64_t *p = (int64_t *)mt_data(r);
  for (int64_t k = 0; k < n; k++) {
    int ok;
    lua_geti(L, i, k + 1);
    p[k] = lua_tointegerx(L, -1, &ok);
    if (!ok) luaL_error(L, "%s: index entry %d is not an integer", op, (int)k + 1);
    lua_pop(L, 1);
  }
  if (mt_device_of(like) != MT_CPU) {
    mt_tensor *d = lt_push(L);
    LT_TRY(L, mt_tensor_init_like(d, MT_INT64, 1, &n, like));
    LT_TRY(L, mt_copy(d, r));
    lua_remove(L, -2);
    r = d;
  }
  lua_replace(L, i);
  return r;
}

/* ---- x[key] and x[key] = value (from __index / __newindex) ---- */
static int is_mask(const mt_tensor *key) { return key->dtype == MT_BOOL || key->dtype == MT_UINT8; }
static int is_index(const mt_tensor *key) { return key->dtype == MT_INT64 || key->dtype == MT_INT32; }

static void check_key(lua_State *L, const mt_tensor *t, const mt_tensor *key, const char *op) {
  if (!is_mask(key) && !is_index(key))
    luaL_error(L, "%s: a tensor key must be int64 or int32 (indices) or bool or uint8 (a mask), got %s", op,
               mt_dtypes[key->dtype].name);
  if (mt_device_of(key) != MT_CPU && !mt_same_device(t, key)) {   /* as PyTorch: on the CPU, or beside x */
    char d1[32], d2[32];
    luaL_error(L, "%s: indices should be on the CPU or on the indexed tensor's device (the tensor is on %s, "
               "the index on %s)", op, mt_tensor_device_str(t, d1, sizeof d1), mt_tensor_device_str(key, d2, sizeof d2));
  }
}

/* x[key]: the registry's index_select of the rows key picks, with x's
   leading dims merged into one first (a mask's) and the result viewed in
   its shape after, each through the dispatcher */
int lt_index_get_tensor(lua_State *L, mt_tensor *t, mt_tensor *key) {
  check_key(L, t, key, "index");
  mt_tensor flat = {0};
  int64_t base, shape[MT_MAX_DIMS];
  int lead, nd;
  LT_TRY(L, mt_index_key(t, key, LT_BASE, &flat, &base, &lead, &nd, shape));
  mt_tensor *index = lt_push(L);                 /* the stack owns it from here */
  if (!mt_same_device(&flat, t)) {               /* CPU indices of a GPU tensor go over first */
    if (mt_to_copy(index, &flat, MT_INT64, mt_device_of(t), mt_device_index_of(t), "index")) {
      mt_tensor_release(&flat);
      lt_error(L);
    }
    mt_tensor_release(&flat);
  } else {
    mt_tensor_move(index, &flat);
  }
  mt_tensor *rows = t;
  mt_view_args a;
  a.n = a.m = 0;
  if (lead != 1) {                               /* a mask over lead dims (none: x gains one of size 1) */
    a.i[0] = 0;
    a.i[1] = lead - 1;
    rows = lt_push(L);
    LT_TRY(L, mt_call_view(rows, t, lead ? MT_OP_flatten : MT_OP_unsqueeze, &a, 0));
  }
  mt_tensor *picked = lt_push(L);
  if (mt_call_index(picked, rows, MT_OP_index_select, 0, index, base)) {
    const char *m = mt_error();                  /* named as the user wrote it: x[key] */
    if (!strncmp(m, "index_select:", 13)) luaL_error(L, "index:%s", m + 13);
    lt_error(L);
  }
  a.n = nd;
  memcpy(a.v, shape, sizeof(int64_t) * (size_t)nd);
  LT_TRY(L, mt_call_view(lt_push(L), picked, MT_OP_view, &a, 0));
  return 1;
}

/* The value converts to t's dtype, as in x[{...}] = v (PyTorch would insist
   on the same dtype). */
void lt_index_set_tensor(lua_State *L, mt_tensor *t, mt_tensor *key, int value) {
  lt_scalar sc;
  check_key(L, t, key, "index assignment");
  const mt_tensor *v = check_value(L, value, &sc, "index assignment");
  LT_TRY(L, mt_call_index_put(t, key, v, LT_BASE));
}

/* ---- the registry's index ops: x:index_select(dim, index), x:gather(dim,
   index), torch.gather(x, dim, index), Torch7's x:index(dim, index); upvalue
   2 is the op ---- */
static int index_call(lua_State *L) {
  mt_op op = (mt_op)lua_tointeger(L, lua_upvalueindex(2));
  const char *name = mt_op_names[op];
  mt_tensor *x = lt_check(L, 1, name);
  int dim = lt_check_dim(L, 2, x->ndim, name);
  mt_tensor *index = check_index(L, 3, name, x);
  LT_TRY(L, mt_call_index(lt_push(L), x, op, dim, index, LT_BASE));
  return 1;
}

LT_OUT_BINDING(index_call)

static void set_index(lua_State *L, const char *name, size_t len, int op) {
  lt_bind_op(L, name, len, 0, 0, index_call_out, op);
}

/* ---- index_add, index_copy, index_fill ---- */
/* ---- the registry's puts: x:index_add(dim, index, source, {alpha=}),
   x:index_copy(dim, index, source), x:index_fill(dim, index, value),
   x:scatter(dim, index, source or value, {reduce='add'}),
   x:scatter_add(dim, index, source); op_ in place, and Torch7's indexAdd,
   indexCopy and indexFill, which write in place; upvalue 2 is op * 2 +
   inplace ---- */
static int put_call(lua_State *L) {
  char name[64];
  int inplace;
  mt_op op = (mt_op)lt_bound_op(L, name, sizeof name, &inplace);
  lt_scalar sc;
  mt_tensor *x = lt_check(L, 1, name);
  int dim = lt_check_dim(L, 2, x->ndim, name);
  mt_tensor *index = check_index(L, 3, name, x);
  int opts = lt_opts_index(L);
  if (opts && opts <= 4) opts = 0;
  mt_tensor *given = lt_test(L, 4);
  if (op == MT_OP_scatter && (!given || (given->ndim == 0 && index->ndim > 0)))
    op = MT_OP_scatter_fill;                     /* a value: a number, or a 0-dim tensor (as PyTorch) */
  const mt_tensor *src = strstr(mt_op_infos[op].signature, "value") ? check_value(L, 4, &sc, name)
                                                                      : lt_check(L, 4, name);
  double alpha = op == MT_OP_index_add ? lt_opt_number(L, opts, "alpha", 1) : 1;
  if ((op == MT_OP_scatter || op == MT_OP_scatter_fill) && opts && lua_getfield(L, opts, "reduce") != LUA_TNIL) {
    const char *reduce = lua_tostring(L, -1);
    if (!reduce || strcmp(reduce, "add") != 0)
      luaL_error(L, "%s: reduce must be 'add' (others are not supported), got %s", name,
                 reduce ? reduce : luaL_typename(L, -1));
    if (op == MT_OP_scatter_fill) {              /* the value at every index: scatter_add of a filled source */
      mt_tensor *full = lt_push(L);
      LT_TRY(L, mt_tensor_init_like(full, x->dtype, index->ndim, index->shape, x));
      LT_TRY(L, mt_copy(full, src));
      src = full;
    }
    op = MT_OP_scatter_add;
  }
  if (mt_call_put(inplace ? x : lt_push(L), x, op, dim, index, src, alpha, LT_BASE, inplace))
    return lt_error_as_called(L, name, op, inplace);
  if (inplace) lua_settop(L, 1);
  return 1;
}

LT_OUT_BINDING(put_call)

static void set_put(lua_State *L, const char *name, size_t len, int op) {
  for (int inplace = 0; inplace <= 1; inplace++)
    lt_bind_op(L, name, len, inplace, inplace, put_call_out, (lua_Integer)op * 2 + inplace);
}

/* ---- the registry's masks: x:masked_fill(mask, value),
   x:masked_scatter(mask, source), x:masked_select(mask), op_ in place, and
   Torch7's maskedFill and maskedCopy, which write in place; upvalue 2 is
   op * 2 + inplace ---- */
static int mask_call(lua_State *L) {
  char name[64];
  int inplace;
  mt_op op = (mt_op)lt_bound_op(L, name, sizeof name, &inplace);
  lt_scalar sc;
  mt_tensor *x = lt_check(L, 1, name), *mask = lt_check(L, 2, name);
  const char *sig = mt_op_infos[op].signature;
  const mt_tensor *src = !strcmp(sig, "value") ? check_value(L, 3, &sc, name)
                         : !strcmp(sig, "source") ? lt_check(L, 3, name) : NULL;
  if (mt_call_mask(inplace ? x : lt_push(L), x, op, mask, src, inplace)) return lt_error_as_called(L, name, op, inplace);
  if (inplace) lua_settop(L, 1);
  return 1;
}

LT_OUT_BINDING(mask_call)

static void set_mask(lua_State *L, const char *name, size_t len, int op) {
  for (int inplace = 0; inplace <= mt_op_infos[op].inplace; inplace++)
    lt_bind_op(L, name, len, inplace, inplace, mask_call_out, (lua_Integer)op * 2 + inplace);
}

/* ---- nonzero, where ---- */
/* Replaces the N x D nonzero result at the top with a table of D 1-D
   tensors, one per dim (PyTorch's as_tuple; a 0-dim input gives one). */
static void nonzero_columns(lua_State *L, int ndim) {
  mt_tensor *nz = lt_test(L, -1);
  int ncols = ndim ? ndim : 1;
  lua_createtable(L, ncols, 0);
  for (int d = 0; d < ncols; d++) {
    mt_tensor *col = lt_push(L);
    if (ndim == 0) {
      LT_TRY(L, mt_tensor_init_like(col, MT_INT64, 1, nz->shape, nz));
      mt_fill(col, LT_BASE);
    } else {
      mt_tensor view = {0};
      LT_TRY(L, mt_select(&view, nz, 1, d));
      int rc = mt_clone(col, &view);
      mt_tensor_release(&view);
      LT_TRY(L, rc);
    }
    lua_rawseti(L, -2, d + 1);
  }
  lua_remove(L, -2);
}

/* the registry's nonzero of x, 1-based, pushed */
static void push_nonzero(lua_State *L, mt_tensor *x) {
  mt_view_args a;
  a.n = a.m = 0;
  a.i[0] = LT_BASE;
  LT_TRY(L, mt_call_view(lt_push(L), x, MT_OP_nonzero, &a, 0));
}

/* x:nonzero() / torch.nonzero(x): N x D 1-based indices; {as_tuple=true}
   gives a table of D index tensors instead. */
static int l_nonzero(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "nonzero");
  int opts = lt_opts_index(L);
  int as_tuple = opts > 1 && lt_opt_bool(L, opts, "as_tuple", 0);
  push_nonzero(L, x);
  if (as_tuple) nonzero_columns(L, x->ndim);
  return 1;
}

/* A where operand: a tensor, a number (a scalar that promotes weakly) or a
   boolean (a 0-dim bool tensor in sc, which promotes the same way). */
static void where_operand(lua_State *L, int i, mt_operand *op, lt_scalar *sc) {
  op->t = lt_test(L, i);
  op->value = 0;
  op->is_int = 0;
  if (op->t) return;
  if (lua_type(L, i) == LUA_TNUMBER) {
    op->is_int = lua_isinteger(L, i);
    op->value = lua_tonumber(L, i);
  } else if (lua_type(L, i) == LUA_TBOOLEAN) {
    op->t = check_value(L, i, sc, "where");
  } else {
    luaL_error(L, "where: argument %d must be a tensor, a number or a boolean, got %s", i, luaL_typename(L, i));
  }
}

static int where(lua_State *L, int cond_at, int a_at, int b_at) {
  mt_tensor *cond = lt_check(L, cond_at, "where");
  mt_operand a, b;
  lt_scalar sa, sb;
  where_operand(L, a_at, &a, &sa);
  where_operand(L, b_at, &b, &sb);
  mt_operand in[3] = {{cond, 0, 0}, a, b};       /* the registry's where: condition, input, other */
  double none[2] = {0, 0};
  LT_TRY(L, mt_call_param(lt_push(L), in, MT_OP_where, none, 0, lt_default_dtype));
  return 1;
}

/* torch.where(cond, a, b); torch.where(cond) is nonzero(cond, {as_tuple=true}) */
static int l_where(lua_State *L) {
  if (lua_gettop(L) == 1) {
    mt_tensor *cond = lt_check(L, 1, "where");
    push_nonzero(L, cond);
    nonzero_columns(L, cond->ndim);
    return 1;
  }
  return where(L, 1, 2, 3);
}

/* x:where(cond, y) is torch.where(cond, x, y), as in PyTorch */
static int m_where(lua_State *L) { return where(L, 2, 1, 3); }

/* nonzero and where, the registry's own bindings (nothing to guard: both
   go through the dispatcher); the registry's families are bound from the
   registry below, with Torch7's names beside PyTorch's: index, maskedSelect, and
   indexAdd, indexCopy, indexFill, maskedFill, maskedCopy, which write in
   place as in Torch7. Torch7's in-place scatter is PyTorch's scatter_;
   scatter copies. */
/* torch._class_nll(logp, target, ignore_index, mean): Torch7's ClassNLLCriterion
   loss in closed form (mt_loss.h) as a number; nil when the closed form does
   not take these tensors (the criterion's general path does) */
static int l_class_nll(lua_State *L) {
  mt_tensor *logp = lt_test_any(L, 1), *target = lt_test_any(L, 2);
  double loss;
  if (!logp || !target || !mt_class_nll(logp, target, (int64_t)luaL_checkinteger(L, 3), lua_toboolean(L, 4), &loss))
    return 0;
  lua_pushnumber(L, loss);
  return 1;
}

/* torch._class_nll_grad(logp, target, ignore_index, mean): its gradient; nil
   when the closed form does not take these tensors */
static int l_class_nll_grad(lua_State *L) {
  mt_tensor *logp = lt_test_any(L, 1), *target = lt_test_any(L, 2);
  const lua_Integer ignore = luaL_checkinteger(L, 3);
  const int mean = lua_toboolean(L, 4);
  if (!logp || !target) return 0;
  mt_tensor *g = lt_push(L);
  const int rc = mt_class_nll_grad(g, logp, target, (int64_t)ignore, mean);
  if (rc < 0) lt_error(L);
  return rc;
}

static const luaL_Reg methods[] = {
  {"nonzero", l_nonzero}, {"where", m_where},
  {NULL, NULL}};

static const luaL_Reg functions[] = {
  {"nonzero", l_nonzero}, {"where", l_where}, {"_class_nll", l_class_nll}, {"_class_nll_grad", l_class_nll_grad},
  {NULL, NULL}};

void lt_open_index(lua_State *L) {
  lt_setfuncs(L, methods, functions);
  static const char *const any_device[] = {"nonzero", "where", NULL};   /* device kernels behind both */
  lt_mark_any_device(L, -3, any_device);
  lt_mark_any_device(L, -2, any_device);
  lt_bind_registry(L, MT_OP_END_PARAM, MT_OP_END_INDEX, set_index);   /* index_select, gather */
  lt_bind_registry(L, MT_OP_END_INDEX, MT_OP_END_PUT, set_put);        /* index_add, scatter, ... */
  lt_bind_registry(L, MT_OP_END_PUT, MT_OP_END_MASK, set_mask);        /* masked_fill, ... */
  static const struct { const char *name; mt_op op; lua_CFunction fn; } torch7_in_place[] = {
    {"indexAdd", MT_OP_index_add, put_call_out}, {"indexCopy", MT_OP_index_copy, put_call_out},
    {"indexFill", MT_OP_index_fill, put_call_out}, {"maskedFill", MT_OP_masked_fill, mask_call_out},
    {"maskedCopy", MT_OP_masked_scatter, mask_call_out}};
  for (size_t i = 0; i < sizeof torch7_in_place / sizeof torch7_in_place[0]; i++)
    lt_bind_op(L, torch7_in_place[i].name, strlen(torch7_in_place[i].name), 0, 1, torch7_in_place[i].fn,
               (lua_Integer)torch7_in_place[i].op * 2 + 1);
}
