/* mt_conv_isa_v3.c: the direct convolution for x86-64-v3 (AVX2 + FMA); the Makefile gives
   this file its -march (mt_conv_direct.h). */
#define MT_CONV_DIRECT_TABLE mt_conv_direct_v3
#define MT_CONV_DIRECT_X86_ONLY
#include "mt_conv_direct_body.h"
