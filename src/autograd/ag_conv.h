/* ag_conv.h: derivatives of the 2-D convolution family. conv2d, its input
   adjoint (conv_transpose2d) and its weight adjoint are bilinear and each
   one's derivatives are the other two, so a create_graph backward records
   the same three ops and higher-order gradients follow. */
#ifndef MT_AG_CONV_H
#define MT_AG_CONV_H

#include "ag.h"
#include "../tensor/mt_conv.h"

typedef enum {
  MT_AG_CONV,              /* r = conv2d(a = x, b = w) + bias (o) */
  MT_AG_CONV_INPUT_GRAD,   /* r = conv_transpose2d(a = gy, b = w) + bias (c): shaped like x */
  MT_AG_CONV_WEIGHT_GRAD,  /* r = the weight adjoint of (a = x, b = gy): shaped like w; no bias */
} mt_ag_conv_kind;

/* Call after r was computed by the kind's kernel with geometry g; bias may
   be NULL. Records nothing unless an input requires grad in grad mode. */
int mt_ag_record_conv(mt_tensor *r, mt_ag_conv_kind kind, const mt_tensor *a, const mt_tensor *b,
                      const mt_tensor *bias, const mt_conv_geom *g);

#endif
