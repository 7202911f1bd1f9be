-- optim_step: one optimizer step (Adam; SGD with momentum) over the weights
-- of a 784-256-256-10 MLP (784x256, 256x256, 256x10) with fixed gradients;
-- the step alone is timed
local optim = require 'optim'
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))

local shapes = {{784, 256}, {256, 256}, {256, 10}}
local function setup()             -- fixed values, the same on both sides
  local params = {}
  for i, s in ipairs(shapes) do
    local n = s[1] * s[2]
    local p = (torch.arange(0, n):sin() * 0.05):reshape(s[1], s[2]):requires_grad_()
    p.grad = (torch.arange(0, n):cos() * (0.01 * i)):reshape(s[1], s[2])
    params[i] = p
  end
  return params
end

local rounds, reps = 5, 20
for _, case in ipairs({{'adam', function(ps) return optim.Adam(ps, {lr = 1e-3}) end},
                       {'sgd_momentum', function(ps) return optim.SGD(ps, {lr = 0.01, momentum = 0.9}) end}}) do
  local params = setup()
  local opt = case[2](params)
  opt:step()                       -- warm-up: creates the state
  local best = math.huge
  for _ = 1, rounds do
    local t0 = torch.clock()
    for _ = 1, reps do opt:step() end
    best = math.min(best, (torch.clock() - t0) / reps)
  end
  print(string.format('TIME %.9g %s', best, case[1]))
  local p = params[1]
  print(string.format('CHECK %s %.6g %.6g %.6g', case[1], p[1][1], p[784][256], params[3]:abs():sum():item()))
end
