/* lt_index.c: indexing with tensors -- x[mask], x[idx] and their
   assignments -- and the index_* / gather / scatter / masked_* / where /
   nonzero bindings. Indices to and from Lua are 1-based. */
#include <string.h>
#include "lt.h"
#include "../ops/dispatch.h"
#include "../tensor/mt_index.h"
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

static void check_key(lua_State *L, const mt_tensor *key, const char *op) {
  if (!is_mask(key) && !is_index(key))
    luaL_error(L, "%s: a tensor key must be int64 or int32 (indices) or bool or uint8 (a mask), got %s", op,
               mt_dtypes[key->dtype].name);
}

int lt_index_get_tensor(lua_State *L, mt_tensor *t, mt_tensor *key) {
  check_key(L, key, "index");
  mt_tensor *r = lt_push(L);
  if (is_mask(key)) LT_TRY(L, mt_index_mask(r, t, key));
  else LT_TRY(L, mt_index_tensor(r, t, key, LT_BASE));
  if (t->grad_meta) {
    if (is_mask(key)) LT_TRY(L, mt_ag_record_index_mask(r, t, key));
    else LT_TRY(L, mt_ag_record_index_tensor(r, t, key, LT_BASE));
  }
  return 1;
}

/* The value converts to t's dtype, as in x[{...}] = v (PyTorch would insist
   on the same dtype). */
void lt_index_set_tensor(lua_State *L, mt_tensor *t, mt_tensor *key, int value) {
  lt_scalar sc;
  check_key(L, key, "index assignment");
  const mt_tensor *v = check_value(L, value, &sc, "index assignment");
  if (is_mask(key)) LT_TRY(L, mt_index_mask_put(t, key, v));
  else LT_TRY(L, mt_index_tensor_put(t, key, v, LT_BASE));
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

static void set_index(lua_State *L, const char *name, size_t len, int op) {
  lt_bind_op(L, name, len, 0, 0, index_call, op);
}

/* ---- index_add, index_copy, index_fill ---- */
enum { PUT_ADD, PUT_COPY, PUT_FILL };

/* x:index_add_(dim, index, source, {alpha=}), x:index_copy_(dim, index,
   source), x:index_fill_(dim, index, value); without _ on a copy of x. */
static int index_put(lua_State *L, int kind, int inplace) {
  static const char *const names[3][2] = {
    {"index_add", "index_add_"}, {"index_copy", "index_copy_"}, {"index_fill", "index_fill_"}};
  const char *op = names[kind][inplace];
  lt_scalar sc;
  mt_tensor *x = lt_check(L, 1, op);
  int dim = lt_check_dim(L, 2, x->ndim, op);
  mt_tensor *index = check_index(L, 3, op, x);
  const mt_tensor *src = kind == PUT_FILL ? check_value(L, 4, &sc, op) : lt_check(L, 4, op);
  const mt_tensor *src_tensor = kind == PUT_FILL ? lt_test(L, 4) : src;   /* NULL: a number */
  int opts = lt_opts_index(L);
  double alpha = kind == PUT_ADD && opts > 4 ? lt_opt_number(L, opts, "alpha", 1) : 1;
  mt_tensor *dst = x;
  if (!inplace) {
    dst = lt_push(L);
    LT_TRY(L, mt_clone(dst, x));
  }
  if (kind == PUT_ADD) LT_TRY(L, mt_index_add(dst, dim, index, src, alpha, LT_BASE));
  else if (kind == PUT_COPY) LT_TRY(L, mt_index_copy(dst, dim, index, src, LT_BASE));
  else LT_TRY(L, mt_index_fill(dst, dim, index, src, LT_BASE));
  if (inplace) {
    lua_settop(L, 1);
    return 1;
  }
  static const mt_ag_put put_kinds[3] = {MT_AG_INDEX_ADD, MT_AG_INDEX_COPY, MT_AG_INDEX_FILL};
  if (x->grad_meta || (src_tensor && src_tensor->grad_meta))
    LT_TRY(L, mt_ag_record_put(dst, put_kinds[kind], x, dim, index, src_tensor, alpha, LT_BASE));
  return 1;
}

static int l_index_add_(lua_State *L) { return index_put(L, PUT_ADD, 1); }
static int l_index_add(lua_State *L) { return index_put(L, PUT_ADD, 0); }
static int l_index_copy_(lua_State *L) { return index_put(L, PUT_COPY, 1); }
static int l_index_copy(lua_State *L) { return index_put(L, PUT_COPY, 0); }
static int l_index_fill_(lua_State *L) { return index_put(L, PUT_FILL, 1); }
static int l_index_fill(lua_State *L) { return index_put(L, PUT_FILL, 0); }

/* ---- scatter ---- */
/* x:scatter_(dim, index, src or value, {reduce='add'}), x:scatter_add_(dim,
   index, src); without _ on a copy of x. */
static int scatter(lua_State *L, int add, int inplace) {
  static const char *const names[2][2] = {{"scatter", "scatter_"}, {"scatter_add", "scatter_add_"}};
  const char *op = names[add][inplace];
  lt_scalar sc;
  mt_tensor *x = lt_check(L, 1, op);
  int dim = lt_check_dim(L, 2, x->ndim, op);
  mt_tensor *index = check_index(L, 3, op, x);
  mt_tensor *src = add ? lt_check(L, 4, op) : lt_test(L, 4);
  const mt_tensor *value = src ? NULL : check_value(L, 4, &sc, op);
  int opts = lt_opts_index(L);
  if (!add && opts > 4 && lua_getfield(L, opts, "reduce") != LUA_TNIL) {
    const char *reduce = lua_tostring(L, -1);
    if (!reduce || strcmp(reduce, "add") != 0)
      luaL_error(L, "%s: reduce must be 'add' (others are not supported), got %s", op,
                 reduce ? reduce : luaL_typename(L, -1));
    add = 1;
  }
  mt_tensor *dst = x;
  if (!inplace) {
    dst = lt_push(L);
    LT_TRY(L, mt_clone(dst, x));
  }
  if (src) LT_TRY(L, mt_scatter(dst, dim, index, src, add, LT_BASE));
  else LT_TRY(L, mt_scatter_fill(dst, dim, index, value, add, LT_BASE));
  if (inplace) {
    lua_settop(L, 1);
    return 1;
  }
  if (x->grad_meta || (src && src->grad_meta))
    LT_TRY(L, mt_ag_record_put(dst, add ? MT_AG_SCATTER_ADD : MT_AG_SCATTER, x, dim, index, src, 1, LT_BASE));
  return 1;
}

static int l_scatter_(lua_State *L) { return scatter(L, 0, 1); }
static int l_scatter(lua_State *L) { return scatter(L, 0, 0); }
static int l_scatter_add_(lua_State *L) { return scatter(L, 1, 1); }
static int l_scatter_add(lua_State *L) { return scatter(L, 1, 0); }

/* ---- masks ---- */
static int masked_fill(lua_State *L, int inplace) {
  const char *op = inplace ? "masked_fill_" : "masked_fill";
  lt_scalar sc;
  mt_tensor *x = lt_check(L, 1, op), *mask = lt_check(L, 2, op);
  const mt_tensor *value = check_value(L, 3, &sc, op);
  if (inplace) {
    LT_TRY(L, mt_masked_fill(x, mask, value));
    lua_settop(L, 1);
    return 1;
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_masked_fill_out(r, x, mask, value));
  if (x->grad_meta || value->grad_meta) LT_TRY(L, mt_ag_record_masked_fill(r, x, mask, value));
  return 1;
}

static int l_masked_fill_(lua_State *L) { return masked_fill(L, 1); }
static int l_masked_fill(lua_State *L) { return masked_fill(L, 0); }

/* For autograd, masked_select is x[mask] on x and mask broadcast together;
   x's broadcast is recorded as an expand. */
static int masked_select_record(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask) {
  if (mt_same_shape(x, mask)) return mt_ag_record_index_mask(r, x, mask);
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  mt_tensor xb = {0}, mb = {0};
  int rc = mt_broadcast_shapes("masked_select", x->ndim, x->shape, mask->ndim, mask->shape, &ndim, shape) ||
           mt_expand(&xb, x, ndim, shape) || mt_ag_record_expand(&xb, x) || mt_expand(&mb, mask, ndim, shape) ||
           mt_ag_record_index_mask(r, &xb, &mb);
  mt_ag_meta_release(xb.grad_meta);
  xb.grad_meta = NULL;
  mt_tensor_release(&xb);
  mt_tensor_release(&mb);
  return rc ? -1 : 0;
}

static int l_masked_select(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "masked_select"), *mask = lt_check(L, 2, "masked_select");
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_masked_select(r, x, mask));
  if (x->grad_meta) LT_TRY(L, masked_select_record(r, x, mask));
  return 1;
}

static int masked_scatter(lua_State *L, int inplace) {
  const char *op = inplace ? "masked_scatter_" : "masked_scatter";
  mt_tensor *x = lt_check(L, 1, op), *mask = lt_check(L, 2, op), *src = lt_check(L, 3, op);
  mt_tensor *dst = x;
  if (!inplace) {
    dst = lt_push(L);
    LT_TRY(L, mt_clone(dst, x));
  }
  LT_TRY(L, mt_masked_scatter(dst, mask, src));
  if (inplace) {
    lua_settop(L, 1);
    return 1;
  }
  if (x->grad_meta || src->grad_meta) LT_TRY(L, mt_ag_record_put(dst, MT_AG_MASKED_SCATTER, x, 0, mask, src, 1, 0));
  return 1;
}

static int l_masked_scatter_(lua_State *L) { return masked_scatter(L, 1); }
static int l_masked_scatter(lua_State *L) { return masked_scatter(L, 0); }

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
      LT_TRY(L, mt_tensor_init(col, MT_INT64, 1, nz->shape));
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

/* x:nonzero() / torch.nonzero(x): N x D 1-based indices; {as_tuple=true}
   gives a table of D index tensors instead. */
static int l_nonzero(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "nonzero");
  int opts = lt_opts_index(L);
  int as_tuple = opts > 1 && lt_opt_bool(L, opts, "as_tuple", 0);
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_nonzero(r, x, LT_BASE));
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
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_where(r, cond, &a, &b, lt_default_dtype));
  if ((a.t && a.t->grad_meta) || (b.t && b.t->grad_meta)) LT_TRY(L, mt_ag_record_where(r, cond, &a, &b));
  return 1;
}

/* torch.where(cond, a, b); torch.where(cond) is nonzero(cond, {as_tuple=true}) */
static int l_where(lua_State *L) {
  if (lua_gettop(L) == 1) {
    mt_tensor *cond = lt_check(L, 1, "where");
    mt_tensor *r = lt_push(L);
    LT_TRY(L, mt_nonzero(r, cond, LT_BASE));
    nonzero_columns(L, cond->ndim);
    return 1;
  }
  return where(L, 1, 2, 3);
}

/* x:where(cond, y) is torch.where(cond, x, y), as in PyTorch */
static int m_where(lua_State *L) { return where(L, 2, 1, 3); }

/* Torch7's names sit beside PyTorch's: index, indexAdd, indexCopy,
   indexFill, maskedFill, maskedCopy (in place, as in Torch7), maskedSelect.
   Torch7's in-place scatter is PyTorch's scatter_; scatter copies. */
static const luaL_Reg methods[] = {
  {"index_add_", l_index_add_}, {"index_add", l_index_add}, {"indexAdd", l_index_add_},
  {"index_copy_", l_index_copy_}, {"index_copy", l_index_copy}, {"indexCopy", l_index_copy_},
  {"index_fill_", l_index_fill_}, {"index_fill", l_index_fill}, {"indexFill", l_index_fill_},
  {"scatter_", l_scatter_}, {"scatter", l_scatter},
  {"scatter_add_", l_scatter_add_}, {"scatter_add", l_scatter_add},
  {"masked_fill_", l_masked_fill_}, {"masked_fill", l_masked_fill}, {"maskedFill", l_masked_fill_},
  {"masked_select", l_masked_select}, {"maskedSelect", l_masked_select},
  {"masked_scatter_", l_masked_scatter_}, {"masked_scatter", l_masked_scatter},
  {"maskedCopy", l_masked_scatter_},
  {"nonzero", l_nonzero}, {"where", m_where},
  {NULL, NULL}};

static const luaL_Reg functions[] = {
  {"index_add", l_index_add}, {"index_copy", l_index_copy}, {"index_fill", l_index_fill},
  {"scatter", l_scatter}, {"scatter_add", l_scatter_add}, {"masked_fill", l_masked_fill},
  {"masked_select", l_masked_select}, {"maskedSelect", l_masked_select},
  {"masked_scatter", l_masked_scatter}, {"nonzero", l_nonzero}, {"where", l_where},
  {NULL, NULL}};

/* the ops the devices' extra kernels serve (mt_device_extra) */
void lt_open_index(lua_State *L) {
  lt_setfuncs_guarded(L, methods, functions);
  static const char *const any_device_methods[] = {
    "index_add_", "index_add", "indexAdd", "index_copy_", "index_copy", "indexCopy",
    "index_fill_", "index_fill", "indexFill", "scatter_", "scatter", "scatter_add_", "scatter_add",
    "masked_fill_", "masked_fill", "maskedFill", NULL};
  static const char *const any_device_functions[] = {
    "index_add", "index_copy", "index_fill", "scatter", "scatter_add", "masked_fill", NULL};
  lt_mark_any_device(L, -3, any_device_methods);
  lt_mark_any_device(L, -2, any_device_functions);
  lt_bind_registry(L, MT_OP_END_PARAM, MT_NUM_OPS, set_index);   /* index_select, gather */
}
