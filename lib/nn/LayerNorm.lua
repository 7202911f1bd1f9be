local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- nn.LayerNorm(normalized_shape, {eps=1e-5, elementwise_affine=true, bias=true}):
-- normalizes over the last dims (normalized_shape, a number or a table), then
-- scales by weight (ones) and shifts by bias (zeros).
local LayerNorm, Module = torch.class('nn.LayerNorm', 'nn.Module')
function LayerNorm:__init(shape, opts)
  Module.__init(self)
  opts = opts or {}
  if type(shape) == 'number' then shape = {shape} end
  if type(shape) ~= 'table' or #shape == 0 then
    error('nn.LayerNorm: normalized_shape must be a number or a table of sizes', 3)
  end
  self.normalized_shape = {table.unpack(shape)}
  self.eps = opts.eps or 1e-5
  self.elementwise_affine = opts.elementwise_affine ~= false
  if self.elementwise_affine then
    self.weight = nn.Parameter(torch.ones(self.normalized_shape, {dtype = opts.dtype}))
    if opts.bias ~= false then self.bias = nn.Parameter(torch.zeros(self.normalized_shape, {dtype = opts.dtype})) end
  end
end
function LayerNorm:updateOutput(x)
  return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
end
function LayerNorm:extra_repr()
  return string.format('{%s}, eps=%g, elementwise_affine=%s', table.concat(self.normalized_shape, ', '), self.eps,
                       self.elementwise_affine and 'true' or 'false')
end

return LayerNorm
