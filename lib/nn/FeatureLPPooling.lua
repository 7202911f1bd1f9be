local torch = require 'torch'
-- fail(self, fmt, ...): an error naming the module, at the caller's line
local fail = require('nn._Criterion7').fail

-- nn.FeatureLPPooling(width, stride, power, batch_mode=false): LP pooling along the feature
-- dim: output feature k (1-based) is (sum over i = 0 .. width-1 of x[(k-1) stride + 1 + i]^power)^(1/power)
-- (x^power as it is, no absolute value). The feature dim is the first (batch_mode false: input
-- (F), (F, d1) or (F, d1, d2)) or the second (batch_mode true: (N, F), (N, F, d1), (N, F, d1, d2));
-- it becomes (F - width) // stride + 1 long. width is 2 to 16, stride 1 to 4 (Torch7's limits).
-- Its gradient is Torch7's: gradOutput * (x_i / y)^(power - 1), nothing where the output y is 0.
local FeatureLPPooling, Module = torch.class('nn.FeatureLPPooling', 'nn.Module')
function FeatureLPPooling:__init(width, stride, power, batch_mode)
  Module.__init(self)
  if math.type(width) ~= 'integer' or width < 2 or width > 16 then
    fail(self, 'width must be an integer from 2 to 16, got %s', tostring(width))
  end
  if math.type(stride) ~= 'integer' or stride < 1 or stride > 4 then
    fail(self, 'stride must be an integer from 1 to 4, got %s', tostring(stride))
  end
  if type(power) ~= 'number' or power <= 0 then
    fail(self, 'power must be a positive number, got %s', tostring(power))
  end
  self.width, self.stride, self.power, self.batch_mode = width, stride, power, batch_mode == true
end

-- the feature dim of x, checked
local function feature_dim(self, x)
  local lo = self.batch_mode and 2 or 1
  if not torch.is_tensor(x) or x:dim() < lo or x:dim() > lo + 2 then
    fail(self, 'expected a %d-D to %d-D input (batch_mode %s), got %s', lo, lo + 2,
         tostring(self.batch_mode), torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x))
  end
  if x:size(lo) < self.width then
    fail(self, '%d features (dim %d of size %s) are fewer than the width %d',
         x:size(lo), lo, tostring(x:size()), self.width)
  end
  return lo
end

-- the windows of x: the feature dim holds the outputs, a last dim of width the window
local function windows(self, x, d) return x:unfold(d, self.width, self.stride) end

function FeatureLPPooling:updateOutput(input)
  local d = feature_dim(self, input)
  local p = self.power
  local out = torch.no_grad(function()
    local u = windows(self, input:detach(), d)
    if p == 1 then return (u:sum(-1)) end
    return (u:pow(p):sum(-1):pow(1 / p))
  end)
  self.output = out
  return out
end

function FeatureLPPooling:updateGradInput(input, gradOutput)
  local d = feature_dim(self, input)
  local p = self.power
  local gi = torch.no_grad(function()
    local x = input:detach()
    local y = self.output
    if not torch.is_tensor(y) or y:size() ~= gradOutput:size() then y = self:updateOutput(input) end
    if gradOutput:size() ~= y:size() then
      fail(self, "gradOutput's shape %s differs from the output's %s",
           tostring(gradOutput:size()), tostring(y:size()))
    end
    local nout = y:size(d)
    local u = windows(self, x, d)
    local yw, gw = y:unsqueeze(-1), gradOutput:unsqueeze(-1)
    local g
    if p == 1 then g = gw:expand(u:size())
    else g = gw * (u / yw):pow(p - 1) end
    g = torch.where(yw:expand(u:size()):eq(0), torch.zeros_like(g), g)
    local out = torch.zeros_like(x)
    local span = (nout - 1) * self.stride + 1
    for i = 1, self.width do
      out:narrow(d, i, span):unfold(d, 1, self.stride):select(-1, 1):add_(g:select(-1, i))
    end
    return out
  end)
  self.gradInput = gi
  return gi
end

-- module:__tostring__(): Torch7's text.
function FeatureLPPooling:__tostring__()
  return string.format('nn.FeatureLPPooling(w%d s%d power %s batch %d', self.width, self.stride, tostring(self.power),
                       self.batch_mode and 1 or 0)
end

return FeatureLPPooling
