/* ag_engine.c: autograd metadata and node lifetime, grad mode, and the
   dependency-counted backward walk that accumulates into leaves. */
#include <stdlib.h>
#include <string.h>
#include "ag.h"
#include "../tensor/mt_alloc.h"

static _Thread_local int grad_disabled;

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

void mt_ag_node_release(mt_node *n) {
  if (!n || --n->refcount > 0) return;
  for (int i = 0; i < n->nedges; i++) mt_ag_node_release(n->next[i].node);
  for (int i = 0; i < n->nsaved; i++) drop_tensor(&n->saved[i].t);
  drop_tensor(&n->buffer);
  if (n->leaf) {
    if (n->leaf->accumulator == n) n->leaf->accumulator = NULL;
    mt_ag_meta_release(n->leaf);
  }
  free(n);
}

void mt_ag_meta_release(mt_ag_meta *m) {
  if (!m || --m->refcount > 0) return;
  mt_ag_node_release(m->grad_fn);
  mt_tensor_release(&m->grad);
  free(m);
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

void mt_ag_detach_inplace(mt_tensor *t) {
  mt_ag_meta *m = t->grad_meta;
  if (!m) return;
  mt_ag_node_release(m->grad_fn);
  m->grad_fn = NULL;
  m->requires_grad = 0;
}

void mt_ag_alias(mt_tensor *dst, const mt_tensor *src) {
  mt_tensor_alias(dst, src);
  dst->grad_meta = src->grad_meta;
  if (dst->grad_meta) ((mt_ag_meta *)dst->grad_meta)->refcount++;
}

int mt_ag_check_inplace(const char *op, const mt_tensor *t, const mt_tensor *other) {
  if (!mt_ag_grad_enabled()) return 0;
  if (mt_ag_requires_grad(t) && mt_ag_is_leaf(t))
    return mt_fail("%s: a leaf tensor that requires grad is being used in an in-place operation "
                   "(wrap it in torch.no_grad, or use the out-of-place form)", op);
  if (mt_ag_requires_grad(t) || (other && mt_ag_requires_grad(other)))
    return mt_fail("%s: in-place operations on tensors that require grad are not differentiable "
                   "yet; use the out-of-place form", op);
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

static int accumulate_backward(mt_node *n, const mt_tensor *grad_out, mt_tensor *grad_in);

/* The node a gradient for t flows into: its grad_fn, or its AccumulateGrad
   when t is a leaf that requires grad; NULL (new reference) otherwise. */
static mt_node *edge_of(const mt_tensor *t) {
  mt_ag_meta *m = t ? t->grad_meta : NULL;
  if (!m || !m->requires_grad) return NULL;
  if (m->grad_fn) { m->grad_fn->refcount++; return m->grad_fn; }
  if (m->accumulator) { m->accumulator->refcount++; return m->accumulator; }
  mt_node *acc = calloc(1, sizeof *acc);
  if (!acc) return NULL;
  acc->refcount = 1;
  acc->name = "AccumulateGrad";
  acc->backward = accumulate_backward;
  acc->leaf = m;
  m->refcount++;
  m->accumulator = acc;                        /* weak */
  return acc;
}

mt_node *mt_ag_new_node(const char *name, mt_backward_fn fn, int nedges, const mt_tensor *const *inputs) {
  mt_node *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->refcount = 1;
  n->name = name;
  n->backward = fn;
  n->nedges = nedges;
  n->scalar_side = -1;
  for (int i = 0; i < nedges; i++) {
    const mt_tensor *t = inputs[i];
    n->next[i].node = edge_of(t);
    if (t) {
      n->in_ndim[i] = t->ndim;
      memcpy(n->in_shape[i], t->shape, sizeof(int64_t) * (size_t)t->ndim);
      n->in_dtype[i] = t->dtype;
    }
  }
  return n;
}

void mt_ag_save(mt_node *n, const mt_tensor *t, int is_output) {
  mt_saved *s = &n->saved[n->nsaved++];
  /* an input keeps its history (double backward flows through it); the
     node's own output does not, or output and node would own each other */
  if (is_output) mt_tensor_alias(&s->t, t);
  else mt_ag_alias(&s->t, t);
  s->version = t->storage->version;
}

/* The saved tensor i, checked against in-place changes and release. */
int mt_ag_saved(mt_node *n, int i, const mt_tensor **out) {
  if (n->released)
    return mt_fail("Trying to backward through the graph a second time (or directly access saved "
                   "tensors after they have already been freed). Saved intermediate values of the "
                   "graph are freed when you call backward(). Specify retain_graph=true if you need "
                   "to backward through the graph a second time.");
  mt_saved *s = &n->saved[i];
  if (s->t.storage->version != s->version) {
    char b[128];
    return mt_fail("one of the variables needed for gradient computation has been modified by an "
                   "inplace operation: [%s %s], needed by %s, is at version %lld; expected version "
                   "%lld instead", mt_dtypes[s->t.dtype].name, mt_shape_str(&s->t, b, sizeof b), n->name,
                   (long long)s->t.storage->version, (long long)s->version);
  }
  *out = &s->t;
  return 0;
}

/* r gets n as its grad_fn (n's reference moves into r's metadata). */
int mt_ag_attach(mt_tensor *r, mt_node *n) {
  mt_ag_meta *m = mt_ag_meta_of(r);
  if (!m) { mt_ag_node_release(n); return mt_fail("autograd: out of memory"); }
  mt_ag_node_release(m->grad_fn);
  m->grad_fn = n;
  m->requires_grad = 1;
  return 0;
}

/* ---- accumulation into leaves ---- */
static int accumulate_backward(mt_node *n, const mt_tensor *grad_out, mt_tensor *grad_in) {
  (void)grad_in;
  mt_ag_meta *m = n->leaf;
  if (!m->grad.storage) {
    /* create_graph keeps the gradient's own graph; otherwise a private copy,
       so later in-place accumulation never writes into a shared tensor */
    if (mt_ag_grad_enabled()) { mt_ag_alias(&m->grad, grad_out); return 0; }
    return mt_clone(&m->grad, grad_out);
  }
  if (mt_ag_grad_enabled()) {                  /* create_graph: grad = grad + g, recorded */
    mt_tensor sum = {0};
    mt_operand a = {&m->grad, 0, 0}, b = {grad_out, 0, 0};
    if (mt_binary(&sum, &a, &b, MT_OP_add, 1, 0, MT_FLOAT32)) return -1;
    if (mt_ag_record_binary(&sum, &a, &b, MT_OP_add, 1)) { mt_tensor_release(&sum); return -1; }
    mt_ag_meta_release(m->grad.grad_meta);
    m->grad.grad_meta = NULL;
    mt_tensor_release(&m->grad);
    m->grad = sum;
    return 0;
  }
  mt_operand a = {&m->grad, 0, 0}, b = {grad_out, 0, 0};
  return mt_binary(&m->grad, &a, &b, MT_OP_add, 1, 1, MT_FLOAT32);
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

/* Every node reachable from root, each once; deps = incoming edges. */
static int collect(mt_node *root, node_list *all) {
  node_list stack = {0};
  int rc = push(&stack, root);
  root->visited = 1;
  root->deps = 0;
  while (rc == 0 && stack.n > 0) {
    mt_node *n = stack.items[--stack.n];
    if ((rc = push(all, n))) break;
    for (int i = 0; i < n->nedges; i++) {
      mt_node *next = n->next[i].node;
      if (!next) continue;
      if (!next->visited) {
        next->visited = 1;
        next->deps = 0;
        if ((rc = push(&stack, next))) break;
      }
      next->deps++;
    }
  }
  free(stack.items);
  return rc;
}

/* buffer += g (recorded when building a graph) */
static int add_to_buffer(mt_node *n, mt_tensor *g) {
  if (!n->buffer.storage) { n->buffer = *g; memset(g, 0, sizeof *g); return 0; }
  mt_tensor sum = {0};
  mt_operand a = {&n->buffer, 0, 0}, b = {g, 0, 0};
  if (mt_binary(&sum, &a, &b, MT_OP_add, 1, 0, MT_FLOAT32)) return -1;
  if (mt_ag_record_binary(&sum, &a, &b, MT_OP_add, 1)) { mt_tensor_release(&sum); return -1; }
  mt_ag_meta_release(n->buffer.grad_meta);
  n->buffer.grad_meta = NULL;
  mt_tensor_release(&n->buffer);
  n->buffer = sum;
  return 0;
}

static void release_saved(mt_node *n) {
  for (int i = 0; i < n->nsaved; i++) drop_tensor(&n->saved[i].t);
  n->nsaved = 0;
  n->released = 1;
}

int mt_ag_backward(mt_tensor *root, const mt_tensor *grad, int retain_graph, int create_graph) {
  mt_ag_meta *m = root->grad_meta;
  if (!m || !m->requires_grad)
    return mt_fail("backward: element 0 of tensors does not require grad and does not have a grad_fn");
  mt_tensor g = {0};
  if (grad) {
    if (!mt_same_shape(grad, root)) {
      char b1[128], b2[128];
      return mt_fail("backward: grad of shape %s does not match the output's shape %s",
                     mt_shape_str(grad, b1, sizeof b1), mt_shape_str(root, b2, sizeof b2));
    }
    if (create_graph) mt_ag_alias(&g, grad);
    else mt_tensor_alias(&g, grad);
  } else {
    if (mt_numel(root) != 1) {
      char b[128];
      return mt_fail("backward: grad can be implicitly created only for scalar outputs (output has shape %s)",
                     mt_shape_str(root, b, sizeof b));
    }
    if (mt_tensor_init(&g, root->dtype, root->ndim, root->shape)) return -1;
    mt_fill(&g, 1);
  }
  mt_node *start = m->grad_fn;
  int own_start = 0;
  if (!start) { start = edge_of(root); own_start = 1; }        /* a leaf: AccumulateGrad */
  int was_enabled = mt_ag_grad_enabled();
  mt_ag_set_grad_enabled(create_graph);
  node_list all = {0}, ready = {0};
  int rc = collect(start, &all);
  if (rc == 0) { add_to_buffer(start, &g); rc = push(&ready, start); }
  while (rc == 0 && ready.n > 0) {
    mt_node *n = ready.items[--ready.n];
    mt_tensor grad_in[MT_AG_MAX_EDGES];
    memset(grad_in, 0, sizeof grad_in);
    mt_tensor out = n->buffer;
    memset(&n->buffer, 0, sizeof n->buffer);
    rc = out.storage ? n->backward(n, &out, grad_in) : 0;
    drop_tensor(&out);
    if (rc == 0 && !retain_graph && n->leaf == NULL) release_saved(n);
    for (int i = 0; i < n->nedges; i++) {
      mt_node *next = n->next[i].node;
      if (rc == 0 && next && grad_in[i].storage) rc = add_to_buffer(next, &grad_in[i]);
      drop_tensor(&grad_in[i]);
      if (next && --next->deps == 0 && rc == 0) rc = push(&ready, next);
    }
  }
  for (int i = 0; i < all.n; i++) {                            /* reset scratch */
    all.items[i]->visited = 0;
    drop_tensor(&all.items[i]->buffer);
  }
  free(all.items);
  free(ready.items);
  drop_tensor(&g);
  if (own_start) mt_ag_node_release(start);
  mt_ag_set_grad_enabled(was_enabled);
  return rc;
}
