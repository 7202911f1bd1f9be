/* mt_conv_isa_v4.c: the direct convolution (mt_conv_direct_body.h) for x86-64-v4: AVX-512 F/BW/DQ/VL; the
   Makefile gives this file its -march. */
#if defined(__x86_64__)
#define MT_CONV_DIRECT_TABLE mt_conv_direct_v4
#include "mt_conv_direct_body.h"
#else
typedef int mt_conv_isa_v4_empty; /* only x86-64 builds have the levels above baseline */
#endif
