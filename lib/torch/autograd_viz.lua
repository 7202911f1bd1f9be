-- torch.autograd.graph and torch.autograd.trace: autograd you can watch.
-- graph(y) gives the backward graph behind y (Graphviz text with :dot(),
-- a picture with :save('g.svg')); trace(fn) and y:backward{trace=true}
-- print each node as the engine runs it, with the gradient it receives and
-- the gradients it passes on.
local torch = require 'torch'
local core = torch

local function shape_str(size)
  if size == nil then return '?' end
  if #size == 0 then return 'scalar' end
  return tostring(size)
end

-- the values of a small tensor, compactly: {1, 2.5, -3}
local function values_str(t, limit)
  limit = limit or 8
  if t:numel() > limit then return '' end
  local vals = t:detach():reshape(-1):_flat_values()
  local parts = {}
  for i, v in ipairs(vals) do
    parts[i] = type(v) == 'number' and string.format('%.4g', v) or tostring(v)
  end
  if t:dim() == 0 then return parts[1] end
  return '{' .. table.concat(parts, ', ') .. '}'
end

local function tensor_str(t)
  local v = values_str(t)
  return shape_str(t:size()) .. (v ~= '' and '  ' .. v or '')
end

-- ---- graph ----
local Graph = {}
Graph.__index = Graph

-- torch.autograd.graph(y, {names = {w = w, ...}}): the nodes reachable from
-- y.grad_fn, each once, and the edges between them.
function torch.autograd.graph(y, opts)
  if not core.is_tensor(y) then error('autograd.graph: expected a tensor, got ' .. type(y), 2) end
  if not y.grad_fn then
    error('autograd.graph: the tensor has no grad_fn (it is a leaf or does not require grad)', 2)
  end
  opts = opts or {}
  local names = opts.names or {}
  local g = setmetatable({nodes = {}, edges = {}, output_shape = y:size()}, Graph)
  local index = {}
  local function visit(node)
    if index[node.id] then return index[node.id] end
    local entry = {id = #g.nodes + 1, name = node:name(), node = node}
    index[node.id] = entry
    g.nodes[#g.nodes + 1] = entry
    if node.is_accumulator then
      entry.leaf_shape = node.variable_shape
      for name, t in pairs(names) do
        if core.is_tensor(t) and node:variable_is(t) then entry.leaf_name = name end
      end
    else
      entry.saved_shapes = node.saved_shapes
      entry.released = node.released
    end
    for i, nf in ipairs(node.next_functions) do
      local nxt = nf[1]
      if nxt then
        local child = visit(nxt)
        g.edges[#g.edges + 1] = {from = child.id, to = entry.id, input = i}
      end
    end
    return entry
  end
  g.root = visit(y.grad_fn)
  return g
end

local function label(entry)
  if entry.leaf_shape then
    return (entry.leaf_name or 'leaf') .. '\\n' .. shape_str(entry.leaf_shape)
  end
  local l = entry.name
  if entry.saved_shapes and #entry.saved_shapes > 0 then
    local s = {}
    for i, sz in ipairs(entry.saved_shapes) do s[i] = shape_str(sz) end
    l = l .. '\\nsaved: ' .. table.concat(s, ', ')
  elseif entry.released then
    l = l .. '\\n(saved tensors freed)'
  end
  return l
end

-- g:dot(): Graphviz text. Arrows follow the forward direction (input to
-- the op that used it); leaves are blue ellipses, nodes holding saved
-- tensors have an orange border, the output is green.
function Graph:dot()
  local out = {'digraph autograd {', '  node [shape=box, fontname="Helvetica", fontsize=11];'}
  for _, e in ipairs(self.nodes) do
    local attrs
    if e.leaf_shape then attrs = 'shape=ellipse, style=filled, fillcolor=lightblue'
    elseif e.saved_shapes and #e.saved_shapes > 0 then attrs = 'color=orange, penwidth=2'
    else attrs = 'style=solid' end
    out[#out + 1] = string.format('  n%d [label="%s", %s];', e.id, label(e), attrs)
  end
  out[#out + 1] = string.format('  out [label="output\\n%s", shape=box, style=filled, fillcolor=darkolivegreen1];',
                                shape_str(self.output_shape))
  for _, ed in ipairs(self.edges) do
    out[#out + 1] = string.format('  n%d -> n%d;', ed.from, ed.to)
  end
  out[#out + 1] = string.format('  n%d -> out;', self.root.id)
  out[#out + 1] = '}'
  return table.concat(out, '\n') .. '\n'
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- torch._render_dot(text, path, who, level): writes Graphviz's dot text to
-- path rendered by the dot program in the format of the extension (svg, png,
-- pdf; .dot or .gv: the text itself). The file appears whole or not at all,
-- written as torch.save writes (torch._write_atomic: symlinks followed).
-- Errors name who, raised at level (from the caller of the function calling
-- this). Returns path.
function torch._render_dot(text, path, who, level)
  level = (level or 1) + 1
  if type(path) ~= 'string' then error(who .. ': expected a file name, got ' .. type(path), level) end
  local ext = path:match('%.(%w+)$') or 'svg'
  local render = ext ~= 'dot' and ext ~= 'gv'
  if render and not os.execute('command -v dot > /dev/null 2>&1') then
    error(who .. ": the Graphviz 'dot' program is not installed (apt-get install graphviz)", level)
  end
  local ok, err = pcall(torch._write_atomic, path, who, function(write, file)
    if not render then return write(text) end
    local source = os.tmpname()                 -- not beside file, which may be /dev/null
    local f = assert(io.open(source, 'w'))
    f:write(text)
    f:close()
    local rendered = os.execute(string.format('dot -T%s -o %s %s 2>/dev/null', ext, shell_quote(file), shell_quote(source)))
    os.remove(source)
    if not rendered then error('dot failed to render ' .. ext, 0) end
  end)
  if not ok then error(err, level) end
  return path
end

-- g:save(path): renders with Graphviz's dot, the format from the extension
-- (svg, png, pdf; .dot writes the text), atomically (torch._render_dot).
function Graph:save(path)
  return torch._render_dot(self:dot(), path, 'graph:save', 2)
end

function Graph:__tostring()
  local lines = {string.format('autograd graph: %d nodes, output %s', #self.nodes, shape_str(self.output_shape))}
  for _, e in ipairs(self.nodes) do
    local inputs = {}
    for _, ed in ipairs(self.edges) do
      if ed.to == e.id then inputs[#inputs + 1] = '#' .. ed.from end
    end
    lines[#lines + 1] = string.format('  #%d %s%s', e.id, label(e):gsub('\\n', '  '),
                                      #inputs > 0 and ('  <- ' .. table.concat(inputs, ' ')) or '')
  end
  return table.concat(lines, '\n')
end

-- ---- trace ----
-- The default tracer prints (through opts.print, default print) one block
-- per node in the order the engine runs them.
local function printer(write, names)
  local step = 0
  return function(node, grad_out, grads)
    step = step + 1
    if node.is_accumulator then
      local leaf = 'leaf'
      for name, t in pairs(names) do
        if core.is_tensor(t) and node:variable_is(t) then leaf = name end
      end
      write(string.format('[%d] %s (%s %s)  .grad += %s', step, node:name(), leaf,
                          shape_str(node.variable_shape), tensor_str(grad_out)))
      return
    end
    write(string.format('[%d] %s  receives %s', step, node:name(), tensor_str(grad_out)))
    for i, nf in ipairs(node.next_functions) do
      local target = nf[1] and nf[1]:name() or '(no gradient needed)'
      if grads[i] then
        write(string.format('      input %d -> %s  gets %s', i, target, tensor_str(grads[i])))
      else
        write(string.format('      input %d -> %s', i, target))
      end
    end
  end
end

-- torch.autograd.trace(fn, {print = f, names = {w = w}}): runs fn; every
-- backward inside prints its nodes as they run (leaves named by names).
-- Returns fn's results.
function torch.autograd.trace(fn, opts)
  if type(fn) ~= 'function' then error('autograd.trace: expected a function', 2) end
  opts = opts or {}
  local write = opts.print or print
  core._set_tracer(printer(write, opts.names or {}))
  local res = table.pack(pcall(fn))
  core._set_tracer(nil)
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

function torch.autograd._backward_traced(y, grad, retain_graph, create_graph)
  print('backward from ' .. tostring(y.grad_fn) .. ', nodes in the order they run:')
  torch.autograd.trace(function()
    y:backward(grad, {retain_graph = retain_graph, create_graph = create_graph})
  end)
end

return torch.autograd
