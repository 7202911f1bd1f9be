-- data.default_collate(samples): a batch from a Lua array of samples.
-- Tensors are stacked (a new first dim), numbers become a tensor (int64 when
-- all are integers, else float), booleans a bool tensor, strings a Lua
-- array; tables recurse field by field (arrays by position, records by key).
local torch = require 'torch'
local data = require 'data'

local function collate(samples)
  local first = samples[1]
  if first == nil then error('default_collate: an empty batch', 2) end
  if torch.is_tensor(first) then
    for i, s in ipairs(samples) do
      if not torch.is_tensor(s) or s:size() ~= first:size() then
        error(string.format('default_collate: sample %d is %s, sample 1 a tensor of size %s', i,
                            torch.is_tensor(s) and 'a tensor of size ' .. tostring(s:size()) or 'a ' .. type(s),
                            tostring(first:size())), 2)
      end
    end
    return torch.stack(samples, 1)
  end
  local kind = type(first)
  if kind == 'number' then
    local ints = true
    for _, s in ipairs(samples) do if math.type(s) ~= 'integer' then ints = false end end
    return torch.tensor(samples, {dtype = ints and 'int64' or torch.get_default_dtype()})
  elseif kind == 'boolean' then
    return torch.tensor(samples, {dtype = 'bool'})
  elseif kind == 'string' then
    return samples
  elseif kind == 'table' then
    local out = {}
    for k in pairs(first) do
      local column = {}
      for i, s in ipairs(samples) do
        if type(s) ~= 'table' or s[k] == nil then
          error(string.format("default_collate: sample %d has no field '%s'", i, tostring(k)), 2)
        end
        column[i] = s[k]
      end
      out[k] = collate(column)
    end
    return out
  end
  error('default_collate: cannot batch a ' .. kind, 2)
end

data.default_collate = collate
return data
