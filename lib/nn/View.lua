local torch = require 'torch'
local helpers = require 'nn._helpers'

-- nn.View(d1, d2, ...) (or nn.View(sizes), a table or LongStorage): a view of the
-- input in those sizes (no copy; the input's memory must allow it); one size may be
-- -1, inferred. Torch7's batch rule: the elements of the last numInputDims dims (all
-- of them when unset) that the sizes do not take form a batch dim in front,
-- multiplied by the sizes of any dims before those; with a -1 the last dims give no
-- batch. So nn.View(6) on 5x2x6 gives 10x6, and nn.View(-1):setNumInputDims(1) on
-- 5x10 gives 5x10.
local View, Module = torch.class('nn.View', 'nn.Module')

-- self's sizes from the arguments; an error `level` above set_size's caller
local function set_size(self, level, ...)
  local size = helpers.sizes_of(...)
  local n, inferred = 1, false
  for i, s in ipairs(size) do
    if math.type(s) ~= 'integer' and not (type(s) == 'number' and s == math.floor(s)) then
      error(string.format('nn.View: size %d is %s, expected an integer', i, tostring(s)), level + 1)
    end
    s = math.tointeger(s)
    size[i] = s
    if s == -1 then
      if inferred then error('nn.View: only one size can be -1', level + 1) end
      inferred = true
    elseif s < 0 then
      error(string.format('nn.View: size %d is %d, expected a size >= 0 or -1', i, s), level + 1)
    else
      n = n * s
    end
  end
  self.size, self.numElements, self.inferred = size, n, inferred
  return self
end

function View:__init(...)
  Module.__init(self)
  set_size(self, 3, ...)
end

-- view:resetSize(d1, d2, ...): new sizes (as the constructor's); returns the module.
function View:resetSize(...)
  set_size(self, 2, ...)
  return self
end

-- view:setNumInputDims(n): the input's last n dims are one example's (the rest and
-- any elements left over form the batch dim); returns the module.
function View:setNumInputDims(n)
  if n ~= nil and (math.type(n) ~= 'integer' or n < 0) then
    error('nn.View:setNumInputDims: expected a non-negative integer, got ' .. tostring(n), 2)
  end
  self.numInputDims = n
  return self
end

-- the batch size of x under Torch7's rule, nil when there is none
local function batch_size(self, x)
  local nd = x:dim()
  local m = math.min(self.numInputDims or nd, nd)
  local elements = 1
  for d = nd - m + 1, nd do elements = elements * x:size(d) end
  if self.numElements == 0 or elements % self.numElements ~= 0 then
    error(string.format('nn.View: input of size %s does not fit the view %s', tostring(x:size()),
                        table.concat(self.size, 'x')), 4)
  end
  local bsz = self.inferred and 1 or elements // self.numElements
  for d = 1, nd - m do bsz = bsz * x:size(d) end
  if bsz == 1 and (self.numInputDims == nil or nd <= self.numInputDims) then return nil end
  return bsz
end

function View:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.View: expected a tensor input, got ' .. torch.type(x), 3) end
  local bsz = batch_size(self, x)
  local shape = {table.unpack(self.size)}
  if bsz then table.insert(shape, 1, bsz) end
  return x:view(shape)
end

function View:extra_repr() return table.concat(self.size, 'x') end

return View
