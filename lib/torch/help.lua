-- help(f) / th's ?f: the documentation of a function or a class. C functions
-- are documented in lib/torch/doc/*.lua, one entry per function, by area;
-- Lua functions and classes by the comment next to their definition: the
-- block right above it, or the block that opens with their name (a class
-- made by a helper such as Activation.define('ReLU', ...), or torch.class).
local torch = require 'torch.core'

-- The areas of lib/torch/doc, in the order docs/reference.md lists them.
local DOC_AREAS = {'tensor', 'shape', 'math', 'reduce', 'index', 'linalg', 'random', 'autograd', 'util', 'cuda', 'torch7'}

local docs = setmetatable({}, {__mode = 'k'})     -- value -> text: torch.doc and the doc tables
local doc_problems = {}                           -- mistakes in the doc tables, for the help spec

-- torch.doc(f, text): registers f's documentation; returns f.
function torch.doc(f, text)
  if type(text) ~= 'string' then error('torch.doc: expected the text as a string', 2) end
  docs[f] = text
  return f
end

-- torch._help_alias(wrapper, f): a function that wraps f (lib/torch/torch7.lua)
-- is documented by f's text unless it has its own.
local help_aliases = setmetatable({}, {__mode = 'k'})
function torch._help_alias(wrapper, f)
  if wrapper ~= f then help_aliases[wrapper] = f end
end

-- ---- the doc tables ----

-- The value torch.a.b names, or nil.
local function torch_path(path)
  local v = torch
  for part in path:gmatch('[^.]+') do
    if type(v) ~= 'table' then return nil end
    v = rawget(v, part)
  end
  return v
end

local function bind(f, entry, name)
  if f == nil then
    doc_problems[#doc_problems + 1] = name .. ' does not exist'
  elseif docs[f] and docs[f] ~= entry then
    doc_problems[#doc_problems + 1] = name .. ' is documented twice'
  else
    docs[f] = entry
  end
end

-- Reads one area's text: entries are separated by blank lines; an entry's
-- unindented lines are signatures, and every torch.name(...) or
-- recv:name(...) (a tensor method) on them binds that function to the whole
-- entry; an in-place recv:name_(...) binds torch.name_ too where it exists.
local function load_area(area, entries)
  local text = require('torch.doc.' .. area)
  for entry in (text .. '\n\n'):gmatch('(.-)\n%s*\n') do
    entry = entry:gsub('^\n+', '')
    if entry ~= '' then
      entries[#entries + 1] = {area = area, text = entry}
      for line in entry:gmatch('[^\n]+') do
        if not line:match('^%s') then
          for path in line:gmatch('%f[%w_.]torch%.([%w_.]+)%(') do
            bind(torch_path(path), entry, 'torch.' .. path)
          end
          for recv, name in line:gmatch('%f[%w_]([%a_][%w_]*):([%w_]+)%(') do
            if recv ~= 'torch' then
              bind(torch._methods[name], entry, 'x:' .. name)
              local inplace = name:sub(-1) == '_' and torch_path(name)
              if inplace then bind(inplace, entry, 'torch.' .. name) end
            end
          end
        end
      end
    end
  end
end

local entries
local function doc_entries()
  if not entries then
    entries = {}
    for _, area in ipairs(DOC_AREAS) do load_area(area, entries) end
  end
  return entries
end

-- torch._doc_entries(): the doc tables' entries, {area=, text=}, in order,
-- and their mistakes (names that do not exist or are documented twice).
function torch._doc_entries()
  return doc_entries(), doc_problems
end

-- ---- comments in the source ----

local file_lines = setmetatable({}, {__mode = 'v'})

local function lines_of(path)
  local lines = file_lines[path]
  if lines then return lines end
  local file = io.open(path)
  if not file then return nil end
  lines = {}
  for l in file:lines() do lines[#lines + 1] = l end
  file:close()
  file_lines[path] = lines
  return lines
end

local function comment_text(line)
  if line:match('^%s*%-%-%-%-') then return nil end           -- a '---- section ----' rule
  return line:match('^%s*%-%-%s?(.*)$')
end

local function source_path(f)
  local info = debug.getinfo(torch._method_origin and torch._method_origin(f) or f, 'S')
  if info.what ~= 'Lua' or info.source:sub(1, 1) ~= '@' or info.linedefined <= 0 then return nil end
  return info.source:sub(2), info.linedefined
end

-- The comment lines right above line i, or nil.
local function block_above(lines, i)
  local block = {}
  for j = i - 1, 1, -1 do
    local text = comment_text(lines[j])
    if not text then break end
    table.insert(block, 1, text)
  end
  if #block == 0 then return nil end
  return table.concat(block, '\n')
end

-- The comment right above the line where the Lua function f is defined.
local function comment_above(f)
  local path, line = source_path(f)
  local lines = path and lines_of(path)
  return lines and block_above(lines, line)
end

-- The comment blocks of a file: arrays of their lines' text.
local function comment_blocks(path)
  local lines = lines_of(path)
  if not lines then return {} end
  local blocks, cur = {}, nil
  for _, l in ipairs(lines) do
    local text = comment_text(l)
    if text then
      cur = cur or {}
      cur[#cur + 1] = text
    else
      if cur then blocks[#blocks + 1] = cur end
      cur = nil
    end
  end
  if cur then blocks[#blocks + 1] = cur end
  return blocks
end

local function escape(s) return (s:gsub('[%^%$%(%)%%%.%[%]%*%+%-%?]', '%%%0')) end

-- The comment block of one of the files that documents one of the names:
-- the first that opens with 'name(' (or 'name{', 'name: '), else the first
-- that shows a call 'name(' somewhere.
local function heading_comment(paths, names)
  local opens, calls = {}, {}
  for i, name in ipairs(names) do
    local e = escape(name)
    opens[i] = {'^' .. e .. '[({]', '^' .. e .. ':%s', '^' .. e .. ':$'}
    calls[i] = '%f[%w_.:]' .. e .. '[({]'
  end
  local fallback
  for _, path in ipairs(paths) do
    for _, block in ipairs(comment_blocks(path)) do
      for i = 1, #names do
        for _, pattern in ipairs(opens[i]) do
          if block[1]:match(pattern) then return table.concat(block, '\n') end
        end
        if not fallback then
          for _, l in ipairs(block) do
            if l:match(calls[i]) then fallback = table.concat(block, '\n') break end
          end
        end
      end
    end
  end
  return fallback
end

-- The comment right above the code line that defines the class name in one
-- of the files: torch.class('name', ...) or Parent:extend('name').
local function definition_comment(paths, name)
  local quoted = {"'" .. name .. "'", '"' .. name .. '"'}
  for _, path in ipairs(paths) do
    local lines = lines_of(path) or {}
    for i, l in ipairs(lines) do
      if not comment_text(l) and (l:find('class(', 1, true) or l:find('extend(', 1, true)) and
         (l:find(quoted[1], 1, true) or l:find(quoted[2], 1, true)) then
        local above = block_above(lines, i)
        if above then return above end
      end
    end
  end
  return nil
end

-- ---- names ----

-- The public tables help knows, with the prefix their entries are shown with.
local function roots()
  local nn, optim, data = package.loaded.nn, package.loaded.optim, package.loaded.data
  local list = {{'torch', torch}, {'x:', torch._methods}, {'torch.autograd', torch.autograd},
                {'torch.utils', torch.utils}, {'torch.linalg', torch.linalg}, {'torch.memory', torch.memory}}
  if type(rawget(torch, 'profiler')) == 'table' then list[#list + 1] = {'torch.profiler', rawget(torch, 'profiler')} end
  if type(nn) == 'table' then
    list[#list + 1] = {'nn', nn}
    list[#list + 1] = {'nn.functional', nn.functional}
    list[#list + 1] = {'nn.init', nn.init}
    list[#list + 1] = {'nn.utils', nn.utils}
  end
  if type(optim) == 'table' then
    list[#list + 1] = {'optim', optim}
    list[#list + 1] = {'optim.lr_scheduler', optim.lr_scheduler}
  end
  if type(data) == 'table' then
    list[#list + 1] = {'data', data}
    list[#list + 1] = {'data.transforms', data.transforms}
  end
  if type(package.loaded.distributed) == 'table' then list[#list + 1] = {'distributed', package.loaded.distributed} end
  return list
end

local function qualified(prefix, key)
  return prefix:sub(-1) == ':' and prefix .. key or prefix .. '.' .. key
end

-- Every name under which v is reachable from the roots ('x:narrow', 'torch.mm').
local function names_of(v)
  local names = {}
  for _, root in ipairs(roots()) do
    local prefix, t = root[1], root[2]
    if type(t) == 'table' then
      for k, val in pairs(t) do
        if rawequal(val, v) and type(k) == 'string' then names[#names + 1] = qualified(prefix, k) end
      end
    end
  end
  table.sort(names, function(a, b) return #a < #b or (#a == #b and a < b) end)
  return names
end

-- The names a comment may use for one of names: nn.functional.relu is F.relu there.
local function comment_names(names)
  local out = {}
  for _, n in ipairs(names) do
    out[#out + 1] = n
    local rest = n:match('^nn%.functional%.(.*)$')
    if rest then out[#out + 1] = 'F.' .. rest end
  end
  return out
end

-- ---- classes ----

local function is_class(t)
  return type(t) == 'table' and type(rawget(t, '__typename') or rawget(t, '__name')) == 'string'
end

-- The file named after a class (lib/nn/ReLU.lua for nn.ReLU), which keeps the
-- comment of a class a helper made, then the source files of its own
-- functions, then of its ancestors'.
local function class_files(class)
  local files, seen = {}, {}
  local typename = rawget(class, '__typename') or rawget(class, '__name')
  local own = type(typename) == 'string' and package.searchpath(typename, package.path)
  if own then seen[own] = true; files[1] = own end
  local c, depth = class, 0
  while type(c) == 'table' and depth < 16 do
    for _, v in pairs(c) do
      if type(v) == 'function' then
        local path = source_path(v)
        if path and not seen[path] then seen[path] = true; files[#files + 1] = path end
      end
    end
    local mt = getmetatable(c)
    c = type(mt) == 'table' and rawget(mt, '__index') or nil
    depth = depth + 1
  end
  return files
end

-- A class's documentation: the comment that opens with its name, else the
-- one above its definition, else the one above its own __init.
local function class_text(class)
  local names, files = names_of(class), class_files(class)
  local typename = rawget(class, '__typename') or rawget(class, '__name')
  names[#names + 1] = typename
  local text = heading_comment(files, comment_names(names)) or definition_comment(files, typename)
  if text then return text end
  local init, mt = rawget(class, '__init'), getmetatable(class)
  local parent = mt and rawget(mt, '__index')
  if type(init) ~= 'function' or (type(parent) == 'table' and parent.__init == init) then return nil end
  return comment_above(init)                  -- (an __init copied from the parent is not the class's)
end

-- torch.help_text(f): f's documentation, or nil; an object's is its class's.
function torch.help_text(f)
  if f == nil then return nil end
  if torch._load_all then torch._load_all() end   -- the modules loaded on first use, and their aliases
  doc_entries()
  local text = docs[f]
  if text then return text end
  if help_aliases[f] then
    text = torch.help_text(help_aliases[f])
    if text then return text end
  end
  if type(f) == 'function' then
    local path = source_path(f)
    if not path then return nil end
    return comment_above(f) or heading_comment({path}, comment_names(names_of(f)))
  end
  if is_class(f) then return class_text(f) end
  local mt = getmetatable(f)
  if type(f) == 'table' and is_class(mt) then return class_text(mt) end
  return mt and docs[mt] or nil
end

-- torch._help_index(): every public function and class of torch, its tensor
-- methods, nn, optim and data, as {name=, value=} sorted by name; names
-- starting with '_' are private and left out.
function torch._help_index()
  if torch._load_all then torch._load_all() end
  local list = {}
  for _, root in ipairs(roots()) do
    local prefix, t = root[1], root[2]
    if type(t) == 'table' then
      for k, v in pairs(t) do
        local callable = type(v) == 'function' or is_class(v) or
                         (type(v) == 'table' and getmetatable(v) and getmetatable(v).__call ~= nil)
        if type(k) == 'string' and k:sub(1, 1) ~= '_' and callable then
          list[#list + 1] = {name = qualified(prefix, k), value = v}
        end
      end
    end
  end
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

-- help(f) or help(f, name): prints f's documentation (help() says how to use it).
function help(f, name)
  if f == nil then
    if name then print('help: ' .. name .. ' is nil') return end
    print('help(f) or ?f prints the documentation of a function or class: help(torch.mm), ?nn.Linear, ?x:narrow')
    print("At th's prompt nn, optim and data load on first use; a script requires them: local nn = require 'nn'.")
    print('Every function and class: docs/reference.md; a topic: docs/<topic>.md (nn, optim, data, utilities, ...).')
    return
  end
  local text = torch.help_text(f)
  name = name or names_of(f)[1] or (torch.typename and torch.typename(f)) or tostring(f)
  if not text then
    print('no documentation for ' .. name)
    return
  end
  local short = name:match('[%w_]+$') or name
  local first = text:match('^[^\n]*')
  if not first:find(short, 1, true) then print(name) end
  print(text)
end

return help
