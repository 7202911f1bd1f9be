-- first_hour_api_spec.lua: the API a new user reaches for in the first hour
-- (issue 21, items 6, 7, 12 and 13): options passed positionally or in a
-- table, grad-mode block guards, GPU calls on a machine without one, and the
-- names the PyTorch guides use (checkpoint of a module, deterministic
-- algorithms, storage_offset, testing.assert_close, benchmark.Timer,
-- module:half()/bfloat16(), memory counters, torch.Size).
local torch = require 'torch'
local nn = require 'nn'
local optim = require 'optim'

local HERE = 'first_hour_api_spec%.lua:%d+: '

-- the error fn raised (it must raise)
local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, 'expected an error')
  return tostring(err)
end

-- asserts err is at this file's line and contains each of the strings
local function at_caller(err, ...)
  assert.truthy(err:match('^[^\n]*' .. HERE), 'not at the caller\'s line: ' .. err)
  for _, s in ipairs({...}) do assert.truthy(err:find(s, 1, true), 'missing "' .. s .. '" in: ' .. err) end
end

local function lrs_of(sched, opt, n)
  local out = {opt.param_groups[1].lr}
  for _ = 1, n do
    sched:step()
    out[#out + 1] = opt.param_groups[1].lr
  end
  return out
end

local function close_list(a, b)
  assert.are.equal(#b, #a)
  for i = 1, #a do assert.is_true(math.abs(a[i] - b[i]) < 1e-12, ('%d: %s vs %s'):format(i, a[i], b[i])) end
end

local function new_opt(lr)
  return optim.SGD({torch.zeros(2, {requires_grad = true})}, {lr = lr or 1})
end

describe('item 6: options positionally or in a table', function()
  it('StepLR takes {step_size=, gamma=} as the issue writes it', function()
    local opt = new_opt(1)
    local s = optim.lr_scheduler.StepLR(opt, {step_size = 2, gamma = 0.5})
    -- PyTorch: lr 1 for epochs 0-1, 0.5 for 2-3, 0.25 at 4
    close_list(lrs_of(s, opt, 4), {1, 1, 0.5, 0.5, 0.25})
  end)

  it('StepLR: positional, table, and positional then a table give one schedule', function()
    local forms = {
      function(o) return optim.lr_scheduler.StepLR(o, 2, 0.5) end,
      function(o) return optim.lr_scheduler.StepLR(o, 2, {gamma = 0.5}) end,
      function(o) return optim.StepLR(o, {step_size = 2, gamma = 0.5}) end,
    }
    for _, make in ipairs(forms) do
      local opt = new_opt(1)
      close_list(lrs_of(make(opt), opt, 4), {1, 1, 0.5, 0.5, 0.25})
    end
  end)

  it('every scheduler takes both forms with the same result', function()
    local S = optim.lr_scheduler
    local pairs_of_forms = {
      {function(o) return S.MultiStepLR(o, {2, 3}, 0.1) end,
       function(o) return S.MultiStepLR(o, {milestones = {2, 3}, gamma = 0.1}) end},
      {function(o) return S.ConstantLR(o, 0.5, 2) end, function(o) return S.ConstantLR(o, {factor = 0.5, total_iters = 2}) end},
      {function(o) return S.LinearLR(o, 0.5, 1, 4) end,
       function(o) return S.LinearLR(o, {start_factor = 0.5, end_factor = 1, total_iters = 4}) end},
      {function(o) return S.ExponentialLR(o, 0.9) end, function(o) return S.ExponentialLR(o, {gamma = 0.9}) end},
      {function(o) return S.CosineAnnealingLR(o, 4, 0.1) end,
       function(o) return S.CosineAnnealingLR(o, {T_max = 4, eta_min = 0.1}) end},
      {function(o) return S.CosineAnnealingWarmRestarts(o, 2, 2) end,
       function(o) return S.CosineAnnealingWarmRestarts(o, {T_0 = 2, T_mult = 2}) end},
      {function(o) return S.LambdaLR(o, function(e) return 1 / (e + 1) end) end,
       function(o) return S.LambdaLR(o, {lr_lambda = function(e) return 1 / (e + 1) end}) end},
      {function(o) return S.OneCycleLR(o, 1, 10) end, function(o) return S.OneCycleLR(o, {max_lr = 1, total_steps = 10}) end},
    }
    for i, forms in ipairs(pairs_of_forms) do
      local o1, o2 = new_opt(1), new_opt(1)
      local a, b = lrs_of(forms[1](o1), o1, 5), lrs_of(forms[2](o2), o2, 5)
      assert.are.same(a, b, 'scheduler ' .. i)
    end
    -- ExponentialLR from the definition: lr * 0.9^epoch
    local o = new_opt(1)
    close_list(lrs_of(S.ExponentialLR(o, 0.9), o, 3), {1, 0.9, 0.81, 0.729})
  end)

  it('ReduceLROnPlateau and SequentialLR take both forms', function()
    local S = optim.lr_scheduler
    local o = new_opt(1)
    local p = S.ReduceLROnPlateau(o, 'max', 0.5, 0)
    assert.are.equal('max', p.mode)
    p:step(1); p:step(1)                 -- no improvement, patience 0: halved
    assert.are.equal(0.5, o.param_groups[1].lr)
    local q = S.ReduceLROnPlateau(new_opt(1), {mode = 'max', factor = 0.5, patience = 0})
    assert.are.equal(0.5, q.factor)
    local o1, o2 = new_opt(1), new_opt(1)
    local s1 = S.SequentialLR(o1, {S.ConstantLR(o1, 0.5, 2), S.ExponentialLR(o1, 0.9)}, {2})
    local s2 = S.SequentialLR(o2, {schedulers = {S.ConstantLR(o2, 0.5, 2), S.ExponentialLR(o2, 0.9)}, milestones = {2}})
    assert.are.same(lrs_of(s1, o1, 4), lrs_of(s2, o2, 4))
  end)

  it('optimizers take PyTorch\'s positional order too', function()
    local p = torch.zeros(2, {requires_grad = true})
    local sgd = optim.SGD({p}, 0.1, 0.9)
    assert.are.equal(0.1, sgd.param_groups[1].lr)
    assert.are.equal(0.9, sgd.param_groups[1].momentum)
    local adam = optim.Adam({p}, 0.01, {0.8, 0.9}, 1e-6, 0, false, {maximize = true})
    local g = adam.param_groups[1]
    assert.are.same({0.01, {0.8, 0.9}, 1e-6, true}, {g.lr, g.betas, g.eps, g.maximize})
    assert.are.equal(0.5, optim.RMSprop({p}, 0.01, 0.5).param_groups[1].alpha)
    assert.are.equal(7, optim.LBFGS({p}, 1, 7).param_groups[1].max_iter)
    assert.are.equal(0.2, optim.SGD({p}, 0.2).param_groups[1].lr)              -- the old number form
  end)

  it('a bad call names the function and shows the accepted call forms at the caller\'s line', function()
    local opt = new_opt(1)
    at_caller(err_of(function() optim.lr_scheduler.StepLR(opt, 'five') end),
              'optim.lr_scheduler.StepLR: step_size must be a positive integer, got five',
              'call as optim.lr_scheduler.StepLR(optimizer, step_size, gamma, last_epoch)',
              'optim.lr_scheduler.StepLR(optimizer, {step_size=..., gamma=0.1, last_epoch=-1})')
    at_caller(err_of(function() optim.lr_scheduler.StepLR(opt, {stepsize = 5}) end),
              "unknown option 'stepsize'", 'call as')
    at_caller(err_of(function() optim.lr_scheduler.StepLR(opt) end), 'step_size is required')
    at_caller(err_of(function() optim.lr_scheduler.StepLR(opt, 5, {step_size = 4}) end), "option 'step_size' given twice")
    at_caller(err_of(function() optim.lr_scheduler.StepLR(opt, 5, 0.5, -1, 3) end), 'too many arguments')
    local p = torch.zeros(2, {requires_grad = true})
    at_caller(err_of(function() optim.Adam({p}, {lr = 0.1, beta = 0.9}) end),
              "optim.Adam: unknown option 'beta'", 'optim.Adam(params, lr, betas, eps, weight_decay, amsgrad')
  end)
end)

describe('item 7: grad-mode blocks', function()
  after_each(function()
    torch.set_grad_enabled(true)
    torch.autograd.set_detect_anomaly(false)
  end)

  it('local g <close> = torch.no_grad() turns recording off for the block', function()
    local x = torch.ones(2, {requires_grad = true})
    local y
    do
      local g <close> = torch.no_grad()
      y = x * 2
      assert.is_false(torch.is_grad_enabled())
    end
    assert.is_false(y.requires_grad)
    assert.is_true(torch.is_grad_enabled())
    assert.is_true((x * 2).requires_grad)
  end)

  it('the guard restores the mode when an error leaves the block', function()
    local ok = pcall(function()
      local g <close> = torch.no_grad()
      error('boom')
    end)
    assert.is_false(ok)
    assert.is_true(torch.is_grad_enabled())
  end)

  it('guards nest and restore the mode they found', function()
    do
      local a <close> = torch.no_grad()
      do
        local b <close> = torch.enable_grad()
        assert.is_true(torch.is_grad_enabled())
      end
      assert.is_false(torch.is_grad_enabled())
    end
    assert.is_true(torch.is_grad_enabled())
  end)

  it('torch.set_grad_enabled(false) sets the mode now and is a guard too', function()
    torch.set_grad_enabled(false)
    assert.is_false(torch.is_grad_enabled())
    torch.set_grad_enabled(true)
    do
      local g <close> = torch.set_grad_enabled(false)
      assert.is_false(torch.is_grad_enabled())
    end
    assert.is_true(torch.is_grad_enabled())
  end)

  it('torch.no_grad(fn, ...) still runs fn, modules too', function()
    assert.are.equal(3, torch.no_grad(function(a, b) return a + b end, 1, 2))
    local m = nn.Linear(2, 1)
    local y = torch.no_grad(m, torch.ones(1, 2))
    assert.is_false(y.requires_grad)
  end)

  it('inference_mode and detect_anomaly have the block form', function()
    do
      local g <close> = torch.inference_mode()
      assert.is_true(torch.is_inference_mode_enabled())
      assert.is_false(torch.is_grad_enabled())
    end
    assert.is_false(torch.is_inference_mode_enabled())
    assert.is_true(torch.is_grad_enabled())
    do
      local g <close> = torch.autograd.detect_anomaly()
      assert.is_true(torch.autograd.is_anomaly_enabled())
    end
    assert.is_false(torch.autograd.is_anomaly_enabled())
    assert.are.equal(5, torch.inference_mode(function() return 5 end))
  end)

  it('a misuse says which forms exist, at the caller\'s line', function()
    at_caller(err_of(function() torch.no_grad(42) end),
              'torch.no_grad: expected a function to run (torch.no_grad(fn, ...)) or no argument for a block guard ' ..
              '(local g <close> = torch.no_grad()), got number')
    at_caller(err_of(function() torch.set_grad_enabled('no') end),
              'torch.set_grad_enabled: expected true or false', 'local g <close> = torch.set_grad_enabled(false)')
    at_caller(err_of(function() torch.inference_mode('x') end), 'torch.inference_mode: expected a function')
    at_caller(err_of(function() torch.autograd.detect_anomaly(1) end), 'torch.autograd.detect_anomaly: expected a function')
    assert.is_true(torch.is_grad_enabled())
  end)
end)

describe('item 12: GPU calls on a machine without a GPU', function()
  if torch.cuda.is_available() then
    pending('a GPU is here: the no-GPU messages are not reachable')
    return
  end

  it('torch.cuda exists and says no', function()
    assert.is_false(torch.cuda.is_available())
    assert.are.equal(0, torch.cuda.device_count())
    assert.is_string(torch.cuda.unavailable_reason())
    assert.are.equal('cuda', torch.device('cuda'))          -- a device is still a value
    assert.are.equal('cuda:1', torch.device('cuda', 1))
  end)

  it('every move to the GPU raises "no CUDA device" at the caller\'s line', function()
    local x = torch.randn(2)
    local m = nn.Linear(2, 2)
    local why = torch.cuda.unavailable_reason()
    local cases = {
      {function() x:cuda() end, "cuda: no CUDA device for 'cuda': "},
      {function() x:to('cuda') end, "to: no CUDA device for 'cuda': "},
      {function() x:to({device = 'cuda'}) end, "to: no CUDA device for 'cuda': "},
      {function() x:to(torch.device('cuda')) end, "to: no CUDA device for 'cuda': "},
      {function() torch.zeros(2, {device = 'cuda'}) end, "zeros: no CUDA device for 'cuda': "},
      {function() m:cuda() end, "to: no CUDA device for 'cuda': "},
      {function() m:to('cuda') end, "to: no CUDA device for 'cuda': "},
      {function() m:to({device = 'cuda'}) end, "to: no CUDA device for 'cuda': "},
      {function() m:type('torch.CudaTensor') end, "to: no CUDA device for 'cuda': "},
      {function() torch.CudaTensor(2) end, "torch.CudaTensor: no CUDA device for 'cuda': "},
    }
    for _, c in ipairs(cases) do at_caller(err_of(c[1]), c[2], why) end
    assert.are.equal('cpu', m.weight.device)                  -- nothing half-moved
  end)

  it('the settings PyTorch scripts set at their top run', function()
    torch.backends.cudnn.benchmark = true
    torch.backends.cudnn.deterministic = true
    assert.is_true(torch.backends.cudnn.deterministic)
    assert.is_false(torch.backends.cudnn.is_available())
    torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = false, false
    at_caller(err_of(function() torch.backends.cudnn.benchmarks = true end), 'torch.backends.cudnn: no setting benchmarks')
    local device = torch.cuda.is_available() and 'cuda' or 'cpu'
    assert.are.equal('cpu', torch.zeros(2, {device = device}):to(device).device)
  end)

  it('the reason says what is missing, not only the CUDA runtime\'s words', function()
    local why = torch.cuda.unavailable_reason()
    assert.truthy(why:find('no GPU that CUDA can use on this machine', 1, true) or
                  why:find('built without its CUDA backend', 1, true) or
                  why:find('the CUDA backend', 1, true), why)
  end)
end)

describe('item 13: the names the guides use', function()
  it('torch.utils.checkpoint takes a module and gives the same gradients', function()
    torch.manual_seed(1)
    local block = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    local x = torch.randn(5, 4, {requires_grad = true})
    block(x):sum():backward()
    local gx, gw = x.grad:clone(), block[1].weight.grad:clone()
    x.grad = nil
    block:zero_grad()
    torch.utils.checkpoint(block, x):sum():backward()
    torch.testing.assert_close(x.grad, gx)
    torch.testing.assert_close(block[1].weight.grad, gw)
  end)

  it('torch.use_deterministic_algorithms records its flag', function()
    assert.is_false(torch.are_deterministic_algorithms_enabled())
    torch.use_deterministic_algorithms(true)
    assert.is_true(torch.are_deterministic_algorithms_enabled())
    assert.is_false(torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(true, {warn_only = true})
    assert.is_true(torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(false)
    assert.is_false(torch.are_deterministic_algorithms_enabled())
    at_caller(err_of(function() torch.use_deterministic_algorithms(1) end),
              'torch.use_deterministic_algorithms: expected true or false, got number')
  end)

  it('x:storage_offset() is 0-based beside Torch7\'s 1-based storageOffset', function()
    local x = torch.arange(12):view(3, 4)
    assert.are.equal(0, x:storage_offset())
    assert.are.equal(4, x[2]:storage_offset())           -- PyTorch: x[1].storage_offset() == 4
    assert.are.equal(5, x[2]:storageOffset())
    assert.are.equal(6, x:narrow(2, 3, 2)[2]:storage_offset())
  end)

  describe('torch.testing.assert_close', function()
    local T = torch.testing

    it('passes within the dtype\'s default tolerances', function()
      T.assert_close(torch.tensor({1.0, 2.0}), torch.tensor({1.0, 2 + 1e-6}))            -- float32: atol 1e-5
      T.assert_close(torch.tensor({1.0, 2.0}, {dtype = 'float64'}), torch.tensor({1.0, 2 + 1e-8}, {dtype = 'float64'}))
      T.assert_close(torch.tensor({1.0, 0 / 0}), torch.tensor({1.0, 0 / 0}), {equal_nan = true})
      T.assert_close(torch.tensor({math.huge}), torch.tensor({math.huge}))
      T.assert_close(torch.tensor({1.0, 2.0}), torch.tensor({1.0, 2.1}), {rtol = 0.1, atol = 0})
      T.assert_close(torch.tensor({1.0, 2.0}), torch.tensor({1.0, 2.0}, {dtype = 'float64'}), {check_dtype = false})
      T.assert_close(torch.tensor({1.0, 2.0}), {1, 2})                                  -- a table: the tensor's dtype
    end)

    it('reports as PyTorch (1-based indices)', function()
      -- PyTorch: assert_close(torch.tensor([1.,2.,3.]), torch.tensor([1.,2.1,3.]))
      local err = err_of(function() T.assert_close(torch.tensor({1.0, 2.0, 3.0}), torch.tensor({1.0, 2.1, 3.0})) end)
      at_caller(err, 'assert_close: Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n' ..
                'Greatest absolute difference: 0.09999990463256836 at index (2) (up to 1e-05 allowed)\n' ..
                'Greatest relative difference: 0.04761900380253792 at index (2) (up to 1.3e-06 allowed)')
      -- PyTorch: [[1,2],[3,4]] vs [[1,2],[3.5,4]]: index (1, 0)
      err = err_of(function() T.assert_close(torch.tensor({{1.0, 2.0}, {3.0, 4.0}}), torch.tensor({{1.0, 2.0}, {3.5, 4.0}})) end)
      at_caller(err, 'Mismatched elements: 1 / 4 (25.0%)', 'Greatest absolute difference: 0.5 at index (2, 1)')
      -- integers compare exactly
      err = err_of(function() T.assert_close(torch.tensor({1, 2, 3}, {dtype = 'int64'}), torch.tensor({1, 2, 4}, {dtype = 'int64'})) end)
      at_caller(err, 'Tensor-likes are not equal!', 'Greatest absolute difference: 1 at index (3)\n' ..
                'Greatest relative difference: 0.25 at index (3)')
      err = err_of(function() T.assert_close(torch.tensor({0 / 0}), torch.tensor({0 / 0})) end)
      at_caller(err, 'Greatest absolute difference: nan at index (1)')
    end)

    it('checks shape, dtype and the tolerance pair', function()
      at_caller(err_of(function() T.assert_close(torch.zeros(2), torch.zeros(3)) end),
                "The values for attribute 'shape' do not match: torch.Size([2]) != torch.Size([3]).")
      at_caller(err_of(function() T.assert_close(torch.zeros(2), torch.zeros(2, {dtype = 'float64'})) end),
                "The values for attribute 'dtype' do not match: torch.float32 != torch.float64.")
      at_caller(err_of(function() T.assert_close(torch.zeros(2), torch.zeros(2), {rtol = 1e-3}) end),
                "both 'rtol' and 'atol' must be given or omitted")
      at_caller(err_of(function() T.assert_close(torch.zeros(2), torch.zeros(2), {rtl = 1}) end), "unknown option 'rtl'")
    end)

    it('numbers report as PyTorch\'s scalars', function()
      -- PyTorch: assert_close(1.0, 1.1)
      at_caller(err_of(function() T.assert_close(1.0, 1.1) end),
                'Scalars are not close!\n\nExpected 1.1 but got 1.0.\n' ..
                'Absolute difference: 0.10000000000000009 (up to 1e-07 allowed)\n' ..
                'Relative difference: 0.09090909090909098 (up to 1e-07 allowed)')
    end)
  end)

  describe('torch.utils.benchmark.Timer', function()
    local Timer = torch.utils.benchmark.Timer

    it('timeit(n) runs the statement n times and gives a Measurement', function()
      local count = 0
      local m = Timer{stmt = function() count = count + 1 end, label = 'count'}:timeit(50)
      assert.is_true(count >= 50)
      assert.are.equal(50, m.number_per_run)
      assert.are.equal(1, #m.times)
      assert.are.equal(m.times[1], m.median)
      local text = tostring(m)
      assert.truthy(text:find('\ncount\n', 1, true), text)
      assert.truthy(text:find('1 measurement, 50 runs , 1 thread', 1, true), text)
    end)

    it('blocked_autorange measures blocks for min_run_time and prints median and IQR', function()
      local t = Timer{stmt = 'acc = acc + x', setup = 'acc = 0', globals = {x = 2}, label = 'add'}
      local m = t:blocked_autorange({min_run_time = 0.05})
      local total = 0
      for _, v in ipairs(m.times) do total = total + v * m.number_per_run end
      assert.is_true(total >= 0.05)
      local sorted = {table.unpack(m.times)}
      table.sort(sorted)
      assert.is_true(m.median >= sorted[1] and m.median <= sorted[#sorted])
      local text = tostring(m)
      assert.truthy(text:match('\nadd\nsetup: acc = 0\n  Median: [%d.]+ [num]?s\n'), text)
      if #m.times >= 4 then assert.truthy(text:find('\n  IQR:    ', 1, true), text) end
      assert.truthy(text:find(#m.times .. ' measurements, ' .. m.number_per_run .. ' runs per measurement, 1 thread',
                              1, true), text)
    end)

    it('bad options and statements name the Timer', function()
      at_caller(err_of(function() Timer{stmt = 'x +'} end), 'torch.utils.benchmark.Timer: stmt does not compile')
      at_caller(err_of(function() Timer{stm = 'x'} end), "torch.utils.benchmark.Timer: unknown option 'stm'")
      at_caller(err_of(function() Timer{stmt = 'x = 1'}:blocked_autorange({min_run_time = -1}) end), 'min_run_time')
    end)
  end)

  it('module:half() and module:bfloat16() convert floating parameters and buffers', function()
    local m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert.are.equal(m, m:half())
    assert.are.equal('float16', m[1].weight.dtype)
    assert.are.equal('float16', m[2].running_mean.dtype)
    assert.are.equal('int64', m[2].num_batches_tracked.dtype)
    m:bfloat16()
    assert.are.equal('bfloat16', m[1].weight.dtype)
    m:float()
    assert.are.equal('float32', m[1].bias.dtype)
  end)

  it('torch.memory_allocated / max_memory_allocated count the CPU allocator\'s bytes', function()
    collectgarbage()
    local before = torch.memory_allocated()
    local x = torch.empty(1000)                               -- 4000 bytes, in a 4096-byte block
    assert.are.equal(4096, torch.memory_allocated() - before)
    assert.is_true(torch.max_memory_allocated() >= torch.memory_allocated())
    x = nil
    collectgarbage()
    collectgarbage()
    assert.are.equal(before, torch.memory_allocated())
    torch.reset_peak_memory_stats()
    assert.are.equal(torch.memory_allocated(), torch.max_memory_allocated())
    assert.are.equal(0, torch.memory_allocated('cuda') * (torch.cuda.is_available() and 0 or 1))
    at_caller(err_of(function() torch.memory_allocated('gpu') end), "torch.memory_allocated: expected 'cpu'")
  end)

  it('torch.Size prints and compares as PyTorch\'s', function()
    local x = torch.zeros(2, 3)
    assert.are.equal('torch.Size([2, 3])', tostring(x:size()))
    assert.are.equal('torch.Size([2, 3])', tostring(x.shape))
    assert.are.equal('torch.Size([])', tostring(torch.tensor(1):size()))
    assert.are.equal('torch.Size([0])', tostring(torch.zeros(0):size()))
    assert.is_true(x:size() == torch.Size({2, 3}))
    assert.is_true(x:size() == {2, 3})
    assert.is_false(x:size() == torch.Size({3, 2}))
    assert.is_false(x:size() == torch.Size({2, 3, 1}))
    assert.are.equal(6, torch.Size({2, 3}):numel())
    assert.are.same({2, 3}, x:size():totable())
    assert.is_true(torch.zeros(torch.Size({2, 3})):size() == x:size())
    at_caller(err_of(function() torch.Size({2, -1}) end), 'torch.Size: size 2 must be an integer >= 0, got -1')
    -- moontorch's own messages keep the short form
    local err = err_of(function() nn.View(5):forward(x) end)
    assert.truthy(err:find('input of size 2x3', 1, true), err)
  end)

  it('the REPL shows a size as PyTorch does', function()
    local h = io.popen("printf 'x = torch.zeros(2, 3)\\nx.shape\\n' | ./build/th -i 2>&1")
    local out = h:read('a')
    h:close()
    assert.truthy(out:find('torch.Size([2, 3])', 1, true), out)
  end)

  it('the Torch7 dialect keeps x:size() a LongStorage', function()
    local ok, out = pcall(function()
      local h = io.popen("./build/th --torch7 -e \"print(torch.type(torch.zeros(2, 3):size())); " ..
                         "print(torch.zeros(2, 3):size())\" 2>&1")
      local text = h:read('a')
      h:close()
      return text
    end)
    assert.is_true(ok)
    assert.truthy(out:find('torch.LongStorage\n 2\n 3\n[torch.LongStorage of size 2]', 1, true), out)
  end)
end)
