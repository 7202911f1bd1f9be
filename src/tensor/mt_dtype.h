/* mt_dtype.h: the dtype list (written once, as an X-macro), half-precision
   conversions and PyTorch's type promotion. */
#ifndef MT_DTYPE_H
#define MT_DTYPE_H

#include <stdint.h>
#include <stdbool.h>
#include <string.h>

typedef uint16_t mt_half;   /* IEEE 754 binary16, stored as bits */
typedef uint16_t mt_bf16;   /* bfloat16: the top half of a float32 */

/* X(ENUM, ctype, name, Torch7 name, kind) -- kind: 0 bool, 1 int, 2 float.
   Order matters only for the enum values. Every kernel is instantiated from
   this list, never by hand. */
#define MT_DTYPES(X)                                 \
  X(FLOAT32, float, "float32", "Float", 2)           \
  X(FLOAT64, double, "float64", "Double", 2)         \
  X(FLOAT16, mt_half, "float16", "Half", 2)          \
  X(BFLOAT16, mt_bf16, "bfloat16", "BFloat16", 2)    \
  X(INT8, int8_t, "int8", "Char", 1)                 \
  X(UINT8, uint8_t, "uint8", "Byte", 1)              \
  X(INT16, int16_t, "int16", "Short", 1)             \
  X(INT32, int32_t, "int32", "Int", 1)               \
  X(INT64, int64_t, "int64", "Long", 1)              \
  X(BOOL, bool, "bool", "Bool", 0)

typedef enum {
#define MT_X(E, T, N, TN, K) MT_##E,
  MT_DTYPES(MT_X)
#undef MT_X
  MT_NDTYPES
} mt_dtype;

typedef struct {
  const char *name;        /* PyTorch name: "float32" */
  const char *torch7;      /* Torch7 stem: "Float" -> torch.FloatTensor */
  int size;                /* bytes per element */
  int kind;                /* 0 bool, 1 integer, 2 floating */
} mt_dtype_info;

extern const mt_dtype_info mt_dtypes[MT_NDTYPES];

static inline int mt_dtype_is_float(mt_dtype d) { return mt_dtypes[d].kind == 2; }
static inline int mt_dtype_is_int(mt_dtype d) { return mt_dtypes[d].kind == 1; }
static inline int mt_dtype_size(mt_dtype d) { return mt_dtypes[d].size; }

/* Parses "float32", "float", "double", "long", "torch.FloatTensor", ...;
   returns -1 when the name is unknown. */
int mt_dtype_from_name(const char *name);

/* PyTorch promotion between two tensor dtypes (same rule for dims > 0). */
mt_dtype mt_promote(mt_dtype a, mt_dtype b);

/* Promotion of a tensor dtype with a Lua number: a float scalar lifts
   bool/int tensors to the default float dtype; an integer scalar lifts bool
   to int64; otherwise the tensor's dtype wins. */
mt_dtype mt_promote_scalar(mt_dtype t, int scalar_is_float, mt_dtype default_float);

/* ---- half and bfloat16 <-> float ----
   float16 both ways in integer and float steps with no branch, so the loops that call them
   vectorise at any ISA (F16C's scalar instructions kept them scalar: a float16 add of 2^20
   elements took 1.5 ms where bfloat16's took 0.29). The results are F16C's, bit for bit:
   round to nearest even; a NaN made quiet, keeping the top bits of its payload (checked
   against vcvtps2ph over all 2^32 floats and vcvtph2ps over all 2^16 halves). Both need
   denormals kept (no flush-to-zero), as C's default environment has them. */
#define MT_HALF_MASK(c) (0u - (uint32_t)(c))   /* all ones where c holds, else zero */

static inline float mt_half_to_float(mt_half h) {
  const uint32_t hv = h, exp = hv & 0x7c00u, man = hv & 0x3ffu;
  /* zero and subnormals: man * 2^-24, exact in float */
  const float sub = (float)(int32_t)man * 0x1p-24f;
  uint32_t sub_bits;
  memcpy(&sub_bits, &sub, 4);
  const uint32_t em = (hv & 0x7fffu) << 13;
  const uint32_t special = MT_HALF_MASK(exp == 0x7c00u), tiny = MT_HALF_MASK(exp == 0);
  const uint32_t normal = em + ((uint32_t)(127 - 15) << 23);                       /* rebias */
  const uint32_t infnan = em | 0x7f800000u | (MT_HALF_MASK(man != 0) & 0x400000u);  /* quiet */
  uint32_t bits = (special & infnan) | (~special & normal);
  bits = (tiny & sub_bits) | (~tiny & bits);
  bits |= (hv & 0x8000u) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline mt_half mt_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t absx = x & 0x7fffffffu;
  /* normal halves: rebias, then round the 13 dropped bits to nearest even (a carry
     moves into the exponent, up to infinity at 65520) */
  const uint32_t r = absx - ((uint32_t)(127 - 15) << 23);
  const uint32_t normal = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
  /* below 2^-14: adding 0.5, whose last place is 2^-24, rounds |f| to a multiple of the
     smallest subnormal half, which the low bits then count (1024 is the smallest normal) */
  float a;
  memcpy(&a, &absx, 4);
  const float biased = a + 0.5f;
  uint32_t sub;
  memcpy(&sub, &biased, 4);
  sub -= 0x3f000000u;
  const uint32_t tiny = MT_HALF_MASK(absx < 0x38800000u), over = MT_HALF_MASK(absx >= 0x477ff000u),
                 nan = MT_HALF_MASK(absx > 0x7f800000u);
  uint32_t h = (tiny & sub) | (~tiny & normal);
  h = (over & 0x7c00u) | (~over & h);
  h = (nan & (0x7e00u | ((absx >> 13) & 0x3ffu))) | (~nan & h);
  return (mt_half)(h | ((x >> 16) & 0x8000u));
}

static inline float mt_bf16_to_float(mt_bf16 b) {
  uint32_t x = (uint32_t)b << 16; float f; memcpy(&f, &x, 4); return f;
}

static inline mt_bf16 mt_float_to_bf16(float f) {
  uint32_t x; memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (mt_bf16)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);             /* round to nearest even */
  return (mt_bf16)(x >> 16);
}

#endif
