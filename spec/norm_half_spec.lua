-- norm_half_spec.lua: batch, layer and group norm on bfloat16 and float16 inputs with
-- float32 parameters (autocast's mixed models) read and write the input's dtype and compute
-- in float (src/tensor/mt_norm.c): by definition each result is the float32 computation on
-- the widened input, rounded once to the input's dtype; the parameters' gradients and the
-- running statistics stay float32 and equal float32's.
local torch = require 'torch'
local F = require 'nn.functional'

local function same(a, b, what)
  assert.are.equal(b.dtype, a.dtype, what .. ': dtype')
  assert.is_true(torch.equal(a, b), what .. ': max difference ' .. (a:double() - b:double()):abs():max():item())
end

describe('normalisation of half-precision inputs with float32 parameters', function()
  for _, dt in ipairs{'bfloat16', 'float16'} do
    it('batch norm in training: ' .. dt .. ' values, float32 gradients and running statistics as float32 gives', function()
      torch.manual_seed(5)
      local x = (torch.randn(8, 6, 5, 7) * 3 + 1):to(dt)
      local g = torch.randn(8, 6, 5, 7):to(dt)
      local w0, b0 = torch.randn(6), torch.randn(6)
      local runs = {}
      for _, wide in ipairs{false, true} do
        local xi = (wide and x:float() or x:clone()):requires_grad_()
        local w, b = w0:clone():requires_grad_(), b0:clone():requires_grad_()
        local rm, rv = torch.zeros(6), torch.ones(6)
        local y = F.batch_norm(xi, rm, rv, w, b, true, 0.1, 1e-5)
        y:backward(wide and g:float() or g)
        runs[wide] = {y = y, gx = xi.grad, gw = w.grad, gb = b.grad, rm = rm, rv = rv}
      end
      local h, f = runs[false], runs[true]
      same(h.y, f.y:to(dt), 'output')
      same(h.gx, f.gx:to(dt), 'input gradient')
      same(h.gw, f.gw, 'weight gradient')
      same(h.gb, f.gb, 'bias gradient')
      same(h.rm, f.rm, 'running mean')
      same(h.rv, f.rv, 'running variance')
    end)

    it('batch norm in evaluation, layer norm and group norm: ' .. dt .. ' values as float32 gives', function()
      torch.manual_seed(6)
      local x = (torch.randn(4, 6, 10) * 2 - 0.5):to(dt)
      local w6, b6, w10, b10 = torch.randn(6), torch.randn(6), torch.randn(10), torch.randn(10)
      local rm, rv = torch.randn(6), torch.rand(6) + 0.5
      same(F.batch_norm(x, rm, rv, w6, b6, false), F.batch_norm(x:float(), rm, rv, w6, b6, false):to(dt), 'batch norm')
      same(F.layer_norm(x, 10, w10, b10), F.layer_norm(x:float(), 10, w10, b10):to(dt), 'layer norm')
      same(F.layer_norm(x, {6, 10}), F.layer_norm(x:float(), {6, 10}):to(dt), 'layer norm without parameters')
      same(F.group_norm(x, 3, w6, b6), F.group_norm(x:float(), 3, w6, b6):to(dt), 'group norm')
      -- gradients of layer and group norm, through their backward kernels
      for _, f in ipairs{function(t) return F.layer_norm(t, 10, w10, b10) end,
                         function(t) return F.group_norm(t, 3, w6, b6) end} do
        local a, c = x:clone():requires_grad_(), x:float():requires_grad_()
        local g = torch.randn(4, 6, 10):to(dt)
        f(a):backward(g)
        f(c):backward(g:float())
        same(a.grad, c.grad:to(dt), 'input gradient')
      end
    end)

    it('the modules take ' .. dt .. ' inputs with their float32 parameters', function()
      local nn = require 'nn'
      torch.manual_seed(8)
      local bn = nn.BatchNorm2d(4)
      local x = torch.randn(3, 4, 6, 6):to(dt)
      local y = bn(x)
      assert.are.equal(dt, y.dtype)
      assert.are.equal('float32', bn.running_mean.dtype)
      -- half-precision parameters go through as float32 too
      local ln = nn.LayerNorm(6):to(dt)
      local z = ln(x)
      assert.are.equal(dt, z.dtype)
      same(z, F.layer_norm(x:float(), 6, ln.weight:float(), ln.bias:float()):to(dt), 'half parameters')
    end)
  end
end)
