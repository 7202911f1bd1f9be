/* mt_conv.h: 2-D convolution over NCHW batches (float32, float64): the
   forward op, its two adjoints (the gradient of the input, which is also the
   transposed convolution, and the gradient of the weight), and im2col /
   col2im. 1-D convolutions are 2-D ones of height 1. The same three for
   3-D convolution over NCTHW batches (mt_conv3d.c). */
#ifndef MT_CONV_H
#define MT_CONV_H

#include "mt_tensor.h"

/* One convolution, fixed by its shapes: input (n, c, h, w), weight
   (o, c / groups, kh, kw), output (n, o, oh, ow). ph, pw pad the top and
   left; the padding after is whatever oh, ow imply, so 'same' padding with
   an even kernel (one more after than before) needs nothing special. */
typedef struct {
  int64_t n, c, h, w;
  int64_t o, kh, kw;
  int64_t oh, ow;
  int64_t sh, sw;          /* stride */
  int64_t ph, pw;          /* padding before */
  int64_t dh, dw;          /* dilation */
  int64_t groups;
} mt_conv_geom;

/* The geometry of conv2d(x (n, c, h, w), w (o, c / groups, kh, kw)) with
   stride[2], pad_before[2], pad_after[2], dilation[2], groups; checks the
   channels, groups and sizes and fails naming op and the shapes. */
/* Output size along one dim of a convolution: 0 when the dilated kernel does not
   fit the padded input, -1 on overflow. */
int64_t mt_conv_out_size(int64_t in, int64_t k, int64_t s, int64_t before, int64_t after, int64_t d);
/* 0, or -1 and the error naming op: the dims strides and dilations and groups positive. */
int mt_conv_check_params(const char *op, int dims, const int64_t *stride, const int64_t *dilation, int64_t groups);

int mt_conv_geom_make(mt_conv_geom *g, const char *op, const mt_tensor *x, const mt_tensor *w,
                      const int64_t *stride, const int64_t *pad_before, const int64_t *pad_after,
                      const int64_t *dilation, int64_t groups);

/* The geometry of conv_transpose2d(x (n, cin, h, w), w (cin, cout / groups,
   kh, kw)): the convolution whose input gradient it is (its input is the
   transposed convolution's output, of size (h - 1) * stride - 2 * padding +
   dilation * (k - 1) + output_padding + 1). */
int mt_conv_transpose_geom_make(mt_conv_geom *g, const char *op, const mt_tensor *x, const mt_tensor *w,
                                const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
                                const int64_t *dilation, int64_t groups);

/* y (n, o, oh, ow) = conv2d(x, w) + b; b (o) may be NULL. */
int mt_conv2d(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, const mt_conv_geom *g);

/* gx (n, c, h, w): the adjoint of conv2d in its input applied to gy
   (n, o, oh, ow), plus b (c) when not NULL: conv_transpose2d. */
int mt_conv2d_input_grad(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                         const mt_conv_geom *g);

/* gw (o, c / groups, kh, kw): the adjoint of conv2d in its weight, for
   input x and output gradient gy, summed over the batch; and when gb is not
   NULL, the bias gradient gb (o): gy summed over batch and space, in the
   same pass over gy where the kernel allows. On failure both are released. */
int mt_conv2d_weight_grad(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                          const mt_conv_geom *g);

/* The geometry of the windows (kernel k, dilation d, padding p on both
   sides, stride s, each {h, w}) of an image batch (n, c, h, w) for im2col /
   col2im: F.unfold and F.fold; fails naming op when no window fits. */
int mt_unfold_geom_make(mt_conv_geom *g, const char *op, const int64_t *image, const int64_t *k, const int64_t *d,
                        const int64_t *p, const int64_t *s);

/* cols (n, c * kh * kw, oh * ow): the windows of x (n, c, h, w) as columns
   (im2col; o and groups of g unused). */
int mt_im2col(mt_tensor *cols, const mt_tensor *x, const mt_conv_geom *g);
/* x (n, c, h, w): the columns summed back into place (col2im, im2col's adjoint). */
int mt_col2im(mt_tensor *x, const mt_tensor *cols, const mt_conv_geom *g);

/* One 3-D convolution, fixed by its shapes: input (n, c, t, h, w), weight
   (o, c / groups, kt, kh, kw), output (n, o, ot, oh, ow); pt, ph, pw pad
   the front, top and left, the padding after is whatever ot, oh, ow imply. */
typedef struct {
  int64_t n, c, t, h, w;
  int64_t o, kt, kh, kw;
  int64_t ot, oh, ow;
  int64_t st, sh, sw;      /* stride */
  int64_t pt, ph, pw;      /* padding before */
  int64_t dt, dh, dw;      /* dilation */
  int64_t groups;
} mt_conv3d_geom;

/* The geometry of conv3d(x (n, c, t, h, w), w (o, c / groups, kt, kh, kw))
   with stride[3], pad_before[3], pad_after[3], dilation[3] (each t, h, w),
   groups; checks as mt_conv_geom_make does. */
int mt_conv3d_geom_make(mt_conv3d_geom *g, const char *op, const mt_tensor *x, const mt_tensor *w,
                        const int64_t *stride, const int64_t *pad_before, const int64_t *pad_after,
                        const int64_t *dilation, int64_t groups);

/* The geometry of conv_transpose3d(x (n, cin, t, h, w), w (cin, cout /
   groups, kt, kh, kw)): the convolution whose input gradient it is. */
int mt_conv_transpose3d_geom_make(mt_conv3d_geom *g, const char *op, const mt_tensor *x, const mt_tensor *w,
                                  const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
                                  const int64_t *dilation, int64_t groups);

/* y (n, o, ot, oh, ow) = conv3d(x, w) + b; b (o) may be NULL. */
int mt_conv3d(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, const mt_conv3d_geom *g);

/* gx (n, c, t, h, w): conv3d's adjoint in its input applied to gy
   (n, o, ot, oh, ow), plus b (c) when not NULL: conv_transpose3d. */
int mt_conv3d_input_grad(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                         const mt_conv3d_geom *g);

/* gw (o, c / groups, kt, kh, kw): conv3d's adjoint in its weight, for input
   x and output gradient gy, summed over the batch; and when gb is not NULL
   the bias gradient gb (o). On failure both are released. */
int mt_conv3d_weight_grad(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                          const mt_conv3d_geom *g);

/* The level the float32 direct kernel runs at here ("DEFAULT", "AVX2" or "AVX512"):
   the CPU's own, or a lower one named by TH_CONV_ISA; chosen at first use. */
const char *mt_conv_level(void);

#endif
