-- nn.gModule: a module made of a graph of nngraph nodes, evaluated in topological
-- order; its backward is autograd's, as for every other module.
local torch = require 'torch'
local nn = require 'nn'
local nngraph = package.loaded.nngraph

-- nn.gModule(inputs, outputs): the module computing the output nodes (a node or a
-- table of them) from the input nodes (likewise); forward takes one input per input
-- node (a table when there are several) and returns one output per output node.
local gModule, Module = torch.class('nn.gModule', 'nn.Module')

local function node_list(v, list)
  if nngraph.is_node(v) then return {v} end
  if type(v) ~= 'table' then error(nngraph._not_a_node(v, list, 1), 4) end
  local count = #v
  for k in pairs(v) do if math.type(k) == 'integer' and k > count then count = k end end
  if count == 0 then error('nngraph: no ' .. list .. ' (nil entries: nodes used before they were defined?)', 4) end
  for i = 1, count do
    if not nngraph.is_node(v[i]) then error(nngraph._not_a_node(v[i], list, i), 4) end
  end
  return v
end

-- The nodes the outputs depend on, each after its inputs; raises on a cycle.
local function topological_order(outputs)
  local order, state = {}, {}
  local function visit(node)
    if state[node] == 'done' then return end
    if state[node] == 'open' then
      error('nngraph: the graph has a cycle through ' .. node:graphNodeName(), 0)
    end
    state[node] = 'open'
    for _, child in ipairs(node.children) do visit(child) end
    state[node] = 'done'
    order[#order + 1] = node
  end
  for _, node in ipairs(outputs) do visit(node) end
  return order
end

function gModule:__init(inputs, outputs)
  Module.__init(self)
  inputs, outputs = node_list(inputs, 'inputs'), node_list(outputs, 'outputs')
  local input_index = {}
  for i, node in ipairs(inputs) do
    if #node.children > 0 then
      error(string.format('nngraph: inputs[%d] (%s) has inputs of its own', i, node:graphNodeName()), 3)
    end
    input_index[node] = i
  end
  local ok, order = pcall(topological_order, outputs)
  if not ok then error(order, 3) end
  local used, registered, count = {}, {}, 0
  for _, node in ipairs(order) do
    if input_index[node] then used[node] = true
    elseif #node.children == 0 then
      error(string.format('nngraph: %s has no inputs and is not one of the gModule\'s inputs ' ..
        '(a node used before it was defined?)', node:graphNodeName()), 3)
    end
    local m = node.data.module
    if m and not registered[m] then
      registered[m] = true
      count = count + 1
      self:add_module(tostring(count), m)
    end
  end
  for i, node in ipairs(inputs) do
    if not used[node] then
      error(string.format('nngraph: inputs[%d] (%s) is not reachable from the outputs', i, node:graphNodeName()), 3)
    end
  end
  rawset(self, '_inputs', inputs)
  rawset(self, '_outputs', outputs)
  rawset(self, '_order', order)
  rawset(self, '_input_index', input_index)
end

-- One node's result from the values of its input nodes (or the gModule's input).
local function evaluate(node, values, input_value)
  local args = input_value
  if input_value == nil then
    local children = node.children
    if #children == 1 then args = values[children[1]]
    else
      args = {}
      for i, child in ipairs(children) do args[i] = values[child] end
    end
  end
  local m = node.data.module
  if m == nil then return args end
  return m(args)
end

function gModule:updateOutput(input)
  local inputs, index = rawget(self, '_inputs'), rawget(self, '_input_index')
  local given = {input}
  if #inputs > 1 then
    if type(input) ~= 'table' or torch.is_tensor(input) or #input ~= #inputs then
      error(string.format('nngraph: the gModule takes a table of %d inputs, got %s', #inputs,
        type(input) == 'table' and not torch.is_tensor(input) and #input .. ' inputs' or
        (torch.typename(input) or type(input))), 3)
    end
    given = input
  end
  local values = {}
  for _, node in ipairs(rawget(self, '_order')) do
    local i = index[node]
    values[node] = evaluate(node, values, i and given[i] or nil)
  end
  local outputs = rawget(self, '_outputs')
  if #outputs == 1 then return values[outputs[1]] end
  local out = {}
  for i, node in ipairs(outputs) do out[i] = values[node] end
  return out
end

function gModule:extra_repr()
  return string.format('%d inputs -> %d outputs', #rawget(self, '_inputs'), #rawget(self, '_outputs'))
end

-- g:dot([title]): the graph in Graphviz's dot language, one box per node, edges from
-- each node to the nodes that read it (nngraph.dot writes it to a file).
function gModule:dot(title)
  local lines = {'digraph G {', string.format('  labelloc="t";\n  label=%q;', title or 'gModule'),
                 '  node [shape=box];'}
  for _, node in ipairs(rawget(self, '_order')) do
    local attrs = {string.format('label=%q', node:graphNodeName())}
    for k, v in pairs(node.data.annotations.graphAttributes or {}) do
      attrs[#attrs + 1] = string.format('%s=%q', k, tostring(v))
    end
    table.sort(attrs)
    lines[#lines + 1] = string.format('  n%d [%s];', node.id, table.concat(attrs, ', '))
    for _, child in ipairs(node.children) do
      lines[#lines + 1] = string.format('  n%d -> n%d;', child.id, node.id)
    end
  end
  lines[#lines + 1] = '}'
  return table.concat(lines, '\n') .. '\n'
end

return gModule
