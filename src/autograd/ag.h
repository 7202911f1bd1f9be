/* ag.h: the autograd engine -- per-tensor metadata, graph nodes, grad mode,
   the backward walk, and the recording entry points the bindings call after
   an op has computed its result. */
#ifndef MT_AG_H
#define MT_AG_H

#include "../tensor/mt_tensor.h"
#include "../tensor/mt_ops.h"

/* Inputs of one op that can carry a gradient. */
#define MT_AG_MAX_EDGES 3
/* outputs and inputs of one torch.autograd.grad / backward call */
#define MT_AG_MAX_ROOTS 64

typedef struct mt_node mt_node;
typedef struct mt_ag_meta mt_ag_meta;

typedef struct { mt_node *node; } mt_edge;

typedef struct {
  mt_tensor t;             /* a view sharing the saved tensor's storage */
  int64_t version;         /* storage version when saved */
  int is_output;           /* the node's own result (saved without its history) */
  int64_t ckpt_index;      /* inside a checkpoint: t is empty until backward recomputes
                              the forward; then it is that run's ckpt_index-th save */
} mt_saved;

/* An activation checkpoint (torch.utils.checkpoint): the nodes recorded
   while its function ran save nothing; the first backward that needs one
   of their saved tensors runs the function again (ref: a Lua function, see
   mt_ag_callbacks.recompute) and takes the tensors that run saves, in the
   same order. */
typedef struct mt_ag_ckpt mt_ag_ckpt;

/* Computes the gradients of the inputs (grad_in[i] for edge i, left with a
   NULL storage when that input gets none) from grad_out. Written with
   recording ops, so a create_graph backward builds a graph of its own. */
typedef int (*mt_backward_fn)(mt_node *n, const mt_tensor *grad_out, mt_tensor *grad_in);

/* A node is allocated at the size it needs (a 10-million-op chain must fit
   in memory): the op's own parameters and its inputs' shapes follow it in
   extra[], saved tensors are allocated only for a node that saves, and the
   gradient buffer only while a backward runs. */
struct mt_node {
  int64_t refcount;
  const char *name;                  /* "MulBackward", "AccumulateGrad", ... */
  mt_backward_fn backward;
  int nedges;
  mt_edge next[MT_AG_MAX_EDGES];
  int nsaved;
  int failed;                        /* out of memory saving a tensor: mt_ag_attach refuses it */
  mt_saved *saved;                   /* nsaved of them (mt_ag_save), NULL when none */
  int released;                      /* saved tensors freed by a backward */
  int stale_input;                   /* i+1: input i shared storage with a tensor that an
                                        in-place op gave new history (see mt_ag_inplace_commit) */
  int op;                            /* the op, for nodes shared by a family */
  double scalar;                     /* alpha, a scalar operand, ... */
  double scalar2;                    /* a second one (beta of addmm) */
  unsigned char in_is_number;        /* elementwise binary: operand i (bit i) was a number */
  uint32_t mask;                     /* reduced dims */
  int keepdim;
  int dims[2];
  int in_ndim[MT_AG_MAX_EDGES];      /* input geometry, to shape gradients */
  int in_dtype[MT_AG_MAX_EDGES];
  int64_t *in_shape[MT_AG_MAX_EDGES];  /* in_ndim[i] sizes each, in extra[] */
  mt_ag_meta *leaf;                  /* AccumulateGrad: the leaf (strong ref) */
  mt_ag_meta *owner;                 /* weak: the tensor this node produced */
  int user_ref;                      /* the bindings' handle (a custom Function), 0 none */
  char *where;                       /* anomaly mode: where forward created it (malloc'd) */
  mt_node *next_dying;               /* the release queue, once its last reference went */
  mt_ag_ckpt *ckpt;                  /* the checkpoint its saved tensors come from, or NULL */
  /* recording scratch, read by mt_ag_attach: the inputs' storages (an output
     sharing one is a view) and which inputs are leaves that require grad or
     views of one (bit i) */
  const mt_storage *in_storage[MT_AG_MAX_EDGES];
  unsigned leaf_inputs;
  /* engine scratch, valid during one backward walk */
  int deps;
  int cursor;                        /* the next edge to visit when collecting */
  unsigned char visited, queued;
  unsigned char needed;              /* autograd.grad: leads to one of the inputs */
  mt_tensor *buffer;                 /* sum of incoming gradients, NULL until one arrives */
  /* the nextra words of mt_ag_new_node_extra (integer parameters, a custom
     Function's name, ...), then the inputs' shapes */
  int64_t extra[];
};

struct mt_ag_meta {
  int64_t refcount;
  int requires_grad;
  mt_node *grad_fn;                  /* NULL for a leaf */
  mt_node *accumulator;              /* weak: the leaf's AccumulateGrad, if alive */
  mt_tensor grad;                    /* storage NULL until a backward sets it */
  int retains_grad;                  /* a non-leaf keeping its gradient (retain_grad) */
  int hook_ref;                      /* the bindings' handle to register_hook hooks, 0 none */
  int post_hook_ref;                 /* ... to post-accumulate-grad hooks of a leaf, 0 none */
  int64_t ag_version;                /* the storage's ag_version when grad_fn was set */
  int is_view;                       /* recorded as a view of a tensor that requires grad */
  int leaf_view;                     /* ... of a leaf that requires grad: no in-place ops */
  int implicit;                      /* a leaf nn made require grad (a parameter, a Torch7 call's
                                        input), not the user: see mt_ag_user_grad */
  mt_ag_meta *next_dying;            /* the release queue, once its last reference went */
};

/* For the gradient of input i of node n during a backward walk: the .grad
   of the leaf it would reach, when the derivative may add its result into
   that tensor itself (in place, as AccumulateGrad would) and hand nothing on
   for that edge; *transposed says the leaf is reached through a 2-D
   transposing view (the gradient's transpose goes in). NULL when the
   gradient must take the graph: autograd.grad, create_graph, tracing or
   anomaly mode, a leaf without .grad yet, hooks on the leaf or the view, a
   view that retains its gradient. The caller checks shape, dtype, device. */
mt_tensor *mt_ag_direct_grad(const mt_node *n, int i, int *transposed);
/* Whether n is the node of a 2-D transpose (x:t(), x:transpose(1, 2)). */
int mt_ag_is_transpose2d(const mt_node *n);

/* What the engine calls back into the bindings for (Lua functions live
   there): run a tensor's hooks on the gradient arriving for it (they may
   replace *grad), and let go of a handle when its owner is freed. */
typedef struct {
  int (*run_hooks)(int ref, mt_tensor *grad);
  int (*run_post_hooks)(int ref);              /* after a leaf's .grad was accumulated */
  void (*unref)(int ref);
  /* tracing (mt_ag_set_trace): after node n ran, with the gradient it got
     and the ones it passes on (grad_in[i] has a NULL storage for none) */
  int (*trace)(mt_node *n, const mt_tensor *grad_out, const mt_tensor *grad_in);
  /* anomaly mode: a malloc'd description of where the running program
     created node n (file:line), or NULL */
  char *(*where)(void);
  /* a checkpoint's function run again, to save its tensors (mt_ag_ckpt) */
  int (*recompute)(int ref);
  /* a custom Function's node lets go of its handle (its ctx's saved tensors
     are freed) */
  void (*release_function)(int ref);
  /* a write in place into a tensor that requires grad (mt_ag_lift_write):
     1 lets it happen as under no_grad (the Torch7 dialect, for the user's
     code), 0 keeps autograd's rules; called with grad mode on only */
  int (*lift_leaf_write)(const char *op);
} mt_ag_callbacks;
/* Backward walks call callbacks.trace for every node they run while on. */
void mt_ag_set_trace(int on);
int mt_ag_trace_enabled(void);
void mt_ag_set_callbacks(const mt_ag_callbacks *cb);

/* ---- grad mode (thread-local) ---- */
int mt_ag_grad_enabled(void);
void mt_ag_set_grad_enabled(int enabled);

/* Anomaly mode: backward checks every gradient a node returns for NaN and
   names the node (the forward op) that produced it. */
int mt_ag_anomaly_enabled(void);
void mt_ag_set_anomaly_enabled(int enabled);

/* ---- metadata ---- */
static inline int mt_ag_requires_grad(const mt_tensor *t) {
  const mt_ag_meta *m = t->grad_meta;
  return m && m->requires_grad;
}
mt_ag_meta *mt_ag_meta_of(mt_tensor *t);            /* creates it when missing */
void mt_ag_meta_release(mt_ag_meta *m);
void mt_ag_node_release(mt_node *n);
int mt_ag_set_requires_grad(mt_tensor *t, int requires_grad);
/* t becomes a leaf with no history (detach_); refused for views */
int mt_ag_detach_inplace(mt_tensor *t);
int mt_ag_is_leaf(const mt_tensor *t);
/* 1 when t requires grad through a leaf that is not implicit (one the user
   asked gradients of): t itself, or a leaf its history reaches; 0 when only
   implicit leaves (nn's parameters and inputs) or none; -1 out of memory. */
int mt_ag_user_grad(const mt_tensor *t);
/* Does a write in place into t (or a resize or set_ of t) run as under
   no_grad? When callbacks.lift_leaf_write(op) says so (the Torch7 dialect,
   the user's code) and t requires grad as a leaf, a view of a leaf, or
   through nn's implicit leaves only (mt_ag_user_grad 0: a module's output):
   Torch7 had no autograd, and its code writes such tensors as any other. */
int mt_ag_lift_write(const char *op, const mt_tensor *t);
/* dst views src and shares its autograd metadata (same history). */
void mt_ag_alias(mt_tensor *dst, const mt_tensor *src);

/* PyTorch's error for saved tensors used after a backward freed them */
#define MT_AG_FREED_MSG "Trying to backward through the graph a second time (or directly access saved " \
  "tensors after they have already been freed). Saved intermediate values of the graph are freed when " \
  "you call backward() or autograd.grad(). Specify retain_graph=true if you need to backward through " \
  "the graph a second time or if you need to access saved tensors after calling backward."

/* ---- for the derivative definitions (ag_ops.c) ---- */
mt_node *mt_ag_new_node(const char *name, mt_backward_fn fn, int nedges, const mt_tensor *const *inputs);
/* ... with nextra words of n->extra for the op's own parameters (zeroed) */
mt_node *mt_ag_new_node_extra(const char *name, mt_backward_fn fn, int nedges, const mt_tensor *const *inputs,
                              size_t nextra);
/* Saves t for n's backward. Out of memory, it marks n failed (error set),
   and mt_ag_attach then refuses n: every node goes there after its saves. */
void mt_ag_save(mt_node *n, const mt_tensor *t, int is_output);
int mt_ag_saved(mt_node *n, int i, const mt_tensor **out);
/* PyTorch's error when t's storage is no longer at the version it had when
   saved for node needed_by (an in-place op changed it since); 0 when it is.
   Built-in nodes' saved tensors and custom Functions' (ctx.saved_tensors) alike. */
int mt_ag_check_version(const mt_tensor *t, int64_t version, const char *needed_by);
/* saved output i as the op's result: mt_ag_output_of(n, saved i) */
int mt_ag_saved_result(mt_node *n, int i, mt_tensor *out);
/* *out views t, n's result saved without history (or the two would own each
   other). In grad mode (a create_graph backward) it carries n as its
   grad_fn, as the result itself did, so the derivative's own derivative
   flows back through n: PyTorch unpacks a saved output the same way. Out of
   grad mode it has no history. The caller drops *out. */
int mt_ag_output_of(mt_node *n, const mt_tensor *t, mt_tensor *out);
int mt_ag_attach(mt_tensor *r, mt_node *n);

/* ---- recording: call after the op computed r from its inputs ---- */
int mt_ag_record_unary(mt_tensor *r, const mt_tensor *x, mt_op op);
int mt_ag_record_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha);
/* an elementwise op with parameters (the registry's MT_PARAM_OPS): the
   operands in[0 .. arity-1], the parameters p[0], p[1] */
int mt_ag_record_param(mt_tensor *r, const mt_operand *in, mt_op op, const double *p);
int mt_ag_record_view(mt_tensor *r, const mt_tensor *x);       /* view, reshape, flatten ... */
int mt_ag_record_expand(mt_tensor *r, const mt_tensor *x);     /* broadcast views */
int mt_ag_record_transpose(mt_tensor *r, const mt_tensor *x, int d0, int d1);
int mt_ag_record_cast(mt_tensor *r, const mt_tensor *x);

/* In-place ops under autograd. For autograd, t:op_(y) is t = t:op(y): the
   op runs out of place on a private copy of t's value that carries t's
   history, and the result is written back into t, which takes the result's
   history. Other tensors sharing t's storage (its views, its base) keep
   their old history, which no longer matches their values: the storage's
   ag_version marks them stale, and a backward through a node that took one
   of them as input raises instead of returning a wrong gradient.

   mt_ag_inplace_needed: 1 when the in-place op on t (reading other, may be
   NULL) must go through that path (grad mode, and t or other requires
   grad), 0 when it can write directly, -1 (error set) when it must refuse:
   a leaf that requires grad, as in PyTorch. */
int mt_ag_inplace_needed(const char *op, const mt_tensor *t, const mt_tensor *other);
/* src becomes a private copy of t's value with t's history (the op's input). */
int mt_ag_inplace_source(mt_tensor *src, const mt_tensor *t);
/* Writes r (t's shape) into t and moves r's history onto t; r NULL: t was
   just overwritten in place by a constant (fill_, random) and drops its history. */
int mt_ag_inplace_commit(mt_tensor *t, mt_tensor *r);
/* The old refusal, for in-place writes that have no out-of-place form. */
int mt_ag_check_inplace(const char *op, const mt_tensor *t, const mt_tensor *other);

/* Ops without a derivative yet: an error (never a silently missing
   gradient) when an input requires grad in grad mode. */
int mt_ag_unsupported(const char *op, const mt_tensor *a, const mt_tensor *b);

/* x:retain_grad(): a non-leaf keeps the gradient it receives in .grad. */
void mt_ag_retain_grad(mt_tensor *t);

/* ---- activation checkpointing ----
   mt_ag_checkpoint_enter(ref): the nodes recorded from now until the
   matching leave belong to a new checkpoint, whose function to run again is
   the bindings' handle ref (owned by the checkpoint from here on, even on
   failure: -1). Checkpoints nest. */
int mt_ag_checkpoint_enter(int ref);
void mt_ag_checkpoint_leave(void);

/* ---- backward ---- */
/* Runs backward from root with gradient grad (NULL: ones, root must have one
   element). Gradients accumulate into the leaves' grad. */
int mt_ag_backward(mt_tensor *root, const mt_tensor *grad, int retain_graph, int create_graph);

/* torch.autograd.backward: several roots in one walk (grads may be NULL). */
int mt_ag_backward_many(int n, mt_tensor **roots, mt_tensor **grads, int retain_graph, int create_graph);

/* torch.autograd.grad: the gradients of the outputs (seeded with
   grad_outputs, or ones for one-element outputs when NULL) with respect to
   the inputs, into results[nin] (empty tensors when unused and allowed);
   leaves' .grad is not touched. */
int mt_ag_grad(int nout, mt_tensor **outputs, mt_tensor **grad_outputs, int nin, mt_tensor **inputs,
               mt_tensor *results, int retain_graph, int create_graph, int allow_unused);

#endif
