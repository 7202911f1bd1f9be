-- data: datasets, samplers, the DataLoader (with worker processes), image
-- transforms and a progress bar. `local data = require 'data'`
-- (also torch.data and the global data).
local torch = require 'torch'
local data = {}
package.loaded.data = data
_G.data = data
torch.data = data

require 'data.iteration'
require 'data.dataset'
require 'data.sampler'
require 'data.collate'
require 'data.transforms'
require 'data.dataloader'
require 'data.progress'

return data
