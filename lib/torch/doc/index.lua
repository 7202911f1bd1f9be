-- Documentation of indexing with tensors (src/vm/lt_index.c); the format is
-- described in lib/torch/doc/tensor.lua. Every index is 1-based; an index
-- argument is an int64 (or int32) tensor or a Lua table of integers.
-- x[i], x[{i, {a, b}}], x[mask] and x[idx] index with Lua's brackets.
return [=[
torch.index_select(x, dim, index), torch.index(x, dim, index), x:index_select(dim, index), x:index(dim, index)
  The entries of x at the 1-based positions index (1-D) along dim, copied.

torch.index_add(x, dim, index, source, {alpha=1}), x:index_add(dim, index, source), x:index_add_(dim, index, source), x:indexAdd(dim, index, source)
  x with alpha * source[i] added to slice index[i] along dim (repeated indices
  add up). indexAdd is Torch7's in-place form.

torch.index_copy(x, dim, index, source), x:index_copy(dim, index, source), x:index_copy_(dim, index, source), x:indexCopy(dim, index, source)
  x with slice index[i] along dim replaced by source[i]. indexCopy is in place.

torch.index_fill(x, dim, index, value), x:index_fill(dim, index, value), x:index_fill_(dim, index, value), x:indexFill(dim, index, value)
  x with the slices at index along dim set to value. indexFill is in place.

torch.gather(x, dim, index), x:gather(dim, index)
  y[i][j] = x[index[i][j]][j] for dim 1 (and so on): values picked along dim at
  1-based positions; y has index's shape.

torch.scatter(x, dim, index, src, {reduce=}), x:scatter(dim, index, src), x:scatter_(dim, index, src)
  The inverse of gather: y[index[i][j]][j] = src[i][j] for dim 1; src may be a
  number or a 0-dim tensor, written at every index. {reduce='add'} adds instead.
  scatter_ writes into x (Torch7's scatter).

torch.scatter_add(x, dim, index, src), x:scatter_add(dim, index, src), x:scatter_add_(dim, index, src)
  scatter that adds src into x, summing over repeated indices.

torch.masked_fill(x, mask, value), x:masked_fill(mask, value), x:masked_fill_(mask, value), x:maskedFill(mask, value)
  x with value (a number or a 0-dim tensor) where the bool mask (broadcast) is
  true. maskedFill is Torch7's in-place form.

torch.masked_select(x, mask), torch.maskedSelect(x, mask), x:masked_select(mask), x:maskedSelect(mask)
  The elements of x where mask (broadcast) is true, as a 1-D tensor; x[mask].

torch.masked_scatter(x, mask, src), x:masked_scatter(mask, src), x:masked_scatter_(mask, src), x:maskedCopy(mask, src)
  x with the positions where mask is true filled, in order, from src's elements.
  maskedCopy is Torch7's in-place form.

torch.nonzero(x, {as_tuple=false}), x:nonzero()
  The 1-based indices of the nonzero elements, one row each (N x ndim, int64);
  as_tuple gives a table of ndim 1-D index tensors instead.

torch.where(cond, a, b), torch.where(cond), a:where(cond, b)
  a where cond is true, b elsewhere (broadcast; a and b may be numbers). With
  cond alone: torch.nonzero(cond, {as_tuple=true}).
]=]
