-- torch.gradcheck: gradients from autograd checked against central finite
-- differences (torch.autograd.gradcheck / gradgradcheck, as in PyTorch).
-- Inputs should be float64 tensors that require grad.
local torch = require 'torch.core'

local function as_list(v)
  if torch.is_tensor(v) then return {v} end
  return v
end

-- The outputs of fn(inputs...) as one flat float64 vector (no history).
local function flat_outputs(fn, inputs)
  local outs = as_list(fn(table.unpack(inputs)))
  local parts = {}
  for i, o in ipairs(outs) do parts[i] = o:detach():reshape(-1):double() end
  return torch.cat(parts, 1), outs
end

-- Jacobian of the flat outputs with respect to input j, column k by
-- perturbing element k: n_outputs x n_elements.
local function numeric_jacobian(fn, inputs, j, eps)
  local x = inputs[j]
  local n = x:numel()
  local flat = x:detach():view(-1)
  -- fn runs in the caller's grad mode: gradgradcheck's fn differentiates inside
  local base = flat_outputs(fn, inputs)
  local jac = torch.zeros(base:numel(), n, {dtype = 'float64'})
  for k = 1, n do
    local v = flat[k]
    flat[k] = v + eps
    local hi = flat_outputs(fn, inputs)
    flat[k] = v - eps
    local lo = flat_outputs(fn, inputs)
    flat[k] = v
    jac:select(2, k):copy_((hi - lo) / (2 * eps))
  end
  return jac
end

-- Jacobian rows from autograd: one backward per output element.
local function analytic_jacobians(fn, inputs)
  local outs = as_list(fn(table.unpack(inputs)))
  local jacs = {}
  local total = 0
  for _, o in ipairs(outs) do total = total + o:numel() end
  for j, x in ipairs(inputs) do jacs[j] = torch.zeros(total, x:numel(), {dtype = 'float64'}) end
  local row = 0
  for oi, o in ipairs(outs) do
    for e = 1, o:numel() do
      row = row + 1
      local seed = torch.zeros(o:numel(), {dtype = o.dtype})
      seed[e] = 1
      -- outputs without history (a gradient that is constant in the inputs,
      -- in gradgradcheck) have zero rows
      local tracked, grads = {}, {}
      for k = 1, #outs do
        if outs[k].requires_grad then
          tracked[#tracked + 1] = outs[k]
          grads[#grads + 1] = k == oi and seed:view(o:size()) or torch.zeros_like(outs[k])
        end
      end
      local gs = {}
      if o.requires_grad then
        gs = torch.autograd.grad(tracked, inputs, {grad_outputs = grads, retain_graph = true, allow_unused = true})
      end
      for j = 1, #inputs do
        if gs[j] then
          local g = gs[j]:detach():reshape(-1):double()
          jacs[j]:select(1, row):copy_(g)
        end
      end
    end
  end
  return jacs
end

-- torch.autograd.gradcheck(fn, inputs, {eps=1e-6, atol=1e-5, rtol=1e-3,
-- raise_exception=true}): true when every Jacobian entry matches.
function torch.gradcheck(fn, inputs, opts)
  opts = opts or {}
  inputs = as_list(inputs)
  local eps, atol, rtol = opts.eps or 1e-6, opts.atol or 1e-5, opts.rtol or 1e-3
  local raise = opts.raise_exception ~= false
  local analytic = analytic_jacobians(fn, inputs)
  for j, x in ipairs(inputs) do
    if x.requires_grad then
      local numeric = numeric_jacobian(fn, inputs, j, eps)
      local a, n = analytic[j]:_flat_values(), numeric:_flat_values()
      for k = 1, #a do
        if math.abs(a[k] - n[k]) > atol + rtol * math.abs(n[k]) then
          local cols = x:numel()
          local msg = string.format('gradcheck: Jacobian mismatch for input %d, output %d, element %d: '
                                    .. 'analytical %.10g, numerical %.10g', j, (k - 1) // cols + 1,
                                    (k - 1) % cols + 1, a[k], n[k])
          if raise then error(msg, 2) end
          return false, msg
        end
      end
    end
  end
  return true
end

-- torch.autograd.gradgradcheck(fn, inputs, opts): gradcheck of the gradient
-- (with fixed random grad_outputs), so second derivatives are checked.
function torch.gradgradcheck(fn, inputs, opts)
  inputs = as_list(inputs)
  local outs = as_list(fn(table.unpack(inputs)))
  local seeds = {}
  for i, o in ipairs(outs) do seeds[i] = torch.randn(o:size(), {dtype = o.dtype}) end
  local function grad_fn(...)
    local xs = {...}
    local ys = as_list(fn(...))
    local gs = torch.autograd.grad(ys, xs, {grad_outputs = seeds, create_graph = true, allow_unused = true})
    local present = {}
    for j = 1, #xs do if gs[j] then present[#present + 1] = gs[j] end end
    return present
  end
  return torch.gradcheck(grad_fn, inputs, opts)
end

torch.autograd.gradcheck = torch.gradcheck
torch.autograd.gradgradcheck = torch.gradgradcheck
