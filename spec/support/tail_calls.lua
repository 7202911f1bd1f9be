-- Finds `return <call>` statements (tail calls) of what the Torch7 dialect wraps, in the
-- libraries' sources: spec/library_tail_calls_spec.lua says why none may remain.
local M = {}

-- the names whose function the Torch7 dialect replaces: tensor methods and torch functions
function M.wrapped()
  local was = torch.dialect()
  torch.dialect('pytorch')
  local m0, t0 = {}, {}
  for k, v in pairs(torch._methods) do m0[k] = v end
  for k, v in pairs(torch) do t0[k] = v end
  torch.dialect('torch7')
  local wm, wt = {}, {}
  for k, v in pairs(torch._methods) do if m0[k] ~= v then wm[k] = true end end
  for k, v in pairs(torch) do if t0[k] ~= v and type(v) == 'function' then wt[k] = true end end
  torch.dialect(was)
  return wm, wt
end

-- text with strings and the insides of brackets blanked (kept: the brackets themselves)
local function top_level(s)
  local out, depth, i, n = {}, 0, 1, #s
  while i <= n do
    local c = s:sub(i, i)
    if c == '"' or c == "'" then
      local j = i + 1
      while j <= n and s:sub(j, j) ~= c do j = j + (s:sub(j, j) == '\\' and 2 or 1) end
      out[#out + 1] = depth == 0 and '""' or ''
      i = j + 1
    else
      if c == '(' or c == '[' or c == '{' then
        if depth == 0 then out[#out + 1] = c end
        depth = depth + 1
      elseif c == ')' or c == ']' or c == '}' then
        depth = depth - 1
        if depth == 0 then out[#out + 1] = c end
      elseif depth == 0 then
        out[#out + 1] = c
      end
      i = i + 1
    end
  end
  return table.concat(out), depth
end

-- the tail-called name of a return's expression, and how it is called (':' a method,
-- '.' a torch function, '[' a computed method), or nil when it is no single call
local function tail_call(expr)
  local top = top_level(expr)
  top = top:gsub('%s+', ' '):gsub('^ ', ''):gsub(' $', '')
  if top:find('[,+*/%%^#<>=~]') or top:find('%f[%w_]and%f[^%w_]') or top:find('%f[%w_]or%f[^%w_]')
     or top:find('%f[%w_]not%f[^%w_]') or top:find('%f[%w_]function%f[^%w_]') or top:find('^%-')
     or top:find('[^%w_%]%)]%-') or top:find('[%w_%]%)] ?%- ?') then
    return nil
  end
  if top:sub(-1) ~= ')' then return nil end
  local name = top:match(':([%w_]+) ?%(%)$')
  if name then return name, ':' end
  name = top:match('^torch%.([%w_]+) ?%(%)$')
  if name then return name, '.' end
  if top:match('%[%] ?%(%)$') then return '?', '[' end
  return nil
end
M.tail_call = tail_call

-- {file, line, text, name} for each return statement of file that tail-calls a wrapped name
function M.scan(file, wm, wt)
  local lines = {}
  for l in io.lines(file) do lines[#lines + 1] = l end
  local hits = {}
  local i = 1
  while i <= #lines do
    local code = lines[i]:gsub('%-%-.*$', '')
    local s = code:find('%f[%w_]return%f[^%w_]')
    if s then
      local expr = code:sub(s + 6)
      local j = i
      local _, depth = top_level(expr)
      while depth > 0 and j < #lines do            -- a call over several lines
        j = j + 1
        expr = expr .. ' ' .. lines[j]:gsub('%-%-.*$', '')
        _, depth = top_level(expr)
      end
      expr = expr:gsub(';%s*$', '')
      repeat local e = expr; expr = expr:gsub('%s*%f[%w_]end%f[^%w_]%s*$', '') until e == expr
      local name, how = tail_call(expr)
      if name and (how == '[' or (how == ':' and wm[name]) or (how == '.' and wt[name])) then
        hits[#hits + 1] = {file = file, line = i, text = lines[i]:gsub('^%s+', ''), name = name}
      end
    end
    i = i + 1
  end
  return hits
end

return M
