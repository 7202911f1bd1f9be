-- torch.repl: what th's interactive prompt adds to a session (th.c requires
-- it as the REPL starts; scripts and -e never see it): nn, optim and data
-- as globals loaded on first use, and the bare word `help` printing help.
local torch = require 'torch'
local help = require 'torch.help'

-- the libraries a prompt may use without require: their global name -> module
local LIBRARIES = {nn = 'nn', optim = 'optim', data = 'data'}

local started = false

-- torch._repl_start(): installs the session's lazy globals (once). A script
-- still requires what it uses (`local nn = require 'nn'`), as Torch7's th
-- and Python ask; at the prompt `nn.Linear(2, 3)` or `?nn.Linear` just works.
function torch._repl_start()
  if started then return end
  started = true
  local mt = getmetatable(_G)
  if mt == nil then
    mt = {}
    setmetatable(_G, mt)
  end
  local before = mt.__index
  local loading = {}                  -- (a library may read its own global while it loads: nil then)
  mt.__index = function(g, k)
    local module = LIBRARIES[k]
    if module and not loading[k] then
      loading[k] = true
      local ok, lib = pcall(require, module)
      loading[k] = nil
      if not ok then error(lib, 0) end
      if rawget(g, k) == nil then rawset(g, k, lib) end
      return lib
    end
    if type(before) == 'function' then return before(g, k) end
    if type(before) == 'table' then return before[k] end
    return nil
  end
  -- completion and help's index walk what torch._load_all loads: the libraries too
  local load_all = torch._load_all
  torch._load_all = function()
    if load_all then load_all() end
    for name in pairs(LIBRARIES) do local _ = _G[name] end
  end
end

-- torch._repl_word(v): what a line holding only the word `help` prints: the
-- help itself when help is still torch's help function, else its value.
function torch._repl_word(v)
  if rawequal(v, help) then return help() end
  return v
end

return torch
