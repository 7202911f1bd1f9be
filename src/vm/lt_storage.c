/* lt_storage.c: Torch7's Storage objects. A storage object is a window
   (offset, size, in elements of its dtype) onto an engine storage: the whole
   of a tensor's memory for x:storage(), part of another storage's for
   torch.FloatStorage(s, offset, size). Writes through either show in every
   tensor on that memory. The typed constructors, printing and the methods
   written in Lua are in lib/torch/storage.lua. */
#include <string.h>
#include "lt.h"
#include "../autograd/ag.h"

#define STORAGE_MT "torch.Storage"

/* The elements a window onto s of this dtype can cover. */
static int64_t capacity(const mt_storage *s, int dtype) {
  return (int64_t)(s->nbytes / (size_t)mt_dtypes[dtype].size);
}

lt_storage *lt_test_storage(lua_State *L, int i) { return luaL_testudata(L, i, STORAGE_MT); }

static lt_storage *check_storage(lua_State *L, int i, const char *op) {
  lt_storage *s = lt_test_storage(L, i);
  if (!s) luaL_error(L, "%s: expected a storage, got %s", op, luaL_typename(L, i));
  return s;
}

lt_storage *lt_push_storage(lua_State *L, mt_storage *s, int dtype, int64_t offset, int64_t size) {
  lt_storage *w = lua_newuserdatauv(L, sizeof *w, 0);
  w->s = s;
  w->dtype = dtype;
  w->offset = offset;
  w->size = size;
  mt_storage_retain(s);
  luaL_setmetatable(L, STORAGE_MT);
  return w;
}

/* Fresh zeroed memory for n elements, as a storage object. */
static lt_storage *push_new(lua_State *L, int dtype, int64_t n, const char *op) {
  int64_t bytes;
  if (n < 0) luaL_error(L, "%s: the size must be non-negative, got %I", op, (lua_Integer)n);
  if (n > MT_MAX_NUMEL || mt_mul_size(op, n, mt_dtypes[dtype].size, &bytes)) lt_error(L);
  mt_storage *s = mt_storage_new_for((size_t)bytes, dtype);
  if (!s) luaL_error(L, "%s: out of memory allocating %I bytes", op, (lua_Integer)bytes);
  if (bytes) memset(s->data, 0, (size_t)bytes);
  lt_storage *w = lt_push_storage(L, s, dtype, 0, n);
  mt_storage_release(s);
  return w;
}

static char *elem(const lt_storage *w, int64_t i) {
  return (char *)w->s->data + (size_t)(w->offset + i) * (size_t)mt_dtypes[w->dtype].size;
}

/* Stores the Lua value at v into element i (0-based) of w. */
static void put(lua_State *L, const lt_storage *w, int64_t i, int v, const char *op) {
  char *p = elem(w, i);
  if (w->dtype == MT_BOOL) {
    if (!lua_isboolean(L, v) && !lua_isnumber(L, v))
      luaL_error(L, "%s: a BoolStorage holds booleans, got %s", op, luaL_typename(L, v));
    *(bool *)p = lua_isboolean(L, v) ? lua_toboolean(L, v) : lua_tonumber(L, v) != 0;
    return;
  }
  if (lua_isboolean(L, v)) { mt_set_i64(w->dtype, p, lua_toboolean(L, v)); return; }
  int isnum;
  if (!mt_dtype_is_float(w->dtype) && lua_isinteger(L, v)) { mt_set_i64(w->dtype, p, lua_tointeger(L, v)); return; }
  lua_Number x = lua_tonumberx(L, v, &isnum);
  if (!isnum) luaL_error(L, "%s: expected a number, got %s", op, luaL_typename(L, v));
  if (mt_dtype_is_float(w->dtype)) mt_set_f64(w->dtype, p, x);
  else mt_set_i64(w->dtype, p, (int64_t)x);
}

static void push_elem(lua_State *L, const lt_storage *w, int64_t i) {
  const char *p = elem(w, i);
  if (mt_dtype_is_float(w->dtype)) lua_pushnumber(L, mt_get_f64(w->dtype, p));
  else if (w->dtype == MT_BOOL) lua_pushboolean(L, *(const bool *)p);
  else lua_pushinteger(L, mt_get_i64(w->dtype, p));
}

static int64_t check_index(lua_State *L, const lt_storage *w, int k, const char *op) {
  int ok;
  lua_Integer i = lua_tointegerx(L, k, &ok);
  if (!ok) luaL_error(L, "%s: the index must be an integer, got %s", op, luaL_typename(L, k));
  if (i < 1 || i > w->size)
    luaL_error(L, "%s: index %I out of range [1, %I]%s", op, i, (lua_Integer)w->size,
               i == 0 ? " (indices are 1-based)" : "");
  return i - 1;
}

/* torch._storage_new(dtype), (dtype, n), (dtype, {values}),
   (dtype, storage [, offset [, size]]): offset 1-based, size to the end by
   default; a window onto another storage shares its memory. */
static int s_new(lua_State *L) {
  int dtype = lt_check_dtype_name(L, 1, "Storage");
  const char *op = "Storage";
  if (lua_isnoneornil(L, 2)) { push_new(L, dtype, 0, op); return 1; }
  lt_storage *src = lt_test_storage(L, 2);
  if (src) {
    if (src->dtype != dtype)
      luaL_error(L, "%s: a window onto a %sStorage must be a %sStorage", op, mt_dtypes[src->dtype].torch7,
                 mt_dtypes[src->dtype].torch7);
    lua_Integer off = luaL_optinteger(L, 3, 1);
    if (off < 1 || off > src->size + 1)
      luaL_error(L, "%s: offset %I out of range [1, %I]", op, off, (lua_Integer)src->size + 1);
    lua_Integer n = luaL_optinteger(L, 4, src->size - (off - 1));
    if (n < 0 || n > src->size - (off - 1))
      luaL_error(L, "%s: a window of %I elements from offset %I passes the end of a storage of %I", op, n, off,
                 (lua_Integer)src->size);
    lt_push_storage(L, src->s, dtype, src->offset + off - 1, n);
    return 1;
  }
  if (lua_type(L, 2) == LUA_TTABLE) {
    int64_t n = lt_len(L, 2, LT_MAX_TABLE_LEN, "values", op);
    lt_storage *w = push_new(L, dtype, n, op);
    int at = lua_gettop(L);
    for (int64_t i = 0; i < n; i++) {
      lua_geti(L, 2, i + 1);
      put(L, w, i, lua_gettop(L), op);
      lua_pop(L, 1);
    }
    lua_settop(L, at);
    return 1;
  }
  int ok;
  lua_Integer n = lua_tointegerx(L, 2, &ok);
  if (!ok) luaL_error(L, "%s: expects a size, a table of values or a storage, got %s", op, luaL_typename(L, 2));
  push_new(L, dtype, n, op);
  return 1;
}

/* As the tensors' __gc: a storage released by Lua code too is no storage
   any more (its metatable goes). */
static int s_gc(lua_State *L) {
  lt_storage *s = lt_test_storage(L, 1);
  if (!s) return 0;
  mt_storage_release(s->s);
  lua_pushnil(L);
  lua_setmetatable(L, 1);
  return 0;
}

/* The same memory, seen the same way. */
static int s_eq(lua_State *L) {
  lt_storage *a = lt_test_storage(L, 1), *b = lt_test_storage(L, 2);
  lua_pushboolean(L, a && b && a->s == b->s && a->offset == b->offset && a->size == b->size && a->dtype == b->dtype);
  return 1;
}

static int s_size(lua_State *L) {
  lua_pushinteger(L, check_storage(L, 1, "size")->size);
  return 1;
}

/* s[i] (1-based), else a method from the table in upvalue 1 */
static int s_index(lua_State *L) {
  lt_storage *s = check_storage(L, 1, "storage");
  if (lua_type(L, 2) == LUA_TNUMBER) {
    push_elem(L, s, check_index(L, s, 2, "storage"));
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int s_newindex(lua_State *L) {
  lt_storage *s = check_storage(L, 1, "storage");
  if (lua_type(L, 2) != LUA_TNUMBER) luaL_error(L, "storage: cannot set field '%s' of a storage", luaL_tolstring(L, 2, NULL));
  put(L, s, check_index(L, s, 2, "storage"), 3, "storage");
  return 0;
}

/* s:fill(v) */
static int s_fill(lua_State *L) {
  lt_storage *s = check_storage(L, 1, "fill");
  luaL_checkany(L, 2);
  for (int64_t i = 0; i < s->size; i++) put(L, s, i, 2, "fill");
  lua_settop(L, 1);
  return 1;
}

/* s:resize(n): keeps the first min(n, size) values. Within the memory the
   window looks at it only moves its end; past it the storage takes fresh
   memory (tensors made on the old memory keep it). */
static int s_resize(lua_State *L) {
  lt_storage *s = check_storage(L, 1, "resize");
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n < 0) luaL_error(L, "resize: the size must be non-negative, got %I", n);
  if (n > capacity(s->s, s->dtype) - s->offset) {
    if (s->s->device != MT_CPU) luaL_error(L, "resize: a storage on a GPU cannot grow");
    int64_t bytes;
    if (n > MT_MAX_NUMEL || mt_mul_size("resize", n, mt_dtypes[s->dtype].size, &bytes)) lt_error(L);
    mt_storage *fresh = mt_storage_new_for((size_t)bytes, s->dtype);
    if (!fresh) luaL_error(L, "resize: out of memory allocating %I bytes", (lua_Integer)bytes);
    size_t keep = (size_t)s->size * (size_t)mt_dtypes[s->dtype].size;
    memcpy(fresh->data, elem(s, 0), keep);
    memset((char *)fresh->data + keep, 0, (size_t)bytes - keep);
    mt_storage_release(s->s);
    s->s = fresh;
    s->offset = 0;
  }
  s->size = n;
  lua_settop(L, 1);
  return 1;
}

static int s_element_size(lua_State *L) {
  lua_pushinteger(L, mt_dtypes[check_storage(L, 1, "elementSize")->dtype].size);
  return 1;
}

/* s:_dtype(): the dtype name ('float32') */
static int s_dtype(lua_State *L) {
  lt_push_dtype(L, check_storage(L, 1, "type")->dtype);
  return 1;
}

/* s:_tensor(): the 1-D tensor over the window, sharing its memory */
static int s_tensor(lua_State *L) {
  lt_storage *s = check_storage(L, 1, "_tensor");
  mt_tensor *t = lt_push(L);
  mt_storage_retain(s->s);
  t->storage = s->s;
  t->dtype = s->dtype;
  t->offset = s->offset;
  t->ndim = 1;
  t->shape[0] = s->size;
  t->stride[0] = 1;
  return 1;
}

/* s:_pointer(): the address of the first element (torch.pointer) */
static int s_pointer(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)(intptr_t)elem(check_storage(L, 1, "pointer"), 0));
  return 1;
}

/* s:string() for a Char or Byte storage: its bytes; s:string(str) sets them */
static int s_string(lua_State *L) {
  lt_storage *s = check_storage(L, 1, "string");
  if (mt_dtypes[s->dtype].size != 1 || s->dtype == MT_BOOL)
    luaL_error(L, "string: only a CharStorage or ByteStorage holds a string, not a %sStorage", mt_dtypes[s->dtype].torch7);
  if (lua_isnoneornil(L, 2)) {
    lua_pushlstring(L, elem(s, 0), (size_t)s->size);
    return 1;
  }
  size_t len;
  const char *str = luaL_checklstring(L, 2, &len);
  lua_pushinteger(L, (lua_Integer)len);
  lua_replace(L, 2);
  lua_settop(L, 2);
  s_resize(L);
  memcpy(elem(s, 0), str, len);
  lua_settop(L, 1);
  return 1;
}

/* x:storage(): the tensor's whole memory, shared */
static int t_storage(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "storage");
  lt_push_storage(L, t->storage, t->dtype, 0, capacity(t->storage, t->dtype));
  return 1;
}

/* torch._set_storage(x, storage, offset, sizes, strides): x becomes the view
   of the storage's memory at the 1-based offset (into the window) with
   those sizes and strides (contiguous when strides is nil); checked to lie
   inside the window. Torch7's x:set(storage, ...) and the typed
   constructors on a storage. */
static int t_set_storage(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "set");
  lt_storage *s = check_storage(L, 2, "set");
  if (s->dtype != x->dtype)
    luaL_error(L, "set: a %s tensor cannot view a %sStorage", mt_dtypes[x->dtype].name, mt_dtypes[s->dtype].torch7);
  if (mt_ag_requires_grad(x)) luaL_error(L, "set: cannot set a tensor that requires grad");
  lua_Integer off = luaL_optinteger(L, 3, 1);
  if (off < 1) luaL_error(L, "set: the storage offset must be at least 1, got %I", off);
  int64_t shape[MT_MAX_DIMS], stride[MT_MAX_DIMS];
  int n, m;
  if (lua_isnoneornil(L, 4)) { n = 1; shape[0] = s->size - (off - 1) < 0 ? 0 : s->size - (off - 1); }
  else n = lt_read_shape(L, 4, 4, shape, "set");
  if (lua_isnoneornil(L, 5)) {
    if (mt_shape_numel("set", n, shape) < 0) lt_error(L);
    mt_contiguous_strides(n, shape, stride);
    m = n;
  } else m = lt_read_shape(L, 5, 5, stride, "set");
  if (m != n) luaL_error(L, "set: %d sizes but %d strides", n, m);
  /* the last element reached, checked against the window */
  int64_t last = off - 1, numel = mt_shape_numel("set", n, shape);
  if (numel < 0) lt_error(L);
  for (int d = 0; d < n && numel > 0; d++) {
    int64_t step;
    if (stride[d] < 0) luaL_error(L, "set: negative stride %I in dim %d", (lua_Integer)stride[d], d + 1);
    if (mt_mul_size("set", shape[d] - 1, stride[d], &step) || mt_add_size("set", last, step, &last)) lt_error(L);
  }
  if (numel > 0 && last >= s->size)
    luaL_error(L, "set: the view reaches element %I of a storage of %I", (lua_Integer)last + 1, (lua_Integer)s->size);
  mt_tensor one = {0};
  mt_storage_retain(s->s);
  one.storage = s->s;
  one.dtype = s->dtype;
  one.ndim = 1;
  one.shape[0] = capacity(s->s, s->dtype);
  one.stride[0] = 1;
  mt_tensor view = {0};
  int rc = mt_as_strided(&view, &one, n, shape, stride, s->offset + off - 1);
  mt_tensor_release(&one);
  LT_TRY(L, rc);
  void *meta = x->grad_meta;
  mt_tensor_release(x);
  *x = view;
  x->grad_meta = meta;
  lua_settop(L, 1);
  return 1;
}

static int s_is_storage(lua_State *L) {
  lua_pushboolean(L, lt_test_storage(L, 1) != NULL);
  return 1;
}

static const luaL_Reg storage_methods[] = {
  {"size", s_size}, {"fill", s_fill}, {"resize", s_resize}, {"elementSize", s_element_size},
  {"element_size", s_element_size}, {"_dtype", s_dtype}, {"_tensor", s_tensor}, {"_pointer", s_pointer},
  {"string", s_string}, {NULL, NULL}};

static const luaL_Reg tensor_methods[] = {{"storage", t_storage}, {NULL, NULL}};
static const luaL_Reg torch_functions[] = {
  {"_set_storage", t_set_storage}, {"_storage_new", s_new}, {"isStorage", s_is_storage},
  {NULL, NULL}};

/* Every function is a closure on the tensor metatable (LT_MT), as the
   tensor bindings are: lt_check and lt_push read it. */
void lt_open_storage(lua_State *L) {
  /* stack: methods torch mt */
  lt_setfuncs(L, tensor_methods, torch_functions);
  luaL_newmetatable(L, STORAGE_MT);
  lua_newtable(L);
  for (const luaL_Reg *r = storage_methods; r->name; r++) {
    lua_pushvalue(L, -3);
    lua_pushcclosure(L, r->func, 1);
    lua_setfield(L, -2, r->name);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, -5, "_storage_methods");       /* torch._storage_methods: Lua adds the rest */
  lua_pushcclosure(L, s_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, s_newindex); lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, s_gc); lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, s_eq); lua_setfield(L, -2, "__eq");
  lua_pushcfunction(L, s_size); lua_setfield(L, -2, "__len");
  lua_pushstring(L, "torch.Storage"); lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
}
