/* ag_engine.c: autograd metadata and node lifetime, grad mode, and the
   dependency-counted backward walk that accumulates into leaves. */
#include <stdlib.h>
#include <string.h>
#include "ag.h"
#include "../ops/dispatch.h"
#include "../ops/profiler.h"
#include "../tensor/mt_alloc.h"

static _Thread_local int grad_disabled;
static _Thread_local int anomaly;
static _Thread_local int tracing;
/* the walk under way accumulates into leaves plainly: a backward (not
   autograd.grad) without create_graph, tracing or anomaly checks, so that a
   derivative may add its result into a leaf's .grad itself (mt_ag_direct_grad) */
static _Thread_local int plain_walk;

struct mt_ag_ckpt {
  int64_t refcount;            /* its nodes, and the recording run until it leaves */
  int ref;                     /* the bindings' handle: the function to run again */
  mt_ag_ckpt *outer;           /* the checkpoint recording around this one */
  int recording;               /* its function's first run is under way */
  int recomputing;             /* running again: saves are copied into saved */
  int recomputed;              /* saved holds the second run's tensors */
  int failed;                  /* out of memory while copying one */
  int64_t nsaved;              /* tensors left out by the first run */
  int64_t nrecomputed, cap;
  mt_saved *saved;             /* the second run's, in order; moved into the nodes */
};
/* the checkpoint whose nodes are being recorded (or recomputed), or NULL */
static _Thread_local mt_ag_ckpt *ckpt_current;

void mt_ag_set_trace(int on) { tracing = on; }
int mt_ag_trace_enabled(void) { return tracing; }

int mt_ag_anomaly_enabled(void) { return anomaly; }
void mt_ag_set_anomaly_enabled(int enabled) { anomaly = enabled; }

/* Does t hold a NaN? (anomaly mode only: a plain element walk) */
static int has_nan(const mt_tensor *t) {
  if (!mt_dtype_is_float(t->dtype)) return 0;
  if (mt_device_of(t) != MT_CPU) {               /* read on the CPU: a copy of it */
    mt_tensor h = {0};
    int found = !mt_tensor_init(&h, t->dtype, t->ndim, t->shape) && !mt_copy(&h, t) && has_nan(&h);
    mt_tensor_release(&h);
    return found;
  }
  int64_t n = mt_numel(t), idx[MT_MAX_DIMS] = {0};
  for (int64_t k = 0; k < n; k++) {
    double v = mt_get_f64(t->dtype, mt_elem_ptr(t, idx));
    if (v != v) return 1;
    for (int d = t->ndim - 1; d >= 0; d--) { if (++idx[d] < t->shape[d]) break; idx[d] = 0; }
  }
  return 0;
}
static mt_ag_callbacks callbacks;

void mt_ag_set_callbacks(const mt_ag_callbacks *cb) { callbacks = *cb; }

static void unref(int ref) {
  if (ref && callbacks.unref) callbacks.unref(ref);
}

static void release_function(int ref) {
  if (ref && callbacks.release_function) callbacks.release_function(ref);
}

int mt_ag_grad_enabled(void) { return !grad_disabled; }
void mt_ag_set_grad_enabled(int enabled) { grad_disabled = !enabled; }

/* ---- metadata and nodes ---- */
static void drop_tensor(mt_tensor *t) {
  mt_ag_meta_release(t->grad_meta);
  t->grad_meta = NULL;
  mt_tensor_release(t);
}

mt_ag_meta *mt_ag_meta_of(mt_tensor *t) {
  if (!t->grad_meta) {
    mt_ag_meta *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->refcount = 1;
    t->grad_meta = m;
  }
  return t->grad_meta;
}

static void ckpt_drop_saved(mt_ag_ckpt *f) {
  for (int64_t k = 0; k < f->nrecomputed; k++) drop_tensor(&f->saved[k].t);
  f->nrecomputed = 0;
}

static void ckpt_release(mt_ag_ckpt *f) {
  if (!f || --f->refcount > 0) return;
  ckpt_drop_saved(f);
  free(f->saved);
  unref(f->ref);
  free(f);
}

/* ---- release ----
   Freeing a node or a tensor's metadata drops references to others (the
   inputs' nodes, the saved tensors' metadata), and those to more: freeing
   them by recursion took a C stack frame per node and overflowed on chains a
   few hundred thousand ops deep. What dies is queued on a per-thread list,
   linked through its own next_dying, and the outermost release frees it in
   a loop, so the stack stays flat whatever the graph's depth. */
static _Thread_local mt_node *dying_nodes;
static _Thread_local mt_ag_meta *dying_metas;
static _Thread_local int releasing;

static void drop_buffer(mt_node *n) {
  if (!n->buffer) return;
  drop_tensor(n->buffer);
  free(n->buffer);
  n->buffer = NULL;
}

static void drop_saved(mt_node *n) {
  for (int i = 0; i < n->nsaved; i++) drop_tensor(&n->saved[i].t);
  free(n->saved);
  n->saved = NULL;
  n->nsaved = 0;
}

static void free_node(mt_node *n) {
  for (int i = 0; i < n->nedges; i++) mt_ag_node_release(n->next[i].node);
  drop_saved(n);
  drop_buffer(n);
  mt_ag_meta_release(n->leaf);
  ckpt_release(n->ckpt);
  release_function(n->user_ref);
  free(n->where);
  free(n);
}

static void free_meta(mt_ag_meta *m) {
  unref(m->hook_ref);
  unref(m->post_hook_ref);
  mt_ag_node_release(m->grad_fn);
  drop_tensor(&m->grad);             /* a gradient with history (assigned, create_graph) holds its graph */
  free(m);
}

/* Frees what is queued, unless a release further up this thread's stack is
   already at it: one called from free_node itself, or from a Lua finalizer
   that release_function's callback let the collector run. */
static void free_dying(void) {
  if (releasing) return;
  releasing = 1;
  for (;;) {
    if (dying_nodes) {
      mt_node *n = dying_nodes;
      dying_nodes = n->next_dying;
      free_node(n);
    } else if (dying_metas) {
      mt_ag_meta *m = dying_metas;
      dying_metas = m->next_dying;
      free_meta(m);
    } else break;
  }
  releasing = 0;
}

/* Weak pointers to a dying node or metadata are cleared at once, not when
   the queue reaches it: nothing may find it again in between. */
void mt_ag_node_release(mt_node *n) {
  if (!n || --n->refcount > 0) return;
  if (n->leaf && n->leaf->accumulator == n) n->leaf->accumulator = NULL;
  n->next_dying = dying_nodes;
  dying_nodes = n;
  free_dying();
}

void mt_ag_meta_release(mt_ag_meta *m) {
  if (!m || --m->refcount > 0) return;
  if (m->grad_fn && m->grad_fn->owner == m) m->grad_fn->owner = NULL;
  m->next_dying = dying_metas;
  dying_metas = m;
  free_dying();
}

int mt_ag_set_requires_grad(mt_tensor *t, int requires_grad) {
  mt_ag_meta *m = t->grad_meta;
  if (m && m->grad_fn && !requires_grad)
    return mt_fail("requires_grad_: you can only change requires_grad flags of leaf variables "
                   "(use detach() to get a tensor without history)");
  if (requires_grad && !mt_dtype_is_float(t->dtype))
    return mt_fail("requires_grad_: only tensors of floating point dtype can require gradients (got %s)",
                   mt_dtypes[t->dtype].name);
  if (!m && !requires_grad) return 0;
  if (!(m = mt_ag_meta_of(t))) return mt_fail("requires_grad_: out of memory");
  m->requires_grad = requires_grad;
  return 0;
}

int mt_ag_detach_inplace(mt_tensor *t) {
  mt_ag_meta *m = t->grad_meta;
  if (!m) return 0;
  if (m->is_view) return mt_fail("detach_: Can't detach views in-place. Use detach() instead.");
  if (m->grad_fn && m->grad_fn->owner == m) m->grad_fn->owner = NULL;
  mt_ag_node_release(m->grad_fn);
  m->grad_fn = NULL;
  m->requires_grad = 0;
  return 0;
}

void mt_ag_alias(mt_tensor *dst, const mt_tensor *src) {
  mt_tensor_alias(dst, src);
  dst->grad_meta = src->grad_meta;
  if (dst->grad_meta) ((mt_ag_meta *)dst->grad_meta)->refcount++;
}

/* In grad mode, writing in place into a leaf that requires grad, or into a
   view of one, would change a parameter behind autograd's back (PyTorch's
   errors). */
static int refuse_leaf_write(const char *op, const mt_tensor *t) {
  const mt_ag_meta *m = t->grad_meta;
  if (!m || !m->requires_grad) return 0;
  if (!m->grad_fn)
    return mt_fail("%s: a leaf Variable that requires grad is being used in an in-place operation "
                   "(wrap it in torch.no_grad, or use the out-of-place form)", op);
  if (m->leaf_view)
    return mt_fail("%s: a view of a leaf Variable that requires grad is being used in an in-place "
                   "operation (wrap it in torch.no_grad, or use the out-of-place form)", op);
  return 0;
}

int mt_ag_lift_write(const char *op, const mt_tensor *t) {
  const mt_ag_meta *m = t->grad_meta;
  if (!m || !m->requires_grad || !callbacks.lift_leaf_write || !callbacks.lift_leaf_write(op)) return 0;
  if (!m->grad_fn || m->leaf_view) return 1;            /* a leaf, or a view of one */
  return mt_ag_user_grad(t) == 0;                       /* history through nn's leaves only */
}

static int lifted(const char *op, const mt_tensor *t) { return mt_ag_lift_write(op, t); }

int mt_ag_check_inplace(const char *op, const mt_tensor *t, const mt_tensor *other) {
  if (!mt_ag_grad_enabled()) return 0;
  if (lifted(op, t)) return 0;
  if (refuse_leaf_write(op, t)) return -1;
  if (mt_ag_requires_grad(t) || (other && mt_ag_requires_grad(other)))
    return mt_fail("%s: this in-place operation is not differentiable; use the out-of-place form", op);
  return 0;
}

int mt_ag_inplace_needed(const char *op, const mt_tensor *t, const mt_tensor *other) {
  if (!mt_ag_grad_enabled()) return 0;
  if (lifted(op, t)) return 0;
  if (refuse_leaf_write(op, t)) return -1;
  return mt_ag_requires_grad(t) || (other && mt_ag_requires_grad(other));
}

/* src gets metadata of its own holding t's history as it is now: the
   commit gives t's metadata a new grad_fn, which a node that saved src (x
   in x:mul_(y)) must not see, or a second derivative would run through the
   in-place op's own node. A leaf that requires grad (written in place only
   where that is allowed) keeps sharing its metadata, so that its gradient
   still reaches its .grad. */
int mt_ag_inplace_source(mt_tensor *src, const mt_tensor *t) {
  if (mt_clone(src, t)) return -1;
  mt_ag_meta *m = t->grad_meta;
  src->storage->ag_version = t->storage->ag_version;     /* stale exactly when t is */
  if (m && m->requires_grad && !m->grad_fn) {
    src->grad_meta = m;
    m->refcount++;
  } else if (m) {
    mt_ag_meta *sm = mt_ag_meta_of(src);
    if (!sm) { mt_tensor_release(src); return mt_fail("in-place: out of memory"); }
    sm->requires_grad = m->requires_grad;
    sm->grad_fn = m->grad_fn;
    if (sm->grad_fn) sm->grad_fn->refcount++;
    sm->ag_version = m->ag_version;
    sm->is_view = m->is_view;
    sm->leaf_view = m->leaf_view;
  }
  return 0;
}

int mt_ag_inplace_commit(mt_tensor *t, mt_tensor *r) {
  if (!r) r = t;                                 /* written with a constant: no history */
  if (!mt_same_shape(t, r)) {
    char b1[128], b2[128];
    return mt_fail("in-place: the result has shape %s but the tensor written has shape %s",
                   mt_shape_str(r, b1, sizeof b1), mt_shape_str(t, b2, sizeof b2));
  }
  if (r != t && mt_copy(t, r)) return -1;
  mt_ag_meta *rm = r->grad_meta;
  mt_node *n = r != t && rm && rm->requires_grad ? rm->grad_fn : NULL;
  mt_ag_meta *m = t->grad_meta;
  if (!n && !m) return 0;
  if (!(m = mt_ag_meta_of(t))) return mt_fail("in-place: out of memory");
  if (m->grad_fn && m->grad_fn->owner == m) m->grad_fn->owner = NULL;
  mt_ag_node_release(m->grad_fn);
  m->grad_fn = NULL;
  m->requires_grad = n != NULL;
  if (n) {
    n->refcount++;
    n->owner = m;
    m->grad_fn = n;
    /* a node that saved its result saves t instead, which now holds it (as
       PyTorch's in-place ops save self): r's memory goes, and a later change
       to t is caught by t's version */
    for (int i = 0; i < n->nsaved; i++) {
      mt_saved *s = &n->saved[i];
      if (!s->is_output || s->t.storage != r->storage) continue;
      drop_tensor(&s->t);
      mt_tensor_alias(&s->t, t);
      s->version = t->storage->version;
    }
  }
  m->ag_version = ++t->storage->ag_version;
  return 0;
}

int mt_ag_unsupported(const char *op, const mt_tensor *a, const mt_tensor *b) {
  if (!mt_ag_grad_enabled()) return 0;
  if ((a && mt_ag_requires_grad(a)) || (b && mt_ag_requires_grad(b)))
    return mt_fail("%s: no derivative yet for inputs that require grad (use detach() or torch.no_grad)", op);
  return 0;
}

int mt_ag_is_leaf(const mt_tensor *t) {
  const mt_ag_meta *m = t->grad_meta;
  return !m || !m->grad_fn;
}

/* Depth first over the history, each node once (an open-addressing set of
   the nodes seen, grown as needed). */
int mt_ag_user_grad(const mt_tensor *t) {
  const mt_ag_meta *m = t->grad_meta;
  if (!m || !m->requires_grad) return 0;
  if (!m->grad_fn) return !m->implicit;
  size_t cap = 64, nseen = 0, top = 0, stack_cap = 64;
  mt_node **seen = calloc(cap, sizeof *seen), **stack = malloc(stack_cap * sizeof *stack);
  int found = 0, rc = 0;
  if (!seen || !stack) { rc = -1; goto done; }
  stack[top++] = m->grad_fn;
  while (top > 0 && !found) {
    mt_node *n = stack[--top];
    if (n->leaf) {
      if (n->leaf->requires_grad && !n->leaf->implicit) found = 1;
      continue;
    }
    for (int i = 0; i < n->nedges; i++) {
      mt_node *c = n->next[i].node;
      if (!c) continue;
      size_t h = ((uintptr_t)c >> 4) & (cap - 1);
      while (seen[h] && seen[h] != c) h = (h + 1) & (cap - 1);
      if (seen[h]) continue;
      seen[h] = c;
      if (++nseen * 2 > cap) {                     /* grow: rehash into twice the room */
        size_t ncap = cap * 2;
        mt_node **ns = calloc(ncap, sizeof *ns);
        if (!ns) { rc = -1; goto done; }
        for (size_t k = 0; k < cap; k++) {
          if (!seen[k]) continue;
          size_t j = ((uintptr_t)seen[k] >> 4) & (ncap - 1);
          while (ns[j]) j = (j + 1) & (ncap - 1);
          ns[j] = seen[k];
        }
        free(seen);
        seen = ns;
        cap = ncap;
      }
      if (top == stack_cap) {
        mt_node **st = realloc(stack, stack_cap * 2 * sizeof *st);
        if (!st) { rc = -1; goto done; }
        stack = st;
        stack_cap *= 2;
      }
      stack[top++] = c;
    }
  }
  rc = found;
done:
  free(seen);
  free(stack);
  if (rc < 0) mt_fail("user_grad: out of memory");
  return rc;
}

static int accumulate_backward(mt_node *n, const mt_tensor *grad_out, mt_tensor *grad_in);

/* A node with nwords words of extra[] (zeroed, as the node). */
static mt_node *alloc_node(size_t nwords) {
  mt_node *n = calloc(1, sizeof *n + nwords * sizeof(int64_t));
  if (n) n->refcount = 1;
  return n;
}

/* The node a gradient for t flows into: its grad_fn, or its AccumulateGrad
   when t is a leaf that requires grad; NULL (new reference) otherwise. */
static mt_node *edge_of(const mt_tensor *t) {
  mt_ag_meta *m = t ? t->grad_meta : NULL;
  if (!m || !m->requires_grad) return NULL;
  if (m->grad_fn) { m->grad_fn->refcount++; return m->grad_fn; }
  if (m->accumulator) { m->accumulator->refcount++; return m->accumulator; }
  mt_node *acc = alloc_node((size_t)t->ndim);
  if (!acc) return NULL;
  acc->name = "AccumulateGrad";
  acc->backward = accumulate_backward;
  acc->leaf = m;
  acc->in_ndim[0] = t->ndim;                   /* the leaf's shape, for graph pictures */
  acc->in_shape[0] = acc->extra;
  memcpy(acc->in_shape[0], t->shape, sizeof(int64_t) * (size_t)t->ndim);
  acc->in_dtype[0] = t->dtype;
  m->refcount++;
  m->accumulator = acc;                        /* weak */
  return acc;
}

mt_node *mt_ag_new_node_extra(const char *name, mt_backward_fn fn, int nedges, const mt_tensor *const *inputs,
                              size_t nextra) {
  size_t nwords = nextra;
  for (int i = 0; i < nedges; i++) nwords += inputs[i] ? (size_t)inputs[i]->ndim : 0;
  mt_node *n = alloc_node(nwords);
  if (!n) return NULL;
  n->name = name;
  n->backward = fn;
  n->nedges = nedges;
  int64_t *shapes = n->extra + nextra;
  for (int i = 0; i < nedges; i++) {
    const mt_tensor *t = inputs[i];
    n->in_shape[i] = shapes;
    const mt_ag_meta *m = t ? t->grad_meta : NULL;
    n->next[i].node = edge_of(t);
    n->in_storage[i] = t ? t->storage : NULL;
    if (m && m->requires_grad && (!m->grad_fn || m->leaf_view)) n->leaf_inputs |= 1u << i;
    if (t && !n->stale_input && t->storage && t->storage->ag_version &&
        t->storage->ag_version != (t->grad_meta ? ((mt_ag_meta *)t->grad_meta)->ag_version : 0))
      n->stale_input = i + 1;
    if (t) {
      n->in_ndim[i] = t->ndim;
      memcpy(n->in_shape[i], t->shape, sizeof(int64_t) * (size_t)t->ndim);
      n->in_dtype[i] = t->dtype;
      shapes += t->ndim;
    }
  }
  return n;
}

mt_node *mt_ag_new_node(const char *name, mt_backward_fn fn, int nedges, const mt_tensor *const *inputs) {
  return mt_ag_new_node_extra(name, fn, nedges, inputs, 0);
}

/* an input keeps its history (double backward flows through it); the
   node's own output does not, or output and node would own each other */
static void save_into(mt_saved *s, const mt_tensor *t, int is_output) {
  if (is_output) mt_tensor_alias(&s->t, t);
  else mt_ag_alias(&s->t, t);
  s->version = t->storage->version;
  s->is_output = is_output;
}

/* A checkpoint running again keeps a copy of each tensor it saves. */
static void ckpt_keep(mt_ag_ckpt *f, const mt_tensor *t, int is_output) {
  if (f->nrecomputed == f->cap) {
    int64_t cap = f->cap ? f->cap * 2 : 16;
    mt_saved *saved = realloc(f->saved, sizeof *saved * (size_t)cap);
    if (!saved) { f->failed = 1; return; }
    f->saved = saved;
    f->cap = cap;
  }
  mt_saved *s = &f->saved[f->nrecomputed++];
  memset(s, 0, sizeof *s);
  save_into(s, t, is_output);
}

/* Most nodes save one or two tensors: the slots grow one at a time. */
void mt_ag_save(mt_node *n, const mt_tensor *t, int is_output) {
  if (n->failed) return;
  mt_saved *saved = realloc(n->saved, sizeof *saved * (size_t)(n->nsaved + 1));
  if (!saved) {
    n->failed = 1;
    mt_fail("%s: out of memory saving a tensor for backward", n->name);
    return;
  }
  n->saved = saved;
  mt_saved *s = &saved[n->nsaved++];
  memset(s, 0, sizeof *s);
  mt_ag_ckpt *f = ckpt_current;
  if (f && !f->recomputing) {                  /* left out: backward runs the function again */
    if (!n->ckpt) { n->ckpt = f; f->refcount++; }
    s->ckpt_index = f->nsaved++;
    s->t.dtype = t->dtype;                     /* no storage: only the geometry, to check */
    s->t.ndim = t->ndim;
    memcpy(s->t.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    return;
  }
  save_into(s, t, is_output);
  if (f) ckpt_keep(f, t, is_output);
}

int mt_ag_checkpoint_enter(int ref) {
  mt_ag_ckpt *f = calloc(1, sizeof *f);
  if (!f) { unref(ref); return mt_fail("checkpoint: out of memory"); }
  f->refcount = 1;
  f->ref = ref;
  f->outer = ckpt_current;
  f->recording = 1;
  ckpt_current = f;
  return 0;
}

void mt_ag_checkpoint_leave(void) {
  mt_ag_ckpt *f = ckpt_current;
  if (!f) return;
  ckpt_current = f->outer;
  f->recording = 0;
  ckpt_release(f);
}

/* The checkpoint's function runs again (grad mode on, through the
   bindings); what it saves, in order, stands for what the first run left out. */
static int ckpt_recompute(mt_ag_ckpt *f) {
  if (f->recording || f->recomputing)          /* a backward inside the function itself */
    return mt_fail("torch.utils.checkpoint: a backward inside the checkpointed function reached the "
                   "nodes it records, which keep no saved tensors; differentiate outside the checkpoint");
  if (!callbacks.recompute) return mt_fail("checkpoint: nothing can run the function again");
  mt_ag_ckpt *was = ckpt_current;
  ckpt_current = f;
  f->recomputing = 1;
  int rc = callbacks.recompute(f->ref);
  f->recomputing = 0;
  ckpt_current = was;
  if (rc == 0 && f->failed) rc = mt_fail("checkpoint: out of memory");
  if (rc == 0 && f->nrecomputed != f->nsaved)
    rc = mt_fail("torch.utils.checkpoint: a different number of tensors was saved during the original "
                 "forward (%lld) and recomputation (%lld); the function must run the same ops each time",
                 (long long)f->nsaved, (long long)f->nrecomputed);
  if (rc) { ckpt_drop_saved(f); f->failed = 0; return -1; }
  f->recomputed = 1;
  return 0;
}

static int ckpt_fill(mt_ag_ckpt *f, mt_saved *s) {
  if (!f->recomputed && ckpt_recompute(f)) return -1;
  mt_saved *src = &f->saved[s->ckpt_index];
  if (!src->t.storage) return mt_fail("checkpoint: a recomputed tensor was already used");
  if (src->t.dtype != s->t.dtype || !mt_same_shape(&src->t, &s->t)) {
    char b1[128], b2[128];
    return mt_fail("torch.utils.checkpoint: recomputed tensor %lld has shape %s and dtype %s, but %s and %s "
                   "in the original forward; the function must run the same ops each time",
                   (long long)s->ckpt_index + 1, mt_shape_str(&src->t, b1, sizeof b1),
                   mt_dtypes[src->t.dtype].name, mt_shape_str(&s->t, b2, sizeof b2), mt_dtypes[s->t.dtype].name);
  }
  s->t = src->t;
  s->version = src->version;
  memset(&src->t, 0, sizeof src->t);
  return 0;
}

int mt_ag_check_version(const mt_tensor *t, int64_t version, const char *needed_by) {
  if (t->storage->version == version) return 0;
  char b[128];
  return mt_fail("one of the variables needed for gradient computation has been modified by an "
                 "inplace operation: [%s %s], needed by %s, is at version %lld; expected version "
                 "%lld instead", mt_dtypes[t->dtype].name, mt_shape_str(t, b, sizeof b), needed_by,
                 (long long)t->storage->version, (long long)version);
}

/* The saved tensor i, checked against in-place changes and release. */
int mt_ag_saved(mt_node *n, int i, const mt_tensor **out) {
  if (n->released) return mt_fail("%s", MT_AG_FREED_MSG);
  mt_saved *s = &n->saved[i];
  if (!s->t.storage && n->ckpt && ckpt_fill(n->ckpt, s)) return -1;
  if (mt_ag_check_version(&s->t, s->version, n->name)) return -1;
  *out = &s->t;
  return 0;
}

/* The saved output i of n, for a derivative written from the op's result. */
int mt_ag_saved_result(mt_node *n, int i, mt_tensor *out) {
  const mt_tensor *s;
  if (mt_ag_saved(n, i, &s)) return -1;
  return mt_ag_output_of(n, s, out);
}

int mt_ag_output_of(mt_node *n, const mt_tensor *t, mt_tensor *out) {
  mt_tensor_alias(out, t);
  if (!mt_ag_grad_enabled()) return 0;
  mt_ag_meta *m = mt_ag_meta_of(out);
  if (!m) { mt_tensor_release(out); return mt_fail("%s: out of memory", n->name); }
  m->requires_grad = 1;
  m->grad_fn = n;
  n->refcount++;
  m->ag_version = out->storage->ag_version;
  return 0;
}

/* r gets n as its grad_fn (n's reference moves into r's metadata). */
int mt_ag_attach(mt_tensor *r, mt_node *n) {
  if (n->failed) { mt_ag_node_release(n); return -1; }     /* mt_ag_save set the error */
  mt_ag_meta *m = mt_ag_meta_of(r);
  if (!m) { mt_ag_node_release(n); return mt_fail("autograd: out of memory"); }
  if (m->grad_fn && m->grad_fn->owner == m) m->grad_fn->owner = NULL;
  mt_ag_node_release(m->grad_fn);
  m->grad_fn = n;
  n->owner = m;
  m->requires_grad = 1;
  m->ag_version = r->storage->ag_version;
  m->is_view = m->leaf_view = 0;
  for (int i = 0; i < n->nedges; i++)
    if (n->in_storage[i] && n->in_storage[i] == r->storage) {
      m->is_view = 1;
      if (n->leaf_inputs >> i & 1) m->leaf_view = 1;
    }
  memset(n->in_storage, 0, sizeof n->in_storage);     /* no pointer outlives the recording */
  if (anomaly && !n->where && callbacks.where) n->where = callbacks.where();
  return 0;
}

void mt_ag_retain_grad(mt_tensor *t) {
  mt_ag_meta *m = t->grad_meta;
  if (m && m->grad_fn) m->retains_grad = 1;            /* leaves keep theirs anyway */
}

/* ---- accumulation into leaves (and retained non-leaves) ---- */
static int accumulate_into(mt_ag_meta *m, const mt_tensor *grad_out);

static int accumulate_backward(mt_node *n, const mt_tensor *grad_out, mt_tensor *grad_in) {
  (void)grad_in;
  if (accumulate_into(n->leaf, grad_out)) return -1;
  if (n->leaf->post_hook_ref && callbacks.run_post_hooks) return callbacks.run_post_hooks(n->leaf->post_hook_ref);
  return 0;
}

mt_tensor *mt_ag_direct_grad(const mt_node *n, int i, int *transposed) {
  if (!plain_walk || i >= n->nedges) return NULL;
  mt_node *next = n->next[i].node;
  *transposed = 0;
  if (next && mt_ag_is_transpose2d(next)) {
    const mt_ag_meta *view = next->owner;      /* the transpose: its hooks and retain_grad see the whole gradient */
    if (view && (view->hook_ref || view->retains_grad)) return NULL;
    next = next->next[0].node;
    *transposed = 1;
  }
  if (!next || next->backward != accumulate_backward) return NULL;
  mt_ag_meta *m = next->leaf;
  if (!m->grad.storage || m->hook_ref || m->post_hook_ref || mt_ag_requires_grad(&m->grad)) return NULL;
  return &m->grad;
}

/* Whether g is the only tensor on a storage it fills exactly (densely, from
   its start): then .grad can take that storage instead of a copy, as
   PyTorch steals an unshared gradient; later accumulation in place touches
   nothing anyone else sees. */
static int gradient_unshared(const mt_tensor *g) {
  return g->storage->refcount == 1 && g->offset == 0 && mt_is_contiguous(g) &&
         g->storage->nbytes == (size_t)mt_numel(g) * mt_dtypes[g->dtype].size;
}

static int accumulate_into(mt_ag_meta *m, const mt_tensor *grad_out) {
  if (!m->grad.storage) {
    /* create_graph keeps the gradient's own graph; otherwise a private copy,
       so later in-place accumulation never writes into a shared tensor */
    if (mt_ag_grad_enabled()) { mt_ag_alias(&m->grad, grad_out); return 0; }
    if (gradient_unshared(grad_out)) { mt_tensor_alias(&m->grad, grad_out); return 0; }
    return mt_clone(&m->grad, grad_out);
  }
  if (mt_ag_grad_enabled()) {                  /* create_graph: grad = grad + g, recorded */
    mt_tensor sum = {0};
    mt_operand a = {&m->grad, 0, 0}, b = {grad_out, 0, 0};
    if (mt_call_binary(&sum, &a, &b, MT_OP_add, 1, 0, MT_FLOAT32)) { drop_tensor(&sum); return -1; }
    mt_ag_meta_release(m->grad.grad_meta);
    m->grad.grad_meta = NULL;
    mt_tensor_release(&m->grad);
    m->grad = sum;
    return 0;
  }
  mt_operand a = {&m->grad, 0, 0}, b = {grad_out, 0, 0};
  return mt_run_binary(&m->grad, &a, &b, MT_OP_add, 1, 1, MT_FLOAT32);
}

/* ---- the walk ---- */
typedef struct { mt_node **items; int n, cap; } node_list;

static int push(node_list *l, mt_node *n) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 64;
    mt_node **items = realloc(l->items, sizeof *items * (size_t)cap);
    if (!items) return mt_fail("backward: out of memory");
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = n;
  return 0;
}

/* Every node reachable from root not seen yet, each once, appended to all
   after the nodes below it (depth-first post-order); deps counts the
   incoming edges (several roots share one count). */
static int collect(mt_node *root, node_list *all) {
  if (root->visited) return 0;
  node_list stack = {0};
  int rc = push(&stack, root);
  root->visited = 1;
  root->deps = 0;
  root->cursor = 0;
  while (rc == 0 && stack.n > 0) {
    mt_node *n = stack.items[stack.n - 1];
    if (n->cursor == n->nedges) {
      stack.n--;
      rc = push(all, n);
      continue;
    }
    mt_node *next = n->next[n->cursor++].node;
    if (!next) continue;
    if (!next->visited) {
      next->visited = 1;
      next->deps = 0;
      next->cursor = 0;
      rc = push(&stack, next);
    }
    next->deps++;
  }
  free(stack.items);
  return rc;
}

/* buffer += g (g is consumed; the sum is recorded when building a graph) */
static int add_to_buffer(mt_node *n, mt_tensor *g) {
  if (!n->buffer) {
    if (!(n->buffer = malloc(sizeof *n->buffer))) return mt_fail("backward: out of memory");
    *n->buffer = *g;
    memset(g, 0, sizeof *g);
    return 0;
  }
  mt_tensor sum = {0};
  mt_operand a = {n->buffer, 0, 0}, b = {g, 0, 0};
  if (mt_call_binary(&sum, &a, &b, MT_OP_add, 1, 0, MT_FLOAT32)) { drop_tensor(&sum); return -1; }
  drop_tensor(n->buffer);
  *n->buffer = sum;
  return 0;
}

/* The gradient that reached n (moved out), or an empty tensor for none. */
static mt_tensor take_buffer(mt_node *n) {
  mt_tensor out = {0};
  if (n->buffer) {
    out = *n->buffer;
    free(n->buffer);
    n->buffer = NULL;
  }
  return out;
}

static void release_saved(mt_node *n) {
  drop_saved(n);
  release_function(n->user_ref);     /* a custom Function's ctx: its saved tensors */
  n->user_ref = 0;
  ckpt_release(n->ckpt);
  n->ckpt = NULL;
  n->released = 1;
}

/* The gradient a root starts with: grad (shape-checked) or ones for a
   one-element root. */
static int root_grad(const char *op, const mt_tensor *root, const mt_tensor *grad, int create_graph, mt_tensor *g) {
  mt_ag_meta *m = root->grad_meta;
  if (!m || !m->requires_grad)
    return mt_fail("%s: element 0 of tensors does not require grad and does not have a grad_fn", op);
  if (grad) {
    if (!mt_same_shape(grad, root)) {
      char b1[128], b2[128];
      return mt_fail("%s: grad of shape %s does not match the output's shape %s", op,
                     mt_shape_str(grad, b1, sizeof b1), mt_shape_str(root, b2, sizeof b2));
    }
    if (grad->dtype != root->dtype) {           /* cast, as PyTorch: a leaf's .grad keeps its dtype */
      if (mt_to_dtype(g, grad, root->dtype)) return -1;
      return create_graph ? mt_ag_record_cast(g, grad) : 0;
    }
    if (create_graph) mt_ag_alias(g, grad);
    else mt_tensor_alias(g, grad);
    return 0;
  }
  if (mt_numel(root) != 1) {
    char b[128];
    return mt_fail("%s: grad can be implicitly created only for scalar outputs (output has shape %s)", op,
                   mt_shape_str(root, b, sizeof b));
  }
  if (mt_tensor_init_like(g, root->dtype, root->ndim, root->shape, root)) return -1;
  mt_fill(g, 1);
  return 0;
}

/* Gradients delivered to targets[i] (results[i]) instead of accumulated:
   torch.autograd.grad. */
typedef struct { int n; mt_node **targets; mt_tensor *results; } capture;

static int is_target(const capture *cap, const mt_node *n) {
  for (int j = 0; j < cap->n; j++)
    if (cap->targets[j] == n) return 1;
  return 0;
}

/* autograd.grad runs only the nodes with a path to an input's node: the
   rest of the graph (below the inputs, or beside them) is neither run nor
   freed. all is in post-order, so a node's edges are decided before it. */
static void mark_needed(const node_list *all, const capture *cap) {
  for (int i = 0; i < all->n; i++) {
    mt_node *n = all->items[i];
    n->needed = 0;
    for (int e = 0; e < n->nedges && !n->needed; e++) {
      mt_node *next = n->next[e].node;
      n->needed = next && (next->needed || is_target(cap, next));
    }
  }
}

/* The dependency-counted walk from the roots' nodes (a reference each,
   given up here), each starting with grads[i] (consumed). */
static int walk_graph(int nroots, mt_node **starts, mt_tensor *grads, int retain_graph, int create_graph,
                      capture *cap);

/* backward runs in the dtypes forward chose: autocast is off meanwhile */
static int walk(int nroots, mt_node **starts, mt_tensor *grads, int retain_graph, int create_graph,
                capture *cap) {
  const int autocast = mt_autocast_pause();
  const int rc = walk_graph(nroots, starts, grads, retain_graph, create_graph, cap);
  mt_autocast_resume(autocast);
  return rc;
}

/* n's backward, an event of the profiler named after the node while one records */
static int run_node(mt_node *n, mt_tensor *out, mt_tensor *grad_in) {
  if (__builtin_expect(!mt_prof_on, 1)) return n->backward(n, out, grad_in);
  mt_prof_begin(mt_prof_name(n->name), MT_PROF_NODE, NULL, NULL, NULL);
  const int rc = n->backward(n, out, grad_in);
  mt_prof_end();
  return rc;
}

static int walk_graph(int nroots, mt_node **starts, mt_tensor *grads, int retain_graph, int create_graph,
                      capture *cap) {
  int was_enabled = mt_ag_grad_enabled();
  mt_ag_set_grad_enabled(create_graph);
  const int was_plain = plain_walk;
  plain_walk = !cap && !create_graph && !tracing && !anomaly;
  node_list all = {0}, ready = {0};
  int rc = 0;
  for (int i = 0; i < nroots && rc == 0; i++) rc = collect(starts[i], &all);
  if (rc == 0 && cap) mark_needed(&all, cap);
  for (int i = 0; i < nroots && rc == 0; i++) rc = add_to_buffer(starts[i], &grads[i]);
  for (int i = 0; i < nroots && rc == 0; i++)
    if (starts[i]->deps == 0 && !starts[i]->queued) { starts[i]->queued = 1; rc = push(&ready, starts[i]); }
  while (rc == 0 && ready.n > 0) {
    mt_node *n = ready.items[--ready.n];
    mt_tensor grad_in[MT_AG_MAX_EDGES];
    memset(grad_in, 0, sizeof grad_in);
    mt_tensor out = take_buffer(n);
    mt_ag_meta *owner = n->leaf ? n->leaf : n->owner;    /* the tensor this gradient is for */
    if (owner && owner->hook_ref && out.storage && callbacks.run_hooks)
      rc = callbacks.run_hooks(owner->hook_ref, &out);
    if (rc == 0 && !cap && owner && !n->leaf && owner->retains_grad && out.storage)
      rc = accumulate_into(owner, &out);
    int run = out.storage != NULL;
    for (int j = 0; cap && j < cap->n; j++)
      if (cap->targets[j] == n && out.storage) mt_ag_alias(&cap->results[j], &out);
    if (cap && !n->needed) run = 0;              /* only what leads to an input; .grad is left alone */
    if (rc == 0 && run && n->stale_input)
      rc = mt_fail("one of the variables needed for gradient computation has been modified by an "
                   "inplace operation: input %d of %s shares its storage with a tensor (a view or "
                   "its base) that an in-place op gave new autograd history; take views after the "
                   "in-place op, or assign through the base tensor (x[idx] = v)", n->stale_input, n->name);
    if (rc == 0 && run) rc = run_node(n, &out, grad_in);
    if (rc == 0 && run && tracing && callbacks.trace) rc = callbacks.trace(n, &out, grad_in);
    for (int i = 0; rc == 0 && anomaly && i < n->nedges; i++)
      if (grad_in[i].storage && has_nan(&grad_in[i]))
        rc = mt_fail("Function '%s' returned nan values in its %dth output (the gradient of its input %d)%s%s",
                     n->name, i, i + 1, n->where ? "; its forward op was called at " : "",
                     n->where ? n->where : "");
    drop_tensor(&out);
    if (rc == 0 && !retain_graph && n->leaf == NULL && (!cap || n->needed)) release_saved(n);
    for (int i = 0; i < n->nedges; i++) {
      mt_node *next = n->next[i].node;
      if (rc == 0 && next && grad_in[i].storage) rc = add_to_buffer(next, &grad_in[i]);
      drop_tensor(&grad_in[i]);
      if (next && --next->deps == 0 && rc == 0) rc = push(&ready, next);
    }
  }
  for (int i = 0; i < all.n; i++) {                            /* reset scratch */
    all.items[i]->visited = 0;
    all.items[i]->queued = 0;
    drop_buffer(all.items[i]);
  }
  free(all.items);
  free(ready.items);
  for (int i = 0; i < nroots; i++) { drop_tensor(&grads[i]); mt_ag_node_release(starts[i]); }
  mt_ag_set_grad_enabled(was_enabled);
  plain_walk = was_plain;
  return rc;
}

/* The node a root's gradient enters: its grad_fn, or the AccumulateGrad of
   a leaf (new reference). */
static mt_node *start_of(mt_tensor *root) {
  mt_ag_meta *m = root->grad_meta;
  if (m->grad_fn) { m->grad_fn->refcount++; return m->grad_fn; }
  return edge_of(root);
}

/* The roots' starting nodes and gradients; on failure nothing is held. */
static int seed_roots(const char *op, int n, mt_tensor **roots, mt_tensor **grads, int create_graph,
                      mt_node **starts, mt_tensor *g) {
  if (n < 1 || n > MT_AG_MAX_ROOTS) return mt_fail("%s: between 1 and %d tensors", op, MT_AG_MAX_ROOTS);
  memset(g, 0, sizeof *g * (size_t)n);
  for (int i = 0; i < n; i++) {
    if (root_grad(op, roots[i], grads ? grads[i] : NULL, create_graph, &g[i]) || !(starts[i] = start_of(roots[i]))) {
      for (int k = 0; k <= i; k++) drop_tensor(&g[k]);
      for (int k = 0; k < i; k++) mt_ag_node_release(starts[k]);
      return mt_error()[0] ? -1 : mt_fail("%s: out of memory", op);
    }
  }
  return 0;
}

int mt_ag_backward_many(int n, mt_tensor **roots, mt_tensor **grads, int retain_graph, int create_graph) {
  mt_node *starts[MT_AG_MAX_ROOTS];
  mt_tensor g[MT_AG_MAX_ROOTS];
  if (seed_roots("backward", n, roots, grads, create_graph, starts, g)) return -1;
  return walk(n, starts, g, retain_graph, create_graph, NULL);
}

int mt_ag_backward(mt_tensor *root, const mt_tensor *grad, int retain_graph, int create_graph) {
  mt_tensor *grads[1] = {(mt_tensor *)grad};
  return mt_ag_backward_many(1, &root, grad ? grads : NULL, retain_graph, create_graph);
}

int mt_ag_grad(int nout, mt_tensor **outputs, mt_tensor **grad_outputs, int nin, mt_tensor **inputs,
               mt_tensor *results, int retain_graph, int create_graph, int allow_unused) {
  if (nin < 1 || nin > MT_AG_MAX_ROOTS)
    return mt_fail("autograd.grad: between 1 and %d inputs", MT_AG_MAX_ROOTS);
  mt_node *starts[MT_AG_MAX_ROOTS], *targets[MT_AG_MAX_ROOTS];
  mt_tensor grads[MT_AG_MAX_ROOTS];
  for (int j = 0; j < nin; j++) {
    mt_ag_meta *m = inputs[j]->grad_meta;
    if (!m || !m->requires_grad)
      return mt_fail("autograd.grad: input %d does not require grad", j + 1);
  }
  if (seed_roots("autograd.grad", nout, outputs, grad_outputs, create_graph, starts, grads)) return -1;
  for (int j = 0; j < nin; j++) {              /* after seeding: an output may be a leaf input */
    mt_ag_meta *m = inputs[j]->grad_meta;
    targets[j] = m->grad_fn ? m->grad_fn : m->accumulator;
  }
  capture cap = {nin, targets, results};
  if (walk(nout, starts, grads, retain_graph, create_graph, &cap)) {
    for (int j = 0; j < nin; j++) drop_tensor(&results[j]);
    return -1;
  }
  for (int j = 0; j < nin; j++)
    if (!results[j].storage && !allow_unused) {
      for (int k = 0; k < nin; k++) drop_tensor(&results[k]);
      return mt_fail("autograd.grad: input %d appears to not have been used in the graph; set "
                     "allow_unused=true if this is the desired behavior", j + 1);
    }
  return 0;
}
