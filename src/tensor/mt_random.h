/* mt_random.h: the one random number generator (Philox 4x32-10, counter
   based) and the sampling ops built on it.

   A generator is (seed, offset). Philox is a keyed bijection of a 128-bit
   counter: block(c) = philox4x32_10(ctr = {lo32(c), hi32(c), 0, 0},
   key = {lo32(seed), hi32(seed)}), four 32-bit words. A draw of n values
   takes w words per value -- w = 2 for float64 results and for integers
   (random_, randint, randperm, multinomial), w = 1 otherwise -- so p = 4 / w
   values share a block: value i (row-major order of the result) comes from
   words [(i mod p) w, (i mod p) w + w) of block(offset + i div p), and the
   draw advances offset by ceil(n / p). Every value is a function of
   (seed, counter) alone, so results never depend on the thread count or on
   how work is split. Uniforms use the top bits (24 for float32, 53 for
   float64, 11 for float16, 8 for bfloat16); integers on [from, to) use all
   64 bits (multiply-shift, bias below (to - from) / 2^64); normal values
   come in Box-Muller pairs (2k, 2k+1) from the bits of those two values. */
#ifndef MT_RANDOM_H
#define MT_RANDOM_H

#include <stdint.h>
#include "mt_tensor.h"
#include "mt_ops.h"

/* Seed of a new torch.Generator(), as in PyTorch (the default generator is
   seeded non-deterministically at start-up, also as in PyTorch). */
#define MT_GENERATOR_DEFAULT_SEED UINT64_C(67280421310721)
/* get_state/set_state: seed then offset, 8 bytes each, little-endian. */
#define MT_RNG_STATE_BYTES 16

struct mt_generator {
  uint64_t seed;
  uint64_t offset;      /* next unused counter */
};

/* The Philox 4x32-10 block function (Salmon et al., SC'11). */
void mt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* The process-wide default generator (torch.manual_seed, torch.rand, ...). */
mt_generator *mt_default_generator(void);
void mt_generator_init(mt_generator *g, uint64_t seed);   /* offset 0 */
/* The generator of GPU index of device (torch.cuda's: its tensors draw from
   it unless a generator is given); the default one for the CPU. */
mt_generator *mt_device_generator(int device, int index);
/* Seeds every device's generator (torch.manual_seed, torch.cuda.manual_seed_all). */
void mt_seed_device_generators(uint64_t seed);
/* A fresh non-deterministic seed (63 bits, so Lua shows it non-negative). */
uint64_t mt_nondeterministic_seed(void);
void mt_generator_get_state(const mt_generator *g, uint8_t out[MT_RNG_STATE_BYTES]);
void mt_generator_set_state(mt_generator *g, const uint8_t in[MT_RNG_STATE_BYTES]);

/* ---- in-place samplers: every element of t, any layout ---- */
/* uniform on [from, to); floating dtypes */
int mt_uniform_(mt_tensor *t, mt_generator *g, double from, double to);
/* mean + std * N(0, 1); floating dtypes; std >= 0 */
int mt_normal_(mt_tensor *t, mt_generator *g, double mean, double std);
/* integers on [from, to), any dtype; to must fit the dtype */
int mt_random_(mt_tensor *t, mt_generator *g, int64_t from, int64_t to);
/* integers on [0, 2^mantissa] for floating dtypes, [0, max] for integers */
int mt_random_full_(mt_tensor *t, mt_generator *g);
/* 1 with probability p (the tensor p broadcast to t, or the number p) */
int mt_bernoulli_(mt_tensor *t, mt_generator *g, const mt_tensor *p, double p_value);
int mt_exponential_(mt_tensor *t, mt_generator *g, double lambda);
/* number of Bernoulli(p) trials up to the first success: 1, 2, ... */
int mt_geometric_(mt_tensor *t, mt_generator *g, double p);
int mt_cauchy_(mt_tensor *t, mt_generator *g, double median, double sigma);
int mt_log_normal_(mt_tensor *t, mt_generator *g, double mean, double std);

/* ---- sampling ops with a new result ---- */
/* r = mean + std * N(0, 1), mean and std broadcast (tensors or numbers) */
int mt_normal(mt_tensor *r, mt_generator *g, const mt_operand *mean, const mt_operand *std,
              int default_float);
/* r (x's shape and dtype) = 1 with probability x (has_p 0: x float), or
   with probability p */
int mt_bernoulli(mt_tensor *r, mt_generator *g, const mt_tensor *x, double p, int has_p);
/* a random permutation of 1..n (1-based, as every index in moontorch) */
int mt_randperm(mt_tensor *r, mt_generator *g, int64_t n, int dtype);
/* n 1-based category indices per row of probs (1-D [K] or 2-D [R, K]),
   int64 of shape [n] or [R, n]. */
int mt_multinomial(mt_tensor *r, mt_generator *g, const mt_tensor *probs, int64_t n,
                   int replacement);

#endif
