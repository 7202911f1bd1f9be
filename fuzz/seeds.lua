-- fuzz/seeds.lua DIR: writes valid files for the fuzz targets to start from,
-- DIR/t7/* (torch.serialize, without the CRC-32 the target appends) and
-- DIR/safetensors/* (whole files, and each as header, NUL, data: the form
-- whose length prefix the target writes), covering every value kind, dtype
-- and header feature the loaders read.
local nn, optim = require 'nn', require 'optim'
local dir = assert(arg[1], 'usage: th fuzz/seeds.lua DIR')
os.execute(string.format("mkdir -p '%s/t7' '%s/safetensors'", dir, dir))

local function write(path, bytes)
  local f = assert(io.open(path, 'wb'))
  f:write(bytes)
  f:close()
end

local dtypes = {'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'}
local small = {}
for _, dt in ipairs(dtypes) do small[dt] = (torch.arange(0, 6):view(2, 3) - 2):to(dt) end

torch.manual_seed(0)
local shared = {x = 1}
local cycle = {}
cycle.self = cycle
local model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
local opt = optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})
local values = {
  scalars = {1, -2.5, 'text', true, false, math.maxinteger, 0 / 0},
  nested = {a = {b = {c = {d = 'deep'}}}, [1.5] = 'float key', [true] = 'bool key'},
  sharing = {shared, shared, cycle = cycle},
  tensors = small,
  views = {base = torch.arange(0, 12):view(3, 4):t(), empty = torch.zeros(0, 3), scalar = torch.tensor(2.5)},
  size = torch.ones(2, 3):size(),
  grad = {w = torch.randn(3, {requires_grad = true})},
  model = model,
  checkpoint = {model = model:state_dict(), optim = opt:state_dict(), rng = torch.get_rng_state(), epoch = 3},
  optimizer = {model = model, optim = opt},
}
for name, v in pairs(values) do write(string.format('%s/t7/%s', dir, name), torch.serialize(v):sub(1, -5)) end

local st = dir .. '/safetensors/'
torch.save_safetensors(st .. 'dtypes', small, {format = 'pt'})
torch.save_safetensors(st .. 'empty', {})
torch.save_safetensors(st .. 'shapes', {scalar = torch.tensor(1.5), none = torch.zeros(0, 4),
                                        t = torch.randn(2, 3):t()})
torch.save_safetensors(st .. 'metadata', {w = torch.ones(2)}, {a = 'b', ['quote"\n'] = 'é'})
-- hand-written: an unaligned tensor (copied even with mmap) and spaces in the JSON
local header = '{ "a" : {"dtype":"U8","shape":[1],"data_offsets":[0,1]}, '
               .. '"x":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}}'
write(st .. 'unaligned', string.pack('<I8', #header) .. header .. '\7' .. string.pack('<ff', 1.5, -2))
for _, name in ipairs({'dtypes', 'empty', 'shapes', 'metadata', 'unaligned'}) do
  local f = assert(io.open(st .. name, 'rb'))
  local bytes = f:read('a')
  f:close()
  local n = string.unpack('<I8', bytes)
  write(st .. name .. '.split', bytes:sub(9, 8 + n) .. '\0' .. bytes:sub(9 + n))
end
