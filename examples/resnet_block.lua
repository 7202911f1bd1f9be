-- examples/resnet_block.lua: a ResNet-style residual block -- conv, batch
-- norm, ReLU, conv, batch norm, plus the identity (or a 1x1 projection when
-- the shape changes), then ReLU -- as an nn.Module subclass, stacked into a
-- small network; one training step, its gradients checked numerically.
-- Run: th examples/resnet_block.lua
local nn = require 'nn'
torch.manual_seed(0)

-- nn.ResidualBlock(in_channels, out_channels, stride): y = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))
local Block = torch.class('nn.ResidualBlock', 'nn.Module')
function Block:__init(cin, cout, stride)
  nn.Module.__init(self)
  stride = stride or 1
  self.conv1 = nn.Conv2d(cin, cout, 3, {stride = stride, padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(cout)
  self.conv2 = nn.Conv2d(cout, cout, 3, {padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(cout)
  if stride ~= 1 or cin ~= cout then          -- the identity would not fit: project
    self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, {stride = stride, bias = false}), nn.BatchNorm2d(cout))
  else
    self.shortcut = nn.Identity()
  end
end
function Block:forward(x)
  local h = self.bn1(self.conv1(x)):relu()
  h = self.bn2(self.conv2(h))
  return (h + self.shortcut(x)):relu()
end

local model = nn.Sequential(
  nn.Conv2d(3, 16, 3, {padding = 1, bias = false}), nn.BatchNorm2d(16), nn.ReLU(),
  nn.ResidualBlock(16, 16), nn.ResidualBlock(16, 32, 2),
  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
print(model)
print(string.format('%d parameters', model:num_parameters()))

-- one step of training on random images
local x, y = torch.randn(8, 3, 32, 32), torch.randint(1, 11, {8})
local criterion, optim = nn.CrossEntropyLoss(), require('optim')
local opt = optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})
for step = 1, 3 do
  opt:zero_grad()
  local loss = criterion(model(x), y)
  loss:backward()
  opt:step()
  print(string.format('step %d: loss %.4f', step, loss:item()))
end

-- the block's gradients against finite differences, in float64 (eval mode: batch norm on
-- its running statistics, so the function is deterministic)
local block = nn.ResidualBlock(2, 3, 2):double()
block:eval()
local input = torch.randn(2, 2, 5, 5, {dtype = 'float64', requires_grad = true})
local ok = torch.autograd.gradcheck(function(t) return block(t) end, {input})
print('gradcheck of a ResidualBlock (input):', ok)
assert(ok, 'gradcheck failed')
-- and the parameters' gradients: autograd's against a central difference for one weight
local out = block(input):sum()
out:backward()
local w, eps = block.conv1.weight, 1e-6
local analytic = w.grad[1][1][2][2]
local function loss_at(v)
  torch.no_grad(function() w[1][1][2][2] = v end)
  return block(input):sum():item()
end
local w0 = w[1][1][2][2]
local numeric = (loss_at(w0 + eps) - loss_at(w0 - eps)) / (2 * eps)
loss_at(w0)
print(string.format('conv1 weight gradient: autograd %.8f, finite difference %.8f', analytic, numeric))
assert(math.abs(analytic - numeric) < 1e-6, 'gradient mismatch')
