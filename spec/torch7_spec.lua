-- torch7_spec.lua: Torch7's forms of the torch package -- storages, the
-- result-tensor-first calls, Torch7's names and samplers -- and the Torch7
-- dialect. Expected values follow from the definitions in Torch7's
-- documentation (doc/storage.md, doc/tensor.md, doc/maths.md, doc/random.md).
local torch = require 'torch'
local raises = dofile('spec/support/raises.lua')

-- runs fn in the Torch7 dialect, switching back even when it fails
local function in_torch7(fn)
  torch.dialect('torch7')
  local ok, err = pcall(fn)
  torch.dialect('pytorch')
  if not ok then error(err, 0) end
end

describe('storages', function()
  it('are made from a size, a table, or a window onto another storage', function()
    local s = torch.FloatStorage(3)
    assert.are.equal(3, #s)
    assert.are.equal(3, s:size())
    assert.are.same({0, 0, 0}, s:totable())
    local d = torch.DoubleStorage({1, 2, 3, 4, 5})
    assert.are.equal('torch.DoubleStorage', torch.type(d))
    assert.are.equal(8, d:elementSize())
    local w = torch.DoubleStorage(d, 2, 3)          -- elements 2..4, shared
    assert.are.same({2, 3, 4}, w:totable())
    w[1] = -2
    assert.are.equal(-2, d[2])
    w:fill(9)
    assert.are.same({1, 9, 9, 9, 5}, d:totable())
    assert.are.same({true, false}, torch.BoolStorage({true, false}):totable())
    assert.are.equal(7, torch.LongStorage({7})[1])
    assert.are.equal('hello', torch.CharStorage():string('hello'):string())
  end)

  it('of a tensor share its memory, and make views of it', function()
    local x = torch.zeros(2, 3)
    local s = x:storage()
    assert.are.equal(6, #s)
    assert.is_true(torch.isStorage(s))
    assert.is_false(torch.isStorage(x))
    s[5] = 7
    assert.are.equal(7, x[2][2])
    -- elements 2, 4, 6 of the storage as a 3-vector (offset 2, stride 2)
    local v = torch.FloatTensor(s, 2, torch.LongStorage{3}, torch.LongStorage{2})
    v:fill(1)
    assert.are.same({{0, 1, 0}, {1, 7, 1}}, x:totable())
    assert.are.equal(2, v:storageOffset())
    local y = torch.FloatTensor()
    y:set(s, 1, torch.LongStorage{3, 2})
    assert.is_true(y:storage() == x:storage())
    assert.is_true(y:isSetTo(x:view(3, 2)))
  end)

  it('resize, copy and convert', function()
    local s = torch.IntStorage({1, 2, 3})
    s:resize(5)
    assert.are.same({1, 2, 3, 0, 0}, s:totable())
    s:resize(2)
    assert.are.same({1, 2}, s:totable())
    s:copy(torch.tensor({5, 6}))
    assert.are.same({5, 6}, s:totable())
    local f = s:float()
    assert.are.equal('torch.FloatStorage', torch.type(f))
    assert.are.same({5, 6}, f:totable())
  end)

  it('are accepted as sizes', function()
    assert.are.same({2, 3}, torch.zeros(torch.LongStorage{2, 3}):size():totable())
    assert.are.same({3, 2}, torch.ones(6):view(torch.LongStorage{3, 2}):size():totable())
    assert.is_true(torch.zeros(2, 3):isSize(torch.LongStorage{2, 3}))
  end)

  it('refuse bad indices, windows and views', function()
    local s = torch.FloatStorage(3)
    raises('index 4 out of range', function() return s[4] end)
    raises('index 0 out of range', function() s[0] = 1 end)
    raises('passes the end', torch.FloatStorage, s, 2, 3)
    raises('reaches element 7 of a storage of 3', function()
      return torch.FloatTensor(s, 1, torch.LongStorage{3}, torch.LongStorage{3})
    end)
    raises('a float32 tensor cannot view a torch.DoubleStorage', function() return torch.FloatTensor(torch.DoubleStorage(2)) end)
    raises('sizes must be a LongStorage', torch.zeros, torch.FloatStorage(2))
  end)
end)

describe('result-tensor-first forms', function()
  local a = torch.tensor({{1, 2}, {3, 4}}, {dtype = 'float64'})
  local b = torch.tensor({{5, 6}, {7, 8}}, {dtype = 'float64'})

  it('write into the result tensor, resized, and return it', function()
    local res = torch.DoubleTensor()
    assert.is_true(rawequal(res, torch.add(res, a, b)))
    assert.are.same({{6, 8}, {10, 12}}, res:totable())
    torch.cmul(res, a, b)
    assert.are.same({{5, 12}, {21, 32}}, res:totable())
    torch.mul(res, a, 2)
    assert.are.same({{2, 4}, {6, 8}}, res:totable())
    torch.add(res, a, 10, b)                         -- a + 10 * b
    assert.are.same({{51, 62}, {73, 84}}, res:totable())
    torch.sum(res, a, 2)
    assert.are.same({3, 7}, res:totable())
    torch.cumsum(res, a, 1)
    assert.are.same({{1, 2}, {4, 6}}, res:totable())
    torch.mm(res, a, b)
    assert.are.same({{19, 22}, {43, 50}}, res:totable())
    torch.abs(res, -a)
    assert.are.same({{1, 2}, {3, 4}}, res:totable())
  end)

  it('give values and indices: max, sort', function()
    local vals, idx = torch.DoubleTensor(), torch.LongTensor()
    torch.max(vals, idx, a, 2)
    assert.are.same({2, 4}, vals:view(-1):totable())
    assert.are.same({2, 2}, idx:view(-1):totable())
    torch.sort(vals, idx, torch.tensor({3, 1, 2}, {dtype = 'float64'}), 1, true)
    assert.are.same({3, 2, 1}, vals:totable())
    assert.are.same({1, 3, 2}, idx:totable())
  end)

  it("exist for the functions of Torch7's maths documentation, each giving its plain answer into res", function()
    torch.manualSeed(3)
    local x = torch.rand(4, 4):double()
    local y = torch.rand(4, 4):double() + 0.5
    local v = torch.rand(4):double()
    local i = torch.LongTensor(4, 4):random(0, 7)
    local j = torch.LongTensor(4, 4):random(0, 3)
    local cases = {
      {'cumsum', x, 2}, {'cumprod', x, 2}, {'mean', x, 2}, {'std', x, 2}, {'var', x, 2}, {'prod', x, 2},
      {'lshift', i, 2}, {'rshift', i, 1}, {'clshift', i, j}, {'crshift', i, j}, {'bitand', i, 3}, {'cbitand', i, j},
      {'bitor', i, 3}, {'cbitor', i, j}, {'bitxor', i, 3}, {'cbitxor', i, j}, {'fmod', x, 0.3}, {'remainder', x, 0.3},
      {'mod', x, 0.3}, {'cfmod', x, y}, {'cremainder', x, y}, {'cmod', x, y}, {'cmax', x, y}, {'cmax', x, 0.5},
      {'cmin', x, 0.5}, {'cpow', x, y}, {'div', x, 2}, {'cdiv', x, y}, {'atan2', x, y}, {'histc', v, 4},
      {'bhistc', x, 4}, {'conv2', x, y:narrow(1, 1, 2):narrow(2, 1, 2)}, {'xcorr2', x, y:narrow(1, 1, 2):narrow(2, 1, 2)},
      {'cross', torch.rand(3, 2):double(), torch.rand(3, 2):double()}, {'renorm', x, 2, 1, 0.5}, {'tril', x, 1}, {'triu', x},
      {'diag', v}, {'sign', x - 0.5}, {'frac', x * 3}, {'pow', x, 2}, {'lerp', x, y, 0.3}, {'ger', v, v}, {'mv', x, v},
      {'addcmul', x, 2, y, y}, {'addcdiv', x, 2, y, y}, {'clamp', x, 0.2, 0.6}, {'reshape', x, 2, 8}, {'sum', x, 1},
    }
    local bad = {}
    for _, c in ipairs(cases) do
      local name = c[1]
      local f = torch[name]
      if not f then bad[#bad + 1] = name .. ' (missing)' else
        local args = {table.unpack(c, 2)}
        local ok1, r1 = pcall(f, table.unpack(args))
        local res = torch.Tensor():type(torch.is_tensor(r1) and r1:type() or 'torch.DoubleTensor')
        local ok2, r2 = pcall(f, res, table.unpack(args))
        if not ok1 then bad[#bad + 1] = name .. ' plain: ' .. tostring(r1)
        elseif not ok2 then bad[#bad + 1] = name .. ' rf: ' .. tostring(r2)
        elseif not rawequal(r2, res) then bad[#bad + 1] = name .. ' rf returned another tensor'
        elseif not (res:isSameSizeAs(r1) and res:double():add(-1, r1:double()):abs():max() < 1e-12) then
          bad[#bad + 1] = name .. ' rf value differs'
        end
      end
    end

    assert.are.same({}, bad)
  end)

  it("take Torch7's positional scalars in the add* products", function()
    local M = torch.ones(2, 2, {dtype = 'float64'})
    -- 2 * M + 3 * a @ b
    assert.are.same({{59, 68}, {131, 152}}, torch.addmm(2, M, 3, a, b):totable())
    local res = torch.DoubleTensor()
    torch.addmm(res, 0, M, 1, a, b)
    assert.are.same({{19, 22}, {43, 50}}, res:totable())
    -- PyTorch's form is unchanged
    assert.are.same({{20, 23}, {44, 51}}, torch.addmm(M, a, b):totable())
    local v = torch.tensor({1, 1}, {dtype = 'float64'})
    assert.are.same({4, 8}, torch.addmv(1, v, 1, a, v):totable())
  end)

  it('join: cat(x1, x2, dim) and cat(res, {x1, x2}, dim)', function()
    assert.are.same({{1, 2, 5, 6}, {3, 4, 7, 8}}, torch.cat(a, b, 2):totable())
    local res = torch.DoubleTensor()
    torch.cat(res, {a, b}, 1)
    assert.are.same({4, 2}, res:size():totable())
    -- PyTorch joins along the first dim when none is given
    assert.are.same({4, 2}, torch.cat({a, b}):size():totable())
  end)

  it('leave PyTorch forms alone and report errors at the caller', function()
    assert.are.same({{11, 14}, {17, 20}}, torch.add(a, b, 2):totable())    -- alpha
    local ok, err = pcall(function() return torch.add(a, torch.ones(3)) end)
    assert.is_false(ok)
    assert.matches('^spec/torch7_spec.lua:%d+: add: shapes', err)
  end)
end)

describe("Torch7's names", function()
  it('cinv, csub, cpow, nDimension, apply, map, map2', function()
    local x = torch.tensor({1, 2, 4}, {dtype = 'float64'})
    assert.are.same({1, 0.5, 0.25}, x:cinv():totable())
    assert.are.same({1, 4, 16}, torch.cpow(x, 2):totable())
    assert.are.equal(1, x:nDimension())
    local y = x:clone():apply(function(v) return v * 10 end)
    assert.are.same({10, 20, 40}, y:totable())
    local z = x:clone():map(y, function(u, v) return u + v end)
    assert.are.same({11, 22, 44}, z:totable())
    local w = x:clone():map2(y, z, function(u, v, t) return u * v - t end)
    assert.are.same({-1, 18, 116}, w:totable())
    raises('map: tensors of 3 and 2 elements', function() x:map(torch.ones(2), function() end) end)
  end)

  it('range, linspace and logspace write into self, keeping its geometry', function()
    local x = torch.zeros(2, 3, {dtype = 'float64'})
    x:narrow(2, 2, 2):range(0, 3)
    assert.are.same({{0, 0, 1}, {0, 2, 3}}, x:totable())
    assert.are.same({1, 1.5, 2}, torch.DoubleTensor():linspace(1, 2, 3):totable())
    assert.are.same({4}, torch.FloatTensor():range(0.6, 0.9, 0.1):size():totable())
  end)

  it('classes: torch.class defines globals, isTypeOf follows parents and patterns', function()
    torch.class('SpecTorch7Base')
    torch.class('SpecTorch7Child', 'SpecTorch7Base')
    local c = SpecTorch7Child()
    assert.is_true(torch.isTypeOf(c, 'SpecTorch7Base'))
    assert.is_true(torch.isTypeOf(c, SpecTorch7Child))
    assert.is_false(torch.isTypeOf(SpecTorch7Base(), 'SpecTorch7Child'))
    local t = torch.LongTensor()
    assert.is_true(torch.isTypeOf(t, torch.LongTensor))
    assert.is_true(torch.isTypeOf(t, 'torch.*Tensor'))
    assert.is_false(torch.isTypeOf(t, 'torch.Long'))
    assert.is_false(torch.isTypeOf(t, torch.IntTensor))
    assert.are.equal(torch.DoubleTensor, torch.getmetatable('torch.DoubleTensor'))
    _G.SpecTorch7Base, _G.SpecTorch7Child = nil, nil
  end)

  it('samplers fill in place, and draws give numbers', function()
    local x = torch.zeros(1000, {dtype = 'float64'})
    assert.is_true(rawequal(x, x:uniform(2, 3)))
    assert.is_true(x:min():item() >= 2 and x:max():item() < 3)
    local r = torch.LongTensor(1000):random(3, 5)
    assert.are.equal(3, r:min():item())
    assert.are.equal(5, r:max():item())
    r:random(2)
    assert.is_true(r:min():item() >= 1 and r:max():item() <= 2)
    local u = torch.uniform(-1, -0.5)
    assert.are.equal('number', type(u))
    assert.is_true(u >= -1 and u < -0.5)
    local k = torch.random(4, 4)
    assert.are.equal(4, k)
    assert.are.equal('number', type(torch.normal(0, 1)))
    assert.is_true(torch.exponential(2) >= 0)
    assert.is_true(x:logNormal(0, 0.1):min():item() > 0)
    raises('empty', function() torch.LongTensor(2):random(5, 4) end)
  end)

  it('generators come first and fork the stream', function()
    torch.manualSeed(7)
    local gen = torch.Generator()
    torch.setRNGState(gen, torch.getRNGState())
    local a1 = torch.rand(5)
    local b1 = torch.rand(gen, 5)
    assert.is_true(torch.equal(a1, b1))
    torch.manualSeed(gen, 3)
    local c1 = torch.random(gen, 1, 1000)
    torch.manualSeed(gen, 3)
    assert.are.equal(c1, torch.random(gen, 1, 1000))
    assert.are.equal(3, torch.initialSeed(gen))
  end)
end)

describe("Torch7's other forms", function()
  it('split and chunk fill a result table; view and expand take a source after self', function()
    local x = torch.arange(1, 8)
    local pieces = {}
    torch.split(pieces, x, 3)
    assert.are.equal(3, #pieces)
    assert.are.same({7}, pieces[3]:totable())
    local r = torch.Tensor()
    r:view(x, 7, 1)
    assert.are.same({7, 1}, r:size():totable())
    r[1][1] = 100
    assert.are.equal(100, x[1])                        -- r shares x's memory
    local e = torch.Tensor()
    e:expand(torch.ones(3, 1), 3, 4)
    assert.are.same({3, 4}, e:size():totable())
    assert.are.equal(3.5, torch.lerp(3, 4, 0.5))
  end)

  it("alias-method sampling draws every class by its probability", function()
    torch.manualSeed(11)
    local probs = torch.Tensor({0.1, 0.2, 0.7})
    local state = torch.multinomialAliasSetup(probs)
    local out = torch.multinomialAlias(torch.LongTensor(30000), state)
    assert.are.equal(1, out:min():item())
    assert.are.equal(3, out:max():item())
    local third = out:eq(3):sum():item() / 30000
    assert.is_true(math.abs(third - 0.7) < 0.02, 'class 3 drawn ' .. third .. ' of the time')
    raises('sum to 0', torch.multinomialAliasSetup, torch.zeros(3))
  end)

  it('storages and generators are saved and loaded, in both formats', function()
    local s = torch.DoubleStorage({1, 2, 3})
    local g = torch.Generator()
    g:manual_seed(5)
    for _, format in ipairs({'moontorch', 'binary'}) do
      local bytes = format == 'moontorch' and torch.serialize({s, s, g}) or torch.serialize({s, s, g}, 'binary')
      local back = torch.deserialize(bytes)
      assert.are.equal('torch.DoubleStorage', torch.type(back[1]))
      assert.are.same({1, 2, 3}, back[1]:totable())
      assert.is_true(back[1] == back[2])                 -- one storage, saved once
      local copy = g:get_state():clone()
      assert.are.equal(torch.random(back[3], 1, 1000000), torch.random(g, 1, 1000000))
      g:set_state(copy)
    end
    local st = torch.serializeToStorage({a = 1})
    assert.are.equal('torch.CharStorage', torch.type(st))
    assert.are.same({a = 1}, torch.deserializeFromStorage(st))
  end)
end)

describe('the Torch7 dialect', function()
  it('is off by default, and switched by torch.dialect', function()
    assert.are.equal('pytorch', torch.dialect())
    assert.are.equal('torch.FloatTensor', torch.getdefaulttensortype())
    in_torch7(function()
      assert.are.equal('torch7', torch.dialect())
      assert.are.equal('torch.DoubleTensor', torch.Tensor(2):type())
    end)
    assert.are.equal('torch.FloatTensor', torch.Tensor(2):type())
    raises("expects 'pytorch' or 'torch7'", torch.dialect, 'lua')
  end)

  it('gives numbers for full reductions and keeps reduced dims', function()
    in_torch7(function()
      local x = torch.Tensor({{1, 2, 3}, {4, 5, 6}})
      assert.are.equal(21, x:sum())
      assert.are.equal(6, x:max())
      assert.are.equal(3.5, x:mean())
      assert.are.equal(720, x:prod())
      assert.are.same({2, 1}, x:sum(2):size():totable())
      assert.are.same({{6}, {15}}, x:sum(2):totable())
      local vals, idx = x:max(2)
      assert.are.same({{3}, {6}}, vals:totable())
      assert.are.same({{3}, {3}}, idx:totable())
      -- std's second argument is Torch7's biased flag: true divides by n
      assert.are.same({{1}, {1}}, x:std(2):totable())
      local biased = x:var(2, true)
      assert.is_true(math.abs(biased[1][1] - 2 / 3) < 1e-12)
      -- a result that requires grad stays a tensor
      local w = torch.ones(3, {requires_grad = true})
      assert.is_true(torch.is_tensor(w:sum()))
    end)
  end)

  it('answers booleans from all and any, works along the last dim in median, and selects numbers from vectors', function()
    in_torch7(function()
      local b = torch.ByteTensor({1, 0, 1})
      assert.are.equal(false, b:all())
      assert.are.equal(true, b:any())
      local x = torch.Tensor({{3, 1, 2}, {9, 7, 8}})
      local m, i = torch.median(x)                   -- along dim 2, kept
      assert.are.same({{2}, {8}}, m:totable())
      assert.are.same({{3}, {3}}, i:totable())
      local k = torch.kthvalue(x, 1)
      assert.are.same({{1}, {7}}, k:totable())
      local v = torch.Tensor({5, 6, 7})
      assert.are.equal(6, v:select(1, 2))
      local res = torch.Tensor()
      torch.sum(res, x, 2)                           -- the result keeps the dim too
      assert.are.same({{6}, {24}}, res:totable())
    end)
  end)

  it('gives sizes as a LongStorage', function()
    in_torch7(function()
      local s = torch.zeros(2, 3):size()
      assert.are.equal('torch.LongStorage', torch.type(s))
      assert.are.same({2, 3}, s:totable())
      assert.are.equal(3, torch.zeros(2, 3):size(2))
    end)
  end)

  it("makes the math methods write into self, as Torch7's did", function()
    in_torch7(function()
      local x = torch.Tensor({1, -2, 3})
      x:abs()
      assert.are.same({1, 2, 3}, x:totable())
      x:add(1)
      assert.are.same({2, 3, 4}, x:totable())
      x:mul(2)
      assert.are.same({4, 6, 8}, x:totable())
      x:add(2, torch.Tensor({1, 1, 1}))             -- x + 2 * y
      assert.are.same({6, 8, 10}, x:totable())
      local r = torch.Tensor()
      r:cmul(torch.Tensor({1, 2}), torch.Tensor({3, 4}))
      assert.are.same({3, 8}, r:totable())
      local y = torch.Tensor({-5, 5})
      y:clamp(-1, 1)
      assert.are.same({-1, 1}, y:totable())
    end)
  end)

  it('takes operands of one element count and other shapes', function()
    in_torch7(function()
      local x = torch.ones(2, 2)
      local y = torch.Tensor({1, 2, 3, 4})
      x:cmul(y)
      assert.are.same({{1, 2}, {3, 4}}, x:totable())
      local z = torch.zeros(4)
      z:copy(x)
      assert.are.same({1, 2, 3, 4}, z:totable())
      raises('cannot broadcast', function() torch.ones(2, 2):cmul(torch.ones(3)) end)
    end)
  end)

  it('multiplies matrices and vectors with *, and adds operands of one element count', function()
    in_torch7(function()
      local a = torch.Tensor({{1, 2}, {3, 4}})
      local v = torch.Tensor({1, 1})
      assert.are.same({{7, 10}, {15, 22}}, (a * a):totable())
      assert.are.same({3, 7}, (a * v):totable())
      assert.are.equal(2, v * v)
      assert.are.same({{2, 3}, {4, 5}}, (a + torch.ones(4)):totable())
      raises('one point cannot span 0 to 1', torch.linspace, 0, 1, 1)
      assert.are.equal(0, torch.Tensor():dim())
      local n = a:new()                                -- a tensor on a's memory
      n[1][1] = 9
      assert.are.equal(9, a[1][1])
    end)
    -- PyTorch's * stays elementwise
    assert.are.same({{1, 4}, {9, 16}}, (torch.tensor({{1, 2}, {3, 4}}) * torch.tensor({{1, 2}, {3, 4}})):totable())
  end)

  it("reads x:sub(s1, e1, ...) as Torch7's sub-tensor and x.new(n) as the constructor", function()
    in_torch7(function()
      local m = torch.range(1, 12):view(3, 4)
      local s = m:sub(2, -1, 1, 2)                    -- rows 2..3, columns 1..2, a view
      assert.are.same({{5, 6}, {9, 10}}, s:totable())
      s:fill(0)
      assert.are.equal(0, m[3][2])
      raises('range 2..5 out of 1..3 in dim 1', function() return m:sub(2, 5) end)
      assert.are.same({3}, m.new(3):size():totable())
      local y = torch.ones(2)
      y:csub(1)                                        -- Torch7's subtraction
      assert.are.same({0, 0}, y:totable())
    end)
  end)

  it("joins along the last dim by default in cat", function()
    in_torch7(function()
      local a = torch.ones(2, 2)
      assert.are.same({2, 4}, torch.cat(a, a):size():totable())
    end)
  end)

  it("leaves moontorch's own libraries on PyTorch's answers", function()
    in_torch7(function()
      local nn = require 'nn'
      local m = nn.Linear(3, 2)
      local loss = nn.MSELoss()(m(torch.ones(4, 3)), torch.zeros(4, 2))
      assert.is_true(torch.is_tensor(loss))
      loss:backward()
      assert.are.same({2, 3}, m.weight.grad:size():totable())
    end)
  end)

  it('is switched by th --torch7 and TH_DIALECT', function()
    local th = './build/th'
    local p = io.popen(th .. " --torch7 -e 'io.write(torch.dialect(), torch.type(torch.zeros(2):sum()))'")
    assert.are.equal('torch7number', p:read('a'))
    p:close()
    p = io.popen('TH_DIALECT=torch7 ' .. th .. " -e 'io.write(torch.dialect())'")
    assert.are.equal('torch7', p:read('a'))
    p:close()
  end)
end)
