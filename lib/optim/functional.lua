-- Torch7's functional optimizers: optim.sgd(opfunc, x, config, state) and
-- friends. x is a flat parameter tensor (model:getParameters()); opfunc(x)
-- returns the loss and the gradient at x; config holds Torch7's option
-- names (learningRate, weightDecay, ...) and state (config itself when left
-- out) the buffers kept between calls. Each returns x (updated in place) and
-- {fx}. The updates share the fused kernels of the optimizer classes, so
-- optim.adam matches optim.Adam step for step.
local torch = require 'torch'
local optim = require 'optim'

local fail = optim._error

-- optim._evaluate(name, opfunc, x): evaluates opfunc at x and checks what
-- it returns: the loss and a gradient shaped as x.
function optim._evaluate(name, opfunc, x)
  if not torch.is_tensor(x) then fail('%s: x must be a tensor (the flat parameters), got %s', name, torch.type(x)) end
  local fx, dfdx = opfunc(x)
  if not torch.is_tensor(dfdx) or dfdx:numel() ~= x:numel() then
    fail('%s: opfunc must return the loss and a gradient with %d elements (as x), got %s', name, x:numel(),
         torch.is_tensor(dfdx) and ('a tensor of size ' .. tostring(dfdx:size())) or torch.type(dfdx))
  end
  if dfdx:size() ~= x:size() then dfdx = dfdx:reshape(x:size()) end
  return fx, dfdx
end
local evaluate = optim._evaluate

local function zeros(x) return torch.zeros_like(x) end

-- optim.sgd(opfunc, x, config, state): config learningRate (1e-3),
-- learningRateDecay (0), weightDecay (0), momentum (0), dampening (momentum,
-- as Torch7), nesterov (false), learningRates and weightDecays (tensors of
-- per-element factors, optional).
function optim.sgd(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local name = 'optim.sgd'
  local lr, lrd = config.learningRate or 1e-3, config.learningRateDecay or 0
  local wd, mom = config.weightDecay or 0, config.momentum or 0
  local damp, nesterov = config.dampening or mom, config.nesterov or false
  local lrs, wds = config.learningRates, config.weightDecays
  if nesterov and (mom <= 0 or damp ~= 0) then
    fail('%s: Nesterov momentum requires a momentum and zero dampening (momentum %s, dampening %s)', name,
         tostring(mom), tostring(damp))
  end
  state.evalCounter = state.evalCounter or 0
  local fx, dfdx = evaluate(name, opfunc, x)
  local clr = lr / (1 + state.evalCounter * lrd)
  if lrs == nil and wds == nil then
    local first = false
    if mom ~= 0 and state.dfdx == nil then state.dfdx = zeros(x); first = true end
    torch._optim_sgd(x, dfdx, mom ~= 0 and state.dfdx or nil, clr, wd, mom, damp, nesterov, false, first)
  else
    -- per-element rates or decays: the same rule with tensor ops
    torch.no_grad(function()
      local d = dfdx
      if wd ~= 0 then d = d + x * wd elseif wds then d = d + wds * x end
      if mom ~= 0 then
        if state.dfdx == nil then state.dfdx = d:clone()
        else state.dfdx:mul_(mom):add_(d, {alpha = 1 - damp}) end
        if nesterov then d = d + state.dfdx * mom else d = state.dfdx end
      end
      if lrs then d = d * lrs end
      x:add_(d, {alpha = -clr})
    end)
  end
  state.evalCounter = state.evalCounter + 1
  return x, {fx}
end

-- optim.adam(opfunc, x, config, state): config learningRate (1e-3),
-- learningRateDecay (0), beta1 (0.9), beta2 (0.999), epsilon (1e-8),
-- weightDecay (0). Torch7's rule: epsilon is added to sqrt(v) before the
-- bias correction (the fused kernel adds it after, so it gets
-- epsilon / sqrt(1 - beta2^t)); state t, m, v.
function optim.adam(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local lr, lrd = config.learningRate or 1e-3, config.learningRateDecay or 0
  local beta1, beta2 = config.beta1 or 0.9, config.beta2 or 0.999
  local eps, wd = config.epsilon or 1e-8, config.weightDecay or 0
  local fx, dfdx = evaluate('optim.adam', opfunc, x)
  state.t = state.t or 0
  state.m = state.m or zeros(x)
  state.v = state.v or zeros(x)
  local clr = lr / (1 + state.t * lrd)
  state.t = state.t + 1
  local bias2 = 1 - beta2 ^ state.t
  torch._optim_adam(x, dfdx, state.m, state.v, nil, clr, beta1, beta2, eps / math.sqrt(bias2), wd,
                    1 - beta1 ^ state.t, bias2, false, false, false)
  return x, {fx}
end

-- optim.rmsprop(opfunc, x, config, state): config learningRate (1e-2),
-- alpha (0.99), epsilon (1e-8), weightDecay (0), initialMean (0, the
-- first value of state.m, the running mean of squared gradients).
function optim.rmsprop(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local fx, dfdx = evaluate('optim.rmsprop', opfunc, x)
  state.m = state.m or torch.full_like(x, config.initialMean or 0)
  torch._optim_rmsprop(x, dfdx, state.m, nil, nil, config.learningRate or 1e-2, config.alpha or 0.99,
                       config.epsilon or 1e-8, config.weightDecay or 0, 0, false, false)
  return x, {fx}
end

-- optim.adagrad(opfunc, x, config, state): config learningRate (1e-3),
-- learningRateDecay (0), weightDecay (0); epsilon 1e-10.
function optim.adagrad(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local lr, lrd = config.learningRate or 1e-3, config.learningRateDecay or 0
  local fx, dfdx = evaluate('optim.adagrad', opfunc, x)
  state.evalCounter = state.evalCounter or 0
  state.paramVariance = state.paramVariance or zeros(x)
  local clr = lr / (1 + state.evalCounter * lrd)
  torch._optim_adagrad(x, dfdx, state.paramVariance, clr, config.epsilon or 1e-10, config.weightDecay or 0, false)
  state.evalCounter = state.evalCounter + 1
  return x, {fx}
end

-- optim.adadelta(opfunc, x, config, state): config rho (0.9), eps (1e-6),
-- weightDecay (0), learningRate (1, Torch7 has none: it steps by the
-- whole delta); state paramVariance, accDelta, evalCounter.
function optim.adadelta(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local fx, dfdx = evaluate('optim.adadelta', opfunc, x)
  state.evalCounter = (state.evalCounter or 0) + 1
  state.paramVariance = state.paramVariance or zeros(x)
  state.accDelta = state.accDelta or zeros(x)
  torch._optim_adadelta(x, dfdx, state.paramVariance, state.accDelta, config.learningRate or 1, config.rho or 0.9,
                        config.eps or 1e-6, config.weightDecay or 0, false)
  return x, {fx}
end

-- optim.adamax(opfunc, x, config, state): config learningRate (2e-3),
-- beta1 (0.9), beta2 (0.999), epsilon (1e-38, as Torch7), weightDecay (0).
function optim.adamax(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local lr, beta1, beta2 = config.learningRate or 2e-3, config.beta1 or 0.9, config.beta2 or 0.999
  local fx, dfdx = evaluate('optim.adamax', opfunc, x)
  state.t = (state.t or 0) + 1
  state.m = state.m or zeros(x)
  state.u = state.u or zeros(x)
  torch._optim_adamax(x, dfdx, state.m, state.u, lr / (1 - beta1 ^ state.t), beta1, beta2, config.epsilon or 1e-38,
                      config.weightDecay or 0, false)
  return x, {fx}
end

-- optim.nag(opfunc, x, config, state): Nesterov's accelerated gradient in
-- Sutskever's form, as Torch7: x moves by momentum * v first, the gradient
-- is taken there, then v = momentum v - clr g and x -= clr g. config
-- learningRate (1e-3), learningRateDecay (0), weightDecay (0), momentum
-- (0.9, must be > 0), learningRates (optional per-element factors).
function optim.nag(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local name = 'optim.nag'
  local lr, lrd = config.learningRate or 1e-3, config.learningRateDecay or 0
  local wd, mom, lrs = config.weightDecay or 0, config.momentum or 0.9, config.learningRates
  if mom <= 0 then fail('%s: momentum must be positive for Nesterov accelerated gradient, got %s', name, tostring(mom)) end
  state.evalCounter = state.evalCounter or 0
  if state.dfdx then torch.no_grad(function() x:add_(state.dfdx, {alpha = mom}) end) end
  local fx, dfdx = evaluate(name, opfunc, x)
  torch.no_grad(function()
    local g = dfdx
    if wd ~= 0 then g = g + x * wd end
    local clr = lr / (1 + state.evalCounter * lrd)
    if state.dfdx == nil then state.dfdx = zeros(x) else state.dfdx:mul_(mom) end
    local step = lrs and g * lrs or g
    x:add_(step, {alpha = -clr})
    state.dfdx:add_(step, {alpha = -clr})
  end)
  state.evalCounter = state.evalCounter + 1
  return x, {fx}
end

-- optim.lbfgs(opfunc, x, config, state): L-BFGS (the iteration of
-- optim.LBFGS). config maxIter (20), maxEval (maxIter * 1.25), tolFun
-- (1e-5, on the sum of the gradient's absolute values, as Torch7), tolX
-- (1e-9, on the step's and the loss's change), nCorrection (100),
-- learningRate (1), lineSearch (nil: fixed steps of learningRate; a
-- function with optim.lswolfe's signature, such as optim.lswolfe, called
-- as lineSearch(opfunc, x, t, d, f, g, gtd, config.lineSearchOptions); or
-- 'strong_wolfe', optim.LBFGS's search). Returns x, the losses evaluated
-- (f_hist) and the number of evaluations of this call; state.funcEval and
-- state.nIter count over all calls.
function optim.lbfgs(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local name = 'optim.lbfgs'
  if torch.is_tensor(x) and not x:is_contiguous() then fail('%s: x must be contiguous (a flat parameter tensor)', name) end
  local max_iter = config.maxIter or 20
  local line_search = config.lineSearch
  if line_search ~= nil and line_search ~= 'strong_wolfe' and type(line_search) ~= 'function' then
    fail("%s: lineSearch must be nil, a function (optim.lswolfe) or 'strong_wolfe', got %s", name,
         tostring(line_search))
  end
  local o = {lr = config.learningRate or 1, max_iter = max_iter, max_eval = config.maxEval or max_iter * 1.25,
             tolerance_grad = config.tolFun or 1e-5, tolerance_change = config.tolX or 1e-9,
             history_size = config.nCorrection or 100, norm = 'sum'}
  if type(line_search) == 'function' then
    function o.line_search_call(t, d, f, g, gtd)
      local f_new, g_new, _, t_new, evals = line_search(opfunc, x, t, d:view(x:size()), f, g:view(x:size()), gtd,
                                                        config.lineSearchOptions)
      return optim._loss_number(f_new, name), g_new:reshape(-1):clone(), t_new, evals
    end
  else
    o.line_search_fn = line_search
  end
  local problem = {}
  function problem.evaluate()
    local fx, dfdx = evaluate(name, opfunc, x)
    return optim._loss_number(fx, name), fx, dfdx:reshape(-1):clone()
  end
  function problem.add(t, d)
    torch.no_grad(function() x:view(-1):add_(d, {alpha = t}) end)
  end
  function problem.save() return x:clone() end
  function problem.restore(saved) torch.no_grad(function() x:copy_(saved) end) end
  state.lbfgs = state.lbfgs or {}
  local evals_before = state.lbfgs.func_evals or 0
  local _, losses = optim._lbfgs_run(problem, state.lbfgs, o)
  state.funcEval, state.nIter = state.lbfgs.func_evals, state.lbfgs.n_iter
  return x, losses, state.lbfgs.func_evals - evals_before
end

return optim
