-- nngraph.simple_print: a plainer Graphviz picture of a graph than graph.dot's:
-- each node named by its module (or its annotated name) alone.
local torch = require 'torch'
local graph = require 'graph'

local simple_print = {}

local function quoted(s)
  return '"' .. tostring(s):gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', '\\n') .. '"'
end

local function short_name(node)
  local d = node.data
  if d.annotations and d.annotations.name then return d.annotations.name end
  if d.module then return torch.typename(d.module) or 'module' end
  if d.selectindex then return 'select ' .. d.selectindex end
  if d.nSplitOutputs then return 'split(' .. d.nSplitOutputs .. ')' end
  return 'Node' .. node.id
end

-- nngraph.simple_print.todot(g, title): the graph (a graph.Graph, e.g. a
-- gModule's fg or bg) in Graphviz's dot language, one box per node.
function simple_print.todot(g, title)
  if torch.typename(g) ~= 'graph.Graph' then
    error('nngraph.simple_print.todot: expects a graph.Graph (a gModule\'s fg or bg), got '
          .. (torch.typename(g) or type(g)), 2)
  end
  local lines = {'digraph G {', '  label=' .. quoted(title or 'graph') .. ';', '  node [shape=box];'}
  local ids = {}
  for i, n in ipairs(g.nodes) do
    ids[n] = 'n' .. i
    lines[#lines + 1] = string.format('  n%d [label=%s];', i, quoted(short_name(n)))
  end
  for _, e in ipairs(g.edges) do lines[#lines + 1] = string.format('  %s -> %s;', ids[e.from], ids[e.to]) end
  lines[#lines + 1] = '}'
  return table.concat(lines, '\n') .. '\n'
end

-- nngraph.simple_print.dot(g, title, fname): writes fname.dot and fname.svg
-- (Graphviz's dot) of simple_print.todot's text; returns the text.
function simple_print.dot(g, title, fname)
  local text = simple_print.todot(g, title)
  if fname == nil then return text end
  return graph._write_dot(text, fname, 'nngraph.simple_print.dot', 2)
end

return simple_print
