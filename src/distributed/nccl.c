/* nccl.c: the NCCL backend of lib/distributed (build/distributed/nccl.so,
   built with the CUDA backend when the toolkit has NCCL; it links cuda.so
   for the tensors' streams and libnccl). Loaded only by
   init_process_group{backend='nccl'}; the same functions as mpi.so, on CUDA
   tensors of the group's device.

   Every collective is enqueued on the current stream of the group's device
   (cu_stream), so it is ordered with the kernels before and after it, and
   returns at once, as PyTorch's NCCL collectives do: the host is not
   blocked, the GPU runs the collective when it gets there. An asynchronous
   one (async_op=true) returns a work holding an event recorded after it:
   wait() makes the current stream wait for it, is_completed() asks the
   event. A non-contiguous tensor goes through a contiguous copy, copied back
   on the same stream. NCCL reduces float16 and bfloat16 itself; int16 has
   no NCCL type and is refused by the reductions (it travels as bytes
   elsewhere); bool is reduced as bytes with max (sum, max: or) and min
   (product, min: and).

   The agreement (common.h) runs before every collective in debug mode
   (TH_DISTRIBUTED_DEBUG=1), and always before those that a rank may refuse
   alone (gather, scatter, uneven all_to_all, the object collectives): the
   signatures travel with ncclAllGather and the host waits for them. Outside
   debug mode a mismatch in the others hangs NCCL; the watchdog then ends
   the process after the timeout, naming the collective, the rank and the
   timeout (a collective that never completes cannot be called off, as
   PyTorch's NCCL watchdog also ends the process).

   Every function returns nothing when it succeeds (asynchronous forms: a
   work; recv: the sender) and a message when it fails
   (lib/distributed/init.lua raises it at the caller's line). */
#include <lua.h>
#include <lauxlib.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <nccl.h>
#include "../cuda/cu.h"
#include "common.h"

#define TENSOR_MT lua_upvalueindex(1)

/* the group the current call runs in (the default group unless use() picked
   a new_group's), and the default group's */
static ncclComm_t comm, world_comm;
static int rank = -1, world = 0, world_rank = -1, world_size = 0;
static int device = -1;                          /* the CUDA device of this rank's groups */
static int debug;
static double timeout_s;

typedef struct group_ud {
  ncclComm_t comm;
  int rank, size;
  struct group_ud *next;
} group_ud;
#define GROUP_MT "distributed.NcclGroup"
static group_ud *groups;

/* ---- messages ---- */
static char msg[MSG_LEN];

/* fail, read_counts and the all_reduce / reduce / broadcast bindings */
#include "bindings.h"

static int nccl_fail(lua_State *L, const char *op, ncclResult_t e, ncclComm_t c) {
  const char *last = c ? ncclGetLastError(c) : NULL;
  return fail(L, op, "NCCL failed: %s%s%s", ncclGetErrorString(e), last && *last ? ": " : "", last ? last : "");
}

static int cuda_fail(lua_State *L, const char *op, cudaError_t e) {
  return fail(L, op, "CUDA failed: %s", cudaGetErrorString(e));
}

/* ---- the watchdog ----
   Every collective records an event after it in a ring of events in flight;
   a thread looks a few times per timeout at the oldest one not done and at
   NCCL's asynchronous errors. A collective that is not done after the
   timeout, or an error NCCL reports (a rank died), ends the process with a
   message naming the collective, the rank and the timeout: the others then
   time out too (or mpirun stops them). */
#define FLIGHT 1024
static struct { cudaEvent_t ev; const char *op; int64_t start_ns; } ring[FLIGHT];
static uint64_t ring_head, ring_tail;            /* next to record; oldest maybe not done */
static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t wd_thread;
static atomic_int wd_stop;
static int wd_running, ring_ready;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *op, const char *why) {
  fprintf(stderr, "distributed.%s (rank %d of %d): %s. This process ends; the other ranks time out or mpirun stops "
          "them.\n", op, world_rank, world_size, why);
  fflush(stderr);
  _exit(1);
}

/* the oldest collectives that are done leave the ring; one past the timeout
   ends the process (with the ring's lock held) */
static void ring_sweep(void) {
  while (ring_tail < ring_head) {
    int slot = (int)(ring_tail % FLIGHT);
    cudaError_t e = cudaEventQuery(ring[slot].ev);
    if (e == cudaSuccess) { ring_tail++; continue; }
    if (e != cudaErrorNotReady) die(ring[slot].op, cudaGetErrorString(e));
    if ((double)(now_ns() - ring[slot].start_ns) >= timeout_s * 1e9) {
      char why[200];
      snprintf(why, sizeof why, "timed out after %g s (init_process_group's timeout=): another rank skipped this "
               "collective, is stuck or died", timeout_s);
      die(ring[slot].op, why);
    }
    break;
  }
}

static void *watchdog(void *arg) {
  (void)arg;
  cudaSetDevice(device);
  double step = timeout_s / 20 < 0.01 ? 0.01 : timeout_s / 20 > 1 ? 1 : timeout_s / 20;
  struct timespec nap = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
  while (!atomic_load(&wd_stop)) {
    nanosleep(&nap, NULL);
    pthread_mutex_lock(&ring_mu);
    ring_sweep();
    ncclResult_t async = ncclSuccess;
    if (world_comm && ncclCommGetAsyncError(world_comm, &async) == ncclSuccess && async != ncclSuccess &&
        async != ncclInProgress)
      die(ring_tail < ring_head ? ring[ring_tail % FLIGHT].op : "collective", ncclGetErrorString(async));
    pthread_mutex_unlock(&ring_mu);
  }
  return NULL;
}

/* records that op was just enqueued on stream s (the ring full: waits for
   its oldest first) */
static int in_flight(lua_State *L, const char *op, cudaStream_t s) {
  pthread_mutex_lock(&ring_mu);
  while (ring_head - ring_tail >= FLIGHT) {
    int slot = (int)(ring_tail % FLIGHT);
    pthread_mutex_unlock(&ring_mu);
    cudaEventSynchronize(ring[slot].ev);
    pthread_mutex_lock(&ring_mu);
    ring_sweep();
  }
  int slot = (int)(ring_head % FLIGHT);
  cudaError_t e = cudaEventRecord(ring[slot].ev, s);
  if (e == cudaSuccess) {
    ring[slot].op = op;
    ring[slot].start_ns = now_ns();
    ring_head++;
  }
  pthread_mutex_unlock(&ring_mu);
  return e == cudaSuccess ? 0 : cuda_fail(L, op, e);
}

/* ---- arguments ---- */
static int check_init(lua_State *L, const char *op) {
  if (!world_comm)
    return fail(L, op, "the default process group is not initialised: call "
                "distributed.init_process_group{backend='nccl'} first");
  return 0;
}

static mt_tensor *check_tensor(lua_State *L, int i, const char *op) {
  mt_tensor *t = lua_touserdata(L, i);
  int ok = t && lua_getmetatable(L, i) && lua_rawequal(L, -1, TENSOR_MT);
  if (t && ok) lua_pop(L, 1);
  if (!ok || !t->storage) {
    lua_pushfstring(L, "distributed.%s: expected a tensor, got %s", op, luaL_typename(L, i));
    lua_error(L);
  }
  if (t->storage->device != MT_CUDA || t->storage->device_index != device) {
    char dev[32];
    mt_tensor_device_str(t, dev, sizeof dev);
    lua_pushfstring(L, "distributed.%s (rank %d of %d): the tensor is on %s; this rank's NCCL group works on "
                    "cuda:%d (move it there with :to('cuda:%d'), or use backend='mpi' for CPU tensors)", op, rank,
                    world, dev, device, device);
    lua_error(L);
  }
  return t;
}

/* the NCCL type a reduction of dtype runs in (bool: bytes), or -1 */
static int red_type(int dtype, ncclDataType_t *type) {
  switch (dtype) {
    case MT_FLOAT32: *type = ncclFloat32; return 0;
    case MT_FLOAT64: *type = ncclFloat64; return 0;
    case MT_FLOAT16: *type = ncclFloat16; return 0;
    case MT_BFLOAT16: *type = ncclBfloat16; return 0;
    case MT_INT8: *type = ncclInt8; return 0;
    case MT_UINT8: case MT_BOOL: *type = ncclUint8; return 0;
    case MT_INT32: *type = ncclInt32; return 0;
    case MT_INT64: *type = ncclInt64; return 0;
    default: return -1;
  }
}

static ncclRedOp_t red_op(int op, int dtype) {
  if (dtype == MT_BOOL) return op == OP_SUM || op == OP_MAX ? ncclMax : ncclMin;   /* or, and */
  return op == OP_SUM ? ncclSum : op == OP_PRODUCT ? ncclProd : op == OP_MIN ? ncclMin : ncclMax;
}


/* bytes of n elements of dtype, checked */
static int nbytes_of(lua_State *L, const char *op, int64_t n, int dtype, size_t *out) {
  int64_t b;
  *out = 0;
  if (mt_mul_size(op, n, mt_dtypes[dtype].size, &b)) return fail(L, op, "%s", mt_error());
  *out = (size_t)b;
  return 0;
}

/* ---- the agreement ---- */
static int refused;

/* every rank's signature through ncclAllGather; the host waits for them */
static int agree_now(lua_State *L, const char *op, int coll, int rop, int root, const mt_tensor *t) {
  sig s;
  sig_fill(&s, coll, rop, root, t, refused ? rank + 1 : 0);
  int64_t mine[SIG_LEN];
  sig_pack(&s, mine);
  int64_t nb;
  if (mt_mul_size(op, (int64_t)world + 1, SIG_LEN * (int64_t)sizeof(int64_t), &nb)) return fail(L, op, "%s", mt_error());
  int64_t *host = malloc((size_t)nb);
  int64_t *dev = cu_alloc((size_t)nb, device);
  if (!host || !dev) {
    free(host);
    if (dev) cu_free(dev, (size_t)nb, device);
    return fail(L, op, "out of memory");
  }
  cudaStream_t st = cu_stream(device);
  int r = 0;
  cudaError_t ce = cudaMemcpyAsync(dev, mine, sizeof mine, cudaMemcpyHostToDevice, st);
  ncclResult_t ne = ncclSuccess;
  if (ce == cudaSuccess) ne = ncclAllGather(dev, dev + SIG_LEN, SIG_LEN, ncclInt64, comm, st);
  if (ce == cudaSuccess && ne == ncclSuccess) {
    if (in_flight(L, op, st)) r = 1;
    else {
      ce = cudaMemcpyAsync(host, dev + SIG_LEN, (size_t)nb - sizeof mine, cudaMemcpyDeviceToHost, st);
      if (ce == cudaSuccess) ce = cudaStreamSynchronize(st);
    }
  }
  if (!r && ce != cudaSuccess) r = cuda_fail(L, op, ce);
  else if (!r && ne != ncclSuccess) r = nccl_fail(L, op, ne, comm);
  if (!r) {
    int a = sig_compare(op, &s, host, rank, world, msg);
    if (a == 1) lua_pushstring(L, msg);
    r = a != 0;
  }
  cu_free(dev, (size_t)nb, device);
  free(host);
  return r;
}

/* the agreement before a collective: in debug mode, or always (must) */
static int check_shapes(lua_State *L, const char *op, int coll, int rop, int root, const mt_tensor *t, int must) {
  if (!debug && !must) return 0;
  return agree_now(L, op, coll, rop, root, t);
}

/* ---- works (async_op=true) ---- */
typedef struct {
  const char *name;
  cudaEvent_t ev;
  int source;                                    /* recv: the sender */
  int done;
} work;
#define WORK_MT "distributed.NcclWork"

/* a work over what was just enqueued on st, pushed */
static int push_work(lua_State *L, const char *name, cudaStream_t st, int source) {
  work *w = lua_newuserdatauv(L, sizeof *w, 0);
  memset(w, 0, sizeof *w);
  w->name = name;
  w->source = source;
  cudaError_t e = cudaEventCreateWithFlags(&w->ev, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventRecord(w->ev, st);
  if (e != cudaSuccess) { w->done = 1; lua_pop(L, 1); return cuda_fail(L, name, e); }
  luaL_setmetatable(L, WORK_MT);
  return 1;
}

/* wait(): the current stream waits for the work (the host does not) */
static int l_work_wait(lua_State *L) {
  work *w = luaL_checkudata(L, 1, WORK_MT);
  if (w->done) return 0;
  cudaError_t e = cudaStreamWaitEvent(cu_stream(device), w->ev, 0);
  if (e != cudaSuccess) return cuda_fail(L, w->name, e);
  w->done = 1;
  return 0;
}

/* is_completed(): whether the GPU has run it */
static int l_work_test(lua_State *L) {
  work *w = luaL_checkudata(L, 1, WORK_MT);
  if (w->done) { lua_pushboolean(L, cudaEventQuery(w->ev) != cudaErrorNotReady); return 1; }
  cudaError_t e = cudaEventQuery(w->ev);
  if (e == cudaErrorNotReady) { lua_pushboolean(L, 0); return 1; }
  lua_pushboolean(L, 1);
  if (e != cudaSuccess) return 1 + cuda_fail(L, w->name, e);
  w->done = 1;
  return 1;
}

static int l_work_source(lua_State *L) {
  work *w = luaL_checkudata(L, 1, WORK_MT);
  lua_pushinteger(L, w->source);
  return 1;
}

static int l_work_gc(lua_State *L) {
  work *w = luaL_checkudata(L, 1, WORK_MT);
  if (w->ev) cudaEventDestroy(w->ev);
  w->ev = NULL;
  return 0;
}

/* the end of a collective enqueued on st: in the watchdog's ring, then a
   work (async) or nothing */
static int enqueued(lua_State *L, const char *name, cudaStream_t st, int async, int source) {
  if (in_flight(L, name, st)) return 1;
  return async ? push_work(L, name, st, source) : 0;
}

/* ---- the process group ---- */

/* unique_id() -> the 128 bytes rank 0 hands to the others */
static int l_unique_id(lua_State *L) {
  ncclUniqueId id;
  ncclResult_t e = ncclGetUniqueId(&id);
  if (e != ncclSuccess) return luaL_error(L, "distributed.init_process_group: NCCL failed: %s", ncclGetErrorString(e));
  lua_pushlstring(L, id.internal, sizeof id.internal);
  return 1;
}

/* init(debug, timeout, rank, world, device, id) -> rank, world | nil, message */
static int l_init(lua_State *L) {
  const char *op = "init_process_group";
  if (world_comm) { lua_pushnil(L); lua_pushstring(L, "the default process group is already initialised"); return 2; }
  debug = lua_toboolean(L, 1);
  timeout_s = luaL_checknumber(L, 2);
  int r = (int)luaL_checkinteger(L, 3), w = (int)luaL_checkinteger(L, 4), dev = (int)luaL_checkinteger(L, 5);
  size_t idlen;
  const char *id = luaL_checklstring(L, 6, &idlen);
  ncclUniqueId uid;
  if (idlen != sizeof uid.internal) return luaL_error(L, "distributed.%s: the NCCL id has %d bytes, not %d", op,
                                                      (int)idlen, (int)sizeof uid.internal);
  memcpy(uid.internal, id, sizeof uid.internal);
  if (cu_set_device(op, dev)) { lua_pushnil(L); lua_pushstring(L, mt_error()); return 2; }
  device = dev;
  rank = r; world = w;
  if (!ring_ready) {
    for (int i = 0; i < FLIGHT; i++) {
      cudaError_t e = cudaEventCreateWithFlags(&ring[i].ev, cudaEventDisableTiming);
      if (e != cudaSuccess) { lua_pushnil(L); lua_pushfstring(L, "CUDA failed: %s", cudaGetErrorString(e)); return 2; }
    }
    ring_ready = 1;
  }
  /* a blocking communicator (NCCL's default, as PyTorch's): the rendezvous has
     already seen every rank arrive, so the initialisation does not wait for a
     missing one */
  ncclComm_t c = NULL;
  ncclResult_t e = ncclCommInitRank(&c, w, uid, r);
  if (e != ncclSuccess) {
    lua_pushnil(L);
    lua_pushfstring(L, "NCCL failed: %s", ncclGetErrorString(e));
    return 2;
  }
  comm = world_comm = c;
  world_rank = rank;
  world_size = world;
  ring_head = ring_tail = 0;
  atomic_store(&wd_stop, 0);
  wd_running = pthread_create(&wd_thread, NULL, watchdog, NULL) == 0;
  lua_pushinteger(L, rank);
  lua_pushinteger(L, world);
  return 2;
}

/* destroy(): waits for what is in flight, frees the groups' communicators */
static int l_destroy(lua_State *L) {
  comm = world_comm; rank = world_rank; world = world_size;
  if (check_init(L, "destroy_process_group")) return 1;
  cudaError_t ce = cudaStreamSynchronize(cu_stream(device));
  if (wd_running) {
    atomic_store(&wd_stop, 1);
    pthread_join(wd_thread, NULL);
    wd_running = 0;
  }
  for (group_ud *g = groups; g; g = g->next) {
    if (g->comm) ncclCommDestroy(g->comm);
    g->comm = NULL;                              /* a Lua value may still point here: kept, marked freed */
  }
  ncclResult_t e = ncclCommFinalize(world_comm);
  ncclCommDestroy(world_comm);
  comm = world_comm = NULL;
  rank = world_rank = -1;
  world = world_size = 0;
  if (ce != cudaSuccess) return cuda_fail(L, "destroy_process_group", ce);
  if (e != ncclSuccess) return nccl_fail(L, "destroy_process_group", e, NULL);
  return 0;
}

/* ---- the collectives ---- */

/* barrier([async]): a one-element all-reduce; the blocking form waits for it
   on the host, as PyTorch's NCCL barrier synchronises the device */
static int l_barrier(lua_State *L) {
  const char *op = "barrier";
  if (check_init(L, op)) return 1;
  mt_tensor none = {0};
  if (check_shapes(L, op, COLL_BARRIER, -1, -1, &none, 0)) return 1;
  int async = lua_toboolean(L, 1);
  float *one = cu_alloc(sizeof(float), device);
  if (!one) return fail(L, op, "%s", mt_error());
  cudaStream_t st = cu_stream(device);
  ncclResult_t e = ncclAllReduce(one, one, 1, ncclFloat32, ncclSum, comm, st);
  int r = e != ncclSuccess ? nccl_fail(L, op, e, comm) : enqueued(L, op, st, async, -1);
  cu_free(one, sizeof(float), device);                  /* the allocator keeps stream order */
  if (r || async) return r;
  cudaError_t ce = cudaStreamSynchronize(st);
  return ce == cudaSuccess ? 0 : cuda_fail(L, op, ce);
}

/* all_reduce / reduce / broadcast in place (reduce: the result on root only,
   broadcast: root's tensor everywhere) */
static int rooted_common(lua_State *L, const char *name, mt_tensor *t, int coll, int op, int root, int async) {
  if (check_init(L, name)) return 1;
  int write = coll == COLL_ALL_REDUCE || (coll == COLL_REDUCE) == (rank == root);
  ncclDataType_t type = ncclUint8;
  if (coll != COLL_BROADCAST && red_type(t->dtype, &type))
    return fail(L, name, "NCCL cannot reduce %s tensors (no such NCCL type): convert to int32 first",
                mt_dtypes[t->dtype].name);
  if (check_shapes(L, name, coll, op, root, t, 0)) return 1;
  buffer b;
  if (buf_open(L, name, &b, t, t->dtype, write)) return 1;
  cudaStream_t st = cu_stream(device);
  int64_t n = mt_numel(&b.t);
  size_t count = (size_t)n;
  if (coll == COLL_BROADCAST && nbytes_of(L, name, n, t->dtype, &count)) { mt_tensor_release(&b.t); return 1; }
  void *p = mt_data(&b.t);
  ncclResult_t e = coll == COLL_ALL_REDUCE ? ncclAllReduce(p, p, count, type, red_op(op, t->dtype), comm, st)
                 : coll == COLL_REDUCE     ? ncclReduce(p, p, count, type, red_op(op, t->dtype), root, comm, st)
                                           : ncclBroadcast(p, p, count, ncclUint8, root, comm, st);
  if (e != ncclSuccess) { mt_tensor_release(&b.t); return nccl_fail(L, name, e, comm); }
  if (buf_finish(L, name, &b, t, write)) return 1;
  return enqueued(L, name, st, async, -1);
}

/* the object collectives may be refused on one rank alone: they agree first */
static int is_object_call(const char *name) {
  return !strcmp(name, "all_gather_object") || !strcmp(name, "broadcast_object_list");
}

/* the two buffers of a collective from in to out (out written); in is
   cloned when it shares out's storage (NCCL's buffers must not overlap
   unless in place, which these callers do not ask for) */
static int open_pair(lua_State *L, const char *name, buffer *bi, const mt_tensor *in, buffer *bo, const mt_tensor *out) {
  if (buf_open(L, name, bo, out, out->dtype, 1)) return 1;
  if (buf_open(L, name, bi, in, in->dtype, 0)) { mt_tensor_release(&bo->t); return 1; }
  if (bi->t.storage == bo->t.storage) {
    mt_tensor c = {0};
    if (mt_clone(&c, &bi->t)) { mt_tensor_release(&bi->t); mt_tensor_release(&bo->t); return fail(L, name, "%s", mt_error()); }
    mt_tensor_release(&bi->t);
    bi->t = c;
  }
  return 0;
}

/* all_gather(out, in, name): out (world x numel(in)) receives every rank's in */
static int l_all_gather(lua_State *L) {
  const char *name = luaL_optstring(L, 3, "all_gather");
  mt_tensor *out = check_tensor(L, 1, name);
  mt_tensor *t = check_tensor(L, 2, name);
  if (check_init(L, name)) return 1;
  if (blocks_check(name, rank, world, out, t, BLOCKS_GATHER, msg)) { lua_pushstring(L, msg); return 1; }
  int64_t n = mt_numel(t);
  if (check_shapes(L, name, COLL_ALL_GATHER, -1, -1, t, is_object_call(name))) return 1;
  size_t bytes;
  if (nbytes_of(L, name, n, t->dtype, &bytes)) return 1;
  buffer bi, bo;
  if (open_pair(L, name, &bi, t, &bo, out)) return 1;
  cudaStream_t st = cu_stream(device);
  ncclResult_t e = ncclAllGather(mt_data(&bi.t), mt_data(&bo.t), bytes, ncclUint8, comm, st);
  mt_tensor_release(&bi.t);
  if (e != ncclSuccess) { mt_tensor_release(&bo.t); return nccl_fail(L, name, e, comm); }
  if (buf_finish(L, name, &bo, out, 1)) return 1;
  return enqueued(L, name, st, 0, -1);
}

/* reduce_scatter(out, in, op, name): out becomes the reduction of in's
   rank-th block over the ranks */
static int l_reduce_scatter(lua_State *L) {
  const char *name = luaL_optstring(L, 4, "reduce_scatter");
  mt_tensor *out = check_tensor(L, 1, name);
  mt_tensor *in = check_tensor(L, 2, name);
  int op = luaL_checkoption(L, 3, NULL, op_names);
  if (check_init(L, name)) return 1;
  if (blocks_check(name, rank, world, out, in, BLOCKS_SCATTER, msg)) { lua_pushstring(L, msg); return 1; }
  int64_t n = mt_numel(out);
  ncclDataType_t type;
  if (red_type(out->dtype, &type))
    return fail(L, name, "NCCL cannot reduce %s tensors (no such NCCL type): convert to int32 first",
                mt_dtypes[out->dtype].name);
  if (check_shapes(L, name, COLL_REDUCE_SCATTER, op, -1, out, 0)) return 1;
  buffer bi, bo;
  if (open_pair(L, name, &bi, in, &bo, out)) return 1;
  cudaStream_t st = cu_stream(device);
  ncclResult_t e = ncclReduceScatter(mt_data(&bi.t), mt_data(&bo.t), (size_t)n, type, red_op(op, out->dtype), comm, st);
  mt_tensor_release(&bi.t);
  if (e != ncclSuccess) { mt_tensor_release(&bo.t); return nccl_fail(L, name, e, comm); }
  if (buf_finish(L, name, &bo, out, 1)) return 1;
  return enqueued(L, name, st, 0, -1);
}

/* grouped sends and receives: scount[q] bytes from sp + soff[q] go to rank q,
   rcount[q] bytes from rank q into rp + roff[q] (NULL counts: nothing that
   way; a zero count: no message) */
static ncclResult_t exchange(const char *sp, const size_t *scount, const size_t *soff, char *rp, const size_t *rcount,
                             const size_t *roff, cudaStream_t st) {
  ncclResult_t e = ncclGroupStart();
  for (int q = 0; q < world && e == ncclSuccess; q++) {
    if (scount && scount[q]) e = ncclSend(sp + soff[q], scount[q], ncclUint8, q, comm, st);
    if (e == ncclSuccess && rcount && rcount[q]) e = ncclRecv(rp + roff[q], rcount[q], ncclUint8, q, comm, st);
  }
  ncclResult_t g = ncclGroupEnd();
  return e != ncclSuccess ? e : g;
}

/* per-rank counts and offsets: n blocks of `bytes` each (NULL with mt_error()
   set: out of memory, or offsets past 2^63) */
static size_t *blocks(int n, size_t bytes) {
  size_t *c = calloc((size_t)n * 2, sizeof *c);
  if (!c) { mt_fail("out of memory"); return NULL; }
  for (int q = 0; q < n; q++) {
    int64_t off;
    if (mt_mul_size("NCCL blocks", q, (int64_t)bytes, &off)) { free(c); return NULL; }
    c[q] = bytes;
    c[n + q] = (size_t)off;
  }
  return c;
}

/* gather(t, out | nil, dst): dst's out receives every rank's t in rank order */
static int l_gather(lua_State *L) {
  const char *name = "gather";
  mt_tensor *t = check_tensor(L, 1, name);
  int dst = (int)luaL_checkinteger(L, 3);
  if (check_init(L, name)) return 1;
  mt_tensor *out = rank == dst ? check_tensor(L, 2, name) : NULL;
  int64_t n = mt_numel(t), total;
  if (mt_mul_size(name, n, world, &total)) return fail(L, name, "%s", mt_error());
  if (out && (out->dtype != t->dtype || mt_numel(out) != total))
    return fail(L, name, "the gather buffer must hold world size (%d) x the input's %lld elements of %s", world,
                (long long)n, mt_dtypes[t->dtype].name);
  if (check_shapes(L, name, COLL_GATHER, -1, dst, t, 1)) return 1;
  size_t bytes;
  if (nbytes_of(L, name, n, t->dtype, &bytes)) return 1;
  size_t *c = blocks(world, bytes);
  if (!c) return fail(L, name, "%s", mt_error());
  buffer bi, bo;
  int r = out ? open_pair(L, name, &bi, t, &bo, out) : buf_open(L, name, &bi, t, t->dtype, 0);
  if (r) { free(c); return 1; }
  cudaStream_t st = cu_stream(device);
  ncclResult_t e;
  if (out) {
    c[rank] = 0;                                 /* its own block is copied */
    e = exchange(NULL, NULL, NULL, mt_data(&bo.t), c, c + world, st);
    if (e == ncclSuccess) {
      cudaError_t ce = cudaMemcpyAsync(mt_data(&bo.t) + c[world + rank], mt_data(&bi.t), bytes,
                                       cudaMemcpyDeviceToDevice, st);
      if (ce != cudaSuccess) { free(c); mt_tensor_release(&bi.t); mt_tensor_release(&bo.t); return cuda_fail(L, name, ce); }
    }
  } else {
    e = bytes ? ncclSend(mt_data(&bi.t), bytes, ncclUint8, dst, comm, st) : ncclSuccess;
  }
  free(c);
  mt_tensor_release(&bi.t);
  if (e != ncclSuccess) { if (out) mt_tensor_release(&bo.t); return nccl_fail(L, name, e, comm); }
  if (out && buf_finish(L, name, &bo, out, 1)) return 1;
  return enqueued(L, name, st, 0, -1);
}

/* scatter(t, in | nil, src): every rank's t receives its block of src's in */
static int l_scatter(lua_State *L) {
  const char *name = "scatter";
  mt_tensor *t = check_tensor(L, 1, name);
  int src = (int)luaL_checkinteger(L, 3);
  if (check_init(L, name)) return 1;
  mt_tensor *in = rank == src ? check_tensor(L, 2, name) : NULL;
  int64_t n = mt_numel(t), total;
  if (mt_mul_size(name, n, world, &total)) return fail(L, name, "%s", mt_error());
  if (in && (in->dtype != t->dtype || mt_numel(in) != total))
    return fail(L, name, "the scatter buffer must hold world size (%d) x the output's %lld elements of %s", world,
                (long long)n, mt_dtypes[t->dtype].name);
  if (check_shapes(L, name, COLL_SCATTER, -1, src, t, 1)) return 1;
  size_t bytes;
  if (nbytes_of(L, name, n, t->dtype, &bytes)) return 1;
  size_t *c = blocks(world, bytes);
  if (!c) return fail(L, name, "%s", mt_error());
  buffer bi, bo;
  int r = in ? open_pair(L, name, &bi, in, &bo, t) : buf_open(L, name, &bo, t, t->dtype, 1);
  if (r) { free(c); return 1; }
  cudaStream_t st = cu_stream(device);
  ncclResult_t e;
  if (in) {
    c[rank] = 0;                                 /* its own block is copied */
    e = exchange(mt_data(&bi.t), c, c + world, NULL, NULL, NULL, st);
    if (e == ncclSuccess) {
      cudaError_t ce = cudaMemcpyAsync(mt_data(&bo.t), mt_data(&bi.t) + c[world + rank], bytes,
                                       cudaMemcpyDeviceToDevice, st);
      if (ce != cudaSuccess) { free(c); mt_tensor_release(&bi.t); mt_tensor_release(&bo.t); return cuda_fail(L, name, ce); }
    }
    mt_tensor_release(&bi.t);
  } else {
    e = bytes ? ncclRecv(mt_data(&bo.t), bytes, ncclUint8, src, comm, st) : ncclSuccess;
  }
  free(c);
  if (e != ncclSuccess) { mt_tensor_release(&bo.t); return nccl_fail(L, name, e, comm); }
  if (buf_finish(L, name, &bo, t, 1)) return 1;
  return enqueued(L, name, st, 0, -1);
}

/* all_to_all(out, in, name): in's r-th block goes to rank r, out's r-th
   block comes from rank r */
static int l_all_to_all(lua_State *L) {
  const char *name = luaL_optstring(L, 3, "all_to_all");
  mt_tensor *out = check_tensor(L, 1, name);
  mt_tensor *in = check_tensor(L, 2, name);
  if (check_init(L, name)) return 1;
  if (blocks_check(name, rank, world, out, in, BLOCKS_EVEN, msg)) { lua_pushstring(L, msg); return 1; }
  int64_t n = mt_numel(in);
  if (check_shapes(L, name, COLL_ALL_TO_ALL, -1, -1, in, 0)) return 1;
  size_t bytes;
  if (nbytes_of(L, name, n / world, in->dtype, &bytes)) return 1;
  size_t *c = blocks(world, bytes);
  if (!c) return fail(L, name, "%s", mt_error());
  buffer bi, bo;
  if (open_pair(L, name, &bi, in, &bo, out)) { free(c); return 1; }
  cudaStream_t st = cu_stream(device);
  ncclResult_t e = exchange(mt_data(&bi.t), c, c + world, mt_data(&bo.t), c, c + world, st);
  free(c);
  mt_tensor_release(&bi.t);
  if (e != ncclSuccess) { mt_tensor_release(&bo.t); return nccl_fail(L, name, e, comm); }
  if (buf_finish(L, name, &bo, out, 1)) return 1;
  return enqueued(L, name, st, 0, -1);
}


/* all_to_allv(out, in, send_counts, recv_counts, name): uneven blocks. The
   ranks agree first, then exchange their counts (one all-to-all of int64
   the host waits for): a rank that sends another count than its receiver
   expects makes every rank raise, naming both. */
static int l_all_to_allv(lua_State *L) {
  const char *name = luaL_optstring(L, 5, "all_to_all_single");
  mt_tensor *out = check_tensor(L, 1, name);
  mt_tensor *in = check_tensor(L, 2, name);
  if (check_init(L, name)) return 1;
  if (out->dtype != in->dtype) { blocks_check(name, rank, world, out, in, BLOCKS_EVEN, msg); lua_pushstring(L, msg); return 1; }
  int64_t *c = calloc((size_t)world * 3, sizeof(int64_t));
  size_t *b = calloc((size_t)world * 4, sizeof(size_t));
  if (!c || !b) { free(c); free(b); return fail(L, name, "out of memory"); }
  int64_t *sc = c, *rc = c + world, *peer = c + 2 * world, ssum = 0, rsum = 0;
  int r = 0;
  if (read_counts(L, name, 3, "the send counts", sc, &ssum) || read_counts(L, name, 4, "the receive counts", rc, &rsum))
    r = 1;
  else if (ssum != mt_numel(in))
    r = fail(L, name, "the input splits hold %lld elements, the input %lld", (long long)ssum, (long long)mt_numel(in));
  else if (rsum != mt_numel(out))
    r = fail(L, name, "the output splits hold %lld elements, the output %lld", (long long)rsum, (long long)mt_numel(out));
  mt_tensor counts_only = {0};
  counts_only.dtype = in->dtype;
  if (r || check_shapes(L, name, COLL_ALL_TO_ALLV, -1, -1, &counts_only, 1)) { free(c); free(b); return 1; }
  /* what each rank sends me: sc through the device */
  size_t cb = (size_t)world * sizeof(int64_t);
  int64_t *dev = cu_alloc(2 * cb, device);
  if (!dev) { free(c); free(b); return fail(L, name, "%s", mt_error()); }
  cudaStream_t st = cu_stream(device);
  size_t *one = blocks(world, sizeof(int64_t));
  cudaError_t ce = one ? cudaMemcpyAsync(dev, sc, cb, cudaMemcpyHostToDevice, st) : cudaErrorMemoryAllocation;
  ncclResult_t e = ncclSuccess;
  if (ce == cudaSuccess) e = exchange((char *)dev, one, one + world, (char *)(dev + world), one, one + world, st);
  if (ce == cudaSuccess && e == ncclSuccess) {
    if (in_flight(L, name, st)) r = 1;
    else if ((ce = cudaMemcpyAsync(peer, dev + world, cb, cudaMemcpyDeviceToHost, st)) == cudaSuccess)
      ce = cudaStreamSynchronize(st);
  }
  free(one);
  cu_free(dev, 2 * cb, device);
  if (!r && ce != cudaSuccess) r = cuda_fail(L, name, ce);
  else if (!r && e != ncclSuccess) r = nccl_fail(L, name, e, comm);
  for (int q = 0; q < world && !r; q++)
    if (peer[q] != rc[q])
      r = fail(L, name, "rank %d sends %lld elements to rank %d, which expects %lld (every rank's input split for "
               "rank r must match rank r's output split for it)", q, (long long)peer[q], rank, (long long)rc[q]);
  /* bytes and offsets: each within the tensors' own byte sizes, checked all the same */
  int64_t esize = mt_dtypes[in->dtype].size, so = 0, ro = 0, sb, rb;
  for (int q = 0; q < world && !r; q++) {
    if (mt_mul_size(name, sc[q], esize, &sb) || mt_mul_size(name, rc[q], esize, &rb) ||
        mt_add_size(name, so, sb, &so) || mt_add_size(name, ro, rb, &ro)) {
      r = fail(L, name, "%s", mt_error());
      break;
    }
    b[q] = (size_t)sb; b[world + q] = (size_t)(so - sb);
    b[2 * world + q] = (size_t)rb; b[3 * world + q] = (size_t)(ro - rb);
  }
  free(c);
  buffer bi, bo;
  if (r || open_pair(L, name, &bi, in, &bo, out)) { free(b); return 1; }
  e = exchange(mt_data(&bi.t), b, b + world, mt_data(&bo.t), b + 2 * world, b + 3 * world, st);
  free(b);
  mt_tensor_release(&bi.t);
  if (e != ncclSuccess) { mt_tensor_release(&bo.t); return nccl_fail(L, name, e, comm); }
  if (buf_finish(L, name, &bo, out, 1)) return 1;
  return enqueued(L, name, st, 0, -1);
}

/* send(t, dst, tag[, async]) / recv(t, src, tag[, async]): NCCL has no tags
   (they are accepted and not matched) and no receive from any rank */
static int p2p(lua_State *L, int is_recv) {
  int async = lua_toboolean(L, 4);
  const char *name = is_recv ? (async ? "irecv" : "recv") : (async ? "isend" : "send");
  mt_tensor *t = check_tensor(L, 1, name);
  if (check_init(L, name)) return 1;
  if (lua_isnoneornil(L, 2))
    return fail(L, name, "the NCCL backend receives from a given rank only: pass src=");
  int peer = (int)luaL_checkinteger(L, 2);
  size_t bytes;
  if (nbytes_of(L, name, mt_numel(t), t->dtype, &bytes)) return 1;
  buffer b;
  if (buf_open(L, name, &b, t, t->dtype, is_recv)) return 1;
  cudaStream_t st = cu_stream(device);
  ncclResult_t e = ncclSuccess;
  if (bytes) e = is_recv ? ncclRecv(mt_data(&b.t), bytes, ncclUint8, peer, comm, st)
                         : ncclSend(mt_data(&b.t), bytes, ncclUint8, peer, comm, st);
  if (e != ncclSuccess) { mt_tensor_release(&b.t); return nccl_fail(L, name, e, comm); }
  if (buf_finish(L, name, &b, t, is_recv)) return 1;
  if (enqueued(L, name, st, async, peer)) return 1;
  if (async) return 1;
  if (is_recv) { lua_pushinteger(L, peer); return 1; }
  return 0;
}
static int l_send(lua_State *L) { return p2p(L, 0); }
static int l_recv(lua_State *L) { return p2p(L, 1); }

/* refuse(name): this rank's own arguments were refused; it joins the
   agreement the other ranks run, flagged, so that they raise too */
static int l_refuse(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (check_init(L, name)) return 1;
  mt_tensor none = {0};
  int top = lua_gettop(L);
  refused = 1;
  agree_now(L, name, 0, -1, -1, &none);
  refused = 0;
  return lua_gettop(L) > top ? 1 : 0;
}

/* new_group(ranks): ncclCommSplit of the default group (members: color 0) */
static int l_new_group(lua_State *L) {
  const char *name = "new_group";
  comm = world_comm; rank = world_rank; world = world_size;
  if (check_init(L, name)) return 1;
  luaL_checktype(L, 1, LUA_TTABLE);
  int n = (int)luaL_len(L, 1), me = -1;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    if (lua_tointeger(L, -1) == rank) me = i - 1;
    lua_pop(L, 1);
  }
  ncclComm_t sub = NULL;
  ncclResult_t e = ncclCommSplit(comm, me >= 0 ? 0 : NCCL_SPLIT_NOCOLOR, me, &sub, NULL);
  if (e != ncclSuccess) return nccl_fail(L, name, e, comm);
  if (me < 0) { lua_pushboolean(L, 0); return 1; }
  group_ud *g = malloc(sizeof *g);
  if (!g) { ncclCommDestroy(sub); return fail(L, name, "out of memory"); }
  g->comm = sub;
  g->rank = me;
  g->size = n;
  g->next = groups;
  groups = g;
  group_ud **u = lua_newuserdatauv(L, sizeof *u, 0);
  *u = g;
  luaL_setmetatable(L, GROUP_MT);
  return 1;
}

/* use(group or nil): the group the next collectives run in */
static int l_use(lua_State *L) {
  if (lua_isnoneornil(L, 1)) { comm = world_comm; rank = world_rank; world = world_size; return 0; }
  group_ud *g = *(group_ud **)luaL_checkudata(L, 1, GROUP_MT);
  if (!g->comm) return fail(L, "new_group", "this group was freed with the default group");
  comm = g->comm; rank = g->rank; world = g->size;
  return 0;
}

static int l_is_initialized(lua_State *L) { lua_pushboolean(L, world_comm != NULL); return 1; }

/* luaopen_distributed_nccl(): a function that takes the tensor metatable and
   returns the functions (their upvalue: that metatable) */
static int l_bind(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"unique_id", l_unique_id}, {"init", l_init}, {"destroy", l_destroy}, {"barrier", l_barrier},
    {"all_reduce", l_all_reduce}, {"reduce", l_reduce}, {"broadcast", l_broadcast}, {"all_gather", l_all_gather},
    {"gather", l_gather}, {"scatter", l_scatter}, {"reduce_scatter", l_reduce_scatter}, {"all_to_all", l_all_to_all},
    {"all_to_allv", l_all_to_allv}, {"refuse", l_refuse}, {"send", l_send}, {"recv", l_recv},
    {"new_group", l_new_group}, {"use", l_use}, {"is_initialized", l_is_initialized}, {NULL, NULL}};
  static const luaL_Reg wm[] = {{"wait", l_work_wait}, {"is_completed", l_work_test}, {"source", l_work_source},
                                {NULL, NULL}};
  bind_functions(L, fns, GROUP_MT, WORK_MT, wm, l_work_gc);
  int version = 0;
  ncclGetVersion(&version);
  lua_pushfstring(L, "NCCL %d.%d.%d", version / 10000, version / 100 % 100, version % 100);
  lua_setfield(L, -2, "library");
  return 1;
}

int luaopen_distributed_nccl(lua_State *L) {
  lua_pushcfunction(L, l_bind);
  return 1;
}
