/* lt_conv.c: Lua bindings of the convolution and pooling kernels, the
   low-level forms nn.functional builds on (it resolves 'same' padding, 1-D
   shapes and unbatched inputs): torch._conv2d, torch._conv_transpose2d,
   torch._max_pool2d_indices. */
#include "lt.h"
#include "../autograd/ag_conv.h"
#include "../tensor/mt_pool.h"

/* the integers at [from, from + n) */
static void read_ints(lua_State *L, int from, int n, int64_t *out) {
  for (int i = 0; i < n; i++) out[i] = luaL_checkinteger(L, from + i);
}

/* the bias at index i: nil or a tensor */
static const mt_tensor *opt_bias(lua_State *L, int i, const char *op) {
  return lua_isnoneornil(L, i) ? NULL : lt_check(L, i, op);
}

/* torch._conv2d(x, w, bias or nil, sh, sw, pad_top, pad_bottom, pad_left, pad_right, dh, dw, groups):
   x (n, c, h, w), w (o, c / groups, kh, kw), bias (o) */
static int l_conv2d(lua_State *L) {
  const char *op = "conv2d";
  mt_tensor *x = lt_check(L, 1, op), *w = lt_check(L, 2, op);
  const mt_tensor *b = opt_bias(L, 3, op);
  int64_t v[9];
  read_ints(L, 4, 9, v);
  const int64_t stride[2] = {v[0], v[1]}, before[2] = {v[2], v[4]}, after[2] = {v[3], v[5]}, dil[2] = {v[6], v[7]};
  mt_conv_geom g;
  LT_TRY(L, mt_conv_geom_make(&g, op, x, w, stride, before, after, dil, v[8]));
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_conv2d(r, x, w, b, &g));
  LT_TRY(L, mt_ag_record_conv(r, MT_AG_CONV, x, w, b, &g));
  return 1;
}

/* torch._conv_transpose2d(x, w, bias or nil, sh, sw, ph, pw, out_pad_h, out_pad_w, dh, dw, groups):
   x (n, c, h, w), w (c, o / groups, kh, kw), bias (o) */
static int l_conv_transpose2d(lua_State *L) {
  const char *op = "conv_transpose2d";
  mt_tensor *x = lt_check(L, 1, op), *w = lt_check(L, 2, op);
  const mt_tensor *b = opt_bias(L, 3, op);
  int64_t v[9];
  read_ints(L, 4, 9, v);
  const int64_t stride[2] = {v[0], v[1]}, pad[2] = {v[2], v[3]}, out_pad[2] = {v[4], v[5]}, dil[2] = {v[6], v[7]};
  mt_conv_geom g;
  LT_TRY(L, mt_conv_transpose_geom_make(&g, op, x, w, stride, pad, out_pad, dil, v[8]));
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_conv2d_input_grad(r, x, w, b, &g));
  LT_TRY(L, mt_ag_record_conv(r, MT_AG_CONV_INPUT_GRAD, x, w, b, &g));
  return 1;
}

/* torch._max_pool2d_indices(x, kh, kw, sh, sw, ph, pw, dh, dw, ceil_mode): int64
   (n, c, oh, ow), the 1-based position of each window's maximum in its h * w
   plane (no history: the values are x gathered there, which differentiates) */
static int l_max_pool2d_indices(lua_State *L) {
  mt_tensor *x = lt_check(L, 1, "max_pool2d");
  int64_t v[8];
  read_ints(L, 2, 8, v);
  const int64_t k[2] = {v[0], v[1]}, s[2] = {v[2], v[3]}, p[2] = {v[4], v[5]}, d[2] = {v[6], v[7]};
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_max_pool2d_indices(r, x, k, s, p, d, lua_toboolean(L, 10), 1));
  return 1;
}

static const luaL_Reg functions[] = {
  {"_conv2d", l_conv2d}, {"_conv_transpose2d", l_conv_transpose2d}, {"_max_pool2d_indices", l_max_pool2d_indices},
  {NULL, NULL}};

void lt_open_conv(lua_State *L) { lt_setfuncs(L, NULL, functions); }
