/* lt_module.c: luaopen_torch_core, the C half of `require 'torch'`: builds
   the tensor metatable and methods table and lets each area register. */
#include "lt.h"
#include "../tensor/mt_parallel.h"
#include <stdlib.h>
#include <unistd.h>

typedef void (*lt_opener)(lua_State *L);

static const lt_opener areas[] = {
  lt_open_tensor, lt_open_storage, lt_open_gate, lt_open_math, lt_open_reduce, lt_open_index,
  lt_open_shape, lt_open_linalg, lt_open_random, lt_open_util, lt_open_optim, lt_open_data, lt_open_autograd, lt_open_conv, lt_open_serialize,
  lt_open_lapack, lt_open_profiler, lt_open_memory,
};

/* Thread count at start-up: OMP_NUM_THREADS when set, else every core this
   process may run on (its affinity mask, which taskset and cpusets narrow). */
static int default_threads(void) {
  const char *env = getenv("OMP_NUM_THREADS");
  if (env && atoi(env) > 0) return atoi(env);
  int cores = mt_allowed_cores();
  if (cores > 0) return cores;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

int luaopen_torch_core(lua_State *L) {
  static int threads_set;
  if (!threads_set) { mt_set_num_threads(default_threads()); threads_set = 1; }
  lua_newtable(L);                      /* methods */
  lua_newtable(L);                      /* torch (core) */
  luaL_newmetatable(L, "torch.Tensor.mt");
  for (size_t i = 0; i < sizeof areas / sizeof areas[0]; i++) areas[i](L);
  static const char *const creators[] = {"zeros", "ones", "full", "empty", "tensor", "rand", "randn", "randint",
                                         "randperm", "arange", "range", "linspace", "logspace", "eye", "normal", NULL};
  lt_device_creation(L, -2, creators);
  lua_pushvalue(L, -3);
  lua_setfield(L, LUA_REGISTRYINDEX, "torch.Tensor.methods");  /* for in-place autograd */
  lua_pushvalue(L, -3);
  lua_setfield(L, -3, "_methods");
  /* package.loaded['torch.Tensor'] = methods: Lua names a method called
     from C (pcall(x.sum, x, 'a')) by searching the loaded modules, so its
     argument errors say 'torch.Tensor.sum' rather than '?' */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, -4);
  lua_setfield(L, -2, "torch.Tensor");
  lua_pop(L, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "_tensor_mt");
  lua_pop(L, 1);
  lua_remove(L, -2);
  return 1;
}
