-- torch.CmdLine: Torch7's command-line parser.
--   local cmd = torch.CmdLine()
--   cmd:text('Train a model'); cmd:option('--epochs', 10, 'number of epochs')
--   local opt = cmd:parse(arg)          -- opt.epochs (a number), opt['batch-size'] also as opt.batch_size
local torch = require 'torch'

local CmdLine = {}
CmdLine.__index = CmdLine

function torch.CmdLine()
  return setmetatable({options = {}, order = {}, texts = {}}, CmdLine)
end

-- cmd:text(line): a line of the help text.
function CmdLine:text(line)
  self.order[#self.order + 1] = {text = line or ''}
end

-- cmd:option(name, default, help): an option '--name' (or '-name') with its default;
-- its value is read as the default's type (number, boolean, string).
function CmdLine:option(name, default, help)
  local key = name:gsub('^%-+', '')
  if self.options[key] then error('CmdLine: option ' .. name .. ' defined twice', 2) end
  self.options[key] = {name = name, default = default, help = help or ''}
  self.order[#self.order + 1] = {option = key}
end

-- cmd:help(): the usage text.
function CmdLine:help()
  local lines = {}
  for _, e in ipairs(self.order) do
    if e.text then lines[#lines + 1] = e.text
    else
      local o = self.options[e.option]
      lines[#lines + 1] = string.format('  %-24s %s [%s]', o.name, o.help, tostring(o.default))
    end
  end
  return table.concat(lines, '\n')
end

-- cmd:parse(arg): a table of option values (defaults where not given); --help prints the
-- usage and exits; unknown options and bad values raise.
function CmdLine:parse(args)
  local opt = {}
  for k, o in pairs(self.options) do opt[k] = o.default end
  local i = 1
  args = args or {}
  while i <= #args do
    local a = args[i]
    if a == '--help' or a == '-h' then
      print(self:help())
      os.exit(0)
    end
    local key, value = a:match('^%-%-?([^=]+)=(.*)$')
    if not key then key = a:match('^%-%-?(.+)$') end
    local o = key and self.options[key]
    if not o then error('CmdLine: unknown option ' .. tostring(a) .. '\n' .. self:help(), 2) end
    if type(o.default) == 'boolean' and value == nil then
      local nxt = args[i + 1]
      if nxt == 'true' or nxt == 'false' then value = nxt; i = i + 1 else value = 'true' end
    elseif value == nil then
      i = i + 1
      value = args[i]
      if value == nil then error('CmdLine: option ' .. a .. ' needs a value', 2) end
    end
    if type(o.default) == 'number' then
      local v = tonumber(value)
      if not v then error('CmdLine: option ' .. a .. ' expects a number, got ' .. value, 2) end
      opt[key] = v
    elseif type(o.default) == 'boolean' then
      opt[key] = value == 'true' or value == '1'
    else
      opt[key] = value
    end
    i = i + 1
  end
  for k, v in pairs(opt) do
    local alt = k:gsub('%-', '_')
    if alt ~= k then opt[alt] = v end
  end
  return opt
end

return torch.CmdLine
