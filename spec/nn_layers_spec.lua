-- nn layers, activations and criteria: forward values against PyTorch
-- (spec/ref/gen_nn_layers.py: parameters and inputs follow fixed formulas
-- both sides compute), gradients by gradcheck, train/eval behaviour.
local torch = require 'torch'
local nn = require 'nn'
local REF = dofile('spec/ref/nn_layers_ref.lua')

torch.set_default_dtype('float64')
teardown(function() torch.set_default_dtype('float32') end)

-- the formulas of gen_nn_layers.py
local function fill(module)
  torch.no_grad(function()
    for _, pair in ipairs(module:named_parameters()) do
      local name, p = pair[1], pair[2]
      local s = 0
      for i = 1, #name do s = s + name:byte(i) end
      s = (s % 97) / 7
      local j = torch.arange(0, p:numel(), {dtype = 'float64'})
      p:copy_(((j * 0.9 + s):sin() * 0.4):view(p:size()))
    end
  end)
  return module
end

local function inp(c, ...)
  local shape = {...}
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return ((torch.arange(0, n, {dtype = 'float64'}) * 0.3 + c):cos() * 0.5):view(shape)
end

local function close(got, want, tol)
  tol = tol or 1e-10
  assert(torch.is_tensor(got), 'expected a tensor, got ' .. type(got))
  local size = got:size()
  assert.are.same(want.size, size:totable(), 'size')
  local vals = got:detach():contiguous():_flat_values()
  for i, v in ipairs(vals) do
    if not (math.abs(v - want[i]) <= tol * math.max(1, math.abs(want[i]))) then
      error(string.format('element %d: %.12g, PyTorch %.12g', i, v, want[i]), 2)
    end
  end
end

local function gradcheck(f, inputs) assert.is_true(torch.autograd.gradcheck(f, inputs, {atol = 1e-6})) end

describe('recurrent layers', function()
  local x = inp(1, 4, 2, 3)
  it('RNN (2 layers, and relu bidirectional) matches PyTorch', function()
    local o, h = fill(nn.RNN(3, 5, {num_layers = 2}))(x)
    close(o, REF.rnn[1]); close(h, REF.rnn[2])
    o, h = fill(nn.RNN(3, 5, {nonlinearity = 'relu', bidirectional = true}))(x)
    close(o, REF.rnn_relu_bi[1]); close(h, REF.rnn_relu_bi[2])
  end)
  it('LSTM (2 layers, bidirectional) matches PyTorch, returning {h_n, c_n}', function()
    local o, hc = fill(nn.LSTM(3, 4, {num_layers = 2, bidirectional = true}))(x)
    close(o, REF.lstm[1]); close(hc[1], REF.lstm[2]); close(hc[2], REF.lstm[3])
  end)
  it('GRU with batch_first and with an initial state matches PyTorch', function()
    local o, h = fill(nn.GRU(3, 4, {batch_first = true}))(x:transpose(1, 2):contiguous())
    close(o, REF.gru_bf[1]); close(h, REF.gru_bf[2])
    o, h = fill(nn.GRU(3, 4))(x, inp(2, 1, 2, 4))
    close(o, REF.gru_h0[1]); close(h, REF.gru_h0[2])
  end)
  it('cells match PyTorch', function()
    local h, c = fill(nn.LSTMCell(3, 4))(x[1])
    close(h, REF.lstm_cell[1]); close(c, REF.lstm_cell[2])
    close(fill(nn.GRUCell(3, 4))(x[1], inp(3, 2, 4)), REF.gru_cell)
    close(fill(nn.RNNCell(3, 4))(x[1]), REF.rnn_cell)
  end)
  it('have PyTorch parameter names and gradients that gradcheck', function()
    local lstm = nn.LSTM(2, 3, {num_layers = 2, bidirectional = true})
    local names = {}
    for _, p in ipairs(lstm:named_parameters()) do names[#names + 1] = p[1] end
    assert.are.equal('weight_ih_l1', names[1])
    assert.are.equal('bias_hh_l2_reverse', names[#names])
    assert.are.equal(16, #names)
    local gru = nn.GRU(2, 3)
    gradcheck(function(t) return (gru(t)) end, {torch.randn(3, 2, 2):requires_grad_()})
    local cell = nn.LSTMCell(2, 3)
    gradcheck(function(w) return (cell(torch.ones(1, 2) * w)) end, {torch.randn(1, 2):requires_grad_()})
  end)
  it('gradcheck: RNN, RNNCell and a multi-step, two-layer LSTM through inputs and parameters', function()
    local rnn = nn.RNN(2, 3, {nonlinearity = 'relu'})
    local x = torch.randn(3, 2, 2):requires_grad_()
    gradcheck(function(t) local o, h = rnn(t); return {o, h} end, {x})
    local cell = nn.RNNCell(2, 3)
    local h0 = torch.randn(2, 3):requires_grad_()
    gradcheck(function(t, h) return cell(t, h) end, {x[1]:detach():requires_grad_(), h0})
    gradcheck(function() return cell(x[1]:detach(), h0:detach()) end, cell:parameters())
    local lstm = nn.LSTM(2, 2, {num_layers = 2})
    local state = {torch.randn(2, 1, 2):requires_grad_(), torch.randn(2, 1, 2):requires_grad_()}
    local xl = torch.randn(3, 1, 2):requires_grad_()
    gradcheck(function(t, h, c) local o, hc = lstm(t, {h, c}); return {o, hc[1], hc[2]} end, {xl, state[1], state[2]})
    gradcheck(function() local o, hc = lstm(xl:detach()); return {o, hc[2]} end, lstm:parameters())
    local gru = nn.GRU(2, 2)
    gradcheck(function() local o, h = gru(xl:detach()); return {o, h} end, gru:parameters())
  end)
  it('reject inputs of the wrong size', function()
    assert.has_error(function() nn.LSTM(3, 4)(torch.randn(2, 2, 5)) end)
    assert.has_error(function() nn.GRUCell(3, 4)(torch.randn(2, 2, 3)) end)
  end)
end)

describe('attention', function()
  local q, kv = inp(4, 3, 2, 8), inp(5, 5, 2, 8)
  it('MultiheadAttention matches PyTorch, with averaged weights', function()
    local o, w = fill(nn.MultiheadAttention(8, 2))(q, kv, kv)
    close(o, REF.mha[1]); close(w, REF.mha[2])
  end)
  it('takes bool attention masks and key padding masks, batch first', function()
    local mask = torch.ones(3, 3, {dtype = 'bool'}):triu(1)
    local o, w = fill(nn.MultiheadAttention(8, 4))(q, q, q, {attn_mask = mask})
    close(o, REF.mha_causal[1]); close(w, REF.mha_causal[2])
    local kpm = torch.tensor({{false, false, false, true, true}, {false, false, false, false, true}})
    o, w = fill(nn.MultiheadAttention(8, 2, {batch_first = true}))(q:transpose(1, 2), kv:transpose(1, 2),
                                                                    kv:transpose(1, 2), {key_padding_mask = kpm})
    close(o, REF.mha_kpm_bf[1]); close(w, REF.mha_kpm_bf[2])
  end)
  it('MultiheadAttention batch first on its own input, without weights: output and gradients match PyTorch', function()
    -- computed with PyTorch 2.15 (float64): MultiheadAttention(8, 2, batch_first=True) filled as
    -- gen_nn_layers.py fills, x = inp(7, 2, 3, 8), out = m(x, x, x, need_weights=False,
    -- attn_mask=triu(ones(3, 3, bool), 1))[0], then (out * inp(8, 2, 3, 8)).sum():backward()
    local OUT = {size = {2, 3, 8}, 0.35703663336178204, -0.15453625868838383, -0.54455326826762407, -0.49940818115988311, -0.052875734333947905, 0.43914281648900055, 0.58203797377194633, 0.2585605377193293, -0.23416460819336285, -0.49915388938635991, -0.37264920400468937, 0.054365576473680344, 0.44899818822280491, 0.49600037988915602, 0.14934279808636353, -0.32475838352100339, -0.121101987529255, -0.40262900585476263, -0.36826974510575738, -0.036830807901706231, 0.33365984869316256, 0.44686430332689187, 0.20489714408078419, -0.20802918813136823, 0.041207145473159623, -0.38360933915526041, -0.50743759963095669, -0.22517636908328592, 0.24366716375610428, 0.52571552814897848, 0.39082832156383229, -0.060657460484770775, -0.37479577455118773, -0.56551273263866753, -0.3127570166936271, 0.19359540148778176, 0.55850729505059094, 0.49001057305892814, 0.032545877540650303, -0.460875696985383, -0.092386534449860391, -0.39768518417465432, -0.39097003734933788, -0.069394134835111865, 0.31674025544578155, 0.45884151667350681, 0.23638944429585829, -0.1816896370110139}
    local GX = {size = {2, 3, 8}, -0.21022255876306153, -0.12629590230993704, 0.053208975107871578, 0.19244636096697426, 0.18604417756110025, 0.038847469654420305, -0.13774822880254156, -0.21009881392499485, 0.12416525068195197, 0.078940255598052275, -0.026025151126784978, -0.11129524233037238, -0.11233931298053267, -0.028367231224381787, 0.077072605577904102, 0.12418543104001764, -0.19872640264668595, -0.14775074342343258, 0.015039732783871383, 0.16644843906059581, 0.1918922850624464, 0.072115875397509091, -0.10223639102713361, -0.19921819496247523, 0.20059178728821786, 0.1647946539890125, 0.0042842119863532591, -0.15946843623520895, -0.20253855116303551, -0.092331528488872244, 0.08775015417433657, 0.20142426959298154, -0.08325838095946167, -0.072648934413095514, -0.0070602226713824389, 0.063871524831611876, 0.086466575719337233, 0.043625445947128333, -0.032230551577361433, -0.083695110233827155, -0.18175870779530784, -0.12405218687132352, 0.027534555905327589, 0.15828369571663853, 0.16924689023903933, 0.052127412426156913, -0.10444105187052966, -0.1819706103049451}
    local mha = fill(nn.MultiheadAttention(8, 2, {batch_first = true}))
    local x = inp(7, 2, 3, 8):requires_grad_()
    local o, w = mha(x, x, x, {need_weights = false, attn_mask = torch.ones(3, 3, {dtype = 'bool'}):triu(1)})
    assert.is_nil(w)
    close(o, OUT)
    ;(o * inp(8, 2, 3, 8)):sum():backward()
    close(x.grad, GX)
    assert.is_true(math.abs(mha.in_proj_weight.grad:sum():item() - (-0.79542253647287176)) < 1e-12)
    assert.is_true(math.abs(mha.out_proj.weight.grad:abs():sum():item() - 12.061969852379752) < 1e-12)
  end)
  it('TransformerEncoderLayer matches PyTorch, post-norm and pre-norm causal with gelu', function()
    local src = inp(6, 4, 2, 8)
    local layer = fill(nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16}))
    layer:eval()
    close(layer(src), REF.encoder_post)
    layer = fill(nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, norm_first = true, activation = 'gelu'}))
    layer:eval()
    close(layer(src, {is_causal = true}), REF.encoder_pre_gelu)
  end)
  it('TransformerEncoder stacks independent copies, and the whole thing gradchecks', function()
    local enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, {dim_feedforward = 8, dropout = 0}), 2)
    local ps = enc:parameters()
    assert.are.equal(2 * 12, #ps)
    assert.is_false(rawequal(enc.layers[1].linear1.weight, enc.layers[2].linear1.weight))
    gradcheck(function(t) return enc(t, {is_causal = true}) end, {torch.randn(3, 1, 4):requires_grad_()})
  end)
  it('MultiheadAttention returns the weights after dropout in training, as PyTorch', function()
    torch.manual_seed(4)
    local mha = fill(nn.MultiheadAttention(8, 2, {dropout = 0.5}))
    local _, w = mha(q, kv, kv, {average_attn_weights = false})
    mha:eval()
    local _, w_eval = mha(q, kv, kv, {average_attn_weights = false})
    local kept = w:ne(0)
    assert.is_true(kept:sum():item() > 0 and kept:logical_not():sum():item() > 0)
    -- each weight is dropped (0) or kept and scaled by 1 / (1 - p)
    assert.is_true((w - (w_eval * 2):masked_fill(kept:logical_not(), 0)):abs():max():item() < 1e-12)
  end)
  it('MultiheadAttention gradchecks through query, key and value, weights included', function()
    local mha = nn.MultiheadAttention(4, 2, {kdim = 3, vdim = 2})
    gradcheck(function(a, b, c)
      local o, w = mha(a, b, c)
      return {o, w}
    end, {torch.randn(2, 1, 4):requires_grad_(), torch.randn(3, 1, 3):requires_grad_(),
          torch.randn(3, 1, 2):requires_grad_()})
  end)
  it('rejects an embed_dim that the heads do not divide', function()
    assert.has_error(function() nn.MultiheadAttention(10, 3) end)
  end)
end)

describe('normalization layers', function()
  local x4 = inp(7, 3, 4, 2, 2)
  it('BatchNorm2d uses batch statistics in training, updates running stats, uses them in eval', function()
    local bn = fill(nn.BatchNorm2d(4))
    close(bn(x4), REF.bn2d[1])
    close(bn(x4 * 2 + 1), REF.bn2d[2])
    close(bn.running_mean, REF.bn2d[3]); close(bn.running_var, REF.bn2d[4])
    assert.are.equal(2, bn.num_batches_tracked:item())
    bn:eval()
    close(bn(x4), REF.bn2d_eval)
    local names = {}
    for _, b in ipairs(bn:named_buffers()) do names[#names + 1] = b[1] end
    assert.are.same({'running_mean', 'running_var', 'num_batches_tracked'}, names)
  end)
  it('BatchNorm1d with momentum=false keeps a cumulative average', function()
    local bn = fill(nn.BatchNorm1d(4, {momentum = false}))
    bn(inp(8, 5, 4)); bn(inp(9, 5, 4))
    close(bn.running_mean, REF.bn1d_cumulative[1]); close(bn.running_var, REF.bn1d_cumulative[2])
    assert.has_error(function() bn(torch.randn(2, 4, 3, 3)) end)
  end)
  it('LayerNorm, GroupNorm and Embedding match PyTorch', function()
    close(fill(nn.LayerNorm({2, 2}))(x4), REF.layer_norm)
    close(fill(nn.GroupNorm(2, 4))(x4), REF.group_norm)
    local emb = fill(nn.Embedding(6, 3, {padding_idx = 3}))
    local idx = torch.tensor({{2, 3}, {5, 1}})
    close(emb(idx), REF.embedding)
    emb(idx):sum():backward()
    assert.are.same({0, 0, 0}, emb.weight.grad[3]:totable())
    assert.are.same({1, 1, 1}, emb.weight.grad[2]:totable())
  end)
  it('gradcheck through their parameters', function()
    local ln = nn.LayerNorm(3)
    gradcheck(function(t) return ln(t) end, {torch.randn(2, 3):requires_grad_()})
    local bn = nn.BatchNorm1d(3)
    gradcheck(function(t) return bn(t) end, {torch.randn(4, 3):requires_grad_()})
    local gn = nn.GroupNorm(2, 4)
    gradcheck(function(t) return gn(t) end, {torch.randn(2, 4, 3):requires_grad_()})
  end)
  it('gradcheck with respect to their parameters (and Embedding\'s weight)', function()
    for _, case in ipairs({{nn.LayerNorm(3), {2, 3}}, {nn.GroupNorm(2, 4), {2, 4, 3}}, {nn.BatchNorm1d(3), {4, 3}}}) do
      local m, x = fill(case[1]), torch.randn(case[2])
      gradcheck(function() return m(x) end, m:parameters())
    end
    local emb = fill(nn.Embedding(5, 2, {padding_idx = 4}))
    local idx = torch.tensor({{2, 5}, {1, 2}})          -- not the padding row, whose gradient is zero
    gradcheck(function() return emb(idx) end, emb:parameters())
  end)
end)

describe('dropout', function()
  it('zeroes and rescales in training, is the identity in eval', function()
    torch.manual_seed(3)
    local d = nn.Dropout(0.25)
    local y = d(torch.ones(10000))
    local zeros = y:eq(0):sum():item()
    assert.is_true(zeros > 2200 and zeros < 2800, zeros .. ' zeros')
    assert.is_true(math.abs(y:max():item() - 1 / 0.75) < 1e-12)
    d:eval()
    assert.are.equal(10000, d(torch.ones(10000)):sum():item())
    local d2 = nn.Dropout2d(0.5)
    local z = d2(torch.ones(2, 6, 3, 3))
    for n = 1, 2 do
      for c = 1, 6 do
        local s = z[n][c]:sum():item()
        assert.is_true(s == 0 or s == 18)
      end
    end
    assert.has_error(function() nn.Dropout(1.5) end)
  end)
end)

describe('activations', function()
  local a = inp(10, 3, 4) * 4
  local cases = {
    relu = nn.ReLU(), relu6 = nn.ReLU6(), leaky_relu = nn.LeakyReLU(0.2), elu = nn.ELU(0.7), gelu = nn.GELU(),
    gelu_tanh = nn.GELU({approximate = 'tanh'}), silu = nn.SiLU(), sigmoid = nn.Sigmoid(), tanh = nn.Tanh(),
    softmax = nn.Softmax(1), log_softmax = nn.LogSoftmax(2), softmin = nn.Softmin(2), softplus = nn.Softplus(2, 1),
    hardtanh = nn.Hardtanh(-0.5, 1), logsigmoid = nn.LogSigmoid(),
  }
  for name, m in pairs(cases) do
    it(name .. ' matches PyTorch and gradchecks', function()
      close(m(a), REF[name])
      gradcheck(function(t) return m(t) end, {(torch.randn(2, 3) + 0.05):requires_grad_()})
    end)
  end
  it('PReLU learns one slope per channel', function()
    local m = fill(nn.PReLU(4))
    close(m(a), REF.prelu)
    m(a):sum():backward()
    assert.are.same({4}, m.weight.grad:size():totable())
    gradcheck(function(w) return m(a) end, {m.weight})
    gradcheck(function(t) return m(t) end, {(inp(20, 2, 4) + 0.05):requires_grad_()})
  end)
  it("keep Torch7's names", function()
    assert.are.equal(nn.Softmax, nn.SoftMax)
    assert.are.equal(nn.LogSoftmax, nn.LogSoftMax)
    assert.are.equal(nn.Hardtanh, nn.HardTanh)
  end)
end)

describe('criteria', function()
  local logits = inp(11, 4, 3) * 3
  local target = torch.tensor({3, 1, 2, 3})
  local function scalar(t, want) close(t, {size = {}, want[1]}) end
  it('CrossEntropyLoss and NLLLoss match PyTorch (1-based classes)', function()
    scalar(nn.CrossEntropyLoss()(logits, target), REF.cross_entropy)
    scalar(nn.CrossEntropyLoss({weight = torch.tensor({0.5, 1.0, 2.0}), ignore_index = 2, label_smoothing = 0.1})(
      logits, target), REF.cross_entropy_opts)
    scalar(nn.NLLLoss({reduction = 'sum'})(logits:log_softmax(2), target), REF.nll_sum)
    -- Torch7: ClassNLLCriterion(weights, sizeAverage=false) sums
    scalar(nn.ClassNLLCriterion(nil, false)(logits:log_softmax(2), target), REF.nll_sum)
  end)
  it('regression losses match PyTorch', function()
    local p, y = inp(12, 3, 2), inp(13, 3, 2)
    scalar(nn.MSELoss()(p, y), REF.mse)
    scalar(nn.L1Loss({reduction = 'sum'})(p, y), REF.l1_sum)
    scalar(nn.SmoothL1Loss({beta = 0.3})(p, y), REF.smooth_l1)
    scalar(nn.HuberLoss({delta = 0.3})(p, y), REF.huber)
  end)
  it('binary, KL and cosine losses match PyTorch', function()
    local z = inp(14, 3, 2) * 3
    local lab = inp(15, 3, 2):gt(0):double()
    scalar(nn.BCELoss()(z:sigmoid(), lab), REF.bce)
    scalar(nn.BCEWithLogitsLoss({pos_weight = torch.tensor({2.0, 0.5})})(z, lab), REF.bce_logits)
    scalar(nn.KLDivLoss({reduction = 'batchmean'})(inp(16, 3, 2):log_softmax(2), inp(17, 3, 2):softmax(2)), REF.kl_batchmean)
    scalar(nn.CosineEmbeddingLoss({margin = 0.2})({inp(18, 3, 4), inp(19, 3, 4)}, torch.tensor({1, -1, -1})),
           REF.cosine_embedding)
    -- PyTorch's call crit(x1, x2, y) too
    scalar(nn.CosineEmbeddingLoss({margin = 0.2})(inp(18, 3, 4), inp(19, 3, 4), torch.tensor({1, -1, -1})),
           REF.cosine_embedding)
    scalar(torch.tensor(nn.CosineEmbeddingCriterion(0.2):forward({inp(18, 3, 4), inp(19, 3, 4)}, torch.tensor({1, -1, -1}))),
           REF.cosine_embedding)
  end)
  it("work the Torch7 way: forward gives the loss, backward the gradient of the input", function()
    local crit = nn.MSECriterion()
    local p, y = inp(12, 3, 2), inp(13, 3, 2)
    local loss = crit:forward(p, y)
    assert.are.equal('number', type(loss))
    scalar(torch.tensor(loss), REF.mse)
    local g = crit:backward(p, y)
    local expected = (p - y) * (2 / 6)
    assert.is_true((g - expected):abs():max():item() < 1e-12)
  end)
  it('gradcheck', function()
    local ce = nn.CrossEntropyLoss({label_smoothing = 0.2})
    gradcheck(function(t) return ce(t, target) end, {logits:clone():requires_grad_()})
    local bce = nn.BCEWithLogitsLoss()
    gradcheck(function(t) return bce(t, torch.tensor({{1.0, 0.0}})) end, {torch.randn(1, 2):requires_grad_()})
  end)
end)
