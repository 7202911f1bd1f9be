-- nn shape modules: Flatten, Unflatten, Reshape, View.
local torch = require 'torch'
local nn = require 'nn'

local Module = nn.Module

-- nn.Flatten(start_dim=2, end_dim=-1): flattens dims start_dim..end_dim (1-based; the
-- default keeps the batch dim, as PyTorch's start_dim=1).
local Flatten = torch.class('nn.Flatten', 'nn.Module')
function Flatten:__init(start_dim, end_dim)
  Module.__init(self)
  self.start_dim, self.end_dim = start_dim or 2, end_dim or -1
end
function Flatten:updateOutput(x) return x:flatten(self.start_dim, self.end_dim) end
function Flatten:extra_repr() return string.format('start_dim=%d, end_dim=%d', self.start_dim, self.end_dim) end

-- nn.Unflatten(dim, sizes): splits dim into sizes (a table).
local Unflatten = torch.class('nn.Unflatten', 'nn.Module')
function Unflatten:__init(dim, sizes)
  Module.__init(self)
  if type(sizes) ~= 'table' then error('nn.Unflatten: sizes must be a table', 3) end
  self.dim, self.sizes = dim, sizes
end
function Unflatten:updateOutput(x) return x:unflatten(self.dim, self.sizes) end
function Unflatten:extra_repr()
  local s = {}
  for i, v in ipairs(self.sizes) do s[i] = tostring(v) end
  return string.format('dim=%d, unflattened_size={%s}', self.dim, table.concat(s, ', '))
end

-- Torch7's batch rule: when the input holds more elements than the sizes, the first
-- dim is a batch dim kept in front.
local function batch_shape(x, sizes)
  local n, unknown = 1, false
  for _, s in ipairs(sizes) do if s == -1 then unknown = true else n = n * s end end
  local shape = {table.unpack(sizes)}
  if not unknown and x:numel() ~= n and x:dim() > 0 and x:numel() == n * x:size(1) then
    table.insert(shape, 1, x:size(1))
  end
  return shape
end

local function sizes_of(...)
  local first = ...
  if type(first) == 'table' then return {table.unpack(first)} end
  if first ~= nil and torch.typename(first) == 'torch.Size' then return first:totable() end
  return {...}
end

-- nn.Reshape(d1, d2, ...): reshapes to the sizes (a batch dim kept in front, as Torch7).
local Reshape = torch.class('nn.Reshape', 'nn.Module')
function Reshape:__init(...)
  Module.__init(self)
  self.size = sizes_of(...)
end
function Reshape:updateOutput(x) return x:reshape(batch_shape(x, self.size)) end
function Reshape:extra_repr() return table.concat(self.size, 'x') end

-- nn.View(d1, d2, ...): like Reshape but a view (no copy; the input must allow it); -1 infers a size.
local View = torch.class('nn.View', 'nn.Module')
function View:__init(...)
  Module.__init(self)
  self.size = sizes_of(...)
end
function View:updateOutput(x) return x:view(batch_shape(x, self.size)) end
function View:extra_repr() return table.concat(self.size, 'x') end

return nn
