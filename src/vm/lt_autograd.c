/* lt_autograd.c: autograd from Lua -- requires_grad, grad, grad_fn,
   is_leaf, backward, detach, grad mode, and grad_fn objects you can walk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lt.h"
#include "../tensor/mt_optim.h"
#include "../ops/dispatch.h"
#include "../autograd/ag.h"

/* The Lua state the engine's callbacks run on (see the callbacks below). */
static lua_State *ag_L;

/* ---- grad_fn objects ---- */
typedef struct { mt_node *node; } lt_node;

static void push_node(lua_State *L, mt_node *n) {
  if (!n) { lua_pushnil(L); return; }
  lt_node *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->node = n;
  n->refcount++;
  luaL_setmetatable(L, "torch.autograd.Node");
}

/* Releases once, and takes the metatable with it: __gc called again from Lua,
   or any method after it, meets a plain userdata and raises. */
static int node_gc(lua_State *L) {
  lt_node *u = luaL_testudata(L, 1, "torch.autograd.Node");
  if (!u) return 0;
  mt_ag_node_release(u->node);
  u->node = NULL;
  lua_pushnil(L);
  lua_setmetatable(L, 1);
  return 0;
}

static int node_tostring(lua_State *L) {
  lt_node *u = luaL_checkudata(L, 1, "torch.autograd.Node");
  lua_pushfstring(L, "<%s>", u->node->name);
  return 1;
}

static int node_eq(lua_State *L) {
  lt_node *a = luaL_testudata(L, 1, "torch.autograd.Node"), *b = luaL_testudata(L, 2, "torch.autograd.Node");
  lua_pushboolean(L, a && b && a->node == b->node);
  return 1;
}

static int node_name(lua_State *L) {
  lt_node *u = luaL_checkudata(L, 1, "torch.autograd.Node");
  lua_pushstring(L, u->node->name);
  return 1;
}

/* node:variable_is(t): is this the AccumulateGrad of leaf t? */
static int node_variable_is(lua_State *L) {
  lt_node *u = luaL_checkudata(L, 1, "torch.autograd.Node");
  mt_tensor *t = luaL_testudata(L, 2, "torch.Tensor.mt");    /* no tensor upvalue here */
  lua_pushboolean(L, t && u->node->leaf && (void *)u->node->leaf == t->grad_meta);
  return 1;
}

/* n.next_functions: {{node, 0}, ...} as in PyTorch (nil for inputs that
   need no gradient) */
static int node_index(lua_State *L) {
  lt_node *u = luaL_checkudata(L, 1, "torch.autograd.Node");
  const char *k = luaL_checkstring(L, 2);
  if (!strcmp(k, "next_functions")) {
    lua_createtable(L, u->node->nedges, 0);
    for (int i = 0; i < u->node->nedges; i++) {
      lua_createtable(L, 2, 0);
      push_node(L, u->node->next[i].node);
      lua_rawseti(L, -2, 1);
      lua_pushinteger(L, 0);
      lua_rawseti(L, -2, 2);
      lua_rawseti(L, -2, i + 1);
    }
    return 1;
  }
  if (!strcmp(k, "name")) { lua_pushcfunction(L, node_name); return 1; }
  mt_node *n = u->node;
  if (!strcmp(k, "id")) { lua_pushinteger(L, (lua_Integer)(intptr_t)n); return 1; }
  if (!strcmp(k, "released")) { lua_pushboolean(L, n->released); return 1; }
  if (!strcmp(k, "is_accumulator")) { lua_pushboolean(L, n->leaf != NULL); return 1; }
  /* an AccumulateGrad's leaf, as a number that stays the same while the leaf lives (the node
     itself lives only while a graph holds it, and the next is another node: its id differs) */
  if (!strcmp(k, "_leaf_id")) {
    if (n->leaf) lua_pushinteger(L, (lua_Integer)(intptr_t)n->leaf);
    else lua_pushnil(L);
    return 1;
  }
  if (!strcmp(k, "variable_shape")) {            /* AccumulateGrad: its leaf's shape */
    if (!n->leaf) { lua_pushnil(L); return 1; }
    lt_push_size(L, n->in_ndim[0], n->in_shape[0]);
    return 1;
  }
  if (!strcmp(k, "input_shapes")) {              /* the shape of each input (edge) */
    lua_createtable(L, n->nedges, 0);
    for (int i = 0; i < n->nedges && !n->leaf; i++) {
      lt_push_size(L, n->in_ndim[i], n->in_shape[i]);
      lua_rawseti(L, -2, i + 1);
    }
    return 1;
  }
  if (!strcmp(k, "saved_shapes")) {              /* shapes of the tensors saved for backward */
    lua_createtable(L, n->nsaved, 0);
    for (int i = 0; i < n->nsaved && !n->released; i++) {
      if (!n->saved[i].t.storage) continue;
      lt_push_size(L, n->saved[i].t.ndim, n->saved[i].t.shape);
      lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    }
    return 1;
  }
  if (!strcmp(k, "variable_is")) { lua_pushcfunction(L, node_variable_is); return 1; }
  lua_pushnil(L);
  return 1;
}

/* ---- fields of tensors (called from lt_tensor.c's __index/__newindex) ---- */
int lt_autograd_field(lua_State *L, mt_tensor *t, const char *k) {
  mt_ag_meta *m = t->grad_meta;
  if (!strcmp(k, "requires_grad")) { lua_pushboolean(L, mt_ag_requires_grad(t)); return 1; }
  if (!strcmp(k, "is_leaf")) { lua_pushboolean(L, mt_ag_is_leaf(t)); return 1; }
  if (!strcmp(k, "grad_fn")) { push_node(L, m ? m->grad_fn : NULL); return 1; }
  if (!strcmp(k, "retains_grad")) { lua_pushboolean(L, m && m->grad_fn && m->retains_grad); return 1; }
  if (!strcmp(k, "_version")) { lua_pushinteger(L, t->storage ? (lua_Integer)t->storage->version : 0); return 1; }
  if (!strcmp(k, "grad")) {
    if (!m || !m->grad.storage) { lua_pushnil(L); return 1; }
    mt_tensor *r = lt_push(L);
    mt_ag_alias(r, &m->grad);
    return 1;
  }
  if (!strcmp(k, "data")) {                       /* x.data: the same storage, no history */
    mt_tensor *r = lt_push(L);
    mt_tensor_alias(r, t);
    return 1;
  }
  return 0;
}

int lt_autograd_set_field(lua_State *L, mt_tensor *t, const char *k, int v) {
  if (!strcmp(k, "requires_grad")) {
    LT_TRY(L, mt_ag_set_requires_grad(t, lua_toboolean(L, v)));
    return 1;
  }
  if (!strcmp(k, "grad")) {
    mt_tensor *g = lua_isnil(L, v) ? NULL : lt_check(L, v, "grad");
    if (g && !mt_same_shape(g, t)) {
      char b1[128], b2[128];
      luaL_error(L, "grad: assigned grad has shape %s but the tensor has shape %s",
                 mt_shape_str(g, b1, sizeof b1), mt_shape_str(t, b2, sizeof b2));
    }
    if (g && g->dtype != t->dtype)        /* else the next backward would add into it, or fail there */
      luaL_error(L, "grad: assigned grad has dtype %s but the tensor has dtype %s", mt_dtypes[g->dtype].name,
                 mt_dtypes[t->dtype].name);
    mt_ag_meta *m = mt_ag_meta_of(t);
    if (!m) luaL_error(L, "grad: out of memory");
    mt_ag_meta_release(m->grad.grad_meta);
    m->grad.grad_meta = NULL;
    mt_tensor_release(&m->grad);
    if (g) mt_ag_alias(&m->grad, g);
    return 1;
  }
  return 0;
}

void lt_opt_requires_grad(lua_State *L, int opts, mt_tensor *r) {
  if (opts && lt_opt_bool(L, opts, "requires_grad", 0)) LT_TRY(L, mt_ag_set_requires_grad(r, 1));
}

/* ---- the guard around ops that have no derivative yet ----
   Registered through lt_setfuncs_guarded, an op whose tensor arguments
   require grad (in grad mode) must not hand back a floating result without
   history: that would be a silently missing gradient. Ops that are
   recorded pass through. In-place ops take the dispatcher's protocol
   (src/ops/dispatch.c), none of them this guard. */
static int result_lacks_history(lua_State *L, int i, int nargs) {
  mt_tensor *t = lt_test(L, i);
  if (!t || !mt_dtype_is_float(t->dtype) || mt_ag_requires_grad(t)) return 0;
  for (int a = 1; a <= nargs; a++)
    if (lua_rawequal(L, a, i)) return 0;          /* an argument handed back */
  return 1;
}

/* A tensor argument that requires grad, or a table of them (torch.cat). */
static int tracks_history(lua_State *L, int i) {
  mt_tensor *t = lt_test(L, i);
  if (t) return mt_ag_requires_grad(t);
  if (lua_type(L, i) != LUA_TTABLE) return 0;
  for (lua_Integer k = 1;; k++) {
    int type = lua_rawgeti(L, i, k);
    t = type == LUA_TNIL ? NULL : lt_test(L, -1);
    int found = t && mt_ag_requires_grad(t);
    lua_pop(L, 1);
    if (type == LUA_TNIL || found) return found;
  }
}

/* torch._inplace_commit(x, r): x takes r's value and history, the end of an
   in-place op written in Lua (a custom Function that marks an input dirty). */
static int a_inplace_commit(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "_inplace_commit"), *r = lt_check(L, 2, "_inplace_commit");
  if (r->dtype != t->dtype) {
    mt_tensor *c = lt_push(L);
    LT_TRY(L, mt_call_cast(c, r, t->dtype));
    r = c;
  }
  LT_TRY(L, mt_ag_inplace_commit(t, r));
  lua_settop(L, 1);
  return 1;
}

static int guard(lua_State *L) {
  int nargs = lua_gettop(L), tracked = 0;
  if (mt_ag_grad_enabled())
    for (int i = 1; i <= nargs && !tracked; i++) tracked = tracks_history(L, i);
  const luaL_Reg *op = lua_touserdata(L, lua_upvalueindex(2));
  const char *name = op->name;
  /* The op runs in this frame (its upvalue 1, the metatable, is ours too):
     no second call, and its argument errors name it as the caller wrote it
     (x:sum, torch.sum) rather than '?'. Its results are the top nres. */
  int nres = op->func(L), top = lua_gettop(L);
  if (!tracked) return nres;
  for (int i = top - nres + 1; i <= top; i++) {
    int bad = 0;
    if (lua_type(L, i) == LUA_TTABLE) {
      for (lua_Integer k = 1; !bad; k++) {
        int type = lua_rawgeti(L, i, k);
        mt_tensor *t = type == LUA_TNIL ? NULL : lt_test(L, -1);
        bad = t && mt_dtype_is_float(t->dtype) && !mt_ag_requires_grad(t);
        lua_pop(L, 1);
        if (type == LUA_TNIL) break;
      }
    } else {
      bad = result_lacks_history(L, i, 0);
    }
    if (bad) luaL_error(L, "%s: no derivative yet for inputs that require grad (use detach() or torch.no_grad)", name);
  }
  return nres;
}

void lt_setfuncs_guarded(lua_State *L, const luaL_Reg *methods, const luaL_Reg *functions) {
  /* stack: methods torch mt */
  for (int pass = 0; pass < 2; pass++) {
    const luaL_Reg *r = pass == 0 ? methods : functions;
    for (; r && r->name; r++) {
      lua_pushvalue(L, -1);                          /* upvalue 1: mt */
      lua_pushlightuserdata(L, (void *)r);           /* upvalue 2: the op and its name */
      lua_pushcclosure(L, guard, 2);
      lua_setfield(L, pass == 0 ? -4 : -3, r->name);
    }
  }
}

/* ---- Torch7's per-step parameter walks (nn's zeroGradParameters, updateParameters) ---- */

/* t's .grad when it can be written in place as t's own: t's shape, dtype and device, no
   stride-0 dims; NULL otherwise (the caller takes the general path) */
static mt_tensor *own_grad(mt_tensor *t) {
  mt_ag_meta *m = t->grad_meta;
  if (!m || !m->grad.storage || !mt_same_shape(t, &m->grad) || m->grad.dtype != t->dtype ||
      !mt_same_device(t, &m->grad))
    return NULL;
  for (int i = 0; i < m->grad.ndim; i++)
    if (m->grad.stride[i] == 0 && m->grad.shape[i] > 1) return NULL;
  return &m->grad;
}

/* torch._zero_grad(t): zeroes t.grad in place and answers true; false (nothing done)
   when t has no .grad of its own shape */
static int a_zero_grad(lua_State *L) {
  mt_tensor *g = own_grad(lt_check_any(L, 1, "_zero_grad"));
  if (g) LT_TRY(L, mt_fill(g, 0));
  lua_pushboolean(L, g != NULL);
  return 1;
}

/* torch._add_grad(t, alpha): t = t + alpha * t.grad in place, as under no_grad, and true;
   false (nothing done) when t has no .grad of its own shape */
static int a_add_grad(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "_add_grad");
  const double alpha = luaL_checknumber(L, 2);
  mt_tensor *g = own_grad(t);
  if (g && g->storage != t->storage) {
    mt_operand a = {t, 0, 0}, b = {g, 0, 0};
    LT_TRY(L, mt_run_binary(t, &a, &b, MT_OP_add, alpha, 1, t->dtype));
  }
  lua_pushboolean(L, g && g->storage != t->storage);
  return 1;
}

/* torch._amp_unscale_(grads, inv_scale): every tensor of the list grads (a
   Lua array) times inv_scale in place, in one pass each (GradScaler's
   unscale_; on a GPU one kernel each); whether any held an inf or a NaN */
static int a_amp_unscale(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const double inv = luaL_checknumber(L, 2);
  int found = 0;
  const lua_Integer n = luaL_len(L, 1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    mt_tensor *g = lt_check_any(L, -1, "_amp_unscale_");
    LT_TRY(L, mt_amp_unscale(g, inv, &found));
    lua_pop(L, 1);
  }
  lua_pushboolean(L, found);
  return 1;
}

/* ---- methods ---- */
static int a_requires_grad_(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "requires_grad_");
  LT_TRY(L, mt_ag_set_requires_grad(t, lua_isnone(L, 2) ? 1 : lua_toboolean(L, 2)));
  lua_settop(L, 1);
  return 1;
}

/* y:backward(), y:backward(grad), y:backward(grad, {retain_graph=, create_graph=}),
   y:backward({retain_graph=true}) */
/* ---- tracing: the engine reports each node it runs to a Lua function
   (registry "torch.autograd.tracer"): tracer(node, grad_out, {grads passed on}) ---- */
static int cb_trace(mt_node *n, const mt_tensor *grad_out, const mt_tensor *grad_in) {
  lua_State *L = ag_L;
  int top = lua_gettop(L);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "torch.autograd.tracer") != LUA_TFUNCTION) { lua_settop(L, top); return 0; }
  push_node(L, n);
  mt_tensor *g = lt_push(L);
  mt_tensor_alias(g, grad_out);
  lua_createtable(L, n->nedges, 0);
  for (int i = 0; i < n->nedges; i++) {
    if (!grad_in[i].storage) continue;
    mt_tensor *gi = lt_push(L);
    mt_tensor_alias(gi, &grad_in[i]);
    lua_rawseti(L, -2, i + 1);
  }
  int rc = 0;
  if (lua_pcall(L, 3, 0, 0) != LUA_OK)
    rc = mt_fail("backward trace: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
  lua_settop(L, top);
  return rc;
}

/* anomaly mode: file:line of the Lua code running the op that made a node
   (the user's frame of the latest binding call: a custom Function is
   recorded in lib/torch, called from the user's code) */
static char *cb_where(void) {
  lua_State *L = lt_last_L;
  lua_Debug pick;
  if (!L || !lt_user_frame(L, &pick)) return NULL;
  size_t n = strlen(pick.short_src) + 24;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s:%d", pick.short_src, pick.currentline);
  return s;
}

/* The Torch7 dialect's lift of the refusals of writes into leaves that
   require grad: the function torch._ag_set_lift registered (registry
   "torch.autograd.lift") answers whether the code writing is the user's;
   none registered (the PyTorch dialect, a worker's state): refused. */
static _Thread_local int lift_on;                 /* a function is registered (on this thread's state) */
static int cb_lift_leaf_write(const char *op) {
  lua_State *L = lt_cur_L;        /* the binding running now checked its tensors on it */
  if (!lift_on || !L || lua_status(L) != LUA_OK) return 0;
  int top = lua_gettop(L);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "torch.autograd.lift") != LUA_TFUNCTION) { lua_settop(L, top); return 0; }
  lua_pushstring(L, op);
  int lift = lua_pcall(L, 1, 1, 0) == LUA_OK && lua_toboolean(L, -1);
  lua_settop(L, top);
  return lift;
}

/* torch._ag_set_lift(fn | nil): fn(op) -> true lets the write happen */
static int a_set_lift(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lift_on = !lua_isnil(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "torch.autograd.lift");
  return 0;
}

/* torch._ag_set_implicit(t, on): marks leaf t as made to require grad by nn
   (a parameter, a Torch7 call's input) rather than by the user */
static int a_set_implicit(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "_ag_set_implicit");
  if (!mt_ag_requires_grad(t) || !mt_ag_is_leaf(t)) return 0;
  ((mt_ag_meta *)t->grad_meta)->implicit = lua_toboolean(L, 2);
  return 0;
}

/* torch._ag_user_grad(t): does t require grad through a leaf the user made
   require grad (mt_ag_user_grad)? */
static int a_user_grad(lua_State *L) {
  mt_tensor *t = lt_check_any(L, 1, "_ag_user_grad");
  int r = mt_ag_user_grad(t);
  if (r < 0) lt_error(L);
  lua_pushboolean(L, r);
  return 1;
}

/* torch._ag_library(): the directory of the calling Lua file is the library
   lt_user_frame looks past; the first call (lib/torch/init.lua) sets it for good */
static int a_set_library(lua_State *L) {
  lua_Debug ar;
  if (lua_getfield(L, LUA_REGISTRYINDEX, "torch.autograd.library") != LUA_TNIL) return 0;
  if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "S", &ar) || ar.source[0] != '@') return 0;
  const char *slash = strrchr(ar.source, '/');
  if (!slash) return 0;
  lua_pushlstring(L, ar.source, (size_t)(slash - ar.source) + 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "torch.autograd.library");
  return 0;
}

/* torch._set_tracer(fn or nil): fn sees every node backward runs */
static int a_set_tracer(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  mt_ag_set_trace(!lua_isnil(L, 1));
  lua_setfield(L, LUA_REGISTRYINDEX, "torch.autograd.tracer");
  ag_L = L;
  return 0;
}

static int a_backward(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "backward");
  mt_tensor *grad = lt_test(L, 2);
  int opts = lt_opts_index(L);
  if (opts == 1) opts = 0;
  int create_graph = lt_opt_bool(L, opts, "create_graph", 0);
  int retain_graph = lt_opt_bool(L, opts, "retain_graph", create_graph);
  if (opts && lt_opt_bool(L, opts, "trace", 0)) {   /* y:backward{trace=true}: lib/torch */
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "torch");
    lua_getfield(L, -1, "autograd");
    if (lua_getfield(L, -1, "_backward_traced") != LUA_TFUNCTION)
      luaL_error(L, "backward: tracing needs require 'torch'");
    lua_pushvalue(L, 1);
    if (grad) lua_pushvalue(L, 2); else lua_pushnil(L);
    lua_pushboolean(L, retain_graph);
    lua_pushboolean(L, create_graph);
    lua_call(L, 4, 0);
    return 0;
  }
  ag_L = L;
  LT_TRY(L, mt_ag_backward(t, grad, retain_graph, create_graph));
  return 0;
}

static int a_retain_grad(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "retain_grad");
  if (!mt_ag_requires_grad(t)) luaL_error(L, "retain_grad: can't retain_grad on a tensor that has requires_grad=false");
  mt_ag_retain_grad(t);
  return 0;
}

static int a_detach(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "detach");
  mt_tensor *r = lt_push(L);
  mt_tensor_alias(r, t);
  return 1;
}

static int a_detach_(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "detach_");
  LT_TRY(L, mt_ag_detach_inplace(t));
  lua_settop(L, 1);
  return 1;
}

/* A tensor or a list of tensors at index i, into out (at most max); nil
   entries allowed only when nil_ok. Returns the count. */
static int tensor_list(lua_State *L, int i, mt_tensor **out, int max, int nil_ok, const char *op, const char *what) {
  mt_tensor *t = lt_test(L, i);
  if (t) { out[0] = t; return 1; }
  if (lua_type(L, i) != LUA_TTABLE)
    luaL_error(L, "%s: %s must be a tensor or a list of tensors, got %s", op, what, luaL_typename(L, i));
  int n = (int)lt_len(L, i, max, what, op);
  if (n < 1) luaL_error(L, "%s: %s must hold 1 to %d tensors, got %d", op, what, max, n);
  for (int k = 0; k < n; k++) {
    lua_geti(L, i, k + 1);
    out[k] = lt_test(L, -1);
    if (!out[k] && !(nil_ok && lua_isnil(L, -1)))
      luaL_error(L, "%s: %s[%d] is a %s, not a tensor", op, what, k + 1, luaL_typename(L, -1));
    lua_pop(L, 1);                               /* the list keeps it alive */
  }
  return n;
}

/* torch.autograd.grad(outputs, inputs, {grad_outputs=, retain_graph=,
   create_graph=, allow_unused=}) -> a list of gradients, one per input
   (nil for an unused input when allow_unused) */
static int a_grad(lua_State *L) {
  mt_tensor *outputs[MT_AG_MAX_ROOTS], *inputs[MT_AG_MAX_ROOTS], *grad_outputs[MT_AG_MAX_ROOTS];
  int nout = tensor_list(L, 1, outputs, MT_AG_MAX_ROOTS, 0, "autograd.grad", "outputs");
  int nin = tensor_list(L, 2, inputs, MT_AG_MAX_ROOTS, 0, "autograd.grad", "inputs");
  int opts = lua_istable(L, 3) ? 3 : 0;
  int has_grads = 0;
  if (opts && lua_getfield(L, opts, "grad_outputs") != LUA_TNIL) {
    int n = tensor_list(L, lua_gettop(L), grad_outputs, MT_AG_MAX_ROOTS, 1, "autograd.grad", "grad_outputs");
    if (n != nout) luaL_error(L, "autograd.grad: %d grad_outputs for %d outputs", n, nout);
    has_grads = 1;
  }
  int create_graph = lt_opt_bool(L, opts, "create_graph", 0);
  int retain_graph = lt_opt_bool(L, opts, "retain_graph", create_graph);
  int allow_unused = lt_opt_bool(L, opts, "allow_unused", 0);
  lua_createtable(L, nin, 0);
  int list = lua_gettop(L);
  mt_tensor *results[MT_AG_MAX_ROOTS];
  for (int j = 0; j < nin; j++) {                /* result userdata first: nothing leaks on error */
    results[j] = lt_push(L);
    lua_rawseti(L, list, j + 1);
  }
  mt_tensor tmp[MT_AG_MAX_ROOTS];
  memset(tmp, 0, sizeof tmp);
  ag_L = L;
  LT_TRY(L, mt_ag_grad(nout, outputs, has_grads ? grad_outputs : NULL, nin, inputs, tmp, retain_graph,
                       create_graph, allow_unused));
  for (int j = 0; j < nin; j++) {
    if (tmp[j].storage) *results[j] = tmp[j];
    else { lua_pushnil(L); lua_rawseti(L, list, j + 1); }
  }
  lua_settop(L, list);
  return 1;
}

/* torch.autograd.backward(tensors, grad_tensors, {retain_graph=, create_graph=}),
   or (tensors, {grad_tensors=, retain_graph=, create_graph=}) */
static int a_autograd_backward(lua_State *L) {
  mt_tensor *roots[MT_AG_MAX_ROOTS], *grads[MT_AG_MAX_ROOTS];
  int n = tensor_list(L, 1, roots, MT_AG_MAX_ROOTS, 0, "autograd.backward", "tensors");
  int grads_at = 0, opts = 0;
  if (lt_test(L, 2) || (lua_istable(L, 2) && lua_rawlen(L, 2) > 0)) {
    grads_at = 2;
    opts = lua_istable(L, 3) ? 3 : 0;
  } else if (lua_istable(L, 2)) {
    opts = 2;
    if (lua_getfield(L, opts, "grad_tensors") != LUA_TNIL) grads_at = lua_gettop(L);
  }
  if (grads_at) {
    int m = tensor_list(L, grads_at, grads, MT_AG_MAX_ROOTS, 1, "autograd.backward", "grad_tensors");
    if (m != n) luaL_error(L, "autograd.backward: %d grad_tensors for %d tensors", m, n);
  }
  int has_grads = grads_at != 0;
  int create_graph = lt_opt_bool(L, opts, "create_graph", 0);
  int retain_graph = lt_opt_bool(L, opts, "retain_graph", create_graph);
  ag_L = L;
  LT_TRY(L, mt_ag_backward_many(n, roots, has_grads ? grads : NULL, retain_graph, create_graph));
  return 0;
}

/* ---- Lua callbacks: hooks and custom Functions ----
   The engine runs inside a Lua call (backward, autograd.grad); ag_L is that
   state, so callbacks run Lua code on it, protected: an error becomes the
   engine's error message. */
/* What a tensor hook returned (at idx): nil keeps the gradient; a tensor
   replaces it only with the same shape and dtype, and anything else is an
   error, as in PyTorch (never a result silently ignored). */
static int hook_result(lua_State *L, int idx, const mt_tensor *grad, mt_tensor **replacement) {
  *replacement = lt_test(L, idx);
  if (!*replacement) {
    if (lua_isnil(L, idx)) return 0;
    return mt_fail("hook: expected a tensor or nil, but the hook returned a %s", luaL_typename(L, idx));
  }
  if (!mt_same_shape(*replacement, grad)) {
    char b1[128], b2[128];
    return mt_fail("hook: returned a gradient of shape %s for a tensor of shape %s",
                   mt_shape_str(*replacement, b1, sizeof b1), mt_shape_str(grad, b2, sizeof b2));
  }
  if ((*replacement)->dtype != grad->dtype)
    return mt_fail("hook: returned a gradient of dtype %s for a gradient of dtype %s (a hook may not change "
                   "the type)", mt_dtypes[(*replacement)->dtype].name, mt_dtypes[grad->dtype].name);
  return 0;
}

static int cb_run_hooks(int ref, mt_tensor *grad) {
  lua_State *L = ag_L;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);          /* the hook list */
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, top + 1, i) != LUA_TFUNCTION) { lua_pop(L, 1); continue; }   /* removed */
    mt_tensor *arg = lt_push(L);
    mt_ag_alias(arg, grad);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
      mt_fail("hook: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
      lua_settop(L, top);
      return -1;
    }
    mt_tensor *replacement;
    if (hook_result(L, -1, grad, &replacement)) {
      lua_settop(L, top);
      return -1;
    }
    if (replacement) {
      mt_ag_meta_release(grad->grad_meta);
      grad->grad_meta = NULL;
      mt_tensor_release(grad);
      mt_ag_alias(grad, replacement);
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
  return 0;
}

/* Post-accumulate-grad hooks: the entry is {fn, fn, ..., holder = weak {x}}
   so the hook list does not keep its leaf alive. */
static int cb_run_post_hooks(int ref) {
  lua_State *L = ag_L;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  lua_getfield(L, top + 1, "holder");
  lua_rawgeti(L, -1, 1);
  int tensor = lua_gettop(L);
  if (!lt_test(L, tensor)) { lua_settop(L, top); return 0; }
  lua_Integer n = (lua_Integer)lua_rawlen(L, top + 1);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, top + 1, i) != LUA_TFUNCTION) { lua_pop(L, 1); continue; }
    lua_pushvalue(L, tensor);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
      mt_fail("post-accumulate-grad hook: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
      lua_settop(L, top);
      return -1;
    }
    if (!lua_isnil(L, -1)) {         /* the gradient is in x.grad already: nothing to replace */
      mt_fail("post-accumulate-grad hook: hooks must return nothing, this one returned a %s",
              luaL_typename(L, -1));
      lua_settop(L, top);
      return -1;
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
  return 0;
}

static void cb_unref(int ref) {
  if (ag_L) luaL_unref(ag_L, LUA_REGISTRYINDEX, ref);
}

/* A custom Function's node frees its {backward, ctx}: ctx._freed tells
   ctx.saved_tensors (lib/torch) to raise from now on. */
static void cb_release_function(int ref) {
  lua_State *L = ag_L;
  if (!L) return;
  int top = lua_gettop(L);
  if (lua_rawgeti(L, LUA_REGISTRYINDEX, ref) == LUA_TTABLE && lua_rawgeti(L, -1, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "_freed");
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
  }
  lua_settop(L, top);
  luaL_unref(L, LUA_REGISTRYINDEX, ref);
}

/* torch._ag_freed_message(): MT_AG_FREED_MSG, for ctx.saved_tensors (lib/torch) */
static int a_freed_message(lua_State *L) {
  lua_pushstring(L, MT_AG_FREED_MSG);
  return 1;
}

/* torch._ag_saved_error(t, version, needed_by): nil while t's storage is at
   version, else the error a built-in node raises for a saved tensor an
   in-place op changed (for ctx.saved_tensors, lib/torch) */
static int a_saved_error(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "_ag_saved_error");
  int64_t version = (int64_t)luaL_checkinteger(L, 2);
  if (!mt_ag_check_version(t, version, luaL_checkstring(L, 3))) return 0;
  lua_pushstring(L, mt_error());
  return 1;
}

/* A checkpoint's function run again: the Lua function at ref (lib/torch
   restores the random state and runs fn under enable_grad). */
static int cb_recompute(int ref) {
  lua_State *L = ag_L;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  int rc = 0;
  if (lua_pcall(L, 0, 0, 0) != LUA_OK)
    rc = mt_fail("checkpoint: running the function again for backward: %s",
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
  lua_settop(L, top);
  return rc;
}

/* torch._ag_checkpoint(recompute, fn, ...) -> fn(...): the nodes fn records
   save no tensors; a backward that needs them calls recompute(), which must
   run fn again the same way (ag.h, activation checkpointing). */
static int a_checkpoint(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  luaL_checkany(L, 2);
  lua_pushvalue(L, 1);
  int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  ag_L = L;
  LT_TRY(L, mt_ag_checkpoint_enter(ref));
  int status = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0);
  mt_ag_checkpoint_leave();
  if (status != LUA_OK) return lua_error(L);
  return lua_gettop(L) - 1;
}

/* h = x:register_hook(fn): fn(grad) runs when x's gradient is computed and
   may return a replacement; h:remove() takes it away. */
static int a_register_hook(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "register_hook");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (!mt_ag_requires_grad(t))
    luaL_error(L, "register_hook: cannot register a hook on a tensor that doesn't require gradient");
  mt_ag_meta *m = t->grad_meta;
  if (!m->hook_ref) {
    lua_newtable(L);
    m->hook_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, m->hook_ref);
  lua_Integer i = (lua_Integer)lua_rawlen(L, -1) + 1;
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, i);
  lua_createtable(L, 0, 2);                         /* the handle */
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "hooks");
  lua_pushinteger(L, i);
  lua_setfield(L, -2, "index");
  luaL_setmetatable(L, "torch.autograd.HookHandle");
  return 1;
}

/* h = x:register_post_accumulate_grad_hook(fn): fn(x) after a backward
   accumulated into x.grad (leaves only; distributed training uses it). */
static int a_register_post_hook(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "register_post_accumulate_grad_hook");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (!mt_ag_requires_grad(t) || !mt_ag_is_leaf(t))
    luaL_error(L, "register_post_accumulate_grad_hook: only leaf tensors that require grad take one");
  mt_ag_meta *m = t->grad_meta;
  if (!m->post_hook_ref) {
    lua_newtable(L);
    lua_newtable(L);                                /* holder: weak reference to x */
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 1);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "holder");
    m->post_hook_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, m->post_hook_ref);
  lua_Integer i = (lua_Integer)lua_rawlen(L, -1) + 1;
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, i);
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "hooks");
  lua_pushinteger(L, i);
  lua_setfield(L, -2, "index");
  luaL_setmetatable(L, "torch.autograd.HookHandle");
  return 1;
}

static int hook_handle_remove(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "hooks");
  lua_getfield(L, 1, "index");
  if (lua_istable(L, -2) && lua_isinteger(L, -1)) {
    lua_pushboolean(L, 0);                          /* a hole would end the list */
    lua_rawseti(L, -3, lua_tointeger(L, -2));
  }
  return 0;
}

/* The custom Function node whose backward is running (innermost), for
   torch._ag_saved_output. */
static mt_node *running_function;

/* The backward of a custom Function: calls backward(ctx, grad) in Lua (the
   user table {backward, ctx} is at node->user_ref); one gradient per
   tensor input. */
static int custom_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  lua_State *L = ag_L;
  if (!n->user_ref) return mt_fail("%s: %s", n->name, MT_AG_FREED_MSG);
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, n->user_ref);
  lua_rawgeti(L, -1, 1);                            /* backward */
  lua_rawgeti(L, -2, 2);                            /* ctx */
  mt_tensor *arg = lt_push(L);
  mt_ag_alias(arg, g);
  mt_node *outer = running_function;
  running_function = n;
  int status = lua_pcall(L, 2, n->nedges, 0);
  running_function = outer;
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "error";
    if (strstr(msg, n->name)) mt_fail("%s", msg);       /* it names the node already */
    else mt_fail("%s: %s", n->name, msg);
    lua_settop(L, top);
    return -1;
  }
  int first = lua_gettop(L) - n->nedges + 1, rc = 0;
  for (int i = 0; i < n->nedges && rc == 0; i++) {
    mt_tensor *r = lt_test(L, first + i);
    if (!r) {
      if (!lua_isnil(L, first + i))
        rc = mt_fail("%s: backward returned a %s for input %d, expected a tensor or nil", n->name,
                     luaL_typename(L, first + i), i + 1);
      continue;
    }
    if (r->ndim != n->in_ndim[i] || memcmp(r->shape, n->in_shape[i], sizeof(int64_t) * (size_t)r->ndim)) {
      char b[128];
      rc = mt_fail("%s: backward returned a gradient of shape %s for input %d of a different shape", n->name,
                   mt_shape_str(r, b, sizeof b), i + 1);
      continue;
    }
    if (r->dtype != n->in_dtype[i]) {          /* as PyTorch, the input's dtype: never an int64 .grad */
      if (mt_call_cast(&gi[i], r, n->in_dtype[i])) rc = -1;
      continue;
    }
    mt_ag_alias(&gi[i], r);
  }
  lua_settop(L, top);
  return rc;
}

/* torch._ag_saved_output(ctx, t): t, the result of ctx's custom Function
   that ctx saved without history (lib/torch), as that node's backward
   unpacks it: mt_ag_output_of the node while its backward runs, t itself
   elsewhere. */
static int a_saved_output(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  mt_tensor *t = lt_check(L, 2, "_ag_saved_output");
  mt_node *n = running_function;
  int own = 0;
  if (n && n->user_ref) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, n->user_ref);
    lua_rawgeti(L, -1, 2);
    own = lua_rawequal(L, -1, 1);
    lua_pop(L, 2);
  }
  if (!own) { lua_settop(L, 2); return 1; }
  mt_tensor *r = lt_push(L);
  LT_TRY(L, mt_ag_output_of(n, t, r));
  return 1;
}

/* torch._ag_custom_node(output, {tensor inputs}, backward, ctx, name) */
static int a_custom_node(lua_State *L) {
  mt_tensor *out = lt_check(L, 1, "Function.apply");
  mt_tensor *inputs[MT_AG_MAX_EDGES];
  int n = tensor_list(L, 2, inputs, MT_AG_MAX_EDGES, 0, "Function.apply", "tensor inputs");
  luaL_checktype(L, 3, LUA_TFUNCTION);
  const char *name = luaL_optstring(L, 5, "Function");
  if (!mt_dtype_is_float(out->dtype)) return 0;
  size_t len = strlen(name) + sizeof "Backward";           /* the node's name, in its extra words */
  mt_node *node = mt_ag_new_node_extra("CustomBackward", custom_backward, n, (const mt_tensor *const *)inputs,
                                       (len + sizeof(int64_t) - 1) / sizeof(int64_t));
  if (!node) luaL_error(L, "Function.apply: out of memory");
  snprintf((char *)node->extra, len, "%sBackward", name);
  node->name = (char *)node->extra;
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, 4);
  lua_rawseti(L, -2, 2);
  node->user_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  ag_L = L;
  LT_TRY(L, mt_ag_attach(out, node));
  return 0;
}

/* ---- grad mode ---- */
static int a_is_grad_enabled(lua_State *L) { lua_pushboolean(L, mt_ag_grad_enabled()); return 1; }
static int a_set_grad_enabled(lua_State *L) {
  luaL_checktype(L, 1, LUA_TBOOLEAN);
  mt_ag_set_grad_enabled(lua_toboolean(L, 1));
  return 0;
}

/* Runs fn(...) with grad mode set, restoring the previous mode even when fn
   raises (the error is re-raised). */
static int with_mode(lua_State *L, int enabled) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int before = mt_ag_grad_enabled();
  mt_ag_set_grad_enabled(enabled);
  int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  mt_ag_set_grad_enabled(before);
  if (status != LUA_OK) return lua_error(L);
  return lua_gettop(L);
}
static int a_no_grad(lua_State *L) { return with_mode(L, 0); }

/* ---- autocast's switches (lib/torch/amp.lua builds torch.autocast on them) ----
   torch._autocast_state(device): enabled, dtype; torch._autocast_set(device,
   enabled, dtype); torch._autocast_region(entering) */
static int autocast_device(lua_State *L, int i, const char *op) {
  const char *name = luaL_checkstring(L, i);
  if (!strcmp(name, "cpu")) return MT_CPU;
  if (!strcmp(name, "cuda")) return MT_CUDA;
  return luaL_error(L, "%s: device_type must be 'cpu' or 'cuda', got '%s'", op, name);
}
static int a_autocast_state(lua_State *L) {
  int enabled, dtype;
  mt_autocast_get(autocast_device(L, 1, "autocast"), &enabled, &dtype);
  lua_pushboolean(L, enabled);
  lt_push_dtype(L, dtype);
  return 2;
}
static int a_autocast_set(lua_State *L) {
  int device = autocast_device(L, 1, "autocast");
  int dtype = lt_check_dtype_name(L, 3, "autocast");
  LT_TRY(L, mt_autocast_set(device, lua_toboolean(L, 2), dtype));
  return 0;
}
static int a_autocast_region(lua_State *L) {
  mt_autocast_region(lua_toboolean(L, 1));
  return 0;
}

/* torch.autograd.set_detect_anomaly(b), is_anomaly_enabled(),
   detect_anomaly(fn, ...) (restores the mode, even on error) */
static int a_set_detect_anomaly(lua_State *L) {
  luaL_checktype(L, 1, LUA_TBOOLEAN);
  mt_ag_set_anomaly_enabled(lua_toboolean(L, 1));
  return 0;
}
static int a_is_anomaly_enabled(lua_State *L) { lua_pushboolean(L, mt_ag_anomaly_enabled()); return 1; }
static int a_detect_anomaly(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int before = mt_ag_anomaly_enabled();
  mt_ag_set_anomaly_enabled(1);
  int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  mt_ag_set_anomaly_enabled(before);
  if (status != LUA_OK) return lua_error(L);
  return lua_gettop(L);
}
static int a_enable_grad(lua_State *L) { return with_mode(L, 1); }

static const luaL_Reg methods[] = {
  {"requires_grad_", a_requires_grad_}, {"backward", a_backward}, {"detach", a_detach},
  {"detach_", a_detach_}, {"retain_grad", a_retain_grad}, {"register_hook", a_register_hook},
  {"register_post_accumulate_grad_hook", a_register_post_hook},
  {NULL, NULL}};

static const luaL_Reg functions[] = {
  {"is_grad_enabled", a_is_grad_enabled}, {"set_grad_enabled", a_set_grad_enabled},
  {"no_grad", a_no_grad}, {"enable_grad", a_enable_grad}, {"inference_mode", a_no_grad},
  {"_autocast_state", a_autocast_state}, {"_autocast_set", a_autocast_set}, {"_autocast_region", a_autocast_region},
  {"detach", a_detach}, {"_autograd_grad", a_grad}, {"_autograd_backward", a_autograd_backward},
  {"_zero_grad", a_zero_grad}, {"_add_grad", a_add_grad}, {"_amp_unscale_", a_amp_unscale},
  {"_ag_custom_node", a_custom_node}, {"_set_detect_anomaly", a_set_detect_anomaly},
  {"_is_anomaly_enabled", a_is_anomaly_enabled}, {"_detect_anomaly", a_detect_anomaly},
  {"_inplace_commit", a_inplace_commit},
  {"_ag_saved_error", a_saved_error}, {"_ag_saved_output", a_saved_output},
  {"_set_tracer", a_set_tracer}, {"_ag_checkpoint", a_checkpoint}, {"_ag_library", a_set_library},
  {"_ag_freed_message", a_freed_message}, {"_ag_set_lift", a_set_lift}, {"_ag_set_implicit", a_set_implicit},
  {"_ag_user_grad", a_user_grad},
  {NULL, NULL}};

void lt_open_autograd(lua_State *L) {
  static const mt_ag_callbacks cb = {cb_run_hooks, cb_run_post_hooks, cb_unref, cb_trace, cb_where,
                                     cb_recompute, cb_release_function, cb_lift_leaf_write};
  ag_L = L;
  mt_ag_set_callbacks(&cb);
  if (luaL_newmetatable(L, "torch.autograd.HookHandle")) {
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, hook_handle_remove);
    lua_setfield(L, -2, "remove");
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, "torch.autograd.Node")) {
    lua_pushcfunction(L, node_gc); lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, node_tostring); lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, node_eq); lua_setfield(L, -2, "__eq");
    lua_pushcfunction(L, node_index); lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  lt_setfuncs(L, methods, functions);
  static const char *const any_device_methods[] = {"requires_grad_", "backward", "detach", "detach_", "retain_grad",
                                                   "register_hook", "register_post_accumulate_grad_hook", NULL};
  static const char *const any_device_functions[] = {"detach", "_autograd_grad", "_autograd_backward",   /* bookkeeping: */
                                                     "_ag_custom_node", "_inplace_commit", "_ag_saved_error",
                                                     "_ag_saved_output", "_ag_set_implicit", "_ag_user_grad",
                                                     NULL};                                     /* no memory read */
  lt_mark_any_device(L, -3, any_device_methods);
  lt_mark_any_device(L, -2, any_device_functions);
}
