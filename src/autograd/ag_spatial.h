/* ag_spatial.h: derivatives of the linear maps of images: the separable
   resampling maps (src/tensor/mt_resample.h: average pooling, padding,
   interpolation) and im2col / col2im (unfold / fold). A map's derivative is
   its adjoint and the adjoint's is the map, so a create_graph backward
   records the pair again and higher orders follow. */
#ifndef MT_AG_SPATIAL_H
#define MT_AG_SPATIAL_H

#include "ag.h"
#include "../tensor/mt_resample.h"
#include "../tensor/mt_conv.h"

/* Call after r = mt_resample_apply(x, rs, adjoint, in). */
int mt_ag_record_resample(mt_tensor *r, const mt_tensor *x, const mt_resample *rs, int adjoint);

/* Call after r = mt_im2col(x, g) (fold 0) or r = mt_col2im(x, g) (fold 1). */
int mt_ag_record_im2col(mt_tensor *r, const mt_tensor *x, const mt_conv_geom *g, int fold);

#endif
