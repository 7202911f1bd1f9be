local torch = require 'torch'
local helpers = require 'nn._helpers'

-- nn.Reshape(d1, d2, ..., [batchMode]): reshapes to the sizes, a batch dim kept in
-- front as Torch7's rule says: with batchMode nil, the input is one sample when it holds
-- exactly the sizes' elements and its first dim is not 1 (a 1 x n input is a batch of
-- one); batchMode true or false says which.
local Reshape, Module = torch.class('nn.Reshape', 'nn.Module')
function Reshape:__init(...)
  Module.__init(self)
  local args = table.pack(...)
  if type(args[args.n]) == 'boolean' then
    self.batchMode = args[args.n]
    args.n = args.n - 1
  end
  self.size = helpers.sizes_of(table.unpack(args, 1, args.n))
end
function Reshape:updateOutput(x)
  local n, unknown = 1, false
  for _, s in ipairs(self.size) do if s == -1 then unknown = true else n = n * s end end
  local mode = self.batchMode
  if unknown or (mode == nil and x:numel() ~= n) then return (x:reshape(helpers.batch_shape(x, self.size))) end
  if mode == false or (mode == nil and (x:dim() == 0 or x:size(1) ~= 1)) then return (x:reshape(self.size)) end
  return (x:reshape({x:size(1), table.unpack(self.size)}))     -- a batch (of one, when the first dim is 1)
end
function Reshape:extra_repr() return table.concat(self.size, 'x') end

return Reshape
