-- optim.ConfusionMatrix: counts of (target, prediction) class pairs over a
-- classifier's outputs, with per-class and global accuracy, printed as
-- Torch7 prints it. Classes are 1-based; a target of 0 or less is skipped.
local torch = require 'torch'
local optim = require 'optim'

local fail = optim._error

-- A full reduction as a Lua number, in either dialect.
local function number(v) return torch.is_tensor(v) and v:item() or v end

local ConfusionMatrix = torch.class('optim.ConfusionMatrix')

-- optim.ConfusionMatrix(classes) or (nclasses, classes): classes is a list
-- of class names (only printed). Fields: mat (nclasses x nclasses int64
-- counts, rows targets, columns predictions), valids and unionvalids
-- (per-class accuracy and intersection over union, float32), totalValid,
-- averageValid, averageUnionValid (after updateValids or printing).
function ConfusionMatrix:__init(nclasses, classes)
  if type(nclasses) == 'table' then nclasses, classes = #nclasses, nclasses end
  if math.type(nclasses) ~= 'integer' or nclasses < 1 then
    fail('optim.ConfusionMatrix: expects a list of classes or a class count, got %s', tostring(nclasses))
  end
  self.nclasses = nclasses
  self.classes = classes or {}
  self.mat = torch.zeros(nclasses, nclasses, {dtype = 'int64'})
  self.valids = torch.zeros(nclasses, {dtype = 'float32'})
  self.unionvalids = torch.zeros(nclasses, {dtype = 'float32'})
  self.totalValid, self.averageValid, self.averageUnionValid = 0, 0, 0
end

-- A class index from a number, or the position of the largest score of a
-- 1-D tensor.
local function class_of(self, v, what)
  if type(v) == 'number' then return v end
  if torch.is_tensor(v) then
    if v:dim() ~= 1 then fail('optim.ConfusionMatrix:add: %s must be a number or a 1-D tensor of scores', what) end
    local _, index = v:max(1)
    return index:item()
  end
  fail('optim.ConfusionMatrix:add: %s must be a number or a 1-D tensor, got %s', what, torch.type(v))
end

local function count(self, prediction, target)
  if target <= 0 then return end
  local n = self.nclasses
  if target > n or prediction < 1 or prediction > n or math.floor(target) ~= target or math.floor(prediction) ~= prediction then
    fail('optim.ConfusionMatrix:add: class out of range 1..%d (target %s, prediction %s)', n, tostring(target),
         tostring(prediction))
  end
  local row = self.mat[target]
  row[prediction] = row[prediction] + 1
end

-- cm:add(prediction, target): one sample. prediction: a class index or a
-- 1-D tensor of scores (its argmax counts); target: a class index (0:
-- skipped) or a 1-D tensor (its argmax, a one-hot target).
function ConfusionMatrix:add(prediction, target)
  count(self, class_of(self, prediction, 'prediction'), class_of(self, target, 'target'))
end

-- The class of each row: a 1-D tensor is the classes themselves; an n x 1
-- one too; an n x C tensor gives each row's argmax.
local function classes_of(t, what)
  if not torch.is_tensor(t) then
    fail('optim.ConfusionMatrix:batchAdd: %s must be a tensor, got %s', what, torch.type(t))
  end
  if t:dim() == 1 then return t end
  if t:dim() == 2 then
    if t:size(2) == 1 then return (t:select(2, 1)) end
    local _, index = t:max(2)
    return (index:reshape(-1))
  end
  fail('optim.ConfusionMatrix:batchAdd: %s has an invalid number of dimensions (%d; 1 or 2 expected)', what, t:dim())
end

-- cm:batchAdd(predictions, targets): a batch; predictions n x C scores (or
-- n class indices), targets n class indices (or n x C one-hot rows).
function ConfusionMatrix:batchAdd(predictions, targets)
  local preds, targs = classes_of(predictions, 'predictions'), classes_of(targets, 'targets')
  if preds:numel() ~= targs:numel() then
    fail('optim.ConfusionMatrix:batchAdd: %d predictions for %d targets', preds:numel(), targs:numel())
  end
  for i = 1, preds:numel() do count(self, math.tointeger(preds[i]) or preds[i], math.tointeger(targs[i]) or targs[i]) end
end

-- cm:zero(): clears the counts and the accuracies.
function ConfusionMatrix:zero()
  self.mat:zero()
  self.valids:zero()
  self.unionvalids:zero()
  self.totalValid, self.averageValid, self.averageUnionValid = 0, 0, 0
end

-- cm:updateValids(): valids[t] = mat[t][t] / (row t's count), unionvalids
-- [t] = mat[t][t] / (row t + column t - mat[t][t]), totalValid = trace /
-- total, averageValid and averageUnionValid the means over the classes
-- whose value is defined (NaN for a class never seen).
function ConfusionMatrix:updateValids()
  local n, mat = self.nclasses, self.mat
  local rows, cols = mat:sum(2):reshape(-1), mat:sum(1):reshape(-1)
  local trace = 0
  for t = 1, n do
    local hit = mat[t][t]
    self.valids[t] = hit / rows[t]
    self.unionvalids[t] = hit / (rows[t] + cols[t] - hit)
    trace = trace + hit
  end
  self.totalValid = trace / number(mat:sum())
  local sum, count_valid, union_sum, count_union = 0, 0, 0, 0
  for t = 1, n do
    local v, u = self.valids[t], self.unionvalids[t]
    if v == v then
      sum, count_valid = sum + v, count_valid + 1
      if u == u then union_sum, count_union = union_sum + u, count_union + 1 end
    end
  end
  self.averageValid = sum / count_valid
  self.averageUnionValid = union_sum / count_union
end

-- cm:farFrr(): false rejection and false acceptance rates per class.
-- For a class i with samples, FRR = 1 - mat[i][i] / (row i's count) and FAR
-- = the mean, over the other classes j with samples, of mat[j][i] / (row
-- j's count). Returns classFrrs and classFars (one per class, -1 for a
-- class with no samples), then frrs and fars (the classes with samples).
function ConfusionMatrix:farFrr()
  local n, mat = self.nclasses, self.mat
  local rows = mat:sum(2):reshape(-1)
  local class_frrs, class_fars = torch.full({n}, -1.0), torch.full({n}, -1.0)
  local frrs, fars = {}, {}
  for i = 1, n do
    if rows[i] ~= 0 then
      local frr = 1 - mat[i][i] / rows[i]
      local sum, others = 0, 0
      for j = 1, n do
        if j ~= i and rows[j] ~= 0 then sum, others = sum + mat[j][i] / rows[j], others + 1 end
      end
      local far = sum / others
      class_frrs[i], class_fars[i] = frr, far
      frrs[#frrs + 1], fars[#fars + 1] = frr, far
    end
  end
  return class_frrs, class_fars, torch.tensor(frrs, {dtype = class_frrs.dtype}),
         torch.tensor(fars, {dtype = class_fars.dtype})
end

-- A number as Lua 5.1 (Torch7) printed it: %.14g, so 100 not 100.0.
local function number_text(v) return string.format('%.14g', v) end

-- print(cm): Torch7's table: the counts row by row (width 8, or wider for
-- large counts), each row's accuracy and class name, then the average row
-- accuracy, the VOC measure and the global accuracy.
function ConfusionMatrix:__tostring__()
  self:updateValids()
  local n = self.nclasses
  local max_count = number(self.mat:max())
  local width = 8
  if max_count > 0 then width = math.max(8, 1 + math.ceil(math.log(max_count, 10))) end
  local named = self.classes[1] ~= nil
  local out = {'ConfusionMatrix:\n', '['}
  for t = 1, n do
    out[#out + 1] = t == 1 and '[' or ' ['
    for p = 1, n do out[#out + 1] = string.format('%' .. width .. 'd', self.mat[t][p]) end
    out[#out + 1] = (t == n and ']]  ' or ']   ') .. string.format('%2.3f', self.valids[t] * 100) .. '% '
    if named then out[#out + 1] = '\t[class: ' .. tostring(self.classes[t] or '') .. ']' end
    out[#out + 1] = '\n'
  end
  out[#out + 1] = ' + average row correct: ' .. number_text(self.averageValid * 100) .. '% \n'
  out[#out + 1] = ' + average rowUcol correct (VOC measure): ' .. number_text(self.averageUnionValid * 100) .. '% \n'
  out[#out + 1] = ' + global correct: ' .. number_text(self.totalValid * 100) .. '%'
  return table.concat(out)
end
ConfusionMatrix.__tostring = ConfusionMatrix.__tostring__

return ConfusionMatrix
