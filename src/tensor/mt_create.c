/* mt_create.c: eye, arange, range, linspace and logspace. Value i of a
   sequence is computed from i alone, so large ones split across threads
   and give the same numbers on any thread count. */
#include <math.h>
#include "mt_create.h"
#include "mt_ops.h"
#include "mt_iter.h"
#include "mt_kernel.h"
#include "mt_parallel.h"
#include "mt_isa.h"

/* Arithmetic sequences: start + step * i (floating dtypes compute in double;
   integer dtypes in int64 from the truncated start and step, as PyTorch).
   Linear ones: PyTorch's formula, computed in the dtype's own precision
   (float for float32, half and bfloat16): start + step * i in the first
   half, end - step * (steps - 1 - i) in the second, so both ends are exact. */
typedef enum { SEQ_STEP, SEQ_LIN, SEQ_LOG } seq_kind;

typedef struct {
  seq_kind kind;
  double start, end, step, base;   /* step: of the sequence, or of the exponent */
  float fstart, fend, fstep, fbase;
  int64_t istart, istep;           /* integer dtypes, SEQ_STEP */
  int64_t steps, halfway;
} seq;

/* Value i, from one fused multiply-add (as PyTorch's CPU kernels compile
   on FMA hardware), so the last bit does not depend on compiler flags. */
static inline double seq_float(const seq *s, int64_t i, int single) {
  if (s->kind == SEQ_STEP) return fma(s->step, (double)i, s->start);
  if (single) {
    float x = i < s->halfway ? fmaf(s->fstep, (float)i, s->fstart) : fmaf(-s->fstep, (float)(s->steps - i - 1), s->fend);
    return s->kind == SEQ_LOG ? powf(s->fbase, x) : x;
  }
  double x = i < s->halfway ? fma(s->step, (double)i, s->start) : fma(-s->step, (double)(s->steps - i - 1), s->end);
  return s->kind == SEQ_LOG ? pow(s->base, x) : x;
}

/* Integer dtypes: linear values (computed in double) truncate toward zero,
   as a C cast does; out-of-range powers saturate instead of overflowing. */
static inline int64_t seq_int(const seq *s, int64_t i) {
  if (s->kind == SEQ_STEP) return (int64_t)((uint64_t)s->istart + (uint64_t)s->istep * (uint64_t)i);
  double x = seq_float(s, i, 0);
  if (!(x < 0x1p63)) return x != x ? 0 : INT64_MAX;
  return x < -0x1p63 ? INT64_MIN : (int64_t)x;
}

typedef void (*seq_fn)(char *out, const seq *s, int64_t begin, int64_t end);

#define MT_SEQ_KERNEL(E, T, N, TN, K)                                            \
  static MT_CLONES void seq_##E(char *out, const seq *s, int64_t begin, int64_t end) {    \
    T *o = (T *)out;                                                            \
    for (int64_t i = begin; i < end; i++) {                                     \
      if (K == 2) MT_STORE_##E(o + i, seq_float(s, i, sizeof(MT_CT_##E) == sizeof(float))); \
      else MT_STORE_##E(o + i, seq_int(s, i));                                  \
    }                                                                           \
  }
MT_DTYPES(MT_SEQ_KERNEL)

#define MT_SEQ_ENTRY(E, T, N, TN, K) [MT_##E] = seq_##E,
static const seq_fn seq_kernels[MT_NDTYPES] = {MT_DTYPES(MT_SEQ_ENTRY)};

typedef struct {
  seq_fn fn;
  char *out;
  const seq *s;
} seq_job;

static void seq_chunk(void *job, int64_t begin, int64_t end) {
  const seq_job *j = job;
  j->fn(j->out, j->s, begin, end);
}

/* r = the n values of s in dtype. */
static int sequence(mt_tensor *r, const seq *s, int64_t n, int dtype) {
  if (mt_tensor_init(r, dtype, 1, &n)) return -1;
  seq_job job = {seq_kernels[dtype], mt_data(r), s};
  mt_parallel_for(n, MT_ITER_GRAIN / 2, seq_chunk, &job);
  return 0;
}

int mt_eye(mt_tensor *r, int64_t n, int64_t m, int dtype) {
  if (n < 0 || m < 0)
    return mt_fail("eye: sizes must be non-negative, got n=%lld, m=%lld", (long long)n, (long long)m);
  int64_t shape[2] = {n, m};
  if (mt_tensor_init(r, dtype, 2, shape)) return -1;
  mt_fill(r, 0);
  char *data = mt_data(r);
  size_t size = (size_t)mt_dtypes[dtype].size;
  for (int64_t i = 0; i < n && i < m; i++) mt_set_i64(dtype, data + (size_t)(i * (m + 1)) * size, 1);
  return 0;
}

/* Checks an arithmetic sequence's bounds; *count gets its length, with the
   end excluded (arange) or included (range). */
static int step_count(const char *op, double start, double end, double step, int inclusive, int64_t *count) {
  if (!isfinite(start) || !isfinite(end) || !isfinite(step))
    return mt_fail("%s: unsupported range: %g -> %g (step %g)", op, start, end, step);
  if (step == 0) return mt_fail("%s: step must be nonzero", op);
  if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
    return mt_fail("%s: upper bound and lower bound inconsistent with step sign (start=%g, end=%g, step=%g)",
                   op, start, end, step);
  double n = inclusive ? floor((end - start) / step) + 1 : ceil((end - start) / step);
  if (!(n < 0x1p53)) return mt_fail("%s: invalid size %g, possible overflow?", op, n);
  *count = (int64_t)n;
  return 0;
}

static int arithmetic(mt_tensor *r, const char *op, double start, double end, double step, int inclusive,
                      int dtype) {
  int64_t n = 0;
  if (step_count(op, start, end, step, inclusive, &n)) return -1;
  if (!mt_dtype_is_float(dtype) && (fabs(start) >= 0x1p63 || fabs(step) >= 0x1p63))
    return mt_fail("%s: start %g or step %g does not fit %s", op, start, step, mt_dtypes[dtype].name);
  seq s = {0};
  s.kind = SEQ_STEP;
  s.start = start;
  s.step = step;
  s.istart = (int64_t)start;
  s.istep = (int64_t)step;
  return sequence(r, &s, n, dtype);
}

int mt_arange(mt_tensor *r, double start, double end, double step, int dtype) {
  return arithmetic(r, "arange", start, end, step, 0, dtype);
}

int mt_range(mt_tensor *r, double start, double end, double step, int dtype) {
  return arithmetic(r, "range", start, end, step, 1, dtype);
}

static int spaced(mt_tensor *r, const char *op, seq_kind kind, double start, double end, int64_t steps,
                  double base, int dtype) {
  if (steps < 0) return mt_fail("%s: number of steps must be non-negative, got %lld", op, (long long)steps);
  if (!mt_dtype_is_float(dtype)) {   /* integer dtypes take integer ends, as PyTorch */
    start = trunc(start);
    end = trunc(end);
  }
  if (steps == 1) end = start;
  seq s = {0};
  s.kind = kind;
  s.start = start;
  s.end = end;
  s.step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
  s.base = base;
  s.fstart = (float)start;
  s.fend = (float)end;
  s.fstep = steps > 1 ? (s.fend - s.fstart) / (float)(steps - 1) : 0;
  s.fbase = (float)base;
  s.steps = steps;
  s.halfway = steps / 2;
  return sequence(r, &s, steps, dtype);
}

int mt_linspace(mt_tensor *r, double start, double end, int64_t steps, int dtype) {
  return spaced(r, "linspace", SEQ_LIN, start, end, steps, 0, dtype);
}

int mt_logspace(mt_tensor *r, double start, double end, int64_t steps, double base, int dtype) {
  return spaced(r, "logspace", SEQ_LOG, start, end, steps, base, dtype);
}

/* ---- the registry's factories (MT_FACTORY_OPS) ---- */
int mt_factory_new(mt_tensor *r, const mt_factory_args *a, const char *op) {
  return mt_tensor_init_on(a->name ? a->name : op, r, a->dtype, a->ndim, a->shape, a->device, a->index);
}

int mt_factory_filled(mt_tensor *r, const mt_factory_args *a, const char *op, double v) {
  return mt_factory_new(r, a, op) || mt_fill(r, v) ? -1 : 0;
}

int mt_factory_full(mt_tensor *r, const mt_factory_args *a) {
  if (!a->value) return mt_fail("full: expects a fill value");
  return mt_factory_new(r, a, "full") || mt_fill_operand(r, r, a->value, 1) ? -1 : 0;
}

int mt_factory_op(mt_tensor *r, mt_op op, const mt_factory_args *a) {
  switch (op) {
#define FACTORY(call, signature) call
    MT_FACTORY_OPS(MT_KERNEL_CASE, _)
#undef FACTORY
  default: break;
  }
  return mt_not_in_family("mt_factory_op", op, "a factory");
}
