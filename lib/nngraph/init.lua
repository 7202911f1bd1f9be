-- nngraph: Torch7's graph modules. Calling a module on nodes makes a node
-- (nn.Linear(10, 20)(x)); nn.gModule(inputs, outputs) evaluates the graph.
-- Nodes are graph.Node's (lib/graph): the gModule keeps the backward graph
-- (g.bg, edges from each node to its inputs) and the forward graph (g.fg, its
-- reverse), as Torch7's nngraph did.
local torch = require 'torch'
local nn = require 'nn'
local graph = require 'graph'

local nngraph = {}
package.loaded.nngraph = nngraph          -- before the files below, which read it
_G.nngraph = nngraph                       -- a global, as Torch7's require 'nngraph' made it

-- ---- where a node was made ----

-- the files of moontorch's own packages: a node's label names the first frame outside them
local lib_root = debug.getinfo(1, 'S').source:match('^@(.*[/\\])nngraph[/\\]init%.lua$')
local function is_library(source)
  if not lib_root or source:sub(1, 1) ~= '@' then return false end
  local rest = source:sub(2)
  if rest:sub(1, #lib_root) ~= lib_root then return false end
  rest = rest:sub(#lib_root + 1)
  return rest:match('^nn[/\\]') or rest:match('^nngraph[/\\]') or rest:match('^graph[/\\]')
         or rest:match('^torch[/\\]')
end

-- '[file]:line_name' of the first frame outside the libraries (name: the
-- function running there, when Lua knows it), as Torch7's debug labels
local function creation_label()
  for level = 3, 30 do
    local info = debug.getinfo(level, 'Sln')
    if not info then break end
    if info.what ~= 'C' and not is_library(info.source) then
      return string.format('[%s]:%d_%s', info.short_src, info.currentline or 0, info.name or '')
    end
  end
  return '[?]:0_'
end

-- ---- nodes ----

-- nngraph.Node(data): a node of a graph module. data.module is the module it
-- applies (none: it passes its input on), data.annotations its name,
-- description and Graphviz attributes (annotate), data.mapindex the order of
-- its inputs, data.input and data.gradOutput the values of the last call.
local Node, GraphNode = torch.class('nngraph.Node', 'graph.Node', nngraph)

function Node:__init(data)
  GraphNode.__init(self, data)
  local d = self.data
  d.annotations = d.annotations or {}
  d.mapindex = d.mapindex or {}
  d.reverseMap = d.reverseMap or {}
  if not d.annotations._debugLabel then d.annotations._debugLabel = creation_label() end
end

-- node:add(child, domap): child becomes an input of node (edge node -> child);
-- with domap, the input's position is kept (data.mapindex) and child learns
-- that node reads it (child.data.reverseMap).
function Node:add(child, domap)
  GraphNode.add(self, child)
  if domap then
    local mapindex = self.data.mapindex
    if mapindex[child.data] then error('nngraph: the same node is passed twice as an input of one node', 3) end
    mapindex[#mapindex + 1] = child.data
    mapindex[child.data] = #mapindex
    child.data.reverseMap[self] = true
  end
end

-- node:annotate{name=, description=, graphAttributes=}: sets the node's annotations
-- (its name in errors and in Graphviz); returns the node.
function Node:annotate(annotations)
  if type(annotations) ~= 'table' then
    error('nngraph.Node:annotate: expects a table {name=, description=, graphAttributes=}, got ' .. type(annotations), 2)
  end
  for k, v in pairs(annotations) do self.data.annotations[k] = v end
  return self
end

-- node:graphNodeName(): the annotated name with the node's id, else 'Node' and the id.
function Node:graphNodeName()
  local name = self.data.annotations.name
  if name then return name .. ' (' .. self.id .. ')' end
  return 'Node' .. self.id
end

-- node:graphNodeAttributes(): the annotated Graphviz attributes; the tooltip
-- says where the node was made unless one is given.
function Node:graphNodeAttributes()
  local a = self.data.annotations
  a.graphAttributes = a.graphAttributes or {}
  if a.graphAttributes.tooltip == nil then a.graphAttributes.tooltip = a._debugLabel end
  return a.graphAttributes
end

local function describe(v)
  if torch.isTensor(v) then
    local dims = {}
    for i = 1, v:dim() do dims[i] = v:size(i) end
    return torch.typename(v) .. '{' .. table.concat(dims, 'x') .. '}'
  elseif type(v) == 'table' then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = describe(x) end
    return '{' .. table.concat(parts, ', ') .. '}'
  end
  return tostring(v)
end

-- node:label(): the node's description for Graphviz: its module, annotations,
-- where it was made, and the shapes of its last input and gradOutput.
function Node:label()
  local d, lines = self.data, {}
  if d.module then lines[#lines + 1] = 'module = ' .. tostring(d.module):gsub('\n.*', '') end
  local a = d.annotations
  if a.name then lines[#lines + 1] = 'name = ' .. tostring(a.name) end
  if a.description then lines[#lines + 1] = 'description = ' .. tostring(a.description) end
  if d.selectindex then lines[#lines + 1] = 'selectindex = ' .. d.selectindex end
  if d.nSplitOutputs then lines[#lines + 1] = 'nSplitOutputs = ' .. d.nSplitOutputs end
  if d.input and #d.input > 0 then lines[#lines + 1] = 'input = ' .. describe(d.input) end
  if d.gradOutput and #d.gradOutput > 0 then lines[#lines + 1] = 'gradOutput = ' .. describe(d.gradOutput) end
  lines[#lines + 1] = 'declared at ' .. tostring(a._debugLabel)
  return table.concat(lines, '\n')
end

-- node:split(n): n nodes, the i-th the i-th element of node's (table) output;
-- a gModule raises when an element is left unused, or when the table does not
-- have n elements. split(1) gives the only element of a one-element table.
function Node:split(n)
  if math.type(n) ~= 'integer' or n < 1 then
    error('nngraph.Node:split: the number of outputs must be a positive integer, got ' .. tostring(n), 2)
  end
  if n == 1 then return nngraph.JustElement()(self) end
  local label = self.data.annotations._debugLabel
  local info = debug.getinfo(2, 'Sl')
  local at = string.format(' split at [%s]:%d', info.short_src, info.currentline or 0)
  local splitter = Node({nSplitOutputs = n, annotations = {_debugLabel = label .. at .. '-mnode'}})
  splitter:add(self, true)
  local nodes = {}
  for i = 1, n do
    nodes[i] = Node({selectindex = i, input = {}, annotations = {_debugLabel = label .. '-' .. i}})
    nodes[i]:add(splitter, true)
  end
  return table.unpack(nodes, 1, n)
end

function Node:__tostring() return 'nngraph.Node ' .. self:graphNodeName() end

local function is_node(v) return torch.typename(v) == 'nngraph.Node' end
nngraph.is_node = is_node

-- the largest integer key of a table (a table of nodes may hold a nil)
function nngraph._max_n(t)
  local n = #t
  for k in pairs(t) do if math.type(k) == 'integer' and k > n then n = k end end
  return n
end

-- The error for something that should be a node: nil (a node used before it was
-- defined, or a typo), a module (a forgotten second pair of parentheses), or else.
function nngraph._not_a_node(value, list, i)
  local where = string.format('%s[%d]', list, i)
  if value == nil then return where .. ' is nil (typo / bad index?)' end
  local name = torch.typename(value)
  if nn.is_module(value) then
    return string.format('%s is an nn.Module, specifically a %s, but the only valid thing to pass is an instance '
                         .. 'of nngraph.Node (a module makes a node when called: nn.Identity()())', where, name)
  end
  return string.format('%s is a %s, but the only valid thing to pass is an instance of nngraph.Node', where,
                       name or type(value))
end

-- nngraph.node(module, [inputs]): the node that applies module to inputs (a node, or a
-- table of nodes); none makes an input node. Module's __call comes here with nodes.
function nngraph.node(module, ...)
  local n, inputs = select('#', ...), ...
  if n > 1 then error('nngraph: use {input1, input2} to pass several inputs to a node', 3) end
  if n == 1 and inputs == nil then error(nngraph._not_a_node(nil, 'inputs', 1), 3) end
  if type(inputs) == 'table' and not is_node(inputs) and next(inputs) == nil then
    error('cannot pass an empty table of inputs. To indicate no incoming connections, leave the second set '
          .. 'of parens blank.', 3)
  end
  local node = Node({module = module})
  if n == 0 then return node end
  if is_node(inputs) or type(inputs) ~= 'table' then inputs = {inputs} end
  for i = 1, nngraph._max_n(inputs) do
    if not is_node(inputs[i]) then error(nngraph._not_a_node(inputs[i], 'inputs', i), 3) end
    node:add(inputs[i], true)
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

require 'nngraph.JustElement'
require 'nngraph.JustTable'
require 'nngraph.Nest'
require 'nngraph.ModuleFromCriterion'
nngraph.gModule = require 'nngraph.gModule'
nngraph.simple_print = require 'nngraph.simple_print'

-- nngraph.nest(v): a node whose output has the structure of v, a node or a
-- nested table of nodes ({a, {b}, c} gives {va, {vb}, vc}); a node is itself.
function nngraph.nest(v)
  if is_node(v) then return v end
  if type(v) ~= 'table' then
    error('nngraph.nest: expects a node or a nested table of nodes, got ' .. (torch.typename(v) or type(v)), 2)
  end
  local nodes = {}
  local function collect(t, path)
    for i = 1, nngraph._max_n(t) do
      local x = t[i]
      if is_node(x) then nodes[#nodes + 1] = x
      elseif type(x) == 'table' and not nn.is_module(x) then collect(x, path .. '[' .. i .. ']')
      else error('nngraph.nest: ' .. nngraph._not_a_node(x, 'v' .. path, i), 3) end
    end
  end
  collect(v, '')
  if #nodes == 0 then error('nngraph.nest: the table holds no nodes', 2) end
  return nngraph.Nest(v, nodes)(nodes)
end

-- nngraph.dot(g, title, [file]): a gModule's forward graph in Graphviz's dot
-- language (graph.dot: with a file, file.dot and file.svg are written).
function nngraph.dot(g, title, file)
  return graph.dot(g.fg, title, file)
end

-- A criterion called on nodes ({prediction, target}) makes a node of
-- nn.ModuleFromCriterion(criterion), as Torch7's nngraph made criteria
-- callable. Every criterion class has its own __call (copied from its parent
-- when defined), so each one is wrapped; classes defined later copy the
-- wrapped nn.Criterion's.
local function is_criterion_class(cls)
  local seen = 0
  while type(cls) == 'table' and seen < 50 do
    if cls == nn.Criterion then return true end
    local mt = getmetatable(cls)
    cls = mt and rawget(mt, '__index')
    seen = seen + 1
  end
  return false
end
local function holds_node(v)
  return is_node(v) or (type(v) == 'table' and not torch.isTensor(v) and is_node(rawget(v, 1)))
end
local function wrap_criterion(cls)
  local call = rawget(cls, '__call')
  if call == nil or rawget(cls, '_nngraph_call') then return end
  rawset(cls, '_nngraph_call', true)
  rawset(cls, '__call', function(self, input, ...)
    if holds_node(input) then return nn.ModuleFromCriterion(self)(input) end
    return call(self, input, ...)
  end)
end
wrap_criterion(nn.Criterion)
for _, cls in pairs(nn) do
  if type(cls) == 'table' and rawget(cls, '__typename') and is_criterion_class(cls) then wrap_criterion(cls) end
end

return nngraph
