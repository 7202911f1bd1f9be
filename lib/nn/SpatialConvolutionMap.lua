local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local spatial7 = require 'nn._Spatial7'

-- nn.tables: Torch7's connection tables for nn.SpatialConvolutionMap and
-- nn.SpatialFullConvolutionMap: an n x 2 tensor whose row k says that kernel k takes input
-- plane table[k][1] to output plane table[k][2].
nn.tables = nn.tables or {}

-- nn.tables.full(nin, nout): every input plane to every output plane, (nin * nout) x 2,
-- ordered by output plane, then input plane.
function nn.tables.full(nin, nout)
  local t = torch.Tensor(nin * nout, 2)
  local row = 1
  for j = 1, nout do
    for i = 1, nin do
      t[row][1], t[row][2] = i, j
      row = row + 1
    end
  end
  return t
end

-- nn.tables.oneToOne(n): input plane i to output plane i, n x 2.
function nn.tables.oneToOne(n)
  local t = torch.Tensor(n, 2)
  for i = 1, n do t[i][1], t[i][2] = i, i end
  return t
end

-- nn.tables.random(nin, nout, nto): each output plane from nto distinct input planes
-- drawn at random, (nout * nto) x 2 ordered by output plane; the input planes are dealt
-- from random permutations in chunks of nto, a new permutation when one runs out, so
-- the planes are used evenly.
function nn.tables.random(nin, nout, nto)
  if math.type(nto) ~= 'integer' or nto < 1 or nto > nin then
    error(string.format('nn.tables.random: nto must be an integer in 1..nin (%d), got %s', nin, tostring(nto)), 2)
  end
  local t = torch.Tensor(nout * nto, 2)
  local chunks = nin // nto
  local perm, chunk = torch.randperm(nin), 0
  for j = 1, nout do
    if chunk == chunks then perm, chunk = torch.randperm(nin), 0 end
    for k = 1, nto do
      local row = (j - 1) * nto + k
      t[row][1], t[row][2] = perm[chunk * nto + k], j
    end
    chunk = chunk + 1
  end
  return t
end

-- nn.SpatialConvolutionMap(connTable, kW, kH=kW, dW=1, dH=1): Torch7's sparse convolution:
-- row k of connTable (an n x 2 tensor, see nn.tables) connects input plane connTable[k][1]
-- to output plane connTable[k][2] through kernel weight[k] (a valid cross-correlation, as
-- nn.SpatialConvolution's); output plane o is bias[o] plus the sum of its connections.
-- weight n x kH x kW, bias nOutputPlane (the largest output plane named); the output is
-- floor((H - kH) / dH) + 1 by floor((W - kW) / dW) + 1.
local SpatialConvolutionMap = torch.class('nn.SpatialConvolutionMap', 'nn.Module')

function SpatialConvolutionMap:__init(conn, kw, kh, dw, dh)
  spatial7.map_init(self, 'nn.SpatialConvolutionMap', conn, kw, kh, dw, dh)
end

-- module:reset(stdv): as Torch7, uniform in +-stdv * sqrt(3), or without stdv each kernel
-- and bias in +-1 / sqrt(kW * kH * the number of connections into its output plane).
function SpatialConvolutionMap:reset(stdv) return spatial7.map_reset(self, stdv) end

function SpatialConvolutionMap:updateOutput(x)
  return spatial7.map_forward(self, x, 'nn.SpatialConvolutionMap', F.conv2d)
end
SpatialConvolutionMap.extra_repr = spatial7.map_repr

return SpatialConvolutionMap
