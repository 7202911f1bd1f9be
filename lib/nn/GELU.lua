local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.GELU({approximate='none'|'tanh'}): x * Phi(x).
return Activation.define('GELU', function(self, x) return F.gelu(x, {approximate = self.approximate}) end,
  function(self, opts)
    self.approximate = type(opts) == 'string' and opts or (type(opts) == 'table' and opts.approximate) or 'none'
    if self.approximate ~= 'none' and self.approximate ~= 'tanh' then
      error("nn.GELU: approximate must be 'none' or 'tanh', got '" .. tostring(self.approximate) .. "'", 3)
    end
  end,
  function(self) return "approximate='" .. self.approximate .. "'" end)
