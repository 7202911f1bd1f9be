/* dispatch.c: the op call path (dispatch.h) and the registry's runtime
   table, expanded from src/ops/registry.h. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "dispatch.h"
#include "../tensor/mt_linalg.h"
#include "../tensor/mt_reduce.h"
#include "../tensor/mt_index.h"

/* ---- the runtime table ---- */
#define ANY "any "
#define POS "pos "
#define BIG "big "
#define COND "cnd "
#define UNIQ "unq "
#define INT "int "
#define NODERIV 0
#define DERIV(reads, expr) 1
#define DERIV2(reads_a, expr_a, reads_b, expr_b) 1
#define DERIV3(reads_i, expr_i, reads_a, expr_a, reads_b, expr_b) 1
#define AC_NONE MT_AC_NONE
#define AC_LOWER MT_AC_LOWER
#define AC_FP32 MT_AC_FP32
#define AC_PROMOTE MT_AC_PROMOTE
#define INFO(name, deriv, autocast, domain, aliases, family, signature, arity, inplace, lua_name) \
  [MT_OP_##name] = {#name, aliases, family, signature, domain, arity, autocast, deriv, inplace, lua_name},
#define U(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, "", 1, 1, 1)
#define U_OUT(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, "", 1, !strcmp(#name, "logical_not"), 1)
#define B(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, "", 2, 1, 1)
#define B_ALIAS(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, "", 2, 1, 0)
/* a reduction's kernel column: RED(first, second, finish, result, signature) */
#define SIG_DIMS "dims"
#define SIG_VAR "var"
#define SIG_NORM "norm"
#define SIG_NONE "none"
#define RED(first, second, fin, result, signature) SIG_##signature
#define R(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 1, 0, strcmp(kernel, "none") != 0)
#define ALONG(call) "dim"
#define D(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 1, 0, 1)
/* a selection's kernel column: SELECT(call, signature) */
#define SIG_DIM "dim"
#define SIG_KTH "kth"
#define SIG_SORT "sort"
#define SIG_TOPK "topk"
#define SIG_ARG "arg"
#define SELECT(call, signature) SIG_##signature
/* an op_dim selection is reached through op's binding */
#define S(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 1, 0, strstr(#name, "_dim") == NULL)
/* a product's kernel column: PRODUCT(call, shapes), ADD_PRODUCT(call, shapes) */
#define PRODUCT(call, shapes) shapes
#define ADD_PRODUCT(call, shapes) shapes
#define P(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 2, 0, 1)
#define P3(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 3, 1, 1)
/* an op with parameters: PARAM(call, signature); its arity is its domain's
   word count (each word is four characters) */
#define PARAM(call, signature) signature, 1
#define PARAM_INPLACE(call, signature) signature, 2
#define PA_INFO(name, deriv, autocast, domain, aliases, E, signature, inplace) \
  INFO(name, deriv, autocast, domain, aliases, E, signature, (int)(sizeof(domain) - 1) / 4, \
       inplace == 2 ? 2 : strcmp(#name, "softplus") != 0 && strcmp(#name, "where") != 0, 1)
#define PA(name, kernel, E, deriv, autocast, domain, aliases) PA_INFO(name, deriv, autocast, domain, aliases, E, kernel)
/* an index op: INDEX(call, signature) */
#define SIG_SELECT "select"
#define SIG_GATHER "gather"
#define INDEX(call, signature) SIG_##signature
#define IX(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 1, 0, 1)
/* a put: PUT(call, signature); an op_fill is reached through op's binding */
#define SIG_SELECT_SOURCE "select source"
#define SIG_SELECT_VALUE "select value"
#define SIG_GATHER_SOURCE "gather source"
#define SIG_GATHER_VALUE "gather value"
#define PUT(call, signature) SIG_##signature
#define PT(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 2, 1, strstr(#name, "_fill") == NULL || \
       strcmp(#name, "index_fill") == 0)
/* a mask op: MASK(call, signature); masked_select takes x alone, in place nothing */
#define SIG_VALUE "value"
#define SIG_SOURCE "source"
#define MASK(call, signature) SIG_##signature
#define MK(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, (int)(sizeof(domain) - 1) / 4, strcmp(kernel, "none") != 0, 1)
/* a view: VIEW(call, signature, node); tril and triu alone have an in-place form */
#define VIEW(call, signature, node) signature
#define VW(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 1, !strcmp(#name, "tril") || !strcmp(#name, "triu"), 1)
/* a join: JOIN(call) */
#define JOIN(call) "dim"
#define JN(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 1, 0, 1)
/* a random op: RANDOM(call, signature); a sampler (named with a trailing _) exists in place only */
#define RANDOM(call, signature) signature
#define RN(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 1, #name[sizeof #name - 2] == '_' ? 2 : 0, 1)
/* a factory: FACTORY(call, signature); no tensor input */
#define FACTORY(call, signature) signature
#define FA(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 0, 0, 1)
/* an optimizer step: OPTIM(call, binding); no differentiated input */
#define OPTIM(call, binding) binding
#define OS(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 0, 0, 1)
/* a conversion: CAST(call); Lua reaches it through to, type, float, cuda, ... */
#define CAST(call) "dtype device"
#define CS(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, 1, 0, 1)
/* an nn kernel: NN(call, binding, node); its arity is its domain's word count */
#define NN(call, binding, node) binding
#define NNK(name, kernel, E, deriv, autocast, domain, aliases) \
  INFO(name, deriv, autocast, domain, aliases, E, kernel, (int)(sizeof(domain) - 1) / 4, 0, kernel[0] != 0)
const mt_op_info mt_op_infos[MT_NUM_OPS] = {
  MT_UNARY_FLOAT_OPS(U, "unary_float") MT_UNARY_FLOAT_ONLY_OPS(U, "unary_float_only")
  MT_UNARY_ROUND_OPS(U, "unary_round") MT_UNARY_SAME_OPS(U, "unary_same") MT_UNARY_BOOL_OPS(U_OUT, "unary_bool")
  MT_BINARY_OPS(B, "binary") MT_BINARY_FLOAT_OPS(B, "binary_float") MT_COMPARE_OPS(B, "compare")
  MT_BINARY_DIV_OPS(B_ALIAS, "binary_div") MT_UNARY_INT_OPS(U, "unary_int") MT_BINARY_INT_OPS(B, "binary_int")
  MT_REDUCE_OPS(R, "reduce") MT_ALONG_OPS(D, "along")
  MT_SELECT_OPS(S, "select") MT_PRODUCT_OPS(P, "product") MT_ADD_PRODUCT_OPS(P3, "add_product")
  MT_PARAM_OPS(PA, "param") MT_INDEX_OPS(IX, "index") MT_PUT_OPS(PT, "put") MT_MASK_OPS(MK, "mask")
  MT_VIEW_OPS(VW, "view") MT_JOIN_OPS(JN, "join") MT_NN_OPS(NNK, "nn") MT_RANDOM_OPS(RN, "random")
  MT_FACTORY_OPS(FA, "factory") MT_OPTIM_OPS(OS, "optim") MT_CAST_OPS(CS, "cast")
};

/* ---- device kernels ---- */
static mt_device_kernels device_kernels[MT_NUM_DEVICES] = {
  [MT_CPU] = {mt_unary, mt_binary, mt_reduce, mt_along, mt_selection, mt_product, mt_add_product, mt_param,
              mt_index_op, mt_put_op, mt_mask_op, mt_view_op, mt_join_op, mt_nn_op, mt_random_op},
};

void mt_register_kernels(int device, const mt_device_kernels *k) {
  if (device >= 0 && device < MT_NUM_DEVICES) device_kernels[device] = *k;
}

static const char *const device_names[MT_NUM_DEVICES] = {"cpu", "cuda"};

static __attribute__((noinline, cold)) const mt_device_kernels *no_kernel(const char *op, int device) {
  mt_fail("%s: no kernel for tensors on device %s", op,
          device >= 0 && device < MT_NUM_DEVICES ? device_names[device] : "unknown");
  return NULL;
}

/* The kernels of the device the inputs t, u, v (NULL: none) live on, when
   it has the one in slot (SLOT(unary), ...); the CPU has them all. Inputs
   on different devices are refused, except a 0-dim CPU tensor beside GPU
   tensors in an elementwise op (a number, as PyTorch allows). */
#define SLOT(family) offsetof(mt_device_kernels, family)
static inline int device_of(const mt_tensor *t) { return t && t->storage ? t->storage->device : MT_CPU; }

static __attribute__((noinline)) const mt_device_kernels *kernels_off_cpu(mt_op op, const mt_tensor *t,
                                                                         const mt_tensor *u, const mt_tensor *v,
                                                                         size_t slot) {
  const mt_tensor *in[3] = {t, u, v}, *first = NULL;
  int scalars_ok = mt_op_is_pointwise(op);
  for (int i = 0; i < 3 && !first; i++)
    if (device_of(in[i]) != MT_CPU) first = in[i];
  for (int i = 0; i < 3; i++) {
    if (!in[i] || in[i] == first || mt_same_device(in[i], first)) continue;
    if (scalars_ok && device_of(in[i]) == MT_CPU && in[i]->ndim == 0) continue;
    mt_check_same_device(mt_op_names[op], first, in[i]);
    return NULL;
  }
  int device = device_of(first);
  const mt_device_kernels *k = device >= 0 && device < MT_NUM_DEVICES ? &device_kernels[device] : NULL;
  void (*fn)(void) = NULL;
  if (k) memcpy(&fn, (const char *)k + slot, sizeof fn);
  if (!fn) return no_kernel(mt_op_names[op], device);
  return k;
}

static inline const mt_device_kernels *kernels_for(mt_op op, const mt_tensor *t, const mt_tensor *u,
                                                   const mt_tensor *v, size_t slot) {
  if (__builtin_expect((device_of(t) | device_of(u) | device_of(v)) == MT_CPU, 1)) return &device_kernels[MT_CPU];
  return kernels_off_cpu(op, t, u, v, slot);
}

/* an internal caller's op of the wrong family: a bug, reported, not run */
static __attribute__((noinline, cold)) int wrong_family(mt_op op, const char *call) {
  return mt_fail("%s: %s is not an op of this family", call, op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
}

/* ---- the op hook and the op counter ---- */
static mt_op_hook_fn op_hook;
void mt_set_op_hook(mt_op_hook_fn hook) { op_hook = hook; }
mt_op_hook_fn mt_get_op_hook(void) { return op_hook; }

static int64_t op_counts[MT_NUM_OPS];
static void count_hook(int op, int phase, const mt_tensor *a, const mt_tensor *b, const mt_tensor *c) {
  (void)a, (void)b, (void)c;
  if (phase == 0 && op >= 0 && op < MT_NUM_OPS) __atomic_add_fetch(&op_counts[op], 1, __ATOMIC_RELAXED);
}
void mt_op_counter_enable(int on) {
  if (on) memset(op_counts, 0, sizeof op_counts);
  mt_set_op_hook(on ? count_hook : NULL);
}
int64_t mt_op_count(int op) { return op >= 0 && op < MT_NUM_OPS ? op_counts[op] : 0; }

/* HOOK(op, 0, a, b, c) before the kernel (the inputs are read only when a hook is set), HOOK(op, 1) after */
#define HOOK(op, ...) HOOK_(op, __VA_ARGS__, NULL, NULL, NULL)
#define HOOK_(op, phase, a, b, c, ...)                                                                   \
  do {                                                                                                  \
    mt_op_hook_fn h_ = op_hook;                                                                         \
    if (__builtin_expect(h_ != NULL, 0)) h_(op, phase, a, b, c);                                        \
  } while (0)

/* ---- autograd's part ---- */
static mt_autograd_hooks ag;
void mt_register_autograd(const mt_autograd_hooks *hooks) { ag = *hooks; }

/* a temporary that may carry autograd history */
static void drop(mt_tensor *t) {
  if (t->grad_meta && ag.release_meta) ag.release_meta(t->grad_meta);
  t->grad_meta = NULL;
  mt_tensor_release(t);
}

/* ---- autocast: the registry's autocast column applied (mixed precision) ----
   Per device type: on or off, and the lower dtype. An out-of-place op whose
   category is not AC_NONE casts its eligible float inputs (recorded, so the
   gradients come back in the inputs' dtypes) and runs again on the casts,
   which leave nothing more to cast. In-place ops, and ops given a dtype,
   run as they are, as in PyTorch. A weight's cast (a leaf that requires
   grad) is kept for the rest of the outermost region. */
static struct { int enabled, dtype; } ac_state[MT_NUM_DEVICES] = {   /* PyTorch's defaults */
  [MT_CPU] = {0, MT_BFLOAT16}, [MT_CUDA] = {0, MT_FLOAT16}};
static int ac_on, ac_depth;                     /* ac_on: the one test a call makes when autocast is off */
typedef struct {
  mt_storage *storage;                          /* held: its address cannot be reused while cached */
  int64_t offset, version, shape[MT_MAX_DIMS], stride[MT_MAX_DIMS];
  int ndim, from, to;
  mt_tensor cast;
} ac_entry;
static ac_entry *ac_cache;
static int ac_cached, ac_capacity;

static void ac_update(void) {
  ac_on = 0;
  for (int d = 0; d < MT_NUM_DEVICES; d++) ac_on |= ac_state[d].enabled;
}

void mt_autocast_get(int device, int *enabled, int *dtype) {
  *enabled = device >= 0 && device < MT_NUM_DEVICES && ac_state[device].enabled;
  *dtype = device >= 0 && device < MT_NUM_DEVICES ? ac_state[device].dtype : MT_FLOAT32;
}

static void ac_clear_cache(void) {
  for (int i = 0; i < ac_cached; i++) {
    drop(&ac_cache[i].cast);
    mt_storage_release(ac_cache[i].storage);
  }
  ac_cached = 0;
}

int mt_autocast_set(int device, int enabled, int dtype) {
  if (device < 0 || device >= MT_NUM_DEVICES) return mt_fail("autocast: unknown device %d", device);
  if (enabled && !mt_dtype_is_float(dtype))
    return mt_fail("autocast: dtype must be a float dtype, got %s", mt_dtypes[dtype].name);
  ac_state[device].enabled = enabled != 0;
  ac_state[device].dtype = dtype;
  ac_update();
  return 0;
}

void mt_autocast_region(int entering) {
  ac_depth += entering ? 1 : -1;
  if (ac_depth <= 0) { ac_depth = 0; ac_clear_cache(); }
}

int mt_autocast_pause(void) {
  int was = ac_on;
  ac_on = 0;
  return was;
}

void mt_autocast_resume(int was) {
  if (was) ac_update();
}

/* the dtype autocast runs op in on the inputs t[0..n) (NULL entries: numbers),
   or -1 where it leaves them as they are */
static int ac_target(mt_op op, const mt_tensor *const *t, int n) {
  const int cat = mt_op_infos[op].autocast;
  int dev = -1;
  for (int i = 0; i < n && dev < 0; i++) if (t[i]) dev = device_of(t[i]);
  if (cat == MT_AC_NONE || dev < 0 || !ac_state[dev].enabled) return -1;
  if (cat == MT_AC_LOWER) return ac_state[dev].dtype;
  if (cat == MT_AC_FP32) return MT_FLOAT32;
  int widest = -1, mixed = 0;                   /* promote: the widest float dtype, where they differ */
  for (int i = 0; i < n; i++)
    if (t[i] && mt_dtype_is_float(t[i]->dtype)) {
      if (widest >= 0 && t[i]->dtype != widest) mixed = 1;
      widest = widest < 0 ? t[i]->dtype : (int)mt_promote((mt_dtype)widest, (mt_dtype)t[i]->dtype);
    }
  return mixed ? widest : -1;
}

/* whether t is cast to target under op's category: a float tensor of another
   dtype, and (as PyTorch) not a float64 one unless promoting */
static int ac_eligible(const mt_tensor *t, mt_op op, int target) {
  return t && mt_dtype_is_float(t->dtype) && t->dtype != target &&
         (mt_op_infos[op].autocast == MT_AC_PROMOTE || t->dtype != MT_FLOAT64);
}

static int ac_same(const ac_entry *e, const mt_tensor *t, int to) {
  return e->storage == t->storage && e->offset == t->offset && e->version == (int64_t)t->storage->version &&
         e->ndim == t->ndim && e->from == t->dtype && e->to == to &&
         !memcmp(e->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim) &&
         !memcmp(e->stride, t->stride, sizeof(int64_t) * (size_t)t->ndim);
}

/* Where t is dense but not contiguous (a permutation of a contiguous layout: a linear
   layer's weight read as w^T), the dims that make it contiguous, in perm; 0 otherwise */
static int dense_order(const mt_tensor *t, int64_t *perm) {
  if (t->ndim < 2 || mt_is_contiguous(t) || mt_numel(t) == 0) return 0;
  for (int i = 0; i < t->ndim; i++) perm[i] = i;
  for (int i = 1; i < t->ndim; i++)              /* by decreasing stride, size-1 dims last */
    for (int j = i; j > 0; j--) {
      const int64_t a = perm[j - 1], b = perm[j];
      const int64_t sa = t->shape[a] == 1 ? -1 : t->stride[a], sb = t->shape[b] == 1 ? -1 : t->stride[b];
      if (sa >= sb) break;
      perm[j - 1] = b;
      perm[j] = a;
    }
  int64_t expect = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    const int64_t d = perm[i];
    if (t->shape[d] == 1) continue;
    if (t->stride[d] != expect) return 0;
    if (__builtin_mul_overflow(expect, t->shape[d], &expect)) return 0;
  }
  return 1;
}

/* r = t cast to dtype, in t's layout when t is dense (as PyTorch's casts keep it): a
   transposed weight is converted as it lies, not transposed by the copy */
static int ac_cast_as_laid(mt_tensor *r, const mt_tensor *t, int dtype) {
  mt_view_args fwd = {{0}, t->ndim, 0, {0}, {0}}, back = fwd;
  if (!dense_order(t, fwd.v)) return mt_call_cast(r, t, dtype);
  for (int i = 0; i < t->ndim; i++) back.v[fwd.v[i]] = i;
  mt_tensor laid = {0}, cast = {0};
  int rc = mt_call_view(&laid, (mt_tensor *)t, MT_OP_permute, &fwd, 0);
  if (!rc) rc = mt_call_cast(&cast, &laid, dtype);
  if (!rc) rc = mt_call_view(r, &cast, MT_OP_permute, &back, 0);
  drop(&laid);
  drop(&cast);
  return rc;
}

/* r = t cast to dtype, recorded; a weight's from the region's cache */
static int ac_cast(mt_tensor *r, const mt_tensor *t, int dtype) {
  const int weight = ag.is_weight && ag.is_weight(t);
  if (weight)
    for (int i = 0; i < ac_cached; i++)
      if (ac_same(&ac_cache[i], t, dtype)) { ag.alias(r, &ac_cache[i].cast); return 0; }
  if (ac_cast_as_laid(r, t, dtype)) return -1;
  if (!weight || ac_depth == 0) return 0;
  if (ac_cached == ac_capacity) {
    int cap = ac_capacity ? ac_capacity * 2 : 16;
    ac_entry *grown = realloc(ac_cache, sizeof *grown * (size_t)cap);
    if (!grown) return 0;                        /* not cached: only slower */
    ac_cache = grown;
    ac_capacity = cap;
  }
  ac_entry *e = &ac_cache[ac_cached++];
  e->storage = t->storage;
  mt_storage_retain(t->storage);
  e->offset = t->offset;
  e->version = (int64_t)t->storage->version;
  e->ndim = t->ndim;
  memcpy(e->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  memcpy(e->stride, t->stride, sizeof(int64_t) * (size_t)t->ndim);
  e->from = t->dtype;
  e->to = dtype;
  ag.alias(&e->cast, r);
  return 0;
}

/* Casts op's eligible inputs t[0..n) into held[0..n) and points t[i] at
   them: the number cast, 0 when autocast leaves the op alone, -1 on error
   (held released). */
static int ac_cast_inputs(mt_op op, const mt_tensor **t, int n, mt_tensor *held) {
  const int target = ac_target(op, t, n);
  if (target < 0) return 0;
  int cast = 0;
  for (int i = 0; i < n; i++) {
    if (!ac_eligible(t[i], op, target)) continue;
    if (ac_cast(&held[i], t[i], target)) {
      for (int k = 0; k < n; k++) drop(&held[k]);
      return -1;
    }
    t[i] = &held[i];
    cast++;
  }
  return cast;
}

static void ac_drop(mt_tensor *held, int n) {
  for (int i = 0; i < n; i++) drop(&held[i]);
}

/* In an op's entry: when autocast casts its inputs, the entry's call again
   on the casts (call uses in[]), its result returned */
#define AUTOCAST(op, in, n, call)                                                                     \
  if (__builtin_expect(ac_on, 0) && mt_op_infos[op].autocast != MT_AC_NONE) {                          \
    mt_tensor held_[n];                                                                               \
    memset(held_, 0, sizeof held_);                                                                   \
    const int cast_ = ac_cast_inputs(op, in, n, held_);                                               \
    if (cast_) {                                                                                      \
      const int rc_ = cast_ < 0 ? -1 : (call);                                                        \
      ac_drop(held_, n);                                                                              \
      return rc_;                                                                                     \
    }                                                                                                 \
  }

/* Whether op_ on self (reading other, may be NULL) takes autograd's
   in-place protocol: 1, 0 (it writes directly), or -1 (refused). */
static int inplace_protocol(mt_op op, const mt_tensor *self, const mt_tensor *other) {
  if (!self->grad_meta && !(other && other->grad_meta)) return 0;
  char name[64];
  snprintf(name, sizeof name, "%s_", mt_op_names[op]);
  return ag.inplace_needed(name, self, other);
}

/* The protocol's end: t (computed out of place from src, a copy of self
   with its history), which must have self's shape, is cast to self's dtype
   and written into self, which takes its history; t and src are
   released. */
static int inplace_commit(mt_op op, mt_tensor *self, mt_tensor *t, mt_tensor *src, int rc) {
  mt_tensor c = {0};
  if (!rc && !mt_same_shape(t, self)) {         /* broadcasting made the result larger than self */
    char b1[128], b2[128];
    rc = mt_fail("%s_: self has size %s but the result has size %s", mt_op_names[op],
                 mt_shape_str(self, b1, sizeof b1), mt_shape_str(t, b2, sizeof b2));
  }
  if (!rc && t->dtype != self->dtype) rc = mt_check_inplace(mt_op_names[op], t->dtype, self);   /* float into int */
  if (!rc && t->dtype != self->dtype) {         /* computed in the promoted type, stored in self's */
    rc = mt_call_cast(&c, t, self->dtype);
    if (!rc) { drop(t); *t = c; }
  }
  if (!rc) rc = ag.inplace_commit(self, t);
  drop(t);
  drop(src);
  return rc ? -1 : 0;
}

/* ---- the one call skeleton ----
   Every family's call: the in-place protocol's check, the op hook, then
   either the family's kernel straight into r (or into self, in place) and
   its derivative recorded when an input carries history, or -- in place on
   a tensor with history -- the kernel out of place on a copy of self that
   keeps its history (autograd's in-place source), recorded, and committed
   into self. A family gives its operands (args), the tensor written in place
   (self), the tensors self's protocol checks it against (reads), and run:
   its kernel on the operands with every use of self replaced by the tensor
   given (the copy, or self itself), into out, recording when asked. The
   skeleton is inlined into each family's entry with run known, so the call
   costs what the family's own code did. */
typedef int (*run_fn)(const mt_device_kernels *k, mt_op op, const void *args, mt_tensor *out, mt_tensor *self,
                      int inplace, int record);

static inline __attribute__((always_inline)) int call_skeleton(const mt_device_kernels *k, mt_op op,
                                                               const void *args, run_fn run, mt_tensor *r,
                                                               mt_tensor *self, const mt_tensor *read1,
                                                               const mt_tensor *read2, int inplace, int has_grad) {
  int need = 0;
  if (inplace && (need = inplace_protocol(op, self, read1)) == 0 && read2) need = inplace_protocol(op, self, read2);
  if (need < 0) return -1;
  int rc;
  HOOK(op, 0, self, read1, read2);
  if (need) {                                     /* self = self:op(...), for autograd */
    mt_tensor src = {0}, t = {0};
    rc = ag.inplace_source(&src, self) || run(k, op, args, &t, &src, 0, 1);
    rc = inplace_commit(op, self, &t, &src, rc);
  } else {
    rc = run(k, op, args, inplace ? self : r, self, inplace, !inplace && has_grad);
  }
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* the operand t, or self's stand-in when t is self */
#define STANDIN(t, orig, self) ((t) == (orig) ? (self) : (t))

/* ---- conversions: the registry's `to` ---- */
int mt_call_to(mt_tensor *r, const mt_tensor *x, int dtype, int device, int index, const char *op) {
  HOOK(MT_OP_to, 0, x);
#undef CAST
#define CAST(call) call
#define OPC(name, kernel, E, ...) int rc = kernel;
  MT_CAST_OPS(OPC, _)      /* the entry's kernel column */
#undef OPC
  if (!rc && x->grad_meta) rc = ag.record_cast(r, x);
  HOOK(MT_OP_to, 1);
  return rc ? -1 : 0;
}

int mt_call_cast(mt_tensor *r, const mt_tensor *x, int dtype) {
  if (x->dtype == dtype) { mt_tensor_alias(r, x); return 0; }   /* nothing to convert: not an op */
  return mt_call_to(r, x, dtype, mt_device_of(x), mt_device_index_of(x), "to");
}

/* ---- unary ---- */
static int run_unary(const mt_device_kernels *k, mt_op op, const void *args, mt_tensor *out, mt_tensor *self,
                     int inplace, int record) {
  return k->unary(out, self, op, inplace, *(const int *)args) || (record && ag.record_unary(out, self, op));
}

int mt_call_unary(mt_tensor *r, mt_tensor *x, mt_op op, int inplace, int default_float) {
  if (__builtin_expect(!mt_op_is_pointwise(op), 0)) return wrong_family(op, "mt_call_unary");
  if (!inplace) {
    const mt_tensor *ac_in[1] = {x};
    AUTOCAST(op, ac_in, 1, mt_call_unary(r, (mt_tensor *)ac_in[0], op, 0, default_float))
  }
  const mt_device_kernels *k = kernels_for(op, x, NULL, NULL, SLOT(unary));
  if (!k) return -1;
  return call_skeleton(k, op, &default_float, run_unary, r, x, NULL, NULL, inplace, x->grad_meta != NULL);
}

/* ---- binary ---- */
typedef struct {
  const mt_operand *a, *b;
  double alpha;
  int default_float;
} binary_args;

static int run_binary(const mt_device_kernels *k, mt_op op, const void *args, mt_tensor *out, mt_tensor *self,
                      int inplace, int record) {
  const binary_args *c = args;
  mt_operand sa = *c->a, sb = *c->b;
  sa.t = self;
  sb.t = STANDIN(sb.t, c->a->t, self);            /* x:mul_(x) */
  return k->binary(out, &sa, &sb, op, c->alpha, inplace, c->default_float) ||
         (record && ag.record_binary(out, &sa, &sb, op, c->alpha));
}

int mt_call_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha, int inplace,
                   int default_float) {
  if (__builtin_expect(!mt_op_is_pointwise(op), 0)) return wrong_family(op, "mt_call_binary");
  if (!inplace) {
    const mt_tensor *ac_in[2] = {a->t, b->t};
    AUTOCAST(op, ac_in, 2, mt_call_binary(r, &(mt_operand){(mt_tensor *)ac_in[0], a->value, a->is_int},
                                          &(mt_operand){(mt_tensor *)ac_in[1], b->value, b->is_int}, op, alpha, 0,
                                          default_float))
  }
  const mt_device_kernels *k = kernels_for(op, a->t, b->t, NULL, SLOT(binary));
  if (!k) return -1;
  if (inplace && !a->t) return mt_fail("%s_: self must be a tensor", mt_op_names[op]);
  if (__builtin_expect(inplace && k != &device_kernels[device_of(a->t)], 0))   /* a CPU 0-dim self, GPU other */
    return mt_check_same_device(mt_op_names[op], b->t, a->t);
  const binary_args args = {a, b, alpha, default_float};
  return call_skeleton(k, op, &args, run_binary, r, (mt_tensor *)a->t, b->t, NULL, inplace,
                       (a->t && a->t->grad_meta) || (b->t && b->t->grad_meta));
}

int mt_run_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha, int inplace,
                  int default_float) {
  const mt_device_kernels *k = kernels_for(op, a->t, b->t, NULL, SLOT(binary));
  return k ? k->binary(r, a, b, op, alpha, inplace, default_float) : -1;
}

/* ---- reductions ---- */
int mt_call_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, int dtype, double param,
                   int default_float) {
  if (__builtin_expect(!mt_op_is_reduce(op), 0)) return wrong_family(op, "mt_call_reduce");
  if (dtype < 0) {
    const mt_tensor *ac_in[1] = {x};
    AUTOCAST(op, ac_in, 1, mt_call_reduce(r, ac_in[0], op, mask, keepdim, dtype, param, default_float))
  }
  const mt_device_kernels *k = kernels_for(op, x, NULL, NULL, SLOT(reduce));
  if (!k) return -1;
  HOOK(op, 0, x);
  int rc = k->reduce(r, x, op, mask, keepdim, dtype, param, default_float);
  if (!rc && x->grad_meta) rc = ag.record_reduce(r, x, op, mask, keepdim, param);
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* ---- ops along a dim ---- */
typedef struct {
  int dim, dtype;
} along_args;

/* in place (cumsum_), the scan into a temporary written back */
static int run_along(const mt_device_kernels *k, mt_op op, const void *args, mt_tensor *out, mt_tensor *self,
                     int inplace, int record) {
  const along_args *c = args;
  if (!inplace) return k->along(out, self, op, c->dim, c->dtype) || (record && ag.record_along(out, self, op, c->dim));
  mt_tensor t = {0};
  int rc = mt_check_writable(mt_op_names[op], self) || k->along(&t, self, op, c->dim, c->dtype) || mt_copy(self, &t);
  mt_tensor_release(&t);
  return rc ? -1 : 0;
}

int mt_call_along(mt_tensor *r, mt_tensor *x, mt_op op, int dim, int dtype, int inplace) {
  if (__builtin_expect(!mt_op_is_along(op), 0)) return wrong_family(op, "mt_call_along");
  if (!inplace && dtype < 0) {
    const mt_tensor *ac_in[1] = {x};
    AUTOCAST(op, ac_in, 1, mt_call_along(r, (mt_tensor *)ac_in[0], op, dim, dtype, 0))
  }
  const mt_device_kernels *k = kernels_for(op, x, NULL, NULL, SLOT(along));
  if (!k) return -1;
  const along_args args = {dim, dtype};
  return call_skeleton(k, op, &args, run_along, r, x, NULL, NULL, inplace, x->grad_meta != NULL);
}

/* ---- selections ---- */
int mt_call_select(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, mt_op op, int64_t k, int dim,
                   int keepdim, int flag, int64_t base) {
  if (__builtin_expect(!mt_op_is_select(op), 0)) return wrong_family(op, "mt_call_select");
  const mt_device_kernels *k_ = kernels_for(op, x, NULL, NULL, SLOT(select));
  if (!k_) return -1;
  HOOK(op, 0, x);
  int rc = k_->select(values, indices, x, op, k, dim, keepdim, flag);
  if (!rc && base && device_of(indices) == MT_CPU) {   /* fresh contiguous int64 */
    int64_t *p = (int64_t *)mt_data(indices), n = mt_numel(indices);
    for (int64_t i = 0; i < n; i++) p[i] += base;
  } else if (!rc && base) {                        /* on its device */
    mt_operand i = {indices, 0, 0}, b = {NULL, (double)base, 1};
    rc = mt_run_binary(indices, &i, &b, MT_OP_add, 1, 1, MT_FLOAT32);
  }
  if (!rc && x->grad_meta) rc = ag.record_select(values, indices, x, op, dim, base);
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* ---- products ---- */
int mt_call_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op) {
  if (__builtin_expect(!mt_op_is_product(op), 0)) return wrong_family(op, "mt_call_product");
  const mt_tensor *ac_in[2] = {a, b};
  AUTOCAST(op, ac_in, 2, mt_call_product(r, ac_in[0], ac_in[1], op))
  const mt_device_kernels *k = kernels_for(op, a, b, NULL, SLOT(product));
  if (!k) return -1;
  HOOK(op, 0, a, b);
  int rc = k->product(r, a, b, op);
  if (!rc && (a->grad_meta || b->grad_meta)) rc = ag.record_product(r, a, b, op);
  HOOK(op, 1);
  return rc ? -1 : 0;
}

typedef struct {
  const mt_tensor *input, *a, *b;
  double beta, alpha;
} add_product_args;

static int run_add_product(const mt_device_kernels *k, mt_op op, const void *args, mt_tensor *out, mt_tensor *self,
                           int inplace, int record) {
  const add_product_args *c = args;
  const mt_tensor *sa = STANDIN(c->a, c->input, self), *sb = STANDIN(c->b, c->input, self);   /* M:addmm_(M, M) */
  return k->add_product(out, self, sa, sb, op, c->beta, c->alpha, inplace) ||
         (record && ag.record_add_product(out, self, sa, sb, op, c->beta, c->alpha));
}

int mt_call_add_product(mt_tensor *r, mt_tensor *input, const mt_tensor *a, const mt_tensor *b, mt_op op,
                        double beta, double alpha, int inplace) {
  if (__builtin_expect(!mt_op_is_add_product(op), 0)) return wrong_family(op, "mt_call_add_product");
  if (!inplace) {
    const mt_tensor *ac_in[3] = {input, a, b};
    AUTOCAST(op, ac_in, 3, mt_call_add_product(r, (mt_tensor *)ac_in[0], ac_in[1], ac_in[2], op, beta, alpha, 0))
  }
  const mt_device_kernels *k = kernels_for(op, input, a, b, SLOT(add_product));
  if (!k) return -1;
  const add_product_args args = {input, a, b, beta, alpha};
  return call_skeleton(k, op, &args, run_add_product, r, input, a, b, inplace,
                       input->grad_meta || a->grad_meta || b->grad_meta);
}

/* ---- elementwise ops with parameters ---- */
int mt_call_param(mt_tensor *r, const mt_operand *in, mt_op op, const double *p, int inplace, int default_float);
/* the op again on autocast's casts t[] of the tensor operands */
static int param_again(mt_tensor *r, const mt_operand *in, const mt_tensor *const *t, mt_op op, const double *p,
                       int default_float) {
  mt_operand c[3] = {in[0], {0}, {0}};
  for (int i = 1; i < mt_op_infos[op].arity; i++) c[i] = in[i];
  for (int i = 0; i < mt_op_infos[op].arity; i++) if (c[i].t) c[i].t = (mt_tensor *)t[i];
  return mt_call_param(r, c, op, p, 0, default_float);
}
typedef struct {
  const mt_operand *in;
  const double *p;
  int arity, default_float;
} param_args;

static int run_param(const mt_device_kernels *k, mt_op op, const void *args, mt_tensor *out, mt_tensor *self,
                     int inplace, int record) {
  const param_args *c = args;
  mt_operand sin[3] = {{self, 0, 0}, {0}, {0}};
  for (int i = 1; i < c->arity; i++) {
    sin[i] = c->in[i];
    sin[i].t = STANDIN(sin[i].t, c->in[0].t, self);   /* x:clamp_(x, ...) */
  }
  return k->param(out, sin, op, c->p, inplace, c->default_float) || (record && ag.record_param(out, sin, op, c->p));
}

int mt_call_param(mt_tensor *r, const mt_operand *in, mt_op op, const double *p, int inplace, int default_float) {
  if (__builtin_expect(!mt_op_is_param(op), 0)) return wrong_family(op, "mt_call_param");
  int arity = mt_op_infos[op].arity;
  mt_tensor *self = (mt_tensor *)in[0].t;
  const mt_tensor *u = arity > 1 ? in[1].t : NULL, *v = arity > 2 ? in[2].t : NULL;
  if (!self) return mt_fail("%s: self must be a tensor", mt_op_names[op]);
  if (!inplace) {
    const mt_tensor *ac_in[3] = {self, u, v};
    AUTOCAST(op, ac_in, 3, param_again(r, in, ac_in, op, p, default_float))
  }
  const int inplace_only = mt_op_infos[op].inplace == 2;
  if (__builtin_expect(inplace_only && !inplace, 0))
    return mt_fail("%s: exists in place only (%s_)", mt_op_names[op], mt_op_names[op]);
  /* fill's value and copy's source may be on any device: the backends' copies read them there */
  const mt_device_kernels *k = kernels_for(op, self, inplace_only ? NULL : u, v, SLOT(param));
  if (!k) return -1;
  const param_args args = {in, p, arity, default_float};
  return call_skeleton(k, op, &args, run_param, r, self, u, v, inplace,
                       self->grad_meta || (u && u->grad_meta) || (v && v->grad_meta));
}

/* ---- index ops ---- */
int mt_call_index(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base) {
  if (__builtin_expect(!mt_op_is_index(op), 0)) return wrong_family(op, "mt_call_index");
  const mt_device_kernels *k = kernels_for(op, x, index, NULL, SLOT(index));
  if (!k) return -1;
  HOOK(op, 0, x, index);
  int rc = k->index(r, x, op, dim, index, base);
  if (!rc && x->grad_meta) rc = ag.record_index(r, x, op, dim, index, base);
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* ---- puts, masks and views: ops on self, with an index, a mask or a
   view's arguments, out of place or in place ---- */
typedef struct {
  mt_op op;
  int dim;
  const mt_tensor *where;          /* the index (puts) or the mask */
  const mt_tensor *src;            /* the source; a value's 0-dim tensor; NULL (masked_select, views) */
  double alpha;
  int64_t base;
  const mt_view_args *view;        /* a view's arguments */
} self_args;

static int self_kernel(const mt_device_kernels *k, mt_tensor *r, const mt_tensor *x, const self_args *a,
                       const mt_tensor *src, int inplace) {
  if (mt_op_is_view(a->op)) return k->view(r, x, a->op, a->view, inplace);
  return mt_op_is_put(a->op) ? k->put(r, x, a->op, a->dim, a->where, src, a->alpha, a->base, inplace)
                             : k->mask(r, x, a->op, a->where, src, inplace);
}

static int self_record(mt_tensor *r, const mt_tensor *x, const self_args *a, const mt_tensor *src) {
  if (mt_op_is_view(a->op)) return ag.record_view(r, x, a->op, a->view);
  return mt_op_is_put(a->op) ? ag.record_put(r, x, a->op, a->dim, a->where, src, a->alpha, a->base)
                             : ag.record_mask(r, x, a->op, a->where, src);
}

typedef struct {
  const self_args *a;
  const mt_tensor *x;
} on_self_args;

static int run_on_self(const mt_device_kernels *k, mt_op op, const void *args, mt_tensor *out, mt_tensor *self,
                       int inplace, int record) {
  (void)op;
  const on_self_args *c = args;
  const mt_tensor *s = STANDIN(c->a->src, c->x, self);
  return self_kernel(k, out, self, c->a, s, inplace) || (record && self_record(out, self, c->a, s));
}

static int call_on_self(mt_tensor *r, mt_tensor *x, const self_args *a, size_t slot, int inplace) {
  const mt_tensor *src = a->src;
  const mt_device_kernels *k = kernels_for(a->op, x, a->where, src && src->ndim ? src : NULL, slot);
  if (!k) return -1;
  const on_self_args args = {a, x};
  return call_skeleton(k, a->op, &args, run_on_self, r, x, src, NULL, inplace,
                       x->grad_meta || (src && src->grad_meta));
}

int mt_call_put(mt_tensor *r, mt_tensor *x, mt_op op, int dim, const mt_tensor *index, const mt_tensor *src,
                double alpha, int64_t base, int inplace) {
  if (__builtin_expect(!mt_op_is_put(op), 0)) return wrong_family(op, "mt_call_put");
  const self_args a = {op, dim, index, src, alpha, base, NULL};
  return call_on_self(r, x, &a, SLOT(put), inplace);
}

int mt_call_mask(mt_tensor *r, mt_tensor *x, mt_op op, const mt_tensor *mask, const mt_tensor *src, int inplace) {
  if (__builtin_expect(!mt_op_is_mask(op), 0)) return wrong_family(op, "mt_call_mask");
  const self_args a = {op, 0, mask, src, 1, 0, NULL};
  return call_on_self(r, x, &a, SLOT(mask), inplace);
}

/* ---- views ---- */
int mt_call_view(mt_tensor *r, mt_tensor *x, mt_op op, const mt_view_args *a, int inplace) {
  if (__builtin_expect(!mt_op_is_view(op), 0)) return wrong_family(op, "mt_call_view");
  const self_args s = {op, 0, NULL, NULL, 1, 0, a};
  return call_on_self(r, x, &s, SLOT(view), inplace);
}

/* ---- joins ---- */
/* autocast's casts of a join's list, and the join of them: 1 (r set), 0
   (nothing to cast), -1 */
static int join_autocast(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim) {
  const mt_tensor **t = malloc(sizeof *t * (size_t)n);
  mt_tensor *held = calloc((size_t)n, sizeof *held);
  if (!t || !held) { free(t); free(held); return mt_fail("%s: out of memory", mt_op_names[op]); }
  memcpy(t, ts, sizeof *t * (size_t)n);
  int cast = ac_cast_inputs(op, t, n, held);
  if (cast > 0) cast = mt_call_join(r, t, n, op, dim) ? -1 : 1;
  ac_drop(held, n);
  free(t);
  free(held);
  return cast;
}

int mt_call_join(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim) {
  if (__builtin_expect(!mt_op_is_join(op), 0)) return wrong_family(op, "mt_call_join");
  if (n < 1) return mt_fail("%s: expects a non-empty list of tensors", mt_op_names[op]);
  if (__builtin_expect(ac_on, 0) && mt_op_infos[op].autocast != MT_AC_NONE) {
    const int cast = join_autocast(r, ts, n, op, dim);
    if (cast) return cast < 0 ? -1 : 0;
  }
  const mt_device_kernels *k = kernels_for(op, ts[0], NULL, NULL, SLOT(join));   /* the kernel checks the rest */
  if (!k) return -1;
  HOOK(op, 0, ts[0], n > 1 ? ts[1] : NULL, n > 2 ? ts[2] : NULL);
  int rc = k->join(r, ts, n, op, dim), any = 0;
  for (int i = 0; i < n && !any; i++) any = ts[i]->grad_meta != NULL;
  if (!rc && any) rc = ag.record_join(r, ts, n, op, dim);
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* ---- nn kernels ---- */
static int nn_again(mt_tensor *r, mt_op op, const mt_nn_args *a, const mt_tensor *const *t) {
  mt_nn_args c = *a;
  c.x = t[0];
  c.w = t[1];
  c.b = t[2];
  return mt_call_nn(r, op, &c);
}
int mt_call_nn(mt_tensor *r, mt_op op, const mt_nn_args *a) {
  if (__builtin_expect(!mt_op_is_nn(op), 0)) return wrong_family(op, "mt_call_nn");
  const mt_tensor *ac_in[3] = {a->x, a->w, a->b};
  AUTOCAST(op, ac_in, 3, nn_again(r, op, a, ac_in))
  const mt_device_kernels *k = kernels_for(op, a->x, a->w, a->b, SLOT(nn));
  if (!k) return -1;
  HOOK(op, 0, a->x, a->w, a->b);
  int rc = k->nn(r, op, a);
  if (!rc && (a->x->grad_meta || (a->w && a->w->grad_meta) || (a->b && a->b->grad_meta))) rc = ag.record_nn(r, op, a);
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* ---- random numbers ---- */
int mt_call_random(mt_tensor *r, mt_op op, const mt_random_args *a) {
  if (__builtin_expect(!mt_op_is_random(op), 0)) return wrong_family(op, "mt_call_random");
  const char *name = mt_op_names[op];
  const int inplace = mt_op_infos[op].inplace == 2;      /* a sampler fills r */
  const mt_tensor *on = inplace ? r : a->t ? a->t : a->mean && a->mean->t ? a->mean->t : a->std ? a->std->t : NULL;
  const mt_device_kernels *k = kernels_for(op, on, NULL, NULL, SLOT(random));
  if (!k) return -1;
  int need = 0;
  if (inplace) {
    char base[32] = {0};                                 /* mt_check_writable appends the _ */
    const size_t len = strlen(name) - 1;
    memcpy(base, name, len < sizeof base - 1 ? len : sizeof base - 1);
    if (mt_check_writable(base, r)) return -1;
    if (r->grad_meta && (need = ag.inplace_needed(name, r, NULL)) < 0) return -1;
  }
  HOOK(op, 0, on);
  int rc = k->random(r, op, a);
  if (!rc && need) rc = ag.inplace_commit(r, NULL);      /* now a constant: no history */
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* ---- factories: the kernels make the tensor on a->device through its
   backend, so the family has no slot in a device's table ---- */
int mt_call_factory(mt_tensor *r, mt_op op, const mt_factory_args *a) {
  if (__builtin_expect(!mt_op_is_factory(op), 0)) return wrong_family(op, "mt_call_factory");
  HOOK(op, 0);
  int rc = mt_factory_op(r, op, a);
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* ---- optimizer steps: each update runs on its parameter's device
   (mt_register_optim), so the family has no slot in a device's table ---- */
int mt_call_optim(mt_op op, const mt_optim_args *a) {
  if (__builtin_expect(!mt_op_is_optim(op), 0)) return wrong_family(op, "mt_call_optim");
  HOOK(op, 0);
  int rc = mt_optim_op(op, a);
  HOOK(op, 1);
  return rc ? -1 : 0;
}

/* ---- round with decimals: a composition of registry ops ---- */
int mt_call_round_decimals(mt_tensor *r, mt_tensor *x, double decimals, int inplace, int default_float) {
  const char *op = inplace ? "round_" : "round";
  if (decimals != floor(decimals)) return mt_fail("%s: decimals must be an integer, got %f", op, decimals);
  if (!mt_dtype_is_float(x->dtype))
    return mt_fail("%s: decimals are not supported for %s tensors", op, mt_dtypes[x->dtype].name);
  int need = 0;
  if (inplace) {
    if (mt_check_writable("round", x)) return -1;
    if ((need = inplace_protocol(MT_OP_round, x, NULL)) < 0) return -1;
  }
  mt_tensor src = {0}, wide = {0}, scaled = {0}, rounded = {0}, back = {0}, out = {0};
  mt_operand scale = {NULL, pow(10, fabs(decimals)), 0}, in = {x, 0, 0};
  mt_op into = decimals > 0 ? MT_OP_mul : MT_OP_div, undo = decimals > 0 ? MT_OP_div : MT_OP_mul;
  int half = x->dtype == MT_FLOAT16 || x->dtype == MT_BFLOAT16, rc = 0;
  if (need) { rc = ag.inplace_source(&src, x); in.t = &src; }   /* x = x:round(...), for autograd */
  if (!rc && half) { rc = mt_call_cast(&wide, in.t, MT_FLOAT32); in.t = &wide; }
  if (!rc) rc = mt_call_binary(&scaled, &in, &scale, into, 1, 0, default_float);
  if (!rc) rc = mt_call_unary(&rounded, &scaled, MT_OP_round, 0, default_float);
  in.t = &rounded;
  if (!rc) rc = mt_call_binary(&back, &in, &scale, undo, 1, 0, default_float);
  mt_tensor *result = &back;
  if (!rc && half) { rc = mt_call_cast(&out, &back, x->dtype); result = &out; }
  if (!rc) {
    if (!inplace) { mt_tensor_move(r, result); r->grad_meta = result->grad_meta; result->grad_meta = NULL; }
    else rc = need ? ag.inplace_commit(x, result) : mt_copy(x, result);
  }
  drop(&out); drop(&back); drop(&rounded); drop(&scaled); drop(&wide); drop(&src);
  return rc ? -1 : 0;
}

/* ---- x[key] = v: a composition of the registry's in-place puts ---- */
/* -1, the error just set renamed as the user called it ("index assignment:
   ...", "isclose: ...") where a part of the composition named itself */
static int renamed_error(const char *name) {
  char msg[512];
  const char *m = mt_error(), *colon = strchr(m, ':');
  const size_t n = strlen(name);
  if (!colon || (!strncmp(m, name, n) && m[n] == ':')) return -1;
  snprintf(msg, sizeof msg, "%s", colon + 1);
  return mt_fail("%s:%s", name, msg);
}

/* t, or a copy of it on like's device (in held) */
static const mt_tensor *on_device_of(const mt_tensor *t, const mt_tensor *like, mt_tensor *held) {
  if (mt_same_device(t, like)) return t;
  return mt_to_copy(held, t, t->dtype, mt_device_of(like), mt_device_index_of(like), "index assignment") ? NULL : held;
}

int mt_call_index_put(mt_tensor *x, const mt_tensor *key, const mt_tensor *v, int64_t base) {
  const char *op = "index assignment";
  char b1[128], b2[128];
  mt_tensor flat = {0}, moved = {0}, mask = {0}, val = {0}, ex = {0}, src = {0};
  int64_t flat_base = base, shape[MT_MAX_DIMS];
  int lead = 1, nd = 0, rc = 0;
  const int by_mask = key->dtype == MT_BOOL || key->dtype == MT_UINT8;
  const mt_tensor *k = key;
  if (by_mask) {
    /* the mask over x's leading dims, widened with dims of size 1 to broadcast over the rest */
    rc = mt_index_check_mask(op, x, key);
    int64_t ms[MT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) ms[d] = d < key->ndim ? key->shape[d] : 1;
    if (!rc && !(k = on_device_of(key, x, &moved))) rc = -1;
    if (!rc) rc = mt_reshape(&mask, k, x->ndim, ms);
  }
  /* the indexed shape, where the value must broadcast: rows (or set elements) x the rest */
  if (!rc && !(by_mask && v->ndim == 0)) rc = mt_index_key(x, key, base, &flat, &flat_base, &lead, &nd, shape);
  if (!rc && !by_mask) {
    const mt_tensor *f = on_device_of(&flat, x, &moved);
    if (!f) rc = -1;
    else if (f == &moved) { mt_tensor_release(&flat); mt_tensor_move(&flat, &moved); }
  }
  /* the value in x's dtype, recorded; a 0-dim value on x's device too (the
     kernels read it where x is), and a number (0-dim, no history, on the
     CPU) converted as the kernels' scalar, out of the hook's sight */
  const mt_tensor *value = v;
  if (!rc && v->ndim == 0 && !v->grad_meta && mt_device_of(v) == MT_CPU) {
    if (v->dtype != x->dtype) { rc = mt_to_dtype(&val, v, x->dtype); value = &val; }
  } else if (!rc && v->ndim == 0 && !mt_same_device(v, x)) {
    rc = mt_call_to(&val, v, x->dtype, mt_device_of(x), mt_device_index_of(x), op);
    value = &val;
  } else if (!rc && v->dtype != x->dtype) {
    rc = mt_call_cast(&val, v, x->dtype);
    value = &val;
  }
  if (!rc && v->ndim > 0) {
    mt_view_args a;
    a.n = nd;
    a.m = 0;
    memcpy(a.v, shape, sizeof(int64_t) * (size_t)nd);
    if (mt_call_view(&ex, (mt_tensor *)value, MT_OP_expand, &a, 0))
      rc = mt_fail("%s: value of shape %s cannot broadcast to the indexed shape %s", op,
                   mt_shape_str(v, b1, sizeof b1), mt_dims_str(shape, nd, b2, sizeof b2));
    value = &ex;
    if (!rc && !by_mask) {     /* one slice of x per index: rows x x's dims past the first */
      a.n = x->ndim;
      a.v[0] = flat.shape[0];
      memcpy(a.v + 1, x->shape + 1, sizeof(int64_t) * (size_t)(x->ndim - 1));
      rc = mt_call_view(&src, &ex, MT_OP_reshape, &a, 0);
      value = &src;
    }
  }
  if (!rc) {
    if (by_mask) rc = mt_call_mask(x, x, v->ndim ? MT_OP_masked_scatter : MT_OP_masked_fill, &mask, value, 1);
    else rc = mt_call_put(x, x, v->ndim ? MT_OP_index_copy : MT_OP_index_fill, 0, &flat, value, 1, flat_base, 1);
  }
  drop(&src); drop(&ex); drop(&val); drop(&mask); drop(&moved); drop(&flat);
  return rc ? renamed_error(op) : 0;
}

/* ---- isclose, allclose, equal: compositions of the registry's ops, as
   PyTorch composes them (its profiler shows the parts too) ---- */
/* r (empty) = the binary op of a and b (b a tensor, or the number nb when NULL) */
static int binary_of(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, double nb, mt_op op, int default_float) {
  mt_operand oa = {(mt_tensor *)a, 0, 0}, ob = {(mt_tensor *)b, b ? 0 : nb, 0};
  return mt_call_binary(r, &oa, &ob, op, 1, 0, default_float);
}

/* *out = the value of the 0-dim bool t, read back from its device */
static int read_bool(int *out, const mt_tensor *t) {
  mt_tensor host = {0};
  const mt_tensor *h = t;
  if (mt_device_of(t) != MT_CPU) {
    if (mt_tensor_init(&host, MT_BOOL, 0, NULL) || mt_copy(&host, t)) { mt_tensor_release(&host); return -1; }
    h = &host;
  }
  *out = *(const bool *)mt_data(h);
  mt_tensor_release(&host);
  return 0;
}

int mt_call_isclose(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, double rtol, double atol, int equal_nan,
                    int default_float) {
  const char *op = "isclose";
  if (a->dtype != b->dtype)
    return mt_fail("%s: dtypes must match, got %s and %s", op, mt_dtypes[a->dtype].name, mt_dtypes[b->dtype].name);
  if (!(rtol >= 0) || !(atol >= 0)) return mt_fail("%s: rtol (%g) and atol (%g) must be non-negative", op, rtol, atol);
  mt_tensor close = {0}, t1 = {0}, t2 = {0}, t3 = {0}, ca = {0}, cb = {0};
  int rc = binary_of(&close, a, b, 0, MT_OP_eq, default_float);
  const int is_float = mt_dtype_is_float(a->dtype);
  if (!rc && equal_nan && is_float) {                  /* NaN beside NaN is close */
    rc = mt_call_unary(&t1, (mt_tensor *)a, MT_OP_isnan, 0, default_float) ||
         mt_call_unary(&t2, (mt_tensor *)b, MT_OP_isnan, 0, default_float) ||
         binary_of(&t3, &t1, &t2, 0, MT_OP_logical_and, default_float) ||
         mt_call_binary(&close, &(mt_operand){&close, 0, 0}, &(mt_operand){&t3, 0, 0}, MT_OP_logical_or, 1, 1,
                        default_float);
    drop(&t1); drop(&t2); drop(&t3);
  }
  if (!rc && (rtol > 0 || atol > 0) && a->dtype != MT_BOOL) {
    /* |a - b| <= atol + |rtol b|, finite, in a's dtype (integers in the default float dtype) */
    const mt_tensor *fa = a, *fb = b;
    if (!is_float) {
      rc = mt_call_cast(&ca, a, default_float) || mt_call_cast(&cb, b, default_float);
      fa = &ca;
      fb = &cb;
    }
    mt_tensor allowed = {0}, actual = {0};
    if (!rc) rc = binary_of(&t1, fb, NULL, rtol, MT_OP_mul, default_float) ||
                  mt_call_unary(&t2, &t1, MT_OP_abs, 0, default_float) ||
                  binary_of(&allowed, &t2, NULL, atol, MT_OP_add, default_float);
    drop(&t1); drop(&t2);
    if (!rc) rc = binary_of(&t1, fa, fb, 0, MT_OP_sub, default_float) ||
                  mt_call_unary(&actual, &t1, MT_OP_abs, 0, default_float) ||
                  mt_call_unary(&t2, &actual, MT_OP_isfinite, 0, default_float) ||
                  binary_of(&t3, &actual, &allowed, 0, MT_OP_le, default_float) ||
                  mt_call_binary(&t3, &(mt_operand){&t3, 0, 0}, &(mt_operand){&t2, 0, 0}, MT_OP_logical_and, 1, 1,
                                 default_float) ||
                  mt_call_binary(&close, &(mt_operand){&close, 0, 0}, &(mt_operand){&t3, 0, 0}, MT_OP_logical_or, 1,
                                 1, default_float);
    drop(&t1); drop(&t2); drop(&t3); drop(&allowed); drop(&actual); drop(&ca); drop(&cb);
  }
  if (rc) { drop(&close); return renamed_error(op); }
  mt_tensor_move(r, &close);
  return 0;
}

int mt_call_allclose(int *result, const mt_tensor *a, const mt_tensor *b, double rtol, double atol, int equal_nan,
                     int default_float) {
  mt_tensor close = {0}, all = {0};
  *result = 0;
  if (mt_call_isclose(&close, a, b, rtol, atol, equal_nan, default_float)) return -1;
  int rc = mt_call_reduce(&all, &close, MT_OP_all, MT_ALL_DIMS, 0, -1, 0, default_float) || read_bool(result, &all);
  drop(&close); drop(&all);
  return rc ? -1 : 0;
}

int mt_call_equal(int *result, const mt_tensor *a, const mt_tensor *b) {
  mt_tensor eq = {0}, all = {0};
  *result = 0;
  if (!mt_same_shape(a, b)) return mt_check_same_device("equal", a, b) ? -1 : 0;
  int rc = binary_of(&eq, a, b, 0, MT_OP_eq, MT_FLOAT32) ||
           mt_call_reduce(&all, &eq, MT_OP_all, MT_ALL_DIMS, 0, -1, 0, MT_FLOAT32) || read_bool(result, &all);
  drop(&eq); drop(&all);
  return rc ? renamed_error("equal") : 0;
}
