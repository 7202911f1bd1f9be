local torch = require 'torch'
-- fail(self, fmt, ...): an error naming the module, at the caller's line
local fail = require('nn._Criterion7').fail

-- nn.SpatialFractionalMaxPooling(kW, kH, outW, outH) or (kW, kH, ratioW, ratioH): Graham's
-- fractional max pooling ("pseudorandom" mode) of (C, H, W) or (N, C, H, W): the maximum of
-- kW x kH windows whose starts follow a pseudo-random sequence, to an outH x outW output (integer
-- sizes) or floor(H ratioH) x floor(W ratioW) (ratios in (0, 1)). Each (batch element, plane)
-- draws two uniform samples u (m.randomSamples, N x C x 2: width's, then height's); along a dim of
-- input size n and output size o, window i (0-based) starts at
-- floor((i + u) alpha) - floor(u alpha), alpha = (n - k) / (o - 1), the last at n - k. A new draw
-- comes with every forward unless :fixPoolingRegions() (Torch7's newRandomPool flag, which, as
-- Torch7's, means "keep the samples" when true). The maxima's 1-based positions in each H*W plane
-- are kept in m.indices; the gradient flows to them.
local SpatialFractionalMaxPooling, Module = torch.class('nn.SpatialFractionalMaxPooling', 'nn.Module')
function SpatialFractionalMaxPooling:__init(kw, kh, a1, a2)
  Module.__init(self)
  if math.type(kw) ~= 'integer' or math.type(kh) ~= 'integer' or kw < 2 or kh < 2 then
    fail(self, 'the pool size must be integers of at least 2, got %s, %s',
         tostring(kw), tostring(kh))
  end
  if type(a1) ~= 'number' or type(a2) ~= 'number' then
    fail(self, 'expected an output size or ratios, got %s, %s',
         tostring(a1), tostring(a2))
  end
  self.poolSizeW, self.poolSizeH = kw, kh
  self.newRandomPool = false
  if a1 >= 1 and a2 >= 1 then
    if math.type(a1) ~= 'integer' or math.type(a2) ~= 'integer' then
      fail(self, 'the output size must be integers, got %s, %s',
           tostring(a1), tostring(a2))
    end
    self.outW, self.outH = a1, a2
  else
    if not (a1 > 0 and a1 < 1 and a2 > 0 and a2 < 1) then
      fail(self, 'the ratios must be in (0, 1), got %s, %s',
           tostring(a1), tostring(a2))
    end
    self.ratioW, self.ratioH = a1, a2
  end
end

-- module:fixPoolingRegions(val=true): true keeps the random samples (so the pooling regions)
-- from one forward to the next; false draws new ones each forward. Returns self.
function SpatialFractionalMaxPooling:fixPoolingRegions(val)
  if val == nil then val = true end
  self.newRandomPool = val
  return self
end

-- the output width and height for input x (N, C, H, W)
local function output_size(self, h, w)
  local ow, oh = self.outW, self.outH
  if self.ratioW then
    ow, oh = math.floor(w * self.ratioW), math.floor(h * self.ratioH)
    if ow < 1 or oh < 1 then
      fail(self, 'the ratios %s, %s give an empty output for a %dx%d input',
           tostring(self.ratioW), tostring(self.ratioH), h, w)
    end
  end
  if ow + self.poolSizeW - 1 > w or oh + self.poolSizeH - 1 > h then
    fail(self, 'an output of %dx%d with %dx%d windows needs an input of at least %dx%d, got %dx%d',
         oh, ow, self.poolSizeH, self.poolSizeW, oh + self.poolSizeH - 1, ow + self.poolSizeW - 1, h, w)
  end
  return ow, oh
end

-- the window starts (0-based) along one dim for samples u (N, C): (N, C, o), int64
local function starts(u, n, o, k)
  local N, C = u:size(1), u:size(2)
  local last = torch.full({N, C, 1}, n - k, {dtype = 'int64'})
  if o == 1 then return last end
  local alpha = (n - k) / (o - 1)
  local i = torch.arange(o - 1, {dtype = u.dtype}):view(1, 1, o - 1)
  local uu = u:view(N, C, 1)
  local s = ((i + uu) * alpha):floor() - (uu * alpha):floor()
  return (torch.cat({s:to('int64'), last}, 3))
end

function SpatialFractionalMaxPooling:updateOutput(input)
  if not torch.is_tensor(input) or (input:dim() ~= 3 and input:dim() ~= 4) or not input:is_floating_point() then
    fail(self, '%s', 'expected a 3-D or 4-D floating input ((N,) C, H, W), got '
         .. (torch.is_tensor(input) and input.dtype .. ' of size ' .. tostring(input:size()) or torch.type(input)))
  end
  local x = input:dim() == 4 and input or input:unsqueeze(1)
  local N, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  local ow, oh = output_size(self, H, W)
  local kw, kh = self.poolSizeW, self.poolSizeH
  local s = self.randomSamples
  if not (torch.is_tensor(s) and s:dim() == 3 and s:size(1) == N and s:size(2) == C and s:size(3) == 2)
     or not self.newRandomPool then
    s = torch.rand(N, C, 2, {dtype = input.dtype, device = input.device})
    self.randomSamples = s
  end
  local idx = torch.no_grad(function()
    -- the window arithmetic on the host, in the input's dtype (as Torch7's kernel)
    local su = s:detach():to('cpu'):to(input.dtype)
    local sw = starts(su:select(3, 1), W, ow, kw)             -- (N, C, ow)
    local sh = starts(su:select(3, 2), H, oh, kh)             -- (N, C, oh)
    -- every tap of every window, the rows outer, as (N, C, oh, ow, kh*kw) plane positions (1-based)
    local dh = torch.arange(kh, {dtype = 'int64'}):view(1, 1, 1, 1, kh, 1)
    local dw = torch.arange(kw, {dtype = 'int64'}):view(1, 1, 1, 1, 1, kw)
    local rows = sh:view(N, C, oh, 1, 1, 1) + dh
    local cols = sw:view(N, C, 1, ow, 1, 1) + dw
    local taps = (rows * W + cols + 1):reshape(N, C, oh * ow * kh * kw):to(input.device)
    local flat = x:detach():reshape(N, C, H * W)
    local vals = flat:gather(3, taps):view(N, C, oh * ow, kh * kw)
    -- the first maximum of each window, a NaN before any number
    local key = torch.where(vals:isnan(), torch.full({}, math.huge, {dtype = vals.dtype, device = vals.device}), vals)
    local _, which = key:max(4)
    local pos = taps:view(N, C, oh * ow, kh * kw):gather(4, which:unsqueeze(4))
    return pos:view(N, C, oh, ow)
  end)
  local out = x:reshape(N, C, H * W):gather(3, idx:view(N, C, oh * ow)):view(N, C, oh, ow)
  if input:dim() == 3 then out, idx = out:squeeze(1), idx:squeeze(1) end
  self.indices = idx
  return out
end

-- module:clearState(): forgets the samples and indices (new samples at the next forward).
function SpatialFractionalMaxPooling:clearState()
  self.indices, self.randomSamples = nil, nil
  return self
end

-- module:empty(): as clearState (Torch7's older name).
SpatialFractionalMaxPooling.empty = SpatialFractionalMaxPooling.clearState

-- module:__tostring__(): Torch7's text.
function SpatialFractionalMaxPooling:__tostring__()
  return string.format('nn.SpatialFractionalMaxPooling(%s,%s, %d,%d)', tostring(self.outW or self.ratioW),
                       tostring(self.outH or self.ratioH), self.poolSizeW, self.poolSizeH)
end

return SpatialFractionalMaxPooling
