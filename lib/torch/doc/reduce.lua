-- Documentation of reductions, scans, softmax, sorting and comparisons of
-- whole tensors (src/vm/lt_reduce.c); the format is described in
-- lib/torch/doc/tensor.lua. dim is 1-based (negative from the end) and may
-- be a table of dims where noted; without dim the result is a 0-dim tensor.
-- Options may also come last as a table: x:sum({dim=2, keepdim=true}).
return [=[
torch.sum(x, dim, keepdim), x:sum(), x:sum(dim, keepdim), x:sum({dim=, keepdim=, dtype=})
  The sum of all elements (0-dim), or along dim (a number or a table of dims);
  keepdim keeps the reduced dims with size 1. Integer and bool sums are int64.

torch.nansum(x, dim, keepdim), x:nansum(), x:nansum(dim, keepdim), x:nansum({dim=, keepdim=, dtype=})
  sum, with NaN counted as zero; the gradient at a NaN is zero.

torch.mean(x, dim, keepdim), x:mean(), x:mean(dim, keepdim)
  The mean of all elements, or along dim (a number or a table of dims).

torch.prod(x, dim, keepdim), x:prod(), x:prod(dim, keepdim)
  The product of all elements, or along dim.

torch.amax(x, dim, keepdim), x:amax(dim, keepdim)
  The largest value over dim (a number or a table; all dims without it), values only.

torch.amin(x, dim, keepdim), x:amin(dim, keepdim)
  The smallest value over dim (a number or a table; all dims without it), values only.

torch.max(x), torch.max(x, dim, keepdim), torch.max(a, b), x:max(), x:max(dim, keepdim), a:max(b)
  The largest element (0-dim); with dim, the values and their 1-based indices
  along dim; with a tensor b, the elementwise maximum (torch.maximum).

torch.min(x), torch.min(x, dim, keepdim), torch.min(a, b), x:min(), x:min(dim, keepdim), a:min(b)
  The smallest element (0-dim); with dim, the values and their 1-based indices
  along dim; with a tensor b, the elementwise minimum (torch.minimum).

torch.argmax(x, dim, keepdim), x:argmax(), x:argmax(dim, keepdim)
  The 1-based index of the largest value: in the flattened x, or along dim (int64).

torch.argmin(x, dim, keepdim), x:argmin(), x:argmin(dim, keepdim)
  The 1-based index of the smallest value: in the flattened x, or along dim (int64).

torch.all(x, dim, keepdim), x:all(), x:all(dim, keepdim)
  true where every element (along dim) is nonzero; a bool tensor.

torch.any(x, dim, keepdim), x:any(), x:any(dim, keepdim)
  true where some element (along dim) is nonzero; a bool tensor.

torch.count_nonzero(x, dim), x:count_nonzero(dim)
  The number of nonzero elements, in all of x or along dim (int64).

torch.logsumexp(x, dim, keepdim), x:logsumexp(dim, keepdim)
  log(sum(exp(x))) over dim, computed without overflow.

torch.var(x, dim, unbiased, keepdim), x:var(), x:var(dim, unbiased, keepdim), x:var({dim=, correction=, keepdim=})
  The variance over all elements or along dim; unbiased (the default) divides by
  N - 1, unbiased=false by N; correction=c divides by N - c.

torch.std(x, dim, unbiased, keepdim), x:std(), x:std(dim, unbiased, keepdim), x:std({dim=, correction=, keepdim=})
  The standard deviation: sqrt of var with the same arguments.

torch.norm(x, p, dim, keepdim), x:norm(), x:norm(p, dim, keepdim), x:norm({p=, dim=, keepdim=})
  The p-norm (default 2) of all elements, or along dim; p may be a number, 'fro',
  'inf' or '-inf'.

torch.cumsum(x, dim, {dtype=}), x:cumsum(dim), x:cumsum_(dim)
  The running sums along dim: y[i] = x[1] + ... + x[i].

torch.cumprod(x, dim, {dtype=}), x:cumprod(dim), x:cumprod_(dim)
  The running products along dim.

torch.softmax(x, dim, {dtype=}), x:softmax(dim)
  exp(x) / sum(exp(x)) along dim, computed stably; each slice sums to 1.

torch.log_softmax(x, dim, {dtype=}), x:log_softmax(dim)
  log(softmax(x)) along dim, computed stably.

torch.sort(x, dim, descending), x:sort(), x:sort(dim, descending), x:sort({dim=, descending=})
  The values sorted along dim (default the last), ascending unless descending,
  and their 1-based indices in x.

torch.argsort(x, dim, descending), x:argsort(dim, descending)
  The 1-based indices that sort x along dim (default the last).

torch.topk(x, k, dim, largest), x:topk(k), x:topk(k, dim, largest), x:topk(k, {dim=, largest=})
  The k largest values along dim (default the last; the smallest when largest is
  false), sorted, and their 1-based indices.

torch.kthvalue(x, k, dim, keepdim), x:kthvalue(k, dim, keepdim)
  The k-th smallest value along dim (default the last) and its 1-based index.

torch.median(x), torch.median(x, dim, keepdim), x:median(), x:median(dim, keepdim)
  The median (the lower of the two middle values for an even count): of all of x
  (0-dim), or along dim as values and 1-based indices.

torch.mode(x, dim, keepdim), x:mode(), x:mode(dim, keepdim)
  The most frequent value along dim (default the last; the smallest on ties) and
  a 1-based index of it.

torch.equal(a, b), a:equal(b)
  true when a and b have the same shape and the same values (a Lua boolean).

torch.allclose(a, b, rtol, atol, equal_nan), a:allclose(b, {rtol=1e-5, atol=1e-8, equal_nan=false})
  true when |a - b| <= atol + rtol * |b| everywhere (broadcast); a Lua boolean.

torch.isclose(a, b, rtol, atol, equal_nan), a:isclose(b, {rtol=, atol=, equal_nan=})
  The elementwise test of allclose, as a bool tensor.
]=]
