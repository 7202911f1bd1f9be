-- Small functions several module files share: Torch7's boolean bias argument,
-- the sizes of Reshape and View, and how a size prints in extra_repr.
local torch = require 'torch'

local helpers = {}

-- The options table of a call whose last argument may be Torch7's bias flag
-- (nn.Linear(in, out, false)).
function helpers.bias_options(v)
  if type(v) == 'boolean' then return {bias = v} end
  return v or {}
end

-- The sizes of a call (d1, d2, ...), ({d1, d2, ...}), (torch.Size) or Torch7's
-- (torch.LongStorage), as a new table.
function helpers.sizes_of(...)
  local first = ...
  if type(first) == 'table' then return {table.unpack(first)} end
  if first ~= nil and (torch.typename(first) == 'torch.Size' or torch.isStorage(first)) then return first:totable() end
  return {...}
end

-- Torch7's batch rule: when the input holds more elements than the sizes, the first
-- dim is a batch dim kept in front.
function helpers.batch_shape(x, sizes)
  local n, unknown = 1, false
  for _, s in ipairs(sizes) do if s == -1 then unknown = true else n = n * s end end
  local shape = {table.unpack(sizes)}
  if not unknown and x:numel() ~= n and x:dim() > 0 and x:numel() == n * x:size(1) then
    table.insert(shape, 1, x:size(1))
  end
  return shape
end

-- A number, or a table of them as {a, b}, for extra_repr.
function helpers.show(v)
  return type(v) == 'table' and '{' .. table.concat(v, ', ') .. '}' or tostring(v)
end

return helpers
