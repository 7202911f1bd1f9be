-- sys: Torch7's small system package (torch/sys): clocks and sleeps, shell
-- commands with their output, the OS name, terminal colours.
-- `local sys = require 'sys'`; th --torch7 makes it global.
local torch = require 'torch'
local paths = require 'paths'

local sys = {}

-- sys.clock(): seconds on a monotonic wall clock, as a float (torch.clock).
sys.clock = torch.clock

-- sys.usleep(us): sleeps us microseconds.
function sys.usleep(us)
  if type(us) ~= 'number' then error('sys.usleep: expected a number of microseconds, got ' .. type(us), 2) end
  local ok, err = pcall(torch._usleep, us)
  if not ok then error('sys.' .. err, 2) end
end

-- sys.sleep(seconds): sleeps that long (fractions too).
function sys.sleep(seconds)
  if type(seconds) ~= 'number' then error('sys.sleep: expected a number of seconds, got ' .. type(seconds), 2) end
  if not (seconds >= 0) then error('sys.sleep: expected seconds >= 0, got ' .. tostring(seconds), 2) end
  sys.usleep(seconds * 1e6)
end

-- sys.tic(): starts the stopwatch (the one torch.tic starts).
function sys.tic()
  torch.tic()
end

-- sys.toc([verbose]): seconds since the last sys.tic() or torch.tic(); printed
-- too when verbose.
function sys.toc(verbose)
  local ok, elapsed = pcall(torch.toc)
  if not ok then error('sys.toc: sys.tic() was never called', 2) end
  if verbose then print(elapsed) end
  return elapsed
end

local function trim(s) return (s:gsub('^%s+', ''):gsub('%s+$', '')) end

local function check_command(name, cmd)
  if type(cmd) ~= 'string' then error('sys.' .. name .. ': expected a shell command (a string), got ' .. type(cmd), 3) end
end

-- sys.execute(cmd): runs the shell command cmd and returns what it wrote to
-- stdout and stderr, without leading and trailing white space.
function sys.execute(cmd)
  check_command('execute', cmd)
  local f = assert(io.popen('{ ' .. cmd .. '\n} 2>&1', 'r'))
  local out = f:read('a')
  f:close()
  return trim(out)
end

-- sys.fexecute(cmd, [readwhat='a']): sys.execute through a temporary file,
-- read with file:read(readwhat).
function sys.fexecute(cmd, readwhat)
  check_command('fexecute', cmd)
  local tmp = os.tmpname()
  os.execute('{ ' .. cmd .. '\n} > ' .. tmp .. ' 2>&1')
  local f = assert(io.open(tmp, 'r'))
  local out = f:read(readwhat or 'a') or ''
  f:close()
  os.remove(tmp)
  return trim(out)
end

-- sys.uname(): 'linux', 'macos', 'windows', or '?' for another system.
function sys.uname()
  local name = paths.uname()
  if name == 'Linux' then return 'linux' end
  if name == 'Darwin' then return 'macos' end
  if name:match('Windows') then return 'windows' end
  return '?'
end

-- sys.OS: sys.uname() when sys was loaded.
sys.OS = sys.uname()

local function lister(flags)
  return function(dir)
    if dir ~= nil and type(dir) ~= 'string' then error('sys.ls: expected a directory name, got ' .. type(dir), 2) end
    return sys.execute('ls ' .. flags .. (dir and ' ' .. dir or ''))
  end
end
-- sys.ls([dir]), sys.ll, sys.la, sys.lla: the output of ls, ls -l, ls -a, ls -la.
sys.ls = torch.doc(lister(''), 'sys.ls([dir]): the output of ls (sys.ll: ls -l, sys.la: ls -a, sys.lla: ls -la).')
sys.ll, sys.la, sys.lla = lister('-l'), lister('-a'), lister('-la')

-- sys.fpath(): the directory and the name of the file calling it.
function sys.fpath()
  local source = debug.getinfo(2, 'S').source:gsub('^@', '')
  local full = paths.concat(source)
  return paths.dirname(full), paths.basename(full)
end

-- sys.split(s, sep): the pieces of s between matches of the pattern sep
-- (empty pieces dropped at the start only, as Torch7's).
function sys.split(s, sep)
  if type(s) ~= 'string' or type(sep) ~= 'string' then
    error('sys.split: expected a string and a separator pattern, got ' .. type(s) .. ' and ' .. type(sep), 2)
  end
  local pieces, last = {}, 1
  local from, to, piece = s:find('(.-)' .. sep, 1)
  while from do
    if from ~= 1 or piece ~= '' then pieces[#pieces + 1] = piece end
    last = to + 1
    if to < from then break end
    from, to, piece = s:find('(.-)' .. sep, last)
  end
  if last <= #s then pieces[#pieces + 1] = s:sub(last) end
  return pieces
end

-- sys.isNaN(x): true when x is NaN.
function sys.isNaN(x) return x ~= x end

-- sys.COLORS: ANSI escapes for coloured output: c.red .. 'text' .. c.none
-- (lower case: normal, capitalised: bold, _name: background).
sys.COLORS = {
  none = '\27[0m',
  black = '\27[0;30m', red = '\27[0;31m', green = '\27[0;32m', yellow = '\27[0;33m',
  blue = '\27[0;34m', magenta = '\27[0;35m', cyan = '\27[0;36m', white = '\27[0;37m',
  Black = '\27[1;30m', Red = '\27[1;31m', Green = '\27[1;32m', Yellow = '\27[1;33m',
  Blue = '\27[1;34m', Magenta = '\27[1;35m', Cyan = '\27[1;36m', White = '\27[1;37m',
  _black = '\27[40m', _red = '\27[41m', _green = '\27[42m', _yellow = '\27[43m',
  _blue = '\27[44m', _magenta = '\27[45m', _cyan = '\27[46m', _white = '\27[47m',
}

-- sys.dirname and sys.concat: paths.dirname and paths.concat, as Torch7 kept them.
sys.dirname, sys.concat = paths.dirname, paths.concat

package.loaded.sys = sys
return sys
