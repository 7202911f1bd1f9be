-- startup_spec.lua: `require 'torch'` leaves Torch7's files, LAPACK, the
-- tester, the timer and the command-line parser unloaded until first use, and
-- the first use of anything they define loads them (each run in a fresh th,
-- where nothing has loaded them yet).
local th = dofile('spec/support/th.lua')

local function run_lua(code)
  local path = os.tmpname()
  local f = assert(io.open(path, 'w'))
  f:write(code)
  f:close()
  local ok, out = th.run(path)
  os.remove(path)
  return ok, out
end

describe('start-up', function()
  it('loads the modules of first use only when asked', function()
    local ok, out = run_lua([[
      local names = {}
      for module in pairs(torch._lazy_modules) do
        if package.loaded[module] then names[#names + 1] = module end
      end
      print('loaded: ' .. table.concat(names, ' '))
    ]])
    assert.is_true(ok, out)
    assert.are.equal('loaded: \n', out)
  end)

  it('lists every field, method and class each such module defines', function()
    -- in a fresh process per module: the module's own definitions, found by
    -- comparing the torch table and the tensor methods before and after it loads
    local ok, list = run_lua([[
      local m = {} for k in pairs(torch._lazy_modules) do m[#m + 1] = k end
      table.sort(m) print(table.concat(m, ' '))
    ]])
    assert.is_true(ok, list)
    for module in list:gmatch('%S+') do
      local ok2, out = run_lua(([[
        local module = MODULE
        local before_t, before_m = {}, {}
        for k in pairs(torch) do before_t[k] = true end
        for k in pairs(torch._methods) do before_m[k] = true end
        local defines = torch._lazy_modules[module]
        local save = {}
        for _, n in ipairs(defines.wraps or {}) do save[n] = rawget(torch, n) end
        require(module)
        local listed = {}
        for other, d in pairs(torch._lazy_modules) do      -- it and those it loads
          if other == module or package.loaded[other] then
            for _, k in ipairs(d.fields or {}) do listed['torch.' .. k] = true end
            for _, k in ipairs(d.methods or {}) do listed['x:' .. k] = true end
            for _, k in ipairs(d.wraps or {}) do listed['torch.' .. k] = true end
          end
        end
        local missing = {}
        for k, v in pairs(torch) do
          if not before_t[k] and not listed['torch.' .. k] then missing[#missing + 1] = 'torch.' .. k end
          if save[k] ~= nil and v == save[k] then missing[#missing + 1] = 'wraps torch.' .. k .. ' but did not' end
        end
        for k in pairs(torch._methods) do
          if not before_m[k] and not listed['x:' .. k] then missing[#missing + 1] = 'x:' .. k end
        end
        for k in pairs(listed) do
          local t, name = k:match('^(torch)%.(.*)$')
          if t and rawget(torch, name) == nil then missing[#missing + 1] = 'listed but not defined: ' .. k end
          name = k:match('^x:(.*)$')
          if name and rawget(torch._methods, name) == nil then missing[#missing + 1] = 'listed but not defined: ' .. k end
        end
        for _, c in ipairs(defines.classes or {}) do
          if torch.getmetatable(c) == nil then missing[#missing + 1] = 'class ' .. c end
        end
        table.sort(missing)
        print('unlisted: ' .. table.concat(missing, ' '))
      ]]):gsub('MODULE', string.format('%q', module)))
      assert.is_true(ok2, out)
      assert.are.equal('unlisted: \n', out, module)
    end
  end)

  it('loads a module the first time one of its names is read', function()
    local ok, out = run_lua([[
      local function loaded(m) return package.loaded[m] and 'yes' or 'no' end
      local a = torch.randn(3, 3, {dtype = 'float64'}) + torch.eye(3, {dtype = 'float64'}) * 3
      io.write(loaded('torch.linalg'), ' ')
      local d = a:det()                         -- a method first
      io.write(loaded('torch.linalg'), ' ', tostring(math.abs(d:item() - torch.linalg.det(a):item()) < 1e-12), ' ')
      io.write(loaded('torch.cmdline'), ' ')
      io.write(tostring(torch.getmetatable('torch.CmdLine') ~= nil), ' ', loaded('torch.cmdline'), ' ')
      io.write(tostring(torch.Tester ~= nil), ' ', loaded('torch.tester'), ' ')
      local path = os.tmpname()
      io.write(loaded('torch.t7format'), ' ')
      torch.save(path, {1, 2, 3}, 'ascii')      -- Torch7's format, from the first call
      io.write(loaded('torch.t7format'), ' ')
      local f = io.open(path) local text = f:read('a') f:close()
      io.write(text:sub(1, 1), ' ', tostring(torch.load(path)[3]), ' ')
      torch.save(path, {4})                       -- moontorch's own
      io.write(tostring(torch.load(path)[1]), '\n')
      os.remove(path)
    ]])
    assert.is_true(ok, out)
    assert.are.equal('no yes true no true yes true yes no yes 3 3 4\n', out)
  end)

  it('names the caller\'s line in errors from the first call of a function loaded on first use', function()
    local ok, out = run_lua("local ok, err = pcall(function()\n  torch.save(nil, 1, 'binary')\nend)\nprint(err)\n")
    assert.is_true(ok, out)
    assert.matches(':2: torch.save', out)
  end)
end)
