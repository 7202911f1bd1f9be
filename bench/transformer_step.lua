-- transformer_step: a 4-layer TransformerEncoder (d_model 256, 4 heads, feed-forward 2048,
-- GELU, dropout 0, batch first) on a batch of 16 sequences of 128, mean squared error
-- against a fixed target: forward, forward + backward, and a whole AdamW training step.
-- Also prints (NOTE) how close the step comes to the time its matrix products alone take
-- at this machine's GEMM rate.
local nn = require 'nn'
local optim = require 'optim'
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))

local N, L, E, HEADS, FF, LAYERS = 16, 128, 256, 4, 2048, 4
-- fixed values, the same on both sides: sin of a quadratic residue (no low-rank pattern)
local function fixed(n, salt)
  local k = torch.arange(0, n, {dtype = 'int64'})
  return ((k * k + salt * 7919) % 10007):float():sin()
end

local layer = nn.TransformerEncoderLayer(E, HEADS, {dim_feedforward = FF, dropout = 0, activation = 'gelu',
                                                    batch_first = true})
local model = nn.TransformerEncoder(layer, LAYERS)
model:train()
torch.no_grad(function()
  for i, named in ipairs(model:named_parameters()) do
    local name, p = named[1], named[2]
    local v
    if p:dim() == 2 then v = fixed(p:numel(), i) * (1 / math.sqrt(p:size(2)))
    elseif name:find('norm') and name:find('weight$') then v = fixed(p:numel(), i) * 0.1 + 1
    else v = fixed(p:numel(), i) * 0.02 end
    p:copy_(v:view(p:size()))
  end
end)
local x = fixed(N * L * E, 1000):view(N, L, E)
local target = (fixed(N * L * E, 2000) * 0.5):view(N, L, E)
local opt = optim.AdamW(model:parameters(), {lr = 1e-3, weight_decay = 0.01})

local function forward() return ((model(x) - target) ^ 2):mean() end
local first = forward():item()
local loss
local function step()
  opt:zero_grad()
  loss = forward()
  loss:backward()
  opt:step()
end

local reps = 5                  -- the fastest of reps: the machine may be shared
local function timed(name, fn)
  fn()                                                  -- warm-up
  local best = math.huge
  for _ = 1, reps do
    local t0 = torch.clock()
    fn()
    best = math.min(best, torch.clock() - t0)
  end
  print(string.format('TIME %.9g %s', best, name))
  return best
end
timed('forward', function() loss = forward() end)
timed('forward+backward', function() opt:zero_grad(); loss = forward(); loss:backward() end)
local grad_check = string.format('%.6f %.6f', loss:item(), model.layers[1].linear1.weight.grad:sum():item())
local step_seconds = timed('step', step)
print('CHECK forward ' .. string.format('%.6f', first))
print('CHECK forward+backward ' .. grad_check)
print(string.format('CHECK step %.6f %.6f', forward():item(), model.layers[4].norm2.weight:sum():item()))

-- Matrix products of a step: per layer the four projections and the two attention
-- products forward, twice that backward, less the first layer's input gradient (x needs none).
local T = N * L
local layer_forward = 2 * T * (E * 3 * E + E * E + 2 * E * FF) + 2 * 2 * N * L * L * E
local flops = 3 * LAYERS * layer_forward - 2 * T * E * 3 * E
local a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
a:mm(b)
local best = math.huge
for _ = 1, 20 do                   -- the fastest product: the machine may be shared
  local t0 = torch.clock()
  a:mm(b)
  best = math.min(best, torch.clock() - t0)
end
local rate = 2 * 1024 ^ 3 / best
print(string.format('NOTE matrix products %.1f GFLOP a step: %.0f ms at %.0f GFLOP/s (a 1024x1024 mm, %d thread(s)); ' ..
                    'the step reaches %.0f%% of that floor', flops / 1e9, 1e3 * flops / rate, rate / 1e9,
                    torch.getnumthreads(), 100 * flops / rate / step_seconds))
