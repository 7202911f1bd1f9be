/* mt_alloc.c: size-bucketed caching allocator. Blocks are rounded up to a
   power of two (at least 64 bytes) and kept in per-size free lists on free. */
#include "mt_alloc.h"
#include <sanitizer/asan_interface.h>
#include <stdlib.h>
#include <string.h>

/* Blocks above this size go straight to the system: caching them would pin
   too much memory for too little gain (the page faults dominate anyway). */
#define MT_ALLOC_MAX_CACHED_BLOCK ((size_t)64 << 20)
/* The cache as a whole never holds more than this; beyond it, frees are real. */
#define MT_ALLOC_CACHE_LIMIT ((int64_t)512 << 20)
#define MT_ALLOC_ALIGN 64
#define MT_ALLOC_NBUCKETS 64

typedef struct block { struct block *next; } block;

static block *free_lists[MT_ALLOC_NBUCKETS];
static mt_alloc_stats stats;
static int64_t handed_out, given_back;       /* bytes, since start: the profiler's deltas */
int64_t mt_alloc_debt_bytes;
static volatile int lock_word;

static void lock(void) { while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE)) ; }
static void unlock(void) { __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE); }

/* Under AddressSanitizer (the macros are no-ops elsewhere) only the bytes
   asked for are addressable: the rounding's tail and the cached blocks are
   poisoned, so that an overrun or a use after free shows as one. A cached
   block's free-list link stays addressable: LeakSanitizer ignores pointers in
   poisoned memory, and would call the rest of the list leaked. */
static void *hand_out(void *p, size_t nbytes, size_t rounded) {
  ASAN_UNPOISON_MEMORY_REGION(p, nbytes);
  ASAN_POISON_MEMORY_REGION((char *)p + nbytes, rounded - nbytes);
  return p;
}

static int bucket_of(size_t n, size_t *rounded) {
  int b = n <= 64 ? 6 : 64 - __builtin_clzll((unsigned long long)(n - 1));
  *rounded = (size_t)1 << b;
  return b;
}

void *mt_alloc(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  size_t rounded = nbytes;
  int b = -1;
  if (nbytes <= MT_ALLOC_MAX_CACHED_BLOCK) b = bucket_of(nbytes, &rounded);
  else rounded = (nbytes + 4095) & ~(size_t)4095;
  void *p = NULL;
  lock();
  stats.num_allocs++;
  if (b >= 0 && free_lists[b]) {
    block *blk = free_lists[b];
    free_lists[b] = blk->next;
    stats.cached -= (int64_t)rounded;
    stats.num_cache_hits++;
    p = blk;
  }
  if (p) {                                   /* the common case: one locked section */
    stats.allocated += (int64_t)rounded;
    __atomic_store_n(&handed_out, handed_out + (int64_t)rounded, __ATOMIC_RELAXED);
    if (stats.allocated > stats.peak) stats.peak = stats.allocated;
    mt_alloc_debt_bytes += (int64_t)rounded;
    unlock();
    return hand_out(p, nbytes, rounded);
  }
  unlock();
  p = aligned_alloc(MT_ALLOC_ALIGN, rounded);
  if (!p && stats.cached > 0) {              /* out of memory: drop the cache, retry */
    mt_alloc_empty_cache();
    p = aligned_alloc(MT_ALLOC_ALIGN, rounded);
  }
  if (!p) return NULL;
  lock();
  stats.allocated += (int64_t)rounded;
  __atomic_store_n(&handed_out, handed_out + (int64_t)rounded, __ATOMIC_RELAXED);
  if (stats.allocated > stats.peak) stats.peak = stats.allocated;
  mt_alloc_debt_bytes += (int64_t)rounded;
  unlock();
  return hand_out(p, nbytes, rounded);
}

void mt_free(void *p, size_t nbytes) {
  if (!p) return;
  if (nbytes == 0) nbytes = 1;
  size_t rounded = nbytes;
  int b = -1;
  if (nbytes <= MT_ALLOC_MAX_CACHED_BLOCK) b = bucket_of(nbytes, &rounded);
  else rounded = (nbytes + 4095) & ~(size_t)4095;
  lock();
  stats.allocated -= (int64_t)rounded;
  __atomic_store_n(&given_back, given_back + (int64_t)rounded, __ATOMIC_RELAXED);
  if (b >= 0 && stats.cached + (int64_t)rounded <= MT_ALLOC_CACHE_LIMIT) {
    block *blk = p;
    ASAN_UNPOISON_MEMORY_REGION(blk, sizeof *blk);
    blk->next = free_lists[b];
    ASAN_POISON_MEMORY_REGION((char *)blk + sizeof *blk, rounded - sizeof *blk);
    free_lists[b] = blk;
    stats.cached += (int64_t)rounded;
    p = NULL;
  }
  unlock();
  free(p);
}

void mt_alloc_empty_cache(void) {
  lock();
  for (int b = 0; b < MT_ALLOC_NBUCKETS; b++) {
    block *blk = free_lists[b];
    while (blk) { block *next = blk->next; free(blk); blk = next; }
    free_lists[b] = NULL;
  }
  stats.cached = 0;
  unlock();
}

void mt_alloc_get_stats(mt_alloc_stats *s) {
  lock(); *s = stats; s->debt = mt_alloc_debt_bytes; unlock();
}

void mt_alloc_totals(int64_t *out, int64_t *back) {
  *out = __atomic_load_n(&handed_out, __ATOMIC_RELAXED);
  *back = __atomic_load_n(&given_back, __ATOMIC_RELAXED);
}

void mt_alloc_reset_peak(void) { lock(); stats.peak = stats.allocated; unlock(); }

int64_t mt_alloc_take_debt(void) {
  lock(); int64_t d = mt_alloc_debt_bytes; mt_alloc_debt_bytes = 0; unlock();
  return d;
}
