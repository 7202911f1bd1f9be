local torch = require 'torch'
local nn = require 'nn'
local Table = require 'nn._Table'

-- nn.MapTable(module, shared): applies module to each entry of the input table
-- and returns the table of outputs. Torch7 kept one clone a entry sharing the
-- parameters; here the one module serves them all (autograd adds up its
-- gradients), so get(i) is that module for each of the size() entries seen.
local MapTable, parent = torch.class('nn.MapTable', 'nn.Module')
function MapTable:__init(module, shared)
  parent.__init(self)
  self.n = 0
  if module ~= nil then self:add(module) end
  self.shared = shared ~= false
end
-- add(module): sets the one module (a MapTable holds one).
function MapTable:add(module)
  if not nn.is_module(module) then error('nn.MapTable: expected a module, got ' .. torch.type(module), 0) end
  if self.module ~= nil then error('nn.MapTable: holds a single module', 0) end
  self.module, self.n = module, 1
  return self
end
function MapTable:updateOutput(input)
  if type(input) ~= 'table' or torch.is_tensor(input) then
    error('nn.MapTable: expected a table, got ' .. Table.describe(input), 0)
  end
  if self.module == nil then error('nn.MapTable: no module to apply', 0) end
  self.n = math.max(self.n, #input)
  local out = {}
  for i, x in ipairs(input) do out[i] = self.module(x) end
  return out
end
-- get(i): the module applied to entry i (one module serves every entry).
function MapTable:get(i) if i >= 1 and i <= self.n then return self.module end end
-- size(): how many entries the module has been applied to (at least 1).
function MapTable:size() return self.n end
-- resize(n): Torch7's count of clones, here only the count size() reports.
function MapTable:resize(n)
  self.n = n
  return self
end
-- clearState(): the count goes back to 1 (Torch7 dropped the clones); returns self.
function MapTable:clearState()
  self.n = self.module and 1 or 0
  return self
end

return MapTable
