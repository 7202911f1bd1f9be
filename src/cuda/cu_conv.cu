/* cu_conv.cu: 2-D and 3-D convolution on the GPU, on cuDNN: the forward
   op, the gradient of its input (conv_transpose2d / 3d) and of its weight
   and bias (mt_device_extra of mt_ops.h), with the semantics and messages
   of mt_conv2d, mt_conv2d_input_grad and mt_conv2d_weight_grad (mt_conv.c)
   and their 3-D ones (mt_conv3d.c): NCHW / NCTHW float32 / float64,
   stride, dilation, groups, padding before and the padding after that the
   output size implies. Both run through one path over nd = 2 or 3 spatial
   dims (cuDNN's N-d descriptors).

   cuDNN takes one padding per dim for both sides. Where the padding after
   that the output uses differs from the padding before by more than stride - 1 (more
   after than before: 'same' with an even kernel; or fewer rows used than
   the input has, with a transposed convolution's output_padding), that dim
   is padded here instead: the input is copied into a zero-filled tensor of
   exactly the rows the windows read, and cuDNN runs on it unpadded; the
   input gradient is computed at that size and its rows of the real input
   copied out. Other dims keep cuDNN's own (symmetric) padding.

   One cuDNN handle per device, made on first use, on the device's current
   stream. Algorithms come from cuDNN's heuristics (the _v7 queries), asked
   once per geometry and kept in a host map; each is tried in order until
   one runs (a workspace that does not fit, or an algorithm cuDNN refuses,
   moves to the next). float32 computes in plain FMA unless
   torch.backends.cuda.matmul.allow_tf32 (cu_get_allow_tf32) is on, which
   lets cuDNN use TF32 tensor cores; float64 computes in double. Batches
   whose tensors have more than INT_MAX elements (cuDNN's limit) run in
   chunks of images. */
#include <cudnn.h>
#include <climits>
#include <map>
#include <mutex>
#include <vector>
#include "cu.h"

/* ---- errors ---- */
static int dnn_fail(const char *op, cudnnStatus_t s) {
  return mt_fail("%s: cuDNN error: %s", op, cudnnGetErrorString(s));
}
#define DNN_TRY(op, call)                                             \
  do {                                                                \
    cudnnStatus_t s_ = (call);                                        \
    if (s_ != CUDNN_STATUS_SUCCESS) return dnn_fail((op), s_);        \
  } while (0)

/* ---- handles: one per device, made on first use ---- */
#define CU_DNN_MAX_DEVICES 64
static cudnnHandle_t dnn_handles[CU_DNN_MAX_DEVICES];
static std::mutex dnn_lock;   /* the handles and the algorithm cache */

/* device index's handle, on its current stream (the device is current) */
static int dnn_handle(const char *op, int index, cudnnHandle_t *h) {
  if (index < 0 || index >= CU_DNN_MAX_DEVICES)
    return mt_fail("%s: device index %d is out of range for cuDNN", op, index);
  {
    std::lock_guard<std::mutex> guard(dnn_lock);
    if (!dnn_handles[index]) {
      cudnnStatus_t s = cudnnCreate(&dnn_handles[index]);
      if (s != CUDNN_STATUS_SUCCESS) {
        dnn_handles[index] = NULL;
        return dnn_fail(op, s);
      }
    }
  }
  DNN_TRY(op, cudnnSetStream(dnn_handles[index], cu_stream(index)));
  *h = dnn_handles[index];
  return 0;
}

/* ---- scoped resources: every early return releases them ---- */
struct dnn_descs {
  cudnnTensorDescriptor_t x = NULL, y = NULL;
  cudnnFilterDescriptor_t w = NULL;
  cudnnConvolutionDescriptor_t conv = NULL;
  ~dnn_descs() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

struct tmp_tensor {   /* a tensor released at the end of the scope */
  mt_tensor t = {};
  ~tmp_tensor() {
    if (t.storage) mt_tensor_release(&t);
  }
};

struct workspace {    /* a block of the caching allocator */
  void *p = NULL;
  size_t n = 0;
  int index = 0;
  ~workspace() { cu_free(p, n, index); }
};

/* alpha / beta in the type cuDNN reads for the data type: double for
   float64, float otherwise */
struct dnn_scalar {
  float f;
  double d;
  explicit dnn_scalar(double v) : f((float)v), d(v) {}
  const void *of(int dtype) const { return dtype == MT_FLOAT64 ? (const void *)&d : (const void *)&f; }
};

/* ---- the convolution cuDNN runs ----
   The input, after this file's explicit padding (in[] and pad[] are what
   cuDNN sees), and the rest of the geometry over nd spatial dims; n is the
   whole batch, run in chunks of at most INT_MAX elements per tensor. */
#define DNN_MAX_SP 3
struct dnn_geom {
  int dtype, index, tf32, nd;
  int64_t n, c, o, groups;
  int64_t in[DNN_MAX_SP], k[DNN_MAX_SP], out[DNN_MAX_SP], pad[DNN_MAX_SP], s[DNN_MAX_SP], dl[DNN_MAX_SP];
};

enum { DNN_FWD, DNN_BWD_DATA, DNN_BWD_FILTER };

static cudnnDataType_t dnn_type(int dtype) { return dtype == MT_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

/* float32 without TF32 is restricted to FMA kernels: cuDNN's default math
   would use TF32 tensor cores on Ampere and later */
static cudnnMathType_t dnn_math(const dnn_geom *G) {
  return G->dtype == MT_FLOAT32 && !G->tf32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
}

static int64_t prod(const int64_t *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/* a contiguous NC... tensor descriptor of (m, ch, sp[0..nd)) */
static cudnnStatus_t dnn_set_tensor(cudnnTensorDescriptor_t d, cudnnDataType_t t, int64_t m, int64_t ch,
                                    const int64_t *sp, int nd) {
  int dims[2 + DNN_MAX_SP], strides[2 + DNN_MAX_SP];
  dims[0] = (int)m;
  dims[1] = (int)ch;
  for (int i = 0; i < nd; i++) dims[2 + i] = (int)sp[i];
  strides[nd + 1] = 1;
  for (int i = nd; i >= 0; i--) strides[i] = strides[i + 1] * dims[i + 1];
  return cudnnSetTensorNdDescriptor(d, t, nd + 2, dims, strides);
}

/* the descriptors of G for a batch of m images */
static int dnn_set_descs(const char *op, dnn_descs *d, const dnn_geom *G, int64_t m) {
  const cudnnDataType_t t = dnn_type(G->dtype);
  const int nd = G->nd;
  if (!d->x) DNN_TRY(op, cudnnCreateTensorDescriptor(&d->x));
  if (!d->y) DNN_TRY(op, cudnnCreateTensorDescriptor(&d->y));
  if (!d->w) DNN_TRY(op, cudnnCreateFilterDescriptor(&d->w));
  if (!d->conv) DNN_TRY(op, cudnnCreateConvolutionDescriptor(&d->conv));
  DNN_TRY(op, dnn_set_tensor(d->x, t, m, G->c, G->in, nd));
  DNN_TRY(op, dnn_set_tensor(d->y, t, m, G->o, G->out, nd));
  int wd[2 + DNN_MAX_SP], pad[DNN_MAX_SP], str[DNN_MAX_SP], dil[DNN_MAX_SP];
  wd[0] = (int)G->o;
  wd[1] = (int)(G->c / G->groups);
  for (int i = 0; i < nd; i++) {
    wd[2 + i] = (int)G->k[i];
    pad[i] = (int)G->pad[i];
    str[i] = (int)G->s[i];
    dil[i] = (int)G->dl[i];
  }
  DNN_TRY(op, cudnnSetFilterNdDescriptor(d->w, t, CUDNN_TENSOR_NCHW, nd + 2, wd));
  DNN_TRY(op, cudnnSetConvolutionNdDescriptor(d->conv, nd, pad, str, dil, CUDNN_CROSS_CORRELATION, t));
  DNN_TRY(op, cudnnSetConvolutionGroupCount(d->conv, (int)G->groups));
  DNN_TRY(op, cudnnSetConvolutionMathType(d->conv, dnn_math(G)));
  /* the padding plan must give cuDNN exactly the output the geometry has */
  int od[2 + DNN_MAX_SP];
  DNN_TRY(op, cudnnGetConvolutionNdForwardOutputDim(d->conv, d->x, d->w, nd + 2, od));
  bool same = od[0] == m && od[1] == G->o;
  for (int i = 0; i < nd; i++) same = same && od[2 + i] == G->out[i];
  if (!same) {
    const int64_t want[2 + DNN_MAX_SP] = {m, G->o, G->out[0], G->out[1], G->out[2]};
    int64_t got[2 + DNN_MAX_SP];
    for (int i = 0; i < nd + 2; i++) got[i] = od[i];
    char bg[128], bw[128];
    return mt_fail("%s: cuDNN's output %s differs from %s (internal error)", op, mt_dims_str(got, nd + 2, bg, sizeof bg),
                   mt_dims_str(want, nd + 2, bw, sizeof bw));
  }
  return 0;
}

/* ---- algorithms: cuDNN's heuristics, asked once per geometry ---- */
static std::map<std::vector<int64_t>, std::vector<int>> dnn_algos;

/* Orders the algorithms that report success, those of the math type asked
   for first (cuDNN may list tensor-core variants the descriptor then
   refuses or runs in its own math type). */
template <class P> static void dnn_pick(const P *perf, int got, cudnnMathType_t math, std::vector<int> *out) {
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < got; i++)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && (perf[i].mathType == math) == (pass == 0)) {
        int a = (int)perf[i].algo;
        bool seen = false;
        for (int b : *out) seen = seen || b == a;
        if (!seen) out->push_back(a);
      }
}

static int dnn_find(const char *op, int kind, cudnnHandle_t h, const dnn_descs *d, const dnn_geom *G, int64_t m,
                    std::vector<int> *algos) {
  std::vector<int64_t> key = {kind, G->index, G->dtype, G->tf32, G->nd, m, G->c, G->o, G->groups};
  for (int i = 0; i < G->nd; i++) {
    const int64_t v[6] = {G->in[i], G->k[i], G->out[i], G->pad[i], G->s[i], G->dl[i]};
    key.insert(key.end(), v, v + 6);
  }
  std::lock_guard<std::mutex> guard(dnn_lock);
  auto it = dnn_algos.find(key);
  if (it != dnn_algos.end()) {
    *algos = it->second;
    return 0;
  }
  std::vector<int> found;
  int got = 0;
  const cudnnMathType_t math = dnn_math(G);
  if (kind == DNN_FWD) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    DNN_TRY(op, cudnnGetConvolutionForwardAlgorithm_v7(h, d->x, d->w, d->conv, d->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                       &got, perf));
    dnn_pick(perf, got, math, &found);
  } else if (kind == DNN_BWD_DATA) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    DNN_TRY(op, cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d->w, d->y, d->conv, d->x,
                                                            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf));
    dnn_pick(perf, got, math, &found);
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    DNN_TRY(op, cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d->x, d->y, d->conv, d->w,
                                                              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, perf));
    dnn_pick(perf, got, math, &found);
  }
  if (found.empty()) return mt_fail("%s: cuDNN has no algorithm for this convolution", op);
  dnn_algos[key] = found;
  *algos = found;
  return 0;
}

static cudnnStatus_t dnn_workspace_size(int kind, cudnnHandle_t h, const dnn_descs *d, int algo, size_t *n) {
  if (kind == DNN_FWD)
    return cudnnGetConvolutionForwardWorkspaceSize(h, d->x, d->w, d->conv, d->y, (cudnnConvolutionFwdAlgo_t)algo, n);
  if (kind == DNN_BWD_DATA)
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d->w, d->y, d->conv, d->x,
                                                        (cudnnConvolutionBwdDataAlgo_t)algo, n);
  return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d->x, d->y, d->conv, d->w,
                                                        (cudnnConvolutionBwdFilterAlgo_t)algo, n);
}

/* FWD: y = conv(x, w); BWD_DATA: x = its adjoint in the input applied to y;
   BWD_FILTER: w = beta * w + its adjoint in the weight */
static cudnnStatus_t dnn_launch(int kind, cudnnHandle_t h, const dnn_descs *d, int algo, void *ws, size_t wsn,
                                const void *one, const void *beta, char *x, char *w, char *y) {
  if (kind == DNN_FWD)
    return cudnnConvolutionForward(h, one, d->x, x, d->w, w, d->conv, (cudnnConvolutionFwdAlgo_t)algo, ws, wsn, beta,
                                   d->y, y);
  if (kind == DNN_BWD_DATA)
    return cudnnConvolutionBackwardData(h, one, d->w, w, d->y, y, d->conv, (cudnnConvolutionBwdDataAlgo_t)algo, ws,
                                        wsn, beta, d->x, x);
  return cudnnConvolutionBackwardFilter(h, one, d->x, x, d->y, y, d->conv, (cudnnConvolutionBwdFilterAlgo_t)algo, ws,
                                        wsn, beta, d->w, w);
}

/* Images per chunk: every tensor of a chunk within INT_MAX elements. */
static int dnn_chunk(const char *op, int64_t n, int64_t per_image, int64_t *nb) {
  if (per_image > INT_MAX) return mt_fail("%s: too large for cuDNN: %lld elements per image", op, (long long)per_image);
  *nb = per_image > 0 ? INT_MAX / per_image : INT_MAX;
  if (*nb > n) *nb = n;
  if (*nb < 1) *nb = 1;
  return 0;
}

/* One kind of convolution of G over the whole batch on contiguous x (n, c,
   in...), w (o, c / groups, k...), y (n, o, out...), in chunks of images;
   the weight gradient sums over the chunks. */
static int dnn_conv(const char *op, int kind, const dnn_geom *G, char *x, char *w, char *y) {
  cudnnHandle_t h = NULL;
  if (dnn_handle(op, G->index, &h)) return -1;
  const int64_t xi = G->c * prod(G->in, G->nd), yi = G->o * prod(G->out, G->nd);
  const size_t es = (size_t)mt_dtypes[G->dtype].size;
  int64_t nb = 1;
  if (dnn_chunk(op, G->n, xi > yi ? xi : yi, &nb)) return -1;
  const dnn_scalar one(1), zero(0);
  dnn_descs d;
  std::vector<int> algos;
  int64_t prev = -1;
  for (int64_t i = 0; i < G->n; i += nb) {
    const int64_t m = G->n - i < nb ? G->n - i : nb;
    if (m != prev && (dnn_set_descs(op, &d, G, m) || dnn_find(op, kind, h, &d, G, m, &algos))) return -1;
    prev = m;
    const void *beta = kind == DNN_BWD_FILTER && i > 0 ? one.of(G->dtype) : zero.of(G->dtype);
    char *xc = x + (size_t)(i * xi) * es, *yc = y + (size_t)(i * yi) * es;
    /* the first algorithm that gets its workspace and runs; failing that,
       out of memory when a workspace did not fit, else cuDNN's last refusal */
    cudnnStatus_t s = CUDNN_STATUS_NOT_SUPPORTED, refused = CUDNN_STATUS_NOT_SUPPORTED;
    bool ran = false, oom = false;
    for (int algo : algos) {
      size_t wsn = 0;
      if ((s = dnn_workspace_size(kind, h, &d, algo, &wsn)) != CUDNN_STATUS_SUCCESS) {
        refused = s;
        continue;
      }
      workspace ws;
      ws.index = G->index;
      ws.n = wsn;
      if (wsn && !(ws.p = cu_alloc(wsn, G->index))) {   /* too large now: a leaner algorithm may fit */
        oom = true;
        continue;
      }
      s = dnn_launch(kind, h, &d, algo, ws.p, wsn, one.of(G->dtype), beta, xc, w, yc);
      if (s == CUDNN_STATUS_SUCCESS) {
        ran = true;
        break;
      }
      if (s != CUDNN_STATUS_NOT_SUPPORTED && s != CUDNN_STATUS_BAD_PARAM) return dnn_fail(op, s);
      refused = s;
    }
    if (!ran) return oom ? -1 : dnn_fail(op, refused);   /* -1: cu_alloc's error */
  }
  return 0;
}

/* t (n, c, len) += b (c): contiguous, in chunks of images */
static int dnn_add_bias(const char *op, int dtype, int index, char *t, const mt_tensor *b, int64_t n, int64_t c,
                        int64_t len) {
  cudnnHandle_t h = NULL;
  if (dnn_handle(op, index, &h)) return -1;
  int64_t nb = 1;
  if (dnn_chunk(op, n, c * len, &nb)) return -1;
  if (len > INT_MAX) return mt_fail("%s: too large for cuDNN: %lld elements per channel", op, (long long)len);
  const cudnnDataType_t dt = dnn_type(dtype);
  const size_t es = (size_t)mt_dtypes[dtype].size;
  const dnn_scalar one(1);
  dnn_descs d;
  DNN_TRY(op, cudnnCreateTensorDescriptor(&d.x));
  DNN_TRY(op, cudnnCreateTensorDescriptor(&d.y));
  DNN_TRY(op, cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, dt, 1, (int)c, 1, 1));
  for (int64_t i = 0; i < n; i += nb) {
    const int64_t m = n - i < nb ? n - i : nb;
    DNN_TRY(op, cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, dt, (int)m, (int)c, 1, (int)len));
    DNN_TRY(op, cudnnAddTensor(h, one.of(dtype), d.x, mt_data(b), one.of(dtype), d.y, t + (size_t)(i * c * len) * es));
  }
  return 0;
}

/* gb (o) = gy (n, o, len) summed over the batch and space, in chunks of images */
static int dnn_bias_grad(const char *op, int dtype, int index, char *gb, const char *gy, int64_t n, int64_t o,
                         int64_t len) {
  cudnnHandle_t h = NULL;
  if (dnn_handle(op, index, &h)) return -1;
  int64_t nb = 1;
  if (dnn_chunk(op, n, o * len, &nb)) return -1;
  if (len > INT_MAX) return mt_fail("%s: too large for cuDNN: %lld elements per channel", op, (long long)len);
  const cudnnDataType_t dt = dnn_type(dtype);
  const size_t es = (size_t)mt_dtypes[dtype].size;
  const dnn_scalar one(1), zero(0);
  dnn_descs d;
  DNN_TRY(op, cudnnCreateTensorDescriptor(&d.x));
  DNN_TRY(op, cudnnCreateTensorDescriptor(&d.y));
  DNN_TRY(op, cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, dt, 1, (int)o, 1, 1));
  for (int64_t i = 0; i < n; i += nb) {
    const int64_t m = n - i < nb ? n - i : nb;
    DNN_TRY(op, cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, dt, (int)m, (int)o, 1, (int)len));
    DNN_TRY(op, cudnnConvolutionBackwardBias(h, one.of(dtype), d.y, gy + (size_t)(i * o * len) * es,
                                             i > 0 ? one.of(dtype) : zero.of(dtype), d.x, gb));
  }
  return 0;
}

/* ---- padding ----
   Along one dim, input size in, kernel k, stride s, dilation dl, padding
   before p, output size out: the windows read the padded rows [-p, span -
   p) with span = (out - 1) * s + dl * (k - 1) + 1, so the padding after
   that is used is span - p - in (negative: the last rows are never read).
   cuDNN's symmetric padding p gives out rows exactly when that is in (p -
   s, p]; otherwise the dim is padded here: cuDNN sees span rows, unpadded,
   holding the input's first keep rows at offset at and zeros around. */
typedef struct {
  int explicit_pad;
  int64_t size, pad;   /* what cuDNN sees */
  int64_t at, keep;    /* where the input's first keep rows go in the padded tensor */
} dnn_pad;

static dnn_pad pad_dim(int64_t in, int64_t k, int64_t s, int64_t p, int64_t dl, int64_t out) {
  const int64_t span = (out - 1) * s + dl * (k - 1) + 1, after = span - p - in;
  dnn_pad d;
  if (p - after >= 0 && p - after < s) {
    d.explicit_pad = 0;
    d.size = in; d.pad = p; d.at = 0; d.keep = in;
  } else {
    d.explicit_pad = 1;
    d.size = span; d.pad = 0; d.at = p;
    d.keep = in + after < in ? in + after : in;
    if (d.keep < 0 || d.at >= span) d.keep = 0;
  }
  return d;
}

/* ---- the geometry of either rank ----
   A convolution over nd spatial dims: x (n, c, in...), w (o, c / groups,
   k...), y (n, o, out...), with stride, padding before and dilation per
   spatial dim; pd is each dim's padding plan. */
struct conv_geom {
  int nd;
  int64_t n, c, o, groups;
  int64_t in[DNN_MAX_SP], k[DNN_MAX_SP], out[DNN_MAX_SP], s[DNN_MAX_SP], p[DNN_MAX_SP], d[DNN_MAX_SP];
  dnn_pad pd[DNN_MAX_SP];
};

static void plan_padding(conv_geom *g) {
  for (int i = 0; i < g->nd; i++) g->pd[i] = pad_dim(g->in[i], g->k[i], g->s[i], g->p[i], g->d[i], g->out[i]);
}

static conv_geom from_2d(const mt_conv_geom *g) {
  conv_geom c = {};
  c.nd = 2;
  c.n = g->n; c.c = g->c; c.o = g->o; c.groups = g->groups;
  const int64_t in[2] = {g->h, g->w}, k[2] = {g->kh, g->kw}, out[2] = {g->oh, g->ow};
  const int64_t s[2] = {g->sh, g->sw}, p[2] = {g->ph, g->pw}, d[2] = {g->dh, g->dw};
  for (int i = 0; i < 2; i++) {
    c.in[i] = in[i]; c.k[i] = k[i]; c.out[i] = out[i]; c.s[i] = s[i]; c.p[i] = p[i]; c.d[i] = d[i];
  }
  plan_padding(&c);
  return c;
}

static conv_geom from_3d(const mt_conv3d_geom *g) {
  conv_geom c = {};
  c.nd = 3;
  c.n = g->n; c.c = g->c; c.o = g->o; c.groups = g->groups;
  const int64_t in[3] = {g->t, g->h, g->w}, k[3] = {g->kt, g->kh, g->kw}, out[3] = {g->ot, g->oh, g->ow};
  const int64_t s[3] = {g->st, g->sh, g->sw}, p[3] = {g->pt, g->ph, g->pw}, d[3] = {g->dt, g->dh, g->dw};
  for (int i = 0; i < 3; i++) {
    c.in[i] = in[i]; c.k[i] = k[i]; c.out[i] = out[i]; c.s[i] = s[i]; c.p[i] = p[i]; c.d[i] = d[i];
  }
  plan_padding(&c);
  return c;
}

static bool any_explicit(const conv_geom *g) {
  bool e = false;
  for (int i = 0; i < g->nd; i++) e = e || g->pd[i].explicit_pad;
  return e;
}

/* shapes: (a, b, v[0..nd)) */
static void shape_of(int64_t *shape, int64_t a, int64_t b, const int64_t *v, int nd) {
  shape[0] = a;
  shape[1] = b;
  for (int i = 0; i < nd; i++) shape[2 + i] = v[i];
}

/* the shapes of the input, the weight and the output */
static void operand_shapes(const conv_geom *g, int64_t *xs, int64_t *ws, int64_t *ys) {
  shape_of(xs, g->n, g->c, g->in, g->nd);
  shape_of(ws, g->o, g->c / g->groups, g->k, g->nd);
  shape_of(ys, g->n, g->o, g->out, g->nd);
}

/* view of t's window: along each spatial dim i, [at[i], at[i] + keep[i]) */
static int window(mt_tensor *r, const mt_tensor *t, const int64_t *at, const int64_t *keep, int nd) {
  mt_tensor cur = {}, next = {};
  int rc = 0;
  mt_tensor_alias(&cur, t);
  for (int i = 0; rc == 0 && i < nd; i++) {
    rc = mt_narrow(&next, &cur, 2 + i, at[i], keep[i]);
    mt_tensor_release(&cur);
    cur = next;
    next = mt_tensor{};
  }
  if (rc == 0) *r = cur;
  else mt_tensor_release(&cur);
  return rc;
}

/* the padded tensor's window that holds the input's rows, and the input's rows it holds */
static void pad_windows(const conv_geom *g, int64_t *at, int64_t *keep, int64_t *zero) {
  for (int i = 0; i < g->nd; i++) {
    at[i] = g->pd[i].at;
    keep[i] = g->pd[i].keep;
    zero[i] = 0;
  }
}

static bool none_kept(const conv_geom *g) {
  for (int i = 0; i < g->nd; i++)
    if (g->pd[i].keep == 0) return true;
  return false;
}

static bool all_kept(const conv_geom *g) {
  for (int i = 0; i < g->nd; i++)
    if (g->pd[i].keep < g->in[i]) return false;
  return true;
}

/* ---- common checks ---- */
/* t must have shape want (the geometry's: a CPU pointer or a short buffer
   must never reach a kernel) */
static int check_shape(const char *op, const char *name, const mt_tensor *t, const int64_t *want, int ndim) {
  char bt[128], bw[128];
  int ok = t->ndim == ndim;
  for (int i = 0; ok && i < ndim; i++) ok = t->shape[i] == want[i];
  if (!ok)
    return mt_fail("%s: expected %s of size %s, got %s", op, name, mt_dims_str(want, ndim, bw, sizeof bw),
                   mt_shape_str(t, bt, sizeof bt));
  return 0;
}

static int check_bias(const char *op, const mt_tensor *b, int64_t n) {
  char bb[128];
  if (b && (b->ndim != 1 || b->shape[0] != n))
    return mt_fail("%s: expected a bias of size %lld, got %s", op, (long long)n, mt_shape_str(b, bb, sizeof bb));
  return 0;
}

/* Every tensor on one CUDA device (its index in *index), which is made
   current; one floating dtype (mt_conv.c's messages). */
static int check_inputs(const char *op, const mt_tensor *const *in, int n, int *index) {
  char dev[32];
  for (int i = 1; i < n; i++)
    if (in[i] && mt_check_same_device(op, in[0], in[i])) return -1;
  if (mt_device_of(in[0]) != MT_CUDA)
    return mt_fail("%s: expected CUDA tensors, got them on %s", op, mt_tensor_device_str(in[0], dev, sizeof dev));
  const int dtype = in[0]->dtype;
  if (dtype != MT_FLOAT32 && dtype != MT_FLOAT64)
    return mt_fail("%s: expected float32 or float64 tensors, got %s", op, mt_dtypes[dtype].name);
  for (int i = 1; i < n; i++)
    if (in[i] && in[i]->dtype != dtype)
      return mt_fail("%s: expected tensors of one dtype, got %s and %s", op, mt_dtypes[dtype].name,
                     mt_dtypes[in[i]->dtype].name);
  *index = mt_device_index_of(in[0]);
  return cu_set_device(op, *index);
}

/* every size cuDNN takes as an int */
static int check_int(const char *op, const conv_geom *g) {
  std::vector<int64_t> v = {g->c, g->o, g->groups};
  for (int i = 0; i < g->nd; i++) {
    const int64_t e[8] = {g->in[i], g->k[i], g->out[i], g->s[i], g->d[i], g->pd[i].size, g->pd[i].pad, g->p[i]};
    v.insert(v.end(), e, e + 8);
  }
  for (int64_t x : v)
    if (x > INT_MAX) return mt_fail("%s: too large for cuDNN: a size, stride or padding of %lld", op, (long long)x);
  return 0;
}

static dnn_geom make_geom(const conv_geom *g, int dtype, int index) {
  dnn_geom G = {};
  G.dtype = dtype; G.index = index; G.tf32 = cu_get_allow_tf32(); G.nd = g->nd;
  G.n = g->n; G.c = g->c; G.o = g->o; G.groups = g->groups;
  for (int i = 0; i < g->nd; i++) {
    G.in[i] = g->pd[i].size; G.k[i] = g->k[i]; G.out[i] = g->out[i];
    G.pad[i] = g->pd[i].pad; G.s[i] = g->s[i]; G.dl[i] = g->d[i];
  }
  return G;
}

/* x (n, c, in...) as cuDNN reads it: x itself (contiguous) without explicit
   padding, else zero-filled at the padded size with x's rows in place */
static int padded_input(const char *op, mt_tensor *xv, const mt_tensor *x, const conv_geom *g, int index) {
  if (!any_explicit(g)) return mt_contiguous(xv, x);
  int64_t shape[2 + DNN_MAX_SP], sizes[DNN_MAX_SP], at[DNN_MAX_SP], keep[DNN_MAX_SP], zero[DNN_MAX_SP];
  for (int i = 0; i < g->nd; i++) sizes[i] = g->pd[i].size;
  shape_of(shape, g->n, g->c, sizes, g->nd);
  if (mt_tensor_init_on(op, xv, x->dtype, 2 + g->nd, shape, MT_CUDA, index) || mt_fill(xv, 0)) return -1;
  if (none_kept(g) || mt_numel(xv) == 0) return 0;
  pad_windows(g, at, keep, zero);
  tmp_tensor dst, src;
  if (window(&dst.t, xv, at, keep, g->nd) || window(&src.t, x, zero, keep, g->nd)) return -1;
  return mt_copy(&dst.t, &src.t);
}

/* ---- the three convolutions over either rank ---- */
static int conv_forward(const char *op, mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b,
                        const conv_geom *g) {
  const mt_tensor *in[3] = {x, w, b};
  const int nd = g->nd;
  int64_t xs[2 + DNN_MAX_SP], ws[2 + DNN_MAX_SP], ys[2 + DNN_MAX_SP];
  operand_shapes(g, xs, ws, ys);
  int index = 0;
  if (check_inputs(op, in, 3, &index) || check_bias(op, b, g->o) || check_shape(op, "input", x, xs, 2 + nd) ||
      check_shape(op, "weight", w, ws, 2 + nd) || check_int(op, g))
    return -1;
  if (mt_tensor_init_on(op, y, x->dtype, 2 + nd, ys, MT_CUDA, index)) return -1;
  int rc = 0;
  if (mt_numel(y) > 0) {
    tmp_tensor xc, wc, bc;
    if (mt_numel(x) == 0 || mt_numel(w) == 0) {   /* nothing to sum: the bias alone */
      rc = mt_fill(y, 0);
    } else {
      rc = padded_input(op, &xc.t, x, g, index) || mt_contiguous(&wc.t, w);
      if (rc == 0) {
        const dnn_geom G = make_geom(g, x->dtype, index);
        rc = dnn_conv(op, DNN_FWD, &G, mt_data(&xc.t), mt_data(&wc.t), mt_data(y));
      }
    }
    if (rc == 0 && b)
      rc = mt_contiguous(&bc.t, b) || dnn_add_bias(op, x->dtype, index, mt_data(y), &bc.t, g->n, g->o, prod(g->out, nd));
  }
  if (rc) mt_tensor_release(y);
  return rc ? -1 : 0;
}

static int conv_input_grad(const char *op, mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                           const conv_geom *g) {
  const mt_tensor *in[3] = {gy, w, b};
  const int nd = g->nd;
  int64_t xs[2 + DNN_MAX_SP], ws[2 + DNN_MAX_SP], ys[2 + DNN_MAX_SP];
  operand_shapes(g, xs, ws, ys);
  int index = 0;
  if (check_inputs(op, in, 3, &index) || check_bias(op, b, g->c) || check_shape(op, "input", gy, ys, 2 + nd) ||
      check_shape(op, "weight", w, ws, 2 + nd) || check_int(op, g))
    return -1;
  if (mt_tensor_init_on(op, gx, gy->dtype, 2 + nd, xs, MT_CUDA, index)) return -1;
  int rc = 0;
  if (mt_numel(gx) > 0) {
    tmp_tensor gyc, wc, bc, gxv, dst, src;
    if (mt_numel(gy) == 0 || mt_numel(w) == 0) {
      rc = mt_fill(gx, 0);
    } else {
      rc = mt_contiguous(&gyc.t, gy) || mt_contiguous(&wc.t, w);
      const dnn_geom G = make_geom(g, gy->dtype, index);
      if (rc == 0 && !any_explicit(g)) {
        rc = dnn_conv(op, DNN_BWD_DATA, &G, mt_data(gx), mt_data(&wc.t), mt_data(&gyc.t));
      } else if (rc == 0) {
        /* the gradient of the padded input, then the input's rows of it
           (rows the windows never read get zeros) */
        int64_t vshape[2 + DNN_MAX_SP], sizes[DNN_MAX_SP], at[DNN_MAX_SP], keep[DNN_MAX_SP], zero[DNN_MAX_SP];
        for (int i = 0; i < nd; i++) sizes[i] = g->pd[i].size;
        shape_of(vshape, g->n, g->c, sizes, nd);
        pad_windows(g, at, keep, zero);
        rc = mt_tensor_init_on(op, &gxv.t, gy->dtype, 2 + nd, vshape, MT_CUDA, index);
        if (rc == 0) rc = dnn_conv(op, DNN_BWD_DATA, &G, mt_data(&gxv.t), mt_data(&wc.t), mt_data(&gyc.t));
        if (rc == 0 && !all_kept(g)) rc = mt_fill(gx, 0);
        if (rc == 0 && !none_kept(g))
          rc = window(&dst.t, gx, zero, keep, nd) || window(&src.t, &gxv.t, at, keep, nd) || mt_copy(&dst.t, &src.t);
      }
    }
    if (rc == 0 && b)
      rc = mt_contiguous(&bc.t, b) ||
           dnn_add_bias(op, gy->dtype, index, mt_data(gx), &bc.t, g->n, g->c, prod(g->in, nd));
  }
  if (rc) mt_tensor_release(gx);
  return rc ? -1 : 0;
}

static int conv_weight_grad(const char *op, mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                            const conv_geom *g) {
  const mt_tensor *in[2] = {x, gy};
  const int nd = g->nd;
  int64_t xs[2 + DNN_MAX_SP], ws[2 + DNN_MAX_SP], ys[2 + DNN_MAX_SP];
  operand_shapes(g, xs, ws, ys);
  int index = 0;
  if (check_inputs(op, in, 2, &index) || check_shape(op, "input", x, xs, 2 + nd) ||
      check_shape(op, "grad_output", gy, ys, 2 + nd) || check_int(op, g))
    return -1;
  const int64_t bshape[1] = {g->o};
  if (mt_tensor_init_on(op, gw, x->dtype, 2 + nd, ws, MT_CUDA, index)) return -1;
  if (gb && mt_tensor_init_on(op, gb, x->dtype, 1, bshape, MT_CUDA, index)) {
    mt_tensor_release(gw);
    return -1;
  }
  int rc = 0;
  tmp_tensor xc, gyc;
  const bool empty = mt_numel(x) == 0 || mt_numel(gy) == 0;
  if (mt_numel(gy) > 0) rc = mt_contiguous(&gyc.t, gy);   /* for the bias gradient too */
  if (rc == 0 && mt_numel(gw) > 0) {
    if (empty) {   /* an empty batch (or input) sums to zero */
      rc = mt_fill(gw, 0);
    } else {
      rc = padded_input(op, &xc.t, x, g, index);
      const dnn_geom G = make_geom(g, x->dtype, index);
      if (rc == 0) rc = dnn_conv(op, DNN_BWD_FILTER, &G, mt_data(&xc.t), mt_data(gw), mt_data(&gyc.t));
    }
  }
  if (rc == 0 && gb && mt_numel(gb) > 0)
    rc = mt_numel(gy) == 0 ? mt_fill(gb, 0)
                           : dnn_bias_grad(op, x->dtype, index, mt_data(gb), mt_data(&gyc.t), g->n, g->o,
                                           prod(g->out, nd));
  if (rc) {
    mt_tensor_release(gw);
    if (gb) mt_tensor_release(gb);
  }
  return rc ? -1 : 0;
}

/* ---- entry points ---- */
CU_EXTERN int cu_conv2d(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b,
                        const mt_conv_geom *g) {
  const conv_geom c = from_2d(g);
  return conv_forward("conv2d", y, x, w, b, &c);
}

CU_EXTERN int cu_conv2d_input_grad(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                                   const mt_conv_geom *g) {
  const conv_geom c = from_2d(g);
  return conv_input_grad("conv_transpose2d", gx, gy, w, b, &c);
}

CU_EXTERN int cu_conv2d_weight_grad(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                                    const mt_conv_geom *g) {
  const conv_geom c = from_2d(g);
  return conv_weight_grad("conv2d backward", gw, gb, x, gy, &c);
}

CU_EXTERN int cu_conv3d(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b,
                        const mt_conv3d_geom *g) {
  const conv_geom c = from_3d(g);
  return conv_forward("conv3d", y, x, w, b, &c);
}

CU_EXTERN int cu_conv3d_input_grad(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                                   const mt_conv3d_geom *g) {
  const conv_geom c = from_3d(g);
  return conv_input_grad("conv_transpose3d", gx, gy, w, b, &c);
}

CU_EXTERN int cu_conv3d_weight_grad(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                                    const mt_conv3d_geom *g) {
  const conv_geom c = from_3d(g);
  return conv_weight_grad("conv3d backward", gw, gb, x, gy, &c);
}
