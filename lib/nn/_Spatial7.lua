-- What Torch7's Spatial* convolution classes share on top of nn.Module (used by
-- nn._ConvNd and the Torch7 spatial classes): noBias, reset(stdv), input checks,
-- and the connection-table maps. (Torch7's assignments, m.weight = t and
-- m.gradWeight = t, are nn.Module's, in the Torch7 dialect.)
local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

local M = {}

-- a reduction's result as a Lua value, whichever form the dialect gives (number,
-- boolean or 0-dim tensor)
local function value(v)
  if torch.is_tensor(v) then return v:item() end
  return v
end

-- M.torch7_methods(cls, fan_in): gives cls Torch7's noBias() and reset(stdv);
-- fan_in(self) is the number of inputs per output that reset's default bound,
-- 1 / sqrt(fan_in), is computed from.
function M.torch7_methods(cls, fan_in)
  -- module:noBias(): Torch7's: the module has no bias from now on (a tensor assigned
  -- to module.bias later becomes the bias again); returns the module.
  function cls:noBias()
    self.bias = nil
    return self
  end
  -- module:reset(stdv): Torch7's: weight and bias uniform in +-stdv * sqrt(3), or
  -- without stdv in +-1 / sqrt(fan_in) (the inputs one output sums over); returns the module.
  function cls:reset(stdv)
    local bound = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(fan_in(self))
    torch.no_grad(function()
      self.weight:uniform_(-bound, bound)
      if self.bias ~= nil then self.bias:uniform_(-bound, bound) end
    end)
    return self
  end
end

-- M.batched(x, name, planes): x (C, H, W) or (N, C, H, W) as 4-D, and whether it was
-- 3-D; a clear error naming the module otherwise (C must be planes when given).
function M.batched(x, name, planes, level)
  if not torch.is_tensor(x) or (x:dim() ~= 3 and x:dim() ~= 4) then
    error(string.format('%s: expected a 3-D (nInputPlane x H x W) or 4-D (batch x nInputPlane x H x W) input, got %s',
                        name, torch.is_tensor(x) and x:dim() .. '-D tensor' or torch.type(x)), level or 3)
  end
  local c = x:size(x:dim() - 2)
  if planes and c ~= planes then
    error(string.format('%s: input has %d planes, expected %d (nInputPlane)', name, c, planes), level or 3)
  end
  if x:dim() == 3 then return x:unsqueeze(1), true end
  return x, false
end

-- M.int_arg(v, what, name, min, level): v checked to be an integer >= min (default 1); the
-- error at level (default 4: the caller of a constructor that called this)
function M.int_arg(v, what, name, min, level)
  min = min or 1
  if math.type(v) ~= 'integer' then
    if type(v) == 'number' and v == math.floor(v) then v = math.tointeger(v) end
  end
  if math.type(v) ~= 'integer' or v < min then
    error(string.format('%s: %s must be an integer >= %d, got %s', name, what, min, tostring(v)), level or 4)
  end
  return v
end

-- M.conv_fields(self, name, nin, nout, kw, kh, dw, dh, padw, padh): the Torch7
-- convolutions' constructor arguments checked and kept as their fields (nInputPlane,
-- nOutputPlane, kW, kH=kW, dW=1, dH=1, padW=0, padH=padW); errors at the constructor's caller
function M.conv_fields(self, name, nin, nout, kw, kh, dw, dh, padw, padh)
  self.nInputPlane = M.int_arg(nin, 'nInputPlane', name, 1, 5)
  self.nOutputPlane = M.int_arg(nout, 'nOutputPlane', name, 1, 5)
  self.kW = M.int_arg(kw, 'kW', name, 1, 5)
  self.kH = M.int_arg(kh or kw, 'kH', name, 1, 5)
  self.dW = M.int_arg(dw or 1, 'dW', name, 1, 5)
  self.dH = M.int_arg(dh or 1, 'dH', name, 1, 5)
  self.padW = M.int_arg(padw or 0, 'padW', name, 0, 5)
  self.padH = M.int_arg(padh or self.padW, 'padH', name, 0, 5)
end

-- ---- the connection-table convolutions (nn.SpatialConvolutionMap, nn.SpatialFullConvolutionMap) ----

-- the connection table's columns checked: (from, to) as int64 1-based indices, and the
-- plane counts (their maxima)
local function connections(conn, name)
  if not torch.is_tensor(conn) or conn:dim() ~= 2 or conn:size(2) ~= 2 or conn:size(1) < 1 then
    error(name .. ': expected a connection table, an n x 2 tensor (input plane, output plane per row)', 5)
  end
  local c = conn:double()
  if value(c:ne(c:floor()):any()) or value(c:lt(1):any()) then
    error(name .. ': the connection table must hold positive integer plane numbers', 5)
  end
  local from, to = c:select(2, 1):long(), c:select(2, 2):long()
  return from, to, value(from:max()), value(to:max())
end

-- the forward of both map classes: the input planes each connection reads, each
-- convolved (conv: F.conv2d or F.conv_transpose2d, groups = one per connection) with
-- its own kernel, then summed into the output planes the connections name, plus bias
function M.map_forward(self, x, name, conv)
  local x4, unbatched = M.batched(x, name, nil, 3)
  if x4:size(2) < self.nInputPlane then
    error(string.format('%s: input has %d planes, the connection table reads %d', name, x4:size(2),
                        self.nInputPlane), 3)
  end
  local nconn, kh, kw = self._conn_from:size(1), self.kH, self.kW
  if self.weight:numel() ~= nconn * kh * kw then
    error(string.format('%s: weight has %d values, expected %dx%dx%d', name, self.weight:numel(), nconn, kh, kw), 3)
  end
  local planes = x4:index_select(2, self._conn_from)                       -- (n, nconn, h, w)
  local y = conv(planes, self.weight:reshape(nconn, 1, kh, kw), nil, {stride = {self.dH, self.dW}, groups = nconn})
  local n, oh, ow = y:size(1), y:size(3), y:size(4)
  -- sum the connections into their output planes: (nout x nconn) 0/1 matrix @ (nconn x oh*ow)
  local sum = torch.zeros(self.nOutputPlane, nconn, {dtype = y.dtype})
  for k, o in ipairs(self._conn_to:tolist()) do sum[o][k] = 1 end
  sum = sum:to(y.device)
  local out = torch.matmul(sum, y:reshape(n, nconn, oh * ow)):reshape(n, self.nOutputPlane, oh, ow)
  if self.bias ~= nil then out = out + self.bias:reshape(1, self.nOutputPlane, 1, 1) end
  return unbatched and out:squeeze(1) or out
end

-- the constructor of both: Torch7's fields and parameters
function M.map_init(self, name, conn, kw, kh, dw, dh)
  nn.Module.__init(self)
  self._conn_from, self._conn_to, self.nInputPlane, self.nOutputPlane = connections(conn, name)
  self.connTable = conn
  self.kW = M.int_arg(kw, 'kW', name, 1, 5)
  self.kH = M.int_arg(kh or kw, 'kH', name, 1, 5)
  self.dW = M.int_arg(dw or 1, 'dW', name, 1, 5)
  self.dH = M.int_arg(dh or 1, 'dH', name, 1, 5)
  self.weight = nn.Parameter(torch.empty(conn:size(1), self.kH, self.kW))
  self.bias = nn.Parameter(torch.empty(self.nOutputPlane))
  self:reset()
end

-- reset(stdv) of both: with stdv, every value uniform in +-stdv * sqrt(3); without, as
-- Torch7, each kernel and bias in +-1 / sqrt(kW * kH * connections into its output plane)
function M.map_reset(self, stdv)
  torch.no_grad(function()
    if stdv then
      local b = stdv * math.sqrt(3)
      self.weight:uniform_(-b, b)
      if self.bias ~= nil then self.bias:uniform_(-b, b) end
      return
    end
    local fanin, to = {}, self._conn_to:tolist()
    for _, o in ipairs(to) do fanin[o] = (fanin[o] or 0) + 1 end
    local w = self.weight:view(#to, -1)
    for k, o in ipairs(to) do
      local b = 1 / math.sqrt(self.kW * self.kH * fanin[o])
      w:select(1, k):uniform_(-b, b)
    end
    if self.bias ~= nil then
      for o = 1, self.nOutputPlane do
        local b = 1 / math.sqrt(self.kW * self.kH * (fanin[o] or 1))
        self.bias:narrow(1, o, 1):uniform_(-b, b)
      end
    end
  end)
  return self
end

function M.map_repr(self)
  return string.format('%d -> %d, %dx%d, %d,%d', self.nInputPlane, self.nOutputPlane, self.kW, self.kH,
                       self.dW, self.dH)
end


-- ---- the local normalizations (nn.SpatialSubtractiveNormalization, nn.SpatialDivisiveNormalization) ----

-- M.norm_init(self, name, nin, kernel, scale_1d): Torch7's checks and fields: nInputPlane
-- (default 1), kernel (default 9x9 ones; 1-D or 2-D, odd sizes), and the buffer kernel: the
-- kernel normalized, divided by its sum times nInputPlane, or a 1-D one by its sum times
-- scale_1d(nInputPlane), as Torch7's.
function M.norm_init(self, name, nin, kernel, scale_1d)
  nn.Module.__init(self)
  self.nInputPlane = M.int_arg(nin or 1, 'nInputPlane', name, 1, 5)
  kernel = kernel or torch.ones(9, 9)
  if not torch.is_tensor(kernel) or (kernel:dim() ~= 1 and kernel:dim() ~= 2) then
    error(name .. ': the averaging kernel must be a 1-D or 2-D tensor', 5)
  end
  if not kernel:is_floating_point() then kernel = kernel:double() end
  for d = 1, kernel:dim() do
    if kernel:size(d) % 2 == 0 then
      error(string.format('%s: the averaging kernel must have odd sizes, got %s', name,
                          table.concat(kernel:size():totable(), 'x')), 5)
    end
  end
  local k = kernel:detach()
  local sum = value(k:sum())
  if sum == 0 then error(name .. ': the averaging kernel sums to 0', 5) end
  local c = self.nInputPlane
  M.norm_kernel(self, k / (sum * (k:dim() == 1 and scale_1d(c) or c)))
end

-- M.norm_kernel(self, normalized): the buffer kernel set to a kernel already normalized
-- (a Torch7 file's, kept exactly)
function M.norm_kernel(self, normalized)
  self:register_buffer('kernel', normalized:contiguous())
end

-- M.local_sums(self, x4): the weighted sums of x4 (n x nInputPlane x h x w) over the window
-- around each position, all planes together (n x 1 x h x w, zeros outside the image): a
-- convolution with the kernel (a 1-D one applied down then across: their outer product)
-- repeated over the planes
function M.local_sums(self, x4)
  local k = self.kernel:to(x4.dtype)
  if k:dim() == 1 then k = torch.outer(k, k) end
  local kh, kw = k:size(1), k:size(2)
  local filter = k:reshape(1, 1, kh, kw):expand(1, x4:size(2), kh, kw)
  return F.conv2d(x4, filter, nil, {padding = {kh // 2, kw // 2}})
end

-- M.norm_coef(self, x4): local_sums of ones, the part of the window inside the image
-- (1 x 1 x h x w), which the sums are divided by (so that the borders average over
-- fewer values); no gradient flows through it
function M.norm_coef(self, x4)
  local ones = torch.ones(1, x4:size(2), x4:size(3), x4:size(4), {dtype = x4.dtype, device = x4.device})
  return torch.no_grad(function() return M.local_sums(self, ones) end)
end

return M
