/* mt_kernel.h: per-dtype load/store and compute types, so one kernel body
   written with MT_LOAD_##E / MT_STORE_##E serves every dtype of MT_DTYPES. */
#ifndef MT_KERNEL_H
#define MT_KERNEL_H

#include <math.h>
#include "mt_dtype.h"

/* compute type: half and bfloat16 compute in float */
#define MT_CT_FLOAT32 float
#define MT_CT_FLOAT64 double
#define MT_CT_FLOAT16 float
#define MT_CT_BFLOAT16 float
#define MT_CT_INT8 int8_t
#define MT_CT_UINT8 uint8_t
#define MT_CT_INT16 int16_t
#define MT_CT_INT32 int32_t
#define MT_CT_INT64 int64_t
#define MT_CT_BOOL bool

#define MT_LOAD_PLAIN(T, p) (*(const T *)(p))
#define MT_LOAD_FLOAT32(p) MT_LOAD_PLAIN(float, p)
#define MT_LOAD_FLOAT64(p) MT_LOAD_PLAIN(double, p)
#define MT_LOAD_FLOAT16(p) mt_half_to_float(*(const mt_half *)(p))
#define MT_LOAD_BFLOAT16(p) mt_bf16_to_float(*(const mt_bf16 *)(p))
#define MT_LOAD_INT8(p) MT_LOAD_PLAIN(int8_t, p)
#define MT_LOAD_UINT8(p) MT_LOAD_PLAIN(uint8_t, p)
#define MT_LOAD_INT16(p) MT_LOAD_PLAIN(int16_t, p)
#define MT_LOAD_INT32(p) MT_LOAD_PLAIN(int32_t, p)
#define MT_LOAD_INT64(p) MT_LOAD_PLAIN(int64_t, p)
#define MT_LOAD_BOOL(p) MT_LOAD_PLAIN(bool, p)

#define MT_STORE_FLOAT32(p, v) (*(float *)(p) = (float)(v))
#define MT_STORE_FLOAT64(p, v) (*(double *)(p) = (double)(v))
#define MT_STORE_FLOAT16(p, v) (*(mt_half *)(p) = mt_float_to_half((float)(v)))
#define MT_STORE_BFLOAT16(p, v) (*(mt_bf16 *)(p) = mt_float_to_bf16((float)(v)))
#define MT_STORE_INT8(p, v) (*(int8_t *)(p) = (int8_t)(v))
#define MT_STORE_UINT8(p, v) (*(uint8_t *)(p) = (uint8_t)(v))
#define MT_STORE_INT16(p, v) (*(int16_t *)(p) = (int16_t)(v))
#define MT_STORE_INT32(p, v) (*(int32_t *)(p) = (int32_t)(v))
#define MT_STORE_INT64(p, v) (*(int64_t *)(p) = (int64_t)(v))
#define MT_STORE_BOOL(p, v) (*(bool *)(p) = (bool)(v))

/* The floating sublist of MT_DTYPES, same X signature. */
#define MT_FLOAT_DTYPES(X)                        \
  X(FLOAT32, float, "float32", "Float", 2)        \
  X(FLOAT64, double, "float64", "Double", 2)      \
  X(FLOAT16, mt_half, "float16", "Half", 2)       \
  X(BFLOAT16, mt_bf16, "bfloat16", "BFloat16", 2)

#endif
