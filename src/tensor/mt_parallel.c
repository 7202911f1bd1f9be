/* mt_parallel.c: the engine's own thread pool -- chunks claimed one at a time
   from a shared counter, idle workers that poll briefly then sleep -- and the
   thread count, which also keeps OpenBLAS on one thread per call.

   Why not OpenMP: an OpenMP loop ends at a barrier every team thread must
   reach, so when the scheduler pauses one thread (another process on the
   core, DataLoader workers) the caller waits a whole time slice per op; and
   libgomp's idle threads spin for milliseconds while OpenBLAS's own pool
   spins on sched_yield, each stealing the other's core. Here the caller
   never waits for a chunk nobody has started, and OpenBLAS never starts
   threads of its own (mt_linalg splits large products over this pool). */
#include "mt_parallel.h"
#include "mt_tensor.h"
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Most threads the pool starts, whatever setnumthreads asks. */
#define MT_POOL_MAX 256
/* Chunks per thread: more than one lets running threads take over the share
   of a thread the scheduler has paused, so a loaded machine costs a chunk,
   not a time slice. */
#define MT_POOL_CHUNKS_PER_THREAD 4
/* How long an idle worker polls for the next loop before sleeping: a
   training step issues its ops microseconds apart, and waking a sleeping
   thread costs tens of microseconds; past this the core is handed back. */
#define MT_POOL_SPIN_NS 100000
/* How long a caller polls for chunks still running on workers before it
   yields its core in case the scheduler paused one of them mid-chunk. */
#define MT_POOL_WAIT_SPIN_NS 20000

/* A loaded machine: when the caller has waited longer for a chunk already
   running on a worker than it took for its own share, the worker was most
   likely paused by the scheduler (another process on its core). After
   MT_POOL_LATE_LOOPS such loops in a row, loops run on the caller alone for
   MT_POOL_SOLO_NS, then threads are tried again: a busy machine costs about
   what one thread costs, not a time slice per op. */
#define MT_POOL_LATE_LOOPS 2
#define MT_POOL_SOLO_NS 20000000
/* waits shorter than this are a worker waking up, never a pause */
#define MT_POOL_LATE_MIN_NS 50000

/* state: the loop's generation (high 32 bits) and its next unclaimed chunk
   (low 32 bits). While a loop's fields are written the low half is CLOSED,
   so no worker can claim a chunk of a loop half set up. */
#define CLOSED 0xffffffffu

static struct {
  _Atomic uint64_t state;
  _Atomic(mt_chunk_fn) fn;
  _Atomic(void *) ctx;
  _Atomic int64_t n, nchunks;
  _Atomic int64_t remaining;   /* chunks not yet finished */
  _Atomic int sleepers;
  _Atomic uint32_t wake;       /* futex word, bumped to wake sleepers */
  _Atomic int busy;            /* a loop is running: other callers run theirs inline */
  _Atomic int started;         /* workers started, in slots 1..started */
  _Atomic int64_t solo_until;  /* loops run inline until this time (now_ns), see MT_POOL_SOLO_NS */
  int late;                    /* loops in a row whose workers were late; written only under busy */
  pthread_mutex_t start_lock;
} pool = {.state = CLOSED, .start_lock = PTHREAD_MUTEX_INITIALIZER};

/* Threads that may take chunks, the caller included: workers in higher
   slots sit out. */
static _Atomic int num_threads = 1;
/* initial-exec: read on every loop, and the general TLS model would call
   __tls_get_addr each time from this shared library. */
static _Thread_local int tls_slot __attribute__((tls_model("initial-exec")));
static _Thread_local int tls_in_chunk __attribute__((tls_model("initial-exec")));

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int claimable(uint64_t s) {
  uint32_t i = (uint32_t)s;
  return i != CLOSED && (int64_t)i < atomic_load(&pool.nchunks);
}

/* Claims and runs chunks of the open loop until none is left. The fields
   read before a successful claim belong to that loop: they change only
   after the state has been CLOSED, which would have failed the claim. */
static void run_chunks(void) {
  uint64_t s = atomic_load(&pool.state);
  for (;;) {
    uint32_t i = (uint32_t)s;
    if (i == CLOSED) return;
    mt_chunk_fn fn = atomic_load(&pool.fn);
    void *ctx = atomic_load(&pool.ctx);
    int64_t n = atomic_load(&pool.n), nchunks = atomic_load(&pool.nchunks);
    if ((int64_t)i >= nchunks) return;
    if (!atomic_compare_exchange_weak(&pool.state, &s, s + 1)) continue;
    int64_t q = n / nchunks, r = n % nchunks;
    int64_t begin = (int64_t)i * q + ((int64_t)i < r ? i : r);
    fn(ctx, begin, begin + q + ((int64_t)i < r));
    atomic_fetch_sub(&pool.remaining, 1);
    s = atomic_load(&pool.state);
  }
}

static void futex(_Atomic uint32_t *word, int op, uint32_t val) {
  syscall(SYS_futex, (uint32_t *)word, op, val, NULL, NULL, 0);
}

/* Sleeps until a caller bumps the wake word, unless work arrived meanwhile
   (the sleeper count is raised first, so a caller publishing after the
   check below sees it and wakes us). */
static void sleep_until_woken(void) {
  atomic_fetch_add(&pool.sleepers, 1);
  uint32_t w = atomic_load(&pool.wake);
  if (tls_slot >= atomic_load(&num_threads) || !claimable(atomic_load(&pool.state)))
    futex(&pool.wake, FUTEX_WAIT_PRIVATE, w);
  atomic_fetch_sub(&pool.sleepers, 1);
}

static void *worker_main(void *arg) {
  tls_slot = (int)(intptr_t)arg;
  tls_in_chunk = 1;   /* a loop started inside a chunk runs inline */
  for (;;) {
    int64_t since = now_ns();
    for (unsigned spins = 1;; spins++) {
      if (tls_slot < atomic_load(&num_threads) && claimable(atomic_load(&pool.state))) break;
      cpu_relax();
      if (spins % 128 == 0 && now_ns() - since > MT_POOL_SPIN_NS) {
        sleep_until_woken();
        since = now_ns();
      }
    }
    run_chunks();
  }
  return NULL;
}

/* A forked child has none of the parent's workers: it starts its own. */
static void after_fork_child(void) {
  atomic_store(&pool.started, 0);
  pthread_mutex_init(&pool.start_lock, NULL);
  atomic_store(&pool.sleepers, 0);
  atomic_store(&pool.busy, 0);
  atomic_store(&pool.remaining, 0);
  atomic_store(&pool.state, CLOSED);
  atomic_store(&pool.solo_until, 0);
  pool.late = 0;
}

/* Starts workers up to slot want; returns how many threads a loop can use
   (fewer when a thread could not be created). The lock is taken only while
   workers are missing, not on every loop. */
static int start_workers(int want) {
  int started = atomic_load(&pool.started);
  if (started >= want) return want + 1;
  pthread_mutex_lock(&pool.start_lock);
  static int registered;
  if (!registered) registered = pthread_atfork(NULL, NULL, after_fork_child) == 0;
  if (pool.started < want) {
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGBUS);                  /* the kernel kills on a fault blocked: mt_mapguard needs it */
    pthread_sigmask(SIG_BLOCK, &all, &old);   /* signals stay with the caller's thread */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (pool.started < want) {
      pthread_t t;
      if (pthread_create(&t, &attr, worker_main, (void *)(intptr_t)(pool.started + 1))) break;
      pool.started++;
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  started = atomic_load(&pool.started);
  pthread_mutex_unlock(&pool.start_lock);
  return (started < want ? started : want) + 1;
}

void mt_parallel_for(int64_t n, int64_t grain, mt_chunk_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int width = mt_parallel_width();
  int64_t nchunks = n / grain;
  int idle = 0;
  if (width < 2 || nchunks < 2 || !atomic_compare_exchange_strong(&pool.busy, &idle, 1)) {
    fn(ctx, 0, n);
    return;
  }
  int64_t start = now_ns();
  if (start < atomic_load(&pool.solo_until)) {
    atomic_store(&pool.busy, 0);
    fn(ctx, 0, n);
    return;
  }
  width = start_workers(width - 1);
  if (nchunks > (int64_t)width * MT_POOL_CHUNKS_PER_THREAD) nchunks = (int64_t)width * MT_POOL_CHUNKS_PER_THREAD;
  if (width < 2) {
    atomic_store(&pool.busy, 0);
    fn(ctx, 0, n);
    return;
  }
  uint64_t gen = ((atomic_load(&pool.state) >> 32) + 1) & 0xffffffffu;
  atomic_store(&pool.state, gen << 32 | CLOSED);
  atomic_store(&pool.fn, fn);
  atomic_store(&pool.ctx, ctx);
  atomic_store(&pool.n, n);
  atomic_store(&pool.nchunks, nchunks);
  atomic_store(&pool.remaining, nchunks);
  atomic_store(&pool.state, gen << 32);
  if (atomic_load(&pool.sleepers) > 0) {
    atomic_fetch_add(&pool.wake, 1);
    futex(&pool.wake, FUTEX_WAKE_PRIVATE, (uint32_t)(width - 1));
  }
  tls_in_chunk = 1;
  tls_slot = 0;
  run_chunks();
  tls_in_chunk = 0;
  int64_t own_end = 0, since = 0;
  for (unsigned spins = 1; atomic_load(&pool.remaining) > 0; spins++) {
    cpu_relax();
    if (spins % 64 == 0) {
      if (!since) since = own_end = now_ns();
      else if (now_ns() - since > MT_POOL_WAIT_SPIN_NS) sched_yield();
    }
  }
  /* the caller waited longer than its own share took: a worker was paused */
  const int64_t end = own_end ? now_ns() : 0, waited = end - own_end;
  if (!own_end || waited <= MT_POOL_LATE_MIN_NS || waited <= own_end - start) pool.late = 0;
  else if (++pool.late >= MT_POOL_LATE_LOOPS) {
    atomic_store(&pool.solo_until, end + MT_POOL_SOLO_NS);
    pool.late = 0;
  }
  atomic_store(&pool.busy, 0);
}

int mt_parallel_width(void) { return tls_in_chunk ? 1 : atomic_load(&num_threads); }

int mt_parallel_slot(void) { return tls_slot; }

/* ---- the thread count ---- */
extern void openblas_set_num_threads(int);

void mt_set_num_threads(int n) {
  if (n < 1) n = 1;
  if (n > MT_POOL_MAX) n = MT_POOL_MAX;
  atomic_store(&num_threads, n);
  openblas_set_num_threads(1);
}

int mt_get_num_threads(void) { return atomic_load(&num_threads); }
