local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.FlattenTable(): the tensors of a nested input table as one flat table, in
-- depth-first order ({a, {b, {c}}} gives {a, b, c}); the output holds the input's
-- own tensors and gradInput gradOutput's, in the input's nesting. As Torch7's,
-- self.input_map (the input's nesting with each tensor's position in the output)
-- and the output table are kept while the input keeps its structure and tensors.
local FlattenTable, Module = torch.class('nn.FlattenTable', 'nn.Module')

function FlattenTable:__init()
  Module.__init(self)
  self.output, self.gradInput, self.input_map = {}, {}, {}
end

-- appends input's tensors to out; returns input's map
local function flatten(input, out)
  if torch.is_tensor(input) then
    out[#out + 1] = input
    return #out
  end
  local map = {}
  for i, v in ipairs(input) do map[i] = flatten(v, out) end
  return map
end

-- whether map still describes input, flat holding input's tensors at map's places
local function same_mapping(flat, input, map)
  if flat == nil or input == nil or map == nil then return false end
  if torch.is_tensor(input) then return type(map) == 'number' and flat[map] == input end
  if type(input) ~= 'table' or type(map) ~= 'table' or #input ~= #map then return false end
  for i = 1, #input do
    if not same_mapping(flat, input[i], map[i]) then return false end
  end
  return true
end

-- how many tensors map places
local function count(map)
  if type(map) == 'number' then return 1 end
  local n = 0
  for _, m in ipairs(map) do n = n + count(m) end
  return n
end

-- flat's tensors in map's nesting
local function unflatten(flat, map)
  if type(map) == 'number' then return flat[map] end
  local out = {}
  for i, m in ipairs(map) do out[i] = unflatten(flat, m) end
  return out
end

local function check_table(input, what)
  if type(input) ~= 'table' or torch.is_tensor(input) then
    error(string.format('nn.FlattenTable: expected a table %s, got %s', what, Table.describe(input)), 4)
  end
end

function FlattenTable:updateOutput(input)
  check_table(input, 'input')
  local output = self.output
  if type(output) ~= 'table' or torch.is_tensor(output) or not same_mapping(output, input, self.input_map) then
    output = {}
    self.input_map = flatten(input, output)
    self.output = output
  end
  return output
end

function FlattenTable:updateGradInput(input, gradOutput)
  check_table(input, 'input')
  check_table(gradOutput, 'gradOutput')
  local map = self.input_map
  if not same_mapping(gradOutput, self.gradInput, map) then
    local n = count(map)
    for i = 1, n do
      if not torch.is_tensor(gradOutput[i]) then
        error(string.format('nn.FlattenTable: gradOutput %s does not match the output of %d tensors',
                            Table.describe(gradOutput), n), 3)
      end
    end
    self.gradInput = unflatten(gradOutput, map)
  end
  return self.gradInput
end

-- module:clearState(): forgets the kept tables (the next forward rebuilds them).
function FlattenTable:clearState()
  self.output, self.gradInput, self.input_map = {}, {}, {}
  return self
end

return FlattenTable
