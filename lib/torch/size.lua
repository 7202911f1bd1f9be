-- torch.Size, what x:size() and x.shape give (the Torch7 dialect's x:size()
-- is a LongStorage instead, lib/torch/torch7.lua): an array of the sizes
-- that compares with == to another torch.Size or a plain array of the same
-- numbers, and prints as PyTorch's, torch.Size([2, 3]). moontorch's own
-- messages keep the short form ("got size 2x3"). Also x:storage_offset(),
-- PyTorch's 0-based name beside Torch7's 1-based x:storageOffset().
local torch = require 'torch.core'
local methods = torch._methods

local size_mt = debug.getregistry()['torch.Size']

-- lib/, where moontorch's own Lua sources live
local lib_root = debug.getinfo(1, 'S').source:match('^@(.*[/\\])torch[/\\]size%.lua$')

local printer = lib_root and '@' .. lib_root .. 'torch/print.lua'

-- Whether tostring was called from moontorch's libraries (level: the
-- __tostring metamethod's caller's caller, C frames skipped); the REPL's
-- printer (lib/torch/print.lua) shows the user's values, so it is the user's.
local function from_library()
  local level = 3
  local info = debug.getinfo(level, 'S')
  while info and info.what == 'C' do
    level = level + 1
    info = debug.getinfo(level, 'S')
  end
  return info ~= nil and lib_root ~= nil and info.source ~= printer and info.source:sub(2, #lib_root + 1) == lib_root
end

local function short(s)
  local parts = {}
  for i = 1, #s do parts[i] = tostring(s[i]) end
  return #parts == 0 and '[]' or table.concat(parts, 'x')
end

size_mt.__name = 'torch.Size'
size_mt.__tostring = function(s)
  if from_library() then return short(s) end
  local parts = {}
  for i = 1, #s do parts[i] = tostring(s[i]) end
  return 'torch.Size([' .. table.concat(parts, ', ') .. '])'
end
size_mt.__eq = function(a, b)
  if type(a) ~= 'table' or type(b) ~= 'table' or #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end
size_mt.__index = {
  size = function(s) return #s end,
  numel = function(s) local n = 1 for i = 1, #s do n = n * s[i] end return n end,
  totable = function(s) return {table.unpack(s)} end,
}

-- torch.Size(sizes): a torch.Size of a table of non-negative integers (or
-- another torch.Size or a LongStorage), as x:size() returns: torch.Size({2, 3}).
torch.Size = setmetatable({}, {
  __call = function(_, sizes)
    if torch.isStorage and torch.isStorage(sizes) then sizes = sizes:totable() end
    if type(sizes) ~= 'table' then
      error('torch.Size: expected a table of sizes, as torch.Size({2, 3}), got ' .. torch.type(sizes), 2)
    end
    local s = {}
    for i = 1, #sizes do
      local v = sizes[i]
      if math.type(v) ~= 'integer' or v < 0 then
        error(string.format('torch.Size: size %d must be an integer >= 0, got %s', i, tostring(v)), 2)
      end
      s[i] = v
    end
    return setmetatable(s, size_mt)
  end,
  __tostring = function() return 'torch.Size' end,
})

-- x:storage_offset(): the index of x's first element in its storage,
-- counted from 0 as PyTorch does (x:storageOffset() counts from 1, Torch7's).
function methods.storage_offset(x)
  if not torch.is_tensor(x) then
    error('storage_offset: expected a tensor (call it as x:storage_offset()), got ' .. torch.type(x), 2)
  end
  return x:storageOffset() - 1
end

return torch.Size
