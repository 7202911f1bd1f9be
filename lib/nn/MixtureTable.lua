local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.MixtureTable(dim): a mixture of experts, {gater, experts}: the sum over i of
-- gater's i-th value times expert i. gater is n values (1-D) or b x n (a batch);
-- experts is a table of n tensors of one shape, or one tensor holding the n
-- experts along dim (by default 1 for a 1-D gater, 2 for a batch).
local MixtureTable, parent = torch.class('nn.MixtureTable', 'nn.Module')
function MixtureTable:__init(dim)
  parent.__init(self)
  self.dim = dim
end

function MixtureTable:updateOutput(input)
  local who = 'nn.MixtureTable'
  local gater, experts = type(input) == 'table' and input[1], type(input) == 'table' and input[2]
  if not torch.is_tensor(gater) or gater:dim() < 1 or gater:dim() > 2 or experts == nil or experts == false then
    error(who .. ': expected {gater (n or b x n), experts}, got ' .. Table.describe(input), 0)
  end
  local batched = gater:dim() == 2
  local n = gater:size(batched and 2 or 1)
  if torch.is_tensor(experts) then
    local dim = self.dim or (batched and 2 or 1)
    if dim > experts:dim() or experts:size(dim) ~= n or (batched and experts:size(1) ~= gater:size(1)) then
      error(string.format('%s: gater %s does not fit experts %s along dim %d', who, Table.describe(gater),
                          Table.describe(experts), dim), 0)
    end
    local shape = {}
    for k = 1, experts:dim() do shape[k] = 1 end
    if batched then shape[1] = gater:size(1) end
    shape[dim] = n
    local out = (gater:reshape(table.unpack(shape)) * experts):sum(dim)
    return out:view(experts:select(dim, 1):size())
  end
  Table.same_shapes(who, Table.tensors(who, experts, n, n))
  local first = experts[1]
  if batched and (first:dim() < 1 or first:size(1) ~= gater:size(1)) then
    error(string.format('%s: gater %s does not fit experts %s', who, Table.describe(gater), Table.describe(experts)), 0)
  end
  local shape = {}
  for k = 1, first:dim() do shape[k] = 1 end
  if batched then shape[1] = gater:size(1) end
  local out
  for i, e in ipairs(experts) do
    local gate = gater:select(batched and 2 or 1, i)
    if batched then gate = gate:reshape(table.unpack(shape)) end
    out = out and out + e * gate or e * gate
  end
  return out
end

return MixtureTable
