local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- nn.LookupTable(nIndex, nOutput, paddingValue=0, maxNorm, normType=2): Torch7's
-- lookup table (an nn.Embedding): the rows of weight (nIndex x nOutput, ~ N(0, 1),
-- every row) at the 1-based indices of the input, a tensor of any integer type or a
-- floating one holding whole numbers (Torch7 read them as longs). Rows at index
-- paddingValue (0: none) are looked up but never updated. With maxNorm, each row
-- looked up whose normType-norm exceeds maxNorm is first scaled to it, in weight.
local LookupTable, Embedding = torch.class('nn.LookupTable', 'nn.Embedding')

function LookupTable:__init(nIndex, nOutput, paddingValue, maxNorm, normType)
  if paddingValue ~= nil and math.type(paddingValue) ~= 'integer' then
    error('nn.LookupTable: paddingValue must be an integer, got ' .. tostring(paddingValue), 3)
  end
  if maxNorm ~= nil and (type(maxNorm) ~= 'number' or maxNorm <= 0) then
    error('nn.LookupTable: maxNorm must be a positive number, got ' .. tostring(maxNorm), 3)
  end
  if normType ~= nil and (type(normType) ~= 'number' or normType <= 0) then
    error('nn.LookupTable: normType must be a positive number, got ' .. tostring(normType), 3)
  end
  local ok, err = pcall(Embedding.__init, self, nIndex, nOutput)
  if not ok then error((tostring(err):gsub('nn%.Embedding', 'nn.LookupTable')), 3) end
  self:setPadding(paddingValue or 0)
  self.maxNorm, self.normType = maxNorm, normType
end

-- lookup:reset(stdv=1): every row ~ N(0, stdv) (the padding row too, as Torch7's).
function LookupTable:reset(stdv)
  torch.no_grad(function() self.weight:normal_(0, stdv or 1) end)
  return self
end
LookupTable.reset_parameters = LookupTable.reset

-- lookup:setPadding(paddingValue): the index whose row is never updated (0: none); returns the module.
function LookupTable:setPadding(paddingValue)
  if math.type(paddingValue) ~= 'integer' then
    error('nn.LookupTable:setPadding: expected an integer, got ' .. tostring(paddingValue), 2)
  end
  self.paddingValue = paddingValue
  return self
end

-- lookup:setMaxNorm(maxNorm): rows looked up are scaled to at most this norm (nil: never); returns the module.
function LookupTable:setMaxNorm(maxNorm)
  self.maxNorm = maxNorm
  return self
end

-- lookup:setNormType(p): the norm maxNorm bounds (default 2); returns the module.
function LookupTable:setNormType(p)
  self.normType = p
  return self
end

-- lookup:scaleGradByFreq(): from now on each looked-up row's gradient is divided by
-- how often its index occurs in the input (Torch7's; PyTorch's scale_grad_by_freq);
-- returns the module.
function LookupTable:scaleGradByFreq()
  self.shouldScaleGradByFreq = true
  return self
end

-- 1 / (the count of each position's index in idx, flat int64), one value a position
local function inverse_counts(idx, n, dtype)
  local counts = torch.zeros(n, {dtype = dtype}):index_add_(1, idx, torch.ones(idx:numel(), {dtype = dtype}))
  return (counts:index_select(1, idx):reciprocal())
end

-- lookup:accUpdateOnly(): Torch7's marker of a table updated by accUpdateGradParameters
-- only: the weight keeps no gradient (gradWeight reads false); returns the module.
function LookupTable:accUpdateOnly()
  self.weight.grad = nil
  self.gradWeight = false
  return self
end

-- the indices as int64, checked
local function indices(idx)
  if not torch.is_tensor(idx) then
    error('nn.LookupTable: expected a tensor of indices, got ' .. torch.type(idx), 4)
  end
  if idx.dtype == 'int64' then return idx end
  if idx:is_floating_point() then
    if idx:numel() > 0 and not idx:eq(idx:floor()):all():item() then
      error(string.format('nn.LookupTable: %s indices of size %s hold a number that is not whole', idx.dtype,
                          tostring(idx:size())), 4)
    end
  elseif idx.dtype == 'bool' then
    error('nn.LookupTable: expected integer indices, got a bool tensor', 4)
  end
  return idx:long()
end

function LookupTable:updateOutput(idx)
  local pad = self.paddingValue
  local count = self.weight:size(1)
  if pad ~= nil and pad < 0 then pad = pad + count + 1 end
  if pad ~= nil and (pad < 1 or pad > count) then pad = nil end   -- 0 (or out of range): no padding
  local long = indices(idx)
  local ok, out = pcall(F.embedding, long, self.weight, {padding_idx = pad, max_norm = self.maxNorm,
                                                         norm_type = self.normType or 2})
  if not ok then error((tostring(out):gsub('F%.embedding', 'nn.LookupTable')), 3) end
  if self.shouldScaleGradByFreq and out.requires_grad then        -- the gradient through autograd, scaled
    local shape = long:size():totable()
    shape[#shape + 1] = 1
    local scale = inverse_counts(long:reshape(-1), count, out.dtype):view(shape)
    out:register_hook(function(g) return g * scale end)
  end
  return out
end

-- lookup:updateGradInput(input, gradOutput): zeros of the indices' type and size
-- (no gradient reaches an index).
function LookupTable:updateGradInput(input)
  self.gradInput = torch.zeros_like(input)
  return self.gradInput
end

-- the rows of gradOutput, each with its index, those at the padding index left out
local function rows_of(self, input, gradOutput)
  local idx = indices(input):reshape(-1)
  local d = self.weight:size(2)
  if gradOutput:numel() ~= idx:numel() * d then
    error(string.format('nn.LookupTable: gradOutput of size %s does not match %d indices of %d values',
                        tostring(gradOutput:size()), idx:numel(), d), 4)
  end
  local g = gradOutput:detach():reshape(idx:numel(), d):to(self.weight.dtype)
  if self.shouldScaleGradByFreq then g = g * inverse_counts(idx, self.weight:size(1), g.dtype):view(-1, 1) end
  local pad = self.paddingValue
  if pad ~= nil and pad ~= 0 then
    if pad < 0 then pad = pad + self.weight:size(1) + 1 end
    g = g:masked_fill(idx:eq(pad):unsqueeze(2), 0)
  end
  return idx, g
end

-- lookup:accGradParameters(input, gradOutput, scale=1): adds scale times each row of
-- gradOutput to the gradient of the weight row its index names (none at paddingValue).
function LookupTable:accGradParameters(input, gradOutput, scale)
  if self.gradWeight == false then
    error('nn.LookupTable: accGradParameters after accUpdateOnly() (the table keeps no gradient)', 2)
  end
  local idx, g = rows_of(self, input, gradOutput)
  local gw = self.gradWeight                              -- the weight's .grad (made zeros when absent)
  torch.no_grad(function() gw:index_add_(1, idx, g, {alpha = scale or 1}) end)
end

-- lookup:accUpdateGradParameters(input, gradOutput, lr): the weight rows move by -lr
-- times their gradient for this gradOutput, no gradient kept (the padding row stays).
function LookupTable:accUpdateGradParameters(input, gradOutput, lr)
  local idx, g = rows_of(self, input, gradOutput)
  local w = self.weight
  torch.no_grad(function() w:index_add_(1, idx, g, {alpha = -lr}) end)
end

-- lookup:backwardUpdate(input, gradOutput, lr): updateGradInput, then
-- accUpdateGradParameters(input, gradOutput, lr) (Torch7's Module:backwardUpdate).
function LookupTable:backwardUpdate(input, gradOutput, lr)
  self:updateGradInput(input, gradOutput)
  self:accUpdateGradParameters(input, gradOutput, lr)
  return self.gradInput
end

function LookupTable:extra_repr()
  local s = self.weight:size(1) .. ', ' .. self.weight:size(2)
  if self.paddingValue and self.paddingValue ~= 0 then s = s .. ', paddingValue=' .. self.paddingValue end
  if self.maxNorm then s = s .. ', maxNorm=' .. string.format('%g', self.maxNorm) end
  return s
end

return LookupTable
