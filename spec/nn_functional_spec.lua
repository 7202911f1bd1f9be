-- nn_functional_spec.lua: nn.functional (nn.F) -- every function's forward against PyTorch,
-- gradients of every differentiable one with gradcheck in float64, a few second derivatives,
-- the training/eval behaviour of dropout and batch_norm, and the errors bad input raises.
--
-- REF was computed with PyTorch 2.15.0 (torch.nn.functional, float64) applied to the inputs
-- written below (X, Y, W, ...) with the same options; PyTorch's class targets were the 0-based
-- labels, ours are the same labels plus 1.
local torch = require 'torch'
local F = require 'nn.functional'

local REF = dofile('spec/ref/nn_functional_ref.lua')

local function T(values) return torch.tensor(values, {dtype = 'float64'}) end
local function L(values) return torch.tensor(values, {dtype = 'int64'}) end
local function leaf(t) return t:clone():requires_grad_() end

local X = T({{0.25, -1.5, 0.75, 2.0}, {-0.5, 1.25, -2.25, 0.1}, {1.5, -0.3, 0.6, -1.1}})
local Y = T({{0.1, -1.0, 1.2, 1.5}, {0.3, 0.9, -2.0, -0.4}, {1.0, 0.2, 0.1, -0.7}})
local W = T({{0.2, -0.1, 0.4, 0.3}, {-0.5, 0.25, 0.1, -0.2}})
local B = T({0.1, -0.3})
local X3 = T({{{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}, {0.0, 1.0, -2.0}, {0.3, -0.6, 0.9}},
              {{-1.2, 0.4, 0.8}, {2.2, -0.1, 0.6}, {1.1, -1.3, 0.2}, {-0.4, 0.7, -0.9}}})   -- 2x4x3
local CW = T({0.5, 1.0, 2.0, 1.5})
local TGT = L({2, 4, 1})
local SP_LOGITS = T(REF.sp_logits):view(2, 3, 2, 2)
local SP_TGT = L({{{1, 3}, {2, 2}}, {{3, 1}, {1, 2}}})
local BT = T({{1.0, 0.0, 1.0, 0.0}, {0.5, 1.0, 0.0, 0.25}, {0.0, 1.0, 0.75, 1.0}})
local PW = T({1.0, 2.0, 0.5, 3.0})
local KT = T({{0.5, 0.5, 0.0, 0.0}, {0.1, 0.2, 0.3, 0.4}, {0.0, 0.25, 0.25, 0.5}})
local CY = T({1.0, -1.0, 1.0})
local BW = T({{{0.1, -0.2}, {0.3, 0.4}, {-0.5, 0.6}}, {{0.7, 0.1}, {-0.2, 0.05}, {0.3, -0.4}}})

-- t agrees with PyTorch's REF[name] in size and values (relative tolerance above 1)
local function check(name, t, tol)
  local ref = REF[name]
  assert(ref, 'no reference ' .. name)
  assert.are.same(ref.size, t:size():totable())
  local values = t:_flat_values()
  assert.are.equal(#ref, #values)
  for i = 1, #ref do
    if not (math.abs(values[i] - ref[i]) <= (tol or 1e-12) * math.max(1, math.abs(ref[i]))) then
      error(string.format('%s, element %d: got %.17g, PyTorch %.17g', name, i, values[i], ref[i]), 2)
    end
  end
end

local gradcheck, gradgradcheck = torch.autograd.gradcheck, torch.autograd.gradgradcheck

-- the error fn raises contains every plain-text fragment
local function raises(fn, ...)
  local ok, err = pcall(fn)
  assert.is_false(ok, 'expected an error')
  for _, fragment in ipairs({...}) do
    if not tostring(err):find(fragment, 1, true) then
      error(string.format('error %q lacks %q', tostring(err), fragment), 2)
    end
  end
end

describe('nn.functional activations', function()
  it('match PyTorch', function()
    check('relu', F.relu(X))
    check('relu6', F.relu6(X * 4))
    check('leaky_relu', F.leaky_relu(X, 0.2))
    check('leaky_relu', F.leaky_relu(X, {negative_slope = 0.2}))
    check('elu', F.elu(X, 1.5))
    check('gelu', F.gelu(X))
    check('gelu_tanh', F.gelu(X, {approximate = 'tanh'}))
    check('silu', F.silu(X))
    check('sigmoid', F.sigmoid(X))
    check('logsigmoid', F.logsigmoid(X))
    check('tanh', F.tanh(X))
    check('softmax', F.softmax(X, 2))
    check('softmax', F.softmax(X, -1))
    check('log_softmax', F.log_softmax(X, 1))
    check('log_softmax', F.log_softmax(X, {dim = 1}))
    check('softmin', F.softmin(X, 2))
    check('softplus', F.softplus(X, {beta = 2, threshold = 3}))
    check('softplus', F.softplus(X, 2, 3))
    check('hardtanh', F.hardtanh(X, -0.5, 1.0))
    check('prelu', F.prelu(X, T({0.1, 0.2, 0.3, 0.4})))
    check('prelu1', F.prelu(X, T({0.25})))
  end)

  it('keep the default parameters of PyTorch', function()
    local x = T({-3.0, -0.5, 0.5, 30.0})
    assert.are.same({-0.03, -0.005, 0.5, 30}, F.leaky_relu(x):_flat_values())
    assert.are.same({-1, -0.5, 0.5, 1}, F.hardtanh(x):_flat_values())
    assert.are.equal(30, F.softplus(x)[4])                  -- threshold 20: linear
    assert.is_true(math.abs(F.elu(x)[1] - (math.exp(-3) - 1)) < 1e-15)
    assert.is_true(math.abs(F.softmax(x, 1):sum():item() - 1) < 1e-15)
  end)

  it('have gradients that pass gradcheck', function()
    local x = leaf(X)
    for _, fn in ipairs({F.relu, F.silu, F.sigmoid, F.logsigmoid, F.tanh, F.gelu,
                         function(t) return F.relu6(t * 2.5) end,
                         function(t) return F.leaky_relu(t, 0.2) end,
                         function(t) return F.elu(t, 1.5) end,
                         function(t) return F.gelu(t, {approximate = 'tanh'}) end,
                         function(t) return F.softmax(t, 2) end,
                         function(t) return F.log_softmax(t, 1) end,
                         function(t) return F.softmin(t, 2) end,
                         function(t) return F.softplus(t, {beta = 2}) end,
                         function(t) return F.softplus(t * 20, {beta = 0.5, threshold = 4}) end,
                         function(t) return F.hardtanh(t, -0.4, 1.0) end}) do
      assert.is_true(gradcheck(fn, {x}))
    end
    assert.is_true(gradcheck(F.prelu, {x, leaf(T({0.1, 0.2, 0.3, 0.4}))}))
    assert.is_true(gradcheck(F.prelu, {x, leaf(T({0.25}))}))
  end)

  it('have second derivatives (gelu both ways, softplus, elu)', function()
    local x = leaf(X)
    assert.is_true(gradgradcheck(F.gelu, {x}))
    assert.is_true(gradgradcheck(function(t) return F.gelu(t, {approximate = 'tanh'}) end, {x}))
    assert.is_true(gradgradcheck(function(t) return F.softplus(t, {beta = 2}) end, {x}))
    assert.is_true(gradgradcheck(F.elu, {x}))
  end)

  -- the gradient at each kink, as PyTorch 2.15 gives it
  it('take PyTorch\'s gradient at their kinks', function()
    local function grad(f, v)
      local x = torch.tensor(v, {requires_grad = true})
      f(x):sum():backward()
      return x.grad:totable()
    end
    local function near(want, got, what)
      for i = 1, #want do assert(math.abs(want[i] - got[i]) < 1e-6, what .. ' at ' .. i .. ': ' .. got[i]) end
    end
    near({1.5, 0.5518192052841187, 1}, grad(function(x) return F.elu(x, 1.5) end, {0.0, -1, 1}), 'elu')
    near({0, 1, 0}, grad(F.relu6, {0.0, 3, 6}), 'relu6')
    near({0, 1, 0}, grad(F.hardtanh, {-1.0, 0, 1}), 'hardtanh')
    near({0.2, 0.2, 1}, grad(function(x) return F.leaky_relu(x, 0.2) end, {0.0, -1, 1}), 'leaky_relu')
  end)

  it('refuse bad arguments', function()
    raises(function() F.relu(L({1, 2})) end, 'F.relu', 'floating point', 'int64')
    raises(function() F.softmax(X) end, 'F.softmax', 'dim is required', '3x4')
    raises(function() F.gelu(X, {approximate = 'fast'}) end, 'F.gelu', "'none' or 'tanh'")
    raises(function() F.hardtanh(X, 1, -1) end, 'F.hardtanh', 'min_val')
    raises(function() F.prelu(X, T({0.1, 0.2})) end, 'F.prelu', '2 elements', '3x4', '4 channels')
  end)
end)

describe('nn.functional linear maps', function()
  it('match PyTorch', function()
    check('linear', F.linear(X, W, B))
    check('linear_nobias', F.linear(X, W))
    check('linear3d', F.linear(X3:permute(1, 3, 2), W, B))
    check('linear3d', F.linear(X3:permute(1, 3, 2):contiguous(), W, B))   -- one addmm over the tokens
    check('bilinear', F.bilinear(X:narrow(1, 1, 2):narrow(2, 1, 3), Y:narrow(1, 1, 2):narrow(2, 1, 2), BW, B))
  end)

  it('have gradients that pass gradcheck', function()
    assert.is_true(gradcheck(F.linear, {leaf(X), leaf(W), leaf(B)}))
    assert.is_true(gradcheck(F.linear, {leaf(X3:permute(1, 3, 2)), leaf(W), leaf(B)}))
    assert.is_true(gradcheck(F.linear, {leaf(X3:permute(1, 3, 2):contiguous()), leaf(W), leaf(B)}))
    assert.is_true(gradcheck(F.bilinear, {leaf(X:narrow(2, 1, 3)), leaf(Y:narrow(2, 1, 2)), leaf(BW), leaf(B)}))
    assert.is_true(gradcheck(F.bilinear, {leaf(X3:narrow(3, 1, 3)), leaf(X3:narrow(3, 2, 2)), leaf(BW), leaf(B)}))
  end)

  it('name the shapes that do not fit', function()
    raises(function() F.linear(X, W:t()) end, 'F.linear', '3x4', '4x2')
    raises(function() F.linear(X, W, T({1, 2, 3})) end, 'F.linear', 'bias', '2 elements')
    raises(function() F.bilinear(X, Y, BW) end, 'F.bilinear', '3x4', '2x3x2')
  end)
end)

describe('nn.functional normalization', function()
  it('matches PyTorch', function()
    check('layer_norm', F.layer_norm(X, 4, T({1.0, 0.5, 2.0, -1.0}), T({0.0, 0.1, 0.2, 0.3})))
    check('layer_norm', F.layer_norm(X, {4}, T({1.0, 0.5, 2.0, -1.0}), T({0.0, 0.1, 0.2, 0.3})))
    check('layer_norm2', F.layer_norm(X, X:size(), nil, nil, 1e-3))
    check('group_norm', F.group_norm(X3, 2, CW, T({0.1, 0.2, 0.3, 0.4})))
    check('normalize', F.normalize(X))
    check('normalize_p1', F.normalize(X, {p = 1, dim = 1}))
    check('normalize_p1', F.normalize(X, 1, 1))
  end)

  it('batch_norm uses batch statistics in training and updates the running ones in place', function()
    local rm, rv = T({0.1, -0.2, 0.3, 0.0}), T({1.0, 2.0, 0.5, 1.5})
    local x = leaf(X3)
    local y = F.batch_norm(x, rm, rv, CW, T({0.1, 0.2, 0.3, 0.4}), true, 0.2)
    check('batch_norm_train', y)
    check('batch_norm_rm', rm)
    check('batch_norm_rv', rv)
    assert.is_false(rm.requires_grad)
    assert.is_nil(rm.grad_fn)
    local rm2, rv2 = T({0.1, -0.2, 0.3, 0.0}), T({1.0, 2.0, 0.5, 1.5})
    check('batch_norm_train2d', F.batch_norm(X, rm2, rv2, nil, nil, true))
    check('batch_norm_rm2d', rm2)
    check('batch_norm_rv2d', rv2)
  end)

  it('batch_norm in eval uses the running statistics and leaves them alone', function()
    local rm, rv = T({0.1, -0.2, 0.3, 0.0}), T({1.0, 2.0, 0.5, 1.5})
    check('batch_norm_eval', F.batch_norm(X3, rm, rv, CW, nil, false, 0.1, 1e-3))
    assert.are.same({0.1, -0.2, 0.3, 0.0}, rm:_flat_values())
    assert.are.same({1.0, 2.0, 0.5, 1.5}, rv:_flat_values())
    check('batch_norm_eval', F.batch_norm(X3, rm, rv, CW, nil, nil, nil, 1e-3))   -- training defaults to false
  end)

  it('have gradients that pass gradcheck', function()
    local w4, b4 = leaf(T({1.0, 0.5, 2.0, -1.0})), leaf(T({0.0, 0.1, 0.2, 0.3}))
    assert.is_true(gradcheck(function(x, w, b) return F.layer_norm(x, 4, w, b) end, {leaf(X), w4, b4}))
    assert.is_true(gradcheck(function(x) return F.layer_norm(x, {3, 4}) end, {leaf(X3:narrow(3, 1, 3):transpose(2, 3))}))
    assert.is_true(gradcheck(function(x, w, b) return F.group_norm(x, 2, w, b) end, {leaf(X3), leaf(CW), b4}))
    assert.is_true(gradcheck(function(x, w, b) return F.batch_norm(x, nil, nil, w, b, true) end, {leaf(X3), leaf(CW), b4}))
    assert.is_true(gradcheck(function(x, w, b) return F.batch_norm(x, nil, nil, w, b, true) end, {leaf(X), leaf(CW), b4}))
    local rm, rv = T({0.1, -0.2, 0.3, 0.0}), T({1.0, 2.0, 0.5, 1.5})
    assert.is_true(gradcheck(function(x, w, b) return F.batch_norm(x, rm, rv, w, b, false) end, {leaf(X3), leaf(CW), b4}))
    assert.is_true(gradcheck(function(x) return F.normalize(x) end, {leaf(X)}))
    assert.is_true(gradcheck(function(x) return F.normalize(x, {p = 3, dim = 1}) end, {leaf(X)}))
  end)

  it('have second derivatives (layer_norm, batch_norm)', function()
    local bias = T({0.0, 0.1, 0.2, 0.3})
    assert.is_true(gradgradcheck(function(x, w) return F.layer_norm(x, 4, w, bias) end,
                                 {leaf(X), leaf(T({1.0, 0.5, 2.0, -1.0}))}))
    assert.is_true(gradgradcheck(function(x, w) return F.batch_norm(x, nil, nil, w, nil, true) end, {leaf(X3), leaf(CW)}))
  end)

  it('name the shapes that do not fit', function()
    raises(function() F.layer_norm(X, 3) end, 'F.layer_norm', '3x4', 'normalized_shape 3')
    raises(function() F.layer_norm(X, {2, 4}) end, 'F.layer_norm', 'normalized_shape 2x4')
    raises(function() F.group_norm(X3, 3) end, 'F.group_norm', '4 channels', '2x4x3', '3 groups')
    raises(function() F.batch_norm(T({{1, 2, 3, 4}}), nil, nil, nil, nil, true) end,
           'F.batch_norm', 'more than 1 value per channel', '1x4')
    raises(function() F.batch_norm(X3, nil, nil) end, 'F.batch_norm', 'running_mean and running_var are required')
    raises(function() F.batch_norm(X3, T({0, 0}), T({1, 1}), nil, nil, false) end, 'F.batch_norm', 'running_mean', '4 elements')
  end)
end)

describe('nn.functional dropout', function()
  it('scales kept elements by 1/(1-p) while training and is the identity otherwise', function()
    torch.manual_seed(5)
    local x = torch.ones(200, 100, {dtype = 'float64'})
    local y = F.dropout(x, 0.3)                      -- training defaults to true, as PyTorch
    local kept = y:ne(0):sum():item()
    assert.is_true(math.abs(kept / 20000 - 0.7) < 0.02)
    assert.is_true(math.abs(y:sum():item() / kept - 1 / 0.7) < 1e-12)
    assert.are.equal(x, F.dropout(x, 0.3, false))
    assert.are.equal(x, F.dropout(x, {p = 0.3, training = false}))
    assert.are.equal(x, F.dropout(x, 0))
    assert.are.equal(0, F.dropout(x, 1):abs():sum():item())
  end)

  it('dropout2d zeroes whole channels', function()
    torch.manual_seed(3)
    local x = torch.ones(8, 16, 3, 3, {dtype = 'float64'})
    local y = F.dropout2d(x, 0.5)
    local per_channel = y:reshape(8, 16, 9)
    local dropped = 0
    for n = 1, 8 do
      for c = 1, 16 do
        local v = per_channel[n][c]
        assert.is_true(v:eq(v[1]):all():item())       -- one value per channel
        assert.is_true(v[1] == 0 or v[1] == 2)
        if v[1] == 0 then dropped = dropped + 1 end
      end
    end
    assert.is_true(dropped > 40 and dropped < 88)
    local y3 = F.dropout2d(torch.ones(16, 2, 2, {dtype = 'float64'}), 0.5)   -- (C, H, W)
    for c = 1, 16 do assert.is_true(y3[c]:eq(y3[c][1][1]):all():item()) end
    assert.are.equal(x, F.dropout2d(x, 0.5, false))
  end)

  it('has the gradient of its mask', function()
    local fn = function(t) torch.manual_seed(11); return F.dropout(t, 0.4) end
    assert.is_true(gradcheck(fn, {leaf(X)}))
    local fn2 = function(t) torch.manual_seed(11); return F.dropout2d(t, 0.4) end
    assert.is_true(gradcheck(fn2, {leaf(X3:view(2, 4, 3, 1))}))
  end)

  it('refuses probabilities outside [0, 1]', function()
    raises(function() F.dropout(X, 1.5) end, 'F.dropout', 'between 0 and 1', '1.5')
    raises(function() F.dropout2d(X, 0.5) end, 'F.dropout2d', '3-D', '3x4')
  end)
end)

describe('nn.functional embedding and one_hot', function()
  local weight = T({{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}, {0.7, 0.8}, {3.0, 4.0}})

  it('looks up 1-based rows', function()
    local y = F.embedding(L({{1, 5}, {3, 1}}), weight)
    assert.are.same({2, 2, 2}, y:size():totable())
    assert.are.same({0.1, 0.2, 3.0, 4.0, 0.5, 0.6, 0.1, 0.2}, y:_flat_values())
    assert.are.same({0.7, 0.8}, F.embedding(L(4), weight):_flat_values())
  end)

  it('gives the padding row no gradient', function()
    local w = leaf(weight)
    local y = F.embedding(L({{1, 2}, {2, 3}}), w, {padding_idx = 2})
    assert.are.same({0.1, 0.2, 0.3, 0.4, 0.3, 0.4, 0.5, 0.6}, y:_flat_values())
    ;(y * T({1.0, 2.0})):sum():backward()
    assert.are.same({1, 2, 0, 0, 1, 2, 0, 0, 0, 0}, w.grad:_flat_values())
    local w2 = leaf(weight)
    F.embedding(L({{5, 2, 5}, {4, 5, 2}}), w2, {padding_idx = -1}):sum():backward()   -- -1: the last row
    assert.are.same({0, 0, 2, 2, 0, 0, 1, 1, 0, 0}, w2.grad:_flat_values())
    assert.is_true(gradcheck(function(t) return F.embedding(L({{1, 2, 2}, {4, 5, 2}}), t) end, {leaf(weight)}))
  end)

  it('renormalizes the rows it looks up to max_norm', function()
    local w = weight:clone()
    F.embedding(L({5, 1}), w, {max_norm = 1})
    assert.is_true(math.abs(w[5]:norm():item() - 1) < 1e-6)
    assert.are.same({0.1, 0.2}, w[1]:_flat_values())
    assert.are.same({0.7, 0.8}, w[4]:_flat_values())
  end)

  it('one_hot puts a 1 at each 1-based index', function()
    local y = F.one_hot(L({{1, 3}, {2, 3}}))
    assert.are.equal('int64', y.dtype)
    assert.are.same({2, 2, 3}, y:size():totable())
    assert.are.same({1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1}, y:_flat_values())
    assert.are.same({0, 1, 0, 0}, F.one_hot(L(2), 4):_flat_values())
  end)

  it('refuses indices out of range', function()
    raises(function() F.embedding(L({1, 6}), weight) end, 'F.embedding', 'index 6 out of range 1..5')
    raises(function() F.embedding(L({0, 1}), weight) end, 'F.embedding', 'index 0 out of range 1..5', '1-based')
    raises(function() F.embedding(T({1, 2}), weight) end, 'F.embedding', 'int64', 'float64')
    raises(function() F.embedding(L({1}), weight, {padding_idx = 6}) end, 'F.embedding', 'padding_idx 6')
    raises(function() F.one_hot(L({1, 4}), 3) end, 'F.one_hot', 'index 4 out of range 1..3')
    raises(function() F.one_hot(L({0, 1})) end, 'F.one_hot', 'index 0 out of range')
  end)
end)

describe('nn.functional.scaled_dot_product_attention', function()
  local Q, K, V = X3[1]:narrow(1, 1, 3), X3[2]:narrow(1, 1, 3), Y:narrow(2, 1, 3)
  local mask = torch.tensor({{true, false, true}, {true, true, false}, {false, true, true}})

  it('matches PyTorch with a causal or a bool mask', function()
    check('sdpa_causal', F.scaled_dot_product_attention(Q, K, V, {is_causal = true}))
    check('sdpa_mask', F.scaled_dot_product_attention(Q, K, V, {attn_mask = mask, scale = 0.7}))
    local additive = torch.where(mask, 0.0, -math.huge):double()
    check('sdpa_mask', F.scaled_dot_product_attention(Q, K, V, {attn_mask = additive, scale = 0.7}))
  end)

  it('has gradients that pass gradcheck', function()
    assert.is_true(gradcheck(function(q, k, v) return F.scaled_dot_product_attention(q, k, v, {is_causal = true}) end,
                             {leaf(Q), leaf(K), leaf(V)}))
  end)
end)

describe('nn.functional.cross_entropy', function()
  it('matches PyTorch for class indices', function()
    check('ce', F.cross_entropy(X, TGT))
    check('ce_sum', F.cross_entropy(X, TGT, {reduction = 'sum'}))
    check('ce_none', F.cross_entropy(X, TGT, {reduction = 'none'}))
    check('ce_w', F.cross_entropy(X, TGT, {weight = CW}))
    check('ce_w_none', F.cross_entropy(X, TGT, {weight = CW, reduction = 'none'}))
    check('ce_ign', F.cross_entropy(X, TGT, {ignore_index = 4}))
    check('ce_ign_w', F.cross_entropy(X, TGT, {weight = CW, ignore_index = 4}))
    check('ce_ign_none', F.cross_entropy(X, TGT, {ignore_index = 4, reduction = 'none'}))
    check('ce_ign', F.cross_entropy(X, L({2, -100, 1})))
    check('ce_ls', F.cross_entropy(X, TGT, {label_smoothing = 0.2}))
    check('ce_ls_w_ign', F.cross_entropy(X, TGT, {weight = CW, ignore_index = 4, label_smoothing = 0.3}))
    check('ce_ls_w_ign_sum', F.cross_entropy(X, TGT, {weight = CW, ignore_index = 4, label_smoothing = 0.3, reduction = 'sum'}))
    check('ce_ls_none', F.cross_entropy(X, TGT, {ignore_index = 1, label_smoothing = 0.3, reduction = 'none'}))
    check('ce_1d', F.cross_entropy(X[1], L(2)))
    check('ce_spatial', F.cross_entropy(SP_LOGITS, SP_TGT))
    check('ce_spatial_w', F.cross_entropy(SP_LOGITS, SP_TGT, {weight = CW:narrow(1, 1, 3), label_smoothing = 0.1}))
    check('ce_spatial_none', F.cross_entropy(SP_LOGITS, SP_TGT, {reduction = 'none'}))
  end)

  it('matches PyTorch for class probabilities', function()
    local prob = F.softmax(Y, 2)
    check('ce_prob', F.cross_entropy(X, prob))
    check('ce_prob_ls_w', F.cross_entropy(X, prob, {weight = CW, label_smoothing = 0.1}))
    check('ce_prob_none', F.cross_entropy(X, prob, {reduction = 'none'}))
  end)

  it('is NaN for a mean over targets that are all ignored, as PyTorch', function()
    local loss = F.cross_entropy(X, L({-100, -100, -100}))
    assert.is_true(loss:item() ~= loss:item())
    assert.are.equal(0, F.cross_entropy(X, L({-100, -100, -100}), {reduction = 'sum'}):item())
  end)

  it('has gradients that pass gradcheck', function()
    local cases = {
      {}, {reduction = 'sum'}, {reduction = 'none'}, {weight = CW}, {ignore_index = 4},
      {weight = CW, ignore_index = 4, reduction = 'none'}, {label_smoothing = 0.2},
      {weight = CW, ignore_index = 4, label_smoothing = 0.3},
      {weight = CW, ignore_index = 1, label_smoothing = 0.3, reduction = 'sum'},
    }
    for _, opts in ipairs(cases) do
      assert.is_true(gradcheck(function(x) return F.cross_entropy(x, TGT, opts) end, {leaf(X)}))
    end
    assert.is_true(gradcheck(function(x, w) return F.cross_entropy(x, TGT, {weight = w, ignore_index = 4}) end, {leaf(X), leaf(CW)}))
    assert.is_true(gradcheck(function(x) return F.cross_entropy(x, SP_TGT, {weight = CW:narrow(1, 1, 3), label_smoothing = 0.1}) end,
                             {leaf(SP_LOGITS)}))
    assert.is_true(gradcheck(function(x) return F.cross_entropy(x, L(3)) end, {leaf(X[2])}))
    assert.is_true(gradcheck(function(x, p) return F.cross_entropy(x, p, {weight = CW, label_smoothing = 0.1}) end,
                             {leaf(X), leaf(F.softmax(Y, 2))}))
  end)

  it('has second derivatives', function()
    assert.is_true(gradgradcheck(function(x) return F.cross_entropy(x, TGT) end, {leaf(X)}))
    assert.is_true(gradgradcheck(function(x) return F.cross_entropy(x, TGT, {weight = CW, ignore_index = 4, label_smoothing = 0.3}) end,
                                 {leaf(X)}))
  end)

  it('names the function and the shapes for bad targets', function()
    raises(function() F.cross_entropy(X, L({2, 5, 1})) end, 'F.cross_entropy', 'target 5 is out of range 1..4', '3x4')
    raises(function() F.cross_entropy(X, L({0, 1, 1})) end, 'F.cross_entropy', 'target 0 is out of range 1..4', '1-based')
    raises(function() F.cross_entropy(X, L({2, 4, -100}), {ignore_index = 4}) end, 'target -100 is out of range 1..4')
    raises(function() F.cross_entropy(X, L({1, 2})) end, 'F.cross_entropy', 'input of size 3x4 expects a target of size 3, got 2')
    raises(function() F.cross_entropy(SP_LOGITS, L({1, 2})) end, 'expects a target of size 2x2x2, got 2')
    raises(function() F.cross_entropy(X, torch.tensor({1, 2, 3}, {dtype = 'int32'})) end, 'F.cross_entropy', 'int64', 'int32')
    raises(function() F.cross_entropy(X, T({1, 2, 3})) end, 'F.cross_entropy', 'class probabilities', 'size 3x4, got 3')
    raises(function() F.cross_entropy(X, F.softmax(Y, 2), {ignore_index = 1}) end, 'ignore_index is not supported')
    raises(function() F.cross_entropy(X, TGT, {weight = T({1, 2})}) end, 'F.cross_entropy', 'weight', '4 elements', 'size 2')
    raises(function() F.cross_entropy(X, TGT, {label_smoothing = 1.5}) end, 'label_smoothing')
    raises(function() F.cross_entropy(X, TGT, {reduction = 'avg'}) end, 'F.cross_entropy', "reduction must be", 'avg')
  end)
end)

describe('nn.functional.nll_loss', function()
  it('matches PyTorch', function()
    check('nll', F.nll_loss(F.log_softmax(X, 2), TGT, {weight = CW}))
    check('nll_none', F.nll_loss(X, TGT, {reduction = 'none'}))
    check('ce_ign', F.nll_loss(F.log_softmax(X, 2), L({2, -100, 1})))
  end)

  it('has gradients that pass gradcheck', function()
    assert.is_true(gradcheck(function(x) return F.nll_loss(x, TGT, {weight = CW, ignore_index = 1}) end, {leaf(X)}))
    assert.is_true(gradcheck(function(x) return F.nll_loss(x, SP_TGT, {reduction = 'none'}) end, {leaf(SP_LOGITS)}))
  end)

  it('refuses bad targets', function()
    raises(function() F.nll_loss(X, L({2, 7, 1})) end, 'F.nll_loss', 'target 7 is out of range 1..4')
    raises(function() F.nll_loss(X, T({2, 3, 1})) end, 'F.nll_loss', 'int64', 'float64')
  end)
end)

describe('nn.functional regression losses', function()
  it('match PyTorch', function()
    check('mse', F.mse_loss(X, Y))
    check('mse_none', F.mse_loss(X, Y, {reduction = 'none'}))
    check('mse_sum', F.mse_loss(X, Y, {reduction = 'sum'}))
    check('l1', F.l1_loss(X, Y))
    check('l1_none', F.l1_loss(X, Y, {reduction = 'none'}))
    check('smooth_l1', F.smooth_l1_loss(X, Y, {beta = 0.5, reduction = 'none'}))
    check('smooth_l1_mean', F.smooth_l1_loss(X, Y))
    check('huber', F.huber_loss(X, Y, {delta = 0.5, reduction = 'none'}))
    check('l1', F.smooth_l1_loss(X, Y, {beta = 0}))
  end)

  it('have gradients that pass gradcheck', function()
    for _, fn in ipairs({F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss,
                         function(a, b) return F.smooth_l1_loss(a, b, {beta = 0.3, reduction = 'none'}) end,
                         function(a, b) return F.mse_loss(a, b, {reduction = 'sum'}) end}) do
      assert.is_true(gradcheck(fn, {leaf(X), leaf(Y)}))
    end
  end)

  it('refuse targets of another size instead of broadcasting', function()
    raises(function() F.mse_loss(X:narrow(2, 1, 1), X:select(2, 1)) end, 'F.mse_loss', 'input size 3x1', 'target size 3')
    raises(function() F.l1_loss(X, Y:t()) end, 'F.l1_loss', '3x4', '4x3')
    raises(function() F.smooth_l1_loss(X, Y, {beta = -1}) end, 'F.smooth_l1_loss', 'beta')
  end)
end)

describe('nn.functional binary and divergence losses', function()
  local P = X:sigmoid()

  it('match PyTorch', function()
    check('bce', F.binary_cross_entropy(P, BT))
    check('bce_w_none', F.binary_cross_entropy(P, BT, {weight = PW, reduction = 'none'}))
    check('bce_edge', F.binary_cross_entropy(T({0.0, 1.0, 0.0, 0.5}), T({1.0, 0.0, 0.0, 1.0}), {reduction = 'none'}))
    check('bcel', F.binary_cross_entropy_with_logits(X, BT))
    check('bcel_pw_w', F.binary_cross_entropy_with_logits(X * 10, BT, {weight = T({{1.0}, {2.0}, {0.5}}), pos_weight = PW,
                                                                       reduction = 'none'}), 1e-9)
    local ls = F.log_softmax(X, 2)
    check('kl_batchmean', F.kl_div(ls, KT, {reduction = 'batchmean'}))
    check('kl_none', F.kl_div(ls, KT, {reduction = 'none'}))
    check('kl_mean', F.kl_div(ls, KT))
    check('kl_logt', F.kl_div(ls, F.log_softmax(Y, 2), {reduction = 'sum', log_target = true}))
    check('cosine', F.cosine_embedding_loss(X, Y, CY, {margin = 0.2, reduction = 'none'}))
    check('cosine_mean', F.cosine_embedding_loss(X, -Y, -CY))
    check('cosine_1d', F.cosine_embedding_loss(X[1], Y[1], T(-1.0), {margin = -0.5}))
  end)

  it('have gradients that pass gradcheck', function()
    assert.is_true(gradcheck(function(p, y) return F.binary_cross_entropy(p, y, {weight = PW}) end, {leaf(P), leaf(BT)}))
    assert.is_true(gradcheck(function(x, y, w, pw)
      return F.binary_cross_entropy_with_logits(x, y, {weight = w, pos_weight = pw, reduction = 'none'})
    end, {leaf(X), leaf(BT), leaf(T({{1.0}, {2.0}, {0.5}})), leaf(PW)}))
    assert.is_true(gradcheck(function(a, t) return F.kl_div(a, t, {reduction = 'batchmean'}) end,
                             {leaf(F.log_softmax(X, 2)), leaf(F.softmax(Y, 2))}))
    assert.is_true(gradcheck(function(a) return F.kl_div(a, KT, {reduction = 'none'}) end, {leaf(F.log_softmax(X, 2))}))
    assert.is_true(gradcheck(function(a, t) return F.kl_div(a, t, {log_target = true}) end, {leaf(X), leaf(Y)}))
    assert.is_true(gradcheck(function(a, b) return F.cosine_embedding_loss(a, b, CY, {margin = 0.2, reduction = 'none'}) end,
                             {leaf(X), leaf(Y)}))
  end)

  it('have zero (not NaN) gradients where binary_cross_entropy clamps its logs', function()
    local p = leaf(T({0.0, 1.0, 0.25}))
    F.binary_cross_entropy(p, T({1.0, 0.0, 1.0}), {reduction = 'sum'}):backward()
    assert.are.same({0, 0, -4}, p.grad:_flat_values())
  end)

  it('has a second derivative for binary_cross_entropy_with_logits', function()
    assert.is_true(gradgradcheck(function(x) return F.binary_cross_entropy_with_logits(x, BT, {pos_weight = PW}) end, {leaf(X)}))
  end)

  it('refuse bad input', function()
    raises(function() F.binary_cross_entropy(X, BT) end, 'F.binary_cross_entropy', 'between 0 and 1')
    raises(function() F.binary_cross_entropy(P, BT:narrow(1, 1, 2)) end, 'F.binary_cross_entropy', '3x4', '2x4')
    raises(function() F.binary_cross_entropy_with_logits(X, BT:view(-1)) end, 'F.binary_cross_entropy_with_logits', '3x4', '12')
    raises(function() F.kl_div(X, KT:t()) end, 'F.kl_div', '3x4', '4x3')
    raises(function() F.cosine_embedding_loss(X, Y, T({1, 0, 1})) end, 'F.cosine_embedding_loss', '1 or -1')
    raises(function() F.cosine_embedding_loss(X, Y, T({1, 1})) end, 'F.cosine_embedding_loss', '3x4', 'target 2')
  end)
end)
