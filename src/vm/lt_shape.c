/* lt_shape.c: Lua bindings of the shape ops (cat, stack, split, chunk,
   flatten, repeat, flip, roll, tril/triu, movedim) and of the parametric
   elementwise ops (clamp, softplus, leaky_relu, addcmul/addcdiv, lerp). */
#include <limits.h>
#include <string.h>
#include "lt.h"
#include "../tensor/mt_ops.h"
#include "../tensor/mt_shape.h"
#include "../autograd/ag_shape.h"

/* Lists of up to this many tensors or sizes are read into a C array on the
   stack; longer ones into a scratch userdata. */
#define LT_SHAPE_SMALL 64

/* A 1-based Lua dim (negative from the end) as the engine's 0-based dim,
   left for the engine to range-check against the right tensor. */
static int dim_arg(lua_State *L, int i, int def, const char *op) {
  if (lua_isnoneornil(L, i)) return def;
  int ok;
  lua_Integer d = lua_tointegerx(L, i, &ok);
  if (!ok) luaL_error(L, "%s: dim must be an integer, got %s", op, luaL_typename(L, i));
  if (d == 0 || d > MT_MAX_DIMS + 1 || d < -MT_MAX_DIMS - 1)
    luaL_error(L, "%s: dimension %d out of range (dims are 1-based, -1 is the last)", op, (int)d);
  return d > 0 ? (int)d - 1 : (int)d;
}

/* A scratch array of n elements of size bytes: buf when it fits, else a
   userdata left on the stack (collected with the call's frame). */
static void *scratch(lua_State *L, void *buf, size_t fits, size_t n, size_t size) {
  if (n <= fits) return buf;
  return lua_newuserdatauv(L, n * size, 0);
}

/* Dims given as one number or a table of numbers at i, each checked against
   ndim; returns how many. */
static int read_dims(lua_State *L, int i, int ndim, int *dims, const char *op) {
  if (lua_type(L, i) != LUA_TTABLE || lt_test(L, i)) {
    dims[0] = lt_check_dim(L, i, ndim, op);
    return 1;
  }
  int n = (int)lt_len(L, i, MT_MAX_DIMS, "dims", op);
  for (int k = 0; k < n; k++) {
    lua_geti(L, i, k + 1);
    dims[k] = lt_check_dim(L, lua_gettop(L), ndim, op);
    lua_pop(L, 1);
  }
  return n;
}

/* ---- cat and stack ---- */

/* torch.cat({a, b, ...}, dim) or Torch7's torch.cat(a, b, ..., dim); dim
   defaults to 1 as in PyTorch and may come as {dim = d}. */
static int join(lua_State *L, int stack) {
  const char *op = stack ? "stack" : "cat";
  const mt_tensor *small[LT_SHAPE_SMALL], **ts;
  int n, dim_at;
  if (lua_type(L, 1) == LUA_TTABLE && !lt_test(L, 1)) {
    n = (int)lt_len(L, 1, LT_MAX_TABLE_LEN, "tensors", op);
    dim_at = 2;
    lua_settop(L, dim_at);                     /* scratch space goes above */
    ts = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *ts);
    for (int i = 0; i < n; i++) {
      lua_geti(L, 1, i + 1);
      ts[i] = lt_test(L, -1);
      if (!ts[i]) luaL_error(L, "%s: entry %d of the list must be a tensor, got %s", op, i + 1, luaL_typename(L, -1));
      lua_pop(L, 1);                           /* the list keeps it alive */
    }
  } else {
    n = 0;
    while (lt_test(L, n + 1)) n++;
    if (n == 0) luaL_error(L, "%s: expects a list of tensors, got %s", op, luaL_typename(L, 1));
    dim_at = n + 1;
    lua_settop(L, dim_at);
    ts = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *ts);
    for (int i = 0; i < n; i++) ts[i] = lt_test(L, i + 1);
  }
  int dim;
  if (lua_type(L, dim_at) == LUA_TTABLE && !lt_test(L, dim_at)) {
    lua_getfield(L, dim_at, "dim");
    dim = dim_arg(L, -1, 0, op);
    lua_pop(L, 1);
  } else {
    dim = dim_arg(L, dim_at, 0, op);
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, stack ? mt_stack(r, ts, n, dim) : mt_cat(r, ts, n, dim));
  for (int i = 0; i < n; i++)
    if (ts[i]->grad_meta) { LT_TRY(L, mt_ag_record_cat(r, ts, n, dim, stack)); break; }
  return 1;
}
static int s_cat(lua_State *L) { return join(L, 0); }
static int s_stack(lua_State *L) { return join(L, 1); }

/* ---- split and chunk: Lua tables of views ---- */

static int push_parts(lua_State *L, const mt_tensor *t, int dim, const int64_t *sizes, int64_t n) {
  mt_tensor *small[LT_SHAPE_SMALL];
  mt_tensor **parts = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *parts);
  lua_createtable(L, n < INT_MAX ? (int)n : 0, 0);
  for (int64_t i = 0; i < n; i++) {
    parts[i] = lt_push(L);
    lua_rawseti(L, -2, i + 1);
  }
  LT_TRY(L, mt_split_with_sizes(parts, t, dim, sizes, n));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_split(parts, t, dim, sizes, n));
  return 1;
}

/* x:split(size, dim) or x:split({sizes}, dim) */
static int s_split(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "split");
  lua_settop(L, 3);
  int dim = lua_isnoneornil(L, 3) ? 0 : lt_check_dim(L, 3, t->ndim, "split");
  int64_t small[LT_SHAPE_SMALL], *sizes, n;
  if (lua_type(L, 2) == LUA_TTABLE) {
    n = lt_len(L, 2, LT_MAX_TABLE_LEN, "sizes", "split");
    sizes = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *sizes);
    for (int64_t i = 0; i < n; i++) {
      int ok;
      lua_geti(L, 2, i + 1);
      sizes[i] = lua_tointegerx(L, -1, &ok);
      if (!ok) luaL_error(L, "split: size entry %d must be an integer, got %s", (int)i + 1, luaL_typename(L, -1));
      lua_pop(L, 1);
    }
  } else {
    int ok;
    int64_t size = lua_tointegerx(L, 2, &ok);
    if (!ok) luaL_error(L, "split: expects a size or a table of sizes, got %s", luaL_typename(L, 2));
    if ((n = mt_split_sizes(t, dim, size, NULL, 0)) < 0) lt_error(L);
    sizes = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *sizes);
    mt_split_sizes(t, dim, size, sizes, n);
  }
  return push_parts(L, t, dim, sizes, n);
}

/* x:chunk(n, dim) */
static int s_chunk(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "chunk");
  lua_Integer chunks = luaL_checkinteger(L, 2);
  int dim = lua_isnoneornil(L, 3) ? 0 : lt_check_dim(L, 3, t->ndim, "chunk");
  int64_t small[LT_SHAPE_SMALL], *sizes, n;
  if ((n = mt_chunk_sizes(t, dim, chunks, NULL, 0)) < 0) lt_error(L);
  sizes = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *sizes);
  mt_chunk_sizes(t, dim, chunks, sizes, n);
  return push_parts(L, t, dim, sizes, n);
}

/* x:unbind(dim): a Lua array of the slices along dim (default 1), each a
   view without that dim; recorded as one split (size-1 parts) and a view per
   part, so backward costs one pass over x rather than one per slice. */
static int s_unbind(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "unbind");
  if (t->ndim == 0) luaL_error(L, "unbind: a 0-dim tensor has no dim to unbind");
  int dim = lua_isnoneornil(L, 2) ? 0 : lt_check_dim(L, 2, t->ndim, "unbind");
  lua_settop(L, 2);
  int64_t n = t->shape[dim], small[LT_SHAPE_SMALL];
  int64_t *ones = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *ones);
  for (int64_t i = 0; i < n; i++) ones[i] = 1;
  push_parts(L, t, dim, ones, n);
  for (int64_t i = 1; i <= n; i++) {
    lua_geti(L, -1, i);
    mt_tensor *part = lt_test(L, -1), *r = lt_push(L);
    LT_TRY(L, mt_squeeze(r, part, dim));
    if (part->grad_meta) LT_TRY(L, mt_ag_record_view(r, part));
    lua_seti(L, -3, i);
    lua_pop(L, 1);
  }
  return 1;
}

/* ---- flatten, unflatten, movedim ---- */

static int s_flatten(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "flatten");
  int start = lua_isnoneornil(L, 2) ? 0 : lt_check_dim(L, 2, t->ndim, "flatten");
  int end = lua_isnoneornil(L, 3) ? -1 : lt_check_dim(L, 3, t->ndim, "flatten");
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_flatten(r, t, start, end));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_view(r, t));
  return 1;
}

/* x:unflatten(dim, {sizes}) or x:unflatten(dim, s1, s2, ...) */
static int s_unflatten(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "unflatten");
  int dim = lt_check_dim(L, 2, t->ndim, "unflatten");
  int64_t sizes[MT_MAX_DIMS];
  int n = lt_read_shape(L, 3, lua_gettop(L), sizes, "unflatten");
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_unflatten(r, t, dim, sizes, n));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_view(r, t));
  return 1;
}

/* x:movedim(src, dst): numbers or tables of equal length */
static int s_movedim(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "movedim");
  int src[MT_MAX_DIMS], dst[MT_MAX_DIMS];
  int ns = read_dims(L, 2, t->ndim, src, "movedim"), nd = read_dims(L, 3, t->ndim, dst, "movedim");
  if (ns != nd) luaL_error(L, "movedim: %d source dims but %d destination dims", ns, nd);
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_movedim(r, t, src, dst, ns));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_movedim(r, t, src, dst, ns));
  return 1;
}

/* ---- repeat, flip, roll, tril/triu ---- */

/* x:repeat(2, 3) / x:repeatTensor({2, 3}) ('repeat' is a Lua keyword:
   x['repeat'](x, 2, 3)) */
static int s_repeat(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "repeat");
  int64_t reps[MT_MAX_DIMS];
  int n = lt_read_shape(L, 2, lua_gettop(L), reps, "repeat");
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_repeat(r, t, reps, n));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_repeat(r, t, reps, n));
  return 1;
}

/* x:flip({1, 2}) or x:flip(1, 2) */
static int s_flip(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "flip");
  int dims[MT_MAX_DIMS], n;
  if (lua_isnoneornil(L, 2)) luaL_error(L, "flip: expects the dims to flip");
  if (lua_type(L, 2) == LUA_TTABLE) n = read_dims(L, 2, t->ndim, dims, "flip");
  else {
    n = lua_gettop(L) - 1;
    if (n > MT_MAX_DIMS) luaL_error(L, "flip: %d dims given, at most %d allowed", n, MT_MAX_DIMS);
    for (int i = 0; i < n; i++) dims[i] = lt_check_dim(L, i + 2, t->ndim, "flip");
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_flip(r, t, dims, n));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_flip(r, t, dims, n));
  return 1;
}

static int flip_one(lua_State *L, const char *op, int min_dims, int dim) {
  mt_tensor *t = lt_check(L, 1, op);
  if (t->ndim < min_dims) {
    char b[128];
    luaL_error(L, "%s: needs at least %d dims, got %s", op, min_dims, mt_shape_str(t, b, sizeof b));
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_flip(r, t, &dim, 1));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_flip(r, t, &dim, 1));
  return 1;
}
static int s_fliplr(lua_State *L) { return flip_one(L, "fliplr", 2, 1); }
static int s_flipud(lua_State *L) { return flip_one(L, "flipud", 1, 0); }

/* x:roll(shifts, dims): shifts a number or a table; dims the same, or nil
   to roll the flattened tensor */
static int s_roll(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "roll");
  int64_t shifts[MT_MAX_DIMS];
  int dims[MT_MAX_DIMS], ns, nd = 0;
  if (lua_isnoneornil(L, 2)) luaL_error(L, "roll: expects shifts (a number or a table)");
  ns = lt_read_shape(L, 2, 2, shifts, "roll");
  if (!lua_isnoneornil(L, 3)) {
    if (t->ndim == 0) luaL_error(L, "roll: a 0-dim tensor has no dims to roll along");
    nd = read_dims(L, 3, t->ndim, dims, "roll");
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_roll(r, t, shifts, ns, dims, nd));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_roll(r, t, shifts, ns, dims, nd));
  return 1;
}

static int tri(lua_State *L, int upper, int inplace) {
  const char *op = upper ? (inplace ? "triu_" : "triu") : (inplace ? "tril_" : "tril");
  mt_tensor *t = lt_check(L, 1, op);
  lua_Integer k = luaL_optinteger(L, 2, 0);
  if (inplace) {
    LT_TRY(L, mt_tri(t, t, k, upper, 1));
    lua_settop(L, 1);
    return 1;
  }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_tri(r, t, k, upper, 0));
  if (t->grad_meta) LT_TRY(L, mt_ag_record_tri(r, t, k, upper));
  return 1;
}
static int s_tril(lua_State *L) { return tri(L, 0, 0); }
static int s_triu(lua_State *L) { return tri(L, 1, 0); }
static int s_tril_(lua_State *L) { return tri(L, 0, 1); }
static int s_triu_(lua_State *L) { return tri(L, 1, 1); }

/* ---- parametric elementwise ops ---- */

/* A clamp bound at i: nil (absent), a number, or a tensor. */
static int read_bound(lua_State *L, int i, mt_operand *b, const char *op, const char *which) {
  b->t = lt_test(L, i);
  b->value = 0;
  b->is_int = 0;
  if (b->t) return 1;
  if (lua_isnoneornil(L, i)) return 0;
  if (lua_type(L, i) != LUA_TNUMBER)
    luaL_error(L, "%s: %s must be a number or a tensor, got %s", op, which, luaL_typename(L, i));
  b->is_int = lua_isinteger(L, i);
  b->value = lua_tonumber(L, i);
  return 1;
}

/* Tensor bounds: maximum then minimum, with their broadcasting and
   promotion; shapes are checked first so that errors name clamp. */
static int clamp_tensors(lua_State *L, mt_tensor *x, const mt_operand *lo, const mt_operand *hi,
                         int has_lo, int has_hi, int inplace) {
  const char *op = inplace ? "clamp_" : "clamp";
  mt_tensor shape = {0};                       /* geometry only, no storage */
  shape.ndim = x->ndim;
  memcpy(shape.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  const mt_tensor *bounds[2] = {has_lo ? lo->t : NULL, has_hi ? hi->t : NULL};
  for (int i = 0; i < 2; i++) {
    if (!bounds[i]) continue;
    int64_t out[MT_MAX_DIMS];
    LT_TRY(L, mt_broadcast_shapes(op, shape.ndim, shape.shape, bounds[i]->ndim, bounds[i]->shape, &shape.ndim, out));
    memcpy(shape.shape, out, sizeof(int64_t) * (size_t)shape.ndim);
  }
  if (inplace && !mt_same_shape(&shape, x)) {
    char b1[128], b2[128];
    luaL_error(L, "clamp_: output of shape %s doesn't match the broadcast shape %s",
               mt_shape_str(x, b1, sizeof b1), mt_shape_str(&shape, b2, sizeof b2));
  }
  mt_operand cur = {x, 0, 0};
  if (has_lo) {
    mt_tensor *r = inplace ? x : lt_push(L);
    LT_TRY(L, mt_binary(r, &cur, lo, MT_OP_maximum, 1, inplace, lt_default_dtype));
    if (!inplace && (cur.t->grad_meta || (lo->t && lo->t->grad_meta)))
      LT_TRY(L, lo->t ? mt_ag_record_binary(r, &cur, lo, MT_OP_maximum, 1) : mt_ag_record_clamp(r, cur.t, &lo->value, NULL));
    cur.t = r;
  }
  if (has_hi) {
    mt_tensor *r = inplace ? x : lt_push(L);
    LT_TRY(L, mt_binary(r, &cur, hi, MT_OP_minimum, 1, inplace, lt_default_dtype));
    if (!inplace && (cur.t->grad_meta || (hi->t && hi->t->grad_meta)))
      LT_TRY(L, hi->t ? mt_ag_record_binary(r, &cur, hi, MT_OP_minimum, 1) : mt_ag_record_clamp(r, cur.t, NULL, &hi->value));
  }
  if (inplace) lua_settop(L, 1);
  return 1;
}

/* x:clamp(lo, hi), x:clamp({min=, max=}); which: 0 both, 1 min only
   (clamp_min), 2 max only (clamp_max) */
static int clamp(lua_State *L, int inplace, int which) {
  const char *op = inplace ? "clamp_" : "clamp";
  mt_tensor *x = lt_check(L, 1, op);
  if (which == 2) { lua_settop(L, 2); lua_pushnil(L); lua_insert(L, 2); }
  else if (lua_type(L, 2) == LUA_TTABLE && !lt_test(L, 2)) {
    lua_getfield(L, 2, "min");
    lua_getfield(L, 2, "max");
    lua_remove(L, 2);
  }
  lua_settop(L, which == 1 ? 2 : 3);
  mt_operand lo, hi;
  int has_lo = read_bound(L, 2, &lo, op, "min"), has_hi = read_bound(L, 3, &hi, op, "max");
  if (!has_lo && !has_hi) luaL_error(L, "%s: at least one of min and max must be given", op);
  if ((has_lo && lo.t) || (has_hi && hi.t)) return clamp_tensors(L, x, &lo, &hi, has_lo, has_hi, inplace);
  mt_operand ops[3] = {{x, 0, 0}, lo, hi};
  if (!has_lo) ops[1] = hi;
  int dtype = mt_result_type(ops, has_lo && has_hi ? 3 : 2, lt_default_dtype);
  const double *plo = has_lo ? &lo.value : NULL, *phi = has_hi ? &hi.value : NULL;
  if (dtype != x->dtype) {                     /* promoted, as in PyTorch */
    if (inplace)
      luaL_error(L, "clamp_: result type %s can't be cast to the desired output type %s",
                 mt_dtypes[dtype].name, mt_dtypes[x->dtype].name);
    mt_tensor *r = lt_push(L);
    LT_TRY(L, mt_to_dtype(r, x, dtype));
    LT_TRY(L, mt_clamp(r, r, plo, phi, 1));
    return 1;
  }
  mt_tensor *r = inplace ? x : lt_push(L);
  LT_TRY(L, mt_clamp(r, x, plo, phi, inplace));
  if (!inplace && x->grad_meta) LT_TRY(L, mt_ag_record_clamp(r, x, plo, phi));
  if (inplace) lua_settop(L, 1);
  return 1;
}
static int s_clamp(lua_State *L) { return clamp(L, 0, 0); }
static int s_clamp_(lua_State *L) { return clamp(L, 1, 0); }
static int s_clamp_min(lua_State *L) { return clamp(L, 0, 1); }
static int s_clamp_min_(lua_State *L) { return clamp(L, 1, 1); }
static int s_clamp_max(lua_State *L) { return clamp(L, 0, 2); }
static int s_clamp_max_(lua_State *L) { return clamp(L, 1, 2); }

/* A parameter given at position i or as opts[key]. */
static double param(lua_State *L, int i, const char *key, double def, const char *op) {
  if (lua_type(L, i) == LUA_TTABLE && !lt_test(L, i)) return lt_opt_number(L, i, key, def);
  if (lua_isnoneornil(L, i)) return def;
  if (lua_type(L, i) != LUA_TNUMBER) luaL_error(L, "%s: %s must be a number, got %s", op, key, luaL_typename(L, i));
  return lua_tonumber(L, i);
}

/* x:softplus(beta, threshold) or x:softplus({beta=, threshold=}) */
static int s_softplus(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "softplus");
  double beta = param(L, 2, "beta", 1, "softplus");
  double threshold = lua_istable(L, 2) ? lt_opt_number(L, 2, "threshold", 20) : param(L, 3, "threshold", 20, "softplus");
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_softplus(r, x, beta, threshold));
  if (x->grad_meta) LT_TRY(L, mt_ag_record_softplus(r, x, beta, threshold));
  return 1;
}

/* x:leaky_relu(slope) or x:leaky_relu({negative_slope=}) */
static int leaky_relu(lua_State *L, int inplace) {
  mt_tensor *x = lt_check(L, 1, inplace ? "leaky_relu_" : "leaky_relu");
  double slope = param(L, 2, "negative_slope", 0.01, "leaky_relu");
  mt_tensor *r = inplace ? x : lt_push(L);
  LT_TRY(L, mt_leaky_relu(r, x, slope, inplace));
  if (!inplace && x->grad_meta) LT_TRY(L, mt_ag_record_leaky_relu(r, x, slope));
  if (inplace) lua_settop(L, 1);
  return 1;
}
static int s_leaky_relu(lua_State *L) { return leaky_relu(L, 0); }
static int s_leaky_relu_(lua_State *L) { return leaky_relu(L, 1); }

/* x:addcmul(t1, t2, {value=v}), x:addcmul(t1, t2, v), Torch7's
   x:addcmul(v, t1, t2); the same for addcdiv */
static int addc(lua_State *L, int divide, int inplace) {
  const char *op = divide ? (inplace ? "addcdiv_" : "addcdiv") : (inplace ? "addcmul_" : "addcmul");
  mt_tensor *x = lt_check(L, 1, op);
  double value = 1;
  int first = 2;
  if (lua_type(L, 2) == LUA_TNUMBER) { value = lua_tonumber(L, 2); first = 3; }
  mt_tensor *t1 = lt_check(L, first, op), *t2 = lt_check(L, first + 1, op);
  if (first == 2) value = param(L, 4, "value", 1, op);
  mt_tensor *r = inplace ? x : lt_push(L);
  LT_TRY(L, mt_addc(r, x, t1, t2, value, divide, inplace, lt_default_dtype));
  if (!inplace && (x->grad_meta || t1->grad_meta || t2->grad_meta))
    LT_TRY(L, mt_ag_record_addc(r, x, t1, t2, value, divide));
  if (inplace) lua_settop(L, 1);
  return 1;
}
static int s_addcmul(lua_State *L) { return addc(L, 0, 0); }
static int s_addcmul_(lua_State *L) { return addc(L, 0, 1); }
static int s_addcdiv(lua_State *L) { return addc(L, 1, 0); }
static int s_addcdiv_(lua_State *L) { return addc(L, 1, 1); }

/* x:lerp(end, weight): weight a number or a tensor */
static int lerp(lua_State *L, int inplace) {
  const char *op = inplace ? "lerp_" : "lerp";
  mt_tensor *x = lt_check(L, 1, op), *end = lt_check(L, 2, op);
  mt_operand w = {lt_test(L, 3), 0, 0};
  if (!w.t) {
    if (lua_type(L, 3) != LUA_TNUMBER) luaL_error(L, "%s: weight must be a number or a tensor, got %s", op, luaL_typename(L, 3));
    w.value = lua_tonumber(L, 3);
  }
  mt_tensor *r = inplace ? x : lt_push(L);
  LT_TRY(L, mt_lerp(r, x, end, &w, inplace));
  if (!inplace && (x->grad_meta || end->grad_meta || (w.t && w.t->grad_meta)))
    LT_TRY(L, mt_ag_record_lerp(r, x, end, &w));
  if (inplace) lua_settop(L, 1);
  return 1;
}
static int s_lerp(lua_State *L) { return lerp(L, 0); }
static int s_lerp_(lua_State *L) { return lerp(L, 1); }

/* Both x:name() and torch.name(x) */
#define LT_SHAPE_COMMON                                                         \
  {"split", s_split}, {"chunk", s_chunk}, {"unbind", s_unbind},                 \
  {"flatten", s_flatten},                                                       \
  {"unflatten", s_unflatten}, {"movedim", s_movedim}, {"moveaxis", s_movedim},  \
  {"repeatTensor", s_repeat}, {"flip", s_flip}, {"fliplr", s_fliplr},           \
  {"flipud", s_flipud}, {"roll", s_roll}, {"tril", s_tril}, {"triu", s_triu},   \
  {"clamp", s_clamp}, {"clip", s_clamp}, {"clamp_min", s_clamp_min},            \
  {"clamp_max", s_clamp_max}, {"softplus", s_softplus},                         \
  {"leaky_relu", s_leaky_relu}, {"leaky_relu_", s_leaky_relu_},                 \
  {"addcmul", s_addcmul}, {"addcdiv", s_addcdiv}, {"lerp", s_lerp},

static const luaL_Reg shape_methods[] = {
  LT_SHAPE_COMMON
  {"repeat", s_repeat}, {"tril_", s_tril_}, {"triu_", s_triu_},
  {"clamp_", s_clamp_}, {"clip_", s_clamp_}, {"clamp_min_", s_clamp_min_},
  {"clamp_max_", s_clamp_max_}, {"addcmul_", s_addcmul_}, {"addcdiv_", s_addcdiv_},
  {"lerp_", s_lerp_},
  {NULL, NULL}};

static const luaL_Reg shape_functions[] = {
  LT_SHAPE_COMMON
  {"cat", s_cat}, {"concat", s_cat}, {"concatenate", s_cat}, {"stack", s_stack},
  {NULL, NULL}};

void lt_open_shape(lua_State *L) {
  lt_setfuncs_guarded(L, shape_methods, shape_functions);
  /* views, and copies through mt_copy */
  static const char *const any_device[] = {"cat", "concat", "concatenate", "stack", NULL};
  static const char *const any_device_both[] = {"split", "chunk", "unbind", "flatten", "unflatten", "movedim",
                                                "moveaxis", "repeatTensor", NULL};
  static const char *const any_device_methods[] = {"repeat", NULL};
  lt_mark_any_device(L, -2, any_device);
  lt_mark_any_device(L, -2, any_device_both);
  lt_mark_any_device(L, -3, any_device_both);
  lt_mark_any_device(L, -3, any_device_methods);
}
