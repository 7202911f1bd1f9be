-- nn activations: ReLU, LeakyReLU, ELU, GELU, SiLU, Sigmoid, Tanh, Softmax,
-- LogSoftmax, Softmin, Softplus, Hardtanh, ReLU6, LogSigmoid, PReLU, with
-- Torch7's names (SoftMax, LogSoftMax, SoftPlus, HardTanh) as aliases.
-- Each is its nn.functional form; PReLU has a learned slope.
local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

local function num(v) return string.format('%g', v) end

-- Defines nn.<name> whose output is fn(self, input); init(self, ...) reads the arguments.
local function activation(name, fn, init, repr)
  local cls, parent = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(...)
    parent.__init(self)
    if init then init(self, ...) end
  end
  cls.updateOutput = fn
  if repr then cls.extra_repr = repr end
  return cls
end

-- nn.ReLU(): max(x, 0). (PyTorch's inplace flag is accepted and ignored: autograd needs the input.)
activation('ReLU', function(_, x) return F.relu(x) end)
-- nn.ReLU6(): min(max(x, 0), 6).
activation('ReLU6', function(_, x) return F.relu6(x) end)
-- nn.LeakyReLU(negative_slope=0.01): x for x > 0, negative_slope * x otherwise.
activation('LeakyReLU', function(self, x) return F.leaky_relu(x, self.negative_slope) end,
  function(self, slope) self.negative_slope = slope or 0.01 end,
  function(self) return 'negative_slope=' .. num(self.negative_slope) end)
-- nn.ELU(alpha=1): x for x > 0, alpha * (exp(x) - 1) otherwise.
activation('ELU', function(self, x) return F.elu(x, self.alpha) end,
  function(self, alpha) self.alpha = alpha or 1 end,
  function(self) return 'alpha=' .. num(self.alpha) end)
-- nn.GELU({approximate='none'|'tanh'}): x * Phi(x).
activation('GELU', function(self, x) return F.gelu(x, {approximate = self.approximate}) end,
  function(self, opts)
    self.approximate = type(opts) == 'string' and opts or (type(opts) == 'table' and opts.approximate) or 'none'
    if self.approximate ~= 'none' and self.approximate ~= 'tanh' then
      error("nn.GELU: approximate must be 'none' or 'tanh', got '" .. tostring(self.approximate) .. "'", 3)
    end
  end,
  function(self) return "approximate='" .. self.approximate .. "'" end)
-- nn.SiLU(): x * sigmoid(x).
activation('SiLU', function(_, x) return F.silu(x) end)
-- nn.Sigmoid(): 1 / (1 + exp(-x)).
activation('Sigmoid', function(_, x) return F.sigmoid(x) end)
-- nn.Tanh(): hyperbolic tangent.
activation('Tanh', function(_, x) return F.tanh(x) end)
-- nn.LogSigmoid(): log(sigmoid(x)).
activation('LogSigmoid', function(_, x) return F.logsigmoid(x) end)

local function dim_init(self, dim) self.dim = dim or -1 end
local function dim_repr(self) return 'dim=' .. tostring(self.dim) end
-- nn.Softmax(dim=-1): exp(x) / sum(exp(x)) along dim (1-based; Torch7's SoftMax: the last dim).
activation('Softmax', function(self, x) return F.softmax(x, self.dim) end, dim_init, dim_repr)
-- nn.LogSoftmax(dim=-1): log(softmax(x)) along dim, computed stably.
activation('LogSoftmax', function(self, x) return F.log_softmax(x, self.dim) end, dim_init, dim_repr)
-- nn.Softmin(dim=-1): softmax(-x) along dim.
activation('Softmin', function(self, x) return F.softmin(x, self.dim) end, dim_init, dim_repr)
-- nn.Softplus(beta=1, threshold=20): log(1 + exp(beta x)) / beta, linear above threshold.
activation('Softplus', function(self, x) return F.softplus(x, self.beta, self.threshold) end,
  function(self, beta, threshold) self.beta, self.threshold = beta or 1, threshold or 20 end,
  function(self) return 'beta=' .. num(self.beta) .. ', threshold=' .. num(self.threshold) end)
-- nn.Hardtanh(min_val=-1, max_val=1): x clamped to [min_val, max_val].
activation('Hardtanh', function(self, x) return F.hardtanh(x, self.min_val, self.max_val) end,
  function(self, lo, hi)
    self.min_val, self.max_val = lo or -1, hi or 1
    if self.max_val <= self.min_val then
      error(string.format('nn.Hardtanh: max_val (%g) must be greater than min_val (%g)', self.max_val, self.min_val), 3)
    end
  end,
  function(self) return 'min_val=' .. num(self.min_val) .. ', max_val=' .. num(self.max_val) end)

-- nn.PReLU(num_parameters=1, init=0.25): LeakyReLU with a learned slope (one, or one per channel).
activation('PReLU', function(self, x) return F.prelu(x, self.weight) end,
  function(self, num_parameters, init)
    self.num_parameters = num_parameters or 1
    self.weight = nn.Parameter(torch.full({self.num_parameters}, init or 0.25))
  end,
  function(self) return 'num_parameters=' .. self.num_parameters end)

-- Torch7 names
nn.SoftMax, nn.LogSoftMax, nn.SoftMin, nn.SoftPlus, nn.HardTanh = nn.Softmax, nn.LogSoftmax, nn.Softmin,
                                                                  nn.Softplus, nn.Hardtanh
return nn
