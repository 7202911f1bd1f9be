-- nn.SparseJacobian: nn.Jacobian's checks for modules whose input is 2-D with the values
-- to differentiate in its second column (Torch7's sparse inputs: one {index, value} row
-- per nonzero, as nn.SparseLinear takes): the input's Jacobian is taken with respect to
-- input[{{}, 2}] only (the indices stay as they are), and randomizing the input only
-- draws that column.
local torch = require 'torch'
local nn = require 'nn'

local SparseJacobian = {}
nn.SparseJacobian = SparseJacobian

local PERTURBATION = 1e-6

local function flat(t) return (t:reshape(-1)) end

local function check(module, input, who)
  if not nn.is_module(module) then
    error('nn.SparseJacobian.' .. who .. ': expected a module, got ' .. torch.type(module), 3)
  end
  if not torch.is_tensor(input) or input:dim() ~= 2 or input:size(2) < 2 then
    error('nn.SparseJacobian.' .. who .. ': expected a 2-D input of at least 2 columns, got '
          .. (torch.is_tensor(input) and tostring(input:size()) or torch.type(input)), 3)
  end
end

local function uniform(n, dtype, minval, maxval)
  minval, maxval = minval or -2, maxval or 2
  return torch.rand(n, {dtype = dtype}) * (maxval - minval) + minval
end

-- the values column of the input, drawn uniform in [minval, maxval)
local function randomize_values(input, minval, maxval)
  torch.no_grad(function() input:select(2, 2):copy_(uniform(input:size(1), input.dtype, minval, maxval)) end)
end

local function randomize(param, minval, maxval)
  torch.no_grad(function() param:copy_(uniform(param:numel(), param.dtype, minval, maxval):view(param:size())) end)
end

-- SparseJacobian.backward(module, input, param, dparam): the Jacobian (rows: param's
-- elements, or the input's rows) by the module's backward, one output element at a time.
-- A gradInput of other rows than the input (nn.SparseLinear's dense one, or that in a
-- table) is read at the input's indices.
function SparseJacobian.backward(module, input, param, dparam)
  local out = module:forward(input)
  local n_out = out:numel()
  local jac = torch.zeros(param and param:numel() or input:size(1), n_out, {dtype = 'float64'})
  local dout = torch.zeros_like(out:detach())
  for i = 1, n_out do
    torch.no_grad(function() dout:zero_(); dout:view(-1)[i] = 1 end)
    module:zeroGradParameters()
    local din = module:updateGradInput(input, dout)
    module:accGradParameters(input, dout)
    if not torch.is_tensor(din) and type(din) == 'table' then din = din[1] end   -- one example's, in a table
    local col = param and flat(dparam:detach()) or din:detach():select(2, 2)
    if not param and din:size(1) ~= input:size(1) then
      -- a dense gradInput ({i, dL/dx_i} for every feature i): the rows of the input's indices
      col = col:index_select(1, input:select(2, 1):long())
    end
    torch.no_grad(function() jac:select(2, i):copy_(col:double()) end)
  end
  return jac
end

-- SparseJacobian.forward(module, input, param, perturbation=1e-6): the same Jacobian by
-- central differences (param's elements, or the input's values column, moved in turn).
function SparseJacobian.forward(module, input, param, perturbation)
  perturbation = perturbation or PERTURBATION
  local n = param and param:numel() or input:size(1)
  local n_out = module:forward(input):numel()
  local jac = torch.zeros(n, n_out, {dtype = 'float64'})
  local target = param and param:view(-1) or input:select(2, 2)
  for i = 1, n do
    local orig = target[i]
    torch.no_grad(function() target[i] = orig - perturbation end)
    local outa = flat(module:forward(input):detach():double():clone())
    torch.no_grad(function() target[i] = orig + perturbation end)
    local outb = flat(module:forward(input):detach():double():clone())
    torch.no_grad(function() target[i] = orig end)
    torch.no_grad(function() jac[i]:copy_((outb - outa) / (2 * perturbation)) end)
  end
  return jac
end

-- SparseJacobian.backwardUpdate(module, input, param): param after accUpdateGradParameters
-- with each output element's unit gradient and rate 1, from the same start each time.
function SparseJacobian.backwardUpdate(module, input, param)
  return nn.Jacobian.backwardUpdate(module, input, param)
end

-- SparseJacobian.forwardUpdate(module, input, param, perturbation): what backwardUpdate
-- should give: param minus the finite-difference Jacobian, column by column.
function SparseJacobian.forwardUpdate(module, input, param, perturbation)
  local jac = SparseJacobian.forward(module, input, param, perturbation)
  return flat(param:detach()):double():view(-1, 1) - jac
end

-- SparseJacobian.testJacobian(module, input, minval=-2, maxval=2): the values column
-- drawn in [minval, maxval); the largest difference of the two Jacobians of the input.
function SparseJacobian.testJacobian(module, input, minval, maxval)
  check(module, input, 'testJacobian')
  randomize_values(input, minval, maxval)
  local jac_fprop = SparseJacobian.forward(module, input)
  local jac_bprop = SparseJacobian.backward(module, input)
  return (jac_fprop - jac_bprop):abs():max():item()
end

-- SparseJacobian.testJacobianParameters(module, input, param, dparam, minval, maxval):
-- the same with respect to a parameter (also drawn), its gradient read from dparam.
function SparseJacobian.testJacobianParameters(module, input, param, dparam, minval, maxval)
  check(module, input, 'testJacobianParameters')
  randomize_values(input, minval, maxval)
  randomize(param, minval, maxval)
  local jac_bprop = SparseJacobian.backward(module, input, param, dparam)
  local jac_fprop = SparseJacobian.forward(module, input, param)
  return (jac_fprop - jac_bprop):abs():max():item()
end

-- SparseJacobian.testJacobianUpdateParameters(module, input, param, minval, maxval):
-- accUpdateGradParameters against the finite differences.
function SparseJacobian.testJacobianUpdateParameters(module, input, param, minval, maxval)
  check(module, input, 'testJacobianUpdateParameters')
  randomize_values(input, minval, maxval)
  randomize(param, minval, maxval)
  local params_bprop = SparseJacobian.backwardUpdate(module, input, param)
  local params_fprop = SparseJacobian.forwardUpdate(module, input, param)
  return (params_fprop - params_bprop):abs():max():item()
end

-- SparseJacobian.testIO(module, input, minval, maxval): the module written to a MemoryFile
-- and read back computes the same output and gradInput; returns both differences.
function SparseJacobian.testIO(module, input, minval, maxval)
  check(module, input, 'testIO')
  randomize_values(input, minval, maxval)
  local out = module:forward(input):detach():clone()
  local gout = torch.rand(out:size(), {dtype = out.dtype})
  module:zeroGradParameters()
  local gin = module:backward(input, gout):detach():clone()
  local f = torch.MemoryFile('rw'):binary()
  f:writeObject(module)
  f:seek(1)
  local copy = f:readObject()
  f:close()
  local out2 = copy:forward(input):detach()
  copy:zeroGradParameters()
  local gin2 = copy:backward(input, gout):detach()
  return (out - out2):abs():max():item(), (gin - gin2):abs():max():item()
end

return SparseJacobian
