local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'
local t7 = require 'nn._Torch7Params'

-- nn.FractionalMaxPool3d(kernel_size, {output_size=, output_ratio=, return_indices=false,
-- _random_samples=}): Graham's fractional max pooling of (N, C, T, H, W) or (C, T, H, W)
-- input (F.fractional_max_pool3d); new pseudo-random windows each call (m.randomSamples,
-- (N, C, 3)) unless m:fixPoolingRegions() keeps the last ones.
local FractionalMaxPool3d, Module = torch.class('nn.FractionalMaxPool3d', 'nn.Module')

function FractionalMaxPool3d:__init(kernel, opts)
  Module.__init(self)
  opts = opts or {}
  if (opts.output_size == nil) == (opts.output_ratio == nil) then
    error('nn.FractionalMaxPool3d: give exactly one of output_size and output_ratio', 3)
  end
  self.kernel_size, self.output_size, self.output_ratio = kernel, opts.output_size, opts.output_ratio
  self.return_indices = opts.return_indices == true
  self.randomSamples = opts._random_samples
  self.newRandomPool = opts._random_samples ~= nil
end

-- pool:fixPoolingRegions(fix=true): Torch7's: keep the windows drawn by the next call for the
-- calls after it (or draw new ones each call again with false); returns pool.
function FractionalMaxPool3d:fixPoolingRegions(fix)
  if fix == nil then fix = true end
  self.newRandomPool = fix
  return self
end

function FractionalMaxPool3d:updateOutput(x)
  if not torch.is_tensor(x) or (x:dim() ~= 4 and x:dim() ~= 5) then
    t7.fail('%s: expected a 4-D or 5-D input, got %s', torch.typename(self),
            torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x))
  end
  local input = x
  if self.time_last then input = x:dim() == 5 and x:permute(1, 2, 5, 3, 4) or x:permute(1, 4, 2, 3) end
  local N, C = input:dim() == 5 and input:size(1) or 1, input:size(input:dim() - 3)
  local s = self.randomSamples
  if s == nil or not self.newRandomPool or s:size(1) ~= N or s:size(2) ~= C or s.dtype ~= input.dtype then
    s = torch.rand({N, C, 3}, {dtype = input.dtype, device = input.device})
    self.randomSamples = s
  end
  local v, idx = F.fractional_max_pool3d(input, self.kernel_size, {output_size = self.output_size,
                                         output_ratio = self.output_ratio, _random_samples = s:view(N, C, 3),
                                         return_indices = true})
  self.indices = idx
  if self.time_last then v = v:dim() == 5 and v:permute(1, 2, 4, 5, 3) or v:permute(1, 3, 4, 2) end
  if self.return_indices then return v, idx end
  return v
end

function FractionalMaxPool3d:extra_repr()
  local show = helpers.show
  return string.format('kernel_size=%s, %s=%s', show(self.kernel_size),
                       self.output_size and 'output_size' or 'output_ratio', show(self.output_size or self.output_ratio))
end

-- Torch7: nn.VolumetricFractionalMaxPooling(poolSizeT, poolSizeW, poolSizeH, outT, outW, outH)
-- or (poolSizeT, poolSizeW, poolSizeH, ratioT, ratioW, ratioH) with ratios in (0, 1): an
-- nn.FractionalMaxPool3d over Torch7's layout of this module, (N, C, H, W, T) or (C, H, W, T)
-- (time last), the output (N, C, outH, outW, outT); pool sizes at least 2.
function nn.VolumetricFractionalMaxPooling(pT, pW, pH, a1, a2, a3)
  local fname = 'nn.VolumetricFractionalMaxPooling'
  for _, v in ipairs({pT, pW, pH}) do
    if math.type(v) ~= 'integer' or v < 2 then error(fname .. ': pool sizes must be integers of at least 2, got ' .. tostring(v), 2) end
  end
  for _, v in ipairs({a1, a2, a3}) do
    if type(v) ~= 'number' or v <= 0 then error(fname .. ': output sizes or ratios must be positive, got ' .. tostring(v), 2) end
  end
  local opts = {}
  if a1 >= 1 and a2 >= 1 and a3 >= 1 then
    for _, v in ipairs({a1, a2, a3}) do
      if math.type(v) ~= 'integer' then error(fname .. ': output sizes must be integers, got ' .. tostring(v), 2) end
    end
    opts.output_size = {a1, a3, a2}
  elseif a1 < 1 and a2 < 1 and a3 < 1 then
    opts.output_ratio = {a1, a3, a2}
  else
    error(string.format('%s: give three output sizes (>= 1) or three ratios in (0, 1), got %s, %s, %s', fname,
                        tostring(a1), tostring(a2), tostring(a3)), 2)
  end
  local m = nn.FractionalMaxPool3d({pT, pH, pW}, opts)
  m.time_last = true
  m.poolSizeT, m.poolSizeW, m.poolSizeH = pT, pW, pH
  if opts.output_size then m.outT, m.outW, m.outH = a1, a2, a3 else m.ratioT, m.ratioW, m.ratioH = a1, a2, a3 end
  return m
end

return FractionalMaxPool3d
