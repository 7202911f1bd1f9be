/* mt_conv_isa_v3.c: the direct convolution (mt_conv_direct_body.h) for x86-64-v3: AVX2 + FMA; the
   Makefile gives this file its -march. */
#if defined(__x86_64__)
#define MT_CONV_DIRECT_TABLE mt_conv_direct_v3
#include "mt_conv_direct_body.h"
#else
typedef int mt_conv_isa_v3_empty; /* only x86-64 builds have the levels above baseline */
#endif
