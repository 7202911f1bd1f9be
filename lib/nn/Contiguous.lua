local torch = require 'torch'

-- nn.Contiguous(): x in contiguous memory. As Torch7's, self.output is one tensor
-- kept across calls: a view of x when x is contiguous, else a contiguous copy of
-- it (so a tensor taken from an earlier output sees the later ones); gradInput
-- likewise from gradOutput.
local Contiguous, Module = torch.class('nn.Contiguous', 'nn.Module')

function Contiguous:__init() Module.__init(self) end

-- buf holding x's values: x's memory when x is contiguous, else a copy (buf
-- first detached from x's memory when it shares it)
local function contiguous_into(buf, x, what)
  if not torch.is_tensor(x) then
    error(string.format('nn.Contiguous: expected a tensor %s, got %s', what, torch.type(x)), 4)
  end
  if buf == nil or x.requires_grad then return x:contiguous() end     -- inside an autograd graph
  if buf.dtype ~= x.dtype or buf.device ~= x.device then buf = torch.empty(0, {dtype = x.dtype, device = x.device}) end
  if x:is_contiguous() then
    buf:set(x)
  else
    if buf:storage() == x:storage() then buf:set(torch.empty(0, {dtype = x.dtype, device = x.device})) end
    buf:resize_(x:size()):copy_(x)
  end
  return buf
end

function Contiguous:updateOutput(x)
  self.output = contiguous_into(self.output, x, 'input')
  return self.output
end

function Contiguous:updateGradInput(_, gradOutput)
  self.gradInput = contiguous_into(self.gradInput, gradOutput, 'gradOutput')
  return self.gradInput
end

return Contiguous
