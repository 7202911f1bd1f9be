/* cu_lua.c: the CUDA backend's entry: luaopen_torch_cuda registers the
   backend with the engine and returns the functions torch.cuda is built
   from (lib/torch/device.lua); the current device and stream of each
   thread. */
#include <lua.h>
#include <lauxlib.h>
#include <stdio.h>
#include "cu.h"
#include "../tensor/mt_reduce.h"

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

/* ---- streams and events ---- */
typedef struct { cudaStream_t s; int device; int owned; } lua_stream;
typedef struct { cudaEvent_t e; int device; int timing; } lua_event;

static lua_stream *check_stream(lua_State *L, int i) { return luaL_checkudata(L, i, "torch.cuda.Stream"); }
static lua_event *check_event(lua_State *L, int i) { return luaL_checkudata(L, i, "torch.cuda.Event"); }

static void push_stream(lua_State *L, cudaStream_t s, int device, int owned) {
  lua_stream *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->s = s;
  u->device = device;
  u->owned = owned;
  luaL_setmetatable(L, "torch.cuda.Stream");
}

/* torch.cuda.Stream(device): a new stream that does not wait on the default one */
static int l_stream_new(lua_State *L) {
  int d = opt_device(L, 1, "torch.cuda.Stream");
  cudaStream_t s;
  if (cu_set_device("torch.cuda.Stream", d) ||
      cu_fail("torch.cuda.Stream", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)))
    raise(L);
  push_stream(L, s, d, 1);
  return 1;
}

static int l_stream_gc(lua_State *L) {
  lua_stream *u = check_stream(L, 1);
  if (u->owned && u->s) {
    if (cu_stream(u->device) == u->s) cu_set_stream(u->device, 0);
    cudaStreamDestroy(u->s);
  }
  u->s = 0;
  u->owned = 0;
  return 0;
}

/* torch.cuda.current_stream(device), torch.cuda.default_stream(device) */
static int l_current_stream(lua_State *L) {
  int d = opt_device(L, 1, "torch.cuda.current_stream");
  push_stream(L, cu_stream(d), d, 0);
  return 1;
}
static int l_default_stream(lua_State *L) {
  push_stream(L, 0, opt_device(L, 1, "torch.cuda.default_stream"), 0);
  return 1;
}

/* backend.set_stream(s): makes s its device's current stream; returns the previous one */
static int l_set_stream(lua_State *L) {
  lua_stream *u = check_stream(L, 1);
  push_stream(L, cu_stream(u->device), u->device, 0);
  cu_set_stream(u->device, u->s);
  return 1;
}

static int l_stream_synchronize(lua_State *L) {
  lua_stream *u = check_stream(L, 1);
  if (cu_fail("Stream:synchronize", cudaStreamSynchronize(u->s))) raise(L);
  return 0;
}

/* whether everything queued on it has finished */
static int l_stream_query(lua_State *L) {
  cudaError_t e = cudaStreamQuery(check_stream(L, 1)->s);
  if (e != cudaSuccess && e != cudaErrorNotReady && cu_fail("Stream:query", e)) raise(L);
  lua_pushboolean(L, e == cudaSuccess);
  return 1;
}

static int l_stream_wait_event(lua_State *L) {
  lua_stream *u = check_stream(L, 1);
  if (cu_fail("Stream:wait_event", cudaStreamWaitEvent(u->s, check_event(L, 2)->e, 0))) raise(L);
  return 0;
}

static int l_stream_eq(lua_State *L) {
  lua_pushboolean(L, check_stream(L, 1)->s == check_stream(L, 2)->s);
  return 1;
}

static int l_stream_tostring(lua_State *L) {
  lua_stream *u = check_stream(L, 1);
  lua_pushfstring(L, "torch.cuda.Stream(device=cuda:%d, %s)", u->device, u->s ? "created" : "default");
  return 1;
}

/* torch.cuda.Event({enable_timing=false}) */
static int l_event_new(lua_State *L) {
  int timing = lua_istable(L, 1) && (lua_getfield(L, 1, "enable_timing"), lua_toboolean(L, -1));
  int d = 0;
  if (cu_fail("torch.cuda.Event", cudaGetDevice(&d))) raise(L);
  lua_event *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->e = 0;
  u->device = d;
  u->timing = timing;
  luaL_setmetatable(L, "torch.cuda.Event");
  if (cu_fail("torch.cuda.Event", cudaEventCreateWithFlags(&u->e, timing ? cudaEventDefault : cudaEventDisableTiming)))
    raise(L);
  return 1;
}

static int l_event_gc(lua_State *L) {
  lua_event *u = check_event(L, 1);
  if (u->e) cudaEventDestroy(u->e);
  u->e = 0;
  return 0;
}

/* e:record(stream): on the stream, default the device's current one */
static int l_event_record(lua_State *L) {
  lua_event *u = check_event(L, 1);
  cudaStream_t s = lua_isnoneornil(L, 2) ? cu_stream(u->device) : check_stream(L, 2)->s;
  if (cu_fail("Event:record", cudaEventRecord(u->e, s))) raise(L);
  lua_settop(L, 1);
  return 1;
}

static int l_event_synchronize(lua_State *L) {
  if (cu_fail("Event:synchronize", cudaEventSynchronize(check_event(L, 1)->e))) raise(L);
  return 0;
}

static int l_event_query(lua_State *L) {
  cudaError_t e = cudaEventQuery(check_event(L, 1)->e);
  if (e != cudaSuccess && e != cudaErrorNotReady && cu_fail("Event:query", e)) raise(L);
  lua_pushboolean(L, e == cudaSuccess);
  return 1;
}

/* start:elapsed_time(stop): milliseconds between the two recorded events */
static int l_event_elapsed(lua_State *L) {
  lua_event *a = check_event(L, 1), *b = check_event(L, 2);
  if (!a->timing || !b->timing)
    return luaL_error(L, "Event:elapsed_time: both events need torch.cuda.Event({enable_timing = true})");
  float ms = 0;
  if (cu_fail("Event:elapsed_time", cudaEventElapsedTime(&ms, a->e, b->e))) raise(L);
  lua_pushnumber(L, ms);
  return 1;
}

static void stream_event_metatables(lua_State *L) {
  static const luaL_Reg stream_methods[] = {
    {"synchronize", l_stream_synchronize}, {"query", l_stream_query}, {"wait_event", l_stream_wait_event},
    {NULL, NULL}};
  static const luaL_Reg event_methods[] = {
    {"record", l_event_record}, {"synchronize", l_event_synchronize}, {"query", l_event_query},
    {"elapsed_time", l_event_elapsed}, {NULL, NULL}};
  if (luaL_newmetatable(L, "torch.cuda.Stream")) {
    luaL_newlib(L, stream_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_stream_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, l_stream_eq);
    lua_setfield(L, -2, "__eq");
    lua_pushcfunction(L, l_stream_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, "torch.cuda.Event")) {
    luaL_newlib(L, event_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_event_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
}

static const mt_device_backend backend = {"cuda", cu_alloc, cu_free, cu_copy, cu_fill};
/* the ops with parameters, the selections, the index ops, the puts, the masks, the views,
   the joins, the nn kernels and the random ops are the CPU's entry points, which hand GPU
   tensors to the extra kernels below or to the device's copies */
static const mt_device_kernels kernels = {.unary = cu_unary, .binary = cu_binary, .reduce = cu_reduce,
                                          .along = cu_along, .select = mt_selection, .product = cu_product,
                                          .add_product = cu_add_product, .param = mt_param, .index = mt_index_op,
                                          .put = mt_put_op, .mask = mt_mask_op, .view = mt_view_op,
                                          .join = mt_join_op, .nn = mt_nn_op,
                                          .random = mt_random_op};

static const mt_device_extra extra = {
  .where = cu_where, .activation_grad = cu_activation_grad, .param_loop = cu_param_loop, .binary = cu_binary,
  .nonzero = cu_nonzero, .select_along = cu_select_along, .separable = cu_separable,
  .im2col = cu_im2col, .col2im = cu_col2im, .draw = cu_draw,
  .index_select = cu_index_select,
  .index_add = cu_index_add, .index_copy = cu_index_copy, .index_fill = cu_index_fill, .gather = cu_gather,
  .scatter = cu_scatter, .scatter_fill = cu_scatter_fill, .masked_fill = cu_masked_fill,
  .masked_fill_out = cu_masked_fill_out, .argmax = cu_argmax, .conv2d = cu_conv2d,
  .conv2d_input_grad = cu_conv2d_input_grad, .conv2d_weight_grad = cu_conv2d_weight_grad,
  .max_pool2d_indices = cu_max_pool2d_indices, .adaptive_max_pool2d_indices = cu_adaptive_max_pool2d_indices,
  .max_pool3d_indices = cu_max_pool3d_indices, .avg_pool3d = cu_avg_pool3d, .conv3d = cu_conv3d,
  .conv3d_input_grad = cu_conv3d_input_grad, .conv3d_weight_grad = cu_conv3d_weight_grad,
  .norm_stats = cu_norm_stats, .norm_running_stats = cu_norm_running_stats, .norm_apply = cu_norm_apply,
  .norm_backward = cu_norm_backward};

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
    mt_register_amp_unscale(MT_CUDA, cu_amp_unscale);
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
    {"Stream", l_stream_new},
    {"current_stream", l_current_stream},
    {"default_stream", l_default_stream},
    {"set_stream", l_set_stream},
    {"Event", l_event_new},
    {NULL, NULL},
  };
  stream_event_metatables(L);
  luaL_newlib(L, fns);
  return 1;
}
