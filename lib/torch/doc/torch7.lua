-- Documentation of Torch7's storages, the dialect switch and Torch7's names
-- (src/vm/lt_storage.c, lib/torch/storage.lua, lib/torch/torch7.lua); the
-- format is described in lib/torch/doc/tensor.lua.
return [=[
torch.FloatStorage(n), torch.FloatStorage(table), torch.FloatStorage(s, offset, size)
torch.DoubleStorage(...), torch.HalfStorage(...), torch.BFloat16Storage(...), torch.ByteStorage(...)
torch.CharStorage(...), torch.ShortStorage(...), torch.IntStorage(...), torch.LongStorage(...)
torch.BoolStorage(...), torch.Storage(...)
  Torch7's storages: n zeros, a copy of a table of values, or a window of size
  elements (to the end by default) from the 1-based offset of storage s, sharing its
  memory. s[i] reads and writes element i (1-based), #s and s:size() count them;
  s:fill(v), s:copy(src), s:resize(n), s:totable(), s:elementSize(), s:type(),
  s:string() (Char and Byte storages). torch.Storage is the default dtype's. A
  LongStorage is accepted wherever sizes are: torch.zeros(torch.LongStorage{2, 3}).

torch.isStorage(obj), torch.is_storage(obj)
  True when obj is a storage.

x:elementSize()
  The bytes of one element of x (Torch7's name of x:element_size()).

x:set(storage, offset, sizes, strides), x:set(y)
  Torch7's set: x becomes a view of storage from its 1-based offset, with the
  sizes and strides given (tables, torch.Size or LongStorage; contiguous when no
  strides), checked to lie inside the storage; x:set(y) views y's memory as y
  does. torch.FloatTensor(storage, offset, sizes, strides)
  makes such a view directly.

x:isSameSizeAs(y)
  True when x and y have the same sizes.

x:viewAs(y)
  x viewed with y's sizes (x:view(y:size())).

x:uniform([gen,] a, b), x:normal([gen,] mean, std), x:exponential([gen,] lambda)
x:cauchy([gen,] median, sigma), x:logNormal([gen,] mean, std), x:log_normal([gen,] mean, std)
x:geometric([gen,] p)
  Torch7's samplers: x filled in place from the distribution and returned (the
  same as x:uniform_(a, b) and the others); defaults a = 0, b = 1, mean = 0,
  std = 1 (logNormal: mean 1, std 2), lambda = 1, median = 0, sigma = 1. A
  generator may come first; the torch.* forms with numbers draw one Lua number:
  torch.uniform(a, b), torch.normal(mean, std), torch.exponential(lambda),
  torch.cauchy(median, sigma), torch.logNormal(mean, std), torch.geometric(p).

torch.getheaptracking()
  Whether torch.setheaptracking(true) was last called (it is by default).
  moontorch's collector always counts tensor memory, so the flag changes nothing.
]=]
