-- Torch7's spatial pooling layers by their Torch7 names and constructor arguments: values
-- against PyTorch's functional forms (the REF numbers below, computed by PyTorch 2.x from the
-- same inputs), gradients by nn.Jacobian and by PyTorch, Torch7's files both ways, and errors.
local torch = require 'torch'
local nn = require 'nn'

-- the deterministic inputs the reference numbers were computed from: ((i * 37) mod 101) / 101 - 0.5
local function fixed(...)
  local sizes = {...}
  local n = 1
  for _, s in ipairs(sizes) do n = n * s end
  return ((torch.arange(n, {dtype = 'float64'}) * 37):fmod(101) / 101 - 0.5):reshape(sizes)
end

local REF = {
  maxpad = {{2, 3, 3}, {
    -0.1336633663, 0.2326732673, -0.0346534653, 0.3316831683, 0.4306930693, 0.4306930693, 0.3613861386,
    0.3613861386, 0.4603960396, 0.0247524752, 0.3910891089, 0.1237623762, 0.4900990099, 0.4207920792, 0.4207920792,
    0.3514851485, 0.3514851485, 0.4504950495}},
  maxfloor = {{1, 2, 2}, {0.3316831683, 0.4306930693, 0.3613861386, 0.2623762376}},
  maxceil = {{1, 3, 3}, {
    0.3316831683, 0.4306930693, -0.0346534653, 0.3613861386, 0.2623762376, 0.4603960396, 0.1930693069,
    -0.0742574257, 0.2920792079}},
  avgexcl = {{2, 3, 6}, {
    -0.0841584158, -0.150990099, -0.0346534653, 0.0816831683, -0.051980198, -0.1188118812, 0.1633663366,
    0.0132013201, -0.1204620462, 0.0792079208, 0.1122112211, -0.0379537954, -0.0891089109, 0.0940594059,
    -0.0396039604, -0.1732673267, 0.1930693069, 0.3762376238, 0.0742574257, 0.0074257426, 0.1237623762,
    -0.0099009901, -0.1435643564, 0.0396039604, 0.3217821782, 0.004950495, -0.1287128713, 0.0709570957,
    -0.0627062706, -0.2128712871, 0.0693069307, 0.0024752475, -0.1311881188, -0.0148514851, 0.1014851485,
    0.0346534653}},
  avgincl = {{2, 3, 6}, {
    -0.0280528053, -0.100660066, -0.0231023102, 0.0544554455, -0.0346534653, -0.0396039604, 0.0816831683,
    0.0132013201, -0.1204620462, 0.0792079208, 0.1122112211, -0.0189768977, -0.0297029703, 0.0627062706,
    -0.0264026403, -0.1155115512, 0.1287128713, 0.1254125413, 0.0247524752, 0.004950495, 0.0825082508,
    -0.0066006601, -0.095709571, 0.0132013201, 0.1608910891, 0.004950495, -0.1287128713, 0.0709570957,
    -0.0627062706, -0.1064356436, 0.0231023102, 0.001650165, -0.0874587459, -0.0099009901, 0.0676567657,
    0.0115511551}},
  avgstride1 = {{1, 2, 3}, {-0.0841584158, 0.0321782178, -0.1014851485, 0.1311881188, -0.0024752475, -0.1361386139}},
  dil = {{1, 6, 4}, {
    0.3613861386, 0.0940594059, -0.1732673267, -0.4405940594, 0.2920792079, 0.2326732673, 0.4900990099,
    0.4900990099, 0.4306930693, 0.1633663366, 0.4207920792, 0.4207920792, 0.3613861386, 0.0940594059, 0.3514851485,
    0.3514851485, 0.2920792079, 0.0247524752, 0.4900990099, 0.4900990099, 0.2227722772, -0.0445544554, 0.4207920792,
    0.4207920792}},
  unpool = {{2, 2, 4, 6}, {
    0.0, 0.0, 0.0, 0.0, 0.0, 0.8663366337, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.599009901, 0.0, 0.0,
    1.2326732673, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.3316831683, 0.0, 0.0, 0.9653465347, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.698019802, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0643564356, 0.0, 0.0, 1.4306930693, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.797029703, 0.0, 0.0, 1.1633663366, 0.0, 0.0, 0.0, 0.0, 0.5297029703, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.2623762376, 0.0, 0.0, 0.896039604, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.995049505, 0.0, 0.0, 0.6287128713, 0.0, 0.0, 0.0, 0.0, 0.0}},
  frac = {{2, 2, 4, 5}, {
    0.1930693069, 0.2623762376, 0.3316831683, 0.3910891089, 0.4603960396, 0.4900990099, 0.2524752475, 0.3217821782,
    0.3910891089, 0.4504950495, 0.4801980198, 0.2524752475, 0.3118811881, 0.3811881188, 0.4504950495, 0.4801980198,
    0.2425742574, 0.3118811881, 0.3712871287, 0.4405940594, 0.4702970297, 0.2326732673, 0.301980198, 0.3613861386,
    0.4306930693, 0.4900990099, 0.2227722772, 0.2920792079, 0.3613861386, 0.4207920792, 0.4900990099, 0.2227722772,
    0.2821782178, 0.3514851485, 0.4207920792, 0.4801980198, 0.2128712871, 0.2821782178, 0.3415841584, 0.4108910891,
    0.4702970297, 0.202970297, 0.2722772277, 0.3316831683, 0.400990099, 0.4603960396, 0.1930693069, 0.2623762376,
    0.3316831683, 0.3910891089, 0.4603960396, 0.4900990099, 0.2524752475, 0.3217821782, 0.3910891089, 0.4504950495,
    0.4801980198, 0.2524752475, 0.3118811881, 0.3811881188, 0.4405940594, 0.4702970297, 0.2425742574, 0.301980198,
    0.3712871287, 0.4306930693, 0.4702970297, 0.2326732673, 0.301980198, 0.3613861386, 0.4306930693, 0.4900990099,
    0.2227722772, 0.2920792079, 0.3613861386, 0.4207920792, 0.4900990099, 0.2227722772, 0.2821782178, 0.3514851485}},
  fracidx = {{2, 2, 4, 5}, {
    22, 14, 6, 28, 20, 31, 44, 36, 28, 50, 61, 44, 66, 58, 50, 61, 74, 66, 88, 80, 1, 14, 6, 28, 20, 42, 44, 36, 28,
    50, 42, 44, 66, 58, 50, 72, 74, 66, 88, 80, 12, 14, 6, 28, 20, 42, 44, 36, 28, 50, 42, 53, 66, 58, 50, 72, 83,
    66, 88, 80, 12, 23, 6, 28, 20, 42, 23, 36, 28, 50, 42, 64, 66, 58, 50, 72, 64, 66, 88, 80}},
  fracratio = {{2, 2, 4, 6}, {
    0.2326732673, 0.2623762376, 0.2623762376, 0.3613861386, 0.3613861386, 0.4603960396, 0.4900990099, 0.2227722772,
    0.2920792079, 0.3217821782, 0.3910891089, 0.4207920792, 0.4801980198, 0.2128712871, 0.2821782178, 0.3118811881,
    0.3811881188, 0.4108910891, 0.1732673267, 0.2425742574, 0.2722772277, 0.3415841584, 0.3712871287, 0.4405940594,
    0.4702970297, 0.2326732673, 0.301980198, 0.3316831683, 0.400990099, 0.4306930693, 0.4603960396, 0.2623762376,
    0.2920792079, 0.2920792079, 0.3910891089, 0.3910891089, 0.4504950495, 0.2524752475, 0.2821782178, 0.2821782178,
    0.3811881188, 0.3811881188, 0.4801980198, 0.2425742574, 0.2425742574, 0.3118811881, 0.3415841584, 0.4108910891,
    0.4702970297, 0.4702970297, 0.2722772277, 0.301980198, 0.301980198, 0.400990099, 0.4306930693, 0.1633663366,
    0.2623762376, 0.2623762376, 0.3316831683, 0.3613861386, 0.4900990099, 0.4900990099, 0.2227722772, 0.2920792079,
    0.3217821782, 0.3910891089, 0.4801980198, 0.4801980198, 0.2128712871, 0.2821782178, 0.3118811881, 0.3811881188,
    0.4405940594, 0.4405940594, 0.2425742574, 0.2722772277, 0.3415841584, 0.3712871287, 0.4702970297, 0.4702970297,
    0.2326732673, 0.2326732673, 0.3316831683, 0.3316831683, 0.4603960396, 0.4900990099, 0.4900990099, 0.2227722772,
    0.3217821782, 0.3217821782, 0.4504950495, 0.4504950495, 0.1831683168, 0.2524752475, 0.2821782178, 0.3514851485}},
  frac1 = {{2, 1, 5}, {
    0.4801980198, 0.2425742574, 0.3118811881, 0.3712871287, 0.4405940594, 0.4801980198, 0.2128712871, 0.2821782178,
    0.3415841584, 0.4108910891}},
  lp2 = {{2, 3, 3}, {
    0.7435307371, 0.7107711088, 0.7093905673, 0.7109090155, 0.6489115256, 0.7218561942, 0.71981628, 0.7319704952,
    0.721040921, 0.7014696016, 0.7159928904, 0.6484581639, 0.6975456574, 0.7142107877, 0.721040921, 0.7490476913,
    0.6989495949, 0.7218561942}},
  lp3 = {{2, 3, 3}, {
    1.13304133, 0.9333942863, 1.059418624, 1.0545931686, 1.1288979702, 1.2570573171, 1.2519801493, 1.3329401351,
    0.9187337903, 1.1922381764, 1.0397625915, 1.113537126, 1.1344390339, 1.2365036995, 1.3169809265, 1.1052994038,
    1.176938578, 1.0249826048}},
  lp3s1 = {{2, 5, 5}, {
    1.13304133, 1.1616881142, 0.9333942863, 1.0102526617, 1.059418624, 1.2107146387, 1.2378121429, 1.0563464196,
    1.1347966527, 1.1782203854, 1.0545931686, 1.1042780997, 1.1288979702, 1.2056915521, 1.2570573171, 1.1794254538,
    1.2238042299, 1.2539155032, 1.0224852011, 1.0993912044, 1.2519801493, 1.3038106285, 1.3329401351, 1.1464873204,
    0.9187337903, 1.1922381764, 0.9628737462, 1.0397625915, 1.0892739024, 1.113537126, 1.2693505511, 1.0861891629,
    1.1644982238, 1.2085648157, 1.2384256717, 1.1344390339, 1.1597725732, 1.2365036995, 1.2881818085, 1.3169809265,
    0.9809396203, 1.0297667394, 1.0526200819, 1.1295119929, 1.1800570373, 1.1052994038, 1.1480560165, 1.176938578,
    0.948107275, 1.0249826048}},
  amax = {{2, 1, 2, 3}, {
    0.4306930693, 0.3613861386, 0.4603960396, 0.4900990099, 0.4900990099, 0.4603960396, 0.4504950495, 0.4207920792,
    0.3514851485, 0.4504950495, 0.4801980198, 0.4801980198}},
  aavg = {{1, 2, 3}, {-0.0137513751, -0.0588558856, 0.0071507151, 0.003850385, 0.0698569857, 0.0247524752}},
  lrn = {{2, 6, 2, 3}, {
    -0.3867715674, -0.1047069737, 0.1807015081, -0.3118842071, -0.0271398771, 0.2566716263, -0.2334960251,
    0.0502763545, 0.3326876303, -0.157867162, 0.1272825937, -0.3628855439, -0.0811511429, 0.2034071095,
    -0.2870698793, -0.0038693124, 0.2794360931, -0.2109513719, 0.0734396154, 0.3553543991, -0.1349432896,
    0.1502360886, -0.3402549382, -0.058001684, 0.2259963074, -0.2641467922, 0.0193452037, 0.3023131056,
    -0.1882774159, 0.096556647, 0.3793454763, -0.1119483616, 0.1743151308, -0.3180835081, -0.0348483196,
    0.2511022154, -0.2434593516, 0.0425824135, 0.3257406683, -0.1665990456, 0.1196224635, -0.3719046397,
    -0.0888569978, 0.1958489614, -0.2946957241, -0.0116076655, 0.271794889, -0.2184812645, 0.0657229503,
    0.3478106964, -0.1425946267, 0.1425946267, -0.3478106964, -0.0657229503, 0.2184812645, -0.271794889,
    0.0116076655, 0.2946957241, -0.1958489614, 0.0888569978, 0.3704036311, -0.1196130582, 0.1654873366,
    -0.3251092808, -0.042547501, 0.2411664164, -0.2489811315, 0.0348974058, 0.3194318236, -0.1731002844,
    0.1124560009, -0.3791679686}},
  lrngrad = {{2, 6, 2, 3}, {
    0.1725328376, -0.1045231479, -0.3848365381, 0.257053952, -0.0270802314, -0.3095354675, 0.3292419962,
    0.0499181961, -0.2278276401, -0.3662406251, 0.1257118236, -0.1576656667, -0.2904990591, 0.1988948527,
    -0.082797196, -0.2127871166, 0.2717624085, -0.0024934153, -0.1354546533, 0.3443074756, 0.0735630059,
    -0.058193529, -0.3300417186, 0.1509668395, 0.0173869382, -0.2569466989, 0.2281185225, 0.0980052307,
    -0.1845392347, 0.3058718826, 0.1689722215, -0.1107527422, 0.3818756625, 0.2470088348, -0.0346827398,
    -0.3189671909, 0.3267780234, 0.0423607477, -0.2391867052, -0.3744027027, 0.1182531474, -0.1617631991,
    -0.2982069337, 0.1917367162, -0.090420991, -0.220461101, 0.264364575, -0.0099463027, -0.1432112206,
    0.3371919421, 0.0658707127, -0.0658707127, -0.3371919421, 0.1432112206, 0.0099650842, -0.2643646822,
    0.2204627779, 0.0904053398, -0.191736818, 0.2981838503, 0.1649742266, -0.1182247323, 0.3736447312, 0.2415493696,
    -0.0422556343, -0.325808759, 0.3173288394, 0.0348270881, -0.2494016209, -0.3810945195, 0.1122444115,
    -0.1729981503}},
  lrndef = {{6, 2, 3}, {
    -0.49999736, -0.1336631842, 0.2326719499, -0.4009888839, -0.034653383, 0.3316811517, -0.3019785635,
    0.0643561433, 0.4306904367, -0.2029695685, 0.1633654726, -0.4702941315, -0.1039597003, 0.2623745867,
    -0.3712848558, -0.0049504659, 0.3613839082, -0.2722754872, 0.0940587903, 0.4603931237, -0.1732662777,
    0.1930681477, -0.440591335, -0.0742569583, 0.2920776957, -0.3415820162, 0.0247523943, 0.3910870024,
    -0.2425728546, 0.1237620077, 0.4900965519, -0.1435636043, 0.222772009, -0.4108888761, -0.0445542851,
    0.3217815779}},
  lrn4 = {{6, 2, 3}, {
    -0.4845810253, -0.133388252, 0.2275794602, -0.3935606898, -0.0345631347, 0.3217440514, -0.2923836607,
    0.0638136967, 0.4160543164, -0.1992092854, 0.1609803054, -0.4531831257, -0.1005767758, 0.255166132,
    -0.3577065362, -0.0048422674, 0.3498825081, -0.2622401601, 0.0923659732, 0.4437889767, -0.167731218,
    0.1889833541, -0.4243745169, -0.0721299816, 0.2829710747, -0.3287795492, 0.0242581083, 0.3784201519,
    -0.2341604366, 0.121508017, 0.4752775925, -0.1390363396, 0.2211105999, -0.3975815401, -0.0435183855,
    0.3180804698}},
  lsm = {{2, 3, 2, 2}, {
    -1.6348780211, -1.2600524016, -0.9238272756, -1.2600524016, -1.1695314865, -0.794705867, -1.458480741,
    -0.794705867, -0.7041849518, -1.3293593323, -0.9931342063, -1.3293593323, -1.2600524016, -0.9238272756,
    -1.2600524016, -1.2600524016, -0.794705867, -1.458480741, -0.794705867, -0.794705867, -1.3293593323,
    -0.9931342063, -1.3293593323, -1.3293593323}},
  lsm3 = {{3, 2, 2}, {
    -1.6348780211, -1.2600524016, -0.9238272756, -1.2600524016, -1.1695314865, -0.794705867, -1.458480741,
    -0.794705867, -0.7041849518, -1.3293593323, -0.9931342063, -1.3293593323}},
  flp = {{2, 4, 2}, {
    0.8738034411, 0.946433573, 1.0549488239, 0.9932155809, 1.1119300799, 0.8720098621, 0.9787155917, 0.911403382,
    0.7180635152, 1.1479145644, 0.9416658156, 1.0112316786, 1.121286528, 1.064205716, 1.184052077, 0.9357248056}},
  flpgrad = {{2, 9, 2}, {
    -0.000749426, -0.0159897098, -0.4326658504, -0.0012426992, -0.0996075711, -0.4584953595, 0.0052455095,
    -0.1200069828, 0.1893907602, 0.0056923619, -0.0112127786, 0.001091463, -0.0423915199, 0.3753305667,
    -0.0038537254, 0.0179109809, -0.286221671, 0.0029921264, 0.3889280205, -0.159995615, 0.0903955372,
    -0.0669325261, 0.0055043398, -0.0855900867, 0.1388936552, -0.0078483369, 0.0297263697, -0.2308229894,
    -0.0033672518, 0.0825345424, -0.3852559934, 0.020126195, -0.124576588, -4.08639e-05, -0.0383285107,
    -0.0047324837}},
}

-- got has REF[name]'s shape and values (to the 10 decimals they were written with)
local function matches(name, got, tol)
  local shape, values = REF[name][1], REF[name][2]
  assert.are.same(shape, got:size():totable())
  local want = torch.tensor(values, {dtype = 'float64'}):view(shape)
  local diff = (want - got:detach():double()):abs():max():item()
  assert.is_true(diff <= (tol or 1e-9), name .. ': largest difference ' .. diff)
end

local function jacobian_ok(m, input, tol)
  local err = nn.Jacobian.testJacobian(m, input)
  assert.is_true(err < (tol or 1e-5), 'Jacobian error ' .. err)
end

-- m written in Torch7's format and read back
local function round_trip(m)
  local f = torch.MemoryFile('rw'):binary()
  f:writeObject(m)
  f:seek(1)
  local copy = f:readObject()
  f:close()
  return copy
end

describe('Torch7 spatial pooling', function()
  it('SpatialMaxPooling: padding, :ceil() and :floor(), the indices, Torch7 field names', function()
    local m = nn.SpatialMaxPooling(3, 2, 2, 2, 1, 1)
    matches('maxpad', m:forward(fixed(2, 5, 5)))
    assert.are.same({3, 2, 2, 2, 1, 1}, {m.kW, m.kH, m.dW, m.dH, m.padW, m.padH})
    local x = fixed(1, 5, 5)
    local p = nn.SpatialMaxPooling(2, 2)
    matches('maxfloor', p:forward(x))
    assert.are.equal(p, p:ceil())
    assert.is_true(p.ceil_mode)
    matches('maxceil', p:forward(x))
    -- the indices: 1-based positions in each plane, the output read back from them
    assert.are.same({1, 3, 3}, p.indices:size():totable())
    assert.are.same({5, 5}, {p.iheight, p.iwidth})
    local back = x:view(1, 25):gather(2, p.indices:view(1, 9)):view(1, 3, 3)
    matches('maxceil', back)
    matches('maxfloor', p:floor():forward(x))
    -- gradient: each output's gradient goes to its maximum
    local gi = p:backward(x, torch.ones(1, 2, 2, {dtype = 'float64'}))
    assert.are.equal(4, gi:sum():item())
    jacobian_ok(nn.SpatialMaxPooling(3, 2, 2, 1, 1, 1):ceil(), torch.rand(2, 2, 5, 6, {dtype = 'float64'}))
  end)

  it('SpatialAveragePooling: step 1 by default, padding counted or not, ceil', function()
    matches('avgstride1', nn.SpatialAveragePooling(2, 2):forward(fixed(1, 3, 4)))
    local m = nn.SpatialAveragePooling(2, 3, 1, 2, 1, 1):ceil()
    assert.are.equal(m, m:setCountExcludePad())
    matches('avgexcl', m:forward(fixed(2, 5, 5)))
    matches('avgincl', m:setCountIncludePad():forward(fixed(2, 5, 5)))
    jacobian_ok(m:setCountExcludePad(), torch.rand(2, 2, 5, 5, {dtype = 'float64'}))
  end)

  it('SpatialDilatedMaxPooling', function()
    local m = nn.SpatialDilatedMaxPooling(2, 2, 2, 1, 0, 1, 2, 3):ceil()
    assert.are.same({2, 3}, {m.dilationW, m.dilationH})
    matches('dil', m:forward(fixed(1, 7, 8)))
    jacobian_ok(m, torch.rand(2, 7, 8, {dtype = 'float64'}))
  end)

  it('SpatialMaxUnpooling places its input at the pooling maxima', function()
    local pool = nn.SpatialMaxPooling(3, 2)
    local unpool = nn.SpatialMaxUnpooling(pool)
    local y = pool:forward(fixed(2, 2, 4, 6))
    assert.are.same({2, 2, 2, 2}, y:size():totable())
    local c = fixed(2, 2, 2, 2) + 1
    matches('unpool', unpool:forward(c))
    -- the gradient reads gradOutput at the same positions
    local g = fixed(2, 2, 4, 6) * 3
    local gi = unpool:backward(c, g)
    local want = g:view(2, 2, 24):gather(3, pool.indices:view(2, 2, 4)):view(2, 2, 2, 2)
    assert.is_true((gi - want):abs():max():item() == 0)
    -- unbatched, through autograd too
    pool:forward(fixed(2, 4, 6))
    local leaf = (fixed(2, 2, 2) + 1):requires_grad_()
    local out = unpool(leaf)
    assert.are.same({2, 4, 6}, out:size():totable())
    out:sum():backward()
    assert.is_true((leaf.grad - 1):abs():max():item() == 0)
    jacobian_ok(unpool, fixed(2, 2, 2))
  end)

  it('SpatialMaxUnpooling: errors', function()
    assert.has_error(function() nn.SpatialMaxUnpooling(nn.SpatialAveragePooling(2, 2)) end)
    local ok, err = pcall(nn.SpatialMaxUnpooling, nn.SpatialMaxPooling(3, 3, 2, 2))
    assert.is_false(ok)
    assert.truthy(tostring(err):find('must equal its stride', 1, true))
    local unpool = nn.SpatialMaxUnpooling(nn.SpatialMaxPooling(2, 2))
    ok, err = pcall(unpool.forward, unpool, torch.rand(1, 2, 2))
    assert.is_false(ok)
    assert.truthy(tostring(err):find('forward first', 1, true))
    unpool.pooling:forward(torch.rand(1, 4, 4))
    ok, err = pcall(unpool.forward, unpool, torch.rand(1, 3, 2))
    assert.is_false(ok)
    assert.truthy(tostring(err):find('differs', 1, true))
  end)

  it('SpatialFractionalMaxPooling: given samples as PyTorch, output size or ratios', function()
    local samples = torch.tensor({{{0.1, 0.7}, {0.55, 0.25}}, {{0.9, 0.05}, {0.33, 0.66}}}, {dtype = 'float64'})
    local m = nn.SpatialFractionalMaxPooling(2, 3, 5, 4):fixPoolingRegions()
    assert.is_true(m.newRandomPool)
    m.randomSamples = samples:clone()
    local x = fixed(2, 2, 9, 10)
    matches('frac', m:forward(x))
    matches('fracidx', m.indices)
    assert.is_true((m.randomSamples - samples):abs():max():item() == 0)   -- kept
    local r = nn.SpatialFractionalMaxPooling(3, 2, 0.6, 0.5):fixPoolingRegions()
    r.randomSamples = samples:clone()
    matches('fracratio', r:forward(x))
    -- one output row, unbatched (the samples of batch element 1)
    local one = nn.SpatialFractionalMaxPooling(2, 3, 5, 1):fixPoolingRegions()
    one.randomSamples = samples:narrow(1, 1, 1):clone()
    matches('frac1', one:forward(x[1]))
    jacobian_ok(m, torch.rand(2, 2, 9, 10, {dtype = 'float64'}))
  end)

  it('SpatialFractionalMaxPooling: new regions each forward unless fixed, gradient at the maxima', function()
    local x = torch.rand(3, 2, 12, 11, {dtype = 'float64'})
    local m = nn.SpatialFractionalMaxPooling(2, 2, 0.5, 0.5)
    local y = m:forward(x)
    assert.are.same({3, 2, 6, 5}, y:size():totable())
    assert.are.same({3, 2, 2}, m.randomSamples:size():totable())
    local s1 = m.randomSamples:clone()
    m:forward(x)
    assert.is_true((m.randomSamples - s1):abs():max():item() > 0)
    m:fixPoolingRegions()
    local s2 = m.randomSamples:clone()
    m:forward(x)
    assert.is_true((m.randomSamples - s2):abs():max():item() == 0)
    -- each output is the input at its index, the maximum of a 2x2 window
    local flat = x:view(3, 2, 132)
    y = m:forward(x)
    local back = flat:gather(3, m.indices:view(3, 2, 30)):view(3, 2, 6, 5)
    assert.is_true((back - y):abs():max():item() == 0)
    local gi = m:backward(x, torch.ones(3, 2, 6, 5, {dtype = 'float64'}))
    assert.are.equal(180, gi:sum():item())
  end)

  it('SpatialFractionalMaxPooling: errors', function()
    assert.has_error(function() nn.SpatialFractionalMaxPooling(1, 2, 3, 3) end)
    assert.has_error(function() nn.SpatialFractionalMaxPooling(2, 2, 0.5, 1.5) end)
    local m = nn.SpatialFractionalMaxPooling(3, 3, 8, 8)
    local ok, err = pcall(m.forward, m, torch.rand(1, 6, 6))
    assert.is_false(ok)
    assert.truthy(tostring(err):find('needs an input of at least 10x10', 1, true))
    assert.truthy(tostring(err):find('nn_t7_spatial_pool_spec.lua', 1, true))   -- at the caller's line
    ok, err = pcall(nn.SpatialFractionalMaxPooling, 2, 2, 0.5, 1.5)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('nn_t7_spatial_pool_spec.lua:%d+: nn.SpatialFractionalMaxPooling: the ratios'))
  end)

  it('SpatialLPPooling: the p-norm of each window', function()
    local x = fixed(2, 6, 7)
    local m = nn.SpatialLPPooling(2, 2, 3, 2, 2, 2)
    matches('lp2', m:forward(x))
    matches('lp3', nn.SpatialLPPooling(2, 3, 3, 2, 2, 2):forward(x + 0.5))
    matches('lp3s1', nn.SpatialLPPooling(2, 3, 3, 2, 1, 1):forward(x + 0.5))
    assert.are.same({3, 2, 2, 2}, {m.kW, m.kH, m.dW, m.dH})
    jacobian_ok(m, torch.rand(2, 6, 7, {dtype = 'float64'}))
    local copy = round_trip(nn.SpatialLPPooling(2, 3, 3, 2, 1, 1))
    assert.are.equal('nn.SpatialLPPooling', torch.typename(copy))
    matches('lp3s1', copy:forward(x + 0.5))
  end)

  it('SpatialAdaptiveMaxPooling and SpatialAdaptiveAveragePooling take W, H', function()
    local m = nn.SpatialAdaptiveMaxPooling(3, 2)
    matches('amax', m:forward(fixed(2, 1, 5, 7)))
    matches('aavg', nn.SpatialAdaptiveAveragePooling(3, 2):forward(fixed(1, 5, 7)))
    jacobian_ok(nn.SpatialAdaptiveAveragePooling(2, 3), torch.rand(2, 5, 4, {dtype = 'float64'}))
    local copy = round_trip(nn.SpatialAdaptiveMaxPooling(3, 2))
    matches('amax', copy:forward(fixed(2, 1, 5, 7)))
    assert.has_error(function() nn.SpatialAdaptiveMaxPooling(0, 2) end)
  end)

  it('SpatialCrossMapLRN as PyTorch local_response_norm, values and gradients', function()
    local m = nn.SpatialCrossMapLRN(3, 0.3, 0.6, 1.5)
    local x = fixed(2, 6, 2, 3)
    matches('lrn', m:forward(x))
    local gi = m:backward(x, fixed(2, 6, 2, 3):flip(-1))
    matches('lrngrad', gi)
    local d = nn.SpatialCrossMapLRN(5)
    assert.are.same({5, 0.0001, 0.75, 1}, {d.size, d.alpha, d.beta, d.k})
    matches('lrndef', d:forward(fixed(6, 2, 3)))
    matches('lrn4', nn.SpatialCrossMapLRN(4, 0.5, 0.75, 1):forward(fixed(6, 2, 3)))
    -- a float module on a float batch gives each element's result
    local f = nn.SpatialCrossMapLRN(3, 0.3, 0.6, 1.5):float()
    local y = f:forward(x:float())
    assert.are.equal('float32', y.dtype)
    matches('lrn', y, 1e-6)
    local copy = round_trip(m)
    assert.are.same({3, 0.3, 0.6, 1.5}, {copy.size, copy.alpha, copy.beta, copy.k})
    assert.has_error(function() m:forward(torch.rand(4, 4)) end)
  end)

  it('SpatialLogSoftMax: over the channels', function()
    matches('lsm', nn.SpatialLogSoftMax():forward(fixed(2, 3, 2, 2)))
    matches('lsm3', nn.SpatialLogSoftMax():forward(fixed(3, 2, 2)))
    jacobian_ok(nn.SpatialLogSoftMax(), torch.rand(2, 3, 2, 2, {dtype = 'float64'}))
  end)

  it('FeatureLPPooling: along the feature dim, with and without a batch dim', function()
    local m = nn.FeatureLPPooling(3, 2, 4, true)
    local x = fixed(2, 9, 2) + 0.6
    matches('flp', m:forward(x))
    matches('flpgrad', m:backward(x, fixed(2, 4, 2)))
    local u = nn.FeatureLPPooling(3, 2, 4, false)
    local row = u:forward(x[2])
    assert.are.same({4, 2}, row:size():totable())
    assert.is_true((row - m:forward(x)[2]):abs():max():item() < 1e-12)
    -- p = 1 is the plain window sum; the gradient is zero where the output is
    local s = nn.FeatureLPPooling(2, 1, 1):forward(torch.tensor({1, 2, 3, 4}, {dtype = 'float64'}))
    assert.are.same({3, 5, 7}, s:totable())
    local z = nn.FeatureLPPooling(3, 1, 2)
    local zero = torch.zeros(6, {dtype = 'float64'})
    z:forward(zero)
    local g = z:backward(zero, torch.ones(4, {dtype = 'float64'}))
    assert.are.same({0, 0, 0, 0, 0, 0}, g:totable())
    -- through autograd as well
    local leaf = (fixed(2, 9, 2) + 0.6):requires_grad_()
    local loss = (m(leaf) * fixed(2, 4, 2)):sum()
    loss:backward()
    matches('flpgrad', leaf.grad)
    jacobian_ok(nn.FeatureLPPooling(4, 3, 2, true), torch.rand(2, 10, 2, 2, {dtype = 'float64'}))
  end)

  it('FeatureLPPooling: errors', function()
    assert.has_error(function() nn.FeatureLPPooling(1, 1, 2) end)
    assert.has_error(function() nn.FeatureLPPooling(3, 5, 2) end)
    local m = nn.FeatureLPPooling(4, 1, 2, true)
    local ok, err = pcall(m.forward, m, torch.rand(2, 3))
    assert.is_false(ok)
    assert.truthy(tostring(err):find('fewer than the width 4', 1, true))
    ok, err = pcall(m.forward, m, torch.rand(5))
    assert.is_false(ok)
    assert.truthy(tostring(err):find('expected a 2-D to 4-D input', 1, true))
  end)

  it("Torch7's files keep the pooling settings", function()
    local x = fixed(2, 5, 5)
    local avg = round_trip(nn.SpatialAveragePooling(2, 3, 1, 2, 1, 1):ceil():setCountExcludePad())
    matches('avgexcl', avg:forward(x))
    local dil = round_trip(nn.SpatialDilatedMaxPooling(2, 2, 2, 1, 0, 1, 2, 3):ceil())
    matches('dil', dil:forward(fixed(1, 7, 8)))
    -- an unpooling keeps its pooling module and that module's indices
    local pool = nn.SpatialMaxPooling(3, 2)
    local unpool = nn.SpatialMaxUnpooling(pool)
    pool:forward(fixed(2, 2, 4, 6))
    local copy = round_trip(unpool)
    matches('unpool', copy:forward(fixed(2, 2, 2, 2) + 1))
    local frac = nn.SpatialFractionalMaxPooling(2, 3, 5, 4):fixPoolingRegions()
    frac.randomSamples = torch.tensor({{{0.1, 0.7}, {0.55, 0.25}}, {{0.9, 0.05}, {0.33, 0.66}}}, {dtype = 'float64'})
    matches('frac', round_trip(frac):forward(fixed(2, 2, 9, 10)))
    local lsm = round_trip(nn.SpatialLogSoftMax())
    matches('lsm', lsm:forward(fixed(2, 3, 2, 2)))
    local flp = round_trip(nn.FeatureLPPooling(3, 2, 4, true))
    matches('flp', flp:forward(fixed(2, 9, 2) + 0.6))
  end)
end)
