-- nngraph_spec.lua: graph modules (require 'nngraph'): nodes made by calling modules on
-- nodes, nn.gModule's forward and its gradients both ways, nesting, an LSTM cell, errors.
local torch = require 'torch'
local nn = require 'nn'
local nngraph = require 'nngraph'

local function close(a, b, tol) return (a - b):abs():max():item() < (tol or 1e-5) end

-- an MLP as a gModule, and the same modules in a Sequential
local function mlp_pair()
  local l1, l2 = nn.Linear(3, 4), nn.Linear(4, 2)
  local x = nn.Identity()()
  local y = l2(nn.Tanh()(l1(x)))
  local seq = nn.Sequential(l1:clone(), nn.Tanh(), l2:clone())
  return nn.gModule({x}, {y}), seq
end

-- the classic nngraph LSTM cell: (x, prev_c, prev_h) -> (next_c, next_h)
local function lstm_cell(n_in, n_hidden)
  local x, prev_c, prev_h = nn.Identity()(), nn.Identity()(), nn.Identity()()
  local gates = nn.CAddTable()({nn.Linear(n_in, 4 * n_hidden)(x), nn.Linear(n_hidden, 4 * n_hidden)(prev_h)})
  local function slice(i) return nn.Narrow(2, (i - 1) * n_hidden + 1, n_hidden)(gates) end
  local in_gate, forget_gate = nn.Sigmoid()(slice(1)), nn.Sigmoid()(slice(2))
  local out_gate, in_transform = nn.Sigmoid()(slice(3)), nn.Tanh()(slice(4))
  local next_c = nn.CAddTable()({nn.CMulTable()({forget_gate, prev_c}), nn.CMulTable()({in_gate, in_transform})})
  local next_h = nn.CMulTable()({out_gate, nn.Tanh()(next_c)})
  nngraph.annotateNodes()
  return nn.gModule({x, prev_c, prev_h}, {next_c, next_h}), next_h
end

describe('nngraph', function()
  it('makes nodes by calling modules on nodes', function()
    local x = nn.Identity()()
    assert.are.equal('nngraph.Node', torch.typename(x))
    local h = nn.Linear(2, 3)(x)
    assert.are.same({x}, h.children)
    local s = nn.CAddTable()({h, x})
    assert.are.equal(2, #s.children)
    assert.are.equal('nngraph.Node', torch.typename(nn.Linear(3, 3)(s)))
    assert.are.equal(3, nn.Linear(2, 3)(torch.randn(4, 2)):size(2))   -- tensors still compute
  end)

  it('gives an MLP the output and gradients of the same Sequential', function()
    local g, seq = mlp_pair()
    local input, grad_out = torch.randn(5, 3), torch.randn(5, 2)
    assert.is_true(close(g(input), seq(input)))
    -- Torch7 style
    g:zeroGradParameters(); seq:zeroGradParameters()
    local out = g:forward(input)
    assert.is_true(close(out, seq:forward(input)))
    assert.is_true(close(g:backward(input, grad_out), seq:backward(input, grad_out)))
    local gp, gg = g:parameters()
    local sp, sg = seq:parameters()
    assert.are.equal(4, #gp)
    for i = 1, 4 do assert.is_true(close(gp[i], sp[i])); assert.is_true(close(gg[i], sg[i])) end
    -- PyTorch style
    g:zero_grad(); seq:zero_grad()
    local x = torch.randn(5, 3):requires_grad_()
    local x2 = x:detach():requires_grad_()
    g(x):pow(2):sum():backward()
    seq(x2):pow(2):sum():backward()
    assert.is_true(close(x.grad, x2.grad))
    for i = 1, 4 do assert.is_true(close(g:parameters()[i].grad, seq:parameters()[i].grad)) end
  end)

  it('takes and returns tables for several inputs and outputs', function()
    local a, b = nn.Identity()(), nn.Identity()()
    local sum, prod = nn.CAddTable()({a, b}), nn.CMulTable()({a, b})
    local g = nn.gModule({a, b}, {sum, prod})
    local x, y = torch.randn(2, 3), torch.randn(2, 3)
    local out = g:forward({x, y})
    assert.is_true(close(out[1], x + y))
    assert.is_true(close(out[2], x * y))
    local gi = g:backward({x, y}, {torch.ones(2, 3), torch.ones(2, 3)})
    assert.is_true(close(gi[1], y + 1))
    assert.is_true(close(gi[2], x + 1))
  end)

  it('nests gModules', function()
    local inner = mlp_pair()
    local x = nn.Identity()()
    local y = nn.Sigmoid()(inner(x))
    local outer = nn.gModule({x}, {y})
    assert.are.equal(4, #outer:parameters())
    local input = torch.randn(3, 3)
    assert.is_true(close(outer(input), torch.sigmoid(inner(input))))
    outer:zeroGradParameters()
    outer:forward(input)
    local gi = outer:backward(input, torch.ones(3, 2))
    assert.are.same({3, 3}, {gi:size(1), gi:size(2)})
    assert.is_true(inner:parameters()[1].grad:abs():sum():item() > 0)
  end)

  it('builds an LSTM cell whose gradients pass gradcheck', function()
    local cell, next_h = lstm_cell(3, 2)
    assert.are.equal('next_h', next_h.data.annotations.name)
    cell:double()
    local x = torch.randn(2, 3, {dtype = 'float64'}):requires_grad_()
    local c = torch.randn(2, 2, {dtype = 'float64'}):requires_grad_()
    local h = torch.randn(2, 2, {dtype = 'float64'}):requires_grad_()
    local out = cell({x, c, h})
    assert.are.equal(2, #out)
    assert.is_true(torch.autograd.gradcheck(function(a, b, d)
      local o = cell({a, b, d})
      return torch.cat({o[1], o[2]}, 2)
    end, {x, c, h}))
  end)

  it('annotates nodes and writes Graphviz text, and Graphviz files with graph.dot', function()
    local x = nn.Identity()():annotate{name = 'input', description = 'the pixels', graphAttributes = {color = 'red'}}
    local y = nn.Linear(2, 2)(x)
    local g = nn.gModule({x}, {y})
    local text = g:dot('net')
    assert.truthy(text:find('digraph', 1, true))
    assert.truthy(text:find('label="input (' .. x.id .. ')\\n', 1, true))
    assert.truthy(text:find('the pixels', 1, true))
    assert.truthy(text:find('color=red', 1, true))
    local edges = 0
    for _ in text:gmatch('n%d+ %-> n%d+;') do edges = edges + 1 end
    assert.are.equal(3, edges)                     -- input -> x -> y -> output
    assert.truthy(x:label():find('description = the pixels', 1, true))
    local base = os.tmpname()
    local ok = pcall(graph.dot, g.fg, 'net', base)
    if ok then                                      -- Graphviz installed (scripts/deps.sh installs it)
      local svg = io.open(base .. '.svg'):read('a')
      assert.truthy(svg:find('<svg', 1, true))
      assert.are.equal(text:gsub('"net"', '"net"'), io.open(base .. '.dot'):read('a'))
      os.remove(base .. '.svg')
    end
    os.remove(base .. '.dot')
    os.remove(base)
    if ok then                                      -- g:save picks the format from the name
      local svg, dot = base .. '.svg', base .. '.dot'
      assert.are.equal(svg, g:save(svg))
      assert.truthy(io.open(svg):read('a'):find('<svg', 1, true))
      g.bg:save(dot, 'backward')
      assert.truthy(io.open(dot):read('a'):find('label="backward"', 1, true))
      os.remove(svg)
      os.remove(dot)
    end
    assert.has_error(function() g:save(42) end, 'nn.gModule:save: expected a file name, got number')
  end)

  it('keeps Torch7\'s graphs: fg, bg, innode, outnode and each node\'s input and gradOutput', function()
    local x = nn.Identity()()
    local l = nn.Linear(3, 2)(x)
    local g = nn.gModule({x}, {nn.Tanh()(l)})
    assert.are.equal('graph.Graph', torch.typename(g.fg))
    assert.are.equal(5, #g.forwardnodes)           -- innode, Identity, Linear, Tanh, outnode
    assert.are.equal(g.innode.data, g.forwardnodes[1].data)
    assert.are.equal(g.outnode.data, g.backwardnodes[1].data)
    local input, grad = torch.randn(4, 3), torch.randn(4, 2)
    local out = g:forward(input)
    assert.are.equal(input, g.innode.data.input[1])
    assert.are.equal(out, g.outnode.data.input[1])
    g:backward(input, grad)
    assert.are.equal(grad, g.outnode.data.gradOutput[1])
    -- the Linear node saw the Identity's output and got the Tanh's gradInput
    local lin = g.forwardnodes[3]
    assert.are.equal('nn.Linear', torch.typename(lin.data.module))
    assert.is_true(close(lin.data.input[1], input))
    local t = torch.tanh(input:mm(lin.data.module.weight:t()) + lin.data.module.bias)
    assert.is_true(close(lin.data.gradOutput[1], grad * (1 - t * t)))
    assert.are.equal(3, #g.modules)                -- Torch7's container list, in forward order
    assert.are.equal('nn.Tanh', torch.typename(g.modules[3]))
  end)

  it('splits a table output, nests values, and turns criteria into modules', function()
    local x = nn.Identity()()
    local a, b = nn.SplitTable(1)(x):split(2)
    local g = nn.gModule({x}, {nngraph.nest({b, {a}})})
    local input = torch.tensor({{1, 2}, {3, 4}}, {dtype = 'float64'})
    local out = g:forward(input)
    assert.are.same({3, 4}, out[1]:totable())
    assert.are.same({1, 2}, out[2][1]:totable())
    assert.has_error(function() g:forward(torch.randn(3, 2)) end)          -- three rows for split(2)
    local p, t = nn.Identity()(), nn.Identity()()
    local loss = nn.MSECriterion()({p, t})
    local m = nn.gModule({p, t}, {loss})
    local pred, target = torch.tensor({1, 2}, {dtype = 'float64'}), torch.tensor({0, 0}, {dtype = 'float64'})
    assert.is_true(close(m:forward({pred, target}), torch.tensor({2.5}, {dtype = 'float64'})))   -- (1 + 4) / 2
    local gi = m:backward({pred, target}, torch.tensor({2}, {dtype = 'float64'}))
    assert.is_true(close(gi[1], pred * 2))                          -- 2 * (p - t) / 2 * 2
    assert.is_true(close(gi[2], torch.zeros(2, {dtype = 'float64'})))  -- the target is data
  end)

  it('is written to Torch7\'s files and to moontorch\'s, and computes the same once read back', function()
    local x = nn.Identity()()
    local a, b = nn.SplitTable(2)(nn.Reshape(2, 3)(nn.Linear(4, 6)(x))):split(2)
    local g = nn.gModule({x}, {nn.CAddTable()({a, b}), nn.Tanh()(a)})
    local input = torch.randn(5, 4)
    local want = g:forward(input)
    local grad = {torch.randn(5, 3), torch.randn(5, 3)}
    local want_gi = g:backward(input, grad):clone()
    for _, mode in ipairs({'binary', 'moontorch'}) do
      local path = os.tmpname()
      if mode == 'binary' then torch.save(path, g, 'binary') else torch.save(path, g) end
      local back = torch.load(path)
      os.remove(path)
      assert.are.equal('nn.gModule', torch.typename(back))
      assert.are.equal(#g.forwardnodes, #back.forwardnodes)
      local out = back:forward(input)
      assert.is_true(close(out[1], want[1], 1e-12) and close(out[2], want[2], 1e-12), mode)
      assert.is_true(close(back:backward(input, grad), want_gi, 1e-12), mode)
    end
  end)

  it('raises errors that name the problem and where the node was made', function()
    local function raises(pattern, fn)
      local ok, err = pcall(fn)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
    end
    local a, b = nn.Identity()(), nn.Identity()()
    local h = nn.Linear(2, 2)(a)
    raises('inputs[1] is nil (typo / bad index?)', function() return nn.Linear(2, 2)(nil) end)
    local misspelt
    raises('cannot pass an empty table of inputs', function() return nn.Linear(2, 2)({misspelt}) end)
    raises('outputs[2] is nil (typo / bad index?)', function() return nn.gModule({a}, {h, nil, h}) end)
    raises('nn.gModule: no outputs', function() return nn.gModule({a}, {}) end)
    raises('outputs[1] is an nn.Module, specifically a nn.Linear, but the only valid thing to pass is an instance '
           .. 'of nngraph.Node', function() return nn.gModule({a}, {nn.Linear(2, 2)}) end)
    raises('nn.gModule: inputs[2] (the node declared at [spec/nngraph_spec.lua]:',
           function() return nn.gModule({a, b}, {h}) end)
    raises('is not one of the gModule\'s inputs', function() return nn.gModule({b}, {nn.CAddTable()({a, b})}) end)
    local c = nn.Identity()()
    local first = nn.SplitTable(1)(c):split(2)
    raises('1 of split(2) outputs from the node declared at [spec/nngraph_spec.lua]:',
           function() return nn.gModule({c}, {first}) end)
    local u, v = nn.Identity()(), nn.Identity()()
    local g = nn.gModule({u, v}, {nn.CAddTable()({u, v})})
    raises('nn.gModule: got 1 inputs instead of 2', function() return g:forward({torch.randn(2)}) end)
    local dangling = nn.Sigmoid()(h)
    raises('does not connect to gmodule output', function() return nn.gModule({a}, {h}) end)
    assert.is_not_nil(dangling)
  end)
end)
