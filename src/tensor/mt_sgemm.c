/* mt_sgemm.c: moontorch's own float32 matrix product for CPUs with AVX-512
   (F, DQ, BW, VL), compiled for that ISA whatever the build's -march and
   taken at run time when cpuid says so; elsewhere, and for the shapes it
   does not take, OpenBLAS does the product (mt_linalg.c). bfloat16 and
   float16 operands are widened to float32 as they are packed (no float32
   copies of them); the sums are float32 either way.

   c (m x n, row-major; a column-major c is the product transposed) =
   beta * c + alpha * a @ b, as BLIS does it: b is packed SG_KC steps by
   up to SG_NC columns (as many as stay in L2) at a time into slivers of SG_NR columns (a copy when b is
   n-contiguous, 16 x 16 transposes when it is k-contiguous: x @ w^T, a
   linear layer's forward), a SG_MC rows by SG_KC steps into tiles of SG_MR
   rows; the micro-kernel keeps a tile of c (SG_MR x SG_NR, 16 registers of
   16 floats) while each step broadcasts SG_MR values of a and loads one row
   of the sliver. A tile of a stays in L1 while the slivers pass by from L2,
   each prefetched SG_PF steps ahead.

   Each element of c is one chain of fused multiply-adds in the order of k
   within a block of SG_KC steps, the blocks added in order, whatever tile or
   block of columns it falls in: the same bits at every thread count. */
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mt_sgemm.h"

#define SG_MR 8
_Static_assert(SG_MR == 8, "pack_a transposes a tile of a as 8 x 8 blocks");
#define SG_NR 32
#define SG_KC 384
#define SG_MC 128            /* rows of a packed at once: SG_MC * SG_KC floats, 192 KB (L2) */
#define SG_NC 1024           /* columns of b packed at once, at most (the buffer: 1.5 MB) */
#define SG_B_L2 (SG_KC * 512)  /* floats of packed b that stay in L2 beside a's tile: 768 KB */
#define SG_PF 12             /* how many steps ahead the sliver is prefetched */

#define AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

static __mmask16 mask_of(int64_t count) {   /* the first count (0..16) lanes */
  return count >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << count) - 1u);
}

/* ---- reading the operands: float32, or bfloat16 / float16 widened to float32 as they are
   packed (MT_SG_F32, MT_SG_BF16, MT_SG_F16); idx counts elements ---- */

/* the 16 (masked: the first ones, zeros after) elements at idx */
INLINE AVX512 __m512 load16(const char *base, int64_t idx, int et, __mmask16 m) {
  if (et == MT_SG_F32) return _mm512_maskz_loadu_ps(m, (const float *)base + idx);
  const __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)base + idx);
  if (et == MT_SG_BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

INLINE AVX512 __m256 load8(const char *base, int64_t idx, int et) {
  if (et == MT_SG_F32) return _mm256_loadu_ps((const float *)base + idx);
  const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)base + idx));
  if (et == MT_SG_BF16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  return _mm256_cvtph_ps(h);
}

INLINE AVX512 float load1(const char *base, int64_t idx, int et) {
  if (et == MT_SG_F32) return ((const float *)base)[idx];
  const uint16_t v = ((const uint16_t *)base)[idx];
  if (et == MT_SG_BF16) {
    const uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  return _cvtsh_ss(v);
}

/* ---- broadcast kernel ---- */

/* the rows of c a tile reads or writes at its end, into L1 while it sums */
INLINE AVX512 void prefetch_tile(const float *c, int64_t ldc, int mr) {
  for (int i = 0; i < mr; i++) {
    _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
  }
}

/* c's tile (mr rows, the columns masked by m0, m1) = beta * c + alpha * the sums acc0 (its
   first 16 columns) and acc1 (the next 16); beta 0 does not read c */
INLINE AVX512 void store_tile(const __m512 *acc0, const __m512 *acc1, float *c, int64_t ldc, int mr, __mmask16 m0,
                              __mmask16 m1, float alpha, float beta) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int i = 0; i < SG_MR; i++) {
    if (i >= mr) break;
    float *ci = c + i * ldc;
    __m512 r0 = _mm512_mul_ps(va, acc0[i]), r1 = _mm512_mul_ps(va, acc1[i]);
    if (beta != 0) {
      r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, ci), r0);
      r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, ci + 16), r1);
    }
    _mm512_mask_storeu_ps(ci, m0, r0);
    _mm512_mask_storeu_ps(ci + 16, m1, r1);
  }
}

/* c tile (mr <= SG_MR rows, the columns masked by m0, m1) = beta * c + alpha * ap @ bp over kc
   steps: ap SG_MR floats per step (zeros past mr), bp a sliver, SG_NR floats per step */
INLINE AVX512 void bcast_tile(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr,
                              __mmask16 m0, __mmask16 m1, float alpha, float beta) {
  __m512 acc0[SG_MR], acc1[SG_MR];
#pragma GCC unroll 8
  for (int i = 0; i < SG_MR; i++) acc0[i] = acc1[i] = _mm512_setzero_ps();
  prefetch_tile(c, ldc, mr);
  for (int64_t p = 0; p < kc; p++) {
    _mm_prefetch((const char *)(bp + SG_PF * SG_NR), _MM_HINT_T0);
    _mm_prefetch((const char *)(bp + SG_PF * SG_NR + 16), _MM_HINT_T0);
    const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 8
    for (int i = 0; i < SG_MR; i++) {
      const __m512 av = _mm512_set1_ps(ap[i]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
    ap += SG_MR;
    bp += SG_NR;
  }
  store_tile(acc0, acc1, c, ldc, mr, m0, m1, alpha, beta);
}

/* a's rows [0, mc) and steps [0, kc) (from a, elements of type et) into ap, SG_MR rows per
   tile, zeros past mc */
static AVX512 void pack_a(float *ap, const char *a, int et, int64_t a_rs, int64_t a_cs, int64_t mc, int64_t kc) {
  for (int64_t t = 0; t < mc; t += SG_MR) {
    const int64_t rows = mc - t < SG_MR ? mc - t : SG_MR;
    const int64_t at = t * a_rs;                      /* the tile's first element */
    float *dst = ap + t * kc;
    if (a_rs == 1 && rows == SG_MR) {
      for (int64_t p = 0; p < kc; p++) _mm256_storeu_ps(dst + p * SG_MR, load8(a, at + p * a_cs, et));
    } else if (a_cs == 1 && rows == SG_MR) {
      /* eight rows of 8 steps at a time, transposed */
      int64_t p = 0;
      for (; p + 8 <= kc; p += 8) {
        __m256 r[8], s[8];
        for (int i = 0; i < 8; i++) r[i] = load8(a, at + i * a_rs + p, et);
        for (int i = 0; i < 8; i += 2) {
          s[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
          s[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
        }
        for (int i = 0; i < 8; i += 4) {
          r[i] = _mm256_shuffle_ps(s[i], s[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
          r[i + 1] = _mm256_shuffle_ps(s[i], s[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
          r[i + 2] = _mm256_shuffle_ps(s[i + 1], s[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
          r[i + 3] = _mm256_shuffle_ps(s[i + 1], s[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
        }
        /* r[0..3]: steps 0, 1, 2, 3 of rows 0-3 (low lane) and 4-7 of them (high); r[4..7] rows 4-7 */
        for (int q = 0; q < 4; q++) {
          _mm256_storeu_ps(dst + (p + q) * SG_MR, _mm256_permute2f128_ps(r[q], r[q + 4], 0x20));
          _mm256_storeu_ps(dst + (p + q + 4) * SG_MR, _mm256_permute2f128_ps(r[q], r[q + 4], 0x31));
        }
      }
      for (; p < kc; p++)
        for (int i = 0; i < SG_MR; i++) dst[p * SG_MR + i] = load1(a, at + i * a_rs + p, et);
    } else {
      for (int64_t p = 0; p < kc; p++)
        for (int64_t i = 0; i < SG_MR; i++)
          dst[p * SG_MR + i] = i < rows ? load1(a, at + i * a_rs + p * a_cs, et) : 0.0f;
    }
  }
}

/* the 16 x 16 block r transposed in place: r[j] becomes column j */
INLINE AVX512 void transpose16(__m512 *r) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {   /* r[i + c], lane l: column 4l + c of rows i .. i + 3 */
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 2]);
    const __m512d c = _mm512_castps_pd(t[i + 1]), d = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
  for (int c = 0; c < 4; c++) {
    t[c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
    t[4 + c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xdd);
    t[8 + c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    t[12 + c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xdd);
  }
  for (int c = 0; c < 4; c++) {
    r[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0xdd);
    r[4 + c] = _mm512_shuffle_f32x4(t[4 + c], t[12 + c], 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(t[4 + c], t[12 + c], 0xdd);
  }
}

/* b k-contiguous (column j at element j * ldb): columns [0, nc) and steps [0, kc) packed into
   slivers of SG_NR columns, kc x SG_NR floats each, zeros past nc */
static AVX512 void pack_b_t(float *bp, const char *b, int et, int64_t ldb, int64_t kc, int64_t nc) {
  for (int64_t j0 = 0; j0 < nc; j0 += 16) {
    float *dst = bp + (j0 / SG_NR) * kc * SG_NR + j0 % SG_NR;
    const int64_t cols = nc - j0 < 16 ? nc - j0 : 16;
    for (int64_t p = 0; p < kc; p += 16) {
      const __mmask16 mk = mask_of(kc - p);
      __m512 r[16];
      for (int i = 0; i < 16; i++) r[i] = i < cols ? load16(b, (j0 + i) * ldb + p, et, mk) : _mm512_setzero_ps();
      transpose16(r);
      const int64_t steps = kc - p < 16 ? kc - p : 16;
      for (int q = 0; q < steps; q++) _mm512_storeu_ps(dst + (p + q) * SG_NR, r[q]);
    }
  }
}

/* b n-contiguous: rows [0, kc), columns [0, nc) copied into slivers as pack_b_t's */
static AVX512 void pack_b_n(float *bp, const char *b, int et, int64_t ldb, int64_t kc, int64_t nc) {
  for (int64_t j = 0; j < nc; j += SG_NR) {
    const int64_t nr = nc - j;
    const __mmask16 m0 = mask_of(nr), m1 = mask_of(nr > 16 ? nr - 16 : 0);
    float *dst = bp + (j / SG_NR) * kc * SG_NR;
    for (int64_t p = 0; p < kc; p++) {
      _mm512_storeu_ps(dst + p * SG_NR, load16(b, p * ldb + j, et, m0));
      _mm512_storeu_ps(dst + p * SG_NR + 16, load16(b, p * ldb + j + 16, et, m1));
    }
  }
}

/* b's columns per packed block, for blocks of kc steps (or pairs): at most SG_B_L2 / kc
   (and SG_NC), as even as whole slivers allow: 1024 columns of 384 steps in two blocks of
   512, 784 columns of 64 steps in one */
static int64_t column_step(int64_t n, int64_t kc) {
  const int64_t ncap = kc * SG_NC <= SG_B_L2 ? SG_NC : SG_B_L2 / kc / SG_NR * SG_NR;
  const int64_t nblocks = (n - 1) / ncap + 1;
  return ((n - 1) / nblocks / SG_NR + 1) * SG_NR;
}

/* bt: b k-contiguous (column j at element j * ldb), else n-contiguous (row p at p * ldb);
   a and b hold elements of types a_et and b_et, of a_es and b_es bytes */
static AVX512 void bcast_gemm(int64_t m, int64_t n, int64_t k, float alpha, const char *a, int a_et, int64_t a_rs,
                              int64_t a_cs, const char *b, int b_et, int64_t ldb, int bt, float beta, float *c,
                              int64_t ldc, float *ap, float *bp) {
  const int64_t a_es = a_et == MT_SG_F32 ? 4 : 2, b_es = b_et == MT_SG_F32 ? 4 : 2;
  for (int64_t p0 = 0; p0 < k; p0 += SG_KC) {
    const int64_t kc = k - p0 < SG_KC ? k - p0 : SG_KC;
    const float beta_p = p0 == 0 ? beta : 1.0f;
    const int64_t nstep = column_step(n, kc);
    for (int64_t j0 = 0; j0 < n; j0 += nstep) {
      const int64_t nc = n - j0 < nstep ? n - j0 : nstep;
      if (bt) pack_b_t(bp, b + (j0 * ldb + p0) * b_es, b_et, ldb, kc, nc);
      else pack_b_n(bp, b + (p0 * ldb + j0) * b_es, b_et, ldb, kc, nc);
      for (int64_t i0 = 0; i0 < m; i0 += SG_MC) {
        const int64_t mc = m - i0 < SG_MC ? m - i0 : SG_MC;
        pack_a(ap, a + (i0 * a_rs + p0 * a_cs) * a_es, a_et, a_rs, a_cs, mc, kc);
        /* a tile of a stays in L1 while b's slivers come by from L2 */
        for (int64_t t = 0; t < mc; t += SG_MR) {
          const int mr = mc - t < SG_MR ? (int)(mc - t) : SG_MR;
          for (int64_t j = 0; j < nc; j += SG_NR) {
            const int64_t nr = nc - j;
            const __mmask16 m0 = mask_of(nr), m1 = mask_of(nr > 16 ? nr - 16 : 0);
            bcast_tile(kc, ap + t * kc, bp + (j / SG_NR) * kc * SG_NR, c + (i0 + t) * ldc + j0 + j, ldc, mr, m0,
                       m1, alpha, beta_p);
          }
        }
      }
    }
  }
}

/* ---- b's rows where they are: x @ w^T with few rows of x ----
   For b k-contiguous (a linear layer's weight read as w^T) the kernel above transposes
   all of b into slivers as it packs it: for a few rows of a (a batch), that transposing
   copy of the whole weight costs more than it saves. Here a is packed transposed
   instead (pack_b_t on its rows: slivers of SG_NR rows of a, SG_NR floats per step),
   and b's rows are read where they are, SG_RB at a time, one value of each broadcast per
   step; a tile of c (SG_NR rows x SG_RB columns) is held one register per half-column.
   Each element of c is the same chain of fused multiply-adds over k as in bcast_tile
   (the product a b and b a are one product), scaled the same way: the same bits. */
#define SG_RB 8

/* c tile (mr <= SG_NR rows, nr <= SG_RB columns) = beta * c + alpha * (ap @ rows) over kc
   steps: ap SG_NR floats per step (a's rows, zeros past mr), rows[j] the kc steps of b's
   column j (zeros past nr) */
INLINE AVX512 void rows_tile(int64_t kc, const float *ap, const float *const *rows, float *c, int64_t ldc,
                             int mr, int nr, float alpha, float beta) {
  const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
  const float *r4 = rows[4], *r5 = rows[5], *r6 = rows[6], *r7 = rows[7];
  __m512 lo[SG_RB], hi[SG_RB];
#pragma GCC unroll 8
  for (int j = 0; j < SG_RB; j++) lo[j] = hi[j] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; p++) {
    _mm_prefetch((const char *)(ap + SG_PF * SG_NR), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + SG_PF * SG_NR + 16), _MM_HINT_T0);
    const __m512 a0 = _mm512_load_ps(ap), a1 = _mm512_load_ps(ap + 16);
    const float bv[SG_RB] = {r0[p], r1[p], r2[p], r3[p], r4[p], r5[p], r6[p], r7[p]};
#pragma GCC unroll 8
    for (int j = 0; j < SG_RB; j++) {
      const __m512 b = _mm512_set1_ps(bv[j]);
      lo[j] = _mm512_fmadd_ps(b, a0, lo[j]);
      hi[j] = _mm512_fmadd_ps(b, a1, hi[j]);
    }
    ap += SG_NR;
  }
  float t[SG_RB][SG_NR];                             /* the tile by columns, then c by rows */
#pragma GCC unroll 8
  for (int j = 0; j < SG_RB; j++) {
    _mm512_storeu_ps(t[j], lo[j]);
    _mm512_storeu_ps(t[j] + 16, hi[j]);
  }
  for (int i = 0; i < mr; i++) {
    float *ci = c + i * ldc;
    for (int j = 0; j < nr; j++) {
      float r = alpha * t[j][i];
      if (beta != 0) r = fmaf(beta, ci[j], r);
      ci[j] = r;
    }
  }
}

/* c (m x n) = beta * c + alpha * a @ b for a k-contiguous (a_cs 1: row i at i * a_rs) of
   at most SG_MC rows, b float32 and k-contiguous (column j at b + j * ldb) */
static AVX512 void rows_gemm(int64_t m, int64_t n, int64_t k, float alpha, const char *a, int a_et, int64_t a_rs,
                             const float *b, int64_t ldb, float beta, float *c, int64_t ldc, float *ap) {
  static const float zeros[SG_KC] __attribute__((aligned(64)));
  const int64_t a_es = a_et == MT_SG_F32 ? 4 : 2;
  for (int64_t p0 = 0; p0 < k; p0 += SG_KC) {
    const int64_t kc = k - p0 < SG_KC ? k - p0 : SG_KC;
    const float beta_p = p0 == 0 ? beta : 1.0f;
    pack_b_t(ap, a + p0 * a_es, a_et, a_rs, kc, m);   /* a's rows as slivers of SG_NR */
    for (int64_t j0 = 0; j0 < n; j0 += SG_RB) {
      const int nr = n - j0 < SG_RB ? (int)(n - j0) : SG_RB;
      const float *rows[SG_RB];
      for (int j = 0; j < SG_RB; j++) rows[j] = j < nr ? b + (j0 + j) * ldb + p0 : zeros;
      for (int64_t i0 = 0; i0 < m; i0 += SG_NR) {
        const int mr = m - i0 < SG_NR ? (int)(m - i0) : SG_NR;
        rows_tile(kc, ap + (i0 / SG_NR) * kc * SG_NR, rows, c + i0 * ldc + j0, ldc, mr, nr, alpha, beta_p);
      }
    }
  }
}

/* whether rows_gemm takes an oriented product: b float32 and k-contiguous, a k-contiguous
   with few rows against b's columns (its transposing pack is the cheaper one) */
static int rows_takes(int64_t m, int64_t n, int64_t a_cs, int b_et, int bt) {
  return bt && b_et == MT_SG_F32 && a_cs == 1 && m <= SG_MC && n >= 2 * m;
}

/* ---- bfloat16 on AVX512_BF16: two steps per instruction ----
   Where the CPU has AVX512_BF16 and both operands are bfloat16, they are not widened: a and
   b are packed as pairs of steps (step 2q in a 32-bit word's low half, 2q + 1 in its high
   half, a zero past an odd k), laid out as bcast_gemm's tiles and slivers with a pair in
   place of a step, and the micro-kernel's vdpbf16ps adds a[i][2q] b[2q][j] + a[i][2q+1]
   b[2q+1][j] (exact products, summed in float32, rounded to nearest even) into each lane of
   c's tile: twice the multiply-adds of an FMA per instruction. Blocks of SG_KC pairs (2 SG_KC
   steps) take the bytes the float32 blocks take. Denormal bfloat16 inputs count as zero (the
   instruction's rule); each element of c is one chain in the order of k, whatever the
   thread count. */
#define BF16 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx512bf16,fma,f16c")))

INLINE BF16 void bf_tile(int64_t kp, const uint32_t *ap, const uint32_t *bp, float *c, int64_t ldc, int mr,
                         __mmask16 m0, __mmask16 m1, float alpha, float beta) {
  __m512 acc0[SG_MR], acc1[SG_MR];
#pragma GCC unroll 8
  for (int i = 0; i < SG_MR; i++) acc0[i] = acc1[i] = _mm512_setzero_ps();
  prefetch_tile(c, ldc, mr);
  for (int64_t q = 0; q < kp; q++) {
    _mm_prefetch((const char *)(bp + SG_PF * SG_NR), _MM_HINT_T0);
    _mm_prefetch((const char *)(bp + SG_PF * SG_NR + 16), _MM_HINT_T0);
    const __m512bh b0 = (__m512bh)_mm512_load_si512(bp), b1 = (__m512bh)_mm512_load_si512(bp + 16);
#pragma GCC unroll 8
    for (int i = 0; i < SG_MR; i++) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32((int)ap[i]);
      acc0[i] = _mm512_dpbf16_ps(acc0[i], av, b0);
      acc1[i] = _mm512_dpbf16_ps(acc1[i], av, b1);
    }
    ap += SG_MR;
    bp += SG_NR;
  }
  store_tile(acc0, acc1, c, ldc, mr, m0, m1, alpha, beta);
}

/* the first count (0..32) 16-bit lanes */
static __mmask32 mask32_of(int64_t count) {
  return count >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << count) - 1u);
}

/* the pair (x[i], x[i + step]) as a word, x[i + step] zero when i + 1 == kc */
static uint32_t bf_pair(const uint16_t *x, int64_t idx, int64_t step, int64_t p, int64_t kc) {
  return (uint32_t)x[idx] | (p + 1 < kc ? (uint32_t)x[idx + step] << 16 : 0u);
}

/* a's rows [0, mc) and steps [0, kc) as pairs: SG_MR words per pair per tile, zeros past mc */
static BF16 void pack_bf_a(uint32_t *ap, const uint16_t *a, int64_t a_rs, int64_t a_cs, int64_t mc, int64_t kc) {
  const int64_t kp = (kc + 1) / 2;
  for (int64_t t = 0; t < mc; t += SG_MR) {
    const int64_t rows = mc - t < SG_MR ? mc - t : SG_MR;
    const uint16_t *at = a + t * a_rs;
    uint32_t *dst = ap + t * kp;
    if (a_cs == 1 && rows == SG_MR) {
      /* 32 steps (16 pairs) of the 8 rows at a time, transposed as words */
      for (int64_t p = 0; p < kc; p += 32) {
        const __mmask32 mk = mask32_of(kc - p);
        __m512 r[16];
        for (int i = 0; i < 16; i++)
          r[i] = i < SG_MR ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(mk, at + i * a_rs + p)) : _mm512_setzero_ps();
        transpose16(r);
        const int64_t pairs = (kc - p + 1) / 2 < 16 ? (kc - p + 1) / 2 : 16;
        for (int q = 0; q < pairs; q++)
          _mm256_storeu_si256((__m256i *)(dst + (p / 2 + q) * SG_MR), _mm512_castsi512_si256(_mm512_castps_si512(r[q])));
      }
    } else if (a_rs == 1 && rows == SG_MR) {
      for (int64_t q = 0; q < kp; q++) {
        const __m256i lo = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(at + 2 * q * a_cs)));
        const __m256i hi = 2 * q + 1 < kc
                               ? _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(at + (2 * q + 1) * a_cs)))
                               : _mm256_setzero_si256();
        _mm256_storeu_si256((__m256i *)(dst + q * SG_MR), _mm256_or_si256(lo, _mm256_slli_epi32(hi, 16)));
      }
    } else {
      for (int64_t q = 0; q < kp; q++)
        for (int64_t i = 0; i < SG_MR; i++)
          dst[q * SG_MR + i] = i < rows ? bf_pair(at, i * a_rs + 2 * q * a_cs, a_cs, 2 * q, kc) : 0u;
    }
  }
}

/* b k-contiguous (column j at element j * ldb): columns [0, nc), steps [0, kc) as slivers of
   SG_NR columns, one word (a pair of steps) per column per pair, zeros past nc */
static BF16 void pack_bf_t(uint32_t *bp, const uint16_t *b, int64_t ldb, int64_t kc, int64_t nc) {
  const int64_t kp = (kc + 1) / 2;
  for (int64_t j0 = 0; j0 < nc; j0 += 16) {
    uint32_t *dst = bp + (j0 / SG_NR) * kp * SG_NR + j0 % SG_NR;
    const int64_t cols = nc - j0 < 16 ? nc - j0 : 16;
    for (int64_t p = 0; p < kc; p += 32) {
      const __mmask32 mk = mask32_of(kc - p);
      __m512 r[16];
      for (int i = 0; i < 16; i++)
        r[i] = i < cols ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(mk, b + (j0 + i) * ldb + p)) : _mm512_setzero_ps();
      transpose16(r);
      const int64_t pairs = (kc - p + 1) / 2 < 16 ? (kc - p + 1) / 2 : 16;
      for (int q = 0; q < pairs; q++) _mm512_storeu_ps((float *)(dst + (p / 2 + q) * SG_NR), r[q]);
    }
  }
}

/* b n-contiguous (row p at element p * ldb): as pack_bf_t's slivers */
static BF16 void pack_bf_n(uint32_t *bp, const uint16_t *b, int64_t ldb, int64_t kc, int64_t nc) {
  const int64_t kp = (kc + 1) / 2;
  for (int64_t j = 0; j < nc; j += SG_NR) {
    const int64_t nr = nc - j;
    const __mmask16 m[2] = {mask_of(nr), mask_of(nr > 16 ? nr - 16 : 0)};
    uint32_t *dst = bp + (j / SG_NR) * kp * SG_NR;
    for (int64_t q = 0; q < kp; q++) {
      const uint16_t *r0 = b + 2 * q * ldb + j, *r1 = r0 + ldb;
      for (int h = 0; h < 2; h++) {
        const __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m[h], r0 + 16 * h));
        const __m512i hi = 2 * q + 1 < kc ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m[h], r1 + 16 * h))
                                          : _mm512_setzero_si512();
        _mm512_storeu_si512(dst + q * SG_NR + 16 * h, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
      }
    }
  }
}

/* bcast_gemm for a and b bfloat16, in blocks of SG_KC pairs; ap and bp bcast_gemm's buffers */
static BF16 void bf_gemm(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t *a, int64_t a_rs,
                         int64_t a_cs, const uint16_t *b, int64_t ldb, int bt, float beta, float *c, int64_t ldc,
                         uint32_t *ap, uint32_t *bp) {
  const int64_t kstep = 2 * SG_KC;
  for (int64_t p0 = 0; p0 < k; p0 += kstep) {
    const int64_t kc = k - p0 < kstep ? k - p0 : kstep, kp = (kc + 1) / 2;
    const float beta_p = p0 == 0 ? beta : 1.0f;
    const int64_t nstep = column_step(n, kp);
    for (int64_t j0 = 0; j0 < n; j0 += nstep) {
      const int64_t nc = n - j0 < nstep ? n - j0 : nstep;
      if (bt) pack_bf_t(bp, b + j0 * ldb + p0, ldb, kc, nc);
      else pack_bf_n(bp, b + p0 * ldb + j0, ldb, kc, nc);
      for (int64_t i0 = 0; i0 < m; i0 += SG_MC) {
        const int64_t mc = m - i0 < SG_MC ? m - i0 : SG_MC;
        pack_bf_a(ap, a + i0 * a_rs + p0 * a_cs, a_rs, a_cs, mc, kc);
        for (int64_t t = 0; t < mc; t += SG_MR) {
          const int mr = mc - t < SG_MR ? (int)(mc - t) : SG_MR;
          for (int64_t j = 0; j < nc; j += SG_NR) {
            const int64_t nr = nc - j;
            const __mmask16 m0 = mask_of(nr), m1 = mask_of(nr > 16 ? nr - 16 : 0);
            bf_tile(kp, ap + t * kp, bp + (j / SG_NR) * kp * SG_NR, c + (i0 + t) * ldc + j0 + j, ldc, mr, m0, m1,
                    alpha, beta_p);
          }
        }
      }
    }
  }
}

/* Whether vdpbf16ps outruns the FMA on this CPU: cpuid says only that it exists. Some
   CPUs retire one per cycle or more (twice the float32 rate), others one per two cycles
   (an AVX-512 Xeon of this project's machines: 0.716 ns against the FMA's 0.179, half the
   float32 rate, and half the widening kernel's speed). So the first bfloat16 product times
   BF_PROBE_ITERS rounds of 12 independent vdpbf16ps and of 12 FMAs, BF_PROBE_TRIALS times,
   interleaved (the least of each: another process taking the core only adds), about 0.1
   ms once, and takes the pairs when they multiply-add at least BF_PROBE_GAIN times as fast. */
#define BF_PROBE_ITERS 1000
#define BF_PROBE_TRIALS 10
#define BF_PROBE_GAIN 1.25

static int64_t probe_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define BF_PROBE_BODY(INSN)                                                                             \
  INSN " %%zmm12, %%zmm13, %%zmm0\n\t" INSN " %%zmm12, %%zmm13, %%zmm1\n\t" INSN " %%zmm12, %%zmm13, %%zmm2\n\t" \
  INSN " %%zmm12, %%zmm13, %%zmm3\n\t" INSN " %%zmm12, %%zmm13, %%zmm4\n\t" INSN " %%zmm12, %%zmm13, %%zmm5\n\t" \
  INSN " %%zmm12, %%zmm13, %%zmm6\n\t" INSN " %%zmm12, %%zmm13, %%zmm7\n\t" INSN " %%zmm12, %%zmm13, %%zmm8\n\t" \
  INSN " %%zmm12, %%zmm13, %%zmm9\n\t" INSN " %%zmm12, %%zmm13, %%zmm10\n\t" INSN " %%zmm12, %%zmm13, %%zmm11\n\t"
#define BF_PROBE_LOOP(INSN)                                                                              \
  __asm__ volatile("vpxord %%zmm12, %%zmm12, %%zmm12\n\tvpxord %%zmm13, %%zmm13, %%zmm13\n\t"             \
                   "1:\n\t" BF_PROBE_BODY(INSN) "dec %0\n\tjnz 1b"                                       \
                   : "+r"(n)                                                                             \
                   :                                                                                     \
                   : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
                     "xmm10", "xmm11", "xmm12", "xmm13")

/* ns for BF_PROBE_ITERS rounds of 12 vdpbf16ps (dot) or vfmadd231ps */
static BF16 int64_t bf_probe(int dot) {
  long n = BF_PROBE_ITERS;
  const int64_t t0 = probe_ns();
  if (dot) BF_PROBE_LOOP("vdpbf16ps");
  else BF_PROBE_LOOP("vfmadd231ps");
  return probe_ns() - t0;
}

static int bf_pairs_faster(void) {
  int64_t dot = INT64_MAX, fma = INT64_MAX;
  for (int t = 0; t < BF_PROBE_TRIALS; t++) {
    const int64_t d = bf_probe(1), f = bf_probe(0);
    if (d < dot) dot = d;
    if (f < fma) fma = f;
  }
  /* a vdpbf16ps does two of an FMA's multiply-adds */
  return 2.0 * (double)fma >= BF_PROBE_GAIN * (double)dot;
}

static int bf_native;
static pthread_once_t bf_once = PTHREAD_ONCE_INIT;

static void bf_decide(void) {
  const char *env = getenv("TH_GEMM_BF16");
  __builtin_cpu_init();
  bf_native = mt_sgemm_available() && __builtin_cpu_supports("avx512bf16");
  if (bf_native && env && !strcmp(env, "widen")) bf_native = 0;
  else if (bf_native && !(env && !strcmp(env, "native"))) bf_native = bf_pairs_faster();
}

/* decided once, for every thread alike (the kernels sum in different orders) */
int mt_gemm_bf16_native(void) {
  (void)pthread_once(&bf_once, bf_decide);
  return bf_native;
}

/* ---- the entry ---- */

/* the calling thread's packing buffers (0: a's, 1: b's), made on its first product and
   kept for the next; freed when the thread ends */
static pthread_key_t sg_key;
static pthread_once_t sg_key_once = PTHREAD_ONCE_INIT;
static void sg_free(void *p) { free(p); }
static void sg_make_key(void) { (void)pthread_key_create(&sg_key, sg_free); }

static float *sg_buffer(int which) {
  (void)pthread_once(&sg_key_once, sg_make_key);
  float **bufs = pthread_getspecific(sg_key);
  if (!bufs) {
    const size_t a = ((size_t)(SG_MC + SG_MR - 1) / SG_MR * SG_MR * SG_KC * sizeof(float) + 63) / 64 * 64;
    const size_t b = (size_t)SG_KC * ((SG_NC + SG_NR - 1) / SG_NR * SG_NR) * sizeof(float);
    char *block = aligned_alloc(64, 64 + a + b);
    if (!block) return NULL;
    bufs = (float **)block;
    bufs[0] = (float *)(block + 64);
    bufs[1] = (float *)(block + 64 + a);
    if (pthread_setspecific(sg_key, block)) { free(block); return NULL; }
  }
  return bufs[which];
}

static int sg_ready = -1;

static int cpu_has_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("fma");
}

int mt_sgemm_available(void) {
  int r = __atomic_load_n(&sg_ready, __ATOMIC_RELAXED);
  if (r < 0) {
    const char *env = getenv("TH_GEMM");
    r = cpu_has_avx512() && !(env && strcmp(env, "openblas") == 0);
    __atomic_store_n(&sg_ready, r, __ATOMIC_RELAXED);
  }
  return r;
}

/* what it does no faster than OpenBLAS: few columns (a sliver mostly padding), few rows or steps */
int mt_gemm_f32_takes(int64_t m, int64_t n, int64_t k) {
  return mt_sgemm_available() && n >= SG_NR && m >= 2 * SG_MR && k >= 16;
}

/* the product as the kernel runs it: c row-major (a column-major c is c^T = b^T @ a^T, a
   and b trading places: *swapped); 0 when c is neither */
static int sg_orient(int64_t *m, int64_t *n, int64_t *a_rs, int64_t *a_cs, int64_t *b_rs, int64_t *b_cs,
                     int64_t *c_rs, int64_t *c_cs, int *swapped) {
  *swapped = 0;
  if (*c_cs == 1) return 1;
  if (*c_rs != 1) return 0;
  const int64_t ars = *b_cs, acs = *b_rs, brs = *a_cs, bcs = *a_rs, t = *m;
  *a_rs = ars; *a_cs = acs; *b_rs = brs; *b_cs = bcs;
  *c_rs = *c_cs; *c_cs = 1;
  *m = *n; *n = t;
  *swapped = 1;
  return 1;
}

/* an oriented product (c row-major) it takes: b k- or n-contiguous */
static int sg_takes_oriented(int64_t m, int64_t n, int64_t k, int64_t b_rs, int64_t b_cs) {
  return mt_gemm_f32_takes(m, n, k) && (b_cs == 1 || b_rs == 1);
}

int mt_gemm_f32_takes_layout(int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs, int64_t b_rs,
                             int64_t b_cs, int64_t c_rs, int64_t c_cs) {
  int swapped;
  return sg_orient(&m, &n, &a_rs, &a_cs, &b_rs, &b_cs, &c_rs, &c_cs, &swapped) &&
         sg_takes_oriented(m, n, k, b_rs, b_cs);
}

int mt_gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const void *a, int a_et, int64_t a_rs, int64_t a_cs,
                const void *b, int b_et, int64_t b_rs, int64_t b_cs, float beta, float *c, int64_t c_rs, int64_t c_cs) {
  int swapped;
  if (!sg_orient(&m, &n, &a_rs, &a_cs, &b_rs, &b_cs, &c_rs, &c_cs, &swapped) ||
      !sg_takes_oriented(m, n, k, b_rs, b_cs))
    return -1;
  if (swapped) {
    const void *ta = a;
    const int tet = a_et;
    a = b; b = ta;
    a_et = b_et; b_et = tet;
  }
  float *ap = sg_buffer(0), *bp = sg_buffer(1);
  if (!ap || !bp) return -1;
  if (a_et == MT_SG_BF16 && b_et == MT_SG_BF16 && mt_gemm_bf16_native()) {
    bf_gemm(m, n, k, alpha, a, a_rs, a_cs, b, b_cs == 1 ? b_rs : b_cs, b_cs != 1, beta, c, c_rs, (uint32_t *)ap,
            (uint32_t *)bp);
    return 0;
  }
  if (rows_takes(m, n, a_cs, b_et, b_cs != 1)) {
    rows_gemm(m, n, k, alpha, a, a_et, a_rs, (const float *)b, b_cs, beta, c, c_rs, ap);
    return 0;
  }
  bcast_gemm(m, n, k, alpha, a, a_et, a_rs, a_cs, b, b_et, b_cs == 1 ? b_rs : b_cs, b_cs != 1, beta, c, c_rs, ap,
             bp);
  return 0;
}

/* above 2^31 multiply-adds OpenBLAS is as fast or faster (2048^3: 1.03-1.06 of its time; 1024^3
   0.97-1.00, and faster in moontorch's two blocks of columns, each of which OpenBLAS repacks) */
static int sg_within_limit(int64_t m, int64_t n, int64_t k) {
  int64_t mn, mnk;
  return !__builtin_mul_overflow(m, n, &mn) && !__builtin_mul_overflow(mn, k, &mnk) && mnk <= ((int64_t)1 << 31);
}

int mt_sgemm_takes(int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs, int64_t b_rs, int64_t b_cs,
                   int64_t c_rs, int64_t c_cs) {
  return sg_within_limit(m, n, k) && mt_gemm_f32_takes_layout(m, n, k, a_rs, a_cs, b_rs, b_cs, c_rs, c_cs);
}

int mt_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t a_rs, int64_t a_cs,
             const float *b, int64_t b_rs, int64_t b_cs, float beta, float *c, int64_t c_rs, int64_t c_cs) {
  if (!sg_within_limit(m, n, k)) return -1;
  return mt_gemm_f32(m, n, k, alpha, a, MT_SG_F32, a_rs, a_cs, b, MT_SG_F32, b_rs, b_cs, beta, c, c_rs, c_cs);
}
