-- nn.Module and the containers: registration (and the plain-table
-- trap), walking, state, hooks, printing, Torch7's API on the same graph.
local torch = require 'torch'
local nn = require 'nn'

local function names_of(pairs_list)
  local out = {}
  for i, p in ipairs(pairs_list) do out[i] = p[1] end
  return out
end

describe('nn.Module registration', function()
  it("registers parameters and modules on assignment, but not a plain table of modules (a common trap)", function()
    local Bad = torch.class('nn.SpecBadModel', 'nn.Module')
    function Bad:__init()
      nn.Module.__init(self)
      self.layers = {nn.Linear(10, 10), nn.Linear(10, 10), nn.Linear(10, 10)}   -- plain table!
    end
    local Good = torch.class('nn.SpecGoodModel', 'nn.Module')
    function Good:__init()
      nn.Module.__init(self)
      self.layers = nn.ModuleList({nn.Linear(10, 10), nn.Linear(10, 10), nn.Linear(10, 10)})
    end
    assert.are.equal(0, #Bad():parameters())
    local good = Good()
    assert.are.equal(6, #good:parameters())
    assert.are.same({'layers.1.weight', 'layers.1.bias', 'layers.2.weight', 'layers.2.bias', 'layers.3.weight',
                     'layers.3.bias'}, names_of(good:named_parameters()))
    assert.are.equal(3, #good.layers)
    assert.are.equal(good.layers[2], good.layers:get(2))
  end)

  it("follows a SentimentClassifier module: PyTorch-style forward, buffers in state_dict", function()
    local F = nn.functional
    local C = torch.class('nn.SpecSentimentClassifier', 'nn.Module')
    function C:__init(input_dim, hidden_dim, num_classes)
      nn.Module.__init(self)
      self.layer1 = nn.Linear(input_dim or 4, hidden_dim or 32)
      self.bn = nn.BatchNorm1d(hidden_dim or 32)
      self.dropout = nn.Dropout(0.3)
      self.layer2 = nn.Linear(hidden_dim or 32, num_classes or 2)
      self:register_buffer('running_count', torch.zeros(1))
    end
    function C:forward(x)
      self.running_count:add_(1)
      x = self.layer1(x)
      x = self.bn(x)
      x = F.relu(x)
      x = self.dropout(x)
      return self.layer2(x)            -- raw logits
    end
    local model = C()
    local y = model(torch.randn(8, 4))
    assert.are.same({8, 2}, y:size():totable())
    assert.are.equal(1, model.running_count[1])
    -- PyTorch's order: a module's own parameters and buffers, then its children's
    assert.are.same({'running_count', 'layer1.weight', 'layer1.bias', 'bn.weight', 'bn.bias', 'bn.running_mean',
                     'bn.running_var', 'bn.num_batches_tracked', 'layer2.weight', 'layer2.bias'},
                    model:state_dict_keys())
    assert.are.same({'', 'layer1', 'bn', 'dropout', 'layer2'}, names_of(model:named_modules()))
    assert.are.equal(4 * 32 + 32 + 32 + 32 + 32 * 2 + 2, model:num_parameters())
    model:eval()
    assert.is_false(model.dropout.training)
    assert.is_false(model.bn.training)
    model:train()
    assert.is_true(model.bn.training)
  end)

  it('register_parameter / register_buffer (non-persistent) / add_module', function()
    local m = nn.Module()
    m:register_parameter('scale', nn.Parameter(torch.ones(2)))
    m:register_buffer('step', torch.zeros(1), {persistent = false})
    m:add_module('inner', nn.Identity())
    assert.are.same({'scale'}, names_of(m:named_parameters()))
    assert.are.same({'step'}, names_of(m:named_buffers()))
    assert.is_nil(m:state_dict().step)
    assert.are.equal(1, #m:children())
    assert.has_error(function() m:register_parameter('w', torch.ones(2)) end)
  end)

  it('checks every assignment, not only the first, as PyTorch', function()
    local Late = torch.class('nn.SpecLateRegistration', 'nn.Module')
    function Late:__init()
      nn.Module.__init(self)
      self.fc = false
      self.fc = nn.Linear(2, 2)                      -- a plain field becomes a child
      self.w = torch.zeros(2)
      self.w = nn.Parameter(torch.ones(2))          -- a plain tensor becomes a parameter
    end
    local m = Late()
    -- PyTorch: ['w', 'fc.weight', 'fc.bias']
    assert.are.same({'w', 'fc.weight', 'fc.bias'}, names_of(m:named_parameters()))
    assert.are.same({'fc'}, names_of(m:named_children()))
    -- a registered parameter takes an nn.Parameter or nil, nothing else
    local l = nn.Linear(2, 2)
    local ok, err = pcall(function() l.bias = torch.zeros(2) end)
    assert.is_false(ok)
    assert.truthy(err:find("cannot assign 'torch.FloatTensor' as parameter 'bias' (nn.Parameter or nil expected)",
                           1, true), err)
    l.bias = nil
    assert.are.same({'weight'}, names_of(l:named_parameters()))
    assert.are.same({'weight'}, l:state_dict_keys())
    assert.has_error(function() l.bias = torch.zeros(2) end)      -- the name stays a parameter's (PyTorch: None)
    l.bias = nn.Parameter(torch.zeros(2))
    assert.are.same({'weight', 'bias'}, names_of(l:named_parameters()))
    -- a child takes a module or nil; a buffer a tensor or nil, and a tensor replaces it
    m.fc = nn.Tanh()
    assert.are.same({'w'}, names_of(m:named_parameters()))
    ok, err = pcall(function() m.fc = 3 end)
    assert.truthy(err:find("cannot assign 'number' as child module 'fc' (nn.Module or nil expected)", 1, true), err)
    local bn = nn.BatchNorm1d(2)
    bn.running_mean = torch.full({2}, 5.0)
    assert.are.same({5, 5}, bn:state_dict().running_mean:totable())
    ok, err = pcall(function() bn.running_mean = 3 end)
    assert.truthy(err:find("cannot assign 'number' as buffer 'running_mean' (torch.Tensor or nil expected)", 1, true),
                  err)
    -- a container's seq[i] = m replaces a child
    local seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seq[2] = nn.Tanh()
    assert.are.equal('nn.Tanh', torch.typename(seq[2]))
    assert.are.equal('nn.Tanh', torch.typename(seq:children()[2]))
    assert.has_error(function() seq[3] = nn.Tanh() end)
  end)

  it('refuses a module or parameter assigned before Module.__init, as PyTorch', function()
    local Forgot = torch.class('nn.SpecForgotInit', 'nn.Module')
    function Forgot:__init() self.fc = nn.Linear(2, 2) end
    local ok, err = pcall(Forgot)
    assert.is_false(ok)
    assert.truthy(err:find('cannot assign module before Module.__init() call', 1, true), err)
    local ForgotParent = torch.class('nn.SpecForgotParentInit', 'nn.Linear')
    function ForgotParent:__init() self.weight = nn.Parameter(torch.ones(2)) end
    ok, err = pcall(ForgotParent)
    assert.truthy(err:find('cannot assign parameters before Module.__init() call', 1, true), err)
  end)

  it('keeps tied parameters and shared children under every name in state_dict, once in the walks', function()
    local Tied = torch.class('nn.SpecTiedGPT', 'nn.Module')
    function Tied:__init()
      nn.Module.__init(self)
      self.wte = nn.Embedding(5, 3)
      self.head = nn.Linear(3, 5, {bias = false})
      self.head.weight = self.wte.weight
    end
    local m = Tied()
    -- PyTorch: state_dict keys ['wte.weight', 'head.weight'], named_parameters ['wte.weight']
    assert.are.same({'wte.weight', 'head.weight'}, m:state_dict_keys())
    assert.are.same({'wte.weight'}, names_of(m:named_parameters()))
    assert.are.equal(1, #m:parameters())
    local sd = m:state_dict()
    sd['wte.weight'] = torch.ones(5, 3)
    sd['head.weight'] = torch.ones(5, 3)
    m:load_state_dict(sd)
    assert.are.equal(15, m.head.weight:sum():item())
    assert.is_true(rawequal(m.wte.weight, m.head.weight))
    -- PyTorch: nn.Sequential(lin, nn.ReLU(), lin) has state_dict keys 0.weight 0.bias 2.weight 2.bias,
    -- 2 parameters, 2 children, 3 modules, and prints the shared child twice
    local lin = nn.Linear(2, 2)
    local seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert.are.same({'1.weight', '1.bias', '3.weight', '3.bias'}, seq:state_dict_keys())
    assert.are.equal(2, #seq:parameters())
    assert.are.equal(2, #seq:children())
    assert.are.equal(3, #seq:modules())
    assert.are.same({'1', '2'}, names_of(seq:named_children()))
    assert.truthy(tostring(seq):find('(3): Linear', 1, true))
    seq:load_state_dict(seq:state_dict())
  end)
end)

describe('nn.Linear', function()
  it('computes x W^T + b and gradchecks', function()
    local lin = nn.Linear(2, 3)
    torch.no_grad(function()
      lin.weight:copy_(torch.tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}))
      lin.bias:copy_(torch.tensor({0.5, -1.0, 0.0}))
    end)
    local y = lin(torch.tensor({{1.0, -1.0}, {2.0, 0.5}}))
    assert.are.same({{-0.5, -2, -1}, {3.5, 7, 13}}, y:totable())
    local l64 = nn.Linear(3, 2):double()
    assert.are.equal('float64', l64.weight.dtype)
    assert.is_true(torch.autograd.gradcheck(function(x) return l64(x) end,
                                            {torch.randn(4, 3, {dtype = 'float64'}):requires_grad_()}))
    assert.is_nil(nn.Linear(2, 2, {bias = false}).bias)
    assert.is_nil(nn.Linear(2, 2, false).bias)              -- Torch7's flag
    local ok, err = pcall(function() lin(torch.randn(2, 5)) end)
    assert.truthy(err:find('nn.Linear: expected input with 2 features', 1, true), err)
  end)

  it('initializes uniform in +-1/sqrt(in_features)', function()
    local lin = nn.Linear(400, 50)
    local bound = 1 / math.sqrt(400)
    assert.is_true(lin.weight:abs():max():item() <= bound)
    assert.is_true(lin.weight:abs():max():item() > bound * 0.9)
  end)

  it('Bilinear gradchecks', function()
    local b = nn.Bilinear(2, 3, 2):double()
    local x1 = torch.randn(4, 2, {dtype = 'float64'}):requires_grad_()
    local x2 = torch.randn(4, 3, {dtype = 'float64'}):requires_grad_()
    assert.is_true(torch.autograd.gradcheck(function(a, c) return b(a, c) end, {x1, x2}))
    assert.are.same({4, 2}, b({x1, x2}):size():totable())
  end)

  it('Linear and Bilinear gradcheck with respect to their parameters', function()
    local x1, x2 = torch.randn(3, 2, {dtype = 'float64'}), torch.randn(3, 3, {dtype = 'float64'})
    local lin = nn.Linear(2, 3):double()
    assert.is_true(torch.autograd.gradcheck(function() return lin(x1) end, lin:parameters()))
    local b = nn.Bilinear(2, 3, 2):double()
    assert.is_true(torch.autograd.gradcheck(function() return b(x1, x2) end, b:parameters()))
  end)

  it('Concat, ConcatTable and ParallelTable gradcheck', function()
    local function f64(rows, cols) return torch.randn(rows, cols, {dtype = 'float64'}):requires_grad_() end
    local concat = nn.Concat(2):add(nn.Linear(3, 2)):add(nn.Tanh()):double()
    assert.is_true(torch.autograd.gradcheck(function(x) return concat(x) end, {f64(2, 3)}))
    local ct = nn.ConcatTable():add(nn.Linear(3, 2)):add(nn.Sigmoid()):double()
    assert.is_true(torch.autograd.gradcheck(function(x) return ct(x) end, {f64(2, 3)}))
    local pt = nn.ParallelTable():add(nn.Linear(3, 1)):add(nn.Tanh()):double()
    assert.is_true(torch.autograd.gradcheck(function(x, y) return pt({x, y}) end, {f64(2, 3), f64(2, 2)}))
    assert.is_true(torch.autograd.gradcheck(function() return ct(torch.ones(2, 3, {dtype = 'float64'})) end,
                                            ct:parameters()))
  end)
end)

describe('state_dict', function()
  it('round-trips into a fresh model and reports missing and unexpected keys', function()
    local a = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    local b = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    local x = torch.randn(5, 3)
    b:load_state_dict(a:state_dict())
    assert.is_true(a(x):equal(b(x)))
    local sd = a:state_dict()
    sd['3.bias'] = nil
    sd['9.weight'] = torch.zeros(1)
    local ok, err = pcall(function() b:load_state_dict(sd) end)
    assert.is_false(ok)
    assert.truthy(err:find('missing keys: 3.bias', 1, true), err)
    assert.truthy(err:find('unexpected keys: 9.weight', 1, true), err)
    local r = b:load_state_dict(sd, {strict = false})
    assert.are.same({'3.bias'}, r.missing_keys)
    assert.are.same({'9.weight'}, r.unexpected_keys)
    sd = a:state_dict()
    sd['1.weight'] = torch.zeros(2, 2)
    ok, err = pcall(function() b:load_state_dict(sd) end)
    assert.truthy(err:find('size mismatch for 1.weight', 1, true), err)
  end)
end)

describe('hooks', function()
  it('run forward pre-hooks and hooks in order, may replace the output, and remove', function()
    local lin = nn.Linear(2, 2)
    local seen = {}
    local h1 = lin:register_forward_pre_hook(function(m, args) seen[#seen + 1] = 'pre' end)
    local h2 = lin:register_forward_hook(function(m, args, out) seen[#seen + 1] = 'post1' end)
    local h3 = lin:register_forward_hook(function(m, args, out) seen[#seen + 1] = 'post2'; return out * 0 end)
    local y = lin(torch.ones(1, 2))
    assert.are.same({'pre', 'post1', 'post2'}, seen)
    assert.are.equal(0, y:abs():sum():item())
    h1:remove(); h2:remove(); h3:remove()
    lin(torch.ones(1, 2))
    assert.are.equal(3, #seen)
  end)

  it('full backward hooks see the gradients of inputs and outputs', function()
    local lin = nn.Linear(3, 2)
    local got
    local h = lin:register_full_backward_hook(function(m, gin, gout) got = {gin, gout} end)
    local x = torch.randn(4, 3, {requires_grad = true})
    lin(x):sum():backward()
    assert.are.same({4, 2}, got[2][1]:size():totable())
    assert.are.equal(1, got[2][1]:min():item())
    assert.is_true(got[1][1]:equal(x.grad))
    h:remove()
  end)

  it('full backward hooks may replace grad_input, and see nil for inputs without grad', function()
    local lin = nn.Linear(3, 2)
    torch.no_grad(function() lin.weight:copy_(torch.tensor({{1.0, 2.0, 3.0}, {-1.0, 0.5, 2.0}})) end)
    lin:register_full_backward_hook(function(m, gin, gout) return {gin[1] * 2} end)
    local x = torch.randn(4, 3, {requires_grad = true})
    lin(x):sum():backward()
    -- PyTorch: x.grad = 2 * ones(4, 2) @ W = [[0, 5, 10]] per row
    for i = 1, 4 do assert.are.same({0, 5, 10}, x.grad[i]:totable()) end
    -- no input requires grad: grad_input is {n = 1} (PyTorch's (None,)), and a hook must return nil
    local got
    local quiet = nn.Linear(3, 2)
    quiet:register_full_backward_hook(function(m, gin, gout) got = {gin, gout} end)
    quiet(torch.randn(4, 3)):sum():backward()
    assert.are.equal(1, got[1].n)
    assert.is_nil(got[1][1])
    assert.are.same({4, 2}, got[2][1]:size():totable())
    local loud = nn.Linear(3, 2)
    loud:register_full_backward_hook(function(m, gin, gout) return {torch.ones(4, 3)} end)
    local ok, err = pcall(function() loud(torch.randn(4, 3)):sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('must return nil', 1, true), err)
    -- two tensor arguments, one requiring grad: the hook runs once with both (PyTorch gives both a gradient)
    local bil = nn.Bilinear(2, 3, 2)
    local calls = 0
    bil:register_full_backward_hook(function(m, gin, gout) calls = calls + 1; got = gin end)
    bil(torch.randn(4, 2), torch.randn(4, 3, {requires_grad = true})):sum():backward()
    assert.are.equal(1, calls)
    assert.are.equal(2, got.n)
    assert.are.same({4, 2}, got[1]:size():totable())
    assert.are.same({4, 3}, got[2]:size():totable())
    -- several outputs: once per backward, with every output's gradient
    local lstm = nn.LSTM(2, 3)
    calls = 0
    lstm:register_full_backward_hook(function(m, gin, gout) calls = calls + 1; got = gout end)
    local out, hc = lstm(torch.randn(4, 1, 2, {requires_grad = true}))
    ;(out:sum() + hc[1]:sum()):backward()
    assert.are.equal(1, calls)
    assert.are.equal(3, got.n)
    assert.are.equal(0, got[3]:abs():sum():item())     -- c_n unused
  end)
end)

describe('printing', function()
  it('prints a nested model as a tree', function()
    local m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Sequential(nn.Dropout(0.2), nn.Linear(256, 10)))
    assert.are.equal([[
Sequential(
  (1): Linear(in_features=784, out_features=256, bias=true)
  (2): ReLU()
  (3): Sequential(
    (1): Dropout(p=0.2)
    (2): Linear(in_features=256, out_features=10, bias=true)
  )
)]], tostring(m))
  end)
end)

describe('Torch7 API', function()
  local function data()
    torch.manual_seed(5)
    return torch.randn(16, 3), torch.randn(16, 1)
  end
  local function model()
    torch.manual_seed(9)
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
  end

  it('forward/backward with getParameters and a manual SGD matches PyTorch-style training step for step', function()
    local x, y = data()
    local crit = nn.MSECriterion()
    local m7 = model()
    local w, dw = m7:getParameters()
    assert.are.equal(3 * 8 + 8 + 8 + 1, w:numel())
    local mp = model()
    local losses7, lossesp = {}, {}
    for step = 1, 5 do
      dw:zero()
      local out = m7:forward(x)
      losses7[step] = crit:forward(out, y)
      m7:backward(x, crit:backward(out, y))
      w:add_(dw, {alpha = -0.1})
      -- PyTorch style
      mp:zero_grad()
      local loss = nn.MSELoss()(mp(x), y)
      lossesp[step] = loss:item()
      loss:backward()
      torch.no_grad(function()
        for _, p in ipairs(mp:parameters()) do p:add_(p.grad, {alpha = -0.1}) end
      end)
    end
    for i = 1, 5 do assert.is_true(math.abs(losses7[i] - lossesp[i]) < 1e-6) end
    assert.is_true(losses7[5] < losses7[1])
  end)

  it('backward returns gradInput; updateGradInput/accGradParameters split it; updateParameters steps', function()
    local x = torch.randn(4, 3)
    local m = model()
    local out = m:forward(x)
    local g = torch.ones(4, 1)
    local gi = m:backward(x, g)
    assert.are.same({4, 3}, gi:size():totable())
    local w1 = m[1].weight.grad:clone()
    m:zeroGradParameters()
    assert.are.equal(0, m[1].weight.grad:abs():sum():item())
    assert.is_true(m:updateGradInput(x, g):equal(gi))
    m:accGradParameters(x, g, 2)
    assert.is_true((m[1].weight.grad - w1 * 2):abs():max():item() < 1e-6)
    local before = m[3].bias:clone()
    m:updateParameters(0.5)
    assert.is_true((m[3].bias - (before - m[3].bias.grad * 0.5)):abs():max():item() < 1e-7)
  end)

  it('gives gradWeight and gradBias, the parameters\' gradients, after backward', function()
    local lin = nn.Linear(3, 2)
    local x = torch.tensor({{1.0, 2.0, 3.0}, {0.5, -1.0, 4.0}})
    lin:zeroGradParameters()
    lin:forward(x)
    lin:backward(x, torch.ones(2, 2))
    -- d/dW of sum(x W^T + b): each row of gradWeight is the column sums of x; gradBias the batch size
    assert.are.same({{1.5, 1, 7}, {1.5, 1, 7}}, lin.gradWeight:totable())
    assert.are.same({2, 2}, lin.gradBias:totable())
    lin.gradWeight:zero()                        -- the same tensor as weight.grad
    assert.are.equal(0, lin.weight.grad:abs():sum():item())
    local fresh = nn.Linear(2, 2)
    assert.are.same({0, 0}, fresh.gradBias:totable())   -- Torch7's always exist: zeros before any backward
    assert.is_nil(nn.Linear(2, 2, false).gradBias)
  end)

  it('getParameters keeps its flat gradient through zero_grad and loss:backward()', function()
    local m = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))
    local w, g = m:getParameters()
    local x = torch.ones(3, 2)
    for _ = 1, 2 do
      m:zero_grad()                              -- zeroes g in place (set_to_none would cut it loose)
      m(x):sum():backward()
    end
    assert.is_true(g:abs():sum():item() > 0)
    local flat = torch.cat({m[1].weight.grad:reshape(-1), m[1].bias.grad, m[3].weight.grad:reshape(-1),
                            m[3].bias.grad}, 1)
    assert.is_true(flat:equal(g))
    assert.are.equal(3, g[#g])                    -- the last bias: one gradient per row, not accumulated twice
    m[1].weight.grad = nil                       -- even set aside, zero_grad puts the flat view back
    m:zero_grad()
    m(x):sum():backward()
    assert.is_true(m[1].weight.grad:reshape(-1):equal(g:narrow(1, 1, 4)))
  end)

  it("ClassNLLCriterion takes Torch7's labels: whole numbers in a float tensor, or one number", function()
    local logp = torch.tensor({{-0.5, -1.5, -2.0}, {-1.0, -0.2, -3.0}, {-2.5, -0.7, -0.4}})
    local crit = nn.ClassNLLCriterion()
    -- PyTorch, labels 0, 1, 2: nll_loss = (0.5 + 0.2 + 0.4) / 3
    assert.is_true(math.abs(crit:forward(logp, torch.Tensor({1, 2, 3})) - 1.1 / 3) < 1e-6)
    assert.is_true(math.abs(crit:forward(logp[2], 3) - 3.0) < 1e-6)
    local g = crit:backward(logp[2], 3)
    assert.are.same({0, 0, -1}, g:totable())
    assert.has_error(function() crit:forward(logp, torch.Tensor({1, 2.5, 3})) end)
    assert.has_error(function() crit:forward(logp[2], 1.5) end)
  end)

  it('clone copies parameters, clone("weight") and share make them the same tensors', function()
    local a = nn.Linear(2, 2)
    local b = a:clone()
    assert.is_false(rawequal(a.weight, b.weight))
    assert.is_true(a.weight:equal(b.weight))
    assert.is_true(nn.is_parameter(b.weight))
    local c = a:clone('weight', 'bias')
    assert.is_true(rawequal(a.weight, c.weight))
    local d = nn.Linear(2, 2):share(a, 'weight')
    assert.is_true(rawequal(a.weight, d.weight))
  end)

  it('containers: Concat, ConcatTable, ParallelTable, Identity, insert/remove', function()
    local x = torch.randn(2, 3)
    local ct = nn.ConcatTable():add(nn.Identity()):add(nn.Identity())
    local out = ct(x)
    assert.are.equal(2, #out)
    assert.is_true(out[1]:equal(x))
    local pt = nn.ParallelTable():add(nn.Linear(3, 1)):add(nn.Identity())
    assert.are.same({2, 1}, pt({x, x})[1]:size():totable())
    assert.are.same({2, 6}, nn.Concat(2):add(nn.Identity()):add(nn.Identity())(x):size():totable())
    local s = nn.Sequential(nn.Identity(), nn.Tanh())
    s:insert(nn.ReLU(), 1)
    assert.are.equal('nn.ReLU', torch.typename(s[1]))
    s:remove(1)
    assert.are.equal(2, s:size())
    local d = nn.ModuleDict({enc = nn.Linear(2, 2), dec = nn.Linear(2, 2)})
    assert.are.same({'dec', 'enc'}, d:keys())
    assert.are.equal(4, #d:parameters())
  end)
end)

describe('modes, conversions and utils', function()
  it('zero_grad sets to nil by default, zeroes with set_to_none=false; requires_grad_ and apply', function()
    local m = nn.Linear(2, 2)
    m(torch.ones(1, 2)):sum():backward()
    m:zero_grad({set_to_none = false})
    assert.are.equal(0, m.weight.grad:abs():sum():item())
    m:zero_grad()
    assert.is_nil(m.weight.grad)
    m:requires_grad_(false)
    assert.is_false(m.weight.requires_grad)
    local count = 0
    nn.Sequential(m, nn.ReLU()):apply(function() count = count + 1 end)
    assert.are.equal(3, count)
  end)

  it('to(dtype) converts parameters in place, keeping their identity', function()
    local m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    local w = m[1].weight
    m:to('float64')
    assert.is_true(rawequal(w, m[1].weight))
    assert.are.equal('float64', w.dtype)
    assert.are.equal('float64', m[2].running_mean.dtype)
    m:float()
    assert.are.equal('float32', w.dtype)
  end)

  it('clip_grad_norm_ scales to the norm and returns the norm before', function()
    local a = torch.tensor({3.0, 4.0}, {requires_grad = true})
    local b = torch.tensor({12.0}, {requires_grad = true})
    ;((a * a):sum() / 2 + (b * b):sum() / 2):backward()   -- grads 3, 4 and 12: norm 13
    local norm = nn.utils.clip_grad_norm_({a, b}, 1.3)
    assert.is_true(math.abs(norm:item() - 13) < 1e-5)
    assert.is_true(math.abs(a.grad[1] - 0.3) < 1e-5)
    assert.is_true(math.abs(b.grad[1] - 1.2) < 1e-5)
    nn.utils.clip_grad_value_({b}, 0.5)
    assert.are.equal(0.5, b.grad[1])
    local v = nn.utils.parameters_to_vector({a, b})
    assert.are.same({3, 4, 12}, v:totable())
    nn.utils.vector_to_parameters(torch.tensor({1.0, 2.0, 3.0}), {a, b})
    assert.are.same({1, 2}, a:detach():totable())
  end)

  it("clip_grad_norm_ and clip_grad_value_ take PyTorch's positional arguments", function()
    local a = torch.tensor({3.0, 4.0}, {requires_grad = true})
    local b = torch.tensor({12.0}, {requires_grad = true})
    local function grads(ga, gb) a.grad, b.grad = torch.tensor(ga), torch.tensor(gb) end
    local function near(t, want) for i, v in ipairs(want) do assert.is_true(math.abs(t[i] - v) < 1e-4, t[i]) end end
    -- PyTorch: clip_grad_norm_([a, b], 1.0, 1.0) -> 19, grads [0.1579, 0.2105], [0.6316]
    grads({3.0, 4.0}, {12.0})
    assert.is_true(math.abs(nn.utils.clip_grad_norm_({a, b}, 1.0, 1.0):item() - 19) < 1e-5)
    near(a.grad, {0.15789, 0.21053}); near(b.grad, {0.63158})
    -- PyTorch: clip_grad_norm_([a, b], 6.0, 'inf') -> 12, grads [1.5, 2], [6]
    grads({3.0, 4.0}, {12.0})
    assert.is_true(math.abs(nn.utils.clip_grad_norm_({a, b}, 6.0, 'inf'):item() - 12) < 1e-5)
    near(a.grad, {1.5, 2}); near(b.grad, {6})
    grads({3.0, 4.0}, {12.0})
    assert.is_true(math.abs(nn.utils.clip_grad_norm_({a, b}, 6.0, math.huge):item() - 12) < 1e-5)
    grads({3.0, 0 / 0}, {12.0})
    assert.has_error(function() nn.utils.clip_grad_norm_({a, b}, 6.0, 2.0, true) end)
    nn.utils.clip_grad_norm_({a, b}, 6.0, 2.0, false)                 -- non-finite allowed
    grads({3.0, 4.0}, {12.0})
    nn.utils.clip_grad_value_({a, b}, 3.5, false)                     -- PyTorch's foreach, ignored
    near(a.grad, {3, 3.5}); near(b.grad, {3.5})
  end)
end)

describe('shape modules', function()
  it('Flatten, Unflatten, Reshape (Torch7 batch rule) and View', function()
    local x = torch.arange(0, 24):view(2, 3, 4):float()
    assert.are.same({2, 12}, nn.Flatten()(x):size():totable())
    assert.are.same({24}, nn.Flatten(1)(x):size():totable())
    assert.are.same({2, 3, 2, 2}, nn.Unflatten(3, {2, 2})(x):size():totable())
    assert.are.same({2, 12}, nn.Reshape(12)(x):size():totable())     -- batch dim kept
    assert.are.same({4, 6}, nn.Reshape(4, 6)(x):size():totable())
    assert.are.same({2, 3, 4}, nn.View(-1, 4)(x):view(2, 3, 4):size():totable())
    assert.are.same({6, 4}, nn.View(-1, 4)(x):size():totable())
  end)
end)

describe('a small GPT', function()
  it('trains: embeddings, causal transformer layers and a linear head lower the loss', function()
    torch.manual_seed(11)
    local vocab, ctx, d = 7, 6, 16
    local GPT = torch.class('nn.SpecTinyGPT', 'nn.Module')
    function GPT:__init()
      nn.Module.__init(self)
      self.tok = nn.Embedding(vocab, d)
      self.pos = nn.Embedding(ctx, d)
      self.blocks = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, {dim_feedforward = 32, dropout = 0,
                                                                             batch_first = true, norm_first = true}), 2)
      self.head = nn.Linear(d, vocab)
    end
    function GPT:forward(idx)
      local T = idx:size(2)
      local h = self.tok(idx) + self.pos(torch.arange(1, T + 1, {dtype = 'int64'}))
      return self.head(self.blocks(h, {is_causal = true}))
    end
    local model = GPT()
    -- a repeating sequence 1 2 3 4 5 6 7 1 2 ...: next token = current + 1
    local seq = {}
    for i = 1, 4 * (ctx + 1) do seq[i] = (i - 1) % vocab + 1 end
    local xs, ys = {}, {}
    for b = 1, 4 do
      xs[b] = {table.unpack(seq, b, b + ctx - 1)}
      ys[b] = {table.unpack(seq, b + 1, b + ctx)}
    end
    local x, y = torch.tensor(xs), torch.tensor(ys)
    local crit = nn.CrossEntropyLoss()
    local first, last
    for step = 1, 60 do
      model:zero_grad()
      local logits = model(x)
      local loss = crit(logits:reshape(-1, vocab), y:reshape(-1))
      loss:backward()
      torch.no_grad(function()
        for _, p in ipairs(model:parameters()) do p:add_(p.grad, {alpha = -0.05}) end
      end)
      if step == 1 then first = loss:item() end
      last = loss:item()
    end
    assert.is_true(last < first * 0.5, first .. ' -> ' .. last)
  end)
end)
