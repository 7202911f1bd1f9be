-- Torch7's dimension rules shared by its simple layers: a negative dim counts
-- from the end, and a module told its input's dims (nInputDims) skips a batch dim.
local torch = require 'torch'
local helpers = require 'nn._helpers'

local Torch7Dim = {}

-- Torch7Dim.resolve(who, x, dim, n_input_dims): the positive dim of x that dim
-- means, dim + 1 when x has one dim more than n_input_dims (a batch); errors name who.
function Torch7Dim.resolve(who, x, dim, n_input_dims)
  if not torch.is_tensor(x) then error(string.format('%s: expected a tensor input, got %s', who, torch.type(x)), 4) end
  local d = dim
  if d < 0 then d = x:dim() + d + 1
  elseif n_input_dims and x:dim() == n_input_dims + 1 then d = d + 1 end
  if d < 1 or d > x:dim() then
    error(string.format('%s: dim %d is out of range for input of size %s', who, dim, tostring(x:size())), 4)
  end
  return d
end

-- Torch7Dim.sizes(who, ...): Torch7's size arguments (n1, n2, ...) or (torch.LongStorage) as a
-- table of positive integers; errors name who.
function Torch7Dim.sizes(who, ...)
  local sizes = helpers.sizes_of(...)
  for i, s in ipairs(sizes) do
    if math.type(s) ~= 'integer' or s < 1 then
      error(string.format('%s: expected positive integer sizes, got %s at %d', who, tostring(s), i), 4)
    end
  end
  if #sizes == 0 then error(who .. ': expected at least one size', 4) end
  return sizes
end

return Torch7Dim
