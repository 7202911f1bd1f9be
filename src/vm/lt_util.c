/* lt_util.c: small utilities with no tensor in them: a monotonic clock,
   Torch7's torch.Timer, and the binding of the registry's names. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "lt.h"
#include "../ops/dispatch.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* torch.clock(): seconds on a monotonic wall clock (os.clock is CPU time) */
static int u_clock(lua_State *L) { lua_pushnumber(L, now()); return 1; }

/* torch.Timer(): starts running; t:time() -> {real = seconds}; t:stop(),
   t:resume(), t:reset() as in Torch7. */
typedef struct { double start, accumulated; int running; } lt_timer;

static lt_timer *check_timer(lua_State *L) { return luaL_checkudata(L, 1, "torch.Timer"); }

static int timer_new(lua_State *L) {
  lt_timer *t = lua_newuserdatauv(L, sizeof *t, 0);
  t->start = now();
  t->accumulated = 0;
  t->running = 1;
  luaL_setmetatable(L, "torch.Timer");
  return 1;
}
static double elapsed(const lt_timer *t) { return t->accumulated + (t->running ? now() - t->start : 0); }
static int timer_time(lua_State *L) {
  lt_timer *t = check_timer(L);
  lua_createtable(L, 0, 1);
  lua_pushnumber(L, elapsed(t));
  lua_setfield(L, -2, "real");
  return 1;
}
static int timer_stop(lua_State *L) {
  lt_timer *t = check_timer(L);
  if (t->running) { t->accumulated += now() - t->start; t->running = 0; }
  lua_settop(L, 1);
  return 1;
}
static int timer_resume(lua_State *L) {
  lt_timer *t = check_timer(L);
  if (!t->running) { t->start = now(); t->running = 1; }
  lua_settop(L, 1);
  return 1;
}
static int timer_reset(lua_State *L) {
  lt_timer *t = check_timer(L);
  t->accumulated = 0;
  t->start = now();
  lua_settop(L, 1);
  return 1;
}

static const luaL_Reg timer_methods[] = {
  {"time", timer_time}, {"stop", timer_stop}, {"resume", timer_resume}, {"reset", timer_reset},
  {NULL, NULL}};

static const luaL_Reg functions[] = {{"clock", u_clock}, {"Timer", timer_new}, {NULL, NULL}};

void lt_open_util(lua_State *L) {
  if (luaL_newmetatable(L, "torch.Timer")) {
    luaL_newlib(L, timer_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  lt_setfuncs(L, NULL, functions);
}

const char *lt_next_word(const char **p, size_t *n) {
  while (**p == ' ') (*p)++;
  if (!**p) return NULL;
  const char *word = *p;
  *n = strcspn(word, " ");
  *p += *n;
  return word;
}

void lt_bind_op(lua_State *L, const char *name, size_t len, int inplace, int methods_only, lua_CFunction fn,
                lua_Integer code) {
  char key[64];
  if (len + 2 > sizeof key) luaL_error(L, "registry name too long: %s", name);
  memcpy(key, name, len);
  key[len] = '_';
  key[len + (inplace != 0)] = 0;
  for (int table = -4; table <= (methods_only ? -4 : -3); table++) {
    lua_pushvalue(L, -1);
    lua_pushinteger(L, code);
    lt_push_any_device_key(L);             /* through the dispatcher: every device */
    lua_pushcclosure(L, fn, LT_ANY_DEVICE_UPVALUE);
    lua_setfield(L, table, key);
  }
}

void lt_bind_registry(lua_State *L, int first, int end, lt_op_binder bind) {
  for (int op = first; op < end; op++) {
    const mt_op_info *info = &mt_op_infos[op];
    if (info->lua_name) bind(L, info->name, strlen(info->name), op);
    size_t n;
    for (const char *p = info->aliases, *w; (w = lt_next_word(&p, &n));) bind(L, w, n, op);
  }
}

int lt_bound_op(lua_State *L, char *name, size_t size, int *inplace) {
  lua_Integer code = lua_tointeger(L, lua_upvalueindex(2));
  int op = (int)(code >> 1);
  *inplace = (int)(code & 1);
  size_t n = strlen(mt_op_names[op]);            /* name, or name_: no snprintf on the hot path */
  if (n + 2 > size) n = size - 2;
  memcpy(name, mt_op_names[op], n);
  name[n] = '_';
  name[n + (size_t)*inplace] = 0;
  return op;
}

int lt_error_as_called(lua_State *L, const char *name, int op, int inplace) {
  const char *msg = mt_error(), *names[2] = {mt_op_names[op], name};
  for (int k = 0; k < 2; k++) {
    size_t n = strlen(names[k]) - (k == 1 && inplace);
    const char *rest = msg + n;
    if (!strncmp(msg, names[k], n) && (rest[0] == ':' || (rest[0] == '_' && rest[1] == ':')))
      return luaL_error(L, "%s%s", name, rest + (rest[0] == '_'));
  }
  return lt_error(L);
}
