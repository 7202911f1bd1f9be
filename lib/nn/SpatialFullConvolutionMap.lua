local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local spatial7 = require 'nn._Spatial7'

-- nn.SpatialFullConvolutionMap(connTable, kW, kH=kW, dW=1, dH=1): the full (transposed)
-- convolution of nn.SpatialConvolutionMap: each connection's input plane fully convolved
-- with its kernel (as nn.SpatialFullConvolution's), output (H - 1) * dH + kH by
-- (W - 1) * dW + kW; output plane o is bias[o] plus the sum of its connections.
-- weight n x kH x kW, bias nOutputPlane.
local SpatialFullConvolutionMap = torch.class('nn.SpatialFullConvolutionMap', 'nn.Module')

function SpatialFullConvolutionMap:__init(conn, kw, kh, dw, dh)
  spatial7.map_init(self, 'nn.SpatialFullConvolutionMap', conn, kw, kh, dw, dh)
end

-- module:reset(stdv): as nn.SpatialConvolutionMap's.
function SpatialFullConvolutionMap:reset(stdv) return spatial7.map_reset(self, stdv) end

function SpatialFullConvolutionMap:updateOutput(x)
  return spatial7.map_forward(self, x, 'nn.SpatialFullConvolutionMap', F.conv_transpose2d)
end
SpatialFullConvolutionMap.extra_repr = spatial7.map_repr

return SpatialFullConvolutionMap
