-- torch.linalg and Torch7's LAPACK functions (gesv, potrf, svd, ...), built on
-- the LAPACK kernels torch._lapack_* (src/tensor/mt_lapack.c). Each
-- differentiable decomposition is one autograd Function whose forward calls a
-- kernel and whose backward, beside it, is written with differentiable ops,
-- so create_graph gives higher derivatives; the rest is composed from them.
-- A tensor on a GPU is computed on the CPU and its results moved back.
local torch = require 'torch.core'
local Function = torch.autograd.Function
local methods = torch._methods

local linalg = {cross = torch._linalg_cross}    -- lib/torch/ops7.lua
torch.linalg = linalg

-- ---- arguments and errors ----

local fail = torch._lapack_error            -- raises at the user's line

local function check_tensor(op, x, what)
  if not torch.is_tensor(x) then fail(string.format('%s: %s must be a tensor, got %s', op, what, type(x))) end
  return x
end

local function shape_str(x) return table.concat(x:size(), 'x') end

-- x is a (batch of) matrix: at least 2 dims, float32 or float64
local function check_matrix(op, x, what)
  check_tensor(op, x, what)
  if x:dim() < 2 then
    fail(string.format('%s: %s must have at least 2 dims (a matrix or a batch of them), got %s', op, what,
                       x:dim() == 0 and '0-dim' or shape_str(x)))
  end
  if x.dtype ~= 'float32' and x.dtype ~= 'float64' then
    fail(string.format('%s: %s must be a float32 or float64 tensor, got %s', op, what, x.dtype))
  end
  return x
end

local function check_square(op, x, what)
  check_matrix(op, x, what)
  if x:size(-1) ~= x:size(-2) then
    fail(string.format('%s: %s must be square (or a batch of square matrices), got %s', op, what, shape_str(x)))
  end
  return x
end

-- a trailing table of options (string keys), and the arguments before it
local function split_opts(...)
  local args = table.pack(...)
  local last = args[args.n]
  if args.n > 0 and type(last) == 'table' and not torch.is_tensor(last) and last[1] == nil then
    args[args.n], args.n = nil, args.n - 1
    return args, last
  end
  return args, {}
end

-- a LAPACK option: one of the letters of allowed ('UL'), default when nil
local function letter(op, what, v, default, allowed)
  v = v or default
  if type(v) ~= 'string' or #v ~= 1 or not allowed:find(v, 1, true) then
    fail(string.format("%s: %s must be '%s' or '%s', got %s", op, what, allowed:sub(1, 1), allowed:sub(2),
                       type(v) == 'string' and "'" .. v .. "'" or tostring(v)))
  end
  return v
end

-- no derivative for op: refuse an input that wants one rather than drop it
local function no_derivative(op, ...)
  if not torch.is_grad_enabled() then return end
  for _, x in ipairs({...}) do
    if torch.is_tensor(x) and x.requires_grad then
      fail(op .. ': has no derivative; call it on a detached tensor (x:detach())')
    end
  end
end

-- an input wants a gradient: grad mode is on and one of them requires grad
local function wants_grad(...)
  if not torch.is_grad_enabled() then return false end
  for _, x in ipairs({...}) do
    if torch.is_tensor(x) and x.requires_grad then return true end
  end
  return false
end

-- ---- the kernels, on the CPU whatever the inputs' device ----

local function device_of(...)
  for _, x in ipairs({...}) do
    if torch.is_tensor(x) then return x.device end
  end
  return 'cpu'
end

-- kernel(...) on CPU copies of its tensor arguments, its tensor results moved
-- back to their device: LAPACK runs on the host (as multinomial's draw does).
local function on_host(kernel)
  return function(...)
    local device = device_of(...)
    if device == 'cpu' then return kernel(...) end
    local args = table.pack(...)
    for i = 1, args.n do
      if torch.is_tensor(args[i]) then args[i] = args[i]:cpu() end
    end
    local outs = table.pack(kernel(table.unpack(args, 1, args.n)))
    for i = 1, outs.n do
      if torch.is_tensor(outs[i]) then outs[i] = outs[i]:to(device) end
    end
    return table.unpack(outs, 1, outs.n)
  end
end

local K = {}
for _, name in ipairs({'getrf', 'gesv', 'trtrs', 'gels', 'syevd', 'geev', 'gesdd', 'potrf', 'potrs', 'potri',
                       'pstrf', 'geqrf', 'orgqr', 'ormqr'}) do
  K[name] = on_host(torch['_lapack_' .. name])
end

-- ---- helpers on batches of matrices ----

local function mT(x) return x:transpose(-2, -1) end

local function eye_like(x, n)
  return torch.eye(n or x:size(-1), {dtype = x.dtype, device = x.device})
end

-- v (..., n) as diagonal matrices (..., n, n)
local function diag_embed(v)
  return v:unsqueeze(-1) * eye_like(v, v:size(-1))
end

-- the leading dims of x, all but its last `keep`
local function batch_dims(x, keep)
  local size = x:size()
  local dims = {}
  for i = 1, #size - keep do dims[i] = size[i] end
  return dims
end

local function concat(a, b)
  local r = {table.unpack(a)}
  for _, v in ipairs(b) do r[#r + 1] = v end
  return r
end

local function same_size(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- the batch dims of a and b broadcast (PyTorch's rule), as a table
local function broadcast_batch(op, a, b, a_keep, b_keep)
  local da, db = batch_dims(a, a_keep), batch_dims(b, b_keep)
  local n = math.max(#da, #db)
  local out = {}
  for i = 1, n do
    local x, y = da[#da - n + i] or 1, db[#db - n + i] or 1
    if x ~= y and x ~= 1 and y ~= 1 then
      fail(string.format('%s: the batch dims of %s and %s do not broadcast', op, shape_str(a), shape_str(b)))
    end
    out[i] = x == 1 and y or x
  end
  return out
end

local function expand_batch(x, batch, keep)
  local target = concat(batch, {table.unpack(x:size(), x:dim() - keep + 1)})
  return x:expand(target)
end

-- the dtype's machine epsilon (float32 or float64)
local function epsilon(dtype) return dtype == 'float32' and 1.1920929e-07 or 2.220446049250313e-16 end

-- G F^-1 for square F, from solves: (F^-T G^T)^T
local function right_solve(G, F) return mT(linalg.solve(mT(F), mT(G))) end

-- 1 / (w_j - w_i) off the diagonal, 0 on it: the eigen and singular value
-- derivatives' gaps
local function inverse_gaps(w)
  local gaps = w:unsqueeze(-2) - w:unsqueeze(-1)
  local I = eye_like(w, w:size(-1))
  return (1 - I) / (gaps + I)
end

-- ---- solve: a x = b ----

-- x, lu, piv of a x = b; the derivative of x: gb = a^-T g, ga = -gb x^T
local Solve = Function:extend('LinalgSolve')
function Solve.forward(ctx, a, b, op)
  local x, lu, piv = K.gesv(a, b, op)
  ctx:save_for_backward(a, x)
  ctx:mark_non_differentiable(lu)
  return x, lu, piv
end
function Solve.backward(ctx, g)
  local a, x = table.unpack(ctx.saved_tensors)
  local gb = linalg.solve(mT(a), g)
  return -gb:matmul(mT(x)), gb, nil
end

-- a (..., n, n) and b (..., n, k) or (..., n): b's batch broadcast with a's
local function solve_args(op, a, b)
  check_square(op, a, 'A')
  check_tensor(op, b, 'B')
  local vector = b:dim() == 1 or (b:dim() == a:dim() - 1 and b:size(-1) == a:size(-1))
  if vector then b = b:unsqueeze(-1) end
  check_matrix(op, b, 'B')
  if b:size(-2) ~= a:size(-1) then
    fail(string.format('%s: B %s must have as many rows as A %s', op, shape_str(vector and b:squeeze(-1) or b),
                       shape_str(a)))
  end
  if a.dtype ~= b.dtype then
    fail(string.format('%s: A is %s but B is %s: both must have one dtype', op, a.dtype, b.dtype))
  end
  local batch = broadcast_batch(op, a, b, 2, 2)
  return expand_batch(a, batch, 2), expand_batch(b, batch, 2), vector
end

local function solve_with(op, a, b)
  local A, B, vector = solve_args(op, a, b)
  local x, lu, piv = Solve.apply(A, B, op)
  if vector then x = x:squeeze(-1) end
  return x, lu, piv
end

-- torch.linalg.solve(A, B, {left=true}): X with A X = B (left=false: X A = B).
-- A (..., n, n); B (..., n, k) or a vector (..., n); batch dims broadcast. A
-- singular A is an error naming the zero pivot.
function linalg.solve(a, b, opts)
  local op = 'torch.linalg.solve'
  if opts and opts.left == false then
    check_square(op, a, 'A')
    return mT((solve_with(op, mT(a), mT(check_matrix(op, b, 'B')))))
  end
  return (solve_with(op, a, b))
end

-- torch.linalg.inv(A): the inverse of a square matrix (or of each of a batch);
-- a singular A is an error. Also torch.inverse(A) and A:inverse().
function linalg.inv(a)
  local op = 'torch.linalg.inv'
  check_square(op, a, 'A')
  return (Solve.apply(a, eye_like(a):expand(a:size()), op))
end

-- ---- triangular solves ----

local SolveTriangular = Function:extend('LinalgSolveTriangular')
function SolveTriangular.forward(ctx, a, b, upper, trans, unit, op)
  local x = K.trtrs(a, b, upper and 'U' or 'L', trans and 'T' or 'N', unit and 'U' or 'N', op)
  ctx:save_for_backward(a, x)
  ctx.upper, ctx.trans, ctx.unit, ctx.op = upper, trans, unit, op
  return x
end
-- op(a) x = b: gb = op(a)^-T g; ga = -gb x^T (transposed for trans), kept
-- to the triangle read (strictly, with a unit diagonal)
function SolveTriangular.backward(ctx, g)
  local a, x = table.unpack(ctx.saved_tensors)
  local gb = SolveTriangular.apply(a, g, ctx.upper, not ctx.trans, ctx.unit, ctx.op)
  local ga = -gb:matmul(mT(x))
  if ctx.trans then ga = mT(ga) end
  local offset = ctx.unit and 1 or 0
  ga = ctx.upper and ga:triu(offset) or ga:tril(-offset)
  return ga, gb, nil, nil, nil, nil
end

-- torch.linalg.solve_triangular(A, B, {upper=, left=true, unitriangular=false}):
-- X with A X = B (left=false: X A = B) for a triangular A, reading only its
-- upper (upper=true) or lower triangle; batch dims broadcast.
function linalg.solve_triangular(a, b, opts)
  local op = 'torch.linalg.solve_triangular'
  opts = opts or {}
  if opts.upper == nil then fail(op .. ': the upper= option is required ({upper=true} or {upper=false})') end
  check_square(op, a, 'A')
  check_matrix(op, b, 'B')
  if opts.left == false then
    local x = SolveTriangular.apply(a, mT(b), opts.upper, true, opts.unitriangular == true, op)
    return mT(x)
  end
  local A, B = solve_args(op, a, b)
  return (SolveTriangular.apply(A, B, opts.upper, false, opts.unitriangular == true, op))
end

-- ---- determinants ----

-- det(a) as sign and log |det| from the LU factorization, and whether a
-- matrix of the batch is singular or nearly: a pivot at most n eps times the
-- largest (a zero one included), where a solve with a loses all precision
local function lu_det(op, a)
  local lu, piv = K.getrf(a, op)
  local n = a:size(-1)
  local u = lu:diagonal(0, -2, -1)
  local swaps = piv:ne(torch.arange(1, n + 1, {device = piv.device})):to(a.dtype):sum(-1)
  local sign = (1 - swaps:remainder(2) * 2) * u:sign():prod(-1)
  local absu = u:abs()
  local singular = n > 0 and absu:amin(-1):le(absu:amax(-1) * (n * epsilon(a.dtype))):any():item()
  return sign, absu:log():sum(-1), singular
end

-- the derivative of log |det| is g a^-T (sign is constant); infinite at a
-- singular a, which is refused rather than turned into infs and nans
local Slogdet = Function:extend('LinalgSlogdet')
function Slogdet.forward(ctx, a, op)
  local sign, logabs = lu_det(op, a)
  ctx:save_for_backward(a)
  ctx:mark_non_differentiable(sign)
  ctx.singular, ctx.op = sign:eq(0):any():item(), op
  return sign, logabs
end
function Slogdet.backward(ctx, _, g)
  local a = table.unpack(ctx.saved_tensors)
  if ctx.singular then fail(ctx.op .. ': the derivative of log|det| is infinite at a singular matrix') end
  return g:unsqueeze(-1):unsqueeze(-1) * mT(linalg.inv(a)), nil
end

local Svd

-- the derivative of det is its cofactor matrix, g det a^-T from a solve; for
-- a (nearly) singular a, from the SVD a = u diag(s) vh: g det(u) det(vh) u
-- diag(c) vh, c_i the product of the singular values but s_i (as PyTorch)
local Det = Function:extend('LinalgDet')
function Det.forward(ctx, a, op)
  local sign, logabs, singular = lu_det(op, a)
  local det = sign * logabs:exp()
  ctx:save_for_backward(a, det)
  ctx.singular, ctx.op = singular, op
  return det
end
function Det.backward(ctx, g)
  local a, det = table.unpack(ctx.saved_tensors)
  if not ctx.singular then
    if torch.is_grad_enabled() then det = Det.apply(a, ctx.op) end          -- create_graph: with history
    return (g * det):unsqueeze(-1):unsqueeze(-1) * mT(linalg.inv(a)), nil
  end
  local u, s, vh = Svd.apply(a, false, ctx.op)
  local I = eye_like(s, s:size(-1))
  local others = (s:unsqueeze(-2) * (1 - I) + I):prod(-1)                 -- c (..., n)
  local orientation = Det.apply(u:detach(), ctx.op) * Det.apply(vh:detach(), ctx.op)   -- +-1
  return (u * (others * (g * orientation):unsqueeze(-1)):unsqueeze(-2)):matmul(vh), nil
end

-- torch.linalg.slogdet(A) -> sign, logabsdet: det(A) = sign * exp(logabsdet),
-- without overflow; a singular A gives sign 0 and logabsdet -inf. Also
-- torch.slogdet(A) and A:slogdet().
function linalg.slogdet(a)
  local op = 'torch.linalg.slogdet'
  check_square(op, a, 'A')
  return Slogdet.apply(a, op)
end

-- torch.linalg.det(A): the determinant (0-dim, or one per matrix of a batch).
-- Differentiable, at a singular A too (its cofactor matrix, from the SVD).
-- Also torch.det(A) and A:det().
function linalg.det(a)
  local op = 'torch.linalg.det'
  check_square(op, a, 'A')
  return (Det.apply(a, op))
end

-- torch.logdet(A): log det(A): nan for a negative determinant, -inf for a
-- singular A, as PyTorch. Also A:logdet().
function torch.logdet(a)
  local op = 'torch.logdet'
  check_square(op, a, 'A')
  local sign, logabs = Slogdet.apply(a, op)
  return logabs + sign:log()
end

-- ---- Cholesky ----

local Cholesky = Function:extend('LinalgCholesky')
function Cholesky.forward(ctx, a, upper, op)
  local c = K.potrf(a, upper and 'U' or 'L', op)
  ctx:save_for_backward(c)
  ctx.upper = upper
  return c
end
-- a = l l^T: ga = l^-T S l^-1, S the symmetric matrix whose lower triangle is
-- l^T gl's, its diagonal halved
function Cholesky.backward(ctx, g)
  local c = table.unpack(ctx.saved_tensors)
  local l, gl = c, g
  if ctx.upper then l, gl = mT(c), mT(g) end
  local p = mT(l):matmul(gl):tril()
  local s = (p + mT(p:tril(-1))) * 0.5
  return right_solve(linalg.solve(mT(l), s), l), nil, nil
end

-- torch.linalg.cholesky(A, {upper=false}): L lower triangular with A = L L^T
-- (upper=true: U with A = U^T U) for a symmetric positive-definite A (only
-- its lower, or upper, triangle is read). A matrix that is not positive
-- definite is an error naming its first non-positive leading minor.
function linalg.cholesky(a, opts)
  local op = 'torch.linalg.cholesky'
  check_square(op, a, 'A')
  return (Cholesky.apply(a, opts and opts.upper == true, op))
end

-- torch.cholesky_solve(B, L, {upper=false}): X with A X = B from A's Cholesky
-- factor L (A = L L^T; upper=true: A = U^T U); batch dims broadcast.
function torch.cholesky_solve(b, l, opts)
  local op = 'torch.cholesky_solve'
  local upper = type(opts) == 'table' and opts.upper == true or opts == true
  check_square(op, l, 'the Cholesky factor')
  local C, B = solve_args(op, l, b)
  if torch.is_grad_enabled() and (C.requires_grad or B.requires_grad) then
    -- differentiable: two triangular solves
    local y = SolveTriangular.apply(C, B, upper, upper, false, op)
    return (SolveTriangular.apply(C, y, upper, not upper, false, op))
  end
  return (K.potrs(B, C, upper and 'U' or 'L', op))
end

-- torch.cholesky_inverse(L, {upper=false}): A^-1 from A's Cholesky factor.
function torch.cholesky_inverse(l, opts)
  local op = 'torch.cholesky_inverse'
  local upper = type(opts) == 'table' and opts.upper == true or opts == true
  check_square(op, l, 'the Cholesky factor')
  if torch.is_grad_enabled() and l.requires_grad then
    return torch.cholesky_solve(eye_like(l):expand(l:size()), l, {upper = upper})
  end
  return (K.potri(l, upper and 'U' or 'L', op))
end

-- ---- symmetric eigenproblems ----

local Eigh = Function:extend('LinalgEigh')
function Eigh.forward(ctx, a, uplo, op)
  local w, v = K.syevd(a, 'V', uplo, op)
  ctx:save_for_backward(a, w, v)
  ctx.uplo, ctx.op = uplo, op
  return w, v
end
-- ga = v (diag(gw) + F o (v^T gv)) v^T, F the inverse eigenvalue gaps
function Eigh.backward(ctx, gw, gv)
  local a, w, v = table.unpack(ctx.saved_tensors)
  if torch.is_grad_enabled() then w, v = Eigh.apply(a, ctx.uplo, ctx.op) end   -- create_graph: w, v with history
  local inner = diag_embed(gw)
  if gv then inner = inner + inverse_gaps(w) * mT(v):matmul(gv) end
  return v:matmul(inner):matmul(mT(v)), nil, nil
end

local function uplo_of(op, opts)
  local uplo = type(opts) == 'table' and (opts.UPLO or opts.uplo) or opts
  return letter(op, 'UPLO', uplo, 'L', 'LU')
end

-- torch.linalg.eigh(A, {UPLO='L'}) -> L, Q: the eigenvalues (ascending) and
-- eigenvectors (columns) of a symmetric A, A = Q diag(L) Q^T; only the lower
-- (UPLO='U': upper) triangle is read. Batched.
function linalg.eigh(a, opts)
  local op = 'torch.linalg.eigh'
  check_square(op, a, 'A')
  return Eigh.apply(a, uplo_of(op, opts), op)
end

-- torch.linalg.eigvalsh(A, {UPLO='L'}): eigh's eigenvalues alone.
function linalg.eigvalsh(a, opts)
  local op = 'torch.linalg.eigvalsh'
  check_square(op, a, 'A')
  if torch.is_grad_enabled() and a.requires_grad then return (Eigh.apply(a, uplo_of(op, opts), op)) end
  return (K.syevd(a, 'N', uplo_of(op, opts), op))
end

-- ---- singular values ----

Svd = Function:extend('LinalgSvd')
function Svd.forward(ctx, a, full, op)
  local u, s, vt = K.gesdd(a, full and 'A' or 'S', op)
  ctx:save_for_backward(a, u, s, vt)
  ctx.full, ctx.op = full, op
  return u, s, vt
end
-- a = u s v^T: u (J s + diag(gs) + s K) v^T + (I - u u^T) gu s^-1 v^T
-- + u s^-1 gv^T (I - v v^T), J = F o (u^T gu - gu^T u), K likewise in v,
-- F the inverse gaps of s^2; the projections vanish when u (v) is square.
-- With full matrices, u's columns and vt's rows past k = min(m, n) are any
-- basis of their subspaces: their gradients are ignored (as PyTorch's) and
-- the reduced factors' derivative taken.
function Svd.backward(ctx, gu, gs, gvt)
  local a, u, s, vt = table.unpack(ctx.saved_tensors)
  if torch.is_grad_enabled() then u, s, vt = Svd.apply(a, ctx.full, ctx.op) end      -- create_graph: with history
  local k = s:size(-1)
  if ctx.full then
    u, vt = u:narrow(-1, 1, k), vt:narrow(-2, 1, k)
    gu, gvt = gu and gu:narrow(-1, 1, k), gvt and gvt:narrow(-2, 1, k)
  end
  local v = mT(vt)
  local inner = diag_embed(gs)
  local ga_extra
  if gu or gvt then
    gu = gu or torch.zeros_like(u)
    local gv = gvt and mT(gvt) or torch.zeros_like(v)
    local f = inverse_gaps(s * s)
    local utgu, vtgv = mT(u):matmul(gu), vt:matmul(gv)
    local j, kv = f * (utgu - mT(utgu)), f * (vtgv - mT(vtgv))
    inner = inner + j * s:unsqueeze(-2) + s:unsqueeze(-1) * kv
    local sinv = (1 / s):unsqueeze(-2)
    if u:size(-2) > k then ga_extra = ((gu - u:matmul(utgu)) * sinv):matmul(vt)
    elseif v:size(-2) > k then ga_extra = u:matmul(mT((gv - v:matmul(vtgv)) * sinv)) end
  end
  local ga = u:matmul(inner):matmul(vt)
  if ga_extra then ga = ga + ga_extra end
  return ga, nil, nil
end

-- torch.linalg.svd(A, {full_matrices=true}) -> U, S, Vh: A = U diag(S) Vh, S
-- descending; full_matrices=false gives the reduced U (m x k) and Vh (k x n),
-- k = min(m, n). Batched. Differentiable where the singular values are
-- distinct; with full matrices the gradients of U's columns and Vh's rows
-- past k are ignored (any basis of their subspace would do), as PyTorch.
function linalg.svd(a, opts)
  local op = 'torch.linalg.svd'
  check_matrix(op, a, 'A')
  local full = not (opts and opts.full_matrices == false)
  return Svd.apply(a, full and a:size(-1) ~= a:size(-2), op)
end

-- torch.linalg.svdvals(A): the singular values alone, descending.
function linalg.svdvals(a)
  local op = 'torch.linalg.svdvals'
  check_matrix(op, a, 'A')
  if torch.is_grad_enabled() and a.requires_grad then
    local _, s = Svd.apply(a, false, op)
    return s
  end
  local _, s = K.gesdd(a, 'N', op)
  return s
end

-- ---- QR ----

-- a's QR from geqrf: q (m, k) or, complete, (m, m); r (k, n) or (m, n)
local function qr_factors(op, a, complete, want_q)
  local m, n = a:size(-2), a:size(-1)
  local k = math.min(m, n)
  local h, tau = K.geqrf(a, op)
  local r = (complete and h or h:narrow(-2, 1, k)):triu()
  if not want_q then return nil, r end
  local reflectors = h:narrow(-1, 1, k)
  if complete and m > n then
    local pad = torch.zeros(concat(batch_dims(a, 2), {m, m - n}), {dtype = a.dtype, device = a.device})
    reflectors = torch.cat({reflectors, pad}, a:dim())
  end
  return K.orgqr(reflectors, tau, op), r
end

local Qr = Function:extend('LinalgQr')
function Qr.forward(ctx, a, complete, op)
  local q, r = qr_factors(op, a, complete, true)
  ctx:save_for_backward(a, q, r)
  ctx.complete, ctx.op = complete, op
  return q, r
end

-- a = q r with m >= n (q's columns as many as r's rows): m = r gr^T - gq^T q,
-- ga = (gq + q copyltu(m)) r^-T, copyltu(m) m's lower triangle mirrored up
local function qr_backward_tall(q, r, gq, gr)
  local m = r:matmul(mT(gr)) - mT(gq):matmul(q)
  local sym = m:tril() + mT(m:tril(-1))
  return right_solve(gq + q:matmul(sym), mT(r))
end

-- m < n: a = [x | y], x = q u square, y = q v: gy = q gv, and x's gradient
-- the square case's with gq + y gv^T
function Qr.backward(ctx, gq, gr)
  local a, q, r = table.unpack(ctx.saved_tensors)
  if torch.is_grad_enabled() then q, r = Qr.apply(a, ctx.complete, ctx.op) end    -- create_graph: with history
  local m, n = a:size(-2), a:size(-1)
  if ctx.complete and m > n then
    fail("torch.linalg.qr: the derivative is not defined for mode='complete' with more rows than columns")
  end
  gq = gq or torch.zeros_like(q)
  gr = gr or torch.zeros_like(r)
  if m >= n then return qr_backward_tall(q, r, gq, gr), nil, nil end
  local y, gv = a:narrow(-1, m + 1, n - m), gr:narrow(-1, m + 1, n - m)
  local gx = qr_backward_tall(q, r:narrow(-1, 1, m), gq + y:matmul(mT(gv)), gr:narrow(-1, 1, m))
  return torch.cat({gx, q:matmul(gv)}, a:dim()), nil, nil
end

-- torch.linalg.qr(A, {mode='reduced'}) -> Q, R: A = Q R, Q with orthonormal
-- columns, R upper triangular. mode 'reduced' (Q m x k, R k x n, k = min(m,
-- n)), 'complete' (Q m x m, R m x n) or 'r' (R alone; Q an empty tensor).
-- Batched. Differentiable, mode 'r' too (PyTorch refuses it), except mode
-- 'complete' with more rows than columns (Q's extra columns are any basis).
function linalg.qr(a, opts)
  local op = 'torch.linalg.qr'
  check_matrix(op, a, 'A')
  local mode = type(opts) == 'table' and opts.mode or opts or 'reduced'
  if mode ~= 'reduced' and mode ~= 'complete' and mode ~= 'r' then
    fail(string.format("%s: mode must be 'reduced', 'complete' or 'r', got %s", op, tostring(mode)))
  end
  if mode == 'r' then
    local r
    if wants_grad(a) then _, r = Qr.apply(a, false, op)      -- R's derivative needs Q: computed, then dropped
    else _, r = qr_factors(op, a, false, false) end
    return torch.empty(0, {dtype = a.dtype, device = a.device}), r
  end
  return Qr.apply(a, mode == 'complete', op)
end

-- ---- Householder products: geqrf's reflectors and scales as Q ----

-- tau (..., k) with a's batch dims and dtype, k at most limit
local function check_tau(op, a, tau, limit, limit_what)
  check_tensor(op, tau, 'tau')
  if tau.dtype ~= a.dtype then fail(string.format('%s: tau is %s but the reflectors are %s', op, tau.dtype, a.dtype)) end
  if tau:dim() < 1 or not same_size(batch_dims(a, 2), batch_dims(tau, 1)) then
    fail(string.format('%s: the batch dims of %s and %s differ', op, shape_str(a), tau:dim() == 0 and '0-dim' or
                       shape_str(tau)))
  end
  if tau:size(-1) > limit then
    fail(string.format('%s: tau %s has more entries than %s (%d)', op, shape_str(tau), limit_what, limit))
  end
end

-- v_1 .. v_k as the columns of (..., m, k): a's first k columns below the
-- diagonal, 1 on it, 0 above (LAPACK's storage)
local function reflectors(a, k)
  local eye = torch.eye(a:size(-2), k, {dtype = a.dtype, device = a.device})
  return a:narrow(-1, 1, k):tril(-1) + eye
end

-- c multiplied by H_i = I - tau_i v_i v_i^T for i = first, last, step: from
-- the left (H_i c, the latest i outermost) or from the right (c H_i, the
-- latest i last); differentiable ops only
local function reflect(v, tau, c, left, first, last, step)
  for i = first, last, step do
    local vi = v:narrow(-1, i, 1)                                    -- (..., nq, 1)
    local scaled = vi * tau:narrow(-1, i, 1):unsqueeze(-1)           -- tau_i v_i
    if left then c = c - scaled:matmul(mT(vi):matmul(c))
    else c = c - c:matmul(vi):matmul(mT(scaled)) end
  end
  return c
end

-- Q's first n columns, Q = H_1 ... H_k from reflectors a (..., m, n), m >=
-- n, and scales tau (..., k), k <= n: LAPACK's orgqr, or when a gradient is
-- wanted the reflectors applied to I's first n columns
local function householder_product(op, a, tau)
  check_matrix(op, a, 'A')
  check_tau(op, a, tau, a:size(-1), 'A has columns')
  if a:size(-2) < a:size(-1) then
    fail(string.format('%s: A %s must have at least as many rows as columns', op, shape_str(a)))
  end
  if not wants_grad(a, tau) then return (K.orgqr(a, tau, op)) end
  local k = tau:size(-1)
  local first = torch.eye(a:size(-2), a:size(-1), {dtype = a.dtype, device = a.device}):expand(a:size())
  return reflect(reflectors(a, k), tau, first, true, k, 1, -1)
end

-- torch.linalg.householder_product(A, tau): the first n columns of the
-- product of Householder reflectors H_i = I - tau_i v_i v_i^T, v_i A's i-th
-- column below the diagonal with 1 on it (as geqrf stores them); A (..., m,
-- n) with m >= n, tau (..., k) with k <= n. Differentiable. Also torch.orgqr.
function linalg.householder_product(a, tau)
  return householder_product('torch.linalg.householder_product', a, tau)
end

-- ---- least squares and the pseudoinverse ----

-- torch.linalg.lstsq(A, B) -> {solution=, residuals=, rank=, singular_values=}:
-- the least-squares X minimising |A X - B| for a full-rank A (m x n) with m
-- >= n, the least-norm X of A X = B when m < n. Unlike PyTorch's named tuple
-- it returns a table: solution (..., n, k), residuals (the squared residual
-- of each column when m > n, else empty), rank (int64, from the singular
-- values) and singular_values (empty, as PyTorch's default driver). B may
-- be a vector; batch dims broadcast. Differentiable (through solve).
function linalg.lstsq(a, b)
  local op = 'torch.linalg.lstsq'
  check_matrix(op, a, 'A')
  check_tensor(op, b, 'B')
  local vector = b:dim() == a:dim() - 1
  if vector then b = b:unsqueeze(-1) end
  check_matrix(op, b, 'B')
  if b:size(-2) ~= a:size(-2) then
    fail(string.format('%s: B %s must have as many rows as A %s', op, shape_str(b), shape_str(a)))
  end
  local batch = broadcast_batch(op, a, b, 2, 2)
  local A, B = expand_batch(a, batch, 2), expand_batch(b, batch, 2)
  local m, n = a:size(-2), a:size(-1)
  local x
  if torch.is_grad_enabled() and (A.requires_grad or B.requires_grad) then
    if m >= n then x = linalg.solve(mT(A):matmul(A), mT(A):matmul(B))
    else x = mT(A):matmul(linalg.solve(A:matmul(mT(A)), B)) end
  else
    x = K.gels(A, B, op)
  end
  local residuals = torch.empty(0, {dtype = a.dtype, device = a.device})
  if m > n then residuals = (A:matmul(x) - B):pow(2):sum(-2) end
  local s = linalg.svdvals(A:detach())
  local tol = s:amax(-1, true) * math.max(m, n) * epsilon(a.dtype)
  local rank = s:gt(tol):sum(-1)
  if vector then
    x = x:squeeze(-1)
    if m > n then residuals = residuals:squeeze(-1) end
  end
  return {solution = x, residuals = residuals, rank = rank,
          singular_values = torch.empty(0, {dtype = a.dtype, device = a.device})}
end

-- torch.linalg.pinv(A, {rtol=, hermitian=false}): the Moore-Penrose
-- pseudoinverse, from the SVD: singular values at most rtol times the largest
-- count as zero (rtol defaults to max(m, n) times the dtype's epsilon).
-- Differentiable where the singular values are distinct.
function linalg.pinv(a, opts)
  local op = 'torch.linalg.pinv'
  check_matrix(op, a, 'A')
  opts = opts or {}
  local m, n = a:size(-2), a:size(-1)
  local rtol = opts.rtol or math.max(m, n) * epsilon(a.dtype)
  local u, s, vh
  if opts.hermitian then
    local w, v = linalg.eigh(a)
    u, s, vh = v * w:sign():unsqueeze(-2), w:abs(), mT(v)
  else
    u, s, vh = linalg.svd(a, {full_matrices = false})
  end
  local keep = s:gt(s:amax(-1, true) * rtol)
  local sinv = torch.where(keep, 1 / torch.where(keep, s, 1), 0)
  return mT(vh):matmul(sinv:unsqueeze(-1) * mT(u))
end

-- ---- norms ----

local function dims_arg(dim)
  if type(dim) == 'number' then return {dim} end
  return dim
end

-- torch.linalg.vector_norm(x, ord=2, dim=nil, keepdim=false): the ord-norm of
-- x's elements (dim nil: all of them; dim a number or a table of them): ord
-- any number, inf (max |x|), -inf (min |x|) or 0 (the nonzero count). Also
-- {ord=, dim=, keepdim=} last.
function linalg.vector_norm(x, ...)
  local op = 'torch.linalg.vector_norm'
  check_tensor(op, x, 'x')
  local args, opts = split_opts(...)
  local ord, dim, keepdim = args[1] or opts.ord or 2, args[2] or opts.dim, args[3] or opts.keepdim or false
  if type(ord) ~= 'number' then fail(string.format('%s: ord must be a number, got %s', op, tostring(ord))) end
  if not x:is_floating_point() then
    fail(string.format('%s: expected a floating point tensor, got %s', op, x.dtype))
  end
  local dims = dims_arg(dim)
  if not dims then
    dims = {}
    for i = 1, math.max(x:dim(), 1) do dims[i] = i end
    if x:dim() == 0 then x = x:view(1) end
  end
  local absx = x:abs()
  if ord == math.huge then return absx:amax(dims, keepdim) end
  if ord == -math.huge then return absx:amin(dims, keepdim) end
  if ord == 0 then return x:ne(0):to(x.dtype):sum(dims, keepdim) end
  if ord == 1 then return absx:sum(dims, keepdim) end
  if ord == 2 then return x:norm(2, dims, keepdim) end
  return absx:pow(ord):sum(dims, keepdim):pow(1 / ord)
end

local matrix_ords = {fro = true, nuc = true}
for _, v in ipairs({1, -1, 2, -2, math.huge, -math.huge}) do matrix_ords[v] = true end

-- torch.linalg.matrix_norm(A, ord='fro', dim={-2, -1}, keepdim=false): 'fro'
-- (Frobenius), 'nuc' (the sum of the singular values), 2 / -2 (the largest
-- / smallest singular value), 1 / -1 (the max / min column sum of |A|), inf /
-- -inf (the max / min row sum). Also {ord=, dim=, keepdim=} last.
function linalg.matrix_norm(a, ...)
  local op = 'torch.linalg.matrix_norm'
  local args, opts = split_opts(...)
  local ord, dim, keepdim = args[1] or opts.ord or 'fro', args[2] or opts.dim or {-2, -1}, args[3] or opts.keepdim
  check_matrix(op, a, 'A')
  if not matrix_ords[ord] then
    fail(string.format("%s: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got %s", op, tostring(ord)))
  end
  if type(dim) ~= 'table' or #dim ~= 2 then fail(op .. ': dim must be a table of two dims') end
  if ord == 'fro' then return linalg.vector_norm(a, 2, dim, keepdim) end
  local x = a:movedim(dim, {-2, -1})
  local r
  if ord == 'nuc' then r = linalg.svdvals(x):sum(-1)
  elseif ord == 2 then r = linalg.svdvals(x):amax(-1)
  elseif ord == -2 then r = linalg.svdvals(x):amin(-1)
  elseif ord == 1 then r = x:abs():sum(-2):amax(-1)
  elseif ord == -1 then r = x:abs():sum(-2):amin(-1)
  elseif ord == math.huge then r = x:abs():sum(-1):amax(-1)
  else r = x:abs():sum(-1):amin(-1) end
  if keepdim then
    local d1, d2 = dim[1] < 0 and dim[1] + a:dim() + 1 or dim[1], dim[2] < 0 and dim[2] + a:dim() + 1 or dim[2]
    for _, d in ipairs({math.min(d1, d2), math.max(d1, d2)}) do r = r:unsqueeze(d) end
  end
  return r
end

-- torch.linalg.norm(A, ord=nil, dim=nil, keepdim=false): a vector norm when
-- dim is one dim or A is 1-D (ord a number), a matrix norm when dim is two
-- dims or A is 2-D with ord given; with neither ord nor dim, the 2-norm of
-- all the elements. Also {ord=, dim=, keepdim=} last.
function linalg.norm(a, ...)
  local op = 'torch.linalg.norm'
  check_tensor(op, a, 'A')
  local args, opts = split_opts(...)
  local ord, dim, keepdim = args[1] or opts.ord, args[2] or opts.dim, args[3] or opts.keepdim or false
  if type(dim) == 'table' and #dim == 2 then return linalg.matrix_norm(a, ord or 'fro', dim, keepdim) end
  if dim == nil and ord ~= nil and a:dim() == 2 then return linalg.matrix_norm(a, ord, {-2, -1}, keepdim) end
  if dim == nil and ord ~= nil and a:dim() ~= 1 then
    fail(string.format('%s: ord %s needs a 1-D or 2-D input, or dim, got %s', op, tostring(ord), shape_str(a)))
  end
  return linalg.vector_norm(a, ord or 2, dim, keepdim)
end

-- ---- Torch7's functions: result tensors first, resized to fit ----

-- Splits f(res1, ..., resN, in1, ...): the leading tensors beyond the inputs
-- are results. Returns the results (or nil) and the rest.
local function torch7_args(nresults, ninputs, ...)
  local args = table.pack(...)
  local tensors = 0
  while tensors < args.n and torch.is_tensor(args[tensors + 1]) do tensors = tensors + 1 end
  if tensors < nresults + ninputs then return nil, args end
  local results = {table.unpack(args, 1, nresults)}
  local rest = table.pack(table.unpack(args, nresults + 1, args.n))
  return results, rest
end

-- the result tensors take the values' memory and layout (LAPACK's column-major
-- one, as Torch7's results did), or a copy when the dtypes differ; returns them
local function store(results, ...)
  local values = {...}
  if not results then return ... end
  for i, r in ipairs(results) do
    local v = values[i]
    if v ~= nil then
      if r.dtype == v.dtype and not r.requires_grad and not v.requires_grad then
        r:set_(v)
      else
        if r.dtype ~= v.dtype and v:is_floating_point() == r:is_floating_point() then v = v:to(r.dtype) end
        if not same_size(r:size(), v:size()) then r:resize_(v:size()) end
        r:copy_(v)
      end
    end
  end
  return table.unpack(results)
end

local function matrix_2d(op, x, what)
  check_matrix(op, x, what)
  if x:dim() ~= 2 then fail(string.format('%s: %s must be 2-D, got %s', op, what, shape_str(x))) end
  return x
end

-- torch.gesv([resb, resa,] B, A) -> X, LU: X solves A X = B (A square, B n x
-- k); LU holds A's LU factors (L below the diagonal, unit diagonal implied).
function torch.gesv(...)
  local op = 'torch.gesv'
  local results, args = torch7_args(2, 2, ...)
  local b, a = matrix_2d(op, args[1], 'B'), matrix_2d(op, args[2], 'A')
  local x, lu = solve_with(op, a, b)
  return store(results, x, lu)
end

-- torch.trtrs([resb, resa,] B, A [, 'U' or 'L'] [, 'N' or 'T'] [, 'N' or 'U'])
-- -> X solving A X = B ('T': A^T X = B) for A upper ('U', the default) or
-- lower triangular, its diagonal read ('N') or taken as ones ('U').
function torch.trtrs(...)
  local op = 'torch.trtrs'
  local results, args = torch7_args(2, 2, ...)
  local b, a = matrix_2d(op, args[1], 'B'), matrix_2d(op, args[2], 'A')
  local uplo = letter(op, 'uplo', args[3], 'U', 'UL')
  local trans = letter(op, 'trans', args[4], 'N', 'NT')
  local diag = letter(op, 'diag', args[5], 'N', 'NU')
  check_square(op, a, 'A')
  local A, B = solve_args(op, a, b)
  local x = SolveTriangular.apply(A, B, uplo == 'U', trans == 'T', diag == 'U', op)
  return store(results, x, a:clone())
end

-- torch.gels([resb, resa,] B, A) -> X (n x k): least squares for A (m x n)
-- of full rank with m >= n, the least-norm solution when m < n. resa, when
-- given, receives A's QR factorization in geqrf's form.
function torch.gels(...)
  local op = 'torch.gels'
  local results, args = torch7_args(2, 2, ...)
  local b, a = matrix_2d(op, args[1], 'B'), matrix_2d(op, args[2], 'A')
  local x = linalg.lstsq(a, b).solution
  local qr = results and (K.geqrf(a:detach(), op))
  return store(results, x, qr)
end

-- torch.symeig([rese, resv,] A [, 'N' or 'V'] [, 'U' or 'L']) -> e [, V]: the
-- eigenvalues (ascending) of a symmetric A, read from its upper ('U', the
-- default) or lower triangle, and with 'V' the eigenvectors as V's columns.
function torch.symeig(...)
  local op = 'torch.symeig'
  local results, args = torch7_args(2, 1, ...)
  local a = check_square(op, args[1], 'A')
  local jobz = letter(op, 'jobz', args[2], 'N', 'NV')
  local uplo = letter(op, 'uplo', args[3], 'U', 'UL')
  local e, v = Eigh.apply(a, uplo, op)
  if jobz == 'N' then return store(results and {results[1]}, e) end
  return store(results, e, v)
end

-- torch.eig([rese, resv,] A [, 'N' or 'V']) -> e [, V]: the eigenvalues of a
-- general square A as n x 2 (real, imaginary parts), and with 'V' the right
-- eigenvectors (LAPACK's real form: a complex pair's vectors are two
-- columns, real and imaginary part). No derivative.
function torch.eig(...)
  local op = 'torch.eig'
  local results, args = torch7_args(2, 1, ...)
  local a = matrix_2d(op, args[1], 'A')
  check_square(op, a, 'A')
  local jobv = letter(op, 'jobvr', args[2], 'N', 'NV')
  no_derivative(op, a)
  local e, v = K.geev(a, jobv, op)
  if jobv == 'N' then return store(results and {results[1]}, e) end
  return store(results, e, v)
end

-- torch.svd([resu, ress, resv,] A [, 'S' or 'A']) -> U, S, V with A = U
-- diag(S) V^T (V, not V^T, as Torch7): 'S' (the default) the reduced U (m x
-- k) and V (n x k), 'A' the full ones. Differentiable (with 'A', through
-- U's and V's first min(m, n) columns, as torch.linalg.svd).
function torch.svd(...)
  local op = 'torch.svd'
  local results, args = torch7_args(3, 1, ...)
  local a = matrix_2d(op, args[1], 'A')
  local jobz = letter(op, 'jobz', args[2], 'S', 'SA')
  local u, s, vt = Svd.apply(a, jobz == 'A' and a:size(1) ~= a:size(2), op)
  return store(results, u, s, mT(vt))
end

-- torch.inverse([res,] A): A's inverse (also A:inverse()).
function torch.inverse(...)
  local results, args = torch7_args(1, 1, ...)
  local a = check_square('torch.inverse', args[1], 'A')
  return store(results, (Solve.apply(a, eye_like(a):expand(a:size()), 'torch.inverse')))
end

-- torch.potrf([res,] A [, 'U' or 'L']): A's Cholesky factor, upper ('U', the
-- default: A = U^T U) or lower (A = L L^T).
function torch.potrf(...)
  local op = 'torch.potrf'
  local results, args = torch7_args(1, 1, ...)
  local a = matrix_2d(op, args[1], 'A')
  local uplo = letter(op, 'uplo', args[2], 'U', 'UL')
  check_square(op, a, 'A')
  return store(results, (Cholesky.apply(a, uplo == 'U', op)))
end

-- torch.potrs([res,] B, chol [, 'U' or 'L']) -> X solving A X = B from A's
-- Cholesky factor chol (upper, 'U', by default).
function torch.potrs(...)
  local op = 'torch.potrs'
  local results, args = torch7_args(1, 2, ...)
  local b, c = matrix_2d(op, args[1], 'B'), matrix_2d(op, args[2], 'chol')
  local uplo = letter(op, 'uplo', args[3], 'U', 'UL')
  return store(results, torch.cholesky_solve(b, c, {upper = uplo == 'U'}))
end

-- torch.potri([res,] chol [, 'U' or 'L']) -> A^-1 from A's Cholesky factor
-- (upper, 'U', by default).
function torch.potri(...)
  local op = 'torch.potri'
  local results, args = torch7_args(1, 1, ...)
  local c = matrix_2d(op, args[1], 'chol')
  local uplo = letter(op, 'uplo', args[2], 'U', 'UL')
  return store(results, torch.cholesky_inverse(c, {upper = uplo == 'U'}))
end

-- torch.pstrf([res, piv,] A [, 'U' or 'L'] [, tol]) -> U, piv: Cholesky with
-- complete pivoting of a positive semidefinite A: A[piv][piv] = U^T U ('U',
-- the default) or L L^T; piv is an IntTensor of 1-based indices. tol (< 0
-- by default: LAPACK's) is the pivot below which the factorization stops; a
-- rank below n is an error. No derivative.
function torch.pstrf(...)
  local op = 'torch.pstrf'
  local results, args = torch7_args(2, 1, ...)
  local a = matrix_2d(op, args[1], 'A')
  local uplo = letter(op, 'uplo', args[2], 'U', 'UL')
  local tol = args[3] or -1
  if type(tol) ~= 'number' then fail(string.format('%s: tol must be a number, got %s', op, type(tol))) end
  check_square(op, a, 'A')
  no_derivative(op, a)
  return store(results, K.pstrf(a, uplo, tol, op))
end

-- torch.qr([q, r,] A) -> Q, R: the reduced QR of A (Q m x k with orthonormal
-- columns, R k x n upper triangular, k = min(m, n)).
function torch.qr(...)
  local op = 'torch.qr'
  local results, args = torch7_args(2, 1, ...)
  local a = matrix_2d(op, args[1], 'A')
  return store(results, Qr.apply(a, false, op))
end

-- torch.geqrf([m, tau,] A) -> a, tau: LAPACK's QR of A, R on and above the
-- diagonal and the Householder reflectors below it, with their scales tau.
-- No derivative.
function torch.geqrf(...)
  local op = 'torch.geqrf'
  local results, args = torch7_args(2, 1, ...)
  local a = check_matrix(op, args[1], 'A')
  no_derivative(op, a)
  return store(results, K.geqrf(a, op))
end

-- torch.orgqr([q,] a, tau) -> Q: the matrix of orthonormal columns (m x n)
-- that geqrf's reflectors a (m x n, m >= n) and scales tau make (PyTorch's
-- torch.linalg.householder_product). Differentiable in a and tau.
function torch.orgqr(...)
  local op = 'torch.orgqr'
  local results, args = torch7_args(1, 2, ...)
  return store(results, householder_product(op, args[1], args[2]))
end

-- torch.ormqr([res,] a, tau, C [, 'L' or 'R'] [, 'N' or 'T']) -> Q C ('L',
-- the default) or C Q ('R'), with Q^T for 'T', Q given by geqrf's a and tau
-- and never formed. Differentiable in a, tau and C.
function torch.ormqr(...)
  local op = 'torch.ormqr'
  local results, args = torch7_args(1, 3, ...)
  local a, tau, c = check_matrix(op, args[1], 'a'), check_tensor(op, args[2], 'tau'), check_matrix(op, args[3], 'C')
  local side = letter(op, 'side', args[4], 'L', 'LR')
  local trans = letter(op, 'trans', args[5], 'N', 'NT')
  if c.dtype ~= a.dtype then fail(string.format('%s: C is %s but a is %s: both must have one dtype', op, c.dtype, a.dtype)) end
  if not same_size(batch_dims(a, 2), batch_dims(c, 2)) then
    fail(string.format('%s: the batch dims of %s and %s differ', op, shape_str(a), shape_str(c)))
  end
  local nq = side == 'L' and c:size(-2) or c:size(-1)
  if a:size(-2) ~= nq then
    fail(string.format('%s: the reflectors %s must have %d rows to multiply %s from the %s', op, shape_str(a), nq,
                       shape_str(c), side == 'L' and 'left' or 'right'))
  end
  check_tau(op, a, tau, math.min(a:size(-1), nq), 'the reflectors')
  if not wants_grad(a, tau, c) then return store(results, (K.ormqr(a, tau, c, side, trans, op))) end
  -- Q = H_1 ... H_k is symmetric factor by factor: Q^T = H_k ... H_1
  local forward = (side == 'L') == (trans == 'T')
  local k = tau:size(-1)
  local first, last, step = 1, k, 1
  if not forward then first, last, step = k, 1, -1 end
  return store(results, reflect(reflectors(a, k), tau, c, side == 'L', first, last, step))
end

-- ---- PyTorch's top-level names and the methods ----

torch.det = linalg.det
torch.slogdet = linalg.slogdet
methods.det = linalg.det
methods.slogdet = linalg.slogdet
methods.logdet = torch.logdet
methods.inverse = linalg.inv
for _, name in ipairs({'potrf', 'potri', 'pstrf', 'qr', 'svd', 'symeig', 'eig', 'geqrf'}) do
  methods[name] = torch[name]
end
methods.cholesky_solve = torch.cholesky_solve
methods.cholesky_inverse = torch.cholesky_inverse

return linalg
