-- Documentation of tensor creation, geometry, conversion and copying (the C
-- functions of src/vm/lt_tensor.c). Format, read by lib/torch/help.lua: entries
-- separated by blank lines; unindented lines are signatures (each torch.f(...)
-- and x:f(...) on them gets the entry), indented lines the description.
return [=[
torch.tensor(data, {dtype=, requires_grad=false})
  A new tensor holding a copy of data: a number, a boolean or a nested table (of
  numbers or tensors). dtype is inferred as PyTorch does: all Lua integers give
  int64, any float gives the default float dtype, booleans give bool.

torch.Tensor(sizes...), torch.Tensor(table), torch.Tensor(x)
  Torch7's constructor, in the default dtype: zeros of the given sizes (no sizes:
  an empty tensor), a copy of a nested table, or a view of x (converted when x's
  dtype differs). torch.FloatTensor(...) and the other typed constructors work
  the same way.

torch.FloatTensor(...), torch.DoubleTensor(...), torch.HalfTensor(...), torch.BFloat16Tensor(...)
torch.CharTensor(...), torch.ByteTensor(...), torch.ShortTensor(...), torch.IntTensor(...)
torch.LongTensor(...), torch.BoolTensor(...)
  torch.Tensor(...) with a fixed dtype: float32, float64, float16, bfloat16, int8,
  uint8, int16, int32, int64, bool. torch.LongTensor{1, 2} is int64 [1, 2].

x:new(sizes...), x:new(table), x:new(y)
  torch.Tensor(...) in x's dtype (Torch7).

torch.empty(sizes..., {dtype=, requires_grad=})
  A new tensor of the given sizes (numbers, a table or a torch.Size); values are
  not set.

torch.zeros(sizes..., {dtype=, requires_grad=})
  A new tensor of the given sizes filled with 0; default float dtype.

torch.ones(sizes..., {dtype=, requires_grad=})
  A new tensor of the given sizes filled with 1; default float dtype.

torch.full(size, value, {dtype=, requires_grad=})
  A new tensor of size (a number or a table) filled with value; the dtype follows
  value (integer: int64, boolean: bool, else the default float). An integer value
  is written exactly, beyond 2^53 too.

torch.empty_like(x, {dtype=, device=, requires_grad=})
  torch.empty with x's shape, dtype and device.

torch.zeros_like(x, {dtype=, device=, requires_grad=})
  torch.zeros with x's shape, dtype and device.

torch.ones_like(x, {dtype=, device=, requires_grad=})
  torch.ones with x's shape, dtype and device.

torch.full_like(x, value, {dtype=, device=, requires_grad=})
  torch.full with x's shape, dtype and device; value a number, a boolean or a
  tensor of one element.

torch.eye(n, m, {dtype=})
  The n x m (m defaults to n) matrix with ones on the diagonal.

torch.arange(stop), torch.arange(start, stop, step, {dtype=})
  start, start + step, ... up to stop excluded (start 0, step 1), as PyTorch: int64
  when every argument is an integer, else the default float dtype.

torch.range(start, stop, step, {dtype=})
  start, start + step, ... up to stop included (step 1), in the default float
  dtype, as Torch7: torch.range(1, 5) is 1..5.

torch.linspace(start, stop, steps, {dtype=})
  steps (default 100) evenly spaced values from start to stop, both included.

torch.logspace(start, stop, steps, base, {dtype=, base=})
  base^v for steps (default 100) values v evenly spaced from start to stop; base 10.

x:new_empty(sizes..., {dtype=})
  An uninitialized tensor of the given sizes, in x's dtype (unless dtype is given)
  on x's device.

x:new_zeros(sizes..., {dtype=})
  Zeros of the given sizes, in x's dtype (unless dtype is given) on x's device.

x:new_ones(sizes..., {dtype=})
  Ones of the given sizes, in x's dtype (unless dtype is given) on x's device.

x:new_full(size, value, {dtype=})
  A tensor of size filled with value, in x's dtype (unless dtype is given) on x's
  device.

torch.set_default_dtype(name), torch.get_default_dtype()
  The dtype of new float tensors: 'float32' (the start) or 'float64', ...;
  get_default_dtype returns its name.

torch.setdefaulttensortype(name), torch.getdefaulttensortype()
  Torch7's form of set/get_default_dtype, with type names: 'torch.DoubleTensor'.

torch.is_tensor(v), torch.isTensor(v)
  true when v is a tensor.

x:size(), x:size(dim)
  The shape as a torch.Size (an array of numbers: #s dims; prints as PyTorch's
  torch.Size([2, 3]) and == compares it with another torch.Size or a plain array),
  or the size of one dim (1-based, -1 the last). x.shape is x:size(). In the Torch7
  dialect x:size() is a LongStorage, as Torch7's.

torch.Size(sizes)
  A torch.Size of a table of integers >= 0 (or a LongStorage), as x:size() gives:
  torch.Size({2, 3}) prints torch.Size([2, 3]); s:numel(), s:totable(), #s.

x:stride(), x:stride(dim)
  The strides (in elements) as a torch.Size, or the stride of one dim.

x:dim(), x:nDimension()
  The number of dims (0 for a 0-dim tensor). x.ndim is the same.

x:numel(), x:nElement(), torch.numel(x)
  The number of elements.

x:storageOffset()
  The 1-based position of x's first element in its storage.

x:is_contiguous(), x:isContiguous()
  true when x's elements lie in row-major order without gaps.

x:element_size()
  Bytes per element of x's dtype.

x:isSetTo(y)
  true when x and y view the same storage with the same offset, sizes and strides.

x:data_ptr()
  The address of x's first element, as an integer.

x:storage()
  x's storage (Torch7's): the whole of the memory x views, shared, so writes through
  it show in x; #s elements, s[i] the i-th (1-based). Two tensors share memory when
  their storages are ==. See torch.FloatStorage.

x:contiguous()
  x itself when contiguous, else a contiguous copy (recorded for autograd).

torch.clone(x), x:clone()
  A contiguous copy of x with its own storage (differentiable).

x:copy_(src), x:copy(src)
  Copies src's values into x (broadcast, converted to x's dtype); returns x.
  src may be on another device. As in Torch7, a contiguous src with x's element
  count may have another shape. Differentiable: src's gradient is x's, summed
  back to src's shape; x's old values get none.

x:type(), x:type(name)
  x's type name ('torch.FloatTensor', 'torch.cuda.FloatTensor' on a GPU); with a
  name ('torch.DoubleTensor' or 'float64'), x converted to that dtype (x itself
  when it has it); 'torch.cuda.DoubleTensor' or cutorch's 'torch.CudaTensor'
  also move it to the GPU.

x:to(dtype), x:to('cpu'), x:to('cuda'), x:to('cuda:0'), x:to({dtype=, device=, copy=}), x:to(y)
  x converted to a dtype name ('float64'), to y's dtype and device, or moved to a
  device ('cpu', 'cuda', 'cuda:N'); x itself when nothing changes, unless an
  options table last says copy=true (x:to('float64', {copy=true})): then always a
  new tensor. Differentiable: the gradient goes back to x's dtype and device.

x:cuda(), x:cuda(i)
  x on the GPU ('cuda', or 'cuda:i' counting from 0); x itself when it is there.
  Raises when torch.cuda.is_available() is false.

x:cpu()
  x on the CPU; x itself when it is there.

x:get_device()
  The ordinal of x's GPU (0 for 'cuda:0'), or -1 for a CPU tensor.

x:type_as(y), x:typeAs(y)
  x converted to y's dtype.

x:float(), x:double(), x:half(), x:bfloat16(), x:char(), x:byte(), x:short(), x:int(), x:long(), x:bool()
  x converted to float32, float64, float16, bfloat16, int8, uint8, int16, int32,
  int64 or bool (x itself when it already has that dtype).

x:item()
  The value of a one-element tensor as a Lua number (integer for integer dtypes)
  or boolean.

x:fill_(value), x:fill(value)
  Sets every element to value (a number, exact for any integer, a boolean, or a
  tensor of one element); returns x. Differentiable in a tensor value: its
  gradient is the sum of x's.

x:zero_(), x:zero()
  Sets every element to 0; returns x.

x:set_(y)
  x becomes a view of y's storage with y's geometry and dtype, keeping its own
  identity and autograd fields. Refused in grad mode for tensors that require
  grad. x:set(...) is Torch7's form, which also takes a storage.

x:resize_(sizes...), x:resize(sizes...)
  x takes the sizes with contiguous strides from its offset, on a larger copy of
  its storage when it does not fit; the values are reread in the new layout.
  Refused for tensors that require grad.

x:resizeAs_(y), x:resizeAs(y)
  x:resize_(y:size()).

torch.memory_stats()
  The CPU allocator's counters: {allocated=, peak=, cached=, num_allocs=,
  cache_hits=} (bytes and counts). torch.memory_snapshot() lists the storages
  that hold them, and where they were allocated.

torch.reset_peak_memory_stats()
  Sets the peak counter of torch.memory_stats() to the bytes allocated now.

torch.empty_cache()
  Returns the allocator's cached free blocks to the system.

torch.set_num_threads(n), torch.setnumthreads(n)
  Threads used by large ops: the engine's pool, which also splits large matrix products
  (OpenBLAS itself always runs on one thread). Ops too small to split stay on one.

torch.get_num_threads(), torch.getnumthreads()
  The thread count set by set_num_threads (at start, OMP_NUM_THREADS or the cores).
]=]
