-- help_spec.lua: every public function and class of torch (functions and
-- tensor methods), nn, optim and data has help text (lib/torch/help.lua and
-- lib/torch/doc), and help(f) prints it.
local torch = require 'torch'
local nn = require 'nn'
local optim = require 'optim'
local data = require 'data'
local distributed = require 'distributed'

-- What print wrote while fn ran.
local function printed(fn, ...)
  local out, saved = {}, _G.print
  _G.print = function(...)
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    out[#out + 1] = table.concat(parts, '\t')
  end
  local ok, err = pcall(fn, ...)
  _G.print = saved
  assert(ok, err)
  return table.concat(out, '\n')
end

local function is_public_callable(k, v)
  if type(k) ~= 'string' or k:sub(1, 1) == '_' then return false end
  if type(v) == 'function' then return true end
  return type(v) == 'table' and (rawget(v, '__typename') ~= nil or rawget(v, '__init') ~= nil)
end

describe('help', function()
  it('documents every public function of torch, nn, optim and data', function()
    torch._load_all()   -- the modules loaded on first use too
    local roots = {
      torch = torch, ['x:'] = torch._methods, ['torch.autograd'] = torch.autograd, ['torch.cuda'] = torch.cuda,
      ['torch.memory'] = torch.memory,
      nn = nn, ['nn.functional'] = nn.functional, ['nn.init'] = nn.init, ['nn.utils'] = nn.utils,
      optim = optim, ['optim.lr_scheduler'] = optim.lr_scheduler, data = data, distributed = distributed,
      ['torch.profiler'] = torch.profiler,
    }
    local missing, count = {}, 0
    for prefix, t in pairs(roots) do
      for k, v in pairs(t) do
        if is_public_callable(k, v) then
          count = count + 1
          local text = torch.help_text(v)
          if not text or not text:match('%S') then missing[#missing + 1] = prefix .. ' ' .. k end
        end
      end
    end
    table.sort(missing)
    assert.is_true(count > 700, 'walked only ' .. count .. ' functions')
    assert.are.same({}, missing)
  end)

  it('has doc tables without unknown or doubly documented names', function()
    local entries, problems = torch._doc_entries()
    assert.is_true(#entries > 100)
    assert.are.same({}, problems)
  end)

  it('prints a signature and a description', function()
    local out = printed(help, torch.mm)
    assert.truthy(out:find('torch.mm(a, b), a:mm(b)', 1, true), out)
    assert.truthy(out:find('matrix product', 1, true), out)
    -- a method through a tensor value, and an alias, find the same entry
    local x = torch.ones(3)
    assert.are.equal(torch.help_text(torch.narrow), torch.help_text(x.narrow))
    assert.are.equal(torch.help_text(torch.abs), torch.help_text(x.absolute))
    assert.are.equal(torch.help_text(x.abs), torch.help_text(torch.abs_))
    assert.truthy(printed(help, nil, 'torch.no_such'):find('torch.no_such is nil', 1, true))
  end)

  it('finds the comment of a class defined through torch.class or a helper', function()
    assert.truthy(torch.help_text(nn.Linear):match('^nn%.Linear%(in_features, out_features'))
    assert.truthy(torch.help_text(optim.AdamW):match('^optim%.AdamW%(params'))
    assert.truthy(torch.help_text(data.DataLoader):match('^data%.DataLoader%(dataset'))
    assert.truthy(torch.help_text(nn.ReLU):match('^nn%.ReLU%(%)'))
    -- classes whose every function a shared builder made: the comment in the file named after them
    assert.truthy(torch.help_text(nn.BatchNorm2d):match('^nn%.BatchNorm2d%(num_features'))
    assert.truthy(torch.help_text(nn.LSTM):match('^nn%.LSTM%(input_size'))
    -- an instance shows its class
    assert.are.equal(torch.help_text(nn.Linear), torch.help_text(nn.Linear(2, 3)))
  end)

  it('finds the comment above a Class:extend(name) definition', function()
    local path = os.tmpname()
    local f = assert(io.open(path, 'w'))
    f:write("local optim = require 'optim'\n",
            "-- A test optimizer that does nothing.\n",
            "local NoOpt = optim.Optimizer:extend('NoOpt')\n",
            "function NoOpt:step() end\n",
            "-- Doubles its input.\n",
            "local Double = torch.autograd.Function:extend('Double')\n",
            "function Double.forward(ctx, x) return x * 2 end\n",
            "return NoOpt, Double\n")
    f:close()
    local NoOpt, Double = dofile(path)
    local texts = {torch.help_text(NoOpt), torch.help_text(Double)}
    os.remove(path)
    assert.are.same({'A test optimizer that does nothing.', 'Doubles its input.'}, texts)
  end)
end)
