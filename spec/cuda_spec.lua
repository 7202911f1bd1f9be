-- cuda_spec.lua: CUDA tensors (src/cuda, loaded by lib/torch/device.lua).
-- Without a GPU, the first block checks what a user meets then: the devices'
-- names, CPU no-ops, and clear errors; the GPU blocks are skipped with a
-- message. With one, every op of the registry that has a CUDA kernel
-- (elementwise, reductions, ops along a dim, products) is run on the GPU and
-- compared with the CPU's result, in every dtype the op takes, on contiguous,
-- transposed and broadcast inputs; then copies, autograd and a training step.
local torch = require 'torch'
local nn = require 'nn'

local GPU = torch.cuda.is_available()

describe('devices without a GPU in the way', function()
  it('names the CPU device and keeps CPU tensors where they are', function()
    local x = torch.ones(2, 3)
    assert.are.equal('cpu', x.device)
    assert.is_false(x.is_cuda)
    assert.are.equal(-1, x:get_device())
    assert.are.equal(x, x:cpu())
    assert.are.equal(x, x:to('cpu'))
    local d = x:to{device = 'cpu', dtype = 'float64'}
    assert.are.equal('float64', d.dtype)
    assert.are.equal('cpu', d.device)
    assert.are.equal('cpu', torch.zeros(2, {device = 'cpu'}).device)
  end)

  it('loads the CUDA backend on first use, not at require', function()
    local th = dofile('spec/support/th.lua')
    local run = th.run
    local maps = "local m = io.open('/proc/self/maps'):read('a'); print(m:find('torch/cuda.so', 1, true) and 'mapped' "
                 .. "or 'not mapped')"
    local ok, out = run("-e \"" .. maps .. "\"")
    assert.is_true(ok, out)
    assert.matches('^not mapped', out)
    local built = io.open((th.path():match('^(.*)/th$') or '.') .. '/torch/cuda.so') ~= nil   -- beside that th
    ok, out = run("-e \"torch.cuda.is_available(); " .. maps .. "\"")
    assert.is_true(ok, out)
    assert.matches(built and '^mapped' or '^not mapped', out)
    ok, out = run("-e \"pcall(torch.ones(1).to, torch.ones(1), 'cuda'); " .. maps .. "\"")
    assert.is_true(ok, out)
    assert.matches(built and '^mapped' or '^not mapped', out)
  end)

  it('checks device names', function()
    assert.are.equal('cuda:1', torch.device('cuda:1'))
    assert.are.equal('cuda:2', torch.device('cuda', 2))
    assert.are.equal('cpu', torch.device('cpu'))
    assert.has_error(function() torch.device('gpu') end,
      "torch.device: unknown device 'gpu' (expected 'cpu', 'cuda' or 'cuda:N')")
    assert.has_error(function() torch.ones(2):to('tpu') end, "to: unknown dtype or device 'tpu'")
  end)

  it('says why CUDA is unavailable, and refuses GPU work clearly', function()
    if GPU then
      assert.is_nil(torch.cuda.unavailable_reason())
      assert.is_true(torch.cuda.device_count() >= 1)
      return
    end
    assert.are.equal(0, torch.cuda.device_count())
    assert.is_string(torch.cuda.unavailable_reason())
    assert.has_error(function() torch.ones(2):cuda() end,
      "cuda: no CUDA device for 'cuda': " .. torch.cuda.unavailable_reason())
    local ok, err = pcall(torch.zeros, 2, {device = 'cuda'})
    assert.is_false(ok)
    assert.matches("zeros: no CUDA device for 'cuda': ", err, 1, true)
    ok, err = pcall(torch.cuda.synchronize)
    assert.is_false(ok)
    assert.matches('torch.cuda.synchronize: no CUDA device: ', err, 1, true)
    assert.are.equal(0, torch.cuda.memory_allocated())
    assert.is_false(torch.backends.cuda.matmul.allow_tf32)
  end)

  it('loads a file saved from a GPU only where one is, or with map_location', function()
    -- a file holding one float32 tensor [1.5, 2.5] saved from cuda:0, written byte by byte
    local body = 'MOONTORCH\3' .. 'T' .. string.pack('<s1BBB', 'float32', 4, 0, 1) .. string.pack('<i8', 2)
                 .. string.pack('<s8', string.pack('<ff', 1.5, 2.5))
    local file = body .. string.pack('<I4', torch._crc32(body))
    local x = torch.deserialize(file, 'f.t7', 'cpu')
    assert.are.same({1.5, 2.5}, x:totable())
    assert.are.equal('cpu', x.device)
    if GPU then
      assert.are.equal('cuda:0', torch.deserialize(file, 'f.t7').device)
    else
      local ok, err = pcall(torch.deserialize, file, 'f.t7')
      assert.is_false(ok)
      assert.matches("f.t7 holds tensors saved from cuda:0, and there is no CUDA device here", err, 1, true)
      assert.matches("{map_location = 'cpu'}", err, 1, true)
    end
  end)
end)

if not GPU then
  describe('CUDA tensors', function()
    pending('no GPU here (' .. torch.cuda.unavailable_reason() .. '): the GPU specs are skipped')
  end)
  return
end

-- ---- comparing a GPU result with the CPU's ----
local TOL = {float64 = {1e-12, 1e-12}, float32 = {2e-5, 2e-5}, float16 = {2e-3, 2e-3}, bfloat16 = {1.6e-2, 1e-2}}

local function same_values(got, want, what, tol)
  assert.are.equal(want.dtype, got.dtype, what .. ': dtype')
  assert.are.same(want:size():totable(), got:size():totable(), what .. ': shape')
  assert.are.equal('cpu', want.device)
  got = got:cpu()
  local g, w = got:contiguous():_flat_values(), want:contiguous():_flat_values()
  local t = tol or TOL[want.dtype]
  for i = 1, #w do
    local a, b = g[i], w[i]
    local ok
    if t and type(b) == 'number' then
      ok = (a ~= a and b ~= b) or a == b or math.abs(a - b) <= t[1] + t[2] * math.abs(b)
    else
      ok = a == b
    end
    if not ok then
      error(string.format('%s: element %d is %s on the GPU, %s on the CPU', what, i, tostring(a), tostring(b)), 2)
    end
  end
end

-- the same call on CPU tensors and on their GPU copies: equal results, or the same error
local function agree(what, fn, ...)
  local cpu_args, gpu_args = table.pack(...), table.pack(...)
  for i = 1, cpu_args.n do
    if torch.is_tensor(cpu_args[i]) then gpu_args[i] = cpu_args[i]:cuda() end
  end
  local ok1, want = pcall(fn, table.unpack(cpu_args, 1, cpu_args.n))
  local ok2, got = pcall(fn, table.unpack(gpu_args, 1, gpu_args.n))
  if not ok1 then
    assert.is_false(ok2, what .. ': the CPU raised (' .. tostring(want) .. ') but the GPU did not')
    assert.are.equal(tostring(want):gsub('^.-:%d+: ', ''), tostring(got):gsub('^.-:%d+: ', ''))
    return
  end
  assert(ok2, what .. ': ' .. tostring(got))
  if torch.is_tensor(want) then
    assert.are.equal('cuda:0', got.device, what)
    same_values(got, want, what)
  else
    assert.are.equal(want, got, what)
  end
end

-- inputs: a 3x4 tensor of dtype, kind 'any' (either sign), 'pos' or 'nonzero'
local VALUES = {0.17, -0.23, 0.31, -0.38, 0.44, 0.57, -0.63, 0.71, -0.78, 0.83, 0.27, -0.69}
local INTS = {1, -2, 3, -4, 5, 2, -1, 4, -3, 2, 1, -5}
local function input(dtype, kind, shift)
  local v = {}
  for k = 1, 12 do
    local i = (k + (shift or 0) - 1) % 12 + 1
    if dtype == 'bool' then v[k] = (INTS[i] % 2 == 0)
    elseif dtype:match('^float') or dtype == 'bfloat16' then
      v[k] = kind == 'pos' and math.abs(VALUES[i]) or (kind == 'big' and VALUES[i] * 3 + (VALUES[i] > 0 and 1 or -1) or VALUES[i])
    else
      v[k] = kind == 'pos' and math.abs(INTS[i]) or INTS[i]
      if dtype == 'uint8' then v[k] = math.abs(v[k]) end
    end
  end
  return torch.tensor(v, {dtype = dtype}):view(3, 4)
end

local DTYPES = {'float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool'}
local OPS = torch._ops()
local function names(op)
  local r = {}
  if op.lua_name then r[1] = op.name end
  for _, a in ipairs(op.aliases) do r[#r + 1] = a end
  return r
end

-- Trains a FashionMNIST example (examples/fashion_mnist_<name>.lua) for `batches` batches of
-- one epoch on the CPU and on the GPU, same seed; returns both test accuracies, or nil
-- (pending) when the dataset is missing.
local function example_on_both(name, batches)
  local f = io.open('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz')
  if not f then pending('dataset-fashion-mnist is not installed: the example not run') return end
  f:close()
  local run = dofile('spec/support/th.lua').run
  local function accuracy(device)
    local t0 = os.time()
    local ok, out = run(string.format('examples/fashion_mnist_%s.lua --epochs 1 --limit %d --workers 0 '
                                      .. '--checkpoint "" --device %s', name, batches, device))
    assert.is_true(ok, out)
    local acc = tonumber(out:match('test accuracy ([%d.]+)%%'))
    assert.is_truthy(acc, out)
    print(string.format('# the %s example, %d batches on %s: test accuracy %.2f%% (%d s)', name:upper(), batches,
                        device, acc, os.time() - t0))
    return acc
  end
  return accuracy('cpu'), accuracy('cuda')
end

describe('CUDA tensors', function()
  it('knows its device', function()
    assert.is_true(torch.cuda.device_count() >= 1)
    assert.are.equal(0, torch.cuda.current_device())
    assert.is_string(torch.cuda.get_device_name(0))
    local major = torch.cuda.get_device_capability()
    assert.is_true(major >= 7)
    local x = torch.ones(2, 3):cuda()
    assert.are.equal('cuda:0', x.device)
    assert.is_true(x.is_cuda)
    assert.are.equal(0, x:get_device())
    assert.are.equal('torch.cuda.FloatTensor', x:type())
    assert.are.equal(x, x:cuda())
    assert.are.equal(x, x:to('cuda:0'))
    assert.are.equal('cuda:0', torch.zeros(2, {device = 'cuda'}).device)
    assert.are.equal('cuda:0', torch.randn(2, 2, {device = 'cuda:0', requires_grad = true}).device)
    assert.is_true(torch.randn(2, {device = 'cuda', requires_grad = true}).is_leaf)
    assert.are.equal('cuda:0', torch.zeros_like(x).device)
    assert.are.equal('cpu', torch.zeros_like(x, {device = 'cpu'}).device)
    assert.are.equal('torch.cuda.DoubleTensor', torch.ones(2):type('torch.cuda.DoubleTensor'):type())
    assert.are.equal('torch.cuda.FloatTensor', torch.ones(2):type('torch.CudaTensor'):type())
  end)

  it('copies every dtype both ways, strided and broadcast', function()
    for _, dt in ipairs(DTYPES) do
      local x = input(dt, 'any')
      same_values(x:cuda(), x, dt .. ' round trip')
      same_values(x:t():cuda(), x:t():contiguous(), dt .. ' transposed to the GPU')
      same_values(x:cuda():t():cpu(), x:t():contiguous(), dt .. ' transposed from the GPU')
      local g = torch.zeros(3, 4, {dtype = dt}):cuda()
      g:copy_(x:narrow(2, 2, 1))                           -- a column broadcast
      same_values(g, x:narrow(2, 2, 1):expand(3, 4):contiguous(), dt .. ' broadcast copy_')
      for _, to in ipairs(DTYPES) do
        same_values(x:cuda():to(to), x:to(to), dt .. ' to ' .. to)
      end
    end
    local big = torch.randn(1000, 37)
    same_values(big:cuda():t():contiguous():cpu(), big:t():contiguous(), 'a large transpose')
    local z = torch.zeros(3, 4):cuda()
    z:narrow(2, 2, 2):fill_(7)
    same_values(z, torch.tensor({{0, 7, 7, 0}, {0, 7, 7, 0}, {0, 7, 7, 0}}, {dtype = 'float32'}), 'fill_ of a view')
    assert.are.equal(7, z[1][2])
    assert.are.equal(42, z:sum():item())
    assert.are.equal(0, torch.zeros(0, 3):cuda():numel())
  end)

  it('runs every elementwise op of the registry on the GPU as on the CPU', function()
    local count = 0
    for _, op in ipairs(OPS) do
      local fam = op.family
      if fam:match('^unary') or fam:match('^binary') or fam == 'compare' then
        for _, name in ipairs(names(op)) do
          for _, dt in ipairs(DTYPES) do
            if op.arity == 1 then
              local x = input(dt, op.domain[1])
              agree(name .. ' ' .. dt, function(a) return a[name](a) end, x)
              agree(name .. ' ' .. dt .. ' transposed', function(a) return a[name](a) end, x:t())
              if op.inplace then
                agree(name .. '_ ' .. dt, function(a) local c = a:clone(); c[name .. '_'](c); return c end, x)
              end
            else
              local a = input(dt, op.domain[1])
              local b = input(dt, op.domain[2], 5)
              agree(name .. ' ' .. dt, function(p, q) return torch[name](p, q) end, a, b)
              agree(name .. ' ' .. dt .. ' broadcast', function(p, q) return torch[name](p, q) end,
                    a:narrow(2, 1, 1), b:narrow(1, 2, 1))
              agree(name .. ' ' .. dt .. ' transposed', function(p, q) return torch[name](p, q) end, a:t(), b:t())
              agree(name .. ' ' .. dt .. ' number', function(p) return torch[name](p, 3) end, a)
              agree(name .. ' ' .. dt .. ' number first', function(q) return torch[name](2.5, q) end, b)
              if op.inplace then
                agree(name .. '_ ' .. dt, function(p, q) local c = p:clone(); c[name .. '_'](c, q); return c end, a, b)
              end
            end
            count = count + 1
          end
        end
      end
    end
    assert.is_true(count > 400)
    -- a 0-dim CPU tensor beside a GPU tensor counts as a number, as in PyTorch
    local r = torch.ones(2, 2):cuda() + torch.tensor(2.5)
    same_values(r, torch.full({2, 2}, 3.5), 'a 0-dim CPU operand')
    -- more elements than one block, and a non-contiguous broadcast
    local a, b = torch.randn(300, 257), torch.randn(257)
    agree('a large add', function(p, q) return p:t():contiguous():t() + q end, a, b)
    -- integer division by zero raises, as on the CPU
    agree('integer fmod by zero', function(p, q) return torch.fmod(p, q) end,
          torch.tensor{1, 2, 3}, torch.tensor{1, 0, 1})
  end)

  it('runs every reduction of the registry on the GPU as on the CPU', function()
    for _, op in ipairs(OPS) do
      if op.family == 'reduce' and op.signature ~= 'none' then
        for _, name in ipairs(names(op)) do
          for _, dt in ipairs{'float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'uint8', 'bool'} do
            local x = input(dt, 'any')
            local calls
            if op.signature == 'var' then
              calls = {function(t) return t[name](t) end, function(t) return t[name](t, 2) end,
                       function(t) return t[name](t, 1, false, true) end, function(t) return t[name](t, {correction = 0}) end}
            elseif op.signature == 'norm' then
              calls = {function(t) return t[name](t) end, function(t) return t[name](t, 1, 2) end,
                       function(t) return t[name](t, math.huge, 1) end, function(t) return t[name](t, 3, 2, true) end,
                       function(t) return t[name](t, 0) end}
            else
              calls = {function(t) return t[name](t) end, function(t) return t[name](t, 2) end,
                       function(t) return t[name](t, 1, true) end, function(t) return t[name](t, {1, 2}) end}
            end
            for i, call in ipairs(calls) do
              agree(name .. ' ' .. dt .. ' form ' .. i, call, x)
              agree(name .. ' ' .. dt .. ' transposed form ' .. i, call, x:t())
            end
          end
        end
      end
    end
    assert.are.equal(0.5 * 3 * 4, torch.full({3, 4}, 0.5):cuda():sum():item())
    agree('max of every element', function(t) return t:max() end, input('float32', 'any'))
    agree('min of every element', function(t) return t:min() end, input('int64', 'any'))
    agree('a long sum', function(t) return t:sum(1) end, torch.randn(100000, 3))
    agree('a wide mean', function(t) return t:mean(2) end, torch.randn(3, 100000))
    agree('an empty sum', function(t) return t:sum(2) end, torch.zeros(3, 0))
    agree('an empty max', function(t) return t:amax(2) end, torch.zeros(3, 0))
  end)

  it('runs the ops along a dim on the GPU as on the CPU', function()
    for _, op in ipairs(OPS) do
      if op.family == 'along' then
        for _, name in ipairs(names(op)) do
          for _, dt in ipairs{'float32', 'float64', 'float16', 'int64'} do
            for dim = 1, 2 do
              agree(name .. ' ' .. dt .. ' dim ' .. dim, function(t) return t[name](t, dim) end, input(dt, 'any'))
              agree(name .. ' ' .. dt .. ' dim ' .. dim .. ' transposed', function(t) return t[name](t, dim) end,
                    input(dt, 'any'):t())
            end
          end
        end
      end
    end
    agree('a long softmax', function(t) return t:softmax(2) end, torch.randn(4, 5000))
    -- rows held in a block's registers (1024 < N <= 4096): lengths off the block's multiple, -inf
    -- and NaN entries, half precision
    local rows = torch.randn(7, 3001)
    rows[2][5] = -1 / 0
    rows[3][7] = 0 / 0
    agree('softmax of rows in registers', function(t) return t:softmax(2) end, rows)
    agree('log_softmax of rows in registers', function(t) return t:log_softmax(2) end, rows)
    agree('softmax of 4096-wide float16 rows', function(t) return t:softmax(2) end, torch.randn(3, 4096):half())
    agree('log_softmax of 1025-wide float64 rows', function(t) return t:log_softmax(-1) end,
          torch.randn(2, 3, 1025, {dtype = 'float64'}))
    agree('a long cumsum', function(t) return t:cumsum(1) end, torch.randn(3000, 2, {dtype = 'float64'}))
  end)

  it('runs the products on cuBLAS as on the CPU', function()
    local shapes = {mm = {{5, 7}, {7, 3}}, mv = {{5, 7}, {7}}, dot = {{7}, {7}}, bmm = {{2, 5, 7}, {2, 7, 3}},
                    outer = {{5}, {3}}, ger = {{5}, {3}}}
    for _, dt in ipairs{'float32', 'float64', 'float16', 'bfloat16', 'int64'} do
      local tol = TOL[dt] and {TOL[dt][1] * 10, TOL[dt][2] * 10}
      local function close(what, fn, a, b)
        local want = fn(a, b)
        local got = fn(a:cuda(), b:cuda())
        same_values(got, want, what, tol)
      end
      for name, s in pairs(shapes) do
        local a, b = torch.randn(s[1]):mul(3):to(dt), torch.randn(s[2]):mul(3):to(dt)
        if dt == 'int64' then a, b = torch.randint(-4, 5, s[1]), torch.randint(-4, 5, s[2]) end
        close(name .. ' ' .. dt, function(p, q) return p[name](p, q) end, a, b)
      end
      if dt ~= 'int64' then
        local a, b = torch.randn(4, 6):to(dt), torch.randn(3, 4):to(dt)
        close('mm of transposes ' .. dt, function(p, q) return p:t():mm(q:t()) end, a, b)
        for _, pair in ipairs{{{7}, {7}}, {{7}, {7, 3}}, {{5, 7}, {7}}, {{2, 5, 7}, {7, 3}}, {{2, 1, 5, 7}, {3, 7, 2}}} do
          close('matmul ' .. dt, function(p, q) return p:matmul(q) end, torch.randn(pair[1]):to(dt), torch.randn(pair[2]):to(dt))
        end
        local M = torch.randn(5, 3):to(dt)
        close('addmm ' .. dt, function(p, q) return torch.addmm(M:to(p.device), p, q, {beta = 0.5, alpha = 2}) end,
              torch.randn(5, 7):to(dt), torch.randn(7, 3):to(dt))
        close('addmm broadcast ' .. dt, function(p, q) return torch.addmm(torch.ones(3):to(dt):to(p.device), p, q) end,
              torch.randn(5, 7):to(dt), torch.randn(7, 3):to(dt))
        close('baddbmm ' .. dt, function(p, q) return torch.baddbmm(torch.ones(2, 5, 3):to(dt):to(p.device), p, q) end,
              torch.randn(2, 5, 7):to(dt), torch.randn(2, 7, 3):to(dt))
        close('addbmm ' .. dt, function(p, q) return torch.addbmm(torch.ones(5, 3):to(dt):to(p.device), p, q) end,
              torch.randn(2, 5, 7):to(dt), torch.randn(2, 7, 3):to(dt))
        close('addmv ' .. dt, function(p, q) return torch.addmv(torch.ones(5):to(dt):to(p.device), p, q) end,
              torch.randn(5, 7):to(dt), torch.randn(7):to(dt))
        close('addr ' .. dt, function(p, q) return torch.addr(torch.ones(5, 3):to(dt):to(p.device), p, q) end,
              torch.randn(5):to(dt), torch.randn(3):to(dt))
        close('addmm_ ' .. dt, function(p, q) local m = torch.ones(5, 3):to(dt):to(p.device); m:addmm_(p, q); return m end,
              torch.randn(5, 7):to(dt), torch.randn(7, 3):to(dt))
      end
    end
    agree('a shape error', function(p, q) return p:mm(q) end, torch.randn(2, 3), torch.randn(4, 5))
    local a, b = torch.randn(512, 384), torch.randn(384, 256)
    same_values(a:cuda():mm(b:cuda()), a:mm(b), 'a 512x384x256 product', {1e-4, 1e-4})
  end)

  it('runs the index ops, argmax and the losses built on them on the GPU as on the CPU', function()
    for _, dt in ipairs{'float32', 'float64', 'float16', 'int64', 'int32', 'uint8', 'bool'} do
      local x = input(dt, 'any')
      local idx = torch.tensor{3, 1, 3, -1}
      agree('index_select ' .. dt, function(t, i) return t:index_select(2, i) end, x, idx)
      agree('index_select ' .. dt .. ' transposed', function(t, i) return t:t():index_select(1, i) end, x, idx)
      local g = torch.tensor{{1, 4}, {2, 2}, {4, 3}}
      agree('gather ' .. dt, function(t, i) return t:gather(2, i) end, x, g)
      agree('masked_fill ' .. dt, function(t, m) return t:masked_fill(m, 1) end, x, input('bool', 'any'))
      agree('index_fill_ ' .. dt, function(t, i) local c = t:clone(); c:index_fill_(1, i, 0); return c end, x,
            torch.tensor{3, 1})
      agree('scatter_ ' .. dt, function(t, i, s) local c = t:clone(); c:scatter_(2, i, s); return c end, x,
            torch.tensor{{2, 4}, {1, 3}, {4, 2}}, input(dt, 'any', 3):narrow(2, 1, 2))
      agree('index_copy_ ' .. dt, function(t, i, s) local c = t:clone(); c:index_copy_(1, i, s); return c end, x,
            torch.tensor{3, 1}, input(dt, 'any', 2):narrow(1, 1, 2))
      if dt ~= 'bool' then
        agree('argmax ' .. dt, function(t) return t:argmax(2) end, x)
        agree('argmin ' .. dt .. ' flat', function(t) return t:argmin() end, x)
        agree('index_add_ ' .. dt, function(t, i, s) local c = t:clone(); c:index_add_(2, i, s); return c end, x,
              torch.tensor{2, 2, 4}, input(dt, 'any', 1):narrow(2, 1, 3))
      end
      if dt:match('^float') or dt == 'int64' or dt == 'int32' then
        agree('scatter_add_ ' .. dt, function(t, i, s) local c = t:clone(); c:scatter_add_(1, i, s); return c end, x,
              torch.tensor{{1, 1, 3, 3}, {1, 1, 1, 2}}, input(dt, 'any', 4):narrow(1, 1, 2))
      end
    end
    agree('an index out of range', function(t, i) return t:index_select(1, i) end, input('float32'),
          torch.tensor{1, 9})
    agree('a gather index out of range', function(t, i) return t:gather(2, i) end, input('float32'),
          torch.tensor{{1}, {5}, {1}})
    agree('a Lua table of indices', function(t) return t:index_select(2, {4, 1}) end, input('float32'))
    -- cross-entropy and nll (gather forward, scatter-add backward), with weights and an ignored class
    local logits, target = torch.randn(6, 5, {dtype = 'float64'}), torch.tensor{1, 5, 2, 2, -100, 3}
    local function ce(l, t, w)
      local lr = l:clone():requires_grad_()
      local loss = nn.F.cross_entropy(lr, t, {weight = w})
      loss:backward()
      return torch.cat({loss:detach():cpu():view(1), lr.grad:cpu():view(-1)})
    end
    local expected = ce(logits, target, torch.tensor({1, 2, 1, 0.5, 1}, {dtype = 'float64'}))
    local got = ce(logits:cuda(), target:cuda(), torch.tensor({1, 2, 1, 0.5, 1}, {dtype = 'float64'}):cuda())
    same_values(got, expected, 'cross_entropy and its gradient')
  end)

  it('refuses mixed devices and ops without a CUDA kernel, naming them', function()
    local g, c = torch.ones(2, 2):cuda(), torch.ones(2, 2)
    local ok, err = pcall(function() return g + c end)
    assert.is_false(ok)
    assert.matches('add: expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu',
                   err, 1, true)
    ok, err = pcall(function() return g:mm(c) end)
    assert.is_false(ok)
    assert.matches('expected all tensors to be on the same device', err, 1, true)
    ok, err = pcall(function() return torch.normal(g, c) end)
    assert.is_false(ok)
    assert.matches('normal: expected all tensors to be on the same device', err, 1, true)
    ok, err = pcall(function() return g:index_select(1, torch.tensor{1}) end)
    assert.is_false(ok)
    assert.matches('index_select: expected all tensors to be on the same device', err, 1, true)
    ok, err = pcall(function() return g:masked_select(torch.ones(2, 2):gt(0)) end)
    assert.is_false(ok)
    assert.matches('masked_select: expected all tensors to be on the same device', err, 1, true)
    ok, err = pcall(function() return g[torch.tensor{1}:cuda()] end)
    assert.is_true(ok, err)
  end)

  it('sorts, selects, masks, clamps, flips and takes triangles on the GPU as on the CPU, in every dtype', function()
    local nan = 0 / 0
    for _, dt in ipairs(DTYPES) do
      local x = input(dt, 'any')
      if dt ~= 'bool' then
        -- ties (the integer inputs repeat values) keep their index order; NaN last ascending, first descending
        local y = dt:match('float') and x:clone():index_fill_(2, torch.tensor{3}, nan) or x
        agree('sort ' .. dt, function(t) local v, i = t:sort(2); return torch.cat({v:double(), i:double()}, 2) end, y)
        agree('sort descending ' .. dt, function(t) local v, i = t:sort(1, true); return torch.cat({v:double(), i:double()}) end, y)
        agree('argsort ' .. dt, function(t) return t:argsort(2) end, y)
        agree('topk ' .. dt, function(t) local v, i = t:topk(2, 2); return torch.cat({v:double(), i:double()}, 2) end, y)
        agree('topk smallest ' .. dt, function(t) local _, i = t:topk(2, 1, false); return i end, y)
        agree('kthvalue ' .. dt, function(t) local v, i = t:kthvalue(3, 2); return torch.stack({v:double(), i:double()}) end, y)
        agree('median ' .. dt, function(t) local v, i = t:median(2, true); return torch.cat({v:double(), i:double()}, 2) end, y)
        agree('median of all ' .. dt, function(t) return t:median() end, y)
        agree('mode ' .. dt, function(t) local v, i = t:mode(1); return torch.stack({v:double(), i:double()}) end,
              input(dt, 'pos'):abs():clamp(0, 2))
        agree('max along a dim ' .. dt, function(t) local v, i = t:max(2); return torch.stack({v:double(), i:double()}) end, y)
        agree('min along a dim ' .. dt, function(t) local v, i = t:min(1, true); return torch.cat({v:double(), i:double()}) end, y)
        agree('clamp ' .. dt, function(t) return t:clamp(-0.5, 2) end, x)
        agree('clamp_ ' .. dt, function(t) local c = t:clone(); c:clamp_(nil, 1); return c end, x)
        agree('clamp with tensor bounds ' .. dt, function(t, lo) return t:clamp(lo, 3) end, x, input(dt, 'any', 3):narrow(1, 1, 1))
        if dt ~= 'uint8' then agree('addcmul ' .. dt, function(a, b, c) return torch.addcmul(a, b, c, {value = 3}) end,
                                    x, input(dt, 'any', 1), input(dt, 'any', 2):t():t()) end
      end
      agree('nonzero ' .. dt, function(t) return t:nonzero() end, x)
      agree('isclose ' .. dt, function(a, b) return torch.isclose(a, b, {rtol = 0.5, atol = 0.1}) end, x, input(dt, 'any', 1))
      agree('allclose ' .. dt, function(a, b) return a:allclose(b) end, x, x:clone())
      agree('equal ' .. dt, function(a, b) return torch.equal(a, b) end, x, input(dt, 'any', 1))
      agree('where of one argument ' .. dt, function(t) return torch.where(t:ne(0))[2] end, x)
      agree('masked_select ' .. dt, function(t, m) return t:masked_select(m) end, x, input('bool', 'any', 1))
      agree('masked_select, a broadcast mask ' .. dt, function(t, m) return t:masked_select(m) end, x,
            input('bool', 'any', 2):narrow(1, 1, 1))
      agree('masked_scatter_ ' .. dt, function(t, m, s) local c = t:t(); c:masked_scatter_(m, s); return c end, x,
            input('bool', 'any', 3):t(), input(dt, 'any', 5):view(-1))
      agree('x[mask] ' .. dt, function(t, m) return t[m] end, x, input('bool', 'any', 4):narrow(2, 1, 1):squeeze(2))
      agree('x[indices] ' .. dt, function(t, i) return t[i] end, x, torch.tensor{3, 1, 3})
      agree('flip ' .. dt, function(t) return t:flip{1, 2} end, x)
      agree('roll ' .. dt, function(t) return t:t():roll({1, -2}, {1, 2}) end, x)
      agree('tril ' .. dt, function(t) return t:tril(1) end, x)
      agree('triu_ of a batch ' .. dt, function(t) local c = t:repeatTensor(2, 1, 1); c:triu_(-1); return c end, x)
      if dt:match('float') then
        agree('softplus ' .. dt, function(t) return nn.F.softplus(t, {beta = 2}) end, x)
        agree('leaky_relu_ ' .. dt, function(t) local c = t:clone(); nn.F.leaky_relu(c, 0.2, true); return c end, x)
        agree('lerp ' .. dt, function(a, b, w) return torch.lerp(a, b, w) end, x, input(dt, 'any', 3), input(dt, 'pos', 6))
        agree('addcdiv_ ' .. dt, function(a, b, c) local r = a:clone(); r:addcdiv_(b, c, {value = -0.5}); return r end,
              x, input(dt, 'any', 1), input(dt, 'pos', 2))
      end
    end
    -- larger than one block, and slices longer than one warp
    local big = torch.randn(40, 3000)
    agree('a large sort', function(t) local v, i = t:sort(2, true); return torch.cat({v:double(), i:double()}, 2) end, big)
    agree('a large masked_select', function(t) return t:masked_select(t:gt(0.5)) end, big)
    agree('an empty sort', function(t) return (t:sort(1)) end, torch.zeros(0, 3))
    agree('a 0-dim median', function(t) return t:median() end, torch.tensor(2.5))
  end)

  it('convolves, pools, pads, resamples, unfolds and normalises in 2-D and 3-D on the GPU as on the CPU, gradients included', function()
    local F = nn.F
    -- the values, then the gradient of every input, of fn(inputs...) under a fixed weighting
    local function with_grads(fn, ...)
      local ins = table.pack(...)
      local leaves = {}
      for i = 1, ins.n do
        if torch.is_tensor(ins[i]) and ins[i]:is_floating_point() then
          leaves[i] = ins[i]:clone():requires_grad_()
        else
          leaves[i] = ins[i]
        end
      end
      local y = fn(table.unpack(leaves, 1, ins.n))
      local weights = torch.linspace(-1, 1, y:numel(), {dtype = y.dtype}):view(y:size()):to(y.device)
      local loss = (y * weights):sum()
      loss:backward()
      local out = {y:detach():cpu():contiguous():view(-1)}
      for i = 1, ins.n do
        if torch.is_tensor(leaves[i]) and leaves[i].grad ~= nil then
          out[#out + 1] = leaves[i].grad:cpu():contiguous():view(-1)
        end
      end
      return torch.cat(out)
    end
    local function both(what, fn, ...)
      local args = table.pack(...)
      local gpu = {}
      for i = 1, args.n do gpu[i] = torch.is_tensor(args[i]) and args[i]:cuda() or args[i] end
      local want = with_grads(fn, ...)
      local got = with_grads(fn, table.unpack(gpu, 1, args.n))
      same_values(got, want, what, want.dtype == 'float64' and {1e-10, 1e-10} or {1e-4, 1e-4})
    end
    for _, dt in ipairs{'float64', 'float32'} do
      local x = torch.randn(2, 4, 9, 8, {dtype = dt})
      local w = torch.randn(6, 4, 3, 3, {dtype = dt})
      local wg = torch.randn(6, 2, 2, 2, {dtype = dt})
      local b = torch.randn(6, {dtype = dt})
      both('conv2d ' .. dt, function(p, q, r) return F.conv2d(p, q, r, {padding = 1}) end, x, w, b)
      both('conv2d strided and dilated ' .. dt, function(p, q, r) return F.conv2d(p, q, r, {stride = 2, dilation = 2}) end,
           x, w, b)
      both('conv2d grouped, same padding of an even kernel ' .. dt,
           function(p, q) return F.conv2d(p, q, nil, {groups = 2, padding = 'same'}) end, x, wg)
      both('conv2d of a transposed input ' .. dt, function(p, q) return F.conv2d(p:transpose(3, 4), q) end, x, w)
      both('conv_transpose2d ' .. dt,
           function(p, q, r) return F.conv_transpose2d(p, q, r, {stride = 2, padding = 1}) end,
           torch.randn(2, 6, 5, 4, {dtype = dt}), torch.randn(6, 3, 3, 3, {dtype = dt}), torch.randn(3, {dtype = dt}))
      both('max_pool2d ' .. dt, function(p) return F.max_pool2d(p, 2) end, x)
      both('max_pool2d padded, strided, ceil ' .. dt,
           function(p) return F.max_pool2d(p, 3, {stride = 2, padding = 1, ceil_mode = true}) end, x)
      both('adaptive_max_pool2d ' .. dt, function(p) return F.adaptive_max_pool2d(p, {4, 3}) end, x)
      both('avg_pool2d ' .. dt, function(p)
        return F.avg_pool2d(p, 3, {stride = 2, padding = 1, ceil_mode = true, count_include_pad = false})
      end, x)
      both('avg_pool2d with a divisor ' .. dt, function(p) return F.avg_pool2d(p, 2, {divisor_override = 3}) end, x)
      both('adaptive_avg_pool2d ' .. dt, function(p) return F.adaptive_avg_pool2d(p, {4, 3}) end, x)
      for _, mode in ipairs{'reflect', 'replicate', 'circular'} do
        both(mode .. ' pad ' .. dt, function(p) return F.pad(p, {2, mode == 'circular' and -1 or 1, 1, 3}, {mode = mode}) end, x)
      end
      both('nearest interpolation ' .. dt, function(p) return F.interpolate(p, {scale_factor = 2}) end, x)
      both('bilinear interpolation ' .. dt, function(p)
        return F.interpolate(p, {size = {5, 11}, mode = 'bilinear', align_corners = true})
      end, x)
      local blocks = {padding = 1, stride = {2, 1}, dilation = {1, 2}}
      both('unfold ' .. dt, function(p) return F.unfold(p, {3, 2}, blocks) end, x)
      both('fold ' .. dt, function(p) return F.fold(p, {9, 8}, {3, 2}, blocks) end, F.unfold(x, {3, 2}, blocks))
      local gamma, beta = torch.randn(4, {dtype = dt}), torch.randn(4, {dtype = dt})
      both('batch_norm training ' .. dt, function(p, g, bb) return F.batch_norm(p, nil, nil, g, bb, true, 0.1, 1e-5) end,
           x, gamma, beta)
      local m0, v0 = torch.randn(4, {dtype = dt}), torch.rand(4, {dtype = dt}) + 0.5
      both('batch_norm eval ' .. dt,
           function(p, g, bb) return F.batch_norm(p, m0:to(p.device), v0:to(p.device), g, bb, false, 0.1, 1e-5) end,
           x, gamma, beta)
      both('group_norm ' .. dt, function(p, g, bb) return F.group_norm(p, 2, g, bb) end, x, gamma, beta)
      both('layer_norm ' .. dt, function(p, g, bb) return F.layer_norm(p, {9, 8}, g, bb) end, x,
           torch.randn(9, 8, {dtype = dt}), torch.randn(9, 8, {dtype = dt}))
      -- the 3-D kernels: cuDNN's convolutions (N-d descriptors, this file's explicit padding where
      -- cuDNN's symmetric one cannot give the output) and the volume pooling kernels
      local v = torch.randn(2, 4, 5, 6, 7, {dtype = dt})
      local w3, b3 = torch.randn(6, 4, 3, 2, 3, {dtype = dt}), torch.randn(6, {dtype = dt})
      both('conv3d ' .. dt, function(p, q, r) return F.conv3d(p, q, r, {padding = {1, 0, 1}}) end, v, w3, b3)
      both('conv3d strided and dilated ' .. dt,
           function(p, q, r) return F.conv3d(p, q, r, {stride = {2, 1, 2}, dilation = {1, 2, 1}}) end, v, w3, b3)
      both('conv3d grouped, same padding of an even kernel ' .. dt,
           function(p, q) return F.conv3d(p, q, nil, {groups = 2, padding = 'same'}) end, v,
           torch.randn(6, 2, 2, 2, 3, {dtype = dt}))
      both('conv3d of a transposed input ' .. dt, function(p, q) return F.conv3d(p:transpose(4, 5), q) end, v, w3)
      both('conv_transpose3d with output_padding ' .. dt,
           function(p, q, r) return F.conv_transpose3d(p, q, r, {stride = 2, padding = 1, output_padding = {1, 0, 1}}) end,
           torch.randn(2, 6, 3, 4, 3, {dtype = dt}), torch.randn(6, 3, 3, 3, 2, {dtype = dt}), torch.randn(3, {dtype = dt}))
      both('conv_transpose3d grouped and dilated ' .. dt,
           function(p, q) return F.conv_transpose3d(p, q, nil, {groups = 2, dilation = {2, 1, 1}}) end,
           torch.randn(2, 4, 3, 4, 3, {dtype = dt}), torch.randn(4, 2, 2, 3, 2, {dtype = dt}))
      both('max_pool3d ' .. dt, function(p) return F.max_pool3d(p, 2) end, v)
      both('max_pool3d padded, strided, dilated, ceil ' .. dt, function(p)
        return F.max_pool3d(p, 3, {stride = {2, 1, 2}, padding = 1, dilation = {1, 2, 1}, ceil_mode = true})
      end, v)
      both('avg_pool3d ' .. dt, function(p)
        return F.avg_pool3d(p, 3, {stride = 2, padding = 1, ceil_mode = true, count_include_pad = false})
      end, v)
      both('avg_pool3d counting the padding ' .. dt, function(p)
        return F.avg_pool3d(p, {2, 3, 3}, {stride = {1, 2, 2}, padding = {1, 1, 0}})
      end, v)
      both('avg_pool3d with a divisor ' .. dt, function(p) return F.avg_pool3d(p, 2, {divisor_override = 3}) end, v)
      local _, ci = F.max_pool3d(v, 3, {stride = 2, padding = 1, return_indices = true})
      local _, gi = F.max_pool3d(v:cuda(), 3, {stride = 2, padding = 1, return_indices = true})
      assert.are.equal('cuda:0', gi.device)
      assert.is_true(torch.equal(gi:cpu(), ci), 'max_pool3d indices ' .. dt)
      -- the running statistics move the same way on both devices
      local rm, rv = torch.zeros(4, {dtype = dt}), torch.ones(4, {dtype = dt})
      local rmg, rvg = rm:cuda(), rv:cuda()
      F.batch_norm(x, rm, rv, nil, nil, true, 0.1, 1e-5)
      F.batch_norm(x:cuda(), rmg, rvg, nil, nil, true, 0.1, 1e-5)
      same_values(rmg, rm, 'running_mean ' .. dt)
      same_values(rvg, rv, 'running_var ' .. dt)
    end
  end)

  it('trains the FashionMNIST CNN example on the GPU to the accuracy it reaches on the CPU', function()
    local cpu, gpu = example_on_both('cnn', 100)
    if not cpu then return end
    assert.is_true(gpu > 60, 'test accuracy ' .. gpu)
    -- the GPU reaches the CPU's accuracy (cuDNN's algorithms and atomic sums do not repeat
    -- bit for bit, so 100 batches land within a couple of points either way: 81.4 % on the
    -- CPU, 82.4 and 82.9 % in two H200 runs)
    assert.is_true(gpu > cpu - 1.5 and gpu < cpu + 4, string.format('GPU %.2f%%, CPU %.2f%%', gpu, cpu))
  end)

  it('writes through index tensors and masks on the GPU as on the CPU, gradients included', function()
    for _, dt in ipairs(DTYPES) do
      local x = input(dt, 'any')
      agree('x[indices] = v ' .. dt, function(t, i, v)
        local c = t:clone(); c[i] = v; c[i:narrow(1, 2, 1)] = 1; return c
      end, x, torch.tensor{3, 1}, input(dt, 'any', 5):narrow(1, 1, 2))
      agree('x[mask] = v, a mask over the leading dim ' .. dt, function(t, m, v)
        local c = t:t():clone(); c[m] = v; return c
      end, x, input('bool', 'any', 4):view(-1):narrow(1, 1, 4), input(dt, 'any', 7):view(-1):narrow(1, 1, 3))
      agree('x[mask] = number ' .. dt, function(t, m) local c = t:clone(); c[m] = 2; return c end, x, input('bool', 'any', 2))
    end
    agree('gradients through x[key] = v', function(a, b)
      local w, v = a:clone():requires_grad_(), b:clone():requires_grad_()
      local y = w * 1
      y[torch.tensor{3, 1}] = v * 2                   -- CPU indices into a GPU tensor
      y[y:gt(0.5)] = v:sum()                          -- a mask and a 0-dim value
      y[{2, {2, 3}}] = v[1]:narrow(1, 1, 2) * 3       -- a slice
      ;(y * y):sum():backward()
      return torch.cat({w.grad:view(-1), v.grad:view(-1)})
    end, input('float64', 'any'), input('float64', 'any', 3):narrow(1, 1, 1))
    local g = torch.zeros(3):cuda()
    g[torch.tensor{2}] = 5
    g[torch.tensor{true, false, true}] = torch.tensor(7.0)       -- a CPU 0-dim value
    assert.are.same({7, 5, 7}, g:cpu():totable())
    local c = torch.zeros(3)
    c[torch.tensor{1}] = torch.tensor(4.0):cuda()                 -- a 0-dim value comes over
    assert.are.same({4, 0, 0}, c:totable())
    local ok, err = pcall(function() c[torch.tensor{1}:cuda()] = 1 end)
    assert.is_false(ok)
    assert.matches("index assignment: indices should be on the CPU or on the indexed tensor's device", err, 1, true)
    ok, err = pcall(function() g[torch.tensor{1}] = torch.ones(1, 2) end)
    assert.is_false(ok)
    assert.matches('index assignment: value of shape 1x2 cannot broadcast to the indexed shape 1', err, 1, true)
  end)

  it('runs autocast regions on the GPU in float16, gradients in the parameters dtype', function()
    local a, w = input('float32', 'any'), input('float32', 'any', 1):t():contiguous()   -- 3x4, 4x3
    local ga, gw = a:cuda(), w:cuda():requires_grad_()
    local y = torch.autocast('cuda', function() return ga:mm(gw) end)
    same_values(y, a:mm(w):half(), 'mm under autocast', {1e-3, 1e-3})
    local loss = torch.autocast('cuda', function() return ga:mm(gw):softmax(2):log():sum() end)
    assert.are.equal('float32', loss.dtype)
    loss:backward()
    local cw = w:clone():requires_grad_()
    a:mm(cw):softmax(2):log():sum():backward()
    same_values(gw.grad, cw.grad, 'the gradient through float16', {2e-2, 2e-2})
    local x, k = torch.randn(2, 3, 6, 6), torch.randn(4, 3, 3, 3)
    local conv = torch.autocast('cuda', function() return nn.F.conv2d(x:cuda(), k:cuda(), nil, {padding = 1}) end)
    same_values(conv, nn.F.conv2d(x, k, nil, {padding = 1}):half(), 'conv2d under autocast', {2e-2, 2e-2})
    -- the CPU's region leaves GPU ops alone, and the GPU's the CPU's
    assert.are.equal('float32', torch.autocast('cpu', function() return ga:mm(gw:detach()) end).dtype)
    assert.are.equal('float32', torch.autocast('cuda', function() return a:mm(w) end).dtype)
  end)

  it('splits, flattens and repeats on the GPU', function()
    local a = input('float32', 'any')
    agree('flatten', function(t) return t:t():flatten() end, a)
    agree('chunk', function(t) return t:chunk(2, 2)[2] end, a)
    agree('repeat', function(t) return t:repeatTensor(2, 1) end, a)
    agree('unbind', function(t) return t:unbind(1)[3] end, a)
  end)

  it('concatenates and stacks on the GPU', function()
    local a, b = input('float32', 'any'), input('float64', 'any', 3)
    agree('cat', function(p, q) return torch.cat({p, q:t():t()}, 2) end, a, b)
    agree('cat of a view', function(p, q) return torch.cat({p:t(), q:t()}, 1) end, a, b)
    agree('stack', function(p, q) return torch.stack({p, q}, 2) end, a, b)
    local ok, err = pcall(torch.cat, {a:cuda(), b})
    assert.is_false(ok)
    assert.matches('cat: expected all tensors to be on the same device', err, 1, true)
  end)

  it('prints a GPU tensor with its values and type', function()
    local s = tostring(torch.tensor{{1.5, 2}, {3, 4}}:cuda())
    assert.matches('torch.cuda.FloatTensor of size 2x2', s, 1, true)
    assert.matches('3%.0+ +4%.0+', s)
    assert.matches('torch.cuda.LongTensor of size 3', tostring(torch.tensor{1, 2, 3}:cuda()), 1, true)
    local big = tostring(torch.arange(1, 10001):cuda():view(100, 100))
    assert.matches('10000', big, 1, true)
    assert.are.equal(3, torch.tensor{1, 2, 3}:cuda()[3])
  end)

  -- Every op of the registry through the calls registry_spec.lua gradchecks (every family's
  -- signatures, every layout, numbers on either side), in float64 on the CPU and on GPU copies:
  -- the same result and the same gradient of every float input, or the same error. Every op
  -- has a CUDA kernel: one that refuses a GPU tensor fails here (so an op added without one
  -- is seen); the refusals are printed.
  it('runs every op of the registry and its derivative on the GPU as on the CPU', function()
    local R = dofile('spec/support/registry_calls.lua')
    local function run(f, inputs, device)
      local ins, leaves = {}, {}
      for i, v in ipairs(inputs) do
        if torch.is_tensor(v) then
          v = v:detach():to(device)
          if v:is_floating_point() then v:requires_grad_(); leaves[#leaves + 1] = v end
        end
        ins[i] = v
      end
      local r = f(table.unpack(ins, 1, #inputs))
      local grads = {}
      if r.requires_grad then
        local seed = R.sample('any', r:numel() > 0 and r:size():totable() or {0}, 7):view(r:size()):to(device)
        ;(r * seed:to(r.dtype)):sum():backward()
        for i, l in ipairs(leaves) do grads[i] = l.grad or torch.zeros_like(l) end
      end
      return r:detach(), grads
    end
    local refused, failures, checked, calls = {}, {}, 0, 0
    for _, op in ipairs(OPS) do
      -- the random ops draw from a CPU generator in these calls: the GPU's own streams are checked
      -- against the CPU's in 'draws random numbers on the GPU from its own generator' below; a
      -- factory and an optimizer step take no tensor to move (their devices have tests of their own)
      local skip = op.family == 'random' or op.family == 'factory' or op.family == 'optim'
      for i, c in ipairs(skip and {} or R.calls(op)) do
        local what = op.name .. ' call ' .. i
        local ok1, want, wgrads = pcall(run, c[2], c[1], 'cpu')
        local ok2, got, ggrads = pcall(run, c[2], c[1], 'cuda')
        local ok, err = pcall(function()
          if not ok2 and tostring(got):find('no kernel for', 1, true) then
            refused[op.name] = tostring(got):gsub('^.-:%d+: ', '')
          elseif not ok1 then
            assert(not ok2, what .. ': the CPU raised (' .. tostring(want) .. ') but the GPU did not')
            local a, b = tostring(want):gsub('^.-:%d+: ', ''), tostring(got):gsub('^.-:%d+: ', '')
            assert(a == b, what .. ': the CPU raised "' .. a .. '", the GPU "' .. b .. '"')
          else
            assert(ok2, what .. ': ' .. tostring(got))
            assert(got.device == 'cuda:0', what .. ': the result is on ' .. got.device)
            same_values(got, want, what)
            assert(#wgrads == #ggrads, what .. ': ' .. #wgrads .. ' gradients on the CPU, ' .. #ggrads .. ' on the GPU')
            for k = 1, #wgrads do same_values(ggrads[k], wgrads[k], what .. ': gradient of input ' .. k) end
            calls = calls + 1
          end
        end)
        if not ok then failures[#failures + 1] = tostring(err):gsub('^.-:%d+: ', '') end
      end
      checked = checked + 1
    end
    local names = {}
    for name in pairs(refused) do names[#names + 1] = name end
    table.sort(names)
    print(string.format('# %d ops, %d calls agree; refused on the GPU: %s', checked, calls,
                        #names > 0 and table.concat(names, ', ') or 'none'))
    for _, name in ipairs(names) do
      failures[#failures + 1] = name .. ' has no CUDA kernel: ' .. refused[name]
    end
    assert(#failures == 0, #failures .. ' failures:\n' .. table.concat(failures, '\n', 1, math.min(#failures, 40)))
    assert.is_true(calls > 900, calls .. ' calls')
  end)

  it('draws random numbers on the GPU from its own generator, the numbers a seed gives on the CPU', function()
    -- the same seed, the same stream on either device (float math within an ulp or two)
    local function twice(what, draw)
      torch.manual_seed(7)
      local want = draw('cpu')
      torch.manual_seed(7)
      local got = draw('cuda')
      assert.are.equal('cuda:0', got.device, what)
      same_values(got, want, what, want.dtype == 'float64' and {1e-12, 1e-12} or nil)
    end
    twice('randn', function(d) return torch.randn(1001, {device = d}) end)
    twice('randn float64', function(d) return torch.randn(3, 5, {dtype = 'float64', device = d}) end)
    twice('rand', function(d) return torch.rand(999, {device = d}) end)
    twice('rand float16', function(d) return torch.rand(64, {dtype = 'float16', device = d}) end)
    twice('randint', function(d) return torch.randint(-5, 17, {40, 3}, {device = d}) end)
    twice('randn_like', function(d) return torch.randn_like(torch.zeros(4, 4, {device = d})) end)
    twice('normal_ of a transposed view', function(d)
      local x = torch.zeros(4, 6, {dtype = 'float64', device = d}):t()
      x:normal_(2, 3)
      return x
    end)
    for _, s in ipairs{{'uniform_', -2, 5}, {'exponential_', 1.5}, {'geometric_', 0.3}, {'cauchy_', 1, 2},
                       {'log_normal_', 0.5, 0.25}, {'random_', 3, 90}, {'bernoulli_', 0.3}} do
      twice(s[1], function(d)
        local x = torch.zeros(257, {dtype = 'float64', device = d})
        x[s[1]](x, table.unpack(s, 2))
        return x
      end)
    end
    twice('random_ of int32', function(d) return torch.zeros(100, {dtype = 'int32', device = d}):random_(-7, 7) end)
    twice('bernoulli of a tensor', function(d) return torch.bernoulli(torch.linspace(0, 1, 50):to(d)) end)
    twice('multinomial', function(d) return torch.multinomial(torch.tensor({{0.1, 0.5, 0.4, 0}, {1, 1, 1, 1}}):to(d), 3) end)
    twice('multinomial with replacement', function(d) return torch.multinomial(torch.linspace(0, 1, 20):to(d), 50, true) end)
    twice('normal of tensor means', function(d) return torch.normal(torch.arange(1, 7):double():view(2, 3):to(d), 0.5) end)
    twice('normal of tensor deviations', function(d) return torch.normal(1.5, torch.linspace(0, 2, 9):to(d)) end)
    twice('normal of both, broadcast', function(d)
      return torch.normal(torch.zeros(3, 1, {device = d}), torch.ones(1, 4, {device = d}))
    end)
    -- a draw on the GPU leaves the CPU's generator where it was, and the states round-trip
    torch.manual_seed(3)
    torch.randn(5, {device = 'cuda'})
    local a = torch.randn(5)
    torch.manual_seed(3)
    same_values(a, torch.randn(5), 'the CPU stream after a GPU draw')
    local state = torch.cuda.get_rng_state()
    local x = torch.rand(10, {device = 'cuda'})
    torch.cuda.set_rng_state(state)
    same_values(torch.rand(10, {device = 'cuda'}):cpu(), x:cpu(), 'set_rng_state')
    torch.cuda.manual_seed(11)
    assert.are.equal(11, torch.cuda.initial_seed())
    -- dropout draws its mask on the GPU
    local kept = nn.F.dropout(torch.ones(20000):cuda(), 0.25)
    assert.are.equal('cuda:0', kept.device)
    local zeros = kept:eq(0):sum():item()
    assert.is_true(math.abs(zeros / 20000 - 0.25) < 0.02, zeros .. ' zeros')
    assert.is_true(math.abs(kept:max():item() - 1 / 0.75) < 1e-6)
  end)

  it('differentiates on the GPU as on the CPU, and moves gradients back across devices', function()
    local xc = torch.randn(4, 5, {dtype = 'float64'})
    local wc = torch.randn(5, 3, {dtype = 'float64'})
    local function loss(x, w) return ((x:mm(w):tanh() * 2 + 1):softmax(2):log() * x:sum(2, true)):mean() end
    local x1, w1 = xc:clone():requires_grad_(), wc:clone():requires_grad_()
    loss(x1, w1):backward()
    local x2, w2 = xc:cuda():requires_grad_(), wc:cuda():requires_grad_()
    local l2 = loss(x2, w2)
    l2:backward()
    assert.are.equal('cuda:0', x2.grad.device)
    same_values(x2.grad, x1.grad, 'dloss/dx')
    same_values(w2.grad, w1.grad, 'dloss/dw')
    -- a CPU leaf moved to the GPU gets its gradient on the CPU
    local leaf = xc:clone():requires_grad_()
    local y = leaf:cuda() * 3
    y:sum():backward()
    assert.are.equal('cpu', leaf.grad.device)
    same_values(leaf.grad, torch.full({4, 5}, 3, {dtype = 'float64'}), 'through :cuda()')
  end)

  it('runs torch.linalg on GPU tensors (LAPACK on the host), results and gradients on the GPU', function()
    torch.manual_seed(5)
    local a = torch.randn(4, 4, {dtype = 'float64'}) + torch.eye(4, {dtype = 'float64'}) * 4
    local b = torch.randn(4, 2, {dtype = 'float64'})
    local spd = a:mm(a:t()) + torch.eye(4, {dtype = 'float64'})
    local cases = {
      {'solve', function(m, r) return torch.linalg.solve(m, r) end, {a, b}},
      {'inv', function(m) return torch.linalg.inv(m) end, {a}},
      {'det', function(m) return torch.linalg.det(m) end, {a}},
      {'cholesky', function(m) return torch.linalg.cholesky(m) end, {spd}},
      {'eigvalsh', function(m) return torch.linalg.eigvalsh(m) end, {spd}},
      {'svdvals', function(m) return torch.linalg.svdvals(m) end, {a}},
      {'qr R', function(m) local _, r = torch.linalg.qr(m); return r:abs() end, {a}},
    }
    for _, case in ipairs(cases) do
      local name, f, args = case[1], case[2], case[3]
      local cpu, gpu = {}, {}
      for i, t in ipairs(args) do
        cpu[i] = t:clone():requires_grad_()
        gpu[i] = t:cuda():requires_grad_()
      end
      local want, got = f(table.unpack(cpu)), f(table.unpack(gpu))
      assert.are.equal('cuda:0', got.device, name)
      same_values(got, want:detach(), name)
      want:sum():backward()
      got:sum():backward()
      for i = 1, #args do
        assert.are.equal('cuda:0', gpu[i].grad.device, name .. ': grad device')
        same_values(gpu[i].grad, cpu[i].grad, name .. ': grad ' .. i, {1e-9, 1e-9})
      end
    end
  end)

  it('runs custom Functions and checkpointed segments on GPU tensors', function()
    local Cube = torch.autograd.Function('GpuCube')
    function Cube.forward(ctx, x)
      ctx:save_for_backward(x)
      return x * x * x
    end
    function Cube.backward(ctx, g)
      local x = table.unpack(ctx.saved_tensors)
      return g * x * x * 3
    end
    local xc = torch.randn(3, 4, {dtype = 'float64'})
    local xg = xc:cuda():requires_grad_()
    local y = Cube.apply(xg)
    assert.are.equal('cuda:0', y.device)
    y:sum():backward()
    same_values(xg.grad, xc * xc * 3, 'the custom Function\'s gradient')
    local Double = torch.autograd.Function('GpuDoubleInPlace')
    function Double.forward(ctx, x)
      x:mul_(2)
      ctx:mark_dirty(x)
      return x
    end
    function Double.backward(_, g) return g * 2 end
    local z = xc:cuda():requires_grad_()
    local w = z * 1
    local r = Double.apply(w)
    assert.is_true(rawequal(r, w))
    r:sum():backward()
    same_values(z.grad, torch.full({3, 4}, 2, {dtype = 'float64'}), 'mark_dirty\'s gradient')
    local lin = nn.Linear(4, 3):to{dtype = 'float64'}
    local function seg(t) return lin(t):tanh() end
    local plain = xc:clone():requires_grad_()
    seg(plain):pow(2):sum():backward()
    local want_w = lin.weight.grad:clone()
    lin:zero_grad()
    lin:cuda()
    local xin = xc:cuda():requires_grad_()
    torch.utils.checkpoint(seg, xin):pow(2):sum():backward()
    same_values(xin.grad, plain.grad, 'the checkpointed input\'s gradient')
    same_values(lin.weight.grad, want_w, 'the checkpointed weight\'s gradient')
  end)

  it('runs the bitwise ops and the integer shifts on the GPU as on the CPU', function()
    local x = torch.tensor({{5, -3, 12}, {0, 7, -8}}, {dtype = 'int64'})
    local y = torch.tensor({{3, 6, 10}, {1, -1, 2}}, {dtype = 'int64'})
    for _, op in ipairs{'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_left_shift', 'bitwise_right_shift'} do
      local k = op:match('shift') and y:abs() or y
      same_values(torch[op](x:cuda(), k:cuda()), torch[op](x, k), op)
      same_values(torch[op](x:t():cuda(), k:t():cuda()), torch[op](x:t(), k:t()), op .. ' transposed')
    end
    same_values(torch.bitwise_not(x:cuda()), torch.bitwise_not(x), 'bitwise_not')
    for _, dt in ipairs{'uint8', 'int8', 'int16', 'int32', 'bool'} do
      local a, c = x:abs():to(dt), y:abs():to(dt)
      same_values(torch.bitwise_xor(a:cuda(), c:cuda()), torch.bitwise_xor(a, c), 'bitwise_xor ' .. dt)
    end
    assert.has_error(function() torch.bitwise_and(torch.ones(2):cuda(), torch.ones(2):cuda()) end)
  end)

  it('trains a small network on the GPU to the CPU result', function()
    local function run(device)
      torch.manual_seed(7)
      local model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
      model:to(device)
      local opt = require('optim').SGD(model:parameters(), {lr = 0.1, momentum = 0.9})
      local x = torch.randn(16, 6):to(device)
      local y = torch.randn(16, 3):to(device)
      local last
      for _ = 1, 20 do
        opt:zero_grad()
        local l = ((model(x) - y) ^ 2):mean()
        l:backward()
        opt:step()
        last = l:item()
      end
      return last, model
    end
    local lc = run('cpu')
    local lg, model = run('cuda')
    assert.is_true(math.abs(lc - lg) < 1e-4 * math.max(1, math.abs(lc)))
    for _, p in ipairs(model:parameters()) do assert.are.equal('cuda:0', p.device) end
    model:cpu()
    for _, p in ipairs(model:parameters()) do assert.are.equal('cpu', p.device) end
  end)

  it('unscales gradients for torch.amp.GradScaler in one kernel, finding infs and NaNs', function()
    local optim = require 'optim'
    for _, dt in ipairs{'float32', 'float64', 'float16', 'bfloat16'} do
      local w = torch.zeros(3, {dtype = dt, device = 'cuda'}):requires_grad_()
      local v = torch.zeros(2, 2, {dtype = dt, device = 'cuda'}):requires_grad_()
      w.grad = torch.tensor({4, -8, 2}, {dtype = dt}):to('cuda')
      v.grad = torch.tensor({{4, 12}, {8, 16}}, {dtype = dt}):t():to('cuda')     -- not contiguous
      local s = torch.amp.GradScaler('cuda', {init_scale = 4})
      local opt = optim.SGD({w, v}, {lr = 0})
      s:unscale_(opt)
      assert.is_true(torch.equal(w.grad:to('cpu'), torch.tensor({1, -2, 0.5}, {dtype = dt})), dt)
      assert.is_true(torch.equal(v.grad:to('cpu'), torch.tensor({{1, 2}, {3, 4}}, {dtype = dt})), dt)
      assert.is_false(s.per_optimizer[opt].found_inf, dt)
      s:update()
      w.grad = torch.tensor({4, 0 / 0, 2}, {dtype = dt}):to('cuda')
      s:step(opt)
      assert.is_true(s.per_optimizer[opt].found_inf, dt .. ': the NaN')
      assert.are.equal(1, w.grad:to('cpu')[1], dt .. ': unscaled even so')
    end
  end)

  it('runs every fused optimizer step on the GPU as on the CPU', function()
    local optim = require 'optim'
    local cases = {
      {'SGD', {lr = 0.1}}, {'SGD', {lr = 0.1, momentum = 0.9, nesterov = true, weight_decay = 0.01}},
      {'SGD', {lr = 0.1, momentum = 0.9, dampening = 0.3, maximize = true}},
      {'Adam', {lr = 0.01}}, {'Adam', {lr = 0.01, amsgrad = true, weight_decay = 0.1}},
      {'AdamW', {lr = 0.01, weight_decay = 0.1}}, {'Adam', {lr = 0.01, maximize = true}},
      {'RMSprop', {lr = 0.01}}, {'RMSprop', {lr = 0.01, centered = true, momentum = 0.5}},
      {'Adagrad', {lr = 0.1, weight_decay = 0.01, lr_decay = 0.01}}, {'Adadelta', {lr = 1, weight_decay = 0.01}},
      {'Adamax', {lr = 0.01, weight_decay = 0.01}}, {'NAdam', {lr = 0.01}},
      {'NAdam', {lr = 0.01, weight_decay = 0.1, decoupled_weight_decay = true}}, {'RAdam', {lr = 0.01}},
    }
    for _, dt in ipairs{'float32', 'float64'} do
      for _, case in ipairs(cases) do
        local what = case[1] .. ' ' .. dt .. ' ' .. tostring(next(case[2]) and table.concat((function()
          local t = {} for k, v in pairs(case[2]) do t[#t + 1] = k .. '=' .. tostring(v) end table.sort(t) return t end)(), ','))
        local function run(device)
          torch.manual_seed(3)
          local w = torch.randn(7, 5, {dtype = dt}):to(device):requires_grad_()
          local b = torch.randn(5, {dtype = dt}):to(device):t():requires_grad_()   -- a 1-D view
          local opt = optim[case[1]]({w, b}, case[2])
          local x = torch.randn(9, 7, {dtype = dt}):to(device)
          for _ = 1, 12 do
            opt:zero_grad()
            local loss = ((x:mm(w) + b):tanh():sum(2) ^ 2):mean()
            loss:backward()
            opt:step()
          end
          return w, b
        end
        local wc, bc = run('cpu')
        local wg, bg = run('cuda')
        local tol = dt == 'float64' and {1e-10, 1e-10} or {2e-5, 2e-5}
        same_values(wg:detach(), wc:detach(), what .. ': weight', tol)
        same_values(bg:detach(), bc:detach(), what .. ': bias', tol)
      end
    end
  end)

  it('saves GPU tensors and loads them back on the GPU, or where map_location says', function()
    local path = os.tmpname()
    local model = nn.Linear(3, 2):cuda()
    local x = torch.randn(4, 3):cuda()
    torch.save(path, {x = x, state = model:state_dict(), cpu = torch.ones(2)})
    local back = torch.load(path)
    assert.are.equal('cuda:0', back.x.device)
    assert.are.equal('cuda:0', back.state.weight.device)
    assert.are.equal('cpu', back.cpu.device)
    same_values(back.x, x:cpu(), 'a saved GPU tensor')
    local on_cpu = torch.load(path, {map_location = 'cpu'})
    assert.are.equal('cpu', on_cpu.x.device)
    same_values(on_cpu.state.weight, model.weight:detach():cpu(), 'a saved GPU parameter')
    assert.are.equal('cuda:0', torch.load(path, 'cuda').cpu.device)
    os.remove(path)
  end)

  it("speaks Torch7's names for GPU tensors", function()
    local x = torch.CudaTensor(2, 3):fill(2)
    assert.are.equal('torch.cuda.FloatTensor', x:type())
    assert.are.equal(12, x:sum():item())
    assert.are.equal('torch.cuda.DoubleTensor', torch.CudaDoubleTensor({1, 2}):type())
    assert.are.equal('torch.cuda.LongTensor', torch.CudaLongTensor(3):type())
    local cutorch = require 'cutorch'
    assert.are.equal(torch.cuda.device_count(), cutorch.getDeviceCount())
    assert.are.equal(1, cutorch.getDevice())
    cutorch.synchronize()
    assert.is_string(cutorch.getDeviceProperties(1).name)
  end)

  it('trains the FashionMNIST MLP example on the GPU to the accuracy it reaches on the CPU', function()
    local cpu, gpu = example_on_both('mlp', 200)
    if not cpu then return end
    assert.is_true(gpu > 70, 'test accuracy ' .. gpu)
    assert.is_true(math.abs(gpu - cpu) < 1.0, string.format('GPU %.2f%%, CPU %.2f%%', gpu, cpu))
  end)

  it('queues work on streams and times it with events', function()
    local s = torch.cuda.Stream()
    local start, stop = torch.cuda.Event({enable_timing = true}), torch.cuda.Event({enable_timing = true})
    local a = torch.randn(512, 512):cuda()
    local ready = torch.cuda.Event()
    ready:record()
    s:wait_event(ready)                  -- s does not wait on the default stream by itself
    local c = torch.cuda.stream(s, function()
      assert.are.equal(s, torch.cuda.current_stream())
      start:record()
      local r = a:mm(a)
      stop:record()
      return r
    end)
    assert.are.equal(torch.cuda.default_stream(), torch.cuda.current_stream())
    s:synchronize()
    assert.is_true(s:query())
    assert.is_true(stop:query())
    assert.is_true(start:elapsed_time(stop) >= 0)
    same_values(c, a:cpu():mm(a:cpu()), 'a product on a side stream', {1e-3, 1e-3})
    local ok = pcall(torch.cuda.stream, s, function() error('inside') end)
    assert.is_false(ok)
    assert.are.equal(torch.cuda.default_stream(), torch.cuda.current_stream())
  end)

  it('reuses freed memory and counts it', function()
    collectgarbage()
    torch.cuda.synchronize()
    local before = torch.cuda.memory_allocated()
    local x = torch.zeros(1024, 1024):cuda()
    assert.is_true(torch.cuda.memory_allocated() - before >= 4 * 1024 * 1024)
    assert.is_true(torch.cuda.max_memory_allocated() >= torch.cuda.memory_allocated())
    local reserved = torch.cuda.memory_reserved()
    x = nil
    collectgarbage()
    collectgarbage()
    assert.are.equal(before, torch.cuda.memory_allocated())
    local y = torch.zeros(1024, 1024):cuda()
    assert.are.equal(reserved, torch.cuda.memory_reserved())   -- served from the cache
    assert.are.equal(0, y:sum():item())
    torch.cuda.empty_cache()
  end)
end)
