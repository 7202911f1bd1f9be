-- nngraph.Nest(structure, nodes): the module behind nngraph.nest: its inputs
-- (the values of nodes, in order) arranged as structure arranges the nodes
-- ({a, {b}, c} gives {va, {vb}, vc}); gradients go back the same way.
local torch = require 'torch'
local nn = require 'nn'
local nngraph = package.loaded.nngraph

local Nest = torch.class('nngraph.Nest', 'nn.Module', nngraph)

function Nest:__init(structure, nodes)
  nn.Module.__init(self)
  local position = {}
  for i, n in ipairs(nodes) do position[n] = i end
  -- the structure with each node replaced by its position among the inputs
  local function template(t)
    local out = {}
    for i = 1, nngraph._max_n(t) do
      local x = t[i]
      out[i] = position[x] or template(x)
    end
    return out
  end
  self.template = template(structure)
  self.count = #nodes
end

function Nest:updateOutput(input)
  local values = input
  if self.count == 1 then values = {input} end
  if type(values) ~= 'table' or torch.isTensor(values) or #values ~= self.count then
    error(string.format('nngraph.Nest: expects %d inputs', self.count), 3)
  end
  local function build(t)
    local out = {}
    for i, x in ipairs(t) do
      if type(x) == 'number' then out[i] = values[x] else out[i] = build(x) end
    end
    return out
  end
  return build(self.template)
end

return Nest
