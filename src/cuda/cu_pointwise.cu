/* cu_pointwise.cu: every elementwise op of the registry on the GPU, generated
   from its kernel column (src/ops/registry.h) as the CPU's (mt_pointwise.c)
   are, with the same dtype, in-place and error rules (mt_pointwise_rules.h). */
#include <stdint.h>
#include <math.h>
#include "cu_loop.cuh"
/* static inline rules over the engine's C API, which cu.h declared extern "C" */
#include "../tensor/mt_pointwise_rules.h"

/* The generated kernels instantiate comparisons like v < 0 for unsigned
   types, where they are constant: that is intended (as in mt_pointwise.c). */
#pragma nv_diag_suppress 186
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wbool-operation"
#pragma GCC diagnostic ignored "-Wint-in-bool-context"
#pragma GCC diagnostic ignored "-Wbool-compare"

/* ---- the functions the registry's expressions call, on the device ----
   Overloads for float and double (half and bfloat16 compute in float), and
   for the integer types where an integer dtype reaches them; each has the
   semantics of its C version in mt_kernel.h and mt_pointwise.c. The float
   ones are CUDA's (within 2 ulp where the CPU's are within 1 to 2.5). */
#define CU_MATH(name, fn)                                                          \
  __device__ __forceinline__ float mt_##name(float v) { return fn##f(v); }         \
  __device__ __forceinline__ double mt_##name(double v) { return fn(v); }
CU_MATH(exp, exp)
CU_MATH(expm1, expm1)
CU_MATH(log, log)
CU_MATH(log1p, log1p)
CU_MATH(log2, log2)
CU_MATH(sqrt, sqrt)
CU_MATH(sin, sin)
CU_MATH(cos, cos)
CU_MATH(atan, atan)
CU_MATH(acos, acos)
CU_MATH(sinh, sinh)
CU_MATH(cosh, cosh)
CU_MATH(tanh, tanh)
CU_MATH(erf, erf)
CU_MATH(erfc, erfc)
#undef CU_MATH

/* Integer arithmetic wraps in two's complement, as MT_WRAP and MT_WRAP_NEG
   of mt_kernel.h: int and int64 results compute in their unsigned twins
   (narrower operands promote to int, as in C); floats are untouched. */
template <class R> struct cu_twin { typedef R type; };
template <> struct cu_twin<int32_t> { typedef uint32_t type; };
template <> struct cu_twin<int64_t> { typedef uint64_t type; };
#define CU_TWIN(a, op, b) typename cu_twin<decltype((a) op (b))>::type
#define MT_WRAP(a, op, b) ((decltype((a) op (b)))((CU_TWIN(a, op, b))(a) op (CU_TWIN(a, op, b))(b)))
template <class T> __device__ __forceinline__ auto cu_wrap_neg(T v) {
  typedef decltype(-v) R;
  if constexpr (std::is_same<R, int32_t>::value) return (int32_t)(0u - (uint32_t)v);
  else if constexpr (std::is_same<R, int64_t>::value) return (int64_t)((uint64_t)0 - (uint64_t)v);
  else return -v;
}
#define MT_WRAP_NEG(v) cu_wrap_neg(v)

/* Integer fmod, remainder and division by zero set this (per device, as
   every __device__ variable); cu_binary clears it before such an op and
   reads it after, on the op's stream, and raises (ZeroDivisionError). Every
   writer stores 1, so races are benign. */
__device__ int cu_int_div_by_zero;
__device__ __forceinline__ int64_t cu_zero_divisor() {
  cu_int_div_by_zero = 1;
  return 0;
}
template <class T> using cu_if_int = typename std::enable_if<std::is_integral<T>::value, int>::type;

__device__ __forceinline__ float mt_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double mt_fmod(double a, double b) { return fmod(a, b); }
template <class T, cu_if_int<T> = 0> __device__ __forceinline__ int64_t mt_fmod(T x, T y) {
  const int64_t a = x, b = y;
  return b == 0 ? cu_zero_divisor() : (b == -1 ? 0 : a % b);
}

template <class T> __device__ __forceinline__ T cu_remainder_f(T a, T b) {
  T m = fmod(a, b);
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
__device__ __forceinline__ float mt_remainder(float a, float b) { return cu_remainder_f(a, b); }
__device__ __forceinline__ double mt_remainder(double a, double b) { return cu_remainder_f(a, b); }
template <class T, cu_if_int<T> = 0> __device__ __forceinline__ int64_t mt_remainder(T x, T y) {
  const int64_t a = x, b = y;
  if (b == 0) return cu_zero_divisor();
  if (b == -1) return 0;
  int64_t m = a % b;
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

__device__ __forceinline__ float mt_pow(float a, float b) { return b == 2.0f ? a * a : powf(a, b); }
__device__ __forceinline__ double mt_pow(double a, double b) { return pow(a, b); }
/* Integer powers: a negative exponent truncates 1/a^n toward zero. */
template <class T, cu_if_int<T> = 0> __device__ __forceinline__ int64_t mt_pow(T x, T y) {
  const int64_t a = x;
  int64_t b = y;
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  uint64_t r = 1, base = (uint64_t)a;
  while (b) {
    if (b & 1) r *= base;
    base *= base;
    b >>= 1;
  }
  return (int64_t)r;
}

/* Floor division as Python's //, from the exact remainder (mt_pointwise.c
   says why); a zero quotient keeps the sign of a / b. */
template <class T> __device__ __forceinline__ T cu_div_floor_f(T a, T b) {
  if (b == 0) return a / b;
  T m = fmod(a, b), q = (a - m) / b;
  if (m != 0 && (m < 0) != (b < 0)) q -= 1;
  if (q == 0) return copysign((T)0, a / b);
  T f = floor(q);
  return q - f > (T)0.5 ? f + 1 : f;
}
__device__ __forceinline__ float mt_div_floor(float a, float b) { return cu_div_floor_f(a, b); }
__device__ __forceinline__ double mt_div_floor(double a, double b) { return cu_div_floor_f(a, b); }
__device__ __forceinline__ float mt_div_trunc(float a, float b) { return truncf(a / b); }
__device__ __forceinline__ double mt_div_trunc(double a, double b) { return trunc(a / b); }
/* Integers: by -1 is a negation that wraps (the most negative value stays). */
__device__ __forceinline__ int64_t cu_div_trunc_i(int64_t a, int64_t b) {
  if (b == 0) return cu_zero_divisor();
  return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
template <class T, cu_if_int<T> = 0> __device__ __forceinline__ int64_t mt_div_trunc(T a, T b) {
  return cu_div_trunc_i(a, b);
}
template <class T, cu_if_int<T> = 0> __device__ __forceinline__ int64_t mt_div_floor(T x, T y) {
  const int64_t a = x, b = y, q = cu_div_trunc_i(a, b);
  return b != 0 && b != -1 && a % b != 0 && (a < 0) != (b < 0) ? q - 1 : q;
}

/* ---- one functor per op, from the registry's kernel column ---- */
#define CU_UNARY_FN(name, expr, E, ...)                                             \
  struct cu_op_##name {                                                             \
    template <class ct> __device__ __forceinline__ auto operator()(ct v) const {    \
      return (expr);                                                                \
    }                                                                               \
  };
#define CU_BINARY_FN(name, expr, E, ...)                                            \
  struct cu_op_##name {                                                             \
    template <class ct> __device__ __forceinline__ auto operator()(ct a, ct b, ct p1) const { \
      return (expr);                                                                \
    }                                                                               \
  };
MT_UNARY_FLOAT_OPS(CU_UNARY_FN, _)
MT_UNARY_FLOAT_ONLY_OPS(CU_UNARY_FN, _)
MT_UNARY_ROUND_OPS(CU_UNARY_FN, _)
MT_UNARY_SAME_OPS(CU_UNARY_FN, _)
MT_UNARY_BOOL_OPS(CU_UNARY_FN, _)
MT_BINARY_OPS(CU_BINARY_FN, _)
MT_BINARY_FLOAT_OPS(CU_BINARY_FN, _)
MT_COMPARE_OPS(CU_BINARY_FN, _)
MT_BINARY_DIV_OPS(CU_BINARY_FN, _)
MT_UNARY_INT_OPS(CU_UNARY_FN, _)
MT_BINARY_INT_OPS(CU_BINARY_FN, _)

/* ---- the kernel table ---- */
/* What one call hands its kernel: the operands' data (in is NULL for a
   number, whose value is in scalar, stored in the compute dtype), add's and
   sub's alpha, the device. */
typedef struct {
  const char *name;
  char *out;
  const char *in[2];
  int scalar_mask;
  char scalar[2][8];
  double p1;
  int index;
} cu_pw_args;
typedef int (*cu_pw_fn)(const cu_geom *g, const cu_pw_args *args);

template <class F, int E, int OE, int NIN> static int cu_pw_run(const cu_geom *g, const cu_pw_args *args) {
  typedef typename cu_dt<E>::ct ct;
  cu_scalars<ct> sc;
  sc.mask = args->scalar_mask;
  for (int k = 0; k < 2; k++) sc.value[k] = (sc.mask >> k) & 1 ? cu_scalar_value<E>(args->scalar[k]) : ct();
  return cu_launch<F, E, OE, NIN>(args->name, g, args->out, args->in[0], args->in[1], sc, (ct)args->p1,
                                  args->index);
}

/* Each dtype's kind (MT_DTYPES' last column: 0 bool, 1 integer, 2 float),
   at compile time. */
static constexpr int cu_kind[MT_NDTYPES] = {
#define CU_KIND(E, T, N, TN, K) K,
    MT_DTYPES(CU_KIND)
#undef CU_KIND
};

/* Which (op, dtype) pairs the rules of mt_pointwise_rules.h can run: only
   those are instantiated (float math for float dtypes; bool only for the ops
   PyTorch allows on it). The rest have no entry. */
static constexpr bool cu_reachable(int cls, int op, int e) {
  return cls == MT_C_UNARY_FLOAT || cls == MT_C_UNARY_FLOAT_ONLY || cls == MT_C_UNARY_ROUND ||
                 cls == MT_C_BINARY_FLOAT
             ? cu_kind[e] == 2
         : cls == MT_C_UNARY_SAME ? e != MT_BOOL
         : cls == MT_C_BINARY
             ? e != MT_BOOL || op == MT_OP_add || op == MT_OP_mul || op == MT_OP_maximum || op == MT_OP_minimum
         : cls == MT_C_UNARY_INT ? cu_kind[e] != 2
         : cls == MT_C_BINARY_INT
             ? cu_kind[e] == 1 ||
                   (e == MT_BOOL && op != MT_OP_bitwise_left_shift && op != MT_OP_bitwise_right_shift)
             : true;
}

template <class F, int CLS, int OP, int E> static cu_pw_fn cu_pw_entry() {
  if constexpr (cu_reachable(CLS, OP, E)) {
    constexpr int out = CLS == MT_C_UNARY_BOOL || CLS == MT_C_COMPARE ? MT_BOOL : E;
    constexpr int nin =
        CLS == MT_C_BINARY || CLS == MT_C_BINARY_FLOAT || CLS == MT_C_COMPARE || CLS == MT_C_BINARY_INT ? 2 : 1;
    return cu_pw_run<F, E, out, nin>;
  } else {
    return nullptr;
  }
}

template <class F, int CLS, int OP> static cu_pw_fn cu_pw_pick(int dtype) {
  switch (dtype) {
#define CU_DTYPE_CASE(E, T, N, TN, K) \
  case MT_##E: return cu_pw_entry<F, CLS, OP, MT_##E>();
    MT_DTYPES(CU_DTYPE_CASE)
#undef CU_DTYPE_CASE
  }
  return nullptr;
}

/* op's kernel for operands of dtype (the compute dtype); NULL with an error
   for a pair the rules should have refused. */
static cu_pw_fn cu_pw_find(int op, int dtype) {
  cu_pw_fn fn = nullptr;
  switch (op) {
#define CU_OP_CASE(name, expr, CLS, ...) \
  case MT_OP_##name: fn = cu_pw_pick<cu_op_##name, CLS, MT_OP_##name>(dtype); break;
#define CU_LIST_CASES(list) list(CU_OP_CASE, MT_CLASS_OF_##list)
    MT_POINTWISE_LISTS(CU_LIST_CASES)
#undef CU_LIST_CASES
#undef CU_OP_CASE
  }
  if (!fn) mt_fail("%s: no CUDA kernel for %s tensors", mt_op_names[op], mt_dtypes[dtype].name);
  return fn;
}

/* ---- running an op ---- */
/* Runs fn over {out, in0[, in1]} (in k NULL: the number args->scalar[k]);
   when out's dtype is not out_dtype (in place, a result of another dtype)
   it computes into a temporary and copies into out, as run_into does on the
   CPU. */
static int cu_run_into(mt_tensor *out, int out_dtype, int nin, const mt_tensor *const *in, int compute_dtype,
                       cu_pw_fn fn, cu_pw_args *args) {
  mt_tensor tmp = {}, number = {};
  mt_tensor *dst = out;
  if (out->dtype != out_dtype) {
    if (mt_tensor_init_on(args->name, &tmp, out_dtype, out->ndim, out->shape, MT_CUDA, args->index)) return -1;
    dst = &tmp;
  }
  /* a number walks as a stride-0 view of the output's shape */
  number.dtype = compute_dtype;
  number.ndim = out->ndim;
  memcpy(number.shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
  const mt_tensor *ops[3] = {dst, in[0] ? in[0] : &number, nin > 1 ? (in[1] ? in[1] : &number) : NULL};
  cu_geom g;
  cu_geom_init(&g, nin + 1, ops);
  args->out = mt_data(dst);
  for (int k = 0; k < 2; k++) args->in[k] = k < nin && in[k] ? mt_data(in[k]) : NULL;
  int rc = fn(&g, args);
  if (!rc && dst == &tmp) rc = mt_copy(out, &tmp);
  else if (!rc) out->storage->version++;
  mt_tensor_release(&tmp);
  return rc;
}

CU_EXTERN int cu_unary(mt_tensor *r, const mt_tensor *x, mt_op op, int inplace, int default_float) {
  const char *name = mt_op_names[op];
  int in_dtype = 0, out_dtype = 0, rc = 0;
  if (mt_unary_rules(r, x, op, inplace, default_float, &in_dtype, &out_dtype, &rc)) return rc;
  const int index = mt_device_index_of(x);
  if (cu_set_device(name, index)) return -1;
  cu_pw_fn fn = cu_pw_find(op, in_dtype);
  if (!fn) return -1;
  if (!inplace && mt_tensor_init_on(name, r, out_dtype, x->ndim, x->shape, MT_CUDA, index)) return -1;
  mt_tensor in = {};
  if (mt_to_dtype(&in, x, in_dtype)) return -1;
  cu_pw_args args = {};
  args.name = name;
  args.p1 = 1;
  args.index = index;
  const mt_tensor *ins[2] = {&in, NULL};
  const int kernel_out = mt_op_class[op] == MT_C_UNARY_BOOL ? MT_BOOL : in_dtype;
  rc = cu_run_into(r, kernel_out, 1, ins, in_dtype, fn, &args);
  mt_tensor_release(&in);
  return rc;
}

/* Makes *view operand k of a binary op in dtype, of the broadcast shape: a
   converted copy or a broadcast view of a GPU tensor; or a number, stored in
   args->scalar[k] (view left empty). A 0-dim CPU tensor beside GPU tensors
   (the dispatcher lets it through, as PyTorch) is such a number: converted
   on the CPU as its kernels would, it reaches the kernel by value, with no
   copy to the device. An input sharing memory with the in-place output out
   (other than being out itself) is copied first, so that writes never feed
   later reads. */
static int cu_prepare(mt_tensor *view, cu_pw_args *args, int k, const mt_operand *op, int dtype, int ndim,
                      const int64_t *shape, const mt_tensor *out) {
  if (!op->t) {
    if (op->is_int) mt_set_i64(dtype, args->scalar[k], (int64_t)op->value);
    else mt_set_f64(dtype, args->scalar[k], op->value);
    args->scalar_mask |= 1 << k;
    return 0;
  }
  mt_tensor conv = {};
  if (mt_device_of(op->t) == MT_CPU) {
    if (mt_to_dtype(&conv, op->t, dtype)) return -1;
    memcpy(args->scalar[k], mt_data(&conv), (size_t)mt_dtypes[dtype].size);
    mt_tensor_release(&conv);
    args->scalar_mask |= 1 << k;
    return 0;
  }
  int aliased = out && op->t->storage == out->storage && !mt_same_view(op->t, out);
  if (aliased && op->t->dtype == dtype ? mt_clone(&conv, op->t) : mt_to_dtype(&conv, op->t, dtype)) return -1;
  int rc = mt_expand(view, &conv, ndim, shape);
  mt_tensor_release(&conv);
  return rc;
}

/* Clears (clear 1) or reads the device's division-by-zero flag, on the op's
   stream; reading waits for the op. */
static int cu_div_flag(const char *name, int index, int clear, int *seen) {
  void *flag;
  cudaStream_t s = cu_stream(index);
  CU_TRY(name, cudaGetSymbolAddress(&flag, cu_int_div_by_zero));
  if (clear) {
    CU_TRY(name, cudaMemsetAsync(flag, 0, sizeof(int), s));
    return 0;
  }
  CU_TRY(name, cudaMemcpyAsync(seen, flag, sizeof(int), cudaMemcpyDeviceToHost, s));
  CU_TRY(name, cudaStreamSynchronize(s));
  return 0;
}

CU_EXTERN int cu_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha, int inplace,
                        int default_float) {
  const char *name = mt_op_names[op];
  int dtype = 0, out_dtype = 0;
  if (mt_binary_rules(a, b, op, alpha, default_float, &dtype, &out_dtype)) return -1;
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  if (mt_binary_shape(r, a, b, op, inplace, out_dtype, &ndim, shape)) return -1;
  /* the device: the GPU operand's (one is); an in-place output must be there */
  const mt_tensor *gpu = a->t && mt_device_of(a->t) == MT_CUDA ? a->t : b->t;
  if (inplace && !mt_same_device(r, gpu)) return mt_check_same_device(name, gpu, r);
  const int index = mt_device_index_of(gpu);
  if (cu_set_device(name, index)) return -1;
  cu_pw_fn fn = cu_pw_find(op, dtype);
  if (!fn) return -1;
  if (!inplace && mt_tensor_init_on(name, r, out_dtype, ndim, shape, MT_CUDA, index)) return -1;
  cu_pw_args args = {};
  args.name = name;
  args.p1 = alpha;
  args.index = index;
  mt_tensor va = {}, vb = {};
  const mt_tensor *out = inplace ? r : NULL;
  if (cu_prepare(&va, &args, 0, a, dtype, ndim, shape, out)) return -1;
  if (cu_prepare(&vb, &args, 1, b, dtype, ndim, shape, out)) {
    mt_tensor_release(&va);
    return -1;
  }
  const int checks_zero = mt_op_divides(op) && !mt_dtype_is_float((mt_dtype)dtype);
  const mt_tensor *ins[2] = {va.storage ? &va : NULL, vb.storage ? &vb : NULL};
  int rc = checks_zero ? cu_div_flag(name, index, 1, NULL) : 0, seen = 0;
  if (!rc) rc = cu_run_into(r, out_dtype, 2, ins, dtype, fn, &args);
  if (!rc && checks_zero && !(rc = cu_div_flag(name, index, 0, &seen)) && seen)
    rc = mt_fail("%s: ZeroDivisionError (integer %s by zero)", name, name);
  mt_tensor_release(&va);
  mt_tensor_release(&vb);
  return rc;
}
