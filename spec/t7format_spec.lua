-- Torch7's serialization format (lib/torch/t7format.lua): genuine Torch7
-- files (spec/ref/t7, see its README), the bytes the format defines, round
-- trips through torch.save/torch.load, nn modules, and refusals.
local torch = require 'torch'
local nn = require 'nn'
local raises = require 'spec.support.raises'

local REF = 'spec/ref/t7/'
local tmp = os.tmpname()

local function pack_string(s) return string.pack('<i4', #s) .. s end

describe('Torch7 format', function()
  after_each(function() os.remove(tmp) end)

  it('loads genuine Torch7 files: tensors, tables, cycles', function()
    local d = torch.load(REF .. 'doubletensor.t7')
    assert.are.equal('torch.DoubleTensor', torch.type(d))
    assert.are.same({{1, 2, 3}, {4, 5, 6.9}}, d:totable())
    local f = torch.load(REF .. 'floattensor.t7')
    assert.are.equal('torch.FloatTensor', torch.type(f))
    assert.are.same({2, 3, 4}, {f:size(1), f:size(2), f:size(3)})
    assert.is_true(math.abs(f:sum():item() - 12.97241666913) < 1e-5)   -- torchfile's own test value
    assert.are.same({hello = 123}, torch.load(REF .. 'hello=123.t7'))
    assert.are.same({'hello', 'world', 'third item', 123}, torch.load(REF .. 'list_table.t7'))
    local m1 = torch.load(REF .. 'map_table1.t7')
    assert.are.equal('zero', m1[0])
    assert.are.equal('non number key', torch.load(REF .. 'map_table2.t7').a)
    local r = torch.load(REF .. 'recursive_kv_table.t7')
    local k, v = next(r)
    assert.are.equal(r, k)
    assert.are.equal(r, v)
  end)

  it('loads genuine objects of classes that are defined, and names the ones that are not', function()
    raises("holds an object of class 'Blah' (at byte 0), which is not defined", torch.load, REF .. 'custom_class.t7')
    raises("class 'tds.Hash'", torch.load, REF .. 'tds_hash.t7')
    -- Torch7's nngraph wrote this gModule({a, b}, {CAddTable{b, Linear(1, 2)(a)}}): it loads (nngraph with it)
    -- and computes b + W a + bias with the weights it holds, and its gradient W' g for a
    local g = torch.load(REF .. 'gmodule_with_linear_identity.t7')
    assert.are.equal('nn.gModule', torch.typename(g))
    assert.are.equal(2, g.nInputs)
    local lin
    for _, node in ipairs(g.forwardnodes) do
      if torch.typename(node.data.module) == 'nn.Linear' then lin = node.data.module end
    end
    local a, b = torch.tensor({0.5}, {dtype = 'float64'}), torch.tensor({1, 2}, {dtype = 'float64'})
    local w, bias = lin.weight:detach(), lin.bias:detach()
    local out = g:forward({a, b})
    local want = {1 + 0.5 * w[1][1] + bias[1], 2 + 0.5 * w[2][1] + bias[2]}
    assert.is_true(math.abs(out[1] - want[1]) < 1e-12 and math.abs(out[2] - want[2]) < 1e-12)
    local gi = g:backward({a, b}, torch.ones(2, {dtype = 'float64'}))
    assert.is_true(math.abs(gi[1][1] - (w[1][1] + w[2][1])) < 1e-12)
    assert.are.same({1, 1}, gi[2]:totable())
    local A = torch.class('t7spec.A')
    local bytes = io.open(REF .. 'recursive_class.t7', 'rb'):read('a')
    local o = torch.deserialize((bytes:gsub(pack_string('A'), pack_string('t7spec.A'), 1)))
    assert.are.equal(A, getmetatable(o))
    assert.are.equal(o, o.a)
  end)

  it('refuses files holding Lua functions: loading never runs code', function()
    raises('holds a Lua function (type 8 at byte 0): moontorch never loads code', torch.load, REF .. 'function.t7')
    raises('holds a Lua function', torch.load, REF .. 'function_upvals.t7')
    raises('type 6 at byte 12', torch.deserialize, string.pack('<i4i4i4i4', 3, 1, 1, 6))
    raises('torch.save: cannot save a function at obj.f', torch.save, tmp, {f = print}, 'binary')
  end)

  it('writes the bytes the format defines', function()
    assert.are.equal(string.pack('<i4d', 1, 42.5), torch.serialize(42.5, 'binary'))
    assert.are.equal(string.pack('<i4', 2) .. pack_string('hi'), torch.serialize('hi', 'binary'))
    assert.are.equal(string.pack('<i4i4', 5, 1), torch.serialize(true, 'binary'))
    assert.are.equal(string.pack('<i4', 0), torch.serialize(nil, 'binary'))
    assert.are.equal(string.pack('<i4i4i4i4d', 3, 1, 1, 1, 1) .. string.pack('<i4', 2) .. pack_string('a'),
                     torch.serialize({'a'}, 'binary'))
    local tensor = string.pack('<i4i4', 4, 1) .. pack_string('V 1') .. pack_string('torch.FloatTensor')
                   .. string.pack('<i4i8i8i8', 1, 2, 1, 1)
                   .. string.pack('<i4i4', 4, 2) .. pack_string('V 1') .. pack_string('torch.FloatStorage')
                   .. string.pack('<i8ff', 2, 1, 2)
    assert.are.equal(tensor, torch.serialize(torch.FloatTensor({1, 2}), 'binary'))
    assert.are.equal('4\n1\n3\nV 1\n17\ntorch.FloatTensor\n1\n2\n1\n1\n4\n2\n3\nV 1\n18\ntorch.FloatStorage\n2\n1 2\n',
                     torch.serialize(torch.FloatTensor({1, 2}), 'ascii'))
    assert.are.equal('1\n0.10000000000000001\n', torch.serialize(0.1, 'ascii'))
  end)

  it('round-trips every tensor type, binary and ascii, through torch.save and torch.load', function()
    local values = {0, 1, -2, 100}
    for _, mode in ipairs({'binary', 'ascii'}) do
      for _, stem in ipairs({'Byte', 'Char', 'Short', 'Int', 'Long', 'Float', 'Double', 'Half'}) do
        local x = torch[stem .. 'Tensor'](stem == 'Byte' and {0, 1, 2, 100} or values):view(2, 2)
        torch.save(tmp, {x = x, n = 3, s = 'str', b = false}, mode)
        local o = torch.load(tmp)
        assert.are.equal(torch.type(x), torch.type(o.x))
        assert.are.same(x:totable(), o.x:totable())
        assert.are.same({3, 'str', false}, {o.n, o.s, o.b})
      end
      local d = torch.tensor({math.pi, -1e300, 1 / 3}, {dtype = 'float64'})
      assert.are.same(d:totable(), torch.deserialize(torch.serialize(d, mode)):totable())
      local l = torch.tensor({math.maxinteger, math.mininteger})
      assert.are.same(l:totable(), torch.deserialize(torch.serialize(l, mode)):totable())
    end
  end)

  it('keeps shared storages, views and cycles', function()
    local base = torch.arange(1, 11, {dtype = 'float64'})
    local t = {a = base:narrow(1, 2, 4), b = base:view(2, 5):t()}
    t.self = t
    for _, mode in ipairs({'binary', 'ascii'}) do
      local o = torch.deserialize(torch.serialize(t, mode))
      assert.are.equal(o, o.self)
      assert.are.same(t.a:totable(), o.a:totable())
      assert.are.same(t.b:totable(), o.b:totable())
      assert.are.equal(2, o.a:storageOffset())
      o.a[1] = 100                                  -- the same storage: b sees it
      assert.are.equal(100, o.b[2][1])
    end
  end)

  it('maps nn modules onto moontorch\'s, both ways, and they compute the same', function()
    torch.manual_seed(0)
    local m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2), nn.Tanh(), nn.SoftMax())
    local x = torch.randn(5, 3)
    for _, mode in ipairs({'binary', 'ascii'}) do
      torch.save(tmp, m, mode)
      local state = torch.get_rng_state()
      local l = torch.load(tmp)
      assert.are.same(state:totable(), torch.get_rng_state():totable())   -- loading draws no numbers
      assert.are.equal('nn.Sequential', torch.type(l))
      assert.are.equal('nn.Linear', torch.type(l:get(1)))
      assert.is_true(torch.equal(m:forward(x), l:forward(x)))
    end
    -- an nn.Linear as Torch7 writes it: its class, then its fields
    local f = torch.MemoryFile():binary()
    f:writeInt(4); f:writeInt(100)                -- any index the fields' table does not take
    f:writeInt(3); f:writeChar({86, 32, 49})
    f:writeInt(9); f:writeString('nn.Linear')
    f:writeObject({weight = torch.DoubleTensor({{1, 2}, {3, 4}, {5, 6}}), bias = torch.DoubleTensor({1, 0, -1}),
                   gradWeight = torch.DoubleTensor(3, 2), output = torch.DoubleTensor(), train = false})
    local lin = torch.deserialize(f:string())
    assert.are.equal('nn.Linear', torch.type(lin))
    assert.is_false(lin.training)
    assert.is_true(nn.is_parameter(lin.weight))
    assert.are.same({4, 7, 10}, lin:forward(torch.DoubleTensor({1, 1})):totable())
    raises('cannot save moontorch\'s nn.GELU in Torch7\'s format', torch.serialize, nn.GELU(), 'binary')
  end)

  it('tells the formats apart by their first bytes; a format argument or the Torch7 dialect picks Torch7\'s', function()
    torch.save(tmp, {1, 2})
    assert.are.equal('MOONTORCH', io.open(tmp, 'rb'):read(9))
    assert.are.same({1, 2}, torch.load(tmp))
    torch.save(tmp, {1, 2}, 'ascii')
    assert.are.equal('3\n1\n2\n', io.open(tmp, 'rb'):read(6))
    assert.are.same({1, 2}, torch.load(tmp))
    assert.are.same({1, 2}, torch.load(tmp, 'ascii'))
    local f = torch.MemoryFile():binary():bigEndianEncoding()  -- a big-endian machine's file
    f:writeObject({x = 1.5})
    assert.are.same({x = 1.5}, torch.deserialize(f:string()))
    local dialect = torch.dialect
    torch.dialect = function() return 'torch7' end
    local ok, s = pcall(torch.serialize, 'x')
    torch.dialect = dialect
    assert.is_true(ok, s)
    assert.are.equal(string.pack('<i4', 2) .. pack_string('x'), s)
    raises("torch.save: the format must be 'binary' or 'ascii'", torch.save, tmp, 1, 'json')
  end)

  it('raises clear errors on truncated and corrupt input, naming the byte', function()
    local good = torch.serialize({w = torch.randn(3, 3), name = 'x', n = 4}, 'binary')
    for cut = 0, #good - 1 do
      local ok, err = pcall(torch.deserialize, good:sub(1, cut), 'binary')
      assert.is_false(ok)
      assert.truthy(err:find('torch.deserialize: the string is', 1, true), err)
      assert.truthy(err:find('byte %d+') or err:find('first bytes'), err)
    end
    raises('is corrupt (4 bytes after its value', torch.deserialize, torch.serialize(1, 'binary') .. 'junk')
    raises('unknown type 99 at byte 0', torch.deserialize, string.pack('<i4', 99) .. 'xxxx', 'binary')
    raises('a string length 2147483647 at byte 4', torch.deserialize, string.pack('<i4i4', 2, 0x7fffffff))
    raises('a table size -1', torch.deserialize, string.pack('<i4i4i4', 3, 1, -1))
    local storage = string.pack('<i4i4', 4, 1) .. pack_string('V 1') .. pack_string('torch.DoubleStorage')
    raises('a Double storage of 1152921504606846975 values', torch.deserialize,
           storage .. string.pack('<i8', 0x0fffffffffffffff) .. 'abcd')
    local tensor = string.pack('<i4i4', 4, 1) .. pack_string('V 1') .. pack_string('torch.FloatTensor')
    raises('a tensor of 17 dims', torch.deserialize, tensor .. string.pack('<i4', 17))
    local reach = tensor .. string.pack('<i4i8i8i8', 1, 5, 1, 1) .. string.pack('<i4i4', 4, 2) .. pack_string('V 1')
                  .. pack_string('torch.FloatStorage') .. string.pack('<i8ff', 2, 1, 2)
    raises('reaches outside its storage', torch.deserialize, reach)
    io.open(tmp, 'wb'):write(good:sub(1, 40)):close()
    raises('torch.load: ' .. tmp .. ' is corrupt or truncated', torch.load, tmp)
  end)

  it('writes torch.save atomically: a failed save leaves the old file', function()
    torch.save(tmp, 'old', 'binary')
    assert.has_error(function() torch.save(tmp, {1, print}, 'binary') end)
    assert.are.equal('old', torch.load(tmp))
  end)
end)
