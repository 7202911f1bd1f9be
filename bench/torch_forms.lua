-- torch_forms: the per-call cost of torch.* function forms on 4-element tensors
-- (torch.add, torch.sum, torch.cat, torch.mm), where Torch7's result-first forms
-- share the names: the gate in front of them must cost PyTorch's calls nothing.
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local a, b = torch.tensor({1.5, -2, 0.25, 3}), torch.tensor({0.5, 1, -1, 2})
local m = torch.tensor({{1, 2}, {3, 4}}, {dtype = 'float32'})
local n = 200000
local cases = {
  {'add', function() return torch.add(a, b) end},
  {'sum', function() return torch.sum(a) end},
  {'cat', function() return torch.cat({a, b}) end},
  {'mm', function() return torch.mm(m, m) end},
}
local r
for _, c in ipairs(cases) do
  for _ = 1, 10000 do r = c[2]() end
  local t0 = torch.clock()
  for _ = 1, n do r = c[2]() end
  print('TIME ' .. (torch.clock() - t0) / n .. ' ' .. c[1])
end
print('CHECK value ' .. string.format('%.4f', torch.mm(m, m):sum():item()))
