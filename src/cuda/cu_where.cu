/* cu_where.cu: the kernels autograd's formulas call besides the registry's
   ops (mt_device_extra of mt_ops.h) on the GPU: where, and the fused
   activation gradients, with the semantics and errors of mt_where
   (mt_index.c) and mt_activation_grad (mt_pointwise_param.c). */
#include <stdint.h>
#include <string.h>
#include <math.h>
#include "cu_loop.cuh"

/* ---- where ----
   r = cond ? a : b over the broadcast shape, in the dtype mt_result_type
   gives a and b. The operands are converted to that dtype first (as the
   CPU's where_operand, through the same conversions), so the kernel only
   moves elements: one instantiation per element size, as the CPU's. */

/* The operands that are numbers (a Lua number, or a 0-dim CPU tensor read
   on the host): bit 0 cond, bit 1 a, bit 2 b; their pointers are unused.
   a's and b's values are the bits of the result dtype. */
template <class T> struct cu_where_scalars {
  T a, b;
  int cond;
  int mask;
};

/* The condition is read as a byte, nonzero for true, as the CPU's kernel
   does for bool and uint8; only the chosen operand is loaded. */
template <class T, class IDX>
__global__ void __launch_bounds__(CU_THREADS)
    cu_where_kernel(cu_geom_k4<IDX> g, char *out, const char *cond, const char *a, const char *b,
                    cu_where_scalars<T> sc) {
  typedef typename cu_geom_k4<IDX>::off off;
  const IDX step = (IDX)gridDim.x * blockDim.x;
  for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += step) {
    off o[4];
    cu_offsets4(g, i, o);
    const bool c = (sc.mask & 1) ? sc.cond != 0 : *(const uint8_t *)(cond + o[1]) != 0;
    T v;
    if (c) v = (sc.mask & 2) ? sc.a : *(const T *)(a + o[2]);
    else v = (sc.mask & 4) ? sc.b : *(const T *)(b + o[3]);
    *(T *)(out + o[0]) = v;
  }
}

template <class T>
static int cu_where_launch(const char *op, const cu_geom *g, char *out, const char *cond, const char *a,
                           const char *b, const char *abits, const char *bbits, int cbit, int mask, int index) {
  if (g->numel == 0) return 0;
  cu_where_scalars<T> sc;
  memset(&sc, 0, sizeof sc);
  memcpy(&sc.a, abits, sizeof(T));
  memcpy(&sc.b, bbits, sizeof(T));
  sc.cond = cbit;
  sc.mask = mask;
  int64_t blocks = (g->numel + CU_THREADS - 1) / CU_THREADS;
  if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
  cudaStream_t s = cu_stream(index);
  if (cu_geom_fits32(g))
    cu_where_kernel<T, uint32_t>
        <<<(unsigned)blocks, CU_THREADS, 0, s>>>(cu_geom4_to<uint32_t>(g), out, cond, a, b, sc);
  else
    cu_where_kernel<T, uint64_t>
        <<<(unsigned)blocks, CU_THREADS, 0, s>>>(cu_geom4_to<uint64_t>(g), out, cond, a, b, sc);
  return CU_LAUNCHED(op);
}

/* Makes *view operand op of where in dtype and shape: a converted, expanded
   GPU tensor; or a number whose bits (in dtype) go to bits, view left
   empty. A 0-dim CPU tensor is such a number, converted on the CPU as
   where_operand would, and never copied to the device. */
static int cu_where_operand(mt_tensor *view, char *bits, const mt_operand *op, int dtype, int nd,
                            const int64_t *shape) {
  if (!op->t) {
    if (op->is_int) mt_set_i64(dtype, bits, (int64_t)op->value);
    else mt_set_f64(dtype, bits, op->value);
    return 0;
  }
  mt_tensor conv = {};
  if (mt_to_dtype(&conv, op->t, dtype)) return -1;
  int rc = 0;
  if (mt_device_of(op->t) == MT_CPU) memcpy(bits, mt_data(&conv), (size_t)mt_dtypes[dtype].size);
  else rc = mt_expand(view, &conv, nd, shape);
  mt_tensor_release(&conv);
  return rc;
}

CU_EXTERN int cu_where(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b,
                       int default_float) {
  const char *op = "where";
  if (cond->dtype != MT_BOOL && cond->dtype != MT_UINT8)
    return mt_fail("%s: condition must be a bool (or uint8) tensor, got %s", op, mt_dtypes[cond->dtype].name);
  mt_operand both[2] = {*a, *b};
  const int dtype = mt_result_type(both, 2, default_float);
  int nd = cond->ndim;
  int64_t shape[MT_MAX_DIMS], prev[MT_MAX_DIMS];
  memcpy(shape, cond->shape, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < 2; i++) {
    if (!both[i].t) continue;
    memcpy(prev, shape, sizeof(int64_t) * (size_t)nd);
    if (mt_broadcast_shapes(op, nd, prev, both[i].t->ndim, both[i].t->shape, &nd, shape)) return -1;
  }
  /* the device: the first GPU tensor's (the dispatcher checked the rest;
     cond too may be a 0-dim CPU tensor beside GPU operands) */
  const mt_tensor *gpu = mt_device_of(cond) == MT_CUDA                     ? cond
                         : a->t && mt_device_of(a->t) == MT_CUDA ? a->t
                         : b->t && mt_device_of(b->t) == MT_CUDA ? b->t
                                                                 : NULL;
  if (!gpu) return mt_fail("%s: no CUDA tensor among the operands", op);
  const int index = mt_device_index_of(gpu);
  if (cu_set_device(op, index)) return -1;

  int mask = 0, cbit = 0;
  char abits[8] = {0}, bbits[8] = {0};
  mt_tensor ce = {}, av = {}, bv = {};
  int rc = 0;
  if (mt_device_of(cond) == MT_CPU) {          /* 0-dim: its one byte */
    cbit = *(const uint8_t *)mt_data(cond) != 0;
    mask |= 1;
  } else {
    rc = mt_expand(&ce, cond, nd, shape);
  }
  if (rc == 0) rc = cu_where_operand(&av, abits, a, dtype, nd, shape);
  if (rc == 0) rc = cu_where_operand(&bv, bbits, b, dtype, nd, shape);
  if (rc == 0) rc = mt_tensor_init_on(op, r, dtype, nd, shape, MT_CUDA, index);
  if (rc == 0) {
    if (!av.storage) mask |= 2;
    if (!bv.storage) mask |= 4;
    /* a number walks as a stride-0 placeholder of the output's shape */
    mt_tensor number = {};
    number.dtype = dtype;
    number.ndim = nd;
    memcpy(number.shape, shape, sizeof(int64_t) * (size_t)nd);
    const mt_tensor *ops[4] = {r, ce.storage ? &ce : &number, av.storage ? &av : &number,
                               bv.storage ? &bv : &number};
    cu_geom g;
    cu_geom_init(&g, 4, ops);
    char *out = mt_data(r);
    const char *pc = ce.storage ? mt_data(&ce) : NULL;
    const char *pa = av.storage ? mt_data(&av) : NULL, *pb = bv.storage ? mt_data(&bv) : NULL;
    switch (mt_dtypes[dtype].size) {
      case 1: rc = cu_where_launch<uint8_t>(op, &g, out, pc, pa, pb, abits, bbits, cbit, mask, index); break;
      case 2: rc = cu_where_launch<uint16_t>(op, &g, out, pc, pa, pb, abits, bbits, cbit, mask, index); break;
      case 4: rc = cu_where_launch<uint32_t>(op, &g, out, pc, pa, pb, abits, bbits, cbit, mask, index); break;
      case 8: rc = cu_where_launch<uint64_t>(op, &g, out, pc, pa, pb, abits, bbits, cbit, mask, index); break;
      default: rc = mt_fail("%s: unknown dtype %d", op, dtype);
    }
    if (rc) mt_tensor_release(r);
  }
  mt_tensor_release(&ce);
  mt_tensor_release(&av);
  mt_tensor_release(&bv);
  return rc;
}

/* ---- the fused activation gradients ----
   r = g * f'(v), as ACT_GRAD and GELU_GRAD / GELU_TANH_GRAD of
   mt_pointwise_param.c: from the result v for relu, tanh and sigmoid, from
   the input v for gelu. Functors of cu_launch's two-input form (a: g, b:
   v), computing in the dtype's compute type (float for half and bfloat16).
   The math is CUDA's (within 2 ulp, as cu_pointwise.cu's). */
namespace {
__device__ __forceinline__ float cu_erf_(float v) { return erff(v); }
__device__ __forceinline__ double cu_erf_(double v) { return erf(v); }
__device__ __forceinline__ float cu_exp_(float v) { return expf(v); }
__device__ __forceinline__ double cu_exp_(double v) { return exp(v); }
__device__ __forceinline__ float cu_tanh_(float v) { return tanhf(v); }
__device__ __forceinline__ double cu_tanh_(double v) { return tanh(v); }

struct cu_relu_grad {
  template <class ct> __device__ __forceinline__ ct operator()(ct a, ct b, ct) const { return b > 0 ? a : (ct)0; }
};
struct cu_tanh_grad {
  template <class ct> __device__ __forceinline__ ct operator()(ct a, ct b, ct) const {
    return a * ((ct)1 - b * b);
  }
};
struct cu_sigmoid_grad {
  template <class ct> __device__ __forceinline__ ct operator()(ct a, ct b, ct) const {
    return a * (b * ((ct)1 - b));
  }
};
/* d gelu / dx: exact, Phi(x) + x phi(x) */
struct cu_gelu_grad {
  template <class ct> __device__ __forceinline__ ct operator()(ct a, ct x, ct) const {
    return a * ((ct)0.5 * ((ct)1 + cu_erf_(x * (ct)0.70710678118654752440)) +
                x * (ct)0.39894228040143267794 * cu_exp_((ct)-0.5 * x * x));
  }
};
/* tanh form, with t = tanh(c (x + a x^3)): 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2) */
struct cu_gelu_tanh_grad {
  template <class ct> __device__ __forceinline__ ct operator()(ct a, ct x, ct) const {
    const ct t = cu_tanh_((ct)0.79788456080286535588 * (x + (ct)0.044715 * x * x * x));
    return a * ((ct)0.5 * ((ct)1 + t) +
                (ct)0.5 * x * ((ct)1 - t * t) * (ct)0.79788456080286535588 * ((ct)1 + (ct)3 * (ct)0.044715 * x * x));
  }
};
}  // namespace

/* The operands of one call: out, g and v (NULL when on the CPU: a 0-dim
   tensor whose value, read on the host, is passed by value). */
template <int E>
static int cu_act_run(mt_activation kind, const cu_geom *geo, char *out, const mt_tensor *g, const mt_tensor *v,
                      int index) {
  typedef typename cu_dt<E>::ct ct;
  const char *op = "activation_grad";
  cu_scalars<ct> sc;
  sc.mask = 0;
  const mt_tensor *in[2] = {g, v};
  const char *p[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    sc.value[k] = ct();
    if (mt_device_of(in[k]) == MT_CPU) {
      sc.value[k] = cu_scalar_value<E>(mt_data(in[k]));
      sc.mask |= 1 << k;
    } else {
      p[k] = mt_data(in[k]);
    }
  }
  switch (kind) {
    case MT_ACT_RELU: return cu_launch<cu_relu_grad, E, E, 2>(op, geo, out, p[0], p[1], sc, ct(), index);
    case MT_ACT_TANH: return cu_launch<cu_tanh_grad, E, E, 2>(op, geo, out, p[0], p[1], sc, ct(), index);
    case MT_ACT_SIGMOID: return cu_launch<cu_sigmoid_grad, E, E, 2>(op, geo, out, p[0], p[1], sc, ct(), index);
    case MT_ACT_GELU: return cu_launch<cu_gelu_grad, E, E, 2>(op, geo, out, p[0], p[1], sc, ct(), index);
    case MT_ACT_GELU_TANH: return cu_launch<cu_gelu_tanh_grad, E, E, 2>(op, geo, out, p[0], p[1], sc, ct(), index);
  }
  return mt_fail("%s: unknown activation %d", op, (int)kind);
}

CU_EXTERN int cu_activation_grad(mt_tensor *r, const mt_tensor *g, const mt_tensor *v, mt_activation kind) {
  const char *op = "activation_grad";
  char b1[128], b2[128];
  if (!mt_dtype_is_float((mt_dtype)v->dtype))
    return mt_fail("%s: needs a float tensor, got %s (convert with x:float())", op, mt_dtypes[v->dtype].name);
  if (g->dtype != v->dtype || !mt_same_shape(g, v))
    return mt_fail("activation_grad: gradient %s %s for a value %s %s", mt_dtypes[g->dtype].name,
                   mt_shape_str(g, b1, sizeof b1), mt_dtypes[v->dtype].name, mt_shape_str(v, b2, sizeof b2));
  if (kind < MT_ACT_RELU || kind > MT_ACT_GELU_TANH) return mt_fail("%s: unknown activation %d", op, (int)kind);
  /* the device: v's, or g's when v is a 0-dim CPU tensor beside it */
  const mt_tensor *gpu = mt_device_of(v) == MT_CUDA ? v : mt_device_of(g) == MT_CUDA ? g : NULL;
  if (!gpu) return mt_fail("%s: no CUDA tensor among the operands", op);
  const int index = mt_device_index_of(gpu);
  if (cu_set_device(op, index)) return -1;
  if (mt_tensor_init_on(op, r, v->dtype, v->ndim, v->shape, MT_CUDA, index)) return -1;
  /* a CPU operand walks as a stride-0 placeholder of v's shape */
  mt_tensor number = {};
  number.dtype = v->dtype;
  number.ndim = v->ndim;
  memcpy(number.shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  const mt_tensor *ops[3] = {r, mt_device_of(g) == MT_CPU ? &number : g, mt_device_of(v) == MT_CPU ? &number : v};
  cu_geom geo;
  cu_geom_init(&geo, 3, ops);
  char *out = mt_data(r);
  int rc;
  switch (v->dtype) {
    case MT_FLOAT32: rc = cu_act_run<MT_FLOAT32>(kind, &geo, out, g, v, index); break;
    case MT_FLOAT64: rc = cu_act_run<MT_FLOAT64>(kind, &geo, out, g, v, index); break;
    case MT_FLOAT16: rc = cu_act_run<MT_FLOAT16>(kind, &geo, out, g, v, index); break;
    case MT_BFLOAT16: rc = cu_act_run<MT_BFLOAT16>(kind, &geo, out, g, v, index); break;
    default: rc = mt_fail("%s: no CUDA kernel for %s tensors", op, mt_dtypes[v->dtype].name);
  }
  if (rc) mt_tensor_release(r);
  return rc;
}
