/* mt_random.c: Philox 4x32-10, generators and every sampler. Each value is
   a pure function of (seed, counter), see mt_random.h, so a draw splits
   across threads anywhere and still gives the same numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mt_random.h"
#include <stdatomic.h>
#include "mt_kernel.h"
#include "mt_parallel.h"
#include "mt_isa.h"

/* Below this many values a draw stays on one thread. A value costs a Philox
   block and often a log or a cos (tens of ns), so the break-even comes much
   earlier than for plain elementwise ops (MT_ITER_GRAIN). */
#define MT_RANDOM_GRAIN 8192

/* ---- Philox 4x32-10 ---- */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u    /* golden ratio */
#define PHILOX_W1 0xBB67AE85u    /* sqrt(3) - 1 */

/* One round and key bump on the state words, in place. */
#define PHILOX_ROUND(c0, c1, c2, c3, k0, k1)                                  \
  do {                                                                        \
    uint64_t p0_ = (uint64_t)PHILOX_M0 * (c0), p1_ = (uint64_t)PHILOX_M1 * (c2); \
    uint32_t y0_ = (uint32_t)(p1_ >> 32) ^ (c1) ^ (k0);                       \
    uint32_t y2_ = (uint32_t)(p0_ >> 32) ^ (c3) ^ (k1);                       \
    (c1) = (uint32_t)p1_;                                                     \
    (c3) = (uint32_t)p0_;                                                     \
    (c0) = y0_;                                                               \
    (c2) = y2_;                                                               \
    (k0) += PHILOX_W0;                                                        \
    (k1) += PHILOX_W1;                                                        \
  } while (0)

void mt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

static inline uint64_t word64(const uint32_t *w) { return (uint64_t)w[1] << 32 | w[0]; }
/* Uniforms from the top bits of x: on [0, 1), and on (0, 1) for logs. A
   32-bit draw has its word in the top half of x and zeros below. */
static inline double unit53(uint64_t x) { return (double)(x >> 11) * 0x1p-53; }
static inline double unit53_open(uint64_t x) { return ((double)(x >> 11) + 0.5) * 0x1p-53; }
/* an integer on [0, span) from 64 random bits (multiply-shift: the bias is
   below span / 2^64, far under anything measurable); span 0 means 2^64 */
static inline uint64_t below_span(uint64_t x, uint64_t span) {
  return span ? (uint64_t)(((unsigned __int128)x * span) >> 64) : x;
}

/* ---- generators ---- */
static mt_generator default_generator;
static int default_seeded;

mt_generator *mt_default_generator(void) {
  if (!default_seeded) {
    mt_generator_init(&default_generator, mt_nondeterministic_seed());
    default_seeded = 1;
  }
  return &default_generator;
}

/* the generators of the other devices (torch.cuda's), one per device
   index, seeded as a new torch.Generator() until a seed is set */
static mt_generator device_generators[MT_NUM_DEVICES][MT_MAX_DEVICE_INDEX];
static int device_seeded[MT_NUM_DEVICES][MT_MAX_DEVICE_INDEX];

mt_generator *mt_device_generator(int device, int index) {
  if (device <= MT_CPU || device >= MT_NUM_DEVICES || index < 0 || index >= MT_MAX_DEVICE_INDEX)
    return mt_default_generator();
  if (!device_seeded[device][index]) {
    mt_generator_init(&device_generators[device][index], MT_GENERATOR_DEFAULT_SEED);
    device_seeded[device][index] = 1;
  }
  return &device_generators[device][index];
}

void mt_seed_device_generators(uint64_t seed) {
  for (int d = MT_CPU + 1; d < MT_NUM_DEVICES; d++)
    for (int i = 0; i < MT_MAX_DEVICE_INDEX; i++) {
      mt_generator_init(&device_generators[d][i], seed);
      device_seeded[d][i] = 1;
    }
}

void mt_generator_init(mt_generator *g, uint64_t seed) {
  g->seed = seed;
  g->offset = 0;
}

uint64_t mt_nondeterministic_seed(void) {
  uint64_t s = 0;
  FILE *f = fopen("/dev/urandom", "rb");
  if (!f || fread(&s, sizeof s, 1, f) != 1) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s = (uint64_t)ts.tv_sec * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&s;
  }
  if (f) fclose(f);
  return s >> 1;
}

void mt_generator_get_state(const mt_generator *g, uint8_t out[MT_RNG_STATE_BYTES]) {
  for (int i = 0; i < 8; i++) {
    out[i] = (uint8_t)(g->seed >> (8 * i));
    out[8 + i] = (uint8_t)(g->offset >> (8 * i));
  }
}

void mt_generator_set_state(mt_generator *g, const uint8_t in[MT_RNG_STATE_BYTES]) {
  g->seed = g->offset = 0;
  for (int i = 0; i < 8; i++) {
    g->seed |= (uint64_t)in[i] << (8 * i);
    g->offset |= (uint64_t)in[8 + i] << (8 * i);
  }
}

/* ---- streams: the values of one draw (layout in mt_random.h) ---- */
/* Values per pass: their random bits (8 bytes each) stay in L1 between the
   Philox pass and the transform pass. Even, so a normal pair (2k, 2k+1)
   never straddles two passes. */
#define MT_RANDOM_CHUNK 512
/* Blocks computed side by side: 8 x 32-bit words fill a 256-bit vector. */
#define PHILOX_LANES 16
/* Blocks of one pass: 2 values a block, one more for a start inside a
   block, rounded up to whole lane groups. */
#define MT_RANDOM_BLOCKS ((MT_RANDOM_CHUNK / 2 + 1 + PHILOX_LANES - 1) / PHILOX_LANES * PHILOX_LANES)

typedef struct {
  uint32_t key[2];
  uint64_t offset;      /* the draw's first block */
  int words;            /* per value: 1 or 2 */
  int lane_bits;        /* log2(values per block) */
} stream;

static stream open_stream(mt_generator *g, uint64_t n, int words) {
  stream st;
  st.key[0] = (uint32_t)g->seed;
  st.key[1] = (uint32_t)(g->seed >> 32);
  st.words = words;
  st.lane_bits = words == 2 ? 1 : 2;
  st.offset = g->offset;
  g->offset += (n + ((uint64_t)1 << st.lane_bits) - 1) >> st.lane_bits;
  return st;
}

/* Blocks first .. first + n - 1, word-major, computed PHILOX_LANES at a
   time (a few past n, unused): a fixed-length loop over blocks with the
   rounds inside, in 32-bit arithmetic, that compilers vectorize. */
static MT_CLONES void philox_blocks(const uint32_t key[2], uint64_t first, int n, uint32_t out[4][MT_RANDOM_BLOCKS]) {
  const uint32_t key0 = key[0], key1 = key[1];
  const uint32_t first_lo = (uint32_t)first, first_hi = (uint32_t)(first >> 32);
  for (int group = 0; group < n; group += PHILOX_LANES) {
    for (int b = group; b < group + PHILOX_LANES; b++) {
      uint32_t c0 = first_lo + (uint32_t)b, c1 = first_hi + (c0 < first_lo), c2 = 0, c3 = 0;
      uint32_t k0 = key0, k1 = key1;
      for (int round = 0; round < 10; round++) PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
      out[0][b] = c0; out[1][b] = c1; out[2][b] = c2; out[3][b] = c3;
    }
  }
}

/* The random bits of values [s, s + n) (n <= MT_RANDOM_CHUNK), top-aligned
   in 64 bits: a 1-word value has its word on top and zeros below. */
static MT_CLONES void stream_bits(const stream *st, int64_t s, int64_t n, uint64_t *bits) {
  uint32_t w[4][MT_RANDOM_BLOCKS];
  int64_t b0 = s >> st->lane_bits, b1 = (s + n - 1) >> st->lane_bits;
  philox_blocks(st->key, st->offset + (uint64_t)b0, (int)(b1 - b0 + 1), w);
  if (st->words == 1) {   /* value v is word v % 4 of block v / 4: whole blocks interleave 4 rows */
    int64_t j = 0;
    for (; j < n && ((s + j) & 3); j++) bits[j] = (uint64_t)w[(s + j) & 3][((s + j) >> 2) - b0] << 32;
    const int64_t whole = (n - j) & ~(int64_t)3, b = ((s + j) >> 2) - b0;
    uint64_t *restrict out = bits + j;
    for (int64_t i = 0; i < whole / 4; i++) {
      out[4 * i] = (uint64_t)w[0][b + i] << 32;
      out[4 * i + 1] = (uint64_t)w[1][b + i] << 32;
      out[4 * i + 2] = (uint64_t)w[2][b + i] << 32;
      out[4 * i + 3] = (uint64_t)w[3][b + i] << 32;
    }
    for (j += whole; j < n; j++) bits[j] = (uint64_t)w[(s + j) & 3][((s + j) >> 2) - b0] << 32;
  } else {                /* value v is words 2 (v % 2), 2 (v % 2) + 1 of block v / 2 */
    int64_t j = 0;
    if (n > 0 && (s & 1)) { bits[0] = (uint64_t)w[3][(s >> 1) - b0] << 32 | w[2][(s >> 1) - b0]; j = 1; }
    const int64_t whole = (n - j) & ~(int64_t)1, b = ((s + j) >> 1) - b0;
    uint64_t *restrict out = bits + j;
    for (int64_t i = 0; i < whole / 2; i++) {
      out[2 * i] = (uint64_t)w[1][b + i] << 32 | w[0][b + i];
      out[2 * i + 1] = (uint64_t)w[3][b + i] << 32 | w[2][b + i];
    }
    if (j + whole < n) bits[n - 1] = (uint64_t)w[1][b + whole / 2] << 32 | w[0][b + whole / 2];
  }
}

/* ---- dtype facts the samplers need ---- */
/* bits of a uniform draw in this dtype: its significand width */
static int uniform_bits(int dtype) {
  switch (dtype) {
  case MT_FLOAT64: return 53;
  case MT_FLOAT16: return 11;
  case MT_BFLOAT16: return 8;
  default: return 24;
  }
}

/* The integers a dtype holds exactly: [min, max]. */
static void exact_bounds(int dtype, int64_t *lo, int64_t *hi) {
  switch (dtype) {
  case MT_INT8: *lo = INT8_MIN; *hi = INT8_MAX; return;
  case MT_UINT8: *lo = 0; *hi = UINT8_MAX; return;
  case MT_INT16: *lo = INT16_MIN; *hi = INT16_MAX; return;
  case MT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return;
  case MT_INT64: *lo = INT64_MIN; *hi = INT64_MAX; return;
  case MT_BOOL: *lo = 0; *hi = 1; return;
  default: *hi = (int64_t)1 << uniform_bits(dtype); *lo = -*hi; return;
  }
}

/* The largest value of a floating dtype below b, so that a + (b - a) * u
   never rounds up to b. Half and bfloat16 round as in PyTorch. */
static double largest_below(int dtype, double b) {
  if (dtype == MT_FLOAT64) return nextafter(b, -INFINITY);
  if (dtype == MT_FLOAT32) {
    float f = (float)b;
    return (double)(f < b ? f : nextafterf(f, -INFINITY));
  }
  return b;
}

/* out = src converted to a new contiguous float64 tensor (src may be a
   broadcast view): the samplers read parameters from it by row-major index. */
static int as_float64(mt_tensor *out, const mt_tensor *src) {
  if (mt_tensor_init(out, MT_FLOAT64, src->ndim, src->shape)) return -1;
  if (mt_copy(out, src)) { mt_tensor_release(out); return -1; }
  return 0;
}

static int need_float(const char *op, const mt_tensor *t) {
  if (!mt_dtype_is_float(t->dtype))
    return mt_fail("%s: expects a floating-point tensor, got %s", op, mt_dtypes[t->dtype].name);
  return 0;
}

/* ---- the fill kernels ---- */
typedef mt_dist_kind dist_kind;            /* mt_ops.h's, so that a device draws the same kinds */
#define D_UNIFORM MT_D_UNIFORM
#define D_NORMAL MT_D_NORMAL
#define D_LOG_NORMAL MT_D_LOG_NORMAL
#define D_BERNOULLI MT_D_BERNOULLI
#define D_EXPONENTIAL MT_D_EXPONENTIAL
#define D_GEOMETRIC MT_D_GEOMETRIC
#define D_CAUCHY MT_D_CAUCHY
#define D_INTEGER MT_D_INTEGER

typedef struct {
  dist_kind kind;
  stream st;
  double a, b;          /* uniform [a, b); normal mean, std; exponential rate a; ... */
  double hi;            /* values are clamped to hi (uniform's end, integer dtypes' max) */
  int shift;            /* uniform: 64 - bits of the dtype */
  double scale;         /* uniform: 2^-bits */
  int64_t from;         /* integer: from + [0, span) */
  uint64_t span;
  const double *p;      /* bernoulli: a probability per value, or NULL for a */
} dist;

/* Value i of the distributions with no kernel of their own. */
static inline double sample(const dist *d, uint64_t x) {
  switch (d->kind) {
  case D_EXPONENTIAL: return -log(unit53_open(x)) / d->a;
  case D_GEOMETRIC: { double v = ceil(log(unit53_open(x)) / log1p(-d->a)); return v > d->hi ? d->hi : v; }
  case D_CAUCHY: return d->a + d->b * tan(M_PI * (unit53_open(x) - 0.5));
  default: return 0;
  }
}

/* ---- Box-Muller in float, written to vectorize ----
   libm calls do not vectorize, so the single-precision path computes log,
   sqrt, sin and cos itself: Cephes' polynomials for logf, sinf and cosf
   (about 1 ulp), and sqrt as x * rsqrt(x) with three Newton steps. Pairs
   go PHILOX_LANES at a time through one fixed-length loop, so every value
   takes the same instructions whatever the thread split. */
static inline float float_of_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t bits_of_float(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* log(x) for a normal positive x */
static inline float poly_logf(float x) {
  uint32_t u = bits_of_float(x);
  int32_t e = (int32_t)(u >> 23) - 126;
  float m = float_of_bits((u & 0x7fffffu) | 0x3f000000u);     /* [0.5, 1) */
  int32_t below = m < 0.70710678f;                             /* to [sqrt(1/2), sqrt(2)) */
  e -= below;
  float f = (below ? m + m : m) - 1.0f, z = f * f;
  float y = ((((((((7.0376836292e-2f * f - 1.1514610310e-1f) * f + 1.1676998740e-1f) * f - 1.2420140846e-1f) * f
              + 1.4249322787e-1f) * f - 1.6668057665e-1f) * f + 2.0000714765e-1f) * f - 2.4999993993e-1f) * f
            + 3.3333331174e-1f) * f * z;
  float fe = (float)e;
  y += -2.12194440e-4f * fe - 0.5f * z;
  return f + y + 0.693359375f * fe;
}

/* sqrt(x) for x >= 0 (0 gives 0) */
static inline float poly_sqrtf(float x) {
  float y = float_of_bits(0x5f3759dfu - (bits_of_float(x) >> 1));
  y = y * (1.5f - 0.5f * x * y * y);
  y = y * (1.5f - 0.5f * x * y * y);
  y = y * (1.5f - 0.5f * x * y * y);
  return x * y;
}

/* n pairs (n a multiple of PHILOX_LANES): radius from k1 (31 bits, u1 in
   (0, 1]), angle 2 pi k2 / 2^24 (k2 24 bits) reduced to a quadrant q and
   r in [-pi/4, pi/4) in exact integer arithmetic. */
static MT_CLONES void box_muller_float(const int32_t *restrict k1s, const int32_t *restrict k2s, int n,
                             float *restrict z0, float *restrict z1) {
  for (int group = 0; group < n; group += PHILOX_LANES) {
    for (int p = group; p < group + PHILOX_LANES; p++) {
      int32_t k1 = k1s[p], k2 = k2s[p];
      float radius = poly_sqrtf(-2.0f * poly_logf(((float)k1 + 1.0f) * 0x1p-31f));
      int32_t q = (k2 + (1 << 21)) >> 22;
      float r = (float)(k2 - (q << 22)) * (float)(M_PI * 0x1p-23), z = r * r;
      float sin_r = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
      float cos_r = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z
                    - 0.5f * z + 1.0f;
      float sin_t = (q & 1) ? cos_r : sin_r, cos_t = (q & 1) ? sin_r : cos_r;
      z0[p] = radius * (((q + 1) & 2) ? -cos_t : cos_t);
      z1[p] = radius * ((q & 2) ? -sin_t : sin_t);
    }
  }
}

/* The m values (m even) of a normal draw from their bits, mean and std
   applied (and exp for log-normal): in float for the single-precision
   dtypes, in double with libm for float64. */
static MT_CLONES void normal_values(const dist *d, const uint64_t *bits, int64_t m, int single, double *z) {
  int64_t pairs = m / 2;
  if (single) {
    int32_t k1[MT_RANDOM_CHUNK / 2], k2[MT_RANDOM_CHUNK / 2];
    float z0[MT_RANDOM_CHUNK / 2], z1[MT_RANDOM_CHUNK / 2];
    int padded = (int)((pairs + PHILOX_LANES - 1) / PHILOX_LANES * PHILOX_LANES);
    for (int p = 0; p < padded; p++) {
      k1[p] = p < pairs ? (int32_t)(bits[2 * p] >> 33) : 0;
      k2[p] = p < pairs ? (int32_t)(bits[2 * p + 1] >> 40) : 0;
    }
    box_muller_float(k1, k2, padded, z0, z1);
    for (int64_t p = 0; p < pairs; p++) {
      z[2 * p] = d->a + d->b * (double)z0[p];
      z[2 * p + 1] = d->a + d->b * (double)z1[p];
    }
  } else {
    for (int64_t p = 0; p < pairs; p++) {
      double r = sqrt(-2.0 * log(unit53_open(bits[2 * p]))), theta = 2.0 * M_PI * unit53(bits[2 * p + 1]);
      z[2 * p] = d->a + d->b * r * cos(theta);
      z[2 * p + 1] = d->a + d->b * r * sin(theta);
    }
  }
  if (d->kind == D_LOG_NORMAL)
    for (int64_t j = 0; j < m; j++) z[j] = exp(z[j]);
}

typedef void (*fill_fn)(char *out, const dist *d, int64_t begin, int64_t end);

/* Values [begin, end) of a draw into a contiguous buffer of dtype E, a
   chunk at a time: random bits first, then one tight loop per kind. Passes
   start at even values so a normal pair (2k, 2k+1) is always made whole;
   the partner of an odd last value lies in the same, reserved, block. */
#define MT_FILL_KERNEL(E, T, N, TN, K)                                          \
  static MT_CLONES void fill_##E(char *out, const dist *d, int64_t begin, int64_t end) {  \
    T *o = (T *)out;                                                            \
    const int single = K == 2 && sizeof(MT_CT_##E) == sizeof(float);           \
    const double width = d->b - d->a;                                           \
    uint64_t bits[MT_RANDOM_CHUNK];                                             \
    double z[MT_RANDOM_CHUNK];                                                  \
    for (int64_t s = begin & ~(int64_t)1; s < end; s += MT_RANDOM_CHUNK) {      \
      int64_t n = end - s < MT_RANDOM_CHUNK ? end - s : MT_RANDOM_CHUNK;        \
      int64_t first = s < begin ? begin - s : 0;                                \
      T *os = o + s;                                                            \
      switch (d->kind) {                                                        \
      case D_UNIFORM:                                                           \
        stream_bits(&d->st, s, n, bits);                                        \
        for (int64_t j = first; j < n; j++) {                                   \
          double v = d->a + width * ((double)(bits[j] >> d->shift) * d->scale); \
          MT_STORE_##E(os + j, v < d->hi ? v : d->hi);                          \
        }                                                                       \
        break;                                                                  \
      case D_NORMAL: case D_LOG_NORMAL:                                         \
        stream_bits(&d->st, s, (n + 1) & ~(int64_t)1, bits);                    \
        normal_values(d, bits, (n + 1) & ~(int64_t)1, single, z);               \
        for (int64_t j = first; j < n; j++) MT_STORE_##E(os + j, z[j]);         \
        break;                                                                  \
      case D_BERNOULLI: {                                                       \
        /* unit53(x) < p exactly when x's top 53 bits < p * 2^53 (scaling by a  \
           power of two is exact): one compare a value, no branch */            \
        stream_bits(&d->st, s, n, bits);                                        \
        if (d->p) {                                                             \
          for (int64_t j = first; j < n; j++)                                   \
            MT_STORE_##E(os + j, unit53(bits[j]) < d->p[s + j]);                \
        } else {                                                                \
          const double t = d->a * 0x1p53;                                       \
          for (int64_t j = first; j < n; j++)                                   \
            MT_STORE_##E(os + j, (double)(bits[j] >> 11) < t);                  \
        }                                                                       \
        break;                                                                  \
      }                                                                         \
      case D_INTEGER:                                                           \
        stream_bits(&d->st, s, n, bits);                                        \
        for (int64_t j = first; j < n; j++)                                     \
          MT_STORE_##E(os + j, (int64_t)((uint64_t)d->from + below_span(bits[j], d->span))); \
        break;                                                                  \
      default:                                                                  \
        stream_bits(&d->st, s, n, bits);                                        \
        for (int64_t j = first; j < n; j++) MT_STORE_##E(os + j, sample(d, bits[j])); \
      }                                                                         \
    }                                                                           \
  }
MT_DTYPES(MT_FILL_KERNEL)

#define MT_FILL_ENTRY(E, T, N, TN, K) [MT_##E] = fill_##E,
static const fill_fn fills[MT_NDTYPES] = {MT_DTYPES(MT_FILL_ENTRY)};

typedef struct {
  fill_fn fn;
  char *out;
  const dist *d;
} fill_job;

static void fill_chunk(void *job, int64_t begin, int64_t end) {
  const fill_job *j = job;
  j->fn(j->out, j->d, begin, end);
}

static void run_fill(char *out, fill_fn fn, const dist *d, int64_t n) {
  fill_job job = {fn, out, d};
  mt_parallel_for(n, MT_RANDOM_GRAIN / 2, fill_chunk, &job);
}

/* Off the CPU: the device makes the values itself, from the same stream. */
static __attribute__((noinline)) int draw_off_cpu(mt_tensor *dst, const dist *d) {
  const mt_device_extra *k = mt_extra_for("random", dst, NULL, NULL);
  if (!k) return -1;
  if (!k->draw) return mt_fail("random: no kernel for this device yet (move the tensor with :cpu())");
  const mt_draw_args a = {d->kind, {d->st.key[0], d->st.key[1]}, d->st.offset, d->st.words, d->st.lane_bits,
                          d->a, d->b, d->hi, d->scale, d->shift, d->from, d->span, d->p};
  return k->draw(dst, &a);
}

/* Draws every value of t (row-major order) from g; a strided t is filled
   through a contiguous buffer so value i always lands on element i. */
static int draw(mt_tensor *t, mt_generator *g, dist *d) {
  int64_t n = mt_numel(t);
  d->st = open_stream(g, (uint64_t)n, d->kind == D_INTEGER || t->dtype == MT_FLOAT64 ? 2 : 1);
  if (n == 0) return 0;
  mt_tensor buf = {0};
  const mt_tensor *dst = t;
  if (!mt_is_contiguous(t)) {
    if (mt_tensor_init_like(&buf, t->dtype, t->ndim, t->shape, t)) return -1;
    dst = &buf;
  }
  if (mt_device_of(t) != MT_CPU) {
    if (draw_off_cpu((mt_tensor *)dst, d)) { mt_tensor_release(&buf); return -1; }
  } else {
    run_fill(mt_data(dst), fills[t->dtype], d, n);
  }
  int rc = 0;
  if (dst == &buf) {
    rc = mt_copy(t, &buf);
    mt_tensor_release(&buf);
  }
  t->storage->version++;
  return rc;
}

static dist new_dist(dist_kind kind, double a, double b) {
  dist d;
  memset(&d, 0, sizeof d);
  d.kind = kind;
  d.a = a;
  d.b = b;
  d.hi = INFINITY;
  return d;
}

/* ---- in-place samplers ---- */
int mt_uniform_(mt_tensor *t, mt_generator *g, double from, double to) {
  if (need_float("uniform_", t)) return -1;
  if (!(from <= to) || !isfinite(to - from))
    return mt_fail("uniform_: expects a finite range [from, to) with from <= to, got from=%g to=%g", from, to);
  dist d = new_dist(D_UNIFORM, from, to);
  int bits = uniform_bits(t->dtype);
  d.shift = 64 - bits;
  d.scale = ldexp(1.0, -bits);
  d.hi = from < to ? largest_below(t->dtype, to) : to;
  if (d.hi < from) d.hi = from;
  return draw(t, g, &d);
}

static int normal_like(mt_tensor *t, mt_generator *g, dist_kind kind, const char *op, double mean, double std) {
  if (need_float(op, t)) return -1;
  if (!(std >= 0)) return mt_fail("%s: expects std >= 0.0, got std=%g", op, std);
  dist d = new_dist(kind, mean, std);
  return draw(t, g, &d);
}

int mt_normal_(mt_tensor *t, mt_generator *g, double mean, double std) {
  return normal_like(t, g, D_NORMAL, "normal_", mean, std);
}

int mt_log_normal_(mt_tensor *t, mt_generator *g, double mean, double std) {
  if (!(std > 0)) return mt_fail("log_normal_: expects std > 0.0, got std=%g", std);
  return normal_like(t, g, D_LOG_NORMAL, "log_normal_", mean, std);
}

static int integers(mt_tensor *t, mt_generator *g, int64_t from, uint64_t span) {
  dist d = new_dist(D_INTEGER, 0, 0);
  d.from = from;
  d.span = span;
  return draw(t, g, &d);
}

int mt_random_(mt_tensor *t, mt_generator *g, int64_t from, int64_t to) {
  if (from >= to)
    return mt_fail("random_: expects 'from' to be less than 'to', got from=%lld >= to=%lld",
                   (long long)from, (long long)to);
  int64_t lo, hi;
  exact_bounds(t->dtype, &lo, &hi);
  if (from < lo || to - 1 > hi)
    return mt_fail("random_: range [%lld, %lld) does not fit %s (holds [%lld, %lld])", (long long)from,
                   (long long)to, mt_dtypes[t->dtype].name, (long long)lo, (long long)hi);
  return integers(t, g, from, (uint64_t)to - (uint64_t)from);
}

int mt_random_full_(mt_tensor *t, mt_generator *g) {
  int64_t lo, hi;
  exact_bounds(t->dtype, &lo, &hi);
  return integers(t, g, 0, (uint64_t)hi + 1);
}

/* The probabilities of p broadcast to t, as float64 in t's row-major order,
   checked to lie in [0, 1]. */
static int probabilities(mt_tensor *out, const mt_tensor *t, const mt_tensor *p) {
  mt_tensor view = {0};
  if (mt_expand(&view, p, t->ndim, t->shape)) return -1;
  int rc = as_float64(out, &view);
  mt_tensor_release(&view);
  if (rc) return -1;
  const double *v = (const double *)mt_data(out);
  for (int64_t i = 0, n = mt_numel(out); i < n; i++)
    if (!(v[i] >= 0 && v[i] <= 1)) return mt_fail("bernoulli: expects every probability in [0, 1], got %g", v[i]);
  return 0;
}

int mt_bernoulli_(mt_tensor *t, mt_generator *g, const mt_tensor *p, double p_value) {
  dist d = new_dist(D_BERNOULLI, p_value, 0);
  if (!p) {
    if (!(p_value >= 0 && p_value <= 1)) return mt_fail("bernoulli_: expects p in [0, 1], got p=%g", p_value);
    return draw(t, g, &d);
  }
  mt_tensor probs = {0}, on_device = {0};
  int rc = probabilities(&probs, t, p);           /* checked on the CPU; a device reads its own copy */
  if (rc == 0 && mt_device_of(t) != MT_CPU)
    rc = mt_tensor_init_like(&on_device, MT_FLOAT64, probs.ndim, probs.shape, t) || mt_copy(&on_device, &probs);
  if (rc == 0) {
    d.p = (const double *)mt_data(on_device.storage ? &on_device : &probs);
    rc = draw(t, g, &d);
  }
  mt_tensor_release(&probs);
  mt_tensor_release(&on_device);
  return rc;
}

int mt_exponential_(mt_tensor *t, mt_generator *g, double lambda) {
  if (need_float("exponential_", t)) return -1;
  if (!(lambda > 0)) return mt_fail("exponential_: expects lambda > 0.0, got lambda=%g", lambda);
  dist d = new_dist(D_EXPONENTIAL, lambda, 0);
  return draw(t, g, &d);
}

int mt_geometric_(mt_tensor *t, mt_generator *g, double p) {
  if (t->dtype == MT_BOOL) return mt_fail("geometric_: not supported for bool tensors");
  if (!(p > 0 && p < 1)) return mt_fail("geometric_: expects p in (0, 1), got p=%g", p);
  dist d = new_dist(D_GEOMETRIC, p, 0);
  if (!mt_dtype_is_float(t->dtype)) {
    int64_t lo, hi;
    exact_bounds(t->dtype, &lo, &hi);
    d.hi = t->dtype == MT_INT64 ? 0x1p63 - 1024 : (double)hi;   /* the largest double below 2^63 */
  }
  return draw(t, g, &d);
}

int mt_cauchy_(mt_tensor *t, mt_generator *g, double median, double sigma) {
  if (need_float("cauchy_", t)) return -1;
  if (!(sigma > 0)) return mt_fail("cauchy_: expects sigma > 0.0, got sigma=%g", sigma);
  dist d = new_dist(D_CAUCHY, median, sigma);
  return draw(t, g, &d);
}

/* ---- sampling ops with a new result ---- */
/* r = r op b in place, on r's device: a 0-dim CPU tensor beside a GPU r is
   read as the number it holds */
static int scale_in_place(mt_tensor *r, const mt_operand *b, mt_op op, int default_float) {
  mt_operand self = {r, 0, 0};
  if (!mt_any_off_cpu(r, b->t, NULL)) return mt_binary(r, &self, b, op, 1, 1, default_float);
  mt_operand num = *b;
  if (b->t && mt_device_of(b->t) == MT_CPU && b->t->ndim == 0) {
    num.t = NULL;
    num.value = mt_get_f64(b->t->dtype, mt_data(b->t));
    num.is_int = !mt_dtype_is_float(b->t->dtype);
  }
  const mt_device_extra *k = mt_extra_for(mt_op_names[MT_OP_normal], r, num.t, NULL);
  return k ? k->binary(r, &self, &num, op, 1, 1, default_float) : -1;
}

int mt_normal(mt_tensor *r, mt_generator *g, const mt_operand *mean, const mt_operand *std,
              int default_float) {
  if (!mean->t && !std->t) return mt_fail("normal: needs a tensor mean or std, or a size");
  mt_operand both[2] = {*mean, *std};
  int dtype = mt_result_type(both, 2, default_float);
  if (!mt_dtype_is_float(dtype))
    return mt_fail("normal: expects floating-point mean and std, got %s", mt_dtypes[dtype].name);
  if (std->t) {
    mt_tensor s = {0};
    if (as_float64(&s, std->t)) return -1;
    const double *v = (const double *)mt_data(&s);
    int64_t n = mt_numel(&s), bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) if (!(v[i] >= 0)) bad = i;
    double worst = bad >= 0 ? v[bad] : 0;
    mt_tensor_release(&s);
    if (bad >= 0) return mt_fail("normal: expects all elements of std >= 0.0, got %g", worst);
  } else if (!(std->value >= 0)) {
    return mt_fail("normal: expects std >= 0.0, got std=%g", std->value);
  }
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  if (mt_broadcast_shapes("normal", mean->t ? mean->t->ndim : 0, mean->t ? mean->t->shape : NULL,
                          std->t ? std->t->ndim : 0, std->t ? std->t->shape : NULL, &ndim, shape))
    return -1;
  /* on the device of a tensor operand off the CPU, from g (that device's generator) */
  const mt_tensor *on = mean->t && mt_device_of(mean->t) != MT_CPU ? mean->t
                        : std->t && mt_device_of(std->t) != MT_CPU ? std->t : NULL;
  if ((on ? mt_tensor_init_like(r, dtype, ndim, shape, on) : mt_tensor_init(r, dtype, ndim, shape)) ||
      mt_normal_(r, g, 0, 1))
    return -1;
  return scale_in_place(r, std, MT_OP_mul, default_float) || scale_in_place(r, mean, MT_OP_add, default_float) ? -1 : 0;
}

int mt_randperm(mt_tensor *r, mt_generator *g, int64_t n, int dtype) {
  if (n < 0) return mt_fail("randperm: n must be non-negative, got %lld", (long long)n);
  int64_t lo, hi;
  exact_bounds(dtype, &lo, &hi);
  if (n > hi) return mt_fail("randperm: n=%lld is too large for %s (holds integers up to %lld exactly)",
                             (long long)n, mt_dtypes[dtype].name, (long long)hi);
  mt_tensor perm = {0};
  if (mt_tensor_init(&perm, MT_INT64, 1, &n)) return -1;
  int64_t *p = (int64_t *)mt_data(&perm);
  for (int64_t i = 0; i < n; i++) p[i] = i + 1;
  /* Fisher-Yates from the top: position i swaps with one of [0, i], drawn
     from value i of a 64-bit stream */
  stream st = open_stream(g, (uint64_t)n, 2);
  uint64_t bits[MT_RANDOM_CHUNK];
  for (int64_t hi_end = n; hi_end > 1; hi_end -= MT_RANDOM_CHUNK) {
    int64_t lo = hi_end > MT_RANDOM_CHUNK ? hi_end - MT_RANDOM_CHUNK : 0;
    stream_bits(&st, lo, hi_end - lo, bits);
    for (int64_t i = hi_end - 1; i >= lo && i > 0; i--) {
      int64_t j = (int64_t)below_span(bits[i - lo], (uint64_t)i + 1);
      int64_t tmp = p[i]; p[i] = p[j]; p[j] = tmp;
    }
  }
  int rc = 0;
  if (dtype == MT_INT64) mt_tensor_move(r, &perm);
  else rc = mt_to_dtype(r, &perm, dtype);
  mt_tensor_release(&perm);
  return rc;
}

/* ---- multinomial ---- */
typedef struct { double key; int64_t index; } keyed;

static int by_key_descending(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* n draws with replacement from one row, values first.. of st: p becomes
   its running sum and each draw is the first category whose sum passes
   u * total. */
static void sample_with_replacement(double *p, int64_t k, int64_t n, const stream *st, int64_t first,
                                    int64_t *out) {
  int64_t last = 0;
  for (int64_t j = 0; j < k; j++) {
    if (p[j] > 0) last = j;
    if (j) p[j] += p[j - 1];
  }
  double total = p[k - 1];
  uint64_t bits[MT_RANDOM_CHUNK];
  for (int64_t s = 0; s < n; s++) {
    if (s % MT_RANDOM_CHUNK == 0)
      stream_bits(st, first + s, n - s < MT_RANDOM_CHUNK ? n - s : MT_RANDOM_CHUNK, bits);
    double x = unit53(bits[s % MT_RANDOM_CHUNK]) * total;
    int64_t lo = 0, hi = k - 1;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (p[mid] > x) hi = mid; else lo = mid + 1;
    }
    out[s] = (p[lo] > x ? lo : last) + 1;
  }
}

/* Up to this many draws without replacement keep a sorted top-n list (one
   comparison for most categories); more sort every key. */
#define MT_MULTINOMIAL_TOP_LIST 64

/* Inserts (key, index) into top, sorted by key descending, holding at most
   n entries of which *count are used; equal keys keep the earlier index
   first. */
static void top_insert(keyed *top, int64_t n, int64_t *count, double key, int64_t index) {
  if (*count == n && !(key > top[n - 1].key)) return;
  int64_t pos = *count < n ? (*count)++ : n - 1;
  while (pos > 0 && top[pos - 1].key < key) { top[pos] = top[pos - 1]; pos--; }
  top[pos].key = key;
  top[pos].index = index;
}

/* n draws without replacement (Efraimidis-Spirakis, as PyTorch: the n
   largest p_j / E_j with E_j exponential); zero-probability categories come
   last, lowest index first. */
static int sample_without_replacement(const double *p, int64_t k, int64_t n, const stream *st,
                                      int64_t first, int64_t *out) {
  int use_list = n <= MT_MULTINOMIAL_TOP_LIST;
  keyed *keys = malloc(sizeof(keyed) * (size_t)(use_list ? n : k));
  if (!keys) return -1;
  uint64_t bits[MT_RANDOM_CHUNK];
  int64_t count = 0;
  for (int64_t j = 0; j < k; j++) {
    if (j % MT_RANDOM_CHUNK == 0)
      stream_bits(st, first + j, k - j < MT_RANDOM_CHUNK ? k - j : MT_RANDOM_CHUNK, bits);
    double key = p[j] / -log(unit53_open(bits[j % MT_RANDOM_CHUNK]));
    if (use_list) {
      top_insert(keys, n, &count, key, j);
    } else {
      keys[j].key = key;
      keys[j].index = j;
    }
  }
  if (!use_list) qsort(keys, (size_t)k, sizeof(keyed), by_key_descending);
  for (int64_t s = 0; s < n; s++) out[s] = keys[s].index + 1;
  free(keys);
  return 0;
}

typedef struct {
  double *p;             /* rows x k probabilities (running sums after) */
  int64_t *out;          /* rows x n draws */
  const stream *st;
  int64_t k, n, per_row;
  int replacement;
  _Atomic int failed;
} multinomial_job;

static void multinomial_rows(void *job, int64_t begin, int64_t end) {
  multinomial_job *j = job;
  for (int64_t row = begin; row < end; row++) {
    if (j->replacement)
      sample_with_replacement(j->p + row * j->k, j->k, j->n, j->st, row * j->per_row, j->out + row * j->n);
    else if (sample_without_replacement(j->p + row * j->k, j->k, j->n, j->st, row * j->per_row,
                                        j->out + row * j->n))
      atomic_store(&j->failed, 1);
  }
}

int mt_multinomial(mt_tensor *r, mt_generator *g, const mt_tensor *probs, int64_t n, int replacement) {
  char b[128];
  if (probs->ndim < 1 || probs->ndim > 2)
    return mt_fail("multinomial: prob_dist must be 1 or 2 dim, got %s", mt_shape_str(probs, b, sizeof b));
  if (!mt_dtype_is_float(probs->dtype))
    return mt_fail("multinomial: only supports floating-point dtypes for input, got %s", mt_dtypes[probs->dtype].name);
  if (n <= 0) return mt_fail("multinomial: cannot sample n_sample <= 0 samples (got %lld)", (long long)n);
  int64_t rows = probs->ndim == 2 ? probs->shape[0] : 1, k = probs->shape[probs->ndim - 1];
  if (!replacement && n > k)
    return mt_fail("multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                   "(n_sample=%lld, %lld categories)", (long long)n, (long long)k);
  mt_tensor p = {0};
  if (as_float64(&p, probs)) return -1;
  double *pd = (double *)mt_data(&p);
  for (int64_t row = 0; row < rows; row++) {
    double sum = 0;
    for (int64_t j = 0; j < k; j++) {
      double v = pd[row * k + j];
      if (!(v >= 0) || isinf(v)) {
        mt_tensor_release(&p);
        return mt_fail("multinomial: probability tensor contains either inf, nan or element < 0");
      }
      sum += v;
    }
    if (!(sum > 0)) {
      mt_tensor_release(&p);
      return mt_fail("multinomial: invalid multinomial distribution (sum of probabilities <= 0) in row %lld",
                     (long long)row + 1);
    }
  }
  /* drawn on the host from g (the device's generator for a GPU tensor: the
     numbers its seed gives on the CPU), then moved to probs' device */
  int64_t shape[2] = {rows, n};
  mt_tensor host = {0};
  mt_tensor *drawn = mt_device_of(probs) == MT_CPU ? r : &host;
  if (mt_tensor_init(drawn, MT_INT64, probs->ndim, probs->ndim == 2 ? shape : &n)) { mt_tensor_release(&p); return -1; }
  int64_t *out = (int64_t *)mt_data(drawn);
  int64_t per_row = replacement ? n : k;
  stream st = open_stream(g, (uint64_t)(rows * per_row), 2);
  multinomial_job job = {pd, out, &st, k, n, per_row, replacement, 0};
  mt_parallel_for(rows, mt_parallel_items(MT_RANDOM_GRAIN / 2, per_row, 1), multinomial_rows, &job);
  mt_tensor_release(&p);
  int rc = atomic_load(&job.failed) ? mt_fail("multinomial: out of memory for %lld categories", (long long)k) : 0;
  if (!rc && drawn == &host && (mt_tensor_init_like(r, MT_INT64, host.ndim, host.shape, probs) || mt_copy(r, &host)))
    rc = -1;
  mt_tensor_release(&host);
  return rc;
}

int mt_bernoulli(mt_tensor *r, mt_generator *g, const mt_tensor *x, double p, int has_p) {
  if (!has_p && !mt_dtype_is_float(x->dtype))
    return mt_fail("bernoulli: expects a floating-point tensor of probabilities, got %s", mt_dtypes[x->dtype].name);
  if (mt_tensor_init_like(r, x->dtype, x->ndim, x->shape, x)) return -1;
  return mt_bernoulli_(r, g, has_p ? NULL : x, p);
}

/* the registry's entry point (MT_RANDOM_OPS), expanded from the kernel column */
int mt_random_op(mt_tensor *r, mt_op op, const mt_random_args *a) {
  switch (op) {
#define RANDOM(call, signature) call
    MT_RANDOM_OPS(MT_KERNEL_CASE, _)
#undef RANDOM
  default: break;
  }
  return mt_not_in_family("mt_random_op", op, "a random op");
}
