-- Torch7's command-line parser and experiment logger, torch.CmdLine:
--   local cmd = torch.CmdLine()
--   cmd:text('Train a model'); cmd:option('--epochs', 10, 'number of epochs')
--   local opt = cmd:parse(arg)          -- opt.epochs (a number), opt['batch-size'] also as opt.batch_size
local torch = require 'torch'

local OPTION_TYPES = {number = true, string = true, boolean = true}

-- the name without its leading dashes: '--batch-size' -> 'batch-size'
local function strip(name) return (name:gsub('^%-+', '')) end

-- torch.CmdLine([argseparator=','], [keyseparator='=']): a parser of options
-- ('-name value', '--name=value', '--flag') and positional arguments, with a
-- help text; the separators are those of cmd:string.
local CmdLine = torch.class('torch.CmdLine')

function CmdLine:__init(argseparator, keyseparator)
  self.argseparator = argseparator or ','
  self.keyseparator = keyseparator or '='
  self.options = {}            -- stripped name -> {key=, default=, help=, type=}
  self.arguments = {}          -- {key=, help=, type=}, in order
  self.helplines = {}          -- text lines, options and arguments, in the help's order
  self.dateformat = nil
  self.silentio = false
end

-- cmd:text([line]): a line of the help text (an empty line without one).
function CmdLine:text(line)
  line = line or ''
  if type(line) ~= 'string' then error('CmdLine:text: expected a string, got ' .. type(line), 2) end
  self.helplines[#self.helplines + 1] = line
end

-- cmd:option(name, default, [help], [type]): an option '-name' or '--name'
-- with its default, which gives its type (number, string, boolean) unless type
-- is given. A boolean option is a flag: given alone it flips the default;
-- '--name=true' or '--name false' sets it.
function CmdLine:option(name, default, help, type_)
  if type(name) ~= 'string' or not name:match('^%-+[^-]') then
    error("CmdLine:option: the name must be a string starting with '-', got " .. tostring(name), 2)
  end
  if default == nil then error('CmdLine:option: option ' .. name .. ' has no default value', 2) end
  type_ = type_ or type(default)
  if not OPTION_TYPES[type_] then
    error('CmdLine:option: option ' .. name .. ' has type ' .. tostring(type_) ..
          ' (number, string or boolean)', 2)
  end
  if type(default) ~= type_ then
    error('CmdLine:option: option ' .. name .. ' has a ' .. type(default) .. ' default, not a ' .. type_, 2)
  end
  local key = strip(name)
  if self.options[key] then error('CmdLine:option: option ' .. name .. ' defined twice', 2) end
  self.options[key] = {key = name, default = default, help = help, type = type_}
  self.helplines[#self.helplines + 1] = self.options[key]
end

-- cmd:argument(name, [help], [type='string']): a positional argument, required,
-- read in the order declared; type 'number' converts it.
function CmdLine:argument(name, help, type_)
  if type(name) ~= 'string' or name == '' then error('CmdLine:argument: expected a name, got ' .. tostring(name), 2) end
  if type_ ~= nil and type_ ~= 'string' and type_ ~= 'number' then
    error('CmdLine:argument: argument ' .. name .. " has type " .. tostring(type_) .. " ('string' or 'number')", 2)
  end
  local argument = {key = name, help = help, type = type_ or 'string'}
  self.arguments[#self.arguments + 1] = argument
  self.helplines[#self.helplines + 1] = argument
end

-- cmd:silent(): cmd:log writes print's output to its file only, not the screen.
function CmdLine:silent()
  self.silentio = true
end

-- cmd:addTime([name], [format='%Y-%m-%d %H:%M:%S']): cmd:log's file lines start
-- with the date (os.date's format) and '[name]: '.
function CmdLine:addTime(name, format)
  format = format or '%Y-%m-%d %H:%M:%S'
  if type(format) ~= 'string' then error('CmdLine:addTime: the format must be a string, got ' .. type(format), 2) end
  if name ~= nil then
    self.dateformat = format .. '[' .. tostring(name):gsub('%%', '%%%%') .. ']: '
  else
    self.dateformat = format .. ' '
  end
end

-- cmd:default(): a table of the options' defaults.
function CmdLine:default()
  local params = {}
  for key, option in pairs(self.options) do params[key] = option.default end
  return params
end

-- the usage text; script is arg[0] when known
function CmdLine:_usage(script)
  local lines = {}
  local head = {'Usage:'}
  if script then head[#head + 1] = script end
  head[#head + 1] = '[options]'
  for _, a in ipairs(self.arguments) do head[#head + 1] = '<' .. strip(a.key) .. '>' end
  lines[1] = table.concat(head, ' ')
  local width = 0
  for _, h in ipairs(self.helplines) do
    if type(h) == 'table' then
      width = math.max(width, h.default ~= nil and #h.key or #strip(h.key) + 2)
    end
  end
  for _, h in ipairs(self.helplines) do
    if type(h) == 'string' then
      lines[#lines + 1] = h
    else
      local name = h.default ~= nil and h.key or '<' .. strip(h.key) .. '>'
      local line = '  ' .. name .. string.rep(' ', width - #name)
      if h.help then line = line .. ' ' .. h.help end
      if h.default ~= nil then line = line .. ' [' .. tostring(h.default) .. ']' end
      lines[#lines + 1] = line
    end
  end
  return table.concat(lines, '\n')
end

-- cmd:help([arg]): prints the usage: the script (arg[0]), the options with
-- their help and defaults, the arguments and the text lines.
function CmdLine:help(args)
  print(self:_usage(type(args) == 'table' and args[0] or nil))
end

-- a parse error: raised as a table so that parse can blame its caller
local function bad(message) error({message = message}, 0) end

-- reads option a (args[i]); returns how many words it took
function CmdLine:_read_option(params, args, i)
  local a = args[i]
  local key, value = a:match('^%-%-?([^=]+)=(.*)$')
  key = key or strip(a)
  local option = self.options[key]
  if not option then bad('unknown option ' .. a) end
  local used = 1
  if option.type == 'boolean' then
    if value == nil and (args[i + 1] == 'true' or args[i + 1] == 'false') then
      value, used = args[i + 1], 2
    end
    if value == nil then
      params[key] = not option.default
    elseif value == 'true' or value == 'false' then
      params[key] = value == 'true'
    else
      bad('option ' .. option.key .. " is a flag: expected 'true' or 'false', got '" .. value .. "'")
    end
    return used
  end
  if value == nil then
    value, used = args[i + 1], 2
    if value == nil then bad('option ' .. option.key .. ' needs a value') end
  end
  if option.type == 'number' then
    local n = tonumber(value)
    if not n then bad('option ' .. option.key .. " expects a number, got '" .. value .. "'") end
    value = n
  end
  params[key] = value
  return used
end

local function is_option_word(a)
  return a:sub(1, 1) == '-' and #a > 1 and not tonumber(a)
end

function CmdLine:_parse(args)
  local params = self:default()
  local i, n_arguments = 1, 0
  while i <= #args do
    local a = args[i]
    if type(a) ~= 'string' then bad('argument ' .. i .. ' is a ' .. type(a) .. ', not a string') end
    if a == '--help' or a == '-help' or a == '-h' then
      self:help(args)
      os.exit(0)
    end
    if is_option_word(a) then
      i = i + self:_read_option(params, args, i)
    else
      n_arguments = n_arguments + 1
      local argument = self.arguments[n_arguments]
      if not argument then bad("unexpected argument '" .. a .. "'") end
      local value = a
      if argument.type == 'number' then
        value = tonumber(a)
        if not value then bad('argument <' .. strip(argument.key) .. "> expects a number, got '" .. a .. "'") end
      end
      params[strip(argument.key)] = value
      i = i + 1
    end
  end
  if n_arguments < #self.arguments then
    bad('missing argument <' .. strip(self.arguments[n_arguments + 1].key) .. '>')
  end
  for key in pairs(self.options) do
    local alias = key:gsub('%-', '_')
    if alias ~= key then params[alias] = params[key] end
  end
  return params
end

-- cmd:parse(arg): a table of the options' values (their defaults where not
-- given) and the positional arguments, by name without dashes; a dashed name
-- is also there with underscores (opt['batch-size'] and opt.batch_size).
-- '--help', '-help' or '-h' prints the usage and exits. An unknown option, a
-- missing or malformed value, or a missing or extra argument raises an error
-- (with the usage) at the caller's line.
function CmdLine:parse(args)
  args = args or {}
  if type(args) ~= 'table' then error('CmdLine:parse: expected the table of arguments (arg), got ' .. type(args), 2) end
  local ok, result = pcall(self._parse, self, args)
  if ok then return result end
  if type(result) == 'table' then
    error('CmdLine:parse: ' .. result.message .. '\n' .. self:_usage(args[0]), 2)
  end
  error(result, 0)
end

-- cmd:string(prefix, params, [ignore]): a name for the run's directory: prefix,
-- then the arguments and the options whose values differ from their defaults,
-- as key=value (booleans as t and f) joined by ',', options sorted; keys with
-- ignore[key] true are left out, and those with ignore[key] false always in.
function CmdLine:string(prefix, params, ignore)
  prefix, ignore = prefix or '', ignore or {}
  if type(params) ~= 'table' then error('CmdLine:string: expected the table of parameters, got ' .. type(params), 2) end
  local arguments, options = {}, {}
  local function show(k, v)
    if type(v) == 'boolean' then v = v and 't' or 'f' end
    return k .. self.keyseparator .. tostring(v)
  end
  for k, v in pairs(params) do
    local option = self.options[k]
    if not ignore[k] and option and (v ~= option.default or ignore[k] == false) then
      options[#options + 1] = show(k, v)
    elseif not ignore[k] and not option then
      for i, a in ipairs(self.arguments) do
        if strip(a.key) == k then arguments[i] = show(k, v) end
      end
    end
  end
  table.sort(options)
  local parts = {}
  for i = 1, #self.arguments do parts[#parts + 1] = arguments[i] end
  for _, o in ipairs(options) do parts[#parts + 1] = o end
  if #parts == 0 then return prefix end
  return prefix .. self.argseparator .. table.concat(parts, self.argseparator)
end

local screen_print               -- print before any cmd:log replaced it

-- cmd:log(file, [params]): from now on print writes to file (a name, opened for
-- writing, or an open file) as well as to the screen (only to the file after
-- cmd:silent()), each line after cmd:addTime's date; then prints the start
-- date and params (sorted by key).
function CmdLine:log(file, params)
  local f = file
  if io.type(file) ~= 'file' then
    if type(file) ~= 'string' then error('CmdLine:log: expected a file name or an open file, got ' .. type(file), 2) end
    local err
    f, err = io.open(file, 'w')
    if not f then error('CmdLine:log: cannot open ' .. err, 2) end
  end
  screen_print = screen_print or print
  local cmd = self
  _G.print = function(...)
    if not cmd.silentio then screen_print(...) end
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    f:write((cmd.dateformat and os.date(cmd.dateformat) or '') .. table.concat(parts, '\t', 1, parts.n) .. '\n')
    f:flush()
  end
  print('[program started on ' .. os.date() .. ']')
  print('[command line arguments]')
  if params then
    local keys = {}
    for k in pairs(params) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do print(k, params[k]) end
  end
  print('[----------------------]')
end

return torch.CmdLine
