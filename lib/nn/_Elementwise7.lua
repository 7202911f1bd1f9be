-- Torch7's layers with a parameter tensor applied element by element (nn.Add,
-- nn.CAdd, nn.Mul, nn.CMul): the parameter read in the input's shape, or per
-- example of a batch, uniform in +-1/sqrt(its size) by default.
local torch = require 'torch'

local Elementwise7 = {}

-- whether p broadcasts to x's shape (its sizes, aligned at the last dim, 1 or x's)
local function broadcasts(p, x)
  if p:dim() > x:dim() then return false end
  for i = 1, p:dim() do
    local ps, xs = p:size(-i), x:size(-i)
    if ps ~= 1 and ps ~= xs then return false end
  end
  return true
end

-- Elementwise7.shaped(who, p, x): p in a shape that combines with x: x's own when the
-- counts match, else broadcast when it can, else one copy per row of a batch x.
function Elementwise7.shaped(who, p, x)
  if not torch.is_tensor(x) then error(string.format('%s: expected a tensor input, got %s', who, torch.type(x)), 4) end
  local n = p:numel()
  if x:numel() == n then return p:view(x:size()), x end
  if broadcasts(p, x) then return p, x end
  if x:dim() > 0 and x:numel() == n * x:size(1) then
    return p:view(1, n), x:reshape(x:size(1), n)
  end
  error(string.format('%s: parameter of size %s does not fit input of size %s', who, tostring(p:size()),
                      tostring(x:size())), 4)
end

-- Elementwise7.reset(p, stdv): Torch7's reset: uniform in +-stdv * sqrt(3) when stdv is
-- given, else +-1/sqrt(count).
function Elementwise7.reset(p, count, stdv)
  local bound = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(count)
  torch.no_grad(function() p:uniform_(-bound, bound) end)
end

return Elementwise7
