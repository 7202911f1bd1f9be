-- optim_torch7_spec.lua: Torch7's optim functions (optim.sgd ... optim.de),
-- optim.ConfusionMatrix and optim.Logger. First steps are checked against
-- values worked out by hand from Torch7's update rules (written below as
-- the arithmetic they come from); iterative methods against the minimum of
-- a quadratic or of Rosenbrock's function, as torch/optim's tests use.
local torch = require 'torch'
local optim = require 'optim'
local raises = dofile('spec/support/raises.lua')
local files = dofile('spec/support/files.lua')

local F64 = {dtype = 'float64'}

-- f(x) = 0.5 |x|^2, gradient x: the gradient at each step is the point
local function half_square(x) return 0.5 * x:dot(x):item(), x:clone() end

-- Rosenbrock's function in 2-D, minimum 0 at (1, 1)
local function rosenbrock(x)
  local a, b = x[1], x[2]
  local f = (1 - a) ^ 2 + 100 * (b - a * a) ^ 2
  return f, torch.tensor({-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)}, F64)
end

local function close(got, want, tol, what)
  assert.is_true(math.abs(got - want) <= tol, string.format('%s: got %.17g, want %.17g', what, got, want))
end

local function close_all(x, want, tol, what)
  for i = 1, #want do close(x[i], want[i], tol, what .. '[' .. i .. ']') end
end

local function start() return torch.tensor({1.0, -2.0}, F64) end

describe("Torch7's first-order functions, first steps by hand", function()
  it('optim.sgd: momentum with dampening = momentum (the first step takes the bare gradient)', function()
    local x, config = start(), {learningRate = 0.1, momentum = 0.9}
    local _, fx = optim.sgd(half_square, x, config)
    close(fx[1], 2.5, 1e-12, 'f before the step')
    close_all(x, {0.9, -1.8}, 1e-12, 'step 1')               -- buf = g = x0
    optim.sgd(half_square, x, config)                        -- buf = 0.9 buf + 0.1 g
    close_all(x, {0.9 - 0.1 * (0.9 + 0.1 * 0.9), -1.8 + 0.1 * (1.8 + 0.1 * 1.8)}, 1e-12, 'step 2')
    assert.are.equal(2, config.evalCounter)
  end)

  it('optim.adam: epsilon is added to sqrt(v) before the bias correction', function()
    local x, config = start(), {learningRate = 0.1, epsilon = 0.01}
    optim.adam(half_square, x, config)
    -- m = 0.1 g, v = 0.001 g^2, x -= 0.1 sqrt(0.001) / 0.1 * m / (sqrt(v) + eps)
    for i, g in ipairs({1.0, -2.0}) do
      local want = g - 0.1 * math.sqrt(1 - 0.999) / (1 - 0.9) * (0.1 * g) / (math.sqrt(0.001 * g * g) + 0.01)
      close(x[i], want, 1e-12, 'adam step 1')
    end
    assert.are.equal(1, config.t)
    assert.is_true(torch.is_tensor(config.m) and torch.is_tensor(config.v))
  end)

  it('optim.adamax: u = max(beta2 u, |g| + epsilon), x -= lr / (1 - beta1^t) m / u', function()
    local x = start()
    optim.adamax(half_square, x, {})
    close_all(x, {1 - 0.002, -2 + 0.002}, 1e-12, 'adamax step 1')
  end)

  it('optim.adagrad: x -= lr g / (sqrt(sum g^2) + 1e-10), with learningRateDecay', function()
    local x, config = start(), {learningRate = 0.1, learningRateDecay = 1}
    optim.adagrad(half_square, x, config)
    close_all(x, {0.9, -1.9}, 1e-9, 'adagrad step 1')
    optim.adagrad(half_square, x, config)                    -- clr = 0.1 / 2
    close(x[1], 0.9 - 0.05 * 0.9 / math.sqrt(1 + 0.81), 1e-9, 'adagrad step 2')
    assert.are.equal(2, config.evalCounter)
  end)

  it('optim.adadelta: delta = sqrt(accDelta + eps) / sqrt(paramVariance + eps) g', function()
    local x, config = start(), {}
    optim.adadelta(half_square, x, config)
    for i, g in ipairs({1.0, -2.0}) do
      close(x[i], g - math.sqrt(1e-6) / math.sqrt(0.1 * g * g + 1e-6) * g, 1e-12, 'adadelta step 1')
    end
    assert.are.equal(1, config.evalCounter)
  end)

  it('optim.rmsprop: m = alpha m + (1 - alpha) g^2 from initialMean, x -= lr g / (sqrt(m) + eps)', function()
    local x = start()
    optim.rmsprop(half_square, x, {learningRate = 0.01})
    close_all(x, {1 - 0.01 / (0.1 + 1e-8), -2 + 0.01 * 2 / (0.2 + 1e-8)}, 1e-12, 'rmsprop step 1')
    x = start()
    optim.rmsprop(half_square, x, {learningRate = 0.01, initialMean = 1})
    close(x[1], 1 - 0.01 / (math.sqrt(0.99 + 0.01) + 1e-8), 1e-12, 'rmsprop initialMean')
  end)

  it('optim.rprop: steps grow by etaplus while the sign holds; a flip shrinks them and skips the move', function()
    local x, config = start(), {stepsize = 0.1}
    optim.rprop(half_square, x, config)
    close_all(x, {0.9, -1.9}, 1e-12, 'rprop step 1')
    optim.rprop(half_square, x, config)                      -- same signs: steps 0.1 * 1.2
    close_all(x, {0.78, -1.78}, 1e-12, 'rprop step 2')
    local y, state = torch.tensor({0.05}, F64), {}
    local _, losses = optim.rprop(half_square, y, {stepsize = 0.1, niter = 3}, state)
    -- -0.05 (step 0.1), flip: step 0.05 and no move, then a step of 0.05 to 0
    assert.are.equal(3, #losses)
    close(y[1], 0, 1e-12, 'rprop after a flip')
    close(state.stepsize[1], 0.05, 1e-12, 'rprop step size after a flip')
  end)

  it('optim.asgd: decayed steps, averaging and the eta_t schedule', function()
    local x, config = start(), {eta0 = 0.1, lambda = 1e-2, t0 = 1}
    local _, _, ax = optim.asgd(half_square, x, config)
    close_all(x, {1 - 0.1 * 1e-2 - 0.1, -2 * (1 - 0.1 * 1e-2 - 0.1)}, 1e-12, 'asgd step 1')
    close_all(ax, {x[1], x[2]}, 0, 'ax = x while mu_t = 1')
    close(config.eta_t, 0.1 / (1 + 1e-2 * 0.1) ^ 0.75, 1e-15, 'eta_t')
    for _ = 1, 3 do optim.asgd(half_square, x, config) end
    assert.are.equal(4, config.t)
    close(config.mu_t, 1 / 3, 1e-15, 'mu_t = 1 / (t - t0)')
  end)

  it('optim.nag: Torch7 signature, momentum must be positive', function()
    local x = start()
    optim.nag(half_square, x, {learningRate = 0.1})
    close_all(x, {0.9, -1.8}, 1e-12, 'nag step 1')
    raises('optim.nag: momentum must be positive', optim.nag, half_square, x, {momentum = 0})
  end)
end)

describe("Torch7's iterative functions", function()
  it('optim.lbfgs without a line search: the first step is min(1, 1 / sum|g|) * learningRate', function()
    local x = start()
    local _, f_hist, evals = optim.lbfgs(half_square, x, {maxIter = 1})
    close_all(x, {1 - 1 / 3, -2 + 2 / 3}, 1e-12, 'lbfgs step 1')
    assert.are.same({2.5}, f_hist)
    assert.are.equal(1, evals)
  end)

  it('optim.lbfgs converges on Rosenbrock, with and without optim.lswolfe', function()
    local x, state = torch.zeros(2, F64), {}
    for _ = 1, 10 do optim.lbfgs(rosenbrock, x, {maxIter = 100, learningRate = 0.1}, state) end
    close_all(x, {1, 1}, 1e-3, 'lbfgs fixed steps')
    assert.is_true(state.funcEval > 100 and state.nIter > 100)
    x = torch.zeros(2, F64)
    local _, f_hist = optim.lbfgs(rosenbrock, x, {maxIter = 100, lineSearch = optim.lswolfe})
    close_all(x, {1, 1}, 1e-6, 'lbfgs with lswolfe')
    assert.is_true(f_hist[#f_hist] < 1e-10 and f_hist[1] == 1)
    raises('optim.lbfgs: lineSearch must be', optim.lbfgs, rosenbrock, x, {lineSearch = 'armijo'})
  end)

  it('optim.cg converges on Rosenbrock and reports its evaluations', function()
    local x = torch.zeros(2, F64)
    local _, fx, evals = optim.cg(rosenbrock, x, {maxIter = 20, maxEval = 400})
    close_all(x, {1, 1}, 1e-6, 'cg')
    assert.are.equal(1, fx[1])
    assert.is_true(fx[#fx] < 1e-12 and evals <= 400)
  end)

  it('optim.lswolfe: accepts a step meeting the Wolfe conditions, zooms back from a long one', function()
    local x = start()
    local f, g = half_square(x)
    local d = -g
    local gtd = g:dot(d):item()
    local f_new, _, x_new, t, evals = optim.lswolfe(half_square, x, 1, d, f, g, gtd)
    assert.are.equal(x, x_new)
    assert.are.same({1, 1, 0}, {t, evals, f_new})
    x = start()
    f_new, _, _, t, evals = optim.lswolfe(half_square, x, 3, d, f, g, gtd)
    close(t, 1, 1e-9, 'zoomed step')             -- the cubic through t = 0 and 3 is the parabola itself
    close(f_new, 0, 1e-12, 'loss at the zoomed step')
    assert.are.equal(2, evals)
  end)

  it('optim.polyinterp: the minimum of the cubic through two points, bounded or not', function()
    -- (t - 1)^2: f(0) = 1, f'(0) = -2; f(3) = 4, f'(3) = 4
    local points = torch.tensor({{0, 1, -2}, {3, 4, 4}}, F64)
    close(optim.polyinterp(points), 1, 1e-12, 'closed form')
    local t, fmin = optim.polyinterp(points, 0, 3)
    close(t, 1, 1e-9, 'general form')
    close(fmin, 0, 1e-9, 'value at the minimum')
    close(optim.polyinterp(points, 2, 3), 2, 1e-9, 'clamped to the bounds')
    raises('optim.polyinterp: points must be n x 3', optim.polyinterp, torch.zeros(2, 2))
  end)

  it('optim.FistaLS (optim.fista): min 0.5 (x - 3)^2 + |x| is x = 2', function()
    local function f(x, mode)
      local r = x - 3
      local value = 0.5 * r:dot(r):item()
      if mode == 'dx' then return value, r end
      return value
    end
    local function g(x) return x:abs():sum():item() end
    local function pl(x, L)       -- soft-thresholding by 1 / L
      x:copy_(x:sign() * (x:abs() - 1 / L):clamp(0, math.huge))
    end
    local x = torch.zeros(1, F64)
    local params = {L = 0.5, maxiter = 200, errthres = 1e-12, doFistaUpdate = true}
    local solution, history = optim.FistaLS(f, g, pl, x, params)
    close(solution[1], 2, 1e-5, 'fista')
    close(x[1], solution[1], 0, 'xinit receives the solution')
    close(history[#history].F, 0.5 + 2, 1e-8, 'final F')
    assert.is_true(params.L >= 1)                  -- L grew until the line search held
    assert.are.equal(optim.FistaLS, optim.fista)
  end)

  it('optim.cmaes minimizes a sphere without gradients', function()
    torch.manual_seed(7)
    local function sphere(x) return (x * x):sum():item() end
    local x = torch.ones(3, F64)
    local best, f_hist, evals = optim.cmaes(sphere, x, {sigma = 0.5, maxEval = 4000})
    assert.are.equal(3, f_hist[1])
    assert.is_true(f_hist[#f_hist] < 1e-10, 'best f ' .. f_hist[#f_hist])
    assert.is_true(best:abs():max():item() < 1e-5)
    assert.is_true(evals <= 4000 + 7)
    raises('optim.cmaes: config.sigma', optim.cmaes, sphere, x, {})
  end)

  it('optim.de minimizes a sphere, the same way every run', function()
    local function sphere(x) return (x * x):sum():item() end
    local config = {popsize = 20, scaleFactor = 0.5, crossoverRate = 0.9, maxFEs = 1000, minRegion = -2, maxRegion = 2}
    local best, fx = optim.de(sphere, torch.zeros(2, F64), config)
    assert.are.equal(1000, fx:numel())
    assert.is_true(sphere(best) < 1e-20)
    local again = optim.de(sphere, torch.zeros(2, F64), config)
    assert.are.same(best:_flat_values(), again:_flat_values())
    raises('optim.de: config.maxFEs', optim.de, sphere, torch.zeros(2, F64), {scaleFactor = 0.5, crossoverRate = 0.9})
  end)

  it('optim.checkgrad: small for a right gradient, large for a wrong one', function()
    local x = torch.tensor({0.3, 0.7}, F64)
    local diff, dC, dC_est = optim.checkgrad(rosenbrock, x)
    assert.is_true(diff < 1e-7)
    close(dC[2], 200 * (0.7 - 0.09), 1e-9, 'exact gradient')
    close(dC_est[2], dC[2], 1e-5, 'estimate')
    close_all(x, {0.3, 0.7}, 0, 'x put back')
    local wrong = optim.checkgrad(function(v) return rosenbrock(v), torch.ones(2, F64) end, x)
    assert.is_true(wrong > 0.5)
  end)
end)

describe('optim.ConfusionMatrix', function()
  local function filled()
    local cm = optim.ConfusionMatrix({'cat', 'dog', 'bird'})
    cm:add(1, 1)
    cm:add(2, 1)
    cm:add(torch.tensor({0.1, 0.9, 0.0}), 2)           -- scores: the argmax counts
    cm:add(3, 3)
    cm:add(1, 3)
    cm:add(2, 0)                                       -- target 0: skipped
    cm:batchAdd(torch.tensor({{1.0, 0, 0}, {0, 0, 1}}), torch.tensor({1, 3}))
    return cm
  end

  it('counts (target, prediction) pairs and computes the accuracies', function()
    local cm = filled()
    assert.are.same({2, 1, 0, 0, 1, 0, 1, 0, 2}, cm.mat:reshape(-1):_flat_values())
    cm:updateValids()
    close(cm.valids[1], 2 / 3, 1e-7, 'cat')
    close(cm.valids[2], 1, 0, 'dog')
    close(cm.unionvalids[1], 2 / (3 + 3 - 2), 1e-7, 'cat union')
    close(cm.totalValid, 5 / 7, 1e-15, 'global')
    close(cm.averageValid, (2 / 3 + 1 + 2 / 3) / 3, 1e-7, 'average')
    cm:zero()
    assert.are.equal(0, cm.mat:sum():item())
    assert.are.equal(0, cm.totalValid)
  end)

  it("prints Torch7's table", function()
    local want = table.concat({
      'ConfusionMatrix:\n',
      '[[       2       1       0]   66.667% \t[class: cat]\n',
      ' [       0       1       0]   100.000% \t[class: dog]\n',
      ' [       1       0       2]]  66.667% \t[class: bird]\n',
      ' + average row correct: 77.777779102325% \n',         -- the float32 valids, as Torch7 keeps them
      ' + average rowUcol correct (VOC measure): 55.555556217829% \n',
      ' + global correct: 71.428571428571%'})
    assert.are.equal(want, tostring(filled()))
    local two = optim.ConfusionMatrix(2)
    two:add(1, 1)
    two:add(2, 2)
    assert.are.equal('ConfusionMatrix:\n[[       1       0]   100.000% \n [       0       1]]  100.000% \n'
                     .. ' + average row correct: 100% \n + average rowUcol correct (VOC measure): 100% \n'
                     .. ' + global correct: 100%', tostring(two))
  end)

  it('farFrr: per-class false rejection and acceptance rates', function()
    local cm = optim.ConfusionMatrix(3)
    cm:add(1, 1); cm:add(2, 1); cm:add(2, 2); cm:add(1, 2); cm:add(1, 2)   -- class 3 has no samples
    local class_frrs, class_fars, frrs, fars = cm:farFrr()
    close_all(class_frrs, {1 - 1 / 2, 1 - 1 / 3, -1}, 1e-6, 'class FRR')
    close_all(class_fars, {2 / 3, 1 / 2, -1}, 1e-6, 'class FAR')   -- FAR of 1: row 2 puts 2 of 3 on it
    assert.are.equal(2, frrs:numel())
    close_all(fars, {2 / 3, 1 / 2}, 1e-6, 'FAR')
  end)

  it('refuses bad input, naming the function', function()
    local cm = optim.ConfusionMatrix(3)
    raises('optim.ConfusionMatrix:add: class out of range 1..3', cm.add, cm, 4, 1)
    raises('optim.ConfusionMatrix:batchAdd: 2 predictions for 3 targets', cm.batchAdd, cm, torch.tensor({1, 2}),
           torch.tensor({1, 2, 3}))
    raises('optim.ConfusionMatrix: expects a list of classes', optim.ConfusionMatrix, 'x')
  end)
end)

describe('optim.Logger', function()
  local dir = os.tmpname()
  os.remove(dir)

  it('writes a header and one %11.4e line per add, by setNames order or sorted names', function()
    local path = dir .. '/sub/acc.log'
    local logger = optim.Logger(path)                       -- the directory is created
    logger:setNames({'train', 'test'})
    logger:add({0.5, 0.25})
    logger:add({1, 'n/a'})
    assert.are.equal('train\ttest\t\n 5.0000e-01\t 2.5000e-01\t\n 1.0000e+00\tn/a\t\n', files.read(path))
    local named = optim.Logger(dir .. '/named.log')
    named:add({['test error'] = 0.125, ['train error'] = 2})
    assert.are.equal('test error\ttrain error\t\n 1.2500e-01\t 2.0000e+00\t\n', files.read(dir .. '/named.log'))
    raises('optim.Logger:add: can only log numbers and strings', named.add, named, {['test error'] = {}})
    raises("optim.Logger:style: unknown style '*'", named.style, named, {['test error'] = '*'})
  end)

  it('plots to a PNG or an SVG through gnuplot', function()
    if not os.execute('command -v gnuplot > /dev/null 2>&1') then
      pending('gnuplot is not installed: Logger:plot is not run')
      return
    end
    local logger = optim.Logger(dir .. '/curve.log')
    logger:setNames({'train', 'test'})
    for i = 1, 10 do logger:add({1 / i, 2 / i}) end
    logger:style({'-', '+-'})
    logger:display(false)
    assert.are.equal(dir .. '/curve.log.png', logger:plot())
    local png = files.read(dir .. '/curve.log.png')
    assert.is_true(#png > 1000 and png:sub(2, 4) == 'PNG')
    logger.plotfile = dir .. '/curve.svg'
    logger:setlogscale(true)
    logger:plot('test')
    assert.is_true(files.read(dir .. '/curve.svg'):find('<svg', 1, true) ~= nil)
    raises("optim.Logger:plot: unknown column 'valid'", logger.plot, logger, 'valid')
  end)

  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)
end)
