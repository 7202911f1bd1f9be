-- The autograd teaching examples run with th and print what they teach:
-- examples/autograd_step_by_step.lua and examples/micrograd.lua must not rot.
-- Expected numbers were computed with PyTorch (x^3 at 3, micrograd's README
-- expression) or by hand (the traced gradients).

local run = dofile('spec/support/th.lua').run

-- asserts that out contains each of the given lines or fragments, verbatim
local function has(out, ...)
  for _, s in ipairs({...}) do
    assert.truthy(out:find(s, 1, true), 'missing: ' .. s .. '\n--- output ---\n' .. out)
  end
end

-- every number printed right after a fragment, e.g. numbers_after(out, 'loss ')
local function numbers_after(out, fragment)
  local found = {}
  local pattern = fragment:gsub('[%p]', '%%%0') .. '([-%d.e+]+)'
  for v in out:gmatch(pattern) do found[#found + 1] = tonumber(v) end
  return found
end

describe('examples/autograd_step_by_step.lua', function()
  local ok, out
  setup(function() ok, out = run('examples/autograd_step_by_step.lua') end)

  it('runs to the end and exits 0', function()
    assert.is_true(ok, out)
    has(out, '\ndone.\n')
    for i = 1, 12 do has(out, '== ' .. i .. '. ') end
  end)

  it('shows the tape: grad_fn, next_functions, leaves, and dy/dx = 8', function()
    has(out, 'x.requires_grad = true, x.is_leaf = true, x.grad_fn = nil',
        'y.is_leaf = false, y.grad_fn = <AddBackward>',
        'y.grad_fn.next_functions[1] = <AddBackward>',
        'y.grad_fn.next_functions[2] = nil',
        '      PowBackward\n        AccumulateGrad (a leaf, a scalar)\n      MulBackward\n',
        'after y:backward(): x.grad = 8 ',
        'a.grad = 12, (a^2).grad = 3 ')
  end)

  it('differentiates only the branch that ran, and x^3 twice: 27 then 18', function()
    has(out, 'took the x^2 branch, grad = 4', 'took the x^3 branch, grad = 12',
        'd(x^3)/dx at 3 = 27 ', 'd2(x^3)/dx2 at 3 = 18 ')
  end)

  it('accumulates into .grad and zeroes it both ways', function()
    has(out, 'after one backward:  w.grad = {1, 2, 3}',
        'after two backwards: w.grad = {2, 4, 6}',
        'after w.grad = nil:  w.grad = nil',
        'after a fresh one:   w.grad = {1, 2, 3}',
        'after w.grad:zero_(): w.grad = {0, 0, 0}')
  end)

  it('needs retain_graph for a second backward and prints the error without it', function()
    has(out, 'two backwards with retain_graph: r.grad = {4, 8}',
        'a third backward: ok = false',
        '  error: Trying to backward through the graph a second time')
  end)

  it('tells no_grad, detach and inference_mode apart', function()
    has(out, 'torch.no_grad:   (q * 2).requires_grad = false, grad_fn = nil',
        'grad mode afterwards: true',
        'tracked.grad_fn = <MulBackward>, detached.grad_fn = nil, same storage: true',
        'inference_mode:  (q * 2).requires_grad = false, is_inference_mode_enabled() = true')
  end)

  it('runs MyReLU, and gradcheck passes it and catches a wrong backward', function()
    has(out, 'MyReLU.apply(x).grad_fn = <MyReLUBackward>',
        'x = {-2, -0.5, 0.5, 3}  ->  x.grad = {0, 0, 1, 1}',
        'gradcheck(MyReLU.apply) = true',
        'gradcheck(BadReLU.apply) = false',
        'gradcheck: Jacobian mismatch for input 1, output 1, element 1: analytical 1, numerical 0')
  end)

  it('checks the gradient of a gradient norm against the closed form', function()
    local d = numbers_after(out, 'vs 4 X^T X g by hand: max abs difference ')
    assert.are.equal(1, #d, out)
    assert.is_true(d[1] < 1e-9, out)
    has(out, 'gradgradcheck of a tanh model: true')
  end)

  it('traces the backward pass node by node', function()
    has(out, table.concat({
      '[1] PowBackward  receives scalar  1',
      '      input 1 -> SubBackward  gets scalar  5',
      '      input 2 -> (no gradient needed)',
      '[2] SubBackward  receives scalar  5',
      '      input 1 -> SumBackward  gets scalar  5',
      '      input 2 -> (no gradient needed)',
      '[3] SumBackward  receives scalar  5',
      '      input 1 -> MulBackward  gets 3  {5, 5, 5}',
      '[4] MulBackward  receives 3  {5, 5, 5}',
      '      input 1 -> AccumulateGrad  gets 3  {5, 10, 15}',
      '      input 2 -> AccumulateGrad  gets 3  {2.5, -5, 10}',
      '[5] AccumulateGrad (x 3)  .grad += 3  {2.5, -5, 10}',
      '[6] AccumulateGrad (w 3)  .grad += 3  {5, 10, 15}',
      'w.grad = {5, 10, 15}, x.grad = {2.5, -5, 10}'}, '\n'))
    has(out, 'backward from <SumBackward>, nodes in the order they run:',
        '[3] AccumulateGrad (leaf 1)  .grad += 1  {4}')
  end)

  it('prints the graph of the two-layer pipeline, and as Graphviz text', function()
    has(out, 'autograd graph: 8 nodes, output scalar',
        '  #4 MmBackward  saved: 4x5, 5x1  <- #5 #8',
        'digraph autograd {',
        'n7 [label="W1\\n3x5", shape=ellipse',
        'n8 [label="W2\\n5x1", shape=ellipse',
        '  n1 -> out;\n}')
  end)

  it('backpropagates a 2-layer MLP by hand, matching autograd, and trains with it', function()
    local per_param = numbers_after(out, '  max abs difference ')
    assert.are.equal(4, #per_param, out)
    local total = numbers_after(out, 'manual backprop vs autograd: max abs difference ')
    assert.are.equal(1, #total, out)
    for _, d in ipairs(per_param) do assert.is_true(d < 1e-12, out) end
    assert.is_true(total[1] < 1e-12, out)
    local first = numbers_after(out, '  step   1  loss ')[1]
    local last = numbers_after(out, '  step 200  loss ')[1]
    assert.is_true(first and last and last < first / 10, out)
  end)
end)

describe('examples/micrograd.lua', function()
  local ok, out
  setup(function() ok, out = run('examples/micrograd.lua') end)

  it('runs to the end and exits 0', function()
    assert.is_true(ok, out)
    has(out, 'micrograd agrees with moontorch: true')
  end)

  it('differentiates a small expression by hand-written chain rules', function()
    has(out, 'out = Value(data=-5.0360, grad=1.0000)   (made by + from * and tanh)',
        'u   = Value(data=2.0000, grad=-2.9293)',
        'v   = Value(data=-3.0000, grad=2.0000)')
  end)

  it("gets micrograd's README numbers, as PyTorch and moontorch do", function()
    -- PyTorch: g = 24.70408163265306, a.grad = 138.83381924198252, b.grad = 645.5772594752186
    has(out, 'micrograd: g = 24.7041   dg/da = 138.8338   dg/db = 645.5773',
        'moontorch: g = 24.7041   dg/da = 138.8338   dg/db = 645.5773')
  end)

  it('matches moontorch gradients to 1e-9 and trains the MLP', function()
    local diffs = numbers_after(out, 'max abs difference ')
    assert.are.equal(4, #diffs, out)
    for _, d in ipairs(diffs) do assert.is_true(d < 1e-9, out) end
    has(out, '41 parameters, each a Value')
    local first = numbers_after(out, 'step  1  loss ')[1]
    local last = numbers_after(out, 'step 50  loss ')[1]
    assert.is_true(first and last and last < 0.1 and last < first / 10, out)
    local preds = {}
    for p in out:match('predictions: ([^\n]*)'):gmatch('[-%d.]+') do preds[#preds + 1] = tonumber(p) end
    -- the four predictions, then the targets 1 -1 -1 1: each prediction has its target's sign
    assert.are.equal(8, #preds, out)
    for i = 1, 4 do assert.is_true(preds[i] * preds[i + 4] > 0.5, out) end
  end)
end)
