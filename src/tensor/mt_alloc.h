/* mt_alloc.h: the caching CPU allocator (size buckets, 64-byte aligned) and
   its counters; also the "debt" that tells Lua's collector about C memory. */
#ifndef MT_ALLOC_H
#define MT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  int64_t allocated;       /* bytes handed out and not yet freed */
  int64_t peak;            /* high-water mark of allocated */
  int64_t cached;          /* bytes kept in free lists for reuse */
  int64_t num_allocs;      /* calls to mt_alloc */
  int64_t num_cache_hits;  /* of which served from the cache */
  int64_t debt;            /* bytes allocated since the collector last heard */
} mt_alloc_stats;

void *mt_alloc(size_t nbytes);
void mt_free(void *p, size_t nbytes);
void mt_alloc_get_stats(mt_alloc_stats *s);
/* The bytes handed out and given back since start (rounded to their blocks),
   read without the lock: the profiler's per-op deltas. */
void mt_alloc_totals(int64_t *handed_out, int64_t *given_back);
void mt_alloc_reset_peak(void);
void mt_alloc_empty_cache(void);
/* Returns the debt and zeroes it. */
int64_t mt_alloc_take_debt(void);
static inline int64_t mt_alloc_debt(void) {
  extern int64_t mt_alloc_debt_bytes;
  return mt_alloc_debt_bytes;
}

#endif
