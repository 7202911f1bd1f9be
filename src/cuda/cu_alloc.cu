/* cu_alloc.cu: the caching allocator of device memory (cu.h). Released
   blocks stay in a free list per device, so a training loop's second step
   allocates without cudaMalloc (which synchronises the device) or cudaFree.

   Reuse without synchronisation is safe by stream order: a block is released
   when its tensor dies, and the kernels that used it were queued on the
   device's current stream before that; a later allocation that takes the
   block queues its kernels on the same stream, after them. So a block
   remembers the stream current when it was released and is reused only on
   that one (a tensor used on another stream than the one current at its
   release is the caller's to synchronise, as PyTorch's record_stream). */
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>
#include "cu.h"

/* Sizes round up to SMALL_ROUND below LARGE_MIN and to LARGE_ROUND above,
   so that blocks of nearby sizes are interchangeable: 512 bytes keeps every
   block aligned for any vector load; 2 MiB is the GPU's large page. */
#define SMALL_ROUND ((size_t)512)
#define LARGE_MIN ((size_t)1 << 20)
#define LARGE_ROUND ((size_t)2 << 20)
/* A cached block serves a request up to a quarter smaller than itself:
   more would hold memory no tensor uses. */
#define REUSE_SLACK 4

namespace {

struct cached_block {
  void *ptr;
  cudaStream_t stream;
};

struct device_pool {
  std::multimap<size_t, cached_block> free_blocks;   /* by size */
  std::unordered_map<void *, size_t> live;           /* block -> its size */
  cu_mem_stats stats;
};

/* Never destroyed: a tensor may be released by a static destructor or at
   exit after this file's statics would be. */
std::mutex &pool_lock() {
  static std::mutex *m = new std::mutex;
  return *m;
}

std::vector<device_pool *> &pools() {
  static std::vector<device_pool *> *v = new std::vector<device_pool *>;
  return *v;
}

device_pool *pool_of(int index) {
  std::vector<device_pool *> &v = pools();
  if (index < 0) return NULL;
  if ((size_t)index >= v.size()) v.resize((size_t)index + 1, NULL);
  if (!v[index]) v[index] = new device_pool();
  return v[index];
}

size_t round_size(size_t n) {
  if (n < LARGE_MIN) return n == 0 ? SMALL_ROUND : (n + SMALL_ROUND - 1) / SMALL_ROUND * SMALL_ROUND;
  return (n + LARGE_ROUND - 1) / LARGE_ROUND * LARGE_ROUND;
}

void note_alloc(cu_mem_stats *s, size_t size) {
  s->allocated += (int64_t)size;
  if (s->allocated > s->peak) s->peak = s->allocated;
}

/* Frees every cached block of p (index's pool); called with the lock held. */
void release_cached(device_pool *p, int index) {
  if (p->free_blocks.empty()) return;
  if (cu_set_device("empty_cache", index)) return;
  for (auto &entry : p->free_blocks) {
    cudaFree(entry.second.ptr);
    p->stats.reserved -= (int64_t)entry.first;
  }
  p->free_blocks.clear();
}

}  // namespace

CU_EXTERN void *cu_alloc(size_t nbytes, int index) {
  std::lock_guard<std::mutex> guard(pool_lock());
  device_pool *p = pool_of(index);
  if (!p) {
    mt_fail("cuda: invalid device index %d", index);
    return NULL;
  }
  const size_t size = round_size(nbytes);
  cudaStream_t stream = cu_stream(index);
  p->stats.num_allocs++;
  /* the smallest cached block of this stream that is large enough */
  for (auto it = p->free_blocks.lower_bound(size);
       it != p->free_blocks.end() && it->first - size <= it->first / REUSE_SLACK; ++it) {
    if (it->second.stream != stream) continue;
    void *ptr = it->second.ptr;
    p->live[ptr] = it->first;
    note_alloc(&p->stats, it->first);
    p->free_blocks.erase(it);
    p->stats.num_cache_hits++;
    return ptr;
  }
  if (cu_set_device("alloc", index)) return NULL;
  void *ptr = NULL;
  cudaError_t e = cudaMalloc(&ptr, size);
  if (e == cudaErrorMemoryAllocation) {        /* the cache may hold enough: free it, try once more */
    cudaGetLastError();                        /* not the next launch's error */
    release_cached(p, index);
    e = cudaMalloc(&ptr, size);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    char dev[32];
    mt_device_str(MT_CUDA, index, dev, sizeof dev);
    if (e == cudaErrorMemoryAllocation)
      mt_fail("out of memory: tried to allocate %zu bytes on %s (%lld allocated, %lld reserved)", nbytes, dev,
              (long long)p->stats.allocated, (long long)p->stats.reserved);
    else
      mt_fail("allocating %zu bytes on %s: CUDA error: %s", nbytes, dev, cudaGetErrorString(e));
    return NULL;
  }
  p->stats.num_device_allocs++;
  p->stats.reserved += (int64_t)size;
  if (p->stats.reserved > p->stats.peak_reserved) p->stats.peak_reserved = p->stats.reserved;
  p->live[ptr] = size;
  note_alloc(&p->stats, size);
  return ptr;
}

CU_EXTERN void cu_free(void *ptr, size_t nbytes, int index) {
  (void)nbytes;                                 /* the block's own size is recorded */
  if (!ptr) return;
  std::lock_guard<std::mutex> guard(pool_lock());
  device_pool *p = pool_of(index);
  auto it = p ? p->live.find(ptr) : std::unordered_map<void *, size_t>::iterator();
  if (!p || it == p->live.end()) {              /* not ours: give it back */
    cudaFree(ptr);
    return;
  }
  const size_t size = it->second;
  p->live.erase(it);
  p->stats.allocated -= (int64_t)size;
  p->free_blocks.insert(std::make_pair(size, cached_block{ptr, cu_stream(index)}));
}

CU_EXTERN void cu_memory_stats(int index, cu_mem_stats *s) {
  std::lock_guard<std::mutex> guard(pool_lock());
  memset(s, 0, sizeof *s);
  std::vector<device_pool *> &v = pools();
  if (index >= 0 && (size_t)index < v.size() && v[index]) *s = v[index]->stats;
}

CU_EXTERN void cu_reset_peak(int index) {
  std::lock_guard<std::mutex> guard(pool_lock());
  device_pool *p = pool_of(index);
  if (!p) return;
  p->stats.peak = p->stats.allocated;
  p->stats.peak_reserved = p->stats.reserved;
}

/* cudaFree waits for the device, so blocks still in use by queued kernels
   are freed only after them. */
CU_EXTERN void cu_empty_cache(void) {
  std::lock_guard<std::mutex> guard(pool_lock());
  std::vector<device_pool *> &v = pools();
  for (size_t i = 0; i < v.size(); i++)
    if (v[i]) release_cached(v[i], (int)i);
}
