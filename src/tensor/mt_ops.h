/* mt_ops.h: the op enum, and the elementwise ops' kernels. The ops are
   declared in the registry (src/ops/registry.h), one entry each; the
   elementwise kernels (mt_pointwise.c) are generated from its kernel column,
   the reductions' (mt_reduce.h) are built from it. */
#ifndef MT_OPS_H
#define MT_OPS_H

#include "mt_tensor.h"
#include "mt_conv.h"
#include "mt_norm.h"
#include "mt_resample.h"
#include "mt_optim.h"
#include "../ops/registry.h"

/* Every op of the registry: the elementwise ones first. */
typedef enum {
#define MT_X(name, expr, E, ...) MT_OP_##name,
#define MT_LIST(list) list(MT_X, _)
  MT_POINTWISE_LISTS(MT_LIST)
  MT_NUM_POINTWISE_OPS,
  MT_OP_REDUCE_BEFORE_ = MT_NUM_POINTWISE_OPS - 1,
  MT_REDUCE_OPS(MT_X, _)
  MT_OP_END_REDUCE,
  MT_OP_ALONG_BEFORE_ = MT_OP_END_REDUCE - 1,
  MT_ALONG_OPS(MT_X, _)
  MT_OP_END_ALONG,
  MT_OP_SELECT_BEFORE_ = MT_OP_END_ALONG - 1,
  MT_SELECT_OPS(MT_X, _)
  MT_OP_END_SELECT,
  MT_OP_PRODUCT_BEFORE_ = MT_OP_END_SELECT - 1,
  MT_PRODUCT_OPS(MT_X, _)
  MT_OP_END_PRODUCT,
  MT_OP_ADD_PRODUCT_BEFORE_ = MT_OP_END_PRODUCT - 1,
  MT_ADD_PRODUCT_OPS(MT_X, _)
  MT_OP_END_ADD_PRODUCT,
  MT_OP_PARAM_BEFORE_ = MT_OP_END_ADD_PRODUCT - 1,
  MT_PARAM_OPS(MT_X, _)
  MT_OP_END_PARAM,
  MT_OP_INDEX_BEFORE_ = MT_OP_END_PARAM - 1,
  MT_INDEX_OPS(MT_X, _)
  MT_OP_END_INDEX,
  MT_OP_PUT_BEFORE_ = MT_OP_END_INDEX - 1,
  MT_PUT_OPS(MT_X, _)
  MT_OP_END_PUT,
  MT_OP_MASK_BEFORE_ = MT_OP_END_PUT - 1,
  MT_MASK_OPS(MT_X, _)
  MT_OP_END_MASK,
  MT_OP_VIEW_BEFORE_ = MT_OP_END_MASK - 1,
  MT_VIEW_OPS(MT_X, _)
  MT_OP_END_VIEW,
  MT_OP_JOIN_BEFORE_ = MT_OP_END_VIEW - 1,
  MT_JOIN_OPS(MT_X, _)
  MT_OP_END_JOIN,
  MT_OP_NN_BEFORE_ = MT_OP_END_JOIN - 1,
  MT_NN_OPS(MT_X, _)
  MT_OP_END_NN,
  MT_OP_RANDOM_BEFORE_ = MT_OP_END_NN - 1,
  MT_RANDOM_OPS(MT_X, _)
  MT_OP_END_RANDOM,
  MT_OP_FACTORY_BEFORE_ = MT_OP_END_RANDOM - 1,
  MT_FACTORY_OPS(MT_X, _)
  MT_OP_END_FACTORY,
  MT_OP_OPTIM_BEFORE_ = MT_OP_END_FACTORY - 1,
  MT_OPTIM_OPS(MT_X, _)
  MT_OP_END_OPTIM,
  MT_OP_CAST_BEFORE_ = MT_OP_END_OPTIM - 1,
  MT_CAST_OPS(MT_X, _)
#undef MT_LIST
#undef MT_X
  MT_NUM_OPS
} mt_op;

extern const char *const mt_op_names[MT_NUM_OPS];

/* A family's entry point expands its list with MT_KERNEL_CASE, the family's
   kernel word (VIEW, NN, ...) defined as its call: one case per entry,
   returning the kernel column; mt_not_in_family is the error after it. */
#define MT_KERNEL_CASE(name, kernel, E, ...) case MT_OP_##name: return kernel;
int mt_not_in_family(const char *entry, int op, const char *what);

/* the families, as ranges of the enum */
static inline int mt_op_is_pointwise(int op) { return op >= 0 && op < MT_NUM_POINTWISE_OPS; }
static inline int mt_op_is_reduce(int op) { return op >= MT_NUM_POINTWISE_OPS && op < MT_OP_END_REDUCE; }
static inline int mt_op_is_along(int op) { return op >= MT_OP_END_REDUCE && op < MT_OP_END_ALONG; }
static inline int mt_op_is_select(int op) { return op >= MT_OP_END_ALONG && op < MT_OP_END_SELECT; }
static inline int mt_op_is_product(int op) { return op >= MT_OP_END_SELECT && op < MT_OP_END_PRODUCT; }
static inline int mt_op_is_add_product(int op) { return op >= MT_OP_END_PRODUCT && op < MT_OP_END_ADD_PRODUCT; }
static inline int mt_op_is_param(int op) { return op >= MT_OP_END_ADD_PRODUCT && op < MT_OP_END_PARAM; }
static inline int mt_op_is_index(int op) { return op >= MT_OP_END_PARAM && op < MT_OP_END_INDEX; }
static inline int mt_op_is_put(int op) { return op >= MT_OP_END_INDEX && op < MT_OP_END_PUT; }
static inline int mt_op_is_mask(int op) { return op >= MT_OP_END_PUT && op < MT_OP_END_MASK; }
static inline int mt_op_is_view(int op) { return op >= MT_OP_END_MASK && op < MT_OP_END_VIEW; }
static inline int mt_op_is_join(int op) { return op >= MT_OP_END_VIEW && op < MT_OP_END_JOIN; }
static inline int mt_op_is_nn(int op) { return op >= MT_OP_END_JOIN && op < MT_OP_END_NN; }
static inline int mt_op_is_random(int op) { return op >= MT_OP_END_NN && op < MT_OP_END_RANDOM; }
static inline int mt_op_is_factory(int op) { return op >= MT_OP_END_RANDOM && op < MT_OP_END_FACTORY; }
static inline int mt_op_is_optim(int op) { return op >= MT_OP_END_FACTORY && op < MT_OP_END_OPTIM; }
static inline int mt_op_is_cast(int op) { return op >= MT_OP_END_OPTIM && op < MT_NUM_OPS; }

/* An operand: a tensor, or a Lua number or boolean (a "wrapped" scalar that
   promotes weakly, as in PyTorch). */
typedef struct {
  const mt_tensor *t;      /* NULL for a scalar */
  double value;
  int is_int;              /* scalar was an integer (1) or a boolean (2) */
} mt_operand;

/* The dtype an op on these operands computes in (PyTorch's result_type:
   dimensioned tensors, then 0-dim tensors, then scalars). */
int mt_result_type(const mt_operand *ops, int n, int default_float);

/* r empty (out-of-place) or, with inplace, r is the first input's tensor:
   the op computes in the promoted dtype and casts into r, which must hold
   the broadcast shape with no two elements sharing memory. alpha is the
   add/sub multiplier (1 for the rest); integral for integer dtypes. */
int mt_unary(mt_tensor *r, const mt_tensor *x, mt_op op, int inplace, int default_float);
int mt_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op,
              double alpha, int inplace, int default_float);

/* Elementwise ops with parameters (the registry's MT_PARAM_OPS). */
int mt_clamp(mt_tensor *r, const mt_tensor *x, const double *lo, const double *hi, int inplace);
/* clamp with bounds in[1] and in[2] (which: 3 both, 1 lower only, 2 upper
   only), each a tensor or a number: PyTorch's promotion over x and the
   bounds; tensor bounds broadcast (maximum, then minimum) */
int mt_clamp_operands(mt_tensor *r, const mt_operand *in, int which, int inplace, int default_float);
int mt_softplus(mt_tensor *r, const mt_tensor *x, double beta, double threshold);
int mt_leaky_relu(mt_tensor *r, const mt_tensor *x, double slope, int inplace);
/* r = a + value * t1 * t2 (addcmul) or a + value * t1 / t2 (addcdiv) */
int mt_addc(mt_tensor *r, const mt_tensor *a, const mt_tensor *t1, const mt_tensor *t2,
            double value, int divide, int inplace, int default_float);
int mt_lerp(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, const mt_operand *w, int inplace);
/* r = x filled with v (a number or a one-element tensor; NULL: zero), and
   r = x with src copied in (broadcast, or as Torch7 a contiguous src of x's
   element count): x itself in place, else a new tensor like x */
int mt_fill_operand(mt_tensor *r, const mt_tensor *x, const mt_operand *v, int inplace);
int mt_copy_operand(mt_tensor *r, const mt_tensor *x, const mt_tensor *src, int inplace);
/* The registry's op with parameters (mt_op_is_param): r = op(in, p), as
   its kernel column says; in[0].t is the tensor it is called on */
int mt_param(mt_tensor *r, const mt_operand *in, mt_op op, const double *p, int inplace, int default_float);
/* The registry's index op (mt_op_is_index): r = op(x, dim, index), the
   indices counting from base, as its kernel column says (mt_index.h) */
int mt_index_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base);
/* The registry's put (mt_op_is_put): r = x with src put at index along dim
   (a copy of x; in place, r is x), as its kernel column says */
int mt_put_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, const mt_tensor *src,
              double alpha, int64_t base, int inplace);
/* The registry's mask op (mt_op_is_mask): r = op(x, mask, src) (src NULL
   for masked_select; in place, r is x), as its kernel column says */
int mt_mask_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_tensor *mask, const mt_tensor *src, int inplace);
/* The arguments of a view op (the registry's MT_VIEW_OPS), as its signature
   reads them: the scalars in i[] in the signature's order (dims 0-based),
   the lists in v (n values) and w (m values). */
typedef struct {
  int64_t i[3];
  int n, m;
  int64_t v[MT_MAX_DIMS], w[MT_MAX_DIMS];
} mt_view_args;
/* The registry's view op (mt_op_is_view): r = op(x, a), as its kernel
   column says; in place (tril_, triu_), r is x. Ops that read x's
   elements (flip, roll, tril, triu, repeat's copy) run on CPU tensors. */
int mt_view_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *a, int inplace);
/* The registry's join (mt_op_is_join): r = op(ts[0..n), dim), as its
   kernel column says */
int mt_join_op(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim);
/* The arguments of an nn kernel (the registry's MT_NN_OPS); each op reads
   those its kernel column names, the rest are NULL or 0. */
typedef struct {
  const mt_tensor *x, *w, *b;     /* the input, the weight and the bias (NULL: none) */
  const mt_conv_geom *conv;       /* the convolutions, im2col and col2im */
  const mt_conv3d_geom *conv3;    /* the 3-D convolutions */
  const mt_resample *rs;          /* the resampling maps */
  const mt_norm_geom *norm;       /* the normalisations */
  const int64_t *pool;            /* max pooling: kernel, stride, padding, dilation (each h, w, or
                                     t, h, w for max_pool3d); the
                                     adaptive one: the output (h, w); resample_adjoint: the input plane */
  mt_tensor *aux;                 /* a second result, empty on entry: a normalisation's statistics
                                     (required), conv2d_weight's bias gradient (NULL: none) */
  mt_tensor *running_mean, *running_var;   /* batch norm: moved in place when training */
  double eps, momentum;
  int flag;                       /* max pooling: ceil_mode; batch norm: training */
  int64_t base;                   /* the max pooling positions count from base */
} mt_nn_args;
/* The registry's nn kernel (mt_op_is_nn): r = op(a), as its kernel column
   says (mt_nn.c) */
int mt_nn_op(mt_tensor *r, mt_op op, const mt_nn_args *a);
/* The registry's op of each resampling map (indexed by mt_resample's kind,
   MT_RS_AVG_POOL ...: avg_pool2d ...) */
extern const mt_op mt_resample_ops[MT_RS_CIRCULAR + 1];
/* y = the normalisation of a->x (batch, group or layer norm by a->norm):
   its statistics into a->aux (mt_norm_stats; batch norm out of training,
   from the running ones: mt_norm_running_stats), then mt_norm_apply */
int mt_norm_forward(mt_tensor *y, const mt_nn_args *a);
/* The arguments of a random op (the registry's MT_RANDOM_OPS); each op
   reads those its kernel column names. */
typedef struct mt_generator mt_generator;
typedef struct {
  mt_generator *g;                /* the generator drawn from */
  double p[2];                    /* the numbers: from and to, mean and std, lambda, p, ... */
  int64_t i[2];                   /* the integers: random_'s bounds, a count */
  const mt_tensor *t;             /* bernoulli's probabilities (NULL: p[0]), multinomial's weights */
  const mt_operand *mean, *std;   /* normal's operands */
  int flag;                       /* random_: no bound; bernoulli: p[0] given; multinomial: replacement */
  int dtype;                      /* randperm's dtype; normal's default float */
} mt_random_args;
/* The registry's random op (mt_op_is_random): r = op(a), as its kernel
   column says; for a sampler (named with a trailing _), r is the tensor
   filled (mt_random.c) */
int mt_random_op(mt_tensor *r, mt_op op, const mt_random_args *a);
/* The arguments of a factory (the registry's MT_FACTORY_OPS); each op
   reads those its kernel column names. */
typedef struct {
  int ndim;
  const int64_t *shape;           /* the size */
  int dtype, device, index;       /* the new tensor's dtype, and where it is made */
  double p[3];                    /* start, end, step; logspace's base */
  int64_t n[2];                   /* linspace's steps; eye's sizes */
  const mt_operand *value;        /* full's value: a number or a tensor of one element */
  const char *name;               /* the name errors give (new_zeros, zeros_like), NULL: the op's */
} mt_factory_args;
/* The registry's factory (mt_op_is_factory): r = op(a), as its kernel
   column says (mt_create.c); r is empty on entry */
int mt_factory_op(mt_tensor *r, mt_op op, const mt_factory_args *a);
/* r new, of a's size, dtype and device (named op in errors): empty's
   kernel; filled with v (zeros, ones); full's, filled with a->value */
int mt_factory_new(mt_tensor *r, const mt_factory_args *a, const char *op);
int mt_factory_filled(mt_tensor *r, const mt_factory_args *a, const char *op, double v);
int mt_factory_full(mt_tensor *r, const mt_factory_args *a);
/* The arguments of an optimizer step (the registry's MT_OPTIM_OPS): the
   tensors, and the hyperparameters of the one update the op is. */
typedef struct {
  mt_tensor *t[5];                /* the parameter, its gradient, its state buffers (NULL: unused) */
  const mt_sgd_args *sgd;
  const mt_adam_args *adam;
  const mt_rmsprop_args *rmsprop;
  const mt_adagrad_args *adagrad;
  const mt_adadelta_args *adadelta;
  const mt_adamax_args *adamax;
  const mt_nadam_args *nadam;
  const mt_radam_args *radam;
} mt_optim_args;
/* The registry's optimizer step (mt_op_is_optim), as its kernel column says
   (mt_optim_op.c); each update runs on its parameter's device */
int mt_optim_op(mt_op op, const mt_optim_args *a);
/* the view ops' kernels beyond mt_tensor.h and mt_shape.h, their dims as
   the arguments' int64 lists: t() (a matrix transposed, fewer dims as they
   are), permute, movedim, flip and roll with their lists counted,
   as_strided with sizes and strides counted, and flip along one dim for a
   tensor of at least min_dims */
int mt_t(mt_tensor *r, const mt_tensor *x);
int mt_permute_n(mt_tensor *r, const mt_tensor *x, const int64_t *dims, int n);
int mt_movedim_n(mt_tensor *r, const mt_tensor *x, const int64_t *src, int n, const int64_t *dst, int m);
int mt_flip_n(mt_tensor *r, const mt_tensor *x, const int64_t *dims, int n);
int mt_roll_n(mt_tensor *r, const mt_tensor *x, const int64_t *shifts, int n, const int64_t *dims, int m);
int mt_as_strided_n(mt_tensor *r, const mt_tensor *x, const int64_t *size, int n, const int64_t *stride, int m,
                    int64_t offset);
int mt_flip_at_least(mt_tensor *r, const mt_tensor *x, int dim, int min_dims, const char *op);
int mt_where(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b, int default_float);

/* r = g * f'(v) for an activation f in one pass (g and v of one shape and
   float dtype): v is f's result for relu, tanh and sigmoid, its input for
   gelu (exact, and its tanh form) */
typedef enum { MT_ACT_RELU, MT_ACT_TANH, MT_ACT_SIGMOID, MT_ACT_GELU, MT_ACT_GELU_TANH } mt_activation;
int mt_activation_grad(mt_tensor *r, const mt_tensor *g, const mt_tensor *v, mt_activation kind);
/* The loops of the ops with parameters (mt_pointwise_param.c): clamp with
   number bounds (lo, hi or both), softplus, leaky_relu, addcmul, addcdiv,
   lerp with a number or a tensor weight. */
/* One dim of a separable linear map (mt_resample.c): output o takes
   weight[k] times input index[k] for k in [start[o], start[o + 1]). */
typedef struct {
  const int64_t *start, *index;
  const double *weight;
  int64_t out, in;
} mt_taps;

/* One draw of mt_random.c's samplers, for a device to make on its own:
   value i of the draw takes the random bits of counter block offset + (i >>
   lane_bits) under key (the layout of mt_random.h), then the kind's
   transform with the parameters the CPU's fill kernels read. */
typedef enum { MT_D_UNIFORM, MT_D_NORMAL, MT_D_LOG_NORMAL, MT_D_BERNOULLI, MT_D_EXPONENTIAL, MT_D_GEOMETRIC,
               MT_D_CAUCHY, MT_D_INTEGER } mt_dist_kind;
typedef struct {
  mt_dist_kind kind;
  uint32_t key[2];
  uint64_t offset;
  int words, lane_bits;
  double a, b, hi, scale;
  int shift;
  int64_t from;
  uint64_t span;
  const double *p;      /* bernoulli: one probability per value, on the device, or NULL for a */
} mt_draw_args;

/* What the selections pick from each sorted slice (mt_reduce.c). */
typedef enum { MT_SEL_SORTED, MT_SEL_KTH, MT_SEL_MEDIAN, MT_SEL_MODE } mt_sel_op;
typedef enum {
  MT_PK_CLAMP_LO, MT_PK_CLAMP_HI, MT_PK_CLAMP_BOTH, MT_PK_SOFTPLUS, MT_PK_LEAKY_RELU, MT_PK_ADDCMUL, MT_PK_ADDCDIV,
  MT_PK_LERP_SCALAR, MT_PK_LERP_TENSOR
} mt_param_kernel;
/* the op a loop belongs to, for messages ("clamp", ..., "lerp") */
const char *mt_param_kernel_name(mt_param_kernel kernel);

/* ---- on other devices ----
   Besides the registry's ops (the dispatcher's table), autograd's formulas
   call where (WHERE) and the fused activation gradients (FUSED), and the
   losses and their derivatives the index ops (gather, scatter, ...) and
   argmax; a backend registers its kernels for them here, with the
   semantics of the CPU's functions of the same names (mt_index.h,
   mt_reduce.h). The tensors reach them on one device, except one-element
   CPU tensors (a 0-dim operand of where, a fill value). NULL: no kernel. */
typedef struct {
  int (*where)(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b, int default_float);
  int (*activation_grad)(mt_tensor *r, const mt_tensor *g, const mt_tensor *v, mt_activation kind);
  /* the ops with parameters once mt_pointwise_param.c has checked their operands and made them views of
     one dtype and shape on the device: out = kernel(ins[0..nin)), its numbers in p (as doubles) and pi
     (the same as integers, for integer dtypes); and the elementwise binary kernel clamp's tensor bounds
     take (the signature of mt_binary) */
  int (*param_loop)(mt_param_kernel kernel, mt_tensor *out, const mt_tensor *const *ins, int nin, const double *p,
                    const int64_t *pi);
  int (*binary)(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha, int inplace,
                int default_float);
  /* the positions of x's nonzero elements, as mt_nonzero (mt_index.h): a (count, ndim) int64 tensor */
  int (*nonzero)(mt_tensor *r, const mt_tensor *x, int64_t base);
  /* the selections once mt_reduce.c has checked them: every slice of x along dim sorted (ascending, NaN
     last; descending, NaN first; ties in index order), and M results per slice written to values and
     0-based indices: the first M (MT_SEL_SORTED), or the one MT_SEL_KTH (the k-th, 0-based),
     MT_SEL_MEDIAN or MT_SEL_MODE picks (M = 1; the dim dropped unless keepdim) */
  int (*select_along)(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, mt_sel_op op, int64_t M,
                      int64_t k, int descending, int keepdim);
  /* the resampling maps (average pooling, padding, interpolation) and their adjoints: r (..., th->out,
     tw->out) from x (..., th->in, tw->in), contiguous, float32 or float64, each output the sum over
     its taps in both dims */
  int (*separable)(mt_tensor *r, const mt_tensor *x, const mt_taps *th, const mt_taps *tw);
  /* unfold and fold (mt_conv.h's mt_im2col, mt_col2im), on contiguous float32 or float64 tensors */
  int (*im2col)(mt_tensor *cols, const mt_tensor *x, const mt_conv_geom *g);
  int (*col2im)(mt_tensor *x, const mt_tensor *cols, const mt_conv_geom *g);
  /* every value of a draw into t (contiguous), as mt_random.c's fill kernels make them */
  int (*draw)(mt_tensor *t, const mt_draw_args *d);
  int (*index_select)(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base);
  int (*index_add)(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, double alpha, int64_t base);
  int (*index_copy)(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int64_t base);
  int (*index_fill)(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int64_t base);
  int (*gather)(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base);
  int (*scatter)(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int add, int64_t base);
  int (*scatter_fill)(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int add,
                      int64_t base);
  int (*masked_fill)(mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
  int (*masked_fill_out)(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
  int (*argmax)(mt_tensor *r, const mt_tensor *x, int dim, int flatten, int keepdim, int is_min);
  /* convolution (mt_conv.h), max pooling's positions (mt_pool.h), normalisation (mt_norm.h) */
  int (*conv2d)(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, const mt_conv_geom *g);
  int (*conv2d_input_grad)(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                           const mt_conv_geom *g);
  int (*conv2d_weight_grad)(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                            const mt_conv_geom *g);
  int (*max_pool2d_indices)(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s,
                            const int64_t *p, const int64_t *d, int ceil_mode, int64_t base);
  int (*adaptive_max_pool2d_indices)(mt_tensor *idx, const mt_tensor *x, const int64_t *out, int64_t base);
  int (*max_pool3d_indices)(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s,
                            const int64_t *p, const int64_t *d, int ceil_mode, int64_t base);
  int (*avg_pool3d)(mt_tensor *r, const mt_tensor *x, const int64_t *pool, int flags, const int64_t *in_volume);
  int (*conv3d)(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, const mt_conv3d_geom *g);
  int (*conv3d_input_grad)(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                           const mt_conv3d_geom *g);
  int (*conv3d_weight_grad)(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                            const mt_conv3d_geom *g);
  int (*norm_stats)(mt_tensor *stats, const mt_tensor *x, const mt_norm_geom *g, double eps, mt_tensor *running_mean,
                    mt_tensor *running_var, double momentum);
  int (*norm_running_stats)(mt_tensor *stats, const mt_tensor *running_mean, const mt_tensor *running_var,
                            const mt_norm_geom *g, double eps, int dtype);
  int (*norm_apply)(mt_tensor *y, const mt_tensor *x, const mt_tensor *stats, const mt_tensor *w, const mt_tensor *b,
                    const mt_norm_geom *g);
  int (*norm_backward)(mt_tensor *gx, mt_tensor *gw, mt_tensor *gb, const mt_tensor *gy, const mt_tensor *x,
                       const mt_tensor *stats, const mt_tensor *w, const mt_norm_geom *g, int fixed_stats);
} mt_device_extra;
void mt_register_extra(int device, const mt_device_extra *k);
/* The registered kernels of the device of t, u and v (NULL: none), or NULL
   with an error naming op when they are on different devices or the device
   has none; never called for CPU tensors. */
const mt_device_extra *mt_extra_for(const char *op, const mt_tensor *t, const mt_tensor *u, const mt_tensor *v);
/* Whether any of t, u, v (NULL: none) is off the CPU: the CPU kernels'
   test before they hand over to mt_extra_for. */
static inline int mt_any_off_cpu(const mt_tensor *t, const mt_tensor *u, const mt_tensor *v) {
  return ((t ? mt_device_of(t) : 0) | (u ? mt_device_of(u) : 0) | (v ? mt_device_of(v) : 0)) != MT_CPU;
}
/* Runs kernel field of the extra kernels of op's tensors, or fails. */
#define MT_EXTRA_CALL(op, field, t, u, v, ...)                                                        \
  do {                                                                                                \
    const mt_device_extra *k_ = mt_extra_for((op), (t), (u), (v));                                   \
    if (!k_) return -1;                                                                               \
    if (!k_->field) return mt_fail("%s: no kernel for this device yet (move the tensors with :cpu())", (op)); \
    return k_->field(__VA_ARGS__);                                                                    \
  } while (0)

#endif
