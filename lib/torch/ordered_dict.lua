-- torch.OrderedDict: a table that iterates in insertion order (pairs, printing, saving), as
-- PyTorch's state dicts do. Keys and values live in the table itself (d[k], d[k] = v,
-- d[k] = nil); the order is kept beside it. A key removed and set again moves to the end.
-- torch.save keeps the order; a Torch7 file holds it as a plain table.
local torch = require 'torch.core'

local order_of = setmetatable({}, {__mode = 'k'})     -- dict -> {keys..., pos = {key -> index}}
local GONE = {}                                        -- an entry whose key moved or went

local OrderedDict = {__name = 'torch.OrderedDict'}

local function order(d)
  local o = order_of[d]
  if o == nil then
    o = {pos = {}}
    for k in next, d do o[#o + 1] = k; o.pos[k] = #o end
    order_of[d] = o
  end
  return o
end

function OrderedDict.__newindex(d, k, v)
  if v == nil then return end
  local o = order(d)
  local at = o.pos[k]
  if at ~= nil then o[at] = GONE end
  o[#o + 1] = k
  o.pos[k] = #o
  rawset(d, k, v)
end

function OrderedDict.__pairs(d)
  local o, i = order(d), 0
  return function()
    while true do
      i = i + 1
      local k = o[i]
      if k == nil then return nil end
      if k ~= GONE then
        local v = rawget(d, k)
        if v ~= nil then return k, v end
      end
    end
  end, d, nil
end

-- the keys present, in order (torch.save writes them so)
function OrderedDict.__ordered_keys(d)
  local keys = {}
  for k in OrderedDict.__pairs(d) do keys[#keys + 1] = k end
  return keys
end

-- d made an OrderedDict whose order is keys (torch.load, after reading its entries)
function OrderedDict.__restore_order(d, keys)
  local o = {pos = {}}
  for i, k in ipairs(keys) do o[i] = k; o.pos[k] = i end
  order_of[d] = o
  return setmetatable(d, OrderedDict)
end

-- torch.OrderedDict(pairs): an empty OrderedDict, or one holding the {key, value} pairs of
-- a list in its order.
function torch.OrderedDict(entries)
  local d = setmetatable({}, OrderedDict)
  order_of[d] = {pos = {}}
  if entries ~= nil then
    if type(entries) ~= 'table' then
      error('torch.OrderedDict: expected a list of {key, value} pairs, got a ' .. type(entries), 2)
    end
    for i, e in ipairs(entries) do
      if type(e) ~= 'table' or e[1] == nil then
        error(string.format('torch.OrderedDict: entry %d must be a {key, value} pair', i), 2)
      end
      d[e[1]] = e[2]
    end
  end
  return d
end

-- torch.is_ordered_dict(v): whether v is a torch.OrderedDict.
function torch.is_ordered_dict(v) return getmetatable(v) == OrderedDict end

torch.register_metatable('torch.OrderedDict', OrderedDict)
return OrderedDict
