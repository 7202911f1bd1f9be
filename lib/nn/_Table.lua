-- What the table modules share: checking a table input (a Lua array of
-- tensors) and describing inputs by their shapes in error messages.
local torch = require 'torch'

local Table = {}

-- '2x3' for a tensor, '{2x3, 4}' for a table, the type name otherwise
function Table.describe(v)
  if torch.is_tensor(v) then return v:dim() == 0 and 'scalar' or table.concat(v:size():totable(), 'x') end
  if type(v) == 'table' and getmetatable(v) == nil then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = Table.describe(x) end
    return '{' .. table.concat(parts, ', ') .. '}'
  end
  return torch.type(v)
end

-- input, checked to be a table of at least `least` tensors (exactly `exactly`
-- when given); who names the module in the error
function Table.tensors(who, input, least, exactly)
  local ok = type(input) == 'table' and not torch.is_tensor(input)
  if ok then
    for _, x in ipairs(input) do ok = ok and torch.is_tensor(x) end
    ok = ok and #input >= (least or 1) and (exactly == nil or #input == exactly)
  end
  if not ok then
    local want = exactly and string.format('%d tensors', exactly) or string.format('at least %d tensors', least or 1)
    error(string.format('%s: expected a table of %s, got %s', who, want, Table.describe(input)), 0)
  end
  return input
end

-- input, checked to be a tensor
function Table.tensor(who, input)
  if not torch.is_tensor(input) then
    error(string.format('%s: expected a tensor, got %s', who, Table.describe(input)), 0)
  end
  return input
end

-- every tensor of the table has the shape of the first
function Table.same_shapes(who, input)
  for i = 2, #input do
    if not input[i]:isSameSizeAs(input[1]) then
      error(string.format('%s: inputs of different shapes %s', who, Table.describe(input)), 0)
    end
  end
  return input
end

-- Torch7's dimension rule of SplitTable and JoinTable: negative counts from the
-- end; with nInputDims, an input of one more dim has a batch dim in front
function Table.dimension(self, ndim)
  local d = self.dimension
  if d < 0 then return ndim + d + 1 end
  if self.nInputDims and ndim == self.nInputDims + 1 then return d + 1 end
  return d
end

-- the pair {a, b} of one shape, 1-D or 2-D, as 2-D (b x n) matrices
function Table.pair_rows(who, input)
  local a, b = table.unpack(Table.same_shapes(who, Table.tensors(who, input, 2, 2)))
  if a:dim() < 1 or a:dim() > 2 then
    error(string.format('%s: expected vectors or matrices, got %s', who, Table.describe(input)), 0)
  end
  if a:dim() == 1 then return a:view(1, -1), b:view(1, -1) end
  return a, b
end

-- Table.elementwise(name, exactly, combine, init): defines nn.<name>, whose output
-- folds combine(acc, x) over input tensors of one shape (exactly that many when
-- given, else at least one); init(self, ...) reads the constructor's arguments.
function Table.elementwise(name, exactly, combine, init)
  local cls, parent = torch.class('nn.' .. name, 'nn.Module')
  local who = 'nn.' .. name
  function cls:__init(...)
    parent.__init(self)
    if init then init(self, ...) end
  end
  function cls:updateOutput(input)
    Table.same_shapes(who, Table.tensors(who, input, exactly or 1, exactly))
    local acc = input[1]
    for i = 2, #input do acc = combine(acc, input[i]) end
    return #input == 1 and acc * 1 or acc
  end
  return cls
end

return Table
