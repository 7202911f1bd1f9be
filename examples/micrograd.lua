-- examples/micrograd.lua: a scalar autograd engine in plain Lua (after Karpathy's
-- micrograd), a tiny MLP of scalars trained with it, and its gradients checked
-- against moontorch's autograd on the same expression and the same network.
-- Run: th examples/micrograd.lua
--
-- A scalar autograd engine in the style of micrograd: Value objects build a DAG as
-- you compute; backward() sorts it topologically and runs each node's local
-- chain rule from the output back to the leaves. moontorch's engine does the
-- same with tensors instead of numbers (and in C).

---------------------------------------------------------------------------
-- 1. The engine: ~100 lines, no torch in it
---------------------------------------------------------------------------
local Value = {}
Value.__index = Value

-- Value.new(data, children, op): a number that remembers which values and which
-- operation made it. grad holds d(output)/d(this value) after backward().
function Value.new(data, children, op)
  return setmetatable({data = data, grad = 0, _backward = function() end,
                       _prev = children or {}, _op = op or ''}, Value)
end

-- numbers mixed into expressions become constant leaves
local function lift(v)
  if getmetatable(v) == Value then return v end
  return Value.new(v)
end

function Value.__add(a, b)
  a, b = lift(a), lift(b)
  local out = Value.new(a.data + b.data, {a, b}, '+')
  out._backward = function()            -- d(a+b)/da = d(a+b)/db = 1
    a.grad = a.grad + out.grad
    b.grad = b.grad + out.grad
  end
  return out
end

function Value.__mul(a, b)
  a, b = lift(a), lift(b)
  local out = Value.new(a.data * b.data, {a, b}, '*')
  out._backward = function()            -- d(ab)/da = b, d(ab)/db = a
    a.grad = a.grad + b.data * out.grad
    b.grad = b.grad + a.data * out.grad
  end
  return out
end

-- a ^ k for a number k (the exponent is a constant, not a Value)
function Value.__pow(a, k)
  assert(type(k) == 'number', 'micrograd: only number exponents are supported')
  local out = Value.new(a.data ^ k, {a}, '^' .. k)
  out._backward = function()            -- d(a^k)/da = k a^(k-1)
    a.grad = a.grad + k * a.data ^ (k - 1) * out.grad
  end
  return out
end

-- the rest are made of the ops above
function Value.__unm(a) return a * -1 end
function Value.__sub(a, b) return lift(a) + (-lift(b)) end
function Value.__div(a, b) return lift(a) * lift(b) ^ -1 end

function Value:tanh()
  local t = 1 - 2 / (math.exp(2 * self.data) + 1)   -- Lua 5.4 has no math.tanh
  local out = Value.new(t, {self}, 'tanh')
  out._backward = function() self.grad = self.grad + (1 - t * t) * out.grad end
  return out
end

function Value:relu()
  local out = Value.new(self.data > 0 and self.data or 0, {self}, 'relu')
  out._backward = function()
    if out.data > 0 then self.grad = self.grad + out.grad end
  end
  return out
end

function Value:exp()
  local e = math.exp(self.data)
  local out = Value.new(e, {self}, 'exp')
  out._backward = function() self.grad = self.grad + e * out.grad end
  return out
end

-- v:backward(): d(v)/d(x) into x.grad for every x that v was made from
function Value:backward()
  local order, seen = {}, {}
  local function visit(v)                -- children before parents
    if seen[v] then return end
    seen[v] = true
    for _, child in ipairs(v._prev) do visit(child) end
    order[#order + 1] = v
  end
  visit(self)
  self.grad = 1
  for i = #order, 1, -1 do order[i]._backward() end
end

function Value:__tostring()
  return string.format('Value(data=%.4f, grad=%.4f)', self.data, self.grad)
end

-- A neuron: tanh(w . x + b), weights uniform in [-1, 1)
local Neuron = {}
Neuron.__index = Neuron
function Neuron.new(nin)
  local w = {}
  for i = 1, nin do w[i] = Value.new(math.random() * 2 - 1) end
  return setmetatable({w = w, b = Value.new(0)}, Neuron)
end
function Neuron:__call(x)
  local act = self.b
  for i, wi in ipairs(self.w) do act = act + wi * x[i] end
  return act:tanh()
end

-- An MLP of tanh neurons, sizes {nin, h1, ..., 1}: outputs in (-1, 1)
local MLP = {}
MLP.__index = MLP
function MLP.new(sizes)
  local layers = {}
  for l = 1, #sizes - 1 do
    local layer = {}
    for j = 1, sizes[l + 1] do layer[j] = Neuron.new(sizes[l]) end
    layers[l] = layer
  end
  return setmetatable({layers = layers, sizes = sizes}, MLP)
end
function MLP:__call(x)
  for _, layer in ipairs(self.layers) do
    local out = {}
    for j, n in ipairs(layer) do out[j] = n(x) end
    x = out
  end
  return x[1]
end
function MLP:parameters()
  local ps = {}
  for _, layer in ipairs(self.layers) do
    for _, n in ipairs(layer) do
      for _, w in ipairs(n.w) do ps[#ps + 1] = w end
      ps[#ps + 1] = n.b
    end
  end
  return ps
end

print('== 1. the engine: out = u * v + tanh(u) ==')
local u, v = Value.new(2.0), Value.new(-3.0)
local out = u * v + u:tanh()
out:backward()
print('out = ' .. tostring(out) .. '   (made by ' .. out._op .. ' from ' .. out._prev[1]._op
      .. ' and ' .. out._prev[2]._op .. ')')
print('u   = ' .. tostring(u) .. '   (v + 1 - tanh(u)^2)')
print('v   = ' .. tostring(v) .. '   (u)')

---------------------------------------------------------------------------
-- 2. micrograd's README expression, and the same with moontorch tensors
---------------------------------------------------------------------------
print('\n== 2. one expression, two engines ==')
-- the same code runs on Values and on tensors: both have + - * / ^ and relu
local function expression(a, b)
  local c = a + b
  local d = a * b + b ^ 3
  c = c + c + 1
  c = c + 1 + c + (-a)
  d = d + d * 2 + (b + a):relu()
  d = d + 3 * d + (b - a):relu()
  local e = c - d
  local f = e ^ 2
  local g = f / 2.0
  g = g + 10.0 / f
  return g
end

local a, b = Value.new(-4.0), Value.new(2.0)
local g = expression(a, b)
g:backward()
print(string.format('micrograd: g = %.4f   dg/da = %.4f   dg/db = %.4f', g.data, a.grad, b.grad))

local ta = torch.tensor(-4.0, {dtype = 'float64', requires_grad = true})
local tb = torch.tensor(2.0, {dtype = 'float64', requires_grad = true})
local tg = expression(ta, tb)
tg:backward()
print(string.format('moontorch: g = %.4f   dg/da = %.4f   dg/db = %.4f', tg:item(), ta.grad:item(), tb.grad:item()))
local expr_diff = math.max(math.abs(g.data - tg:item()), math.abs(a.grad - ta.grad:item()),
                           math.abs(b.grad - tb.grad:item()))
print(string.format('expression: max abs difference %.3g', expr_diff))

---------------------------------------------------------------------------
-- 3. A tiny MLP of Values trained on four samples (micrograd's demo data)
---------------------------------------------------------------------------
print('\n== 3. training a 3-4-4-1 MLP of scalars ==')
math.randomseed(1337)
local xs = {{2.0, 3.0, -1.0}, {3.0, -1.0, 0.5}, {0.5, 1.0, 1.0}, {1.0, 1.0, -1.0}}
local ys = {1.0, -1.0, -1.0, 1.0}
local net = MLP.new({3, 4, 4, 1})
local params = net:parameters()
print(string.format('%d parameters, each a Value', #params))

-- the loss and its gradients, from micrograd
local function micro_loss()
  local loss = Value.new(0)
  for i, x in ipairs(xs) do loss = loss + (net(x) - ys[i]) ^ 2 end
  for _, p in ipairs(params) do p.grad = 0 end
  loss:backward()
  return loss
end

-- the same network in moontorch: weight matrices filled from the Values
local function torch_grads()
  local X = torch.tensor(xs, {dtype = 'float64'})
  local Y = torch.tensor(ys, {dtype = 'float64'}):view(#ys, 1)
  local h, leaves = X, {}
  for l, layer in ipairs(net.layers) do
    local nin = net.sizes[l]
    local W = torch.zeros(nin, #layer, {dtype = 'float64'})
    local bias = torch.zeros(#layer, {dtype = 'float64'})
    for j, n in ipairs(layer) do
      for i = 1, nin do W[i][j] = n.w[i].data end
      bias[j] = n.b.data
    end
    W:requires_grad_(); bias:requires_grad_()
    leaves[l] = {W, bias}
    h = (h:mm(W) + bias):tanh()
  end
  local loss = ((h - Y) ^ 2):sum()
  loss:backward()
  return loss, leaves
end

-- largest |micrograd grad - moontorch grad| over every parameter
local function compare()
  local loss = micro_loss()
  local tloss, leaves = torch_grads()
  local diff = math.abs(loss.data - tloss:item())
  for l, layer in ipairs(net.layers) do
    local W, bias = leaves[l][1], leaves[l][2]
    for j, n in ipairs(layer) do
      for i, w in ipairs(n.w) do diff = math.max(diff, math.abs(w.grad - W.grad[i][j])) end
      diff = math.max(diff, math.abs(n.b.grad - bias.grad[j]))
    end
  end
  return diff
end

local before = compare()
print(string.format('before training: gradients vs moontorch, max abs difference %.3g', before))

local lr = 0.05
for step = 1, 50 do
  local loss = micro_loss()
  for _, p in ipairs(params) do p.data = p.data - lr * p.grad end
  if step == 1 or step % 10 == 0 then print(string.format('step %2d  loss %.6f', step, loss.data)) end
end
local preds = {}
for i, x in ipairs(xs) do preds[i] = string.format('%.3f', net(x).data) end
print('predictions: ' .. table.concat(preds, '  ') .. '   (targets 1  -1  -1  1)')

local after = compare()
print(string.format('after training: gradients vs moontorch, max abs difference %.3g', after))
local worst = math.max(expr_diff, before, after)
print(string.format('micrograd agrees with moontorch: %s (max abs difference %.3g < 1e-9)',
                    tostring(worst < 1e-9), worst))
if worst >= 1e-9 then os.exit(1) end
