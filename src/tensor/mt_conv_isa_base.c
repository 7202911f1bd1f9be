/* mt_conv_isa_base.c: the direct convolution for baseline x86-64 (SSE2), or what a build elsewhere targets; the Makefile gives
   this file its -march (mt_conv_direct.h). */
#define MT_CONV_DIRECT_TABLE mt_conv_direct_base
#include "mt_conv_direct_body.h"
