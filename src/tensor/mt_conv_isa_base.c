/* mt_conv_isa_base.c: the direct convolution (mt_conv_direct_body.h) for baseline x86-64 (SSE2), or whatever a non-x86 build targets; the
   Makefile gives this file its -march. */
#define MT_CONV_DIRECT_TABLE mt_conv_direct_base
#include "mt_conv_direct_body.h"
