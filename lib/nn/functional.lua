-- nn.functional (nn.F): the stateless forms of the layers, activations and losses, as
-- PyTorch's torch.nn.functional, composed from differentiable tensor ops (double backward too);
-- the normalizations run fused C kernels (torch._layer_norm, _group_norm, _batch_norm).
local torch = require 'torch'

local F = {}

local is_tensor = torch.is_tensor
-- the tensor methods F.linear calls, as PyTorch's whatever the dialect (torch._method)
local dim, size, numel, addmm, mm, t = torch._method('dim'), torch._method('size'), torch._method('numel'),
                                       torch._method('addmm'), torch._method('mm'), torch._method('t')
local floating = {float32 = true, float64 = true, float16 = true, bfloat16 = true}
local DEFAULT_IGNORE_INDEX = -100   -- PyTorch's default; never a valid 1-based class
local COSINE_EPS = 1e-12            -- added to squared norms in cosine_embedding_loss (PyTorch)
local BCE_LOG_FLOOR = -100          -- PyTorch clamps the logs in binary_cross_entropy here
local RENORM_EPS = 1e-7             -- added to row norms when embedding renormalizes (PyTorch)

-- ---- argument checks shared by every function ----

-- errors are reported at the first caller outside this file
local this_source = debug.getinfo(1, 'S').source
local function fail(fname, fmt, ...)
  local level = 2
  while debug.getinfo(level, 'S') and debug.getinfo(level, 'S').source == this_source do level = level + 1 end
  error(string.format('F.' .. fname .. ': ' .. fmt, ...), level)
end

local function check_tensor(fname, what, x)
  if not is_tensor(x) then fail(fname, '%s must be a tensor, got %s', what, type(x)) end
end

local function check_float(fname, what, x)
  check_tensor(fname, what, x)
  if not floating[x.dtype] then
    fail(fname, '%s must be a floating point tensor, got %s of size %s', what, x.dtype, tostring(x:size()))
  end
end

local function check_same_size(fname, x, y, xname, yname)
  if x:size() ~= y:size() then
    fail(fname, '%s size %s and %s size %s must be the same', xname, tostring(x:size()), yname, tostring(y:size()))
  end
end

-- the input and target of an elementwise loss: floating tensors of one size (never broadcast)
local function check_input_target(fname, x, y)
  check_float(fname, 'input', x)
  check_float(fname, 'target', y)
  check_same_size(fname, x, y, 'input', 'target')
end

-- the trailing options table of a call, or an empty one
local function options(v)
  if type(v) == 'table' then return v end
  return {}
end

-- 'mean' (default), 'sum' or 'none' applied to elementwise losses
-- (not in tail position: a reduction tail-called from here would see the caller of
-- the loss function, the user's code in the Torch7 dialect, and answer a number)
local function reduce(fname, loss, reduction)
  local r
  if reduction == nil or reduction == 'mean' then r = loss:mean() return r end
  if reduction == 'sum' then r = loss:sum() return r end
  if reduction == 'none' then return loss end
  fail(fname, "reduction must be 'mean', 'sum' or 'none', got '%s'", tostring(reduction))
end

-- {1, C, 1, ...}: the shape that broadcasts a per-channel vector over a (N, C, *) tensor
local function channel_shape(ndim, channels)
  local shape = {}
  for i = 1, ndim do shape[i] = 1 end
  shape[2] = channels
  return shape
end

-- ---- linear maps ----

-- F.linear(x, weight, bias): x (*, in) times weight (out, in) transposed, plus bias (out).
function F.linear(x, weight, bias)
  check_float('linear', 'input', x)
  check_float('linear', 'weight', weight)
  local xd = dim(x)
  if dim(weight) ~= 2 or xd == 0 or size(x, -1) ~= size(weight, 2) then
    fail('linear', 'input of size %s does not match weight of size %s (expected (*, in) and (out, in))',
         tostring(x:size()), tostring(weight:size()))
  end
  if bias ~= nil and (not is_tensor(bias) or numel(bias) ~= size(weight, 1)) then
    fail('linear', 'bias must be a tensor of %d elements, got %s', weight:size(1),
         is_tensor(bias) and tostring(bias:size()) or type(bias))
  end
  if xd == 2 then
    if bias ~= nil then return (addmm(bias, x, t(weight))) end
    return (mm(x, t(weight)))
  end
  if bias ~= nil and x:is_contiguous() then
    -- every token in one product, the bias added by it (no pass of its own)
    local shape = x:size()
    shape[#shape] = weight:size(1)
    return bias:addmm(x:view(-1, x:size(-1)), weight:t()):view(shape)
  end
  local y = x:matmul(weight:t())
  if bias ~= nil then y = y + bias end
  return y
end

-- F.bilinear(x1, x2, weight, bias): y_k = x1^T weight_k x2 + bias_k for x1 (*, in1), x2 (*, in2),
-- weight (out, in1, in2), bias (out); y is (*, out).
function F.bilinear(x1, x2, weight, bias)
  check_float('bilinear', 'input1', x1)
  check_float('bilinear', 'input2', x2)
  check_float('bilinear', 'weight', weight)
  if weight:dim() ~= 3 or x1:dim() == 0 or x2:dim() ~= x1:dim() or x1:size(-1) ~= weight:size(2)
     or x2:size(-1) ~= weight:size(3) or x1:numel() // x1:size(-1) ~= x2:numel() // x2:size(-1) then
    fail('bilinear', 'inputs of size %s and %s do not match weight of size %s (expected (*, in1), (*, in2), (out, in1, in2))',
         tostring(x1:size()), tostring(x2:size()), tostring(weight:size()))
  end
  local out, in1, in2 = weight:size(1), weight:size(2), weight:size(3)
  local n = x1:numel() // in1
  -- (n, in1) x (in1, out * in2) -> (n, out, in2), then a batched product with x2 (n, in2, 1)
  local left = x1:reshape(n, in1):mm(weight:permute(2, 1, 3):reshape(in1, out * in2)):view(n, out, in2)
  local y = left:bmm(x2:reshape(n, in2, 1)):view(n, out)
  if bias ~= nil then y = y + bias end
  local shape = x1:size():totable()
  shape[#shape] = out
  return y:view(shape)
end

-- ---- activations ----

-- F.relu(x): max(x, 0). F.silu(x): x * sigmoid(x). F.sigmoid(x): 1 / (1 + exp(-x)).
-- F.tanh(x): hyperbolic tangent. Each is the tensor op of that name on a floating x.
for _, name in ipairs({'relu', 'silu', 'sigmoid', 'tanh'}) do
  F[name] = function(x)
    check_float(name, 'input', x)
    return (x[name](x))
  end
end

-- F.relu6(x): min(max(x, 0), 6).
function F.relu6(x)
  check_float('relu6', 'input', x)
  return (x:clamp(0, 6))
end

-- F.leaky_relu(x, negative_slope=0.01) or F.leaky_relu(x, {negative_slope=}).
function F.leaky_relu(x, negative_slope)
  check_float('leaky_relu', 'input', x)
  if type(negative_slope) == 'table' then negative_slope = negative_slope.negative_slope end
  return x:leaky_relu(negative_slope or 0.01)
end

-- F.elu(x, alpha=1): x where x > 0, alpha * (exp(x) - 1) elsewhere.
function F.elu(x, alpha)
  check_float('elu', 'input', x)
  if type(alpha) == 'table' then alpha = alpha.alpha end
  alpha = alpha or 1
  -- expm1 of min(x, 0), written with where so that x = 0 keeps the gradient alpha (as PyTorch's
  -- elu'(0)); a clamp_max passes none at its bound: no overflow in the branch where does not select
  local positive = x:gt(0)
  return torch.where(positive, x, torch.where(positive, 0, x):expm1() * alpha)
end

-- F.gelu(x, {approximate='none'|'tanh'}): x * Phi(x), exact (erf) or with PyTorch's tanh approximation.
function F.gelu(x, opts)
  check_float('gelu', 'input', x)
  local approximate = type(opts) == 'string' and opts or options(opts).approximate or 'none'
  if approximate == 'none' then return x:gelu() end
  if approximate ~= 'tanh' then fail('gelu', "approximate must be 'none' or 'tanh', got '%s'", tostring(approximate)) end
  return x:gelu({approximate = 'tanh'})          -- one op: saves x alone for backward
end

-- F.logsigmoid(x): log(sigmoid(x)), computed as -softplus(-x).
function F.logsigmoid(x)
  check_float('logsigmoid', 'input', x)
  return -(-x):softplus()
end

-- the dim (and dtype option) of softmax-like calls: (x, dim), (x, dim, {dtype=}), (x, {dim=, dtype=})
local function softmax_args(fname, x, dim, opts)
  check_float(fname, 'input', x)
  if type(dim) == 'table' then opts, dim = dim, dim.dim end
  if dim == nil then fail(fname, 'dim is required (input of size %s)', tostring(x:size())) end
  return dim, options(opts).dtype
end

-- F.softmax(x, dim, {dtype=}): exp(x) / sum(exp(x)) along dim.
function F.softmax(x, dim, opts)
  local d, dtype = softmax_args('softmax', x, dim, opts)
  if dtype then return x:softmax(d, {dtype = dtype}) end
  return x:softmax(d)
end

-- F.log_softmax(x, dim, {dtype=}): x - logsumexp(x) along dim.
function F.log_softmax(x, dim, opts)
  local d, dtype = softmax_args('log_softmax', x, dim, opts)
  if dtype then return x:log_softmax(d, {dtype = dtype}) end
  return x:log_softmax(d)
end

-- F.softmin(x, dim, {dtype=}): softmax(-x) along dim.
function F.softmin(x, dim, opts)
  local d, dtype = softmax_args('softmin', x, dim, opts)
  if dtype then return (-x):softmax(d, {dtype = dtype}) end
  return (-x):softmax(d)
end

-- F.softplus(x, {beta=1, threshold=20}) or F.softplus(x, beta, threshold):
-- log(1 + exp(beta x)) / beta, linear where beta x > threshold.
function F.softplus(x, beta, threshold)
  check_float('softplus', 'input', x)
  if type(beta) == 'table' then beta, threshold = beta.beta, beta.threshold end
  return x:softplus(beta or 1, threshold or 20)
end

-- F.hardtanh(x, min_val=-1, max_val=1): x clamped to [min_val, max_val].
function F.hardtanh(x, min_val, max_val)
  check_float('hardtanh', 'input', x)
  if type(min_val) == 'table' then min_val, max_val = min_val.min_val, min_val.max_val end
  min_val, max_val = min_val or -1, max_val or 1
  if min_val > max_val then fail('hardtanh', 'min_val (%g) cannot be greater than max_val (%g)', min_val, max_val) end
  return (x:clamp(min_val, max_val))
end

-- F.prelu(x, weight): x where x >= 0, weight * x elsewhere; weight has 1 element or one per
-- channel (dim 2 of x).
function F.prelu(x, weight)
  check_float('prelu', 'input', x)
  check_float('prelu', 'weight', weight)
  local channels = x:dim() >= 2 and x:size(2) or 1
  local count = weight:numel()
  if count ~= 1 and count ~= channels then
    fail('prelu', 'weight has %d elements but input of size %s has %d channels', count, tostring(x:size()), channels)
  end
  local w = count == 1 and weight:reshape({}) or weight:reshape(channel_shape(x:dim(), count))
  return torch.where(x:ge(0), x, w * x)
end

-- ---- dropout ----

-- p and training of dropout calls: (x, p, training) or (x, {p=, training=})
local function dropout_args(fname, p, training)
  if type(p) == 'table' then p, training = p.p, p.training end
  p = p or 0.5
  if training == nil then training = true end
  if type(p) ~= 'number' or p < 0 or p > 1 then
    fail(fname, 'dropout probability has to be between 0 and 1, got %s', tostring(p))
  end
  return p, training
end

-- x times a mask of the given shape whose elements are 0 with probability p, else 1/(1-p)
local function apply_dropout_mask(x, p, mask_shape)
  if p == 1 then return x * 0 end
  -- drawn on x's device, from that device's generator
  local mask = torch.empty(mask_shape, {dtype = x.dtype, device = x.device}):bernoulli_(1 - p):div_(1 - p)
  return x * mask
end

-- F.dropout(x, p=0.5, training=true): zeroes elements with probability p and scales the rest
-- by 1/(1-p) while training; the identity otherwise.
function F.dropout(x, p, training)
  check_float('dropout', 'input', x)
  p, training = dropout_args('dropout', p, training)
  if not training or p == 0 then return x end
  return apply_dropout_mask(x, p, x:size())
end

-- F.dropout2d(x, p=0.5, training=true): zeroes whole channels of x (N, C, H, W) or (C, H, W)
-- with probability p, scaling the rest by 1/(1-p) while training.
function F.dropout2d(x, p, training)
  check_float('dropout2d', 'input', x)
  p, training = dropout_args('dropout2d', p, training)
  if x:dim() ~= 3 and x:dim() ~= 4 then
    fail('dropout2d', 'expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got size %s', tostring(x:size()))
  end
  if not training or p == 0 then return x end
  local shape = x:size():totable()
  for i = #shape - 1, #shape do shape[i] = 1 end
  return apply_dropout_mask(x, p, shape)
end

-- ---- embeddings and encodings ----

-- checks idx is int64 with values in 1..n; returns nothing
local function check_indices(fname, idx, n, what)
  check_tensor(fname, what, idx)
  if idx.dtype ~= 'int64' then
    fail(fname, '%s must be an int64 tensor of 1-based indices, got %s of size %s', what, idx.dtype, tostring(idx:size()))
  end
  if idx:numel() > 0 then
    local lo, hi = idx:min():item(), idx:max():item()
    if lo < 1 or hi > n then
      fail(fname, '%s %d out of range 1..%d (indices are 1-based)', what, lo < 1 and lo or hi, n)
    end
  end
end

-- F.embedding(idx, weight, {padding_idx=, max_norm=, norm_type=2}): the rows of weight
-- (num_embeddings, dim) at the 1-based int64 indices idx; output idx's size x dim. The
-- padding_idx row gets no gradient; max_norm renormalizes the rows looked up, in place.
function F.embedding(idx, weight, opts)
  opts = options(opts)
  check_float('embedding', 'weight', weight)
  if weight:dim() ~= 2 then fail('embedding', 'weight must be 2-D (num_embeddings, dim), got size %s', tostring(weight:size())) end
  local count = weight:size(1)
  check_indices('embedding', idx, count, 'index')
  local padding_idx = opts.padding_idx
  if padding_idx ~= nil then
    if padding_idx < 0 then padding_idx = padding_idx + count + 1 end
    if padding_idx < 1 or padding_idx > count then
      fail('embedding', 'padding_idx %d out of range 1..%d', opts.padding_idx, count)
    end
  end
  local flat = idx:reshape(-1)
  if opts.max_norm then
    torch.no_grad(function()
      local norms = weight:norm(opts.norm_type or 2, 2, true)
      local used = torch.zeros(count, 1, {dtype = 'bool'}):index_fill(1, flat, true)
      local scale = torch.where(used:logical_and(norms:gt(opts.max_norm)), (norms + RENORM_EPS):reciprocal() * opts.max_norm, 1)
      weight:mul_(scale)
    end)
  end
  local shape = idx:size():totable()
  shape[#shape + 1] = weight:size(2)
  local out = weight:index_select(1, flat):view(shape)
  if padding_idx ~= nil then
    out = torch.where(idx:eq(padding_idx):unsqueeze(-1), out:detach(), out)
  end
  return out
end

-- F.one_hot(idx, num_classes): int64 tensor idx's size x num_classes with a 1 at each 1-based
-- index; num_classes defaults to the largest index.
function F.one_hot(idx, num_classes)
  check_tensor('one_hot', 'index', idx)
  if num_classes == nil or num_classes < 0 then
    if idx:numel() == 0 then fail('one_hot', 'cannot infer the number of classes from an empty tensor') end
    num_classes = idx:max():item()
  end
  check_indices('one_hot', idx, num_classes, 'index')
  local shape = idx:size():totable()
  shape[#shape + 1] = num_classes
  return torch.zeros(shape, {dtype = 'int64'}):scatter_(#shape, idx:unsqueeze(-1), 1)
end

-- ---- normalization ----

-- The fused kernels (torch._layer_norm, _group_norm, _batch_norm) take float32 and float64, and
-- on the CPU bfloat16 and float16 inputs with float32 parameters and statistics (autocast's
-- mixed models), read and written in their dtype: half-precision parameters go through them
-- as float32. On a GPU a half-precision input goes through as float32 too and the result
-- comes back in its dtype.
local half = {float16 = true, bfloat16 = true}
local function widened(t)
  if t ~= nil and half[t.dtype] then return t:float() end
  return t
end
-- the input as the kernel takes it
local function input_of(x)
  if half[x.dtype] and not x.is_cuda then return x end
  return widened(x)
end
local function narrowed(y, x)
  if half[x.dtype] and y.dtype ~= x.dtype then return y:to(x.dtype) end
  return y
end

-- F.layer_norm(x, normalized_shape, weight, bias, eps=1e-5): normalizes over the trailing
-- dims given by normalized_shape (a number, table or torch.Size) with the biased variance,
-- then scales by weight and shifts by bias (both of normalized_shape). The fused C kernel.
function F.layer_norm(x, normalized_shape, weight, bias, eps)
  check_float('layer_norm', 'input', x)
  local shape = type(normalized_shape) == 'number' and {normalized_shape} or normalized_shape
  local k = #shape
  local matches = k >= 1 and x:dim() >= k
  for i = 1, k do
    if not matches then break end
    matches = x:size(x:dim() - k + i) == shape[i]
  end
  if not matches then
    local parts = {}
    for i = 1, k do parts[i] = tostring(shape[i]) end
    fail('layer_norm', 'input of size %s does not end with normalized_shape %s', tostring(x:size()), table.concat(parts, 'x'))
  end
  return narrowed(torch._layer_norm(input_of(x), k, widened(weight), widened(bias), eps or 1e-5), x)
end

-- F.group_norm(x, num_groups, weight, bias, eps=1e-5): x (N, C, *) normalized within each of
-- num_groups groups of C/num_groups channels, then a per-channel affine transform (fused kernel).
function F.group_norm(x, num_groups, weight, bias, eps)
  check_float('group_norm', 'input', x)
  if x:dim() < 2 then fail('group_norm', 'expected input (N, C, *), got size %s', tostring(x:size())) end
  local channels = x:size(2)
  if math.type(num_groups) ~= 'integer' or num_groups < 1 or channels % num_groups ~= 0 then
    fail('group_norm', '%d channels (input size %s) cannot be split into %s groups', channels,
         tostring(x:size()), tostring(num_groups))
  end
  return narrowed(torch._group_norm(input_of(x), num_groups, widened(weight), widened(bias), eps or 1e-5), x)
end

-- F.batch_norm(x, running_mean, running_var, weight, bias, training=false, momentum=0.1,
-- eps=1e-5): x (N, C, *) normalized per channel. Training uses the batch statistics (biased
-- variance) and, given running_mean/var, updates them in place with the unbiased variance:
-- running = (1 - momentum) * running + momentum * batch. Otherwise uses the running statistics.
-- The fused C kernel (torch._batch_norm).
function F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)
  check_float('batch_norm', 'input', x)
  if x:dim() < 2 then fail('batch_norm', 'expected input (N, C, *), got size %s', tostring(x:size())) end
  local channels = x:size(2)
  for _, stat in ipairs({{running_mean, 'running_mean'}, {running_var, 'running_var'},
                         {weight, 'weight'}, {bias, 'bias'}}) do
    if stat[1] ~= nil and (not is_tensor(stat[1]) or stat[1]:numel() ~= channels) then
      fail('batch_norm', '%s must have %d elements (channels of input size %s), got %s', stat[2], channels,
           tostring(x:size()), is_tensor(stat[1]) and tostring(stat[1]:size()) or type(stat[1]))
    end
  end
  if training and x:numel() // channels <= 1 then
    fail('batch_norm', 'expected more than 1 value per channel when training, got input size %s', tostring(x:size()))
  end
  if not training and (running_mean == nil or running_var == nil) then
    fail('batch_norm', 'running_mean and running_var are required when training is false')
  end
  local mean, var = widened(running_mean), widened(running_var)
  local y = torch._batch_norm(input_of(x), widened(weight), widened(bias), mean, var, training == true,
                              momentum or 0.1, eps or 1e-5)
  if training then   -- half-precision running stats were updated as float32 copies
    torch.no_grad(function()
      if not rawequal(mean, running_mean) then running_mean:copy_(mean) end
      if not rawequal(var, running_var) then running_var:copy_(var) end
    end)
  end
  return narrowed(y, x)
end

-- F.instance_norm(x, running_mean, running_var, weight, bias, use_input_stats=true,
-- momentum=0.1, eps=1e-5): x (N, C, *) normalized per sample and channel, then a per-channel
-- affine transform. With running stats, use_input_stats also moves them towards the mean over
-- samples of each instance's statistics (PyTorch's rule); use_input_stats=false normalizes
-- with the running statistics, as batch_norm in eval.
function F.instance_norm(x, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)
  check_float('instance_norm', 'input', x)
  if x:dim() < 3 then fail('instance_norm', 'expected input (N, C, *), got size %s', tostring(x:size())) end
  if use_input_stats == false then
    return F.batch_norm(x, running_mean, running_var, weight, bias, false, momentum, eps)
  end
  local n, channels = x:size(1), x:size(2)
  if running_mean == nil and running_var == nil then
    return narrowed(torch._group_norm(input_of(x), channels, widened(weight), widened(bias), eps or 1e-5), x)
  end
  -- each (sample, channel) a channel of one batch: the per-instance running stats it updates,
  -- averaged over the samples, are the new running stats
  local function per_instance(t) return t ~= nil and t:repeatTensor(n) or nil end
  local mean, var = per_instance(running_mean), per_instance(running_var)
  local y = F.batch_norm(x:reshape(1, n * channels, -1), mean, var, per_instance(weight), per_instance(bias), true,
                         momentum, eps)
  torch.no_grad(function()
    if mean ~= nil then running_mean:copy_(mean:view(n, channels):mean(1)) end
    if var ~= nil then running_var:copy_(var:view(n, channels):mean(1)) end
  end)
  return (y:reshape(x:size()))
end

-- F.normalize(x, {p=2, dim=2, eps=1e-12}) or F.normalize(x, p, dim, eps): x divided by its
-- p-norm along dim (at least eps).
function F.normalize(x, p, dim, eps)
  check_float('normalize', 'input', x)
  if type(p) == 'table' then p, dim, eps = p.p, p.dim, p.eps end
  return x / x:norm(p or 2, dim or 2, true):clamp_min(eps or 1e-12)
end

-- ---- attention ----

-- F.scaled_dot_product_attention(q, k, v, {attn_mask=, dropout_p=0, is_causal=false, scale=}):
-- softmax(q k^T * scale + mask) v for q (*, L, E), k (*, S, E), v (*, S, Ev). A bool attn_mask
-- is true where attention is allowed; a float one is added to the scores.
function F.scaled_dot_product_attention(q, k, v, opts)
  opts = options(opts)
  check_float('scaled_dot_product_attention', 'query', q)
  check_float('scaled_dot_product_attention', 'key', k)
  check_float('scaled_dot_product_attention', 'value', v)
  if q:dim() < 2 or k:dim() < 2 or v:dim() < 2 or q:size(-1) ~= k:size(-1) or k:size(-2) ~= v:size(-2) then
    fail('scaled_dot_product_attention', 'query %s, key %s and value %s do not fit (expected (*, L, E), (*, S, E), (*, S, Ev))',
         tostring(q:size()), tostring(k:size()), tostring(v:size()))
  end
  local scale = opts.scale or 1 / math.sqrt(q:size(-1))
  local scores = q:matmul(k:transpose(-2, -1)) * scale
  if opts.is_causal then
    scores = scores + torch.full({q:size(-2), k:size(-2)}, -math.huge, {dtype = scores.dtype}):triu(1)
  end
  local mask = opts.attn_mask
  if mask ~= nil then
    if mask.dtype == 'bool' then
      scores = scores:masked_fill(mask:logical_not(), -math.huge)
    else
      scores = scores + mask
    end
  end
  local attn = scores:softmax(-1)
  if opts.dropout_p and opts.dropout_p > 0 then attn = F.dropout(attn, opts.dropout_p, true) end
  return (attn:matmul(v))
end

-- ---- losses ----

-- The checked class targets of nll_loss/cross_entropy: returns the class dim, the number of
-- classes, the targets with ignored entries replaced by 1, and the bool mask of ignored
-- entries (nil when none is ignored).
local function class_targets(fname, input, target, ignore_index)
  if input:dim() < 1 then fail(fname, 'input must have a class dimension, got a 0-dim tensor') end
  local cdim = input:dim() == 1 and 1 or 2
  local classes = input:size(cdim)
  local expected = {}
  for i = 1, input:dim() do if i ~= cdim then expected[#expected + 1] = input:size(i) end end
  local tsize = target:size()
  local fits = #tsize == #expected
  for i = 1, #expected do fits = fits and tsize[i] == expected[i] end
  if not fits then
    local parts = {}
    for i, s in ipairs(expected) do parts[i] = tostring(s) end
    fail(fname, 'input of size %s expects a target of size %s, got %s', tostring(input:size()),
         #parts == 0 and '[]' or table.concat(parts, 'x'), tostring(tsize))
  end
  local ignored, safe = nil, target
  if target:numel() == 0 then return cdim, classes, safe, ignored end
  local lo, hi = target:min():item(), target:max():item()
  if ignore_index >= lo and ignore_index <= hi then
    local hit = target:eq(ignore_index)
    if hit:any():item() then
      ignored = hit
      safe = target:masked_fill(hit, 1)
      lo, hi = safe:min():item(), safe:max():item()
    end
  end
  if lo < 1 or hi > classes then
    fail(fname, 'target %d is out of range 1..%d (input of size %s; class labels are 1-based)',
         lo < 1 and lo or hi, classes, tostring(input:size()))
  end
  return cdim, classes, safe, ignored
end

local function check_class_weight(fname, weight, classes)
  if weight == nil then return end
  check_float(fname, 'weight', weight)
  if weight:dim() ~= 1 or weight:size(1) ~= classes then
    fail(fname, 'weight must be a 1-D tensor of %d elements (one per class), got size %s', classes, tostring(weight:size()))
  end
end

-- the reduction of per-element losses whose 'mean' divides by the total weight (or the
-- count of entries that are not ignored)
local function weighted_reduce(fname, loss, reduction, target_weight, ignored)
  if reduction == nil or reduction == 'mean' then
    if target_weight ~= nil then return loss:sum() / target_weight:sum() end
    if ignored ~= nil then return loss:sum() / (ignored:numel() - ignored:sum():item()) end
    local r = loss:mean()        -- (not a tail call: see reduce)
    return r
  end
  return reduce(fname, loss, reduction)
end

-- negative log-likelihood terms: the per-element losses (0 where ignored) and per-element
-- class weights (0 where ignored; nil without class weights)
local function nll_terms(logp, cdim, safe, ignored, weight)
  local loss = -logp:gather(cdim, safe:unsqueeze(cdim)):squeeze(cdim)
  local target_weight
  if weight ~= nil then
    target_weight = weight:index_select(1, safe:reshape(-1)):view_as(safe)
    if ignored ~= nil then target_weight = target_weight:masked_fill(ignored, 0) end
    loss = loss * target_weight
  elseif ignored ~= nil then
    loss = loss:masked_fill(ignored, 0)
  end
  return loss, target_weight
end

local function check_class_target_dtype(fname, target)
  check_tensor(fname, 'target', target)
  if target.dtype ~= 'int64' then
    fail(fname, 'target must be an int64 tensor of 1-based class indices, got %s of size %s', target.dtype, tostring(target:size()))
  end
end

-- F.nll_loss(logp, target, {weight=, ignore_index=-100, reduction='mean'}): -logp[target]
-- for log-probabilities logp (N, C, *) or (C) and int64 targets 1..C of size (N, *) or ();
-- 'mean' divides by the summed weights of the targets not ignored.
function F.nll_loss(logp, target, opts)
  opts = options(opts)
  check_float('nll_loss', 'input', logp)
  check_class_target_dtype('nll_loss', target)
  local cdim, classes, safe, ignored = class_targets('nll_loss', logp, target, opts.ignore_index or DEFAULT_IGNORE_INDEX)
  check_class_weight('nll_loss', opts.weight, classes)
  local loss, target_weight = nll_terms(logp, cdim, safe, ignored, opts.weight)
  return weighted_reduce('nll_loss', loss, opts.reduction, target_weight, ignored)
end

-- cross entropy with class-probability targets of the logits' size
local function cross_entropy_probabilities(logits, target, opts)
  local fname = 'cross_entropy'
  if opts.ignore_index ~= nil and opts.ignore_index ~= DEFAULT_IGNORE_INDEX then
    fail(fname, 'ignore_index is not supported for class-probability (floating point) targets')
  end
  local cdim = logits:dim() == 1 and 1 or 2
  local classes = logits:size(cdim)
  check_class_weight(fname, opts.weight, classes)
  local smoothing = opts.label_smoothing or 0
  if smoothing > 0 then target = target * (1 - smoothing) + smoothing / classes end
  local terms = logits:log_softmax(cdim) * target
  if opts.weight ~= nil then
    terms = terms * (logits:dim() == 1 and opts.weight or opts.weight:view(channel_shape(logits:dim(), classes)))
  end
  local reduction = opts.reduction
  if reduction == nil or reduction == 'mean' then return -terms:sum() / (logits:numel() // classes) end
  if reduction == 'sum' then return -terms:sum() end
  return reduce(fname, -terms:sum(cdim), reduction)
end

-- F.cross_entropy(logits, target, {weight=, ignore_index=-100, label_smoothing=0,
-- reduction='mean'}): log_softmax over the class dim (2, or 1 for unbatched logits) then the
-- nll of int64 targets 1..C; or, for a floating target of the logits' size, the cross entropy
-- with those class probabilities. label_smoothing mixes in the uniform distribution.
function F.cross_entropy(logits, target, opts)
  opts = options(opts)
  local fname = 'cross_entropy'
  check_float(fname, 'input', logits)
  check_tensor(fname, 'target', target)
  if logits:dim() < 1 then fail(fname, 'input must have a class dimension, got a 0-dim tensor') end
  local smoothing = opts.label_smoothing or 0
  if smoothing < 0 or smoothing > 1 then fail(fname, 'label_smoothing must be between 0 and 1, got %g', smoothing) end
  if floating[target.dtype] then
    if target:size() ~= logits:size() then
      fail(fname, 'a floating point target holds class probabilities and must have the input size %s, got %s '
           .. '(class indices must be int64)', tostring(logits:size()), tostring(target:size()))
    end
    return cross_entropy_probabilities(logits, target, opts)
  end
  check_class_target_dtype(fname, target)
  local cdim, classes, safe, ignored = class_targets(fname, logits, target, opts.ignore_index or DEFAULT_IGNORE_INDEX)
  local weight = opts.weight
  check_class_weight(fname, weight, classes)
  local logp = logits:log_softmax(cdim)
  local loss, target_weight = nll_terms(logp, cdim, safe, ignored, weight)
  local nll = weighted_reduce(fname, loss, opts.reduction, target_weight, ignored)
  if smoothing == 0 then return nll end
  -- the cross entropy with the uniform distribution: -sum_c weight_c logp_c, averaged by C below
  local smooth
  if weight ~= nil then
    smooth = -(logp * (logits:dim() == 1 and weight or weight:view(channel_shape(logits:dim(), classes)))):sum(cdim)
  else
    smooth = -logp:sum(cdim)
  end
  if ignored ~= nil then smooth = smooth:masked_fill(ignored, 0) end
  smooth = weighted_reduce(fname, smooth, opts.reduction, target_weight, ignored)
  return nll * (1 - smoothing) + smooth * (smoothing / classes)
end

-- F.mse_loss(x, y, {reduction='mean'}): (x - y)^2 for x and y of one size.
function F.mse_loss(x, y, opts)
  check_input_target('mse_loss', x, y)
  local diff = x - y
  return reduce('mse_loss', diff * diff, options(opts).reduction)
end

-- F.l1_loss(x, y, {reduction='mean'}): |x - y| for x and y of one size.
function F.l1_loss(x, y, opts)
  check_input_target('l1_loss', x, y)
  return reduce('l1_loss', (x - y):abs(), options(opts).reduction)
end

-- 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (|d| when beta is 0)
local function smooth_l1_terms(fname, x, y, beta)
  check_input_target(fname, x, y)
  if beta < 0 then fail(fname, 'beta must be non-negative, got %g', beta) end
  local diff = x - y
  local size = diff:abs()
  if beta == 0 then return size end
  return torch.where(size:lt(beta), diff * diff * (0.5 / beta), size - 0.5 * beta)
end

-- F.smooth_l1_loss(x, y, {beta=1, reduction='mean'}): quadratic below beta, linear above.
function F.smooth_l1_loss(x, y, opts)
  opts = options(opts)
  return reduce('smooth_l1_loss', smooth_l1_terms('smooth_l1_loss', x, y, opts.beta or 1), opts.reduction)
end

-- F.huber_loss(x, y, {delta=1, reduction='mean'}): delta times smooth_l1 with beta = delta.
function F.huber_loss(x, y, opts)
  opts = options(opts)
  local delta = opts.delta or 1
  return reduce('huber_loss', smooth_l1_terms('huber_loss', x, y, delta) * delta, opts.reduction)
end

-- log(t) clamped below at -100, with a zero gradient (not NaN) where t is 0
local function clamped_log(t, has_zero)
  if not has_zero then return t:log():clamp_min(BCE_LOG_FLOOR) end
  local positive = t:gt(0)
  return torch.where(positive, torch.where(positive, t, 1):log():clamp_min(BCE_LOG_FLOOR), BCE_LOG_FLOOR)
end

-- F.binary_cross_entropy(p, y, {weight=, reduction='mean'}): -(y log p + (1 - y) log(1 - p))
-- for probabilities p in [0, 1], the logs clamped to >= -100 as PyTorch.
function F.binary_cross_entropy(p, y, opts)
  opts = options(opts)
  local fname = 'binary_cross_entropy'
  check_input_target(fname, p, y)
  local lo, hi = 0.5, 0.5
  if p:numel() > 0 then lo, hi = p:min():item(), p:max():item() end
  if not (lo >= 0 and hi <= 1) then
    fail(fname, 'all elements of input should be between 0 and 1, got values in [%g, %g]', lo, hi)
  end
  local loss = -(y * clamped_log(p, lo == 0) + (1 - y) * clamped_log(1 - p, hi == 1))
  if opts.weight ~= nil then loss = loss * opts.weight end
  return reduce(fname, loss, opts.reduction)
end

-- F.binary_cross_entropy_with_logits(x, y, {weight=, pos_weight=, reduction='mean'}):
-- binary cross entropy of sigmoid(x), in the stable form (1 - y) x - l log sigmoid(x) with
-- l = 1 + (pos_weight - 1) y.
function F.binary_cross_entropy_with_logits(x, y, opts)
  opts = options(opts)
  local fname = 'binary_cross_entropy_with_logits'
  check_input_target(fname, x, y)
  local neg_log_sigmoid = (-x):softplus()
  if opts.pos_weight ~= nil then
    neg_log_sigmoid = neg_log_sigmoid * ((opts.pos_weight - 1) * y + 1)
  end
  local loss = (1 - y) * x + neg_log_sigmoid
  if opts.weight ~= nil then loss = loss * opts.weight end
  return reduce(fname, loss, opts.reduction)
end

-- F.kl_div(input, target, {reduction='mean', log_target=false}): target * (log target - input)
-- for log-probabilities input (0 where target is 0); 'batchmean' divides the sum by the batch size.
function F.kl_div(input, target, opts)
  opts = options(opts)
  local fname = 'kl_div'
  check_input_target(fname, input, target)
  local terms
  if opts.log_target then
    terms = target:exp() * (target - input)
  else
    local positive = target:gt(0)
    local safe = torch.where(positive, target, 1)
    terms = torch.where(positive, target * safe:log(), 0) - target * input
  end
  if opts.reduction == 'batchmean' then
    local batch = input:dim() > 0 and input:size(1) or 1
    return terms:sum() / batch
  end
  return reduce(fname, terms, opts.reduction)
end

-- F.cosine_embedding_loss(x1, x2, y, {margin=0, reduction='mean'}): 1 - cos(x1, x2) where
-- y is 1, max(0, cos(x1, x2) - margin) where y is -1; x1, x2 (N, D) or (D), y (N) or ().
function F.cosine_embedding_loss(x1, x2, y, opts)
  opts = options(opts)
  local fname = 'cosine_embedding_loss'
  check_float(fname, 'input1', x1)
  check_float(fname, 'input2', x2)
  check_tensor(fname, 'target', y)
  check_same_size(fname, x1, x2, 'input1', 'input2')
  if (x1:dim() ~= 1 and x1:dim() ~= 2) or y:dim() ~= x1:dim() - 1 or (y:dim() == 1 and y:size(1) ~= x1:size(1)) then
    fail(fname, 'expected inputs (N, D) with target (N), or (D) with a 0-dim target; got inputs %s and target %s',
         tostring(x1:size()), tostring(y:size()))
  end
  local positive, negative = y:eq(1), y:eq(-1)
  if y:numel() > 0 and not positive:logical_or(negative):all():item() then
    fail(fname, 'target values must be 1 or -1')
  end
  local last = x1:dim()
  local dot = (x1 * x2):sum(last)
  local norms = (((x1 * x1):sum(last) + COSINE_EPS) * ((x2 * x2):sum(last) + COSINE_EPS)):sqrt()
  local cos = dot / norms
  local loss = torch.where(positive, 1 - cos, (cos - (opts.margin or 0)):clamp_min(0))
  return reduce(fname, loss, opts.reduction)
end

return F
