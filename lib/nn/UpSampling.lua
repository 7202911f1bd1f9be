local torch = require 'torch'

-- nn.UpSampling(scale, mode='nearest') or nn.UpSampling({oheight=, owidth= [, odepth=]}, 'linear'):
-- Torch7's upsampling of a spatial (N, C, H, W) or volumetric (N, C, D, H, W) input.
-- mode 'nearest' (the default; any other name but 'linear', 'bilinear' and 'trilinear'
-- means it) repeats each element scale times along each spatial dim; 'linear' is
-- bilinear (4-D) or trilinear (5-D) interpolation with the corners aligned. With a
-- scale (a positive integer) each spatial size n becomes n * scale for 'nearest' and
-- (n - 1) * scale + 1 for 'linear' (Torch7's documentation, as SpatialUpSamplingBilinear
-- here; Torch7's last code multiplied by scale in both modes); with a table (linear
-- only) the output takes the sizes given (odepth for 5-D input).
local UpSampling, Module = torch.class('nn.UpSampling', 'nn.Module')

local LINEAR = {linear = true, bilinear = true, trilinear = true}

function UpSampling:__init(params, mode)
  Module.__init(self)
  self.mode = LINEAR[mode] and 'linear' or 'nearest'
  if type(params) == 'table' then
    if self.mode == 'nearest' then error('nn.UpSampling: nearest upsampling takes a scale factor, not sizes', 3) end
    for _, k in ipairs({'oheight', 'owidth'}) do
      if math.type(params[k]) ~= 'integer' or params[k] < 1 then
        error(string.format('nn.UpSampling: %s must be a positive integer, got %s', k, tostring(params[k])), 3)
      end
    end
    if params.odepth ~= nil and (math.type(params.odepth) ~= 'integer' or params.odepth < 1) then
      error('nn.UpSampling: odepth must be a positive integer, got ' .. tostring(params.odepth), 3)
    end
    self.oheight, self.owidth, self.odepth = params.oheight, params.owidth, params.odepth
  else
    if type(params) ~= 'number' or params < 1 or params ~= math.floor(params) then
      error('nn.UpSampling: scale factor must be a positive integer, got ' .. tostring(params), 3)
    end
    self.scale_factor = math.tointeger(params)
  end
end

-- x along dim d (size n) resampled to m points, the corners aligned: point i (0-based)
-- reads position i * (n - 1) / (m - 1), linearly between its two neighbours
local function linear_along(x, d, m)
  local n = x:size(d)
  if n == m then return x end
  local rows = {}
  local ratio = m > 1 and (n - 1) / (m - 1) or 0
  for i = 0, m - 1 do
    local row = {}
    for j = 1, n do row[j] = 0 end
    local pos = i * ratio
    local lo = math.min(math.floor(pos), n - 1)
    local frac = pos - lo
    local hi = lo < n - 1 and lo + 1 or lo
    row[lo + 1] = row[lo + 1] + (1 - frac)
    row[hi + 1] = row[hi + 1] + frac
    rows[i + 1] = row
  end
  local w = torch.tensor(rows, {dtype = x.dtype, device = x.device})
  local last = x:dim()
  return x:transpose(d, last):matmul(w:t()):transpose(d, last)
end

-- x along dim d with each element repeated s times
local function nearest_along(x, d, s)
  if s == 1 then return x end
  local idx = torch.arange(0, x:size(d) * s, {dtype = 'int64', device = x.device}):div(s, {rounding_mode = 'floor'}) + 1
  return (x:index_select(d, idx))
end

function UpSampling:updateOutput(x)
  if not torch.is_tensor(x) or (x:dim() ~= 4 and x:dim() ~= 5) then
    error(string.format('nn.UpSampling: expected a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input, got %s',
                        torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x)), 3)
  end
  local nd = x:dim()
  local sizes = {}
  if self.scale_factor then
    for d = 3, nd do
      local n = x:size(d)
      sizes[d] = self.mode == 'nearest' and n * self.scale_factor or (n - 1) * self.scale_factor + 1
    end
  else
    if nd == 5 and self.odepth == nil then
      error('nn.UpSampling: a 5-D input needs odepth (no output depth was given)', 3)
    end
    if nd == 5 then sizes[3] = self.odepth end
    sizes[nd - 1], sizes[nd] = self.oheight, self.owidth
  end
  local y = x
  for d = 3, nd do
    if self.mode == 'nearest' then y = nearest_along(y, d, self.scale_factor)
    else y = linear_along(y, d, sizes[d]) end
  end
  return y
end

function UpSampling:extra_repr()
  local what = self.scale_factor and 'scale_factor=' .. self.scale_factor
               or string.format('oheight=%d, owidth=%d', self.oheight, self.owidth)
  return string.format("%s, mode='%s'", what, self.mode)
end

return UpSampling
