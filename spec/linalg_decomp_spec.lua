-- linalg_decomp_spec.lua: torch.linalg's decompositions and solves (LAPACK,
-- lib/torch/linalg.lua): values against numbers PyTorch 2.x computed for the
-- same matrices, batches, float32, derivatives against finite differences
-- (first and second order), and the errors a user sees.
local torch = require 'torch'
local raises = dofile('spec/support/raises.lua')
local L = torch.linalg

local function T(rows) return torch.tensor(rows, {dtype = 'float64'}) end

-- a and b (a tensor, or a table of rows) agree within tol
local function near(a, b, tol)
  if type(b) ~= 'table' or torch.is_tensor(b) then b = torch.is_tensor(b) and b or T(b) end
  if type(b) == 'table' and not torch.is_tensor(b) then b = T(b) end
  assert.are.same(b:size(), a:size())
  local err = (a:double() - b:double()):abs():max():item()
  assert(err <= (tol or 1e-10), 'max difference ' .. err)
end

local A = T({{4, 1, 2}, {1, 5, 3}, {2, 3, 6}})               -- symmetric positive definite
local N = T({{2, -1, 0.5}, {1, 3, -2}, {0, 1, 1}})            -- general, det 11.5
local B = T({{1, 2}, {3, 4}, {5, 6}})
local Tall = T({{1, 2}, {3, 4}, {5, 6}, {7, 9}})

describe('torch.linalg values (from PyTorch)', function()
  it('solve and inv', function()
    near(L.solve(N, B), {{1.0434782608695652, 1.6521739130434783}, {2.391304347826087, 2.8695652173913047},
                         {2.608695652173913, 3.1304347826086962}})
    near(L.inv(N), {{0.43478260869565216, 0.13043478260869565, 0.043478260869565216},
                    {-0.08695652173913043, 0.17391304347826086, 0.391304347826087},
                    {0.08695652173913043, -0.17391304347826086, 0.6086956521739131}})
  end)

  it('solve with a vector, left=false, and broadcast batch dims', function()
    local b = T({1, 2, 3})
    near(L.solve(N, b), N:inverse():mv(b))
    near(L.solve(N, B:t(), {left = false}):matmul(N), B:t())
    local As = torch.stack({N, A, N * 2})
    local x = L.solve(As, B)                                   -- B broadcast over the batch
    assert.are.same({3, 3, 2}, x:size())
    for i = 1, 3 do near(As[i]:mm(x[i]), B, 1e-12) end
  end)

  it('det, slogdet and logdet', function()
    near(L.det(N), torch.tensor(11.5, {dtype = 'float64'}), 1e-12)
    local sign, logabs = L.slogdet(N)
    assert.are.equal(1, sign:item())
    near(logabs, torch.tensor(2.4423470353692043, {dtype = 'float64'}), 1e-12)
    near(torch.logdet(A), torch.tensor(4.2484952420493585, {dtype = 'float64'}), 1e-12)
    assert.are.equal(-11.5, torch.det(N:index_select(1, torch.tensor({2, 1, 3}))):item() // 1e-9 * 1e-9)
  end)

  it('det of a singular matrix is 0, its slogdet (0, -inf), and logdet of a negative det nan', function()
    local S = T({{1, 2}, {2, 4}})
    assert.are.equal(0, L.det(S):item())
    local sign, logabs = L.slogdet(S)
    assert.are.equal(0, sign:item())
    assert.are.equal(-math.huge, logabs:item())
    local lg = torch.logdet(T({{0, 1}, {1, 0}}))
    assert.is_true(lg:item() ~= lg:item())
  end)

  it('cholesky, lower by default and upper', function()
    near(L.cholesky(A), {{2, 0, 0}, {0.5, 2.179449471770337, 0}, {1, 1.1470786693528088, 1.9194297398747862}}, 1e-12)
    near(L.cholesky(A, {upper = true}), {{2, 0.5, 1}, {0, 2.179449471770337, 1.1470786693528088},
                                          {0, 0, 1.9194297398747862}}, 1e-12)
    near(torch.cholesky_solve(B, L.cholesky(A)), {{-0.2, 0}, {0.14285714285714268, 0.2857142857142856},
                                                   {0.8285714285714287, 0.8571428571428572}}, 1e-12)
    near(torch.cholesky_solve(B, L.cholesky(A, {upper = true}), {upper = true}), A:inverse():mm(B), 1e-12)
  end)

  it('eigh and eigvalsh (ascending; eigenvectors up to sign)', function()
    local w, V = L.eigh(A)
    near(w, {2.194397167422408, 3.386770156607548, 9.418832675970037}, 1e-12)
    local ref = T({{-0.44122469687346444, -0.8155834192895005, -0.3743587224160362},
                   {-0.5773502691896258, 0.5773502691896262, -0.5773502691896254},
                   {0.6870134158337711, -0.038605088352622774, -0.7256185041863941}})
    near(V:abs(), ref:abs(), 1e-12)
    near(L.eigvalsh(A, {UPLO = 'U'}), w, 1e-12)
    -- only the named triangle is read
    near(L.eigvalsh(A:tril()), w, 1e-12)
    near(L.eigvalsh(A:triu(), {UPLO = 'U'}), w, 1e-12)
  end)

  it('svd, svdvals and the reconstruction', function()
    near(L.svdvals(Tall), {14.857076037853462, 0.5170025197621853}, 1e-12)
    local U, S, Vh = L.svd(Tall)                               -- full_matrices by default
    assert.are.same({4, 4}, U:size())
    assert.are.same({2, 2}, Vh:size())
    near(U:t():mm(U), torch.eye(4, {dtype = 'float64'}), 1e-12)
    U, S, Vh = L.svd(Tall, {full_matrices = false})
    assert.are.same({4, 2}, U:size())
    near(U:mm(torch.diag(S)):mm(Vh), Tall, 1e-12)
  end)

  it('qr in its three modes', function()
    local Q, R = L.qr(Tall)
    near(R:abs(), T({{9.16515138991168, 11.674657127625593}, {0, 0.8380817098475274}}), 1e-12)
    near(Q:mm(R), Tall, 1e-12)
    Q, R = L.qr(Tall, {mode = 'complete'})
    assert.are.same({4, 4}, Q:size())
    assert.are.same({4, 2}, R:size())
    near(Q:t():mm(Q), torch.eye(4, {dtype = 'float64'}), 1e-12)
    near(Q:mm(R), Tall, 1e-12)
    Q, R = L.qr(Tall, {mode = 'r'})
    assert.are.equal(0, Q:numel())
    near(R:abs(), T({{9.16515138991168, 11.674657127625593}, {0, 0.8380817098475274}}), 1e-12)
  end)

  it('lstsq returns a table with the solution and the residuals', function()
    local b = T({{1}, {2}, {2}, {4}})
    local r = L.lstsq(Tall, b)
    near(r.solution, {{-0.6949152542372897}, {0.9661016949152557}}, 1e-12)
    near(r.residuals, (Tall:mm(r.solution) - b):pow(2):sum(1), 1e-12)
    assert.are.equal(2, r.rank:item())
    -- under-determined: the least-norm solution, which pinv gives too
    local W = Tall:t()
    local x = L.lstsq(W, T({1, 2})).solution
    near(x, L.pinv(W):mv(T({1, 2})), 1e-12)
  end)

  it('pinv', function()
    near(L.pinv(Tall), {{-1.3050847457627108, -0.2881355932203378, 0.7288135593220316, -0.06779661016949079},
                        {1.0338983050847448, 0.2542372881355923, -0.5254237288135575, 0.11864406779660962}}, 1e-12)
    near(L.pinv(A, {hermitian = true}), A:inverse(), 1e-12)
  end)

  it('matrix_norm, vector_norm and norm', function()
    local cases = {fro = 4.6097722286464435, nuc = 7.383107395182492, [1] = 5, [-1] = 3, [2] = 3.8117219876092965,
                   [-2] = 1.3713386133865784, [math.huge] = 6, [-math.huge] = 2}
    for ord, want in pairs(cases) do
      assert(math.abs(L.matrix_norm(N, ord):item() - want) < 1e-12, 'ord ' .. tostring(ord))
    end
    assert.are.same({1, 1}, L.matrix_norm(N, 'fro', {1, 2}, true):size())
    assert(math.abs(L.vector_norm(N, 3):item() - 3.61202256195163) < 1e-12)
    assert.are.equal(3, L.vector_norm(N, math.huge):item())
    assert.are.equal(8, L.vector_norm(N, 0):item())
    near(L.vector_norm(N, 1, 2), {3.5, 6, 2})
    near(L.vector_norm(N, {ord = 1, dim = 2, keepdim = true}), {{3.5}, {6}, {2}})
    assert(math.abs(L.norm(N):item() - 4.6097722286464435) < 1e-12)
    assert.are.equal(6, L.norm(N, math.huge):item())          -- 2-D with ord: a matrix norm
    near(L.norm(N, 2, 1), N:pow(2):sum(1):sqrt())             -- one dim: a vector norm
  end)

  it('batches: every matrix of a stack, in float32 too', function()
    local As = torch.stack({A, A * 2, A + torch.eye(3, {dtype = 'float64'})})
    local w = L.eigvalsh(As)
    for i = 1, 3 do near(w[i], L.eigvalsh(As[i]), 1e-12) end
    local C = L.cholesky(As:float())
    assert.are.equal('float32', C.dtype)
    near(C:matmul(C:transpose(2, 3)), As:float(), 1e-5)
    near(L.inv(As):matmul(As), torch.eye(3, {dtype = 'float64'}):expand(3, 3, 3), 1e-12)
    near(L.det(As), torch.tensor({L.det(A):item(), 8 * L.det(A):item(), L.det(As[3]):item()}, {dtype = 'float64'}),
         1e-9)
    local U, S, Vh = L.svd(As:float(), {full_matrices = false})
    near(U:matmul(S:unsqueeze(-1) * torch.eye(3)):matmul(Vh), As:float(), 1e-4)
  end)
end)

-- a weighted sum, so that every output element gets its own gradient
local function wsum(y)
  local w = torch.arange(1, y:numel() + 1, {dtype = 'float64'}):view(y:size()) * 0.1
  return (y * w):sum()
end
local function randd(...)
  local args = {...}
  args[#args + 1] = {dtype = 'float64', requires_grad = true}
  return torch.randn(table.unpack(args))
end
local function spd(x) return x:matmul(x:transpose(-2, -1)) + torch.eye(x:size(-1), {dtype = 'float64'}) * x:size(-1) end
local function sym(x) return x + x:transpose(-2, -1) end

-- first and second derivatives against finite differences
local function check(fn, ...)
  local inputs = {...}
  assert.is_true(torch.autograd.gradcheck(fn, inputs))
  assert.is_true(torch.autograd.gradgradcheck(fn, inputs))
end

describe('torch.linalg derivatives', function()
  torch.manual_seed(5)

  it('match PyTorch at known points', function()
    local X = N:clone():requires_grad_()
    L.det(X):backward()
    near(X.grad, {{5, -1, 1}, {1.5, 2, -2}, {0.5, 4.5, 7}}, 1e-12)
    X = N:clone():requires_grad_()
    L.inv(X):sum():backward()
    near(X.grad, {{-0.2646502835538752, -0.20793950850661624, -0.22684310018903595},
                  {-0.07939508506616258, -0.062381852551984876, -0.06805293005671077},
                  {-0.6351606805293005, -0.499054820415879, -0.5444234404536863}}, 1e-12)
    X = Tall:clone():requires_grad_()
    L.svdvals(X):narrow(1, 1, 1):sum():backward()
    near(X.grad:abs(), T({{0.0908976652502827, 0.11615592482629154}, {0.20735888963784968, 0.26497890270908186},
                          {0.3238201140254168, 0.41380188059187245}, {0.4729483914694829, 0.604369294359559}}), 1e-12)
    X = A:clone():requires_grad_()
    local weighted = L.cholesky(X) * torch.arange(1, 10, {dtype = 'float64'}):view(3, 3)
    weighted:sum():backward()
    near(X.grad, {{-0.0866274306215487, 0.49165942385574957, 0.42742514931522263},
                  {0.49165942385574957, 0.830548799629882, 0.6014067524735602},
                  {0.4274251493152228, 0.6014067524735602, 2.3444463251327745}}, 1e-12)
  end)

  it('of solve, inv, det, slogdet and logdet', function()
    check(function(a, b) return wsum(L.solve(a, b)) end, randd(3, 3), randd(3, 2))
    check(function(a, b) return wsum(L.solve(a, b)) end, randd(2, 3, 3), randd(3))     -- broadcast, vector
    check(function(a) return wsum(L.inv(a)) end, randd(2, 3, 3))
    check(function(a) return wsum(L.det(a)) end, randd(2, 3, 3))
    check(function(a) local _, l = L.slogdet(a) return l end, randd(3, 3))
    check(function(a) return torch.logdet(spd(a)) end, randd(3, 3))
  end)

  it('of det at singular matrices: the cofactor matrix (adjugate transposed, by hand)', function()
    -- rank 2; LU meets no exact zero pivot in the first, one in the second
    local cases = {{T({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}), {{-3, 6, -3}, {6, -12, 6}, {-3, 6, -3}}},
                   {T({{1, 2, 0}, {2, 4, 0}, {0, 0, 3}}), {{12, -6, 0}, {-6, 3, 0}, {0, 0, 0}}},
                   {T({{1, 2, 3}, {2, 4, 6}, {-1, -2, -3}}), {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}}      -- rank 1
    for _, case in ipairs(cases) do
      local X = case[1]:clone():requires_grad_()
      L.det(X):backward()
      near(X.grad, case[2], 1e-12)
      X = case[1]:clone():requires_grad_()
      torch.det(X * 2):backward()                             -- d det(2X) = 4 cofactors(X) * 2
      near(X.grad, T(case[2]) * 8, 1e-11)
      check(L.det, case[1]:clone():requires_grad_())
    end
    -- a batch with one singular matrix takes the SVD form for both
    check(function(a) return wsum(L.det(a)) end, torch.stack({cases[2][1], N}):requires_grad_())
    local X = cases[2][1]:clone():requires_grad_()
    raises('torch.logdet: the derivative of log|det| is infinite at a singular matrix',
           function() torch.logdet(X):backward() end)
    raises('torch.linalg.slogdet: the derivative of log|det| is infinite at a singular matrix',
           function() local _, l = L.slogdet(X) l:backward() end)
  end)

  it('of cholesky (both triangles) and cholesky_solve', function()
    check(function(a) return wsum(L.cholesky(spd(a))) end, randd(2, 3, 3))
    check(function(a) return wsum(L.cholesky(spd(a), {upper = true})) end, randd(3, 3))
    check(function(a, b) return wsum(torch.cholesky_solve(b, L.cholesky(spd(a)))) end, randd(3, 3), randd(3, 2))
  end)

  it('of eigh (eigenvalues and eigenvectors) and eigvalsh', function()
    check(function(a) return wsum(L.eigvalsh(sym(a))) end, randd(4, 4))
    -- |V| does not depend on the eigenvectors' signs
    check(function(a) local w, v = L.eigh(sym(a)) return wsum(w) + wsum(v:abs()) end, randd(2, 3, 3))
  end)

  it('of svd (U, S, Vh), tall and wide, and svdvals', function()
    check(function(a) return wsum(L.svdvals(a)) end, randd(4, 3))
    local function uv(a)
      local u, s, vh = L.svd(a, {full_matrices = false})
      return wsum(u:abs()) + wsum(s) + wsum(vh:abs())
    end
    check(uv, randd(4, 3))
    check(uv, randd(2, 3, 5))
    -- full matrices: U's columns (Vh's rows) past min(m, n) take no gradient,
    -- the others the reduced factors' (as PyTorch)
    local function full(a)
      local u, s, vh = L.svd(a)
      local k = s:size(-1)
      return wsum(u:narrow(-1, 1, k):abs()) + wsum(s) + wsum(vh:narrow(-2, 1, k):abs())
    end
    check(full, randd(4, 2))
    check(full, randd(2, 5))
    local x = randd(5, 3)
    local u = L.svd(x)
    local gfull = torch.autograd.grad(wsum(u:narrow(2, 1, 3):abs()), x)[1]
    local gred = torch.autograd.grad(wsum(L.svd(x, {full_matrices = false}):abs()), x)[1]
    near(gfull, gred, 1e-12)
    assert.are.same({5, 5}, u:size())
    x = randd(3, 4)
    local _, _, V = torch.svd(x, 'A')
    assert.are.same({4, 4}, V:size())
    check(function(a) local _, s, v = torch.svd(a, 'A') return wsum(s) + wsum(v:narrow(2, 1, 3):abs()) end, x)
  end)

  it('of qr, tall, wide and square complete', function()
    local function qr(mode) return function(a) local q, r = L.qr(a, {mode = mode}) return wsum(q) + wsum(r) end end
    check(qr('reduced'), randd(5, 3))
    check(qr('reduced'), randd(3, 5))
    check(qr('complete'), randd(3, 3))
    check(qr('complete'), randd(2, 4))
    check(qr('r'), randd(5, 3))                           -- R alone: Q computed for its derivative
    check(qr('r'), randd(3, 4))
  end)

  it('of householder_product, orgqr and ormqr (each side, transposed or not)', function()
    local H = T({{0.5, -1}, {2, 0.3}, {-0.7, 1.5}, {1.1, 0.2}})
    local h, tau = H:clone():requires_grad_(), T({1.2, 0.4}):requires_grad_()
    local q = L.householder_product(h, tau)
    near(q, {{-0.2, -1.8384}, {-2.4, -3.0768}, {0.84, 0.68688}, {-1.32, -2.10224}}, 1e-12)
    wsum(q):backward()
    near(h.grad, {{0, 0}, {-2.14656, 0}, {-0.65184, -0.73056}, {-2.17056, 0.45088}}, 1e-12)
    near(tau.grad, T({-3.35672, 0.58984}), 1e-12)
    h.grad, tau.grad = nil, nil
    local c = T({{1, 2, 0, -1}, {0, -1, 3, 0.5}}):requires_grad_()
    local r = torch.ormqr(h, tau, c, 'R', 'T')
    near(r, {{-2.66912, -6.05824, 1.488384, -5.180032}, {6.28176, 10.12352, -3.557232, 7.121936}}, 1e-12)
    wsum(r):backward()
    near(h.grad, {{0, 0}, {8.033472, 0}, {2.135856, -2.844336}, {4.028208, 3.333368}}, 1e-12)
    near(tau.grad, T({8.708684, 4.578552}), 1e-12)
    near(c.grad, {{-0.776, -1.434032, 1.090152, -0.5400064}, {-2.008, -3.966256, 3.130216, -1.8688512}}, 1e-12)
    -- with and without a gradient, the same values (LAPACK's without)
    local a = torch.randn(2, 5, 3, {dtype = 'float64'})
    local hs, taus = torch.geqrf(a[1])
    near(torch.orgqr(hs:clone():requires_grad_(), taus), torch.orgqr(hs, taus), 1e-12)
    local x = torch.randn(5, 2, {dtype = 'float64'})
    for _, form in ipairs({{'L', 'N'}, {'L', 'T'}, {'R', 'N'}, {'R', 'T'}}) do
      local cx = form[1] == 'L' and x or x:t()
      near(torch.ormqr(hs, taus, cx:clone():requires_grad_(), form[1], form[2]), torch.ormqr(hs, taus, cx, form[1], form[2]),
           1e-12)
      check(function(hh, tt, cc) return wsum(torch.ormqr(hh, tt, cc, form[1], form[2])) end, randd(5, 3), randd(3),
            form[1] == 'L' and randd(5, 2) or randd(2, 5))
    end
    check(function(hh, tt) return wsum(L.householder_product(hh, tt)) end, randd(2, 5, 3), randd(2, 2))
    check(function(hh, tt) return wsum(torch.orgqr(hh, tt)) end, randd(4, 4), randd(4))
  end)

  it('of lstsq, pinv, solve_triangular and the norms', function()
    check(function(a, b) return wsum(L.lstsq(a, b).solution) end, randd(5, 3), randd(5, 2))
    check(function(a, b) return wsum(L.lstsq(a, b).solution) end, randd(2, 4), randd(2, 2))
    check(function(a) return wsum(L.pinv(a)) end, randd(4, 3))
    check(function(a, b) return wsum(L.solve_triangular(a, b, {upper = true})) end, randd(3, 3), randd(3, 2))
    for _, ord in ipairs({'fro', 'nuc', 2, -2, 1, math.huge}) do
      check(function(a) return L.matrix_norm(a, ord) end, randd(4, 3))
    end
    check(function(a) return L.vector_norm(a, 3, 2):sum() end, randd(4, 3))
  end)

  it('complete QR of a tall matrix, geqrf and eig refuse a derivative instead of dropping it', function()
    raises('torch.geqrf: has no derivative', torch.geqrf, randd(4, 3))
    raises('torch.eig: has no derivative', torch.eig, randd(3, 3))
    local q, r = L.qr(randd(4, 3), {mode = 'complete'})
    raises("mode='complete' with more rows than columns", function() (q:sum() + r:sum()):backward() end)
  end)
end)

describe('torch.linalg errors', function()
  it('name the op and the shapes or values at fault', function()
    raises('torch.linalg.solve: the matrix is singular (diagonal element 2 of its LU factor U is zero)', L.solve,
           T({{1, 2}, {2, 4}}), T({1, 1}))
    raises('torch.linalg.inv: the matrix is singular', L.inv, T({{1, 2}, {2, 4}}))
    raises('torch.linalg.cholesky: the matrix is not positive definite (leading minor 2)', L.cholesky,
           T({{1, 2}, {2, 1}}))
    raises('torch.linalg.cholesky: the matrix is not positive definite (leading minor 1) (batch element 2)',
           L.cholesky, torch.stack({A, -A}))
    raises('torch.linalg.inv: A must be square (or a batch of square matrices), got 3x4', L.inv,
           torch.zeros(3, 4))
    raises('torch.linalg.det: A must have at least 2 dims (a matrix or a batch of them), got 3', L.det,
           torch.zeros(3))
    raises('torch.linalg.eigh: A must be a float32 or float64 tensor, got int64', L.eigh,
           torch.ones(3, 3, {dtype = 'int64'}))
    raises('torch.linalg.solve: B 4x1 must have as many rows as A 3x3', L.solve, A, torch.ones(4, 1, {dtype = 'float64'}))
    raises('torch.linalg.solve: the batch dims of 2x3x3 and 3x3x1 do not broadcast', L.solve,
           torch.stack({A, A}), torch.ones(3, 3, 1, {dtype = 'float64'}))
    raises('torch.linalg.solve: A is float64 but B is float32', L.solve, A, torch.ones(3, 1))
    raises("torch.linalg.eigh: UPLO must be 'L' or 'U', got 'X'", L.eigh, A, {UPLO = 'X'})
    raises("torch.linalg.qr: mode must be 'reduced', 'complete' or 'r', got full", L.qr, A, {mode = 'full'})
    raises("torch.linalg.matrix_norm: ord must be 'fro', 'nuc'", L.matrix_norm, A, 3)
    raises('torch.linalg.householder_product: tau 4 has more entries than A has columns (3)', L.householder_product,
           torch.zeros(5, 3, {dtype = 'float64'}), torch.zeros(4, {dtype = 'float64'}))
    raises('torch.linalg.householder_product: A 3x5 must have at least as many rows as columns',
           L.householder_product, torch.zeros(3, 5, {dtype = 'float64'}), torch.zeros(3, {dtype = 'float64'}))
    raises('torch.ormqr: the batch dims of 2x5x3 and 5x2 differ', torch.ormqr, torch.zeros(2, 5, 3, {dtype = 'float64'}),
           torch.zeros(2, 3, {dtype = 'float64'}), torch.zeros(5, 2, {dtype = 'float64'}))
    raises('torch.linalg.lstsq: the matrix does not have full rank', L.lstsq, T({{1, 0}, {2, 0}, {3, 0}}),
           T({1, 2, 3}))
  end)

  it('are raised at the caller\'s line', function()
    local ok, err = pcall(function() return L.cholesky(T({{-1}})) end)
    assert.is_false(ok)
    assert.truthy(err:find('linalg_decomp_spec.lua:%d+: torch.linalg.cholesky'))
  end)
end)
