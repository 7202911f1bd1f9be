-- The specs' way into the Torch7 dialect: in_torch7(fn) runs fn in it and switches back
-- to the PyTorch dialect even when fn fails (its error then goes on, unchanged).
local torch = require 'torch'

local M = {}

function M.in_torch7(fn)
  torch.dialect('torch7')
  local ok, err = pcall(fn)
  torch.dialect('pytorch')
  if not ok then error(err, 0) end
end

return M
