-- nn: modules, criteria, initialization and the functional forms, Torch7's
-- and PyTorch's names both. `local nn = require 'nn'` (also the global nn).
local torch = require 'torch'
local nn = {}
package.loaded.nn = nn
_G.nn = nn

nn.functional = require 'nn.functional'
nn.F = nn.functional
nn.init = require 'nn.initialization'

require 'nn.Module'
require 'nn.Criterion'
require 'nn.containers'
require 'nn.Linear'
require 'nn.shape'
require 'nn.activations'
require 'nn.layers'
require 'nn.norm'
require 'nn.criteria'
require 'nn.recurrent'
require 'nn.transformer'
nn.utils = require 'nn.utils'
-- convolution and pooling modules, when their kernels are there
if package.searchpath('nn.conv', package.path) then require 'nn.conv' end

torch.nn = nn
return nn
