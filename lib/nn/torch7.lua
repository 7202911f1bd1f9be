-- Torch7's nn modules in Torch7 files, both ways: a module read from a .t7
-- file (its class name and its Torch7 fields) becomes the moontorch module
-- that computes the same thing, and a moontorch module is written with the
-- fields Torch7's class of that name reads. Used by lib/torch/t7format.lua.
local torch = require 'torch'
local nn = require 'nn'

local M = {}

-- ---- from Torch7 ----

-- a tensor field as a parameter of the new module (the loaded tensor itself:
-- tensors that shared a storage in the file keep sharing it)
local function param(t) return t ~= nil and nn.Parameter(t) or nil end

local function check_tensor(fields, name, key, dims)
  local t = fields[key]
  if not torch.is_tensor(t) or (dims and t:dim() ~= dims) then
    error(string.format('a Torch7 %s whose %s is %s, not a %s', name, key,
                        torch.is_tensor(t) and tostring(t:dim()) .. '-D tensor' or torch.type(t),
                        dims and dims .. '-D tensor' or 'tensor'), 0)
  end
  return t
end

local function integer(fields, name, key, default)
  local v = fields[key]
  if v == nil then v = default end
  if math.type(v) ~= 'integer' then
    error(string.format('a Torch7 %s whose %s is %s, not an integer', name, key, tostring(v)), 0)
  end
  return v
end

-- Torch7 class name -> function(fields) giving the moontorch module
local from = {}

from['nn.Linear'] = function(f)
  local w = check_tensor(f, 'nn.Linear', 'weight', 2)
  local m = nn.Linear(w:size(2), w:size(1), {bias = f.bias ~= nil, dtype = w.dtype})
  m.weight, m.bias = param(w), param(f.bias)
  return m
end

local function conv(f, name)
  local w = check_tensor(f, name, 'weight')
  local nin, nout = integer(f, name, 'nInputPlane'), integer(f, name, 'nOutputPlane')
  local kw, kh = integer(f, name, 'kW'), integer(f, name, 'kH')
  if w:numel() ~= nout * nin * kh * kw then
    error(string.format('a Torch7 %s whose weight has %d values, not %dx%dx%dx%d', name, w:numel(), nout, nin, kh, kw), 0)
  end
  local m = nn.SpatialConvolution(nin, nout, kw, kh, integer(f, name, 'dW', 1), integer(f, name, 'dH', 1),
                                  integer(f, name, 'padW', 0), integer(f, name, 'padH', 0))
  m.weight = param(w:dim() == 4 and w or w:reshape(nout, nin, kh, kw))
  m.bias = param(f.bias)
  return m
end
from['nn.SpatialConvolution'] = function(f) return conv(f, 'nn.SpatialConvolution') end
from['nn.SpatialConvolutionMM'] = function(f) return conv(f, 'nn.SpatialConvolutionMM') end

from['nn.SpatialMaxPooling'] = function(f)
  local name = 'nn.SpatialMaxPooling'
  local kw, kh = integer(f, name, 'kW'), integer(f, name, 'kH')
  return nn.MaxPool2d({kh, kw}, {stride = {integer(f, name, 'dH', kh), integer(f, name, 'dW', kw)},
                                 padding = {integer(f, name, 'padH', 0), integer(f, name, 'padW', 0)},
                                 ceil_mode = f.ceil_mode == true})
end

local function container(cls, name)
  return function(f)
    local m = cls()
    for i, child in ipairs(f.modules or {}) do
      if not nn.is_module(child) then
        error(string.format('a Torch7 %s whose module %d is a %s', name, i, torch.type(child)), 0)
      end
      m:add(child)
    end
    return m
  end
end
from['nn.Sequential'] = container(nn.Sequential, 'nn.Sequential')

from['nn.Dropout'] = function(f) return nn.Dropout(type(f.p) == 'number' and f.p or 0.5) end
from['nn.SoftMax'] = function() return nn.Softmax(-1) end
from['nn.LogSoftMax'] = function() return nn.LogSoftmax(-1) end
for _, name in ipairs({'ReLU', 'Tanh', 'Sigmoid', 'Identity', 'ReLU6', 'LogSigmoid'}) do
  local cls = nn[name]
  if cls then from['nn.' .. name] = function() return cls() end end
end

-- Torch7's modules that moontorch defines under the same name, keeping Torch7's
-- settings in fields of Torch7's names: those fields, in the constructor's order
local same_name = {
  ['nn.Abs'] = {}, ['nn.Square'] = {}, ['nn.Sqrt'] = {}, ['nn.Exp'] = {}, ['nn.Log'] = {}, ['nn.SoftSign'] = {},
  ['nn.TanhShrink'] = {}, ['nn.Contiguous'] = {}, ['nn.Power'] = {'pow'}, ['nn.MulConstant'] = {'constant_scalar'},
  ['nn.AddConstant'] = {'constant_scalar'}, ['nn.Clamp'] = {'min_val', 'max_val'}, ['nn.HardShrink'] = {'lambda'},
  ['nn.SoftShrink'] = {'lambda'}, ['nn.Threshold'] = {'threshold', 'val'}, ['nn.GatedLinearUnit'] = {'dim'},
  ['nn.SplitTable'] = {'dimension', 'nInputDims'}, ['nn.JoinTable'] = {'dimension', 'nInputDims'},
  ['nn.NarrowTable'] = {'offset', 'length'}, ['nn.SelectTable'] = {'index'}, ['nn.FlattenTable'] = {},
  ['nn.CAddTable'] = {'inplace'}, ['nn.CSubTable'] = {}, ['nn.CMulTable'] = {}, ['nn.CDivTable'] = {},
  ['nn.CMaxTable'] = {}, ['nn.CMinTable'] = {}, ['nn.DotProduct'] = {}, ['nn.CosineDistance'] = {},
  ['nn.PairwiseDistance'] = {'norm'}, ['nn.MixtureTable'] = {'dim'}, ['nn.MM'] = {'transA', 'transB'}, ['nn.MV'] = {'trans'},
  ['nn.Max'] = {'dimension', 'nInputDims'}, ['nn.Min'] = {'dimension', 'nInputDims'},
  ['nn.Mean'] = {'dimension', 'nInputDims'}, ['nn.Sum'] = {'dimension', 'nInputDims', 'sizeAverage', 'squeeze'},
  ['nn.Narrow'] = {'dimension', 'index', 'length'}, ['nn.Select'] = {'dimension', 'index'},
  ['nn.Replicate'] = {'nfeatures', 'dim', 'ndim'}, ['nn.Squeeze'] = {'dim', 'numInputDims'},
  ['nn.Unsqueeze'] = {'pos', 'numInputDims'}, ['nn.Padding'] = {'dim', 'pad', 'nInputDim', 'value', 'index'},
  ['nn.Index'] = {'dimension'}, ['nn.Collapse'] = {'nInputDim'}, ['nn.Normalize'] = {'p', 'eps'},
  ['nn.OneHot'] = {'outputSize'}, ['nn.GradientReversal'] = {'lambda'}, ['nn.ZeroGrad'] = {},
  ['nn.CReLU'] = {'nInputDims', 'inplace'}, ['nn.RReLU'] = {'lower', 'upper', 'inplace'}, ['nn.SpatialSoftMax'] = {},
  ['nn.Constant'] = {'value', 'nInputDim'}, ['nn.Copy'] = {'intype', 'outtype', 'forceCopy', 'dontCast'},
  ['nn.HardTanh'] = {'min_val', 'max_val'}, ['nn.ELU'] = {'alpha'}, ['nn.SoftPlus'] = {'beta', 'threshold'},
  ['nn.TemporalMaxPooling'] = {'kW', 'dW'},
  ['nn.PixelShuffle'] = {'upscaleFactor'}, ['nn.LeakyReLU'] = {'negval', 'inplace'},   -- t7layers
}
-- Torch7's containers of the same name: their settings' fields, in the constructor's order
local same_name_containers = {
  ['nn.ConcatTable'] = {}, ['nn.ParallelTable'] = {}, ['nn.Concat'] = {'dimension'}, ['nn.DepthConcat'] = {'dimension'},
  ['nn.Parallel'] = {'inputDimension', 'outputDimension'},
}
for class, keys in pairs(same_name_containers) do
  from[class] = function(f)
    local args = {}
    for i, k in ipairs(keys) do args[i] = f[k] end
    local cls = nn[class:sub(4)]
    return container(function() return cls(table.unpack(args, 1, #keys)) end, class)(f)
  end
end
from['nn.MapTable'] = function(f) return nn.MapTable(f.module, f.shared) end
for class, keys in pairs(same_name) do
  from[class] = function(f)
    local args = {}
    for i, k in ipairs(keys) do args[i] = f[k] end
    return nn[class:sub(4)](table.unpack(args, 1, #keys))
  end
end

from['nn.SoftMin'] = function() return nn.Softmin(-1) end
from['nn.Transpose'] = function(f) return nn.Transpose(table.unpack(f.permutations or {})):setNumInputDims(f.numInputDims) end
from['nn.LookupTable'] = function(f)                               -- t7layers
  local w = check_tensor(f, 'nn.LookupTable', 'weight', 2)
  local pad = math.tointeger(f.paddingValue or 0)
  if pad == nil then error('a Torch7 nn.LookupTable whose paddingValue is ' .. tostring(f.paddingValue), 0) end
  local m = nn.LookupTable(w:size(1), w:size(2), pad, f.maxNorm, f.normType)
  m.weight = param(w)
  if f.shouldScaleGradByFreq == true then m:scaleGradByFreq() end
  return m
end
from['nn.View'] = function(f)                                      -- t7layers
  local size = f.size
  if torch.isStorage(size) or torch.is_tensor(size) then size = size:totable() end
  if type(size) ~= 'table' then error('a Torch7 nn.View without its sizes', 0) end
  local m = nn.View(size)
  local n = f.numInputDims
  if n ~= nil then m:setNumInputDims(math.tointeger(n) or n) end
  return m
end
from['nn.SpatialUpSamplingBilinear'] = function(f)                -- t7layers
  if f.scale_factor ~= nil then
    return nn.SpatialUpSamplingBilinear(integer(f, 'nn.SpatialUpSamplingBilinear', 'scale_factor'))
  end
  return nn.SpatialUpSamplingBilinear({oheight = integer(f, 'nn.SpatialUpSamplingBilinear', 'oheight'),
                                       owidth = integer(f, 'nn.SpatialUpSamplingBilinear', 'owidth')})
end
from['nn.UpSampling'] = function(f)                                -- t7layers
  if f.scale_factor ~= nil then return nn.UpSampling(integer(f, 'nn.UpSampling', 'scale_factor'), f.mode) end
  return nn.UpSampling({oheight = integer(f, 'nn.UpSampling', 'oheight'), owidth = integer(f, 'nn.UpSampling', 'owidth'),
                        odepth = f.odepth}, f.mode)
end
from['nn.SpatialUpSamplingNearest'] = function(f)
  return nn.SpatialUpSamplingNearest(integer(f, 'nn.SpatialUpSamplingNearest', 'scale_factor'))
end
from['nn.SpatialFullConvolution'] = function(f)
  local name = 'nn.SpatialFullConvolution'
  local w = check_tensor(f, name, 'weight', 4)
  local m = nn.SpatialFullConvolution(integer(f, name, 'nInputPlane'), integer(f, name, 'nOutputPlane'),
                                      integer(f, name, 'kW'), integer(f, name, 'kH'), integer(f, name, 'dW', 1),
                                      integer(f, name, 'dH', 1), integer(f, name, 'padW', 0), integer(f, name, 'padH', 0),
                                      integer(f, name, 'adjW', 0), integer(f, name, 'adjH', 0))
  m.weight, m.bias = param(w), param(f.bias)
  return m
end

-- Torch7's layers with parameter tensors: the parameters' names, and the module made
-- from the fields (the parameters then set to the loaded tensors)
local with_params = {
  ['nn.Add'] = {{'bias'}, function(f) return nn.Add(f.bias:size(1), f.scalar) end},
  ['nn.CAdd'] = {{'bias'}, function(f) return nn.CAdd(f.bias:size()) end},
  ['nn.Mul'] = {{'weight'}, function() return nn.Mul() end},
  ['nn.CMul'] = {{'weight'}, function(f) return nn.CMul(f.weight:size()) end},
  ['nn.Euclidean'] = {{'weight'}, function(f) return nn.Euclidean(f.weight:size(1), f.weight:size(2)) end},
  ['nn.WeightedEuclidean'] = {{'weight', 'diagCov'},
                              function(f) return nn.WeightedEuclidean(f.weight:size(1), f.weight:size(2)) end},
  ['nn.Cosine'] = {{'weight'}, function(f) return nn.Cosine(f.weight:size(2), f.weight:size(1)) end},
  ['nn.PReLU'] = {{'weight'}, function(f)                        -- t7layers
    return nn.PReLU(math.type(f.nOutputPlane) == 'integer' and f.nOutputPlane > 0 and f.nOutputPlane or nil)
  end},
}
for class, spec in pairs(with_params) do
  from[class] = function(f)
    for _, k in ipairs(spec[1]) do check_tensor(f, class, k) end
    local m = spec[2](f)
    for _, k in ipairs(spec[1]) do m[k] = param(f[k]) end
    return m
  end
end

-- M.can_map(class): whether a Torch7 module of that class can be loaded
function M.can_map(class) return from[class] ~= nil end

-- M.from_torch7(class, fields): the moontorch module of a Torch7 one, or nil
-- and the reason; Torch7's train flag false gives a module in eval mode.
function M.from_torch7(class, fields)
  local make = from[class]
  if not make then return nil, 'moontorch has no counterpart of this Torch7 module' end
  local rng = torch.get_rng_state()             -- constructors draw initial weights
  local ok, m = pcall(make, fields)
  torch.set_rng_state(rng)
  if not ok then return nil, tostring(m) end
  if fields.train == false then m:eval() end
  return m
end

-- ---- to Torch7 ----

local function empty_like(t) return torch.empty(0, {dtype = t and t.dtype or torch.get_default_dtype()}) end

-- the fields every Torch7 module has
local function base(m, dtype_of)
  return {output = empty_like(dtype_of), gradInput = empty_like(dtype_of), train = m.training}
end

local function pair(v, i)
  if type(v) == 'table' then return v[i] end
  return v
end

local to = {}

to['nn.Linear'] = function(m)
  local f = base(m, m.weight)
  f.weight, f.bias = m.weight, m.bias
  f.gradWeight = torch.zeros_like(m.weight)
  if m.bias then f.gradBias = torch.zeros_like(m.bias) end
  return 'nn.Linear', f
end

to['nn.Conv2d'] = function(m)
  if m.groups ~= 1 or pair(m.dilation, 1) ~= 1 or pair(m.dilation, 2) ~= 1 or m.padding_mode ~= 'zeros'
     or type(m.padding) == 'string' then
    return nil
  end
  local f = base(m, m.weight)
  f.nInputPlane, f.nOutputPlane = m.in_channels, m.out_channels
  f.kH, f.kW = m.kernel_size[1], m.kernel_size[2]
  f.dH, f.dW = pair(m.stride, 1), pair(m.stride, 2)
  f.padH, f.padW = pair(m.padding, 1), pair(m.padding, 2)
  f.weight, f.bias = m.weight, m.bias
  f.gradWeight = torch.zeros_like(m.weight)
  if m.bias then f.gradBias = torch.zeros_like(m.bias) end
  return 'nn.SpatialConvolution', f
end

to['nn.MaxPool2d'] = function(m)
  local f = base(m)
  local stride = m.stride or m.kernel_size
  f.kH, f.kW = pair(m.kernel_size, 1), pair(m.kernel_size, 2)
  f.dH, f.dW = pair(stride, 1), pair(stride, 2)
  f.padH, f.padW = pair(m.padding, 1), pair(m.padding, 2)
  f.ceil_mode = m.opts and m.opts.ceil_mode == true
  f.indices = torch.empty(0, {dtype = 'int64'})
  return 'nn.SpatialMaxPooling', f
end

to['nn.Sequential'] = function(m)
  local f = base(m)
  f.modules = m:children()
  return 'nn.Sequential', f
end

to['nn.Dropout'] = function(m)
  local f = base(m)
  f.p, f.v2, f.noise = m.p, true, empty_like()
  return 'nn.Dropout', f
end

local function last_dim(torch7_name)
  return function(m)
    if m.dim ~= -1 then return nil end
    return torch7_name, base(m)
  end
end
to['nn.Softmax'] = last_dim('nn.SoftMax')
to['nn.LogSoftmax'] = last_dim('nn.LogSoftMax')
to['nn.ReLU'] = function(m)
  local f = base(m)
  f.threshold, f.val, f.inplace = 0, 0, false
  return 'nn.ReLU', f
end
for _, name in ipairs({'Tanh', 'Sigmoid', 'Identity', 'LogSigmoid'}) do
  to['nn.' .. name] = function(m) return 'nn.' .. name, base(m) end
end

for class, keys in pairs(same_name) do
  to[class] = function(m)
    local f = base(m)
    for _, k in ipairs(keys) do f[k] = m[k] end
    return class, f
  end
end

for class, keys in pairs(same_name_containers) do
  to[class] = function(m)
    local f = base(m)
    for _, k in ipairs(keys) do f[k] = m[k] end
    f.modules = m:children()
    return class, f
  end
end
to['nn.MapTable'] = function(m)
  local f = base(m)
  f.module, f.modules, f.shared = m.module, {m.module}, m.shared
  return 'nn.MapTable', f
end
-- moontorch's modules whose Torch7 class has another name: that name and the fields
local renamed = {['nn.Hardtanh'] = 'nn.HardTanh', ['nn.Softplus'] = 'nn.SoftPlus'}
for ours, class in pairs(renamed) do
  to[ours] = function(m)
    local name, f = to[class](m)
    f.inplace = false
    return name, f
  end
end
to['nn.ELU'] = function(m)
  local f = base(m)
  f.alpha, f.inplace = m.alpha, false
  return 'nn.ELU', f
end
to['nn.Softmin'] = last_dim('nn.SoftMin')
to['nn.Transpose'] = function(m)
  local f = base(m)
  f.permutations, f.numInputDims = m.permutations, m.numInputDims
  return 'nn.Transpose', f
end
local temporal_max_pooling = to['nn.TemporalMaxPooling']
to['nn.TemporalMaxPooling'] = function(m)
  local name, f = temporal_max_pooling(m)
  f.indices = torch.empty(0, {dtype = 'int64'})
  return name, f
end
to['nn.Upsample'] = function(m)
  local s = m.scale_factor
  if m.mode ~= 'nearest' or m.size or math.type(s) ~= 'integer' then return nil end
  local f = base(m)
  f.scale_factor, f.inputSize, f.outputSize = s, torch.LongStorage(4), torch.LongStorage(4)
  return 'nn.SpatialUpSamplingNearest', f
end
to['nn.ConvTranspose2d'] = function(m)
  if m.groups ~= 1 or pair(m.dilation, 1) ~= 1 or pair(m.dilation, 2) ~= 1 then return nil end
  local f = base(m, m.weight)
  f.nInputPlane, f.nOutputPlane = m.in_channels, m.out_channels
  f.kH, f.kW = m.kernel_size[1], m.kernel_size[2]
  f.dH, f.dW = pair(m.stride, 1), pair(m.stride, 2)
  f.padH, f.padW = pair(m.padding, 1), pair(m.padding, 2)
  f.adjH, f.adjW = pair(m.output_padding, 1), pair(m.output_padding, 2)
  f.weight, f.bias = m.weight, m.bias
  f.gradWeight = torch.zeros_like(m.weight)
  if m.bias then f.gradBias = torch.zeros_like(m.bias) end
  return 'nn.SpatialFullConvolution', f
end
for class, spec in pairs(with_params) do
  to[class] = function(m)
    local f = base(m, m[spec[1][1]])
    for _, k in ipairs(spec[1]) do
      f[k] = m[k]
      f['grad' .. k:sub(1, 1):upper() .. k:sub(2)] = torch.zeros_like(m[k])
    end
    if m.size then f.size = torch.LongStorage(m.size) end
    f.scalar = m.scalar
    return class, f
  end
end
to['nn.LookupTable'] = function(m)                               -- t7layers
  local f = base(m, m.weight)
  f.weight, f.gradWeight = m.weight, torch.zeros_like(m.weight)
  f.paddingValue, f.maxNorm, f.normType = m.paddingValue, m.maxNorm, m.normType
  f.shouldScaleGradByFreq = m.shouldScaleGradByFreq == true
  f._count, f._input = torch.empty(0, {dtype = 'int32'}), torch.empty(0, {dtype = 'int64'})
  return 'nn.LookupTable', f
end
to['nn.View'] = function(m)                                      -- t7layers
  local f = base(m)
  f.size, f.numElements, f.numInputDims = torch.LongStorage(m.size), m.numElements, m.numInputDims
  return 'nn.View', f
end
to['nn.SpatialUpSamplingBilinear'] = function(m)                 -- t7layers
  local f = base(m)
  if m.scale then f.scale_factor = m.scale else f.oheight, f.owidth = m.size[1], m.size[2] end
  f.inputSize, f.outputSize = torch.LongStorage(4), torch.LongStorage(4)
  return 'nn.SpatialUpSamplingBilinear', f
end
to['nn.UpSampling'] = function(m)                                -- t7layers
  local f = base(m)
  f.mode, f.scale_factor, f.oheight, f.owidth, f.odepth = m.mode, m.scale_factor, m.oheight, m.owidth, m.odepth
  f.inputSize, f.outputSize = torch.LongStorage(5):fill(0), torch.LongStorage(5):fill(0)
  return 'nn.UpSampling', f
end
local prelu_fields = to['nn.PReLU']
to['nn.PReLU'] = function(m)                                     -- t7layers
  local class, f = prelu_fields(m)
  f.nOutputPlane = m.nOutputPlane or (m.weight:numel() > 1 and m.weight:numel() or 0)
  return class, f
end

-- M.to_torch7(module): the Torch7 class name and the fields Torch7 reads for
-- it, or nil when the module has no Torch7 form here
function M.to_torch7(m)
  local mt = getmetatable(m)
  local make = to[mt and mt.__typename]
  if not make then return nil end
  return make(m)
end

return M
