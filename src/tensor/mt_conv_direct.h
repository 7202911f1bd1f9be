/* mt_conv_direct.h: inside the convolution (not an API). The direct float32 kernel
   (mt_conv_direct_body.h) is compiled once per x86-64 level -- baseline, AVX2 + FMA
   (x86-64-v3) and AVX-512 (x86-64-v4) -- as mt_conv_isa_{base,v3,v4}.c, each with its
   own -march (Makefile), since its vector width and tiles are fixed when it is compiled;
   mt_conv.c picks one table at its first use from cpuid. Helpers the kernel shares with
   the GEMM path are here. */
#ifndef MT_CONV_DIRECT_H
#define MT_CONV_DIRECT_H

#include "mt_conv.h"
#include "mt_parallel.h"

/* One level's entry points (all float32, contiguous operands; 0 or -1 and mt_fail). */
typedef struct {
  int level;            /* as mt_cpu_level counts: 0 baseline, 1 AVX2 + FMA, 2 AVX-512 */
  /* y (n, o, oh, ow) = x conv w, plus bias (o) where not NULL */
  int (*forward)(float *y, const float *x, const float *w, const float *bias, const mt_conv_geom *g);
  /* gw (o, cg, kh, kw) and, when gb is not NULL (only where fuses_bias), gb (o) */
  int (*weight_grad)(float *gw, float *gb, const float *x, const float *gy, const mt_conv_geom *g);
  /* gx (n, c, h, w) of a stride-1 convolution */
  int (*input_grad)(float *gx, const float *gy, const float *w, const mt_conv_geom *g);
  /* whether weight_grad also gives the bias gradient */
  int (*fuses_bias)(const mt_conv_geom *g);
} mt_conv_direct_kernels;

extern const mt_conv_direct_kernels mt_conv_direct_base;
#if defined(__x86_64__)
extern const mt_conv_direct_kernels mt_conv_direct_v3, mt_conv_direct_v4;
#endif

/* Threads to spread the images over: 1 unless threads are on, there is more
   than one image, and each thread gets at least CONV_THREAD_MACS of the
   convolution's multiply-adds (waking a thread costs a few microseconds: a
   smaller share runs faster on one). The count is an estimate in double, not a
   size: it only chooses how many threads to wake. */
#define CONV_THREAD_MACS 262144.0
static inline int image_threads(const mt_conv_geom *g) {
  int t = mt_get_num_threads();
  if (t < 1) t = 1;
  if (g->n < t) t = g->n < 1 ? 1 : (int)g->n;
  const double macs = (double)g->n * (double)g->o * (double)(g->c / (g->groups > 0 ? g->groups : 1)) *
                      (double)g->kh * (double)g->kw * (double)g->oh * (double)g->ow;
  const double by_work = macs / CONV_THREAD_MACS;
  if (by_work < t) t = by_work < 1 ? 1 : (int)by_work;
  return t;
}

/* the columns j of one output row whose input column j * s - p + off lies in [0, w) */
static inline void valid_cols(int64_t ow, int64_t s, int64_t start, int64_t w, int64_t *j0, int64_t *j1) {
  int64_t lo = start >= 0 ? 0 : (-start + s - 1) / s;           /* first j with start + j * s >= 0 */
  int64_t hi = w - start <= 0 ? 0 : (w - start + s - 1) / s;    /* first j with start + j * s >= w */
  *j0 = lo < ow ? lo : ow;
  *j1 = hi < *j0 ? *j0 : (hi < ow ? hi : ow);
}

#endif
