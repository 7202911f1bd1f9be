-- Documentation of views and shape ops (src/vm/lt_tensor.c, lt_shape.c); the
-- format is described in lib/torch/doc/tensor.lua. Views share x's storage.
return [=[
torch.view(x, sizes...), x:view(sizes...), x:view(y), x:view_as(y), torch.view_as(x, y)
  A view of x with the given sizes (one may be -1: inferred) or y's sizes; x's
  layout must allow it (a contiguous x always does), else an error: use reshape.

torch.reshape(x, sizes...), x:reshape(sizes...), x:reshape_as(y), torch.reshape_as(x, y)
  x with the given sizes (one may be -1), or y's: a view when the layout allows, else a copy.

torch.transpose(x, dim1, dim2), x:transpose(dim1, dim2), torch.swapaxes(...), x:swapaxes(...), torch.swapdims(...), x:swapdims(...)
  A view of x with the two dims swapped (1-based, negative from the end).

torch.t(x), x:t()
  The transpose of a matrix (a view); a 0-D or 1-D x comes back as it is.

torch.permute(x, dims...), x:permute(dims...)
  A view of x with its dims reordered: x:permute(3, 1, 2) puts the last dim first.
  dims may also be one table.

torch.narrow(x, dim, start, length), x:narrow(dim, start, length)
  A view of length entries of x along dim, from start (1-based; negative counts
  from the end). x:narrow(1, 2, 3) is rows 2..4.

torch.select(x, dim, index), x:select(dim, index)
  A view of the slice at index (1-based) along dim, without that dim.
  x[i] is x:select(1, i) (a Lua number for a 1-D x).

torch.squeeze(x), torch.squeeze(x, dim), x:squeeze(), x:squeeze(dim)
  A view of x without its size-1 dims, or without dim when its size is 1.

torch.unsqueeze(x, dim), x:unsqueeze(dim)
  A view of x with a size-1 dim inserted at dim (1..ndim+1; -1 appends).

x:expand(sizes...), x:expand(y), x:expand_as(y), x:expandAs(y), torch.expand(x, sizes...), torch.expand_as(x, y), torch.expandAs(x, y)
  A view of x broadcast to the given sizes (-1 keeps a size), or to y's: size-1
  dims repeat with stride 0, new leading dims are added. No copy.

x:unfold(dim, size, step), torch.unfold(x, dim, size, step)
  A view of every slice of length size along dim, step apart, as a new last dim:
  torch.arange(5):unfold(1, 2, 1) is 4x2.

torch.diagonal(x, offset, dim1, dim2), x:diagonal(offset, dim1, dim2), x:diagonal({offset=, dim1=, dim2=})
  A view of the diagonal of x in the plane dim1, dim2 (default 1, 2) as its last
  dim; offset > 0 is above the main diagonal, < 0 below (default 0).

torch.as_strided(x, size, stride, offset), x:as_strided(size, stride, offset)
  A view of x's storage with the given size and stride tables; offset is the
  1-based storage position of the first element (default x's). Unchecked
  overlaps are allowed: handle with care.

torch.flatten(x, start_dim, end_dim), x:flatten(start_dim, end_dim)
  x with dims start_dim..end_dim (default 1..-1) merged into one; a view when possible.

torch.unflatten(x, dim, sizes), x:unflatten(dim, sizes), x:unflatten(dim, s1, s2, ...)
  x with dim split into the given sizes (one may be -1); the inverse of flatten.

torch.movedim(x, src, dst), torch.moveaxis(x, src, dst), x:movedim(src, dst), x:moveaxis(src, dst)
  A view of x with dim src moved to position dst (the others keep their order);
  src and dst may be tables of dims of equal length.

torch.split(x, size, dim), x:split(size, dim), x:split({sizes}, dim)
  A Lua array of views along dim (default 1): pieces of size entries (the last may
  be shorter), or of the listed sizes.

torch.chunk(x, n, dim), x:chunk(n, dim)
  x split into at most n views of equal size (the last may be smaller) along dim
  (default 1), as a Lua array.

torch.unbind(x, dim), x:unbind(dim)
  A Lua array of the slices along dim (default 1), each a view without that dim.

torch.cat({tensors}, dim), torch.concat(...), torch.concatenate(...), torch.cat(a, b, ..., dim)
  The tensors joined along dim (default 1); the other sizes must match. dim may be
  given as {dim = d}.

torch.stack({tensors}, dim), torch.stack(a, b, ..., dim)
  The tensors, of one shape, joined along a new dim at dim (default 1).

x:repeat(sizes...), x:repeatTensor(sizes...), torch.repeatTensor(x, sizes...), torch.repeat(x, sizes...)
  x tiled: each dim repeated that many times (more sizes than dims add leading
  dims). A copy. 'repeat' is a Lua keyword: write x['repeat'](x, 2, 3) or repeatTensor.

torch.flip(x, dims...), x:flip(dims...), x:flip({dims})
  A copy of x with the order of the entries reversed along each given dim.

torch.fliplr(x), x:fliplr()
  x:flip(2) for x with at least 2 dims.

torch.flipud(x), x:flipud()
  x:flip(1).

torch.roll(x, shifts, dims), x:roll(shifts, dims)
  x with entries shifted cyclically by shifts along dims (numbers or tables of
  the same length); without dims, over the flattened x, keeping its shape.

torch.tril(x, k), x:tril(k), x:tril_(k)
  The lower triangle of the last two dims: entries above diagonal k (default 0;
  k > 0 above the main one) set to 0.

torch.triu(x, k), x:triu(k), x:triu_(k)
  The upper triangle of the last two dims: entries below diagonal k (default 0)
  set to 0.
]=]
