/* ag_nn.h: the derivatives of the registry's nn kernels (MT_NN_OPS in
   src/ops/registry.h). One recorder serves the list (ag_nn.c): the node is
   named by the entry, saves what the entry's reads say, and keeps the op's
   geometry in its extra words through its kind's pack; the kind's backward
   reads it back and computes the gradients with the list's ops through the
   dispatcher, so that a create_graph backward records them again:
     conv (ag_conv.c)         conv2d, conv_transpose2d and conv2d_weight (and the 3-D ones),
                              each one's derivatives the other two;
     resample (ag_spatial.c)  the resampling maps and resample_adjoint, each
                              the other's derivative;
     im2col (ag_spatial.c)    im2col and col2im, the same;
     avg_pool3d (ag_spatial.c) avg_pool3d and avg_pool3d_adjoint, the same;
     norm (ag_norm.c)         the normalisations: the fused backward kernel,
                              or the closed form with recording ops. */
#ifndef MT_AG_NN_H
#define MT_AG_NN_H

#include "ag.h"

/* The extra words of every nn node (the largest geometry: avg_pool3d's). */
enum { AG_NN_WORDS = 13 };

/* r = op(a) was computed; records it when an input requires grad in grad
   mode and r is a float tensor */
int mt_ag_record_nn(mt_tensor *r, mt_op op, const mt_nn_args *a);

/* each kind: its node's backward, and how the node keeps a's geometry */
int ag_conv_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi);
void ag_conv_pack(mt_node *n, const mt_nn_args *a);
int ag_resample_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi);
void ag_resample_pack(mt_node *n, const mt_nn_args *a);
int ag_im2col_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi);
void ag_im2col_pack(mt_node *n, const mt_nn_args *a);
int ag_avg_pool3d_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi);
void ag_avg_pool3d_pack(mt_node *n, const mt_nn_args *a);
int ag_norm_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi);
void ag_norm_pack(mt_node *n, const mt_nn_args *a);

#endif
