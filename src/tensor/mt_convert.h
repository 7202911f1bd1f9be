/* mt_convert.h: float32 <-> bfloat16 and float16 over contiguous arrays, vectorised for the
   CPU it runs on (picked once), the same values as mt_dtype.h's one-element conversions. */
#ifndef MT_CONVERT_H
#define MT_CONVERT_H
#include <stdint.h>

/* round to nearest even; a NaN stays a NaN (quiet, the top bits of its payload kept) */
void mt_cvt_f32_to_bf16(uint16_t *out, const float *in, int64_t n);
void mt_cvt_bf16_to_f32(float *out, const uint16_t *in, int64_t n);
void mt_cvt_f32_to_f16(uint16_t *out, const float *in, int64_t n);
void mt_cvt_f16_to_f32(float *out, const uint16_t *in, int64_t n);

#endif
