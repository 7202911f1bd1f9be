-- nn.hessian: Torch7's estimates of the diagonal of the Hessian (LeCun's
-- Gauss-Newton approximation, used to set one learning rate per parameter).
-- Off until nn.hessian.enable(), which gives the modules
--
--   module:updateDiagHessianInput(input, diagHessianOutput) -> module.diagHessianInput
--   module:accDiagHessianParameters(input, diagHessianOutput)  (adds into
--       module.diagHessianWeight and module.diagHessianBias)
--   module:initDiagHessianParameters()  (makes those, zeros, and diagHessianInput)
--
-- and criterion:updateDiagHessianInput(input, target) for the criteria that
-- have one. The rules, with h the diagonal Hessian of the loss with respect to
-- the module's output:
--   * a module linear in its input and parameters (Linear, SpatialConvolution
--     (nn.Conv2d), SpatialFullConvolution (nn.ConvTranspose2d), and
--     SpatialConvolutionMap / SpatialFullConvolutionMap / SpatialConvolutionLocal /
--     SpatialConvolutionMM where present): diagHessianInput is the backward of h through the module
--     with every weight squared; diagHessianWeight gains the weight gradient for
--     gradOutput h and input squared; diagHessianBias the bias gradient for h.
--   * an element-wise module (Tanh, TanhShrink, Square, Sqrt): f'(x)^2 * h.
--   * Reshape and View: h in the input's shape.
--   * Sequential: the rules of its modules, last to first, each from the output
--     its predecessor kept in the last forward.
--   * MSECriterion (and WeightedMSECriterion): 2 everywhere, divided by the
--     element count when sizeAverage.
-- module:parameters() and module:getParameters() give the diagonal Hessians as a
-- third result (getParameters: one flat tensor, the modules' fields views into it).
local torch = require 'torch'
local nn = require 'nn'

local hessian = {}

local HESSIAN_OF = {weight = 'diagHessianWeight', bias = 'diagHessianBias'}

-- the float tensor v, checked, with who naming the module
local function tensor_arg(who, what, v)
  if not torch.is_tensor(v) or not v:is_floating_point() then
    error(string.format('%s: expected a floating-point tensor %s, got %s', who, what,
                        torch.is_tensor(v) and v.dtype .. ' tensor' or torch.type(v)), 4)
  end
  return v
end

-- the parameter tensors (weight, bias) module has, by name
local function params_of(module, names)
  local out = {}
  for _, name in ipairs(names) do
    local p = module[name]
    if torch.is_tensor(p) then out[#out + 1] = {name, p} end
  end
  return out
end

-- f() with the named parameters of module replaced by their squares (no
-- gradient through them), put back afterwards, even when f fails
local function with_squared(module, names, f)
  local saved = params_of(module, names)
  for _, np in ipairs(saved) do
    local sq = torch.no_grad(function() return np[2]:detach() * np[2]:detach() end)
    module[np[1]] = nn.is_parameter(np[2]) and nn.Parameter(sq, false) or sq
  end
  local res = table.pack(pcall(f))
  for _, np in ipairs(saved) do module[np[1]] = np[2] end
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- the backward of the cotangent h through module's forward at x, by autograd
-- (the module's own computation, weights as they are)
local function vjp_input(module, x, h)
  return torch.autograd.enable_grad(function()
    local xl = x:detach():requires_grad_(true)
    local y = module:updateOutput(xl)
    if not torch.is_tensor(y) or not y.requires_grad then return torch.zeros_like(x) end
    return torch.autograd.grad({y}, {xl}, {grad_outputs = {h:reshape(y:size())}, allow_unused = true})[1]
           or torch.zeros_like(x)
  end)
end

-- hessian.linearInput(module, input, diagHessianOutput [, names]): diagHessianInput
-- of a module linear in its input: the backward of diagHessianOutput with the named
-- parameters (default weight) squared; kept in module.diagHessianInput.
function hessian.linearInput(module, input, h, names)
  local who = torch.typename(module) .. ':updateDiagHessianInput'
  tensor_arg(who, 'input', input)
  tensor_arg(who, 'diagHessianOutput', h)
  local hi = with_squared(module, names or {'weight'}, function() return vjp_input(module, input, h) end)
  module.diagHessianInput = hi:detach()
  return module.diagHessianInput
end

-- hessian.linearParameters(module, input, diagHessianOutput): adds to
-- module.diagHessianWeight / diagHessianBias the gradients of weight and bias for
-- gradOutput diagHessianOutput and input squared (made first when absent).
function hessian.linearParameters(module, input, h)
  local who = torch.typename(module) .. ':accDiagHessianParameters'
  tensor_arg(who, 'input', input)
  tensor_arg(who, 'diagHessianOutput', h)
  local ps = params_of(module, {'weight', 'bias'})
  if #ps == 0 then return end
  local grads = torch.autograd.enable_grad(function()
    local leaves = {}
    for i, np in ipairs(ps) do leaves[i] = np[2]:detach():requires_grad_(true) end
    local saved = {}
    for i, np in ipairs(ps) do
      saved[i] = np[2]
      module[np[1]] = nn.is_parameter(np[2]) and nn.Parameter(leaves[i]) or leaves[i]
    end
    local ok, res = pcall(function()
      local y = module:updateOutput((input * input):detach())
      return torch.autograd.grad({y}, leaves, {grad_outputs = {h:reshape(y:size())}, allow_unused = true})
    end)
    for i, np in ipairs(ps) do module[np[1]] = saved[i] end
    if not ok then error(res, 0) end
    return res
  end)
  torch.no_grad(function()
    for i, np in ipairs(ps) do
      local field = HESSIAN_OF[np[1]]
      local acc = module[field]
      if not torch.is_tensor(acc) or acc:numel() ~= np[2]:numel() then
        acc = torch.zeros_like(np[2]:detach())
        module[field] = acc
      end
      if grads[i] ~= nil then acc:add_(grads[i]:reshape(acc:size())) end
    end
  end)
end

-- hessian.pointwiseInput(module, input, diagHessianOutput): diagHessianInput of an
-- element-wise module: its derivative squared times diagHessianOutput.
function hessian.pointwiseInput(module, input, h)
  local who = torch.typename(module) .. ':updateDiagHessianInput'
  tensor_arg(who, 'input', input)
  tensor_arg(who, 'diagHessianOutput', h)
  local ones = torch.ones_like(h:detach())
  local d
  if getmetatable(module).updateGradInput ~= nn.Module.updateGradInput then   -- Torch7's own backward
    module:updateOutput(input:detach())
    d = module:updateGradInput(input:detach(), ones):detach():clone()
  else
    d = vjp_input(module, input, ones):detach()
  end
  module.diagHessianInput = (d * d * h:detach():reshape(d:size()))
  return module.diagHessianInput
end

-- hessian.initParameters(module): diagHessianWeight / diagHessianBias zeros of the
-- parameters' shapes (kept when present), diagHessianInput an empty tensor.
function hessian.initParameters(module)
  for _, np in ipairs(params_of(module, {'weight', 'bias'})) do
    local field = HESSIAN_OF[np[1]]
    if not torch.is_tensor(module[field]) or module[field]:numel() ~= np[2]:numel() then
      module[field] = torch.zeros_like(np[2]:detach())
    end
  end
  if not torch.is_tensor(module.diagHessianInput) then
    local w = module.weight
    module.diagHessianInput = torch.empty(0, {dtype = torch.is_tensor(w) and w.dtype or nil})
  end
end

-- the class of nn's name `name` when it is one (nn.SpatialConvolution is a
-- constructor of nn.Conv2d: the class of what it builds)
local function class_of(name, build)
  local c = rawget(nn, name)
  if type(c) == 'table' then return c end
  if type(c) == 'function' and build then
    local ok, m = pcall(build)
    if ok and type(m) == 'table' then return getmetatable(m) end
  end
  return nil
end

local enabled = false

-- nn.hessian.enable(): gives the modules and criteria their diagonal Hessian
-- methods (see the top of lib/nn/hessian.lua); calling it again does nothing.
function hessian.enable()
  if enabled then return end
  enabled = true
  local Module = nn.Module

  -- module:updateDiagHessianInput(input, diagHessianOutput): the diagonal Hessian
  -- with respect to the input (an error for a module without a rule).
  function Module:updateDiagHessianInput()
    error(torch.typename(self) .. ':updateDiagHessianInput() is undefined (no diagonal Hessian rule)', 2)
  end
  -- module:accDiagHessianParameters(input, diagHessianOutput): nothing for a module
  -- without parameters.
  function Module:accDiagHessianParameters() end
  -- module:initDiagHessianParameters(): nothing for a module without parameters.
  function Module:initDiagHessianParameters() end

  local Criterion = nn.Criterion
  -- criterion:updateDiagHessianInput(input, target): an error for a criterion
  -- without a rule.
  function Criterion:updateDiagHessianInput()
    error(torch.typename(self) .. ':updateDiagHessianInput() is undefined (no diagonal Hessian rule)', 2)
  end
  local function mse(self, input)
    tensor_arg(torch.typename(self) .. ':updateDiagHessianInput', 'input', input)
    local v = 2
    if self.sizeAverage then v = v / input:numel() end
    self.diagHessianInput = torch.full(input:size(), v, {dtype = input.dtype})
    return self.diagHessianInput
  end
  for _, name in ipairs({'MSECriterion', 'WeightedMSECriterion'}) do
    local c = class_of(name)
    if c then c.updateDiagHessianInput = mse end
  end

  -- modules linear in input and weights
  local linear = {
    {'Linear', function() return nn.Linear(1, 1) end},
    {'SpatialConvolution', function() return nn.SpatialConvolution(1, 1, 1, 1) end},
    {'SpatialFullConvolution', function() return nn.SpatialFullConvolution(1, 1, 1, 1) end},
    {'SpatialConvolutionLocal'}, {'SpatialFullConvolutionMap'}, {'SpatialConvolutionMM'},
  }
  local function linear_input(self, input, h) return hessian.linearInput(self, input, h, {'weight'}) end
  local function linear_params(self, input, h) hessian.linearParameters(self, input, h) end
  for _, entry in ipairs(linear) do
    local c = class_of(entry[1], entry[2])
    if c then
      c.updateDiagHessianInput = linear_input
      c.accDiagHessianParameters = linear_params
      c.initDiagHessianParameters = hessian.initParameters
    end
  end
  -- SpatialConvolutionMap: its bias squared too (Torch7's rule)
  local map = class_of('SpatialConvolutionMap')
  if map then
    function map:updateDiagHessianInput(input, h) return hessian.linearInput(self, input, h, {'weight', 'bias'}) end
    map.accDiagHessianParameters = linear_params
    map.initDiagHessianParameters = hessian.initParameters
  end

  for _, name in ipairs({'Tanh', 'TanhShrink', 'Square', 'Sqrt'}) do
    local c = class_of(name)
    if c then c.updateDiagHessianInput = hessian.pointwiseInput end
  end

  local function reshaped(self, input, h)
    self.diagHessianInput = h:detach():reshape(input:size())
    return self.diagHessianInput
  end
  for _, name in ipairs({'Reshape', 'View'}) do
    local c = class_of(name)
    if c then c.updateDiagHessianInput = reshaped end
  end

  -- each parameter tensor of self and its descendants -> {its module, its Hessian's field},
  -- where that module holds a Hessian of the parameter's size
  local function hessian_fields(self)
    local by = {}
    for _, m in ipairs(self:modules()) do
      for name, field in pairs(HESSIAN_OF) do
        local p, h = m[name], m[field]
        if torch.is_tensor(p) and torch.is_tensor(h) and h:numel() == p:numel() then by[p] = {m, field} end
      end
    end
    return by
  end
  local parameters, get_parameters = Module.parameters, Module.getParameters
  -- module:parameters(): the parameters and their gradients as before, and third the
  -- diagonal Hessian of each (nil where its module has none; Torch7's, once enabled).
  function Module:parameters()
    local ps, gs = parameters(self)
    local by, hs = hessian_fields(self), {}
    for i, p in ipairs(ps) do
      local e = by[p]
      hs[i] = e and e[1][e[2]]
    end
    return ps, gs, hs
  end
  -- module:getParameters(): the flat parameters and gradients as before, and third
  -- (after initDiagHessianParameters) one flat tensor of the diagonal Hessians, in the
  -- same order, each module's diagHessianWeight / diagHessianBias a view into it.
  function Module:getParameters()
    local flat, gflat = get_parameters(self)
    local ps = parameters(self)
    local by = hessian_fields(self)
    local any = false
    for _, p in ipairs(ps) do any = any or by[p] ~= nil end
    if not any then return flat, gflat end
    local hflat = torch.zeros(flat:numel(), {dtype = flat.dtype})
    torch.no_grad(function()
      local off = 1
      for _, p in ipairs(ps) do
        local n = p:numel()
        local e = by[p]
        if e then
          local view = hflat:narrow(1, off, n):view(e[1][e[2]]:size())
          view:copy_(e[1][e[2]])
          e[1][e[2]] = view
        end
        off = off + n
      end
    end)
    return flat, gflat, hflat
  end

  local Sequential = nn.Sequential
  local function kept_output(m)
    local o = m.output
    return torch.is_tensor(o) and o:detach() or o
  end
  -- sequential:updateDiagHessianInput(input, diagHessianOutput): its modules' rules,
  -- last to first (after a forward).
  function Sequential:updateDiagHessianInput(input, h)
    local ms = self.modules
    for i = #ms, 2, -1 do h = ms[i]:updateDiagHessianInput(kept_output(ms[i - 1]), h) end
    h = ms[1]:updateDiagHessianInput(input, h)
    self.diagHessianInput = h
    return h
  end
  -- sequential:accDiagHessianParameters(input, diagHessianOutput): each module's, with
  -- the diagHessianInput of the module after it (after updateDiagHessianInput).
  function Sequential:accDiagHessianParameters(input, h)
    local ms = self.modules
    for i = #ms, 2, -1 do
      ms[i]:accDiagHessianParameters(kept_output(ms[i - 1]), h)
      h = ms[i].diagHessianInput
    end
    ms[1]:accDiagHessianParameters(input, h)
  end
  -- sequential:initDiagHessianParameters(): each module's.
  function Sequential:initDiagHessianParameters()
    for _, m in ipairs(self.modules) do m:initDiagHessianParameters() end
  end
end

return hessian
