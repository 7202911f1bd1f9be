/* lt_util.c: small utilities with no tensor in them: a monotonic clock,
   Torch7's torch.Timer, sleep and uname for lib/sys and lib/paths, and the
   binding of the registry's names. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include "lt.h"
#include "../ops/dispatch.h"
#include "../autograd/ag.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* torch.clock(): seconds on a monotonic wall clock (os.clock is CPU time) */
static int u_clock(lua_State *L) { lua_pushnumber(L, now()); return 1; }

/* torch.Timer(): starts running; t:time() -> {real=, user=, sys=} seconds, as
   Torch7's (wall clock, then this process's CPU time in user and kernel mode,
   all threads together, from getrusage); t:stop(), t:resume(), t:reset() as in
   Torch7: stopped time is not counted, and reset keeps a stopped timer stopped. */
enum { TIMER_REAL, TIMER_USER, TIMER_SYS, TIMER_CLOCKS };
static const char *const timer_fields[TIMER_CLOCKS] = {"real", "user", "sys"};
typedef struct { double start[TIMER_CLOCKS], accumulated[TIMER_CLOCKS]; int running; } lt_timer;

static void read_clocks(double clocks[TIMER_CLOCKS]) {
  struct rusage usage;
  clocks[TIMER_REAL] = now();
  if (getrusage(RUSAGE_SELF, &usage) != 0) memset(&usage, 0, sizeof usage);
  clocks[TIMER_USER] = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6;
  clocks[TIMER_SYS] = (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
}

static lt_timer *check_timer(lua_State *L) { return luaL_checkudata(L, 1, "torch.Timer"); }

static int timer_new(lua_State *L) {
  lt_timer *t = lua_newuserdatauv(L, sizeof *t, 0);
  read_clocks(t->start);
  memset(t->accumulated, 0, sizeof t->accumulated);
  t->running = 1;
  luaL_setmetatable(L, "torch.Timer");
  return 1;
}
static int timer_time(lua_State *L) {
  lt_timer *t = check_timer(L);
  double clocks[TIMER_CLOCKS];
  read_clocks(clocks);
  lua_createtable(L, 0, TIMER_CLOCKS);
  for (int k = 0; k < TIMER_CLOCKS; k++) {
    lua_pushnumber(L, t->accumulated[k] + (t->running ? clocks[k] - t->start[k] : 0));
    lua_setfield(L, -2, timer_fields[k]);
  }
  return 1;
}
static int timer_stop(lua_State *L) {
  lt_timer *t = check_timer(L);
  if (t->running) {
    double clocks[TIMER_CLOCKS];
    read_clocks(clocks);
    for (int k = 0; k < TIMER_CLOCKS; k++) t->accumulated[k] += clocks[k] - t->start[k];
    t->running = 0;
  }
  lua_settop(L, 1);
  return 1;
}
static int timer_resume(lua_State *L) {
  lt_timer *t = check_timer(L);
  if (!t->running) { read_clocks(t->start); t->running = 1; }
  lua_settop(L, 1);
  return 1;
}
static int timer_reset(lua_State *L) {
  lt_timer *t = check_timer(L);
  memset(t->accumulated, 0, sizeof t->accumulated);
  read_clocks(t->start);
  lua_settop(L, 1);
  return 1;
}

/* the longest sleep taken: a year, far inside time_t, so that the conversion
   below cannot overflow */
#define MAX_SLEEP_US (365.0 * 24 * 3600 * 1e6)

/* torch._usleep(microseconds): sleeps that long (sys.usleep, sys.sleep);
   a signal does not cut it short. */
static int u_usleep(lua_State *L) {
  lua_Number us = luaL_checknumber(L, 1);
  if (!(us >= 0 && us <= MAX_SLEEP_US))
    luaL_error(L, "usleep: expected a number of microseconds from 0 to %f, got %f", MAX_SLEEP_US, (double)us);
  struct timespec left = {(time_t)(us / 1e6), (long)((us - (double)(time_t)(us / 1e6) * 1e6) * 1e3)};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) continue;
  return 0;
}

/* torch._uname(): the system's name, the machine's network name and the
   processor type (paths.uname) */
static int u_uname(lua_State *L) {
  struct utsname names;
  if (uname(&names) != 0) luaL_error(L, "uname: %s", strerror(errno));
  lua_pushstring(L, names.sysname);
  lua_pushstring(L, names.nodename);
  lua_pushstring(L, names.machine);
  return 3;
}

static const luaL_Reg timer_methods[] = {
  {"time", timer_time}, {"stop", timer_stop}, {"resume", timer_resume}, {"reset", timer_reset},
  {NULL, NULL}};

/* torch._caller_function(level): the first Lua function at or above stack
   level `level` (0: this function, as debug.getinfo counts), past C
   functions; nil when there is none. Without debug.getinfo's table and
   strings: the Torch7 dialect's wrappers ask it on every call from the
   libraries, and remember each function's answer. */
static int u_caller_function(lua_State *L) {
  lua_Debug ar;
  for (int level = (int)luaL_checkinteger(L, 1); lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "f", &ar);
    if (!lua_iscfunction(L, -1)) return 1;
    lua_pop(L, 1);
  }
  return 0;
}

static const luaL_Reg functions[] = {{"clock", u_clock}, {"_caller_function", u_caller_function}, {"Timer", timer_new}, {"_usleep", u_usleep},
                                     {"_uname", u_uname}, {NULL, NULL}};

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

/* ---- torch.op(..., {out=r}): PyTorch's result tensor ----
   The registry's out-of-place ops of one result take it (torch.add(a, b,
   {out=r}), and the method forms alike, where PyTorch has none: never an
   option silently ignored): the op runs as without, then r takes the result
   (resized to its shape; converted to r's dtype where that holds it) and is
   returned. Every registry binding is its LT_OUT_BINDING wrapper, which
   comes here only when the last argument is a table, so that an op without
   the option refuses it rather than ignore it. Upvalues: the binding's three
   (mt, code, the any-device key), its name and whether it takes out=. */
int lt_out_call(lua_State *L, lua_CFunction fn) {
  int opts = lt_opts_index(L);
  if (!opts || lua_getfield(L, opts, "out") == LUA_TNIL) {
    if (opts) lua_pop(L, 1);
    return fn(L);
  }
  const char *name = lua_tostring(L, lua_upvalueindex(4));
  if (!lua_toboolean(L, lua_upvalueindex(5)))
    luaL_error(L, "%s: takes no out= (the out-of-place ops of one result do)", name);
  mt_tensor *out = lt_test_any(L, -1);          /* kept at top + 1 */
  if (!out) luaL_error(L, "%s: out must be a tensor, got %s", name, luaL_typename(L, -1));
  const int top = lua_gettop(L) - 1;
  for (int i = 1; i <= 3; i++) lua_pushvalue(L, lua_upvalueindex(i));   /* fn as its own closure, on copies */
  lua_pushcclosure(L, fn, 3);                     /* of the arguments: it may rearrange its stack */
  for (int i = 1; i <= top; i++) lua_pushvalue(L, i);
  if (lua_pcall(L, top, LUA_MULTRET, 0) != LUA_OK) {   /* its errors at the caller's line, as without out= */
    if (lua_type(L, -1) == LUA_TSTRING) {
      luaL_where(L, 1);
      lua_insert(L, -2);
      lua_concat(L, 2);
    }
    return lua_error(L);
  }
  const int nres = lua_gettop(L) - top - 1;
  mt_tensor *r = nres == 1 ? lt_test_any(L, -1) : NULL;
  if (!r) luaL_error(L, "%s: takes no out= (the out-of-place ops of one result do)", name);
  if (r->grad_meta && mt_ag_requires_grad(r))
    luaL_error(L, "%s: functions with out= don't support automatic differentiation, but one of the arguments "
               "requires grad", name);
  if (!mt_same_device(out, r)) {
    char d1[32], d2[32];
    luaL_error(L, "%s: expected out= on %s, the result's device, got a tensor on %s", name,
               mt_tensor_device_str(r, d1, sizeof d1), mt_tensor_device_str(out, d2, sizeof d2));
  }
  if (mt_dtypes[r->dtype].kind > mt_dtypes[out->dtype].kind)
    luaL_error(L, "%s: result type %s can't be cast to the desired output type %s", name, mt_dtypes[r->dtype].name,
               mt_dtypes[out->dtype].name);
  if (mt_check_writable(name, out)) {          /* named name_: as an in-place write; here, name: */
    const char *m = mt_error();
    const size_t n = strlen(name);
    if (!strncmp(m, name, n) && m[n] == '_' && m[n + 1] == ':') luaL_error(L, "%s%s", name, m + n + 1);
    lt_error(L);
  }
  if (!mt_same_shape(out, r)) LT_TRY(L, mt_resize(out, r->ndim, r->shape));
  LT_TRY(L, mt_copy(out, r));
  lua_pop(L, 1);                                  /* out is on top */
  return 1;
}

/* whether lt_bind_registry is binding an op whose forms take {out=} */
static int binding_out;

void lt_push_op_binding(lua_State *L, lua_CFunction fn, lua_Integer code, const char *name, int inplace) {
  lua_pushvalue(L, -1);
  lua_pushinteger(L, code);
  lt_push_any_device_key(L);               /* through the dispatcher: every device */
  lua_pushstring(L, name);
  lua_pushboolean(L, !inplace && binding_out);
  lua_pushcclosure(L, fn, LT_ANY_DEVICE_UPVALUE + 2);
}

void lt_bind_op(lua_State *L, const char *name, size_t len, int inplace, int methods_only, lua_CFunction fn,
                lua_Integer code) {
  char key[64];
  if (len + 2 > sizeof key) luaL_error(L, "registry name too long: %s", name);
  memcpy(key, name, len);
  key[len] = '_';
  key[len + (inplace != 0)] = 0;
  for (int table = -4; table <= (methods_only ? -4 : -3); table++) {
    lt_push_op_binding(L, fn, code, key, inplace);
    lua_setfield(L, table, key);
  }
}

/* the families whose ops give one new tensor: their forms take {out=} */
static int takes_out(int op) {
  return mt_op_is_pointwise(op) || mt_op_is_reduce(op) || mt_op_is_along(op) || mt_op_is_product(op) ||
         mt_op_is_add_product(op) || (mt_op_is_param(op) && mt_op_infos[op].inplace != 2) || mt_op_is_index(op) ||
         mt_op_is_put(op) || mt_op_is_mask(op) || mt_op_is_join(op);
}

void lt_bind_registry(lua_State *L, int first, int end, lt_op_binder bind) {
  for (int op = first; op < end; op++) {
    const mt_op_info *info = &mt_op_infos[op];
    binding_out = takes_out(op);
    if (info->lua_name) bind(L, info->name, strlen(info->name), op);
    size_t n;
    for (const char *p = info->aliases, *w; (w = lt_next_word(&p, &n));) bind(L, w, n, op);
  }
  binding_out = 0;
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
