-- paths: Torch7's file-name and directory package (torch/paths), on
-- lua-filesystem. `local paths = require 'paths'`; th --torch7 makes it global.
local lfs = require 'lfs'
local torch = require 'torch'

local paths = {}

local function check_string(name, s, what)
  if type(s) ~= 'string' then
    error('paths.' .. name .. ': expected ' .. (what or 'a path') .. ' (a string), got ' .. type(s), 3)
  end
end

-- paths.filep(path): true when path names an existing file (not a directory).
function paths.filep(path)
  check_string('filep', path)
  local mode = lfs.attributes(path, 'mode')
  return mode ~= nil and mode ~= 'directory'
end

-- paths.dirp(path): true when path names an existing directory.
function paths.dirp(path)
  check_string('dirp', path)
  return lfs.attributes(path, 'mode') == 'directory'
end

-- paths.basename(path, [suffix]): the last component of path (as the shell's
-- basename: 'a/b.txt' -> 'b.txt', 'a/b/' -> 'b'), without '.suffix' when given
-- and present ('b.txt', 'txt' or '.txt' -> 'b').
function paths.basename(path, suffix)
  check_string('basename', path)
  local base = path:match('([^/]*)/*$')
  if suffix ~= nil then
    check_string('basename', suffix, 'a suffix')
    suffix = suffix:gsub('^%.', '')
    if suffix ~= '' and #base > #suffix + 1 and base:sub(-#suffix - 1) == '.' .. suffix then
      base = base:sub(1, -#suffix - 2)
    end
  end
  return base
end

-- paths.dirname(path): the directory holding path, as the shell's dirname:
-- 'a/b/c' -> 'a/b', 'c' -> '.', '/c' -> '/'.
function paths.dirname(path)
  check_string('dirname', path)
  local trimmed = path:gsub('/+$', '')
  if trimmed == '' then return path:sub(1, 1) == '/' and '/' or '.' end
  local dir = trimmed:match('^(.*)/[^/]*$')
  if not dir then return '.' end
  dir = dir:gsub('/+$', '')
  return dir == '' and '/' or dir
end

-- paths.extname(path): the extension of path's last component, without the dot
-- ('a/b.tar.gz' -> 'gz'), or nil when it has none.
function paths.extname(path)
  check_string('extname', path)
  return paths.basename(path):match('^.+%.([^.]+)$')
end

-- paths.cwd(): the full path of the current directory.
function paths.cwd()
  return (assert(lfs.currentdir()))
end

-- from's absolute path joined with name: an absolute name replaces it; '.' and
-- '..' components are resolved; no trailing slash
local function join(from, name)
  local parts = {}
  if name:sub(1, 1) ~= '/' then
    for part in from:gmatch('[^/]+') do parts[#parts + 1] = part end
  end
  for part in name:gmatch('[^/]+') do
    if part == '..' then parts[#parts] = nil
    elseif part ~= '.' then parts[#parts + 1] = part end
  end
  return '/' .. table.concat(parts, '/')
end

-- paths.concat([path1, ..., pathn]): the full name of path1 relative to the
-- current directory, then of each next path relative to the one before (an
-- absolute one starts again): paths.concat('a', 'b') is cwd/a/b; with no
-- argument, the current directory.
function paths.concat(...)
  local full = paths.cwd()
  for i = 1, select('#', ...) do
    local part = select(i, ...)
    if type(part) ~= 'string' then
      error('paths.concat: expected strings, got ' .. type(part) .. ' as argument ' .. i, 2)
    end
    full = join(full, part)
  end
  return full
end

-- paths.dir(dname): a table of the names in directory dname (with '.' and
-- '..'), or nil when it is not a directory.
function paths.dir(dname)
  check_string('dir', dname, 'a directory')
  if not paths.dirp(dname) then return nil end
  local names = {}
  for name in lfs.dir(dname) do names[#names + 1] = name end
  table.sort(names)
  return names
end

-- paths.files(dname, [include]): an iterator over the names in dname (with '.'
-- and '..'), those for which include(name) is true when include is a
-- function, those that contain the pattern when it is a string.
function paths.files(dname, include)
  check_string('files', dname, 'a directory')
  if type(include) == 'string' then
    local pattern = include
    include = function(name) return name:find(pattern) end
  elseif include ~= nil and type(include) ~= 'function' then
    error('paths.files: include must be a function or a pattern string, got ' .. type(include), 2)
  end
  local names, i = paths.dir(dname) or {}, 0
  return function()
    while true do
      i = i + 1
      local name = names[i]
      if name == nil or not include or include(name) then return name end
    end
  end
end

-- paths.iterdirs(dname): an iterator over the directories in dname, without '.'
-- and '..'.
function paths.iterdirs(dname)
  check_string('iterdirs', dname, 'a directory')
  return paths.files(dname, function(name)
    return name ~= '.' and name ~= '..' and paths.dirp(dname .. '/' .. name)
  end)
end

-- paths.iterfiles(dname): an iterator over the files (not directories) in dname.
function paths.iterfiles(dname)
  check_string('iterfiles', dname, 'a directory')
  return paths.files(dname, function(name) return paths.filep(dname .. '/' .. name) end)
end

-- paths.mkdir(path): creates directory path; true, or nil and the reason.
function paths.mkdir(path)
  check_string('mkdir', path)
  return lfs.mkdir(path)
end

-- paths.rmdir(path): deletes the empty directory path; true, or nil and the reason.
function paths.rmdir(path)
  check_string('rmdir', path)
  return lfs.rmdir(path)
end

-- paths.rmall(path, 'yes'): deletes file or directory path and everything in
-- it (the second argument must be 'yes'); true, or nil, the reason and the
-- path that failed.
function paths.rmall(path, yes)
  check_string('rmall', path)
  if yes ~= 'yes' then return nil, "missing second argument ('yes')" end
  local mode = lfs.symlinkattributes(path, 'mode')
  if mode == nil then return nil, 'not a file or directory', path end
  if mode ~= 'directory' then
    local ok, err = os.remove(path)
    if not ok then return nil, err, path end
    return true
  end
  for name in lfs.dir(path) do
    if name ~= '.' and name ~= '..' then
      local ok, err, where = paths.rmall(path .. '/' .. name, 'yes')
      if not ok then return nil, err, where end
    end
  end
  local ok, err = lfs.rmdir(path)
  if not ok then return nil, err, path end
  return true
end

-- paths.home: the user's home directory ($HOME, else '.').
paths.home = os.getenv('HOME') or '.'

-- the names paths.tmpname gave, removed when Lua closes (the table's __gc)
local temporaries = setmetatable({}, {__gc = function(names)
  for _, name in ipairs(names) do os.remove(name) end
end})

-- paths.tmpname(): the name of a new temporary file, removed when th exits.
function paths.tmpname()
  local name = os.tmpname()
  temporaries[#temporaries + 1] = name
  return name
end

-- paths.uname(): the system's name ('Linux', 'Darwin', ...), the machine's
-- network name and the processor type.
function paths.uname()
  return torch._uname()
end

-- paths.is_win(): true on Windows.
function paths.is_win()
  return (paths.uname()):match('Windows') ~= nil
end

-- paths.is_mac(): true on macOS.
function paths.is_mac()
  return (paths.uname()) == 'Darwin'
end

-- paths.findprogram(name, ...): the full path of the first of the programs
-- named that is in a directory of $PATH, or nil.
function paths.findprogram(...)
  for i = 1, select('#', ...) do
    local name = select(i, ...)
    if type(name) ~= 'string' then error('paths.findprogram: expected program names, got ' .. type(name), 2) end
    for dir in (os.getenv('PATH') or '.'):gmatch('[^:]+') do
      local candidate = join(paths.cwd(), dir .. '/' .. name)
      if paths.filep(candidate) then return candidate end
    end
  end
  return nil
end

-- the full name of the file running at stack level (counted from the caller of
-- the function that asks), or nil at the prompt
local function file_at(level)
  local info = debug.getinfo(level + 1, 'S')
  local source = info and info.source
  if type(source) ~= 'string' or source:sub(1, 1) ~= '@' then return nil end
  return paths.concat(source:sub(2))
end

-- paths.thisfile([name]): the full name of the file calling it (nil at the
-- prompt); with name, name's full path relative to that file's directory.
function paths.thisfile(name, depth)
  local file = file_at((depth or 2))
  if name == nil then return file end
  check_string('thisfile', name, 'a file name')
  return file and paths.concat(paths.dirname(file), name) or name
end

-- paths.dofile(name): dofile of name relative to the directory of the file
-- calling it (the current directory at the prompt).
function paths.dofile(name, depth)
  check_string('dofile', name, 'a file name')
  local file = file_at((depth or 2))
  if file then name = paths.concat(paths.dirname(file), name) end
  return dofile(name)
end

-- paths.require(name): loads the C library name (luaopen_name, found on
-- package.cpath) as a module, or gives package.loaded[name] when loaded.
function paths.require(name)
  check_string('require', name, 'a module name')
  if package.loaded[name] then return package.loaded[name] end
  local file, err = package.searchpath(name, package.cpath)
  if not file then error('paths.require: cannot find C library ' .. name .. err, 2) end
  local open, why = package.loadlib(file, 'luaopen_' .. name:gsub('%.', '_'))
  if not open then error('paths.require: cannot load ' .. file .. ': ' .. why, 2) end
  local module = open(name)
  if module ~= nil then package.loaded[name] = module end
  if package.loaded[name] == nil then package.loaded[name] = true end
  return package.loaded[name]
end

package.loaded.paths = paths
return paths
