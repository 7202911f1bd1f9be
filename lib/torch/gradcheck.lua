-- torch.gradcheck: gradients from autograd checked against central finite
-- differences (torch.autograd.gradcheck / gradgradcheck, as in PyTorch).
-- Only inputs that require grad are checked; they must be float64.
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

-- The elements of x in row-major order, each a one-element tensor over x's
-- own storage (no history): writing one changes x itself, whatever x's
-- layout (transposed, narrowed, ...; checked_inputs refuses overlapping ones).
local function element_views(x)
  local d = x:detach()
  local size, stride = d:size(), d:stride()
  local views, index, n = {}, {}, d:numel()
  for k = 1, #size do index[k] = 0 end
  for e = 1, n do
    local at = d:storageOffset()
    for k = 1, #size do at = at + index[k] * stride[k] end
    views[e] = d:as_strided({1}, {1}, at)
    for k = #size, 1, -1 do
      index[k] = index[k] + 1
      if index[k] < size[k] then break end
      index[k] = 0
    end
  end
  return views
end

-- Jacobian of fn's flat outputs with respect to inputs[j] (n_outputs x
-- n_elements), column k by perturbing element k of the input in place.
-- fn runs in the caller's grad mode: gradgradcheck's fn differentiates inside.
local function numeric_jacobian(fn, inputs, j, eps)
  local elements = element_views(inputs[j])
  local base = flat_outputs(fn, inputs)
  local jac = torch.zeros(base:numel(), #elements, {dtype = 'float64'})
  for k, e in ipairs(elements) do
    local v = e[1]
    e[1] = v + eps
    local hi = flat_outputs(fn, inputs)
    e[1] = v - eps
    local lo = flat_outputs(fn, inputs)
    e[1] = v
    jac:select(2, k):copy_((hi - lo) / (2 * eps))
  end
  return jac
end

-- Jacobian rows from autograd, for the inputs listed in wrt: one
-- torch.autograd.grad per output element.
local function analytic_jacobians(fn, inputs, wrt)
  local outs = as_list(fn(table.unpack(inputs)))
  local targets, jacs = {}, {}
  local total = 0
  for _, o in ipairs(outs) do total = total + o:numel() end
  for k, j in ipairs(wrt) do
    targets[k] = inputs[j]
    jacs[j] = torch.zeros(total, inputs[j]:numel(), {dtype = 'float64'})
  end
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
        gs = torch.autograd.grad(tracked, targets, {grad_outputs = grads, retain_graph = true, allow_unused = true})
      end
      for k, j in ipairs(wrt) do
        if gs[k] then jacs[j]:select(1, row):copy_(gs[k]:detach():reshape(-1):double()) end
      end
    end
  end
  return jacs
end

-- The positions of the inputs that require grad (the ones checked). Each
-- must be float64, where central differences are precise enough, and must
-- not overlap itself (stride 0): a perturbation would move several elements.
local function checked_inputs(inputs)
  local wrt = {}
  for j, x in ipairs(inputs) do
    if torch.is_tensor(x) and x.requires_grad then
      if x.dtype ~= 'float64' then
        error(string.format('gradcheck: input %d is %s; gradcheck compares against finite differences, '
                            .. 'which need float64 inputs (use x:double())', j, x.dtype), 3)
      end
      local size, stride = x:size(), x:stride()
      for k = 1, #size do
        if size[k] > 1 and stride[k] == 0 then
          error(string.format('gradcheck: input %d has a dimension with stride 0; gradcheck only supports '
                              .. 'inputs that do not overlap themselves (call :contiguous() on it first)', j), 3)
        end
      end
      wrt[#wrt + 1] = j
    end
  end
  if #wrt == 0 then
    error('gradcheck: expects at least one input tensor to require gradient, but none of them have '
          .. 'requires_grad=true', 3)
  end
  return wrt
end

-- torch.autograd.gradcheck(fn, inputs, {eps=1e-6, atol=1e-5, rtol=1e-3,
-- raise_exception=true}): true when every Jacobian entry matches.
function torch.gradcheck(fn, inputs, opts)
  opts = opts or {}
  inputs = as_list(inputs)
  local eps, atol, rtol = opts.eps or 1e-6, opts.atol or 1e-5, opts.rtol or 1e-3
  local raise = opts.raise_exception ~= false
  local wrt = checked_inputs(inputs)
  local analytic = analytic_jacobians(fn, inputs, wrt)
  for _, j in ipairs(wrt) do
    local numeric = numeric_jacobian(fn, inputs, j, eps)
    local a, n = analytic[j]:_flat_values(), numeric:_flat_values()
    for k = 1, #a do
      if math.abs(a[k] - n[k]) > atol + rtol * math.abs(n[k]) then
        local cols = inputs[j]:numel()
        local msg = string.format('gradcheck: Jacobian mismatch for input %d, output %d, element %d: '
                                  .. 'analytical %.10g, numerical %.10g', j, (k - 1) // cols + 1,
                                  (k - 1) % cols + 1, a[k], n[k])
        if raise then error(msg, 2) end
        return false, msg
      end
    end
  end
  return true
end

-- torch.autograd.gradgradcheck(fn, inputs, opts): gradcheck of the gradient
-- (with fixed random grad_outputs), so second derivatives are checked.
function torch.gradgradcheck(fn, inputs, opts)
  inputs = as_list(inputs)
  local wrt = checked_inputs(inputs)
  local outs = as_list(fn(table.unpack(inputs)))
  local seeds = {}
  for i, o in ipairs(outs) do seeds[i] = torch.randn(o:size(), {dtype = o.dtype}) end
  local function grad_fn(...)
    local xs = {...}
    local ys, grads = {}, {}
    for i, y in ipairs(as_list(fn(...))) do      -- outputs without history have no gradient
      if y.requires_grad then ys[#ys + 1] = y; grads[#grads + 1] = seeds[i] end
    end
    local targets = {}
    for k, j in ipairs(wrt) do targets[k] = xs[j] end
    local gs = #ys > 0 and torch.autograd.grad(ys, targets, {grad_outputs = grads, create_graph = true,
                                                            allow_unused = true}) or {}
    local present = {}
    for k = 1, #targets do if gs[k] then present[#present + 1] = gs[k] end end
    return present
  end
  return torch.gradcheck(grad_fn, inputs, opts)
end

torch.autograd.gradcheck = torch.gradcheck
torch.autograd.gradgradcheck = torch.gradgradcheck
-- for the specs' finite-difference helpers (spec/support/gradients.lua)
torch.autograd._numeric_jacobian = numeric_jacobian
