-- help(f) / th's ?f: the documentation of a function. Documentation lives
-- next to the definition: for a Lua function, the comment block right above
-- its definition in the source file; for a C function, the text registered
-- with torch.doc(f, text) (the bindings' docs tables).
local torch = require 'torch.core'

local docs = setmetatable({}, {__mode = 'k'})

-- torch.doc(f, text): registers f's documentation; returns f.
function torch.doc(f, text)
  if type(text) ~= 'string' then error('torch.doc: expected the text as a string', 2) end
  docs[f] = text
  return f
end

-- The comment lines right above the line where the Lua function f is defined.
local function source_comment(f)
  local info = debug.getinfo(f, 'S')
  if info.what ~= 'Lua' or info.source:sub(1, 1) ~= '@' or info.linedefined <= 0 then return nil end
  local file = io.open(info.source:sub(2))
  if not file then return nil end
  local lines = {}
  for l in file:lines() do
    lines[#lines + 1] = l
    if #lines >= info.linedefined then break end
  end
  file:close()
  local block = {}
  for i = info.linedefined - 1, 1, -1 do
    local text = lines[i]:match('^%s*%-%-%s?(.*)$')
    if not text or lines[i]:match('^%s*%-%-%-%-') then break end
    table.insert(block, 1, text)
  end
  if #block == 0 then return nil end
  return table.concat(block, '\n')
end

-- The name under which v is reachable from the usual roots, for the heading.
local function find_name(v)
  local roots = {{'torch', torch}, {'nn', rawget(_G, 'nn')}, {'optim', rawget(_G, 'optim')},
                 {'data', rawget(_G, 'data')}, {'x', torch._methods}}
  for _, root in ipairs(roots) do
    local prefix, t = root[1], root[2]
    if type(t) == 'table' then
      for k, val in pairs(t) do
        if rawequal(val, v) and type(k) == 'string' then
          return prefix == 'x' and 'x:' .. k or prefix .. '.' .. k
        end
      end
      for k, sub in pairs(t) do
        if type(sub) == 'table' and type(k) == 'string' and k:sub(1, 1) ~= '_' then
          for k2, val in pairs(sub) do
            if rawequal(val, v) and type(k2) == 'string' then return prefix .. '.' .. k .. '.' .. k2 end
          end
        end
      end
    end
  end
  return nil
end

-- torch.help_text(f): f's documentation, or nil.
function torch.help_text(f)
  if f == nil then return nil end
  local text = docs[f]
  if text then return text end
  if type(f) == 'function' then return source_comment(f) end
  if type(f) == 'table' then
    local mt = getmetatable(f)
    if type(f.__init) == 'function' then return source_comment(f.__init) end
    if mt and docs[mt] then return docs[mt] end
  end
  return nil
end

-- help(f): prints f's documentation (help() alone says how to use it).
function help(f)
  if f == nil then
    print('help(f) or ?f prints the documentation of a function: help(torch.mm), ?nn.Linear')
    return
  end
  local name = find_name(f) or tostring(f)
  local text = torch.help_text(f)
  if text then
    print(name)
    print(text)
  else
    print('no documentation for ' .. name)
  end
end

return help
