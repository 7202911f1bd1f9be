local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'
local t7 = require 'nn._Torch7Params'

-- nn.MaxUnpool3d(kernel_size, {stride=kernel_size, padding=0}) (or the stride as second
-- argument): called as m(x, indices, output_size), the values x of a max_pool3d put back at
-- their positions indices in a volume of zeros (F.max_unpool3d).
local MaxUnpool3d, Module = torch.class('nn.MaxUnpool3d', 'nn.Module')

function MaxUnpool3d:__init(kernel, opts)
  Module.__init(self)
  if type(opts) == 'number' or (type(opts) == 'table' and #opts == 3) then opts = {stride = opts} end
  opts = opts or {}
  self.kernel_size, self.stride, self.padding = kernel, opts.stride or kernel, opts.padding or 0
end

function MaxUnpool3d:updateOutput(x, indices, output_size)
  local pool = self.pooling
  if pool ~= nil then                                   -- Torch7's: the pooling module's last call
    if pool.indices == nil or pool.itime == nil then
      t7.fail('nn.VolumetricMaxUnpooling: run its pooling module forward first')
    end
    indices, output_size = pool.indices, {pool.itime, pool.iheight, pool.iwidth}
  end
  if indices == nil then t7.fail('nn.MaxUnpool3d: called without indices (m(x, indices, output_size))') end
  return F.max_unpool3d(x, indices, self.kernel_size, {stride = self.stride, padding = self.padding,
                                                       output_size = output_size})
end

function MaxUnpool3d:extra_repr()
  local show = helpers.show
  return string.format('kernel_size=%s, stride=%s, padding=%s', show(self.kernel_size), show(self.stride),
                       show(self.padding))
end

-- Torch7: nn.VolumetricMaxUnpooling(poolingModule): the inverse of an nn.VolumetricMaxPooling
-- whose kernel equals its stride: each call puts its input back where that module's last
-- forward found the maxima, in a volume of its last input's size.
function nn.VolumetricMaxUnpooling(pool)
  if not nn.is_module(pool) or torch.typename(pool) ~= 'nn.MaxPool3d' or not pool.keep_indices then
    error('nn.VolumetricMaxUnpooling: argument must be an nn.VolumetricMaxPooling module, got ' .. torch.type(pool), 2)
  end
  if pool.kT ~= pool.dT or pool.kW ~= pool.dW or pool.kH ~= pool.dH then
    error(string.format("nn.VolumetricMaxUnpooling: the pooling module's kernel (%d, %d, %d) must equal its stride "
                        .. '(%d, %d, %d)', pool.kT, pool.kW, pool.kH, pool.dT, pool.dW, pool.dH), 2)
  end
  local m = nn.MaxUnpool3d(pool.kernel_size, {stride = pool.stride, padding = pool.padding})
  m.pooling = pool
  return m
end

return MaxUnpool3d
