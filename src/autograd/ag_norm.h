/* ag_norm.h: the derivative of the fused normalisations (batch, group,
   layer and instance norm, src/tensor/mt_norm.h): the fused backward kernel,
   or under create_graph the same closed form written with recording ops. */
#ifndef MT_AG_NORM_H
#define MT_AG_NORM_H

#include "ag.h"
#include "../tensor/mt_norm.h"

/* Call after y = mt_norm_apply(x, stats, w, b, g); w and b may be NULL.
   name is the node's ("NativeBatchNormBackward", ...); fixed_stats: the
   statistics are constants (batch norm in eval mode), else they are x's
   with eps. Records nothing unless an input requires grad in grad mode. */
int mt_ag_record_normalization(mt_tensor *y, const char *name, const mt_tensor *x, const mt_tensor *w,
                               const mt_tensor *b, const mt_tensor *stats, const mt_norm_geom *g, double eps,
                               int fixed_stats);

#endif
