-- nngraph.JustElement(): the only element of a one-element table (node:split(1)
-- makes one); the gradient is the table of that element's gradient.
local torch = require 'torch'
local nn = require 'nn'
local nngraph = package.loaded.nngraph

local JustElement = torch.class('nngraph.JustElement', 'nn.Module', nngraph)

function JustElement:__init() nn.Module.__init(self) end

function JustElement:updateOutput(input)
  if type(input) ~= 'table' or torch.isTensor(input) then
    error('nngraph.JustElement: expects a table of one element, got ' .. (torch.typename(input) or type(input)), 3)
  end
  local n = nngraph._max_n(input)
  if n ~= 1 then error(string.format('nngraph.JustElement: expects a table of one element, got %d elements', n), 3) end
  return input[1]
end

return JustElement
