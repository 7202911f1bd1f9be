-- optim.LBFGS, as torch.optim.LBFGS: limited-memory BFGS over all
-- parameters seen as one flat vector, with an optional strong-Wolfe line
-- search (cubic interpolation, zoom). Its step needs a closure that
-- re-evaluates the loss. The iteration itself works on any "problem" (flat
-- gradient, move along a direction, save and restore the point), so
-- optim.lbfgs, the Torch7 function over a flat tensor, runs the same code.
local torch = require 'torch'
local optim = require 'optim'

-- The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1
-- and g2, clamped to [lo, hi] (default: between x1 and x2); the middle of
-- the interval when the cubic has no minimum.
local function cubic_interpolate(x1, f1, g1, x2, f2, g2, lo, hi)
  if lo == nil then
    if x1 <= x2 then lo, hi = x1, x2 else lo, hi = x2, x1 end
  end
  local d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
  local d2_square = d1 * d1 - g1 * g2
  if d2_square >= 0 then
    local d2 = math.sqrt(d2_square)
    local min_pos
    if x1 <= x2 then
      min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else
      min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    end
    return math.min(math.max(min_pos, lo), hi)
  end
  return (lo + hi) / 2
end

local function dot(a, b) return a:dot(b):item() end

local C1, C2 = 1e-4, 0.9      -- sufficient decrease and curvature constants

-- Strong-Wolfe line search from step t along d (f, g, gtd: loss, gradient
-- and directional derivative at t = 0). evaluate(t) gives loss and flat
-- gradient at x + t d. Returns the loss, gradient and t chosen, and the
-- number of evaluations.
local function strong_wolfe(evaluate, t, d, f, g, gtd, tolerance_change, max_ls)
  local d_norm = d:abs():max():item()
  g = g:clone()
  local f_new, g_new = evaluate(t)
  local evals = 1
  local gtd_new = dot(g_new, d)
  local t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
  local done, ls_iter = false, 0
  local bracket, bracket_f, bracket_g, bracket_gtd
  -- bracketing phase: grow t until an interval holds a point satisfying the conditions
  local function bracket_last_two()
    bracket, bracket_f = {t_prev, t}, {f_prev, f_new}
    bracket_g, bracket_gtd = {g_prev, g_new:clone()}, {gtd_prev, gtd_new}
  end
  while ls_iter < max_ls do
    if f_new > f + C1 * t * gtd or (ls_iter > 1 and f_new >= f_prev) then
      bracket_last_two()
      break
    end
    if math.abs(gtd_new) <= -C2 * gtd then
      bracket, bracket_f, bracket_g = {t}, {f_new}, {g_new}
      done = true
      break
    end
    if gtd_new >= 0 then
      bracket_last_two()
      break
    end
    local min_step, max_step = t + 0.01 * (t - t_prev), t * 10
    local previous = t
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, min_step, max_step)
    t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new:clone(), gtd_new
    f_new, g_new = evaluate(t)
    evals = evals + 1
    gtd_new = dot(g_new, d)
    ls_iter = ls_iter + 1
  end
  if ls_iter == max_ls then
    bracket, bracket_f, bracket_g = {0, t}, {f, f_new}, {g, g_new}
  end
  -- zoom phase: shrink the interval until a point satisfies the conditions
  local insufficient_progress = false
  local low, high = 1, 2
  if bracket_f[1] > bracket_f[#bracket_f] then low, high = 2, 1 end
  while not done and ls_iter < max_ls do
    if math.abs(bracket[2] - bracket[1]) * d_norm < tolerance_change then break end
    t = cubic_interpolate(bracket[1], bracket_f[1], bracket_gtd[1], bracket[2], bracket_f[2], bracket_gtd[2])
    local b_max, b_min = math.max(bracket[1], bracket[2]), math.min(bracket[1], bracket[2])
    local eps = 0.1 * (b_max - b_min)
    -- too close to an end: move away from it, unless the last step made progress
    if math.min(b_max - t, t - b_min) < eps then
      if insufficient_progress or t >= b_max or t <= b_min then
        if math.abs(t - b_max) < math.abs(t - b_min) then t = b_max - eps else t = b_min + eps end
        insufficient_progress = false
      else
        insufficient_progress = true
      end
    else
      insufficient_progress = false
    end
    f_new, g_new = evaluate(t)
    evals = evals + 1
    gtd_new = dot(g_new, d)
    ls_iter = ls_iter + 1
    if f_new > f + C1 * t * gtd or f_new >= bracket_f[low] then
      bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new:clone(), gtd_new
      if bracket_f[1] <= bracket_f[2] then low, high = 1, 2 else low, high = 2, 1 end
    else
      if math.abs(gtd_new) <= -C2 * gtd then
        done = true
      elseif gtd_new * (bracket[high] - bracket[low]) >= 0 then
        bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
        bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
      end
      bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new:clone(), gtd_new
    end
  end
  return bracket_f[low], bracket_g[low], bracket[low], evals
end

local function max_abs(t) return t:abs():max():item() end
local function sum_abs(t) return t:abs():sum():item() end

-- optim._lbfgs_run(problem, state, o): up to o.max_iter L-BFGS iterations.
-- problem.evaluate() -> loss (a number, negated when maximizing), the value
-- as given, flat gradient (a fresh tensor); problem.add(t, d) moves the
-- point by t d; problem.save() / problem.restore(saved). state carries the
-- history between calls. o: lr, max_iter, max_eval, tolerance_grad,
-- tolerance_change, history_size, line_search_fn; norm = 'sum' measures
-- the gradient and the step by the sum of absolute values (Torch7's
-- optim.lbfgs) instead of the largest one (PyTorch's); line_search_call(t,
-- d, f, g, gtd), when given, is a line search that moves the point itself
-- and returns the loss, flat gradient, step and evaluation count. Returns
-- the first value and the list of losses evaluated by the iterations.
function optim._lbfgs_run(problem, state, o)
  local size_of = o.norm == 'sum' and sum_abs or max_abs
  state.func_evals = state.func_evals or 0
  state.n_iter = state.n_iter or 0
  local loss, orig_loss, flat_grad = problem.evaluate()
  local losses = {loss}
  local current_evals = 1
  state.func_evals = state.func_evals + 1
  if size_of(flat_grad) <= o.tolerance_grad then return orig_loss, losses end
  local d, t = state.d, state.t
  local old_dirs, old_stps, ro, H_diag = state.old_dirs, state.old_stps, state.ro, state.H_diag
  local prev_flat_grad, prev_loss = state.prev_flat_grad, state.prev_loss
  local n_iter = 0
  while n_iter < o.max_iter do
    n_iter = n_iter + 1
    state.n_iter = state.n_iter + 1
    if state.n_iter == 1 then
      d = -flat_grad
      old_dirs, old_stps, ro, H_diag = {}, {}, {}, 1
    else
      -- update the curvature pairs, then the two-loop recursion for d = -H g
      local y = flat_grad - prev_flat_grad
      local s = d * t
      local ys = dot(y, s)
      if ys > 1e-10 then
        if #old_dirs == o.history_size then
          table.remove(old_dirs, 1)
          table.remove(old_stps, 1)
          table.remove(ro, 1)
        end
        old_dirs[#old_dirs + 1], old_stps[#old_stps + 1], ro[#ro + 1] = y, s, 1 / ys
        H_diag = ys / dot(y, y)
      end
      local al = {}
      local q = -flat_grad
      for i = #old_dirs, 1, -1 do
        al[i] = dot(old_stps[i], q) * ro[i]
        q:add_(old_dirs[i], {alpha = -al[i]})
      end
      d = q * H_diag
      for i = 1, #old_dirs do
        local be_i = dot(old_dirs[i], d) * ro[i]
        d:add_(old_stps[i], {alpha = al[i] - be_i})
      end
    end
    if prev_flat_grad == nil then prev_flat_grad = flat_grad:clone() else prev_flat_grad:copy_(flat_grad) end
    prev_loss = loss
    if state.n_iter == 1 then
      t = math.min(1, 1 / flat_grad:abs():sum():item()) * o.lr
    else
      t = o.lr
    end
    local gtd = dot(flat_grad, d)
    if gtd > -o.tolerance_change then break end      -- not a descent direction
    local ls_evals, opt_cond = 0, false
    if o.line_search_call then
      loss, flat_grad, t, ls_evals = o.line_search_call(t, d, loss, flat_grad, gtd)
      opt_cond = size_of(flat_grad) <= o.tolerance_grad
      losses[#losses + 1] = loss
    elseif o.line_search_fn then
      local x_init = problem.save()
      local function at(step)
        problem.add(step, d)
        local l, _, g = problem.evaluate()
        problem.restore(x_init)
        return l, g
      end
      loss, flat_grad, t, ls_evals = strong_wolfe(at, t, d, loss, flat_grad, gtd, o.tolerance_change,
                                                  o.max_eval - current_evals)
      problem.add(t, d)
      opt_cond = size_of(flat_grad) <= o.tolerance_grad
      losses[#losses + 1] = loss
    else
      problem.add(t, d)
      if n_iter ~= o.max_iter then
        loss, _, flat_grad = problem.evaluate()
        opt_cond = size_of(flat_grad) <= o.tolerance_grad
        ls_evals = 1
        losses[#losses + 1] = loss
      end
    end
    current_evals = current_evals + ls_evals
    state.func_evals = state.func_evals + ls_evals
    if n_iter == o.max_iter or current_evals >= o.max_eval or opt_cond then break end
    if size_of(d * t) <= o.tolerance_change or math.abs(loss - prev_loss) < o.tolerance_change then break end
  end
  state.d, state.t = d, t
  state.old_dirs, state.old_stps, state.ro, state.H_diag = old_dirs, old_stps, ro, H_diag
  state.prev_flat_grad, state.prev_loss = prev_flat_grad, prev_loss
  return orig_loss, losses
end

-- A loss as a Lua number: closures may return a number or a one-element tensor.
function optim._loss_number(value, name)
  if type(value) == 'number' then return value end
  if torch.is_tensor(value) and value:numel() == 1 then return value:item() end
  optim._error('%s: the closure must return the loss (a number or a one-element tensor), got %s', name,
               torch.type(value))
end

local LBFGS = torch.class('optim.LBFGS', 'optim.Optimizer')

local defaults = {lr = 1, max_iter = 20, max_eval = false, tolerance_grad = 1e-7, tolerance_change = 1e-9,
                  history_size = 100, line_search_fn = false, maximize = false}

-- optim.LBFGS(params, {lr=1, max_iter=20, max_eval=max_iter*5//4,
-- tolerance_grad=1e-7, tolerance_change=1e-9, history_size=100,
-- line_search_fn=nil|'strong_wolfe', maximize=false}); one parameter group.
local sig = optim._signature('optim.LBFGS', 'params', {'lr', 'max_iter', 'max_eval', 'tolerance_grad', 'tolerance_change',
                                                       'history_size', 'line_search_fn'}, defaults)
function LBFGS:__init(params, ...)
  local o = optim._args(sig, ...)
  if not o.max_eval then o.max_eval = o.max_iter * 5 // 4 end
  optim.Optimizer.__init(self, params, o)
  if #self.param_groups ~= 1 then
    optim._error("optim.LBFGS: doesn't support per-parameter options (parameter groups): got %d groups",
                 #self.param_groups)
  end
end

function LBFGS:check_group(g)
  local name = 'optim.LBFGS'
  optim._check_nonneg(name, 'learning rate', g.lr)
  if math.type(g.max_iter) ~= 'integer' or g.max_iter < 1 then
    optim._error('%s: max_iter must be a positive integer, got %s', name, tostring(g.max_iter))
  end
  if math.type(g.history_size) ~= 'integer' or g.history_size < 1 then
    optim._error('%s: history_size must be a positive integer, got %s', name, tostring(g.history_size))
  end
  if g.line_search_fn and g.line_search_fn ~= 'strong_wolfe' then
    optim._error("%s: line_search_fn must be nil or 'strong_wolfe', got %s", name, tostring(g.line_search_fn))
  end
end

local function flat_gradient(params, maximize)
  local parts = {}
  for i, p in ipairs(params) do
    local g = p.grad
    parts[i] = g == nil and torch.zeros(p:numel(), {dtype = p.dtype}) or g:reshape(-1)
  end
  local flat = #parts == 1 and parts[1]:clone() or torch.cat(parts, 1)
  if maximize then flat:neg_() end
  return flat
end

-- opt:step(closure): runs up to max_iter iterations; returns the loss the
-- closure gave first.
function LBFGS:step(closure)
  local name = 'optim.LBFGS'
  if closure == nil then
    optim._error('%s: step needs a closure that re-evaluates the model and returns the loss', name)
  end
  if #self.param_groups ~= 1 then
    optim._error("%s: doesn't support parameter groups (has %d)", name, #self.param_groups)
  end
  local group = self.param_groups[1]
  local params, maximize = group.params, group.maximize
  local problem = {}
  function problem.evaluate()
    local value = closure()
    local loss = optim._loss_number(value, name)
    if maximize then loss = -loss end
    return loss, value, flat_gradient(params, maximize)
  end
  function problem.add(t, d)
    local offset = 1
    for _, p in ipairs(params) do
      local n = p:numel()
      p:add_(d:narrow(1, offset, n):view_as(p), {alpha = t})
      offset = offset + n
    end
  end
  function problem.save()
    local copies = {}
    for i, p in ipairs(params) do copies[i] = p:clone() end
    return copies
  end
  function problem.restore(copies)
    for i, p in ipairs(params) do p:copy_(copies[i]) end
  end
  local loss = optim._lbfgs_run(problem, self.state[params[1]], group)
  return loss
end

return LBFGS
