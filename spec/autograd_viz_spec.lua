-- Watching autograd: torch.autograd.graph (Graphviz) and backward traces.
local torch = require 'torch'

local function leaf(t) return torch.tensor(t, {dtype = 'float64', requires_grad = true}) end

describe('torch.autograd.graph', function()
  it('lists every node once, names leaves with their shapes and marks saved tensors', function()
    local x, w = leaf({1, 2, 3}), leaf({{1, 2, 3}, {4, 5, 6}})
    local y = w:mv(x):tanh():sum() + x:sum()     -- x is used twice: one AccumulateGrad
    local g = torch.autograd.graph(y, {names = {x = x, w = w}})
    local names = {}
    for _, n in ipairs(g.nodes) do names[#names + 1] = n.name end
    assert.are.same({'AddBackward', 'SumBackward', 'TanhBackward', 'MvBackward', 'AccumulateGrad',
                     'AccumulateGrad', 'SumBackward'}, names)
    local dot = g:dot()
    assert.truthy(dot:find('^digraph autograd {'))
    assert.truthy(dot:find('label="x\\n3", shape=ellipse', 1, true), dot)
    assert.truthy(dot:find('label="w\\n2x3", shape=ellipse', 1, true), dot)
    assert.truthy(dot:find('TanhBackward\\nsaved: 2', 1, true), dot)
    assert.truthy(dot:find('output\\nscalar', 1, true), dot)
    -- x feeds MvBackward and the second SumBackward: two arrows leave its node
    local xid
    for _, n in ipairs(g.nodes) do if n.leaf_name == 'x' then xid = n.id end end
    local _, arrows = dot:gsub('n' .. xid .. ' %->', '')
    assert.are.equal(2, arrows)
    assert.truthy(tostring(g):find('7 nodes', 1, true))
  end)

  it('shows when the saved tensors were freed by a backward', function()
    local x = leaf({1, 2})
    local y = (x * x):sum()
    y:backward()
    assert.truthy(torch.autograd.graph(y):dot():find('saved tensors freed', 1, true))
  end)

  it('renders through Graphviz dot, atomically', function()
    local x = leaf({1, 2})
    local g = torch.autograd.graph((x:exp() * x):sum())
    local path = os.tmpname() .. '.dot'
    g:save(path)
    local f = assert(io.open(path))
    assert.are.equal(g:dot(), f:read('a'))
    f:close()
    os.remove(path)
    if os.execute('command -v dot > /dev/null 2>&1') then
      local svg = os.tmpname() .. '.svg'
      g:save(svg)
      f = assert(io.open(svg))
      assert.truthy(f:read('a'):find('<svg', 1, true))
      f:close()
      os.remove(svg)
    else
      assert.has_error(function() g:save(os.tmpname() .. '.svg') end)
    end
  end)

  it('names the path asked for when it cannot write it', function()
    local g = torch.autograd.graph((leaf({1, 2}) * 2):sum())
    local paths = {'/nonexistent-dir/g.dot'}
    if os.execute('command -v dot > /dev/null 2>&1') then paths[2] = '/nonexistent-dir/g.svg' end
    for _, path in ipairs(paths) do
      local ok, err = pcall(g.save, g, path)
      assert.is_false(ok)
      assert.truthy(err:find('graph:save: cannot write ' .. path .. ': No such file or directory', 1, true), err)
      assert.falsy(err:find('.tmp.', 1, true), err)
      assert.falsy(err:find('autograd_viz.lua', 1, true), err)
    end
  end)

  it('refuses tensors without history', function()
    assert.has_error(function() torch.autograd.graph(leaf({1})) end)
    assert.has_error(function() torch.autograd.graph(42) end)
  end)
end)

describe('backward traces', function()
  it('print each node in the order the engine runs it, with gradients in and out', function()
    local x, w = leaf({1, 2, 3}), leaf({0.5, -1, 2})
    local lines = {}
    torch.autograd.trace(function() (x * w):sum():backward() end,
                         {print = function(l) lines[#lines + 1] = l end, names = {x = x, w = w}})
    assert.are.same({
      '[1] SumBackward  receives scalar  1',
      '      input 1 -> MulBackward  gets 3  {1, 1, 1}',
      '[2] MulBackward  receives 3  {1, 1, 1}',
      '      input 1 -> AccumulateGrad  gets 3  {0.5, -1, 2}',
      '      input 2 -> AccumulateGrad  gets 3  {1, 2, 3}',
      '[3] AccumulateGrad (w 3)  .grad += 3  {1, 2, 3}',
      '[4] AccumulateGrad (x 3)  .grad += 3  {0.5, -1, 2}',
    }, lines)
    assert.are.same({0.5, -1, 2}, x.grad:totable())
  end)

  it('summarize large gradients by shape, and stop tracing after the function', function()
    local x = torch.randn(4, 5, {requires_grad = true})
    local lines = {}
    torch.autograd.trace(function() (x * 2):sum():backward() end,
                         {print = function(l) lines[#lines + 1] = l end})
    assert.are.equal('      input 1 -> AccumulateGrad  gets 4x5', lines[4])
    local n = #lines
    ;(x * 2):sum():backward()
    assert.are.equal(n, #lines)
  end)

  it('y:backward{trace=true} prints to stdout', function()
    local th = os.getenv('TH')
    for template in package.cpath:gmatch('[^;]+') do      -- the th beside the torch/core.so in use
      local dir = template:match('^(.*)/%?%.so$')
      local f = not th and dir and io.open(dir .. '/th', 'rb')
      if f then f:close(); th = dir .. '/th' end
    end
    th = th or './build/th'
    local p = io.popen(th .. [[ -e "local x = torch.tensor({2.0}, {requires_grad=true}); (x*x):sum():backward{trace=true}"]])
    local out = p:read('a')
    p:close()
    assert.truthy(out:find('[2] MulBackward  receives 1  {1}', 1, true), out)
    assert.truthy(out:find('.grad += 1  {4}', 1, true), out)
  end)
end)
