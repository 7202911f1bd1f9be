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
  local m
  if name == 'nn.SpatialDilatedConvolution' then
    m = nn.SpatialDilatedConvolution(nin, nout, kw, kh, integer(f, name, 'dW', 1), integer(f, name, 'dH', 1),
                                     integer(f, name, 'padW', 0), integer(f, name, 'padH', 0),
                                     integer(f, name, 'dilationW', 1), integer(f, name, 'dilationH', 1))
  else
    m = nn.SpatialConvolution(nin, nout, kw, kh, integer(f, name, 'dW', 1), integer(f, name, 'dH', 1),
                              integer(f, name, 'padW', 0), integer(f, name, 'padH', 0))
  end
  m.weight = param(w:dim() == 4 and w or w:reshape(nout, nin, kh, kw))
  m.bias = param(f.bias)
  return m
end
from['nn.SpatialConvolution'] = function(f) return conv(f, 'nn.SpatialConvolution') end
from['nn.SpatialDilatedConvolution'] = function(f) return conv(f, 'nn.SpatialDilatedConvolution') end

-- Torch7's max poolings: nn.SpatialMaxPooling and its dilated form, with the indices and input
-- size of their last forward (nn.SpatialMaxUnpooling reads them)
local function max_pooling(name)
  return function(f)
    local m = nn.SpatialDilatedMaxPooling(integer(f, name, 'kW'), integer(f, name, 'kH'), integer(f, name, 'dW', f.kW),
                                          integer(f, name, 'dH', f.kH), integer(f, name, 'padW', 0),
                                          integer(f, name, 'padH', 0), integer(f, name, 'dilationW', 1),
                                          integer(f, name, 'dilationH', 1))
    if f.ceil_mode == true then m:ceil() end
    if torch.is_tensor(f.indices) and f.indices:numel() > 0 and math.type(f.iheight) == 'integer'
       and math.type(f.iwidth) == 'integer' then
      m.indices, m.iheight, m.iwidth = f.indices:to('int64'), f.iheight, f.iwidth
    end
    return m
  end
end
from['nn.SpatialMaxPooling'] = max_pooling('nn.SpatialMaxPooling')
from['nn.SpatialDilatedMaxPooling'] = max_pooling('nn.SpatialDilatedMaxPooling')
from['nn.SpatialAveragePooling'] = function(f)
  local name = 'nn.SpatialAveragePooling'
  local m = nn.SpatialAveragePooling(integer(f, name, 'kW'), integer(f, name, 'kH'), integer(f, name, 'dW', 1),
                                     integer(f, name, 'dH', 1), integer(f, name, 'padW', 0), integer(f, name, 'padH', 0))
  if f.ceil_mode == true then m:ceil() end
  if f.count_include_pad == false then m:setCountExcludePad() end
  if f.divide == false then m.opts.divisor_override = 1 end     -- Torch7's old sums
  return m
end
from['nn.SpatialAdaptiveMaxPooling'] = function(f)
  return nn.SpatialAdaptiveMaxPooling(integer(f, 'nn.SpatialAdaptiveMaxPooling', 'W'),
                                      integer(f, 'nn.SpatialAdaptiveMaxPooling', 'H'))
end
from['nn.SpatialAdaptiveAveragePooling'] = function(f)
  return nn.SpatialAdaptiveAveragePooling(integer(f, 'nn.SpatialAdaptiveAveragePooling', 'W'),
                                          integer(f, 'nn.SpatialAdaptiveAveragePooling', 'H'))
end
from['nn.SpatialMaxUnpooling'] = function(f)
  if not nn.is_module(f.pooling) then error('a Torch7 nn.SpatialMaxUnpooling without its pooling module', 0) end
  return nn.SpatialMaxUnpooling(f.pooling)
end
-- Torch7's SpatialLPPooling is a Sequential (power, average, multiplication, root): the norm
-- from its first module when the file has no pnorm
from['nn.SpatialLPPooling'] = function(f)
  local name = 'nn.SpatialLPPooling'
  local p = f.pnorm
  local first = type(f.modules) == 'table' and f.modules[1]
  if p == nil and nn.is_module(first) then
    if torch.typename(first) == 'nn.Square' then p = 2 else p = first.pow end
  end
  if type(p) ~= 'number' then error('a Torch7 ' .. name .. ' whose norm cannot be read', 0) end
  return nn.SpatialLPPooling(f.nInputPlane or 0, p, integer(f, name, 'kW'), integer(f, name, 'kH'),
                             integer(f, name, 'dW', f.kW), integer(f, name, 'dH', f.kH))
end
from['nn.SpatialFractionalMaxPooling'] = function(f)
  local name = 'nn.SpatialFractionalMaxPooling'
  local m = nn.SpatialFractionalMaxPooling(integer(f, name, 'poolSizeW'), integer(f, name, 'poolSizeH'),
                                           f.outW or f.ratioW, f.outH or f.ratioH)
  m.newRandomPool = f.newRandomPool == true
  if torch.is_tensor(f.randomSamples) then m.randomSamples = f.randomSamples end
  return m
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
  ['nn.SpatialCrossMapLRN'] = {'size', 'alpha', 'beta', 'k'}, ['nn.SpatialLogSoftMax'] = {},
  ['nn.FeatureLPPooling'] = {'width', 'stride', 'power', 'batch_mode'},
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
    return (nn[class:sub(4)](table.unpack(args, 1, #keys)))
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

-- ---- Torch7's simple modules (t7simple): from ----
-- settings' fields, in the constructor's order
local simple_same_name = {
  ['nn.ZipTable'] = {}, ['nn.ZipTableOneToMany'] = {}, ['nn.CAddTensorTable'] = {}, ['nn.MaskedSelect'] = {},
  ['nn.L1Penalty'] = {'l1weight', 'sizeAverage', 'provideOutput'}, ['nn.WhiteNoise'] = {'mean', 'std'},
  ['nn.Convert'] = {'inputShape', 'outputShape'},
}
for class, keys in pairs(simple_same_name) do
  from[class] = function(f)
    local args = {}
    for i, k in ipairs(keys) do args[i] = f[k] end
    return (nn[class:sub(4)](table.unpack(args, 1, #keys)))
  end
end
-- the decorators: their child is modules[1]
local function decorated(f, name)
  local child = f.modules and f.modules[1]
  if not nn.is_module(child) then error(string.format('a Torch7 %s without a module', name), 0) end
  return child
end
from['nn.Bottle'] = function(f) return nn.Bottle(decorated(f, 'nn.Bottle'), f.nInputDim, f.nOutputDim) end
from['nn.Profile'] = function(f) return nn.Profile(decorated(f, 'nn.Profile'), f.print_interval, f.name) end
from['nn.DontCast'] = function(f)
  return nn.DontCast(decorated(f, 'nn.DontCast'), f.castin, f.castout, f.moduleType)
end
from['nn.LinearWeightNorm'] = function(f)
  local v = check_tensor(f, 'nn.LinearWeightNorm', 'v', 2)
  local g = check_tensor(f, 'nn.LinearWeightNorm', 'g')
  local m = nn.LinearWeightNorm(v:size(2), v:size(1), f.bias ~= nil, f.eps)
  m.v, m.g, m.bias = param(v), param(g:reshape(v:size(1), 1)), param(f.bias)
  m:updateWeightMatrix()
  return m
end
from['nn.PartialLinear'] = function(f)
  local name = 'nn.PartialLinear'
  if not nn.is_module(f.network) then error('a Torch7 nn.PartialLinear without its network', 0) end
  local m = nn.PartialLinear(integer(f, name, 'inputsize'), integer(f, name, 'outputsize'), f.bias ~= nil)
  m.network = f.network
  if f.bias ~= nil then m.bias = param(check_tensor(f, name, 'bias', 2)) end
  if torch.is_tensor(f.partition) then m:setPartition(f.partition) end
  return m
end
-- the layers whose parameters are plain tensors (as Torch7's): the fields taken as they are
local function plain_fields(m, f, names)
  for _, k in ipairs(names) do
    if f[k] ~= nil then rawget(m, '_fields')[k] = f[k] end
  end
  nn.Module._restructured()
  return m
end
from['nn.SparseLinear'] = function(f)
  local w = check_tensor(f, 'nn.SparseLinear', 'weight', 2)
  local m = nn.SparseLinear(w:size(2), w:size(1), f.doGradInput == true)
  return plain_fields(m, f, {'weight', 'bias', 'gradWeight', 'gradBias'})
end
from['nn.IndexLinear'] = function(f)
  local w = check_tensor(f, 'nn.IndexLinear', 'weight', 2)
  if (f.normalize or 0) ~= 0 then error('a Torch7 nn.IndexLinear with normalize: moontorch does not support it', 0) end
  local m = nn.IndexLinear(w:size(1), w:size(2), f.doGradInput == true, (f.offset or -1) + 1, w,
                           check_tensor(f, 'nn.IndexLinear', 'bias', 1))
  return plain_fields(m, f, {'gradBias'})
end
from['nn.Kmeans'] = function(f)
  local w = check_tensor(f, 'nn.Kmeans', 'weight', 2)
  local m = nn.Kmeans(w:size(1), w:size(2), f.scale)
  return plain_fields(m, f, {'weight', 'gradWeight', 'clusterSampleCount', 'loss', 'p'})
end
-- Torch7's batch normalizations: nDim tells the input's dims, as moontorch's classes
local function batch_norm_from(cls, name)
  return function(f)
    local mean = check_tensor(f, name, 'running_mean', 1)
    local m = cls(mean:size(1), {eps = f.eps, momentum = f.momentum, affine = f.affine ~= false and f.weight ~= nil,
                                 dtype = mean.dtype})
    if m.affine then m.weight, m.bias = param(check_tensor(f, name, 'weight', 1)), param(f.bias) end
    m.running_mean = mean
    m.running_var = check_tensor(f, name, 'running_var', 1)
    return m
  end
end
from['nn.BatchNormalization'] = batch_norm_from(nn.BatchNorm1d, 'nn.BatchNormalization')
from['nn.SpatialBatchNormalization'] = batch_norm_from(nn.BatchNorm2d, 'nn.SpatialBatchNormalization')

from['nn.Reshape'] = function(f)
  local size = f.size
  if torch.isStorage(size) or torch.typename(size) == 'torch.Size' then size = size:totable() end
  if type(size) ~= 'table' or #size == 0 then error('a Torch7 nn.Reshape without its size', 0) end
  for _, s in ipairs(size) do
    if math.type(s) ~= 'integer' then error('a Torch7 nn.Reshape whose size holds ' .. tostring(s), 0) end
  end
  if f.batchMode ~= nil and type(f.batchMode) ~= 'boolean' then
    error('a Torch7 nn.Reshape whose batchMode is ' .. torch.type(f.batchMode), 0)
  end
  if f.batchMode ~= nil then size[#size + 1] = f.batchMode end
  return nn.Reshape(table.unpack(size))
end

-- the modules another package maps (M.register), loaded when a file names them
local elsewhere = {['nn.gModule'] = 'nngraph', ['nn.ModuleFromCriterion'] = 'nngraph'}
local function mapping(class)
  if from[class] == nil and elsewhere[class] then require(elsewhere[class]) end
  return from[class]
end

-- M.can_map(class): whether a Torch7 module of that class can be loaded
function M.can_map(class) return mapping(class) ~= nil end

-- M.from_torch7(class, fields): the moontorch module of a Torch7 one, or nil
-- and the reason; Torch7's train flag false gives a module in eval mode.
function M.from_torch7(class, fields)
  local make = mapping(class)
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
  if m.groups ~= 1 or m.padding_mode ~= 'zeros' or type(m.padding) == 'string' then
    return nil
  end
  local f = base(m, m.weight)
  local dilated = pair(m.dilation, 1) ~= 1 or pair(m.dilation, 2) ~= 1
  if dilated then f.dilationH, f.dilationW = pair(m.dilation, 1), pair(m.dilation, 2) end
  f.nInputPlane, f.nOutputPlane = m.in_channels, m.out_channels
  f.kH, f.kW = m.kernel_size[1], m.kernel_size[2]
  f.dH, f.dW = pair(m.stride, 1), pair(m.stride, 2)
  f.padH, f.padW = pair(m.padding, 1), pair(m.padding, 2)
  f.weight, f.bias = m.weight, m.bias
  f.gradWeight = torch.zeros_like(m.weight)
  if m.bias then f.gradBias = torch.zeros_like(m.bias) end
  return dilated and 'nn.SpatialDilatedConvolution' or 'nn.SpatialConvolution', f
end

to['nn.MaxPool2d'] = function(m)
  local f = base(m)
  local stride = m.stride or m.kernel_size
  f.kH, f.kW = pair(m.kernel_size, 1), pair(m.kernel_size, 2)
  f.dH, f.dW = pair(stride, 1), pair(stride, 2)
  f.padH, f.padW = pair(m.padding, 1), pair(m.padding, 2)
  f.ceil_mode = m.opts and m.opts.ceil_mode == true
  f.indices = m.indices or torch.empty(0, {dtype = 'int64'})
  f.iheight, f.iwidth = m.iheight, m.iwidth
  local dilation = m.opts and m.opts.dilation or 1
  if pair(dilation, 1) ~= 1 or pair(dilation, 2) ~= 1 then
    f.dilationH, f.dilationW = pair(dilation, 1), pair(dilation, 2)
    return 'nn.SpatialDilatedMaxPooling', f
  end
  return 'nn.SpatialMaxPooling', f
end
to['nn.AvgPool2d'] = function(m)
  local o = m.opts or {}
  if o.divisor_override ~= nil and o.divisor_override ~= 1 then return nil end
  local f = base(m)
  local stride = m.stride or m.kernel_size
  f.kH, f.kW = pair(m.kernel_size, 1), pair(m.kernel_size, 2)
  f.dH, f.dW = pair(stride, 1), pair(stride, 2)
  f.padH, f.padW = pair(m.padding, 1), pair(m.padding, 2)
  f.ceil_mode, f.count_include_pad, f.divide = o.ceil_mode == true, o.count_include_pad ~= false, o.divisor_override == nil
  return 'nn.SpatialAveragePooling', f
end
local function adaptive(torch7_name)
  return function(m)
    local s = m.output_size
    local h, w = pair(s, 1), pair(s, 2)
    if math.type(h) ~= 'integer' or math.type(w) ~= 'integer' then return nil end   -- a nil entry keeps a dim
    local f = base(m)
    f.W, f.H = w, h
    return torch7_name, f
  end
end
to['nn.AdaptiveMaxPool2d'] = adaptive('nn.SpatialAdaptiveMaxPooling')
to['nn.AdaptiveAvgPool2d'] = adaptive('nn.SpatialAdaptiveAveragePooling')
to['nn.SpatialMaxUnpooling'] = function(m)
  local f = base(m)
  f.pooling = m.pooling
  return 'nn.SpatialMaxUnpooling', f
end
to['nn.SpatialLPPooling'] = function(m)
  local f = base(m)
  f.nInputPlane, f.pnorm, f.kW, f.kH, f.dW, f.dH = m.nInputPlane, m.pnorm, m.kW, m.kH, m.dW, m.dH
  local p = m.pnorm
  f.modules = {p == 2 and nn.Square() or nn.Power(p), nn.SpatialAveragePooling(m.kW, m.kH, m.dW, m.dH),
               nn.MulConstant(m.kW * m.kH), p == 2 and nn.Sqrt() or nn.Power(1 / p)}
  return 'nn.SpatialLPPooling', f
end
to['nn.SpatialFractionalMaxPooling'] = function(m)
  local f = base(m)
  for _, k in ipairs({'poolSizeW', 'poolSizeH', 'outW', 'outH', 'ratioW', 'ratioH', 'newRandomPool',
                      'randomSamples', 'indices'}) do
    f[k] = m[k]
  end
  return 'nn.SpatialFractionalMaxPooling', f
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

-- Torch7's spatial convolution classes kept in Torch7's own layout (weight and bias of
-- Torch7's shapes, its integer fields, connTable where it has one): the constructor's
-- arguments read from the fields, then the weight and bias (a missing bias: noBias)
local spatial7 = {
  ['nn.SpatialConvolutionMM'] = {'nInputPlane', 'nOutputPlane', 'kW', 'kH', 'dW', 'dH', 'padW', 'padH'},
  ['nn.SpatialDepthWiseConvolution'] = {'nInputPlane', 'nOutputPlane', 'kW', 'kH', 'dW', 'dH', 'padW', 'padH'},
  ['nn.SpatialConvolutionLocal'] = {'nInputPlane', 'nOutputPlane', 'iW', 'iH', 'kW', 'kH', 'dW', 'dH', 'padW', 'padH'},
  ['nn.SpatialSubSampling'] = {'nInputPlane', 'kW', 'kH', 'dW', 'dH'},
  ['nn.SpatialConvolutionMap'] = {'connTable', 'kW', 'kH', 'dW', 'dH'},
  ['nn.SpatialFullConvolutionMap'] = {'connTable', 'kW', 'kH', 'dW', 'dH'},
}
for class, keys in pairs(spatial7) do
  from[class] = function(f)
    local args = {}
    for i, k in ipairs(keys) do
      if k == 'connTable' then args[i] = check_tensor(f, class, k, 2) else args[i] = integer(f, class, k) end
    end
    local w = check_tensor(f, class, 'weight')
    local m = nn[class:sub(4)](table.unpack(args, 1, #keys))
    if w:numel() ~= m.weight:numel() then
      error(string.format('a Torch7 %s whose weight has %d values, not %d', class, w:numel(), m.weight:numel()), 0)
    end
    m.weight = param(w:is_contiguous() and w:view(m.weight:size()) or w:reshape(m.weight:size()))
    if f.bias == nil and m.noBias then m:noBias() else m.bias = param(check_tensor(f, class, 'bias')) end
    return m
  end
  to[class] = function(m)
    local f = base(m, m.weight)
    for _, k in ipairs(keys) do f[k] = m[k] end
    f.weight, f.bias = m.weight, m.bias
    f.gradWeight = torch.zeros_like(m.weight)
    if m.bias then f.gradBias = torch.zeros_like(m.bias) end
    return class, f
  end
end

-- Torch7's local normalizations: their settings (the kernel as Torch7 keeps it,
-- normalized, taken as it is; normalizing it again would change nothing but rounding)
for _, class in ipairs({'nn.SpatialSubtractiveNormalization', 'nn.SpatialDivisiveNormalization',
                        'nn.SpatialContrastiveNormalization'}) do
  local divisive = class ~= 'nn.SpatialSubtractiveNormalization'
  from[class] = function(f)
    local kernel = check_tensor(f, class, 'kernel')
    local m
    if divisive then m = nn[class:sub(4)](integer(f, class, 'nInputPlane', 1), kernel, f.threshold, f.thresval)
    else m = nn[class:sub(4)](integer(f, class, 'nInputPlane', 1), kernel) end
    if class ~= 'nn.SpatialContrastiveNormalization' then
      require('nn._Spatial7').norm_kernel(m, kernel:detach():clone())
    elseif nn.is_module(f.normalizer) then
      m.normalizer = f.normalizer            -- its two parts, as saved
    end
    return m
  end
  to[class] = function(m)
    local f = base(m, m.kernel)
    f.nInputPlane, f.kernel = m.nInputPlane, m.kernel
    if divisive then f.threshold, f.thresval = m.threshold, m.thresval end
    if class == 'nn.SpatialContrastiveNormalization' then f.normalizer = m.normalizer end
    return class, f
  end
end

-- ---- Torch7's simple modules (t7simple): to ----
for class, keys in pairs(simple_same_name) do
  to[class] = function(m)
    local f = base(m)
    for _, k in ipairs(keys) do f[k] = m[k] end
    return class, f
  end
end
local function decorator_fields(m, keys)
  local f = base(m)
  f.modules = m:children()
  for _, k in ipairs(keys) do f[k] = m[k] end
  return f
end
to['nn.Bottle'] = function(m)
  local f = decorator_fields(m, {'nInputDim', 'nOutputDim', 'dimDelta'})
  f.inShape, f.outShape = torch.empty(m.nInputDim), torch.empty(m.nOutputDim)
  return 'nn.Bottle', f
end
to['nn.Profile'] = function(m)
  local f = decorator_fields(m, {'print_interval', 'name', 'numFwds', 'numBwds', 'summedFwdTime', 'summedBwdTime'})
  f.module = m:children()[1]
  return 'nn.Profile', f
end
to['nn.DontCast'] = function(m)
  local typenames = {float32 = 'torch.FloatTensor', float64 = 'torch.DoubleTensor'}
  if m.moduleType ~= nil and typenames[m.moduleType] == nil then return nil end
  local f = decorator_fields(m, {'castin', 'castout'})
  f.moduleType = typenames[m.moduleType]
  return 'nn.DontCast', f
end
to['nn.Embedding'] = function(m)
  if m.padding_idx ~= nil or m.max_norm ~= nil then return nil end
  local f = base(m, m.weight)
  f.weight, f.gradWeight, f.paddingValue, f.shouldScaleGradByFreq = m.weight, torch.zeros_like(m.weight), 0, false
  return 'nn.LookupTable', f
end
to['nn.LinearWeightNorm'] = function(m)
  local f = base(m, m.v)
  f.inputSize, f.outputSize, f.eps = m.inputSize, m.outputSize, m.eps
  f.v, f.g, f.bias = m.v, m.g, m.bias
  f.gradV, f.gradG = torch.zeros_like(m.v), torch.zeros_like(m.g)
  if m.bias then f.gradBias = torch.zeros_like(m.bias) end
  f.weight = m:updateWeightMatrix():clone()
  f.norm, f.scale = torch.zeros_like(m.g), torch.zeros_like(m.g)
  return 'nn.LinearWeightNorm', f
end
to['nn.PartialLinear'] = function(m)
  local f = base(m, m.bias)
  f.network, f.inputsize, f.outputsize = m.network, m.inputsize, m.outputsize
  f.bias = m.bias
  if m.bias then f.gradBias = torch.zeros_like(m.bias) end
  f.allcolumns = torch.arange(1, m.outputsize + 1, {dtype = 'float64'})
  f.partition = m.partition:double()
  return 'nn.PartialLinear', f
end
to['nn.SparseLinear'] = function(m)
  local f = base(m, m.weight)
  f.weight, f.bias, f.gradWeight, f.gradBias = m.weight, m.bias, m.gradWeight, m.gradBias
  f.doGradInput, f.weightDecay, f.sparseUpdate = m.doGradInput, 0, 0
  f.gradInput = {}
  return 'nn.SparseLinear', f
end
to['nn.IndexLinear'] = function(m)
  local f = base(m, m.weight)
  f.weight, f.bias, f.gradBias = m.weight, m.bias, m.gradBias
  f.inputSize, f.outputSize, f.doGradInput = m.inputSize, m.outputSize, m.doGradInput
  f.offset, f.normalize, f.weightDecay = m.keysOffset - 1, 0, 0
  f.gradWeight = empty_like(m.weight)
  f.running = {cumSumSizes = {}, keys = {}, gradWeight = {}, counter = 1}
  f.sizesCache, f.cumSumSizesCache = {}, {}
  f.gradWeightBuffer, f.valuesBuffer, f.normalizedValues = empty_like(m.weight), empty_like(m.weight), empty_like(m.weight)
  return 'nn.IndexLinear', f
end
to['nn.Kmeans'] = function(m)
  local f = base(m, m.weight)
  f.k, f.dim, f.scale, f.p = m.k, m.dim, m.scale, m.p
  f.weight, f.gradWeight, f.clusterSampleCount, f.loss = m.weight, m.gradWeight, m.clusterSampleCount, m.loss
  return 'nn.Kmeans', f
end

-- ---- Torch7's criteria, both ways: their settings' fields, as Torch7 names them ----
local criteria = {
  ['nn.MSECriterion'] = {'sizeAverage'}, ['nn.AbsCriterion'] = {'sizeAverage'},
  ['nn.SmoothL1Criterion'] = {'sizeAverage'}, ['nn.DistKLDivCriterion'] = {'sizeAverage'},
  ['nn.DistanceRatioCriterion'] = {'sizeAverage'}, ['nn.SoftMarginCriterion'] = {'sizeAverage'},
  ['nn.MultiLabelMarginCriterion'] = {'sizeAverage'},
  ['nn.BCECriterion'] = {'sizeAverage', 'weights'}, ['nn.MultiLabelSoftMarginCriterion'] = {'sizeAverage', 'weights'},
  ['nn.SpatialClassNLLCriterion'] = {'sizeAverage', 'weights'},
  ['nn.ClassNLLCriterion'] = {'sizeAverage', 'weights', 'ignoreIndex'},
  ['nn.MarginCriterion'] = {'sizeAverage', 'margin'}, ['nn.HingeEmbeddingCriterion'] = {'sizeAverage', 'margin'},
  ['nn.L1HingeEmbeddingCriterion'] = {'margin'}, ['nn.CosineEmbeddingCriterion'] = {'sizeAverage', 'margin'},
  ['nn.MarginRankingCriterion'] = {'sizeAverage', 'margin'},
  ['nn.MultiMarginCriterion'] = {'sizeAverage', 'p', 'weights', 'margin'},
}
for class, keys in pairs(criteria) do
  from[class] = function(f)
    local c = nn[class:sub(4)]()
    for _, k in ipairs(keys) do
      local v = f[k]
      if k == 'weights' and v ~= nil and not torch.is_tensor(v) then
        error(string.format('a Torch7 %s whose weights are %s, not a tensor', class, torch.type(v)), 0)
      elseif k == 'sizeAverage' and v ~= nil and type(v) ~= 'boolean' then
        error(string.format('a Torch7 %s whose sizeAverage is %s, not a boolean', class, torch.type(v)), 0)
      elseif (k == 'margin' or k == 'p' or k == 'ignoreIndex') and v ~= nil and type(v) ~= 'number' then
        error(string.format('a Torch7 %s whose %s is %s, not a number', class, k, torch.type(v)), 0)
      end
      if v ~= nil then c[k] = v end
    end
    return c
  end
  to[class] = function(m)
    local f = {output = 0, gradInput = empty_like(m.weights), train = m.training}
    for _, k in ipairs(keys) do f[k] = m[k] end
    return class, f
  end
end
local function batch_norm_to(torch7_name, n_dim)
  return function(m)
    if not m.track_running_stats or m.momentum == false then return nil end
    local f = base(m, m.running_mean)
    f.eps, f.momentum, f.affine, f.nDim = m.eps, m.momentum, m.affine, n_dim
    f.running_mean, f.running_var = m.running_mean, m.running_var
    if m.affine then
      f.weight, f.bias = m.weight, m.bias
      f.gradWeight, f.gradBias = torch.zeros_like(m.weight), torch.zeros_like(m.bias)
    end
    return torch7_name, f
  end
end
to['nn.BatchNorm1d'] = batch_norm_to('nn.BatchNormalization', 2)
to['nn.BatchNorm2d'] = batch_norm_to('nn.SpatialBatchNormalization', 4)

to['nn.Reshape'] = function(m)
  local f = base(m)
  local n = 1
  for _, s in ipairs(m.size) do n = n * s end
  f.size, f.nelement, f.batchMode = torch.LongStorage(m.size), n, m.batchMode
  local b = {1}
  for i, s in ipairs(m.size) do b[i + 1] = s end
  f.batchsize = torch.LongStorage(b)
  return 'nn.Reshape', f
end

-- ---- Torch7's volumetric and temporal modules (t7vol) ----

-- a number or the i-th of a table
local function nth(v, i)
  if type(v) == 'table' then return v[i] end
  return v
end

-- the Torch7 fields of a volumetric convolution of m (the t, w, h order of Torch7's names)
local function vol_geometry(f, m, with_pad)
  f.kT, f.kH, f.kW = nth(m.kernel_size, 1), nth(m.kernel_size, 2), nth(m.kernel_size, 3)
  local stride = m.stride or m.kernel_size
  f.dT, f.dH, f.dW = nth(stride, 1), nth(stride, 2), nth(stride, 3)
  if with_pad then f.padT, f.padH, f.padW = nth(m.padding, 1), nth(m.padding, 2), nth(m.padding, 3) end
  if m.dilation ~= nil and m.dilation ~= 1 then
    f.dilationT, f.dilationH, f.dilationW = nth(m.dilation, 1), nth(m.dilation, 2), nth(m.dilation, 3)
  end
  return f
end

local function vol_params(f, m)
  f.nInputPlane, f.nOutputPlane = m.in_channels, m.out_channels
  f.weight, f.bias = m.weight, m.bias
  f.gradWeight = torch.zeros_like(m.weight)
  if m.bias then f.gradBias = torch.zeros_like(m.bias) end
  return f
end

to['nn.Conv3d'] = function(m)
  if m.groups ~= 1 or m.padding_mode ~= 'zeros' or type(m.padding) == 'string' then return nil end
  local f = vol_params(vol_geometry(base(m, m.weight), m, true), m)
  return f.dilationT and 'nn.VolumetricDilatedConvolution' or 'nn.VolumetricConvolution', f
end
to['nn.ConvTranspose3d'] = function(m)
  if m.groups ~= 1 or (m.dilation ~= nil and m.dilation ~= 1) then return nil end
  local f = vol_params(vol_geometry(base(m, m.weight), m, true), m)
  f.adjT, f.adjH, f.adjW = nth(m.output_padding, 1), nth(m.output_padding, 2), nth(m.output_padding, 3)
  return 'nn.VolumetricFullConvolution', f
end
to['nn.MaxPool3d'] = function(m)
  local f = vol_geometry(base(m), m, true)
  f.ceil_mode, f.indices = m.ceil_mode, torch.empty(0, {dtype = 'int64'})
  -- the last call's positions (moontorch's, 1-based in each volume) for VolumetricMaxUnpooling
  f.itime, f.iheight, f.iwidth, f.positions = m.itime, m.iheight, m.iwidth, m.indices
  return f.dilationT and 'nn.VolumetricDilatedMaxPooling' or 'nn.VolumetricMaxPooling', f
end
to['nn.AvgPool3d'] = function(m)
  if m.divisor_override ~= nil then return nil end
  local f = vol_geometry(base(m), m, true)
  f.ceil_mode, f.count_include_pad = m.ceil_mode, m.count_include_pad
  return 'nn.VolumetricAveragePooling', f
end
to['nn.MaxUnpool3d'] = function(m)
  if m.pooling == nil then return nil end
  local f = base(m)
  f.pooling = m.pooling
  return 'nn.VolumetricMaxUnpooling', f
end
to['nn.BatchNorm3d'] = function(m)
  if not m.track_running_stats or m.momentum == false then return nil end
  local f = base(m, m.running_mean)
  f.eps, f.momentum, f.affine = m.eps, m.momentum, m.affine
  f.running_mean, f.running_var = m.running_mean, m.running_var
  if m.affine then
    f.weight, f.bias = m.weight, m.bias
    f.gradWeight, f.gradBias = torch.zeros_like(m.weight), torch.zeros_like(m.bias)
  end
  return 'nn.VolumetricBatchNormalization', f
end
to['nn.Dropout3d'] = function(m)
  if not m.torch7_scaling then return nil end      -- Torch7's does not scale while training
  local f = base(m)
  f.p, f.noise, f.stochastic_inference = m.p, empty_like(), m.stochastic_inference
  return 'nn.VolumetricDropout', f
end
to['nn.ReplicationPad3d'] = function(m)
  local f = base(m)
  f.pleft, f.pright, f.ptop, f.pbottom, f.pfront, f.pback = table.unpack(m.pads)
  return 'nn.VolumetricReplicationPadding', f
end

local function read_int(f, name, key, default) return integer(f, name, key, default) end

from['nn.VolumetricConvolution'] = function(f)
  local name = 'nn.VolumetricConvolution'
  local w = check_tensor(f, name, 'weight')
  local m = nn.VolumetricDilatedConvolution(read_int(f, name, 'nInputPlane'), read_int(f, name, 'nOutputPlane'),
    read_int(f, name, 'kT'), read_int(f, name, 'kW'), read_int(f, name, 'kH'), read_int(f, name, 'dT', 1),
    read_int(f, name, 'dW', 1), read_int(f, name, 'dH', 1), read_int(f, name, 'padT', 0), read_int(f, name, 'padW', 0),
    read_int(f, name, 'padH', 0), read_int(f, name, 'dilationT', 1), read_int(f, name, 'dilationW', 1),
    read_int(f, name, 'dilationH', 1))
  if w:numel() ~= m.weight:numel() then
    error(string.format('a Torch7 %s whose weight has %d values, not %d', name, w:numel(), m.weight:numel()), 0)
  end
  m.weight = param(w:reshape(m.weight:size()))
  m.bias = param(f.bias)
  return m
end
from['nn.VolumetricDilatedConvolution'] = from['nn.VolumetricConvolution']
from['nn.VolumetricFullConvolution'] = function(f)
  local name = 'nn.VolumetricFullConvolution'
  local w = check_tensor(f, name, 'weight', 5)
  local m = nn.VolumetricFullConvolution(read_int(f, name, 'nInputPlane'), read_int(f, name, 'nOutputPlane'),
    read_int(f, name, 'kT'), read_int(f, name, 'kW'), read_int(f, name, 'kH'), read_int(f, name, 'dT', 1),
    read_int(f, name, 'dW', 1), read_int(f, name, 'dH', 1), read_int(f, name, 'padT', 0), read_int(f, name, 'padW', 0),
    read_int(f, name, 'padH', 0), read_int(f, name, 'adjT', 0), read_int(f, name, 'adjW', 0), read_int(f, name, 'adjH', 0))
  m.weight, m.bias = param(w), param(f.bias)
  return m
end
from['nn.VolumetricMaxPooling'] = function(f)
  local name = 'nn.VolumetricMaxPooling'
  local kT, kW, kH = read_int(f, name, 'kT'), read_int(f, name, 'kW'), read_int(f, name, 'kH')
  local m = nn.VolumetricDilatedMaxPooling(kT, kW, kH, read_int(f, name, 'dT', kT), read_int(f, name, 'dW', kW),
    read_int(f, name, 'dH', kH), read_int(f, name, 'padT', 0), read_int(f, name, 'padW', 0), read_int(f, name, 'padH', 0),
    read_int(f, name, 'dilationT', 1), read_int(f, name, 'dilationW', 1), read_int(f, name, 'dilationH', 1))
  if f.ceil_mode == true then m:ceil() end
  if torch.is_tensor(f.positions) and f.positions.dtype == 'int64' and math.type(f.itime) == 'integer' then
    m.indices, m.itime, m.iheight, m.iwidth = f.positions, f.itime, read_int(f, name, 'iheight'), read_int(f, name, 'iwidth')
  end
  return m
end
from['nn.VolumetricDilatedMaxPooling'] = from['nn.VolumetricMaxPooling']
from['nn.VolumetricAveragePooling'] = function(f)
  local name = 'nn.VolumetricAveragePooling'
  local kT, kW, kH = read_int(f, name, 'kT'), read_int(f, name, 'kW'), read_int(f, name, 'kH')
  local m = nn.VolumetricAveragePooling(kT, kW, kH, read_int(f, name, 'dT', kT), read_int(f, name, 'dW', kW),
    read_int(f, name, 'dH', kH), read_int(f, name, 'padT', 0), read_int(f, name, 'padW', 0), read_int(f, name, 'padH', 0))
  if f.ceil_mode == true then m:ceil() end
  if f.count_include_pad == false then m.count_include_pad = false end
  return m
end
from['nn.VolumetricMaxUnpooling'] = function(f)
  if not nn.is_module(f.pooling) then error('a Torch7 nn.VolumetricMaxUnpooling without its pooling module', 0) end
  return nn.VolumetricMaxUnpooling(f.pooling)
end
from['nn.VolumetricBatchNormalization'] = function(f)
  local name = 'nn.VolumetricBatchNormalization'
  local mean = check_tensor(f, name, 'running_mean', 1)
  local affine = f.affine ~= false and f.weight ~= nil
  local m = nn.VolumetricBatchNormalization(mean:size(1), type(f.eps) == 'number' and f.eps or 1e-5,
                                            type(f.momentum) == 'number' and f.momentum or 0.1, affine)
  torch.no_grad(function()
    m.running_mean:copy_(mean)
    m.running_var:copy_(check_tensor(f, name, 'running_var', 1))
  end)
  if affine then m.weight, m.bias = param(check_tensor(f, name, 'weight', 1)), param(check_tensor(f, name, 'bias', 1)) end
  return m
end
from['nn.VolumetricDropout'] = function(f)
  return nn.VolumetricDropout(type(f.p) == 'number' and f.p or 0.5, f.stochastic_inference == true)
end
from['nn.VolumetricReplicationPadding'] = function(f)
  local name = 'nn.VolumetricReplicationPadding'
  return nn.VolumetricReplicationPadding(read_int(f, name, 'pleft'), read_int(f, name, 'pright'), read_int(f, name, 'ptop'),
    read_int(f, name, 'pbottom'), read_int(f, name, 'pfront'), read_int(f, name, 'pback'))
end

to['nn.FractionalMaxPool3d'] = function(m)
  if not m.time_last then return nil end            -- Torch7's module pools time-last input
  local f = base(m)
  f.poolSizeT, f.poolSizeW, f.poolSizeH = m.poolSizeT, m.poolSizeW, m.poolSizeH
  f.outT, f.outW, f.outH, f.ratioT, f.ratioW, f.ratioH = m.outT, m.outW, m.outH, m.ratioT, m.ratioW, m.ratioH
  f.newRandomPool = m.newRandomPool
  return 'nn.VolumetricFractionalMaxPooling', f
end
from['nn.VolumetricFractionalMaxPooling'] = function(f)
  local name = 'nn.VolumetricFractionalMaxPooling'
  local a1, a2, a3 = f.outT, f.outW, f.outH
  if a1 == nil then a1, a2, a3 = f.ratioT, f.ratioW, f.ratioH end
  local m = nn.VolumetricFractionalMaxPooling(read_int(f, name, 'poolSizeT'), read_int(f, name, 'poolSizeW'),
                                              read_int(f, name, 'poolSizeH'), a1, a2, a3)
  if f.newRandomPool == true then m:fixPoolingRegions() end
  return m
end

-- Torch7's temporal layers, moontorch's of the same name
local function with_grads(f, m)
  f.weight, f.bias = m.weight, m.bias
  f.gradWeight = torch.zeros_like(m.weight)
  if m.bias then f.gradBias = torch.zeros_like(m.bias) end
  return f
end
to['nn.TemporalConvolution'] = function(m)
  local f = with_grads(base(m, m.weight), m)
  f.inputFrameSize, f.outputFrameSize, f.kW, f.dW = m.inputFrameSize, m.outputFrameSize, m.kW, m.dW
  return 'nn.TemporalConvolution', f
end
to['nn.TemporalSubSampling'] = function(m)
  local f = with_grads(base(m, m.weight), m)
  f.inputFrameSize, f.kW, f.dW = m.inputFrameSize, m.kW, m.dW
  return 'nn.TemporalSubSampling', f
end
to['nn.TemporalDynamicKMaxPooling'] = function(m)
  local f = base(m)
  f.minK, f.factor = m.minK, m.factor
  return 'nn.TemporalDynamicKMaxPooling', f
end
from['nn.TemporalConvolution'] = function(f)
  local name = 'nn.TemporalConvolution'
  local m = nn.TemporalConvolution(read_int(f, name, 'inputFrameSize'), read_int(f, name, 'outputFrameSize'),
                                   read_int(f, name, 'kW'), read_int(f, name, 'dW', 1))
  local w = check_tensor(f, name, 'weight')
  if w:numel() ~= m.weight:numel() then
    error(string.format('a Torch7 %s whose weight has %d values, not %d', name, w:numel(), m.weight:numel()), 0)
  end
  m.weight, m.bias = param(w:view(m.weight:size())), param(f.bias)
  return m
end
from['nn.TemporalSubSampling'] = function(f)
  local name = 'nn.TemporalSubSampling'
  local m = nn.TemporalSubSampling(read_int(f, name, 'inputFrameSize'), read_int(f, name, 'kW'), read_int(f, name, 'dW', 1))
  m.weight, m.bias = param(check_tensor(f, name, 'weight', 1)), param(check_tensor(f, name, 'bias', 1))
  return m
end
from['nn.TemporalDynamicKMaxPooling'] = function(f)
  return nn.TemporalDynamicKMaxPooling(read_int(f, 'nn.TemporalDynamicKMaxPooling', 'minK'),
                                       type(f.factor) == 'number' and f.factor or 0)
end

-- Torch7's WeightNorm: the wrapped module in modules[1], v, g and the module's bias
to['nn.WeightNorm'] = function(m)
  local f = base(m, m.v)
  f.modules, f.outputDim, f.v, f.g = {m.module}, m.outputDim, m.v, m.g
  f.gradV, f.gradG = torch.zeros_like(m.v), torch.zeros_like(m.g)
  f.bias = m.bias
  if m.bias ~= nil then f.gradBias = torch.zeros_like(m.bias) end
  f.weightSize = torch.LongStorage(m.weightSize)
  return 'nn.WeightNorm', f
end
from['nn.WeightNorm'] = function(f)
  local name = 'nn.WeightNorm'
  local child = type(f.modules) == 'table' and f.modules[1]
  if not nn.is_module(child) then error('a Torch7 nn.WeightNorm without its module', 0) end
  local v, g = check_tensor(f, name, 'v', 2), check_tensor(f, name, 'g', 1)
  if not torch.is_tensor(child.weight) then
    -- Torch7 writes the wrapped module without its weight (computed from v and g)
    local size = torch.isStorage(f.weightSize) and f.weightSize:totable() or f.weightSize
    if type(size) ~= 'table' then error('a Torch7 nn.WeightNorm whose module has no weight and no weightSize', 0) end
    child.weight = nn.Parameter(torch.empty(size, {dtype = v.dtype}))
  end
  local m = nn.WeightNorm(child, read_int(f, name, 'outputDim', 1), true)
  if v:size(1) ~= m.v:size(1) or v:numel() ~= m.v:numel() or g:numel() ~= m.g:numel() then
    error(string.format('a Torch7 nn.WeightNorm whose v (%s) or g (%s) does not fit its module', tostring(v:size()),
                        tostring(g:size())), 0)
  end
  m.v, m.g = param(v), param(g)
  m:updateWeight()
  return m
end

-- M.to_torch7(module): the Torch7 class name and the fields Torch7 reads for
-- it, or nil when the module has no Torch7 form here
function M.to_torch7(m)
  local mt = getmetatable(m)
  local make = to[mt and mt.__typename]
  if not make then return nil end
  return make(m)
end

-- M.register(class, from_fn, to_fn): a module of another package (nngraph's)
-- both ways: from_fn(fields) gives the module, to_fn(m) the class name and fields
function M.register(class, from_fn, to_fn)
  from[class], to[class] = from_fn, to_fn
end

return M
