local torch = require 'torch'

-- nn.Copy(intype, outtype, forceCopy, dontCast): x converted to outtype (a Torch7 type
-- name such as 'torch.FloatTensor'), gradients back to intype; x itself when the types
-- agree and forceCopy is not set.
local Copy, Module = torch.class('nn.Copy', 'nn.Module')
function Copy:__init(intype, outtype, force_copy, dont_cast)
  Module.__init(self)
  self.intype, self.outtype = intype, outtype
  self.forceCopy, self.dontCast = force_copy, dont_cast
end
function Copy:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Copy: expected a tensor input, got ' .. torch.type(x), 3) end
  local outtype = self.outtype or torch.getdefaulttensortype()
  if outtype == x:type() then return self.forceCopy and x:clone() or x end
  return x:type(outtype)
end
function Copy:extra_repr() return tostring(self.intype) .. ' -> ' .. tostring(self.outtype) end

return Copy
