-- fuzz_findings_spec.lua: what the API fuzzer (fuzz/api.lua) found, and what the review
-- behind docs/security.md found, each kept as a spec: the call that crashed or tripped
-- a sanitizer now raises a clear Lua error.
local torch = require 'torch'

local function raises(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  assert.is_truthy(tostring(err):find(pattern), tostring(err))
end

describe('metamethods called from Lua', function()
  local mt = torch._tensor_mt

  it('__gc with no tensor does nothing', function()
    mt.__gc()
    mt.__gc(5)
    mt.__gc(torch.zeros(2):storage())
  end)

  it('__gc releases a tensor once: it is no tensor after, for the collector too', function()
    local x = torch.ones(3)
    mt.__gc(x)
    mt.__gc(x)
    assert.is_nil(getmetatable(x))
    assert.is_false(torch.is_tensor(x))
    raises('must be a tensor', torch.add, x, 1)
    x = nil
    collectgarbage()
  end)

  it('a storage released by __gc is no storage after', function()
    local s = torch.ones(3):storage()
    local smt = getmetatable(s)
    smt.__gc(s)
    smt.__gc(s)
    assert.is_nil(getmetatable(s))
    raises('torch.Storage expected', smt.__index, s, 1)
    collectgarbage()
  end)

  it('__index, __newindex and __len check that they were given a tensor', function()
    raises('^index: argument 1 must be a tensor, got number', mt.__index, 3, 4)
    raises('^index assignment: argument 1 must be a tensor, got string', mt.__newindex, 'x', 1, 2)
    raises('^len: argument 1 must be a tensor, got table', mt.__len, {})
  end)

  it('an index out of range is named in full', function()
    local x = torch.zeros(3)
    raises('index 4611686018427387904 out of range for dim 1 of size 3', function() return x[1 << 62] end)
    raises('index %-9223372036854775808 out of range', function() x[math.mininteger] = 1 end)
    raises('storage: index 9223372036854775807 out of range %[1, 3%]', function() return x:storage()[math.maxinteger] end)
  end)
end)
