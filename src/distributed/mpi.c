/* mpi.c: the MPI backend of lib/distributed (build/distributed/mpi.so, built
   when mpicc is found; the engine itself never links MPI). The collectives
   run MPI directly on tensor memory: a contiguous tensor is passed as it is,
   a non-contiguous one through a contiguous copy that is copied back.
   float16 and bfloat16 have no MPI type: they travel as 16-bit words where
   nothing is computed (broadcast, all_gather) and are reduced through a
   float32 copy. bool is MPI's C bool: sum and max are a logical or, product
   and min a logical and (as PyTorch's NCCL backend).

   Every function returns nothing when it succeeds (the asynchronous forms:
   a work, below; recv: the sender) and a message when it fails
   (lib/distributed/init.lua raises it at the caller's line): the
   communicator returns MPI's errors (MPI_ERRORS_RETURN) rather than abort,
   and MPI_Error_string words them. */
#include <lua.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include "../tensor/mt_tensor.h"
#include "common.h"

/* The group the current call runs in: its communicator, this process's rank
   in it and its size. The default group (a duplicate of MPI_COMM_WORLD) unless
   use() picked a new_group's for the next collective (lib/distributed picks
   before each one). */
static MPI_Comm comm = MPI_COMM_NULL;
static int rank = -1, world = 0;
static MPI_Comm world_comm = MPI_COMM_NULL;  /* the default group's */
static int world_rank = -1, world_size = 0;

/* a group of new_group: its communicator, this rank's rank in it, its size;
   malloc'd, listed and freed by destroy_process_group (MPI_Comm_free is
   collective: never at collection time); its Lua value is a userdata
   holding the pointer */
typedef struct group_ud {
  MPI_Comm comm;
  int rank, size;
  struct group_ud *next;
} group_ud;
#define GROUP_MT "distributed.Group"
static group_ud *groups;
static int debug;                       /* TH_DISTRIBUTED_DEBUG=1: shapes checked before each collective */
#define TENSOR_MT lua_upvalueindex(1)

/* ---- the timeout ----
   A watchdog thread looks, a few times per timeout, at the collective the
   main thread waits in (MPI's blocking calls stay as fast as they are). One
   that waits longer than init_process_group's timeout= cannot be called
   off (MPI may still write into its tensor), so the watchdog prints what
   timed out, naming the collective, the rank and the timeout, and ends the
   process: mpirun then stops every other rank. Never a silent hang. */
static double timeout_s;
static _Atomic uint64_t wd_seq;             /* odd while a collective runs */
static _Atomic int64_t wd_start_ns;
static _Atomic(const char *) wd_op;
static atomic_int wd_stop;
static pthread_t wd_thread;
static int wd_running;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void wd_enter(const char *op) {
  atomic_store(&wd_op, op);
  atomic_store(&wd_start_ns, now_ns());
  atomic_fetch_add(&wd_seq, 1);
}
static void wd_exit(void) { atomic_fetch_add(&wd_seq, 1); }
#define GUARDED(op, call) do { wd_enter(op); e = (call); wd_exit(); } while (0)

static void *watchdog(void *arg) {
  (void)arg;
  double step = timeout_s / 20 < 0.01 ? 0.01 : timeout_s / 20 > 1 ? 1 : timeout_s / 20;
  struct timespec nap = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
  while (!atomic_load(&wd_stop)) {
    nanosleep(&nap, NULL);
    uint64_t seq = atomic_load(&wd_seq);
    if (!(seq & 1)) continue;
    const char *op = atomic_load(&wd_op);
    int64_t start = atomic_load(&wd_start_ns);
    if (atomic_load(&wd_seq) != seq || (double)(now_ns() - start) < timeout_s * 1e9) continue;
    fprintf(stderr, "distributed.%s (rank %d of %d): timed out after %g s (init_process_group's timeout=): "
            "another rank skipped this collective, is stuck or died. This process ends; mpirun stops the "
            "others.\n", op, rank, world, timeout_s);
    fflush(stderr);
    _exit(1);
  }
  return NULL;
}

/* ---- messages (say: common.h) ---- */
static char msg[MSG_LEN];

static int say_mpi(char *out, const char *op, int r, int w, int code) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", code);
  return say(out, op, r, w, "MPI failed: %s (do all ranks pass tensors of the same shape and dtype? "
             "TH_DISTRIBUTED_DEBUG=1 checks)", s);
}

/* fail, read_counts and the all_reduce / reduce / broadcast bindings */
#include "bindings.h"

static int mpi_fail(lua_State *L, const char *op, int code) {
  say_mpi(msg, op, rank, world, code);
  lua_pushstring(L, msg);
  return 1;
}

/* ---- arguments ---- */
static mt_tensor *check_tensor(lua_State *L, int i, const char *op) {
  mt_tensor *t = lua_touserdata(L, i);
  int ok = t && lua_getmetatable(L, i) && lua_rawequal(L, -1, TENSOR_MT);
  if (t && ok) lua_pop(L, 1);
  if (!ok || !t->storage) {
    char b[200];
    snprintf(b, sizeof b, "distributed.%s: expected a tensor, got %s", op, luaL_typename(L, i));
    lua_pushstring(L, b);
    lua_error(L);
  }
  if (t->storage->device != MT_CPU) {
    char b[200], dev[32];
    snprintf(b, sizeof b, "distributed.%s: the tensor is on %s; the MPI backend takes CPU tensors "
             "(init_process_group{backend='nccl'} takes CUDA tensors)", op, mt_tensor_device_str(t, dev, sizeof dev));
    lua_pushstring(L, b);
    lua_error(L);
  }
  return t;
}

/* ---- dtypes and ops ---- */
static MPI_Datatype mpi_type(int dtype) {
  switch (dtype) {
    case MT_FLOAT32: return MPI_FLOAT;
    case MT_FLOAT64: return MPI_DOUBLE;
    case MT_FLOAT16: case MT_BFLOAT16: return MPI_UINT16_T;   /* as words: never reduced */
    case MT_INT8: return MPI_INT8_T;
    case MT_UINT8: return MPI_UINT8_T;
    case MT_INT16: return MPI_INT16_T;
    case MT_INT32: return MPI_INT32_T;
    case MT_INT64: return MPI_INT64_T;
    case MT_BOOL: return MPI_C_BOOL;
    default: return MPI_DATATYPE_NULL;
  }
}


static MPI_Op mpi_op(int op, int dtype) {
  if (dtype == MT_BOOL) return op == OP_SUM || op == OP_MAX ? MPI_LOR : MPI_LAND;
  switch (op) {
    case OP_SUM: return MPI_SUM;
    case OP_PRODUCT: return MPI_PROD;
    case OP_MIN: return MPI_MIN;
    default: return MPI_MAX;
  }
}

/* the dtype a reduction computes in: float32 for the 16-bit floats */
static int reduce_dtype(int dtype) { return dtype == MT_FLOAT16 || dtype == MT_BFLOAT16 ? MT_FLOAT32 : dtype; }


/* a collective or message in flight (async_op=true): see "collectives in
   flight" below */
typedef struct work {
  const char *name;
  int nreq, done, write;
  MPI_Request *req;                 /* the data's requests (a recv's, once its header came) */
  buffer b;
  mt_tensor target;                 /* the caller's tensor (an alias) */
  /* recv: the header (dtype, element count) comes first, then the data is
     received from its sender, into the tensor's buffer when the header
     matches it, else into scratch (and the work fails, naming both) */
  int is_recv, header_done, tag, post_error;
  MPI_Request header_req;
  int64_t header[2], want[2];
  int source;                       /* the sender (MPI_ANY_SOURCE until known) */
  char *scratch;
  struct work *next;                /* recvs whose header has not come yet */
  struct job *j;                    /* an asynchronous collective's, on the communication thread */
} work;
#define WORK_MT "distributed.Work"
static int live_works;              /* started and not finished: destroy_process_group refuses */

/* ---- the agreement (what is compared: common.h) ----
   Outside debug mode one small all-reduce checks op, root, dtype and element
   count: OpenMPI does not reliably report mismatched counts (a rank whose
   buffer is too small can get MPI_ERR_TRUNCATE, or have its heap
   overwritten), so the ranks agree first. A blocking and an asynchronous
   call of the same collective match (both run MPI's blocking call, see "the
   communication thread"). */
static int refused;
static void sig_of(sig *s, int coll, int rop, int root, const mt_tensor *t) {
  sig_fill(s, coll, rop, root, t, refused ? rank + 1 : 0);
}

/* The max of (x, -x) over the ranks gives max and min. */
#define NSIG 6
static int agree_counts(const char *op, const sig *s, MPI_Comm c, int r, int w, char *out) {
  int64_t v[NSIG] = {s->coll, s->rop, s->root, s->dtype, s->numel, s->refused}, mm[2 * NSIG];
  for (int i = 0; i < NSIG; i++) { mm[i] = v[i]; mm[NSIG + i] = -v[i]; }
  int e = MPI_Allreduce(MPI_IN_PLACE, mm, 2 * NSIG, MPI_INT64_T, MPI_MAX, c);
  if (e != MPI_SUCCESS) return say_mpi(out, op, r, w, e);
  if (mm[5] > 0) return refused_elsewhere(out, op, r, w, s, mm[5] - 1);
  static const char *const what[NSIG] = {"collectives", "reduction ops", "src/dst ranks", "dtypes", "element counts",
                                         "?"};
  for (int i = 0; i < NSIG; i++)
    if (mm[i] != -mm[NSIG + i]) {
      if (i == 4)
        return say(out, op, r, w, "the ranks pass different element counts (from %lld to %lld): every rank must "
                   "pass the same shape and dtype (TH_DISTRIBUTED_DEBUG=1 says which rank passes what)",
                   (long long)-mm[NSIG + i], (long long)mm[i]);
      return say(out, op, r, w, "the ranks call with different %s: every rank must call the same collectives in the "
                 "same order, with the same options, shapes and dtypes (TH_DISTRIBUTED_DEBUG=1 says which rank "
                 "passes what)", what[i]);
    }
  return 0;
}

/* debug mode: every rank's signature gathered, so that the message names
   who passes what */
static int agree_shapes(const char *op, const sig *s, MPI_Comm c, int r, int w, char *out) {
  int64_t mine[SIG_LEN];
  sig_pack(s, mine);
  int64_t nbytes;
  if (mt_mul_size(op, w, SIG_LEN * (int64_t)sizeof(int64_t), &nbytes)) return say(out, op, r, w, "%s", mt_error());
  int64_t *all = malloc((size_t)nbytes);
  if (!all) return say(out, op, r, w, "out of memory");
  int e = MPI_Allgather(mine, SIG_LEN, MPI_INT64_T, all, SIG_LEN, MPI_INT64_T, c);
  int res = e != MPI_SUCCESS ? say_mpi(out, op, r, w, e) : sig_compare(op, s, all, r, w, out);
  free(all);
  return res;
}

static int agree(const char *op, const sig *s, MPI_Comm c, int r, int w, char *out) {
  return debug ? agree_shapes(op, s, c, r, w, out) : agree_counts(op, s, c, r, w, out);
}

static void drain(const char *op);

/* the agreement on this thread, for the collective about to run in the
   current group (after the ones queued before it); 1 and a message (none
   when this rank's own arguments were refused) when the ranks disagree */
static int check_shapes(lua_State *L, const char *op, int coll, int rop, int root, const mt_tensor *t) {
  drain(op);
  sig s;
  sig_of(&s, coll, rop, root, t);
  wd_enter(op);
  int r = agree(op, &s, comm, rank, world, msg);
  wd_exit();
  if (r == 1) lua_pushstring(L, msg);
  return r != 0;
}

/* Element counts go to MPI as int: longer tensors go through in pieces. */
#define PIECE ((int64_t)1 << 30)
/* the pieces n elements take (n >= 0), rounding up without an addition that could overflow */
static int64_t pieces_of(int64_t n) { return n / PIECE + (n % PIECE != 0); }

static int check_init(lua_State *L, const char *op) {
  if (world_comm == MPI_COMM_NULL)
    return fail(L, op, "the default process group is not initialised: call "
                "distributed.init_process_group{backend='mpi'} first");
  return 0;
}

/* one piece of a collective's data: MPI's blocking call (me: this rank in c) */
static int data_call(int coll, char *at, int count, MPI_Datatype type, MPI_Op op, int root, int me, MPI_Comm c) {
  switch (coll) {
  case COLL_ALL_REDUCE: return MPI_Allreduce(MPI_IN_PLACE, at, count, type, op, c);
  case COLL_REDUCE:
    return me == root ? MPI_Reduce(MPI_IN_PLACE, at, count, type, op, root, c)
                      : MPI_Reduce(at, NULL, count, type, op, root, c);
  default: return MPI_Bcast(at, count, type, root, c);
  }
}

/* ---- the communication thread ----
   An asynchronous all_reduce, reduce, broadcast or barrier (async_op=true)
   is a job that one thread per process runs, in the order they were
   started, with MPI's blocking calls, agreement first: OpenMPI's
   nonblocking collectives take about twice as long (a 1 MB all-reduce
   between 2 ranks: 405 us against 205 us), and they move only while the
   caller is inside MPI. A collective called on the main thread first waits
   for the jobs queued before it (drain), so each communicator sees the
   same order on every rank; sends and receives do not wait (MPI runs with
   MPI_THREAD_MULTIPLE). Where the MPI library cannot run threads,
   async_op=true completes the collective before it returns its handle. */
typedef struct job {
  const char *name;
  sig s;
  MPI_Comm comm;
  int rank, world;
  MPI_Datatype type;
  MPI_Op op;
  char *p;                           /* the work's buffer, which outlives the job's run */
  int64_t n, esize;
  int status;                        /* 0 done, 1 failed: msg says why, 2 refused here */
  char msg[MSG_LEN];
  atomic_int done;
  struct job *next;
} job;

static int threaded;                 /* the communication thread runs */
static pthread_t ct_thread;
static pthread_mutex_t ct_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ct_wake = PTHREAD_COND_INITIALIZER, ct_done = PTHREAD_COND_INITIALIZER;
static job *ct_head, *ct_tail;       /* queued and running jobs; the head runs */
static atomic_int ct_pending;        /* how many */
static int ct_stop;

static void run_job(job *j) {
  j->status = agree(j->name, &j->s, j->comm, j->rank, j->world, j->msg);
  if (j->status) return;
  int e = j->s.coll == COLL_BARRIER ? MPI_Barrier(j->comm) : MPI_SUCCESS;
  for (int64_t done = 0; e == MPI_SUCCESS && done < j->n; done += PIECE) {
    int count = (int)(j->n - done < PIECE ? j->n - done : PIECE);
    e = data_call(j->s.coll, j->p + done * j->esize, count, j->type, j->op, j->s.root, j->rank, j->comm);
  }
  if (e != MPI_SUCCESS) j->status = say_mpi(j->msg, j->name, j->rank, j->world, e);
}

static void *comm_thread(void *arg) {
  (void)arg;
  pthread_mutex_lock(&ct_mu);
  for (;;) {
    while (!ct_head && !ct_stop) pthread_cond_wait(&ct_wake, &ct_mu);
    if (!ct_head) break;
    job *j = ct_head;
    pthread_mutex_unlock(&ct_mu);
    run_job(j);
    pthread_mutex_lock(&ct_mu);
    ct_head = j->next;
    if (!ct_head) ct_tail = NULL;
    atomic_fetch_sub(&ct_pending, 1);
    atomic_store(&j->done, 1);       /* the work may free j from here on */
    pthread_cond_broadcast(&ct_done);
  }
  pthread_mutex_unlock(&ct_mu);
  return NULL;
}

static void enqueue(job *j) {
  pthread_mutex_lock(&ct_mu);
  if (ct_tail) ct_tail->next = j;
  else ct_head = j;
  ct_tail = j;
  atomic_fetch_add(&ct_pending, 1);
  pthread_cond_signal(&ct_wake);
  pthread_mutex_unlock(&ct_mu);
}

/* waits, under the timeout's watchdog, until j is done (j NULL: every
   queued job) */
static void job_wait(const char *op, job *j) {
  if (j ? atomic_load(&j->done) : !atomic_load(&ct_pending)) return;
  wd_enter(op);
  pthread_mutex_lock(&ct_mu);
  while (j ? !atomic_load(&j->done) : atomic_load(&ct_pending) > 0) pthread_cond_wait(&ct_done, &ct_mu);
  pthread_mutex_unlock(&ct_mu);
  wd_exit();
}

static void drain(const char *op) { if (threaded) job_wait(op, NULL); }

static void comm_thread_stop(void) {
  if (!threaded) return;
  pthread_mutex_lock(&ct_mu);
  ct_stop = 1;
  pthread_cond_signal(&ct_wake);
  pthread_mutex_unlock(&ct_mu);
  pthread_join(ct_thread, NULL);
  threaded = 0;
  ct_stop = 0;
}

static work *work_new(lua_State *L, const char *name, int nreq);

/* an asynchronous collective in the current group (s: this rank's part of
   the agreement, t: its tensor, none for a barrier, reduced or sent in
   dtype): its work, pushed, with its job queued */
static int start_job(lua_State *L, const char *name, const sig *s, mt_tensor *t, int dtype, int write, MPI_Op op) {
  buffer b;
  memset(&b, 0, sizeof b);
  if (t && buf_open(L, name, &b, t, dtype, write)) return 1;
  job *j = calloc(1, sizeof *j);
  if (!j) { if (t) mt_tensor_release(&b.t); return fail(L, name, "out of memory"); }
  work *w = work_new(L, name, 0);
  w->b = b;
  w->write = write;
  if (t) mt_tensor_alias(&w->target, t);
  w->j = j;
  j->name = name;
  j->s = *s;
  j->comm = comm; j->rank = rank; j->world = world;
  j->type = t ? mpi_type(dtype) : MPI_DATATYPE_NULL;
  j->op = op;
  j->p = t ? mt_data(&b.t) : NULL;
  j->n = t ? mt_numel(&b.t) : 0;
  j->esize = mt_dtypes[dtype].size;
  enqueue(j);
  return 1;
}

/* ---- the functions ---- */

/* init(debug, timeout in seconds) -> rank, world size | nil, message */
static int l_init(lua_State *L) {
  if (world_comm != MPI_COMM_NULL) { lua_pushnil(L); lua_pushstring(L, "the default process group is already initialised"); return 2; }
  int inited = 0, finalized = 0, e;
  MPI_Finalized(&finalized);
  if (finalized) {
    lua_pushnil(L);
    lua_pushstring(L, "MPI was finalised by destroy_process_group(), and MPI cannot start twice in one process");
    return 2;
  }
  MPI_Initialized(&inited);
  if (!inited) {
    int provided;
    e = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    if (e != MPI_SUCCESS) { lua_pushnil(L); lua_pushstring(L, "MPI_Init failed"); return 2; }
  }
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if ((e = MPI_Comm_dup(MPI_COMM_WORLD, &comm)) != MPI_SUCCESS) {
    comm = MPI_COMM_NULL;
    char s[MPI_MAX_ERROR_STRING]; int len;
    MPI_Error_string(e, s, &len);
    lua_pushnil(L); lua_pushfstring(L, "MPI_Comm_dup failed: %s", s);
    return 2;
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &world);
  world_comm = comm;
  world_rank = rank;
  world_size = world;
  debug = lua_toboolean(L, 1);
  timeout_s = luaL_checknumber(L, 2);
  atomic_store(&wd_stop, 0);
  wd_running = pthread_create(&wd_thread, NULL, watchdog, NULL) == 0;
  threaded = level >= MPI_THREAD_MULTIPLE && pthread_create(&ct_thread, NULL, comm_thread, NULL) == 0;
  lua_pushinteger(L, rank);
  lua_pushinteger(L, world);
  return 2;
}

/* destroy(): frees the group and finalises MPI */
static int l_destroy(lua_State *L) {
  comm = world_comm;
  rank = world_rank;
  world = world_size;
  if (check_init(L, "destroy_process_group")) return 1;
  if (live_works > 0)
    return fail(L, "destroy_process_group", "%d asynchronous operation(s) were started and never waited for: call "
                "wait() on their handles first", live_works);
  comm_thread_stop();                /* no work is live: no job is queued */
  if (wd_running) {
    atomic_store(&wd_stop, 1);
    pthread_join(wd_thread, NULL);
    wd_running = 0;
  }
  for (group_ud *g = groups, *next; g; g = next) {
    next = g->next;
    if (g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
    g->comm = MPI_COMM_NULL;   /* a Lua value may still point here: kept, marked freed */
  }
  MPI_Comm_free(&comm);
  comm = world_comm = MPI_COMM_NULL;
  rank = world_rank = -1;
  world = world_size = 0;
  MPI_Finalize();
  return 0;
}


/* barrier([async]) */
static int l_barrier(lua_State *L) {
  if (check_init(L, "barrier")) return 1;
  mt_tensor none = {0};
  if (lua_toboolean(L, 1) && threaded) {
    sig s;
    sig_of(&s, COLL_BARRIER, -1, -1, &none);
    return start_job(L, "barrier", &s, NULL, 0, 0, MPI_OP_NULL);
  }
  if (check_shapes(L, "barrier", COLL_BARRIER, -1, -1, &none)) return 1;
  int e;
  GUARDED("barrier", MPI_Barrier(comm));
  return e == MPI_SUCCESS ? 0 : mpi_fail(L, "barrier", e);
}

/* ---- collectives in flight (async_op=true) ----
   A work holds the requests of a nonblocking collective or send/receive, the
   contiguous buffer MPI reads or writes, and the tensor the result goes back
   to, until wait() (MPI_Waitall, under the timeout's watchdog as every
   blocking call) or is_completed() (MPI_Testall) sees it finished; then a
   copied buffer is copied back into the tensor. A work collected before it
   was waited for waits first (MPI may still be writing into its buffer).
   recv's header (dtype and element count, sent before the data) is checked
   when the work completes. */

static work *pending_recvs;         /* recvs waiting for their header */

static work *work_new(lua_State *L, const char *name, int nreq) {
  work *w = lua_newuserdatauv(L, sizeof *w, 0);
  memset(w, 0, sizeof *w);
  w->name = name;
  w->req = calloc((size_t)(nreq > 0 ? nreq : 1), sizeof(MPI_Request));
  if (!w->req) luaL_error(L, "distributed.%s: out of memory", name);
  for (int i = 0; i < nreq; i++) w->req[i] = MPI_REQUEST_NULL;
  w->nreq = nreq;
  w->source = MPI_ANY_SOURCE;
  w->header_req = MPI_REQUEST_NULL;
  luaL_setmetatable(L, WORK_MT);
  live_works++;
  return w;
}

static int header_matches(const work *w) { return w->header[0] == w->want[0] && w->header[1] == w->want[1]; }

/* a recv whose header came: its data requests, from the sender, into the
   buffer or (a header that does not match the tensor) into scratch */
static void post_data(work *w) {
  int64_t n = w->header[1] > 0 ? w->header[1] : 0;
  int dtype = w->header[0] >= 0 && w->header[0] < MT_NDTYPES ? (int)w->header[0] : MT_UINT8;
  int64_t esize = mt_dtypes[dtype].size;
  char *p;
  if (header_matches(w)) {
    p = mt_data(&w->b.t);
  } else {                                       /* the sender's count, checked before it sizes anything */
    int64_t nbytes;
    if (mt_mul_size("recv", n, esize, &nbytes)) { w->post_error = MPI_ERR_COUNT; return; }
    w->scratch = malloc((size_t)(nbytes > 0 ? nbytes : 1));
    if (!w->scratch) { w->post_error = MPI_ERR_NO_MEM; return; }
    p = w->scratch;
  }
  int64_t pieces = pieces_of(n);
  free(w->req);
  w->req = calloc((size_t)(pieces > 0 ? pieces : 1), sizeof(MPI_Request));
  if (!w->req) { w->nreq = 0; w->post_error = MPI_ERR_NO_MEM; return; }
  w->nreq = (int)pieces;
  for (int64_t done = 0, i = 0; done < n; done += PIECE, i++) {
    int count = (int)(n - done < PIECE ? n - done : PIECE);
    int e = MPI_Irecv(p + done * esize, count, mpi_type(dtype), w->source, 2 * w->tag + 1, comm, &w->req[i]);
    if (e != MPI_SUCCESS) { w->post_error = e; w->nreq = (int)i; return; }
  }
}

/* moves every recv whose header has come on to its data */
static void progress_recvs(void) {
  for (work **at = &pending_recvs; *at;) {
    work *w = *at;
    int flag = 0;
    MPI_Status st;
    int e = MPI_Test(&w->header_req, &flag, &st);
    if (e != MPI_SUCCESS) { w->post_error = e; flag = 1; }
    else if (flag) { w->source = st.MPI_SOURCE; post_data(w); }
    if (flag) { w->header_done = 1; *at = w->next; w->next = NULL; }
    else at = &w->next;
  }
}

/* whether w is done in MPI (*err: an MPI error) */
static int work_test(work *w, int *err) {
  progress_recvs();
  *err = MPI_SUCCESS;
  if (w->j) return atomic_load(&w->j->done);
  if (w->is_recv && !w->header_done) return 0;
  if (w->post_error) { *err = w->post_error; return 1; }
  int flag = 0;
  *err = MPI_Testall(w->nreq, w->req, &flag, MPI_STATUSES_IGNORE);
  return *err != MPI_SUCCESS || flag;
}

/* the work is done in MPI: the result into the tensor, the buffers freed;
   a message (pushed, 1 returned) when MPI failed, the header did not match
   or the copy failed */
static int work_finish(lua_State *L, work *w, int err) {
  if (w->done) return 0;
  w->done = 1;
  live_works--;
  int r = 0;
  if (err != MPI_SUCCESS) {
    r = mpi_fail(L, w->name, err);
  } else if (w->is_recv && !header_matches(w)) {
    const char *hd = w->header[0] >= 0 && w->header[0] < MT_NDTYPES ? mt_dtypes[w->header[0]].name : "?";
    r = fail(L, w->name, "rank %d sent %lld elements of %s, but the tensor receiving them holds %lld of %s (send "
             "and receive need the same element count and dtype)", w->source, (long long)w->header[1], hd,
             (long long)w->want[1], mt_dtypes[w->want[0]].name);
  } else if (w->j && w->j->status) {             /* 2: refused here, and lib/distributed said why */
    if (w->j->status == 1) { lua_pushstring(L, w->j->msg); r = 1; }
  } else if (w->b.t.storage) {
    r = buf_finish(L, w->name, &w->b, &w->target, w->write);
  }
  if (w->b.t.storage) mt_tensor_release(&w->b.t);
  if (w->target.storage) mt_tensor_release(&w->target);
  free(w->scratch);
  w->scratch = NULL;
  return r;
}

/* blocks until w is done in MPI, progressing the other recvs meanwhile (a
   sender may wait for one of them), under the timeout's watchdog */
static int work_block(work *w) {
  int err = MPI_SUCCESS;
  if (w->j) { job_wait(w->name, w->j); return err; }
  wd_enter(w->name);
  while (!work_test(w, &err)) sched_yield();
  wd_exit();
  return err;
}

/* wait(): blocks until the work is done; nothing, or a message */
static int l_work_wait(lua_State *L) {
  work *w = luaL_checkudata(L, 1, WORK_MT);
  if (w->done) return 0;
  return work_finish(L, w, work_block(w));
}

/* is_completed(): whether the work is done (finished here when MPI says
   so); true and a message when finishing it failed */
static int l_work_test(lua_State *L) {
  work *w = luaL_checkudata(L, 1, WORK_MT);
  if (w->done) { lua_pushboolean(L, 1); return 1; }
  int err;
  if (!work_test(w, &err)) { lua_pushboolean(L, 0); return 1; }
  lua_pushboolean(L, 1);
  return 1 + work_finish(L, w, err);
}

/* source(): recv's sender, once done */
static int l_work_source(lua_State *L) {
  work *w = luaL_checkudata(L, 1, WORK_MT);
  lua_pushinteger(L, w->source);
  return 1;
}

/* a work collected before it was waited for waits (MPI may still be
   writing into its buffer) */
static int l_work_gc(lua_State *L) {
  work *w = luaL_checkudata(L, 1, WORK_MT);
  if (!w->done && world_comm != MPI_COMM_NULL) {
    int err = work_block(w);
    lua_settop(L, 1);
    work_finish(L, w, err);
  }
  for (work **at = &pending_recvs; *at; at = &(*at)->next)
    if (*at == w) { *at = w->next; break; }
  free(w->req);
  w->req = NULL;
  if (w->j && atomic_load(&w->j->done)) { free(w->j); w->j = NULL; }
  return 0;
}

/* all_reduce(t, op[, async]) / reduce(t, op, dst[, async]) / broadcast: in
   place (reduce: on dst only, broadcast: but on the root); async: a work,
   the collective a job of the communication thread */
static int rooted_common(lua_State *L, const char *name, mt_tensor *t, int coll, int op, int root, int async) {
  if (check_init(L, name)) return 1;
  int write = coll == COLL_ALL_REDUCE || (coll == COLL_REDUCE) == (rank == root);
  int dtype = coll == COLL_BROADCAST ? t->dtype : reduce_dtype(t->dtype);
  MPI_Op mop = coll == COLL_BROADCAST ? MPI_OP_NULL : mpi_op(op, dtype);
  if (async && threaded) {
    sig s;
    sig_of(&s, coll, op, root, t);
    return start_job(L, name, &s, t, dtype, write, mop);
  }
  if (check_shapes(L, name, coll, op, root, t)) return 1;
  buffer b;
  if (buf_open(L, name, &b, t, dtype, write)) return 1;
  MPI_Datatype type = mpi_type(dtype);
  int64_t n = mt_numel(&b.t), esize = mt_dtypes[dtype].size;
  char *p = mt_data(&b.t);
  for (int64_t done = 0; done < n; done += PIECE) {
    int count = (int)(n - done < PIECE ? n - done : PIECE);
    int e;                                       /* p + done * esize: within the storage */
    GUARDED(name, data_call(coll, p + done * esize, count, type, mop, root, rank, comm));
    if (e != MPI_SUCCESS) { mt_tensor_release(&b.t); return mpi_fail(L, name, e); }
  }
  return buf_finish(L, name, &b, t, write);
}

/* ---- point to point: send / recv (blocking) and isend / irecv (works) ----
   A message is a header (dtype, element count) then the data in pieces,
   tags 2 * tag and 2 * tag + 1: the receiver checks the header against its
   tensor (MPI itself would reinterpret the bytes of another dtype, or fill
   part of the tensor from a shorter message). */
#define TAG_MAX 16383

static int p2p_args(lua_State *L, const char *name, mt_tensor **t, int *peer, int *tag, int recv) {
  *t = check_tensor(L, 1, name);
  if (check_init(L, name)) return 1;
  *peer = lua_isnoneornil(L, 2) ? MPI_ANY_SOURCE : (int)luaL_checkinteger(L, 2);
  *tag = (int)luaL_optinteger(L, 3, 0);
  if (*tag < 0 || *tag > TAG_MAX) return fail(L, name, "tag=%d must be between 0 and %d", *tag, TAG_MAX);
  if (!recv && *peer == MPI_ANY_SOURCE) return fail(L, name, "dst= is required");
  if (*peer != MPI_ANY_SOURCE && (*peer < 0 || *peer >= world))
    return fail(L, name, "%s=%d is not a rank of this group (0 .. %d)", recv ? "src" : "dst", *peer, world - 1);
  if (*peer == rank) return fail(L, name, "%s=%d is this rank: a rank cannot %s itself", recv ? "src" : "dst", *peer,
                                 recv ? "receive from" : "send to");
  return 0;
}

/* p2p_args, then the tensor's buffer b (read to send, written by a receive) */
static int p2p_open(lua_State *L, const char *name, mt_tensor **t, int *peer, int *tag, int recv, buffer *b) {
  return p2p_args(L, name, t, peer, tag, recv) || buf_open(L, name, b, *t, (*t)->dtype, recv);
}

/* send(t, dst, tag[, async]) */
static int l_send(lua_State *L) {
  int async = lua_toboolean(L, 4);
  const char *name = async ? "isend" : "send";
  mt_tensor *t;
  int dst, tag;
  buffer b;
  if (p2p_open(L, name, &t, &dst, &tag, 0, &b)) return 1;
  int64_t n = mt_numel(&b.t), esize = mt_dtypes[t->dtype].size, pieces = pieces_of(n);
  char *p = mt_data(&b.t);
  work *w = work_new(L, name, (int)(1 + pieces));
  w->b = b;
  mt_tensor_alias(&w->target, t);
  w->header[0] = t->dtype;
  w->header[1] = n;
  int e = MPI_Isend(w->header, 2, MPI_INT64_T, dst, 2 * tag, comm, &w->req[0]);
  for (int64_t done = 0, i = 1; e == MPI_SUCCESS && done < n; done += PIECE, i++) {
    int count = (int)(n - done < PIECE ? n - done : PIECE);
    e = MPI_Isend(p + done * esize, count, mpi_type(t->dtype), dst, 2 * tag + 1, comm, &w->req[i]);
  }
  if (e != MPI_SUCCESS) {
    MPI_Waitall(w->nreq, w->req, MPI_STATUSES_IGNORE);
    lua_pop(L, 1);
    work_finish(L, w, MPI_SUCCESS);
    return mpi_fail(L, name, e);
  }
  if (async) return 1;
  int r = work_finish(L, w, work_block(w));
  return r;
}

/* recv(t, src or nil (any rank), tag[, async]): blocking, the sender's rank
   (or a message); async: a work (its source() once done). Only the header
   is asked for at first; the data when it has come (see post_data). */
static int l_recv(lua_State *L) {
  int async = lua_toboolean(L, 4);
  const char *name = async ? "irecv" : "recv";
  mt_tensor *t;
  int src, tag;
  buffer b;
  if (p2p_open(L, name, &t, &src, &tag, 1, &b)) return 1;
  work *w = work_new(L, name, 0);
  w->b = b;
  w->write = 1;
  mt_tensor_alias(&w->target, t);
  w->is_recv = 1;
  w->tag = tag;
  w->want[0] = t->dtype;
  w->want[1] = mt_numel(t);
  w->header[0] = -1;
  int e = MPI_Irecv(w->header, 2, MPI_INT64_T, src, 2 * tag, comm, &w->header_req);
  if (e != MPI_SUCCESS) {
    lua_pop(L, 1);
    w->header_done = 1;
    work_finish(L, w, MPI_SUCCESS);
    return mpi_fail(L, name, e);
  }
  w->next = pending_recvs;
  pending_recvs = w;
  if (async) return 1;
  if (work_finish(L, w, work_block(w))) return 1;
  lua_pushinteger(L, w->source);
  return 1;
}

/* all_gather(out, t): out (world x numel(t) elements, t's dtype) receives
   every rank's t in rank order */
static int l_all_gather(lua_State *L) {
  const char *name = lua_tostring(L, 3);
  if (!name) name = "all_gather";
  mt_tensor *out = check_tensor(L, 1, name);
  mt_tensor *t = check_tensor(L, 2, name);
  if (check_init(L, name)) return 1;
  if (blocks_check(name, rank, world, out, t, BLOCKS_GATHER, msg)) { lua_pushstring(L, msg); return 1; }
  int64_t n = mt_numel(t), total = mt_numel(out);
  if (n > INT_MAX) return fail(L, name, "the input has %lld elements; at most %d go in one all_gather", (long long)n, INT_MAX);
  if (check_shapes(L, name, COLL_ALL_GATHER, -1, -1, t)) return 1;
  buffer bi, bo;
  if (buf_open(L, name, &bi, t, t->dtype, 0)) return 1;
  if (buf_open(L, name, &bo, out, out->dtype, 1)) { mt_tensor_release(&bi.t); return 1; }
  MPI_Datatype type = mpi_type(t->dtype);
  /* t inside out (its slot: t = out's rank-th block, PyTorch's in-place
     form) is MPI_IN_PLACE; overlapping out anywhere else, t is copied first
     (MPI's buffers must not overlap) */
  const void *send = n ? mt_data(&bi.t) : NULL;
  if (n && bi.t.storage == bo.t.storage) {
    int64_t esize = mt_dtypes[t->dtype].size, nbytes, obytes, slot;
    uintptr_t pi = (uintptr_t)mt_data(&bi.t), po = (uintptr_t)mt_data(&bo.t);
    if (mt_mul_size(name, n, esize, &nbytes) || mt_mul_size(name, total, esize, &obytes) ||
        mt_mul_size(name, nbytes, rank, &slot)) {
      mt_tensor_release(&bi.t); mt_tensor_release(&bo.t);
      return fail(L, name, "%s", mt_error());
    }
    if (pi == po + (uintptr_t)slot) send = MPI_IN_PLACE;
    else if (pi < po + (uintptr_t)obytes && po < pi + (uintptr_t)nbytes) {
      mt_tensor c = {0};
      if (mt_clone(&c, &bi.t)) { mt_tensor_release(&bi.t); mt_tensor_release(&bo.t); return fail(L, name, "%s", mt_error()); }
      mt_tensor_release(&bi.t);
      bi.t = c;
      send = mt_data(&bi.t);
    }
  }
  int e;
  GUARDED(name, MPI_Allgather(send, (int)n, type, total ? mt_data(&bo.t) : NULL, (int)n, type, comm));
  mt_tensor_release(&bi.t);
  if (e != MPI_SUCCESS) { mt_tensor_release(&bo.t); return mpi_fail(L, name, e); }
  return buf_finish(L, name, &bo, out, 1);
}

/* the buffers a collective reads (in) and writes (out) must not overlap:
   an input sharing the output's storage is cloned first */
static int unalias(lua_State *L, const char *name, buffer *bi, const buffer *bo) {
  if (bi->t.storage != bo->t.storage) return 0;
  mt_tensor c = {0};
  if (mt_clone(&c, &bi->t)) return fail(L, name, "%s", mt_error());
  mt_tensor_release(&bi->t);
  bi->t = c;
  return 0;
}

static int check_count(lua_State *L, const char *name, int64_t n) {
  if (n > INT_MAX) return fail(L, name, "%lld elements per rank; at most %d go in one %s", (long long)n, INT_MAX, name);
  return 0;
}

/* gather(t, out | nil, dst): on dst, out (world x numel(t) elements, t's
   dtype, contiguous: lib/distributed makes it) receives every rank's t in
   rank order */
static int l_gather(lua_State *L) {
  mt_tensor *t = check_tensor(L, 1, "gather");
  int dst = (int)luaL_checkinteger(L, 3);
  if (check_init(L, "gather")) return 1;
  mt_tensor *out = NULL;
  int64_t n = mt_numel(t), total;
  if (mt_mul_size("gather", n, world, &total)) return fail(L, "gather", "%s", mt_error());
  if (rank == dst) {
    out = check_tensor(L, 2, "gather");
    if (out->dtype != t->dtype || mt_numel(out) != total)
      return fail(L, "gather", "the gather buffer must hold world size (%d) x the input's %lld elements of %s",
                  world, (long long)n, mt_dtypes[t->dtype].name);
  }
  if (check_count(L, "gather", n) || check_shapes(L, "gather", COLL_GATHER, -1, dst, t)) return 1;
  buffer bi, bo;
  if (buf_open(L, "gather", &bi, t, t->dtype, 0)) return 1;
  if (out) {
    if (buf_open(L, "gather", &bo, out, out->dtype, 1)) { mt_tensor_release(&bi.t); return 1; }
    if (unalias(L, "gather", &bi, &bo)) { mt_tensor_release(&bi.t); mt_tensor_release(&bo.t); return 1; }
  }
  MPI_Datatype type = mpi_type(t->dtype);
  int e;
  GUARDED("gather", MPI_Gather(n ? mt_data(&bi.t) : NULL, (int)n, type, out && total ? mt_data(&bo.t) : NULL,
                               (int)n, type, dst, comm));
  mt_tensor_release(&bi.t);
  if (e != MPI_SUCCESS) { if (out) mt_tensor_release(&bo.t); return mpi_fail(L, "gather", e); }
  return out ? buf_finish(L, "gather", &bo, out, 1) : 0;
}

/* scatter(t, in | nil, src): every rank's t receives its block of src's in
   (world x numel(t) elements, t's dtype) */
static int l_scatter(lua_State *L) {
  mt_tensor *t = check_tensor(L, 1, "scatter");
  int src = (int)luaL_checkinteger(L, 3);
  if (check_init(L, "scatter")) return 1;
  mt_tensor *in = NULL;
  int64_t n = mt_numel(t), total;
  if (mt_mul_size("scatter", n, world, &total)) return fail(L, "scatter", "%s", mt_error());
  if (rank == src) {
    in = check_tensor(L, 2, "scatter");
    if (in->dtype != t->dtype || mt_numel(in) != total)
      return fail(L, "scatter", "the scatter buffer must hold world size (%d) x the output's %lld elements of %s",
                  world, (long long)n, mt_dtypes[t->dtype].name);
  }
  if (check_count(L, "scatter", n) || check_shapes(L, "scatter", COLL_SCATTER, -1, src, t)) return 1;
  buffer bi, bo;
  if (buf_open(L, "scatter", &bo, t, t->dtype, 1)) return 1;
  if (in) {
    if (buf_open(L, "scatter", &bi, in, in->dtype, 0)) { mt_tensor_release(&bo.t); return 1; }
    if (unalias(L, "scatter", &bi, &bo)) { mt_tensor_release(&bi.t); mt_tensor_release(&bo.t); return 1; }
  }
  MPI_Datatype type = mpi_type(t->dtype);
  int e;
  GUARDED("scatter", MPI_Scatter(in && total ? mt_data(&bi.t) : NULL, (int)n, type, n ? mt_data(&bo.t) : NULL,
                                 (int)n, type, src, comm));
  if (in) mt_tensor_release(&bi.t);
  if (e != MPI_SUCCESS) { mt_tensor_release(&bo.t); return mpi_fail(L, "scatter", e); }
  return buf_finish(L, "scatter", &bo, t, 1);
}

/* reduce_scatter(out, in, op, name): out becomes the reduction over the
   ranks of in's rank-th block (in: world x numel(out) elements) */
static int l_reduce_scatter(lua_State *L) {
  const char *name = luaL_optstring(L, 4, "reduce_scatter");
  mt_tensor *out = check_tensor(L, 1, name);
  mt_tensor *in = check_tensor(L, 2, name);
  int op = luaL_checkoption(L, 3, NULL, op_names);
  if (check_init(L, name)) return 1;
  if (blocks_check(name, rank, world, out, in, BLOCKS_SCATTER, msg)) { lua_pushstring(L, msg); return 1; }
  int64_t n = mt_numel(out);
  if (check_count(L, name, n) || check_shapes(L, name, COLL_REDUCE_SCATTER, op, -1, out)) return 1;
  int dtype = reduce_dtype(out->dtype);
  buffer bi, bo;
  if (buf_open(L, name, &bo, out, dtype, 1)) return 1;
  if (buf_open(L, name, &bi, in, dtype, 0)) { mt_tensor_release(&bo.t); return 1; }
  if (unalias(L, name, &bi, &bo)) { mt_tensor_release(&bi.t); mt_tensor_release(&bo.t); return 1; }
  int e = MPI_SUCCESS;
  if (n) GUARDED(name, MPI_Reduce_scatter_block(mt_data(&bi.t), mt_data(&bo.t), (int)n, mpi_type(dtype),
                                                mpi_op(op, dtype), comm));
  mt_tensor_release(&bi.t);
  if (e != MPI_SUCCESS) { mt_tensor_release(&bo.t); return mpi_fail(L, name, e); }
  return buf_finish(L, name, &bo, out, 1);
}

/* all_to_all(out, in, name): in's r-th block (of numel / world elements)
   goes to rank r, and out's r-th block comes from rank r */
static int l_all_to_all(lua_State *L) {
  const char *name = luaL_optstring(L, 3, "all_to_all");
  mt_tensor *out = check_tensor(L, 1, name);
  mt_tensor *in = check_tensor(L, 2, name);
  if (check_init(L, name)) return 1;
  if (blocks_check(name, rank, world, out, in, BLOCKS_EVEN, msg)) { lua_pushstring(L, msg); return 1; }
  int64_t n = mt_numel(in);
  if (check_count(L, name, n / world) || check_shapes(L, name, COLL_ALL_TO_ALL, -1, -1, in)) return 1;
  buffer bi, bo;
  if (buf_open(L, name, &bo, out, out->dtype, 1)) return 1;
  if (buf_open(L, name, &bi, in, in->dtype, 0)) { mt_tensor_release(&bo.t); return 1; }
  if (unalias(L, name, &bi, &bo)) { mt_tensor_release(&bi.t); mt_tensor_release(&bo.t); return 1; }
  MPI_Datatype type = mpi_type(in->dtype);
  int e = MPI_SUCCESS;
  if (n) GUARDED(name, MPI_Alltoall(mt_data(&bi.t), (int)(n / world), type, mt_data(&bo.t), (int)(n / world), type,
                                    comm));
  mt_tensor_release(&bi.t);
  if (e != MPI_SUCCESS) { mt_tensor_release(&bo.t); return mpi_fail(L, name, e); }
  return buf_finish(L, name, &bo, out, 1);
}


/* all_to_allv(out, in, send_counts, recv_counts, name): in's first
   send_counts[r + 1] elements after those before go to rank r; out's block
   of recv_counts[r + 1] elements comes from rank r. The ranks first agree
   on the collective and dtype, then exchange their counts: a rank that sends
   another count than its receiver expects makes every rank raise, naming
   both. Counts and offsets within an int (MPI_Alltoallv's). */
static int l_all_to_allv(lua_State *L) {
  const char *name = luaL_optstring(L, 5, "all_to_all_single");
  mt_tensor *out = check_tensor(L, 1, name);
  mt_tensor *in = check_tensor(L, 2, name);
  if (check_init(L, name)) return 1;
  if (out->dtype != in->dtype) { blocks_check(name, rank, world, out, in, BLOCKS_EVEN, msg); lua_pushstring(L, msg); return 1; }
  int64_t *c = calloc((size_t)world * 4, sizeof(int64_t));
  int *ic = calloc((size_t)world * 4, sizeof(int));
  int64_t *all = calloc((size_t)world * 4, sizeof(int64_t));
  if (!c || !ic || !all) { free(c); free(ic); free(all); return fail(L, name, "out of memory"); }
  int64_t *sc = c, *rc = c + world, *peer = c + 2 * world, ssum = 0, rsum = 0;
  int r = 0;
  if (read_counts(L, name, 3, "the send counts", sc, &ssum) || read_counts(L, name, 4, "the receive counts", rc, &rsum))
    r = 1;
  else if (ssum != mt_numel(in))
    r = fail(L, name, "the input splits hold %lld elements, the input %lld", (long long)ssum, (long long)mt_numel(in));
  else if (rsum != mt_numel(out))
    r = fail(L, name, "the output splits hold %lld elements, the output %lld", (long long)rsum, (long long)mt_numel(out));
  else if (ssum > INT_MAX || rsum > INT_MAX)
    r = fail(L, name, "%lld elements: at most %d go in one uneven all_to_all", (long long)(ssum > rsum ? ssum : rsum),
             INT_MAX);
  if (r) { free(c); free(ic); free(all); return 1; }
  mt_tensor counts_only = {0};
  counts_only.dtype = in->dtype;
  if (check_shapes(L, name, COLL_ALL_TO_ALLV, -1, -1, &counts_only)) { free(c); free(ic); free(all); return 1; }
  int e;
  GUARDED(name, MPI_Alltoall(sc, 1, MPI_INT64_T, peer, 1, MPI_INT64_T, comm));   /* what each rank sends me */
  if (e != MPI_SUCCESS) { free(c); free(ic); free(all); return mpi_fail(L, name, e); }
  int64_t mine[4] = {0, 0, 0, 0};            /* my first disagreement: 1, sender, sent, expected */
  for (int q = 0; q < world && !mine[0]; q++)
    if (peer[q] != rc[q]) { mine[0] = 1; mine[1] = q; mine[2] = peer[q]; mine[3] = rc[q]; }
  GUARDED(name, MPI_Allgather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, comm));
  if (e != MPI_SUCCESS) { free(c); free(ic); free(all); return mpi_fail(L, name, e); }
  for (int q = 0; q < world; q++)
    if (all[4 * q]) {
      long long sender = all[4 * q + 1], sent = all[4 * q + 2], expected = all[4 * q + 3];
      free(c); free(ic); free(all);
      return fail(L, name, "rank %lld sends %lld elements to rank %d, which expects %lld (every rank's input split "
                  "for rank r must match rank r's output split for it)", sender, sent, q, expected);
    }
  free(all);
  int *isc = ic, *irc = ic + world, *sd = ic + 2 * world, *rd = ic + 3 * world;
  int64_t so = 0, ro = 0;
  for (int q = 0; q < world; q++) {
    isc[q] = (int)sc[q]; irc[q] = (int)rc[q]; sd[q] = (int)so; rd[q] = (int)ro;
    so += sc[q]; ro += rc[q];
  }
  free(c);
  buffer bi, bo;
  if (buf_open(L, name, &bo, out, out->dtype, 1)) { free(ic); return 1; }
  if (buf_open(L, name, &bi, in, in->dtype, 0)) { mt_tensor_release(&bo.t); free(ic); return 1; }
  if (unalias(L, name, &bi, &bo)) { mt_tensor_release(&bi.t); mt_tensor_release(&bo.t); free(ic); return 1; }
  MPI_Datatype type = mpi_type(in->dtype);
  GUARDED(name, MPI_Alltoallv(mt_numel(in) ? mt_data(&bi.t) : NULL, isc, sd, type,
                              mt_numel(out) ? mt_data(&bo.t) : NULL, irc, rd, type, comm));
  free(ic);
  mt_tensor_release(&bi.t);
  if (e != MPI_SUCCESS) { mt_tensor_release(&bo.t); return mpi_fail(L, name, e); }
  return buf_finish(L, name, &bo, out, 1);
}

/* new_group(ranks): every rank of the default group calls it with the same
   list of distinct ranks (sorted, checked in lib/distributed); a member gets
   its group, the others false. The ranks agree on the list first. */
static int l_new_group(lua_State *L) {
  const char *name = "new_group";
  comm = world_comm; rank = world_rank; world = world_size;
  if (check_init(L, name)) return 1;
  drain(name);
  luaL_checktype(L, 1, LUA_TTABLE);
  int n = (int)luaL_len(L, 1), me = -1;
  int64_t sum = 0;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    int64_t r = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (r == rank) me = i - 1;
    sum = (sum * 31 + r + 1) % 2147483647;
  }
  int64_t v[4] = {sum, -sum, n, -n};
  int e;
  GUARDED(name, MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MAX, comm));
  if (e != MPI_SUCCESS) return mpi_fail(L, name, e);
  if (v[0] != -v[1] || v[2] != -v[3])
    return fail(L, name, "the ranks pass different rank lists (every rank of the default group calls new_group "
                "with the same list)");
  MPI_Comm sub = MPI_COMM_NULL;
  GUARDED(name, MPI_Comm_split(comm, me >= 0 ? 0 : MPI_UNDEFINED, me, &sub));
  if (e != MPI_SUCCESS) return mpi_fail(L, name, e);
  if (me < 0) { lua_pushboolean(L, 0); return 1; }
  MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
  group_ud *g = malloc(sizeof *g);
  if (!g) { MPI_Comm_free(&sub); return fail(L, name, "out of memory"); }
  g->comm = sub;
  MPI_Comm_rank(sub, &g->rank);
  MPI_Comm_size(sub, &g->size);
  g->next = groups;
  groups = g;
  group_ud **u = lua_newuserdatauv(L, sizeof *u, 0);
  *u = g;
  luaL_setmetatable(L, GROUP_MT);
  return 1;
}

/* use(group or nil): the group the next collectives run in (nil: the default one) */
static int l_use(lua_State *L) {
  if (lua_isnoneornil(L, 1)) {
    comm = world_comm; rank = world_rank; world = world_size;
    return 0;
  }
  group_ud *g = *(group_ud **)luaL_checkudata(L, 1, GROUP_MT);
  if (g->comm == MPI_COMM_NULL) return fail(L, "new_group", "this group was freed with the default group");
  comm = g->comm; rank = g->rank; world = g->size;
  return 0;
}

/* refuse(name): this rank raises an error of its own on name's arguments;
   it takes part in the agreement check the other ranks run, so that each
   of them raises too instead of waiting for it */
static int l_refuse(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (check_init(L, name)) return 1;
  mt_tensor none = {0};
  int top = lua_gettop(L);
  refused = 1;
  check_shapes(L, name, 0, -1, -1, &none);      /* pushes a message only if MPI itself failed */
  refused = 0;
  return lua_gettop(L) > top ? 1 : 0;
}

static int l_is_initialized(lua_State *L) { lua_pushboolean(L, world_comm != MPI_COMM_NULL); return 1; }

/* luaopen_distributed_mpi(): a function that takes the tensor metatable
   and returns the functions (their upvalue: that metatable) */
static int l_bind(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"init", l_init}, {"destroy", l_destroy}, {"barrier", l_barrier}, {"all_reduce", l_all_reduce},
    {"reduce", l_reduce}, {"broadcast", l_broadcast}, {"all_gather", l_all_gather},
    {"gather", l_gather}, {"scatter", l_scatter}, {"reduce_scatter", l_reduce_scatter}, {"all_to_all", l_all_to_all},
    {"refuse", l_refuse}, {"send", l_send}, {"recv", l_recv}, {"all_to_allv", l_all_to_allv},
    {"new_group", l_new_group}, {"use", l_use},
    {"is_initialized", l_is_initialized}, {NULL, NULL}};
  static const luaL_Reg wm[] = {{"wait", l_work_wait}, {"is_completed", l_work_test}, {"source", l_work_source},
                                {NULL, NULL}};
  bind_functions(L, fns, GROUP_MT, WORK_MT, wm, l_work_gc);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  char *nl = strchr(lib, ',');                   /* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4" */
  if (nl) *nl = 0;
  lua_pushstring(L, lib);
  lua_setfield(L, -2, "library");
  return 1;
}

int luaopen_distributed_mpi(lua_State *L) {
  lua_pushcfunction(L, l_bind);
  return 1;
}
