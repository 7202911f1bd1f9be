/* mt_optim.h: fused optimizer updates. One call reads a parameter, its
   gradient and its state buffers once and writes them once, with PyTorch's
   update rules (torch.optim, the single-tensor forms). */
#ifndef MT_OPTIM_H
#define MT_OPTIM_H

#include "mt_tensor.h"

/* Every update takes the parameter p (written), its gradient g (read, p's
   shape) and state buffers of p's shape (written; NULL where an option
   leaves one unused). Float64 parameters compute in double, every other
   floating dtype in float. Contiguous operands of the compute dtype are
   updated where they lie; others go through contiguous copies that are
   written back, so any layout gives the same numbers. Scalars that depend
   on the step count only (bias corrections, NAdam's mu) come computed. */

/* SGD: d = g (+ weight_decay p); with momentum, buf = momentum buf +
   (1 - dampening) d (buf = d on the first step) and d = nesterov ?
   d + momentum buf : buf; then p -= lr d. */
typedef struct {
  double lr, weight_decay, momentum, dampening;
  int nesterov, maximize, first_step;
} mt_sgd_args;
int mt_optim_sgd(mt_tensor *p, const mt_tensor *g, mt_tensor *momentum_buffer, const mt_sgd_args *a);

/* Adam and AdamW (decoupled: p *= 1 - lr weight_decay instead of adding
   weight_decay p to g); amsgrad keeps max_exp_avg_sq. bias_correction1/2
   are 1 - beta^step. */
typedef struct {
  double lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2;
  int amsgrad, maximize, decoupled;
} mt_adam_args;
int mt_optim_adam(mt_tensor *p, const mt_tensor *g, mt_tensor *exp_avg, mt_tensor *exp_avg_sq,
                  mt_tensor *max_exp_avg_sq, const mt_adam_args *a);

/* RMSprop: square_avg (and grad_avg when centered, momentum_buffer when
   momentum > 0). */
typedef struct {
  double lr, alpha, eps, weight_decay, momentum;
  int centered, maximize;
} mt_rmsprop_args;
int mt_optim_rmsprop(mt_tensor *p, const mt_tensor *g, mt_tensor *square_avg, mt_tensor *grad_avg,
                     mt_tensor *momentum_buffer, const mt_rmsprop_args *a);

/* Adagrad with the decayed rate clr = lr / (1 + (step - 1) lr_decay). */
typedef struct {
  double clr, eps, weight_decay;
  int maximize;
} mt_adagrad_args;
int mt_optim_adagrad(mt_tensor *p, const mt_tensor *g, mt_tensor *sum, const mt_adagrad_args *a);

typedef struct {
  double lr, rho, eps, weight_decay;
  int maximize;
} mt_adadelta_args;
int mt_optim_adadelta(mt_tensor *p, const mt_tensor *g, mt_tensor *square_avg, mt_tensor *acc_delta,
                      const mt_adadelta_args *a);

/* Adamax with clr = lr / (1 - beta1^step). */
typedef struct {
  double clr, beta1, beta2, eps, weight_decay;
  int maximize;
} mt_adamax_args;
int mt_optim_adamax(mt_tensor *p, const mt_tensor *g, mt_tensor *exp_avg, mt_tensor *exp_inf,
                    const mt_adamax_args *a);

/* NAdam: p += grad_coef g / denom + avg_coef exp_avg / denom, with
   denom = sqrt(exp_avg_sq / bias_correction2) + eps; the coefficients hold
   the momentum schedule (-lr (1 - mu) / (1 - mu_product), ...). */
typedef struct {
  double lr, beta1, beta2, eps, weight_decay, bias_correction2, grad_coef, avg_coef;
  int decoupled, maximize;
} mt_nadam_args;
int mt_optim_nadam(mt_tensor *p, const mt_tensor *g, mt_tensor *exp_avg, mt_tensor *exp_avg_sq,
                   const mt_nadam_args *a);

/* RAdam: rect is the variance rectification term, 0 while rho_t <= 5 (the
   step is then plain bias-corrected momentum). */
typedef struct {
  double lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2, rect;
  int decoupled, maximize;
} mt_radam_args;
int mt_optim_radam(mt_tensor *p, const mt_tensor *g, mt_tensor *exp_avg, mt_tensor *exp_avg_sq,
                   const mt_radam_args *a);

/* torch.amp.GradScaler's unscale: g *= inv_scale in one pass over a CPU
   gradient, *found_inf set to 1 when an element was inf or NaN (left as it
   is otherwise). float64 computes in double, the other floating dtypes in
   float; a gradient that is not contiguous float32/float64 goes through a
   copy that is written back. */
int mt_amp_unscale(mt_tensor *g, double inv_scale, int *found_inf);
/* the same on another device: its backend registers the function (same contract) */
typedef int (*mt_amp_unscale_fn)(mt_tensor *g, double inv_scale, int *found_inf);
void mt_register_amp_unscale(int device, mt_amp_unscale_fn fn);

/* ---- on other devices ----
   The updates above run on the device their parameter lives on. A backend
   registers one function that runs any of them: ops are the parameter, the
   gradient and the state buffers in the order of the functions above (NULL
   where unused; nops of them), all on the device, floating, of the
   parameter's shape (checked before); args is the kind's mt_*_args. Same
   rules as the CPU: float64 parameters compute in double, the rest in
   float; every operand but the gradient is written. */
typedef enum {
  MT_OPTIM_SGD, MT_OPTIM_ADAM, MT_OPTIM_RMSPROP, MT_OPTIM_ADAGRAD, MT_OPTIM_ADADELTA, MT_OPTIM_ADAMAX,
  MT_OPTIM_NADAM, MT_OPTIM_RADAM
} mt_optim_kind;
typedef int (*mt_optim_device_fn)(const char *name, mt_optim_kind kind, mt_tensor *const *ops, int nops,
                                  const void *args);
void mt_register_optim(int device, mt_optim_device_fn fn);

#endif
