-- nngraph.JustTable(): its input as a table: a table as it is, anything else
-- (a tensor) in a table of one; the gradient goes back the same way.
local torch = require 'torch'
local nn = require 'nn'
local nngraph = package.loaded.nngraph

local JustTable = torch.class('nngraph.JustTable', 'nn.Module', nngraph)

function JustTable:__init() nn.Module.__init(self) end

function JustTable:updateOutput(input)
  if type(input) ~= 'table' or torch.isTensor(input) then return {input} end
  return input
end

return JustTable
