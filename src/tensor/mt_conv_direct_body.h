/* mt_conv_direct_body.h: the direct float32 convolution, included once by each of
   mt_conv_isa_{base,v3,v4}.c (mt_conv_direct.h), each compiled for its own level, with
   MT_CONV_DIRECT_TABLE naming the table of entry points it defines. Everything else here
   is static to its unit. The levels above baseline (MT_CONV_DIRECT_X86_ONLY) exist in
   x86-64 builds alone. */
#ifndef MT_CONV_DIRECT_TABLE
#error "mt_conv_direct_body.h is included by mt_conv_isa_*.c, which name MT_CONV_DIRECT_TABLE"
#endif
#if defined(MT_CONV_DIRECT_X86_ONLY) && !defined(__x86_64__)
typedef int mt_conv_direct_unused;   /* a unit with nothing to compile here */
#else
#include <string.h>
#include "mt_conv_direct.h"
#include "mt_ops.h"
#include "mt_alloc.h"
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

/* ---- the direct float32 kernel ----
   Phase planes: for channel c and phase (rh, rw) of the stride, the plane
   of image m holds [i][j] = x[m][c][i * sh + rh - ph][j * sw + rw - pw]
   (zero outside x) in rows of wq floats, and the planes of a chunk of
   images are stacked one under the other, so the chunk is one tall plane.
   The tap (a, b) of output (i, j) sits in plane ((a * dh) % sh,
   (b * dw) % sw) at (i + a * dh / sh, j + b * dw / sw): a fixed offset
   off[k] from q = i * wq + j. With q running down the stack,
   out[o][q] = sum_k w[o][k] * planes[off[k] + q] -- a matrix product read
   straight from the planes. The positions past ow in each row and the rows
   between two images are computed too, and dropped. */

#if defined(__AVX512F__)
#define VL 16                  /* floats per vector register */
#define FWD_MR 8               /* forward tile: 8 output channels x 3 vectors of positions: */
#define FWD_NV 3               /* 24 accumulators of the 32 registers */
#define WG_MO 4                /* weight gradient tile: 4 output channels x 6 taps */
#define WG_MK 6
#elif defined(__AVX__)
#define VL 8
#define FWD_MR 4
#define FWD_NV 3
#define WG_MO 2
#define WG_MK 5
#else
#define VL 4
#define FWD_MR 4
#define FWD_NV 2
#define WG_MO 2
#define WG_MK 4
#endif
#define FWD_NR (FWD_NV * VL)   /* positions per forward tile */

/* The planes of one chunk should stay in the L2 cache while every tile of
   output channels sweeps them. */
#define PLANES_TARGET_BYTES ((int64_t)512 << 10)

/* a vector of floats that may sit at any float address */
typedef float vfloat __attribute__((vector_size(VL * sizeof(float)), aligned(sizeof(float))));

typedef struct {
  int64_t wq, rows;        /* one image's phase plane: rows of wq floats */
  int64_t img;             /* rows * wq: from one image to the next in a stack */
  int64_t nimg;            /* images in the stack */
  int64_t plane, chan;     /* floats per stacked phase plane, per channel */
  int64_t qt;              /* grid positions computed: to the last image's last output row, whole vectors */
  int64_t size;            /* floats of the planes, with slack for the reads past the end */
} plane_geom;

static void plane_geom_of(plane_geom *p, const mt_conv_geom *g, int64_t nimg) {
  p->wq = g->ow + (g->kw - 1) * g->dw / g->sw;
  p->rows = g->oh + (g->kh - 1) * g->dh / g->sh;
  p->img = p->rows * p->wq;
  p->nimg = nimg;
  p->plane = p->img * nimg;
  p->chan = p->plane * g->sh * g->sw;
  p->qt = ((nimg - 1) * p->img + g->oh * p->wq + VL - 1) / VL * VL;
  /* the last tiles read up to a row and a tile beyond the planes */
  p->size = g->c * p->chan + p->wq + 2 * FWD_NR;
}

/* Images per chunk, of n over nt threads: planes (image_floats each) of
   about target bytes, and a chunk for every thread. */
static int64_t images_per_chunk(int64_t n, int nt, int64_t image_floats, int64_t target) {
  int64_t b = target / ((int64_t)sizeof(float) * image_floats), per_thread = (n + nt - 1) / nt;
  if (b > per_thread) b = per_thread;
  return b < 1 ? 1 : b;
}

/* images per chunk for the phase planes */
static int64_t chunk_images(const mt_conv_geom *g, int nt) {
  plane_geom p;
  plane_geom_of(&p, g, 1);
  return images_per_chunk(g->n, nt, g->c * p.chan, PLANES_TARGET_BYTES);
}

/* row[j] = src[j] for j0 <= j < j1, 0 for the other j < n (src is read
   only there). Rows are short (a 14x14 image's are 14 floats): with AVX-512
   a masked load and store per 16 floats rather than three library calls. */
static inline void window_row(float *row, const float *src, int64_t n, int64_t j0, int64_t j1) {
#if defined(__AVX512F__)
  for (int64_t j = 0; j < n; j += 16) {
    const int64_t lanes = n - j < 16 ? n - j : 16, lo = j0 - j > 0 ? j0 - j : 0, hi = j1 - j < lanes ? j1 - j : lanes;
    const __mmask16 in = hi > lo ? (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u)) : 0;
    const __m512 v = in ? _mm512_maskz_loadu_ps(in, src + j) : _mm512_setzero_ps();
    _mm512_mask_storeu_ps(row + j, (__mmask16)((1u << lanes) - 1u), v);
  }
#else
  for (int64_t j = 0; j < j0; j++) row[j] = 0.0f;
  for (int64_t j = j0; j < j1; j++) row[j] = src[j];
  for (int64_t j = j1 > j0 ? j1 : j0; j < n; j++) row[j] = 0.0f;
#endif
}

/* The planes of the images x (nimg, c, h, w); ph, pw may be negative (a crop). */
static void build_planes(float *dst, const float *x, const mt_conv_geom *g, const plane_geom *p) {
  for (int64_t m = 0; m < p->nimg; m++)
    for (int64_t c = 0; c < g->c; c++)
      for (int64_t rh = 0; rh < g->sh; rh++)
        for (int64_t rw = 0; rw < g->sw; rw++) {
          float *row = dst + c * p->chan + (rh * g->sw + rw) * p->plane + m * p->img;
          const int64_t cstart = rw - g->pw;
          int64_t j0, j1;
          valid_cols(p->wq, g->sw, cstart, g->w, &j0, &j1);
          for (int64_t i = 0; i < p->rows; i++, row += p->wq) {
            const int64_t r = i * g->sh + rh - g->ph;
            if (r < 0 || r >= g->h) { memset(row, 0, sizeof(float) * (size_t)p->wq); continue; }
            const float *src = x + ((m * g->c + c) * g->h + r) * g->w;
            if (g->sw == 1) {                    /* short rows: masked copies, not three calls */
              window_row(row, src + cstart, p->wq, j0, j1);
              continue;
            }
            memset(row, 0, sizeof(float) * (size_t)j0);
            for (int64_t j = j0; j < j1; j++) row[j] = src[cstart + j * g->sw];
            memset(row + j1, 0, sizeof(float) * (size_t)(p->wq - j1));
          }
        }
  memset(dst + g->c * p->chan, 0, sizeof(float) * (size_t)(p->size - g->c * p->chan));
}

/* off[k] for the taps k = (c, a, b) of one group, from its first channel */
static void tap_offsets(int64_t *off, const mt_conv_geom *g, const plane_geom *p) {
  const int64_t cg = g->c / g->groups;
  for (int64_t c = 0; c < cg; c++)
    for (int64_t a = 0; a < g->kh; a++)
      for (int64_t b = 0; b < g->kw; b++) {
        const int64_t va = a * g->dh, vb = b * g->dw;
        *off++ = c * p->chan + ((va % g->sh) * g->sw + vb % g->sw) * p->plane + va / g->sh * p->wq + vb / g->sw;
      }
}

/* out[i][q .. q + NV * VL) (rows ldo apart) = bias[i] + sum_k wp[k][i] * src[off[k] + q ...]
   for MR output channels (bias NULL: none; add: out's values in place of the
   bias); wp holds the weights packed [k][MR]. */
#define FWD_TILE(MR, NV)                                                                              \
  static void fwd_tile_##MR##_##NV(int64_t nk, const int64_t *off, const float *src, const float *wp, \
                                   const float *bias, int add, float *out, int64_t ldo) {             \
    vfloat acc[MR][NV];                                                                               \
    for (int i = 0; i < MR; i++)                                                                      \
      for (int j = 0; j < NV; j++)                                                                    \
        acc[i][j] = add ? *(const vfloat *)(out + i * ldo + j * VL) : (vfloat){0} + (bias ? bias[i] : 0.0f); \
    for (int64_t k = 0; k < nk; k++) {                                                                \
      const float *s = src + off[k], *wk = wp + k * MR;                                               \
      vfloat xv[NV];                                                                                  \
      for (int j = 0; j < NV; j++) xv[j] = *(const vfloat *)(s + j * VL);                             \
      for (int i = 0; i < MR; i++) {                                                                  \
        const float wi = wk[i];                                                                       \
        for (int j = 0; j < NV; j++) acc[i][j] += wi * xv[j];                                         \
      }                                                                                               \
    }                                                                                                 \
    for (int i = 0; i < MR; i++)                                                                      \
      for (int j = 0; j < NV; j++) *(vfloat *)(out + i * ldo + j * VL) = acc[i][j];                   \
  }
typedef void (*fwd_tile_fn)(int64_t, const int64_t *, const float *, const float *, const float *, int, float *,
                            int64_t);

#if FWD_NV == 3
#define FWD_TILES(MR) FWD_TILE(MR, 1) FWD_TILE(MR, 2) FWD_TILE(MR, 3)
#define FWD_TILE_ROW(MR) {fwd_tile_##MR##_1, fwd_tile_##MR##_2, fwd_tile_##MR##_3}
#else
#define FWD_TILES(MR) FWD_TILE(MR, 1) FWD_TILE(MR, 2)
#define FWD_TILE_ROW(MR) {fwd_tile_##MR##_1, fwd_tile_##MR##_2}
#endif
#if FWD_MR == 8
FWD_TILES(8)
FWD_TILES(1)
static const fwd_tile_fn fwd_tiles[2][FWD_NV] = {FWD_TILE_ROW(8), FWD_TILE_ROW(1)};
#else
FWD_TILES(4)
FWD_TILES(1)
static const fwd_tile_fn fwd_tiles[2][FWD_NV] = {FWD_TILE_ROW(4), FWD_TILE_ROW(1)};
#endif

/* How the images are cut into chunks, and each thread's scratch. */
typedef struct {
  int64_t chunk;           /* images per chunk (the last may hold fewer) */
  int nt;                  /* threads */
  int64_t floats;          /* scratch floats per thread: planes, then grid_rows rows of the grid */
  int64_t taps;            /* tap offsets per thread */
} chunk_plan;

static void chunk_plan_of(chunk_plan *c, const mt_conv_geom *g, int64_t grid_rows, int64_t taps) {
  c->nt = image_threads(g);
  c->chunk = chunk_images(g, c->nt);
  plane_geom p;
  plane_geom_of(&p, g, c->chunk);
  c->floats = p.size + grid_rows * p.qt;
  c->taps = taps;
}

/* body(job, share, first image, image count, thread's scratch, thread's
   tap offsets) for every chunk of the n images, on the plan's threads */
typedef void (*chunk_fn)(const void *job, int t, int64_t first, int64_t count, float *scratch, int64_t *off);

typedef struct {
  const chunk_plan *c;
  chunk_fn body;
  const void *job;
  int64_t n, nchunks;
  float *scratch;
  int64_t *off;
} share_job;

/* Shares [begin, end): share t is a contiguous block of the chunks, with
   share t's scratch (what a static schedule gives thread t). */
static void run_shares(void *ctx, int64_t begin, int64_t end) {
  const share_job *s = ctx;
  const chunk_plan *c = s->c;
  for (int64_t t = begin; t < end; t++)
    for (int64_t i = s->nchunks * t / c->nt; i < s->nchunks * (t + 1) / c->nt; i++) {
      const int64_t first = i * c->chunk, count = s->n - first < c->chunk ? s->n - first : c->chunk;
      s->body(s->job, (int)t, first, count, s->scratch + t * c->floats, s->off + t * c->taps);
    }
}

static int run_chunks(const char *op, int64_t n, const chunk_plan *c, chunk_fn body, const void *job) {
  const size_t fbytes = sizeof(float) * (size_t)c->floats * (size_t)c->nt;
  const size_t obytes = sizeof(int64_t) * (size_t)c->taps * (size_t)c->nt;
  float *scratch = mt_alloc(fbytes);
  int64_t *off = mt_alloc(obytes);
  if (!scratch || !off) {
    mt_free(scratch, fbytes);
    mt_free(off, obytes);
    return mt_fail("%s: out of memory for %zu bytes of scratch", op, fbytes);
  }
  share_job s = {c, body, job, n, (n + c->chunk - 1) / c->chunk, scratch, off};
  mt_parallel_for(c->nt, 1, run_shares, &s);
  mt_free(scratch, fbytes);
  mt_free(off, obytes);
  return 0;
}

/* The tile height for og output channels per group: the wide tile unless
   most of it would be padding. */
static int64_t fwd_mr(int64_t og) { return og * 2 >= FWD_MR ? FWD_MR : 1; }

/* w (o, cg * kh * kw) packed per group and block of mr channels as
   [group][block][k][mr], channels past og zero. */
static void pack_weight(float *wp, const float *w, const mt_conv_geom *g, int64_t mr) {
  const int64_t og = g->o / g->groups, kg = g->c / g->groups * g->kh * g->kw;
  const int64_t ogp = (og + mr - 1) / mr * mr;
  for (int64_t gi = 0; gi < g->groups; gi++)
    for (int64_t ob = 0; ob < ogp; ob += mr) {
      float *dst = wp + (gi * ogp + ob) * kg;
      for (int64_t k = 0; k < kg; k++)
        for (int64_t i = 0; i < mr; i++)
          dst[k * mr + i] = ob + i < og ? w[(gi * og + ob + i) * kg + k] : 0.0f;
    }
}

typedef struct {
  const mt_conv_geom *g;
  float *y;
  const float *x, *wp, *bias;
  const float *biasp;      /* the bias per group padded to ogp (NULL: none), for the column planes */
  int64_t mr, ogp, kg;     /* tile height, channels per group padded to it, taps per group */
} fwd_job;

/* y of the images first .. first + count - 1 */
static void fwd_chunk(const void *job, int t, int64_t first, int64_t count, float *scratch, int64_t *off) {
  const fwd_job *f = job;
  const mt_conv_geom *g = f->g;
  const int64_t og = g->o / g->groups, cg = g->c / g->groups, mr = f->mr;
  const fwd_tile_fn *tiles = fwd_tiles[mr == FWD_MR ? 0 : 1];
  plane_geom p;
  (void)t;
  plane_geom_of(&p, g, count);
  float *planes = scratch, *grid = scratch + p.size;
  tap_offsets(off, g, &p);
  build_planes(planes, f->x + first * g->c * g->h * g->w, g, &p);
  for (int64_t gi = 0; gi < g->groups; gi++)
    for (int64_t ob = 0; ob < f->ogp; ob += mr) {
      const float *src = planes + gi * cg * p.chan, *w = f->wp + (gi * f->ogp + ob) * f->kg;
      float *out = grid + (gi * f->ogp + ob) * p.qt;
      for (int64_t q = 0; q < p.qt; q += FWD_NR) {
        const int64_t nv = (p.qt - q) / VL;
        tiles[(nv < FWD_NV ? nv : FWD_NV) - 1](f->kg, off, src + q, w, NULL, 0, out + q, p.qt);
      }
    }
  for (int64_t m = 0; m < count; m++)
    for (int64_t gi = 0; gi < g->groups; gi++)
      for (int64_t o = 0; o < og; o++) {
        const float *row = grid + (gi * f->ogp + o) * p.qt + m * p.img;
        float *dst = f->y + ((first + m) * g->o + gi * og + o) * g->oh * g->ow;
        const float bo = f->bias ? f->bias[gi * og + o] : 0.0f;
        for (int64_t i = 0; i < g->oh; i++, row += p.wq, dst += g->ow)
          for (int64_t j = 0; j < g->ow; j++) dst[j] = row[j] + bo;
      }
}

/* ---- column planes: the stride-1 kernel ----
   For stride 1 the phase planes' padding columns cost most on small images
   (14x14 under a 3x3 kernel computes 16x16 positions). Column planes drop
   them: for channel c and kernel column b, the plane holds
   [r][j] = x[c][r - ph][j + b * dw - pw] (zero outside x) in rows of ow
   floats, rows oh + dh * (kh - 1) of them, then VL zeros. The tap (a, b)
   of output q = i * ow + j is then plane (c, b) at q + a * dh * ow, so the
   positions run over the output's own layout: tiles write y in place and
   the weight gradient reads gy as it is. Only the last partial tile of each
   image is wasted. The planes take kw times the room of the input, so
   this path is for images whose planes fit the L2 cache. */
#define COL_PLANES_MAX_BYTES ((int64_t)1 << 20)

typedef struct {
  int64_t len;             /* oh * ow: the positions of one image */
  int64_t rows;            /* oh + dh * (kh - 1) */
  int64_t cp;              /* floats per (channel, kernel column) plane: rows * ow (to whole 16s), then VL zeros */
  int64_t img;             /* floats per image: c * kw planes, then one more (the weight gradient's ones) */
} col_geom;

static void col_geom_of(col_geom *p, const mt_conv_geom *g) {
  p->len = g->oh * g->ow;
  p->rows = g->oh + g->dh * (g->kh - 1);
  p->cp = (p->rows * g->ow + 15) / 16 * 16 + VL;   /* whole 16-float blocks: the AVX-512 build writes them */
  p->img = (g->c * g->kw + 1) * p->cp;
}

static int use_col_planes(const mt_conv_geom *g) {
  if (g->sh != 1 || g->sw != 1) return 0;
  col_geom p;
  col_geom_of(&p, g);
  return p.img * (int64_t)sizeof(float) <= COL_PLANES_MAX_BYTES;
}



#if defined(__AVX512F__)
/* The column planes of rows as wide as the image's (ow == w), with AVX-512:
   each plane is the channel read at a shift, through a mask per 16 floats
   that drops the rows and columns outside the image -- one masked load and
   store per 16 floats, the masks the same for every channel and image.
   Returns 0, building nothing, where it does not apply. */
static int build_col_planes_masked(float *dst, const float *x, const mt_conv_geom *g, const col_geom *p,
                                   int64_t nimg) {
  if (g->ow != g->w) return 0;
  const int64_t nvp = (p->rows * g->ow + 15) / 16, i0 = g->ph < 0 ? 0 : g->ph;
  const int64_t i1 = g->h + g->ph < p->rows ? (g->h + g->ph > i0 ? g->h + g->ph : i0) : p->rows;
  const size_t tab_bytes = sizeof(__mmask16) * (size_t)(nvp * g->kw);
  __mmask16 *tab = mt_alloc(tab_bytes);
  if (!tab) return 0;
  for (int64_t b = 0; b < g->kw; b++)
    for (int64_t v = 0; v < nvp; v++) {
      unsigned bits = 0;
      for (int l = 0; l < 16; l++) {
        const int64_t at = v * 16 + l, j = at % g->ow + b * g->dw - g->pw;
        if (at >= i0 * g->ow && at < i1 * g->ow && j >= 0 && j < g->w) bits |= 1u << l;
      }
      tab[b * nvp + v] = (__mmask16)bits;
    }
  for (int64_t m = 0; m < nimg; m++)
    for (int64_t c = 0; c < g->c; c++) {
      const float *xc = x + (m * g->c + c) * g->h * g->w - g->ph * g->w;
      for (int64_t b = 0; b < g->kw; b++) {
        float *row = dst + m * p->img + (c * g->kw + b) * p->cp;
        const float *src = xc + b * g->dw - g->pw;
        const __mmask16 *mk = tab + b * nvp;
        for (int64_t v = 0; v < nvp; v++)          /* src + 16 v is only read where mk[v] says */
          _mm512_storeu_ps(row + 16 * v, _mm512_maskz_loadu_ps(mk[v], src + 16 * v));
        _mm512_storeu_ps(row + 16 * nvp, _mm512_setzero_ps());   /* the VL zeros after the rows */
      }
    }
  mt_free(tab, tab_bytes);
  return 1;
}
#endif

/* the column planes of the images x (nimg, c, h, w), each followed, when
   ones is set, by its ones plane (1 for the len positions, 0 after) */
static void build_col_planes(float *dst, const float *x, const mt_conv_geom *g, const col_geom *p, int64_t nimg,
                             int ones) {
#if defined(__AVX512F__)
  if (!build_col_planes_masked(dst, x, g, p, nimg))
#endif
    for (int64_t m = 0; m < nimg; m++)
      for (int64_t c = 0; c < g->c; c++)
        for (int64_t b = 0; b < g->kw; b++) {
          float *row = dst + m * p->img + (c * g->kw + b) * p->cp;
          const int64_t cstart = b * g->dw - g->pw;
          int64_t j0, j1;
          valid_cols(g->ow, 1, cstart, g->w, &j0, &j1);
          const float *xc = x + (m * g->c + c) * g->h * g->w;
          for (int64_t i = 0; i < p->rows; i++, row += g->ow) {
            const int64_t r = i - g->ph;
            if (r < 0 || r >= g->h) window_row(row, NULL, g->ow, 0, 0);
            else window_row(row, xc + r * g->w + cstart, g->ow, j0, j1);
          }
          memset(row, 0, sizeof(float) * (size_t)(p->cp - p->rows * g->ow));   /* the zeros after the rows */
        }
  for (int64_t m = 0; ones && m < nimg; m++) {
    float *row = dst + m * p->img + g->c * g->kw * p->cp;
    for (int64_t q = 0; q < p->len; q++) row[q] = 1.0f;
    memset(row + p->len, 0, sizeof(float) * (size_t)(p->cp - p->len));
  }
}

/* off[k] for the taps k = (c, a, b) of one group, from its first channel's planes */
static void col_tap_offsets(int64_t *off, const mt_conv_geom *g, const col_geom *p) {
  const int64_t cg = g->c / g->groups;
  for (int64_t c = 0; c < cg; c++)
    for (int64_t a = 0; a < g->kh; a++)
      for (int64_t b = 0; b < g->kw; b++) *off++ = (c * g->kw + b) * p->cp + a * g->dh * g->ow;
}

/* Images whose last len % VL positions share one vector in the forward
   tiles (1: each image computes its own partial vector) */
static int64_t col_tail_pack(int64_t len) {
  const int64_t tail = len % VL;
  return tail && 2 * tail <= VL ? VL / tail : 1;
}

/* Channels per block of taps: for one tile of positions, the planes it
   reads for a block should stay in the L1 cache while every block of output
   channels runs over them. */
#define COL_WINDOW_BYTES ((int64_t)24 << 10)
static int64_t col_channel_block(const mt_conv_geom *g) {
  const int64_t per_channel = (int64_t)sizeof(float) * g->kw * (FWD_NR + g->dh * (g->kh - 1) * g->ow + VL);
  const int64_t b = COL_WINDOW_BYTES / per_channel;
  return b < 1 ? 1 : b;
}

/* y of the images first .. first + count - 1. For each tile of positions,
   the taps go in channel blocks and every block of output channels runs
   over a block before the next; tiles write y in place (adding from the
   second block on) but for each image's last partial tile and partial
   channel block, which sum in tmp and are copied. */
static void col_fwd_chunk(const void *job, int t, int64_t first, int64_t count, float *scratch, int64_t *off) {
  const fwd_job *f = job;
  const mt_conv_geom *g = f->g;
  const int64_t og = g->o / g->groups, cg = g->c / g->groups, mr = f->mr;
  const int64_t tb = col_channel_block(g) * g->kh * g->kw;
  const fwd_tile_fn *tiles = fwd_tiles[mr == FWD_MR ? 0 : 1];
  col_geom p;
  (void)t;
  col_geom_of(&p, g);
  const int64_t tail = p.len % VL, pack = col_tail_pack(p.len), body = pack > 1 ? p.len - tail : p.len;
  float *planes = scratch, *tmp = scratch + count * p.img;
  col_tap_offsets(off, g, &p);
  build_col_planes(planes, f->x + first * g->c * g->h * g->w, g, &p, count, 0);
  for (int64_t m = 0; m < count; m++)
    for (int64_t gi = 0; gi < g->groups; gi++) {
      const float *src = planes + m * p.img + gi * cg * g->kw * p.cp;
      float *y = f->y + ((first + m) * g->o + gi * og) * p.len;
      for (int64_t q = 0; q < body; q += FWD_NR) {
        const int64_t rem = body - q, nv = rem >= FWD_NR ? FWD_NV : (rem + VL - 1) / VL;
        const int in_place = rem >= nv * VL;
        for (int64_t kb = 0; kb < f->kg; kb += tb) {
          const int64_t nk = f->kg - kb < tb ? f->kg - kb : tb;
          for (int64_t ob = 0; ob < og; ob += mr) {
            const float *w = f->wp + (gi * f->ogp + ob) * f->kg + kb * mr;
            const float *bias = f->biasp ? f->biasp + gi * f->ogp + ob : NULL;
            if (og - ob >= mr && in_place) tiles[nv - 1](nk, off + kb, src + q, w, bias, kb > 0, y + ob * p.len + q, p.len);
            else tiles[nv - 1](nk, off + kb, src + q, w, bias, kb > 0, tmp + ob * FWD_NR, FWD_NR);
          }
        }
        const int64_t ncols = rem < nv * VL ? rem : nv * VL;
        for (int64_t ob = 0; ob < og; ob += mr) {
          if (og - ob >= mr && in_place) continue;
          for (int64_t i = 0; i < mr && ob + i < og; i++)
            memcpy(y + (ob + i) * p.len + q, tmp + (ob + i) * FWD_NR, sizeof(float) * (size_t)ncols);
        }
      }
    }
  if (pack < 2) return;
  /* The last `tail` positions of `pack` images share one vector: their taps
     gathered into packed[k][lane] (lane = image * tail + position), one
     tile per block of output channels, the lanes put back. */
  float *packed = tmp + f->ogp * FWD_NR;
  int64_t *poff = off + f->kg;
  for (int64_t k = 0; k < f->kg; k++) poff[k] = k * VL;
  for (int64_t m0 = 0; m0 < count; m0 += pack) {
    const int64_t nimg = count - m0 < pack ? count - m0 : pack;
    for (int64_t gi = 0; gi < g->groups; gi++) {
      for (int64_t k = 0; k < f->kg; k++) {
        float *lane = packed + k * VL;
        for (int64_t mi = 0; mi < nimg; mi++) {
          const float *src = planes + (m0 + mi) * p.img + gi * cg * g->kw * p.cp + off[k] + body;
          for (int64_t r = 0; r < tail; r++) lane[mi * tail + r] = src[r];
        }
        for (int64_t l = nimg * tail; l < VL; l++) lane[l] = 0.0f;
      }
      for (int64_t ob = 0; ob < og; ob += mr) {
        const float *w = f->wp + (gi * f->ogp + ob) * f->kg;
        const float *bias = f->biasp ? f->biasp + gi * f->ogp + ob : NULL;
        tiles[0](f->kg, poff, packed, w, bias, 0, tmp, VL);
        for (int64_t i = 0; i < mr && ob + i < og; i++)
          for (int64_t mi = 0; mi < nimg; mi++)
            memcpy(f->y + ((first + m0 + mi) * g->o + gi * og + ob + i) * p.len + body, tmp + i * VL + mi * tail,
                   sizeof(float) * (size_t)tail);
      }
    }
  }
}

/* y (n, o, oh, ow) from contiguous float32 x and w (o, cg, kh, kw) */
static int direct_forward(float *y, const float *x, const float *w, const float *bias, const mt_conv_geom *g) {
  const int cols = use_col_planes(g);
  fwd_job f = {g, y, x, NULL, bias, NULL, fwd_mr(g->o / g->groups), 0, g->c / g->groups * g->kh * g->kw};
  f.ogp = (g->o / g->groups + f.mr - 1) / f.mr * f.mr;
  const size_t wp_bytes = sizeof(float) * (size_t)(g->groups * f.ogp * (f.kg + 1));
  float *wp = mt_alloc(wp_bytes);
  if (!wp) return mt_fail("conv2d: out of memory");
  pack_weight(wp, w, g, f.mr);
  f.wp = wp;
  chunk_plan c;
  if (cols) {
    if (bias) {                            /* after the packed weights */
      float *bp = wp + g->groups * f.ogp * f.kg;
      const int64_t og = g->o / g->groups;
      for (int64_t gi = 0; gi < g->groups; gi++)
        for (int64_t o = 0; o < f.ogp; o++) bp[gi * f.ogp + o] = o < og ? bias[gi * og + o] : 0.0f;
      f.biasp = bp;
    }
    col_geom p;
    col_geom_of(&p, g);
    c.nt = image_threads(g);
    c.chunk = images_per_chunk(g->n, c.nt, p.img, PLANES_TARGET_BYTES);
    c.floats = c.chunk * p.img + f.ogp * FWD_NR + f.kg * VL;   /* planes, partial tiles, packed tails */
    c.taps = 2 * f.kg;
  } else {
    chunk_plan_of(&c, g, g->groups * f.ogp, f.kg);
  }
  int rc = run_chunks("conv2d", g->n, &c, cols ? col_fwd_chunk : fwd_chunk, &f);
  mt_free(wp, wp_bytes);
  return rc;
}

/* gw[i][k] += sum over q < nq of gy[i][q] * src[off[k] + q], for WG_MO rows
   of gy (ldg apart) and WG_MK taps; gw rows ldw apart. */
static void wg_tile(int64_t nq, const float *gy, int64_t ldg, const float *src, const int64_t *off, float *gw,
                    int64_t ldw) {
  vfloat acc[WG_MO][WG_MK];
  const float *s[WG_MK];
  for (int i = 0; i < WG_MO; i++)
    for (int j = 0; j < WG_MK; j++) acc[i][j] = (vfloat){0};
  for (int j = 0; j < WG_MK; j++) s[j] = src + off[j];
  for (int64_t q = 0; q < nq; q += VL) {
    vfloat gv[WG_MO];
    for (int i = 0; i < WG_MO; i++) gv[i] = *(const vfloat *)(gy + i * ldg + q);
    for (int j = 0; j < WG_MK; j++) {
      const vfloat xv = *(const vfloat *)(s[j] + q);
      for (int i = 0; i < WG_MO; i++) acc[i][j] += gv[i] * xv;
    }
  }
  for (int i = 0; i < WG_MO; i++)
    for (int j = 0; j < WG_MK; j++) {
      float sum = 0;
      for (int l = 0; l < VL; l++) sum += acc[i][j][l];
      gw[i * ldw + j] += sum;
    }
}

typedef struct {
  const mt_conv_geom *g;
  float *acc;              /* per thread: (groups * ogp, kgp) partial sums */
  const float *x, *gy;
  int64_t ogp, kg, kgp;    /* channels per group and taps, padded to whole tiles */
} wg_job;

/* adds the weight gradient of the images first .. first + count - 1 to thread t's sums */
static void wg_chunk(const void *job, int t, int64_t first, int64_t count, float *scratch, int64_t *off) {
  const wg_job *f = job;
  const mt_conv_geom *g = f->g;
  const int64_t og = g->o / g->groups, cg = g->c / g->groups;
  float *acc = f->acc + t * g->groups * f->ogp * f->kgp;
  plane_geom p;
  plane_geom_of(&p, g, count);
  float *planes = scratch, *grid = scratch + p.size;
  tap_offsets(off, g, &p);
  for (int64_t k = f->kg; k < f->kgp; k++) off[k] = 0;        /* padding taps: read anything, dropped */
  build_planes(planes, f->x + first * g->c * g->h * g->w, g, &p);
  memset(grid, 0, sizeof(float) * (size_t)(g->groups * f->ogp * p.qt));
  for (int64_t m = 0; m < count; m++)
    for (int64_t o = 0; o < g->o; o++) {
      const float *src = f->gy + ((first + m) * g->o + o) * g->oh * g->ow;
      float *row = grid + (o / og * f->ogp + o % og) * p.qt + m * p.img;
      for (int64_t i = 0; i < g->oh; i++) memcpy(row + i * p.wq, src + i * g->ow, sizeof(float) * (size_t)g->ow);
    }
  for (int64_t gi = 0; gi < g->groups; gi++)
    for (int64_t kb = 0; kb < f->kgp; kb += WG_MK)
      for (int64_t ob = 0; ob < f->ogp; ob += WG_MO)
        wg_tile(p.qt, grid + (gi * f->ogp + ob) * p.qt, p.qt, planes + gi * cg * p.chan, off + kb,
                acc + (gi * f->ogp + ob) * f->kgp + kb, f->kgp);
}

/* p[0 .. n) in the first n lanes, zeros after (0 <= n < VL); reads nothing past p + n */
static inline vfloat load_head(const float *p, int64_t n) {
#if defined(__AVX512F__)
  return (vfloat)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
#else
  float t[VL] = {0};
  memcpy(t, p, sizeof(float) * (size_t)n);
  return *(const vfloat *)t;
#endif
}

/* acc[i][j] (vectors, rows lda apart) += the sum over the count images m and
   the len positions q of gy[m * gstep + rowoff[i] + q] * src[m * sstep + off[j] + q],
   for WG_MO rows of gy and WG_MK taps */
static void col_wg_tile(int64_t count, int64_t len, const float *gy, const int64_t *rowoff, int64_t gstep,
                        const float *src, int64_t sstep, const int64_t *off, vfloat *acc, int64_t lda) {
  vfloat a[WG_MO][WG_MK];
  for (int i = 0; i < WG_MO; i++)
    for (int j = 0; j < WG_MK; j++) a[i][j] = acc[i * lda + j];
  const int64_t tail = len % VL, body = len - tail;
  for (int64_t m = 0; m < count; m++) {
    const float *gr[WG_MO], *s[WG_MK];
    for (int i = 0; i < WG_MO; i++) gr[i] = gy + m * gstep + rowoff[i];
    for (int j = 0; j < WG_MK; j++) s[j] = src + m * sstep + off[j];
    for (int64_t q = 0; q < body; q += VL) {
      vfloat gv[WG_MO];
      for (int i = 0; i < WG_MO; i++) gv[i] = *(const vfloat *)(gr[i] + q);
      for (int j = 0; j < WG_MK; j++) {
        const vfloat xv = *(const vfloat *)(s[j] + q);
        for (int i = 0; i < WG_MO; i++) a[i][j] += gv[i] * xv;
      }
    }
    if (tail) {
      vfloat gv[WG_MO];
      for (int i = 0; i < WG_MO; i++) gv[i] = load_head(gr[i] + body, tail);
      for (int j = 0; j < WG_MK; j++) {
        const vfloat xv = load_head(s[j] + body, tail);
        for (int i = 0; i < WG_MO; i++) a[i][j] += gv[i] * xv;
      }
    }
  }
  for (int i = 0; i < WG_MO; i++)
    for (int j = 0; j < WG_MK; j++) acc[i * lda + j] = a[i][j];
}

typedef struct {
  const mt_conv_geom *g;
  vfloat *acc;             /* per thread: (groups * ogp, kgp) vector partial sums */
  const float *x, *gy;
  int64_t ogp, kg, kgp;    /* channels per group padded to whole tiles; taps; taps with the ones tap, padded */
  int bias;                /* the ones tap (tap kg) sums gy: the bias gradient */
} col_wg_job;

/* adds the weight (and bias) gradient of the images first .. first + count - 1 to thread t's sums */
static void col_wg_chunk(const void *job, int t, int64_t first, int64_t count, float *scratch, int64_t *off) {
  const col_wg_job *f = job;
  const mt_conv_geom *g = f->g;
  const int64_t og = g->o / g->groups, cg = g->c / g->groups;
  col_geom p;
  col_geom_of(&p, g);
  vfloat *acc = f->acc + t * g->groups * f->ogp * f->kgp;
  col_tap_offsets(off, g, &p);
  build_col_planes(scratch, f->x + first * g->c * g->h * g->w, g, &p, count, f->bias);
  const float *gy = f->gy + first * g->o * p.len;
  for (int64_t gi = 0; gi < g->groups; gi++) {
    const float *src = scratch + gi * cg * g->kw * p.cp;
    for (int64_t k = f->kg; k < f->kgp; k++)     /* the ones plane; padding taps read anything, dropped */
      off[k] = k == f->kg && f->bias ? (g->c - gi * cg) * g->kw * p.cp : 0;
    for (int64_t kb = 0; kb < f->kgp; kb += WG_MK)
      for (int64_t ob = 0; ob < f->ogp; ob += WG_MO) {
        int64_t rowoff[WG_MO];               /* rows past the group's channels repeat its last: dropped */
        for (int i = 0; i < WG_MO; i++) rowoff[i] = (gi * og + (ob + i < og ? ob + i : og - 1)) * p.len;
        col_wg_tile(count, p.len, gy, rowoff, g->o * p.len, src, p.img, off + kb,
                    acc + (gi * f->ogp + ob) * f->kgp + kb, f->kgp);
      }
  }
}

/* gw (o, cg * kh * kw) and, when gb is not NULL, gb (o) = gy summed over images and positions */
static int col_weight_grad(float *gw, float *gb, const float *x, const float *gy, const mt_conv_geom *g) {
  const int64_t og = g->o / g->groups;
  col_wg_job f = {g, NULL, x, gy, (og + WG_MO - 1) / WG_MO * WG_MO, g->c / g->groups * g->kh * g->kw, 0, gb != NULL};
  f.kgp = (f.kg + f.bias + WG_MK - 1) / WG_MK * WG_MK;
  col_geom p;
  col_geom_of(&p, g);
  chunk_plan c;
  c.nt = image_threads(g);
  c.chunk = images_per_chunk(g->n, c.nt, p.img, 2 * PLANES_TARGET_BYTES);
  c.floats = c.chunk * p.img;
  c.taps = f.kgp;
  const int64_t acc_size = g->groups * f.ogp * f.kgp;
  const size_t acc_bytes = sizeof(vfloat) * (size_t)(acc_size * c.nt);
  if (!(f.acc = mt_alloc(acc_bytes))) return mt_fail("conv2d backward: out of memory");
  memset(f.acc, 0, acc_bytes);
  int rc = run_chunks("conv2d backward", g->n, &c, col_wg_chunk, &f);
  for (int64_t gi = 0; rc == 0 && gi < g->groups; gi++)
    for (int64_t o = 0; o < og; o++)
      for (int64_t k = 0; k < f.kg + f.bias; k++) {
        double sum = 0;
        for (int t = 0; t < c.nt; t++) {
          const vfloat v = f.acc[t * acc_size + (gi * f.ogp + o) * f.kgp + k];
          for (int l = 0; l < VL; l++) sum += v[l];
        }
        if (k < f.kg) gw[(gi * og + o) * f.kg + k] = (float)sum;
        else gb[gi * og + o] = (float)sum;
      }
  mt_free(f.acc, acc_bytes);
  return rc;
}

/* The weight gradient as outer products, when a group has at least half a
   vector of output channels: gy of one image and group is transposed to
   gyt [q][o] (o padded to whole vectors with zeros), and
   acc[k][o] += src[off[k] + q] * gyt[q][o] broadcasts the plane value, so
   each plane is read one float at a time along q (a cache line per VL
   steps) and no lane sums are needed. Positions go in blocks of WGT_QB so
   that a block of gyt stays in the L1 cache across the taps. */
#define WGT_QB 64
#if VL == 16
#define WGT_NV 4               /* channel vectors per tile, at most */
#else
#define WGT_NV 2
#endif

/* acc[i][o .. o + NV * VL) (rows lda apart) += the sum over the positions
   (r, j), r < nrows, j < ow, of src[off[i] + r * wq + j] * gyt[r * ow + j][o ...]
   (gyt rows ldt apart), for MK taps */
#define WGT_TILE(MK, NV)                                                                            \
  static void wgt_tile_##MK##_##NV(int64_t nrows, int64_t ow, int64_t wq, const float *src,         \
                                   const int64_t *off, const float *gyt, int64_t ldt, float *acc,   \
                                   int64_t lda) {                                                   \
    vfloat a[MK][NV];                                                                               \
    const float *s[MK];                                                                             \
    for (int i = 0; i < MK; i++) {                                                                  \
      s[i] = src + off[i];                                                                          \
      for (int j = 0; j < NV; j++) a[i][j] = *(const vfloat *)(acc + i * lda + j * VL);             \
    }                                                                                               \
    for (int64_t r = 0; r < nrows; r++, gyt += ow * ldt) {                                          \
      for (int64_t q = 0; q < ow; q++) {                                                            \
        vfloat gv[NV];                                                                              \
        for (int j = 0; j < NV; j++) gv[j] = *(const vfloat *)(gyt + q * ldt + j * VL);             \
        for (int i = 0; i < MK; i++) {                                                              \
          const float xv = s[i][q];                                                                 \
          for (int j = 0; j < NV; j++) a[i][j] += xv * gv[j];                                       \
        }                                                                                           \
      }                                                                                             \
      for (int i = 0; i < MK; i++) s[i] += wq;                                                      \
    }                                                                                               \
    for (int i = 0; i < MK; i++)                                                                    \
      for (int j = 0; j < NV; j++) *(vfloat *)(acc + i * lda + j * VL) = a[i][j];                   \
  }
typedef void (*wgt_tile_fn)(int64_t, int64_t, int64_t, const float *, const int64_t *, const float *, int64_t, float *,
                            int64_t);
/* taps per tile for a tile of NV vectors: about 24 accumulators */
#if WGT_NV == 4
#define WGT_MK_OF(nv) ((nv) == 4 ? 6 : (nv) == 3 ? 8 : 12)
WGT_TILE(6, 4) WGT_TILE(6, 3) WGT_TILE(6, 2) WGT_TILE(6, 1)
WGT_TILE(8, 3) WGT_TILE(8, 2) WGT_TILE(8, 1)
WGT_TILE(12, 2) WGT_TILE(12, 1)
/* [tile's taps: 6, 8, 12][vectors - 1] */
static const wgt_tile_fn wgt_tiles[3][4] = {
  {wgt_tile_6_1, wgt_tile_6_2, wgt_tile_6_3, wgt_tile_6_4},
  {wgt_tile_8_1, wgt_tile_8_2, wgt_tile_8_3, NULL},
  {wgt_tile_12_1, wgt_tile_12_2, NULL, NULL},
};
#define WGT_MK_INDEX(mk) ((mk) == 6 ? 0 : (mk) == 8 ? 1 : 2)
#else
#define WGT_MK_OF(nv) ((nv) == 2 ? 3 : 6)
WGT_TILE(3, 2) WGT_TILE(3, 1)
WGT_TILE(6, 1)
static const wgt_tile_fn wgt_tiles[2][2] = {
  {wgt_tile_3_1, wgt_tile_3_2},
  {wgt_tile_6_1, NULL},
};
#define WGT_MK_INDEX(mk) ((mk) == 3 ? 0 : 1)
#endif

typedef struct {
  const mt_conv_geom *g;
  float *acc;              /* per thread: (groups, kgp, ogv) partial sums */
  const float *x, *gy;
  int64_t ogv, nv, mk;     /* channels per group padded to whole vectors; vectors and taps per tile */
  int64_t kg, kgp;         /* taps; taps with the ones tap, padded to whole tiles */
  int bias;
} wgt_job;

#if defined(__AVX512F__)
/* dst[j][i] = src[i][j] for one 16 x 16 block (src rows lds apart, dst rows
   ldd apart), in registers: pairs of rows interleaved by 32 and then 64 bits
   give each 128-bit lane a 4 x 4 block transposed, and two rounds of lane
   shuffles put the lanes in place. */
static inline void transpose16(float *dst, int64_t ldd, const float *src, int64_t lds) {
  __m512 r[16], t[16], u[4][4];
  for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * lds);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int g = 0; g < 4; g++) {   /* u[g][c], lane L: column 4L + c of rows 4g .. 4g + 3 */
    __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
    __m512d c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
    u[g][0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[g][1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[g][2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[g][3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int c = 0; c < 4; c++) {   /* column 4L + c: lane L of u[0..3][c] */
    __m512 v0 = _mm512_shuffle_f32x4(u[0][c], u[1][c], 0x44), v1 = _mm512_shuffle_f32x4(u[0][c], u[1][c], 0xee);
    __m512 v2 = _mm512_shuffle_f32x4(u[2][c], u[3][c], 0x44), v3 = _mm512_shuffle_f32x4(u[2][c], u[3][c], 0xee);
    _mm512_storeu_ps(dst + c * ldd, _mm512_shuffle_f32x4(v0, v2, 0x88));
    _mm512_storeu_ps(dst + (4 + c) * ldd, _mm512_shuffle_f32x4(v0, v2, 0xdd));
    _mm512_storeu_ps(dst + (8 + c) * ldd, _mm512_shuffle_f32x4(v1, v3, 0x88));
    _mm512_storeu_ps(dst + (12 + c) * ldd, _mm512_shuffle_f32x4(v1, v3, 0xdd));
  }
}
#endif

/* dst[q][o] = src[o][q] for o < rows, q < len (src rows len apart, dst rows
   ldd apart), and dst[q][o] = 0 for rows <= o < ldd. With AVX-512, whole
   16 x 16 blocks are transposed in registers. */
static void transpose_rows(float *dst, int64_t ldd, const float *src, int64_t rows, int64_t len) {
  int64_t o0 = 0, q0 = 0;
#if defined(__AVX512F__)
  o0 = rows / 16 * 16;
  q0 = len / 16 * 16;
  for (int64_t o = 0; o < o0; o += 16)
    for (int64_t q = 0; q < q0; q += 16) transpose16(dst + q * ldd + o, ldd, src + o * len + q, len);
#endif
  for (int64_t q = 0; q < len; q++) {   /* the columns past whole blocks, then the rows past them */
    float *row = dst + q * ldd;
    for (int64_t o = q < q0 ? o0 : 0; o < rows; o++) row[o] = src[o * len + q];
    for (int64_t o = rows; o < ldd; o++) row[o] = 0.0f;
  }
}

static void wgt_chunk(const void *job, int t, int64_t first, int64_t count, float *scratch, int64_t *off) {
  const wgt_job *f = job;
  const mt_conv_geom *g = f->g;
  const int64_t og = g->o / g->groups, cg = g->c / g->groups, len = g->oh * g->ow;
  plane_geom p;
  plane_geom_of(&p, g, count);
  float *ones = scratch + p.size, *gyt = ones + g->oh * p.wq, *acc = f->acc + t * g->groups * f->kgp * f->ogv;
  const wgt_tile_fn *tiles = wgt_tiles[WGT_MK_INDEX(f->mk)];
  const int64_t rb = WGT_QB / g->ow > 1 ? WGT_QB / g->ow : 1;      /* output rows per block */
  tap_offsets(off, g, &p);
  build_planes(scratch, f->x + first * g->c * g->h * g->w, g, &p);
  for (int64_t q = 0; q < g->oh * p.wq; q++) ones[q] = 1.0f;
  for (int64_t m = 0; m < count; m++)
    for (int64_t gi = 0; gi < g->groups; gi++) {
      transpose_rows(gyt, f->ogv, f->gy + ((first + m) * g->o + gi * og) * len, og, len);
      const float *src = scratch + gi * cg * p.chan + m * p.img;
      for (int64_t k = f->kg; k < f->kgp; k++)     /* the ones; padding taps read anything, dropped */
        off[k] = k == f->kg && f->bias ? (int64_t)(ones - src) : 0;
      float *ga = acc + gi * f->kgp * f->ogv;
      for (int64_t r0 = 0; r0 < g->oh; r0 += rb) {
        const int64_t nr = g->oh - r0 < rb ? g->oh - r0 : rb;
        for (int64_t kb = 0; kb < f->kgp; kb += f->mk)
          for (int64_t ob = 0; ob < f->ogv; ob += f->nv * VL) {
            const int64_t nv = (f->ogv - ob) / VL < f->nv ? (f->ogv - ob) / VL : f->nv;
            tiles[nv - 1](nr, g->ow, p.wq, src + r0 * p.wq, off + kb, gyt + r0 * g->ow * f->ogv + ob, f->ogv,
                          ga + kb * f->ogv + ob, f->ogv);
          }
      }
    }
}
static int wgt_weight_grad(float *gw, float *gb, const float *x, const float *gy, const mt_conv_geom *g) {
  const int64_t og = g->o / g->groups;
  wgt_job f = {g, NULL, x, gy, (og + VL - 1) / VL * VL, 0, 0, g->c / g->groups * g->kh * g->kw, 0, gb != NULL};
  f.nv = f.ogv / VL < WGT_NV ? f.ogv / VL : WGT_NV;
  f.mk = WGT_MK_OF(f.nv);
  f.kgp = (f.kg + f.bias + f.mk - 1) / f.mk * f.mk;
  chunk_plan c;
  c.nt = image_threads(g);
  c.chunk = chunk_images(g, c.nt);
  plane_geom p;
  plane_geom_of(&p, g, c.chunk);
  c.floats = p.size + g->oh * p.wq + g->oh * g->ow * f.ogv;     /* planes, ones, gy transposed */
  c.taps = f.kgp;
  const int64_t acc_size = g->groups * f.kgp * f.ogv;
  const size_t acc_bytes = sizeof(float) * (size_t)(acc_size * c.nt);
  if (!(f.acc = mt_alloc(acc_bytes))) return mt_fail("conv2d backward: out of memory");
  memset(f.acc, 0, acc_bytes);
  int rc = run_chunks("conv2d backward", g->n, &c, wgt_chunk, &f);
  for (int64_t gi = 0; rc == 0 && gi < g->groups; gi++)
    for (int64_t k = 0; k < f.kg + f.bias; k++)
      for (int64_t o = 0; o < og; o++) {
        float sum = 0;
        for (int t = 0; t < c.nt; t++) sum += f.acc[t * acc_size + (gi * f.kgp + k) * f.ogv + o];
        if (k < f.kg) gw[(gi * og + o) * f.kg + k] = sum;
        else gb[gi * og + o] = sum;
      }
  mt_free(f.acc, acc_bytes);
  return rc;
}

/* stride 1: outer products whenever a group has half a vector of output
   channels (their planes are per chunk, any image size), else lane sums */
static int use_outer_products(const mt_conv_geom *g) {
  return g->sh == 1 && g->sw == 1 && (g->o / g->groups) * 2 >= VL;
}

/* Outer products transpose gy once per image, whatever the taps; with few
   taps (a first layer on 1 to 4 channels) that costs more than the
   products, and lane sums over gy as it is are twice as fast (a 1->32 3x3
   layer on 28x28: 0.65 ms against 1.30 ms for 64 images). */
#define COL_WG_MAX_TAPS 48
static int few_taps(const mt_conv_geom *g) { return g->c / g->groups * g->kh * g->kw <= COL_WG_MAX_TAPS; }

/* whether direct_weight_grad also gives the bias gradient (the kernels with a ones tap) */
static int fuses_bias(const mt_conv_geom *g) { return use_outer_products(g) || use_col_planes(g); }

/* gw (o, cg, kh, kw) and, when gb is not NULL (only where fuses_bias), the bias gradient gb (o) */
static int direct_weight_grad(float *gw, float *gb, const float *x, const float *gy, const mt_conv_geom *g) {
  if (use_col_planes(g) && few_taps(g)) return col_weight_grad(gw, gb, x, gy, g);
  if (use_outer_products(g)) return wgt_weight_grad(gw, gb, x, gy, g);
  if (use_col_planes(g)) return col_weight_grad(gw, gb, x, gy, g);
  const int64_t og = g->o / g->groups;
  wg_job f = {g, NULL, x, gy, (og + WG_MO - 1) / WG_MO * WG_MO, g->c / g->groups * g->kh * g->kw, 0};
  f.kgp = (f.kg + WG_MK - 1) / WG_MK * WG_MK;
  chunk_plan c;
  chunk_plan_of(&c, g, g->groups * f.ogp, f.kgp);
  const int64_t acc_size = g->groups * f.ogp * f.kgp;
  const size_t acc_bytes = sizeof(float) * (size_t)(acc_size * c.nt);
  if (!(f.acc = mt_alloc(acc_bytes))) return mt_fail("conv2d backward: out of memory");
  memset(f.acc, 0, acc_bytes);
  int rc = run_chunks("conv2d backward", g->n, &c, wg_chunk, &f);
  for (int64_t gi = 0; rc == 0 && gi < g->groups; gi++)
    for (int64_t o = 0; o < og; o++)
      for (int64_t k = 0; k < f.kg; k++) {
        float sum = 0;
        for (int t = 0; t < c.nt; t++) sum += f.acc[t * acc_size + (gi * f.ogp + o) * f.kgp + k];
        gw[(gi * og + o) * f.kg + k] = sum;
      }
  mt_free(f.acc, acc_bytes);
  return rc;
}

/* The input gradient of a stride-1 convolution is a stride-1 convolution of
   gy, padded by d * (k - 1) - p before, with the kernel flipped and its two
   channel dims swapped within each group. */
static int direct_input_grad(float *gx, const float *gy, const float *w, const mt_conv_geom *g) {
  const int64_t og = g->o / g->groups, cg = g->c / g->groups, taps = g->kh * g->kw;
  const mt_conv_geom t = {g->n, g->o, g->oh, g->ow, g->c, g->kh, g->kw, g->h, g->w, 1, 1,
                          g->dh * (g->kh - 1) - g->ph, g->dw * (g->kw - 1) - g->pw, g->dh, g->dw, g->groups};
  const size_t bytes = sizeof(float) * (size_t)(g->o * cg * taps);
  float *flipped = mt_alloc(bytes);
  if (!flipped) return mt_fail("conv2d backward: out of memory");
  for (int64_t gi = 0; gi < g->groups; gi++)
    for (int64_t c = 0; c < cg; c++)
      for (int64_t o = 0; o < og; o++)
        for (int64_t k = 0; k < taps; k++)
          flipped[((gi * cg + c) * og + o) * taps + k] = w[((gi * og + o) * cg + c) * taps + taps - 1 - k];
  int rc = direct_forward(gx, gy, flipped, NULL, &t);
  mt_free(flipped, bytes);
  return rc;
}


const mt_conv_direct_kernels MT_CONV_DIRECT_TABLE = {
#if defined(__AVX512F__)
    2,
#elif defined(__AVX2__)
    1,
#else
    0,
#endif
    direct_forward, direct_weight_grad, direct_input_grad, fuses_bias};
#endif
