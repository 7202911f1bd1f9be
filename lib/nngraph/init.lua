-- nngraph: Torch7's graph modules. Calling a module on nodes makes a node
-- (nn.Linear(10, 20)(x)); nn.gModule(inputs, outputs) evaluates the graph.
local torch = require 'torch'
local nn = require 'nn'

local nngraph = {}
package.loaded.nngraph = nngraph          -- before nngraph.gModule, which reads it

-- nngraph.Node: one module applied to the outputs of its input nodes (none for an
-- input node). node.data.module is the module, node.data.annotations its name,
-- description and Graphviz attributes; node.children lists the input nodes in order.
local Node = torch.class('nngraph.Node', nil, nngraph)

local next_id = 0

-- Where a node was made: the first frame outside nn's Module and nngraph.
local function creation_label()
  for level = 3, 12 do
    local info = debug.getinfo(level, 'Sl')
    if not info then break end
    local src = info.short_src
    if not src:find('nn/Module.lua', 1, true) and not src:find('nngraph', 1, true) then
      return string.format('[%s]:%d', src, info.currentline or 0)
    end
  end
  return '[?]'
end

function Node:__init(data)
  next_id = next_id + 1
  self.id = next_id
  self.data = data or {}
  self.data.annotations = self.data.annotations or {}
  self.data.annotations._debugLabel = self.data.annotations._debugLabel or creation_label()
  self.children = {}
end

-- node:add(child): makes child one more input of node (at the end).
function Node:add(child)
  self.children[#self.children + 1] = child
end

-- node:annotate{name=, description=, graphAttributes=}: sets the node's annotations
-- (its name in errors and in the Graphviz text); returns the node.
function Node:annotate(annotations)
  for k, v in pairs(annotations) do self.data.annotations[k] = v end
  return self
end

-- node:graphNodeName(): the node's name: its annotated name, else its module's
-- class, with its id.
function Node:graphNodeName()
  local name = self.data.annotations.name
  local module = self.data.module
  name = name or (module and torch.typename(module)) or 'Node'
  return name .. ' (' .. self.id .. ')'
end

-- node:split(n): n nodes, the i-th the i-th element of node's (table) output.
function Node:split(n)
  local nodes = {}
  for i = 1, n do nodes[i] = nn.SelectTable(i)(self) end
  return table.unpack(nodes, 1, n)
end

function Node:__tostring() return 'nngraph.Node ' .. self:graphNodeName() end

local function is_node(v) return getmetatable(v) == Node end
nngraph.is_node = is_node

-- The error for something that should be a node: nil (a node used before it was
-- defined, or a typo), a module (a forgotten second pair of parentheses), or else.
function nngraph._not_a_node(value, list, i)
  local where = string.format('nngraph: %s[%d]', list, i)
  if value == nil then
    return where .. ' is nil (a node used before it was defined, or a misspelt name?)'
  elseif torch.typename(value) and torch.typename(value):match('^nn%.') then
    return string.format('%s is a module (%s), not a node: a second pair of parentheses ' ..
      'makes the node, as nn.Identity()()', where, torch.typename(value))
  end
  return string.format('%s should be an nngraph.Node, not %s', where, torch.typename(value) or type(value))
end

-- nngraph.node(module, [inputs]): the node that applies module to inputs (a node, or a
-- table of nodes); none makes an input node. Module's __call comes here with nodes.
function nngraph.node(module, ...)
  local n, inputs = select('#', ...), ...
  local node = Node({module = module})
  if n == 0 then return node end
  if is_node(inputs) then inputs = {inputs} end
  if type(inputs) ~= 'table' then error(nngraph._not_a_node(inputs, 'inputs', 1), 3) end
  if next(inputs) == nil then error('nngraph: an empty table of inputs (leave the second parentheses empty for an input node)', 3) end
  local count = 0
  for k in pairs(inputs) do if math.type(k) == 'integer' and k > count then count = k end end
  for i = 1, count do
    if not is_node(inputs[i]) then error(nngraph._not_a_node(inputs[i], 'inputs', i), 3) end
    node:add(inputs[i])
  end
  return node
end

-- nngraph.annotateNodes(): names every node held in a local variable of the calling
-- function after that variable (nodes in a local table as name[i]), unless named.
function nngraph.annotateNodes()
  local function name(node, varname)
    if is_node(node) and not node.data.annotations.name then node:annotate{name = varname} end
  end
  local i = 1
  while true do
    local varname, value = debug.getlocal(2, i)
    if not varname then break end
    if is_node(value) then name(value, varname)
    elseif type(value) == 'table' and getmetatable(value) == nil then
      for k, v in ipairs(value) do name(v, varname .. '[' .. k .. ']') end
    end
    i = i + 1
  end
end

nngraph.gModule = require 'nngraph.gModule'

-- nngraph.dot(g, title, [file]): a gModule's graph in Graphviz's dot language; written
-- to file when one is given. The text is returned.
function nngraph.dot(g, title, file)
  local text = g:dot(title)
  if file then
    local f = assert(io.open(file, 'w'))
    f:write(text)
    f:close()
  end
  return text
end

_G.nngraph = nngraph                   -- a global, as Torch7's require 'nngraph' made it
return nngraph
