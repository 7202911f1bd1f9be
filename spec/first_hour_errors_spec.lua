-- The first hour's errors and orders: an error caused by the caller's arguments names
-- the caller's line and the child of a container that failed; obj.method() for
-- obj:method() says so; tracebacks name frames truly; state dicts keep module order.
local torch = require 'torch'
local nn = require 'nn'
local optim = require 'optim'

local THIS = debug.getinfo(1, 'S').short_src

-- the message of fn's error, and the line of this file fn's call is on
local function error_of(fn)
  local ok, err = pcall(fn)
  assert.is_false(ok, 'expected an error')
  return tostring(err)
end

describe('an error in a module', function()
  it("names the caller's line and the child of the container that failed", function()
    local model = nn.Sequential(nn.Linear(10, 5), nn.ReLU(), nn.Linear(5, 2))
    local line = debug.getinfo(1, 'l').currentline + 1
    local err = error_of(function() local y = model(torch.randn(4, 8)); return y end)
    assert.are.equal(THIS .. ':' .. line .. ': ', err:sub(1, #THIS + #tostring(line) + 3), err)
    assert.truthy(err:find('nn.Sequential child 1 (nn.Linear(in_features=10, out_features=5', 1, true), err)
    assert.truthy(err:find('expected input with 10 features', 1, true), err)
    assert.is_nil(err:find('lib/nn/', 1, true), err)
  end)

  it('names the path through nested containers and modules of the user', function()
    local Net, parent = torch.class('nn.SpecFirstHourNet', 'nn.Module')
    function Net:__init()
      parent.__init(self)
      self.encoder = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
      self.head = nn.Linear(5, 1)
    end
    function Net:forward(x) return self.head(self.encoder(x)) end
    local err = error_of(function() local y = nn.SpecFirstHourNet()(torch.randn(2, 3)); return y end)
    assert.truthy(err:find(THIS .. ':%d+: nn.SpecFirstHourNet child head %(nn.Linear%(in_features=5'), err)
    local err2 = error_of(function()
      local y = nn.Sequential(nn.Identity(), nn.Sequential(nn.Tanh(), nn.Linear(2, 2)))(torch.randn(1, 3))
      return y
    end)
    assert.truthy(err2:find('nn.Sequential child 2 (nn.Sequential) > child 2 (nn.Linear(', 1, true), err2)
  end)

  it("keeps the position of an error raised in the user's own module", function()
    local Bad, parent = torch.class('nn.SpecFirstHourBad', 'nn.Module')
    function Bad:__init() parent.__init(self) end
    local line = debug.getinfo(1, 'l').currentline + 1
    function Bad:forward(x) error('my own check failed') end
    local err = error_of(function() local y = nn.Sequential(nn.Identity(), nn.SpecFirstHourBad())(torch.ones(1)); return y end)
    assert.are.equal(THIS .. ':' .. line .. ': nn.Sequential child 2 (', err:sub(1, #THIS + #tostring(line) + 26), err)
    assert.truthy(err:find('my own check failed', 1, true))
  end)

  it("names the caller's line for a criterion's shape error", function()
    local line = debug.getinfo(1, 'l').currentline + 1
    local err = error_of(function() local l = nn.MSELoss()(torch.randn(3), torch.randn(4)); return l end)
    assert.are.equal(THIS .. ':' .. line .. ':', err:sub(1, #THIS + #tostring(line) + 2), err)
    assert.truthy(err:find('size 3 and target size 4', 1, true), err)
  end)

  it('leaves a later call unaffected (nothing of the failed call stays)', function()
    local m = nn.Sequential(nn.Linear(2, 2))
    pcall(function() return m(torch.randn(1, 3)) end)
    assert.are.same({1, 2}, m(torch.randn(1, 2)):size():totable())
  end)
end)

describe("a method called with '.'", function()
  it('says so, naming the class and the method, at the caller\'s line', function()
    local opt = optim.SGD(nn.Linear(2, 2):parameters(), {lr = 0.1})
    local line = debug.getinfo(1, 'l').currentline + 1
    local err = error_of(function() opt.step(); return 1 end)
    assert.are.equal(THIS .. ':' .. line .. ': optim.Optimizer:step: called with \'.\'', err:sub(1, #THIS + #tostring(line) + 40), err)
    assert.truthy(err:find('object:step(...)', 1, true), err)
    local m = nn.Linear(2, 2)
    err = error_of(function() m.forward(torch.randn(2)); return 1 end)
    assert.truthy(err:find("nn.Module:forward: called with '.'", 1, true), err)
    err = error_of(function() m.zero_grad(); return 1 end)
    assert.truthy(err:find("zero_grad: called with '.'", 1, true), err)
  end)

  it('still lets a custom autograd Function be applied with a dot', function()
    local Double = torch.autograd.Function:extend('SpecDouble')
    function Double.forward(ctx, x) return x * 2 end
    function Double.backward(ctx, g) return g * 2 end
    local x = torch.ones(2, {requires_grad = true})
    Double.apply(x):sum():backward()
    assert.are.same({2, 2}, x.grad:totable())
  end)
end)

describe('state dicts', function()
  -- PyTorch's order for Sequential(Linear, BatchNorm1d, Linear): each module's parameters,
  -- then its buffers, module by module (1-based names here)
  local ORDER = {'1.weight', '1.bias', '2.weight', '2.bias', '2.running_mean', '2.running_var',
                 '2.num_batches_tracked', '3.weight', '3.bias'}
  local function keys(sd)
    local out = {}
    for k in pairs(sd) do out[#out + 1] = k end
    return out
  end

  it('iterate in module order, and keep it through torch.save and torch.load', function()
    local m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Linear(2, 3))
    local sd = m:state_dict()
    assert.are.same(ORDER, keys(sd))
    local path = os.tmpname()
    torch.save(path, sd)
    local back = torch.load(path)
    os.remove(path)
    assert.are.same(ORDER, keys(back))
    assert.are.same(m[3].bias:totable(), back['3.bias']:totable())
    m:load_state_dict(back)
  end)

  it('is an ordered table: a key set again after removal moves to the end', function()
    local d = torch.OrderedDict({{'b', 1}, {'a', 2}})
    d.c = 3
    d.b = nil
    d.b = 4
    assert.are.same({'a', 'c', 'b'}, keys(d))
    assert.are.equal(4, d.b)
    assert.is_true(torch.is_ordered_dict(d))
    assert.is_false(torch.is_ordered_dict({}))
  end)
end)

describe('tracebacks', function()
  it("name a shared method by its object's class, not by another class that holds it", function()
    local script = os.tmpname()
    local f = assert(io.open(script, 'w'))
    f:write([[
local nn = require 'nn'
local m = nn.Sequential(nn.Linear(2, 2))
local function go() local y = m:forward(torch.randn(1, 5)); return y end
go()
]])
    f:close()
    local p = io.popen('./build/th ' .. script .. ' 2>&1')
    local out = p:read('a')
    p:close()
    os.remove(script)
    assert.truthy(out:find("in local 'go'", 1, true), out)
    assert.is_nil(out:find('TransformerEncoderLayer', 1, true), out)
    assert.is_nil(out:find('SmoothL1Loss', 1, true), out)
    assert.truthy(out:find(':3: nn.Sequential child 1 (nn.Linear(', 1, true), out)
  end)
end)

describe('nn.Module:extend', function()
  it('makes a module class as Optimizer:extend and Dataset:extend do, and subclasses of it', function()
    local Net = nn.Module:extend('SpecExtendNet')
    function Net:__init() nn.Module.__init(self); self.fc = nn.Linear(4, 2) end
    function Net:forward(x) return self.fc(x) end
    local net = Net()
    assert.are.same({3, 2}, net(torch.randn(3, 4)):size():totable())
    assert.are.equal(2, #net:parameters())
    assert.are.equal('SpecExtendNet', torch.typename(net))
    local Sub = Net:extend('SpecExtendSub')
    function Sub:forward(x) return Net.forward(self, x) * 2 end
    local sub = Sub()
    assert.are.equal(0, (sub(torch.ones(1, 4)) - sub.fc(torch.ones(1, 4)) * 2):abs():max():item())
    assert.has_error(function() nn.Module:extend(3) end, 'nn.Module:extend(name): expects a class name, got number')
    local ok, err = pcall(function() local c = net:extend('X'); return c end)
    assert.is_false(ok)
    assert.truthy(err:find("call it on a class", 1, true), err)
  end)
end)

describe('torch.class', function()
  it('loads the library a parent class belongs to (a fresh prompt, before require "nn")', function()
    local p = io.popen([[./build/th -e "local Net = torch.class('nn.SpecFresh', 'nn.Module'); print(tostring(Net), type(Net.forward))" 2>&1]])
    local out = p:read('a')
    p:close()
    assert.are.equal('nn.SpecFresh\tfunction\n', out)
  end)
end)
