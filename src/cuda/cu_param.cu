/* cu_param.cu: the loops of the elementwise ops with parameters on the GPU
   (clamp with number bounds, softplus, leaky_relu, addcmul, addcdiv, lerp).
   mt_pointwise_param.c checks their operands, picks the result dtype, and
   hands over views of one dtype and shape on the device (mt_device_extra's
   param_loop); each kernel here is the expression of its CPU kernel there,
   in the dtype's compute type (float for half and bfloat16). */
#include <stdint.h>
#include <string.h>
#include <math.h>
#include "cu_loop.cuh"

/* The compared forms let a NaN element through, as the CPU's CLAMP_LO/HI. */
template <class ct> struct cu_pk_args {
  ct p0, p1;
};

template <int KIND, class ct> __device__ __forceinline__ ct cu_pk_apply(ct a, ct b, ct c, const cu_pk_args<ct> &p) {
  if constexpr (KIND == MT_PK_CLAMP_LO) {
    return !(a <= p.p0) ? a : p.p0;
  } else if constexpr (KIND == MT_PK_CLAMP_HI) {
    return !(a >= p.p1) ? a : p.p1;
  } else if constexpr (KIND == MT_PK_CLAMP_BOTH) {
    const ct v = !(a <= p.p0) ? a : p.p0;
    return !(v >= p.p1) ? v : p.p1;
  } else if constexpr (KIND == MT_PK_SOFTPLUS) {     /* beta p0, threshold p1 */
    return a * p.p0 > p.p1 ? a : (ct)log1p(exp(a * p.p0)) / p.p0;   /* CUDA's float or double math */
  } else if constexpr (KIND == MT_PK_LEAKY_RELU) {
    return a > 0 ? a : a * p.p0;
  } else if constexpr (KIND == MT_PK_ADDCMUL) {
    if constexpr (std::is_integral<ct>::value)       /* wraps, as MT_WRAP: the low bits of the product */
      return (ct)(int64_t)((uint64_t)(int64_t)a + (uint64_t)(int64_t)p.p0 * (uint64_t)(int64_t)b * (uint64_t)(int64_t)c);
    else
      return a + p.p0 * b * c;
  } else if constexpr (KIND == MT_PK_ADDCDIV) {
    return a + p.p0 * b / c;
  } else if constexpr (KIND == MT_PK_LERP_SCALAR) {  /* from the nearer end, as the CPU's LERP */
    return fabs((double)p.p0) < 0.5 ? a + p.p0 * (b - a) : b - (b - a) * ((ct)1 - p.p0);
  } else {                                           /* MT_PK_LERP_TENSOR */
    return fabs((double)c) < 0.5 ? a + c * (b - a) : b - (b - a) * ((ct)1 - c);
  }
}

template <int KIND, int E, int NIN, class IDX>
__global__ void __launch_bounds__(CU_THREADS)
    cu_pk_kernel(cu_geom_k4<IDX> g, char *out, const char *in0, const char *in1, const char *in2,
                 cu_pk_args<typename cu_dt<E>::ct> p) {
  typedef typename cu_dt<E>::ct ct;
  typedef typename cu_geom_k4<IDX>::off off;
  const IDX step = (IDX)gridDim.x * blockDim.x;
  for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += step) {
    off o[4];
    cu_offsets4(g, i, o);
    const ct a = cu_dt<E>::load(in0 + o[1]);
    const ct b = NIN > 1 ? cu_dt<E>::load(in1 + o[2]) : ct();
    const ct c = NIN > 2 ? cu_dt<E>::load(in2 + o[3]) : ct();
    cu_dt<E>::store(out + o[0], cu_pk_apply<KIND>(a, b, c, p));
  }
}

/* Each dtype's kind (MT_DTYPES' last column: 0 bool, 1 integer, 2 float). */
static constexpr int cu_pk_kind[MT_NDTYPES] = {
#define CU_KIND(E, T, N, TN, K) K,
    MT_DTYPES(CU_KIND)
#undef CU_KIND
};

/* The kernels that exist for dtype E: clamp and addcmul on numbers of every
   kind but bool, the rest on floats (the CPU's tables). */
template <int KIND, int E> static constexpr bool cu_pk_reachable() {
  return KIND == MT_PK_CLAMP_LO || KIND == MT_PK_CLAMP_HI || KIND == MT_PK_CLAMP_BOTH || KIND == MT_PK_ADDCMUL
             ? cu_pk_kind[E] != 0
             : cu_pk_kind[E] == 2;
}

template <int KIND, int E, int NIN>
static int cu_pk_launch(const char *op, const cu_geom *g, char *out, const char *const *in, const double *p,
                        const int64_t *pi, int index) {
  if constexpr (!cu_pk_reachable<KIND, E>()) {
    return mt_fail("%s: no CUDA kernel for %s tensors", op, mt_dtypes[E].name);
  } else {
    typedef typename cu_dt<E>::ct ct;
    cu_pk_args<ct> args;
    const bool is_int = cu_pk_kind[E] != 2;
    args.p0 = is_int ? (ct)pi[0] : (ct)p[0];
    args.p1 = is_int ? (ct)pi[1] : (ct)p[1];
    if (g->numel == 0) return 0;
    int64_t blocks = (g->numel + CU_THREADS - 1) / CU_THREADS;
    if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
    cudaStream_t s = cu_stream(index);
    if (cu_geom_fits32(g))
      cu_pk_kernel<KIND, E, NIN, uint32_t>
          <<<(unsigned)blocks, CU_THREADS, 0, s>>>(cu_geom4_to<uint32_t>(g), out, in[0], in[1], in[2], args);
    else
      cu_pk_kernel<KIND, E, NIN, uint64_t>
          <<<(unsigned)blocks, CU_THREADS, 0, s>>>(cu_geom4_to<uint64_t>(g), out, in[0], in[1], in[2], args);
    return CU_LAUNCHED(op);
  }
}

template <int KIND, int NIN>
static int cu_pk_dtype(const char *op, int dtype, const cu_geom *g, char *out, const char *const *in,
                       const double *p, const int64_t *pi, int index) {
  switch (dtype) {
#define CU_PK_CASE(E, T, N, TN, K) \
  case MT_##E: return cu_pk_launch<KIND, MT_##E, NIN>(op, g, out, in, p, pi, index);
    MT_DTYPES(CU_PK_CASE)
#undef CU_PK_CASE
  }
  return mt_fail("%s: unknown dtype %d", op, dtype);
}

CU_EXTERN int cu_param_loop(mt_param_kernel kernel, mt_tensor *out, const mt_tensor *const *ins, int nin,
                            const double *p, const int64_t *pi) {
  if ((int)kernel < 0 || kernel > MT_PK_LERP_TENSOR) return mt_fail("cu_param_loop: unknown kernel %d", (int)kernel);
  const char *op = mt_param_kernel_name(kernel);
  if (nin < 1 || nin > 3) return mt_fail("%s: %d inputs", op, nin);
  for (int k = 0; k < nin; k++)
    if (ins[k]->dtype != out->dtype || !mt_same_shape(ins[k], out))
      return mt_fail("%s: the device loop takes operands of the output's dtype and shape", op);
  const int index = mt_device_index_of(out);
  if (cu_set_device(op, index)) return -1;
  const mt_tensor *ops[4] = {out, ins[0], nin > 1 ? ins[1] : ins[0], nin > 2 ? ins[2] : ins[0]};
  cu_geom g;
  cu_geom_init(&g, 4, ops);
  const char *in[3] = {mt_data(ins[0]), nin > 1 ? mt_data(ins[1]) : NULL, nin > 2 ? mt_data(ins[2]) : NULL};
  char *o = mt_data(out);
  switch (kernel) {
    case MT_PK_CLAMP_LO: return cu_pk_dtype<MT_PK_CLAMP_LO, 1>(op, out->dtype, &g, o, in, p, pi, index);
    case MT_PK_CLAMP_HI: return cu_pk_dtype<MT_PK_CLAMP_HI, 1>(op, out->dtype, &g, o, in, p, pi, index);
    case MT_PK_CLAMP_BOTH: return cu_pk_dtype<MT_PK_CLAMP_BOTH, 1>(op, out->dtype, &g, o, in, p, pi, index);
    case MT_PK_SOFTPLUS: return cu_pk_dtype<MT_PK_SOFTPLUS, 1>(op, out->dtype, &g, o, in, p, pi, index);
    case MT_PK_LEAKY_RELU: return cu_pk_dtype<MT_PK_LEAKY_RELU, 1>(op, out->dtype, &g, o, in, p, pi, index);
    case MT_PK_ADDCMUL: return cu_pk_dtype<MT_PK_ADDCMUL, 3>(op, out->dtype, &g, o, in, p, pi, index);
    case MT_PK_ADDCDIV: return cu_pk_dtype<MT_PK_ADDCDIV, 3>(op, out->dtype, &g, o, in, p, pi, index);
    case MT_PK_LERP_SCALAR: return cu_pk_dtype<MT_PK_LERP_SCALAR, 2>(op, out->dtype, &g, o, in, p, pi, index);
    case MT_PK_LERP_TENSOR: return cu_pk_dtype<MT_PK_LERP_TENSOR, 3>(op, out->dtype, &g, o, in, p, pi, index);
  }
  return mt_fail("%s: unknown kernel", op);
}
