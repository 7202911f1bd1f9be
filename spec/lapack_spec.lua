-- lapack_spec.lua: Torch7's LAPACK functions (gesv, trtrs, gels, symeig, eig,
-- svd, inverse, potrf/potrs/potri, pstrf, qr, geqrf/orgqr/ormqr), their
-- result-first forms and methods, checked by definition (A X = B, Q
-- orthogonal, U S V' = A) on the matrices of Torch7's documentation, and
-- Torch7's own test expectations.
local torch = require 'torch'
local raises = dofile('spec/support/raises.lua')

local function T(rows) return torch.tensor(rows, {dtype = 'float64'}) end
local function maxdiff(a, b) return (a - b):abs():max():item() end
local function dist(a, b) return (a - b):norm() end
local function eye(n) return torch.eye(n, {dtype = 'float64'}) end

-- Torch7's documentation's systems (given by columns, as there)
local a = T({{6.80, -2.11, 5.66, 5.97, 8.23}, {-6.05, -3.30, 5.36, -4.44, 1.08}, {-0.45, 2.58, -2.70, 0.27, 9.04},
             {8.32, 2.71, 4.35, -7.17, 2.14}, {-9.67, -5.14, -7.26, 6.08, -6.87}}):t()
local b = T({{4.02, 6.19, -8.22, -7.57, -3.03}, {-1.56, 4.00, -8.67, 1.75, 2.86},
             {9.81, -4.09, -4.57, -8.61, 8.99}}):t()
local spd = T({{1.2705, 0.9971, 0.4948, 0.1389, 0.2381}, {0.9971, 0.9966, 0.6752, 0.0686, 0.1196},
               {0.4948, 0.6752, 1.1434, 0.0314, 0.0582}, {0.1389, 0.0686, 0.0314, 0.0270, 0.0526},
               {0.2381, 0.1196, 0.0582, 0.0526, 0.3957}})

describe('torch.gesv', function()
  it('solves A X = B and returns the LU factors', function()
    local x, lu = torch.gesv(b, a)
    assert.is_true((b - a:mm(x)):norm():item() < 1e-12)
    -- L (unit lower) times U is A with its rows permuted
    local l, u = lu:tril(-1) + eye(5), lu:triu()
    local plu = l:mm(u)
    for j = 1, 5 do
      local found = false
      for i = 1, 5 do found = found or maxdiff(plu[i], a[j]) < 1e-12 end
      assert.is_true(found)
    end
  end)

  it('writes the result tensors, resized, and may reuse the inputs', function()
    local x = torch.gesv(b, a)
    local tb, ta = torch.Tensor():double(), torch.Tensor():double()
    local r = torch.gesv(tb, ta, b, a)
    assert.are.equal(0, maxdiff(x, tb))
    assert.are.equal(0, maxdiff(x, r))
    assert.are.same({5, 5}, ta:size())
    local bb, aa = b:clone(), a:clone()
    torch.gesv(bb, aa, bb, aa)
    assert.are.equal(0, maxdiff(x, bb))
  end)

  it('refuses a singular A', function()
    raises('torch.gesv: the matrix is singular', torch.gesv, b:narrow(1, 1, 2), T({{1, 2}, {2, 4}}))
  end)
end)

describe('torch.trtrs', function()
  local U, L = a:triu(), a:tril()
  it('solves with either triangle, transposed or not', function()
    assert.is_true(dist(b, U:mm(torch.trtrs(b, U))):item() < 1e-12)
    assert.is_true(dist(b, L:mm(torch.trtrs(b, L, 'L'))):item() < 1e-12)
    local x = torch.trtrs(b, U, 'U', 'T')
    assert.is_true(dist(b, U:t():mm(x)):item() < 1e-12)
    assert.is_true(dist(x, torch.trtrs(b, U:t(), 'L', 'N')):item() < 1e-12)
    x = torch.trtrs(b, L, 'L', 'T', 'N')
    assert.is_true(dist(b, L:t():mm(x)):item() < 1e-12)
  end)

  it('reads only its triangle, and a unit diagonal not at all', function()
    assert.are.equal(0, maxdiff(torch.trtrs(b, a), torch.trtrs(b, U)))
    local unit = U:clone()
    for i = 1, 5 do unit[i][i] = 1 end
    assert.is_true(maxdiff(torch.trtrs(b, U, 'U', 'N', 'U'), torch.trtrs(b, unit)) < 1e-12)
  end)

  it('has the result form, and refuses bad options', function()
    local tb, ta = torch.Tensor():double(), torch.Tensor():double()
    torch.trtrs(tb, ta, b, a)
    assert.are.equal(0, maxdiff(torch.trtrs(b, a), tb))
    raises("torch.trtrs: uplo must be 'U' or 'L', got 'X'", torch.trtrs, b, a, 'X')
  end)
end)

describe('torch.gels', function()
  local ga = T({{1.44, -9.96, -7.55, 8.34, 7.08, -5.45}, {-7.84, -0.28, 3.24, 8.09, 2.52, -5.70},
                {-4.39, -3.24, 6.27, 5.28, 0.74, -1.19}, {4.53, 3.83, -6.64, 2.06, -2.47, 4.70}}):t()
  local gb = T({{8.58, 8.26, 8.48, -5.28, 5.72, 8.93}, {9.35, -4.43, -0.70, -0.26, -7.36, -2.52}}):t()

  it('is least squares when over-determined (Torch7\'s residual norm)', function()
    local x = torch.gels(gb, ga)
    assert.are.same({4, 2}, x:size())
    assert.is_true(math.abs((ga:mm(x) - gb):norm():item() - 17.390200628863) < 1e-8)
  end)

  it('is exact when square and least-norm when under-determined', function()
    local sq, sb = ga:narrow(1, 1, 4), gb:narrow(1, 1, 4)
    assert.is_true((sq:mm(torch.gels(sb, sq)) - sb):norm():item() < 1e-8)
    local wide, wb = ga:narrow(1, 1, 3), T({{1}, {2}, {3}})
    local x = torch.gels(wb, wide)
    assert.is_true((wide:mm(x) - wb):norm():item() < 1e-8)
    assert.is_true(maxdiff(x, torch.linalg.pinv(wide):mm(wb)) < 1e-10)
  end)

  it('leaves its inputs alone, and fills the result tensors', function()
    local ca, cb = ga:clone(), gb:clone()
    local tb, ta = torch.Tensor():double(), torch.Tensor():double()
    torch.gels(tb, ta, gb, ga)
    assert.are.equal(0, maxdiff(ga, ca))
    assert.are.equal(0, maxdiff(gb, cb))
    assert.are.equal(0, maxdiff(tb, torch.gels(gb, ga)))
  end)
end)

describe('torch.symeig and torch.eig', function()
  local s = T({{1.96, 0, 0, 0, 0}, {-6.49, 3.80, 0, 0, 0}, {-0.47, -6.39, 4.17, 0, 0}, {-7.20, 1.50, -1.51, 5.70, 0},
               {-0.65, -6.34, 2.67, 1.80, -7.10}}):t()           -- its upper triangle (Torch7's example)
  local full = s + s:triu(1):t()

  it('symeig: ascending eigenvalues, V diag(e) V\' = A, from the upper triangle by default', function()
    local e = torch.symeig(s)
    assert.are.same({5}, e:size())
    for i = 1, 4 do assert.is_true(e[i] <= e[i + 1]) end
    local e2, v = torch.symeig(s, 'V')
    assert.is_true(dist(full, v:mm(torch.diag(e2)):mm(v:t())):item() < 1e-12)
    assert.is_true(maxdiff(torch.symeig(full:tril(), 'N', 'L'), e) < 1e-12)
  end)

  it('symeig writes its result tensors, contiguous or not', function()
    local x = torch.rand(100, 3, {dtype = 'float64'})
    local cov = x:t():mm(x)
    local e, v = torch.zeros(4, 2, {dtype = 'float64'}):select(2, 2), torch.zeros(3, 2, 3, {dtype = 'float64'})[{{}, 2, {}}]
    torch.symeig(e, v, cov, 'V')
    assert.is_true(maxdiff(cov, v:mm(torch.diag(e)):mm(v:t())) < 1e-8)
  end)

  it('eig: n x 2 eigenvalues (real, imaginary) and V with A V = V diag(e)', function()
    local e = torch.eig(full)
    assert.are.same({5, 2}, e:size())
    local e2, v = torch.eig(full, 'V')
    assert.are.equal(0, maxdiff(e, e2))
    assert.are.equal(0, e:select(2, 2):abs():max():item())       -- symmetric: real
    assert.is_true(maxdiff(full:mm(v), v:mm(torch.diag(e:select(2, 1)))) < 1e-10)
    local te, tv = torch.Tensor():double(), torch.Tensor():double()
    torch.eig(te, tv, full, 'V')
    assert.is_true(maxdiff(tv, v) < 1e-12)
  end)

  it('eig: a rotation has the complex pair cos t +- i sin t', function()
    local t = 0.3
    local e = torch.eig(T({{math.cos(t), -math.sin(t)}, {math.sin(t), math.cos(t)}}))
    assert.is_true(math.abs(e[1][1] - math.cos(t)) < 1e-12)
    assert.is_true(math.abs(math.abs(e[1][2]) - math.sin(t)) < 1e-12)
    assert.is_true(math.abs(e[1][2] + e[2][2]) < 1e-12)
  end)

  it('eig refuses a derivative', function()
    raises('torch.eig: has no derivative', torch.eig, full:clone():requires_grad_())
  end)
end)

describe('torch.svd and torch.inverse', function()
  local s = T({{8.79, 6.11, -9.15, 9.57, -3.49, 9.84}, {9.93, 6.91, -7.93, 1.64, 4.02, 0.15},
               {9.83, 5.04, 4.86, 8.83, 9.80, -8.99}, {5.45, -0.27, 4.85, 0.74, 10.00, -6.02},
               {3.16, 7.98, 3.01, 5.80, 4.27, -5.31}}):t()

  it('svd: U diag(S) V\' = A, reduced by default, full with A', function()
    local u, sv, v = torch.svd(s)
    assert.are.same({6, 5}, u:size())
    assert.are.same({5}, sv:size())
    assert.are.same({5, 5}, v:size())
    assert.is_true(dist(s, u:mm(torch.diag(sv)):mm(v:t())):item() < 1e-12)
    local uf, _, vf = torch.svd(s, 'A')
    assert.are.same({6, 6}, uf:size())
    assert.is_true(maxdiff(uf:t():mm(uf), eye(6)) < 1e-12)
    assert.are.same({5, 5}, vf:size())
  end)

  it('svd: the result form, into non-contiguous tensors', function()
    local x = torch.randn(5, 5, {dtype = 'float64'})
    local U = torch.zeros(5, 2, 5, {dtype = 'float64'})[{{}, 2, {}}]
    local S = torch.zeros(5, 2, {dtype = 'float64'})[{{}, 2}]
    local V = torch.zeros(5, 2, 5, {dtype = 'float64'})[{{}, 2, {}}]
    local u, sv, v = torch.svd(U, S, V, x)
    assert.are.equal(U, u)
    assert.is_true(maxdiff(x, U:mm(torch.diag(S)):mm(V:t())) < 1e-12)
    assert.are.equal(0, maxdiff(sv, S) + maxdiff(v, V))
  end)

  it('inverse: M M^-1 = I, column-major as Torch7\'s, and the result form', function()
    local m = torch.randn(5, 5, {dtype = 'float64'})
    local mi = torch.inverse(m)
    assert.is_false(mi:isContiguous())
    assert.is_true(maxdiff(eye(5), m:mm(mi)) < 1e-8)
    assert.is_true(maxdiff(eye(5), mi:mm(m)) < 1e-8)
    local r = torch.Tensor(5, 5):double()
    torch.inverse(r, m)
    assert.are.equal(0, maxdiff(r, mi))
    assert.are.equal(0, maxdiff(m:inverse(), mi))
  end)
end)

describe('torch.potrf, potrs, potri and pstrf', function()
  local sq = a:mm(a:t())

  it('potrf: U\'U = A by default, L L\' = A with L, and the result form', function()
    local u = torch.potrf(spd)
    assert.is_true(maxdiff(u, u:triu()) == 0)
    assert.is_true(maxdiff(u:t():mm(u), spd) < 1e-12)
    local l = torch.Tensor():double()
    torch.potrf(l, spd, 'L')
    assert.is_true(maxdiff(l, l:tril()) == 0)
    assert.is_true(maxdiff(l:mm(l:t()), spd) < 1e-12)
    assert.are.equal(0, maxdiff(spd:potrf('L'), l))
  end)

  it('potrs and potri, either triangle (Torch7\'s tests)', function()
    for _, uplo in ipairs({'U', 'L'}) do
      local c = torch.potrf(sq, uplo)
      assert.is_true(dist(b, sq:mm(torch.potrs(b, c, uplo))):item() < 1e-10)
      assert.is_true(dist(torch.inverse(sq), torch.potri(c, uplo)):item() < 1e-12)
    end
    assert.is_true(dist(torch.inverse(sq), torch.potri(torch.potrf(sq))):item() < 1e-12)
  end)

  it('potrf refuses a matrix that is not positive definite', function()
    raises('torch.potrf: the matrix is not positive definite (leading minor 2)', torch.potrf, T({{1, 2}, {2, 1}}))
  end)

  it('pstrf: A[piv][piv] = U\'U with 1-based int32 pivots (Torch7\'s test)', function()
    torch.manual_seed(3)
    for _, dims in ipairs({{5, 1}, {5, 3}, {5, 5}, {10, 10}}) do
      local m = torch.rand(dims[1], dims[2], {dtype = 'float64'})
      local x = m:mm(m:t()) + eye(dims[1]) * 1e-7
      for _, uplo in ipairs({'U', 'L'}) do
        local u, piv = torch.pstrf(x, uplo)
        assert.are.equal('int32', piv.dtype)
        local rebuilt = uplo == 'L' and u:mm(u:t()) or u:t():mm(u)
        piv = piv:long()
        assert.is_true(maxdiff(x:index(1, piv):index(2, piv), rebuilt) < 1e-13)
      end
      local ru, rpiv = torch.Tensor():double(), torch.IntTensor()
      torch.pstrf(ru, rpiv, x)
      assert.are.equal(0, maxdiff(ru, (torch.pstrf(x))))
    end
  end)

  it('pstrf refuses a rank-deficient matrix', function()
    raises('torch.pstrf: the matrix is rank deficient or not positive semidefinite (rank 1 of 2)', torch.pstrf,
           T({{1, 1}, {1, 1}}))
  end)
end)

describe('torch.qr, geqrf, orgqr and ormqr', function()
  local x = T({{12, -51, 4}, {6, 167, -68}, {-4, 24, -41}})

  it('qr: Q R = A, Q orthogonal, R upper triangular (the textbook example)', function()
    local q, r = torch.qr(x)
    assert.is_true(maxdiff(q:mm(r), x) < 1e-12)
    assert.is_true(maxdiff(q:t():mm(q), eye(3)) < 1e-12)
    assert.are.equal(0, maxdiff(r, r:triu()))
    assert.is_true(maxdiff(r:abs(), T({{14, 21, 14}, {0, 175, 70}, {0, 0, 35}})) < 1e-12)
    local tq, tr = torch.Tensor():double(), torch.Tensor():double()
    torch.qr(tq, tr, x)
    assert.are.equal(0, maxdiff(tq, q) + maxdiff(tr, r))
  end)

  it('qr of tall and wide matrices is the reduced one', function()
    local tall = torch.randn(5, 3, {dtype = 'float64'})
    local q, r = torch.qr(tall)
    assert.are.same({5, 3}, q:size())
    assert.are.same({3, 3}, r:size())
    local q2, r2 = tall:t():qr()
    assert.are.same({3, 3}, q2:size())
    assert.are.same({3, 5}, r2:size())
    assert.is_true(maxdiff(q2:mm(r2), tall:t()) < 1e-12)
  end)

  it('geqrf, orgqr and ormqr agree with qr', function()
    local tall = torch.randn(6, 4, {dtype = 'float64'})
    local h, tau = torch.geqrf(tall)
    assert.are.same({4}, tau:size())
    local q, r = torch.qr(tall)
    assert.is_true(maxdiff(torch.orgqr(h, tau), q) < 1e-12)
    assert.is_true(maxdiff(h:triu():narrow(1, 1, 4), r) < 1e-12)
    local c = torch.randn(6, 2, {dtype = 'float64'})
    local full = torch.ormqr(h, tau, eye(6))                  -- Q itself, 6 x 6
    assert.is_true(maxdiff(torch.ormqr(h, tau, c), full:mm(c)) < 1e-12)
    assert.is_true(maxdiff(torch.ormqr(h, tau, c, 'L', 'T'), full:t():mm(c)) < 1e-12)
    assert.is_true(maxdiff(torch.ormqr(h, tau, c:t(), 'R'), c:t():mm(full)) < 1e-12)
    raises('torch.ormqr: the reflectors 6x4 must have 2 rows to multiply 6x2 from the right', torch.ormqr, h, tau, c, 'R')
  end)
end)

describe('Torch7 forms in float32, on batches, and their errors', function()
  it('float32 uses the single-precision routines', function()
    local x = torch.gesv(b:float(), a:float())
    assert.are.equal('float32', x.dtype)
    assert.is_true((b:float() - a:float():mm(x)):abs():max():item() < 1e-4)
    local u, s, v = torch.svd(a:float())
    assert.is_true((u:mm(torch.diag(s)):mm(v:t()) - a:float()):abs():max():item() < 1e-4)
  end)

  it('det and logdet at the top level and as methods', function()
    assert.is_true(math.abs(torch.det(a):item() - a:det():item()) < 1e-9)
    assert.is_true(math.abs(torch.logdet(spd):item() - math.log(spd:det():item())) < 1e-12)
  end)

  it('refuse wrong dims and dtypes, naming the function', function()
    raises('torch.gesv: A must be 2-D, got 2x5x5', torch.gesv, b, torch.stack({a, a}))
    raises('torch.potrf: A must be a float32 or float64 tensor, got int64', torch.potrf,
           torch.ones(2, 2, {dtype = 'int64'}))
    raises('torch.symeig: A must be square (or a batch of square matrices), got 5x3', torch.symeig, b)
    raises("torch.svd: jobz must be 'S' or 'A', got 'X'", torch.svd, a, 'X')
  end)
end)
