-- torch.autocast: the dispatcher applies each op's autocast category from
-- the registry inside a region. Expected values come from the definition:
-- an op under autocast equals the same op on its inputs cast by hand.
local torch = require 'torch'
local nn = require 'nn'
local raises = dofile('spec/support/raises.lua')

local function same(a, b, what)
  assert.are.equal(b.dtype, a.dtype, what)
  assert.are.same(b:size():totable(), a:size():totable(), what)
  assert.is_true(torch.equal(a, b), what)
end

local function ramp(n, m, shift)
  local v = {}
  for k = 1, n * m do v[k] = ((k * 7 + (shift or 0)) % 11 - 5) / 7 end
  return torch.tensor(v):view(n, m)
end

describe('torch.autocast on the CPU', function()
  local a, b = ramp(4, 6, 1), ramp(6, 3, 2)

  it('runs products in bfloat16, the lossy ops in float32, mixed inputs in the widest, the rest as given', function()
    local f64_mm = a:double():mm(b:double())          -- outside any region
    torch.autocast('cpu', function()
      same(a:mm(b), a:bfloat16():mm(b:bfloat16()), 'mm')
      same(torch.matmul(a, b), a:bfloat16():matmul(b:bfloat16()), 'matmul')
      local bias = ramp(1, 3, 3):view(3)
      same(bias:addmm(a, b), bias:bfloat16():addmm(a:bfloat16(), b:bfloat16()), 'addmm')
      local h = a:bfloat16()
      same(h:exp(), h:float():exp(), 'exp')
      same(h:softmax(2), h:float():softmax(2), 'softmax')
      same(h:log_softmax(2), h:float():log_softmax(2), 'log_softmax')
      same(h + a, h:float() + a, 'add of bfloat16 and float32')
      assert.are.equal('bfloat16', h:relu().dtype, 'relu keeps bfloat16')
      assert.are.equal('float32', a:relu().dtype, 'relu keeps float32')
      same(a:double():mm(b:double()), f64_mm, 'float64 is never lowered')
      local i = torch.tensor({{1, 2}, {3, 4}})
      same(i:mm(i), torch.tensor({{7, 10}, {15, 22}}), 'integers are not cast')
      local c = a:clone()
      c:add_(1)                                        -- in place: as given
      assert.are.equal('float32', c.dtype)
    end)
  end)

  it('convolves in the lower dtype, and float16 when asked', function()
    local x, w = ramp(2, 3 * 5 * 5, 4):view(2, 3, 5, 5), ramp(4, 3 * 3 * 3, 5):view(4, 3, 3, 3)
    local y = torch.autocast('cpu', {dtype = 'bfloat16'}, function() return nn.F.conv2d(x, w) end)
    same(y, nn.F.conv2d(x:bfloat16(), w:bfloat16()), 'conv2d')
    y = torch.autocast('cpu', {dtype = 'float16'}, function() return a:mm(b) end)
    same(y, a:half():mm(b:half()), 'mm in float16')
  end)

  it('gives gradients in the parameters dtype, as the explicit casts do', function()
    local w1 = ramp(6, 3, 6):requires_grad_()
    local loss = torch.autocast('cpu', function() return a:mm(w1):softmax(2):log():sum() end)
    assert.are.equal('float32', loss.dtype)
    loss:backward()
    local w2 = ramp(6, 3, 6):requires_grad_()
    a:bfloat16():mm(w2:bfloat16()):float():softmax(2):log():sum():backward()
    assert.are.equal('float32', w1.grad.dtype)
    same(w1.grad, w2.grad, 'the gradient through the casts')
  end)

  it("casts a transposed weight as it lies (a linear layer's w^T), values and gradients as the explicit casts", function()
    local w1 = ramp(5, 6, 8):requires_grad_()         -- read as w1:t(): dense, not contiguous
    local x = ramp(4, 6, 9)
    local bias = ramp(1, 5, 10):view(5)
    local seen
    local loss = torch.autocast('cpu', function()
      local wt = w1:t()
      seen = wt:bfloat16()                             -- an explicit cast inside: as given
      local y = nn.F.linear(x, w1, bias)
      same(y, bias:bfloat16():addmm(x:bfloat16(), wt:contiguous():bfloat16()), 'linear')
      same(x:mm(wt), x:bfloat16():mm(wt:detach():bfloat16()), 'mm by w^T')
      same(ramp(3, 4, 2):t():mm(ramp(3, 5, 1)), ramp(3, 4, 2):t():bfloat16():mm(ramp(3, 5, 1):bfloat16()),
           'a transposed input too')
      return y:float():pow(2):sum()
    end)
    assert.are.equal('bfloat16', seen.dtype)
    loss:backward()
    local w2 = ramp(5, 6, 8):requires_grad_()
    bias:bfloat16():addmm(x:bfloat16(), w2:bfloat16():t()):float():pow(2):sum():backward()
    same(w1.grad, w2.grad, 'the gradient through the transposed cast')
    -- a 3-d permutation, cast as it lies
    local p = ramp(6, 4, 3):view(2, 3, 4):permute(3, 1, 2)
    local q = ramp(4, 6, 4):view(4, 3, 2)
    torch.autocast('cpu', function() same(p:matmul(q), p:bfloat16():matmul(q:bfloat16()), 'permuted matmul') end)
  end)

  it('casts a parameter once per region, and again in the next', function()
    local w = ramp(6, 3, 7):requires_grad_()
    local x = a:clone()
    local ac = torch.autocast{device_type = 'cpu'}
    torch._op_counter(true)
    ac:enter()
    local y = x:mm(w) + x:mm(w)                        -- w's cast made once, x's twice (not a parameter)
    ac:exit()
    local first = torch._op_counts().to
    ac:enter()
    local _ = x:mm(w)
    ac:exit()
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.equal(3, first)
    assert.are.equal(5, counts.to)                     -- a new region casts w again
    assert.are.equal('bfloat16', y.dtype)
    -- a parameter changed in place within a region is cast anew
    torch.autocast('cpu', function()
      local before = x:mm(w)
      torch.no_grad(function() w:add_(1) end)
      same(x:mm(w), x:bfloat16():mm(w:detach():bfloat16()), 'after the in-place change')
      assert.is_false(torch.equal(before, x:mm(w)))
    end)
  end)

  it('nests, turns off inside a region, and restores the state even when the region raises', function()
    assert.is_false(torch.is_autocast_enabled('cpu'))
    assert.are.equal('bfloat16', torch.get_autocast_dtype('cpu'))   -- PyTorch's defaults, before any region
    assert.are.equal('float16', torch.get_autocast_dtype('cuda'))
    torch.autocast('cpu', function()
      assert.is_true(torch.is_autocast_enabled('cpu'))
      assert.are.equal('bfloat16', torch.get_autocast_dtype('cpu'))
      torch.autocast('cpu', {enabled = false}, function()
        assert.is_false(torch.is_autocast_enabled('cpu'))
        assert.are.equal('float32', a:mm(b).dtype)
      end)
      torch.autocast('cpu', {dtype = 'float16'}, function() assert.are.equal('float16', a:mm(b).dtype) end)
      assert.are.equal('bfloat16', a:mm(b).dtype)
    end)
    local ok, err = pcall(torch.autocast, 'cpu', function() error('inside the region') end)
    assert.is_false(ok)
    assert.matches('inside the region', err, 1, true)
    assert.is_false(torch.is_autocast_enabled('cpu'))
    assert.are.equal('float32', a:mm(b).dtype)
  end)

  it('runs backward in the dtypes forward chose, even inside a region', function()
    local w = ramp(6, 3, 8):requires_grad_()
    torch.autocast('cpu', function()
      local y = a:mm(w):sum()
      y:backward()
    end)
    local w2 = ramp(6, 3, 8):requires_grad_()
    a:bfloat16():mm(w2:bfloat16()):sum():backward()
    same(w.grad, w2.grad, 'the gradient')
  end)

  it('trains a small network in a region per step, its parameters staying float32', function()
    torch.manual_seed(1)
    local model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    local opt = require('optim').SGD(model:parameters(), {lr = 0.5})
    local x = torch.randn(64, 2)
    local target = x:select(2, 1):gt(x:select(2, 2)):long() + 1
    local first, last
    for step = 1, 60 do
      opt:zero_grad()
      local loss = torch.autocast('cpu', function() return nn.F.cross_entropy(model(x), target) end)
      loss:backward()
      opt:step()
      first = first or loss:item()
      last = loss:item()
    end
    assert.is_true(last < first / 2, first .. ' -> ' .. last)
    for _, p in ipairs(model:parameters()) do assert.are.equal('float32', p.dtype) end
  end)

  it('runs a convolutional network with batch norm forward and backward', function()
    torch.manual_seed(2)
    local model = nn.Sequential(nn.Conv2d(1, 4, 3, {padding = 1}), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                                nn.Flatten(), nn.Linear(4 * 4 * 4, 10))
    local x, target = torch.randn(8, 1, 8, 8), torch.randint(1, 11, {8})
    local loss = torch.autocast('cpu', function()
      local logits = model(x)
      assert.are.equal('bfloat16', logits.dtype)
      return nn.F.cross_entropy(logits, target)
    end)
    assert.are.equal('float32', loss.dtype)
    loss:backward()
    for _, p in ipairs(model:parameters()) do
      assert.are.equal('float32', p.grad.dtype)
      assert.is_true(p.grad:abs():sum():item() > 0)
    end
  end)

  it('refuses what it cannot do, naming it', function()
    raises("autocast: device_type must be 'cpu' or 'cuda', got 'tpu'", function() torch.autocast('tpu', function() end) end)
    raises("autocast: dtype must be 'bfloat16' or 'float16', got float64",
           function() torch.autocast('cpu', {dtype = 'float64'}) end)
    raises('autocast:exit: the region was not entered', function() torch.autocast('cpu'):exit() end)
    local ac = torch.autocast('cpu')
    ac:enter()
    raises('autocast:enter: this region is already entered', function() ac:enter() end)
    ac:exit()
    raises("autocast:enter: called with '.'; use ac:enter()", function() ac.enter() end)
  end)
end)
