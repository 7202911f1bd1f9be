/* bindings.h: the Lua functions both backends of lib/distributed (mpi.c,
   nccl.c) define alike, over what the backend has defined before including
   it: msg (MSG_LEN bytes), rank and world (the current group's), and, later
   in the file, check_tensor and rooted_common. */
#ifndef MT_DISTRIBUTED_BINDINGS_H
#define MT_DISTRIBUTED_BINDINGS_H

#include <lua.h>
#include <lauxlib.h>
#include "common.h"

/* t, the tensor at index i, on the backend's device (raises otherwise) */
static mt_tensor *check_tensor(lua_State *L, int i, const char *op);
/* all_reduce, reduce or broadcast of t in place (async: a work, pushed) */
static int rooted_common(lua_State *L, const char *name, mt_tensor *t, int coll, int op, int root, int async);

/* a message for this rank pushed, 1 returned */
static int fail(lua_State *L, const char *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(lua_State *L, const char *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(msg, op, rank, world, fmt, ap);
  va_end(ap);
  lua_pushstring(L, msg);
  return 1;
}

/* a contiguous buffer over a tensor: it aliases t when t is contiguous and of
   dtype; otherwise it is a copy (converted to dtype, on t's device), copied back
   into t by buf_finish when write is set (on the GPU: on the same stream) */
typedef struct { mt_tensor t; int copied; } buffer;

static int buf_open(lua_State *L, const char *op, buffer *b, const mt_tensor *t, int dtype, int write) {
  memset(b, 0, sizeof *b);
  if (write && mt_check_writable(op, t)) return fail(L, op, "%s", mt_error());
  if (mt_contiguous_as(&b->t, t, dtype)) return fail(L, op, "%s", mt_error());
  b->copied = b->t.storage != t->storage;
  return 0;
}

static int buf_finish(lua_State *L, const char *op, buffer *b, mt_tensor *t, int write) {
  int r = 0;
  if (write) {
    if (b->copied && mt_copy(t, &b->t)) r = fail(L, op, "%s", mt_error());
    t->storage->version++;                       /* an in-place write, as autograd sees one */
  }
  mt_tensor_release(&b->t);
  return r;
}

/* counts[r] from the Lua array at index i (world integers >= 0), their sum;
   1 and a message when one is not a count */
static int read_counts(lua_State *L, const char *name, int i, const char *what, int64_t *counts, int64_t *sum) {
  if (!counts_from(L, i, world, what, counts, sum, name, rank, msg)) return 0;
  lua_pushstring(L, msg);
  return 1;
}

/* all_reduce(t, op[, async]) */
static int l_all_reduce(lua_State *L) {
  mt_tensor *t = check_tensor(L, 1, "all_reduce");
  int op = luaL_checkoption(L, 2, NULL, op_names);
  return rooted_common(L, "all_reduce", t, COLL_ALL_REDUCE, op, -1, lua_toboolean(L, 3));
}

/* reduce(t, op, dst[, async]) */
static int l_reduce(lua_State *L) {
  mt_tensor *t = check_tensor(L, 1, "reduce");
  int op = luaL_checkoption(L, 2, NULL, op_names);
  int dst = (int)luaL_checkinteger(L, 3);
  return rooted_common(L, "reduce", t, COLL_REDUCE, op, dst, lua_toboolean(L, 4));
}

/* broadcast(t, src, name[, async]): name (default "broadcast") names it in the messages */
static int l_broadcast(lua_State *L) {
  const char *name = luaL_optstring(L, 3, "broadcast");
  mt_tensor *t = check_tensor(L, 1, name);
  int src = (int)luaL_checkinteger(L, 2);
  return rooted_common(L, name, t, COLL_BROADCAST, -1, src, lua_toboolean(L, 4));
}

/* the backend's table of functions (their upvalue: the tensor metatable at index 1),
   pushed, after the metatables of its groups and of its works (wait, is_completed,
   source, and work_gc as __gc) */
static void bind_functions(lua_State *L, const luaL_Reg *fns, const char *group_mt, const char *work_mt,
                           const luaL_Reg *work_methods, lua_CFunction work_gc) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_newmetatable(L, group_mt);
  lua_pop(L, 1);
  if (luaL_newmetatable(L, work_mt)) {
    lua_newtable(L);
    luaL_setfuncs(L, work_methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, work_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, 1);
  luaL_setfuncs(L, fns, 1);
}

#endif
