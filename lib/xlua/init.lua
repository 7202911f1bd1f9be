-- xlua: Torch7's extensions to Lua (torch/xlua): a progress bar, a table
-- printer, a forgiving require, time formatting, named-argument helpers, and
-- string.split, table.splice and table.prune where Lua has none.
-- `local xlua = require 'xlua'`; th --torch7 makes it global.
local torch = require 'torch'
local sys = require 'sys'

local xlua = {}

-- the longest value xlua.print shows of a table's field
local FIELD_WIDTH = 40

-- xlua.print(obj, ...): prints obj; a table as {[key] = value, ...} (long values
-- cut at 40 characters, userdata as <userdata>), a table with a __tostring as
-- that; more arguments are printed after it.
function xlua.print(obj, ...)
  if type(obj) == 'table' and not (getmetatable(obj) and getmetatable(obj).__tostring) then
    local lines = {}
    for k, v in pairs(obj) do
      local shown = type(v) == 'userdata' and '<userdata>' or tostring(v):gsub('\n', '\\n')
      if #shown > FIELD_WIDTH then shown = shown:sub(1, FIELD_WIDTH) .. ' ... ' end
      lines[#lines + 1] = '[' .. tostring(k) .. '] = ' .. shown
    end
    io.write('{' .. table.concat(lines, ',\n ') .. '}')
  else
    io.write(tostring(obj))
  end
  if select('#', ...) > 0 then
    io.write('    ')
    print(...)
  else
    io.write('\n')
  end
end

-- xlua.formatTime(seconds): a short duration: the two largest units of days,
-- hours, minutes, seconds and milliseconds ('1h2m', '3s250ms', '0ms').
function xlua.formatTime(seconds)
  if type(seconds) ~= 'number' then error('xlua.formatTime: expected seconds, got ' .. type(seconds), 2) end
  local units = {{'D', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}, {'ms', 0.001}}
  local parts, rest = {}, seconds
  for _, unit in ipairs(units) do
    local count = math.floor(rest / unit[2] + 1e-9)
    rest = rest - count * unit[2]
    if count > 0 and #parts < 2 then parts[#parts + 1] = count .. unit[1] end
  end
  return #parts > 0 and table.concat(parts) or '0ms'
end

-- xlua.progress(current, goal): draws the progress bar of step current of goal
-- (torch.progress: rate, elapsed time and ETA; one redrawn line on a terminal,
-- a line every tenth of the way otherwise). A new bar starts when current
-- goes back.
function xlua.progress(current, goal)
  if type(current) ~= 'number' or type(goal) ~= 'number' or goal < 1 then
    error('xlua.progress: expected (current, goal) with goal >= 1, got (' .. tostring(current) .. ', ' ..
          tostring(goal) .. ')', 2)
  end
  if not torch.progress then require 'data' end
  torch.progress(current, goal)
end

-- xlua.error(message, [domain], [usage]): raises message in red, after
-- '<domain> ' when given, followed by usage when given.
function xlua.error(message, domain, usage)
  local c = sys.COLORS
  if domain then message = '<' .. tostring(domain) .. '> ' .. tostring(message) end
  local text = c.Red .. tostring(message) .. c.none
  if usage then text = text .. '\n' .. tostring(usage) end
  error(text, 2)
end

-- xlua.trycatch(try, catch): calls try(); if it raises, catch(error).
function xlua.trycatch(try, catch)
  local ok, err = pcall(try)
  if not ok then catch(err) end
end

-- xlua.installed(name): true and the file when module name is on
-- package.path or package.cpath; false otherwise.
function xlua.installed(name)
  if type(name) ~= 'string' then error('xlua.installed: expected a module name, got ' .. type(name), 2) end
  local file = package.searchpath(name, package.path) or package.searchpath(name, package.cpath)
  return file ~= nil, file
end

-- xlua.require(name, [quiet]): require(name), or false with a warning (none
-- when quiet) when it cannot be loaded.
function xlua.require(name, quiet)
  if type(name) ~= 'string' then error('xlua.require: expected a module name, got ' .. type(name), 2) end
  local ok, module = pcall(require, name)
  if ok then return module end
  if not quiet then
    print(module)
    print('warning: <' .. name .. '> could not be loaded (is it installed?)')
  end
  return false
end

local table2string

local function value_string(v)
  if type(v) == 'string' then
    v = v:gsub('\n', '\\n')
    if v:find('"') and not v:find("'") then return "'" .. v .. "'" end
    return '"' .. v:gsub('"', '\\"') .. '"'
  end
  return type(v) == 'table' and table2string(v) or tostring(v)
end

local function key_string(k)
  if type(k) == 'string' and k:match('^[_%a][_%w]*$') then return k end
  return '[' .. value_string(k) .. ']'
end

-- xlua.table2string(t, [newline]): t as Lua source: '{1,2,a=3}' (one entry a
-- line, as 'a : 3', with newline); keys after the list part in key order.
function table2string(t, newline)
  if type(t) ~= 'table' then error('xlua.table2string: expected a table, got ' .. type(t), 2) end
  local items, keys = {}, {}
  for i, v in ipairs(t) do items[i] = value_string(v) end
  for k in pairs(t) do
    if not (math.type(k) == 'integer' and k >= 1 and k <= #items) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do items[#items + 1] = key_string(k) .. (newline and ' : ' or '=') .. value_string(t[k]) end
  if newline then return '{\n   ' .. table.concat(items, '\n   ') .. '\n}' end
  return '{' .. table.concat(items, ',') .. '}'
end
xlua.table2string = table2string

-- xlua.envparams(defaults): a copy of defaults where an environment variable
-- of a key's name replaces its value, read as the default's type
-- (lr=0.1 th train.lua with xlua.envparams{lr=0.01}).
function xlua.envparams(defaults)
  if type(defaults) ~= 'table' then error('xlua.envparams: expected a table of defaults, got ' .. type(defaults), 2) end
  local params = {}
  for k, v in pairs(defaults) do
    local text = type(k) == 'string' and os.getenv(k)
    if text then
      local value = text
      if type(v) == 'number' then value = tonumber(text)
      elseif type(v) == 'boolean' then
        value = (text == 'true' or text == 'True') or ((text == 'false' or text == 'False') and false or nil)
      end
      if value == nil then
        error('xlua.envparams: $' .. k .. " is '" .. text .. "', not a " .. type(v), 2)
      end
      v = value
    end
    params[k] = v
  end
  return params
end

-- xlua.usage(funcname, description, example, ...): the help text of a function
-- taking the arguments described by {arg=, type=, help=, req=, default=}.
function xlua.usage(funcname, description, example, ...)
  local defs = {...}
  if type(defs[1]) == 'table' and defs[1].tabled then defs = defs[1].tabled end
  local lines = {funcname}
  if description then lines[#lines + 1] = '\n' .. description end
  lines[#lines + 1] = '\nusage:\n' .. funcname .. '{'
  for _, d in ipairs(defs) do
    local key = d.arg .. ' = ' .. tostring(d.type)
    if not d.req then key = '[' .. key .. ']' end
    local line = '    ' .. key .. string.rep(' ', math.max(1, 36 - #key)) .. '-- ' .. tostring(d.help or '')
    if type(d.default) == 'table' then line = line .. '  [default = ' .. table2string(d.default) .. ']'
    elseif d.default ~= nil then line = line .. '  [default = ' .. tostring(d.default) .. ']' end
    lines[#lines + 1] = line
  end
  lines[#lines + 1] = '}'
  if example then lines[#lines + 1] = '\n' .. example end
  return table.concat(lines, '\n')
end

-- xlua.unpack(args, funcname, description, ...): a function's arguments, given
-- in order or as one table of named values, checked against the definitions
-- {arg=, type=, help=, req=, default=} that follow: a table of them by name
-- and position (defaults filled in, .usage the help), then the values in
-- order. A missing required argument raises with the usage.
function xlua.unpack(args, funcname, description, ...)
  local defs = {...}
  if type(args) ~= 'table' then error('xlua.unpack: expected the table of arguments {...}, got ' .. type(args), 2) end
  local usage = function() return xlua.usage(funcname, description, nil, {tabled = defs}) end
  local given = {}
  local first = args[1]
  if #args == 1 and type(first) == 'table' and #first == 0 and not torch.typename(first) then
    given = first
  else
    for i, d in ipairs(defs) do given[d.arg] = args[i] end
  end
  local values = {}
  for i, d in ipairs(defs) do
    local v = given[d.arg]
    if v == nil then v = d.default end
    if v == nil and d.req then error('missing argument: ' .. d.arg .. '\n' .. usage(), 2) end
    values[d.arg], values[i] = v, v
  end
  values.usage = setmetatable({}, {__tostring = usage})
  return values, table.unpack(values, 1, #defs)
end

-- xlua.splice(t, [start=1], [length=1]) (also table.splice): a copy of list t
-- without the length elements from start, and those elements.
local function splice(t, start, length)
  start, length = start or 1, length or 1
  local kept, removed = {}, {}
  for i, v in ipairs(t) do
    if i < start or i >= start + length then kept[#kept + 1] = v else removed[#removed + 1] = v end
  end
  return kept, removed
end

-- xlua.prune(t, [hash], [merge]) (also table.prune): list t without
-- duplicates (equal hash(v)), the last kept, or merge(new, kept) of them.
local function prune(t, hash, merge)
  hash = hash or function(v) return v end
  local by_hash, order = {}, {}
  for _, v in ipairs(t) do
    local h = hash(v)
    if by_hash[h] == nil then order[#order + 1] = h; by_hash[h] = v
    elseif merge then by_hash[h] = merge(v, by_hash[h])
    else by_hash[h] = v end
  end
  local out = {}
  for i, h in ipairs(order) do out[i] = by_hash[h] end
  return out
end

-- xlua adds string.split (sys.split), table.splice and table.prune, as Torch7's
-- did; a function already there is kept.
string.split = string.split or sys.split
table.splice = table.splice or splice
table.prune = table.prune or prune
xlua.split, xlua.splice, xlua.prune = sys.split, splice, prune

package.loaded.xlua = xlua
return xlua
