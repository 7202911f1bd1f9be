/* mt_shape.c: cat, stack, split, flatten/unflatten, repeat, flip, roll,
   tril/triu and movedim -- views where the layout allows, else copies. */
#include <stdio.h>
#include "mt_shape.h"
#include "mt_iter.h"
#include "mt_parallel.h"
#include "mt_index.h"

/* Bytes a cat input or a triangle must move before its loop is split across
   threads: below this, waking a team costs more than the copy. */
#define MT_SHAPE_GRAIN ((int64_t)1 << 18)

/* "[2, 2, 1]" for messages, shortened after a few entries. */
static const char *list_str(const int64_t *v, int64_t n, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int64_t i = 0; i < n && used < size; i++) {
    if (i == 8 && n > 9) { used += (size_t)snprintf(buf + used, size - used, ", ..."); break; }
    used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)v[i]);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}

/* ---- cat and stack ---- */

/* Legacy rule kept by PyTorch: a 1-D tensor with no elements joins any cat. */
static int cat_skips(const mt_tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

/* Rows of a cat's contiguous copy: row o of src to row o of the slab. */
typedef struct {
  char *dst;
  const char *from;
  size_t chunk, row;
} place_job;

static void place_rows(void *job, int64_t begin, int64_t end) {
  const place_job *j = job;
  for (int64_t o = begin; o < end; o++) memcpy(j->dst + (size_t)o * j->row, j->from + (size_t)o * j->chunk, j->chunk);
}

/* Copies src into r's slab [start, start + src->shape[dim]) of dim; src has
   r's shape in every other dim. A contiguous source of r's dtype is one
   memcpy per row of the dims before dim. */
static int place(mt_tensor *r, int dim, int64_t start, const mt_tensor *src) {
  int64_t len = src->shape[dim];
  if (mt_numel(src) == 0) return 0;
  if (src->dtype == r->dtype && mt_is_contiguous(src) && mt_is_contiguous(r) && mt_device_of(r) == MT_CPU) {
    size_t es = (size_t)mt_dtypes[r->dtype].size;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < dim; i++) outer *= r->shape[i];
    for (int i = dim + 1; i < r->ndim; i++) inner *= r->shape[i];
    size_t chunk = (size_t)(len * inner) * es, row = (size_t)(r->shape[dim] * inner) * es;
    place_job job = {mt_data(r) + (size_t)(start * inner) * es, mt_data(src), chunk, row};
    mt_parallel_for(outer, mt_parallel_items(MT_SHAPE_GRAIN / 2, (int64_t)chunk, 1), place_rows, &job);
    return 0;
  }
  mt_tensor slab = {0};
  if (mt_narrow(&slab, r, dim, start, len)) return -1;
  int rc = mt_copy(&slab, src);
  mt_tensor_release(&slab);
  return rc;
}

int mt_cat(mt_tensor *r, const mt_tensor *const *ts, int n, int dim) {
  if (n <= 0) return mt_fail("cat: expected a non-empty list of tensors");
  int first = -1, dtype = ts[0]->dtype;
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim == 0)
      return mt_fail("cat: zero-dimensional tensor (at position %d) cannot be concatenated", i + 1);
    dtype = mt_promote(dtype, ts[i]->dtype);
    if (first < 0 && !cat_skips(ts[i])) first = i;
  }
  if (first < 0) {                             /* every input is empty 1-D */
    if (mt_wrap_dim("cat", dim, 1) < 0) return -1;
    int64_t zero = 0;
    return mt_tensor_init(r, dtype, 1, &zero);
  }
  const mt_tensor *ref = ts[first];
  for (int i = 0; i < n; i++)
    if (mt_check_same_device("cat", ref, ts[i])) return -1;
  if ((dim = mt_wrap_dim("cat", dim, ref->ndim)) < 0) return -1;
  int64_t shape[MT_MAX_DIMS];
  memcpy(shape, ref->shape, sizeof(int64_t) * (size_t)ref->ndim);
  shape[dim] = 0;
  for (int i = first; i < n; i++) {
    const mt_tensor *t = ts[i];
    if (cat_skips(t)) continue;
    char b1[128], b2[128];
    if (t->ndim != ref->ndim)
      return mt_fail("cat: tensors must have the same number of dims: got %s (tensor %d) and %s (tensor %d)",
                     mt_shape_str(ref, b1, sizeof b1), first + 1, mt_shape_str(t, b2, sizeof b2), i + 1);
    for (int d = 0; d < t->ndim; d++)
      if (d != dim && t->shape[d] != ref->shape[d])
        return mt_fail("cat: shapes %s (tensor %d) and %s (tensor %d) must match except in dim %d",
                       mt_shape_str(ref, b1, sizeof b1), first + 1, mt_shape_str(t, b2, sizeof b2), i + 1, dim + 1);
    if (mt_add_size("cat", shape[dim], t->shape[dim], &shape[dim])) return -1;
  }
  if (mt_tensor_init_like(r, dtype, ref->ndim, shape, ref)) return -1;
  int64_t start = 0;
  for (int i = first; i < n; i++) {
    if (cat_skips(ts[i])) continue;
    if (place(r, dim, start, ts[i])) { mt_tensor_release(r); return -1; }
    start += ts[i]->shape[dim];
  }
  return 0;
}

int mt_stack(mt_tensor *r, const mt_tensor *const *ts, int n, int dim) {
  if (n <= 0) return mt_fail("stack: expected a non-empty list of tensors");
  const mt_tensor *ref = ts[0];
  if (ref->ndim >= MT_MAX_DIMS) return mt_fail("stack: inputs have %d dims, at most %d allowed", ref->ndim, MT_MAX_DIMS - 1);
  if ((dim = mt_wrap_dim("stack", dim, ref->ndim + 1)) < 0) return -1;
  int dtype = ref->dtype;
  for (int i = 1; i < n; i++) {
    if (!mt_same_shape(ts[i], ref)) {
      char b1[128], b2[128];
      return mt_fail("stack: expects tensors of equal size, got %s (tensor 1) and %s (tensor %d)",
                     mt_shape_str(ref, b1, sizeof b1), mt_shape_str(ts[i], b2, sizeof b2), i + 1);
    }
    if (mt_check_same_device("stack", ref, ts[i])) return -1;
    dtype = mt_promote(dtype, ts[i]->dtype);
  }
  int64_t shape[MT_MAX_DIMS];
  for (int i = 0, k = 0; i <= ref->ndim; i++) shape[i] = i == dim ? n : ref->shape[k++];
  if (mt_tensor_init_like(r, dtype, ref->ndim + 1, shape, ref)) return -1;
  for (int i = 0; i < n; i++) {
    mt_tensor one = {0};
    int rc = mt_unsqueeze(&one, ts[i], dim);
    if (rc == 0) rc = place(r, dim, i, &one);
    mt_tensor_release(&one);
    if (rc) { mt_tensor_release(r); return -1; }
  }
  return 0;
}

/* ---- split and chunk ---- */

/* Empty parts chunk hands out for an empty dim: PyTorch gives `chunks` of
   them however many are asked, so chunk(2^40) would allocate without end;
   past this many (a few MiB of views) it is an error instead. */
#define MT_CHUNK_EMPTY_MAX ((int64_t)1 << 16)

/* ceil(a / b) for a >= 0, b > 0, with no overflow near INT64_MAX */
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

static int split_dim(const char *op, const mt_tensor *t, int dim) {
  if (t->ndim == 0) return mt_fail("%s: cannot split a 0-dim tensor", op);
  return mt_wrap_dim(op, dim, t->ndim);
}

int64_t mt_split_sizes(const mt_tensor *t, int dim, int64_t split_size, int64_t *sizes, int64_t max) {
  if ((dim = split_dim("split", t, dim)) < 0) return -1;
  int64_t len = t->shape[dim];
  if (split_size < 0) return mt_fail("split: split size must be non-negative, got %lld", (long long)split_size);
  if (split_size == 0 && len != 0)
    return mt_fail("split: split size can only be 0 if the dim has size 0, but dim %d has size %lld",
                   dim + 1, (long long)len);
  int64_t n = split_size ? ceil_div(len, split_size) : 1;
  if (n < 1) n = 1;
  for (int64_t i = 0; i < n && i < max; i++)
    sizes[i] = len - i * split_size < split_size ? len - i * split_size : split_size;
  return n;
}

/* As PyTorch: parts of ceil(len / chunks), so fewer than chunks may come
   back; an empty dim gives chunks empty parts (at most MT_CHUNK_EMPTY_MAX). */
int64_t mt_chunk_sizes(const mt_tensor *t, int dim, int64_t chunks, int64_t *sizes, int64_t max) {
  if (chunks <= 0) return mt_fail("chunk: number of chunks must be positive, got %lld", (long long)chunks);
  if ((dim = split_dim("chunk", t, dim)) < 0) return -1;
  int64_t len = t->shape[dim];
  if (len == 0) {
    if (chunks > MT_CHUNK_EMPTY_MAX)
      return mt_fail("chunk: %lld chunks of dim %d, which is empty: at most %lld empty parts can be made",
                     (long long)chunks, dim + 1, (long long)MT_CHUNK_EMPTY_MAX);
    for (int64_t i = 0; i < chunks && i < max; i++) sizes[i] = 0;
    return chunks;
  }
  return mt_split_sizes(t, dim, ceil_div(len, chunks), sizes, max);
}

int mt_split_check(const mt_tensor *t, int dim, const int64_t *sizes, int64_t n) {
  if ((dim = split_dim("split", t, dim)) < 0) return -1;
  int64_t len = t->shape[dim], sum = 0;
  int over = 0;                                /* the sizes pass len (summed without overflow) */
  for (int64_t i = 0; i < n; i++) {
    if (sizes[i] < 0) return mt_fail("split: part %lld has negative size %lld", (long long)i + 1, (long long)sizes[i]);
    if (sizes[i] > len - sum) over = 1;
    else sum += sizes[i];
  }
  if (over || sum != len) {
    char b[160];
    return mt_fail("split: sizes %s sum to %s%lld, but dim %d has size %lld", list_str(sizes, n, b, sizeof b),
                   over ? "more than " : "", (long long)(over ? len : sum), dim + 1, (long long)len);
  }
  return 0;
}

int mt_split_with_sizes(mt_tensor *const *parts, const mt_tensor *t, int dim,
                        const int64_t *sizes, int64_t n) {
  if (mt_split_check(t, dim, sizes, n) || (dim = split_dim("split", t, dim)) < 0) return -1;
  int64_t start = 0;
  for (int64_t i = 0; i < n; i++) {
    if (mt_narrow(parts[i], t, dim, start, sizes[i])) return -1;
    start += sizes[i];
  }
  return 0;
}

/* ---- flatten, unflatten, movedim ---- */

int mt_flatten(mt_tensor *r, const mt_tensor *t, int start, int end) {
  if ((start = mt_wrap_dim("flatten", start, t->ndim)) < 0) return -1;
  if ((end = mt_wrap_dim("flatten", end, t->ndim)) < 0) return -1;
  if (t->ndim == 0) { int64_t one = 1; return mt_view(r, t, 1, &one); }
  if (start > end) return mt_fail("flatten: start dim %d comes after end dim %d", start + 1, end + 1);
  if (start == end) { mt_tensor_alias(r, t); return 0; }
  int64_t shape[MT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < start; i++) shape[n++] = t->shape[i];
  shape[n] = 1;
  for (int i = start; i <= end; i++) shape[n] *= t->shape[i];
  n++;
  for (int i = end + 1; i < t->ndim; i++) shape[n++] = t->shape[i];
  return mt_reshape(r, t, n, shape);
}

int mt_unflatten(mt_tensor *r, const mt_tensor *t, int dim, const int64_t *sizes, int n) {
  if (t->ndim == 0) return mt_fail("unflatten: cannot unflatten a 0-dim tensor");
  if ((dim = mt_wrap_dim("unflatten", dim, t->ndim)) < 0) return -1;
  if (n <= 0) return mt_fail("unflatten: sizes must be non-empty");
  if (t->ndim - 1 + n > MT_MAX_DIMS) return mt_fail("unflatten: result would have %d dims, at most %d allowed", t->ndim - 1 + n, MT_MAX_DIMS);
  int64_t len = t->shape[dim], known = 1, out[MT_MAX_DIMS];
  int infer = -1;
  char b[160];
  for (int i = 0; i < n; i++) {
    out[i] = sizes[i];
    if (sizes[i] == -1 && infer < 0) { infer = i; continue; }
    if (sizes[i] < 0)
      return mt_fail("unflatten: invalid sizes %s (only one -1 is allowed)", list_str(sizes, n, b, sizeof b));
    if (__builtin_mul_overflow(known, sizes[i], &known)) known = -1;   /* matches no length */
  }
  if (infer >= 0 && known > 0 && len % known == 0) out[infer] = len / known;
  else if (infer >= 0 || known != len || mt_shape_numel("unflatten", n, out) < 0)
    return mt_fail("unflatten: sizes %s don't multiply up to the size of dim %d (%lld)",
                   list_str(sizes, n, b, sizeof b), dim + 1, (long long)len);
  mt_tensor_alias(r, t);
  int64_t stride = t->stride[dim];
  for (int i = t->ndim - 1; i > dim; i--) {
    r->shape[i + n - 1] = t->shape[i];
    r->stride[i + n - 1] = t->stride[i];
  }
  for (int i = n - 1; i >= 0; i--) {
    r->shape[dim + i] = out[i];
    r->stride[dim + i] = stride;
    if (i > 0 && mt_mul_size("unflatten", stride, out[i], &stride)) { mt_tensor_release(r); return -1; }
  }
  r->ndim = t->ndim - 1 + n;
  return mt_view_end("unflatten", r);
}

int mt_movedim(mt_tensor *r, const mt_tensor *t, const int *src, const int *dst, int n) {
  int nd = t->ndim, perm[MT_MAX_DIMS], from_used[MT_MAX_DIMS] = {0};
  if (n > (nd > 0 ? nd : 1)) return mt_fail("movedim: %d dims to move in a tensor of %d dims", n, nd);
  for (int i = 0; i < nd; i++) perm[i] = -1;
  for (int i = 0; i < n; i++) {
    int s = mt_wrap_dim("movedim", src[i], nd), d = mt_wrap_dim("movedim", dst[i], nd);
    if (s < 0 || d < 0) return -1;
    if (nd == 0) continue;
    if (from_used[s]++) return mt_fail("movedim: source dim %d repeated", s + 1);
    if (perm[d] >= 0) return mt_fail("movedim: destination dim %d repeated", d + 1);
    perm[d] = s;
  }
  for (int i = 0, s = 0; i < nd; i++) {
    if (perm[i] >= 0) continue;
    while (from_used[s]) s++;
    perm[i] = s++;
  }
  return mt_permute(r, t, perm);
}

/* ---- repeat, flip, roll: copies from a view that does the work ---- */

int mt_repeat(mt_tensor *r, const mt_tensor *t, const int64_t *reps, int n) {
  if (n < t->ndim)
    return mt_fail("repeat: %d repeat counts for a tensor of %d dims; give at least one per dim", n, t->ndim);
  if (n > MT_MAX_DIMS) return mt_fail("repeat: %d repeat counts, at most %d dims allowed", n, MT_MAX_DIMS);
  int lead = n - t->ndim;
  int64_t shape[MT_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    if (reps[i] < 0) return mt_fail("repeat: negative repeat count %lld for dim %d", (long long)reps[i], i + 1);
    if (__builtin_mul_overflow(reps[i], i < lead ? 1 : t->shape[i - lead], &shape[i])) {
      char b1[128], b2[256];
      return mt_fail("repeat: repeating %s by %s overflows", mt_shape_str(t, b1, sizeof b1), mt_dims_str(reps, n, b2, sizeof b2));
    }
  }
  if (mt_tensor_init_like(r, t->dtype, n, shape, t)) return -1;
  if (mt_numel(r) == 0) return 0;
  /* r viewed with a (copy, element) pair of dims per dim of t: the source
     walks the copy dims with stride 0 */
  int64_t pshape[2 * MT_MAX_DIMS], pdst[2 * MT_MAX_DIMS], psrc[2 * MT_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < n; i++) {
    int64_t size = i < lead ? 1 : t->shape[i - lead], stride = i < lead ? 0 : t->stride[i - lead];
    if (reps[i] != 1) { pshape[k] = reps[i]; pdst[k] = r->stride[i] * size; psrc[k] = 0; k++; }
    if (size != 1) { pshape[k] = size; pdst[k] = r->stride[i]; psrc[k] = stride; k++; }
  }
  if (k > MT_MAX_DIMS) {
    mt_tensor_release(r);
    return mt_fail("repeat: tiling needs %d dims, at most %d supported", k, MT_MAX_DIMS);
  }
  mt_tensor src = {0}, dst = {0};
  mt_tensor_alias(&src, t);
  mt_tensor_alias(&dst, r);
  src.ndim = dst.ndim = k;
  memcpy(src.shape, pshape, sizeof(int64_t) * (size_t)k);
  memcpy(dst.shape, pshape, sizeof(int64_t) * (size_t)k);
  memcpy(src.stride, psrc, sizeof(int64_t) * (size_t)k);
  memcpy(dst.stride, pdst, sizeof(int64_t) * (size_t)k);
  int rc = mt_copy(&dst, &src);
  mt_tensor_release(&src);
  mt_tensor_release(&dst);
  return rc;
}

/* flip and roll are copies between views, on any device */
int mt_flip(mt_tensor *r, const mt_tensor *t, const int *dims, int n) {
  int flipped[MT_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) {
    int d = mt_wrap_dim("flip", dims[i], t->ndim);
    if (d < 0) return -1;
    if (t->ndim && flipped[d]++) return mt_fail("flip: dim %d appears more than once", d + 1);
  }
  if (mt_tensor_init_like(r, t->dtype, t->ndim, t->shape, t)) return -1;
  if (mt_numel(t) == 0) return 0;
  /* a reversed view (negative strides) stays inside this function */
  mt_tensor rev = {0};
  mt_tensor_alias(&rev, t);
  for (int d = 0; d < t->ndim; d++) {
    if (!flipped[d]) continue;
    rev.offset += (t->shape[d] - 1) * t->stride[d];
    rev.stride[d] = -t->stride[d];
  }
  int rc = mt_copy(r, &rev);
  mt_tensor_release(&rev);
  return rc;
}

int mt_roll(mt_tensor *r, const mt_tensor *t, const int64_t *shifts, int n_shifts,
            const int *dims, int n_dims) {
  if (n_dims == 0) {
    if (n_shifts != 1) return mt_fail("roll: without dims, expects one shift, got %d", n_shifts);
    int64_t numel = mt_numel(t);
    int zero = 0;
    mt_tensor flat = {0}, rolled = {0};
    int rc = mt_reshape(&flat, t, 1, &numel);
    if (rc == 0) rc = mt_roll(&rolled, &flat, shifts, 1, &zero, 1);
    if (rc == 0) rc = mt_view(r, &rolled, t->ndim, t->shape);
    mt_tensor_release(&flat);
    mt_tensor_release(&rolled);
    return rc;
  }
  if (n_shifts != n_dims) return mt_fail("roll: %d shifts but %d dims; they must pair up", n_shifts, n_dims);
  if (t->ndim == 0) return mt_fail("roll: a 0-dim tensor has no dims to roll along");
  int64_t shift[MT_MAX_DIMS] = {0};
  for (int i = 0; i < n_dims; i++) {
    int d = mt_wrap_dim("roll", dims[i], t->ndim);
    if (d < 0) return -1;
    int64_t size = t->shape[d];
    if (size) shift[d] = ((shift[d] + shifts[i] % size) % size + size) % size;
  }
  if (mt_tensor_init_like(r, t->dtype, t->ndim, t->shape, t)) return -1;
  if (mt_numel(t) == 0) return 0;
  int moved[MT_MAX_DIMS], k = 0;
  for (int d = 0; d < t->ndim; d++) if (shift[d]) moved[k++] = d;
  /* each rolled dim splits into two blocks that swap places: 2^k copies */
  for (int64_t mask = 0; mask < ((int64_t)1 << k); mask++) {
    mt_tensor src = {0}, dst = {0};
    mt_tensor_alias(&src, t);
    mt_tensor_alias(&dst, r);
    for (int j = 0; j < k; j++) {
      int d = moved[j];
      int64_t size = t->shape[d], s = shift[d];
      if (mask >> j & 1) {                     /* tail [size-s, size) -> head [0, s) */
        src.offset += (size - s) * src.stride[d];
        src.shape[d] = dst.shape[d] = s;
      } else {                                 /* head [0, size-s) -> tail [s, size) */
        dst.offset += s * dst.stride[d];
        src.shape[d] = dst.shape[d] = size - s;
      }
    }
    int rc = mt_copy(&dst, &src);
    mt_tensor_release(&src);
    mt_tensor_release(&dst);
    if (rc) { mt_tensor_release(r); return -1; }
  }
  return 0;
}

/* ---- tril / triu ---- */

/* n elements of es bytes from src to dst with byte strides */
static void copy_elems(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, size_t es) {
  if (ds == (int64_t)es && ss == (int64_t)es) { memcpy(dst, src, (size_t)n * es); return; }
  for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, es);
}

/* Zero bits are zero in every dtype (+0.0 for the floats, false for bool). */
static void zero_elems(char *dst, int64_t ds, int64_t n, size_t es) {
  if (ds == (int64_t)es) { memset(dst, 0, (size_t)n * es); return; }
  for (int64_t i = 0; i < n; i++) memset(dst + i * ds, 0, es);
}

/* Byte offset of batch b (a row-major index over the dims before the last
   two) under the given strides. */
static int64_t batch_offset(const mt_tensor *t, int64_t b, const int64_t *stride) {
  int64_t off = 0;
  for (int d = t->ndim - 3; d >= 0 && b; d--) {
    off += (b % t->shape[d]) * stride[d];
    b /= t->shape[d];
  }
  return off;
}

typedef struct {
  const mt_tensor *t;
  mt_tensor *r;
  int64_t k, rows, cols;
  const int64_t *sstride, *dstride;   /* bytes */
  size_t es;
  int upper, inplace;
} tri_job;

/* Rows [begin, end) of every matrix, numbered batch-major. */
static void tri_rows(void *job, int64_t begin, int64_t end) {
  const tri_job *j = job;
  const int nd = j->t->ndim;
  const char *sbase = mt_data(j->t);
  char *dbase = mt_data(j->r);
  const int64_t sc = j->sstride[nd - 1], dc = j->dstride[nd - 1], cols = j->cols;
  for (int64_t q = begin; q < end; q++) {
    int64_t batch = q / j->rows, i = q % j->rows;
    const char *src = sbase + batch_offset(j->t, batch, j->sstride) + i * j->sstride[nd - 2];
    char *dst = dbase + batch_offset(j->r, batch, j->dstride) + i * j->dstride[nd - 2];
    /* kept columns: [0, edge) for tril, [edge, cols) for triu */
    int64_t edge = j->upper ? i + j->k : i + j->k + 1;
    edge = edge < 0 ? 0 : edge > cols ? cols : edge;
    int64_t keep_from = j->upper ? edge : 0, keep_to = j->upper ? cols : edge;
    int64_t zero_from = j->upper ? 0 : edge, zero_to = j->upper ? edge : cols;
    if (!j->inplace) copy_elems(dst + keep_from * dc, dc, src + keep_from * sc, sc, keep_to - keep_from, j->es);
    zero_elems(dst + zero_from * dc, dc, zero_to - zero_from, j->es);
  }
}

/* Off the CPU: the places to zero as a (rows, cols) bool mask made here and
   copied over, broadcast over the batch dims by the device's masked_fill. */
static __attribute__((noinline)) int tri_off_cpu(mt_tensor *r, const mt_tensor *t, int64_t k, int upper,
                                                 int inplace) {
  const int nd = t->ndim;
  const int64_t shape[2] = {t->shape[nd - 2], t->shape[nd - 1]};
  mt_tensor zc = {0}, zd = {0}, zero = {0};
  int rc = mt_tensor_init(&zc, MT_BOOL, 2, shape);
  if (rc == 0) {
    uint8_t *z = (uint8_t *)mt_data(&zc);
    for (int64_t i = 0; i < shape[0]; i++)
      for (int64_t j = 0; j < shape[1]; j++) z[i * shape[1] + j] = upper ? j - i < k : j - i > k;
  }
  rc = rc || mt_tensor_init_like(&zd, MT_BOOL, 2, shape, t) || mt_copy(&zd, &zc) ||
       mt_tensor_init(&zero, t->dtype, 0, NULL) || mt_fill(&zero, 0) || (!inplace && mt_clone(r, t)) ||
       mt_masked_fill(r, &zd, &zero);
  mt_tensor_release(&zc);
  mt_tensor_release(&zd);
  mt_tensor_release(&zero);
  return rc ? -1 : 0;
}

int mt_tri(mt_tensor *r, const mt_tensor *t, int64_t k, int upper, int inplace) {
  const char *name = upper ? "triu" : "tril";
  char b[128];
  if (t->ndim < 2) return mt_fail("%s: needs at least 2 dims, got %s", name, mt_shape_str(t, b, sizeof b));
  if (inplace && mt_check_writable(name, r)) return -1;
  if (mt_device_of(t) != MT_CPU) return tri_off_cpu(r, t, k, upper, inplace);
  if (!inplace && mt_tensor_init(r, t->dtype, t->ndim, t->shape)) return -1;
  int nd = t->ndim;
  int64_t rows = t->shape[nd - 2], cols = t->shape[nd - 1], numel = mt_numel(t);
  if (numel == 0) return 0;
  if (k > cols) k = cols;                      /* keeps i + k in range */
  if (k < -rows - 1) k = -rows - 1;
  size_t es = (size_t)mt_dtypes[t->dtype].size;
  int64_t sstride[MT_MAX_DIMS], dstride[MT_MAX_DIMS];
  for (int d = 0; d < nd; d++) { sstride[d] = t->stride[d] * (int64_t)es; dstride[d] = r->stride[d] * (int64_t)es; }
  tri_job job = {t, r, k, rows, cols, sstride, dstride, es, upper, inplace};
  mt_parallel_for(numel / cols, mt_parallel_items(MT_SHAPE_GRAIN / 2, cols * (int64_t)es, 1), tri_rows, &job);
  r->storage->version++;
  return 0;
}
