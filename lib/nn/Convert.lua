local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line
local nn = require 'nn'

-- nn.Convert(inputShape='b*', outputShape=inputShape): converts between data layouts named
-- by a letter per dimension (b the batch, then any of c, h, w, f, t, ...): a permutation of
-- the same letters ('bchw' -> 'chwb') permutes the dimensions; 'bf' flattens each example
-- (after moving b to the front); 'b' takes the first of each example's 1 feature (from
-- 'bf'/'fb') or class (from 'bt'/'tb'); 'bt' makes each scalar example a vector of one
-- ('b' -> 'bt'). A shape without 'b' ('chw', 'f') describes one example; an input of one
-- dimension fewer than the shape is one example (non-batch mode). Inputs are first converted
-- to the module's type, as Torch7's: the default dtype when it was made, then that of
-- module:float(), :double() or :type() (so nn.Convert() alone converts types only).
local Convert, parent = torch.class('nn.Convert', 'nn.Module')
function Convert:__init(inputShape, outputShape)
  parent.__init(self)
  if outputShape ~= nil and inputShape == nil then
    error('nn.Convert: expected an input shape when an output shape is given', 3)
  end
  inputShape = inputShape or 'b*'
  outputShape = outputShape or inputShape
  for _, s in ipairs({inputShape, outputShape}) do
    if type(s) ~= 'string' or not s:match('^[%a*]+$') then
      error('nn.Convert: expected shapes of letters such as \'bchw\', got ' .. tostring(s), 3)
    end
  end
  self._dtype = torch.get_default_dtype()
  self.inputShape = inputShape:find('b', 1, true) and inputShape or 'b' .. inputShape
  self.outputShape = outputShape:find('b', 1, true) and outputShape or 'b' .. outputShape
  self.inputBatchDim = self.inputShape:find('b', 1, true)
  self.outputBatchDim = self.outputShape:find('b', 1, true)
  if self.inputShape == 'b*' or self.outputShape == 'b*' then
    if self.inputShape ~= 'b*' or self.outputShape ~= 'b*' then
      error('nn.Convert: both shapes or neither must be \'b*\', got ' .. inputShape .. ' and ' .. outputShape, 3)
    end
    self.nInputDim, self.nOutputDim, self.transposition = -1, -1, true
  else
    self.nInputDim, self.nOutputDim = #self.inputShape, #self.outputShape
    self.transposition = false
    if self.nInputDim == self.nOutputDim then
      self.transposition = true
      for i = 1, self.nInputDim do
        if not self.outputShape:find(self.inputShape:sub(i, i), 1, true) then self.transposition = false end
      end
    end
    if not self.transposition and not (self.outputShape == 'bf' or self.outputShape == 'b' or self.outputShape == 'bt') then
      error(string.format("nn.Convert: unrecognized conversion of shape %s to %s", self.inputShape, self.outputShape), 3)
    end
  end
end

local function axis(self, shape, letter)
  local pos = shape:find(letter, 1, true)
  if not pos then fail(self, "shape '%s' has no axis '%s'", shape, letter) end
  return pos
end

-- x (in batch mode, inputShape's dims) converted to outputShape
function Convert:_convert(x)
  local from, to = self.inputShape, self.outputShape
  if self.transposition then
    if from == to or from == 'b*' then return x end
    local perm = {}
    for i = 1, #to do perm[i] = axis(self, from, to:sub(i, i)) end
    return x:permute(perm)
  end
  if to == 'bf' then
    if from == 'bt' then fail(self, '%s', 'conversion of shape bt to bf is not supported') end
    if #from == 1 then return (x:reshape(-1, 1)) end
    local b = axis(self, from, 'b')
    if b ~= 1 then x = x:transpose(1, b) end
    return (x:reshape(x:size(1), -1))
  elseif to == 'b' then
    if from == 'bt' or from == 'tb' then return (x:select(axis(self, from, 't'), 1)) end
    if from == 'bf' or from == 'fb' then
      local f = axis(self, from, 'f')
      if x:size(f) > 1 then
        fail(self, '%s', 'cannot convert shape ' .. from .. ' to b when there is more than one feature')
      end
      return (x:select(f, 1))
    end
    fail(self, '%s', 'cannot convert shape ' .. from .. ' to b')
  else  -- 'bt'
    if from ~= 'b' then fail(self, '%s', "cannot convert shape '" .. from .. "' to bt") end
    return (x:reshape(-1, 1))
  end
end

function Convert:updateOutput(input)
  if not torch.is_tensor(input) then fail(self, '%s', 'expected a tensor, got ' .. torch.type(input)) end
  if self._dtype and input.dtype ~= self._dtype then input = input:to(self._dtype) end
  local batch = input:dim() >= self.nInputDim
  if self.nInputDim > 0 and input:dim() ~= self.nInputDim and input:dim() ~= self.nInputDim - 1 then
    fail(self, 'expected an input of %d dims (%s) or %d (one example), got %s', self.nInputDim, self.inputShape,
         self.nInputDim - 1, tostring(input:size()))
  end
  local x = batch and input or input:unsqueeze(self.inputBatchDim)
  local y = self:_convert(x)
  if not batch then y = y:squeeze(self.outputBatchDim) end
  return y
end

-- module:to(...) as any module's; the dtype (of :float(), :double(), :type()) is also the
-- one inputs are converted to
function Convert:to(target)
  parent.to(self, target)
  local dtype = target
  if torch.is_tensor(target) or type(target) == 'table' then dtype = target.dtype end
  local names = {['torch.FloatTensor'] = 'float32', ['torch.DoubleTensor'] = 'float64',
                 ['torch.HalfTensor'] = 'float16', ['torch.BFloat16Tensor'] = 'bfloat16'}
  dtype = names[dtype] or dtype
  if dtype == 'float32' or dtype == 'float64' or dtype == 'float16' or dtype == 'bfloat16' then self._dtype = dtype end
  return self
end

function Convert:extra_repr() return self.inputShape .. ' -> ' .. self.outputShape end

return Convert
