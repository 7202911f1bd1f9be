-- nn.gModule: a module made of a graph of nngraph nodes.
--
-- Torch7's contract (g:forward, g:backward, updateOutput, updateGradInput,
-- accGradParameters) runs the graph node by node, as Torch7's nngraph did:
-- forward in the order of g.forwardnodes, each node's module given the values
-- of its input nodes (node.data.input), backward in the order of
-- g.backwardnodes, each node's gradOutputs (node.data.gradOutput, one per
-- node reading it) summed and handed to its module. Each module's own
-- forward/backward computes its part (its input is cut from the graph before
-- it, so that no gradient is counted twice).
--
-- Called as a function, g(x), the graph is evaluated with every module
-- called on its inputs, so autograd's backward (loss:backward()) reaches
-- every parameter and the input, as for any other PyTorch-style module.
local torch = require 'torch'
local nn = require 'nn'
local nngraph = package.loaded.nngraph

local Module = nn.Module
local gModule = torch.class('nn.gModule', 'nn.Module')

local read = gModule.__index
-- g.modules: the modules of the nodes, in forward order (Torch7's container
-- field, read-only); called as a method, g:modules() is still PyTorch's list
-- of every descendant
local function modules_view(self)
  local items = rawget(self, '_items')
  return setmetatable({}, {__index = items, __len = function() return #items end,
                           __pairs = function() return next, items, nil end,
                           __newindex = function() error('nn.gModule: g.modules is read-only (use g:replace)', 2) end,
                           __call = function(_, m, ...) return Module.modules(m, ...) end})
end
gModule.__index = function(self, k)
  if k == 'modules' and rawget(self, '_items') then return modules_view(self) end
  return read(self, k)
end

-- raises the message at level (from the caller of the function calling fail);
-- level -1: the bare message (inside build, which __init re-raises)
local function fail(level, fmt, ...)
  local msg = string.format(fmt, ...)
  if level < 0 then error(msg, 0) end
  error(msg, level + 1)
end

-- takes back node:add(child, true), the last edge added to node
local function undo_add(node, child)
  local d = node.data
  for i = #node.children, 1, -1 do
    if node.children[i] == child then table.remove(node.children, i) break end
  end
  local k = d.mapindex[child.data]
  if k then
    table.remove(d.mapindex, k)
    d.mapindex[child.data] = nil
    for i = k, #d.mapindex do d.mapindex[d.mapindex[i]] = i end
  end
  child.data.reverseMap[node] = nil
end

-- g = nn.gModule(inputs, outputs): the module computing the output nodes (a node or
-- a table of them) from the input nodes (likewise); forward takes one input per
-- input node (a table when there are several) and returns one output per output node.
function gModule:__init(inputs, outputs)
  Module.__init(self)
  if nngraph.is_node(inputs) then inputs = {inputs} end
  if nngraph.is_node(outputs) then outputs = {outputs} end
  if type(inputs) ~= 'table' then fail(3, nngraph._not_a_node(inputs, 'inputs', 1)) end
  if type(outputs) ~= 'table' then fail(3, nngraph._not_a_node(outputs, 'outputs', 1)) end
  local n_out, n_in = nngraph._max_n(outputs), nngraph._max_n(inputs)
  if n_in == 0 then fail(3, 'nn.gModule: no inputs (a graph needs at least one input node)') end
  if n_out == 0 then fail(3, 'nn.gModule: no outputs (a graph needs at least one output node)') end
  for i = 1, n_out do
    if not nngraph.is_node(outputs[i]) then fail(3, nngraph._not_a_node(outputs[i], 'outputs', i)) end
  end
  for i = 1, n_in do
    if not nngraph.is_node(inputs[i]) then fail(3, nngraph._not_a_node(inputs[i], 'inputs', i)) end
  end
  -- a node that reads every output, and one that feeds every input
  local outnode = nngraph.Node({input = {}, annotations = {_debugLabel = '[gModule output]'}})
  for i = 1, n_out do outnode:add(outputs[i], true) end
  local innode = nngraph.Node({input = {}, annotations = {_debugLabel = '[gModule input]'}})
  if n_in == 1 then
    inputs[1]:add(innode, true)
  else
    local splits = {innode:split(n_in)}
    splits[1].children[1].data.gModuleInputs = true
    for i = 1, n_in do
      if #inputs[i].children > 0 then
        fail(3, 'nn.gModule: inputs[%d] (declared at %s) has inputs of its own; an input node of a gModule takes '
             .. 'none', i, inputs[i].data.annotations._debugLabel)
      end
    end
    for i = 1, n_in do inputs[i]:add(splits[i], true) end
  end
  local function build()
    local bg = outnode:graph()            -- each node to its inputs
    local fg = bg:reverse()               -- each node to the nodes reading it
    local roots = fg:roots()
    local fg_innode
    for _, r in ipairs(roots) do
      if r.data == innode.data then fg_innode = r
      else
        fail(-1, 'nn.gModule: the node declared at %s has no inputs and is not one of the gModule\'s inputs (a node '
             .. 'used before it was defined?)', r.data.annotations._debugLabel)
      end
    end
    if not fg_innode then fail(-1, 'nn.gModule: no output depends on the inputs') end
    local ok, forwardnodes = pcall(fg.topsort, fg)
    if not ok then fail(-1, 'nn.gModule: %s', forwardnodes) end
    local backwardnodes = bg:topsort()
    local in_graph = {}
    for _, node in ipairs(forwardnodes) do in_graph[node.data] = true end
    local items = {}
    for _, node in ipairs(forwardnodes) do
      local d = node.data
      if d.nSplitOutputs and d.nSplitOutputs ~= #node.children then
        if d.gModuleInputs then               -- the split of the gModule's inputs: which one is unused
          local used = {}
          for _, c in ipairs(node.children) do used[c.data.selectindex] = true end
          for i = 1, d.nSplitOutputs do
            if not used[i] then
              fail(-1, 'nn.gModule: inputs[%d] (the node declared at %s) does not reach any output', i,
                   inputs[i].data.annotations._debugLabel)
            end
          end
        end
        fail(-1, '%d of split(%d) outputs from the node declared at %s are unused', d.nSplitOutputs - #node.children,
             d.nSplitOutputs, d.annotations._debugLabel)
      end
      for successor in pairs(d.reverseMap) do
        if not in_graph[successor.data] then
          fail(-1, 'node declared on %s does not connect to gmodule output', successor.data.annotations._debugLabel)
        end
      end
      d.forwardNodeId = node.id
      if d.module then items[#items + 1] = d.module end
    end
    rawset(self, '_items', items)
    self:_set_children(items)
    self.innode, self.outnode = fg_innode, outnode
    self.fg, self.bg = fg, bg
    self.forwardnodes, self.backwardnodes = forwardnodes, backwardnodes
    self.nInputs = n_in
    self.verbose = false
  end
  local ok, err = pcall(build)
  if not ok then           -- the input nodes as they were, so that they can be used again
    for i = 1, n_in do
      local children = inputs[i].children
      undo_add(inputs[i], children[#children])
    end
    error(err, 3)
  end
end

-- ---- values through the graph ----

-- a node's input: the one value of its input node, or the list of them
local function node_input(node)
  local input = node.data.input or {}
  if #input == 1 then return input[1] end
  return input
end

-- v with every tensor cut from the autograd graph (same memory)
local function detached(v)
  if torch.isTensor(v) then return v.requires_grad and v:detach() or v end
  if type(v) == 'table' and not nn.is_module(v) then
    local out = {}
    for k, x in pairs(v) do out[k] = detached(x) end
    return out
  end
  return v
end

-- the gModule's inputs as a list, checked
local function input_list(self, input, level)
  local n = self.nInputs
  if n <= 1 then return {input} end
  if type(input) ~= 'table' or torch.isTensor(input) then
    fail(level + 1, 'nn.gModule: expects a table of %d inputs, got %s', n, torch.typename(input) or type(input))
  end
  if #input ~= n then fail(level + 1, 'nn.gModule: got %d inputs instead of %d', #input, n) end
  return input
end

-- runs the forward graph; run(module, input) computes one node's module
local function run_forward(self, input, run, level)
  local list = input_list(self, input, level + 1)
  for _, node in ipairs(self.forwardnodes) do
    local d = node.data
    if d.input then for i = #d.input, 1, -1 do d.input[i] = nil end end
  end
  local innode = self.innode
  innode.data.input = innode.data.input or {}
  for i, v in ipairs(list) do innode.data.input[i] = v end
  for _, node in ipairs(self.forwardnodes) do
    local d, out = node.data, nil
    if d.selectindex then
      local t = d.input[1]
      if type(t) ~= 'table' or torch.isTensor(t) then
        fail(level + 1, 'nn.gModule: split: the node declared at %s gives %s, not a table to split',
             d.annotations._debugLabel, torch.typename(t) or type(t))
      end
      out = t[d.selectindex]
    else
      local x = node_input(node)
      if d.module then out = run(d.module, x) else out = x end
      if d.nSplitOutputs then
        local n = (type(out) == 'table' and not torch.isTensor(out)) and nngraph._max_n(out) or nil
        if n ~= d.nSplitOutputs then
          fail(level + 1, 'split(%d) cannot split %s outputs (the node declared at %s)', d.nSplitOutputs,
               n and tostring(n) or ('a ' .. (torch.typename(out) or type(out)) .. ', not a table of'),
               d.annotations._debugLabel)
        end
      end
    end
    for _, reader in ipairs(node.children) do
      local rd = reader.data
      rd.input = rd.input or {}
      rd.input[rd.mapindex[d]] = out
    end
    if self.verbose then print(' V : ' .. node:label()) end
  end
  local out = self.outnode.data.input
  if #self.outnode.children == 1 then return out[1] end
  local copy = {}
  for i, v in ipairs(out) do copy[i] = v end
  return copy
end

-- g(x): the graph evaluated with each module called on its inputs (autograd's way)
function gModule.__call(self, ...)
  local first = ...
  if nngraph.is_node(first) or (type(first) == 'table' and nngraph.is_node(rawget(first, 1)))
     or select('#', ...) == 0 then
    return nngraph.node(self, ...)
  end
  return run_forward(self, first, function(m, x) return m(x) end, 1)
end

-- g:updateOutput(input) (g:forward): Torch7's node-by-node forward.
function gModule:updateOutput(input)
  local out = run_forward(self, input, function(m, x) return m:forward(detached(x)) end, 2)
  self.output = out
  return out
end

-- nested sum of gradients (tensors or tables of them), new tensors
local function add_nested(a, b)
  if a == nil then return b end
  if b == nil then return a end
  if torch.isTensor(a) then return a + b end
  local out = {}
  for k, v in pairs(a) do out[k] = v end
  for k, v in pairs(b) do out[k] = add_nested(out[k], v) end
  return out
end

local function total_grad(node)
  local list = node.data.gradOutput or {}
  if #list <= 1 then return list[1] end
  local sum = list[1]
  for i = 2, #list do sum = add_nested(sum, list[i]) end
  return sum
end

local function check_grad_outputs(self, gradOutput, level)
  local n = #self.outnode.children
  if n > 1 and (type(gradOutput) ~= 'table' or torch.isTensor(gradOutput) or #gradOutput ~= n) then
    fail(level + 1, 'nn.gModule: got %s gradOutputs instead of %d',
         (type(gradOutput) == 'table' and not torch.isTensor(gradOutput)) and tostring(#gradOutput)
         or ('a ' .. (torch.typename(gradOutput) or type(gradOutput)) .. ' for'), n)
  end
end

-- g:updateGradInput(input, gradOutput): Torch7's node-by-node backward of the inputs.
function gModule:updateGradInput(input, gradOutput)
  check_grad_outputs(self, gradOutput, 2)
  for _, node in ipairs(self.backwardnodes) do
    local d = node.data
    d.gradOutput = {}
    d.gradOutputTotal = nil
  end
  self.outnode.data.gradOutput[1] = gradOutput
  for _, node in ipairs(self.backwardnodes) do
    local d = node.data
    local go = total_grad(node)
    d.gradOutputTotal = go
    if d.selectindex then
      local splitter = node.children[1].data
      splitter.gradOutput[1] = splitter.gradOutput[1] or {}
      splitter.gradOutput[1][d.selectindex] = go
    else
      local gi = go
      if d.module then
        if go == nil then
          fail(2, 'nn.gModule: no gradient reached the node declared at %s', d.annotations._debugLabel)
        end
        gi = d.module:updateGradInput(node_input(node), go)
      end
      for _, child in ipairs(node.children) do
        local g = gi
        if #node.children > 1 then g = gi and gi[d.mapindex[child.data]] end
        local cg = child.data.gradOutput
        cg[#cg + 1] = g
      end
    end
    if self.verbose then print(' V : ' .. node:label()) end
  end
  local gi = self.innode.data.gradOutput[1]
  self.gradInput = gi
  return gi
end

-- g:accGradParameters(input, gradOutput, scale=1): each module's parameters get
-- scale times their gradient, from the gradOutputs of the last updateGradInput.
function gModule:accGradParameters(input, gradOutput, scale)
  check_grad_outputs(self, gradOutput, 2)
  for _, node in ipairs(self.backwardnodes) do
    local d = node.data
    if d.module and d.gradOutputTotal ~= nil then
      d.module:accGradParameters(node_input(node), d.gradOutputTotal, scale or 1)
    end
  end
end

-- g:replace(fn): every module m of the graph becomes fn(m) (recursively, as
-- Module:replace), g.modules with them.
function gModule:replace(fn)
  local out = fn(self)
  if out ~= self then return out end
  local items = {}
  for _, node in ipairs(self.forwardnodes) do
    local m = node.data.module
    if m then
      local r = m.replace and m:replace(fn) or fn(m)
      node.data.module = r
      items[#items + 1] = r
    end
  end
  rawset(self, '_items', items)
  self:_set_children(items)
  return self
end

-- casts every floating tensor of a value (nested tables too) with convert(x)
local function cast(v, convert)
  if torch.isTensor(v) then return v:is_floating_point() and convert(v) or v end   -- indices stay
  if type(v) == 'table' and not nn.is_module(v) and getmetatable(v) == nil then
    for k, x in pairs(v) do v[k] = cast(x, convert) end
  end
  return v
end

-- the values the last call left in the graph (output, gradInput, each node's
-- input and gradOutput), converted
local function cast_values(self, convert)
  local fields = rawget(self, '_fields')
  fields.output = cast(fields.output, convert)
  fields.gradInput = cast(fields.gradInput, convert)
  for _, list in ipairs({self.forwardnodes, self.backwardnodes}) do
    for _, node in ipairs(list) do
      local d = node.data
      d.input = cast(d.input, convert)
      d.gradOutput = cast(d.gradOutput, convert)
      d.gradOutputTotal = cast(d.gradOutputTotal, convert)
    end
  end
end

-- g:to(...) (and float, double, cuda): the modules and the graph's values.
function gModule:to(target)
  Module.to(self, target)
  cast_values(self, function(x) return x:to(target) end)
  return self
end

-- g:type(name [, cache]) (Torch7's float(), double()): the modules and the graph's values.
function gModule:type(name, cache)
  local r = Module.type(self, name, cache)
  if name ~= nil then cast_values(self, function(x) return x:type(name) end) end
  return r
end

-- ---- Torch7's files ----
-- a gModule is written with Torch7's fields (its graphs and nodes as they are,
-- each node's module mapped as any other), and read back from them
local saved_fields = {'fg', 'bg', 'innode', 'outnode', 'forwardnodes', 'backwardnodes', 'nInputs', 'verbose'}
require('nn.torch7').register('nn.gModule',
  function(f)
    for _, k in ipairs({'fg', 'bg', 'innode', 'outnode', 'forwardnodes', 'backwardnodes'}) do
      if type(f[k]) ~= 'table' then error('a Torch7 nn.gModule without its ' .. k, 0) end
    end
    local g = setmetatable({}, gModule)
    Module.__init(g)
    for _, k in ipairs(saved_fields) do g[k] = f[k] end
    g.nInputs = g.nInputs or #f.innode.children
    local items = {}
    for _, node in ipairs(f.forwardnodes) do
      if node.data.module then items[#items + 1] = node.data.module end
    end
    rawset(g, '_items', items)
    g:_set_children(items)
    return g
  end,
  function(m)
    local f = {output = rawget(m, '_fields').output, gradInput = rawget(m, '_fields').gradInput,
               train = m.training, modules = rawget(m, '_items')}
    for _, k in ipairs(saved_fields) do f[k] = m[k] end
    return 'nn.gModule', f
  end)

function gModule:extra_repr()
  return string.format('%d inputs -> %d outputs', self.nInputs, #self.outnode.children)
end

-- g:dot([title]): the forward graph in Graphviz's dot language (graph.todot).
function gModule:dot(title)
  return require('graph').todot(self.fg, title or 'gModule')
end

-- g:save(path [, title]): the forward graph rendered by Graphviz, the format from
-- the extension ('g.svg', 'g.png', 'g.pdf'; 'g.dot' writes the text); returns path.
-- (torch.save(path, g) saves the module itself.)
function gModule:save(path, title)
  return torch._render_dot(self:dot(title), path, 'nn.gModule:save', 2)
end

return gModule
