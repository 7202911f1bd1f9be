-- The Torch7 dialect decides how a tensor method or torch function behaves by who calls
-- it: the user's code gets Torch7's forms (x:add(y) adds into x, x:tanh() writes into x,
-- a full sum is a number), moontorch's libraries PyTorch's. It looks one frame up; a
-- library function that ends in a tail call (`return x:tanh()`) has left the stack by
-- then, so the user's frame answered and the user's tensors were written: F.linear(x, W, b)
-- resized the bias into the output, F.tanh(x) overwrote x. The libraries never tail-call
-- what the dialect wraps: `return (x:tanh())` keeps their frame.
local torch = require 'torch'
local nn = require 'nn'
local F = nn.functional
local lint = dofile('spec/support/tail_calls.lua')

local in_torch7 = dofile('spec/support/dialect.lua').in_torch7

local function max_diff(a, b)
  return (a:double():reshape(-1) - b:double():reshape(-1)):abs():max()
end

describe("the libraries' calls of what the Torch7 dialect wraps", function()
  it('are never tail calls', function()
    local wrapped_methods, wrapped_functions = lint.wrapped()
    local found = {}
    for _, dir in ipairs({'lib/nn', 'lib/optim', 'lib/data', 'lib/nngraph', 'lib/distributed'}) do
      local p = io.popen("find '" .. dir .. "' -name '*.lua' | sort")
      for file in p:lines() do
        for _, h in ipairs(lint.scan(file, wrapped_methods, wrapped_functions)) do
          found[#found + 1] = string.format('%s:%d: %s', h.file, h.line, h.text)
        end
      end
      p:close()
    end
    assert(#found == 0, 'tail calls of names the Torch7 dialect wraps (write return (...)):\n' .. table.concat(found, '\n'))
  end)

  it("finds the tail calls it should, and passes over what is not one", function()
    local wm, wt = {tanh = true, addmm = true, sum = true}, {cat = true}
    local cases = {
      {'return x:tanh()', 'tanh'}, {'return bias:addmm(x, w:t())', 'addmm'},
      {'if a then return x:sum() end', 'sum'}, {'return torch.cat({a, b}, 1)', 'cat'},
      {'return x[name](x)', '?'}, {'return torch.cat({a,', 'cat', 'b}, 1)'},
      {'return (x:tanh())'}, {'return -x:sum()'}, {'return a + x:sum()'}, {'return x:sum(), y'},
      {'return x:sum() / n'}, {'return x:mean()'}, {'local y = x:tanh() return y'},
      {'return x:tanh():view(2)'}, {'return ok and x:sum()'},
    }
    for _, c in ipairs(cases) do
      local file = os.tmpname()
      local f = io.open(file, 'w')
      f:write(c[1], '\n', c[3] or '', '\n')
      f:close()
      local hits = lint.scan(file, wm, wt)
      os.remove(file)
      if c[2] then
        assert(#hits == 1 and hits[1].name == c[2], 'not found in: ' .. c[1])
      else
        assert(#hits == 0, 'taken for a tail call: ' .. c[1])
      end
    end
  end)
end)

describe('library functions called from Torch7 code', function()
  it("leave the caller's tensors alone and give PyTorch's results", function()
    in_torch7(function()
      local x = torch.Tensor({{1, 2}, {3, 4}})
      local W = torch.Tensor({{1, 0}, {0, 1}, {1, 1}})
      local b = torch.Tensor({10, 20, 30})
      local y = F.linear(x, W, b)                        -- x W^T + b
      assert.are.same({{11, 22, 33}, {13, 24, 37}}, y:totable())
      assert.are.same({10, 20, 30}, b:totable())
      local x0 = x:clone()
      local t = F.tanh(x)
      assert.is_true(max_diff(t, torch.Tensor({{math.tanh(1), math.tanh(2)}, {math.tanh(3), math.tanh(4)}})) < 1e-6)
      assert.is_true(max_diff(x, x0) == 0)
      local r = F.relu6(torch.Tensor({-1, 3, 9}))
      assert.are.same({0, 3, 6}, r:totable())
      local v = torch.Tensor({-1, 3, 9})
      F.hardtanh(v)
      assert.are.same({-1, 3, 9}, v:totable())
      local a, c = torch.Tensor({{1, 2}}), torch.Tensor({{3}, {4}})
      assert.are.same({{11}}, nn.MM():updateOutput({a, c}):totable())
      assert.are.same({1, 2}, a:view(2):totable())
    end)
  end)
end)
