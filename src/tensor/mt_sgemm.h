/* mt_sgemm.h: moontorch's own matrix product summing in float32 (AVX-512), beside OpenBLAS. */
#ifndef MT_SGEMM_H
#define MT_SGEMM_H
#include <stdint.h>

/* 1 when this CPU runs the kernels (AVX-512 F/DQ/BW/VL) and TH_GEMM=openblas is not set */
int mt_sgemm_available(void);

/* c (m x n) = beta * c + alpha * a (m x k) @ b (k x n), strides in elements; c row- or
   column-major. 0 when done, -1 when the layout or the CPU is not one it takes (nothing
   written): the caller's BLAS does the product then. beta 0 does not read c. */
int mt_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t a_rs, int64_t a_cs,
             const float *b, int64_t b_rs, int64_t b_cs, float beta, float *c, int64_t c_rs, int64_t c_cs);

/* the same with a and b of elements of type MT_SG_F32, MT_SG_BF16 or MT_SG_F16 (widened to
   float32 as they are packed, the products summed in float32), c float32 */
enum { MT_SG_F32, MT_SG_BF16, MT_SG_F16 };
/* whether a row-major c of m x n over k steps is a product it takes (on this CPU) */
int mt_gemm_f32_takes(int64_t m, int64_t n, int64_t k);
/* ... and with these strides (in elements; c row- or column-major) */
int mt_gemm_f32_takes_layout(int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs, int64_t b_rs,
                             int64_t b_cs, int64_t c_rs, int64_t c_cs);
/* whether mt_sgemm runs this product (else it returns -1) */
int mt_sgemm_takes(int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs, int64_t b_rs, int64_t b_cs,
                   int64_t c_rs, int64_t c_cs);
/* 1 when bfloat16 products run on AVX512_BF16's vdpbf16ps (two steps per instruction) rather
   than widened to float32 as they are packed: the CPU has it, and it multiply-adds faster
   than the FMA (timed once), or TH_GEMM_BF16=native; TH_GEMM_BF16=widen never */
int mt_gemm_bf16_native(void);
int mt_gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const void *a, int a_et, int64_t a_rs, int64_t a_cs,
                const void *b, int b_et, int64_t b_rs, int64_t b_cs, float beta, float *c, int64_t c_rs, int64_t c_cs);

#endif
