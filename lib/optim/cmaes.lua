-- optim.cmaes: the covariance matrix adaptation evolution strategy
-- (N. Hansen's barecmaes2), Torch7's derivative-free function: samples
-- around a mean, moves the mean to the best samples' weighted average and
-- adapts the covariance and the step size from the path the mean took.
local torch = require 'torch'
local optim = require 'optim'

local F64 = {dtype = 'float64'}

-- optim.cmaes(opfunc, x, config, state): opfunc(x) gives the loss (a
-- gradient, if returned, is ignored). config sigma (required: the first
-- step size in each coordinate), maxEval (1e3 * n^2), ftarget (stop below
-- it), popsize (4 + floor(3 log n)), min_iterations (1), verb_disp (0: no
-- printing; k: print every k iterations). Stops at maxEval, ftarget, a
-- condition number over 1e14, a spread of the generation's losses under
-- 1e-12, or a step under 1e-11. Returns the best point found (shaped as
-- x), the best loss of each generation (the first: f(x), the last: the
-- best) and the number of evaluations.
function optim.cmaes(opfunc, x, config, state)
  local name = 'optim.cmaes'
  config = config or {}
  state = state or config
  if not torch.is_tensor(x) or not x:is_floating_point() then
    optim._error('%s: x must be a floating-point tensor, got %s', name, torch.type(x))
  end
  local sigma = state.sigma
  if type(sigma) ~= 'number' or sigma <= 0 then
    optim._error('%s: config.sigma (the first step size) must be a positive number, got %s', name, tostring(sigma))
  end
  local function loss_at(point) return optim._loss_number((opfunc(point)), name) end
  local N = x:numel()
  local xmean = x:reshape(-1):to('float64')
  local max_eval = tonumber(state.maxEval) or 1e3 * N * N
  local ftarget, verb = state.ftarget, state.verb_disp or 0
  local lambda = state.popsize or 4 + math.floor(3 * math.log(N))
  local mu = math.floor(lambda / 2)
  -- recombination weights, log-decreasing over the mu best
  local weights = torch.zeros(mu, F64)
  for i = 1, mu do weights[i] = math.log(lambda / 2 + 0.5) - math.log(i) end
  weights:div_(weights:sum())
  local mueff = 1 / weights:pow(2):sum():item()
  -- adaptation constants
  local cc = (4 + mueff / N) / (N + 4 + 2 * mueff / N)
  local cs = (mueff + 2) / (N + mueff + 5)
  local c1 = 2 / ((N + 1.3) ^ 2 + mueff)
  local cmu = math.min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((N + 2) ^ 2 + mueff))
  local damps = 2 * mueff / lambda + 0.3 + cs
  local pc, ps = torch.zeros(N, F64), torch.zeros(N, F64)
  local B, D, C = torch.eye(N, F64), torch.ones(N, F64), torch.eye(N, F64)
  local invsqrtC = torch.eye(N, F64)
  local eigeneval, counteval, iteration = 0, 0, 0
  local history = {loss_at(x)}
  local best_x, best_f = nil, math.huge
  local fitvals = {}
  local function stopped()
    if counteval == 0 then return nil end
    if counteval >= max_eval then return 'evals' end
    if ftarget ~= nil and fitvals[1] <= ftarget then return 'ftarget' end
    if D:max():item() > 1e7 * D:min():item() then return 'condition' end
    if fitvals[#fitvals] - fitvals[1] < 1e-12 then return 'tolfun' end
    if sigma * D:max():item() < 1e-11 then return 'tolx' end
    return nil
  end
  while iteration < (state.min_iterations or 1) or not stopped() do
    iteration = iteration + 1
    -- refresh B, D (C = B diag(D^2) B^T) when C has changed enough
    if counteval - eigeneval > lambda / (c1 + cmu) / N / 10 then
      eigeneval = counteval
      C = torch.triu(C) + torch.triu(C, 1):t()
      local e, V = torch.symeig(C, 'V')
      D, B = e:clamp(0, math.huge):sqrt(), V
      invsqrtC = B:mm(torch.diag(D:pow(-1))):mm(B:t())
    end
    -- sample lambda candidates m + sigma B (D .* z)
    local candidates = torch.randn(lambda, N, F64):mul_(D):mm(B:t()):mul_(sigma):add_(xmean)
    local scores = torch.zeros(lambda, F64)
    for k = 1, lambda do scores[k] = loss_at(candidates[k]:to(x.dtype):view(x:size())) end
    counteval = counteval + lambda
    local sorted, order = scores:sort()
    fitvals = {}
    for k = 1, lambda do fitvals[k] = sorted[k] end
    local elite = candidates:index_select(1, order:narrow(1, 1, mu))
    history[#history + 1] = fitvals[1]
    if fitvals[1] < best_f then best_f, best_x = fitvals[1], elite[1]:to(x.dtype):view(x:size()) end
    -- move the mean; update the evolution paths
    local xold = xmean
    xmean = elite:t():mv(weights)
    local y = xmean - xold
    ps:mul_(1 - cs):add_(invsqrtC:mv(y), {alpha = math.sqrt(cs * (2 - cs) * mueff) / sigma})
    local ps_sq = ps:pow(2):sum():item()
    local hsig = (ps_sq / (1 - (1 - cs) ^ (2 * counteval / lambda)) / N < 2 + 4 / (N + 1)) and 1 or 0
    pc:mul_(1 - cc):add_(y, {alpha = hsig * math.sqrt(cc * (2 - cc) * mueff) / sigma})
    -- covariance: rank-one (pc pc^T) and rank-mu (weighted elite steps) updates
    local c1a = c1 - (1 - hsig * hsig) * c1 * cc * (2 - cc)
    local steps = (elite - xold) / sigma
    local rank_mu = steps:t():mm(steps * weights:view(mu, 1))
    C = C * (1 - c1a - cmu) + torch.outer(pc, pc) * c1 + rank_mu * cmu
    sigma = sigma * math.exp(math.min(0.6, (cs / damps) * (ps_sq / N - 1) / 2))
    if verb > 0 and (iteration <= 2 or iteration % verb == 0) then
      print(string.format('%d: %6.1f %8.1e %g', counteval, D:max():item() / D:min():item(),
                          sigma * math.sqrt(C:diag():max():item()), fitvals[1]))
    end
  end
  history[#history + 1] = best_f
  return best_x, history, counteval
end

return optim
