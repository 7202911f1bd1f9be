/* cu_optim.cu: the fused optimizer updates of mt_optim.h on the GPU, the
   function the engine's run_update hands a CUDA parameter to
   (mt_register_optim). One kernel launch per call: each thread reads an
   element of the parameter, the gradient and the state buffers once and
   writes them once, with the CPU's rules (mt_optim.c) term by term, so
   results agree with the CPU's and torch.optim's to rounding (the CPU and
   nvcc each contract some products into fused multiply-adds). */
#include <stdint.h>
#include <math.h>
#include "cu_loop.cuh"
extern "C" {
#include "../tensor/mt_optim.h"
}

/* parameter, gradient and up to three state buffers (mt_optim.c's
   MT_OPTIM_MAX_OPERANDS) */
#define CU_OPTIM_OPERANDS 5

/* The operands of an update, contiguous and of the compute type T (in place
   or copies): no two share memory, hence __restrict__. s[k] is state buffer
   k in the order of the mt_optim_* signatures, NULL where unused. */
template <class T> struct cu_optim_data {
  T *__restrict__ p;
  const T *__restrict__ g;
  T *__restrict__ s[3];
};

/* PyTorch's lerp: the form that is exact at the nearer end of the weight. */
template <class T> __device__ __forceinline__ T cu_lerp(T from, T to, T w, bool w_low, T w_rest) {
  return w_low ? from + w * (to - from) : to - (to - from) * w_rest;
}
/* torch.maximum: NaN wins */
template <class T> __device__ __forceinline__ T cu_maximum(T a, T b) { return a != a || a > b ? a : b; }

/* ---- the rules ----
   One struct per optimizer and compute type: its constructor turns the
   args (doubles) into the kernel's constants exactly as mt_optim.c does,
   once per thread; operator() updates element i. Flags that choose the
   buffers a step touches are uniform across the launch, so they are plain
   branches (no divergence); a buffer an option leaves unused is never
   read, e.g. SGD's momentum buffer on the first step. */

/* SGD: d = g (+ wd p); with momentum buf = momentum buf + (1 - dampening) d
   (buf = d on the first step), d = nesterov ? d + momentum buf : buf;
   p -= lr d. */
template <class T> struct cu_sgd {
  typedef mt_sgd_args args;
  T lr, wd, mom, keep, sign;
  bool decay, nesterov, use_mom, first;
  __device__ explicit cu_sgd(const args &a)
      : lr((T)a.lr), wd((T)a.weight_decay), mom((T)a.momentum), keep((T)(1 - a.dampening)),
        sign(a.maximize ? (T)-1 : (T)1), decay(a.weight_decay != 0), nesterov(a.nesterov != 0),
        use_mom(a.momentum != 0), first(a.first_step != 0) {}
  template <class IDX> __device__ __forceinline__ void operator()(const cu_optim_data<T> &x, IDX i) const {
    T pi = x.p[i];
    T d = sign * x.g[i];
    d = decay ? d + wd * pi : d;
    if (use_mom) {
      T m = first ? d : x.s[0][i] * mom + keep * d;
      x.s[0][i] = m;
      d = nesterov ? d + mom * m : m;
    }
    x.p[i] = pi - lr * d;
  }
};

/* Adam and AdamW (decoupled: p shrinks by 1 - lr wd instead of wd p joining
   the gradient); amsgrad keeps the running maximum of exp_avg_sq. Buffers:
   exp_avg, exp_avg_sq, max_exp_avg_sq. */
template <class T> struct cu_adam {
  typedef mt_adam_args args;
  T w, w_rest, beta2, v_keep, eps, wd, shrink, neg_step, bc2_sqrt, sign;
  bool coupled, w_low, amsgrad;
  __device__ explicit cu_adam(const args &a)
      : w((T)(1 - a.beta1)), w_rest(1 - w), beta2((T)a.beta2), v_keep((T)(1 - a.beta2)), eps((T)a.eps),
        wd((T)a.weight_decay), shrink(a.decoupled ? (T)(1 - a.lr * a.weight_decay) : (T)1),
        neg_step((T)(-(a.lr / a.bias_correction1))), bc2_sqrt((T)sqrt(a.bias_correction2)),
        sign(a.maximize ? (T)-1 : (T)1), coupled(a.weight_decay != 0 && !a.decoupled), w_low(w < (T)0.5),
        amsgrad(a.amsgrad != 0) {}
  template <class IDX> __device__ __forceinline__ void operator()(const cu_optim_data<T> &x, IDX i) const {
    T pi = x.p[i];
    T gi = sign * x.g[i];
    gi = coupled ? gi + wd * pi : gi;
    T mi = cu_lerp(x.s[0][i], gi, w, w_low, w_rest);
    T vi = x.s[1][i] * beta2 + v_keep * gi * gi;
    x.s[0][i] = mi;
    x.s[1][i] = vi;
    if (amsgrad) {
      vi = cu_maximum(x.s[2][i], vi);
      x.s[2][i] = vi;
    }
    T denom = sqrt(vi) / bc2_sqrt + eps;
    x.p[i] = pi * shrink + neg_step * mi / denom;
  }
};

/* RMSprop. Buffers: square_avg, grad_avg (centered), momentum_buffer
   (momentum > 0). */
template <class T> struct cu_rmsprop {
  typedef mt_rmsprop_args args;
  T alpha, sq_keep, eps, w, w_rest, wd, mom, neg_lr, sign;
  bool w_low, decay, centered, use_mom;
  __device__ explicit cu_rmsprop(const args &a)
      : alpha((T)a.alpha), sq_keep((T)(1 - a.alpha)), eps((T)a.eps), w((T)(1 - a.alpha)), w_rest(1 - w),
        wd((T)a.weight_decay), mom((T)a.momentum), neg_lr((T)(-a.lr)), sign(a.maximize ? (T)-1 : (T)1),
        w_low(w < (T)0.5), decay(a.weight_decay != 0), centered(a.centered != 0), use_mom(a.momentum > 0) {}
  template <class IDX> __device__ __forceinline__ void operator()(const cu_optim_data<T> &x, IDX i) const {
    T pi = x.p[i];
    T gi = sign * x.g[i];
    gi = decay ? gi + wd * pi : gi;
    T si = x.s[0][i] * alpha + sq_keep * gi * gi;
    x.s[0][i] = si;
    if (centered) {
      T gai = cu_lerp(x.s[1][i], gi, w, w_low, w_rest);
      x.s[1][i] = gai;
      si = si + (T)-1 * gai * gai;
    }
    T avg = sqrt(si) + eps;
    if (use_mom) {
      T bi = x.s[2][i] * mom + gi / avg;
      x.s[2][i] = bi;
      x.p[i] = pi + neg_lr * bi;
    } else {
      x.p[i] = pi + neg_lr * gi / avg;
    }
  }
};

/* Adagrad with the decayed rate clr. Buffer: sum. */
template <class T> struct cu_adagrad {
  typedef mt_adagrad_args args;
  T neg_clr, eps, wd, sign;
  bool decay;
  __device__ explicit cu_adagrad(const args &a)
      : neg_clr((T)(-a.clr)), eps((T)a.eps), wd((T)a.weight_decay), sign(a.maximize ? (T)-1 : (T)1),
        decay(a.weight_decay != 0) {}
  template <class IDX> __device__ __forceinline__ void operator()(const cu_optim_data<T> &x, IDX i) const {
    T pi = x.p[i];
    T gi = sign * x.g[i];
    gi = decay ? gi + wd * pi : gi;
    T si = x.s[0][i] + gi * gi;
    x.s[0][i] = si;
    x.p[i] = pi + neg_clr * gi / (sqrt(si) + eps);
  }
};

/* Adadelta. Buffers: square_avg, acc_delta. */
template <class T> struct cu_adadelta {
  typedef mt_adadelta_args args;
  T rho, keep, eps, neg_lr, wd, sign;
  bool decay;
  __device__ explicit cu_adadelta(const args &a)
      : rho((T)a.rho), keep((T)(1 - a.rho)), eps((T)a.eps), neg_lr((T)(-a.lr)), wd((T)a.weight_decay),
        sign(a.maximize ? (T)-1 : (T)1), decay(a.weight_decay != 0) {}
  template <class IDX> __device__ __forceinline__ void operator()(const cu_optim_data<T> &x, IDX i) const {
    T pi = x.p[i];
    T gi = sign * x.g[i];
    gi = decay ? gi + wd * pi : gi;
    T si = x.s[0][i] * rho + keep * gi * gi;
    x.s[0][i] = si;
    T acc = x.s[1][i];
    T std = sqrt(si + eps), rms_delta = sqrt(acc + eps);
    T delta = rms_delta / std * gi;
    x.s[1][i] = acc * rho + keep * delta * delta;
    x.p[i] = pi + neg_lr * delta;
  }
};

/* Adamax with clr = lr / (1 - beta1^step). Buffers: exp_avg, exp_inf. */
template <class T> struct cu_adamax {
  typedef mt_adamax_args args;
  T w, w_rest, beta2, eps, neg_clr, wd, sign;
  bool w_low, decay;
  __device__ explicit cu_adamax(const args &a)
      : w((T)(1 - a.beta1)), w_rest(1 - w), beta2((T)a.beta2), eps((T)a.eps), neg_clr((T)(-a.clr)),
        wd((T)a.weight_decay), sign(a.maximize ? (T)-1 : (T)1), w_low(w < (T)0.5), decay(a.weight_decay != 0) {}
  template <class IDX> __device__ __forceinline__ void operator()(const cu_optim_data<T> &x, IDX i) const {
    T pi = x.p[i];
    T gi = sign * x.g[i];
    gi = decay ? gi + wd * pi : gi;
    T mi = cu_lerp(x.s[0][i], gi, w, w_low, w_rest);
    T decayed = x.s[1][i] * beta2, bound = fabs(gi) + eps;
    T ui = cu_maximum(decayed, bound);
    x.s[0][i] = mi;
    x.s[1][i] = ui;
    x.p[i] = pi + neg_clr * mi / ui;
  }
};

/* NAdam: the coefficients hold the momentum schedule. Buffers: exp_avg,
   exp_avg_sq. */
template <class T> struct cu_nadam {
  typedef mt_nadam_args args;
  T w, w_rest, beta2, v_keep, eps, wd, shrink, bc2, sign, grad_coef, avg_coef;
  bool coupled, w_low;
  __device__ explicit cu_nadam(const args &a)
      : w((T)(1 - a.beta1)), w_rest(1 - w), beta2((T)a.beta2), v_keep((T)(1 - a.beta2)), eps((T)a.eps),
        wd((T)a.weight_decay), shrink(a.decoupled ? (T)(1 - a.lr * a.weight_decay) : (T)1),
        bc2((T)a.bias_correction2), sign(a.maximize ? (T)-1 : (T)1), grad_coef((T)a.grad_coef),
        avg_coef((T)a.avg_coef), coupled(a.weight_decay != 0 && !a.decoupled), w_low(w < (T)0.5) {}
  template <class IDX> __device__ __forceinline__ void operator()(const cu_optim_data<T> &x, IDX i) const {
    T pi = x.p[i];
    T gi = sign * x.g[i];
    gi = coupled ? gi + wd * pi : gi;
    T vi = x.s[1][i] * beta2 + v_keep * gi * gi;
    T mi = cu_lerp(x.s[0][i], gi, w, w_low, w_rest);
    x.s[0][i] = mi;
    x.s[1][i] = vi;
    T denom = sqrt(vi / bc2) + eps;
    pi = pi * shrink + grad_coef * gi / denom;
    x.p[i] = pi + avg_coef * mi / denom;
  }
};

/* RAdam: rect is the variance rectification term, 0 while rho_t <= 5 (the
   step is then plain bias-corrected momentum). Buffers: exp_avg,
   exp_avg_sq. */
template <class T> struct cu_radam {
  typedef mt_radam_args args;
  T w, w_rest, beta2, v_keep, eps, wd, shrink, lr, bc1, bc2_sqrt, rect, sign;
  bool coupled, w_low, rectified;
  __device__ explicit cu_radam(const args &a)
      : w((T)(1 - a.beta1)), w_rest(1 - w), beta2((T)a.beta2), v_keep((T)(1 - a.beta2)), eps((T)a.eps),
        wd((T)a.weight_decay), shrink(a.decoupled ? (T)(1 - a.lr * a.weight_decay) : (T)1), lr((T)a.lr),
        bc1((T)a.bias_correction1), bc2_sqrt((T)sqrt(a.bias_correction2)), rect((T)a.rect),
        sign(a.maximize ? (T)-1 : (T)1), coupled(a.weight_decay != 0 && !a.decoupled), w_low(w < (T)0.5),
        rectified(a.rect > 0) {}
  template <class IDX> __device__ __forceinline__ void operator()(const cu_optim_data<T> &x, IDX i) const {
    T pi = x.p[i];
    T gi = sign * x.g[i];
    gi = coupled ? gi + wd * pi : gi;
    T vi = x.s[1][i] * beta2 + v_keep * gi * gi;
    T mi = cu_lerp(x.s[0][i], gi, w, w_low, w_rest);
    x.s[0][i] = mi;
    x.s[1][i] = vi;
    T step = mi / bc1 * lr;
    if (rectified) step = step * (bc2_sqrt / (sqrt(vi) + eps)) * rect;
    x.p[i] = pi * shrink - step;
  }
};

/* ---- the kernel and its launch ---- */

/* Rule R over n contiguous elements, grid-stride; the rule's constants are
   computed once per thread from the args, passed by value. */
template <class R, class T, class IDX>
__global__ void __launch_bounds__(CU_THREADS) cu_optim_kernel(IDX n, cu_optim_data<T> x, typename R::args a) {
  const R rule(a);
  const IDX step = (IDX)gridDim.x * blockDim.x;
  for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) rule(x, i);
}

/* Launches rule RULE<T> over data's n elements on device index's stream,
   with 32-bit indices when n fits them. */
template <template <class> class RULE, class T>
static int cu_optim_launch(const char *name, char *const *data, int64_t n, const void *args, int index) {
  typedef RULE<T> R;
  if (n == 0) return 0;
  cu_optim_data<T> x;
  x.p = (T *)data[0];
  x.g = (const T *)data[1];
  for (int k = 0; k < 3; k++) x.s[k] = (T *)data[2 + k];
  const typename R::args a = *(const typename R::args *)args;
  int64_t blocks = (n + CU_THREADS - 1) / CU_THREADS;
  if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
  cudaStream_t s = cu_stream(index);
  /* the last index a thread forms is below n + the grid's size */
  if (n + blocks * CU_THREADS <= (int64_t)UINT32_MAX)
    cu_optim_kernel<R, T, uint32_t><<<(unsigned)blocks, CU_THREADS, 0, s>>>((uint32_t)n, x, a);
  else
    cu_optim_kernel<R, T, uint64_t><<<(unsigned)blocks, CU_THREADS, 0, s>>>((uint64_t)n, x, a);
  return CU_LAUNCHED(name);
}

template <class T>
static int cu_optim_run(const char *name, mt_optim_kind kind, char *const *data, int64_t n, const void *args,
                        int index) {
  switch (kind) {
    case MT_OPTIM_SGD: return cu_optim_launch<cu_sgd, T>(name, data, n, args, index);
    case MT_OPTIM_ADAM: return cu_optim_launch<cu_adam, T>(name, data, n, args, index);
    case MT_OPTIM_RMSPROP: return cu_optim_launch<cu_rmsprop, T>(name, data, n, args, index);
    case MT_OPTIM_ADAGRAD: return cu_optim_launch<cu_adagrad, T>(name, data, n, args, index);
    case MT_OPTIM_ADADELTA: return cu_optim_launch<cu_adadelta, T>(name, data, n, args, index);
    case MT_OPTIM_ADAMAX: return cu_optim_launch<cu_adamax, T>(name, data, n, args, index);
    case MT_OPTIM_NADAM: return cu_optim_launch<cu_nadam, T>(name, data, n, args, index);
    case MT_OPTIM_RADAM: return cu_optim_launch<cu_radam, T>(name, data, n, args, index);
  }
  return mt_fail("%s: unknown optimizer kind %d", name, (int)kind);
}

/* As mt_optim.c's in_place: an operand is used where it lies when it is
   contiguous, of the compute dtype and shares no storage with an earlier
   operand; otherwise through a contiguous copy. */
static int cu_optim_in_place(mt_tensor *const *ops, int k, int dtype) {
  const mt_tensor *t = ops[k];
  if (t->dtype != dtype || !mt_is_contiguous(t)) return 0;
  for (int j = 0; j < k; j++)
    if (ops[j] && ops[j]->storage == t->storage) return 0;
  return 1;
}

/* The engine's device update (mt_optim_device_fn): ops are checked (on one
   CUDA device, floating, p's shape); every operand but the gradient
   (ops[1]) is written. The copies and the kernel all run on the device's
   stream, in order. */
extern "C" int cu_optim_update(const char *name, mt_optim_kind kind, mt_tensor *const *ops, int nops,
                               const void *args) {
  if (nops < 2 || nops > CU_OPTIM_OPERANDS || !ops[0] || !ops[1])
    return mt_fail("%s: expected a parameter, a gradient and at most 3 state buffers", name);
  const mt_tensor *p = ops[0];
  const int index = mt_device_index_of(p);
  if (cu_set_device(name, index)) return -1;
  const int dtype = p->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
  mt_tensor work[CU_OPTIM_OPERANDS];
  memset(work, 0, sizeof work);
  char *data[CU_OPTIM_OPERANDS] = {0};
  int copied[CU_OPTIM_OPERANDS] = {0};
  int rc = 0;
  for (int k = 0; k < nops && rc == 0; k++) {
    if (!ops[k]) continue;
    if (cu_optim_in_place(ops, k, dtype)) { data[k] = mt_data(ops[k]); continue; }
    copied[k] = 1;
    rc = mt_tensor_init_on(name, &work[k], dtype, p->ndim, p->shape, MT_CUDA, index);
    if (rc == 0) rc = mt_copy(&work[k], ops[k]);
    if (rc == 0) data[k] = mt_data(&work[k]);
  }
  if (rc == 0) {
    const int64_t n = mt_numel(p);
    rc = dtype == MT_FLOAT64 ? cu_optim_run<double>(name, kind, data, n, args, index)
                             : cu_optim_run<float>(name, kind, data, n, args, index);
    for (int k = 0; k < nops && rc == 0; k++) {
      if (!ops[k] || k == 1) continue;
      if (copied[k]) rc = mt_copy(ops[k], &work[k]);
      else ops[k]->storage->version++;
    }
  }
  for (int k = 0; k < nops; k++)
    if (copied[k]) mt_tensor_release(&work[k]);
  return rc;
}

/* ---- torch.amp.GradScaler's unscale on the GPU (mt_amp_unscale) ----
   One launch: g *= inv, and *found = 1 where an element was inf or NaN
   (every writer writes the same 1). The host reads the flag back, as
   GradScaler's step must know it. */
template <class T, class IDX>
__global__ void __launch_bounds__(CU_THREADS) cu_unscale_kernel(IDX n, T *__restrict__ g, T inv, int *__restrict__ found) {
  const IDX step = (IDX)gridDim.x * blockDim.x;
  int bad = 0;
  for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const T v = g[i];
    bad |= !isfinite(v);
    g[i] = v * inv;
  }
  if (bad) *found = 1;
}

template <class T>
static int cu_unscale_launch(const char *name, T *g, int64_t n, double inv, int *found, cudaStream_t s) {
  if (n == 0) return 0;
  int64_t blocks = (n + CU_THREADS - 1) / CU_THREADS;
  if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
  if (n + blocks * CU_THREADS <= (int64_t)UINT32_MAX)
    cu_unscale_kernel<T, uint32_t><<<(unsigned)blocks, CU_THREADS, 0, s>>>((uint32_t)n, g, (T)inv, found);
  else
    cu_unscale_kernel<T, uint64_t><<<(unsigned)blocks, CU_THREADS, 0, s>>>((uint64_t)n, g, (T)inv, found);
  return CU_LAUNCHED(name);
}

/* The engine's device unscale (mt_amp_unscale_fn): g floating, on a CUDA
   device; a gradient that is not contiguous float32/float64 goes through a
   copy written back, all on the device's stream. */
extern "C" int cu_amp_unscale(mt_tensor *g, double inv_scale, int *found_inf) {
  const char *name = "GradScaler.unscale_";
  const int index = mt_device_index_of(g);
  if (cu_set_device(name, index)) return -1;
  const int dtype = g->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
  mt_tensor work;
  memset(&work, 0, sizeof work);
  const int copied = g->dtype != dtype || !mt_is_contiguous(g);
  if (copied && (mt_tensor_init_on(name, &work, dtype, g->ndim, g->shape, MT_CUDA, index) || mt_copy(&work, g))) {
    mt_tensor_release(&work);
    return -1;
  }
  cudaStream_t s = cu_stream(index);
  int *flag = (int *)cu_alloc(sizeof(int), index);
  if (!flag) { if (copied) mt_tensor_release(&work); return -1; }
  int host = 0;
  int rc = cu_fail(name, cudaMemsetAsync(flag, 0, sizeof(int), s));
  char *data = mt_data(copied ? &work : g);
  if (rc == 0)
    rc = dtype == MT_FLOAT64 ? cu_unscale_launch<double>(name, (double *)data, mt_numel(g), inv_scale, flag, s)
                             : cu_unscale_launch<float>(name, (float *)data, mt_numel(g), inv_scale, flag, s);
  if (rc == 0) rc = cu_fail(name, cudaMemcpyAsync(&host, flag, sizeof(int), cudaMemcpyDeviceToHost, s));
  if (rc == 0) rc = cu_fail(name, cudaStreamSynchronize(s));
  cu_free(flag, sizeof(int), index);
  if (rc == 0 && copied) rc = mt_copy(g, &work);
  else if (rc == 0) g->storage->version++;
  if (copied) mt_tensor_release(&work);
  if (rc == 0 && host) *found_inf = 1;
  return rc;
}
