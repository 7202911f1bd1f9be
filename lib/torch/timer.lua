-- torch.tic and torch.toc: MATLAB's stopwatch pair, beside torch.Timer (a C
-- object, src/vm/lt_util.c). sys.tic and sys.toc share the last tic.
local torch = require 'torch.core'

local last_tic

-- torch.tic(): starts a stopwatch; returns its start (seconds on torch.clock)
-- for torch.toc(t), and remembers it for torch.toc().
function torch.tic()
  last_tic = torch.clock()
  return last_tic
end

-- torch.toc([t]): seconds since t (a value torch.tic returned), or since the
-- last torch.tic() when t is nil.
function torch.toc(t)
  if t == nil then
    if not last_tic then error('torch.toc: torch.tic() was never called', 2) end
    t = last_tic
  elseif type(t) ~= 'number' then
    error('torch.toc: expected a time from torch.tic(), got ' .. type(t), 2)
  end
  return torch.clock() - t
end

return torch
