/* lt.h: helpers shared by the Lua bindings of the tensor engine: checking
   and pushing tensor userdata, reading sizes, dims and option tables. */
#ifndef LT_H
#define LT_H

#include <limits.h>
#include <lua.h>
#include <lauxlib.h>
#include "../tensor/mt_tensor.h"
#include "../tensor/mt_ops.h"

/* Every binding is a C closure whose upvalue 1 is the tensor metatable, so a
   type check is a metatable comparison, with no string lookup. */
#define LT_MT lua_upvalueindex(1)

/* Bytes allocated between two nudges of Lua's collector: big enough that a
   loop of small ops rarely pays for a GC step, small enough that temporaries
   of large tensors are reclaimed while memory stays flat. */
#define LT_GC_DEBT_STEP ((int64_t)4 << 20)
/* Bytes allocated between two full collections at least (see pay_gc_debt
   in lt_tensor.c): large enough that a small model's training loop runs
   a full collection only every few steps. */
#define LT_GC_FULL_MIN ((int64_t)128 << 20)

extern int lt_default_dtype;

/* A tensor at i (lt_test: NULL when none; lt_check raises naming op). Both
   refuse a tensor off the CPU unless the running binding takes every device
   (lt_mark_any_device, or bound through the registry): a CPU kernel must
   never read GPU memory. The _any forms take tensors on every device. */
mt_tensor *lt_test(lua_State *L, int i);
mt_tensor *lt_check(lua_State *L, int i, const char *op);
mt_tensor *lt_test_any(lua_State *L, int i);
mt_tensor *lt_check_any(lua_State *L, int i, const char *op);
/* The upvalue that marks a binding taking every device, and its key. */
#define LT_ANY_DEVICE_UPVALUE 3
int lt_any_device_binding(lua_State *L);
void lt_push_any_device_key(lua_State *L);
/* Re-binds the named functions (NULL-ended) of the table at t as taking
   every device. */
void lt_mark_any_device(lua_State *L, int t, const char *const *names);
/* Re-binds the named creation functions of the table at t so that they
   take the device= option (made on the CPU, then moved). */
void lt_device_creation(lua_State *L, int t, const char *const *names);
/* The fill value at i (x:fill_, torch.full, full_like) as an operand in o:
   a number, a boolean (is_int 2), or a tensor; an integer beyond a
   double's exact ones becomes a 0-dim int64 tensor pushed on the stack, so
   that it stays exact. Returns o. */
mt_operand *lt_fill_operand(lua_State *L, int i, const char *op, mt_operand *o);
/* Pushes the registry's factory op (MT_FACTORY_OPS) of a, made through the
   dispatcher; requires_grad= in the options at opts (0: none) makes it a
   leaf that requires grad. Returns 1. */
int lt_push_factory(lua_State *L, mt_op op, const mt_factory_args *a, int opts);
/* The device rand, randn and randint make their tensor on (their device= option), and its index. */
int lt_creation_device(int *index);
/* "cpu", "cuda", "cuda:N" into (device, index): 0 when name is no device;
   raises for a GPU whose backend is not loaded. */
int lt_parse_device(lua_State *L, const char *name, const char *op, int *device, int *index);
mt_tensor *lt_push(lua_State *L);                /* new, empty tensor userdata */
/* lt_push with fresh contiguous memory; its errors name op (zeros, ...). */
mt_tensor *lt_push_new(lua_State *L, const char *op, int dtype, int ndim, const int64_t *shape);
/* the state of the latest binding that checked a tensor argument, on this
   thread (what the engine's refusal callbacks look at) */
extern _Thread_local lua_State *lt_cur_L;
extern lua_State *lt_last_L;                     /* the state of the latest lt_push (anomaly mode) */
int lt_error(lua_State *L);                      /* raises mt_error() */
#define LT_TRY(L, call) do { if ((call) != 0) lt_error(L); } while (0)
/* The frame of the user's code running now: the first Lua frame up the stack
   that is not in lib/torch, else the first Lua frame; 0 when there is none. */
int lt_user_frame(lua_State *L, lua_Debug *frame);

/* A 1-based Lua dim (negative from the end) to a 0-based C dim. */
int lt_check_dim(lua_State *L, int i, int ndim, const char *op);
/* The file name at i; raises naming op when it holds a NUL byte (C would
   cut it short and open another file). */
const char *lt_check_path(lua_State *L, int i, const char *op);
/* No Lua table holds more array entries (Lua's MAXASIZE is 2^31): a longer
   length comes from a __len metamethod. */
#define LT_MAX_TABLE_LEN INT_MAX
/* The length of the table at i (its __len too), checked to lie in [0, max]:
   what names the entries in the error ("dims"). */
int64_t lt_len(lua_State *L, int i, int64_t max, const char *what, const char *op);
/* Reads a shape given as numbers at [from, to], or one table / torch.Size at
   from. Returns ndim. */
int lt_read_shape(lua_State *L, int from, int to, int64_t *shape, const char *op);
void lt_push_size(lua_State *L, int n, const int64_t *v);
int lt_is_size(lua_State *L, int i);
/* The index of a trailing options table, or 0. */
int lt_opts_index(lua_State *L);
/* opts.dtype (def when absent); also checks opts.device: every op that
   takes a dtype option takes a device one, and only 'cpu' is there. */
int lt_opt_dtype(lua_State *L, int opts, int def, const char *op);
int lt_opt_bool(lua_State *L, int opts, const char *key, int def);
double lt_opt_number(lua_State *L, int opts, const char *key, double def);
int lt_check_dtype_name(lua_State *L, int i, const char *op);
void lt_push_dtype(lua_State *L, int dtype);

/* Registers methods (on tensors) and functions (in torch) from the table of
   the area; the tensor metatable must be at the top of the stack and the
   methods table and torch table below it at -3 and -2. */
void lt_setfuncs(lua_State *L, const luaL_Reg *methods, const luaL_Reg *functions);
/* The next word of a registry string of words separated by spaces (the
   aliases, the domains): its start, its length in *n; NULL at the end. */
const char *lt_next_word(const char **p, size_t *n);
/* Binds fn (an LT_OUT_BINDING wrapper), with upvalues the metatable and code, as name (len bytes, with
   "_" after it when inplace) in the methods table and, unless methods_only,
   in torch; stack: methods torch mt. */
void lt_bind_op(lua_State *L, const char *name, size_t len, int inplace, int methods_only, lua_CFunction fn,
                lua_Integer code);
/* Pushes the closure lt_bind_op binds: fn (an LT_OUT_BINDING wrapper) with
   upvalues the metatable (at the top of the stack), code, the any-device
   key, name (as Lua calls it) and whether it takes {out=}. */
void lt_push_op_binding(lua_State *L, lua_CFunction fn, lua_Integer code, const char *name, int inplace);
/* A registry binding fn behind the {out=} option (lt_util.c): fn##_out is
   what lt_bind_op binds; it costs one test when the last argument is not a
   table. */
int lt_out_call(lua_State *L, lua_CFunction fn);
#define LT_OUT_BINDING(fn)                                                                            \
  static int fn##_out(lua_State *L) {                                                                 \
    if (__builtin_expect(lua_type(L, lua_gettop(L)) == LUA_TTABLE, 0)) return lt_out_call(L, fn);     \
    return fn(L);                                                                                     \
  }
/* Calls bind(L, name, len, op) for each Lua name of the registry's ops
   first..end-1: its own name when it has one, and each alias. */
typedef void (*lt_op_binder)(lua_State *L, const char *name, size_t len, int op);
void lt_bind_registry(lua_State *L, int first, int end, lt_op_binder bind);
/* In a binding bound with code op * 2 + inplace: the op and (in *inplace)
   the flag, with the name Lua called it by ("clamp_") in name. */
int lt_bound_op(lua_State *L, char *name, size_t size, int *inplace);
/* Raises mt_error() naming the op as called (name): a kernel that writes in
   place names itself with "_" (index_add_:), and a form reached through
   another entry names that entry (clamp_min_: for x:clamp_(lo)). */
int lt_error_as_called(lua_State *L, const char *name, int op, int inplace);

/* The same for ops with no derivative yet: they raise when an input requires
   grad rather than return a result without history (lt_autograd.c). */
void lt_setfuncs_guarded(lua_State *L, const luaL_Reg *methods, const luaL_Reg *functions);

/* areas, each in its own file */
void lt_open_tensor(lua_State *L);
void lt_open_math(lua_State *L);
void lt_open_reduce(lua_State *L);
void lt_open_index(lua_State *L);
void lt_open_shape(lua_State *L);
void lt_open_linalg(lua_State *L);
void lt_open_random(lua_State *L);
void lt_open_util(lua_State *L);
void lt_open_optim(lua_State *L);
void lt_open_data(lua_State *L);
void lt_open_serialize(lua_State *L);
void lt_open_autograd(lua_State *L);
void lt_open_conv(lua_State *L);
void lt_open_lapack(lua_State *L);
void lt_open_storage(lua_State *L);
void lt_open_gate(lua_State *L);
void lt_open_profiler(lua_State *L);
void lt_open_memory(lua_State *L);

/* A Torch7 storage object (lt_storage.c): a window of size elements at
   offset (both in elements of dtype) onto an engine storage. */
typedef struct { mt_storage *s; int dtype; int64_t offset, size; } lt_storage;
lt_storage *lt_test_storage(lua_State *L, int i);          /* NULL when i holds none */
lt_storage *lt_push_storage(lua_State *L, mt_storage *s, int dtype, int64_t offset, int64_t size);

/* autograd fields of tensors (grad, requires_grad, grad_fn, is_leaf, data):
   1 when k is one of them (get: value pushed; set: value at index v stored) */
int lt_autograd_field(lua_State *L, mt_tensor *t, const char *k);
int lt_autograd_set_field(lua_State *L, mt_tensor *t, const char *k, int v);
/* The requires_grad= option of creation functions, applied to r. */
void lt_opt_requires_grad(lua_State *L, int opts, mt_tensor *r);

/* __index / __newindex with a tensor key (masks, index tensors): lt_index.c */
int lt_index_get_tensor(lua_State *L, mt_tensor *t, mt_tensor *key);
void lt_index_set_tensor(lua_State *L, mt_tensor *t, mt_tensor *key, int value);

#endif
