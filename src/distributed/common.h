/* common.h: what the backends of lib/distributed share (src/distributed/mpi.c,
   nccl.c): the wording of their messages, the reduction ops, and the
   agreement each collective starts with.

   Before a collective the ranks agree on what they call: every rank brings
   a signature (collective, op, root, dtype, shape) and compares them all, so
   that each raises the same error instead of one waiting forever in a
   collective the others left. A backend moves the signatures (MPI: a small
   all-reduce of the counts, or every rank's signature in debug mode; NCCL:
   in debug mode) and sig_compare words the first disagreement. */
#ifndef MT_DISTRIBUTED_COMMON_H
#define MT_DISTRIBUTED_COMMON_H

#include <lua.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../tensor/mt_tensor.h"

/* ---- messages ----
   say() words a message into out (MSG_LEN bytes) for rank r of w,
   "distributed.<op> (rank r of w): ...", and returns 1 */
#define MSG_LEN 1024

static inline int vsay(char *out, const char *op, int r, int w, const char *fmt, va_list ap) {
  int n = snprintf(out, MSG_LEN, "distributed.%s (rank %d of %d): ", op, r, w);
  if (n >= 0 && n < MSG_LEN) vsnprintf(out + n, MSG_LEN - (size_t)n, fmt, ap);
  return 1;
}

static inline int say(char *out, const char *op, int r, int w, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));
static inline int say(char *out, const char *op, int r, int w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(out, op, r, w, fmt, ap);
  va_end(ap);
  return 1;
}

/* counts[q] from the Lua array at index i (w integers >= 0) and their sum:
   0, or 1 with what is wrong worded into out (for op, rank r of w) */
static inline int counts_from(lua_State *L, int i, int w, const char *what, int64_t *counts, int64_t *sum,
                              const char *op, int r, char *out) {
  if (!lua_istable(L, i)) return say(out, op, r, w, "%s must be a list of %d counts", what, w);
  *sum = 0;
  for (int q = 0; q < w; q++) {
    lua_rawgeti(L, i, q + 1);
    int ok = 0;
    lua_Integer c = lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || c < 0) return say(out, op, r, w, "%s[%d] must be a count of elements >= 0", what, q + 1);
    counts[q] = c;
    if (__builtin_add_overflow(*sum, c, sum)) return say(out, op, r, w, "%s add up past 2^63", what);
  }
  return 0;
}

/* the sizes of a collective between one tensor and world blocks: BLOCKS_GATHER, out
   holds w blocks of in's size (all_gather); BLOCKS_SCATTER, in holds w blocks of out's
   size (reduce_scatter); BLOCKS_EVEN, out and in have the same size, a multiple of w
   (all_to_all). Both of one dtype. 0, or 1 with what is wrong worded into msg_out */
enum { BLOCKS_GATHER, BLOCKS_SCATTER, BLOCKS_EVEN };
static inline int blocks_check(const char *op, int r, int w, const mt_tensor *out, const mt_tensor *in, int kind,
                               char *msg_out) {
  char sa[128], sb[128];
  if (out->dtype != in->dtype)
    return say(msg_out, op, r, w, "the output is %s but the input %s (they must have the same dtype)",
               mt_dtypes[out->dtype].name, mt_dtypes[in->dtype].name);
  if (kind == BLOCKS_EVEN) {
    if (mt_numel(out) == mt_numel(in) && mt_numel(in) % w == 0) return 0;
    return say(msg_out, op, r, w, "the output (%s) and the input (%s) must have the same number of elements, a "
               "multiple of the world size (%d)", mt_shape_str(out, sa, sizeof sa), mt_shape_str(in, sb, sizeof sb), w);
  }
  const mt_tensor *whole = kind == BLOCKS_GATHER ? out : in, *block = kind == BLOCKS_GATHER ? in : out;
  int64_t n = mt_numel(block), total;
  if (mt_mul_size(op, n, w, &total)) return say(msg_out, op, r, w, "%s", mt_error());
  if (mt_numel(whole) == total) return 0;
  return say(msg_out, op, r, w, "the %s (%s, %lld elements) must hold world size (%d) x the %s's %lld elements (%s %s)",
             kind == BLOCKS_GATHER ? "output" : "input", mt_shape_str(whole, sa, sizeof sa), (long long)mt_numel(whole),
             w, kind == BLOCKS_GATHER ? "input" : "output", (long long)n, kind == BLOCKS_GATHER ? "input" : "output",
             mt_shape_str(block, sb, sizeof sb));
}

/* the reduction ops, in lib/distributed's names (avg is sum, then a division) */
static const char *const op_names[] = {"sum", "product", "min", "max", NULL};
enum { OP_SUM, OP_PRODUCT, OP_MIN, OP_MAX };

/* ---- the agreement ---- */
enum { COLL_ALL_REDUCE = 1, COLL_BROADCAST, COLL_REDUCE, COLL_ALL_GATHER, COLL_BARRIER, COLL_GATHER, COLL_SCATTER,
       COLL_REDUCE_SCATTER, COLL_ALL_TO_ALL, COLL_ALL_TO_ALLV, NCOLL };
static const char *const coll_names[] = {"?", "all_reduce", "broadcast", "reduce", "all_gather", "barrier", "gather",
                                         "scatter", "reduce_scatter", "all_to_all", "all_to_all (uneven)"};

/* what one rank brings: the collective, its reduction op or -1, its root or
   -1, the tensor's dtype and shape, and refused: this rank + 1 when its own
   arguments were refused (a bad list on the root, an object that does not
   serialize), so that the others raise too rather than wait in the
   collective until the timeout */
typedef struct {
  int coll, rop, root, dtype, ndim, refused;
  int64_t numel, shape[MT_MAX_DIMS];
} sig;

static inline void sig_fill(sig *s, int coll, int rop, int root, const mt_tensor *t, int refused_rank) {
  memset(s, 0, sizeof *s);
  s->coll = coll; s->rop = rop; s->root = root; s->dtype = t->dtype; s->ndim = t->ndim;
  s->numel = mt_numel(t);
  for (int i = 0; i < t->ndim; i++) s->shape[i] = t->shape[i];
  s->refused = refused_rank;
}

/* a signature as SIG_LEN integers: collective, op, root, dtype, ndim, the
   shape, refused */
#define SIG_LEN (6 + MT_MAX_DIMS)
static inline void sig_pack(const sig *s, int64_t *v) {
  memset(v, 0, SIG_LEN * sizeof *v);
  v[0] = s->coll; v[1] = s->rop; v[2] = s->root; v[3] = s->dtype; v[4] = s->ndim;
  for (int i = 0; i < s->ndim; i++) v[5 + i] = s->shape[i];
  v[SIG_LEN - 1] = s->refused;
}

/* returns 0 (agreed), 1 (a message in out) or 2 (this rank's own arguments
   were refused: lib/distributed raises its own message) */
static inline int refused_elsewhere(char *out, const char *op, int r, int w, const sig *s, int64_t who) {
  if (s->refused) return 2;
  return say(out, op, r, w, "rank %lld's arguments were refused on that rank (its error says why); every rank "
             "stops this %s", (long long)who, op);
}

/* all: the w ranks' packed signatures, in rank order; s: this rank's.
   0, or the first disagreement worded into out (1), or 2 as above */
static inline int sig_compare(const char *op, const sig *s, const int64_t *all, int r, int w, char *out) {
  for (int q = 0; q < w; q++)
    if (all[(size_t)q * SIG_LEN + SIG_LEN - 1]) return refused_elsewhere(out, op, r, w, s, q);
  for (int q = 0; q < w; q++) {
    const int64_t *o = all + (size_t)q * SIG_LEN;
    if (o[0] != all[0]) {
      const char *ca = all[0] >= 1 && all[0] < NCOLL ? coll_names[all[0]] : "?";
      const char *cb = o[0] >= 1 && o[0] < NCOLL ? coll_names[o[0]] : "?";
      return say(out, op, r, w, "rank 0 called %s but rank %d %s at the same point (every rank must call the "
                 "same collectives in the same order)", ca, q, cb);
    }
    if (o[1] != all[1]) {
      const char *oa = all[1] >= 0 && all[1] < 4 ? op_names[all[1]] : "?";
      const char *ob = o[1] >= 0 && o[1] < 4 ? op_names[o[1]] : "?";
      return say(out, op, r, w, "rank 0 reduces with op='%s' but rank %d with op='%s' (every rank must pass the "
                 "same op)", oa, q, ob);
    }
    if (o[2] != all[2]) {
      const char *what = s->coll == COLL_BROADCAST || s->coll == COLL_SCATTER ? "src" : "dst";
      return say(out, op, r, w, "rank 0 passes %s=%lld but rank %d %s=%lld (every rank must pass the same one)",
                 what, (long long)all[2], q, what, (long long)o[2]);
    }
    if (memcmp(o + 3, all + 3, (SIG_LEN - 3) * sizeof(int64_t))) {
      char a[128], b[128];
      mt_dims_str(all + 5, (int)all[4], a, sizeof a);
      mt_dims_str(o + 5, (int)o[4], b, sizeof b);
      const char *da = all[3] >= 0 && all[3] < MT_NDTYPES ? mt_dtypes[all[3]].name : "?";
      const char *db = o[3] >= 0 && o[3] < MT_NDTYPES ? mt_dtypes[o[3]].name : "?";
      return say(out, op, r, w, "rank 0 passes a tensor of shape %s (%s) but rank %d one of shape %s (%s) (every "
                 "rank must pass the same shape and dtype)", a, da, q, b, db);
    }
  }
  return 0;
}

#endif
