-- Documentation of the matrix products (src/vm/lt_linalg.c, OpenBLAS); the
-- format is described in lib/torch/doc/tensor.lua. Lua has no @ operator:
-- a * b is elementwise, a:mm(b) or a:matmul(b) is the matrix product.
return [=[
torch.mm(a, b), a:mm(b)
  The matrix product of an n x m matrix a and an m x p matrix b: n x p.

torch.mv(a, v), a:mv(v)
  The product of an n x m matrix and a vector of m entries: n entries.

torch.dot(a, b), a:dot(b)
  The inner product of two 1-D tensors of equal size, as a 0-dim tensor.

torch.bmm(a, b), a:bmm(b)
  Batched matrix product: (B, n, m) times (B, m, p) gives (B, n, p).

torch.matmul(a, b), a:matmul(b)
  The product by the dims, as PyTorch: dot for 1-D and 1-D, mv, mm, and for more
  dims a batched product whose batch dims broadcast (1-D operands gain and lose
  a dim).

torch.outer(a, b), torch.ger(a, b), a:outer(b), a:ger(b)
  The outer product of two 1-D tensors: n x m with entries a[i] * b[j].

torch.addmm(M, a, b, {beta=1, alpha=1}), M:addmm(a, b), M:addmm_(a, b)
  beta * M + alpha * (a mm b). Torch7's number forms work for every add*
  product: M:addmm(alpha, a, b), M:addmm(beta, alpha, a, b),
  torch.addmm(beta, M, alpha, a, b).

torch.addmv(v, M, w, {beta=1, alpha=1}), v:addmv(M, w), v:addmv_(M, w)
  beta * v + alpha * (M mv w).

torch.addr(M, a, b, {beta=1, alpha=1}), M:addr(a, b), M:addr_(a, b)
  beta * M + alpha * outer(a, b).

torch.baddbmm(M, a, b, {beta=1, alpha=1}), M:baddbmm(a, b), M:baddbmm_(a, b)
  beta * M + alpha * bmm(a, b), batch by batch.

torch.addbmm(M, a, b, {beta=1, alpha=1}), M:addbmm(a, b), M:addbmm_(a, b)
  beta * M + alpha * (the sum over the batch of bmm(a, b)): an n x p result.
]=]
