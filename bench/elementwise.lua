-- elementwise: add, mul, exp, and the activations' and losses' math (tanh, sigmoid, log),
-- on 16M contiguous float32
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local n = 16 * 1024 * 1024
local a = torch.ones(n) * 0.5
local b = torch.ones(n) * 0.25
local ops = {
  add = function() return a + b end,
  mul = function() return a * b end,
  exp = function() return a:exp() end,
  tanh = function() return a:tanh() end,
  sigmoid = function() return a:sigmoid() end,
  log = function() return a:log() end,
}
for _, name in ipairs({'add', 'mul', 'exp', 'tanh', 'sigmoid', 'log'}) do
  local f = ops[name]
  local r = f()
  local best = math.huge
  for _ = 1, 5 do
    local t0 = torch.clock()
    r = f()
    best = math.min(best, torch.clock() - t0)
  end
  print(string.format('TIME %.9g %s', best, name))
  print(string.format('CHECK %s %.6g %.6g', name, r[1], r[n]))
end
