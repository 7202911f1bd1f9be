/* mt_parallel.h: the one pool of worker threads every parallel loop of the
   engine runs on, and the thread count that sizes it and OpenBLAS. */
#ifndef MT_PARALLEL_H
#define MT_PARALLEL_H

#include <stdint.h>

/* A chunk of a parallel loop: items [begin, end) of the loop's range. */
typedef void (*mt_chunk_fn)(void *ctx, int64_t begin, int64_t end);

/* Runs fn over [0, n) in chunks of at least grain items, spread over up to
   mt_get_num_threads() threads. The calling thread works too and never
   waits for a worker that has not started a chunk: chunks are claimed one
   at a time, so on a busy machine the caller simply does more of them.
   Runs fn(ctx, 0, n) inline when n < 2 * grain, with one thread, or when
   called from inside a chunk. Chunks must not depend on which thread runs
   them, except through mt_parallel_slot(). */
void mt_parallel_for(int64_t n, int64_t grain, mt_chunk_fn fn, void *ctx);

/* The grain mt_parallel_for takes, in items, for a loop over `items` items
   that together take `work` element steps: a chunk gets about `elements`
   steps (at least one item). */
static inline int64_t mt_parallel_items(int64_t elements, int64_t work, int64_t items) {
  int64_t per_item = items > 0 ? work / items : 1;
  if (per_item < 1) per_item = 1;
  return elements > per_item ? (elements + per_item - 1) / per_item : 1;
}

/* The number of threads a loop started now would use (1 inside a chunk):
   mt_get_num_threads(), less the cores other busy threads of the system
   hold, and 1 while the pool's workers are being paused (mt_parallel.c).
   Kernels size their splits by it; it may change from one call to the next. */
int mt_parallel_width(void);
/* Cores this process may run on (its affinity mask, which taskset and
   cpusets narrow), or 0 when unknown. */
int mt_allowed_cores(void);
/* The size of a scratch array indexed by mt_parallel_slot(): every slot a
   chunk of a loop started now can run in is below it. */
int mt_parallel_slots(void);
/* The running thread's slot, 0 .. mt_parallel_slots() - 1: stable for the
   length of a chunk, 0 outside any parallel loop. */
int mt_parallel_slot(void);

/* Calls hook(0) before and hook(1) after each chunk a loop hands out, on
   the thread that runs it (the profiler's rows per thread); NULL: none. */
void mt_parallel_set_chunk_hook(void (*hook)(int phase));

#endif
