-- optim.FistaLS (also optim.fista): FISTA, the fast iterative
-- shrinkage-thresholding algorithm of Beck and Teboulle (2009) with a
-- backtracking line search on L, Torch7's function, for min f(x) + g(x)
-- with f smooth and g non-smooth (such as an L1 penalty).
local torch = require 'torch'
local optim = require 'optim'

-- optim.FistaLS(f, g, pl, xinit, params): f(x) gives the smooth loss and
-- f(x, 'dx') the loss and its gradient; g(x) the non-smooth loss; pl(x, L)
-- replaces x in place by the minimizer of the step's subproblem (for an L1
-- penalty lambda |x|, soft-thresholding by lambda / L). params L (0.1,
-- 1/step size), Lstep (1.5, its growth while the line search fails),
-- maxiter (50), maxline (20, line-search tries), errthres (1e-4, stop when
-- f + g changes by less), doFistaUpdate (true: FISTA; false: ISTA),
-- verbose. params.L keeps the last L; params.xkm, y, ply the buffers.
-- xinit receives the solution. Returns the solution and the history, one
-- entry per iteration: {nline, L, F, Fply, Gply, Q}.
function optim.FistaLS(f, g, pl, xinit, params)
  local name = 'optim.FistaLS'
  for i, fn in ipairs({f, g, pl}) do
    if type(fn) ~= 'function' then
      optim._error('%s: argument %d must be a function, got %s', name, i, type(fn))
    end
  end
  if not torch.is_tensor(xinit) then optim._error('%s: xinit must be a tensor, got %s', name, torch.type(xinit)) end
  params = params or {}
  local L, Lstep = params.L or 0.1, params.Lstep or 1.5
  local maxiter, maxline, errthres = params.maxiter or 50, params.maxline or 20, params.errthres or 1e-4
  local fista_update = params.doFistaUpdate
  local xk = xinit
  local xkm, y, ply = torch.zeros_like(xk), torch.zeros_like(xk), torch.zeros_like(xk)
  params.xkm, params.y, params.ply = xkm, y, ply
  local history = {}
  local tk = 1
  return torch.no_grad(function()
    for iter = 1, maxiter do
      local fy, gfy = f(y, 'dx')
      local fply, Q, nline = 0, 0, 0
      while true do
        -- a proximal step from y with step size 1/L
        ply:copy_(y):add_(gfy, {alpha = -1 / L})
        pl(ply, L)
        xk:copy_(ply)
        fply = f(ply)
        ply:sub_(y)
        Q = fy + gfy:dot(ply):item() + L / 2 * ply:dot(ply):item()
        nline = nline + 1
        if fply <= Q then break end
        if nline > maxline then
          xk:copy_(xkm)      -- no better point found: stay at the previous iterate
          break
        end
        L = L * Lstep
      end
      local tkp = 0
      if fista_update then
        tkp = (1 + math.sqrt(1 + 4 * tk * tk)) / 2
        xkm:sub_(xk)
        y:copy_(xk):add_(xkm, {alpha = (1 - tk) / tkp})
        xkm:copy_(xk)
      else
        y:copy_(xk)
      end
      tk = tkp
      fply = f(y)
      local gply = g(y)
      history[iter] = {nline = nline, L = L, F = fply + gply, Fply = fply, Gply = gply, Q = Q}
      params.L = L
      if params.verbose then history[iter].xk, history[iter].y = xk:clone(), y:clone() end
      if (iter > 1 and math.abs(history[iter].F - history[iter - 1].F) <= errthres) or iter >= maxiter then
        xinit:copy_(y)
        return y, history
      end
    end
  end)
end
optim.fista = optim.FistaLS

return optim
