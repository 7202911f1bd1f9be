/* lt_random.c: Lua bindings of the random generator (torch.manual_seed,
   torch.Generator), the samplers (torch.rand, x:normal_, torch.multinomial,
   ...) and the rule-made tensors (torch.eye, arange, range, linspace).

   Decisions of the Lua API, beyond the stream layout of mt_random.h:
   - get_rng_state / g:get_state give a uint8 tensor of 16 bytes (seed, then
     offset, little-endian), as PyTorch gives a uint8 tensor; set_rng_state
     and g:set_state take one back.
   - The default generator starts from a non-deterministic seed and a new
     torch.Generator() from 67280421310721, both as in PyTorch; seeds are
     any Lua integer, read as 64 bits.
   - x:random_(to) is [0, to) and x:random_(from, to) is [from, to), as in
     PyTorch (not Torch7's [1, to]); x:random_() is [0, 2^mantissa] for
     floating dtypes and [0, max] for integer ones.
   - Indices out (randperm, multinomial) are 1-based; values (randint,
     arange) are not.
   - Torch7 leftovers: torch.normal(mean, std) with two numbers and no size
     and torch.uniform(a, b) return one Lua number; linspace and logspace
     take 100 steps when steps is left out. */
#include <math.h>
#include <string.h>
#include "lt.h"
#include "../ops/dispatch.h"
#include "../tensor/mt_random.h"
#include "../tensor/mt_create.h"

#define LT_GENERATOR "torch.Generator"
#define LT_DEFAULT_GENERATOR_KEY "torch.default_generator"
/* Integer arguments of arange/range beyond this are not exact in the double
   the engine computes with: refused rather than silently rounded. */
#define LT_EXACT_INT 9007199254740992.0    /* 2^53 */
/* Torch7's linspace/logspace default when steps is left out */
#define LT_DEFAULT_STEPS 100

/* A torch.Generator: its own state, or (torch.default_generator) a pointer
   to the engine's default generator. */
typedef struct {
  mt_generator *g;
  mt_generator own;
} lt_generator;

/* ---- argument helpers ---- */
static lt_generator *check_generator(lua_State *L, int i, const char *op) {
  lt_generator *g = luaL_testudata(L, i, LT_GENERATOR);
  if (!g) luaL_error(L, "%s: generator must be a torch.Generator, got %s", op, luaL_typename(L, i));
  return g;
}

/* The 'generator' option, else the default generator of t's device (the
   CPU's when t is NULL). */
static mt_generator *opt_generator_for(lua_State *L, int opts, const char *op, const mt_tensor *t) {
  mt_generator *g = t && mt_device_of(t) != MT_CPU ? mt_device_generator(mt_device_of(t), mt_device_index_of(t))
                                                   : mt_default_generator();
  if (!opts) return g;
  if (lua_getfield(L, opts, "generator") != LUA_TNIL) g = check_generator(L, -1, op)->g;
  lua_pop(L, 1);
  return g;
}
static mt_generator *opt_generator(lua_State *L, int opts, const char *op) {
  return opt_generator_for(L, opts, op, NULL);
}

/* The last positional argument: the one before a trailing options table. */
static int last_positional(lua_State *L, int opts) { return opts ? opts - 1 : lua_gettop(L); }

static double arg_number(lua_State *L, int i, int last, double def) {
  return i <= last && !lua_isnil(L, i) ? luaL_checknumber(L, i) : def;
}

static int float_dtype(lua_State *L, int opts, int def, const char *op) {
  int dtype = lt_opt_dtype(L, opts, def, op);
  if (!mt_dtype_is_float(dtype))
    luaL_error(L, "%s: expects a floating-point dtype, got %s", op, mt_dtypes[dtype].name);
  return dtype;
}

/* A new tensor of the sizes at 1 .. the last positional argument. */
/* A new tensor of the sizes at 1.., on the device a device= option names
   (lt_creation_device: set while a creation function runs for it) */
static mt_tensor *push_new_on(lua_State *L, const char *op, int dtype, int n, const int64_t *shape) {
  int index, device = lt_creation_device(&index);
  if (device == MT_CPU) return lt_push_new(L, op, dtype, n, shape);
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_tensor_init_on(op, r, dtype, n, shape, device, index));
  return r;
}

static mt_tensor *push_sized(lua_State *L, int opts, int dtype, const char *op) {
  int64_t shape[MT_MAX_DIMS];
  int n = lt_read_shape(L, 1, last_positional(L, opts), shape, op);
  return push_new_on(L, op, dtype, n, shape);
}

/* a new tensor of x's shape on x's device */
static mt_tensor *push_like(lua_State *L, const mt_tensor *x, int dtype) {
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_tensor_init_like(r, dtype, x->ndim, x->shape, x));
  return r;
}

/* ---- generator state ---- */
static void push_state(lua_State *L, const mt_generator *g) {
  int64_t n = MT_RNG_STATE_BYTES;
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_tensor_init(r, MT_UINT8, 1, &n));
  mt_generator_get_state(g, (uint8_t *)mt_data(r));
}

static void read_state(lua_State *L, int i, mt_generator *g, const char *op) {
  mt_tensor *t = lt_check(L, i, op);
  if (t->dtype != MT_UINT8 || t->ndim != 1 || t->shape[0] != MT_RNG_STATE_BYTES) {
    char b[128];
    luaL_error(L, "%s: expects the uint8 tensor of %d bytes that get_rng_state gives, got %s of size %s",
               op, MT_RNG_STATE_BYTES, mt_dtypes[t->dtype].name, mt_shape_str(t, b, sizeof b));
  }
  uint8_t bytes[MT_RNG_STATE_BYTES];
  for (int k = 0; k < MT_RNG_STATE_BYTES; k++) bytes[k] = *(const uint8_t *)(mt_data(t) + k * t->stride[0]);
  mt_generator_set_state(g, bytes);
}

static void push_default_generator(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, LT_DEFAULT_GENERATOR_KEY);
}

/* torch.manual_seed(n): returns torch.default_generator, as PyTorch */
static int r_manual_seed(lua_State *L) {
  mt_generator_init(mt_default_generator(), (uint64_t)luaL_checkinteger(L, 1));
  mt_seed_device_generators((uint64_t)luaL_checkinteger(L, 1));   /* the GPUs' too, as PyTorch */
  push_default_generator(L);
  return 1;
}

/* torch.seed(): a fresh non-deterministic seed, returned */
static int r_seed(lua_State *L) {
  uint64_t seed = mt_nondeterministic_seed();
  mt_generator_init(mt_default_generator(), seed);
  lua_pushinteger(L, (lua_Integer)seed);
  return 1;
}

static int r_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)mt_default_generator()->seed);
  return 1;
}

static int r_get_rng_state(lua_State *L) { push_state(L, mt_default_generator()); return 1; }
static int r_set_rng_state(lua_State *L) { read_state(L, 1, mt_default_generator(), "set_rng_state"); return 0; }

/* torch._device_generator(index): the generator of cuda:index (torch.cuda's
   seeding functions and default_generators use it), a torch.Generator that
   points at the engine's; GPU tensors draw from it unless given another */
static int r_device_generator(lua_State *L) {
  lua_Integer i = luaL_checkinteger(L, 1);
  if (i < 0 || i >= MT_MAX_DEVICE_INDEX) luaL_error(L, "cuda: invalid device index %I", i);
  lt_generator *g = lua_newuserdatauv(L, sizeof *g, 0);
  g->g = mt_device_generator(MT_CUDA, (int)i);
  luaL_setmetatable(L, LT_GENERATOR);
  return 1;
}

/* torch.Generator() or torch.Generator('cpu') */
static int r_generator(lua_State *L) {
  const char *device = luaL_optstring(L, 1, "cpu");
  if (strcmp(device, "cpu") != 0) luaL_error(L, "Generator: device '%s' is not available", device);
  lt_generator *g = lua_newuserdatauv(L, sizeof *g, 0);
  g->g = &g->own;
  mt_generator_init(&g->own, MT_GENERATOR_DEFAULT_SEED);
  luaL_setmetatable(L, LT_GENERATOR);
  return 1;
}

static int g_manual_seed(lua_State *L) {
  lt_generator *g = check_generator(L, 1, "manual_seed");
  mt_generator_init(g->g, (uint64_t)luaL_checkinteger(L, 2));
  lua_settop(L, 1);
  return 1;
}

static int g_seed(lua_State *L) {
  lt_generator *g = check_generator(L, 1, "seed");
  uint64_t seed = mt_nondeterministic_seed();
  mt_generator_init(g->g, seed);
  lua_pushinteger(L, (lua_Integer)seed);
  return 1;
}

static int g_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_generator(L, 1, "initial_seed")->g->seed);
  return 1;
}

static int g_get_state(lua_State *L) { push_state(L, check_generator(L, 1, "get_state")->g); return 1; }

static int g_set_state(lua_State *L) {
  read_state(L, 2, check_generator(L, 1, "set_state")->g, "set_state");
  lua_settop(L, 1);
  return 1;
}

static int g_tostring(lua_State *L) {
  lt_generator *g = check_generator(L, 1, "tostring");
  lua_pushfstring(L, "torch.Generator (seed %I, offset %I)", (lua_Integer)g->g->seed, (lua_Integer)g->g->offset);
  return 1;
}

/* ---- tensors of random values: the registry's random ops (MT_RANDOM_OPS),
   through the dispatcher ---- */
static void call_random(lua_State *L, mt_tensor *r, mt_op op, const mt_random_args *a) {
  LT_TRY(L, mt_call_random(r, op, a));
}

/* r filled in place by the sampler op with the numbers p0 and p1 */
static void fill(lua_State *L, mt_tensor *r, mt_op op, mt_generator *g, double p0, double p1) {
  call_random(L, r, op, &(mt_random_args){.g = g, .p = {p0, p1}});
}

/* torch.rand(sizes..., {dtype=, generator=}): uniform on [0, 1) */
static int r_rand(lua_State *L) {
  int opts = lt_opts_index(L);
  mt_tensor *r = push_sized(L, opts, float_dtype(L, opts, lt_default_dtype, "rand"), "rand");
  fill(L, r, MT_OP_uniform_, opt_generator_for(L, opts, "rand", r), 0, 1);
  lt_opt_requires_grad(L, opts, r);
  return 1;
}

static int r_randn(lua_State *L) {
  int opts = lt_opts_index(L);
  mt_tensor *r = push_sized(L, opts, float_dtype(L, opts, lt_default_dtype, "randn"), "randn");
  fill(L, r, MT_OP_normal_, opt_generator_for(L, opts, "randn", r), 0, 1);
  lt_opt_requires_grad(L, opts, r);
  return 1;
}

static int r_rand_like(lua_State *L) {
  mt_tensor *x = lt_check_any(L, 1, "rand_like");
  int opts = lt_opts_index(L);
  mt_tensor *r = push_like(L, x, float_dtype(L, opts, x->dtype, "rand_like"));
  fill(L, r, MT_OP_uniform_, opt_generator_for(L, opts, "rand_like", r), 0, 1);
  return 1;
}

static int r_randn_like(lua_State *L) {
  mt_tensor *x = lt_check_any(L, 1, "randn_like");
  int opts = lt_opts_index(L);
  mt_tensor *r = push_like(L, x, float_dtype(L, opts, x->dtype, "randn_like"));
  fill(L, r, MT_OP_normal_, opt_generator_for(L, opts, "randn_like", r), 0, 1);
  return 1;
}

/* Reads (high) or (low, high) at first..last into [*low, *high). */
static void int_bounds(lua_State *L, int first, int last, int64_t *low, int64_t *high, const char *op) {
  int n = last - first + 1;
  if (n < 1 || n > 2) luaL_error(L, "%s: expects (high) or (low, high)", op);
  *low = n == 2 ? luaL_checkinteger(L, first) : 0;
  *high = luaL_checkinteger(L, last);
  if (*low >= *high)
    luaL_error(L, "%s: expects low < high, got low=%I, high=%I", op, (lua_Integer)*low, (lua_Integer)*high);
}

/* torch.randint(high, size, opts) / torch.randint(low, high, size, opts):
   integers on [low, high), int64 unless a dtype is given */
static int r_randint(lua_State *L) {
  int nums = 0;
  while (nums < 2 && lua_type(L, nums + 1) == LUA_TNUMBER) nums++;
  int size_at = nums + 1;
  if (nums == 0 || lua_type(L, size_at) != LUA_TTABLE)
    luaL_error(L, "randint: expects (high, size) or (low, high, size), with size a table such as {3, 4}");
  int64_t low, high, shape[MT_MAX_DIMS];
  int_bounds(L, 1, nums, &low, &high, "randint");
  int n = lt_read_shape(L, size_at, size_at, shape, "randint");
  int opts = lua_type(L, size_at + 1) == LUA_TTABLE ? size_at + 1 : 0;
  int dtype = lt_opt_dtype(L, opts, MT_INT64, "randint");
  mt_tensor *r = push_new_on(L, "randint", dtype, n, shape);
  call_random(L, r, MT_OP_random_, &(mt_random_args){.g = opt_generator_for(L, opts, "randint", r), .i = {low, high}});
  return 1;
}

/* torch.randint_like(x, high, opts) / (x, low, high, opts) */
static int r_randint_like(lua_State *L) {
  mt_tensor *x = lt_check_any(L, 1, "randint_like");
  int opts = lt_opts_index(L);
  int64_t low, high;
  int_bounds(L, 2, last_positional(L, opts), &low, &high, "randint_like");
  mt_tensor *r = push_like(L, x, lt_opt_dtype(L, opts, x->dtype, "randint_like"));
  call_random(L, r, MT_OP_random_,
              &(mt_random_args){.g = opt_generator_for(L, opts, "randint_like", r), .i = {low, high}});
  return 1;
}

/* torch.randperm(n, opts): a permutation of 1..n */
static int r_randperm(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  int opts = lt_opts_index(L);
  int dtype = lt_opt_dtype(L, opts, MT_INT64, "randperm");
  mt_generator *g = opt_generator(L, opts, "randperm");
  call_random(L, lt_push(L), MT_OP_randperm, &(mt_random_args){.g = g, .i = {n}, .dtype = dtype});
  return 1;
}

/* torch.bernoulli(p) (a tensor of probabilities) or torch.bernoulli(x, p)
   (a number p, x's shape and dtype); also x:bernoulli() */
static int r_bernoulli(lua_State *L) {
  mt_tensor *x = lt_check_any(L, 1, "bernoulli");
  int opts = lt_opts_index(L);
  mt_generator *g = opt_generator_for(L, opts, "bernoulli", x);
  const int has_p = last_positional(L, opts) >= 2;
  const double p = has_p ? luaL_checknumber(L, 2) : 0;
  call_random(L, lt_push(L), MT_OP_bernoulli, &(mt_random_args){.g = g, .t = x, .p = {p}, .flag = has_p});
  return 1;
}

/* torch.multinomial(probs, n, replacement) or (probs, n, {replacement=}) */
static int r_multinomial(lua_State *L) {
  mt_tensor *p = lt_check_any(L, 1, "multinomial");
  lua_Integer n = luaL_checkinteger(L, 2);
  int opts = lt_opts_index(L);
  int replacement = lua_isboolean(L, 3) ? lua_toboolean(L, 3) : lt_opt_bool(L, opts, "replacement", 0);
  mt_generator *g = opt_generator_for(L, opts, "multinomial", p);
  call_random(L, lt_push(L), MT_OP_multinomial, &(mt_random_args){.g = g, .t = p, .i = {n}, .flag = replacement});
  return 1;
}

static void read_operand(lua_State *L, int i, mt_operand *op, const char *name) {
  op->t = lt_test_any(L, i);
  op->is_int = 0;
  op->value = 0;
  if (op->t) return;
  if (lua_type(L, i) != LUA_TNUMBER)
    luaL_error(L, "%s: argument %d must be a tensor or a number, got %s", name, i, luaL_typename(L, i));
  op->value = lua_tonumber(L, i);
  op->is_int = lua_isinteger(L, i);
}

/* torch.normal(mean, std): tensors or numbers, broadcast;
   torch.normal(mean, std, sizes..., opts): numbers and a size;
   torch.normal(mean, std) with two numbers: one Lua number (Torch7). */
static int r_normal(lua_State *L) {
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  if (lt_test_any(L, 1) || lt_test_any(L, 2)) {
    mt_operand mean, std;
    read_operand(L, 1, &mean, "normal");
    read_operand(L, 2, &std, "normal");
    const mt_tensor *on = mean.t && mt_device_of(mean.t) != MT_CPU ? mean.t : std.t;   /* whose generator */
    mt_generator *g = opt_generator_for(L, opts, "normal", on);
    call_random(L, lt_push(L), MT_OP_normal, &(mt_random_args){.g = g, .mean = &mean, .std = &std, .dtype = lt_default_dtype});
    return 1;
  }
  mt_generator *g = opt_generator(L, opts, "normal");
  double mean = luaL_checknumber(L, 1), std = luaL_checknumber(L, 2);
  int64_t shape[MT_MAX_DIMS];
  int n = last >= 3 ? lt_read_shape(L, 3, last, shape, "normal") : 0;
  int dtype = last >= 3 ? float_dtype(L, opts, lt_default_dtype, "normal") : MT_FLOAT64;
  mt_tensor *r = lt_push_new(L, "normal", dtype, n, shape);
  fill(L, r, MT_OP_normal_, g, mean, std);
  if (last < 3) lua_pushnumber(L, *(const double *)mt_data(r));
  return 1;
}

/* torch.uniform(a, b): one Lua number on [a, b) (Torch7) */
static int r_uniform(lua_State *L) {
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  double a = arg_number(L, 1, last, 0), b = arg_number(L, 2, last, 1);
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_tensor_init(r, MT_FLOAT64, 0, NULL));
  fill(L, r, MT_OP_uniform_, opt_generator(L, opts, "uniform"), a, b);
  lua_pushnumber(L, *(const double *)mt_data(r));
  return 1;
}

/* ---- in-place samplers: x:uniform_(a, b, opts), ... return x (the
   dispatcher cuts x's history: a sample is a constant) ---- */
static int sample_inplace(lua_State *L, mt_op op, double a, double b) {
  mt_tensor *t = lt_check_any(L, 1, mt_op_names[op]);
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  double x = arg_number(L, 2, last, a), y = arg_number(L, 3, last, b);
  fill(L, t, op, opt_generator_for(L, opts, mt_op_names[op], t), x, y);
  lua_settop(L, 1);
  return 1;
}

static int m_uniform_(lua_State *L) { return sample_inplace(L, MT_OP_uniform_, 0, 1); }
static int m_normal_(lua_State *L) { return sample_inplace(L, MT_OP_normal_, 0, 1); }
static int m_exponential_(lua_State *L) { return sample_inplace(L, MT_OP_exponential_, 1, 0); }
static int m_geometric_(lua_State *L) { return sample_inplace(L, MT_OP_geometric_, NAN, 0); }
static int m_cauchy_(lua_State *L) { return sample_inplace(L, MT_OP_cauchy_, 0, 1); }
static int m_log_normal_(lua_State *L) { return sample_inplace(L, MT_OP_log_normal_, 1, 2); }

/* x:random_() / x:random_(to) / x:random_(from, to): PyTorch's ranges,
   [0, to) and [from, to); with no bound, every integer the dtype holds
   exactly from 0 up (2^mantissa for floating dtypes, included). */
static int m_random_(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "random_");
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  mt_random_args a = {.g = opt_generator_for(L, opts, "random_", t), .flag = last < 2};
  if (last >= 2) int_bounds(L, 2, last, &a.i[0], &a.i[1], "random_");
  call_random(L, t, MT_OP_random_, &a);
  lua_settop(L, 1);
  return 1;
}

/* x:bernoulli_(p): p a number (default 0.5) or a tensor broadcast to x */
static int m_bernoulli_(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "bernoulli_");
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  mt_tensor *p = last >= 2 ? lt_test_any(L, 2) : NULL;
  double value = p ? 0 : arg_number(L, 2, last, 0.5);
  call_random(L, t, MT_OP_bernoulli_,
              &(mt_random_args){.g = opt_generator_for(L, opts, "bernoulli_", t), .t = p, .p = {value}});
  lua_settop(L, 1);
  return 1;
}

/* ---- rule-made tensors: the registry's factories, made on the CPU (a
   device= option moves them: lt_device_creation) ---- */

/* torch.eye(n, m, opts) */
static int c_eye(lua_State *L) {
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  lua_Integer n = luaL_checkinteger(L, 1), m = last >= 2 ? luaL_checkinteger(L, 2) : n;
  const int dtype = lt_opt_dtype(L, opts, lt_default_dtype, "eye");
  return lt_push_factory(L, MT_OP_eye, &(mt_factory_args){.n = {n, m}, .dtype = dtype}, opts);
}

/* Reads numeric arguments first..last into v; returns whether all were Lua
   integers. */
static int read_numbers(lua_State *L, int first, int last, double *v, const char *op) {
  int all_int = 1;
  for (int i = first; i <= last; i++) {
    v[i - first] = luaL_checknumber(L, i);
    if (!lua_isinteger(L, i)) all_int = 0;
    else if (fabs(v[i - first]) > LT_EXACT_INT)
      luaL_error(L, "%s: integer argument %I is beyond 2^53, where the sequence would not be exact", op,
                 (lua_Integer)lua_tointeger(L, i));
  }
  return all_int;
}

/* torch.arange(end) / (start, end) / (start, end, step), end excluded:
   int64 when every argument is an integer, else the default float dtype */
static int c_arange(lua_State *L) {
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  if (last < 1 || last > 3) luaL_error(L, "arange: expects (end), (start, end) or (start, end, step)");
  double v[3] = {0, 0, 1};
  int all_int = read_numbers(L, 1, last, last == 1 ? v + 1 : v, "arange");
  int dtype = lt_opt_dtype(L, opts, all_int ? MT_INT64 : lt_default_dtype, "arange");
  return lt_push_factory(L, MT_OP_arange, &(mt_factory_args){.p = {v[0], v[1], v[2]}, .dtype = dtype}, opts);
}

/* torch.range(start, end, step=1): end included, default float dtype (Torch7) */
static int c_range(lua_State *L) {
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  if (last < 2 || last > 3) luaL_error(L, "range: expects (start, end) or (start, end, step)");
  double v[3] = {0, 0, 1};
  read_numbers(L, 1, last, v, "range");
  int dtype = lt_opt_dtype(L, opts, lt_default_dtype, "range");
  return lt_push_factory(L, MT_OP_range, &(mt_factory_args){.p = {v[0], v[1], v[2]}, .dtype = dtype}, opts);
}

/* torch.linspace(start, end, steps=100, opts) */
static int c_linspace(lua_State *L) {
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  double start = luaL_checknumber(L, 1), end = luaL_checknumber(L, 2);
  lua_Integer steps = last >= 3 ? luaL_checkinteger(L, 3) : LT_DEFAULT_STEPS;
  int dtype = lt_opt_dtype(L, opts, lt_default_dtype, "linspace");
  return lt_push_factory(L, MT_OP_linspace, &(mt_factory_args){.p = {start, end}, .n = {steps}, .dtype = dtype}, opts);
}

/* torch.logspace(start, end, steps=100, base=10, opts); base also as an option */
static int c_logspace(lua_State *L) {
  int opts = lt_opts_index(L), last = last_positional(L, opts);
  double start = luaL_checknumber(L, 1), end = luaL_checknumber(L, 2);
  lua_Integer steps = last >= 3 ? luaL_checkinteger(L, 3) : LT_DEFAULT_STEPS;
  double base = lt_opt_number(L, opts, "base", arg_number(L, 4, last, 10));
  int dtype = lt_opt_dtype(L, opts, lt_default_dtype, "logspace");
  return lt_push_factory(L, MT_OP_logspace, &(mt_factory_args){.p = {start, end, base}, .n = {steps}, .dtype = dtype},
                         opts);
}

/* torch._philox(ctr, key): the raw block function on tables of 4 and 2
   words, for known-answer tests. */
static int r_philox(lua_State *L) {
  uint32_t ctr[4], key[2], out[4];
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  for (int i = 0; i < 4; i++) { lua_geti(L, 1, i + 1); ctr[i] = (uint32_t)luaL_checkinteger(L, -1); lua_pop(L, 1); }
  for (int i = 0; i < 2; i++) { lua_geti(L, 2, i + 1); key[i] = (uint32_t)luaL_checkinteger(L, -1); lua_pop(L, 1); }
  mt_philox4x32_10(ctr, key, out);
  lua_createtable(L, 4, 0);
  for (int i = 0; i < 4; i++) { lua_pushinteger(L, out[i]); lua_rawseti(L, -2, i + 1); }
  return 1;
}

static const luaL_Reg methods[] = {
  {"uniform_", m_uniform_}, {"normal_", m_normal_}, {"random_", m_random_},
  {"bernoulli_", m_bernoulli_}, {"bernoulli", r_bernoulli}, {"exponential_", m_exponential_},
  {"geometric_", m_geometric_}, {"cauchy_", m_cauchy_}, {"log_normal_", m_log_normal_},
  {"multinomial", r_multinomial},
  {NULL, NULL}};

static const luaL_Reg functions[] = {
  {"manual_seed", r_manual_seed}, {"seed", r_seed}, {"initial_seed", r_initial_seed},
  {"get_rng_state", r_get_rng_state}, {"set_rng_state", r_set_rng_state}, {"Generator", r_generator},
  {"_device_generator", r_device_generator},
  {"rand", r_rand}, {"randn", r_randn}, {"rand_like", r_rand_like}, {"randn_like", r_randn_like},
  {"randint", r_randint}, {"randint_like", r_randint_like}, {"randperm", r_randperm},
  {"bernoulli", r_bernoulli}, {"multinomial", r_multinomial}, {"normal", r_normal},
  {"uniform", r_uniform}, {"eye", c_eye}, {"arange", c_arange}, {"range", c_range},
  {"linspace", c_linspace}, {"logspace", c_logspace}, {"_philox", r_philox},
  {NULL, NULL}};

static const luaL_Reg generator_methods[] = {
  {"manual_seed", g_manual_seed}, {"seed", g_seed}, {"initial_seed", g_initial_seed},
  {"get_state", g_get_state}, {"set_state", g_set_state},
  {NULL, NULL}};

void lt_open_random(lua_State *L) {
  /* stack: methods torch mt */
  lt_setfuncs(L, methods, functions);
  luaL_newmetatable(L, LT_GENERATOR);           /* ... mt gmt */
  lua_newtable(L);                              /* ... mt gmt index */
  for (const luaL_Reg *m = generator_methods; m->name; m++) {
    lua_pushvalue(L, -3);
    lua_pushcclosure(L, m->func, 1);
    lua_setfield(L, -2, m->name);
  }
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, g_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushstring(L, LT_GENERATOR);
  lua_setfield(L, -2, "__typename");
  lua_pop(L, 1);                                /* ... mt */
  lt_generator *g = lua_newuserdatauv(L, sizeof *g, 0);
  g->g = mt_default_generator();
  luaL_setmetatable(L, LT_GENERATOR);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, LT_DEFAULT_GENERATOR_KEY);
  lua_setfield(L, -3, "default_generator");
}
