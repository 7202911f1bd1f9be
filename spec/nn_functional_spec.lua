-- nn_functional_spec.lua: nn.functional (nn.F) -- every function's forward against PyTorch,
-- gradients of every differentiable one with gradcheck in float64, a few second derivatives,
-- the training/eval behaviour of dropout and batch_norm, and the errors bad input raises.
--
-- REF was computed with PyTorch 2.15.0 (torch.nn.functional, float64) applied to the inputs
-- written below (X, Y, W, ...) with the same options; PyTorch's class targets were the 0-based
-- labels, ours are the same labels plus 1.
local torch = require 'torch'
local F = require 'nn.functional'

-- Generated with PyTorch 2.15.0; do not edit by hand.
local REF = {
  relu = {size = {3, 4}, 0.25, 0, 0.75, 2, 0, 1.25, 0, 0.10000000000000001, 1.5, 0, 0.59999999999999998, 0},
  relu6 = {size = {3, 4}, 1, 0, 3, 6, 0, 5, 0, 0.40000000000000002, 6, 0, 2.3999999999999999, 0},
  leaky_relu = {size = {3, 4}, 0.25, -0.30000000000000004, 0.75, 2, -0.10000000000000001, 1.25, -0.45000000000000001, 0.10000000000000001, 1.5, -0.059999999999999998, 0.59999999999999998, -0.22000000000000003},
  elu = {size = {3, 4}, 0.25, -1.1653047597773554, 0.75, 2, -0.59020401043104986, 1.25, -1.3419011631572035, 0.10000000000000001, 1.5, -0.38877266897742319, 0.59999999999999998, -1.0006933744528808},
  gelu = {size = {3, 4}, 0.14967658142073093, -0.10021080190328704, 0.58002948571734891, 1.9544997361036416, -0.15426876936299344, 1.117937782916431, -0.027505063473850511, 0.053982783727702904, 1.399789198096713, -0.11462657334331421, 0.43544812934995586, -0.14923266704102089},
  gelu_tanh = {size = {3, 4}, 0.149675350701685, -0.10042842301976707, 0.57996055516562028, 1.954597694087775, -0.15428599017485606, 1.1177142029697147, -0.027201329897288629, 0.053982751045435165, 1.3995715769802328, -0.11462907645724074, 0.43541519923081473, -0.14941895382548911},
  silu = {size = {3, 4}, 0.14054412522144952, -0.27363828570953452, 0.50938402438154473, 1.7615941559557646, -0.1887703343990727, 0.9716248264683639, -0.21453629602299634, 0.052497918747894001, 1.2263617142904655, -0.12766724495650231, 0.38739378373547723, -0.2747138838453706},
  sigmoid = {size = {3, 4}, 0.56217650088579807, 0.18242552380635635, 0.67917869917539297, 0.88079707797788231, 0.37754066879814541, 0.77729986117469108, 0.09534946489910949, 0.52497918747894001, 0.81757447619364365, 0.42555748318834102, 0.6456563062257954, 0.24973989440488234},
  logsigmoid = {size = {3, 4}, -0.57593941987884356, -1.7014132779827524, -0.38687100611489994, -0.12692801104297249, -0.97407698418010669, -0.2519290813453729, -2.3502065589167471, -0.64439666007357088, -0.20141327798275241, -0.85435524446852718, -0.43748795048588568, -1.3873353251154308},
  tanh = {size = {3, 4}, 0.24491866240370913, -0.9051482536448664, 0.6351489523872873, 0.9640275800758169, -0.46211715726000979, 0.84828363995751288, -0.97802611473881362, 0.099667994624955819, 0.9051482536448664, -0.2913126124515909, 0.5370495669980353, -0.8004990217606297},
  softmax = {size = {3, 4}, 0.11658955194479849, 0.020260226206568151, 0.19222367423278677, 0.67092654761584658, 0.11427924386223159, 0.65763164254150941, 0.019858754860475062, 0.20823035873578388, 0.60748096054299494, 0.10041592739353854, 0.24698332742685777, 0.045119784636608803},
  log_softmax = {size = {3, 4}, -1.6019518638028016, -2.9938679771791623, -0.64736239423116959, -0.1778263196847765, -2.3519518638028014, -0.24386797717916228, -3.6473623942311697, -2.0778263196847764, -0.35195186380280163, -1.7938679771791624, -0.79736239423116961, -3.2778263196847766},
  softmin = {size = {3, 4}, 0.13271563443980589, 0.76372574509510527, 0.080496101310956164, 0.023062519154132776, 0.13374011270315617, 0.023240546781934421, 0.7696212104508906, 0.07339813006401863, 0.043529382134452697, 0.26333741625715396, 0.10706500372463959, 0.58606819788375386},
  softplus = {size = {3, 4}, 0.48703849209005334, 0.024293675786871031, 0.85070663899137622, 2, 0.15663084375911143, 1.2894448671462748, 0.0055238724242969084, 0.39906943469079592, 1.524293675786871, 0.21874397524294281, 0.73164123366901557, 0.052541659884347953},
  hardtanh = {size = {3, 4}, 0.25, -0.5, 0.75, 1, -0.5, 1, -0.5, 0.10000000000000001, 1, -0.29999999999999999, 0.59999999999999998, -0.5},
  prelu = {size = {3, 4}, 0.25, -0.30000000000000004, 0.75, 2, -0.050000000000000003, 1.25, -0.67499999999999993, 0.10000000000000001, 1.5, -0.059999999999999998, 0.59999999999999998, -0.44000000000000006},
  prelu1 = {size = {3, 4}, 0.25, -0.375, 0.75, 2, -0.125, 1.25, -0.5625, 0.10000000000000001, 1.5, -0.074999999999999997, 0.59999999999999998, -0.27500000000000002},
  linear = {size = {3, 2}, 1.2000000000000002, -1.125, -0.995, 0.017500000000000016, 0.34000000000000008, -0.84499999999999997},
  linear_nobias = {size = {3, 2}, 1.1000000000000001, -0.82499999999999996, -1.095, 0.3175, 0.24000000000000005, -0.54499999999999993},
  linear3d = {size = {2, 3, 2}, 0.13999999999999999, -0.23499999999999999, 0.095000000000000029, 0.48249999999999998, 0.045000000000000012, -1.8674999999999999, -0.039999999999999952, 1.04, -0.12, -0.79499999999999993, 0.010000000000000037, -0.34999999999999998},
  bilinear = {size = {2, 2}, 0.2200000000000002, 0.12000000000000005, -0.13999999999999993, 0.1387500000000001},
  layer_norm = {size = {3, 4}, -0.099503403763189321, -0.6462755282239202, 0.79702042257913619, -0.99354424892146165, -0.11863139083033637, 0.73270075109512722, -2.8053285677018542, -0.055894172491009031, 1.3616555479362411, -0.14407033406404315, 1.0735148798081546, 1.6102723197122317},
  layer_norm2 = {size = {3, 4}, 0.15125938309963963, -1.2925801828514658, 0.563784973371384, 1.595098949050745, -0.467529002307977, 0.9763105636431284, -1.9113685682590822, 0.027501706018116311, 1.1825733587790006, -0.3025187661992792, 0.4400272962898607, -0.96255971063407031},
  group_norm = {size = {2, 4, 3}, 0.13834808702728504, -0.55191747946384595, 0.82861365351841598, 1.1970502627094113, 0.046607651890859775, -0.87374643676398145, 0.43081335845205221, 2.3930137352328344, -3.493587395109512, 0.93960510361471516, -0.38488015071231274, 1.8225952731660673, -0.70929946857858073, 0.075475773679436961, 0.27166958424394139, 1.9166958424394138, -0.33953297905238716, 0.34714535792337831, 3.1218829799745027, -2.5218829799745026, 1.0054707449936258, -0.12910305874521913, 1.8109414899872511, -1.0109414899872511},
  batch_norm_train = {size = {2, 4, 3}, 0.21478796452063331, -0.47393982260316658, 0.90351575164443321, 1.0981714397603217, -0.17282588065522797, -1.1896237369876679, 0.59285257611083009, 2.349968032775811, -2.9213783372191315, 1.0683422201283603, -0.93668444025672082, 2.4050266603850812, -0.56577019421967323, 0.16887277871238002, 0.35253352194539334, 1.8099299391930299, -0.52870513037158196, 0.18305336906112593, 2.5256795784423089, -1.6913975175536449, 0.94427566744382629, -0.49112296017114726, 1.9594651802995076, -1.6050266603850813},
  batch_norm_rm = {size = {4}, 0.13, -0.036666666666666681, 0.20666666666666667, 0},
  batch_norm_rv = {size = {4}, 1.0846, 1.8321333333333336, 0.71093333333333342, 1.3088000000000002},
  batch_norm_train2d = {size = {3, 4}, -0.20202902462101985, -1.1696279484044807, 0.76074773709172905, 1.3058752356603842, -1.1111596354156092, 1.2732658678833586, -1.4128172260274967, -0.1828225329924538, 1.3131886600366292, -0.10363791947887802, 0.65206948893576777, -1.1230527026679304},
  batch_norm_rm2d = {size = {4}, 0.13166666666666668, -0.19833333333333336, 0.24000000000000002, 0.033333333333333333},
  batch_norm_rv2d = {size = {4}, 1.0020833333333334, 1.9900833333333334, 0.73575000000000002, 1.5943333333333334},
  batch_norm_eval = {size = {2, 4, 3}, 0.19990007493755463, -0.54972520607827524, 0.9495253559533845, 1.2017811202833339, 0.31811853183970606, -0.38881153891519626, -0.84768087996102459, 1.9779220532423909, -6.4988867463678552, 0.36730104813358022, -0.73460209626716044, 1.1019031444007408, -0.64967524354705253, 0.14992505620316599, 0.34982513114072061, 1.6966321698117657, 0.070693007075490241, 0.56554405660392182, 2.2604823465627324, -4.5209646931254648, -0.28256029332034149, -0.4897347308447737, 0.85703577897835381, -1.1019031444007408},
  normalize = {size = {3, 4}, 0.095346258924559238, -0.57207755354735534, 0.28603877677367767, 0.7627700713964739, -0.19055398349167649, 0.47638495872919123, -0.85749292571254421, 0.038110796698335302, 0.75858260613626038, -0.15171652122725207, 0.30343304245450414, -0.55629391116659099},
  normalize_p1 = {size = {3, 4}, 0.1111111111111111, -0.49180327868852464, 0.20833333333333331, 0.625, -0.22222222222222221, 0.4098360655737705, -0.625, 0.03125, 0.66666666666666663, -0.098360655737704916, 0.16666666666666666, -0.34375},
  ce = {size = {}, 1.98888012604972},
  ce_sum = {size = {}, 5.9666403781491599},
  ce_none = {size = {3}, 3.8990956150428762, 1.5691103181777544, 0.49843444492852979},
  ce_w = {size = {}, 2.1673261049245909},
  ce_w_none = {size = {3}, 3.8990956150428762, 2.3536654772666314, 0.24921722246426489},
  ce_ign = {size = {}, 2.1987650299857031},
  ce_ign_w = {size = {}, 2.7655418916714272},
  ce_ign_none = {size = {3}, 3.8990956150428762, 0, 0.49843444492852979},
  ce_ls = {size = {}, 1.9822134593830536},
  ce_ls_w_ign = {size = {}, 2.8790118391628505},
  ce_ls_w_ign_sum = {size = {}, 4.3185177587442753},
  ce_ls_none = {size = {3}, 3.3365956150428762, 1.7041103181777544, 0},
  ce_1d = {size = {}, 3.8990956150428762},
  ce_spatial = {size = {}, 1.0537563453377223},
  ce_spatial_w = {size = {}, 1.2725620239318718},
  ce_spatial_none = {size = {2, 2, 2}, 1.7413112966571571, 2.5806726094072241, 0.34901221676818633, 2.0720760052791332, 0.59092358920203603, 0.26402086210350056, 0.40365521325615533, 0.42837897002838504},
  sp_logits = {size = {2, 3, 2, 2}, 0.5, 1.5, 0, 0.29999999999999999, -1, 0.25, 1, -0.59999999999999998, 2, -0.75, -2, 0.90000000000000002, -1.2, 2.2000000000000002, 1.1000000000000001, -0.40000000000000002, 0.40000000000000002, -0.10000000000000001, -1.3, 0.69999999999999996, 0.80000000000000004, 0.59999999999999998, 0.20000000000000001, -0.90000000000000002},
  ce_prob = {size = {}, 1.234066842722594},
  ce_prob_ls_w = {size = {}, 1.5950664423212029},
  ce_prob_none = {size = {3}, 1.1939082810425816, 1.2006277236317766, 1.3076645234934234},
  nll = {size = {}, 2.1673261049245909},
  nll_none = {size = {3}, 1.5, -0.10000000000000001, -1.5},
  mse = {size = {}, 0.22583333333333333},
  mse_none = {size = {3, 4}, 0.022499999999999999, 0.25, 0.20249999999999996, 0.25, 0.64000000000000012, 0.12249999999999998, 0.0625, 0.25, 0.25, 0.25, 0.25, 0.16000000000000011},
  mse_sum = {size = {}, 2.71},
  l1 = {size = {}, 0.45000000000000001},
  l1_none = {size = {3, 4}, 0.14999999999999999, 0.5, 0.44999999999999996, 0.5, 0.80000000000000004, 0.34999999999999998, 0.25, 0.5, 0.5, 0.5, 0.5, 0.40000000000000013},
  smooth_l1 = {size = {3, 4}, 0.022499999999999999, 0.25, 0.20249999999999996, 0.25, 0.55000000000000004, 0.12249999999999998, 0.0625, 0.25, 0.25, 0.25, 0.25, 0.16000000000000011},
  smooth_l1_mean = {size = {}, 0.11291666666666667},
  huber = {size = {3, 4}, 0.01125, 0.125, 0.10124999999999998, 0.125, 0.27500000000000002, 0.061249999999999992, 0.03125, 0.125, 0.125, 0.125, 0.125, 0.080000000000000057},
  bce = {size = {}, 0.80144606646565519},
  bce_w_none = {size = {3, 4}, 0.57593941987884367, 0.40282655596550482, 0.19343550305744997, 6.3807840331289141, 0.72407698418010669, 0.50385816269074601, 0.050103279458373604, 2.1581899802207127, 1.7014132779827524, 1.7087104889370541, 0.29374397524294282, 4.1620059753462932},
  bce_edge = {size = {4}, 100, 100, 0, 0.69314718055994529},
  bcel = {size = {}, 0.80144606646565519},
  bcel_pw_w = {size = {3, 4}, 0.078889734292549626, 3.0590227417803817e-07, 0.0002764657376803982, 20.000000002061153, 5.0134306969782365, 1.4906584912495962e-05, 3.3838176705103251e-10, 2.4397850625546686, 7.5000001529511371, 3.0485873515737421, 0.75077365160554077, 16.500025052341975},
  kl_batchmean = {size = {}, 1.5296394003052096},
  kl_none = {size = {3, 4}, 0.72797421724146538, 1.6029742172414654, 0, 0, -0.013347477481629122, -0.2380655188512692, 0.81454125415554546, 0.26112783452143973, 0, 0.22803502095215983, 0.0030350209521597948, 1.2026436321842922},
  kl_mean = {size = {}, 0.3824098500763024},
  kl_logt = {size = {}, 0.30241343219154398},
  cosine = {size = {3}, 0.045635091220383783, 0.72081485668224921, 0.074924630009725934},
  cosine_mean = {size = {}, 0.64027161889408302},
  cosine_1d = {size = {}, 1.4543649087796162},
  sdpa_causal = {size = {3, 3}, 0.10000000000000001, -1, 1.2, 0.29013667787680625, 0.80629843982965976, -1.8421868460289006, 0.42048279041261871, -0.00023721808842590533, -0.22756742630115936},
  sdpa_mask = {size = {3, 3}, 0.78438070178985808, -0.08749239761352276, 0.36353469781239589, 0.2946154928671092, 0.8488471822375373, -1.9138478858737471, 0.60131764324253956, 0.59868235675746029, -1.096047070272381},
}

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
