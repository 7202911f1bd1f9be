-- nn.utils: gradient clipping and flat parameter vectors.
local torch = require 'torch'
local nn = require 'nn'
local utils = {}

-- the parameters of a module, a list, or one tensor
local function param_list(params, who)
  if torch.is_tensor(params) then return {params} end
  if type(params) == 'table' and params.__nn_module then return (params:parameters()) end
  if type(params) == 'table' then return params end
  error(who .. ': expected a module, a tensor or a list of tensors, got ' .. type(params), 3)
end

-- nn.utils.clip_grad_norm_(params, max_norm, norm_type=2, error_if_nonfinite=false, foreach)
-- as PyTorch's positional call, or clip_grad_norm_(params, max_norm, {norm_type=,
-- error_if_nonfinite=}): scales the gradients so that their joint norm is at most
-- max_norm; returns the norm before clipping (a 0-dim tensor). norm_type math.huge (or
-- 'inf') is the max norm; foreach is accepted and ignored (one code path).
function utils.clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite)
  local opts = norm_type
  if type(opts) ~= 'table' then opts = {norm_type = norm_type, error_if_nonfinite = error_if_nonfinite} end
  norm_type = opts.norm_type or 2
  if norm_type == 'inf' then norm_type = math.huge end
  if type(norm_type) ~= 'number' or type(max_norm) ~= 'number' then
    error(string.format('clip_grad_norm_: expected numbers for max_norm and norm_type, got %s and %s',
                        type(max_norm), type(norm_type)), 2)
  end
  local grads = {}
  for _, p in ipairs(param_list(params, 'clip_grad_norm_')) do
    if p.grad ~= nil then grads[#grads + 1] = p.grad end
  end
  if #grads == 0 then return torch.tensor(0.0) end
  return torch.no_grad(function()
    local total
    if norm_type == math.huge then
      total = grads[1]:abs():max():to('float64')
      for i = 2, #grads do total = torch.maximum(total, grads[i]:abs():max():to('float64')) end
    else
      local acc = 0
      for _, g in ipairs(grads) do acc = acc + g:to('float64'):abs():pow(norm_type):sum():item() end
      total = torch.tensor(acc ^ (1 / norm_type), {dtype = 'float64'})
    end
    local value = total:item()
    if opts.error_if_nonfinite and (value ~= value or value == math.huge) then
      error(string.format('clip_grad_norm_: the total norm of order %s of the gradients is non-finite', tostring(norm_type)), 3)
    end
    local coef = max_norm / (value + 1e-6)
    if coef < 1 then
      for _, g in ipairs(grads) do g:mul_(coef) end
    end
    return total:to(grads[1].dtype)
  end)
end

-- nn.utils.clip_grad_value_(params, clip_value, foreach): clamps every gradient to
-- [-clip, clip]; PyTorch's foreach (positional or {foreach=}) is accepted and ignored.
function utils.clip_grad_value_(params, clip)
  if type(clip) ~= 'number' then error('clip_grad_value_: expected a number for clip_value, got ' .. type(clip), 2) end
  torch.no_grad(function()
    for _, p in ipairs(param_list(params, 'clip_grad_value_')) do
      if p.grad ~= nil then p.grad:clamp_(-clip, clip) end
    end
  end)
end

-- nn.utils.parameters_to_vector(params): one flat tensor of all the values.
function utils.parameters_to_vector(params)
  local parts = {}
  for i, p in ipairs(param_list(params, 'parameters_to_vector')) do parts[i] = p:detach():reshape(-1) end
  return (torch.cat(parts, 1))
end

-- nn.utils.vector_to_parameters(vec, params): copies consecutive slices of vec into params.
function utils.vector_to_parameters(vec, params)
  local ps = param_list(params, 'vector_to_parameters')
  local total = 0
  for _, p in ipairs(ps) do total = total + p:numel() end
  if vec:numel() ~= total then
    error(string.format('vector_to_parameters: vector of %d elements for parameters of %d', vec:numel(), total), 2)
  end
  torch.no_grad(function()
    local off = 1
    for _, p in ipairs(ps) do
      p:copy_(vec:narrow(1, off, p:numel()):view(p:size()))
      off = off + p:numel()
    end
  end)
end

-- nn.utils.addSingletonDimension([view,] t, dim=1): t seen with a new dimension of size 1
-- at dim (1..t:dim()+1), sharing t's storage, as Torch7's. With view (a tensor), view is
-- made that view of t and returned.
function utils.addSingletonDimension(...)
  local view, t, dim
  if select('#', ...) >= 3 then view, t, dim = ... else t, dim = ... end
  if view ~= nil and not torch.is_tensor(view) then
    error('nn.utils.addSingletonDimension: expected an output tensor, got ' .. torch.type(view), 2)
  end
  if not torch.is_tensor(t) then error('nn.utils.addSingletonDimension: expected a tensor, got ' .. torch.type(t), 2) end
  dim = dim or 1
  if math.type(dim) ~= 'integer' or dim < 1 or dim > t:dim() + 1 then
    error(string.format('nn.utils.addSingletonDimension: invalid dimension %s for a tensor of %d dimensions '
                        .. '(expected 1..%d)', tostring(dim), t:dim(), t:dim() + 1), 2)
  end
  local result = t:unsqueeze(dim)
  if view == nil then return result end
  view:set_(result)
  return view
end

-- nn.utils.recursiveType(v, typename [, cache]): Torch7's conversion of a value: a
-- module by module:type(typename, cache), a tensor (floating) to typename's dtype, a
-- table entry by entry (in place); tensors that shared memory still do. Returns v
-- converted.
function utils.recursiveType(v, typename, cache)
  cache = cache or {}
  if type(v) == 'table' and v.__nn_module then return v:type(typename, cache) end
  if torch.is_tensor(v) then
    local m = nn.Module()
    m.value = v
    m:type(typename, cache)
    return m.value
  end
  if type(v) == 'table' and getmetatable(v) == nil then
    for k, x in pairs(v) do v[k] = utils.recursiveType(x, typename, cache) end
  end
  return v
end

return utils
