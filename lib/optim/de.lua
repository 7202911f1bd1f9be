-- optim.de: differential evolution (the "best/1/bin" scheme), Torch7's
-- derivative-free function: a population spread over a box, children made
-- from the best point plus a scaled difference of two others, kept when
-- no worse than their parent.
local torch = require 'torch'
local optim = require 'optim'

-- optim.de(opfunc, x, config): opfunc(x) gives the loss (a gradient, if
-- returned, is ignored). config popsize (10 * #x), scaleFactor and
-- crossoverRate (required; usually in [0.4, 1] and [0.1, 0.9]), maxFEs
-- (required, evaluations in all), minRegion and maxRegion (-30 and 30, the
-- box the first population is drawn from). Its own generator, seeded with
-- 1, makes runs repeatable (as Torch7). Returns the best point found
-- (shaped as x) and the tensor of every loss evaluated, in order.
function optim.de(opfunc, x, config)
  local name = 'optim.de'
  config = config or {}
  if not torch.is_tensor(x) then optim._error('%s: x must be a tensor, got %s', name, torch.type(x)) end
  local D = x:numel()
  local popsize = config.popsize or 10 * D
  local F, CR, max_evals = config.scaleFactor, config.crossoverRate, tonumber(config.maxFEs)
  for _, key in ipairs({'scaleFactor', 'crossoverRate', 'maxFEs'}) do
    if tonumber(config[key]) == nil then
      optim._error('%s: config.%s must be a number, got %s', name, key, type(config[key]))
    end
  end
  if popsize < 3 then optim._error('%s: popsize must be at least 3, got %s', name, tostring(popsize)) end
  local gen = torch.Generator()
  gen:manual_seed(1)
  local opts = {dtype = x.dtype}
  local pop = torch.empty(popsize, D, opts):uniform_(config.minRegion or -30, config.maxRegion or 30,
                                                     {generator = gen})
  local fitness, losses = {}, {}
  local function loss_at(point)
    local value = optim._loss_number((opfunc(point:view(x:size()))), name)
    losses[#losses + 1] = value
    return value
  end
  local best = 1
  for i = 1, popsize do
    fitness[i] = loss_at(pop[i])
    if fitness[i] < fitness[best] then best = i end
  end
  local best_point, best_fitness = pop[best]:clone(), fitness[best]
  local children, child_fitness = torch.empty(popsize, D, opts), {}
  while #losses < max_evals do
    for i = 1, popsize do
      local r1, r2
      repeat r1 = torch.random(gen, 1, popsize) until r1 ~= i
      repeat r2 = torch.random(gen, 1, popsize) until r2 ~= r1 and r2 ~= i
      local forced = torch.random(gen, 1, D)     -- one coordinate always crosses over
      local child, parent, a, b = children[i], pop[i], pop[r1], pop[r2]
      for j = 1, D do
        if torch.uniform(gen, 0, 1) < CR or j == forced then
          child[j] = best_point[j] + F * (a[j] - b[j])
        else
          child[j] = parent[j]
        end
      end
      child_fitness[i] = loss_at(child)
    end
    for i = 1, popsize do
      if child_fitness[i] <= fitness[i] then
        pop[i]:copy_(children[i])
        fitness[i] = child_fitness[i]
        if fitness[i] < best_fitness then
          best_fitness = fitness[i]
          best_point:copy_(children[i])
        end
      end
    end
  end
  return best_point:view(x:size()), torch.tensor(losses, opts)
end

return optim
