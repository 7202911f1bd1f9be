/* cu_lua.c: the CUDA backend's entry: luaopen_torch_cuda registers the
   backend with the engine and returns the functions torch.cuda is built
   from (lib/torch/device.lua); the current device and stream of each
   thread. */
#include <lua.h>
#include <lauxlib.h>
#include <stdio.h>
#include "cu.h"

/* ---- devices and streams ---- */
static int device_count = -1;
static _Thread_local int current = -1;           /* this thread's device as last set, -1 unknown */
static cudaStream_t streams[64];                  /* per device: the stream kernels run on (0: default) */

int cu_set_device(const char *op, int index) {
  if (index == current) return 0;
  if (index < 0 || index >= device_count)
    return mt_fail("%s: cuda:%d is no device (this machine has %d CUDA device%s)", op, index, device_count,
                   device_count == 1 ? "" : "s");
  cudaError_t e = cudaSetDevice(index);
  if (e != cudaSuccess) return cu_fail(op, e);
  current = index;
  return 0;
}

cudaStream_t cu_stream(int index) { return index >= 0 && index < 64 ? streams[index] : 0; }
void cu_set_stream(int index, cudaStream_t s) { if (index >= 0 && index < 64) streams[index] = s; }

/* ---- Lua functions (0-based device ordinals, as PyTorch and nvidia-smi) ---- */
static int raise(lua_State *L) { return luaL_error(L, "%s", mt_error()); }

static int opt_device(lua_State *L, int i, const char *op) {
  if (lua_isnoneornil(L, i)) {
    int d = 0;
    cudaError_t e = cudaGetDevice(&d);
    if (e != cudaSuccess) { cu_fail(op, e); raise(L); }
    return d;
  }
  lua_Integer d = luaL_checkinteger(L, i);
  if (d < 0 || d >= device_count)
    luaL_error(L, "%s: cuda:%d is no device (this machine has %d CUDA device%s)", op, (int)d, device_count,
               device_count == 1 ? "" : "s");
  return (int)d;
}

static int l_device_count(lua_State *L) { lua_pushinteger(L, device_count); return 1; }

static int l_current_device(lua_State *L) {
  lua_pushinteger(L, opt_device(L, 1, "torch.cuda.current_device"));
  return 1;
}

static int l_set_device(lua_State *L) {
  int d = opt_device(L, 1, "torch.cuda.set_device");
  current = -1;
  if (cu_set_device("torch.cuda.set_device", d)) raise(L);
  return 0;
}

static int l_synchronize(lua_State *L) {
  int d = opt_device(L, 1, "torch.cuda.synchronize");
  if (cu_set_device("torch.cuda.synchronize", d) || cu_fail("torch.cuda.synchronize", cudaDeviceSynchronize()))
    raise(L);
  return 0;
}

static int l_get_device_name(lua_State *L) {
  int d = opt_device(L, 1, "torch.cuda.get_device_name");
  struct cudaDeviceProp p;
  if (cu_fail("torch.cuda.get_device_name", cudaGetDeviceProperties(&p, d))) raise(L);
  lua_pushstring(L, p.name);
  return 1;
}

static int l_get_device_capability(lua_State *L) {
  int d = opt_device(L, 1, "torch.cuda.get_device_capability"), major = 0, minor = 0;
  if (cu_fail("torch.cuda.get_device_capability", cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d)) ||
      cu_fail("torch.cuda.get_device_capability", cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d)))
    raise(L);
  lua_pushinteger(L, major);
  lua_pushinteger(L, minor);
  return 2;
}

/* total and free bytes of device memory, as torch.cuda.mem_get_info */
static int l_mem_get_info(lua_State *L) {
  int d = opt_device(L, 1, "torch.cuda.mem_get_info");
  size_t free_b = 0, total = 0;
  if (cu_set_device("torch.cuda.mem_get_info", d) || cu_fail("torch.cuda.mem_get_info", cudaMemGetInfo(&free_b, &total)))
    raise(L);
  lua_pushinteger(L, (lua_Integer)free_b);
  lua_pushinteger(L, (lua_Integer)total);
  return 2;
}

/* torch.cuda.memory_stats(device): the allocator's counters */
static int l_memory_stats(lua_State *L) {
  int d = opt_device(L, 1, "torch.cuda.memory_stats");
  cu_mem_stats s;
  cu_memory_stats(d, &s);
  lua_createtable(L, 0, 7);
#define FIELD(name) (lua_pushinteger(L, s.name), lua_setfield(L, -2, #name))
  FIELD(allocated); FIELD(peak); FIELD(reserved); FIELD(peak_reserved);
  FIELD(num_allocs); FIELD(num_cache_hits); FIELD(num_device_allocs);
#undef FIELD
  return 1;
}

static int l_reset_peak_memory_stats(lua_State *L) {
  cu_reset_peak(opt_device(L, 1, "torch.cuda.reset_peak_memory_stats"));
  return 0;
}

static int l_empty_cache(lua_State *L) { (void)L; cu_empty_cache(); return 0; }

static int l_allow_tf32(lua_State *L) {
  if (!lua_isnone(L, 1)) cu_set_allow_tf32(lua_toboolean(L, 1));
  lua_pushboolean(L, cu_get_allow_tf32());
  return 1;
}

static const mt_device_backend backend = {"cuda", cu_alloc, cu_free, cu_copy, cu_fill};
static const mt_device_kernels kernels = {cu_unary, cu_binary, cu_reduce, cu_along, NULL, cu_product,
                                          cu_add_product};

static const mt_device_extra extra = {cu_where, cu_activation_grad};

/* Returns the functions' table, or false and the reason when no GPU
   answers (no driver, no device): torch.cuda.is_available() is then false. */
int luaopen_torch_cuda(lua_State *L) {
  if (device_count < 0) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
      lua_pushboolean(L, 0);
      lua_pushstring(L, e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
      return 2;
    }
    device_count = n < 64 ? n : 64;
    mt_register_device(MT_CUDA, &backend);
    mt_register_kernels(MT_CUDA, &kernels);
    mt_register_optim(MT_CUDA, cu_optim_update);
    mt_register_extra(MT_CUDA, &extra);
  }
  static const luaL_Reg fns[] = {
    {"device_count", l_device_count},
    {"current_device", l_current_device},
    {"set_device", l_set_device},
    {"synchronize", l_synchronize},
    {"get_device_name", l_get_device_name},
    {"get_device_capability", l_get_device_capability},
    {"mem_get_info", l_mem_get_info},
    {"memory_stats", l_memory_stats},
    {"reset_peak_memory_stats", l_reset_peak_memory_stats},
    {"empty_cache", l_empty_cache},
    {"allow_tf32", l_allow_tf32},
    {NULL, NULL},
  };
  luaL_newlib(L, fns);
  return 1;
}
