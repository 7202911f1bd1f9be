-- scripts/torch7_nngraph_suite.lua: runs torch/nngraph's own tests
-- (test/test_*.lua of the public torch/nngraph repository) under moontorch
-- and counts them. Not part of `make test`: the tests are Torch7's code and
-- are never vendored; the script reads them from a fetched copy:
--
--   git --git-dir=<mirror of torch/nngraph> archive HEAD test | tar -x -C /tmp/nngraph
--   th --torch7 scripts/torch7_nngraph_suite.lua /tmp/nngraph/test [test_nest.lua ...]
--
-- Each file runs in its own th process (Torch7 dialect) in a fresh temporary
-- directory (graph.dot writes files there), with scripts/torch7_harness.lua's
-- Lua 5.1 -> 5.4 shims and its tester. The tests are written against totem
-- (a test library of its own, not part of Torch7): this script stands in a
-- minimal totem -- its Tester is the harness's, and totem.nn.checkGradients,
-- checkSerializable and checkTypeCastable are written here from what their
-- names promise (finite differences against backward, a save and load that
-- keeps the output, a cast that keeps it within float precision). A file
-- without a tester (test_old.lua) counts as one test that passes when it runs
-- to its end. Output: each failing test, then "N passed, M failed of T".

local dir = arg[1]
if not dir then
  io.stderr:write('usage: th --torch7 scripts/torch7_nngraph_suite.lua /path/to/nngraph/test [test_x.lua ...]\n')
  os.exit(2)
end

-- ---- one file, in this process (the child) ----
if arg[2] == '--run-one' then
  local here = arg[4]
  require 'torch'
  require 'nn'
  if torch.dialect then torch.dialect('torch7') end
  local harness = dofile(here .. '/torch7_harness.lua')
  package.path = dir .. '/?.lua;' .. package.path

  local function tensors_of(x, list)
    list = list or {}
    if torch.isTensor(x) then list[#list + 1] = x
    elseif type(x) == 'table' then for _, v in ipairs(x) do tensors_of(v, list) end end
    return list
  end
  local function random_like(x)
    if torch.isTensor(x) then return x:detach():clone():normal() end
    local t = {}
    for i, v in ipairs(x) do t[i] = random_like(v) end
    return t
  end
  local function dot(a, b)
    local s = 0
    local ta, tb = tensors_of(a), tensors_of(b)
    for i = 1, #ta do s = s + ta[i]:detach():double():clone():cmul(tb[i]:detach():double()):sum() end
    return s
  end
  local function clone(x)
    if torch.isTensor(x) then return x:clone() end
    local t = {}
    for i, v in ipairs(x) do t[i] = clone(v) end
    return t
  end

  local totem = {nn = {}}
  local function same(a, b, tol)
    if torch.isTensor(a) and torch.isTensor(b) then
      return a:nElement() == b:nElement() and (a:nElement() == 0 or (a:double() - b:double()):abs():max() <= tol)
    elseif type(a) == 'table' and type(b) == 'table' then
      for k, v in pairs(a) do if not same(v, b[k], tol) then return false end end
      for k in pairs(b) do if a[k] == nil then return false end end
      return true
    end
    return a == b
  end
  -- totem's Tester: the harness's, with totem's ne (not equal within tolerance)
  function totem.Tester()
    local t = harness.new_tester()
    function t:ne(a, b, tol, msg)
      if type(tol) ~= 'number' then msg, tol = tol, 0 end
      self:_record(not same(a, b, tol), (msg or 'ne') .. ': the values are equal')
    end
    return t
  end
  function totem.TestSuite() return {} end
  -- checkGradients(tester, module, input [, precision]): the gradients of
  -- <output, g> for a random g, by central differences, against backward's
  -- gradInput and gradParameters
  function totem.nn.checkGradients(tester, module, input, precision)
    precision = precision or 1e-5
    local eps = 1e-6
    local output = module:forward(input)
    local g = random_like(output)
    module:zeroGradParameters()
    local gradInput = clone(module:backward(input, g))
    local params, gradParams = module:parameters()
    params, gradParams = params or {}, gradParams or {}
    local saved = {}
    for i, p in ipairs(gradParams) do saved[i] = p:detach():clone() end
    for i, p in ipairs(params) do params[i] = p:detach() end        -- written in place below
    local function check(xs, grads, what)
      for i, x in ipairs(xs) do
        local flat = x:view(-1)
        local want = grads[i]:contiguous():view(-1)
        local worst = 0
        for j = 1, flat:size(1) do
          local v = flat[j]
          flat[j] = v + eps
          local up = dot(module:forward(input), g)
          flat[j] = v - eps
          local down = dot(module:forward(input), g)
          flat[j] = v
          local d = math.abs((up - down) / (2 * eps) - want[j])
          if d > worst then worst = d end
        end
        tester:assertlt(worst, precision, what .. ' ' .. i .. ' differs from finite differences')
      end
    end
    local inputs = tensors_of(input)
    for i, x in ipairs(inputs) do inputs[i] = x:detach() end
    check(inputs, tensors_of(gradInput), 'gradInput')
    check(params, saved, 'gradParameter')
  end
  -- checkSerializable(tester, module, input): a module written and read back
  -- gives the same output
  function totem.nn.checkSerializable(tester, module, input)
    local want = clone(module:forward(input))
    local copy = torch.deserialize(torch.serialize(module))
    local got = copy:forward(input)
    local a, b = tensors_of(want), tensors_of(got)
    tester:asserteq(#a, #b, 'checkSerializable: outputs')
    for i = 1, #a do tester:assertTensorEq(a[i], b[i], 1e-12, 'checkSerializable: output ' .. i) end
  end
  -- checkTypeCastable(tester, module, input): the module cast to float and
  -- back to double gives the output it gave, within float precision
  function totem.nn.checkTypeCastable(tester, module, input)
    local want = clone(module:forward(input))
    local function cast(x, t)
      if torch.isTensor(x) then return x:type(t) end
      local r = {}
      for i, v in ipairs(x) do r[i] = cast(v, t) end
      return r
    end
    module:float()
    local got = module:forward(cast(input, 'torch.FloatTensor'))
    local a, b = tensors_of(want), tensors_of(got)
    for i = 1, #a do
      tester:asserteq(b[i]:type(), 'torch.FloatTensor', 'checkTypeCastable: output type')
      tester:assertTensorEq(a[i]:float(), b[i], 1e-4, 'checkTypeCastable: output ' .. i)
    end
    module:double()
  end
  package.loaded.totem = totem
  _G.totem = totem             -- require 'totem' made the global in Lua 5.1's module system

  harness.run_one(dir .. '/' .. arg[3])
end

-- ---- the driver ----
local here = arg[0]:match('^(.*)/') or '.'
dofile(here .. '/torch7_harness.lua').run_files(dir, {table.unpack(arg, 2)})
