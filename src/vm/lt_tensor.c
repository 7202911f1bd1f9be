/* lt_tensor.c: the tensor userdata -- type checks, metatable, fields,
   creation, geometry, views, conversions and Torch7-style indexing. */
#include <stdlib.h>
#include <string.h>
#include "lt.h"
#include "../ops/dispatch.h"
#include "../tensor/mt_alloc.h"
#include "../tensor/mt_parallel.h"
#include "../tensor/mt_sgemm.h"
#include "../tensor/mt_isa.h"
#include "../tensor/mt_conv.h"
#include "../autograd/ag.h"
#include "../autograd/ag_shape.h"

int lt_default_dtype = MT_FLOAT32;

/* ---- helpers ---- */
_Thread_local lua_State *lt_cur_L;

mt_tensor *lt_test_any(lua_State *L, int i) {
  lt_cur_L = L;
  mt_tensor *t = lua_touserdata(L, i);
  if (!t || !lua_getmetatable(L, i)) return NULL;
  int ok = lua_rawequal(L, -1, LT_MT);
  lua_pop(L, 1);
  return ok ? t : NULL;
}

mt_tensor *lt_check_any(lua_State *L, int i, const char *op) {
  mt_tensor *t = lt_test_any(L, i);
  if (!t) luaL_error(L, "%s: argument %d must be a tensor, got %s", op, i, luaL_typename(L, i));
  return t;
}

/* ---- devices ----
   A binding that takes tensors on every device carries this key as its
   upvalue LT_ANY_DEVICE_UPVALUE; every other binding runs CPU kernels and
   refuses a tensor off the CPU, whose memory those kernels cannot read. */
static const char any_device_key = 0;

int lt_any_device_binding(lua_State *L) {
  return lua_touserdata(L, lua_upvalueindex(LT_ANY_DEVICE_UPVALUE)) == (void *)&any_device_key;
}
void lt_push_any_device_key(lua_State *L) { lua_pushlightuserdata(L, (void *)&any_device_key); }

static __attribute__((noinline)) void off_cpu(lua_State *L, int i, const mt_tensor *t) {
  if (lt_any_device_binding(L)) return;
  lua_Debug ar;
  const char *name = NULL;
  if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar)) name = ar.name;
  char dev[32];
  luaL_error(L, "%s: argument %d is a tensor on %s, but %s has no kernel for that device yet (move the tensor "
             "with :cpu())", name ? name : "op", i, mt_tensor_device_str(t, dev, sizeof dev),
             name ? name : "this op");
}

mt_tensor *lt_test(lua_State *L, int i) {
  mt_tensor *t = lt_test_any(L, i);
  if (t && __builtin_expect(t->storage && t->storage->device != MT_CPU, 0)) off_cpu(L, i, t);
  return t;
}

mt_tensor *lt_check(lua_State *L, int i, const char *op) {
  mt_tensor *t = lt_check_any(L, i, op);
  if (__builtin_expect(t->storage && t->storage->device != MT_CPU, 0)) off_cpu(L, i, t);
  return t;
}

/* "cpu", "cuda", "cuda:N" (also torch.device's "cuda:N" strings): 1 and
   the device, or 0 for a name that is no device. A GPU device needs its
   backend loaded (torch.cuda.is_available()). */
int lt_parse_device(lua_State *L, const char *name, const char *op, int *device, int *index) {
  if (!strcmp(name, "cpu")) { *device = MT_CPU; *index = 0; return 1; }
  if (strncmp(name, "cuda", 4) || (name[4] && name[4] != ':')) return 0;
  int idx = 0;
  if (name[4] == ':') {
    char *end;
    long v = strtol(name + 5, &end, 10);
    if (end == name + 5 || *end || v < 0 || v > 63) luaL_error(L, "%s: invalid device '%s'", op, name);
    idx = (int)v;
  }
  if (!mt_device_backend_of(MT_CUDA)) {        /* the backend loads on first use (lib/torch/device.lua) */
    if (lua_getfield(L, LUA_REGISTRYINDEX, "torch.cuda.load") == LUA_TFUNCTION) lua_call(L, 0, 0);
    else lua_pop(L, 1);
  }
  if (!mt_device_backend_of(MT_CUDA)) {
    lua_getfield(L, LUA_REGISTRYINDEX, "torch.cuda.unavailable");   /* the reason, from lib/torch/device.lua */
    const char *why = lua_tostring(L, -1);
    luaL_error(L, "%s: no CUDA device for '%s': %s", op, name, why ? why : "the CUDA backend is not loaded");
  }
  *device = MT_CUDA;
  *index = idx;
  return 1;
}

/* the device name or, for a tensor, its device, at i */
static int check_device(lua_State *L, int i, const char *op, int *device, int *index) {
  mt_tensor *other = lt_test_any(L, i);
  if (other) { *device = mt_device_of(other); *index = mt_device_index_of(other); return 1; }
  const char *name = luaL_checkstring(L, i);
  if (!lt_parse_device(L, name, op, device, index)) luaL_error(L, "%s: unknown device '%s'", op, name);
  return 1;
}

/* x on (device, index) in dtype: x itself when it is there already (and
   copy is 0), else a copy recorded for autograd */
static int to_device(lua_State *L, int i, int dtype, int device, int index, const char *op, int copy) {
  mt_tensor *t = lt_check_any(L, i, op);
  if (!copy && t->dtype == dtype && mt_device_of(t) == device && mt_device_index_of(t) == index) {
    lua_pushvalue(L, i);
    return 1;
  }
  LT_TRY(L, mt_call_to(lt_push(L), t, dtype, device, index, op));
  return 1;
}

lua_State *lt_last_L;

/* What was live after the last full collection. */
static int64_t live_after_full;

/* Pays the allocator's debt to Lua's collector. A step alone is not enough
   under the generational collector (th's): tensors still referenced when a
   young collection runs (an op's operands, a step's activations) become
   old, and old objects go only at a major collection, which Lua's own
   accounting -- blind to tensor memory -- seldom starts. So once the bytes
   live now exceed what was live after the last full collection by as much
   again (and by LT_GC_FULL_MIN), a full collection runs: memory stays
   within about twice the live size, and the cost, proportional to the Lua
   heap, is paid once per that much growth. Growth, not bytes allocated:
   the temporaries that C frees at once (a backward's products, an op's
   scratch) leave nothing for the collector, and counting them ran a full
   collection every ~100 steps of a small training loop (2-3 ms each). */
static void pay_gc_debt(lua_State *L) {
  int64_t debt = mt_alloc_take_debt();
  mt_alloc_stats st;
  mt_alloc_get_stats(&st);
  if (st.allocated - live_after_full > (live_after_full > LT_GC_FULL_MIN ? live_after_full : LT_GC_FULL_MIN)) {
    lua_gc(L, LUA_GCCOLLECT);
    mt_alloc_get_stats(&st);
    live_after_full = st.allocated;
  } else {
    lua_gc(L, LUA_GCSTEP, (int)(debt >> 10));
  }
}

mt_tensor *lt_push(lua_State *L) {
  lt_last_L = L;
  if (mt_alloc_debt() > LT_GC_DEBT_STEP) pay_gc_debt(L);
  mt_tensor *t = lua_newuserdatauv(L, sizeof(mt_tensor), 1);
  t->storage = NULL;
  t->grad_meta = NULL;
  t->ndim = 0;
  lua_pushvalue(L, LT_MT);
  lua_setmetatable(L, -2);
  return t;
}

int lt_error(lua_State *L) { return luaL_error(L, "%s", mt_error()); }

/* lib/torch is known by the source prefix of its files, which
   torch._ag_library records in the registry when torch loads. */
int lt_user_frame(lua_State *L, lua_Debug *frame) {
  lua_getfield(L, LUA_REGISTRYINDEX, "torch.autograd.library");
  const char *lib = lua_tostring(L, -1);
  size_t lib_len = lib ? strlen(lib) : 0;
  lua_Debug ar;
  int found = 0;
  for (int level = 0; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
    int in_lib = lib && !strncmp(ar.source, lib, lib_len);
    if (!found || !in_lib) { *frame = ar; found = 1; }
    if (!in_lib) break;
  }
  lua_pop(L, 1);
  return found;
}

int lt_check_dim(lua_State *L, int i, int ndim, const char *op) {
  lua_Integer d = luaL_checkinteger(L, i);
  int n = ndim > 0 ? ndim : 1;
  if (d == 0 || d < -n || d > n)
    luaL_error(L, "%s: dimension %I out of range (expected 1..%d, or -%d..-1 from the end%s)", op, d, n, n,
               d == 0 ? "; dims are 1-based" : "");
  return d > 0 ? (int)d - 1 : (int)d + n;
}

const char *lt_check_path(lua_State *L, int i, const char *op) {
  size_t len;
  const char *path = luaL_checklstring(L, i, &len);
  if (strlen(path) != len) luaL_error(L, "%s: the file name \"%s...\" holds a NUL byte", op, path);
  return path;
}

int64_t lt_len(lua_State *L, int i, int64_t max, const char *what, const char *op) {
  lua_Integer n = luaL_len(L, i);
  if (n < 0 || n > max) luaL_error(L, "%s: a table of %s must have 0 to %I, got a length of %I", op, what, (lua_Integer)max, n);
  return n;
}

int lt_read_shape(lua_State *L, int from, int to, int64_t *shape, const char *op) {
  lt_storage *st;
  if (from <= to && (st = lt_test_storage(L, from))) {           /* a LongStorage, as in Torch7 */
    if (mt_dtype_is_float(st->dtype) || st->dtype == MT_BOOL)
      luaL_error(L, "%s: sizes must be a LongStorage, got a %sStorage", op, mt_dtypes[st->dtype].torch7);
    if (st->size > MT_MAX_DIMS) luaL_error(L, "%s: too many dims (%d)", op, (int)st->size);
    const char *p = (const char *)st->s->data + (size_t)st->offset * (size_t)mt_dtypes[st->dtype].size;
    for (int64_t i = 0; i < st->size; i++) shape[i] = mt_get_i64(st->dtype, p + (size_t)i * (size_t)mt_dtypes[st->dtype].size);
    return (int)st->size;
  }
  if (from <= to && lua_type(L, from) == LUA_TTABLE && !lt_test(L, from)) {
    int n = (int)lt_len(L, from, MT_MAX_DIMS, "dims", op);
    for (int i = 0; i < n; i++) {
      lua_geti(L, from, i + 1);
      int ok;
      lua_Integer v = lua_tointegerx(L, -1, &ok);
      if (!ok) luaL_error(L, "%s: size entry %d is not an integer", op, i + 1);
      shape[i] = v;
      lua_pop(L, 1);
    }
    return n;
  }
  int n = 0;
  for (int i = from; i <= to; i++) {
    if (n >= MT_MAX_DIMS) luaL_error(L, "%s: too many dims", op);
    int ok;
    lua_Integer v = lua_tointegerx(L, i, &ok);
    if (!ok) luaL_error(L, "%s: size argument %d must be an integer, got %s", op, i, luaL_typename(L, i));
    shape[n++] = v;
  }
  return n;
}

void lt_push_size(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) { lua_pushinteger(L, v[i]); lua_rawseti(L, -2, i + 1); }
  luaL_setmetatable(L, "torch.Size");
}

int lt_is_size(lua_State *L, int i) {
  if (lua_type(L, i) != LUA_TTABLE || !lua_getmetatable(L, i)) return 0;
  luaL_getmetatable(L, "torch.Size");
  int r = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return r;
}

int lt_opts_index(lua_State *L) {
  int top = lua_gettop(L);
  if (top == 0 || lua_type(L, top) != LUA_TTABLE || lt_is_size(L, top)) return 0;
  int is_array = lua_geti(L, top, 1) != LUA_TNIL;
  lua_pop(L, 1);
  return is_array ? 0 : top;
}

int lt_check_dtype_name(lua_State *L, int i, const char *op) {
  const char *name = luaL_checkstring(L, i);
  int d = mt_dtype_from_name(name);
  if (d < 0) luaL_error(L, "%s: unknown dtype '%s'", op, name);
  return d;
}

/* 1 for the CPU, the one device there is; raises for a CUDA device (no GPU
   backend is built); 0 for a name that is no device. */
static int is_cpu_device(lua_State *L, const char *name, const char *op) {
  int device, index;
  if (!lt_parse_device(L, name, op, &device, &index)) return 0;
  if (device != MT_CPU)
    luaL_error(L, "%s: creates on the CPU; make the tensor there and move it with :to('%s')", op, name);
  return 1;
}

int lt_opt_dtype(lua_State *L, int opts, int def, const char *op) {
  if (!opts) return def;
  int r = def;
  if (lua_getfield(L, opts, "dtype") != LUA_TNIL) r = lt_check_dtype_name(L, -1, op);
  if (lua_getfield(L, opts, "device") != LUA_TNIL) {
    const char *dev = lua_tostring(L, -1);
    if (!dev || !is_cpu_device(L, dev, op)) luaL_error(L, "%s: unknown device '%s'", op, luaL_tolstring(L, -1, NULL));
  }
  lua_pop(L, 2);
  return r;
}

int lt_opt_bool(lua_State *L, int opts, const char *key, int def) {
  if (!opts) return def;
  int r = def;
  if (lua_getfield(L, opts, key) != LUA_TNIL) r = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return r;
}

double lt_opt_number(lua_State *L, int opts, const char *key, double def) {
  if (!opts) return def;
  double r = def;
  if (lua_getfield(L, opts, key) != LUA_TNIL) {
    int ok;
    r = lua_tonumberx(L, -1, &ok);
    if (!ok) luaL_error(L, "option '%s' must be a number", key);
  }
  lua_pop(L, 1);
  return r;
}

void lt_push_dtype(lua_State *L, int dtype) { lua_pushstring(L, mt_dtypes[dtype].name); }

mt_tensor *lt_push_new(lua_State *L, const char *op, int dtype, int ndim, const int64_t *shape) {
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_tensor_init_op(op, r, dtype, ndim, shape));
  return r;
}

/* The device a creation function (rand, randn, randint, empty, zeros,
   ones, full) makes its tensor on: set by device_creation around its call,
   so that it is made there (and draws from that device's generator) rather
   than on the CPU and moved. */
static _Thread_local int creation_device = MT_CPU, creation_index = 0;   /* per thread: a worker's own Lua state */
int lt_creation_device(int *index) {
  *index = creation_index;
  return creation_device;
}

/* The device= option of a creation function (torch.zeros, torch.randn, ...):
   the function runs on the CPU without it, in this frame (with its own
   upvalues 1 and 2: the closure keeps them), so its errors point at the
   caller's line as before; the result is then moved, and requires_grad=
   applies after the move, so it stays a leaf. Upvalue 4 is the function,
   5 its name. */
static int device_creation(lua_State *L) {
  lua_CFunction create = (lua_CFunction)lua_touserdata(L, lua_upvalueindex(4));
  const char *name = lua_tostring(L, lua_upvalueindex(5));
  creation_device = MT_CPU;                          /* a creation on the CPU unless set below */
  creation_index = 0;
  int top = lua_gettop(L);
  if (top < 2 || lua_type(L, top) != LUA_TTABLE || lt_test_any(L, top)) return create(L);
  lua_pushliteral(L, "device");
  int type = lua_rawget(L, top), device = MT_CPU, index = 0;
  if (type == LUA_TNIL) { lua_pop(L, 1); return create(L); }
  if (type != LUA_TSTRING || !lt_parse_device(L, lua_tostring(L, -1), name, &device, &index))
    return luaL_error(L, "%s: unknown device '%s'", name, luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  if (device == MT_CPU) return create(L);
  lua_pushliteral(L, "requires_grad");
  lua_rawget(L, top);
  int requires_grad = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_newtable(L);                                   /* the options without device and requires_grad */
  for (lua_pushnil(L); lua_next(L, top);) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    if (k && (!strcmp(k, "device") || !strcmp(k, "requires_grad"))) { lua_pop(L, 1); continue; }
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  lua_replace(L, top);
  static const char *const on_device[] = {"rand", "randn", "randint", "empty", "zeros", "ones", "full"};
  int here = 0;                                      /* made (and drawn) there, not moved */
  for (size_t k = 0; k < sizeof on_device / sizeof *on_device && !here; k++) here = !strcmp(name, on_device[k]);
  if (here) {
    creation_device = device;                        /* an error inside leaves it */
    creation_index = index;                          /* set, and the next call through here clears it */
    int n = create(L);
    creation_device = MT_CPU;
    creation_index = 0;
    mt_tensor *r = lt_check_any(L, lua_gettop(L) - n + 1, name);
    if (requires_grad) LT_TRY(L, mt_ag_set_requires_grad(r, 1));
    return n;
  }
  int n = create(L);
  mt_tensor *cpu = lt_check_any(L, lua_gettop(L) - n + 1, name);
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_tensor_init_on(name, r, cpu->dtype, cpu->ndim, cpu->shape, device, index));
  if (strcmp(name, "empty") != 0) LT_TRY(L, mt_copy(r, cpu));   /* empty's values are unspecified: no copy */
  if (requires_grad) LT_TRY(L, mt_ag_set_requires_grad(r, 1));
  return 1;
}

void lt_device_creation(lua_State *L, int t, const char *const *names) {
  t = lua_absindex(L, t);
  for (; *names; names++) {
    lua_getfield(L, t, *names);
    lua_CFunction f = lua_tocfunction(L, -1);
    if (!f || lua_getupvalue(L, -1, 3)) luaL_error(L, "lt_device_creation: %s is no binding of two upvalues", *names);
    int n = 0;
    while (n < 2 && lua_getupvalue(L, -1 - n, n + 1)) n++;
    for (; n < 3; n++) lua_pushnil(L);
    lua_pushlightuserdata(L, (void *)f);
    lua_pushstring(L, *names);
    lua_pushcclosure(L, device_creation, 5);
    lua_setfield(L, t, *names);
    lua_pop(L, 1);
  }
}

/* Re-binds the named functions of the table at t (methods or torch) as
   taking tensors on every device: their closures get the key at upvalue
   LT_ANY_DEVICE_UPVALUE (their upvalues before it are kept, nil-padded). */
void lt_mark_any_device(lua_State *L, int t, const char *const *names) {
  t = lua_absindex(L, t);
  for (; *names; names++) {
    if (lua_getfield(L, t, *names) != LUA_TFUNCTION) luaL_error(L, "lt_mark_any_device: no function %s", *names);
    lua_CFunction f = lua_tocfunction(L, -1);
    int n = 0;
    while (n < LT_ANY_DEVICE_UPVALUE - 1 && lua_getupvalue(L, -1 - n, n + 1)) n++;
    if (lua_getupvalue(L, -1 - n, LT_ANY_DEVICE_UPVALUE)) {  /* a third upvalue of its own: not ours to replace */
      lua_pop(L, n + 2);
      continue;
    }
    for (; n < LT_ANY_DEVICE_UPVALUE - 1; n++) lua_pushnil(L);
    lt_push_any_device_key(L);
    lua_pushcclosure(L, f, LT_ANY_DEVICE_UPVALUE);
    lua_setfield(L, t, *names);
    lua_pop(L, 1);
  }
}

void lt_setfuncs(lua_State *L, const luaL_Reg *methods, const luaL_Reg *functions) {
  /* stack: methods torch mt */
  for (; methods && methods->name; methods++) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, methods->func, 1);
    lua_setfield(L, -4, methods->name);
  }
  for (; functions && functions->name; functions++) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, functions->func, 1);
    lua_setfield(L, -3, functions->name);
  }
}

/* ---- lifetime ---- */
/* Lua code may call __gc itself (getmetatable(x).__gc(x)), with anything: the
   tensor released loses its metatable, so that it is no tensor any more and
   the collector does not finalize it a second time. */
static int t_gc(lua_State *L) {
  mt_tensor *t = lt_test_any(L, 1);
  if (!t) return 0;
  mt_ag_meta_release(t->grad_meta);
  t->grad_meta = NULL;
  mt_tensor_release(t);
  lua_pushnil(L);
  lua_setmetatable(L, 1);
  return 0;
}

/* ---- creation ---- */

int lt_push_factory(lua_State *L, mt_op op, const mt_factory_args *a, int opts) {
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_call_factory(r, op, a));
  lt_opt_requires_grad(L, opts, r);
  return 1;
}

/* a's device: x's for x:new_zeros(...), else that of a device= option (lt_creation_device) */
static void factory_device(mt_factory_args *a, const mt_tensor *x) {
  if (x) { a->device = mt_device_of(x); a->index = mt_device_index_of(x); }
  else a->device = lt_creation_device(&a->index);
}

/* torch.zeros(sizes..., opts) with the sizes from argument `from` on (1),
   or x:new_zeros(sizes..., opts) (2, x's dtype and device by default) */
static int new_filled(lua_State *L, mt_op op, const char *name, int from) {
  const mt_tensor *x = from == 2 ? lt_check(L, 1, name) : NULL;
  int opts = lt_opts_index(L);
  int last = opts ? opts - 1 : lua_gettop(L);
  int64_t shape[MT_MAX_DIMS];
  mt_factory_args a = {.shape = shape, .name = name};
  a.ndim = lt_read_shape(L, from, last, shape, name);
  a.dtype = lt_opt_dtype(L, opts, x ? x->dtype : lt_default_dtype, name);
  factory_device(&a, x);
  return lt_push_factory(L, op, &a, opts);
}

static int t_empty(lua_State *L) { return new_filled(L, MT_OP_empty, "empty", 1); }
static int t_zeros(lua_State *L) { return new_filled(L, MT_OP_zeros, "zeros", 1); }
static int t_ones(lua_State *L) { return new_filled(L, MT_OP_ones, "ones", 1); }
static int t_new_empty(lua_State *L) { return new_filled(L, MT_OP_empty, "new_empty", 2); }
static int t_new_zeros(lua_State *L) { return new_filled(L, MT_OP_zeros, "new_zeros", 2); }
static int t_new_ones(lua_State *L) { return new_filled(L, MT_OP_ones, "new_ones", 2); }

/* torch.full(size, value, opts) with the size at `at` (1), or
   x:new_full(size, value, opts) (2); size is a table or a single number */
static int full(lua_State *L, const char *op, int at, int def_dtype) {
  int opts = lt_opts_index(L);
  int64_t shape[MT_MAX_DIMS];
  mt_factory_args a = {.shape = shape, .name = op};
  a.ndim = lt_read_shape(L, at, at, shape, op);
  if (lua_isnoneornil(L, at + 1) || at + 1 == opts) luaL_error(L, "%s: expects a fill value after the size", op);
  a.dtype = lt_opt_dtype(L, opts, def_dtype, op);
  mt_operand value;
  a.value = lt_fill_operand(L, at + 1, op, &value);
  factory_device(&a, at == 2 ? lt_check(L, 1, op) : NULL);
  return lt_push_factory(L, MT_OP_full, &a, opts);
}
static int t_full(lua_State *L) {
  int def = lua_isinteger(L, 2) ? MT_INT64 : lua_isboolean(L, 2) ? MT_BOOL : lt_default_dtype;
  return full(L, "full", 1, def);
}
static int t_new_full(lua_State *L) { return full(L, "new_full", 2, lt_check(L, 1, "new_full")->dtype); }

/* Walks a nested Lua table: the shape (first pass) and the values. The
   first value met (a number, boolean or tensor) fixes the number of dims;
   before it, each table met one level deeper adds one. */
typedef struct { int ndim, fixed; int64_t shape[MT_MAX_DIMS]; int has_float, has_bool, has_int; } nest_info;

/* Whether a value of k more dims (a tensor's shape, or none for a number)
   at this depth completes a shape of ndim dims */
static int nest_fits(int depth, int k, const int64_t *dims, int ndim, const int64_t *shape) {
  if (depth + k != ndim) return 0;
  for (int i = 0; i < k; i++)
    if (dims[i] != shape[depth + i]) return 0;
  return 1;
}

static void nest_leaf(lua_State *L, int depth, int k, const int64_t *dims, nest_info *info, const char *op) {
  if (depth + k > MT_MAX_DIMS) luaL_error(L, "%s: nested too deep", op);
  if (!info->fixed && depth + k >= info->ndim) {   /* the first value: its dims complete the shape */
    for (int i = info->ndim - depth; i < k; i++) info->shape[depth + i] = dims[i];
    info->ndim = depth + k;
    info->fixed = 1;
  }
  if (!info->fixed || !nest_fits(depth, k, dims, info->ndim, info->shape))
    luaL_error(L, "%s: ragged nested table (a value at depth %d does not match the first)", op, depth + 1);
}

static void nest_shape(lua_State *L, int idx, int depth, nest_info *info, const char *op) {
  mt_tensor *t = lt_test(L, idx);
  int type = lua_type(L, idx);
  if (t) {
    nest_leaf(L, depth, t->ndim, t->shape, info, op);
    if (mt_dtype_is_float(t->dtype)) info->has_float = 1;
    else if (t->dtype == MT_BOOL) info->has_bool = 1;
    else info->has_int = 1;
    return;
  }
  if (type == LUA_TNUMBER || type == LUA_TBOOLEAN) {
    nest_leaf(L, depth, 0, NULL, info, op);
    if (type == LUA_TBOOLEAN) info->has_bool = 1;
    else if (lua_isinteger(L, idx)) info->has_int = 1;
    else info->has_float = 1;
    return;
  }
  if (type != LUA_TTABLE) luaL_error(L, "%s: cannot make a tensor from a %s", op, luaL_typename(L, idx));
  if (depth >= MT_MAX_DIMS) luaL_error(L, "%s: nested too deep", op);
  int64_t n = lt_len(L, idx, LT_MAX_TABLE_LEN, "values", op);
  if (depth == info->ndim && !info->fixed) { info->shape[depth] = n; info->ndim = depth + 1; }
  else if (depth >= info->ndim)
    luaL_error(L, "%s: ragged nested table (a table at depth %d, where the first had a value)", op, depth + 1);
  else if (info->shape[depth] != n)
    luaL_error(L, "%s: ragged nested table (length %I at depth %d, expected %I)", op, (lua_Integer)n, depth + 1,
               (lua_Integer)info->shape[depth]);
  luaL_checkstack(L, 4, "nesting");
  for (int64_t i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    nest_shape(L, lua_gettop(L), depth + 1, info, op);
    lua_pop(L, 1);
  }
}

/* The second pass reads the table again, and its metamethods may answer
   otherwise: every value is checked against r's shape before it is written. */
static void nest_fill(lua_State *L, int idx, const mt_tensor *r, int64_t *pos, int depth, const char *op) {
  mt_tensor *t = lt_test(L, idx);
  int type = lua_type(L, idx);
  if (type == LUA_TTABLE) {
    int64_t n = lt_len(L, idx, LT_MAX_TABLE_LEN, "values", op);
    if (depth >= r->ndim || n != r->shape[depth]) luaL_error(L, "%s: the table changed while it was read", op);
    for (int64_t i = 1; i <= n; i++) {
      lua_geti(L, idx, i);
      nest_fill(L, lua_gettop(L), r, pos, depth + 1, op);
      lua_pop(L, 1);
    }
    return;
  }
  if (t ? !nest_fits(depth, t->ndim, t->shape, r->ndim, r->shape)
        : (depth != r->ndim || (type != LUA_TNUMBER && type != LUA_TBOOLEAN)))
    luaL_error(L, "%s: the table changed while it was read", op);
  if (t) {
    mt_tensor dst = {0};
    int64_t numel = mt_numel(t);
    mt_as_strided(&dst, r, t->ndim, t->shape, r->stride + depth, r->offset + *pos);
    mt_copy(&dst, t);
    mt_tensor_release(&dst);
    *pos += numel;
    return;
  }
  char *p = (char *)r->storage->data + (size_t)(*pos) * (size_t)mt_dtypes[r->dtype].size;
  if (type == LUA_TBOOLEAN) mt_set_i64(r->dtype, p, lua_toboolean(L, idx));
  else if (lua_isinteger(L, idx)) mt_set_i64(r->dtype, p, lua_tointeger(L, idx));
  else mt_set_f64(r->dtype, p, lua_tonumber(L, idx));
  (*pos)++;
}

/* Builds a tensor from the value at idx (nested tables, numbers, tensors);
   dtype < 0 infers it as PyTorch does. */
static void tensor_from_value(lua_State *L, int idx, int dtype, const char *op) {
  nest_info info = {0};
  nest_shape(L, idx, 0, &info, op);
  if (dtype < 0) dtype = info.has_float ? lt_default_dtype : info.has_int ? MT_INT64 : info.has_bool ? MT_BOOL : lt_default_dtype;
  mt_tensor *r = lt_push_new(L, op, dtype, info.ndim, info.shape);
  int64_t pos = 0;
  nest_fill(L, idx, r, &pos, 0, op);
}

/* torch.tensor(data, {dtype=}) */
static int t_tensor(lua_State *L) {
  int opts = lua_gettop(L) >= 2 ? 2 : 0;
  if (opts) luaL_checktype(L, 2, LUA_TTABLE);
  int dtype = lt_opt_dtype(L, opts, -1, "tensor");
  if (lua_isnoneornil(L, 1)) return luaL_error(L, "tensor: expects data (a number, boolean or nested table)");
  tensor_from_value(L, 1, dtype, "tensor");
  lt_opt_requires_grad(L, opts, lt_test(L, -1));
  return 1;
}

/* torch._new(dtype, ...): Torch7's typed constructors -- sizes, a table of
   values, a torch.Size, or another tensor (a view of the same storage). */
static int t_new_typed(lua_State *L) {
  int dtype = lt_check_dtype_name(L, 1, "Tensor");
  int top = lua_gettop(L);
  mt_tensor *src;
  if (top >= 2 && (src = lt_test(L, 2))) {
    mt_tensor *r = lt_push(L);
    if (src->dtype == dtype) mt_tensor_alias(r, src);
    else LT_TRY(L, mt_to_dtype(r, src, dtype));
    return 1;
  }
  if (top >= 2 && lua_type(L, 2) == LUA_TTABLE && !lt_is_size(L, 2)) {
    tensor_from_value(L, 2, dtype, "Tensor");
    return 1;
  }
  int64_t shape[MT_MAX_DIMS];
  int n = lt_read_shape(L, 2, top, shape, "Tensor");
  mt_tensor *r = lt_push_new(L, "Tensor", dtype, n, shape);
  if (n == 0 && top < 2) {                      /* torch.Tensor() is empty, 0 elements */
    int64_t zero = 0;
    mt_tensor_release(r);
    LT_TRY(L, mt_tensor_init(r, dtype, 1, &zero));
  }
  mt_fill(r, 0);
  return 1;
}

/* x:new(...) -- same dtype, Torch7 style */
static int t_new(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "new");
  lt_push_dtype(L, x->dtype);
  lua_replace(L, 1);
  return t_new_typed(L);
}

/* torch.zeros_like(x, opts), ...: the factory op with x's size, dtype and
   device unless opts says otherwise; full_like's value second */
static int like(lua_State *L, const char *op, mt_op factory) {
  mt_tensor *x = lt_check_any(L, 1, op);
  int opts = lua_gettop(L) >= 2 && lua_istable(L, lua_gettop(L)) && !lt_test_any(L, lua_gettop(L)) ? lua_gettop(L) : 0;
  mt_factory_args a = {.ndim = x->ndim, .shape = x->shape, .dtype = x->dtype, .device = mt_device_of(x),
                       .index = mt_device_index_of(x), .name = op};
  mt_operand value;
  if (factory == MT_OP_full) {
    if (lua_isnoneornil(L, 2) || opts == 2) luaL_error(L, "%s: expects a fill value after the tensor", op);
    a.value = lt_fill_operand(L, 2, op, &value);
  }
  if (opts) {
    if (lua_getfield(L, opts, "dtype") != LUA_TNIL) a.dtype = lt_check_dtype_name(L, -1, op);
    if (lua_getfield(L, opts, "device") != LUA_TNIL) check_device(L, lua_gettop(L), op, &a.device, &a.index);
    lua_pop(L, 2);
  }
  return lt_push_factory(L, factory, &a, opts);
}
static int t_zeros_like(lua_State *L) { return like(L, "zeros_like", MT_OP_zeros); }
static int t_ones_like(lua_State *L) { return like(L, "ones_like", MT_OP_ones); }
static int t_empty_like(lua_State *L) { return like(L, "empty_like", MT_OP_empty); }
static int t_full_like(lua_State *L) { return like(L, "full_like", MT_OP_full); }

/* ---- geometry ---- */
static int t_size(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "size");
  if (lua_isnoneornil(L, 2)) { lt_push_size(L, t->ndim, t->shape); return 1; }
  int d = lt_check_dim(L, 2, t->ndim, "size");
  lua_pushinteger(L, t->ndim ? t->shape[d] : 1);
  return 1;
}

static int t_stride(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "stride");
  if (lua_isnoneornil(L, 2)) { lt_push_size(L, t->ndim, t->stride); return 1; }
  int d = lt_check_dim(L, 2, t->ndim, "stride");
  lua_pushinteger(L, t->ndim ? t->stride[d] : 1);
  return 1;
}

static int t_dim(lua_State *L) { lua_pushinteger(L, lt_check(L, 1, "dim")->ndim); return 1; }
static int t_numel(lua_State *L) { lua_pushinteger(L, mt_numel(lt_check(L, 1, "numel"))); return 1; }
static int t_storage_offset(lua_State *L) { lua_pushinteger(L, lt_check(L, 1, "storageOffset")->offset + 1); return 1; }
static int t_is_contiguous(lua_State *L) { lua_pushboolean(L, mt_is_contiguous(lt_check(L, 1, "isContiguous"))); return 1; }
static int t_element_size(lua_State *L) { lua_pushinteger(L, mt_dtypes[lt_check(L, 1, "element_size")->dtype].size); return 1; }

static int t_is_set_to(lua_State *L) {
  mt_tensor *a = lt_check(L, 1, "isSetTo"), *b = lt_check(L, 2, "isSetTo");
  int same = a->storage == b->storage && a->offset == b->offset && a->ndim == b->ndim &&
             !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) &&
             !memcmp(a->stride, b->stride, sizeof(int64_t) * (size_t)a->ndim);
  lua_pushboolean(L, same);
  return 1;
}

/* x:set_(y): x becomes a view of y's storage with y's geometry and dtype,
   keeping its identity and autograd metadata (requires_grad, .grad); what
   nn's getParameters() and to() use to move parameters. Torch7's set. */
static int t_set_(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "set_"), *y = lt_check(L, 2, "set_");
  if (mt_ag_grad_enabled() && ((mt_ag_requires_grad(x) && !mt_ag_lift_write("set_", x)) ||
                                (mt_ag_requires_grad(y) && !mt_ag_lift_write("set_", y))))
    luaL_error(L, "set_: not allowed on tensors that require grad in grad mode (wrap it in torch.no_grad)");
  if (x != y) {
    void *meta = x->grad_meta;
    mt_tensor_release(x);
    mt_tensor_alias(x, y);
    x->grad_meta = meta;
  }
  lua_settop(L, 1);
  return 1;
}

/* x:resize_(sizes) / x:resizeAs_(y), Torch7's resize and resizeAs: x takes
   the sizes, contiguous from its offset, on its storage when that is large
   enough (mt_resize). Refused for a tensor that requires grad, as in
   PyTorch: its gradient would no longer match it. */
static int resize(lua_State *L, const char *op, int ndim, const int64_t *shape) {
  mt_tensor *x = lt_test(L, 1);
  if (mt_ag_requires_grad(x) && !mt_ag_lift_write(op, x))
    luaL_error(L, "%s: cannot resize a tensor that requires grad", op);
  LT_TRY(L, mt_resize(x, ndim, shape));
  lua_settop(L, 1);
  return 1;
}
static int t_resize_(lua_State *L) {
  lt_check(L, 1, "resize_");
  int64_t shape[MT_MAX_DIMS];
  int n = lt_read_shape(L, 2, lua_gettop(L), shape, "resize_");
  return resize(L, "resize_", n, shape);
}
static int t_resize_as_(lua_State *L) {
  lt_check(L, 1, "resizeAs_");
  mt_tensor *y = lt_check(L, 2, "resizeAs_");
  return resize(L, "resizeAs_", y->ndim, y->shape);
}

static int t_data_ptr(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "data_ptr");
  lua_pushinteger(L, (lua_Integer)(intptr_t)mt_data(t));
  return 1;
}

/* ---- conversions and copies ---- */
static int t_contiguous(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "contiguous");
  if (mt_is_contiguous(t)) { lua_settop(L, 1); return 1; }
  mt_view_args none = {.n = 0};
  LT_TRY(L, mt_call_view(lt_push(L), t, MT_OP_clone, &none, 0));
  return 1;
}

static int convert(lua_State *L, int dtype) {
  mt_tensor *t = lt_check_any(L, 1, "type");
  if (t->dtype == dtype) { lua_settop(L, 1); return 1; }
  LT_TRY(L, mt_call_cast(lt_push(L), t, dtype));
  return 1;
}

/* x:type() -> 'torch.FloatTensor'; x:type('torch.DoubleTensor') converts */
/* x:type() -> 'torch.FloatTensor' ('torch.cuda.FloatTensor' on a GPU);
   x:type('torch.DoubleTensor') converts, x:type('torch.cuda.DoubleTensor')
   (or cutorch's 'torch.CudaTensor', 'torch.CudaDoubleTensor') moves too */
static int t_type(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "type");
  if (lua_isnoneornil(L, 2)) {
    if (mt_device_of(t) == MT_CUDA) lua_pushfstring(L, "torch.cuda.%sTensor", mt_dtypes[t->dtype].torch7);
    else lua_pushfstring(L, "torch.%sTensor", mt_dtypes[t->dtype].torch7);
    return 1;
  }
  const char *name = luaL_checkstring(L, 2);
  char buf[64];
  int device = MT_CPU, index = 0;
  if (!strncmp(name, "torch.cuda.", 11)) {
    snprintf(buf, sizeof buf, "torch.%s", name + 11);
    name = buf;
    device = MT_CUDA;
  } else if (!strncmp(name, "torch.Cuda", 10)) {
    snprintf(buf, sizeof buf, "torch.%sTensor", !strcmp(name + 10, "Tensor") ? "Float" : "");
    if (strcmp(name + 10, "Tensor")) snprintf(buf, sizeof buf, "torch.%s", name + 10);
    name = buf;
    device = MT_CUDA;
  }
  int dtype = mt_dtype_from_name(name);
  if (dtype < 0) luaL_error(L, "type: unknown type '%s'", luaL_checkstring(L, 2));
  if (device == MT_CUDA) {
    lt_parse_device(L, "cuda", "type", &device, &index);
    if (mt_device_of(t) == MT_CUDA) index = mt_device_index_of(t);
  }
  return to_device(L, 1, dtype, device, index, "type", 0);
}

/* x:to('float64') / x:to('cuda') / x:to('cuda:0') / x:to{dtype=..., device=...} /
   x:to(y) (y's dtype and device) */
static int t_to(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "to");
  int dtype = t->dtype, device = mt_device_of(t), index = mt_device_index_of(t);
  mt_tensor *other = lt_test_any(L, 2);
  if (other) {
    dtype = other->dtype;
    device = mt_device_of(other);
    index = mt_device_index_of(other);
  } else if (lua_istable(L, 2)) {
    if (lua_getfield(L, 2, "dtype") != LUA_TNIL) dtype = lt_check_dtype_name(L, -1, "to");
    if (lua_getfield(L, 2, "device") != LUA_TNIL) check_device(L, lua_gettop(L), "to", &device, &index);
    lua_pop(L, 2);
  } else {
    const char *name = luaL_checkstring(L, 2);
    if (!lt_parse_device(L, name, "to", &device, &index)) {
      dtype = mt_dtype_from_name(name);
      if (dtype < 0) luaL_error(L, "to: unknown dtype or device '%s'", name);
    }
    if (lua_type(L, 3) == LUA_TSTRING) dtype = lt_check_dtype_name(L, 3, "to");   /* x:to('cuda', 'float16') */
  }
  int top = lua_gettop(L), copy = 0;                   /* {copy=true}: a new tensor even when nothing changes */
  if (top >= 2 && lua_istable(L, top) && !lt_test_any(L, top)) {
    lua_getfield(L, top, "copy");
    copy = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  return to_device(L, 1, dtype, device, index, "to", copy);
}

/* x:cuda() / x:cuda(i) (0-based, as 'cuda:i'): x on the GPU, itself when it is there */
static int t_cuda(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "cuda");
  int device, index;
  lt_parse_device(L, "cuda", "cuda", &device, &index);
  if (lua_isinteger(L, 2)) {
    lua_Integer i = lua_tointeger(L, 2);
    if (i < 0 || i > 63) luaL_error(L, "cuda: invalid device index %I", i);
    index = (int)i;
  } else if (mt_device_of(t) == MT_CUDA) {
    index = mt_device_index_of(t);
  }
  return to_device(L, 1, t->dtype, device, index, "cuda", 0);
}

static int t_cpu(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "cpu");
  return to_device(L, 1, t->dtype, MT_CPU, 0, "cpu", 0);
}

/* x:type_as(y) / Torch7's x:typeAs(y): x in y's dtype */
static int t_type_as(lua_State *L) { return convert(L, lt_check(L, 2, "type_as")->dtype); }

#define LT_CONVERTER(E, T, N, TN, K) \
  static int t_to_##E(lua_State *L) { return convert(L, MT_##E); }
MT_DTYPES(LT_CONVERTER)

/* the one value of t (copied from a GPU's memory into buf, 8 bytes) */
static const char *host_value(lua_State *L, mt_tensor *t, char *buf) {
  if (mt_device_of(t) == MT_CPU) return mt_data(t);
  mt_tensor h = {0};
  mt_storage s;
  mt_scalar_view(&h, &s, buf, t->dtype, t->ndim, t->shape);
  LT_TRY(L, mt_copy(&h, t));
  return buf;
}

static int t_item(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "item");
  if (mt_numel(t) != 1) {
    char b[128];
    luaL_error(L, "item: only one element tensors can be converted to numbers (got %s)", mt_shape_str(t, b, sizeof b));
  }
  char buf[8];
  const char *p = host_value(L, t, buf);
  if (mt_dtype_is_float(t->dtype)) lua_pushnumber(L, mt_get_f64(t->dtype, p));
  else if (t->dtype == MT_BOOL) lua_pushboolean(L, *(const bool *)p);
  else lua_pushinteger(L, mt_get_i64(t->dtype, p));
  return 1;
}

/* Flat values in row-major order, as a Lua array (printing, totable). */
static int t_flat_values(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "_flat_values");
  int64_t n = mt_numel(t);
  lua_createtable(L, (int)n, 0);
  int64_t idx[MT_MAX_DIMS] = {0};
  int isf = mt_dtype_is_float(t->dtype), isb = t->dtype == MT_BOOL;
  for (int64_t k = 0; k < n; k++) {
    const char *p = mt_elem_ptr(t, idx);
    if (isf) lua_pushnumber(L, mt_get_f64(t->dtype, p));
    else if (isb) lua_pushboolean(L, *(const bool *)p);
    else lua_pushinteger(L, mt_get_i64(t->dtype, p));
    lua_rawseti(L, -2, k + 1);
    for (int d = t->ndim - 1; d >= 0; d--) { if (++idx[d] < t->shape[d]) break; idx[d] = 0; }
  }
  return 1;
}

/* ---- indexing: x[i], x[{...}], and assignment ---- */

static void drop_view(mt_tensor *v) {
  mt_ag_meta_release(v->grad_meta);
  v->grad_meta = NULL;
  mt_tensor_release(v);
}

/* The helpers below push their error message and leave the raising to the
   caller, which must release its views first. */
static int raise_pushed(lua_State *L) { return luaL_error(L, "%s", lua_tostring(L, -1)); }

/* The hint after an index error where the index at fault is 0 (a 0-based habit). */
static const char *one_based(lua_Integer i) { return i == 0 ? " (indices are 1-based)" : ""; }

/* A number key or slice entry at i as an integer; 1 when it is one, else
   0 with the error message pushed. */
static int index_integer(lua_State *L, int i, const char *op, lua_Integer *v) {
  int ok;
  *v = lua_tointegerx(L, i, &ok);
  if (!ok) lua_pushfstring(L, "%s: index must be an integer, got %f", op, lua_tonumber(L, i));
  return ok;
}

/* A Torch7 range at i over a dim of size n: {first, last}, {i} (the one
   index), {} (all); negative bounds count from the end. The 0-based start
   and the length go to *start, *len; 1 when valid, else 0 with the error
   message pushed. */
static int read_range(lua_State *L, int i, int dim, int64_t n, int64_t *start, int64_t *len) {
  lua_Integer v[2] = {0, 0};
  int given[2];
  if (lua_geti(L, i, 3) != LUA_TNIL) {
    lua_pushfstring(L, "index: a range is {first, last}, got %d entries (steps are not supported)",
                    (int)lua_rawlen(L, i));
    return 0;
  }
  lua_pop(L, 1);
  for (int k = 0; k < 2; k++) {
    int ok = 1;
    given[k] = lua_geti(L, i, k + 1) != LUA_TNIL;
    if (given[k]) v[k] = lua_tointegerx(L, -1, &ok);
    if (!ok) {
      lua_pushfstring(L, "index: range bounds must be integers, got %s", luaL_tolstring(L, -1, NULL));
      return 0;
    }
    lua_pop(L, 1);
  }
  lua_Integer a = given[0] ? v[0] : 1, b = given[1] ? v[1] : (given[0] ? a : -1);
  int zero = a == 0 || (given[1] && b == 0 && a != 1);   /* {1, 0} is the empty range */
  if (a < 0) a += n + 1;
  if (b < 0) b += n + 1;
  if (a < 1 || b > n || b < a - 1) {
    lua_pushfstring(L, "index: range {%I, %I} out of bounds for dim %d of size %I%s", a, b, dim + 1,
                    (lua_Integer)n, one_based(zero ? 0 : 1));
    return 0;
  }
  *start = a - 1;
  *len = b - a + 1;
  return 1;
}

/* Applies a Torch7 slice table {i, {a,b}, {}, ...} to t, into r: the
   registry's select or narrow per entry, each recorded when t requires grad
   in grad mode. */
static void apply_slice(lua_State *L, int key, const mt_tensor *t, mt_tensor *r) {
  int n = (int)lt_len(L, key, MT_MAX_DIMS, "indices", "index");
  int record = mt_ag_requires_grad(t) && mt_ag_grad_enabled();
  mt_tensor cur = {0}, next = {0};
  mt_view_args a;
  a.n = a.m = 0;
  if (record) mt_ag_alias(&cur, t); else mt_tensor_alias(&cur, t);
  int dim = 0;
  for (int k = 1; k <= n; k++) {
    int type = lua_geti(L, key, k);
    int rc = 0;
    if (dim >= cur.ndim) {
      drop_view(&cur);
      luaL_error(L, "index: too many indices (%d) for a tensor of %d dims", n, t->ndim);
    }
    if (type == LUA_TNUMBER) {
      lua_Integer i;
      if (!index_integer(L, -1, "index", &i)) { drop_view(&cur); raise_pushed(L); }
      if (i == 0) {
        lua_Integer size = cur.shape[dim];
        drop_view(&cur);
        luaL_error(L, "index: index 0 out of range for dim %d of size %I (indices are 1-based)", dim + 1, size);
      }
      a.i[0] = dim;
      a.i[1] = i > 0 ? i - 1 : i;
      rc = mt_call_view(&next, &cur, MT_OP_select, &a, 0);
    } else if (type == LUA_TTABLE) {
      int64_t start = 0, len = 0;
      if (!read_range(L, lua_gettop(L), dim, cur.shape[dim], &start, &len)) { drop_view(&cur); raise_pushed(L); }
      a.i[0] = dim;
      a.i[1] = start;
      a.i[2] = len;
      rc = mt_call_view(&next, &cur, MT_OP_narrow, &a, 0);
      dim++;
    } else {
      drop_view(&cur);
      luaL_error(L, "index: slice entries must be numbers or {first, last} tables, got %s", lua_typename(L, type));
    }
    lua_pop(L, 1);
    drop_view(&cur);
    if (rc) { drop_view(&next); lt_error(L); }
    cur = next;
    memset(&next, 0, sizeof next);
  }
  *r = cur;
}

static int t_index(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "index");
  int type = lua_type(L, 2);
  if (type == LUA_TSTRING) {
    /* methods first (upvalue 2), then fields (upvalue 3: a Lua function) */
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    const char *k = lua_tostring(L, 2);
    if (!strcmp(k, "shape")) { lt_push_size(L, t->ndim, t->shape); return 1; }
    if (!strcmp(k, "dtype")) { lt_push_dtype(L, t->dtype); return 1; }
    if (!strcmp(k, "device")) {
      char dev[32];
      lua_pushstring(L, mt_tensor_device_str(t, dev, sizeof dev));
      return 1;
    }
    if (!strcmp(k, "is_cuda")) { lua_pushboolean(L, mt_device_of(t) == MT_CUDA); return 1; }
    if (!strcmp(k, "ndim")) { lua_pushinteger(L, t->ndim); return 1; }
    if (lt_autograd_field(L, t, k)) return 1;
    lua_pushvalue(L, lua_upvalueindex(3));
    if (lua_isnil(L, -1)) return 1;
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 1);
    return 1;
  }
  if (type == LUA_TNUMBER) {
    lua_Integer i;
    if (!index_integer(L, 2, "index", &i)) raise_pushed(L);
    if (t->ndim == 0) luaL_error(L, "index: cannot index a 0-dim tensor (use item())");
    int64_t n = t->shape[0];
    if (i == 0 || i < -n || i > n)
      luaL_error(L, "index: index %I out of range for dim 1 of size %I%s", i, (lua_Integer)n, one_based(i));
    int64_t z = i > 0 ? i - 1 : i + n;
    if (t->ndim == 1) {
      const char *p = (const char *)t->storage->data + (t->offset + z * t->stride[0]) * mt_dtypes[t->dtype].size;
      char buf[8];
      if (mt_device_of(t) != MT_CPU) {                 /* the element, copied from the GPU */
        mt_tensor e = {0};
        LT_TRY(L, mt_select(&e, t, 0, z));
        p = host_value(L, &e, buf);
        mt_tensor_release(&e);
      }
      if (mt_dtype_is_float(t->dtype)) lua_pushnumber(L, mt_get_f64(t->dtype, p));
      else if (t->dtype == MT_BOOL) lua_pushboolean(L, *(const bool *)p);
      else lua_pushinteger(L, mt_get_i64(t->dtype, p));
      return 1;
    }
    mt_view_args a;
    a.n = a.m = 0;
    a.i[0] = 0;
    a.i[1] = z;
    LT_TRY(L, mt_call_view(lt_push(L), t, MT_OP_select, &a, 0));
    return 1;
  }
  mt_tensor *key = lt_test_any(L, 2);
  if (key) return lt_index_get_tensor(L, t, key);
  if (type == LUA_TTABLE) {
    mt_tensor *r = lt_push(L);
    apply_slice(L, 2, t, r);
    if (r->ndim == 0) {                          /* every dim selected: a number */
      char buf[8];
      const char *p = host_value(L, r, buf);
      if (mt_dtype_is_float(r->dtype)) lua_pushnumber(L, mt_get_f64(r->dtype, p));
      else if (r->dtype == MT_BOOL) lua_pushboolean(L, *(const bool *)p);
      else lua_pushinteger(L, mt_get_i64(r->dtype, p));
    }
    return 1;
  }
  luaL_error(L, "index: cannot index a tensor with a %s", luaL_typename(L, 2));
  return 0;
}

/* Assigns the value at index v into view, through the registry's copy (a
   tensor, broadcast) or fill (a number, exact for any integer, or a
   boolean) */
static void assign(lua_State *L, mt_tensor *view, int v) {
  mt_operand in[2] = {{view, 0, 0}};
  const int copy = lt_test(L, v) != NULL;
  lt_fill_operand(L, v, "index assignment", &in[1]);
  const double none[2] = {0, 0};
  LT_TRY(L, mt_call_param(view, in, copy ? MT_OP_copy : MT_OP_fill, none, 1, lt_default_dtype));
}

/* view = the region of t that a number or slice key (at index 2) names:
   x[i] selects along dim 1, x[{...}] slices */
static void key_region(lua_State *L, mt_tensor *t, mt_tensor *view) {
  if (lua_type(L, 2) == LUA_TNUMBER) {
    lua_Integer i;
    if (!index_integer(L, 2, "index assignment", &i)) raise_pushed(L);
    if (t->ndim == 0) luaL_error(L, "index assignment: cannot index a 0-dim tensor");
    int64_t n = t->shape[0];
    if (i == 0 || i < -n || i > n)
      luaL_error(L, "index assignment: index %I out of range for dim 1 of size %I%s", i, (lua_Integer)n, one_based(i));
    LT_TRY(L, mt_select(view, t, 0, i > 0 ? i - 1 : i + n));
  } else {
    apply_slice(L, 2, t, view);
  }
}

/* x[i] = v or x[{...}] = v under autograd: x itself (not a view of it, whose
   history would not reach x) takes v where a bool mask of x's shape marks
   the region, through the registry's masked puts (lt_index_set_tensor). */
static void assign_recorded(lua_State *L, mt_tensor *t) {
  mt_tensor *mask = lt_push(L), *region = lt_push(L);   /* the stack owns them */
  LT_TRY(L, mt_tensor_init_like(mask, MT_BOOL, t->ndim, t->shape, t));
  LT_TRY(L, mt_fill(mask, 0));
  key_region(L, mask, region);
  LT_TRY(L, mt_fill(region, 1));
  int value = 3;
  mt_tensor *v = lt_test(L, 3);
  if (v) {                                     /* v broadcast to the region, then one value per set element */
    char b1[128], b2[128];
    mt_view_args a;
    a.n = region->ndim;
    a.m = 0;
    memcpy(a.v, region->shape, sizeof(int64_t) * (size_t)region->ndim);
    mt_tensor *ex = lt_push(L);
    if (mt_call_view(ex, v, MT_OP_expand, &a, 0))
      luaL_error(L, "index assignment: value of shape %s cannot broadcast to the indexed shape %s",
                 mt_shape_str(v, b1, sizeof b1), mt_shape_str(region, b2, sizeof b2));
    a.n = 1;
    a.v[0] = mt_numel(region);
    LT_TRY(L, mt_call_view(lt_push(L), ex, MT_OP_reshape, &a, 0));
    value = lua_gettop(L);
  }
  lt_index_set_tensor(L, t, mask, value);
}

/* Takes every device: fields (grad, requires_grad) are metadata, and values
   are written through the registry's ops (copy, fill, the puts). */
static int t_newindex(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "index assignment");
  int type = lua_type(L, 2);
  if (type == LUA_TSTRING) {
    if (lt_autograd_set_field(L, t, lua_tostring(L, 2), 3)) return 0;
    luaL_error(L, "index assignment: cannot set field '%s' of a tensor", lua_tostring(L, 2));
  }
  if (lt_test(L, 2)) {                         /* an index tensor or a mask: the puts, recorded */
    lt_index_set_tensor(L, t, lt_test(L, 2), 3);
    return 0;
  }
  if (type != LUA_TNUMBER && type != LUA_TTABLE)
    luaL_error(L, "index assignment: cannot index a tensor with a %s", luaL_typename(L, 2));
  if (t->grad_meta || (lt_test(L, 3) && lt_test(L, 3)->grad_meta)) {
    int need = mt_ag_inplace_needed("index assignment", t, lt_test(L, 3));
    if (need < 0) LT_TRY(L, need);
    if (need) {
      assign_recorded(L, t);
      return 0;
    }
  }
  /* view is released even when assign raises: keep it in a userdata */
  mt_tensor *held = lt_push(L);
  key_region(L, t, held);
  assign(L, held, 3);
  return 0;
}

static int t_len(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "len");
  lua_pushinteger(L, t->ndim ? t->shape[0] : 0);
  return 1;
}

/* torch.setdefaulttensortype('torch.DoubleTensor') / torch.set_default_dtype('float64') */
static int t_set_default_dtype(lua_State *L) {
  int d = lt_check_dtype_name(L, 1, "set_default_dtype");
  if (!mt_dtype_is_float(d)) luaL_error(L, "set_default_dtype: only floating dtypes, got '%s'", lua_tostring(L, 1));
  lt_default_dtype = d;
  return 0;
}
static int t_get_default_dtype(lua_State *L) { lt_push_dtype(L, lt_default_dtype); return 1; }

static int t_setnumthreads(lua_State *L) { mt_set_num_threads((int)luaL_checkinteger(L, 1)); return 0; }
static int t_getnumthreads(lua_State *L) { lua_pushinteger(L, mt_get_num_threads()); return 1; }
/* torch._parallel_width(): the threads a parallel loop started now would
   use, after the pool's look at the machine's load (for specs). */
static int t_parallel_width(lua_State *L) { lua_pushinteger(L, mt_parallel_width()); return 1; }
/* torch._gemm_kernel([dtype]): what computes matrix products of dtype (float32 when absent;
   bfloat16 and float16 are widened to float32 as they are packed) on this CPU, for the benches'
   notes: 'moontorch AVX-512' (mt_sgemm.c), 'moontorch AVX512_BF16' (bfloat16 pairs of steps
   on vdpbf16ps) or 'OpenBLAS'. */
static int t_gemm_kernel(lua_State *L) {
  const char *dt = luaL_optstring(L, 1, "float32");
  if (strcmp(dt, "float32") && strcmp(dt, "bfloat16") && strcmp(dt, "float16"))
    return luaL_error(L, "torch._gemm_kernel: expected 'float32', 'bfloat16' or 'float16', got '%s'", dt);
  if (!mt_sgemm_available()) lua_pushstring(L, "OpenBLAS");
  else if (!strcmp(dt, "bfloat16") && mt_gemm_bf16_native()) lua_pushstring(L, "moontorch AVX512_BF16");
  else lua_pushstring(L, "moontorch AVX-512");
  return 1;
}

/* torch._cpu_capability(): the ISA the hot loops run on (mt_isa.h) */
static int t_cpu_capability(lua_State *L) {
  lua_pushstring(L, mt_cpu_capability());
  return 1;
}

/* torch._conv_kernel(): the level the float32 convolution's direct kernel runs at
   ('DEFAULT', 'AVX2' or 'AVX512'; TH_CONV_ISA names a lower one), for the specs and benches */
static int t_conv_kernel(lua_State *L) {
  lua_pushstring(L, mt_conv_level());
  return 1;
}

static int t_memory_stats(lua_State *L) {
  mt_alloc_stats s;
  mt_alloc_get_stats(&s);
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, s.allocated); lua_setfield(L, -2, "allocated");
  lua_pushinteger(L, s.peak); lua_setfield(L, -2, "peak");
  lua_pushinteger(L, s.cached); lua_setfield(L, -2, "cached");
  lua_pushinteger(L, s.num_allocs); lua_setfield(L, -2, "num_allocs");
  lua_pushinteger(L, s.num_cache_hits); lua_setfield(L, -2, "cache_hits");
  return 1;
}
static int t_reset_peak(lua_State *L) { (void)L; mt_alloc_reset_peak(); return 0; }
static int t_empty_cache(lua_State *L) { (void)L; mt_alloc_empty_cache(); return 0; }

/* torch._set_field_hook(fn): fn(x, key) answers fields the C side does not
   know (autograd's grad, requires_grad, ...). */
static int t_set_field_hook(lua_State *L) {
  lua_getfield(L, LT_MT, "__index");
  lua_pushvalue(L, 1);
  lua_setupvalue(L, -2, 3);
  return 0;
}

/* torch._same_shape(a, b): whether a and b are tensors of one shape (any device) */
static int t_same_shape(lua_State *L) {
  mt_tensor *a = lt_test_any(L, 1), *b = lt_test_any(L, 2);
  lua_pushboolean(L, a && b && mt_same_shape(a, b));
  return 1;
}

static int t_is_tensor(lua_State *L) { lua_pushboolean(L, lt_test_any(L, 1) != NULL); return 1; }

static const luaL_Reg methods[] = {
  {"size", t_size}, {"stride", t_stride}, {"dim", t_dim}, {"nDimension", t_dim},
  {"nElement", t_numel}, {"numel", t_numel}, {"storageOffset", t_storage_offset},
  {"isContiguous", t_is_contiguous}, {"is_contiguous", t_is_contiguous},
  {"element_size", t_element_size}, {"isSetTo", t_is_set_to}, {"data_ptr", t_data_ptr},
  {"contiguous", t_contiguous}, {"type", t_type}, {"to", t_to}, {"item", t_item},
  {"_flat_values", t_flat_values},
  {"type_as", t_type_as}, {"typeAs", t_type_as}, {"new", t_new},
  {"float", t_to_FLOAT32}, {"double", t_to_FLOAT64}, {"half", t_to_FLOAT16},
  {"bfloat16", t_to_BFLOAT16}, {"char", t_to_INT8}, {"byte", t_to_UINT8}, {"short", t_to_INT16},
  {"int", t_to_INT32}, {"long", t_to_INT64}, {"bool", t_to_BOOL},
  {"cuda", t_cuda}, {"cpu", t_cpu},
  {NULL, NULL}};

/* Bindings that take tensors on every device: they read no elements (sizes,
   views), or reach them through the device's backend (copies, fills,
   conversions, item) */
static const char *const any_device_methods[] = {
  "size", "stride", "dim", "nDimension", "nElement", "numel", "storageOffset", "isContiguous", "is_contiguous",
  "element_size", "contiguous", "type", "to", "item", "type_as", "typeAs", "float", "double", "half", "bfloat16", "char", "byte", "short", "int", "long", "bool",
  "cuda", "cpu", "set_", "set", NULL};
static const char *const any_device_functions[] = {
  "isTensor", "is_tensor", "numel", "zeros_like", "ones_like", "empty_like", "full_like", NULL};

static const luaL_Reg functions[] = {
  {"empty", t_empty}, {"zeros", t_zeros}, {"ones", t_ones}, {"full", t_full},
  {"tensor", t_tensor}, {"_new", t_new_typed}, {"zeros_like", t_zeros_like},
  {"ones_like", t_ones_like}, {"empty_like", t_empty_like}, {"full_like", t_full_like},
  {"set_default_dtype", t_set_default_dtype}, {"get_default_dtype", t_get_default_dtype},
  {"setnumthreads", t_setnumthreads}, {"getnumthreads", t_getnumthreads},
  {"set_num_threads", t_setnumthreads}, {"get_num_threads", t_getnumthreads},
  {"_parallel_width", t_parallel_width}, {"_gemm_kernel", t_gemm_kernel}, {"_cpu_capability", t_cpu_capability},
  {"_conv_kernel", t_conv_kernel},
  {"memory_stats", t_memory_stats}, {"reset_peak_memory_stats", t_reset_peak},
  {"empty_cache", t_empty_cache}, {"_set_field_hook", t_set_field_hook}, {"isTensor", t_is_tensor}, {"is_tensor", t_is_tensor}, {"_same_shape", t_same_shape},
  {"numel", t_numel},
  {NULL, NULL}};

/* New tensors shaped like an argument: never part of its history. Not
   guarded either: set_ and resize_ make their own autograd checks. */
static const luaL_Reg creation_methods[] = {
  {"new", t_new}, {"new_empty", t_new_empty}, {"new_zeros", t_new_zeros}, {"new_ones", t_new_ones},
  {"new_full", t_new_full}, {"set_", t_set_}, {"set", t_set_}, {"resize_", t_resize_},
  {"resize", t_resize_}, {"resizeAs_", t_resize_as_}, {"resizeAs", t_resize_as_}, {NULL, NULL}};
static const luaL_Reg creation_functions[] = {
  {"zeros_like", t_zeros_like}, {"ones_like", t_ones_like}, {"empty_like", t_empty_like},
  {"full_like", t_full_like}, {NULL, NULL}};

void lt_open_tensor(lua_State *L) {
  /* stack: methods torch mt */
  lt_setfuncs_guarded(L, methods, functions);
  lt_setfuncs(L, creation_methods, creation_functions);
  lt_mark_any_device(L, -3, any_device_methods);
  lt_mark_any_device(L, -2, any_device_functions);
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, t_gc, 1);
  lua_setfield(L, -2, "__gc");
  lua_pushvalue(L, -1);                         /* __index: mt, methods, field hook */
  lua_pushvalue(L, -4);
  lua_pushnil(L);
  lua_pushcclosure(L, t_index, 3);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -1);
  lua_pushnil(L);
  lt_push_any_device_key(L);
  lua_pushcclosure(L, t_newindex, LT_ANY_DEVICE_UPVALUE);
  lua_setfield(L, -2, "__newindex");
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, t_len, 1);
  lua_setfield(L, -2, "__len");
  lua_pushstring(L, "torch.Tensor");
  lua_setfield(L, -2, "__name");
  luaL_newmetatable(L, "torch.Size");
  lua_pop(L, 1);
}
