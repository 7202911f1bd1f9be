/* lt_optim.c: Lua bindings of the registry's optimizer steps
   (MT_OPTIM_OPS: the fused updates of mt_optim.h) as torch._optim_*
   functions, which lib/optim calls once per parameter and step, through the
   dispatcher. Arguments are positional (no option tables on this path);
   scalars that depend on the step count come computed from Lua. */
#include "lt.h"
#include "../ops/dispatch.h"

/* An optional state buffer: nil gives NULL. */
static mt_tensor *opt_tensor(lua_State *L, int i, const char *op) {
  return lua_isnoneornil(L, i) ? NULL : lt_check(L, i, op);
}

static double num(lua_State *L, int i) { return luaL_checknumber(L, i); }
static int flag(lua_State *L, int i) { return lua_toboolean(L, i); }

/* the tensors at 1 .. n into a->t, nil allowed from position `optional` on */
static void tensors(lua_State *L, const char *op, mt_optim_args *a, int n, int optional) {
  for (int i = 0; i < n; i++) a->t[i] = i + 1 >= optional ? opt_tensor(L, i + 1, op) : lt_check(L, i + 1, op);
}

static int step(lua_State *L, mt_op op, mt_optim_args *a) {
  LT_TRY(L, mt_call_optim(op, a));
  return 0;
}

/* torch._optim_sgd(p, grad, buf|nil, lr, weight_decay, momentum, dampening,
   nesterov, maximize, first_step) */
static int o_sgd(lua_State *L) {
  const char *op = "_optim_sgd";
  mt_sgd_args h = {num(L, 4), num(L, 5), num(L, 6), num(L, 7), flag(L, 8), flag(L, 9), flag(L, 10)};
  mt_optim_args a = {.sgd = &h};
  tensors(L, op, &a, 3, 3);
  return step(L, MT_OP_optim_sgd, &a);
}

/* torch._optim_adam(p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq|nil, lr,
   beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2,
   amsgrad, maximize, decoupled) */
static int o_adam(lua_State *L) {
  const char *op = "_optim_adam";
  mt_adam_args h = {num(L, 6), num(L, 7), num(L, 8), num(L, 9), num(L, 10), num(L, 11), num(L, 12),
                    flag(L, 13), flag(L, 14), flag(L, 15)};
  mt_optim_args a = {.adam = &h};
  tensors(L, op, &a, 5, 5);
  return step(L, MT_OP_optim_adam, &a);
}

/* torch._optim_rmsprop(p, grad, square_avg, grad_avg|nil, buf|nil, lr, alpha,
   eps, weight_decay, momentum, centered, maximize) */
static int o_rmsprop(lua_State *L) {
  const char *op = "_optim_rmsprop";
  mt_rmsprop_args h = {num(L, 6), num(L, 7), num(L, 8), num(L, 9), num(L, 10), flag(L, 11), flag(L, 12)};
  mt_optim_args a = {.rmsprop = &h};
  tensors(L, op, &a, 5, 4);
  return step(L, MT_OP_optim_rmsprop, &a);
}

/* torch._optim_adagrad(p, grad, sum, clr, eps, weight_decay, maximize) */
static int o_adagrad(lua_State *L) {
  const char *op = "_optim_adagrad";
  mt_adagrad_args h = {num(L, 4), num(L, 5), num(L, 6), flag(L, 7)};
  mt_optim_args a = {.adagrad = &h};
  tensors(L, op, &a, 3, 4);
  return step(L, MT_OP_optim_adagrad, &a);
}

/* torch._optim_adadelta(p, grad, square_avg, acc_delta, lr, rho, eps,
   weight_decay, maximize) */
static int o_adadelta(lua_State *L) {
  const char *op = "_optim_adadelta";
  mt_adadelta_args h = {num(L, 5), num(L, 6), num(L, 7), num(L, 8), flag(L, 9)};
  mt_optim_args a = {.adadelta = &h};
  tensors(L, op, &a, 4, 5);
  return step(L, MT_OP_optim_adadelta, &a);
}

/* torch._optim_adamax(p, grad, exp_avg, exp_inf, clr, beta1, beta2, eps,
   weight_decay, maximize) */
static int o_adamax(lua_State *L) {
  const char *op = "_optim_adamax";
  mt_adamax_args h = {num(L, 5), num(L, 6), num(L, 7), num(L, 8), num(L, 9), flag(L, 10)};
  mt_optim_args a = {.adamax = &h};
  tensors(L, op, &a, 4, 5);
  return step(L, MT_OP_optim_adamax, &a);
}

/* torch._optim_nadam(p, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps,
   weight_decay, bias_correction2, grad_coef, avg_coef, decoupled, maximize) */
static int o_nadam(lua_State *L) {
  const char *op = "_optim_nadam";
  mt_nadam_args h = {num(L, 5), num(L, 6), num(L, 7), num(L, 8), num(L, 9), num(L, 10), num(L, 11), num(L, 12),
                     flag(L, 13), flag(L, 14)};
  mt_optim_args a = {.nadam = &h};
  tensors(L, op, &a, 4, 5);
  return step(L, MT_OP_optim_nadam, &a);
}

/* torch._optim_radam(p, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps,
   weight_decay, bias_correction1, bias_correction2, rect, decoupled,
   maximize) */
static int o_radam(lua_State *L) {
  const char *op = "_optim_radam";
  mt_radam_args h = {num(L, 5), num(L, 6), num(L, 7), num(L, 8), num(L, 9), num(L, 10), num(L, 11), num(L, 12),
                     flag(L, 13), flag(L, 14)};
  mt_optim_args a = {.radam = &h};
  tensors(L, op, &a, 4, 5);
  return step(L, MT_OP_optim_radam, &a);
}

static const luaL_Reg functions[] = {
  {"_optim_sgd", o_sgd}, {"_optim_adam", o_adam}, {"_optim_rmsprop", o_rmsprop},
  {"_optim_adagrad", o_adagrad}, {"_optim_adadelta", o_adadelta}, {"_optim_adamax", o_adamax},
  {"_optim_nadam", o_nadam}, {"_optim_radam", o_radam},
  {NULL, NULL}};

/* every update runs on its parameter's device (mt_optim.c checks the rest) */
void lt_open_optim(lua_State *L) {
  lt_setfuncs(L, NULL, functions);
  static const char *const any_device[] = {"_optim_sgd", "_optim_adam", "_optim_rmsprop", "_optim_adagrad",
                                           "_optim_adadelta", "_optim_adamax", "_optim_nadam", "_optim_radam", NULL};
  lt_mark_any_device(L, -2, any_device);
}
