/* cu.h: the CUDA backend's shared declarations (src/cuda). The backend is
   a separate shared object, build/torch/cuda.so, linked against
   libmoontorch.so and the CUDA libraries; `require 'torch'` loads it only
   when it is present and a GPU answers (lib/torch/device.lua). It registers
   with the engine:
     - its storage (allocation through the caching allocator, copies between
       the CPU and the device, fill): mt_register_device (mt_tensor.h);
     - its kernels, one per family, in the dispatcher's device table:
       mt_register_kernels (src/ops/dispatch.h).
   No binding learns about devices: an op reaches these kernels because its
   tensors live on the GPU, through the same dispatcher as the CPU's.

   Every entry point returns 0, or -1 with mt_error() set ("op: ..."), like
   the CPU kernels; a CUDA error is reported with the op's name and
   cudaGetErrorString. Kernels run on cu_stream(), the current stream of the
   tensors' device. Results are allocated on the inputs' device with
   mt_tensor_init_on (mt_tensor.h). */
#ifndef MT_CU_H
#define MT_CU_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "../tensor/mt_tensor.h"
#include "../tensor/mt_ops.h"
#include "../ops/dispatch.h"
#ifdef __cplusplus
}
#define CU_EXTERN extern "C"
#else
#define CU_EXTERN
#endif

/* ---- errors ---- */
/* -1 with "op: CUDA error: <cudaGetErrorString(e)>" set; 0 for cudaSuccess */
CU_EXTERN int cu_fail(const char *op, cudaError_t e);
/* after a launch: the launch's own error (a bad configuration) */
#define CU_LAUNCHED(op) cu_fail((op), cudaGetLastError())
#define CU_TRY(op, call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return cu_fail((op), e_); } while (0)

/* ---- devices and streams (cu_lua.c) ---- */
/* makes index the current device of this thread (cheap when it is already) */
CU_EXTERN int cu_set_device(const char *op, int index);
/* the stream kernels of device index run on (the default stream until
   torch.cuda.stream() picks another) */
CU_EXTERN cudaStream_t cu_stream(int index);
CU_EXTERN void cu_set_stream(int index, cudaStream_t s);

/* ---- the caching allocator (cu_alloc.cu) ----
   Blocks are rounded up (512 bytes, or 2 MiB above 1 MiB) and kept in a free
   list per device when released, so a training loop allocates from the
   cache after its first step; cudaMalloc failing frees the cache and tries
   again before it reports out of memory. */
CU_EXTERN void *cu_alloc(size_t nbytes, int index);
CU_EXTERN void cu_free(void *p, size_t nbytes, int index);
typedef struct {
  int64_t allocated;       /* bytes in live tensors' blocks */
  int64_t peak;            /* high-water mark of allocated since the last reset */
  int64_t reserved;        /* bytes held from cudaMalloc: allocated plus cached */
  int64_t peak_reserved;
  int64_t num_allocs, num_cache_hits, num_device_allocs;
} cu_mem_stats;
CU_EXTERN void cu_memory_stats(int index, cu_mem_stats *s);
CU_EXTERN void cu_reset_peak(int index);
CU_EXTERN void cu_empty_cache(void);

/* ---- storage ops (cu_copy.cu) ---- */
/* dst = src: same shapes (mt_copy broadcast src already), any dtypes,
   either one (or both) on the GPU, the other on the CPU; strided views
   both sides. */
CU_EXTERN int cu_copy(mt_tensor *dst, const mt_tensor *src);
CU_EXTERN int cu_fill(mt_tensor *t, double v);

/* ---- the dispatcher's kernels: as the CPU's of the same slot ---- */
/* cu_pointwise.cu: every elementwise op of the registry, every dtype */
CU_EXTERN int cu_unary(mt_tensor *r, const mt_tensor *x, mt_op op, int inplace, int default_float);
CU_EXTERN int cu_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha, int inplace,
                        int default_float);
/* cu_reduce.cu */
CU_EXTERN int cu_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, int dtype,
                        double param, int default_float);
CU_EXTERN int cu_along(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, int dtype);
/* cu_blas.cu: on cuBLAS */
CU_EXTERN int cu_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op);
CU_EXTERN int cu_add_product(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b, mt_op op,
                             double beta, double alpha, int inplace);
/* cu_optim.cu: the fused optimizer updates (mt_optim.h), one kernel each */
#ifdef __cplusplus
extern "C" {
#endif
#include "../tensor/mt_optim.h"
#ifdef __cplusplus
}
#endif
/* torch.amp.GradScaler's unscale (mt_amp_unscale_fn): g *= inv_scale, *found_inf = 1 on an inf or NaN */
CU_EXTERN int cu_amp_unscale(mt_tensor *g, double inv_scale, int *found_inf);
CU_EXTERN int cu_optim_update(const char *name, mt_optim_kind kind, mt_tensor *const *ops, int nops,
                              const void *args);
/* cu_where.cu: where and the fused activation gradients (mt_device_extra) */
CU_EXTERN int cu_where(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b, int default_float);
CU_EXTERN int cu_activation_grad(mt_tensor *r, const mt_tensor *g, const mt_tensor *v, mt_activation kind);
CU_EXTERN int cu_nonzero(mt_tensor *r, const mt_tensor *x, int64_t base);
CU_EXTERN int cu_select_along(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, mt_sel_op op,
                              int64_t M, int64_t k, int descending, int keepdim);
CU_EXTERN int cu_im2col(mt_tensor *cols, const mt_tensor *x, const mt_conv_geom *g);
CU_EXTERN int cu_col2im(mt_tensor *x, const mt_tensor *cols, const mt_conv_geom *g);
CU_EXTERN int cu_draw(mt_tensor *t, const mt_draw_args *d);
CU_EXTERN int cu_separable(mt_tensor *r, const mt_tensor *x, const mt_taps *th, const mt_taps *tw);
CU_EXTERN int cu_param_loop(mt_param_kernel kernel, mt_tensor *out, const mt_tensor *const *ins, int nin,
                            const double *p, const int64_t *pi);
/* cu_index.cu: the index ops and argmax (mt_device_extra) */
CU_EXTERN int cu_index_select(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base);
CU_EXTERN int cu_index_add(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, double alpha,
                           int64_t base);
CU_EXTERN int cu_index_copy(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int64_t base);
CU_EXTERN int cu_index_fill(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int64_t base);
CU_EXTERN int cu_gather(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base);
CU_EXTERN int cu_scatter(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int add, int64_t base);
CU_EXTERN int cu_scatter_fill(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int add,
                              int64_t base);
CU_EXTERN int cu_masked_fill(mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
CU_EXTERN int cu_masked_fill_out(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
CU_EXTERN int cu_argmax(mt_tensor *r, const mt_tensor *x, int dim, int flatten, int keepdim, int is_min);
/* cu_conv.cu: 2-D and 3-D convolution on cuDNN; cu_norm.cu: max pooling's
   positions, average pooling over volumes and the normalisations
   (mt_device_extra) */
CU_EXTERN int cu_conv2d(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b,
                        const mt_conv_geom *g);
CU_EXTERN int cu_conv2d_input_grad(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                                   const mt_conv_geom *g);
CU_EXTERN int cu_conv2d_weight_grad(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                                    const mt_conv_geom *g);
CU_EXTERN int cu_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s,
                                    const int64_t *p, const int64_t *d, int ceil_mode, int64_t base);
CU_EXTERN int cu_adaptive_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *out, int64_t base);
CU_EXTERN int cu_max_pool3d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s,
                                    const int64_t *p, const int64_t *d, int ceil_mode, int64_t base);
CU_EXTERN int cu_avg_pool3d(mt_tensor *r, const mt_tensor *x, const int64_t *pool, int flags,
                            const int64_t *in_volume);
CU_EXTERN int cu_conv3d(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b,
                        const mt_conv3d_geom *g);
CU_EXTERN int cu_conv3d_input_grad(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                                   const mt_conv3d_geom *g);
CU_EXTERN int cu_conv3d_weight_grad(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                                    const mt_conv3d_geom *g);
CU_EXTERN int cu_norm_stats(mt_tensor *stats, const mt_tensor *x, const mt_norm_geom *g, double eps,
                            mt_tensor *running_mean, mt_tensor *running_var, double momentum);
CU_EXTERN int cu_norm_running_stats(mt_tensor *stats, const mt_tensor *running_mean, const mt_tensor *running_var,
                                    const mt_norm_geom *g, double eps, int dtype);
CU_EXTERN int cu_norm_apply(mt_tensor *y, const mt_tensor *x, const mt_tensor *stats, const mt_tensor *w,
                            const mt_tensor *b, const mt_norm_geom *g);
CU_EXTERN int cu_norm_backward(mt_tensor *gx, mt_tensor *gw, mt_tensor *gb, const mt_tensor *gy, const mt_tensor *x,
                               const mt_tensor *stats, const mt_tensor *w, const mt_norm_geom *g, int fixed_stats);
/* torch.backends.cuda.matmul.allow_tf32 */
CU_EXTERN void cu_set_allow_tf32(int on);
CU_EXTERN int cu_get_allow_tf32(void);

/* ---- elementwise geometry, for every kernel that walks tensors ----
   Up to MT_MAX_DIMS dims, collapsed where contiguous; byte strides per
   operand; the element's offsets computed from its linear index. Built on
   the host and passed to kernels by value. */
#define CU_MAX_OPERANDS 4
typedef struct {
  int ndim;                                   /* after collapsing, >= 1 */
  int nops;
  int64_t numel;
  int64_t shape[MT_MAX_DIMS];                 /* innermost last */
  int64_t stride[CU_MAX_OPERANDS][MT_MAX_DIMS];   /* bytes */
} cu_geom;
/* geometry of ops[0..n) of one shape (broadcast views already expanded) */
CU_EXTERN void cu_geom_init(cu_geom *g, int n, const mt_tensor *const *ops);

#endif
