-- optim.Logger: logs named values to a tab-separated text file, line by
-- line as Torch7's, and plots them through gnuplot (Debian's gnuplot or
-- gnuplot-nox package) to a PNG or SVG file.
local torch = require 'torch'
local optim = require 'optim'

local fail = optim._error

local Logger = torch.class('optim.Logger')

-- Torch7's plot styles and the gnuplot styles they stand for.
local gnuplot_styles = {['-'] = 'lines', ['+'] = 'points', ['.'] = 'dots', ['+-'] = 'linespoints',
                        ['-+'] = 'linespoints', ['|'] = 'impulses', ['~'] = 'lines smooth csplines'}

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- optim.Logger(filename, timestamp): logs to filename (its directory is
-- created; timestamp appends -YYYY_MM_DD_HH:MM:SS to the name), or to
-- stdout when filename is nil. plot() writes filename .. '.png' unless
-- logger.plotfile names another file (.png or .svg).
function Logger:__init(filename, timestamp)
  if filename ~= nil then
    if type(filename) ~= 'string' then fail('optim.Logger: filename must be a string, got %s', type(filename)) end
    self.name = filename
    local dir = filename:match('^(.*)/[^/]*$')
    if dir and dir ~= '' then os.execute('mkdir -p ' .. shell_quote(dir)) end
    if timestamp then filename = filename .. '-' .. os.date('%Y_%m_%d_%X') end
    local file, err = io.open(filename, 'w')
    if not file then fail('optim.Logger: cannot open %s: %s', filename, tostring(err)) end
    self.file = file
    self.plotfile = self.name .. '.png'
  else
    self.file = io.stdout
    self.name = 'stdout'
    print('<Logger> warning: no path provided, logging to std out')
  end
  self.empty = true
  self.symbols, self.styles, self.names, self.idx = {}, {}, {}, {}
  self.order = {}
  self.showPlot = true
  self.defaultStyle = '+'
  self.logscale = false
end

-- Declares the columns: a header line of the names, tab-separated.
local function declare(self, names)
  self.empty = false
  for k, name in ipairs(names) do
    self.order[k] = name
    self.file:write(tostring(name) .. '\t')
    self.symbols[k] = {}
    self.styles[k] = {self.defaultStyle}
    self.idx[name] = k
    self.names[k] = name
  end
  self.file:write('\n')
  self.file:flush()
end

-- logger:setNames{'train', 'test'}: names the columns (then add takes
-- values in that order: logger:add{0.5, 0.7}). Returns the logger.
function Logger:setNames(names)
  if type(names) ~= 'table' or #names == 0 then fail('optim.Logger:setNames: expects a list of names') end
  declare(self, names)
  return self
end

-- logger:add{name = value, ...} or logger:add{value, ...} (after
-- setNames): one line; numbers are written as %11.4e, strings as they are.
-- A first add by name fixes the columns (in sorted name order).
function Logger:add(symbols)
  if type(symbols) ~= 'table' then fail('optim.Logger:add: expects a table of values, got %s', type(symbols)) end
  if self.empty then
    local names = {}
    for k in pairs(symbols) do names[#names + 1] = k end
    table.sort(names, function(a, b) return tostring(a) < tostring(b) end)
    declare(self, names)
  end
  local values = {}
  for k, v in pairs(symbols) do
    local column = self.idx[k] or (math.type(k) == 'integer' and self.order[k] ~= nil and k)
    if not column then fail("optim.Logger:add: unknown column '%s'", tostring(k)) end
    if type(v) ~= 'number' and type(v) ~= 'string' then
      fail("optim.Logger:add: can only log numbers and strings, got a %s for '%s'", torch.type(v), tostring(k))
    end
    values[column] = v
  end
  for k = 1, #self.order do
    local v = values[k]
    if v ~= nil then
      self.file:write((type(v) == 'number' and string.format('%11.4e', v) or v) .. '\t')
      table.insert(self.symbols[k], v)
    end
  end
  self.file:write('\n')
  self.file:flush()
end

-- logger:style{name = '-', ...} or {'-', '+'}: each column's plot style or
-- list of styles: '-' lines, '+' points, '.' dots, '+-' lines and points,
-- '|' impulses, '~' a smoothed line. Returns the logger.
function Logger:style(styles)
  for name, style in pairs(styles) do
    local column = self.idx[name] or name
    if type(style) == 'string' then style = {style} end
    if type(style) ~= 'table' then fail('optim.Logger:style: a style must be a string or a list of strings') end
    for _, s in ipairs(style) do
      if not gnuplot_styles[s] then fail("optim.Logger:style: unknown style '%s' (use - + . +- | ~)", tostring(s)) end
    end
    self.styles[column] = style
  end
  return self
end

-- logger:setlogscale(true): a logarithmic y axis.
function Logger:setlogscale(state) self.logscale = state end

-- logger:display(false): plot() stops opening a gnuplot window (it opens
-- one only when $DISPLAY is set); the plot file is written either way.
function Logger:display(state) self.showPlot = state end

local function gnuplot_available()
  return os.execute('command -v gnuplot >/dev/null 2>&1') == true
end

-- The gnuplot commands plotting the columns given (all when none).
local function plot_script(self, names, terminal)
  local columns = {}
  if #names == 0 then
    for k = 1, #self.order do columns[#columns + 1] = k end
  else
    for _, name in ipairs(names) do
      local k = self.idx[name]
      if not k then fail("optim.Logger:plot: unknown column '%s'", tostring(name)) end
      columns[#columns + 1] = k
    end
  end
  local lines = {terminal, 'set grid', string.format('set title %s', string.format('%q', '<Logger::' .. self.name .. '>'))}
  if self.logscale then lines[#lines + 1] = 'set logscale y' end
  local plots, data = {}, {}
  for _, k in ipairs(columns) do
    local values = {}
    for i, v in ipairs(self.symbols[k]) do
      if type(v) == 'number' then values[#values + 1] = string.format('%d %.17g', i, v) end
    end
    if #values > 1 then
      for _, style in ipairs(self.styles[k]) do
        plots[#plots + 1] = string.format("'-' using 1:2 with %s title %q", gnuplot_styles[style],
                                          tostring(self.names[k]))
        data[#data + 1] = table.concat(values, '\n') .. '\ne'
      end
    end
  end
  if #plots == 0 then return nil end
  lines[#lines + 1] = 'plot ' .. table.concat(plots, ', ')
  lines[#lines + 1] = table.concat(data, '\n')
  return table.concat(lines, '\n') .. '\n'
end

local function run_gnuplot(script, flags)
  local pipe = io.popen('gnuplot ' .. flags .. ' 2>&1 >/dev/null', 'w')
  pipe:write(script)
  local ok, _, code = pipe:close()
  return ok, code
end

-- logger:plot(...): plots the named columns (all when none is named) that
-- hold two or more numbers, to logger.plotfile (a PNG, or an SVG when the
-- name ends in .svg) through gnuplot; a gnuplot window too when display is
-- on and $DISPLAY is set. Raises when gnuplot is not installed. Returns the
-- plot file's name, or nil when there was nothing to plot.
function Logger:plot(...)
  local name = 'optim.Logger:plot'
  if not self.plotfile then fail('%s: the logger writes to stdout; set logger.plotfile to plot', name) end
  if not gnuplot_available() then
    fail('%s: gnuplot was not found on the PATH (install Debian\'s gnuplot-nox or gnuplot package)', name)
  end
  local terminal = self.plotfile:lower():match('%.svg$') and 'set terminal svg size 800,600'
                   or 'set terminal pngcairo size 800,600'
  local script = plot_script(self, {...}, terminal .. '\nset output ' .. string.format('%q', self.plotfile))
  if script == nil then return nil end
  local ok, code = run_gnuplot(script, '')
  if not ok and terminal:find('pngcairo') then     -- a gnuplot built without cairo
    script = plot_script(self, {...}, 'set terminal png size 800,600\nset output ' .. string.format('%q', self.plotfile))
    ok, code = run_gnuplot(script, '')
  end
  if not ok then fail('%s: gnuplot failed (exit %s) writing %s', name, tostring(code), self.plotfile) end
  if self.showPlot and os.getenv('DISPLAY') then run_gnuplot(plot_script(self, {...}, ''), '-persist') end
  return self.plotfile
end

return Logger
