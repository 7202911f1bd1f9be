-- graph: directed graphs of nodes, as Torch7's graph package (nngraph builds
-- its forward and backward graphs with it): graph.Node, graph.Edge,
-- graph.Graph (add, reverse, topsort, roots, leaves), depth- and breadth-first
-- walks, and Graphviz output (graph.todot, graph.dot).
local torch = require 'torch'

local graph = {}
package.loaded.graph = graph
_G.graph = graph            -- a global, as Torch7's require 'graph' made it

local next_id = 0

-- graph.Node(data): a node holding data (a table, shared by the copies that
-- reverse() and topsort() make); node.children are the nodes its edges lead to.
local Node = torch.class('graph.Node', nil, graph)

function Node:__init(data)
  next_id = next_id + 1
  self.id = next_id
  self.data = data or {}
  self.children = {}
  self.visited = false
  self.marked = false
end

-- node:add(child): an edge from node to child (once).
function Node:add(child)
  for _, c in ipairs(self.children) do if c == child then return end end
  self.children[#self.children + 1] = child
end

-- node:label(): the text Graphviz shows for the node: its data's fields.
function Node:label()
  local parts = {}
  for k, v in pairs(self.data) do
    if type(v) ~= 'table' and type(v) ~= 'function' then parts[#parts + 1] = tostring(k) .. ' = ' .. tostring(v) end
  end
  table.sort(parts)
  return table.concat(parts, '\n')
end

-- node:graphNodeName(): the node's name in Graphviz (its id unless a subclass names it).
function Node:graphNodeName() return 'Node' .. self.id end

-- node:graphNodeAttributes(): Graphviz attributes of the node (a table).
function Node:graphNodeAttributes() return {} end

-- node:dfs(fn): calls fn(n) on every node reachable from node, each after its children.
function Node:dfs(fn)
  local seen = {}
  local function visit(n)
    if seen[n] then return end
    seen[n] = true
    for _, c in ipairs(n.children) do visit(c) end
    fn(n)
  end
  visit(self)
end

-- node:bfs(fn): calls fn(n) on every node reachable from node, nearest first.
function Node:bfs(fn)
  local seen, queue, head = {[self] = true}, {self}, 1
  while queue[head] do
    local n = queue[head]
    head = head + 1
    fn(n)
    for _, c in ipairs(n.children) do
      if not seen[c] then seen[c] = true; queue[#queue + 1] = c end
    end
  end
end

-- node:graph(): the graph of node and every node reachable from it.
function Node:graph()
  local g = graph.Graph()
  self:bfs(function(n)
    g:_add_node(n)
    for _, c in ipairs(n.children) do g:add(graph.Edge(n, c)) end
  end)
  return g
end

function Node:__tostring() return torch.typename(self) .. ' ' .. self:graphNodeName() end

-- graph.Edge(from, to): an edge of a graph.
local Edge = torch.class('graph.Edge', nil, graph)
function Edge:__init(from, to)
  self.from, self.to = from, to
end

-- graph.Graph(): an empty graph; g.nodes lists its nodes, g.edges its edges.
local Graph = torch.class('graph.Graph', nil, graph)
function Graph:__init()
  self.nodes, self.edges = {}, {}
  self.nodeset, self.edgeset = {}, {}
end

function Graph:_add_node(n)
  if not self.nodeset[n] then
    self.nodeset[n] = true
    self.nodes[#self.nodes + 1] = n
  end
end

-- g:add(edge): adds the edge and its nodes (edge.from gets edge.to as a child).
function Graph:add(edge)
  if torch.typename(edge) ~= 'graph.Edge' then
    error('graph.Graph:add: expects a graph.Edge, got ' .. (torch.typename(edge) or type(edge)), 2)
  end
  self:_add_node(edge.from)
  self:_add_node(edge.to)
  local out = self.edgeset[edge.from]
  if out == nil then out = {}; self.edgeset[edge.from] = out end
  if out[edge.to] then return end
  out[edge.to] = true
  self.edges[#self.edges + 1] = edge
  edge.from:add(edge.to)
end

-- g:reverse(): a graph with every edge turned round: new nodes of the same
-- class sharing each node's data, in the order of g.nodes.
function Graph:reverse()
  local r = graph.Graph()
  local copy = {}
  for _, n in ipairs(self.nodes) do
    local m = setmetatable({}, getmetatable(n))
    for k, v in pairs(n) do m[k] = v end
    m.children = {}
    copy[n] = m
    r:_add_node(m)
  end
  for _, e in ipairs(self.edges) do r:add(graph.Edge(copy[e.to], copy[e.from])) end
  return r
end

-- g:roots(): the nodes no edge leads to.
function Graph:roots()
  local has_parent = {}
  for _, e in ipairs(self.edges) do has_parent[e.to] = true end
  local out = {}
  for _, n in ipairs(self.nodes) do if not has_parent[n] then out[#out + 1] = n end end
  return out
end

-- g:leaves(): the nodes with no edge out.
function Graph:leaves()
  local out = {}
  for _, n in ipairs(self.nodes) do if #n.children == 0 then out[#out + 1] = n end end
  return out
end

-- g:topsort(): the nodes, each before the nodes its edges lead to; raises on a cycle.
function Graph:topsort()
  local order, state = {}, {}
  local function visit(n)
    if state[n] == 'done' then return end
    if state[n] == 'open' then error('graph: the graph has a cycle through ' .. n:graphNodeName(), 0) end
    state[n] = 'open'
    for _, c in ipairs(n.children) do visit(c) end
    state[n] = 'done'
    order[#order + 1] = n
  end
  for _, n in ipairs(self:roots()) do visit(n) end
  for _, n in ipairs(self.nodes) do visit(n) end    -- cycles without a root
  local out = {}
  for i = #order, 1, -1 do out[#out + 1] = order[i] end
  return out
end

-- g:size(): the number of nodes.
function Graph:size() return #self.nodes end

-- ---- Graphviz ----

local function quoted(s)
  return '"' .. tostring(s):gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', '\\n') .. '"'
end

-- graph.todot(g, title): the graph in Graphviz's dot language: each node with
-- its name and label (node:graphNodeName(), node:label()) and its attributes.
function graph.todot(g, title)
  if torch.typename(g) ~= 'graph.Graph' then
    error('graph.todot: expects a graph.Graph, got ' .. (torch.typename(g) or type(g)), 2)
  end
  local lines = {'digraph G {', '  labelloc="t";', '  label=' .. quoted(title or 'graph') .. ';',
                 '  node [shape=oval];'}
  local ids = {}
  for i, n in ipairs(g.nodes) do ids[n] = 'n' .. i end
  for _, n in ipairs(g.nodes) do
    local label = n:graphNodeName()
    local text = n:label()
    if text and text ~= '' then label = label .. '\n' .. text end
    local attrs = {'label=' .. quoted(label)}
    for k, v in pairs(n:graphNodeAttributes() or {}) do
      if k ~= 'label' then   -- a plain word as it is, anything else quoted
        local text = tostring(v)
        attrs[#attrs + 1] = tostring(k) .. '=' .. (text:match('^[%w_.#]+$') and text or quoted(text))
      end
    end
    table.sort(attrs)
    lines[#lines + 1] = string.format('  %s [%s];', ids[n], table.concat(attrs, ', '))
  end
  for _, e in ipairs(g.edges) do lines[#lines + 1] = string.format('  %s -> %s;', ids[e.from], ids[e.to]) end
  lines[#lines + 1] = '}'
  return table.concat(lines, '\n') .. '\n'
end

-- graph._write_dot(text, fname, who, level): writes fname.dot and, with
-- Graphviz's dot program, fname.svg, each atomically; returns text
function graph._write_dot(text, fname, who, level)
  if type(fname) ~= 'string' then error(who .. ': fname must be a string, got ' .. type(fname), level + 1) end
  torch._render_dot(text, fname .. '.dot', who, level + 1)
  torch._render_dot(text, fname .. '.svg', who, level + 1)
  return text
end

-- g:save(path [, title]): the graph rendered by Graphviz, the format from the
-- extension (svg, png, pdf; .dot writes the text); returns path
function Graph:save(path, title)
  return torch._render_dot(graph.todot(self, title), path, 'graph.Graph:save', 2)
end

-- graph.dot(g, title, fname): with fname, writes fname.dot and (with
-- Graphviz's dot program) fname.svg, raising when dot is missing or fails; the
-- dot text is returned either way (there is no window to show it in); g:save
-- writes one file in the format its name asks for.
function graph.dot(g, title, fname)
  local text = graph.todot(g, title)
  if fname == nil then return text end
  return graph._write_dot(text, fname, 'graph.dot', 2)
end

return graph
