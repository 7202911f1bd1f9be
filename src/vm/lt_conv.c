/* lt_conv.c: the Lua bindings of the registry's nn kernels (MT_NN_OPS in
   src/ops/registry.h), the low-level forms nn.functional builds on (it
   resolves 'same' padding, 1-D shapes, unbatched inputs and option tables):
   convolutions, pooling, padding, interpolation, unfold / fold and the fused
   normalisations; max pooling gives positions (the values are a gather).
   Each binding, l_<name>, reads its arguments into the op's mt_nn_args and
   calls the dispatcher, which runs the kernel and records the derivative;
   its comment gives its exact signature. */
#include "lt.h"
#include "../ops/dispatch.h"

/* the integers at [from, from + n) */
static void read_ints(lua_State *L, int from, int n, int64_t *out) {
  for (int i = 0; i < n; i++) out[i] = luaL_checkinteger(L, from + i);
}

/* the tensor at index i, or NULL for nil (an optional bias, weight, ...) */
static mt_tensor *opt_tensor(lua_State *L, int i, const char *op) {
  return lua_isnoneornil(L, i) ? NULL : lt_check(L, i, op);
}

/* pushes op(a), through the dispatcher */
static int push_nn(lua_State *L, mt_op op, const mt_nn_args *a) {
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_call_nn(r, op, a));
  return 1;
}

/* torch._conv2d(x, w, bias or nil, sh, sw, pad_top, pad_bottom, pad_left, pad_right, dh, dw, groups):
   x (n, c, h, w), w (o, c / groups, kh, kw), bias (o) */
static int l_conv2d(lua_State *L) {
  const char *op = "conv2d";
  mt_tensor *x = lt_check(L, 1, op), *w = lt_check(L, 2, op);
  const mt_tensor *b = opt_tensor(L, 3, op);
  int64_t v[9];
  read_ints(L, 4, 9, v);
  const int64_t stride[2] = {v[0], v[1]}, before[2] = {v[2], v[4]}, after[2] = {v[3], v[5]}, dil[2] = {v[6], v[7]};
  mt_conv_geom g;
  LT_TRY(L, mt_conv_geom_make(&g, op, x, w, stride, before, after, dil, v[8]));
  return push_nn(L, MT_OP_conv2d, &(mt_nn_args){.x = x, .w = w, .b = b, .conv = &g});
}

/* torch._conv_transpose2d(x, w, bias or nil, sh, sw, ph, pw, out_pad_h, out_pad_w, dh, dw, groups):
   x (n, c, h, w), w (c, o / groups, kh, kw), bias (o) */
static int l_conv_transpose2d(lua_State *L) {
  const char *op = "conv_transpose2d";
  mt_tensor *x = lt_check(L, 1, op), *w = lt_check(L, 2, op);
  const mt_tensor *b = opt_tensor(L, 3, op);
  int64_t v[9];
  read_ints(L, 4, 9, v);
  const int64_t stride[2] = {v[0], v[1]}, pad[2] = {v[2], v[3]}, out_pad[2] = {v[4], v[5]}, dil[2] = {v[6], v[7]};
  mt_conv_geom g;
  LT_TRY(L, mt_conv_transpose_geom_make(&g, op, x, w, stride, pad, out_pad, dil, v[8]));
  return push_nn(L, MT_OP_conv_transpose2d, &(mt_nn_args){.x = x, .w = w, .b = b, .conv = &g});
}

/* torch._conv3d(x, w, bias or nil, st, sh, sw, pad_front, pad_back, pad_top, pad_bottom, pad_left,
   pad_right, dt, dh, dw, groups): x (n, c, t, h, w), w (o, c / groups, kt, kh, kw), bias (o) */
static int l_conv3d(lua_State *L) {
  const char *op = "conv3d";
  mt_tensor *x = lt_check(L, 1, op), *w = lt_check(L, 2, op);
  const mt_tensor *b = opt_tensor(L, 3, op);
  int64_t v[13];
  read_ints(L, 4, 13, v);
  const int64_t stride[3] = {v[0], v[1], v[2]}, before[3] = {v[3], v[5], v[7]}, after[3] = {v[4], v[6], v[8]};
  const int64_t dil[3] = {v[9], v[10], v[11]};
  mt_conv3d_geom g;
  LT_TRY(L, mt_conv3d_geom_make(&g, op, x, w, stride, before, after, dil, v[12]));
  return push_nn(L, MT_OP_conv3d, &(mt_nn_args){.x = x, .w = w, .b = b, .conv3 = &g});
}

/* torch._conv_transpose3d(x, w, bias or nil, st, sh, sw, pt, ph, pw, out_pad_t, out_pad_h, out_pad_w,
   dt, dh, dw, groups): x (n, c, t, h, w), w (c, o / groups, kt, kh, kw), bias (o) */
static int l_conv_transpose3d(lua_State *L) {
  const char *op = "conv_transpose3d";
  mt_tensor *x = lt_check(L, 1, op), *w = lt_check(L, 2, op);
  const mt_tensor *b = opt_tensor(L, 3, op);
  int64_t v[13];
  read_ints(L, 4, 13, v);
  const int64_t stride[3] = {v[0], v[1], v[2]}, pad[3] = {v[3], v[4], v[5]}, out_pad[3] = {v[6], v[7], v[8]};
  const int64_t dil[3] = {v[9], v[10], v[11]};
  mt_conv3d_geom g;
  LT_TRY(L, mt_conv_transpose3d_geom_make(&g, op, x, w, stride, pad, out_pad, dil, v[12]));
  return push_nn(L, MT_OP_conv_transpose3d, &(mt_nn_args){.x = x, .w = w, .b = b, .conv3 = &g});
}

/* torch._max_pool2d_indices(x, kh, kw, sh, sw, ph, pw, dh, dw, ceil_mode): int64
   (n, c, oh, ow), the 1-based position of each window's maximum in its h * w
   plane (no history: the values are x gathered there, which differentiates) */
static int l_max_pool2d_indices(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "max_pool2d");
  int64_t v[8];                                 /* kernel, stride, padding, dilation */
  read_ints(L, 2, 8, v);
  return push_nn(L, MT_OP_max_pool2d_indices, &(mt_nn_args){.x = x, .pool = v, .flag = lua_toboolean(L, 10), .base = 1});
}

/* torch._max_pool3d_indices(x, kt, kh, kw, st, sh, sw, pt, ph, pw, dt, dh, dw, ceil_mode):
   int64 (n, c, ot, oh, ow), the 1-based position of each window's maximum in its t * h * w
   volume of x (n, c, t, h, w), the first in (t, h, w) order (no history: the values are x
   gathered there) */
static int l_max_pool3d_indices(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "max_pool3d");
  int64_t v[12];                                /* kernel, stride, padding, dilation */
  read_ints(L, 2, 12, v);
  return push_nn(L, MT_OP_max_pool3d_indices, &(mt_nn_args){.x = x, .pool = v, .flag = lua_toboolean(L, 14), .base = 1});
}

/* torch._avg_pool3d(x, kt, kh, kw, st, sh, sw, pt, ph, pw, ceil_mode, count_include_pad, sum):
   the window means of x (n, c, t, h, w) (the divisor counts the padding when
   count_include_pad), or with sum the window sums: (n, c, ot, oh, ow) */
static int l_avg_pool3d(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "avg_pool3d");
  int64_t v[12] = {0};                          /* kernel, stride, padding; the adjoint's volume unused */
  read_ints(L, 2, 9, v);
  const int flags = (lua_toboolean(L, 11) ? MT_RS_CEIL_MODE : 0) | (lua_toboolean(L, 12) ? MT_RS_COUNT_PAD : 0) |
                    (lua_toboolean(L, 13) ? MT_RS_SUM : 0);
  return push_nn(L, MT_OP_avg_pool3d, &(mt_nn_args){.x = x, .pool = v, .flag = flags});
}
#define l_avg_pool3d_adjoint NULL

/* torch._adaptive_max_pool2d_indices(x, oh, ow): as torch._max_pool2d_indices, for adaptive
   windows (from floor(i * h / oh) to ceil((i + 1) * h / oh), and the same along w) */
static int l_adaptive_max_pool2d_indices(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "adaptive_max_pool2d");
  int64_t out[2];
  read_ints(L, 2, 2, out);
  return push_nn(L, MT_OP_adaptive_max_pool2d_indices, &(mt_nn_args){.x = x, .pool = out, .base = 1});
}

/* ---- the resampling maps: x (*, h, w) -> (*, oh, ow), each kind its registry op ---- */
static int push_resampled(lua_State *L, const mt_tensor *x, const mt_resample *rs) {
  return push_nn(L, mt_resample_ops[rs->kind], &(mt_nn_args){.x = x, .rs = rs});
}

/* the optional scale factor at index i: nil or 0 for none */
static double opt_scale(lua_State *L, int i) { return luaL_optnumber(L, i, 0); }

/* torch._avg_pool2d(x, kh, kw, sh, sw, ph, pw, ceil_mode, count_include_pad, sum): window means
   (the divisor counts the padding when count_include_pad), or with sum the window sums */
static int l_avg_pool2d(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "avg_pool2d");
  int64_t v[6];
  read_ints(L, 2, 6, v);
  const int flags = (lua_toboolean(L, 8) ? MT_RS_CEIL_MODE : 0) | (lua_toboolean(L, 9) ? MT_RS_COUNT_PAD : 0) |
                    (lua_toboolean(L, 10) ? MT_RS_SUM : 0);
  const mt_resample rs = {MT_RS_AVG_POOL, flags, {v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, {0, 0}};
  return push_resampled(L, x, &rs);
}

/* torch._adaptive_avg_pool2d(x, oh, ow) */
static int l_adaptive_avg_pool2d(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "adaptive_avg_pool2d");
  const mt_resample rs = {MT_RS_ADAPTIVE_AVG, 0, {luaL_checkinteger(L, 2), luaL_checkinteger(L, 3)}, {0, 0}, {0, 0}, {0, 0}};
  return push_resampled(L, x, &rs);
}

/* torch._reflection_pad2d(x, left, right, top, bottom), torch._replication_pad2d(...) and
   torch._circular_pad2d(...): the
   last two dims padded (negative: cropped); a 1-D pad is top = bottom = 0 */
static int pad2d(lua_State *L, int kind) {
  mt_tensor *x = lt_check(L, 1, "pad");
  int64_t v[4];
  read_ints(L, 2, 4, v);
  const mt_resample rs = {kind, 0, {0, 0}, {v[2], v[0]}, {v[3], v[1]}, {0, 0}};
  return push_resampled(L, x, &rs);
}
static int l_reflection_pad2d(lua_State *L) { return pad2d(L, MT_RS_REFLECT); }
static int l_replication_pad2d(lua_State *L) { return pad2d(L, MT_RS_REPLICATE); }
static int l_circular_pad2d(lua_State *L) { return pad2d(L, MT_RS_CIRCULAR); }

/* torch._upsample_nearest2d(x, oh, ow, scale_h|nil, scale_w|nil): PyTorch's 'nearest'; the
   scale factors, when given, set the source step (1 / scale), as F.interpolate's */
static int l_upsample_nearest2d(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "interpolate");
  const mt_resample rs = {MT_RS_NEAREST, 0, {luaL_checkinteger(L, 2), luaL_checkinteger(L, 3)}, {0, 0}, {0, 0},
                          {opt_scale(L, 4), opt_scale(L, 5)}};
  return push_resampled(L, x, &rs);
}

/* torch._upsample_bilinear2d(x, oh, ow, align_corners, scale_h|nil, scale_w|nil) */
static int l_upsample_bilinear2d(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "interpolate");
  const mt_resample rs = {MT_RS_BILINEAR, lua_toboolean(L, 4) ? MT_RS_ALIGN_CORNERS : 0,
                          {luaL_checkinteger(L, 2), luaL_checkinteger(L, 3)}, {0, 0}, {0, 0},
                          {opt_scale(L, 5), opt_scale(L, 6)}};
  return push_resampled(L, x, &rs);
}

/* ---- unfold / fold ---- */

/* torch._unfold(x, kh, kw, dh, dw, ph, pw, sh, sw): x (N, C, H, W) -> (N, C * kh * kw, L), the
   sliding windows as columns (F.unfold's argument order: kernel, dilation, padding, stride) */
static int l_im2col(lua_State *L) {
  const char *op = "unfold";
  mt_tensor *x = lt_check(L, 1, op);
  int64_t v[8];
  read_ints(L, 2, 8, v);
  char b[128];
  if (x->ndim != 4) luaL_error(L, "%s: expected a 4-D input (N, C, H, W), got size %s", op, mt_shape_str(x, b, sizeof b));
  mt_conv_geom g;
  LT_TRY(L, mt_unfold_geom_make(&g, op, x->shape, v, v + 2, v + 4, v + 6));
  return push_nn(L, MT_OP_im2col, &(mt_nn_args){.x = x, .conv = &g});
}

/* torch._fold(cols, oh, ow, kh, kw, dh, dw, ph, pw, sh, sw): cols (N, C * kh * kw, L) summed
   back into (N, C, oh, ow), the adjoint of unfold */
static int l_col2im(lua_State *L) {
  const char *op = "fold";
  mt_tensor *x = lt_check(L, 1, op);
  int64_t v[10];
  read_ints(L, 2, 10, v);
  char b[128];
  if (x->ndim != 3) luaL_error(L, "%s: expected a 3-D input (N, C * kh * kw, L), got size %s", op, mt_shape_str(x, b, sizeof b));
  if (v[0] < 1 || v[1] < 1)
    LT_TRY(L, mt_fail("%s: the output size must be positive, got %lldx%lld", op, (long long)v[0], (long long)v[1]));
  int overflow = 0;
  const int64_t taps = mt_size_mul(v[2], v[3], &overflow);
  if (overflow || taps < 1 || x->shape[1] % taps)
    LT_TRY(L, mt_fail("%s: input of size %s: dim 2 must be divisible by the kernel's %lldx%lld", op,
                      mt_shape_str(x, b, sizeof b), (long long)v[2], (long long)v[3]));
  const int64_t image[4] = {x->shape[0], x->shape[1] / taps, v[0], v[1]};
  mt_conv_geom g;
  LT_TRY(L, mt_unfold_geom_make(&g, op, image, v + 2, v + 4, v + 6, v + 8));
  const int64_t blocks = mt_size_mul(g.oh, g.ow, &overflow);
  if (overflow || x->shape[2] != blocks)
    LT_TRY(L, mt_fail("%s: input of size %s: expected %lld blocks (%lldx%lld) in dim 3 for output size %lldx%lld",
                      op, mt_shape_str(x, b, sizeof b), (long long)blocks, (long long)g.oh, (long long)g.ow,
                      (long long)v[0], (long long)v[1]));
  return push_nn(L, MT_OP_col2im, &(mt_nn_args){.x = x, .conv = &g});
}

/* ---- normalisation ---- */

/* x (N, C, *) seen as (n, c, s) */
static mt_norm_geom channel_geom(lua_State *L, const mt_tensor *x, const char *op, int64_t groups) {
  char b[128];
  if (x->ndim < 2) luaL_error(L, "%s: expected an input (N, C, *), got size %s", op, mt_shape_str(x, b, sizeof b));
  mt_norm_geom g = {op, x->shape[0], x->shape[1], 1, groups};
  for (int d = 2; d < x->ndim; d++) g.s *= x->shape[d];
  return g;
}

/* y = x normalised (op's mt_norm_forward), its statistics on the stack below y */
static int push_normalized(lua_State *L, mt_op op, mt_nn_args *a) {
  a->aux = lt_push(L);           /* on the stack, so that an error frees it */
  return push_nn(L, op, a);
}

/* torch._batch_norm(x, weight|nil, bias|nil, running_mean|nil, running_var|nil, training, momentum, eps):
   x (N, C, *), the rest (C). Training normalises with the batch's statistics and moves the running
   ones (when given) towards them, in place; otherwise with the running statistics. */
static int l_batch_norm(lua_State *L) {
  const char *op = "batch_norm";
  mt_tensor *x = lt_check(L, 1, op), *w = opt_tensor(L, 2, op), *b = opt_tensor(L, 3, op);
  mt_tensor *rm = opt_tensor(L, 4, op), *rv = opt_tensor(L, 5, op);
  const int training = lua_toboolean(L, 6);
  const double momentum = luaL_checknumber(L, 7), eps = luaL_checknumber(L, 8);
  const mt_norm_geom g = channel_geom(L, x, op, 0);
  mt_nn_args a = {.x = x, .w = w, .b = b, .norm = &g, .running_mean = rm, .running_var = rv, .eps = eps,
                  .momentum = momentum, .flag = training};
  return push_normalized(L, MT_OP_batch_norm, &a);
}

/* torch._group_norm(x, groups, weight|nil, bias|nil, eps): x (N, C, *) normalised per sample
   over each group of C / groups channels; weight and bias (C). Instance norm is groups = C. */
static int l_group_norm(lua_State *L) {
  const char *op = "group_norm";
  mt_tensor *x = lt_check(L, 1, op), *w = opt_tensor(L, 3, op), *b = opt_tensor(L, 4, op);
  const int64_t groups = luaL_checkinteger(L, 2);
  const double eps = luaL_checknumber(L, 5);
  const mt_norm_geom g = channel_geom(L, x, op, groups);
  char buf[128];
  int64_t count;                                 /* the statistics: one per sample and group */
  if (groups < 1 || g.c % groups || __builtin_mul_overflow(g.n, groups, &count))
    LT_TRY(L, mt_fail("%s: %lld channels (input size %s) cannot be split into %lld groups", op, (long long)g.c,
                      mt_shape_str(x, buf, sizeof buf), (long long)groups));
  mt_nn_args a = {.x = x, .w = w, .b = b, .norm = &g, .eps = eps};
  return push_normalized(L, MT_OP_group_norm, &a);
}

/* torch._layer_norm(x, ndims, weight|nil, bias|nil, eps): x normalised over its last ndims dims;
   weight and bias hold as many elements as those dims (a group norm of one group, with every
   normalised element a channel). */
static int l_layer_norm(lua_State *L) {
  const char *op = "layer_norm";
  mt_tensor *x = lt_check(L, 1, op), *w = opt_tensor(L, 3, op), *b = opt_tensor(L, 4, op);
  const lua_Integer k = luaL_checkinteger(L, 2);
  const double eps = luaL_checknumber(L, 5);
  char buf[128];
  if (k < 1 || k > x->ndim)
    LT_TRY(L, mt_fail("%s: cannot normalise over the last %lld dims of an input of size %s", op, (long long)k,
                      mt_shape_str(x, buf, sizeof buf)));
  mt_norm_geom g = {op, 1, 1, 1, 1};
  for (int d = 0; d < x->ndim; d++) {
    if (d < x->ndim - k) g.n *= x->shape[d];
    else g.c *= x->shape[d];
  }
  mt_nn_args a = {.x = x, .w = w, .b = b, .norm = &g, .eps = eps};
  return push_normalized(L, MT_OP_layer_norm, &a);
}

/* the ops that only derivatives call have no binding */
#define l_conv2d_weight NULL
#define l_conv3d_weight NULL
#define l_resample_adjoint NULL

/* every entry's binding, torch.<binding> = l_<name>: an entry without its
   function does not build */
static const luaL_Reg functions[] = {
#define NN(call, binding, node) binding
#define ROW(name, kernel, ...) {kernel, l_##name},
  MT_NN_OPS(ROW, _)
#undef ROW
#undef NN
};

void lt_open_conv(lua_State *L) {
  /* stack: methods torch mt; each binding runs on the device of its tensors (mt_device_extra) */
  const char *names[2] = {NULL, NULL};
  for (size_t i = 0; i < sizeof functions / sizeof *functions; i++) {
    if (!functions[i].func) continue;
    const luaL_Reg one[2] = {functions[i], {NULL, NULL}};
    lt_setfuncs(L, NULL, one);
    names[0] = functions[i].name;
    lt_mark_any_device(L, -2, names);
  }
}
