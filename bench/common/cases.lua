-- bench/common/cases.lua: what the per-case benches (conv_layers, vol3d) share: fixed
-- input values, a median timing and the TIME/CHECK lines bench/run.py reads. Loaded with
-- dofile((arg[0]:match('(.*/)') or './') .. 'common/cases.lua'); bench/common/cases.py is
-- the PyTorch side's.
local M = {}

-- sin(i * step) * scale over the elements of shape: fixed values, the same on both sides
function M.ramp(shape, step, scale)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return (torch.arange(0, n) * step):sin():mul(scale):view(shape)
end

-- the median of reps timed runs of fn, after one warm-up
function M.time(reps, fn)
  fn()
  local t = {}
  for i = 1, reps do
    local t0 = torch.clock()
    fn()
    t[i] = torch.clock() - t0
  end
  table.sort(t)
  return t[(reps + 1) // 2]
end

-- TIME and CHECK lines for one case
function M.report(case, seconds, ...)
  print(string.format('TIME %.9g %s', seconds, case))
  local parts = {}
  for i, v in ipairs({...}) do parts[i] = string.format('%.7g', v) end
  print('CHECK ' .. case .. ' ' .. table.concat(parts, ' '))
end

function M.abs_sum(t) return t:abs():sum():item() end

return M
