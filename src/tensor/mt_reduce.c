/* mt_reduce.c: reductions, scans, softmax, sorting and selection along a
   dim, and whole-tensor comparisons, with kernels for every dtype. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "mt_reduce.h"
#include "mt_ops.h"
#include "mt_iter.h"
#include "mt_kernel.h"
#include "mt_parallel.h"
#include "mt_index.h"
#include "mt_reduce_plan.h"
#include "mt_isa.h"

/* Independent accumulators along a contiguous run: enough to fill the
   vector units (16 doubles are two AVX-512 or four AVX2 registers) and hide
   the latency of the adds. */
#define RED_LANES 32
/* Elements per run chunk. Chunk results are combined in chunk order, so a
   result never depends on how chunks were spread over threads; chunking
   also bounds the rounding error of long float sums. */
#define RED_CHUNK 16384
/* A reduced dim shorter than this that is innermost in memory is reduced
   as rows, vectorised across outputs, rather than as many short runs. */
#define RED_MIN_RUN 16
/* Output columns one task accumulates at a time: the accumulators of a tile
   stay in L1 while the rows stream past. */
#define RED_TILE 256
/* Output columns a reduction along an outer dim takes at a time: 8 KiB of
   each float32 row stream in one go (6% faster than 4 KiB for a 4096x4096
   sum(1)), and the tile's accumulators (8 bytes a column) stay in L1. */
#define RED_ROWS_TILE 2048
/* Steps a sum block adds in float before widening to double: 8 float adds
   per lane keep the block's rounding error near float's epsilon, and the
   widening costs an eighth of what it would at every step. */
#define RED_BLOCK 8
/* Elements the search for an extreme's position tests at once: the test's
   horizontal reduction costs as much as a few vector compares. */
#define RED_SCAN 256

/* Chunk states a long run keeps on the stack between parallel steps, folded
   in order after each step: a step then covers 4M elements, so its handover
   costs nothing measurable, and no allocation can fail. */
#define RED_BATCH 256
/* Outputs per thread below which a reduction whose reduced extent is
   innermost splits each run into chunks instead: a few long runs would
   otherwise leave threads idle. */
#define RED_OUTPUTS_PER_THREAD 4

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Marks a kernel that streams one long run from memory: 256-bit vectors
   there. Measured on AVX-512 (Zen 4), 512-bit loads summing a run fetch it
   10-20% slower than 256-bit ones from DRAM (in L2 they are 4% faster).
   The lanes are explicit arrays, so the width changes no result. A build
   with clones (mt_isa.h) leaves it to each clone's target: GCC takes no
   target attribute beside target_clones. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !MT_CLONING
#define RED_STREAM __attribute__((target("prefer-vector-width=256")))
#else
#define RED_STREAM
#endif

/* Accumulator per dtype kind (0 bool, 1 int, 2 float): floats in double,
   integers in uint64 so that overflow wraps like PyTorch's int64 without
   undefined behaviour; max/min keep signed values. */
#define RED_SUM_K0 uint64_t
#define RED_SUM_K1 uint64_t
#define RED_SUM_K2 double
/* what a block of a sum adds in: the compute type for floats (float for
   float32/16/bf16), the accumulator for integers */
#define RED_SUMB_K0 uint64_t
#define RED_SUMB_K1 uint64_t
#define RED_SUMB_K2 ct
#define RED_SUMF_K0 u
#define RED_SUMF_K1 u
#define RED_SUMF_K2 f
#define RED_VAL_K0 int64_t
#define RED_VAL_K1 int64_t
#define RED_VAL_K2 double
#define RED_VALF_K0 i
#define RED_VALF_K1 i
#define RED_VALF_K2 f

/* The partial result of reducing a run: a sum, product or extreme in f (float
   dtypes) or i (integers), and the extreme's position. */
typedef struct { double f; int64_t i; int64_t idx; } red_state;
typedef union { double f; int64_t i; uint64_t u; } red_acc;

/* What a pass accumulates. m is a per-output parameter from an earlier pass
   (the mean for variance, the max for logsumexp), p the norm order. */
/* Every pass, once (its K_ constant, its kernels and their table entries
   all come from here): its KIND, then how it accumulates -- ACC(op, init,
   map, acc type, block type, acc field), map an expression in v, m and p; or
   EXT(compare, value type, value field), a max or min with its position.
   The first list serves every dtype, the second float dtypes. */
#define RED_PASSES_ALL(X, E, T, K)                                                          \
  X(E, T, SUM, ACC, +, 0, v, RED_SUM_K##K, RED_SUMB_K##K, RED_SUMF_K##K)                     \
  X(E, T, NANSUM, ACC, +, 0, v != v ? (ct)0 : v, RED_SUM_K##K, RED_SUMB_K##K, RED_SUMF_K##K)  \
  X(E, T, PROD, ACC, *, 1, v, RED_SUM_K##K, RED_SUM_K##K, RED_SUMF_K##K)                     \
  X(E, T, NONZERO, ACC, +, 0, v != 0, uint64_t, uint64_t, u)                                 \
  X(E, T, MAX, EXT, RED_GT, RED_VAL_K##K, RED_VALF_K##K)                                     \
  X(E, T, MIN, EXT, RED_LT, RED_VAL_K##K, RED_VALF_K##K)
#define RED_PASSES_FLOAT(X, E, T, K)                                                        \
  X(E, T, SQDEV, ACC, +, 0, ((double)v - m) * ((double)v - m), double, double, f)           \
  X(E, T, ABSSUM, ACC, +, 0, fabs((double)v), double, double, f)                            \
  X(E, T, POWSUM, ACC, +, 0, pow(fabs((double)v), p), double, double, f)                    \
  X(E, T, EXPSUM, ACC, +, 0, exp((double)v - m), double, double, f)

/* The pass kinds are mt_reduce_plan.h's (shared with the devices); the
   lists above must run in their order, which the compiler checks. */
#define K_END_ALL K_SQDEV                /* the passes before it serve integers too */
#define K_COUNT K_MAXABS                 /* the CPU's passes end before the device-only |x| extremes */
#define RED_KIND(E, T, KIND, ...) KX_##KIND,
enum { RED_PASSES_ALL(RED_KIND, _, _, _) RED_PASSES_FLOAT(RED_KIND, _, _, _) KX_COUNT };
#undef RED_KIND
#define RED_KIND_CHECK(E, T, KIND, ...) _Static_assert((int)KX_##KIND == (int)K_##KIND, "pass " #KIND " out of order");
RED_PASSES_ALL(RED_KIND_CHECK, _, _, _)
RED_PASSES_FLOAT(RED_KIND_CHECK, _, _, _)
#undef RED_KIND_CHECK
_Static_assert((int)KX_COUNT == (int)K_COUNT, "the CPU's passes and mt_reduce_plan.h's differ");

/* Reduces n elements x[i * s] (s in bytes) to one state. */
typedef red_state (*run_fn)(const char *x, int64_t s, int64_t n, double m, double p);
/* Reduces R rows of B elements, x[r * rs + b * bs], into acc[b] (and idx[b]
   for max/min), with the parameter m[b] of each output. */
typedef void (*rows_fn)(const char *x, int64_t rs, int64_t bs, int64_t R, int64_t B,
                        red_acc *acc, int64_t *idx, const double *m, double p);

/* ---- kernels: a run version and a rows version of every pass ----
   BT is the type a block of RED_BLOCK steps accumulates in before it is
   folded into ACC: float32 sums add in float in the vector units (twice the
   lanes of double, no conversions), and only every RED_BLOCK-th partial
   widens to double; every other pass has BT = ACC. */
#define RED_RUN_ACC(KIND, OP, INIT, MAP, ACC, BT, FIELD, E, T)                              \
  RED_STREAM                                                                                \
  static MT_CLONES red_state run_##KIND##_##E(const char *x, int64_t s, int64_t n, double m, double p) { \
    typedef MT_CT_##E ct;                                                                   \
    (void)m; (void)p;                                                                       \
    ACC lane[RED_LANES];                                                                    \
    for (int j = 0; j < RED_LANES; j++) lane[j] = INIT;                                     \
    int64_t i = 0;                                                                          \
    if (s == (int64_t)sizeof(T)) {                                                          \
      for (; i + RED_LANES * RED_BLOCK <= n; i += RED_LANES * RED_BLOCK) {                  \
        BT blk[RED_LANES];                                                                  \
        for (int j = 0; j < RED_LANES; j++) blk[j] = INIT;                                  \
        for (int k = 0; k < RED_BLOCK; k++) {                                               \
          const char *xi = x + (i + k * RED_LANES) * (int64_t)sizeof(T);                    \
          _Pragma("omp simd")                                                               \
          for (int j = 0; j < RED_LANES; j++) {                                             \
            ct v = MT_LOAD_##E(xi + j * (int64_t)sizeof(T));                                \
            blk[j] = blk[j] OP (BT)(MAP);                                                   \
          }                                                                                 \
        }                                                                                   \
        _Pragma("omp simd")                                                                 \
        for (int j = 0; j < RED_LANES; j++) lane[j] = lane[j] OP (ACC)blk[j];               \
      }                                                                                     \
      for (; i + RED_LANES <= n; i += RED_LANES) {                                          \
        const char *xi = x + i * (int64_t)sizeof(T);                                        \
        _Pragma("omp simd")                                                                 \
        for (int j = 0; j < RED_LANES; j++) {                                               \
          ct v = MT_LOAD_##E(xi + j * (int64_t)sizeof(T));                                  \
          lane[j] = lane[j] OP (ACC)(MAP);                                                  \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    for (int w = RED_LANES / 2; w > 0; w /= 2)                                              \
      for (int j = 0; j < w; j++) lane[j] = lane[j] OP lane[j + w];                         \
    for (; i < n; i++) {                                                                    \
      ct v = MT_LOAD_##E(x + i * s);                                                        \
      lane[0] = lane[0] OP (ACC)(MAP);                                                      \
    }                                                                                       \
    red_acc a;                                                                              \
    a.FIELD = lane[0];                                                                      \
    red_state st = {a.f, a.i, 0};                                                           \
    return st;                                                                              \
  }

/* The rows version: a tile of B outputs. Each block of RED_BLOCK rows is
   added column by column in BT, the block's rows streaming side by side
   (several streams keep the memory busy, and a column's partial stays in a
   register), then folded into ACC: the same steps, in the same order, as
   adding the block row by row. */
#define RED_ROWS_COLUMN(OP, INIT, MAP, ACC, BT, FIELD, E, RBEGIN, REND)                     \
  {                                                                                         \
    double m = mrow[b]; (void)m;                                                            \
    BT blk = INIT;                                                                          \
    _Pragma("GCC unroll 8")                                                                 \
    for (int64_t r = RBEGIN; r < REND; r++) {                                               \
      ct v = MT_LOAD_##E(xb + r * rs + b * bs);                                             \
      blk = blk OP (BT)(MAP);                                                               \
    }                                                                                       \
    acc[b].FIELD = acc[b].FIELD OP (ACC)blk;                                                \
  }
#define RED_ROWS_ACC(KIND, OP, INIT, MAP, ACC, BT, FIELD, E, T)                              \
  static MT_CLONES void rows_##KIND##_##E(const char *x, int64_t rs, int64_t bs, int64_t R, int64_t B, \
                                red_acc *acc, int64_t *idx, const double *mrow, double p) {  \
    typedef MT_CT_##E ct;                                                                   \
    (void)idx; (void)p;                                                                     \
    for (int64_t b = 0; b < B; b++) acc[b].FIELD = INIT;                                    \
    for (int64_t r0 = 0; r0 < R; r0 += RED_BLOCK) {                                         \
      const char *xb = x + r0 * rs;                                                         \
      int64_t nr = min64(RED_BLOCK, R - r0);                                                \
      if (bs == (int64_t)sizeof(T) && nr == RED_BLOCK) {                                    \
        _Pragma("omp simd")                                                                 \
        for (int64_t b = 0; b < B; b++)                                                     \
          RED_ROWS_COLUMN(OP, INIT, MAP, ACC, BT, FIELD, E, 0, RED_BLOCK)                   \
      } else {                                                                              \
        for (int64_t b = 0; b < B; b++)                                                     \
          RED_ROWS_COLUMN(OP, INIT, MAP, ACC, BT, FIELD, E, 0, nr)                          \
      }                                                                                     \
    }                                                                                       \
  }

/* max/min: the first extreme wins; a NaN beats every number. CMP is the
   plain order (RED_GT, RED_LT); v != v is the NaN test (false for integers). */
#define RED_GT(a, b) ((a) > (b))
#define RED_LT(a, b) ((a) < (b))
#define RED_BETTER(CMP, v, best) (CMP(v, best) || ((v) != (v) && (best) == (best)))

/* A run, contiguous: the extreme by plain compares over RED_LANES lanes in
   the compute type (exact for every dtype; compiles to vector max/min), NaNs
   only noted; then the first position holding it, found a vector of lanes at
   a time. With a NaN, or strided, the plain scalar walk. */
#define RED_RUN_EXT(KIND, CMP, ACC, FIELD, E, T)                                            \
  static MT_CLONES red_state run_##KIND##_##E(const char *x, int64_t s, int64_t n, double m, double p) { \
    typedef MT_CT_##E ct;                                                                   \
    (void)m; (void)p;                                                                       \
    const int64_t es = (int64_t)sizeof(T);                                                  \
    ct best = MT_LOAD_##E(x);                                                               \
    int64_t at = 0, i = 0;                                                                  \
    int nan = 1;                                                                            \
    if (s == es && n >= 2 * RED_LANES) {                                                    \
      ct lb[RED_LANES];                                                                     \
      int nl[RED_LANES];                                                                    \
      for (int j = 0; j < RED_LANES; j++) { lb[j] = MT_LOAD_##E(x + j * es); nl[j] = lb[j] != lb[j]; } \
      for (i = RED_LANES; i + RED_LANES <= n; i += RED_LANES) {                             \
        const char *xi = x + i * es;                                                        \
        _Pragma("omp simd")                                                                 \
        for (int j = 0; j < RED_LANES; j++) {                                               \
          ct v = MT_LOAD_##E(xi + j * es);                                                  \
          lb[j] = CMP(v, lb[j]) ? v : lb[j];                                                \
          nl[j] |= v != v;                                                                  \
        }                                                                                   \
      }                                                                                     \
      nan = 0;                                                                              \
      for (int j = 0; j < RED_LANES; j++) {                                                 \
        nan |= nl[j];                                                                       \
        if (CMP(lb[j], best)) best = lb[j];                                                 \
      }                                                                                     \
      for (; i < n; i++) {                                                                  \
        ct v = MT_LOAD_##E(x + i * es);                                                     \
        nan |= v != v;                                                                      \
        if (CMP(v, best)) best = v;                                                         \
      }                                                                                     \
      if (!nan) {                                                                           \
        int64_t b = 0;                                                                      \
        for (; b + RED_SCAN <= n; b += RED_SCAN) {                                          \
          int hit = 0;                                                                      \
          _Pragma("omp simd reduction(|:hit)")                                              \
          for (int j = 0; j < RED_SCAN; j++) hit |= MT_LOAD_##E(x + (b + j) * es) == best;  \
          if (hit) break;                                                                   \
        }                                                                                   \
        for (at = b; !(MT_LOAD_##E(x + at * es) == best); at++) {}                          \
      }                                                                                     \
    }                                                                                       \
    if (nan) {                                                                              \
      best = MT_LOAD_##E(x);                                                                \
      at = 0;                                                                               \
      for (i = 1; i < n; i++) {                                                             \
        ct v = MT_LOAD_##E(x + i * s);                                                      \
        if (RED_BETTER(CMP, v, best)) { best = v; at = i; }                                 \
      }                                                                                     \
    }                                                                                       \
    red_acc a;                                                                              \
    a.FIELD = (ACC)best;                                                                    \
    red_state st = {a.f, a.i, at};                                                          \
    return st;                                                                              \
  }

/* The rows version of max/min. Contiguous rows: the tile's extremes in the
   compute type (exact) and their rows in int32, each block of RED_BLOCK rows
   compared column by column with its rows streaming side by side as in
   RED_ROWS_ACC, NaNs only noted. With a NaN, strided columns, a block of
   rows or less (quicker to walk than to set up) or more rows than int32
   counts, the exact walk row by row. */
#define RED_ROWS_EXT_COLUMN(CMP, E, NR)                                                     \
  {                                                                                         \
    ct cur = best[b];                                                                       \
    int32_t at = row[b];                                                                    \
    int seen = nan_seen[b];                                                                 \
    _Pragma("GCC unroll 8")                                                                 \
    for (int32_t r = 0; r < NR; r++) {                                                      \
      ct v = MT_LOAD_##E(xb + r * rs + b * es);                                             \
      int take = CMP(v, cur);                                                               \
      seen |= v != v;                                                                       \
      cur = take ? v : cur;                                                                 \
      at = take ? (int32_t)(r0 + r) : at;                                                   \
    }                                                                                       \
    best[b] = cur;                                                                          \
    row[b] = at;                                                                            \
    nan_seen[b] = seen;                                                                     \
  }
#define RED_ROWS_EXT(KIND, CMP, ACC, FIELD, E, T)                                           \
  static MT_CLONES void rows_##KIND##_##E(const char *x, int64_t rs, int64_t bs, int64_t R, int64_t B, \
                                red_acc *acc, int64_t *idx, const double *mrow, double p) {  \
    typedef MT_CT_##E ct;                                                                   \
    (void)mrow; (void)p;                                                                    \
    const int64_t es = (int64_t)sizeof(T);                                                  \
    ct best[RED_ROWS_TILE];                                                                 \
    int exact = bs != es || R <= RED_BLOCK || R > INT32_MAX;                                \
    if (!exact) {                                                                           \
      int32_t row[RED_ROWS_TILE];                                                           \
      int nan_seen[RED_ROWS_TILE];                                                          \
      for (int64_t b = 0; b < B; b++) {                                                     \
        best[b] = MT_LOAD_##E(x + b * es);                                                  \
        row[b] = 0;                                                                         \
        nan_seen[b] = best[b] != best[b];                                                   \
      }                                                                                     \
      int64_t r0 = 1;                                                                       \
      for (; r0 + RED_BLOCK <= R; r0 += RED_BLOCK) {                                        \
        const char *xb = x + r0 * rs;                                                       \
        _Pragma("omp simd")                                                                 \
        for (int64_t b = 0; b < B; b++) RED_ROWS_EXT_COLUMN(CMP, E, RED_BLOCK)              \
      }                                                                                     \
      const char *xb = x + r0 * rs;                                                         \
      int32_t nr = (int32_t)(R - r0);                                                       \
      for (int64_t b = 0; b < B; b++) RED_ROWS_EXT_COLUMN(CMP, E, nr)                       \
      for (int64_t b = 0; b < B; b++) { idx[b] = row[b]; exact |= nan_seen[b]; }            \
    }                                                                                       \
    if (exact) {                                                                            \
      for (int64_t b = 0; b < B; b++) { best[b] = MT_LOAD_##E(x + b * bs); idx[b] = 0; }    \
      for (int64_t r = 1; r < R; r++)                                                       \
        for (int64_t b = 0; b < B; b++) {                                                   \
          ct v = MT_LOAD_##E(x + r * rs + b * bs);                                          \
          if (RED_BETTER(CMP, v, best[b])) { best[b] = v; idx[b] = r; }                     \
        }                                                                                   \
    }                                                                                       \
    for (int64_t b = 0; b < B; b++) acc[b].FIELD = (ACC)best[b];                            \
  }

#define RED_PASS(KIND, OP, INIT, MAP, ACC, BT, FIELD, E, T)                                 \
  RED_RUN_ACC(KIND, OP, INIT, MAP, ACC, BT, FIELD, E, T)                                    \
  RED_ROWS_ACC(KIND, OP, INIT, MAP, ACC, BT, FIELD, E, T)
#define RED_EXT(KIND, CMP, ACC, FIELD, E, T)                                                \
  RED_RUN_EXT(KIND, CMP, ACC, FIELD, E, T)                                                  \
  RED_ROWS_EXT(KIND, CMP, ACC, FIELD, E, T)

/* the kernels of every pass, from the lists above */
#define RED_GEN_ACC(KIND, ...) RED_PASS(KIND, __VA_ARGS__)
#define RED_GEN_EXT(KIND, ...) RED_EXT(KIND, __VA_ARGS__)
#define RED_GEN(E, T, KIND, STYLE, ...) RED_GEN_##STYLE(KIND, __VA_ARGS__, E, T)
#define RED_GEN_ALL(E, T, N, TN, K) RED_PASSES_ALL(RED_GEN, E, T, K)
#define RED_GEN_FLOAT(E, T, N, TN, K) RED_PASSES_FLOAT(RED_GEN, E, T, K)
MT_DTYPES(RED_GEN_ALL)
MT_FLOAT_DTYPES(RED_GEN_FLOAT)

#define RED_RUN_ENTRY(E, T, KIND, ...) [K_##KIND][MT_##E] = run_##KIND##_##E,
#define RED_ROWS_ENTRY(E, T, KIND, ...) [K_##KIND][MT_##E] = rows_##KIND##_##E,
#define RED_RUN_ALL(E, T, N, TN, K) RED_PASSES_ALL(RED_RUN_ENTRY, E, T, K)
#define RED_RUN_FLOAT(E, T, N, TN, K) RED_PASSES_FLOAT(RED_RUN_ENTRY, E, T, K)
#define RED_ROWS_ALL(E, T, N, TN, K) RED_PASSES_ALL(RED_ROWS_ENTRY, E, T, K)
#define RED_ROWS_FLOAT(E, T, N, TN, K) RED_PASSES_FLOAT(RED_ROWS_ENTRY, E, T, K)
static const run_fn run_kernels[K_COUNT][MT_NDTYPES] = {
  MT_DTYPES(RED_RUN_ALL) MT_FLOAT_DTYPES(RED_RUN_FLOAT)
};
static const rows_fn rows_kernels[K_COUNT][MT_NDTYPES] = {
  MT_DTYPES(RED_ROWS_ALL) MT_FLOAT_DTYPES(RED_ROWS_FLOAT)
};

/* ---- plans: which passes an op makes and how a state becomes a value
   (the words PARAM_, FIN_ are mt_reduce_plan.h's) ---- */

typedef struct {
  int kind[2];     /* a pass, and one that uses the first's result (-1: none) */
  int param;       /* what the first pass hands the second */
  int fin;
  double p;        /* the norm order, or the variance correction */
} red_plan;

typedef struct { double f; int64_t i; int is_int; } red_value;

static int kind_is_int(int kind, int dtype) {
  if (kind == K_NONZERO) return 1;
  return kind < K_END_ALL && !mt_dtype_is_float(dtype);
}

/* Combines the state of a later chunk b into a. */
static red_state combine(int kind, int dtype, red_state a, red_state b) {
  int is_float = mt_dtype_is_float(dtype);
  switch (kind) {
  case K_PROD:
    if (is_float) a.f *= b.f;
    else a.i = (int64_t)((uint64_t)a.i * (uint64_t)b.i);
    return a;
  case K_MAX:
    if (is_float ? RED_BETTER(RED_GT, b.f, a.f) : b.i > a.i) a = b;
    return a;
  case K_MIN:
    if (is_float ? RED_BETTER(RED_LT, b.f, a.f) : b.i < a.i) a = b;
    return a;
  default:
    if (kind_is_int(kind, dtype)) a.i = (int64_t)((uint64_t)a.i + (uint64_t)b.i);
    else a.f += b.f;
    return a;
  }
}

/* The state of an empty reduction. */
static red_state identity(int kind) {
  red_state st = {0, 0, 0};
  if (kind == K_PROD) { st.f = 1; st.i = 1; }
  if (kind == K_MAX) st.f = -INFINITY;
  if (kind == K_MIN) st.f = INFINITY;
  return st;
}

static double pass_param(const red_plan *pl, red_state st, int64_t n) {
  if (pl->param == PARAM_MEAN) return st.f / (double)n;
  if (pl->param == PARAM_SHIFT) return isinf(st.f) ? 0 : st.f;   /* as PyTorch's logsumexp */
  return 0;
}

static red_value finalize(const red_plan *pl, int dtype, red_state st, int64_t n, double m) {
  int kind = pl->kind[1] >= 0 ? pl->kind[1] : pl->kind[0];
  red_value v = {st.f, st.i, kind_is_int(kind, dtype)};
  double dn = (double)n;
  switch (pl->fin) {
  case FIN_MEAN: v.f = st.f / dn; break;
  case FIN_VAR: v.f = st.f / fmax(0, dn - pl->p); break;
  case FIN_STD: v.f = sqrt(st.f / fmax(0, dn - pl->p)); break;
  case FIN_SQRT: v.f = sqrt(st.f); break;
  case FIN_ROOT: v.f = pow(st.f, 1 / pl->p); break;
  case FIN_LSE: v.f = log(st.f) + m; break;
  case FIN_ANY: v.i = st.i > 0; break;
  case FIN_ALL: v.i = st.i == n; break;
  default: break;
  }
  return v;
}

static void write_value(int dtype, char *p, red_value v) {
  if (v.is_int) mt_set_i64(dtype, p, v.i);
  else mt_set_f64(dtype, p, v.f);
}

/* ---- geometry: one reduced extent, the kept dims around it ---- */
typedef struct {
  const char *x;
  int64_t R, rs;                  /* reduced extent and its byte stride in x */
  int red_inner;                  /* the reduced extent is innermost in memory */
  int nk;                         /* kept dims, smallest x stride first */
  int64_t size[MT_MAX_DIMS];
  int64_t xs[MT_MAX_DIMS];        /* bytes */
  int64_t os[MT_MAX_DIMS];        /* output elements */
} red_geom;

/* Sorts x's dims by stride and merges neighbours that stay linear in x and
   in the output (ostride, 0 on reduced dims). Returns 1 when the reduced
   dims do not merge into one extent: the caller then copies x. */
static int build_geom(red_geom *g, const mt_tensor *x, uint32_t mask, const int64_t *ostride) {
  struct { int64_t size, xs, os; int red; } d[MT_MAX_DIMS], t;
  int n = 0;
  int64_t es = mt_dtypes[x->dtype].size;
  for (int i = x->ndim - 1; i >= 0; i--) {
    if (x->shape[i] == 1) continue;
    int red = (mask >> i) & 1;
    d[n].size = x->shape[i];
    d[n].xs = x->stride[i] * es;
    d[n].os = red ? 0 : ostride[i];
    d[n].red = red;
    n++;
  }
  for (int i = 1; i < n; i++)                      /* stable: inner dims first on ties */
    for (int j = i; j > 0 && d[j].xs < d[j - 1].xs; j--) { t = d[j]; d[j] = d[j - 1]; d[j - 1] = t; }
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (m > 0 && d[m - 1].red == d[i].red && d[i].xs == d[m - 1].xs * d[m - 1].size &&
        d[i].os == d[m - 1].os * d[m - 1].size) {
      d[m - 1].size *= d[i].size;
      continue;
    }
    d[m++] = d[i];
  }
  g->x = mt_data(x);
  g->R = 1;
  g->rs = 0;
  g->red_inner = 0;
  g->nk = 0;
  int nred = 0;
  for (int i = 0; i < m; i++) {
    if (d[i].red) {
      if (nred++) return 1;
      g->R = d[i].size;
      g->rs = d[i].xs;
      g->red_inner = i == 0;
    } else {
      g->size[g->nk] = d[i].size;
      g->xs[g->nk] = d[i].xs;
      g->os[g->nk] = d[i].os;
      g->nk++;
    }
  }
  return 0;
}

/* Byte offset in x and element offset in the output of kept position q,
   counting over the kept dims from `from` on. */
static void kept_offsets(const red_geom *g, int from, int64_t q, int64_t *xo, int64_t *oo) {
  *xo = 0;
  *oo = 0;
  for (int k = from; k < g->nk; k++) {
    int64_t c = q % g->size[k];
    q /= g->size[k];
    *xo += c * g->xs[k];
    *oo += c * g->os[k];
  }
}

typedef struct {
  run_fn fn;
  const char *x;
  int64_t s, n;                   /* byte stride and length of the run */
  double m, p;
  int64_t first;                  /* the batch's first chunk */
  red_state *parts;               /* by chunk, from first */
} chunks_job;

static void run_chunk_range(void *ctx, int64_t begin, int64_t end) {
  const chunks_job *j = ctx;
  for (int64_t c = begin; c < end; c++) {
    int64_t off = (j->first + c) * RED_CHUNK;
    j->parts[c] = j->fn(j->x + off * j->s, j->s, min64(RED_CHUNK, j->n - off), j->m, j->p);
    j->parts[c].idx += off;
  }
}

/* One pass over a run, in RED_CHUNK pieces combined in order, so the result
   is the same however the pieces were spread over threads; grain is in
   pieces. */
static red_state run_chunks(int kind, int dtype, const char *x, int64_t s, int64_t n, double m,
                            double p, int64_t grain) {
  red_state parts[RED_BATCH], st = {0, 0, 0};
  chunks_job job = {run_kernels[kind][dtype], x, s, n, m, p, 0, parts};
  int64_t nc = (n + RED_CHUNK - 1) / RED_CHUNK;
  if (nc <= 1) return job.fn(x, s, n, m, p);
  for (; job.first < nc; job.first += RED_BATCH) {
    int64_t count = min64(RED_BATCH, nc - job.first);
    mt_parallel_for(count, grain, run_chunk_range, &job);
    int64_t c = 0;
    if (job.first == 0) st = parts[c++];          /* the run's first piece starts the fold */
    for (; c < count; c++) st = combine(kind, dtype, st, parts[c]);
  }
  return st;
}

typedef struct {
  const red_plan *pl;
  int dtype;                      /* of x */
  char *out;                      /* values (NULL: indices only) */
  int out_dtype;
  int64_t *idx;                   /* indices or NULL */
} red_target;

/* Output q of a reduction whose reduced extent is innermost: one run, its
   pieces grain at a time (see run_chunks). */
static void reduce_run_one(const red_geom *g, const red_target *tg, int64_t q, int64_t grain) {
  const red_plan *pl = tg->pl;
  int64_t xo, oo;
  kept_offsets(g, 0, q, &xo, &oo);
  const char *x = g->x + xo;
  red_state st = run_chunks(pl->kind[0], tg->dtype, x, g->rs, g->R, 0, pl->p, grain);
  double m = 0;
  if (pl->kind[1] >= 0) {
    m = pass_param(pl, st, g->R);
    st = run_chunks(pl->kind[1], tg->dtype, x, g->rs, g->R, m, pl->p, grain);
  }
  int64_t es = mt_dtypes[tg->out_dtype].size;
  if (tg->out) write_value(tg->out_dtype, tg->out + oo * es, finalize(pl, tg->dtype, st, g->R, m));
  if (tg->idx) tg->idx[oo] = st.idx;
}

typedef struct {
  const red_geom *g;
  const red_target *tg;
  int64_t grain;                  /* of each run's pieces */
  int64_t tiles;                  /* reduce_rows: tiles per row of outputs */
} red_job;

static void reduce_runs_range(void *ctx, int64_t begin, int64_t end) {
  const red_job *j = ctx;
  for (int64_t q = begin; q < end; q++) reduce_run_one(j->g, j->tg, q, j->grain);
}

/* Reduced extent innermost: outputs go to threads when there are enough of
   them, else the pieces of each run do (a loop inside a chunk runs inline). */
static void reduce_runs(const red_geom *g, const red_target *tg) {
  int64_t O = 1;
  for (int k = 0; k < g->nk; k++) O *= g->size[k];
  int64_t work = O * g->R, pieces = O * ((g->R + RED_CHUNK - 1) / RED_CHUNK);
  red_job job = {g, tg, mt_parallel_items(MT_ITER_GRAIN / 2, work, pieces), 0};
  /* below two threads' worth of outputs the width need not be read: one
     thread's loop runs inline whatever its grain */
  int by_outputs = O >= 2 * RED_OUTPUTS_PER_THREAD && O >= RED_OUTPUTS_PER_THREAD * (int64_t)mt_parallel_width();
  int64_t grain = by_outputs ? mt_parallel_items(MT_ITER_GRAIN / 2, work, O) : O;   /* O: one chunk, inline */
  mt_parallel_for(O, grain, reduce_runs_range, &job);
}

/* Task t of a reduction whose reduced extent lies outside the innermost kept
   dim: rows of that dim are accumulated into a tile of outputs, vectorised
   along the row. */
static void reduce_rows_task(const red_geom *g, const red_target *tg, int64_t t, int64_t tiles) {
  const red_plan *pl = tg->pl;
  red_acc acc[RED_ROWS_TILE];
  int64_t idx[RED_ROWS_TILE];
  double m[RED_ROWS_TILE];
  int64_t B = g->size[0], bxs = g->xs[0], bos = g->os[0], es = mt_dtypes[tg->out_dtype].size;
  int64_t b0 = (t % tiles) * RED_ROWS_TILE, w = min64(RED_ROWS_TILE, B - b0), xo, oo;
  for (int64_t b = 0; b < w; b++) m[b] = 0;
  kept_offsets(g, 1, t / tiles, &xo, &oo);
  const char *x = g->x + xo + b0 * bxs;
  rows_kernels[pl->kind[0]][tg->dtype](x, g->rs, bxs, g->R, w, acc, idx, m, pl->p);
  if (pl->kind[1] >= 0) {
    for (int64_t b = 0; b < w; b++) {
      red_state st = {acc[b].f, acc[b].i, 0};
      m[b] = pass_param(pl, st, g->R);
    }
    rows_kernels[pl->kind[1]][tg->dtype](x, g->rs, bxs, g->R, w, acc, idx, m, pl->p);
  }
  for (int64_t b = 0; b < w; b++) {
    int64_t o = oo + (b0 + b) * bos;
    red_state st = {acc[b].f, acc[b].i, tg->idx ? idx[b] : 0};
    if (tg->out) write_value(tg->out_dtype, tg->out + o * es, finalize(pl, tg->dtype, st, g->R, m[b]));
    if (tg->idx) tg->idx[o] = st.idx;
  }
}

static void reduce_rows_range(void *ctx, int64_t begin, int64_t end) {
  const red_job *j = ctx;
  for (int64_t t = begin; t < end; t++) reduce_rows_task(j->g, j->tg, t, j->tiles);
}

static void reduce_rows(const red_geom *g, const red_target *tg) {
  int64_t outer = 1;
  for (int k = 1; k < g->nk; k++) outer *= g->size[k];
  int64_t tiles = (g->size[0] + RED_ROWS_TILE - 1) / RED_ROWS_TILE, tasks = outer * tiles;
  red_job job = {g, tg, 0, tiles};
  int64_t grain = mt_parallel_items(MT_ITER_GRAIN / 2, outer * g->size[0] * g->R, tasks);
  mt_parallel_for(tasks, grain, reduce_rows_range, &job);
}

/* Drops the reduced dims of a keepdim-shaped contiguous result. */
static void squeeze_reduced(mt_tensor *r, int ndim, uint32_t mask) {
  int k = 0;
  for (int d = 0; d < ndim; d++)
    if (!((mask >> d) & 1)) r->shape[k++] = r->shape[d];
  r->ndim = k;
  mt_contiguous_strides(k, r->shape, r->stride);
}

/* Runs a plan: r (values, out_dtype; NULL for indices only) and ri (int64
   indices, NULL when not wanted) are initialised here. */
static int run_plan(mt_tensor *r, mt_tensor *ri, const mt_tensor *x, uint32_t mask, int keepdim,
                    const red_plan *pl, int out_dtype) {
  int ndim = x->ndim;
  mask = ndim ? mask & ((1u << ndim) - 1) : 0;
  int64_t shape[MT_MAX_DIMS], R = 1, O = 1;
  for (int d = 0; d < ndim; d++) {
    int red = (mask >> d) & 1;
    shape[d] = red ? 1 : x->shape[d];
    if (red) R *= x->shape[d];
    else O *= x->shape[d];
  }
  if (r && mt_tensor_init(r, out_dtype, ndim, shape)) return -1;
  if (ri && mt_tensor_init(ri, MT_INT64, ndim, shape)) { if (r) mt_tensor_release(r); return -1; }
  const mt_tensor *res = r ? r : ri;
  int rc = 0;
  if (O > 0 && R == 0) {
    red_state st = identity(pl->kind[0]);
    double m = 0;
    if (pl->kind[1] >= 0) { m = pass_param(pl, st, 0); st = identity(pl->kind[1]); }
    red_value v = finalize(pl, x->dtype, st, 0, m);
    if (r) mt_fill(r, v.is_int ? (double)v.i : v.f);
    if (ri) mt_fill(ri, 0);
  } else if (O > 0) {
    int64_t ostride[MT_MAX_DIMS];
    memcpy(ostride, res->stride, sizeof(int64_t) * (size_t)ndim);
    red_geom g;
    mt_tensor copy = {0};
    if (build_geom(&g, x, mask, ostride)) {
      /* reduced dims that do not merge: copy x with them last, contiguous */
      int perm[MT_MAX_DIMS], k = 0;
      int64_t pstride[MT_MAX_DIMS];
      uint32_t pmask = 0;
      for (int d = 0; d < ndim; d++) if (!((mask >> d) & 1)) perm[k++] = d;
      for (int d = 0; d < ndim; d++) if ((mask >> d) & 1) { pmask |= 1u << k; perm[k++] = d; }
      for (int d = 0; d < ndim; d++) pstride[d] = ostride[perm[d]];
      mt_tensor view = {0};
      rc = mt_permute(&view, x, perm);
      if (rc == 0) rc = mt_clone(&copy, &view);
      mt_tensor_release(&view);
      if (rc == 0) build_geom(&g, &copy, pmask, pstride);
    }
    if (rc == 0) {
      red_target tg = {pl, x->dtype, r ? mt_data(r) : NULL, out_dtype, ri ? (int64_t *)mt_data(ri) : NULL};
      if (g.nk == 0 || (g.red_inner && g.R >= RED_MIN_RUN)) reduce_runs(&g, &tg);
      else reduce_rows(&g, &tg);
    }
    mt_tensor_release(&copy);
  }
  if (rc) {
    if (r) mt_tensor_release(r);
    if (ri) mt_tensor_release(ri);
    return -1;
  }
  if (!keepdim) {
    if (r) squeeze_reduced(r, ndim, mask);
    if (ri) squeeze_reduced(ri, ndim, mask);
  }
  return 0;
}

/* Fails when a reduced dim is empty, for ops without an identity. */
static int check_nonempty(const char *op, const mt_tensor *x, uint32_t mask) {
  for (int d = 0; d < x->ndim; d++)
    if (((mask >> d) & 1) && x->shape[d] == 0) {
      char b[128];
      return mt_fail("%s: reduction dim %d of a %s tensor is empty, and %s has no identity", op,
                     d + 1, mt_shape_str(x, b, sizeof b), op);
    }
  return 0;
}

/* ---- the registry's reductions (src/ops/registry.h): a plan from each entry ---- */
typedef mt_red_entry red_entry;
#define RED(first, second, fin, result, signature) {K_##first, K_##second, FIN_##fin, OUT_##result, SIG_##signature}
#define RED_X(name, kernel, E, ...) [MT_OP_##name - MT_NUM_POINTWISE_OPS] = kernel,
static const red_entry red_entries[MT_OP_END_REDUCE - MT_NUM_POINTWISE_OPS] = {MT_REDUCE_OPS(RED_X, _)};
#undef RED_X
#undef RED

const mt_red_entry *mt_red_entry_of(mt_op op) { return &red_entries[op - MT_NUM_POINTWISE_OPS]; }

/* norm's passes by its order p */
static int run_norm(mt_tensor *r, const mt_tensor *x, double p, uint32_t dims, int keepdim) {
  if (isinf(p)) {
    mt_tensor a = {0};
    if (mt_unary(&a, x, MT_OP_abs, 0, x->dtype)) return -1;
    red_plan pl = {{p > 0 ? K_MAX : K_MIN, -1}, PARAM_NONE, FIN_SAME, 0};
    int rc = run_plan(r, NULL, &a, dims, keepdim, &pl, x->dtype);
    mt_tensor_release(&a);
    return rc;
  }
  red_plan pl = {{K_POWSUM, -1}, PARAM_NONE, FIN_ROOT, p};
  if (p == 0) { pl.kind[0] = K_NONZERO; pl.fin = FIN_SAME; }
  else if (p == 1) { pl.kind[0] = K_ABSSUM; pl.fin = FIN_SAME; }
  else if (p == 2) { pl.kind[0] = K_SQDEV; pl.fin = FIN_SQRT; }
  return run_plan(r, NULL, x, dims, keepdim, &pl, x->dtype);
}

int mt_reduce_prepare(const mt_tensor *x, mt_op op, uint32_t dims, int dtype, double param, int default_float,
                      int *in_dtype, int *out_dtype) {
  if (!mt_op_is_reduce(op))
    return mt_fail("reduce: op %d is not a reduction", (int)op);
  const red_entry *e = &red_entries[op - MT_NUM_POINTWISE_OPS];
  const char *name = mt_op_names[op];
  if (dtype < 0 && e->out == OUT_TO_FLOAT && !mt_dtype_is_float(x->dtype)) dtype = default_float;
  int xd = dtype >= 0 ? dtype : x->dtype, isf = mt_dtype_is_float(xd), out = xd;
  switch (e->out) {
  case OUT_WIDEN: out = isf ? xd : MT_INT64; break;
  case OUT_BOOL: out = xd == MT_UINT8 ? MT_UINT8 : MT_BOOL; break;
  case OUT_INT64: out = MT_INT64; break;
  case OUT_FLOAT: case OUT_TO_FLOAT:
    if (!isf)
      return mt_fail("%s: expects a floating point tensor, got %s (convert it with x:float()%s)", name,
                     mt_dtypes[xd].name, e->sig == SIG_DIMS ? ", or pass {dtype='float32'}" : "");
    break;
  default: break;
  }
  if (e->first == K_NORM) {
    double p = param;
    if (isnan(p)) return mt_fail("norm: the order p is NaN");
    if ((isinf(p) || p < 0) && x->ndim && mt_numel(x) == 0) {
      uint32_t m = dims & ((1u << x->ndim) - 1);
      for (int d = 0; d < x->ndim; d++)
        if (((m >> d) & 1) && x->shape[d] == 0)
          return mt_fail("norm: cannot compute the %g norm over dim %d, which is empty (no identity)", p, d + 1);
    }
  } else if (e->second < 0 && (e->first == K_MAX || e->first == K_MIN) &&
             check_nonempty(name, x, x->ndim ? dims : 0)) {
    return -1;
  }
  *in_dtype = xd;
  *out_dtype = out;
  return 0;
}

int mt_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t dims, int keepdim, int dtype, double param,
              int default_float) {
  int xd, out, rc;
  if (mt_reduce_prepare(x, op, dims, dtype, param, default_float, &xd, &out)) return -1;
  const red_entry *e = &red_entries[op - MT_NUM_POINTWISE_OPS];
  mt_tensor in = {0};
  if (mt_to_dtype(&in, x, xd)) return -1;
  if (e->first == K_NORM) {
    rc = run_norm(r, &in, param, dims, keepdim);
  } else if (e->first == K_MEDIAN) {               /* of every element: a selection, not a pass */
    uint32_t all = x->ndim ? (1u << x->ndim) - 1 : 0;
    rc = (dims & all) != all ? mt_fail("%s: over some dims only, use x:%s(dim)", mt_op_names[op], mt_op_names[op])
                             : mt_median(r, NULL, &in, 0, keepdim);
  } else {
    red_plan pl = {{e->first, e->second},
                   e->second == K_SQDEV ? PARAM_MEAN : e->second == K_EXPSUM ? PARAM_SHIFT : PARAM_NONE,
                   e->fin, param};
    rc = run_plan(r, NULL, &in, dims, keepdim, &pl, out);
  }
  mt_tensor_release(&in);
  return rc;
}

/* ---- the registry's ops along a dim: each entry's kernel call ---- */
int mt_along(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, int dtype) {
#define ALONG(call) return call
#define ALONG_X(name, kernel, E, ...) case MT_OP_##name: kernel;
  switch (op) {
    MT_ALONG_OPS(ALONG_X, _)
  default: return mt_fail("along: op %d is not an op along a dim", (int)op);
  }
#undef ALONG_X
#undef ALONG
}

int mt_max_dim(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, int keepdim,
               int is_min) {
  const char *name = is_min ? "min" : "max";
  if ((dim = mt_wrap_dim(name, dim, x->ndim)) < 0) return -1;
  if (check_nonempty(name, x, 1u << dim)) return -1;
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0)) {   /* the device's argmax, then the values it points at */
    if (mt_argmax(indices, x, dim, 0, 1, is_min)) return -1;
    if (mt_gather(values, x, dim, indices, 0)) { mt_tensor_release(indices); return -1; }
    if (!keepdim && x->ndim) {
      squeeze_reduced(values, x->ndim, 1u << dim);
      squeeze_reduced(indices, x->ndim, 1u << dim);
    }
    return 0;
  }
  red_plan pl = {{is_min ? K_MIN : K_MAX, -1}, PARAM_NONE, FIN_SAME, 0};
  return run_plan(values, indices, x, 1u << dim, keepdim, &pl, x->dtype);
}

int mt_argmax(mt_tensor *r, const mt_tensor *x, int dim, int flatten, int keepdim, int is_min) {
  const char *name = is_min ? "argmin" : "argmax";
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0))
    MT_EXTRA_CALL(name, argmax, x, NULL, NULL, r, x, dim, flatten, keepdim, is_min);
  red_plan pl = {{is_min ? K_MIN : K_MAX, -1}, PARAM_NONE, FIN_SAME, 0};
  if (!flatten) {
    if ((dim = mt_wrap_dim(name, dim, x->ndim)) < 0) return -1;
    if (check_nonempty(name, x, 1u << dim)) return -1;
    return run_plan(NULL, r, x, 1u << dim, keepdim, &pl, x->dtype);
  }
  if (mt_numel(x) == 0)
    return mt_fail("%s: cannot take the %s of an empty tensor; specify a non-empty dim", name, name);
  mt_tensor c = {0};                   /* flat indices count in row-major order */
  if (mt_contiguous(&c, x)) return -1;
  int rc = run_plan(NULL, r, &c, MT_ALL_DIMS, keepdim, &pl, x->dtype);
  mt_tensor_release(&c);
  return rc;
}

/* ---- x seen as [A, N, B] around dim, for scans, softmax and selection ---- */
static void split_dims(const mt_tensor *x, int dim, int64_t *A, int64_t *N, int64_t *B) {
  *A = *N = *B = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (d < dim) *A *= x->shape[d];
    else if (d == dim) *N = x->shape[d];
    else *B *= x->shape[d];
  }
}

/* A kernel over a tile of w columns of an [N, B] block, x and y at the
   tile's first element; flag is the op's own (softmax's take_log). */
typedef void (*tile_fn)(const char *x, char *y, int64_t N, int64_t B, int64_t w, int flag);

typedef struct {
  const char *x;
  char *y;
  int64_t N, B, tiles, es;
  tile_fn fn;
  int flag;
} tiles_job;

/* Tasks [begin, end): tile t % tiles of block t / tiles. */
static void tiles_range(void *ctx, int64_t begin, int64_t end) {
  const tiles_job *j = ctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t b0 = (t % j->tiles) * RED_TILE, off = ((t / j->tiles) * j->N * j->B + b0) * j->es;
    j->fn(j->x + off, j->y + off, j->N, j->B, min64(RED_TILE, j->B - b0), j->flag);
  }
}

/* Runs fn over every RED_TILE-column tile of in seen as [A, N, B] around
   dim, writing r of the same shape; both contiguous. */
static void for_tiles(const mt_tensor *in, mt_tensor *r, int dim, tile_fn fn, int flag) {
  int64_t A, N, B;
  split_dims(in, dim, &A, &N, &B);
  if (N == 0) return;
  int64_t tiles = (B + RED_TILE - 1) / RED_TILE, tasks = A * tiles;
  tiles_job job = {mt_data(in), mt_data(r), N, B, tiles, mt_dtypes[in->dtype].size, fn, flag};
  mt_parallel_for(tasks, mt_parallel_items(MT_ITER_GRAIN / 2, A * N * B, tasks), tiles_range, &job);
}

/* ---- cumulative sum and product ---- */
#define CUM_KERNEL(NAME, OP, INIT, E, T, K)                                                 \
  static void NAME##_##E(const char *x, char *y, int64_t N, int64_t B, int64_t w, int flag) { \
    (void)flag;                                                                             \
    if (w == 1) {                                                                           \
      RED_SUM_K##K run = INIT;                                                              \
      for (int64_t j = 0; j < N; j++) {                                                     \
        run = run OP (RED_SUM_K##K)MT_LOAD_##E((const T *)x + j * B);                       \
        MT_STORE_##E((T *)y + j * B, run);                                                  \
      }                                                                                     \
      return;                                                                               \
    }                                                                                       \
    RED_SUM_K##K acc[RED_TILE];                                                             \
    for (int64_t b = 0; b < w; b++) acc[b] = INIT;                                          \
    for (int64_t j = 0; j < N; j++) {                                                       \
      const T *xr = (const T *)x + j * B;                                                   \
      T *yr = (T *)y + j * B;                                                               \
      for (int64_t b = 0; b < w; b++) {                                                     \
        acc[b] = acc[b] OP (RED_SUM_K##K)MT_LOAD_##E(xr + b);                               \
        MT_STORE_##E(yr + b, acc[b]);                                                       \
      }                                                                                     \
    }                                                                                       \
  }
#define CUM_GEN(E, T, N, TN, K) CUM_KERNEL(cumsum, +, 0, E, T, K) CUM_KERNEL(cumprod, *, 1, E, T, K)
MT_DTYPES(CUM_GEN)

#define CUM_ENTRY(E, T, N, TN, K) {cumsum_##E, cumprod_##E},
static const tile_fn cum_kernels[MT_NDTYPES][2] = {MT_DTYPES(CUM_ENTRY)};

int mt_cumulative(mt_tensor *r, const mt_tensor *x, int dim, int is_prod, int dtype) {
  const char *name = is_prod ? "cumprod" : "cumsum";
  if ((dim = mt_wrap_dim(name, dim, x->ndim)) < 0) return -1;
  if (dtype < 0) dtype = mt_dtype_is_float(x->dtype) ? x->dtype : MT_INT64;
  mt_tensor in = {0};
  if (mt_contiguous_as(&in, x, dtype)) return -1;
  if (mt_tensor_init(r, dtype, x->ndim, x->shape)) { mt_tensor_release(&in); return -1; }
  for_tiles(&in, r, dim, cum_kernels[dtype][is_prod], 0);
  mt_tensor_release(&in);
  return 0;
}

/* ---- softmax ---- */

#define red_log(v) _Generic((v), float: logf, default: log)(v)

/* One contiguous row of n: max, then exp(x - max) and its sum, then scale
   (or x - max - log(sum) for log-softmax). */
#define SM_ROW(E, T)                                                                        \
  static MT_CLONES void softmax_row_##E(const T *x, T *y, int64_t n, int take_log) {                  \
    typedef MT_CT_##E ct;                                                                   \
    ct lane[RED_LANES], mx = -INFINITY, s = 0;                                              \
    for (int j = 0; j < RED_LANES; j++) lane[j] = -INFINITY;                                \
    int64_t i = 0;                                                                          \
    for (; i + RED_LANES <= n; i += RED_LANES) {                                            \
      _Pragma("omp simd")                                                                   \
      for (int j = 0; j < RED_LANES; j++) {                                                 \
        ct v = MT_LOAD_##E(x + i + j);                                                      \
        lane[j] = v > lane[j] ? v : lane[j];                                                \
      }                                                                                     \
    }                                                                                       \
    for (int j = 0; j < RED_LANES; j++) mx = lane[j] > mx ? lane[j] : mx;                   \
    for (; i < n; i++) { ct v = MT_LOAD_##E(x + i); mx = v > mx ? v : mx; }                 \
    if (take_log) {                                                                         \
      _Pragma("omp simd reduction(+:s)")                                                    \
      for (int64_t k = 0; k < n; k++) s += mt_exp(MT_LOAD_##E(x + k) - mx);                \
      ct ls = red_log(s);                                                                   \
      _Pragma("omp simd")                                                                   \
      for (int64_t k = 0; k < n; k++) MT_STORE_##E(y + k, MT_LOAD_##E(x + k) - mx - ls);    \
      return;                                                                               \
    }                                                                                       \
    _Pragma("omp simd reduction(+:s)")                                                      \
    for (int64_t k = 0; k < n; k++) {                                                       \
      ct e = mt_exp(MT_LOAD_##E(x + k) - mx);                                              \
      MT_STORE_##E(y + k, e);                                                               \
      s += e;                                                                               \
    }                                                                                       \
    ct inv = (ct)1 / s;                                                                     \
    _Pragma("omp simd")                                                                     \
    for (int64_t k = 0; k < n; k++) MT_STORE_##E(y + k, MT_LOAD_##E(y + k) * inv);          \
  }

/* A tile of w columns of an [N, B] block: the same three steps, vectorised
   along the rows. */
#define SM_COLS(E, T)                                                                       \
  static MT_CLONES void softmax_cols_##E(const T *x, T *y, int64_t N, int64_t B, int64_t w,           \
                               int take_log) {                                              \
    typedef MT_CT_##E ct;                                                                   \
    ct mx[RED_TILE], s[RED_TILE];                                                           \
    for (int64_t b = 0; b < w; b++) { mx[b] = -INFINITY; s[b] = 0; }                        \
    for (int64_t j = 0; j < N; j++) {                                                       \
      const T *xr = x + j * B;                                                              \
      _Pragma("omp simd")                                                                   \
      for (int64_t b = 0; b < w; b++) {                                                     \
        ct v = MT_LOAD_##E(xr + b);                                                         \
        mx[b] = v > mx[b] ? v : mx[b];                                                      \
      }                                                                                     \
    }                                                                                       \
    for (int64_t j = 0; j < N; j++) {                                                       \
      const T *xr = x + j * B;                                                              \
      T *yr = y + j * B;                                                                    \
      _Pragma("omp simd")                                                                   \
      for (int64_t b = 0; b < w; b++) {                                                     \
        ct e = mt_exp(MT_LOAD_##E(xr + b) - mx[b]);                                        \
        if (!take_log) MT_STORE_##E(yr + b, e);                                             \
        s[b] += e;                                                                          \
      }                                                                                     \
    }                                                                                       \
    for (int64_t b = 0; b < w; b++) s[b] = take_log ? red_log(s[b]) : (ct)1 / s[b];         \
    for (int64_t j = 0; j < N; j++) {                                                       \
      const T *xr = x + j * B;                                                              \
      T *yr = y + j * B;                                                                    \
      if (take_log) {                                                                       \
        _Pragma("omp simd")                                                                 \
        for (int64_t b = 0; b < w; b++) MT_STORE_##E(yr + b, MT_LOAD_##E(xr + b) - mx[b] - s[b]); \
      } else {                                                                              \
        _Pragma("omp simd")                                                                 \
        for (int64_t b = 0; b < w; b++) MT_STORE_##E(yr + b, MT_LOAD_##E(yr + b) * s[b]);   \
      }                                                                                     \
    }                                                                                       \
  }

#define SM_GEN(E, T, NAME, TN, K) SM_ROW(E, T) SM_COLS(E, T)                                   \
  static void softmax_##E(const char *x, char *y, int64_t N, int64_t B, int64_t w, int lg) { \
    if (B == 1) softmax_row_##E((const T *)x, (T *)y, N, lg);                               \
    else softmax_cols_##E((const T *)x, (T *)y, N, B, w, lg);                               \
  }
MT_FLOAT_DTYPES(SM_GEN)

#define SM_ENTRY(E, T, N, TN, K) [MT_##E] = softmax_##E,
static const tile_fn sm_kernels[MT_NDTYPES] = {MT_FLOAT_DTYPES(SM_ENTRY)};

int mt_softmax(mt_tensor *r, const mt_tensor *x, int dim, int take_log, int dtype) {
  const char *name = take_log ? "log_softmax" : "softmax";
  if ((dim = mt_wrap_dim(name, dim, x->ndim)) < 0) return -1;
  if (dtype < 0) dtype = x->dtype;
  if (!mt_dtype_is_float(dtype))
    return mt_fail("%s: expected a floating point tensor, got %s (convert it, or pass "
                   "{dtype='float32'})", name, mt_dtypes[dtype].name);
  mt_tensor in = {0};
  if (mt_contiguous_as(&in, x, dtype)) return -1;
  if (mt_tensor_init(r, dtype, x->ndim, x->shape)) { mt_tensor_release(&in); return -1; }
  for_tiles(&in, r, dim, sm_kernels[dtype], take_log);
  mt_tensor_release(&in);
  return 0;
}

/* ---- sorting and selection along a dim ---- */

/* A slice element: its value as a sortable key (double for floats, int64
   otherwise: both exact) and its position in the slice. */
typedef struct { union { double f; int64_t i; } key; int64_t idx; } sel_pair;

#define SEL_KEY_K0(p, v) ((p).key.i = (int64_t)(v))
#define SEL_KEY_K1(p, v) ((p).key.i = (int64_t)(v))
#define SEL_KEY_K2(p, v) ((p).key.f = (double)(v))
#define SEL_GATHER(E, T, N, TN, K)                                                          \
  static void gather_##E(const char *x, int64_t s, int64_t n, sel_pair *out) {              \
    for (int64_t i = 0; i < n; i++) { SEL_KEY_K##K(out[i], MT_LOAD_##E(x + i * s)); out[i].idx = i; } \
  }
MT_DTYPES(SEL_GATHER)
typedef void (*gather_fn)(const char *x, int64_t s, int64_t n, sel_pair *out);
#define SEL_GATHER_ENTRY(E, T, N, TN, K) gather_##E,
static const gather_fn gather_kernels[MT_NDTYPES] = {MT_DTYPES(SEL_GATHER_ENTRY)};

/* "a sorts strictly before b"; NaN is above every number */
#define SEL_F_ASC(a, b) ((a).key.f < (b).key.f || (isnan((b).key.f) && !isnan((a).key.f)))
#define SEL_F_DESC(a, b) ((a).key.f > (b).key.f || (isnan((a).key.f) && !isnan((b).key.f)))
#define SEL_I_ASC(a, b) ((a).key.i < (b).key.i)
#define SEL_I_DESC(a, b) ((a).key.i > (b).key.i)

/* Stable merge sort: insertion-sorted runs of 16, then bottom-up merges
   between a and tmp (both n long). */
#define SEL_SORT(NAME, BEFORE)                                                              \
  static void NAME(sel_pair *a, sel_pair *tmp, int64_t n) {                                 \
    for (int64_t lo = 0; lo < n; lo += 16) {                                                \
      int64_t hi = min64(lo + 16, n);                                                       \
      for (int64_t i = lo + 1; i < hi; i++) {                                               \
        sel_pair v = a[i];                                                                  \
        int64_t j = i;                                                                      \
        for (; j > lo && BEFORE(v, a[j - 1]); j--) a[j] = a[j - 1];                         \
        a[j] = v;                                                                           \
      }                                                                                     \
    }                                                                                       \
    sel_pair *src = a, *dst = tmp;                                                          \
    for (int64_t w = 16; w < n; w *= 2) {                                                   \
      for (int64_t lo = 0; lo < n; lo += 2 * w) {                                           \
        int64_t mid = min64(lo + w, n), hi = min64(lo + 2 * w, n), i = lo, j = mid, k = lo; \
        while (i < mid && j < hi) dst[k++] = BEFORE(src[j], src[i]) ? src[j++] : src[i++];  \
        while (i < mid) dst[k++] = src[i++];                                                \
        while (j < hi) dst[k++] = src[j++];                                                 \
      }                                                                                     \
      sel_pair *t = src; src = dst; dst = t;                                                \
    }                                                                                       \
    if (src != a) memcpy(a, src, sizeof *a * (size_t)n);                                    \
  }
SEL_SORT(sort_f_asc, SEL_F_ASC)
SEL_SORT(sort_f_desc, SEL_F_DESC)
SEL_SORT(sort_i_asc, SEL_I_ASC)
SEL_SORT(sort_i_desc, SEL_I_DESC)

typedef mt_sel_op sel_op;
#define SEL_SORTED MT_SEL_SORTED
#define SEL_KTH MT_SEL_KTH
#define SEL_MEDIAN MT_SEL_MEDIAN
#define SEL_MODE MT_SEL_MODE

/* Element steps a sorted element counts for when deciding whether to split
   the slices over threads: a merge sort visits each element several times. */
#define SEL_COST 4

/* Position in a sorted ascending slice that kthvalue/median/mode pick. */
static int64_t sel_pick(const sel_pair *s, int64_t n, sel_op op, int64_t k, int is_float) {
  if (op == SEL_KTH) return k;
  if (op == SEL_MEDIAN) {
    if (is_float && isnan(s[n - 1].key.f)) {       /* NaN: the first one (lowest index) */
      int64_t i = n - 1;
      while (i > 0 && isnan(s[i - 1].key.f)) i--;
      return i;
    }
    return (n - 1) / 2;
  }
  int64_t best = 0, best_count = 0;                /* mode: the longest run of equal keys */
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && (is_float ? s[j].key.f == s[i].key.f : s[j].key.i == s[i].key.i)) j++;
    if (j - i > best_count) { best_count = j - i; best = j - 1; }
    i = j;
  }
  return best;
}

/* The slices of x along dim, as [A, N, B] contiguous, each sorted and
   reduced to M results. */
typedef struct {
  const char *x;
  char *values;
  int64_t *indices;
  int64_t N, B, M, k;
  size_t es;
  sel_op op;
  int is_float;
  gather_fn gather;
  void (*sort)(sel_pair *, sel_pair *, int64_t);
  _Atomic int failed;             /* a chunk ran out of memory */
} sel_job;

/* Slices [lo, hi) of a job, with one scratch buffer. */
static void sel_slices(void *ctx, int64_t lo, int64_t hi) {
  sel_job *j = ctx;
  int64_t N = j->N, B = j->B, M = j->M, es = (int64_t)j->es;
  sel_pair *buf = malloc(sizeof *buf * 2 * (size_t)N);
  if (!buf) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t sl = lo; sl < hi; sl++) {
    int64_t a = sl / B, b = sl % B;
    const char *xs = j->x + (a * N * B + b) * es;
    j->gather(xs, B * es, N, buf);
    j->sort(buf, buf + N, N);
    int64_t first = j->op == SEL_SORTED ? 0 : sel_pick(buf, N, j->op, j->k, j->is_float);
    for (int64_t m = 0; m < M; m++) {
      int64_t src = buf[first + m].idx, o = (a * M + m) * B + b;
      memcpy(j->values + o * es, xs + src * B * es, j->es);
      j->indices[o] = src;
    }
  }
  free(buf);
}

/* Sorts every slice along dim and writes M results per slice: the first M
   (SEL_SORTED), or the one that op picks (M = 1). k is 0-based for SEL_KTH. */
static int select_along(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim,
                        sel_op op, int64_t M, int64_t k, int descending, int keepdim) {
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0))
    MT_EXTRA_CALL(mt_op_names[MT_OP_sort], select_along, x, NULL, NULL, values, indices, x, dim, op, M, k, descending,
                  keepdim);
  mt_tensor in = {0};
  if (mt_contiguous(&in, x)) return -1;
  int64_t A, N, B, shape[MT_MAX_DIMS];
  split_dims(x, dim, &A, &N, &B);
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  if (x->ndim) shape[dim] = M;
  if (mt_tensor_init(values, x->dtype, x->ndim, shape)) { mt_tensor_release(&in); return -1; }
  if (mt_tensor_init(indices, MT_INT64, x->ndim, shape)) {
    mt_tensor_release(values);
    mt_tensor_release(&in);
    return -1;
  }
  int is_float = mt_dtype_is_float(x->dtype);
  sel_job job = {mt_data(&in), mt_data(values), (int64_t *)mt_data(indices), N, B, M, k,
                 (size_t)mt_dtypes[x->dtype].size, op, is_float, gather_kernels[x->dtype],
                 is_float ? (descending ? sort_f_desc : sort_f_asc)
                          : (descending ? sort_i_desc : sort_i_asc), 0};
  int64_t slices = A * B, work;
  if (__builtin_mul_overflow(slices * N, SEL_COST, &work)) work = INT64_MAX;
  if (N > 0 && M > 0) mt_parallel_for(slices, mt_parallel_items(MT_ITER_GRAIN / 2, work, slices), sel_slices, &job);
  mt_tensor_release(&in);
  if (atomic_load(&job.failed)) {
    mt_tensor_release(values);
    mt_tensor_release(indices);
    return mt_fail("sort: out of memory for a slice of %lld elements", (long long)N);
  }
  if (!keepdim && M == 1 && x->ndim) {
    squeeze_reduced(values, x->ndim, 1u << dim);
    squeeze_reduced(indices, x->ndim, 1u << dim);
  }
  return 0;
}

/* Wraps dim and returns the slice length, or -1. */
static int64_t slice_len(const char *op, const mt_tensor *x, int *dim) {
  if ((*dim = mt_wrap_dim(op, *dim, x->ndim)) < 0) return -1;
  return x->ndim ? x->shape[*dim] : 1;
}

static int check_slice(const char *op, const mt_tensor *x, int dim, int64_t n) {
  if (n > 0) return 0;
  char b[128];
  return mt_fail("%s: dim %d of a %s tensor is empty", op, dim + 1, mt_shape_str(x, b, sizeof b));
}

int mt_sort(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, int descending) {
  int64_t n = slice_len("sort", x, &dim);
  if (n < 0) return -1;
  return select_along(values, indices, x, dim, SEL_SORTED, n, 0, descending, 1);
}

int mt_topk(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int64_t k, int dim,
            int largest) {
  int64_t n = slice_len("topk", x, &dim);
  if (n < 0) return -1;
  if (k < 0 || k > n || (x->ndim == 0 && k != 1))
    return mt_fail("topk: k = %lld is out of range for dim %d of size %lld", (long long)k, dim + 1,
                   (long long)n);
  return select_along(values, indices, x, dim, SEL_SORTED, k, 0, largest, 1);
}

int mt_kthvalue(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int64_t k, int dim,
                int keepdim) {
  int64_t n = slice_len("kthvalue", x, &dim);
  if (n < 0) return -1;
  if (k < 1 || k > n)
    return mt_fail("kthvalue: k = %lld is out of range for dim %d of size %lld (k counts from 1)",
                   (long long)k, dim + 1, (long long)n);
  return select_along(values, indices, x, dim, SEL_KTH, 1, k - 1, 0, keepdim);
}

int mt_median(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, int keepdim) {
  if (indices) {
    int64_t n = slice_len("median", x, &dim);
    if (n < 0 || check_slice("median", x, dim, n)) return -1;
    return select_along(values, indices, x, dim, SEL_MEDIAN, 1, 0, 0, keepdim);
  }
  int64_t numel = mt_numel(x);
  if (numel == 0) {
    if (!mt_dtype_is_float(x->dtype))
      return mt_fail("median: an empty %s tensor has no median", mt_dtypes[x->dtype].name);
    if (mt_tensor_init_like(values, x->dtype, 0, NULL, x)) return -1;
    return mt_fill(values, NAN);
  }
  mt_tensor flat = {0}, idx = {0};
  if (mt_reshape(&flat, x, 1, &numel)) return -1;
  int rc = select_along(values, &idx, &flat, 0, SEL_MEDIAN, 1, 0, 0, 0);
  mt_tensor_release(&flat);
  mt_tensor_release(&idx);
  return rc;
}

int mt_mode(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, int keepdim) {
  int64_t n = slice_len("mode", x, &dim);
  if (n < 0 || check_slice("mode", x, dim, n)) return -1;
  return select_along(values, indices, x, dim, SEL_MODE, 1, 0, 0, keepdim);
}

/* ---- the registry's selections, by op ---- */
int mt_selection(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, mt_op op, int64_t k, int dim, int keepdim,
              int flag) {
  (void)k; (void)keepdim; (void)flag;
#define SELECT(call, signature) return call;
#define OPC(name, kernel, ...) case MT_OP_##name: kernel
  switch (op) {
    MT_SELECT_OPS(OPC, _)
  default: return mt_fail("mt_selection: %s is not a selection", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
  }
#undef OPC
#undef SELECT
}
