-- grad_scaler_spec.lua: torch.amp.GradScaler against its definition (PyTorch's):
-- scale multiplies, unscale_ divides every gradient in place and notes infs and NaNs,
-- step skips the optimizer then, update backs the scale off or grows it after
-- growth_interval clean steps; the misuse errors; state_dict; disabled; and a training
-- loop that gives the same parameters with and without the scaler when nothing overflows.
local torch = require 'torch'
local optim = require 'optim'
local nn = require 'nn'

local function f32(values) return torch.tensor(values, {dtype = 'float32'}) end
local function param(values, dtype)
  return torch.tensor(values, {dtype = dtype or 'float32'}):requires_grad_()
end

describe('torch.amp.GradScaler', function()
  it('scales a loss, and tables of losses, by the scale', function()
    local s = torch.amp.GradScaler({init_scale = 8})
    assert.are.equal(8, s:get_scale())
    assert.is_true(torch.equal(s:scale(f32({1.5, -2})), f32({12, -16})))
    local t = s:scale({f32({1}), {f32({2})}})
    assert.are.equal(8, t[1][1])
    assert.are.equal(16, t[2][1][1])
  end)

  it('unscale_ divides every gradient by the scale in one pass, any float dtype and layout', function()
    local s = torch.amp.GradScaler({init_scale = 4})
    local a, b, c = param({1, 2, 3}), param({4, 8}, 'float64'), param({1, 2, 3, 4}, 'bfloat16')
    local d = param({{1, 2}, {3, 4}})
    a.grad = f32({4, -8, 2})
    b.grad = torch.tensor({12, 1}, {dtype = 'float64'})
    c.grad = torch.tensor({4, 8, 16, -2}, {dtype = 'bfloat16'})
    d.grad = f32({{4, 12}, {8, 16}}):t()                -- not contiguous
    local opt = optim.SGD({a, b, c, d}, {lr = 0})
    s:unscale_(opt)
    assert.is_true(torch.equal(a.grad, f32({1, -2, 0.5})))
    assert.is_true(torch.equal(b.grad, torch.tensor({3, 0.25}, {dtype = 'float64'})))
    assert.is_true(torch.equal(c.grad, torch.tensor({1, 2, 4, -0.5}, {dtype = 'bfloat16'})))
    assert.is_true(torch.equal(d.grad, f32({{1, 2}, {3, 4}})))
    assert.is_false(s.per_optimizer[opt].found_inf)
  end)

  for _, bad in ipairs({{'inf', math.huge}, {'-inf', -math.huge}, {'NaN', 0 / 0}}) do
    it('finds ' .. bad[1] .. ' in a gradient, scales every element anyway, skips the step and backs off', function()
      local s = torch.amp.GradScaler({init_scale = 1024})
      local w = param({1, 1, 1})
      local opt = optim.SGD({w}, {lr = 1})
      w.grad = f32({2048, bad[2], 1024})
      assert.is_nil(s:step(opt))
      assert.is_true(torch.equal(w:detach(), torch.ones(3)), 'the step was skipped')
      assert.are.equal(2, w.grad[1])                                -- unscaled even so
      assert.are.equal(1, w.grad[3])
      s:update()
      assert.are.equal(512, s:get_scale())
    end)
  end

  it('steps with the unscaled gradients, and grows the scale after growth_interval clean steps', function()
    local s = torch.amp.GradScaler({init_scale = 16, growth_interval = 3, growth_factor = 4, backoff_factor = 0.25})
    local w = param({0, 0})
    local opt = optim.SGD({w}, {lr = 1})
    local scales = {}
    for step = 1, 8 do
      opt:zero_grad()
      local g = step == 5 and f32({math.huge, 1}) or f32({1, 2}) * s:get_scale()
      w.grad = g
      s:step(opt)
      s:update()
      scales[step] = s:get_scale()
    end
    -- clean, clean, clean (x4), clean, inf (x0.25), clean, clean, clean (x4)
    assert.are.same({16, 16, 64, 64, 16, 16, 16, 64}, scales)
    -- seven steps taken, each of -(1, 2)
    assert.is_true(torch.equal(w:detach(), f32({-7, -14})))
  end)

  it('update(new_scale) sets the scale', function()
    local s = torch.amp.GradScaler()
    s:update(128)
    assert.are.equal(128, s:get_scale())
    s:update(f32(32))
    assert.are.equal(32, s:get_scale())
  end)

  it('refuses misuse, naming it', function()
    local s = torch.amp.GradScaler()
    local w = param({1})
    local opt = optim.SGD({w}, {lr = 1})
    w.grad = f32({1})
    s:unscale_(opt)
    local ok, err = pcall(s.unscale_, s, opt)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('unscale_() has already been called on this optimizer since the last update()', 1, true))
    s:step(opt)
    ok, err = pcall(s.step, s, opt)
    assert.truthy(tostring(err):find('step() has already been called since the last update()', 1, true))
    s:update()
    ok, err = pcall(s.update, s)
    assert.truthy(tostring(err):find('no inf checks were recorded prior to update()', 1, true))
    ok, err = pcall(torch.amp.GradScaler, {init_scale = 0})
    assert.truthy(tostring(err):find('init_scale must be > 0, got 0', 1, true))
    ok, err = pcall(torch.amp.GradScaler, {growth = 2})
    assert.truthy(tostring(err):find('unknown option growth', 1, true))
    ok, err = pcall(torch.amp.GradScaler, {backoff_factor = 2})
    assert.truthy(tostring(err):find('backoff_factor must be between 0 and 1', 1, true))
    ok, err = pcall(torch.amp.GradScaler, 'tpu')
    assert.truthy(tostring(err):find("device_type must be 'cpu' or 'cuda', got 'tpu'", 1, true))
  end)

  it('keeps its state in state_dict, with PyTorch\'s keys', function()
    local s = torch.amp.GradScaler({init_scale = 64, growth_interval = 5})
    local w = param({1})
    local opt = optim.SGD({w}, {lr = 1})
    w.grad = f32({1})
    s:step(opt)
    s:update()
    local sd = s:state_dict()
    assert.are.same({scale = 64, growth_factor = 2, backoff_factor = 0.5, growth_interval = 5, _growth_tracker = 1}, sd)
    local t = torch.amp.GradScaler()
    t:load_state_dict(sd)
    assert.are.equal(64, t:get_scale())
    assert.are.same(sd, t:state_dict())
  end)

  it('disabled, passes everything through', function()
    local s = torch.amp.GradScaler({enabled = false})
    local loss = f32({3})
    assert.are.equal(loss, s:scale(loss))
    local w = param({1})
    local opt = optim.SGD({w}, {lr = 1})
    w.grad = f32({1 / 0})
    s:step(opt)                                                   -- not skipped: nothing checks
    assert.is_true(w[1] ~= w[1] or w[1] == -math.huge)
    s:update()
    assert.are.equal(1, s:get_scale())
    assert.are.same({}, s:state_dict())
    assert.is_false(s:is_enabled())
  end)

  it('the mixed-precision training loop reaches the same parameters as without the scaler when nothing '
     .. 'overflows (the scale is a power of two), and skips steps while it does', function()
    local function run(scaler_opts)
      torch.manual_seed(5)
      local model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
      local opt = optim.SGD(model:parameters(), {lr = 0.1})
      local scaler = scaler_opts and torch.amp.GradScaler(scaler_opts)
      local scales = {}
      for step = 1, 4 do
        torch.manual_seed(100 + step)
        local x, y = torch.randn(5, 6), torch.randint(1, 4, {5}, {dtype = 'int64'})
        opt:zero_grad()
        local loss = torch.autocast('cpu', function() return nn.F.cross_entropy(model(x), y) end)
        if scaler then
          scaler:scale(loss):backward()
          scaler:step(opt)
          scaler:update()
          scales[step] = scaler:get_scale()
        else
          loss:backward()
          opt:step()
        end
      end
      return model, scales
    end
    local plain = run(nil)
    local scaled = run({init_scale = 2 ^ 16})
    local pp, sp = plain:parameters(), scaled:parameters()
    for i = 1, #pp do assert.is_true(torch.equal(pp[i]:detach(), sp[i]:detach()), 'parameter ' .. i) end
    -- a scale past float32's range makes the scaled loss inf: the first steps are skipped,
    -- each halving the scale, until it fits
    local _, scales = run({init_scale = 2 ^ 127 * 4})
    assert.are.same({2 ^ 127 * 2, 2 ^ 127, 2 ^ 127, 2 ^ 127}, {scales[1], scales[2], scales[3], scales[4]})
  end)
end)
