/* dispatch.h: the one path every op call takes, and the registry's runtime
   table. A binding reads its Lua arguments and calls mt_call_*; the call
   then runs, in this order:
     1. the kernel's own argument checks (shapes, dtypes, values);
     2. the op hook (the profiler's, or the op counter's): one branch when off;
     3. the kernel of the tensors' device, from the device's kernel table
        (src/tensor registers the CPU's; a GPU backend registers its own);
     4. autograd, when an input carries autograd metadata: the node built
        from the registry's derivative (src/autograd registers it, below),
        and for an in-place op PyTorch's protocol (the op runs out of place on
        a copy carrying the tensor's history, and the result is written back;
        see mt_ag_inplace_needed).
   Before all of them, autocast (mixed precision): where it is on for the
   inputs' device, an out-of-place op casts its float inputs as its registry
   category says (mt_op_infos[op].autocast: the lower dtype, float32, or the
   widest of them) and runs on the casts; one test when off.
   Returns 0, or -1 with mt_error() set. */
#ifndef MT_DISPATCH_H
#define MT_DISPATCH_H

#include "../tensor/mt_ops.h"

/* ---- the registry at run time ---- */
enum { MT_AC_NONE, MT_AC_LOWER, MT_AC_FP32, MT_AC_PROMOTE };

typedef struct {
  const char *name;          /* Lua and C name */
  const char *aliases;       /* more Lua names, separated by spaces ("" none) */
  const char *family;        /* the registry list: "unary_float", "binary", ..., "reduce", "along",
                                "select", "product", "add_product", "param", "index", "put",
                                "mask", "view", "join", "nn", "random", "factory", "optim", "cast" */
  const char *signature;     /* how Lua calls it: "dims", "var", "norm", "none" (reductions), "dim"
                                (along a dim), "dim", "kth", "sort", "topk", "arg" (selections), the
                                inputs' shapes (products: "MK KN"), the arguments after self (ops
                                with parameters: "tensor1 tensor2 value=1"), the index's shape
                                (index ops: "select", "gather"), and the source's kind (puts:
                                "select source", "gather value"), what follows the mask (masks:
                                "value", "source", "none"), the arguments after self (views:
                                "dim:dim start:pos length:int"), the Lua function (nn kernels:
                                "_conv2d"; "" for one only derivatives call); "" elementwise */
  const char *domain;        /* where gradcheck samples each input: "any ", "pos ", "big ", "cnd ", "unq " per
                                input */
  int arity;                 /* tensor inputs: 1 to 3 (a join's list counts as one); 0 for a factory
                                and an optimizer step */
  int autocast;              /* MT_AC_* */
  int differentiable;        /* the registry gives it a derivative */
  int inplace;               /* 1: has x:name_(); 2: exists in place only (fill, zero, copy: x:name_() and
                                Torch7's x:name() both write x; the random samplers, uniform_, ...) */
  int lua_name;              /* 0: reached only through its aliases or an option (div_floor) */
} mt_op_info;

extern const mt_op_info mt_op_infos[MT_NUM_OPS];

/* ---- the device kernel table: one kernel per family ---- */
typedef struct {
  int (*unary)(mt_tensor *r, const mt_tensor *x, mt_op op, int inplace, int default_float);
  int (*binary)(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha, int inplace,
                int default_float);
  int (*reduce)(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, int dtype, double param,
                int default_float);
  int (*along)(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, int dtype);
  int (*select)(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, mt_op op, int64_t k, int dim,
                int keepdim, int flag);
  int (*product)(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op);
  int (*add_product)(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b, mt_op op,
                     double beta, double alpha, int inplace);
  int (*param)(mt_tensor *r, const mt_operand *in, mt_op op, const double *p, int inplace, int default_float);
  int (*index)(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base);
  int (*put)(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, const mt_tensor *src,
             double alpha, int64_t base, int inplace);
  int (*mask)(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_tensor *mask, const mt_tensor *src, int inplace);
  int (*view)(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *a, int inplace);
  int (*join)(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim);
  int (*nn)(mt_tensor *r, mt_op op, const mt_nn_args *a);
  int (*random)(mt_tensor *r, mt_op op, const mt_random_args *a);
} mt_device_kernels;
/* A backend's kernels for device (MT_CPU, MT_CUDA); the CPU's are there
   from the start. A family a backend leaves NULL fails with a clear error. */
void mt_register_kernels(int device, const mt_device_kernels *k);

/* ---- autograd ----
   src/autograd registers what the call path needs of it (as PyTorch's
   autograd is one key of its dispatcher): the dispatcher sits below
   autograd, whose derivative formulas call ops through it too, so that they
   run on their tensors' device and the op hook sees them. */
typedef struct {
  int (*record_unary)(mt_tensor *r, const mt_tensor *x, mt_op op);
  int (*record_binary)(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha);
  int (*record_cast)(mt_tensor *r, const mt_tensor *x);
  int (*record_reduce)(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, double param);
  int (*record_along)(mt_tensor *r, const mt_tensor *x, mt_op op, int dim);
  int (*record_select)(mt_tensor *values, const mt_tensor *indices, const mt_tensor *x, mt_op op, int dim,
                       int64_t base);
  int (*record_product)(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op);
  int (*record_add_product)(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
                            mt_op op, double beta, double alpha);
  int (*record_param)(mt_tensor *r, const mt_operand *in, mt_op op, const double *p);
  int (*record_index)(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base);
  int (*record_put)(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index,
                    const mt_tensor *src, double alpha, int64_t base);
  int (*record_mask)(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_tensor *mask, const mt_tensor *src);
  int (*record_view)(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *a);
  int (*record_join)(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim);
  int (*record_nn)(mt_tensor *r, mt_op op, const mt_nn_args *a);
  /* the in-place protocol: see mt_ag_inplace_needed in src/autograd/ag.h */
  int (*inplace_needed)(const char *op, const mt_tensor *t, const mt_tensor *other);
  int (*inplace_source)(mt_tensor *src, const mt_tensor *t);
  int (*inplace_commit)(mt_tensor *t, mt_tensor *r);
  void (*release_meta)(void *grad_meta);
  /* autocast's cache: whether t is a weight (a leaf that requires grad),
     and dst viewing src with its history */
  int (*is_weight)(const mt_tensor *t);
  void (*alias)(mt_tensor *dst, const mt_tensor *src);
} mt_autograd_hooks;
void mt_register_autograd(const mt_autograd_hooks *hooks);

/* ---- the op hook ----
   Called as hook(op, 0, a, b, c) before the kernel, with up to three of its
   tensor inputs (NULL where it has fewer, or a number stands there), and
   hook(op, 1, NULL, NULL, NULL) after it; NULL is off (one branch per call).
   The op counter below and the profiler (profiler.h) are such hooks. */
typedef void (*mt_op_hook_fn)(int op, int phase, const mt_tensor *a, const mt_tensor *b, const mt_tensor *c);
void mt_set_op_hook(mt_op_hook_fn hook);
mt_op_hook_fn mt_get_op_hook(void);

/* The op counter: while on, how many calls each op took (since it was
   turned on): torch._op_counts(). */
void mt_op_counter_enable(int on);
int64_t mt_op_count(int op);

/* The kernel of the operands' device alone: no hook, no autograd (the
   engine's own gradient sums). */
int mt_run_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha, int inplace,
                  int default_float);

/* ---- autocast ----
   mt_autocast_set turns it on or off for a device type (MT_CPU, MT_CUDA)
   with its lower dtype; mt_autocast_get reads that. mt_autocast_region(1)
   enters a region and (0) leaves one: leaving the outermost drops the casts
   of weights (leaves that require grad) kept for reuse within it.
   mt_autocast_pause turns every device's off until mt_autocast_resume of
   what it returned (autograd's backward runs in the forward's dtypes). */
int mt_autocast_set(int device, int enabled, int dtype);
void mt_autocast_get(int device, int *enabled, int *dtype);
void mt_autocast_region(int entering);
int mt_autocast_pause(void);
void mt_autocast_resume(int was);

/* ---- calls ----
   Out of place, r is empty and receives the result. In place (inplace 1), r
   is x (a's tensor) and takes the result, in its own dtype. default_float:
   the float dtype integer inputs promote to. */
int mt_call_unary(mt_tensor *r, mt_tensor *x, mt_op op, int inplace, int default_float);
int mt_call_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha, int inplace,
                   int default_float);
/* x:round({decimals=d}) as PyTorch: round(x * 10^d) / 10^d, or for d < 0
   round(x / 10^-d) * 10^-d, in x's dtype (float16 and bfloat16 compute in
   float32, as PyTorch); composed of the registry's ops, so its gradient is
   round's (zero). */
int mt_call_round_decimals(mt_tensor *r, mt_tensor *x, double decimals, int inplace, int default_float);
/* x[key] = v (PyTorch's index assignment): key an index tensor (int64 or
   int32, indices along dim 0 counting from base) or a bool or uint8 mask
   over x's leading dims, on the CPU or x's device; v a tensor converted to
   x's dtype and broadcast to the shape x[key] has, or a 0-dim value. Runs
   as the registry's in-place puts (index_fill_, index_copy_, masked_fill_,
   masked_scatter_), so autograd, the op hook and every device come with
   them; errors are named "index assignment". */
int mt_call_index_put(mt_tensor *x, const mt_tensor *key, const mt_tensor *v, int64_t base);
/* Compositions of the registry's ops, as PyTorch composes them:
   r = isclose(a, b): a == b, or |a - b| <= atol + |rtol b| and finite (in
   a's dtype; integers in default_float), NaN beside NaN with equal_nan; a
   and b share a dtype and broadcast. *result = allclose: every element
   isclose. *result = equal: the same shape and equal values (promoted). */
int mt_call_isclose(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, double rtol, double atol, int equal_nan,
                    int default_float);
int mt_call_allclose(int *result, const mt_tensor *a, const mt_tensor *b, double rtol, double atol, int equal_nan,
                     int default_float);
int mt_call_equal(int *result, const mt_tensor *a, const mt_tensor *b);
/* r = x in dtype, recorded */
int mt_call_cast(mt_tensor *r, const mt_tensor *x, int dtype);
/* r = x in dtype on (device, index), a copy, recorded; op names errors */
int mt_call_to(mt_tensor *r, const mt_tensor *x, int dtype, int device, int index, const char *op);
/* r = the reduction op of x over the dims in mask (MT_ALL_DIMS: every
   dim), as mt_reduce (src/tensor/mt_reduce.h): dtype (-1 none) converts x
   first, param is var's correction or norm's order. */
int mt_call_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, int dtype, double param,
                   int default_float);
/* r = the op along dim (0-based) of x (cumsum, softmax, ...), as mt_along;
   dtype (-1 none) converts x first. In place (inplace 1: cumsum_,
   cumprod_), r is x, which takes the result in its own dtype (through the
   in-place protocol under autograd). */
int mt_call_along(mt_tensor *r, mt_tensor *x, mt_op op, int dim, int dtype, int inplace);
/* values and indices = the selection op of x along dim (sort, topk, max
   along a dim, ...), as mt_selection (src/tensor/mt_reduce.h); the indices
   count from base (the bindings' 1) */
int mt_call_select(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, mt_op op, int64_t k, int dim,
                   int keepdim, int flag, int64_t base);
/* r = the product op of a and b (mm, matmul, ...), as mt_product
   (src/tensor/mt_linalg.h) */
int mt_call_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op);
/* r = beta * input + alpha * the product op (addmm, ...) of a and b; in
   place (inplace 1), r is input, which must have the product's shape */
int mt_call_add_product(mt_tensor *r, mt_tensor *input, const mt_tensor *a, const mt_tensor *b, mt_op op,
                        double beta, double alpha, int inplace);
/* r = the elementwise op with parameters (clamp, lerp, ...) of the operands
   in[0 .. arity-1] (in[0] a tensor, the others a tensor or a number where
   the op allows) and the parameters p[0], p[1], as mt_param
   (src/tensor/mt_ops.h); in place (inplace 1), r is in[0].t */
int mt_call_param(mt_tensor *r, const mt_operand *in, mt_op op, const double *p, int inplace, int default_float);
/* r = the index op (index_select, gather) of x along dim (0-based) at index
   (int64, counting from base), as mt_index_op (src/tensor/mt_ops.h) */
int mt_call_index(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base);
/* r = x with src put at index along dim (index_add, scatter, ...), as
   mt_put_op (src/tensor/mt_ops.h): a copy of x, or in place (inplace 1) x
   itself, r being x; src is a tensor (a value: a 0-dim tensor of x's
   dtype) */
int mt_call_put(mt_tensor *r, mt_tensor *x, mt_op op, int dim, const mt_tensor *index, const mt_tensor *src,
                double alpha, int64_t base, int inplace);
/* r = the mask op (masked_fill, masked_scatter, masked_select) of x with
   the bool mask and src (a tensor; a value: a 0-dim tensor; NULL for
   masked_select), as mt_mask_op (src/tensor/mt_ops.h); in place (inplace
   1), r is x */
int mt_call_mask(mt_tensor *r, mt_tensor *x, mt_op op, const mt_tensor *mask, const mt_tensor *src, int inplace);
/* r = the view op (view, narrow, permute, flip, tril, ...) of x with the
   arguments a (dims 0-based), as mt_view_op (src/tensor/mt_ops.h); in
   place (inplace 1: tril_, triu_), r is x */
int mt_call_view(mt_tensor *r, mt_tensor *x, mt_op op, const mt_view_args *a, int inplace);
/* r = the join op (cat, stack) of ts[0..n) along dim (0-based), as
   mt_join_op (src/tensor/mt_ops.h) */
int mt_call_join(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim);
/* r = the nn kernel op (conv2d, avg_pool2d, batch_norm, ...) of the
   arguments a, as mt_nn_op (src/tensor/mt_ops.h): x, w and b on one device */
int mt_call_nn(mt_tensor *r, mt_op op, const mt_nn_args *a);
/* r = the random op (uniform_, bernoulli, randperm, ...) of the arguments
   a, as mt_random_op (src/tensor/mt_ops.h). A sampler (named with a
   trailing _) fills r in place: r must be writable, and under autograd it
   becomes a constant (its history cut). The device is r's for a sampler,
   else that of a->t or of normal's operands (the CPU with none). Nothing is
   recorded: a sample has no derivative. */
int mt_call_random(mt_tensor *r, mt_op op, const mt_random_args *a);
/* r (empty) = the factory op (zeros, full, arange, eye, ...) of the
   arguments a, as mt_factory_op (src/tensor/mt_ops.h); nothing recorded */
int mt_call_factory(mt_tensor *r, mt_op op, const mt_factory_args *a);
/* the optimizer step op (optim_sgd, optim_adam, ...) of the arguments a,
   as mt_optim_op (src/tensor/mt_ops.h): a->t[0] updated in place */
int mt_call_optim(mt_op op, const mt_optim_args *a);

#endif
