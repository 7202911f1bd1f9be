/* mt_iter.c: dimension collapsing and the (optionally parallel) walk over
   an mt_iter, one contiguous-in-the-inner-dim run at a time. */
#include "mt_iter.h"
#include "mt_parallel.h"

void mt_iter_init(mt_iter *it, int n, const mt_tensor *const *ops) {
  const mt_tensor *out = ops[0];
  it->noperands = n;
  it->numel = mt_numel(out);
  it->ndim = 0;
  for (int k = 0; k < n; k++) it->base[k] = mt_data(ops[k]);
  if (it->numel == 0) {                        /* nothing to walk; the strides of an */
    it->ndim = 1;                              /* empty view are unbounded: skip them */
    it->shape[0] = 0;
    for (int k = 0; k < n; k++) it->strides[0][k] = 0;
    return;
  }
  /* walk dims innermost-first, dropping size-1 dims and merging a dim into the
     previous (inner) one when every operand is linear across the pair */
  for (int d = out->ndim - 1; d >= 0; d--) {
    int64_t size = out->shape[d];
    if (size == 1) continue;
    if (it->ndim > 0) {
      int j = it->ndim - 1, mergeable = 1;
      for (int k = 0; k < n; k++) {
        int64_t sb = ops[k]->stride[d] * mt_dtypes[ops[k]->dtype].size;
        if (sb != it->strides[j][k] * it->shape[j]) { mergeable = 0; break; }
      }
      if (mergeable) { it->shape[j] *= size; continue; }
    }
    int j = it->ndim++;
    it->shape[j] = size;
    for (int k = 0; k < n; k++)
      it->strides[j][k] = ops[k]->stride[d] * mt_dtypes[ops[k]->dtype].size;
  }
  if (it->ndim == 0) {                         /* scalar or all size-1 dims */
    it->ndim = 1;
    it->shape[0] = 1;
    for (int k = 0; k < n; k++) it->strides[0][k] = 0;
  }
}

/* Elements [begin, end) in linear (row-major over collapsed dims) order. */
static void run_range(const mt_iter *it, mt_loop_fn fn, void *ctx, int64_t begin, int64_t end) {
  int n = it->noperands, nd = it->ndim;
  int64_t idx[MT_MAX_DIMS];
  char *ptr[MT_ITER_MAX_OPERANDS];
  int64_t inner_strides[MT_ITER_MAX_OPERANDS];
  int64_t rem = begin;
  for (int k = 0; k < n; k++) { ptr[k] = it->base[k]; inner_strides[k] = it->strides[0][k]; }
  for (int d = 0; d < nd; d++) {
    idx[d] = rem % it->shape[d];
    rem /= it->shape[d];
    for (int k = 0; k < n; k++) ptr[k] += idx[d] * it->strides[d][k];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t run = it->shape[0] - idx[0];
    if (run > end - pos) run = end - pos;
    fn(ptr, inner_strides, run, ctx);
    pos += run;
    if (pos >= end) break;
    /* advance: inner dim wrapped (run reached its end) */
    for (int k = 0; k < n; k++) ptr[k] += run * it->strides[0][k];
    idx[0] += run;
    for (int d = 0; d < nd - 1 && idx[d] == it->shape[d]; d++) {
      for (int k = 0; k < n; k++)
        ptr[k] += it->strides[d + 1][k] - it->shape[d] * it->strides[d][k];
      idx[d] = 0;
      idx[d + 1]++;
    }
  }
}

typedef struct {
  const mt_iter *it;
  mt_loop_fn fn;
  void *ctx;
} iter_job;

static void run_chunk(void *job, int64_t begin, int64_t end) {
  const iter_job *j = job;
  run_range(j->it, j->fn, j->ctx, begin, end);
}

void mt_iter_run(const mt_iter *it, mt_loop_fn fn, void *ctx, int serial) {
  if (it->numel == 0) return;
  if (serial) {
    run_range(it, fn, ctx, 0, it->numel);
    return;
  }
  iter_job job = {it, fn, ctx};
  mt_parallel_for(it->numel, MT_ITER_GRAIN / 2, run_chunk, &job);
}

/* Square tiles of the two innermost dims: within a tile, every cache line
   an operand touches across the tile's rows is reused before it is evicted.
   64 elements keep a tile of 4-byte values (16 KiB per operand) in L1. */
#define MT_ITER_TILE 64

typedef struct {
  const mt_iter *it;
  mt_loop_fn fn;
  void *ctx;
  int64_t row_tiles;
} tiled_job;

/* Row tiles [begin, end) of every plane, numbered plane-major. */
static void run_tiles(void *job, int64_t begin, int64_t end) {
  const tiled_job *j = job;
  const mt_iter *it = j->it;
  int n = it->noperands;
  int64_t cols = it->shape[0], rows = it->shape[1];
  const int64_t *inner = it->strides[0];
  for (int64_t w = begin; w < end; w++) {
    int64_t plane = w / j->row_tiles, r0 = (w % j->row_tiles) * MT_ITER_TILE;
    int64_t r1 = r0 + MT_ITER_TILE < rows ? r0 + MT_ITER_TILE : rows;
    char *base[MT_ITER_MAX_OPERANDS];
    for (int k = 0; k < n; k++) base[k] = it->base[k];
    for (int d = 2; d < it->ndim; d++) {               /* plane -> outer offsets */
      int64_t i = plane % it->shape[d];
      plane /= it->shape[d];
      for (int k = 0; k < n; k++) base[k] += i * it->strides[d][k];
    }
    for (int64_t c0 = 0; c0 < cols; c0 += MT_ITER_TILE) {
      int64_t len = cols - c0 < MT_ITER_TILE ? cols - c0 : MT_ITER_TILE;
      for (int64_t r = r0; r < r1; r++) {
        char *ptr[MT_ITER_MAX_OPERANDS];
        for (int k = 0; k < n; k++) ptr[k] = base[k] + r * it->strides[1][k] + c0 * inner[k];
        j->fn(ptr, inner, len, j->ctx);
      }
    }
  }
}

void mt_iter_run_tiled(const mt_iter *it, mt_loop_fn fn, void *ctx) {
  if (it->numel == 0) return;
  int64_t cols = it->shape[0], rows = it->shape[1];
  int64_t planes = it->numel / (rows * cols);
  tiled_job job = {it, fn, ctx, (rows + MT_ITER_TILE - 1) / MT_ITER_TILE};
  int64_t tiles = planes * job.row_tiles;   /* at most numel: no overflow */
  mt_parallel_for(tiles, mt_parallel_items(MT_ITER_GRAIN / 2, it->numel, tiles), run_tiles, &job);
}
