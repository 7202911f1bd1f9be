/* cu_random.cu: random numbers on the GPU. mt_random.c checks each sampler's
   arguments, takes the draw's counters from the generator and hands the
   draw over (mt_device_extra's draw); here every value is made as the CPU's
   fill kernels make it -- the same Philox 4x32-10 blocks in the same layout
   (mt_random.h), the same transforms, the float Box-Muller with the same
   polynomials -- so a seed gives the same numbers on either device (to the
   last bit where the arithmetic is exact, within an ulp of the math library
   elsewhere). */
#include <stdint.h>
#include <math.h>
#include "cu_loop.cuh"

#define CU_PHILOX_M0 0xD2511F53u
#define CU_PHILOX_M1 0xCD9E8D57u
#define CU_PHILOX_W0 0x9E3779B9u
#define CU_PHILOX_W1 0xBB67AE85u

/* block number c under key: four 32-bit words */
__device__ __forceinline__ void cu_philox(uint64_t c, uint32_t k0, uint32_t k1, uint32_t w[4]) {
  uint32_t c0 = (uint32_t)c, c1 = (uint32_t)(c >> 32), c2 = 0, c3 = 0;
  for (int round = 0; round < 10; round++) {
    const uint64_t p0 = (uint64_t)CU_PHILOX_M0 * c0, p1 = (uint64_t)CU_PHILOX_M1 * c2;
    const uint32_t y0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, y2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = y0;
    c2 = y2;
    k0 += CU_PHILOX_W0;
    k1 += CU_PHILOX_W1;
  }
  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;
}

/* the random bits of value i, top-aligned in 64 bits */
__device__ __forceinline__ uint64_t cu_value_bits(const mt_draw_args &d, int64_t i) {
  uint32_t w[4];
  cu_philox(d.offset + ((uint64_t)i >> d.lane_bits), d.key[0], d.key[1], w);
  if (d.words == 1) return (uint64_t)w[i & 3] << 32;
  const int j = (int)(i & 1);
  return (uint64_t)w[2 * j + 1] << 32 | w[2 * j];
}

__device__ __forceinline__ double cu_unit53(uint64_t x) { return (double)(x >> 11) * 0x1p-53; }
__device__ __forceinline__ double cu_unit53_open(uint64_t x) { return ((double)(x >> 11) + 0.5) * 0x1p-53; }

/* mt_random.c's float Box-Muller: Cephes' logf, sin and cos polynomials, a Newton sqrt */
__device__ __forceinline__ float cu_poly_logf(float x) {
  const uint32_t u = __float_as_uint(x);
  int32_t e = (int32_t)(u >> 23) - 126;
  const float m = __uint_as_float((u & 0x7fffffu) | 0x3f000000u);
  const int32_t below = m < 0.70710678f;
  e -= below;
  const float f = (below ? m + m : m) - 1.0f, z = f * f;
  float y = ((((((((7.0376836292e-2f * f - 1.1514610310e-1f) * f + 1.1676998740e-1f) * f - 1.2420140846e-1f) * f
                 + 1.4249322787e-1f) * f - 1.6668057665e-1f) * f + 2.0000714765e-1f) * f - 2.4999993993e-1f) * f
             + 3.3333331174e-1f) * f * z;
  const float fe = (float)e;
  y += -2.12194440e-4f * fe - 0.5f * z;
  return f + y + 0.693359375f * fe;
}
__device__ __forceinline__ float cu_poly_sqrtf(float x) {
  float y = __uint_as_float(0x5f3759dfu - (__float_as_uint(x) >> 1));
  y = y * (1.5f - 0.5f * x * y * y);
  y = y * (1.5f - 0.5f * x * y * y);
  y = y * (1.5f - 0.5f * x * y * y);
  return x * y;
}

/* the normal value i (of the pair i / 2), mean and std applied */
__device__ double cu_normal_value(const mt_draw_args &d, int64_t i, bool single) {
  const int64_t first = i & ~(int64_t)1;
  const uint64_t b0 = cu_value_bits(d, first), b1 = cu_value_bits(d, first + 1);
  const bool second = i & 1;
  double z;
  if (single) {
    const int32_t k1 = (int32_t)(b0 >> 33), k2 = (int32_t)(b1 >> 40);
    const float radius = cu_poly_sqrtf(-2.0f * cu_poly_logf(((float)k1 + 1.0f) * 0x1p-31f));
    const int32_t q = (k2 + (1 << 21)) >> 22;
    const float r = (float)(k2 - (q << 22)) * (float)(M_PI * 0x1p-23), zz = r * r;
    const float sin_r = ((-1.9515295891e-4f * zz + 8.3321608736e-3f) * zz - 1.6666654611e-1f) * zz * r + r;
    const float cos_r = ((2.443315711809948e-5f * zz - 1.388731625493765e-3f) * zz + 4.166664568298827e-2f) * zz * zz
                        - 0.5f * zz + 1.0f;
    const float sin_t = (q & 1) ? cos_r : sin_r, cos_t = (q & 1) ? sin_r : cos_r;
    const float v = second ? radius * ((q & 2) ? -sin_t : sin_t) : radius * (((q + 1) & 2) ? -cos_t : cos_t);
    z = d.a + d.b * (double)v;
  } else {
    const double r = sqrt(-2.0 * log(cu_unit53_open(b0))), theta = 2.0 * M_PI * cu_unit53(b1);
    z = d.a + d.b * r * (second ? sin(theta) : cos(theta));
  }
  return d.kind == MT_D_LOG_NORMAL ? exp(z) : z;
}

template <int E> __global__ void __launch_bounds__(CU_THREADS) cu_draw_kernel(char *out, int64_t n, mt_draw_args d) {
  typedef typename cu_dt<E>::st st;
  constexpr bool single = std::is_same<typename cu_dt<E>::ct, float>::value;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    char *o = out + i * (int64_t)sizeof(st);
    switch (d.kind) {
      case MT_D_UNIFORM: {
        const double v = d.a + (d.b - d.a) * ((double)(cu_value_bits(d, i) >> d.shift) * d.scale);
        cu_dt<E>::store(o, v < d.hi ? v : d.hi);
        break;
      }
      case MT_D_NORMAL:
      case MT_D_LOG_NORMAL: cu_dt<E>::store(o, cu_normal_value(d, i, single)); break;
      case MT_D_BERNOULLI: {
        const uint64_t x = cu_value_bits(d, i);
        cu_dt<E>::store(o, d.p ? cu_unit53(x) < d.p[i] : (double)(x >> 11) < d.a * 0x1p53);
        break;
      }
      case MT_D_INTEGER: {
        const uint64_t x = cu_value_bits(d, i);
        cu_dt<E>::store(o, (int64_t)((uint64_t)d.from + (d.span ? __umul64hi(x, d.span) : x)));
        break;
      }
      case MT_D_EXPONENTIAL: cu_dt<E>::store(o, -log(cu_unit53_open(cu_value_bits(d, i))) / d.a); break;
      case MT_D_GEOMETRIC: {
        const double v = ceil(log(cu_unit53_open(cu_value_bits(d, i))) / log1p(-d.a));
        cu_dt<E>::store(o, v > d.hi ? d.hi : v);
        break;
      }
      case MT_D_CAUCHY:
        cu_dt<E>::store(o, d.a + d.b * tan(M_PI * (cu_unit53_open(cu_value_bits(d, i)) - 0.5)));
        break;
    }
  }
}

template <int E> static void cu_draw_launch(char *out, int64_t n, const mt_draw_args *d, cudaStream_t s) {
  int64_t blocks = (n + CU_THREADS - 1) / CU_THREADS;
  if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
  cu_draw_kernel<E><<<(unsigned)blocks, CU_THREADS, 0, s>>>(out, n, *d);
}

CU_EXTERN int cu_draw(mt_tensor *t, const mt_draw_args *d) {
  const char *op = "random";
  if (!mt_is_contiguous(t)) return mt_fail("%s: the device draw takes a contiguous tensor", op);
  const int index = mt_device_index_of(t);
  if (cu_set_device(op, index)) return -1;
  const int64_t n = mt_numel(t);
  if (n == 0) return 0;
  cudaStream_t s = cu_stream(index);
  switch (t->dtype) {
#define CU_DRAW_CASE(E, T, N, TN, K) \
  case MT_##E: cu_draw_launch<MT_##E>(mt_data(t), n, d, s); break;
    MT_DTYPES(CU_DRAW_CASE)
#undef CU_DRAW_CASE
    default: return mt_fail("%s: unknown dtype %d", op, t->dtype);
  }
  return CU_LAUNCHED(op);
}
