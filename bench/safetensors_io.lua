-- safetensors_io: save, load (copied, mapped, mapped and summed: every page
-- read) of a 64 MB float32 state dict -- Python's load_file maps the file, so
-- load_copy there is load_file and a clone of each tensor -- and
-- the interop check: each side writes a small file of every dtype, has the
-- other side write the same tensors (`th bench/safetensors_io.lua --write PATH`,
-- `python3 bench/safetensors_io.py --write PATH`), reads that file and checks
-- its values bit for bit against its own; both files must also be the same bytes.
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))

-- the interop tensors: the same integers on both sides, exact in every dtype
local function interop_tensors()
  local out = {}
  local base = (torch.arange(0, 24, {dtype = 'int64'}) * 37) % 201 - 100     -- -100..100
  local codes = {float32 = 'F32', float64 = 'F64', float16 = 'F16', bfloat16 = 'BF16', int64 = 'I64',
                 int32 = 'I32', int16 = 'I16', int8 = 'I8'}
  for dtype, code in pairs(codes) do
    local v = dtype:find('float') and base:double() / 4 or base
    if dtype == 'int64' then v = base * (1 << 40) end
    out[code] = v:to(dtype):view(2, 3, 4)
  end
  out.U8 = ((torch.arange(0, 24, {dtype = 'int64'}) * 37) % 256):to('uint8')
  out.BOOL = (torch.arange(0, 24, {dtype = 'int64'}) % 3):eq(0)
  out.scalar = torch.tensor(0.25, {dtype = 'float64'})
  out.empty = torch.zeros(0, 5)
  return out
end
local METADATA = {written_by = 'bench/safetensors_io'}

if arg[1] == '--write' then
  torch.save_safetensors(arg[2], interop_tensors(), METADATA)
  os.exit(0)
end

local dir = os.tmpname()
os.remove(dir)
os.execute('mkdir -p ' .. dir)
local function read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('a')
  f:close()
  return s
end

-- interop: Python writes, moontorch reads
local mine, theirs = dir .. '/moontorch.safetensors', dir .. '/python.safetensors'
torch.save_safetensors(mine, interop_tensors(), METADATA)
local python = os.getenv('PYTHON') or 'python3'
assert(os.execute(string.format('%s bench/safetensors_io.py --write %s', python, theirs)), 'the Python side failed')
local want, equal, checksum = interop_tensors(), 1, 0
local got, metadata = torch.load_safetensors(theirs)
for name, t in pairs(want) do
  local g = got[name]
  if not (g and g.dtype == t.dtype and g:size() == t:size() and torch._tensor_bytes(g) == torch._tensor_bytes(t)) then
    equal = 0
    io.stderr:write('safetensors_io: ' .. name .. ' differs\n')
  end
  checksum = checksum + t:double():sum():item()
end
if metadata.written_by ~= METADATA.written_by then equal = 0 end
print(string.format('CHECK interop %d %d %.6f', equal, read(mine) == read(theirs) and 1 or 0, checksum))

-- timing: 8 tensors of 1024x2048 float32
torch.manual_seed(0)
local big = {}
for i = 1, 8 do big['layer' .. i .. '.weight'] = torch.randn(1024, 2048) end
local path = dir .. '/big.safetensors'
torch.save_safetensors(path, big)                  -- warm-up: page cache, allocator
local t0 = torch.clock()
torch.save_safetensors(path, big)
print('TIME ' .. (torch.clock() - t0) .. ' save')
torch.load_safetensors(path)
t0 = torch.clock()
local back = torch.load_safetensors(path)
print('TIME ' .. (torch.clock() - t0) .. ' load_copy')
t0 = torch.clock()
local mapped = torch.load_safetensors(path, {mmap = true})
print('TIME ' .. (torch.clock() - t0) .. ' load_mmap')
t0 = torch.clock()
local total = 0
for _, t in pairs(torch.load_safetensors(path, {mmap = true})) do total = total + t:sum():item() end
print('TIME ' .. (torch.clock() - t0) .. ' load_mmap_sum')
local same = 1
for name, t in pairs(big) do
  if not (back[name]:equal(t) and mapped[name]:equal(t)) then same = 0 end
end
print('CHECK big_roundtrip ' .. same)
os.execute('rm -rf ' .. dir)
