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
#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT */
#include "mt_parallel.h"
#include "mt_tensor.h"
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <strings.h>
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

/* A loaded machine, seen before it costs anything: every MT_POOL_LOAD_NS
   the caller of a loop reads how many threads the whole system has ready to
   run (/proc/loadavg's fourth field) and takes away its own (itself and its
   workers not asleep). What is left runs on cores the pool would share; a
   loop uses at most the cores allowed to the process less those. On an idle
   machine the count is the process's own threads, so nothing changes; with
   one other busy thread on two cores loops run on the caller alone instead
   of losing a time slice whenever a worker is paused. The lateness rule
   above stays as the fallback for load that comes and goes between two
   readings (and where /proc cannot be read). */
#define MT_POOL_LOAD_NS 10000000
/* A reading is a snapshot: a worker waking up, a kernel thread, a shell
   command count as runnable for microseconds. Only the least of the last
   MT_POOL_LOAD_READINGS readings counts (of two at least, when a process
   has just started), so load must last that many readings (20-30 ms) to
   be taken into account, and is let go at once. */
#define MT_POOL_LOAD_READINGS 3

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
  _Atomic int64_t load_at;     /* when the load was last read (now_ns): its reader's claim */
  _Atomic int free_cores;      /* cores the last readings left to the pool (0: not known) */
  int others[MT_POOL_LOAD_READINGS];   /* the last readings of other runnable threads */
  int reading;                 /* readings taken (the next slot of others, modulo) */
  pthread_mutex_t start_lock;
} pool = {.state = CLOSED, .start_lock = PTHREAD_MUTEX_INITIALIZER};

/* Threads that may take chunks, the caller included: workers in higher
   slots sit out. */
static _Atomic int num_threads = 1;
/* initial-exec: read on every loop, and the general TLS model would call
   __tls_get_addr each time from this shared library. */
static _Thread_local int tls_slot __attribute__((tls_model("initial-exec")));
static _Thread_local int tls_in_chunk __attribute__((tls_model("initial-exec")));

/* The number of runnable threads in the system, from /proc/loadavg
   ("0.10 0.20 0.30 3/120 4567": 3 runnable), or -1. */
static int system_runnable(void) {
#ifdef __linux__
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  ssize_t len = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (len <= 0) return -1;
  buf[len] = 0;
  const char *p = buf;
  for (int field = 0; field < 3; field++) {   /* skip the three averages */
    while (*p && *p != ' ') p++;
    while (*p == ' ') p++;
  }
  if (*p < '0' || *p > '9') return -1;
  int n = 0;
  while (*p >= '0' && *p <= '9' && n < 1000000) n = n * 10 + (*p++ - '0');
  return *p == '/' ? n : -1;
#else
  return -1;
#endif
}

int mt_allowed_cores(void) {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  return 0;
}

/* Cores left to the pool by the rest of the system, refreshed at most every
   MT_POOL_LOAD_NS (see there) by the caller that finds the reading stale and
   claims it; 0 when not known. */
static int free_cores(int64_t now) {
  int64_t at = atomic_load(&pool.load_at);
  if (now - at < MT_POOL_LOAD_NS || !atomic_compare_exchange_strong(&pool.load_at, &at, now))
    return atomic_load(&pool.free_cores);
  int runnable = system_runnable(), cores = mt_allowed_cores(), spare = 0;
  if (runnable >= 0 && cores > 0) {
    int ours = 1 + atomic_load(&pool.started) - atomic_load(&pool.sleepers);
    pool.others[pool.reading++ % MT_POOL_LOAD_READINGS] = runnable > ours ? runnable - ours : 0;
    int taken = pool.reading < MT_POOL_LOAD_READINGS ? pool.reading : MT_POOL_LOAD_READINGS;
    int others = taken < 2 ? 0 : pool.others[0];   /* one reading alone proves nothing */
    for (int i = 1; i < taken; i++)
      if (pool.others[i] < others) others = pool.others[i];
    spare = cores > others ? cores - others : 1;
  }
  atomic_store(&pool.free_cores, spare);
  return spare;
}

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

/* the profiler's hook around each chunk (phase 0 before, 1 after), on the thread running it */
static _Atomic(void (*)(int)) chunk_hook;
void mt_parallel_set_chunk_hook(void (*hook)(int phase)) { atomic_store(&chunk_hook, hook); }

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
    void (*hook)(int) = atomic_load_explicit(&chunk_hook, memory_order_relaxed);
    if (hook) hook(0);
    fn(ctx, begin, begin + q + ((int64_t)i < r));
    if (hook) hook(1);                         /* before the count: the caller waits for it */
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
  pool.load_at = 0;
  pool.free_cores = 0;
  pool.reading = 0;
  for (int i = 0; i < MT_POOL_LOAD_READINGS; i++) pool.others[i] = 0;
}

/* Starts workers up to slot want; returns how many threads a loop can use
   (fewer when a thread could not be created). The lock is taken only while
   workers are missing, not on every loop. */
static int start_workers(int want) {
  int started = atomic_load(&pool.started);
  if (started >= want) return want + 1;
  pthread_mutex_lock(&pool.start_lock);
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

/* The width at time now (num_threads >= 2, outside a chunk): 1 while
   loops run solo, else the thread count capped by the cores the system
   leaves free. */
static int width_at(int64_t now) {
  int width = atomic_load(&num_threads);
  if (now < atomic_load(&pool.solo_until)) return 1;
  int spare = free_cores(now);
  return spare > 0 && spare < width ? spare : width;
}

void mt_parallel_for(int64_t n, int64_t grain, mt_chunk_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t nchunks = n / grain, start = 0;
  int width = 1, idle = 0;
  if (nchunks >= 2 && !tls_in_chunk && atomic_load(&num_threads) >= 2) width = width_at(start = now_ns());
  if (width < 2 || !atomic_compare_exchange_strong(&pool.busy, &idle, 1)) {
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

int mt_parallel_width(void) {
  if (tls_in_chunk) return 1;
  return atomic_load(&num_threads) < 2 ? atomic_load(&num_threads) : width_at(now_ns());
}

int mt_parallel_slots(void) { return tls_in_chunk ? tls_slot + 1 : atomic_load(&num_threads); }

int mt_parallel_slot(void) { return tls_slot; }

/* ---- the thread count ---- */
/* OpenBLAS runs on one thread per call (the pool splits large products).
   Debian's default OpenBLAS is built on pthreads and starts a server thread
   per core when it loads, which spins on sched_yield for a while whenever it
   is idle -- at start-up, and again after each fork, whose handlers restart
   the server in parent and child. A thread that only spins takes a core
   from the pool (and the pool's load reading counts it as another busy
   thread), so the server is stopped once calls are single-threaded and after
   every fork. The symbol is weak: other OpenBLAS builds (serial, OpenMP) or
   other BLAS libraries have no such server. */
extern void openblas_set_num_threads(int);
extern int blas_thread_shutdown_(void) __attribute__((weak));

static void blas_server_stop(void) {
  if (blas_thread_shutdown_) blas_thread_shutdown_();
}

/* Registered after OpenBLAS's own handlers (its library is loaded first),
   so these run after the server has been restarted. */
static void after_fork_parent(void) { blas_server_stop(); }
static void after_fork(void) {
  after_fork_child();
  blas_server_stop();
}

/* OpenBLAS picks its kernels from the CPU's model number when it loads; a
   model newer than the library (Debian 12's 0.3.21 on a recent Xeon) gets
   Prescott's SSE3 kernels, a quarter of the GEMM rate of the AVX-512 ones
   (64x784 by 784x256 in float32: 974 us against 245 us). Unless the user
   named a core (OPENBLAS_CORETYPE), a core without AVX2 on a CPU that has
   AVX2 and FMA is replaced, before any product runs, by the one the CPU's
   features allow -- SkylakeX with AVX-512 (Cooperlake's kernels differ only
   in bfloat16 products, which moontorch does not take from OpenBLAS), else
   Haswell -- through OpenBLAS's own initialisation, which reads the
   variable (set for that call alone). Weak: other BLAS libraries lack them. */
extern char *openblas_get_corename(void) __attribute__((weak));
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));

static void blas_pick_core(void) {
  if (!openblas_get_corename || !gotoblas_dynamic_init || !gotoblas_dynamic_quit || getenv("OPENBLAS_CORETYPE"))
    return;
  const char *cur = openblas_get_corename();
  static const char *const capable[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"};
  for (size_t i = 0; cur && i < sizeof capable / sizeof capable[0]; i++)
    if (strcasecmp(cur, capable[i]) == 0) return;
  __builtin_cpu_init();
  const char *want = NULL;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    want = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    want = "Haswell";
  if (!want) return;
  setenv("OPENBLAS_CORETYPE", want, 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
}

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static void blas_single_threaded(void) {
  blas_pick_core();
  openblas_set_num_threads(1);
  blas_server_stop();
  pthread_atfork(NULL, after_fork_parent, after_fork);
}

void mt_set_num_threads(int n) {
  if (n < 1) n = 1;
  if (n > MT_POOL_MAX) n = MT_POOL_MAX;
  atomic_store(&num_threads, n);
  pthread_once(&blas_once, blas_single_threaded);
}

int mt_get_num_threads(void) { return atomic_load(&num_threads); }
