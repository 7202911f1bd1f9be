/* mt_kernel.h: per-dtype load/store and compute types, so one kernel body
   written with MT_LOAD_##E / MT_STORE_##E serves every dtype of MT_DTYPES. */
#ifndef MT_KERNEL_H
#define MT_KERNEL_H

#include <math.h>
#include "mt_dtype.h"

/* compute type: half and bfloat16 compute in float */
#define MT_CT_FLOAT32 float
#define MT_CT_FLOAT64 double
#define MT_CT_FLOAT16 float
#define MT_CT_BFLOAT16 float
#define MT_CT_INT8 int8_t
#define MT_CT_UINT8 uint8_t
#define MT_CT_INT16 int16_t
#define MT_CT_INT32 int32_t
#define MT_CT_INT64 int64_t
#define MT_CT_BOOL bool

#define MT_LOAD_PLAIN(T, p) (*(const T *)(p))
#define MT_LOAD_FLOAT32(p) MT_LOAD_PLAIN(float, p)
#define MT_LOAD_FLOAT64(p) MT_LOAD_PLAIN(double, p)
#define MT_LOAD_FLOAT16(p) mt_half_to_float(*(const mt_half *)(p))
#define MT_LOAD_BFLOAT16(p) mt_bf16_to_float(*(const mt_bf16 *)(p))
#define MT_LOAD_INT8(p) MT_LOAD_PLAIN(int8_t, p)
#define MT_LOAD_UINT8(p) MT_LOAD_PLAIN(uint8_t, p)
#define MT_LOAD_INT16(p) MT_LOAD_PLAIN(int16_t, p)
#define MT_LOAD_INT32(p) MT_LOAD_PLAIN(int32_t, p)
#define MT_LOAD_INT64(p) MT_LOAD_PLAIN(int64_t, p)
#define MT_LOAD_BOOL(p) MT_LOAD_PLAIN(bool, p)

/* Integer arithmetic wraps in two's complement, as PyTorch's does, without
   C's undefined signed overflow: int and int64 results compute in their
   unsigned twins (narrower operands promote to int); floats are untouched. */
#define MT_WRAP(a, op, b) _Generic((a) op (b),                                \
  int32_t: (int32_t)((uint32_t)(a) op (uint32_t)(b)),                         \
  int64_t: (int64_t)((uint64_t)(a) op (uint64_t)(b)),                         \
  default: (a) op (b))
#define MT_WRAP_NEG(v) _Generic(-(v),                                         \
  int32_t: (int32_t)(0u - (uint32_t)(v)),                                     \
  int64_t: (int64_t)(0u - (uint64_t)(v)),                                     \
  default: -(v))

#define MT_STORE_FLOAT32(p, v) (*(float *)(p) = (float)(v))
#define MT_STORE_FLOAT64(p, v) (*(double *)(p) = (double)(v))
#define MT_STORE_FLOAT16(p, v) (*(mt_half *)(p) = mt_float_to_half((float)(v)))
#define MT_STORE_BFLOAT16(p, v) (*(mt_bf16 *)(p) = mt_float_to_bf16((float)(v)))
#define MT_STORE_INT8(p, v) (*(int8_t *)(p) = (int8_t)(v))
#define MT_STORE_UINT8(p, v) (*(uint8_t *)(p) = (uint8_t)(v))
#define MT_STORE_INT16(p, v) (*(int16_t *)(p) = (int16_t)(v))
#define MT_STORE_INT32(p, v) (*(int32_t *)(p) = (int32_t)(v))
#define MT_STORE_INT64(p, v) (*(int64_t *)(p) = (int64_t)(v))
#define MT_STORE_BOOL(p, v) (*(bool *)(p) = (bool)(v))

/* The float math below is inlined into every elementwise loop, whatever the
   compiler's budget for a file with hundreds of kernels: a call left out of
   line keeps its loop scalar. */
#define MT_MATH_INLINE static inline __attribute__((always_inline))

/* cond ? a : b through a bit mask: ternaries at the end of a function become
   branches after inlining, which stop the loop around it from vectorising */
MT_MATH_INLINE float mt_pick(int cond, float a, float b) {
  union { float f; uint32_t u; } x = {a}, y = {b};
  const uint32_t m = -(uint32_t)(cond != 0);
  x.u = (x.u & m) | (y.u & ~m);
  return x.f;
}
/* exp for float32 without a library call, so loops over it vectorise
   (Cephes' expf: exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln(2)/2,
   a degree-6 polynomial for exp(r); about 1 ulp). 2^n is applied in two
   halves so results down to the subnormal range stay exact; overflow gives
   inf, NaN stays NaN. Every branch is a select. */
MT_MATH_INLINE float mt_expf(float x) {
  float xc = x > 88.8f ? 88.8f : (x < -104.0f ? -104.0f : x);
  xc = xc == xc ? xc : 0.0f;
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f + n * 2.12194440e-4f;
  float q = 1.9875691500e-4f;
  q = q * r + 1.3981999507e-3f;
  q = q * r + 8.3334519073e-3f;
  q = q * r + 4.1665795894e-2f;
  q = q * r + 1.6666665459e-1f;
  q = q * r + 5.0000001201e-1f;
  q = q * r * r + r + 1.0f;
  int32_t ni = (int32_t)n, n1 = ni / 2, n2 = ni - n1;
  union { uint32_t u; float f; } s1, s2;
  s1.u = (uint32_t)(n1 + 127) << 23;
  s2.u = (uint32_t)(n2 + 127) << 23;
  float res = q * s1.f * s2.f;
  res = x > 88.72283935546875f ? INFINITY : res;
  return x == x ? res : x;
}
/* exp for a compute type: the vectorisable one for float, libm otherwise */
#define mt_exp(v) _Generic((v), float: mt_expf, default: exp)(v)

/* log, log2, log1p and expm1 for float32 without library calls, written to
   vectorise. log and log2: Cephes' logf core -- x = 2^e (1 + f) with
   1 + f in [sqrt(1/2), sqrt(2)), ln(1 + f) = f - f^2/2 + f^3 p(f) -- within
   0.85 and 1.44 ulp; log1p by Goldberg's correction log(u) * x / (u - 1)
   with u = 1 + x rounded, within 2.5 ulp; expm1 below, within 1.8 ulp
   (every third float checked against the C library's double functions).
   Subnormals, zeros, infinities, negatives and NaN give the C library's
   values. */
/* ln(1 + f) - f for x = 2^e (1 + f), and f and e */
MT_MATH_INLINE float mt_log_parts(float x, float *f_out, float *e_out) {
  const int sub = x < 1.17549435e-38f;                 /* subnormal: scale into the normal range */
  x = sub ? x * 8388608.0f : x;
  union { float f; uint32_t u; } b = {x};
  int32_t e = (int32_t)(b.u >> 23) - 126 - (sub ? 23 : 0);
  b.u = (b.u & 0x7fffffu) | 0x3f000000u;              /* m in [0.5, 1) */
  const int below = b.f < 0.70710678f;
  e -= below;
  const float f = (below ? b.f + b.f : b.f) - 1.0f, z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  *f_out = f;
  *e_out = (float)e;
  return y * f * z - 0.5f * z;
}
/* the value of log for x <= 0, inf and NaN, else `normal`: one select on a
   mask, so that the compiler keeps the loop straight */
MT_MATH_INLINE float mt_log_special(float x, float normal) {
  union { float f; uint32_t u; } n = {normal}, s;
  s.f = x == 0.0f ? -INFINITY : (x > 0.0f ? INFINITY : NAN);
  const uint32_t keep = -(uint32_t)((x > 0.0f) & (x < INFINITY));
  n.u = (n.u & keep) | (s.u & ~keep);
  return n.f;
}
MT_MATH_INLINE float mt_logf(float x) {
  float f, e, y = mt_log_parts(x, &f, &e);
  return mt_log_special(x, (y - 2.12194440e-4f * e) + f + 0.693359375f * e);
}
MT_MATH_INLINE float mt_log2f(float x) {
  float f, e, y = mt_log_parts(x, &f, &e);
  const float l = 0.44269504088896340736f;      /* log2(e) - 1 */
  return mt_log_special(x, ((y * l + f * l) + y + f) + e);
}
/* log1p by Goldberg's correction: u = 1 + x rounded, then log(u) * x / (u - 1) */
MT_MATH_INLINE float mt_log1pf(float x) {
  const float u = 1.0f + x, d = u - 1.0f;
  const float r = mt_logf(u) * (x / mt_pick(d == 0.0f, 1.0f, d));
  float out = mt_pick(d == 0.0f, x, r);              /* 1 + x == 1: x */
  out = mt_pick(x == INFINITY, INFINITY, out);
  return mt_pick(x != x, x, out);
}
/* expm1: below |x| = 0.5 its Taylor series to x^9 / 9! (the rest is under
   2^-30 of the value), above exp(x) - 1, whose rounding the subtraction
   magnifies at most 2.6 times there */
MT_MATH_INLINE float mt_expm1f(float x) {
  float p = 2.75573192e-6f;
  p = p * x + 2.48015873e-5f;
  p = p * x + 1.98412698e-4f;
  p = p * x + 1.38888889e-3f;
  p = p * x + 8.33333333e-3f;
  p = p * x + 4.16666667e-2f;
  p = p * x + 1.66666667e-1f;
  p = p * x + 0.5f;
  const float near_zero = p * x * x + x, far = mt_expf(x) - 1.0f;
  return mt_pick(x == 0.0f, x, mt_pick(fabsf(x) < 0.5f, near_zero, far));   /* expm1(-0) = -0 */
}
/* the compute type's versions: the vectorisable ones for float, libm otherwise */
#define mt_log(v) _Generic((v), float: mt_logf, default: log)(v)
#define mt_log2(v) _Generic((v), float: mt_log2f, default: log2)(v)
#define mt_log1p(v) _Generic((v), float: mt_log1pf, default: log1p)(v)
#define mt_expm1(v) _Generic((v), float: mt_expm1f, default: expm1)(v)

/* sin, cos, atan, acos, sinh, cosh and erfc for float32 from glibc's vector
   math library (libmvec, linked by the build): declared as SIMD functions,
   they let the compiler vectorise a loop over them, calling their 16-lane
   (AVX-512) or 8-lane (AVX2) forms; within 2.5 ulp over every seventh float
   of the whole range (libm's double functions through float were one value
   at a time, 5-10 times PyTorch's time). tan, asin and log10 stay on libm:
   their vector forms err by 3-4 ulp. */
#if defined(__x86_64__)
#pragma omp declare simd notinbranch
float sinf(float);
#pragma omp declare simd notinbranch
float cosf(float);
#pragma omp declare simd notinbranch
float atanf(float);
#pragma omp declare simd notinbranch
float acosf(float);
#pragma omp declare simd notinbranch
float sinhf(float);
#pragma omp declare simd notinbranch
float coshf(float);
#pragma omp declare simd notinbranch
float erfcf(float);
#endif
#define mt_sin(v) _Generic((v), float: sinf, default: sin)(v)
#define mt_cos(v) _Generic((v), float: cosf, default: cos)(v)
#define mt_atan(v) _Generic((v), float: atanf, default: atan)(v)
#define mt_acos(v) _Generic((v), float: acosf, default: acos)(v)
#define mt_sinh(v) _Generic((v), float: sinhf, default: sinh)(v)
#define mt_cosh(v) _Generic((v), float: coshf, default: cosh)(v)
#define mt_erfc(v) _Generic((v), float: erfcf, default: erfc)(v)

/* sqrt in the compute type: sqrtf for float (the build has no errno for
   libm, -fno-math-errno, so it is one vector instruction), sqrt otherwise */
#define mt_sqrt(v) _Generic((v), float: sqrtf, default: sqrt)(v)

/* tanh for float32 without a library call (libm's tanh of a float goes
   through double, one value at a time): Cephes' tanhf, an odd polynomial
   below |x| = 0.625 and 1 - 2 / (exp(2|x|) + 1) above, both computed and one
   selected, the sign of x put back (tanh(-0) = -0); within 1.32 ulp of the
   exact value over every seventh float. Large |x| gives +-1, NaN stays NaN. */
MT_MATH_INLINE float mt_tanhf(float x) {
  float t = fabsf(x), z = t * t;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float near_zero = p * z * t + t;
  float far = 1.0f - 2.0f / (mt_expf(2.0f * t) + 1.0f);
  return copysignf(t < 0.625f ? near_zero : far, x);
}
/* tanh for a compute type: the vectorisable one for float, libm otherwise */
#define mt_tanh(v) _Generic((v), float: mt_tanhf, default: tanh)(v)

/* erf for float32 without a library call, so loops over it vectorise (GELU's
   path): for |x| <= 0.927734375, erf(x) = x + x p(x^2); above, erf(x) =
   1 - exp(q(|x|)) with the sign of x, where p and q are minimax polynomials
   (Norbert Juffa's erff). Both halves are computed and one selected, so there
   is no branch; within 1.03 ulp of the exact value, tested over every
   seventh float. Large |x| gives +-1, NaN stays NaN. */
MT_MATH_INLINE float mt_erff(float x) {
  float t = fabsf(x), s = x * x;
  float q = -1.72853470e-5f * t + 3.83197126e-4f;
  q = q * s + (-3.88396438e-3f * t + 2.42546219e-2f);
  q = q * t - 1.06777877e-1f;
  q = q * t - 6.34846687e-1f;
  q = q * t - 1.28717512e-1f;
  q = q * t - t;
  float tail = copysignf(1.0f - mt_expf(q), x);
  float p = -5.96761703e-4f;
  p = p * s + 4.99119423e-3f;
  p = p * s - 2.67681349e-2f;
  p = p * s + 1.12819925e-1f;
  p = p * s - 3.76125336e-1f;
  p = p * s + 1.28379166e-1f;
  float near_zero = p * x + x;
  return t > 0.927734375f ? tail : near_zero;
}
/* erf for a compute type: the vectorisable one for float, libm otherwise */
#define mt_erf(v) _Generic((v), float: mt_erff, default: erf)(v)

/* The floating sublist of MT_DTYPES, same X signature. */
#define MT_FLOAT_DTYPES(X)                        \
  X(FLOAT32, float, "float32", "Float", 2)        \
  X(FLOAT64, double, "float64", "Double", 2)      \
  X(FLOAT16, mt_half, "float16", "Half", 2)       \
  X(BFLOAT16, mt_bf16, "bfloat16", "BFloat16", 2)

#endif
