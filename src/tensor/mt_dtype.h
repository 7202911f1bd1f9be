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

/* ---- half and bfloat16 <-> float ---- */
#if defined(__F16C__)
/* the CPU's conversions (F16C, round to nearest even whatever MXCSR says): the same values
   as the portable ones below, a NaN keeping the top bits of its payload */
#include <immintrin.h>
static inline float mt_half_to_float(mt_half h) { return _cvtsh_ss(h); }
static inline mt_half mt_float_to_half(float f) { return (mt_half)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
#else
static inline float mt_half_to_float(mt_half h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else {                                   /* subnormal: normalise */
      int e = -1;
      do { e++; man <<= 1; } while (!(man & 0x400));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) bits = sign | 0x7f800000 | (man << 13);
  else bits = sign | ((exp + 112) << 23) | (man << 13);
  float f; memcpy(&f, &bits, 4); return f;
}

static inline mt_half mt_float_to_half(float f) {
  uint32_t x; memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000)                    /* inf or nan */
    return (mt_half)(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0));
  if (absx >= 0x477ff000) return (mt_half)(sign | 0x7c00);   /* overflow */
  if (absx < 0x38800000) {                   /* subnormal or zero */
    if (absx < 0x33000000) return (mt_half)sign;
    uint32_t e = absx >> 23, m = (absx & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e;                /* 14..24 */
    uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (mt_half)(sign | h);
  }
  uint32_t h = ((absx - 0x38000000) >> 13);
  uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (mt_half)(sign | h);
}
#endif

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
