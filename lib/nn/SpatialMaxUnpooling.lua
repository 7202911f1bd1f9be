local torch = require 'torch'
-- fail(self, fmt, ...): an error naming the module, at the caller's line
local fail = require('nn._Criterion7').fail
local nn = require 'nn'

-- nn.SpatialMaxUnpooling(poolingModule): Torch7's max-unpooling: the inverse placement of a max
-- pooling (nn.SpatialMaxPooling, or an nn.MaxPool2d whose stride equals its kernel). Its
-- forward takes a tensor C of the pooling's output shape and gives one D of the shape of the
-- pooling's last input, zeros except where the pooling found its maxima:
-- D[n][k][position of the maximum of window (i, j)] = C[n][k][i][j]. The pooling module keeps its
-- indices from then on (m.pooling.keep_indices); it must have run forward first. The gradient is
-- gradOutput read at those positions.
local SpatialMaxUnpooling, Module = torch.class('nn.SpatialMaxUnpooling', 'nn.Module')
function SpatialMaxUnpooling:__init(pooling)
  Module.__init(self)
  if torch.typename(pooling) ~= 'nn.MaxPool2d' then
    fail(self, 'expected an nn.SpatialMaxPooling (nn.MaxPool2d) module, got %s', torch.type(pooling))
  end
  if pooling.kW ~= pooling.dW or pooling.kH ~= pooling.dH then
    fail(self, "the pooling module's kernel (%dx%d) must equal its stride (%dx%d)",
         pooling.kW, pooling.kH, pooling.dW, pooling.dH)
  end
  pooling.keep_indices = true
  self.pooling = pooling
end

-- the pooling's indices and the flat (..., h*w) shape, checked against input
local function placement(self, input)
  local p = self.pooling
  local idx = p.indices
  if idx == nil then
    fail(self, 'run the pooling module forward first (it has no indices yet)')
  end
  if not torch.is_tensor(input) or input:size() ~= idx:size() then
    fail(self, "the input's shape %s differs from the pooling's last output %s",
         torch.is_tensor(input) and tostring(input:size()) or torch.type(input), tostring(idx:size()))
  end
  local lead = input:size():totable()
  local n = #lead
  lead[n - 1], lead[n] = -1, nil
  return idx:reshape(lead), lead, p.iheight, p.iwidth
end

function SpatialMaxUnpooling:updateOutput(input)
  local idx, flat, h, w = placement(self, input)
  local n = #flat
  local out = torch.no_grad(function()
    local shape = {table.unpack(flat)}
    shape[n] = h * w
    local o = torch.zeros(shape, {dtype = input.dtype, device = input.device})
    o:scatter_(n, idx, input:detach():reshape(flat))
    shape[n], shape[n + 1] = h, w
    return o:view(shape)
  end)
  self.output = out
  return out
end

function SpatialMaxUnpooling:updateGradInput(input, gradOutput)
  local idx, flat = placement(self, input)
  local n = #flat
  local gi = torch.no_grad(function()
    local shape = {table.unpack(flat)}
    return gradOutput:detach():reshape(shape):gather(n, idx):view(input:size())
  end)
  self.gradInput = gi
  return gi
end

-- module:__tostring__(): Torch7's text, naming the pooling module.
function SpatialMaxUnpooling:__tostring__()
  return 'nn.SpatialMaxUnpooling associated to ' .. self.pooling:__tostring__()
end

return SpatialMaxUnpooling
