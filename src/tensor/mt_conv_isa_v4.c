/* mt_conv_isa_v4.c: the direct convolution for x86-64-v4 (AVX-512 F/BW/DQ/VL); the Makefile gives
   this file its -march (mt_conv_direct.h). */
#define MT_CONV_DIRECT_TABLE mt_conv_direct_v4
#define MT_CONV_DIRECT_X86_ONLY
#include "mt_conv_direct_body.h"
