-- torch.cuda, torch.device and the device= option of the creation functions.
--
-- The CUDA backend is a separate shared object (build/torch/cuda.so, built
-- whenever nvcc was found). It is loaded on first use -- a torch.cuda
-- function, or a device name that says cuda reaching the C side -- never at
-- `require 'torch'`: it maps cudart, cuBLAS and cuDNN (over 200 MB resident
-- and ten times th's start-up when loaded eagerly). It registers its memory
-- and its kernels with the engine only when a GPU answers, and
-- torch.cuda.is_available() says whether one did. Device ordinals count from
-- 0 ('cuda:0'), as nvidia-smi and CUDA_VISIBLE_DEVICES do.
local torch = require 'torch.core'
local methods = torch._methods

local cuda = {}
torch.cuda = cuda

-- backend: the functions cuda.so returns, nil until it is loaded or when no
-- GPU answered (unavailable then says why); tried: the one attempt was made
local backend, unavailable, tried
local registry = debug.getregistry()
local function load()
  if tried then return backend end
  tried = true
  local path = package.searchpath('torch.cuda', package.cpath)
  if not path then
    unavailable = 'moontorch was built without its CUDA backend (make CUDA=0, or no nvcc at build time)'
  else
    local open, err = package.loadlib(path, 'luaopen_torch_cuda')
    if not open then
      unavailable = 'the CUDA backend could not be loaded: ' .. tostring(err)
    else
      local ok, mod, why = pcall(open)
      if ok and mod then
        backend = mod
      elseif ok then
        unavailable = 'no GPU that CUDA can use on this machine (the CUDA runtime says: ' .. tostring(why) .. ')'
      else
        unavailable = 'the CUDA backend failed to start: ' .. tostring(mod)
      end
    end
  end
  registry['torch.cuda.unavailable'] = unavailable   -- for the C side's messages
  return backend
end
registry['torch.cuda.load'] = load                   -- lt_parse_device calls it for a cuda device name

function cuda.is_available() return load() ~= nil end
-- why torch.cuda.is_available() is false (nil when it is true)
function cuda.unavailable_reason() load() return unavailable end
function cuda.device_count() return load() and backend.device_count() or 0 end

-- torch.cuda._check(op, name, level): raises op's "no CUDA device" error,
-- at level (as error's), when name ('cuda', 'cuda:N') cannot be used; for the
-- Lua paths that move to a device (module:to, torch.CudaTensor), so the
-- message is the C side's and the position the caller's.
function cuda._check(op, name, level)
  if not load() then error(op .. ": no CUDA device for '" .. tostring(name) .. "': " .. unavailable, level + 1) end
end

local function need(name)
  if not load() then error('torch.cuda.' .. name .. ': no CUDA device: ' .. unavailable, 3) end
end

-- a device argument: nil (the current one), an ordinal, 'cuda:N', or a tensor on it
local function ordinal(name, d)
  if d == nil or math.type(d) == 'integer' then return d end
  if torch.is_tensor(d) then d = d.device end
  if type(d) == 'string' then
    if d == 'cuda' then return nil end
    local n = d:match('^cuda:(%d+)$')
    if n then return tonumber(n) end
  end
  error('torch.cuda.' .. name .. ": expected a device ordinal or 'cuda:N', got " .. tostring(d), 3)
end

for _, name in ipairs{'current_device', 'set_device', 'synchronize', 'get_device_name', 'get_device_capability',
                      'mem_get_info', 'memory_stats', 'reset_peak_memory_stats'} do
  cuda[name] = function(d)
    need(name)
    return backend[name](ordinal(name, d))
  end
end

function cuda.empty_cache() if backend then backend.empty_cache() end end

-- Random numbers: each GPU has its own generator (Philox, the CPU's stream layout, so a seed
-- gives the same numbers on either device); torch.manual_seed seeds them all, as PyTorch.
local function generator(d) return torch._device_generator(d or (backend and backend.current_device() or 0)) end
function cuda.manual_seed(seed) generator():manual_seed(seed) end
function cuda.manual_seed_all(seed)
  for i = 0, math.max(cuda.device_count(), 1) - 1 do generator(i):manual_seed(seed) end
end
function cuda.seed() return generator():seed() end
function cuda.seed_all()
  local s = generator(0):seed()
  for i = 1, cuda.device_count() - 1 do generator(i):manual_seed(s) end
  return s
end
function cuda.initial_seed() return generator():initial_seed() end
function cuda.get_rng_state(d) return generator(ordinal('get_rng_state', d)):get_state() end
function cuda.set_rng_state(state, d) generator(ordinal('set_rng_state', d)):set_state(state) end

-- Streams and events: torch.cuda.Stream(device), torch.cuda.Event({enable_timing=}),
-- torch.cuda.current_stream(device), torch.cuda.default_stream(device).
function cuda.Stream(d) need('Stream') return backend.Stream(ordinal('Stream', d)) end
function cuda.Event(opts) need('Event') return backend.Event(opts) end
function cuda.current_stream(d) need('current_stream') return backend.current_stream(ordinal('current_stream', d)) end
function cuda.default_stream(d) need('default_stream') return backend.default_stream(ordinal('default_stream', d)) end

-- torch.cuda.stream(s, fn, ...): runs fn(...) with s as its device's current stream (the
-- kernels fn launches queue on s), then puts the previous stream back, also when fn raises.
function cuda.stream(s, fn, ...)
  need('stream')
  local prev = backend.set_stream(s)
  local r = table.pack(pcall(fn, ...))
  backend.set_stream(prev)
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

-- the caching allocator's counters, in bytes, as PyTorch's functions of the same names
-- (0 while the backend is not loaded: no GPU memory exists then)
local function stat(name, field)
  cuda[name] = function(d)
    if not backend then return 0 end
    return backend.memory_stats(ordinal(name, d))[field]
  end
end
stat('memory_allocated', 'allocated')
stat('max_memory_allocated', 'peak')
stat('memory_reserved', 'reserved')
stat('max_memory_reserved', 'peak_reserved')

-- The device a memory counter reads: true for the CPU ('cpu', the default, or
-- a CPU tensor), else false and the GPU's ordinal (nil: the current one).
local function memory_device(name, d)
  if d == nil or d == 'cpu' or (torch.is_tensor(d) and not d.is_cuda) then return true end
  local ok = torch.is_tensor(d) or math.type(d) == 'integer' or
             (type(d) == 'string' and (d == 'cuda' or d:match('^cuda:%d+$') ~= nil))
  if not ok then
    error("torch." .. name .. ": expected 'cpu', 'cuda', 'cuda:N', a GPU ordinal or a tensor, got " .. tostring(d), 3)
  end
  return false, ordinal(name, d)
end

-- torch.memory_allocated(device='cpu'): bytes in the blocks live tensors hold
-- (the CPU allocator rounds each to its bucket: a power of two of 64 bytes or
-- more, whole pages above 64 MiB); with a GPU device, torch.cuda.memory_allocated's.
function torch.memory_allocated(d)
  local cpu, dev = memory_device('memory_allocated', d)
  if cpu then return torch.memory_stats().allocated end
  return cuda.memory_allocated(dev)
end
-- torch.max_memory_allocated(device='cpu'): the peak of torch.memory_allocated
-- since the start or the last torch.reset_peak_memory_stats().
function torch.max_memory_allocated(d)
  local cpu, dev = memory_device('max_memory_allocated', d)
  if cpu then return torch.memory_stats().peak end
  return cuda.max_memory_allocated(dev)
end

-- torch.use_deterministic_algorithms(mode, {warn_only=false}): records whether
-- only deterministic algorithms may run, as PyTorch's switch. Every CPU op is
-- deterministic already (a parallel sum splits its work the same way for a
-- given thread count), so on the CPU nothing changes. On the GPU the ops that
-- accumulate with atomics -- index_add_, scatter_add_, index_put_ with
-- accumulate, and the backward passes built on them (index_select, gather,
-- embedding, advanced indexing) -- and cuDNN's convolution algorithms may
-- still sum in varying order; the flag does not change them yet.
local deterministic, deterministic_warn_only = false, false
function torch.use_deterministic_algorithms(mode, opts)
  if type(mode) ~= 'boolean' then
    error('torch.use_deterministic_algorithms: expected true or false, got ' .. torch.type(mode), 2)
  end
  if opts ~= nil and (type(opts) ~= 'table' or next(opts, next(opts)) ~= nil or
                      (next(opts) ~= nil and next(opts) ~= 'warn_only')) then
    error('torch.use_deterministic_algorithms: the only option is {warn_only=}, got ' .. tostring(opts), 2)
  end
  deterministic = mode
  deterministic_warn_only = mode and opts ~= nil and opts.warn_only == true
end
-- torch.are_deterministic_algorithms_enabled(): the flag of torch.use_deterministic_algorithms
function torch.are_deterministic_algorithms_enabled() return deterministic end
-- torch.is_deterministic_algorithms_warn_only_enabled(): its warn_only option
function torch.is_deterministic_algorithms_warn_only_enabled() return deterministic_warn_only end

-- torch.backends.cudnn: the settings PyTorch scripts set at their top
-- (torch.backends.cudnn.benchmark = true, .deterministic = true), kept so that
-- those lines run. The convolutions take cuDNN's heuristic choice of
-- algorithm whatever they say (src/cuda/cu_conv.cu: no benchmarking run, and
-- no filter on determinism yet); cudnn.is_available() is torch.cuda's.
local cudnn_settings = {benchmark = false, deterministic = false}
torch.backends = torch.backends or {}
torch.backends.cudnn = setmetatable({}, {
  __index = function(_, k) return cudnn_settings[k] end,
  __newindex = function(_, k, v)
    if cudnn_settings[k] == nil then
      error('torch.backends.cudnn: no setting ' .. tostring(k) .. ' (benchmark, deterministic)', 2)
    end
    if type(v) ~= 'boolean' then
      error('torch.backends.cudnn.' .. k .. ': expected true or false, got ' .. torch.type(v), 2)
    end
    cudnn_settings[k] = v
  end,
})
-- torch.backends.cudnn.is_available(): whether cuDNN can run (a GPU answered)
rawset(torch.backends.cudnn, 'is_available', function() return load() ~= nil end)

-- torch.backends.cpu.get_cpu_capability(): the instruction set the CPU kernels run on here,
-- as PyTorch names it: 'AVX512', 'AVX2' or 'DEFAULT' (a portable build, make ARCH=x86-64,
-- picks among its kernels' variants at start-up; a native one names the build's own)
torch.backends.cpu = torch.backends.cpu or {}
function torch.backends.cpu.get_cpu_capability() return torch._cpu_capability() end

-- torch.backends.cuda.matmul.allow_tf32 (false by default, as PyTorch)
torch.backends = torch.backends or {}
torch.backends.cuda = torch.backends.cuda or {}
torch.backends.cuda.matmul = setmetatable({}, {
  __index = function(_, k)
    if k == 'allow_tf32' then return load() ~= nil and backend.allow_tf32() or false end
  end,
  __newindex = function(_, k, v)
    if k ~= 'allow_tf32' then error('torch.backends.cuda.matmul: no setting ' .. tostring(k), 2) end
    if load() then backend.allow_tf32(v and true or false) end
  end,
})

-- torch.device('cuda'), torch.device('cuda:1'), torch.device('cuda', 1), torch.device('cpu'):
-- the device's name, checked, as tensors' .device gives it
function torch.device(kind, index)
  if type(kind) ~= 'string' then error('torch.device: expected a device name, got ' .. type(kind), 2) end
  if index ~= nil then
    if math.type(index) ~= 'integer' or index < 0 then
      error('torch.device: the index must be an integer >= 0, got ' .. tostring(index), 2)
    end
    if kind ~= 'cuda' then error("torch.device: only 'cuda' takes an index, got '" .. kind .. "'", 2) end
    return 'cuda:' .. index
  end
  if kind == 'cpu' or kind == 'cuda' or kind:match('^cuda:%d+$') then return kind end
  error("torch.device: unknown device '" .. kind .. "' (expected 'cpu', 'cuda' or 'cuda:N')", 2)
end

-- Torch7's names (cutorch): torch.CudaTensor(...) is a float32 tensor made as
-- torch.FloatTensor(...) makes it, on the GPU; torch.CudaDoubleTensor(...) and the
-- others likewise for their dtypes.
for _, stem in ipairs{'Float', 'Double', 'Half', 'BFloat16', 'Char', 'Byte', 'Short', 'Int', 'Long', 'Bool'} do
  local make = torch[stem .. 'Tensor']
  local name = stem == 'Float' and 'CudaTensor' or 'Cuda' .. stem .. 'Tensor'
  torch[name] = setmetatable({}, {
    __call = function(_, ...)
      cuda._check('torch.' .. name, 'cuda', 2)
      return make(...):cuda()
    end,
    __tostring = function() return 'torch.' .. name end,
  })
end

-- require 'cutorch': cutorch's functions, with its 1-based device numbers
package.preload.cutorch = function()
  local cutorch = {}
  function cutorch.synchronize() return cuda.synchronize() end
  function cutorch.getDeviceCount() return cuda.device_count() end
  function cutorch.getDevice() return cuda.current_device() + 1 end
  function cutorch.setDevice(d) return cuda.set_device(d - 1) end
  function cutorch.getMemoryUsage(d) return cuda.mem_get_info(d and d - 1 or nil) end
  function cutorch.getDeviceProperties(d)
    local major, minor = cuda.get_device_capability(d and d - 1 or nil)
    local free, total = cuda.mem_get_info(d and d - 1 or nil)
    return {name = cuda.get_device_name(d and d - 1 or nil), major = major, minor = minor, freeGlobalMem = free,
            totalGlobalMem = total}
  end
  return cutorch
end

-- x:get_device(): the GPU's ordinal, -1 on the CPU (as PyTorch)
methods.get_device = function(x)
  if not torch.is_tensor(x) then error('get_device: expected a tensor, got ' .. type(x), 2) end
  return x.is_cuda and tonumber(x.device:match('%d+$')) or -1
end

return cuda
