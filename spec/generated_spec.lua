-- generated_spec.lua: files in the repository that a generator writes are what
-- the generator writes now. docs/reference.md comes from the help texts
-- (scripts/gen_reference.lua); editing the page by hand, or a help text without
-- regenerating the page, fails here.

local TH = dofile('spec/support/th.lua').path()

local read_file = dofile('spec/support/files.lua').read

-- the first line where a and b differ, for the failure message
local function first_difference(a, b)
  local line = 1
  for i = 1, math.max(#a, #b) do
    if a:sub(i, i) ~= b:sub(i, i) then
      local la = a:sub(1, i):match('[^\n]*$') .. (a:sub(i + 1):match('^[^\n]*') or '')
      local lb = b:sub(1, i):match('[^\n]*$') .. (b:sub(i + 1):match('^[^\n]*') or '')
      return string.format('line %d: committed %q, generated %q', line, la, lb)
    end
    if a:sub(i, i) == '\n' then line = line + 1 end
  end
end

describe('generated files', function()
  it('docs/reference.md is what scripts/gen_reference.lua writes from the help texts', function()
    local out = os.tmpname()
    local ok = os.execute(TH .. ' scripts/gen_reference.lua ' .. out .. ' > /dev/null')
    local generated = read_file(out)
    os.remove(out)
    assert.is_true(ok)
    local committed = read_file('docs/reference.md')
    if committed ~= generated then
      error('docs/reference.md is stale (regenerate it with build/th scripts/gen_reference.lua): '
        .. first_difference(committed, generated))
    end
  end)
end)
