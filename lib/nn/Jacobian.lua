-- nn.Jacobian: Torch7's numerical gradient checks of a module, by its
-- functions' names and arguments: the Jacobian of the output with respect to
-- the input or a parameter, once from the module's backward (updateGradInput,
-- accGradParameters) and once by central finite differences, and the largest
-- difference between the two. Values are written under no_grad, since the
-- checks perturb a module's parameters in place.
local torch = require 'torch'
local nn = require 'nn'

local Jacobian = {}
nn.Jacobian = Jacobian

local PERTURBATION = 1e-6       -- Torch7's default step of the finite differences

local function flat(t) return t:view(-1) end

local function check(module, input, who)
  if not nn.is_module(module) then error('nn.Jacobian.' .. who .. ': expected a module, got ' .. torch.type(module), 3) end
  if not torch.is_tensor(input) then error('nn.Jacobian.' .. who .. ': expected an input tensor, got ' .. torch.type(input), 3) end
end

local function max_abs_diff(a, b) return (a - b):abs():max():item() end

-- x filled with uniform values in [minval, maxval) (Torch7's -2, 2 by default)
local function randomize(x, minval, maxval)
  minval, maxval = minval or -2, maxval or 2
  -- an integer x (indices) takes the values truncated, as Torch7's copy did
  local dtype = x:is_floating_point() and x.dtype or 'float64'
  torch.no_grad(function() x:copy_(torch.rand(x:numel(), {dtype = dtype}):view(x:size()) * (maxval - minval) + minval) end)
end

-- Jacobian.backward(module, input, param, dparam): the (numel of param or input) x
-- (numel of output) Jacobian by the module's backward: one output element's unit
-- gradient at a time, dparam (accumulated from zero) or the gradInput as a column.
function Jacobian.backward(module, input, param, dparam)
  local doparam = param ~= nil
  local out = module:forward(input)
  local n_out = out:numel()
  local n_in = doparam and param:numel() or input:numel()
  local jac = torch.zeros(n_in, n_out, {dtype = 'float64'})
  local dout = torch.zeros_like(out:detach())
  for i = 1, n_out do
    torch.no_grad(function() flat(dout):zero_(); flat(dout)[i] = 1 end)
    module:zeroGradParameters()
    local din = module:updateGradInput(input, dout)
    module:accGradParameters(input, dout)
    local col = doparam and dparam or din
    torch.no_grad(function() jac:select(2, i):copy_(flat(col:detach():contiguous()):double()) end)
  end
  return jac
end

-- Jacobian.forward(module, input, param=input, perturbation=1e-6): the same Jacobian by
-- central differences, each element of param moved by -/+ perturbation in turn.
function Jacobian.forward(module, input, param, perturbation)
  param = param or input
  perturbation = perturbation or PERTURBATION
  local sin = flat(param)
  local n_out = module:forward(input):numel()
  local jac = torch.zeros(param:numel(), n_out, {dtype = 'float64'})
  for i = 1, param:numel() do
    local orig = sin[i]
    torch.no_grad(function() sin[i] = orig - perturbation end)
    local outa = flat(module:forward(input):detach():double():clone())
    torch.no_grad(function() sin[i] = orig + perturbation end)
    local outb = flat(module:forward(input):detach():double():clone())
    torch.no_grad(function() sin[i] = orig end)
    jac[i]:copy_((outb - outa) / (2 * perturbation))
  end
  return jac
end

-- Jacobian.backwardUpdate(module, input, param): for each output element, param after
-- accUpdateGradParameters with that unit gradient and rate 1 (from the same start;
-- moontorch's backward follows the graph of a forward, so each column runs one).
function Jacobian.backwardUpdate(module, input, param)
  local out = module:forward(input)
  local dout = torch.zeros_like(out:detach())
  local jac = torch.zeros(param:numel(), out:numel(), {dtype = 'float64'})
  local params = module:parameters()
  local origin = {}
  for j, p in ipairs(params) do origin[j] = p:detach():clone() end
  local function restore() torch.no_grad(function() for j, p in ipairs(params) do p:copy_(origin[j]) end end) end
  for i = 1, out:numel() do
    restore()
    module:forward(input)                       -- the graph of the restored parameters
    torch.no_grad(function() flat(dout):zero_(); flat(dout)[i] = 1 end)
    module:updateGradInput(input, dout)
    module:accUpdateGradParameters(input, dout, 1)
    torch.no_grad(function() jac:select(2, i):copy_(flat(param:detach():contiguous()):double()) end)
  end
  restore()
  return jac
end

-- Jacobian.forwardUpdate(module, input, param, perturbation): what backwardUpdate should
-- give: param minus the finite-difference Jacobian, column by column.
function Jacobian.forwardUpdate(module, input, param, perturbation)
  local jac = Jacobian.forward(module, input, param, perturbation)
  local p = flat(param:detach():contiguous()):double()
  return p:view(-1, 1) - jac
end

-- Jacobian.testJacobian(module, input, minval, maxval, perturbation): input randomized in
-- [minval, maxval); the largest difference between the backward and the finite-difference
-- Jacobians with respect to the input.
function Jacobian.testJacobian(module, input, minval, maxval, perturbation)
  check(module, input, 'testJacobian')
  randomize(input, minval, maxval)
  local jac_fprop = Jacobian.forward(module, input, input, perturbation)
  local jac_bprop = Jacobian.backward(module, input)
  return max_abs_diff(jac_fprop, jac_bprop)
end

-- Jacobian.testJacobianParameters(module, input, param, dparam, minval, maxval,
-- perturbation): the same with respect to a parameter, its gradient read from dparam.
function Jacobian.testJacobianParameters(module, input, param, dparam, minval, maxval, perturbation)
  check(module, input, 'testJacobianParameters')
  randomize(input, minval, maxval)
  randomize(param, minval, maxval)
  local jac_bprop = Jacobian.backward(module, input, param, dparam)
  local jac_fprop = Jacobian.forward(module, input, param, perturbation)
  return max_abs_diff(jac_fprop, jac_bprop)
end

-- Jacobian.testJacobianUpdateParameters(module, input, param, minval, maxval,
-- perturbation): accUpdateGradParameters against the finite differences.
function Jacobian.testJacobianUpdateParameters(module, input, param, minval, maxval, perturbation)
  check(module, input, 'testJacobianUpdateParameters')
  randomize(input, minval, maxval)
  randomize(param, minval, maxval)
  local params_bprop = Jacobian.backwardUpdate(module, input, param)
  local params_fprop = Jacobian.forwardUpdate(module, input, param, perturbation)
  return max_abs_diff(params_fprop, params_bprop)
end

-- Jacobian.testIO(module, input, minval, maxval): the module written to a MemoryFile and
-- read back computes the same output and gradInput; returns both differences.
function Jacobian.testIO(module, input, minval, maxval)
  check(module, input, 'testIO')
  randomize(input, minval, maxval)
  local out = module:forward(input):detach():clone()
  local gout = torch.rand(out:size(), {dtype = out.dtype})
  module:zeroGradParameters()
  local gin = module:backward(input, gout):clone()
  local f = torch.MemoryFile('rw'):binary()
  f:writeObject(module)
  f:seek(1)
  local copy = f:readObject()
  f:close()
  local out2 = copy:forward(input)
  copy:zeroGradParameters()
  local gin2 = copy:backward(input, gout)
  return max_abs_diff(out, out2:detach()), max_abs_diff(gin, gin2)
end

-- Jacobian.testAllUpdate(module, input, weight, gradWeight): the ways of updating one
-- parameter (updateParameters after backward, accUpdateGradParameters, each also on a
-- clone sharing it) agree; returns {name = largest difference from the first}.
function Jacobian.testAllUpdate(module, input, weight, gradWeight)
  check(module, input, 'testAllUpdate')
  local out = module:forward(input)
  local gout = torch.rand(out:size(), {dtype = out.dtype})
  local lr = torch.uniform and torch.uniform(0.1, 1) or 0.5
  local start = module[weight]:detach():clone()
  local function set_start(m) torch.no_grad(function() m[weight]:copy_(start) end) end
  local function via_update(m)
    set_start(m)
    m:zeroGradParameters()
    m:forward(input)
    m:backward(input, gout)
    m:updateParameters(lr)
    return m[weight]:detach():clone()
  end
  local function via_acc_update(m)
    set_start(m)
    m:forward(input)
    m:updateGradInput(input, gout)
    m:accUpdateGradParameters(input, gout, lr)
    return m[weight]:detach():clone()
  end
  local errors = {}
  local reference = via_update(module:clone())
  errors.accUpdateGradParameters = max_abs_diff(reference, via_acc_update(module:clone()))
  local shared = module:clone()
  local sharing = shared:clone(weight, gradWeight)
  errors['shared updateParameters'] = max_abs_diff(reference, via_update(sharing))
  errors['shared accUpdateGradParameters'] = max_abs_diff(reference, via_acc_update(sharing))
  errors['shared weight'] = max_abs_diff(shared[weight]:detach(), sharing[weight]:detach())
  return errors
end

-- ---- diagonal Hessians (nn.hessian) ----
-- Both estimates are of F = sum of the outputs' squares / 2, whose diagonal Hessian
-- with respect to the output is all ones.

-- Jacobian.backwardDiagHessian(module, input, diagHessianParamName): the module's
-- diagonal Hessian named ('diagHessianInput', 'diagHessianWeight', 'diagHessianBias')
-- by its own rules (nn.hessian.enable()), from ones at the output.
function Jacobian.backwardDiagHessian(module, input, name)
  local out = module:forward(input)
  local ones = torch.ones_like(out:detach())
  torch.no_grad(function()
    for _, field in ipairs({'diagHessianWeight', 'diagHessianBias'}) do
      if torch.is_tensor(module[field]) then module[field]:zero_() end
    end
  end)
  module:updateDiagHessianInput(input, ones)
  module:accDiagHessianParameters(input, ones)
  local h = module[name]
  if not torch.is_tensor(h) then
    error(string.format('Jacobian.backwardDiagHessian: %s has no %s', torch.typename(module), name), 2)
  end
  return h:detach():reshape(-1):clone()
end

-- Jacobian.linearModuleDiagHessian(module, input, gradParamName): the same diagonal
-- for a module linear in its input and parameters, from first derivatives: the sum
-- over output elements k of (dy_k / dx)^2, x the input ('gradInput') or a parameter
-- ('gradWeight', 'gradBias'), each column by updateGradInput and accGradParameters.
function Jacobian.linearModuleDiagHessian(module, input, name)
  local out = module:forward(input)
  local n_out = out:numel()
  local dout = torch.zeros_like(out:detach())
  local sum
  for i = 1, n_out do
    torch.no_grad(function() flat(dout):zero_(); flat(dout)[i] = 1 end)
    module:zeroGradParameters()
    module:updateGradInput(input, dout)
    module:accGradParameters(input, dout)
    local g = module[name]
    if not torch.is_tensor(g) then
      error(string.format('Jacobian.linearModuleDiagHessian: %s has no %s', torch.typename(module), name), 2)
    end
    g = g:detach():reshape(-1)
    sum = sum and sum + g * g or g * g
  end
  return sum
end

-- Jacobian.testDiagHessian(module, input, gradParamName, diagHessianParamName, minval,
-- maxval): both estimates at a random input (uniform in [minval, maxval), -2 and 2 by
-- default), after module:initDiagHessianParameters(); their largest difference.
function Jacobian.testDiagHessian(module, input, grad_name, hessian_name, minval, maxval)
  check(module, input, 'testDiagHessian')
  randomize(input, minval, maxval)
  module:initDiagHessianParameters()
  local by_rules = Jacobian.backwardDiagHessian(module, input, hessian_name)
  local by_grads = Jacobian.linearModuleDiagHessian(module, input, grad_name)
  return max_abs_diff(by_rules, by_grads)
end

-- Jacobian.testDiagHessianInput(module, input, minval, maxval): testDiagHessian of the input's.
function Jacobian.testDiagHessianInput(module, input, minval, maxval)
  return Jacobian.testDiagHessian(module, input, 'gradInput', 'diagHessianInput', minval, maxval)
end

-- Jacobian.testDiagHessianWeight(module, input, minval, maxval): testDiagHessian of the weight's.
function Jacobian.testDiagHessianWeight(module, input, minval, maxval)
  return Jacobian.testDiagHessian(module, input, 'gradWeight', 'diagHessianWeight', minval, maxval)
end

-- Jacobian.testDiagHessianBias(module, input, minval, maxval): testDiagHessian of the bias's.
function Jacobian.testDiagHessianBias(module, input, minval, maxval)
  return Jacobian.testDiagHessian(module, input, 'gradBias', 'diagHessianBias', minval, maxval)
end

return Jacobian
