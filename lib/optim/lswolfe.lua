-- optim.lswolfe and optim.polyinterp: Torch7's line search under the
-- strong Wolfe conditions (bracketing, then zooming by polynomial
-- interpolation), the lineSearch of optim.lbfgs, and the interpolation it
-- uses, after M. Schmidt's minFunc.
local torch = require 'torch'
local optim = require 'optim'

local fail = optim._error
local F64 = {dtype = 'float64'}

-- The real roots of the polynomial c[1] t^(n-1) + ... + c[n] (a Lua array),
-- as a Lua array: leading zeros dropped, trailing zeros giving roots at 0,
-- the rest the eigenvalues of the companion matrix with no imaginary part.
local function real_roots(c)
  local first, last = 1, #c
  while first <= last and math.abs(c[first]) < 1e-12 do first = first + 1 end
  local roots = {}
  while last >= first and math.abs(c[last]) < 1e-12 do
    roots[#roots + 1] = 0
    last = last - 1
  end
  local degree = last - first
  if degree == 1 then
    roots[#roots + 1] = -c[last] / c[first]
  elseif degree > 1 then
    local companion = torch.zeros(degree, degree, F64)
    for j = 1, degree do companion[1][j] = -c[first + j] / c[first] end
    for i = 2, degree do companion[i][i - 1] = 1 end
    local eig = torch.eig(companion, 'N')
    for i = 1, degree do
      if eig[i][2] == 0 then roots[#roots + 1] = eig[i][1] end
    end
  end
  return roots
end

local function polyval(coefs, t)
  local value = 0
  for _, c in ipairs(coefs) do value = value * t + c end
  return value
end

-- optim.polyinterp(points, xminBound, xmaxBound): the minimizer, within
-- [xminBound, xmaxBound] (default: the points' span), of the polynomial of
-- degree 2n-1 through n points, each {t, f(t), f'(t)} (points: an n x 3
-- tensor or a Lua array of triples). Two points without bounds take the
-- closed form of the cubic (the midpoint when the cubic has no minimum).
-- Returns the position and, in the general case, the polynomial's value.
function optim.polyinterp(points, xminBound, xmaxBound)
  local name = 'optim.polyinterp'
  if torch.is_tensor(points) then
    if points:dim() ~= 2 or points:size(2) ~= 3 then
      fail('%s: points must be n x 3 ({t, f, df} rows), got size %s', name, tostring(points:size()))
    end
    local rows = {}
    for i = 1, points:size(1) do rows[i] = {points[i][1], points[i][2], points[i][3]} end
    points = rows
  elseif type(points) ~= 'table' or #points == 0 then
    fail('%s: points must be an n x 3 tensor or a list of {t, f, df}, got %s', name, torch.type(points))
  end
  local n = #points
  if n == 2 and xminBound == nil and xmaxBound == nil then
    local lo, hi = points[1], points[2]
    if hi[1] < lo[1] then lo, hi = hi, lo end
    local d1 = lo[3] + hi[3] - 3 * (lo[2] - hi[2]) / (lo[1] - hi[1])
    local d2 = math.sqrt(d1 * d1 - lo[3] * hi[3])
    if d2 == d2 then
      local t = hi[1] - (hi[1] - lo[1]) * ((hi[3] + d2 - d1) / (hi[3] - lo[3] + 2 * d2))
      return math.min(math.max(t, lo[1]), hi[1])
    end
    return (lo[1] + hi[1]) / 2
  end
  local order = 2 * n - 1
  local xmin, xmax = math.huge, -math.huge
  for _, pt in ipairs(points) do xmin, xmax = math.min(xmin, pt[1]), math.max(xmax, pt[1]) end
  xminBound, xmaxBound = xminBound or xmin, xmaxBound or xmax
  -- rows 1..n: values at t_i; rows n+1..2n: derivatives at t_i
  local A, b = torch.zeros(2 * n, order + 1, F64), torch.zeros(2 * n, 1, F64)
  for i, pt in ipairs(points) do
    for j = 0, order do A[i][order - j + 1] = pt[1] ^ j end
    b[i][1] = pt[2]
    for j = 1, order do A[n + i][j] = (order - j + 1) * pt[1] ^ (order - j) end
    b[n + i][1] = pt[3]
  end
  local solution = torch.gels(b, A)
  local coefs = {}
  for i = 1, order + 1 do
    local c = solution[i][1]
    coefs[i] = math.abs(c) <= 1e-12 and 0 or c
  end
  local candidates = {xminBound, xmaxBound}
  for _, pt in ipairs(points) do candidates[#candidates + 1] = pt[1] end
  local slope, finite = {}, true
  for i = 1, order do
    slope[i] = coefs[i] * (order - i + 1)
    if slope[i] ~= slope[i] or math.abs(slope[i]) == math.huge then finite = false end
  end
  if finite then
    for _, r in ipairs(real_roots(slope)) do candidates[#candidates + 1] = r end
  end
  local best, fbest = (xminBound + xmaxBound) / 2, math.huge
  for _, t in ipairs(candidates) do
    if t >= xminBound and t <= xmaxBound then
      local value = polyval(coefs, t)
      if value < fbest then best, fbest = t, value end
    end
  end
  return best, fbest
end

-- optim.lswolfe(opfunc, x, t, d, f, g, gtd, options): a step t along d
-- from x (loss f, gradient g, directional derivative gtd < 0) meeting the
-- strong Wolfe conditions. options c1 (1e-4, sufficient decrease), c2 (0.9,
-- curvature), tolX (1e-9, the smallest bracket), maxIter (20). Moves x to
-- x + t d and returns the loss and gradient there, x, t and the number of
-- evaluations.
function optim.lswolfe(opfunc, x, t, d, f, g, gtd, options)
  local name = 'optim.lswolfe'
  options = options or {}
  local c1, c2 = options.c1 or 1e-4, options.c2 or 0.9
  local tolX, max_iter = options.tolX or 1e-9, options.maxIter or 20
  if not torch.is_tensor(x) or not torch.is_tensor(d) then fail('%s: x and d must be tensors', name) end
  local x_init = x:clone()
  local function try(step)
    torch.no_grad(function() x:copy_(x_init):add_(d, {alpha = step}) end)
    local fx, gx = optim._evaluate(name, opfunc, x)
    gx = gx:clone()
    return optim._loss_number(fx, name), gx, gx:dot(d):item()
  end
  local f_new, g_new, gtd_new = try(t)
  local evals, iter = 1, 0
  local t_prev, f_prev, g_prev, gtd_prev = 0, f, g:clone(), gtd
  local bracket, done   -- entries {t, f, g, gtd}
  -- bracketing: grow the step until an interval holds an acceptable one
  while iter < max_iter do
    local decreased = not (f_new > f + c1 * t * gtd or (iter > 1 and f_new >= f_prev))
    if decreased and math.abs(gtd_new) <= -c2 * gtd then
      bracket, done = {{t, f_new, g_new, gtd_new}}, true
      break
    elseif not decreased or gtd_new >= 0 then
      bracket = {{t_prev, f_prev, g_prev, gtd_prev}, {t, f_new, g_new, gtd_new}}
      break
    end
    local previous = t_prev
    t_prev = t
    t = optim.polyinterp({{previous, f_prev, gtd_prev}, {t, f_new, gtd_new}}, t + 0.01 * (t - previous), t * 10)
    f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
    f_new, g_new, gtd_new = try(t)
    evals, iter = evals + 1, iter + 1
  end
  if iter == max_iter then bracket = {{0, f, g, gtd}, {t, f_new, g_new, gtd_new}} end
  -- zoom: shrink the bracket until a step satisfies both conditions
  local insufficient = false
  while not done and iter < max_iter do
    local low = bracket[1][2] <= bracket[2][2] and 1 or 2
    local high = 3 - low
    local b1, b2 = bracket[1], bracket[2]
    t = optim.polyinterp({{b1[1], b1[2], b1[4]}, {b2[1], b2[2], b2[4]}})
    local bmax, bmin = math.max(b1[1], b2[1]), math.min(b1[1], b2[1])
    if math.min(bmax - t, t - bmin) / (bmax - bmin) < 0.1 then
      -- too close to an end: move away, unless the last step made progress
      if insufficient or t >= bmax or t <= bmin then
        if math.abs(t - bmax) < math.abs(t - bmin) then t = bmax - 0.1 * (bmax - bmin)
        else t = bmin + 0.1 * (bmax - bmin) end
        insufficient = false
      else
        insufficient = true
      end
    else
      insufficient = false
    end
    f_new, g_new, gtd_new = try(t)
    evals, iter = evals + 1, iter + 1
    if f_new > f + c1 * t * gtd or f_new >= bracket[low][2] then
      bracket[high] = {t, f_new, g_new, gtd_new}
    else
      if math.abs(gtd_new) <= -c2 * gtd then
        done = true
      elseif gtd_new * (bracket[high][1] - bracket[low][1]) >= 0 then
        bracket[high] = bracket[low]
      end
      bracket[low] = {t, f_new, g_new, gtd_new}
    end
    if not done and math.abs((bracket[1][1] - bracket[2][1]) * gtd_new) < tolX then break end
  end
  local best = bracket[1]
  if bracket[2] and bracket[2][2] < best[2] then best = bracket[2] end
  torch.no_grad(function() x:copy_(x_init):add_(d, {alpha = best[1]}) end)
  return best[2], best[3], x, best[1], evals
end

return optim
