-- isa_spec.lua: torch.backends.cpu.get_cpu_capability() names the instruction set the CPU
-- kernels run on, as PyTorch does: the CPU's level from /proc/cpuinfo's flags (the specs run
-- where the build was made, so a native build's ISA is that level too).
local torch = require 'torch'

-- the x86-64 level of this CPU: AVX-512 (x86-64-v4), AVX2 + FMA (x86-64-v3) or neither
local function cpuinfo_level()
  local f = io.open('/proc/cpuinfo')
  if not f then return nil end
  local text = f:read('a')
  f:close()
  local flags = {}
  for word in (text:match('\nflags%s*:([^\n]*)') or text:match('^flags%s*:([^\n]*)') or ''):gmatch('%S+') do
    flags[word] = true
  end
  local v3 = flags.avx2 and flags.fma and flags.bmi1 and flags.bmi2
  if v3 and flags.avx512f and flags.avx512bw and flags.avx512cd and flags.avx512dq and flags.avx512vl then
    return 'AVX512'
  end
  return v3 and 'AVX2' or 'DEFAULT'
end

describe('torch.backends.cpu', function()
  it("get_cpu_capability names this CPU's level: AVX512, AVX2 or DEFAULT", function()
    local cap = torch.backends.cpu.get_cpu_capability()
    assert.is_truthy(cap == 'AVX512' or cap == 'AVX2' or cap == 'DEFAULT', cap)
    local want = cpuinfo_level()
    if not want then
      pending('no /proc/cpuinfo here: ' .. cap)
      return
    end
    assert.are.equal(want, cap)
  end)
end)
