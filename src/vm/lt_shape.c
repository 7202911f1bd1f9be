/* lt_shape.c: Lua bindings of the shape ops (cat, stack, split, chunk,
   unbind), of the registry's views and rearrangements (view, narrow,
   permute, flip, roll, tril/triu, repeat, ...) and of its elementwise ops
   with parameters (clamp, softplus, leaky_relu, addcmul/addcdiv, lerp). */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lt.h"
#include "../ops/dispatch.h"
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

/* The registry's joins (cat, stack): torch.op({a, b, ...}, dim) or
   Torch7's torch.op(a, b, ..., dim); dim defaults to 1 as in PyTorch and
   may come as {dim = d}. */
static int join_call(lua_State *L) {
  char op_name[64];
  int inplace;
  mt_op op = (mt_op)lt_bound_op(L, op_name, sizeof op_name, &inplace);
  const char *name = op_name;
  const mt_tensor *small[LT_SHAPE_SMALL], **ts;
  int n, dim_at;
  if (lua_type(L, 1) == LUA_TTABLE && !lt_test(L, 1)) {
    n = (int)lt_len(L, 1, LT_MAX_TABLE_LEN, "tensors", name);
    dim_at = 2;
    lua_settop(L, dim_at);                     /* scratch space goes above */
    ts = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *ts);
    for (int i = 0; i < n; i++) {
      lua_geti(L, 1, i + 1);
      ts[i] = lt_test(L, -1);
      if (!ts[i]) luaL_error(L, "%s: entry %d of the list must be a tensor, got %s", name, i + 1, luaL_typename(L, -1));
      lua_pop(L, 1);                           /* the list keeps it alive */
    }
  } else {
    n = 0;
    while (lt_test(L, n + 1)) n++;
    if (n == 0) luaL_error(L, "%s: expects a list of tensors, got %s", name, luaL_typename(L, 1));
    dim_at = n + 1;
    lua_settop(L, dim_at);
    ts = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *ts);
    for (int i = 0; i < n; i++) ts[i] = lt_test(L, i + 1);
  }
  int dim;
  if (lua_type(L, dim_at) == LUA_TTABLE && !lt_test(L, dim_at)) {
    lua_getfield(L, dim_at, "dim");
    dim = dim_arg(L, -1, 0, name);
    lua_pop(L, 1);
  } else {
    dim = dim_arg(L, dim_at, 0, name);
  }
  if (mt_call_join(lt_push(L), ts, n, op, dim)) lt_error_as_called(L, name, op, 0);
  return 1;
}

LT_OUT_BINDING(join_call)

/* torch.op only: Torch7's x:cat(...) writes its result into x (the
   result-first forms) */
static void set_join(lua_State *L, const char *name, size_t len, int op) {
  char key[64];
  if (len + 1 > sizeof key) luaL_error(L, "registry name too long: %s", name);
  memcpy(key, name, len);
  key[len] = 0;
  lt_push_op_binding(L, join_call_out, (lua_Integer)op * 2, key, 0);
  lua_setfield(L, -3, key);
}

/* ---- split and chunk: Lua tables of views ---- */

/* the parts along dim of sizes[0..n), each the registry's narrow (or, for
   unbind (select 1), its select) through the dispatcher, in a Lua array */
static int push_parts(lua_State *L, mt_tensor *t, int dim, const int64_t *sizes, int64_t n, int select) {
  LT_TRY(L, mt_split_check(t, dim, sizes, n));
  lua_createtable(L, n < INT_MAX ? (int)n : 0, 0);
  mt_view_args a;
  a.n = a.m = 0;
  a.i[0] = dim;
  a.i[1] = 0;
  for (int64_t i = 0; i < n; i++) {
    a.i[2] = sizes[i];
    LT_TRY(L, mt_call_view(lt_push(L), t, select ? MT_OP_select : MT_OP_narrow, &a, 0));
    lua_rawseti(L, -2, i + 1);
    a.i[1] += sizes[i];
  }
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
  return push_parts(L, t, dim, sizes, n, 0);
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
  return push_parts(L, t, dim, sizes, n, 0);
}

/* x:unbind(dim): a Lua array of the slices along dim (default 1), each a
   view without that dim (x:select(dim, i)) */
static int s_unbind(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "unbind");
  if (t->ndim == 0) luaL_error(L, "unbind: a 0-dim tensor has no dim to unbind");
  int dim = lua_isnoneornil(L, 2) ? 0 : lt_check_dim(L, 2, t->ndim, "unbind");
  lua_settop(L, 2);
  int64_t n = t->shape[dim], small[LT_SHAPE_SMALL];
  int64_t *ones = scratch(L, small, LT_SHAPE_SMALL, (size_t)n, sizeof *ones);
  for (int64_t i = 0; i < n; i++) ones[i] = 1;
  return push_parts(L, t, dim, ones, n, 1);
}

/* ---- the registry's views and rearrangements ----
   One binding for all of them (view, narrow, permute, flip, tril, ...),
   driven by the entry's signature (src/ops/registry.h): one name:type word
   per argument after the tensor. */

/* A signature, parsed once: each word's name, type, and after them ?
   (optional) or =default. */
enum { VW_LIKE, VW_SHAPE, VW_DIMS, VW_DIMLIST, VW_INTS, VW_DIM, VW_NEWDIM, VW_POS, VW_OFFSET, VW_INT };
typedef struct { char name[24]; unsigned char type, optional, has_default; lua_Integer def; } view_word;
typedef struct { int nwords, has_defaults; view_word w[4]; } view_sig;
static view_sig view_sigs[MT_OP_END_VIEW - MT_OP_END_MASK];

static void parse_word(const char *w, size_t n, view_word *vw) {
  static const char *const types[] = {"like", "shape", "dims", "dimlist", "ints", "dim", "newdim", "pos",
                                      "offset", "int"};
  const char *colon = memchr(w, ':', n), *end = w + n, *mark = colon;
  while (mark < end && *mark != '?' && *mark != '=') mark++;
  size_t len = (size_t)(colon - w) < sizeof vw->name - 1 ? (size_t)(colon - w) : sizeof vw->name - 1;
  memcpy(vw->name, w, len);
  vw->name[len] = 0;
  vw->type = VW_INT;
  for (unsigned char k = 0; k < sizeof types / sizeof *types; k++)
    if (strlen(types[k]) == (size_t)(mark - colon - 1) && !memcmp(types[k], colon + 1, (size_t)(mark - colon - 1)))
      vw->type = k;
  vw->optional = mark < end && *mark == '?';
  vw->has_default = mark < end && *mark == '=';
  vw->def = vw->has_default ? strtoll(mark + 1, NULL, 10) : 0;
}

/* every view signature, parsed by the first state that binds them (the
   registry is constant, so a second parse writes the same values) */
static void parse_view_sigs(void) {
  static int done;
  if (__atomic_load_n(&done, __ATOMIC_ACQUIRE)) return;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (!done) {
    for (int op = MT_OP_END_MASK; op < MT_OP_END_VIEW; op++) {
      view_sig *vs = &view_sigs[op - MT_OP_END_MASK];
      const char *q = mt_op_infos[op].signature, *w;
      size_t n;
      while ((w = lt_next_word(&q, &n)) && vs->nwords < 4) {
        parse_word(w, n, &vs->w[vs->nwords]);
        vs->has_defaults |= vs->w[vs->nwords++].has_default;
      }
    }
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lock);
}

/* the list to fill next: v, then w */
static int64_t *next_list(mt_view_args *a, int **count) {
  if (*count == NULL) { *count = &a->n; return a->v; }
  *count = &a->m;
  return a->w;
}

/* dims at i (one, or a table) into list; returns how many */
static int read_dim_list(lua_State *L, int i, int ndim, int64_t *list, const char *op) {
  int dims[MT_MAX_DIMS], n = read_dims(L, i, ndim, dims, op);
  for (int k = 0; k < n; k++) list[k] = dims[k];
  return n;
}

static int view_call(lua_State *L) {
  char name[64];
  int inplace;
  mt_op op = (mt_op)lt_bound_op(L, name, sizeof name, &inplace);
  mt_tensor *x = lt_check(L, 1, name);
  const view_sig *vs = &view_sigs[op - MT_OP_END_MASK];
  int opts = vs->has_defaults ? lt_opts_index(L) : 0;
  int last = opts ? opts - 1 : lua_gettop(L), arg = 2, ni = 0, *count = NULL;
  mt_view_args a;
  a.n = a.m = 0;
  a.i[0] = a.i[1] = a.i[2] = 0;
  for (int k = 0; k < vs->nwords; k++) {
    const view_word *vw = &vs->w[k];
    int at = arg <= last && !lua_isnil(L, arg) ? arg : 0;
    if (!at && opts && lua_getfield(L, opts, vw->name) != LUA_TNIL) at = lua_gettop(L);   /* stays on the stack */
    int64_t v;
    switch (vw->type) {
    case VW_LIKE: case VW_SHAPE: case VW_DIMS: {              /* the rest of the arguments */
      int64_t *list = next_list(&a, &count);
      int top = at == arg ? last : at;
      mt_tensor *like = vw->type == VW_LIKE && at ? lt_test(L, at) : NULL;
      if (!at) luaL_error(L, "%s: expects %s", name, vw->name);
      if (like) {
        *count = like->ndim;
        memcpy(list, like->shape, sizeof(int64_t) * (size_t)like->ndim);
      } else if (vw->type != VW_DIMS) {
        *count = lt_read_shape(L, at, top, list, name);
      } else if (lua_type(L, at) == LUA_TTABLE) {
        *count = read_dim_list(L, at, x->ndim, list, name);
      } else {
        if (top - at + 1 > MT_MAX_DIMS) luaL_error(L, "%s: %d dims given, at most %d allowed", name, top - at + 1, MT_MAX_DIMS);
        *count = 0;
        for (int j = at; j <= top; j++) list[(*count)++] = lt_check_dim(L, j, x->ndim, name);
      }
      arg = last + 1;
      continue;
    }
    case VW_DIMLIST: case VW_INTS: {                          /* one argument: a number or a table */
      int64_t *list = next_list(&a, &count);
      *count = 0;
      if (at) *count = vw->type == VW_DIMLIST ? read_dim_list(L, at, x->ndim, list, name) : lt_read_shape(L, at, at, list, name);
      else if (!vw->optional) luaL_error(L, "%s: expects %s", name, vw->name);
      arg++;
      continue;
    }
    case VW_DIM: case VW_NEWDIM: {
      int nd = x->ndim + (vw->type == VW_NEWDIM);
      if (at) v = lt_check_dim(L, at, nd, name);
      else if (vw->optional) v = MT_MAX_DIMS;
      else if (vw->has_default) v = vw->def > 0 ? vw->def - 1 : vw->def + (nd > 0 ? nd : 1);
      else return luaL_error(L, "%s: expects %s", name, vw->name);
      break;
    }
    case VW_POS:
      if (!at) return luaL_error(L, "%s: expects %s", name, vw->name);
      v = luaL_checkinteger(L, at);
      if (v == 0) luaL_error(L, "%s: %s is 1-based, got 0", name, vw->name);
      if (v > 0) v--;
      break;
    case VW_OFFSET:
      v = x->offset;
      if (at && __builtin_sub_overflow(luaL_checkinteger(L, at), 1, &v))
        luaL_error(L, "%s: storage offset %I is out of range", name, luaL_checkinteger(L, at));
      break;
    default:                                                  /* an integer */
      if (!at && !vw->has_default) return luaL_error(L, "%s: expects %s", name, vw->name);
      v = at ? luaL_checkinteger(L, at) : vw->def;
      break;
    }
    a.i[ni++] = v;
    arg++;
  }
  if (arg <= last) luaL_error(L, "%s: unexpected argument %d (%s)", name, arg, luaL_typename(L, arg));
  if (mt_call_view(inplace ? x : lt_push(L), x, op, &a, inplace)) lt_error_as_called(L, name, op, inplace);
  if (inplace) lua_pushvalue(L, 1);
  return 1;
}

LT_OUT_BINDING(view_call)

static void set_view(lua_State *L, const char *name, size_t len, int op) {
  if (op == MT_OP_nonzero) return;               /* its own bindings: {as_tuple=}, and torch.where(cond) */
  parse_view_sigs();
  lt_bind_op(L, name, len, 0, 0, view_call_out, (lua_Integer)op * 2);
  if (mt_op_infos[op].inplace) lt_bind_op(L, name, len, 1, 1, view_call_out, (lua_Integer)op * 2 + 1);
}

/* ---- the registry's elementwise ops with parameters ----
   One binding for all of them (clamp, lerp, addcmul, softplus, ...),
   driven by the entry's signature (src/ops/registry.h): after the tensor,
   a plain word is a tensor, a word ending in # a tensor or a number, and
   name=default a number; a trailing {name=} table gives any of them by
   name, and Torch7's x:addcmul(value, t1, t2) a leading number to the
   first parameter. clamp with one bound is clamp_min or clamp_max, as
   PyTorch records it. */

/* operand word w (length n) at stack index i: 1 read, 0 absent (a word
   ending in #; a plain word must be a tensor) */
mt_operand *lt_fill_operand(lua_State *L, int i, const char *op, mt_operand *o) {
  o->t = NULL;
  o->value = 0;
  o->is_int = 0;
  if (lua_isboolean(L, i)) {
    o->is_int = 2;
    o->value = lua_toboolean(L, i);
  } else if ((o->t = lt_test_any(L, i)) == NULL) {
    if (lua_type(L, i) != LUA_TNUMBER)
      luaL_error(L, "%s: the value must be a number, a boolean or a tensor, got %s", op, luaL_typename(L, i));
    o->is_int = lua_isinteger(L, i);
    o->value = lua_tonumber(L, i);
    lua_Integer v = o->is_int ? lua_tointeger(L, i) : 0;
    if (v > (INT64_C(1) << 53) || v < -(INT64_C(1) << 53)) {   /* beyond a double's integers: exact */
      mt_tensor *t = lt_push(L);
      LT_TRY(L, mt_tensor_init(t, MT_INT64, 0, NULL));
      *(int64_t *)mt_data(t) = (int64_t)v;
      o->t = t;
    }
  }
  return o;
}

/* the first len characters of w, in buf */
static const char *word_name(char *buf, size_t size, const char *w, int len) {
  snprintf(buf, size, "%.*s", len, w);
  return buf;
}

static int read_operand(lua_State *L, int i, const char *op, const char *w, size_t n, mt_operand *o) {
  const int any = w[n - 1] == '#', len = (int)(n - (size_t)any);   /* the word's name: w[0 .. len) */
  o->t = lt_test(L, i);
  o->value = 0;
  o->is_int = 0;
  if (o->t) return 1;
  char name[32];                                  /* for errors (lua_pushfstring has no %.*s) */
  if (!any) luaL_error(L, "%s: argument %d (%s) must be a tensor, got %s", op, i, word_name(name, sizeof name, w, len),
                       luaL_typename(L, i));
  if (lua_isnoneornil(L, i)) return 0;
  if (lua_isboolean(L, i)) {                      /* a boolean: 0 or 1, of its own kind */
    o->is_int = 2;
    o->value = lua_toboolean(L, i);
    return 1;
  }
  if (lua_type(L, i) != LUA_TNUMBER)
    luaL_error(L, "%s: %s must be a number or a tensor, got %s", op, word_name(name, sizeof name, w, len),
               luaL_typename(L, i));
  o->is_int = lua_isinteger(L, i);
  o->value = lua_tonumber(L, i);
  return 1;
}

static int param_call(lua_State *L) {
  char name[64];
  int inplace;
  mt_op op = (mt_op)lt_bound_op(L, name, sizeof name, &inplace);
  mt_tensor *x = lt_check(L, 1, name);
  int opts = lt_opts_index(L), last = opts ? opts - 1 : lua_gettop(L), arg = 2;
  const char *sig = mt_op_infos[op].signature, *w;
  size_t n;
  mt_operand in[3] = {{x, 0, 0}, {0}, {0}};
  int present[3] = {1, 0, 0}, nin = 1, np = 0;
  double p[2] = {0, 0};
  /* Torch7's leading value: x:addcmul(2, t1, t2) */
  const char *first = sig;
  int lead = 0;
  if ((w = lt_next_word(&first, &n)) && w[n - 1] != '#' && !memchr(w, '=', n) && lua_type(L, 2) == LUA_TNUMBER &&
      strchr(sig, '='))
    lead = 2, arg = 3;
  for (const char *q = sig; (w = lt_next_word(&q, &n));) {
    const char *eq = memchr(w, '=', n);
    char key[32];                                  /* the word's name: read only with an options table */
    const size_t klen = eq ? (size_t)(eq - w) : n - (w[n - 1] == '#');
    if (opts) {
      const size_t k = klen < sizeof key - 1 ? klen : sizeof key - 1;
      memcpy(key, w, k);
      key[k] = 0;
    }
    if (!eq) {                                     /* an operand */
      int at = arg <= last || w[n - 1] != '#' ? arg : 0;   /* an absent optional one may be in opts */
      present[nin] = at && read_operand(L, at, name, w, n, &in[nin]);
      if (!present[nin] && opts) {
        lua_getfield(L, opts, key);
        present[nin] = read_operand(L, lua_gettop(L), name, w, n, &in[nin]);
        lua_pop(L, 1);                           /* a tensor stays alive in opts */
      }
      nin++;
      arg++;
      continue;
    }
    double def = strtod(eq + 1, NULL);             /* a number parameter */
    if (lead && np == 0) p[np] = lua_tonumber(L, lead);
    else if (arg <= last && !lua_isnil(L, arg)) {
      if (lua_type(L, arg) != LUA_TNUMBER)
        luaL_error(L, "%s: %s must be a number, got %s", name, word_name(key, sizeof key, w, (int)klen),
                   luaL_typename(L, arg));
      p[np] = lua_tonumber(L, arg);
    } else p[np] = def;
    if (!(lead && np == 0)) arg++;
    if (opts) p[np] = lt_opt_number(L, opts, key, p[np]);
    np++;
  }
  if (arg <= last) luaL_error(L, "%s: unexpected argument %d (%s)", name, arg, luaL_typename(L, arg));
  if (op == MT_OP_clamp && !(present[1] && present[2])) {   /* one bound */
    if (!present[1] && !present[2]) luaL_error(L, "%s: at least one of min and max must be given", name);
    if (!present[1]) in[1] = in[2];
    op = present[1] ? MT_OP_clamp_min : MT_OP_clamp_max;
    present[1] = 1;
    nin = 2;
  }
  for (int i = 1; i < nin; i++)
    if (!present[i]) {
      const char *q = sig;
      char word[32];
      for (int k = 1; k <= i; k++) w = lt_next_word(&q, &n);
      snprintf(word, sizeof word, "%.*s", (int)(n - (w[n - 1] == '#')), w);
      luaL_error(L, "%s: %s must be given", name, word);
    }
  if (op == MT_OP_fill && present[1] && !in[1].t && in[1].is_int == 1 && lua_isinteger(L, 2))
    lt_fill_operand(L, 2, name, &in[1]);          /* fill writes the value itself: a large integer stays exact */
  if (mt_call_param(inplace ? x : lt_push(L), in, op, p, inplace, lt_default_dtype))
    return lt_error_as_called(L, name, op, inplace);
  if (inplace) lua_settop(L, 1);
  return 1;
}

/* name, and name_ where the op has it (a method only, as PyTorch's), under a
   registry name of an op with parameters; stack: methods torch mt */
LT_OUT_BINDING(param_call)

static void set_param(lua_State *L, const char *name, size_t len, int op) {
  if (op == MT_OP_where) return;                 /* its own bindings: the condition comes first or second */
  if (mt_op_infos[op].inplace == 2) {            /* in place only: x:fill_(v), and Torch7's x:fill(v) */
    for (int underscore = 0; underscore <= 1; underscore++)
      lt_bind_op(L, name, len, underscore, 1, param_call_out, (lua_Integer)op * 2 + 1);
    return;
  }
  for (int inplace = 0; inplace <= mt_op_infos[op].inplace; inplace++)
    lt_bind_op(L, name, len, inplace, inplace, param_call_out, (lua_Integer)op * 2 + inplace);
}

/* Both x:name() and torch.name(x) */
#define LT_SHAPE_COMMON                                                         \
  {"split", s_split}, {"chunk", s_chunk}, {"unbind", s_unbind},

static const luaL_Reg shape_methods[] = {
  LT_SHAPE_COMMON
  {NULL, NULL}};

static const luaL_Reg shape_functions[] = {
  LT_SHAPE_COMMON
  {NULL, NULL}};

void lt_open_shape(lua_State *L) {
  lt_setfuncs_guarded(L, shape_methods, shape_functions);
  /* views, and copies through mt_copy */
  static const char *const any_device_both[] = {"split", "chunk", "unbind", NULL};
  lt_mark_any_device(L, -2, any_device_both);
  lt_mark_any_device(L, -3, any_device_both);
  lt_bind_registry(L, MT_OP_END_ADD_PRODUCT, MT_OP_END_PARAM, set_param);
  lt_bind_registry(L, MT_OP_END_MASK, MT_OP_END_VIEW, set_view);
  lt_bind_registry(L, MT_OP_END_VIEW, MT_OP_END_JOIN, set_join);
}
