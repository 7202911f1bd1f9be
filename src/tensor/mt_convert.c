/* mt_convert.c: float32 <-> bfloat16 and float16 over contiguous arrays (the converting
   copies of mt_tensor.c, autocast's casts, the products' 16-bit results). bfloat16 is the
   top half of a float32: the integer rounding below is exact and vectorises, each function
   compiled for baseline x86-64, AVX2 and AVX-512 and picked by the loader from cpuid
   (MT_CLONES, mt_isa.h). float16 takes F16C's vcvtps2ph / vcvtph2ps eight at a time where the CPU
   has it (round to nearest even whatever MXCSR says), mt_dtype.h's portable code elsewhere.
   A 200704-element float32 -> bfloat16 copy (a 256x784 weight) took 234 us one element
   at a time. */
#include <cpuid.h>
#include <stdatomic.h>
#include <immintrin.h>
#include <string.h>
#include "mt_convert.h"
#include "mt_dtype.h"
#include "mt_isa.h"

MT_CLONES void mt_cvt_f32_to_bf16(uint16_t *out, const float *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t x;
    memcpy(&x, in + i, 4);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const uint32_t quiet = (x >> 16) | 0x40u;                   /* NaN: quiet, payload's top */
    out[i] = (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
  }
}

MT_CLONES void mt_cvt_bf16_to_f32(float *out, const uint16_t *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    const uint32_t x = (uint32_t)in[i] << 16;
    memcpy(out + i, &x, 4);
  }
}

static __attribute__((target("avx,f16c"))) void f32_to_f16_f16c(uint16_t *out, const float *in, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; i++) out[i] = (uint16_t)_cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}

static __attribute__((target("avx,f16c"))) void f16_to_f32_f16c(float *out, const uint16_t *in, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
  for (; i < n; i++) out[i] = _cvtsh_ss(in[i]);
}

/* AVX usable (the CPU's and the OS's, as __builtin_cpu_supports says; it tests bits set once)
   and F16C (cpuid leaf 1: Clang's __builtin_cpu_supports does not name it). The answer is
   kept: a cpuid instruction traps to the hypervisor in a virtual machine, tens of
   microseconds, and the float16 kernels convert a block of 256 elements at a time. */
static _Atomic int f16c_known;   /* 0: not asked yet, 1: no, 2: yes */
static int has_f16c(void) {
  int known = atomic_load_explicit(&f16c_known, memory_order_relaxed);
  if (!known) {
    unsigned a, b, c, d;
    __builtin_cpu_init();
    known = __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) ? 2 : 1;
    atomic_store_explicit(&f16c_known, known, memory_order_relaxed);
  }
  return known == 2;
}

void mt_cvt_f32_to_f16(uint16_t *out, const float *in, int64_t n) {
  if (has_f16c()) { f32_to_f16_f16c(out, in, n); return; }
  for (int64_t i = 0; i < n; i++) out[i] = mt_float_to_half(in[i]);
}

void mt_cvt_f16_to_f32(float *out, const uint16_t *in, int64_t n) {
  if (has_f16c()) { f16_to_f32_f16c(out, in, n); return; }
  for (int64_t i = 0; i < n; i++) out[i] = mt_half_to_float(in[i]);
}
