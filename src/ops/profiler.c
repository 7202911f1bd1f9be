/* profiler.c: the recorder behind torch.profiler (profiler.h). Each thread
   appends to its own buffer, so recording takes no lock; names are interned once. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "profiler.h"
#include "dispatch.h"
#include "../tensor/mt_alloc.h"
#include "../tensor/mt_parallel.h"

/* Events nest at most this deep per thread; deeper ones are not recorded
   (a recursion that deep is not something a table or a trace can show). */
#define MT_PROF_MAX_DEPTH 256
/* Threads that can record in one session: the pool's workers, the caller
   and a few more; a thread beyond them records nothing. */
#define MT_PROF_MAX_THREADS 256
/* A thread's first buffer, in events; it doubles when full. */
#define MT_PROF_FIRST_EVENTS 4096

typedef struct {
  mt_prof_event *events;
  int32_t n, cap;
  int64_t *words;                     /* the shapes: count, then per input ndim and the sizes */
  int64_t nwords, wcap;
  int32_t open[MT_PROF_MAX_DEPTH];    /* the open events' indices, -1 for one not recorded */
  int depth, beyond;                  /* beyond: opened past MT_PROF_MAX_DEPTH, not recorded */
  unsigned session;
  int os_tid;
  char label[40];
} prof_thread;

int mt_prof_on;
static int flags;
static unsigned session;
static int64_t origin;
static prof_thread *owner;                      /* the thread that started the session */
static int32_t current_name = -1;               /* the owner's innermost open event: the pool's chunks' name */
static int32_t (*site_fn)(void);
static int32_t op_names[MT_NUM_OPS];
static mt_op_hook_fn chained;                   /* the op hook set before the session (the op counter) */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static prof_thread *threads[MT_PROF_MAX_THREADS];
static int nthreads;
static _Thread_local prof_thread *me;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- interned names: an open-addressing table of ids into a list of copies ---- */
static char **names;
static int32_t nnames, names_cap;
static int32_t *slots;                          /* id + 1, 0 empty; size slots_cap, a power of two */
static int32_t slots_cap;

static uint32_t hash_of(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static int grow_slots(void) {
  int64_t cap = slots_cap ? slots_cap : 1024, bytes;
  if (slots_cap && mt_mul_size("profiler", cap, 2, &cap)) return -1;
  if (cap > INT32_MAX || mt_mul_size("profiler", cap, (int64_t)sizeof *slots, &bytes)) return -1;
  int32_t *grown = calloc(1, (size_t)bytes);
  if (!grown) return -1;
  for (int32_t i = 0; i < nnames; i++) {
    uint32_t j = hash_of(names[i]) & (uint32_t)(cap - 1);
    while (grown[j]) j = (j + 1) & (uint32_t)(cap - 1);
    grown[j] = i + 1;
  }
  free(slots);
  slots = grown;
  slots_cap = (int32_t)cap;
  return 0;
}

int32_t mt_prof_name(const char *name) {
  pthread_mutex_lock(&lock);
  int32_t id = -1;
  if ((nnames + 1) * 2 > slots_cap && grow_slots()) goto done;
  uint32_t j = hash_of(name) & (uint32_t)(slots_cap - 1);
  for (; slots[j]; j = (j + 1) & (uint32_t)(slots_cap - 1))
    if (!strcmp(names[slots[j] - 1], name)) { id = slots[j] - 1; goto done; }
  if (nnames == names_cap) {
    int64_t cap = names_cap ? names_cap : 512, bytes;
    if ((names_cap && mt_mul_size("profiler", cap, 2, &cap)) || cap > INT32_MAX ||
        mt_mul_size("profiler", cap, (int64_t)sizeof *names, &bytes))
      goto done;
    char **grown = realloc(names, (size_t)bytes);
    if (!grown) goto done;
    names = grown;
    names_cap = (int32_t)cap;
  }
  char *copy = strdup(name);
  if (!copy) goto done;
  names[nnames] = copy;
  slots[j] = nnames + 1;
  id = nnames++;
done:
  pthread_mutex_unlock(&lock);
  return id;
}

const char *mt_prof_name_text(int32_t id) {
  pthread_mutex_lock(&lock);
  const char *text = id >= 0 && id < nnames ? names[id] : "?";
  pthread_mutex_unlock(&lock);
  return text;
}

void mt_prof_set_site_fn(int32_t (*fn)(void)) { site_fn = fn; }

/* ---- the calling thread's buffer ---- */
static __attribute__((noinline)) prof_thread *attach(void) {
  if (!me) {
    prof_thread *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_lock(&lock);
    if (nthreads < MT_PROF_MAX_THREADS) threads[nthreads++] = t;
    else { free(t); t = NULL; }
    pthread_mutex_unlock(&lock);
    if (!t) return NULL;
    t->os_tid = (int)syscall(SYS_gettid);
    me = t;
  }
  me->n = 0;
  me->nwords = 0;
  me->depth = me->beyond = 0;
  if (me == owner) snprintf(me->label, sizeof me->label, "main thread");
  else if (mt_parallel_slot() > 0) snprintf(me->label, sizeof me->label, "pool worker %d", mt_parallel_slot());
  else snprintf(me->label, sizeof me->label, "thread %d", me->os_tid);
  __atomic_store_n(&me->session, session, __ATOMIC_RELEASE);
  return me;
}

static int grow_events(prof_thread *t) {
  int64_t cap = MT_PROF_FIRST_EVENTS, bytes;
  if (t->cap && mt_mul_size("profiler", t->cap, 2, &cap)) return -1;
  if (cap > INT32_MAX || mt_mul_size("profiler", cap, (int64_t)sizeof *t->events, &bytes)) return -1;
  mt_prof_event *grown = realloc(t->events, (size_t)bytes);
  if (!grown) return -1;
  t->events = grown;
  t->cap = (int32_t)cap;
  return 0;
}

/* room for n more shape words */
static int reserve_words(prof_thread *t, int64_t n) {
  int64_t need, bytes;
  if (mt_add_size("profiler", t->nwords, n, &need)) return -1;
  if (need <= t->wcap) return 0;
  int64_t cap = t->wcap ? t->wcap : 4096;
  while (cap < need) if (mt_mul_size("profiler", cap, 2, &cap)) return -1;
  if (mt_mul_size("profiler", cap, (int64_t)sizeof *t->words, &bytes)) return -1;
  int64_t *grown = realloc(t->words, (size_t)bytes);
  if (!grown) return -1;
  t->words = grown;
  t->wcap = cap;
  return 0;
}

/* the shapes of a, b, c up to the last given one (a missing one in between as no sizes) */
static int32_t record_shapes(prof_thread *t, const mt_tensor *a, const mt_tensor *b, const mt_tensor *c) {
  const mt_tensor *in[3] = {a, b, c};
  int count = c ? 3 : b ? 2 : a ? 1 : 0;
  if (reserve_words(t, 1 + count * (1 + MT_MAX_DIMS)) || t->nwords > INT32_MAX) return -1;
  int32_t at = (int32_t)t->nwords;
  t->words[t->nwords++] = count;
  for (int i = 0; i < count; i++) {
    const int ndim = in[i] ? in[i]->ndim : 0;
    t->words[t->nwords++] = ndim;
    for (int d = 0; d < ndim; d++) t->words[t->nwords++] = in[i]->shape[d];
  }
  return at;
}

void mt_prof_begin(int32_t name, int kind, const mt_tensor *a, const mt_tensor *b, const mt_tensor *c) {
  if (!__atomic_load_n(&mt_prof_on, __ATOMIC_ACQUIRE)) return;
  prof_thread *t = me;
  if (__builtin_expect(!t || __atomic_load_n(&t->session, __ATOMIC_ACQUIRE) != session, 0) && !(t = attach())) return;
  if (t->depth == MT_PROF_MAX_DEPTH) { t->beyond++; return; }
  if (t->n == t->cap && grow_events(t)) { t->open[t->depth++] = -1; return; }
  mt_prof_event *e = &t->events[t->n];
  e->name = name;
  e->kind = kind;
  e->parent = t->depth ? t->open[t->depth - 1] : -1;
  e->shapes = (flags & MT_PROF_SHAPES) && kind == MT_PROF_OP ? record_shapes(t, a, b, c) : -1;
  e->site = (flags & MT_PROF_STACK) && t == owner && site_fn && kind != MT_PROF_CHUNK ? site_fn() : -1;
  e->end_ns = 0;
  if (flags & MT_PROF_MEMORY) mt_alloc_totals(&e->alloc_bytes, &e->freed_bytes);
  else e->alloc_bytes = e->freed_bytes = 0;
  t->open[t->depth++] = t->n++;
  if (t == owner) current_name = name;
  e->start_ns = now_ns();
}

void mt_prof_end(void) {
  if (!__atomic_load_n(&mt_prof_on, __ATOMIC_ACQUIRE)) return;
  const int64_t end = now_ns();
  prof_thread *t = me;
  if (!t || __atomic_load_n(&t->session, __ATOMIC_ACQUIRE) != session || t->depth == 0) return;
  if (t->beyond) { t->beyond--; return; }
  const int32_t i = t->open[--t->depth];
  if (t == owner) current_name = t->depth && t->open[t->depth - 1] >= 0 ? t->events[t->open[t->depth - 1]].name : -1;
  if (i < 0) return;
  mt_prof_event *e = &t->events[i];
  e->end_ns = end;
  if (flags & MT_PROF_MEMORY) {
    int64_t out, back;
    mt_alloc_totals(&out, &back);
    e->alloc_bytes = out - e->alloc_bytes;
    e->freed_bytes = back - e->freed_bytes;
  }
}

/* ---- the hooks ---- */
static void op_hook(int op, int phase, const mt_tensor *a, const mt_tensor *b, const mt_tensor *c) {
  if (chained) chained(op, phase, a, b, c);
  if (phase == 0) mt_prof_begin(op >= 0 && op < MT_NUM_OPS ? op_names[op] : -1, MT_PROF_OP, a, b, c);
  else mt_prof_end();
}

/* a chunk of a parallel loop on a pool worker, named after the op the owner runs */
static void chunk_hook(int phase) {
  if (me == owner && owner) return;             /* the caller's own share: inside its op already */
  if (phase == 0) mt_prof_begin(current_name, MT_PROF_CHUNK, NULL, NULL, NULL);
  else mt_prof_end();
}

static void after_fork_child(void);
static void register_fork_handler(void) { pthread_atfork(NULL, NULL, after_fork_child); }

/* A forked child (a DataLoader worker) records nothing: no one would read it. */
static void after_fork_child(void) {
  if (!mt_prof_on) return;
  mt_prof_on = 0;
  mt_set_op_hook(chained);
  mt_parallel_set_chunk_hook(NULL);
  chained = NULL;
}

int mt_prof_start(int what) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, register_fork_handler);
  if (mt_prof_on) mt_prof_stop();
  for (int op = 0; op < MT_NUM_OPS; op++)
    if ((op_names[op] = mt_prof_name(mt_op_names[op])) < 0) return mt_fail("profiler: out of memory");
  flags = what;
  session++;
  owner = NULL;
  current_name = -1;
  if (!(owner = attach())) return mt_fail("profiler: out of memory");
  snprintf(owner->label, sizeof owner->label, "main thread");
  chained = mt_get_op_hook();
  mt_set_op_hook(op_hook);
  mt_parallel_set_chunk_hook(chunk_hook);
  origin = now_ns();
  __atomic_store_n(&mt_prof_on, 1, __ATOMIC_RELEASE);
  return 0;
}

/* The events still open end now (in every thread: none runs a loop between ops). */
void mt_prof_stop(void) {
  if (!mt_prof_on) return;
  for (int i = 0; i < nthreads; i++) {
    prof_thread *t = threads[i];
    if (t->session != session) continue;
    while (t->depth > 0) {
      prof_thread *saved = me;
      me = t;
      mt_prof_end();
      me = saved;
    }
  }
  __atomic_store_n(&mt_prof_on, 0, __ATOMIC_RELEASE);
  mt_set_op_hook(chained);
  mt_parallel_set_chunk_hook(NULL);
  chained = NULL;
}

/* ---- reading ---- */
/* the i-th thread of the last session */
static prof_thread *nth(int i) {
  for (int k = 0; k < nthreads; k++)
    if (threads[k]->session == session && i-- == 0) return threads[k];
  return NULL;
}

int mt_prof_threads(void) {
  int n = 0;
  for (int k = 0; k < nthreads; k++) n += threads[k]->session == session;
  return n;
}

const mt_prof_event *mt_prof_events(int thread, int32_t *n) {
  prof_thread *t = nth(thread);
  *n = t ? t->n : 0;
  return t ? t->events : NULL;
}

const int64_t *mt_prof_words(int thread) {
  prof_thread *t = nth(thread);
  return t ? t->words : NULL;
}

int mt_prof_thread_id(int thread) {
  prof_thread *t = nth(thread);
  return t ? t->os_tid : 0;
}

const char *mt_prof_thread_label(int thread) {
  prof_thread *t = nth(thread);
  return t ? t->label : "";
}

int64_t mt_prof_origin(void) { return origin; }
