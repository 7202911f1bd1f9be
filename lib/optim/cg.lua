-- optim.cg: nonlinear conjugate gradient (Polak-Ribiere directions, a line
-- search by cubic extrapolation and interpolation under the Wolfe-Powell
-- conditions), Torch7's function, after C. E. Rasmussen's minimize.m.
local torch = require 'torch'
local optim = require 'optim'

local function bad(z) return z ~= z or z == math.huge or z == -math.huge end

-- optim.cg(opfunc, x, config, state): config rho (0.01) and sig (0.5), the
-- Wolfe-Powell constants; int (0.1), how close to an end of the bracket a
-- point may be; ext (3.0), the largest extrapolation; ratio (100), the
-- largest growth of the first step; maxIter (20), evaluations per line
-- search; maxEval (maxIter * 1.25), evaluations in all. A failed line
-- search puts x back and ends the call, as in Torch7. Returns x, the
-- losses after each successful line search (the first: at the start) and
-- the number of evaluations.
function optim.cg(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local name = 'optim.cg'
  local rho, sig, int, ext = config.rho or 0.01, config.sig or 0.5, config.int or 0.1, config.ext or 3.0
  local max_iter, ratio = config.maxIter or 20, config.ratio or 100
  local max_eval = config.maxEval or max_iter * 1.25
  local function eval_at()
    local f, g = optim._evaluate(name, opfunc, x)
    return optim._loss_number(f, name), g:clone()
  end
  local function dot(a, b) return a:dot(b):item() end
  local function move(z, s) torch.no_grad(function() x:add_(s, {alpha = z}) end) end
  local f1, df1 = eval_at()
  local losses, evals = {f1}, 1
  local s = -df1                               -- search direction
  local d1 = -dot(s, s)                        -- slope along it
  local z1 = 1 / (1 - d1)                      -- first step
  while evals < math.abs(max_eval) do
    local x0 = x:clone()
    move(z1, s)
    local f2, df2 = eval_at()
    evals = evals + 1
    local d2 = dot(df2, s)
    local f3, d3, z3 = f1, d1, -z1             -- point 3 starts as point 1
    local budget = math.min(max_iter, max_eval - evals)
    local success, limit = false, -1
    while true do
      -- interpolate back while the point is too far (not a sufficient decrease or too steep)
      while (f2 > f1 + z1 * rho * d1 or d2 > -sig * d1) and budget > 0 do
        limit = z1
        local z2
        if f2 > f1 then
          z2 = z3 - (0.5 * d3 * z3 * z3) / (d3 * z3 + f2 - f3)             -- quadratic fit
        else
          local A = 6 * (f2 - f3) / z3 + 3 * (d2 + d3)                     -- cubic fit
          local B = 3 * (f3 - f2) - z3 * (d3 + 2 * d2)
          z2 = (math.sqrt(B * B - A * d2 * z3 * z3) - B) / A
        end
        if bad(z2) then z2 = z3 / 2 end
        z2 = math.max(math.min(z2, int * z3), (1 - int) * z3)
        z1 = z1 + z2
        move(z2, s)
        f2, df2 = eval_at()
        evals, budget = evals + 1, budget - 1
        d2 = dot(df2, s)
        z3 = z3 - z2
      end
      if f2 > f1 + z1 * rho * d1 or d2 > -sig * d1 then break end          -- failure
      if d2 > sig * d1 then success = true; break end                      -- Wolfe-Powell holds
      if budget == 0 then break end
      -- extrapolate with a cubic, kept inside the limits
      local A = 6 * (f2 - f3) / z3 + 3 * (d2 + d3)
      local B = 3 * (f3 - f2) - z3 * (d3 + 2 * d2)
      local z2 = -d2 * z3 * z3 / (B + math.sqrt(B * B - A * d2 * z3 * z3))
      if bad(z2) or z2 < 0 then
        if limit < -0.5 then z2 = z1 * (ext - 1) else z2 = (limit - z1) / 2 end
      elseif limit > -0.5 and z2 + z1 > limit then
        z2 = (limit - z1) / 2
      elseif limit < -0.5 and z2 + z1 > z1 * ext then
        z2 = z1 * (ext - 1)
      elseif z2 < -z3 * int then
        z2 = -z3 * int
      elseif limit > -0.5 and z2 < (limit - z1) * (1 - int) then
        z2 = (limit - z1) * (1 - int)
      end
      f3, d3, z3 = f2, d2, -z2
      z1 = z1 + z2
      move(z2, s)
      f2, df2 = eval_at()
      evals, budget = evals + 1, budget - 1
      d2 = dot(df2, s)
    end
    if not success then
      torch.no_grad(function() x:copy_(x0) end)
      break
    end
    f1 = f2
    losses[#losses + 1] = f1
    -- Polak-Ribiere direction; steepest descent when it does not descend
    local beta = (dot(df2, df2) - dot(df2, df1)) / dot(df1, df1)
    s = s * beta - df2
    df1 = df2
    d2 = dot(df1, s)
    if d2 > 0 then
      s = -df1
      d2 = -dot(s, s)
    end
    z1 = z1 * math.min(ratio, d1 / (d2 - 1e-320))
    d1 = d2
  end
  state.s = s
  return x, losses, evals
end

return optim
