-- examples/autograd_step_by_step.lua: autograd, one idea at a time. Run it and
-- read it side by side: each numbered section prints what its code shows.
-- Run: th examples/autograd_step_by_step.lua
--
-- It walks through how autograd works, inside out: the tape (requires_grad,
-- grad_fn), higher-order gradients, accumulation into .grad, retain_graph, no_grad vs detach, a custom Function
-- checked with gradcheck, double backward, the backward pass as a live trace
-- and as a Graphviz graph, and a 2-layer MLP backpropagated by hand.
torch.manual_seed(0)

local function section(title) print('\n== ' .. title .. ' ==') end

-- fmt(t): a small tensor's values on one line: 8, or {1, 2.5, -3}
local function fmt(t)
  if t == nil then return 'nil' end
  if t:dim() == 0 then return string.format('%.6g', t:item()) end
  local parts = {}
  for i, v in ipairs(t:detach():reshape(-1):totable()) do parts[i] = string.format('%.6g', v) end
  return '{' .. table.concat(parts, ', ') .. '}'
end

-- the largest |a - b| over all elements, as a number
local function max_diff(a, b) return (a - b):abs():max():item() end

-- an error message without the "file:line:" in front
local function message(err) return (tostring(err):gsub('^[^:]*:%d+: ', '')) end

---------------------------------------------------------------------------
section('1. The tape: requires_grad turns the camera on')
-- Every op on a tensor that requires grad is recorded as a node of a graph;
-- the result's grad_fn is the node that made it.
local x = torch.tensor(3.0, {requires_grad = true})
local y = x ^ 2 + 2 * x + 1                  -- y = x^2 + 2x + 1
print('x.requires_grad = ' .. tostring(x.requires_grad) .. ', x.is_leaf = ' .. tostring(x.is_leaf)
      .. ', x.grad_fn = ' .. tostring(x.grad_fn))
print('y.is_leaf = ' .. tostring(y.is_leaf) .. ', y.grad_fn = ' .. tostring(y.grad_fn))
-- next_functions: the nodes that made each input of this node ({node, 0});
-- nil for an input that needs no gradient (the constant 1 here).
for i, nf in ipairs(y.grad_fn.next_functions) do
  print(string.format('  y.grad_fn.next_functions[%d] = %s', i, tostring(nf[1])))
end

-- trace_grad_fn: walk the graph from the output to the leaves.
local function walk(node, depth)
  local line = string.rep('  ', depth) .. node:name()
  if node.is_accumulator then
    local shape = node.variable_shape
    line = line .. ' (a leaf, ' .. (#shape == 0 and 'a scalar' or 'shape ' .. tostring(shape)) .. ')'
  end
  print(line)
  for _, nf in ipairs(node.next_functions) do
    if nf[1] then walk(nf[1], depth + 1) end
  end
end
print('the tape behind y, from the output back to x:')
walk(y.grad_fn, 1)

y:backward()                                 -- rewind the tape: dy/dx = 2x + 2
print('after y:backward(): x.grad = ' .. fmt(x.grad) .. '   (2x + 2 at x = 3)')

-- Only leaves keep .grad; an intermediate keeps it when asked (retain_grad).
local a = torch.tensor(2.0, {requires_grad = true})
local sq = a ^ 2
sq:retain_grad()
local z = sq * 3
z:backward()
print('z = 3 a^2 at a = 2: a.grad = ' .. fmt(a.grad) .. ', (a^2).grad = ' .. fmt(sq.grad)
      .. ' (kept by retain_grad)')

---------------------------------------------------------------------------
section('2. Define-by-run: the graph is whatever actually ran')
local function weird_function(v)
  if v:item() > 0 then return v ^ 2 else return v ^ 3 end
end
local p = torch.tensor(2.0, {requires_grad = true})
weird_function(p):backward()
print('weird_function(2): took the x^2 branch, grad = ' .. fmt(p.grad))
local n = torch.tensor(-2.0, {requires_grad = true})
weird_function(n):backward()
print('weird_function(-2): took the x^3 branch, grad = ' .. fmt(n.grad))

---------------------------------------------------------------------------
section('3. Higher-order gradients: create_graph')
-- With create_graph=true the backward pass is itself recorded, so its
-- result can be differentiated again.
local x3 = torch.tensor(3.0, {requires_grad = true})
local cube = x3 ^ 3
local grad_1 = torch.autograd.grad(cube, x3, {create_graph = true})[1]
local grad_2 = torch.autograd.grad(grad_1, x3)[1]
print('d(x^3)/dx at 3 = ' .. fmt(grad_1) .. '   (3x^2, grad_fn ' .. tostring(grad_1.grad_fn) .. ')')
print('d2(x^3)/dx2 at 3 = ' .. fmt(grad_2) .. '   (6x)')

---------------------------------------------------------------------------
section('4. Gradients accumulate: zero them between steps')
local w = torch.ones(3, {requires_grad = true})
local coeff = torch.tensor({1.0, 2.0, 3.0})
;(w * coeff):sum():backward()
print('after one backward:  w.grad = ' .. fmt(w.grad))
;(w * coeff):sum():backward()
print('after two backwards: w.grad = ' .. fmt(w.grad) .. '   (added, not replaced)')
w.grad = nil                                 -- what optimizer:zero_grad() does by default
print('after w.grad = nil:  w.grad = ' .. fmt(w.grad))
;(w * coeff):sum():backward()
print('after a fresh one:   w.grad = ' .. fmt(w.grad))
w.grad:zero_()                               -- the other way: keep the tensor, fill it with 0
print('after w.grad:zero_(): w.grad = ' .. fmt(w.grad))

---------------------------------------------------------------------------
section('5. The tape is eaten by backward: retain_graph')
local r = torch.tensor({1.0, 2.0}, {requires_grad = true})
local loss = (r * r):sum()
loss:backward({retain_graph = true})         -- keep the saved tensors for another pass
loss:backward()                              -- second pass: allowed, and it frees them
print('two backwards with retain_graph: r.grad = ' .. fmt(r.grad) .. '   (2 * 2r)')
local ok, err = pcall(function() loss:backward() end)
print('a third backward: ok = ' .. tostring(ok))
print('  error: ' .. message(err))

---------------------------------------------------------------------------
section('6. no_grad vs detach vs inference_mode')
local q = torch.tensor({1.0, -1.0}, {requires_grad = true})
-- no_grad: nothing inside the function is recorded (evaluation, optimizer updates)
local inside = torch.no_grad(function() return q * 2 end)
print('torch.no_grad:   (q * 2).requires_grad = ' .. tostring(inside.requires_grad)
      .. ', grad_fn = ' .. tostring(inside.grad_fn))
print('                 grad mode afterwards: ' .. tostring(torch.is_grad_enabled()))
-- detach: this one tensor, cut from the graph, on the same storage (for logging)
local tracked = q * 2
local cut = tracked:detach()
print('detach:          tracked.grad_fn = ' .. tostring(tracked.grad_fn) .. ', detached.grad_fn = '
      .. tostring(cut.grad_fn) .. ', same storage: ' .. tostring(cut:storage() == tracked:storage()))
-- inference_mode: no_grad for serving, and code can ask whether it runs in it
local inf, in_mode = torch.inference_mode(function()
  return q * 2, torch.is_inference_mode_enabled()
end)
print('inference_mode:  (q * 2).requires_grad = ' .. tostring(inf.requires_grad)
      .. ', is_inference_mode_enabled() = ' .. tostring(in_mode))
-- .data is detach() without the version check: avoid it
print('q.data.requires_grad = ' .. tostring(q.data.requires_grad))

---------------------------------------------------------------------------
section('7. A custom Function: a custom ReLU (MyReLU)')
local MyReLU = torch.autograd.Function:extend('MyReLU')
function MyReLU.forward(ctx, input)
  ctx:save_for_backward(input)               -- save what backward will need
  return input:clamp(0)
end
function MyReLU.backward(ctx, grad_output)
  local input = table.unpack(ctx.saved_tensors)
  local grad_input = grad_output:clone()
  grad_input[input:lt(0)] = 0
  return grad_input
end
local xr = torch.tensor({-2.0, -0.5, 0.5, 3.0}, {requires_grad = true})
local yr = MyReLU.apply(xr)
print('MyReLU.apply(x).grad_fn = ' .. tostring(yr.grad_fn))
yr:sum():backward()
print('x = ' .. fmt(xr:detach()) .. '  ->  x.grad = ' .. fmt(xr.grad))

---------------------------------------------------------------------------
section('8. gradcheck: compare backward with finite differences')
-- In float64, the analytical Jacobian must match central differences.
local xc = torch.tensor({-1.3, 0.7, 2.1, -0.4}, {dtype = 'float64', requires_grad = true})
print('gradcheck(MyReLU.apply) = ' .. tostring(torch.autograd.gradcheck(MyReLU.apply, {xc})))
-- A deliberately wrong backward (it forgets the mask) is caught:
local BadReLU = torch.autograd.Function:extend('BadReLU')
function BadReLU.forward(ctx, input) return input:clamp(0) end
function BadReLU.backward(ctx, grad_output) return grad_output end
local good, why = torch.autograd.gradcheck(BadReLU.apply, {xc}, {raise_exception = false})
print('gradcheck(BadReLU.apply) = ' .. tostring(good))
print('  ' .. why)

---------------------------------------------------------------------------
section('9. Double backward: the gradient of a gradient norm')
-- L(w) = |Xw - t|^2, g = dL/dw = 2 X^T (Xw - t); the gradient of the gradient
-- norm, d|g|^2/dw (a gradient penalty's term), is 4 X^T X g for this model.
local X = torch.randn(4, 3, {dtype = 'float64'})
local target = torch.randn(4, {dtype = 'float64'})
local wd = torch.randn(3, {dtype = 'float64', requires_grad = true})
local L = ((X:mv(wd) - target) ^ 2):sum()
local g = torch.autograd.grad(L, wd, {create_graph = true})[1]
local gnorm = (g * g):sum()
gnorm:backward()
local by_hand = X:t():mm(X):mv(g:detach()) * 4
print('|grad L|^2 = ' .. string.format('%.6f', gnorm:item()))
print('d|grad L|^2/dw from autograd vs 4 X^T X g by hand: max abs difference '
      .. string.format('%.3g', max_diff(wd.grad, by_hand)))
local function model_loss(v) return ((X:mv(v):tanh() - target) ^ 2):sum() end
print('gradgradcheck of a tanh model: ' .. tostring(torch.autograd.gradgradcheck(model_loss,
      {torch.randn(3, {dtype = 'float64', requires_grad = true})})))

---------------------------------------------------------------------------
section('10. The backward pass, live: torch.autograd.trace')
-- Each node as the engine runs it: the gradient it receives and what it
-- passes to each input.
local wt = torch.tensor({0.5, -1.0, 2.0}, {requires_grad = true})
local xt = torch.tensor({1.0, 2.0, 3.0}, {requires_grad = true})
print('loss = (w . x - 2)^2 with w = {0.5, -1, 2}, x = {1, 2, 3}:')
torch.autograd.trace(function()
  local l = ((wt * xt):sum() - 2) ^ 2
  l:backward()
end, {names = {w = wt, x = xt}})
print('w.grad = ' .. fmt(wt.grad) .. ', x.grad = ' .. fmt(xt.grad))
-- y:backward{trace=true} traces one call. In s * s both inputs lead to s's one
-- AccumulateGrad node: the engine adds the two gradients, then runs it once.
local s = torch.tensor({2.0}, {requires_grad = true})
;(s * s):sum():backward{trace = true}

---------------------------------------------------------------------------
section('11. The graph as Graphviz text: torch.autograd.graph')
-- A two-layer pipeline: x --mm W1--> h --relu--> a --mm W2--> y --mse--> loss
local xg = torch.randn(4, 3)
local W1 = torch.randn(3, 5, {requires_grad = true})
local W2 = torch.randn(5, 1, {requires_grad = true})
local tg = torch.randn(4, 1)
local lg = ((xg:mm(W1):relu():mm(W2) - tg) ^ 2):mean()
local graph = torch.autograd.graph(lg, {names = {W1 = W1, W2 = W2}})
print(graph)
print('Graphviz (render with graph:save(\'graph.svg\') or `dot -Tsvg`):')
io.write(graph:dot())

---------------------------------------------------------------------------
section('12. Backprop by hand: a 2-layer MLP, checked against autograd')
-- forward:  H = X W1 + b1,  A = tanh(H),  Y = A W2 + b2,  loss = sum((Y - T)^2) / N
-- backward, by the chain rule, from the loss back to every parameter.
local N, D, Hd = 8, 3, 5
local Xm = torch.randn(N, D, {dtype = 'float64'})
local Tm = (Xm:select(2, 1) - Xm:select(2, 2) * Xm:select(2, 3)):view(N, 1)
local params = {
  W1 = torch.randn(D, Hd, {dtype = 'float64'}) * 0.5, b1 = torch.zeros(Hd, {dtype = 'float64'}),
  W2 = torch.randn(Hd, 1, {dtype = 'float64'}) * 0.5, b2 = torch.zeros(1, {dtype = 'float64'}),
}
local names = {'W1', 'b1', 'W2', 'b2'}

local function forward(P)
  local A = (Xm:mm(P.W1) + P.b1):tanh()
  local Y = A:mm(P.W2) + P.b2
  return ((Y - Tm) ^ 2):sum() / N, A, Y
end

-- manual_backward(P): the loss and its gradients, without autograd
local function manual_backward(P)
  local lossv, A, Y = forward(P)
  local dY = (Y - Tm) * (2 / N)              -- d loss / dY          N x 1
  local dW2 = A:t():mm(dY)                   -- Y = A W2 + b2        Hd x 1
  local db2 = dY:sum(1)                      --                      1
  local dA = dY:mm(P.W2:t())                 --                      N x Hd
  local dH = dA * (1 - A * A)                -- tanh' = 1 - tanh^2   N x Hd
  local dW1 = Xm:t():mm(dH)                  -- H = X W1 + b1        D x Hd
  local db1 = dH:sum(1)                      --                      Hd
  return lossv, {W1 = dW1, b1 = db1, W2 = dW2, b2 = db2}
end

local _, manual = manual_backward(params)
local leaves = {}
for _, k in ipairs(names) do leaves[k] = params[k]:clone():requires_grad_() end
forward(leaves):backward()
local worst = 0
for _, k in ipairs(names) do
  local d = max_diff(manual[k], leaves[k].grad)
  worst = math.max(worst, d)
  print(string.format('  d loss/d %-2s  %-6s  max abs difference %.3g', k, table.concat(manual[k]:size():totable(), 'x'), d))
end
print(string.format('manual backprop vs autograd: max abs difference %.3g', worst))

-- and train with the hand-written gradients only: no backward() at all
for step = 1, 200 do
  local lossv, grads = manual_backward(params)
  for _, k in ipairs(names) do params[k] = params[k] - grads[k] * 0.1 end
  if step == 1 or step % 50 == 0 then print(string.format('  step %3d  loss %.5f', step, lossv:item())) end
end
print('\ndone.')
