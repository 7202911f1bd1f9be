-- Deep autograd graphs: chains of tens of thousands of ops build, run backward
-- and are freed (by the collector and at exit) in a child with a 256 KB C stack.
local th = dofile('spec/support/th.lua')

-- Deep enough that freeing a node per C stack frame overflows 256 KB four
-- times over (it did from about 9,000 nodes), shallow enough to stay quick
-- under AddressSanitizer (a few hundred bytes a node).
local DEPTH = 40000
local STACK_KB = 256

-- The child: for each way of ending (no backward, backward, backward with
-- retain_graph), builds a chain of the kind named by arg[1], checks the
-- gradient, drops it and collects; the tensor memory must come back. A last
-- chain is left for the exit to free.
local CHILD = [=[
local torch = require 'torch'
local kind, depth = arg[1], tonumber(arg[2])
local Id = torch.autograd.Function:extend('Id')
function Id.forward(ctx, a) local y = a + 1 ctx:save_for_backward(y) return y end
function Id.backward(ctx, g) return g end

-- each kind: the chain's last tensor from leaf x, and d(sum of it)/dx
local chains = {
  add = function(x) local y = x * 1 for _ = 1, depth do y = y + 1 end return y, 1 end,
  views = function(x)
    local y = x * 1
    for i = 1, depth do
      if i % 3 == 0 then y = y:view(-1) elseif i % 3 == 1 then y = y:narrow(1, 1, 2) else y = y:unsqueeze(1):squeeze(1) end
    end
    return y, 1
  end,
  inplace = function(x) local y = x * 1 for _ = 1, depth do y:add_(1) end return y, 1 end,
  -- each node saves its input, whose history is the node before
  saved = function(x)
    local w, y = torch.ones(2, {dtype = 'float64', requires_grad = true}), x * 1
    for _ = 1, depth do y = y * w end
    return y, 1
  end,
  -- a loss kept over many steps, as in total = total + loss
  total = function(x)
    local total = torch.zeros(1, {dtype = 'float64'})
    for _ = 1, depth do total = total + (x * 2):sum() end
    return total, 2 * depth
  end,
  func = function(x) local y = x * 1 for _ = 1, depth do y = Id.apply(y) end return y, 1 end,
}

local function run(mode)
  local x = torch.ones(2, {dtype = 'float64', requires_grad = true})
  local y, slope = chains[kind](x)
  if mode ~= 'none' then
    y:sum():backward({retain_graph = mode == 'retain'})
    assert(x.grad:eq(slope):all():item(), kind .. ': wrong gradient')
  end
  return y
end

collectgarbage()
local before = torch.memory_stats().allocated
for _, mode in ipairs({'none', 'backward', 'retain'}) do
  run(mode)
  -- the second cycle takes what the first one's finalizers let go: the ctx
  -- (and saved tensors) of each custom Function node they freed
  collectgarbage()
  collectgarbage()
  local after = torch.memory_stats().allocated
  assert(after == before, string.format('%s %s: %d bytes of tensors left', kind, mode, after - before))
  print('freed ' .. mode)
end
KEEP = run('backward')
print('done')
]=]

local function child(kind)
  local script = os.tmpname()
  local f = assert(io.open(script, 'w'))
  f:write(CHILD)
  f:close()
  local p = io.popen(string.format("sh -c 'ulimit -s %d && exec %s %s %s %d' 2>&1", STACK_KB, th.path(), script,
                                   kind, DEPTH))
  local out = p:read('a')
  local ok = p:close()
  os.remove(script)
  return ok, out
end

describe('a deep autograd chain', function()
  for _, kind in ipairs({'add', 'views', 'inplace', 'saved', 'total', 'func'}) do
    it('of ' .. kind .. ' ops builds, runs backward and is freed on a small C stack', function()
      local ok, out = child(kind)
      assert(ok and out:match('done\n$'), kind .. ': the child failed:\n' .. out:sub(-2000))
    end)
  end
end)
