/* lt_optim.c: Lua bindings of the fused optimizer updates (mt_optim.h) as
   torch._optim_* functions, which lib/optim calls once per parameter and
   step. Arguments are positional (no option tables on this path); scalars
   that depend on the step count come computed from Lua. */
#include "lt.h"
#include "../tensor/mt_optim.h"

/* An optional state buffer: nil gives NULL. */
static mt_tensor *opt_tensor(lua_State *L, int i, const char *op) {
  return lua_isnoneornil(L, i) ? NULL : lt_check(L, i, op);
}

static double num(lua_State *L, int i) { return luaL_checknumber(L, i); }
static int flag(lua_State *L, int i) { return lua_toboolean(L, i); }

/* torch._optim_sgd(p, grad, buf|nil, lr, weight_decay, momentum, dampening,
   nesterov, maximize, first_step) */
static int o_sgd(lua_State *L) {
  const char *op = "_optim_sgd";
  mt_sgd_args a = {num(L, 4), num(L, 5), num(L, 6), num(L, 7), flag(L, 8), flag(L, 9), flag(L, 10)};
  LT_TRY(L, mt_optim_sgd(lt_check(L, 1, op), lt_check(L, 2, op), opt_tensor(L, 3, op), &a));
  return 0;
}

/* torch._optim_adam(p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq|nil, lr,
   beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2,
   amsgrad, maximize, decoupled) */
static int o_adam(lua_State *L) {
  const char *op = "_optim_adam";
  mt_adam_args a = {num(L, 6), num(L, 7), num(L, 8), num(L, 9), num(L, 10), num(L, 11), num(L, 12),
                    flag(L, 13), flag(L, 14), flag(L, 15)};
  LT_TRY(L, mt_optim_adam(lt_check(L, 1, op), lt_check(L, 2, op), lt_check(L, 3, op), lt_check(L, 4, op),
                          opt_tensor(L, 5, op), &a));
  return 0;
}

/* torch._optim_rmsprop(p, grad, square_avg, grad_avg|nil, buf|nil, lr, alpha,
   eps, weight_decay, momentum, centered, maximize) */
static int o_rmsprop(lua_State *L) {
  const char *op = "_optim_rmsprop";
  mt_rmsprop_args a = {num(L, 6), num(L, 7), num(L, 8), num(L, 9), num(L, 10), flag(L, 11), flag(L, 12)};
  LT_TRY(L, mt_optim_rmsprop(lt_check(L, 1, op), lt_check(L, 2, op), lt_check(L, 3, op), opt_tensor(L, 4, op),
                             opt_tensor(L, 5, op), &a));
  return 0;
}

/* torch._optim_adagrad(p, grad, sum, clr, eps, weight_decay, maximize) */
static int o_adagrad(lua_State *L) {
  const char *op = "_optim_adagrad";
  mt_adagrad_args a = {num(L, 4), num(L, 5), num(L, 6), flag(L, 7)};
  LT_TRY(L, mt_optim_adagrad(lt_check(L, 1, op), lt_check(L, 2, op), lt_check(L, 3, op), &a));
  return 0;
}

/* torch._optim_adadelta(p, grad, square_avg, acc_delta, lr, rho, eps,
   weight_decay, maximize) */
static int o_adadelta(lua_State *L) {
  const char *op = "_optim_adadelta";
  mt_adadelta_args a = {num(L, 5), num(L, 6), num(L, 7), num(L, 8), flag(L, 9)};
  LT_TRY(L, mt_optim_adadelta(lt_check(L, 1, op), lt_check(L, 2, op), lt_check(L, 3, op), lt_check(L, 4, op), &a));
  return 0;
}

/* torch._optim_adamax(p, grad, exp_avg, exp_inf, clr, beta1, beta2, eps,
   weight_decay, maximize) */
static int o_adamax(lua_State *L) {
  const char *op = "_optim_adamax";
  mt_adamax_args a = {num(L, 5), num(L, 6), num(L, 7), num(L, 8), num(L, 9), flag(L, 10)};
  LT_TRY(L, mt_optim_adamax(lt_check(L, 1, op), lt_check(L, 2, op), lt_check(L, 3, op), lt_check(L, 4, op), &a));
  return 0;
}

/* torch._optim_nadam(p, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps,
   weight_decay, bias_correction2, grad_coef, avg_coef, decoupled, maximize) */
static int o_nadam(lua_State *L) {
  const char *op = "_optim_nadam";
  mt_nadam_args a = {num(L, 5), num(L, 6), num(L, 7), num(L, 8), num(L, 9), num(L, 10), num(L, 11), num(L, 12),
                     flag(L, 13), flag(L, 14)};
  LT_TRY(L, mt_optim_nadam(lt_check(L, 1, op), lt_check(L, 2, op), lt_check(L, 3, op), lt_check(L, 4, op), &a));
  return 0;
}

/* torch._optim_radam(p, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps,
   weight_decay, bias_correction1, bias_correction2, rect, decoupled,
   maximize) */
static int o_radam(lua_State *L) {
  const char *op = "_optim_radam";
  mt_radam_args a = {num(L, 5), num(L, 6), num(L, 7), num(L, 8), num(L, 9), num(L, 10), num(L, 11), num(L, 12),
                     flag(L, 13), flag(L, 14)};
  LT_TRY(L, mt_optim_radam(lt_check(L, 1, op), lt_check(L, 2, op), lt_check(L, 3, op), lt_check(L, 4, op), &a));
  return 0;
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
