-- Documentation of devices and the CUDA backend (lib/torch/device.lua and
-- src/cuda). Format as lib/torch/doc/tensor.lua.
return [=[
torch.cuda.is_available()
  Whether a GPU answered: the CUDA backend (build/torch/cuda.so, built whenever
  nvcc was found) loaded and found at least one device. When false,
  torch.cuda.unavailable_reason() says why, and every GPU operation raises.

torch.cuda.unavailable_reason()
  Why torch.cuda.is_available() is false (no backend built, the CUDA libraries
  not found, no device); nil when it is true.

torch.cuda.device_count()
  The number of GPUs (0 without CUDA). Devices count from 0: 'cuda:0' is the
  first, as nvidia-smi and CUDA_VISIBLE_DEVICES number them.

torch.cuda.current_device(), torch.cuda.set_device(i)
  The ordinal of this thread's current GPU, and setting it.

torch.cuda.synchronize(device)
  Waits until every kernel queued on the device (default: the current one) has
  finished. GPU work runs asynchronously; copies to the CPU and item() wait
  for the work they need.

torch.cuda.get_device_name(device), torch.cuda.get_device_capability(device)
  The GPU's name ('NVIDIA H100 80GB HBM3'), and its compute capability as two
  numbers (major, minor: 9, 0 for Hopper).

torch.cuda.mem_get_info(device)
  Free and total bytes of the GPU's memory, as the driver sees them.

torch.cuda.manual_seed(n), torch.cuda.manual_seed_all(n)
  Seed the current GPU's random generator, or every GPU's. Each GPU has its own
  (Philox, the CPU's algorithm); torch.manual_seed(n) seeds the CPU's and all
  of them, so after the same seed the same draws give the same numbers on
  either device:
    torch.manual_seed(7); a = torch.randn(3)
    torch.manual_seed(7); b = torch.randn(3, {device = 'cuda'})   -- a's values

torch.cuda.seed(), torch.cuda.seed_all(), torch.cuda.initial_seed()
  A fresh non-deterministic seed for the current GPU's generator (seed_all: for
  every GPU's), returned; and the seed it last took (67280421310721 at start).

torch.cuda.get_rng_state(device), torch.cuda.set_rng_state(state, device)
  The state of a GPU's generator as a 16-byte uint8 tensor (seed, offset), and
  putting one back: the draws after it repeat.

torch.cuda.memory_allocated(device), torch.cuda.max_memory_allocated(device)
  Bytes held by live tensors on the GPU, and the most held since the last
  torch.cuda.reset_peak_memory_stats(). 0 without CUDA.

torch.cuda.memory_reserved(device), torch.cuda.max_memory_reserved(device)
  Bytes the caching allocator holds from the driver: what tensors use plus
  freed blocks kept for reuse. torch.cuda.empty_cache() returns the unused ones.

torch.cuda.memory_stats(device)
  The caching allocator's counters: {allocated=, peak=, reserved=,
  peak_reserved=, num_allocs=, num_cache_hits=, num_device_allocs=}.

torch.cuda.reset_peak_memory_stats(device)
  Starts the peaks of max_memory_allocated and max_memory_reserved again from
  the present values.

torch.cuda.empty_cache()
  Returns the freed blocks the caching allocator keeps to the driver.

torch.CudaTensor(...), torch.CudaDoubleTensor(...), torch.CudaHalfTensor(...), torch.CudaBFloat16Tensor(...)
torch.CudaCharTensor(...), torch.CudaByteTensor(...), torch.CudaShortTensor(...), torch.CudaIntTensor(...)
torch.CudaLongTensor(...), torch.CudaBoolTensor(...)
  Torch7's (cutorch's) typed constructors: torch.FloatTensor(...) and the others
  of the same dtype, on the GPU. require 'cutorch' gives cutorch's functions
  (synchronize, getDeviceCount, getDevice and setDevice counting from 1,
  getMemoryUsage, getDeviceProperties).

torch.cuda.Stream(device), torch.cuda.current_stream(device), torch.cuda.default_stream(device)
  A new stream of the device (default: the current one), which does not wait on
  the default stream; the stream kernels run on now; the default stream. A
  stream has s:synchronize(), s:query() (whether its work has finished) and
  s:wait_event(e).

torch.cuda.stream(s, fn, ...)
  Runs fn(...) with s as its device's current stream, so the kernels fn launches
  queue on s; the previous stream comes back afterwards, also when fn raises.
  Returns what fn returns.

torch.cuda.Event({enable_timing=false})
  A marker in a stream: e:record(stream) (default: the current stream),
  e:synchronize() waits for it, e:query() says whether it was reached, and
  start:elapsed_time(stop) gives the milliseconds between two events recorded
  with enable_timing.

torch.device(name), torch.device('cuda', i)
  A device's name, checked: 'cpu', 'cuda' (the current GPU) or 'cuda:i'. Tensors'
  x.device gives the same form ('cuda:0'); to(), cuda() and the device= option of
  the creation functions take it.
]=]
