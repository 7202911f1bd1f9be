-- What modules keep: model(x), PyTorch's call, keeps no reference to its
-- result; Torch7's model:forward(x) keeps it in model.output (and its
-- children in theirs) for model:backward. So checkpointing nn blocks frees
-- their activations.
local torch = require 'torch'
local nn = require 'nn'
local support = dofile('spec/support/gradients.lua')
local close = support.close

local function held_after(fn)
  collectgarbage(); collectgarbage()
  local before = torch.memory_stats().allocated
  local keep = fn()
  collectgarbage(); collectgarbage()
  return torch.memory_stats().allocated - before, keep
end

describe('modules called PyTorch\'s way', function()
  it('keep no reference to their result: model(x) leaves output nil and the result collectable', function()
    local m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    local x = torch.randn(3, 4)
    local results = setmetatable({}, {__mode = 'v'})
    results[1] = m(x)
    results[2] = nn.MSELoss()(results[1], torch.zeros(3, 2))
    assert.is_nil(m.output)
    for i = 1, 3 do assert.is_nil(m[i].output) end
    collectgarbage(); collectgarbage()
    assert.is_nil(results[1])
    assert.is_nil(results[2])
    -- with hooks too
    local seen = 0
    m:register_forward_hook(function() seen = seen + 1 end)
    results[3] = m(x)
    assert.are.equal(1, seen)
    assert.is_nil(m.output)
    collectgarbage(); collectgarbage()
    assert.is_nil(results[3])
  end)

  it('hold no activations once the result is dropped', function()
    local m = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
    local x = torch.randn(32, 64)
    local held = held_after(function() m(x):sum():backward() m:zero_grad() end)
    assert.are.equal(0, held)
  end)

  it('Torch7\'s forward still keeps output, in the container and its children, for backward', function()
    local m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    local x = torch.randn(3, 4)
    local out = m:forward(x)
    assert.are.equal(out, m.output)
    assert.are.same({3, 8}, m[2].output:size():totable())
    assert.are.equal(out, m[3].output)
    local gi = m:backward(x, torch.ones(3, 2))
    assert.are.equal(gi, m.gradInput)
    assert.are.same({3, 4}, gi:size():totable())
    local crit = nn.MSECriterion()
    local loss = crit:forward(out, torch.zeros(3, 2))
    assert.are.equal(loss, crit.output)
    assert.are.same({3, 2}, crit:backward(out, torch.zeros(3, 2)):size():totable())
    -- an error inside forward ends the Torch7 call: the next model(x) keeps nothing
    local bad = nn.Sequential(nn.Linear(4, 2))
    assert.has_error(function() bad:forward(torch.randn(3, 5)) end)
    local fresh = nn.Linear(4, 2)
    fresh(x)
    assert.is_nil(fresh.output)
    -- even when a coroutine dies inside forward (its scope never closes)
    local co = coroutine.create(function() bad:forward(torch.randn(3, 5)) end)
    assert.is_false((coroutine.resume(co)))
    fresh(x)
    assert.is_nil(fresh.output)
    -- and a coroutine's own forward keeps its outputs
    local inner = nn.Sequential(nn.Linear(4, 2))
    assert.is_true((coroutine.resume(coroutine.create(function() inner:forward(x) end))))
    assert.is_not_nil(inner[1].output)
  end)
end)

describe('torch.utils.checkpoint over nn blocks', function()
  -- 24 blocks of (Linear 512->2048, GELU, Linear 2048->512) at batch 256
  local function blocks(count, width, hidden)
    local list = {}
    for i = 1, count do list[i] = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width)) end
    return list
  end
  local function run(list, x, checkpointed)
    local h = x
    for _, b in ipairs(list) do
      if checkpointed then h = torch.utils.checkpoint(b, h) else h = b(h) end
    end
    return h
  end

  it('holds at most a quarter of the memory after forward', function()
    torch.manual_seed(0)
    local list = blocks(24, 512, 2048)
    local x = torch.randn(256, 512):requires_grad_()
    -- checkpointed first, on fresh modules: nothing an earlier call kept is counted
    local ckpt = held_after(function() return run(list, x, true) end)
    local plain = held_after(function() return run(list, x, false) end)
    -- plain: each block's input, its hidden layer and the GELU's result (4.5 MiB)
    assert.is_true(plain > 24 * 4 * 2 ^ 20, 'plain ' .. plain)
    assert.is_true(ckpt <= plain / 4, string.format('checkpointed %d bytes, plain %d', ckpt, plain))
  end)

  it('gives the plain gradients, a module passed as the function', function()
    torch.manual_seed(1)
    local list = blocks(3, 6, 10)
    for _, b in ipairs(list) do b:double() end
    local x = torch.randn(4, 6, {dtype = 'float64'}):requires_grad_()
    run(list, x, true):pow(2):sum():backward()
    local gx, gw = x.grad:clone(), list[1][1].weight.grad:clone()
    x.grad = nil
    for _, b in ipairs(list) do b:zero_grad() end
    run(list, x, false):pow(2):sum():backward()
    close(gx, x.grad, 1e-12)
    close(gw, list[1][1].weight.grad, 1e-12)
  end)
end)
